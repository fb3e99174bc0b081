// Target and layer matching, ratios and the noise-aware regression rules of run_diff.h.
#include "core/store/run_diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <string>

#include <fmt/format.h>

namespace chipfit {
namespace {

using nlohmann::json;

// A value as the user reads it: strings bare, shapes as 1x3x48x192, the rest as compact JSON.
std::string Describe(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// {"x": "1x3x48x192", …}: the run's own inputs.shapes, else (older runs) its model.inputs; null when
// neither is there.
json InputShapes(const json& run) {
  if (run.contains("inputs") && run["inputs"].is_object() && run["inputs"].contains("shapes") &&
      run["inputs"]["shapes"].is_object()) {
    return run["inputs"]["shapes"];
  }
  const json& model = run.contains("model") ? run["model"] : json();
  if (!model.is_object() || !model.contains("inputs") || !model["inputs"].is_array()) return nullptr;
  json out = json::object();
  for (const json& input : model["inputs"]) {
    std::string dims;
    for (const json& d : input.value("shape", json::array())) {
      dims += (dims.empty() ? "" : "x") + (d.is_number() ? std::to_string(d.get<int64_t>()) : Describe(d));
    }
    out[input.value("name", "?")] = dims;
  }
  return out;
}

// The inputs' source: "seeded random (seed 1)" or "data DIR (N samples)".
json InputsKey(const json& inputs) {
  if (!inputs.is_object() || !inputs.contains("source")) return nullptr;
  std::string key = inputs.value("source", "");
  if (inputs.contains("seed") && inputs["seed"].is_number()) key += fmt::format(" (seed {})", inputs["seed"].dump());
  return key;
}

// The host and its devices by name: "host: cpu AMD EPYC, opencl:0 pthread-…".
json MachineKey(const json& machine) {
  if (!machine.is_object() || !machine.contains("hostname")) return nullptr;
  std::string key = machine.value("hostname", "");
  std::string devices;
  for (const json& d : machine.value("devices", json::array())) {
    devices += (devices.empty() ? "" : ", ") + d.value("id", "") + " " + d.value("name", "");
  }
  return key + " (" + devices + ")";
}

std::optional<double> Num(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

json Opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// z of a two-sided normal interval of this confidence (0.90, 0.95, 0.99; else 1.96).
double NormalZ(double confidence) {
  if (confidence >= 0.989) return 2.576;
  if (confidence <= 0.901) return 1.645;
  return 1.960;
}

std::vector<double> Samples(const json& latency) {
  std::vector<double> out;
  if (const auto it = latency.find("samples"); it != latency.end() && it->is_array()) {
    for (const json& v : *it) {
      if (v.is_number()) out.push_back(v.get<double>());
    }
  }
  return out;
}

double MedianOf(std::vector<double>& v) {
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)) + upper) / 2;
}

// Consecutive runs per bootstrap block: n / kBootstrapBlocks for samples in the order they ran, 1 for
// a sorted sketch or a run too short to cut into blocks.
size_t BlockLength(size_t n, SampleOrder order) {
  if (!order.in_order || n < 2 * static_cast<size_t>(kBootstrapBlocks)) return 1;
  return n / static_cast<size_t>(kBootstrapBlocks);
}

// One bootstrap draw of `from` into `to` (same size): blocks of `block` consecutive values from starts
// drawn uniformly (block 1: values drawn one by one).
void Resample(const std::vector<double>& from, size_t block, std::mt19937_64& rng, std::vector<double>& to) {
  std::uniform_int_distribution<size_t> start(0, from.size() - block);
  for (size_t filled = 0; filled < to.size();) {
    const size_t s = start(rng);
    for (size_t k = 0; k < block && filled < to.size(); ++k) to[filled++] = from[s + k];
  }
}

// Runs stored before the samples were: a normal approximation of each median's standard error from
// a robust spread (MAD · 1.4826 where stored, else (p90 − p50) / 1.2816), 1.2533 · σ / √n.
std::optional<RatioInterval> ApproximateRatio(const json& la, const json& lb, double confidence) {
  auto relative_se = [](const json& l) -> std::optional<double> {
    const auto p50 = Num(l, "p50"), p90 = Num(l, "p90"), n = Num(l, "iterations"), mad = Num(l, "mad");
    if (!p50 || !p90 || !n || *n < 1 || *p50 <= 0) return std::nullopt;
    const double sigma = mad && *mad > 0 ? *mad * 1.4826 : std::max(0.0, *p90 - *p50) / 1.2816;
    return 1.2533 * sigma / std::sqrt(*n) / *p50;
  };
  const auto a50 = Num(la, "p50"), b50 = Num(lb, "p50");
  const auto sa = relative_se(la), sb = relative_se(lb);
  if (!a50 || !b50 || !sa || !sb || *a50 <= 0) return std::nullopt;
  RatioInterval r;
  r.ratio = *b50 / *a50;
  const double half = NormalZ(confidence) * std::sqrt(*sa * *sa + *sb * *sb);
  r.low = r.ratio * std::exp(-half);
  r.high = r.ratio * std::exp(half);
  r.method = "normal approximation from p50, p90 and run counts (a run has no stored samples)";
  return r;
}

std::string Verdict(const RatioInterval& r, double min_change) {
  if (r.low > 1 + min_change) return "regressed";
  if (r.high < 1 - min_change) return "improved";
  if (r.low >= 1 - min_change && r.high <= 1 + min_change) return "unchanged";
  return "inconclusive";
}

json RunHeader(const json& run) {
  return {
      {"run_id", run.value("run_id", json(nullptr))},
      {"status", run.value("status", json(nullptr))},
      {"started_at", run.value("started_at", json(nullptr))},
      {"chipfit_version", run.value("chipfit_version", json(nullptr))},
      {"model",
       {{"path", run["model"].value("path", json(nullptr))}, {"sha256", run["model"].value("sha256", json(nullptr))}}}};
}

json DiffLayers(const json& la, const json& lb, const DiffOptions& o, int& regressions) {
  auto key = [](const json& l) { return l.value("name", "") + "|" + l.value("op", ""); };
  std::map<std::string, const json*> in_a;
  for (const json& l : la) in_a.emplace(key(l), &l);
  json rows = json::array();
  std::map<std::string, bool> seen;
  for (const json& l : lb) {
    const std::string k = key(l);
    seen[k] = true;
    const auto it = in_a.find(k);
    json row = {{"name", l.value("name", "")}, {"op", l.value("op", "")}};
    if (it == in_a.end()) {
      row["change"] = "added";
      rows.push_back(row);
      continue;
    }
    const json& a = *it->second;
    const auto a50 = Num(a.value("time_ms", json(nullptr)), "p50"), b50 = Num(l.value("time_ms", json(nullptr)), "p50");
    const auto a90 = Num(a.value("time_ms", json(nullptr)), "p90"), b90 = Num(l.value("time_ms", json(nullptr)), "p90");
    row["a_ms"] = Opt(a50);
    row["b_ms"] = Opt(b50);
    bool regression = false;
    if (a50 && b50 && *a50 > 0) {
      const LayerChange change = CompareLayerTimes(*a50, a90.value_or(*a50), *b50, b90.value_or(*b50), o);
      row["ratio"] = change.ratio;
      row["threshold"] = change.threshold;
      regression = change.regressed;
    }
    const auto sa = Num(a.value("drift", json(nullptr)), "sqnr_db"),
               sb = Num(l.value("drift", json(nullptr)), "sqnr_db");
    if (sa && sb) {
      row["sqnr_change_db"] = *sb - *sa;
      regression = regression || *sb - *sa < -o.max_sqnr_drop_db;
    }
    row["regression"] = regression;
    regressions += regression ? 1 : 0;
    rows.push_back(row);
  }
  for (const json& l : la) {
    if (!seen.contains(key(l)))
      rows.push_back({{"name", l.value("name", "")}, {"op", l.value("op", "")}, {"change", "removed"}});
  }
  return rows;
}

}  // namespace

