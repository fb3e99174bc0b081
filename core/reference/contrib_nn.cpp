// Reference kernels of ONNX Runtime's contrib activations, bias ops, fused MatMul/Conv and layer norms.
//
// Semantics are what ONNX Runtime's CPU kernels compute (its contrib-op documentation where they agree):
// the Gelu family works elementwise with an optional bias along the last dim; the skip layer norms take
// rows of the last dim of X + skip (+ bias), skip also [S, H] or [1, S, H] against a [B, S, H] input;
// SimplifiedLayerNormalization (RMS norm) lives in the ONNX domain, as ORT registers it.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/reference/conv_util.h"
#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kSqrtTwoOverPi = 0.79788456080286535588;

bool Known(int64_t d) { return d >= 0; }

Status RequireInputs(const InferContext& ctx, std::initializer_list<size_t> required) {
  for (size_t i : required) {
    if (ctx.input(i) == nullptr) return ctx.Error("input " + std::to_string(i) + " is required");
  }
  return Status::Ok();
}

// Float inputs share input 0's dtype (ORT's type constraint T).
Status RequireFloatLike0(const InferContext& ctx, std::initializer_list<size_t> inputs) {
  RETURN_IF_ERROR(CheckDType(ctx, 0, kFloatDTypes));
  for (size_t i : inputs) {
    const ValueInfo* in = ctx.input(i);
    if (in != nullptr && in->dtype != ctx.input(0)->dtype) {
      return ctx.Error("input " + std::to_string(i) + " has dtype " + std::string(DTypeName(in->dtype)) +
                       " but input 0 has " + std::string(DTypeName(ctx.input(0)->dtype)));
    }
  }
  return Status::Ok();
}

// Input i, when present, must be 1-D with `length` values (unknown dims pass).
Status RequireVector(const InferContext& ctx, size_t i, int64_t length, const char* what) {
  const ValueInfo* in = ctx.input(i);
  if (in == nullptr) return Status::Ok();
  if (in->shape.size() == 1 && (!Known(length) || !Known(in->shape[0]) || in->shape[0] == length)) {
    return Status::Ok();
  }
  return ctx.Error(std::string(what) + " (input " + std::to_string(i) + ") has shape " + ShapeToString(in->shape) +
                   ", expected [" + std::to_string(length) + "]");
}

int64_t LastDim(const Shape& s) { return s.empty() ? 1 : s.back(); }

// ---- Gelu, FastGelu, BiasGelu, QuickGelu ---------------------------------------------------------

enum class GeluKind { kErf, kTanh, kQuick };

double GeluOf(GeluKind kind, double x, double alpha) {
  switch (kind) {
    case GeluKind::kErf: return 0.5 * x * (1.0 + std::erf(x * kSqrtHalf));
    case GeluKind::kTanh: return 0.5 * x * (1.0 + std::tanh(kSqrtTwoOverPi * (x + 0.044715 * x * x * x)));
    case GeluKind::kQuick: return x / (1.0 + std::exp(-alpha * x));
  }
  return x;
}

// kBias: 0 none, 1 optional (FastGelu), 2 required (BiasGelu). The bias is 1-D along X's last dim.
template <int kBias>
Status InferGelu(InferContext& ctx) {
  RETURN_IF_ERROR(
      RequireInputs(ctx, kBias == 2 ? std::initializer_list<size_t>{0, 1} : std::initializer_list<size_t>{0}));
  if (kBias == 0 && ctx.input(1) != nullptr) return ctx.Error("takes one input, got a second");
  RETURN_IF_ERROR(RequireFloatLike0(ctx, {1}));
  const Shape& x = ctx.input(0)->shape;
  if (kBias != 0) {
    if (x.empty() && ctx.input(1) != nullptr) return ctx.Error("a bias needs an input of rank >= 1");
    RETURN_IF_ERROR(RequireVector(ctx, 1, LastDim(x), "bias"));
  }
  ctx.SetOutput(0, ctx.input(0)->dtype, x);
  return Status::Ok();
}

