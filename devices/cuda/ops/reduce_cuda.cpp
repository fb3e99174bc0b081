// Softmax/LogSoftmax, Reduce*, LayerNormalization, InstanceNormalization and inference
// BatchNormalization on CUDA (device code in reduce.cu). Every kernel is planned at Init as rows of
// an outer × n × inner view of its input and launched on the context's stream at Run.
#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "core/reference/ref_util.h"
#include "devices/cuda/ops/cuda_ops.h"
#include "devices/cuda/ops/reduce_launch.h"

namespace chipfit::cuda {

RowLaunch PlanRowLaunch(const RowView& view, const GpuShape& gpu) {
  RowLaunch launch;
  launch.block_per_row = view.inner == 1 && view.n >= kBlockPerRowFrom;
  if (launch.block_per_row) {
    // Very long rows (vocabulary softmax) take wider blocks; the grid strides over rows beyond the
    // grid limit.
    launch.block = RowBlock(view.n, gpu, view.n >= 4096 ? 512 : 256);
    launch.grid = static_cast<uint32_t>(std::clamp<int64_t>(view.rows(), 1, gpu.max_grid_x));
  } else {
    const Launch1D l = GridStride(view.rows(), gpu);
    launch.grid = l.grid;
    launch.block = l.block;
  }
  return launch;
}

namespace {

std::optional<StoreType> StoreOf(DType storage) {
  switch (storage) {
    case DType::kF32: return StoreType::kF32;
    case DType::kF16: return StoreType::kF16;
    case DType::kBF16: return StoreType::kBf16;
    default: return std::nullopt;
  }
}

// The static CUDA context and the storage type of the float `inputs`, which must all be present and
// stored alike (one kernel instantiation reads them all).
struct Planned {
  CudaContext* ctx = nullptr;
  StoreType type = StoreType::kF32;
};
Result<Planned> RequireFloatInputs(const KernelInit& init, std::initializer_list<size_t> inputs) {
  ASSIGN_OR_RETURN(CudaContext * ctx, RequireStaticContext(init));
  Planned planned{ctx};
  DType first = DType::kUndefined;
  for (size_t i : inputs) {
    if (i >= init.inputs.size() || init.inputs[i] == nullptr) {
      return Unsupported(fmt::format("input {} is missing", i));
    }
    const DType dtype = init.inputs[i]->dtype;
    const DType storage = ctx->StorageType(dtype);
    const std::optional<StoreType> type = StoreOf(storage);
    if (!type) {
      return Unsupported(fmt::format("{} input {} (the CUDA kernel takes f32, f16 and bf16)", DTypeName(dtype), i));
    }
    if (first == DType::kUndefined) {
      first = storage;
      planned.type = *type;
    } else if (storage != first) {
      return Unsupported(fmt::format("input {} is stored as {} and input 0 as {} (the CUDA kernel reads one type)", i,
                                     DTypeName(storage), DTypeName(first)));
    }
  }
  return planned;
}

size_t PresentOutputs(const Node& node) {
  return static_cast<size_t>(
      std::count_if(node.outputs.begin(), node.outputs.end(), [](const std::string& name) { return !name.empty(); }));
}

const void* In(const KernelContext& ctx, size_t i) { return ctx.device_input(i).handle; }

// ---- Softmax / LogSoftmax

class SoftmaxKernel final : public IKernel {
 public:
  SoftmaxKernel(CudaContext* ctx, std::string what, StoreType type, RowView view, RowLaunch launch, bool log)
      : ctx_(ctx), what_(std::move(what)), type_(type), view_(view), launch_(launch), log_(log) {}
  Status Run(KernelContext& ctx) override {
    return ctx_->AfterLaunch(
        LaunchSoftmax(In(ctx, 0), Ptr(ctx.device_output(0)), type_, view_, log_, launch_, ctx_->stream()), what_,
        "cuda:softmax");
  }
  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t output) const override { return output == 0; }

