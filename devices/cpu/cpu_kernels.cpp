// The one explicit list of CPU kernels (STYLE.md: explicit tables, not self-registration).
#include "devices/cpu/cpu_kernels.h"

#include "devices/cpu/ops/cpu_ops.h"

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
  // --- elementwise, binary, softmax, normalisation, reductions

  // --- pooling, MatMul/Gemm, Concat, ConvTranspose, Resize
  t.Add("MaxPool", "", kCpu, kFp32, {"onednn:pool", cpu::CreateMaxPoolF32});
  t.Add("AveragePool", "", kCpu, kFp32, {"onednn:pool", cpu::CreateAveragePoolF32});
  t.Add("GlobalMaxPool", "", kCpu, kFp32, {"onednn:pool", cpu::CreateGlobalMaxPoolF32});
  t.Add("GlobalAveragePool", "", kCpu, kFp32, {"onednn:pool", cpu::CreateGlobalAveragePoolF32});
  t.Add("MatMul", "", kCpu, kFp32, {"onednn:matmul", cpu::CreateMatMulF32});
  t.Add("MatMul", "", kCpu, kInt8, {"onednn:matmul:int8", cpu::CreateMatMulInt8});
  t.Add("Gemm", "", kCpu, kFp32, {"onednn:gemm", cpu::CreateGemmF32});
  t.Add("Gemm", "", kCpu, kInt8, {"onednn:gemm:int8", cpu::CreateGemmInt8});
  t.Add("Concat", "", kCpu, kFp32, {"onednn:concat", cpu::CreateConcatF32});
  t.Add("ConvTranspose", "", kCpu, kFp32, {"onednn:deconv", cpu::CreateConvTransposeF32});
  t.Add("Resize", "", kCpu, kFp32, {"onednn:resampling", cpu::CreateResizeF32});

  return t;
}

}  // namespace

const KernelTable& CpuKernels() {
  static const KernelTable table = BuildTable();
  return table;
}

}  // namespace chipfit
