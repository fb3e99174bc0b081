// A/B comparison of stored runs, one or several per side (`chipfit diff`, batch baselines): per target a
// verdict — regressed, improved, unchanged or inconclusive — from the medians of the runs' stored timing
// samples with a bootstrap confidence interval of their ratio; per layer, the change beyond both
// runs' spread; drift drops. Runs are compared only when they measured the same thing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace chipfit {

// A target's latency change B/A is judged on the confidence interval [low, high] of the ratio of
// medians: `regressed` when low > 1 + min_latency_change, `improved` when high < 1 − min_latency_change,
// `unchanged` when the whole interval lies within ±min_latency_change, else `inconclusive` (the runs
// are too noisy to tell a change of that size from none). Layers, timed over fewer runs, use their
// p90 − p50 spread: a regression when B/A > 1 + max(min_layer_change, spread A + spread B).
struct DiffOptions {
  double min_latency_change = 0.05;  // smaller changes are `unchanged` even when certain
  double confidence = 0.95;
  int resamples = 2000;  // bootstrap resamples of each run's samples
  uint64_t seed = 1;     // the bootstrap's random stream: a diff of the same runs prints the same
  double min_layer_change = 0.10;
  double min_layer_ms = 0.02;     // layers under 20 µs in both runs (dispatch noise) are never flagged
  double max_sqnr_drop_db = 1.0;  // output (and layer) SQNR drops beyond this are regressions
  double max_top1_drop = 0.005;   // top-1 agreement drops beyond half a point
};

// The confidence interval of median(b) / median(a).
struct RatioInterval {
  double ratio = 1;  // median(b) / median(a) of the samples themselves
  double low = 1, high = 1;
  std::string method;  // how the interval was found, for the user
};

// How a run's samples may be resampled: `in_order` samples (the timed runs, or their sketch, as they
// ran) in blocks of consecutive runs, so a load that came or went during the run widens the interval;
// samples in no particular order (or a run too short for blocks) one value at a time.
struct SampleOrder {
  bool in_order = true;
};

// The number of blocks an in-order run is cut into for the moving-block bootstrap.
inline constexpr int kBootstrapBlocks = 16;

// Percentile bootstrap: `resamples` times, each run's samples are drawn again and the ratio of the
// two medians taken; the interval is the central `confidence` share of those ratios. In-order runs of
// at least 2 · kBootstrapBlocks samples are drawn as a moving-block bootstrap (blocks of n /
// kBootstrapBlocks consecutive runs, starts drawn uniformly): timings that drift within a run (a
// machine whose load changes) are not independent, and drawing them one by one would give an interval
// far narrower than the run supports. Deterministic for a seed. Both inputs must be non-empty with
// positive median(a).
RatioInterval BootstrapMedianRatio(const std::vector<double>& a, const std::vector<double>& b, double confidence,
                                   int resamples, uint64_t seed, SampleOrder order_a = {}, SampleOrder order_b = {});

// Several runs per side (`diff A1,A2 B1,B2`, a gate's confirmation runs): the hierarchical bootstrap of
// the ratio of the sides' medians. Each resample draws a side's runs with replacement, draws each
// drawn run's samples again as BootstrapMedianRatio does (in blocks of consecutive runs when long
// enough), pools them and takes the median; the interval is the central `confidence` share of the
// ratios B/A. Drawing the runs is what lets what moves a whole run (another hour's load, a reboot, a
// memory layout) widen the interval; the samples of one run cannot show it.
//
// A random-effects model for that between-run spread: σ is the SD of the runs' log medians, each side
// centred on its own mean (the sides differ by the change measured), pooled over the sides with ≥ 2 runs
// (df = Σ (runs − 1)). A side with a single run cannot show it: its median is multiplied by exp(σ*·z),
// z ~ N(0, 1), each resample. σ from 2–4 runs is itself uncertain (three runs that happen to sit close
// together would give a single run on the other side a narrow interval and a false verdict), so each
// resample draws σ* = σ·√(df / χ²(df)) — σ*·z is then Student's t with df degrees of freedom — and
// stretches the drawn runs' offsets from their side's mean by σ*/σ · √(n / (n − 1)) (a draw of n runs
// with replacement shows only (n − 1)/n of their variance). With many runs this is the plain
// hierarchical bootstrap.
//
// One run on each side is exactly BootstrapMedianRatio (same seed, same interval). Every run must be
// non-empty; side A's pooled median positive. Deterministic for a seed.
// `min_sigma` (log scale) is the least σ is taken to be when any side has several runs: DiffRunSets
// passes the spread of the runs' own clean round medians, since a machine whose speed moved between a
// run's rounds can move a whole run's median as far.
RatioInterval HierarchicalMedianRatio(const std::vector<std::vector<double>>& a,
                                      const std::vector<std::vector<double>>& b, double confidence, int resamples,
                                      uint64_t seed, double min_sigma = 0);

// The verdict on a ratio interval by the rules of DiffOptions: regressed | improved | unchanged |
// inconclusive.
std::string RatioVerdict(const RatioInterval& r, double min_change);

// One layer's change from A to B (p50 and p90 in ms of each): the ratio, the threshold it must pass
// (min_layer_change, or both runs' p90 − p50 spread when larger) and whether it did, either way. Layers
// under min_layer_ms in both are never flagged (dispatch noise).
struct LayerChange {
  double ratio = 1, threshold = 0;
  bool regressed = false, improved = false;
};
LayerChange CompareLayerTimes(double a50, double a90, double b50, double b90, const DiffOptions& options = {});

// What differs between two runs that changes what their timings mean: model file (sha256), bound
// input shapes, threads, machine (host and devices), inputs (data or seeded random), int8
// calibration. Empty when the runs are comparable. Settings an older run did not record are not
// held against it.
std::vector<std::string> ComparabilityDifferences(const nlohmann::json& a, const nlohmann::json& b);

// `a`, `b`: profile JSON (schema chipfit.profile/1, e.g. RunStore::LoadRun). Targets are matched by
// name, layers by name and op; those only one run has are listed as added or removed. Result:
// {"a": {...}, "b": {...}, "differences": [...], "targets": [...], "regressions": N, "inconclusive": N,
// "improvements": N, "notes": [...]}; the caller decides whether differences allow comparing.
nlohmann::json DiffRuns(const nlohmann::json& a, const nlohmann::json& b, const DiffOptions& options = {});

// Several runs per side: a target's latency verdict rests on all the runs of each side where it ran
// (HierarchicalMedianRatio; runs stored without samples are left out, or, when no run of a side has
// any, the first runs' normal approximation is used); drift and layers are compared between the first
// such run of each side. Each run is checked for comparability against the first run of A
// ("differences" name the runs by id). Besides DiffRuns' fields, each compared target row has what its
// verdict rests on: "a_runs", "b_runs" (runs), "a_run_ids", "b_run_ids", "a_samples", "b_samples"
// (Σ latency_ms.iterations: the clean timed runs), "a_clean_rounds", "b_clean_rounds" (Σ clean entries of
// the target's "rounds"; null when no run of that side has rounds); the result has "a_run_ids" and
// "b_run_ids". One run per side is DiffRuns. Both lists must be non-empty.
nlohmann::json DiffRunSets(const std::vector<nlohmann::json>& a_runs, const std::vector<nlohmann::json>& b_runs,
                           const DiffOptions& options = {});

}  // namespace chipfit