template <GeluKind kKind>
Status RunGelu(KernelContext& ctx) {
  std::vector<double> x = ToDoubles(*ctx.input(0));
  const std::vector<double> bias = ctx.input(1) != nullptr ? ToDoubles(*ctx.input(1)) : std::vector<double>{};
  const double alpha = kKind == GeluKind::kQuick ? ctx.node().GetFloat("alpha", 1.702f) : 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i] + (bias.empty() ? 0.0 : bias[i % bias.size()]);
    x[i] = GeluOf(kKind, v, alpha);
  }
  StoreDoubles(x, ctx.output(0));
  return Status::Ok();
}

// ---- BiasAdd: X [N, S, C] + bias [C] + skip [N, S, C] (ORT has it on CUDA only) --------------------

Status InferBiasAdd(InferContext& ctx) {
  RETURN_IF_ERROR(RequireInputs(ctx, {0, 1, 2}));
  RETURN_IF_ERROR(RequireFloatLike0(ctx, {1, 2}));
  const Shape& x = ctx.input(0)->shape;
  if (x.size() != 3) return ctx.Error("X must be 3-D [N, S, C], got " + ShapeToString(x));
  RETURN_IF_ERROR(RequireVector(ctx, 1, x[2], "bias"));
  const Shape& skip = ctx.input(2)->shape;
  bool same = skip.size() == 3;
  for (size_t i = 0; same && i < 3; ++i) same = !Known(skip[i]) || !Known(x[i]) || skip[i] == x[i];
  if (!same) return ctx.Error("skip " + ShapeToString(skip) + " must have X's shape " + ShapeToString(x));
  ctx.SetOutput(0, ctx.input(0)->dtype, x);
  return Status::Ok();
}

Status RunBiasAdd(KernelContext& ctx) {
  std::vector<double> y = ToDoubles(*ctx.input(0));
  const std::vector<double> bias = ToDoubles(*ctx.input(1)), skip = ToDoubles(*ctx.input(2));
  for (size_t i = 0; i < y.size(); ++i) y[i] += bias[i % bias.size()] + skip[i];
  StoreDoubles(y, ctx.output(0));
  return Status::Ok();
}

// ---- SkipLayerNormalization, SkipSimplifiedLayerNormalization ------------------------------------
// Inputs: input [B, S, H] or [S', H], skip (input's shape, or [1, S, H] / [S, H] for a 3-D input),
// gamma [H], then beta [H] (SkipLayerNormalization only) and bias [H]. Outputs: output, mean and
// inv_std_var ([..., 1], float; mean is 0 for the simplified form, as ORT writes it), and
// input_skip_bias_sum.

template <bool kSimplified>
constexpr size_t kBiasInput = kSimplified ? 3 : 4;

// ORT's epsilon default for the skip and embed layer norms.
constexpr float kBertEpsilon = 1e-12f;

template <bool kSimplified>
Status InferSkipLayerNorm(InferContext& ctx) {
  RETURN_IF_ERROR(RequireInputs(ctx, {0, 1, 2}));
  if (kSimplified && ctx.input(4) != nullptr) return ctx.Error("takes at most 4 inputs (no beta)");
  RETURN_IF_ERROR(RequireFloatLike0(ctx, {1, 2, 3, 4}));
  const Shape& x = ctx.input(0)->shape;
  const Shape& skip = ctx.input(1)->shape;
  if (x.size() != 2 && x.size() != 3) return ctx.Error("input must be 2-D or 3-D, got " + ShapeToString(x));
  if (skip.size() != 2 && skip.size() != 3) return ctx.Error("skip must be 2-D or 3-D, got " + ShapeToString(skip));
  bool ok = skip.size() <= x.size();
  for (size_t i = 0; ok && i < skip.size(); ++i) {
    const int64_t s = skip[skip.size() - 1 - i], d = x[x.size() - 1 - i];
    // A 3-D skip against a 3-D input has the batch dim or 1 there; the last two dims always match.
    ok = !Known(s) || !Known(d) || s == d || (i == 2 && s == 1);
  }
  if (!ok) {
    return ctx.Error("skip " + ShapeToString(skip) + " must have the input's shape " + ShapeToString(x) +
                     ", or [1, S, H] or [S, H] for a 3-D input");
  }
  const int64_t hidden = x.back();
  RETURN_IF_ERROR(RequireVector(ctx, 2, hidden, "gamma"));
  if (!kSimplified) RETURN_IF_ERROR(RequireVector(ctx, 3, hidden, "beta"));
  RETURN_IF_ERROR(RequireVector(ctx, kBiasInput<kSimplified>, hidden, "bias"));
  Shape stats = x;
  stats.back() = 1;
  ctx.SetOutput(0, ctx.input(0)->dtype, x);
  ctx.SetOutput(1, DType::kF32, stats);
  ctx.SetOutput(2, DType::kF32, stats);
  ctx.SetOutput(3, ctx.input(0)->dtype, x);
  return Status::Ok();
}

