// Elementwise ops oneDNN has no primitive for, in plain order and every dtype the reference takes:
// Cast/CastLike, Where, the comparisons, And/Or/Xor/Not, BitShift, Mod, Sign, IsNaN, IsInf, Add/Sub/
// Mul/Div on integers (and the float types the f32 binary kernels leave), Pow of integers and of float
// bases by exponents of another dtype, and Max/Min/Sum/Mean of any number of inputs. One broadcast walk serves them
// all: the output's dims are merged where every input broadcasts alike, each input gets a stride per merged dim (0
// where it broadcasts), and the output is cut into blocks (OpenMP threads when large) that run along rows of the
// innermost dim. A row calls a loop specialised per op, element types and which inputs are contiguous along it. The
// plan is made once when the shapes are known at compile time, else at each run. Results match the reference bit for
// bit: floats round once (f32 arithmetic equals the reference's double-then-round for + − × ÷, and float16/bfloat16
// compute in float, which rounds innocuously), integers wrap, Sum/Mean add in double, Max/Min let NaN win, integer
// division by zero is the reference's error.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/reference/ref_util.h"
#include "devices/cpu/ops/kernel_groups.h"

namespace chipfit::cpu {
namespace {

// ---------------------------------------------------------------------------------------------------------------
// Element types.

template <typename T>
constexpr bool kHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;
template <typename T>
constexpr bool kFloating = std::is_floating_point_v<T> || kHalf<T>;
template <typename T>
constexpr bool kInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The type arithmetic on T happens in: float for the 16-bit floats, T otherwise.
template <typename T>
using Wide = std::conditional_t<kHalf<T>, float, T>;
template <typename T>
Wide<T> Up(T v) {
  return static_cast<Wide<T>>(v);
}
template <typename T>
T Down(Wide<T> v) {
  if constexpr (kHalf<T>) {
    return T(v);
  } else {
    return v;
  }
}

// Unsigned arithmetic of at least int's width: wraps where signed arithmetic would be undefined.
template <typename T>
using WrapType = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

// To float with round-to-odd: the following rounding to float16/bfloat16 is then correct, as if
// rounding v itself (float keeps more than twice their precision plus two bits).
template <typename W>
float RoundToOdd(W v) {
  float f = static_cast<float>(v);
  if (std::isnan(f) || static_cast<W>(f) == v) return f;
  if (std::fabs(static_cast<W>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  bits |= 1u;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// A value of any numeric type, rounded once to the 16-bit float H.
template <typename H, typename From>
H ToHalf(From v) {
  constexpr bool kExactInFloat = std::is_same_v<From, float> || kHalf<From> || (kInteger<From> && sizeof(From) <= 2);
  if constexpr (kExactInFloat) {
    return H(static_cast<float>(v));
  } else if constexpr (kInteger<From> && sizeof(From) == 8) {
    return H(RoundToOdd(static_cast<long double>(v)));  // exact in x87's 64-bit significand
  } else {
    return H(RoundToOdd(static_cast<double>(v)));  // double, 32-bit integers
  }
}

// A double result stored as the floating type T, rounded once.
template <typename T>
T FromDoubleResult(double v) {
  if constexpr (kHalf<T>) {
    return ToHalf<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

// ONNX Cast of one value, as the reference does it: integers wrap, float → integer truncates and
// saturates (NaN → 0), anything → bool is "not zero" (NaN is true), floats round to nearest even
// once. `kTruncateBf16`: Cast before opset 19 to bfloat16 from a float type keeps the high 16 bits.
template <typename To, typename From, bool kTruncateBf16>
struct CastOp {
  To operator()(From v) const {
    if constexpr (kTruncateBf16) {
      // bfloat16 → bfloat16 too: NaN becomes the one quiet NaN 0x7fc0, as in the reference.
      const float f = static_cast<float>(v);
      BFloat16 out;
      if (std::isnan(f)) {
        out.bits = 0x7fc0;
      } else {
        uint32_t bits = 0;
        std::memcpy(&bits, &f, sizeof bits);
        out.bits = static_cast<uint16_t>(bits >> 16);
      }
      return out;
    } else if constexpr (std::is_same_v<To, From>) {
      return v;
    } else if constexpr (std::is_same_v<To, bool>) {
      return static_cast<double>(v) != 0.0;
    } else if constexpr (std::is_same_v<From, bool>) {
      return CastOp<To, uint8_t, false>()(v ? 1 : 0);
    } else if constexpr (kHalf<To>) {
      return ToHalf<To>(v);
    } else if constexpr (kInteger<To> && kFloating<From>) {
      return FromDouble<To>(static_cast<double>(v));  // truncates; saturates, NaN → 0
    } else {
      return static_cast<To>(v);
    }
  }
};

// ---------------------------------------------------------------------------------------------------------------
// The per-element operations.

template <typename T>
struct AddOp {
  T operator()(T a, T b) const {
    if constexpr (kInteger<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
    } else {
      return Down<T>(Up(a) + Up(b));
    }
  }
};
template <typename T>
struct SubOp {
  T operator()(T a, T b) const {
    if constexpr (kInteger<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
    } else {
      return Down<T>(Up(a) - Up(b));
    }
  }
};
template <typename T>
struct MulOp {
  T operator()(T a, T b) const {
    if constexpr (kInteger<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
    } else {
      return Down<T>(Up(a) * Up(b));
    }
  }
};
// Integers truncate toward zero; the run has checked that no divisor is 0. x / −1 negates with
// wrap-around (INT_MIN / −1 overflows in C++).
template <typename T>
struct DivOp {
  T operator()(T a, T b) const {
    if constexpr (kInteger<T>) {
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return static_cast<T>(WrapType<T>(0) - static_cast<WrapType<T>>(a));
      }
      return static_cast<T>(a / b);
    } else {
      return Down<T>(Up(a) / Up(b));
    }
  }
};
// fmod=1: the remainder takes the dividend's sign (C); fmod=0 (integers only): the divisor's (Python).
template <typename T, bool kFmod>
struct ModOp {
  T operator()(T a, T b) const {
    if constexpr (kInteger<T>) {
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return T(0);
      }
      T r = static_cast<T>(a % b);
      if constexpr (!kFmod && std::is_signed_v<T>) {
        if (r != 0 && (r < 0) != (b < 0)) r = static_cast<T>(r + b);
      }
      return r;
    } else {
      return Down<T>(std::fmod(Up(a), Up(b)));
    }
  }
};

// Pow, the output of the base's dtype. Integer by integer stays exact: squaring, wrapping like repeated
// multiplication; a negative exponent gives the truncated quotient 1 / x^|e| (0 unless |x| == 1; x == 0
// is the run's error, PowZeroOp). Anything else goes through double, as the reference computes, and an
// integer result from it truncates and saturates (NaN gives 0).
template <typename A, typename B>
struct PowOp {
  A operator()(A x, B e) const {
    if constexpr (kInteger<A> && !kInteger<B>) {
      return FromDouble<A>(std::pow(static_cast<double>(x), static_cast<double>(e)));  // truncates, saturates
    } else if constexpr (kInteger<A>) {
      if constexpr (std::is_signed_v<B>) {
        if (e < 0) {
          if (x == A(1)) return A(1);
          if constexpr (std::is_signed_v<A>) {
            if (x == A(-1)) return e % 2 == 0 ? A(1) : x;
          }
          return A(0);
        }
      }
      WrapType<A> result = 1, base = static_cast<WrapType<A>>(static_cast<std::make_unsigned_t<A>>(x));
      for (auto n = static_cast<std::make_unsigned_t<B>>(e); n != 0; n >>= 1) {
        if ((n & 1) != 0) result = static_cast<WrapType<A>>(result * base);
        base = static_cast<WrapType<A>>(base * base);
      }
      return static_cast<A>(result);
    } else {
      return static_cast<A>(std::pow(static_cast<double>(x), static_cast<double>(e)));
    }
  }
};
// 1 where an integer 0 meets a negative exponent (a division by zero).
template <typename A, typename B>
struct PowZeroOp {
  uint8_t operator()(A x, B e) const {
    if constexpr (std::is_signed_v<B>) return x == A(0) && e < 0 ? 1 : 0;
    return 0;
  }
};

template <typename T>
struct EqualOp {
  bool operator()(T a, T b) const { return Up(a) == Up(b); }
};
template <typename T>
struct LessOp {
  bool operator()(T a, T b) const { return Up(a) < Up(b); }
};
template <typename T>
struct LessOrEqualOp {
  bool operator()(T a, T b) const { return Up(a) <= Up(b); }
};
template <typename T>
struct GreaterOp {
  bool operator()(T a, T b) const { return Up(a) > Up(b); }
};
template <typename T>
struct GreaterOrEqualOp {
  bool operator()(T a, T b) const { return Up(a) >= Up(b); }
};

struct AndOp {
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrOp {
  bool operator()(bool a, bool b) const { return a || b; }
};
struct XorOp {
  bool operator()(bool a, bool b) const { return a != b; }
};
struct NotOp {
  bool operator()(bool a) const { return !a; }
};

// Shifting by the bit width or more empties the value (numpy), instead of C++'s undefined behaviour.
template <typename T, bool kLeft>
struct ShiftOp {
  T operator()(T x, T s) const {
    if (s >= sizeof(T) * 8) return T(0);
    return static_cast<T>(kLeft ? static_cast<uint64_t>(x) << s : static_cast<uint64_t>(x) >> s);
  }
};

// Keeps NaN and signed zeros of floats.
template <typename T>
struct SignOp {
  T operator()(T v) const {
    if constexpr (kFloating<T>) {
      const Wide<T> x = Up(v);
      return x > 0 ? Down<T>(1) : x < 0 ? Down<T>(-1) : v;
    } else if constexpr (std::is_signed_v<T>) {
      return v < 0 ? T(-1) : T(v > 0);
    } else {
      return T(v > 0);
    }
  }
};

template <typename T>
struct IsNaNOp {
  bool operator()(T v) const { return std::isnan(Up(v)); }
};
template <typename T, bool kPositive, bool kNegative>
struct IsInfOp {
  bool operator()(T v) const {
    const Wide<T> x = Up(v);
    // A branch per sign (not `x > 0 ? kPositive : kNegative`, which is one expression twice when the
    // template flags agree).
    if (!std::isinf(x)) return false;
    if (x > 0) return kPositive;
    return kNegative;
  }
};

// Where, on the storage bits of the element type.
template <typename U>
struct SelectOp {
  U operator()(bool c, U x, U y) const { return c ? x : y; }
};

// ---------------------------------------------------------------------------------------------------------------
// Broadcasting.

// The output's dims with dims of 1 dropped and neighbours merged where every input either spans both
// or broadcasts along both (at least one dim); per input the element stride along each (0: broadcast).
struct Plan {
  Shape out;
  int64_t numel = 0;
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides;  // [input][dim]
};

Result<Plan> MakePlan(const std::vector<Shape>& shapes) {
  Plan plan;
  ASSIGN_OR_RETURN(plan.out, BroadcastShapes(shapes));
  plan.numel = NumElements(plan.out);
  const size_t rank = plan.out.size(), n = shapes.size();
  std::vector<std::vector<bool>> spans;  // per merged dim: which inputs span it
  for (size_t d = 0; d < rank; ++d) {
    if (plan.out[d] == 1) continue;
    std::vector<bool> full(n);
    for (size_t i = 0; i < n; ++i) {
      const size_t pad = rank - shapes[i].size();
      full[i] = d >= pad && shapes[i][d - pad] == plan.out[d];
    }
    if (!spans.empty() && spans.back() == full) {
      plan.dims.back() *= plan.out[d];
    } else {
      spans.push_back(std::move(full));
      plan.dims.push_back(plan.out[d]);
    }
  }
  if (plan.dims.empty()) {
    plan.dims = {1};
    spans = {std::vector<bool>(n, true)};
  }
  plan.strides.assign(n, std::vector<int64_t>(plan.dims.size(), 0));
  for (size_t i = 0; i < n; ++i) {
    int64_t running = 1;
    for (size_t k = plan.dims.size(); k-- > 0;) {
      if (!spans[k][i]) continue;
      plan.strides[i][k] = running;
      running *= plan.dims[k];
    }
  }
  return plan;
}

// Blocks of about this many output values go to OpenMP threads once the output has kParallelFrom.
constexpr int64_t kBlock = 16384;
constexpr int64_t kParallelFrom = 32768;

// row(output offset, per-input offsets, count) over runs of the innermost merged dim; inputs advance
// along it by their innermost stride (1, or 0 when broadcast).
template <typename RowFn>
void ForEachRow(const Plan& p, RowFn&& row) {
  if (p.numel == 0) return;
  const size_t rank = p.dims.size(), n = p.strides.size();
  const int64_t inner = p.dims[rank - 1];
  const int64_t block = inner >= kBlock ? kBlock : kBlock / inner * inner;
  const int64_t blocks = (p.numel + block - 1) / block;
#pragma omp parallel for schedule(static) if (blocks > 1 && p.numel >= kParallelFrom)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t begin = b * block, end = std::min(p.numel, begin + block);
    std::vector<int64_t> index(rank, 0), row_offset(n, 0), offset(n, 0);
    int64_t rest = begin / inner;
    int64_t column = begin % inner;
    for (size_t d = rank - 1; d-- > 0;) {
      index[d] = rest % p.dims[d];
      rest /= p.dims[d];
      for (size_t i = 0; i < n; ++i) row_offset[i] += index[d] * p.strides[i][d];
    }
    for (int64_t at = begin; at < end;) {
      const int64_t count = std::min(inner - column, end - at);
      for (size_t i = 0; i < n; ++i) offset[i] = row_offset[i] + column * p.strides[i][rank - 1];
      row(at, offset.data(), count);
      at += count;
      column = 0;
      for (size_t d = rank - 1; d-- > 0;) {
        for (size_t i = 0; i < n; ++i) row_offset[i] += p.strides[i][d];
        if (++index[d] < p.dims[d]) break;
        for (size_t i = 0; i < n; ++i) row_offset[i] -= p.dims[d] * p.strides[i][d];
        index[d] = 0;
      }
    }
  }
}

// Runs an op over a plan: inputs and output by pointer (the output in plain order).
using RunFn = void (*)(const Plan& plan, const void* const* inputs, void* output);

// One row: input J is contiguous along it when bit J of M is set, else one broadcast value.
template <unsigned M, typename Out, typename F, typename Ptrs, size_t... J>
void Row(Out* y, int64_t count, const Ptrs& x, std::index_sequence<J...>) {
  const F f{};
#pragma omp simd
  for (int64_t i = 0; i < count; ++i) y[i] = f(std::get<J>(x)[((M >> J) & 1u) != 0 ? i : 0]...);
}

template <unsigned M, typename Out, typename F, typename Ptrs, size_t... J>
void DispatchRow(unsigned mask, Out* y, int64_t count, const Ptrs& x, std::index_sequence<J...> seq) {
  if constexpr (M < (1u << sizeof...(J))) {
    if (mask == M) {
      Row<M, Out, F>(y, count, x, seq);
    } else {
      DispatchRow<M + 1, Out, F>(mask, y, count, x, seq);
    }
  }
}

template <typename Out, typename F, typename... In, size_t... J>
void MapImpl(const Plan& p, const void* const* inputs, Out* y, std::index_sequence<J...> seq) {
  const std::tuple<const In*...> base(static_cast<const In*>(inputs[J])...);
  unsigned mask = 0;
  ((mask |= (p.strides[J].back() != 0 ? 1u << J : 0u)), ...);
  ForEachRow(p, [&](int64_t at, const int64_t* offset, int64_t count) {
    const std::tuple<const In*...> x((std::get<J>(base) + offset[J])...);
    DispatchRow<0, Out, F>(mask, y + at, count, x, seq);
  });
}

// y = F()(x0, x1, …) elementwise over the broadcast output.
template <typename Out, typename F, typename... In>
void RunMap(const Plan& p, const void* const* inputs, void* output) {
  MapImpl<Out, F, In...>(p, inputs, static_cast<Out*>(output), std::index_sequence_for<In...>{});
}

// Max/Min/Sum/Mean of any number of inputs: R folds them in input order into an accumulator per
// output value (chunks of a row at a time).
template <typename T, typename R>
void RunFold(const Plan& p, const void* const* inputs, void* output) {
  using Acc = typename R::Acc;
  const size_t n = p.strides.size();
  T* y = static_cast<T*>(output);
  ForEachRow(p, [&](int64_t at, const int64_t* offset, int64_t count) {
    constexpr int64_t kChunk = 256;
    Acc acc[kChunk];
    for (int64_t start = 0; start < count; start += kChunk) {
      const int64_t m = std::min(kChunk, count - start);
      for (size_t k = 0; k < n; ++k) {
        const T* x = static_cast<const T*>(inputs[k]) + offset[k];
        if (p.strides[k].back() != 0) {
          x += start;
          if (k == 0) {
            for (int64_t i = 0; i < m; ++i) acc[i] = R::Start(x[i]);
          } else {
#pragma omp simd
            for (int64_t i = 0; i < m; ++i) acc[i] = R::Combine(acc[i], x[i]);
          }
        } else {
          const T v = x[0];
          if (k == 0) {
            const Acc first = R::Start(v);
            for (int64_t i = 0; i < m; ++i) acc[i] = first;
          } else {
#pragma omp simd
            for (int64_t i = 0; i < m; ++i) acc[i] = R::Combine(acc[i], v);
          }
        }
      }
      for (int64_t i = 0; i < m; ++i) y[at + start + i] = R::Finish(acc[i], n);
    }
  });
}

// NaN wins (numpy.maximum/minimum): once the accumulator is NaN it stays.
template <typename T, bool kMax>
struct ExtremeFold {
  using Acc = Wide<T>;
  static Acc Start(T v) { return Up(v); }
  static Acc Combine(Acc best, T value) {
    const Acc v = Up(value);
    if constexpr (kFloating<T>) {
      if (std::isnan(best)) return best;
      if (std::isnan(v)) return v;
    }
    return (kMax ? v > best : v < best) ? v : best;
  }
  static T Finish(Acc best, size_t) { return Down<T>(best); }
};

// In double from 0, rounded once (as the reference: 0 + −0 is +0).
template <typename T, bool kMean>
struct SumFold {
  using Acc = double;
  static Acc Start(T v) { return 0.0 + static_cast<double>(v); }
  static Acc Combine(Acc sum, T v) { return sum + static_cast<double>(v); }
  static T Finish(Acc sum, size_t n) { return FromDoubleResult<T>(kMean ? sum / static_cast<double>(n) : sum); }
};

// ---------------------------------------------------------------------------------------------------------------
// The kernel: an op over some of the node's inputs (all but CastLike's target).

// Before opset 7, B broadcast to A only with broadcast=1, aligned at `axis`: B's shape padded with 1s
// to A's rank, which numpy broadcasting then treats alike.
Result<Shape> LegacyAlignedB(const Node& node, const Shape& a, const Shape& b) {
  if (node.GetInt("broadcast", 0) == 0) {
    if (a != b) return InvalidArgument("shapes " + ShapeToString(a) + " and " + ShapeToString(b) + " with broadcast=0");
    return b;
  }
  const auto rank_a = static_cast<int64_t>(a.size()), rank_b = static_cast<int64_t>(b.size());
  const int64_t axis = node.GetInt("axis", rank_a - rank_b);
  if (rank_b > rank_a || axis < 0 || axis + rank_b > rank_a) {
    return InvalidArgument("B of shape " + ShapeToString(b) + " cannot align with A of shape " + ShapeToString(a) +
                           " at axis " + std::to_string(axis));
  }
  Shape aligned(a.size(), 1);
  for (int64_t i = 0; i < rank_b; ++i) aligned[static_cast<size_t>(axis + i)] = b[static_cast<size_t>(i)];
  return aligned;
}

// Whether an integer divisor holds a 0 (Div and Mod then fail, as the reference does).
using ZeroFn = bool (*)(const void* data, int64_t count);
template <typename T>
bool HasZero(const void* data, int64_t count) {
  const T* x = static_cast<const T*>(data);
  bool zero = false;
#pragma omp simd reduction(|| : zero)
  for (int64_t i = 0; i < count; ++i) zero = zero || x[i] == T(0);
  return zero;
}

struct MapSpec {
  RunFn run = nullptr;
  std::vector<size_t> operands;   // node inputs fed to `run`, in order
  ZeroFn zero_divisor = nullptr;  // checked on operand 1
  bool legacy = false;            // opset < 7 binary broadcasting (operand 1 aligned to operand 0)
  // Run like `run` into one byte per output value before it: a nonzero byte makes the run fail with
  // `violation_message` (integer Pow's 0 to a negative power, which needs both operands).
  RunFn violation = nullptr;
  const char* violation_message = "";
};

class MapKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, MapSpec spec) {
    auto kernel = std::unique_ptr<MapKernel>(new MapKernel());
    std::vector<Shape> shapes;
    bool known = true;
    for (size_t k : spec.operands) {
      const Shape& s = init.inputs[k]->shape;
      known = known && std::all_of(s.begin(), s.end(), [](int64_t d) { return d >= 0; });
      shapes.push_back(s);
    }
    kernel->spec_ = std::move(spec);
    if (known) {
      // Shapes known now: plan once. Otherwise each run plans for the shapes it gets.
      Result<Plan> plan = kernel->PlanFor(init.node, std::move(shapes));
      if (!plan.ok()) return Unsupported(plan.status().message());
      kernel->plan_ = std::move(plan).value();
    }
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    Tensor& y = *ctx.output(0);
    if (y.numel() == 0) return Status();
    std::vector<const void*> in;
    for (size_t k : spec_.operands) in.push_back(ctx.input(k)->raw_data());
    if (spec_.zero_divisor != nullptr) {
      const Tensor& divisor = *ctx.input(spec_.operands[1]);
      if (spec_.zero_divisor(divisor.raw_data(), divisor.numel())) return ctx.Error("integer division by zero");
    }
    if (plan_) {
      if (spec_.violation != nullptr && Violates(*plan_, in, y.numel())) return ctx.Error(spec_.violation_message);
      spec_.run(*plan_, in.data(), y.raw_data());
      return Status();
    }
    std::vector<Shape> shapes;
    for (size_t k : spec_.operands) shapes.push_back(ctx.input(k)->shape());
    Result<Plan> plan = PlanFor(ctx.node(), std::move(shapes));
    if (!plan.ok()) return ctx.Error(plan.status().message());
    if (plan->out != y.shape()) {
      return ctx.Error("output of shape " + ShapeToString(y.shape()) + ", the inputs broadcast to " +
                       ShapeToString(plan->out));
    }
    if (spec_.violation != nullptr && Violates(*plan, in, y.numel())) return ctx.Error(spec_.violation_message);
    spec_.run(*plan, in.data(), y.raw_data());
    return Status();
  }

 private:
  MapKernel() = default;

  bool Violates(const Plan& plan, const std::vector<const void*>& in, int64_t count) {
    flags_.resize(static_cast<size_t>(count));
    spec_.violation(plan, in.data(), flags_.data());
    return std::any_of(flags_.begin(), flags_.end(), [](uint8_t f) { return f != 0; });
  }

  Result<Plan> PlanFor(const Node& node, std::vector<Shape> shapes) const {
    if (spec_.legacy && shapes.size() == 2) {
      ASSIGN_OR_RETURN(shapes[1], LegacyAlignedB(node, shapes[0], shapes[1]));
    }
    return MakePlan(shapes);
  }

  MapSpec spec_;
  std::optional<Plan> plan_;
  std::vector<uint8_t> flags_;  // spec_.violation's bytes
};

// ---------------------------------------------------------------------------------------------------------------
// Factories.

std::string Name(DType dtype) { return std::string(DTypeName(dtype)); }

// Inputs 0 … count-1, all present; their dtypes.
Result<std::vector<DType>> RequireInputs(const KernelInit& init, size_t count) {
  if (init.inputs.size() < count) {
    return Unsupported(init.node.op_type + " with " + std::to_string(init.inputs.size()) + " inputs");
  }
  std::vector<DType> dtypes;
  for (size_t i = 0; i < count; ++i) {
    if (init.inputs[i] == nullptr) return Unsupported("input " + std::to_string(i) + " is missing");
    dtypes.push_back(init.inputs[i]->dtype);
  }
  return dtypes;
}

Status RequireSameDTypes(const std::vector<DType>& dtypes, size_t first) {
  for (size_t i = first + 1; i < dtypes.size(); ++i) {
    if (dtypes[i] != dtypes[first]) {
      return Unsupported("inputs of dtypes " + Name(dtypes[first]) + " and " + Name(dtypes[i]));
    }
  }
  return Status();
}

bool IsFloating(DType d) { return IsOneOf(d, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}); }

std::vector<size_t> FirstN(size_t n) {
  std::vector<size_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

// A binary op on two inputs of one dtype; `pick` gives the RunFn for that element type (nullptr:
// not taken), `zero` the divisor check where integer division needs it.
template <typename Pick>
Result<std::unique_ptr<IKernel>> CreateBinary(const KernelInit& init, const Pick& pick, bool legacy_form = true) {
  ASSIGN_OR_RETURN(std::vector<DType> dtypes, RequireInputs(init, 2));
  RETURN_IF_ERROR(RequireSameDTypes(dtypes, 0));
  MapSpec spec;
  spec.operands = {0, 1};
  spec.legacy = legacy_form && init.opset < 7;
  VisitDType(dtypes[0], [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, std::nullptr_t>) pick(T{}, spec);
  });
  if (spec.run == nullptr) return Unsupported(init.node.op_type + " on " + Name(dtypes[0]) + " inputs");
  return MapKernel::Create(init, std::move(spec));
}

Result<std::unique_ptr<IKernel>> CreateArithmetic(const KernelInit& init) {
  const std::string& op = init.node.op_type;
  return CreateBinary(init, [&](auto tag, MapSpec& spec) {
    using T = decltype(tag);
    if constexpr (kInteger<T> || kFloating<T>) {
      if (op == "Add") spec.run = RunMap<T, AddOp<T>, T, T>;
      if (op == "Sub") spec.run = RunMap<T, SubOp<T>, T, T>;
      if (op == "Mul") spec.run = RunMap<T, MulOp<T>, T, T>;
      if (op == "Div") spec.run = RunMap<T, DivOp<T>, T, T>;
      if constexpr (kInteger<T>) {
        if (op == "Div") spec.zero_divisor = HasZero<T>;
      }
    }
  });
}

// Pow where the f32 kernels do not take it: integer, f32 and f64 bases by integer, f32 and f64
// exponents.
Result<std::unique_ptr<IKernel>> CreatePow(const KernelInit& init) {
  ASSIGN_OR_RETURN(std::vector<DType> dtypes, RequireInputs(init, 2));
  MapSpec spec;
  spec.operands = {0, 1};
  spec.legacy = init.opset < 7;
  VisitDType(dtypes[0], [&](auto base_tag) {
    using A = decltype(base_tag);
    VisitDType(dtypes[1], [&](auto exp_tag) {
      using B = decltype(exp_tag);
      constexpr bool kF32OrF64 = std::is_same_v<B, float> || std::is_same_v<B, double>;
      if constexpr (kInteger<A> && kInteger<B>) {
        spec.run = RunMap<A, PowOp<A, B>, A, B>;
        spec.violation = RunMap<uint8_t, PowZeroOp<A, B>, A, B>;
        spec.violation_message = "integer 0 raised to a negative power (a division by zero)";
      } else if constexpr ((kInteger<A> || std::is_same_v<A, float> || std::is_same_v<A, double>)&&(kInteger<B> ||
                                                                                                    kF32OrF64)) {
        spec.run = RunMap<A, PowOp<A, B>, A, B>;
      }
    });
  });
  if (spec.run == nullptr) return Unsupported("Pow of " + Name(dtypes[0]) + " by " + Name(dtypes[1]));
  return MapKernel::Create(init, std::move(spec));
}

Result<std::unique_ptr<IKernel>> CreateMod(const KernelInit& init) {
  const bool fmod = init.node.GetInt("fmod", 0) != 0;
  if (!fmod && init.inputs.size() >= 1 && init.inputs[0] != nullptr && IsFloating(init.inputs[0]->dtype)) {
    return Unsupported("Mod with fmod=0 on " + Name(init.inputs[0]->dtype) + " (defined for integers only)");
  }
  return CreateBinary(
      init,
      [&](auto tag, MapSpec& spec) {
        using T = decltype(tag);
        if constexpr (kInteger<T> || kFloating<T>) {
          spec.run = fmod ? RunMap<T, ModOp<T, true>, T, T> : RunMap<T, ModOp<T, false>, T, T>;
          if constexpr (kInteger<T>) spec.zero_divisor = HasZero<T>;
        }
      },
      false);
}

Result<std::unique_ptr<IKernel>> CreateCompare(const KernelInit& init) {
  const std::string& op = init.node.op_type;
  return CreateBinary(init, [&](auto tag, MapSpec& spec) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      if (op == "Equal") spec.run = RunMap<bool, EqualOp<T>, T, T>;
    } else {
      if (op == "Equal") spec.run = RunMap<bool, EqualOp<T>, T, T>;
      if (op == "Less") spec.run = RunMap<bool, LessOp<T>, T, T>;
      if (op == "LessOrEqual") spec.run = RunMap<bool, LessOrEqualOp<T>, T, T>;
      if (op == "Greater") spec.run = RunMap<bool, GreaterOp<T>, T, T>;
      if (op == "GreaterOrEqual") spec.run = RunMap<bool, GreaterOrEqualOp<T>, T, T>;
    }
  });
}

