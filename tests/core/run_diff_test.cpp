// DiffRuns: verdicts from the medians of stored samples with a bootstrap interval (a 100× slowdown
// with outliers in both runs is a regression; two runs of one build on a noisy machine are not);
// drift drops; targets and layers present in only one run; runs that measured different things.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "core/store/run_diff.h"

namespace chipfit {
namespace {

using nlohmann::json;

json Layer(const std::string& name, double p50, double p90, double sqnr = 40) {
  return {{"name", name}, {"op", "Conv"}, {"time_ms", {{"p50", p50}, {"p90", p90}}}, {"drift", {{"sqnr_db", sqnr}}}};
}

// `n` timings around `median` as a busy machine gives them: ±`jitter` relative spread, and one run
// in `stall_every` stalled 50×.
std::vector<double> Timings(double median, int n, double jitter, uint32_t seed, int stall_every = 0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-jitter, jitter);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    const bool stall = stall_every > 0 && i % stall_every == stall_every / 2;
    out.push_back(median * (1 + u(rng)) * (stall ? 50 : 1));
  }
  return out;
}

double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

json TargetWith(const std::string& name, const std::vector<double>& samples, double sqnr, json layers) {
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const double p50 = MedianOf(samples), p90 = sorted[sorted.size() * 9 / 10];
  return {{"target", name},
          {"status", "ok"},
          {"latency_ms",
           {{"p50", p50}, {"p90", p90}, {"iterations", static_cast<int>(samples.size())}, {"samples", samples}}},
          {"accuracy", {{"output_sqnr_db", sqnr}, {"top1_agreement", 1.0}}},
          {"layers", std::move(layers)}};
}

json Target(const std::string& name, double p50, double sqnr, json layers, const std::string& status = "ok") {
  if (status != "ok") return {{"target", name}, {"status", status}, {"layers", json::array()}};
  return TargetWith(name, Timings(p50, 200, 0.01, 7), sqnr, std::move(layers));
}

json MakeRun(int id, json targets) {
  return {{"run_id", id},
          {"model", {{"path", "m.onnx"}, {"sha256", "abc"}, {"inputs", {{{"name", "x"}, {"shape", {1, 3, 8, 8}}}}}}},
          {"settings", {{"threads", 2}}},
          {"targets", std::move(targets)}};
}

const json& Row(const json& diff, const std::string& target) {
  for (const json& t : diff["targets"]) {
    if (t["target"] == target) return t;
  }
  static const json kNone;
  ADD_FAILURE() << "no row for " << target;
  return kNone;
}

TEST(RunDiffTest, IdenticalRunsAreUnchanged) {
  const json a = MakeRun(1, {Target("cpu:fp32", 1.0, 40, {Layer("conv", 0.5, 0.52)})});
  const json diff = DiffRuns(a, a);
  EXPECT_EQ(diff["regressions"], 0);
  EXPECT_EQ(diff["inconclusive"], 0);
  EXPECT_TRUE(diff["differences"].empty());
  EXPECT_DOUBLE_EQ(Row(diff, "cpu:fp32")["ratio"].get<double>(), 1.0);
  EXPECT_EQ(Row(diff, "cpu:fp32")["verdict"], "unchanged");
}

// The slowdown a user met: cpu:fp32 0.275 → 28.35 ms. Both runs have stalls 50× their median (the
// CoV they give is enormous); the medians and their interval still say "regressed" at once.
TEST(RunDiffTest, AHundredfoldSlowdownWithOutliersIsARegression) {
  const json a = MakeRun(1, {TargetWith("cpu:fp32", Timings(0.275, 3000, 0.05, 1, 40), 40, json::array())});
  const json b = MakeRun(2, {TargetWith("cpu:fp32", Timings(28.35, 40, 0.05, 2, 10), 40, json::array())});
  const json diff = DiffRuns(a, b);
  const json& row = Row(diff, "cpu:fp32");
  EXPECT_EQ(row["verdict"], "regressed");
  EXPECT_TRUE(row["latency_regression"].get<bool>());
  EXPECT_GT(row["ci_low"].get<double>(), 90.0);
  EXPECT_LT(row["ci_high"].get<double>(), 115.0);
  EXPECT_EQ(diff["regressions"], 1);
  // The other way round it is an improvement.
  EXPECT_EQ(Row(DiffRuns(b, a), "cpu:fp32")["verdict"], "improved");
}

