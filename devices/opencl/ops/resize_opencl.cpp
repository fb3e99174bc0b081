// Resize (opsets 10–19) and Upsample (7–9) on OpenCL: nearest (every nearest_mode, any dtype) and
// n-linear (float), every coordinate_transformation_mode the reference has, axes and
// keep_aspect_ratio_policy. Source coordinates and weights are computed on the host in double at Init
// (scales/sizes/roi must be constant) into a tap table the kernel reads, so the rounding of nearest
// indices matches the reference exactly. Cubic, antialias and exclude_outside are refused.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/reference/ref_util.h"
#include "devices/opencl/ops/data_opencl.h"
#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit::opencl {
namespace {

constexpr size_t kMaxRank = 8;  // the int8 arguments of resize.cl

cl_int8 Pack8(const std::vector<int64_t>& v) {
  cl_int8 packed{};
  for (size_t i = 0; i < v.size() && i < kMaxRank; ++i) packed.s[i] = static_cast<cl_int>(v[i]);
  return packed;
}

struct Plan {
  std::string mode, transform, nearest;
  double extrapolation = 0;
  std::vector<double> scale, roi_start, roi_end;  // per dim
};

// Output coordinate → input coordinate along dim d (the ONNX formulas; `resized` is in * scale before
// flooring, as the spec and the reference use it).
double SourceCoord(const Plan& p, size_t d, int64_t o, int64_t in_len, int64_t out_len) {
  const auto x = static_cast<double>(o);
  const double s = p.scale[d];
  const auto in = static_cast<double>(in_len);
  const double resized = in * s;
  const std::string& t = p.transform;
  if (t == "asymmetric") return x / s;
  if (t == "tf_half_pixel_for_nn") return (x + 0.5) / s;
  if (t == "align_corners") return resized == 1 ? 0.0 : x * (in - 1) / (resized - 1);
  if (t == "pytorch_half_pixel") return out_len > 1 ? (x + 0.5) / s - 0.5 : 0.0;
  if (t == "tf_crop_and_resize") {
    const double a = p.roi_start[d], b = p.roi_end[d];
    return resized > 1 ? a * (in - 1) + x * (b - a) * (in - 1) / (resized - 1) : 0.5 * (a + b) * (in - 1);
  }
  if (t == "half_pixel_symmetric") {
    const double offset = in / 2 * (1 - static_cast<double>(out_len) / resized);
    return offset + (x + 0.5) / s - 0.5;
  }
  return (x + 0.5) / s - 0.5;  // half_pixel
}

int64_t NearestIndex(const std::string& mode, double x, double scale) {
  const double f = std::floor(x);
  if (mode == "floor") return static_cast<int64_t>(f);
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  if (mode == "simple") return static_cast<int64_t>(scale < 1 ? std::ceil(x) : f);  // Resize-10, Upsample
  if (x - f == 0.5) return static_cast<int64_t>(mode == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::round(x));
}

// Contents of optional input i (absent or empty: nullptr); Unsupported when present but not constant.
Result<const Tensor*> OptionalConstant(const KernelInit& init, int i, const char* what) {
  if (i < 0 || !init.node.HasInput(static_cast<size_t>(i))) return nullptr;
  const ValueInfo* in = static_cast<size_t>(i) < init.inputs.size() ? init.inputs[static_cast<size_t>(i)] : nullptr;
  if (in == nullptr || NumElements(in->shape) == 0) return nullptr;
  if (in->value == nullptr) return Unsupported(std::string("Resize's ") + what + " are not constant");
  return in->value;
}

Result<Plan> MakePlan(const KernelInit& init, const Shape& in) {
  const Node& node = init.node;
  const bool modern = node.op_type == "Resize" && init.opset >= 11;
  Plan p;
  p.mode = node.GetString("mode", "nearest");
  if (p.mode == "bilinear") p.mode = "linear";  // Upsample's early spelling
  p.transform = modern ? node.GetString("coordinate_transformation_mode", "half_pixel") : "asymmetric";
  p.nearest = modern ? node.GetString("nearest_mode", "round_prefer_floor") : "simple";
  p.extrapolation = node.GetFloat("extrapolation_value", 0.0f);
  if (p.mode == "cubic") return Unsupported("cubic Resize is not implemented on OpenCL");
  if (p.mode != "nearest" && p.mode != "linear") return Unsupported("Resize mode '" + p.mode + "'");
  if (init.opset >= 18 && node.GetInt("antialias", 0) != 0) return Unsupported("Resize with antialias=1 on OpenCL");
  if (node.GetInt("exclude_outside", 0) != 0) return Unsupported("Resize with exclude_outside=1 on OpenCL");
  static const char* kTransforms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                      "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  if (std::find(std::begin(kTransforms), std::end(kTransforms), p.transform) == std::end(kTransforms)) {
    return Unsupported("coordinate_transformation_mode '" + p.transform + "'");
  }
  static const char* kNearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple"};
  if (std::find(std::begin(kNearest), std::end(kNearest), p.nearest) == std::end(kNearest)) {
    return Unsupported("nearest_mode '" + p.nearest + "'");
  }
  const std::string policy = init.opset >= 18 ? node.GetString("keep_aspect_ratio_policy", "stretch") : "stretch";

