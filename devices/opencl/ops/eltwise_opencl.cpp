// Elementwise ops on OpenCL (ops/eltwise.cl): activations and unary math as one `unary` kernel whose
// function is a build option, broadcasting binary, variadic (Sum/Max/Min/Mean), PRelu and Where
// as one `nary` kernel; plus the helpers the whole family shares (eltwise_util_opencl.h).
#include <algorithm>
#include <bit>
#include <cfloat>
#include <string>
#include <vector>

#include "core/reference/ref_util.h"
#include "devices/opencl/ops/eltwise_util_opencl.h"
#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit::opencl {

namespace eltwise_util {

Result<ocl::OpenClContext*> RequireStaticF32(const KernelInit& init, std::initializer_list<size_t> float_inputs) {
  auto* ctx = static_cast<ocl::OpenClContext*>(init.device);
  if (ctx == nullptr) return Unsupported("no OpenCL device context");
  if (init.outputs == nullptr) return Unsupported("shapes only known at run time");
  auto known = [](const Shape& shape) {
    return std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d >= 0; });
  };
  for (const ValueInfo* in : init.inputs) {
    if (in != nullptr && !known(in->shape)) return Unsupported("shapes only known at run time");
  }
  for (const ValueInfo& out : *init.outputs) {
    if (!known(out.shape)) return Unsupported("shapes only known at run time");
    if (NumElements(out.shape) >= kMaxElements) return Unsupported("output of 2^31 or more values");
  }
  if (init.outputs->empty() || NumElements((*init.outputs)[0].shape) == 0) return Unsupported("empty output tensor");
  for (size_t i : float_inputs) {
    const ValueInfo* in = i < init.inputs.size() ? init.inputs[i] : nullptr;
    if (in == nullptr) return Unsupported("input " + std::to_string(i) + " is missing");
    if (in->dtype != DType::kF32) {
      return Unsupported(std::string(DTypeName(in->dtype)) + " input " + std::to_string(i) +
                         " (the OpenCL kernels take f32)");
    }
    const int64_t n = NumElements(in->shape);
    if (n == 0) return Unsupported("empty input tensor");
    if (n >= kMaxElements) return Unsupported("input of 2^31 or more values");
  }
  return ctx;
}

size_t NextPowerOfTwo(size_t n) { return n <= 1 ? 1 : std::bit_ceil(n); }

size_t ReductionGroup(ocl::OpenClContext& ctx, const cl::Kernel& kernel, size_t want) {
  const size_t fits = ctx.WorkGroup1D(kernel, std::min(want, kMaxReductionGroup));
  return std::max<size_t>(1, std::bit_floor(std::min({fits, want, kMaxReductionGroup})));
}

cl_uint8 PackU8(const std::vector<int64_t>& values) {
  cl_uint8 v{};
  for (size_t i = 0; i < values.size() && i < 8; ++i) v.s[i] = static_cast<cl_uint>(values[i]);
  return v;
}

cl_int4 PackI4(const std::vector<int64_t>& values) {
  cl_int4 v{};
  for (size_t i = 0; i < values.size() && i < 4; ++i) v.s[i] = static_cast<cl_int>(values[i]);
  return v;
}

}  // namespace eltwise_util

