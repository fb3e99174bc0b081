"""Cases for contrib_quant.cpp: MatMulNBits, MatMulIntegerToFloat, DynamicQuantizeMatMul, QGemm, the QLinear*
operators, com.microsoft QuantizeLinear/DequantizeLinear.

Quantized outputs are compared with max|err| / max|ORT|; where chipfit computes ORT's float arithmetic in ORT's
order the tolerance stays tight (exact for integers), and a case that allows one quantization step says why."""
import numpy as np
from onnx import helper, mapping, numpy_helper

from common import MS, model, out_dir, rng, save_case


def elem(a):
    return mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(a.dtype)]


def single(out, name, op, inputs, out_type, attrs=None, tolerance=1e-4, note='', opset=17, domain=MS):
    """One node `op`; inputs: list of (name, array, constant) in input order, None for an omitted input.
    Constants become initializers, the rest graph inputs fed from .npy files."""
    names, graph_in, inits, feeds = [], [], [], {}
    for item in inputs:
        if item is None:
            names.append('')
            continue
        key, value, const = item
        names.append(key)
        if const:
            inits.append(numpy_helper.from_array(value, key))
        else:
            graph_in.append(helper.make_tensor_value_info(key, elem(value), list(value.shape)))
            feeds[key] = value
    while names and names[-1] == '':
        names.pop()
    node = helper.make_node(op, names, ['y'], domain=domain, name=name, **(attrs or {}))
    m = model([node], graph_in, [helper.make_tensor_value_info('y', out_type, None)], inits, opset=opset)
    save_case(out, name, m, feeds, tolerance=tolerance, note=note)


def f32(a):
    return np.asarray(a, dtype=np.float32)


F, U8, I8, I32 = (mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(t)] for t in ('float32', 'uint8', 'int8', 'int32'))


# ---------------------------------------------------------------------------------------------------------------
# MatMulNBits (accuracy_level 0: ORT's float path; level 4 would quantize A to int8 blockwise on CPUs with an
# int8 kernel, which is a speed hint whose rounding chipfit does not model).

