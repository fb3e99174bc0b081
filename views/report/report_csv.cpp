// The per-layer CSV: one row per target × layer, RFC 4180 quoting, numbers at full precision.
#include <charconv>

#include "views/charts/run_json.h"
#include "views/report/report_writers.h"

namespace chipfit::report {

using nlohmann::json;
namespace rj = runjson;

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

}  // namespace

std::string WriteCsv(const json& run) {
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
  for (const json* t : rj::Targets(run)) {
    const std::string target = rj::String(*t, "target");
    const json& layers = rj::Array(*t, "layers");
    for (size_t i = 0; i < layers.size(); ++i) {
      const json& layer = layers[i];
      std::string nodes;
      for (const json& n : rj::Array(layer, "onnx_nodes")) {
        if (!nodes.empty()) nodes += ';';
        nodes += n.is_string() ? n.get<std::string>() : n.dump();
      }
      const json* drift = rj::Field(layer, "drift");
      const json* energy = rj::Field(layer, "energy_j");
      const std::string fields[] = {
          target,
          std::to_string(i),
          rj::String(layer, "name"),
          rj::String(layer, "op"),
          nodes,
          rj::String(layer, "device"),
          rj::String(layer, "precision"),
          Number(rj::NumberAt(layer, "time_ms", "p50")),
          Number(rj::NumberAt(layer, "time_ms", "p90")),
          Number(rj::Number(layer, "flops")),
          Number(rj::Number(layer, "bytes_read")),
          Number(rj::Number(layer, "bytes_written")),
          Number(rj::Number(layer, "arithmetic_intensity")),
          Number(rj::Number(layer, "gflops_per_s")),
          Number(rj::Number(layer, "gb_per_s")),
          rj::String(layer, "bound"),
          Number(rj::Number(drift, "sqnr_db")),
          Number(rj::Number(energy, "value")),
          energy ? rj::String(*energy, "source") : std::string(),
      };
      for (size_t f = 0; f < std::size(fields); ++f) out += (f ? "," : "") + Field(fields[f]);
      out += "\r\n";
    }
  }
  return out;
}

}  // namespace chipfit::report
