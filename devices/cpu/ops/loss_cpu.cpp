// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss on the CPU, in float and double: own OpenMP
// loops over plain tensors (kernel_groups.h).
//
// They compute as the reference does (core/reference/loss.cpp): in double, log_softmax max-shifted
// and summed over the classes in class order, each value rounded once. Positions (n, d1..dk) are
// cut into blocks whose size depends on the shape only; blocks run in parallel and their partial
// sums are added in block order, so sum and mean do not depend on the thread count. A target out
// of [0, C) that is not ignore_index is never read through; the first one in flat order is reported
// with the reference's message. Shapes known only at run time are fine: sizes are taken from the
// tensors each run.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/reference/ref_util.h"
#include "devices/cpu/ops/kernel_groups.h"

namespace chipfit::cpu {
namespace {

enum class Reduction { kNone, kSum, kMean };

struct LossAttrs {
  Reduction reduction = Reduction::kMean;
  bool has_ignore = false;  // ignore_index has no default: its presence is what counts
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
    return Unsupported("reduction '" + reduction + "' is not one of none, sum, mean (the reference reports it)");
  }
  attrs.has_ignore = node.attributes.count("ignore_index") != 0;
  attrs.ignore_index = node.GetInt("ignore_index", 0);
  return attrs;
}

// The inputs' names in the spec, for messages: NLL says input/target/weight, SCE scores/labels/weights.
struct LossNames {
  const char* x;
  const char* target;
  const char* weight;
};
constexpr LossNames kNllNames{"input", "target", "weight"};
constexpr LossNames kSceNames{"scores", "labels", "weights"};

// Values a block of positions covers at least (positions × classes for SCE, positions for NLL), and
// the work from which blocks run on several threads: an exp costs ~5 ns, a picked value well under 1.
constexpr int64_t kBlockValues = 16384;
constexpr int64_t kParallelSoftmax = 4096;
constexpr int64_t kParallelPick = 65536;
// Positions of one row handled side by side (SCE over d1..dk): the class loop then reads rows of
// contiguous values.
constexpr int64_t kLanes = 256;

// One block's share of the reduction, and its first out-of-range target (flat index, −1: none).
struct BlockSum {
  double loss = 0;
  double weight = 0;
  int64_t bad = -1;
};

// What one run reads and writes: x [n, c, inner], the target [n, inner], optional weight [c], the
// per-position loss (reduction none) and log_prob (SCE, when asked for).
template <typename T, typename I>
struct LossRun {
  const T* x = nullptr;
  const I* target = nullptr;
  const T* weight = nullptr;  // nullptr: every class weighs 1
  T* per_position = nullptr;  // nullptr unless reduction is none
  T* log_prob = nullptr;
  int64_t c = 0, inner = 0;
  LossAttrs attrs;

  // Position p's loss given its log-probability at the target class (logp(t), called only for a
  // t in [0, c)); an out-of-range target is recorded in `sum` and counts 0.
  template <typename LogP>
  void Add(int64_t p, BlockSum& sum, LogP&& logp) const {
    const auto t = static_cast<int64_t>(target[p]);
    double loss = 0;
    double wt = 0;
    if (!attrs.has_ignore || t != attrs.ignore_index) {
      if (t < 0 || t >= c) {
        if (sum.bad < 0) sum.bad = p;
      } else {
        wt = weight == nullptr ? 1.0 : static_cast<double>(weight[t]);
        loss = -logp(t) * wt;
      }
    }
    if (per_position != nullptr) per_position[p] = static_cast<T>(loss);
    sum.loss += loss;
    sum.weight += wt;
  }

  // NegativeLogLikelihoodLoss over positions [p0, p1): x already holds log-probabilities.
  BlockSum PickBlock(int64_t p0, int64_t p1) const {
    BlockSum sum;
    int64_t i = p0 / inner;
    int64_t d = p0 - i * inner;
    for (int64_t p = p0; p < p1; ++p) {
      const T* row = x + i * c * inner + d;
      Add(p, sum, [&](int64_t t) { return static_cast<double>(row[t * inner]); });
      if (++d == inner) {
        d = 0;
        ++i;
      }
    }
    return sum;
  }

