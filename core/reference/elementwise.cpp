// Reference kernels for elementwise ops: unary math, activations, broadcasting binary and variadic ops, Where, Cast.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

// ---------------------------------------------------------------------------------------------------------------
// Element types and conversions.

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;
template <typename T>
constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Floating types are computed in double and rounded once at the end; integers stay in their own type so that
// int64 keeps all its bits; bool stays bool.
template <typename T>
using Calc = std::conditional_t<kIsFloat<T>, double, T>;

template <typename T>
Calc<T> Load(T v) {
  return static_cast<Calc<T>>(v);
}

template <typename T>
bool IsNaN(T v) {
  if constexpr (kIsFloat<T>) {
    return std::isnan(static_cast<double>(v));
  } else {
    return false;
  }
}

template <typename T>
bool IsNegative(T v) {
  if constexpr (std::is_signed_v<T>) {
    return v < 0;
  } else {
    return false;
  }
}

// Rounds to float with round-to-odd: a second rounding from there to float16/bfloat16 then gives the correctly
// rounded result (float carries more than 2p+2 significand bits for both), which plain double→float→half does not.
float RoundToOddFloat(long double v) {
  float f = static_cast<float>(v);
  if (std::isnan(f) || static_cast<long double>(f) == v) return f;
  if (std::fabs(static_cast<long double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits |= 1u;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Float → integer truncates toward zero (the Cast rule). Out-of-range values are undefined in ONNX; they
// saturate here (NaN → 0) so that the oracle never executes undefined C++.
template <typename I>
I SaturateToInt(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<I>::lowest())) return std::numeric_limits<I>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

// One value of any element type (or a Calc value) to element type To, with ONNX Cast semantics: integers wrap
// modulo 2^bits, floats round to nearest even, anything → bool is "not zero" (NaN is true).
template <typename To, typename From>
To Convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return static_cast<double>(v) != 0.0;
  } else if constexpr (std::is_same_v<From, bool>) {
    return Convert<To>(v ? 1 : 0);
  } else if constexpr (std::is_same_v<To, Float16> || std::is_same_v<To, BFloat16>) {
    return To(RoundToOddFloat(static_cast<long double>(v)));
  } else if constexpr (kIsInt<To> && kIsFloat<From>) {
    return SaturateToInt<To>(static_cast<double>(v));
  } else {
    return static_cast<To>(v);
  }
}

