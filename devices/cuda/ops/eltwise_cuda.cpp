// Elementwise ops on CUDA (device code in eltwise.cu): unary activations and math, broadcasting
// binary ops, variadic Sum/Mean/Max/Min, Where and Cast. Every factory plans fully at Init (function,
// attributes, the collapsed broadcast walk) before it asks for the context, so that its refusals are
// the same, and testable, on machines without a GPU.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "devices/cuda/ops/cuda_ops.h"
#include "devices/cuda/ops/eltwise_launch.h"

namespace chipfit::cuda {

namespace eltwise {

std::string PlanBroadcast(const std::vector<std::vector<int64_t>>& inputs, const std::vector<int64_t>& out,
                          Broadcast& walk) {
  walk = Broadcast{};
  if (inputs.empty()) return "no inputs";
  if (inputs.size() > static_cast<size_t>(kMaxInputs)) {
    return std::to_string(inputs.size()) + " inputs (the CUDA kernel takes at most " + std::to_string(kMaxInputs) + ")";
  }
  int64_t numel = 1;
  for (int64_t d : out) numel *= d;
  if (numel > kMaxElements) return "output of 2^31 or more values (the CUDA kernels index in 32 bits)";
  const size_t rank = out.size();
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::vector<int64_t>& in = inputs[k];
    if (in.size() > rank) return "input " + std::to_string(k) + " has a higher rank than the output";
    for (size_t d = 0; d < in.size(); ++d) {
      const int64_t o = out[rank - in.size() + d];
      if (in[d] != o && in[d] != 1) return "input " + std::to_string(k) + " does not broadcast to the output";
    }
  }
  walk.num_inputs = static_cast<int32_t>(inputs.size());
  walk.numel = static_cast<uint32_t>(numel);
  if (numel == 0) return "";

  // Which inputs span each output dim; neighbours spanned alike merge into one dim.
  std::vector<int64_t> dims;  // outermost first
  std::vector<std::vector<bool>> spans;
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    std::vector<bool> span;
    for (const std::vector<int64_t>& in : inputs) {
      const size_t lead = rank - in.size();
      span.push_back(d >= lead && in[d - lead] == out[d]);
    }
    if (!spans.empty() && spans.back() == span) {
      dims.back() *= out[d];
    } else {
      dims.push_back(out[d]);
      spans.push_back(std::move(span));
    }
  }
  if (dims.empty()) {  // one value
    dims.push_back(1);
    spans.emplace_back(inputs.size(), true);
  }
  if (dims.size() > static_cast<size_t>(kMaxRank)) {
    walk = Broadcast{};
    return "a broadcast over " + std::to_string(dims.size()) + " alternating dims (the CUDA kernel walks at most " +
           std::to_string(kMaxRank) + ")";
  }
  walk.rank = static_cast<int32_t>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) walk.dims[d] = static_cast<uint32_t>(dims[d]);
  for (size_t k = 0; k < inputs.size(); ++k) {
    uint32_t running = 1;
    for (size_t d = dims.size(); d-- > 0;) {
      walk.strides[k][d] = spans[d][k] ? running : 0;
      if (spans[d][k]) running *= walk.dims[d];
    }
  }
  return "";
}

}  // namespace eltwise

