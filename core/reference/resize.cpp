// Reference kernels: Resize (opsets 10–19: nearest, n-linear, cubic, antialias), Upsample (opsets 7–9), AffineGrid
// (20). Every mode is the same separable sum: per axis, each output coordinate maps to a few (input index, weight)
// taps; an output element is the weighted sum over the product of its taps.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

struct ResizeAttrs {
  std::string mode;       // nearest | linear | cubic
  std::string transform;  // coordinate_transformation_mode
  std::string nearest;    // nearest_mode; "simple" is Resize-10/Upsample: floor up, ceil down
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation = 0;
  std::vector<int64_t> axes;  // empty: all
  std::string policy;         // keep_aspect_ratio_policy
};

Result<ResizeAttrs> ReadAttrs(const Node& node, int64_t opset) {
  const bool modern = node.op_type == "Resize" && opset >= 11;
  ResizeAttrs a;
  a.mode = node.GetString("mode", "nearest");
  if (a.mode == "bilinear") a.mode = "linear";  // Upsample's early spelling
  a.transform = modern ? node.GetString("coordinate_transformation_mode", "half_pixel") : "asymmetric";
  a.nearest = modern ? node.GetString("nearest_mode", "round_prefer_floor") : "simple";
  a.cubic_a = node.GetFloat("cubic_coeff_a", -0.75f);
  a.exclude_outside = node.GetInt("exclude_outside", 0) != 0;
  a.antialias = opset >= 18 && node.GetInt("antialias", 0) != 0;
  a.extrapolation = node.GetFloat("extrapolation_value", 0.0f);
  if (opset >= 18) a.axes = node.GetInts("axes");
  a.policy = opset >= 18 ? node.GetString("keep_aspect_ratio_policy", "stretch") : "stretch";
  auto bad = [&](const std::string& attr, const std::string& value) {
    return InvalidArgument(node.Describe() + ": " + attr + " '" + value + "' is not supported");
  };
  if (a.mode != "nearest" && a.mode != "linear" && (a.mode != "cubic" || !modern)) return bad("mode", a.mode);
  static const char* kTransforms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                      "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  if (std::find(std::begin(kTransforms), std::end(kTransforms), a.transform) == std::end(kTransforms)) {
    return bad("coordinate_transformation_mode", a.transform);
  }
  if (a.transform == "half_pixel_symmetric" && opset < 19) {
    return InvalidArgument(node.Describe() + ": coordinate_transformation_mode 'half_pixel_symmetric' exists from " +
                           "Resize-19, the model imports opset " + std::to_string(opset));
  }
  static const char* kNearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple"};
  if (std::find(std::begin(kNearest), std::end(kNearest), a.nearest) == std::end(kNearest)) {
    return bad("nearest_mode", a.nearest);
  }
  if (a.policy != "stretch" && a.policy != "not_larger" && a.policy != "not_smaller") {
    return bad("keep_aspect_ratio_policy", a.policy);
  }
  return a;
}

// Where scales/sizes/roi come from: Upsample-7 has a scales attribute; Upsample-9 and Resize-10 a scales
// input 1; Resize-11+ inputs roi (1), scales (2), sizes (3).
struct InputSlots {
  int roi = -1, scales = -1, sizes = -1;
};

InputSlots Slots(const Node& node, int64_t opset) {
  if (node.op_type == "Upsample") return {-1, opset >= 9 ? 1 : -1, -1};
  if (opset < 11) return {-1, 1, -1};
  return {1, 2, 3};
}

// Contents of optional input i: nullptr when omitted or empty. Shape inference sets *missing when the
// contents are not known yet.
const Tensor* OptionalValue(InferContext& ctx, int i, bool* missing) {
  const ValueInfo* in = i < 0 ? nullptr : ctx.input(static_cast<size_t>(i));
  if (in == nullptr || NumElements(in->shape) == 0) return nullptr;
  const Tensor* t = ctx.RequireValue(static_cast<size_t>(i));
  if (t == nullptr) *missing = true;
  return t;
}

