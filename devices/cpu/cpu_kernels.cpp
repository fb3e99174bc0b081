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

  return t;
}

}  // namespace

const KernelTable& CpuKernels() {
  static const KernelTable table = BuildTable();
  return table;
}

}  // namespace chipfit
