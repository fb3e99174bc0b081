// Reduce* (Sum, Mean, Max, Min, Prod, L1, L2, SumSquare) in fp32: oneDNN reduction where it has a
// jit kernel (reduced dims innermost), else an own loop over the outer × reduced × inner view (or,
// for reduced axes that are not adjacent, an odometer per output value). Axes computed at run time
// and dims known only then are planned when the node runs. Sum, Min, Max and Prod of int64 and int32
// in an own pass.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "core/reference/ref_util.h"
#include "devices/cpu/onednn_util.h"
#include "devices/cpu/ops/cpu_ops.h"

namespace chipfit::cpu {
namespace {

using dnnl::algorithm;
using dnnl::memory;

enum class RedOp { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare };

Result<RedOp> ReadRedOp(const std::string& op) {
  if (op == "ReduceSum") return RedOp::kSum;
  if (op == "ReduceMean") return RedOp::kMean;
  if (op == "ReduceMax") return RedOp::kMax;
  if (op == "ReduceMin") return RedOp::kMin;
  if (op == "ReduceProd") return RedOp::kProd;
  if (op == "ReduceL1") return RedOp::kL1;
  if (op == "ReduceL2") return RedOp::kL2;
  if (op == "ReduceSumSquare") return RedOp::kSumSquare;
  return Unsupported(op + " is not a reduction the CPU device knows");
}

// The reduction in memory order: dims of 1 dropped, adjacent dims with the same reduced flag merged.
struct ReducePlan {
  RedOp op = RedOp::kSum;
  Layout layout = Layout::kPlain;      // the order the input is read in
  Layout out_layout = Layout::kPlain;  // the input's order for a rank-4 output, else plain
  std::vector<int64_t> dims;
  std::vector<bool> reduced;
  int64_t outer = 1, red = 1, inner = 1;  // when at most one run of dims is reduced
  bool one_block = true;
};

// The plain order and the nhwc order list the kept dims of the output alike (so an output of lower
// rank is plain either way).
bool KeptOrderAgrees(const Shape& x, const std::vector<bool>& reduced) {
  std::vector<size_t> plain, nhwc;
  for (size_t d : {0, 1, 2, 3}) {
    if (!reduced[d] && x[d] != 1) plain.push_back(d);
  }
  for (size_t d : {0, 2, 3, 1}) {
    if (!reduced[d] && x[d] != 1) nhwc.push_back(d);
  }
  return plain == nhwc;
}

// Which of the input's `rank` dims the node reduces: axes from the attribute (before opset 18, 13
// for ReduceSum) or the constant input, none with noop_with_empty_axes, all when absent.
Result<std::vector<bool>> ReducedDims(const KernelInit& init, RedOp op, size_t rank) {
  const Node& node = init.node;
  const bool axes_input = init.opset >= (op == RedOp::kSum ? 13 : 18);
  std::vector<int64_t> axes;
  if (!axes_input) {
    axes = node.GetInts("axes");
  } else if (init.inputs.size() > 1 && init.inputs[1] != nullptr) {
    if (init.inputs[1]->value == nullptr) return Unsupported("reduction axes computed at run time");
    axes = init.inputs[1]->value->ToInt64Vector();
  }
  const bool noop = axes_input && node.GetInt("noop_with_empty_axes", 0) != 0 && axes.empty();
  std::vector<bool> reduced(rank, axes.empty() && !noop);
  Result<std::vector<int64_t>> normalized = NormalizeAxes(axes, static_cast<int64_t>(rank), node);
  if (!normalized.ok()) return Unsupported(normalized.status().message());
  for (int64_t a : *normalized) reduced[static_cast<size_t>(a)] = true;
  return reduced;
}

Result<ReducePlan> PlanReduce(const KernelInit& init) {
  const Node& node = init.node;
  RETURN_IF_ERROR(RequireStaticF32(init, {0}));
  ReducePlan plan;
  ASSIGN_OR_RETURN(plan.op, ReadRedOp(node.op_type));
  const Shape& x = init.inputs[0]->shape;
  ASSIGN_OR_RETURN(const std::vector<bool> reduced, ReducedDims(init, plan.op, x.size()));

  std::vector<size_t> perm(x.size());
  for (size_t d = 0; d < x.size(); ++d) perm[d] = d;
  const bool keepdims = node.GetInt("keepdims", 1) != 0;
  if (x.size() == 4 && init.inputs[0]->layout == Layout::kChannelsLast && !LayoutsAgree(x) &&
      (keepdims || KeptOrderAgrees(x, reduced))) {
    plan.layout = Layout::kChannelsLast;
    perm = {0, 2, 3, 1};
    const auto kept = std::count(reduced.begin(), reduced.end(), false);
    plan.out_layout = keepdims || kept == 4 ? Layout::kChannelsLast : Layout::kPlain;
  }
  for (size_t d : perm) {
    if (x[d] == 1) continue;
    if (!plan.dims.empty() && plan.reduced.back() == reduced[d]) {
      plan.dims.back() *= x[d];
    } else {
      plan.dims.push_back(x[d]);
      plan.reduced.push_back(reduced[d]);
    }
  }
  const auto blocks = std::count(plan.reduced.begin(), plan.reduced.end(), true);
  plan.one_block = blocks <= 1;
  bool after = false;
  for (size_t k = 0; k < plan.dims.size(); ++k) {
    if (plan.reduced[k]) {
      plan.red = plan.dims[k];
      after = true;
    } else {
      (after ? plan.inner : plan.outer) *= plan.dims[k];
    }
  }
  if (blocks == 0) {
    plan.outer = NumElements(x);
    plan.inner = 1;
  }
  return plan;
}

// ---- own loop -----------------------------------------------------------------------------------

template <RedOp K>
float Init() {
  if constexpr (K == RedOp::kMax) return -INFINITY;
  if constexpr (K == RedOp::kMin) return INFINITY;
  if constexpr (K == RedOp::kProd) return 1.0f;
  return 0.0f;
}

template <RedOp K>
float Combine(float acc, float v) {
  if constexpr (K == RedOp::kMax) return std::isnan(v) || v > acc ? v : acc;  // NaN wins, as numpy
  if constexpr (K == RedOp::kMin) return std::isnan(v) || v < acc ? v : acc;
  if constexpr (K == RedOp::kProd) return acc * v;
  if constexpr (K == RedOp::kL1) return acc + std::fabs(v);
  if constexpr (K == RedOp::kL2 || K == RedOp::kSumSquare) return acc + v * v;
  return acc + v;
}

template <RedOp K>
float Finish(float acc, int64_t count) {
  if constexpr (K == RedOp::kMean) return acc / static_cast<float>(count);
  if constexpr (K == RedOp::kL2) return std::sqrt(acc);
  return acc;
}

constexpr int64_t kParallelFrom = 32768;

template <RedOp K>
void ReduceLoop(const ReducePlan& p, const float* x, float* y) {
  const int64_t outer = p.outer, red = p.red, inner = p.inner;
  const bool parallel = outer * red * inner >= kParallelFrom;
  if (inner == 1) {
    // Contiguous rows: the sums vectorise (8 partial sums, which also helps accuracy).
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t o = 0; o < outer; ++o) {
      const float* row = x + o * red;
      float acc = Init<K>();
      if constexpr (K == RedOp::kMax || K == RedOp::kMin || K == RedOp::kProd) {
        for (int64_t r = 0; r < red; ++r) acc = Combine<K>(acc, row[r]);
      } else {
#pragma omp simd reduction(+ : acc)
        for (int64_t r = 0; r < red; ++r) acc = Combine<K>(acc, row[r]);
      }
      y[o] = Finish<K>(acc, red);
    }
    return;
  }
  // Strided: blocks of the inner dim accumulate over the reduced rows, reading them contiguously.
  constexpr int64_t kBlock = 64;
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
#pragma omp parallel for collapse(2) schedule(static) if (parallel)
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t begin = b * kBlock, len = std::min(kBlock, inner - begin);
      float acc[kBlock];
      for (int64_t i = 0; i < len; ++i) acc[i] = Init<K>();
      for (int64_t r = 0; r < red; ++r) {
        const float* row = x + (o * red + r) * inner + begin;
        for (int64_t i = 0; i < len; ++i) acc[i] = Combine<K>(acc[i], row[i]);
      }
      float* out = y + o * inner + begin;
      for (int64_t i = 0; i < len; ++i) out[i] = Finish<K>(acc[i], red);
    }
  }
}