namespace {

using eltwise_util::RequireStaticF32;
using eltwise_util::RoundUp;

// ---- unary

struct UnaryPlan {
  std::string fn;  // the U_<NAME> of eltwise.cl
  float alpha = 0, beta = 0, gamma = 0;
};

// Clip's bounds: attributes before opset 11, then optional inputs that must be constant scalars.
Result<UnaryPlan> ClipPlan(const KernelInit& init) {
  UnaryPlan p{"U_CLIP", -FLT_MAX, FLT_MAX};
  if (init.opset < 11) {
    p.alpha = init.node.GetFloat("min", p.alpha);
    p.beta = init.node.GetFloat("max", p.beta);
    return p;
  }
  for (size_t i = 1; i <= 2; ++i) {
    const ValueInfo* bound = i < init.inputs.size() ? init.inputs[i] : nullptr;
    if (bound == nullptr) continue;
    const char* name = i == 1 ? "min" : "max";
    if (bound->value == nullptr) return Unsupported(std::string("Clip ") + name + " computed at run time");
    if (bound->dtype != DType::kF32 || bound->value->numel() != 1) {
      return Unsupported(std::string("Clip ") + name + " is not an f32 scalar");
    }
    (i == 1 ? p.alpha : p.beta) = bound->value->data<float>()[0];
  }
  return p;
}

// The function of eltwise.cl computing `op` with its attribute values (defaults from the spec).
Result<UnaryPlan> PlanUnary(const KernelInit& init) {
  const Node& node = init.node;
  const std::string& op = node.op_type;
  auto alpha = [&](float fallback) { return node.GetFloat("alpha", fallback); };
  if (op == "Clip") return ClipPlan(init);
  if (op == "LeakyRelu") return UnaryPlan{"U_LEAKY_RELU", alpha(0.01f)};
  if (op == "HardSigmoid") return UnaryPlan{"U_HARD_SIGMOID", alpha(0.2f), node.GetFloat("beta", 0.5f)};
  if (op == "Elu") return UnaryPlan{"U_ELU", alpha(1.0f)};
  if (op == "Selu") {
    return UnaryPlan{"U_SELU", alpha(1.67326319217681884765625f), 0.0f,
                     node.GetFloat("gamma", 1.05070102214813232421875f)};
  }
  if (op == "Celu") {
    if (alpha(1.0f) == 0.0f) return Unsupported("Celu alpha is 0");
    return UnaryPlan{"U_CELU", alpha(1.0f)};
  }
  if (op == "ThresholdedRelu") return UnaryPlan{"U_THRESHOLDED_RELU", alpha(1.0f)};
  if (op == "Gelu") {
    const std::string approximate = node.GetString("approximate", "none");
    if (approximate == "none") return UnaryPlan{"U_GELU"};
    if (approximate == "tanh") return UnaryPlan{"U_GELU_TANH"};
    return Unsupported("Gelu approximation '" + approximate + "'");
  }
  static const std::vector<std::pair<const char*, const char*>> kPlain = {
      {"Relu", "U_RELU"},
      {"Sigmoid", "U_SIGMOID"},
      {"HardSwish", "U_HARD_SWISH"},
      {"Tanh", "U_TANH"},
      {"Exp", "U_EXP"},
      {"Log", "U_LOG"},
      {"Sqrt", "U_SQRT"},
      {"Abs", "U_ABS"},
      {"Neg", "U_NEG"},
      {"Softplus", "U_SOFTPLUS"},
      {"Mish", "U_MISH"},
      {"Round", "U_ROUND"},
      {"Erf", "U_ERF"},
      {"Reciprocal", "U_RECIPROCAL"},
      {"Softsign", "U_SOFTSIGN"},
      {"Floor", "U_FLOOR"},
      {"Ceil", "U_CEIL"},
      {"Sign", "U_SIGN"},
      {"Sin", "U_SIN"},
      {"Cos", "U_COS"},
      {"Tan", "U_TAN"},
      {"Asin", "U_ASIN"},
      {"Acos", "U_ACOS"},
      {"Atan", "U_ATAN"},
      {"Sinh", "U_SINH"},
      {"Cosh", "U_COSH"},
      {"Asinh", "U_ASINH"},
      {"Acosh", "U_ACOSH"},
      {"Atanh", "U_ATANH"},
  };
  for (const auto& [name, fn] : kPlain) {
    if (op == name) return UnaryPlan{fn};
  }
  return Unsupported(op + " is not an elementwise op the OpenCL device knows");
}

class UnaryKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(ocl::OpenClContext* ctx, const KernelInit& init,
                                                 const UnaryPlan& plan) {
    auto kernel = std::unique_ptr<UnaryKernel>(new UnaryKernel(ctx, plan, init.node.Describe()));
    ASSIGN_OR_RETURN(kernel->kernel_, ctx->CreateKernel("eltwise", "unary", "-DOP_IS_UNARY -DOP=" + plan.fn));
    kernel->local_ = ctx->WorkGroup1D(kernel->kernel_);
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const auto n = static_cast<cl_uint>(ctx.output(0)->numel());
    RETURN_IF_ERROR(ocl::SetArgs(kernel_, what_, eltwise_util::MemArg(ctx.device_input(0)),
                                 eltwise_util::MemArg(ctx.device_output(0)), n, plan_.alpha, plan_.beta, plan_.gamma));
    return ctx_->Launch(kernel_, cl::NDRange(RoundUp(n, local_)), cl::NDRange(local_), what_);
  }
  // Clip's bounds and Pow's exponent were read at Init.
  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t) const override { return true; }

 private:
  UnaryKernel(ocl::OpenClContext* ctx, UnaryPlan plan, std::string what)
      : ctx_(ctx), plan_(std::move(plan)), what_(std::move(what)) {}
  ocl::OpenClContext* ctx_;
  UnaryPlan plan_;
  std::string what_;
  cl::Kernel kernel_;
  size_t local_ = 1;
};

