// Reference kernels: MatMul (numpy semantics), MatMulInteger and Gemm.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/reference/conv_util.h"
#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

// Floating inputs accumulate in double; integer inputs in uint64 so that overflow wraps like the
// two's-complement hardware it models instead of being undefined.
template <typename T>
constexpr bool kIsInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

std::vector<uint64_t> ToWrapped(const Tensor& t) {
  std::vector<uint64_t> out(static_cast<size_t>(t.numel()));
  VisitDType(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsInteger<T>) {
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint64_t>(static_cast<int64_t>(t.data<T>()[i]));
    }
    return 0;
  });
  return out;
}

// values[i] -= zero_point[index(i) % count]: the modulo makes a scalar, a per-row vector and a
// per-row tensor with batch dims all work with one index function.
template <typename Index>
void SubtractZeroPoint(std::vector<uint64_t>& values, const Tensor* zero_point, Index index) {
  if (zero_point == nullptr || zero_point->numel() == 0) return;
  const std::vector<uint64_t> zp = ToWrapped(*zero_point);
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] -= zp[static_cast<size_t>(index(static_cast<int64_t>(i)) % static_cast<int64_t>(zp.size()))];
  }
}

void StoreWrapped(const std::vector<uint64_t>& values, Tensor* out) {
  VisitDType(out->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsInteger<T>) {
      for (size_t i = 0; i < values.size(); ++i) out->data<T>()[i] = static_cast<T>(values[i]);
    }
    return 0;
  });
}

// Batch dims broadcast like numpy; a dim < 0 is unknown and takes the other side's size.
Result<Shape> BroadcastBatch(const Node& node, const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da >= 0 && db >= 0 && da != db && da != 1 && db != 1) {
      return InvalidArgument(node.Describe() + ": batch dims " + ShapeToString(a) + " and " + ShapeToString(b) +
                             " do not broadcast");
    }
    out[i] = da == 1 ? db : (db == 1 ? da : std::max(da, db));
  }
  return out;
}

}  // namespace

Result<MatMulGeometry> ReadMatMul(const Node& node, const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) {
    return InvalidArgument(node.Describe() + ": inputs must have rank >= 1, got " + ShapeToString(a) + " and " +
                           ShapeToString(b));
  }
  MatMulGeometry g;
  g.a_batch = a.size() > 2 ? Shape(a.begin(), a.end() - 2) : Shape{};
  g.b_batch = b.size() > 2 ? Shape(b.begin(), b.end() - 2) : Shape{};
  g.m = a.size() == 1 ? 1 : a[a.size() - 2];
  g.k = a.back();
  const int64_t bk = b.size() == 1 ? b[0] : b[b.size() - 2];
  g.n = b.size() == 1 ? 1 : b.back();
  if (g.k >= 0 && bk >= 0 && g.k != bk) {
    return InvalidArgument(node.Describe() + ": inner dims differ: A " + ShapeToString(a) + " and B " +
                           ShapeToString(b));
  }
  if (g.k < 0) g.k = bk;
  ASSIGN_OR_RETURN(g.batch, BroadcastBatch(node, g.a_batch, g.b_batch));
  g.out = g.batch;
  if (a.size() > 1) g.out.push_back(g.m);
  if (b.size() > 1) g.out.push_back(g.n);
  return g;
}

namespace {

template <typename Acc>
std::vector<Acc> MatMulCore(const MatMulGeometry& g, const std::vector<Acc>& a, const std::vector<Acc>& b) {
  const BroadcastIndexer a_index(g.a_batch, g.batch), b_index(g.b_batch, g.batch);
  const int64_t rows = Product(g.batch) * g.m;
  std::vector<Acc> y(static_cast<size_t>(rows * g.n));
#pragma omp parallel for
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t batch = r / g.m;
    const Acc* ap = &a[static_cast<size_t>((a_index(batch) * g.m + r % g.m) * g.k)];
    const Acc* bp = &b[static_cast<size_t>(b_index(batch) * g.k * g.n)];
    Acc* yp = &y[static_cast<size_t>(r * g.n)];  // row-wise updates walk B contiguously
    for (int64_t i = 0; i < g.k; ++i) {
      for (int64_t j = 0; j < g.n; ++j) yp[j] += ap[i] * bp[i * g.n + j];
    }
  }
  return y;
}