 private:
  CudaContext* ctx_;
  std::string what_;
  StoreType type_;
  RowView view_;
  RowLaunch launch_;
  bool log_;
};

// ---- Reduce*

Result<ReduceKind> ReduceKindOf(const std::string& op) {
  static const std::pair<const char*, ReduceKind> kKinds[] = {
      {"ReduceSum", ReduceKind::kSum},       {"ReduceMean", ReduceKind::kMean},
      {"ReduceMax", ReduceKind::kMax},       {"ReduceMin", ReduceKind::kMin},
      {"ReduceProd", ReduceKind::kProd},     {"ReduceL1", ReduceKind::kL1},
      {"ReduceL2", ReduceKind::kL2},         {"ReduceSumSquare", ReduceKind::kSumSquare},
      {"ReduceLogSum", ReduceKind::kLogSum}, {"ReduceLogSumExp", ReduceKind::kLogSumExp}};
  for (const auto& [name, kind] : kKinds) {
    if (op == name) return kind;
  }
  return Unsupported(op + " is not a reduction the CUDA device knows");
}

class ReduceKernel final : public IKernel {
 public:
  ReduceKernel(CudaContext* ctx, std::string what, StoreType type, ReduceKind kind, RowView view, RowLaunch launch)
      : ctx_(ctx), what_(std::move(what)), type_(type), kind_(kind), view_(view), launch_(launch) {}
  Status Run(KernelContext& ctx) override {
    return ctx_->AfterLaunch(
        LaunchReduce(In(ctx, 0), Ptr(ctx.device_output(0)), type_, kind_, view_, launch_, ctx_->stream()), what_,
        "cuda:reduce");
  }
  // The axes input was read at Init.
  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t output) const override { return output == 0; }

 private:
  CudaContext* ctx_;
  std::string what_;
  StoreType type_;
  ReduceKind kind_;
  RowView view_;
  RowLaunch launch_;
};

// ---- LayerNormalization / InstanceNormalization

// How many values a LayerNormalization parameter of `shape` holds along rows of X's dims from
// `axis`, when element j of a row takes value j % count: a single value, or X's trailing dims
// (leading 1s aside). Anything else varies across rows or within a dim and is refused.
Result<int64_t> RowParameterCount(const Shape& shape, const Shape& x, size_t axis, const char* name) {
  const int64_t count = NumElements(shape);
  if (count == 1) return count;
  if (shape.size() <= x.size()) {
    Shape padded(x.size() - shape.size(), 1);
    padded.insert(padded.end(), shape.begin(), shape.end());
    size_t first = 0;
    while (first < padded.size() && padded[first] == 1) ++first;
    bool suffix = first >= axis;
    for (size_t d = first; suffix && d < x.size(); ++d) suffix = padded[d] == x[d];
    if (suffix) return count;
  }
  return Unsupported(
      fmt::format("LayerNormalization {} of shape {} broadcasts to the normalised dims {} other than "
                  "over leading dims (the CUDA kernel repeats a parameter along the row)",
                  name, ShapeToString(shape), ShapeToString(Shape(x.begin() + axis, x.end()))));
}

class RowNormKernel final : public IKernel {
 public:
  RowNormKernel(CudaContext* ctx, std::string what, const char* kernel, StoreType type, NormParams params,
                bool has_bias)
      : ctx_(ctx), what_(std::move(what)), kernel_(kernel), type_(type), params_(params), has_bias_(has_bias) {
    const GpuShape& gpu = ctx->props().shape;
    block_ = RowBlock(params.n, gpu, params.n >= 4096 ? 512 : 256);
    grid_ = static_cast<uint32_t>(std::clamp<int64_t>(params.rows, 1, gpu.max_grid_x));
  }
  Status Run(KernelContext& ctx) override {
    const void* bias = has_bias_ ? In(ctx, 2) : nullptr;
    return ctx_->AfterLaunch(LaunchRowNorm(In(ctx, 0), In(ctx, 1), bias, Ptr(ctx.device_output(0)), type_, params_,
                                           grid_, block_, ctx_->stream()),
                             what_, kernel_);
  }
  bool InputOnDevice(size_t input) const override { return input < 2 || (input == 2 && has_bias_); }
  bool OutputOnDevice(size_t output) const override { return output == 0; }

 private:
  CudaContext* ctx_;
  std::string what_;
  const char* kernel_;
  StoreType type_;
  NormParams params_;
  bool has_bias_;
  uint32_t grid_ = 1, block_ = 32;
};

// ---- BatchNormalization

