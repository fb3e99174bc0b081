// Reference kernels: BatchNormalization (inference and training mode), Instance/Layer/Group normalization, LRN,
// MeanVarianceNormalization, LpNormalization, and Softmax/LogSoftmax/Hardmax.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/reference/conv_util.h"
#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

Status RequireInputs(const InferContext& ctx, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (ctx.input(i) == nullptr) return ctx.Error("input " + std::to_string(i) + " is required");
  }
  for (size_t i = 0; i < ctx.num_inputs(); ++i) RETURN_IF_ERROR(CheckDType(ctx, i, kFloatDTypes));
  return Status::Ok();
}

Status RequireRank(const InferContext& ctx, size_t min_rank, const char* layout) {
  const Shape& x = ctx.input(0)->shape;
  if (x.size() >= min_rank) return Status::Ok();
  return ctx.Error("input X must be " + std::string(layout) + " (rank >= " + std::to_string(min_rank) + "), got " +
                   ShapeToString(x));
}

// Input i must hold `count` values (unknown dims pass).
Status RequireCount(const InferContext& ctx, size_t i, int64_t count, const std::string& what) {
  const ValueInfo* in = ctx.input(i);
  if (in == nullptr || count < 0 || std::any_of(in->shape.begin(), in->shape.end(), [](int64_t d) { return d < 0; }) ||
      NumElements(in->shape) == count) {
    return Status::Ok();
  }
  return ctx.Error("input " + std::to_string(i) + " has shape " + ShapeToString(in->shape) + " but needs " +
                   std::to_string(count) + " values (" + what + ")");
}

int64_t ChannelCount(const Shape& x) { return x.size() > 1 ? x[1] : 1; }

// ---- BatchNormalization ----------------------------------------------------------------------

// opset < 9 with spatial = 0 keeps one statistic per C x D1 x ... element instead of per channel.
bool PerActivation(const Node& node, int64_t opset) { return opset < 9 && node.GetInt("spatial", 1) == 0; }

// training_mode (opset 14) normalizes with the batch's own statistics and returns the running
// statistics updated by momentum. Before opset 14 training was asked for by listing the extra outputs,
// whose saved mean and variance each runtime defined its own way; those stay unsupported.
bool TrainingMode(const Node& node, int64_t opset) { return opset >= 14 && node.GetInt("training_mode", 0) != 0; }

Status InferBatchNorm(InferContext& ctx) {
  RETURN_IF_ERROR(RequireInputs(ctx, 5));
  RETURN_IF_ERROR(RequireRank(ctx, 2, "N x C x D1 ..."));
  size_t outputs = 0;
  for (const std::string& name : ctx.node().outputs) outputs += !name.empty();
  if (ctx.opset() < 14 && outputs > 1) {
    return Unsupported(ctx.node().Describe() + ": training outputs before opset 14 (mean, var, saved_mean, " +
                       "saved_var) unsupported; opset 14 and later support training_mode");
  }
  const Shape& x = ctx.input(0)->shape;
  const bool per_activation = PerActivation(ctx.node(), ctx.opset());
  const int64_t count = per_activation ? Product(x, 1) : ChannelCount(x);
  const bool known = std::all_of(x.begin() + 1, x.end(), [](int64_t d) { return d >= 0; }) || !per_activation;
  for (size_t i = 1; i < 5; ++i) {
    RETURN_IF_ERROR(RequireCount(ctx, i, known ? count : -1, per_activation ? "C x D1 x ..." : "one per channel"));
  }
  ctx.SetOutput(0, ctx.input(0)->dtype, x);
  if (TrainingMode(ctx.node(), ctx.opset())) {
    ctx.SetOutput(1, ctx.input(3)->dtype, ctx.input(3)->shape);
    ctx.SetOutput(2, ctx.input(4)->dtype, ctx.input(4)->shape);
  }
  return Status::Ok();
}

