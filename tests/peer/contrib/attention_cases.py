"""Cases for contrib_attention.cpp: RotaryEmbedding, MultiHeadAttention, Attention, GroupQueryAttention."""
import numpy as np
from onnx import TensorProto, helper

from common import MS, model, out_dir, rng, save_case

F32, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64
_TYPES = {np.dtype('float32'): F32, np.dtype('int32'): I32, np.dtype('int64'): I64}


def vi(name, array):
    return helper.make_tensor_value_info(name, _TYPES[array.dtype], list(array.shape))


def single(out, name, op, feeds, inputs, outputs, seed_note='', **attrs):
    """One com.microsoft node; `inputs` lists input names in order ('' for an omitted one), all fed."""
    node = helper.make_node(op, inputs, outputs, domain=MS, name=op.lower(), **attrs)
    graph_inputs = [vi(n, feeds[n]) for n in inputs if n]
    graph_outputs = [helper.make_tensor_value_info(o, F32, None) for o in outputs if o]
    m = model([node], graph_inputs, graph_outputs)
    save_case(out, name, m, {n: feeds[n] for n in inputs if n}, note=seed_note)


def cos_sin(r, positions, half):
    """A real rotary cache: angles position · base^(-i/half)."""
    inv = 1.0 / (10000 ** (np.arange(half) / half))
    angles = np.arange(positions)[:, None] * inv[None, :] + r.rand(1, half) * 0.1
    return np.cos(angles).astype('float32'), np.sin(angles).astype('float32')


def rotary_cases(out):
    r = rng(10)
    cos, sin = cos_sin(r, 16, 4)
    x3 = r.randn(2, 3, 16).astype('float32')
    pos = np.array([[0, 1, 2], [5, 7, 9]], dtype='int64')
    for inter in (0, 1):
        single(out, 'rotary_3d_posids_inter%d' % inter, 'RotaryEmbedding',
               dict(x=x3, pos=pos, cos=cos, sin=sin), ['x', 'pos', 'cos', 'sin'], ['y'], interleaved=inter)
    single(out, 'rotary_3d_offset', 'RotaryEmbedding', dict(x=x3, pos=np.array([4], dtype='int64'), cos=cos, sin=sin),
           ['x', 'pos', 'cos', 'sin'], ['y'])
    single(out, 'rotary_3d_scalar_offset', 'RotaryEmbedding',
           dict(x=x3, pos=np.array(2, dtype='int64'), cos=cos, sin=sin), ['x', 'pos', 'cos', 'sin'], ['y'],
           interleaved=1)
    # rotary_embedding_dim below the head size: the rest of each head passes through.
    c2, s2 = cos_sin(r, 16, 2)
    x3b = r.randn(2, 3, 32).astype('float32')
    for inter in (0, 1):
        single(out, 'rotary_partial_dim_inter%d' % inter, 'RotaryEmbedding', dict(x=x3b, pos=pos, cos=c2, sin=s2),
               ['x', 'pos', 'cos', 'sin'], ['y'], interleaved=inter, rotary_embedding_dim=4, num_heads=4)
    x4 = r.randn(2, 2, 3, 8).astype('float32')
    single(out, 'rotary_4d_bnsh', 'RotaryEmbedding', dict(x=x4, pos=pos, cos=cos, sin=sin),
           ['x', 'pos', 'cos', 'sin'], ['y'])
    single(out, 'rotary_4d_bnsh_inter_scale', 'RotaryEmbedding',
           dict(x=x4, pos=np.array([3], dtype='int64'), cos=cos, sin=sin), ['x', 'pos', 'cos', 'sin'], ['y'],
           interleaved=1, scale=1.0)


