// Accuracy drift: tensor metrics on hand cases, and whole runs against targets with noise of a
// designed power added to their weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/graph/onnx_import.h"
#include "core/runtime/compiled_model.h"
#include "core/tensor/half.h"
#include "core/tensor/random.h"
#include "devices/target_compiler.h"
#include "profilers/accuracy/drift.h"
#include "tests/core/onnx_builder.h"

namespace chipfit {
namespace {

using testing::AddNode;
using testing::AddValue;

Tensor F32(const Shape& shape, const std::vector<double>& values) {
  Tensor t(DType::kF32, shape);
  for (size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = static_cast<float>(values[i]);
  return t;
}

std::vector<double> Uniform(size_t n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<double> v(n);
  for (double& x : v) x = rng.Uniform(-1, 1);
  return v;
}

TEST(DriftCompareTest, IdenticalTensorsGiveTheSentinelNotNan) {
  const Tensor r = F32({64}, Uniform(64, 1));
  const DriftStats s = CompareTensors(r, r);
  EXPECT_EQ(s.sqnr_db, kExactSqnrDb);
  EXPECT_EQ(s.nmse, 0);
  EXPECT_EQ(s.cosine, 1);
  EXPECT_EQ(s.max_abs, 0);

  const Tensor zeros(DType::kF32, {8});
  const DriftStats z = CompareTensors(zeros, zeros);
  EXPECT_EQ(z.sqnr_db, kExactSqnrDb);
  EXPECT_EQ(z.cosine, 1);
}

TEST(DriftCompareTest, KnownNoisePowerGivesItsSqnr) {
  // actual = r + e with Σe²/Σr² = 1e-3 exactly (in double, before rounding to float): 30 dB.
  const std::vector<double> r = Uniform(4096, 2);
  std::vector<double> e = Uniform(4096, 3);
  double sr = 0, se = 0, emax = 0;
  for (size_t i = 0; i < r.size(); ++i) sr += r[i] * r[i], se += e[i] * e[i];
  const double scale = std::sqrt(1e-3 * sr / se);
  std::vector<double> a(r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    e[i] *= scale;
    a[i] = r[i] + e[i];
    emax = std::max(emax, std::abs(e[i]));
  }
  const DriftStats s = CompareTensors(F32({64, 64}, a), F32({64, 64}, r));
  EXPECT_NEAR(s.sqnr_db, 30.0, 0.5);
  EXPECT_NEAR(s.nmse, 1e-3, 1e-4);
  EXPECT_NEAR(s.max_abs, emax, 1e-5);
  EXPECT_GT(s.cosine, 0.999);
  EXPECT_LT(s.cosine, 1.0);
}

TEST(DriftCompareTest, CosineOfOrthogonalAndOppositeVectors) {
  EXPECT_NEAR(CompareTensors(F32({2}, {1, 0}), F32({2}, {0, 1})).cosine, 0.0, 1e-12);
  const DriftStats opposite = CompareTensors(F32({3}, {-1, -2, -3}), F32({3}, {1, 2, 3}));
  EXPECT_NEAR(opposite.cosine, -1.0, 1e-12);
  EXPECT_NEAR(opposite.nmse, 4.0, 1e-12);  // Σ(2r)²/Σr²
  EXPECT_NEAR(opposite.sqnr_db, -10 * std::log10(4.0), 1e-9);
}

TEST(DriftCompareTest, ZeroReferenceWithNonzeroActualIsFiniteAndWorst) {
  const DriftStats s = CompareTensors(F32({3}, {0, 0.5, 0}), Tensor(DType::kF32, {3}));
  EXPECT_TRUE(std::isfinite(s.sqnr_db));
  EXPECT_EQ(s.sqnr_db, -kExactSqnrDb);
  EXPECT_TRUE(std::isfinite(s.nmse));
  EXPECT_EQ(s.cosine, 0);
  EXPECT_EQ(s.max_abs, 0.5);
}

TEST(DriftCompareTest, NonFiniteValuesAndShapesAndIntegerDtypes) {
  const double nan = std::nan(""), inf = INFINITY;
  // Matched NaN and infinity are left out; the rest is compared as usual.
  const DriftStats matched = CompareTensors(F32({3}, {nan, inf, 1}), F32({3}, {nan, inf, 1}));
  EXPECT_EQ(matched.sqnr_db, kExactSqnrDb);
  const DriftStats unmatched = CompareTensors(F32({2}, {nan, 1}), F32({2}, {0, 1}));
  EXPECT_EQ(unmatched.sqnr_db, -kExactSqnrDb);
  EXPECT_FALSE(std::isnan(unmatched.cosine));
  EXPECT_EQ(CompareTensors(F32({2}, {1, 1}), F32({1, 2}, {1, 1})).sqnr_db, -kExactSqnrDb);

  Tensor a(DType::kI32, {3}), r(DType::kI32, {3});
  for (int i = 0; i < 3; ++i) a.data<int32_t>()[i] = r.data<int32_t>()[i] = i + 1;
  a.data<int32_t>()[2] = 4;
  const DriftStats s = CompareTensors(a, r);
  EXPECT_NEAR(s.nmse, 1.0 / 14.0, 1e-12);
  EXPECT_EQ(s.max_abs, 1);
}

// y = Softmax(MatMul(Relu(MatMul(x, w1)), w2)): x [kRows, kIn] → [kRows, kClasses] class scores.
constexpr int64_t kRows = 8, kIn = 32, kHidden = 32, kClasses = 10;
constexpr int kSamples = 4;

Result<Graph> MlpGraph(const std::vector<double>& w1, const std::vector<double>& w2) {
  onnx::ModelProto m = testing::NewModel("mlp");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {kRows, kIn});
  AddValue(g->mutable_output(), "y", {kRows, kClasses});
  testing::AddInitializer(g, "w1", {kIn, kHidden}, [&](int64_t i) { return w1[static_cast<size_t>(i)]; });
  testing::AddInitializer(g, "w2", {kHidden, kClasses}, [&](int64_t i) { return w2[static_cast<size_t>(i)]; });
  AddNode(g, "MatMul", {"x", "w1"}, {"h1"}, "mm1");
  AddNode(g, "Relu", {"h1"}, {"r1"}, "relu1");
  AddNode(g, "MatMul", {"r1", "w2"}, {"h2"}, "mm2");
  AddNode(g, "Softmax", {"h2"}, {"y"}, "softmax");
  ASSIGN_OR_RETURN(LoadedOnnxModel loaded, CheckOnnxModel(m, "mlp"));
  return ImportModel(loaded);
}

// x·w in double, x [rows, k], w [k, n].
std::vector<double> MatMul(const std::vector<double>& x, const std::vector<double>& w, int64_t k, int64_t n) {
  const auto rows = static_cast<int64_t>(x.size()) / k;
  std::vector<double> y(static_cast<size_t>(rows * n), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < k; ++i) y[r * n + j] += x[r * k + i] * w[i * n + j];
    }
  }
  return y;
}

