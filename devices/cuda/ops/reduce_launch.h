// The interface between the reduce family's host side (reduce_cuda.cpp, C++20) and its device code
// (reduce.cu, compiled by nvcc as C++17): plain structs and enums, the launchers, and the pure
// planning that both sides and the host-only tests share. No project header that needs C++20.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace chipfit::cuda {

struct GpuShape;

// How a float tensor is stored on the device (CudaContext::StorageType); kernels accumulate in float.
enum class StoreType : int { kF32, kF16, kBf16 };

enum class ReduceKind : int { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

// A tensor seen as outer × n × inner: rows of n values spaced `inner` apart, outer · inner rows.
struct RowView {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
  int64_t rows() const { return outer * inner; }
  bool operator==(const RowView& o) const { return outer == o.outer && n == o.n && inner == o.inner; }
};

// How a row kernel is launched: a block per row (contiguous rows long enough to share) or a thread
// per row (strided or short rows: neighbouring threads then read neighbouring addresses).
struct RowLaunch {
  bool block_per_row = false;
  uint32_t grid = 1;
  uint32_t block = 1;
};

// LayerNormalization and InstanceNormalization: contiguous rows of n normalised one block each.
// Row r's parameters are param[r % channels] when `per_channel` (instance norm), else element j of
// the row takes scale[j % scale_n] and bias[j % bias_n] (a layer-norm parameter over trailing dims).
struct NormParams {
  int64_t rows = 1;
  int64_t n = 1;
  int64_t channels = 1;
  int64_t scale_n = 1;
  int64_t bias_n = 1;
  bool per_channel = false;
  float epsilon = 1e-5f;
};

// Inference BatchNormalization: element i takes the parameters of channel (i / plane) % channels.
struct BatchNormParams {
  int64_t total = 0;
  int64_t plane = 1;
  int64_t channels = 1;
  float epsilon = 1e-5f;
};

// ---- pure planning (host code; tested without a GPU)

// Rows of dims [0, axis) × dim axis × dims (axis, rank); `flatten` (Softmax before opset 13) makes
// each row everything from `axis` on. `axis` is already in [0, rank] (rank only when flattening).
inline RowView RowsAlong(const std::vector<int64_t>& shape, size_t axis, bool flatten) {
  RowView v;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d < axis) {
      v.outer *= shape[d];
    } else if (d == axis || flatten) {
      v.n *= shape[d];
    } else {
      v.inner *= shape[d];
    }
  }
  return v;
}

// The reduction of the dims marked in `reduced` as outer × n × inner, when the reduced dims form
// one run once dims of 1 are ignored; nullopt when kept dims lie between reduced ones.
inline std::optional<RowView> CollapseReduction(const std::vector<int64_t>& shape, const std::vector<bool>& reduced) {
  RowView v;
  int phase = 0;  // 0: before the reduced run, 1: inside it, 2: after it
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    const bool r = d < reduced.size() && reduced[d];
    if (r && phase == 2) return std::nullopt;
    if (r) phase = 1;
    if (!r && phase == 1) phase = 2;
    (phase == 0 ? v.outer : phase == 1 ? v.n : v.inner) *= shape[d];
  }
  return v;
}

// Contiguous rows at least this long get a block each.
constexpr int64_t kBlockPerRowFrom = 64;

// The launch of a row kernel over `view` on `gpu` (defined in reduce_cuda.cpp).
RowLaunch PlanRowLaunch(const RowView& view, const GpuShape& gpu);

// ---- launchers: the launch's own error (cudaGetLastError); nothing is launched for empty work.

// Softmax (or LogSoftmax) along n, the row max subtracted.
cudaError_t LaunchSoftmax(const void* x, void* y, StoreType type, RowView view, bool log, RowLaunch launch,
                          cudaStream_t stream);
// y[outer × inner] = the reduction of x along n.
cudaError_t LaunchReduce(const void* x, void* y, StoreType type, ReduceKind kind, RowView view, RowLaunch launch,
                         cudaStream_t stream);
// (x − mean) / sqrt(var + epsilon) · scale + bias per row; bias may be null. One block of `block`
// threads per row, `grid` blocks striding over the rows.
cudaError_t LaunchRowNorm(const void* x, const void* scale, const void* bias, void* y, StoreType type,
                          NormParams params, uint32_t grid, uint32_t block, cudaStream_t stream);
cudaError_t LaunchBatchNorm(const void* x, const void* scale, const void* bias, const void* mean, const void* var,
                            void* y, StoreType type, BatchNormParams params, uint32_t grid, uint32_t block,
                            cudaStream_t stream);

}  // namespace chipfit::cuda