def mha_cases(out):
    r = rng(20)
    B, S, L, N, H, P = 2, 4, 5, 2, 8, 3
    D = N * H
    q = r.randn(B, S, D).astype('float32')
    k = r.randn(B, L, D).astype('float32')
    v = r.randn(B, L, D).astype('float32')
    bias = (r.randn(3 * D) * 0.5).astype('float32')
    base = dict(q=q, k=k, v=v, bias=bias)
    single(out, 'mha_cross_bias', 'MultiHeadAttention', base, ['q', 'k', 'v', 'bias'], ['y'], num_heads=N)
    single(out, 'mha_cross_scale', 'MultiHeadAttention', base, ['q', 'k', 'v'], ['y'], num_heads=N, scale=0.2)
    ks = r.randn(B, S, D).astype('float32')
    vs = r.randn(B, S, D).astype('float32')
    self_feeds = dict(q=q, k=ks, v=vs, bias=bias)
    single(out, 'mha_self_causal', 'MultiHeadAttention', self_feeds, ['q', 'k', 'v', 'bias'], ['y'], num_heads=N,
           unidirectional=1)
    # Key-padding masks: lengths [B], raw [B, T], raw [B, S, T].
    lens = np.array([3, 5], dtype='int32')
    single(out, 'mha_mask_1d_lengths', 'MultiHeadAttention', dict(base, m=lens), ['q', 'k', 'v', 'bias', 'm'], ['y'],
           num_heads=N)
    raw = (r.rand(B, L) > 0.3).astype('int32')
    raw[:, 0] = 1
    single(out, 'mha_mask_2d', 'MultiHeadAttention', dict(base, m=raw), ['q', 'k', 'v', 'bias', 'm'], ['y'],
           num_heads=N, mask_filter_value=-5000.0)
    raw3 = (r.rand(B, S, L) > 0.4).astype('int32')
    raw3[:, :, 1] = 1
    single(out, 'mha_mask_3d', 'MultiHeadAttention', dict(base, m=raw3), ['q', 'k', 'v', 'bias', 'm'], ['y'],
           num_heads=N)
    ab = (r.randn(1, N, S, L) * 0.5).astype('float32')
    single(out, 'mha_attention_bias', 'MultiHeadAttention', dict(base, ab=ab), ['q', 'k', 'v', 'bias', '', 'ab'],
           ['y'], num_heads=N)
    ab2 = (r.randn(B, 1, S, L) * 0.5).astype('float32')
    single(out, 'mha_attention_bias_batch_mask', 'MultiHeadAttention', dict(base, ab=ab2, m=raw),
           ['q', 'k', 'v', '', 'm', 'ab'], ['y'], num_heads=N)
    # With past: self attention continuing a cache; present outputs compared too.
    pk = r.randn(B, N, P, H).astype('float32')
    pv = r.randn(B, N, P, H).astype('float32')
    feeds = dict(self_feeds, pk=pk, pv=pv)
    single(out, 'mha_past_causal', 'MultiHeadAttention', feeds, ['q', 'k', 'v', 'bias', '', '', 'pk', 'pv'],
           ['y', 'present_k', 'present_v'], num_heads=N, unidirectional=1)
    mask_t = np.ones((B, P + S), dtype='int32')
    mask_t[0, :2] = 0
    single(out, 'mha_past_mask_2d', 'MultiHeadAttention', dict(feeds, m=mask_t),
           ['q', 'k', 'v', 'bias', 'm', '', 'pk', 'pv'], ['y', 'present_k', 'present_v'], num_heads=N, scale=0.3)
    q1 = r.randn(B, 1, D).astype('float32')
    k1 = r.randn(B, 1, D).astype('float32')
    v1 = r.randn(B, 1, D).astype('float32')
    single(out, 'mha_decode_one_token', 'MultiHeadAttention', dict(q=q1, k=k1, v=v1, pk=pk, pv=pv),
           ['q', 'k', 'v', '', '', '', 'pk', 'pv'], ['y', 'present_k', 'present_v'], num_heads=N, unidirectional=1)
    # Keys and values already per head (cross attention with a computed cache).
    k4 = r.randn(B, N, L, H).astype('float32')
    v4 = r.randn(B, N, L, H).astype('float32')
    single(out, 'mha_kv_bnsh', 'MultiHeadAttention', dict(q=q, k=k4, v=v4), ['q', 'k', 'v'], ['y', 'pk_out', 'pv_out'],
           num_heads=N)
    # Value hidden size differs from Q/K.
    v12 = r.randn(B, L, N * 6).astype('float32')
    bias12 = (r.randn(2 * D + N * 6) * 0.5).astype('float32')
    single(out, 'mha_v_head_size', 'MultiHeadAttention', dict(q=q, k=k, v=v12, bias=bias12), ['q', 'k', 'v', 'bias'],
           ['y'], num_heads=N)


