// JSON of one target's profile; every field DESIGN.md §7 names, null where nothing was measured.
#include "profilers/profile_json.h"

namespace chipfit {
namespace {

nlohmann::json EnergyJson(const std::optional<EnergyValue>& e) {
  if (!e) return nullptr;
  return {{"value", e->joules}, {"source", e->source}};
}

nlohmann::json CeilingsJson(const std::optional<DeviceCeilings>& c) {
  if (!c) return nullptr;
  nlohmann::json peak = nlohmann::json::object();
  for (const auto& [precision, gflops] : c->peak_gflops) peak[std::string(PrecisionName(precision))] = gflops;
  return {{"peak_gflops", peak},
          {"memory_bandwidth_gbps",
           c->memory_bandwidth_gbps > 0 ? nlohmann::json(c->memory_bandwidth_gbps) : nlohmann::json(nullptr)},
          {"source", "measured by `chipfit devices --measure`"}};
}

}  // namespace

nlohmann::json OnnxNodeView(const TargetProfile& p, const std::map<std::string, std::string>& node_ops) {
  struct Row {
    std::vector<size_t> layers;
    double time_ms = 0;
  };
  std::vector<std::string> order;
  std::map<std::string, Row> rows;
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const LayerProfile& l = p.layers[i];
    if (l.onnx_nodes.empty()) continue;
    const double share = l.time_p50_ms / static_cast<double>(l.onnx_nodes.size());
    for (const std::string& node : l.onnx_nodes) {
      auto [it, fresh] = rows.try_emplace(node);
      if (fresh) order.push_back(node);
      it->second.layers.push_back(i);
      it->second.time_ms += share;
    }
  }
  nlohmann::json view = nlohmann::json::array();
  for (const std::string& node : order) {
    const Row& row = rows[node];
    const auto op = node_ops.find(node);
    view.push_back({{"node", node},
                    {"op", op == node_ops.end() ? nlohmann::json(nullptr) : nlohmann::json(op->second)},
                    {"layers", row.layers},
                    {"time_ms", {{"p50", row.time_ms}}}});
  }
  return view;
}

nlohmann::json TargetProfileToJson(const TargetProfile& p, const std::map<std::string, std::string>& node_ops) {
  nlohmann::json fallbacks = nlohmann::json::array();
  for (const Fallback& f : p.fallbacks) fallbacks.push_back({{"node", f.node}, {"op", f.op}, {"reason", f.reason}});
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerProfile& l : p.layers) {
    nlohmann::json drift = nullptr;
    if (l.drift) {
      drift = {{"cosine", l.drift->cosine},
               {"nmse", l.drift->nmse},
               {"sqnr_db", l.drift->sqnr_db},
               {"max_abs", l.drift->max_abs}};
    }
    layers.push_back(
        {{"name", l.name},
         {"op", l.op},
         {"onnx_nodes", l.onnx_nodes},
         {"device", l.device},
         {"implementation", l.implementation},
         {"precision", l.precision},
         {"time_ms", {{"p50", l.time_p50_ms}, {"p90", l.time_p90_ms}}},
         {"flops", l.flops},
         {"bytes_read", l.bytes_read},
         {"bytes_written", l.bytes_written},
         {"arithmetic_intensity", l.arithmetic_intensity},
         {"gflops_per_s", l.gflops_per_s},
         {"gb_per_s", l.gb_per_s},
         {"bound", l.bound.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.bound)},
         {"attainable_gflops_per_s",
          l.attainable_gflops_per_s > 0 ? nlohmann::json(l.attainable_gflops_per_s) : nlohmann::json(nullptr)},
         {"drift", drift},
         {"energy_j", EnergyJson(l.energy)}});
  }
  const bool measured = p.status == "ok";
  nlohmann::json latency = nullptr;
  if (measured) {
    const LatencyStats& s = p.latency;
    latency = {{"p50", s.p50},    {"p90", s.p90}, {"p99", s.p99}, {"mean", s.mean},
               {"min", s.min},    {"max", s.max}, {"cov", s.cov}, {"iterations", s.iterations},
               {"noisy", s.noisy}};
  }
  nlohmann::json accuracy = nullptr;
  if (p.accuracy) {
    const AccuracySummary& a = *p.accuracy;
    accuracy = {{"reference", a.reference},
                {"random_inputs", a.random_inputs},
                {"samples", a.samples},
                {"output_sqnr_db", a.output_sqnr_db},
                {"output_cosine", a.output_cosine},
                {"top1_agreement", a.top1_agreement ? nlohmann::json(*a.top1_agreement) : nlohmann::json(nullptr)},
                {"first_layer_below_threshold", a.first_layer_below_threshold.empty()
                                                    ? nlohmann::json(nullptr)
                                                    : nlohmann::json(a.first_layer_below_threshold)}};
  }
  return {
      {"target", p.target.ToString()},
      {"status", p.status},
      {"error", p.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.error)},
      {"device",
       {{"kind", std::string(DeviceKindName(p.target.kind))}, {"id", p.target.DeviceId()}, {"name", p.device_name}}},
      {"compile_ms", p.compile_ms},
      {"fallbacks", fallbacks},
      {"latency_ms", latency},
      {"instrumentation_overhead", measured ? nlohmann::json(p.instrumentation_overhead) : nlohmann::json(nullptr)},
      {"peak_memory_bytes", p.peak_memory_bytes},
      {"measured_peak_memory_bytes",
       p.measured_peak_memory_bytes ? nlohmann::json(*p.measured_peak_memory_bytes) : nlohmann::json(nullptr)},
      {"ceilings", CeilingsJson(p.ceilings)},
      {"energy_j", EnergyJson(p.energy)},
      {"accuracy", accuracy},
      {"notes", p.notes},
      {"layers", layers},
      {"nodes", OnnxNodeView(p, node_ops)}};
}

}  // namespace chipfit
