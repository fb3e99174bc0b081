// Reference NonMaxSuppression (opsets 10–11), RoiAlign (10, 16) and GridSample (16, 20).
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "core/reference/grid_sample.h"
#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

std::string Str(double v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
  return s;
}

std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.GetAsDouble(i);
  return v;
}

// ---------------------------------------------------------------------------------------------
// NonMaxSuppression

Status CheckNmsShapes(const Node& node, const std::vector<const ValueInfo*>& in) {
  if (in.size() < 2 || in[0] == nullptr || in[1] == nullptr) {
    return InvalidArgument(node.Describe() + ": needs inputs 'boxes' and 'scores'");
  }
  const Shape& boxes = in[0]->shape;
  const Shape& scores = in[1]->shape;
  if (boxes.size() != 3 || boxes[2] != 4) {
    return InvalidArgument(node.Describe() + ": boxes must be [num_batches, spatial_dimension, 4], got " +
                           ShapeToString(boxes));
  }
  if (scores.size() != 3) {
    return InvalidArgument(node.Describe() + ": scores must be [num_batches, num_classes, spatial_dimension], got " +
                           ShapeToString(scores));
  }
  if (boxes[0] != scores[0] || boxes[1] != scores[2]) {
    return InvalidArgument(node.Describe() + ": boxes " + ShapeToString(boxes) + " and scores " +
                           ShapeToString(scores) + " disagree on batches or boxes");
  }
  for (size_t i = 0; i < 2; ++i) {
    if (!IsFloatingDType(in[i]->dtype)) {
      return InvalidArgument(node.Describe() + ": " + (i == 0 ? "boxes" : "scores") + " must be floating point, got " +
                             std::string(DTypeName(in[i]->dtype)));
    }
  }
  static const char* kScalars[] = {"max_output_boxes_per_class", "iou_threshold", "score_threshold"};
  for (size_t i = 2; i < 5; ++i) {
    if (i < in.size() && in[i] != nullptr && NumElements(in[i]->shape) != 1) {
      return InvalidArgument(node.Describe() + ": " + kScalars[i - 2] + " must hold one value, got " +
                             ShapeToString(in[i]->shape));
    }
  }
  const int64_t box_format = node.GetInt("center_point_box", 0);
  if (box_format != 0 && box_format != 1) {
    return InvalidArgument(node.Describe() + ": center_point_box must be 0 or 1, got " + std::to_string(box_format));
  }
  return Status::Ok();
}

