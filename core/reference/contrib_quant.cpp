// Reference kernels of ONNX Runtime's contrib quantized ops (com.microsoft), computed in ORT's own order.
//
// ONNX Runtime's CPU kernels define the results: where they compute in float and round half to even,
// these kernels do the same float operations in the same order, so quantized outputs match exactly.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/reference/contrib_quant.h"
#include "core/reference/conv_util.h"
#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

std::string Name(DType dtype) { return std::string(DTypeName(dtype)); }

bool Known(const Shape& shape) {
  return std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d >= 0; });
}

// Inputs `required` must be present; the error names them by the op's input names.
Status Require(const InferContext& ctx, std::initializer_list<std::pair<size_t, const char*>> required) {
  for (const auto& [i, name] : required) {
    if (ctx.input(i) == nullptr) return ctx.Error(std::string("input ") + name + " is required");
  }
  return Status::Ok();
}

// A per-tensor parameter (scale or zero point) given at compile time holds exactly one value.
Status CheckScalar(const InferContext& ctx, size_t i, const char* name) {
  const ValueInfo* in = ctx.input(i);
  if (in == nullptr || !Known(in->shape)) return Status::Ok();
  if (in->shape.size() <= 1 && NumElements(in->shape) == 1) return Status::Ok();
  return ctx.Error(std::string(name) + " " + ShapeToString(in->shape) +
                   " must be a scalar or a 1-element vector (ONNX Runtime quantizes it per tensor)");
}

// Scalar float input (f32 in every op here).
Result<float> ScalarF(const KernelContext& ctx, size_t i, const char* name) {
  const Tensor* t = ctx.input(i);
  if (t == nullptr || t->numel() != 1) return ctx.Error(std::string(name) + " must hold exactly one value");
  return static_cast<float>(t->GetAsDouble(0));
}

// Scalar zero point; absent → 0.
Result<int32_t> ScalarZp(const KernelContext& ctx, size_t i, const char* name) {
  const Tensor* t = ctx.input(i);
  if (t == nullptr) return 0;
  if (t->numel() != 1) return ctx.Error(std::string(name) + " must hold exactly one value");
  return static_cast<int32_t>(t->GetAsInt64(0));
}

// Round half to even (std::nearbyint in the default rounding mode), then saturate to Q.
template <typename Q>
Q SaturateRound(float v) {
  const float r = std::nearbyint(v);
  constexpr float lo = static_cast<float>(std::numeric_limits<Q>::lowest());
  constexpr float hi = static_cast<float>(std::numeric_limits<Q>::max());
  if (std::isnan(r)) return Q{0};
  return static_cast<Q>(std::clamp(r, lo, hi));
}

// MlasQuantizeLinear: round(v / scale) + zero point, saturated.
template <typename Q>
Q QuantizeValue(float v, float scale, int32_t zp) {
  const float r = std::nearbyint(v / scale) + static_cast<float>(zp);
  return SaturateRound<Q>(r);
}

// Calls f(Q{}) for u8 / i8 outputs; anything else is refused naming the dtype.
template <typename F>
Status VisitInt8(const Node& node, DType dtype, F&& f) {
  if (dtype == DType::kU8) return f(uint8_t{});
  if (dtype == DType::kI8) return f(int8_t{});
  return Unsupported(node.Describe() + ": dtype " + Name(dtype) + " is not uint8 or int8");
}

// ---------------------------------------------------------------------------------------------------------------
// MatMulNBits: A [..., K] float times B^T, B [N, K] quantized blockwise along K with `bits` bits.
// Inputs: A, B (uint8 [N, k_blocks, blob_size]), scales [N * k_blocks], zero_points, g_idx, bias [N].
// accuracy_level only picks ONNX Runtime's compute type: 4 quantizes A to int8 blockwise on CPUs with an
// int8 MatMulNBits kernel (results then differ from the float path by A's rounding); 0-3 run in float, which
// is what this kernel computes.

struct NBitsGeometry {
  int64_t k = 0, n = 0, bits = 4, block = 0, k_blocks = 0, blob = 0;
};

Result<NBitsGeometry> ReadNBits(const Node& node) {
  NBitsGeometry g;
  const std::string where = node.Describe() + ": ";
  for (const char* attr : {"K", "N", "block_size"}) {
    if (!node.Has(attr)) return InvalidArgument(where + "attribute " + attr + " is required");
  }
  g.k = node.GetInt("K", 0);
  g.n = node.GetInt("N", 0);
  g.bits = node.GetInt("bits", 4);
  g.block = node.GetInt("block_size", 0);
  if (g.bits != 4 && g.bits != 8) {
    return Unsupported(where + "bits=" + std::to_string(g.bits) + " is not supported (only 4 and 8)");
  }
  if (g.k < 1 || g.n < 1) return InvalidArgument(where + "K and N must be positive");
  if (g.block < 16 || (g.block & (g.block - 1)) != 0) {
    return InvalidArgument(where + "block_size " + std::to_string(g.block) + " must be a power of 2 and >= 16");
  }
  g.k_blocks = CeilDiv(g.k, g.block);
  g.blob = g.block * g.bits / 8;
  return g;
}

// Bytes of packed uint8 zero points per row of N: one value per block, `bits` bits each.
int64_t ZeroPointRowBytes(const NBitsGeometry& g) { return CeilDiv(g.k_blocks * g.bits, 8); }

Status InferMatMulNBits(InferContext& ctx) {
  RETURN_IF_ERROR(Require(ctx, {{0, "A"}, {1, "B"}, {2, "scales"}}));
  ASSIGN_OR_RETURN(const NBitsGeometry g, ReadNBits(ctx.node()));
  const ValueInfo* a = ctx.input(0);
  if (a->dtype != DType::kF32) {
    return Unsupported(ctx.node().Describe() + ": A has dtype " + Name(a->dtype) + "; only float32 is supported");
  }
  RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kU8}));
  RETURN_IF_ERROR(CheckDType(ctx, 2, {DType::kF32}));
  if (a->shape.empty() || (a->shape.back() >= 0 && a->shape.back() != g.k)) {
    return ctx.Error("A " + ShapeToString(a->shape) + " must end in K=" + std::to_string(g.k));
  }
  const ValueInfo* b = ctx.input(1);
  if (Known(b->shape) && NumElements(b->shape) != g.n * g.k_blocks * g.blob) {
    return ctx.Error("B " + ShapeToString(b->shape) + " must hold [N, k_blocks, blob_size] = [" + std::to_string(g.n) +
                     ", " + std::to_string(g.k_blocks) + ", " + std::to_string(g.blob) + "] bytes");
  }
  const ValueInfo* scales = ctx.input(2);
  if (Known(scales->shape) && NumElements(scales->shape) != g.n * g.k_blocks) {
    return ctx.Error("scales " + ShapeToString(scales->shape) +
                     " must hold N * k_blocks = " + std::to_string(g.n * g.k_blocks) + " values");
  }
  if (const ValueInfo* zp = ctx.input(3)) {
    RETURN_IF_ERROR(CheckDType(ctx, 3, {DType::kU8, DType::kF32}));
    const int64_t expected = zp->dtype == DType::kU8 ? g.n * ZeroPointRowBytes(g) : g.n * g.k_blocks;
    if (Known(zp->shape) && NumElements(zp->shape) != expected) {
      return ctx.Error("zero_points " + ShapeToString(zp->shape) + " must hold " + std::to_string(expected) +
                       (zp->dtype == DType::kU8 ? " packed bytes" : " values"));
    }
  }
  if (ctx.input(4) != nullptr) RETURN_IF_ERROR(CheckDType(ctx, 4, {DType::kI32}));
  if (const ValueInfo* bias = ctx.input(5)) {
    RETURN_IF_ERROR(CheckDType(ctx, 5, {DType::kF32}));
    if (Known(bias->shape) && NumElements(bias->shape) != g.n) {
      return ctx.Error("bias " + ShapeToString(bias->shape) + " must hold N=" + std::to_string(g.n) + " values");
    }
  }
  Shape out = a->shape;
  out.back() = g.n;
  ctx.SetOutput(0, DType::kF32, out);
  return Status::Ok();
}