// Per-channel mean and population variance (what the spec's training formula uses) over N and the
// spatial dims; two passes, so a large mean does not cancel.
void BatchStatistics(const std::vector<double>& x, int64_t channels, int64_t plane, std::vector<double>& mean,
                     std::vector<double>& var) {
  const int64_t total = static_cast<int64_t>(x.size());
  // Every channel holds the same count of values (N · plane): an exact integer division.
  const auto per_channel =
      static_cast<double>(total / std::max<int64_t>(channels, 1));  // NOLINT(bugprone-integer-division)
  mean.assign(static_cast<size_t>(channels), 0.0);
  var.assign(static_cast<size_t>(channels), 0.0);
  for (int64_t i = 0; i < total; ++i) mean[static_cast<size_t>(i / plane % channels)] += x[static_cast<size_t>(i)];
  for (double& m : mean) m /= per_channel;
  for (int64_t i = 0; i < total; ++i) {
    const size_t c = static_cast<size_t>(i / plane % channels);
    const double d = x[static_cast<size_t>(i)] - mean[c];
    var[c] += d * d;
  }
  for (double& v : var) v /= per_channel;
}

Status RunBatchNorm(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  std::vector<double> y = ToDoubles(x);
  const std::vector<double> scale = ToDoubles(*ctx.input(1)), bias = ToDoubles(*ctx.input(2));
  std::vector<double> mean = ToDoubles(*ctx.input(3)), var = ToDoubles(*ctx.input(4));
  const double epsilon = ctx.node().GetFloat("epsilon", 1e-5f);
  const int64_t plane = Product(x.shape(), 2), params = static_cast<int64_t>(scale.size());
  const bool per_activation = PerActivation(ctx.node(), ctx.opset());
  if (TrainingMode(ctx.node(), ctx.opset())) {
    if (x.numel() == 0) return ctx.Error("training mode needs a non-empty batch to take statistics from");
    if (x.dim(1) != params || static_cast<int64_t>(mean.size()) != params ||
        static_cast<int64_t>(var.size()) != params) {
      return ctx.Error("scale, B, input_mean and input_var need one value per channel (" + std::to_string(x.dim(1)) +
                       ")");
    }
    std::vector<double> batch_mean, batch_var;
    BatchStatistics(y, params, plane, batch_mean, batch_var);
    const double momentum = ctx.node().GetFloat("momentum", 0.9f);
    for (size_t c = 0; c < mean.size(); ++c) {
      mean[c] = mean[c] * momentum + batch_mean[c] * (1.0 - momentum);
      var[c] = var[c] * momentum + batch_var[c] * (1.0 - momentum);
    }
    if (ctx.output(1) != nullptr) StoreDoubles(mean, ctx.output(1));
    if (ctx.output(2) != nullptr) StoreDoubles(var, ctx.output(2));
    mean = std::move(batch_mean);
    var = std::move(batch_var);
  }
  for (size_t i = 0; i < y.size(); ++i) {
    const int64_t flat = static_cast<int64_t>(i);
    const size_t p = static_cast<size_t>(per_activation ? flat % params : flat / plane % params);
    y[i] = (y[i] - mean[p]) / std::sqrt(var[p] + epsilon) * scale[p] + bias[p];
  }
  StoreDoubles(y, ctx.output(0));
  return Status::Ok();
}

// ---- Instance, Layer and Group normalization: statistics over consecutive chunks ----------------

struct ChunkStats {
  std::vector<double> mean, inv_std;
};

// Normalizes consecutive chunks of `chunk` values in place to (x - mean) / sqrt(variance + epsilon)
// (two passes, so large means do not cancel), then `affine(flat_index, value)` applies scale and bias.
template <typename Affine>
ChunkStats NormalizeChunks(std::vector<double>& x, int64_t chunk, double epsilon, Affine affine) {
  const int64_t chunks = chunk > 0 ? static_cast<int64_t>(x.size()) / chunk : 0;
  ChunkStats stats{std::vector<double>(static_cast<size_t>(chunks)), std::vector<double>(static_cast<size_t>(chunks))};
#pragma omp parallel for
  for (int64_t c = 0; c < chunks; ++c) {
    double* p = &x[static_cast<size_t>(c * chunk)];
    double mean = 0, var = 0;
    for (int64_t i = 0; i < chunk; ++i) mean += p[i];
    mean /= static_cast<double>(chunk);
    for (int64_t i = 0; i < chunk; ++i) var += (p[i] - mean) * (p[i] - mean);
    const double inv_std = 1.0 / std::sqrt(var / static_cast<double>(chunk) + epsilon);
    for (int64_t i = 0; i < chunk; ++i) p[i] = affine(c * chunk + i, (p[i] - mean) * inv_std);
    stats.mean[static_cast<size_t>(c)] = mean;
    stats.inv_std[static_cast<size_t>(c)] = inv_std;
  }
  return stats;
}