// A box as [y1, x1, y2, x2] with y1 <= y2 and x1 <= x2, whichever corners or centre form it came in.
std::array<double, 4> Corners(const double* b, bool center_point) {
  if (center_point) {  // [x_center, y_center, width, height]
    const double hw = b[2] / 2, hh = b[3] / 2;
    return {b[1] - hh, b[0] - hw, b[1] + hh, b[0] + hw};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

double Iou(const std::array<double, 4>& a, const std::array<double, 4>& b) {
  const double area_a = (a[2] - a[0]) * (a[3] - a[1]);
  const double area_b = (b[2] - b[0]) * (b[3] - b[1]);
  if (!(area_a > 0) || !(area_b > 0)) return 0;  // a degenerate box never suppresses nor is suppressed
  const double h = std::min(a[2], b[2]) - std::max(a[0], b[0]);
  const double w = std::min(a[3], b[3]) - std::max(a[1], b[1]);
  if (h <= 0 || w <= 0) return 0;
  const double inter = h * w;
  return inter / (area_a + area_b - inter);
}

// Rows of selected_indices: [batch, class, box], by batch, then class, then selection order.
// Inputs 2..4 may be nullptr (omitted): no boxes, IoU threshold 0, no score threshold.
Result<std::vector<std::array<int64_t, 3>>> SelectBoxes(const Node& node, const Tensor& boxes_t, const Tensor& scores_t,
                                                        const Tensor* max_t, const Tensor* iou_t,
                                                        const Tensor* score_t) {
  const int64_t max_per_class = max_t == nullptr ? 0 : std::max<int64_t>(max_t->GetAsInt64(0), 0);
  const double iou_threshold = iou_t == nullptr ? 0.0 : iou_t->GetAsDouble(0);
  if (!(iou_threshold >= 0 && iou_threshold <= 1)) {
    return InvalidArgument(node.Describe() + ": iou_threshold must be in [0, 1], got " + Str(iou_threshold));
  }
  const bool center_point = node.GetInt("center_point_box", 0) == 1;
  const std::vector<double> boxes = ToDoubles(boxes_t);
  const std::vector<double> scores = ToDoubles(scores_t);
  const int64_t batches = boxes_t.dim(0), classes = scores_t.dim(1), count = boxes_t.dim(1);
  std::vector<std::array<int64_t, 3>> selected;
  std::vector<int64_t> order;
  std::vector<std::array<double, 4>> kept;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t c = 0; c < classes; ++c) {
      if (max_per_class == 0) continue;
      const double* s = scores.data() + (b * classes + c) * count;
      order.clear();
      for (int64_t i = 0; i < count; ++i) {
        // Only boxes scoring strictly above the threshold are candidates (NaN scores never are).
        if (score_t == nullptr ? !std::isnan(s[i]) : s[i] > score_t->GetAsDouble(0)) order.push_back(i);
      }
      // Stable: among equal scores the lower box index is considered first.
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return s[x] > s[y]; });
      kept.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_per_class) break;
        const std::array<double, 4> box = Corners(boxes.data() + (b * count + i) * 4, center_point);
        const bool suppressed =
            std::any_of(kept.begin(), kept.end(), [&](const auto& k) { return Iou(k, box) > iou_threshold; });
        if (suppressed) continue;
        kept.push_back(box);
        selected.push_back({b, c, i});
      }
    }
  }
  return selected;
}

Status InferNonMaxSuppression(InferContext& ctx) {
  std::vector<const ValueInfo*> in;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) in.push_back(ctx.input(i));
  RETURN_IF_ERROR(CheckNmsShapes(ctx.node(), in));
  // How many boxes survive depends on every input's values.
  std::array<const Tensor*, 5> values{};
  bool missing = false;
  for (size_t i = 0; i < values.size(); ++i) {
    if (ctx.input(i) == nullptr) continue;  // omitted
    values[i] = ctx.RequireValue(i);
    missing = missing || values[i] == nullptr;
  }
  if (missing) return ctx.ValueNeeded();
  ASSIGN_OR_RETURN(auto selected, SelectBoxes(ctx.node(), *values[0], *values[1], values[2], values[3], values[4]));
  ctx.SetOutput(0, DType::kI64, {static_cast<int64_t>(selected.size()), 3});
  return Status::Ok();
}

Status RunNonMaxSuppression(KernelContext& ctx) {
  ASSIGN_OR_RETURN(auto selected,
                   SelectBoxes(ctx.node(), *ctx.input(0), *ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4)));
  Tensor& out = *ctx.output(0);
  if (out.numel() != static_cast<int64_t>(selected.size()) * 3) {
    return Internal(ctx.node().Describe() + ": output was sized for another selection");
  }
  int64_t* dst = out.data<int64_t>();
  for (const auto& row : selected) dst = std::copy(row.begin(), row.end(), dst);
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// RoiAlign

struct RoiAlignAttrs {
  bool max = false;
  bool half_pixel = false;  // opset 16's default; opset 10 behaves as output_half_pixel
  int64_t out_h = 1, out_w = 1;
  int64_t sampling_ratio = 0;  // 0: adaptive, ceil(roi size / output size) samples per bin and axis
  double spatial_scale = 1;
};

