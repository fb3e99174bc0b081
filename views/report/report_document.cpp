// Builds the report's content from the run JSON, in the order a reader needs it: what was run, the
// recommendation, the targets, their layers, the charts, the machine, the notes, how it was measured.
#include "views/report/report_document.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "views/charts/run_json.h"

namespace chipfit::report {

using nlohmann::json;
namespace rj = runjson;

namespace {

constexpr const char* kDash = "–";
constexpr double kDriftThresholdDb = 30.0;

Cell Text(std::string text, Tone tone = Tone::kNormal) { return Cell{std::move(text), false, false, tone, 1}; }
Cell Num(std::string text, Tone tone = Tone::kNormal) { return Cell{std::move(text), true, false, tone, 1}; }
Cell Mono(std::string text, Tone tone = Tone::kNormal) { return Cell{std::move(text), false, true, tone, 1}; }

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

std::string Ms(std::optional<double> ms) { return ms ? rj::FormatSig(*ms) : kDash; }

std::string Percent(double ratio, int digits = 3) { return rj::FormatSig(ratio * 100, digits) + " %"; }

// A JSON scalar as text (limits, bounds): numbers with 4 significant digits.
std::string Scalar(const json& v) {
  if (v.is_null()) return kDash;
  if (v.is_number()) return rj::FormatShort(v.get<double>(), 4);
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

std::string FileName(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string EnergyText(const json& holder) {
  const json* e = rj::Field(holder, "energy_j");
  const auto v = rj::Number(e, "value");
  if (!v) return "not measured";
  return rj::FormatEnergy(*v) + " (" + rj::String(*e, "source", "source unknown") + ")";
}

// The limits object as sentences: "p99 latency ≤ 0.1 ms", skipping the limits not given (null).
std::vector<std::string> LimitTexts(const json& limits) {
  std::vector<std::string> out;
  if (!limits.is_object()) return out;
  const std::string stat = rj::String(limits, "latency_stat", "p99");
  for (const auto& [key, value] : limits.items()) {
    if (value.is_null() || key == "latency_stat") continue;
    const std::string v = Scalar(value);
    if (key == "max_latency_ms") {
      out.push_back(stat + " latency ≤ " + v + " ms");
    } else if (key == "min_top1" && value.is_number()) {
      out.push_back("top-1 agreement ≥ " + rj::FormatShort(value.get<double>() * 100, 4) + " %");
    } else if (key == "min_sqnr_db") {
      out.push_back("output SQNR ≥ " + v + " dB");
    } else if (key == "max_memory_mb") {
      out.push_back("planned peak memory ≤ " + v + " MiB");
    } else if (key == "max_energy_mj") {
      out.push_back("energy per inference ≤ " + v + " mJ");
    } else {
      out.push_back(key + " = " + v);
    }
  }
  return out;
}

void AddTitle(const json& run, Document& doc) {
  const json* model = rj::Field(run, "model");
  const json& m = model ? *model : json::object();
  const std::string path = rj::String(m, "path", "(model path unknown)");
  doc.title = "chipfit report: " + FileName(path);
  doc.blocks.push_back(Heading(1, doc.title, "top"));

  Table kv;
  kv.rows.push_back({Text("Model"), Mono(path)});
  kv.rows.push_back({Text("SHA-256"), Mono(rj::String(m, "sha256", kDash))});
  std::vector<std::string> facts;
  if (auto v = rj::Number(m, "opset")) facts.push_back("opset " + rj::FormatInt(*v));
  if (auto v = rj::Number(m, "nodes")) facts.push_back(rj::FormatInt(*v) + " nodes");
  if (auto v = rj::Number(m, "params")) facts.push_back(rj::FormatSi(*v) + " parameters");
  if (auto v = rj::Number(m, "flops")) facts.push_back(rj::FormatSi(*v) + "FLOP per inference");
  if (!facts.empty()) kv.rows.push_back({Text("Model facts"), Text(Join(facts, ", "))});
  kv.rows.push_back({Text("chipfit version"), Mono(rj::String(run, "chipfit_version", kDash))});
  const auto run_id = rj::Number(run, "run_id");
  kv.rows.push_back({Text("Run id"), run_id ? Text(rj::FormatInt(*run_id))
                                            : Text("not stored (the run was made with --no-store)", Tone::kMuted)});
  const std::string status = rj::String(run, "status", "unknown");
  kv.rows.push_back({Text("Run status"), Text(status, status == "ok" ? Tone::kGood : Tone::kWarn)});
  kv.rows.push_back({Text("Command"), Mono(rj::String(run, "command", "(not recorded)"))});
  if (const json* inputs = rj::Field(run, "inputs")) {
    std::string text = rj::String(*inputs, "source", kDash);
    if (auto seed = rj::Number(*inputs, "seed")) text += ", seed " + rj::FormatInt(*seed);
    if (auto samples = rj::Number(*inputs, "samples")) text += ", " + rj::FormatInt(*samples) + " samples";
    kv.rows.push_back({Text("Inputs"), Text(text, text.rfind("seeded random", 0) == 0 ? Tone::kWarn : Tone::kNormal)});
  }
  if (const json* s = rj::Field(run, "settings")) {
    std::vector<std::string> parts;
    if (auto v = rj::Number(*s, "warmup")) parts.push_back(rj::FormatInt(*v) + " warm-up runs");
    if (auto v = rj::Number(*s, "iterations")) parts.push_back("at least " + rj::FormatInt(*v) + " timed runs");
    if (auto v = rj::Number(*s, "min_time_s")) parts.push_back("and at least " + rj::FormatShort(*v) + " s");
    const std::string ref = rj::String(*s, "reference");
    if (!ref.empty()) parts.push_back("drift reference " + ref);
    if (!parts.empty()) kv.rows.push_back({Text("Settings"), Text(Join(parts, ", "))});
  }
  doc.blocks.push_back(TableBlock(std::move(kv)));
}

void AddRecommendation(const json& run, Document& doc) {
  doc.blocks.push_back(Heading(2, "Recommendation", "recommendation"));
  const json* rec = rj::Field(run, "recommendation");
  if (rec == nullptr || !rec->is_object()) {
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
  const std::string best = rj::String(*rec, "best");
  doc.blocks.push_back(Simple(Block::Kind::kBoxBegin, best.empty() ? Tone::kBad : Tone::kGood));
  Block lead = best.empty() ? Paragraph("No target meets every limit.", Tone::kBad)
                            : Paragraph(best, Tone::kGood, "Recommended target: ");
  lead.lead = true;
  doc.blocks.push_back(lead);
  const std::string summary = rj::String(*rec, "summary");
  if (!summary.empty()) doc.blocks.push_back(Paragraph(summary));

  Table kv;
  kv.rows.push_back({Text("Objective"), Text(rj::String(*rec, "objective", kDash))});
  const std::vector<std::string> limits = LimitTexts(rj::Field(*rec, "limits") ? (*rec)["limits"] : json());
  kv.rows.push_back({Text("Limits"), limits.empty() ? Text("none", Tone::kMuted) : Text(Join(limits, "; "))});
  if (const json* w = rj::Field(*rec, "weights"); w != nullptr && w->is_object() && !w->empty()) {
    std::vector<std::string> parts;
    for (const auto& [k, v] : w->items()) parts.push_back(k + " × " + Scalar(v));
    kv.rows.push_back({Text("Weights"), Text(Join(parts, ", "))});
  }
  const std::vector<std::string> ranked = Strings(rj::Array(*rec, "ranked"));
  std::vector<std::string> numbered;
  for (size_t i = 0; i < ranked.size(); ++i) numbered.push_back(std::to_string(i + 1) + ". " + ranked[i]);
  kv.rows.push_back(
      {Text("Ranked (within all limits)"), numbered.empty() ? Text("none", Tone::kBad) : Mono(Join(numbered, "   "))});
  const std::vector<std::string> pareto = Strings(rj::Array(*rec, "pareto"));
  kv.rows.push_back(
      {Text("Pareto front (latency × drift × energy)"), pareto.empty() ? Text(kDash) : Mono(Join(pareto, ", "))});
  const std::string fallback = rj::String(*rec, "fallback");
  if (!fallback.empty()) kv.rows.push_back({Text("Fallback (less drift)"), Mono(fallback)});
  if (const json* closest = rj::Field(*rec, "closest"); closest != nullptr && closest->is_object()) {
    kv.rows.push_back(
        {Text("Closest to the limits"), Text(rj::String(*closest, "target") + ": " + rj::String(*closest, "reason"))});
  }
  doc.blocks.push_back(TableBlock(std::move(kv)));
  doc.blocks.push_back(Simple(Block::Kind::kBoxEnd));

  if (const json& scores = rj::Array(*rec, "scores"); !scores.empty()) {
    const std::string stat = rj::Field(*rec, "limits") ? rj::String((*rec)["limits"], "latency_stat", "p99") : "p99";
    Table t;
    t.header = {"#",         "Target",        "Score (1 = best)", stat + " ms", "p50 ms",
                "Energy mJ", "$ per million", "Output SQNR",      "Top-1"};
    int rank = 0;
    for (const json& s : scores) {
      ++rank;
      const auto score = rj::Number(s, "score");
      const auto sqnr = rj::Number(s, "output_sqnr_db");
      const auto top1 = rj::Number(s, "top1_agreement");
      const auto energy = rj::Number(s, "energy_mj");
      const auto cost = rj::Number(s, "cost_usd_per_million");
      t.rows.push_back(
          {Num(std::to_string(rank)), Mono(rj::String(s, "target", "?")),
           Num(score ? rj::FormatSig(*score) + (rj::Bool(s, "tie").value_or(false) ? " (tie)" : "") : kDash),
           Num(Ms(rj::Number(s, "latency_ms"))), Num(Ms(rj::Number(s, "p50_ms"))),
           Num(energy ? rj::FormatSig(*energy) : kDash), Num(cost ? rj::FormatSig(*cost) : kDash),
           Num(sqnr ? rj::FormatSqnr(*sqnr) : kDash), Num(top1 ? Percent(*top1, 4) : kDash)});
    }
    doc.blocks.push_back(Heading(3, "Ranking"));
    doc.blocks.push_back(TableBlock(std::move(t)));
  }
  if (const json& rejected = rj::Array(*rec, "rejected"); !rejected.empty()) {
    Table t;
    t.header = {"Target", "Limit", "Value", "Bound", "Reason"};
    for (const json& r : rejected) {
      t.rows.push_back({Mono(rj::String(r, "target", "?")), Text(rj::String(r, "limit", kDash)),
                        Num(rj::Field(r, "value") ? Scalar(r["value"]) : kDash),
                        Num(rj::Field(r, "bound") ? Scalar(r["bound"]) : kDash),
                        Text(rj::String(r, "reason", kDash), Tone::kBad)});
    }
    doc.blocks.push_back(Heading(3, "Rejected targets"));
    doc.blocks.push_back(TableBlock(std::move(t)));
  }
}

void AddTargets(const json& run, Document& doc) {
  doc.blocks.push_back(Heading(2, "Targets", "targets"));
  const auto targets = rj::Targets(run);
  std::optional<double> baseline;
  for (const json* t : targets) {
    if (rj::String(*t, "target") == "cpu:fp32" && rj::TargetOk(*t)) baseline = rj::NumberAt(*t, "latency_ms", "p50");
  }
  const std::string best = rj::Field(run, "recommendation") ? rj::String(run["recommendation"], "best") : std::string();
  Table table;
  table.header = {"Target",
                  "Status",
                  "p50 ms",
                  "p90 ms",
                  "p99 ms",
                  "CoV",
                  "Speed-up vs cpu:fp32",
                  "Output SQNR",
                  "Top-1",
                  "Peak memory planned",
                  "Peak memory measured",
                  "Energy / inference",
                  "Fall-backs"};
  for (const json* t : targets) {
    const std::string name = rj::String(*t, "target", "?");
    const std::string status = rj::String(*t, "status", "unknown");
    std::vector<Cell> row;
    row.push_back(Mono(name == best ? name + " ★" : name, name == best ? Tone::kGood : Tone::kNormal));
    row.push_back(Text(status, status == "ok" ? Tone::kGood : Tone::kBad));
    if (status != "ok") {
      Cell error = Text(rj::String(*t, "error", "did not run (no reason recorded)"), Tone::kBad);
      error.colspan = static_cast<int>(table.header.size()) - 2;
      row.push_back(error);
      table.rows.push_back(std::move(row));
      continue;
    }
    const json* lat = rj::Field(*t, "latency_ms");
    const json& l = lat ? *lat : json::object();
    row.push_back(Num(Ms(rj::Number(l, "p50"))));
    row.push_back(Num(Ms(rj::Number(l, "p90"))));
    row.push_back(Num(Ms(rj::Number(l, "p99"))));
    const auto cov = rj::Number(l, "cov");
    const bool noisy = rj::Bool(l, "noisy").value_or(false);
    row.push_back(Num(cov ? Percent(*cov) + (noisy ? " noisy" : "") : kDash, noisy ? Tone::kWarn : Tone::kNormal));
    const auto p50 = rj::Number(l, "p50");
    if (name == "cpu:fp32") {
      row.push_back(Num("1× (baseline)", Tone::kMuted));
    } else if (baseline && p50 && *p50 > 0) {
      row.push_back(Num(rj::FormatSig(*baseline / *p50) + "×"));
    } else {
      row.push_back(Num(kDash));
    }
    const json* acc = rj::Field(*t, "accuracy");
    const auto sqnr = rj::Number(acc, "output_sqnr_db");
    const auto top1 = rj::Number(acc, "top1_agreement");
    row.push_back(Num(sqnr ? rj::FormatSqnr(*sqnr) : kDash,
                      sqnr.value_or(INFINITY) < kDriftThresholdDb ? Tone::kBad : Tone::kNormal));
    row.push_back(Num(top1 ? Percent(*top1, 4) : kDash, top1.value_or(1.0) < 1 ? Tone::kWarn : Tone::kNormal));
    const auto planned = rj::Number(*t, "peak_memory_bytes");
    const auto measured = rj::Number(*t, "measured_peak_memory_bytes");
    row.push_back(Num(planned ? rj::FormatBytes(*planned) : kDash));
    row.push_back(Num(measured ? rj::FormatBytes(*measured) : "not measured"));
    row.push_back(Num(EnergyText(*t)));
    const size_t fallbacks = rj::Array(*t, "fallbacks").size();
    row.push_back(Num(std::to_string(fallbacks), fallbacks > 0 ? Tone::kWarn : Tone::kNormal));
    table.rows.push_back(std::move(row));
  }
  doc.blocks.push_back(TableBlock(std::move(table)));
  if (!baseline) {
    doc.blocks.push_back(Paragraph("No cpu:fp32 result in this run: no speed-up baseline.", Tone::kMuted));
  }
  if (!best.empty()) doc.blocks.push_back(Paragraph("★ the recommended target.", Tone::kMuted));
}

void AddLayers(const json& run, Document& doc) {
  doc.blocks.push_back(Heading(2, "Layers", "layers"));
  doc.blocks.push_back(Paragraph(
      "One row per kernel as the target compiled it (a fused kernel covers several ONNX nodes), in execution "
      "order. Times are device times of the observed runs; % is the share of the sum of layer p50s. A device or "
      "precision in orange differs from the target's: a fall-back, or a layer kept in another precision.",
      Tone::kMuted));
  for (const json* t : rj::Targets(run)) {
    const std::string name = rj::String(*t, "target", "?");
    const json& layers = rj::Array(*t, "layers");
    std::string device_name;
    if (const json* d = rj::Field(*t, "device")) device_name = rj::String(*d, "name");
    std::string anchor = "layers-" + name;
    std::replace(anchor.begin(), anchor.end(), ':', '-');
    if (!rj::TargetOk(*t) || layers.empty()) {
      doc.blocks.push_back(Heading(3, name + ": no layers", anchor));
      doc.blocks.push_back(Paragraph(
          rj::String(*t, "status", "unknown") + ": " + rj::String(*t, "error", "the target did not run"), Tone::kBad));
      continue;
    }
    double total = 0;
    for (const json& layer : layers) total += rj::NumberAt(layer, "time_ms", "p50").value_or(0);
    doc.blocks.push_back(Heading(3,
                                 name + ": " + std::to_string(layers.size()) + " layers, Σ p50 " +
                                     rj::FormatDuration(total) + (device_name.empty() ? "" : " on " + device_name),
                                 anchor));
    const std::string device = rj::TargetDevice(*t);
    const std::string precision = rj::TargetPrecision(name);
    // Small models run in microseconds: columns in µs then, so no cell reads 0.0000755.
    double slowest = 0;
    for (const json& layer : layers) slowest = std::max(slowest, rj::NumberAt(layer, "time_ms", "p90").value_or(0));
    const bool micro = slowest < 1.0;
    const double scale = micro ? 1e3 : 1.0;
    const std::string unit = micro ? "µs" : "ms";
    auto time = [&](std::optional<double> ms) { return ms ? rj::FormatSig(*ms * scale) : std::string(kDash); };
    Table table;
    table.compact = true;
    table.header = {"#", "Layer", "Op",        "ONNX nodes", "Device",  "Precision", "p50 " + unit, "p90 " + unit,
                    "%", "FLOPs", "Bytes r+w", "FLOP/B",     "GFLOP/s", "GB/s",      "Bound",       "Drift SQNR"};
    for (size_t i = 0; i < layers.size(); ++i) {
      const json& layer = layers[i];
      const auto p50 = rj::NumberAt(layer, "time_ms", "p50");
      const auto flops = rj::Number(layer, "flops");
      const auto read = rj::Number(layer, "bytes_read");
      const auto written = rj::Number(layer, "bytes_written");
      const auto ai = rj::Number(layer, "arithmetic_intensity");
      const auto gflops = rj::Number(layer, "gflops_per_s");
      const auto gbs = rj::Number(layer, "gb_per_s");
      const json* drift = rj::Field(layer, "drift");
      const auto sqnr = rj::Number(drift, "sqnr_db");
      const std::string ldevice = rj::String(layer, "device", kDash);
      const std::string lprecision = rj::String(layer, "precision", kDash);
      std::vector<std::string> nodes = Strings(rj::Array(layer, "onnx_nodes"));
      table.rows.push_back({
          Num(std::to_string(i)),
          Mono(rj::String(layer, "name", kDash)),
          Text(rj::String(layer, "op", kDash)),
          Mono(nodes.empty() ? std::string(kDash) : Join(nodes, ", "), nodes.empty() ? Tone::kMuted : Tone::kNormal),
          // A layer elsewhere than its target's device is a fall-back; another precision, a kept-fp32 layer.
          Text(ldevice, ldevice != device ? Tone::kWarn : Tone::kNormal),
          Text(lprecision, lprecision != precision ? Tone::kWarn : Tone::kNormal),
          Num(time(p50)),
          Num(time(rj::NumberAt(layer, "time_ms", "p90"))),
          Num(p50 && total > 0 ? rj::FormatSig(*p50 / total * 100, 3) : kDash),
          Num(flops ? rj::FormatSi(*flops) : kDash),
          Num(read || written ? rj::FormatBytes(read.value_or(0) + written.value_or(0)) : kDash),
          Num(ai ? rj::FormatSig(*ai) : kDash),
          Num(gflops ? rj::FormatSig(*gflops) : kDash),
          Num(gbs ? rj::FormatSig(*gbs) : kDash),
          Text(rj::String(layer, "bound", kDash)),
          Num(sqnr ? rj::FormatSqnr(*sqnr) : kDash,
              sqnr.value_or(INFINITY) < kDriftThresholdDb ? Tone::kBad : Tone::kNormal),
      });
    }
    doc.blocks.push_back(TableBlock(std::move(table)));
  }
}

void AddCharts(Document& doc) {
  doc.blocks.push_back(Heading(2, "Charts", "charts"));
  doc.blocks.push_back(Simple(Block::Kind::kCharts));
}

// The measured ceilings of a device: run["ceilings"] (what `devices --measure` cached) first, then the
// device's own entry.
std::string CeilingsText(const json& run, const json& device) {
  const std::string id = rj::String(device, "id");
  auto describe = [](const json& c) {
    std::vector<std::string> parts;
    if (const json* peaks = rj::Field(c, "peak_gflops"); peaks != nullptr && peaks->is_object()) {
      for (const auto& [precision, v] : peaks->items()) {
        if (v.is_number()) parts.push_back(precision + " " + rj::FormatSig(v.get<double>()) + " GFLOP/s");
      }
    }
    if (auto bw = rj::Number(c, "memory_bandwidth_gbps")) parts.push_back(rj::FormatSig(*bw) + " GB/s");
    return Join(parts, ", ");
  };
  for (const json& c : rj::Array(run, "ceilings")) {
    if (rj::String(c, "device") != id) continue;
    std::string text;
    if (const json* m = rj::Field(c, "measured")) text = describe(*m);
    if (!text.empty()) {
      const std::string when = rj::String(c, "measured_at");
      return "measured: " + text + (when.empty() ? "" : " (" + when + ")");
    }
  }
  if (const json* c = rj::Field(device, "ceilings")) {
    const std::string text = describe(*c);
    if (!text.empty()) return rj::String(*c, "source", "ceilings") + ": " + text;
  }
  return "not measured (chipfit devices --measure)";
}

void AddMachine(const json& run, Document& doc) {
  doc.blocks.push_back(Heading(2, "Machine and devices", "machine"));
  const json* machine = rj::Field(run, "machine");
  const json& m = machine ? *machine : json::object();
  Table kv;
  kv.rows.push_back({Text("Host"), Mono(rj::String(m, "hostname", kDash))});
  kv.rows.push_back({Text("OS"), Text(rj::String(m, "os", kDash))});
  kv.rows.push_back({Text("Architecture"), Text(rj::String(m, "arch", kDash))});
  doc.blocks.push_back(TableBlock(std::move(kv)));

  Table devices;
  devices.header = {"Device", "Name",          "Vendor",     "Runtime / driver",
                    "Memory", "Compute units", "Precisions", "Roofline ceilings"};
  for (const json& d : rj::Array(m, "devices")) {
    std::vector<std::string> supported, unsupported;
    for (const json& p : rj::Array(d, "precisions")) {
      const std::string precision = rj::String(p, "precision", "?");
      if (rj::Bool(p, "supported").value_or(false)) {
        supported.push_back(precision);
      } else {
        unsupported.push_back(precision + " (" + rj::String(p, "reason", "unsupported") + ")");
      }
    }
    std::string precisions = supported.empty() ? "none" : Join(supported, ", ");
    if (!unsupported.empty()) precisions += "; not: " + Join(unsupported, "; ");
    std::string runtime = rj::String(d, "runtime_version");
    const std::string driver = rj::String(d, "driver_version");
    if (!driver.empty()) runtime += (runtime.empty() ? "" : ", driver ") + driver;
    const auto memory = rj::Number(d, "memory_bytes");
    const auto units = rj::Number(d, "compute_units");
    devices.rows.push_back({Mono(rj::String(d, "id", kDash)), Text(rj::String(d, "name", kDash)),
                            Text(rj::String(d, "vendor", kDash)), Text(runtime.empty() ? kDash : runtime),
                            Num(memory ? rj::FormatBytes(*memory) : kDash), Num(units ? rj::FormatInt(*units) : kDash),
                            Text(precisions), Text(CeilingsText(run, d))});
  }
  if (!devices.rows.empty()) doc.blocks.push_back(TableBlock(std::move(devices)));
  if (const std::vector<std::string> notes = Strings(rj::Array(m, "notes")); !notes.empty()) {
    doc.blocks.push_back(Paragraph("Device discovery notes:", Tone::kMuted));
    doc.blocks.push_back(ListBlock(notes));
  }
}

void AddNotes(const json& run, Document& doc) {
  doc.blocks.push_back(Heading(2, "Notes", "notes"));
  std::vector<std::string> items;
  if (const json* inputs = rj::Field(run, "inputs")) {
    const std::string source = rj::String(*inputs, "source");
    if (source.rfind("seeded random", 0) == 0) {
      items.push_back("Inputs: seeded random tensors" +
                      (rj::Number(*inputs, "seed") ? " (seed " + rj::FormatInt(*rj::Number(*inputs, "seed")) + ")"
                                                   : std::string()) +
                      ": drift, top-1 agreement and int8 calibration do not reflect real data; give --data for "
                      "real figures.");
    } else if (!source.empty()) {
      items.push_back("Inputs: " + source + ".");
    }
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
  for (const json* t : rj::Targets(run)) {
    const std::string name = rj::String(*t, "target", "?");
    for (const std::string& note : Strings(rj::Array(*t, "notes"))) add(name, OneLine(note));
    for (const json& f : rj::Array(*t, "fallbacks")) {
      add(name, "fall-back: node " + rj::String(f, "node", "?") + " (" + rj::String(f, "op", "?") +
                    ") ran elsewhere: " + rj::String(f, "reason", "no reason recorded"));
    }
    if (const json* acc = rj::Field(*t, "accuracy")) {
      const std::string first = rj::String(*acc, "first_layer_below_threshold");
      if (!first.empty()) add(name, "first layer below 30 dB drift SQNR: " + first);
    }
  }
  for (const auto& [note, targets] : target_notes) items.push_back(Join(targets, ", ") + ": " + note);
  if (const json* sensors = rj::Field(run, "energy_sensors")) {
    const std::string used = rj::String(*sensors, "used");
    items.push_back(used.empty() ? "Energy: no sensor used; every energy figure is an estimate of the energy model."
                                 : "Energy: measured with " + used + ".");
    for (const std::string& note : Strings(rj::Array(*sensors, "notes"))) items.push_back("Energy sensors: " + note);
  }
  if (const json* model = rj::Field(run, "model")) {
    for (const std::string& note : Strings(rj::Array(*model, "notes"))) items.push_back("Model: " + note);
  }
  if (items.empty()) items.push_back("none");
  doc.blocks.push_back(ListBlock(std::move(items)));
}

void AddFooter(const json& run, Document& doc) {
  Block footer = Simple(Block::Kind::kFooter);
  const json* s = rj::Field(run, "settings");
  const json& settings = s ? *s : json::object();
  std::string timing = "Latency: end-to-end wall time of the compiled model with no instrumentation, after ";
  timing += rj::Number(settings, "warmup") ? rj::FormatInt(*rj::Number(settings, "warmup")) : std::string("the");
  timing +=
      " warm-up runs (at least 0.2 s), timed until both the minimum run count and the minimum time are reached; "
      "p50/p90/p99 over those runs, CoV = standard deviation / mean, noisy when over 5 %. Speed-up is the "
      "cpu:fp32 p50 over the target's p50.";
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
  footer.items.push_back("Written by chipfit " + rj::String(run, "chipfit_version", "?") + " from run schema " +
                         rj::String(run, "schema", "?") + ".");
  doc.blocks.push_back(std::move(footer));
}

}  // namespace

Document BuildDocument(const json& run) {
  Document doc;
  AddTitle(run, doc);
  AddRecommendation(run, doc);
  AddTargets(run, doc);
  AddLayers(run, doc);
  AddCharts(doc);
  AddMachine(run, doc);
  AddNotes(run, doc);
  AddFooter(run, doc);
  return doc;
}

}  // namespace chipfit::report
