// DiffRuns: regressions flagged beyond both runs' noise, not within it; drift drops; targets and
// layers present in only one run.
#include <gtest/gtest.h>

#include "core/store/run_diff.h"

namespace chipfit {
namespace {

using nlohmann::json;

json Layer(const std::string& name, double p50, double p90, double sqnr = 40) {
  return {{"name", name}, {"op", "Conv"}, {"time_ms", {{"p50", p50}, {"p90", p90}}}, {"drift", {{"sqnr_db", sqnr}}}};
}

json Target(const std::string& name, double p50, double cov, int iterations, double sqnr, json layers,
            const std::string& status = "ok") {
  if (status != "ok") return {{"target", name}, {"status", status}, {"layers", json::array()}};
  return {{"target", name},
          {"status", "ok"},
          {"latency_ms", {{"p50", p50}, {"mean", p50}, {"cov", cov}, {"iterations", iterations}}},
          {"accuracy", {{"output_sqnr_db", sqnr}, {"top1_agreement", 1.0}}},
          {"layers", std::move(layers)}};
}

json MakeRun(int id, json targets) {
  return {{"run_id", id}, {"model", {{"path", "m.onnx"}, {"sha256", "abc"}}}, {"targets", std::move(targets)}};
}

const json& Row(const json& diff, const std::string& target) {
  for (const json& t : diff["targets"]) {
    if (t["target"] == target) return t;
  }
  static const json kNone;
  ADD_FAILURE() << "no row for " << target;
  return kNone;
}

TEST(RunDiffTest, IdenticalRunsHaveNoRegression) {
  const json a = MakeRun(1, {Target("cpu:fp32", 1.0, 0.02, 1000, 40, {Layer("conv", 0.5, 0.52)})});
  const json diff = DiffRuns(a, a);
  EXPECT_EQ(diff["regressions"], 0);
  EXPECT_DOUBLE_EQ(Row(diff, "cpu:fp32")["ratio"].get<double>(), 1.0);
  EXPECT_TRUE(diff["notes"].empty());
}

TEST(RunDiffTest, SlowerBeyondNoiseIsARegressionWithinNoiseIsNot) {
  const json a = MakeRun(1, {Target("cpu:fp32", 1.0, 0.02, 1000, 40, json::array()),
                             Target("cpu:int8", 1.0, 0.02, 1000, 40, json::array())});
  // fp32: 20 % slower with a 2 % CoV over 1000 runs: the medians' noise is ~0.2 %, far below.
  // int8: 20 % slower, but each run's CoV is 300 % over 50 runs: 3·√2·1.25·3/√50 ≈ 2.3 ≫ 0.2.
  const json b = MakeRun(
      2, {Target("cpu:fp32", 1.2, 0.02, 1000, 40, json::array()), Target("cpu:int8", 1.2, 3.0, 50, 40, json::array())});
  json a_noisy = a;
  a_noisy["targets"][1]["latency_ms"]["cov"] = 3.0;
  a_noisy["targets"][1]["latency_ms"]["iterations"] = 50;
  const json diff = DiffRuns(a_noisy, b);
  EXPECT_TRUE(Row(diff, "cpu:fp32")["regression"].get<bool>());
  EXPECT_TRUE(Row(diff, "cpu:fp32")["latency_regression"].get<bool>());
  EXPECT_DOUBLE_EQ(Row(diff, "cpu:fp32")["threshold"].get<double>(), 0.05);  // the floor
  EXPECT_FALSE(Row(diff, "cpu:int8")["regression"].get<bool>());
  EXPECT_TRUE(Row(diff, "cpu:int8")["too_noisy"].get<bool>());
  EXPECT_EQ(diff["regressions"], 1);
  // The other way round it is faster, not a regression.
  const json back = DiffRuns(b, a);
  EXPECT_TRUE(Row(back, "cpu:fp32")["faster"].get<bool>());
  EXPECT_EQ(back["regressions"], 0);
}

TEST(RunDiffTest, DriftDropsAreRegressions) {
  const json a = MakeRun(1, {Target("cpu:int8", 1.0, 0.02, 1000, 30, {Layer("conv", 0.5, 0.5, 35)})});
  const json b = MakeRun(2, {Target("cpu:int8", 1.0, 0.02, 1000, 27.5, {Layer("conv", 0.5, 0.5, 31)})});
  const json diff = DiffRuns(a, b);
  const json& row = Row(diff, "cpu:int8");
  EXPECT_TRUE(row["drift_regression"].get<bool>());
  EXPECT_FALSE(row["latency_regression"].get<bool>());
  EXPECT_DOUBLE_EQ(row["sqnr_change_db"].get<double>(), -2.5);
  EXPECT_EQ(row["layer_regressions"], 1);  // the layer lost 4 dB
  EXPECT_EQ(diff["regressions"], 1);
}

TEST(RunDiffTest, LayersAreFlaggedBeyondTheirSpreadAndAboveTheFloor) {
  const json a = MakeRun(1, {Target("cpu:fp32", 1.0, 0.02, 1000, 40,
                                    {Layer("big", 0.50, 0.52), Layer("spready", 0.30, 0.45),
                                     Layer("tiny", 0.004, 0.004), Layer("gone", 0.1, 0.1)})});
  const json b = MakeRun(2, {Target("cpu:fp32", 1.0, 0.02, 1000, 40,
                                    {Layer("big", 0.70, 0.71), Layer("spready", 0.40, 0.55),
                                     Layer("tiny", 0.010, 0.010), Layer("new", 0.1, 0.1)})});
  const json diff = DiffRuns(a, b);
  std::map<std::string, json> layers;
  for (const json& l : Row(diff, "cpu:fp32")["layers"]) layers[l["name"]] = l;
  EXPECT_TRUE(layers["big"]["regression"].get<bool>());       // +40 %, spread ~5 %
  EXPECT_FALSE(layers["spready"]["regression"].get<bool>());  // +33 %, spread 50 % + 37 %
  EXPECT_FALSE(layers["tiny"]["regression"].get<bool>());     // 2.5x, but 10 µs
  EXPECT_EQ(layers["gone"]["change"], "removed");
  EXPECT_EQ(layers["new"]["change"], "added");
  EXPECT_EQ(Row(diff, "cpu:fp32")["layer_regressions"], 1);
}

TEST(RunDiffTest, TargetsInOneRunOnlyAndTargetsThatStoppedRunning) {
  const json a = MakeRun(
      1, {Target("cpu:fp32", 1, 0.02, 1000, 40, json::array()), Target("cpu:int8", 1, 0.02, 1000, 40, json::array()),
          Target("cpu:bf16", 1, 0.02, 1000, 40, json::array())});
  json b =
      MakeRun(2, {Target("cpu:fp32", 1, 0.02, 1000, 40, json::array()), Target("cpu:int8", 0, 0, 0, 0, {}, "failed"),
                  Target("opencl:0:fp32", 5, 0.02, 1000, 40, json::array())});
  b["model"]["sha256"] = "def";
  const json diff = DiffRuns(a, b);
  EXPECT_TRUE(Row(diff, "cpu:int8")["regression"].get<bool>());
  EXPECT_EQ(Row(diff, "opencl:0:fp32")["change"], "added");
  EXPECT_EQ(Row(diff, "cpu:bf16")["change"], "removed");
  EXPECT_EQ(diff["regressions"], 1);
  ASSERT_EQ(diff["notes"].size(), 1u);
  EXPECT_NE(diff["notes"][0].get<std::string>().find("different model"), std::string::npos);
}

}  // namespace
}  // namespace chipfit
