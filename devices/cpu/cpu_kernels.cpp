// The one explicit list of CPU kernels (STYLE.md: explicit tables, not self-registration).
#include "devices/cpu/cpu_kernels.h"

#include "devices/cpu/ops/cpu_ops.h"
#include "devices/cpu/ops/kernel_groups.h"

namespace chipfit {
namespace {

KernelTable BuildTable() {
  KernelTable t;
  constexpr auto kCpu = DeviceKind::kCpu;
  constexpr auto kFp32 = Precision::kFp32;
  constexpr auto kInt8 = Precision::kInt8;
  const char* kFused = "com.chipfit";

  t.Add("Conv", "", kCpu, kFp32, {"onednn:conv", cpu::CreateConvF32});
  t.Add("FusedConv", kFused, kCpu, kFp32, {"onednn:conv", cpu::CreateConvF32});
  t.Add("Conv", "", kCpu, kInt8, {"onednn:conv:int8", cpu::CreateConvInt8});
  t.Add("FusedConv", kFused, kCpu, kInt8, {"onednn:conv:int8", cpu::CreateConvInt8});
  t.Add("Conv", "", kCpu, Precision::kBf16, {"onednn:conv:bf16", cpu::CreateConvBf16});
  t.Add("FusedConv", kFused, kCpu, Precision::kBf16, {"onednn:conv:bf16", cpu::CreateConvBf16});
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"}) {
    t.Add(op, "", kCpu, kFp32, {"cpu:copy", cpu::CreateCopy});
  }
  t.Add("Transpose", "", kCpu, kFp32, {"onednn:reorder", cpu::CreateTranspose});
  t.Add("ChannelShuffle", kFused, kCpu, kFp32, {"cpu:channel-shuffle", cpu::CreateChannelShuffle});
  t.Add("Pad", "", kCpu, kFp32, {"cpu:index-copy", cpu::CreatePad});
  t.Add("Slice", "", kCpu, kFp32, {"cpu:index-copy", cpu::CreateSlice});
  t.Add("LSTM", "", kCpu, kFp32, {"onednn:lstm", cpu::CreateLstmF32});
  t.Add("GRU", "", kCpu, kFp32, {"onednn:gru", cpu::CreateGruF32});
  t.Add("RNN", "", kCpu, kFp32, {"onednn:rnn", cpu::CreateRnnF32});
  t.Add("LSTM", "", kCpu, Precision::kBf16, {"onednn:lstm:bf16", cpu::CreateLstmBf16});
  t.Add("GRU", "", kCpu, Precision::kBf16, {"onednn:gru:bf16", cpu::CreateGruBf16});
  t.Add("RNN", "", kCpu, Precision::kBf16, {"onednn:rnn:bf16", cpu::CreateRnnBf16});
  // --- elementwise, binary, softmax, normalisation, reductions
  for (const char* op : {"Relu",     "LeakyRelu", "Clip",     "Sigmoid",        "HardSigmoid", "HardSwish",  "Tanh",
                         "Elu",      "Selu",      "Celu",     "Gelu",           "Exp",         "Log",        "Sqrt",
                         "Abs",      "Neg",       "Softplus", "Mish",           "Round",       "Reciprocal", "Erf",
                         "Softsign", "Floor",     "Ceil",     "ThresholdedRelu"}) {
    t.Add(op, "", kCpu, kFp32, {"cpu:eltwise-small", cpu::CreateEltwiseSmallF32});
    t.Add(op, "", kCpu, kFp32, {"onednn:eltwise", cpu::CreateEltwiseF32});
    t.Add(op, "", kCpu, kFp32, {"cpu:eltwise", cpu::CreateEltwiseOwnF32});
  }
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min", "Sum"}) {
    t.Add(op, "", kCpu, kFp32, {"cpu:binary-small", cpu::CreateBinarySmallF32});
    t.Add(op, "", kCpu, kFp32, {"onednn:binary", cpu::CreateBinaryF32});
    t.Add(op, "", kCpu, kFp32, {"cpu:binary", cpu::CreateBinaryOwnF32});
  }
  t.Add("Pow", "", kCpu, kFp32, {"cpu:binary-small", cpu::CreateBinarySmallF32});
  t.Add("Pow", "", kCpu, kFp32, {"onednn:eltwise", cpu::CreatePowScalarF32});
  t.Add("Pow", "", kCpu, kFp32, {"cpu:binary", cpu::CreateBinaryOwnF32});
  t.Add("Softmax", "", kCpu, kFp32, {"onednn:softmax", cpu::CreateSoftmaxF32});
  t.Add("LogSoftmax", "", kCpu, kFp32, {"onednn:softmax", cpu::CreateSoftmaxF32});
  t.Add("Softmax", "", kCpu, kFp32, {"cpu:softmax-axis", cpu::CreateStridedSoftmaxF32});
  t.Add("LogSoftmax", "", kCpu, kFp32, {"cpu:softmax-axis", cpu::CreateStridedSoftmaxF32});
  t.Add("BatchNormalization", "", kCpu, kFp32, {"onednn:bnorm", cpu::CreateBatchNormF32});
  t.Add("LayerNormalization", "", kCpu, kFp32, {"onednn:lnorm", cpu::CreateLayerNormF32});
  t.Add("InstanceNormalization", "", kCpu, kFp32, {"onednn:bnorm", cpu::CreateInstanceNormF32});
  for (const char* op :
       {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare"}) {
    t.Add(op, "", kCpu, kFp32, {"cpu:reduce-small", cpu::CreateReduceSmallF32});
    t.Add(op, "", kCpu, kFp32, {"onednn:reduction", cpu::CreateReduceF32});
    t.Add(op, "", kCpu, kFp32, {"cpu:reduce", cpu::CreateReduceOwnF32});
    t.Add(op, "", kCpu, kFp32, {"cpu:reduce-int", cpu::CreateReduceInt});
  }

  // --- pooling, MatMul/Gemm, Concat, ConvTranspose, Resize
  t.Add("MaxPool", "", kCpu, kFp32, {"onednn:pool", cpu::CreateMaxPoolF32});
  t.Add("MaxPool", "", kCpu, kFp32, {"cpu:maxpool", cpu::CreatePlainMaxPool});
  t.Add("AveragePool", "", kCpu, kFp32, {"onednn:pool", cpu::CreateAveragePoolF32});
  t.Add("GlobalMaxPool", "", kCpu, kFp32, {"onednn:pool", cpu::CreateGlobalMaxPoolF32});
  t.Add("GlobalAveragePool", "", kCpu, kFp32, {"onednn:pool", cpu::CreateGlobalAveragePoolF32});
  t.Add("MatMul", "", kCpu, kFp32, {"onednn:matmul", cpu::CreateMatMulF32});
  t.Add("MatMul", "", kCpu, kInt8, {"onednn:matmul:int8", cpu::CreateMatMulInt8});
  t.Add("MatMul", "", kCpu, Precision::kBf16, {"onednn:matmul:bf16", cpu::CreateMatMulBf16});
  t.Add("FusedMatMul", kFused, kCpu, kFp32, {"onednn:matmul", cpu::CreateMatMulF32});
  t.Add("FusedMatMul", kFused, kCpu, kInt8, {"onednn:matmul:int8", cpu::CreateMatMulInt8});
  t.Add("FusedMatMul", kFused, kCpu, Precision::kBf16, {"onednn:matmul:bf16", cpu::CreateMatMulBf16});
  t.Add("Gemm", "", kCpu, kFp32, {"onednn:gemm", cpu::CreateGemmF32});
  t.Add("Gemm", "", kCpu, Precision::kBf16, {"onednn:gemm:bf16", cpu::CreateGemmBf16});
  t.Add("Gemm", "", kCpu, kInt8, {"onednn:gemm:int8", cpu::CreateGemmInt8});
  t.Add("Concat", "", kCpu, kFp32, {"cpu:concat", cpu::CreateConcatF32});
  t.Add("ConvTranspose", "", kCpu, kFp32, {"onednn:deconv", cpu::CreateConvTransposeF32});
  t.Add("ConvTranspose", "", kCpu, kInt8, {"onednn:deconv:int8", cpu::CreateConvTransposeInt8});
  t.Add("Resize", "", kCpu, kFp32, {"onednn:resampling", cpu::CreateResizeF32});
  t.Add("Upsample", "", kCpu, kFp32, {"onednn:resampling", cpu::CreateResizeF32});

  // --- quantized models: the model fixes these ops' integer types, so every target runs them alike.
  for (Precision p : {kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16, kInt8}) {
    t.Add("QLinearConv", "", kCpu, p, {"onednn:qlinearconv", cpu::CreateQLinearConv});
    t.Add("ConvInteger", "", kCpu, p, {"onednn:convinteger", cpu::CreateConvInteger});
    t.Add("QLinearMatMul", "", kCpu, p, {"onednn:qlinearmatmul", cpu::CreateQLinearMatMul});
    t.Add("QLinearGemm", kFused, kCpu, p, {"onednn:qlinearmatmul", cpu::CreateQLinearMatMul});
    t.Add("MatMulInteger", "", kCpu, p, {"onednn:matmulinteger", cpu::CreateMatMulInteger});
    t.Add("QuantizeLinear", "", kCpu, p, {"cpu:quantize", cpu::CreateQuantizeLinear});
    t.Add("DequantizeLinear", "", kCpu, p, {"cpu:dequantize", cpu::CreateDequantizeLinear});
    t.Add("DynamicQuantizeLinear", "", kCpu, p, {"cpu:dynamic-quantize", cpu::CreateDynamicQuantizeLinear});
  }

  cpu::AddLogicKernels(t);
  cpu::AddIndexKernels(t);
  cpu::AddMathKernels(t);
  cpu::AddEinsumKernels(t);
  cpu::AddSamplingKernels(t);
  cpu::AddLossKernels(t);
  cpu::AddSelectKernels(t);
  cpu::AddSignalKernels(t);
  cpu::AddRoiKernels(t);
  cpu::AddTextKernels(t);
  cpu::AddContribNnKernels(t);
  cpu::AddContribAttentionKernels(t);
  cpu::AddContribQuantKernels(t);
  cpu::AddReferenceOnlyReasons(t);
  return t;
}

}  // namespace

const KernelTable& CpuKernels() {
  static const KernelTable table = BuildTable();
  return table;
}

}  // namespace chipfit
