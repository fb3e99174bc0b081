// What eltwise_cuda.cpp (the host side, C++20) and eltwise.cu (device code, C++17) share: the plans
// as plain structs, the enums that pick a kernel and the launchers. Kept free of project headers so
// that nvcc compiles it in C++17; the broadcast planner is declared here too so that tests reach it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace chipfit::cuda::eltwise {

// Rank of the broadcast walk after collapsing, and inputs of one n-ary kernel (ONNX allows more for
// Sum/Max/Min/Mean; models rarely have more than a handful).
constexpr int kMaxRank = 8;
constexpr int kMaxInputs = 8;
// Indices are 32-bit (divisions by 64-bit values are emulated and several times slower).
constexpr int64_t kMaxElements = (int64_t{1} << 31) - 1;

// How one tensor is stored on the device (the context's storage type, not the ONNX dtype).
enum class Storage : uint8_t { kF32, kF16, kBF16, kI8, kU8, kI16, kU16, kI32, kU32, kI64, kBool };

// Unary functions (UnaryParams carries their attributes).
enum class UnaryFn : uint8_t {
  kRelu,
  kLeakyRelu,  // alpha
  kClip,       // alpha = min, beta = max
  kSigmoid,
  kHardSigmoid,  // alpha, beta
  kHardSwish,
  kTanh,
  kElu,   // alpha
  kSelu,  // alpha, gamma
  kCelu,  // alpha
  kGelu,
  kGeluTanh,
  kExp,
  kLog,
  kSqrt,
  kAbs,
  kNeg,
  kSoftplus,
  kMish,
  kRound,
  kReciprocal,
  kErf,
  kFloor,
  kCeil,
  kSign,
  kSin,
  kCos,
  kSoftsign,
  kThresholdedRelu,  // alpha
  kPowScalar,        // x^alpha (Pow with a constant one-value exponent)
  kSquare,           // Pow with exponent 2, exact
  kCount,
};

// Combining functions of the n-ary kernel: inputs are folded left to right (Sum is kAdd over all
// inputs, Mean kAdd then a division by the count).
enum class NaryFn : uint8_t { kAdd, kSub, kMul, kDiv, kPow, kPRelu, kMax, kMin, kCount };

struct UnaryParams {
  float alpha = 0, beta = 0, gamma = 0;
};

// The output walk: output dims (outermost first) after dropping 1s and merging neighbours every input
// spans alike, and each input's element stride per dim (0 where it broadcasts).
struct Broadcast {
  int32_t rank = 1;
  int32_t num_inputs = 0;
  uint32_t numel = 0;
  uint32_t dims[kMaxRank] = {};
  uint32_t strides[kMaxInputs][kMaxRank] = {};
};

struct NaryArgs {
  Broadcast walk;
  const void* in[kMaxInputs] = {};
  void* out = nullptr;
  float divisor = 1.0f;  // Mean: the input count
};

// Whether the n-ary kernel is compiled for `fn` on `storage` (float storage for all; 32- and 64-bit
// integers for the ops whose integer results cannot fail: no division, no negative powers).
inline bool NaryCompiled(NaryFn fn, Storage storage) {
  switch (storage) {
    case Storage::kF32:
    case Storage::kF16:
    case Storage::kBF16: return fn != NaryFn::kCount;
    case Storage::kI32:
    case Storage::kI64:
      return fn == NaryFn::kAdd || fn == NaryFn::kSub || fn == NaryFn::kMul || fn == NaryFn::kMax || fn == NaryFn::kMin;
    default: return false;
  }
}
inline bool IsFloatStorage(Storage s) { return s == Storage::kF32 || s == Storage::kF16 || s == Storage::kBF16; }
// Cast reads and writes every storage type.
inline size_t StorageBytes(Storage s) {
  switch (s) {
    case Storage::kF32:
    case Storage::kI32:
    case Storage::kU32: return 4;
    case Storage::kF16:
    case Storage::kBF16:
    case Storage::kI16:
    case Storage::kU16: return 2;
    case Storage::kI64: return 8;
    default: return 1;
  }
}

// Collapses the broadcast of `inputs` (numpy rules: right-aligned, 1 broadcasts) to `out`. Empty
// result on success, else why it cannot be walked (more than kMaxInputs inputs, a collapsed rank over
// kMaxRank, 2^31 or more elements, shapes that do not broadcast).
std::string PlanBroadcast(const std::vector<std::vector<int64_t>>& inputs, const std::vector<int64_t>& out,
                          Broadcast& walk);

// Launchers: the launch's own error (cudaGetLastError), cudaErrorInvalidValue for a combination that
// is not compiled (the host plan refuses those first). Float storage computes in float.
cudaError_t LaunchUnary(UnaryFn fn, Storage storage, const void* x, void* y, uint32_t n, UnaryParams params,
                        uint32_t grid, uint32_t block, cudaStream_t stream);
cudaError_t LaunchNary(NaryFn fn, Storage storage, const NaryArgs& args, uint32_t grid, uint32_t block,
                       cudaStream_t stream);
// Where: input 0 is the bool condition, inputs 1 and 2 the values of `value_bytes` each (a select
// copies bits, so one kernel per element size serves every dtype).
cudaError_t LaunchWhere(size_t value_bytes, const NaryArgs& args, uint32_t grid, uint32_t block, cudaStream_t stream);
// Cast with ONNX semantics: float → integer truncates toward zero, saturates and maps NaN to 0;
// integer → integer wraps; → bool is "not zero"; → f16/bf16 rounds to nearest even (once).
cudaError_t LaunchCast(Storage from, Storage to, const void* x, void* y, uint32_t n, uint32_t grid, uint32_t block,
                       cudaStream_t stream);

}  // namespace chipfit::cuda::eltwise