Status InferInstanceNorm(InferContext& ctx) {
  RETURN_IF_ERROR(RequireInputs(ctx, 3));
  RETURN_IF_ERROR(RequireRank(ctx, 3, "N x C x D1 ..."));
  const int64_t channels = ChannelCount(ctx.input(0)->shape);
  for (size_t i = 1; i < 3; ++i) RETURN_IF_ERROR(RequireCount(ctx, i, channels, "one per channel"));
  ctx.SetOutput(0, ctx.input(0)->dtype, ctx.input(0)->shape);
  return Status::Ok();
}

Status RunInstanceNorm(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  std::vector<double> y = ToDoubles(x);
  const std::vector<double> scale = ToDoubles(*ctx.input(1)), bias = ToDoubles(*ctx.input(2));
  const int64_t plane = Product(x.shape(), 2), channels = x.dim(1);
  NormalizeChunks(y, plane, ctx.node().GetFloat("epsilon", 1e-5f), [&](int64_t i, double v) {
    const size_t c = static_cast<size_t>(i / plane % channels);
    return v * scale[c] + bias[c];
  });
  StoreDoubles(y, ctx.output(0));
  return Status::Ok();
}

// stash_type names the dtype of LayerNormalization's Mean and InvStdDev outputs.
Result<DType> StashType(const InferContext& ctx) {
  const int64_t stash = ctx.node().GetInt("stash_type", 1);
  const std::optional<DType> dtype = DTypeFromOnnx(static_cast<int32_t>(stash));
  if (!dtype || !IsFloatingDType(*dtype)) {
    return ctx.Error("stash_type " + std::to_string(stash) + " is not a floating-point ONNX type");
  }
  return *dtype;
}

Status InferLayerNorm(InferContext& ctx) {
  RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const Shape& x = ctx.input(0)->shape;
  ASSIGN_OR_RETURN(int64_t axis,
                   NormalizeAxis(ctx.node().GetInt("axis", -1), static_cast<int64_t>(x.size()), ctx.node()));
  for (size_t i = 1; i < 3; ++i) {
    if (ctx.input(i) != nullptr && !BroadcastsTo(ctx.input(i)->shape, x)) {
      return ctx.Error("input " + std::to_string(i) + " " + ShapeToString(ctx.input(i)->shape) +
                       " does not broadcast to X " + ShapeToString(x));
    }
  }
  ASSIGN_OR_RETURN(DType stash, StashType(ctx));
  Shape stats_shape = x;
  std::fill(stats_shape.begin() + axis, stats_shape.end(), 1);
  ctx.SetOutput(0, ctx.input(0)->dtype, x);
  ctx.SetOutput(1, stash, stats_shape);
  ctx.SetOutput(2, stash, stats_shape);
  return Status::Ok();
}

