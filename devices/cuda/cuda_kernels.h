// The CUDA device's kernel table, for Compile's placement, and the TensorRT-Engine-Explorer-style lint
// of channel counts that waste tensor-core tiles.
#pragma once

#include <string>
#include <vector>

#include "core/runtime/kernel_table.h"

namespace chipfit {

// Every CUDA kernel, best first per {op, precision}. Built once, immutable afterwards.
const KernelTable& CudaKernels();

// The ops the CUDA table serves (each for fp32, tf32, fp16, bf16 and int8), in table order.
std::vector<std::string> CudaKernelOps();

// Tensor cores take fp16/bf16 channels in multiples of 8 and int8 in multiples of 16; a convolution or
// matrix product with other channel counts pads its tiles (or leaves the tensor cores). The lint line
// for one layer, empty when its channels are aligned or the precision has no such rule (fp32, tf32).
std::string ChannelAlignmentLint(const std::string& layer, Precision precision, int64_t in_channels,
                                 int64_t out_channels);

}  // namespace chipfit
