// The profile pipeline on kernels of known duration (busy loops, not sleeps: a descheduled sleep
// would measure the scheduler): per-layer times, end-to-end statistics, overhead bookkeeping.
#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "core/graph/onnx_import.h"
#include "profilers/latency/latency_profiler.h"
#include "profilers/latency/latency_stats.h"
#include "tests/core/onnx_builder.h"

namespace chipfit {
namespace {

// Copies its input after spinning for `us` microseconds.
class BusyKernel final : public IKernel {
 public:
  explicit BusyKernel(int us) : us_(us) {}
  Status Run(KernelContext& ctx) override {
    const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us_);
    while (std::chrono::steady_clock::now() < end) {
    }
    std::copy_n(ctx.input(0)->data<float>(), ctx.input(0)->numel(), ctx.output(0)->data<float>());
    return Status();
  }

 private:
  int us_;
};

const KernelTable& BusyTable() {
  static const KernelTable table = [] {
    KernelTable t;
    t.Add("Relu", "", DeviceKind::kCpu, Precision::kFp32,
          {"busy:200us", [](const KernelInit&) -> Result<std::unique_ptr<IKernel>> {
             return std::unique_ptr<IKernel>(std::make_unique<BusyKernel>(200));
           }});
    t.Add("Sigmoid", "", DeviceKind::kCpu, Precision::kFp32,
          {"busy:600us", [](const KernelInit&) -> Result<std::unique_ptr<IKernel>> {
             return std::unique_ptr<IKernel>(std::make_unique<BusyKernel>(600));
           }});
    return t;
  }();
  return table;
}

TEST(LatencyProfilerTest, KnownKernelTimesAddUpToTheEndToEndTime) {
  onnx::ModelProto m = testing::NewModel("busy");
  auto* g = m.mutable_graph();
  testing::AddValue(g->mutable_input(), "x", {64});
  testing::AddValue(g->mutable_output(), "y", {64});
  testing::AddNode(g, "Relu", {"x"}, {"a"}, "relu");
  testing::AddNode(g, "Sigmoid", {"a"}, {"y"}, "sigmoid");
  auto loaded = CheckOnnxModel(m, "busy");
  ASSERT_TRUE(loaded.ok());
  auto graph = ImportModel(*loaded);
  ASSERT_TRUE(graph.ok());
  auto model = Compile(*graph, *ParseTarget("cpu:fp32"), {.kernels = &BusyTable()});
  ASSERT_TRUE(model.ok()) << model.status().ToString();

  ProfileSettings settings{.warmup = 3, .warmup_min_s = 0, .iterations = 30, .min_time_s = 0.05, .layer_runs = 15};
  // Every slot counts as quiet: this test is about how the time adds up, not about a busy machine
  // (the ctest beside it) dropping slots until the budget runs out.
  settings.slot_other_share = [](int, size_t) -> std::optional<double> { return 0.0; };
  TargetResult result;
  std::vector<std::string> phases;
  Status s = RunProfilePipeline(**model, {{"x", Tensor(DType::kF32, {64})}}, settings, {}, result, {},
                                [&](const std::string& phase, const std::string&) {
                                  if (phases.empty() || phases.back() != phase) phases.push_back(phase);
                                });
  ASSERT_TRUE(s.ok()) << s.ToString();
  // Warm-up, then rounds of end-to-end runs and per-layer passes.
  ASSERT_GE(phases.size(), 3u);
  EXPECT_EQ(phases[0], "warm-up");
  for (size_t i = 1; i < phases.size(); ++i) EXPECT_EQ(phases[i], i % 2 == 1 ? "end-to-end" : "per-layer");
  EXPECT_GE(result.rounds.size(), 10u);
  ASSERT_EQ(result.layers.size(), 2u);
  EXPECT_EQ(result.layers[0].implementation, "busy:200us");
  // A busy kernel never takes less than its spin; preemption can only add time.
  EXPECT_GE(result.layers[0].time_p50_ms, 0.200);
  EXPECT_GE(result.layers[1].time_p50_ms, 0.600);
  EXPECT_LT(result.layers[0].time_p50_ms, 0.200 * 3);
  EXPECT_GE(result.latency.iterations, 30);
  EXPECT_GE(result.latency.p50, 0.800);
  EXPECT_LE(result.latency.min, result.latency.p50);
  EXPECT_LE(result.latency.p50, result.latency.p90);
  EXPECT_LE(result.latency.p90, result.latency.p99);
  // Σ layer p50 / e2e p50: the observer adds little to kernels this long.
  EXPECT_GT(result.instrumentation_overhead, 0.8);
  EXPECT_LT(result.instrumentation_overhead, 1.2);
  const LatencyStats& l = result.latency;
  EXPECT_EQ(l.noisy, (l.p90 - l.p50) / l.p50 > kNoisyTailSpread || l.mad / l.p50 > kNoisyMadSpread);
  EXPECT_EQ(static_cast<int>(l.samples.size()), l.iterations);  // few runs: every one kept, in order
  EXPECT_FALSE(l.samples_sketch);
  // The first observed run's timeline: kernels in order, the first at 0, each after the one before.
  ASSERT_TRUE(result.layers[0].observed_start_ms && result.layers[1].observed_start_ms);
  EXPECT_EQ(*result.layers[0].observed_start_ms, 0.0);
  EXPECT_GE(*result.layers[1].observed_start_ms, *result.layers[0].observed_ms);
}

// Three copies of one model timed in rounds: each takes every place in the order, a busy slot is
// dropped and made up by another round, and a target busy in every slot is unreliable.
TEST(LatencyProfilerTest, RoundsInterleaveTargetsAndDropBusySlots) {
  onnx::ModelProto m = testing::NewModel("busy");
  auto* g = m.mutable_graph();
  testing::AddValue(g->mutable_input(), "x", {16});
  testing::AddValue(g->mutable_output(), "y", {16});
  testing::AddNode(g, "Relu", {"x"}, {"y"}, "relu");
  auto graph = ImportModel(*CheckOnnxModel(m, "busy"));
  ASSERT_TRUE(graph.ok());
  std::vector<std::unique_ptr<CompiledModel>> models;
  for (int i = 0; i < 3; ++i) {
    auto model = Compile(*graph, *ParseTarget("cpu:fp32"), {.kernels = &BusyTable()});
    ASSERT_TRUE(model.ok());
    models.push_back(std::move(model).value());
  }
  const std::map<std::string, Tensor> inputs = {{"x", Tensor(DType::kF32, {16})}};
  std::vector<TargetResult> results(3);
  std::vector<RoundTarget> targets(3);
  for (size_t i = 0; i < 3; ++i) targets[i] = {.model = models[i].get(), .inputs = &inputs, .result = &results[i]};
  ProfileSettings settings{.warmup = 2, .warmup_min_s = 0, .iterations = 10, .min_time_s = 0, .layer_runs = 5};
  settings.rounds.min_rounds = 5;
  settings.max_time_s = 1;
  settings.machine_cpus = 2;
  settings.threads = 1;
  // Target 1 is busy in rounds 2 and 3 (others on 1.8 of 2 CPUs); target 2 in every round.
  settings.slot_other_share = [](int round, size_t target) -> std::optional<double> {
    if (target == 2 || (target == 1 && (round == 2 || round == 3))) return 0.9;
    return 0.1;
  };
  RunProfileRounds(targets, settings);
  for (const RoundTarget& t : targets) ASSERT_TRUE(t.status.ok()) << t.status.ToString();

  // Target 0: five clean rounds, first, second and third in turn.
  ASSERT_EQ(results[0].rounds.size(), 5u);
  std::set<int> places;
  for (const TimingRound& r : results[0].rounds) {
    EXPECT_TRUE(r.clean);
    EXPECT_EQ(r.threads, 1);
    places.insert(r.position);
  }
  EXPECT_EQ(places, (std::set<int>{0, 1, 2}));
  EXPECT_FALSE(results[0].unreliable);
  EXPECT_GE(results[0].latency.iterations, 10);
  // Target 1: two dropped slots made up by two more rounds; its latency only from the clean ones.
  ASSERT_EQ(results[1].rounds.size(), 7u);
  int clean = 0, runs = 0;
  for (const TimingRound& r : results[1].rounds) {
    clean += r.clean ? 1 : 0;
    runs += r.clean ? r.runs : 0;
    if (!r.clean) {
      EXPECT_NE(r.dropped.find("1.8 of 2 CPUs"), std::string::npos) << r.dropped;
    }
  }
  EXPECT_EQ(clean, 5);
  EXPECT_EQ(results[1].latency.iterations, runs);
  EXPECT_FALSE(results[1].unreliable);
  // Target 2: busy in every slot until the budget ran out: unreliable, with the reason, layers still shown.
  EXPECT_TRUE(results[2].unreliable);
  EXPECT_NE(results[2].unreliable_reason.find("only 0 of"), std::string::npos) << results[2].unreliable_reason;
  EXPECT_EQ(results[2].layers.size(), 1u);
  EXPECT_GT(results[2].layers[0].time_p50_ms, 0);
  ASSERT_TRUE(results[0].attribution);
  EXPECT_GT(results[0].attribution->attributed_ms, 0);
}

TEST(LatencyProfilerTest, StopCancelsBetweenRuns) {
  onnx::ModelProto m = testing::NewModel("busy");
  auto* g = m.mutable_graph();
  testing::AddValue(g->mutable_input(), "x", {4});
  testing::AddValue(g->mutable_output(), "y", {4});
  testing::AddNode(g, "Relu", {"x"}, {"y"}, "relu");
  auto graph = ImportModel(*CheckOnnxModel(m, "busy"));
  ASSERT_TRUE(graph.ok());
  auto model = Compile(*graph, *ParseTarget("cpu:fp32"), {.kernels = &BusyTable()});
  ASSERT_TRUE(model.ok());
  std::stop_source stop;
  stop.request_stop();
  TargetResult result;
  Status s = RunProfilePipeline(**model, {{"x", Tensor(DType::kF32, {4})}}, {}, {}, result, stop.get_token());
  EXPECT_EQ(s.code(), StatusCode::kCancelled);
  EXPECT_FALSE(result.partial) << "nothing was timed";

  // Stopped in the fourth round: cancelled, yet the three clean rounds' figures are kept, said partial.
  std::stop_source late;
  ProfileSettings settings{.warmup = 1, .warmup_min_s = 0, .iterations = 40, .min_time_s = 0, .layer_runs = 10};
  settings.slot_other_share = [](int, size_t) -> std::optional<double> { return 0.0; };
  TargetResult kept;
  s = RunProfilePipeline(**model, {{"x", Tensor(DType::kF32, {4})}}, settings, {}, kept, late.get_token(),
                         [&](const std::string& phase, const std::string& detail) {
                           if (phase == "end-to-end" && detail == "round 4") {
                             late.request_stop();
                           }
                         });
  EXPECT_EQ(s.code(), StatusCode::kCancelled);
  EXPECT_TRUE(kept.partial);
  EXPECT_GT(kept.latency.iterations, 0);
  EXPECT_GT(kept.latency.p50, 0);
  ASSERT_EQ(kept.layers.size(), 1u);
  EXPECT_GT(kept.layers[0].time_p50_ms, 0);
  EXPECT_NE(kept.notes.back().find("are partial"), std::string::npos) << kept.notes.back();
}

}  // namespace
}  // namespace chipfit