Result<std::unique_ptr<IKernel>> CreateLogical(const KernelInit& init) {
  const std::string& op = init.node.op_type;
  if (op == "Not") {
    ASSIGN_OR_RETURN(std::vector<DType> dtypes, RequireInputs(init, 1));
    if (dtypes[0] != DType::kBool) return Unsupported("Not on " + Name(dtypes[0]) + " input");
    return MapKernel::Create(init, {.run = RunMap<bool, NotOp, bool>, .operands = {0}});
  }
  return CreateBinary(init, [&](auto tag, MapSpec& spec) {
    if constexpr (std::is_same_v<decltype(tag), bool>) {
      if (op == "And") spec.run = RunMap<bool, AndOp, bool, bool>;
      if (op == "Or") spec.run = RunMap<bool, OrOp, bool, bool>;
      if (op == "Xor") spec.run = RunMap<bool, XorOp, bool, bool>;
    }
  });
}

Result<std::unique_ptr<IKernel>> CreateBitShift(const KernelInit& init) {
  const std::string direction = init.node.GetString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT") return Unsupported("BitShift direction '" + direction + "'");
  const bool left = direction == "LEFT";
  return CreateBinary(
      init,
      [&](auto tag, MapSpec& spec) {
        using T = decltype(tag);
        if constexpr (kInteger<T> && std::is_unsigned_v<T>) {
          spec.run = left ? RunMap<T, ShiftOp<T, true>, T, T> : RunMap<T, ShiftOp<T, false>, T, T>;
        }
      },
      false);
}

