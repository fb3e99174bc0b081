// Conv and FusedConv (bias, residual Z, activation, clamp, scale and shift) on CUDA for 1-D and 2-D inputs:
// depthwise layers on chipfit's direct kernel (depthwise.cu), everything else on cuDNN 9's legacy
// convolution API: cudnnConvolutionBiasActivationForward where cuDNN fuses the whole epilogue (bias, a
// full-shape Z, Relu or nothing), else cudnnConvolutionForward followed by chipfit's epilogue kernel. The
// plan (cudnn_api.h) comes from shapes and precision, descriptors are made once at Init, the handle and the
// algorithm at the first Run (both need a GPU).
#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/reference/conv_util.h"
#include "devices/cuda/cudnn_api.h"
#include "devices/cuda/ops/cuda_ops.h"

namespace chipfit::cuda {

// ---- The plan.

namespace {

struct ActivationDef {
  const char* name;
  conv::Act act;
  size_t params;
  float a = 0, b = 0;  // absent activation_params: the ONNX op's defaults (as the reference)
};

constexpr ActivationDef kActivations[] = {
    {"", conv::Act::kNone, 0},
    {"Relu", conv::Act::kRelu, 0},
    {"Clip", conv::Act::kClip, 2, -FLT_MAX, FLT_MAX},
    {"LeakyRelu", conv::Act::kLeakyRelu, 1, 0.01f},
    {"HardSigmoid", conv::Act::kHardSigmoid, 2, 0.2f, 0.5f},
    {"HardSwish", conv::Act::kHardSwish, 0},
    {"Sigmoid", conv::Act::kSigmoid, 0},
    {"Tanh", conv::Act::kTanh, 0},
};

const char* PathName(ConvPath path, bool epilogue) {
  switch (path) {
    case ConvPath::kCudnnFused: return "cudnn fused";
    case ConvPath::kDepthwise: return "depthwise";
    case ConvPath::kCudnn: return epilogue ? "cudnn+epilogue" : "cudnn";
  }
  return "?";
}

Status CheckElements(int64_t count, std::string_view what, std::string_view name) {
  if (count > conv::kMaxElements) {
    return Unsupported(
        fmt::format("{}: {} has {} elements (the CUDA conv kernels index with 32 bits)", what, name, count));
  }
  return Status();
}

}  // namespace

std::string ConvPlan::Describe() const {
  return fmt::format("{}-D {}x{} s{}x{} g{} [{},{},{},{}]->[{},{},{},{}] {} {}", spatial_rank, kh, kw, sh, sw, group, n,
                     c, ih, iw, n, m, oh, ow, DTypeName(storage), PathName(path, needs_epilogue));
}

Status PlanConvTypes(Precision precision, DType storage, ConvPlan& plan) {
  if (precision == Precision::kInt8) {
    // An int8 convolution needs quantised weights and per-channel scales from the calibration table, which
    // this path does not make yet; the f32 kernels would silently measure the wrong thing.
    return Unsupported("int8 Conv on cuDNN needs quantised weights and per-channel scales (not written yet)");
  }
  plan.storage = storage;
  switch (storage) {
    case DType::kF32:
      plan.store = conv::Store::kF32;
      plan.data_type = CUDNN_DATA_FLOAT;
      break;
    case DType::kF16:
      plan.store = conv::Store::kF16;
      plan.data_type = CUDNN_DATA_HALF;
      break;
    case DType::kBF16:
      plan.store = conv::Store::kBF16;
      plan.data_type = CUDNN_DATA_BFLOAT16;
      break;
    default: return Unsupported(fmt::format("{} tensors (the CUDA Conv takes f32, f16 and bf16)", DTypeName(storage)));
  }
  // Half and bfloat16 storage accumulate in f32 (the profiler measures the storage's rounding, not a half
  // accumulator's) on tensor cores. fp32 asks for FMA math: cuDNN's default math lets Ampere and later run
  // f32 convolutions in TF32, which is what the tf32 precision measures. ALLOW_CONVERSION (f32 data through
  // f16 tensor cores) is never asked for: it would round more than any precision here promises.
  plan.compute_type = CUDNN_DATA_FLOAT;
  if (storage != DType::kF32) {
    plan.math = CUDNN_TENSOR_OP_MATH;
  } else {
    plan.math = precision == Precision::kTf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  }
  return Status();
}

Result<conv::Epilogue> ReadConvEpilogue(const Node& node) {
  conv::Epilogue e;
  if (node.op_type != "FusedConv") return e;
  const std::string name = node.GetString("activation", "");
  const std::vector<float> params = node.GetFloats("activation_params");
  for (const ActivationDef& def : kActivations) {
    if (name != def.name) continue;
    if (!params.empty() && params.size() != def.params) {
      return InvalidArgument(fmt::format("{}: activation '{}' takes {} activation_params, got {}", node.Describe(),
                                         name, def.params, params.size()));
    }
    e.act = def.act;
    e.a = params.empty() ? def.a : params[0];
    e.b = params.size() < 2 ? def.b : params[1];
    e.clamp = node.Has("clamp_min") || node.Has("clamp_max");
    e.lo = node.Has("clamp_min") ? node.GetFloat("clamp_min", 0) : -INFINITY;
    e.hi = node.Has("clamp_max") ? node.GetFloat("clamp_max", 0) : INFINITY;
    e.linear = node.Has("post_scale") || node.Has("post_shift");
    e.scale = node.GetFloat("post_scale", 1.0f);
    e.shift = node.GetFloat("post_shift", 0.0f);
    return e;
  }
  return Unsupported(fmt::format("{}: FusedConv activation '{}' is not implemented on CUDA", node.Describe(), name));
}

bool IsDepthwise(int64_t c, int64_t m, int64_t group) { return group > 1 && group == c && m == c; }

Result<ConvPlan> PlanConv(const Node& node, const Shape& x, const Shape& w, const Shape* bias, const Shape* z,
                          DType storage, Precision precision) {
  const std::string what = node.Describe();
  ConvPlan plan;
  if (Status s = PlanConvTypes(precision, storage, plan); !s.ok()) {
    return Unsupported(fmt::format("{}: {}", what, s.message()));
  }
  if (x.size() < 3) return InvalidArgument(fmt::format("{}: X {} must be N x C x D1 ...", what, ShapeToString(x)));
  if (x.size() > 4) {
    return Unsupported(fmt::format("{}: {}-D convolution (the CUDA Conv implements 1-D and 2-D)", what, x.size() - 2));
  }
  if (w.size() != x.size()) {
    return InvalidArgument(fmt::format("{}: W {} and X {} ranks differ", what, ShapeToString(w), ShapeToString(x)));
  }
  plan.spatial_rank = static_cast<int>(x.size()) - 2;
  plan.n = x[0];
  plan.c = x[1];
  plan.m = w[0];
  plan.group = node.GetInt("group", 1);
  if (plan.group < 1 || plan.c % plan.group != 0 || plan.m % plan.group != 0 || w[1] * plan.group != plan.c) {
    return InvalidArgument(
        fmt::format("{}: X {} and W {} do not match group {}", what, ShapeToString(x), ShapeToString(w), plan.group));
  }
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (node.Has("kernel_shape") && node.GetInts("kernel_shape") != kernel) {
    return InvalidArgument(fmt::format("{}: kernel_shape {} disagrees with W {}", what,
                                       JoinInts(node.GetInts("kernel_shape")), ShapeToString(w)));
  }
  ASSIGN_OR_RETURN(Window win, ReadWindow(node, Shape(x.begin() + 2, x.end()), kernel));
  RETURN_IF_ERROR(ResolveForwardWindow(node, win, false));
  const size_t last = win.rank() - 1;
  plan.iw = win.in[last];
  plan.kw = win.kernel[last];
  plan.ow = win.out[last];
  plan.sw = win.strides[last];
  plan.dw = win.dilations[last];
  plan.pad_left = win.pad_begin[last];
  plan.pad_right = win.pad_end[last];
  if (win.rank() == 2) {
    plan.ih = win.in[0];
    plan.kh = win.kernel[0];
    plan.oh = win.out[0];
    plan.sh = win.strides[0];
    plan.dh = win.dilations[0];
    plan.pad_top = win.pad_begin[0];
    plan.pad_bottom = win.pad_end[0];
  }
  for (int64_t d : {plan.n, plan.c, plan.m, plan.ih, plan.iw, plan.oh, plan.ow}) {
    if (d <= 0) return Unsupported(fmt::format("{}: empty tensors (the CUDA Conv needs every dim > 0)", what));
  }
  const Shape out = plan.spatial_rank == 1 ? Shape{plan.n, plan.m, plan.ow} : Shape{plan.n, plan.m, plan.oh, plan.ow};

  if (bias != nullptr) {
    if (*bias != Shape{plan.m}) {
      return InvalidArgument(fmt::format("{}: bias {} is not [{}]", what, ShapeToString(*bias), plan.m));
    }
    plan.has_bias = true;
  }
  if (z != nullptr) {
    if (node.op_type != "FusedConv") return InvalidArgument(fmt::format("{}: Conv has no input Z", what));
    if (z->size() > out.size()) {
      return InvalidArgument(
          fmt::format("{}: Z {} does not broadcast to the output {}", what, ShapeToString(*z), ShapeToString(out)));
    }
    std::vector<int64_t> strides(out.size(), 0);
    int64_t step = 1;
    for (size_t i = z->size(); i-- > 0;) {
      const int64_t od = out[out.size() - z->size() + i];
      if ((*z)[i] != 1 && (*z)[i] != od) {
        return InvalidArgument(
            fmt::format("{}: Z {} does not broadcast to the output {}", what, ShapeToString(*z), ShapeToString(out)));
      }
      if ((*z)[i] != 1) strides[out.size() - z->size() + i] = step;
      step *= (*z)[i];
    }
    if (out.size() == 3) strides.insert(strides.begin() + 2, 0);  // [N, M, W] as [N, M, 1, W]
    plan.has_z = true;
    plan.z_walk.full = *z == out;
    for (size_t i = 0; i < 4; ++i) plan.z_walk.stride[i] = static_cast<uint32_t>(strides[i]);
  }
  ASSIGN_OR_RETURN(plan.epilogue, ReadConvEpilogue(node));
  const conv::Epilogue& e = plan.epilogue;
  RETURN_IF_ERROR(CheckElements(plan.n * plan.c * plan.ih * plan.iw, what, "X"));
  RETURN_IF_ERROR(CheckElements(plan.OutputElements(), what, "the output"));

  if (IsDepthwise(plan.c, plan.m, plan.group)) {
    plan.path = ConvPath::kDepthwise;
    return plan;
  }

  // cuDNN pads both sides of a dim alike: the common part goes to cuDNN, the rest (SAME_* with an odd total,
  // explicit asymmetric pads) into a padded copy of X.
  plan.cudnn_ph = std::min(plan.pad_top, plan.pad_bottom);
  plan.cudnn_pw = std::min(plan.pad_left, plan.pad_right);
  plan.extra_top = plan.pad_top - plan.cudnn_ph;
  plan.extra_bottom = plan.pad_bottom - plan.cudnn_ph;
  plan.extra_left = plan.pad_left - plan.cudnn_pw;
  plan.extra_right = plan.pad_right - plan.cudnn_pw;
  RETURN_IF_ERROR(CheckElements(plan.n * plan.c * plan.PaddedH() * plan.PaddedW(), what, "the padded X"));

  // cuDNN's fused path computes act(conv + Z + bias) with act Relu or identity; it needs the bias, takes Z
  // only at the output's shape, and is used for f32 and f16 storage (bf16 goes the unfused way, which every
  // cuDNN 9 engine supports).
  const bool relu_or_none = e.act == conv::Act::kNone || e.act == conv::Act::kRelu;
  if (plan.has_bias && relu_or_none && !e.clamp && !e.linear && (!plan.has_z || plan.z_walk.full) &&
      storage != DType::kBF16) {
    plan.path = ConvPath::kCudnnFused;
    plan.fused_activation = e.act == conv::Act::kRelu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY;
    return plan;
  }
  plan.path = ConvPath::kCudnn;
  plan.needs_epilogue = plan.has_bias || plan.has_z || e.act != conv::Act::kNone || e.clamp || e.linear;
  return plan;
}

// ---- Descriptors.

ConvDescriptors::~ConvDescriptors() {
  if (api_ == nullptr) return;
  if (x != nullptr) api_->DestroyTensorDescriptor(x);
  if (y != nullptr) api_->DestroyTensorDescriptor(y);
  if (bias != nullptr) api_->DestroyTensorDescriptor(bias);
  if (w != nullptr) api_->DestroyFilterDescriptor(w);
  if (conv != nullptr) api_->DestroyConvolutionDescriptor(conv);
  if (activation != nullptr) api_->DestroyActivationDescriptor(activation);
}

Status ConvDescriptors::Make(const Cudnn* api, const ConvPlan& p, std::string_view what) {
  api_ = api;
  auto check = [&](cudnnStatus_t s, std::string_view call) { return CheckCudnn(api, s, what, call); };
  auto i32 = [](int64_t v) { return static_cast<int>(v); };
  RETURN_IF_ERROR(check(api->CreateTensorDescriptor(&x), "cudnnCreateTensorDescriptor"));
  RETURN_IF_ERROR(check(api->SetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, p.data_type, i32(p.n), i32(p.c),
                                                   i32(p.PaddedH()), i32(p.PaddedW())),
                        "cudnnSetTensor4dDescriptor(X)"));
  RETURN_IF_ERROR(check(api->CreateTensorDescriptor(&y), "cudnnCreateTensorDescriptor"));
  RETURN_IF_ERROR(
      check(api->SetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, p.data_type, i32(p.n), i32(p.m), i32(p.oh), i32(p.ow)),
            "cudnnSetTensor4dDescriptor(Y)"));
  RETURN_IF_ERROR(check(api->CreateFilterDescriptor(&w), "cudnnCreateFilterDescriptor"));
  RETURN_IF_ERROR(check(
      api->SetFilter4dDescriptor(w, p.data_type, CUDNN_TENSOR_NCHW, i32(p.m), i32(p.c / p.group), i32(p.kh), i32(p.kw)),
      "cudnnSetFilter4dDescriptor"));
  RETURN_IF_ERROR(check(api->CreateConvolutionDescriptor(&conv), "cudnnCreateConvolutionDescriptor"));
  // ONNX Conv is a cross-correlation (the filter is not flipped).
  RETURN_IF_ERROR(check(api->SetConvolution2dDescriptor(conv, i32(p.cudnn_ph), i32(p.cudnn_pw), i32(p.sh), i32(p.sw),
                                                        i32(p.dh), i32(p.dw), CUDNN_CROSS_CORRELATION, p.compute_type),
                        "cudnnSetConvolution2dDescriptor"));
  RETURN_IF_ERROR(check(api->SetConvolutionGroupCount(conv, i32(p.group)), "cudnnSetConvolutionGroupCount"));
  RETURN_IF_ERROR(check(api->SetConvolutionMathType(conv, p.math), "cudnnSetConvolutionMathType"));
  if (p.path == ConvPath::kCudnnFused) {
    RETURN_IF_ERROR(check(api->CreateTensorDescriptor(&bias), "cudnnCreateTensorDescriptor"));
    RETURN_IF_ERROR(check(api->SetTensor4dDescriptor(bias, CUDNN_TENSOR_NCHW, p.data_type, 1, i32(p.m), 1, 1),
                          "cudnnSetTensor4dDescriptor(bias)"));
    RETURN_IF_ERROR(check(api->CreateActivationDescriptor(&activation), "cudnnCreateActivationDescriptor"));
    // NaN passes Relu, as in the reference.
    RETURN_IF_ERROR(check(api->SetActivationDescriptor(activation, p.fused_activation, CUDNN_PROPAGATE_NAN, 0.0),
                          "cudnnSetActivationDescriptor"));
  }
  ASSIGN_OR_RETURN(auto dims, OutputDims(what));
  if (dims != std::array<int, 4>{i32(p.n), i32(p.m), i32(p.oh), i32(p.ow)}) {
    return Internal(fmt::format("{}: cuDNN computes the output [{}, {}, {}, {}] for the plan {}", what, dims[0],
                                dims[1], dims[2], dims[3], p.Describe()));
  }
  return Status();
}

