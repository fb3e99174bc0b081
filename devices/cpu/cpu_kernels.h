// The CPU device's kernel table (oneDNN and chipfit's own CPU code), for Compile's placement.
#pragma once

#include "core/runtime/kernel_table.h"

namespace chipfit {

// Every CPU kernel, best first per {op, precision}; built once, immutable afterwards.
const KernelTable& CpuKernels();

}  // namespace chipfit
