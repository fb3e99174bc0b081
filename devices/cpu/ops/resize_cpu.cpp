// Resize on oneDNN resampling (4-D, fp32, channels-last), only where oneDNN samples exactly what ONNX asks.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/reference/reference_kernels.h"
#include "devices/cpu/onednn_util.h"
#include "devices/cpu/ops/cpu_ops.h"

namespace chipfit::cpu {
namespace {

using dnnl::memory;
using dt = memory::data_type;

struct ResizeAttrs {
  std::string mode, transform, nearest;
  bool exclude_outside = false;
  bool antialias = false;
};

// What ONNX asks along one axis, and how oneDNN's resampling (src/dst sizes only) samples it.
struct Axis {
  int64_t in = 0, out = 0;
  double scale = 1.0;  // the scale ONNX's coordinate transforms use
};

// Output coordinate → input coordinate, as the ONNX spec (and core/reference/resize.cpp) define it.
double SourceCoord(const ResizeAttrs& a, const Axis& axis, int64_t o) {
  const auto x = static_cast<double>(o);
  const double s = axis.scale;
  const auto in = static_cast<double>(axis.in);
  const double resized = in * s;
  if (a.transform == "asymmetric") return x / s;
  if (a.transform == "tf_half_pixel_for_nn") return (x + 0.5) / s;
  if (a.transform == "align_corners") return resized == 1 ? 0.0 : x * (in - 1) / (resized - 1);
  if (a.transform == "pytorch_half_pixel") return axis.out > 1 ? (x + 0.5) / s - 0.5 : 0.0;
  if (a.transform == "half_pixel_symmetric") {
    return in / 2 * (1 - static_cast<double>(axis.out) / resized) + (x + 0.5) / s - 0.5;
  }
  return (x + 0.5) / s - 0.5;  // half_pixel
}

int64_t OnnxNearest(const ResizeAttrs& a, const Axis& axis, int64_t o) {
  const double x = SourceCoord(a, axis, o);
  const double f = std::floor(x);
  int64_t i = 0;
  if (a.nearest == "floor") {
    i = static_cast<int64_t>(f);
  } else if (a.nearest == "ceil") {
    i = static_cast<int64_t>(std::ceil(x));
  } else if (a.nearest == "simple") {  // Resize-10: floor when upsampling, ceil when downsampling
    i = static_cast<int64_t>(axis.scale < 1 ? std::ceil(x) : f);
  } else if (x - f == 0.5) {
    i = static_cast<int64_t>(a.nearest == "round_prefer_ceil" ? f + 1 : f);
  } else {
    i = static_cast<int64_t>(std::round(x));
  }
  return std::clamp<int64_t>(i, 0, axis.in - 1);
}

// oneDNN 2.6 (cpu/resampling_utils.hpp): half-pixel centres from the sizes, in float, rounded
// half away from zero for nearest; linear takes the truncated and the next index.
float OnednnCoord(const Axis& axis, int64_t o) {
  return (static_cast<float>(o) + 0.5f) * static_cast<float>(axis.in) / static_cast<float>(axis.out) - 0.5f;
}
int64_t OnednnNearest(const Axis& axis, int64_t o) { return static_cast<int64_t>(std::roundf(OnednnCoord(axis, o))); }

// Interpolation weight of every input index for output coordinate o: ONNX's n-linear filter
// (stretched when antialiasing a downscale) with edge indices clamped, normalised to sum 1.
std::vector<double> OnnxLinearWeights(const ResizeAttrs& a, const Axis& axis, int64_t o) {
  std::vector<double> w(static_cast<size_t>(axis.in), 0.0);
  const double x = SourceCoord(a, axis, o);
  const double s = a.antialias ? std::min(axis.scale, 1.0) : 1.0;
  const double support = 1.0 / s;
  double total = 0;
  for (auto i = static_cast<int64_t>(std::ceil(x - support)); i <= static_cast<int64_t>(std::floor(x + support)); ++i) {
    double t = std::max(0.0, 1 - std::fabs((static_cast<double>(i) - x) * s));
    if (a.exclude_outside && (i < 0 || i >= axis.in)) t = 0;
    w[static_cast<size_t>(std::clamp<int64_t>(i, 0, axis.in - 1))] += t;
    total += t;
  }
  if (total > 0) {
    for (double& v : w) v /= total;
  }
  return w;
}

std::vector<double> OnednnLinearWeights(const Axis& axis, int64_t o) {
  std::vector<double> w(static_cast<size_t>(axis.in), 0.0);
  const float s = OnednnCoord(axis, o);
  const int64_t left = std::max<int64_t>(static_cast<int64_t>(s), 0);
  int64_t right = 0;
  if (s >= 0) right = static_cast<int64_t>(s) == s ? static_cast<int64_t>(s) : static_cast<int64_t>(s) + 1;
  right = std::min(right, axis.in - 1);
  const float w_right = std::fabs(s - static_cast<float>(left));
  w[static_cast<size_t>(left)] += 1.0f - w_right;
  w[static_cast<size_t>(right)] += w_right;
  return w;
}

// Empty when oneDNN samples axis `d` as ONNX does; else the first output position where they differ.
std::string CompareAxis(const ResizeAttrs& a, const Axis& axis) {
  // oneDNN's float coordinates carry rounding error up to a few ulps of the input length.
  const double tolerance = 1e-5 + 4.0 * FLT_EPSILON * static_cast<double>(axis.in);
  for (int64_t o = 0; o < axis.out; ++o) {
    if (a.mode == "nearest") {
      const int64_t want = OnnxNearest(a, axis, o), got = OnednnNearest(axis, o);
      if (want != got) {
        return "output " + std::to_string(o) + " reads input " + std::to_string(want) + ", oneDNN reads " +
               std::to_string(got);
      }
      continue;
    }
    const std::vector<double> want = OnnxLinearWeights(a, axis, o), got = OnednnLinearWeights(axis, o);
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::fabs(want[i] - got[i]) > tolerance) {
        return "output " + std::to_string(o) + " weighs input " + std::to_string(i) + " by " + std::to_string(want[i]) +
               ", oneDNN by " + std::to_string(got[i]);
      }
    }
  }
  return "";
}