// ---- n-ary with broadcasting

constexpr size_t kMaxInputs = 8;
constexpr size_t kMaxRank = 6;

// How the kernel reaches one input's element for output index i (eltwise.cl KIND_*).
enum class Kind { kFull = 0, kScalar = 1, kRun = 2, kStrided = 3 };

struct InputWalk {
  Kind kind = Kind::kFull;
  std::vector<int64_t> args;  // kRun: {inner, count}; kStrided: strides innermost first
};

struct NaryPlan {
  std::vector<int64_t> dims;  // collapsed output dims, innermost first
  std::vector<InputWalk> inputs;
  bool need_coords = false;
};

// Output dims of 1 dropped and adjacent dims merged where every input spans (or broadcasts) both
// alike; then each input gets the cheapest way to index it.
Result<NaryPlan> PlanBroadcast(const std::vector<Shape>& shapes, const Shape& out) {
  const size_t rank = out.size();
  std::vector<int64_t> dims;            // outer first while building
  std::vector<std::vector<bool>> span;  // per collapsed dim: which inputs span it
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    std::vector<bool> s;
    for (const Shape& in : shapes) {
      const size_t lead = rank - in.size();
      s.push_back(d >= lead && in[d - lead] == out[d]);
    }
    if (!span.empty() && span.back() == s) {
      dims.back() *= out[d];
    } else {
      dims.push_back(out[d]);
      span.push_back(std::move(s));
    }
  }
  NaryPlan plan;
  const size_t k = dims.size();
  plan.dims.assign(dims.rbegin(), dims.rend());
  for (size_t i = 0; i < shapes.size(); ++i) {
    InputWalk walk;
    std::vector<size_t> spanned;  // collapsed dims (outer-first index) input i spans
    for (size_t d = 0; d < k; ++d) {
      if (span[d][i]) spanned.push_back(d);
    }
    if (spanned.size() == k) {
      walk.kind = Kind::kFull;
    } else if (spanned.empty()) {
      walk.kind = Kind::kScalar;
    } else if (spanned.size() == 1) {
      walk.kind = Kind::kRun;
      int64_t inner = 1;
      for (size_t d = spanned[0] + 1; d < k; ++d) inner *= dims[d];
      walk.args = {inner, dims[spanned[0]]};
    } else {
      walk.kind = Kind::kStrided;
      plan.need_coords = true;
      int64_t running = 1;
      for (size_t d = k; d-- > 0;) {
        walk.args.push_back(span[d][i] ? running : 0);
        if (span[d][i]) running *= dims[d];
      }
    }
    plan.inputs.push_back(std::move(walk));
  }
  if (plan.need_coords && k > kMaxRank) {
    return Unsupported("broadcast pattern over " + std::to_string(k) + " alternating dims (the kernel walks at most " +
                       std::to_string(kMaxRank) + ")");
  }
  return plan;
}

