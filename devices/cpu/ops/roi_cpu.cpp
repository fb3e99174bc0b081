// RoiAlign (opsets 10 and 16) on the CPU: own OpenMP loops over plain NCHW tensors, for
// X in f32, f64, f16 and bf16 (the types the op allows; each computes in double as below).
//
// RoiAlign computes exactly as the reference (core/reference/detection.cpp): sample positions, the
// "outside the map" test (-1 <= y <= H), the clamped corners and the four bilinear weights are computed
// in double from the same expressions, and each bin sums (avg) or maxes (max: the largest weighted
// corner, as ONNX's reference and ONNX Runtime) the weighted corners in double in the reference's order,
// rounding once. Even a weight-0 corner and a sample outside the map (which the reference reads as
// weight 0 at offset 0) are multiplied, so an Inf or NaN in the map reaches the result as there. The
// taps are kept per axis rather than per sample: a RoI's y taps (out_h × grid_h) and x taps (out_w ×
// grid_w) are computed once and their products formed in the loop, which needs no memory in proportion
// to the sample count (adaptive sampling of a large RoI can take thousands of samples per bin).
//
// RoIs × channel blocks run in parallel; each output value is computed by one task in a fixed order, so
// results do not depend on the thread count. A batch index outside the batch is the reference's
// InvalidArgument and is found before anything is read. (MaxRoiPool has no reference kernel, so chipfit does
// not run it on any target.)
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/reference/ref_util.h"
#include "devices/cpu/ops/kernel_groups.h"