const std::vector<DType> kMatMulDTypes = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16,
                                          DType::kI8,  DType::kU8,  DType::kI16, DType::kU16,
                                          DType::kI32, DType::kU32, DType::kI64, DType::kU64};

Status CheckSameDType(const InferContext& ctx, size_t i, size_t j) {
  if (ctx.input(i)->dtype == ctx.input(j)->dtype) return Status::Ok();
  return ctx.Error("inputs " + std::to_string(i) + " and " + std::to_string(j) + " have different dtypes " +
                   std::string(DTypeName(ctx.input(i)->dtype)) + " and " + std::string(DTypeName(ctx.input(j)->dtype)));
}

Status InferMatMul(InferContext& ctx) {
  if (ctx.input(0) == nullptr || ctx.input(1) == nullptr) return ctx.Error("inputs A and B are required");
  RETURN_IF_ERROR(CheckDType(ctx, 0, kMatMulDTypes));
  RETURN_IF_ERROR(CheckSameDType(ctx, 0, 1));
  ASSIGN_OR_RETURN(MatMulGeometry g, ReadMatMul(ctx.node(), ctx.input(0)->shape, ctx.input(1)->shape));
  ctx.SetOutput(0, ctx.input(0)->dtype, g.out);
  return Status::Ok();
}

Status RunMatMul(KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  ASSIGN_OR_RETURN(MatMulGeometry g, ReadMatMul(ctx.node(), a.shape(), b.shape()));
  if (IsFloatingDType(a.dtype())) {
    StoreDoubles(MatMulCore(g, ToDoubles(a), ToDoubles(b)), ctx.output(0));
  } else {
    StoreWrapped(MatMulCore(g, ToWrapped(a), ToWrapped(b)), ctx.output(0));
  }
  return Status::Ok();
}

// MatMulInteger zero points: A's is a scalar or one per row ([M] or [D..., M, 1]); B's a scalar or
// one per column ([N] or [D..., 1, N]).
Status InferMatMulInteger(InferContext& ctx) {
  if (ctx.input(0) == nullptr || ctx.input(1) == nullptr) return ctx.Error("inputs A and B are required");
  for (size_t i = 0; i < 4; ++i) RETURN_IF_ERROR(CheckDType(ctx, i, {DType::kU8, DType::kI8}));
  ASSIGN_OR_RETURN(MatMulGeometry g, ReadMatMul(ctx.node(), ctx.input(0)->shape, ctx.input(1)->shape));
  const int64_t per_a[] = {1, g.m, Product(g.a_batch) * g.m};
  const int64_t per_b[] = {1, g.n, Product(g.b_batch) * g.n};
  const bool known = std::min({g.m, g.n}) >= 0 &&
                     std::all_of(g.a_batch.begin(), g.a_batch.end(), [](int64_t d) { return d >= 0; }) &&
                     std::all_of(g.b_batch.begin(), g.b_batch.end(), [](int64_t d) { return d >= 0; });
  for (size_t i = 2; i < 4 && known; ++i) {
    if (ctx.input(i) == nullptr || NumElements(ctx.input(i)->shape) < 0) continue;
    const int64_t count = NumElements(ctx.input(i)->shape);
    const int64_t* allowed = i == 2 ? per_a : per_b;
    if (count != allowed[0] && count != allowed[1] && count != allowed[2]) {
      return ctx.Error(std::string(i == 2 ? "a" : "b") + "_zero_point " + ShapeToString(ctx.input(i)->shape) +
                       " is neither a scalar nor one value per " + (i == 2 ? "row of A" : "column of B"));
    }
  }
  ctx.SetOutput(0, DType::kI32, g.out);
  return Status::Ok();
}

Status RunMatMulInteger(KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  ASSIGN_OR_RETURN(MatMulGeometry g, ReadMatMul(ctx.node(), a.shape(), b.shape()));
  std::vector<uint64_t> as = ToWrapped(a), bs = ToWrapped(b);
  SubtractZeroPoint(as, ctx.input(2), [&](int64_t i) { return i / g.k; });                          // row of A
  SubtractZeroPoint(bs, ctx.input(3), [&](int64_t i) { return i / (g.k * g.n) * g.n + i % g.n; });  // column of B
  StoreWrapped(MatMulCore(g, as, bs), ctx.output(0));
  return Status::Ok();
}