Result<std::array<int, 4>> ConvDescriptors::OutputDims(std::string_view what) const {
  std::array<int, 4> d{};
  RETURN_IF_ERROR(CheckCudnn(api_, api_->GetConvolution2dForwardOutputDim(conv, x, w, &d[0], &d[1], &d[2], &d[3]), what,
                             "cudnnGetConvolution2dForwardOutputDim"));
  return d;
}

namespace {

// ---- Running a plan.

// Algorithms that want more scratch than this are passed over.
constexpr size_t kMaxWorkspaceBytes = size_t{512} << 20;

// One cuDNN handle per GPU and thread for the process: a handle costs milliseconds and device memory to
// create, must not be used by two threads at once, and is bound to a stream per call (cudnnSetStream before
// every use: a context's stream belongs to the thread that runs its model). Never destroyed (the library may
// be gone at exit).
Result<cudnnHandle_t> ThreadHandle(const Cudnn* api, CudaContext& ctx, std::string_view what) {
  static std::mutex mu;
  static std::map<std::pair<int, std::thread::id>, cudnnHandle_t> handles;
  const auto key = std::make_pair(ctx.runtime().index(), std::this_thread::get_id());
  std::lock_guard<std::mutex> lock(mu);
  auto it = handles.find(key);
  if (it != handles.end()) return it->second;
  RETURN_IF_ERROR(ctx.runtime().Activate());
  cudnnHandle_t handle = nullptr;
  RETURN_IF_ERROR(CheckCudnn(api, api->Create(&handle), what, "cudnnCreate"));
  handles.emplace(key, handle);
  return handle;
}

size_t RoundUp(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }

bool IsNotSupported(cudnnStatus_t status) {
  return CUDNN_STATUS_CATEGORY(static_cast<int>(status)) == CUDNN_STATUS_NOT_SUPPORTED;
}

class ConvKernel final : public IKernel {
 public:
  ConvKernel(CudaContext* ctx, const Cudnn* api, const ConvPlan& plan, std::vector<Shape> shapes,
             std::vector<bool> present, std::string what)
      : ctx_(ctx),
        api_(api),
        plan_(plan),
        shapes_(std::move(shapes)),
        present_(std::move(present)),
        what_(std::move(what)) {}