Result<RoiAlignAttrs> ReadRoiAlign(const Node& node, int64_t opset) {
  RoiAlignAttrs a;
  const std::string mode = node.GetString("mode", "avg");
  if (mode != "avg" && mode != "max") {
    return InvalidArgument(node.Describe() + ": mode must be 'avg' or 'max', got '" + mode + "'");
  }
  a.max = mode == "max";
  if (opset >= 16) {
    const std::string transform = node.GetString("coordinate_transformation_mode", "half_pixel");
    if (transform != "half_pixel" && transform != "output_half_pixel") {
      return InvalidArgument(node.Describe() +
                             ": coordinate_transformation_mode must be 'half_pixel' or 'output_half_pixel', got '" +
                             transform + "'");
    }
    a.half_pixel = transform == "half_pixel";
  }
  a.out_h = node.GetInt("output_height", 1);
  a.out_w = node.GetInt("output_width", 1);
  a.sampling_ratio = node.GetInt("sampling_ratio", 0);
  a.spatial_scale = node.GetFloat("spatial_scale", 1.0f);
  if (a.out_h <= 0 || a.out_w <= 0) {
    return InvalidArgument(node.Describe() + ": output_height and output_width must be positive, got " +
                           std::to_string(a.out_h) + "x" + std::to_string(a.out_w));
  }
  if (a.sampling_ratio < 0) {
    return InvalidArgument(node.Describe() + ": sampling_ratio must be >= 0, got " + std::to_string(a.sampling_ratio));
  }
  return a;
}

Status InferRoiAlign(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  const ValueInfo* rois = ctx.input(1);
  const ValueInfo* idx = ctx.input(2);
  if (x == nullptr || rois == nullptr || idx == nullptr) return ctx.Error("needs inputs 'X', 'rois', 'batch_indices'");
  ASSIGN_OR_RETURN(RoiAlignAttrs a, ReadRoiAlign(ctx.node(), ctx.opset()));
  if (x->shape.size() != 4) return ctx.Error("X must be 4-D (N, C, H, W), got " + ShapeToString(x->shape));
  if (x->shape[2] == 0 || x->shape[3] == 0) {
    return ctx.Error("X " + ShapeToString(x->shape) + " has no pixels to sample (H or W is 0)");
  }
  if (rois->shape.size() != 2 || rois->shape[1] != 4) {
    return ctx.Error("rois must be [num_rois, 4], got " + ShapeToString(rois->shape));
  }
  if (idx->shape.size() != 1 || idx->shape[0] != rois->shape[0]) {
    return ctx.Error("batch_indices must be [num_rois] = [" + std::to_string(rois->shape[0]) + "], got " +
                     ShapeToString(idx->shape));
  }
  if (!IsFloatingDType(x->dtype) || !IsFloatingDType(rois->dtype)) {
    return ctx.Error("X and rois must be floating point");
  }
  if (!IsIntegerDType(idx->dtype)) return ctx.Error("batch_indices must be integers");
  ctx.SetOutput(0, x->dtype, {rois->shape[0], x->shape[1], a.out_h, a.out_w});
  return Status::Ok();
}

// One sample point of a bin: four pixel offsets in an H×W plane and their bilinear weights.
struct BilinearTap {
  std::array<int64_t, 4> pos{};
  std::array<double, 4> w{};  // all zero for a point outside the map
};

BilinearTap TapAt(double y, double x, int64_t height, int64_t width) {
  BilinearTap t;
  // A point more than one pixel outside the map contributes nothing (NaN fails the test too).
  if (!(y >= -1.0 && y <= static_cast<double>(height) && x >= -1.0 && x <= static_cast<double>(width))) return t;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  auto low = static_cast<int64_t>(y);
  auto left = static_cast<int64_t>(x);
  int64_t high = low + 1, right = left + 1;
  if (low >= height - 1) {
    low = high = height - 1;
    y = static_cast<double>(low);
  }
  if (left >= width - 1) {
    left = right = width - 1;
    x = static_cast<double>(left);
  }
  const double ly = y - static_cast<double>(low), lx = x - static_cast<double>(left);
  const double hy = 1 - ly, hx = 1 - lx;
  t.pos = {low * width + left, low * width + right, high * width + left, high * width + right};
  t.w = {hy * hx, hy * lx, ly * hx, ly * lx};
  return t;
}

