// JSON of one target's profile; every field DESIGN.md §7 names, null where nothing was measured.
#include "profilers/profile_json.h"

namespace chipfit {
namespace {

nlohmann::json EnergyJson(const std::optional<EnergyValue>& e) {
  if (!e) return nullptr;
  return {{"value", e->joules}, {"source", e->source}};
}

}  // namespace

nlohmann::json TargetProfileToJson(const TargetProfile& p) {
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
    layers.push_back({{"name", l.name},
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
                {"first_layer_below_threshold", a.first_layer_below_threshold}};
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
      {"energy_j", EnergyJson(p.energy)},
      {"accuracy", accuracy},
      {"notes", p.notes},
      {"layers", layers}};
}

}  // namespace chipfit
