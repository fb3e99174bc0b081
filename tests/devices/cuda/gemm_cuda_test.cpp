// MatMul and Gemm on cuBLASLt: the plan (transposition trick, leading dims, batch strides, types per
// precision, epilogue, refusals) and the dlopen'ed library everywhere; results against the reference
// where a GPU is.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "devices/cuda/cublaslt_api.h"
#include "devices/cuda/ops/cuda_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cuda/cuda_test_util.h"

namespace chipfit::testing {
namespace {

using cuda::GemmAttrs;
using cuda::GemmCMode;
using cuda::GemmPlan;
using cuda::PlanGemm;
using cuda::PlanMatMul;

constexpr const char* kWhat = "node 'x' (MatMul)";

GemmPlan MustPlanMatMul(const Shape& a, const Shape& b, DType storage = DType::kF32,
                        Precision precision = Precision::kFp32) {
  auto plan = PlanMatMul(a, b, storage, precision, kWhat);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return plan.ok() ? *plan : GemmPlan{};
}

GemmPlan MustPlanGemm(const Shape& a, const Shape& b, const Shape* c, GemmAttrs attrs) {
  auto plan = PlanGemm(a, b, c, attrs, DType::kF32, Precision::kFp32, "node 'g' (Gemm)");
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return plan.ok() ? *plan : GemmPlan{};
}

void ExpectStatus(const Status& s, StatusCode code, const std::string& mentions) {
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(mentions), std::string::npos) << s.ToString();
}

// ---- Host-side: the plan.

TEST(GemmCudaPlanTest, MatMulIsTheTransposedColumnMajorProduct) {
  // Y[17, 33] = A[17, 65] · B[65, 33] as column-major Yᵀ (33 x 17) = Bᵀ (33 x 65) · Aᵀ (65 x 17).
  const GemmPlan p = MustPlanMatMul({17, 65}, {65, 33});
  EXPECT_EQ(p.m, 33u);
  EXPECT_EQ(p.n, 17u);
  EXPECT_EQ(p.k, 65u);
  EXPECT_EQ(p.trans_a, CUBLAS_OP_N);
  EXPECT_EQ(p.trans_b, CUBLAS_OP_N);
  EXPECT_EQ(p.a_rows, 33u);
  EXPECT_EQ(p.a_cols, 65u);
  EXPECT_EQ(p.lda, 33);
  EXPECT_EQ(p.b_rows, 65u);
  EXPECT_EQ(p.b_cols, 17u);
  EXPECT_EQ(p.ldb, 65);
  EXPECT_EQ(p.ldc, 33);
  EXPECT_EQ(p.batch, 1);
  EXPECT_TRUE(p.outer.empty());
  EXPECT_EQ(p.alpha, 1.0f);
  EXPECT_EQ(p.beta, 0.0f);
  EXPECT_EQ(p.c_mode, GemmCMode::kNone);
  EXPECT_EQ(p.epilogue, CUBLASLT_EPILOGUE_DEFAULT);
}

TEST(GemmCudaPlanTest, OneDimensionalOperands) {
  GemmPlan p = MustPlanMatMul({65}, {65, 17});  // a row: M = 1
  EXPECT_EQ(p.m, 17u);
  EXPECT_EQ(p.n, 1u);
  EXPECT_EQ(p.k, 65u);
  EXPECT_EQ(p.ldb, 65);
  p = MustPlanMatMul({17, 65}, {65});  // a column: N = 1
  EXPECT_EQ(p.m, 1u);
  EXPECT_EQ(p.n, 17u);
  EXPECT_EQ(p.lda, 1);
  EXPECT_EQ(p.ldc, 1);
  p = MustPlanMatMul({65}, {65});  // a dot product
  EXPECT_EQ(p.m, 1u);
  EXPECT_EQ(p.n, 1u);
  EXPECT_EQ(p.k, 65u);
}

TEST(GemmCudaPlanTest, SharedWeightsFoldIntoOneTallerProduct) {
  const GemmPlan p = MustPlanMatMul({2, 3, 17, 65}, {65, 33});
  EXPECT_EQ(p.n, 2u * 3 * 17);
  EXPECT_EQ(p.m, 33u);
  EXPECT_EQ(p.b_cols, 2u * 3 * 17);
  EXPECT_EQ(p.batch, 1);
  // Broadcast batch dim of size 1 on B folds too.
  EXPECT_EQ(MustPlanMatMul({4, 17, 8}, {1, 8, 33}).n, 4u * 17);
}

TEST(GemmCudaPlanTest, BatchesAreStridedWithZeroStrideForABroadcastOperand) {
  GemmPlan p = MustPlanMatMul({4, 17, 8}, {4, 8, 33});
  EXPECT_EQ(p.batch, 4);
  EXPECT_EQ(p.stride_a, 8 * 33);  // cuBLASLt's A is ONNX B
  EXPECT_EQ(p.stride_b, 17 * 8);  // and its B is ONNX A
  EXPECT_EQ(p.stride_c, 17 * 33);
  EXPECT_TRUE(p.outer.empty());

  p = MustPlanMatMul({1, 17, 8}, {4, 8, 33});  // one A against four Bs
  EXPECT_EQ(p.batch, 4);
  EXPECT_EQ(p.stride_a, 8 * 33);
  EXPECT_EQ(p.stride_b, 0);
  EXPECT_EQ(p.stride_c, 17 * 33);

  p = MustPlanMatMul({2, 3, 17, 8}, {2, 3, 8, 33});  // two batch dims merge into one
  EXPECT_EQ(p.batch, 6);
  EXPECT_TRUE(p.outer.empty());

  p = MustPlanMatMul({17, 5}, {2, 3, 5, 9});  // A shared by 6 Bs
  EXPECT_EQ(p.batch, 6);
  EXPECT_EQ(p.stride_b, 0);
  EXPECT_EQ(p.stride_a, 45);
}

TEST(GemmCudaPlanTest, BatchDimsThatDoNotMergeLoopOnTheHost) {
  // Y [3, 4, 2, 5, 7, 6]: A's batch strides (42, 0, 21, 0), B's (0, 180, 90, 18), Y's (1680, 420, 210, 42).
  const GemmPlan p = MustPlanMatMul({3, 1, 2, 1, 7, 3}, {1, 4, 2, 5, 3, 6});
  EXPECT_EQ(p.batch, 5);
  EXPECT_EQ(p.stride_a, 18);
  EXPECT_EQ(p.stride_b, 0);
  EXPECT_EQ(p.stride_c, 42);
  ASSERT_EQ(p.outer.size(), 3u);
  EXPECT_EQ(p.outer[0].size, 3);
  EXPECT_EQ(p.outer[0].a, 42);
  EXPECT_EQ(p.outer[0].b, 0);
  EXPECT_EQ(p.outer[0].y, 1680);
  EXPECT_EQ(p.outer[1].size, 4);
  EXPECT_EQ(p.outer[1].a, 0);
  EXPECT_EQ(p.outer[1].b, 180);
  EXPECT_EQ(p.outer[2].size, 2);
  EXPECT_EQ(p.outer[2].a, 21);
  EXPECT_EQ(p.outer[2].b, 90);
  EXPECT_EQ(p.OuterCount(), 24);
}

TEST(GemmCudaPlanTest, GemmTransposesBecomeOperations) {
  const int64_t m = 17, k = 65, n = 33;
  GemmPlan p = MustPlanGemm({m, k}, {k, n}, nullptr, {});
  EXPECT_EQ(p.trans_a, CUBLAS_OP_N);
  EXPECT_EQ(p.trans_b, CUBLAS_OP_N);
  EXPECT_EQ(p.lda, n);
  EXPECT_EQ(p.ldb, k);

  p = MustPlanGemm({k, m}, {k, n}, nullptr, {.trans_a = true});
  EXPECT_EQ(p.trans_b, CUBLAS_OP_T);
  EXPECT_EQ(p.b_rows, static_cast<uint64_t>(m));
  EXPECT_EQ(p.b_cols, static_cast<uint64_t>(k));
  EXPECT_EQ(p.ldb, m);
  EXPECT_EQ(p.n, static_cast<uint64_t>(m));

  p = MustPlanGemm({m, k}, {n, k}, nullptr, {.trans_b = true});
  EXPECT_EQ(p.trans_a, CUBLAS_OP_T);
  EXPECT_EQ(p.a_rows, static_cast<uint64_t>(k));
  EXPECT_EQ(p.a_cols, static_cast<uint64_t>(n));
  EXPECT_EQ(p.lda, k);
  EXPECT_EQ(p.m, static_cast<uint64_t>(n));
  EXPECT_EQ(p.k, static_cast<uint64_t>(k));
  EXPECT_EQ(p.ldc, n);
}

TEST(GemmCudaPlanTest, GemmCPicksBiasMatrixOrBroadcast) {
  const Shape a{17, 65}, b{65, 33};
  struct Case {
    Shape c;
    float beta;
    GemmCMode mode;
    float plan_beta;
  };
  const std::vector<Case> cases = {
      {{33}, 1.0f, GemmCMode::kBias, 0.0f},         {{1, 33}, 1.0f, GemmCMode::kBias, 0.0f},
      {{33}, 0.5f, GemmCMode::kBroadcast, 0.5f},    {{17, 33}, -1.5f, GemmCMode::kMatrix, -1.5f},
      {{17, 1}, 1.0f, GemmCMode::kBroadcast, 1.0f}, {{}, 1.0f, GemmCMode::kBroadcast, 1.0f},
      {{1, 1}, 2.0f, GemmCMode::kBroadcast, 2.0f},  {{17, 33}, 0.0f, GemmCMode::kNone, 0.0f},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(ShapeToString(c.c) + " beta " + std::to_string(c.beta));
    const GemmPlan p = MustPlanGemm(a, b, &c.c, {.alpha = 0.75f, .beta = c.beta});
    EXPECT_EQ(p.c_mode, c.mode);
    EXPECT_EQ(p.beta, c.plan_beta);
    EXPECT_EQ(p.alpha, 0.75f);
    EXPECT_EQ(p.epilogue, c.mode == GemmCMode::kBias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT);
  }
  const Shape column{17, 1};
  EXPECT_EQ(MustPlanGemm(a, b, &column, {}).c_shape, (Shape{17, 1}));
  const Shape scalar{};
  EXPECT_EQ(MustPlanGemm(a, b, &scalar, {}).c_shape, (Shape{1, 1}));
  const Shape row{33};
  EXPECT_EQ(MustPlanGemm(a, b, &row, {.beta = 3.0f}).c_shape, (Shape{1, 33}));
}

TEST(GemmCudaPlanTest, TypesPerPrecision) {
  struct Case {
    Precision precision;
    DType storage;
    cudaDataType_t data;
    cublasComputeType_t compute;
  };
  const std::vector<Case> cases = {
      {Precision::kFp32, DType::kF32, CUDA_R_32F, CUBLAS_COMPUTE_32F},
      {Precision::kTf32, DType::kF32, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32},
      {Precision::kFp16, DType::kF16, CUDA_R_16F, CUBLAS_COMPUTE_32F},
      {Precision::kBf16, DType::kBF16, CUDA_R_16BF, CUBLAS_COMPUTE_32F},
      // A model's own f16 tensors under tf32: nothing for TF32 to round.
      {Precision::kTf32, DType::kF16, CUDA_R_16F, CUBLAS_COMPUTE_32F},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(PrecisionName(c.precision)) + " " + std::string(DTypeName(c.storage)));
    const GemmPlan p = MustPlanMatMul({4, 8}, {8, 2}, c.storage, c.precision);
    EXPECT_EQ(p.data_type, c.data);
    EXPECT_EQ(p.compute, c.compute);
    EXPECT_EQ(p.scale_type, CUDA_R_32F);
    EXPECT_EQ(p.storage, c.storage);
  }
  EXPECT_NE(MustPlanMatMul({4, 8}, {8, 2}, DType::kBF16, Precision::kBf16).Describe().find("bf16/32F"),
            std::string::npos);
}