// Constant contents of optional input i; nullptr when omitted or empty. *runtime is set when the
// input exists but is only known at run time.
const Tensor* ConstantInput(const KernelInit& init, int i, bool* runtime) {
  if (i < 0 || static_cast<size_t>(i) >= init.inputs.size() || init.inputs[static_cast<size_t>(i)] == nullptr) {
    return nullptr;
  }
  const ValueInfo* in = init.inputs[static_cast<size_t>(i)];
  if (NumElements(in->shape) == 0) return nullptr;
  if (in->value == nullptr) *runtime = true;
  return in->value;
}

class ResizeKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init) {
    RETURN_IF_ERROR(RequireStaticF32(init, {0}));
    const Node& node = init.node;
    const Shape& x = init.inputs[0]->shape;
    if (x.size() != 4) return Unsupported(std::to_string(x.size()) + "-D Resize: only 4-D runs on oneDNN here");
    const bool upsample = node.op_type == "Upsample";
    const bool modern = !upsample && init.opset >= 11;
    ResizeAttrs a;
    a.mode = node.GetString("mode", "nearest");
    if (a.mode == "bilinear") a.mode = "linear";  // Upsample's early spelling
    a.transform = modern ? node.GetString("coordinate_transformation_mode", "half_pixel") : "asymmetric";
    a.nearest = modern ? node.GetString("nearest_mode", "round_prefer_floor") : "simple";
    a.exclude_outside = node.GetInt("exclude_outside", 0) != 0;
    a.antialias = init.opset >= 18 && node.GetInt("antialias", 0) != 0;
    if (a.mode != "nearest" && a.mode != "linear") {
      return Unsupported("Resize mode '" + a.mode + "' has no oneDNN resampling (only nearest and linear)");
    }
    if (a.transform == "tf_crop_and_resize") {
      return Unsupported("coordinate_transformation_mode 'tf_crop_and_resize' has no oneDNN resampling");
    }
    if (init.opset >= 18 && node.GetString("keep_aspect_ratio_policy", "stretch") != "stretch") {
      return Unsupported("keep_aspect_ratio_policy '" + node.GetString("keep_aspect_ratio_policy", "") +
                         "' is not run on oneDNN here");
    }
    // Upsample-7's scales are an attribute: the output shape gives them (out / in) exactly enough here.
    const int scales_slot = modern ? 2 : (upsample && init.opset < 9 ? -1 : 1), sizes_slot = modern ? 3 : -1;
    bool runtime = false;
    const Tensor* scales = ConstantInput(init, scales_slot, &runtime);
    ConstantInput(init, sizes_slot, &runtime);  // sizes only fix the output length, which the shape function gives
    if (runtime) return Unsupported("scales or sizes are computed at run time");

