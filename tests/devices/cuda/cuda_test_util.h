// The CUDA kernel tests' helpers: cuda:0's context per precision over device_kernel_test_util.h, and
// the skip every GPU test starts with.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "devices/cuda/cuda_runtime.h"
#include "tests/devices/device_kernel_test_util.h"

namespace chipfit::testing {

// Skips the test (with the CUDA error) when no GPU can be opened: CI has the toolkit but no GPU.
#define CHIPFIT_REQUIRE_CUDA()                                                                       \
  do {                                                                                               \
    auto opened = ::chipfit::cuda::CudaRuntime::Get(0);                                              \
    if (!opened.ok()) GTEST_SKIP() << "no CUDA GPU on this machine: " << opened.status().ToString(); \
  } while (0)

// A context of cuda:0 for a precision.
inline Result<std::shared_ptr<cuda::CudaContext>> CudaTestContext(Precision precision) {
  ASSIGN_OR_RETURN(auto runtime, cuda::CudaRuntime::Get(0));
  return cuda::CudaContext::Create(runtime, precision);
}

inline Result<std::vector<Tensor>> RunCudaKernel(KernelFactory factory, const DeviceCase& c) {
  ASSIGN_OR_RETURN(auto context, CudaTestContext(c.precision));
  return RunDeviceKernel(factory, c, context);
}

// Checks one case on fp32 (max rel error ≤ rtol), on fp16 storage (NMSE ≤ nmse16) and on bf16 storage
// (NMSE ≤ 64 × nmse16: 3 fewer mantissa bits give about 8 times the rounding error, 64 times in NMSE).
inline void ExpectCudaMatchesReference(KernelFactory factory, DeviceCase c, double rtol = 1e-4, double nmse16 = 1e-5) {
  ExpectMatchesReferenceOn(factory, c, CudaTestContext, {Precision::kFp32, Precision::kFp16}, rtol, nmse16);
  ExpectMatchesReferenceOn(factory, std::move(c), CudaTestContext, {Precision::kBf16}, rtol, nmse16 * 64);
}

}  // namespace chipfit::testing