// Integer arithmetic wraps like two's complement hardware (numpy does the same) instead of being undefined.
template <typename C>
C WrapAdd(C a, C b) {
  if constexpr (kIsInt<C>) {
    return static_cast<C>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}
template <typename C>
C WrapSub(C a, C b) {
  if constexpr (kIsInt<C>) {
    return static_cast<C>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  } else {
    return a - b;
  }
}
template <typename C>
C WrapMul(C a, C b) {
  if constexpr (kIsInt<C>) {
    return static_cast<C>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}
template <typename C>
C WrapNeg(C a) {
  return WrapSub(C{0}, a);
}

// ---------------------------------------------------------------------------------------------------------------
// Dtype sets and checks shared by all ops.

enum TypeSet : unsigned {
  kFloats = 1,
  kSigned = 2,
  kUnsigned = 4,
  kBools = 8,
  kInts = kSigned | kUnsigned,
  kNumeric = kFloats | kInts,
  kFloatsAndSigned = kFloats | kSigned,
};

bool InSet(DType dtype, unsigned set) {
  if (IsFloatingDType(dtype)) return set & kFloats;
  if (dtype == DType::kBool) return set & kBools;
  if (IsOneOf(dtype, {DType::kI8, DType::kI16, DType::kI32, DType::kI64})) return set & kSigned;
  if (IsOneOf(dtype, {DType::kU8, DType::kU16, DType::kU32, DType::kU64})) return set & kUnsigned;
  return false;
}

std::string DescribeSet(unsigned set) {
  std::string out;
  auto add = [&](unsigned bit, const char* name) {
    if (set & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  };
  add(kFloats, "f16/bf16/f32/f64");
  add(kSigned, "i8/i16/i32/i64");
  add(kUnsigned, "u8/u16/u32/u64");
  add(kBools, "bool");
  return out;
}

Status CheckDType(const Node& node, const char* what, DType dtype, unsigned set) {
  if (InSet(dtype, set)) return Status::Ok();
  return Unsupported(node.Describe() + ": " + what + " has dtype " + std::string(DTypeName(dtype)) + "; " +
                     node.op_type + " takes " + DescribeSet(set));
}

Status CheckSameDType(const Node& node, const ValueInfo& a, const ValueInfo& b, const std::string& names) {
  if (a.dtype == b.dtype) return Status::Ok();
  return InvalidArgument(node.Describe() + ": " + names + " must have the same dtype, got " +
                         std::string(DTypeName(a.dtype)) + " and " + std::string(DTypeName(b.dtype)));
}

Status CheckOpset(const Node& node, int64_t opset, int64_t since) {
  if (opset >= since) return Status::Ok();
  return InvalidArgument(node.Describe() + ": " + node.op_type + " exists from opset " + std::to_string(since) +
                         ", the model imports opset " + std::to_string(opset));
}

// The output shape of inputs broadcast together; the error names the node and the shapes.
Result<Shape> BroadcastInputs(const InferContext& ctx, size_t first, size_t count) {
  std::vector<Shape> shapes;
  for (size_t i = first; i < first + count; ++i) {
    const ValueInfo* in = ctx.input(i);
    if (in == nullptr) return ctx.Error("missing input " + std::to_string(i));
    shapes.push_back(in->shape);
  }
  Result<Shape> out = BroadcastShapes(shapes);
  if (!out.ok()) return ctx.Error(out.status().message());
  return out;
}

Status UnsupportedDType(const Node& node, DType dtype) {
  return Unsupported(node.Describe() + ": dtype " + std::string(DTypeName(dtype)) + " is not supported");
}

// out[i] = f(a[i'], b[i'']) over the broadcast output, with the inputs loaded as Calc values.
template <typename A, typename B, typename R, typename F>
void Map2(const Tensor& a, const Tensor& b, Tensor& out, F f) {
  const BroadcastIndexer ia(a.shape(), out.shape()), ib(b.shape(), out.shape());
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  R* po = out.data<R>();
  for (int64_t i = 0; i < out.numel(); ++i) po[i] = Convert<R>(f(Load(pa[ia(i)]), Load(pb[ib(i)])));
}

// ---------------------------------------------------------------------------------------------------------------
// Unary math and activations: one table row per op, evaluated by EvalFloat (floats, in double) or EvalInteger.

// clang-format off
enum class Unary {
  kAbs, kNeg, kExp, kLog, kSqrt, kReciprocal, kFloor, kCeil, kRound, kSign,
  kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kAsinh, kAcosh, kAtanh, kTanh, kErf,
  kIsNaN, kIsInf, kNot,
  kRelu, kLeakyRelu, kElu, kSelu, kCelu, kThresholdedRelu, kSigmoid, kHardSigmoid, kHardSwish,
  kSoftplus, kSoftsign, kGelu, kMish, kBitwiseNot,
};
// clang-format on

struct UnaryDef {
  const char* op_type;
  Unary op;
  unsigned types;
  int64_t since;
  bool to_bool = false;  // IsNaN, IsInf, Not
  float alpha = 0, beta = 0, gamma = 0;
};

// `since` is the op's first opset (forms before opset 6 differ only by the ignored consumed_inputs attribute).
// Attribute defaults are the spec's (Selu's constants are its float32 values).
constexpr UnaryDef kUnaryDefs[] = {
    {"Abs", Unary::kAbs, kNumeric, 1},
    {"Neg", Unary::kNeg, kFloatsAndSigned, 1},
    {"Exp", Unary::kExp, kFloats, 1},
    {"Log", Unary::kLog, kFloats, 1},
    {"Sqrt", Unary::kSqrt, kFloats, 1},
    {"Reciprocal", Unary::kReciprocal, kFloats, 1},
    {"Floor", Unary::kFloor, kFloats, 1},
    {"Ceil", Unary::kCeil, kFloats, 1},
    {"Round", Unary::kRound, kFloats, 11},
    {"Sign", Unary::kSign, kNumeric, 9},
    {"Sin", Unary::kSin, kFloats, 7},
    {"Cos", Unary::kCos, kFloats, 7},
    {"Tan", Unary::kTan, kFloats, 7},
    {"Asin", Unary::kAsin, kFloats, 7},
    {"Acos", Unary::kAcos, kFloats, 7},
    {"Atan", Unary::kAtan, kFloats, 7},
    {"Sinh", Unary::kSinh, kFloats, 9},
    {"Cosh", Unary::kCosh, kFloats, 9},
    {"Asinh", Unary::kAsinh, kFloats, 9},
    {"Acosh", Unary::kAcosh, kFloats, 9},
    {"Atanh", Unary::kAtanh, kFloats, 9},
    {"Tanh", Unary::kTanh, kFloats, 1},
    {"Erf", Unary::kErf, kFloats, 9},
    {"IsNaN", Unary::kIsNaN, kFloats, 9, true},
    {"IsInf", Unary::kIsInf, kFloats, 10, true},
    {"Not", Unary::kNot, kBools, 1, true},
    {"Relu", Unary::kRelu, kFloatsAndSigned, 1},
    {"LeakyRelu", Unary::kLeakyRelu, kFloats, 1, false, 0.01f},
    {"Elu", Unary::kElu, kFloats, 1, false, 1.0f},
    {"Selu", Unary::kSelu, kFloats, 1, false, 1.67326319217681884765625f, 0, 1.05070102214813232421875f},
    {"Celu", Unary::kCelu, kFloats, 12, false, 1.0f},
    {"ThresholdedRelu", Unary::kThresholdedRelu, kFloats, 10, false, 1.0f},
    {"Sigmoid", Unary::kSigmoid, kFloats, 1},
    {"HardSigmoid", Unary::kHardSigmoid, kFloats, 1, false, 0.2f, 0.5f},
    {"HardSwish", Unary::kHardSwish, kFloats, 14},
    {"Softplus", Unary::kSoftplus, kFloats, 1},
    {"Softsign", Unary::kSoftsign, kFloats, 1},
    {"Gelu", Unary::kGelu, kFloats, 20},
    {"Mish", Unary::kMish, kFloats, 18},
    {"BitwiseNot", Unary::kBitwiseNot, kInts, 18},
};

const UnaryDef* FindUnary(const std::string& op_type) {
  for (const UnaryDef& def : kUnaryDefs) {
    if (op_type == def.op_type) return &def;
  }
  return nullptr;
}

struct UnaryParams {
  double alpha = 0, beta = 0, gamma = 0;
  bool detect_negative = true, detect_positive = true;  // IsInf
  bool gelu_tanh = false;
};

Result<UnaryParams> ReadUnaryParams(const UnaryDef& def, const Node& node) {
  UnaryParams p;
  p.alpha = node.GetFloat("alpha", def.alpha);
  p.beta = node.GetFloat("beta", def.beta);
  p.gamma = node.GetFloat("gamma", def.gamma);
  p.detect_negative = node.GetInt("detect_negative", 1) != 0;
  p.detect_positive = node.GetInt("detect_positive", 1) != 0;
  if (def.op == Unary::kCelu && p.alpha == 0) return InvalidArgument(node.Describe() + ": Celu alpha must not be 0");
  if (def.op == Unary::kGelu) {
    const std::string approximate = node.GetString("approximate", "none");
    if (approximate != "none" && approximate != "tanh") {
      return InvalidArgument(node.Describe() + ": attribute approximate is '" + approximate +
                             "', expected 'none' or 'tanh'");
    }
    p.gelu_tanh = approximate == "tanh";
  }
  return p;
}

double Softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

double EvalFloat(Unary op, double x, const UnaryParams& p) {
  switch (op) {
    case Unary::kAbs: return std::fabs(x);
    case Unary::kNeg: return -x;
    case Unary::kExp: return std::exp(x);
    case Unary::kLog: return std::log(x);
    case Unary::kSqrt: return std::sqrt(x);
    case Unary::kReciprocal: return 1.0 / x;
    case Unary::kFloor: return std::floor(x);
    case Unary::kCeil: return std::ceil(x);
    case Unary::kRound: return std::nearbyint(x);              // the default rounding mode rounds halves to even
    case Unary::kSign: return x > 0 ? 1.0 : x < 0 ? -1.0 : x;  // keeps NaN and zero
    case Unary::kSin: return std::sin(x);
    case Unary::kCos: return std::cos(x);
    case Unary::kTan: return std::tan(x);
    case Unary::kAsin: return std::asin(x);
    case Unary::kAcos: return std::acos(x);
    case Unary::kAtan: return std::atan(x);
    case Unary::kSinh: return std::sinh(x);
    case Unary::kCosh: return std::cosh(x);
    case Unary::kAsinh: return std::asinh(x);
    case Unary::kAcosh: return std::acosh(x);
    case Unary::kAtanh: return std::atanh(x);
    case Unary::kTanh: return std::tanh(x);
    case Unary::kErf: return std::erf(x);
    case Unary::kIsNaN: return std::isnan(x);
    case Unary::kIsInf: return std::isinf(x) && (x > 0 ? p.detect_positive : p.detect_negative);
    case Unary::kNot: return x == 0;
    case Unary::kRelu: return x < 0 ? 0.0 : x;  // NaN stays NaN, as with max(x, 0)
    case Unary::kLeakyRelu: return x < 0 ? p.alpha * x : x;
    case Unary::kElu: return x < 0 ? p.alpha * std::expm1(x) : x;
    case Unary::kSelu: return x <= 0 ? p.gamma * p.alpha * std::expm1(x) : p.gamma * x;
    case Unary::kCelu: return std::max(0.0, x) + std::min(0.0, p.alpha * std::expm1(x / p.alpha));
    case Unary::kThresholdedRelu: return x > p.alpha ? x : 0.0;
    case Unary::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
    case Unary::kHardSigmoid: return std::clamp(p.alpha * x + p.beta, 0.0, 1.0);
    case Unary::kHardSwish: return x * std::clamp(x / 6.0 + 0.5, 0.0, 1.0);
    case Unary::kSoftplus: return Softplus(x);
    case Unary::kSoftsign: return x / (1.0 + std::fabs(x));
    case Unary::kGelu:
      if (p.gelu_tanh) {
        const double k = std::sqrt(2.0 / std::numbers::pi);
        return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
      }
      return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2));
    case Unary::kMish: return x * std::tanh(Softplus(x));
    case Unary::kBitwiseNot: break;  // integers only: EvalInteger
  }
  return std::nan("");
}

// The unary ops that take integers (the type sets keep the others away from here).
template <typename I>
I EvalInteger(Unary op, I x) {
  switch (op) {
    case Unary::kAbs: return IsNegative(x) ? WrapNeg(x) : x;
    case Unary::kNeg: return WrapNeg(x);
    case Unary::kSign: return IsNegative(x) ? static_cast<I>(-1) : static_cast<I>(x > 0);
    case Unary::kRelu: return IsNegative(x) ? 0 : x;
    case Unary::kBitwiseNot: return static_cast<I>(~x);
    default: return 0;
  }
}

Status CheckUnary(const UnaryDef& def, const Node& node, int64_t opset, DType dtype) {
  RETURN_IF_ERROR(CheckOpset(node, opset, def.since));
  return CheckDType(node, "input X", dtype, def.types);
}

Status InferUnary(InferContext& ctx) {
  const UnaryDef* def = FindUnary(ctx.node().op_type);
  const ValueInfo* x = ctx.input(0);
  if (def == nullptr) return ctx.Error("not an elementwise unary op");
  if (x == nullptr) return ctx.Error("missing input 0");
  RETURN_IF_ERROR(CheckUnary(*def, ctx.node(), ctx.opset(), x->dtype));
  RETURN_IF_ERROR(ReadUnaryParams(*def, ctx.node()).status());
  ctx.SetOutput(0, def->to_bool ? DType::kBool : x->dtype, x->shape);
  return Status::Ok();
}

Status RunUnary(KernelContext& ctx) {
  const UnaryDef* def = FindUnary(ctx.node().op_type);
  if (def == nullptr) return ctx.Error("not an elementwise unary op");
  const Tensor& x = *ctx.input(0);
  Tensor& y = *ctx.output(0);
  RETURN_IF_ERROR(CheckUnary(*def, ctx.node(), ctx.opset(), x.dtype()));
  ASSIGN_OR_RETURN(const UnaryParams p, ReadUnaryParams(*def, ctx.node()));
  return VisitDType(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::nullptr_t>) {
      return UnsupportedDType(ctx.node(), x.dtype());
    } else {
      const T* in = x.data<T>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        if (def->to_bool) {
          y.data<bool>()[i] = EvalFloat(def->op, static_cast<double>(in[i]), p) != 0;
        } else if constexpr (kIsInt<T>) {
          y.data<T>()[i] = EvalInteger(def->op, in[i]);
        } else {
          y.data<T>()[i] = Convert<T>(EvalFloat(def->op, static_cast<double>(in[i]), p));
        }
      }
      return Status::Ok();
    }
  });
}