Status RunLayerNorm(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", -1), x.rank(), ctx.node()));
  std::vector<double> y = ToDoubles(x);
  const Tensor* bias_t = ctx.input(2);
  const std::vector<double> scale = ToDoubles(*ctx.input(1));
  const std::vector<double> bias = bias_t != nullptr ? ToDoubles(*bias_t) : std::vector<double>{0.0};
  const BroadcastIndexer scale_index(ctx.input(1)->shape(), x.shape());
  const BroadcastIndexer bias_index(bias_t != nullptr ? bias_t->shape() : Shape{}, x.shape());
  const ChunkStats stats = NormalizeChunks(y, Product(x.shape(), static_cast<size_t>(axis)),
                                           ctx.node().GetFloat("epsilon", 1e-5f), [&](int64_t i, double v) {
                                             return v * scale[static_cast<size_t>(scale_index(i))] +
                                                    bias[static_cast<size_t>(bias_index(i))];
                                           });
  StoreDoubles(y, ctx.output(0));
  if (ctx.output(1) != nullptr) StoreDoubles(stats.mean, ctx.output(1));
  if (ctx.output(2) != nullptr) StoreDoubles(stats.inv_std, ctx.output(2));
  return Status::Ok();
}

// GroupNormalization-18 has one scale and bias per group; opset 21 fixed that to one per channel.
Status InferGroupNorm(InferContext& ctx) {
  RETURN_IF_ERROR(RequireInputs(ctx, 3));
  RETURN_IF_ERROR(RequireRank(ctx, 2, "N x C x D1 ..."));
  if (!ctx.node().Has("num_groups")) return ctx.Error("attribute num_groups is required");
  const int64_t groups = ctx.node().GetInt("num_groups", 1), channels = ChannelCount(ctx.input(0)->shape);
  if (groups < 1 || (channels >= 0 && channels % groups != 0)) {
    return ctx.Error("num_groups " + std::to_string(groups) + " does not divide the " + std::to_string(channels) +
                     " channels");
  }
  const bool per_channel = ctx.opset() >= 21;
  for (size_t i = 1; i < 3; ++i) {
    RETURN_IF_ERROR(RequireCount(ctx, i, per_channel ? channels : groups,
                                 per_channel ? "one per channel" : "one per group before opset 21"));
  }
  if (per_channel) RETURN_IF_ERROR(StashType(ctx).status());
  ctx.SetOutput(0, ctx.input(0)->dtype, ctx.input(0)->shape);
  return Status::Ok();
}

Status RunGroupNorm(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  std::vector<double> y = ToDoubles(x);
  const std::vector<double> scale = ToDoubles(*ctx.input(1)), bias = ToDoubles(*ctx.input(2));
  const int64_t groups = ctx.node().GetInt("num_groups", 1), channels = x.dim(1), plane = Product(x.shape(), 2);
  const int64_t per_param = ctx.opset() >= 21 ? plane : plane * channels / groups;
  const int64_t params = static_cast<int64_t>(scale.size());
  NormalizeChunks(y, channels / groups * plane, ctx.node().GetFloat("epsilon", 1e-5f), [&](int64_t i, double v) {
    const size_t p = static_cast<size_t>(i / per_param % params);
    return v * scale[p] + bias[p];
  });
  StoreDoubles(y, ctx.output(0));
  return Status::Ok();
}

// ---- LRN, MeanVarianceNormalization, LpNormalization -------------------------------------------

Status InferLrn(InferContext& ctx) {
  RETURN_IF_ERROR(RequireInputs(ctx, 1));
  RETURN_IF_ERROR(RequireRank(ctx, 2, "N x C x D1 ..."));
  if (ctx.node().GetInt("size", 0) < 1) {
    return ctx.Error("attribute size must be given and >= 1, got " + std::to_string(ctx.node().GetInt("size", 0)));
  }
  ctx.SetOutput(0, ctx.input(0)->dtype, ctx.input(0)->shape);
  return Status::Ok();
}

// y = x / (bias + alpha / size * sum of x^2 over the channels [c - (size-1)/2, c + ceil((size-1)/2)])^beta
Status RunLrn(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const std::vector<double> xs = ToDoubles(x);
  std::vector<double> y(xs.size());
  const int64_t size = ctx.node().GetInt("size", 1), channels = x.dim(1), plane = Product(x.shape(), 2);
  const double alpha = ctx.node().GetFloat("alpha", 1e-4f), beta = ctx.node().GetFloat("beta", 0.75f),
               bias = ctx.node().GetFloat("bias", 1.0f);
#pragma omp parallel for
  for (int64_t i = 0; i < static_cast<int64_t>(xs.size()); ++i) {
    const int64_t c = i / plane % channels;
    double square_sum = 0;
    for (int64_t k = std::max<int64_t>(0, c - (size - 1) / 2); k <= std::min(channels - 1, c + size / 2); ++k) {
      const double v = xs[static_cast<size_t>(i + (k - c) * plane)];
      square_sum += v * v;
    }
    y[static_cast<size_t>(i)] =
        xs[static_cast<size_t>(i)] / std::pow(bias + alpha / static_cast<double>(size) * square_sum, beta);
  }
  StoreDoubles(y, ctx.output(0));
  return Status::Ok();
}