  // Descriptors are host objects: made once here, no GPU needed.
  Status Init() {
    if (plan_.path == ConvPath::kDepthwise) return Status();
    return descs_.Make(api_, plan_, what_);
  }

  Status Run(KernelContext& kc) override {
    for (size_t i = 0; i < shapes_.size(); ++i) {
      if (!present_[i]) continue;
      const Tensor* in = kc.input(i);
      if (in == nullptr || in->shape() != shapes_[i]) {
        return InvalidArgument(fmt::format("{}: input {} is {} at run time, planned for {}", what_, i,
                                           in == nullptr ? "missing" : ShapeToString(in->shape()),
                                           ShapeToString(shapes_[i])));
      }
    }
    RETURN_IF_ERROR(ctx_->runtime().Activate());
    const void* x = Ptr<void>(kc.device_input(0));
    const void* w = Ptr<void>(kc.device_input(1));
    const void* bias = has(2) ? Ptr<void>(kc.device_input(2)) : nullptr;
    const void* z = has(3) ? Ptr<void>(kc.device_input(3)) : nullptr;
    void* y = Ptr<void>(kc.device_output(0));
    if (plan_.path == ConvPath::kDepthwise) return RunDepthwise(x, w, bias, z, y);

    ASSIGN_OR_RETURN(cudnnHandle_t handle, ThreadHandle(api_, *ctx_, what_));
    RETURN_IF_ERROR(Dnn(api_->SetStream(handle, ctx_->stream()), "cudnnSetStream"));
    if (!have_algo_) RETURN_IF_ERROR(ChooseAlgo(handle));
    const size_t es = DTypeSize(plan_.storage);
    const size_t pad_bytes =
        plan_.ExplicitPad()
            ? RoundUp(static_cast<size_t>(plan_.n * plan_.c * plan_.PaddedH() * plan_.PaddedW()) * es, 256)
            : 0;
    ASSIGN_OR_RETURN(void* scratch, ctx_->Workspace(std::max<size_t>(pad_bytes + workspace_bytes_, 256)));
    void* workspace = workspace_bytes_ > 0 ? static_cast<char*>(scratch) + pad_bytes : nullptr;
    if (plan_.ExplicitPad()) {
      RETURN_IF_ERROR(PadX(x, scratch));
      x = scratch;
    }
    const float one = 1.0f, zero = 0.0f;
    if (plan_.path == ConvPath::kCudnnFused) {
      const float alpha2 = z != nullptr ? 1.0f : 0.0f;
      const cudnnStatus_t s = api_->ConvolutionBiasActivationForward(
          handle, &one, descs_.x, x, descs_.w, w, descs_.conv, algo_, workspace, workspace_bytes_, &alpha2, descs_.y,
          z != nullptr ? z : y, descs_.bias, bias, descs_.activation, descs_.y, y);
      if (!IsNotSupported(s) || ran_) return Dnn(s, "cudnnConvolutionBiasActivationForward");
      // This engine set cannot fuse this configuration: convolution, then chipfit's epilogue (from now on).
      plan_.path = ConvPath::kCudnn;
      plan_.needs_epilogue = true;
      have_algo_ = false;
      return Run(kc);
    }
    RETURN_IF_ERROR(Dnn(api_->ConvolutionForward(handle, &one, descs_.x, x, descs_.w, w, descs_.conv, algo_, workspace,
                                                 workspace_bytes_, &zero, descs_.y, y),
                        "cudnnConvolutionForward"));
    ran_ = true;
    if (!plan_.needs_epilogue) return Status();
    conv::EpilogueArgs args;
    args.y = y;
    args.bias = bias;
    args.z = z;
    args.total = static_cast<uint32_t>(plan_.OutputElements());
    args.m = static_cast<uint32_t>(plan_.m);
    args.oh = static_cast<uint32_t>(plan_.oh);
    args.ow = static_cast<uint32_t>(plan_.ow);
    args.zw = plan_.z_walk;
    const Launch1D launch = GridStride(args.total, ctx_->props().shape);
    return ctx_->AfterLaunch(
        conv::LaunchEpilogue(plan_.store, args, plan_.epilogue, launch.grid, launch.block, ctx_->stream()), what_,
        "conv epilogue");
  }

