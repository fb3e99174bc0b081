// Trace Event Format ("X" complete events in microseconds, "M" metadata naming each track).
#include "profilers/trace.h"

#include <algorithm>

namespace chipfit {

namespace {

constexpr const char* kObserved = "one observed run: real start times";
constexpr const char* kBackToBack =
    "p50 device times laid out back to back (this run recorded no observed start times)";

// All or nothing per target: a timeline mixing real starts with a p50 layout would show gaps and
// overlaps that never happened.
bool HasObservedTimeline(const TargetResult& target) {
  return !target.layers.empty() && std::all_of(target.layers.begin(), target.layers.end(), [](const LayerResult& l) {
    return l.observed_start_ms && l.observed_ms;
  });
}

}  // namespace

nlohmann::json ChromeTrace(const std::vector<TargetResult>& targets) {
  nlohmann::json events = nlohmann::json::array();
  for (size_t t = 0; t < targets.size(); ++t) {
    const TargetResult& target = targets[t];
    const int pid = static_cast<int>(t) + 1;
    const bool observed = HasObservedTimeline(target);
    events.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", pid},
                      {"args", {{"name", target.target.ToString() + " (" + target.status + ")"}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", 1}, {"args", {{"name", "kernels"}}}});
    double next_us = 0;  // the back-to-back layout's next start
    for (const LayerResult& layer : target.layers) {
      std::string name;
      for (const std::string& node : layer.onnx_nodes) name += (name.empty() ? "" : "+") + node;
      const double ts_us = observed ? *layer.observed_start_ms * 1000.0 : next_us;
      const double dur_us = (observed ? *layer.observed_ms : layer.time_p50_ms) * 1000.0;
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
                          {"isa", layer.isa},
                          {"precision", layer.precision},
                          {"p50_ms", layer.time_p50_ms},
                          {"p90_ms", layer.time_p90_ms},
                          {"flops", layer.flops},
                          {"bytes", layer.bytes_read + layer.bytes_written},
                          {"timing", observed ? kObserved : kBackToBack}}}});
      next_us += dur_us;
    }
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace chipfit