Status InferMvn(InferContext& ctx) {
  RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const int64_t rank = static_cast<int64_t>(ctx.input(0)->shape.size());
  RETURN_IF_ERROR(NormalizeAxes(ctx.node().GetInts("axes", {0, 2, 3}), rank, ctx.node()).status());
  ctx.SetOutput(0, ctx.input(0)->dtype, ctx.input(0)->shape);
  return Status::Ok();
}

// The ONNX function body: (X - mean) / (sqrt(variance) + 1e-9), statistics over `axes`.
Status RunMvn(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(std::vector<int64_t> axes,
                   NormalizeAxes(ctx.node().GetInts("axes", {0, 2, 3}), x.rank(), ctx.node()));
  Shape reduced = x.shape();
  for (int64_t a : axes) reduced[static_cast<size_t>(a)] = 1;
  const BroadcastIndexer to_reduced(reduced, x.shape());
  const std::vector<double> xs = ToDoubles(x);
  std::vector<double> mean(static_cast<size_t>(NumElements(reduced))), var(mean.size()), y(xs.size());
  const double count = static_cast<double>(x.numel()) / static_cast<double>(std::max<size_t>(1, mean.size()));
  for (size_t i = 0; i < xs.size(); ++i)
    mean[static_cast<size_t>(to_reduced(static_cast<int64_t>(i)))] += xs[i] / count;
  for (size_t i = 0; i < xs.size(); ++i) {
    const size_t r = static_cast<size_t>(to_reduced(static_cast<int64_t>(i)));
    var[r] += (xs[i] - mean[r]) * (xs[i] - mean[r]) / count;
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    const size_t r = static_cast<size_t>(to_reduced(static_cast<int64_t>(i)));
    y[i] = (xs[i] - mean[r]) / (std::sqrt(var[r]) + 1e-9);
  }
  StoreDoubles(y, ctx.output(0));
  return Status::Ok();
}

// ---- Softmax family and LpNormalization: work along one axis -------------------------------------

// Rows of `n` values spaced `inner` apart. Before opset 13 Softmax/LogSoftmax/Hardmax flatten the
// input to 2-D at `axis` (default 1) and work on whole rows; from 13 on they work along `axis`
// (default -1) alone.
struct Rows {
  int64_t outer = 1, n = 1, inner = 1;
};

Result<Rows> RowsAlong(const Node& node, const Shape& shape, int64_t axis, bool flatten) {
  ASSIGN_OR_RETURN(const int64_t a, NormalizeAxis(axis, static_cast<int64_t>(shape.size()), node));
  const size_t s = static_cast<size_t>(a);
  if (flatten) return Rows{Product(shape, 0, s), Product(shape, s), 1};
  return Rows{Product(shape, 0, s), s < shape.size() ? shape[s] : 1, Product(shape, s + 1)};
}

Result<Rows> SoftmaxRows(const Node& node, int64_t opset, const Shape& shape) {
  const bool legacy = opset < 13;
  return RowsAlong(node, shape, node.GetInt("axis", legacy ? 1 : -1), legacy);
}

Result<Rows> LpNormRows(const Node& node, int64_t, const Shape& shape) {
  return RowsAlong(node, shape, node.GetInt("axis", -1), false);
}