// Sign, IsNaN, IsInf: one input, any shape (no plan needs the shape before the run).
Result<std::unique_ptr<IKernel>> CreateUnary(const KernelInit& init) {
  ASSIGN_OR_RETURN(std::vector<DType> dtypes, RequireInputs(init, 1));
  const std::string& op = init.node.op_type;
  const bool positive = init.node.GetInt("detect_positive", 1) != 0;
  const bool negative = init.node.GetInt("detect_negative", 1) != 0;
  MapSpec spec;
  spec.operands = {0};
  VisitDType(dtypes[0], [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kInteger<T> || kFloating<T>) {
      if (op == "Sign") spec.run = RunMap<T, SignOp<T>, T>;
    }
    if constexpr (kFloating<T>) {
      if (op == "IsNaN") spec.run = RunMap<bool, IsNaNOp<T>, T>;
      if (op == "IsInf") {
        if (positive && negative) spec.run = RunMap<bool, IsInfOp<T, true, true>, T>;
        if (positive && !negative) spec.run = RunMap<bool, IsInfOp<T, true, false>, T>;
        if (!positive && negative) spec.run = RunMap<bool, IsInfOp<T, false, true>, T>;
        if (!positive && !negative) spec.run = RunMap<bool, IsInfOp<T, false, false>, T>;
      }
    }
  });
  if (spec.run == nullptr) return Unsupported(op + " on " + Name(dtypes[0]) + " input");
  return MapKernel::Create(init, std::move(spec));
}

