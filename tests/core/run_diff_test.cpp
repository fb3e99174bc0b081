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
  // Stopped by the user in B: not compared, never a regression.
  json stopped = MakeRun(3, {Target("cpu:fp32", 1, 40, json::array()), Target("cpu:int8", 0, 0, {}, "cancelled")});
  const json after_stop = DiffRuns(a, stopped);
  EXPECT_EQ(Row(after_stop, "cpu:int8")["verdict"], "cancelled");
  EXPECT_FALSE(Row(after_stop, "cpu:int8")["regression"].get<bool>());
  EXPECT_EQ(after_stop["regressions"], 0);
}

// The same machine with oneDNN held back (ONEDNN_MAX_CPU_ISA) runs other kernels: not comparable.
TEST(RunDiffTest, AnotherOneDnnIsaIsADifference) {
  json a = MakeRun(1, {Target("cpu:fp32", 1.0, 40, json::array())});
  a["machine"] = {
      {"hostname", "h"},
      {"devices",
       {{{"id", "cpu"}, {"kind", "cpu"}, {"name", "Xeon"}, {"properties", {{"oneDNN ISA", "avx512_core_amx"}}}}}}};
  json b = a;
  b["machine"]["devices"][0]["properties"]["oneDNN ISA"] = "sse41 (held there by ONEDNN_MAX_CPU_ISA=SSE41)";
  const json diff = DiffRuns(a, b);
  ASSERT_EQ(diff["differences"].size(), 1u) << diff["differences"];
  EXPECT_EQ(diff["differences"][0],
            "oneDNN ISA: avx512_core_amx in run A, sse41 (held there by ONEDNN_MAX_CPU_ISA=SSE41) in run B");
  EXPECT_TRUE(DiffRuns(a, a)["differences"].empty());
}

// Several runs per side. A side's runs, each `n` timings (±5 % jitter) around `median` × its run's
// offset: what moves a whole run (another hour's load, a memory layout) and no run's own samples show.
std::vector<json> Runs(int first_id, double median, const std::vector<double>& offsets, int n, uint32_t seed) {
  std::vector<json> runs;
  for (size_t i = 0; i < offsets.size(); ++i) {
    runs.push_back(
        MakeRun(first_id + static_cast<int>(i),
                {TargetWith("cpu:fp32", Timings(median * offsets[i], n, 0.05, seed + static_cast<uint32_t>(i)), 40,
                            json::array())}));
  }
  return runs;
}

std::vector<std::vector<double>> SampleSets(const std::vector<json>& runs) {
  std::vector<std::vector<double>> out;
  for (const json& r : runs) out.push_back(r["targets"][0]["latency_ms"]["samples"].get<std::vector<double>>());
  return out;
}

// A real 1.6x slowdown, each side's runs offset from each other by a few percent: regressed, with
// several runs on both sides and with a single baseline run against several.
TEST(RunDiffTest, HierarchicalBootstrapFindsARealShift) {
  const std::vector<json> a = Runs(1, 1.0, {0.97, 1.02, 1.0}, 200, 1);
  const std::vector<json> b = Runs(4, 1.6, {1.03, 0.98, 1.01}, 200, 11);
  const json diff = DiffRunSets(a, b);
  const json& row = Row(diff, "cpu:fp32");
  EXPECT_EQ(row["verdict"], "regressed") << row.dump();
  EXPECT_GT(row["ci_low"].get<double>(), 1.4);
  EXPECT_LT(row["ci_high"].get<double>(), 1.8);
  EXPECT_EQ(row["a_runs"], 3);
  EXPECT_EQ(row["b_runs"], 3);
  EXPECT_EQ(row["a_samples"], 600);
  EXPECT_EQ(row["b_run_ids"], json({4, 5, 6}));
  EXPECT_NE(row["method"].get<std::string>().find("hierarchical bootstrap"), std::string::npos);
  EXPECT_EQ(diff["regressions"], 1);
  // One baseline run against three: the random effect widens the interval; 1.6x is still certain.
  const json one = DiffRunSets({a[0]}, b);
  const json& one_row = Row(one, "cpu:fp32");
  EXPECT_EQ(one_row["verdict"], "regressed") << one_row.dump();
  EXPECT_NE(one_row["method"].get<std::string>().find("random-effects model"), std::string::npos);
  EXPECT_EQ(one_row["a_runs"], 1);
  EXPECT_EQ(one_row["b_runs"], 3);
}

// Rounds: `medians` as the clean rounds of a run's only target.
void SetRounds(json& run, const std::vector<double>& medians) {
  json rounds = json::array();
  for (size_t i = 0; i < medians.size(); ++i) {
    json round = json::object();
    round["round"] = i + 1;
    round["median_ms"] = medians[i];
    round["runs"] = 20;
    round["clean"] = true;
    rounds.push_back(round);
  }
  run["targets"][0]["rounds"] = rounds;
}

