// Broadcasting binary ops (Add, Sub, Mul, Div, Max, Min, Sum of two, Pow) in fp32: oneDNN binary,
// oneDNN eltwise pow for a constant scalar exponent, and an own strided loop for tiny tensors and
// for what oneDNN cannot broadcast.
#include <array>
#include <cmath>
#include <functional>

#include "core/reference/ref_util.h"
#include "devices/cpu/onednn_util.h"
#include "devices/cpu/ops/cpu_ops.h"
#include "devices/cpu/ops/parallel_chunks.h"

namespace chipfit::cpu {
namespace {

using dnnl::algorithm;
using dnnl::memory;

enum class BinOp { kAdd, kSub, kMul, kDiv, kMax, kMin, kPow };

Result<BinOp> ReadOp(const KernelInit& init) {
  const std::string& op = init.node.op_type;
  if (op == "Max" || op == "Min" || op == "Sum") {
    size_t present = 0;
    for (const ValueInfo* in : init.inputs) present += in != nullptr;
    if (present != 2) return Unsupported(op + " of " + std::to_string(present) + " inputs (the CPU kernel takes 2)");
    if (op == "Sum") return BinOp::kAdd;
    return op == "Max" ? BinOp::kMax : BinOp::kMin;
  }
  if (op == "Add") return BinOp::kAdd;
  if (op == "Sub") return BinOp::kSub;
  if (op == "Mul") return BinOp::kMul;
  if (op == "Div") return BinOp::kDiv;
  if (op == "Pow") return BinOp::kPow;
  return Unsupported(op + " is not a binary op the CPU device knows");
}

bool Commutes(BinOp op) { return op == BinOp::kAdd || op == BinOp::kMul || op == BinOp::kMax || op == BinOp::kMin; }

// How the output and both inputs are walked: dims of the output in memory order, with adjacent dims
// merged where both inputs broadcast alike and dims of 1 dropped, and per input the element stride
// along each of those dims (0 where it broadcasts).
struct BroadcastPlan {
  Layout order = Layout::kPlain;  // the order of rank-4 inputs and of a rank-4 output
  std::vector<int64_t> dims;
  std::array<std::vector<int64_t>, 2> strides;
  std::array<Layout, 2> in_layout = {Layout::kPlain, Layout::kPlain};
};

Result<BroadcastPlan> PlanBroadcast(const Shape& a, const Shape& b, const Shape& out, Layout order) {
  const size_t rank = out.size();
  BroadcastPlan plan;
  plan.order = order;
  std::array<Shape, 2> padded = {Shape(rank - a.size(), 1), Shape(rank - b.size(), 1)};
  padded[0].insert(padded[0].end(), a.begin(), a.end());
  padded[1].insert(padded[1].end(), b.begin(), b.end());
  std::vector<size_t> perm(rank);
  for (size_t d = 0; d < rank; ++d) perm[d] = d;
  if (order == Layout::kChannelsLast) {
    perm = {0, 2, 3, 1};
    for (size_t i = 0; i < 2; ++i) {
      const size_t in_rank = i == 0 ? a.size() : b.size();
      if (in_rank == 4) {
        plan.in_layout[i] = Layout::kChannelsLast;
      } else if (!LayoutsAgree(padded[i])) {
        // A rank < 4 tensor is always plain; here its bytes differ from an nhwc view.
        return Unsupported("input " + std::to_string(i) + " " + ShapeToString(i == 0 ? a : b) +
                           " cannot be read in nhwc order");
      }
    }
  }
  std::vector<std::pair<bool, bool>> full;  // per merged dim: input 0 / input 1 spans it
  for (size_t k = 0; k < rank; ++k) {
    const size_t d = perm[k];
    if (out[d] == 1) continue;
    const std::pair<bool, bool> f = {padded[0][d] == out[d], padded[1][d] == out[d]};
    if (!full.empty() && full.back() == f) {
      plan.dims.back() *= out[d];
    } else {
      full.push_back(f);
      plan.dims.push_back(out[d]);
    }
  }
  if (plan.dims.empty()) {
    plan.dims = {1};
    full = {{true, true}};
  }
  for (size_t i = 0; i < 2; ++i) {
    plan.strides[i].assign(plan.dims.size(), 0);
    int64_t running = 1;
    for (size_t k = plan.dims.size(); k-- > 0;) {
      const bool spans = i == 0 ? full[k].first : full[k].second;
      if (!spans) continue;
      plan.strides[i][k] = running;
      running *= plan.dims[k];
    }
  }
  return plan;
}

// The orders worth trying for the output: the order of a full-shape input that a kernel writes
// (a constant one was reordered at compile time anyway), then the other one.
std::vector<Layout> CandidateOrders(const KernelInit& init, const Shape& out) {
  if (out.size() != 4 || LayoutsAgree(out)) return {Layout::kPlain};
  Layout first = Layout::kPlain;
  bool chosen = false;
  for (bool want_computed : {true, false}) {
    for (size_t i = 0; i < 2 && !chosen; ++i) {
      const ValueInfo& in = *init.inputs[i];
      if (in.shape == out && (in.value == nullptr) == want_computed) {
        first = in.layout;
        chosen = true;
      }
    }
  }
  // The broadcast plans walk plain or channels-last memory: a blocked (nChw8c) input is reordered.
  if (first == Layout::kBlocked8) first = Layout::kChannelsLast;
  const Layout second = first == Layout::kPlain ? Layout::kChannelsLast : Layout::kPlain;
  return {first, second};
}

struct Operands {
  BinOp op;
  Shape a, b, out;
};

Result<Operands> ReadOperands(const KernelInit& init) {
  ASSIGN_OR_RETURN(BinOp op, ReadOp(init));
  RETURN_IF_ERROR(RequireStaticF32(init, {0, 1}));
  const Shape& a = init.inputs[0]->shape;
  const Shape& b = init.inputs[1]->shape;
  if (init.opset < 7 && a != b) return Unsupported("broadcasting before opset 7 (axis/broadcast attributes)");
  Result<Shape> out = BroadcastShapes(a, b);
  if (!out.ok()) return Unsupported(out.status().message());
  return Operands{op, a, b, *out};
}

// Max/Min: NaN wins, as in the reference (numpy.maximum/minimum).
float Max(float x, float y) { return std::isnan(x) || x >= y ? x : y; }
float Min(float x, float y) { return std::isnan(x) || x <= y ? x : y; }

// y = f(a, b) over the plan's dims; rows of the innermost dim go to OpenMP threads when large.
template <typename F>
void BroadcastLoop(const BroadcastPlan& p, const float* a, const float* b, float* y, F f) {
  constexpr int64_t kParallelFrom = 32768;
  const size_t k = p.dims.size();
  const int64_t inner = p.dims[k - 1];
  const int64_t sa = p.strides[0][k - 1], sb = p.strides[1][k - 1];
  int64_t outer = 1;
  for (size_t d = 0; d + 1 < k; ++d) outer *= p.dims[d];
#pragma omp parallel for schedule(static) if (outer * inner >= kParallelFrom)
  for (int64_t o = 0; o < outer; ++o) {
    int64_t rest = o, oa = 0, ob = 0;
    for (size_t d = k - 1; d-- > 0;) {
      const int64_t c = rest % p.dims[d];
      rest /= p.dims[d];
      oa += c * p.strides[0][d];
      ob += c * p.strides[1][d];
    }
    const float* ra = a + oa;
    const float* rb = b + ob;
    float* ry = y + o * inner;
    if (sa != 0 && sb != 0) {
#pragma omp simd
      for (int64_t i = 0; i < inner; ++i) ry[i] = f(ra[i], rb[i]);
    } else if (sa != 0) {
      const float vb = rb[0];
#pragma omp simd
      for (int64_t i = 0; i < inner; ++i) ry[i] = f(ra[i], vb);
    } else if (sb != 0) {
      const float va = ra[0];
#pragma omp simd
      for (int64_t i = 0; i < inner; ++i) ry[i] = f(va, rb[i]);
    } else {
      const float v = f(ra[0], rb[0]);
      for (int64_t i = 0; i < inner; ++i) ry[i] = v;
    }
  }
}

class OwnBinaryKernel final : public IKernel {
 public:
  OwnBinaryKernel(BinOp op, BroadcastPlan plan) : op_(op), plan_(std::move(plan)) {}