def attention_cases(out):
    r = rng(30)
    B, S, Din, N, H, P = 2, 4, 12, 2, 8, 3
    D = N * H
    x = r.randn(B, S, Din).astype('float32')
    w = (r.randn(Din, 3 * D) * 0.3).astype('float32')
    bias = (r.randn(3 * D) * 0.3).astype('float32')
    base = dict(x=x, w=w, b=bias)
    single(out, 'attn_plain', 'Attention', base, ['x', 'w', 'b'], ['y'], num_heads=N)
    single(out, 'attn_scale', 'Attention', base, ['x', 'w', 'b'], ['y'], num_heads=N, scale=0.25)
    single(out, 'attn_causal', 'Attention', base, ['x', 'w', 'b'], ['y'], num_heads=N, unidirectional=1)
    single(out, 'attn_mask_1d_end', 'Attention', dict(base, m=np.array([2, 4], dtype='int32')), ['x', 'w', 'b', 'm'],
           ['y'], num_heads=N)
    single(out, 'attn_mask_1d_end_start', 'Attention', dict(base, m=np.array([3, 4, 1, 0], dtype='int32')),
           ['x', 'w', 'b', 'm'], ['y'], num_heads=N)
    raw = np.array([[1, 1, 0, 1], [1, 0, 1, 1]], dtype='int32')
    single(out, 'attn_mask_2d_causal', 'Attention', dict(base, m=raw), ['x', 'w', 'b', 'm'], ['y'], num_heads=N,
           unidirectional=1, mask_filter_value=-1000.0)
    raw3 = (r.rand(B, S, S) > 0.4).astype('int32')
    raw3[:, :, 0] = 1
    single(out, 'attn_mask_3d', 'Attention', dict(base, m=raw3), ['x', 'w', 'b', 'm'], ['y'], num_heads=N)
    ab = (r.randn(B, N, S, S) * 0.5).astype('float32')
    single(out, 'attn_attention_bias', 'Attention', dict(base, ab=ab), ['x', 'w', 'b', '', '', 'ab'], ['y'],
           num_heads=N)
    past = r.randn(2, B, N, P, H).astype('float32')
    single(out, 'attn_past_causal', 'Attention', dict(base, past=past), ['x', 'w', 'b', '', 'past'],
           ['y', 'present'], num_heads=N, unidirectional=1)
    mask_t = np.ones((B, P + S), dtype='int32')
    mask_t[1, :2] = 0
    single(out, 'attn_past_mask_2d', 'Attention', dict(base, past=past, m=mask_t), ['x', 'w', 'b', 'm', 'past'],
           ['y', 'present'], num_heads=N, unidirectional=1)
    x1 = r.randn(B, 1, Din).astype('float32')
    single(out, 'attn_decode_one_token', 'Attention', dict(x=x1, w=w, b=bias, past=past), ['x', 'w', 'b', '', 'past'],
           ['y', 'present'], num_heads=N, unidirectional=1)
    # Q/K hidden 16, V hidden 8 (qkv_hidden_sizes).
    w2 = (r.randn(Din, 16 + 16 + 8) * 0.3).astype('float32')
    b2 = (r.randn(40) * 0.3).astype('float32')
    single(out, 'attn_qkv_hidden_sizes', 'Attention', dict(x=x, w=w2, b=b2), ['x', 'w', 'b'], ['y'], num_heads=N,
           qkv_hidden_sizes=[16, 16, 8])


def gqa(out, name, feeds, names, outputs=('y', 'present_k', 'present_v'), **attrs):
    single(out, name, 'GroupQueryAttention', feeds, names, list(outputs), **attrs)