class NaryKernel final : public IKernel {
 public:
  // `device_inputs`: the ONNX inputs the kernel reads, in kernel order; `shapes` their shapes.
  static Result<std::unique_ptr<IKernel>> Create(ocl::OpenClContext* ctx, const KernelInit& init, const std::string& op,
                                                 const std::vector<size_t>& device_inputs,
                                                 const std::vector<Shape>& shapes, float scale = 1.0f) {
    const Shape& out = (*init.outputs)[0].shape;
    ASSIGN_OR_RETURN(NaryPlan plan, PlanBroadcast(shapes, out));
    std::string defines = "-DOP_IS_NARY -DOP=" + op + " -DNIN=" + std::to_string(device_inputs.size());
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
      defines += " -DKIND" + std::to_string(i) + "=" + std::to_string(static_cast<int>(plan.inputs[i].kind));
    }
    if (plan.need_coords) defines += " -DNEED_COORDS -DRANK=" + std::to_string(plan.dims.size());
    if (scale != 1.0f) defines += " -DSCALE_RESULT";
    auto kernel = std::unique_ptr<NaryKernel>(new NaryKernel(ctx, init.node.Describe()));
    ASSIGN_OR_RETURN(kernel->kernel_, ctx->CreateKernel("eltwise", "nary", defines));
    kernel->local_ = ctx->WorkGroup1D(kernel->kernel_);
    kernel->device_inputs_ = device_inputs;
    kernel->dims_ = eltwise_util::PackU8(plan.dims);
    for (const InputWalk& walk : plan.inputs) kernel->walks_.push_back(eltwise_util::PackU8(walk.args));
    kernel->scale_ = scale;
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const auto n = static_cast<cl_uint>(ctx.output(0)->numel());
    RETURN_IF_ERROR(ocl::SetArgs(kernel_, what_, eltwise_util::MemArg(ctx.device_output(0)), n, dims_, scale_));
    cl_uint index = 4;
    for (size_t k = 0; k < device_inputs_.size(); ++k) {
      cl_int err = kernel_.setArg(index++, eltwise_util::MemArg(ctx.device_input(device_inputs_[k])));
      if (err == CL_SUCCESS) err = kernel_.setArg(index++, walks_[k]);
      if (err != CL_SUCCESS) return ocl::ClError(err, what_ + ": argument " + std::to_string(index - 1));
    }
    return ctx_->Launch(kernel_, cl::NDRange(RoundUp(n, local_)), cl::NDRange(local_), what_);
  }
  bool InputOnDevice(size_t input) const override {
    return std::find(device_inputs_.begin(), device_inputs_.end(), input) != device_inputs_.end();
  }
  bool OutputOnDevice(size_t) const override { return true; }

 private:
  NaryKernel(ocl::OpenClContext* ctx, std::string what) : ctx_(ctx), what_(std::move(what)) {}
  ocl::OpenClContext* ctx_;
  std::string what_;
  cl::Kernel kernel_;
  size_t local_ = 1;
  std::vector<size_t> device_inputs_;
  cl_uint8 dims_{};
  std::vector<cl_uint8> walks_;
  float scale_ = 1.0f;
};

// Pow with a constant one-value exponent of any numeric dtype: a unary function of the base.
Result<std::unique_ptr<IKernel>> CreatePowScalar(ocl::OpenClContext* ctx, const KernelInit& init) {
  const double e = init.inputs[1]->value->GetAsDouble(0);
  UnaryPlan plan{"U_POW_SCALAR", static_cast<float>(e)};
  if (e == 2.0) plan.fn = "U_SQUARE";
  if (e == 3.0) plan.fn = "U_CUBE";
  if (e == -1.0) plan.fn = "U_RECIPROCAL";
  return UnaryKernel::Create(ctx, init, plan);
}

// PRelu before opset 7 took a 1-D slope of X's channel count along axis 1 (see the reference).
Shape PReluSlopeShape(const Shape& x, const Shape& slope, int64_t opset) {
  if (opset >= 7 || slope.size() != 1 || x.size() < 2 || slope[0] != x[1] || slope[0] == 1) return slope;
  Shape per_channel(x.size() - 1, 1);
  per_channel[0] = slope[0];
  return per_channel;
}

}  // namespace