  Status Run(KernelContext& ctx) override {
    const float* a = ctx.input(0)->data<float>();
    const float* b = ctx.input(1)->data<float>();
    float* y = ctx.output(0)->data<float>();
    switch (op_) {
      case BinOp::kAdd: BroadcastLoop(plan_, a, b, y, std::plus<float>()); break;
      case BinOp::kSub: BroadcastLoop(plan_, a, b, y, std::minus<float>()); break;
      case BinOp::kMul: BroadcastLoop(plan_, a, b, y, std::multiplies<float>()); break;
      case BinOp::kDiv: BroadcastLoop(plan_, a, b, y, std::divides<float>()); break;
      case BinOp::kMax: BroadcastLoop(plan_, a, b, y, Max); break;
      case BinOp::kMin: BroadcastLoop(plan_, a, b, y, Min); break;
      case BinOp::kPow: BroadcastLoop(plan_, a, b, y, [](float x, float e) { return std::pow(x, e); }); break;
    }
    return Status();
  }
  Layout InputLayout(size_t i) const override { return i < 2 ? plan_.in_layout[i] : Layout::kPlain; }
  Layout OutputLayout(size_t) const override { return plan_.order; }

 private:
  BinOp op_;
  BroadcastPlan plan_;
};

memory::desc RowMajor(const std::vector<int64_t>& dims) {
  memory::dims strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * dims[i];
  return {dims, memory::data_type::f32, strides};
}

class OnednnBinaryKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, const Operands& ops) {
    algorithm alg = algorithm::binary_add;
    switch (ops.op) {
      case BinOp::kAdd: alg = algorithm::binary_add; break;
      case BinOp::kSub: alg = algorithm::binary_sub; break;
      case BinOp::kMul: alg = algorithm::binary_mul; break;
      case BinOp::kDiv: alg = algorithm::binary_div; break;
      case BinOp::kMax: alg = algorithm::binary_max; break;
      case BinOp::kMin: alg = algorithm::binary_min; break;
      case BinOp::kPow: return Unsupported("Pow with a tensor exponent has no oneDNN primitive");
    }
    // oneDNN broadcasts only its second source: the full-shape input goes first.
    const bool a_full = ops.a == ops.out, b_full = ops.b == ops.out;
    if (!a_full && !b_full) {
      return Unsupported("both inputs broadcast (" + ShapeToString(ops.a) + " and " + ShapeToString(ops.b) + ")");
    }
    const bool swap = !a_full;
    bool negate = false;
    if (swap && !Commutes(ops.op)) {
      // a − b = −(b − a) exactly (round-to-nearest is symmetric); a / b has no exact swapped form.
      if (ops.op != BinOp::kSub) {
        return Unsupported("Div with a broadcast dividend " + ShapeToString(ops.a) +
                           " (oneDNN broadcasts only the divisor)");
      }
      negate = true;
    }
    std::string refusals;
    for (Layout order : CandidateOrders(init, ops.out)) {
      Result<BroadcastPlan> plan = PlanBroadcast(ops.a, ops.b, ops.out, order);
      if (!plan.ok()) {
        refusals += (refusals.empty() ? "" : "; ") + plan.status().message();
        continue;
      }
      const size_t first = swap ? 1 : 0;
      std::vector<int64_t> src1_dims = plan->dims;
      for (size_t k = 0; k < src1_dims.size(); ++k) {
        if (plan->strides[1 - first][k] == 0) src1_dims[k] = 1;
      }
      dnnl::binary::primitive_desc pd;
      const memory::desc dst_md = RowMajor(plan->dims), src1_md = RowMajor(src1_dims);
      Status status = Guard(init.node, "binary", [&] {
        dnnl::primitive_attr attr;
        if (negate) {
          dnnl::post_ops post;
          post.append_eltwise(1.0f, algorithm::eltwise_linear, -1.0f, 0.0f);
          attr.set_post_ops(post);
        }
        pd = dnnl::binary::primitive_desc(dnnl::binary::desc(alg, dst_md, src1_md, dst_md), attr, Engine());
      });
      if (status.ok() && IsReferenceImpl(pd.impl_info_str())) {
        status = Unsupported("only oneDNN's reference binary implementation for " + ShapeToString(ops.a) + " and " +
                             ShapeToString(ops.b));
      }
      if (!status.ok()) {
        refusals += (refusals.empty() ? "" : "; ") + std::string(LayoutName(order)) + ": " + status.message();
        continue;
      }
      auto kernel = std::unique_ptr<OnednnBinaryKernel>(new OnednnBinaryKernel());
      kernel->first_ = first;
      kernel->plan_ = std::move(plan).value();
      std::unordered_map<int, memory> args;
      args[DNNL_ARG_SRC_0] = memory(dst_md, Engine(), DNNL_MEMORY_NONE);
      args[DNNL_ARG_SRC_1] = memory(src1_md, Engine(), DNNL_MEMORY_NONE);
      args[DNNL_ARG_DST] = memory(dst_md, Engine(), DNNL_MEMORY_NONE);
      kernel->call_ = PrimitiveCall(dnnl::binary(pd), std::move(args));
      return std::unique_ptr<IKernel>(std::move(kernel));
    }
    return Unsupported(refusals);
  }