// Two runs of the same build on a noisy machine: ±30 % jitter, stalls, few runs. Not a regression:
// unchanged or, honestly, inconclusive.
TEST(RunDiffTest, TwoRunsOfOneBuildOnANoisyMachineAreNotARegression) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const json a = MakeRun(1, {TargetWith("cpu:fp32", Timings(1.0, 60, 0.3, seed, 7), 40, json::array())});
    const json b = MakeRun(2, {TargetWith("cpu:fp32", Timings(1.0, 60, 0.3, seed + 100, 5), 40, json::array())});
    const json diff = DiffRuns(a, b);
    const std::string verdict = Row(diff, "cpu:fp32")["verdict"];
    EXPECT_TRUE(verdict == "unchanged" || verdict == "inconclusive") << "seed " << seed << ": " << verdict;
    EXPECT_EQ(diff["regressions"], 0) << "seed " << seed;
  }
}

TEST(RunDiffTest, TwentyPercentSlowerIsARegressionOnAQuietMachineAndInconclusiveOnANoisyOne) {
  const json quiet_a = MakeRun(1, {TargetWith("cpu:fp32", Timings(1.0, 1000, 0.02, 1), 40, json::array())});
  const json quiet_b = MakeRun(2, {TargetWith("cpu:fp32", Timings(1.2, 1000, 0.02, 2), 40, json::array())});
  EXPECT_EQ(Row(DiffRuns(quiet_a, quiet_b), "cpu:fp32")["verdict"], "regressed");
  const json noisy_a = MakeRun(1, {TargetWith("cpu:fp32", Timings(1.0, 12, 0.9, 3), 40, json::array())});
  const json noisy_b = MakeRun(2, {TargetWith("cpu:fp32", Timings(1.2, 12, 0.9, 4), 40, json::array())});
  const json diff = DiffRuns(noisy_a, noisy_b);
  EXPECT_EQ(Row(diff, "cpu:fp32")["verdict"], "inconclusive");
  EXPECT_EQ(diff["inconclusive"], 1);
  EXPECT_EQ(diff["regressions"], 0);
}

// The same build twice; in B another process took a core for the last 65 % of the timed window, so
// those runs took 8 % longer. B's median sits ~7.5 % above A's, and drawn one by one its 4000 runs pin
// that median to a hair: "regressed". Their order shows the load came during the run; drawn in blocks
// of consecutive runs, the interval says the run cannot tell: inconclusive, never regressed.
TEST(RunDiffTest, ALoadThatCameDuringARunIsInconclusiveNotARegression) {
  const std::vector<double> a = Timings(1.0, 4000, 0.01, 21);
  std::vector<double> b = Timings(1.0, 4000, 0.01, 22);
  for (size_t i = b.size() * 35 / 100; i < b.size(); ++i) b[i] *= 1.08;
  const RatioInterval one_by_one = BootstrapMedianRatio(a, b, 0.95, 1000, 1, {.in_order = false}, {.in_order = false});
  EXPECT_GT(one_by_one.low, 1.05) << "drawn one by one, the shift looks certain";
  const json diff = DiffRuns(MakeRun(1, {TargetWith("cpu:fp32", a, 40, json::array())}),
                             MakeRun(2, {TargetWith("cpu:fp32", b, 40, json::array())}));
  const json& row = Row(diff, "cpu:fp32");
  EXPECT_EQ(row["verdict"], "inconclusive") << row.dump();
  EXPECT_LT(row["ci_low"].get<double>(), 1.05);
  EXPECT_NE(row["method"].get<std::string>().find("in blocks of 250 and 250 consecutive runs"), std::string::npos)
      << row["method"];
  EXPECT_EQ(diff["regressions"], 0);
}

// A run timed on a busy machine is said beside its verdict, which stands: a hundredfold slowdown on a
// busy machine is still a regression.
TEST(RunDiffTest, ABusyMachineIsSaidAndTheVerdictStands) {
  json b = TargetWith("cpu:fp32", Timings(28.35, 40, 0.05, 2), 40, json::array());
  b["latency_ms"]["machine_busy"] = true;
  b["latency_ms"]["other_cpu_share"] = 0.34;
  const json diff =
      DiffRuns(MakeRun(1, {TargetWith("cpu:fp32", Timings(0.275, 3000, 0.05, 1), 40, json::array())}), MakeRun(2, {b}));
  const json& row = Row(diff, "cpu:fp32");
  EXPECT_EQ(row["verdict"], "regressed");
  ASSERT_TRUE(row.contains("machine_busy"));
  ASSERT_EQ(row["machine_busy"].size(), 1u);
  EXPECT_EQ(row["machine_busy"][0]["run"], "B");
  EXPECT_DOUBLE_EQ(row["machine_busy"][0]["other_cpu_share"].get<double>(), 0.34);
}