// Seen on a 2-core VM beside a parallel load: the baseline run's rounds sat at 0.57 ms, then its last
// two at 0.84; three later runs of the same build all at 0.83. The B runs agree with each other (σ
// 2.6 %), but A's own rounds show the machine moving a run by half: not a regression, inconclusive.
TEST(RunDiffTest, ABaselineWhoseRoundsMovedWidensTheBetweenRunSpread) {
  std::vector<json> a = Runs(1, 0.575, {1.0}, 400, 3);
  SetRounds(a[0], {0.568, 0.556, 0.557, 0.563, 0.591, 0.575, 0.567, 0.574, 0.836, 0.855});
  std::vector<json> b = Runs(2, 0.826, {1.03, 0.975, 1.0}, 400, 13);
  for (json& run : b) SetRounds(run, {0.85, 0.84, 0.83, 0.82, 0.84, 0.83, 0.84, 0.82, 0.83, 0.85});
  const json diff = DiffRunSets(a, b);
  const json& moved = Row(diff, "cpu:fp32");
  EXPECT_NE(moved["verdict"], "regressed") << moved.dump();
  EXPECT_NE(moved["method"].get<std::string>().find("σ raised"), std::string::npos);
  // The same runs with steady rounds in A: the 1.44x shift is a regression.
  SetRounds(a[0], {0.57, 0.58, 0.57, 0.575, 0.57, 0.58, 0.575, 0.57, 0.58, 0.575});
  EXPECT_EQ(Row(DiffRunSets(a, b), "cpu:fp32")["verdict"], "regressed");
}

// The same build on both sides, every run offset by up to ±8 % (uniformly) from the build's true
// median: never regressed, whatever the split of runs; 3 runs against 1 unchanged or inconclusive. A
// false "improved" is the same error the other way; a 95 % interval makes one now and then (seed 19's
// three B runs happen to sit within 1.2 % of each other, 10 % below A's single run), so it is counted,
// not forbidden.
TEST(RunDiffTest, RunsOfOneBuildWithRunToRunOffsetsAreNeverRegressed) {
  int false_improvements = 0;
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> offset(0.92, 1.08);
    auto offsets = [&](int n) {
      std::vector<double> out;
      for (int i = 0; i < n; ++i) out.push_back(offset(rng));
      return out;
    };
    for (const auto& [na, nb] : {std::pair{3, 1}, std::pair{1, 3}, std::pair{3, 3}, std::pair{2, 2}}) {
      const std::vector<json> a = Runs(1, 1.0, offsets(na), 100, seed * 10);
      const std::vector<json> b = Runs(10, 1.0, offsets(nb), 100, seed * 10 + 5);
      const json diff = DiffRunSets(a, b, {.resamples = 1000});
      const std::string verdict = Row(diff, "cpu:fp32")["verdict"];
      const std::string where = "seed " + std::to_string(seed) + ", " + std::to_string(na) + " vs " +
                                std::to_string(nb) + " runs: " + Row(diff, "cpu:fp32").dump();
      EXPECT_NE(verdict, "regressed") << where;
      if (na == 3 && nb == 1) {
        EXPECT_TRUE(verdict == "unchanged" || verdict == "inconclusive") << where;
      }
      false_improvements += verdict == "improved" ? 1 : 0;
    }
  }
  EXPECT_LE(false_improvements, 2) << "of 80 comparisons";
}

// The case a normal z would get wrong: three baseline runs that happen to sit close together, and
// one run 8 % above them. Their small spread is an estimate from three runs; the single run is not
// called a regression on it.
TEST(RunDiffTest, ASingleRunBesideThreeCloseOnesIsNotARegression) {
  const std::vector<json> a = Runs(1, 1.0, {0.995, 1.0, 1.005}, 200, 1);
  const std::vector<json> b = Runs(4, 1.08, {1.0}, 200, 11);
  const std::string verdict = Row(DiffRunSets(a, b), "cpu:fp32")["verdict"];
  EXPECT_TRUE(verdict == "unchanged" || verdict == "inconclusive") << verdict;
  // Runs 8 % apart on both sides: the offset is within what the runs show.
  const std::string spread =
      Row(DiffRunSets(Runs(1, 1.0, {0.92, 1.0, 1.08}, 200, 1), Runs(4, 1.08, {1.0}, 200, 11)), "cpu:fp32")["verdict"];
  EXPECT_EQ(spread, "inconclusive");
}

