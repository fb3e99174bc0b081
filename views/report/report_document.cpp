// Builds the report's content from a RunResult, in the order a reader needs it: what was run, the
// recommendation, the targets, their throughput (throughput mode only), the charts, the machine, the
// notes, then the long per-layer tables and how it was measured.
#include "views/report/report_document.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "core/recommend/recommend.h"
#include "profilers/latency/rounds.h"
#include "profilers/memory/ceilings.h"
#include "profilers/precision_mix.h"
#include "profilers/profile_json.h"
#include "views/charts/formats.h"
#include "views/report/report_command.h"

namespace chipfit::report {

using formats::CountRounds;
using formats::Finite;
using formats::FormatAttribution;
using formats::FormatBytes;
using formats::FormatCeilingConditions;
using formats::FormatDuration;
using formats::FormatInt;
using formats::FormatRounds;
using formats::FormatShort;
using formats::FormatSi;
using formats::FormatSqnr;
using nlohmann::json;

namespace {

// The recommendation is still the chipfit.profile/1 JSON object (RunResult::recommendation), which
// may come from an older or hand-edited run: these read it without throwing on an absent member or a
// wrong type. They go when the recommendation is typed.
namespace recjson {

const json* Field(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<double> Number(const json& j, const char* key) {
  const json* f = Field(j, key);
  if (f == nullptr || !f->is_number()) return std::nullopt;
  return Finite(f->get<double>());
}

std::string String(const json& j, const char* key, const std::string& fallback = {}) {
  const json* f = Field(j, key);
  if (f == nullptr || !f->is_string()) return fallback;
  return f->get<std::string>();
}

std::optional<bool> Bool(const json& j, const char* key) {
  const json* f = Field(j, key);
  if (f == nullptr || !f->is_boolean()) return std::nullopt;
  return f->get<bool>();
}

const json& Array(const json& j, const char* key) {
  static const json kEmpty = json::array();
  const json* f = Field(j, key);
  return f != nullptr && f->is_array() ? *f : kEmpty;
}

}  // namespace recjson

constexpr const char* kDash = "–";
constexpr double kDriftThresholdDb = 30.0;

Cell Text(std::string text, Tone tone = Tone::kNormal) { return Cell{std::move(text), false, false, tone, 1}; }
Cell Num(std::string text, Tone tone = Tone::kNormal) { return Cell{std::move(text), true, false, tone, 1}; }
Cell Mono(std::string text, Tone tone = Tone::kNormal) { return Cell{std::move(text), false, true, tone, 1}; }
// A target or device name ("opencl:0:fp32"): one token a reader searches for, so never broken over lines.
Cell Name(std::string text, Tone tone = Tone::kNormal) {
  Cell c = Mono(std::move(text), tone);
  c.nowrap = true;
  return c;
}

Block Heading(int level, std::string text, std::string id = {}) {
  Block b;
  b.kind = Block::Kind::kHeading;
  b.level = level;
  b.text = std::move(text);
  b.id = std::move(id);
  return b;
}

Block Paragraph(std::string text, Tone tone = Tone::kNormal, std::string label = {}) {
  Block b;
  b.kind = Block::Kind::kParagraph;
  b.text = std::move(text);
  b.tone = tone;
  b.label = std::move(label);
  return b;
}

Block ListBlock(std::vector<std::string> items) {
  Block b;
  b.kind = Block::Kind::kList;
  b.items = std::move(items);
  return b;
}

Block TableBlock(Table table) {
  Block b;
  b.kind = Block::Kind::kTable;
  b.table = std::move(table);
  return b;
}

Block Simple(Block::Kind kind, Tone tone = Tone::kNormal) {
  Block b;
  b.kind = kind;
  b.tone = tone;
  return b;
}

// `digits` significant digits (formats::FormatSig), except that a value rounding up into the next
// decade keeps `digits` of them (99.96 → "100", not "100.0") and no number ends in a bare point.
std::string Sig(double value, int digits = 3) {
  std::string s = formats::FormatSig(value, digits);
  const auto point = s.find('.');
  if (point == std::string::npos) return s;
  int significant = 0;
  bool started = false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) continue;
    started = started || c != '0';
    significant += started ? 1 : 0;
  }
  // The surplus digits of a carried rounding are trailing zeros: dropping them changes no value.
  for (; significant > digits && s.size() > point + 1; --significant) s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

// 2.7 → "270 %", 0.027 → "2.70 %".
std::string Percent(double ratio, int digits = 3) { return Sig(ratio * 100, digits) + " %"; }

// One time unit per table, named in its header so the cells are bare numbers: µs when every time in
// the table is under a millisecond (a small model's layers, a fast target), ms otherwise.
struct TimeUnit {
  double per_ms = 1;
  std::string name = "ms";
};

TimeUnit TimeUnitOf(const std::vector<std::optional<double>>& times_ms) {
  double largest = 0;
  bool any = false;
  for (const std::optional<double>& t : times_ms) {
    if (!t) continue;
    any = true;
    largest = std::max(largest, std::fabs(*t));
  }
  if (any && largest < 1.0) return {1e3, "µs"};
  return {};
}

std::string Time(std::optional<double> ms, const TimeUnit& unit) { return ms ? Sig(*ms * unit.per_ms) : kDash; }

// One energy unit for the whole report (headers, limits, the energy chart), from its largest energy
// figure: J from 1 J, mJ from 1 mJ, µJ below (a small model's inference is a few µJ).
struct EnergyUnit {
  double per_joule = 1e3;
  std::string name = "mJ";
};

EnergyUnit EnergyUnitOf(const RunResult& run) {
  double largest = 0;
  for (const auto& t : run.targets) {
    if (const auto v = t->energy ? Finite(t->energy->joules) : std::nullopt) largest = std::max(largest, std::fabs(*v));
  }
  for (const json& s : recjson::Array(run.recommendation, "scores")) {
    if (const auto mj = recjson::Number(s, "energy_mj")) largest = std::max(largest, std::fabs(*mj) * 1e-3);
  }
  if (largest >= 1) return {1, "J"};
  if (largest >= 1e-3 || largest == 0) return {1e3, "mJ"};
  return {1e6, "µJ"};
}

// A JSON scalar as text (limits, bounds): numbers with 4 significant digits.
std::string Scalar(const json& v) {
  if (v.is_null()) return kDash;
  if (v.is_number()) return FormatShort(v.get<double>(), 4);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  return v.dump();
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

std::vector<std::string> Strings(const json& array) {
  std::vector<std::string> out;
  if (!array.is_array()) return out;
  for (const json& v : array) out.push_back(v.is_string() ? v.get<std::string>() : v.dump());
  return out;
}

// Notes may continue on indented lines; HTML would run them together, so they are joined with "; ".
std::string OneLine(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    const auto first = line.find_first_not_of(" \t\r");
    const auto last = line.find_last_not_of(" \t\r");
    if (first != std::string::npos) out += (out.empty() ? "" : "; ") + line.substr(first, last - first + 1);
    start = end + 1;
  }
  return out;
}

// Runs recorded before the robust spread cut their CoV note to four characters ("CoV 376. %"): no
// percentage in the report ends in a bare point.
std::string TidyPercentages(std::string text) {
  for (size_t at = text.find(". %"); at != std::string::npos; at = text.find(". %", at + 1)) {
    if (at > 0 && std::isdigit(static_cast<unsigned char>(text[at - 1]))) text.erase(at, 1);
  }
  return text;
}

std::string FileName(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// In the report's energy unit, which the column header names: "27.8 (estimated)".
std::string EnergyText(const std::optional<EnergyValue>& energy, const EnergyUnit& unit) {
  const auto v = energy ? Finite(energy->joules) : std::nullopt;
  if (!v) return "not measured";
  return Sig(*v * unit.per_joule) + " (" + energy->source + ")";
}

// The limits object as sentences: "p99 latency ≤ 0.1 ms", skipping the limits not given (null).
std::vector<std::string> LimitTexts(const json& limits, const EnergyUnit& energy) {
  std::vector<std::string> out;
  if (!limits.is_object()) return out;
  const std::string stat = recjson::String(limits, "latency_stat", "p99");
  for (const auto& [key, value] : limits.items()) {
    if (value.is_null() || key == "latency_stat") continue;
    const std::string v = Scalar(value);
    if (key == "accuracy_guard" && value.is_boolean()) {
      // Not a limit the user set: said apart (see AddRecommendation), so "none" still reads true.
      continue;
    } else if (key == "rank_unreliable" && value.is_boolean()) {
      if (value.get<bool>()) out.push_back("targets with unreliable timing ranked too");
    } else if (key == "max_latency_ms") {
      out.push_back(stat + " latency ≤ " + v + " ms");
    } else if (key == "min_top1" && value.is_number()) {
      out.push_back("top-1 agreement ≥ " + FormatShort(value.get<double>() * 100, 4) + " %");
    } else if (key == "min_sqnr_db") {
      out.push_back("output SQNR ≥ " + v + " dB");
    } else if (key == "max_memory_mb") {
      out.push_back("planned peak memory ≤ " + v + " MiB");
    } else if (key == "max_energy_mj" && value.is_number()) {
      out.push_back("energy per inference ≤ " + FormatShort(value.get<double>() * 1e-3 * energy.per_joule, 4) + " " +
                    energy.name);
    } else {
      out.push_back(key + " = " + v);
    }
  }
  return out;
}

void AddTitle(const RunResult& run, Document& doc) {
  const ModelSummary& m = run.model;
  doc.title = "chipfit report: " + FileName(m.path);
  doc.blocks.push_back(Heading(1, doc.title, "top"));

  Table kv;
  kv.rows.push_back({Text("Model"), Mono(m.path)});
  kv.rows.push_back({Text("SHA-256"), Mono(m.sha256.empty() ? kDash : m.sha256)});
  std::vector<std::string> facts = {
      "opset " + FormatInt(static_cast<double>(m.default_opset)),
      FormatInt(static_cast<double>(m.node_count)) + " nodes",
      FormatSi(static_cast<double>(m.parameter_count)) + " parameters",
      FormatSi(static_cast<double>(run.model_flops)) + "FLOP per inference",
  };
  kv.rows.push_back({Text("Model facts"), Text(Join(facts, ", "))});
  kv.rows.push_back({Text("chipfit version"), Mono(run.chipfit_version)});
  kv.rows.push_back({Text("Run id"), run.run_id ? Text(FormatInt(static_cast<double>(*run.run_id)))
                                                : Text("not stored (the run was made with --no-store)", Tone::kMuted)});
  kv.rows.push_back({Text("Run status"), Text(run.status, run.status == "ok" ? Tone::kGood : Tone::kWarn)});
  // The `chipfit profile` line built from the recorded settings: what the run was started with (a GUI
  // run's "chipfit-gui model.onnx", a relative path) may not repeat it.
  const std::string command = ProfileCommandLine(run);
  kv.rows.push_back({Text("Command"), Mono(command)});
  if (!run.command.empty() && run.command != command) {
    kv.rows.push_back({Text("Started as"), Mono(run.command, Tone::kMuted)});
  }
  std::string inputs = run.inputs.source;
  if (run.inputs.seed) inputs += ", seed " + FormatInt(static_cast<double>(*run.inputs.seed));
  if (run.inputs.samples) inputs += ", " + FormatInt(static_cast<double>(*run.inputs.samples)) + " samples";
  if (!run.inputs.kind.empty()) {
    // Which files, so two reports can be told apart by the data they saw: their count and list hash.
    inputs += "; " + FormatInt(static_cast<double>(run.inputs.files)) + " " + run.inputs.kind +
              " file(s), list SHA-256 " + run.inputs.files_sha256.substr(0, 12) + "…";
    if (!run.inputs.preprocess.empty()) inputs += "; preprocessing " + run.inputs.preprocess;
    for (const std::string& note : run.inputs.notes) inputs += "; " + note;
  }
  kv.rows.push_back(
      {Text("Inputs"), Text(inputs, inputs.rfind("seeded random", 0) == 0 ? Tone::kWarn : Tone::kNormal)});
  const RunSettings& s = run.settings;
  std::vector<std::string> parts = {FormatInt(s.warmup) + " warm-up runs",
                                    "at least " + FormatInt(s.iterations) + " timed runs"};
  if (Finite(s.min_time_s)) parts.push_back("and at least " + FormatShort(s.min_time_s) + " s");
  if (!s.reference.empty()) parts.push_back("drift reference " + s.reference);
  if (s.max_time_s > 0) parts.push_back("timing rounds within " + FormatShort(s.max_time_s, 3) + " s");
  kv.rows.push_back({Text("Settings"), Text(Join(parts, ", "))});
  // How the CPU threads were chosen: on a busy machine the default leaves other processes their cores.
  if (!s.threads_reason.empty() || s.threads > 0) {
    std::string threads = s.threads_reason.empty() ? FormatInt(s.threads) : s.threads_reason;
    if (s.other_cpus_before && s.cores > 0) {
      threads += " (other processes kept " + Sig(*s.other_cpus_before, 2) + " of " + FormatInt(s.cores) +
                 " CPUs busy just before timing)";
    }
    kv.rows.push_back({Text("CPU threads"), Text(threads)});
  }
  doc.blocks.push_back(TableBlock(std::move(kv)));
}

void AddRecommendation(const RunResult& run, const EnergyUnit& energy_unit, Document& doc) {
  doc.blocks.push_back(Heading(2, "Recommendation", "recommendation"));
  const json* rec = &run.recommendation;
  if (!rec->is_object()) {
    doc.blocks.push_back(Simple(Block::Kind::kBoxBegin, Tone::kMuted));
    Block lead = Paragraph("No limits given: no recommendation.");
    lead.lead = true;
    doc.blocks.push_back(lead);
    doc.blocks.push_back(Paragraph(
        "Give limits or an objective (chipfit profile or chipfit recommend with --max-latency-ms, --min-top1, "
        "--max-memory-mb, --objective latency|energy|cost) to have the targets ranked and the best one named.",
        Tone::kMuted));
    doc.blocks.push_back(Simple(Block::Kind::kBoxEnd));
    return;
  }
  const std::string best = recjson::String(*rec, "best");
  doc.blocks.push_back(Simple(Block::Kind::kBoxBegin, best.empty() ? Tone::kBad : Tone::kGood));
  Block lead = best.empty() ? Paragraph("No target meets every limit.", Tone::kBad)
                            : Paragraph(best, Tone::kGood, "Recommended target: ");
  lead.lead = true;
  doc.blocks.push_back(lead);
  const std::string summary = recjson::String(*rec, "summary");
  if (!summary.empty()) doc.blocks.push_back(Paragraph(summary));

  Table kv;
  kv.rows.push_back({Text("Objective"), Text(recjson::String(*rec, "objective", kDash))});
  const std::vector<std::string> limits =
      LimitTexts(recjson::Field(*rec, "limits") ? (*rec)["limits"] : json(), energy_unit);
  kv.rows.push_back({Text("Limits"), limits.empty() ? Text("none", Tone::kMuted) : Text(Join(limits, "; "))});
  // The accuracy guard stands in for accuracy limits when none is given.
  if (const json* l = recjson::Field(*rec, "limits"); l != nullptr) {
    if (const auto guard = recjson::Bool(*l, "accuracy_guard")) {
      kv.rows.push_back(
          {Text("Accuracy guard"),
           Text(*guard ? "on: without an accuracy limit, a target under " + Percent(kGuardMinTaskAgreement, 2) +
                             " task agreement (" + Sig(kGuardMinSqnrDb, 2) +
                             " dB output SQNR where no output has a task metric) or int8 calibrated "
                             "on random data is rejected"
                       : std::string("off"))});
    }
  }
  if (const std::string by = recjson::String(*rec, "ranked_by"); !by.empty()) {
    kv.rows.push_back({Text("Ranked by"), Text(by)});
  }
  if (const json* w = recjson::Field(*rec, "weights"); w != nullptr && w->is_object() && !w->empty()) {
    std::vector<std::string> parts;
    for (const auto& [k, v] : w->items()) parts.push_back(k + " × " + Scalar(v));
    kv.rows.push_back({Text("Weights"), Text(Join(parts, ", "))});
  }
  const std::vector<std::string> ranked = Strings(recjson::Array(*rec, "ranked"));
  std::vector<std::string> numbered;
  for (size_t i = 0; i < ranked.size(); ++i) numbered.push_back(std::to_string(i + 1) + ". " + ranked[i]);
  kv.rows.push_back(
      {Text("Ranked (within all limits)"), numbered.empty() ? Text("none", Tone::kBad) : Mono(Join(numbered, "   "))});
  const std::vector<std::string> pareto = Strings(recjson::Array(*rec, "pareto"));
  kv.rows.push_back(
      {Text("Pareto front (latency × drift × energy)"), pareto.empty() ? Text(kDash) : Mono(Join(pareto, ", "))});
  const std::string fallback = recjson::String(*rec, "fallback");
  if (!fallback.empty()) kv.rows.push_back({Text("Fallback (less drift)"), Mono(fallback)});
  if (const json* closest = recjson::Field(*rec, "closest"); closest != nullptr && closest->is_object()) {
    kv.rows.push_back({Text("Closest to the limits"),
                       Text(recjson::String(*closest, "target") + ": " + recjson::String(*closest, "reason"))});
  }
  doc.blocks.push_back(TableBlock(std::move(kv)));
  doc.blocks.push_back(Simple(Block::Kind::kBoxEnd));

  if (const json& scores = recjson::Array(*rec, "scores"); !scores.empty()) {
    const std::string stat =
        recjson::Field(*rec, "limits") ? recjson::String((*rec)["limits"], "latency_stat", "p99") : "p99";
    std::vector<std::optional<double>> times;
    for (const json& s : scores) {
      times.push_back(recjson::Number(s, "latency_ms"));
      times.push_back(recjson::Number(s, "p50_ms"));
    }
    const TimeUnit unit = TimeUnitOf(times);
    // The limit's statistic, and the median beside it unless they are one and the same column.
    const bool median_too = stat != "p50";
    Table t;
    t.header = {"#", "Target", "Score (1 = best)", stat + " " + unit.name};
    if (median_too) t.header.push_back("p50 " + unit.name);
    for (const char* h : {"Energy", "$ per million", "Output SQNR", "Task agreement"}) t.header.emplace_back(h);
    t.header[t.header.size() - 4] += " " + energy_unit.name;
    int rank = 0;
    for (const json& s : scores) {
      ++rank;
      const auto score = recjson::Number(s, "score");
      const auto sqnr = recjson::Number(s, "output_sqnr_db");
      const auto task = recjson::Number(s, "task_agreement");
      const std::string metric = recjson::String(s, "task_metric", "");
      const auto energy = recjson::Number(s, "energy_mj");
      const auto cost = recjson::Number(s, "cost_usd_per_million");
      // A projected target: its latency column is the band's P90 edge (what the limit bounds), its
      // energy an estimate; the row says so.
      const bool projected = recjson::Bool(s, "projected").value_or(false);
      const std::string latency = Time(recjson::Number(s, "latency_ms"), unit);
      std::vector<Cell> row = {
          Num(std::to_string(rank)),
          Name(recjson::String(s, "target", "?") + (projected ? " (projected)" : ""),
               projected ? Tone::kWarn : Tone::kNormal),
          Num(score ? Sig(*score) + (recjson::Bool(s, "tie").value_or(false) ? " (tie)" : "") : kDash),
          Num(projected ? latency + " (band P90)" : latency)};
      if (median_too) row.push_back(Num(Time(recjson::Number(s, "p50_ms"), unit)));
      row.push_back(Num(energy ? Sig(*energy * 1e-3 * energy_unit.per_joule) + (projected ? " (est.)" : "") : kDash));
      row.push_back(Num(cost ? Sig(*cost) : kDash));
      row.push_back(Num(sqnr ? FormatSqnr(*sqnr) : kDash));
      row.push_back(Num(task ? metric + " " + Percent(*task, 4) : kDash));
      t.rows.push_back(std::move(row));
    }
    doc.blocks.push_back(Heading(3, "Ranking"));
    doc.blocks.push_back(TableBlock(std::move(t)));
  }
  if (const json& rejected = recjson::Array(*rec, "rejected"); !rejected.empty()) {
    Table t;
    t.header = {"Target", "Limit", "Value", "Bound", "Reason"};
    for (const json& r : rejected) {
      t.rows.push_back({Name(recjson::String(r, "target", "?")), Text(recjson::String(r, "limit", kDash)),
                        Num(recjson::Field(r, "value") ? Scalar(r["value"]) : kDash),
                        Num(recjson::Field(r, "bound") ? Scalar(r["bound"]) : kDash),
                        Text(recjson::String(r, "reason", kDash), Tone::kBad)});
    }
    doc.blocks.push_back(Heading(3, "Rejected targets"));
    doc.blocks.push_back(TableBlock(std::move(t)));
  }
}

// The robust spread that decides `noisy`: "(p90 − p50)/p50 / MAD/p50", or a dash for the MAD of a run
// recorded before it was (no MAD, no samples).
std::string SpreadText(const LatencyStats& l) {
  const auto p50 = Finite(l.p50), p90 = Finite(l.p90), mad = Finite(l.mad);
  if (!p50 || *p50 <= 0) return kDash;
  const bool mad_known = (mad && *mad > 0) || !l.samples.empty();
  const std::string tail = p90 ? Percent((*p90 - *p50) / *p50, 2) : std::string(kDash);
  return tail + " / " + (mad_known && mad ? Percent(*mad / *p50, 2) : std::string(kDash));
}

std::string MachineBusyText(const LatencyStats& l) {
  const auto share = l.other_cpu_share ? Finite(*l.other_cpu_share) : std::nullopt;
  if (!share) return "not measured";
  return std::string(l.machine_busy ? "yes" : "no") + " (" + Percent(*share, 2) + ")";
}

// Per target: its timing rounds, whether its latency is reliable (and why not), and where its end-to-end
// time goes (Σ layers, between kernels, unexplained), with the reason when Σ layers and end to end
// disagree. Nothing for a run recorded before the rounds and the attribution.
void AddTiming(const RunResult& run, bool any_rounds, Document& doc) {
  const bool any_attribution = std::any_of(run.targets.begin(), run.targets.end(),
                                           [](const auto& t) { return t->status == "ok" && t->attribution; });
  if (!any_rounds && !any_attribution) return;
  doc.blocks.push_back(Heading(3, "Timing rounds and where the time goes", "timing"));
  Table table;
  table.header = {"Target", "Rounds clean / dropped", "Latency", "Where the end-to-end time goes"};
  std::vector<Block> explanations;
  for (const auto& target : run.targets) {
    const TargetResult& t = *target;
    if (t.status != "ok") continue;
    const std::string name = t.target.ToString();
    const std::string rounds = FormatRounds(t.rounds);
    const int dropped = CountRounds(t.rounds).dropped;
    Cell verdict = t.unreliable ? Text("unreliable: " + t.unreliable_reason, Tone::kWarn)
                   : dropped > 0
                       ? Text("from the clean rounds (" + FormatInt(dropped) + " busy ones dropped and repeated)")
                   : rounds.empty() ? Text(kDash, Tone::kMuted)
                                    : Text("every round clean", Tone::kGood);
    table.rows.push_back({Name(name), Num(rounds.empty() ? kDash : rounds), verdict,
                          t.attribution ? Text(FormatAttribution(*t.attribution)) : Text(kDash, Tone::kMuted)});
    if (t.attribution && !t.attribution->explanation.empty()) {
      explanations.push_back(Paragraph(t.attribution->explanation, Tone::kWarn, name + ": "));
    }
  }
  doc.blocks.push_back(TableBlock(std::move(table)));
  for (Block& b : explanations) doc.blocks.push_back(std::move(b));
}

// A target's latency cells after its name and status: p50/p90/p99, spread, CoV, outliers, rounds, busy
// machine, speed-up.
std::vector<Cell> LatencyCells(const TargetResult& t, const TargetResult* baseline, const TimeUnit& unit) {
  std::vector<Cell> row;
  const LatencyStats& l = t.latency;
  row.push_back(Num(Time(Finite(l.p50), unit)));
  row.push_back(Num(Time(Finite(l.p90), unit)));
  row.push_back(Num(Time(Finite(l.p99), unit)));
  // `noisy` comes from the robust spread, so the flag sits there; the CoV, which one stall blows up,
  // is only reported.
  row.push_back(Num(SpreadText(l) + (l.noisy ? " noisy" : ""), l.noisy ? Tone::kWarn : Tone::kNormal));
  const auto cov = Finite(l.cov);
  row.push_back(Num(cov ? Percent(*cov) : kDash));
  // An older run recorded neither samples nor MAD: its outlier count is unknown, not 0.
  const bool robust_known = l.mad > 0 || !l.samples.empty();
  row.push_back(Num(robust_known ? FormatInt(l.outliers) + " of " + FormatInt(l.iterations) : kDash,
                    l.outliers > 0 ? Tone::kWarn : Tone::kNormal));
  // A run recorded before the interleaved rounds has none: a dash, not "0 clean".
  const std::string rounds = FormatRounds(t.rounds);
  row.push_back(Num(rounds.empty() ? kDash : rounds, t.unreliable                        ? Tone::kBad
                                                     : CountRounds(t.rounds).dropped > 0 ? Tone::kWarn
                                                                                         : Tone::kNormal));
  row.push_back(Text(MachineBusyText(l), l.machine_busy ? Tone::kWarn : Tone::kNormal));
  const auto p50 = Finite(l.p50);
  // Within-round pairs when both were timed in rounds (SpeedUp), else the ratio of the p50s.
  std::optional<double> speedup;
  if (baseline != nullptr) speedup = Finite(SpeedUp(*baseline, t));
  if (&t == baseline) {
    row.push_back(Num("1× (baseline)", Tone::kMuted));
  } else if (baseline != nullptr && p50 && *p50 > 0 && speedup && *speedup > 0) {
    row.push_back(Num(Sig(*speedup) + "×"));
  } else {
    row.push_back(Num(kDash));
  }
  return row;
}

// A target's accuracy, memory, energy and fall-back cells after its name.
std::vector<Cell> QualityCells(const TargetResult& t, const EnergyUnit& energy_unit) {
  std::vector<Cell> row;
  // Absent figures go in as NaN, which Finite turns into "not measured" (a `cond ? x : nullopt` here
  // trips GCC 12's -Wmaybe-uninitialized).
  const std::optional<AccuracySummary>& acc = t.accuracy;
  const auto sqnr = Finite(acc ? acc->output_sqnr_db : NAN);
  const auto task = Finite(acc ? acc->task_agreement.value_or(NAN) : NAN);
  const std::string random = acc && acc->random_calibration ? " (random calibration)" : "";
  row.push_back(
      Num((sqnr ? FormatSqnr(*sqnr) : kDash) + random, sqnr && *sqnr < kDriftThresholdDb ? Tone::kBad : Tone::kNormal));
  // The task metric each output used (top-1, CTC sequence, map IoU), worst first in the summary.
  std::string task_text = kDash;
  if (acc && !acc->tasks.empty()) {
    task_text.clear();
    for (const OutputTask& o : acc->tasks) {
      task_text += (task_text.empty() ? "" : "; ") + o.metric + " " + (o.agreement ? Percent(*o.agreement, 4) : kDash) +
                   (acc->tasks.size() > 1 ? " (" + o.output + ")" : "");
    }
    task_text += random;
  }
  row.push_back(Num(task_text, task && *task < kGuardMinTaskAgreement ? Tone::kBad
                               : task && *task < 1                    ? Tone::kWarn
                                                                      : Tone::kNormal));
  row.push_back(Num(FormatBytes(static_cast<double>(t.peak_memory_bytes))));
  row.push_back(Num(t.measured_peak_memory_bytes ? FormatBytes(static_cast<double>(*t.measured_peak_memory_bytes))
                                                 : "not measured"));
  row.push_back(Num(EnergyText(t.energy, energy_unit)));
  const size_t fallbacks = t.fallbacks.size();
  row.push_back(Num(std::to_string(fallbacks), fallbacks > 0 ? Tone::kWarn : Tone::kNormal));
  return row;
}

// Two tables, one row per target each: latency (what was timed and how steadily), then accuracy, memory
// and energy. One table of 17 columns broke target names on paper and overflowed a 1400 px window.
void AddTargets(const RunResult& run, const EnergyUnit& energy_unit, Document& doc) {
  doc.blocks.push_back(Heading(2, "Targets", "targets"));
  const TargetResult* baseline = nullptr;
  bool any_rounds = false;
  std::vector<std::optional<double>> times;
  for (const auto& t : run.targets) {
    any_rounds = any_rounds || !t->rounds.empty();
    if (t->target.ToString() == "cpu:fp32" && t->status == "ok" && Finite(t->latency.p50)) baseline = t.get();
    if (t->status != "ok") continue;
    for (double v : {t->latency.p50, t->latency.p90, t->latency.p99}) times.push_back(Finite(v));
  }
  const TimeUnit unit = TimeUnitOf(times);
  const std::string best = recjson::String(run.recommendation, "best");
  Table latency;
  latency.header = {"Target",
                    "Status",
                    "p50 " + unit.name,
                    "p90 " + unit.name,
                    "p99 " + unit.name,
                    "Spread p90 / MAD",
                    "CoV",
                    "Outliers",
                    "Timing rounds clean / dropped",
                    "Machine busy (others' CPU share)",
                    "Speed-up vs cpu:fp32"};
  Table quality;
  quality.header = {"Target",
                    "Output SQNR",
                    "Task agreement",
                    "Peak memory planned",
                    "Peak memory measured",
                    "Energy / inference " + energy_unit.name,
                    "Fall-backs"};
  for (const auto& target : run.targets) {
    const TargetResult& t = *target;
    const std::string name = t.target.ToString();
    const Cell name_cell = Name(name == best ? name + " ★" : name, name == best ? Tone::kGood : Tone::kNormal);
    std::vector<Cell> row = {name_cell};
    // An unreliable target ran, but its latency is not one to rank: the status says so first.
    if (t.status == "ok" && t.unreliable) {
      row.push_back(Text("ok, unreliable", Tone::kWarn));
    } else {
      row.push_back(Text(t.status, t.status == "ok" ? Tone::kGood : Tone::kBad));
    }
    if (t.status != "ok") {
      // Said once, in the latency table; the second table has nothing to show for it.
      Cell error = Text(t.error.empty() ? "did not run (no reason recorded)" : t.error, Tone::kBad);
      error.colspan = static_cast<int>(latency.header.size()) - 2;
      row.push_back(error);
      latency.rows.push_back(std::move(row));
      Cell none = Text("did not run", Tone::kMuted);
      none.colspan = static_cast<int>(quality.header.size()) - 1;
      quality.rows.push_back({name_cell, none});
      continue;
    }
    for (Cell& c : LatencyCells(t, baseline, unit)) row.push_back(std::move(c));
    latency.rows.push_back(std::move(row));
    std::vector<Cell> second = {name_cell};
    for (Cell& c : QualityCells(t, energy_unit)) second.push_back(std::move(c));
    quality.rows.push_back(std::move(second));
  }
  doc.blocks.push_back(Heading(3, "Latency", "latency"));
  doc.blocks.push_back(TableBlock(std::move(latency)));
  if (baseline == nullptr) {
    doc.blocks.push_back(Paragraph("No cpu:fp32 result in this run: no speed-up baseline.", Tone::kMuted));
  }
  doc.blocks.push_back(Heading(3, "Accuracy, memory and energy", "accuracy"));
  doc.blocks.push_back(TableBlock(std::move(quality)));
  if (!best.empty()) doc.blocks.push_back(Paragraph("★ the recommended target.", Tone::kMuted));
  AddTiming(run, any_rounds, doc);
}

// Throughput mode (`profile --batch … --streams N`) only: one row per target × point, in the order the
// points ran. The times are those of one request (a batch of `batch` inferences); with several streams,
// over every stream's requests, which ran at once. A point that did not run says why across the rest.
// `profile --project`: the projected targets, labelled as such with their band, next to the measured
// ones above; estimates say so.
// "±36 % (39 rows)": the leave-one-device-out median |error| of the published rows of the device's kind.
std::string ValidatedText(const nlohmann::json& p) {
  if (!p.contains("validated_error") || !p["validated_error"].is_number()) return "–";
  return "±" + std::to_string(static_cast<int>(std::lround(100 * p["validated_error"].get<double>()))) + " % (" +
         std::to_string(p.value("validated_rows", 0)) + " rows)";
}

void AddProjections(const RunResult& run, Document& doc) {
  if (!run.projections.is_array() || run.projections.empty()) return;
  doc.blocks.push_back(Heading(2, "Projected targets", "projected"));
  doc.blocks.push_back(Paragraph(
      "PROJECTED, not measured: hardware from chipfit's catalog, its time projected from this run's layers with "
      "the efficiency learned from measurements published for devices of its kind, as the runtime named in the "
      "note would run it (docs/projection.md). The band is P10–P90 of that kind's error on published "
      "measurements with the device left out (on this machine's targets where no published measurement covers "
      "the kind), and 'validated' is the median of that error; inferences/s has concurrent requests keeping "
      "every unit busy; energy is estimated; cost is the catalog's price × p50.",
      Tone::kWarn));
  Block table;
  table.kind = Block::Kind::kTable;
  table.table.header = {"target",           "p50", "P10–P90", "inferences/s", "energy (estimated)", "$ per million",
                        "validated (kind)", "note"};
  for (const auto& p : run.projections) {
    if (!p.is_object()) continue;
    const std::string target = p.value("target", std::string());
    if (p.value("status", std::string()) != "ok") {
      table.table.rows.push_back(
          {Name(target), Num("–"), Num("–"), Num("–"), Num("–"), Num("–"), Num("–"),
           Text("unsupported: " + (p["reason"].is_string() ? p["reason"].get<std::string>() : std::string()),
                Tone::kMuted)});
      continue;
    }
    auto number = [&](const char* key) { return p.contains(key) && p[key].is_number() ? p[key].get<double>() : 0.0; };
    const double energy = p.contains("energy_j") && p["energy_j"].is_object() ? p["energy_j"].value("value", 0.0) : 0;
    table.table.rows.push_back(
        {Name(target), Num(formats::FormatDuration(number("p50_ms"))),
         Num(formats::FormatDuration(number("p10_ms")) + " – " + formats::FormatDuration(number("p90_ms"))),
         Num(formats::FormatSig(number("throughput_per_s"))), Num(formats::FormatEnergy(energy)),
         Num(p["cost_per_million"].is_number() ? "$" + formats::FormatSig(p["cost_per_million"].get<double>()) : "–"),
         Num(ValidatedText(p)),
         Text(p.contains("runtime") && p["runtime"].is_string() ? "projected as " + p["runtime"].get<std::string>()
                                                                : "projected")});
  }
  doc.blocks.push_back(std::move(table));
}

void AddThroughput(const RunResult& run, Document& doc) {
  const bool any =
      std::any_of(run.targets.begin(), run.targets.end(), [](const auto& t) { return !t->throughput.empty(); });
  if (!any) return;
  doc.blocks.push_back(Heading(2, "Throughput", "throughput"));
  doc.blocks.push_back(Paragraph(
      "One row per target, batch size and stream count. p50 and p90 are the latency of one request (a batch "
      "of inferences), in the unit the header names; with several streams, N compiled copies ran at once, each "
      "with its share of the OpenMP threads, and the percentiles are over every stream's requests. Inferences/s "
      "is the throughput; time per inference is 1000 / inferences/s (ms), the wall time each inference costs "
      "when requests run back to back (on one stream, p50 / batch).",
      Tone::kMuted));
  std::vector<std::optional<double>> times;
  for (const auto& t : run.targets) {
    for (const ThroughputPoint& p : t->throughput) {
      if (p.status != "ok") continue;
      times.push_back(Finite(p.latency.p50));
      times.push_back(Finite(p.latency.p90));
      if (p.inferences_per_s > 0) times.push_back(Finite(1e3 / p.inferences_per_s));
    }
  }
  const TimeUnit unit = TimeUnitOf(times);
  Table table;
  table.header = {"Target",
                  "Batch",
                  "Streams",
                  "Threads / stream",
                  "p50 " + unit.name + " / request",
                  "p90 " + unit.name + " / request",
                  "Inferences / s",
                  unit.name + " / inference (1000 / inferences/s)"};
  for (const auto& target : run.targets) {
    const std::string name = target->target.ToString();
    for (const ThroughputPoint& p : target->throughput) {
      std::vector<Cell> row = {Name(name), Num(FormatInt(p.batch)), Num(FormatInt(p.streams)),
                               Num(p.threads_per_stream > 0 ? FormatInt(p.threads_per_stream) : kDash)};
      if (p.status != "ok") {
        Cell error =
            Text(p.status + ": " + (p.error.empty() ? "did not run (no reason recorded)" : p.error), Tone::kBad);
        error.colspan = static_cast<int>(table.header.size() - row.size());
        row.push_back(error);
        table.rows.push_back(std::move(row));
        continue;
      }
      const auto p50 = Finite(p.latency.p50);
      const auto rate = Finite(p.inferences_per_s);
      row.push_back(Num(Time(p50, unit), p.latency.noisy ? Tone::kWarn : Tone::kNormal));
      row.push_back(Num(Time(Finite(p.latency.p90), unit)));
      row.push_back(Num(rate ? Sig(*rate) : kDash));
      row.push_back(Num(rate && *rate > 0 ? Time(1e3 / *rate, unit) : kDash));
      table.rows.push_back(std::move(row));
    }
  }
  doc.blocks.push_back(TableBlock(std::move(table)));
}

void AddLayers(const RunResult& run, Document& doc) {
  doc.blocks.push_back(Heading(2, "Layers", "layers"));
  doc.blocks.push_back(Paragraph(
      "One row per kernel as the target compiled it (a fused kernel covers several ONNX nodes), in execution "
      "order. The kernel is the unit of time: a fused kernel's time is its whole time, never split over its nodes, "
      "as in every view of chipfit. Times are device times of the observed runs, in the unit each table's header "
      "names; % is the share of the sum of layer p50s. Other ONNX nodes: those a fused kernel covers besides the "
      "one it is named after. A device or precision in orange differs from the target's: a "
      "fall-back, or a "
      "layer kept in another precision.",
      Tone::kMuted));
  for (const auto& target : run.targets) {
    const TargetResult& t = *target;
    const std::string name = t.target.ToString();
    const std::vector<LayerResult>& layers = t.layers;
    std::string anchor = "layers-" + name;
    std::replace(anchor.begin(), anchor.end(), ':', '-');
    if (t.status != "ok" || layers.empty()) {
      doc.blocks.push_back(Heading(3, name + ": no layers", anchor));
      doc.blocks.push_back(
          Paragraph(t.status + ": " + (t.error.empty() ? "the target did not run" : t.error), Tone::kBad));
      continue;
    }
    double total = 0;
    for (const LayerResult& layer : layers) total += Finite(layer.time_p50_ms).value_or(0);
    doc.blocks.push_back(Heading(3,
                                 name + ": " + std::to_string(layers.size()) + " layers, Σ p50 " +
                                     FormatDuration(total) + (t.device_name.empty() ? "" : " on " + t.device_name),
                                 anchor));
    // The slowest kernel, named as the GUI's table, charts and graph name it.
    const auto slowest = std::max_element(layers.begin(), layers.end(), [](const LayerResult& a, const LayerResult& b) {
      return Finite(a.time_p50_ms).value_or(0) < Finite(b.time_p50_ms).value_or(0);
    });
    if (const auto p50 = Finite(slowest->time_p50_ms); p50 && total > 0) {
      const std::string covers = slowest->onnx_nodes.size() > 1
                                     ? ", shared by its " + std::to_string(slowest->onnx_nodes.size()) +
                                           " ONNX nodes " + Join(slowest->onnx_nodes, ", ")
                                     : std::string();
      doc.blocks.push_back(Paragraph("Slowest layer: " + slowest->op + " " + slowest->name + ", " +
                                     FormatDuration(*p50) + " p50 (" + Percent(*p50 / total) + " of Σ p50)" + covers +
                                     "."));
    }
    const std::string device = t.target.DeviceId();
    const std::string precision(PrecisionName(t.target.precision));
    // Small models run in microseconds: columns in µs then, so no cell reads 0.0000755.
    std::vector<std::optional<double>> times;
    for (const LayerResult& layer : layers) {
      times.push_back(Finite(layer.time_p50_ms));
      times.push_back(Finite(layer.time_p90_ms));
    }
    const TimeUnit unit = TimeUnitOf(times);
    auto number = [](std::optional<double> v) { return v ? Sig(*v) : std::string(kDash); };
    Table table;
    table.compact = true;
    table.folded_summary = "Show the " + std::to_string(layers.size()) + " layers of " + name;
    table.wide_column = 3;  // ONNX nodes
    table.header = {"#",
                    "Layer",
                    "Op",
                    "Other ONNX nodes",
                    "Device",
                    "Precision",
                    "p50 " + unit.name,
                    "p90 " + unit.name,
                    "%",
                    "FLOPs",
                    "Bytes r+w",
                    "FLOP/B",
                    "GFLOP/s",
                    "GB/s",
                    "Bound",
                    "Drift SQNR"};
    for (size_t i = 0; i < layers.size(); ++i) {
      const LayerResult& layer = layers[i];
      const auto p50 = Finite(layer.time_p50_ms);
      const auto sqnr = Finite(layer.drift ? layer.drift->sqnr_db : NAN);  // NaN: see AddTargets
      // The kernel is named after its first node: the column lists the rest, so an unfused layer's row
      // does not repeat its name.
      std::vector<std::string> nodes;
      for (const std::string& n : layer.onnx_nodes) {
        if (n != layer.name) nodes.push_back(n);
      }
      table.rows.push_back({
          Num(std::to_string(i)),
          Name(layer.name),
          // A Loop's or Scan's body layer ran several times per inference; its times are their sum.
          Text(layer.iterations == 1 ? layer.op : layer.op + " ×" + Sig(layer.iterations, 3)),
          Mono(nodes.empty() ? std::string(kDash) : Join(nodes, ", "), nodes.empty() ? Tone::kMuted : Tone::kNormal),
          // A layer elsewhere than its target's device is a fall-back; another precision, a kept-fp32 layer.
          Text(layer.device, layer.device != device ? Tone::kWarn : Tone::kNormal),
          Text(layer.precision, layer.precision != precision ? Tone::kWarn : Tone::kNormal),
          Num(Time(p50, unit)),
          Num(Time(Finite(layer.time_p90_ms), unit)),
          Num(p50 && total > 0 ? Sig(*p50 / total * 100, 3) : kDash),
          Num(FormatSi(static_cast<double>(layer.flops))),
          Num(FormatBytes(static_cast<double>(layer.bytes_read) + static_cast<double>(layer.bytes_written))),
          Num(number(Finite(layer.arithmetic_intensity))),
          Num(number(Finite(layer.gflops_per_s))),
          Num(number(Finite(layer.gb_per_s))),
          Text(layer.bound.empty() ? kDash : layer.bound),
          Num(sqnr ? FormatSqnr(*sqnr) : kDash, sqnr && *sqnr < kDriftThresholdDb ? Tone::kBad : Tone::kNormal),
      });
    }
    doc.blocks.push_back(TableBlock(std::move(table)));
  }
}

void AddCharts(Document& doc) {
  doc.blocks.push_back(Heading(2, "Charts", "charts"));
  doc.blocks.push_back(Simple(Block::Kind::kCharts));
}

// "bf16 432 GFLOP/s, fp32 223 GFLOP/s, 32.9 GB/s": peaks in the order of their names, as the profile
// JSON lists them.
std::string DescribeCeilings(const std::map<Precision, double>& peaks, std::optional<double> bandwidth_gbps) {
  std::map<std::string, double> by_name;
  for (const auto& [precision, gflops] : peaks) by_name[std::string(PrecisionName(precision))] = gflops;
  std::vector<std::string> parts;
  for (const auto& [precision, gflops] : by_name) parts.push_back(precision + " " + Sig(gflops) + " GFLOP/s");
  if (bandwidth_gbps) parts.push_back(Sig(*bandwidth_gbps) + " GB/s");
  return Join(parts, ", ");
}

// The measured ceilings of a device: run.ceilings (what `devices --measure` cached) first, then the
// device's own.
std::string CeilingsText(const RunResult& run, const std::string& id, const DeviceInfo& device) {
  for (const CeilingReport& c : run.ceilings) {
    if (c.device_id != id) continue;
    // A bandwidth of 0 is one not measured.
    const double bandwidth = c.measured.memory_bandwidth_gbps;
    const std::string text = DescribeCeilings(c.measured.peak_gflops, bandwidth > 0 ? Finite(bandwidth) : std::nullopt);
    // The thread count and a busy machine change what the figures mean: said with them.
    const std::string conditions = FormatCeilingConditions(c);
    if (!text.empty()) {
      return "measured: " + text + (c.measured_at.empty() ? "" : " (" + c.measured_at + ")") +
             (conditions.empty() ? "" : "; " + conditions);
    }
  }
  const DeviceCeilings& own = device.ceilings;
  if (!own.peak_gflops.empty() || own.memory_bandwidth_gbps > 0) {
    const std::string text = DescribeCeilings(own.peak_gflops, Finite(own.memory_bandwidth_gbps));
    if (!text.empty()) return "ceilings: " + text;
  }
  return "not measured (chipfit devices --measure)";
}

// Ceilings measured while other processes held the CPUs are low: the cell is in the warning tone.
Tone CeilingTone(const RunResult& run, const std::string& id) {
  for (const CeilingReport& c : run.ceilings) {
    if (c.device_id == id && c.MeasuredWhileBusy()) return Tone::kWarn;
  }
  return Tone::kNormal;
}

void AddMachine(const RunResult& run, Document& doc) {
  doc.blocks.push_back(Heading(2, "Machine and devices", "machine"));
  const MachineInfo& m = run.machine;
  // Host facts are recorded together or not at all (a run read from an older JSON has none).
  const bool host_known = !m.hostname.empty();
  Table kv;
  kv.rows.push_back({Text("Host"), Mono(host_known ? m.hostname : kDash)});
  kv.rows.push_back({Text("OS"), Text(host_known ? m.os : kDash)});
  kv.rows.push_back({Text("Architecture"), Text(host_known ? m.arch : kDash)});
  doc.blocks.push_back(TableBlock(std::move(kv)));

  Table devices;
  devices.header = {"Device", "Name",          "Vendor",     "Runtime / driver",
                    "Memory", "Compute units", "Precisions", "Roofline ceilings"};
  for (const DeviceInfo& d : m.devices) {
    std::vector<std::string> supported, unsupported;
    for (const PrecisionSupport& p : d.precisions) {
      const std::string precision(PrecisionName(p.precision));
      if (p.support.ok) {
        supported.push_back(precision);
      } else {
        unsupported.push_back(precision + " (" + p.support.reason + ")");
      }
    }
    std::string precisions = supported.empty() ? "none" : Join(supported, ", ");
    if (!unsupported.empty()) precisions += "; not: " + Join(unsupported, "; ");
    std::string runtime = d.runtime_version;
    if (!d.driver_version.empty()) runtime += (runtime.empty() ? "" : ", driver ") + d.driver_version;
    devices.rows.push_back({Name(d.Id()), Text(d.name), Text(d.vendor), Text(runtime.empty() ? kDash : runtime),
                            Num(FormatBytes(static_cast<double>(d.memory_bytes))), Num(FormatInt(d.compute_units)),
                            Text(precisions), Text(CeilingsText(run, d.Id(), d), CeilingTone(run, d.Id()))});
  }
  // Ceilings measured for a device discovery did not list (a run read from an older JSON without its
  // machine): still shown, since the roofline charts draw them.
  std::set<std::string> listed;
  for (const DeviceInfo& d : m.devices) listed.insert(d.Id());
  for (const CeilingReport& c : run.ceilings) {
    if (!listed.insert(c.device_id).second) continue;
    DeviceInfo unknown;
    const std::string text = CeilingsText(run, c.device_id, unknown);
    if (text.rfind("measured", 0) != 0) continue;
    devices.rows.push_back({Name(c.device_id), Text("not among this run's discovered devices", Tone::kMuted),
                            Text(kDash), Text(kDash), Num(kDash), Num(kDash), Text(kDash),
                            Text(text, CeilingTone(run, c.device_id))});
  }
  if (!devices.rows.empty()) doc.blocks.push_back(TableBlock(std::move(devices)));
  if (!m.notes.empty()) {
    doc.blocks.push_back(Paragraph("Device discovery notes:", Tone::kMuted));
    doc.blocks.push_back(ListBlock(m.notes));
  }
}

void AddNotes(const RunResult& run, Document& doc) {
  doc.blocks.push_back(Heading(2, "Notes", "notes"));
  std::vector<std::string> items;
  const RunInputs& inputs = run.inputs;
  if (inputs.source.rfind("seeded random", 0) == 0) {
    items.push_back("Inputs: seeded random tensors" +
                    (inputs.seed ? " (seed " + FormatInt(static_cast<double>(*inputs.seed)) + ")" : std::string()) +
                    ": drift, task agreement and int8 calibration do not reflect real data; give --data for "
                    "real figures.");
  } else if (!inputs.source.empty()) {
    items.push_back("Inputs: " + inputs.source + ".");
  }
  // A note several targets share (the energy model's caveat on every estimated target) is said once,
  // naming them all, where it first appears.
  std::vector<std::pair<std::string, std::vector<std::string>>> target_notes;
  auto add = [&](const std::string& target, const std::string& note) {
    auto it = std::find_if(target_notes.begin(), target_notes.end(), [&](const auto& n) { return n.first == note; });
    if (it == target_notes.end()) {
      target_notes.push_back({note, {target}});
    } else {
      it->second.push_back(target);
    }
  };
  for (const auto& t : run.targets) {
    const std::string name = t->target.ToString();
    for (const std::string& note : t->notes) add(name, TidyPercentages(OneLine(note)));
    for (const Fallback& f : t->fallbacks) {
      add(name, "fall-back: node " + f.node + " (" + f.op + ") ran elsewhere: " + f.reason);
    }
    if (t->accuracy && !t->accuracy->first_layer_below_threshold.empty()) {
      add(name, "first layer below 30 dB drift SQNR: " + t->accuracy->first_layer_below_threshold);
    }
    if (t->accuracy && !t->accuracy->first_non_finite_layer.empty()) {
      add(name, "non-finite values from layer " + t->accuracy->first_non_finite_layer +
                    (t->accuracy->non_finite.empty() ? std::string() : " (" + t->accuracy->non_finite + ")"));
    }
    // What the kernels computed in, where it is not simply the target's precision.
    if (const PrecisionMix mix = ComputePrecisionMix(*t); MixWorthSaying(mix, t->target)) {
      add(name, "precision: " + mix.text +
                    (mix.ran_as.empty() ? std::string()
                                        : "; ran as " + mix.ran_as + ", so it is reported and ranked as that"));
    }
    if (t->partial) add(name, "stopped before it finished: its figures are partial (" + t->error + ")");
  }
  for (const auto& [note, targets] : target_notes) items.push_back(Join(targets, ", ") + ": " + note);
  const EnergySensorsInfo& sensors = run.energy_sensors;
  const std::string used = sensors.used.value_or("");
  items.push_back(used.empty() ? "Energy: no sensor used; every energy figure is an estimate of the energy model."
                               : "Energy: measured with " + used + ".");
  for (const std::string& note : sensors.notes) items.push_back("Energy sensors: " + note);
  for (const std::string& note : run.model.notes) items.push_back("Model: " + note);
  if (items.empty()) items.push_back("none");
  doc.blocks.push_back(ListBlock(std::move(items)));
}

void AddFooter(const RunResult& run, Document& doc) {
  Block footer = Simple(Block::Kind::kFooter);
  std::string timing = "Latency: end-to-end wall time of the compiled model with no instrumentation, after ";
  timing += FormatInt(run.settings.warmup);
  timing +=
      " warm-up runs (at least 0.2 s), timed until both the minimum run count and the minimum time are reached; "
      "p50/p90/p99 over those runs. Targets are timed in interleaved rounds (every target once per round, the "
      "order rotated): a round slot during which other processes took the CPUs this run's threads need is "
      "dropped and repeated, and the statistics come from the clean slots only; a target left with too few "
      "clean rounds within the time budget is unreliable and not ranked. Spread: (p90 − p50)/p50 / MAD/p50, MAD being "
      "the median absolute deviation "
      "from p50; noisy when (p90 − p50)/p50 over 5 % or MAD/p50 over 3 %, a robust spread that one stall does not "
      "set off. CoV = standard deviation / mean is reported only, since one stall blows it up. Outliers: runs slower "
      "than p50 + 10·MAD. Machine busy: other processes used over 10 % of the CPUs while the target was timed (their "
      "share in brackets). Speed-up is the cpu:fp32 time over the target's, the median over the rounds in which both "
      "were timed cleanly (for a run without rounds, the ratio of the p50s). Where the time goes: Σ layers is the "
      "sum of the kernels' p50s, between kernels the median of each observed run's wall time less its kernels' "
      "(executor, copies, waits), unexplained the rest of the end-to-end p50.";
  footer.items.push_back(timing);
  footer.items.push_back(
      "Per-layer times: device time of each kernel over separate observed runs (steady clock on the CPU, event "
      "profiling on OpenCL/CUDA); their sum over the end-to-end p50 is the instrumentation overhead. FLOPs and bytes "
      "come from the op formulas at the executed precision; GFLOP/s and GB/s are those over the p50 time; the bound "
      "compares the arithmetic intensity with the device's measured ridge point.");
  footer.items.push_back(
      "Accuracy drift: every layer's output compared with the same value of the reference run on the same inputs "
      "(SQNR = 10·log10(Σx²/Σ(x−y)²); \"exact\" = identical values). Output SQNR and top-1 agreement are the worst "
      "over the evaluation inputs.");
  footer.items.push_back(
      "Energy: measured only where a hardware sensor exists (source \"measured:<sensor>\"); otherwise ESTIMATED by "
      "chipfit's energy model (operations × energy per operation + bytes × DRAM energy per byte), labelled "
      "\"estimated\" — an estimate, not a measurement.");
  footer.items.push_back("Peak memory: planned = the compiled model's arena plan; measured = heap high-water mark.");
  footer.items.push_back("Written by chipfit " + run.chipfit_version + " from run schema " + kProfileSchema + ".");
  doc.blocks.push_back(std::move(footer));
}

}  // namespace

Document BuildDocument(const RunResult& run) {
  Document doc;
  const EnergyUnit energy = EnergyUnitOf(run);
  AddTitle(run, doc);
  AddRecommendation(run, energy, doc);
  AddTargets(run, energy, doc);
  AddProjections(run, doc);
  AddThroughput(run, doc);
  // The charts before the long per-layer tables, which a reader looks up rather than reads.
  AddCharts(doc);
  AddMachine(run, doc);
  AddNotes(run, doc);
  AddLayers(run, doc);
  AddFooter(run, doc);
  return doc;
}

}  // namespace chipfit::report