// g_idx maps each k to its block; only the trivial map k / block_size (what a model without act-order
// quantization carries) is supported.
Status CheckTrivialGIdx(const KernelContext& ctx, const NBitsGeometry& g) {
  const Tensor* g_idx = ctx.input(4);
  if (g_idx == nullptr) return Status::Ok();
  if (g_idx->numel() != g.k) return ctx.Error("g_idx must hold K=" + std::to_string(g.k) + " values");
  for (int64_t k = 0; k < g.k; ++k) {
    if (g_idx->GetAsInt64(k) != k / g.block) {
      return Unsupported(ctx.node().Describe() + ": g_idx reorders K (act-order quantization), which is not supported");
    }
  }
  return Status::Ok();
}

// B dequantized to float [N, K]: (q - zero_point) * scale with packed uint8 zero points (absent: 2^(bits-1)),
// or q * scale - scale * zero_point with float zero points (ONNX Runtime's two formulas).
std::vector<float> DequantizeNBits(const NBitsGeometry& g, const uint8_t* b, const float* scales, const Tensor* zp) {
  std::vector<float> w(static_cast<size_t>(g.n * g.k));
  const int64_t zp_row = ZeroPointRowBytes(g);
  const int32_t default_zp = 1 << (g.bits - 1);
#pragma omp parallel for
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t blk = 0; blk < g.k_blocks; ++blk) {
      const float scale = scales[n * g.k_blocks + blk];
      const uint8_t* blob = b + (n * g.k_blocks + blk) * g.blob;
      int32_t zq = default_zp;
      float zf = 0;
      const bool float_zp = zp != nullptr && zp->dtype() == DType::kF32;
      if (float_zp) {
        zf = zp->data<float>()[n * g.k_blocks + blk];
      } else if (zp != nullptr) {
        const uint8_t* row = zp->data<uint8_t>() + n * zp_row;
        zq = g.bits == 8 ? row[blk] : (row[blk / 2] >> (4 * (blk & 1))) & 0xF;
      }
      const int64_t end = std::min(g.block, g.k - blk * g.block);
      for (int64_t j = 0; j < end; ++j) {
        const int32_t q = g.bits == 8 ? blob[j] : (blob[j / 2] >> (4 * (j & 1))) & 0xF;
        float& out = w[static_cast<size_t>(n * g.k + blk * g.block + j)];
        out = float_zp ? static_cast<float>(q) * scale + (-scale * zf) : static_cast<float>(q - zq) * scale;
      }
    }
  }
  return w;
}

Status RunMatMulNBits(KernelContext& ctx) {
  ASSIGN_OR_RETURN(const NBitsGeometry g, ReadNBits(ctx.node()));
  RETURN_IF_ERROR(CheckTrivialGIdx(ctx, g));
  const Tensor& a = *ctx.input(0);
  const std::vector<float> w =
      DequantizeNBits(g, ctx.input(1)->data<uint8_t>(), ctx.input(2)->data<float>(), ctx.input(3));
  const float* bias = ctx.input(5) != nullptr ? ctx.input(5)->data<float>() : nullptr;
  const float* x = a.data<float>();
  float* y = ctx.output(0)->data<float>();
  const int64_t rows = a.numel() / g.k;
#pragma omp parallel for
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t n = 0; n < g.n; ++n) {
      double acc = bias != nullptr ? bias[n] : 0.0;
      const float* wp = &w[static_cast<size_t>(n * g.k)];
      for (int64_t k = 0; k < g.k; ++k) acc += static_cast<double>(x[r * g.k + k]) * wp[k];
      y[r * g.n + n] = static_cast<float>(acc);
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------------------------
// Integer matrix products with float output: MatMulIntegerToFloat and DynamicQuantizeMatMul.
// y = float(Σ (a - a_zp)(b - b_zp[n])) * (a_scale * b_scale[n]) + bias[n], the int32 sum scaled in float
// as ONNX Runtime's scale-and-bias output processor does.

// A per-column parameter of B: one value, or N.
Status CheckPerColumn(const InferContext& ctx, size_t i, const char* name, int64_t n) {
  const ValueInfo* in = ctx.input(i);
  if (in == nullptr || !Known(in->shape)) return Status::Ok();
  const int64_t count = NumElements(in->shape);
  if (in->shape.size() <= 1 && (count == 1 || count == n || n < 0)) return Status::Ok();
  return ctx.Error(std::string(name) + " " + ShapeToString(in->shape) +
                   " must be a scalar or hold N=" + std::to_string(n) + " values (one per column of B)");
}

Status CheckBias(const InferContext& ctx, size_t i, int64_t n) {
  const ValueInfo* bias = ctx.input(i);
  if (bias == nullptr) return Status::Ok();
  RETURN_IF_ERROR(CheckDType(ctx, i, {DType::kF32}));
  if (bias->shape.size() != 1 || (bias->shape[0] >= 0 && n >= 0 && bias->shape[0] != n)) {
    return ctx.Error("bias " + ShapeToString(bias->shape) + " must be [N] = [" + std::to_string(n) + "]");
  }
  return Status::Ok();
}

// Values of a per-column parameter broadcast to n (absent → `fallback`).
template <typename T>
Result<std::vector<T>> PerColumn(const KernelContext& ctx, size_t i, const char* name, int64_t n, T fallback) {
  std::vector<T> out(static_cast<size_t>(n), fallback);
  const Tensor* t = ctx.input(i);
  if (t == nullptr) return out;
  if (t->numel() != 1 && t->numel() != n) {
    return ctx.Error(std::string(name) + " holds " + std::to_string(t->numel()) + " values for N=" + std::to_string(n));
  }
  for (int64_t j = 0; j < n; ++j) out[static_cast<size_t>(j)] = static_cast<T>(t->GetAsDouble(t->numel() == 1 ? 0 : j));
  return out;
}

// int32 accumulators of (a - a_zp) · (b - b_zp[col]) with numpy batch broadcasting.
std::vector<int32_t> IntMatMul(const MatMulGeometry& g, const std::vector<int64_t>& a, int32_t a_zp,
                               const std::vector<int64_t>& b, const std::vector<int32_t>& b_zp) {
  const BroadcastIndexer a_index(g.a_batch, g.batch), b_index(g.b_batch, g.batch);
  const int64_t rows = Product(g.batch) * g.m;
  std::vector<int32_t> y(static_cast<size_t>(rows * g.n), 0);
#pragma omp parallel for
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t batch = r / g.m;
    const int64_t a_off = (a_index(batch) * g.m + r % g.m) * g.k, b_off = b_index(batch) * g.k * g.n;
    int32_t* yp = &y[static_cast<size_t>(r * g.n)];
    for (int64_t i = 0; i < g.k; ++i) {
      const int32_t av = static_cast<int32_t>(a[static_cast<size_t>(a_off + i)]) - a_zp;
      for (int64_t j = 0; j < g.n; ++j) {
        yp[j] +=
            av * (static_cast<int32_t>(b[static_cast<size_t>(b_off + i * g.n + j)]) - b_zp[static_cast<size_t>(j)]);
      }
    }
  }
  return y;
}

// Shared by both ops once A is quantized: A's data, its scale and zero point; B, b_scale, b_zp, bias inputs.
Status IntMatMulToFloat(KernelContext& ctx, const Shape& a_shape, const std::vector<int64_t>& a, float a_scale,
                        int32_t a_zp, size_t b_in, size_t b_scale_in, size_t b_zp_in, size_t bias_in) {
  const Tensor& b = *ctx.input(b_in);
  ASSIGN_OR_RETURN(const MatMulGeometry g, ReadMatMul(ctx.node(), a_shape, b.shape()));
  ASSIGN_OR_RETURN(const std::vector<float> b_scale, PerColumn<float>(ctx, b_scale_in, "b_scale", g.n, 1.0f));
  ASSIGN_OR_RETURN(const std::vector<int32_t> b_zp, PerColumn<int32_t>(ctx, b_zp_in, "b_zero_point", g.n, 0));
  const Tensor* bias = ctx.input(bias_in);
  if (bias != nullptr && bias->numel() != g.n) return ctx.Error("bias must hold N values");
  const std::vector<int32_t> acc = IntMatMul(g, a, a_zp, b.ToInt64Vector(), b_zp);
  float* y = ctx.output(0)->data<float>();
  for (size_t i = 0; i < acc.size(); ++i) {
    const size_t col = i % static_cast<size_t>(g.n);
    const float scaled = static_cast<float>(acc[i]) * (a_scale * b_scale[col]);
    y[i] = bias != nullptr ? scaled + bias->data<float>()[col] : scaled;
  }
  return Status::Ok();
}