    // The output shape from the op's own shape function (axes, rounding of scales).
    const OpEntry* op = FindReferenceOp(node.op_type, node.domain);
    if (op == nullptr) return Internal("no shape function for " + node.op_type);
    InferContext infer(node, init.opset, init.inputs);
    RETURN_IF_ERROR(op->infer(infer));
    const Shape y = infer.outputs()[0].shape;
    if (y[0] != x[0] || y[1] != x[1]) {
      return Unsupported("Resize changes the batch or channel axis (" + ShapeToString(x) + " -> " + ShapeToString(y) +
                         ")");
    }
    std::vector<int64_t> axes = init.opset >= 18 ? node.GetInts("axes") : std::vector<int64_t>{};
    if (axes.empty()) axes = {0, 1, 2, 3};
    for (int64_t& ax : axes) ax = ax < 0 ? ax + 4 : ax;
    for (int64_t d = 2; d < 4; ++d) {
      Axis axis{x[static_cast<size_t>(d)], y[static_cast<size_t>(d)], 1.0};
      if (axis.out <= 0) return Unsupported("empty output");
      const auto at = std::find(axes.begin(), axes.end(), d) - axes.begin();
      if (scales != nullptr && at < scales->numel()) {
        axis.scale = scales->GetAsDouble(at);
      } else {
        axis.scale = static_cast<double>(axis.out) / static_cast<double>(axis.in);
      }
      const std::string differs = CompareAxis(a, axis);
      if (!differs.empty()) {
        std::string what = "mode '" + a.mode + "' with coordinate_transformation_mode '" + a.transform + "'";
        if (a.mode == "nearest") what += " and nearest_mode '" + a.nearest + "'";
        if (a.antialias) what += " and antialias";
        return Unsupported(what + " samples differently from oneDNN's resampling along axis " + std::to_string(d) +
                           " (" + std::to_string(axis.in) + " -> " + std::to_string(axis.out) + ": " + differs + ")");
      }
    }

    const memory::desc src_md = Describe(x, dt::f32, Layout::kChannelsLast);
    const memory::desc dst_md = Describe(y, dt::f32, Layout::kChannelsLast);
    const auto alg = a.mode == "nearest" ? dnnl::algorithm::resampling_nearest : dnnl::algorithm::resampling_linear;
    dnnl::resampling_forward::primitive_desc pd;
    RETURN_IF_ERROR(Guard(node, "resampling", [&] {
      dnnl::resampling_forward::desc desc(dnnl::prop_kind::forward_inference, alg, src_md, dst_md);
      pd = dnnl::resampling_forward::primitive_desc(desc, Engine());
    }));
    if (IsReferenceImpl(pd.impl_info_str())) {
      return Unsupported("only oneDNN's reference implementation (" + std::string(pd.impl_info_str()) + ")");
    }
    auto kernel = std::unique_ptr<ResizeKernel>(new ResizeKernel());
    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] = memory(pd.src_desc(), Engine(), DNNL_MEMORY_NONE);
    args[DNNL_ARG_DST] = memory(pd.dst_desc(), Engine(), DNNL_MEMORY_NONE);
    kernel->resample_ = PrimitiveCall(dnnl::resampling_forward(pd), std::move(args));
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    resample_.SetHandle(DNNL_ARG_SRC, ctx.input(0)->raw_data());
    resample_.SetHandle(DNNL_ARG_DST, ctx.output(0)->raw_data());
    resample_.Execute();
    return Status();
  }
  Layout InputLayout(size_t i) const override { return i == 0 ? Layout::kChannelsLast : Layout::kPlain; }
  Layout OutputLayout(size_t /*output*/) const override { return Layout::kChannelsLast; }

 private:
  ResizeKernel() = default;

 public:
  std::string Isa() const override { return resample_.Impl(); }

 private:
  PrimitiveCall resample_;
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateResizeF32(const KernelInit& init) { return ResizeKernel::Create(init); }

}  // namespace chipfit::cpu
