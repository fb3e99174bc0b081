// The Chrome trace of `chipfit profile --trace FILE`: slices where one observed run put its kernels,
// gaps included, and the back-to-back p50 layout (said so) only for runs that recorded no start times.
#include "profilers/trace.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace chipfit {
namespace {

using nlohmann::json;

LayerResult Layer(std::string name, std::vector<std::string> nodes, double p50_ms) {
  LayerResult layer;
  layer.name = std::move(name);
  layer.op = "FusedConv";
  layer.onnx_nodes = std::move(nodes);
  layer.device = "cpu";
  layer.precision = "fp32";
  layer.time_p50_ms = p50_ms;
  layer.time_p90_ms = p50_ms * 1.1;
  return layer;
}

TargetResult Target(const char* name) {
  TargetResult t;
  t.target = *ParseTarget(name);
  return t;
}

// The "X" slices of the track with this pid, in the order written.
std::vector<json> Slices(const json& trace, int pid) {
  std::vector<json> out;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["pid"] == pid) out.push_back(e);
  }
  return out;
}

TEST(ChromeTraceTest, ObservedRunGivesRealStartTimesAndGaps) {
  TargetResult t = Target("cpu:fp32");
  t.layers = {Layer("conv1", {"conv1", "bn1", "relu1"}, 0.010), Layer("pool1", {"pool1"}, 0.002),
              Layer("fc", {"fc"}, 0.001)};
  // The observed run: conv1 took longer than its p50, and 5 µs passed before pool1 started.
  t.layers[0].observed_start_ms = 0.0;
  t.layers[0].observed_ms = 0.012;
  t.layers[1].observed_start_ms = 0.017;
  t.layers[1].observed_ms = 0.0021;
  t.layers[2].observed_start_ms = 0.0200;
  t.layers[2].observed_ms = 0.0009;

  const json trace = ChromeTrace({t});
  const std::vector<json> slices = Slices(trace, 1);
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_EQ(slices[0]["name"], "conv1+bn1+relu1");
  EXPECT_DOUBLE_EQ(slices[0]["ts"].get<double>(), 0.0);
  EXPECT_NEAR(slices[0]["dur"].get<double>(), 12.0, 1e-9);
  EXPECT_NEAR(slices[1]["ts"].get<double>(), 17.0, 1e-9);  // not 12 (back to back) nor 10 (p50)
  EXPECT_NEAR(slices[1]["dur"].get<double>(), 2.1, 1e-9);
  EXPECT_NEAR(slices[2]["ts"].get<double>(), 20.0, 1e-9);
  EXPECT_NEAR(slices[2]["dur"].get<double>(), 0.9, 1e-9);
  // The gap between conv1's end and pool1's start is there to see.
  EXPECT_GT(slices[1]["ts"].get<double>(), slices[0]["ts"].get<double>() + slices[0]["dur"].get<double>() + 4.0);
  for (const json& s : slices) {
    EXPECT_EQ(s["args"]["timing"], "one observed run: real start times");
    EXPECT_TRUE(s["args"].contains("p50_ms"));  // the representative time stays at hand
  }
}

TEST(ChromeTraceTest, OlderRunsFallBackToBackToBackP50AndSaySo) {
  TargetResult t = Target("cpu:int8");
  t.layers = {Layer("conv1", {"conv1"}, 0.010), Layer("pool1", {"pool1"}, 0.002), Layer("fc", {"fc"}, 0.001)};
  const json trace = ChromeTrace({t});
  const std::vector<json> slices = Slices(trace, 1);
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_NEAR(slices[0]["ts"].get<double>(), 0.0, 1e-9);
  EXPECT_NEAR(slices[1]["ts"].get<double>(), 10.0, 1e-9);
  EXPECT_NEAR(slices[2]["ts"].get<double>(), 12.0, 1e-9);
  EXPECT_NEAR(slices[2]["dur"].get<double>(), 1.0, 1e-9);
  for (const json& s : slices) {
    const std::string timing = s["args"]["timing"].get<std::string>();
    EXPECT_NE(timing.find("back to back"), std::string::npos) << timing;
    EXPECT_NE(timing.find("no observed start times"), std::string::npos) << timing;
  }
}

// One kernel without an observed start (say, a run cut short) must not mix two timelines on a track.
TEST(ChromeTraceTest, PartlyObservedTargetUsesOneLayoutPerTrack) {
  TargetResult observed = Target("cpu:fp32");
  observed.layers = {Layer("a", {"a"}, 0.004), Layer("b", {"b"}, 0.004)};
  observed.layers[0].observed_start_ms = 0.0;
  observed.layers[0].observed_ms = 0.005;
  observed.layers[1].observed_start_ms = 0.009;
  observed.layers[1].observed_ms = 0.003;
  TargetResult partial = Target("cpu:int8");
  partial.layers = observed.layers;
  partial.layers[1].observed_start_ms.reset();

  const json trace = ChromeTrace({observed, partial});
  const std::vector<json> first = Slices(trace, 1), second = Slices(trace, 2);
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_NEAR(first[1]["ts"].get<double>(), 9.0, 1e-9);
  EXPECT_EQ(first[1]["args"]["timing"], "one observed run: real start times");
  EXPECT_NEAR(second[1]["ts"].get<double>(), 4.0, 1e-9);  // after a's p50, not at b's observed start
  EXPECT_NEAR(second[0]["dur"].get<double>(), 4.0, 1e-9);
  EXPECT_NE(second[0]["args"]["timing"].get<std::string>().find("back to back"), std::string::npos);
  // Each target its own named track.
  int names = 0;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") {
      ++names;
      EXPECT_EQ(e["args"]["name"], e["pid"] == 1 ? "cpu:fp32 (ok)" : "cpu:int8 (ok)");
    }
  }
  EXPECT_EQ(names, 2);
}

}  // namespace
}  // namespace chipfit