  // SoftmaxCrossEntropyLoss over positions [p0, p1): log_softmax over the classes of up to kLanes
  // positions of one row at a time (max, then Σ exp(x − max) in class order, as the reference).
  BlockSum SoftmaxBlock(int64_t p0, int64_t p1) const {
    BlockSum sum;
    double max[kLanes];
    double log_sum[kLanes];
    for (int64_t p = p0; p < p1;) {
      const int64_t i = p / inner;
      const int64_t d = p - i * inner;
      const int64_t lanes = std::min({p1 - p, inner - d, kLanes});
      const T* xs = x + i * c * inner + d;
      std::fill(max, max + lanes, -std::numeric_limits<double>::infinity());
      std::fill(log_sum, log_sum + lanes, 0.0);
      for (int64_t k = 0; k < c; ++k) {
        const T* row = xs + k * inner;
        for (int64_t l = 0; l < lanes; ++l) {
          const auto v = static_cast<double>(row[l]);
          max[l] = max[l] < v ? v : max[l];  // as std::max: a NaN never wins (it still poisons the sum)
        }
      }
      for (int64_t k = 0; k < c; ++k) {
        const T* row = xs + k * inner;
        for (int64_t l = 0; l < lanes; ++l) log_sum[l] += std::exp(static_cast<double>(row[l]) - max[l]);
      }
      for (int64_t l = 0; l < lanes; ++l) log_sum[l] = max[l] + std::log(log_sum[l]);
      if (log_prob != nullptr) {
        T* out = log_prob + (xs - x);
        for (int64_t k = 0; k < c; ++k) {
          for (int64_t l = 0; l < lanes; ++l) {
            out[k * inner + l] = static_cast<T>(static_cast<double>(xs[k * inner + l]) - log_sum[l]);
          }
        }
      }
      for (int64_t l = 0; l < lanes; ++l) {
        Add(p + l, sum, [&](int64_t t) { return static_cast<double>(xs[t * inner + l]) - log_sum[l]; });
      }
      p += lanes;
    }
    return sum;
  }
};

template <typename T, bool kSoftmax>
class LossKernel final : public IKernel {
  static constexpr LossNames kNames = kSoftmax ? kSceNames : kNllNames;

 public:
  explicit LossKernel(LossAttrs attrs) : attrs_(attrs) {}

  Status Run(KernelContext& ctx) override {
    const Tensor& target = *ctx.input(1);
    switch (target.dtype()) {
      case DType::kI32: return RunWith<int32_t>(ctx);
      case DType::kI64: return RunWith<int64_t>(ctx);
      default:
        return ctx.Error(std::string(kNames.target) + " must be int32 or int64, got " +
                         std::string(DTypeName(target.dtype())));
    }
  }

 private:
  // The shapes the shape function checked, checked again where a mismatch would read or write out
  // of bounds (the kernel may see shapes only known at run time).
  Status CheckShapes(KernelContext& ctx, int64_t positions) const {
    const Tensor& x = *ctx.input(0);
    const Tensor& target = *ctx.input(1);
    bool match = x.rank() >= 2 && target.rank() + 1 == x.rank() && target.numel() == positions;
    for (int64_t d = 0; match && d < target.rank(); ++d) match = target.dim(d) == x.dim(d == 0 ? 0 : d + 1);
    if (!match) {
      return ctx.Error(std::string(kNames.target) + " " + ShapeToString(target.shape()) + " does not match " +
                       kNames.x + " " + ShapeToString(x.shape()) + " without its class dim");
    }
    if (const Tensor* w = ctx.input(2); w != nullptr && (w->dtype() != x.dtype() || w->numel() != x.dim(1))) {
      return ctx.Error(std::string(kNames.weight) + " must be [C] of " + kNames.x + "'s dtype, got " +
                       std::string(DTypeName(w->dtype())) + ShapeToString(w->shape()));
    }
    const int64_t out = attrs_.reduction == Reduction::kNone ? positions : 1;
    if (ctx.output(0) == nullptr || ctx.output(0)->numel() != out) {
      return ctx.Error("the loss output does not have the expected size");
    }
    if (const Tensor* lp = ctx.output(1); kSoftmax && lp != nullptr && lp->numel() != x.numel()) {
      return ctx.Error("log_prob does not have the input's size");
    }
    return Status();
  }

