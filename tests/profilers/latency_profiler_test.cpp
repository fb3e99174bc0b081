// The profile pipeline on kernels of known duration (busy loops, not sleeps: a descheduled sleep
// would measure the scheduler): per-layer times, end-to-end statistics, overhead bookkeeping.
#include <gtest/gtest.h>

#include <chrono>

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

  const ProfileSettings settings{
      .warmup = 3, .warmup_min_s = 0, .iterations = 30, .min_time_s = 0.05, .layer_runs = 15};
  TargetResult result;
  std::vector<std::string> phases;
  Status s = RunProfilePipeline(**model, {{"x", Tensor(DType::kF32, {64})}}, settings, {}, result, {},
                                [&](const std::string& phase, const std::string&) {
                                  if (phases.empty() || phases.back() != phase) phases.push_back(phase);
                                });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(phases, (std::vector<std::string>{"warm-up", "end-to-end", "per-layer"}));
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
}

}  // namespace
}  // namespace chipfit
