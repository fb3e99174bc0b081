// The CPU's logic and integer kernels (logic_cpu.cpp) against the reference, taken from the CPU kernel
// table by implementation name: Cast/CastLike between every pair of dtypes, Where, the comparisons,
// And/Or/Xor/Not, BitShift, Mod, Sign, IsNaN/IsInf, integer Add/Sub/Mul/Div and n-ary Max/Min/Sum/
// Mean, with numpy broadcasting, edge values (NaN, ±inf, −0, integer min/max, x / −1), tensors large
// enough for the parallel loop, shapes known only at run time, division by zero (the reference's
// error) and refusals. Every result must equal the reference's bit for bit (any NaN matches any NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/reference/ref_util.h"
#include "devices/cpu/cpu_kernels.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"

namespace chipfit::testing {
namespace {

const std::map<std::string, std::string> kImplOf = {
    {"Cast", "cpu:cast"},         {"CastLike", "cpu:cast"},
    {"Where", "cpu:where"},       {"Equal", "cpu:compare"},
    {"Greater", "cpu:compare"},   {"GreaterOrEqual", "cpu:compare"},
    {"Less", "cpu:compare"},      {"LessOrEqual", "cpu:compare"},
    {"And", "cpu:logical"},       {"Or", "cpu:logical"},
    {"Xor", "cpu:logical"},       {"Not", "cpu:logical"},
    {"BitShift", "cpu:bitshift"}, {"Mod", "cpu:mod"},
    {"Sign", "cpu:sign"},         {"IsNaN", "cpu:classify"},
    {"IsInf", "cpu:classify"},    {"Add", "cpu:arith"},
    {"Sub", "cpu:arith"},         {"Mul", "cpu:arith"},
    {"Div", "cpu:arith"},         {"Max", "cpu:variadic"},
    {"Min", "cpu:variadic"},      {"Sum", "cpu:variadic"},
    {"Mean", "cpu:variadic"},     {"Pow", "cpu:pow"},
};

// The logic kernel of `op` as listed in the CPU kernel table for fp32.
KernelFactory Factory(const std::string& op) {
  const auto it = kImplOf.find(op);
  if (it == kImplOf.end()) return nullptr;
  for (const KernelImpl& impl : CpuKernels().Find(op, "", DeviceKind::kCpu, Precision::kFp32)) {
    if (impl.name == it->second) return impl.create;
  }
  return nullptr;
}

const std::vector<DType> kAllDTypes = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8,
                                       DType::kU8,  DType::kI16, DType::kU16, DType::kI32,  DType::kU32,
                                       DType::kI64, DType::kU64, DType::kBool};
const std::vector<DType> kNumeric = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8,  DType::kU8,
                                     DType::kI16, DType::kU16, DType::kI32, DType::kU32,  DType::kI64, DType::kU64};
const std::vector<DType> kIntegers = {DType::kI8,  DType::kU8,  DType::kI16, DType::kU16,
                                      DType::kI32, DType::kU32, DType::kI64, DType::kU64};
const std::vector<DType> kFloats = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};

// Floats near the edges of casts and of the 16-bit formats.
const double kFloatEdges[] = {std::nan(""),
                              std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity(),
                              0.5,
                              -0.5,
                              2.5,
                              -2.5,
                              127.9,
                              -128.9,
                              255.9,
                              256.0,
                              -129.0,
                              32767.5,
                              -32768.7,
                              65535.9,
                              65504.0,
                              65519.0,
                              65520.0,
                              2147483520.0,
                              -2147483648.0,
                              4294967040.0,
                              9.2233715e18,
                              -9.2233715e18,
                              1.8446743e19,
                              3.0e38,
                              -3.0e38,
                              1.0e300,
                              1.0e-40,
                              5.9e-8,
                              0.1,
                              1.0 / 3.0};

