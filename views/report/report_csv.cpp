// The CSV report: one table per kind of row, each with its header, separated by an empty line. First
// the targets (one row per target: what a spreadsheet user compares), then the layers (one row per
// target × layer), then in throughput mode the throughput points (one row per target × point). RFC 4180
// quoting, numbers at full precision.
#include <algorithm>
#include <charconv>

#include "profilers/latency/rounds.h"
#include "views/charts/formats.h"
#include "views/report/report_writers.h"

namespace chipfit::report {

using formats::Finite;

namespace {

// RFC 4180: a field with a comma, a quote, CR or LF is quoted, its quotes doubled.
std::string Field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// Shortest text that reads back as the same double; empty for a value not measured.
std::string Number(std::optional<double> v) {
  if (!v) return {};
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, *v);
  return ec == std::errc() ? std::string(buf, end) : std::string();
}

template <size_t N>
void Header(const char* const (&names)[N], std::string& out) {
  for (size_t i = 0; i < N; ++i) out += (i ? "," : "") + std::string(names[i]);
  out += "\r\n";
}

template <size_t N>
void Row(const std::string (&fields)[N], std::string& out) {
  for (size_t f = 0; f < N; ++f) out += (f ? "," : "") + Field(fields[f]);
  out += "\r\n";
}

std::string Bool(bool b) { return b ? "yes" : "no"; }

// The recommendation's verdict on a target: its place in the ranking (1 = best), or why it was rejected.
std::pair<std::string, std::string> Verdict(const nlohmann::json& rec, const std::string& target) {
  std::string rank, rejected;
  if (!rec.is_object()) return {rank, rejected};
  if (const auto it = rec.find("ranked"); it != rec.end() && it->is_array()) {
    for (size_t i = 0; i < it->size(); ++i) {
      if ((*it)[i].is_string() && (*it)[i].get<std::string>() == target) rank = std::to_string(i + 1);
    }
  }
  if (const auto it = rec.find("rejected"); it != rec.end() && it->is_array()) {
    for (const nlohmann::json& r : *it) {
      if (!r.is_object() || r.value("target", std::string()) != target) continue;
      const auto reason = r.find("reason");
      if (reason != r.end() && reason->is_string())
        rejected += (rejected.empty() ? "" : "; ") + reason->get<std::string>();
    }
  }
  return {rank, rejected};
}

// The targets table, first: one row per target.
void WriteTargets(const RunResult& run, std::string& out) {
  static const char* const kHeader[] = {"target",
                                        "status",
                                        "error",
                                        "device",
                                        "p50_ms",
                                        "p90_ms",
                                        "p99_ms",
                                        "mean_ms",
                                        "cov",
                                        "mad_ms",
                                        "outliers",
                                        "iterations",
                                        "noisy",
                                        "unreliable",
                                        "speedup_vs_cpu_fp32",
                                        "output_sqnr_db",
                                        "task_agreement",
                                        "task_metric",
                                        "peak_memory_planned_bytes",
                                        "peak_memory_measured_bytes",
                                        "energy_j",
                                        "energy_source",
                                        "fallbacks",
                                        "inferences_per_s",
                                        "ms_per_inference",
                                        "rank",
                                        "rejected"};
  Header(kHeader, out);
  const TargetResult* baseline = nullptr;
  for (const auto& t : run.targets) {
    if (t->target.ToString() == "cpu:fp32" && t->status == "ok") baseline = t.get();
  }
  for (const auto& target : run.targets) {
    const TargetResult& t = *target;
    const std::string name = t.target.ToString();
    const bool ok = t.status == "ok";
    const LatencyStats& l = t.latency;
    auto latency = [&](double v) { return Number(ok ? Finite(v) : std::nullopt); };
    // Throughput mode: the best point, as `--objective throughput` ranks it; ms per inference is
    // 1000 / inferences/s there as in every other view.
    std::optional<double> rate;
    for (const ThroughputPoint& p : t.throughput) {
      if (p.status == "ok" && p.inferences_per_s > 0) rate = std::max(rate.value_or(0), p.inferences_per_s);
    }
    const auto& acc = t.accuracy;
    const auto [rank, rejected] = Verdict(run.recommendation, name);
    const std::string fields[] = {
        name,
        t.status,
        t.error,
        t.target.DeviceId(),
        latency(l.p50),
        latency(l.p90),
        latency(l.p99),
        latency(l.mean),
        latency(l.cov),
        Number(ok && (l.mad > 0 || !l.samples.empty()) ? Finite(l.mad) : std::nullopt),
        ok && (l.mad > 0 || !l.samples.empty()) ? std::to_string(l.outliers) : std::string(),
        ok ? std::to_string(l.iterations) : std::string(),
        ok ? Bool(l.noisy) : std::string(),
        ok ? Bool(t.unreliable) : std::string(),
        Number(ok && baseline != nullptr ? Finite(SpeedUp(*baseline, t)) : std::nullopt),
        Number(ok && acc ? Finite(acc->output_sqnr_db) : std::nullopt),
        Number(ok && acc && acc->task_agreement ? Finite(*acc->task_agreement) : std::nullopt),
        ok && acc ? acc->task_metric : std::string(),
        ok ? std::to_string(t.peak_memory_bytes) : std::string(),
        ok && t.measured_peak_memory_bytes ? std::to_string(*t.measured_peak_memory_bytes) : std::string(),
        Number(ok && t.energy ? Finite(t.energy->joules) : std::nullopt),
        ok && t.energy ? t.energy->source : std::string(),
        ok ? std::to_string(t.fallbacks.size()) : std::string(),
        Number(rate),
        Number(rate ? Finite(1e3 / *rate) : std::nullopt),
        rank,
        rejected,
    };
    Row(fields, out);
  }
}

// The throughput table, after the layer table and an empty line; nothing when no target has points.
// Times of one request (a batch); with several streams, over every stream's requests.
void WriteThroughput(const RunResult& run, std::string& out) {
  static const char* const kHeader[] = {"target",
                                        "batch",
                                        "streams",
                                        "threads_per_stream",
                                        "p50_ms_per_request",
                                        "p90_ms_per_request",
                                        "inferences_per_s",
                                        "ms_per_inference",
                                        "status",
                                        "error"};
  bool header = false;
  for (const auto& t : run.targets) {
    const std::string target = t->target.ToString();
    for (const ThroughputPoint& p : t->throughput) {
      if (!header) {
        out += "\r\n";
        for (size_t i = 0; i < std::size(kHeader); ++i) out += (i ? "," : "") + std::string(kHeader[i]);
        out += "\r\n";
        header = true;
      }
      const bool measured = p.status == "ok";
      const auto p50 = measured ? Finite(p.latency.p50) : std::nullopt;
      const std::string fields[] = {
          target,
          std::to_string(p.batch),
          std::to_string(p.streams),
          p.threads_per_stream > 0 ? std::to_string(p.threads_per_stream) : std::string(),
          Number(p50),
          Number(measured ? Finite(p.latency.p90) : std::nullopt),
          Number(measured ? Finite(p.inferences_per_s) : std::nullopt),
          Number(measured && p.inferences_per_s > 0 ? Finite(1e3 / p.inferences_per_s) : std::nullopt),
          p.status,
          p.error,
      };
      for (size_t f = 0; f < std::size(fields); ++f) out += (f ? "," : "") + Field(fields[f]);
      out += "\r\n";
    }
  }
}

}  // namespace