// Reduced blocks that are not adjacent (axes 0 and 2 of a 3-D tensor …): each output value walks
// its reduced coordinates with an odometer over the input's strides.
template <RedOp K>
void GeneralReduceLoop(const ReducePlan& p, const float* x, float* y) {
  std::vector<int64_t> kept_dims, kept_strides, red_dims, red_strides;
  int64_t stride = 1;
  for (size_t k = p.dims.size(); k-- > 0;) {
    auto& dims = p.reduced[k] ? red_dims : kept_dims;
    auto& strides = p.reduced[k] ? red_strides : kept_strides;
    dims.insert(dims.begin(), p.dims[k]);
    strides.insert(strides.begin(), stride);
    stride *= p.dims[k];
  }
  int64_t outputs = 1, red = 1;
  for (int64_t d : kept_dims) outputs *= d;
  for (int64_t d : red_dims) red *= d;
#pragma omp parallel for schedule(static) if (outputs * red >= kParallelFrom)
  for (int64_t o = 0; o < outputs; ++o) {
    int64_t base = 0;
    for (int64_t rest = o, d = static_cast<int64_t>(kept_dims.size()) - 1; d >= 0; --d) {
      const auto du = static_cast<size_t>(d);
      base += rest % kept_dims[du] * kept_strides[du];
      rest /= kept_dims[du];
    }
    std::vector<int64_t> coord(red_dims.size(), 0);
    int64_t offset = 0;
    float acc = Init<K>();
    for (int64_t r = 0; r < red; ++r) {
      acc = Combine<K>(acc, x[base + offset]);
      for (size_t d = red_dims.size(); d-- > 0;) {
        offset += red_strides[d];
        if (++coord[d] < red_dims[d]) break;
        offset -= coord[d] * red_strides[d];
        coord[d] = 0;
      }
    }
    y[o] = Finish<K>(acc, red);
  }
}