// Seeded values of `dtype` with edge values mixed in: integers over their whole range with 0, ±1,
// min and max; floats in [-300, 300) (quarters and arbitrary), ±0 and kFloatEdges, and for f32 some
// arbitrary bit patterns. `nonzero`: no integer 0 (divisors).
Tensor Mixed(DType dtype, const Shape& shape, uint64_t seed, bool nonzero = false) {
  Tensor t(dtype, shape);
  SplitMix64 rng(seed);
  EXPECT_TRUE(VisitDType(dtype, [&](auto tag) -> Status {
                using T = decltype(tag);
                if constexpr (std::is_same_v<T, std::nullptr_t>) {
                  return Unsupported("dtype");
                } else {
                  T* p = t.data<T>();
                  for (int64_t i = 0; i < t.numel(); ++i) {
                    const uint64_t r = rng.Next();
                    const uint64_t pick = r % 10;
                    if constexpr (std::is_same_v<T, bool>) {
                      p[i] = (r >> 32) & 1;
                    } else if constexpr (std::is_integral_v<T>) {
                      T v = static_cast<T>(r >> 8);
                      if (pick == 0) v = 0;
                      if (pick == 1) v = 1;
                      if (pick == 2) v = static_cast<T>(-1);
                      if (pick == 3) v = std::numeric_limits<T>::lowest();
                      if (pick == 4) v = std::numeric_limits<T>::max();
                      if (pick == 5) v = static_cast<T>(static_cast<int64_t>((r >> 16) % 17) - 8);
                      if (nonzero && v == 0) v = 3;
                      p[i] = v;
                    } else {
                      double v = std::floor(rng.Unit() * 2400.0 - 1200.0) / 4.0;
                      if (pick == 0) v = (r >> 20) & 1 ? -0.0 : 0.0;
                      if (pick == 1 || pick == 2) {
                        v = kFloatEdges[(r >> 24) % std::size(kFloatEdges)];
                        if ((r >> 40) & 1) v = -v;
                      }
                      if (pick == 3) v = rng.Unit() * 600.0 - 300.0;
                      p[i] = FromDouble<T>(v);
                      if constexpr (std::is_same_v<T, float>) {
                        if (pick == 4) {
                          const auto bits = static_cast<uint32_t>(r >> 13);
                          std::memcpy(&p[i], &bits, sizeof bits);
                        }
                      }
                    }
                  }
                  return Status();
                }
              }).ok());
  return t;
}

// Equal dtype, shape and bits (any NaN equals any NaN).
void ExpectSame(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const Status status = VisitDType(want.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::nullptr_t>) {
      return Unsupported("dtype");
    } else {
      int failures = 0;
      for (int64_t i = 0; i < want.numel() && failures < 5; ++i) {
        const T a = got.data<T>()[i];
        const T b = want.data<T>()[i];
        if constexpr (!std::is_integral_v<T>) {
          if (std::isnan(static_cast<double>(a)) && std::isnan(static_cast<double>(b))) continue;
        }
        if (std::memcmp(&a, &b, sizeof(T)) != 0) {
          ADD_FAILURE() << what << ": at flat index " << i << " the kernel gives " << static_cast<double>(a)
                        << ", the reference " << static_cast<double>(b);
          ++failures;
        }
      }
      return Status();
    }
  });
  EXPECT_TRUE(status.ok()) << what;
}

std::string Describe(const KernelCase& c) {
  std::string out = c.node.op_type + " (opset " + std::to_string(c.opset) + ") of";
  for (const Tensor& t : c.inputs) out += " " + DescribeTensor(t);
  return out;
}

void ExpectMatchesReference(const KernelCase& c) {
  const KernelFactory factory = Factory(c.node.op_type);
  ASSERT_NE(factory, nullptr) << "no logic kernel for " << c.node.op_type;
  auto out = RunCpuKernel(factory, c);
  ASSERT_TRUE(out.ok()) << Describe(c) << ": " << out.status().ToString();
  const std::vector<Tensor> ref = RunReference(c);
  ASSERT_EQ(ref.size(), 1u) << Describe(c);
  ASSERT_EQ(out->size(), 1u) << Describe(c);
  ExpectSame((*out)[0], ref[0], Describe(c));
}

KernelCase Case(const std::string& op, std::vector<Tensor> inputs, Attrs attrs = {}, int64_t opset = 17) {
  KernelCase c{.node = MakeNode(op, inputs.size(), 1, std::move(attrs)), .opset = opset};
  c.inputs = std::move(inputs);
  return c;
}

