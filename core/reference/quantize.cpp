// Reference QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearConv, QLinearMatMul.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/graph/passes.h"
#include "core/reference/conv_util.h"
#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

bool AllKnown(const Shape& shape) {
  return std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d >= 0; });
}

bool IsScalarLike(const Shape& shape) { return shape.size() <= 1 && AllKnown(shape) && NumElements(shape) == 1; }

std::string Name(DType dtype) { return std::string(DTypeName(dtype)); }

// Every quantizing op rounds half to even. std::nearbyint does so in the default rounding mode, which
// nothing in chipfit changes; std::round would round ties away from zero.
double RoundHalfEven(double v) { return std::nearbyint(v); }

std::vector<float> ToFloats(const Tensor& t) {
  const std::vector<double> d = ToDoubles(t);
  return std::vector<float>(d.begin(), d.end());
}

// Zero points as int64; an omitted one is a single 0.
std::vector<int64_t> ZeroPoints(const Tensor* zp) {
  if (zp == nullptr || zp->numel() == 0) return {0};
  return zp->ToInt64Vector();
}

// Run time repeats the shape function's check: a zero point indexed like its scale must be as long.
Status CheckZeroPointCount(const KernelContext& ctx, const std::vector<int64_t>& zp, const Tensor& scale) {
  if (zp.size() == 1 || static_cast<int64_t>(zp.size()) == scale.numel()) return Status::Ok();
  return ctx.Error("the zero point holds " + std::to_string(zp.size()) + " values but the scale " +
                   std::to_string(scale.numel()));
}

// The result of a division or multiplication done "in the precision of" a 16-bit float type: the
// float result rounded once to that type, which equals the correctly rounded 16-bit operation.
float InPrecisionOf(DType dtype, float v) {
  if (dtype == DType::kF16) return static_cast<float>(Float16(v));
  if (dtype == DType::kBF16) return static_cast<float>(BFloat16(v));
  return v;
}

// ONNX element types chipfit's DType lacks, named so that a refusal says which one.
std::string OnnxTypeName(int64_t code) {
  switch (code) {
    case 17: return "float8e4m3fn";
    case 18: return "float8e4m3fnuz";
    case 19: return "float8e5m2";
    case 20: return "float8e5m2fnuz";
    case 21: return "uint4";
    case 22: return "int4";
    case 23: return "float4e2m1";
    default: return "ONNX type " + std::to_string(code);
  }
}

const std::vector<DType> kQuantizedDTypes = {DType::kU8, DType::kI8, DType::kU16, DType::kI16};
const std::vector<DType> kScaleDTypes = {DType::kF32, DType::kF16, DType::kBF16};

// How a scale (and its zero point) covers x, viewed as [outer, axis_dim, inner]: one value for all,
// one per index along the axis, or one per block of `block` consecutive indices along it.
struct QuantAxis {
  bool per_tensor = true;
  int64_t axis_dim = 1, inner = 1, blocks = 1, block = 0;

  int64_t ScaleIndex(int64_t flat) const {
    if (per_tensor) return 0;
    const int64_t a = flat / inner % axis_dim;
    if (block == 0) return a;
    return (flat / (axis_dim * inner) * blocks + a / block) * inner + flat % inner;
  }
};