struct GemmGeometry {
  int64_t m, k, n;
};

Result<GemmGeometry> ReadGemm(const Node& node, const Shape& a, const Shape& b) {
  if (a.size() != 2 || b.size() != 2) {
    return InvalidArgument(node.Describe() + ": A and B must be 2-D, got " + ShapeToString(a) + " and " +
                           ShapeToString(b));
  }
  const bool ta = node.GetInt("transA", 0) != 0, tb = node.GetInt("transB", 0) != 0;
  GemmGeometry g{ta ? a[1] : a[0], ta ? a[0] : a[1], tb ? b[0] : b[1]};
  const int64_t bk = tb ? b[1] : b[0];
  if (g.k >= 0 && bk >= 0 && g.k != bk) {
    return InvalidArgument(node.Describe() + ": inner dims differ: A " + ShapeToString(a) + (ta ? " (transA)" : "") +
                           " and B " + ShapeToString(b) + (tb ? " (transB)" : ""));
  }
  return g;
}

Status InferGemm(InferContext& ctx) {
  if (ctx.input(0) == nullptr || ctx.input(1) == nullptr) return ctx.Error("inputs A and B are required");
  const ValueInfo* c = ctx.input(2);
  RETURN_IF_ERROR(CheckDType(ctx, 0, kMatMulDTypes));
  RETURN_IF_ERROR(CheckSameDType(ctx, 0, 1));
  if (c != nullptr) RETURN_IF_ERROR(CheckSameDType(ctx, 0, 2));
  ASSIGN_OR_RETURN(GemmGeometry g, ReadGemm(ctx.node(), ctx.input(0)->shape, ctx.input(1)->shape));
  if (c != nullptr && !BroadcastsTo(c->shape, {g.m, g.n})) {
    return ctx.Error("C " + ShapeToString(c->shape) + " does not broadcast to " + ShapeToString({g.m, g.n}));
  }
  if (!IsFloatingDType(ctx.input(0)->dtype)) {
    for (const char* name : {"alpha", "beta"}) {
      const float v = ctx.node().GetFloat(name, 1.0f);
      if (v != std::trunc(v)) {
        return Unsupported(ctx.node().Describe() + ": " + name + " " + std::to_string(v) +
                           " is not an integer, which integer Gemm cannot apply exactly");
      }
    }
  }
  ctx.SetOutput(0, ctx.input(0)->dtype, {g.m, g.n});
  return Status::Ok();
}

template <typename Acc>
std::vector<Acc> Transposed(const std::vector<Acc>& v, int64_t rows, int64_t cols) {
  std::vector<Acc> t(v.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) t[static_cast<size_t>(c * rows + r)] = v[static_cast<size_t>(r * cols + c)];
  }
  return t;
}

template <typename Acc>
std::vector<Acc> GemmCompute(const KernelContext& ctx, const GemmGeometry& g, std::vector<Acc> a, std::vector<Acc> b,
                             const std::vector<Acc>& c, Acc alpha, Acc beta) {
  if (ctx.node().GetInt("transA", 0) != 0) a = Transposed(a, g.k, g.m);
  if (ctx.node().GetInt("transB", 0) != 0) b = Transposed(b, g.n, g.k);
  MatMulGeometry mm;
  mm.m = g.m;
  mm.k = g.k;
  mm.n = g.n;
  std::vector<Acc> y = MatMulCore(mm, a, b);
  const Tensor* ct = ctx.input(2);
  const BroadcastIndexer c_index(ct != nullptr ? ct->shape() : Shape{}, {g.m, g.n});
  for (size_t i = 0; i < y.size(); ++i) {
    y[i] = alpha * y[i] + (ct != nullptr ? beta * c[static_cast<size_t>(c_index(static_cast<int64_t>(i)))] : Acc{0});
  }
  return y;
}