template <Result<Rows> (*kRows)(const Node&, int64_t, const Shape&)>
Status InferAlongAxis(InferContext& ctx) {
  RETURN_IF_ERROR(RequireInputs(ctx, 1));
  RETURN_IF_ERROR(kRows(ctx.node(), ctx.opset(), ctx.input(0)->shape).status());
  const int64_t p = ctx.node().GetInt("p", 2);
  if (ctx.node().op_type == "LpNormalization" && p != 1 && p != 2) {
    return ctx.Error("p " + std::to_string(p) + " must be 1 or 2");
  }
  ctx.SetOutput(0, ctx.input(0)->dtype, ctx.input(0)->shape);
  return Status::Ok();
}

enum class RowOp { kSoftmax, kLogSoftmax, kHardmax, kLpNorm };

// Applies `op` to every row in place; `row` holds one row's values.
void ApplyRowOp(RowOp op, int64_t p, std::vector<double>& row) {
  const auto max_it = std::max_element(row.begin(), row.end());
  const double max = *max_it;
  if (op == RowOp::kHardmax) {  // the first maximum wins ties
    const size_t arg = static_cast<size_t>(max_it - row.begin());
    std::fill(row.begin(), row.end(), 0.0);
    row[arg] = 1.0;
    return;
  }
  if (op == RowOp::kLpNorm) {
    double norm = 0;
    for (double v : row) norm += p == 1 ? std::fabs(v) : v * v;
    norm = p == 1 ? norm : std::sqrt(norm);
    // A zero row stays zero instead of 0/0 (ONNX Runtime does the same; the spec is silent).
    for (double& v : row) v = norm == 0 ? 0.0 : v / norm;
    return;
  }
  double sum = 0;  // subtracting the max keeps exp() finite for large inputs
  for (double v : row) sum += std::exp(v - max);
  for (double& v : row) v = op == RowOp::kSoftmax ? std::exp(v - max) / sum : v - max - std::log(sum);
}

template <RowOp kOp, Result<Rows> (*kRows)(const Node&, int64_t, const Shape&)>
Status RunAlongAxis(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(const Rows r, kRows(ctx.node(), ctx.opset(), x.shape()));
  std::vector<double> xs = ToDoubles(x);
  const int64_t p = ctx.node().GetInt("p", 2);
  if (r.n > 0) {
#pragma omp parallel for
    for (int64_t row_index = 0; row_index < r.outer * r.inner; ++row_index) {
      const int64_t base = row_index / r.inner * r.n * r.inner + row_index % r.inner;
      std::vector<double> row(static_cast<size_t>(r.n));
      for (int64_t j = 0; j < r.n; ++j) row[static_cast<size_t>(j)] = xs[static_cast<size_t>(base + j * r.inner)];
      ApplyRowOp(kOp, p, row);
      for (int64_t j = 0; j < r.n; ++j) xs[static_cast<size_t>(base + j * r.inner)] = row[static_cast<size_t>(j)];
    }
  }
  StoreDoubles(xs, ctx.output(0));
  return Status::Ok();
}

}  // namespace

std::vector<OpEntry> NormalizationOps() {
  return {
      {"BatchNormalization", InferBatchNorm, RunBatchNorm},
      {"InstanceNormalization", InferInstanceNorm, RunInstanceNorm},
      {"LayerNormalization", InferLayerNorm, RunLayerNorm},
      {"GroupNormalization", InferGroupNorm, RunGroupNorm},
      {"LRN", InferLrn, RunLrn},
      {"MeanVarianceNormalization", InferMvn, RunMvn},
      {"LpNormalization", InferAlongAxis<LpNormRows>, RunAlongAxis<RowOp::kLpNorm, LpNormRows>},
      {"Softmax", InferAlongAxis<SoftmaxRows>, RunAlongAxis<RowOp::kSoftmax, SoftmaxRows>},
      {"LogSoftmax", InferAlongAxis<SoftmaxRows>, RunAlongAxis<RowOp::kLogSoftmax, SoftmaxRows>},
      {"Hardmax", InferAlongAxis<SoftmaxRows>, RunAlongAxis<RowOp::kHardmax, SoftmaxRows>},
  };
}

}  // namespace chipfit
