// Helpers shared by the elementwise-family OpenCL kernels (eltwise, pool, softmax, norm, reduce):
// the common refusals, work-group sizes for tree reductions and packing of small vector arguments.
// Implemented in eltwise_opencl.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/runtime/kernel.h"
#include "devices/opencl/opencl_runtime.h"

namespace chipfit::opencl::eltwise_util {

// The kernels index with 32-bit integers (cheaper on GPUs); larger tensors are refused.
inline constexpr int64_t kMaxElements = int64_t{1} << 31;
// The reduction kernels keep one float per work item in local memory: __local float[256].
inline constexpr size_t kMaxReductionGroup = 256;

// The OpenCL context of `init`, or Unsupported when there is none, when any input or output shape
// is known only at run time, or when one of `float_inputs` is missing, empty, too large or not f32.
Result<ocl::OpenClContext*> RequireStaticF32(const KernelInit& init, std::initializer_list<size_t> float_inputs);

inline size_t RoundUp(size_t n, size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// A power-of-two work-group size, at most `want` and kMaxReductionGroup, that `kernel` runs with
// on this device (tree reductions halve the group each step).
size_t ReductionGroup(ocl::OpenClContext& ctx, const cl::Kernel& kernel, size_t want);

// The smallest power of two >= n (1 for n <= 1).
size_t NextPowerOfTwo(size_t n);

// A device buffer as a kernel argument. ocl::SetArgs(kernel, what, ocl::Mem(buffer)) hands a raw
// cl_mem to cl::Kernel::setArg, which the C++ bindings (CL 2.0+) take for an SVM pointer
// (clSetKernelArgSVMPointer: POCL then corrupts memory); a retained cl::Memory goes through
// clSetKernelArg.
inline cl::Memory MemArg(const DeviceBuffer& buffer) { return cl::Memory(ocl::Mem(buffer), true); }

// Up to 8 values as a uint8 argument (missing lanes 0).
cl_uint8 PackU8(const std::vector<int64_t>& values);
cl_int4 PackI4(const std::vector<int64_t>& values);

}  // namespace chipfit::opencl::eltwise_util