const Tensor* OptionalValue(const KernelContext& ctx, int i, bool* /*missing*/) {
  const Tensor* t = i < 0 ? nullptr : ctx.input(static_cast<size_t>(i));
  return t != nullptr && t->numel() > 0 ? t : nullptr;
}

struct ResizePlan {
  ResizeAttrs attrs;
  Shape out;
  std::vector<double> scale;               // per dim, as the coordinate transforms use it
  std::vector<double> roi_start, roi_end;  // per dim, tf_crop_and_resize only
};

template <typename Ctx>
Result<ResizePlan> PlanResize(Ctx& ctx, const Shape& in, bool* missing) {
  const Node& node = ctx.node();
  ResizePlan p;
  ASSIGN_OR_RETURN(p.attrs, ReadAttrs(node, ctx.opset()));
  const InputSlots slots = Slots(node, ctx.opset());
  const Tensor* scales_t = OptionalValue(ctx, slots.scales, missing);
  const Tensor* sizes_t = OptionalValue(ctx, slots.sizes, missing);
  const Tensor* roi_t = OptionalValue(ctx, slots.roi, missing);
  if (*missing) return p;

  const auto rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes = p.attrs.axes;
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  ASSIGN_OR_RETURN(axes, NormalizeAxes(axes, rank, node));
  const size_t n = axes.size();
  p.out = in;
  p.scale.assign(in.size(), 1.0);
  p.roi_start.assign(in.size(), 0.0);
  p.roi_end.assign(in.size(), 1.0);

  std::vector<double> scales;
  if (scales_t != nullptr) {
    for (int64_t i = 0; i < scales_t->numel(); ++i) scales.push_back(scales_t->GetAsDouble(i));
  } else if (node.op_type == "Upsample" && ctx.opset() < 9) {
    for (float s : node.GetFloats("scales")) scales.push_back(s);
  }
  if (!scales.empty() && sizes_t != nullptr) {
    return InvalidArgument(node.Describe() + ": give either scales or sizes, not both");
  }
  if (scales.empty() && sizes_t == nullptr) return InvalidArgument(node.Describe() + ": needs scales or sizes");
  if (!scales.empty()) {
    if (scales.size() != n) {
      return InvalidArgument(node.Describe() + ": " + std::to_string(scales.size()) + " scales for " +
                             std::to_string(n) + " axes");
    }
    for (size_t i = 0; i < n; ++i) {
      const auto d = static_cast<size_t>(axes[i]);
      if (!(scales[i] > 0)) {
        return InvalidArgument(node.Describe() + ": scale " + std::to_string(scales[i]) + " must be positive");
      }
      p.scale[d] = scales[i];
      p.out[d] = in[d] < 0 ? -1 : static_cast<int64_t>(std::floor(static_cast<double>(in[d]) * scales[i]));
    }
  } else {
    const std::vector<int64_t> sizes = sizes_t->ToInt64Vector();
    if (sizes.size() != n) {
      return InvalidArgument(node.Describe() + ": " + std::to_string(sizes.size()) + " sizes for " + std::to_string(n) +
                             " axes");
    }
    for (size_t i = 0; i < n; ++i) {
      const auto d = static_cast<size_t>(axes[i]);
      if (sizes[i] < 0) return InvalidArgument(node.Describe() + ": sizes must not be negative");
      p.out[d] = sizes[i];
      p.scale[d] = in[d] > 0 ? static_cast<double>(sizes[i]) / static_cast<double>(in[d]) : 1.0;
    }
    if (p.attrs.policy != "stretch") {
      // One scale for every resized axis keeps the aspect ratio; sizes round half up.
      const bool smaller = p.attrs.policy == "not_larger";
      double s = smaller ? std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t a : axes)
        s = smaller ? std::min(s, p.scale[static_cast<size_t>(a)]) : std::max(s, p.scale[static_cast<size_t>(a)]);
      for (int64_t a : axes) {
        const auto d = static_cast<size_t>(a);
        p.scale[d] = s;
        p.out[d] = static_cast<int64_t>(std::floor(s * static_cast<double>(in[d]) + 0.5));
      }
    }
  }
  if (roi_t != nullptr && p.attrs.transform == "tf_crop_and_resize") {
    if (roi_t->numel() != static_cast<int64_t>(2 * n)) {
      return InvalidArgument(node.Describe() + ": roi must hold 2 × " + std::to_string(n) + " values");
    }
    for (size_t i = 0; i < n; ++i) {
      p.roi_start[static_cast<size_t>(axes[i])] = roi_t->GetAsDouble(static_cast<int64_t>(i));
      p.roi_end[static_cast<size_t>(axes[i])] = roi_t->GetAsDouble(static_cast<int64_t>(i + n));
    }
  }
  return p;
}