  // Where scales/sizes/roi come from: Upsample-7 a scales attribute; Upsample-9 and Resize-10 input 1;
  // Resize-11+ roi (1), scales (2), sizes (3).
  int roi_at = -1, scales_at = -1, sizes_at = -1;
  if (node.op_type == "Upsample") {
    scales_at = init.opset >= 9 ? 1 : -1;
  } else if (init.opset < 11) {
    scales_at = 1;
  } else {
    roi_at = 1;
    scales_at = 2;
    sizes_at = 3;
  }
  ASSIGN_OR_RETURN(const Tensor* scales_t, OptionalConstant(init, scales_at, "scales"));
  ASSIGN_OR_RETURN(const Tensor* sizes_t, OptionalConstant(init, sizes_at, "sizes"));
  const Tensor* roi_t = nullptr;
  if (p.transform == "tf_crop_and_resize") {
    ASSIGN_OR_RETURN(roi_t, OptionalConstant(init, roi_at, "roi"));
  }

  const auto rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes = init.opset >= 18 ? node.GetInts("axes") : std::vector<int64_t>{};
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  ASSIGN_OR_RETURN(axes, NormalizeAxes(axes, rank, node));
  const size_t n = axes.size();
  p.scale.assign(in.size(), 1.0);
  p.roi_start.assign(in.size(), 0.0);
  p.roi_end.assign(in.size(), 1.0);
  std::vector<double> scales;
  if (scales_t != nullptr) {
    for (int64_t i = 0; i < scales_t->numel(); ++i) scales.push_back(scales_t->GetAsDouble(i));
  } else if (node.op_type == "Upsample" && init.opset < 9) {
    for (float s : node.GetFloats("scales")) scales.push_back(s);
  }
  if (!scales.empty()) {
    if (scales.size() != n) return InvalidArgument(node.Describe() + ": scales do not match the axes");
    for (size_t i = 0; i < n; ++i) p.scale[static_cast<size_t>(axes[i])] = scales[i];
  } else if (sizes_t != nullptr) {
    const std::vector<int64_t> sizes = sizes_t->ToInt64Vector();
    if (sizes.size() != n) return InvalidArgument(node.Describe() + ": sizes do not match the axes");
    for (size_t i = 0; i < n; ++i) {
      const auto d = static_cast<size_t>(axes[i]);
      p.scale[d] = static_cast<double>(sizes[i]) / static_cast<double>(in[d]);
    }
    if (policy != "stretch") {  // one scale for every resized axis keeps the aspect ratio
      const bool smaller = policy == "not_larger";
      double s = smaller ? std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t a : axes) {
        const double sa = p.scale[static_cast<size_t>(a)];
        s = smaller ? std::min(s, sa) : std::max(s, sa);
      }
      for (int64_t a : axes) p.scale[static_cast<size_t>(a)] = s;
    }
  } else {
    return InvalidArgument(node.Describe() + ": needs scales or sizes");
  }
  if (roi_t != nullptr) {
    if (roi_t->numel() != static_cast<int64_t>(2 * n)) {
      return InvalidArgument(node.Describe() + ": roi must hold 2 × " + std::to_string(n) + " values");
    }
    for (size_t i = 0; i < n; ++i) {
      p.roi_start[static_cast<size_t>(axes[i])] = roi_t->GetAsDouble(static_cast<int64_t>(i));
      p.roi_end[static_cast<size_t>(axes[i])] = roi_t->GetAsDouble(static_cast<int64_t>(i + n));
    }
  }
  for (size_t d = 0; d < in.size(); ++d) {
    if (!(p.scale[d] > 0)) return InvalidArgument(node.Describe() + ": scales must be positive");
  }
  return p;
}

