"""Whole transformer blocks in the form ONNX Runtime's tools write them: a BERT-like encoder fused the way
ORT's transformer optimizer fuses one (EmbedLayerNormalization, Attention, SkipLayerNormalization, FastGelu),
and a small decoder as onnxruntime-genai exports one (4-bit MatMulNBits weights, RotaryEmbedding,
GroupQueryAttention with past key/values, SimplifiedLayerNormalization)."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from common import MS, model, out_dir, rng, save_case

vi = helper.make_tensor_value_info


def const(name, array):
    return numpy_helper.from_array(np.ascontiguousarray(array), name)


def encoder(layers=2, hidden=32, heads=4, vocab=50, max_pos=16, ffn=64):
    r = rng(11)
    w = lambda *shape: (r.randn(*shape) * (1.0 / np.sqrt(shape[0]))).astype('float32')
    b = lambda n: (r.randn(n) * 0.05).astype('float32')
    g = lambda n: (1 + r.randn(n) * 0.1).astype('float32')
    inits = [const('word_emb', w(vocab, hidden) * 4), const('pos_emb', w(max_pos, hidden) * 4),
             const('seg_emb', w(2, hidden) * 4), const('emb_gamma', g(hidden)), const('emb_beta', b(hidden))]
    nodes = [helper.make_node('EmbedLayerNormalization',
                              ['input_ids', 'segment_ids', 'word_emb', 'pos_emb', 'seg_emb', 'emb_gamma', 'emb_beta',
                               'mask'], ['emb', 'mask_index'], domain=MS, epsilon=1e-12, name='embed_ln')]
    x = 'emb'
    for i in range(layers):
        p = 'l%d_' % i
        inits += [const(p + 'qkv_w', w(hidden, 3 * hidden)), const(p + 'qkv_b', b(3 * hidden)),
                  const(p + 'o_w', w(hidden, hidden)), const(p + 'o_b', b(hidden)),
                  const(p + 'ln1_g', g(hidden)), const(p + 'ln1_b', b(hidden)),
                  const(p + 'ff1_w', w(hidden, ffn)), const(p + 'ff1_b', b(ffn)),
                  const(p + 'ff2_w', w(ffn, hidden)), const(p + 'ff2_b', b(hidden)),
                  const(p + 'ln2_g', g(hidden)), const(p + 'ln2_b', b(hidden))]
        nodes += [
            helper.make_node('Attention', [x, p + 'qkv_w', p + 'qkv_b', 'mask_index'], [p + 'attn'], domain=MS,
                             num_heads=heads, name=p + 'attention'),
            helper.make_node('MatMul', [p + 'attn', p + 'o_w'], [p + 'attn_o'], name=p + 'attn_out'),
            helper.make_node('SkipLayerNormalization', [p + 'attn_o', x, p + 'ln1_g', p + 'ln1_b', p + 'o_b'],
                             [p + 'ln1'], domain=MS, epsilon=1e-12, name=p + 'skip_ln1'),
            helper.make_node('MatMul', [p + 'ln1', p + 'ff1_w'], [p + 'ff1'], name=p + 'ffn_in'),
            helper.make_node('FastGelu', [p + 'ff1', p + 'ff1_b'], [p + 'act'], domain=MS, name=p + 'fast_gelu'),
            helper.make_node('MatMul', [p + 'act', p + 'ff2_w'], [p + 'ff2'], name=p + 'ffn_out'),
            helper.make_node('SkipLayerNormalization', [p + 'ff2', p + 'ln1', p + 'ln2_g', p + 'ln2_b', p + 'ff2_b'],
                             [p + 'out'], domain=MS, epsilon=1e-12, name=p + 'skip_ln2'),
        ]
        x = p + 'out'
    nodes.append(helper.make_node('Identity', [x], ['last_hidden_state'], name='output'))
    ids = lambda name: vi(name, TensorProto.INT32, ['batch', 'seq'])
    return model(nodes, [ids('input_ids'), ids('segment_ids'), ids('mask')],
                 [vi('last_hidden_state', TensorProto.FLOAT, ['batch', 'seq', hidden])], inits)


def quantize_4bit(weight, block):
    """W [K, N] → MatMulNBits' B [N, K/block, block/2] (two 4-bit values per byte, the lower index in the low
    nibble), scales [N * K/block], symmetric around the default zero point 8."""
    k, n = weight.shape
    blocks = weight.T.reshape(n, k // block, block)
    scales = np.abs(blocks).max(axis=2) / 7.0 + 1e-8
    q = np.clip(np.round(blocks / scales[:, :, None]) + 8, 0, 15).astype(np.uint8)
    packed = (q[:, :, 0::2] | (q[:, :, 1::2] << 4)).astype(np.uint8)
    return packed, scales.astype('float32').reshape(-1)


def decoder(hidden=64, heads=4, kv_heads=2, vocab=40, ffn=128, max_pos=32, block=32):
    head = hidden // heads
    r = rng(21)
    inits = [const('embed', (r.randn(vocab, hidden) * 0.5).astype('float32')),
             const('ln_in_g', (1 + r.randn(hidden) * 0.1).astype('float32')),
             const('ln_post_g', (1 + r.randn(hidden) * 0.1).astype('float32')),
             const('ln_out_g', (1 + r.randn(hidden) * 0.1).astype('float32'))]
    pos = np.arange(max_pos, dtype=np.float64)[:, None]
    inv = 1.0 / (10000 ** (np.arange(0, head, 2, dtype=np.float64) / head))
    inits += [const('cos_cache', np.cos(pos * inv).astype('float32')),
              const('sin_cache', np.sin(pos * inv).astype('float32'))]
    nodes = [helper.make_node('Gather', ['embed', 'input_ids'], ['x'], name='embed_tokens'),
             helper.make_node('SimplifiedLayerNormalization', ['x', 'ln_in_g'], ['h'], epsilon=1e-6, axis=-1,
                              name='input_layernorm')]

    def nbits(name, inp, k, n, out):
        weight = (r.randn(k, n) / np.sqrt(k)).astype('float32')
        packed, scales = quantize_4bit(weight, block)
        inits.extend([const(name + '_q', packed), const(name + '_scales', scales)])
        nodes.append(helper.make_node('MatMulNBits', [inp, name + '_q', name + '_scales'], [out], domain=MS, K=k,
                                      N=n, bits=4, block_size=block, accuracy_level=0, name=name))

    nbits('q_proj', 'h', hidden, hidden, 'q')
    nbits('k_proj', 'h', hidden, kv_heads * head, 'k')
    nbits('v_proj', 'h', hidden, kv_heads * head, 'v')
    nodes += [
        helper.make_node('RotaryEmbedding', ['q', 'position_ids', 'cos_cache', 'sin_cache'], ['q_rot'], domain=MS,
                         num_heads=heads, name='q_rotary'),
        helper.make_node('RotaryEmbedding', ['k', 'position_ids', 'cos_cache', 'sin_cache'], ['k_rot'], domain=MS,
                         num_heads=kv_heads, name='k_rotary'),
        helper.make_node('GroupQueryAttention', ['q_rot', 'k_rot', 'v', 'past_key', 'past_value', 'seqlens_k',
                                                 'total_sequence_length'],
                         ['attn', 'present_key', 'present_value'], domain=MS, num_heads=heads, kv_num_heads=kv_heads,
                         name='attention'),
    ]
    nbits('o_proj', 'attn', hidden, hidden, 'attn_o')
    nodes.append(helper.make_node('SkipSimplifiedLayerNormalization', ['attn_o', 'x', 'ln_post_g'],
                                  ['h2', '', '', 'residual'], domain=MS, epsilon=1e-6, name='post_attention_layernorm'))
    nbits('up_proj', 'h2', hidden, ffn, 'up')
    nodes.append(helper.make_node('FastGelu', ['up'], ['act'], domain=MS, name='mlp_act'))
    nbits('down_proj', 'act', ffn, hidden, 'down')
    nodes += [helper.make_node('Add', ['down', 'residual'], ['y'], name='residual_add'),
              helper.make_node('SimplifiedLayerNormalization', ['y', 'ln_out_g'], ['final'], epsilon=1e-6, axis=-1,
                               name='norm')]
    nbits('lm_head', 'final', hidden, vocab, 'logits')
    kv = lambda name: vi(name, TensorProto.FLOAT, ['batch', kv_heads, 'past', head])
    present = lambda name: vi(name, TensorProto.FLOAT, ['batch', kv_heads, 'total', head])
    return model(nodes,
                 [vi('input_ids', TensorProto.INT64, ['batch', 'seq']),
                  vi('position_ids', TensorProto.INT64, ['batch', 'seq']), kv('past_key'), kv('past_value'),
                  vi('seqlens_k', TensorProto.INT32, ['batch']), vi('total_sequence_length', TensorProto.INT32, [])],
                 [vi('logits', TensorProto.FLOAT, ['batch', 'seq', vocab]), present('present_key'),
                  present('present_value')], inits), kv_heads, head


def main():
    out = out_dir()
    m = encoder()
    batch, seq = 2, 7
    ids = rng(1).randint(0, 50, size=(batch, seq)).astype(np.int32)
    segments = np.zeros((batch, seq), dtype=np.int32)
    segments[:, 4:] = 1
    mask = np.ones((batch, seq), dtype=np.int32)
    mask[1, 5:] = 0  # the second sequence is padded: Attention reads its length from the mask index
    save_case(out, 'bert_encoder_fused', m, {'input_ids': ids, 'segment_ids': segments, 'mask': mask}, tolerance=2e-4,
              note='two encoder layers as ORT\'s transformer optimizer fuses them')

    m, kv_heads, head = decoder()
    # A first prompt with an empty cache (past 0) is what onnxruntime-genai runs first; chipfit's --shape refuses
    # empty inputs, so the prompt here follows one cached token.
    for name, past, seq in (('prompt', 1, 6), ('continue', 2, 3), ('decode', 6, 1)):
        r = rng(past * 10 + seq)
        total = past + seq
        feeds = {'input_ids': r.randint(0, 40, size=(1, seq)).astype(np.int64),
                 'position_ids': np.arange(past, total, dtype=np.int64)[None, :],
                 'past_key': (r.randn(1, kv_heads, past, head) * 0.5).astype('float32'),
                 'past_value': (r.randn(1, kv_heads, past, head) * 0.5).astype('float32'),
                 'seqlens_k': np.array([total - 1], dtype=np.int32),
                 'total_sequence_length': np.array(total, dtype=np.int32)}
        save_case(out, 'decoder_4bit_gqa_' + name, m, feeds, tolerance=2e-4,
                  note='a decoder block as onnxruntime-genai writes one, %d past and %d new tokens' % (past, seq))


if __name__ == '__main__':
    main()