Result<std::unique_ptr<IKernel>> CreateUnary(const KernelInit& init) {
  ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, RequireStaticF32(init, {0}));
  ASSIGN_OR_RETURN(UnaryPlan plan, PlanUnary(init));
  return UnaryKernel::Create(ctx, init, plan);
}

Result<std::unique_ptr<IKernel>> CreateBinary(const KernelInit& init) {
  const std::string& op = init.node.op_type;
  const bool pow = op == "Pow";
  ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, RequireStaticF32(init, {0}));
  const ValueInfo* b = init.inputs.size() > 1 ? init.inputs[1] : nullptr;
  if (b == nullptr) return Unsupported("input 1 is missing");
  if (pow && b->value != nullptr && b->value->numel() == 1 && (IsFloatingDType(b->dtype) || IsIntegerDType(b->dtype))) {
    return CreatePowScalar(ctx, init);
  }
  RETURN_IF_ERROR(RequireStaticF32(init, {0, 1}).status());
  const Shape& a_shape = init.inputs[0]->shape;
  Shape b_shape = b->shape;
  if (op == "PRelu") {
    b_shape = PReluSlopeShape(a_shape, b_shape, init.opset);
  } else if (init.opset < 7 && a_shape != b_shape) {
    return Unsupported("broadcasting before opset 7 (broadcast/axis attributes)");
  }
  static const std::vector<std::pair<const char*, const char*>> kOps = {
      {"Add", "B_ADD"}, {"Sub", "B_SUB"}, {"Mul", "B_MUL"}, {"Div", "B_DIV"}, {"Pow", "B_POW"}, {"PRelu", "B_PRELU"}};
  for (const auto& [name, fn] : kOps) {
    if (op == name) return NaryKernel::Create(ctx, init, fn, {0, 1}, {a_shape, b_shape});
  }
  return Unsupported(op + " is not a binary op the OpenCL device knows");
}

Result<std::unique_ptr<IKernel>> CreateVariadic(const KernelInit& init) {
  const std::string& op = init.node.op_type;
  std::vector<size_t> present;
  std::vector<Shape> shapes;
  for (size_t i = 0; i < init.inputs.size(); ++i) {
    if (init.inputs[i] == nullptr) return Unsupported("input " + std::to_string(i) + " is missing");
    present.push_back(i);
    shapes.push_back(init.inputs[i]->shape);
  }
  if (present.empty()) return Unsupported(op + " without inputs");
  if (present.size() > kMaxInputs) {
    return Unsupported(op + " of " + std::to_string(present.size()) + " inputs (the OpenCL kernel takes at most " +
                       std::to_string(kMaxInputs) + ")");
  }
  ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, RequireStaticF32(init, {}));
  for (size_t i : present) RETURN_IF_ERROR(RequireStaticF32(init, {i}).status());
  if (present.size() == 1) return UnaryKernel::Create(ctx, init, UnaryPlan{"U_IDENTITY"});
  const float scale = op == "Mean" ? 1.0f / static_cast<float>(present.size()) : 1.0f;
  const char* fn = op == "Max" ? "B_MAX" : op == "Min" ? "B_MIN" : (op == "Sum" || op == "Mean") ? "B_ADD" : nullptr;
  if (fn == nullptr) return Unsupported(op + " is not a variadic op the OpenCL device knows");
  return NaryKernel::Create(ctx, init, fn, present, shapes, scale);
}

Result<std::unique_ptr<IKernel>> CreateWhere(const KernelInit& init) {
  ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, RequireStaticF32(init, {1, 2}));
  const ValueInfo* cond = init.inputs.empty() ? nullptr : init.inputs[0];
  if (cond == nullptr || cond->dtype != DType::kBool) return Unsupported("Where condition is not bool");
  if (NumElements(cond->shape) == 0) return Unsupported("empty input tensor");
  return NaryKernel::Create(ctx, init, "B_WHERE", {0, 1, 2},
                            {cond->shape, init.inputs[1]->shape, init.inputs[2]->shape});
}

}  // namespace chipfit::opencl