Status InferResize(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input 'X'");
  bool missing = false;
  ASSIGN_OR_RETURN(ResizePlan p, PlanResize(ctx, x->shape, &missing));
  if (missing) return ctx.ValueNeeded();
  ctx.SetOutput(0, x->dtype, p.out);
  return Status::Ok();
}

// Output coordinate → input coordinate along one axis. `resized` is the spec's length_resized, in * scale
// before flooring (the ONNX reference and its test data use it, e.g. align_corners with scale 0.6).
double SourceCoord(const ResizePlan& p, size_t d, int64_t o, int64_t in_len, int64_t out_len) {
  const double x = static_cast<double>(o);
  const double s = p.scale[d];
  const auto in = static_cast<double>(in_len);
  const double resized = in * s;
  const std::string& t = p.attrs.transform;
  if (t == "asymmetric") return x / s;
  if (t == "tf_half_pixel_for_nn") return (x + 0.5) / s;
  if (t == "align_corners") return resized == 1 ? 0.0 : x * (in - 1) / (resized - 1);
  if (t == "pytorch_half_pixel") return out_len > 1 ? (x + 0.5) / s - 0.5 : 0.0;
  if (t == "tf_crop_and_resize") {
    const double a = p.roi_start[d], b = p.roi_end[d];
    return resized > 1 ? a * (in - 1) + x * (b - a) * (in - 1) / (resized - 1) : 0.5 * (a + b) * (in - 1);
  }
  if (t == "half_pixel_symmetric") {
    // Centres the sampling grid when flooring made the output shorter than in * scale.
    const double offset = in / 2 * (1 - static_cast<double>(out_len) / resized);
    return offset + (x + 0.5) / s - 0.5;
  }
  return (x + 0.5) / s - 0.5;  // half_pixel
}

int64_t NearestIndex(const std::string& mode, double x, double scale) {
  const double f = std::floor(x);
  if (mode == "floor") return static_cast<int64_t>(f);
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  if (mode == "simple") return static_cast<int64_t>(scale < 1 ? std::ceil(x) : f);
  if (x - f == 0.5) return static_cast<int64_t>(mode == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::round(x));
}

// Keys' cubic convolution kernel with coefficient a.
double CubicWeight(double t, double a) {
  t = std::fabs(t);
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0;
}

struct Tap {
  int64_t index;
  double weight;
};

// Taps of one output coordinate; empty means "outside the crop": the output takes extrapolation_value.
std::vector<Tap> AxisTaps(const ResizePlan& p, size_t d, int64_t o, int64_t in_len, int64_t out_len) {
  const double x = SourceCoord(p, d, o, in_len, out_len);
  const ResizeAttrs& a = p.attrs;
  if (a.transform == "tf_crop_and_resize" && (x < 0 || x > static_cast<double>(in_len - 1))) return {};
  if (a.mode == "nearest") {
    return {{std::clamp<int64_t>(NearestIndex(a.nearest, x, p.scale[d]), 0, in_len - 1), 1.0}};
  }
  // Antialiasing stretches the filter by 1/scale when downsampling, so every input contributes.
  const double s = a.antialias ? std::min(p.scale[d], 1.0) : 1.0;
  const double support = (a.mode == "linear" ? 1.0 : 2.0) / s;
  std::vector<Tap> taps;
  double total = 0;
  for (auto i = static_cast<int64_t>(std::ceil(x - support)); i <= static_cast<int64_t>(std::floor(x + support)); ++i) {
    const double t = (static_cast<double>(i) - x) * s;
    double w = a.mode == "linear" ? std::max(0.0, 1 - std::fabs(t)) : CubicWeight(t, a.cubic_a);
    if (a.exclude_outside && (i < 0 || i >= in_len)) w = 0;
    if (w == 0) continue;
    // Taps beyond the border repeat the edge element (the spec's edge padding).
    taps.push_back({std::clamp<int64_t>(i, 0, in_len - 1), w});
    total += w;
  }
  for (Tap& tap : taps) tap.weight /= total;
  return taps;
}