// Samples of each output bin of one RoI, shared by all channels: taps[(ph * out_w + pw) * per_bin + s].
struct RoiSamples {
  std::vector<BilinearTap> taps;
  int64_t per_bin = 0;
};

// Samples per RoI beyond which a run would take hours; only absurd RoIs or sampling_ratio values get there.
constexpr double kMaxRoiSamples = 1 << 26;

Result<RoiSamples> SampleRoi(const Node& node, const RoiAlignAttrs& a, const double* roi, int64_t height,
                             int64_t width) {
  // output_half_pixel (and opset 10) keeps the legacy pixel model: no -0.5 shift, RoIs at least 1×1.
  const double offset = a.half_pixel ? 0.5 : 0.0;
  const double start_w = roi[0] * a.spatial_scale - offset, start_h = roi[1] * a.spatial_scale - offset;
  double roi_w = roi[2] * a.spatial_scale - offset - start_w;
  double roi_h = roi[3] * a.spatial_scale - offset - start_h;
  if (!a.half_pixel) {
    roi_w = std::max(roi_w, 1.0);
    roi_h = std::max(roi_h, 1.0);
  }
  const double bin_h = roi_h / static_cast<double>(a.out_h), bin_w = roi_w / static_cast<double>(a.out_w);
  auto grid = [&](double bin) -> int64_t {
    if (a.sampling_ratio > 0) return a.sampling_ratio;
    // A malformed (negative, NaN) RoI gets no samples; the cap only keeps the cast defined, the
    // sample count check below refuses such RoIs.
    return bin > 0 ? static_cast<int64_t>(std::ceil(std::min(bin, kMaxRoiSamples))) : 0;
  };
  const int64_t grid_h = grid(bin_h), grid_w = grid(bin_w);
  const double total = static_cast<double>(grid_h) * static_cast<double>(grid_w) * static_cast<double>(a.out_h) *
                       static_cast<double>(a.out_w);
  if (total > kMaxRoiSamples) {
    return InvalidArgument(node.Describe() + ": RoI [" + Str(roi[0]) + ", " + Str(roi[1]) + ", " + Str(roi[2]) + ", " +
                           Str(roi[3]) + "] needs " + Str(total) + " samples (" + std::to_string(grid_h) + "x" +
                           std::to_string(grid_w) + " per bin); sampling_ratio or the RoI is too large");
  }
  RoiSamples s;
  s.per_bin = grid_h * grid_w;
  s.taps.reserve(static_cast<size_t>(a.out_h * a.out_w * s.per_bin));
  for (int64_t ph = 0; ph < a.out_h; ++ph) {
    for (int64_t pw = 0; pw < a.out_w; ++pw) {
      for (int64_t iy = 0; iy < grid_h; ++iy) {
        const double y = start_h + static_cast<double>(ph) * bin_h +
                         (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
        for (int64_t ix = 0; ix < grid_w; ++ix) {
          const double x = start_w + static_cast<double>(pw) * bin_w +
                           (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
          s.taps.push_back(TapAt(y, x, height, width));
        }
      }
    }
  }
  return s;
}

Status RunRoiAlign(KernelContext& ctx) {
  ASSIGN_OR_RETURN(RoiAlignAttrs a, ReadRoiAlign(ctx.node(), ctx.opset()));
  const Tensor& x = *ctx.input(0);
  const std::vector<double> rois = ToDoubles(*ctx.input(1));
  const Tensor& indices = *ctx.input(2);
  const int64_t batches = x.dim(0), channels = x.dim(1), height = x.dim(2), width = x.dim(3);
  const int64_t num_rois = indices.numel();
  const int64_t bins = a.out_h * a.out_w;
  if (height == 0 || width == 0) {
    return ctx.Error("X " + ShapeToString(x.shape()) + " has no pixels to sample (H or W is 0)");
  }
  return VisitKernelDType(ctx.node(), x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* out = ctx.output(0)->data<T>();
    for (int64_t r = 0; r < num_rois; ++r) {
      const int64_t batch = indices.GetAsInt64(r);
      if (batch < 0 || batch >= batches) {
        return ctx.Error("batch_indices[" + std::to_string(r) + "] = " + std::to_string(batch) + " is outside [0, " +
                         std::to_string(batches) + ")");
      }
      ASSIGN_OR_RETURN(const RoiSamples s, SampleRoi(ctx.node(), a, rois.data() + r * 4, height, width));
      for (int64_t c = 0; c < channels; ++c) {
        const T* plane = in + (batch * channels + c) * height * width;
        T* dst = out + (r * channels + c) * bins;
        for (int64_t bin = 0; bin < bins; ++bin) {
          double acc = 0;
          for (int64_t k = 0; k < s.per_bin; ++k) {
            const BilinearTap& t = s.taps[static_cast<size_t>(bin * s.per_bin + k)];
            if (!a.max) {
              for (size_t j = 0; j < 4; ++j) acc += t.w[j] * static_cast<double>(plane[t.pos[j]]);
              continue;
            }
            // max: the largest weighted corner, not the largest interpolated value. This is what the
            // ONNX reference and ONNX Runtime compute (onnx/onnx#4764, microsoft/onnxruntime#6146).
            double v = t.w[0] * static_cast<double>(plane[t.pos[0]]);
            for (size_t j = 1; j < 4; ++j) v = std::max(v, t.w[j] * static_cast<double>(plane[t.pos[j]]));
            acc = k == 0 ? v : std::max(acc, v);
          }
          if (!a.max) acc /= static_cast<double>(std::max<int64_t>(s.per_bin, 1));
          dst[bin] = FromDouble<T>(acc);
        }
      }
    }
    return Status::Ok();
  });
}

// ---------------------------------------------------------------------------------------------
// GridSample

}  // namespace