  bool InputOnDevice(size_t i) const override { return has(i); }
  bool OutputOnDevice(size_t) const override { return true; }

 private:
  bool has(size_t i) const { return i < present_.size() && present_[i]; }
  Status Dnn(cudnnStatus_t status, std::string_view call) const { return CheckCudnn(api_, status, what_, call); }

  Status RunDepthwise(const void* x, const void* w, const void* bias, const void* z, void* y) {
    const ConvPlan& p = plan_;
    const auto u32 = [](int64_t v) { return static_cast<uint32_t>(v); };
    conv::DepthwiseArgs a;
    a.x = x;
    a.w = w;
    a.bias = bias;
    a.z = z;
    a.y = y;
    a.total = u32(p.OutputElements());
    a.c = u32(p.c);
    a.ih = u32(p.ih);
    a.iw = u32(p.iw);
    a.oh = u32(p.oh);
    a.ow = u32(p.ow);
    a.kh = u32(p.kh);
    a.kw = u32(p.kw);
    a.sh = u32(p.sh);
    a.sw = u32(p.sw);
    a.dh = u32(p.dh);
    a.dw = u32(p.dw);
    a.ph = static_cast<int32_t>(p.pad_top);
    a.pw = static_cast<int32_t>(p.pad_left);
    a.zw = p.z_walk;
    const Launch1D launch = GridStride(a.total, ctx_->props().shape);
    return ctx_->AfterLaunch(conv::LaunchDepthwise(p.store, a, p.epilogue, launch.grid, launch.block, ctx_->stream()),
                             what_, "conv depthwise");
  }

