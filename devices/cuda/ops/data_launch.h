// What data_cuda.cpp (the host side, C++20) and data.cu (device code, C++17) share: the plans of the
// pooling, resize and data-movement kernels as plain structs, and the launchers. Kept free of project
// headers so that nvcc compiles it in C++17; the pure planners are declared here too so that tests
// reach them on machines without a GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace chipfit::cuda::data {

// Rank of a strided walk after collapsing (Transpose, Slice, Concat, Pad, Resize).
constexpr int kMaxRank = 8;
// Indices and offsets are 32-bit (64-bit divisions are emulated and several times slower).
constexpr int64_t kMaxElements = (int64_t{1} << 31) - 1;

// Float storage of the computing kernels (pooling, linear resize): computed in float.
enum class FloatStorage : uint8_t { kF32, kF16, kBF16 };

// ---- strided copy: Transpose, Slice (steps included), Concat (one copy per input)

// dst[dst_offset + Σ c_d·dst_strides[d]] = src[src_offset + Σ c_d·src_strides[d]] for every coordinate
// c of `dims` (outermost first), in units of `unit` bytes (1, 2, 4, 8 or 16: a contiguous innermost
// run moves as wider units when it splits evenly). Source strides may be negative (negative steps).
struct StridedCopy {
  int32_t rank = 1;
  uint32_t numel = 0;
  uint32_t unit = 1;
  uint32_t dims[kMaxRank] = {};
  int32_t src_strides[kMaxRank] = {};
  int32_t dst_strides[kMaxRank] = {};
  int64_t src_offset = 0;  // in units
  int64_t dst_offset = 0;
  // One contiguous run on both sides: a cudaMemcpyAsync.
  bool Contiguous() const { return rank == 1 && src_strides[0] == 1 && dst_strides[0] == 1; }
};

// Plans a copy of elements of `elem_bytes` (strides and offsets in elements): drops dims of 1, merges
// neighbours that are contiguous on both sides, widens the innermost contiguous run and checks the
// 32-bit limits. Empty on success, else why it cannot be planned.
std::string PlanStridedCopy(const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides,
                            const std::vector<int64_t>& dst_strides, int64_t src_offset, int64_t dst_offset,
                            size_t elem_bytes, StridedCopy& plan);

// ---- pooling

enum class PoolKind : uint8_t { kMax, kAverage };

// A 1-D to 3-D window over planes of (D, H, W) (leading spatial dims of 1 for 1-D and 2-D).
struct PoolWindow {
  uint32_t numel = 0;  // outputs: planes × out plane
  int32_t in[3] = {1, 1, 1};
  int32_t out[3] = {1, 1, 1};
  int32_t kernel[3] = {1, 1, 1};
  int32_t strides[3] = {1, 1, 1};
  int32_t dilations[3] = {1, 1, 1};
  int32_t pad_begin[3] = {};
  int32_t pad_end[3] = {};
  int32_t include_pad = 0;  // AveragePool count_include_pad: taps on padding count (not the ceil overhang)
};

// ---- resize

// One output coordinate along one dim: the two source offsets (element offsets, already times the
// dim's stride), the weight of the second (0 for nearest) and whether it lies outside a
// tf_crop_and_resize crop (extrapolation_value).
struct ResizeTap {
  int32_t i0 = 0;
  int32_t i1 = 0;
  float w = 0.0f;
  int32_t outside = 0;
};

