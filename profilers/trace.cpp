// Trace Event Format ("X" complete events in microseconds, "M" metadata naming each track).
#include "profilers/trace.h"

namespace chipfit {

nlohmann::json ChromeTrace(const std::vector<TargetResult>& targets) {
  nlohmann::json events = nlohmann::json::array();
  for (size_t t = 0; t < targets.size(); ++t) {
    const TargetResult& target = targets[t];
    const int pid = static_cast<int>(t) + 1;
    events.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", pid},
                      {"args", {{"name", target.target.ToString() + " (" + target.status + ")"}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", 1}, {"args", {{"name", "kernels"}}}});
    double ts_us = 0;
    for (const LayerResult& layer : target.layers) {
      std::string name;
      for (const std::string& node : layer.onnx_nodes) name += (name.empty() ? "" : "+") + node;
      const double dur_us = layer.time_p50_ms * 1000.0;
      events.push_back({{"ph", "X"},
                        {"name", name.empty() ? layer.name : name},
                        {"cat", layer.op},
                        {"pid", pid},
                        {"tid", 1},
                        {"ts", ts_us},
                        {"dur", dur_us},
                        {"args",
                         {{"op", layer.op},
                          {"device", layer.device},
                          {"implementation", layer.implementation},
                          {"precision", layer.precision},
                          {"p90_ms", layer.time_p90_ms},
                          {"flops", layer.flops},
                          {"bytes", layer.bytes_read + layer.bytes_written},
                          {"timing", "p50 device time; kernels laid out back to back"}}}});
      ts_us += dur_us;
    }
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace chipfit
