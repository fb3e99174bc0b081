"""Whole graphs ONNX Runtime runs that stress chipfit's importer and compiler rather than one op: control flow
nested in control flow, branches that are only valid for the inputs that take them."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from common import model, out_dir, rng, save_case

vi = helper.make_tensor_value_info


def lstm_branch(hidden):
    """The inner then-branch: x [1, C, 1] squeezed on axis 2 (valid only when T is 1), then one LSTM step."""
    c = hidden
    w = numpy_helper.from_array(rng(3).randn(1, 4 * hidden, c).astype('float32') * 0.1, 'lstm_w')
    r = numpy_helper.from_array(rng(4).randn(1, 4 * hidden, hidden).astype('float32') * 0.1, 'lstm_r')
    b = numpy_helper.from_array(rng(5).randn(1, 8 * hidden).astype('float32') * 0.1, 'lstm_b')
    axes2 = numpy_helper.from_array(np.array([2], dtype=np.int64), 'axes2')
    axes0 = numpy_helper.from_array(np.array([0], dtype=np.int64), 'axes0')
    shape = numpy_helper.from_array(np.array([1, hidden], dtype=np.int64), 'out_shape')
    nodes = [
        helper.make_node('Squeeze', ['x', 'axes2'], ['squeezed'], name='decoder/Squeeze'),
        helper.make_node('Unsqueeze', ['squeezed', 'axes0'], ['seq'], name='decoder/Unsqueeze'),
        helper.make_node('LSTM', ['seq', 'lstm_w', 'lstm_r', 'lstm_b'], ['', 'y_h'], hidden_size=hidden,
                         name='decoder/rnn/LSTM'),
        helper.make_node('Reshape', ['y_h', 'out_shape'], ['inner_then_y'], name='decoder/Reshape'),
    ]
    return helper.make_graph(nodes, 'inner_then', [], [vi('inner_then_y', TensorProto.FLOAT, None)],
                             [w, r, b, axes2, axes0, shape])


def nested_if(c):
    """If_0 (sr == 16000) then: mean over time; else: decoder/If (sr == 8000) then: Squeeze axis 2 + LSTM,
    else: max over time. The else branches read sr and x from the enclosing scopes."""
    outer_then = helper.make_graph(
        [helper.make_node('ReduceMean', ['x'], ['then_y'], axes=[2], keepdims=0, name='encoder/ReduceMean')],
        'outer_then', [], [vi('then_y', TensorProto.FLOAT, None)])
    inner_else = helper.make_graph(
        [helper.make_node('ReduceMax', ['x'], ['inner_else_y'], axes=[2], keepdims=0, name='decoder/ReduceMax')],
        'inner_else', [], [vi('inner_else_y', TensorProto.FLOAT, None)])
    k8000 = numpy_helper.from_array(np.array(8000, dtype=np.int64), 'k8000')
    outer_else = helper.make_graph([
        helper.make_node('Equal', ['sr', 'k8000'], ['is_8k'], name='decoder/Equal'),
        helper.make_node('If', ['is_8k'], ['else_y'], then_branch=lstm_branch(c), else_branch=inner_else,
                         name='decoder/If'),
    ], 'outer_else', [], [vi('else_y', TensorProto.FLOAT, None)], [k8000])
    k16000 = numpy_helper.from_array(np.array(16000, dtype=np.int64), 'k16000')
    nodes = [
        helper.make_node('Equal', ['sr', 'k16000'], ['is_16k'], name='Equal_0'),
        helper.make_node('If', ['is_16k'], ['y'], then_branch=outer_then, else_branch=outer_else, name='If_0'),
    ]
    return model(nodes, [vi('x', TensorProto.FLOAT, [1, c, 'T']), vi('sr', TensorProto.INT64, [])],
                 [vi('y', TensorProto.FLOAT, None)], [k16000])


def roi_align(opset, mode):
    """RoiAlign as torchvision writes it: coordinate_transformation_mode left out, so its default is the one
    of the model's opset (output_half_pixel's arithmetic before 16, half_pixel from 16)."""
    nodes = [helper.make_node('RoiAlign', ['x', 'rois', 'batch_indices'], ['y'], mode=mode, output_height=3,
                              output_width=4, sampling_ratio=2, spatial_scale=0.5, name='roi_align')]
    return model(nodes, [vi('x', TensorProto.FLOAT, [2, 3, 10, 12]), vi('rois', TensorProto.FLOAT, [4, 4]),
                         vi('batch_indices', TensorProto.INT64, [4])],
                 [vi('y', TensorProto.FLOAT, [4, 3, 3, 4])], opset=opset)


def fp16_convnet():
    """A network typed fp16 throughout. ORT's x86 CPU has no fp16 Conv: it computes those ops in float and drops
    the casts between them, so its intermediates keep float precision; chipfit rounds each intermediate to fp16
    as the model's types say. The outputs differ by one or two fp16 steps (2^-11 relative) on about a quarter
    of the values."""
    r = rng(5)
    w1 = numpy_helper.from_array((r.randn(8, 3, 3, 3) * 0.3).astype(np.float16), 'w1')
    b1 = numpy_helper.from_array((r.randn(8) * 0.1).astype(np.float16), 'b1')
    w2 = numpy_helper.from_array((r.randn(8, 8, 3, 3) * 0.2).astype(np.float16), 'w2')
    nodes = [helper.make_node('Conv', ['x', 'w1', 'b1'], ['c1'], pads=[1, 1, 1, 1], name='conv1'),
             helper.make_node('Relu', ['c1'], ['r1'], name='relu1'),
             helper.make_node('Conv', ['r1', 'w2'], ['c2'], pads=[1, 1, 1, 1], name='conv2'),
             helper.make_node('Add', ['c2', 'r1'], ['a'], name='residual'),
             helper.make_node('Sigmoid', ['a'], ['y'], name='sigmoid')]
    return model(nodes, [vi('x', TensorProto.FLOAT16, [1, 3, 32, 32])], [vi('y', TensorProto.FLOAT16, [1, 8, 32, 32])],
                 [w1, b1, w2])


def main():
    out = out_dir()
    save_case(out, 'fp16_convnet', fp16_convnet(), {'x': rng(6).randn(1, 3, 32, 32).astype(np.float16)},
              tolerance=2.5e-3, note='fp16 intermediates rounded where ORT keeps float: two fp16 steps at most')
    x = rng(7).randn(2, 3, 10, 12).astype('float32')
    rois = np.array([[0, 0, 9, 9], [2.5, 1.5, 17, 13.5], [5, 5, 6, 6], [-2, 3, 30, 18]], dtype=np.float32)
    for opset in (13, 16, 17):
        for mode in ('avg', 'max'):
            save_case(out, 'roi_align_opset%d_%s' % (opset, mode), roi_align(opset, mode),
                      {'x': x, 'rois': rois, 'batch_indices': np.array([0, 1, 1, 0], dtype=np.int64)})
    c = 16
    m = nested_if(c)
    for sr, t in ((16000, 2), (8000, 1), (44100, 2), (44100, 1)):
        x = rng(t).randn(1, c, t).astype('float32')
        save_case(out, 'nested_if_sr%d_t%d' % (sr, t), m, {'x': x, 'sr': np.array(sr, dtype=np.int64)},
                  note='the branch not taken would fail if compiled for these shapes')


if __name__ == '__main__':
    main()
