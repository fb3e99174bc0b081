// Reference kernels: Conv, ConvInteger and ConvTranspose over any number of spatial dims, 2-D DeformConv, and
// chipfit's FusedConv.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/reference/conv_util.h"
#include "core/reference/ops.h"

namespace chipfit {
namespace {

bool Known(int64_t d) { return d >= 0; }

// ConvTranspose: a larger output_shape than the inputs produce clamps the total padding at 0, so
// the extra rows hold only the bias (ONNX Runtime does the same; the spec's formula would make
// the pads negative). SAME_UPPER puts the odd pad at the end, everything else at the start.
Status ResolveTransposedWindow(const Node& node, Window& w) {
  const size_t rank = w.rank();
  const std::vector<int64_t> output_padding = node.GetInts("output_padding", std::vector<int64_t>(rank, 0));
  std::vector<int64_t> output_shape = node.GetInts("output_shape");
  const std::string where = node.Describe() + ": ";
  if (output_padding.size() != rank ||
      std::any_of(output_padding.begin(), output_padding.end(), [](int64_t v) { return v < 0; })) {
    return InvalidArgument(where + "output_padding " + JoinInts(output_padding) + " must have " + std::to_string(rank) +
                           " non-negative entries");
  }
  if (output_shape.size() == rank + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != rank) {
    return InvalidArgument(where + "output_shape " + JoinInts(output_shape) + " must have " + std::to_string(rank) +
                           " entries (one per spatial dim)");
  }
  const bool same = w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER";
  w.out.assign(rank, -1);
  for (size_t i = 0; i < rank; ++i) {
    if (!output_shape.empty()) {
      w.out[i] = output_shape[i];
    } else if (same && Known(w.in[i])) {
      w.out[i] = w.in[i] * w.strides[i];
    }
    if (!Known(w.in[i]) || !Known(w.kernel[i])) continue;
    const int64_t full = w.strides[i] * (w.in[i] - 1) + output_padding[i] + w.Extent(i);
    if (!output_shape.empty() || same) {
      const int64_t total = std::max<int64_t>(0, full - w.out[i]);
      const int64_t small = total / 2;
      w.pad_begin[i] = w.auto_pad == "SAME_UPPER" ? small : total - small;
      w.pad_end[i] = total - w.pad_begin[i];
    } else {
      w.out[i] = full - w.pad_begin[i] - w.pad_end[i];
    }
    if (w.out[i] <= 0) {
      return InvalidArgument(where + "output spatial dim " + std::to_string(i) + " would be " +
                             std::to_string(w.out[i]) + " (pads " + JoinInts(node.GetInts("pads")) + ")");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<ConvGeometry> ReadConvGeometry(const Node& node, const Shape& x, const Shape& w, bool transposed) {
  const std::string where = node.Describe() + ": ";
  if (x.size() < 3) {
    return InvalidArgument(where + "input X must be N x C x D1 ... (rank >= 3), got " + ShapeToString(x));
  }
  if (w.size() != x.size()) {
    return InvalidArgument(where + "weights W " + ShapeToString(w) + " must have the rank of X " + ShapeToString(x));
  }
  ConvGeometry g;
  g.group = node.GetInt("group", 1);
  if (g.group < 1) return InvalidArgument(where + "group " + std::to_string(g.group) + " must be >= 1");
  g.batch = x[0];
  g.in_channels = x[1];
  const int64_t w_channels = transposed ? w[0] : (Known(w[1]) ? w[1] * g.group : -1);
  g.out_channels = transposed ? (Known(w[1]) ? w[1] * g.group : -1) : w[0];
  if (Known(g.in_channels) && Known(w_channels) && g.in_channels != w_channels) {
    return InvalidArgument(where + "X has " + std::to_string(g.in_channels) + " channels but W " + ShapeToString(w) +
                           " with group " + std::to_string(g.group) + " expects " + std::to_string(w_channels));
  }
  const int64_t split = transposed ? g.in_channels : g.out_channels;
  if (Known(split) && split % g.group != 0) {
    return InvalidArgument(where + (transposed ? "input" : "output") + " channels " + std::to_string(split) +
                           " are not divisible by group " + std::to_string(g.group));
  }
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (node.Has("kernel_shape")) {
    const std::vector<int64_t> attr = node.GetInts("kernel_shape");
    for (size_t i = 0; i < attr.size() && i < kernel.size(); ++i) {
      if (Known(kernel[i]) && kernel[i] != attr[i]) {
        return InvalidArgument(where + "kernel_shape " + JoinInts(attr) + " disagrees with W " + ShapeToString(w));
      }
    }
    kernel = attr;
  }
  ASSIGN_OR_RETURN(g.window, ReadWindow(node, Shape(x.begin() + 2, x.end()), kernel));
  RETURN_IF_ERROR(transposed ? ResolveTransposedWindow(node, g.window) : ResolveForwardWindow(node, g.window, false));
  return g;
}

namespace {

Shape OutputShape(const ConvGeometry& g) {
  Shape out = {g.batch, g.out_channels};
  out.insert(out.end(), g.window.out.begin(), g.window.out.end());
  return out;
}

// Optional per-output-channel input `i` (Conv's B, ConvInteger's w_zero_point) must be 1-D [M];
// a scalar is allowed where `scalar_ok` (zero points).
Status CheckPerChannel(const InferContext& ctx, size_t i, int64_t channels, bool scalar_ok) {
  const ValueInfo* in = ctx.input(i);
  if (in == nullptr) return Status::Ok();
  const bool scalar = scalar_ok && NumElements(in->shape) == 1 && in->shape.size() <= 1;
  if (scalar || (in->shape.size() == 1 && (!Known(in->shape[0]) || !Known(channels) || in->shape[0] == channels))) {
    return Status::Ok();
  }
  return ctx.Error("input " + std::to_string(i) + " has shape " + ShapeToString(in->shape) + ", expected [" +
                   std::to_string(channels) + "]" + (scalar_ok ? " or a scalar" : ""));
}

Status InferConvLike(InferContext& ctx, bool transposed, bool integer) {
  const ValueInfo* x = ctx.input(0);
  const ValueInfo* w = ctx.input(1);
  if (x == nullptr || w == nullptr) return ctx.Error("inputs X and W are required");
  const std::vector<DType> x_types = integer ? std::vector<DType>{DType::kU8, DType::kI8} : kFloatDTypes;
  RETURN_IF_ERROR(CheckDType(ctx, 0, x_types));
  RETURN_IF_ERROR(CheckDType(ctx, 1, x_types));
  if (!integer && w->dtype != x->dtype) {
    return ctx.Error("W has dtype " + std::string(DTypeName(w->dtype)) + " but X has " +
                     std::string(DTypeName(x->dtype)));
  }
  ASSIGN_OR_RETURN(ConvGeometry g, ReadConvGeometry(ctx.node(), x->shape, w->shape, transposed));
  if (integer) {
    RETURN_IF_ERROR(CheckDType(ctx, 2, x_types));
    RETURN_IF_ERROR(CheckDType(ctx, 3, x_types));
    RETURN_IF_ERROR(CheckPerChannel(ctx, 2, 1, true));
    RETURN_IF_ERROR(CheckPerChannel(ctx, 3, g.out_channels, true));
  } else {
    RETURN_IF_ERROR(CheckDType(ctx, 2, {x->dtype}));
    RETURN_IF_ERROR(CheckPerChannel(ctx, 2, g.out_channels, false));
  }
  ctx.SetOutput(0, integer ? DType::kI32 : x->dtype, OutputShape(g));
  return Status::Ok();
}

Status InferConv(InferContext& ctx) { return InferConvLike(ctx, false, false); }
Status InferConvInteger(InferContext& ctx) { return InferConvLike(ctx, false, true); }
Status InferConvTranspose(InferContext& ctx) { return InferConvLike(ctx, true, false); }

// Per-channel values of an optional input (bias or zero point), broadcast from a scalar.
std::vector<double> PerChannel(const Tensor* t, int64_t channels) {
  std::vector<double> v = t != nullptr ? ToDoubles(*t) : std::vector<double>{0.0};
  if (v.size() == 1) v.assign(static_cast<size_t>(channels), v[0]);
  return v;
}

std::vector<double> ConvForward(const ConvGeometry& g, const std::vector<double>& x, const std::vector<double>& w,
                                const std::vector<double>& bias) {
  return ConvAccumulate<double>(g, x, w, bias);
}

// Scatters every input element through the kernel: y[n, m, i*stride - pad + t*dilation] += x * w.
std::vector<double> ConvTransposed(const ConvGeometry& g, const std::vector<double>& x, const std::vector<double>& w,
                                   const std::vector<double>& bias) {
  const Window& win = g.window;
  // The same tap walk as the forward window, with the output plane as the target: taps past
  // either end of the output are dropped.
  Window scatter = win;
  scatter.in = win.out;
  scatter.pad_end.assign(win.rank(), 0);
  const int64_t in_plane = Product(win.in), out_plane = Product(win.out), kernel_size = Product(win.kernel);
  const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
  std::vector<double> y(static_cast<size_t>(g.batch * g.out_channels * out_plane));
  for (int64_t nm = 0; nm < g.batch * g.out_channels; ++nm) {
    std::fill_n(y.begin() + nm * out_plane, out_plane, bias[static_cast<size_t>(nm % g.out_channels)]);
  }
#pragma omp parallel for
  for (int64_t ng = 0; ng < g.batch * g.group; ++ng) {  // each (n, group) writes its own output channels
    const int64_t n = ng / g.group, group = ng % g.group;
    std::vector<int64_t> coord(win.rank(), 0), taps;
    for (int64_t i = 0; i < in_plane; ++i) {
      WindowTaps(scatter, coord, taps);
      for (int64_t c = group * cg; c < (group + 1) * cg; ++c) {
        const double xv = x[static_cast<size_t>((n * g.in_channels + c) * in_plane + i)];
        for (int64_t m = 0; m < mg; ++m) {
          const double* wp = &w[static_cast<size_t>((c * mg + m) * kernel_size)];
          double* yp = &y[static_cast<size_t>((n * g.out_channels + group * mg + m) * out_plane)];
          for (int64_t t = 0; t < kernel_size; ++t) {
            if (taps[static_cast<size_t>(t)] >= 0) yp[taps[static_cast<size_t>(t)]] += xv * wp[t];
          }
        }
      }
      NextIndex(coord, win.in);
    }
  }
  return y;
}

// The convolution in double, before the single rounding to the output dtype (FusedConv adds its
// epilogue first).
Result<std::vector<double>> ComputeConvLike(const KernelContext& ctx, bool transposed, bool integer) {
  const Tensor& x = *ctx.input(0);
  const Tensor& w = *ctx.input(1);
  ASSIGN_OR_RETURN(ConvGeometry g, ReadConvGeometry(ctx.node(), x.shape(), w.shape(), transposed));
  std::vector<double> xs = ToDoubles(x), ws = ToDoubles(w);
  std::vector<double> bias(static_cast<size_t>(g.out_channels), 0.0);
  if (integer) {
    const double x_zero = PerChannel(ctx.input(2), 1)[0];
    for (double& v : xs) v -= x_zero;
    const std::vector<double> w_zero = PerChannel(ctx.input(3), g.out_channels);
    const size_t per_channel = std::max<size_t>(1, ws.size() / std::max<size_t>(1, w_zero.size()));
    for (size_t i = 0; i < ws.size(); ++i) ws[i] -= w_zero[i / per_channel];
  } else {
    bias = PerChannel(ctx.input(2), g.out_channels);
  }
  return transposed ? ConvTransposed(g, xs, ws, bias) : ConvForward(g, xs, ws, bias);
}

Status RunConvLike(KernelContext& ctx, bool transposed, bool integer) {
  ASSIGN_OR_RETURN(const std::vector<double> y, ComputeConvLike(ctx, transposed, integer));
  StoreDoubles(y, ctx.output(0));
  return Status::Ok();
}

Status RunConv(KernelContext& ctx) { return RunConvLike(ctx, false, false); }
Status RunConvInteger(KernelContext& ctx) { return RunConvLike(ctx, false, true); }
Status RunConvTranspose(KernelContext& ctx) { return RunConvLike(ctx, true, false); }

// ---------------------------------------------------------------------------------------------------------------
// DeformConv (opset 19): a 2-D Conv whose every tap is moved by a learned (dy, dx) offset and scaled by an
// optional mask; X is sampled bilinearly there, zero outside. Offsets and mask come per offset group of input
// channels: offset [N, offset_group·2·kH·kW, oH, oW] holds (dy, dx) pairs per tap; mask [N, offset_group·kH·kW,
// oH, oW].

Result<ConvGeometry> ReadDeformGeometry(const Node& node, const Shape& x, const Shape& w) {
  if (x.size() != 4) {
    return Unsupported(node.Describe() + ": DeformConv-19 over " + std::to_string(static_cast<int64_t>(x.size()) - 2) +
                       " spatial dims is not implemented (2-D only), X is " + ShapeToString(x));
  }
  if (node.Has("auto_pad")) return InvalidArgument(node.Describe() + ": DeformConv has no auto_pad attribute");
  ASSIGN_OR_RETURN(ConvGeometry g, ReadConvGeometry(node, x, w, false));
  const int64_t og = node.GetInt("offset_group", 1);
  if (og < 1 || (Known(g.in_channels) && g.in_channels % og != 0)) {
    return InvalidArgument(node.Describe() + ": offset_group " + std::to_string(og) + " must be >= 1 and divide the " +
                           std::to_string(g.in_channels) + " input channels");
  }
  return g;
}

// Expected shape of the offset (per tap 2 values) or mask (1 value) input.
Shape DeformSideShape(const ConvGeometry& g, int64_t offset_group, int64_t per_tap) {
  return {g.batch, offset_group * per_tap * Product(g.window.kernel), g.window.out[0], g.window.out[1]};
}

bool ShapeMatches(const Shape& actual, const Shape& expected) {
  if (actual.size() != expected.size()) return false;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (Known(actual[i]) && Known(expected[i]) && actual[i] != expected[i]) return false;
  }
  return true;
}

Status InferDeformConv(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  const ValueInfo* w = ctx.input(1);
  const ValueInfo* offset = ctx.input(2);
  if (x == nullptr || w == nullptr || offset == nullptr) return ctx.Error("inputs X, W and offset are required");
  for (size_t i : {0, 1, 2, 3, 4}) RETURN_IF_ERROR(CheckDType(ctx, i, {x->dtype}));
  RETURN_IF_ERROR(CheckDType(ctx, 0, kFloatDTypes));
  ASSIGN_OR_RETURN(ConvGeometry g, ReadDeformGeometry(ctx.node(), x->shape, w->shape));
  const int64_t og = ctx.node().GetInt("offset_group", 1);
  const Shape want_offset = DeformSideShape(g, og, 2), want_mask = DeformSideShape(g, og, 1);
  if (!ShapeMatches(offset->shape, want_offset)) {
    return ctx.Error("offset " + ShapeToString(offset->shape) + " should be " + ShapeToString(want_offset));
  }
  if (const ValueInfo* mask = ctx.input(4); mask != nullptr && !ShapeMatches(mask->shape, want_mask)) {
    return ctx.Error("mask " + ShapeToString(mask->shape) + " should be " + ShapeToString(want_mask));
  }
  RETURN_IF_ERROR(CheckPerChannel(ctx, 3, g.out_channels, false));
  ctx.SetOutput(0, x->dtype, OutputShape(g));
  return Status::Ok();
}

// Bilinear sample of one H x W plane at (h, w); corners outside the plane count as zero.
double SampleBilinear(const double* plane, int64_t height, int64_t width, double h, double w) {
  if (h <= -1 || h >= static_cast<double>(height) || w <= -1 || w >= static_cast<double>(width)) return 0.0;
  const auto h0 = static_cast<int64_t>(std::floor(h)), w0 = static_cast<int64_t>(std::floor(w));
  const double fh = h - static_cast<double>(h0), fw = w - static_cast<double>(w0);
  auto at = [&](int64_t y, int64_t x) {
    return y >= 0 && y < height && x >= 0 && x < width ? plane[y * width + x] : 0.0;
  };
  return (1 - fh) * ((1 - fw) * at(h0, w0) + fw * at(h0, w0 + 1)) +
         fh * ((1 - fw) * at(h0 + 1, w0) + fw * at(h0 + 1, w0 + 1));
}

Status RunDeformConv(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(ConvGeometry g, ReadDeformGeometry(ctx.node(), x.shape(), ctx.input(1)->shape()));
  const Window& win = g.window;
  const int64_t og = ctx.node().GetInt("offset_group", 1);
  const std::vector<double> xs = ToDoubles(x), ws = ToDoubles(*ctx.input(1)), off = ToDoubles(*ctx.input(2));
  const std::vector<double> mask = ctx.input(4) != nullptr ? ToDoubles(*ctx.input(4)) : std::vector<double>{};
  const std::vector<double> bias = PerChannel(ctx.input(3), g.out_channels);
  const int64_t height = win.in[0], width = win.in[1], oh_n = win.out[0], ow_n = win.out[1];
  const int64_t kh_n = win.kernel[0], kw_n = win.kernel[1], taps = kh_n * kw_n, out_plane = oh_n * ow_n;
  const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group, c_per_og = g.in_channels / og;
  std::vector<double> y(static_cast<size_t>(g.batch * g.out_channels * out_plane));
#pragma omp parallel for
  for (int64_t no = 0; no < g.batch * out_plane; ++no) {
    const int64_t n = no / out_plane, o = no % out_plane, oh = o / ow_n, ow = o % ow_n;
    std::vector<double> acc(bias.begin(), bias.end());
    for (int64_t c = 0; c < g.in_channels; ++c) {
      const int64_t group = c / cg, offset_group = c / c_per_og;
      const double* plane = &xs[static_cast<size_t>((n * g.in_channels + c) * height * width)];
      for (int64_t t = 0; t < taps; ++t) {
        const int64_t kh = t / kw_n, kw = t % kw_n;
        const int64_t side = n * og + offset_group;  // (n, offset group) row block of offset and mask
        const double dy = off[static_cast<size_t>(((side * taps + t) * 2) * out_plane + o)];
        const double dx = off[static_cast<size_t>(((side * taps + t) * 2 + 1) * out_plane + o)];
        const double m = mask.empty() ? 1.0 : mask[static_cast<size_t>((side * taps + t) * out_plane + o)];
        const double h = static_cast<double>(oh * win.strides[0] - win.pad_begin[0] + kh * win.dilations[0]) + dy;
        const double w = static_cast<double>(ow * win.strides[1] - win.pad_begin[1] + kw * win.dilations[1]) + dx;
        const double v = m * SampleBilinear(plane, height, width, h, w);
        if (v == 0.0) continue;
        for (int64_t mm = group * mg; mm < (group + 1) * mg; ++mm) {
          acc[static_cast<size_t>(mm)] += v * ws[static_cast<size_t>((mm * cg + c - group * cg) * taps + t)];
        }
      }
    }
    for (int64_t mm = 0; mm < g.out_channels; ++mm) {
      y[static_cast<size_t>((n * g.out_channels + mm) * out_plane + o)] = acc[static_cast<size_t>(mm)];
    }
  }
  StoreDoubles(y, ctx.output(0));
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------------------------
// FusedConv (com.chipfit, written by FuseConvActivations):
//   Y = post_scale · clamp(activation(Conv(X, W, B) + Z), clamp_min, clamp_max) + post_shift.

enum class Activation { kNone, kRelu, kClip, kLeakyRelu, kHardSigmoid, kHardSwish, kSigmoid, kTanh, kSwish };

struct FusedActivation {
  Activation kind = Activation::kNone;
  double a = 0, b = 0;  // Clip {min, max}, LeakyRelu {alpha}, HardSigmoid {alpha, beta}
  // Max(·, clamp_min) / Min(·, clamp_max) absorbed after the activation (±inf when absent).
  double clamp_min = -std::numeric_limits<double>::infinity();
  double clamp_max = std::numeric_limits<double>::infinity();
  // Mul / Div / Add / Sub by a constant absorbed last: y · post_scale + post_shift.
  double post_scale = 1.0, post_shift = 0.0;
};

struct ActivationDef {
  const char* name;
  Activation kind;
  size_t params;
  float a = 0, b = 0;  // what absent activation_params mean: the ONNX op's defaults
};

constexpr ActivationDef kActivations[] = {
    {"", Activation::kNone, 0},
    {"Relu", Activation::kRelu, 0},
    {"Clip", Activation::kClip, 2, -std::numeric_limits<float>::max(), std::numeric_limits<float>::max()},
    {"LeakyRelu", Activation::kLeakyRelu, 1, 0.01f},
    {"HardSigmoid", Activation::kHardSigmoid, 2, 0.2f, 0.5f},
    {"HardSwish", Activation::kHardSwish, 0},
    {"Sigmoid", Activation::kSigmoid, 0},
    {"Tanh", Activation::kTanh, 0},
    {"Swish", Activation::kSwish, 0},
};

Result<FusedActivation> ReadFusedActivation(const Node& node) {
  const std::string name = node.GetString("activation", "");
  const std::vector<float> params = node.GetFloats("activation_params");
  for (const ActivationDef& def : kActivations) {
    if (name != def.name) continue;
    if (!params.empty() && params.size() != def.params) {
      return InvalidArgument(node.Describe() + ": activation '" + name + "' takes " + std::to_string(def.params) +
                             " activation_params, got " + std::to_string(params.size()));
    }
    FusedActivation act{def.kind, params.empty() ? def.a : params[0], params.size() < 2 ? def.b : params[1]};
    if (node.Has("clamp_min")) act.clamp_min = node.GetFloat("clamp_min", 0);
    if (node.Has("clamp_max")) act.clamp_max = node.GetFloat("clamp_max", 0);
    act.post_scale = node.GetFloat("post_scale", 1.0f);
    act.post_shift = node.GetFloat("post_shift", 0.0f);
    return act;
  }
  return InvalidArgument(node.Describe() + ": activation '" + name +
                         "' is not one of Relu, Clip, LeakyRelu, HardSigmoid, HardSwish, Sigmoid, Tanh, Swish");
}

// The same formulas (and NaN behaviour) as the separate reference ops, so fusing changes only rounding.
double Activate(const FusedActivation& act, double x) {
  switch (act.kind) {
    case Activation::kNone: return x;
    case Activation::kRelu: return x < 0 ? 0.0 : x;
    case Activation::kClip: return x < act.a ? act.a : (x > act.b ? act.b : x);
    case Activation::kLeakyRelu: return x < 0 ? act.a * x : x;
    case Activation::kHardSigmoid: return std::clamp(act.a * x + act.b, 0.0, 1.0);
    case Activation::kHardSwish: return x * std::clamp(x / 6.0 + 0.5, 0.0, 1.0);
    case Activation::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
    case Activation::kTanh: return std::tanh(x);
    case Activation::kSwish: return x / (1.0 + std::exp(-x));
  }
  return x;
}

// Z broadcasts to the conv output without growing it (a larger sum would not be the conv's shape,
// which is what FusedConv writes). Unknown dims (< 0) pass until shapes are bound.
Status CheckResidual(const Node& node, const Shape& out, const Shape& z) {
  bool ok = z.size() <= out.size();
  for (size_t i = 0; ok && i < z.size(); ++i) {
    const int64_t zd = z[i], od = out[out.size() - z.size() + i];
    ok = zd == 1 || zd == od || zd < 0 || od < 0;
  }
  if (ok) return Status::Ok();
  return InvalidArgument(node.Describe() + ": input Z of shape " + ShapeToString(z) +
                         " does not broadcast to the conv output shape " + ShapeToString(out) +
                         " (the sum must keep the conv's shape)");
}

}  // namespace

Status InferFusedConv(InferContext& ctx) {
  RETURN_IF_ERROR(InferConvLike(ctx, false, false));
  RETURN_IF_ERROR(ReadFusedActivation(ctx.node()).status());
  const ValueInfo* z = ctx.input(3);
  if (z == nullptr) return Status::Ok();
  if (z->dtype != ctx.input(0)->dtype) {
    return ctx.Error("Z has dtype " + std::string(DTypeName(z->dtype)) + " but X has " +
                     std::string(DTypeName(ctx.input(0)->dtype)));
  }
  return CheckResidual(ctx.node(), ctx.outputs()[0].shape, z->shape);
}

Status RunFusedConv(KernelContext& ctx) {
  ASSIGN_OR_RETURN(const FusedActivation act, ReadFusedActivation(ctx.node()));
  ASSIGN_OR_RETURN(std::vector<double> y, ComputeConvLike(ctx, false, false));
  Tensor& out = *ctx.output(0);
  if (const Tensor* z = ctx.input(3)) {
    RETURN_IF_ERROR(CheckResidual(ctx.node(), out.shape(), z->shape()));
    const std::vector<double> zs = ToDoubles(*z);
    const BroadcastIndexer index(z->shape(), out.shape());
    for (size_t i = 0; i < y.size(); ++i) y[i] += zs[static_cast<size_t>(index(static_cast<int64_t>(i)))];
  }
  if (act.kind != Activation::kNone) {
    for (double& v : y) v = Activate(act, v);
  }
  // Max / Min with a constant: NaN propagates as in the separate ops.
  if (std::isfinite(act.clamp_min) || std::isfinite(act.clamp_max)) {
    for (double& v : y) {
      if (!std::isnan(v)) v = std::min(std::max(v, act.clamp_min), act.clamp_max);
    }
  }
  if (act.post_scale != 1.0 || act.post_shift != 0.0) {
    for (double& v : y) v = v * act.post_scale + act.post_shift;
  }
  StoreDoubles(y, &out);
  return Status::Ok();
}

std::vector<OpEntry> ConvOps() {
  return {
      {"Conv", InferConv, RunConv},
      {"ConvInteger", InferConvInteger, RunConvInteger},
      {"ConvTranspose", InferConvTranspose, RunConvTranspose},
      {"DeformConv", InferDeformConv, RunDeformConv},
  };
}

}  // namespace chipfit
