// Reference NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

enum class Reduction { kNone, kSum, kMean };

struct LossAttrs {
  Reduction reduction = Reduction::kMean;
  bool has_ignore = false;
  int64_t ignore_index = 0;
};

Result<LossAttrs> ReadLossAttrs(const Node& node) {
  LossAttrs attrs;
  const std::string reduction = node.GetString("reduction", "mean");
  if (reduction == "none") {
    attrs.reduction = Reduction::kNone;
  } else if (reduction == "sum") {
    attrs.reduction = Reduction::kSum;
  } else if (reduction != "mean") {
    return Unsupported(node.Describe() + ": reduction '" + reduction + "' is not one of none, sum, mean");
  }
  // ignore_index has no default: any value, negative or past C, is a valid "skip this" marker.
  attrs.has_ignore = node.attributes.count("ignore_index") != 0;
  attrs.ignore_index = node.GetInt("ignore_index", 0);
  return attrs;
}

bool IsLossFloat(DType dtype) { return IsOneOf(dtype, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}); }

// The inputs' names in the spec, for messages: NLL says input/target/weight, SCE scores/labels/weights.
struct LossNames {
  const char* x;
  const char* target;
  const char* weight;
};
constexpr LossNames kNllNames{"input", "target", "weight"};
constexpr LossNames kSceNames{"scores", "labels", "weights"};

// Checks x [N, C, d1..dk], target [N, d1..dk] and weight [C]; dims of -1 (not known yet) match
// anything. Returns the loss shape before reduction (target's, with unknown dims filled from x).
Result<Shape> CheckLossInputs(const InferContext& ctx, const LossNames& names) {
  const ValueInfo* x = ctx.input(0);
  const ValueInfo* target = ctx.input(1);
  const std::string xn = names.x;
  const std::string tn = names.target;
  const std::string wn = names.weight;
  if (x == nullptr || target == nullptr) return ctx.Error("needs inputs '" + xn + "' and '" + tn + "'");
  if (!IsLossFloat(x->dtype)) {
    return Unsupported(ctx.node().Describe() + ": " + xn + " dtype " + std::string(DTypeName(x->dtype)) +
                       " is not supported (float16, bfloat16, float, double)");
  }
  if (!IsOneOf(target->dtype, {DType::kI32, DType::kI64})) {
    return ctx.Error(tn + " must be int32 or int64, got " + std::string(DTypeName(target->dtype)));
  }
  const Shape& xs = x->shape;
  const Shape& ts = target->shape;
  if (xs.size() < 2) return ctx.Error(xn + " must be [N, C] or [N, C, d1, ...], got " + ShapeToString(xs));
  if (ts.size() + 1 != xs.size()) {
    return ctx.Error(tn + " " + ShapeToString(ts) + " must have rank " + std::to_string(xs.size() - 1) + " to match " +
                     xn + " " + ShapeToString(xs));
  }
  Shape loss = ts;
  for (size_t d = 0; d < ts.size(); ++d) {
    const int64_t xd = xs[d == 0 ? 0 : d + 1];
    if (ts[d] >= 0 && xd >= 0 && ts[d] != xd) {
      return ctx.Error(tn + " " + ShapeToString(ts) + " does not match " + xn + " " + ShapeToString(xs) +
                       " without its class dim");
    }
    if (loss[d] < 0) loss[d] = xd;
  }
  if (const ValueInfo* w = ctx.input(2)) {
    if (w->dtype != x->dtype) return ctx.Error(wn + " dtype must match " + xn + "'s");
    if (w->shape.size() != 1 || (w->shape[0] >= 0 && xs[1] >= 0 && w->shape[0] != xs[1])) {
      return ctx.Error(wn + " " + ShapeToString(w->shape) + " must be [C] with C = " + std::to_string(xs[1]));
    }
  }
  return loss;
}

template <bool kSoftmax>
Status InferLoss(InferContext& ctx) {
  ASSIGN_OR_RETURN(Shape loss, CheckLossInputs(ctx, kSoftmax ? kSceNames : kNllNames));
  RETURN_IF_ERROR(ReadLossAttrs(ctx.node()).status());
  const ValueInfo& x = *ctx.input(0);
  ctx.SetOutput(0, x.dtype, ctx.node().GetString("reduction", "mean") == "none" ? loss : Shape{});
  if (kSoftmax) ctx.SetOutput(1, x.dtype, x.shape);  // log_prob; SetOutput ignores it when absent
  return Status::Ok();
}