void ExpectRefused(const KernelCase& c, const std::string& reason) {
  const KernelFactory factory = Factory(c.node.op_type);
  ASSERT_NE(factory, nullptr);
  auto out = RunCpuKernel(factory, c);
  ASSERT_FALSE(out.ok()) << Describe(c);
  EXPECT_EQ(out.status().code(), StatusCode::kUnsupported) << out.status().ToString();
  EXPECT_NE(out.status().message().find(reason), std::string::npos) << out.status().message();
}

// Pairs of shapes that broadcast: same shape, trailing vector, both sides broadcast, scalars, empty,
// and outputs large enough for the parallel loop (along rows and within one long row).
const std::vector<std::pair<Shape, Shape>> kPairs = {
    {{2, 3, 4}, {2, 3, 4}},    {{2, 3, 4}, {4}},    {{3, 1}, {1, 4}},
    {{2, 1, 4}, {3, 1}},       {{}, {5}},           {{1}, {}},
    {{2, 3, 5, 7}, {3, 1, 7}}, {{2, 0, 3}, {1, 3}}, {{64, 1000}, {1000}},
    {{3, 40000}, {3, 1}},      {{100000}, {}},
};

bool Large(const std::pair<Shape, Shape>& p) { return NumElements(p.first) > 10000 || NumElements(p.second) > 10000; }

// --- Cast and CastLike

TEST(LogicCpuTest, CastBetweenEveryPairOfDtypes) {
  uint64_t seed = 1;
  for (DType from : kAllDTypes) {
    Tensor x = Mixed(from, {7, 37}, seed++);
    if (from == DType::kI64) x.data<int64_t>()[0] = (int64_t{1} << 60) + (int64_t{1} << 52) + 1;  // bf16 tie + 1
    if (from == DType::kU64) x.data<uint64_t>()[0] = (uint64_t{1} << 63) + (uint64_t{1} << 55) + 1;
    for (DType to : kAllDTypes) {
      // opset 13: float → bfloat16 truncates; opset 19 rounds to nearest even.
      for (int64_t opset : {13, 19}) {
        ExpectMatchesReference(Case("Cast", {x}, {{"to", IntAttr(DTypeToOnnx(to))}}, opset));
      }
    }
  }
}

TEST(LogicCpuTest, CastLikeTakesTheSecondInputsDtype) {
  for (DType to : {DType::kF16, DType::kI8, DType::kU64, DType::kBool, DType::kBF16}) {
    ExpectMatchesReference(Case("CastLike", {Mixed(DType::kF32, {3, 50}, 5), Mixed(to, {2}, 6)}, {}, 15));
    ExpectMatchesReference(Case("CastLike", {Mixed(DType::kF64, {3, 50}, 7), Mixed(to, {}, 8)}, {}, 19));
  }
}

TEST(LogicCpuTest, LargeCastRunsInParallel) {
  ExpectMatchesReference(Case("Cast", {Mixed(DType::kF32, {3, 70001}, 9)}, {{"to", IntAttr(10)}}));  // f16
  ExpectMatchesReference(Case("Cast", {Mixed(DType::kF64, {70001}, 10)}, {{"to", IntAttr(6)}}));     // i32
}

TEST(LogicCpuTest, CastWithStringsIsRefused) {
  ExpectRefused(Case("Cast", {Mixed(DType::kF32, {4}, 1)}, {{"to", IntAttr(8)}}), "string");
  ExpectRefused(Case("Cast", {Strings({2}, {"1.5", "2"})}, {{"to", IntAttr(1)}}), "string");
  ExpectRefused(Case("Cast", {Mixed(DType::kF32, {4}, 1)}, {{"to", IntAttr(17)}}, 19), "17");  // float8
}

// --- Where

TEST(LogicCpuTest, WhereBroadcastsAllThreeInputsOfAnyDtype) {
  const std::vector<std::vector<Shape>> shapes = {
      {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}}, {{3, 1}, {1, 4}, {}}, {{2, 1, 4}, {3, 1}, {1, 3, 4}}, {{1}, {5, 6}, {6}},
      {{64, 1024}, {1024}, {64, 1}},     {{0, 3}, {3}, {1}},
  };
  uint64_t seed = 100;
  for (DType dtype : kAllDTypes) {
    for (const auto& s : shapes) {
      ExpectMatchesReference(
          Case("Where", {Mixed(DType::kBool, s[0], seed), Mixed(dtype, s[1], seed + 1), Mixed(dtype, s[2], seed + 2)}));
      seed += 3;
    }
  }
}