Result<GridSampleAttrs> ReadGridSample(const Node& node, int64_t opset) {
  GridSampleAttrs a;
  // Opset 20 renamed the modes when it went from 4-D to N-D.
  const bool v20 = opset >= 20;
  const std::string mode = node.GetString("mode", v20 ? "linear" : "bilinear");
  if (mode == "nearest") {
    a.mode = GridMode::kNearest;
  } else if (mode == (v20 ? "linear" : "bilinear")) {
    a.mode = GridMode::kLinear;
  } else if (mode == (v20 ? "cubic" : "bicubic")) {
    a.mode = GridMode::kCubic;
  } else {
    return InvalidArgument(node.Describe() + ": mode '" + mode + "' is not one of " +
                           (v20 ? "linear, nearest, cubic" : "bilinear, nearest, bicubic") + " (opset " +
                           std::to_string(opset) + ")");
  }
  const std::string padding = node.GetString("padding_mode", "zeros");
  if (padding == "zeros") {
    a.padding = GridPadding::kZeros;
  } else if (padding == "border") {
    a.padding = GridPadding::kBorder;
  } else if (padding == "reflection") {
    a.padding = GridPadding::kReflection;
  } else {
    return InvalidArgument(node.Describe() + ": padding_mode '" + padding +
                           "' is not one of zeros, border, reflection");
  }
  a.align_corners = node.GetInt("align_corners", 0) != 0;
  return a;
}