// Reads axis (opset 13) and block_size (opset 21) and checks the scale's shape against x; all dims known.
Result<QuantAxis> ReadQuantAxis(const Node& node, int64_t opset, const Shape& x, const Shape& scale,
                                const std::string& scale_name) {
  QuantAxis q;
  const int64_t block = opset >= 21 ? node.GetInt("block_size", 0) : 0;
  const std::string where = node.Describe() + ": ";
  if (block < 0) return InvalidArgument(where + "block_size " + std::to_string(block) + " must be >= 0");
  if (block == 0 && IsScalarLike(scale)) return q;
  if (opset < 13) {
    return InvalidArgument(where + scale_name + " must be a scalar at opset " + std::to_string(opset) +
                           " (per-axis scales came with opset 13), got shape " + ShapeToString(scale));
  }
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(node.GetInt("axis", 1), static_cast<int64_t>(x.size()), node));
  const size_t a = static_cast<size_t>(axis);
  q.per_tensor = false;
  q.axis_dim = x[a];
  q.inner = Product(x, a + 1);
  if (block == 0) {
    if (scale.size() != 1 || scale[0] != x[a]) {
      return InvalidArgument(where + scale_name + " " + ShapeToString(scale) +
                             " must be a scalar or hold one value per index of axis " + std::to_string(axis) +
                             " of x " + ShapeToString(x) + " ([" + std::to_string(x[a]) + "])");
    }
    return q;
  }
  Shape expected = x;
  expected[a] = CeilDiv(x[a], block);
  if (scale != expected) {
    return InvalidArgument(where + "blocked quantization (block_size " + std::to_string(block) + ", axis " +
                           std::to_string(axis) + ") of x " + ShapeToString(x) + " needs " + scale_name + " of shape " +
                           ShapeToString(expected) + ", got " + ShapeToString(scale));
  }
  q.block = block;
  q.blocks = expected[a];
  return q;
}

// The zero point, when given, has the scale's shape.
Status CheckZeroPointShape(const Node& node, const ValueInfo* scale, const ValueInfo* zp, const std::string& zp_name) {
  if (zp == nullptr || !AllKnown(scale->shape) || !AllKnown(zp->shape)) return Status::Ok();
  if (zp->shape == scale->shape || (IsScalarLike(zp->shape) && IsScalarLike(scale->shape))) return Status::Ok();
  return InvalidArgument(node.Describe() + ": " + zp_name + " " + ShapeToString(zp->shape) +
                         " must have the scale's shape " + ShapeToString(scale->shape));
}

Status CheckQuantAxis(const InferContext& ctx, const std::string& scale_name, const std::string& zp_name) {
  const ValueInfo* x = ctx.input(0);
  const ValueInfo* scale = ctx.input(1);
  if (scale == nullptr) return ctx.Error(scale_name + " is required");
  RETURN_IF_ERROR(CheckZeroPointShape(ctx.node(), scale, ctx.input(2), zp_name));
  if (!AllKnown(x->shape) || !AllKnown(scale->shape)) return Status::Ok();
  return ReadQuantAxis(ctx.node(), ctx.opset(), x->shape, scale->shape, scale_name).status();
}

// ---------------------------------------------------------------------------------------------------------------
// QuantizeLinear: y = saturate(round_half_even(x / y_scale) + y_zero_point).

// The output dtype: y_zero_point's, else output_dtype (opset 21), else uint8; both given must agree.
Result<DType> QuantizedDType(const Node& node, int64_t opset, const ValueInfo* zp) {
  const int64_t code = opset >= 21 ? node.GetInt("output_dtype", 0) : 0;
  DType from_attr = DType::kUndefined;
  if (code != 0) {
    const std::optional<DType> d = DTypeFromOnnx(static_cast<int32_t>(code));
    if (!d.has_value()) {
      return Unsupported(node.Describe() + ": output_dtype " + OnnxTypeName(code) +
                         " is not supported: chipfit has no such element type");
    }
    if (std::find(kQuantizedDTypes.begin(), kQuantizedDTypes.end(), *d) == kQuantizedDTypes.end()) {
      return InvalidArgument(node.Describe() + ": output_dtype " + Name(*d) +
                             " is not a quantized type (uint8, int8, uint16, int16)");
    }
    from_attr = *d;
  }
  if (zp == nullptr) return from_attr == DType::kUndefined ? DType::kU8 : from_attr;
  if (std::find(kQuantizedDTypes.begin(), kQuantizedDTypes.end(), zp->dtype) == kQuantizedDTypes.end()) {
    return Unsupported(node.Describe() + ": y_zero_point has dtype " + Name(zp->dtype) +
                       ", which chipfit does not quantize to (uint8, int8, uint16, int16)");
  }
  if (from_attr != DType::kUndefined && from_attr != zp->dtype) {
    return InvalidArgument(node.Describe() + ": output_dtype " + Name(from_attr) +
                           " differs from y_zero_point's dtype " + Name(zp->dtype));
  }
  return zp->dtype;
}