class ResizeKernel final : public IKernel {
 public:
  ResizeKernel(ocl::OpenClContext* ctx, cl::Kernel kernel, cl::Buffer taps, std::vector<int64_t> out,
               std::vector<int64_t> offsets, std::vector<uint8_t> fill)
      : ctx_(ctx),
        kernel_(std::move(kernel)),
        taps_(std::move(taps)),
        out_(std::move(out)),
        offsets_(std::move(offsets)),
        fill_(std::move(fill)) {}

  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t) const override { return true; }

  Status Run(KernelContext& ctx) override {
    const std::string what = ctx.node().Describe();
    const int64_t n = NumElements(out_);
    RETURN_IF_ERROR(ocl::SetArgs(kernel_, what, ocl::Mem(ctx.device_input(0)), ocl::Mem(ctx.device_output(0)), taps_,
                                 static_cast<cl_int>(n), static_cast<cl_int>(out_.size()), Pack8(out_),
                                 Pack8(offsets_)));
    RETURN_IF_ERROR(data::SetElemArg(kernel_, 7, fill_, what));
    const size_t local = ctx_->WorkGroup1D(kernel_);
    return ctx_->Launch(kernel_, cl::NDRange(data::RoundUp(static_cast<size_t>(n), local)), cl::NDRange(local), what);
  }

 private:
  ocl::OpenClContext* ctx_;
  cl::Kernel kernel_;
  cl::Buffer taps_;  // int4 per (dim, output coordinate); a few KB, owned by the kernel
  std::vector<int64_t> out_, offsets_;
  std::vector<uint8_t> fill_;  // extrapolation_value in the kernel's element type
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateResize(const KernelInit& init) {
  ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, data::CheckInit(init, {0}));
  const Shape& in = init.inputs[0]->shape;
  const Shape& out = (*init.outputs)[0].shape;
  if (in.size() != out.size()) return InvalidArgument(init.node.Describe() + ": output rank differs from the input's");
  if (in.size() > kMaxRank) return Unsupported("Resize of rank " + std::to_string(in.size()) + " on OpenCL");
  ASSIGN_OR_RETURN(Plan p, MakePlan(init, in));
  const DType dtype = init.inputs[0]->dtype;
  const DType storage = ctx->StorageType(dtype);
  const bool linear = p.mode == "linear";
  if (linear && storage != (ctx->half_storage() ? DType::kF16 : DType::kF32)) {
    return Unsupported("linear Resize of " + std::string(DTypeName(dtype)) + " on OpenCL (float32 only)");
  }

  // The tap table: dims one after another, one int4 per output coordinate.
  const std::vector<int64_t> strides = data::DenseStrides(in);
  std::vector<cl_int4> taps;
  std::vector<int64_t> offsets;
  for (size_t d = 0; d < in.size(); ++d) {
    offsets.push_back(static_cast<int64_t>(taps.size()));
    const int64_t len = in[d];
    for (int64_t o = 0; o < out[d]; ++o) {
      const double x = SourceCoord(p, d, o, len, out[d]);
      cl_int4 tap{};
      if (p.transform == "tf_crop_and_resize" && (x < 0 || x > static_cast<double>(len - 1))) {
        tap.s[3] = 1;  // outside the crop: extrapolation_value
      } else if (!linear) {
        const int64_t i = std::clamp<int64_t>(NearestIndex(p.nearest, x, p.scale[d]), 0, len - 1);
        tap.s[0] = tap.s[1] = static_cast<cl_int>(i * strides[d]);
      } else {
        const double f = std::floor(x);
        const int64_t i0 = std::clamp<int64_t>(static_cast<int64_t>(f), 0, len - 1);
        const int64_t i1 = std::clamp<int64_t>(static_cast<int64_t>(f) + 1, 0, len - 1);
        const auto w = static_cast<float>(x - f);
        tap.s[0] = static_cast<cl_int>(i0 * strides[d]);
        tap.s[1] = static_cast<cl_int>(i1 * strides[d]);
        std::memcpy(&tap.s[2], &w, sizeof(w));
      }
      taps.push_back(tap);
    }
  }
  if (static_cast<int64_t>(taps.size()) >= data::kMaxElements) return Unsupported("Resize tap table over 2^31");
  cl_int err = CL_SUCCESS;
  cl::Buffer buffer(ctx->runtime().context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, taps.size() * sizeof(cl_int4),
                    taps.data(), &err);
  if (err != CL_SUCCESS) return ocl::ClError(err, init.node.Describe() + ": Resize tap table");

  cl::Kernel kernel;
  std::vector<uint8_t> fill;
  if (linear) {
    ASSIGN_OR_RETURN(kernel, ctx->CreateKernel("resize", "resize_linear"));
    const auto v = static_cast<float>(p.extrapolation);
    fill.resize(sizeof(v));
    std::memcpy(fill.data(), &v, sizeof(v));
  } else {
    ASSIGN_OR_RETURN(std::string elem, data::ElemDefine(storage));
    ASSIGN_OR_RETURN(kernel, ctx->CreateKernel("resize", "resize_nearest", elem));
    fill = data::ValueBytes(storage, p.extrapolation, true, nullptr);
  }
  return std::unique_ptr<IKernel>(new ResizeKernel(ctx, std::move(kernel), std::move(buffer),
                                                   std::vector<int64_t>(out.begin(), out.end()), std::move(offsets),
                                                   std::move(fill)));
}

}  // namespace chipfit::opencl