// Noise for `w` whose output noise x·e has, averaged over `inputs` like MeasureDrift averages
// NMSE, exactly the normalised power `nmse` against x·w: the designed SQNR is −10·log10(nmse).
std::vector<double> DesignedNoise(const std::vector<std::vector<double>>& inputs, const std::vector<double>& w,
                                  int64_t k, int64_t n, double nmse, uint64_t seed) {
  std::vector<double> e = Uniform(w.size(), seed);
  double mean = 0;
  for (const auto& x : inputs) {
    const std::vector<double> y = MatMul(x, w, k, n), d = MatMul(x, e, k, n);
    double signal = 0, noise = 0;
    for (size_t i = 0; i < y.size(); ++i) signal += y[i] * y[i], noise += d[i] * d[i];
    mean += noise / signal / static_cast<double>(inputs.size());
  }
  const double scale = std::sqrt(nmse / mean);  // NMSE scales with the square of the noise
  for (double& v : e) v *= scale;
  return e;
}

std::vector<double> Plus(std::vector<double> a, const std::vector<double>& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}

size_t KernelIndex(const CompiledModel& model, const std::string& name) {
  for (size_t i = 0; i < model.kernels().size(); ++i) {
    if (model.kernels()[i].name == name) return i;
  }
  ADD_FAILURE() << "no kernel " << name;
  return 0;
}

class DriftMlpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    w1_ = Uniform(kIn * kHidden, 10);
    w2_ = Uniform(kHidden * kClasses, 11);
    for (int s = 0; s < kSamples; ++s) {
      inputs_.push_back(Uniform(kRows * kIn, 100 + static_cast<uint64_t>(s)));
      samples_.push_back({{"x", F32({kRows, kIn}, inputs_.back())}});
      // The rounding to float of the sample is what the models see.
      for (int64_t i = 0; i < kRows * kIn; ++i) inputs_.back()[i] = samples_.back().at("x").data<float>()[i];
    }
    auto graph = MlpGraph(w1_, w2_);
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    auto reference = Compile(*graph, Target{});
    ASSERT_TRUE(reference.ok()) << reference.status().ToString();
    reference_ = std::move(*reference);
  }

  std::unique_ptr<CompiledModel> CompileNoisy(const std::vector<double>& w1, const std::vector<double>& w2) {
    auto graph = MlpGraph(w1, w2);
    EXPECT_TRUE(graph.ok()) << graph.status().ToString();
    if (!graph.ok()) return nullptr;
    auto model = Compile(*graph, Target{});
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    return model.ok() ? std::move(*model) : nullptr;
  }

  // Top-1 agreement counted here from the two models' outputs, independently of MeasureDrift.
  double CountTop1(CompiledModel& target) {
    int agree = 0, rows = 0;
    for (const auto& sample : samples_) {
      auto a = target.Run(sample);
      auto r = reference_->Run(sample);
      EXPECT_TRUE(a.ok() && r.ok());
      if (!a.ok() || !r.ok()) return -1;
      for (int64_t row = 0; row < kRows; ++row) {
        const float* pa = (*a)[0].data<float>() + row * kClasses;
        const float* pr = (*r)[0].data<float>() + row * kClasses;
        agree += std::max_element(pa, pa + kClasses) - pa == std::max_element(pr, pr + kClasses) - pr ? 1 : 0;
        ++rows;
      }
    }
    return static_cast<double>(agree) / rows;
  }

  std::vector<double> w1_, w2_;
  std::vector<std::vector<double>> inputs_;
  std::vector<std::map<std::string, Tensor>> samples_;
  std::unique_ptr<CompiledModel> reference_;
};

TEST_F(DriftMlpTest, IdenticalRunsAreExactEverywhere) {
  auto target = CompileNoisy(w1_, w2_);
  ASSERT_NE(target, nullptr);
  auto report = MeasureDrift(*target, *reference_, samples_, {.random_inputs = false});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->kernels.size(), target->kernels().size());
  for (size_t k = 0; k < report->kernels.size(); ++k) {
    ASSERT_TRUE(report->kernels[k].has_value()) << target->kernels()[k].name;
    EXPECT_EQ(report->kernels[k]->sqnr_db, kExactSqnrDb) << target->kernels()[k].name;
    EXPECT_EQ(report->kernels[k]->cosine, 1);
  }
  const AccuracySummary& s = report->summary;
  EXPECT_EQ(s.output_sqnr_db, kExactSqnrDb);
  EXPECT_EQ(s.output_cosine, 1);
  ASSERT_TRUE(s.top1_agreement.has_value());
  EXPECT_EQ(*s.top1_agreement, 1.0);
  EXPECT_EQ(s.first_layer_below_threshold, "");
  EXPECT_FALSE(report->first_kernel_below_threshold.has_value());
  EXPECT_EQ(s.reference, "ref:fp32");
  EXPECT_EQ(s.samples, kSamples);
  EXPECT_FALSE(s.random_inputs);
  ASSERT_EQ(report->outputs.size(), 1u);
  EXPECT_EQ(report->outputs[0].name, "y");
}