TEST(GemmCudaPlanTest, RefusalsSayWhy) {
  ExpectStatus(PlanMatMul({4, 8}, {8, 2}, DType::kF32, Precision::kInt8, kWhat).status(), StatusCode::kUnsupported,
               "per-channel scales");
  ExpectStatus(PlanMatMul({4, 8}, {8, 2}, DType::kI64, Precision::kFp32, kWhat).status(), StatusCode::kUnsupported,
               "i64 operands");
  ExpectStatus(PlanMatMul({4, 8}, {8, 2}, DType::kI64, Precision::kFp32, kWhat).status(), StatusCode::kUnsupported,
               kWhat);
  ExpectStatus(PlanMatMul({4, 8}, {7, 2}, DType::kF32, Precision::kFp32, kWhat).status(), StatusCode::kInvalidArgument,
               "inner dims differ");
  ExpectStatus(PlanMatMul({2, 4, 8}, {3, 8, 2}, DType::kF32, Precision::kFp32, kWhat).status(),
               StatusCode::kInvalidArgument, "do not broadcast");
  ExpectStatus(PlanMatMul({0, 8}, {8, 2}, DType::kF32, Precision::kFp32, kWhat).status(), StatusCode::kUnsupported,
               "empty A");
  ExpectStatus(PlanMatMul({}, {8, 2}, DType::kF32, Precision::kFp32, kWhat).status(), StatusCode::kInvalidArgument,
               "scalar");
  const Shape bad_c{5};
  ExpectStatus(PlanGemm({4, 8}, {8, 2}, &bad_c, {}, DType::kF32, Precision::kFp32, "g").status(),
               StatusCode::kInvalidArgument, "does not broadcast to [4, 2]");
  ExpectStatus(PlanGemm({4, 8, 1}, {8, 2}, nullptr, {}, DType::kF32, Precision::kFp32, "g").status(),
               StatusCode::kInvalidArgument, "2-D");
  ExpectStatus(PlanGemm({4, 8}, {2, 8}, nullptr, {}, DType::kF32, Precision::kFp32, "g").status(),
               StatusCode::kInvalidArgument, "inner dims differ");
}