Status InferQuantizeLinear(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("input x is required");
  RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kF32, DType::kF16, DType::kBF16, DType::kI32}));
  RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kF32, DType::kF16, DType::kBF16, DType::kI32}));
  ASSIGN_OR_RETURN(const DType out, QuantizedDType(ctx.node(), ctx.opset(), ctx.input(2)));
  RETURN_IF_ERROR(CheckQuantAxis(ctx, "y_scale", "y_zero_point"));
  ctx.SetOutput(0, out, x->shape);
  return Status::Ok();
}

template <typename Q>
void QuantizeInto(const std::vector<float>& x, const std::vector<float>& scale, DType scale_dtype,
                  const std::vector<int64_t>& zp, const QuantAxis& q, Q* y) {
  const int64_t n = static_cast<int64_t>(x.size());
#pragma omp parallel for
  for (int64_t i = 0; i < n; ++i) {
    const size_t s = static_cast<size_t>(q.ScaleIndex(i));
    const float quotient = InPrecisionOf(scale_dtype, x[static_cast<size_t>(i)] / scale[s]);
    y[i] = FromDouble<Q>(RoundHalfEven(quotient) + static_cast<double>(zp[zp.size() == 1 ? 0 : s]));
  }
}

Status RunQuantizeLinear(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& scale = *ctx.input(1);
  ASSIGN_OR_RETURN(const QuantAxis q, ReadQuantAxis(ctx.node(), ctx.opset(), x.shape(), scale.shape(), "y_scale"));
  const std::vector<float> xs = ToFloats(x), scales = ToFloats(scale);
  const std::vector<int64_t> zp = ZeroPoints(ctx.input(2));
  RETURN_IF_ERROR(CheckZeroPointCount(ctx, zp, scale));
  Tensor& y = *ctx.output(0);
  return VisitKernelDType(ctx.node(), y.dtype(), [&](auto tag) -> Status {
    using Q = decltype(tag);
    if constexpr (std::is_integral_v<Q> && !std::is_same_v<Q, bool>) {
      QuantizeInto(xs, scales, scale.dtype(), zp, q, y.data<Q>());
      return Status::Ok();
    }
    return Unsupported(ctx.node().Describe() + ": cannot quantize to " + Name(y.dtype()));
  });
}

// ---------------------------------------------------------------------------------------------------------------
// DequantizeLinear: y = (x - x_zero_point) * x_scale, in the precision of the output (x_scale's dtype).

Status InferDequantizeLinear(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  const ValueInfo* scale = ctx.input(1);
  const ValueInfo* zp = ctx.input(2);
  if (x == nullptr || scale == nullptr) return ctx.Error("inputs x and x_scale are required");
  RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kI32}));
  RETURN_IF_ERROR(CheckDType(ctx, 1, kScaleDTypes));
  if (zp != nullptr && zp->dtype != x->dtype) {
    return ctx.Error("x_zero_point has dtype " + Name(zp->dtype) + " but x has " + Name(x->dtype));
  }
  RETURN_IF_ERROR(CheckQuantAxis(ctx, "x_scale", "x_zero_point"));
  ctx.SetOutput(0, scale->dtype, x->shape);
  return Status::Ok();
}

