// Device code of the pooling, resize and data-movement family: one strided copy per unit size (Transpose,
// Slice, Concat), Gather and Pad per element size (they move bits, so every dtype shares them), nearest
// Resize per element size, and the float kernels (windowed and global pooling, linear Resize) per
// float storage type. Float storage is computed in float. All indexing is 32-bit (the host refuses more).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "devices/cuda/ops/data_launch.h"
#include "devices/cuda/ops/device_util.cuh"

namespace chipfit::cuda::data {
namespace {

// ---- strided copy

// The walk's loops are unrolled to kMaxRank with guards so that its arrays stay in parameter space.
template <typename U>
__global__ void StridedCopyKernel(const StridedCopy p, const U* __restrict__ src, U* __restrict__ dst) {
  for (uint32_t i = FirstIndex(); i < p.numel; i += GridSize()) {
    uint32_t rest = i;
    int32_t s = 0, d = 0;
#pragma unroll
    for (int k = kMaxRank - 1; k > 0; --k) {
      if (k < p.rank) {
        const uint32_t q = rest / p.dims[k];
        const auto c = static_cast<int32_t>(rest - q * p.dims[k]);
        rest = q;
        s += c * p.src_strides[k];
        d += c * p.dst_strides[k];
      }
    }
    s += static_cast<int32_t>(rest) * p.src_strides[0];
    d += static_cast<int32_t>(rest) * p.dst_strides[0];
    dst[d] = src[s];
  }
}

template <typename U>
cudaError_t StridedCopyAs(const StridedCopy& p, const void* src, void* dst, uint32_t grid, uint32_t block,
                          cudaStream_t stream) {
  StridedCopyKernel<U>
      <<<grid, block, 0, stream>>>(p, static_cast<const U*>(src) + p.src_offset, static_cast<U*>(dst) + p.dst_offset);
  return cudaGetLastError();
}

// ---- pooling

template <typename T, PoolKind K>
__global__ void PoolKernel(const PoolWindow w, const T* __restrict__ x, T* __restrict__ y) {
  const uint32_t in_plane = static_cast<uint32_t>(w.in[0] * w.in[1] * w.in[2]);
  for (uint32_t i = FirstIndex(); i < w.numel; i += GridSize()) {
    uint32_t r = i;
    const auto ow = static_cast<int32_t>(r % static_cast<uint32_t>(w.out[2]));
    r /= static_cast<uint32_t>(w.out[2]);
    const auto oh = static_cast<int32_t>(r % static_cast<uint32_t>(w.out[1]));
    r /= static_cast<uint32_t>(w.out[1]);
    const auto od = static_cast<int32_t>(r % static_cast<uint32_t>(w.out[0]));
    const uint32_t plane = r / static_cast<uint32_t>(w.out[0]);
    const T* xp = x + static_cast<size_t>(plane) * in_plane;
    const int32_t sd = od * w.strides[0] - w.pad_begin[0];
    const int32_t sh = oh * w.strides[1] - w.pad_begin[1];
    const int32_t sw = ow * w.strides[2] - w.pad_begin[2];
    float acc = 0.0f;
    int32_t found = 0;
    for (int32_t kd = 0; kd < w.kernel[0]; ++kd) {
      const int32_t pd = sd + kd * w.dilations[0];
      if (pd < 0 || pd >= w.in[0]) continue;
      for (int32_t kh = 0; kh < w.kernel[1]; ++kh) {
        const int32_t ph = sh + kh * w.dilations[1];
        if (ph < 0 || ph >= w.in[1]) continue;
        const int32_t row = (pd * w.in[1] + ph) * w.in[2];
        for (int32_t kw = 0; kw < w.kernel[2]; ++kw) {
          const int32_t pw = sw + kw * w.dilations[2];
          if (pw < 0 || pw >= w.in[2]) continue;
          const float v = Io<T>::Load(xp[row + pw]);
          if constexpr (K == PoolKind::kMax) {
            if (found == 0 || v > acc) acc = v;  // the reference's order: a later NaN never wins
          } else {
            acc += v;
          }
          ++found;
        }
      }
    }
    if constexpr (K == PoolKind::kMax) {
      y[i] = Io<T>::Store(found != 0 ? acc : __int_as_float(0x7fc00000));  // wholly on padding: NaN
    } else {
      int32_t count = found;
      if (w.include_pad != 0) {
        // Taps on explicit or auto padding count; taps past the end padding (ceil_mode) do not.
        count = 1;
        const int32_t starts[3] = {sd, sh, sw};
#pragma unroll
        for (int a = 0; a < 3; ++a) {
          int32_t n = 0;
          for (int32_t k = 0; k < w.kernel[a]; ++k) n += starts[a] + k * w.dilations[a] < w.in[a] + w.pad_end[a];
          count *= n;
        }
      }
      y[i] = Io<T>::Store(acc / static_cast<float>(count));
    }
  }
}

// One warp per plane: lanes stride over the plane, then a shuffle tree. Max ignores NaN in the tree
// and then takes the plane's first value if that is NaN: the reference's sequential rule exactly.
template <typename T, PoolKind K>
__global__ void GlobalPoolKernel(uint32_t planes, uint32_t plane, const T* __restrict__ x, T* __restrict__ y) {
  const uint32_t warps = blockDim.x / 32;
  const uint32_t lane = threadIdx.x & 31u;
  for (uint32_t p = blockIdx.x * warps + threadIdx.x / 32; p < planes; p += gridDim.x * warps) {
    const T* xp = x + static_cast<size_t>(p) * plane;
    float acc = K == PoolKind::kMax ? -__int_as_float(0x7f800000) : 0.0f;
    for (uint32_t j = lane; j < plane; j += 32) {
      const float v = Io<T>::Load(xp[j]);
      acc = K == PoolKind::kMax ? fmaxf(acc, v) : acc + v;
    }
#pragma unroll
    for (int off = 16; off > 0; off /= 2) {
      const float o = __shfl_xor_sync(0xffffffffu, acc, off);
      acc = K == PoolKind::kMax ? fmaxf(acc, o) : acc + o;
    }
    if (lane == 0) {
      if constexpr (K == PoolKind::kMax) {
        const float first = Io<T>::Load(xp[0]);
        if (isnan(first)) acc = first;
      } else {
        acc /= static_cast<float>(plane);
      }
      y[p] = Io<T>::Store(acc);
    }
  }
}

template <typename T>
cudaError_t PoolAs(PoolKind kind, const PoolWindow& w, const void* x, void* y, uint32_t grid, uint32_t block,
                   cudaStream_t stream) {
  const auto* xs = static_cast<const T*>(x);
  auto* ys = static_cast<T*>(y);
  if (kind == PoolKind::kMax) {
    PoolKernel<T, PoolKind::kMax><<<grid, block, 0, stream>>>(w, xs, ys);
  } else {
    PoolKernel<T, PoolKind::kAverage><<<grid, block, 0, stream>>>(w, xs, ys);
  }
  return cudaGetLastError();
}

template <typename T>
cudaError_t GlobalPoolAs(PoolKind kind, uint32_t planes, uint32_t plane, const void* x, void* y, uint32_t grid,
                         uint32_t block, cudaStream_t stream) {
  const auto* xs = static_cast<const T*>(x);
  auto* ys = static_cast<T*>(y);
  if (kind == PoolKind::kMax) {
    GlobalPoolKernel<T, PoolKind::kMax><<<grid, block, 0, stream>>>(planes, plane, xs, ys);
  } else {
    GlobalPoolKernel<T, PoolKind::kAverage><<<grid, block, 0, stream>>>(planes, plane, xs, ys);
  }
  return cudaGetLastError();
}

// ---- resize

// Coordinate of output index i along dim k (k > 0 divides; dim 0 takes the rest).
template <typename U>
__global__ void ResizeNearestKernel(const ResizeWalk w, const ResizeTap* __restrict__ taps, U fill,
                                    const U* __restrict__ x, U* __restrict__ y) {
  for (uint32_t i = FirstIndex(); i < w.numel; i += GridSize()) {
    uint32_t rest = i;
    int32_t off = 0, outside = 0;
#pragma unroll
    for (int k = kMaxRank - 1; k >= 0; --k) {
      if (k < w.rank) {
        uint32_t c = rest;
        if (k > 0) {
          const uint32_t q = rest / w.out[k];
          c = rest - q * w.out[k];
          rest = q;
        }
        const ResizeTap t = taps[w.tap_offset[k] + c];
        off += t.i0;
        outside |= t.outside;
      }
    }
    y[i] = outside != 0 ? fill : x[off];
  }
}

template <typename T>
__global__ void ResizeLinearKernel(const ResizeWalk w, const ResizeTap* __restrict__ taps, float fill,
                                   const T* __restrict__ x, T* __restrict__ y) {
  for (uint32_t i = FirstIndex(); i < w.numel; i += GridSize()) {
    uint32_t rest = i;
    int32_t base = 0, outside = 0, m = 0;
    int32_t delta[kMaxRank];
    float weight[kMaxRank];
#pragma unroll
    for (int k = kMaxRank - 1; k >= 0; --k) {
      if (k < w.rank) {
        uint32_t c = rest;
        if (k > 0) {
          const uint32_t q = rest / w.out[k];
          c = rest - q * w.out[k];
          rest = q;
        }
        const ResizeTap t = taps[w.tap_offset[k] + c];
        outside |= t.outside;
        base += t.i0;
        if (t.w != 0.0f) {
          delta[m] = t.i1 - t.i0;
          weight[m] = t.w;
          ++m;
        }
      }
    }
    if (outside != 0) {
      y[i] = Io<T>::Store(fill);
      continue;
    }
    float acc = 0.0f;
    for (int32_t mask = 0; mask < (1 << m); ++mask) {
      float wt = 1.0f;
      int32_t at = base;
      for (int32_t j = 0; j < m; ++j) {
        if ((mask >> j) & 1) {
          wt *= weight[j];
          at += delta[j];
        } else {
          wt *= 1.0f - weight[j];
        }
      }
      acc += wt * Io<T>::Load(x[at]);
    }
    y[i] = Io<T>::Store(acc);
  }
}

template <typename U>
cudaError_t ResizeNearestAs(const ResizeWalk& w, const ResizeTap* taps, uint64_t fill, const void* x, void* y,
                            uint32_t grid, uint32_t block, cudaStream_t stream) {
  U value;
  std::memcpy(&value, &fill, sizeof(U));
  ResizeNearestKernel<U><<<grid, block, 0, stream>>>(w, taps, value, static_cast<const U*>(x), static_cast<U*>(y));
  return cudaGetLastError();
}

// ---- pad

template <typename U>
__global__ void PadKernel(PadMode mode, const PadWalk w, U value, const U* __restrict__ x, U* __restrict__ y) {
  for (uint32_t i = FirstIndex(); i < w.numel; i += GridSize()) {
    uint32_t rest = i;
    int32_t src = 0, stride = 1;
    bool inside = true;
#pragma unroll
    for (int k = kMaxRank - 1; k >= 0; --k) {
      if (k < w.rank) {
        uint32_t c = rest;
        if (k > 0) {
          const uint32_t q = rest / w.out[k];
          c = rest - q * w.out[k];
          rest = q;
        }
        const int32_t n = w.in[k];
        int32_t j = static_cast<int32_t>(c) - w.begin[k];
        if (j < 0 || j >= n) {
          if (mode == PadMode::kConstant || n == 0) {
            inside = false;
          } else if (mode == PadMode::kEdge) {
            j = j < 0 ? 0 : n - 1;
          } else if (mode == PadMode::kWrap) {
            j = (j % n + n) % n;
          } else if (n == 1) {
            j = 0;
          } else {  // reflect: the period 2(n - 1) mirrors without repeating the edge
            const int32_t period = 2 * (n - 1);
            j = (j % period + period) % period;
            j = j < n ? j : period - j;
          }
        }
        src += j * stride;
        stride *= n;
      }
    }
    y[i] = inside ? x[src] : value;
  }
}

template <typename U>
cudaError_t PadAs(PadMode mode, const PadWalk& w, uint64_t bits, const void* x, void* y, uint32_t grid, uint32_t block,
                  cudaStream_t stream) {
  U value;
  std::memcpy(&value, &bits, sizeof(U));
  PadKernel<U><<<grid, block, 0, stream>>>(mode, w, value, static_cast<const U*>(x), static_cast<U*>(y));
  return cudaGetLastError();
}

// ---- gather

template <typename U, typename I>
__global__ void GatherKernel(const GatherWalk w, const U* __restrict__ x, const I* __restrict__ indices,
                             U* __restrict__ y) {
  for (uint32_t i = FirstIndex(); i < w.numel; i += GridSize()) {
    const uint32_t k = i % w.inner;
    const uint32_t r = i / w.inner;
    const uint32_t j = r % w.count;
    const uint32_t o = r / w.count;
    long long v = static_cast<long long>(indices[j]);
    if (v < 0) v += w.axis_dim;
    if (v < 0 || v >= w.axis_dim) {
      y[i] = U{};
    } else {
      y[i] = x[(o * static_cast<uint32_t>(w.axis_dim) + static_cast<uint32_t>(v)) * w.inner + k];
    }
  }
}

template <typename U>
cudaError_t GatherAs(const GatherWalk& w, size_t index_bytes, const void* x, const void* indices, void* y,
                     uint32_t grid, uint32_t block, cudaStream_t stream) {
  const auto* xs = static_cast<const U*>(x);
  auto* ys = static_cast<U*>(y);
  if (index_bytes == 8) {
    GatherKernel<U, int64_t><<<grid, block, 0, stream>>>(w, xs, static_cast<const int64_t*>(indices), ys);
  } else if (index_bytes == 4) {
    GatherKernel<U, int32_t><<<grid, block, 0, stream>>>(w, xs, static_cast<const int32_t*>(indices), ys);
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchStridedCopy(const StridedCopy& plan, const void* src, void* dst, uint32_t grid, uint32_t block,
                              cudaStream_t stream) {
  if (plan.numel == 0) return cudaSuccess;
  if (plan.Contiguous()) {
    const auto* s = static_cast<const char*>(src) + plan.src_offset * plan.unit;
    auto* d = static_cast<char*>(dst) + plan.dst_offset * plan.unit;
    return cudaMemcpyAsync(d, s, static_cast<size_t>(plan.numel) * plan.unit, cudaMemcpyDeviceToDevice, stream);
  }
  switch (plan.unit) {
    case 1: return StridedCopyAs<uint8_t>(plan, src, dst, grid, block, stream);
    case 2: return StridedCopyAs<uint16_t>(plan, src, dst, grid, block, stream);
    case 4: return StridedCopyAs<uint32_t>(plan, src, dst, grid, block, stream);
    case 8: return StridedCopyAs<uint2>(plan, src, dst, grid, block, stream);
    case 16: return StridedCopyAs<uint4>(plan, src, dst, grid, block, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchPool(PoolKind kind, FloatStorage storage, const PoolWindow& w, const void* x, void* y, uint32_t grid,
                       uint32_t block, cudaStream_t stream) {
  switch (storage) {
    case FloatStorage::kF32: return PoolAs<float>(kind, w, x, y, grid, block, stream);
    case FloatStorage::kF16: return PoolAs<__half>(kind, w, x, y, grid, block, stream);
    case FloatStorage::kBF16: return PoolAs<__nv_bfloat16>(kind, w, x, y, grid, block, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchGlobalPool(PoolKind kind, FloatStorage storage, uint32_t planes, uint32_t plane, const void* x,
                             void* y, uint32_t grid, uint32_t block, cudaStream_t stream) {
  if (block % 32 != 0 || plane == 0) return cudaErrorInvalidValue;
  switch (storage) {
    case FloatStorage::kF32: return GlobalPoolAs<float>(kind, planes, plane, x, y, grid, block, stream);
    case FloatStorage::kF16: return GlobalPoolAs<__half>(kind, planes, plane, x, y, grid, block, stream);
    case FloatStorage::kBF16: return GlobalPoolAs<__nv_bfloat16>(kind, planes, plane, x, y, grid, block, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchResizeNearest(size_t elem_bytes, const ResizeWalk& walk, const ResizeTap* taps, uint64_t fill,
                                const void* x, void* y, uint32_t grid, uint32_t block, cudaStream_t stream) {
  switch (elem_bytes) {
    case 1: return ResizeNearestAs<uint8_t>(walk, taps, fill, x, y, grid, block, stream);
    case 2: return ResizeNearestAs<uint16_t>(walk, taps, fill, x, y, grid, block, stream);
    case 4: return ResizeNearestAs<uint32_t>(walk, taps, fill, x, y, grid, block, stream);
    case 8: return ResizeNearestAs<uint64_t>(walk, taps, fill, x, y, grid, block, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchResizeLinear(FloatStorage storage, const ResizeWalk& walk, const ResizeTap* taps, float fill,
                               const void* x, void* y, uint32_t grid, uint32_t block, cudaStream_t stream) {
  switch (storage) {
    case FloatStorage::kF32:
      ResizeLinearKernel<float>
          <<<grid, block, 0, stream>>>(walk, taps, fill, static_cast<const float*>(x), static_cast<float*>(y));
      break;
    case FloatStorage::kF16:
      ResizeLinearKernel<__half>
          <<<grid, block, 0, stream>>>(walk, taps, fill, static_cast<const __half*>(x), static_cast<__half*>(y));
      break;
    case FloatStorage::kBF16:
      ResizeLinearKernel<__nv_bfloat16><<<grid, block, 0, stream>>>(
          walk, taps, fill, static_cast<const __nv_bfloat16*>(x), static_cast<__nv_bfloat16*>(y));
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t LaunchPad(PadMode mode, size_t elem_bytes, const PadWalk& walk, uint64_t value, const void* x, void* y,
                      uint32_t grid, uint32_t block, cudaStream_t stream) {
  switch (elem_bytes) {
    case 1: return PadAs<uint8_t>(mode, walk, value, x, y, grid, block, stream);
    case 2: return PadAs<uint16_t>(mode, walk, value, x, y, grid, block, stream);
    case 4: return PadAs<uint32_t>(mode, walk, value, x, y, grid, block, stream);
    case 8: return PadAs<uint64_t>(mode, walk, value, x, y, grid, block, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchGather(const GatherWalk& walk, size_t index_bytes, const void* x, const void* indices, void* y,
                         uint32_t grid, uint32_t block, cudaStream_t stream) {
  switch (walk.unit) {
    case 1: return GatherAs<uint8_t>(walk, index_bytes, x, indices, y, grid, block, stream);
    case 2: return GatherAs<uint16_t>(walk, index_bytes, x, indices, y, grid, block, stream);
    case 4: return GatherAs<uint32_t>(walk, index_bytes, x, indices, y, grid, block, stream);
    case 8: return GatherAs<uint2>(walk, index_bytes, x, indices, y, grid, block, stream);
    case 16: return GatherAs<uint4>(walk, index_bytes, x, indices, y, grid, block, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace chipfit::cuda::data