TEST_F(DriftMlpTest, NoiseOfDesignedPowerInTheFirstLayerGivesItsSqnr) {
  const std::vector<double> e1 = DesignedNoise(inputs_, w1_, kIn, kHidden, 1e-3, 20);  // 30 dB
  auto target = CompileNoisy(Plus(w1_, e1), w2_);
  ASSERT_NE(target, nullptr);
  auto report = MeasureDrift(*target, *reference_, samples_, {.threshold_db = 35});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const size_t mm1 = KernelIndex(*target, "mm1");
  ASSERT_TRUE(report->kernels[mm1].has_value());
  EXPECT_NEAR(report->kernels[mm1]->sqnr_db, 30.0, 0.5);
  EXPECT_NEAR(report->kernels[mm1]->nmse, 1e-3, 1e-4);
  EXPECT_EQ(report->summary.first_layer_below_threshold, "mm1");
  EXPECT_EQ(report->first_kernel_below_threshold, mm1);
  // The error reaches the output, softened by Relu and Softmax but not gone.
  EXPECT_LT(report->summary.output_sqnr_db, kExactSqnrDb);
  EXPECT_GT(report->summary.output_sqnr_db, 20.0);
  ASSERT_TRUE(report->summary.top1_agreement.has_value());
  EXPECT_DOUBLE_EQ(*report->summary.top1_agreement, CountTop1(*target));
  EXPECT_TRUE(report->summary.random_inputs);
}

TEST_F(DriftMlpTest, FirstLayerBelowThresholdNamesTheNoisyLayer) {
  // Exact first layer, 20 dB in the second: the report must not blame mm1 or relu1.
  std::vector<std::vector<double>> hidden;
  for (const auto& x : inputs_) {
    std::vector<double> h = MatMul(x, w1_, kIn, kHidden);
    for (double& v : h) v = std::max(v, 0.0);
    hidden.push_back(h);
  }
  const std::vector<double> e2 = DesignedNoise(hidden, w2_, kHidden, kClasses, 1e-2, 21);  // 20 dB
  auto target = CompileNoisy(w1_, Plus(w2_, e2));
  ASSERT_NE(target, nullptr);
  auto report = MeasureDrift(*target, *reference_, samples_);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->kernels[KernelIndex(*target, "mm1")]->sqnr_db, kExactSqnrDb);
  EXPECT_EQ(report->kernels[KernelIndex(*target, "relu1")]->sqnr_db, kExactSqnrDb);
  const size_t mm2 = KernelIndex(*target, "mm2");
  EXPECT_NEAR(report->kernels[mm2]->sqnr_db, 20.0, 0.5);
  EXPECT_EQ(report->summary.first_layer_below_threshold, "mm2");
  EXPECT_EQ(report->first_kernel_below_threshold, mm2);
  EXPECT_LT(report->summary.output_sqnr_db, 30.0);
}