Status RunDequantizeLinear(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& scale = *ctx.input(1);
  ASSIGN_OR_RETURN(const QuantAxis q, ReadQuantAxis(ctx.node(), ctx.opset(), x.shape(), scale.shape(), "x_scale"));
  const std::vector<int64_t> zp = ZeroPoints(ctx.input(2));
  RETURN_IF_ERROR(CheckZeroPointCount(ctx, zp, scale));
  if (x.dtype() == DType::kI32 && std::any_of(zp.begin(), zp.end(), [](int64_t v) { return v != 0; })) {
    return ctx.Error("int32 x has no zero point, but x_zero_point holds a non-zero value");
  }
  const std::vector<float> scales = ToFloats(scale);
  const std::vector<int64_t> xs = x.ToInt64Vector();
  std::vector<double> y(xs.size());
  const int64_t n = static_cast<int64_t>(xs.size());
#pragma omp parallel for
  for (int64_t i = 0; i < n; ++i) {
    const size_t s = static_cast<size_t>(q.ScaleIndex(i));
    const int64_t shifted = xs[static_cast<size_t>(i)] - zp[zp.size() == 1 ? 0 : s];
    y[static_cast<size_t>(i)] = static_cast<float>(shifted) * scales[s];
  }
  StoreDoubles(y, ctx.output(0));
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------------------------
// DynamicQuantizeLinear (uint8): the range [min(x), max(x)] widened to include 0 maps onto [0, 255].

Status InferDynamicQuantizeLinear(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("input x is required");
  RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kF32}));
  ctx.SetOutput(0, DType::kU8, x->shape);
  ctx.SetOutput(1, DType::kF32, {});
  ctx.SetOutput(2, DType::kU8, {});
  return Status::Ok();
}

Status RunDynamicQuantizeLinear(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const float* xs = x.data<float>();
  const int64_t n = x.numel();
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(xs[i])) {
      return ctx.Error("x holds " + std::to_string(xs[i]) + " at flat index " + std::to_string(i) +
                       ", which leaves the quantization range undefined");
    }
    lo = std::min(lo, xs[i]);
    hi = std::max(hi, xs[i]);
  }
  constexpr float kQMax = 255.0f;
  // An all-zero x has an empty range; scale 1 (ONNX Runtime's choice) quantizes it to zeros exactly.
  const float scale = hi == lo ? 1.0f : (hi - lo) / kQMax;
  const float zero_point = static_cast<float>(RoundHalfEven(std::clamp(0.0f - lo / scale, 0.0f, kQMax)));
  uint8_t* y = ctx.output(0)->data<uint8_t>();
#pragma omp parallel for
  for (int64_t i = 0; i < n; ++i) y[i] = FromDouble<uint8_t>(RoundHalfEven(xs[i] / scale) + zero_point);
  ctx.output(1)->data<float>()[0] = scale;
  ctx.output(2)->data<uint8_t>()[0] = static_cast<uint8_t>(zero_point);
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------------------------
// Requantization shared by QLinearConv and QLinearMatMul: the int32 accumulator times
// a_scale * b_scale / y_scale, rounded half to even, plus y's zero point, saturated to y's dtype. All of it in
// float, as ONNX Runtime's MlasRequantizeOutput does: float(acc) * multiplier rounded to float, then to an
// integer. A double product differs from it where the float product lands within an ulp of .5.

// Checks that input `i` has one of `dtypes` and holds one value or a count in `allowed_counts` (< 0: unknown).
Status CheckQuantInput(const InferContext& ctx, size_t i, const char* name, const std::vector<DType>& dtypes,
                       const std::vector<int64_t>& allowed_counts) {
  const ValueInfo* in = ctx.input(i);
  if (in == nullptr) return Status::Ok();
  RETURN_IF_ERROR(CheckDType(ctx, i, dtypes));
  if (!AllKnown(in->shape)) return Status::Ok();
  const int64_t count = NumElements(in->shape);
  if (in->shape.size() <= 1 && count == 1) return Status::Ok();
  for (int64_t allowed : allowed_counts) {
    if (allowed >= 0 && count == allowed) return Status::Ok();
  }
  std::string expected = "a scalar";
  for (int64_t allowed : allowed_counts) {
    const std::string option = " or " + std::to_string(allowed) + " values";
    if (allowed > 1 && expected.find(option) == std::string::npos) expected += option;
  }
  return ctx.Error(std::string(name) + " " + ShapeToString(in->shape) + " must be " + expected);
}