Status InferIntMatMulToFloat(InferContext& ctx, size_t b_in, size_t b_scale_in, size_t b_zp_in, size_t bias_in) {
  const ValueInfo* a = ctx.input(0);
  const ValueInfo* b = ctx.input(b_in);
  RETURN_IF_ERROR(CheckDType(ctx, b_in, {DType::kU8, DType::kI8}));
  ASSIGN_OR_RETURN(const MatMulGeometry g, ReadMatMul(ctx.node(), a->shape, b->shape));
  const bool known = b->shape.size() >= 1 && b->shape.back() >= 0;
  const int64_t n = known ? g.n : -1;
  RETURN_IF_ERROR(CheckDType(ctx, b_scale_in, {DType::kF32}));
  RETURN_IF_ERROR(CheckPerColumn(ctx, b_scale_in, "b_scale", n));
  if (ctx.input(b_zp_in) != nullptr && ctx.input(b_zp_in)->dtype != b->dtype) {
    return ctx.Error("b_zero_point has dtype " + Name(ctx.input(b_zp_in)->dtype) + " but B has " + Name(b->dtype));
  }
  RETURN_IF_ERROR(CheckPerColumn(ctx, b_zp_in, "b_zero_point", n));
  RETURN_IF_ERROR(CheckBias(ctx, bias_in, n));
  ctx.SetOutput(0, DType::kF32, g.out);
  return Status::Ok();
}

// MatMulIntegerToFloat: A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias.
Status InferMatMulIntegerToFloat(InferContext& ctx) {
  RETURN_IF_ERROR(Require(ctx, {{0, "A"}, {1, "B"}, {2, "a_scale"}, {3, "b_scale"}}));
  RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kU8, DType::kI8}));
  RETURN_IF_ERROR(CheckDType(ctx, 2, {DType::kF32}));
  RETURN_IF_ERROR(CheckScalar(ctx, 2, "a_scale"));
  if (ctx.input(4) != nullptr && ctx.input(4)->dtype != ctx.input(0)->dtype) {
    return ctx.Error("a_zero_point has dtype " + Name(ctx.input(4)->dtype) + " but A has " + Name(ctx.input(0)->dtype));
  }
  RETURN_IF_ERROR(CheckScalar(ctx, 4, "a_zero_point"));
  return InferIntMatMulToFloat(ctx, 1, 3, 5, 6);
}

Status RunMatMulIntegerToFloat(KernelContext& ctx) {
  ASSIGN_OR_RETURN(const float a_scale, ScalarF(ctx, 2, "a_scale"));
  ASSIGN_OR_RETURN(const int32_t a_zp, ScalarZp(ctx, 4, "a_zero_point"));
  return IntMatMulToFloat(ctx, ctx.input(0)->shape(), ctx.input(0)->ToInt64Vector(), a_scale, a_zp, 1, 3, 5, 6);
}

// DynamicQuantizeMatMul: A (float), B, b_scale, b_zero_point, bias. A is quantized to uint8 per tensor as
// DynamicQuantizeLinear does: range [min, max] widened to hold 0 maps onto [0, 255].
Status InferDynamicQuantizeMatMul(InferContext& ctx) {
  RETURN_IF_ERROR(Require(ctx, {{0, "A"}, {1, "B"}, {2, "b_scale"}}));
  RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kF32}));
  return InferIntMatMulToFloat(ctx, 1, 2, 3, 4);
}

Status RunDynamicQuantizeMatMul(KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const float* x = a.data<float>();
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (!std::isfinite(x[i])) return ctx.Error("A holds a non-finite value, which leaves its quantization undefined");
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  const float initial_zp = 0.0f - lo / scale;
  const int32_t zp = static_cast<int32_t>(std::nearbyint(std::clamp(initial_zp, 0.0f, 255.0f)));
  std::vector<int64_t> q(static_cast<size_t>(a.numel()));
  for (size_t i = 0; i < q.size(); ++i) q[i] = QuantizeValue<uint8_t>(x[i], scale, zp);
  return IntMatMulToFloat(ctx, a.shape(), q, scale, zp, 1, 2, 3, 4);
}

// ---------------------------------------------------------------------------------------------------------------
// QGemm: A, a_scale, a_zero_point, B, b_scale, b_zero_point, C (int32), y_scale, y_zero_point.
// acc = C + Σ (a - a_zp)(b - b_zp[n]) in int32; float output acc·(alpha·a_scale·b_scale[n]), or with y_scale
// requantized: round(acc · (alpha·a_scale·b_scale[n] / y_scale)) + y_zp, saturated.

Status InferQGemm(InferContext& ctx) {
  RETURN_IF_ERROR(
      Require(ctx, {{0, "A"}, {1, "a_scale"}, {2, "a_zero_point"}, {3, "B"}, {4, "b_scale"}, {5, "b_zero_point"}}));
  const ValueInfo* a = ctx.input(0);
  const ValueInfo* b = ctx.input(3);
  RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kU8, DType::kI8}));
  RETURN_IF_ERROR(CheckDType(ctx, 3, {DType::kU8, DType::kI8}));
  if (a->dtype == DType::kI8 && b->dtype != DType::kI8) return ctx.Error("int8 A needs int8 B");
  if (a->shape.size() != 2 || b->shape.size() != 2) {
    return ctx.Error("A " + ShapeToString(a->shape) + " and B " + ShapeToString(b->shape) + " must be matrices");
  }
  const bool ta = ctx.node().GetInt("transA", 0) != 0, tb = ctx.node().GetInt("transB", 0) != 0;
  const int64_t m = a->shape[ta ? 1 : 0], ka = a->shape[ta ? 0 : 1];
  const int64_t kb = b->shape[tb ? 1 : 0], n = b->shape[tb ? 0 : 1];
  if (ka >= 0 && kb >= 0 && ka != kb) {
    return ctx.Error("inner dims differ: A " + ShapeToString(a->shape) + ", B " + ShapeToString(b->shape));
  }
  for (size_t i : {1, 4, 7}) RETURN_IF_ERROR(CheckDType(ctx, i, {DType::kF32}));
  RETURN_IF_ERROR(CheckScalar(ctx, 1, "a_scale"));
  RETURN_IF_ERROR(CheckScalar(ctx, 2, "a_zero_point"));
  RETURN_IF_ERROR(CheckPerColumn(ctx, 4, "b_scale", n));
  RETURN_IF_ERROR(CheckPerColumn(ctx, 5, "b_zero_point", n));
  if (ctx.input(2)->dtype != a->dtype || ctx.input(5)->dtype != b->dtype) {
    return ctx.Error("zero points must have the dtypes of A and B");
  }
  if (const ValueInfo* c = ctx.input(6)) {
    RETURN_IF_ERROR(CheckDType(ctx, 6, {DType::kI32}));
    if (c->shape.size() > 2 || !BroadcastsTo(c->shape, {m, n})) {
      return ctx.Error("C " + ShapeToString(c->shape) + " does not broadcast to [M, N]");
    }
  }
  const ValueInfo* y_scale = ctx.input(7);
  const ValueInfo* y_zp = ctx.input(8);
  if ((y_scale == nullptr) != (y_zp == nullptr)) {
    return Unsupported(ctx.node().Describe() + ": y_scale and y_zero_point must be given together");
  }
  DType out = DType::kF32;
  if (y_zp != nullptr) {
    RETURN_IF_ERROR(CheckScalar(ctx, 7, "y_scale"));
    RETURN_IF_ERROR(CheckScalar(ctx, 8, "y_zero_point"));
    if (y_zp->dtype != a->dtype) return ctx.Error("y_zero_point must have A's dtype");
    out = y_zp->dtype;
  }
  ctx.SetOutput(0, out, {m, n});
  return Status::Ok();
}