// --- comparisons and logic

TEST(LogicCpuTest, ComparisonsOfEveryNumericDtype) {
  uint64_t seed = 200;
  for (const char* op : {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual"}) {
    for (DType dtype : kNumeric) {
      for (const auto& [a, b] : kPairs) {
        if (Large({a, b}) && dtype != DType::kF32 && dtype != DType::kU8) continue;
        // Edge values recur, so some pairs are equal; x against itself makes every pair equal.
        Tensor x = Mixed(dtype, a, seed), y = Mixed(dtype, b, seed + 1);
        ExpectMatchesReference(Case(op, {x, y}));
        ExpectMatchesReference(Case(op, {x, x.Reshaped(a)}));  // all equal, NaN included
        seed += 2;
      }
    }
  }
  ExpectMatchesReference(Case("Equal", {Mixed(DType::kBool, {3, 1}, 1), Mixed(DType::kBool, {1, 4}, 2)}));
}

TEST(LogicCpuTest, ComparisonsSeeNegativeZeroEqualAndNaNUnordered) {
  const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
  const Tensor a = F32({6}, {0.0f, -0.0f, nan, nan, inf, -inf});
  const Tensor b = F32({6}, {-0.0f, 0.0f, nan, 1.0f, inf, inf});
  for (const char* op : {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual"}) {
    ExpectMatchesReference(Case(op, {a, b}));
  }
}

TEST(LogicCpuTest, AndOrXorNot) {
  uint64_t seed = 300;
  for (const char* op : {"And", "Or", "Xor"}) {
    for (const auto& [a, b] : kPairs) {
      ExpectMatchesReference(Case(op, {Mixed(DType::kBool, a, seed), Mixed(DType::kBool, b, seed + 1)}));
      seed += 2;
    }
  }
  ExpectMatchesReference(Case("Not", {Mixed(DType::kBool, {3, 5, 7}, 1)}));
  ExpectMatchesReference(Case("Not", {Mixed(DType::kBool, {70000}, 2)}));
  ExpectMatchesReference(Case("Not", {Mixed(DType::kBool, {}, 3)}));
}

TEST(LogicCpuTest, LegacyBroadcastAttributeBeforeOpset7) {
  Attrs attrs = {{"broadcast", IntAttr(1)}, {"axis", IntAttr(1)}};
  ExpectMatchesReference(Case("Add", {Mixed(DType::kI32, {2, 3, 4, 5}, 1), Mixed(DType::kI32, {3, 4}, 2)}, attrs, 6));
  ExpectMatchesReference(
      Case("And", {Mixed(DType::kBool, {2, 3, 4}, 3), Mixed(DType::kBool, {4}, 4)}, {{"broadcast", IntAttr(1)}}, 1));
  ExpectMatchesReference(Case("Equal", {Mixed(DType::kI64, {2, 3}, 5), Mixed(DType::kI64, {2, 3}, 6)}, {}, 1));
}

// --- BitShift, Mod

TEST(LogicCpuTest, BitShiftBothDirectionsIncludingTheWholeWidth) {
  uint64_t seed = 400;
  for (const char* direction : {"LEFT", "RIGHT"}) {
    for (DType dtype : {DType::kU8, DType::kU16, DType::kU32, DType::kU64}) {
      Tensor shifts = Mixed(dtype, {4, 1, 33}, seed + 1);
      const auto width = static_cast<int64_t>(DTypeSize(dtype) * 8);
      VisitDType(dtype, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          // Shifts 0 … width + 1 (0 and the width itself included), with the mixed ones every 3rd.
          for (int64_t i = 0; i < shifts.numel(); ++i) {
            if (i % 3 != 2) shifts.data<T>()[i] = static_cast<T>(i % (width + 2));
          }
        }
      });
      ExpectMatchesReference(
          Case("BitShift", {Mixed(dtype, {4, 5, 33}, seed), shifts}, {{"direction", StringAttr(direction)}}));
      seed += 2;
    }
  }
  ExpectRefused(
      Case("BitShift", {Mixed(DType::kI32, {4}, 1), Mixed(DType::kI32, {4}, 2)}, {{"direction", StringAttr("LEFT")}}),
      "i32");
}

