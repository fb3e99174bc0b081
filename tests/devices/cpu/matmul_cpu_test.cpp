// oneDNN MatMul and Gemm against the reference: batch broadcasting, 1-D operands, constant and run-time
// B, transA/transB, alpha/beta, every shape of C; fp32 within 1e-4 of max|ref|, int8 by SQNR.
#include <gtest/gtest.h>

#include "devices/cpu/ops/cpu_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"

namespace chipfit::testing {
namespace {

struct MatMulSpec {
  Shape a, b;
  bool b_constant = true;
};

const std::vector<MatMulSpec> kMatMuls = {
    {{5, 7}, {7, 3}},
    {{2, 3, 5, 8}, {8, 6}},
    {{2, 1, 5, 8}, {1, 3, 8, 6}, false},
    {{4, 8}, {3, 8, 5}},
    {{8}, {8, 6}},
    {{3, 5, 8}, {8}, false},
    {{1, 9}, {9, 1}},
    {{2, 17, 33}, {2, 33, 19}, false},
    {{3, 4, 64}, {64, 40}},
    // Leading dims of A folded into M (B without batch dims): attention's [L, 1, E] x [E, 3E], a B
    // with batch dims of 1, a run-time B, and a bias-free 1-D B.
    {{7, 1, 16}, {16, 48}},
    {{1, 4, 8}, {1, 8, 6}},
    {{2, 3, 5, 8}, {1, 1, 8, 6}, false},
    {{2, 6, 12}, {12}},
};

KernelCase MakeMatMul(const MatMulSpec& s, uint64_t seed) {
  KernelCase c{.node = MakeNode("MatMul", 2)};
  c.inputs = {RandomF32(s.a, seed), RandomF32(s.b, seed + 1)};
  c.constant = {false, s.b_constant};
  return c;
}

struct GemmSpec {
  int64_t m, k, n;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 1.0f;
  Shape c{};  // {} = no C; {0} = a scalar C
  bool b_constant = true, c_constant = true;
};

const std::vector<GemmSpec> kGemms = {
    {.m = 6, .k = 10, .n = 7, .c = {7}},                      // inner product with a bias
    {.m = 6, .k = 10, .n = 7, .trans_b = true, .c = {1, 7}},  // inner product, ONNX Linear layout
    {.m = 5, .k = 9, .n = 11},                                // inner product, no C
    {.m = 6, .k = 10, .n = 7, .alpha = 0.5f, .beta = 2.0f, .c = {6, 7}},
    {.m = 3, .k = 12, .n = 4, .trans_a = true, .c = {3, 1}, .c_constant = false},
    {.m = 8, .k = 16, .n = 5, .trans_a = true, .trans_b = true, .alpha = 2.0f, .beta = 0.25f, .c = {5}},
    {.m = 4, .k = 6, .n = 9, .trans_b = true, .c = {0}, .b_constant = false},
    {.m = 7, .k = 33, .n = 13, .beta = 0.0f, .c = {7, 13}},
    {.m = 2, .k = 64, .n = 32, .alpha = 1.5f, .c = {32}, .c_constant = false},
};

KernelCase MakeGemm(const GemmSpec& s, uint64_t seed) {
  std::map<std::string, Attribute> attrs{{"transA", IntAttr(s.trans_a ? 1 : 0)},
                                         {"transB", IntAttr(s.trans_b ? 1 : 0)},
                                         {"alpha", FloatAttr(s.alpha)},
                                         {"beta", FloatAttr(s.beta)}};
  KernelCase c{.node = MakeNode("Gemm", s.c.empty() ? 2 : 3, 1, attrs)};
  c.inputs.push_back(RandomF32(s.trans_a ? Shape{s.k, s.m} : Shape{s.m, s.k}, seed));
  c.inputs.push_back(RandomF32(s.trans_b ? Shape{s.n, s.k} : Shape{s.k, s.n}, seed + 1));
  if (!s.c.empty()) c.inputs.push_back(RandomF32(s.c == Shape{0} ? Shape{} : s.c, seed + 2));
  c.constant = {false, s.b_constant, s.c_constant};
  return c;
}

std::string Describe(const GemmSpec& s) {
  return "M" + std::to_string(s.m) + " K" + std::to_string(s.k) + " N" + std::to_string(s.n) +
         (s.trans_a ? " transA" : "") + (s.trans_b ? " transB" : "") + " alpha " + std::to_string(s.alpha) + " beta " +
         std::to_string(s.beta) + " C " + ShapeToString(s.c) + (s.b_constant ? "" : " B at run time") +
         (s.c_constant ? "" : " C at run time");
}

void ExpectClose(KernelFactory factory, const KernelCase& c) {
  auto out = RunCpuKernel(factory, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  ASSERT_EQ(ref.size(), 1u);
  EXPECT_EQ((*out)[0].shape(), ref[0].shape());
  EXPECT_LE(MaxRelError((*out)[0], ref[0]), 1e-4);
}

TEST(MatMulCpuTest, Fp32MatchesReference) {
  uint64_t seed = 100;
  for (const MatMulSpec& spec : kMatMuls) {
    SCOPED_TRACE(ShapeToString(spec.a) + " x " + ShapeToString(spec.b) + (spec.b_constant ? " B constant" : ""));
    ExpectClose(cpu::CreateMatMulF32, MakeMatMul(spec, seed += 10));
  }
}

TEST(MatMulCpuTest, GemmFp32MatchesReference) {
  uint64_t seed = 200;
  for (const GemmSpec& spec : kGemms) {
    SCOPED_TRACE(Describe(spec));
    ExpectClose(cpu::CreateGemmF32, MakeGemm(spec, seed += 10));
  }
}

// The calibrated range of A as the quantiser sees it (MinMax calibration over this one input).
QuantTable RangeOf(const KernelCase& c) {
  float lo = 0, hi = 0;
  const Tensor& a = c.inputs[0];
  for (int64_t i = 0; i < a.numel(); ++i) {
    lo = std::min(lo, a.data<float>()[i]);
    hi = std::max(hi, a.data<float>()[i]);
  }
  return {{c.node.inputs[0], QuantParams{.min = lo, .max = hi}}};
}

// int8: A quantised per tensor with its calibrated range (u8 when never negative, else s8), B per
// output column. Uniform data over the range gives ~48 dB per 8-bit operand (~42 dB for the 7-bit
// weights used without VNNI); rounding noise of both operands summed over K products leaves
// ≥ 30 dB in practice. 25 dB catches a wrong scale (≤ 10 dB), a bias or C added in the wrong
// units, a transposed operand or a wrong sign (≤ 0 dB).
constexpr double kInt8MinSqnrDb = 25.0;

TEST(MatMulCpuTest, Int8IsCloseToReferenceBySqnr) {
  uint64_t seed = 300;
  for (const MatMulSpec& spec : kMatMuls) {
    if (!spec.b_constant) continue;
    for (bool non_negative : {true, false}) {
      KernelCase c = MakeMatMul(spec, seed += 10);
      if (non_negative) c.inputs[0] = RandomF32(spec.a, seed, 0.0f, 2.0f);
      const QuantTable table = RangeOf(c);
      c.precision = Precision::kInt8;
      c.quant = &table;
      SCOPED_TRACE(ShapeToString(spec.a) + " x " + ShapeToString(spec.b) + (non_negative ? " u8" : " s8"));
      auto out = RunCpuKernel(cpu::CreateMatMulInt8, c);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_GE(SqnrDb((*out)[0], RunReference(c)[0]), kInt8MinSqnrDb);
    }
  }
}

TEST(MatMulCpuTest, GemmInt8IsCloseToReferenceBySqnr) {
  uint64_t seed = 400;
  for (const GemmSpec& spec : kGemms) {
    if (!spec.b_constant) continue;
    for (bool non_negative : {true, false}) {
      KernelCase c = MakeGemm(spec, seed += 10);
      if (non_negative) c.inputs[0] = RandomF32(c.inputs[0].shape(), seed, 0.0f, 2.0f);
      const QuantTable table = RangeOf(c);
      c.precision = Precision::kInt8;
      c.quant = &table;
      SCOPED_TRACE(Describe(spec) + (non_negative ? " u8" : " s8"));
      auto out = RunCpuKernel(cpu::CreateGemmInt8, c);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_GE(SqnrDb((*out)[0], RunReference(c)[0]), kInt8MinSqnrDb);
    }
  }
}

// A large signed A: oneDNN's brgemm matmul stores s8 weights with a compensation term for s8
// sources, which its reorder only computes from s8 weights (the kernel quantises to a plain s8
// copy first; a direct f32 → s8 reorder into that layout was refused).
TEST(MatMulCpuTest, Int8LargeSignedInputUsesTheCompensatedWeightLayout) {
  KernelCase c = MakeMatMul({{64, 512}, {512, 256}}, 500);
  const QuantTable table = RangeOf(c);
  c.precision = Precision::kInt8;
  c.quant = &table;
  auto out = RunCpuKernel(cpu::CreateMatMulInt8, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_GE(SqnrDb((*out)[0], RunReference(c)[0]), kInt8MinSqnrDb);
}

// bf16 rounds A and B to 8 significant bits (relative error ≤ 2^-9 each) and accumulates in f32:
// ≥ 35 dB as for convolutions (a wrong conversion gives ≤ 0 dB). A run-time B is rounded each run.
// Where oneDNN 2.6 only has its reference bf16 matmul (no AVX-512) the factory refuses, and the
// test says it skipped.
constexpr double kBf16MinSqnrDb = 35.0;

TEST(MatMulCpuTest, Bf16IsCloseToReferenceBySqnr) {
  uint64_t seed = 600;
  for (const MatMulSpec& spec : kMatMuls) {
    KernelCase c = MakeMatMul(spec, seed += 10);
    c.precision = Precision::kBf16;
    SCOPED_TRACE(ShapeToString(spec.a) + " x " + ShapeToString(spec.b) + (spec.b_constant ? " B constant" : ""));
    auto out = RunCpuKernel(cpu::CreateMatMulBf16, c);
    if (!out.ok() && out.status().message().find("reference") != std::string::npos) {
      GTEST_SKIP() << "only oneDNN's reference bf16 matmul on this CPU: " << out.status().message();
    }
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_GE(SqnrDb((*out)[0], RunReference(c)[0]), kBf16MinSqnrDb);
  }
  for (const GemmSpec& spec : kGemms) {
    KernelCase c = MakeGemm(spec, seed += 10);
    c.precision = Precision::kBf16;
    SCOPED_TRACE(Describe(spec));
    auto out = RunCpuKernel(cpu::CreateGemmBf16, c);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_GE(SqnrDb((*out)[0], RunReference(c)[0]), kBf16MinSqnrDb);
  }
}

TEST(MatMulCpuTest, RefusesWhatItCannotRunWithAReason) {
  KernelCase c = MakeMatMul(kMatMuls[0], 7);
  const QuantTable empty;
  c.precision = Precision::kInt8;
  c.quant = &empty;
  auto out = RunCpuKernel(cpu::CreateMatMulInt8, c);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(out.status().message().find("no calibrated range for input 'in0'"), std::string::npos);

  KernelCase runtime_b = MakeMatMul(kMatMuls[2], 8);
  const QuantTable table = RangeOf(runtime_b);
  runtime_b.precision = Precision::kInt8;
  runtime_b.quant = &table;
  out = RunCpuKernel(cpu::CreateMatMulInt8, runtime_b);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("needs a constant B"), std::string::npos);

  KernelCase integers{.node = MakeNode("MatMul", 2)};
  integers.inputs = {Tensor(DType::kI32, {2, 3}), Tensor(DType::kI32, {3, 2})};
  out = RunCpuKernel(cpu::CreateMatMulF32, integers);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("i32 input"), std::string::npos);
}

}  // namespace
}  // namespace chipfit::testing
