// Conv and FusedConv (bias, residual Z, activation, clamp, scale and shift) on OpenCL for 1-D and 2-D inputs:
// depthwise on a direct kernel (ops/conv.cl), 1x1 stride-1 unpadded as a plain GEMM and everything
// else as implicit GEMM (ops/gemm.cl reads the window straight from X: no im2col buffer).
#include <algorithm>
#include <cfloat>
#include <string>
#include <vector>

#include "core/reference/conv_util.h"
#include "devices/opencl/ops/gemm_opencl.h"
#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit::opencl {
namespace {

struct ActivationDef {
  const char* name;
  int code;  // gemm.cl's act codes
  size_t params;
  float a = 0, b = 0;  // absent activation_params: the ONNX op's defaults (as the reference)
};

constexpr ActivationDef kActivations[] = {
    {"", 0, 0},
    {"Relu", 1, 0},
    {"Clip", 2, 2, -FLT_MAX, FLT_MAX},
    {"LeakyRelu", 3, 1, 0.01f},
    {"HardSigmoid", 4, 2, 0.2f, 0.5f},
    {"HardSwish", 5, 0},
    {"Sigmoid", 6, 0},
    {"Tanh", 7, 0},
};

Result<GemmEpilogue> ReadEpilogue(const Node& node) {
  GemmEpilogue e;
  if (node.op_type != "FusedConv") return e;
  const std::string name = node.GetString("activation", "");
  const std::vector<float> params = node.GetFloats("activation_params");
  for (const ActivationDef& def : kActivations) {
    if (name != def.name) continue;
    if (!params.empty() && params.size() != def.params) {
      return InvalidArgument(node.Describe() + ": activation '" + name + "' takes " + std::to_string(def.params) +
                             " activation_params, got " + std::to_string(params.size()));
    }
    e.activation = def.code;
    e.p0 = params.empty() ? def.a : params[0];
    e.p1 = params.size() < 2 ? def.b : params[1];
    if (node.Has("clamp_min")) e.lo = node.GetFloat("clamp_min", 0);
    if (node.Has("clamp_max")) e.hi = node.GetFloat("clamp_max", 0);
    e.clamp = node.Has("clamp_min") || node.Has("clamp_max");
    e.linear = node.Has("post_scale") || node.Has("post_shift");
    e.scale = node.GetFloat("post_scale", 1.0f);
    e.shift = node.GetFloat("post_shift", 0.0f);
    return e;
  }
  return Unsupported("FusedConv on OpenCL: activation '" + name + "' is not implemented");
}

// The geometry of a 1-D or 2-D convolution with a 1-D one seen as 2-D of height 1.
struct Geometry {
  int64_t n = 1, c = 1, m = 1, group = 1;
  int64_t ih = 1, iw = 1, kh = 1, kw = 1, oh = 1, ow = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
};

Result<Geometry> ReadGeometry(const KernelInit& init) {
  const Node& node = init.node;
  const Shape& x = init.inputs[0]->shape;
  const Shape& w = init.inputs[1]->shape;
  if (x.size() != 3 && x.size() != 4) {
    return Unsupported(node.op_type + " on OpenCL: " + std::to_string(static_cast<int64_t>(x.size()) - 2) +
                       "-D convolution (only 1-D and 2-D are implemented)");
  }
  if (w.size() != x.size()) return InvalidArgument(node.Describe() + ": W and X ranks differ");
  Geometry g;
  g.n = x[0];
  g.c = x[1];
  g.m = w[0];
  g.group = node.GetInt("group", 1);
  if (g.group < 1 || g.c % g.group != 0 || g.m % g.group != 0 || w[1] * g.group != g.c) {
    return InvalidArgument(node.Describe() + ": X " + ShapeToString(x) + " and W " + ShapeToString(w) +
                           " do not match group " + std::to_string(g.group));
  }
  ASSIGN_OR_RETURN(Window win,
                   ReadWindow(node, Shape(x.begin() + 2, x.end()), std::vector<int64_t>(w.begin() + 2, w.end())));
  RETURN_IF_ERROR(ResolveForwardWindow(node, win, false));
  const size_t last = win.rank() - 1;
  g.iw = win.in[last];
  g.kw = win.kernel[last];
  g.ow = win.out[last];
  g.sw = win.strides[last];
  g.dw = win.dilations[last];
  g.pw = win.pad_begin[last];
  if (win.rank() == 2) {
    g.ih = win.in[0];
    g.kh = win.kernel[0];
    g.oh = win.out[0];
    g.sh = win.strides[0];
    g.dh = win.dilations[0];
    g.ph = win.pad_begin[0];
  }
  return g;
}

// Z's strides over the output viewed as [N, M, OH, OW] (0 where Z broadcasts).
Result<std::array<int64_t, 4>> ResidualStrides(const Node& node, const Shape& out, const Shape& z) {
  if (z.size() > out.size()) {
    return InvalidArgument(node.Describe() + ": Z " + ShapeToString(z) + " has a higher rank than the output");
  }
  std::vector<int64_t> strides(out.size(), 0);
  int64_t step = 1;
  for (size_t i = z.size(); i-- > 0;) {
    const int64_t od = out[out.size() - z.size() + i];
    if (z[i] != 1 && z[i] != od) {
      return InvalidArgument(node.Describe() + ": Z " + ShapeToString(z) + " does not broadcast to the output " +
                             ShapeToString(out));
    }
    if (z[i] != 1) strides[out.size() - z.size() + i] = step;
    step *= z[i];
  }
  if (out.size() == 3) return std::array<int64_t, 4>{strides[0], strides[1], 0, strides[2]};
  return std::array<int64_t, 4>{strides[0], strides[1], strides[2], strides[3]};
}

class ConvKernel final : public IKernel {
 public:
  ConvKernel(ocl::OpenClContext* ctx, std::vector<Shape> shapes, std::vector<bool> present)
      : ctx_(ctx), shapes_(std::move(shapes)), present_(std::move(present)) {}