namespace {

Status InferGridSample(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  const ValueInfo* grid = ctx.input(1);
  if (x == nullptr || grid == nullptr) return ctx.Error("needs inputs 'X' and 'grid'");
  RETURN_IF_ERROR(ReadGridSample(ctx.node(), ctx.opset()).status());
  const size_t rank = x->shape.size();
  if (ctx.opset() < 20 && rank != 4) {
    return ctx.Error("X must be 4-D (N, C, H, W) before opset 20, got " + ShapeToString(x->shape));
  }
  if (rank < 3) return ctx.Error("X must be (N, C, D1, ..., Dr) with r >= 1, got " + ShapeToString(x->shape));
  const auto r = static_cast<int64_t>(rank - 2);
  if (grid->shape.size() != rank || grid->shape[0] != x->shape[0] || grid->shape.back() != r) {
    return ctx.Error("grid must be (N, D1_out, ..., Dr_out, " + std::to_string(r) +
                     ") with N = " + std::to_string(x->shape[0]) + ", got " + ShapeToString(grid->shape));
  }
  if (!IsFloatingDType(grid->dtype)) return ctx.Error("grid must be floating point");
  if (x->dtype == DType::kBool || x->dtype == DType::kString) {
    return Unsupported(ctx.node().Describe() + ": dtype " + std::string(DTypeName(x->dtype)) +
                       " cannot be interpolated");
  }
  Shape out = {x->shape[0], x->shape[1]};
  out.insert(out.end(), grid->shape.begin() + 1, grid->shape.end() - 1);
  ctx.SetOutput(0, x->dtype, out);
  return Status::Ok();
}

// Folds x back into [lo, hi] as a mirror would, as often as needed.
double Reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (!(range > 0)) return lo;
  if (x >= lo && x <= hi) return x;
  const double d = x < lo ? lo - x : x - hi;
  const double flips = std::floor(d / range);
  const double rest = d - flips * range;
  const bool even = std::fmod(flips, 2.0) == 0;
  if (x < lo) return even ? lo + rest : hi - rest;
  return even ? hi - rest : lo + rest;
}

// Keys' cubic convolution weights (a = -0.75, as PyTorch) for taps at floor(x) - 1 … floor(x) + 2.
std::array<double, 4> CubicWeights(double t) {
  constexpr double A = -0.75;
  auto near = [](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };       // |d| <= 1
  auto far = [](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };  // 1 < |d| < 2
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

}  // namespace

GridAxisTaps GridTapsAlong(const GridSampleAttrs& a, double normalized, int64_t size, bool round_half_away) {
  const auto len = static_cast<double>(size);
  double x = a.align_corners ? (normalized + 1) / 2 * (len - 1) : ((normalized + 1) * len - 1) / 2;
  const double lo = a.align_corners ? 0.0 : -0.5, hi = a.align_corners ? len - 1 : len - 0.5;
  if (a.mode == GridMode::kNearest) {
    // As PyTorch: 2-D rounds half to even (nearbyint), 3-D half away from zero (round).
    x = round_half_away ? std::round(x) : std::nearbyint(x);
  }
  if (a.padding == GridPadding::kBorder) x = std::clamp(x, 0.0, len - 1);
  if (a.padding == GridPadding::kReflection) x = Reflect(x, lo, hi);
  GridAxisTaps taps;
  if (std::isnan(x)) return taps;  // reads zero
  // Far outside the map every tap reads zero (zeros padding) whatever the exact value; clamping keeps
  // the index arithmetic below in range.
  x = std::clamp(x, -8.0, len + 8);
  const double base = std::floor(x);
  const double t = x - base;
  auto index = [&](int64_t i) -> int64_t {
    switch (a.padding) {
      case GridPadding::kZeros: return i >= 0 && i < size ? i : -1;
      case GridPadding::kBorder: return std::clamp<int64_t>(i, 0, size - 1);
      case GridPadding::kReflection:
        return std::clamp<int64_t>(static_cast<int64_t>(Reflect(static_cast<double>(i), lo, hi)), 0, size - 1);
    }
    return -1;
  };
  const auto b = static_cast<int64_t>(base);
  switch (a.mode) {
    case GridMode::kNearest:
      taps.count = 1;
      taps.index[0] = index(static_cast<int64_t>(x));  // x is whole here
      taps.weight[0] = 1;
      break;
    case GridMode::kLinear:
      taps.count = 2;
      taps.index = {index(b), index(b + 1), 0, 0};
      taps.weight = {1 - t, t, 0, 0};
      break;
    case GridMode::kCubic:
      taps.count = 4;
      taps.index = {index(b - 1), index(b), index(b + 1), index(b + 2)};
      taps.weight = CubicWeights(t);
      break;
  }
  return taps;
}

