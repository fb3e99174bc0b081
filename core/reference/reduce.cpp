// Reference kernels: Reduce* (axes as attribute or input), ArgMax/ArgMin, TopK and CumSum.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>

#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

template <typename T>
bool IsNan(T v) {
  if constexpr (std::is_integral_v<T>) {
    return false;
  } else {
    return std::isnan(static_cast<double>(v));
  }
}

// VisitDType for kernels: f(T{}) for every stored dtype; strings fail naming the node and dtype.
// ---------------------------------------------------------------------------------------------
// Reduce*

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// Where the reduced axes come from: ReduceSum took them as input 1 from opset 13, the others from 18.
bool AxesAsInput(ReduceKind kind, int64_t opset) { return opset >= (kind == ReduceKind::kSum ? 13 : 18); }

struct ReducePlan {
  Shape out_shape;
  // Per input dim: true when it is reduced. None reduced (noop_with_empty_axes) makes every output
  // element a reduction over one element, which is what the ONNX reference does (SumSquare squares).
  std::vector<bool> reduced;
};

Result<ReducePlan> PlanReduce(const Node& node, ReduceKind kind, int64_t opset, const Shape& in_shape,
                              const Tensor* axes_input) {
  const int64_t rank = static_cast<int64_t>(in_shape.size());
  std::vector<int64_t> axes;
  if (!AxesAsInput(kind, opset)) {
    axes = node.GetInts("axes");
  } else if (axes_input != nullptr) {
    axes = axes_input->ToInt64Vector();
  }
  const bool noop = AxesAsInput(kind, opset) && node.GetInt("noop_with_empty_axes", 0) != 0;
  ReducePlan plan;
  plan.reduced.assign(in_shape.size(), axes.empty() && !noop);
  ASSIGN_OR_RETURN(std::vector<int64_t> normalized, NormalizeAxes(axes, rank, node));
  for (int64_t a : normalized) {
    if (a >= rank) return InvalidArgument(node.Describe() + ": a scalar has no axis " + std::to_string(a));
    plan.reduced[static_cast<size_t>(a)] = true;
  }
  const bool keepdims = node.GetInt("keepdims", 1) != 0;
  for (size_t d = 0; d < in_shape.size(); ++d) {
    if (!plan.reduced[d]) {
      plan.out_shape.push_back(in_shape[d]);
    } else if (keepdims) {
      plan.out_shape.push_back(1);
    }
  }
  return plan;
}

template <ReduceKind K>
Status InferReduce(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input 'data'");
  const Tensor* axes = nullptr;
  if (AxesAsInput(K, ctx.opset()) && ctx.node().HasInput(1)) {
    axes = ctx.RequireValue(1);
    if (axes == nullptr) return ctx.ValueNeeded();
  }
  ASSIGN_OR_RETURN(ReducePlan plan, PlanReduce(ctx.node(), K, ctx.opset(), x->shape, axes));
  ctx.SetOutput(0, x->dtype, plan.out_shape);
  return Status::Ok();
}

// Calls f(i, offset) for each flat index i of `shape`, where offset advances by strides[d] along dim d
// (so no index table as large as the input is needed).
template <typename F>
void ForEachOffset(const Shape& shape, const std::vector<int64_t>& strides, F&& f) {
  const int64_t n = NumElements(shape);
  std::vector<int64_t> coord(shape.size(), 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    f(static_cast<size_t>(i), offset);
    for (size_t d = shape.size(); d-- > 0;) {
      offset += strides[d];
      if (++coord[d] < shape[d]) break;
      offset -= coord[d] * strides[d];
      coord[d] = 0;
    }
  }
}

