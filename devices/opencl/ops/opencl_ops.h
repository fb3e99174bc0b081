// Factories of the OpenCL kernels, one group per op family file (ops/<family>_opencl.cpp).
// Every factory refuses with a reason a user can read; KernelInit::device is an OpenClContext.
#pragma once

#include "core/runtime/kernel.h"

namespace chipfit::opencl {

// ---- gemm_opencl.cpp, conv_opencl.cpp, conv_transpose_opencl.cpp (GEMM family)
// GEMM-FAMILY-DECLARATIONS

// ---- eltwise_opencl.cpp, pool_opencl.cpp, softmax_opencl.cpp, norm_opencl.cpp, reduce_opencl.cpp
// ELTWISE-FAMILY-DECLARATIONS

// ---- copy_opencl.cpp, concat_opencl.cpp, slice_opencl.cpp, transpose_opencl.cpp, gather_opencl.cpp,
//      resize_opencl.cpp, pad_opencl.cpp (data movement)
// DATA-FAMILY-DECLARATIONS

}  // namespace chipfit::opencl