// The y zero point decides the output dtype, so it must be there.
Result<DType> OutputDType(const InferContext& ctx, size_t zp) {
  if (ctx.input(zp) == nullptr) return ctx.Error("y_zero_point is required: its dtype is the output's");
  return ctx.input(zp)->dtype;
}

// Writes acc[i] requantized with multiplier[index(i)] into y (u8 or i8).
template <typename Index>
Status Requantize(const KernelContext& ctx, const std::vector<int64_t>& acc, const std::vector<float>& multiplier,
                  int64_t y_zp, Tensor& y, const Index& index) {
  return VisitKernelDType(ctx.node(), y.dtype(), [&](auto tag) -> Status {
    using Q = decltype(tag);
    if constexpr (std::is_same_v<Q, uint8_t> || std::is_same_v<Q, int8_t>) {
      Q* out = y.data<Q>();
      const int64_t n = static_cast<int64_t>(acc.size());
#pragma omp parallel for
      for (int64_t i = 0; i < n; ++i) {
        const float scaled =
            static_cast<float>(acc[static_cast<size_t>(i)]) * multiplier[static_cast<size_t>(index(i))];
        out[i] = FromDouble<Q>(RoundHalfEven(scaled) + static_cast<double>(y_zp));
      }
      return Status::Ok();
    }
    return Unsupported(ctx.node().Describe() + ": output dtype " + Name(y.dtype()) + " is not uint8 or int8");
  });
}

Result<float> ScalarScale(const KernelContext& ctx, size_t i, const char* name) {
  const Tensor* t = ctx.input(i);
  if (t == nullptr || t->numel() != 1) return ctx.Error(std::string(name) + " must hold exactly one value");
  const float v = static_cast<float>(t->GetAsDouble(0));
  return v;
}

const std::vector<DType> kInt8DTypes = {DType::kU8, DType::kI8};

// ---------------------------------------------------------------------------------------------------------------
// QLinearConv: inputs x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B.

Status InferQLinearConv(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  const ValueInfo* w = ctx.input(3);
  if (x == nullptr || w == nullptr || ctx.input(1) == nullptr || ctx.input(4) == nullptr || ctx.input(6) == nullptr) {
    return ctx.Error("inputs x, x_scale, w, w_scale and y_scale are required");
  }
  RETURN_IF_ERROR(CheckDType(ctx, 0, kInt8DTypes));
  RETURN_IF_ERROR(CheckDType(ctx, 3, kInt8DTypes));
  ASSIGN_OR_RETURN(const DType out, OutputDType(ctx, 7));
  ASSIGN_OR_RETURN(const ConvGeometry g, ReadConvGeometry(ctx.node(), x->shape, w->shape, false));
  const int64_t m = g.out_channels;
  RETURN_IF_ERROR(CheckQuantInput(ctx, 1, "x_scale", {DType::kF32}, {}));
  RETURN_IF_ERROR(CheckQuantInput(ctx, 2, "x_zero_point", {x->dtype}, {}));
  RETURN_IF_ERROR(CheckQuantInput(ctx, 4, "w_scale", {DType::kF32}, {m}));
  RETURN_IF_ERROR(CheckQuantInput(ctx, 5, "w_zero_point", {w->dtype}, {m}));
  RETURN_IF_ERROR(CheckQuantInput(ctx, 6, "y_scale", {DType::kF32}, {}));
  RETURN_IF_ERROR(CheckQuantInput(ctx, 7, "y_zero_point", kInt8DTypes, {}));
  const ValueInfo* bias = ctx.input(8);
  if (bias != nullptr) {
    RETURN_IF_ERROR(CheckDType(ctx, 8, {DType::kI32}));
    if (bias->shape.size() != 1 || (bias->shape[0] >= 0 && m >= 0 && bias->shape[0] != m)) {
      return ctx.Error("B " + ShapeToString(bias->shape) + " must hold one int32 per output channel ([" +
                       std::to_string(m) + "])");
    }
  }
  Shape shape = {g.batch, g.out_channels};
  shape.insert(shape.end(), g.window.out.begin(), g.window.out.end());
  ctx.SetOutput(0, out, shape);
  return Status::Ok();
}