def quantize_nbits(w, bits, block, zp_kind):
    """w [N, K] → packed B [N, k_blocks, blob], scales [N*k_blocks], zero points (packed uint8 / float / None)."""
    n, k = w.shape
    k_blocks = -(-k // block)
    padded = np.zeros((n, k_blocks * block), np.float32)
    padded[:, :k] = w
    blocks = padded.reshape(n, k_blocks, block)
    qmax = (1 << bits) - 1
    lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
    if zp_kind is None:  # symmetric around the default zero point 2^(bits-1)
        scale = np.maximum(np.abs(lo), np.abs(hi)) / (1 << (bits - 1))
        zp = np.full(scale.shape, 1 << (bits - 1))
    else:
        scale = (hi - lo) / qmax
        zp = np.clip(np.round(-lo / scale), 0, qmax)
    scale = f32(scale)
    q = np.clip(np.round(blocks / scale[..., None]) + zp[..., None], 0, qmax).astype(np.uint8)
    if bits == 4:
        packed = (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)
    else:
        packed = q
    zps = None
    if zp_kind == 'uint8' and bits == 4:
        zq = zp.astype(np.uint8)
        if k_blocks % 2:
            zq = np.concatenate([zq, np.zeros((n, 1), np.uint8)], axis=1)
        zps = (zq[:, 0::2] | (zq[:, 1::2] << 4)).astype(np.uint8).reshape(-1)
    elif zp_kind == 'uint8':
        zps = zp.astype(np.uint8).reshape(-1)
    elif zp_kind == 'float':
        zps = f32(zp + 0.25).reshape(-1)  # unquantized zero points need not be integers
    return packed, scale.reshape(-1), zps


def nbits_case(out, name, r, a_shape, n, bits, block, zp_kind, bias=False, g_idx=False):
    k = a_shape[-1]
    w = f32(r.randn(n, k))
    b, scales, zps = quantize_nbits(w, bits, block, zp_kind)
    inputs = [('a', f32(r.randn(*a_shape)), False), ('b', b, True), ('scales', scales, True),
              ('zp', zps, True) if zps is not None else None,
              ('g_idx', (np.arange(k) // block).astype(np.int32), True) if g_idx else None,
              ('bias', f32(r.randn(n)), True) if bias else None]
    single(out, name, 'MatMulNBits', inputs, F,
           dict(K=k, N=n, bits=bits, block_size=block, accuracy_level=0))


def matmul_nbits_cases(out):
    r = rng(11)
    nbits_case(out, 'matmulnbits_4bit_zp', r, (2, 3, 64), 16, 4, 32, 'uint8')
    nbits_case(out, 'matmulnbits_4bit_nozp_bias', r, (5, 48), 8, 4, 32, None, bias=True)
    nbits_case(out, 'matmulnbits_4bit_odd_blocks', r, (3, 96), 12, 4, 32, 'uint8', bias=True)
    nbits_case(out, 'matmulnbits_4bit_floatzp', r, (4, 64), 8, 4, 16, 'float')
    nbits_case(out, 'matmulnbits_4bit_gidx', r, (2, 64), 8, 4, 32, None, g_idx=True)
    nbits_case(out, 'matmulnbits_8bit_zp', r, (2, 2, 40), 6, 8, 16, 'uint8', bias=True)
    nbits_case(out, 'matmulnbits_8bit_nozp', r, (3, 32), 5, 8, 32, None)


# ---------------------------------------------------------------------------------------------------------------
# MatMulIntegerToFloat, DynamicQuantizeMatMul: int32 products scaled in float (exact but for float rounding).

def u8(r, *shape):
    return r.randint(0, 256, shape).astype(np.uint8)


def i8(r, *shape):
    return r.randint(-128, 128, shape).astype(np.int8)


def integer_to_float_cases(out):
    r = rng(12)
    a, b = u8(r, 2, 4, 8), i8(r, 8, 6)
    sc = lambda *s: f32(r.uniform(0.01, 0.05, s))  # noqa: E731
    single(out, 'mmitf_u8s8_bias', 'MatMulIntegerToFloat',
           [('a', a, False), ('b', b, True), ('a_scale', sc(), True), ('b_scale', sc(), True),
            ('a_zp', np.uint8(131), True), ('b_zp', np.int8(-3), True), ('bias', f32(r.randn(6)), True)], F)
    single(out, 'mmitf_u8u8_nozp', 'MatMulIntegerToFloat',
           [('a', u8(r, 5, 8), False), ('b', u8(r, 8, 3), True), ('a_scale', sc(1), True), ('b_scale', sc(1), True)], F)
    single(out, 'mmitf_per_column', 'MatMulIntegerToFloat',
           [('a', a, False), ('b', b, True), ('a_scale', sc(), True), ('b_scale', sc(6), True),
            ('a_zp', np.uint8(120), True), ('b_zp', i8(r, 6), True), ('bias', f32(r.randn(6)), True)], F)
    single(out, 'mmitf_batched_b', 'MatMulIntegerToFloat',
           [('a', u8(r, 3, 2, 8), False), ('b', i8(r, 3, 8, 4), False), ('a_scale', sc(), True),
            ('b_scale', sc(), True), ('a_zp', np.uint8(128), True)], F)

    single(out, 'mmitf_s8s8_per_column', 'MatMulIntegerToFloat',
           [('a', i8(r, 3, 8), False), ('b', b, True), ('a_scale', sc(), True), ('b_scale', sc(6), True),
            ('a_zp', np.int8(-7), True), ('b_zp', i8(r, 6), True), ('bias', f32(r.randn(6)), True)], F)

    x = f32(r.randn(3, 8) * 2 + 0.3)
    single(out, 'dqmm_s8_bias', 'DynamicQuantizeMatMul',
           [('a', x, False), ('b', b, True), ('b_scale', sc(), True), ('b_zp', np.int8(2), True),
            ('bias', f32(r.randn(6)), True)], F)
    single(out, 'dqmm_u8_zp', 'DynamicQuantizeMatMul',
           [('a', f32(r.randn(2, 3, 8)), False), ('b', u8(r, 8, 5), True), ('b_scale', sc(1), True),
            ('b_zp', np.array([128], np.uint8), True)], F)
    single(out, 'dqmm_positive_a', 'DynamicQuantizeMatMul',
           [('a', f32(r.uniform(0.5, 3, (4, 8))), False), ('b', b, True), ('b_scale', sc(), True)], F)
    single(out, 'dqmm_per_column', 'DynamicQuantizeMatMul',
           [('a', x, False), ('b', b, True), ('b_scale', sc(6), True), ('b_zp', i8(r, 6), True)], F)


# ---------------------------------------------------------------------------------------------------------------
# QGemm

def qgemm_cases(out):
    r = rng(13)
    sc = lambda *s: f32(r.uniform(0.01, 0.05, s))  # noqa: E731
    a, b = u8(r, 4, 8), i8(r, 8, 6)
    base = [('a', a, False), ('a_scale', sc(), True), ('a_zp', np.uint8(125), True), ('b', b, True),
            ('b_scale', sc(), True), ('b_zp', np.int8(1), True)]
    single(out, 'qgemm_float_out', 'QGemm', base, F)
    single(out, 'qgemm_float_c_alpha', 'QGemm', base + [('c', r.randint(-500, 500, (6,)).astype(np.int32), True)], F,
           dict(alpha=0.5))
    single(out, 'qgemm_u8_out_transb', 'QGemm',
           [('a', a, False), ('a_scale', sc(), True), ('a_zp', np.uint8(125), True), ('b', i8(r, 6, 8), True),
            ('b_scale', sc(6), True), ('b_zp', np.zeros(6, np.int8), True),
            ('c', r.randint(-500, 500, (4, 6)).astype(np.int32), True), ('y_scale', f32(0.3), True),
            ('y_zp', np.uint8(100), True)], U8, dict(transB=1))
    single(out, 'qgemm_s8_out_transa', 'QGemm',
           [('a', i8(r, 8, 4), False), ('a_scale', sc(), True), ('a_zp', np.int8(-2), True), ('b', i8(r, 8, 5), True),
            ('b_scale', sc(), True), ('b_zp', np.int8(0), True), None, ('y_scale', f32(0.2), True),
            ('y_zp', np.int8(-5), True)], I8, dict(transA=1, alpha=1.5))


# ---------------------------------------------------------------------------------------------------------------
# QOperator elementwise ops (exact: chipfit computes MLAS's float operations in its order).

def qdata(r, dtype, *shape):
    return u8(r, *shape) if dtype == 'u8' else i8(r, *shape)


def zp(dtype, value):
    return np.uint8(value) if dtype == 'u8' else np.int8(value - 128)


def qlinear_binary_cases(out):
    r = rng(14)
    shapes = {'same': ((2, 3, 8), (2, 3, 8)), 'scalar_b': ((2, 3, 8), (1,)), 'scalar_a': ((1,), (4, 8)),
              'bcast_inner': ((2, 3, 8), (3, 1)), 'bcast_row': ((2, 3, 8), (8,))}
    for op in ('QLinearAdd', 'QLinearMul'):
        for dtype in ('u8', 'i8'):
            for shape_name, (sa, sb) in shapes.items():
                if dtype == 'i8' and shape_name not in ('same', 'bcast_inner'):
                    continue
                c_scale = 0.05 if op == 'QLinearAdd' else 0.4
                single(out, '%s_%s_%s' % (op.lower(), dtype, shape_name), op,
                       [('a', qdata(r, dtype, *sa), False), ('a_scale', f32(0.031), True), ('a_zp', zp(dtype, 120), True),
                        ('b', qdata(r, dtype, *sb), False), ('b_scale', f32(0.047), True), ('b_zp', zp(dtype, 131), True),
                        ('c_scale', f32(c_scale), True), ('c_zp', zp(dtype, 125), True)], U8 if dtype == 'u8' else I8)
        # ORT's type inference rejects an omitted zero point here, so the zero zero points are explicit.
        single(out, '%s_u8_zero_zero_points' % op.lower(), op,
               [('a', u8(r, 3, 8), False), ('a_scale', f32(0.02), True), ('a_zp', np.uint8(0), True),
                ('b', u8(r, 3, 8), False), ('b_scale', f32(0.03), True), ('b_zp', np.uint8(0), True),
                ('c_scale', f32(0.07 if op == 'QLinearAdd' else 2.0), True), ('c_zp', np.uint8(0), True)], U8)


def qlinear_lookup_cases(out):
    r = rng(15)
    every_u8 = np.arange(256, dtype=np.uint8).reshape(4, 8, 8)
    every_i8 = every_u8.view(np.int8)
    for dtype, x in (('u8', every_u8), ('i8', every_i8)):
        t = U8 if dtype == 'u8' else I8
        params = [('x_scale', f32(0.05), True), ('x_zp', zp(dtype, 128), True)]
        single(out, 'qlinearsigmoid_%s' % dtype, 'QLinearSigmoid',
               [('x', x, False)] + params + [('y_scale', f32(1 / 256), True), ('y_zp', zp(dtype, 0), True)], t,
               note='ORT evaluates the logistic with MLAS\'s approximation, chipfit with expf: on these codes both '
                    'round to the same integers, so the comparison stays exact')
        single(out, 'qlinearleakyrelu_%s' % dtype, 'QLinearLeakyRelu',
               [('x', x, False)] + params + [('y_scale', f32(0.04), True), ('y_zp', zp(dtype, 30), True)], t,
               dict(alpha=0.15))
    single(out, 'qlinearleakyrelu_u8_default_alpha_no_zp', 'QLinearLeakyRelu',
           [('x', u8(r, 3, 7), False), ('x_scale', f32(0.1), True), None, ('y_scale', f32(0.08), True),
            ('y_zp', np.uint8(0), True)], U8)


def qlinear_concat_cases(out):
    r = rng(16)
    for dtype in ('u8', 'i8'):
        t = U8 if dtype == 'u8' else I8
        y_params = [('y_scale', f32(0.05), True), ('y_zp', zp(dtype, 128), True)]
        single(out, 'qlinearconcat_%s_axis1' % dtype, 'QLinearConcat',
               y_params + [('x0', qdata(r, dtype, 2, 3, 4), False), ('s0', f32(0.05), True), ('z0', zp(dtype, 128), True),
                           ('x1', qdata(r, dtype, 2, 2, 4), False), ('s1', f32(0.07), True), ('z1', zp(dtype, 100), True),
                           ('x2', qdata(r, dtype, 2, 1, 4), False), ('s2', f32(0.021), True), ('z2', zp(dtype, 140), True)],
               t, dict(axis=1))
    single(out, 'qlinearconcat_u8_axis_neg1', 'QLinearConcat',
           [('y_scale', f32(0.1), True), ('y_zp', np.uint8(10), True),
            ('x0', u8(r, 3, 2), False), ('s0', f32(0.3), True), ('z0', np.uint8(0), True),
            ('x1', u8(r, 3, 5), False), ('s1', f32(0.02), True), ('z1', np.uint8(200), True)], U8, dict(axis=-1))


# ---------------------------------------------------------------------------------------------------------------
# Pools and softmax (exact: the same float operations as ORT's kernels).

def qparams(dtype, x_scale, x_zp, y_scale, y_zp):
    return [('x_scale', f32(x_scale), True), ('x_zp', zp(dtype, x_zp), True),
            ('y_scale', f32(y_scale), True), ('y_zp', zp(dtype, y_zp), True)]


def qlinear_pool_cases(out):
    r = rng(17)
    for dtype in ('u8', 'i8'):
        t = U8 if dtype == 'u8' else I8
        single(out, 'qlinearglobalavgpool_%s_nchw' % dtype, 'QLinearGlobalAveragePool',
               [('x', qdata(r, dtype, 2, 3, 5, 5), False)] + qparams(dtype, 0.05, 120, 0.01, 130), t)
        single(out, 'qlinearglobalavgpool_%s_nhwc' % dtype, 'QLinearGlobalAveragePool',
               [('x', qdata(r, dtype, 2, 4, 3, 10), False)] + qparams(dtype, 0.05, 128, 0.03, 100), t,
               dict(channels_last=1))
        single(out, 'qlinearavgpool_%s_pad_exclude' % dtype, 'QLinearAveragePool',
               [('x', qdata(r, dtype, 1, 3, 7, 7), False)] + qparams(dtype, 0.05, 120, 0.02, 128), t,
               dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    single(out, 'qlinearavgpool_u8_pad_include', 'QLinearAveragePool',
           [('x', u8(r, 2, 2, 6, 5), False)] + qparams('u8', 0.05, 120, 0.03, 128), U8,
           dict(kernel_shape=[3, 2], strides=[1, 2], pads=[1, 0, 1, 1], count_include_pad=1))
    single(out, 'qlinearavgpool_u8_nhwc', 'QLinearAveragePool',
           [('x', u8(r, 1, 6, 6, 4), False)] + qparams('u8', 0.05, 120, 0.02, 128), U8,
           dict(kernel_shape=[2, 2], strides=[2, 2], channels_last=1))
    single(out, 'qlinearavgpool_i8_1d_ceil', 'QLinearAveragePool',
           [('x', i8(r, 2, 3, 10), False)] + qparams('i8', 0.04, 131, 0.02, 123), I8,
           dict(kernel_shape=[3], strides=[2], ceil_mode=1))
    single(out, 'qlinearavgpool_u8_whole_image', 'QLinearAveragePool',
           [('x', u8(r, 1, 3, 4, 4), False)] + qparams('u8', 0.05, 120, 0.01, 128), U8,
           dict(kernel_shape=[4, 4]))


def qlinear_softmax_cases(out):
    r = rng(18)
    cases = [('u8_last', 'u8', (2, 3, 10), dict(axis=-1, opset=13)),
             ('i8_last', 'i8', (4, 16), dict(axis=-1, opset=13)),
             ('u8_axis1', 'u8', (2, 6, 3), dict(axis=1, opset=13)),
             ('i8_axis0', 'i8', (5, 4), dict(axis=0, opset=13)),
             ('u8_opset12_flatten', 'u8', (2, 3, 4), dict(axis=1, opset=12))]
    for name, dtype, shape, attrs in cases:
        y_zp = 0 if dtype == 'u8' else -128
        x = qdata(r, dtype, *shape)
        single(out, 'qlinearsoftmax_' + name, 'QLinearSoftmax',
               [('x', x, False), ('x_scale', f32(0.08), True), ('x_zp', zp(dtype, 128), True),
                ('y_scale', f32(1 / 256), True),
                ('y_zp', np.uint8(y_zp) if dtype == 'u8' else np.int8(y_zp), True)], U8 if dtype == 'u8' else I8, attrs)


# ---------------------------------------------------------------------------------------------------------------
# com.microsoft QuantizeLinear / DequantizeLinear (16-bit types included).

def qdq_cases(out):
    r = rng(19)
    x = f32(r.randn(2, 3, 4) * 3)
    for name, zp_value in (('u8', np.uint8(128)), ('i8', np.int8(-3)), ('u16', np.uint16(30000)),
                           ('i16', np.int16(-100))):
        t = elem(zp_value)
        single(out, 'ms_quantize_%s' % name, 'QuantizeLinear',
               [('x', x, False), ('scale', f32(0.02 if '8' in name else 0.0001), True), ('zp', zp_value, True)], t)
        q = (r.randint(0, 256, (2, 3, 4)) if name == 'u8' else r.randint(-128, 128, (2, 3, 4)) if name == 'i8' else
             r.randint(0, 65536, (2, 3, 4)) if name == 'u16' else r.randint(-32768, 32768, (2, 3, 4)))
        single(out, 'ms_dequantize_%s' % name, 'DequantizeLinear',
               [('x', q.astype(zp_value.dtype), False), ('scale', f32(0.02), True), ('zp', zp_value, True)], F)
    single(out, 'ms_quantize_u8_no_zp', 'QuantizeLinear', [('x', x, False), ('scale', f32(0.05), True)], U8)
    single(out, 'ms_quantize_i8_axis1', 'QuantizeLinear',
           [('x', x, False), ('scale', f32([0.01, 0.02, 0.05]), True), ('zp', np.array([0, -5, 7], np.int8), True)],
           I8, dict(axis=1))
    single(out, 'ms_quantize_u16_axis_last', 'QuantizeLinear',
           [('x', x, False), ('scale', f32([1e-4, 2e-4, 5e-5, 3e-4]), True),
            ('zp', np.array([32768, 30000, 40000, 0], np.uint16), True)], mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype('uint16')],
           dict(axis=-1))
    single(out, 'ms_dequantize_i8_axis0', 'DequantizeLinear',
           [('x', i8(r, 2, 3, 4), False), ('scale', f32([0.1, 0.03]), True), ('zp', np.array([1, -2], np.int8), True)],
           F, dict(axis=0))
    single(out, 'ms_dequantize_i32_no_zp', 'DequantizeLinear',
           [('x', r.randint(-100000, 100000, (3, 4)).astype(np.int32), False), ('scale', f32(0.001), True)], F)


# ---------------------------------------------------------------------------------------------------------------
# GatherBlockQuantized (uint8 data; gather_axis 0, quantize_axis last, as ORT requires for uint8).

def gather_block_cases(out):
    r = rng(20)
    for name, shape, bits, block, zp_packed, idx in (
            ('4bit_zp', (10, 32), 4, 16, True, np.array([3, -1, 0], np.int64)),
            ('4bit_nozp_2d_idx', (8, 16), 4, 16, False, np.array([[1, 7], [2, 2]], np.int32)),
            ('8bit_zp', (6, 48), 8, 16, True, np.array([5, 0], np.int64)),
            ('4bit_3d', (5, 2, 16), 4, 32, True, np.array([4, 1], np.int32))):
        comp = 8 // bits
        blocks = -(-shape[-1] * comp // block)
        scales = f32(r.uniform(0.01, 0.1, shape[:-1] + (blocks,)))
        inputs = [('data', u8(r, *shape), True), ('indices', idx, False), ('scales', scales, True)]
        if zp_packed:
            inputs.append(('zp', u8(r, *(shape[:-1] + (-(-blocks // comp),))), True))
        single(out, 'gatherblockquantized_' + name, 'GatherBlockQuantized', inputs, F,
               dict(bits=bits, block_size=block, gather_axis=0, quantize_axis=len(shape) - 1))


def main():
    out = out_dir()
    matmul_nbits_cases(out)
    integer_to_float_cases(out)
    qgemm_cases(out)
    qlinear_binary_cases(out)
    qlinear_lookup_cases(out)
    qlinear_concat_cases(out)
    qlinear_pool_cases(out)
    qlinear_softmax_cases(out)
    qdq_cases(out)
    gather_block_cases(out)


if __name__ == '__main__':
    main()