Result<std::unique_ptr<IKernel>> CreateWhere(const KernelInit& init) {
  ASSIGN_OR_RETURN(std::vector<DType> dtypes, RequireInputs(init, 3));
  if (dtypes[0] != DType::kBool) return Unsupported("Where with a " + Name(dtypes[0]) + " condition");
  RETURN_IF_ERROR(RequireSameDTypes(dtypes, 1));
  MapSpec spec;
  spec.operands = {0, 1, 2};
  switch (dtypes[1] == DType::kString ? 0 : DTypeSize(dtypes[1])) {
    case 1: spec.run = RunMap<uint8_t, SelectOp<uint8_t>, bool, uint8_t, uint8_t>; break;
    case 2: spec.run = RunMap<uint16_t, SelectOp<uint16_t>, bool, uint16_t, uint16_t>; break;
    case 4: spec.run = RunMap<uint32_t, SelectOp<uint32_t>, bool, uint32_t, uint32_t>; break;
    case 8: spec.run = RunMap<uint64_t, SelectOp<uint64_t>, bool, uint64_t, uint64_t>; break;
    default: return Unsupported("Where on " + Name(dtypes[1]) + " inputs");
  }
  return MapKernel::Create(init, std::move(spec));
}

// The dtype Cast's `to` names; Unsupported for types chipfit's tensors cannot hold and for strings.
Result<DType> CastTarget(const KernelInit& init) {
  if (init.node.op_type == "CastLike") {
    if (init.inputs.size() < 2 || init.inputs[1] == nullptr) return Unsupported("input target_type is missing");
    return init.inputs[1]->dtype;
  }
  if (!init.node.Has("to")) return Unsupported("attribute 'to' is missing");
  const int64_t to = init.node.GetInt("to", 0);
  const std::optional<DType> dtype = DTypeFromOnnx(static_cast<int32_t>(to));
  if (!dtype || *dtype == DType::kUndefined) {
    return Unsupported("cast to ONNX type " + std::to_string(to) + " (not a chipfit tensor type)");
  }
  return *dtype;
}