TEST(LogicCpuTest, ModOfIntegersTakesTheDivisorsSignOrTheDividendsWithFmod) {
  uint64_t seed = 500;
  for (int64_t fmod : {0, 1}) {
    for (DType dtype : kIntegers) {
      for (const auto& [a, b] : kPairs) {
        if (Large({a, b}) && dtype != DType::kI32) continue;
        ExpectMatchesReference(
            Case("Mod", {Mixed(dtype, a, seed), Mixed(dtype, b, seed + 1, true)}, {{"fmod", IntAttr(fmod)}}));
        seed += 2;
      }
    }
  }
  const Tensor x = I64({8}, {7, -7, 7, -7, std::numeric_limits<int64_t>::min(), 5, 0, -3});
  const Tensor y = I64({8}, {3, 3, -3, -3, -1, 7, -4, 5});
  ExpectMatchesReference(Case("Mod", {x, y}));
  ExpectMatchesReference(Case("Mod", {x, y}, {{"fmod", IntAttr(1)}}));
}

TEST(LogicCpuTest, ModOfFloatsWithFmod) {
  uint64_t seed = 600;
  for (DType dtype : kFloats) {
    for (const auto& [a, b] : kPairs) {
      if (Large({a, b}) && dtype != DType::kF32) continue;
      ExpectMatchesReference(Case("Mod", {Mixed(dtype, a, seed), Mixed(dtype, b, seed + 1)}, {{"fmod", IntAttr(1)}}));
      seed += 2;
    }
  }
  ExpectRefused(Case("Mod", {Mixed(DType::kF32, {4}, 1), Mixed(DType::kF32, {4}, 2)}), "fmod=0");
}

// --- Sign, IsNaN, IsInf

TEST(LogicCpuTest, SignKeepsNaNAndSignedZeros) {
  uint64_t seed = 700;
  for (DType dtype : kNumeric) {
    ExpectMatchesReference(Case("Sign", {Mixed(dtype, {5, 41}, seed++)}));
  }
  ExpectMatchesReference(Case("Sign", {Mixed(DType::kF32, {2, 50000}, seed++)}));
  ExpectMatchesReference(Case("Sign", {F32({4}, {-0.0f, 0.0f, std::nanf(""), -1e-45f})}));
}

TEST(LogicCpuTest, IsNaNAndIsInfWithEveryDetectSetting) {
  uint64_t seed = 800;
  for (DType dtype : kFloats) {
    const Tensor x = Mixed(dtype, {6, 29}, seed++);
    ExpectMatchesReference(Case("IsNaN", {x}));
    for (int64_t positive : {0, 1}) {
      for (int64_t negative : {0, 1}) {
        ExpectMatchesReference(
            Case("IsInf", {x}, {{"detect_positive", IntAttr(positive)}, {"detect_negative", IntAttr(negative)}}));
      }
    }
  }
  ExpectRefused(Case("IsNaN", {Mixed(DType::kI32, {4}, 1)}), "i32");
}

// --- Add, Sub, Mul, Div on integers (and the float types besides f32)

TEST(LogicCpuTest, IntegerArithmeticWrapsAndBroadcasts) {
  uint64_t seed = 900;
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    for (DType dtype : kNumeric) {
      for (const auto& [a, b] : kPairs) {
        if (Large({a, b}) && dtype != DType::kI32 && dtype != DType::kU8) continue;
        ExpectMatchesReference(Case(op, {Mixed(dtype, a, seed), Mixed(dtype, b, seed + 1, true)}));
        ExpectMatchesReference(Case(op, {Mixed(dtype, b, seed + 2), Mixed(dtype, a, seed + 3, true)}));
        seed += 4;
      }
    }
  }
}