class BatchNormKernel final : public IKernel {
 public:
  BatchNormKernel(CudaContext* ctx, std::string what, StoreType type, BatchNormParams params)
      : ctx_(ctx), what_(std::move(what)), type_(type), params_(params) {
    const Launch1D l = GridStride(params.total, ctx->props().shape);
    grid_ = l.grid;
    block_ = l.block;
  }
  Status Run(KernelContext& ctx) override {
    return ctx_->AfterLaunch(LaunchBatchNorm(In(ctx, 0), In(ctx, 1), In(ctx, 2), In(ctx, 3), In(ctx, 4),
                                             Ptr(ctx.device_output(0)), type_, params_, grid_, block_, ctx_->stream()),
                             what_, "cuda:batch_norm");
  }
  bool InputOnDevice(size_t input) const override { return input < 5; }
  bool OutputOnDevice(size_t output) const override { return output == 0; }

 private:
  CudaContext* ctx_;
  std::string what_;
  StoreType type_;
  BatchNormParams params_;
  uint32_t grid_ = 1, block_ = 32;
};

// Per dim of X: whether it is reduced (axes as attribute, or a constant input from opset 18 /
// ReduceSum 13; none with noop_with_empty_axes).
Result<std::vector<bool>> ReducedDims(const Node& node, int64_t opset, const std::vector<const ValueInfo*>& inputs) {
  const size_t rank = inputs[0]->shape.size();
  const bool axes_input = opset >= (node.op_type == "ReduceSum" ? 13 : 18);
  std::vector<int64_t> axes;
  if (!axes_input) {
    axes = node.GetInts("axes");
  } else if (inputs.size() > 1 && inputs[1] != nullptr) {
    if (inputs[1]->value == nullptr) {
      return Unsupported("reduction axes computed at run time (the CUDA kernel is planned for constant axes)");
    }
    axes = inputs[1]->value->ToInt64Vector();
  }
  const bool noop = axes_input && node.GetInt("noop_with_empty_axes", 0) != 0;
  std::vector<bool> reduced(rank, axes.empty() && !noop);
  Result<std::vector<int64_t>> normalized = NormalizeAxes(axes, static_cast<int64_t>(rank), node);
  if (!normalized.ok()) return Unsupported(normalized.status().message());
  for (int64_t a : *normalized) reduced[static_cast<size_t>(a)] = true;
  return reduced;
}

}  // namespace

Result<std::unique_ptr<IKernel>> CreateSoftmax(const KernelInit& init) {
  ASSIGN_OR_RETURN(const Planned p, RequireFloatInputs(init, {0}));
  const Node& node = init.node;
  const Shape& x = init.inputs[0]->shape;
  const bool legacy = init.opset < 13;
  Result<int64_t> axis = NormalizeAxis(node.GetInt("axis", legacy ? 1 : -1), static_cast<int64_t>(x.size()), node);
  if (!axis.ok()) return Unsupported(axis.status().message());
  const RowView view = RowsAlong(x, static_cast<size_t>(*axis), legacy);
  return std::unique_ptr<IKernel>(new SoftmaxKernel(
      p.ctx, node.Describe(), p.type, view, PlanRowLaunch(view, p.ctx->props().shape), node.op_type == "LogSoftmax"));
}

Result<std::unique_ptr<IKernel>> CreateReduce(const KernelInit& init) {
  ASSIGN_OR_RETURN(const Planned p, RequireFloatInputs(init, {0}));
  const Node& node = init.node;
  ASSIGN_OR_RETURN(const ReduceKind kind, ReduceKindOf(node.op_type));
  ASSIGN_OR_RETURN(const std::vector<bool> reduced, ReducedDims(node, init.opset, init.inputs));
  const Shape& x = init.inputs[0]->shape;
  const std::optional<RowView> view = CollapseReduction(x, reduced);
  if (!view) {
    std::string axes;
    for (size_t d = 0; d < reduced.size(); ++d) {
      if (reduced[d]) axes += (axes.empty() ? "" : ",") + std::to_string(d);
    }
    return Unsupported(
        fmt::format("reducing axes {} of {} leaves kept dims between reduced ones (the CUDA kernel "
                    "reduces one run of adjacent axes)",
                    axes, ShapeToString(x)));
  }
  return std::unique_ptr<IKernel>(
      new ReduceKernel(p.ctx, node.Describe(), p.type, kind, *view, PlanRowLaunch(*view, p.ctx->props().shape)));
}

