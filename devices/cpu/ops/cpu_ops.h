// Factories of the CPU kernels, one group per op file in devices/cpu/ops; listed in cpu_kernels.cpp.
#pragma once

#include "core/runtime/kernel.h"

namespace chipfit::cpu {

// conv_cpu.cpp: Conv and FusedConv (com.chipfit). fp32 runs 3x3 stride-1 layers through oneDNN's Winograd
// kernels where they measure clearly faster at compile time, every other layer as a direct convolution.
Result<std::unique_ptr<IKernel>> CreateConvF32(const KernelInit& init);
// The Winograd kernel alone, taken without timing it (tests: its results, its refusals): Unsupported with the
// reason where the layer or oneDNN cannot take it. Never in the kernel table.
Result<std::unique_ptr<IKernel>> CreateConvWinogradForTest(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateConvInt8(const KernelInit& init);
// bf16: the input is rounded to bf16 before each run, weights once; accumulation and the output
// stay f32 (the output feeds fp32 kernels as is). Refuses oneDNN's reference implementation, which
// is all oneDNN 2.6 has for bf16 below AVX-512.
Result<std::unique_ptr<IKernel>> CreateConvBf16(const KernelInit& init);
// The same, accepting oneDNN's reference implementation: lets tests check the bf16 path on CPUs
// without AVX-512. Never in the kernel table.
Result<std::unique_ptr<IKernel>> CreateConvBf16ForTest(const KernelInit& init);

// reshape_cpu.cpp: Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout (a copy), Transpose.
Result<std::unique_ptr<IKernel>> CreateCopy(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateTranspose(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateChannelShuffle(const KernelInit& init);

// index_copy_cpu.cpp: Pad (constant, edge, reflect, wrap) and Slice with constant pads/starts…, any
// fixed-size dtype: a copy driven by the reference's index maps.
Result<std::unique_ptr<IKernel>> CreatePad(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateSlice(const KernelInit& init);

// rnn_cpu.cpp: LSTM, GRU, RNN on oneDNN's RNN primitives. bf16 rounds X, the states and the weights to
// bf16; the gates accumulate in f32 and the outputs stay f32.
Result<std::unique_ptr<IKernel>> CreateLstmF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateGruF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateRnnF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateLstmBf16(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateGruBf16(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateRnnBf16(const KernelInit& init);

// --- elementwise, binary, softmax, normalisation, reductions (eltwise/binary/softmax/norm/reduce_cpu.cpp)
// Most ops have three implementations, tried in this order: an own loop for tensors too small to
// pay for a oneDNN call ("Small"), oneDNN, and the own loop at any size for what oneDNN refuses.
Result<std::unique_ptr<IKernel>> CreateEltwiseSmallF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateEltwiseF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateEltwiseOwnF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateBinarySmallF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateBinaryF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateBinaryOwnF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreatePowScalarF32(const KernelInit& init);  // oneDNN eltwise x^c
Result<std::unique_ptr<IKernel>> CreateSoftmaxF32(const KernelInit& init);    // Softmax, LogSoftmax
Result<std::unique_ptr<IKernel>> CreateStridedSoftmaxF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateBatchNormF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateLayerNormF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateInstanceNormF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateReduceSmallF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateReduceF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateReduceOwnF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateReduceInt(const KernelInit& init);  // int64 / int32 Sum, Min, Max, Prod

// --- pooling, MatMul/Gemm, Concat, ConvTranspose, Resize (pool/matmul/concat/conv_transpose/resize_cpu.cpp)
Result<std::unique_ptr<IKernel>> CreateMaxPoolF32(const KernelInit& init);
// MaxPool as an own loop over plain planes: dilations, the Indices output, f64, u8 and i8 inputs.
Result<std::unique_ptr<IKernel>> CreatePlainMaxPool(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateAveragePoolF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateGlobalMaxPoolF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateGlobalAveragePoolF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateMatMulF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateMatMulBf16(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateMatMulInt8(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateGemmF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateGemmBf16(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateGemmInt8(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateConcatF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateConvTransposeF32(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateConvTransposeInt8(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateResizeF32(const KernelInit& init);

// --- quantized-model ops (quant_cpu.cpp): integer in, integer out, so listed under every precision.
Result<std::unique_ptr<IKernel>> CreateQLinearConv(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateConvInteger(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateQLinearMatMul(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateMatMulInteger(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateQuantizeLinear(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateDequantizeLinear(const KernelInit& init);
Result<std::unique_ptr<IKernel>> CreateDynamicQuantizeLinear(const KernelInit& init);

}  // namespace chipfit::cpu