template <typename From>
RunFn PickCast(DType to, bool truncate_bf16) {
  RunFn run = nullptr;
  VisitDType(to, [&](auto tag) {
    using To = decltype(tag);
    if constexpr (!std::is_same_v<To, std::nullptr_t>) {
      if constexpr (std::is_same_v<To, BFloat16> && kFloating<From>) {
        run = truncate_bf16 ? RunMap<To, CastOp<To, From, true>, From> : RunMap<To, CastOp<To, From, false>, From>;
      } else {
        run = RunMap<To, CastOp<To, From, false>, From>;
      }
    }
  });
  return run;
}

// Cast and CastLike (the target's dtype from input 1; only input 0 is read).
Result<std::unique_ptr<IKernel>> CreateCast(const KernelInit& init) {
  if (init.opset < 6) return Unsupported("Cast before opset 6 (a type name in 'to')");
  ASSIGN_OR_RETURN(std::vector<DType> dtypes, RequireInputs(init, 1));
  ASSIGN_OR_RETURN(const DType to, CastTarget(init));
  const DType from = dtypes[0];
  if (from == DType::kString || to == DType::kString) {
    return Unsupported("cast " + std::string(from == DType::kString ? "from" : "to") +
                       " string (text conversion stays with the reference)");
  }
  // Before Cast-19 a float → bfloat16 cast drops the low 16 bits (the reference's reading of those
  // opsets and their test data); from 19 it rounds to nearest even.
  const bool truncate_bf16 = init.opset < 19;
  RunFn run = nullptr;
  VisitDType(from, [&](auto tag) {
    using From = decltype(tag);
    if constexpr (!std::is_same_v<From, std::nullptr_t>) run = PickCast<From>(to, truncate_bf16);
  });
  if (run == nullptr) return Unsupported("cast from " + Name(from) + " to " + Name(to));
  return MapKernel::Create(init, {.run = run, .operands = {0}});
}

