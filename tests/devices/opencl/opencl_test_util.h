// The OpenCL kernel tests' helpers: opencl:0's context per precision over device_kernel_test_util.h.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "devices/opencl/opencl_runtime.h"
#include "tests/devices/device_kernel_test_util.h"

namespace chipfit::testing {

// Skips the test (with the reason) when no OpenCL device can be opened; CI always has POCL.
#define CHIPFIT_REQUIRE_OPENCL()                                                          \
  do {                                                                                    \
    auto opened = ::chipfit::ocl::OpenClRuntime::Get(0);                                  \
    if (!opened.ok()) GTEST_SKIP() << "no OpenCL device: " << opened.status().ToString(); \
  } while (0)

using OpenClCase = DeviceCase;

// The context of opencl:0 for a precision, shared by the tests of one process.
inline Result<std::shared_ptr<ocl::OpenClContext>> TestContext(Precision precision) {
  ASSIGN_OR_RETURN(auto runtime, ocl::OpenClRuntime::Get(0));
  return std::make_shared<ocl::OpenClContext>(runtime, precision);
}

inline Result<std::vector<Tensor>> RunOpenClKernel(KernelFactory factory, const OpenClCase& c) {
  ASSIGN_OR_RETURN(auto context, TestContext(c.precision));
  return RunDeviceKernel(factory, c, context);
}

// Checks one case on fp32 (max rel error ≤ rtol) and fp16 storage (NMSE ≤ nmse16).
inline void ExpectMatchesReference(KernelFactory factory, OpenClCase c, double rtol = 1e-4, double nmse16 = 1e-5) {
  ExpectMatchesReferenceOn(factory, std::move(c), TestContext, {Precision::kFp32, Precision::kFp16}, rtol, nmse16);
}

}  // namespace chipfit::testing
