"""Cases for contrib_nn.cpp: the Gelu family, BiasAdd, FusedMatMul, FusedConv and the layer norms."""
from onnx import TensorProto, helper

from common import MS, model, out_dir, rng, save_case


def main():
    out = out_dir()
    x = rng(1).randn(2, 5, 16).astype('float32') * 2
    vi = helper.make_tensor_value_info
    m = model([helper.make_node('Gelu', ['x'], ['y'], domain=MS, name='gelu')],
              [vi('x', TensorProto.FLOAT, [2, 5, 16])], [vi('y', TensorProto.FLOAT, [2, 5, 16])])
    save_case(out, 'gelu', m, {'x': x})


if __name__ == '__main__':
    main()
