"""Cases for the ONNX-domain quantized ops (DynamicQuantizeLinear, ConvInteger, MatMulInteger, QLinearConv,
QLinearMatMul, QuantizeLinear/DequantizeLinear) where ONNX Runtime's results are deterministic.

The dynamic cases follow ONNX Runtime's dynamic quantizer: DynamicQuantizeLinear -> ConvInteger/MatMulInteger ->
Cast -> Mul(x_scale * w_scale) -> Add(bias). Most also return the quantized x, its scale and zero point and the
int32 accumulator, so that an integer difference shows as such (a uint8 or int32 output allows no error at all:
tolerance times max |ORT| stays below 1). The graph outputs keep ONNX Runtime from fusing the chain, so the
`_fused` variants leave them out to test what its MatMulIntegerToFloat fusion computes.
"""
import platform

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from common import model, out_dir, rng, save_case

F, U8, I8, I32 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32
TARGETS = ('ref:fp32', 'cpu:fp32', 'cpu:int8')


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, array):
    return numpy_helper.from_array(array, name)


def onnx_type(array):
    return {np.dtype(np.uint8): U8, np.dtype(np.int8): I8, np.dtype(np.int32): I32}.get(array.dtype, F)


# ---------------------------------------------------------------------------------------------------------------
# Inputs: realistic activations, one-signed ranges, constants and values that land on .5 after the division.

def activations(seed, shape, kind='mixed'):
    r = rng(seed)
    if kind == 'mixed':
        return (r.randn(*shape) * 2.0 + 0.3).astype(np.float32)
    if kind == 'positive':
        return (np.abs(r.randn(*shape)) * 3.0 + 0.05).astype(np.float32)
    if kind == 'negative':
        return (-np.abs(r.randn(*shape)) * 1.7 - 0.01).astype(np.float32)
    if kind == 'constant':
        return np.full(shape, 0.7, np.float32)
    if kind == 'zero':
        return np.zeros(shape, np.float32)
    if kind == 'ties':
        # Range [-100.5, 154.5]: scale exactly 1, the zero point 100.5 a tie (even: 100), every x/scale a tie.
        x = (r.randint(-100, 155, size=shape) + 0.5).astype(np.float32)
        x.flat[0], x.flat[1] = -100.5, 154.5
        return x
    if kind == 'quarter':
        # Range [-64, 63.5]: scale exactly 0.5, x/scale on every integer and half.
        x = (r.randint(-256, 255, size=shape) * 0.25).astype(np.float32)
        x.flat[0], x.flat[1] = -64.0, 63.5
        return x
    raise ValueError(kind)


def full_range_int8_is_exact():
    """Whether ONNX Runtime's uint8 x int8 products are exact on this host. On x86 without VNNI its U8S8 (and
    S8S8, shifted to U8S8) kernels multiply with vpmaddubsw, whose sums of two adjacent u8*s8 products saturate at
    16 bits: up to 2 * 255 * 127 = 64770 meets 32767, so a pair can lose 32003 of the accumulator. chipfit
    computes the exact sum, so there the int8 weights stay within [-63, 63] (2 * 255 * 63 = 32130 fits)."""
    if platform.machine().lower() not in ('x86_64', 'amd64', 'i386', 'i686'):
        return True
    with open('/proc/cpuinfo') as f:
        flags = f.read()
    return 'avx512_vnni' in flags or 'avx_vnni' in flags


INT8_LIMIT = 127 if full_range_int8_is_exact() else 63


def weights(seed, shape, dtype, zp):
    """Quantized weights around their zero point (a scalar or one per output channel along axis 0)."""
    r = rng(seed)
    info = np.iinfo(dtype)
    lo, hi = (info.min, info.max) if dtype == np.uint8 else (-INT8_LIMIT, INT8_LIMIT)
    zp = np.asarray(zp, np.int64).reshape((-1,) + (1,) * (len(shape) - 1))
    w = np.clip(np.round(r.randn(*shape) * 40.0) + zp, lo, hi)
    return w.astype(dtype)


# ---------------------------------------------------------------------------------------------------------------
# DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul -> Add.