// Normalises rows of `hidden` values of y in place: LayerNorm (x - mean) or RMS (x) divided by
// sqrt(variance or mean square + epsilon); returns the per-row mean (0 for RMS) and inverse deviation.
void NormalizeRows(std::vector<double>& y, int64_t hidden, double epsilon, bool rms, std::vector<double>& mean,
                   std::vector<double>& inv_std) {
  const int64_t rows = hidden > 0 ? static_cast<int64_t>(y.size()) / hidden : 0;
  mean.assign(static_cast<size_t>(rows), 0.0);
  inv_std.assign(static_cast<size_t>(rows), 0.0);
#pragma omp parallel for
  for (int64_t r = 0; r < rows; ++r) {
    double* p = &y[static_cast<size_t>(r * hidden)];
    double m = 0, var = 0;
    if (!rms) {
      for (int64_t i = 0; i < hidden; ++i) m += p[i];
      m /= static_cast<double>(hidden);
    }
    for (int64_t i = 0; i < hidden; ++i) var += (p[i] - m) * (p[i] - m);
    const double inv = 1.0 / std::sqrt(var / static_cast<double>(hidden) + epsilon);
    for (int64_t i = 0; i < hidden; ++i) p[i] = (p[i] - m) * inv;
    mean[static_cast<size_t>(r)] = m;
    inv_std[static_cast<size_t>(r)] = inv;
  }
}

template <bool kSimplified>
Status RunSkipLayerNorm(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  std::vector<double> y = ToDoubles(x);
  const std::vector<double> skip = ToDoubles(*ctx.input(1)), gamma = ToDoubles(*ctx.input(2));
  const Tensor* beta_t = kSimplified ? nullptr : ctx.input(3);
  const Tensor* bias_t = ctx.input(kBiasInput<kSimplified>);
  const std::vector<double> beta = beta_t != nullptr ? ToDoubles(*beta_t) : std::vector<double>{};
  const std::vector<double> bias = bias_t != nullptr ? ToDoubles(*bias_t) : std::vector<double>{};
  const int64_t hidden = x.shape().back();
  for (size_t i = 0; i < y.size(); ++i) {
    y[i] += skip[i % skip.size()] + (bias.empty() ? 0.0 : bias[i % bias.size()]);
  }
  if (ctx.output(3) != nullptr) StoreDoubles(y, ctx.output(3));
  std::vector<double> mean, inv_std;
  NormalizeRows(y, hidden, ctx.node().GetFloat("epsilon", kBertEpsilon), kSimplified, mean, inv_std);
  for (size_t i = 0; i < y.size(); ++i) {
    const size_t h = i % static_cast<size_t>(hidden);
    y[i] = y[i] * gamma[h] + (beta.empty() ? 0.0 : beta[h]);
  }
  StoreDoubles(y, ctx.output(0));
  if (ctx.output(1) != nullptr) StoreDoubles(mean, ctx.output(1));
  if (ctx.output(2) != nullptr) StoreDoubles(inv_std, ctx.output(2));
  return Status::Ok();
}

// ---- SimplifiedLayerNormalization (ONNX domain in ORT): RMS norm over the dims from `axis` -------------