// ---- Host-side: the library and its errors.

TEST(CublasLtApiTest, LoadsWithoutAGpu) {
  auto lt = cuda::LoadCublasLt();
  if (!lt.ok()) GTEST_SKIP() << lt.status().ToString();
  const cuda::CublasLt& api = **lt;
  EXPECT_NE(api.Create, nullptr);
  EXPECT_NE(api.Matmul, nullptr);
  EXPECT_NE(api.MatmulAlgoGetHeuristic, nullptr);
  EXPECT_GT(api.GetVersion(), 0u);
  // Descriptors are host objects: the kernel makes them at Init, before any GPU work.
  cublasLtMatmulDesc_t desc = nullptr;
  ASSERT_EQ(api.MatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(api.MatmulDescDestroy(desc), CUBLAS_STATUS_SUCCESS);
  cublasLtMatrixLayout_t layout = nullptr;
  ASSERT_EQ(api.MatrixLayoutCreate(&layout, CUDA_R_16F, 33, 65, 33), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(api.MatrixLayoutDestroy(layout), CUBLAS_STATUS_SUCCESS);
  // Loaded once: the same table every time.
  auto again = cuda::LoadCublasLt();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *lt);
}

TEST(CublasLtApiTest, ErrorsNameTheStatusAndTheCall) {
  EXPECT_EQ(cuda::CublasStatusText(nullptr, CUBLAS_STATUS_NOT_SUPPORTED), "CUBLAS_STATUS_NOT_SUPPORTED (15)");
  const Status s = cuda::CublasError(nullptr, CUBLAS_STATUS_NOT_SUPPORTED, "node 'x' (MatMul)", "cublasLtMatmul");
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(), "node 'x' (MatMul): cublasLtMatmul: CUBLAS_STATUS_NOT_SUPPORTED (15)");
  EXPECT_EQ(cuda::CublasError(nullptr, CUBLAS_STATUS_EXECUTION_FAILED, "w", "c").code(), StatusCode::kInternal);
  EXPECT_TRUE(cuda::CheckCublas(nullptr, CUBLAS_STATUS_SUCCESS, "w", "c").ok());
  auto lt = cuda::LoadCublasLt();
  if (!lt.ok()) GTEST_SKIP() << lt.status().ToString();
  const std::string text = cuda::CublasStatusText(*lt, CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_NE(text.find("CUBLAS_STATUS_INVALID_VALUE (7)"), std::string::npos) << text;
}

// ---- On a GPU: against the reference.

// Each f16/bf16 rounding is relative 2^-11 / 2^-8; a dot product of random signs keeps that size, so
// the NMSE is a few 1e-7 for fp16 (64x for bf16). A wrong element gives an NMSE near 1.
constexpr double kNmse16 = 1e-5;

DeviceCase MatMulCase(const Shape& a, const Shape& b, uint64_t seed) {
  DeviceCase c{.node = MakeNode("MatMul", 2)};
  c.inputs = {RandomF32(a, seed), RandomF32(b, seed + 1)};
  return c;
}

TEST(MatMulCudaTest, MatchesReferenceOnOddShapesAndBroadcasts) {
  CHIPFIT_REQUIRE_CUDA();
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{1, 3}, {3, 1}},
      {{17, 65}, {65, 33}},
      {{33, 3}, {3, 17}},
      {{1, 65}, {65, 100}},
      {{100, 65}, {65, 1}},
      {{65}, {65, 17}},
      {{17, 65}, {65}},
      {{65}, {65}},
      {{128, 256}, {256, 96}},
      {{2, 3, 17, 65}, {65, 33}},
      {{4, 17, 8}, {4, 8, 33}},
      {{2, 1, 17, 5}, {3, 5, 9}},
      {{17, 5}, {2, 3, 5, 9}},
      {{1, 17, 8}, {4, 8, 33}},
      {{3, 1, 2, 1, 7, 3}, {1, 4, 2, 5, 3, 6}},
  };
  uint64_t seed = 10;
  for (const auto& [a, b] : cases) {
    SCOPED_TRACE(ShapeToString(a) + " x " + ShapeToString(b));
    ExpectCudaMatchesReference(cuda::CreateMatMul, MatMulCase(a, b, seed += 2), 1e-4, kNmse16);
  }
}

