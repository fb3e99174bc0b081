// Device code of the elementwise family: a contiguous unary kernel (one instantiation per function and
// float storage type), one n-ary broadcasting kernel (per combining function and storage type), a
// bit-copying Where per element size and one Cast kernel whose source and destination types are
// uniform run-time switches (a cast is memory-bound; 11×11 instantiations would cost compile time
// for nothing). Float storage is computed in float; integers in their own type, wrapping.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <utility>

#include "devices/cuda/ops/device_util.cuh"
#include "devices/cuda/ops/eltwise_launch.h"

namespace chipfit::cuda::eltwise {
namespace {

// ---- unary

__device__ __forceinline__ float Softplus(float x) { return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x)); }

// Comparisons rather than fminf/fmaxf, which drop a NaN: std::clamp in the reference keeps it.
__device__ __forceinline__ float Clamp01(float v) {
  v = v < 0.0f ? 0.0f : v;
  return v > 1.0f ? 1.0f : v;
}

template <UnaryFn F>
__device__ __forceinline__ float Apply(float x, const UnaryParams& p) {
  if constexpr (F == UnaryFn::kRelu) return x < 0.0f ? 0.0f : x;  // NaN passes, as in the reference
  if constexpr (F == UnaryFn::kLeakyRelu) return x < 0.0f ? p.alpha * x : x;
  if constexpr (F == UnaryFn::kClip) {
    // One bound after the other: min > max gives max everywhere, as the spec's Min(max, Max(x, min)).
    const float v = x < p.alpha ? p.alpha : x;
    return v > p.beta ? p.beta : v;
  }
  if constexpr (F == UnaryFn::kSigmoid) return 1.0f / (1.0f + expf(-x));
  if constexpr (F == UnaryFn::kHardSigmoid) return Clamp01(p.alpha * x + p.beta);
  if constexpr (F == UnaryFn::kHardSwish) return x * Clamp01(x / 6.0f + 0.5f);
  if constexpr (F == UnaryFn::kTanh) return tanhf(x);
  if constexpr (F == UnaryFn::kElu) return x < 0.0f ? p.alpha * expm1f(x) : x;
  if constexpr (F == UnaryFn::kSelu) return x <= 0.0f ? p.gamma * p.alpha * expm1f(x) : p.gamma * x;
  if constexpr (F == UnaryFn::kCelu) return fmaxf(x, 0.0f) + fminf(p.alpha * expm1f(x / p.alpha), 0.0f);
  // erfc keeps the negative tail accurate where 1 + erf(x/√2) cancels.
  if constexpr (F == UnaryFn::kGelu) return 0.5f * x * erfcf(x * -0.70710678118654752f);
  // 0.5·x·(1 + tanh(u)) = x / (1 + exp(-2u)): no cancellation for negative x.
  if constexpr (F == UnaryFn::kGeluTanh) {
    return x / (1.0f + expf(-1.5957691216057308f * (x + 0.044715f * x * x * x)));
  }
  if constexpr (F == UnaryFn::kExp) return expf(x);
  if constexpr (F == UnaryFn::kLog) return logf(x);
  if constexpr (F == UnaryFn::kSqrt) return sqrtf(x);
  if constexpr (F == UnaryFn::kAbs) return fabsf(x);
  if constexpr (F == UnaryFn::kNeg) return -x;
  if constexpr (F == UnaryFn::kSoftplus) return Softplus(x);
  if constexpr (F == UnaryFn::kMish) return x * tanhf(Softplus(x));
  if constexpr (F == UnaryFn::kRound) return rintf(x);  // round-to-nearest-even: ONNX Round
  if constexpr (F == UnaryFn::kReciprocal) return 1.0f / x;
  if constexpr (F == UnaryFn::kErf) return erff(x);
  if constexpr (F == UnaryFn::kFloor) return floorf(x);
  if constexpr (F == UnaryFn::kCeil) return ceilf(x);
  if constexpr (F == UnaryFn::kSign) return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x;  // keeps ±0 and NaN
  if constexpr (F == UnaryFn::kSin) return sinf(x);
  if constexpr (F == UnaryFn::kCos) return cosf(x);
  if constexpr (F == UnaryFn::kSoftsign) return x / (1.0f + fabsf(x));
  if constexpr (F == UnaryFn::kThresholdedRelu) return x > p.alpha ? x : 0.0f;
  if constexpr (F == UnaryFn::kPowScalar) return powf(x, p.alpha);
  if constexpr (F == UnaryFn::kSquare) return x * x;
  return x;
}

