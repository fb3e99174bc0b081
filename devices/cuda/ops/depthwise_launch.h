// What conv_cuda.cpp (the host side, C++20) and depthwise.cu (device code, C++17) share: the epilogue of a
// (Fused)Conv as a plain struct, the argument blocks and the launchers of the direct depthwise kernel, the
// epilogue kernel run after cuDNN and the explicit padding kernel. Kept free of project headers so that nvcc
// compiles it in C++17.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace chipfit::cuda::conv {

// Every index is 32-bit (64-bit divisions are emulated and several times slower).
constexpr int64_t kMaxElements = (int64_t{1} << 31) - 1;

// How the float tensors of one conv are stored (CudaContext::StorageType); kernels compute in float.
enum class Store : uint8_t { kF32, kF16, kBF16 };

// FusedConv's activations (core/graph/passes.h: FuseConvActivations).
enum class Act : uint8_t { kNone, kRelu, kClip, kLeakyRelu, kHardSigmoid, kHardSwish, kSigmoid, kTanh };

// Y = scale · clamp(act(conv + bias + Z), lo, hi) + shift, the order of the reference FusedConv.
struct Epilogue {
  Act act = Act::kNone;
  float a = 0.0f, b = 0.0f;  // Clip {min, max}, LeakyRelu {alpha}, HardSigmoid {alpha, beta}
  bool clamp = false;        // clamp_min / clamp_max absorbed after the activation (NaN passes)
  float lo = 0.0f, hi = 0.0f;
  bool linear = false;  // post_scale / post_shift
  float scale = 1.0f, shift = 0.0f;
};

// Where element (n, m, h, w) of the output [N, M, H, W] finds its residual Z: `full` when Z has the
// output's shape (offset = output index), else element strides per dim (0 where Z broadcasts).
struct ZWalk {
  bool full = true;
  uint32_t stride[4] = {};
};

// A direct depthwise convolution (group = C = M, one filter per channel) of X [N, C, IH, IW] with W
// [C, 1, KH, KW] into Y [N, C, OH, OW]; pads are the leading ones (trailing pads only bound the output).
struct DepthwiseArgs {
  const void* x = nullptr;
  const void* w = nullptr;
  const void* bias = nullptr;  // [C] or null
  const void* z = nullptr;     // residual or null
  void* y = nullptr;
  uint32_t total = 0;  // N·C·OH·OW
  uint32_t c = 1, ih = 1, iw = 1, oh = 1, ow = 1, kh = 1, kw = 1;
  uint32_t sh = 1, sw = 1, dh = 1, dw = 1;
  int32_t ph = 0, pw = 0;
  ZWalk zw;
};

// The epilogue run in place on Y [N, M, OH, OW] after cuDNN: bias, residual Z, activation, clamp, linear.
struct EpilogueArgs {
  void* y = nullptr;
  const void* bias = nullptr;  // [M] or null
  const void* z = nullptr;     // null when absent
  uint32_t total = 0;
  uint32_t m = 1, oh = 1, ow = 1;
  ZWalk zw;
};

// Copies `planes` planes of [IH, IW] into zeroed planes of [PH, PW] at (top, left): the explicit part of an
// asymmetric padding, which cuDNN's symmetric pads cannot express. `total` = planes·PH·PW.
struct PadArgs {
  const void* src = nullptr;
  void* dst = nullptr;
  uint32_t total = 0;
  uint32_t ih = 1, iw = 1, ph = 1, pw = 1, top = 0, left = 0;
};

// Launchers: the launch's own error (cudaGetLastError); cudaErrorInvalidValue for an element size the pad
// kernel does not copy. Depthwise kernels with 3x3 and 5x5 filters are unrolled, other sizes loop.
cudaError_t LaunchDepthwise(Store store, const DepthwiseArgs& args, const Epilogue& epilogue, uint32_t grid,
                            uint32_t block, cudaStream_t stream);
cudaError_t LaunchEpilogue(Store store, const EpilogueArgs& args, const Epilogue& epilogue, uint32_t grid,
                           uint32_t block, cudaStream_t stream);
cudaError_t LaunchPad(size_t element_bytes, const PadArgs& args, uint32_t grid, uint32_t block, cudaStream_t stream);

}  // namespace chipfit::cuda::conv
