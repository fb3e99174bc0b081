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
#include "profilers/latency/rounds.h"
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
  // The rounds: how many, how they are judged, and their time budget (0: four times what the warm-up
  // runs say the plan takes, plus twice the plan up to 10 s).
  RoundPolicy rounds{};
  double max_time_s = 0;
  // CPUs the slots' CPU shares are of (0: CpuShareMeter::MachineCpus()) and the threads the targets
  // run with (0: omp_get_max_threads()).
  int machine_cpus = 0;
  int threads = 0;
  // CPUs other processes kept busy just before the run (the load the threads were chosen for).
  std::optional<double> other_cpus_before{};
  // Tests: replaces a slot's /proc/stat reading with (round, target index) → other processes' share.
  std::function<std::optional<double>(int round, size_t target)> slot_other_share{};
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

// One target of a profile timed in rounds with the others.
struct RoundTarget {
  CompiledModel* model = nullptr;
  const std::map<std::string, Tensor>* inputs = nullptr;
  std::vector<Profiler*> extra{};
  TargetResult* result = nullptr;
  ProgressFn progress{};
  // Per-layer progress of this target (run, runs, kernel, kernels); may be empty.
  std::function<void(int run, int runs, size_t kernel, size_t kernels)> layer_progress{};
  // Heap bytes this target's compilation added (for its measured high-water mark); absent: unknown.
  std::optional<int64_t> heap_compile_bytes{};
  Status status{};  // out: ok, or why this target stopped (its own failure, or the stop request)
};

// The timing of a whole profile (docs/measurement.md, "Rounds"): each target warmed up, then timed in
// interleaved rounds (order rotated each round; per round and target a slot of end-to-end runs with no
// observer followed by per-layer passes), a slot dropped and repeated when other processes took the
// CPUs the run's threads need, until every target has its clean rounds, iterations and min time or the
// budget is spent. Each target's latency comes from its clean slots; a target left without enough is
// `unreliable`. A failing target stops alone (its status); a stop request stops all.
void RunProfileRounds(std::vector<RoundTarget>& targets, const ProfileSettings& settings,
                      const std::stop_token& stop = {});

}  // namespace chipfit