// Per-output-channel values of w_scale / w_zero_point / B, broadcast from one value.
template <typename T>
Result<std::vector<T>> PerChannel(const KernelContext& ctx, std::vector<T> values, int64_t channels, const char* name) {
  if (values.size() == 1) values.assign(static_cast<size_t>(channels), values[0]);
  if (static_cast<int64_t>(values.size()) != channels) {
    return ctx.Error(std::string(name) + " holds " + std::to_string(values.size()) + " values for " +
                     std::to_string(channels) + " output channels");
  }
  return values;
}

Status RunQLinearConv(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& w = *ctx.input(3);
  ASSIGN_OR_RETURN(const ConvGeometry g, ReadConvGeometry(ctx.node(), x.shape(), w.shape(), false));
  const int64_t channels = g.out_channels;
  ASSIGN_OR_RETURN(const float x_scale, ScalarScale(ctx, 1, "x_scale"));
  ASSIGN_OR_RETURN(const float y_scale, ScalarScale(ctx, 6, "y_scale"));
  ASSIGN_OR_RETURN(const std::vector<float> w_scale, PerChannel(ctx, ToFloats(*ctx.input(4)), channels, "w_scale"));
  ASSIGN_OR_RETURN(const std::vector<int64_t> w_zp,
                   PerChannel(ctx, ZeroPoints(ctx.input(5)), channels, "w_zero_point"));
  const std::vector<int64_t> x_zp = ZeroPoints(ctx.input(2)), y_zp = ZeroPoints(ctx.input(7));
  if (x_zp.size() != 1 || y_zp.size() != 1) return ctx.Error("x_zero_point and y_zero_point must hold one value");
  std::vector<int64_t> bias(static_cast<size_t>(channels), 0);
  if (const Tensor* b = ctx.input(8)) {
    ASSIGN_OR_RETURN(bias, PerChannel(ctx, b->ToInt64Vector(), channels, "B"));
  }
  std::vector<int32_t> xs(static_cast<size_t>(x.numel())), ws(static_cast<size_t>(w.numel()));
  const std::vector<int64_t> xv = x.ToInt64Vector(), wv = w.ToInt64Vector();
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<int32_t>(xv[i] - x_zp[0]);
  const size_t per_channel = ws.size() / std::max<size_t>(1, static_cast<size_t>(channels));
  for (size_t i = 0; i < ws.size(); ++i) ws[i] = static_cast<int32_t>(wv[i] - w_zp[i / per_channel]);
  std::vector<float> multiplier(static_cast<size_t>(channels));
  for (size_t m = 0; m < multiplier.size(); ++m) multiplier[m] = x_scale * w_scale[m] / y_scale;
  const int64_t out_plane = Product(g.window.out);
  return Requantize(ctx, ConvAccumulate<int64_t>(g, xs, ws, bias), multiplier, y_zp[0], *ctx.output(0),
                    [&](int64_t i) { return i / out_plane % channels; });
}

// ---------------------------------------------------------------------------------------------------------------
// QLinearMatMul: inputs a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
// a's scale and zero point are per tensor or per row ([M] or [D..., M, 1]); b's per tensor or per
// column ([N] or [D..., 1, N]).