Status InferSimplifiedLayerNorm(InferContext& ctx) {
  RETURN_IF_ERROR(RequireInputs(ctx, {0, 1}));
  if (ctx.input(2) != nullptr) return ctx.Error("takes two inputs (X, scale); ORT's form has no bias");
  RETURN_IF_ERROR(RequireFloatLike0(ctx, {1}));
  const Shape& x = ctx.input(0)->shape;
  ASSIGN_OR_RETURN(const int64_t axis,
                   NormalizeAxis(ctx.node().GetInt("axis", -1), static_cast<int64_t>(x.size()), ctx.node()));
  const Shape& scale = ctx.input(1)->shape;
  const Shape normalized(x.begin() + axis, x.end());
  if (!BroadcastsTo(scale, normalized)) {
    return ctx.Error("scale " + ShapeToString(scale) + " does not broadcast to the normalized dims " +
                     ShapeToString(normalized) + " of X " + ShapeToString(x));
  }
  const int64_t stash = ctx.node().GetInt("stash_type", 1);
  const std::optional<DType> stash_dtype = DTypeFromOnnx(static_cast<int32_t>(stash));
  if (!stash_dtype || !IsFloatingDType(*stash_dtype)) {
    return ctx.Error("stash_type " + std::to_string(stash) + " is not a floating-point ONNX type");
  }
  Shape stats = x;
  std::fill(stats.begin() + axis, stats.end(), 1);
  ctx.SetOutput(0, ctx.input(0)->dtype, x);
  ctx.SetOutput(1, *stash_dtype, stats);
  return Status::Ok();
}

Status RunSimplifiedLayerNorm(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", -1), x.rank(), ctx.node()));
  const Shape normalized(x.shape().begin() + axis, x.shape().end());
  const int64_t hidden = NumElements(normalized);
  std::vector<double> y = ToDoubles(x);
  const std::vector<double> scale = ToDoubles(*ctx.input(1));
  const BroadcastIndexer scale_index(ctx.input(1)->shape(), normalized);
  std::vector<double> mean, inv_std;
  NormalizeRows(y, hidden, ctx.node().GetFloat("epsilon", 1e-5f), true, mean, inv_std);
  for (size_t i = 0; i < y.size(); ++i) {
    y[i] *= scale[static_cast<size_t>(scale_index(static_cast<int64_t>(i) % hidden))];
  }
  StoreDoubles(y, ctx.output(0));
  if (ctx.output(1) != nullptr) StoreDoubles(inv_std, ctx.output(1));
  return Status::Ok();
}

// ---- FusedMatMul: alpha · op(A) · op(B), numpy broadcasting ------------------------------------------
// transBatchX moves X's first dim behind its batch dims ([d0, d1 … dr-2, dr-1] is read as
// [d1 … dr-2, d0, dr-1]); transX then swaps the last two. A 1-D operand is never transposed (ORT), and
// transBatch needs both operands of one rank >= 3 (ORT refuses the rest).

// The permutation giving the operand as the product reads it (identity: empty).
std::vector<int64_t> OperandPerm(size_t rank, bool trans, bool trans_batch) {
  if (rank < 2 || (!trans && !trans_batch)) return {};
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(i);
  if (trans_batch && rank >= 3) {
    for (size_t i = 0; i + 2 < rank; ++i) perm[i] = static_cast<int64_t>(i + 1);
    perm[rank - 2] = 0;
  }
  if (trans) std::swap(perm[rank - 2], perm[rank - 1]);
  return perm;
}

Shape Permuted(const Shape& s, const std::vector<int64_t>& perm) {
  if (perm.empty()) return s;
  Shape out(s.size());
  for (size_t i = 0; i < s.size(); ++i) out[i] = s[static_cast<size_t>(perm[i])];
  return out;
}

struct FusedMatMulPlan {
  std::vector<int64_t> perm_a, perm_b;
  MatMulGeometry geometry;
};