namespace {

using eltwise::Broadcast;
using eltwise::NaryArgs;
using eltwise::NaryFn;
using eltwise::Storage;
using eltwise::UnaryFn;
using eltwise::UnaryParams;

std::optional<Storage> StorageOf(DType storage) {
  switch (storage) {
    case DType::kF32: return Storage::kF32;
    case DType::kF16: return Storage::kF16;
    case DType::kBF16: return Storage::kBF16;
    case DType::kI8: return Storage::kI8;
    case DType::kU8: return Storage::kU8;
    case DType::kI16: return Storage::kI16;
    case DType::kU16: return Storage::kU16;
    case DType::kI32: return Storage::kI32;
    case DType::kU32: return Storage::kU32;
    case DType::kI64: return Storage::kI64;
    case DType::kBool: return Storage::kBool;
    default: return std::nullopt;
  }
}

bool IsFloat(DType dtype) { return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16; }

std::string Name(DType dtype) { return std::string(DTypeName(dtype)); }

const ValueInfo* Input(const KernelInit& init, size_t i) { return i < init.inputs.size() ? init.inputs[i] : nullptr; }

Status RequireFloat(const KernelInit& init, size_t i) {
  const ValueInfo* in = Input(init, i);
  if (in == nullptr) return Unsupported("input " + std::to_string(i) + " is missing");
  if (!IsFloat(in->dtype)) {
    return Unsupported(init.node.op_type + " on " + Name(in->dtype) + " (the CUDA kernel takes f32, f16 and bf16)");
  }
  return Status();
}

// Storage of a dtype in this context (f32 is f16/bf16 under fp16/bf16); the factories' dtype checks
// guarantee a kernel exists for it.
Storage StorageIn(CudaContext* ctx, DType dtype) { return StorageOf(ctx->StorageType(dtype)).value_or(Storage::kF32); }

// ---- unary

struct UnaryPlan {
  UnaryFn fn = UnaryFn::kRelu;
  UnaryParams params;
};

UnaryPlan Plan(UnaryFn fn, float alpha = 0, float beta = 0, float gamma = 0) {
  UnaryPlan p;
  p.fn = fn;
  p.params = {alpha, beta, gamma};
  return p;
}

// Clip's bounds: attributes before opset 11, then optional inputs that must be constant scalars.
Result<UnaryPlan> ClipPlan(const KernelInit& init) {
  UnaryPlan p = Plan(UnaryFn::kClip, -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity());
  if (init.opset < 11) {
    p.params.alpha = init.node.GetFloat("min", -std::numeric_limits<float>::max());
    p.params.beta = init.node.GetFloat("max", std::numeric_limits<float>::max());
    return p;
  }
  for (size_t i = 1; i <= 2; ++i) {
    const ValueInfo* bound = Input(init, i);
    if (bound == nullptr) continue;
    const std::string name = i == 1 ? "min" : "max";
    if (bound->value == nullptr) return Unsupported("Clip " + name + " computed at run time (CUDA needs a constant)");
    if (bound->value->numel() != 1) return Unsupported("Clip " + name + " is not a single value");
    (i == 1 ? p.params.alpha : p.params.beta) = static_cast<float>(bound->value->GetAsDouble(0));
  }
  return p;
}

Result<UnaryPlan> PlanUnary(const KernelInit& init) {
  const Node& node = init.node;
  const std::string& op = node.op_type;
  auto alpha = [&](float fallback) { return node.GetFloat("alpha", fallback); };
  if (op == "Clip") return ClipPlan(init);
  if (op == "LeakyRelu") return Plan(UnaryFn::kLeakyRelu, alpha(0.01f));
  if (op == "HardSigmoid") return Plan(UnaryFn::kHardSigmoid, alpha(0.2f), node.GetFloat("beta", 0.5f));
  if (op == "Elu") return Plan(UnaryFn::kElu, alpha(1.0f));
  if (op == "Selu") {
    return Plan(UnaryFn::kSelu, alpha(1.67326319217681884765625f), 0.0f,
                node.GetFloat("gamma", 1.05070102214813232421875f));
  }
  if (op == "Celu") {
    if (alpha(1.0f) == 0.0f) return Unsupported("Celu alpha is 0");
    return Plan(UnaryFn::kCelu, alpha(1.0f));
  }
  if (op == "ThresholdedRelu") return Plan(UnaryFn::kThresholdedRelu, alpha(1.0f));
  if (op == "Gelu") {
    const std::string approximate = node.GetString("approximate", "none");
    if (approximate == "none") return Plan(UnaryFn::kGelu);
    if (approximate == "tanh") return Plan(UnaryFn::kGeluTanh);
    return Unsupported("Gelu approximation '" + approximate + "'");
  }
  static const std::pair<const char*, UnaryFn> kPlain[] = {
      {"Relu", UnaryFn::kRelu},
      {"Sigmoid", UnaryFn::kSigmoid},
      {"HardSwish", UnaryFn::kHardSwish},
      {"Tanh", UnaryFn::kTanh},
      {"Exp", UnaryFn::kExp},
      {"Log", UnaryFn::kLog},
      {"Sqrt", UnaryFn::kSqrt},
      {"Abs", UnaryFn::kAbs},
      {"Neg", UnaryFn::kNeg},
      {"Softplus", UnaryFn::kSoftplus},
      {"Mish", UnaryFn::kMish},
      {"Round", UnaryFn::kRound},
      {"Erf", UnaryFn::kErf},
      {"Reciprocal", UnaryFn::kReciprocal},
      {"Softsign", UnaryFn::kSoftsign},
      {"Floor", UnaryFn::kFloor},
      {"Ceil", UnaryFn::kCeil},
      {"Sign", UnaryFn::kSign},
      {"Sin", UnaryFn::kSin},
      {"Cos", UnaryFn::kCos},
  };
  for (const auto& [name, fn] : kPlain) {
    if (op == name) return Plan(fn);
  }
  return Unsupported(op + " is not an elementwise op the CUDA device knows");
}

class UnaryKernel final : public IKernel {
 public:
  UnaryKernel(CudaContext* ctx, std::string what, UnaryPlan plan, Storage storage, uint32_t n)
      : ctx_(ctx), what_(std::move(what)), plan_(plan), storage_(storage), n_(n) {}