// log_softmax over the class axis (1) of [N, C, inner], max-shifted so large scores do not overflow.
std::vector<double> LogSoftmaxAxis1(const std::vector<double>& x, int64_t n, int64_t c, int64_t inner) {
  std::vector<double> out(x.size());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t d = 0; d < inner; ++d) {
      const int64_t base = i * c * inner + d;
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < c; ++k) max = std::max(max, x[static_cast<size_t>(base + k * inner)]);
      double sum = 0;
      for (int64_t k = 0; k < c; ++k) sum += std::exp(x[static_cast<size_t>(base + k * inner)] - max);
      const double log_sum = max + std::log(sum);
      for (int64_t k = 0; k < c; ++k) {
        const auto at = static_cast<size_t>(base + k * inner);
        out[at] = x[at] - log_sum;
      }
    }
  }
  return out;
}

template <typename T>
std::vector<double> ToDoubles(const Tensor& t) {
  const T* p = t.data<T>();
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(p[i]);
  return out;
}

// Shared by both ops: SoftmaxCrossEntropyLoss is NLL applied to log_softmax(scores).
template <bool kSoftmax>
Status RunLoss(KernelContext& ctx) {
  ASSIGN_OR_RETURN(LossAttrs attrs, ReadLossAttrs(ctx.node()));
  const Tensor& x = *ctx.input(0);
  const Tensor& target = *ctx.input(1);
  const Tensor* weight = ctx.input(2);
  const int64_t n = x.dim(0);
  const int64_t c = x.dim(1);
  const int64_t inner = n * c == 0 ? 0 : x.numel() / (n * c);
  // The shape function checked shapes and dtypes; the executor always runs it first.
  return VisitKernelDType(ctx.node(), x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      return Unsupported(ctx.node().Describe() + ": integer inputs are not supported");
    } else {
      std::vector<double> logp = ToDoubles<T>(x);
      if constexpr (kSoftmax) {
        logp = LogSoftmaxAxis1(logp, n, c, inner);
        if (Tensor* log_prob = ctx.output(1)) {
          T* out = log_prob->data<T>();
          for (size_t i = 0; i < logp.size(); ++i) out[i] = FromDouble<T>(logp[i]);
        }
      }
      const std::vector<double> w = weight != nullptr ? ToDoubles<T>(*weight) : std::vector<double>{};
      T* out = ctx.output(0)->data<T>();
      double loss_sum = 0;
      double weight_sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t d = 0; d < inner; ++d) {
          const int64_t at = i * inner + d;
          const int64_t t = target.GetAsInt64(at);
          double loss = 0;
          double wt = 0;
          if (!attrs.has_ignore || t != attrs.ignore_index) {
            if (t < 0 || t >= c) {
              return ctx.Error(std::string(kSoftmax ? kSceNames.target : kNllNames.target) + " value " +
                               std::to_string(t) + " at flat index " + std::to_string(at) + " is outside [0, " +
                               std::to_string(c) + ")" +
                               (attrs.has_ignore ? " and is not ignore_index " + std::to_string(attrs.ignore_index)
                                                 : std::string()));
            }
            wt = w.empty() ? 1.0 : w[static_cast<size_t>(t)];
            loss = -logp[static_cast<size_t>((i * c + t) * inner + d)] * wt;
          }
          if (attrs.reduction == Reduction::kNone) out[at] = FromDouble<T>(loss);
          loss_sum += loss;
          weight_sum += wt;
        }
      }
      // mean divides by the applied weights (ignored elements weigh 0), as the spec's function body
      // does; when every element is ignored that is 0/0 = NaN, like PyTorch.
      if (attrs.reduction == Reduction::kSum) out[0] = FromDouble<T>(loss_sum);
      if (attrs.reduction == Reduction::kMean) out[0] = FromDouble<T>(loss_sum / weight_sum);
      return Status::Ok();
    }
  });
}

}  // namespace

std::vector<OpEntry> LossOps() {
  return {
      {"NegativeLogLikelihoodLoss", InferLoss<false>, RunLoss<false>},
      {"SoftmaxCrossEntropyLoss", InferLoss<true>, RunLoss<true>},
  };
}

}  // namespace chipfit