template <typename T>
T Store(double v) {
  // Interpolated integers round to nearest, then saturate.
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) v = std::round(v);
  return FromDouble<T>(v);
}

Status RunResize(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  Tensor& y = *ctx.output(0);
  bool missing = false;
  ASSIGN_OR_RETURN(ResizePlan p, PlanResize(ctx, x.shape(), &missing));
  const size_t rank = x.shape().size();
  if (y.numel() == 0) return Status::Ok();
  if (x.numel() == 0) return ctx.Error("cannot resize an empty input to a non-empty output");
  // taps[d][o]: the taps of output coordinate o along axis d.
  std::vector<std::vector<std::vector<Tap>>> taps(rank);
  for (size_t d = 0; d < rank; ++d) {
    for (int64_t o = 0; o < y.dim(static_cast<int64_t>(d)); ++o) {
      taps[d].push_back(AxisTaps(p, d, o, x.dim(static_cast<int64_t>(d)), y.dim(static_cast<int64_t>(d))));
    }
  }
  const std::vector<int64_t> strides = Strides(x.shape());
  return VisitDType(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::nullptr_t>) {
      return Unsupported(ctx.node().Describe() + ": dtype " + std::string(DTypeName(x.dtype())) + " is not supported");
    } else {
      const T* in = x.data<T>();
      T* out = y.data<T>();
      std::vector<int64_t> coord(rank, 0);
      std::vector<const std::vector<Tap>*> sel(rank);
      std::vector<size_t> pick(rank);
      for (int64_t i = 0; i < y.numel(); ++i) {
        bool outside = false;
        size_t terms = 1;
        for (size_t d = 0; d < rank; ++d) {
          sel[d] = &taps[d][static_cast<size_t>(coord[d])];
          outside = outside || sel[d]->empty();
          terms *= sel[d]->size();
        }
        if (outside) {
          out[i] = Store<T>(p.attrs.extrapolation);
        } else if (terms == 1 && std::all_of(sel.begin(), sel.end(), [](auto* t) { return (*t)[0].weight == 1.0; })) {
          // A single full-weight tap (nearest, or an exact grid point) copies the element unchanged.
          int64_t from = 0;
          for (size_t d = 0; d < rank; ++d) from += (*sel[d])[0].index * strides[d];
          out[i] = in[from];
        } else {
          double sum = 0;
          std::fill(pick.begin(), pick.end(), 0);
          for (size_t t = 0; t < terms; ++t) {
            double w = 1;
            int64_t from = 0;
            for (size_t d = 0; d < rank; ++d) {
              const Tap& tap = (*sel[d])[pick[d]];
              w *= tap.weight;
              from += tap.index * strides[d];
            }
            sum += w * static_cast<double>(in[from]);
            for (size_t d = rank; d-- > 0;) {
              if (++pick[d] < sel[d]->size()) break;
              pick[d] = 0;
            }
          }
          out[i] = Store<T>(sum);
        }
        for (size_t d = rank; d-- > 0;) {
          if (++coord[d] < y.dim(static_cast<int64_t>(d))) break;
          coord[d] = 0;
        }
      }
      return Status::Ok();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// AffineGrid (opset 20): the sampling grid GridSample resamples through. It lives here, with the other
// output → input coordinate maps, rather than in detection.cpp beside GridSample.

// Normalised coordinate of index i on an axis of n samples: pixel centres span (-1, 1), or with
// align_corners the corner pixels sit on -1 and 1 (one sample: -1, as the ONNX reference computes).
double GridCoord(int64_t i, int64_t n, bool align_corners) {
  if (align_corners) return n > 1 ? -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1) : -1.0;
  return (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(n) - 1.0;
}

Status InferAffineGrid(InferContext& ctx) {
  const ValueInfo* theta = ctx.input(0);
  if (theta == nullptr) return ctx.Error("missing input 'theta'");
  if (!IsFloatingDType(theta->dtype)) {
    return ctx.Error("theta has dtype " + std::string(DTypeName(theta->dtype)) + ", AffineGrid takes floating types");
  }
  const Tensor* size = ctx.RequireValue(1);
  if (size == nullptr) return ctx.ValueNeeded();
  const std::vector<int64_t> dims = size->ToInt64Vector();
  if (dims.size() != 4 && dims.size() != 5) {
    return ctx.Error("size must be (N, C, H, W) or (N, C, D, H, W), got " + std::to_string(dims.size()) + " values");
  }
  const int64_t r = static_cast<int64_t>(dims.size()) - 2;  // spatial dims: 2 or 3
  const Shape expected = {dims[0], r, r + 1};
  if (theta->shape.size() != 3 || (theta->shape[0] >= 0 && theta->shape[0] != dims[0]) ||
      (theta->shape[1] >= 0 && theta->shape[1] != r) || (theta->shape[2] >= 0 && theta->shape[2] != r + 1)) {
    return ctx.Error("theta " + ShapeToString(theta->shape) + " should be " + ShapeToString(expected) + " for size " +
                     ShapeToString(dims));
  }
  for (int64_t d : dims) {
    if (d < 0) return ctx.Error("size " + ShapeToString(dims) + " has a negative dim");
  }
  Shape out = {dims[0]};
  out.insert(out.end(), dims.begin() + 2, dims.end());
  out.push_back(r);
  ctx.SetOutput(0, theta->dtype, out);
  return Status::Ok();
}

Status RunAffineGrid(KernelContext& ctx) {
  const Tensor& theta = *ctx.input(0);
  Tensor& grid = *ctx.output(0);
  const bool align = ctx.node().GetInt("align_corners", 0) != 0;
  const std::vector<int64_t> dims = ctx.input(1)->ToInt64Vector();
  const size_t r = dims.size() - 2;
  const Shape spatial(dims.begin() + 2, dims.end());  // (H, W) or (D, H, W)
  const int64_t points = NumElements(spatial);
  return VisitDType(theta.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::nullptr_t> || std::is_integral_v<T>) {
      return Unsupported(ctx.node().Describe() + ": dtype " + std::string(DTypeName(theta.dtype())) +
                         " is not supported");
    } else {
      const T* th = theta.data<T>();
      T* out = grid.data<T>();
      std::vector<double> base(r + 1, 1.0);  // (x, y[, z], 1): x runs along the last dim
      std::vector<int64_t> c(r, 0);
      for (int64_t n = 0; n < dims[0]; ++n) {
        const T* m = th + n * static_cast<int64_t>(r * (r + 1));
        std::fill(c.begin(), c.end(), 0);
        for (int64_t pt = 0; pt < points; ++pt) {
          for (size_t k = 0; k < r; ++k) base[k] = GridCoord(c[r - 1 - k], spatial[r - 1 - k], align);
          for (size_t row = 0; row < r; ++row) {
            double v = 0;
            for (size_t k = 0; k <= r; ++k) v += static_cast<double>(m[row * (r + 1) + k]) * base[k];
            out[(n * points + pt) * static_cast<int64_t>(r) + static_cast<int64_t>(row)] = FromDouble<T>(v);
          }
          for (size_t d = r; d-- > 0;) {
            if (++c[d] < spatial[d]) break;
            c[d] = 0;
          }
        }
      }
      return Status::Ok();
    }
  });
}

}  // namespace

std::vector<OpEntry> ResizeOps() {
  return {
      {"Resize", InferResize, RunResize},
      {"Upsample", InferResize, RunResize},
      {"AffineGrid", InferAffineGrid, RunAffineGrid},
  };
}

}  // namespace chipfit