  Status Run(KernelContext& ctx) override {
    if (n_ == 0) return Status();
    const Launch1D launch = GridStride(n_, ctx_->props().shape);
    const cudaError_t err =
        eltwise::LaunchUnary(plan_.fn, storage_, ctx.device_input(0).handle, ctx.device_output(0).handle, n_,
                             plan_.params, launch.grid, launch.block, ctx_->stream());
    return ctx_->AfterLaunch(err, what_, "eltwise unary");
  }
  // Clip's bounds and Pow's exponent were read at Init.
  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t output) const override { return output == 0; }

 private:
  CudaContext* ctx_;
  std::string what_;
  UnaryPlan plan_;
  Storage storage_;
  uint32_t n_;
};

Result<std::unique_ptr<IKernel>> MakeUnary(const KernelInit& init, const UnaryPlan& plan) {
  ASSIGN_OR_RETURN(CudaContext * ctx, RequireStaticContext(init));
  const auto n = static_cast<uint32_t>(NumElements((*init.outputs)[0].shape));
  return std::unique_ptr<IKernel>(
      new UnaryKernel(ctx, init.node.Describe(), plan, StorageIn(ctx, init.inputs[0]->dtype), n));
}

// ---- n-ary

class NaryKernel final : public IKernel {
 public:
  // `device_inputs`: the ONNX inputs the kernel reads, in walk order.
  NaryKernel(CudaContext* ctx, std::string what, NaryFn fn, Storage storage, Broadcast walk,
             std::vector<size_t> device_inputs, float divisor, size_t where_bytes)
      : ctx_(ctx),
        what_(std::move(what)),
        fn_(fn),
        storage_(storage),
        device_inputs_(std::move(device_inputs)),
        where_bytes_(where_bytes) {
    args_.walk = walk;
    args_.divisor = divisor;
  }

  Status Run(KernelContext& ctx) override {
    if (args_.walk.numel == 0) return Status();
    NaryArgs args = args_;
    for (size_t k = 0; k < device_inputs_.size(); ++k) args.in[k] = ctx.device_input(device_inputs_[k]).handle;
    args.out = ctx.device_output(0).handle;
    const Launch1D launch = GridStride(args.walk.numel, ctx_->props().shape);
    if (where_bytes_ != 0) {
      return ctx_->AfterLaunch(eltwise::LaunchWhere(where_bytes_, args, launch.grid, launch.block, ctx_->stream()),
                               what_, "eltwise where");
    }
    return ctx_->AfterLaunch(eltwise::LaunchNary(fn_, storage_, args, launch.grid, launch.block, ctx_->stream()), what_,
                             "eltwise nary");
  }
  bool InputOnDevice(size_t input) const override {
    return std::find(device_inputs_.begin(), device_inputs_.end(), input) != device_inputs_.end();
  }
  bool OutputOnDevice(size_t output) const override { return output == 0; }

 private:
  CudaContext* ctx_;
  std::string what_;
  NaryFn fn_;
  Storage storage_;
  std::vector<size_t> device_inputs_;
  size_t where_bytes_;  // Where: the value size; 0 for the combining kernel
  NaryArgs args_;
};