  Status PadX(const void* x, void* padded) {
    const ConvPlan& p = plan_;
    conv::PadArgs a;
    a.src = x;
    a.dst = padded;
    a.total = static_cast<uint32_t>(p.n * p.c * p.PaddedH() * p.PaddedW());
    a.ih = static_cast<uint32_t>(p.ih);
    a.iw = static_cast<uint32_t>(p.iw);
    a.ph = static_cast<uint32_t>(p.PaddedH());
    a.pw = static_cast<uint32_t>(p.PaddedW());
    a.top = static_cast<uint32_t>(p.extra_top);
    a.left = static_cast<uint32_t>(p.extra_left);
    const Launch1D launch = GridStride(a.total, ctx_->props().shape);
    return ctx_->AfterLaunch(conv::LaunchPad(DTypeSize(p.storage), a, launch.grid, launch.block, ctx_->stream()), what_,
                             "conv pad");
  }

  // cuDNN's heuristics (cudnnGetConvolutionForwardAlgorithm_v7) at the first Run: the first algorithm that
  // supports the configuration within the workspace limit. The fused identity path runs only with
  // IMPLICIT_PRECOMP_GEMM (a cuDNN restriction). Heuristics rather than cudnnFind*: planning stays fast and
  // the choice does not depend on what else the GPU runs at that moment.
  Status ChooseAlgo(cudnnHandle_t handle) {
    const ConvPlan& p = plan_;
    bool found = false;
    if (p.path == ConvPath::kCudnnFused && p.fused_activation == CUDNN_ACTIVATION_IDENTITY) {
      algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
      found = true;
    } else {
      int max_count = 0;
      RETURN_IF_ERROR(Dnn(api_->GetConvolutionForwardAlgorithmMaxCount(handle, &max_count),
                          "cudnnGetConvolutionForwardAlgorithmMaxCount"));
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(std::max(max_count, 1)));
      int returned = 0;
      RETURN_IF_ERROR(
          Dnn(api_->GetConvolutionForwardAlgorithm_v7(handle, descs_.x, descs_.w, descs_.conv, descs_.y,
                                                      static_cast<int>(perf.size()), &returned, perf.data()),
              "cudnnGetConvolutionForwardAlgorithm_v7"));
      for (int i = 0; i < returned && !found; ++i) {
        const cudnnConvolutionFwdAlgoPerf_t& r = perf[static_cast<size_t>(i)];
        if (r.status != CUDNN_STATUS_SUCCESS || r.memory > kMaxWorkspaceBytes) continue;
        // fp32 asked for FMA math: no tensor-op (TF32 or converting) algorithm.
        if (p.math == CUDNN_FMA_MATH &&
            (r.mathType == CUDNN_TENSOR_OP_MATH || r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)) {
          continue;
        }
        algo_ = r.algo;
        found = true;
      }
    }
    if (!found) {
      return Unsupported(
          fmt::format("{}: cudnnGetConvolutionForwardAlgorithm_v7 found no algorithm for {}", what_, p.Describe()));
    }
    size_t bytes = 0;
    const cudnnStatus_t s =
        api_->GetConvolutionForwardWorkspaceSize(handle, descs_.x, descs_.w, descs_.conv, descs_.y, algo_, &bytes);
    if (IsNotSupported(s) && p.path == ConvPath::kCudnnFused && !ran_) {
      plan_.path = ConvPath::kCudnn;  // IMPLICIT_PRECOMP_GEMM cannot run this one: unfused, own epilogue
      plan_.needs_epilogue = true;
      return ChooseAlgo(handle);
    }
    RETURN_IF_ERROR(Dnn(s, "cudnnGetConvolutionForwardWorkspaceSize"));
    workspace_bytes_ = bytes;
    have_algo_ = true;
    return Status();
  }

