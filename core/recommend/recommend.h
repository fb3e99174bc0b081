// Recommendation (docs/measurement.md, "Recommendation"): from a run's target results, hard limits and an objective,
// the targets that pass ranked, the Pareto frontier over latency × drift × energy, every rejected target with the limit
// it broke and by how much, and one paragraph in plain language. Deterministic and device-free: it reads typed
// candidates (the session fills them from its targets).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace chipfit {

struct Limits {
  std::optional<double> max_latency_ms;
  std::string latency_stat = "p99";  // p50 | p90 | p99: which statistic max_latency_ms bounds
  // The user named latency_stat (--latency-stat, a manifest's latency_stat:, the GUI's statistic):
  // then the ranking uses it too; otherwise targets are ranked by their median (p50).
  bool latency_stat_given = false;
  const std::string& RankStat() const {
    static const std::string kP50 = "p50";
    return latency_stat_given ? latency_stat : kP50;
  }
  std::optional<double> min_top1;  // agreement with the reference, 0..1
  std::optional<double> min_sqnr_db;
  std::optional<double> max_memory_mb;  // planned peak memory
  std::optional<double> max_energy_mj;  // per inference
  bool any() const { return max_latency_ms || min_top1 || min_sqnr_db || max_memory_mb || max_energy_mj; }
  bool any_accuracy() const { return min_top1 || min_sqnr_db; }
  // With no accuracy limit given, reject targets whose accuracy is broken by default (see
  // kGuardMinTaskAgreement); --no-accuracy-guard turns it off.
  bool accuracy_guard = true;
  // Targets whose timing had too few clean rounds (the machine was busy) are not ranked unless this
  // is set (--rank-unreliable); they are listed as rejected with the reason.
  bool rank_unreliable = false;
};

// Tail statistics need a sample that supports them: a p90 limit or ranking needs this many timed
// runs, a p99 one kTailSamplesP99; fewer is a refusal that names the count.
inline constexpr int kTailSamplesP90 = 20;
inline constexpr int kTailSamplesP99 = 100;
// The runs a statistic needs (p50: 1).
int SamplesNeeded(const std::string& stat);

// The accuracy guard: with no accuracy limit, a target is rejected when its task agreement is under
// 99 %, or, where no output has a task metric, its output SQNR is under 20 dB; and an int8 target
// calibrated on random data is rejected (its accuracy on real inputs is unknown).
inline constexpr double kGuardMinTaskAgreement = 0.99;
inline constexpr double kGuardMinSqnrDb = 20.0;

enum class Objective { kLatency, kEnergy, kCost, kThroughput };
const char* ObjectiveName(Objective objective);
Result<Objective> ParseObjective(const std::string& text);

// $/hour per device, matched by device kind and (optionally) a substring of the device's name;
// the first matching entry wins. Loaded from YAML (resources/costs/default.yaml is the default).
struct CostEntry {
  std::string kind;  // "cpu", "opencl", "cuda"
  std::string name_contains;
  double usd_per_hour = 0;
  std::string source;
};
struct CostTable {
  std::vector<CostEntry> entries;
  std::string path;
  const CostEntry* Find(const std::string& kind, const std::string& device_name) const;
};
Result<CostTable> LoadCostTable(const std::filesystem::path& path);
std::filesystem::path DefaultCostTablePath();

struct RecommendOptions {
  Limits limits;
  Objective objective = Objective::kLatency;
  // Optional weights of a combined score (each term is the target's value over the best passing
  // value, so 1 is the best); empty: the objective alone.
  std::map<std::string, double> weights;  // keys: latency, energy, cost, drift
  const CostTable* costs = nullptr;       // needed for the cost objective and cost weights
};

// Parses "latency=1,energy=0.5"; errors name the bad part.
Result<std::map<std::string, double>> ParseWeights(const std::string& text);

// One target as the recommendation sees it: what was measured, typed. Absent values were not
// measured (a limit on them cannot be met; an objective on them ranks last).
struct RecommendCandidate {
  std::string target{};  // "cpu:int8"
  std::string status{};  // ok | failed | unsupported | cancelled
  std::string error{};
  std::string device_kind{}, device_name{};  // for the cost table
  std::optional<double> p50_ms{}, p90_ms{}, p99_ms{};
  int latency_samples = 0;  // clean timed runs behind the statistics (0: not recorded)
  // Too few clean timing rounds (a busy machine): not ranked unless Limits::rank_unreliable.
  bool unreliable = false;
  std::string unreliable_reason{};
  std::optional<double> peak_memory_bytes{};
  std::optional<double> energy_j{};
  std::string energy_source{};  // "estimated", "measured:<sensor>" …
  std::optional<double> output_sqnr_db{}, top1_agreement{};
  // The worst output's task agreement (top-1, CTC sequence, map IoU) and what it is; --min-top1 bounds
  // it when no output has class scores.
  std::optional<double> task_agreement{};
  std::string task_metric{};
  bool random_calibration = false;  // int8 calibrated on seeded random data
  // Share of the target's measured layer time that ran on its own device (0..1); the rest fell back
  // to another device or the reference kernels. Absent: not known.
  std::optional<double> device_share{};
  std::string device_id{};  // "cpu", "opencl:0": the device the share is of
  // What the kernels computed in ("int8 1 of 77 kernels, 3 % of compute time"), and the target they ran
  // as ("cpu:fp32") when under half of the compute time was in the target's own precision; a target that
  // ran as another measured one is not ranked in its place. Empty: not known, or ran as named.
  std::string precision_mix{};
  std::string ran_as{};
  // Throughput mode: the best inferences/s over the target's batch sizes and stream counts, and the
  // batch that reached it. Absent: one inference at a time (1000 / p50).
  std::optional<double> inferences_per_s{};
  std::optional<int> best_batch{};
  // A projected target (profilers/projection: hardware from the catalog, not measured here): p50_ms is
  // the projection's median and band_p10_ms/band_p90_ms its P10–P90 error band; energy is estimated.
  bool projected = false;
  std::optional<double> band_p10_ms{}, band_p90_ms{};
  std::optional<double> price_per_hour_usd{};  // the catalog's price, used instead of the cost table
  std::string accuracy_from{};  // projected: the measured target whose accuracy it carries ("cpu:bf16"), "" none
};

// A target that ran less than this share of its time on its own device measured another device: it
// is rejected (its latency is not that device's).
inline constexpr double kMinDeviceShare = 0.5;

// The recommendation JSON (docs/json.md): {"limits", "objective", "weights", "ranked", "scores",
// "pareto", "rejected", "best", "fallback", "closest", "summary"}, and "projected" (their names) when
// any target is projected. A projected target meets a latency limit only by its band's P90 (its median
// where no band is given), whatever statistic the limit names: a projection has no p99, and its error
// band's upper edge is the latency the user may get. It ranks by its median, is priced by its own
// price_per_hour_usd where set, carries accuracy_from's accuracy, and has no device share to check.
// Measured targets are unaffected.
Result<nlohmann::json> Recommend(const std::vector<RecommendCandidate>& targets, const RecommendOptions& options);

}  // namespace chipfit
