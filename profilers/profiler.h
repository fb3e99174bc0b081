// The one profiler interface (docs/measurement.md) and the per-target pipeline that drives it: warm-up, an
// end-to-end pass with no observer, per-layer passes with the observer, then each profiler's
// Collect. Profilers never change what is measured: they only observe the compiled model.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/runtime/compiled_model.h"
#include "devices/device.h"
#include "profilers/run_result.h"

namespace chipfit {

struct ProfileSettings {
  int warmup = 10;            // warm-up runs, at least …
  double warmup_min_s = 0.2;  // … and at least this long
  int iterations = 50;        // timed end-to-end runs, at least …
  double min_time_s = 1.0;    // … and at least this long
  int layer_runs = 20;        // runs observed kernel by kernel
  // Roofline ceilings by device id ("cpu", "opencl:0"), from `chipfit devices --measure`; a layer
  // on a device without them has no `bound`.
  std::map<std::string, DeviceCeilings> ceilings{};
  // HeapInUseBytes() taken before compiling, for the measured high-water mark (none: not measured).
  std::optional<int64_t> heap_baseline_bytes{};
  // Per-layer passes: called before each kernel with (run, runs, kernel index, kernels); may be empty.
  std::function<void(int run, int runs, size_t kernel, size_t kernels)> layer_progress{};
};

// What a profiler sees: the compiled model once, every kernel event of the per-layer passes, and
// the end-to-end timings; it then writes its part of the result.
class Profiler : public RunObserver {
 public:
  virtual void Begin(const CompiledModel& model) = 0;
  virtual Status Collect(const std::vector<double>& e2e_ms, TargetResult& result) = 0;
};

// "target phase detail" lines for a progress display; may be empty.
using ProgressFn = std::function<void(const std::string& phase, const std::string& detail)>;

// Runs the pipeline on one compiled model with the given inputs; the latency profiler is always
// part of it, `extra` profilers observe the same per-layer passes. Cancelled (stop) between runs.
Status RunProfilePipeline(CompiledModel& model, const std::map<std::string, Tensor>& inputs,
                          const ProfileSettings& settings, const std::vector<Profiler*>& extra, TargetResult& result,
                          const std::stop_token& stop = {}, const ProgressFn& progress = {});

}  // namespace chipfit