template <RedOp K>
void Reduce(const ReducePlan& p, const float* x, float* y) {
  if (p.one_block) {
    ReduceLoop<K>(p, x, y);
  } else {
    GeneralReduceLoop<K>(p, x, y);
  }
}

// Planned at compile time, or when the node runs where the axes are an input computed at run time
// or the input's dims are only known then.
class OwnReduceKernel final : public IKernel {
 public:
  explicit OwnReduceKernel(ReducePlan plan, bool plan_at_run = false)
      : plan_(std::move(plan)), plan_at_run_(plan_at_run) {}

  Status Run(KernelContext& ctx) override {
    const Tensor& input = *ctx.input(0);
    Tensor& output = *ctx.output(0);
    ReducePlan made;
    const ReducePlan* plan = &plan_;
    if (plan_at_run_) {
      if (input.numel() == 0) {
        // Reducing nothing gives the reduction's identity (the mean of nothing is NaN).
        std::fill(output.data<float>(), output.data<float>() + output.numel(), EmptyValue());
        return Status();
      }
      std::vector<const Tensor*> inputs;
      for (size_t k = 0; k < ctx.num_inputs(); ++k) inputs.push_back(ctx.input(k));
      const TensorInfos infos(inputs);
      Result<ReducePlan> planned = PlanReduce(KernelInit{ctx.node(), infos.pointers(), ctx.opset()});
      if (!planned.ok()) return ctx.Error(planned.status().message());
      made = std::move(planned).value();
      plan = &made;
    }
    const float* x = input.data<float>();
    float* y = output.data<float>();
    switch (plan->op) {
      case RedOp::kSum: Reduce<RedOp::kSum>(*plan, x, y); break;
      case RedOp::kMean: Reduce<RedOp::kMean>(*plan, x, y); break;
      case RedOp::kMax: Reduce<RedOp::kMax>(*plan, x, y); break;
      case RedOp::kMin: Reduce<RedOp::kMin>(*plan, x, y); break;
      case RedOp::kProd: Reduce<RedOp::kProd>(*plan, x, y); break;
      case RedOp::kL1: Reduce<RedOp::kL1>(*plan, x, y); break;
      case RedOp::kL2: Reduce<RedOp::kL2>(*plan, x, y); break;
      case RedOp::kSumSquare: Reduce<RedOp::kSumSquare>(*plan, x, y); break;
    }
    return Status();
  }
  Layout InputLayout(size_t i) const override { return i == 0 ? plan_.layout : Layout::kPlain; }
  Layout OutputLayout(size_t) const override { return plan_.out_layout; }

 private:
  float EmptyValue() const {
    switch (plan_.op) {
      case RedOp::kMax: return -INFINITY;
      case RedOp::kMin: return INFINITY;
      case RedOp::kProd: return 1.0f;
      case RedOp::kMean: return NAN;
      default: return 0.0f;
    }
  }

  ReducePlan plan_;
  bool plan_at_run_;
};

// ---- oneDNN -------------------------------------------------------------------------------------

memory::desc RowMajor(const std::vector<int64_t>& dims) {
  memory::dims strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * dims[i];
  return {dims, memory::data_type::f32, strides};
}

class OnednnReduceKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, ReducePlan plan) {
    if (std::none_of(plan.reduced.begin(), plan.reduced.end(), [](bool r) { return r; })) {
      return Unsupported("nothing to reduce (every reduced axis has size 1)");
    }
    std::vector<int64_t> dst = plan.dims;
    for (size_t k = 0; k < dst.size(); ++k) dst[k] = plan.reduced[k] ? 1 : dst[k];
    algorithm alg = algorithm::reduction_sum;
    float p = 1.0f;
    switch (plan.op) {
      case RedOp::kSum: alg = algorithm::reduction_sum; break;
      case RedOp::kMean: alg = algorithm::reduction_mean; break;
      case RedOp::kMax: alg = algorithm::reduction_max; break;
      case RedOp::kMin: alg = algorithm::reduction_min; break;
      case RedOp::kProd: alg = algorithm::reduction_mul; break;
      case RedOp::kL1: alg = algorithm::reduction_norm_lp_sum; break;
      case RedOp::kL2:
        alg = algorithm::reduction_norm_lp_sum;
        p = 2.0f;
        break;
      case RedOp::kSumSquare:
        alg = algorithm::reduction_norm_lp_power_p_sum;
        p = 2.0f;
        break;
    }
    const memory::desc src_md = RowMajor(plan.dims), dst_md = RowMajor(dst);
    dnnl::reduction::primitive_desc pd;
    RETURN_IF_ERROR(Guard(init.node, "reduction", [&] {
      pd = dnnl::reduction::primitive_desc(dnnl::reduction::desc(alg, src_md, dst_md, p, 0.0f), Engine());
    }));
    if (IsReferenceImpl(pd.impl_info_str())) {
      return Unsupported("only oneDNN's reference reduction for this op and these axes");
    }
    auto kernel = std::unique_ptr<OnednnReduceKernel>(new OnednnReduceKernel());
    kernel->layout_ = plan.layout;
    kernel->out_layout_ = plan.out_layout;
    kernel->call_ = PrimitiveCall::SrcDst(dnnl::reduction(pd), src_md, dst_md);
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    call_.Run(ctx.input(0)->raw_data(), ctx.output(0)->raw_data());
    return Status();
  }
  Layout InputLayout(size_t i) const override { return i == 0 ? layout_ : Layout::kPlain; }
  Layout OutputLayout(size_t) const override { return out_layout_; }

 private:
  OnednnReduceKernel() = default;

 public:
  std::string Isa() const override { return call_.Impl(); }

 private:
  PrimitiveCall call_;
  Layout layout_ = Layout::kPlain;
  Layout out_layout_ = Layout::kPlain;
};

// Below this many input values the own loop beats a oneDNN call: ~1.3 µs for a oneDNN reduction at
// any small size on this 2-core VM (OpenMP fork/join) against 0.4 µs + 0.2 ns per value for the own
// row sums (ReduceMean of 4096 values: 1.1 vs 1.6 µs; of 16384: 3.7 vs 2.4 µs).
constexpr int64_t kSmall = 4096;

enum class Use { kSmall, kOnednn, kAny };

// The input's dims or the axes known only at run time: the own loop plans when the node runs.
bool PlansAtRun(const KernelInit& init) {
  const ValueInfo* x = init.inputs.empty() ? nullptr : init.inputs[0];
  if (x == nullptr || x->dtype != DType::kF32) return false;
  const bool axes_at_run = init.inputs.size() > 1 && init.inputs[1] != nullptr && init.inputs[1]->value == nullptr;
  return axes_at_run || std::any_of(x->shape.begin(), x->shape.end(), [](int64_t d) { return d <= 0; });
}

Result<std::unique_ptr<IKernel>> CreateReduce(const KernelInit& init, Use use) {
  if (use == Use::kAny && PlansAtRun(init)) {
    ASSIGN_OR_RETURN(RedOp op, ReadRedOp(init.node.op_type));
    ReducePlan plan;
    plan.op = op;
    return std::unique_ptr<IKernel>(std::make_unique<OwnReduceKernel>(std::move(plan), true));
  }
  ASSIGN_OR_RETURN(ReducePlan plan, PlanReduce(init));
  if (use == Use::kOnednn) return OnednnReduceKernel::Create(init, std::move(plan));
  const int64_t n = NumElements(init.inputs[0]->shape);
  if (use == Use::kSmall && n > kSmall) {
    return Unsupported(std::to_string(n) + " values: a oneDNN call is faster above " + std::to_string(kSmall));
  }
  if (use == Use::kSmall && !plan.one_block) return Unsupported("the reduced axes are not adjacent in memory");
  return std::unique_ptr<IKernel>(std::make_unique<OwnReduceKernel>(std::move(plan)));
}

