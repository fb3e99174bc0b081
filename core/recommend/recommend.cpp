// Limits, ranking, Pareto frontier, rejection reasons and the summary paragraph.
#include "core/recommend/recommend.h"

#include "chipfit/data_dir.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <system_error>

namespace chipfit {
namespace {

using nlohmann::json;

constexpr double kInf = std::numeric_limits<double>::infinity();
// The `bound` a "precision" rejection reports: the share of compute time a target's own precision
// needs to be ranked under its name (profilers/precision_mix.h's kMinOwnPrecisionShare).
constexpr double kMinOwnPrecisionShareForRank = 0.1;

struct Candidate {
  std::string target, status, error, kind, device_name;
  double latency = kInf;       // the limit's statistic
  double rank_latency = kInf;  // the ranking's statistic (p50 unless the user named one)
  double p50 = kInf;
  std::optional<double> device_share;
  std::string device_id;
  std::optional<double> energy_mj, memory_mb, sqnr_db, top1, cost;
  double inference_ms = kInf;     // wall time per inference at the best throughput (p50 without one)
  std::optional<int> best_batch;  // throughput mode's best batch
  std::optional<double> task;     // task agreement (top-1 where there are class scores)
  std::string task_metric;
  bool random_calibration = false;
  std::string energy_source;
  bool projected = false;  // latency is a projection (the median, and an error band), not a measurement
  std::optional<double> band_p10, band_p90;
  std::string accuracy_from;  // projected: the measured target its accuracy is copied from
  int latency_samples = 0;    // clean timed runs behind the statistics (0: not recorded)
  bool unreliable = false;
  std::string unreliable_reason;
  std::string precision_mix, ran_as;
  bool ok() const { return status == "ok"; }
  // "cpu:int8 (≈ cpu:fp32)" for a target whose kernels ran in another precision.
  std::string Label() const { return ran_as.empty() ? target : target + " (≈ " + ran_as + ")"; }
};

struct Violation {
  std::string limit;
  std::optional<double> value;
  double bound = 0;
  double severity = 0;  // relative amount by which the limit is missed (kInf: not measured)
  std::string reason;
};

Candidate FromCandidate(const RecommendCandidate& t, const RecommendOptions& o) {
  Candidate c;
  c.target = t.target;
  c.status = t.status;
  c.error = t.error;
  c.kind = t.device_kind;
  c.device_name = t.device_name;
  const std::optional<double> stat = o.limits.latency_stat == "p50"   ? t.p50_ms
                                     : o.limits.latency_stat == "p90" ? t.p90_ms
                                                                      : t.p99_ms;
  c.latency = stat.value_or(kInf);
  const std::string& rank = o.limits.RankStat();
  c.rank_latency = (rank == "p50" ? t.p50_ms : rank == "p90" ? t.p90_ms : t.p99_ms).value_or(kInf);
  c.p50 = t.p50_ms.value_or(kInf);
  if (t.projected) {
    // A projection has no tail statistics of its own. Its band's upper edge is the latency the user
    // may get on that hardware, so that is what a limit bounds (the median, said so, where no band was
    // given); its median is its best guess, so that is what it ranks by.
    c.projected = true;
    c.band_p10 = t.band_p10_ms;
    c.band_p90 = t.band_p90_ms;
    c.accuracy_from = t.accuracy_from;
    c.latency = t.band_p90_ms.value_or(c.p50);
    c.rank_latency = c.p50;
  }
  c.device_share = t.device_share;
  c.device_id = t.device_id;
  c.latency_samples = t.latency_samples;
  c.unreliable = t.unreliable;
  c.unreliable_reason = t.unreliable_reason;
  c.precision_mix = t.precision_mix;
  c.ran_as = t.ran_as;
  if (t.peak_memory_bytes) c.memory_mb = *t.peak_memory_bytes / (1024.0 * 1024.0);
  if (t.energy_j) {
    c.energy_mj = *t.energy_j * 1e3;
    c.energy_source = t.energy_source;
  }
  c.sqnr_db = t.output_sqnr_db;
  c.top1 = t.top1_agreement;
  c.task = t.top1_agreement ? t.top1_agreement : t.task_agreement;
  c.task_metric = t.top1_agreement ? "top-1 agreement" : t.task_metric;
  c.random_calibration = t.random_calibration;
  c.inference_ms = t.inferences_per_s && *t.inferences_per_s > 0 ? 1e3 / *t.inferences_per_s : c.p50;
  c.best_batch = t.best_batch;
  if (t.projected && t.price_per_hour_usd && std::isfinite(c.inference_ms)) {
    // The catalog prices the hardware the projection is of; the cost table prices devices here.
    c.cost = *t.price_per_hour_usd * (c.inference_ms / 1e3) * 1e6 / 3600.0;
  } else if (o.costs != nullptr && std::isfinite(c.inference_ms)) {
    if (const CostEntry* e = o.costs->Find(c.kind, c.device_name)) {
      // $/h × seconds per inference × 10^6 / 3600: one inference at a time on the whole device, or at
      // the best batch and stream count of throughput mode.
      c.cost = e->usd_per_hour * (c.inference_ms / 1e3) * 1e6 / 3600.0;
    }
  }
  return c;
}

std::vector<Violation> Check(const Candidate& c, const Limits& l) {
  std::vector<Violation> v;
  auto over = [&](const char* limit, std::optional<double> value, double bound, const std::string& what,
                  const std::string& unit) {
    if (!value) {
      v.push_back(
          {limit, std::nullopt, bound, kInf, what + " was not measured, so the " + limit + " limit cannot be met"});
    } else if (*value > bound) {
      v.push_back({limit, value, bound, (*value - bound) / std::max(bound, 1e-12),
                   fmt::format("{} {:.4g} {} is over the {:.4g} {} limit by {:.3g} {} ({:.2f}x)", what, *value, unit,
                               bound, unit, *value - bound, unit, *value / std::max(bound, 1e-12))});
    }
  };
  auto under = [&](const char* limit, std::optional<double> value, double bound, const std::string& what,
                   const std::string& unit, double scale) {
    if (!value) {
      v.push_back(
          {limit, std::nullopt, bound, kInf, what + " was not measured, so the " + limit + " limit cannot be met"});
    } else if (*value < bound) {
      v.push_back({limit, value, bound, (bound - *value) / std::max(std::fabs(bound), 1e-12),
                   fmt::format("{} {:.4g}{} is under the {:.4g}{} limit by {:.3g}{}", what, *value * scale, unit,
                               bound * scale, unit, (bound - *value) * scale, unit)});
    }
  };
  if (l.max_latency_ms && c.projected) {
    // Whatever statistic the limit names, a projection is held to its band's P90 edge (see FromCandidate).
    const double bound = *l.max_latency_ms;
    if (!std::isfinite(c.latency)) {
      v.push_back({"max_latency_ms", std::nullopt, bound, kInf,
                   "the projection has no latency, so the max_latency_ms limit cannot be met"});
    } else if (c.latency > bound) {
      v.push_back({"max_latency_ms", c.latency, bound, (c.latency - bound) / std::max(bound, 1e-12),
                   fmt::format("projected {} {:.4g} ms > {:.4g} ms limit by {:.3g} ms ({:.2f}x): {}",
                               c.band_p90 ? "P90" : "p50", c.latency, bound, c.latency - bound,
                               c.latency / std::max(bound, 1e-12),
                               c.band_p90 ? "the upper edge of the projection's P10–P90 error band, as a projection "
                                            "has no " +
                                                l.latency_stat + " of its own"
                                          : "the projection has no error band, so its median is what is checked")});
    }
  } else if (l.max_latency_ms) {
    over("max_latency_ms", std::isfinite(c.latency) ? std::optional(c.latency) : std::nullopt, *l.max_latency_ms,
         l.latency_stat + " latency", "ms");
  }
  if (l.min_top1) {
    under("min_top1", c.task, *l.min_top1, c.task_metric.empty() ? "top-1 agreement" : c.task_metric, " %", 100.0);
  }
  if (l.min_sqnr_db) under("min_sqnr_db", c.sqnr_db, *l.min_sqnr_db, "output SQNR", " dB", 1.0);
  if (l.max_memory_mb) over("max_memory_mb", c.memory_mb, *l.max_memory_mb, "planned peak memory", "MiB");
  if (l.max_energy_mj) {
    over("max_energy_mj", c.energy_mj, *l.max_energy_mj,
         "energy per inference" + (c.energy_source.empty() ? std::string() : " (" + c.energy_source + ")"), "mJ");
  }
  return v;
}

// A measured target's timing that cannot back the ranking: too few clean rounds (a busy machine), or
// fewer timed runs than the tail statistic the limit (or the ranking) reads needs. `ranks_by_latency`:
// the ranking reads the latency statistic. Severity: a busy run that was otherwise within every limit
// is the closest target (measuring again is all it needs); a short sample misses by its shortfall.
std::vector<Violation> TimingViolations(const Candidate& c, const Limits& l, bool ranks_by_latency) {
  std::vector<Violation> v;
  if (c.projected) return v;  // a projection has no timing of its own here
  if (c.unreliable && !l.rank_unreliable) {
    v.push_back({"unreliable", std::nullopt, 0, 0,
                 "unreliable: " +
                     (c.unreliable_reason.empty() ? std::string("too few clean timing rounds") : c.unreliable_reason) +
                     "; --rank-unreliable ranks it anyway"});
  }
  const bool stat_read = l.max_latency_ms || (l.latency_stat_given && ranks_by_latency);
  const int needed = SamplesNeeded(l.latency_stat);
  if (stat_read && c.latency_samples > 0 && c.latency_samples < needed) {
    v.push_back({"latency_samples", static_cast<double>(c.latency_samples), static_cast<double>(needed),
                 static_cast<double>(needed - c.latency_samples) / needed,
                 fmt::format("{} needs at least {} timed runs, this target has {} (profile with --iterations {})",
                             l.latency_stat, needed, c.latency_samples, needed)});
  }
  return v;
}

// Noise power of the output relative to the signal: lower is better (drift axis of the frontier).
double Nmse(const Candidate& c) { return c.sqnr_db ? std::pow(10.0, -*c.sqnr_db / 10.0) : kInf; }

bool Dominates(const Candidate& a, const Candidate& b) {
  const double av[] = {a.p50, Nmse(a), a.energy_mj.value_or(kInf)};
  const double bv[] = {b.p50, Nmse(b), b.energy_mj.value_or(kInf)};
  bool strictly = false;
  for (int i = 0; i < 3; ++i) {
    if (av[i] > bv[i]) return false;
    strictly = strictly || av[i] < bv[i];
  }
  return strictly;
}

// The guard applies unless --no-accuracy-guard: an accuracy limit the user gives replaces the guard's
// bar for the metric it names only (--min-top1 the task agreement, --min-sqnr-db the SQNR), and lifts
// the random-calibration rule (the user judged the accuracy they measured).
bool GuardOn(const Limits& l) { return l.accuracy_guard; }

// What would let a target the guard rejected through, the fixes first: int8's calibration settings,
// keeping bf16/fp16 layers in fp32, then the limits, then turning the guard off.
std::string GuardAdvice(const Candidate& c) {
  const std::string precision = c.target.substr(c.target.rfind(':') + 1);
  std::string fix;
  if (precision == "int8") {
    fix = "try --calibration percentile, or --auto-fp32-agreement 99 to keep the layers that break it in fp32; ";
  } else if (precision == "bf16" || precision == "fp16" || precision == "tf32") {
    fix = "try --keep-fp32 NODE,… on the layers where its drift starts; ";
  }
  return " (" + fix + "or set --min-top1/--min-sqnr-db, or --no-accuracy-guard)";
}

// The accuracy guard's violation of a target, if any.
std::optional<Violation> GuardViolation(const Candidate& c, const Limits& l) {
  if (!GuardOn(l)) return std::nullopt;
  const bool own_limit = l.any_accuracy();
  if (c.random_calibration && !own_limit) {
    return Violation{"accuracy_guard", std::nullopt, 0, kInf,
                     "accuracy guard: int8 calibrated on random data, so its accuracy on real inputs is unknown (give "
                     "--data with real inputs, or set --min-top1/--min-sqnr-db, or --no-accuracy-guard)"};
  }
  // A projection carries the accuracy of a measured target of its precision; at a reduced
  // precision without one, its accuracy is unknown, as random calibration's is.
  const std::string precision = c.target.substr(c.target.rfind(':') + 1);
  if (c.projected && c.accuracy_from.empty() && precision != "fp32" && !own_limit) {
    return Violation{"accuracy_guard", std::nullopt, 0, kInf,
                     fmt::format("accuracy guard: no {} target was measured here, so this projection's accuracy is "
                                 "unknown (profile a local {} target with it, or set --min-top1/--min-sqnr-db, or "
                                 "--no-accuracy-guard)",
                                 precision, precision)};
  }
  if (c.task && *c.task < kGuardMinTaskAgreement && !l.min_top1) {
    return Violation{
        "accuracy_guard", c.task, kGuardMinTaskAgreement, (kGuardMinTaskAgreement - *c.task) / kGuardMinTaskAgreement,
        fmt::format("accuracy guard: {} {:.1f} % is under {:.0f} %{}{}", c.task_metric, *c.task * 100,
                    kGuardMinTaskAgreement * 100,
                    l.min_sqnr_db ? "; --min-sqnr-db bounds the SQNR only, --min-top1 replaces this bar" : "",
                    GuardAdvice(c))};
  }
  if (!c.task && c.sqnr_db && *c.sqnr_db < kGuardMinSqnrDb && !l.min_sqnr_db) {
    return Violation{"accuracy_guard", c.sqnr_db, kGuardMinSqnrDb, (kGuardMinSqnrDb - *c.sqnr_db) / kGuardMinSqnrDb,
                     fmt::format("accuracy guard: output SQNR {:.1f} dB is under {:.0f} dB{}", *c.sqnr_db,
                                 kGuardMinSqnrDb, GuardAdvice(c))};
  }
  return std::nullopt;
}

std::string DriftText(const Candidate& c) {
  std::string text;
  if (c.task) text = fmt::format("{} {:.1f} %", c.task_metric, *c.task * 100);
  if (c.sqnr_db) text += fmt::format("{}output SQNR {:.1f} dB", text.empty() ? "" : ", ", *c.sqnr_db);
  if (c.random_calibration && !text.empty()) text += " (random calibration)";
  if (c.projected && !c.accuracy_from.empty() && !text.empty()) text += " (carried from " + c.accuracy_from + ")";
  return text.empty() ? "drift not measured" : text;
}

std::string BandText(const Candidate& c) {
  auto edge = [](const std::optional<double>& v) { return v ? fmt::format("{:.3g}", *v) : std::string("?"); };
  return fmt::format("P10–P90 band {}–{} ms", edge(c.band_p10), edge(c.band_p90));
}

// What the summary says of a projected best target: which of its figures met the latency limit.
std::string ProjectedText(const Candidate& c, const Limits& l, bool ranked_by_latency) {
  std::string text = "projected, not measured here";
  if (l.max_latency_ms) {
    text += c.band_p90 ? fmt::format(": its P90 band edge {:.3g} ms is what met the limit", *c.band_p90)
                       : fmt::format(": it has no error band, so its median {:.3g} ms is what met the limit", c.p50);
  } else if (c.band_p10 || c.band_p90) {
    text += " (" + BandText(c) + ")";
  } else {
    text += " (no error band was given)";
  }
  // The ranking's statistic is the user's for the measured targets only: a projection has no tail.
  if (ranked_by_latency && l.RankStat() != "p50") text += "; it ranks by its projected median";
  return text;
}

bool IsAccuracyLimit(const std::string& limit) {
  return limit == "min_top1" || limit == "min_sqnr_db" || limit == "accuracy_guard";
}

// A projected target's entries carry the mark, its band and where its accuracy came from.
void MarkProjected(json& entry, const Candidate& c) {
  if (!c.projected) return;
  entry["projected"] = true;
  entry["band_ms"] =
      json::array({c.band_p10 ? json(*c.band_p10) : json(nullptr), c.band_p90 ? json(*c.band_p90) : json(nullptr)});
  entry["accuracy_from"] = c.accuracy_from.empty() ? json(nullptr) : json(c.accuracy_from);
}

}  // namespace

int SamplesNeeded(const std::string& stat) {
  if (stat == "p99") return kTailSamplesP99;
  if (stat == "p90") return kTailSamplesP90;
  return 1;
}

const char* ObjectiveName(Objective objective) {
  switch (objective) {
    case Objective::kLatency: return "latency";
    case Objective::kEnergy: return "energy";
    case Objective::kCost: return "cost";
    case Objective::kThroughput: return "throughput";
  }
  return "latency";
}

Result<Objective> ParseObjective(const std::string& text) {
  if (text == "latency") return Objective::kLatency;
  if (text == "energy") return Objective::kEnergy;
  if (text == "cost") return Objective::kCost;
  if (text == "throughput") return Objective::kThroughput;
  return InvalidArgument("unknown objective '" + text + "' (latency, energy, cost or throughput)");
}

const CostEntry* CostTable::Find(const std::string& kind, const std::string& device_name) const {
  for (const CostEntry& e : entries) {
    if (e.kind == kind && (e.name_contains.empty() || device_name.find(e.name_contains) != std::string::npos))
      return &e;
  }
  return nullptr;
}

std::filesystem::path DefaultCostTablePath() {
  // A build reads the source tree's table; an installed chipfit, where that tree is absent, its own
  // copy under CHIPFIT_DATA_DIR (share/chipfit, cmake/Packaging.cmake).
#ifdef CHIPFIT_COST_TABLE
  std::error_code error;
  if (std::filesystem::exists(CHIPFIT_COST_TABLE, error)) return CHIPFIT_COST_TABLE;
#endif
  return std::filesystem::path(CHIPFIT_DATA_DIR) / "costs/default.yaml";
}

Result<CostTable> LoadCostTable(const std::filesystem::path& path) {
  CostTable table;
  table.path = path.string();
  try {
    const YAML::Node root = YAML::LoadFile(path.string());
    const YAML::Node devices = root["devices"];
    if (!devices || !devices.IsSequence()) {
      return ParseError("cost table '" + path.string() + "': needs a 'devices:' list");
    }
    for (const YAML::Node& d : devices) {
      const int line = d.Mark().line + 1;
      for (const auto& kv : d) {
        const auto key = kv.first.as<std::string>();
        if (key != "kind" && key != "name_contains" && key != "usd_per_hour" && key != "source") {
          return ParseError(
              fmt::format("cost table '{}' line {}: unknown key '{}' (kind, name_contains, "
                          "usd_per_hour, source)",
                          path.string(), kv.first.Mark().line + 1, key));
        }
      }
      if (!d["kind"] || !d["usd_per_hour"]) {
        return ParseError(
            fmt::format("cost table '{}' line {}: every entry needs kind and usd_per_hour", path.string(), line));
      }
      CostEntry e{.kind = d["kind"].as<std::string>(),
                  .name_contains = d["name_contains"] ? d["name_contains"].as<std::string>() : "",
                  .usd_per_hour = d["usd_per_hour"].as<double>(),
                  .source = d["source"] ? d["source"].as<std::string>() : ""};
      if (e.usd_per_hour < 0) {
        return ParseError(fmt::format("cost table '{}' line {}: usd_per_hour must be ≥ 0", path.string(), line));
      }
      table.entries.push_back(std::move(e));
    }
  } catch (const YAML::BadFile&) {
    return NotFound("cost table '" + path.string() + "' cannot be read");
  } catch (const YAML::Exception& e) {
    return ParseError("cost table '" + path.string() + "': " + e.what());
  }
  return table;
}

Result<std::map<std::string, double>> ParseWeights(const std::string& text) {
  std::map<std::string, double> weights;
  size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const size_t comma = text.find(',', start);
    const std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t eq = part.find('=');
    if (eq == std::string::npos) return InvalidArgument("--weights: '" + part + "' is not NAME=NUMBER");
    const std::string name = part.substr(0, eq);
    if (name != "latency" && name != "energy" && name != "cost" && name != "drift" && name != "throughput") {
      return InvalidArgument("--weights: unknown term '" + name + "' (latency, energy, cost, drift, throughput)");
    }
    char* end = nullptr;
    const double w = std::strtod(part.c_str() + eq + 1, &end);
    if (end == part.c_str() + eq + 1 || *end != '\0' || !(w >= 0)) {
      return InvalidArgument("--weights: '" + part + "' needs a number ≥ 0");
    }
    weights[name] = w;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return weights;
}

Result<json> Recommend(const std::vector<RecommendCandidate>& targets, const RecommendOptions& o) {
  const Limits& l = o.limits;
  if (l.latency_stat != "p50" && l.latency_stat != "p90" && l.latency_stat != "p99") {
    return InvalidArgument("--latency-stat must be p50, p90 or p99, not '" + l.latency_stat + "'");
  }
  std::map<std::string, double> weights = o.weights;
  if (weights.empty()) weights[ObjectiveName(o.objective)] = 1.0;
  if ((weights.contains("cost") && weights["cost"] > 0) && o.costs == nullptr) {
    return InvalidArgument("the cost objective needs a cost table ($/hour per device)");
  }
  std::vector<Candidate> all;
  for (const RecommendCandidate& t : targets) all.push_back(FromCandidate(t, o));

  json rejected = json::array();
  std::vector<const Candidate*> passing;
  const Candidate* closest = nullptr;
  const Violation* closest_violation = nullptr;
  double closest_severity = kInf;
  std::vector<std::vector<Violation>> violations(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    const Candidate& c = all[i];
    if (!c.ok()) continue;
    violations[i] = Check(c, l);
    // A projection ran nowhere here, so it has no share of time on any device to check.
    if (!c.projected && c.device_share && *c.device_share < kMinDeviceShare) {
      // Its time is another device's: never credit this target's device with it.
      violations[i].push_back(
          {"device", c.device_share, kMinDeviceShare, kInf,
           fmt::format("only {:.0f} % of its time ran on {} (the rest fell back to other devices), so its figures "
                       "are not {}'s",
                       *c.device_share * 100, c.device_id, c.device_id)});
    }
    if (!c.projected && !c.ran_as.empty()) {
      // Its kernels are another measured target's: that one is ranked, this name would only credit
      // the precision with a speed-up (or a loss) it did not make.
      const bool measured = std::any_of(
          all.begin(), all.end(), [&](const Candidate& d) { return d.ok() && !d.projected && d.target == c.ran_as; });
      if (measured) {
        violations[i].push_back({"precision", std::nullopt, kMinOwnPrecisionShareForRank, kInf,
                                 fmt::format("ran as {} ({}): the same kernels as {}, which is ranked instead",
                                             c.ran_as, c.precision_mix, c.ran_as)});
      }
    }
    if (auto guard = GuardViolation(c, l)) violations[i].push_back(std::move(*guard));
    for (Violation& v : TimingViolations(c, l, weights.contains("latency") && weights.at("latency") > 0)) {
      violations[i].push_back(std::move(v));
    }
    if (c.projected) {
      // Its accuracy is another target's measurement (or none): the reason says whose.
      for (Violation& v : violations[i]) {
        if (!IsAccuracyLimit(v.limit)) continue;
        v.reason += c.accuracy_from.empty()
                        ? " (a projection has no accuracy of its own, and this one carries no measured target's)"
                        : " (accuracy carried from " + c.accuracy_from + ", measured here)";
      }
    }
    if (violations[i].empty()) passing.push_back(&c);
  }
  // A limit no target could be measured against (top-1 agreement of a model without class scores):
  // said once, and the closest target is found by the other limits.
  std::vector<std::string> unmeasurable;
  bool any_ran = false;
  for (size_t i = 0; i < all.size(); ++i) any_ran = any_ran || all[i].ok();
  for (const char* limit : {"max_latency_ms", "min_top1", "min_sqnr_db", "max_memory_mb", "max_energy_mj"}) {
    bool asked = false, measured = false;
    for (size_t i = 0; i < all.size(); ++i) {
      if (!all[i].ok()) continue;
      bool violated_unmeasured = false;
      for (const Violation& v : violations[i]) violated_unmeasured |= v.limit == limit && !v.value;
      asked = asked || violated_unmeasured;
      measured = measured || !violated_unmeasured;
    }
    if (asked && !measured) unmeasurable.push_back(limit);
  }
  auto is_unmeasurable = [&](const std::string& limit) {
    return std::find(unmeasurable.begin(), unmeasurable.end(), limit) != unmeasurable.end();
  };
  for (size_t i = 0; i < all.size(); ++i) {
    const Candidate& c = all[i];
    if (!c.ok()) {
      rejected.push_back({{"target", c.target},
                          {"limit", "status"},
                          {"value", nullptr},
                          {"bound", nullptr},
                          {"reason", "did not run (" + c.status + (c.error.empty() ? "" : ": " + c.error) + ")"}});
      MarkProjected(rejected.back(), c);
      continue;
    }
    if (violations[i].empty()) continue;
    double worst = 0;
    const Violation* worst_v = nullptr;
    for (const Violation& v : violations[i]) {
      rejected.push_back({{"target", c.target},
                          {"limit", v.limit},
                          {"value", v.value ? json(*v.value) : json(nullptr)},
                          {"bound", v.bound},
                          {"reason", v.reason}});
      MarkProjected(rejected.back(), c);
      if (is_unmeasurable(v.limit)) continue;
      if (worst_v == nullptr || v.severity > worst) {
        worst = v.severity;
        worst_v = &v;
      }
    }
    // Closest: the smallest worst miss of the measurable limits, then the faster median.
    if (worst < closest_severity || (worst == closest_severity && closest != nullptr && c.p50 < closest->p50)) {
      closest_severity = worst;
      closest = &c;
      closest_violation = worst_v;
    }
  }

  // Score: Σ weight × (value / best passing value); drift adds one per 10 dB below the best SQNR.
  auto value_of = [](const Candidate& c, const std::string& term) -> double {
    if (term == "latency") return c.rank_latency;
    if (term == "energy") return c.energy_mj.value_or(kInf);
    if (term == "cost") return c.cost.value_or(kInf);
    if (term == "throughput") return c.inference_ms;  // wall time per inference: lower is more throughput
    return c.sqnr_db.value_or(-kInf);
  };
  std::map<std::string, double> best;
  for (const auto& [term, w] : weights) {
    double b = term == "drift" ? -kInf : kInf;
    for (const Candidate* c : passing) {
      const double v = value_of(*c, term);
      b = term == "drift" ? std::max(b, v) : std::min(b, v);
    }
    best[term] = b;
  }
  auto score = [&](const Candidate& c) {
    double s = 0;
    for (const auto& [term, w] : weights) {
      if (w == 0) continue;
      const double v = value_of(c, term);
      if (term == "drift") {
        s += w * (std::isfinite(v) && std::isfinite(best[term]) ? 1 + (best[term] - v) / 10.0 : kInf);
      } else {
        s += w * (std::isfinite(v) && best[term] > 0 ? v / best[term] : kInf);
      }
    }
    return s;
  };
  std::vector<std::pair<double, const Candidate*>> ranked;
  for (const Candidate* c : passing) ranked.emplace_back(score(*c), c);
  // Ties go to the more accurate target, then the faster p50, then the lower energy, then the name:
  // deterministic. Scores within
  // kTieTolerance of the best score of their group are ties: a p99 1 % lower is run-to-run noise on
  // these machines (PP-OCR cls: bf16 p99 1.137 ms vs fp32 1.149 ms ranked bf16, 12 % slower at the
  // median and 80 dB more drift, first).
  constexpr double kTieTolerance = 0.03;
  // Within a tie the more accurate target wins: a task agreement higher by more than half a point, or
  // an SQNR higher by more than 1 dB where either is under 60 dB (above, both are exact for any use).
  auto tie_break = [](const auto& x, const auto& y) {
    const Candidate& a = *x.second;
    const Candidate& b = *y.second;
    if (a.task && b.task && std::fabs(*a.task - *b.task) > 0.005) return *a.task > *b.task;
    if (a.sqnr_db && b.sqnr_db && std::min(*a.sqnr_db, *b.sqnr_db) < 60 && std::fabs(*a.sqnr_db - *b.sqnr_db) > 1) {
      return *a.sqnr_db > *b.sqnr_db;
    }
    if (x.second->p50 != y.second->p50) return x.second->p50 < y.second->p50;
    const double ex = x.second->energy_mj.value_or(kInf), ey = y.second->energy_mj.value_or(kInf);
    if (ex != ey) return ex < ey;
    return x.second->target < y.second->target;
  };
  std::sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  // group_of[i]: the index of the first entry of i's tie group (equal scores, or within the tolerance
  // of the group's best finite score); each group is then ordered by the tie-break alone.
  std::vector<size_t> group_of(ranked.size(), 0);
  for (size_t start = 0, end = 0; start < ranked.size(); start = end) {
    const double head = ranked[start].first;
    for (end = start + 1; end < ranked.size(); ++end) {
      const double v = ranked[end].first;
      if (v != head && !(std::isfinite(head) && v <= head * (1 + kTieTolerance))) break;
    }
    const auto first = ranked.begin() + static_cast<std::ptrdiff_t>(start);
    std::sort(first, ranked.begin() + static_cast<std::ptrdiff_t>(end), tie_break);
    std::fill(group_of.begin() + static_cast<std::ptrdiff_t>(start),
              group_of.begin() + static_cast<std::ptrdiff_t>(end), start);
  }
  json ranked_names = json::array(), scores = json::array();
  for (size_t i = 0; i < ranked.size(); ++i) {
    const Candidate& c = *ranked[i].second;
    ranked_names.push_back(c.target);
    const bool tie =
        (i > 0 && group_of[i - 1] == group_of[i]) || (i + 1 < ranked.size() && group_of[i + 1] == group_of[i]);
    scores.push_back({{"target", c.target},
                      {"score", std::isfinite(ranked[i].first) ? json(ranked[i].first) : json(nullptr)},
                      {"tie", tie},
                      {"latency_ms", c.latency},
                      {"p50_ms", c.p50},
                      {"energy_mj", c.energy_mj ? json(*c.energy_mj) : json(nullptr)},
                      {"cost_usd_per_million", c.cost ? json(*c.cost) : json(nullptr)},
                      {"output_sqnr_db", c.sqnr_db ? json(*c.sqnr_db) : json(nullptr)},
                      {"top1_agreement", c.top1 ? json(*c.top1) : json(nullptr)},
                      {"task_agreement", c.task ? json(*c.task) : json(nullptr)},
                      {"task_metric", c.task_metric.empty() ? json(nullptr) : json(c.task_metric)},
                      {"random_calibration", c.random_calibration}});
    if (!c.precision_mix.empty()) scores.back()["precision_mix"] = c.precision_mix;
    if (!c.ran_as.empty()) scores.back()["ran_as"] = c.ran_as;
    if (c.best_batch) {  // throughput mode only, so other recommendations stay the documents they were
      scores.back()["inferences_per_s"] = 1e3 / c.inference_ms;
      scores.back()["best_batch"] = *c.best_batch;
    }
    MarkProjected(scores.back(), c);
  }
  json pareto = json::array();
  for (const Candidate& c : all) {
    if (!c.ok()) continue;
    bool dominated = false;
    for (const Candidate& d : all) dominated = dominated || (d.ok() && Dominates(d, c));
    if (!dominated) pareto.push_back(c.target);
  }

  // The paragraph. The speed is compared with a measured target: a projection against a projection
  // would say nothing of this machine.
  const Candidate* baseline = nullptr;
  for (const Candidate& c : all) {
    if (c.ok() && !c.projected && (baseline == nullptr || c.target == "cpu:fp32")) baseline = &c;
  }
  std::string summary;
  json best_json = nullptr, fallback_json = nullptr, closest_json = nullptr;
  if (!ranked.empty()) {
    const Candidate& b = *ranked.front().second;
    best_json = b.target;
    std::string speed;
    if (baseline != nullptr && baseline != &b && std::isfinite(b.p50) && b.p50 > 0) {
      const double ratio = baseline->p50 / b.p50;
      if (std::fabs(ratio - 1) < 0.03) {
        speed = fmt::format("as fast as {} within 3 % (p50 {:.3g} ms vs {:.3g} ms)", baseline->target, b.p50,
                            baseline->p50);
      } else {
        speed = fmt::format("{:.2f}x {} than {} (p50 {:.3g} ms vs {:.3g} ms)", ratio >= 1 ? ratio : 1 / ratio,
                            ratio >= 1 ? "faster" : "slower", baseline->target, b.p50, baseline->p50);
      }
      // Ranked by a tail the user named while slower at the median: say so, or the sentence reads
      // as if a slower target had been picked by mistake.
      if (o.objective == Objective::kLatency && o.weights.size() <= 1 && l.RankStat() != "p50" &&
          b.p50 > baseline->p50 && std::isfinite(b.rank_latency) && std::isfinite(baseline->rank_latency)) {
        speed += b.projected ? fmt::format(
                                   ", ranked first by its projected median against the {} latency of {} "
                                   "({:.3g} ms vs {:.3g} ms)",
                                   l.RankStat(), baseline->target, b.rank_latency, baseline->rank_latency)
                             : fmt::format(", ranked first by {} latency ({:.3g} ms vs {:.3g} ms)", l.RankStat(),
                                           b.rank_latency, baseline->rank_latency);
      }
    } else {
      speed = fmt::format("p50 {:.3g} ms", b.p50);
    }
    if (b.best_batch && std::isfinite(b.inference_ms) && b.inference_ms > 0) {
      speed += fmt::format(", {:.0f} inferences/s at batch {}", 1e3 / b.inference_ms, *b.best_batch);
    }
    if (!b.ran_as.empty()) speed += fmt::format("; its kernels ran as {} ({})", b.ran_as, b.precision_mix);
    summary = fmt::format("{}: {}, {}, {}", b.Label(), speed, DriftText(b),
                          l.any()      ? (GuardOn(l) ? "within all limits and the accuracy guard" : "within all limits")
                          : GuardOn(l) ? "no limits were given; within the accuracy guard"
                                       : "no limits were given");
    if (b.projected) {
      summary += "; " + ProjectedText(b, l, o.objective == Objective::kLatency && o.weights.size() <= 1);
    }
    if (!b.projected && b.device_share && *b.device_share < 0.995) {
      summary += fmt::format("; {:.0f} % of its time ran on {}, the rest fell back to other devices",
                             *b.device_share * 100, b.device_id);
    }
    if (b.unreliable) {  // ranked only with --rank-unreliable
      summary += "; its timing is unreliable (" +
                 (b.unreliable_reason.empty() ? std::string("too few clean timing rounds") : b.unreliable_reason) +
                 "), ranked because --rank-unreliable was given";
    }
    if (o.objective == Objective::kLatency && o.weights.size() <= 1) {
      summary += fmt::format(" (ranked by {} latency)", l.RankStat());
    } else {
      // An energy ranking built on the energy model's figures says so: the model counts operations and
      // DRAM bytes, not the static power a slower target burns for longer.
      const bool energy_ranked = o.weights.empty() ? o.objective == Objective::kEnergy : o.weights.count("energy") > 0;
      const bool estimated = energy_ranked && b.energy_source.rfind("estimated", 0) == 0;
      summary += fmt::format(" (ranked by {}{})", o.weights.empty() ? ObjectiveName(o.objective) : "the weighted score",
                             estimated ? "; energy is the energy model's estimate (operations, DRAM traffic and "
                                         "static power over the run time), not a measurement"
                                       : "");
    }
    summary += ".";
    // The fallback: the best-ranked other passing target that drifts less.
    for (size_t i = 1; i < ranked.size(); ++i) {
      const Candidate& f = *ranked[i].second;
      if (f.sqnr_db && b.sqnr_db && *f.sqnr_db > *b.sqnr_db + 0.5) {
        fallback_json = f.target;
        summary += fmt::format(" {}{} is the fallback if {}'s drift is not acceptable ({}).", f.target,
                               f.projected ? " (projected, not measured here)" : "", b.target, DriftText(f));
        break;
      }
    }
  } else if (closest != nullptr) {
    std::string unmeasured;
    for (const std::string& limit : unmeasurable) unmeasured += (unmeasured.empty() ? "" : ", ") + limit;
    if (closest_violation != nullptr) {
      closest_json = {
          {"target", closest->target}, {"limit", closest_violation->limit}, {"reason", closest_violation->reason}};
    } else {
      closest_json = {
          {"target", closest->target}, {"limit", nullptr}, {"reason", "within every limit it was measured against"}};
    }
    MarkProjected(closest_json, *closest);
    if (unmeasured.empty()) {
      summary =
          fmt::format("No target meets the limits; the closest is {}: {}.", closest->target, closest_violation->reason);
    } else {
      summary = fmt::format(
          "No target meets the limits: {} could not be measured on any target{}; by the other limits the closest "
          "is {}{}.",
          unmeasured,
          is_unmeasurable("min_top1") ? " (it needs an output with a task metric: class scores, a CTC sequence or a "
                                        "probability map; see --task)"
                                      : "",
          closest->target,
          closest_violation != nullptr ? ": " + closest_violation->reason : ", which meets all of them");
    }
  } else if (any_ran) {
    summary = "No target meets the limits, and none comes close: see the reasons.";
  } else {
    summary = "No target ran, so none can be recommended.";
  }
  int rejected_targets = 0;
  for (size_t i = 0; i < all.size(); ++i) rejected_targets += (!all[i].ok() || !violations[i].empty()) ? 1 : 0;
  if (rejected_targets > 0 && !ranked.empty()) {
    summary += fmt::format(" {} other target(s) rejected (see the reasons).", rejected_targets);
  }

  json limits = {{"latency_stat", l.latency_stat}};
  auto put = [&](const char* key, const std::optional<double>& v) { limits[key] = v ? json(*v) : json(nullptr); };
  put("max_latency_ms", l.max_latency_ms);
  put("min_top1", l.min_top1);
  put("min_sqnr_db", l.min_sqnr_db);
  put("max_memory_mb", l.max_memory_mb);
  put("max_energy_mj", l.max_energy_mj);
  limits["accuracy_guard"] = GuardOn(l);
  if (l.rank_unreliable) limits["rank_unreliable"] = true;  // only when given, so other documents stay as they were
  json weights_json = json::object();
  for (const auto& [term, w] : weights) weights_json[term] = w;
  json projected_names = json::array();
  for (const Candidate& c : all) {
    if (c.projected) projected_names.push_back(c.target);
  }
  json out{{"limits", limits},
           {"objective", ObjectiveName(o.objective)},
           {"weights", weights_json},
           {"cost_table", o.costs ? json(o.costs->path) : json(nullptr)},
           {"ranked", ranked_names},
           {"scores", scores},
           {"pareto", pareto},
           {"rejected", rejected},
           {"best", best_json},
           {"fallback", fallback_json},
           {"closest", closest_json},
           {"summary", summary},
           {"ranked_by", o.objective == Objective::kLatency && o.weights.size() <= 1
                             ? json(l.RankStat() + " latency")
                             : json(o.weights.size() > 1 ? "weighted score" : ObjectiveName(o.objective))},
           {"unmeasurable_limits", unmeasurable}};
  // Only when there are any, so a run of measured targets writes the document it always did.
  if (!projected_names.empty()) out["projected"] = std::move(projected_names);
  return out;
}

}  // namespace chipfit