template <ReduceKind K>
Status RunReduce(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor* axes = AxesAsInput(K, ctx.opset()) ? ctx.input(1) : nullptr;
  ASSIGN_OR_RETURN(ReducePlan plan, PlanReduce(ctx.node(), K, ctx.opset(), x.shape(), axes));
  Tensor& y = *ctx.output(0);
  // Each input element's output index: output strides (in keepdims layout) with 0 on reduced dims.
  Shape kept = x.shape();
  for (size_t d = 0; d < kept.size(); ++d) kept[d] = plan.reduced[d] ? 1 : kept[d];
  std::vector<int64_t> strides = Strides(kept);
  for (size_t d = 0; d < kept.size(); ++d) strides[d] = plan.reduced[d] ? 0 : strides[d];
  const auto n_out = static_cast<size_t>(y.numel());
  const int64_t group = y.numel() == 0 ? 0 : x.numel() / y.numel();

  return VisitKernelDType(ctx.node(), x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* out = y.data<T>();
    if constexpr (K == ReduceKind::kMax || K == ReduceKind::kMin) {
      // Compared in T (not double) so int64 extremes stay exact; NaN wins, as in numpy.
      constexpr bool kMax = K == ReduceKind::kMax;
      T init;
      if constexpr (std::is_integral_v<T>) {
        init = kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
      } else {
        init = FromDouble<T>(kMax ? -INFINITY : INFINITY);
      }
      std::fill(out, out + n_out, init);
      ForEachOffset(x.shape(), strides, [&](size_t i, int64_t o) {
        T& best = out[o];
        const T v = in[i];
        if (!IsNan(best) && (IsNan(v) || (kMax ? v > best : v < best))) best = v;
      });
    } else {
      const double init = K == ReduceKind::kProd ? 1.0 : 0.0;
      std::vector<double> acc(n_out, init);
      std::vector<double> shift(n_out, 0.0);  // LogSumExp: per-output max, for stability
      if constexpr (K == ReduceKind::kLogSumExp) {
        std::fill(shift.begin(), shift.end(), -INFINITY);
        ForEachOffset(x.shape(), strides,
                      [&](size_t i, int64_t o) { shift[o] = std::max(shift[o], static_cast<double>(in[i])); });
        for (double& m : shift) m = std::isfinite(m) ? m : 0.0;
      }
      ForEachOffset(x.shape(), strides, [&](size_t i, int64_t o) {
        const double v = static_cast<double>(in[i]);
        double& a = acc[o];
        switch (K) {
          case ReduceKind::kProd: a *= v; break;
          case ReduceKind::kL1: a += std::fabs(v); break;
          case ReduceKind::kL2:
          case ReduceKind::kSumSquare: a += v * v; break;
          case ReduceKind::kLogSumExp: a += std::exp(v - shift[o]); break;
          default: a += v; break;
        }
      });
      for (size_t o = 0; o < n_out; ++o) {
        double r = acc[o];
        if (K == ReduceKind::kMean) r /= static_cast<double>(group);
        if (K == ReduceKind::kL2) r = std::sqrt(r);
        if (K == ReduceKind::kLogSum) r = std::log(r);
        if (K == ReduceKind::kLogSumExp) r = shift[o] + std::log(r);
        out[o] = FromDouble<T>(r);
      }
    }
    return Status::Ok();
  });
}

// ---------------------------------------------------------------------------------------------
// ArgMax / ArgMin / TopK / CumSum share the outer × axis × inner view of a tensor.

struct AxisView {
  int64_t outer = 1, len = 1, inner = 1;
};

AxisView ViewAround(const Shape& shape, int64_t axis) {
  AxisView v;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    const int64_t n = shape[static_cast<size_t>(d)];
    if (d < axis) v.outer *= n;
    if (d == axis) v.len = n;
    if (d > axis) v.inner *= n;
  }
  return v;
}

Status InferArg(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input 'data'");
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", 0), rank, ctx.node()));
  if (rank == 0) return ctx.Error("input must have rank >= 1");
  if (x->shape[static_cast<size_t>(axis)] == 0) return ctx.Error("cannot take the arg-extreme of an empty axis");
  Shape out = x->shape;
  if (ctx.node().GetInt("keepdims", 1) != 0) {
    out[static_cast<size_t>(axis)] = 1;
  } else {
    out.erase(out.begin() + axis);
  }
  ctx.SetOutput(0, DType::kI64, out);
  return Status::Ok();
}

template <bool kMax>
Status RunArg(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", 0), x.rank(), ctx.node()));
  const bool last = ctx.opset() >= 12 && ctx.node().GetInt("select_last_index", 0) != 0;
  const AxisView v = ViewAround(x.shape(), axis);
  int64_t* out = ctx.output(0)->data<int64_t>();
  return VisitKernelDType(ctx.node(), x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* in = x.data<T>();
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        const T* base = in + o * v.len * v.inner + i;
        int64_t best = 0;
        for (int64_t k = 1; k < v.len; ++k) {
          const T a = base[k * v.inner];
          const T b = base[best * v.inner];
          const bool better = kMax ? a > b : a < b;
          if (better || (last && !(kMax ? b > a : b < a))) best = k;
        }
        out[o * v.inner + i] = best;
      }
    }
    return Status::Ok();
  });
}

// TopK's K: attribute before opset 10, then a 1-element int64 input.
Result<int64_t> TopKCount(const Node& node, int64_t opset, const Tensor* k_input) {
  if (opset < 10) return node.GetInt("k", -1);
  if (k_input == nullptr || k_input->numel() != 1) {
    return InvalidArgument(node.Describe() + ": input 'K' must hold exactly one value");
  }
  return k_input->GetAsInt64(0);
}

Status InferTopK(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input 'X'");
  const Tensor* k_input = nullptr;
  if (ctx.opset() >= 10) {
    k_input = ctx.RequireValue(1);
    if (k_input == nullptr) return ctx.ValueNeeded();
  }
  ASSIGN_OR_RETURN(int64_t k, TopKCount(ctx.node(), ctx.opset(), k_input));
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  if (rank == 0) return ctx.Error("input must have rank >= 1");
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", -1), rank, ctx.node()));
  const int64_t len = x->shape[static_cast<size_t>(axis)];
  if (k < 0 || (len >= 0 && k > len)) {
    return ctx.Error("K = " + std::to_string(k) + " is outside [0, " + std::to_string(len) + "] for axis " +
                     std::to_string(axis));
  }
  Shape out = x->shape;
  out[static_cast<size_t>(axis)] = k;
  ctx.SetOutput(0, x->dtype, out);
  ctx.SetOutput(1, DType::kI64, out);
  return Status::Ok();
}