  CudaContext* ctx_;
  const Cudnn* api_;  // null on the depthwise path
  ConvPlan plan_;
  std::vector<Shape> shapes_;  // per input: the shape planned for
  std::vector<bool> present_;  // per input: given (bias and Z are optional)
  std::string what_;
  ConvDescriptors descs_;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace_bytes_ = 0;
  bool have_algo_ = false;
  bool ran_ = false;  // a convolution has run: the path is settled
};

Result<std::unique_ptr<IKernel>> Create(const KernelInit& init) {
  ASSIGN_OR_RETURN(CudaContext * ctx, RequireStaticContext(init));
  const Node& node = init.node;
  const std::string what = node.Describe();
  const bool fused = node.op_type == "FusedConv";
  if (init.inputs.size() < 2 || init.inputs[0] == nullptr || init.inputs[1] == nullptr) {
    return InvalidArgument(what + ": " + node.op_type + " needs X and W");
  }
  const size_t count = std::min<size_t>(init.inputs.size(), fused ? 4 : 3);
  std::vector<Shape> shapes(count);
  std::vector<bool> present(count, false);
  DType storage = DType::kUndefined;
  for (size_t i = 0; i < count; ++i) {
    const ValueInfo* in = init.inputs[i];
    if (in == nullptr) continue;
    present[i] = true;
    shapes[i] = in->shape;
    const DType s = ctx->StorageType(in->dtype);
    if (storage == DType::kUndefined) storage = s;
    if (s != storage) {
      return Unsupported(fmt::format("{}: input {} is stored as {} and X as {} (the CUDA Conv reads one type)", what, i,
                                     DTypeName(s), DTypeName(storage)));
    }
  }
  const Shape* bias = count > 2 && present[2] ? &shapes[2] : nullptr;
  const Shape* z = count > 3 && present[3] ? &shapes[3] : nullptr;
  ASSIGN_OR_RETURN(ConvPlan plan, PlanConv(node, shapes[0], shapes[1], bias, z, storage, init.precision));
  const Cudnn* api = nullptr;
  if (plan.path != ConvPath::kDepthwise) {
    ASSIGN_OR_RETURN(api, LoadCudnn());
  }
  auto kernel = std::make_unique<ConvKernel>(ctx, api, plan, std::move(shapes), std::move(present), what);
  RETURN_IF_ERROR(kernel->Init());
  return std::unique_ptr<IKernel>(std::move(kernel));
}

}  // namespace

Result<std::unique_ptr<IKernel>> CreateConv(const KernelInit& init) { return Create(init); }
Result<std::unique_ptr<IKernel>> CreateFusedConv(const KernelInit& init) { return Create(init); }

}  // namespace chipfit::cuda
