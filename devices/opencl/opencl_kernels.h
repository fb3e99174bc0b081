// The OpenCL device's kernel table, for Compile's placement.
#pragma once

#include "core/runtime/kernel_table.h"

namespace chipfit {

// Every OpenCL kernel, best first per {op, precision}; fp32 and fp16 share their implementations
// (storage type by build option). Built once, immutable afterwards.
const KernelTable& OpenClKernels();

}  // namespace chipfit