template <typename T, UnaryFn F>
__global__ void UnaryKernel(const T* x, T* y, uint32_t n, UnaryParams p) {  // in place is allowed: no restrict
  for (uint32_t i = FirstIndex(); i < n; i += GridSize()) y[i] = Io<T>::Store(Apply<F>(Io<T>::Load(x[i]), p));
}

template <typename T, size_t... I>
cudaError_t DispatchUnary(UnaryFn fn, const void* x, void* y, uint32_t n, UnaryParams p, uint32_t grid, uint32_t block,
                          cudaStream_t stream, std::index_sequence<I...>) {
  using Kernel = void (*)(const T*, T*, uint32_t, UnaryParams);
  static constexpr Kernel kKernels[] = {&UnaryKernel<T, static_cast<UnaryFn>(I)>...};
  if (static_cast<size_t>(fn) >= sizeof...(I)) return cudaErrorInvalidValue;
  kKernels[static_cast<size_t>(fn)]<<<grid, block, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, p);
  return cudaGetLastError();
}

// ---- n-ary broadcast walk

// Element offsets of output index i in every input. The loops are unrolled to the fixed maxima with
// guards so that the walk's arrays stay in parameter space and registers (a dynamic index would
// spill them to local memory); a rank-1 walk (same shapes, or one value) divides nothing.
__device__ __forceinline__ void Offsets(const Broadcast& w, uint32_t i, uint32_t (&off)[kMaxInputs]) {
#pragma unroll
  for (int k = 0; k < kMaxInputs; ++k) off[k] = 0;
  uint32_t rest = i;
#pragma unroll
  for (int d = kMaxRank - 1; d > 0; --d) {
    if (d < w.rank) {
      const uint32_t q = rest / w.dims[d];
      const uint32_t c = rest - q * w.dims[d];
      rest = q;
#pragma unroll
      for (int k = 0; k < kMaxInputs; ++k) {
        if (k < w.num_inputs) off[k] += c * w.strides[k][d];
      }
    }
  }
#pragma unroll
  for (int k = 0; k < kMaxInputs; ++k) {
    if (k < w.num_inputs) off[k] += rest * w.strides[k][0];
  }
}

template <typename C>
__device__ __forceinline__ bool IsNan(C v) {
  if constexpr (std::numeric_limits<C>::is_integer) {
    return false;
  } else {
    return isnan(v);
  }
}

// Integer arithmetic wraps (two's complement), as numpy and the reference do, instead of being UB.
template <typename C>
__device__ __forceinline__ C Wrapped(unsigned long long v) {
  return static_cast<C>(v);
}

template <NaryFn F, typename C>
__device__ __forceinline__ C Combine(C a, C b) {
  constexpr bool kInt = std::numeric_limits<C>::is_integer;
  using U = unsigned long long;
  if constexpr (F == NaryFn::kAdd) {
    if constexpr (kInt) return Wrapped<C>(static_cast<U>(a) + static_cast<U>(b));
    return a + b;
  }
  if constexpr (F == NaryFn::kSub) {
    if constexpr (kInt) return Wrapped<C>(static_cast<U>(a) - static_cast<U>(b));
    return a - b;
  }
  if constexpr (F == NaryFn::kMul) {
    if constexpr (kInt) return Wrapped<C>(static_cast<U>(a) * static_cast<U>(b));
    return a * b;
  }
  if constexpr (F == NaryFn::kDiv) return a / b;
  if constexpr (F == NaryFn::kPow) return powf(a, b);
  if constexpr (F == NaryFn::kPRelu) return a < C(0) ? a * b : a;
  // NaN wins, as numpy.maximum/minimum and the reference.
  if constexpr (F == NaryFn::kMax) return IsNan(a) ? a : (IsNan(b) || b > a) ? b : a;
  if constexpr (F == NaryFn::kMin) return IsNan(a) ? a : (IsNan(b) || b < a) ? b : a;
  return a;
}

template <typename T, NaryFn F>
__global__ void NaryKernel(const NaryArgs args) {
  using C = typename Io<T>::C;
  T* out = static_cast<T*>(args.out);
  for (uint32_t i = FirstIndex(); i < args.walk.numel; i += GridSize()) {
    uint32_t off[kMaxInputs];
    Offsets(args.walk, i, off);
    C acc = Io<T>::Load(static_cast<const T*>(args.in[0])[off[0]]);
#pragma unroll
    for (int k = 1; k < kMaxInputs; ++k) {
      if (k < args.walk.num_inputs) acc = Combine<F>(acc, Io<T>::Load(static_cast<const T*>(args.in[k])[off[k]]));
    }
    if constexpr (F == NaryFn::kAdd && !std::numeric_limits<C>::is_integer) {
      if (args.divisor != 1.0f) acc = acc / args.divisor;  // Mean
    }
    out[i] = Io<T>::Store(acc);
  }
}

