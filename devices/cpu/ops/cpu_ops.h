// Factories of the CPU kernels, one group per op file in devices/cpu/ops; listed in cpu_kernels.cpp.
#pragma once

#include "core/runtime/kernel.h"

namespace chipfit::cpu {

// conv_cpu.cpp: Conv and FusedConv (com.chipfit).
Result<std::unique_ptr<IKernel>> CreateConvF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateConvInt8(const KernelInit& init);

// --- elementwise, binary, softmax, normalisation, reductions (eltwise/binary/softmax/norm/reduce_cpu.cpp)

// --- pooling, MatMul/Gemm, Concat, ConvTranspose, Resize (pool/matmul/concat/conv_transpose/resize_cpu.cpp)

}  // namespace chipfit::cpu