Result<FusedMatMulPlan> ReadFusedMatMul(const Node& node, const Shape& a, const Shape& b) {
  const bool batch_a = node.GetInt("transBatchA", 0) != 0, batch_b = node.GetInt("transBatchB", 0) != 0;
  if ((batch_a || batch_b) && (a.size() != b.size() || a.size() < 3)) {
    return InvalidArgument(node.Describe() + ": transBatchA/transBatchB need A and B of one rank >= 3, got " +
                           ShapeToString(a) + " and " + ShapeToString(b));
  }
  FusedMatMulPlan plan;
  plan.perm_a = OperandPerm(a.size(), node.GetInt("transA", 0) != 0, batch_a);
  plan.perm_b = OperandPerm(b.size(), node.GetInt("transB", 0) != 0, batch_b);
  ASSIGN_OR_RETURN(plan.geometry, ReadMatMul(node, Permuted(a, plan.perm_a), Permuted(b, plan.perm_b)));
  return plan;
}

Status InferFusedMatMulMs(InferContext& ctx) {
  RETURN_IF_ERROR(RequireInputs(ctx, {0, 1}));
  if (ctx.input(2) != nullptr) return ctx.Error("takes two inputs (A, B)");
  RETURN_IF_ERROR(RequireFloatLike0(ctx, {1}));
  ASSIGN_OR_RETURN(const FusedMatMulPlan plan, ReadFusedMatMul(ctx.node(), ctx.input(0)->shape, ctx.input(1)->shape));
  ctx.SetOutput(0, ctx.input(0)->dtype, plan.geometry.out);
  return Status::Ok();
}

// The values of `t` in the order Transpose(t, perm) holds them.
std::vector<double> PermutedValues(const Tensor& t, const std::vector<int64_t>& perm) {
  std::vector<double> v = ToDoubles(t);
  if (perm.empty()) return v;
  const Shape out_shape = Permuted(t.shape(), perm);
  const std::vector<int64_t> strides = Strides(t.shape());
  std::vector<double> out(v.size());
  std::vector<int64_t> index(out_shape.size(), 0);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < index.size(); ++d) src += index[d] * strides[static_cast<size_t>(perm[d])];
    out[i] = v[static_cast<size_t>(src)];
    NextIndex(index, out_shape);
  }
  return out;
}

Status RunFusedMatMulMs(KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  ASSIGN_OR_RETURN(const FusedMatMulPlan plan, ReadFusedMatMul(ctx.node(), a.shape(), b.shape()));
  const MatMulGeometry& g = plan.geometry;
  const std::vector<double> av = PermutedValues(a, plan.perm_a), bv = PermutedValues(b, plan.perm_b);
  const double alpha = ctx.node().GetFloat("alpha", 1.0f);
  const BroadcastIndexer a_index(g.a_batch, g.batch), b_index(g.b_batch, g.batch);
  const int64_t rows = Product(g.batch) * g.m;
  std::vector<double> y(static_cast<size_t>(rows * g.n));
#pragma omp parallel for
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t batch = r / g.m;
    const double* ap = &av[static_cast<size_t>((a_index(batch) * g.m + r % g.m) * g.k)];
    const double* bp = &bv[static_cast<size_t>(b_index(batch) * g.k * g.n)];
    double* yp = &y[static_cast<size_t>(r * g.n)];
    for (int64_t i = 0; i < g.k; ++i) {
      for (int64_t j = 0; j < g.n; ++j) yp[j] += ap[i] * bp[i * g.n + j];
    }
    for (int64_t j = 0; j < g.n; ++j) yp[j] *= alpha;
  }
  StoreDoubles(y, ctx.output(0));
  return Status::Ok();
}

// ---- FusedConv (com.microsoft): activation(Conv(X, W, B) + Z) ------------------------------------------
// chipfit's own FusedConv (com.chipfit) computes the same with a wider activation set and extra
// attributes; the checks here keep to what ORT accepts, then its shape function and kernel run.

struct OrtActivation {
  const char* name;
  size_t params;  // activation_params ORT requires (0: any count, ignored)
};
constexpr OrtActivation kOrtActivations[] = {{"Relu", 0},      {"Tanh", 0},        {"Sigmoid", 0}, {"HardSwish", 0},
                                             {"LeakyRelu", 1}, {"HardSigmoid", 2}, {"Clip", 2}};