template <typename T, size_t... I>
cudaError_t DispatchNary(NaryFn fn, const NaryArgs& args, uint32_t grid, uint32_t block, cudaStream_t stream,
                         std::index_sequence<I...>) {
  using Kernel = void (*)(const NaryArgs);
  static constexpr Kernel kKernels[] = {&NaryKernel<T, static_cast<NaryFn>(I)>...};
  kKernels[static_cast<size_t>(fn)]<<<grid, block, 0, stream>>>(args);
  return cudaGetLastError();
}

// The integer kernels exist only for the functions NaryCompiled names.
template <typename T>
cudaError_t DispatchIntegerNary(NaryFn fn, const NaryArgs& args, uint32_t grid, uint32_t block, cudaStream_t stream) {
  switch (fn) {
    case NaryFn::kAdd: NaryKernel<T, NaryFn::kAdd><<<grid, block, 0, stream>>>(args); break;
    case NaryFn::kSub: NaryKernel<T, NaryFn::kSub><<<grid, block, 0, stream>>>(args); break;
    case NaryFn::kMul: NaryKernel<T, NaryFn::kMul><<<grid, block, 0, stream>>>(args); break;
    case NaryFn::kMax: NaryKernel<T, NaryFn::kMax><<<grid, block, 0, stream>>>(args); break;
    case NaryFn::kMin: NaryKernel<T, NaryFn::kMin><<<grid, block, 0, stream>>>(args); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

// ---- Where

template <typename V>
__global__ void WhereKernel(const NaryArgs args) {
  const auto* cond = static_cast<const uint8_t*>(args.in[0]);
  const auto* a = static_cast<const V*>(args.in[1]);
  const auto* b = static_cast<const V*>(args.in[2]);
  V* out = static_cast<V*>(args.out);
  for (uint32_t i = FirstIndex(); i < args.walk.numel; i += GridSize()) {
    uint32_t off[kMaxInputs];
    Offsets(args.walk, i, off);
    out[i] = cond[off[0]] != 0 ? a[off[1]] : b[off[2]];
  }
}

// ---- Cast

// One source value: floats (every float storage widens to float exactly) or integers widened to
// 64 bits (u32 fits; u64 is refused on the host).
struct Value {
  float f;
  long long i;
  bool is_float;
};

__device__ __forceinline__ Value FloatValue(float f) { return {f, 0, true}; }
__device__ __forceinline__ Value IntValue(long long i) { return {0.0f, i, false}; }

__device__ __forceinline__ Value LoadValue(Storage s, const void* x, uint32_t i) {
  switch (s) {
    case Storage::kF32: return FloatValue(static_cast<const float*>(x)[i]);
    case Storage::kF16: return FloatValue(__half2float(static_cast<const __half*>(x)[i]));
    case Storage::kBF16: return FloatValue(__bfloat162float(static_cast<const __nv_bfloat16*>(x)[i]));
    case Storage::kI8: return IntValue(static_cast<const int8_t*>(x)[i]);
    case Storage::kU8: return IntValue(static_cast<const uint8_t*>(x)[i]);
    case Storage::kI16: return IntValue(static_cast<const int16_t*>(x)[i]);
    case Storage::kU16: return IntValue(static_cast<const uint16_t*>(x)[i]);
    case Storage::kI32: return IntValue(static_cast<const int32_t*>(x)[i]);
    case Storage::kU32: return IntValue(static_cast<const uint32_t*>(x)[i]);
    case Storage::kI64: return IntValue(static_cast<const int64_t*>(x)[i]);
    case Storage::kBool: return IntValue(static_cast<const uint8_t*>(x)[i] != 0 ? 1 : 0);
  }
  return IntValue(0);
}

// Float → integer: truncation toward zero, saturated, NaN → 0 (the reference's rule). float(max)
// rounds up to 2^bits for 32- and 64-bit types, so every float below it converts after truncation.
template <typename I>
__device__ __forceinline__ I FloatToInt(float v) {
  constexpr I kLo = std::numeric_limits<I>::lowest();
  constexpr I kHi = std::numeric_limits<I>::max();
  if (isnan(v)) return I(0);
  if (v >= static_cast<float>(kHi)) return kHi;
  if (v <= static_cast<float>(kLo)) return kLo;
  return static_cast<I>(__float2ll_rz(v));
}

template <typename I>
__device__ __forceinline__ I ToInt(const Value& v) {
  if (v.is_float) return FloatToInt<I>(v.f);
  return static_cast<I>(static_cast<unsigned long long>(v.i));  // modulo 2^bits
}

// An integer rounded to float with round-to-odd: rounding that again to f16/bf16 is then correctly
// rounded (a plain round-to-nearest float in between can round twice the wrong way).
__device__ __forceinline__ float RoundToOddFloat(long long v) {
  float f = __ll2float_rz(v);
  if (__float2ll_rz(f) != v) f = __int_as_float(__float_as_int(f) | 1);
  return f;
}

__device__ __forceinline__ void StoreValue(Storage s, void* y, uint32_t i, const Value& v) {
  switch (s) {
    case Storage::kF32: static_cast<float*>(y)[i] = v.is_float ? v.f : __ll2float_rn(v.i); break;
    case Storage::kF16: static_cast<__half*>(y)[i] = __float2half_rn(v.is_float ? v.f : RoundToOddFloat(v.i)); break;
    case Storage::kBF16:
      static_cast<__nv_bfloat16*>(y)[i] = __float2bfloat16_rn(v.is_float ? v.f : RoundToOddFloat(v.i));
      break;
    case Storage::kI8: static_cast<int8_t*>(y)[i] = ToInt<int8_t>(v); break;
    case Storage::kU8: static_cast<uint8_t*>(y)[i] = ToInt<uint8_t>(v); break;
    case Storage::kI16: static_cast<int16_t*>(y)[i] = ToInt<int16_t>(v); break;
    case Storage::kU16: static_cast<uint16_t*>(y)[i] = ToInt<uint16_t>(v); break;
    case Storage::kI32: static_cast<int32_t*>(y)[i] = ToInt<int32_t>(v); break;
    case Storage::kU32: static_cast<uint32_t*>(y)[i] = ToInt<uint32_t>(v); break;
    case Storage::kI64: static_cast<int64_t*>(y)[i] = ToInt<int64_t>(v); break;
    case Storage::kBool:  // "not zero": NaN is true
      static_cast<uint8_t*>(y)[i] = (v.is_float ? v.f != 0.0f : v.i != 0) ? 1 : 0;
      break;
  }
}

__global__ void CastKernel(Storage from, Storage to, const void* x, void* y, uint32_t n) {
  for (uint32_t i = FirstIndex(); i < n; i += GridSize()) StoreValue(to, y, i, LoadValue(from, x, i));
}

}  // namespace

cudaError_t LaunchUnary(UnaryFn fn, Storage storage, const void* x, void* y, uint32_t n, UnaryParams params,
                        uint32_t grid, uint32_t block, cudaStream_t stream) {
  constexpr auto kFns = std::make_index_sequence<static_cast<size_t>(UnaryFn::kCount)>();
  switch (storage) {
    case Storage::kF32: return DispatchUnary<float>(fn, x, y, n, params, grid, block, stream, kFns);
    case Storage::kF16: return DispatchUnary<__half>(fn, x, y, n, params, grid, block, stream, kFns);
    case Storage::kBF16: return DispatchUnary<__nv_bfloat16>(fn, x, y, n, params, grid, block, stream, kFns);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchNary(NaryFn fn, Storage storage, const NaryArgs& args, uint32_t grid, uint32_t block,
                       cudaStream_t stream) {
  if (!NaryCompiled(fn, storage)) return cudaErrorInvalidValue;
  constexpr auto kFns = std::make_index_sequence<static_cast<size_t>(NaryFn::kCount)>();
  switch (storage) {
    case Storage::kF32: return DispatchNary<float>(fn, args, grid, block, stream, kFns);
    case Storage::kF16: return DispatchNary<__half>(fn, args, grid, block, stream, kFns);
    case Storage::kBF16: return DispatchNary<__nv_bfloat16>(fn, args, grid, block, stream, kFns);
    case Storage::kI32: return DispatchIntegerNary<int32_t>(fn, args, grid, block, stream);
    case Storage::kI64: return DispatchIntegerNary<int64_t>(fn, args, grid, block, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchWhere(size_t value_bytes, const NaryArgs& args, uint32_t grid, uint32_t block, cudaStream_t stream) {
  switch (value_bytes) {
    case 1: WhereKernel<uint8_t><<<grid, block, 0, stream>>>(args); break;
    case 2: WhereKernel<uint16_t><<<grid, block, 0, stream>>>(args); break;
    case 4: WhereKernel<uint32_t><<<grid, block, 0, stream>>>(args); break;
    case 8: WhereKernel<uint64_t><<<grid, block, 0, stream>>>(args); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t LaunchCast(Storage from, Storage to, const void* x, void* y, uint32_t n, uint32_t grid, uint32_t block,
                       cudaStream_t stream) {
  CastKernel<<<grid, block, 0, stream>>>(from, to, x, y, n);
  return cudaGetLastError();
}

}  // namespace chipfit::cuda::eltwise