namespace chipfit::cpu {
namespace {

// Bilinear taps (a load and a multiply-add each) from which the loops fork OpenMP threads.
constexpr int64_t kParallelTaps = 32768;
// Samples per RoI beyond which the reference refuses the RoI (a run would take hours).
constexpr double kMaxRoiSamples = 1 << 26;
// Channels whose bins one loop computes side by side (AlignPlanes).
constexpr int kLanes = 8;
// Taps per element of X from which RoiAlign reads a channels-last copy of X instead of its planes.
constexpr int64_t kChannelsLastTapsPerElement = 8;

// X's element type as a tag; the factories admit only the float types.
template <typename F>
Status VisitFloatType(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kF32: return f(float{});
    case DType::kF64: return f(double{});
    case DType::kF16: return f(Float16{});
    case DType::kBF16: return f(BFloat16{});
    default: return Internal("RoI kernel run with " + std::string(DTypeName(dtype)) + " X");
  }
}

template <typename T>
double Widen(T v) {
  if constexpr (std::is_same_v<T, double>) {
    return v;
  } else {
    return static_cast<double>(static_cast<float>(v));
  }
}

// A double as the reference prints RoI corners and sample counts (trailing zeros dropped).
std::string Str(double v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
  return s;
}

// The work of a node split into (RoI, channel block) tasks: enough of them for every thread when RoIs
// are few, a whole RoI per task when they are many (its taps are then computed once).
struct TaskSplit {
  int64_t channel_block = 1;
  int64_t blocks_per_roi = 1;
};

TaskSplit SplitTasks(int64_t rois, int64_t channels) {
  const int64_t wanted = 4 * static_cast<int64_t>(omp_get_max_threads());
  TaskSplit s;
  const int64_t per_roi = std::clamp<int64_t>((wanted + rois - 1) / std::max<int64_t>(rois, 1), 1, channels);
  s.channel_block = (channels + per_roi - 1) / per_roi;
  s.blocks_per_roi = (channels + s.channel_block - 1) / s.channel_block;
  return s;
}

// ---------------------------------------------------------------------------------------------------------------
// RoiAlign

struct RoiAlignAttrs {
  bool max = false;
  bool half_pixel = false;  // opset 16's default; opset 10 has no attribute and behaves as output_half_pixel
  int64_t out_h = 1, out_w = 1;
  int64_t sampling_ratio = 0;  // 0: adaptive, ceil(bin size) samples per bin and axis
  double spatial_scale = 1;
};

Result<RoiAlignAttrs> ReadRoiAlignAttrs(const Node& node, int64_t opset) {
  RoiAlignAttrs a;
  const std::string mode = node.GetString("mode", "avg");
  if (mode != "avg" && mode != "max") return Unsupported("mode '" + mode + "' (the reference reports it)");
  a.max = mode == "max";
  if (opset >= 16) {
    const std::string transform = node.GetString("coordinate_transformation_mode", "half_pixel");
    if (transform != "half_pixel" && transform != "output_half_pixel") {
      return Unsupported("coordinate_transformation_mode '" + transform + "' (the reference reports it)");
    }
    a.half_pixel = transform == "half_pixel";
  }
  a.out_h = node.GetInt("output_height", 1);
  a.out_w = node.GetInt("output_width", 1);
  a.sampling_ratio = node.GetInt("sampling_ratio", 0);
  a.spatial_scale = node.GetFloat("spatial_scale", 1.0f);
  if (a.out_h <= 0 || a.out_w <= 0 || a.sampling_ratio < 0) {
    return Unsupported("output size " + std::to_string(a.out_h) + "x" + std::to_string(a.out_w) +
                       " or sampling_ratio " + std::to_string(a.sampling_ratio) + " (the reference reports it)");
  }
  return a;
}

// Where one RoI's samples lie: bin b's sample i along an axis is at start + b·bin + (i + 0.5)·bin/grid.
struct RoiPlan {
  int64_t batch = 0;
  double start_h = 0, start_w = 0, bin_h = 0, bin_w = 0;
  int64_t grid_h = 0, grid_w = 0;
};

// The reference's SampleRoi up to the sample positions, with its error for an absurd sample count.
Result<RoiPlan> PlanRoi(const KernelContext& ctx, const RoiAlignAttrs& a, const double* roi) {
  // output_half_pixel (and opset 10) keeps the legacy pixel model: no -0.5 shift, RoIs at least 1×1.
  const double offset = a.half_pixel ? 0.5 : 0.0;
  RoiPlan p;
  p.start_w = roi[0] * a.spatial_scale - offset;
  p.start_h = roi[1] * a.spatial_scale - offset;
  double roi_w = roi[2] * a.spatial_scale - offset - p.start_w;
  double roi_h = roi[3] * a.spatial_scale - offset - p.start_h;
  if (!a.half_pixel) {
    roi_w = std::max(roi_w, 1.0);
    roi_h = std::max(roi_h, 1.0);
  }
  p.bin_h = roi_h / static_cast<double>(a.out_h);
  p.bin_w = roi_w / static_cast<double>(a.out_w);
  auto grid = [&](double bin) -> int64_t {
    if (a.sampling_ratio > 0) return a.sampling_ratio;
    // A malformed (negative, NaN) RoI gets no samples; the cap keeps the cast defined.
    return bin > 0 ? static_cast<int64_t>(std::ceil(std::min(bin, kMaxRoiSamples))) : 0;
  };
  p.grid_h = grid(p.bin_h);
  p.grid_w = grid(p.bin_w);
  const double total = static_cast<double>(p.grid_h) * static_cast<double>(p.grid_w) * static_cast<double>(a.out_h) *
                       static_cast<double>(a.out_w);
  if (total > kMaxRoiSamples) {
    return ctx.Error("RoI [" + Str(roi[0]) + ", " + Str(roi[1]) + ", " + Str(roi[2]) + ", " + Str(roi[3]) + "] needs " +
                     Str(total) + " samples (" + std::to_string(p.grid_h) + "x" + std::to_string(p.grid_w) +
                     " per bin); sampling_ratio or the RoI is too large");
  }
  return p;
}

// One axis of a sample point: its two neighbouring rows (columns) as offsets into the plane and their
// weights (lo·h + hi·l). `inside` is false for a coordinate more than one pixel outside the map.
struct AxisTap {
  int64_t lo = 0, hi = 0;
  double l = 0, h = 0;
  bool inside = false;
};

// The reference's TapAt along one axis of `size` pixels, `stride` apart.
AxisTap AxisTapAt(double v, int64_t size, int64_t stride) {
  AxisTap t;
  if (!(v >= -1.0 && v <= static_cast<double>(size))) return t;  // NaN fails the test too
  v = std::max(v, 0.0);
  auto low = static_cast<int64_t>(v);
  int64_t high = low + 1;
  if (low >= size - 1) {
    low = high = size - 1;
    v = static_cast<double>(low);
  }
  t.l = v - static_cast<double>(low);
  t.h = 1 - t.l;
  t.lo = low * stride;
  t.hi = high * stride;
  t.inside = true;
  return t;
}

// taps[b * grid + i]: sample i of bin b along one axis, the coordinate computed as in the reference.
void FillAxisTaps(double start, double bin, int64_t bins, int64_t grid, int64_t size, int64_t stride,
                  std::vector<AxisTap>& taps) {
  taps.resize(static_cast<size_t>(bins * grid));
  for (int64_t b = 0; b < bins; ++b) {
    for (int64_t i = 0; i < grid; ++i) {
      const double v =
          start + static_cast<double>(b) * bin + (static_cast<double>(i) + 0.5) * bin / static_cast<double>(grid);
      taps[static_cast<size_t>(b * grid + i)] = AxisTapAt(v, size, stride);
    }
  }
}

// One sample's four weighted corners into its bin's running value, in the reference's order: max keeps the
// largest (the bin's first sample starts it), avg adds them one at a time.
template <bool kMax>
void AddSample(double& acc, bool first, double v0, double v1, double v2, double v3) {
  if constexpr (kMax) {
    const double v = std::max(std::max(std::max(v0, v1), v2), v3);
    acc = first ? v : std::max(acc, v);
  } else {
    acc += v0;
    acc += v1;
    acc += v2;
    acc += v3;
  }
}

// The output bins of one RoI in kLanes channel planes `plane_stride` apart (outputs `bins` apart). Samples
// go y-major, x-minor and corners in the order (low, left), (low, right), (high, left), (high, right), as
// the reference sums them; each channel keeps its own sum in that order, so the result is the reference's
// bit for bit. The channels are interleaved only so that their sums, each a chain of dependent additions,
// overlap in the CPU's pipeline (one channel at a time waits on each addition's latency).
template <typename T, bool kMax, int kLanes>
void AlignPlanes(const T* planes, int64_t plane_stride, const AxisTap* ys, const AxisTap* xs, const RoiAlignAttrs& a,
                 const RoiPlan& p, T* dst) {
  const int64_t bins = a.out_h * a.out_w;
  const int64_t per_bin = p.grid_h * p.grid_w;
  if (per_bin == 0) {  // no samples (an empty RoI, adaptively sampled): the reference's 0
    for (int l = 0; l < kLanes; ++l) std::fill(dst + l * bins, dst + (l + 1) * bins, FromDouble<T>(0.0));
    return;
  }
  // A sample outside the map: the reference's four weight-0 corners at offset 0.
  double outside[kLanes];
  for (int l = 0; l < kLanes; ++l) outside[l] = 0.0 * Widen(planes[l * plane_stride]);
  for (int64_t ph = 0; ph < a.out_h; ++ph) {
    const AxisTap* bin_ys = ys + ph * p.grid_h;
    for (int64_t pw = 0; pw < a.out_w; ++pw) {
      const AxisTap* bin_xs = xs + pw * p.grid_w;
      double acc[kLanes] = {};
      for (int64_t iy = 0; iy < p.grid_h; ++iy) {
        const AxisTap& ty = bin_ys[iy];
        for (int64_t ix = 0; ix < p.grid_w; ++ix) {
          const AxisTap& tx = bin_xs[ix];
          const bool inside = ty.inside && tx.inside;
          // The reference's products, ty·tx first, then the value.
          const double w0 = ty.h * tx.h, w1 = ty.h * tx.l, w2 = ty.l * tx.h, w3 = ty.l * tx.l;
          const int64_t o0 = ty.lo + tx.lo, o1 = ty.lo + tx.hi, o2 = ty.hi + tx.lo, o3 = ty.hi + tx.hi;
          for (int l = 0; l < kLanes; ++l) {
            const T* plane = planes + l * plane_stride;
            double v0 = outside[l], v1 = outside[l], v2 = outside[l], v3 = outside[l];
            if (inside) {
              v0 = w0 * Widen(plane[o0]);
              v1 = w1 * Widen(plane[o1]);
              v2 = w2 * Widen(plane[o2]);
              v3 = w3 * Widen(plane[o3]);
            }
            AddSample<kMax>(acc[l], iy == 0 && ix == 0, v0, v1, v2, v3);
          }
        }
      }
      for (int l = 0; l < kLanes; ++l) {
        if constexpr (!kMax) acc[l] /= static_cast<double>(per_bin);
        dst[l * bins + ph * a.out_w + pw] = FromDouble<T>(acc[l]);
      }
    }
  }
}

// sum[c] += w0·x0[c], then += w1·x1[c], += w2·x2[c], += w3·x3[c], for c in [0, n): the avg loop's four
// corners of one sample, eight channels per vector. Each product and each sum is one IEEE double operation
// as in the scalar loop (this file is compiled with -ffp-contract=off: no fused multiply-adds), so the
// result does not depend on the clone the CPU runs.
__attribute__((target_clones("avx512f", "avx2", "default"))) void AccumulateCorners(double* __restrict sum,
                                                                                    const float* x0, const float* x1,
                                                                                    const float* x2, const float* x3,
                                                                                    double w0, double w1, double w2,
                                                                                    double w3, int64_t n) {
  using F8 = float __attribute__((vector_size(32)));
  using D8 = double __attribute__((vector_size(64)));
  int64_t c = 0;
  for (; c + 8 <= n; c += 8) {
    D8 acc;
    F8 v0, v1, v2, v3;
    std::memcpy(&acc, sum + c, sizeof acc);
    std::memcpy(&v0, x0 + c, sizeof v0);
    std::memcpy(&v1, x1 + c, sizeof v1);
    std::memcpy(&v2, x2 + c, sizeof v2);
    std::memcpy(&v3, x3 + c, sizeof v3);
    acc += w0 * __builtin_convertvector(v0, D8);
    acc += w1 * __builtin_convertvector(v1, D8);
    acc += w2 * __builtin_convertvector(v2, D8);
    acc += w3 * __builtin_convertvector(v3, D8);
    std::memcpy(sum + c, &acc, sizeof acc);
  }
  for (; c < n; ++c) {
    sum[c] += w0 * static_cast<double>(x0[c]);
    sum[c] += w1 * static_cast<double>(x1[c]);
    sum[c] += w2 * static_cast<double>(x2[c]);
    sum[c] += w3 * static_cast<double>(x3[c]);
  }
}

// The same bins for channels [0, n) of one RoI from a channels-last copy of its map (`pixels` points at
// the block's first channel of pixel (0, 0); the taps' offsets step over whole pixels). Each channel's sum
// takes the reference's terms in the reference's order, as above; the loops over channels read
// neighbouring memory and vectorise. `acc` holds n doubles.
template <typename T, bool kMax>
void AlignChannelsLast(const T* pixels, int64_t n, const AxisTap* ys, const AxisTap* xs, const RoiAlignAttrs& a,
                       const RoiPlan& p, T* dst, double* acc) {
  const int64_t bins = a.out_h * a.out_w;
  const int64_t per_bin = p.grid_h * p.grid_w;
  if (per_bin == 0) {  // no samples (an empty RoI, adaptively sampled): the reference's 0
    for (int64_t c = 0; c < n; ++c) std::fill(dst + c * bins, dst + (c + 1) * bins, FromDouble<T>(0.0));
    return;
  }
  for (int64_t ph = 0; ph < a.out_h; ++ph) {
    const AxisTap* bin_ys = ys + ph * p.grid_h;
    for (int64_t pw = 0; pw < a.out_w; ++pw) {
      const AxisTap* bin_xs = xs + pw * p.grid_w;
      std::fill(acc, acc + n, 0.0);
      for (int64_t iy = 0; iy < p.grid_h; ++iy) {
        const AxisTap& ty = bin_ys[iy];
        for (int64_t ix = 0; ix < p.grid_w; ++ix) {
          const AxisTap& tx = bin_xs[ix];
          const bool first = iy == 0 && ix == 0;
          if (!(ty.inside && tx.inside)) {  // the reference's four weight-0 corners at offset 0
            for (int64_t c = 0; c < n; ++c) {
              const double v = 0.0 * Widen(pixels[c]);
              AddSample<kMax>(acc[c], first, v, v, v, v);
            }
            continue;
          }
          const double w0 = ty.h * tx.h, w1 = ty.h * tx.l, w2 = ty.l * tx.h, w3 = ty.l * tx.l;
          const T* __restrict x0 = pixels + ty.lo + tx.lo;
          const T* __restrict x1 = pixels + ty.lo + tx.hi;
          const T* __restrict x2 = pixels + ty.hi + tx.lo;
          const T* __restrict x3 = pixels + ty.hi + tx.hi;
          if constexpr (!kMax && std::is_same_v<T, float>) {
            AccumulateCorners(acc, x0, x1, x2, x3, w0, w1, w2, w3, n);
            continue;
          }
          double* __restrict sum = acc;
          for (int64_t c = 0; c < n; ++c) {
            AddSample<kMax>(sum[c], first, w0 * Widen(x0[c]), w1 * Widen(x1[c]), w2 * Widen(x2[c]), w3 * Widen(x3[c]));
          }
        }
      }
      for (int64_t c = 0; c < n; ++c) {
        dst[c * bins + ph * a.out_w + pw] = FromDouble<T>(kMax ? acc[c] : acc[c] / static_cast<double>(per_bin));
      }
    }
  }
}

class RoiAlignKernel final : public IKernel {
 public:
  explicit RoiAlignKernel(RoiAlignAttrs attrs) : attrs_(attrs) {}

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& rois = *ctx.input(1);
    const Tensor& indices = *ctx.input(2);
    const int64_t num_rois = indices.numel();
    if (x.rank() != 4 || rois.numel() != num_rois * 4) {
      return ctx.Error("X " + ShapeToString(x.shape()) + ", rois " + ShapeToString(rois.shape()) +
                       " and batch_indices " + ShapeToString(indices.shape()) + " do not agree");
    }
    const int64_t channels = x.dim(1), height = x.dim(2), width = x.dim(3);
    if (height == 0 || width == 0) {
      return ctx.Error("X " + ShapeToString(x.shape()) + " has no pixels to sample (H or W is 0)");
    }
    if (ctx.output(0) == nullptr || ctx.output(0)->numel() != num_rois * channels * attrs_.out_h * attrs_.out_w) {
      return ctx.Error("the output does not have the expected size");
    }
    RETURN_IF_ERROR(Plan(ctx, x.dim(0)));
    if (ctx.output(0)->numel() == 0) return Status();
    return VisitFloatType(x.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      T* out = ctx.output(0)->data<T>();
      if (height == 0 || width == 0) {  // every sample lies outside an empty map
        std::fill(out, out + ctx.output(0)->numel(), FromDouble<T>(0.0));
        return Status();
      }
      if (attrs_.max) {
        Align<T, true>(x.data<T>(), x.dim(0), channels, height, width, out);
      } else {
        Align<T, false>(x.data<T>(), x.dim(0), channels, height, width, out);
      }
      return Status();
    });
  }

 private:
  // Every RoI's batch and sample grid, in RoI order, stopping at the first error as the reference does.
  Status Plan(const KernelContext& ctx, int64_t batches) {
    const Tensor& rois = *ctx.input(1);
    const Tensor& indices = *ctx.input(2);
    const int64_t num_rois = indices.numel();
    plans_.resize(static_cast<size_t>(num_rois));
    for (int64_t r = 0; r < num_rois; ++r) {
      const int64_t batch = indices.GetAsInt64(r);
      if (batch < 0 || batch >= batches) {
        return ctx.Error("batch_indices[" + std::to_string(r) + "] = " + std::to_string(batch) + " is outside [0, " +
                         std::to_string(batches) + ")");
      }
      const double roi[4] = {rois.GetAsDouble(r * 4), rois.GetAsDouble(r * 4 + 1), rois.GetAsDouble(r * 4 + 2),
                             rois.GetAsDouble(r * 4 + 3)};
      ASSIGN_OR_RETURN(plans_[static_cast<size_t>(r)], PlanRoi(ctx, attrs_, roi));
      plans_[static_cast<size_t>(r)].batch = batch;
    }
    return Status();
  }

  template <typename T, bool kMax>
  void Align(const T* in, int64_t batches, int64_t channels, int64_t height, int64_t width, T* out) const {
    const auto num_rois = static_cast<int64_t>(plans_.size());
    const int64_t bins = attrs_.out_h * attrs_.out_w;
    const int64_t plane = height * width;
    int64_t samples = 0;
    for (const RoiPlan& p : plans_) samples += p.grid_h * p.grid_w;
    const int64_t taps = samples * bins * channels * 4;
    // Many taps per element of X (detectors pool hundreds of RoIs from small maps): a channels-last copy
    // of X first, so that the channel loops read neighbouring memory. Few taps (a handful of RoIs on a
    // large map): the planes as they are, a copy would cost more than it saves.
    const bool channels_last = taps >= kChannelsLastTapsPerElement * batches * channels * plane;
    const TaskSplit split = SplitTasks(num_rois, channels);
    const int64_t tasks = num_rois * split.blocks_per_roi;
    const bool parallel = tasks > 1 && taps >= kParallelTaps;
    std::vector<T> hwc;
    if (channels_last) {
      hwc.resize(static_cast<size_t>(batches * channels * plane));
      const int64_t pixels = batches * plane;
#pragma omp parallel for schedule(static) if (parallel)
      for (int64_t px = 0; px < pixels; ++px) {
        const int64_t b = px / plane, at = px % plane;
        T* to = hwc.data() + px * channels;
        const T* from = in + b * channels * plane + at;
        for (int64_t c = 0; c < channels; ++c) to[c] = from[c * plane];
      }
    }
    const RoiAlignAttrs a = attrs_;
    const RoiPlan* plans = plans_.data();
    const T* hwc_data = hwc.data();
#pragma omp parallel if (parallel)
    {
      std::vector<AxisTap> ys, xs;
      std::vector<double> acc(channels_last ? static_cast<size_t>(split.channel_block) : 0);
      int64_t tapped = -1;  // the RoI whose taps ys and xs hold
                            // Dynamic: RoIs differ in size and, adaptively sampled, in samples per bin.
#pragma omp for schedule(dynamic, 1)
      for (int64_t task = 0; task < tasks; ++task) {
        const int64_t r = task / split.blocks_per_roi;
        const int64_t c0 = task % split.blocks_per_roi * split.channel_block;
        const int64_t c1 = std::min(channels, c0 + split.channel_block);
        const RoiPlan& p = plans[r];
        if (p.grid_h * p.grid_w > 0 && tapped != r) {
          // Channels-last: a row is width pixels of `channels` values, a pixel `channels` values.
          const int64_t row = channels_last ? width * channels : width;
          const int64_t pixel = channels_last ? channels : 1;
          FillAxisTaps(p.start_h, p.bin_h, a.out_h, p.grid_h, height, row, ys);
          FillAxisTaps(p.start_w, p.bin_w, a.out_w, p.grid_w, width, pixel, xs);
          tapped = r;
        }
        T* dst = out + (r * channels + c0) * bins;
        if (channels_last) {
          AlignChannelsLast<T, kMax>(hwc_data + p.batch * plane * channels + c0, c1 - c0, ys.data(), xs.data(), a, p,
                                     dst, acc.data());
          continue;
        }
        int64_t c = c0;
        for (; c + kLanes <= c1; c += kLanes) {
          AlignPlanes<T, kMax, kLanes>(in + (p.batch * channels + c) * plane, plane, ys.data(), xs.data(), a, p,
                                       out + (r * channels + c) * bins);
        }
        for (; c < c1; ++c) {
          AlignPlanes<T, kMax, 1>(in + (p.batch * channels + c) * plane, plane, ys.data(), xs.data(), a, p,
                                  out + (r * channels + c) * bins);
        }
      }
    }
  }

  RoiAlignAttrs attrs_;
  std::vector<RoiPlan> plans_;
};