Status RunQGemm(KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(3);
  const bool ta = ctx.node().GetInt("transA", 0) != 0, tb = ctx.node().GetInt("transB", 0) != 0;
  const float alpha = ctx.node().GetFloat("alpha", 1.0f);
  const int64_t m = a.dim(ta ? 1 : 0), k = a.dim(ta ? 0 : 1), n = b.dim(tb ? 0 : 1);
  ASSIGN_OR_RETURN(const float a_scale, ScalarF(ctx, 1, "a_scale"));
  ASSIGN_OR_RETURN(const int32_t a_zp, ScalarZp(ctx, 2, "a_zero_point"));
  ASSIGN_OR_RETURN(const std::vector<float> b_scale, PerColumn<float>(ctx, 4, "b_scale", n, 1.0f));
  ASSIGN_OR_RETURN(const std::vector<int32_t> b_zp, PerColumn<int32_t>(ctx, 5, "b_zero_point", n, 0));
  const std::vector<int64_t> av = a.ToInt64Vector(), bv = b.ToInt64Vector();
  std::vector<int32_t> acc(static_cast<size_t>(m * n), 0);
  if (const Tensor* c = ctx.input(6)) {
    const BroadcastIndexer index(c->shape(), {m, n});
    for (size_t i = 0; i < acc.size(); ++i) acc[i] = c->data<int32_t>()[index(static_cast<int64_t>(i))];
  }
#pragma omp parallel for
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int32_t sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const int32_t x = static_cast<int32_t>(av[static_cast<size_t>(ta ? p * m + i : i * k + p)]) - a_zp;
        const int32_t w =
            static_cast<int32_t>(bv[static_cast<size_t>(tb ? j * k + p : p * n + j)]) - b_zp[static_cast<size_t>(j)];
        sum += x * w;
      }
      acc[static_cast<size_t>(i * n + j)] += sum;
    }
  }
  std::vector<float> scale(static_cast<size_t>(n));
  const Tensor* y_scale_t = ctx.input(7);
  float y_scale = 1;
  if (y_scale_t != nullptr) {
    ASSIGN_OR_RETURN(y_scale, ScalarF(ctx, 7, "y_scale"));
  }
  for (size_t j = 0; j < scale.size(); ++j) {
    scale[j] = alpha * a_scale * b_scale[j];
    if (y_scale_t != nullptr) scale[j] /= y_scale;
  }
  Tensor& y = *ctx.output(0);
  if (y_scale_t == nullptr) {
    for (size_t i = 0; i < acc.size(); ++i) y.data<float>()[i] = static_cast<float>(acc[i]) * scale[i % scale.size()];
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(const int32_t y_zp, ScalarZp(ctx, 8, "y_zero_point"));
  return VisitInt8(ctx.node(), y.dtype(), [&](auto tag) -> Status {
    using Q = decltype(tag);
    for (size_t i = 0; i < acc.size(); ++i) {
      const float v = std::nearbyint(static_cast<float>(acc[i]) * scale[i % scale.size()]);
      y.data<Q>()[i] = SaturateRound<Q>(v + static_cast<float>(y_zp));
    }
    return Status::Ok();
  });
}

// ---------------------------------------------------------------------------------------------------------------
// QOperator elementwise ops. Every scale and zero point is per tensor; an absent zero point is 0.

const std::vector<DType> kInt8Types = {DType::kU8, DType::kI8};

// Checks a (scale, zero point) pair for data input `x`: float32 scalar scale, zero point of x's dtype.
Status CheckQParams(const InferContext& ctx, size_t scale, size_t zp, DType dtype, const char* what) {
  const std::string s = std::string(what) + "_scale", z = std::string(what) + "_zero_point";
  RETURN_IF_ERROR(CheckDType(ctx, scale, {DType::kF32}));
  RETURN_IF_ERROR(CheckScalar(ctx, scale, s.c_str()));
  if (ctx.input(zp) != nullptr && ctx.input(zp)->dtype != dtype) {
    return ctx.Error(z + " has dtype " + Name(ctx.input(zp)->dtype) + " but the data has " + Name(dtype));
  }
  return CheckScalar(ctx, zp, z.c_str());
}

// QLinearAdd / QLinearMul: A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point.
Status InferQLinearBinary(InferContext& ctx) {
  RETURN_IF_ERROR(Require(ctx, {{0, "A"}, {1, "A_scale"}, {3, "B"}, {4, "B_scale"}, {6, "C_scale"}}));
  RETURN_IF_ERROR(CheckDType(ctx, 0, kInt8Types));
  const DType dtype = ctx.input(0)->dtype;
  if (ctx.input(3)->dtype != dtype) return ctx.Error("A and B must have one dtype");
  RETURN_IF_ERROR(CheckQParams(ctx, 1, 2, dtype, "A"));
  RETURN_IF_ERROR(CheckQParams(ctx, 4, 5, dtype, "B"));
  RETURN_IF_ERROR(CheckQParams(ctx, 6, 7, dtype, "C"));
  ASSIGN_OR_RETURN(const Shape out, BroadcastShapes(ctx.input(0)->shape, ctx.input(3)->shape));
  ctx.SetOutput(0, dtype, out);
  return Status::Ok();
}

struct BinaryParams {
  float a_scale, b_scale, c_scale;
  int32_t a_zp, b_zp, c_zp;
};

Result<BinaryParams> ReadBinaryParams(const KernelContext& ctx) {
  BinaryParams p{};
  ASSIGN_OR_RETURN(p.a_scale, ScalarF(ctx, 1, "A_scale"));
  ASSIGN_OR_RETURN(p.a_zp, ScalarZp(ctx, 2, "A_zero_point"));
  ASSIGN_OR_RETURN(p.b_scale, ScalarF(ctx, 4, "B_scale"));
  ASSIGN_OR_RETURN(p.b_zp, ScalarZp(ctx, 5, "B_zero_point"));
  ASSIGN_OR_RETURN(p.c_scale, ScalarF(ctx, 6, "C_scale"));
  ASSIGN_OR_RETURN(p.c_zp, ScalarZp(ctx, 7, "C_zero_point"));
  return p;
}

// QLinearAdd as MLAS computes it (AVX2): c = a·(sA/sC) + b·(sB/sC) + (zC − (sA/sC·zA + sB/sC·zB)) in float with
// fused multiply-adds, the scalar side of a span folded into the constant first; round half to even, saturate.
template <typename Q>
Q AddValue(const BinaryParams& p, float a, float b, bool a_scalar, bool b_scalar) {
  const float r_ac = p.a_scale / p.c_scale, r_bc = p.b_scale / p.c_scale;
  const float fixed =
      static_cast<float>(p.c_zp) - (r_ac * static_cast<float>(p.a_zp) + r_bc * static_cast<float>(p.b_zp));
  if (a_scalar) return SaturateRound<Q>(std::fma(b, r_bc, fixed + a * r_ac));
  if (b_scalar) return SaturateRound<Q>(std::fma(a, r_ac, fixed + b * r_bc));
  return SaturateRound<Q>(std::fma(a, r_ac, std::fma(b, r_bc, fixed)));
}

// QLinearMul as MLAS computes it (SSE2): the integer product (a − zA)(b − zB) times sA·sB/sC, plus zC, in float.
template <typename Q>
Q MulValue(const BinaryParams& p, int32_t a, int32_t b) {
  const float ratio = p.a_scale * p.b_scale / p.c_scale;
  return SaturateRound<Q>(static_cast<float>((a - p.a_zp) * (b - p.b_zp)) * ratio + static_cast<float>(p.c_zp));
}

template <bool kMul>
Status RunQLinearBinary(KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(3);
  ASSIGN_OR_RETURN(const BinaryParams p, ReadBinaryParams(ctx));
  Tensor& y = *ctx.output(0);
  const BroadcastIndexer ai(a.shape(), y.shape()), bi(b.shape(), y.shape());
  const bool a_scalar = ScalarPerSpan(a.shape(), y.shape());
  const bool b_scalar = !a_scalar && ScalarPerSpan(b.shape(), y.shape());
  return VisitInt8(ctx.node(), y.dtype(), [&](auto tag) -> Status {
    using Q = decltype(tag);
    const Q* av = a.data<Q>();
    const Q* bv = b.data<Q>();
    Q* out = y.data<Q>();
    const int64_t n = y.numel();
#pragma omp parallel for
    for (int64_t i = 0; i < n; ++i) {
      const auto x = static_cast<int32_t>(av[ai(i)]);  // NOLINT(bugprone-signed-char-misuse): int8 is numeric
      const auto w = static_cast<int32_t>(bv[bi(i)]);  // NOLINT(bugprone-signed-char-misuse)
      if constexpr (kMul) {
        out[i] = MulValue<Q>(p, x, w);
      } else {
        out[i] = AddValue<Q>(p, static_cast<float>(x), static_cast<float>(w), a_scalar, b_scalar);
      }
    }
    return Status::Ok();
  });
}

