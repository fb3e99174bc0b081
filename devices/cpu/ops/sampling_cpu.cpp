// Sampling ops in fp32 as own OpenMP loops over plain tensors: Resize in mode cubic (oneDNN's resampling
// has no cubic) and in any mode where oneDNN cannot take it (scales or sizes computed at run time, crop
// and resize, antialiasing …) or form (Resize-10, Upsample), NonMaxSuppression and GridSample. Each matches
// core/reference (resize.cpp, detection.cpp): coordinates, tap positions and weights are computed in double exactly as
// there; only the weighted sums run in float (the reference sums in double and rounds once).
//
// Scales, sizes, RoIs and thresholds may be known only at run time: every kernel plans from the tensors it
// is run with. NonMaxSuppression's output length depends on the data: its kernel allocates the output
// itself (IKernel::AllocatesOutputs), so the executor does not run the op's shape function first, which
// for NMS would be the reference's whole selection once more.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/reference/grid_sample.h"
#include "core/reference/ref_util.h"
#include "devices/cpu/ops/kernel_groups.h"

namespace chipfit::cpu {
namespace {

// Multiply-adds from which the loops fork OpenMP threads (a fork/join costs ~1 µs on the 2-core
// development VM; a tap is a load and a multiply-add).
constexpr int64_t kParallelTaps = 32768;

Status RequireF32Input(const KernelInit& init, size_t i, const char* what) {
  const ValueInfo* in = i < init.inputs.size() ? init.inputs[i] : nullptr;
  if (in == nullptr) return Unsupported(std::string("input '") + what + "' is missing");
  if (in->dtype != DType::kF32) return Unsupported(std::string(DTypeName(in->dtype)) + " " + what);
  return Status();
}

// Present and not empty (an empty tensor marks an omitted Resize input, as in the reference).
const Tensor* GivenInput(const KernelContext& ctx, size_t i) {
  const Tensor* t = ctx.input(i);
  return t != nullptr && t->numel() > 0 ? t : nullptr;
}

// ---------------------------------------------------------------------------------------------------------------
// Resize: separable passes, one per resized axis, each a weighted sum of whole rows (or of values within
// a row for the innermost axis). The taps of an output coordinate are those of the reference: one tap
// of weight 1 (nearest, by nearest_mode), the triangle (linear) or Keys' kernel with cubic_coeff_a
// (cubic), stretched by 1/scale when antialiasing a downscale, taps outside the input dropped
// (exclude_outside) or clamped to the edge, weights normalised to sum 1.

struct ResizeAttrs {
  std::string mode;     // nearest | linear | cubic
  std::string nearest;  // nearest_mode
  std::string transform;
  double a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  float extrapolation = 0;
  std::vector<int64_t> axes;  // empty: all
  std::string policy;
  // Where the scales come from: Resize-11 on reads roi (1), scales (2), sizes (3); Resize-10 and
  // Upsample-9 read scales as input 1; Upsample-7 has a scales attribute (`fixed_scales`).
  int roi_input = 1, scales_input = 2, sizes_input = 3;
  std::vector<double> fixed_scales;
};

constexpr const char* kTransforms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                       "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};

// Everything one axis's taps depend on.
struct AxisKey {
  int64_t in = 0, out = 0;
  double scale = 1, roi_start = 0, roi_end = 1;
  bool operator==(const AxisKey&) const = default;
};

// The taps of every output coordinate along one axis, `stride` slots each; count 0: outside the crop
// (tf_crop_and_resize), the output takes extrapolation_value.
struct AxisTaps {
  AxisKey key;
  int64_t stride = 0;
  std::vector<int64_t> index;
  std::vector<float> weight;
  std::vector<int32_t> count;
  bool identity = false;  // output o is input o: no pass needed
  bool any_outside = false;
};

double CubicKernel(double t, double a) {
  t = std::fabs(t);
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0;
}

// Output coordinate o → input coordinate, per coordinate_transformation_mode (the ONNX spec's formulas,
// with length_resized = in · scale before flooring, as the reference).
double ResizeSourceCoord(const std::string& transform, const AxisKey& k, int64_t o) {
  const auto x = static_cast<double>(o);
  const auto in = static_cast<double>(k.in);
  const double s = k.scale, resized = in * s;
  if (transform == "asymmetric") return x / s;
  if (transform == "tf_half_pixel_for_nn") return (x + 0.5) / s;
  if (transform == "align_corners") return resized == 1 ? 0.0 : x * (in - 1) / (resized - 1);
  if (transform == "pytorch_half_pixel") return k.out > 1 ? (x + 0.5) / s - 0.5 : 0.0;
  if (transform == "tf_crop_and_resize") {
    const double lo = k.roi_start, hi = k.roi_end;
    return resized > 1 ? lo * (in - 1) + x * (hi - lo) * (in - 1) / (resized - 1) : 0.5 * (lo + hi) * (in - 1);
  }
  if (transform == "half_pixel_symmetric") {
    return in / 2 * (1 - static_cast<double>(k.out) / resized) + (x + 0.5) / s - 0.5;
  }
  return (x + 0.5) / s - 0.5;  // half_pixel
}

// nearest_mode's rounding of a source coordinate; "simple" is Resize-10's and Upsample's: floor when
// upsampling, ceil when downsampling.
int64_t NearestIndex(const std::string& mode, double x, double scale) {
  const double f = std::floor(x);
  if (mode == "simple") return static_cast<int64_t>(scale < 1 ? std::ceil(x) : f);
  if (mode == "floor") return static_cast<int64_t>(f);
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  if (x - f == 0.5) return static_cast<int64_t>(mode == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::round(x));
}

AxisTaps PlanAxis(const ResizeAttrs& a, const AxisKey& k) {
  AxisTaps taps;
  taps.key = k;
  const bool nearest = a.mode == "nearest", linear = a.mode == "linear";
  const double s = a.antialias && !nearest ? std::min(k.scale, 1.0) : 1.0;
  const double support = nearest ? 0.0 : (linear ? 1.0 : 2.0) / s;
  taps.stride = static_cast<int64_t>(std::floor(2 * support)) + 2;  // indices in [x − support, x + support]
  const auto slots = static_cast<size_t>(k.out * taps.stride);
  taps.index.assign(slots, 0);
  taps.weight.assign(slots, 0.0f);
  taps.count.assign(static_cast<size_t>(k.out), 0);
  taps.identity = k.in == k.out;
  std::vector<double> w;
  std::vector<int64_t> at;
  for (int64_t o = 0; o < k.out; ++o) {
    const double x = ResizeSourceCoord(a.transform, k, o);
    w.clear();
    at.clear();
    const bool crop = a.transform == "tf_crop_and_resize";
    if (nearest && (!crop || (x >= 0 && x <= static_cast<double>(k.in - 1)))) {
      at.push_back(std::clamp<int64_t>(NearestIndex(a.nearest, x, k.scale), 0, k.in - 1));
      w.push_back(1.0);
    } else if (!crop || (x >= 0 && x <= static_cast<double>(k.in - 1))) {
      double total = 0;
      const auto last = static_cast<int64_t>(std::floor(x + support));
      for (auto i = static_cast<int64_t>(std::ceil(x - support)); i <= last; ++i) {
        const double t = (static_cast<double>(i) - x) * s;
        double v = linear ? std::max(0.0, 1 - std::fabs(t)) : CubicKernel(t, a.a);
        if (a.exclude_outside && (i < 0 || i >= k.in)) v = 0;
        if (v == 0) continue;
        at.push_back(std::clamp<int64_t>(i, 0, k.in - 1));
        w.push_back(v);
        total += v;
      }
      for (double& v : w) v /= total;
    }
    const auto base = static_cast<size_t>(o * taps.stride);
    const size_t n = std::min(w.size(), static_cast<size_t>(taps.stride));
    for (size_t t = 0; t < n; ++t) {
      taps.index[base + t] = at[t];
      taps.weight[base + t] = static_cast<float>(w[t]);
    }
    taps.count[static_cast<size_t>(o)] = static_cast<int32_t>(n);
    taps.any_outside = taps.any_outside || n == 0;
    taps.identity = taps.identity && n == 1 && at[0] == o && w[0] == 1.0;
  }
  return taps;
}

// dst(o, j, i) = Σ_t weight(j, t) · src(o, index(j, t), i) for a tensor viewed as (outer, length, inner).
void ResamplePass(const float* src, float* dst, int64_t outer, int64_t inner, const AxisTaps& taps) {
  const int64_t len_in = taps.key.in, len_out = taps.key.out, stride = taps.stride;
  const int64_t work = outer * len_out * inner * std::max<int64_t>(1, stride / 2);
  if (inner == 1) {
#pragma omp parallel for schedule(static) if (work >= kParallelTaps && outer > 1)
    for (int64_t o = 0; o < outer; ++o) {
      const float* s = src + o * len_in;
      float* d = dst + o * len_out;
      for (int64_t j = 0; j < len_out; ++j) {
        const int64_t* index = taps.index.data() + j * stride;
        const float* weight = taps.weight.data() + j * stride;
        float acc = 0;
        for (int32_t t = 0; t < taps.count[static_cast<size_t>(j)]; ++t) acc += weight[t] * s[index[t]];
        d[j] = acc;
      }
    }
    return;
  }
  const int64_t rows = outer * len_out;
#pragma omp parallel for schedule(static) if (work >= kParallelTaps && rows > 1)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t o = row / len_out, j = row % len_out;
    const int64_t* index = taps.index.data() + j * stride;
    const float* weight = taps.weight.data() + j * stride;
    const int32_t count = taps.count[static_cast<size_t>(j)];
    float* d = dst + row * inner;
    if (count == 0) {
      std::fill(d, d + inner, 0.0f);  // outside the crop; overwritten with extrapolation_value at the end
      continue;
    }
    const float* s0 = src + (o * len_in + index[0]) * inner;
    const float w0 = weight[0];
#pragma omp simd
    for (int64_t i = 0; i < inner; ++i) d[i] = w0 * s0[i];
    for (int32_t t = 1; t < count; ++t) {
      const float* s = src + (o * len_in + index[t]) * inner;
      const float w = weight[t];
#pragma omp simd
      for (int64_t i = 0; i < inner; ++i) d[i] += w * s[i];
    }
  }
}

class ResizeSeparableKernel final : public IKernel {
 public:
  explicit ResizeSeparableKernel(ResizeAttrs attrs) : attrs_(std::move(attrs)) {}

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    Tensor& y = *ctx.output(0);
    if (y.numel() == 0) return Status();
    if (x.numel() == 0) return ctx.Error("cannot resize an empty input to a non-empty output");
    if (y.rank() != x.rank()) return Internal(ctx.node().Describe() + ": output of another rank than the input");
    std::vector<AxisKey> keys;
    RETURN_IF_ERROR(AxisKeys(ctx, x.shape(), y.shape(), keys));
    if (axes_.size() != keys.size()) axes_.assign(keys.size(), AxisTaps{});
    for (size_t d = 0; d < keys.size(); ++d) {
      if (axes_[d].count.empty() || !(axes_[d].key == keys[d])) axes_[d] = PlanAxis(attrs_, keys[d]);
    }