def gqa_cases(out):
    r = rng(40)
    B, S, N, kvN, H = 2, 5, 4, 2, 16
    q = r.randn(B, S, N * H).astype('float32')
    k = r.randn(B, S, kvN * H).astype('float32')
    v = r.randn(B, S, kvN * H).astype('float32')
    prompt = dict(q=q, k=k, v=v, sk=np.full(B, S - 1, dtype='int32'), tot=np.array(S, dtype='int32'))
    names = ['q', 'k', 'v', '', '', 'sk', 'tot']
    gqa(out, 'gqa_prompt', prompt, names, num_heads=N, kv_num_heads=kvN)
    gqa(out, 'gqa_prompt_scale_window', prompt, names, num_heads=N, kv_num_heads=kvN, scale=0.1, local_window_size=2)
    gqa(out, 'gqa_prompt_softcap_smooth', prompt, names, num_heads=N, kv_num_heads=kvN, softcap=2.0,
        smooth_softmax=1)
    # A right-padded prompt: batch 1 holds 3 tokens of 5.
    padded = dict(prompt, sk=np.array([4, 2], dtype='int32'))
    gqa(out, 'gqa_prompt_padded', padded, names, num_heads=N, kv_num_heads=kvN)
    gqa(out, 'gqa_prompt_padded_window', padded, names, num_heads=N, kv_num_heads=kvN, local_window_size=2)
    # The prompt written into an empty cache of 8 positions: present keeps the buffer's length.
    P = 8
    empty = np.zeros((B, kvN, P, H), dtype='float32')
    gqa(out, 'gqa_prompt_into_buffer', dict(prompt, pk=empty, pv=empty), ['q', 'k', 'v', 'pk', 'pv', 'sk', 'tot'],
        num_heads=N, kv_num_heads=kvN)
    # Token by token: one new token per batch after different past lengths (right-padded cache).
    q1 = r.randn(B, 1, N * H).astype('float32')
    k1 = r.randn(B, 1, kvN * H).astype('float32')
    v1 = r.randn(B, 1, kvN * H).astype('float32')
    pk = r.randn(B, kvN, 6, H).astype('float32')
    pv = r.randn(B, kvN, 6, H).astype('float32')
    dec = dict(q=q1, k=k1, v=v1, pk=pk, pv=pv, sk=np.array([6, 4], dtype='int32'), tot=np.array(7, dtype='int32'))
    dnames = ['q', 'k', 'v', 'pk', 'pv', 'sk', 'tot']
    gqa(out, 'gqa_decode', dec, dnames, num_heads=N, kv_num_heads=kvN)
    gqa(out, 'gqa_decode_window_scale', dec, dnames, num_heads=N, kv_num_heads=kvN, local_window_size=3, scale=0.2)
    # Growing buffer: past of 6, total 7 → present of 7.
    dec_grow = dict(dec, sk=np.array([6, 6], dtype='int32'))
    gqa(out, 'gqa_decode_grow', dec_grow, dnames, num_heads=N, kv_num_heads=kvN)
    # Rotary inside the op: prompt and decode.
    cos, sin = cos_sin(r, 16, H // 2)
    rp = dict(prompt, cos=cos, sin=sin)
    rnames = ['q', 'k', 'v', '', '', 'sk', 'tot', 'cos', 'sin']
    for inter in (0, 1):
        gqa(out, 'gqa_prompt_rotary_inter%d' % inter, rp, rnames, num_heads=N, kv_num_heads=kvN, do_rotary=1,
            rotary_interleaved=inter)
    gqa(out, 'gqa_decode_rotary', dict(dec, cos=cos, sin=sin), dnames + ['cos', 'sin'], num_heads=N,
        kv_num_heads=kvN, do_rotary=1)
    # Rotary over the first 16 of 32 values per head; the rest pass through.
    H2 = 32
    c16, s16 = cos_sin(r, 16, 8)
    rp2 = dict(q=r.randn(B, S, N * H2).astype('float32'), k=r.randn(B, S, kvN * H2).astype('float32'),
               v=r.randn(B, S, kvN * H2).astype('float32'), sk=prompt['sk'], tot=prompt['tot'], cos=c16, sin=s16)
    gqa(out, 'gqa_prompt_rotary_partial', rp2, rnames, num_heads=N, kv_num_heads=kvN, do_rotary=1)
    # Packed QKV: query holds Q, K and V of each token.
    packed = np.concatenate([q, k, v], axis=2)
    gqa(out, 'gqa_packed_prompt', dict(prompt, qkv=packed), ['qkv', '', '', '', '', 'sk', 'tot'], num_heads=N,
        kv_num_heads=kvN)
    # ORT 1.30's newer inputs: position_ids (rotary; ignored on a first prompt), attention_bias, head_sink.
    nine = ['q', 'k', 'v', '', '', 'sk', 'tot', 'cos', 'sin']
    pos = np.array([[0, 1, 2, 3, 4], [3, 4, 5, 6, 7]], dtype='int64')
    gqa(out, 'gqa_prompt_rotary_position_ids', dict(rp, pos=pos), nine + ['pos'], num_heads=N, kv_num_heads=kvN,
        do_rotary=1)
    ab = (r.randn(B, N, S, S) * 2).astype('float32')
    gqa(out, 'gqa_prompt_attention_bias_softcap', dict(prompt, ab=ab), nine[:7] + ['', '', '', 'ab'], num_heads=N,
        kv_num_heads=kvN, softcap=1.5)
    ab1 = (r.randn(1, 1, S, S) * 2).astype('float32')
    gqa(out, 'gqa_prompt_attention_bias_broadcast', dict(prompt, ab=ab1), nine[:7] + ['', '', '', 'ab'],
        num_heads=N, kv_num_heads=kvN, local_window_size=3)
    sink = r.randn(N).astype('float32')
    gqa(out, 'gqa_prompt_head_sink', dict(prompt, hs=sink), nine[:7] + ['', '', '', '', 'hs'], num_heads=N,
        kv_num_heads=kvN)
    dec8 = dict(dec, pk=np.concatenate([pk, np.zeros((B, kvN, 2, H), 'float32')], 2),
                pv=np.concatenate([pv, np.zeros((B, kvN, 2, H), 'float32')], 2))
    abd = (r.randn(B, N, 1, 7) * 2).astype('float32')
    gqa(out, 'gqa_decode_bias_sink_buffer8', dict(dec8, ab=abd, hs=sink), dnames + ['', '', '', 'ab', 'hs'],
        num_heads=N, kv_num_heads=kvN)
    dpos = np.array([[9], [2]], dtype='int64')
    gqa(out, 'gqa_decode_rotary_position_ids', dict(dec, cos=cos, sin=sin, pos=dpos), dnames + ['cos', 'sin', 'pos'],
        num_heads=N, kv_num_heads=kvN, do_rotary=1, rotary_interleaved=1)
    # Continued prompt (batch 1): 3 new tokens after a past of 4.
    q3 = r.randn(1, 3, N * H).astype('float32')
    k3 = r.randn(1, 3, kvN * H).astype('float32')
    v3 = r.randn(1, 3, kvN * H).astype('float32')
    pk1 = r.randn(1, kvN, 4, H).astype('float32')
    pv1 = r.randn(1, kvN, 4, H).astype('float32')
    gqa(out, 'gqa_continued_prompt', dict(q=q3, k=k3, v=v3, pk=pk1, pv=pv1, sk=np.array([6], dtype='int32'),
                                          tot=np.array(7, dtype='int32'), cos=cos, sin=sin),
        dnames + ['cos', 'sin'], num_heads=N, kv_num_heads=kvN, do_rotary=1)


def decoder_block(out, name, r, B, S, past_len, total, seqlens):
    """Gather → SimplifiedLayerNormalization → q/k/v MatMuls → GroupQueryAttention (do_rotary) → MatMul → Add."""
    V, N, kvN, H = 11, 4, 2, 16
    D = N * H
    init = helper.make_tensor
    weights = {'embed': r.randn(V, D) * 0.5, 'gamma': 1 + 0.1 * r.randn(D), 'wq': r.randn(D, D) * 0.15,
               'wk': r.randn(D, kvN * H) * 0.15, 'wv': r.randn(D, kvN * H) * 0.15, 'wo': r.randn(D, D) * 0.15}
    cos, sin = cos_sin(r, 16, H // 2)
    weights.update(cos=cos, sin=sin)
    inits = [init(k, F32, list(v.shape), v.astype('float32').ravel()) for k, v in weights.items()]
    nodes = [
        helper.make_node('Gather', ['embed', 'ids'], ['h'], name='embed'),
        helper.make_node('SimplifiedLayerNormalization', ['h', 'gamma'], ['hn'], name='rms', axis=-1, epsilon=1e-5),
        helper.make_node('MatMul', ['hn', 'wq'], ['q'], name='q_proj'),
        helper.make_node('MatMul', ['hn', 'wk'], ['k'], name='k_proj'),
        helper.make_node('MatMul', ['hn', 'wv'], ['v'], name='v_proj'),
        helper.make_node('GroupQueryAttention', ['q', 'k', 'v', 'pk' if past_len else '', 'pv' if past_len else '',
                                                 'sk', 'tot', 'cos', 'sin'],
                         ['a', 'present_k', 'present_v'], domain=MS, name='gqa', num_heads=N, kv_num_heads=kvN,
                         do_rotary=1),
        helper.make_node('MatMul', ['a', 'wo'], ['o'], name='o_proj'),
        helper.make_node('Add', ['o', 'h'], ['y'], name='residual'),
    ]
    feeds = {'ids': r.randint(0, V, size=(B, S)).astype('int64'), 'sk': np.array(seqlens, dtype='int32'),
             'tot': np.array(total, dtype='int32')}
    if past_len:
        feeds['pk'] = r.randn(B, kvN, past_len, H).astype('float32')
        feeds['pv'] = r.randn(B, kvN, past_len, H).astype('float32')
    m = model(nodes, [vi(k, v) for k, v in feeds.items()],
              [helper.make_tensor_value_info(o, F32, None) for o in ('y', 'present_k', 'present_v')], inits)
    save_case(out, name, m, feeds)


def main():
    out = out_dir()
    rotary_cases(out)
    mha_cases(out)
    attention_cases(out)
    gqa_cases(out)
    r = rng(50)
    decoder_block(out, 'decoder_block_prompt', r, 2, 5, 0, 5, [4, 4])
    decoder_block(out, 'decoder_block_decode', r, 2, 1, 6, 7, [6, 5])


if __name__ == '__main__':
    main()