// ---------------------------------------------------------------------------------------------------------------
// PRelu and Clip: unary ops whose parameters are inputs.

// PRelu before opset 7 applied a 1-D slope of X's channel count along axis 1 (Caffe2, old PyTorch exports); from
// opset 7 the slope broadcasts unidirectionally to X.
Shape PReluSlopeShape(const Shape& x, const Shape& slope, int64_t opset) {
  if (opset >= 7 || slope.size() != 1 || x.size() < 2 || slope[0] != x[1] || slope[0] == 1) return slope;
  Shape per_channel(x.size() - 1, 1);
  per_channel[0] = slope[0];
  return per_channel;
}

Status InferPRelu(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  const ValueInfo* slope = ctx.input(1);
  if (x == nullptr || slope == nullptr) return ctx.Error("needs inputs X and slope");
  RETURN_IF_ERROR(CheckDType(ctx.node(), "input X", x->dtype, kFloats | kInts));
  RETURN_IF_ERROR(CheckSameDType(ctx.node(), *x, *slope, "X and slope"));
  Result<Shape> out = BroadcastShapes(x->shape, PReluSlopeShape(x->shape, slope->shape, ctx.opset()));
  if (!out.ok() || *out != x->shape) {
    return ctx.Error("slope of shape " + ShapeToString(slope->shape) + " does not broadcast to X of shape " +
                     ShapeToString(x->shape));
  }
  ctx.SetOutput(0, x->dtype, x->shape);
  return Status::Ok();
}

Status RunPRelu(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  return VisitDType(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::nullptr_t> || std::is_same_v<T, bool>) {
      return UnsupportedDType(ctx.node(), x.dtype());
    } else {
      const Tensor slope = ctx.input(1)->Reshaped(PReluSlopeShape(x.shape(), ctx.input(1)->shape(), ctx.opset()));
      Map2<T, T, T>(x, slope, *ctx.output(0), [](auto v, auto s) { return IsNegative(v) ? WrapMul(s, v) : v; });
      return Status::Ok();
    }
  });
}

Status InferClip(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input 0");
  RETURN_IF_ERROR(CheckDType(ctx.node(), "input X", x->dtype, ctx.opset() < 11 ? kFloats : kNumeric));
  if (ctx.opset() >= 11) {
    for (size_t i = 1; i <= 2; ++i) {
      const ValueInfo* bound = ctx.input(i);
      if (bound == nullptr) continue;
      const std::string name = i == 1 ? "min" : "max";
      RETURN_IF_ERROR(CheckSameDType(ctx.node(), *x, *bound, "input and " + name));
      if (NumElements(bound->shape) != 1) {
        return ctx.Error(name + " must be a scalar, got shape " + ShapeToString(bound->shape));
      }
    }
  }
  ctx.SetOutput(0, x->dtype, x->shape);
  return Status::Ok();
}

