"""Cases for the ONNX-domain quantized ops (DynamicQuantizeLinear, ConvInteger, MatMulInteger, QLinearConv,
QLinearMatMul, QuantizeLinear/DequantizeLinear) where ONNX Runtime's results are deterministic."""
from common import out_dir


def main():
    out_dir()


if __name__ == '__main__':
    main()