    // Axes that change the data, the most shrinking first (fewer values for the later passes).
    std::vector<size_t> order;
    for (size_t d = 0; d < axes_.size(); ++d) {
      if (!axes_[d].identity) order.push_back(d);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t p, size_t q) { return keys[p].out * keys[q].in < keys[q].out * keys[p].in; });
    const float* src = x.data<float>();
    float* out = y.data<float>();
    if (order.empty()) std::memcpy(out, src, x.nbytes());
    Shape cur = x.shape();
    for (size_t p = 0; p < order.size(); ++p) {
      const size_t d = order[p];
      const int64_t outer = NumElements(Shape(cur.begin(), cur.begin() + static_cast<int64_t>(d)));
      const int64_t inner = NumElements(Shape(cur.begin() + static_cast<int64_t>(d) + 1, cur.end()));
      cur[d] = keys[d].out;
      float* dst = out;
      if (p + 1 < order.size()) {
        std::vector<float>& buffer = scratch_[p % 2];
        buffer.resize(static_cast<size_t>(NumElements(cur)));
        dst = buffer.data();
      }
      ResamplePass(src, dst, outer, inner, axes_[d]);
      src = dst;
    }
    FillOutside(y);
    return Status();
  }

 private:
  // Per axis: input and output length, the scale the coordinate transforms use and the crop, from the
  // scales or sizes (and roi) inputs as the reference's plan reads them.
  Status AxisKeys(const KernelContext& ctx, const Shape& in, const Shape& out, std::vector<AxisKey>& keys) const {
    const auto rank = static_cast<int64_t>(in.size());
    std::vector<int64_t> axes = attrs_.axes;
    if (axes.empty()) {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    ASSIGN_OR_RETURN(axes, NormalizeAxes(axes, rank, ctx.node()));
    const size_t n = axes.size();
    keys.assign(in.size(), AxisKey{});
    for (size_t d = 0; d < in.size(); ++d) {
      keys[d].in = in[d];
      keys[d].out = out[d];
    }
    const Tensor* roi = attrs_.roi_input < 0 ? nullptr : GivenInput(ctx, attrs_.roi_input);
    const Tensor* scales = attrs_.scales_input < 0 ? nullptr : GivenInput(ctx, attrs_.scales_input);
    const Tensor* sizes = attrs_.sizes_input < 0 ? nullptr : GivenInput(ctx, attrs_.sizes_input);
    if (!attrs_.fixed_scales.empty()) {
      if (attrs_.fixed_scales.size() != n) return ctx.Error("scales do not match the resized axes");
      for (size_t i = 0; i < n; ++i) keys[static_cast<size_t>(axes[i])].scale = attrs_.fixed_scales[i];
    } else if (scales != nullptr) {
      if (scales->numel() != static_cast<int64_t>(n)) return ctx.Error("scales do not match the resized axes");
      for (size_t i = 0; i < n; ++i)
        keys[static_cast<size_t>(axes[i])].scale = scales->GetAsDouble(static_cast<int64_t>(i));
    } else if (sizes != nullptr) {
      if (sizes->numel() != static_cast<int64_t>(n)) return ctx.Error("sizes do not match the resized axes");
      for (size_t i = 0; i < n; ++i) {
        AxisKey& k = keys[static_cast<size_t>(axes[i])];
        k.scale = k.in > 0 ? static_cast<double>(sizes->GetAsInt64(static_cast<int64_t>(i))) / static_cast<double>(k.in)
                           : 1.0;
      }
      if (attrs_.policy != "stretch") {
        // One scale for every resized axis keeps the aspect ratio.
        const bool smaller = attrs_.policy == "not_larger";
        double s = keys[static_cast<size_t>(axes[0])].scale;
        for (int64_t a : axes) {
          const double v = keys[static_cast<size_t>(a)].scale;
          s = smaller ? std::min(s, v) : std::max(s, v);
        }
        for (int64_t a : axes) keys[static_cast<size_t>(a)].scale = s;
      }
    } else {
      return ctx.Error("needs scales or sizes");
    }
    if (roi != nullptr && attrs_.transform == "tf_crop_and_resize") {
      if (roi->numel() != static_cast<int64_t>(2 * n)) return ctx.Error("roi must hold 2 values per resized axis");
      for (size_t i = 0; i < n; ++i) {
        AxisKey& k = keys[static_cast<size_t>(axes[i])];
        k.roi_start = roi->GetAsDouble(static_cast<int64_t>(i));
        k.roi_end = roi->GetAsDouble(static_cast<int64_t>(i + n));
      }
    }
    return Status();
  }

  // extrapolation_value wherever a coordinate along some axis lies outside the crop.
  void FillOutside(Tensor& y) const {
    const Shape& shape = y.shape();
    float* out = y.data<float>();
    for (size_t d = 0; d < axes_.size(); ++d) {
      if (!axes_[d].any_outside) continue;
      const int64_t outer = NumElements(Shape(shape.begin(), shape.begin() + static_cast<int64_t>(d)));
      const int64_t inner = NumElements(Shape(shape.begin() + static_cast<int64_t>(d) + 1, shape.end()));
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t j = 0; j < shape[d]; ++j) {
          if (axes_[d].count[static_cast<size_t>(j)] != 0) continue;
          float* row = out + (o * shape[d] + j) * inner;
          std::fill(row, row + inner, attrs_.extrapolation);
        }
      }
    }
  }

  ResizeAttrs attrs_;
  std::vector<AxisTaps> axes_;  // per dim, for the shapes and scales of the last run
  std::vector<float> scratch_[2];
};