Status RunTopK(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(int64_t k, TopKCount(ctx.node(), ctx.opset(), ctx.input(1)));
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", -1), x.rank(), ctx.node()));
  const bool largest = ctx.opset() < 11 || ctx.node().GetInt("largest", 1) != 0;
  const AxisView v = ViewAround(x.shape(), axis);
  Tensor* values = ctx.output(0);
  Tensor* indices = ctx.output(1);
  return VisitKernelDType(ctx.node(), x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* in = x.data<T>();
    std::vector<int64_t> order(static_cast<size_t>(v.len));
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        const T* base = in + o * v.len * v.inner + i;
        // NaN ranks above every number so the comparison stays a strict weak order; stable_sort keeps
        // the lower index first among equal values, as the spec asks.
        auto before = [&](int64_t a, int64_t b) {
          const T va = base[a * v.inner];
          const T vb = base[b * v.inner];
          if (IsNan(va) || IsNan(vb)) return largest ? IsNan(va) && !IsNan(vb) : IsNan(vb) && !IsNan(va);
          return largest ? va > vb : va < vb;
        };
        std::iota(order.begin(), order.end(), int64_t{0});
        std::stable_sort(order.begin(), order.end(), before);
        for (int64_t j = 0; j < k; ++j) {
          const int64_t dst = (o * k + j) * v.inner + i;
          if (values) values->data<T>()[dst] = base[order[static_cast<size_t>(j)] * v.inner];
          if (indices) indices->data<int64_t>()[dst] = order[static_cast<size_t>(j)];
        }
      }
    }
    return Status::Ok();
  });
}

Result<int64_t> CumSumAxis(const Node& node, const Tensor* axis, int64_t rank) {
  if (axis == nullptr || axis->numel() != 1) {
    return InvalidArgument(node.Describe() + ": input 'axis' must hold exactly one value");
  }
  return NormalizeAxis(axis->GetAsInt64(0), rank, node);
}

Status InferCumSum(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr || ctx.input(1) == nullptr) return ctx.Error("needs inputs 'x' and 'axis'");
  if (x->dtype == DType::kBool) return ctx.Error("bool input is not allowed");
  if (const Tensor* axis = ctx.input(1)->value) {
    RETURN_IF_ERROR(CumSumAxis(ctx.node(), axis, static_cast<int64_t>(x->shape.size())).status());
  }
  ctx.SetOutput(0, x->dtype, x->shape);
  return Status::Ok();
}

Status RunCumSum(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(int64_t axis, CumSumAxis(ctx.node(), ctx.input(1), x.rank()));
  const bool exclusive = ctx.node().GetInt("exclusive", 0) != 0;
  const bool reverse = ctx.node().GetInt("reverse", 0) != 0;
  const AxisView v = ViewAround(x.shape(), axis);
  return VisitKernelDType(ctx.node(), x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    // Integers accumulate exactly in 64 bits; floating types in double.
    using Acc =
        std::conditional_t<std::is_integral_v<T>, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>, double>;
    const T* in = x.data<T>();
    T* out = ctx.output(0)->data<T>();
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        Acc sum{};
        for (int64_t step = 0; step < v.len; ++step) {
          const int64_t k = reverse ? v.len - 1 - step : step;
          const int64_t at = (o * v.len + k) * v.inner + i;
          const Acc value = static_cast<Acc>(in[at]);  // NOLINT(bugprone-signed-char-misuse): int8 is numeric
          if (!exclusive) sum += value;
          if constexpr (std::is_integral_v<T>) {
            out[at] = static_cast<T>(sum);
          } else {
            out[at] = FromDouble<T>(sum);
          }
          if (exclusive) sum += value;
        }
      }
    }
    return Status::Ok();
  });
}

}  // namespace

std::vector<OpEntry> ReduceOps() {
  using K = ReduceKind;
  return {
      {"ReduceSum", InferReduce<K::kSum>, RunReduce<K::kSum>},
      {"ReduceMean", InferReduce<K::kMean>, RunReduce<K::kMean>},
      {"ReduceMax", InferReduce<K::kMax>, RunReduce<K::kMax>},
      {"ReduceMin", InferReduce<K::kMin>, RunReduce<K::kMin>},
      {"ReduceProd", InferReduce<K::kProd>, RunReduce<K::kProd>},
      {"ReduceL1", InferReduce<K::kL1>, RunReduce<K::kL1>},
      {"ReduceL2", InferReduce<K::kL2>, RunReduce<K::kL2>},
      {"ReduceLogSum", InferReduce<K::kLogSum>, RunReduce<K::kLogSum>},
      {"ReduceLogSumExp", InferReduce<K::kLogSumExp>, RunReduce<K::kLogSumExp>},
      {"ReduceSumSquare", InferReduce<K::kSumSquare>, RunReduce<K::kSumSquare>},
      {"ArgMax", InferArg, RunArg<true>},
      {"ArgMin", InferArg, RunArg<false>},
      {"TopK", InferTopK, RunTopK},
      {"CumSum", InferCumSum, RunCumSum},
  };
}

}  // namespace chipfit
