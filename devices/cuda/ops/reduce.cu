// Device code of the reduce family: softmax, Reduce*, layer/instance and batch normalisation. Rows are
// reduced by a block each (warp shuffles, then one float per warp in shared memory) or by a thread
// each; values are loaded from f32, f16 or bf16 storage and accumulated in float. Kernels are
// templated on the storage type only (the reduction kind is a uniform run-time branch) to keep the
// instantiations, and the compile time for every architecture, small.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "devices/cuda/ops/reduce_launch.h"

namespace chipfit::cuda {
namespace {

__device__ __forceinline__ float ToFloat(float v) { return v; }
__device__ __forceinline__ float ToFloat(__half v) { return __half2float(v); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ T FromFloat(float v);
template <>
__device__ __forceinline__ float FromFloat<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half FromFloat<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// How partial results combine; every ReduceKind maps to one.
enum class Combine : int { kSum, kMax, kMin, kProd };

__device__ __forceinline__ float Identity(Combine c) {
  switch (c) {
    case Combine::kMax: return -INFINITY;
    case Combine::kMin: return INFINITY;
    case Combine::kProd: return 1.0f;
    default: return 0.0f;
  }
}

// NaN wins max and min, as in the reference (fmaxf would drop it).
__device__ __forceinline__ float Apply(Combine c, float a, float b) {
  switch (c) {
    case Combine::kMax: return (a > b || a != a) ? a : b;
    case Combine::kMin: return (a < b || a != a) ? a : b;
    case Combine::kProd: return a * b;
    default: return a + b;
  }
}

__device__ __forceinline__ float WarpReduce(Combine c, float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v = Apply(c, v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// The block-wide combination of every thread's `v`, returned to all threads. blockDim.x is a whole
// number of warps (at most 32 of them); the trailing barrier lets the caller reduce again at once.
__device__ float BlockReduce(Combine c, float v) {
  __shared__ float partial[32];
  v = WarpReduce(c, v);
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (blockDim.x >> 5) ? partial[lane] : Identity(c);
    v = WarpReduce(c, v);
    if (lane == 0) partial[0] = v;
  }
  __syncthreads();
  const float result = partial[0];
  __syncthreads();
  return result;
}

// ---- softmax

template <typename T>
__global__ void SoftmaxBlockKernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n, bool log) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* in = x + row * n;
    T* out = y + row * n;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) m = fmaxf(m, ToFloat(in[j]));
    m = BlockReduce(Combine::kMax, m);
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += __expf(ToFloat(in[j]) - m);
    s = BlockReduce(Combine::kSum, s);
    if (log) {
      const float shift = m + logf(s);
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) out[j] = FromFloat<T>(ToFloat(in[j]) - shift);
    } else {
      const float inv = 1.0f / s;
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) out[j] = FromFloat<T>(__expf(ToFloat(in[j]) - m) * inv);
    }
  }
}

template <typename T>
__global__ void SoftmaxThreadKernel(const T* __restrict__ x, T* __restrict__ y, int64_t outer, int64_t n, int64_t inner,
                                    bool log) {
  const int64_t rows = outer * inner;
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t base = (r / inner) * n * inner + r % inner;
    const T* in = x + base;
    T* out = y + base;
    float m = -INFINITY;
    for (int64_t j = 0; j < n; ++j) m = fmaxf(m, ToFloat(in[j * inner]));
    float s = 0.0f;
    for (int64_t j = 0; j < n; ++j) s += __expf(ToFloat(in[j * inner]) - m);
    if (log) {
      const float shift = m + logf(s);
      for (int64_t j = 0; j < n; ++j) out[j * inner] = FromFloat<T>(ToFloat(in[j * inner]) - shift);
    } else {
      const float inv = 1.0f / s;
      for (int64_t j = 0; j < n; ++j) out[j * inner] = FromFloat<T>(__expf(ToFloat(in[j * inner]) - m) * inv);
    }
  }
}

// ---- Reduce*

