// The int8 accuracy search aimed at a task metric (--auto-fp32-agreement), OutputAgreement, the task
// agreement it reads, and the choice of int8 only where it measures faster than fp32.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/graph/onnx_import.h"
#include "core/runtime/compiled_model.h"
#include "core/tensor/random.h"
#include "devices/target_compiler.h"
#include "profilers/accuracy/task_metrics.h"
#include "tests/core/onnx_builder.h"

namespace chipfit {
namespace {

using testing::AddNode;
using testing::AddValue;

void AddConv(onnx::GraphProto* g, const std::string& name, const std::string& in, const std::string& out,
             int64_t in_channels, int64_t out_channels, uint64_t seed) {
  SplitMix64 rng(seed);
  testing::AddInitializer(g, name + "_w", {out_channels, in_channels, 3, 3},
                          [&](int64_t) { return rng.Uniform(-0.3, 0.3); });
  auto* conv = AddNode(g, "Conv", {in, name + "_w"}, {out}, name);
  auto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
}

// Three convolutions big enough for int8 (>= 2^17 multiply-adds each), a small one to one channel kept
// in fp32, and a Sigmoid: a [1, 1, 16, 16] probability map, which the task metrics score by IoU.
Graph MapModel() {
  onnx::ModelProto m = testing::NewModel("map");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {1, 4, 16, 16});
  AddValue(g->mutable_output(), "y", {1, 1, 16, 16});
  AddConv(g, "conv1", "x", "c1", 4, 16, 1);
  AddNode(g, "Relu", {"c1"}, {"r1"}, "relu1");
  AddConv(g, "conv2", "r1", "c2", 16, 16, 2);
  AddNode(g, "Relu", {"c2"}, {"r2"}, "relu2");
  AddConv(g, "conv3", "r2", "c3", 16, 16, 3);
  AddNode(g, "Relu", {"c3"}, {"r3"}, "relu3");
  AddConv(g, "head", "r3", "logits", 16, 1, 4);
  AddNode(g, "Sigmoid", {"logits"}, {"y"}, "sigmoid");
  auto loaded = CheckOnnxModel(m, "map");
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto graph = ImportModel(*loaded);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return std::move(graph).value();
}

std::vector<std::map<std::string, Tensor>> Samples(int n) {
  std::vector<std::map<std::string, Tensor>> samples;
  for (int i = 0; i < n; ++i) samples.push_back({{"x", SeededTensor(DType::kF32, {1, 4, 16, 16}, 40 + i)}});
  return samples;
}

int Int8Kernels(const CompiledModel& model) {
  const auto& kernels = model.kernels();
  return static_cast<int>(
      std::count_if(kernels.begin(), kernels.end(), [](const KernelInfo& k) { return k.precision == "int8"; }));
}

TEST(OutputAgreementTest, AMapAgainstItselfAgreesFullyAndAnOutputWithoutATaskHasNone) {
  const Graph graph = MapModel();
  auto a = CompileForTarget(graph, *ParseTarget("cpu:fp32"));
  auto b = CompileForTarget(graph, *ParseTarget("cpu:fp32"));
  ASSERT_TRUE(a.ok() && b.ok());
  auto same = OutputAgreement(**a, **b, Samples(2), TaskOptions{});
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  ASSERT_TRUE(same->has_value());
  EXPECT_DOUBLE_EQ(**same, 1.0);
  // The same output read as having no task: no agreement, so only the SQNR can count.
  TaskOptions none;
  none.overrides["y"] = TaskKind::kNone;
  auto untasked = OutputAgreement(**a, **b, Samples(2), none);
  ASSERT_TRUE(untasked.ok());
  EXPECT_FALSE(untasked->has_value());
}

// An agreement that falls by 0.1 per int8 kernel: the search must revert the worst layers one at a
// time until it reaches 0.85, i.e. until one int8 kernel is left, and report the agreement it reached.
TEST(AccuracySearchTest, RevertsLayersUntilTheTaskAgreementIsReached) {
  const Graph graph = MapModel();
  Int8Options int8;
  int8.samples = Samples(2);
  int8.agreement = [](CompiledModel& quantized, CompiledModel&,
                      const std::vector<std::map<std::string, Tensor>>&) -> Result<std::optional<double>> {
    return std::optional<double>(1.0 - 0.1 * Int8Kernels(quantized));
  };

  QuantReport plain;
  auto without = CompileForTarget(graph, *ParseTarget("cpu:int8"), {}, int8, &plain);
  ASSERT_TRUE(without.ok()) << without.status().ToString();
  ASSERT_EQ(plain.int8_kernels, 3) << "three convolutions in int8, the small head in fp32";
  EXPECT_TRUE(plain.auto_reverted.empty());
  EXPECT_FALSE(plain.output_agreement.has_value()) << "not asked for, not measured";

  int8.target_agreement = 0.85;
  QuantReport report;
  auto model = CompileForTarget(graph, *ParseTarget("cpu:int8"), {}, int8, &report);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(report.auto_reverted.size(), 2u);
  EXPECT_EQ(report.int8_kernels, 1);
  ASSERT_TRUE(report.output_agreement.has_value());
  EXPECT_NEAR(*report.output_agreement, 0.9, 1e-9);
  for (const KernelInfo& k : (*model)->kernels()) {
    if (std::find(report.auto_reverted.begin(), report.auto_reverted.end(), k.name) == report.auto_reverted.end()) {
      continue;
    }
    EXPECT_EQ(k.precision, "fp32") << k.name;
  }

  // A target it cannot reach stops at max_reverted with what it reached.
  int8.target_agreement = 0.99;
  int8.max_reverted = 1;
  QuantReport capped;
  ASSERT_TRUE(CompileForTarget(graph, *ParseTarget("cpu:int8"), {}, int8, &capped).ok());
  EXPECT_EQ(capped.auto_reverted.size(), 1u);
  EXPECT_NEAR(capped.output_agreement.value_or(0), 0.8, 1e-9);
}

// The rule of the speed choice: int8 stays only where its median is below fp32's (a tie goes to fp32,
// which is exact).
TEST(Int8SpeedChoiceTest, LayersNoFasterInInt8AreTheOnesKeptInFp32) {
  const std::vector<LayerSpeed> speeds = {{"faster", {"a"}, 0.5, 1.0},
                                          {"slower", {"b", "c"}, 2.0, 1.0},
                                          {"tie", {"d"}, 1.0, 1.0},
                                          {"unmeasured", {"e"}, 0.0, 0.0}};
  const std::vector<LayerSpeed> kept = LayersThatDoNotPay(speeds);
  std::vector<std::string> names;
  for (const LayerSpeed& l : kept) names.push_back(l.name);
  EXPECT_EQ(names, (std::vector<std::string>{"slower", "tie", "unmeasured"}));
  EXPECT_EQ(kept[0].nodes, (std::vector<std::string>{"b", "c"}));
}

// Timed for real on the map model: every int8 layer was measured against its fp32 twin, each layer it
// kept in fp32 runs in fp32 with the timing as its reason, and the others still run in int8.
TEST(Int8SpeedChoiceTest, TimedChoiceKeepsTheSlowerLayersInFp32WithTheirTimes) {
  const Graph graph = MapModel();
  Int8Options int8;
  int8.samples = Samples(1);
  int8.fp32_where_faster = true;
  int8.speed_min_runs = 5;
  int8.speed_min_seconds = 0.05;
  QuantReport report;
  auto model = CompileForTarget(graph, *ParseTarget("cpu:int8"), {}, int8, &report);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(report.int8_kernels + static_cast<int>(report.kept_slower.size()), 3)
      << "each of the three int8-eligible convolutions is either int8 or kept as slower";
  for (const LayerSpeed& layer : report.kept_slower) {
    EXPECT_GT(layer.fp32_ms, 0) << layer.name << ": not timed";
    EXPECT_GE(layer.low_ms, layer.fp32_ms) << layer.name;
    bool found = false;
    for (const KernelInfo& k : (*model)->kernels()) {
      if (k.name != layer.name) continue;
      found = true;
      EXPECT_EQ(k.precision, "fp32") << k.name;
      EXPECT_NE(k.precision_reason.find("int8 measured no faster"), std::string::npos) << k.precision_reason;
    }
    EXPECT_TRUE(found) << layer.name;
  }
}

// The same choice on a bf16 target: every layer the plain bf16 compile runs in bf16 is timed, and each
// one no faster than fp32 runs in fp32 with both times as its reason.
TEST(Bf16SpeedChoiceTest, TimedChoiceKeepsTheSlowerLayersInFp32WithTheirTimes) {
  const Graph graph = MapModel();
  const Target bf16 = *ParseTarget("cpu:bf16");
  auto plain = CompileForTarget(graph, bf16);
  if (!plain.ok() && plain.status().code() == StatusCode::kUnsupported) GTEST_SKIP() << plain.status().message();
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  std::set<std::string> bf16_layers;
  for (const KernelInfo& k : (*plain)->kernels()) {
    if (k.precision == "bf16") bf16_layers.insert(k.name);
  }
  ASSERT_FALSE(bf16_layers.empty());

  Int8Options options;
  options.samples = Samples(1);
  options.fp32_where_faster = true;
  options.speed_min_runs = 5;
  options.speed_min_seconds = 0.05;
  QuantReport report;
  auto model = CompileForTarget(graph, bf16, {}, options, &report);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  std::set<std::string> kept;
  for (const LayerSpeed& layer : report.kept_slower) {
    EXPECT_GT(layer.fp32_ms, 0) << layer.name << ": not timed";
    EXPECT_GE(layer.low_ms, layer.fp32_ms) << layer.name;
    kept.insert(layer.name);
  }
  for (const KernelInfo& k : (*model)->kernels()) {
    if (!bf16_layers.contains(k.name)) continue;
    if (kept.contains(k.name)) {
      EXPECT_EQ(k.precision, "fp32") << k.name;
      EXPECT_NE(k.precision_reason.find("bf16 measured no faster"), std::string::npos) << k.precision_reason;
    } else {
      EXPECT_EQ(k.precision, "bf16") << k.name << ": " << k.precision_reason;
    }
  }
}

}  // namespace
}  // namespace chipfit
