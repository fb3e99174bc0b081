// The CPU device's own math kernels (math_cpu.cpp) against the reference: Sin … Atanh, PRelu with
// every kind of slope broadcast, Shrink, ReduceLogSum/ReduceLogSumExp (axes as attribute and as input,
// keepdims, noop_with_empty_axes, reduced dims that are not adjacent, one split reduction), LRN,
// MeanVarianceNormalization and Hardmax; refusals with their reasons.
//
// Tolerances: the reference computes in double and rounds once. The unary functions are libm's float
// ones (within 1–2 ulp, ~1.2e-7 relative), so each value is held to 1e-5 of itself. The other ops
// are exact (PRelu, Shrink, Hardmax: one rounding each) or sum in double or over a handful of floats
// (log-sums, MVN, LRN) and are held to 1e-5 of the largest reference value, which is ~80 ulp: room
// for the float exp of a log-sum-exp term and LRN's sqrt-based power, nothing for a wrong formula.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/reference/conv_util.h"
#include "devices/cpu/cpu_kernels.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"
#include "tests/devices/cpu/kernel_layout_util.h"

namespace chipfit::testing {
namespace {

// The table's one fp32 implementation for an op (math_cpu.cpp registers one each).
KernelFactory MathFactory(const std::string& op) {
  const auto& impls = CpuKernels().Find(op, "", DeviceKind::kCpu, Precision::kFp32);
  EXPECT_EQ(impls.size(), 1u) << op;
  return impls.empty() ? nullptr : impls[0].create;
}

// max over values of |a − b| / max(|b|, tiny); NaN must meet NaN.
double MaxElementRelError(const Tensor& a, const Tensor& b) {
  double worst = 0;
  for (int64_t i = 0; i < b.numel(); ++i) {
    const double x = a.GetAsDouble(i), r = b.GetAsDouble(i);
    if (std::isnan(r) || std::isnan(x)) {
      if (std::isnan(r) != std::isnan(x)) return std::numeric_limits<double>::infinity();
      continue;
    }
    if (std::isinf(r) || std::isinf(x)) {
      if (x != r) return std::numeric_limits<double>::infinity();
      continue;
    }
    worst = std::max(worst, std::fabs(x - r) / std::max(std::fabs(r), 1e-30));
  }
  return worst;
}

// Runs `c` on the op's table kernel; the output has the reference's shape and is within `tol` of it
// (relative to the largest reference value, or per value when `per_value`).
void ExpectMatches(const KernelCase& c, double tol, bool per_value = false) {
  auto out = RunCpuKernel(MathFactory(c.node.op_type), c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  ASSERT_EQ(ref.size(), 1u);
  ASSERT_EQ((*out)[0].shape(), ref[0].shape());
  if (per_value) {
    EXPECT_LE(MaxElementRelError((*out)[0], ref[0]), tol);
  } else {
    EXPECT_LE(MaxRelError((*out)[0], ref[0]), tol);
  }
}

// ---- unary math ------------------------------------------------------------------------------------

struct UnaryRange {
  const char* op;
  float lo, hi;  // inside the domain (NaN outside is checked separately)
};

const std::vector<UnaryRange> kUnary = {
    {"Sin", -20.0f, 20.0f},   {"Cos", -20.0f, 20.0f},  {"Tan", -1.5f, 1.5f},       {"Asin", -1.0f, 1.0f},
    {"Acos", -1.0f, 1.0f},    {"Atan", -50.0f, 50.0f}, {"Sinh", -10.0f, 10.0f},    {"Cosh", -10.0f, 10.0f},
    {"Asinh", -50.0f, 50.0f}, {"Acosh", 1.0f, 50.0f},  {"Atanh", -0.999f, 0.999f},
};

TEST(MathCpuTest, UnaryMathMatchesReferencePerValue) {
  uint64_t seed = 100;
  // Below and above the size where the loop goes parallel.
  for (const Shape& shape : std::vector<Shape>{{7}, {2, 3, 5}, {3, 64, 33}}) {
    for (const UnaryRange& u : kUnary) {
      KernelCase c{.node = MakeNode(u.op, 1), .opset = 13};
      c.inputs = {RandomF32(shape, ++seed, u.lo, u.hi)};
      SCOPED_TRACE(std::string(u.op) + " " + ShapeToString(shape));
      ExpectMatches(c, 1e-5, true);
    }
  }
}

TEST(MathCpuTest, UnaryMathEdgeValues) {
  const std::vector<float> values = {0.0f,
                                     -0.0f,
                                     1.0f,
                                     -1.0f,
                                     2.0f,
                                     -2.0f,
                                     0.5f,
                                     100.0f,
                                     -100.0f,
                                     1e-6f,
                                     -1e-6f,
                                     89.0f,
                                     -89.0f,
                                     95.0f,
                                     std::numeric_limits<float>::infinity(),
                                     -std::numeric_limits<float>::infinity(),
                                     std::nanf("")};
  for (const UnaryRange& u : kUnary) {
    KernelCase c{.node = MakeNode(u.op, 1), .opset = 13};
    c.inputs = {MakeTensor<float>({static_cast<int64_t>(values.size())}, values)};
    SCOPED_TRACE(u.op);
    // Outside the domain both give NaN; overflow both give the same infinity.
    ExpectMatches(c, 1e-5, true);
  }
}

// ---- PRelu -----------------------------------------------------------------------------------------

struct PReluSpec {
  Shape x, slope;
  int64_t opset = 16;
};

TEST(MathCpuTest, PReluBroadcastsSlopesAsOnnx) {
  const std::vector<PReluSpec> specs = {
      {{2, 3, 4, 5}, {1}},            // one slope
      {{2, 3, 4, 5}, {}},             // a scalar slope
      {{2, 3, 4, 5}, {3, 1, 1}},      // per channel (trailing-aligned)
      {{2, 3, 4, 5}, {5}},            // along the last dim
      {{2, 3, 4, 5}, {4, 5}},         // per spatial position
      {{2, 3, 4, 5}, {2, 3, 4, 5}},   // one slope per value
      {{2, 3, 4, 5}, {1, 3, 1, 5}},   // varying, broadcast, varying
      {{2, 3, 4, 5}, {2, 1, 4, 1}},   // broadcast innermost
      {{1, 64, 40, 40}, {64, 1, 1}},  // parallel
      {{6, 7}, {7}},
      {{3, 1, 5}, {1, 5}},     // dims of 1 in X
      {{2, 3, 4, 5}, {3}, 6},  // before opset 7: a channel count of slopes applies along axis 1
  };
  uint64_t seed = 200;
  for (const PReluSpec& s : specs) {
    for (bool constant : {true, false}) {
      KernelCase c{.node = MakeNode("PRelu", 2), .opset = s.opset};
      c.inputs = {RandomF32(s.x, ++seed, -2.0f, 2.0f), RandomF32(s.slope, ++seed, -1.0f, 1.0f)};
      c.constant = {false, constant};
      SCOPED_TRACE(ShapeToString(s.x) + " slope " + ShapeToString(s.slope) + " opset " + std::to_string(s.opset) +
                   (constant ? " constant" : " computed"));
      ExpectMatches(c, 0.0);
    }
  }
}

TEST(MathCpuTest, PReluRefusesSlopesThatDoNotBroadcastToX) {
  KernelCase c{.node = MakeNode("PRelu", 2)};
  c.inputs = {RandomF32({2, 3, 4}, 1), RandomF32({2, 1}, 2)};
  EXPECT_NE(RefusalOf(MathFactory("PRelu"), c).find("does not broadcast"), std::string::npos);
  c.inputs = {RandomF32({3, 4}, 1), RandomF32({2, 3, 4}, 2)};
  EXPECT_NE(RefusalOf(MathFactory("PRelu"), c).find("higher rank"), std::string::npos);
}

// ---- Shrink ----------------------------------------------------------------------------------------

// Values −9 … 9 (as 0 … 18 for unsigned types) in any numeric dtype.
Tensor Ramp(DType dtype, const Shape& shape, int64_t shift) {
  Tensor t(dtype, shape);
  const bool is_unsigned = dtype == DType::kU8;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t v = (i * 7 + shift) % 19 - (is_unsigned ? 0 : 9);
    const auto status = VisitDType(dtype, [&](auto tag) -> Status {
      using T = decltype(tag);
      if constexpr (std::is_arithmetic_v<T>) t.data<T>()[i] = static_cast<T>(v);
      return Status();
    });
    EXPECT_TRUE(status.ok());
  }
  return t;
}

// Clip with bounds computed at run time: the eltwise kernels refuse it, cpu:clip reads them per run.
TEST(MathCpuTest, ClipWithBoundsGivenAtRunTime) {
  KernelFactory clip = nullptr;
  for (const auto& impl : CpuKernels().Find("Clip", "", DeviceKind::kCpu, Precision::kFp32)) {
    if (std::string(impl.name) == "cpu:clip") clip = impl.create;
  }
  ASSERT_NE(clip, nullptr);
  for (DType dtype : {DType::kF32, DType::kI64, DType::kU8, DType::kF64}) {
    KernelCase c{.node = MakeNode("Clip", 3, 1), .opset = 13};
    c.inputs = {Ramp(dtype, {3, 4000}, 0), Ramp(dtype, {}, 5), Ramp(dtype, {}, 15)};  // bounds −4 (or 5) and 6
    c.constant = {false, false, false};
    auto out = RunCpuKernel(clip, c);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(MaxRelError((*out)[0], RunReference(c)[0]), 0.0) << DTypeName(dtype);
    c.inputs[2] = Tensor();  // no max
    c.node.inputs[2] = "";
    out = RunCpuKernel(clip, c);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(MaxRelError((*out)[0], RunReference(c)[0]), 0.0) << DTypeName(dtype);
  }
  KernelCase c{.node = MakeNode("Clip", 3, 1), .opset = 13};
  c.inputs = {F32({4}, {-2.0f, NAN, 0.5f, 9.0f}), F32({}, {1.0f}), F32({}, {-1.0f})};  // min > max, NaN
  auto out = RunCpuKernel(clip, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(std::isnan((*out)[0].data<float>()[i]), std::isnan(ref[0].data<float>()[i]));
    if (!std::isnan(ref[0].data<float>()[i])) {
      EXPECT_EQ((*out)[0].data<float>()[i], ref[0].data<float>()[i]);
    }
  }
}

// Einsum as a permutation, a sum within one operand or a batched product, in f32 and f64, against the
// reference; the other forms are refused with the reason.
TEST(MathCpuTest, EinsumPermutationsAndBatchedProducts) {
  KernelFactory einsum = nullptr;
  for (const auto& impl : CpuKernels().Find("Einsum", "", DeviceKind::kCpu, Precision::kFp32)) {
    if (std::string(impl.name) == "cpu:einsum") einsum = impl.create;
  }
  ASSERT_NE(einsum, nullptr);
  struct Spec {
    std::string equation;
    std::vector<Shape> shapes;
  };
  const std::vector<Spec> specs = {
      {"bhid,bhjd->bhij", {{2, 3, 17, 8}, {2, 3, 13, 8}}},   // attention scores
      {"bhij,bhjd->bhid", {{1, 4, 9, 11}, {1, 4, 11, 16}}},  // attention output
      {"bij,bjk->bik", {{3, 5, 7}, {3, 7, 4}}},
      {"ij,jk", {{6, 5}, {5, 9}}},  // implicit output "ik"
      {"i,i", {{40}, {40}}},        // inner product: a scalar
      {"i,j->ij", {{5}, {7}}},      // outer product
      {"...ij,...jk->...ik", {{2, 2, 3, 4}, {2, 2, 4, 5}}},
      {"ijk->kji", {{3, 4, 5}}},
      {"bik,bkj->bji", {{2, 64, 48}, {2, 48, 80}}},  // large: parallel, permuted output
      {"ij->i", {{4, 5}}},                           // sums within one operand
      {"ijk->", {{3, 4, 5}}},
      {"ijk->ki", {{30, 40, 60}}},
  };
  uint64_t seed = 500;
  for (const Spec& spec : specs) {
    for (DType dtype : {DType::kF32, DType::kF64}) {
      KernelCase c{.node = MakeNode("Einsum", spec.shapes.size(), 1, {{"equation", StringAttr(spec.equation)}}),
                   .opset = 12};
      for (const Shape& shape : spec.shapes) c.inputs.push_back(SeededTensor(dtype, shape, ++seed));
      SCOPED_TRACE(spec.equation + " " + std::string(DTypeName(dtype)));
      auto out = RunCpuKernel(einsum, c);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const auto ref = RunReference(c);
      ASSERT_EQ((*out)[0].shape(), ref[0].shape());
      EXPECT_LE(MaxRelError((*out)[0], ref[0]), dtype == DType::kF32 ? 1e-5 : 1e-12);
    }
  }
  for (const Spec& refused : std::vector<Spec>{{"ii->i", {{4, 4}}},
                                               {"ij,j->j", {{4, 5}, {5}}},
                                               {"ij,jk->ik", {{4, 1}, {3, 5}}},
                                               {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}}}) {
    KernelCase c{.node = MakeNode("Einsum", refused.shapes.size(), 1, {{"equation", StringAttr(refused.equation)}}),
                 .opset = 12};
    for (const Shape& shape : refused.shapes) c.inputs.push_back(RandomF32(shape, ++seed));
    EXPECT_NE(RefusalOf(einsum, c).find("not a permutation, a sum within one operand or a batched product"),
              std::string::npos)
        << refused.equation;
  }
  KernelCase mixed{.node = MakeNode("Einsum", 2, 1, {{"equation", StringAttr("ij,jk->ik")}}), .opset = 12};
  mixed.inputs = {SeededTensor(DType::kF32, {2, 3}, 1), SeededTensor(DType::kF16, {3, 4}, 2)};
  EXPECT_NE(RefusalOf(einsum, mixed).find("f16 inputs"), std::string::npos);
}

TEST(MathCpuTest, ShrinkMatchesReference) {
  const std::vector<std::pair<float, float>> params = {{0.5f, 0.0f}, {1.5f, 1.5f}, {0.3f, -0.2f}, {0.0f, 0.7f}};
  uint64_t seed = 300;
  for (const auto& [lambd, bias] : params) {
    for (const Shape& shape : std::vector<Shape>{{5}, {2, 7, 9}, {4, 100, 100}}) {
      KernelCase c{.node = MakeNode("Shrink", 1, 1, {{"lambd", FloatAttr(lambd)}, {"bias", FloatAttr(bias)}})};
      c.inputs = {RandomF32(shape, ++seed, -3.0f, 3.0f)};
      SCOPED_TRACE(ShapeToString(shape) + " lambd " + std::to_string(lambd) + " bias " + std::to_string(bias));
      ExpectMatches(c, 1e-7);
    }
  }
  // Defaults (lambd 0.5, bias 0), values on the thresholds, NaN.
  KernelCase c{.node = MakeNode("Shrink", 1)};
  c.inputs = {MakeTensor<float>({6}, {-0.5f, 0.5f, -0.50001f, 0.50001f, std::nanf(""), 0.0f})};
  ExpectMatches(c, 1e-7);
}

// ---- ReduceLogSum / ReduceLogSumExp ------------------------------------------------------------------

struct LogReduceSpec {
  Shape x;
  std::vector<int64_t> axes;  // empty: all (or none with noop)
  int64_t keepdims = 1;
  bool noop = false;
};

const std::vector<LogReduceSpec> kLogSpecs = {
    {{2, 16, 9, 11}, {2, 3}},   // trailing run
    {{2, 16, 9, 11}, {1}, 0},   // middle: lanes of kept groups
    {{2, 16, 9, 11}, {0, 2}},   // not adjacent, innermost kept
    {{3, 5, 7, 9}, {0, 3}, 0},  // not adjacent, innermost reduced
    {{32, 99}, {0}},            // strided
    {{5, 7, 3}, {}, 0},         // everything
    {{7, 1, 5}, {1}},           // a dim of 1
    {{4, 6, 5}, {}, 1, true},   // noop: log (exp) of each value
    {{3, 1, 70000}, {-1}, 0},   // few groups, long rows: split and merged
    {{80000, 3}, {0}},          // few lane groups, many rows: split and merged
    {{1000, 40}, {1}},          // many short groups, parallel
};

KernelCase MakeLogReduce(const std::string& op, const LogReduceSpec& s, uint64_t seed, bool axes_attribute) {
  std::map<std::string, Attribute> attrs{{"keepdims", IntAttr(s.keepdims)}};
  if (s.noop) attrs["noop_with_empty_axes"] = IntAttr(1);
  const bool with_input = !axes_attribute && !s.axes.empty();
  if (axes_attribute && !s.axes.empty()) attrs["axes"] = IntsAttr(s.axes);
  KernelCase c{.node = MakeNode(op, with_input ? 2 : 1, 1, attrs), .opset = axes_attribute ? 13 : 18};
  // LogSum needs positive sums; LogSumExp gets values far apart so the shift matters.
  const bool exp = op == "ReduceLogSumExp";
  c.inputs = {RandomF32(s.x, seed, exp ? -30.0f : 0.01f, exp ? 30.0f : 2.0f)};
  if (with_input) c.inputs.push_back(MakeTensor<int64_t>({static_cast<int64_t>(s.axes.size())}, s.axes));
  c.constant = {false, true};
  return c;
}

TEST(MathCpuTest, LogReductionsMatchReference) {
  uint64_t seed = 400;
  for (const std::string op : {"ReduceLogSum", "ReduceLogSumExp"}) {
    for (const LogReduceSpec& s : kLogSpecs) {
      for (bool attribute : {false, true}) {
        if (attribute && s.noop) continue;  // noop_with_empty_axes came with the axes input
        SCOPED_TRACE(op + " " + ShapeToString(s.x) + " axes " + JoinInts(s.axes) + " keepdims " +
                     std::to_string(s.keepdims) + (s.noop ? " noop" : "") + (attribute ? " attribute" : " input"));
        KernelCase c = MakeLogReduce(op, s, ++seed, attribute);
        ExpectMatches(c, 1e-5);
        // f64: the same values, summed in double as the reference does.
        Tensor x64(DType::kF64, c.inputs[0].shape());
        for (int64_t i = 0; i < x64.numel(); ++i) x64.data<double>()[i] = c.inputs[0].data<float>()[i];
        c.inputs[0] = x64;
        ExpectMatches(c, 1e-12);
      }
    }
  }
}

TEST(MathCpuTest, LogSumExpOfInfinitiesAndEmptyAxesInput) {
  const float inf = std::numeric_limits<float>::infinity();
  // Rows: ordinary, all −inf (log 0), one +inf, a NaN.
  KernelCase c{.node = MakeNode("ReduceLogSumExp", 2, 1, {{"keepdims", IntAttr(0)}}), .opset = 18};
  c.inputs = {MakeTensor<float>({4, 3}, {1, 2, 3, -inf, -inf, -inf, 1, inf, 2, 1, std::nanf(""), 2}),
              MakeTensor<int64_t>({1}, {1})};
  c.constant = {false, true};
  auto out = RunCpuKernel(MathFactory("ReduceLogSumExp"), c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_LE(MaxElementRelError((*out)[0], RunReference(c)[0]), 1e-6);

  // An empty axes input reduces everything, unless noop_with_empty_axes.
  for (int64_t noop : {0, 1}) {
    KernelCase e{.node = MakeNode("ReduceLogSum", 2, 1, {{"noop_with_empty_axes", IntAttr(noop)}}), .opset = 18};
    e.inputs = {RandomF32({3, 4}, 5, 0.1f, 1.0f), Tensor(DType::kI64, Shape{0})};
    e.constant = {false, true};
    SCOPED_TRACE("noop " + std::to_string(noop));
    ExpectMatches(e, 1e-5);
  }
}

TEST(MathCpuTest, LogReductionsRefuseAxesComputedAtRunTime) {
  KernelCase c = MakeLogReduce("ReduceLogSum", kLogSpecs[0], 1, false);
  c.constant = {false, false};
  EXPECT_NE(RefusalOf(MathFactory("ReduceLogSum"), c).find("axes computed at run time"), std::string::npos);
}

// ---- MeanVarianceNormalization -----------------------------------------------------------------------

TEST(MathCpuTest, MeanVarianceNormalizationMatchesReference) {
  struct Spec {
    Shape x;
    std::vector<int64_t> axes;  // empty: the default {0, 2, 3}
  };
  const std::vector<Spec> specs = {
      {{2, 3, 5, 7}, {}},     {{3, 8, 4, 4}, {2, 3}}, {{2, 16, 9, 11}, {1}}, {{4, 6, 5}, {-1}},
      {{4, 6, 5}, {0, 1, 2}}, {{2, 64, 20, 20}, {}},  {{1, 1, 90000}, {2}},  {{5, 3, 1, 2}, {1, 3}},
  };
  uint64_t seed = 500;
  for (const Spec& s : specs) {
    std::map<std::string, Attribute> attrs;
    if (!s.axes.empty()) attrs["axes"] = IntsAttr(s.axes);
    KernelCase c{.node = MakeNode("MeanVarianceNormalization", 1, 1, attrs), .opset = 13};
    // An offset mean: the subtraction must not lose the small spread.
    c.inputs = {RandomF32(s.x, ++seed, 90.0f, 110.0f)};
    SCOPED_TRACE(ShapeToString(s.x) + " axes " + JoinInts(s.axes));
    ExpectMatches(c, 1e-5);
  }
}

// ---- Hardmax ---------------------------------------------------------------------------------------

TEST(MathCpuTest, HardmaxMatchesReference) {
  struct Spec {
    Shape x;
    int64_t axis;
    int64_t opset;
  };
  const std::vector<Spec> specs = {
      {{3, 4, 5}, -1, 13}, {{3, 4, 5}, 1, 13}, {{3, 4, 5}, 0, 13}, {{2, 300, 7}, 2, 13},  {{2, 3, 600}, 1, 13},
      {{3, 4, 5}, 1, 11},  {{3, 4, 5}, 0, 11}, {{6}, 0, 13},       {{64, 512, 3}, 1, 13},
  };
  uint64_t seed = 600;
  for (const Spec& s : specs) {
    KernelCase c{.node = MakeNode("Hardmax", 1, 1, {{"axis", IntAttr(s.axis)}}), .opset = s.opset};
    c.inputs = {RandomF32(s.x, ++seed)};
    SCOPED_TRACE(ShapeToString(s.x) + " axis " + std::to_string(s.axis) + " opset " + std::to_string(s.opset));
    ExpectMatches(c, 0.0);
  }
  // Ties: the first maximum wins; a NaN never does.
  KernelCase c{.node = MakeNode("Hardmax", 1), .opset = 13};
  c.inputs = {MakeTensor<float>({3, 4}, {1, 3, 3, 2, std::nanf(""), 1, 2, 0, 5, 5, 5, 5})};
  ExpectMatches(c, 0.0);
  c.node.attributes["axis"] = IntAttr(0);
  ExpectMatches(c, 0.0);
}

// ---- LRN -------------------------------------------------------------------------------------------

TEST(MathCpuTest, LrnMatchesReference) {
  struct Spec {
    Shape x;
    int64_t size;
    float alpha, beta, bias;
  };
  const std::vector<Spec> specs = {
      {{2, 7, 5, 6}, 3, 1e-4f, 0.75f, 1.0f},    {{1, 16, 9, 9}, 5, 0.02f, 0.75f, 2.0f},
      {{1, 16, 9, 9}, 4, 0.02f, 0.75f, 1.0f},  // even: one more channel after than before
      {{2, 5, 3, 3}, 2, 0.5f, 0.6f, 1.5f},      {{1, 3, 4, 4}, 7, 0.1f, 1.0f, 1.0f},
      {{3, 10}, 3, 0.3f, 0.75f, 1.0f},          {{1, 8, 2, 3, 4}, 3, 0.1f, 0.5f, 1.0f},
      {{1, 32, 56, 56}, 5, 1e-4f, 0.75f, 1.0f},
  };
  uint64_t seed = 700;
  for (const Spec& s : specs) {
    KernelCase c{.node = MakeNode("LRN", 1, 1,
                                  {{"size", IntAttr(s.size)},
                                   {"alpha", FloatAttr(s.alpha)},
                                   {"beta", FloatAttr(s.beta)},
                                   {"bias", FloatAttr(s.bias)}}),
                 .opset = 13};
    c.inputs = {RandomF32(s.x, ++seed, -3.0f, 3.0f)};
    SCOPED_TRACE(ShapeToString(s.x) + " size " + std::to_string(s.size) + " beta " + std::to_string(s.beta));
    ExpectMatches(c, 1e-5);
  }
}

// ---- table entries ---------------------------------------------------------------------------------

// Every op has its own kernel on plain tensors, and refuses other dtypes with a reason.
TEST(MathCpuTest, EveryOpRefusesOtherDTypes) {
  for (const char* op : {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
                         "Shrink", "ReduceLogSum", "ReduceLogSumExp", "MeanVarianceNormalization", "Hardmax"}) {
    KernelCase c{.node = MakeNode(op, 1), .opset = 13};
    c.inputs = {Tensor(DType::kF16, Shape{2, 3, 4, 5})};
    SCOPED_TRACE(op);
    EXPECT_NE(RefusalOf(MathFactory(op), c).find("f16 input"), std::string::npos);
  }
}

}  // namespace
}  // namespace chipfit::testing
