"""Cases for contrib_nn.cpp: the Gelu family, BiasAdd, FusedMatMul, FusedConv and the layer norms."""
from onnx import TensorProto, helper

from common import MS, model, out_dir, rng, save_case

F = TensorProto.FLOAT
I32 = TensorProto.INT32


def vi(name, elem=F, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def single(out, name, op, feeds, outputs=('y',), domain=MS, output_types=None, opset=17, **attrs):
    """One node `op` reading `feeds` (a dict in input order; a None value leaves that input out)."""
    inputs = [k if v is not None else '' for k, v in feeds.items()]
    while inputs and inputs[-1] == '':
        inputs.pop()
    outs = list(outputs)
    node = helper.make_node(op, inputs, outs, domain=domain, name=name, **attrs)
    types = output_types or {}
    graph_in = [vi(k, I32 if v.dtype.name == 'int32' else F, list(v.shape)) for k, v in feeds.items() if v is not None]
    graph_out = [vi(o, types.get(o, F)) for o in outs if o]
    m = model([node], graph_in, graph_out, opset=opset)
    save_case(out, name, m, {k: v for k, v in feeds.items() if v is not None})


def f32(a):
    return a.astype('float32')


def gelu_cases(out):
    r = rng(1)
    x = f32(r.randn(2, 5, 16) * 2)
    single(out, 'gelu', 'Gelu', {'x': x})
    single(out, 'gelu_4d', 'Gelu', {'x': f32(r.randn(2, 3, 4, 5) * 3)})
    b = f32(r.randn(16))
    single(out, 'fastgelu_nobias', 'FastGelu', {'x': x})
    single(out, 'fastgelu_bias', 'FastGelu', {'x': x, 'b': b})
    single(out, 'fastgelu_bias_2d', 'FastGelu', {'x': f32(r.randn(7, 16) * 3), 'b': b})
    single(out, 'biasgelu', 'BiasGelu', {'x': x, 'b': b})
    single(out, 'biasgelu_1d', 'BiasGelu', {'x': f32(r.randn(16) * 3), 'b': b})
    single(out, 'quickgelu_default', 'QuickGelu', {'x': x})
    single(out, 'quickgelu_alpha', 'QuickGelu', {'x': x}, alpha=1.1)
    # Large enough for the CPU kernels' oneDNN path (from 4096 values), with the bias added first.
    big = f32(r.randn(1, 64, 384) * 3)
    big_b = f32(r.randn(384))
    single(out, 'gelu_large', 'Gelu', {'x': big})
    single(out, 'fastgelu_large_bias', 'FastGelu', {'x': big, 'b': big_b})
    single(out, 'biasgelu_large', 'BiasGelu', {'x': big, 'b': big_b})
    single(out, 'quickgelu_large_alpha', 'QuickGelu', {'x': big}, alpha=1.3)


def layer_norm_cases(out):
    r = rng(2)
    b_, s_, h = 2, 4, 16
    x = f32(r.randn(b_, s_, h) + 0.5)
    skip = f32(r.randn(b_, s_, h))
    gamma, beta, bias = f32(r.randn(h)), f32(r.randn(h)), f32(r.randn(h) * 0.5)
    stats = ('y', 'mean', 'inv_std_var', 'sum')
    single(out, 'skiplayernorm_full', 'SkipLayerNormalization',
           {'x': x, 'skip': skip, 'gamma': gamma, 'beta': beta, 'bias': bias}, outputs=stats, epsilon=1e-5)
    single(out, 'skiplayernorm_min', 'SkipLayerNormalization', {'x': x, 'skip': skip, 'gamma': gamma})
    # A variance near 1e-7 makes the default epsilon (1e-12) visible against 1e-5.
    tiny = f32(r.randn(b_, s_, h) * 3e-4)
    single(out, 'skiplayernorm_default_eps', 'SkipLayerNormalization',
           {'x': tiny, 'skip': f32(r.randn(b_, s_, h) * 3e-4), 'gamma': gamma, 'beta': beta})
    single(out, 'skiplayernorm_bias_only', 'SkipLayerNormalization',
           {'x': x, 'skip': skip, 'gamma': gamma, 'beta': None, 'bias': bias}, outputs=('y', '', '', 'sum'))
    single(out, 'skiplayernorm_skip_2d', 'SkipLayerNormalization',
           {'x': x, 'skip': f32(r.randn(s_, h)), 'gamma': gamma, 'beta': beta}, outputs=('y', 'mean'), epsilon=1e-6)
    single(out, 'skiplayernorm_skip_batch1', 'SkipLayerNormalization',
           {'x': x, 'skip': f32(r.randn(1, s_, h)), 'gamma': gamma, 'beta': beta, 'bias': bias},
           outputs=('y', '', 'inv_std_var'))
    single(out, 'skiplayernorm_large', 'SkipLayerNormalization',
           {'x': f32(r.randn(4, 32, 96)), 'skip': f32(r.randn(32, 96)), 'gamma': f32(r.randn(96)),
            'beta': f32(r.randn(96)), 'bias': f32(r.randn(96))}, outputs=('y', 'mean', 'inv_std_var', 'sum'),
           epsilon=1e-5)
    single(out, 'skiplayernorm_input_2d', 'SkipLayerNormalization',
           {'x': f32(r.randn(6, h)), 'skip': f32(r.randn(6, h)), 'gamma': gamma, 'beta': beta}, epsilon=1e-5)
    single(out, 'skipsimplified_full', 'SkipSimplifiedLayerNormalization',
           {'x': x, 'skip': skip, 'gamma': gamma, 'bias': bias}, outputs=stats, epsilon=1e-5)
    single(out, 'skipsimplified_min', 'SkipSimplifiedLayerNormalization', {'x': x, 'skip': skip, 'gamma': gamma})
    single(out, 'skipsimplified_default_eps', 'SkipSimplifiedLayerNormalization',
           {'x': tiny, 'skip': f32(r.randn(b_, s_, h) * 3e-4), 'gamma': gamma})
    single(out, 'skipsimplified_skip_2d', 'SkipSimplifiedLayerNormalization',
           {'x': x, 'skip': f32(r.randn(s_, h)), 'gamma': gamma, 'bias': bias}, outputs=('y', '', '', 'sum'))
    single(out, 'simplifiedlayernorm', 'SimplifiedLayerNormalization', {'x': x, 'scale': gamma}, domain='')
    single(out, 'simplifiedlayernorm_axis1_stats', 'SimplifiedLayerNormalization',
           {'x': x, 'scale': f32(r.randn(s_, h))}, outputs=('y', 'inv_std_var'), domain='', axis=1, epsilon=1e-3)
    single(out, 'simplifiedlayernorm_default_eps', 'SimplifiedLayerNormalization',
           {'x': f32(r.randn(3, 8) * 1e-3), 'scale': f32(r.randn(8))}, domain='')
    single(out, 'simplifiedlayernorm_opset13', 'SimplifiedLayerNormalization', {'x': x, 'scale': gamma},
           outputs=('y', 'inv_std_var'), domain='', opset=13, axis=-1)


def fused_matmul_cases(out):
    r = rng(3)
    def mm(name, a_shape, b_shape, **attrs):
        single(out, name, 'FusedMatMul', {'a': f32(r.randn(*a_shape)), 'b': f32(r.randn(*b_shape))}, **attrs)
    mm('fusedmatmul_default', [3, 5, 6], [3, 6, 4])
    mm('fusedmatmul_alpha_transb', [2, 5, 6], [4, 6], alpha=0.25, transB=1)
    mm('fusedmatmul_transa_broadcast', [2, 1, 6, 5], [3, 6, 4], transA=1, alpha=-1.5)
    mm('fusedmatmul_transa_transb', [6, 5], [2, 4, 6], transA=1, transB=1)
    mm('fusedmatmul_1d', [6], [2, 6, 4], transA=1)
    mm('fusedmatmul_b_1d', [2, 5, 6], [6], transB=1, alpha=3.0)
    mm('fusedmatmul_large', [4, 64, 48], [48, 80], transBatchA=0, alpha=0.125)
    mm('fusedmatmul_transbatch_a', [5, 3, 4, 6], [3, 4, 6, 7], transBatchA=1, alpha=0.5)
    mm('fusedmatmul_transbatch_b', [3, 1, 5, 6], [6, 1, 4, 7], transBatchB=1)
    mm('fusedmatmul_transbatch_all', [6, 3, 4, 5], [7, 3, 4, 6], transA=1, transB=1, transBatchA=1,
       transBatchB=1, alpha=2.0)


def fused_conv_cases(out):
    r = rng(4)
    x = f32(r.randn(2, 4, 7, 6))
    w = f32(r.randn(6, 2, 3, 3) * 0.3)
    b = f32(r.randn(6))
    z = f32(r.randn(2, 6, 7, 6))
    conv = dict(group=2, pads=[1, 1, 1, 1])
    single(out, 'fusedconv_relu', 'FusedConv', {'x': x, 'w': w, 'b': b}, activation='Relu', **conv)
    single(out, 'fusedconv_noact', 'FusedConv', {'x': x, 'w': w}, strides=[2, 1], **conv)
    single(out, 'fusedconv_leakyrelu_z', 'FusedConv', {'x': x, 'w': w, 'b': b, 'z': z}, activation='LeakyRelu',
           activation_params=[0.2], **conv)
    single(out, 'fusedconv_clip_z_nobias', 'FusedConv', {'x': x, 'w': w, 'b': None, 'z': z}, activation='Clip',
           activation_params=[-0.5, 0.7], **conv)
    single(out, 'fusedconv_hardsigmoid', 'FusedConv', {'x': x, 'w': w, 'b': b}, activation='HardSigmoid',
           activation_params=[0.3, 0.4], **conv)
    single(out, 'fusedconv_sigmoid_dilated', 'FusedConv', {'x': x, 'w': f32(r.randn(3, 4, 2, 2))},
           activation='Sigmoid', dilations=[2, 2], pads=[1, 0, 0, 1])
    # ORT refuses dilations with SAME_* auto_pad, so SAME_LOWER goes without.
    single(out, 'fusedconv_relu_same_lower', 'FusedConv', {'x': x, 'w': f32(r.randn(3, 4, 2, 3))},
           activation='Relu', auto_pad='SAME_LOWER', strides=[2, 2])
    single(out, 'fusedconv_tanh_1d', 'FusedConv', {'x': f32(r.randn(1, 3, 9)), 'w': f32(r.randn(4, 3, 3)),
                                                   'b': f32(r.randn(4))}, activation='Tanh', strides=[2])
    single(out, 'fusedconv_hardswish', 'FusedConv', {'x': x, 'w': w, 'b': b}, activation='HardSwish', **conv)


def embed_layer_norm_cases(out):
    r = rng(5)
    b_, s_, h, vocab = 2, 5, 16, 11
    ids = r.randint(0, vocab, (b_, s_)).astype('int32')
    seg = r.randint(0, 2, (b_, s_)).astype('int32')
    word, pos, segment = f32(r.randn(vocab, h)), f32(r.randn(7, h)), f32(r.randn(2, h))
    gamma, beta = f32(r.randn(h)), f32(r.randn(h))
    mask = (r.rand(b_, s_) > 0.3).astype('int32')
    mask[0, 1] = 2  # only 1s count
    mi = {'mask_index': I32}
    full = {'ids': ids, 'seg': seg, 'word': word, 'pos': pos, 'segment': segment, 'gamma': gamma, 'beta': beta}
    single(out, 'embedlayernorm_basic', 'EmbedLayerNormalization', full, outputs=('y', 'mask_index'),
           output_types=mi)
    single(out, 'embedlayernorm_mask_sum', 'EmbedLayerNormalization', dict(full, mask=mask),
           outputs=('y', 'mask_index', 'embedding_sum'), output_types=mi, epsilon=1e-5)
    position_ids = r.randint(0, 7, (1, s_)).astype('int32')
    single(out, 'embedlayernorm_noseg_posids', 'EmbedLayerNormalization',
           {'ids': ids, 'seg': None, 'word': word, 'pos': pos, 'segment': None, 'gamma': gamma, 'beta': beta,
            'mask': None, 'position_ids': position_ids}, outputs=('y', 'mask_index', 'embedding_sum'),
           output_types=mi, epsilon=1e-5)
    single(out, 'embedlayernorm_batch_posids', 'EmbedLayerNormalization',
           dict(full, mask=mask, position_ids=r.randint(0, 7, (b_, s_)).astype('int32')),
           outputs=('y', 'mask_index'), output_types=mi, mask_index_type=0)
    # Tiny embeddings show the default epsilon (1e-12).
    single(out, 'embedlayernorm_default_eps', 'EmbedLayerNormalization',
           {'ids': ids, 'seg': None, 'word': f32(word * 1e-3), 'pos': f32(pos * 1e-3), 'segment': None,
            'gamma': gamma, 'beta': beta}, outputs=('y', 'mask_index'), output_types=mi)


def main():
    out = out_dir()
    gelu_cases(out)
    layer_norm_cases(out)
    fused_matmul_cases(out)
    fused_conv_cases(out)
    embed_layer_norm_cases(out)


if __name__ == '__main__':
    main()
