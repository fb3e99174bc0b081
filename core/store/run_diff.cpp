// Target and layer matching, ratios and the noise-aware regression rules of run_diff.h.
#include "core/store/run_diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "core/store/layer_verdict.h"

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

// The oneDNN ISA the CPU kernels were held to (with the environment variable that held it, when one
// did): the same machine under ONEDNN_MAX_CPU_ISA=SSE41 runs other kernels. Null when not recorded.
json IsaKey(const json& machine) {
  if (!machine.is_object()) return nullptr;
  for (const json& d : machine.value("devices", json::array())) {
    if (d.value("kind", "") != "cpu") continue;
    const json props = d.value("properties", json::object());
    if (props.is_object() && props.contains("oneDNN ISA") && props["oneDNN ISA"].is_string()) {
      return props["oneDNN ISA"];
    }
  }
  return nullptr;
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

// The interval of a bootstrap's `ratios`: their central `confidence` share (the ratio itself when
// there are none).
void SetPercentiles(std::vector<double>& ratios, double confidence, RatioInterval& r) {
  if (ratios.empty()) {
    r.low = r.high = r.ratio;
    return;
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

// A profile JSON layer as the same-kernel rule reads it.
LayerKernelTiming LayerKernelOf(const json& layer, double p50, std::optional<double> p90) {
  LayerKernelTiming k;
  k.implementation = layer.value("implementation", "");
  k.precision = layer.value("precision", "");
  k.device = layer.value("device", "");
  const json nodes = layer.value("onnx_nodes", json::array());
  k.nodes = nodes.is_array() && !nodes.empty() ? static_cast<int>(nodes.size()) : 1;
  k.p50_ms = p50;
  k.p90_ms = p90.value_or(p50);
  return k;
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
      const LayerJudgement judged = JudgeLayer(LayerKernelOf(a, *a50, a90), LayerKernelOf(l, *b50, b90), o);
      row["ratio"] = judged.change.ratio;
      row["threshold"] = judged.change.threshold;
      row["same_kernel"] = judged.same_kernel;
      row["verdict"] = LayerVerdictName(judged.verdict);
      regression = judged.change.regressed;
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

// What differs between runs `a` and `b` that changes what their timings mean (ComparabilityDifferences),
// the runs called `label_a` and `label_b` in the text.
std::vector<std::string> Differences(const json& a, const json& b, const std::string& label_a,
                                     const std::string& label_b) {
  std::vector<std::string> out;
  const json kNull;
  auto member = [&](const json& j, const char* key) -> const json& {
    return j.is_object() && j.contains(key) ? j[key] : kNull;
  };
  // `what` differs when both runs recorded it and the values differ.
  auto compare = [&](const std::string& what, const json& va, const json& vb) {
    if (va.is_null() || vb.is_null() || va == vb) return;
    out.push_back(fmt::format("{}: {} in {}, {} in {}", what, Describe(va), label_a, Describe(vb), label_b));
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
  compare("oneDNN ISA", IsaKey(member(a, "machine")), IsaKey(member(b, "machine")));
  return out;
}

// "run 7", or the side and position of a run that has no id ("run B2").
std::string RunLabel(const json& run, const char* side, size_t index) {
  if (const auto id = run.find("run_id"); id != run.end() && id->is_number_integer()) {
    return fmt::format("run {}", id->get<int64_t>());
  }
  return fmt::format("run {}{}", side, index + 1);
}

// One target in the runs of one side.
struct SideTarget {
  std::vector<const json*> ok;      // the target's results in the runs where it ran
  json ids = json::array();         // those runs' ids
  std::string status;               // "ok" when any run ran it, else its status in the first run that has it
  std::vector<std::string> not_ok;  // "run 9 (failed)": the runs where it did not run
};

void Collect(const std::vector<json>& runs, const char* side, std::map<std::string, SideTarget>& out,
             std::vector<std::string>* order) {
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto targets = runs[i].find("targets");
    if (targets == runs[i].end() || !targets->is_array()) continue;
    for (const json& t : *targets) {
      const std::string name = t.value("target", "");
      const auto [it, inserted] = out.try_emplace(name);
      if (inserted && order != nullptr) order->push_back(name);
      SideTarget& s = it->second;
      const std::string status = t.value("status", "");
      if (s.status.empty()) s.status = status;
      if (status == "ok") {
        s.status = "ok";
        s.ok.push_back(&t);
        s.ids.push_back(runs[i].value("run_id", json(nullptr)));
      } else {
        s.not_ok.push_back(fmt::format("{} ({})", RunLabel(runs[i], side, i), status));
      }
    }
  }
}

// A side's latency for one target, over the runs where it ran.
struct SideLatency {
  std::vector<const json*> latency;          // each run's latency_ms (null when absent)
  std::vector<std::vector<double>> samples;  // the stored samples of the runs that have them
  std::optional<double> p50;                 // the side's median
  int64_t count = 0;                         // Σ iterations: the clean timed runs
  std::optional<int64_t> clean_rounds;       // Σ clean rounds; none when no run has rounds
  // Σ over runs of the squared deviations of a run's clean rounds' log medians from their mean, and
  // its degrees of freedom: how far a run's timing moved between its own rounds.
  double round_squares = 0;
  int round_df = 0;
};

SideLatency LatencyOf(const SideTarget& side) {
  static const json kNull;
  SideLatency out;
  std::vector<double> p50s;
  for (const json* t : side.ok) {
    const auto l = t->find("latency_ms");
    const json& latency = l != t->end() && l->is_object() ? *l : kNull;
    out.latency.push_back(&latency);
    std::vector<double> samples = Samples(latency);
    const auto iterations = Num(latency, "iterations");
    out.count += iterations ? static_cast<int64_t>(*iterations) : static_cast<int64_t>(samples.size());
    if (const auto p50 = Num(latency, "p50")) p50s.push_back(*p50);
    if (!samples.empty()) out.samples.push_back(std::move(samples));
    // Rounds: the target's own, or (as a writer may nest them) its latency's.
    const json* rounds = nullptr;
    if (const auto r = t->find("rounds"); r != t->end() && r->is_array()) rounds = &*r;
    if (const auto r = latency.find("rounds"); rounds == nullptr && r != latency.end() && r->is_array()) rounds = &*r;
    if (rounds != nullptr) {
      int64_t clean = 0;
      std::vector<double> logs;
      for (const json& round : *rounds) {
        if (!round.is_object() || !round.value("clean", false)) continue;
        ++clean;
        if (const auto m = Num(round, "median_ms"); m && *m > 0) logs.push_back(std::log(*m));
      }
      out.clean_rounds = out.clean_rounds.value_or(0) + clean;
      if (logs.size() >= 2) {
        double mean = 0;
        for (const double l : logs) mean += l;
        mean /= static_cast<double>(logs.size());
        for (const double l : logs) out.round_squares += (l - mean) * (l - mean);
        out.round_df += static_cast<int>(logs.size()) - 1;
      }
    }
  }
  if (side.ok.size() == 1) {
    out.p50 = Num(*out.latency.front(), "p50");
  } else if (out.samples.size() == side.ok.size()) {
    std::vector<double> pooled;
    for (const auto& s : out.samples) pooled.insert(pooled.end(), s.begin(), s.end());
    out.p50 = MedianOf(pooled);
  } else if (!p50s.empty()) {
    out.p50 = MedianOf(p50s);
  }
  return out;
}

}  // namespace

json DiffRuns(const json& a, const json& b, const DiffOptions& o) { return DiffRunSets({a}, {b}, o); }

json DiffRunSets(const std::vector<json>& a_runs, const std::vector<json>& b_runs, const DiffOptions& o) {
  const json& a0 = a_runs.front();
  const json& b0 = b_runs.front();
  const bool single = a_runs.size() == 1 && b_runs.size() == 1;
  json differences = json::array();
  if (single) {
    differences = ComparabilityDifferences(a0, b0);
  } else {
    // Every run against the first of A: two runs of one side that measured different things are as
    // wrong to pool as two sides that did.
    const std::string first = RunLabel(a0, "A", 0);
    auto check = [&](const json& run, const std::string& label) {
      for (std::string& d : Differences(a0, run, first, label)) differences.push_back(std::move(d));
    };
    for (size_t i = 1; i < a_runs.size(); ++i) check(a_runs[i], RunLabel(a_runs[i], "A", i));
    for (size_t i = 0; i < b_runs.size(); ++i) check(b_runs[i], RunLabel(b_runs[i], "B", i));
  }
  json out = {{"a", RunHeader(a0)}, {"b", RunHeader(b0)}, {"differences", differences}, {"notes", json::array()}};
  json a_ids = json::array(), b_ids = json::array();
  for (const json& r : a_runs) a_ids.push_back(r.value("run_id", json(nullptr)));
  for (const json& r : b_runs) b_ids.push_back(r.value("run_id", json(nullptr)));
  out["a_run_ids"] = a_ids;
  out["b_run_ids"] = b_ids;
  std::vector<std::string> order;
  std::map<std::string, SideTarget> side_a, side_b;
  Collect(b_runs, "B", side_b, &order);
  Collect(a_runs, "A", side_a, nullptr);
  int regressions = 0, inconclusive = 0, improvements = 0;
  json targets = json::array();
  for (const std::string& name : order) {
    const SideTarget& sb = side_b.at(name);
    json row = {{"target", name}, {"b_status", sb.status}};
    const auto it = side_a.find(name);
    if (it == side_a.end()) {
      row["change"] = "added";
      targets.push_back(row);
      continue;
    }
    const SideTarget& sa = it->second;
    row["a_status"] = sa.status;
    for (const auto& [side, s] : {std::pair{"A", &sa}, std::pair{"B", &sb}}) {
      if (s->status == "ok" && !s->not_ok.empty()) {
        std::string where;
        for (const std::string& w : s->not_ok) where += (where.empty() ? "" : ", ") + w;
        out["notes"].push_back(fmt::format("{}: judged on the other runs of {}; not ok in {}", name, side, where));
      }
    }
    if (sa.status != "ok" || sb.status != "ok") {
      // A target that ran in A but not in B is a regression of its own; one stopped by the user in
      // either run was not measured to the end, which says nothing about the build.
      const bool cancelled = sa.status == "cancelled" || sb.status == "cancelled";
      const bool lost = sa.status == "ok" && !cancelled;
      row["regression"] = lost;
      row["verdict"] = cancelled ? "cancelled" : lost ? "regressed" : "unchanged";
      regressions += lost ? 1 : 0;
      targets.push_back(row);
      continue;
    }
    const SideLatency la = LatencyOf(sa), lb = LatencyOf(sb);
    row["a_runs"] = sa.ok.size();
    row["b_runs"] = sb.ok.size();
    row["a_run_ids"] = sa.ids;
    row["b_run_ids"] = sb.ids;
    row["a_samples"] = la.count;
    row["b_samples"] = lb.count;
    row["a_clean_rounds"] = la.clean_rounds ? json(*la.clean_rounds) : json(nullptr);
    row["b_clean_rounds"] = lb.clean_rounds ? json(*lb.clean_rounds) : json(nullptr);
    const json& first_la = *la.latency.front();
    const json& first_lb = *lb.latency.front();
    const auto a50 = la.p50, b50 = lb.p50;
    bool regression = false;
    std::string verdict = "inconclusive";
    if (a50 && b50 && *a50 > 0) {
      std::optional<RatioInterval> interval;
      if (!la.samples.empty() && !lb.samples.empty()) {
        // A machine whose speed moved between a run's own rounds (a load that changed character, a
        // hypervisor's neighbour) can move a whole run's median as far: that spread is the least the
        // between-run spread is taken to be.
        const int round_df = la.round_df + lb.round_df;
        const double within =
            round_df > 0 ? std::sqrt((la.round_squares + lb.round_squares) / static_cast<double>(round_df)) : 0;
        interval = HierarchicalMedianRatio(la.samples, lb.samples, o.confidence, o.resamples, o.seed, within);
        const size_t left_out = la.latency.size() - la.samples.size() + lb.latency.size() - lb.samples.size();
        if (left_out > 0) {
          out["notes"].push_back(
              fmt::format("{}: {} run(s) stored without timing samples left out of the interval", name, left_out));
        }
      } else {
        interval = ApproximateRatio(first_la, first_lb, o.confidence);
        if (interval && !single) interval->method += " (the first run of each side only)";
      }
      row["a_p50_ms"] = *a50;
      row["b_p50_ms"] = *b50;
      row["ratio"] = *b50 / *a50;
      row["a_cov"] = Opt(Num(first_la, "cov"));
      row["b_cov"] = Opt(Num(first_lb, "cov"));
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
      for (const auto& [run, side, l] : {std::tuple{"A", &sa, &la}, std::tuple{"B", &sb, &lb}}) {
        for (size_t i = 0; i < l->latency.size(); ++i) {
          if (!l->latency[i]->value("machine_busy", false)) continue;
          json entry = {{"run", run}, {"other_cpu_share", Opt(Num(*l->latency[i], "other_cpu_share"))}};
          if (l->latency.size() > 1) entry["run_id"] = side->ids[i];
          busy.push_back(entry);
        }
      }
      if (!busy.empty()) row["machine_busy"] = busy;
      row["latency_verdict"] = verdict;
      regression = verdict == "regressed";
      row["latency_regression"] = regression;
      row["faster"] = verdict == "improved";
    }
    // Drift and layers are the first run's of each side: drift is one pass over the same inputs, the
    // same in every run of a build; layers are listed to inform, not to decide.
    const json& ta = *sa.ok.front();
    const json& tb = *sb.ok.front();
    const json& aa = ta.value("accuracy", json(nullptr));
    const json& ab = tb.value("accuracy", json(nullptr));
    const auto sqa = Num(aa, "output_sqnr_db"), sqb = Num(ab, "output_sqnr_db");
    if (sqa && sqb) {
      row["a_sqnr_db"] = *sqa;
      row["b_sqnr_db"] = *sqb;
      row["sqnr_change_db"] = *sqb - *sqa;
      const bool worse = *sqb - *sqa < -o.max_sqnr_drop_db;
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
  for (const auto& [name, t] : side_a) {
    if (!side_b.contains(name)) targets.push_back({{"target", name}, {"a_status", t.status}, {"change", "removed"}});
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
  SetPercentiles(ratios, confidence, r);
  return r;
}

RatioInterval HierarchicalMedianRatio(const std::vector<std::vector<double>>& a,
                                      const std::vector<std::vector<double>>& b, double confidence, int resamples,
                                      uint64_t seed, double min_sigma) {
  if (a.size() == 1 && b.size() == 1) return BootstrapMedianRatio(a[0], b[0], confidence, resamples, seed);
  RatioInterval r;
  auto pooled = [](const std::vector<std::vector<double>>& runs) {
    std::vector<double> all;
    for (const auto& run : runs) all.insert(all.end(), run.begin(), run.end());
    return all;
  };
  std::vector<double> all_a = pooled(a), all_b = pooled(b);
  const double ma = MedianOf(all_a), mb = MedianOf(all_b);
  r.ratio = ma > 0 ? mb / ma : 0;
  // The between-run spread σ: SD of the log medians of each side with several runs, around that side's
  // own mean (the sides differ by the change being measured), pooled over those sides.
  struct Side {
    std::vector<double> offsets;  // each run's log median − the side's mean log median
    double stretch = 1;  // √(n / (n − 1)): a draw of n runs with replacement shows (n − 1)/n of their variance
    std::vector<size_t> blocks;
  };
  double squares = 0;
  int df = 0;
  auto describe = [&](const std::vector<std::vector<double>>& runs) {
    Side side;
    std::vector<double> logs;
    for (const auto& run : runs) {
      std::vector<double> v = run;
      const double m = MedianOf(v);
      logs.push_back(m > 0 ? std::log(m) : std::nan(""));
      side.blocks.push_back(BlockLength(run.size(), {}));
    }
    double mean = 0;
    int n = 0;
    for (const double l : logs) {
      if (!std::isfinite(l)) continue;
      mean += l;
      ++n;
    }
    mean = n > 0 ? mean / n : 0;
    for (const double l : logs) side.offsets.push_back(std::isfinite(l) ? l - mean : 0);
    if (n >= 2) {
      for (const double d : side.offsets) squares += d * d;
      df += n - 1;
      side.stretch = std::sqrt(static_cast<double>(n) / (n - 1));
    }
    return side;
  };
  const Side side_a = describe(a), side_b = describe(b);
  const double between = df > 0 ? std::sqrt(squares / df) : 0;
  const double sigma = std::max(between, df > 0 ? min_sigma : 0.0);
  const bool single_a = a.size() == 1, single_b = b.size() == 1;
  auto any_blocks = [](const Side& s) {
    return std::any_of(s.blocks.begin(), s.blocks.end(), [](size_t k) { return k > 1; });
  };
  r.method = fmt::format(
      "hierarchical bootstrap of the medians ({} resamples: {} and {} runs drawn with replacement, then their {} and "
      "{} stored timings{}); random-effects model for the spread between runs: σ = {:.1f} % from the runs' medians "
      "({} degree(s) of freedom), its own uncertainty drawn each resample (σ*² = σ² · df / χ²(df)) and the drawn runs' "
      "offsets stretched to σ*",
      resamples, a.size(), b.size(), all_a.size(), all_b.size(),
      any_blocks(side_a) || any_blocks(side_b) ? fmt::format(" in blocks of 1/{} of a run", kBootstrapBlocks)
                                               : std::string(" one by one"),
      100 * (std::exp(between) - 1), df);
  if (sigma > between) {
    r.method += fmt::format(
        "; σ raised to {:.1f} %, the spread of the runs' own round medians (a machine whose speed moved between "
        "rounds can move a run as far)",
        100 * (std::exp(sigma) - 1));
  }
  if (single_a || single_b) {
    r.method +=
        fmt::format("; the single run of {} offset by σ* · z, z ~ N(0, 1) (a Student t with {} degree(s) of freedom)",
                    single_a ? "A" : "B", df);
  }
  std::mt19937_64 rng(seed);
  std::chi_squared_distribution<double> chi2(df > 0 ? df : 1);
  std::normal_distribution<double> z;
  std::vector<std::vector<double>> scratch_a, scratch_b;
  for (const auto& run : a) scratch_a.emplace_back(run.size());
  for (const auto& run : b) scratch_b.emplace_back(run.size());
  std::vector<double> pool;
  // One side's median in a resample where the between-run scale is σ* = k · σ.
  auto side_median = [&](const std::vector<std::vector<double>>& runs, const Side& side,
                         std::vector<std::vector<double>>& scratch, bool single, double k) {
    std::uniform_int_distribution<size_t> pick(0, runs.size() - 1);
    pool.clear();
    for (size_t n = 0; n < runs.size(); ++n) {
      const size_t i = pick(rng);
      Resample(runs[i], side.blocks[i], rng, scratch[i]);
      const double scale = std::exp((k * side.stretch - 1) * side.offsets[i]);
      for (const double v : scratch[i]) pool.push_back(v * scale);
    }
    const double m = MedianOf(pool);
    return single ? m * std::exp(sigma * k * z(rng)) : m;
  };
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(std::max(resamples, 1)));
  for (int i = 0; i < resamples; ++i) {
    const double k = df > 0 ? std::sqrt(df / std::max(chi2(rng), 1e-12)) : 1;
    const double ra = side_median(a, side_a, scratch_a, single_a, k);
    const double rb = side_median(b, side_b, scratch_b, single_b, k);
    if (ra > 0) ratios.push_back(rb / ra);
  }
  SetPercentiles(ratios, confidence, r);
  return r;
}

std::vector<std::string> ComparabilityDifferences(const json& a, const json& b) {
  return Differences(a, b, "run A", "run B");
}

}  // namespace chipfit
