// Device-code helpers every .cu of devices/cuda/ops shares (C++17, CUDA headers only): loading a stored
// element into the type it is computed in and storing it back (f16 and bf16 storage compute in float,
// everything else in its own type), and the grid-stride loop's start and step.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace chipfit::cuda {

template <typename T>
struct Io {
  using C = T;
  static __device__ __forceinline__ C Load(T v) { return v; }
  static __device__ __forceinline__ T Store(C v) { return v; }
};
template <>
struct Io<__half> {
  using C = float;
  static __device__ __forceinline__ float Load(__half v) { return __half2float(v); }
  static __device__ __forceinline__ __half Store(float v) { return __float2half_rn(v); }
};
template <>
struct Io<__nv_bfloat16> {
  using C = float;
  static __device__ __forceinline__ float Load(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __forceinline__ __nv_bfloat16 Store(float v) { return __float2bfloat16_rn(v); }
};

// A grid-stride loop over 32-bit indices: for (i = FirstIndex(); i < n; i += GridSize()). The host keeps n
// below 2^31, so i + GridSize() cannot wrap.
__device__ __forceinline__ uint32_t FirstIndex() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ uint32_t GridSize() { return gridDim.x * blockDim.x; }

}  // namespace chipfit::cuda