Status InferQLinearMatMul(InferContext& ctx) {
  const ValueInfo* a = ctx.input(0);
  const ValueInfo* b = ctx.input(3);
  if (a == nullptr || b == nullptr || ctx.input(1) == nullptr || ctx.input(4) == nullptr || ctx.input(6) == nullptr) {
    return ctx.Error("inputs a, a_scale, b, b_scale and y_scale are required");
  }
  RETURN_IF_ERROR(CheckDType(ctx, 0, kInt8DTypes));
  RETURN_IF_ERROR(CheckDType(ctx, 3, kInt8DTypes));
  ASSIGN_OR_RETURN(const DType out, OutputDType(ctx, 7));
  ASSIGN_OR_RETURN(const MatMulGeometry g, ReadMatMul(ctx.node(), a->shape, b->shape));
  const bool known = AllKnown(g.a_batch) && AllKnown(g.b_batch) && g.m >= 0 && g.n >= 0;
  const std::vector<int64_t> rows = {known ? g.m : -1, known ? Product(g.a_batch) * g.m : -1};
  const std::vector<int64_t> cols = {known ? g.n : -1, known ? Product(g.b_batch) * g.n : -1};
  // Opset 21 lets the scales be float16 or bfloat16.
  const std::vector<DType> scales = ctx.opset() >= 21 ? kScaleDTypes : std::vector<DType>{DType::kF32};
  RETURN_IF_ERROR(CheckQuantInput(ctx, 1, "a_scale", scales, rows));
  RETURN_IF_ERROR(CheckQuantInput(ctx, 2, "a_zero_point", {a->dtype}, rows));
  RETURN_IF_ERROR(CheckQuantInput(ctx, 4, "b_scale", scales, cols));
  RETURN_IF_ERROR(CheckQuantInput(ctx, 5, "b_zero_point", {b->dtype}, cols));
  RETURN_IF_ERROR(CheckQuantInput(ctx, 6, "y_scale", scales, {}));
  RETURN_IF_ERROR(CheckQuantInput(ctx, 7, "y_zero_point", kInt8DTypes, {}));
  ctx.SetOutput(0, out, g.out);
  return Status::Ok();
}

// A per-row or per-column parameter holds 1, (rows or cols) or (batch x rows or cols) values; the
// index modulo its size picks the right one in every case.
Status CheckPerRowCount(const KernelContext& ctx, size_t count, int64_t per_matrix, int64_t per_batch,
                        const char* name) {
  const int64_t c = static_cast<int64_t>(count);
  if (c == 1 || c == per_matrix || c == per_batch) return Status::Ok();
  return ctx.Error(std::string(name) + " holds " + std::to_string(c) + " values; expected 1, " +
                   std::to_string(per_matrix) + " or " + std::to_string(per_batch));
}