TEST_F(DriftMlpTest, ClassifierOutputAndErrorsAreChecked) {
  auto target = CompileNoisy(w1_, w2_);
  ASSERT_NE(target, nullptr);
  EXPECT_EQ(MeasureDrift(*target, *reference_, {}).status().code(), StatusCode::kInvalidArgument);
  auto unknown = MeasureDrift(*target, *reference_, samples_, {.classifier_output = "logits"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("logits"), std::string::npos);
  auto named = MeasureDrift(*target, *reference_, samples_, {.classifier_output = "y"});
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  EXPECT_EQ(named->summary.top1_agreement, 1.0);
  // A missing input is reported with the model that refused it.
  auto bad = MeasureDrift(*target, *reference_, {{{"z", samples_[0].at("x")}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("reference ref:fp32"), std::string::npos) << bad.status().ToString();
}

// Conv + Relu fused on cpu:fp32: compared at the fused kernel's output, the inner Conv value (which
// only the reference produces) is skipped rather than reported as missing or wrong.
TEST(DriftFusionTest, FusedKernelsAreComparedAtTheirOutputs) {
  onnx::ModelProto m = testing::NewModel("conv_relu");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {1, 4, 8, 8});
  AddValue(g->mutable_output(), "y", {1, 8, 8, 8});
  const std::vector<double> w = Uniform(8 * 4 * 3 * 3, 5);
  testing::AddInitializer(g, "w", {8, 4, 3, 3}, [&](int64_t i) { return w[static_cast<size_t>(i)]; });
  auto* conv = AddNode(g, "Conv", {"x", "w"}, {"c"}, "conv");
  auto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  AddNode(g, "Relu", {"c"}, {"y"}, "relu");
  auto loaded = CheckOnnxModel(m, "conv_relu");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto graph = ImportModel(*loaded);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();

  auto reference = Compile(*graph, Target{});
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  auto target = CompileForTarget(*graph, *ParseTarget("cpu:fp32"));
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  ASSERT_EQ((*target)->stats().fused, 1);

  const std::vector<std::map<std::string, Tensor>> samples = {{{"x", SeededTensor(DType::kF32, {1, 4, 8, 8}, 7)}}};
  auto report = MeasureDrift(**target, **reference, samples);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  int compared = 0;
  for (size_t k = 0; k < report->kernels.size(); ++k) {
    if (!report->kernels[k]) continue;
    ++compared;
    EXPECT_EQ((*target)->kernels()[k].outputs, std::vector<std::string>{"y"});
    EXPECT_GT(report->kernels[k]->sqnr_db, 80.0);  // fp32 oneDNN against the fp32 reference
  }
  EXPECT_EQ(compared, 1);
  EXPECT_EQ(report->summary.first_layer_below_threshold, "");
  EXPECT_FALSE(report->summary.top1_agreement.has_value());  // rank 4: not class scores
}

// NaN/Inf the target makes where the reference is finite, and values saturated at the largest
// finite magnitude of the target's dtype, are not measurements: worst figures, the reason, and
// whether the target made them.
TEST(DriftCompareTest, NonFiniteAndSaturatedValuesAreNamed) {
  const double nan = std::nan(""), inf = INFINITY;
  const Comparison made = CompareValues(F32({4}, {nan, inf, 1, 2}), F32({4}, {0, 1, 1, 2}));
  EXPECT_TRUE(made.target_non_finite);
  EXPECT_EQ(made.stats.sqnr_db, -kExactSqnrDb);
  EXPECT_NE(made.stats.invalid.find("1 NaN, 1 ±Inf"), std::string::npos) << made.stats.invalid;
  EXPECT_NE(made.stats.invalid.find("of 4 values"), std::string::npos) << made.stats.invalid;

  Tensor half(DType::kF16, {2});
  half.data<Float16>()[0] = Float16(65504.0f);
  half.data<Float16>()[1] = Float16(1.0f);
  const Comparison saturated = CompareValues(half, F32({2}, {70000, 1}));
  EXPECT_TRUE(saturated.target_non_finite);
  EXPECT_NE(saturated.stats.invalid.find("saturated at ±65504 (the largest f16)"), std::string::npos)
      << saturated.stats.invalid;

  // The reference's own NaN is not the target's doing.
  const Comparison theirs = CompareValues(F32({2}, {1, 2}), F32({2}, {nan, 2}));
  EXPECT_FALSE(theirs.target_non_finite);
  EXPECT_NE(theirs.stats.invalid.find("the reference has 1 NaN/Inf"), std::string::npos) << theirs.stats.invalid;

  // Finite values keep honest figures and no reason; so does a NaN both sides share.
  const Comparison fine = CompareValues(F32({3}, {nan, 1, 2.5}), F32({3}, {nan, 1, 2}));
  EXPECT_TRUE(fine.stats.invalid.empty());
  EXPECT_FALSE(fine.target_non_finite);
  EXPECT_NEAR(fine.stats.nmse, 0.25 / 5.0, 1e-12);
  EXPECT_EQ(CompareTensors(F32({2}, {1, 1}), F32({1, 2}, {1, 1})).invalid,
            "shapes differ: target [2], reference [1x2]");
}

// y = Div(Relu(x), d) + 1 with d = 0 in the target and 1 in the reference: the target's Div makes
// ±Inf (and NaN at 0/0) that the Add carries on. The summary names the Div, not the Add, and the
// output's figures are flagged, not shown as −200 dB.
Result<Graph> DivGraph(float divisor) {
  onnx::ModelProto m = testing::NewModel("div");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {8});
  AddValue(g->mutable_output(), "y", {8});
  testing::AddInitializer(g, "d", {8}, [&](int64_t) { return divisor; });
  testing::AddInitializer(g, "one", {8}, [](int64_t) { return 1.0; });
  AddNode(g, "Relu", {"x"}, {"r"}, "relu");
  AddNode(g, "Div", {"r", "d"}, {"q"}, "div");
  AddNode(g, "Add", {"q", "one"}, {"y"}, "add");
  ASSIGN_OR_RETURN(LoadedOnnxModel loaded, CheckOnnxModel(m, "div"));
  return ImportModel(loaded);
}

TEST(DriftNonFiniteTest, TheFirstLayerThatMadeNonFiniteValuesIsNamed) {
  auto reference_graph = DivGraph(1.0f);
  auto target_graph = DivGraph(0.0f);
  ASSERT_TRUE(reference_graph.ok() && target_graph.ok());
  auto reference = Compile(*reference_graph, Target{});
  auto target = Compile(*target_graph, Target{});
  ASSERT_TRUE(reference.ok() && target.ok());
  const std::vector<std::map<std::string, Tensor>> samples = {{{"x", F32({8}, Uniform(8, 3))}}};
  auto report = MeasureDrift(**target, **reference, samples);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const AccuracySummary& s = report->summary;
  EXPECT_EQ(s.first_non_finite_layer, "div");
  ASSERT_TRUE(report->first_non_finite_kernel.has_value());
  EXPECT_EQ(*report->first_non_finite_kernel, KernelIndex(**target, "div"));
  EXPECT_NE(s.non_finite.find("q: target made"), std::string::npos) << s.non_finite;
  EXPECT_NE(s.non_finite.find("±Inf"), std::string::npos) << s.non_finite;
  // The exact Relu before it keeps its honest figures.
  const auto& relu = report->kernels[KernelIndex(**target, "relu")];
  ASSERT_TRUE(relu.has_value());
  EXPECT_EQ(relu->sqnr_db, kExactSqnrDb);
  EXPECT_TRUE(relu->invalid.empty());
  const auto& add = report->kernels[KernelIndex(**target, "add")];
  ASSERT_TRUE(add.has_value());
  EXPECT_FALSE(add->invalid.empty());
  EXPECT_NE(s.output_invalid.find("y: target made"), std::string::npos) << s.output_invalid;
  EXPECT_EQ(s.output_sqnr_db, -kExactSqnrDb);  // kept worst for limits; the JSON writes null

  // The same graphs the other way round: the reference's Inf is not the target's doing.
  auto swapped = MeasureDrift(**reference, **target, samples);
  ASSERT_TRUE(swapped.ok()) << swapped.status().ToString();
  EXPECT_EQ(swapped->summary.first_non_finite_layer, "");
  EXPECT_EQ(swapped->summary.non_finite, "");
}

}  // namespace
}  // namespace chipfit