Result<std::unique_ptr<IKernel>> CreateResizeSeparable(const KernelInit& init) {
  const Node& node = init.node;
  RETURN_IF_ERROR(RequireF32Input(init, 0, "X"));
  ResizeAttrs a;
  a.mode = node.GetString("mode", "nearest");
  if (node.op_type == "Upsample" || init.opset < 11) {
    // Resize-10 and Upsample: asymmetric coordinates, "simple" nearest rounding, no cubic.
    if (a.mode == "bilinear") a.mode = "linear";  // Upsample's early spelling
    if (a.mode != "nearest" && a.mode != "linear") return Unsupported("mode '" + a.mode + "' is unknown");
    a.nearest = "simple";
    a.transform = "asymmetric";
    a.policy = "stretch";
    a.roi_input = a.sizes_input = -1;
    a.scales_input = 1;
    if (node.op_type == "Upsample" && init.opset < 9) {
      a.scales_input = -1;
      for (float v : node.GetFloats("scales")) a.fixed_scales.push_back(v);
      if (a.fixed_scales.empty()) return Unsupported("Upsample-7 without a scales attribute");
    }
    return std::unique_ptr<IKernel>(std::make_unique<ResizeSeparableKernel>(std::move(a)));
  }
  a.nearest = node.GetString("nearest_mode", "round_prefer_floor");
  if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic") {
    return Unsupported("mode '" + a.mode + "' is unknown");
  }
  static const char* kNearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  if (a.mode == "nearest" && std::find(std::begin(kNearest), std::end(kNearest), a.nearest) == std::end(kNearest)) {
    return Unsupported("nearest_mode '" + a.nearest + "' is unknown");
  }
  a.transform = node.GetString("coordinate_transformation_mode", "half_pixel");
  a.a = node.GetFloat("cubic_coeff_a", -0.75f);
  a.exclude_outside = node.GetInt("exclude_outside", 0) != 0;
  a.antialias = init.opset >= 18 && node.GetInt("antialias", 0) != 0;
  a.extrapolation = node.GetFloat("extrapolation_value", 0.0f);
  if (init.opset >= 18) a.axes = node.GetInts("axes");
  a.policy = init.opset >= 18 ? node.GetString("keep_aspect_ratio_policy", "stretch") : "stretch";
  // Values the reference rejects are left to it, so that its error is the one reported.
  if (std::find(std::begin(kTransforms), std::end(kTransforms), a.transform) == std::end(kTransforms)) {
    return Unsupported("coordinate_transformation_mode '" + a.transform + "' is unknown");
  }
  if (a.policy != "stretch" && a.policy != "not_larger" && a.policy != "not_smaller") {
    return Unsupported("keep_aspect_ratio_policy '" + a.policy + "' is unknown");
  }
  return std::unique_ptr<IKernel>(std::make_unique<ResizeSeparableKernel>(std::move(a)));
}