json DiffRuns(const json& a, const json& b, const DiffOptions& o) {
  json out = {{"a", RunHeader(a)},
              {"b", RunHeader(b)},
              {"differences", ComparabilityDifferences(a, b)},
              {"notes", json::array()}};
  std::map<std::string, const json*> targets_a;
  static const json kNone = json::array();
  const json& all_a = a.contains("targets") ? a["targets"] : kNone;  // pointers into it are kept below
  const json& all_b = b.contains("targets") ? b["targets"] : kNone;
  for (const json& t : all_a) targets_a.emplace(t.value("target", ""), &t);
  int regressions = 0, inconclusive = 0, improvements = 0;
  json targets = json::array();
  std::map<std::string, bool> seen;
  for (const json& tb : all_b) {
    const std::string name = tb.value("target", "");
    seen[name] = true;
    json row = {{"target", name}, {"b_status", tb.value("status", "")}};
    const auto it = targets_a.find(name);
    if (it == targets_a.end()) {
      row["change"] = "added";
      targets.push_back(row);
      continue;
    }
    const json& ta = *it->second;
    row["a_status"] = ta.value("status", "");
    if (ta.value("status", "") != "ok" || tb.value("status", "") != "ok") {
      // A target that ran in A but not in B is a regression of its own.
      const bool lost = ta.value("status", "") == "ok";
      row["regression"] = lost;
      row["verdict"] = lost ? "regressed" : "unchanged";
      regressions += lost ? 1 : 0;
      targets.push_back(row);
      continue;
    }
    const json& la = ta["latency_ms"];
    const json& lb = tb["latency_ms"];
    const auto a50 = Num(la, "p50"), b50 = Num(lb, "p50");
    bool regression = false;
    std::string verdict = "inconclusive";
    if (a50 && b50 && *a50 > 0) {
      const std::vector<double> sa = Samples(la), sb = Samples(lb);
      std::optional<RatioInterval> interval;
      if (!sa.empty() && !sb.empty()) {
        interval = BootstrapMedianRatio(sa, sb, o.confidence, o.resamples, o.seed);
      } else {
        interval = ApproximateRatio(la, lb, o.confidence);
      }
      row["a_p50_ms"] = *a50;
      row["b_p50_ms"] = *b50;
      row["ratio"] = *b50 / *a50;
      row["a_cov"] = Opt(Num(la, "cov"));
      row["b_cov"] = Opt(Num(lb, "cov"));
      if (interval) {
        verdict = Verdict(*interval, o.min_latency_change);
        row["ci_low"] = interval->low;
        row["ci_high"] = interval->high;
        row["confidence"] = o.confidence;
        row["method"] = interval->method;
      } else {
        row["method"] = "no interval: a run lacks p90 or its run count";
      }
      // A run timed while other processes took the CPUs: its median may have moved with the load, which
      // no interval over its own runs can see. Said beside the verdict; the verdict itself stands (a
      // 100× slowdown on a busy machine is still one).
      json busy = json::array();
      for (const auto& [run, l] : {std::pair{"A", &la}, std::pair{"B", &lb}}) {
        if (l->value("machine_busy", false))
          busy.push_back({{"run", run}, {"other_cpu_share", Opt(Num(*l, "other_cpu_share"))}});
      }
      if (!busy.empty()) row["machine_busy"] = busy;
      row["latency_verdict"] = verdict;
      regression = verdict == "regressed";
      row["latency_regression"] = regression;
      row["faster"] = verdict == "improved";
    }
    const json& aa = ta.value("accuracy", json(nullptr));
    const json& ab = tb.value("accuracy", json(nullptr));
    const auto sa = Num(aa, "output_sqnr_db"), sb = Num(ab, "output_sqnr_db");
    if (sa && sb) {
      row["a_sqnr_db"] = *sa;
      row["b_sqnr_db"] = *sb;
      row["sqnr_change_db"] = *sb - *sa;
      const bool worse = *sb - *sa < -o.max_sqnr_drop_db;
      row["drift_regression"] = worse;
      regression = regression || worse;
    }
    const auto t1a = Num(aa, "top1_agreement"), t1b = Num(ab, "top1_agreement");
    if (t1a && t1b) {
      row["top1_change"] = *t1b - *t1a;
      if (*t1b - *t1a < -o.max_top1_drop) {
        row["drift_regression"] = true;
        regression = true;
      }
    }
    int layer_regressions = 0;
    row["layers"] =
        DiffLayers(ta.value("layers", json::array()), tb.value("layers", json::array()), o, layer_regressions);
    row["layer_regressions"] = layer_regressions;
    row["regression"] = regression;
    if (regression) verdict = "regressed";
    row["verdict"] = verdict;
    regressions += regression ? 1 : 0;
    inconclusive += verdict == "inconclusive" ? 1 : 0;
    improvements += verdict == "improved" ? 1 : 0;
    targets.push_back(row);
  }
  for (const auto& [name, t] : targets_a) {
    if (!seen.contains(name)) {
      targets.push_back({{"target", name}, {"a_status", t->value("status", "")}, {"change", "removed"}});
    }
  }
  out["targets"] = targets;
  out["regressions"] = regressions;
  out["inconclusive"] = inconclusive;
  out["improvements"] = improvements;
  return out;
}

