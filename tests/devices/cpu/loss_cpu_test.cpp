// The CPU device's loss kernels (loss_cpu.cpp) against the reference: NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss in f32 and f64, every reduction, with and without weights and ignore_index,
// [N, C] and [N, C, d1, d2] inputs, the log_prob output, blocks run in parallel, the out-of-range
// target error and the refused dtypes.
//
// Tolerances: both compute in double and round each value once, in the same order per position; only
// the order of the final sum differs (blocks of positions), so f32 results are held to 1e-6 of the
// largest reference value (a few ulp) and f64 ones to 1e-12.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "devices/cpu/cpu_kernels.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"
#include "tests/devices/cpu/kernel_layout_util.h"

namespace chipfit::testing {
namespace {

constexpr const char* kNll = "NegativeLogLikelihoodLoss";
constexpr const char* kSce = "SoftmaxCrossEntropyLoss";

// The table's fp32 implementation named cpu:loss; it must come first (nothing refuses before it).
KernelFactory LossFactory(const std::string& op) {
  const auto& impls = CpuKernels().Find(op, "", DeviceKind::kCpu, Precision::kFp32);
  EXPECT_FALSE(impls.empty()) << op;
  if (impls.empty()) return nullptr;
  EXPECT_EQ(std::string(impls[0].name), "cpu:loss") << op;
  return impls[0].create;
}

struct LossSpec {
  std::string op;
  std::string reduction;
  Shape x;  // [N, C, ...]
  bool weight = false;
  bool has_ignore = false;
  int64_t ignore_index = 0;
  DType dtype = DType::kF32;
  DType target_dtype = DType::kI64;
  bool log_prob = false;  // SCE: ask for the second output
  int64_t opset = 13;
};

std::string Describe(const LossSpec& s) {
  return s.op + " " + s.reduction + " " + ShapeToString(s.x) + (s.weight ? " weighted" : "") +
         (s.has_ignore ? " ignore " + std::to_string(s.ignore_index) : "") + " " + std::string(DTypeName(s.dtype)) +
         " target " + std::string(DTypeName(s.target_dtype)) + (s.log_prob ? " log_prob" : "") + " opset " +
         std::to_string(s.opset);
}

Tensor Convert(const Tensor& f32, DType dtype) {
  if (dtype == DType::kF32) return f32;
  Tensor out(dtype, f32.shape());
  for (int64_t i = 0; i < f32.numel(); ++i) out.data<double>()[i] = f32.data<float>()[i];
  return out;
}

// Targets in [0, C); with an ignore_index, about every fourth one is it.
Tensor Targets(const LossSpec& s, uint64_t seed) {
  Shape shape = {s.x[0]};
  shape.insert(shape.end(), s.x.begin() + 2, s.x.end());
  Tensor t(s.target_dtype, shape);
  SplitMix64 rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) {
    auto v = static_cast<int64_t>(rng.Uniform(0.0f, static_cast<float>(s.x[1])));
    v = std::min(v, s.x[1] - 1);
    if (s.has_ignore && rng.Uniform(0.0f, 1.0f) < 0.25f) v = s.ignore_index;
    if (s.target_dtype == DType::kI32) {
      t.data<int32_t>()[i] = static_cast<int32_t>(v);
    } else {
      t.data<int64_t>()[i] = v;
    }
  }
  return t;
}

KernelCase MakeCase(const LossSpec& s, uint64_t seed) {
  std::map<std::string, Attribute> attrs = {{"reduction", StringAttr(s.reduction)}};
  if (s.has_ignore) attrs["ignore_index"] = IntAttr(s.ignore_index);
  KernelCase c{.node = MakeNode(s.op, s.weight ? 3 : 2, s.log_prob ? 2 : 1, attrs), .opset = s.opset};
  c.inputs = {Convert(RandomF32(s.x, seed, -3.0f, 3.0f), s.dtype), Targets(s, seed + 1)};
  if (s.weight) c.inputs.push_back(Convert(RandomF32({s.x[1]}, seed + 2, 0.1f, 2.0f), s.dtype));
  return c;
}

// Runs the spec on cpu:loss and on the reference; every output matches in dtype, shape and values.
void ExpectMatches(const LossSpec& s, uint64_t seed) {
  SCOPED_TRACE(Describe(s));
  const KernelCase c = MakeCase(s, seed);
  auto out = RunCpuKernel(LossFactory(s.op), c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  ASSERT_EQ(out->size(), ref.size());
  ASSERT_EQ(ref.size(), s.log_prob ? 2u : 1u);
  const double tol = s.dtype == DType::kF32 ? 1e-6 : 1e-12;
  for (size_t k = 0; k < ref.size(); ++k) {
    EXPECT_EQ((*out)[k].dtype(), ref[k].dtype()) << "output " << k;
    ASSERT_EQ((*out)[k].shape(), ref[k].shape()) << "output " << k;
    EXPECT_LE(MaxRelError((*out)[k], ref[k]), tol) << "output " << k;
  }
}

// ---- every combination ---------------------------------------------------------------------------

// op × reduction × weight × ignore_index (none, inside [0, C), negative) × [N, C] and [N, C, d1, d2]
// × f32/f64, the targets int64 or int32 and the opset varying along.
TEST(LossCpuTest, EveryReductionWeightAndIgnoreIndexMatchesReference) {
  uint64_t seed = 1000;
  int variant = 0;
  for (const char* op : {kNll, kSce}) {
    for (const char* reduction : {"none", "sum", "mean"}) {
      for (bool weight : {false, true}) {
        for (int ignore : {0, 1, 2}) {  // none, 1 (a real class), −100
          for (const Shape& x : std::vector<Shape>{{5, 4}, {3, 5, 4, 6}}) {
            for (DType dtype : {DType::kF32, DType::kF64}) {
              ++variant;
              LossSpec s{.op = op, .reduction = reduction, .x = x, .weight = weight, .dtype = dtype};
              s.has_ignore = ignore != 0;
              s.ignore_index = ignore == 1 ? 1 : -100;
              s.target_dtype = variant % 2 == 0 ? DType::kI32 : DType::kI64;
              s.opset = std::string(op) == kNll ? std::vector<int64_t>{12, 13, 22}[variant % 3] : 12 + variant % 2;
              ExpectMatches(s, seed += 10);
            }
          }
        }
      }
    }
  }
}

// SCE's second output, log_softmax over the class axis, with every reduction.
TEST(LossCpuTest, SoftmaxCrossEntropyLogProbMatchesReference) {
  uint64_t seed = 2000;
  for (const char* reduction : {"none", "sum", "mean"}) {
    for (const Shape& x : std::vector<Shape>{{6, 7}, {2, 3, 5, 4}, {1, 4, 3}}) {
      for (DType dtype : {DType::kF32, DType::kF64}) {
        LossSpec s{.op = kSce, .reduction = reduction, .x = x, .weight = true, .has_ignore = true};
        s.ignore_index = 2;
        s.dtype = dtype;
        s.log_prob = true;
        ExpectMatches(s, seed += 10);
      }
    }
  }
}

// Large scores that overflow exp without the max shift, and a row of equal scores.
TEST(LossCpuTest, SoftmaxCrossEntropyIsMaxShifted) {
  KernelCase c{.node = MakeNode(kSce, 2, 2, {{"reduction", StringAttr("none")}}), .opset = 13};
  c.inputs = {F32({2, 3}, {1001, 1002, 1003, 5, 5, 5}), I64({2}, {0, 1})};
  auto out = RunCpuKernel(LossFactory(kSce), c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectNear((*out)[0], {2.40760596f, std::log(3.0f)});
  ExpectNear((*out)[1], {-2.40760596f, -1.40760596f, -0.40760596f, -std::log(3.0f), -std::log(3.0f), -std::log(3.0f)});
}

// Hand-computed: the weighted mean divides by the weights of the targets that count, not by N.
TEST(LossCpuTest, WeightedMeanDividesByTheAppliedWeights) {
  KernelCase c{.node = MakeNode(kNll, 3, 1, {{"reduction", StringAttr("mean")}, {"ignore_index", IntAttr(0)}}),
               .opset = 13};
  // Targets 2, 0 (ignored), 1: (3·0.5 + 5·2) / (0.5 + 2).
  c.inputs = {F32({3, 3}, {-1, -2, -3, -9, -9, -9, -4, -5, -6}), I64({3}, {2, 0, 1}), F32({3}, {7, 2, 0.5f})};
  auto out = RunCpuKernel(LossFactory(kNll), c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ((*out)[0].shape(), Shape{});
  ExpectNear((*out)[0], {11.5f / 2.5f});
}

// Every target ignored: the mean is 0 / 0, NaN, as the reference gives.
TEST(LossCpuTest, MeanOfOnlyIgnoredTargetsIsNaN) {
  KernelCase c{.node = MakeNode(kNll, 2, 1, {{"ignore_index", IntAttr(-1)}}), .opset = 13};
  c.inputs = {F32({2, 3}, {-1, -2, -3, -4, -5, -6}), I64({2}, {-1, -1})};
  auto out = RunCpuKernel(LossFactory(kNll), c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(std::isnan((*out)[0].data<float>()[0]));
  EXPECT_TRUE(std::isnan(RunReference(c)[0].data<float>()[0]));
}

// ---- parallel blocks -------------------------------------------------------------------------------

// Enough positions for many blocks on several threads: matches the reference, and the sums are the
// same to the bit with one thread and with several.
TEST(LossCpuTest, ParallelBlocksMatchReferenceAndDoNotDependOnThreads) {
  const std::vector<LossSpec> specs = {
      {.op = kNll, .reduction = "sum", .x = {8, 5, 64, 128}, .weight = true, .has_ignore = true, .ignore_index = 3},
      {.op = kNll, .reduction = "mean", .x = {70000, 3}},
      {.op = kSce, .reduction = "mean", .x = {4, 10, 64, 64}, .weight = true, .has_ignore = true, .ignore_index = -1},
      {.op = kSce, .reduction = "none", .x = {2, 9, 300, 7}, .log_prob = true},
      {.op = kSce, .reduction = "sum", .x = {3000, 40}, .has_ignore = true, .ignore_index = 7},
  };
  uint64_t seed = 3000;
  for (const LossSpec& s : specs) {
    ExpectMatches(s, seed += 10);
    SCOPED_TRACE(Describe(s));
    const KernelCase c = MakeCase(s, seed);
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    auto one = RunCpuKernel(LossFactory(s.op), c);
    omp_set_num_threads(std::max(threads, 3));
    auto many = RunCpuKernel(LossFactory(s.op), c);
    omp_set_num_threads(threads);
    ASSERT_TRUE(one.ok() && many.ok());
    for (size_t k = 0; k < one->size(); ++k) {
      ASSERT_EQ((*one)[k].nbytes(), (*many)[k].nbytes());
      EXPECT_EQ(std::memcmp((*one)[k].raw_data(), (*many)[k].raw_data(), (*one)[k].nbytes()), 0) << "output " << k;
    }
  }
}

// ---- errors and refusals ---------------------------------------------------------------------------

// A target outside [0, C) that is not ignore_index: the reference's error, word for word, naming the
// first such value in flat order (also one far past the data, which must not be read).
TEST(LossCpuTest, TargetOutOfRangeIsTheReferencesError) {
  struct Bad {
    const char* op;
    Shape x;
    std::vector<int64_t> target;
    bool has_ignore;
    int64_t ignore_index;
    const char* text;
  };
  const std::vector<Bad> cases = {
      {kNll, {2, 3}, {0, 3}, false, 0, "target value 3 at flat index 1 is outside [0, 3)"},
      {kNll, {2, 3}, {-1, 0}, true, -100, "target value -1 at flat index 0 is outside [0, 3) and is not ignore_index"},
      {kSce, {1, 3}, {-1}, false, 0, "labels value -1 at flat index 0 is outside [0, 3)"},
      {kSce, {2, 3, 2, 2}, {0, 1, 2, 1, 1, 1000000000, 5, 0}, true, 5, "labels value 1000000000 at flat index 5"},
      {kNll, {2, 3, 4}, {0, 1, 2, 1, 1, 0, 9, 0}, false, 0, "target value 9 at flat index 6"},
      {kNll, {4, 3}, {0, 5, 1, -2}, false, 0, "target value 5 at flat index 1 is"},  // the first of two
  };
  for (const Bad& b : cases) {
    std::map<std::string, Attribute> attrs = {{"reduction", StringAttr("sum")}};
    if (b.has_ignore) attrs["ignore_index"] = IntAttr(b.ignore_index);
    KernelCase c{.node = MakeNode(b.op, 2, 1, attrs), .opset = 13};
    Shape target_shape = {b.x[0]};
    target_shape.insert(target_shape.end(), b.x.begin() + 2, b.x.end());
    c.inputs = {RandomF32(b.x, 4000), I64(target_shape, b.target)};
    SCOPED_TRACE(b.text);
    auto out = RunCpuKernel(LossFactory(b.op), c);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find(b.text), std::string::npos) << out.status().ToString();
    auto ref = RunNodeOnReference(c.node, c.opset, c.inputs);
    ASSERT_FALSE(ref.ok());
    EXPECT_EQ(out.status().message(), ref.status().message());
  }
}

// Out-of-range targets in several blocks run in parallel: the first in flat order is reported.
TEST(LossCpuTest, FirstOutOfRangeTargetAcrossBlocks) {
  for (const char* op : {kNll, kSce}) {
    KernelCase c{.node = MakeNode(op, 2, 1, {{"reduction", StringAttr("mean")}}), .opset = 13};
    std::vector<int64_t> target(100000, 1);
    target[20000] = 3;
    target[60000] = -4;
    target[99999] = 7;
    c.inputs = {RandomF32({100000, 3}, 4100), I64({100000}, target)};
    SCOPED_TRACE(op);
    auto out = RunCpuKernel(LossFactory(op), c);
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("value 3 at flat index 20000 is outside [0, 3)"), std::string::npos)
        << out.status().ToString();
  }
}

// Dtypes other than f32 and f64 are refused with the reason (the reference then runs them).
TEST(LossCpuTest, OtherDTypesAreRefusedWithTheReason) {
  for (const char* op : {kNll, kSce}) {
    for (DType dtype : {DType::kF16, DType::kBF16}) {
      KernelCase c{.node = MakeNode(op, 2), .opset = 13};
      c.inputs = {Tensor(dtype, Shape{2, 3}), I64({2}, {0, 1})};
      SCOPED_TRACE(std::string(op) + " " + std::string(DTypeName(dtype)));
      const std::string expected =
          std::string(DTypeName(dtype)) + (std::string(op) == kNll ? " input" : " scores") + " (f32 and f64 only)";
      EXPECT_EQ(RefusalOf(LossFactory(op), c), expected);
    }
  }
  // A reduction the spec does not know is left to the reference, which reports it.
  KernelCase c{.node = MakeNode(kNll, 2, 1, {{"reduction", StringAttr("max")}}), .opset = 13};
  c.inputs = {F32({2, 3}, {-1, -2, -3, -4, -5, -6}), I64({2}, {0, 1})};
  EXPECT_NE(RefusalOf(LossFactory(kNll), c).find("reduction 'max'"), std::string::npos);
}

}  // namespace
}  // namespace chipfit::testing
