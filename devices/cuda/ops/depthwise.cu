// Device code of the conv family besides cuDNN: a direct depthwise convolution with the whole FusedConv
// epilogue, the epilogue alone (run in place after cuDNN for what cuDNN's fused path does not take) and the
// explicit padding of an asymmetrically padded input.
//
// Depthwise layers (MobileNet, EfficientNet) do not go to cuDNN: on NCHW tensors cuDNN runs a grouped
// convolution with one channel per group as that many tiny GEMMs (or a slow generic kernel), several times
// slower than reading each 3x3 window directly. Every thread here computes one output element in float.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "devices/cuda/ops/depthwise_launch.h"
#include "devices/cuda/ops/device_util.cuh"

namespace chipfit::cuda::conv {
namespace {

// Comparisons rather than fminf/fmaxf, which drop a NaN (the reference keeps it).
__device__ __forceinline__ float Clamp01(float v) {
  v = v < 0.0f ? 0.0f : v;
  return v > 1.0f ? 1.0f : v;
}

// The same formulas as the reference FusedConv (and the eltwise kernels).
__device__ __forceinline__ float Activate(float x, const Epilogue& e) {
  switch (e.act) {
    case Act::kNone: return x;
    case Act::kRelu: return x < 0.0f ? 0.0f : x;
    case Act::kClip: {
      const float v = x < e.a ? e.a : x;
      return v > e.b ? e.b : v;
    }
    case Act::kLeakyRelu: return x < 0.0f ? e.a * x : x;
    case Act::kHardSigmoid: return Clamp01(e.a * x + e.b);
    case Act::kHardSwish: return x * Clamp01(x / 6.0f + 0.5f);
    case Act::kSigmoid: return 1.0f / (1.0f + expf(-x));
    case Act::kTanh: return tanhf(x);
  }
  return x;
}

__device__ __forceinline__ float Finish(float v, const Epilogue& e) {
  v = Activate(v, e);
  if (e.clamp && !isnan(v)) {
    v = v < e.lo ? e.lo : v;
    v = v > e.hi ? e.hi : v;
  }
  if (e.linear) v = v * e.scale + e.shift;
  return v;
}

__device__ __forceinline__ uint32_t ZOffset(const ZWalk& zw, uint32_t i, uint32_t n, uint32_t m, uint32_t h,
                                            uint32_t w) {
  return zw.full ? i : n * zw.stride[0] + m * zw.stride[1] + h * zw.stride[2] + w * zw.stride[3];
}

// KH, KW > 0: the filter size known at compile time (loops unrolled); 0: read from the arguments.
template <typename T, int KH, int KW>
__global__ void DepthwiseKernel(DepthwiseArgs a, Epilogue e) {
  const T* __restrict__ x = static_cast<const T*>(a.x);
  const T* __restrict__ w = static_cast<const T*>(a.w);
  const T* bias = static_cast<const T*>(a.bias);
  const T* z = static_cast<const T*>(a.z);
  T* __restrict__ y = static_cast<T*>(a.y);
  const int kh = KH > 0 ? KH : static_cast<int>(a.kh);
  const int kw = KW > 0 ? KW : static_cast<int>(a.kw);
  const int ih = static_cast<int>(a.ih), iw = static_cast<int>(a.iw);
  for (uint32_t i = FirstIndex(); i < a.total; i += GridSize()) {
    const uint32_t ow = i % a.ow;
    const uint32_t rest = i / a.ow;
    const uint32_t oh = rest % a.oh;
    const uint32_t nc = rest / a.oh;
    const uint32_t c = nc % a.c;
    const T* xp = x + static_cast<size_t>(nc) * a.ih * a.iw;
    const T* wp = w + static_cast<size_t>(c) * kh * kw;
    const int y0 = static_cast<int>(oh * a.sh) - a.ph;
    const int x0 = static_cast<int>(ow * a.sw) - a.pw;
    float acc = bias != nullptr ? Io<T>::Load(bias[c]) : 0.0f;
#pragma unroll
    for (int r = 0; r < kh; ++r) {  // a constant trip count when KH > 0: unrolled
      const int yy = y0 + r * static_cast<int>(a.dh);
      if (yy < 0 || yy >= ih) continue;
#pragma unroll
      for (int s = 0; s < kw; ++s) {
        const int xx = x0 + s * static_cast<int>(a.dw);
        if (xx < 0 || xx >= iw) continue;
        acc += Io<T>::Load(xp[yy * iw + xx]) * Io<T>::Load(wp[r * kw + s]);
      }
    }
    if (z != nullptr) acc += Io<T>::Load(z[ZOffset(a.zw, i, nc / a.c, c, oh, ow)]);
    y[i] = Io<T>::Store(Finish(acc, e));
  }
}

template <typename T>
__global__ void EpilogueKernel(EpilogueArgs a, Epilogue e) {  // in place on Y
  T* y = static_cast<T*>(a.y);
  const T* bias = static_cast<const T*>(a.bias);
  const T* z = static_cast<const T*>(a.z);
  const uint32_t plane = a.oh * a.ow;
  for (uint32_t i = FirstIndex(); i < a.total; i += GridSize()) {
    float v = Io<T>::Load(y[i]);
    const uint32_t nm = i / plane;
    const uint32_t m = nm % a.m;
    if (bias != nullptr) v += Io<T>::Load(bias[m]);
    if (z != nullptr) {
      const uint32_t hw = i % plane;
      v += Io<T>::Load(z[ZOffset(a.zw, i, nm / a.m, m, hw / a.ow, hw % a.ow)]);
    }
    y[i] = Io<T>::Store(Finish(v, e));
  }
}

template <typename E>  // an unsigned integer of the element size: padding copies bits
__global__ void PadKernel(PadArgs a) {
  const E* src = static_cast<const E*>(a.src);
  E* dst = static_cast<E*>(a.dst);
  for (uint32_t i = FirstIndex(); i < a.total; i += GridSize()) {
    const uint32_t col = i % a.pw;
    const uint32_t rest = i / a.pw;
    const uint32_t row = rest % a.ph;
    const uint32_t plane = rest / a.ph;
    const int sr = static_cast<int>(row) - static_cast<int>(a.top);
    const int sc = static_cast<int>(col) - static_cast<int>(a.left);
    const bool inside = sr >= 0 && sr < static_cast<int>(a.ih) && sc >= 0 && sc < static_cast<int>(a.iw);
    dst[i] = inside ? src[(static_cast<size_t>(plane) * a.ih + sr) * a.iw + sc] : E{0};
  }
}

template <typename Fn>
cudaError_t Dispatch(Store store, Fn&& fn) {
  switch (store) {
    case Store::kF32: return fn(float{});
    case Store::kF16: return fn(__half{});
    case Store::kBF16: return fn(__nv_bfloat16{});
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t LaunchDepthwise(Store store, const DepthwiseArgs& args, const Epilogue& epilogue, uint32_t grid,
                            uint32_t block, cudaStream_t stream) {
  if (args.total == 0) return cudaSuccess;
  return Dispatch(store, [&](auto tag) {
    using T = decltype(tag);
    if (args.kh == 3 && args.kw == 3) {
      DepthwiseKernel<T, 3, 3><<<grid, block, 0, stream>>>(args, epilogue);
    } else if (args.kh == 5 && args.kw == 5) {
      DepthwiseKernel<T, 5, 5><<<grid, block, 0, stream>>>(args, epilogue);
    } else {
      DepthwiseKernel<T, 0, 0><<<grid, block, 0, stream>>>(args, epilogue);
    }
    return cudaGetLastError();
  });
}

cudaError_t LaunchEpilogue(Store store, const EpilogueArgs& args, const Epilogue& epilogue, uint32_t grid,
                           uint32_t block, cudaStream_t stream) {
  if (args.total == 0) return cudaSuccess;
  return Dispatch(store, [&](auto tag) {
    using T = decltype(tag);
    EpilogueKernel<T><<<grid, block, 0, stream>>>(args, epilogue);
    return cudaGetLastError();
  });
}

cudaError_t LaunchPad(size_t element_bytes, const PadArgs& args, uint32_t grid, uint32_t block, cudaStream_t stream) {
  if (args.total == 0) return cudaSuccess;
  if (element_bytes == 2) {
    PadKernel<uint16_t><<<grid, block, 0, stream>>>(args);
  } else if (element_bytes == 4) {
    PadKernel<uint32_t><<<grid, block, 0, stream>>>(args);
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace chipfit::cuda::conv