def dynamic_conv(out, name, x, w, w_zp=None, w_scale=0.02, pads=(1, 1, 1, 1), strides=(1, 1), group=1,
                 extra=True, note=''):
    m = w.shape[0]
    b = (rng(7).randn(1, m, 1, 1) * 0.5).astype(np.float32)
    ws = np.asarray(w_scale, np.float32)
    inits = [init('W', w), init('W_scale', ws), init('B', b)]
    conv_inputs = ['xq', 'W', 'xz']
    if w_zp is not None:
        inits.append(init('W_zp', np.asarray(w_zp, w.dtype)))
        conv_inputs.append('W_zp')
    nodes = [
        helper.make_node('DynamicQuantizeLinear', ['x'], ['xq', 'xs', 'xz']),
        helper.make_node('ConvInteger', conv_inputs, ['acc'], pads=list(pads), strides=list(strides), group=group),
        helper.make_node('Cast', ['acc'], ['accf'], to=F),
        helper.make_node('Mul', ['xs', 'W_scale'], ['s']),
        helper.make_node('Mul', ['accf', 's'], ['ys']),
        helper.make_node('Add', ['ys', 'B'], ['y']),
    ]
    outputs = [vi('y', F, None)]
    if extra:
        outputs += [vi('xq', U8, None), vi('xs', F, None), vi('xz', U8, None), vi('acc', I32, None)]
    g = model(nodes, [vi('x', F, list(x.shape))], outputs, inits, opset=13)
    save_case(out, name, g, {'x': x}, targets=TARGETS, note=note)


def conv_cases(out):
    xs = (1, 4, 10, 10)
    wu = weights(11, (6, 4, 3, 3), np.uint8, 128)
    ws = weights(12, (6, 4, 3, 3), np.int8, 0)
    scale_pc = (0.01 + 0.005 * np.arange(6)).astype(np.float32).reshape(1, 6, 1, 1)
    for kind in ('mixed', 'positive', 'negative', 'constant', 'zero', 'ties', 'quarter'):
        dynamic_conv(out, 'dconv_u8w_' + kind, activations(21, xs, kind), wu, w_zp=np.uint8(128))
    dynamic_conv(out, 'dconv_u8w_nozp', activations(22, xs), weights(15, (6, 4, 3, 3), np.uint8, 40))
    dynamic_conv(out, 'dconv_u8w_fused', activations(23, xs), wu, w_zp=np.uint8(128), extra=False)
    dynamic_conv(out, 'dconv_u8w_stride2', activations(24, (1, 4, 11, 11)), wu, w_zp=np.uint8(128), strides=(2, 2))
    dynamic_conv(out, 'dconv_u8w_group2', activations(25, xs), weights(16, (6, 2, 3, 3), np.uint8, 128),
                 w_zp=np.uint8(128), group=2)
    # ONNX Runtime's ConvInteger takes only a scalar w_zero_point: per-channel scales, one zero point.
    dynamic_conv(out, 'dconv_u8w_perchanscale', activations(26, xs), wu, w_zp=np.uint8(128), w_scale=scale_pc)
    dynamic_conv(out, 'dconv_s8w', activations(27, xs), ws)
    dynamic_conv(out, 'dconv_s8w_zp', activations(28, xs), weights(17, (6, 4, 3, 3), np.int8, 4), w_zp=np.int8(4))
    dynamic_conv(out, 'dconv_s8w_perchanscale', activations(29, xs), ws, w_zp=np.int8(0), w_scale=scale_pc)
    dynamic_conv(out, 'dconv_s8w_ties', activations(30, xs, 'ties'), ws)
    # A 1x1 convolution with a larger K, as the segmentation models' bottlenecks.
    dynamic_conv(out, 'dconv_u8w_1x1', activations(31, (1, 64, 6, 6)), weights(18, (16, 64, 1, 1), np.uint8, 128),
                 w_zp=np.uint8(128), pads=(0, 0, 0, 0))


# ---------------------------------------------------------------------------------------------------------------
# DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul -> Add.