  Status Run(KernelContext& ctx) override {
    call_.SetHandle(DNNL_ARG_SRC_0, ctx.input(first_)->raw_data());
    call_.SetHandle(DNNL_ARG_SRC_1, ctx.input(1 - first_)->raw_data());
    call_.SetHandle(DNNL_ARG_DST, ctx.output(0)->raw_data());
    call_.Execute();
    return Status();
  }
  Layout InputLayout(size_t i) const override { return i < 2 ? plan_.in_layout[i] : Layout::kPlain; }
  Layout OutputLayout(size_t) const override { return plan_.order; }

 private:
  OnednnBinaryKernel() = default;

 public:
  std::string Isa() const override { return call_.Impl(); }

 private:
  PrimitiveCall call_;
  BroadcastPlan plan_;
  size_t first_ = 0;  // the input oneDNN reads as its full-shape source 0
};

// Pow by a constant scalar exponent: oneDNN eltwise pow (1 · x^e), or products for e = 2 and 3;
// blind to the memory order.
class PowScalarKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, const Operands& ops) {
    const ValueInfo& e = *init.inputs[1];
    const int64_t n = NumElements(ops.out);
    auto kernel = std::unique_ptr<PowScalarKernel>(new PowScalarKernel());
    // The output keeps X's order when it has X's shape (a rank-4 exponent can only add leading 1s).
    kernel->layout_ = ops.a == ops.out ? init.inputs[0]->layout : Layout::kPlain;
    // x² and x³ (GPT-2's GELU cubes every activation) are products: oneDNN's pow goes through
    // exp(e·log|x|), ~20x slower per value here.
    const double exponent_value = e.value->GetAsDouble(0);
    if (exponent_value == 2.0 || exponent_value == 3.0) {
      kernel->cube_ = exponent_value == 3.0;
      kernel->n_ = n;
      kernel->own_ = true;
      return std::unique_ptr<IKernel>(std::move(kernel));
    }
    const memory::desc md({n}, memory::data_type::f32, memory::format_tag::a);
    dnnl::eltwise_forward::primitive_desc pd;
    RETURN_IF_ERROR(Guard(init.node, "eltwise pow", [&] {
      const auto exponent = static_cast<float>(e.value->GetAsDouble(0));
      dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm::eltwise_pow, md, 1.0f, exponent);
      pd = dnnl::eltwise_forward::primitive_desc(desc, Engine());
    }));
    if (IsReferenceImpl(pd.impl_info_str())) return Unsupported("only oneDNN's reference eltwise pow");
    kernel->call_ = PrimitiveCall::SrcDst(dnnl::eltwise_forward(pd), md, md);
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    if (!own_) {
      call_.Run(ctx.input(0)->raw_data(), ctx.output(0)->raw_data());
      return Status();
    }
    const float* x = ctx.input(0)->data<float>();
    float* y = ctx.output(0)->data<float>();
    const bool cube = cube_;
    ForChunks(n_, n_, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = cube ? x[i] * x[i] * x[i] : x[i] * x[i];
    });
    return Status();
  }
  Layout InputLayout(size_t i) const override { return i == 0 ? layout_ : Layout::kPlain; }
  Layout OutputLayout(size_t) const override { return layout_; }

 private:
  PowScalarKernel() = default;

 public:
  std::string Isa() const override { return call_.Impl(); }

 private:
  PrimitiveCall call_;
  Layout layout_ = Layout::kPlain;
  int64_t n_ = 0;
  bool own_ = false;  // x² or x³ as products
  bool cube_ = false;
};

