// The CUDA device's kernel table, for Compile's placement.
#pragma once

#include <string>
#include <vector>

#include "core/runtime/kernel_table.h"

namespace chipfit {

// Every CUDA kernel, best first per {op, precision}. Built once, immutable afterwards.
const KernelTable& CudaKernels();

// The ops the CUDA table serves (each for fp32, tf32, fp16, bf16 and int8), in table order.
std::vector<std::string> CudaKernelOps();

}  // namespace chipfit