// The largest finite value of T: the spec's numeric_limits default for an absent bound.
template <typename T>
Calc<T> LargestFinite() {
  if constexpr (std::is_same_v<T, Float16>) {
    return 65504.0;
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16BitsToFloat(0x7f7f);
  } else {
    return std::numeric_limits<T>::max();
  }
}

Status RunClip(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  Tensor& y = *ctx.output(0);
  return VisitDType(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::nullptr_t> || std::is_same_v<T, bool>) {
      return UnsupportedDType(ctx.node(), x.dtype());
    } else {
      Calc<T> hi = LargestFinite<T>();
      Calc<T> lo = hi;
      if constexpr (kIsFloat<T>) {
        lo = -hi;
      } else {
        lo = std::numeric_limits<T>::lowest();
      }
      if (ctx.opset() < 11) {
        if (ctx.node().Has("min")) lo = Convert<Calc<T>>(ctx.node().GetFloat("min", 0));
        if (ctx.node().Has("max")) hi = Convert<Calc<T>>(ctx.node().GetFloat("max", 0));
      } else {
        if (ctx.input(1) != nullptr) lo = Load(ctx.input(1)->data<T>()[0]);
        if (ctx.input(2) != nullptr) hi = Load(ctx.input(2)->data<T>()[0]);
      }
      // min > max gives max everywhere (the spec's Min(max, Max(x, min))); NaN passes through.
      for (int64_t i = 0; i < x.numel(); ++i) {
        Calc<T> v = Load(x.data<T>()[i]);
        if (v < lo) v = lo;
        if (v > hi) v = hi;
        y.data<T>()[i] = Convert<T>(v);
      }
      return Status::Ok();
    }
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Binary ops with multidirectional broadcasting.

// clang-format off
enum class Binary {
  kAdd, kSub, kMul, kDiv, kPow, kMod, kBitShift, kAnd, kOr, kXor,
  kBitwiseAnd, kBitwiseOr, kBitwiseXor, kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual,
};
// clang-format on

struct BinaryDef {
  const char* op_type;
  Binary op;
  unsigned types;
  int64_t since;
  bool to_bool = false;
};

constexpr BinaryDef kBinaryDefs[] = {
    {"Add", Binary::kAdd, kNumeric, 7},
    {"Sub", Binary::kSub, kNumeric, 7},
    {"Mul", Binary::kMul, kNumeric, 7},
    {"Div", Binary::kDiv, kNumeric, 7},
    {"Pow", Binary::kPow, kNumeric, 7},
    {"Mod", Binary::kMod, kNumeric, 10},
    {"BitShift", Binary::kBitShift, kUnsigned, 11},
    {"BitwiseAnd", Binary::kBitwiseAnd, kInts, 18},
    {"BitwiseOr", Binary::kBitwiseOr, kInts, 18},
    {"BitwiseXor", Binary::kBitwiseXor, kInts, 18},
    {"And", Binary::kAnd, kBools, 7, true},
    {"Or", Binary::kOr, kBools, 7, true},
    {"Xor", Binary::kXor, kBools, 7, true},
    {"Equal", Binary::kEqual, kNumeric | kBools, 7, true},
    {"Less", Binary::kLess, kNumeric, 7, true},
    {"Greater", Binary::kGreater, kNumeric, 7, true},
    {"LessOrEqual", Binary::kLessOrEqual, kNumeric, 12, true},
    {"GreaterOrEqual", Binary::kGreaterOrEqual, kNumeric, 12, true},
};

const BinaryDef* FindBinary(const std::string& op_type) {
  for (const BinaryDef& def : kBinaryDefs) {
    if (op_type == def.op_type) return &def;
  }
  return nullptr;
}

// Attribute checks shared by the shape function and the kernel.
Status CheckBinaryAttributes(const BinaryDef& def, const Node& node, DType dtype) {
  if (def.op == Binary::kMod && node.GetInt("fmod", 0) == 0 && IsFloatingDType(dtype)) {
    return InvalidArgument(node.Describe() + ": Mod on " + std::string(DTypeName(dtype)) +
                           " needs fmod=1 (fmod=0 is defined for integers only)");
  }
  if (def.op == Binary::kBitShift) {
    const std::string direction = node.GetString("direction", "");
    if (direction != "LEFT" && direction != "RIGHT") {
      return InvalidArgument(node.Describe() + ": attribute direction is '" + direction +
                             "', expected 'LEFT' or 'RIGHT'");
    }
  }
  return Status::Ok();
}

// Before opset 7, B broadcast to A only with broadcast=1, aligned at `axis` (default: trailing dims):
// returns B's shape padded with 1s to A's rank so numpy broadcasting gives the same result.
Result<Shape> LegacyAlignedB(const Node& node, const Shape& a, const Shape& b) {
  if (node.GetInt("broadcast", 0) == 0) {
    if (a != b) {
      return InvalidArgument(node.Describe() + ": shapes " + ShapeToString(a) + " and " + ShapeToString(b) +
                             " differ and broadcast=0 (opset < 7 broadcasts only with broadcast=1)");
    }
    return b;
  }
  const int64_t rank_a = static_cast<int64_t>(a.size());
  const int64_t rank_b = static_cast<int64_t>(b.size());
  const int64_t axis = node.GetInt("axis", rank_a - rank_b);
  if (rank_b > rank_a || axis < 0 || axis + rank_b > rank_a) {
    return InvalidArgument(node.Describe() + ": B of shape " + ShapeToString(b) + " cannot align with A of shape " +
                           ShapeToString(a) + " at axis " + std::to_string(axis));
  }
  Shape aligned(a.size(), 1);
  for (int64_t i = 0; i < rank_b; ++i) aligned[static_cast<size_t>(axis + i)] = b[static_cast<size_t>(i)];
  return aligned;
}

Status InferBinary(InferContext& ctx) {
  const BinaryDef* def = FindBinary(ctx.node().op_type);
  if (def == nullptr) return ctx.Error("not a broadcasting binary op");
  if (ctx.opset() < 7 && ctx.input(0) && ctx.input(1)) {
    ASSIGN_OR_RETURN(Shape aligned, LegacyAlignedB(ctx.node(), ctx.input(0)->shape, ctx.input(1)->shape));
    ValueInfo b = *ctx.input(1);
    b.shape = aligned;
    b.value = nullptr;
    InferContext aligned_ctx(ctx.node(), 7, {ctx.input(0), &b});
    RETURN_IF_ERROR(InferBinary(aligned_ctx));
    ctx.SetOutput(0, aligned_ctx.outputs()[0].dtype, aligned_ctx.outputs()[0].shape);
    return Status::Ok();
  }
  RETURN_IF_ERROR(CheckOpset(ctx.node(), ctx.opset(), def->since));
  ASSIGN_OR_RETURN(Shape shape, BroadcastInputs(ctx, 0, 2));
  const ValueInfo& a = *ctx.input(0);
  const ValueInfo& b = *ctx.input(1);
  RETURN_IF_ERROR(CheckDType(ctx.node(), "input A", a.dtype, def->types));
  if (def->op == Binary::kPow) {
    RETURN_IF_ERROR(CheckDType(ctx.node(), "input B", b.dtype, kNumeric));
  } else {
    RETURN_IF_ERROR(CheckSameDType(ctx.node(), a, b, "inputs A and B"));
  }
  RETURN_IF_ERROR(CheckBinaryAttributes(*def, ctx.node(), a.dtype));
  ctx.SetOutput(0, def->to_bool ? DType::kBool : a.dtype, shape);
  return Status::Ok();
}

template <typename C>
bool Compare(Binary op, C x, C y) {
  switch (op) {
    case Binary::kEqual: return x == y;
    case Binary::kLess: return x < y;
    case Binary::kGreater: return x > y;
    case Binary::kLessOrEqual: return x <= y;
    case Binary::kGreaterOrEqual: return x >= y;
    default: return false;
  }
}

// Integer division truncates toward zero (C); Mod with fmod=0 takes the divisor's sign (Python). The caller has
// excluded y == 0; y == -1 is handled apart because INT_MIN / -1 overflows.
template <typename I>
I IntDivide(I x, I y) {
  if (IsNegative(y) && y == static_cast<I>(-1)) return WrapNeg(x);
  return static_cast<I>(x / y);
}
template <typename I>
I IntMod(I x, I y, bool fmod) {
  if (IsNegative(y) && y == static_cast<I>(-1)) return 0;
  I r = static_cast<I>(x % y);
  if (!fmod && r != 0 && IsNegative(r) != IsNegative(y)) r = static_cast<I>(r + y);
  return r;
}

// Integer power by squaring, wrapping like repeated multiplication. A negative exponent gives the truncated
// quotient 1 / x^|e| (0 unless |x| == 1); x == 0 then sets `zero_division`.
template <typename I, typename E>
I IntPow(I x, E e, bool& zero_division) {
  if (IsNegative(e)) {
    if (x == 0) zero_division = true;
    if (x == 1) return 1;
    if (IsNegative(x) && x == static_cast<I>(-1)) return (e % 2 == 0) ? 1 : x;
    return 0;
  }
  I result = 1;
  for (auto n = static_cast<std::make_unsigned_t<E>>(e); n != 0; n >>= 1) {
    if (n & 1) result = WrapMul(result, x);
    x = WrapMul(x, x);
  }
  return result;
}

Status RunPow(KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  bool zero_division = false;
  Status status = VisitDType(a.dtype(), [&](auto base_tag) -> Status {
    return VisitDType(b.dtype(), [&](auto exp_tag) -> Status {
      using A = decltype(base_tag);
      using B = decltype(exp_tag);
      if constexpr (std::is_same_v<A, std::nullptr_t> || std::is_same_v<B, std::nullptr_t> || std::is_same_v<A, bool> ||
                    std::is_same_v<B, bool>) {
        return Unsupported(ctx.node().Describe() + ": Pow on " + std::string(DTypeName(a.dtype())) + " and " +
                           std::string(DTypeName(b.dtype())) + " is not supported");
      } else {
        // The output has the base's dtype; integer by integer stays exact, anything else goes through double.
        Map2<A, B, A>(a, b, *ctx.output(0), [&](auto x, auto e) {
          if constexpr (kIsInt<A> && kIsInt<B>) {
            return IntPow(x, e, zero_division);
          } else {
            return std::pow(static_cast<double>(x), static_cast<double>(e));
          }
        });
        return Status::Ok();
      }
    });
  });
  RETURN_IF_ERROR(status);
  if (zero_division) return ctx.Error("integer 0 raised to a negative power (a division by zero)");
  return Status::Ok();
}

template <typename T>
Status RunBinaryTyped(KernelContext& ctx, Binary op) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  Tensor& out = *ctx.output(0);
  switch (op) {
    case Binary::kEqual:
    case Binary::kLess:
    case Binary::kGreater:
    case Binary::kLessOrEqual:
    case Binary::kGreaterOrEqual:
      Map2<T, T, bool>(a, b, out, [op](auto x, auto y) { return Compare(op, x, y); });
      break;
    default: break;
  }
  if constexpr (std::is_same_v<T, bool>) {
    if (op == Binary::kAnd) Map2<T, T, bool>(a, b, out, [](bool x, bool y) { return x && y; });
    if (op == Binary::kOr) Map2<T, T, bool>(a, b, out, [](bool x, bool y) { return x || y; });
    if (op == Binary::kXor) Map2<T, T, bool>(a, b, out, [](bool x, bool y) { return x != y; });
  } else {
    const bool fmod = ctx.node().GetInt("fmod", 0) != 0;
    bool zero_division = false;
    switch (op) {
      case Binary::kAdd: Map2<T, T, T>(a, b, out, [](auto x, auto y) { return WrapAdd(x, y); }); break;
      case Binary::kSub: Map2<T, T, T>(a, b, out, [](auto x, auto y) { return WrapSub(x, y); }); break;
      case Binary::kMul: Map2<T, T, T>(a, b, out, [](auto x, auto y) { return WrapMul(x, y); }); break;
      case Binary::kDiv:
      case Binary::kMod:
        Map2<T, T, T>(a, b, out, [&](auto x, auto y) {
          if constexpr (kIsInt<T>) {
            if (y == 0) {
              zero_division = true;
              return T{0};
            }
            return op == Binary::kDiv ? IntDivide(x, y) : IntMod(x, y, fmod);
          } else {
            return op == Binary::kDiv ? x / y : std::fmod(x, y);
          }
        });
        break;
      case Binary::kBitShift:
        if constexpr (std::is_unsigned_v<T>) {
          const bool left = ctx.node().GetString("direction", "") == "LEFT";
          // Shifting by the bit width or more empties the value (undefined in C++, 0 in numpy).
          Map2<T, T, T>(a, b, out, [left](T x, T s) {
            if (s >= sizeof(T) * 8) return T{0};
            return static_cast<T>(left ? static_cast<uint64_t>(x) << s : static_cast<uint64_t>(x) >> s);
          });
        }
        break;
      case Binary::kBitwiseAnd:
      case Binary::kBitwiseOr:
      case Binary::kBitwiseXor:
        if constexpr (kIsInt<T>) {
          Map2<T, T, T>(a, b, out, [op](T x, T y) {
            return static_cast<T>(op == Binary::kBitwiseAnd ? x & y : op == Binary::kBitwiseOr ? x | y : x ^ y);
          });
        }
        break;
      default: break;
    }
    if (zero_division) return ctx.Error("integer division by zero");
  }
  return Status::Ok();
}