Status RunQLinearMatMul(KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(3);
  ASSIGN_OR_RETURN(const MatMulGeometry g, ReadMatMul(ctx.node(), a.shape(), b.shape()));
  const int64_t a_rows = Product(g.a_batch) * g.m, b_cols = Product(g.b_batch) * g.n;
  const std::vector<float> a_scale = ToFloats(*ctx.input(1)), b_scale = ToFloats(*ctx.input(4));
  const std::vector<int64_t> a_zp = ZeroPoints(ctx.input(2)), b_zp = ZeroPoints(ctx.input(5));
  RETURN_IF_ERROR(CheckPerRowCount(ctx, a_scale.size(), g.m, a_rows, "a_scale"));
  RETURN_IF_ERROR(CheckPerRowCount(ctx, a_zp.size(), g.m, a_rows, "a_zero_point"));
  RETURN_IF_ERROR(CheckPerRowCount(ctx, b_scale.size(), g.n, b_cols, "b_scale"));
  RETURN_IF_ERROR(CheckPerRowCount(ctx, b_zp.size(), g.n, b_cols, "b_zero_point"));
  ASSIGN_OR_RETURN(const float y_scale, ScalarScale(ctx, 6, "y_scale"));
  const std::vector<int64_t> y_zp = ZeroPoints(ctx.input(7));
  if (y_zp.size() != 1) return ctx.Error("y_zero_point must hold one value");

  // Shift by the zero points once: a's row r of the stacked [a_batch..., M] rows, b's column c.
  const std::vector<int64_t> av = a.ToInt64Vector(), bv = b.ToInt64Vector();
  std::vector<int32_t> as(av.size()), bs(bv.size());
  for (size_t i = 0; i < as.size(); ++i) {
    as[i] = static_cast<int32_t>(av[i] - a_zp[i / static_cast<size_t>(g.k) % a_zp.size()]);
  }
  for (size_t i = 0; i < bs.size(); ++i) {
    const size_t col = i / static_cast<size_t>(g.k * g.n) * static_cast<size_t>(g.n) + i % static_cast<size_t>(g.n);
    bs[i] = static_cast<int32_t>(bv[i] - b_zp[col % b_zp.size()]);
  }
  const BroadcastIndexer a_index(g.a_batch, g.batch), b_index(g.b_batch, g.batch);
  const int64_t batches = Product(g.batch);
  std::vector<int64_t> acc(static_cast<size_t>(batches * g.m * g.n));
  std::vector<float> multiplier(acc.size());
#pragma omp parallel for
  for (int64_t r = 0; r < batches * g.m; ++r) {
    const int64_t batch = r / g.m, row = a_index(batch) * g.m + r % g.m, b_batch = b_index(batch);
    const int32_t* ap = &as[static_cast<size_t>(row * g.k)];
    const int32_t* bp = &bs[static_cast<size_t>(b_batch * g.k * g.n)];
    int64_t* yp = &acc[static_cast<size_t>(r * g.n)];
    for (int64_t i = 0; i < g.k; ++i) {
      for (int64_t j = 0; j < g.n; ++j) yp[j] += static_cast<int64_t>(ap[i]) * bp[i * g.n + j];
    }
    const float row_scale = a_scale[static_cast<size_t>(row) % a_scale.size()];
    for (int64_t j = 0; j < g.n; ++j) {
      const float col_scale = b_scale[static_cast<size_t>(b_batch * g.n + j) % b_scale.size()];
      multiplier[static_cast<size_t>(r * g.n + j)] = row_scale * col_scale / y_scale;
    }
  }
  // QLinearGemm (com.chipfit): an int32 bias per column at scale a_scale·b_scale, added before requantizing.
  if (const Tensor* bias = ctx.input(8)) {
    const int32_t* b = bias->data<int32_t>();  // int32 [N], checked by InferQLinearGemm
    for (size_t i = 0; i < acc.size(); ++i) acc[i] += b[i % static_cast<size_t>(g.n)];
  }
  return Requantize(ctx, acc, multiplier, y_zp[0], *ctx.output(0), [](int64_t i) { return i; });
}

// QLinearGemm (com.chipfit, made by FuseQdqPatterns from a QDQ Gemm with C): QLinearMatMul's eight inputs and
// an int32 bias [N] at scale a_scale·b_scale[n] (as QLinearConv's B).
Status InferQLinearGemm(InferContext& ctx) {
  RETURN_IF_ERROR(InferQLinearMatMul(ctx));
  const ValueInfo* bias = ctx.input(8);
  const Shape& out = ctx.outputs()[0].shape;
  if (bias == nullptr || bias->dtype != DType::kI32 || bias->shape.size() != 1 ||
      (!out.empty() && out.back() >= 0 && bias->shape[0] >= 0 && bias->shape[0] != out.back())) {
    return ctx.Error("input 8 (bias) must be int32 [N]");
  }
  return Status::Ok();
}

}  // namespace

std::vector<OpEntry> QuantizeOps() {
  return {
      {"QuantizeLinear", InferQuantizeLinear, RunQuantizeLinear},
      {"DequantizeLinear", InferDequantizeLinear, RunDequantizeLinear},
      {"DynamicQuantizeLinear", InferDynamicQuantizeLinear, RunDynamicQuantizeLinear},
      {"QLinearConv", InferQLinearConv, RunQLinearConv},
      {"QLinearMatMul", InferQLinearMatMul, RunQLinearMatMul},
      {"QLinearGemm", InferQLinearGemm, RunQLinearMatMul, kChipfitDomain},
  };
}

}  // namespace chipfit