TEST(MatMulCudaTest, Tf32RoundsOnlyTheInputs) {
  CHIPFIT_REQUIRE_CUDA();
  DeviceCase c = MatMulCase({64, 256}, {256, 48}, 77);
  const std::vector<Tensor> want = RunReference(c);
  c.precision = Precision::kTf32;
  auto got = RunCudaKernel(cuda::CreateMatMul, c);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  // TF32 keeps 10 mantissa bits, as f16 does.
  EXPECT_LE(Nmse((*got)[0], want[0]), kNmse16);
}

TEST(GemmCudaTest, TransposesAlphaBetaAndEveryBroadcastOfC) {
  CHIPFIT_REQUIRE_CUDA();
  const int64_t m = 17, k = 65, n = 33;
  const std::vector<Shape> c_shapes = {{n}, {1, n}, {m, 1}, {m, n}, {}, {1}, {1, 1}};
  uint64_t seed = 100;
  for (float beta : {1.0f, -1.5f, 0.0f}) {
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        for (size_t ci = 0; ci <= c_shapes.size(); ++ci) {
          const bool with_c = ci < c_shapes.size();
          DeviceCase c{.node = MakeNode("Gemm", with_c ? 3 : 2, 1,
                                        {{"transA", IntAttr(ta)},
                                         {"transB", IntAttr(tb)},
                                         {"alpha", FloatAttr(0.75f)},
                                         {"beta", FloatAttr(beta)}})};
          c.inputs = {RandomF32(ta ? Shape{k, m} : Shape{m, k}, seed += 3),
                      RandomF32(tb ? Shape{n, k} : Shape{k, n}, seed + 1)};
          if (with_c) c.inputs.push_back(RandomF32(c_shapes[ci], seed + 2));
          c.constant = {false, true, true};  // weights and bias, as the executor sees them
          SCOPED_TRACE("beta " + std::to_string(beta) + " transA " + std::to_string(ta) + " transB " +
                       std::to_string(tb) + " C " + (with_c ? ShapeToString(c_shapes[ci]) : "none"));
          ExpectCudaMatchesReference(cuda::CreateGemm, c, 1e-4, kNmse16);
        }
      }
    }
  }
}