TEST(RunDiffTest, BootstrapIsDeterministicAndCoversTheTrueRatio) {
  const std::vector<double> a = Timings(2.0, 500, 0.1, 11), b = Timings(3.0, 500, 0.1, 12);
  const RatioInterval r1 = BootstrapMedianRatio(a, b, 0.95, 1000, 5);
  const RatioInterval r2 = BootstrapMedianRatio(a, b, 0.95, 1000, 5);
  EXPECT_EQ(r1.low, r2.low);
  EXPECT_EQ(r1.high, r2.high);
  EXPECT_LT(r1.low, 1.5);
  EXPECT_GT(r1.high, 1.5);
  EXPECT_LT(r1.high - r1.low, 0.1);
}

// Runs stored before samples were: the interval comes from p50, p90 and the run count.
TEST(RunDiffTest, RunsWithoutSamplesUseANormalApproximation) {
  auto old = [](double p50, double p90) {
    return json{{"target", "cpu:fp32"},
                {"status", "ok"},
                {"latency_ms", {{"p50", p50}, {"p90", p90}, {"iterations", 500}, {"cov", 14.0}}},
                {"layers", json::array()}};
  };
  const json diff = DiffRuns(MakeRun(1, {old(0.275, 0.30)}), MakeRun(2, {old(28.35, 30.0)}));
  EXPECT_EQ(Row(diff, "cpu:fp32")["verdict"], "regressed");
  EXPECT_NE(Row(diff, "cpu:fp32")["method"].get<std::string>().find("normal approximation"), std::string::npos);
}

// A 1x76x32x1 run against a 4x76x32x1 run, or one with other threads, is not comparable: the
// differences are named.
TEST(RunDiffTest, RunsThatMeasuredDifferentThingsSayWhat) {
  json a = MakeRun(1, {Target("cpu:fp32", 1.0, 40, json::array())});
  json b = a;
  b["model"]["inputs"][0]["shape"] = {4, 3, 8, 8};
  b["settings"]["threads"] = 1;
  const json diff = DiffRuns(a, b);
  ASSERT_EQ(diff["differences"].size(), 2u);
  EXPECT_EQ(diff["differences"][0], "input shapes: {\"x\":\"1x3x8x8\"} in run A, {\"x\":\"4x3x8x8\"} in run B");
  EXPECT_EQ(diff["differences"][1], "threads: 2 in run A, 1 in run B");
  // A setting an older run did not record is not held against it.
  json older = a;
  older["settings"].erase("threads");
  EXPECT_TRUE(DiffRuns(older, a)["differences"].empty());
}

TEST(RunDiffTest, DriftDropsAreRegressions) {
  const json a = MakeRun(1, {Target("cpu:int8", 1.0, 30, {Layer("conv", 0.5, 0.5, 35)})});
  const json b = MakeRun(2, {Target("cpu:int8", 1.0, 27.5, {Layer("conv", 0.5, 0.5, 31)})});
  const json diff = DiffRuns(a, b);
  const json& row = Row(diff, "cpu:int8");
  EXPECT_TRUE(row["drift_regression"].get<bool>());
  EXPECT_FALSE(row["latency_regression"].get<bool>());
  EXPECT_DOUBLE_EQ(row["sqnr_change_db"].get<double>(), -2.5);
  EXPECT_EQ(row["layer_regressions"], 1);  // the layer lost 4 dB
  EXPECT_EQ(diff["regressions"], 1);
}

TEST(RunDiffTest, LayersAreFlaggedBeyondTheirSpreadAndAboveTheFloor) {
  const json a = MakeRun(1, {Target("cpu:fp32", 1.0, 40,
                                    {Layer("big", 0.50, 0.52), Layer("spready", 0.30, 0.45),
                                     Layer("tiny", 0.004, 0.004), Layer("gone", 0.1, 0.1)})});
  const json b = MakeRun(2, {Target("cpu:fp32", 1.0, 40,
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
  const json a = MakeRun(1, {Target("cpu:fp32", 1, 40, json::array()), Target("cpu:int8", 1, 40, json::array()),
                             Target("cpu:bf16", 1, 40, json::array())});
  json b = MakeRun(2, {Target("cpu:fp32", 1, 40, json::array()), Target("cpu:int8", 0, 0, {}, "failed"),
                       Target("opencl:0:fp32", 5, 40, json::array())});
  b["model"]["sha256"] = "def";
  const json diff = DiffRuns(a, b);
  EXPECT_TRUE(Row(diff, "cpu:int8")["regression"].get<bool>());
  EXPECT_EQ(Row(diff, "opencl:0:fp32")["change"], "added");
  EXPECT_EQ(Row(diff, "cpu:bf16")["change"], "removed");
  EXPECT_EQ(diff["regressions"], 1);
  ASSERT_EQ(diff["differences"].size(), 1u);
  EXPECT_EQ(diff["differences"][0], "model file (sha256): abc in run A, def in run B");
}

}  // namespace
}  // namespace chipfit