// QLinearSigmoid, QLinearLeakyRelu: X, X_scale, X_zero_point, Y_scale, Y_zero_point. ONNX Runtime maps each of
// the 256 inputs through a table: dequantize (X_scale · (x − zX)), apply f in float, quantize (round(v / Y_scale)
// + zY, saturated).
Status InferQLinearUnary(InferContext& ctx) {
  RETURN_IF_ERROR(Require(ctx, {{0, "X"}, {1, "X_scale"}, {3, "Y_scale"}}));
  RETURN_IF_ERROR(CheckDType(ctx, 0, kInt8Types));
  const DType dtype = ctx.input(0)->dtype;
  RETURN_IF_ERROR(CheckQParams(ctx, 1, 2, dtype, "X"));
  RETURN_IF_ERROR(CheckQParams(ctx, 3, 4, dtype, "Y"));
  ctx.SetOutput(0, dtype, ctx.input(0)->shape);
  return Status::Ok();
}

template <typename Q, typename F>
std::vector<Q> LookupTable(float x_scale, int32_t x_zp, float y_scale, int32_t y_zp, F&& f) {
  std::vector<Q> table(256);
  for (int i = 0; i < 256; ++i) {
    const Q x = static_cast<Q>(static_cast<uint8_t>(i));
    const float dq = x_scale * static_cast<float>(static_cast<int32_t>(x) - x_zp);
    table[static_cast<size_t>(i)] = QuantizeValue<Q>(f(dq), y_scale, y_zp);
  }
  return table;
}

template <typename F>
Status RunQLinearLookup(KernelContext& ctx, F&& f) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(const float x_scale, ScalarF(ctx, 1, "X_scale"));
  ASSIGN_OR_RETURN(const int32_t x_zp, ScalarZp(ctx, 2, "X_zero_point"));
  ASSIGN_OR_RETURN(const float y_scale, ScalarF(ctx, 3, "Y_scale"));
  ASSIGN_OR_RETURN(const int32_t y_zp, ScalarZp(ctx, 4, "Y_zero_point"));
  return VisitInt8(ctx.node(), x.dtype(), [&](auto tag) -> Status {
    using Q = decltype(tag);
    const std::vector<Q> table = LookupTable<Q>(x_scale, x_zp, y_scale, y_zp, f);
    const Q* in = x.data<Q>();
    Q* out = ctx.output(0)->data<Q>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = table[static_cast<uint8_t>(in[i])];
    return Status::Ok();
  });
}

Status RunQLinearSigmoid(KernelContext& ctx) {
  return RunQLinearLookup(ctx, [](float v) { return 1.0f / (1.0f + std::exp(-v)); });
}

Status RunQLinearLeakyRelu(KernelContext& ctx) {
  const float alpha = ctx.node().GetFloat("alpha", 0.01f);
  return RunQLinearLookup(ctx, [alpha](float v) { return v >= 0.0f ? v : alpha * v; });
}

// QLinearConcat: Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input; attribute axis. An input
// whose scale and zero point are Y's is copied; any other is requantized through its lookup table.
Status InferQLinearConcat(InferContext& ctx) {
  RETURN_IF_ERROR(Require(ctx, {{0, "Y_scale"}, {1, "Y_zero_point"}}));
  if (ctx.num_inputs() < 5 || (ctx.num_inputs() - 2) % 3 != 0) {
    return ctx.Error("inputs must be Y_scale, Y_zero_point and then (X, X_scale, X_zero_point) triples");
  }
  const DType dtype = ctx.input(1)->dtype;
  if (dtype != DType::kU8 && dtype != DType::kI8) return ctx.Error("Y_zero_point must be uint8 or int8");
  RETURN_IF_ERROR(CheckQParams(ctx, 0, 1, dtype, "Y"));
  const ValueInfo* first = ctx.input(2);
  if (first == nullptr) return ctx.Error("input X 0 is required");
  const int64_t rank = static_cast<int64_t>(first->shape.size());
  if (!ctx.node().Has("axis")) return ctx.Error("attribute axis is required");
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", 0), rank, ctx.node()));
  Shape out = first->shape;
  for (size_t t = 0; 2 + 3 * t < ctx.num_inputs(); ++t) {
    const size_t x = 2 + 3 * t;
    RETURN_IF_ERROR(Require(ctx, {{x, "X"}, {x + 1, "X_scale"}, {x + 2, "X_zero_point"}}));
    if (ctx.input(x)->dtype != dtype) return ctx.Error("every X must have Y_zero_point's dtype " + Name(dtype));
    RETURN_IF_ERROR(CheckQParams(ctx, x + 1, x + 2, dtype, "X"));
    const Shape& s = ctx.input(x)->shape;
    if (static_cast<int64_t>(s.size()) != rank) return ctx.Error("inputs must have one rank");
    if (t == 0) continue;
    for (int64_t d = 0; d < rank; ++d) {
      const size_t u = static_cast<size_t>(d);
      if (d == axis) {
        out[u] = out[u] < 0 || s[u] < 0 ? -1 : out[u] + s[u];
      } else if (s[u] >= 0 && out[u] >= 0 && s[u] != out[u]) {
        return ctx.Error("input shapes " + ShapeToString(first->shape) + " and " + ShapeToString(s) +
                         " differ off axis " + std::to_string(axis));
      }
    }
  }
  ctx.SetOutput(0, dtype, out);
  return Status::Ok();
}

Status RunQLinearConcat(KernelContext& ctx) {
  ASSIGN_OR_RETURN(const float y_scale, ScalarF(ctx, 0, "Y_scale"));
  ASSIGN_OR_RETURN(const int32_t y_zp, ScalarZp(ctx, 1, "Y_zero_point"));
  Tensor& y = *ctx.output(0);
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", 0), y.rank(), ctx.node()));
  const int64_t outer = Product(y.shape(), 0, static_cast<size_t>(axis));
  const int64_t inner = Product(y.shape(), static_cast<size_t>(axis) + 1);
  return VisitInt8(ctx.node(), y.dtype(), [&](auto tag) -> Status {
    using Q = decltype(tag);
    Q* out = y.data<Q>();
    int64_t offset = 0;  // along the axis
    for (size_t x = 2; x + 2 < ctx.num_inputs(); x += 3) {
      const Tensor& in = *ctx.input(x);
      ASSIGN_OR_RETURN(const float s, ScalarF(ctx, x + 1, "X_scale"));
      ASSIGN_OR_RETURN(const int32_t z, ScalarZp(ctx, x + 2, "X_zero_point"));
      const bool copy = s == y_scale && z == y_zp;
      const std::vector<Q> table = LookupTable<Q>(s, z, y_scale, y_zp, [](float v) { return v; });
      const int64_t len = in.dim(axis) * inner;
      const Q* src = in.data<Q>();
      for (int64_t o = 0; o < outer; ++o) {
        Q* dst = out + o * y.dim(axis) * inner + offset * inner;
        for (int64_t i = 0; i < len; ++i) {
          const Q v = src[o * len + i];
          dst[i] = copy ? v : table[static_cast<uint8_t>(v)];
        }
      }
      offset += in.dim(axis);
    }
    return Status::Ok();
  });
}

// ---------------------------------------------------------------------------------------------------------------
// QLinearGlobalAveragePool, QLinearAveragePool: X, x_scale, x_zero_point, y_scale, y_zero_point; channels_last
// puts the channels after the spatial dims ([N, D..., C]).

// [N, C, D...] view of a pooled tensor's dims, for either layout.
struct PoolLayout {
  bool channels_last = false;
  int64_t batch = 0, channels = 0;
  Shape spatial;
};

PoolLayout ReadLayout(const Node& node, const Shape& x) {
  PoolLayout l;
  l.channels_last = node.GetInt("channels_last", 0) != 0;
  l.batch = x[0];
  l.channels = l.channels_last ? x.back() : x[1];
  l.spatial = l.channels_last ? Shape(x.begin() + 1, x.end() - 1) : Shape(x.begin() + 2, x.end());
  return l;
}

Shape PooledShape(const PoolLayout& l, const Shape& spatial_out) {
  Shape out = {l.batch};
  if (!l.channels_last) out.push_back(l.channels);
  out.insert(out.end(), spatial_out.begin(), spatial_out.end());
  if (l.channels_last) out.push_back(l.channels);
  return out;
}

// Flat offset of (n, c, spatial index s) in either layout.
int64_t PoolOffset(const PoolLayout& l, int64_t image, int64_t n, int64_t c, int64_t s) {
  return l.channels_last ? (n * image + s) * l.channels + c : (n * l.channels + c) * image + s;
}