Status RunGemm(KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  const Tensor* c = ctx.input(2);
  ASSIGN_OR_RETURN(GemmGeometry g, ReadGemm(ctx.node(), a.shape(), b.shape()));
  const double alpha = ctx.node().GetFloat("alpha", 1.0f), beta = ctx.node().GetFloat("beta", 1.0f);
  if (IsFloatingDType(a.dtype())) {
    const std::vector<double> cs = c != nullptr ? ToDoubles(*c) : std::vector<double>{};
    StoreDoubles(GemmCompute(ctx, g, ToDoubles(a), ToDoubles(b), cs, alpha, beta), ctx.output(0));
  } else {
    const std::vector<uint64_t> cs = c != nullptr ? ToWrapped(*c) : std::vector<uint64_t>{};
    const auto wrap = [](double v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); };
    StoreWrapped(GemmCompute(ctx, g, ToWrapped(a), ToWrapped(b), cs, wrap(alpha), wrap(beta)), ctx.output(0));
  }
  return Status::Ok();
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// FusedMatMul (com.chipfit, written by FuseMatMulBiasActivation and FoldTransposesIntoMatMul):
//   Y = Transpose(activation(alpha · MatMul(Transpose(A, perm_a), Transpose(B, perm_b)) + bias), perm_y)
//   bias [N] (optional), activation "", Relu, Gelu (the erf form) or GeluTanh (the tanh approximation),
//   alpha (default 1), perm_a / perm_b / perm_y (optional permutations, as Transpose's perm). With a bias,
//   an activation or an alpha the inputs are float32; otherwise any type MatMul takes.