Status CheckOrtFusedConv(const Node& node) {
  for (const char* attr : {"clamp_min", "clamp_max", "post_scale", "post_shift"}) {
    if (node.Has(attr)) {
      return Unsupported(node.Describe() + ": attribute '" + attr +
                         "' is chipfit's (com.chipfit FusedConv), not ONNX Runtime's FusedConv");
    }
  }
  if (!node.Has("activation")) {
    if (node.Has("activation_params"))
      return InvalidArgument(node.Describe() + ": activation_params without activation");
    return Status::Ok();
  }
  const std::string name = node.GetString("activation", "");
  const size_t given = node.GetFloats("activation_params").size();
  for (const OrtActivation& act : kOrtActivations) {
    if (name != act.name) continue;
    if (act.params != 0 && given != act.params) {
      return InvalidArgument(node.Describe() + ": activation '" + name + "' needs " + std::to_string(act.params) +
                             " activation_params, got " + std::to_string(given) + " (ONNX Runtime has no defaults)");
    }
    return Status::Ok();
  }
  return Unsupported(node.Describe() + ": activation '" + name +
                     "' is not one ONNX Runtime's FusedConv applies (Relu, Tanh, Sigmoid, HardSwish, LeakyRelu, "
                     "HardSigmoid, Clip)");
}

Status InferFusedConvMs(InferContext& ctx) {
  RETURN_IF_ERROR(CheckOrtFusedConv(ctx.node()));
  if (ctx.input(0) == nullptr || ctx.input(1) == nullptr) return ctx.Error("inputs X and W are required");
  if (ctx.input(0)->dtype != DType::kF32) {
    return Unsupported(ctx.node().Describe() + ": dtype " + std::string(DTypeName(ctx.input(0)->dtype)) +
                       " (ONNX Runtime's FusedConv is float only)");
  }
  RETURN_IF_ERROR(InferFusedConv(ctx));
  const ValueInfo* z = ctx.input(3);
  const Shape& y = ctx.outputs()[0].shape;
  if (z != nullptr && !(z->shape.size() == y.size() && BroadcastsTo(y, z->shape) && BroadcastsTo(z->shape, y))) {
    return ctx.Error("Z " + ShapeToString(z->shape) + " must have the output's shape " + ShapeToString(y));
  }
  return Status::Ok();
}

Status RunFusedConvMs(KernelContext& ctx) {
  RETURN_IF_ERROR(CheckOrtFusedConv(ctx.node()));
  return RunFusedConv(ctx);
}

// ---- EmbedLayerNormalization -----------------------------------------------------------------------
// LayerNorm(word[input_ids] + position[position_ids or s] + segment[segment_ids]) per token; mask_index
// counts the 1s of each mask row (0 without a mask). ORT's CPU kernel writes that count whatever
// mask_index_type says, so this does too.

enum EmbedInput : size_t { kIds, kSegIds, kWordEmb, kPosEmb, kSegEmb, kGamma, kBeta, kMask, kPosIds };