Result<std::unique_ptr<IKernel>> CreateLayerNorm(const KernelInit& init) {
  const bool has_bias = init.inputs.size() > 2 && init.inputs[2] != nullptr;
  ASSIGN_OR_RETURN(const Planned p, has_bias ? RequireFloatInputs(init, {0, 1, 2}) : RequireFloatInputs(init, {0, 1}));
  const Node& node = init.node;
  if (PresentOutputs(node) > 1) {
    return Unsupported("LayerNormalization's Mean and InvStdDev outputs are not computed on CUDA");
  }
  const Shape& x = init.inputs[0]->shape;
  Result<int64_t> axis = NormalizeAxis(node.GetInt("axis", -1), static_cast<int64_t>(x.size()), node);
  if (!axis.ok()) return Unsupported(axis.status().message());
  const auto a = static_cast<size_t>(*axis);
  const RowView view = RowsAlong(x, a, true);
  NormParams params;
  params.rows = view.outer;
  params.n = view.n;
  params.epsilon = node.GetFloat("epsilon", 1e-5f);
  ASSIGN_OR_RETURN(params.scale_n, RowParameterCount(init.inputs[1]->shape, x, a, "scale"));
  if (has_bias) {
    ASSIGN_OR_RETURN(params.bias_n, RowParameterCount(init.inputs[2]->shape, x, a, "bias"));
  }
  return std::unique_ptr<IKernel>(
      new RowNormKernel(p.ctx, node.Describe(), "cuda:layer_norm", p.type, params, has_bias));
}

Result<std::unique_ptr<IKernel>> CreateInstanceNorm(const KernelInit& init) {
  ASSIGN_OR_RETURN(const Planned p, RequireFloatInputs(init, {0, 1, 2}));
  const Node& node = init.node;
  const Shape& x = init.inputs[0]->shape;
  if (x.size() < 3) return Unsupported(fmt::format("InstanceNormalization of a rank {} tensor", x.size()));
  for (size_t i = 1; i < 3; ++i) {
    if (NumElements(init.inputs[i]->shape) != x[1]) {
      return Unsupported(fmt::format("InstanceNormalization input {} of shape {} does not hold {} values", i,
                                     ShapeToString(init.inputs[i]->shape), x[1]));
    }
  }
  const RowView view = RowsAlong(x, 2, true);
  NormParams params;
  params.rows = view.outer;
  params.n = view.n;
  params.channels = std::max<int64_t>(1, x[1]);
  params.per_channel = true;
  params.epsilon = node.GetFloat("epsilon", 1e-5f);
  return std::unique_ptr<IKernel>(
      new RowNormKernel(p.ctx, node.Describe(), "cuda:instance_norm", p.type, params, true));
}

Result<std::unique_ptr<IKernel>> CreateBatchNorm(const KernelInit& init) {
  ASSIGN_OR_RETURN(const Planned p, RequireFloatInputs(init, {0, 1, 2, 3, 4}));
  const Node& node = init.node;
  if (node.GetInt("training_mode", 0) != 0 || PresentOutputs(node) > 1) {
    return Unsupported("BatchNormalization in training mode (CUDA runs inference: one output Y)");
  }
  const Shape& x = init.inputs[0]->shape;
  if (x.size() < 2) return Unsupported(fmt::format("BatchNormalization of a rank {} tensor", x.size()));
  // Before opset 9, spatial = 0 keeps statistics per activation (C × D1 × …) rather than per channel.
  const bool per_activation = init.opset < 9 && node.GetInt("spatial", 1) == 0;
  BatchNormParams params;
  params.total = NumElements(x);
  params.plane = per_activation ? 1 : RowsAlong(x, 1, false).inner;
  params.channels = per_activation ? RowsAlong(x, 1, true).n : x[1];
  params.epsilon = node.GetFloat("epsilon", 1e-5f);
  for (size_t i = 1; i < 5; ++i) {
    if (NumElements(init.inputs[i]->shape) != params.channels) {
      return Unsupported(fmt::format("BatchNormalization input {} of shape {} does not hold {} values", i,
                                     ShapeToString(init.inputs[i]->shape), params.channels));
    }
  }
  params.plane = std::max<int64_t>(1, params.plane);
  params.channels = std::max<int64_t>(1, params.channels);
  return std::unique_ptr<IKernel>(new BatchNormKernel(p.ctx, node.Describe(), p.type, params));
}

}  // namespace chipfit::cuda