TEST(GemmCudaTest, DefaultAttributesAndTinyShapes) {
  CHIPFIT_REQUIRE_CUDA();
  uint64_t seed = 300;
  for (const auto& [m, k, n] : std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {1, 3, 5}, {5, 3, 1}, {70, 130, 66}}) {
    DeviceCase c{.node = MakeNode("Gemm", 3)};
    c.inputs = {RandomF32({m, k}, seed += 3), RandomF32({k, n}, seed + 1), RandomF32({n}, seed + 2)};
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n));
    ExpectCudaMatchesReference(cuda::CreateGemm, c, 1e-4, kNmse16);
  }
}

TEST(GemmCudaTest, RefusesWhatItCannotRun) {
  CHIPFIT_REQUIRE_CUDA();
  auto context = CudaTestContext(Precision::kFp32);
  ASSERT_TRUE(context.ok()) << context.status().ToString();
  const Node node = MakeNode("MatMul", 2);
  const std::vector<ValueInfo> outs = {{DType::kF32, {8, 4}, nullptr}};
  ValueInfo a{DType::kF32, {-1, 3}, nullptr}, b{DType::kF32, {3, 4}, nullptr};
  std::vector<const ValueInfo*> inputs = {&a, &b};
  auto r = cuda::CreateMatMul(KernelInit{node, inputs, 17, Precision::kFp32, nullptr, context->get(), &outs});
  ExpectStatus(r.status(), StatusCode::kUnsupported, "only known at run time");
  a.shape = {8, 3};
  r = cuda::CreateMatMul(KernelInit{node, inputs, 17, Precision::kInt8, nullptr, context->get(), &outs});
  ExpectStatus(r.status(), StatusCode::kUnsupported, "int8");
  a.dtype = b.dtype = DType::kI32;
  const std::vector<ValueInfo> int_outs = {{DType::kI32, {8, 4}, nullptr}};
  r = cuda::CreateMatMul(KernelInit{node, inputs, 17, Precision::kFp32, nullptr, context->get(), &int_outs});
  ExpectStatus(r.status(), StatusCode::kUnsupported, "i32 operands");
  r = cuda::CreateMatMul(KernelInit{node, inputs, 17, Precision::kFp32, nullptr, nullptr, &outs});
  ExpectStatus(r.status(), StatusCode::kUnsupported, "CUDA device context");
}

}  // namespace
}  // namespace chipfit::testing
