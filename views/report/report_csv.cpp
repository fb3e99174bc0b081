// The per-layer CSV: one row per target × layer, RFC 4180 quoting, numbers at full precision. In
// throughput mode a second table follows after an empty line: one row per target × throughput point.
#include <charconv>

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
          Number(p50 && p.batch > 0 ? Finite(*p50 / p.batch) : std::nullopt),
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
  for (size_t i = 0; i < std::size(kHeader); ++i) out += (i ? "," : "") + std::string(kHeader[i]);
  out += "\r\n";
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