Status CheckPoolInputs(const InferContext& ctx) {
  RETURN_IF_ERROR(Require(ctx, {{0, "X"}, {1, "x_scale"}, {3, "y_scale"}}));
  RETURN_IF_ERROR(CheckDType(ctx, 0, kInt8Types));
  const DType dtype = ctx.input(0)->dtype;
  RETURN_IF_ERROR(CheckQParams(ctx, 1, 2, dtype, "x"));
  RETURN_IF_ERROR(CheckQParams(ctx, 3, 4, dtype, "y"));
  if (ctx.input(0)->shape.size() < 3) return ctx.Error("X must have rank >= 3 ([N, C, D...])");
  return Status::Ok();
}

Status InferQLinearGlobalAveragePool(InferContext& ctx) {
  RETURN_IF_ERROR(CheckPoolInputs(ctx));
  const PoolLayout l = ReadLayout(ctx.node(), ctx.input(0)->shape);
  ctx.SetOutput(0, ctx.input(0)->dtype, PooledShape(l, Shape(l.spatial.size(), 1)));
  return Status::Ok();
}

// MLAS: the int32 sum minus x_zp · image, times x_scale / (y_scale · image) in float, rounded, plus y_zp.
template <typename Q>
void GlobalAverage(const PoolLayout& l, const Q* x, float x_scale, int32_t x_zp, float y_scale, int32_t y_zp, Q* y) {
  const int64_t image = Product(l.spatial);
  const float scale = x_scale / (y_scale * static_cast<float>(image));
  for (int64_t n = 0; n < l.batch; ++n) {
    for (int64_t c = 0; c < l.channels; ++c) {
      int32_t acc = -x_zp * static_cast<int32_t>(image);
      for (int64_t s = 0; s < image; ++s) acc += x[PoolOffset(l, image, n, c, s)];
      y[PoolOffset(l, 1, n, c, 0)] =
          SaturateRound<Q>(std::nearbyint(static_cast<float>(acc) * scale) + static_cast<float>(y_zp));
    }
  }
}

struct PoolParams {
  float x_scale, y_scale;
  int32_t x_zp, y_zp;
};

Result<PoolParams> ReadPoolParams(const KernelContext& ctx) {
  PoolParams p{};
  ASSIGN_OR_RETURN(p.x_scale, ScalarF(ctx, 1, "x_scale"));
  ASSIGN_OR_RETURN(p.x_zp, ScalarZp(ctx, 2, "x_zero_point"));
  ASSIGN_OR_RETURN(p.y_scale, ScalarF(ctx, 3, "y_scale"));
  ASSIGN_OR_RETURN(p.y_zp, ScalarZp(ctx, 4, "y_zero_point"));
  return p;
}

Status RunQLinearGlobalAveragePool(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(const PoolParams p, ReadPoolParams(ctx));
  const PoolLayout l = ReadLayout(ctx.node(), x.shape());
  return VisitInt8(ctx.node(), x.dtype(), [&](auto tag) -> Status {
    using Q = decltype(tag);
    GlobalAverage(l, x.data<Q>(), p.x_scale, p.x_zp, p.y_scale, p.y_zp, ctx.output(0)->data<Q>());
    return Status::Ok();
  });
}

Result<Window> ReadPoolWindow(const Node& node, const PoolLayout& l) {
  if (!node.Has("kernel_shape")) return InvalidArgument(node.Describe() + ": attribute kernel_shape is required");
  if (node.Has("dilations")) return Unsupported(node.Describe() + ": attribute dilations is not supported");
  ASSIGN_OR_RETURN(Window w, ReadWindow(node, l.spatial, node.GetInts("kernel_shape")));
  RETURN_IF_ERROR(ResolveForwardWindow(node, w, node.GetInt("ceil_mode", 0) != 0));
  return w;
}

Status InferQLinearAveragePool(InferContext& ctx) {
  RETURN_IF_ERROR(CheckPoolInputs(ctx));
  const PoolLayout l = ReadLayout(ctx.node(), ctx.input(0)->shape);
  if (l.spatial.size() > 3) return Unsupported(ctx.node().Describe() + ": pooling over more than 3 dims");
  ASSIGN_OR_RETURN(const Window w, ReadPoolWindow(ctx.node(), l));
  ctx.SetOutput(0, ctx.input(0)->dtype, PooledShape(l, w.out));
  return Status::Ok();
}

// ONNX Runtime dequantizes x to float, sums each window clipped to the input in row-major order, divides by
// the clipped count (or the kernel size with count_include_pad) and quantizes round(v / y_scale + y_zp).
// A kernel covering the whole unpadded input runs as QLinearGlobalAveragePool.
template <typename Q>
void AveragePool(const PoolLayout& l, const Window& w, bool include_pad, const Q* x, const PoolParams& p, Q* y) {
  const int64_t image = Product(l.spatial), out_image = Product(w.out), kernel = Product(w.kernel);
  const size_t rank = w.rank();
#pragma omp parallel for
  for (int64_t nc = 0; nc < l.batch * l.channels; ++nc) {
    const int64_t n = nc / l.channels, c = nc % l.channels;
    for (int64_t o = 0; o < out_image; ++o) {
      const std::vector<int64_t> pos = Unravel(o, w.out);
      std::vector<int64_t> start(rank), end(rank), extent(rank);
      int64_t count = 1;
      for (size_t d = 0; d < rank; ++d) {
        const int64_t s = pos[d] * w.strides[d] - w.pad_begin[d];
        end[d] = std::min(s + w.kernel[d], w.in[d]);
        start[d] = std::max<int64_t>(s, 0);
        extent[d] = std::max<int64_t>(end[d] - start[d], 0);
        count *= extent[d];
      }
      float sum = 0;
      if (count > 0) {
        std::vector<int64_t> k(rank, 0);
        do {
          int64_t s = 0;
          for (size_t d = 0; d < rank; ++d) s = s * w.in[d] + start[d] + k[d];
          sum += p.x_scale * static_cast<float>(static_cast<int32_t>(x[PoolOffset(l, image, n, c, s)]) - p.x_zp);
        } while (NextIndex(k, extent));
      }
      sum /= static_cast<float>(include_pad ? kernel : count);
      y[PoolOffset(l, out_image, n, c, o)] = SaturateRound<Q>(sum / p.y_scale + static_cast<float>(p.y_zp));
    }
  }
}

Status RunQLinearAveragePool(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(const PoolParams p, ReadPoolParams(ctx));
  const PoolLayout l = ReadLayout(ctx.node(), x.shape());
  ASSIGN_OR_RETURN(const Window w, ReadPoolWindow(ctx.node(), l));
  const bool no_pads = std::all_of(w.pad_begin.begin(), w.pad_begin.end(), [](int64_t v) { return v == 0; }) &&
                       std::all_of(w.pad_end.begin(), w.pad_end.end(), [](int64_t v) { return v == 0; });
  const bool global = no_pads && w.kernel == l.spatial;
  const bool include_pad = ctx.node().GetInt("count_include_pad", 0) != 0;
  return VisitInt8(ctx.node(), x.dtype(), [&](auto tag) -> Status {
    using Q = decltype(tag);
    Q* y = ctx.output(0)->data<Q>();
    if (global) {
      GlobalAverage(l, x.data<Q>(), p.x_scale, p.x_zp, p.y_scale, p.y_zp, y);
    } else {
      AveragePool(l, w, include_pad, x.data<Q>(), p, y);
    }
    return Status::Ok();
  });
}

// ---------------------------------------------------------------------------------------------------------------
// QLinearSoftmax: X, X_scale, x_zero_point, y_scale, y_zero_point; attributes axis and opset (the ONNX Softmax
// semantics it follows: before 13 the input is flattened from axis). ONNX Runtime's lookup table holds
// exp((i - 255 + shift) · X_scale) for the 256 offsets from the row's maximum, shift chosen so that a row's sum
// stays in float range; the output is round(e · floor(1 / y_scale) / Σe) + y_zp, saturated (a probability of 1
// with y_scale 1/256 saturates to the type's maximum, as ONNX Runtime 1.30 gives).

Status InferQLinearSoftmax(InferContext& ctx) {
  RETURN_IF_ERROR(Require(ctx, {{0, "X"}, {1, "X_scale"}, {3, "y_scale"}}));
  RETURN_IF_ERROR(CheckDType(ctx, 0, kInt8Types));
  const DType dtype = ctx.input(0)->dtype;
  RETURN_IF_ERROR(CheckQParams(ctx, 1, 2, dtype, "X"));
  RETURN_IF_ERROR(CheckQParams(ctx, 3, 4, dtype, "y"));
  if (!ctx.node().Has("opset")) return ctx.Error("attribute opset is required");
  const int64_t rank = static_cast<int64_t>(ctx.input(0)->shape.size());
  const int64_t axis = ctx.node().GetInt("axis", ctx.node().GetInt("opset", 13) < 13 ? 1 : -1);
  RETURN_IF_ERROR(NormalizeAxis(axis, rank, ctx.node()).status());
  ctx.SetOutput(0, dtype, ctx.input(0)->shape);
  return Status::Ok();
}