Status RunBinary(KernelContext& ctx) {
  const BinaryDef* def = FindBinary(ctx.node().op_type);
  if (def == nullptr) return ctx.Error("not a broadcasting binary op");
  if (ctx.opset() < 7) {
    ASSIGN_OR_RETURN(Shape aligned, LegacyAlignedB(ctx.node(), ctx.input(0)->shape(), ctx.input(1)->shape()));
    const Tensor b = ctx.input(1)->Reshaped(aligned);
    KernelContext aligned_ctx(ctx.node(), 7, {ctx.input(0), &b}, {ctx.output(0)});
    return RunBinary(aligned_ctx);
  }
  const DType dtype = ctx.input(0)->dtype();
  RETURN_IF_ERROR(CheckDType(ctx.node(), "input A", dtype, def->types));
  RETURN_IF_ERROR(CheckBinaryAttributes(*def, ctx.node(), dtype));
  if (def->op == Binary::kPow) return RunPow(ctx);
  if (ctx.input(1)->dtype() != dtype) return ctx.Error("inputs A and B must have the same dtype");
  return VisitDType(dtype, [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::nullptr_t>) {
      return UnsupportedDType(ctx.node(), dtype);
    } else {
      return RunBinaryTyped<T>(ctx, def->op);
    }
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Variadic ops (Max, Min, Sum, Mean) and Where: any number of broadcast inputs.

struct VariadicDef {
  const char* op_type;
  unsigned types;
};
constexpr VariadicDef kVariadicDefs[] = {{"Max", kNumeric}, {"Min", kNumeric}, {"Sum", kFloats}, {"Mean", kFloats}};

Status InferVariadic(InferContext& ctx) {
  if (ctx.num_inputs() == 0) return ctx.Error("needs at least one input");
  ASSIGN_OR_RETURN(Shape shape, BroadcastInputs(ctx, 0, ctx.num_inputs()));
  for (const VariadicDef& def : kVariadicDefs) {
    if (ctx.node().op_type == def.op_type)
      RETURN_IF_ERROR(CheckDType(ctx.node(), "input 0", ctx.input(0)->dtype, def.types));
  }
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    RETURN_IF_ERROR(CheckSameDType(ctx.node(), *ctx.input(0), *ctx.input(i), "all inputs"));
  }
  ctx.SetOutput(0, ctx.input(0)->dtype, shape);
  return Status::Ok();
}

std::vector<BroadcastIndexer> MakeIndexers(const KernelContext& ctx, const Shape& out) {
  std::vector<BroadcastIndexer> indexers;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) indexers.emplace_back(ctx.input(i)->shape(), out);
  return indexers;
}