namespace {

enum class MatMulActivation { kNone, kRelu, kGelu, kGeluTanh };

Result<MatMulActivation> ReadMatMulActivation(const Node& node) {
  const std::string name = node.GetString("activation", "");
  if (name.empty()) return MatMulActivation::kNone;
  if (name == "Relu") return MatMulActivation::kRelu;
  if (name == "Gelu") return MatMulActivation::kGelu;
  if (name == "GeluTanh") return MatMulActivation::kGeluTanh;
  return InvalidArgument(node.Describe() + ": activation '" + name + "' is not one of Relu, Gelu, GeluTanh");
}

// The formulas of the ops the pattern replaced (in double: fusing changes only the rounding).
double ActivateMatMul(MatMulActivation act, double x) {
  switch (act) {
    case MatMulActivation::kNone: return x;
    case MatMulActivation::kRelu: return x < 0 ? 0.0 : x;
    case MatMulActivation::kGelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case MatMulActivation::kGeluTanh: {
      const double c = std::sqrt(2.0 / std::acos(-1.0));
      return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
    }
  }
  return x;
}

Shape PermutedShape(const Shape& shape, const std::vector<int64_t>& perm) {
  if (perm.empty()) return shape;
  Shape out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = shape[static_cast<size_t>(perm[i])];
  return out;
}

// Transpose(values of `shape`, perm), row-major.
template <typename T>
std::vector<T> PermuteValues(const std::vector<T>& values, const Shape& shape, const std::vector<int64_t>& perm) {
  if (perm.empty()) return values;
  const size_t rank = shape.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t i = rank; i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  const Shape out_shape = PermutedShape(shape, perm);
  std::vector<T> out(values.size());
  std::vector<int64_t> index(rank, 0);
  for (size_t o = 0; o < out.size(); ++o) {
    int64_t from = 0;
    for (size_t d = 0; d < rank; ++d) from += index[d] * strides[static_cast<size_t>(perm[d])];
    out[o] = values[static_cast<size_t>(from)];
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < out_shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

struct FusedMatMulAttrs {
  MatMulActivation activation = MatMulActivation::kNone;
  double alpha = 1.0;
  std::vector<int64_t> perm_a, perm_b, perm_y;
};

Result<FusedMatMulAttrs> ReadFusedMatMul(const Node& node, const Shape& a, const Shape& b) {
  FusedMatMulAttrs f;
  ASSIGN_OR_RETURN(f.activation, ReadMatMulActivation(node));
  f.alpha = node.GetFloat("alpha", 1.0f);
  ASSIGN_OR_RETURN(f.perm_a, ReadMatMulPerm(node, "perm_a", a.size()));
  ASSIGN_OR_RETURN(f.perm_b, ReadMatMulPerm(node, "perm_b", b.size()));
  return f;
}

}  // namespace

Result<std::vector<int64_t>> ReadMatMulPerm(const Node& node, const char* attr, size_t rank) {
  std::vector<int64_t> perm = node.GetInts(attr);
  if (perm.empty()) return perm;
  std::vector<bool> seen(rank, false);
  bool valid = perm.size() == rank;
  for (size_t i = 0; valid && i < perm.size(); ++i) {
    valid = perm[i] >= 0 && perm[i] < static_cast<int64_t>(rank) && !seen[static_cast<size_t>(perm[i])];
    if (valid) seen[static_cast<size_t>(perm[i])] = true;
  }
  if (!valid) {
    return InvalidArgument(node.Describe() + ": " + attr + " is not a permutation of the " + std::to_string(rank) +
                           " dims of its value");
  }
  return perm;
}

Status InferFusedMatMul(InferContext& ctx) {
  if (ctx.input(0) == nullptr || ctx.input(1) == nullptr) return ctx.Error("inputs A and B are required");
  RETURN_IF_ERROR(CheckDType(ctx, 0, kMatMulDTypes));
  RETURN_IF_ERROR(CheckSameDType(ctx, 0, 1));
  ASSIGN_OR_RETURN(const FusedMatMulAttrs f, ReadFusedMatMul(ctx.node(), ctx.input(0)->shape, ctx.input(1)->shape));
  ASSIGN_OR_RETURN(MatMulGeometry g, ReadMatMul(ctx.node(), PermutedShape(ctx.input(0)->shape, f.perm_a),
                                                PermutedShape(ctx.input(1)->shape, f.perm_b)));
  const ValueInfo* bias = ctx.input(2);
  const bool arithmetic = bias != nullptr || f.activation != MatMulActivation::kNone || f.alpha != 1.0;
  if (arithmetic && ctx.input(0)->dtype != DType::kF32) {
    return ctx.Error("A must be float32 with a bias, an activation or an alpha");
  }
  if (bias != nullptr) {
    const int64_t n = g.out.empty() ? 1 : g.out.back();
    if (bias->dtype != DType::kF32 || bias->shape.size() != 1 ||
        (n >= 0 && bias->shape[0] >= 0 && bias->shape[0] != n)) {
      return ctx.Error("bias must be float32 [" + std::to_string(n) + "], got " + ShapeToString(bias->shape));
    }
  }
  ASSIGN_OR_RETURN(const std::vector<int64_t> perm_y, ReadMatMulPerm(ctx.node(), "perm_y", g.out.size()));
  ctx.SetOutput(0, ctx.input(0)->dtype, PermutedShape(g.out, perm_y));
  return Status::Ok();
}

Status RunFusedMatMul(KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  ASSIGN_OR_RETURN(const FusedMatMulAttrs f, ReadFusedMatMul(ctx.node(), a.shape(), b.shape()));
  ASSIGN_OR_RETURN(MatMulGeometry g,
                   ReadMatMul(ctx.node(), PermutedShape(a.shape(), f.perm_a), PermutedShape(b.shape(), f.perm_b)));
  ASSIGN_OR_RETURN(const std::vector<int64_t> perm_y, ReadMatMulPerm(ctx.node(), "perm_y", g.out.size()));
  if (!IsFloatingDType(a.dtype())) {
    const std::vector<uint64_t> y = MatMulCore(g, PermuteValues(ToWrapped(a), a.shape(), f.perm_a),
                                               PermuteValues(ToWrapped(b), b.shape(), f.perm_b));
    StoreWrapped(PermuteValues(y, g.out, perm_y), ctx.output(0));
    return Status::Ok();
  }
  std::vector<double> y =
      MatMulCore(g, PermuteValues(ToDoubles(a), a.shape(), f.perm_a), PermuteValues(ToDoubles(b), b.shape(), f.perm_b));
  if (f.alpha != 1.0) {
    for (double& v : y) v *= f.alpha;
  }
  if (const Tensor* bias = ctx.input(2)) {
    const std::vector<double> bs = ToDoubles(*bias);
    if (bs.empty()) return ctx.Error("empty bias");
    for (size_t i = 0; i < y.size(); ++i) y[i] += bs[i % bs.size()];
  }
  if (f.activation != MatMulActivation::kNone) {
    for (double& v : y) v = ActivateMatMul(f.activation, v);
  }
  StoreDoubles(PermuteValues(y, g.out, perm_y), ctx.output(0));
  return Status::Ok();
}

std::vector<OpEntry> MatMulOps() {
  return {
      {"MatMul", InferMatMul, RunMatMul},
      {"MatMulInteger", InferMatMulInteger, RunMatMulInteger},
      {"Gemm", InferGemm, RunGemm},
  };
}

}  // namespace chipfit