std::string WriteCsv(const RunResult& run) {
  static const char* const kHeader[] = {"target",
                                        "layer_index",
                                        "name",
                                        "op",
                                        "onnx_nodes",
                                        "device",
                                        "precision",
                                        "p50_ms",
                                        "p90_ms",
                                        "flops",
                                        "bytes_read",
                                        "bytes_written",
                                        "arithmetic_intensity",
                                        "gflops_per_s",
                                        "gb_per_s",
                                        "bound",
                                        "drift_sqnr_db",
                                        "energy_j",
                                        "energy_source"};
  std::string out;
  WriteTargets(run, out);
  out += "\r\n";
  Header(kHeader, out);
  for (const auto& t : run.targets) {
    const std::string target = t->target.ToString();
    for (size_t i = 0; i < t->layers.size(); ++i) {
      const LayerResult& layer = t->layers[i];
      std::string nodes;
      for (const std::string& n : layer.onnx_nodes) {
        if (!nodes.empty()) nodes += ';';
        nodes += n;
      }
      const std::string fields[] = {
          target,
          std::to_string(i),
          layer.name,
          layer.op,
          nodes,
          layer.device,
          layer.precision,
          Number(Finite(layer.time_p50_ms)),
          Number(Finite(layer.time_p90_ms)),
          Number(static_cast<double>(layer.flops)),
          Number(static_cast<double>(layer.bytes_read)),
          Number(static_cast<double>(layer.bytes_written)),
          Number(Finite(layer.arithmetic_intensity)),
          Number(Finite(layer.gflops_per_s)),
          Number(Finite(layer.gb_per_s)),
          layer.bound,
          Number(layer.drift ? Finite(layer.drift->sqnr_db) : std::nullopt),
          Number(layer.energy ? Finite(layer.energy->joules) : std::nullopt),
          layer.energy ? layer.energy->source : std::string(),
      };
      for (size_t f = 0; f < std::size(fields); ++f) out += (f ? "," : "") + Field(fields[f]);
      out += "\r\n";
    }
  }
  WriteThroughput(run, out);
  return out;
}

}  // namespace chipfit::report