TEST(LogicCpuTest, IntegerDivisionEdges) {
  const int32_t min = std::numeric_limits<int32_t>::min(), max = std::numeric_limits<int32_t>::max();
  const Tensor x = I32({8}, {min, min, max, -7, 7, -7, 0, min});
  const Tensor y = I32({8}, {-1, 1, -1, 2, -2, -2, 5, min});
  ExpectMatchesReference(Case("Div", {x, y}));
  ExpectMatchesReference(Case("Mul", {x, y}));
  ExpectMatchesReference(Case("Sub", {x, y}));
  ExpectMatchesReference(Case("Add", {x, y}));
}

TEST(LogicCpuTest, IntegerDivisionByZeroFailsAsInTheReference) {
  for (const char* op : {"Div", "Mod"}) {
    const KernelCase c = Case(op, {I32({2, 3}, {1, 2, 3, 4, 5, 6}), I32({3}, {1, 0, 2})});
    EXPECT_FALSE(RunNodeOnReference(c.node, c.opset, c.inputs).ok());
    auto out = RunCpuKernel(Factory(op), c);
    ASSERT_FALSE(out.ok()) << op;
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << out.status().ToString();
    EXPECT_NE(out.status().message().find("integer division by zero"), std::string::npos) << out.status().message();
  }
  // A zero divisor in an empty output is never used: no error, as in the reference.
  ExpectMatchesReference(Case("Div", {I32({0, 3}, {}), I32({3}, {1, 0, 2})}));
}

// Pow of integers by integers (exact, wrapping, negative exponents) and of f32/f64 bases by exponents
// of every numeric dtype, broadcasting; the output has the base's dtype.
TEST(LogicCpuTest, PowOfMixedDtypesMatchesTheReference) {
  uint64_t seed = 1300;
  const std::vector<std::pair<Shape, Shape>> pairs = {{{2, 3, 4}, {4}}, {{3, 1}, {1, 4}}, {{}, {5}}, {{64, 1000}, {1}}};
  for (const auto& [a, b] : pairs) {
    for (DType base : {DType::kI32, DType::kI64, DType::kI8, DType::kU8}) {
      for (DType exponent : {DType::kI32, DType::kI64, DType::kU8}) {
        // Small exponents (some negative), bases around zero: the results stay readable, and wrap too.
        Tensor x = Mixed(base, a, ++seed), e = Mixed(exponent, b, ++seed);
        VisitDType(exponent, [&](auto tag) {
          using E = decltype(tag);
          if constexpr (std::is_integral_v<E> && !std::is_same_v<E, bool>) {
            for (int64_t i = 0; i < e.numel(); ++i) e.data<E>()[i] = static_cast<E>(static_cast<int64_t>(i % 7) - 2);
          }
        });
        VisitDType(base, [&](auto tag) {
          using A = decltype(tag);
          if constexpr (std::is_integral_v<A> && !std::is_same_v<A, bool>) {
            for (int64_t i = 0; i < x.numel(); ++i) {
              if (x.data<A>()[i] == 0) x.data<A>()[i] = 3;  // no 0 to a negative power here
            }
          }
        });
        ExpectMatchesReference(Case("Pow", {x, e}));
      }
    }
    for (DType base : {DType::kF32, DType::kF64, DType::kI32, DType::kI64, DType::kU8}) {
      for (DType exponent : {DType::kI32, DType::kI64, DType::kU32, DType::kF64, DType::kF32}) {
        if (IsIntegerDType(base) && IsIntegerDType(exponent)) continue;  // above
        if (base == exponent) continue;                                  // the f32 kernels' case, and f64 by f64 below
        ExpectMatchesReference(Case("Pow", {Mixed(base, a, ++seed), Mixed(exponent, b, ++seed)}));
      }
    }
  }
  ExpectMatchesReference(Case("Pow", {Mixed(DType::kF64, {3, 5}, 1), Mixed(DType::kF64, {5}, 2)}));
  // 2^62, 3^40 (wraps), (−1)^odd, 1^−5.
  ExpectMatchesReference(
      Case("Pow", {MakeTensor<int64_t>({4}, {2, 3, -1, 1}), MakeTensor<int64_t>({4}, {62, 40, -3, -5})}));
}