// ReduceSum / Min / Max / Prod of int64 and int32 tensors (shape arithmetic in detectors: the
// smallest image side, the product of dims): one pass in memory order, each value combined into
// its output element; sums and products wrap on overflow (two's complement, as ONNX Runtime's).
class IntReduceKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init) {
    const Node& node = init.node;
    const ValueInfo* x = init.inputs.empty() ? nullptr : init.inputs[0];
    if (x == nullptr || (x->dtype != DType::kI64 && x->dtype != DType::kI32)) {
      return Unsupported(x == nullptr ? "input 0 is missing" : std::string(DTypeName(x->dtype)) + " input");
    }
    ASSIGN_OR_RETURN(const RedOp op, ReadRedOp(node.op_type));
    if (op != RedOp::kSum && op != RedOp::kMin && op != RedOp::kMax && op != RedOp::kProd) {
      return Unsupported(node.op_type + " of integers");
    }
    for (int64_t d : x->shape) {
      if (d < 0) return Unsupported("shapes known only at run time");
    }
    ASSIGN_OR_RETURN(const std::vector<bool> reduced, ReducedDims(init, op, x->shape.size()));
    auto kernel = std::unique_ptr<IntReduceKernel>(new IntReduceKernel());
    kernel->op_ = op;
    kernel->i64_ = x->dtype == DType::kI64;
    // Output strides per input dim (0 along reduced dims), and whether any reduced dim is empty.
    kernel->dims_ = x->shape;
    kernel->out_strides_.assign(x->shape.size(), 0);
    int64_t stride = 1;
    for (size_t d = x->shape.size(); d-- > 0;) {
      if (reduced[d]) {
        if (x->shape[d] == 0) return Unsupported("an empty reduction");
        continue;
      }
      kernel->out_strides_[d] = stride;
      stride *= x->shape[d];
    }
    kernel->out_elements_ = stride;
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    if (i64_) return Reduce<int64_t>(*ctx.input(0), *ctx.output(0));
    return Reduce<int32_t>(*ctx.input(0), *ctx.output(0));
  }

 private:
  IntReduceKernel() = default;

  template <typename T>
  Status Reduce(const Tensor& x, Tensor& y) const {
    using U = std::make_unsigned_t<T>;
    if (y.numel() != out_elements_) return InvalidArgument("reduction output of " + std::to_string(y.numel()));
    T* out = y.data<T>();
    std::vector<bool> seen(static_cast<size_t>(out_elements_), false);
    const T* in = x.data<T>();
    std::vector<int64_t> index(dims_.size(), 0);
    int64_t at = 0;  // the output element of the current input index
    for (int64_t i = 0; i < x.numel(); ++i) {
      const T v = in[i];
      T& o = out[at];
      if (!seen[static_cast<size_t>(at)]) {
        o = v;
        seen[static_cast<size_t>(at)] = true;
      } else if (op_ == RedOp::kSum) {
        o = static_cast<T>(static_cast<U>(o) + static_cast<U>(v));
      } else if (op_ == RedOp::kProd) {
        o = static_cast<T>(static_cast<U>(o) * static_cast<U>(v));
      } else if (op_ == RedOp::kMin) {
        o = std::min(o, v);
      } else {
        o = std::max(o, v);
      }
      // Odometer over the input's dims, moving `at` along the output.
      for (size_t d = dims_.size(); d-- > 0;) {
        at += out_strides_[d];
        if (++index[d] < dims_[d]) break;
        at -= out_strides_[d] * dims_[d];
        index[d] = 0;
      }
    }
    return Status();
  }

  RedOp op_ = RedOp::kSum;
  bool i64_ = true;
  Shape dims_;
  std::vector<int64_t> out_strides_;
  int64_t out_elements_ = 1;
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateReduceInt(const KernelInit& init) { return IntReduceKernel::Create(init); }

Result<std::unique_ptr<IKernel>> CreateReduceSmallF32(const KernelInit& init) {
  return CreateReduce(init, Use::kSmall);
}
Result<std::unique_ptr<IKernel>> CreateReduceF32(const KernelInit& init) { return CreateReduce(init, Use::kOnednn); }
Result<std::unique_ptr<IKernel>> CreateReduceOwnF32(const KernelInit& init) { return CreateReduce(init, Use::kAny); }

}  // namespace chipfit::cpu