namespace {

Status RunGridSample(KernelContext& ctx) {
  ASSIGN_OR_RETURN(GridSampleAttrs a, ReadGridSample(ctx.node(), ctx.opset()));
  const Tensor& x = *ctx.input(0);
  const Tensor& grid = *ctx.input(1);
  const size_t r = static_cast<size_t>(x.rank()) - 2;
  const Shape in_spatial(x.shape().begin() + 2, x.shape().end());
  const int64_t batches = x.dim(0), channels = x.dim(1);
  const int64_t in_plane = NumElements(in_spatial);
  if (in_plane == 0) {
    // An empty map: every grid point is outside it. Zeros, whatever the padding (there is no border).
    std::fill_n(static_cast<char*>(ctx.output(0)->raw_data()), ctx.output(0)->nbytes(), char{0});
    return Status::Ok();
  }
  const int64_t out_plane = ctx.output(0)->numel() / std::max<int64_t>(batches * channels, 1);
  const std::vector<int64_t> in_strides = Strides(in_spatial);
  const std::vector<double> g = ToDoubles(grid);
  return VisitKernelDType(ctx.node(), x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      return Unsupported(ctx.node().Describe() + ": dtype bool cannot be interpolated");
    } else {
      const T* in = x.data<T>();
      T* out = ctx.output(0)->data<T>();
      std::vector<GridAxisTaps> taps(r);
      std::vector<int> pick(r);
      std::vector<std::pair<int64_t, double>> points;  // (flat input offset, weight) of one output point
      for (int64_t n = 0; n < batches; ++n) {
        for (int64_t p = 0; p < out_plane; ++p) {
          // grid's last axis is (x, y, z …): innermost input axis first.
          const double* coords = g.data() + (n * out_plane + p) * static_cast<int64_t>(r);
          for (size_t d = 0; d < r; ++d) taps[d] = GridTapsAlong(a, coords[r - 1 - d], in_spatial[d], r == 3);
          points.clear();
          std::fill(pick.begin(), pick.end(), 0);
          const bool any = std::all_of(taps.begin(), taps.end(), [](const GridAxisTaps& t) { return t.count > 0; });
          // Every combination of the axes' taps, odometer style, until the first axis rolls over.
          for (bool more = any; more;) {
            int64_t offset = 0;
            double weight = 1;
            bool inside = true;
            for (size_t d = 0; d < r; ++d) {
              const int64_t i = taps[d].index[static_cast<size_t>(pick[d])];
              inside = inside && i >= 0;
              offset += i * in_strides[d];
              weight *= taps[d].weight[static_cast<size_t>(pick[d])];
            }
            if (inside) points.emplace_back(offset, weight);
            size_t d = r;
            while (d-- > 0 && ++pick[d] == taps[d].count) pick[d] = 0;
            more = d != static_cast<size_t>(-1);
          }
          for (int64_t c = 0; c < channels; ++c) {
            const T* plane = in + (n * channels + c) * in_plane;
            double acc = 0;
            for (const auto& [offset, weight] : points) acc += weight * static_cast<double>(plane[offset]);
            out[(n * channels + c) * out_plane + p] = FromDouble<T>(acc);
          }
        }
      }
      return Status::Ok();
    }
  });
}

}  // namespace

std::vector<OpEntry> DetectionOps() {
  return {
      {"NonMaxSuppression", InferNonMaxSuppression, RunNonMaxSuppression},
      {"RoiAlign", InferRoiAlign, RunRoiAlign},
      {"GridSample", InferGridSample, RunGridSample},
  };
}

}  // namespace chipfit
