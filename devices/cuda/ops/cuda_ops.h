// Factories of the CUDA kernels, one group per op family file (ops/<family>_cuda.cpp, whose device code
// is in ops/<family>.cu). Every factory refuses with a reason a user can read; KernelInit::device is a
// cuda::CudaContext.
#pragma once

#include "core/runtime/kernel.h"
#include "devices/cuda/cuda_runtime.h"

namespace chipfit::cuda {

// The CudaContext of `init`, or Unsupported when there is none or when any input or output shape is
// known only at run time (the CUDA kernels are planned at compile time).
Result<CudaContext*> RequireStaticContext(const KernelInit& init);

// ---- copy_cuda.cpp: Reshape, Flatten, Squeeze, Unsqueeze, Identity, inference Dropout (a device copy).
Result<std::unique_ptr<IKernel>> CreateCopy(const KernelInit& init);

// ---- eltwise_cuda.cpp (eltwise.cu): one n-ary broadcasting kernel for the elementwise family.
// Unary activations and math; Clip with constant bounds.
Result<std::unique_ptr<IKernel>> CreateUnary(const KernelInit& init);
// Broadcasting Add, Sub, Mul, Div, Pow, PRelu; Sum, Mean, Max, Min of up to 8 inputs; Where.
Result<std::unique_ptr<IKernel>> CreateBinary(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateVariadic(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateWhere(const KernelInit& init);
// Cast between f32, f16, bf16, bool and the integer types.
Result<std::unique_ptr<IKernel>> CreateCast(const KernelInit& init);

// ---- reduce_cuda.cpp (reduce.cu): softmax, reductions, normalisations.
Result<std::unique_ptr<IKernel>> CreateSoftmax(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateReduce(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateLayerNorm(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateInstanceNorm(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateBatchNorm(const KernelInit& init);

// ---- gemm_cuda.cpp (cuBLASLt): MatMul and Gemm with bias/relu/gelu epilogues.
Result<std::unique_ptr<IKernel>> CreateMatMul(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateGemm(const KernelInit& init);

}  // namespace chipfit::cuda
