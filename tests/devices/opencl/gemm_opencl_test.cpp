// MatMul and Gemm on OpenCL against the reference, fp32 and fp16 storage, odd sizes that leave
// partial tiles on every edge, and the refusals.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "devices/opencl/ops/opencl_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/opencl/opencl_test_util.h"

namespace chipfit::testing {
namespace {

// fp16 storage rounds every input and output to half (relative error <= 2^-11 each); a dot
// product of K terms with random signs keeps that relative size, so the NMSE is about
// 3 * (2^-11)^2 ~ 7e-7. 1e-5 leaves a margin of 10x and still fails on any indexing mistake
// (a wrong element gives an NMSE near 1).
constexpr double kNmse16 = 1e-5;

OpenClCase MatMulCase(const Shape& a, const Shape& b, uint64_t seed) {
  OpenClCase c{.node = MakeNode("MatMul", 2)};
  c.inputs = {RandomF32(a, seed), RandomF32(b, seed + 1)};
  return c;
}

TEST(MatMulOpenClTest, MatchesReferenceOnOddShapes) {
  CHIPFIT_REQUIRE_OPENCL();
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{1, 3}, {3, 1}},         {{17, 65}, {65, 33}},
      {{33, 3}, {3, 17}},       {{1, 65}, {65, 100}},
      {{100, 65}, {65, 1}},     {{65}, {65, 17}},
      {{17, 65}, {65}},         {{65}, {65}},
      {{128, 256}, {256, 96}},  {{2, 3, 17, 65}, {65, 33}},
      {{4, 17, 8}, {4, 8, 33}}, {{2, 1, 17, 5}, {3, 5, 9}},
      {{17, 5}, {2, 3, 5, 9}},  {{3, 1, 2, 1, 7, 3}, {1, 4, 2, 5, 3, 6}},
  };
  uint64_t seed = 10;
  for (const auto& [a, b] : cases) {
    SCOPED_TRACE(ShapeToString(a) + " x " + ShapeToString(b));
    ExpectMatchesReference(opencl::CreateMatMul, MatMulCase(a, b, seed += 2), 1e-4, kNmse16);
  }
}

TEST(GemmOpenClTest, TransposesAlphaBetaAndEveryBroadcastOfC) {
  CHIPFIT_REQUIRE_OPENCL();
  const int64_t m = 17, k = 65, n = 33;
  const std::vector<Shape> c_shapes = {{n}, {1, n}, {m, 1}, {m, n}, {}, {1}, {1, 1}};
  uint64_t seed = 100;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      for (size_t ci = 0; ci <= c_shapes.size(); ++ci) {
        const bool with_c = ci < c_shapes.size();
        OpenClCase c{.node = MakeNode("Gemm", with_c ? 3 : 2, 1,
                                      {{"transA", IntAttr(ta)},
                                       {"transB", IntAttr(tb)},
                                       {"alpha", FloatAttr(0.75f)},
                                       {"beta", FloatAttr(-1.5f)}})};
        c.inputs = {RandomF32(ta ? Shape{k, m} : Shape{m, k}, seed += 3),
                    RandomF32(tb ? Shape{n, k} : Shape{k, n}, seed + 1)};
        if (with_c) c.inputs.push_back(RandomF32(c_shapes[ci], seed + 2));
        SCOPED_TRACE("transA " + std::to_string(ta) + " transB " + std::to_string(tb) + " C " +
                     (with_c ? ShapeToString(c_shapes[ci]) : "none"));
        ExpectMatchesReference(opencl::CreateGemm, c, 1e-4, kNmse16);
      }
    }
  }
}

TEST(GemmOpenClTest, DefaultAttributesAndTinyShapes) {
  CHIPFIT_REQUIRE_OPENCL();
  uint64_t seed = 300;
  for (const auto& [m, k, n] : std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {1, 3, 5}, {5, 3, 1}, {70, 130, 66}}) {
    OpenClCase c{.node = MakeNode("Gemm", 3)};
    c.inputs = {RandomF32({m, k}, seed += 3), RandomF32({k, n}, seed + 1), RandomF32({n}, seed + 2)};
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n));
    ExpectMatchesReference(opencl::CreateGemm, c, 1e-4, kNmse16);
  }
}

// A refusal is Unsupported with a reason, never a crash or a wrong result.
void ExpectRefused(const Result<std::unique_ptr<IKernel>>& r, const std::string& mentions) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported) << r.status().ToString();
  EXPECT_NE(r.status().message().find(mentions), std::string::npos) << r.status().ToString();
}

TEST(GemmOpenClTest, RefusesWhatItCannotRun) {
  CHIPFIT_REQUIRE_OPENCL();
  auto context = TestContext(Precision::kFp32);
  ASSERT_TRUE(context.ok()) << context.status().ToString();
  const Node node = MakeNode("MatMul", 2);
  const std::vector<ValueInfo> outs = {{DType::kF32, {8, 4}, nullptr}};

  // Shapes only known at run time, and no output shapes.
  ValueInfo a{DType::kF32, {-1, 3}, nullptr}, b{DType::kF32, {3, 4}, nullptr};
  std::vector<const ValueInfo*> inputs = {&a, &b};
  ExpectRefused(opencl::CreateMatMul(KernelInit{node, inputs, 17, Precision::kFp32, nullptr, context->get(), &outs}),
                "only known at run time");
  a.shape = {8, 3};
  ExpectRefused(opencl::CreateMatMul(KernelInit{node, inputs, 17, Precision::kFp32, nullptr, context->get(), nullptr}),
                "only known at run time");
  // No device context.
  ExpectRefused(opencl::CreateMatMul(KernelInit{node, inputs, 17, Precision::kFp32, nullptr, nullptr, &outs}),
                "OpenCL device");
  // Empty tensors.
  a.shape = {0, 3};
  const std::vector<ValueInfo> empty_out = {{DType::kF32, {0, 4}, nullptr}};
  ExpectRefused(
      opencl::CreateMatMul(KernelInit{node, inputs, 17, Precision::kFp32, nullptr, context->get(), &empty_out}),
      "empty");

  // Non-f32 inputs, through the harness (the reference runs f64 MatMul).
  OpenClCase f64{.node = MakeNode("MatMul", 2)};
  f64.inputs = {Tensor(DType::kF64, {4, 3}), Tensor(DType::kF64, {3, 2})};
  auto got = RunOpenClKernel(opencl::CreateMatMul, f64);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(got.status().message().find("f64"), std::string::npos) << got.status().ToString();
}

}  // namespace
}  // namespace chipfit::testing