def dynamic_matmul(out, name, a, b, b_zp=None, b_scale=0.03, extra=True, note=''):
    n = b.shape[-1]
    bias = (rng(8).randn(n) * 0.5).astype(np.float32)
    inits = [init('B', b), init('B_scale', np.asarray(b_scale, np.float32)), init('bias', bias)]
    mm_inputs = ['aq', 'B', 'az']
    if b_zp is not None:
        inits.append(init('B_zp', np.asarray(b_zp, b.dtype)))
        mm_inputs.append('B_zp')
    nodes = [
        helper.make_node('DynamicQuantizeLinear', ['a'], ['aq', 'as', 'az']),
        helper.make_node('MatMulInteger', mm_inputs, ['acc']),
        helper.make_node('Cast', ['acc'], ['accf'], to=F),
        helper.make_node('Mul', ['as', 'B_scale'], ['s']),
        helper.make_node('Mul', ['accf', 's'], ['ys']),
        helper.make_node('Add', ['ys', 'bias'], ['y']),
    ]
    outputs = [vi('y', F, None)]
    if extra:
        outputs += [vi('aq', U8, None), vi('as', F, None), vi('az', U8, None), vi('acc', I32, None)]
    g = model(nodes, [vi('a', F, list(a.shape))], outputs, inits, opset=13)
    save_case(out, name, g, {'a': a}, targets=TARGETS, note=note)


def matmul_cases(out):
    shape = (2, 5, 32)
    bu = weights(41, (32, 12), np.uint8, 128)
    bs = weights(42, (32, 12), np.int8, 0)
    for kind in ('mixed', 'positive', 'negative', 'constant', 'ties'):
        dynamic_matmul(out, 'dmatmul_u8b_' + kind, activations(51, shape, kind), bu, b_zp=np.uint8(128))
    dynamic_matmul(out, 'dmatmul_s8b', activations(52, shape), bs)
    dynamic_matmul(out, 'dmatmul_s8b_zp', activations(53, shape), weights(43, (32, 12), np.int8, -3), b_zp=np.int8(-3))
    zp_col = (rng(44).randint(-6, 7, size=12)).astype(np.int8)
    b_colzp = np.clip(np.round(rng(45).randn(32, 12) * 40.0) + zp_col, -INT8_LIMIT, INT8_LIMIT).astype(np.int8)
    dynamic_matmul(out, 'dmatmul_s8b_colzp', activations(54, shape), b_colzp, b_zp=zp_col,
                   b_scale=(0.01 + 0.002 * np.arange(12)).astype(np.float32))
    dynamic_matmul(out, 'dmatmul_u8b_fused', activations(55, shape), bu, b_zp=np.uint8(128), extra=False)
    dynamic_matmul(out, 'dmatmul_s8b_fused', activations(56, shape), bs, extra=False)


# ---------------------------------------------------------------------------------------------------------------
# QLinearConv and QLinearMatMul on quantized graph inputs.

def qlinear_conv(out, name, x, x_zp, w, w_zp, w_scale, y_zp, x_scale=0.05, y_scale=0.4, bias=True, pads=(1, 1, 1, 1)):
    m = w.shape[0]
    inits = [init('x_scale', np.float32(x_scale)), init('x_zp', x_zp), init('W', w),
             init('W_scale', np.asarray(w_scale, np.float32)), init('W_zp', np.asarray(w_zp, w.dtype)),
             init('y_scale', np.float32(y_scale)), init('y_zp', y_zp)]
    ins = ['x', 'x_scale', 'x_zp', 'W', 'W_scale', 'W_zp', 'y_scale', 'y_zp']
    if bias:
        inits.append(init('Bq', rng(9).randint(-2000, 2000, size=m).astype(np.int32)))
        ins.append('Bq')
    nodes = [helper.make_node('QLinearConv', ins, ['y'], pads=list(pads))]
    g = model(nodes, [vi('x', onnx_type(x), list(x.shape))], [vi('y', onnx_type(y_zp), None)], inits, opset=13)
    save_case(out, name, g, {'x': x}, targets=TARGETS)