template <typename Q>
void SoftmaxRows(const Q* x, Q* y, int64_t outer, int64_t d, int64_t inner, const std::vector<float>& table,
                 float y_scale, int32_t y_zp) {
  const float y_mult = std::floor(1.0f / y_scale);
#pragma omp parallel for
  for (int64_t row = 0; row < outer * inner; ++row) {
    const int64_t base = row / inner * d * inner + row % inner;
    int32_t xmax = std::numeric_limits<int32_t>::min();
    for (int64_t j = 0; j < d; ++j) xmax = std::max<int32_t>(xmax, x[base + j * inner]);
    auto entry = [&](int64_t j) { return table[static_cast<size_t>(int64_t{255} - xmax + x[base + j * inner])]; };
    float sum = 0;
    for (int64_t j = 0; j < d; ++j) sum += entry(j);
    for (int64_t j = 0; j < d; ++j) {
      y[base + j * inner] = SaturateRound<Q>(std::nearbyint(entry(j) * y_mult / sum) + static_cast<float>(y_zp));
    }
  }
}

Status RunQLinearSoftmax(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(const float x_scale, ScalarF(ctx, 1, "X_scale"));
  ASSIGN_OR_RETURN(const float y_scale, ScalarF(ctx, 3, "y_scale"));
  ASSIGN_OR_RETURN(const int32_t y_zp, ScalarZp(ctx, 4, "y_zero_point"));
  const bool old = ctx.node().GetInt("opset", 13) < 13;
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", old ? 1 : -1), x.rank(), ctx.node()));
  const size_t a = static_cast<size_t>(axis);
  const int64_t outer = Product(x.shape(), 0, a);
  const int64_t d = old ? Product(x.shape(), a) : x.dim(axis);
  const int64_t inner = old ? 1 : Product(x.shape(), a + 1);
  if (x.numel() == 0) return Status::Ok();
  const std::vector<float> table = QLinearSoftmaxTable(x_scale, d);
  return VisitInt8(ctx.node(), x.dtype(), [&](auto tag) -> Status {
    using Q = decltype(tag);
    SoftmaxRows(x.data<Q>(), ctx.output(0)->data<Q>(), outer, d, inner, table, y_scale, y_zp);
    return Status::Ok();
  });
}

// ---------------------------------------------------------------------------------------------------------------
// com.microsoft QuantizeLinear / DequantizeLinear: ONNX's opset-13 semantics with 16-bit types, attribute axis
// (default 1) for a 1-D scale; float32 data and scales here.

const std::vector<DType> kQuantTypes = {DType::kU8, DType::kI8, DType::kU16, DType::kI16};

// The scale covers x per tensor or along `axis`: index of x's flat element i into the scale.
Result<std::pair<int64_t, int64_t>> ScaleAxis(const Node& node, const Shape& x, const Shape& scale) {
  if (NumElements(scale) == 1 && scale.size() <= 1) return std::pair<int64_t, int64_t>{1, 1};
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(node.GetInt("axis", 1), static_cast<int64_t>(x.size()), node));
  if (scale.size() != 1 || scale[0] != x[static_cast<size_t>(axis)]) {
    return InvalidArgument(node.Describe() + ": scale " + ShapeToString(scale) + " must be a scalar or [" +
                           std::to_string(x[static_cast<size_t>(axis)]) + "] (x's dim " + std::to_string(axis) + ")");
  }
  return std::pair<int64_t, int64_t>{x[static_cast<size_t>(axis)], Product(x, static_cast<size_t>(axis) + 1)};
}

Status CheckQdqParams(InferContext& ctx, DType data_dtype) {
  const ValueInfo* x = ctx.input(0);
  const ValueInfo* scale = ctx.input(1);
  if (scale->dtype != DType::kF32) {
    return Unsupported(ctx.node().Describe() + ": scale has dtype " + Name(scale->dtype) +
                       "; only float32 is supported");
  }
  const ValueInfo* zp = ctx.input(2);
  if (zp != nullptr) {
    if (zp->dtype == DType::kUndefined) {
      return Unsupported(
          ctx.node().Describe() +
          ": 4-bit zero points (INT4/UINT4) are not supported: this ONNX build (1.12) has no 4-bit type");
    }
    if (zp->dtype != data_dtype) return ctx.Error("the zero point's dtype must be the quantized data's");
    if (Known(zp->shape) && Known(scale->shape) && NumElements(zp->shape) != NumElements(scale->shape)) {
      return ctx.Error("the zero point must have the scale's shape");
    }
  }
  if (Known(x->shape) && Known(scale->shape)) RETURN_IF_ERROR(ScaleAxis(ctx.node(), x->shape, scale->shape).status());
  return Status::Ok();
}

Status InferContribQuantize(InferContext& ctx) {
  RETURN_IF_ERROR(Require(ctx, {{0, "x"}, {1, "y_scale"}}));
  if (ctx.input(0)->dtype != DType::kF32) {
    return Unsupported(ctx.node().Describe() + ": x has dtype " + Name(ctx.input(0)->dtype) +
                       "; only float32 is supported");
  }
  const DType out = ctx.input(2) != nullptr ? ctx.input(2)->dtype : DType::kU8;
  if (out != DType::kUndefined && std::find(kQuantTypes.begin(), kQuantTypes.end(), out) == kQuantTypes.end()) {
    return Unsupported(ctx.node().Describe() + ": y_zero_point has dtype " + Name(out) +
                       " (uint8, int8, uint16, int16 are supported)");
  }
  RETURN_IF_ERROR(CheckQdqParams(ctx, out));
  ctx.SetOutput(0, out, ctx.input(0)->shape);
  return Status::Ok();
}

Status RunContribQuantize(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& scale = *ctx.input(1);
  ASSIGN_OR_RETURN(const auto axis, ScaleAxis(ctx.node(), x.shape(), scale.shape()));
  const Tensor* zp = ctx.input(2);
  Tensor& y = *ctx.output(0);
  auto run = [&](auto* out) {
    using Q = std::remove_pointer_t<decltype(out)>;
    const float* xs = x.data<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t s = i / axis.second % axis.first;
      const int32_t z = zp != nullptr ? static_cast<int32_t>(zp->GetAsInt64(s)) : 0;
      out[i] = QuantizeValue<Q>(xs[i], scale.data<float>()[s], z);
    }
    return Status::Ok();
  };
  switch (y.dtype()) {
    case DType::kU8: return run(y.data<uint8_t>());
    case DType::kI8: return run(y.data<int8_t>());
    case DType::kU16: return run(y.data<uint16_t>());
    case DType::kI16: return run(y.data<int16_t>());
    default: return Unsupported(ctx.node().Describe() + ": cannot quantize to " + Name(y.dtype()));
  }
}

Status InferContribDequantize(InferContext& ctx) {
  RETURN_IF_ERROR(Require(ctx, {{0, "x"}, {1, "x_scale"}}));
  const DType dtype = ctx.input(0)->dtype;
  if (dtype == DType::kUndefined) {
    return Unsupported(ctx.node().Describe() +
                       ": 4-bit x (INT4/UINT4) is not supported: this ONNX build (1.12) "
                       "has no 4-bit type");
  }
  RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kI32}));
  RETURN_IF_ERROR(CheckQdqParams(ctx, dtype));
  ctx.SetOutput(0, DType::kF32, ctx.input(0)->shape);
  return Status::Ok();
}