  template <typename I>
  Status RunWith(KernelContext& ctx) {
    const Tensor& x = *ctx.input(0);
    const int64_t n = x.rank() >= 1 ? x.dim(0) : 0;
    const int64_t c = x.rank() >= 2 ? x.dim(1) : 0;
    int64_t inner = 1;
    for (int64_t d = 2; d < x.rank(); ++d) inner *= x.dim(d);
    const int64_t positions = n * inner;
    RETURN_IF_ERROR(CheckShapes(ctx, positions));

    LossRun<T, I> run;
    run.x = x.data<T>();
    run.target = ctx.input(1)->data<I>();
    run.weight = ctx.input(2) != nullptr ? ctx.input(2)->data<T>() : nullptr;
    T* out = ctx.output(0)->data<T>();
    run.per_position = attrs_.reduction == Reduction::kNone ? out : nullptr;
    run.log_prob = kSoftmax && ctx.output(1) != nullptr ? ctx.output(1)->data<T>() : nullptr;
    run.c = c;
    run.inner = inner;
    run.attrs = attrs_;

    const int64_t values_per_position = kSoftmax ? std::max<int64_t>(c, 1) : 1;
    const int64_t block = std::max<int64_t>(1, kBlockValues / values_per_position);
    const int64_t blocks = (positions + block - 1) / block;
    const bool parallel =
        blocks > 1 && positions * values_per_position >= (kSoftmax ? kParallelSoftmax : kParallelPick);
    sums_.assign(static_cast<size_t>(blocks), BlockSum{});
    BlockSum* sums = sums_.data();
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t p0 = b * block;
      const int64_t p1 = std::min(positions, p0 + block);
      sums[b] = kSoftmax ? run.SoftmaxBlock(p0, p1) : run.PickBlock(p0, p1);
    }

    double loss_sum = 0;
    double weight_sum = 0;
    for (const BlockSum& s : sums_) {
      if (s.bad >= 0) return OutOfRange(ctx, run.target[s.bad], s.bad, c);
      loss_sum += s.loss;
      weight_sum += s.weight;
    }
    // mean divides by the applied weights (ignored positions weigh 0); all ignored gives 0/0 = NaN,
    // as the reference and PyTorch.
    if (attrs_.reduction == Reduction::kSum) out[0] = static_cast<T>(loss_sum);
    if (attrs_.reduction == Reduction::kMean) out[0] = static_cast<T>(loss_sum / weight_sum);
    return Status();
  }

  // The reference's message, word for word.
  template <typename I>
  Status OutOfRange(const KernelContext& ctx, I value, int64_t at, int64_t c) const {
    const auto t = static_cast<int64_t>(value);
    return ctx.Error(
        std::string(kNames.target) + " value " + std::to_string(t) + " at flat index " + std::to_string(at) +
        " is outside [0, " + std::to_string(c) + ")" +
        (attrs_.has_ignore ? " and is not ignore_index " + std::to_string(attrs_.ignore_index) : std::string()));
  }

  LossAttrs attrs_;
  std::vector<BlockSum> sums_;
};

template <bool kSoftmax>
Result<std::unique_ptr<IKernel>> CreateLoss(const KernelInit& init) {
  constexpr LossNames kNames = kSoftmax ? kSceNames : kNllNames;
  const ValueInfo* x = init.inputs.size() > 0 ? init.inputs[0] : nullptr;
  const ValueInfo* target = init.inputs.size() > 1 ? init.inputs[1] : nullptr;
  const ValueInfo* weight = init.inputs.size() > 2 ? init.inputs[2] : nullptr;
  if (x == nullptr || target == nullptr) return Unsupported("an input is missing (the reference reports it)");
  if (x->dtype != DType::kF32 && x->dtype != DType::kF64) {
    return Unsupported(std::string(DTypeName(x->dtype)) + " " + kNames.x + " (f32 and f64 only)");
  }
  if (target->dtype != DType::kI32 && target->dtype != DType::kI64) {
    return Unsupported(std::string(DTypeName(target->dtype)) + " " + kNames.target + " (the reference reports it)");
  }
  if (weight != nullptr && weight->dtype != x->dtype) {
    return Unsupported("a " + std::string(kNames.weight) + " dtype other than the " + kNames.x +
                       "'s (the reference reports it)");
  }
  if (x->shape.size() < 2) return Unsupported("a " + std::string(kNames.x) + " of rank < 2 (the reference reports it)");
  ASSIGN_OR_RETURN(const LossAttrs attrs, ReadLossAttrs(init.node));
  if (x->dtype == DType::kF64) return std::unique_ptr<IKernel>(std::make_unique<LossKernel<double, kSoftmax>>(attrs));
  return std::unique_ptr<IKernel>(std::make_unique<LossKernel<float, kSoftmax>>(attrs));
}

}  // namespace

void AddLossKernels(KernelTable& t) {
  constexpr auto kCpu = DeviceKind::kCpu;
  constexpr auto kFp32 = Precision::kFp32;
  t.Add("NegativeLogLikelihoodLoss", "", kCpu, kFp32, {"cpu:loss", CreateLoss<false>});
  t.Add("SoftmaxCrossEntropyLoss", "", kCpu, kFp32, {"cpu:loss", CreateLoss<true>});
}

}  // namespace chipfit::cpu