def qlinear_matmul(out, name, a, a_zp, b, b_zp, b_scale, y_zp, a_scale=0.05, y_scale=0.3):
    inits = [init('a_scale', np.float32(a_scale)), init('a_zp', a_zp), init('B', b),
             init('B_scale', np.asarray(b_scale, np.float32)), init('B_zp', np.asarray(b_zp, b.dtype)),
             init('y_scale', np.float32(y_scale)), init('y_zp', y_zp)]
    nodes = [helper.make_node('QLinearMatMul', ['a', 'a_scale', 'a_zp', 'B', 'B_scale', 'B_zp', 'y_scale', 'y_zp'],
                              ['y'])]
    g = model(nodes, [vi('a', onnx_type(a), list(a.shape))], [vi('y', onnx_type(y_zp), None)], inits, opset=13)
    save_case(out, name, g, {'a': a}, targets=TARGETS)


def qlinear_cases(out):
    r = rng(61)
    xu = r.randint(0, 256, size=(1, 4, 8, 8)).astype(np.uint8)
    xs = r.randint(-128, 128, size=(1, 4, 8, 8)).astype(np.int8)
    wu = weights(62, (6, 4, 3, 3), np.uint8, 128)
    ws = weights(63, (6, 4, 3, 3), np.int8, 0)
    pc = (0.002 + 0.001 * np.arange(6)).astype(np.float32)
    qlinear_conv(out, 'qconv_u8_u8w', xu, np.uint8(120), wu, np.uint8(128), 0.004, np.uint8(128))
    qlinear_conv(out, 'qconv_u8_s8w', xu, np.uint8(120), ws, np.int8(0), 0.004, np.uint8(128))
    qlinear_conv(out, 'qconv_u8_s8w_perchan', xu, np.uint8(120), ws, np.zeros(6, np.int8), pc, np.uint8(100))
    qlinear_conv(out, 'qconv_s8_s8w', xs, np.int8(-3), ws, np.int8(0), 0.004, np.int8(5))
    qlinear_conv(out, 'qconv_s8_s8w_perchan_nobias', xs, np.int8(0), ws, np.zeros(6, np.int8), pc, np.int8(-10),
                 bias=False)
    # Ties: scales that are powers of two make acc * multiplier land on .5 often.
    qlinear_conv(out, 'qconv_u8_s8w_ties', xu, np.uint8(128), ws, np.int8(0), 0.25, np.uint8(128), x_scale=0.5,
                 y_scale=64.0, bias=False)

    # Larger outputs, odd scales and non-zero y zero points: a one-LSB requantization difference (the product's
    # rounding, or adding the zero point before rounding) shows up in some ten thousand outputs.
    xb = r.randint(0, 256, size=(1, 32, 40, 40)).astype(np.uint8)
    wb = weights(66, (32, 32, 3, 3), np.int8, 0)
    pcb = (0.0011 + 0.00037 * np.arange(32)).astype(np.float32)
    qlinear_conv(out, 'qconv_big_u8_s8w_perchan', xb, np.uint8(117), wb, np.zeros(32, np.int8), pcb, np.uint8(131),
                 x_scale=0.0173, y_scale=0.731)
    qlinear_conv(out, 'qconv_big_s8_s8w', xb.astype(np.int16).__sub__(128).astype(np.int8), np.int8(-7), wb,
                 np.int8(0), 0.00213, np.int8(9), x_scale=0.0173, y_scale=0.731)
    qlinear_conv(out, 'qconv_big_u8_u8w', xb, np.uint8(117), weights(67, (32, 32, 3, 3), np.uint8, 128),
                 np.uint8(128), 0.00213, np.uint8(77), x_scale=0.0173, y_scale=0.731)
    ab = r.randint(0, 256, size=(1, 300, 128)).astype(np.uint8)
    bb = weights(68, (128, 64), np.int8, 0)
    qlinear_matmul(out, 'qmatmul_big_u8_s8b', ab, np.uint8(119), bb, np.int8(0), 0.00213, np.uint8(131),
                   a_scale=0.0173, y_scale=0.0731)
    qlinear_matmul(out, 'qmatmul_big_u8_s8b_percol', ab, np.uint8(119), bb, np.zeros(64, np.int8),
                   (0.0011 + 0.00037 * np.arange(64)).astype(np.float32), np.uint8(131), a_scale=0.0173, y_scale=0.731)

    # ONNX Runtime requantizes in float: float(acc) * multiplier, rounded to float, then half to even. With these
    # scales acc = 115 gives 35.5 in float (36) but 35.4999991 exactly (35): a double product rounds otherwise.
    y_tie = np.float32(0.00011937000090256333)
    a_tie = np.array([115, 1, 230, 7, 114, 116], np.uint8).reshape(1, 6, 1)
    qlinear_matmul(out, 'qmatmul_float_product', a_tie, np.uint8(0), np.ones((1, 1), np.int8), np.int8(0), 0.00213,
                   np.uint8(0), a_scale=0.0173, y_scale=y_tie)
    qlinear_conv(out, 'qconv_float_product', a_tie.reshape(1, 1, 2, 3), np.uint8(0), np.ones((1, 1, 1, 1), np.int8),
                 np.int8(0), 0.00213, np.uint8(0), x_scale=0.0173, y_scale=y_tie, bias=False, pads=(0, 0, 0, 0))

    au = r.randint(0, 256, size=(2, 5, 32)).astype(np.uint8)
    as8 = r.randint(-128, 128, size=(2, 5, 32)).astype(np.int8)
    bu = weights(64, (32, 12), np.uint8, 128)
    bs = weights(65, (32, 12), np.int8, 0)
    qlinear_matmul(out, 'qmatmul_u8_u8b', au, np.uint8(130), bu, np.uint8(128), 0.004, np.uint8(128))
    qlinear_matmul(out, 'qmatmul_u8_s8b', au, np.uint8(130), bs, np.int8(0), 0.004, np.uint8(128))
    qlinear_matmul(out, 'qmatmul_s8_s8b', as8, np.int8(2), bs, np.int8(0), 0.004, np.int8(-4))
    qlinear_matmul(out, 'qmatmul_u8_s8b_percol', au, np.uint8(130), bs, np.zeros(12, np.int8),
                   (0.002 + 0.0005 * np.arange(12)).astype(np.float32), np.uint8(128))
    qlinear_matmul(out, 'qmatmul_u8_s8b_ties', au, np.uint8(128), bs, np.int8(0), 0.25, np.uint8(128), a_scale=0.5,
                   y_scale=32.0)