Status InferEmbedLayerNorm(InferContext& ctx) {
  RETURN_IF_ERROR(RequireInputs(ctx, {kIds, kWordEmb, kPosEmb, kGamma, kBeta}));
  if ((ctx.input(kSegIds) == nullptr) != (ctx.input(kSegEmb) == nullptr)) {
    return ctx.Error("segment_ids and segment_embedding come together or not at all");
  }
  for (size_t i : {kIds, kSegIds, kMask, kPosIds}) RETURN_IF_ERROR(CheckDType(ctx, i, {DType::kI32}));
  const ValueInfo* word = ctx.input(kWordEmb);
  RETURN_IF_ERROR(CheckDType(ctx, kWordEmb, kFloatDTypes));
  for (size_t i : {kPosEmb, kSegEmb, kGamma, kBeta}) {
    if (ctx.input(i) != nullptr && ctx.input(i)->dtype != word->dtype) {
      return ctx.Error("input " + std::to_string(i) + " must have word_embedding's dtype " +
                       std::string(DTypeName(word->dtype)));
    }
  }
  const Shape& ids = ctx.input(kIds)->shape;
  if (ids.size() != 2) return ctx.Error("input_ids must be 2-D [batch, sequence], got " + ShapeToString(ids));
  for (size_t i : {kSegIds, kMask}) {
    if (ctx.input(i) != nullptr && ctx.input(i)->shape.size() != 2) {
      return ctx.Error("input " + std::to_string(i) + " must have input_ids' shape " + ShapeToString(ids));
    }
  }
  if (word->shape.size() != 2) return ctx.Error("word_embedding must be 2-D, got " + ShapeToString(word->shape));
  const int64_t hidden = word->shape[1];
  for (size_t i : {kPosEmb, kSegEmb}) {
    const ValueInfo* e = ctx.input(i);
    if (e != nullptr && (e->shape.size() != 2 || (Known(e->shape[1]) && Known(hidden) && e->shape[1] != hidden))) {
      return ctx.Error("input " + std::to_string(i) + " " + ShapeToString(e->shape) + " must be 2-D [*, " +
                       std::to_string(hidden) + "]");
    }
  }
  RETURN_IF_ERROR(RequireVector(ctx, kGamma, hidden, "gamma"));
  RETURN_IF_ERROR(RequireVector(ctx, kBeta, hidden, "beta"));
  if (const ValueInfo* pos = ctx.input(kPosIds); pos != nullptr && pos->shape.size() != 2) {
    return ctx.Error("position_ids must be [batch, sequence] or [1, sequence], got " + ShapeToString(pos->shape));
  }
  ctx.SetOutput(0, word->dtype, {ids[0], ids[1], hidden});
  ctx.SetOutput(1, DType::kI32, {ids[0]});
  ctx.SetOutput(2, word->dtype, {ids[0], ids[1], hidden});
  return Status::Ok();
}

// Row `id` of a [rows, hidden] table, or an error naming the table and the id.
Result<const double*> EmbeddingRow(const KernelContext& ctx, const std::vector<double>& table, int64_t rows,
                                   int64_t hidden, int64_t id, const char* what) {
  if (id < 0 || id >= rows) {
    return ctx.Error(std::string(what) + " " + std::to_string(id) + " is out of range [0, " + std::to_string(rows) +
                     ")");
  }
  return &table[static_cast<size_t>(id * hidden)];
}

Status CheckEmbedRunShapes(const KernelContext& ctx) {
  const Shape& ids = ctx.input(kIds)->shape();
  for (size_t i : {kSegIds, kMask}) {
    if (ctx.input(i) != nullptr && ctx.input(i)->shape() != ids) {
      return ctx.Error("input " + std::to_string(i) + " " + ShapeToString(ctx.input(i)->shape()) +
                       " must have input_ids' shape " + ShapeToString(ids));
    }
  }
  if (const Tensor* pos = ctx.input(kPosIds);
      pos != nullptr && (pos->dim(1) != ids[1] || (pos->dim(0) != 1 && pos->dim(0) != ids[0]))) {
    return ctx.Error("position_ids " + ShapeToString(pos->shape()) + " must be [" + std::to_string(ids[0]) + " or 1, " +
                     std::to_string(ids[1]) + "]");
  }
  return Status::Ok();
}