Status RunContribDequantize(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& scale = *ctx.input(1);
  ASSIGN_OR_RETURN(const auto axis, ScaleAxis(ctx.node(), x.shape(), scale.shape()));
  const Tensor* zp = ctx.input(2);
  float* y = ctx.output(0)->data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t s = i / axis.second % axis.first;
    const int32_t z = zp != nullptr ? static_cast<int32_t>(zp->GetAsInt64(s)) : 0;
    y[i] = static_cast<float>(static_cast<int32_t>(x.GetAsInt64(i)) - z) * scale.data<float>()[s];
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------------------------
// GatherBlockQuantized: data (uint8 holding 8 / bits values per byte, low bits first), indices, scales,
// zero_points; attributes gather_axis (0), quantize_axis (the last dim), block_size (128), bits (4).
// Output = Gather(data) dequantized: (q − zp) · scale per block along the last dim; a missing zero point is
// 2^(bits−1); an index out of range gives zeros (ONNX Runtime's choice).

struct GatherBlockAttrs {
  int64_t bits = 4, block = 128, components = 2;
};

Result<GatherBlockAttrs> ReadGatherBlock(const Node& node, int64_t rank) {
  GatherBlockAttrs a;
  const std::string where = node.Describe() + ": ";
  a.bits = node.GetInt("bits", 4);
  a.block = node.GetInt("block_size", 128);
  if (a.bits != 2 && a.bits != 4 && a.bits != 8) {
    return Unsupported(where + "bits=" + std::to_string(a.bits) + " is not supported (2, 4 or 8)");
  }
  if (a.block < 16 || (a.block & (a.block - 1)) != 0) {
    return InvalidArgument(where + "block_size " + std::to_string(a.block) + " must be a power of 2 and >= 16");
  }
  a.components = 8 / a.bits;
  if (rank < 2) return InvalidArgument(where + "data must have rank >= 2");
  ASSIGN_OR_RETURN(const int64_t gather_axis, NormalizeAxis(node.GetInt("gather_axis", 0), rank, node));
  ASSIGN_OR_RETURN(const int64_t quantize_axis, NormalizeAxis(node.GetInt("quantize_axis", 1), rank, node));
  if (gather_axis != 0 || quantize_axis != rank - 1) {
    return Unsupported(where + "uint8 data needs gather_axis 0 and quantize_axis the last dim (ONNX Runtime's rule)");
  }
  return a;
}

Status InferGatherBlockQuantized(InferContext& ctx) {
  RETURN_IF_ERROR(Require(ctx, {{0, "data"}, {1, "indices"}, {2, "scales"}}));
  const ValueInfo* data = ctx.input(0);
  if (data->dtype == DType::kUndefined) {
    return Unsupported(ctx.node().Describe() +
                       ": int4/uint4 data is not supported: this ONNX build (1.12) has no 4-bit type");
  }
  RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kU8}));
  RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kI32, DType::kI64}));
  if (ctx.input(2)->dtype != DType::kF32) {
    return Unsupported(ctx.node().Describe() + ": scales have dtype " + Name(ctx.input(2)->dtype) +
                       "; only float32 is supported");
  }
  RETURN_IF_ERROR(CheckDType(ctx, 3, {DType::kU8}));
  const int64_t rank = static_cast<int64_t>(data->shape.size());
  ASSIGN_OR_RETURN(const GatherBlockAttrs a, ReadGatherBlock(ctx.node(), rank));
  const Shape& scales = ctx.input(2)->shape;
  if (static_cast<int64_t>(scales.size()) != rank) return ctx.Error("data and scales must have one rank");
  if (Known(data->shape) && Known(scales)) {
    Shape expected = data->shape;
    expected.back() = CeilDiv(data->shape.back() * a.components, a.block);
    if (scales != expected) {
      return ctx.Error("scales " + ShapeToString(scales) + " must be " + ShapeToString(expected));
    }
    if (const ValueInfo* zp = ctx.input(3); zp != nullptr && Known(zp->shape)) {
      expected.back() = CeilDiv(expected.back(), a.components);
      if (zp->shape != expected) {
        return ctx.Error("zero_points " + ShapeToString(zp->shape) + " must be " + ShapeToString(expected));
      }
    }
  }
  Shape out = ctx.input(1)->shape;
  out.insert(out.end(), data->shape.begin() + 1, data->shape.end());
  if (out.back() >= 0) out.back() *= a.components;
  ctx.SetOutput(0, DType::kF32, out);
  return Status::Ok();
}

Status RunGatherBlockQuantized(KernelContext& ctx) {
  const Tensor& data = *ctx.input(0);
  ASSIGN_OR_RETURN(const GatherBlockAttrs a, ReadGatherBlock(ctx.node(), data.rank()));
  const std::vector<int64_t> indices = ctx.input(1)->ToInt64Vector();
  const float* scales = ctx.input(2)->data<float>();
  const Tensor* zp = ctx.input(3);
  const uint8_t* q = data.data<uint8_t>();
  const int64_t rows = data.dim(0), q_dim = data.dim(data.rank() - 1) * a.components;
  const int64_t row_size = data.numel() / rows * a.components;  // values per gathered slice
  const int64_t blocks = CeilDiv(q_dim, a.block), zp_row = CeilDiv(blocks, a.components);
  const int32_t mask = (1 << a.bits) - 1;
  float* y = ctx.output(0)->data<float>();
  for (size_t g = 0; g < indices.size(); ++g) {
    int64_t index = indices[g];
    float* out = y + static_cast<int64_t>(g) * row_size;
    if (index < -rows || index >= rows) {
      std::fill(out, out + row_size, 0.0f);
      continue;
    }
    if (index < 0) index += rows;
    for (int64_t i = 0; i < row_size; ++i) {
      const int64_t flat = index * row_size + i;  // logical element of data
      const int32_t value = (q[flat / a.components] >> (a.bits * (flat % a.components))) & mask;
      const int64_t line = flat / q_dim, block = flat % q_dim / a.block;
      int32_t z = 1 << (a.bits - 1);
      if (zp != nullptr) {
        const uint8_t packed = zp->data<uint8_t>()[line * zp_row + block / a.components];
        z = (packed >> (a.bits * (block % a.components))) & mask;
      }
      out[i] = static_cast<float>(value - z) * scales[line * blocks + block];
    }
  }
  return Status::Ok();
}

}  // namespace

bool ScalarPerSpan(const Shape& in, const Shape& out) {
  if (NumElements(in) == 1) return true;
  for (size_t i = out.size(); i-- > 0;) {
    if (out[i] == 1) continue;
    const size_t offset = out.size() - in.size();
    return i < offset || in[i - offset] == 1;
  }
  return false;
}

std::vector<float> QLinearSoftmaxTable(float x_scale, int64_t reduce) {
  const float quotient = std::numeric_limits<float>::max() / static_cast<float>(reduce);
  const double shift = std::max(0.0, std::log(static_cast<double>(quotient)) - 5.0) / x_scale;
  std::vector<float> table(256);
  for (int i = 0; i < 256; ++i) {
    table[static_cast<size_t>(i)] =
        static_cast<float>(std::exp((static_cast<double>(i) - 255 + shift) * static_cast<double>(x_scale)));
  }
  return table;
}

std::vector<OpEntry> ContribQuantOps() {
  return {
      {"MatMulNBits", InferMatMulNBits, RunMatMulNBits, kMicrosoftDomain},
      {"MatMulIntegerToFloat", InferMatMulIntegerToFloat, RunMatMulIntegerToFloat, kMicrosoftDomain},
      {"DynamicQuantizeMatMul", InferDynamicQuantizeMatMul, RunDynamicQuantizeMatMul, kMicrosoftDomain},
      {"QGemm", InferQGemm, RunQGemm, kMicrosoftDomain},
      {"QLinearAdd", InferQLinearBinary, RunQLinearBinary<false>, kMicrosoftDomain},
      {"QLinearMul", InferQLinearBinary, RunQLinearBinary<true>, kMicrosoftDomain},
      {"QLinearSigmoid", InferQLinearUnary, RunQLinearSigmoid, kMicrosoftDomain},
      {"QLinearLeakyRelu", InferQLinearUnary, RunQLinearLeakyRelu, kMicrosoftDomain},
      {"QLinearConcat", InferQLinearConcat, RunQLinearConcat, kMicrosoftDomain},
      {"QLinearGlobalAveragePool", InferQLinearGlobalAveragePool, RunQLinearGlobalAveragePool, kMicrosoftDomain},
      {"QLinearAveragePool", InferQLinearAveragePool, RunQLinearAveragePool, kMicrosoftDomain},
      {"QLinearSoftmax", InferQLinearSoftmax, RunQLinearSoftmax, kMicrosoftDomain},
      {"QuantizeLinear", InferContribQuantize, RunContribQuantize, kMicrosoftDomain},
      {"DequantizeLinear", InferContribDequantize, RunContribDequantize, kMicrosoftDomain},
      {"GatherBlockQuantized", InferGatherBlockQuantized, RunGatherBlockQuantized, kMicrosoftDomain},
  };
}

}  // namespace chipfit