// ---------------------------------------------------------------------------------------------------------------
// NonMaxSuppression: per (batch, class) the candidates scoring above the threshold in descending score
// order (stable: the lower box index first among equal scores), each kept unless its IoU with a kept box
// exceeds iou_threshold. Boxes and IoUs in double, with the reference's operations in its order, so every
// comparison comes out the same. A candidate is tested against the kept boxes a chunk at a time, the chunk
// as one vectorisable loop; the (batch, class) pairs run in parallel and their rows are concatenated in
// batch, class, selection order.

// Boxes as y1, x1, y2, x2 (y1 <= y2, x1 <= x2) and area, one array each.
struct BoxSet {
  std::vector<double> y1, x1, y2, x2, area;

  void Resize(size_t n) {
    for (auto* v : {&y1, &x1, &y2, &x2, &area}) v->resize(n);
  }
  void Set(size_t i, double a0, double a1, double a2, double a3) {
    y1[i] = a0, x1[i] = a1, y2[i] = a2, x2[i] = a3;
    area[i] = (a2 - a0) * (a3 - a1);
  }
  void CopyFrom(const BoxSet& from, size_t from_i, size_t i) {
    y1[i] = from.y1[from_i], x1[i] = from.x1[from_i], y2[i] = from.y2[from_i], x2[i] = from.x2[from_i];
    area[i] = from.area[from_i];
  }
};