// A constant one-element exponent of any numeric dtype (x^2 with an int64 2 is common).
bool IsConstantScalar(const ValueInfo* in) {
  return in != nullptr && in->value != nullptr && in->value->numel() == 1 && in->dtype != DType::kBool &&
         in->dtype != DType::kString;
}

// Below this many output values the own loop beats a oneDNN call: ~1.3 µs for a oneDNN binary at
// any small size on this 2-core VM (OpenMP fork/join) against 0.4 µs + 0.1 ns per value for the own
// loop (Add of a scalar: 0.9 vs 1.4 µs for 4096 values, 1.9 vs 2.0 µs for 16384); Pow's std::pow
// costs ~30× more per value.
constexpr int64_t kSmall = 8192;
constexpr int64_t kSmallPow = 128;

enum class Use { kSmall, kOnednn, kAny };

Result<std::unique_ptr<IKernel>> CreateBinary(const KernelInit& init, Use use) {
  ASSIGN_OR_RETURN(Operands ops, ReadOperands(init));
  if (use == Use::kOnednn) return OnednnBinaryKernel::Create(init, ops);
  const int64_t n = NumElements(ops.out);
  const int64_t small = ops.op == BinOp::kPow ? kSmallPow : kSmall;
  if (use == Use::kSmall && n > small) {
    return Unsupported(std::to_string(n) + " values: a oneDNN call is faster above " + std::to_string(small));
  }
  std::string refusals;
  for (Layout order : CandidateOrders(init, ops.out)) {
    Result<BroadcastPlan> plan = PlanBroadcast(ops.a, ops.b, ops.out, order);
    if (plan.ok()) return std::unique_ptr<IKernel>(std::make_unique<OwnBinaryKernel>(ops.op, std::move(plan).value()));
    refusals += (refusals.empty() ? "" : "; ") + plan.status().message();
  }
  return Unsupported(refusals);
}

}  // namespace

Result<std::unique_ptr<IKernel>> CreateBinarySmallF32(const KernelInit& init) {
  return CreateBinary(init, Use::kSmall);
}
Result<std::unique_ptr<IKernel>> CreateBinaryF32(const KernelInit& init) { return CreateBinary(init, Use::kOnednn); }
Result<std::unique_ptr<IKernel>> CreateBinaryOwnF32(const KernelInit& init) { return CreateBinary(init, Use::kAny); }
Result<std::unique_ptr<IKernel>> CreatePowScalarF32(const KernelInit& init) {
  if (init.inputs.size() < 2 || !IsConstantScalar(init.inputs[1])) {
    return Unsupported("the exponent is not a constant scalar");
  }
  RETURN_IF_ERROR(RequireStaticF32(init, {0}));
  Result<Shape> out = BroadcastShapes(init.inputs[0]->shape, init.inputs[1]->shape);
  if (!out.ok()) return Unsupported(out.status().message());
  return PowScalarKernel::Create(init, {BinOp::kPow, init.inputs[0]->shape, init.inputs[1]->shape, *out});
}

}  // namespace chipfit::cpu