enum class ResizeTransform : uint8_t {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize,
};
enum class NearestMode : uint8_t { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

// How output coordinates map to input coordinates, per dim (the ONNX formulas, in double).
struct ResizeCoords {
  bool linear = false;  // else nearest
  ResizeTransform transform = ResizeTransform::kHalfPixel;
  NearestMode nearest = NearestMode::kRoundPreferFloor;
  std::vector<double> scale, roi_start, roi_end;  // one per dim
};

struct ResizeWalk {
  int32_t rank = 1;
  uint32_t numel = 0;
  uint32_t out[kMaxRank] = {};
  uint32_t tap_offset[kMaxRank] = {};  // where each dim's taps start in the table
};

// The tap table of a resize from `in` to `out` (one run of taps per dim, dims one after another) and
// its walk. Empty on success, else why not (rank over kMaxRank, 2^31 or more values, an empty input
// resized to a non-empty output).
std::string PlanResize(const ResizeCoords& coords, const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                       ResizeWalk& walk, std::vector<ResizeTap>& taps);

// ---- pad

enum class PadMode : uint8_t { kConstant, kEdge, kReflect, kWrap };

struct PadWalk {
  int32_t rank = 1;
  uint32_t numel = 0;
  uint32_t out[kMaxRank] = {};
  int32_t in[kMaxRank] = {};
  int32_t begin[kMaxRank] = {};
};

// Merges neighbouring dims that are not padded (fewer divisions; room for inputs of rank over 8).
// `begin` may be negative (a negative pad crops). Empty on success, else why not.
std::string PlanPad(const std::vector<int64_t>& in, const std::vector<int64_t>& out, const std::vector<int64_t>& begin,
                    PadWalk& walk);

// ---- gather

struct GatherWalk {
  uint32_t numel = 0;  // outer × count × inner
  uint32_t inner = 1;  // units per gathered block
  uint32_t count = 0;  // indices
  int32_t axis_dim = 0;
  uint32_t unit = 1;  // bytes per unit: 1, 2, 4, 8 or 16
};

// Gather of `axis` over data `in` with `count` indices, elements of `elem_bytes`; the gathered blocks
// move as wider units when they split evenly. Empty on success, else why not.
std::string PlanGather(const std::vector<int64_t>& in, size_t axis, int64_t count, size_t elem_bytes, GatherWalk& walk);

// Launchers: the launch's own error (cudaGetLastError), cudaErrorInvalidValue for a combination that
// is not compiled (the host plan refuses those first). `src`/`dst` are the buffers' starts.
cudaError_t LaunchStridedCopy(const StridedCopy& plan, const void* src, void* dst, uint32_t grid, uint32_t block,
                              cudaStream_t stream);
// One output per thread (grid stride); max takes the first tap and then any larger value, so a
// NaN is kept only where it comes first (the reference's rule); a window wholly on padding is NaN.
cudaError_t LaunchPool(PoolKind kind, FloatStorage storage, const PoolWindow& w, const void* x, void* y, uint32_t grid,
                       uint32_t block, cudaStream_t stream);
// One warp per plane of `plane` values; `planes` planes.
cudaError_t LaunchGlobalPool(PoolKind kind, FloatStorage storage, uint32_t planes, uint32_t plane, const void* x,
                             void* y, uint32_t grid, uint32_t block, cudaStream_t stream);
// Nearest copies elements of `elem_bytes` (any dtype); `fill` holds extrapolation_value's bits.
cudaError_t LaunchResizeNearest(size_t elem_bytes, const ResizeWalk& walk, const ResizeTap* taps, uint64_t fill,
                                const void* x, void* y, uint32_t grid, uint32_t block, cudaStream_t stream);
// n-linear in float over the dims whose taps have a weight.
cudaError_t LaunchResizeLinear(FloatStorage storage, const ResizeWalk& walk, const ResizeTap* taps, float fill,
                               const void* x, void* y, uint32_t grid, uint32_t block, cudaStream_t stream);
// `value` holds the constant's bits in the storage type (low bytes).
cudaError_t LaunchPad(PadMode mode, size_t elem_bytes, const PadWalk& walk, uint64_t value, const void* x, void* y,
                      uint32_t grid, uint32_t block, cudaStream_t stream);
// Indices of int32 or int64 (`index_bytes` 4 or 8), negative ones counted from the end; an index out
// of range writes zeros (constant indices are checked on the host).
cudaError_t LaunchGather(const GatherWalk& walk, size_t index_bytes, const void* x, const void* indices, void* y,
                         uint32_t grid, uint32_t block, cudaStream_t stream);

}  // namespace chipfit::cuda::data