// Corners of box `b` given as [y1, x1, y2, x2] in either order, or as [x_center, y_center, width, height].
void SetBox(BoxSet& set, size_t i, const float* b, bool center_point) {
  const double v0 = b[0], v1 = b[1], v2 = b[2], v3 = b[3];
  if (center_point) {
    const double half_w = v2 / 2, half_h = v3 / 2;
    set.Set(i, v1 - half_h, v0 - half_w, v1 + half_h, v0 + half_w);
  } else {
    set.Set(i, std::min(v0, v2), std::min(v1, v3), std::max(v0, v2), std::max(v1, v3));
  }
}

// Whether one of the first n boxes of `kept` overlaps box c of `boxes` by an IoU above `threshold`. Boxes
// of no area never overlap (their corners are then the only ones that can be NaN, so min and max below
// see no NaN and agree with the reference's whichever operand order they take).
bool OverlapsAny(const BoxSet& kept, size_t first, size_t n, const BoxSet& boxes, size_t c, double threshold) {
  const double cy1 = boxes.y1[c], cx1 = boxes.x1[c], cy2 = boxes.y2[c], cx2 = boxes.x2[c], ca = boxes.area[c];
  if (!(ca > 0)) return false;
  const double *ky1 = kept.y1.data() + first, *kx1 = kept.x1.data() + first, *ky2 = kept.y2.data() + first;
  const double *kx2 = kept.x2.data() + first, *ka = kept.area.data() + first;
  constexpr size_t kChunk = 32;  // a hit ends the scan after its chunk, as the reference's any_of
  for (size_t begin = 0; begin < n; begin += kChunk) {
    const size_t end = std::min(n, begin + kChunk);
    double hit = 0;
#pragma omp simd reduction(max : hit)
    for (size_t k = begin; k < end; ++k) {
      const double h = std::min(ky2[k], cy2) - std::max(ky1[k], cy1);
      const double w = std::min(kx2[k], cx2) - std::max(kx1[k], cx1);
      const double inter = h * w;
      const double iou = inter / (ka[k] + ca - inter);
      hit = ka[k] > 0 && h > 0 && w > 0 && iou > threshold ? 1.0 : hit;
    }
    if (hit > 0) return true;
  }
  return false;
}