__device__ __forceinline__ Combine CombineOf(ReduceKind k) {
  switch (k) {
    case ReduceKind::kMax: return Combine::kMax;
    case ReduceKind::kMin: return Combine::kMin;
    case ReduceKind::kProd: return Combine::kProd;
    default: return Combine::kSum;
  }
}

// The value one element contributes; `shift` is LogSumExp's row max.
__device__ __forceinline__ float Contribution(ReduceKind k, float v, float shift) {
  switch (k) {
    case ReduceKind::kL1: return fabsf(v);
    case ReduceKind::kL2:
    case ReduceKind::kSumSquare: return v * v;
    case ReduceKind::kLogSumExp: return expf(v - shift);
    default: return v;
  }
}

__device__ __forceinline__ float Finish(ReduceKind k, float acc, int64_t n, float shift) {
  switch (k) {
    case ReduceKind::kMean: return acc / static_cast<float>(n);
    case ReduceKind::kL2: return sqrtf(acc);
    case ReduceKind::kLogSum: return logf(acc);
    case ReduceKind::kLogSumExp: return shift + logf(acc);
    default: return acc;
  }
}

// A max of ±inf or NaN (an empty or infinite row) would poison exp(v − shift): shift by 0 instead,
// as the reference does.
__device__ __forceinline__ float FiniteShift(float m) { return isfinite(m) ? m : 0.0f; }

template <typename T>
__global__ void ReduceBlockKernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t n,
                                  ReduceKind kind) {
  const Combine c = CombineOf(kind);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* in = x + row * n;
    float shift = 0.0f;
    if (kind == ReduceKind::kLogSumExp) {
      float m = -INFINITY;
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) m = fmaxf(m, ToFloat(in[j]));
      shift = FiniteShift(BlockReduce(Combine::kMax, m));
    }
    float acc = Identity(c);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      acc = Apply(c, acc, Contribution(kind, ToFloat(in[j]), shift));
    acc = BlockReduce(c, acc);
    if (threadIdx.x == 0) y[row] = FromFloat<T>(Finish(kind, acc, n, shift));
  }
}

template <typename T>
__global__ void ReduceThreadKernel(const T* __restrict__ x, T* __restrict__ y, int64_t outer, int64_t n, int64_t inner,
                                   ReduceKind kind) {
  const Combine c = CombineOf(kind);
  const int64_t rows = outer * inner;
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const T* in = x + (r / inner) * n * inner + r % inner;
    float shift = 0.0f;
    if (kind == ReduceKind::kLogSumExp) {
      float m = -INFINITY;
      for (int64_t j = 0; j < n; ++j) m = fmaxf(m, ToFloat(in[j * inner]));
      shift = FiniteShift(m);
    }
    float acc = Identity(c);
    for (int64_t j = 0; j < n; ++j) acc = Apply(c, acc, Contribution(kind, ToFloat(in[j * inner]), shift));
    y[r] = FromFloat<T>(Finish(kind, acc, n, shift));
  }
}

// ---- normalisation

// Two passes (mean, then the mean square deviation) so that a large mean does not cancel.
template <typename T>
__global__ void RowNormKernel(const T* __restrict__ x, const T* __restrict__ scale, const T* __restrict__ bias,
                              T* __restrict__ y, NormParams p) {
  const int64_t n = p.n;
  for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
    const T* in = x + row * n;
    T* out = y + row * n;
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += ToFloat(in[j]);
    const float mean = BlockReduce(Combine::kSum, s) / static_cast<float>(n);
    float sq = 0.0f;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const float d = ToFloat(in[j]) - mean;
      sq += d * d;
    }
    const float inv_std = rsqrtf(BlockReduce(Combine::kSum, sq) / static_cast<float>(n) + p.epsilon);
    if (p.per_channel) {
      const int64_t ch = row % p.channels;
      const float a = inv_std * ToFloat(scale[ch]);
      const float b = bias != nullptr ? ToFloat(bias[ch]) : 0.0f;
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) out[j] = FromFloat<T>((ToFloat(in[j]) - mean) * a + b);
    } else {
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        const float b = bias != nullptr ? ToFloat(bias[j % p.bias_n]) : 0.0f;
        out[j] = FromFloat<T>((ToFloat(in[j]) - mean) * inv_std * ToFloat(scale[j % p.scale_n]) + b);
      }
    }
  }
}

