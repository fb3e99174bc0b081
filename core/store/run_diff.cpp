// Target and layer matching, ratios and the noise-aware regression rules of run_diff.h.
#include "core/store/run_diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>

namespace chipfit {
namespace {

using nlohmann::json;

std::optional<double> Num(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

json Opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// Standard error of a median from the run's CoV, mean and iteration count.
std::optional<double> MedianStdError(const json& latency) {
  const auto cov = Num(latency, "cov"), mean = Num(latency, "mean"), n = Num(latency, "iterations");
  if (!cov || !mean || !n || *n < 1) return std::nullopt;
  return 1.2533 * *cov * *mean / std::sqrt(*n);
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
      const double ratio = *b50 / *a50;
      const double spread =
          (a90 ? std::max(0.0, *a90 - *a50) : 0.0) / *a50 + (b90 ? std::max(0.0, *b90 - *b50) : 0.0) / *b50;
      const double threshold = std::max(o.min_layer_change, spread);
      row["ratio"] = ratio;
      row["threshold"] = threshold;
      regression = ratio > 1 + threshold && std::max(*a50, *b50) >= o.min_layer_ms;
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
  json out = {{"a", RunHeader(a)}, {"b", RunHeader(b)}, {"notes", json::array()}};
  if (a["model"].value("sha256", "") != b["model"].value("sha256", "")) {
    out["notes"].push_back("the runs profiled different model files (sha256 differ): layers may not correspond");
  }
  std::map<std::string, const json*> targets_a;
  static const json kNone = json::array();
  const json& all_a = a.contains("targets") ? a["targets"] : kNone;  // pointers into it are kept below
  const json& all_b = b.contains("targets") ? b["targets"] : kNone;
  for (const json& t : all_a) targets_a.emplace(t.value("target", ""), &t);
  int regressions = 0;
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
      regressions += lost ? 1 : 0;
      targets.push_back(row);
      continue;
    }
    const json& la = ta["latency_ms"];
    const json& lb = tb["latency_ms"];
    const auto a50 = Num(la, "p50"), b50 = Num(lb, "p50");
    bool regression = false;
    if (a50 && b50 && *a50 > 0) {
      const double ratio = *b50 / *a50;
      const auto sea = MedianStdError(la), seb = MedianStdError(lb);
      double noise = 0;
      if (sea && seb) noise = o.z * std::sqrt(*sea * *sea + *seb * *seb) / *a50;
      const double threshold = std::max(o.min_latency_change, noise);
      row["a_p50_ms"] = *a50;
      row["b_p50_ms"] = *b50;
      row["ratio"] = ratio;
      row["threshold"] = threshold;
      row["a_cov"] = Opt(Num(la, "cov"));
      row["b_cov"] = Opt(Num(lb, "cov"));
      regression = ratio > 1 + threshold;
      row["latency_regression"] = regression;
      row["faster"] = ratio < 1 - threshold;
      // Beyond ±50 % the runs say little about each other: re-run them on a quieter machine.
      row["too_noisy"] = threshold > 0.5;
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
    regressions += regression ? 1 : 0;
    targets.push_back(row);
  }
  for (const auto& [name, t] : targets_a) {
    if (!seen.contains(name)) {
      targets.push_back({{"target", name}, {"a_status", t->value("status", "")}, {"change", "removed"}});
    }
  }
  out["targets"] = targets;
  out["regressions"] = regressions;
  return out;
}

}  // namespace chipfit