# ---------------------------------------------------------------------------------------------------------------
# QuantizeLinear / DequantizeLinear: saturation, ties, per-axis.

def quantize_roundtrip(out, name, x, scale, zp, axis=1):
    inits = [init('scale', np.asarray(scale, np.float32)), init('zp', zp)]
    nodes = [helper.make_node('QuantizeLinear', ['x', 'scale', 'zp'], ['q'], axis=axis),
             helper.make_node('DequantizeLinear', ['q', 'scale', 'zp'], ['y'], axis=axis)]
    g = model(nodes, [vi('x', F, list(x.shape))], [vi('q', onnx_type(np.asarray(zp)), None), vi('y', F, None)], inits,
              opset=13)
    save_case(out, name, g, {'x': x}, targets=TARGETS)


def qdq_cases(out):
    r = rng(71)
    x = (r.randn(2, 3, 4, 5) * 10.0).astype(np.float32)
    x.flat[:6] = [1e6, -1e6, 0.5, 1.5, -0.5, -2.5]  # saturation both ways, ties with scale 1
    quantize_roundtrip(out, 'qdq_u8_sat', x, 0.1, np.uint8(128))
    quantize_roundtrip(out, 'qdq_s8_sat', x, 0.1, np.int8(-3))
    ties = (r.randint(-300, 300, size=(2, 3, 4, 5)) + 0.5).astype(np.float32)
    quantize_roundtrip(out, 'qdq_u8_ties', ties, 1.0, np.uint8(100))
    quantize_roundtrip(out, 'qdq_s8_ties', ties * 0.5, 0.5, np.int8(0))
    quantize_roundtrip(out, 'qdq_s8_perchan', x, np.array([0.05, 0.1, 0.2], np.float32), np.array([0, -5, 7], np.int8))
    quantize_roundtrip(out, 'qdq_u8_perchan_axis3', x, (0.05 * (1 + np.arange(5))).astype(np.float32),
                       np.array([0, 10, 128, 200, 255], np.uint8), axis=3)