TEST(LogicCpuTest, IntegerZeroToANegativePowerFailsAsInTheReference) {
  const KernelCase c = Case("Pow", {I32({2, 2}, {1, 0, 2, 3}), I32({2}, {1, -1})});
  EXPECT_FALSE(RunNodeOnReference(c.node, c.opset, c.inputs).ok());
  auto out = RunCpuKernel(Factory("Pow"), c);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("negative power"), std::string::npos) << out.status().message();
  // 0 to a positive power, and a negative power of another base: fine.
  ExpectMatchesReference(Case("Pow", {I32({2, 2}, {1, 0, 2, 3}), I32({2}, {-1, 2})}));
  ExpectRefused(Case("Pow", {I32({2}, {1, 2}), Mixed(DType::kF16, {2}, 3)}), "Pow of i32 by f16");
}

TEST(LogicCpuTest, FloatDivisionByZeroGivesInfinities) {
  ExpectMatchesReference(Case("Div", {Mixed(DType::kF64, {4, 9}, 1), Tensor(DType::kF64, {9})}));
  ExpectMatchesReference(Case("Div", {Mixed(DType::kF16, {4, 9}, 2), Mixed(DType::kF16, {9}, 3)}));
}

// --- Max, Min, Sum, Mean of any number of inputs

TEST(LogicCpuTest, VariadicOpsOfThreeAndMoreBroadcastInputs) {
  const std::vector<std::vector<Shape>> shapes = {
      {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
      {{2, 3, 4}, {3, 1}, {1, 4}, {}},
      {{5}, {4, 1}, {1}, {3, 1, 1}, {5}},
      {{64, 700}, {700}, {64, 1}},
      {{0, 4}, {4}, {1}},
      {{7}},
  };
  uint64_t seed = 1000;
  for (const char* op : {"Max", "Min", "Sum", "Mean"}) {
    const bool floats_only = std::string(op) == "Sum" || std::string(op) == "Mean";
    for (DType dtype : floats_only ? kFloats : kNumeric) {
      for (const auto& s : shapes) {
        std::vector<Tensor> inputs;
        for (const Shape& shape : s) inputs.push_back(Mixed(dtype, shape, seed++));
        ExpectMatchesReference(Case(op, inputs));
      }
    }
  }
}

TEST(LogicCpuTest, VariadicNaNWinsAndSumsStartFromPositiveZero) {
  const float nan = std::nanf("");
  const Tensor a = F32({5}, {nan, 1.0f, -0.0f, 0.0f, -0.0f});
  const Tensor b = F32({5}, {2.0f, nan, 0.0f, -0.0f, -0.0f});
  const Tensor c = F32({5}, {3.0f, 5.0f, -0.0f, -0.0f, -0.0f});
  for (const char* op : {"Max", "Min", "Sum", "Mean"}) ExpectMatchesReference(Case(op, {a, b, c}));
}

TEST(LogicCpuTest, SumOfIntegersIsRefused) {
  ExpectRefused(Case("Sum", {Mixed(DType::kI32, {4}, 1), Mixed(DType::kI32, {4}, 2), Mixed(DType::kI32, {4}, 3)}),
                "i32");
}

// --- shapes known only at run time

TEST(LogicCpuTest, ShapesKnownOnlyAtRunTimeArePlannedAtTheRun) {
  const KernelCase c =
      Case("Where", {Mixed(DType::kBool, {4, 1, 5}, 1), Mixed(DType::kI64, {3, 1}, 2), Mixed(DType::kI64, {5}, 3)});
  std::vector<ValueInfo> infos = {{DType::kBool, {-1, 1, 5}}, {DType::kI64, {-1, -1}}, {DType::kI64, {-1}}};
  std::vector<const ValueInfo*> ptrs = {&infos[0], &infos[1], &infos[2]};
  auto kernel = Factory("Where")(KernelInit{c.node, ptrs, c.opset});
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  Tensor out(DType::kI64, {4, 3, 5});
  KernelContext ctx(c.node, c.opset, {&c.inputs[0], &c.inputs[1], &c.inputs[2]}, {&out});
  ASSERT_TRUE((*kernel)->Run(ctx).ok());
  ExpectSame(out, RunReference(c)[0], "Where with run-time shapes");
}

}  // namespace
}  // namespace chipfit::testing