// The boxes a class has kept so far, ordered by x1, with the widest one's width: a candidate can only
// overlap the kept boxes whose x1 lies in (its x1 − widest, its x2), so only those are tested. Batched
// NMS as detectors export it (torchvision offsets each class's boxes into a region of its own, and
// one NMS call takes them all) keeps thousands of boxes, nearly all of them far from a candidate.
// The same IoU test on each pair tested, so the same selection. Boxes of no positive area (or with
// NaN corners) never suppress anything and are left out of the index.
class KeptBoxes {
 public:
  void Clear() {
    set_.Resize(0);
    widest_ = 0;
  }
  bool AnyOverlap(const BoxSet& boxes, size_t c, double threshold) const {
    const double cx1 = boxes.x1[c], cx2 = boxes.x2[c];
    // (A margin for the rounding of the widths and of the subtraction.)
    const double from = cx1 - widest_ - 1e-6 * (1.0 + std::fabs(cx1) + widest_);
    const auto begin = std::lower_bound(set_.x1.begin(), set_.x1.end(), from);
    const auto end = std::lower_bound(begin, set_.x1.end(), cx2);
    const auto first = static_cast<size_t>(begin - set_.x1.begin());
    const auto n = static_cast<size_t>(end - begin);
    return n > 0 && OverlapsAny(set_, first, n, boxes, c, threshold);
  }
  void Add(const BoxSet& boxes, size_t c) {
    if (!(boxes.area[c] > 0)) return;
    const double x1 = boxes.x1[c];
    const auto at = std::upper_bound(set_.x1.begin(), set_.x1.end(), x1) - set_.x1.begin();
    set_.y1.insert(set_.y1.begin() + at, boxes.y1[c]);
    set_.x1.insert(set_.x1.begin() + at, x1);
    set_.y2.insert(set_.y2.begin() + at, boxes.y2[c]);
    set_.x2.insert(set_.x2.begin() + at, boxes.x2[c]);
    set_.area.insert(set_.area.begin() + at, boxes.area[c]);
    widest_ = std::max(widest_, boxes.x2[c] - x1);
  }

 private:
  BoxSet set_;
  double widest_ = 0;
};

class NmsKernel final : public IKernel {
 public:
  explicit NmsKernel(bool center_point) : center_point_(center_point) {}
  bool AllocatesOutputs() const override { return true; }

  Status Run(KernelContext& ctx) override {
    const Tensor& boxes_t = *ctx.input(0);
    const Tensor& scores_t = *ctx.input(1);
    if (boxes_t.rank() != 3 || boxes_t.dim(2) != 4 || scores_t.rank() != 3 || scores_t.dim(0) != boxes_t.dim(0) ||
        scores_t.dim(2) != boxes_t.dim(1)) {
      return ctx.Error("boxes " + ShapeToString(boxes_t.shape()) + " and scores " + ShapeToString(scores_t.shape()) +
                       " do not form [batches, boxes, 4] and [batches, classes, boxes]");
    }
    const Tensor* max_t = ctx.input(2);
    const Tensor* iou_t = ctx.input(3);
    const Tensor* score_t = ctx.input(4);
    const int64_t max_per_class = max_t == nullptr ? 0 : std::max<int64_t>(max_t->GetAsInt64(0), 0);
    const double iou_threshold = iou_t == nullptr ? 0.0 : iou_t->GetAsDouble(0);
    if (!(iou_threshold >= 0 && iou_threshold <= 1)) return ctx.Error("iou_threshold must be in [0, 1]");
    const bool thresholded = score_t != nullptr;
    const double score_threshold = thresholded ? score_t->GetAsDouble(0) : 0.0;

    const int64_t batches = boxes_t.dim(0), count = boxes_t.dim(1), classes = scores_t.dim(1);
    const float* boxes = boxes_t.data<float>();
    const float* scores = scores_t.data<float>();
    boxes_.Resize(static_cast<size_t>(batches * count));
    for (size_t i = 0; i < boxes_.area.size(); ++i) SetBox(boxes_, i, boxes + 4 * i, center_point_);
    const int64_t tasks = max_per_class == 0 ? 0 : batches * classes;
    selected_.resize(static_cast<size_t>(tasks));
#pragma omp parallel if (tasks > 1 && tasks * count >= 4096)
    {
      std::vector<int64_t> order;
      KeptBoxes kept;
#pragma omp for schedule(dynamic, 1)
      for (int64_t task = 0; task < tasks; ++task) {
        const int64_t first_box = task / classes * count;
        const float* s = scores + task * count;
        order.clear();
        for (int64_t i = 0; i < count; ++i) {
          // Strictly above the threshold; a NaN score never is a candidate.
          const double v = s[i];
          if (thresholded ? v > score_threshold : !std::isnan(v)) order.push_back(i);
        }
        std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return s[p] > s[q]; });
        std::vector<int64_t>& chosen = selected_[static_cast<size_t>(task)];
        chosen.clear();
        kept.Clear();
        for (int64_t i : order) {
          if (static_cast<int64_t>(chosen.size()) >= max_per_class) break;
          const auto box = static_cast<size_t>(first_box + i);
          if (kept.AnyOverlap(boxes_, box, iou_threshold)) continue;
          kept.Add(boxes_, box);
          chosen.push_back(i);
        }
      }
    }
    int64_t rows = 0;
    for (const auto& chosen : selected_) rows += static_cast<int64_t>(chosen.size());
    Tensor& out = *ctx.output(0);
    if (!out.defined()) out = Tensor(DType::kI64, {rows, 3});  // AllocatesOutputs: handed an empty Tensor
    if (out.numel() != rows * 3) {
      return Internal(ctx.node().Describe() + ": output was sized for " + std::to_string(out.numel() / 3) +
                      " boxes, the kernel selected " + std::to_string(rows));
    }
    int64_t* dst = out.data<int64_t>();
    for (int64_t task = 0; task < tasks; ++task) {
      for (int64_t i : selected_[static_cast<size_t>(task)]) {
        *dst++ = task / classes;
        *dst++ = task % classes;
        *dst++ = i;
      }
    }
    return Status();
  }

 private:
  bool center_point_;
  BoxSet boxes_;                                // every batch's boxes
  std::vector<std::vector<int64_t>> selected_;  // per (batch, class): box indices in selection order
};