template <typename T>
__global__ void BatchNormKernel(const T* __restrict__ x, const T* __restrict__ scale, const T* __restrict__ bias,
                                const T* __restrict__ mean, const T* __restrict__ var, T* __restrict__ y,
                                BatchNormParams p) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < p.total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = (i / p.plane) % p.channels;
    const float a = ToFloat(scale[c]) * rsqrtf(ToFloat(var[c]) + p.epsilon);
    y[i] = FromFloat<T>((ToFloat(x[i]) - ToFloat(mean[c])) * a + ToFloat(bias[c]));
  }
}

template <typename T>
struct Tag {
  using type = T;
};

// Calls f with the Tag of the storage type (the instantiation to launch).
template <typename F>
cudaError_t Dispatch(StoreType type, F&& f) {
  switch (type) {
    case StoreType::kF16: return f(Tag<__half>{});
    case StoreType::kBf16: return f(Tag<__nv_bfloat16>{});
    default: return f(Tag<float>{});
  }
}

}  // namespace

cudaError_t LaunchSoftmax(const void* x, void* y, StoreType type, RowView view, bool log, RowLaunch launch,
                          cudaStream_t stream) {
  if (view.rows() == 0 || view.n == 0) return cudaSuccess;
  return Dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* in = static_cast<const T*>(x);
    auto* out = static_cast<T*>(y);
    if (launch.block_per_row) {
      SoftmaxBlockKernel<T><<<launch.grid, launch.block, 0, stream>>>(in, out, view.rows(), view.n, log);
    } else {
      SoftmaxThreadKernel<T><<<launch.grid, launch.block, 0, stream>>>(in, out, view.outer, view.n, view.inner, log);
    }
    return cudaGetLastError();
  });
}

cudaError_t LaunchReduce(const void* x, void* y, StoreType type, ReduceKind kind, RowView view, RowLaunch launch,
                         cudaStream_t stream) {
  if (view.rows() == 0) return cudaSuccess;
  return Dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* in = static_cast<const T*>(x);
    auto* out = static_cast<T*>(y);
    if (launch.block_per_row) {
      ReduceBlockKernel<T><<<launch.grid, launch.block, 0, stream>>>(in, out, view.rows(), view.n, kind);
    } else {
      ReduceThreadKernel<T><<<launch.grid, launch.block, 0, stream>>>(in, out, view.outer, view.n, view.inner, kind);
    }
    return cudaGetLastError();
  });
}

cudaError_t LaunchRowNorm(const void* x, const void* scale, const void* bias, void* y, StoreType type,
                          NormParams params, uint32_t grid, uint32_t block, cudaStream_t stream) {
  if (params.rows == 0 || params.n == 0) return cudaSuccess;
  return Dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    RowNormKernel<T><<<grid, block, 0, stream>>>(static_cast<const T*>(x), static_cast<const T*>(scale),
                                                 static_cast<const T*>(bias), static_cast<T*>(y), params);
    return cudaGetLastError();
  });
}

cudaError_t LaunchBatchNorm(const void* x, const void* scale, const void* bias, const void* mean, const void* var,
                            void* y, StoreType type, BatchNormParams params, uint32_t grid, uint32_t block,
                            cudaStream_t stream) {
  if (params.total == 0) return cudaSuccess;
  return Dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    BatchNormKernel<T><<<grid, block, 0, stream>>>(static_cast<const T*>(x), static_cast<const T*>(scale),
                                                   static_cast<const T*>(bias), static_cast<const T*>(mean),
                                                   static_cast<const T*>(var), static_cast<T*>(y), params);
    return cudaGetLastError();
  });
}

}  // namespace chipfit::cuda
