// Factories of the OpenCL kernels, one group per op family file (ops/<family>_opencl.cpp).
// Every factory refuses with a reason a user can read; KernelInit::device is an OpenClContext.
#pragma once

#include "core/runtime/kernel.h"

namespace chipfit::opencl {

// ---- gemm_opencl.cpp, conv_opencl.cpp, conv_transpose_opencl.cpp (GEMM family)
Result<std::unique_ptr<IKernel>> CreateMatMul(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateGemm(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateConv(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateFusedConv(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateConvTranspose(const KernelInit& init);

// ---- eltwise_opencl.cpp, pool_opencl.cpp, softmax_opencl.cpp, norm_opencl.cpp, reduce_opencl.cpp
// Unary activations and math (one kernel, the function a build option): Relu … ThresholdedRelu,
// Clip with constant bounds, Pow with a constant one-value exponent (via CreateBinary).
Result<std::unique_ptr<IKernel>> CreateUnary(const KernelInit& init);
// Broadcasting Add, Sub, Mul, Div, Pow, PRelu.
Result<std::unique_ptr<IKernel>> CreateBinary(const KernelInit& init);
// Sum, Mean, Max, Min of 1 to 8 broadcast inputs.
Result<std::unique_ptr<IKernel>> CreateVariadic(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateWhere(const KernelInit& init);
// MaxPool (no Indices output), AveragePool: 1-D to 3-D windows; the global pools.
Result<std::unique_ptr<IKernel>> CreateMaxPool(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateAveragePool(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateGlobalMaxPool(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateGlobalAveragePool(const KernelInit& init);
// Softmax and LogSoftmax along any axis (opset < 13: coerced to 2-D at the axis).
Result<std::unique_ptr<IKernel>> CreateSoftmax(const KernelInit& init);
// LayerNormalization (output Y only), InstanceNormalization, inference BatchNormalization.
Result<std::unique_ptr<IKernel>> CreateLayerNorm(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateInstanceNorm(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateBatchNorm(const KernelInit& init);
// ReduceSum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp.
Result<std::unique_ptr<IKernel>> CreateReduce(const KernelInit& init);

// ---- copy_opencl.cpp, concat_opencl.cpp, slice_opencl.cpp, transpose_opencl.cpp, gather_opencl.cpp,
//      resize_opencl.cpp, pad_opencl.cpp (data movement)
// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout (inference): a device copy.
Result<std::unique_ptr<IKernel>> CreateCopy(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateConcat(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateSlice(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateSplit(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateTranspose(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateGather(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateExpand(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateTile(const KernelInit& init);
// Resize and Upsample: nearest and linear.
Result<std::unique_ptr<IKernel>> CreateResize(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreatePad(const KernelInit& init);

// ---- cast_opencl.cpp, compare_opencl.cpp, argmax_opencl.cpp
// Cast and CastLike between f32, f16, bool and the integer types up to i64 (not u64, f64, bf16).
Result<std::unique_ptr<IKernel>> CreateCast(const KernelInit& init);
// Broadcasting Equal, Less, Greater, LessOrEqual, GreaterOrEqual: f32/f16/integer/bool inputs.
Result<std::unique_ptr<IKernel>> CreateCompare(const KernelInit& init);
// Not, And, Or, Xor on bool.
Result<std::unique_ptr<IKernel>> CreateLogical(const KernelInit& init);
// IsNaN, IsInf (detect_positive, detect_negative) on f32/f16.
Result<std::unique_ptr<IKernel>> CreateIsNaNOrInf(const KernelInit& init);
// ArgMax and ArgMin on f32, f16, i32, i64.
Result<std::unique_ptr<IKernel>> CreateArgMax(const KernelInit& init);
// OK where init's OpenCL device has 64-bit integers (every full-profile device), else Unsupported.
Status RequireInt64(const KernelInit& init);

}  // namespace chipfit::opencl