// All inputs of one dtype that the kernel for `fn` is compiled for; the walk of their broadcast.
Result<Broadcast> PlanNary(const KernelInit& init, NaryFn fn, const std::vector<size_t>& inputs,
                           const std::vector<Shape>& shapes) {
  const DType dtype = init.inputs[inputs[0]]->dtype;
  for (size_t i : inputs) {
    if (init.inputs[i]->dtype != dtype) {
      return Unsupported(init.node.op_type + " of " + Name(dtype) + " and " + Name(init.inputs[i]->dtype) +
                         " (the CUDA kernel takes one dtype)");
    }
  }
  const std::optional<Storage> storage = StorageOf(dtype);
  if (!storage || !eltwise::NaryCompiled(fn, *storage)) {
    const bool integer = storage && !eltwise::IsFloatStorage(*storage);
    return Unsupported(init.node.op_type + " on " + Name(dtype) +
                       (integer ? " (integer kernels: Add, Sub, Mul, Max, Min of i32 and i64; integer division "
                                  "by zero is an error the kernel cannot report)"
                                : " (the CUDA kernel takes f32, f16, bf16, i32 and i64)"));
  }
  Broadcast walk;
  const std::string why = eltwise::PlanBroadcast(shapes, (*init.outputs)[0].shape, walk);
  if (!why.empty()) return Unsupported(why);
  return walk;
}

Result<std::unique_ptr<IKernel>> MakeNary(const KernelInit& init, NaryFn fn, const Broadcast& walk,
                                          std::vector<size_t> inputs, float divisor = 1.0f) {
  ASSIGN_OR_RETURN(CudaContext * ctx, RequireStaticContext(init));
  const Storage storage = StorageIn(ctx, init.inputs[inputs[0]]->dtype);
  return std::unique_ptr<IKernel>(
      new NaryKernel(ctx, init.node.Describe(), fn, storage, walk, std::move(inputs), divisor, 0));
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
  RETURN_IF_ERROR(CheckStaticShapes(init));
  RETURN_IF_ERROR(RequireFloat(init, 0));
  ASSIGN_OR_RETURN(const UnaryPlan plan, PlanUnary(init));
  return MakeUnary(init, plan);
}

Result<std::unique_ptr<IKernel>> CreateBinary(const KernelInit& init) {
  RETURN_IF_ERROR(CheckStaticShapes(init));
  const std::string& op = init.node.op_type;
  const ValueInfo* a = Input(init, 0);
  const ValueInfo* b = Input(init, 1);
  if (a == nullptr || b == nullptr) return Unsupported(op + " with a missing input");
  if (op == "Pow") {
    RETURN_IF_ERROR(RequireFloat(init, 0));
    // A constant one-value exponent of any numeric dtype: a unary function of the base.
    if (b->value != nullptr && b->value->numel() == 1 && (IsFloatingDType(b->dtype) || IsIntegerDType(b->dtype))) {
      const double e = b->value->GetAsDouble(0);
      if (e == 2.0) return MakeUnary(init, Plan(UnaryFn::kSquare));
      return MakeUnary(init, Plan(UnaryFn::kPowScalar, static_cast<float>(e)));
    }
  }
  static const std::pair<const char*, NaryFn> kOps[] = {{"Add", NaryFn::kAdd}, {"Sub", NaryFn::kSub},
                                                        {"Mul", NaryFn::kMul}, {"Div", NaryFn::kDiv},
                                                        {"Pow", NaryFn::kPow}, {"PRelu", NaryFn::kPRelu}};
  const auto it = std::find_if(std::begin(kOps), std::end(kOps), [&](const auto& row) { return op == row.first; });
  if (it == std::end(kOps)) return Unsupported(op + " is not a binary op the CUDA device knows");
  Shape b_shape = b->shape;
  if (op == "PRelu") {
    b_shape = PReluSlopeShape(a->shape, b_shape, init.opset);
  } else if (init.opset < 7 && a->shape != b_shape) {
    return Unsupported("broadcasting before opset 7 (broadcast/axis attributes)");
  }
  ASSIGN_OR_RETURN(const Broadcast walk, PlanNary(init, it->second, {0, 1}, {a->shape, b_shape}));
  return MakeNary(init, it->second, walk, {0, 1});
}

Result<std::unique_ptr<IKernel>> CreateVariadic(const KernelInit& init) {
  RETURN_IF_ERROR(CheckStaticShapes(init));
  const std::string& op = init.node.op_type;
  std::vector<size_t> inputs;
  std::vector<Shape> shapes;
  for (size_t i = 0; i < init.inputs.size(); ++i) {
    if (init.inputs[i] == nullptr) return Unsupported(op + " input " + std::to_string(i) + " is missing");
    inputs.push_back(i);
    shapes.push_back(init.inputs[i]->shape);
  }
  if (inputs.empty()) return Unsupported(op + " without inputs");
  const bool sum = op == "Sum" || op == "Mean";
  if (!sum && op != "Max" && op != "Min") return Unsupported(op + " is not a variadic op the CUDA device knows");
  const NaryFn fn = sum ? NaryFn::kAdd : op == "Max" ? NaryFn::kMax : NaryFn::kMin;
  if (sum) RETURN_IF_ERROR(RequireFloat(init, 0));  // Sum and Mean are float ops in ONNX
  ASSIGN_OR_RETURN(const Broadcast walk, PlanNary(init, fn, inputs, shapes));
  return MakeNary(init, fn, walk, inputs, op == "Mean" ? static_cast<float>(inputs.size()) : 1.0f);
}