Status RunEmbedLayerNorm(KernelContext& ctx) {
  RETURN_IF_ERROR(CheckEmbedRunShapes(ctx));
  const Shape& ids_shape = ctx.input(kIds)->shape();
  const int64_t batch = ids_shape[0], seq = ids_shape[1], hidden = ctx.input(kWordEmb)->dim(1);
  const std::vector<int64_t> ids = ctx.input(kIds)->ToInt64Vector();
  const Tensor* seg_t = ctx.input(kSegIds);
  const Tensor* pos_t = ctx.input(kPosIds);
  const std::vector<int64_t> seg = seg_t != nullptr ? seg_t->ToInt64Vector() : std::vector<int64_t>{};
  const std::vector<int64_t> pos = pos_t != nullptr ? pos_t->ToInt64Vector() : std::vector<int64_t>{};
  const std::vector<double> word = ToDoubles(*ctx.input(kWordEmb)), position = ToDoubles(*ctx.input(kPosEmb));
  const std::vector<double> segment = seg_t != nullptr ? ToDoubles(*ctx.input(kSegEmb)) : std::vector<double>{};
  const std::vector<double> gamma = ToDoubles(*ctx.input(kGamma)), beta = ToDoubles(*ctx.input(kBeta));
  std::vector<double> y(static_cast<size_t>(batch * seq * hidden));
  for (int64_t t = 0; t < batch * seq; ++t) {
    const int64_t s = t % seq;
    const int64_t p = pos.empty() ? s : pos[static_cast<size_t>(pos.size() == static_cast<size_t>(seq) ? s : t)];
    ASSIGN_OR_RETURN(const double* w, EmbeddingRow(ctx, word, ctx.input(kWordEmb)->dim(0), hidden,
                                                   ids[static_cast<size_t>(t)], "input_ids value"));
    ASSIGN_OR_RETURN(const double* pe, EmbeddingRow(ctx, position, ctx.input(kPosEmb)->dim(0), hidden, p, "position"));
    const double* se = nullptr;
    if (!seg.empty()) {
      ASSIGN_OR_RETURN(se, EmbeddingRow(ctx, segment, ctx.input(kSegEmb)->dim(0), hidden, seg[static_cast<size_t>(t)],
                                        "segment_ids value"));
    }
    double* yp = &y[static_cast<size_t>(t * hidden)];
    for (int64_t h = 0; h < hidden; ++h) yp[h] = w[h] + pe[h] + (se != nullptr ? se[h] : 0.0);
  }
  if (ctx.output(2) != nullptr) StoreDoubles(y, ctx.output(2));
  std::vector<double> mean, inv_std;
  NormalizeRows(y, hidden, ctx.node().GetFloat("epsilon", kBertEpsilon), false, mean, inv_std);
  for (size_t i = 0; i < y.size(); ++i) {
    y[i] = y[i] * gamma[i % static_cast<size_t>(hidden)] + beta[i % static_cast<size_t>(hidden)];
  }
  StoreDoubles(y, ctx.output(0));
  if (Tensor* mask_index = ctx.output(1)) {
    const std::vector<int64_t> mask =
        ctx.input(kMask) != nullptr ? ctx.input(kMask)->ToInt64Vector() : std::vector<int64_t>{};
    for (int64_t b = 0; b < batch; ++b) {
      int32_t count = 0;
      for (int64_t s = 0; s < seq && !mask.empty(); ++s) count += mask[static_cast<size_t>(b * seq + s)] == 1;
      mask_index->data<int32_t>()[b] = count;
    }
  }
  return Status::Ok();
}

}  // namespace

std::vector<OpEntry> ContribNnOps() {
  return {
      {"Gelu", InferGelu<0>, RunGelu<GeluKind::kErf>, kMicrosoftDomain},
      {"FastGelu", InferGelu<1>, RunGelu<GeluKind::kTanh>, kMicrosoftDomain},
      {"BiasGelu", InferGelu<2>, RunGelu<GeluKind::kErf>, kMicrosoftDomain},
      {"QuickGelu", InferGelu<0>, RunGelu<GeluKind::kQuick>, kMicrosoftDomain},
      {"BiasAdd", InferBiasAdd, RunBiasAdd, kMicrosoftDomain},
      {"SkipLayerNormalization", InferSkipLayerNorm<false>, RunSkipLayerNorm<false>, kMicrosoftDomain},
      {"SkipSimplifiedLayerNormalization", InferSkipLayerNorm<true>, RunSkipLayerNorm<true>, kMicrosoftDomain},
      {"SimplifiedLayerNormalization", InferSimplifiedLayerNorm, RunSimplifiedLayerNorm, ""},
      {"FusedMatMul", InferFusedMatMulMs, RunFusedMatMulMs, kMicrosoftDomain},
      {"FusedConv", InferFusedConvMs, RunFusedConvMs, kMicrosoftDomain},
      {"EmbedLayerNormalization", InferEmbedLayerNorm, RunEmbedLayerNorm, kMicrosoftDomain},
  };
}

}  // namespace chipfit
