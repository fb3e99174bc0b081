// Factories of the CPU kernels, one group per op file in devices/cpu/ops; listed in cpu_kernels.cpp.
#pragma once

#include "core/runtime/kernel.h"

namespace chipfit::cpu {

// conv_cpu.cpp: Conv and FusedConv (com.chipfit).
Result<std::unique_ptr<IKernel>> CreateConvF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateConvInt8(const KernelInit& init);

// --- elementwise, binary, softmax, normalisation, reductions (eltwise/binary/softmax/norm/reduce_cpu.cpp)

// --- pooling, MatMul/Gemm, Concat, ConvTranspose, Resize (pool/matmul/concat/conv_transpose/resize_cpu.cpp)
Result<std::unique_ptr<IKernel>> CreateMaxPoolF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateAveragePoolF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateGlobalMaxPoolF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateGlobalAveragePoolF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateMatMulF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateMatMulInt8(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateGemmF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateGemmInt8(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateConcatF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateConvTransposeF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateResizeF32(const KernelInit& init);

}  // namespace chipfit::cpu