Result<std::unique_ptr<IKernel>> CreateWhere(const KernelInit& init) {
  RETURN_IF_ERROR(CheckStaticShapes(init));
  const ValueInfo* cond = Input(init, 0);
  const ValueInfo* x = Input(init, 1);
  const ValueInfo* y = Input(init, 2);
  if (cond == nullptr || x == nullptr || y == nullptr) return Unsupported("Where with a missing input");
  if (cond->dtype != DType::kBool) return Unsupported("Where condition of " + Name(cond->dtype) + ", not bool");
  if (x->dtype != y->dtype) return Unsupported("Where of " + Name(x->dtype) + " and " + Name(y->dtype));
  if (!StorageOf(x->dtype)) return Unsupported("Where on " + Name(x->dtype) + " on CUDA");
  Broadcast walk;
  const std::string why = eltwise::PlanBroadcast({cond->shape, x->shape, y->shape}, (*init.outputs)[0].shape, walk);
  if (!why.empty()) return Unsupported(why);
  ASSIGN_OR_RETURN(CudaContext * ctx, RequireStaticContext(init));
  const size_t bytes = DTypeSize(ctx->StorageType(x->dtype));
  return std::unique_ptr<IKernel>(
      new NaryKernel(ctx, init.node.Describe(), NaryFn::kAdd, Storage::kF32, walk, {0, 1, 2}, 1.0f, bytes));
}

namespace {

class CastKernel final : public IKernel {
 public:
  CastKernel(CudaContext* ctx, std::string what, Storage from, Storage to, uint32_t n)
      : ctx_(ctx), what_(std::move(what)), from_(from), to_(to), n_(n) {}

  Status Run(KernelContext& ctx) override {
    if (n_ == 0) return Status();
    // Equal storage keeps every byte (f32 → f16 under fp16 storage is half to half).
    if (from_ == to_) {
      return ctx_->Copy(ctx.device_input(0), ctx.device_output(0), n_ * eltwise::StorageBytes(to_), what_);
    }
    const Launch1D launch = GridStride(n_, ctx_->props().shape);
    const cudaError_t err = eltwise::LaunchCast(from_, to_, ctx.device_input(0).handle, ctx.device_output(0).handle, n_,
                                                launch.grid, launch.block, ctx_->stream());
    return ctx_->AfterLaunch(err, what_, "eltwise cast");
  }
  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t output) const override { return output == 0; }

 private:
  CudaContext* ctx_;
  std::string what_;
  Storage from_, to_;
  uint32_t n_;
};

// Why a dtype cannot be cast on CUDA, or "" when it can.
std::string CastRefusal(DType dtype) {
  switch (dtype) {
    case DType::kF64: return "f64 (the CUDA cast kernel computes in float)";
    case DType::kU64: return "u64 (values past 2^63 need conversions the kernel does not make)";
    case DType::kString: return "strings";
    default: return StorageOf(dtype) ? "" : Name(dtype);
  }
}

}  // namespace

Result<std::unique_ptr<IKernel>> CreateCast(const KernelInit& init) {
  RETURN_IF_ERROR(CheckStaticShapes(init));
  const ValueInfo* x = Input(init, 0);
  if (x == nullptr) return Unsupported("Cast input is missing");
  const DType from = x->dtype;
  const DType to = (*init.outputs)[0].dtype;
  for (const auto& [dtype, side] : {std::pair{from, "from"}, std::pair{to, "to"}}) {
    const std::string why = CastRefusal(dtype);
    if (!why.empty()) return Unsupported(std::string("Cast ") + side + " " + why + " on CUDA");
  }
  ASSIGN_OR_RETURN(CudaContext * ctx, RequireStaticContext(init));
  const auto n = static_cast<uint32_t>(NumElements((*init.outputs)[0].shape));
  return std::unique_ptr<IKernel>(
      new CastKernel(ctx, init.node.Describe(), StorageIn(ctx, from), StorageIn(ctx, to), n));
}

}  // namespace chipfit::cuda