def deep_conv(out, name, w_dtype, size=48, channels=16):
    """A stack of dynamic-quantized convolutions (plain, strided, depthwise, dilated, 1x1) with Relu between, as a
    segmentation backbone: a one-LSB difference in any layer would grow through the following ones."""
    layers = [dict(group=1, k=3, stride=1, dil=1), dict(group=1, k=3, stride=2, dil=1),
              dict(group=channels, k=3, stride=1, dil=1), dict(group=1, k=1, stride=1, dil=1),
              dict(group=1, k=3, stride=1, dil=2), dict(group=channels, k=5, stride=1, dil=1),
              dict(group=1, k=3, stride=1, dil=1), dict(group=4, k=3, stride=2, dil=1),
              dict(group=1, k=1, stride=1, dil=1), dict(group=1, k=3, stride=1, dil=1)]
    nodes, inits, prev = [], [], 'x'
    for i, layer in enumerate(layers):
        k, group, pad = layer['k'], layer['group'], layer['dil'] * (layer['k'] // 2)
        zp = 128 if w_dtype == np.uint8 else 0
        w = weights(100 + i, (channels, channels // group, k, k), w_dtype, zp)
        p = 'l%d_' % i
        inits += [init(p + 'W', w), init(p + 'W_zp', np.asarray(zp, w_dtype)),
                  init(p + 'W_scale', np.float32(0.6 / np.sqrt(w[0].size) / 40.0)),
                  init(p + 'B', (rng(200 + i).randn(1, channels, 1, 1) * 0.2).astype(np.float32))]
        nodes += [
            helper.make_node('DynamicQuantizeLinear', [prev], [p + 'xq', p + 'xs', p + 'xz']),
            helper.make_node('ConvInteger', [p + 'xq', p + 'W', p + 'xz', p + 'W_zp'], [p + 'acc'], group=group,
                             pads=[pad] * 4, strides=[layer['stride']] * 2, dilations=[layer['dil']] * 2),
            helper.make_node('Cast', [p + 'acc'], [p + 'accf'], to=F),
            helper.make_node('Mul', [p + 'xs', p + 'W_scale'], [p + 's']),
            helper.make_node('Mul', [p + 'accf', p + 's'], [p + 'ys']),
            helper.make_node('Add', [p + 'ys', p + 'B'], [p + 'yb']),
            helper.make_node('Relu' if i % 2 == 0 else 'Identity', [p + 'yb'], [p + 'y']),
        ]
        prev = p + 'y'
    x = activations(300, (1, channels, size, size))
    g = model(nodes, [vi('x', F, list(x.shape))], [vi(prev, F, None)], inits, opset=13)
    save_case(out, name, g, {'x': x}, targets=TARGETS)


def big_elementwise_cases(out):
    """Many elements and awkward scales: x / scale in float, rounded half to even, must match on every one."""
    x = (rng(81).randn(1, 8, 96, 96) * 1.3 + 0.2).astype(np.float32)
    nodes = [helper.make_node('DynamicQuantizeLinear', ['x'], ['xq', 'xs', 'xz'])]
    g = model(nodes, [vi('x', F, list(x.shape))], [vi('xq', U8, None), vi('xs', F, None), vi('xz', U8, None)],
              opset=13)
    save_case(out, 'dql_big', g, {'x': x}, targets=TARGETS)
    quantize_roundtrip(out, 'qdq_big_u8', x, 0.0173, np.uint8(119))
    quantize_roundtrip(out, 'qdq_big_s8_perchan', x, (0.0173 + 0.0011 * np.arange(8)).astype(np.float32),
                       (rng(82).randint(-9, 9, size=8)).astype(np.int8))


def main():
    out = out_dir()
    deep_conv(out, 'dconv_deep_u8w', np.uint8)
    deep_conv(out, 'dconv_deep_s8w', np.int8)
    conv_cases(out)
    matmul_cases(out)
    qlinear_cases(out)
    qdq_cases(out)
    big_elementwise_cases(out)


if __name__ == '__main__':
    main()