Status RunVariadic(KernelContext& ctx) {
  Tensor& out = *ctx.output(0);
  const std::string& op = ctx.node().op_type;
  const bool is_sum = op == "Sum" || op == "Mean", is_max = op == "Max";
  const std::vector<BroadcastIndexer> indexers = MakeIndexers(ctx, out.shape());
  return VisitDType(out.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::nullptr_t> || std::is_same_v<T, bool>) {
      return UnsupportedDType(ctx.node(), out.dtype());
    } else {
      auto value = [&](size_t k, int64_t i) { return Load(ctx.input(k)->data<T>()[indexers[k](i)]); };
      for (int64_t i = 0; i < out.numel(); ++i) {
        if (is_sum) {
          double sum = 0;  // Sum and Mean take floating types only
          for (size_t k = 0; k < ctx.num_inputs(); ++k) sum += static_cast<double>(value(k, i));
          out.data<T>()[i] = Convert<T>(op == "Mean" ? sum / static_cast<double>(ctx.num_inputs()) : sum);
        } else {
          // NaN wins, as in numpy.maximum/minimum.
          Calc<T> best = value(0, i);
          for (size_t k = 1; k < ctx.num_inputs(); ++k) {
            const Calc<T> v = value(k, i);
            if (IsNaN(v) || (is_max ? v > best : v < best)) best = v;
            if (IsNaN(best)) break;
          }
          out.data<T>()[i] = Convert<T>(best);
        }
      }
      return Status::Ok();
    }
  });
}

Status InferWhere(InferContext& ctx) {
  ASSIGN_OR_RETURN(Shape shape, BroadcastInputs(ctx, 0, 3));
  if (ctx.input(0)->dtype != DType::kBool) {
    return ctx.Error("condition must be bool, got " + std::string(DTypeName(ctx.input(0)->dtype)));
  }
  RETURN_IF_ERROR(CheckSameDType(ctx.node(), *ctx.input(1), *ctx.input(2), "X and Y"));
  RETURN_IF_ERROR(CheckDType(ctx.node(), "input X", ctx.input(1)->dtype, kNumeric | kBools));
  ctx.SetOutput(0, ctx.input(1)->dtype, shape);
  return Status::Ok();
}