// Refusals name what the kernel does not take; inputs the reference would reject say so.
Status CheckRoiInputs(const KernelInit& init, size_t rois_width, bool integer_indices) {
  const size_t needed = integer_indices ? 3 : 2;
  for (size_t i = 0; i < needed; ++i) {
    if (i >= init.inputs.size() || init.inputs[i] == nullptr) {
      return Unsupported("an input is missing (the reference reports it)");
    }
  }
  const ValueInfo& x = *init.inputs[0];
  const ValueInfo& rois = *init.inputs[1];
  if (!IsFloatingDType(x.dtype)) {
    return Unsupported(std::string(DTypeName(x.dtype)) + " X (f32, f64, f16 and bf16 only, as the op allows)");
  }
  if (!IsFloatingDType(rois.dtype)) {
    return Unsupported(std::string(DTypeName(rois.dtype)) + " rois (floating point only, as the op allows)");
  }
  if (integer_indices && !IsIntegerDType(init.inputs[2]->dtype)) {
    return Unsupported(std::string(DTypeName(init.inputs[2]->dtype)) +
                       " batch_indices (integers only, as the op allows)");
  }
  if (x.shape.size() != 4) return Unsupported("X of rank " + std::to_string(x.shape.size()) + " (4-D only)");
  if (rois.shape.size() != 2 || (rois.shape[1] >= 0 && rois.shape[1] != static_cast<int64_t>(rois_width))) {
    return Unsupported("rois " + ShapeToString(rois.shape) + " (must be [num_rois, " + std::to_string(rois_width) +
                       "])");
  }
  return Status();
}

Result<std::unique_ptr<IKernel>> CreateRoiAlign(const KernelInit& init) {
  RETURN_IF_ERROR(CheckRoiInputs(init, 4, true));
  ASSIGN_OR_RETURN(const RoiAlignAttrs attrs, ReadRoiAlignAttrs(init.node, init.opset));
  return std::unique_ptr<IKernel>(std::make_unique<RoiAlignKernel>(attrs));
}

}  // namespace

void AddRoiKernels(KernelTable& t) {
  constexpr auto kCpu = DeviceKind::kCpu;
  constexpr auto kFp32 = Precision::kFp32;
  t.Add("RoiAlign", "", kCpu, kFp32, {"cpu:roi-align", CreateRoiAlign});
}

}  // namespace chipfit::cpu