// One run per side is the single-run bootstrap: the same interval for the same seed, and DiffRunSets
// of one run each is DiffRuns.
TEST(RunDiffTest, OneRunPerSideIsTheSingleRunBootstrap) {
  const std::vector<double> a = Timings(1.0, 500, 0.1, 3), b = Timings(1.1, 300, 0.1, 4);
  const DiffOptions o;
  const RatioInterval single = BootstrapMedianRatio(a, b, o.confidence, o.resamples, o.seed);
  const RatioInterval hierarchical = HierarchicalMedianRatio({a}, {b}, o.confidence, o.resamples, o.seed);
  EXPECT_EQ(single.low, hierarchical.low);
  EXPECT_EQ(single.high, hierarchical.high);
  EXPECT_EQ(single.ratio, hierarchical.ratio);
  EXPECT_EQ(single.method, hierarchical.method);
  const json ra = MakeRun(1, {TargetWith("cpu:fp32", a, 40, json::array())});
  const json rb = MakeRun(2, {TargetWith("cpu:fp32", b, 40, json::array())});
  const json one = DiffRunSets({ra}, {rb});
  EXPECT_EQ(one, DiffRuns(ra, rb));
  EXPECT_EQ(Row(one, "cpu:fp32")["ci_low"].get<double>(), single.low);
  EXPECT_EQ(Row(one, "cpu:fp32")["a_runs"], 1);
  EXPECT_EQ(Row(one, "cpu:fp32")["a_samples"], 500);
  EXPECT_EQ(Row(one, "cpu:fp32")["b_samples"], 300);
}

TEST(RunDiffTest, HierarchicalBootstrapIsDeterministicForASeed) {
  const auto a = SampleSets(Runs(1, 1.0, {0.97, 1.03}, 100, 1));
  const auto b = SampleSets(Runs(3, 1.2, {1.0}, 100, 7));
  const RatioInterval r1 = HierarchicalMedianRatio(a, b, 0.95, 1000, 5);
  const RatioInterval r2 = HierarchicalMedianRatio(a, b, 0.95, 1000, 5);
  const RatioInterval other = HierarchicalMedianRatio(a, b, 0.95, 1000, 6);
  EXPECT_EQ(r1.low, r2.low);
  EXPECT_EQ(r1.high, r2.high);
  EXPECT_NE(r1.low, other.low);
  EXPECT_LT(r1.low, r1.ratio);
  EXPECT_GT(r1.high, r1.ratio);
}

// What a verdict rests on: runs, clean timed runs and clean rounds per side; runs where the target did
// not run (a confirmation profiles the inconclusive targets only) leave it judged on the others.
TEST(RunDiffTest, TheVerdictSaysWhatItRestsOn) {
  auto with_rounds = [](json run, int clean, int dropped) {
    json rounds = json::array();
    for (int i = 0; i < clean + dropped; ++i) rounds.push_back({{"round", i}, {"clean", i < clean}});
    run["targets"][0]["rounds"] = rounds;
    return run;
  };
  const json a = with_rounds(
      MakeRun(1, {Target("cpu:fp32", 1.0, 40, json::array()), Target("cpu:int8", 1.0, 40, json::array())}), 10, 2);
  const json b1 = with_rounds(
      MakeRun(2, {Target("cpu:fp32", 1.0, 40, json::array()), Target("cpu:int8", 1.0, 40, json::array())}), 8, 0);
  const json b2 = with_rounds(MakeRun(3, {Target("cpu:fp32", 1.0, 40, json::array())}), 9, 3);
  const json diff = DiffRunSets({a}, {b1, b2});
  const json& fp32 = Row(diff, "cpu:fp32");
  EXPECT_EQ(fp32["a_runs"], 1);
  EXPECT_EQ(fp32["b_runs"], 2);
  EXPECT_EQ(fp32["a_samples"], 200);
  EXPECT_EQ(fp32["b_samples"], 400);
  EXPECT_EQ(fp32["a_clean_rounds"], 10);
  EXPECT_EQ(fp32["b_clean_rounds"], 17);
  const json& int8 = Row(diff, "cpu:int8");
  EXPECT_EQ(int8["b_runs"], 1);
  EXPECT_TRUE(int8["b_clean_rounds"].is_null());  // its one B run has no rounds
  EXPECT_EQ(int8["verdict"], "unchanged");
  EXPECT_EQ(diff["b_run_ids"], json({2, 3}));
  EXPECT_TRUE(diff["differences"].empty());
}

// Every run is checked against the first run of A, named by its id.
TEST(RunDiffTest, EveryRunIsCheckedAgainstTheFirstOfA) {
  const json a1 = MakeRun(1, {Target("cpu:fp32", 1.0, 40, json::array())});
  json a2 = MakeRun(2, {Target("cpu:fp32", 1.0, 40, json::array())});
  a2["settings"]["threads"] = 1;
  json b = MakeRun(3, {Target("cpu:fp32", 1.0, 40, json::array())});
  b["model"]["sha256"] = "def";
  const json diff = DiffRunSets({a1, a2}, {b});
  ASSERT_EQ(diff["differences"].size(), 2u);
  EXPECT_EQ(diff["differences"][0], "threads: 2 in run 1, 1 in run 2");
  EXPECT_EQ(diff["differences"][1], "model file (sha256): abc in run 1, def in run 3");
}

}  // namespace
}  // namespace chipfit