  Status Run(KernelContext& ctx) override {
    for (size_t i = 0; i < shapes_.size(); ++i) {
      if (present_[i]) RETURN_IF_ERROR(CheckRunShape(ctx, i, shapes_[i]));
    }
    auto mem = [&](size_t i) { return has(i) ? ocl::Mem(ctx.device_input(i)) : nullptr; };
    const std::string what = ctx.node().Describe();
    if (!depthwise_) {
      return gemm_.Run(*ctx_, mem(1), mem(0), mem(2), mem(3), ocl::Mem(ctx.device_output(0)), what);
    }
    const cl_mem x = mem(0);
    const auto i32 = [](int64_t v) { return static_cast<cl_int>(v); };
    const Geometry& g = geo_;
    const int64_t total = g.n * g.c * g.oh * g.ow;
    cl_int4 zs;
    for (int i = 0; i < 4; ++i) zs.s[i] = i32(z_strides_[static_cast<size_t>(i)]);
    // Absent bias and Z are never read (flags without CF_HAS_BIAS / CF_HAS_Z): X stands in for them.
    const cl_int flags = (has(2) ? 1 : 0) | (has(3) ? 2 : 0) | (epilogue_.clamp ? 4 : 0) | (epilogue_.linear ? 8 : 0);
    RETURN_IF_ERROR(ocl::SetArgs(kernel_, what, x, mem(1), has(2) ? mem(2) : x, has(3) ? mem(3) : x,
                                 ocl::Mem(ctx.device_output(0)), i32(total), i32(g.c), i32(g.ih), i32(g.iw), i32(g.oh),
                                 i32(g.ow), i32(g.kh), i32(g.kw), i32(g.sh), i32(g.sw), i32(g.dh), i32(g.dw), i32(g.ph),
                                 i32(g.pw), zs, epilogue_.activation, flags, epilogue_.p0, epilogue_.p1, epilogue_.lo,
                                 epilogue_.hi, epilogue_.scale, epilogue_.shift));
    const auto global =
        static_cast<size_t>((total + static_cast<int64_t>(local_) - 1) / static_cast<int64_t>(local_)) * local_;
    return ctx_->Launch(kernel_, cl::NDRange(global), cl::NDRange(local_), what);
  }
  bool InputOnDevice(size_t i) const override { return has(i); }
  bool OutputOnDevice(size_t) const override { return true; }

  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init) {
    const Node& node = init.node;
    ASSIGN_OR_RETURN(ocl::OpenClContext * device, GemmFamilyDevice(init));
    const bool fused = node.op_type == "FusedConv";
    RETURN_IF_ERROR(
        RequireStaticF32(init, {0, 1}, fused ? std::initializer_list<size_t>{2, 3} : std::initializer_list<size_t>{2}));
    ASSIGN_OR_RETURN(Geometry g, ReadGeometry(init));
    ASSIGN_OR_RETURN(GemmEpilogue epilogue, ReadEpilogue(node));
    std::vector<Shape> shapes(fused ? 4 : 3);
    std::vector<bool> present(shapes.size(), false);
    for (size_t i = 0; i < shapes.size() && i < init.inputs.size(); ++i) {
      present[i] = init.inputs[i] != nullptr;
      if (present[i]) shapes[i] = init.inputs[i]->shape;
    }
    const ValueInfo* bias = init.inputs.size() > 2 ? init.inputs[2] : nullptr;
    if (bias != nullptr && bias->shape != Shape{g.m}) {
      return InvalidArgument(node.Describe() + ": bias " + ShapeToString(bias->shape) + " is not [" +
                             std::to_string(g.m) + "]");
    }
    const Shape& out = (*init.outputs)[0].shape;
    std::array<int64_t, 4> zs{};
    const ValueInfo* z = fused && init.inputs.size() > 3 ? init.inputs[3] : nullptr;
    if (z != nullptr) {
      ASSIGN_OR_RETURN(zs, ResidualStrides(node, out, z->shape));
    }

    auto kernel = std::unique_ptr<ConvKernel>(new ConvKernel(device, std::move(shapes), std::move(present)));
    kernel->geo_ = g;
    kernel->epilogue_ = epilogue;
    kernel->z_strides_ = zs;
    if (g.group > 1 && g.group == g.c && g.m == g.c) {
      ASSIGN_OR_RETURN(kernel->kernel_, device->CreateKernel("conv", "depthwise"));
      kernel->local_ = device->WorkGroup1D(kernel->kernel_, 128);
      kernel->depthwise_ = true;
      return std::unique_ptr<IKernel>(std::move(kernel));
    }

    // Per (image, group): Y[n, g] (M/group x OH*OW) = W[g] (M/group x K) · window(X[n, g]).
    const int64_t cg = g.c / g.group, mg = g.m / g.group, plane = g.oh * g.ow, in_plane = g.ih * g.iw;
    GemmSpec s;
    s.m = mg;
    s.n = plane;
    s.k = cg * g.kh * g.kw;
    s.batch = {1, 1, g.n, g.group};
    s.a_bs = {0, 0, 0, mg * s.k};
    s.a_sm = s.k;
    s.a_sk = 1;
    s.b_bs = {0, 0, g.c * in_plane, cg * in_plane};
    s.y_bs = {0, 0, g.m * plane, mg * plane};
    s.y_sm = plane;
    s.epilogue = epilogue;
    if (bias != nullptr) {
      s.has_c = true;
      s.c_bs = {0, 0, 0, mg};
      s.c_sm = 1;
      s.c_sn = 0;
    }
    if (z != nullptr) {
      s.has_z = true;
      s.z_bs = {0, 0, zs[0], zs[1] * mg};
      s.z_sm = zs[1];
      s.z_div = g.ow;
      s.z_shi = zs[2];
      s.z_slo = zs[3];
    }
    const bool pointwise =
        g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 && g.oh == g.ih && g.ow == g.iw;
    if (pointwise) {
      s.b_sk = in_plane;
      s.b_sn = 1;
    } else {
      s.conv_b = true;
      s.ih = g.ih;
      s.iw = g.iw;
      s.kh = g.kh;
      s.kw = g.kw;
      s.ow = g.ow;
      s.sh = g.sh;
      s.sw = g.sw;
      s.dh = g.dh;
      s.dw = g.dw;
      s.ph = g.ph;
      s.pw = g.pw;
    }
    ASSIGN_OR_RETURN(kernel->gemm_, GemmLauncher::Create(*device, s));
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

 private:
  bool has(size_t i) const { return i < present_.size() && present_[i]; }

  ocl::OpenClContext* ctx_;
  std::vector<Shape> shapes_;  // per input: the shape built for
  std::vector<bool> present_;  // per input: given (bias and Z are optional)
  Geometry geo_;
  GemmEpilogue epilogue_;
  std::array<int64_t, 4> z_strides_{};
  bool depthwise_ = false;
  cl::Kernel kernel_;  // depthwise
  size_t local_ = 1;
  GemmLauncher gemm_;
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateConv(const KernelInit& init) { return ConvKernel::Create(init); }
Result<std::unique_ptr<IKernel>> CreateFusedConv(const KernelInit& init) { return ConvKernel::Create(init); }

}  // namespace chipfit::opencl