// Max, Min, Sum, Mean of any number of inputs (the f32 binary kernels take the 2-input f32 cases first).
Result<std::unique_ptr<IKernel>> CreateVariadic(const KernelInit& init) {
  const std::string& op = init.node.op_type;
  if (init.inputs.empty()) return Unsupported(op + " without inputs");
  ASSIGN_OR_RETURN(std::vector<DType> dtypes, RequireInputs(init, init.inputs.size()));
  RETURN_IF_ERROR(RequireSameDTypes(dtypes, 0));
  MapSpec spec;
  spec.operands = FirstN(dtypes.size());
  VisitDType(dtypes[0], [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kInteger<T> || kFloating<T>) {
      if (op == "Max") spec.run = RunFold<T, ExtremeFold<T, true>>;
      if (op == "Min") spec.run = RunFold<T, ExtremeFold<T, false>>;
    }
    if constexpr (kFloating<T>) {
      if (op == "Sum") spec.run = RunFold<T, SumFold<T, false>>;
      if (op == "Mean") spec.run = RunFold<T, SumFold<T, true>>;
    }
  });
  if (spec.run == nullptr) return Unsupported(op + " on " + Name(dtypes[0]) + " inputs");
  return MapKernel::Create(init, std::move(spec));
}

}  // namespace

void AddLogicKernels(KernelTable& t) {
  const auto add = [&t](const char* op, const char* name, KernelFactory create) {
    t.Add(op, "", DeviceKind::kCpu, Precision::kFp32, {name, create});
  };
  add("Cast", "cpu:cast", CreateCast);
  add("CastLike", "cpu:cast", CreateCast);
  add("Where", "cpu:where", CreateWhere);
  for (const char* op : {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual"}) {
    add(op, "cpu:compare", CreateCompare);
  }
  for (const char* op : {"And", "Or", "Xor", "Not"}) add(op, "cpu:logical", CreateLogical);
  add("BitShift", "cpu:bitshift", CreateBitShift);
  add("Mod", "cpu:mod", CreateMod);
  add("Pow", "cpu:pow", CreatePow);
  add("Sign", "cpu:sign", CreateUnary);
  add("IsNaN", "cpu:classify", CreateUnary);
  add("IsInf", "cpu:classify", CreateUnary);
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) add(op, "cpu:arith", CreateArithmetic);
  for (const char* op : {"Max", "Min", "Sum", "Mean"}) add(op, "cpu:variadic", CreateVariadic);
}

}  // namespace chipfit::cpu