std::string RatioVerdict(const RatioInterval& r, double min_change) { return Verdict(r, min_change); }

LayerChange CompareLayerTimes(double a50, double a90, double b50, double b90, const DiffOptions& o) {
  LayerChange change;
  if (!(a50 > 0) || !(b50 > 0)) return change;
  change.ratio = b50 / a50;
  const double spread = std::max(0.0, a90 - a50) / a50 + std::max(0.0, b90 - b50) / b50;
  change.threshold = std::max(o.min_layer_change, spread);
  const bool big_enough = std::max(a50, b50) >= o.min_layer_ms;
  change.regressed = big_enough && change.ratio > 1 + change.threshold;
  change.improved = big_enough && change.ratio < 1 / (1 + change.threshold);
  return change;
}

RatioInterval BootstrapMedianRatio(const std::vector<double>& a, const std::vector<double>& b, double confidence,
                                   int resamples, uint64_t seed, SampleOrder order_a, SampleOrder order_b) {
  RatioInterval r;
  std::vector<double> sa = a, sb = b;
  const double ma = MedianOf(sa), mb = MedianOf(sb);
  r.ratio = ma > 0 ? mb / ma : 0;
  const size_t block_a = BlockLength(a.size(), order_a), block_b = BlockLength(b.size(), order_b);
  r.method = fmt::format(
      "bootstrap of the medians ({} resamples of {} and {} stored runs{})", resamples, a.size(), b.size(),
      block_a > 1 || block_b > 1 ? fmt::format(", in blocks of {} and {} consecutive runs", block_a, block_b)
                                 : std::string());
  std::mt19937_64 rng(seed);
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(std::max(resamples, 1)));
  for (int i = 0; i < resamples; ++i) {
    Resample(a, block_a, rng, sa);
    Resample(b, block_b, rng, sb);
    const double ra = MedianOf(sa);
    if (ra > 0) ratios.push_back(MedianOf(sb) / ra);
  }
  if (ratios.empty()) {
    r.low = r.high = r.ratio;
    return r;
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1 - confidence) / 2;
  auto at = [&](double q) {
    const auto i = static_cast<size_t>(
        std::clamp(q * static_cast<double>(ratios.size() - 1), 0.0, static_cast<double>(ratios.size() - 1)));
    return ratios[i];
  };
  r.low = at(tail);
  r.high = at(1 - tail);
  return r;
}

std::vector<std::string> ComparabilityDifferences(const json& a, const json& b) {
  std::vector<std::string> out;
  const json kNull;
  auto member = [&](const json& j, const char* key) -> const json& {
    return j.is_object() && j.contains(key) ? j[key] : kNull;
  };
  // `what` differs when both runs recorded it and the values differ.
  auto compare = [&](const std::string& what, const json& va, const json& vb) {
    if (va.is_null() || vb.is_null() || va == vb) return;
    out.push_back(fmt::format("{}: {} in run A, {} in run B", what, Describe(va), Describe(vb)));
  };
  const json& ma = member(a, "model");
  const json& mb = member(b, "model");
  compare("model file (sha256)", member(ma, "sha256"), member(mb, "sha256"));
  compare("input shapes", InputShapes(a), InputShapes(b));
  compare("threads", member(member(a, "settings"), "threads"), member(member(b, "settings"), "threads"));
  compare("int8 calibration", member(member(a, "settings"), "calibration"),
          member(member(b, "settings"), "calibration"));
  compare("inputs", InputsKey(member(a, "inputs")), InputsKey(member(b, "inputs")));
  compare("machine", MachineKey(member(a, "machine")), MachineKey(member(b, "machine")));
  return out;
}

}  // namespace chipfit
