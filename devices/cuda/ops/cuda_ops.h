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
// What RequireStaticContext checks of the shapes, without needing a context, plus the 32-bit index limit
// of the own kernels (2^31 or more values is refused): factories run it first, so that a plan is made,
// and refused, alike with and without a GPU.
Status CheckStaticShapes(const KernelInit& init);
// The dtype a value is stored in on the context of `init` (f16 for f32 under fp16); the dtype itself
// without a context (plans made without a GPU refuse alike: storage changes only the element size).
DType StorageOf(const KernelInit& init, DType dtype);

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

// ---- conv_cuda.cpp (cuDNN 9; depthwise.cu): Conv, FusedConv.
// 1-D and 2-D; depthwise layers on an own direct kernel, the rest on cuDNN (fused bias/Relu where cuDNN
// takes it, else an own epilogue kernel). 3-D and int8 are refused.
Result<std::unique_ptr<IKernel>> CreateConv(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateFusedConv(const KernelInit& init);

// ---- data_cuda.cpp (data.cu): pooling, resize and data movement.
// MaxPool, AveragePool (1-D to 3-D windows); GlobalMaxPool and GlobalAveragePool.
Result<std::unique_ptr<IKernel>> CreateMaxPool(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateAveragePool(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateGlobalPool(const KernelInit& init);
// Resize and Upsample: nearest (any dtype) and n-linear (float) with constant scales/sizes/roi.
Result<std::unique_ptr<IKernel>> CreateResize(const KernelInit& init);
// Strided copies of any dtype: Transpose, Concat, Slice (constant starts/axes/steps).
Result<std::unique_ptr<IKernel>> CreateTranspose(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateConcat(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateSlice(const KernelInit& init);
// Gather (constant or device int32/int64 indices) and Pad (constant/edge/reflect/wrap, constant pads).
Result<std::unique_ptr<IKernel>> CreateGather(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreatePad(const KernelInit& init);

}  // namespace chipfit::cuda