Result<std::unique_ptr<IKernel>> CreateNms(const KernelInit& init) {
  RETURN_IF_ERROR(RequireF32Input(init, 0, "boxes"));
  RETURN_IF_ERROR(RequireF32Input(init, 1, "scores"));
  if (init.inputs[0]->shape.size() != 3 || init.inputs[1]->shape.size() != 3) {
    return Unsupported("boxes and scores must be 3-D");
  }
  const int64_t box_format = init.node.GetInt("center_point_box", 0);
  if (box_format != 0 && box_format != 1) return Unsupported("center_point_box must be 0 or 1");
  return std::unique_ptr<IKernel>(std::make_unique<NmsKernel>(box_format == 1));
}

// ---------------------------------------------------------------------------------------------------------------
// GridSample (opsets 16 and 20, any number of spatial axes): per output point, up to 1/2/4 taps per axis
// (nearest/linear/cubic) on the unnormalised grid coordinate after padding; taps outside the input
// (zeros padding) are dropped. Points go in blocks: a block's taps are computed once and then applied to
// every channel plane.

// The (input offset, weight) pairs of one output point: every combination of its axes' taps, the last
// axis fastest as the reference sums them, less those reading outside the input. Returns their number.
int32_t CombineTaps(const std::vector<GridAxisTaps>& axis, const std::vector<int64_t>& strides, std::vector<int>& pick,
                    int64_t* offset, float* weight) {
  int32_t count = 0;
  if (axis.size() == 2) {  // 4-D GridSample, the common case, without the general odometer
    const GridAxisTaps &ty = axis[0], &tx = axis[1];
    for (int p = 0; p < ty.count; ++p) {
      for (int q = 0; q < tx.count; ++q) {
        if (ty.index[p] < 0 || tx.index[q] < 0) continue;
        offset[count] = ty.index[p] * strides[0] + tx.index[q];
        weight[count] = static_cast<float>(ty.weight[p] * tx.weight[q]);
        ++count;
      }
    }
    return count;
  }
  const size_t r = axis.size();
  std::fill(pick.begin(), pick.end(), 0);
  bool more = std::all_of(axis.begin(), axis.end(), [](const GridAxisTaps& t) { return t.count > 0; });
  while (more) {
    int64_t at = 0;
    double product = 1;
    bool inside = true;
    for (size_t d = 0; d < r; ++d) {
      const auto k = static_cast<size_t>(pick[d]);
      inside = inside && axis[d].index[k] >= 0;
      at += axis[d].index[k] * strides[d];
      product *= axis[d].weight[k];
    }
    if (inside) {
      offset[count] = at;
      weight[count] = static_cast<float>(product);
      ++count;
    }
    size_t d = r;
    while (d-- > 0 && ++pick[d] == axis[d].count) pick[d] = 0;
    more = d != static_cast<size_t>(-1);
  }
  return count;
}

// The taps of a block of output points, `stride` slots each.
struct BlockTaps {
  const int64_t* offset;
  const float* weight;
  const int32_t* count;
  int64_t stride;
};

// dst[i] = Σ_t weight(i, t) · plane[offset(i, t)]. Points with all K taps inside the input (most of them)
// take a loop of fixed length, which the compiler unrolls.
template <int K>
void ApplyTaps(const float* plane, const BlockTaps& taps, int64_t len, float* dst) {
  for (int64_t i = 0; i < len; ++i) {
    const int64_t* off = taps.offset + i * taps.stride;
    const float* w = taps.weight + i * taps.stride;
    const int32_t count = taps.count[i];
    float acc = 0;
    if (K > 0 && count == K) {
      for (int t = 0; t < K; ++t) acc += w[t] * plane[off[t]];
    } else {
      for (int32_t t = 0; t < count; ++t) acc += w[t] * plane[off[t]];
    }
    dst[i] = acc;
  }
}