Status RunWhere(KernelContext& ctx) {
  Tensor& out = *ctx.output(0);
  const std::vector<BroadcastIndexer> idx = MakeIndexers(ctx, out.shape());
  return VisitDType(out.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::nullptr_t>) {
      return UnsupportedDType(ctx.node(), out.dtype());
    } else {
      const bool* cond = ctx.input(0)->data<bool>();
      const T* x = ctx.input(1)->data<T>();
      const T* y = ctx.input(2)->data<T>();
      for (int64_t i = 0; i < out.numel(); ++i) out.data<T>()[i] = cond[idx[0](i)] ? x[idx[1](i)] : y[idx[2](i)];
      return Status::Ok();
    }
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Cast and CastLike.

Result<DType> CastTarget(const InferContext& ctx) {
  if (ctx.node().op_type == "CastLike") {
    if (ctx.input(1) == nullptr) return ctx.Error("missing input target_type");
    return ctx.input(1)->dtype;
  }
  if (!ctx.node().Has("to")) return ctx.Error("attribute 'to' is required");
  const int64_t to = ctx.node().GetInt("to", 0);
  // Types newer opsets added (Cast-19: float8 with `saturate`; Cast-21: 4-bit) that chipfit's tensors cannot
  // hold: refused by name, so a user sees which type, not a number. `saturate` only concerns float8.
  static const std::pair<int64_t, const char*> kUnheld[] = {
      {14, "complex64"},      {15, "complex128"}, {17, "float8e4m3fn"}, {18, "float8e4m3fnuz"}, {19, "float8e5m2"},
      {20, "float8e5m2fnuz"}, {21, "uint4"},      {22, "int4"},         {23, "float4e2m1"}};
  for (const auto& [code, name] : kUnheld) {
    if (to == code) {
      return Unsupported(ctx.node().Describe() + ": cast to " + name + " (to=" + std::to_string(to) +
                         ") is not supported: chipfit tensors have no " + name + " type");
    }
  }
  const std::optional<DType> dtype = DTypeFromOnnx(static_cast<int32_t>(to));
  if (!dtype || *dtype == DType::kUndefined) {
    return Unsupported(ctx.node().Describe() + ": cast to ONNX type " + std::to_string(to) + " is not supported");
  }
  return *dtype;
}

Status InferCast(InferContext& ctx) {
  if (ctx.node().op_type == "CastLike") RETURN_IF_ERROR(CheckOpset(ctx.node(), ctx.opset(), 15));
  if (ctx.opset() < 6) {
    return Unsupported(ctx.node().Describe() + ": Cast before opset 6 (type names in a string 'to') is not supported");
  }
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input 0");
  ASSIGN_OR_RETURN(const DType to, CastTarget(ctx));
  const bool from_string = x->dtype == DType::kString, to_string = to == DType::kString;
  if ((from_string || to_string) && ctx.opset() < 9) {
    return ctx.Error("casts to or from string need opset 9 (Cast-9); the model has opset " +
                     std::to_string(ctx.opset()));
  }
  if (!from_string) RETURN_IF_ERROR(CheckDType(ctx.node(), "input", x->dtype, kNumeric | kBools));
  if (!to_string) RETURN_IF_ERROR(CheckDType(ctx.node(), "the target type", to, kNumeric | kBools));
  ctx.SetOutput(0, to, x->shape);
  return Status::Ok();
}

// Numbers as text the way ONNX's reference implementation writes them (numpy's str of the scalar, which
// the suite's test_cast_FLOAT_to_STRING holds): the fewest digits that read back to the same value,
// positional for 1e-4 <= |x| < 1e16 ("0.039187793", "3.0"), scientific otherwise ("1e-05", "1.5e+20"); NaN
// and the infinities as "NaN", "INF", "-INF", spellings the spec reads back. float16 and bfloat16 get the
// fewest digits of their own precision ("0.1", not the float's "0.099975586"). ONNX Runtime writes "%.8g"
// instead: the same text for most floats of the suite's range, but "3" for 3.0, and floats that need nine
// digits do not read back.
template <typename T>
std::string FloatToString(T v) {
  const auto d = static_cast<double>(v);
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d < 0 ? "-INF" : "INF";
  char buf[64];
  std::to_chars_result written{};
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    written = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  } else {
    // Decimal → float → T rounds correctly (float has more than 2p + 2 bits for both), and 9 digits
    // always read back a float, so the loop ends by precision 8.
    for (int precision = 0; precision <= 8; ++precision) {
      written = std::to_chars(buf, buf + sizeof buf, static_cast<float>(v), std::chars_format::scientific, precision);
      float back = 0;
      std::from_chars(buf, written.ptr, back);
      if (T(back).bits == v.bits) break;
    }
  }
  const std::string_view sci(buf, static_cast<size_t>(written.ptr - buf));  // "-d.ddde-XX"
  const double magnitude = std::fabs(d);
  if (magnitude != 0 && (magnitude < 1e-4 || magnitude >= 1e16)) return std::string(sci);
  const size_t e = sci.find('e');
  int exponent = 0;
  std::from_chars(sci.data() + e + 2, sci.data() + sci.size(), exponent);
  if (sci[e + 1] == '-') exponent = -exponent;
  const bool negative = sci[0] == '-';
  std::string digits;
  for (char c : sci.substr(negative ? 1 : 0, e - (negative ? 1 : 0))) {
    if (c != '.') digits += c;
  }
  // The value is 0.<digits> × 10^point.
  const int point = exponent + 1;
  const auto size = static_cast<int>(digits.size());
  std::string out = negative ? "-" : "";
  if (point <= 0) return out + "0." + std::string(static_cast<size_t>(-point), '0') + digits;
  if (point >= size) return out + digits + std::string(static_cast<size_t>(point - size), '0') + ".0";
  return out + digits.substr(0, static_cast<size_t>(point)) + "." + digits.substr(static_cast<size_t>(point));
}

// Integers in decimal; bool as 1 and 0, as ONNX Runtime writes them.
template <typename T>
std::string NumberToString(T v) {
  if constexpr (kIsFloat<T>) {
    return FloatToString(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else {
    return std::to_string(v);
  }
}

std::string_view TrimBlanks(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\n\r\f\v");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\n\r\f\v") - begin + 1);
}

// A numeral from_chars found out of range: whether it is too small for the type (else too large).
// Its magnitude is about 10^(lead + exponent), lead counting the digits before the point from the
// first non-zero one, or minus the zeros after the point before it.
bool BelowRange(std::string_view numeral) {
  const size_t e = numeral.find_first_of("eE");
  int64_t lead = 0;
  bool point = false, nonzero = false;
  for (char c : numeral.substr(0, e)) {
    if (c == '.') {
      point = true;
    } else if (c >= '0' && c <= '9') {
      nonzero = nonzero || c != '0';
      if (nonzero && point) break;
      if (nonzero) ++lead;
      if (!nonzero && point) --lead;
    }
  }
  int64_t exponent = 0;
  if (e != std::string_view::npos) {
    std::string_view text = numeral.substr(e + 1);
    if (!text.empty() && text[0] == '+') text.remove_prefix(1);
    if (std::from_chars(text.data(), text.data() + text.size(), exponent).ec != std::errc()) {
      // An exponent past int64: only its sign matters.
      exponent =
          !text.empty() && text[0] == '-' ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max();
    }
  }
  return lead + exponent <= 0;
}

