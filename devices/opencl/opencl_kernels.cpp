// The one explicit list of OpenCL kernels (STYLE.md: explicit tables, not self-registration).
// Every implementation is listed for fp32 and fp16: the storage type is a build option of the
// program, so one factory serves both.
#include "devices/opencl/opencl_kernels.h"

#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit {
namespace {

KernelTable BuildTable() {
  KernelTable t;
  [[maybe_unused]] auto add = [&t](const char* op, const char* domain, KernelImpl impl) {
    t.Add(op, domain, DeviceKind::kOpenCL, Precision::kFp32, impl);
    t.Add(op, domain, DeviceKind::kOpenCL, Precision::kFp16, impl);
  };
  [[maybe_unused]] const char* kFused = "com.chipfit";

  // ---- GEMM family
  // GEMM-FAMILY-TABLE

  // ---- elementwise, pooling, softmax, normalisation, reductions
  // ELTWISE-FAMILY-TABLE

  // ---- data movement
  // DATA-FAMILY-TABLE
  return t;
}

}  // namespace

const KernelTable& OpenClKernels() {
  static const KernelTable table = BuildTable();
  return table;
}

}  // namespace chipfit