class GridSampleKernel final : public IKernel {
 public:
  explicit GridSampleKernel(GridSampleAttrs attrs) : attrs_(attrs) {}

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& grid = *ctx.input(1);
    Tensor& y = *ctx.output(0);
    const size_t r = static_cast<size_t>(x.rank()) - 2;
    if (grid.rank() != x.rank() || grid.dim(grid.rank() - 1) != static_cast<int64_t>(r) || grid.dim(0) != x.dim(0)) {
      return ctx.Error("grid " + ShapeToString(grid.shape()) + " does not match X " + ShapeToString(x.shape()));
    }
    if (y.numel() == 0) return Status();
    const Shape in_spatial(x.shape().begin() + 2, x.shape().end());
    const int64_t in_plane = NumElements(in_spatial);
    float* out = y.data<float>();
    if (in_plane == 0) {  // every point lies outside an empty map
      std::fill(out, out + y.numel(), 0.0f);
      return Status();
    }
    const int64_t batches = x.dim(0), channels = x.dim(1);
    const int64_t points = y.numel() / (batches * channels);
    const int64_t per_axis = attrs_.mode == GridMode::kNearest ? 1 : attrs_.mode == GridMode::kLinear ? 2 : 4;
    int64_t max_taps = 1;
    for (size_t d = 0; d < r; ++d) max_taps *= per_axis;
    const int64_t block = std::clamp<int64_t>(16384 / max_taps, 1, 256);
    const int64_t blocks = (points + block - 1) / block;
    const int64_t tasks = batches * blocks;
    std::vector<int64_t> strides(r, 1);
    for (size_t d = r - 1; d-- > 0;) strides[d] = strides[d + 1] * in_spatial[d + 1];
    const float* in = x.data<float>();
    const float* g = grid.data<float>();
    const GridSampleAttrs a = attrs_;
    const bool round_half_away = r == 3;
    const int64_t work = y.numel() * max_taps;

#pragma omp parallel if (work >= kParallelTaps && tasks > 1)
    {
      std::vector<int64_t> offset(static_cast<size_t>(block * max_taps));
      std::vector<float> weight(offset.size());
      std::vector<int32_t> count(static_cast<size_t>(block));
      std::vector<GridAxisTaps> axis(r);
      std::vector<int> pick(r);
#pragma omp for schedule(static)
      for (int64_t task = 0; task < tasks; ++task) {
        const int64_t n = task / blocks, p0 = task % blocks * block, len = std::min(block, points - p0);
        for (int64_t i = 0; i < len; ++i) {
          // The grid's last axis is (x, y, z …): the innermost input axis first.
          const float* coords = g + (n * points + p0 + i) * static_cast<int64_t>(r);
          for (size_t d = 0; d < r; ++d) axis[d] = GridTapsAlong(a, coords[r - 1 - d], in_spatial[d], round_half_away);
          count[static_cast<size_t>(i)] =
              CombineTaps(axis, strides, pick, offset.data() + i * max_taps, weight.data() + i * max_taps);
        }
        for (int64_t ch = 0; ch < channels; ++ch) {
          const float* plane = in + (n * channels + ch) * in_plane;
          float* dst = out + (n * channels + ch) * points + p0;
          const BlockTaps taps{offset.data(), weight.data(), count.data(), max_taps};
          switch (max_taps) {
            case 1: ApplyTaps<1>(plane, taps, len, dst); break;
            case 4: ApplyTaps<4>(plane, taps, len, dst); break;
            case 16: ApplyTaps<16>(plane, taps, len, dst); break;
            default: ApplyTaps<0>(plane, taps, len, dst); break;
          }
        }
      }
    }
    return Status();
  }

 private:
  GridSampleAttrs attrs_;
};

Result<std::unique_ptr<IKernel>> CreateGridSample(const KernelInit& init) {
  RETURN_IF_ERROR(RequireF32Input(init, 0, "X"));
  RETURN_IF_ERROR(RequireF32Input(init, 1, "grid"));
  const Node& node = init.node;
  const size_t rank = init.inputs[0]->shape.size();
  if (rank < 3 || init.inputs[1]->shape.size() != rank) return Unsupported("X and grid must be (N, C, D1, …) alike");
  // The reference's reading and taps (core/reference/grid_sample.h): both kernels sample alike.
  auto a = ReadGridSample(node, init.opset);
  if (!a.ok()) return Unsupported(a.status().message());
  return std::unique_ptr<IKernel>(std::make_unique<GridSampleKernel>(*a));
}

}  // namespace

void AddSamplingKernels(KernelTable& t) {
  constexpr auto kCpu = DeviceKind::kCpu;
  constexpr auto kFp32 = Precision::kFp32;
  // After onednn:resampling (cpu_kernels.cpp lists it before the groups), which takes nearest and linear.
  t.Add("Resize", "", kCpu, kFp32, {"cpu:resize", CreateResizeSeparable});
  t.Add("Upsample", "", kCpu, kFp32, {"cpu:resize", CreateResizeSeparable});
  t.Add("NonMaxSuppression", "", kCpu, kFp32, {"cpu:nms", CreateNms});
  t.Add("GridSample", "", kCpu, kFp32, {"cpu:grid-sample", CreateGridSample});
}

}  // namespace chipfit::cpu