// Text as float or double, as the Cast spec reads it: plain or scientific notation with an optional sign
// ('+' too), and "NaN", "INF", "+INF", "-INF" in any case ("infinity" as well). Blanks around are
// ignored. Values beyond the type's range become infinities, values below it zeros, as strtod has it.
template <typename F>
std::optional<F> ParseFloat(std::string_view text) {
  text = TrimBlanks(text);
  if (text.size() > 1 && text[0] == '+' && text[1] != '-') text.remove_prefix(1);
  F value{};
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, value, std::chars_format::general);
  if (ec == std::errc::invalid_argument || stop != end) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    const F sign = text[0] == '-' ? F(-1) : F(1);
    value = BelowRange(text) ? sign * F(0) : sign * std::numeric_limits<F>::infinity();
  }
  return value;
}

// Text as an integer type: an integer numeral, wrapping as integer casts do ("-1" → 255 for uint8).
// Other numerals truncate toward zero ("100.5" → 100), which the spec leaves undefined.
template <typename I>
std::optional<I> ParseInteger(std::string_view text) {
  const std::string_view trimmed = TrimBlanks(text);
  std::string_view digits = trimmed;
  if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-') digits.remove_prefix(1);
  const char* end = digits.data() + digits.size();
  int64_t value = 0;
  if (auto [stop, ec] = std::from_chars(digits.data(), end, value); ec == std::errc() && stop == end) {
    return static_cast<I>(value);
  }
  uint64_t big = 0;  // past int64's range: uint64 values
  if (auto [stop, ec] = std::from_chars(digits.data(), end, big); ec == std::errc() && stop == end) {
    return static_cast<I>(big);
  }
  const std::optional<double> real = ParseFloat<double>(trimmed);
  if (!real) return std::nullopt;
  return Convert<I>(*real);
}

// Text as element type To; nullopt when it is not a number.
template <typename To>
std::optional<To> ParseNumber(std::string_view text) {
  if constexpr (std::is_same_v<To, float> || std::is_same_v<To, double>) {
    return ParseFloat<To>(text);
  } else if constexpr (kIsFloat<To>) {
    const std::optional<double> real = ParseFloat<double>(text);
    return real ? std::optional<To>(Convert<To>(*real)) : std::nullopt;
  } else if constexpr (std::is_same_v<To, bool>) {
    // "true" and "false" besides numbers, which are true when not zero (as any cast to bool).
    std::string word(TrimBlanks(text));
    for (char& c : word) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (word == "true" || word == "false") return word == "true";
    const std::optional<double> real = ParseFloat<double>(text);
    return real ? std::optional<bool>(Convert<bool>(*real)) : std::nullopt;
  } else {
    return ParseInteger<To>(text);
  }
}

Status CastFromStrings(const Node& node, const Tensor& x, Tensor& y) {
  return VisitKernelDType(node, y.dtype(), [&](auto tag) -> Status {
    using To = decltype(tag);
    const std::string* in = x.data<std::string>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const std::optional<To> value = ParseNumber<To>(in[i]);
      if (!value) {
        const std::string shown = in[i].size() <= 64 ? in[i] : in[i].substr(0, 64) + "...";
        return InvalidArgument(node.Describe() + ": element " + std::to_string(i) + " \"" + shown +
                               "\" of the input is not a number that casts to " + std::string(DTypeName(y.dtype())));
      }
      y.data<To>()[i] = *value;
    }
    return Status::Ok();
  });
}

Status CastToStrings(const Node& node, const Tensor& x, Tensor& y) {
  return VisitKernelDType(node, x.dtype(), [&](auto tag) -> Status {
    using From = decltype(tag);
    for (int64_t i = 0; i < x.numel(); ++i) y.data<std::string>()[i] = NumberToString(x.data<From>()[i]);
    return Status::Ok();
  });
}

// Cast to bfloat16 before opset 19 drops the low 16 bits of the float32 pattern (NaN stays a quiet
// NaN). The spec of those opsets names no rounding; the ONNX test data written for them truncates
// (test_cast_FLOAT_to_BFLOAT16: 0.4794 → 0.478516), so a model of those opsets computes what ONNX
// says it does. Cast-19 (with `saturate`) and its test data round to nearest even, as Convert does.
// A bf16 *target* is another matter: the devices round to nearest even there, as hardware does.
template <typename From>
BFloat16 TruncateToBFloat16(From v) {
  const float f = static_cast<float>(v);
  BFloat16 out;
  if (std::isnan(f)) {
    out.bits = 0x7fc0;
    return out;
  }
  uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  out.bits = static_cast<uint16_t>(bits >> 16);
  return out;
}

Status RunCast(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  Tensor& y = *ctx.output(0);
  if (x.dtype() == DType::kString && y.dtype() == DType::kString) {
    std::copy(x.data<std::string>(), x.data<std::string>() + x.numel(), y.data<std::string>());
    return Status::Ok();
  }
  if (x.dtype() == DType::kString) return CastFromStrings(ctx.node(), x, y);
  if (y.dtype() == DType::kString) return CastToStrings(ctx.node(), x, y);
  return VisitDType(x.dtype(), [&](auto from_tag) -> Status {
    return VisitDType(y.dtype(), [&](auto to_tag) -> Status {
      using From = decltype(from_tag);
      using To = decltype(to_tag);
      if constexpr (std::is_same_v<From, std::nullptr_t> || std::is_same_v<To, std::nullptr_t>) {
        return Unsupported(ctx.node().Describe() + ": cast from " + std::string(DTypeName(x.dtype())) + " to " +
                           std::string(DTypeName(y.dtype())) + " is not supported");
      } else if constexpr (std::is_same_v<To, BFloat16> && kIsFloat<From>) {
        for (int64_t i = 0; i < x.numel(); ++i) {
          y.data<To>()[i] = ctx.opset() < 19 ? TruncateToBFloat16(x.data<From>()[i]) : Convert<To>(x.data<From>()[i]);
        }
        return Status::Ok();
      } else {
        for (int64_t i = 0; i < x.numel(); ++i) y.data<To>()[i] = Convert<To>(x.data<From>()[i]);
        return Status::Ok();
      }
    });
  });
}

}  // namespace

std::vector<OpEntry> ElementwiseOps() {
  std::vector<OpEntry> ops;
  for (const UnaryDef& def : kUnaryDefs) ops.push_back({def.op_type, InferUnary, RunUnary});
  for (const BinaryDef& def : kBinaryDefs) ops.push_back({def.op_type, InferBinary, RunBinary});
  for (const VariadicDef& def : kVariadicDefs) ops.push_back({def.op_type, InferVariadic, RunVariadic});
  ops.push_back({"PRelu", InferPRelu, RunPRelu});
  ops.push_back({"Clip", InferClip, RunClip});
  ops.push_back({"Where", InferWhere, RunWhere});
  ops.push_back({"Cast", InferCast, RunCast});
  ops.push_back({"CastLike", InferCast, RunCast});
  return ops;
}

}  // namespace chipfit
