// The typed result of profiling one model on its targets (the JSON contract of docs/json.md, in C++): what
// every profiler fills in and what recommend, the store, charts, reports and the GUI read. JSON only
// at the edges, through profilers/profile_json (one writer, one reader).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <memory>

#include "core/graph/model_summary.h"
#include "core/runtime/compiled_model.h"
#include "core/runtime/target.h"
#include "devices/device.h"
#include "nlohmann/json.hpp"
#include "profilers/memory/ceilings.h"

namespace chipfit {

// Order statistics of repeated timings, in milliseconds.
struct LatencyStats {
  double p50 = 0, p90 = 0, p99 = 0, mean = 0, min = 0, max = 0;
  double cov = 0;  // coefficient of variation: stddev / mean; reported, never used to decide
  int iterations = 0;
  // (p90 − p50)/p50 above 5 % or MAD/median above 3 % (latency_stats.h): a robust spread, which one
  // stall cannot set off as it does the CoV.
  bool noisy = false;
  double mad = 0;    // median absolute deviation from p50, ms
  int outliers = 0;  // runs slower than p50 + 10·MAD
  // The timed runs in the order they ran, for regression verdicts (bootstrap of the medians). Above
  // kMaxStoredSamples runs, the medians of kMaxStoredSamples consecutive slices of them, still in the
  // order they ran (`samples_sketch`).
  std::vector<double> samples{};
  bool samples_sketch = false;
  // Other processes' share of all CPUs during the timed window (/proc/stat minus this process's own
  // CPU time), 0..1; absent where /proc/stat is not readable. `machine_busy` above 10 %.
  std::optional<double> other_cpu_share{};
  bool machine_busy = false;
};

// Accuracy of one tensor against its reference. sqnr_db is capped at kExactSqnrDb for identical
// tensors (never +inf, never NaN in JSON).
inline constexpr double kExactSqnrDb = 200.0;
struct DriftStats {
  double cosine = 1, nmse = 0, sqnr_db = kExactSqnrDb, max_abs = 0;
  // Why the figures above are not measurements ("" when they are): a NaN/Inf or a saturated value on
  // one side only, or shapes that differ. They then hold the worst values (cosine 0, NMSE 1e20,
  // -200 dB, the largest double) so that limits reject them; the JSON writes null and this reason.
  std::string invalid{};
};

// An energy figure and where it comes from: "measured:<sensor>", "estimated", "estimated:scaled".
struct EnergyValue {
  double joules = 0;
  std::string source;
};

struct LayerResult {
  std::string name{};                     // the kernel's (first) ONNX node
  std::string op{};                       // "FusedConv", "Copy" …
  std::vector<std::string> onnx_nodes{};  // every ONNX node the kernel covers
  std::string device{}, implementation{}, precision{};
  // What the device library says runs the kernel, with its instruction set (oneDNN's implementation name,
  // such as "brgconv_1x1:avx512_core_vnni"); empty for chipfit's own loops and in runs stored before it
  // (the profile JSON then has no "isa").
  std::string isa{};
  double time_p50_ms = 0, time_p90_ms = 0;
  // One observed run (the first per-layer pass): when the kernel started after the run began, and
  // how long it took, so a trace shows the real timeline, gaps and all. Absent in older runs.
  std::optional<double> observed_start_ms{}, observed_ms{};
  int64_t flops = 0, bytes_read = 0, bytes_written = 0;
  std::vector<int64_t> output_shape{};  // the first output's; empty when unknown (older runs)
  double arithmetic_intensity = 0;      // flops / (bytes read + written)
  double gflops_per_s = 0, gb_per_s = 0;
  std::string bound{};                 // "memory", "compute", or "" when no ceilings are known
  double attainable_gflops_per_s = 0;  // roofline: min(peak, intensity × bandwidth); 0 when unknown
  std::optional<DriftStats> drift{};   // absent for kernels whose outputs the reference lacks
  std::optional<EnergyValue> energy{};
  // Layers inside an If/Loop/Scan body: the control-flow layer that runs them ("" at the top level)
  // and how many times they ran per inference (a Loop's or Scan's iterations; their times are the
  // sums over those iterations). A control-flow layer's own time excludes its body's layers.
  std::string parent{};
  double iterations = 1;
};

// One graph output's task metric (profilers/accuracy/task_metrics.h), as the JSON's accuracy.tasks[].
struct OutputTask {
  std::string output;
  std::string task;                             // classify | detect | segment | lm | embedding | sequence | map
  std::string metric;                           // what `agreement` is: "top-1 agreement", "map IoU at 0.3", …
  std::optional<double> agreement{};            // nullopt when not informative
  std::optional<double> position_agreement{};   // sequence, lm
  std::optional<double> pixel_agreement{};      // map, segment
  int64_t items = 0;                            // rows, boxes, pixels, positions, vectors, sequences or maps
  std::string why{};                            // why the output got this task, in one line
  std::string not_informative{};                // why agreement is null although the output has a task
  std::optional<double> top5_agreement{};       // classify with more than 5 classes
  std::optional<double> precision{}, recall{};  // detect: matched share of the target's / reference's boxes
};

struct AccuracySummary {
  std::string reference;  // "ref:fp32" or "cpu:fp32"
  bool random_inputs = true;
  int samples = 0;
  double output_sqnr_db = kExactSqnrDb, output_cosine = 1;
  std::optional<double> top1_agreement{};  // for class-score outputs only
  // Outputs with a task metric, and the worst of their headline agreements (what the accuracy guard
  // and --min-top1 read); absent when no output has a task.
  std::vector<OutputTask> tasks{};
  std::optional<double> task_agreement{};
  std::string task_metric{};                // the metric task_agreement is ("top-1 agreement", …)
  std::string first_layer_below_threshold;  // "" when no layer's SQNR falls below it
  // Why output_sqnr_db / output_cosine are not measurements ("" when they are): an output the target
  // made NaN/Inf or saturated, or no output comparable (shapes differ). They then hold the worst values.
  std::string output_invalid{};
  // The first kernel, in execution order, whose output the target made NaN/Inf or saturated where the
  // reference's is finite, and what it made ("" when none did).
  std::string first_non_finite_layer{};
  std::string non_finite{};
  // int8 only: calibrated on seeded random data, not the user's (its accuracy on real inputs is unknown).
  bool random_calibration = false;
};

// Throughput mode (`profile --batch 1,4,16 --streams N`): one point per batch size and stream count.
// A point with one stream has the batch's end-to-end latency and its per-layer profile; a point with
// N streams runs N compiled copies concurrently on N threads, splitting the CPU's OpenMP threads among
// them (as OpenVINO's -nstreams), and has the per-request latency over all streams.
struct ThroughputPoint {
  int batch = 1;
  int streams = 1;
  int threads_per_stream = 0;  // OpenMP threads each stream ran with
  std::string status = "ok";   // ok | failed | unsupported | cancelled
  std::string error{};
  LatencyStats latency{};  // per request (one batch of `batch` inferences)
  // One stream: batch × 1000 / p50; N streams: batch × requests completed / wall time of the window.
  double inferences_per_s = 0;
  int64_t requests = 0;               // requests timed, all streams together
  double duration_s = 0;              // the timed window
  std::vector<LayerResult> layers{};  // one stream only: the per-layer profile at this batch
};

// One round of the interleaved timing (docs/measurement.md, "Rounds"): this target's slot in it. Every
// target is timed once per round, in an order rotated each round, so a load that comes and goes falls
// on all of them alike; a slot during which other processes took the CPUs this run's threads need (or
// the hypervisor stole time) is dropped and the round repeated.
struct TimingRound {
  int round = 0;     // 1-based, over the whole run
  int position = 0;  // this target's place in the round's order (0: first)
  int runs = 0;      // end-to-end runs timed in the slot
  double median_ms = 0;
  std::optional<double> other_cpu_share{};  // other processes' share of all CPUs during the slot, 0..1
  std::optional<double> steal_share{};      // the hypervisor's steal time, share of all CPUs' time
  int threads = 0;                          // CPU threads the slot ran with
  bool clean = true;
  std::string dropped{};  // why the slot was dropped ("" when clean)
};

// Where a target's end-to-end time goes: the kernels' own times (Σ layer p50), the time between
// kernels in the observed runs (executor, copies, waits), and what neither explains (the end-to-end
// runs' own stalls, or, negative, the per-layer timers' cost). `explanation` says which when Σ layers
// and end to end disagree by more than 20 %, empty otherwise.
struct TimeAttribution {
  double end_to_end_ms = 0;  // p50 without observer
  double attributed_ms = 0;  // Σ layer p50
  double between_ms = 0;     // p50 over the observed runs of (run wall time − Σ its kernels)
  double unexplained_ms = 0;
  std::string explanation{};
};

struct TargetResult {
  Target target;
  std::string status = "ok";  // ok | failed | unsupported | cancelled
  std::string error;
  std::string device_name;
  std::vector<Fallback> fallbacks;
  double compile_ms = 0;
  LatencyStats latency;
  double instrumentation_overhead = 0;  // Σ layer p50 / end-to-end p50
  size_t peak_memory_bytes = 0;         // planned (host arena + device arena + constants)
  // Heap growth from before compiling to the highest point of one observed run (mallinfo2 sampled
  // at every kernel boundary); absent where the allocator does not report it.
  std::optional<int64_t> measured_peak_memory_bytes{};
  std::optional<DeviceCeilings> ceilings{};  // the target's device's, as the roofline used them
  std::optional<EnergyValue> energy{};       // per inference
  std::optional<AccuracySummary> accuracy{};
  std::vector<LayerResult> layers;
  std::vector<std::string> notes;             // random calibration, noisy, fallbacks …
  std::vector<ThroughputPoint> throughput{};  // throughput mode only
  // Interleaved timing: every slot this target had (clean and dropped). `latency` comes from the clean
  // slots only. A target without enough clean slots within the run's time budget is `unreliable`
  // (with the reason): its latency is shown but not ranked unless the user asks.
  std::vector<TimingRound> rounds{};
  // Stopped (Ctrl-C, Stop) after some of its timing: status "cancelled", but the latency and layers of
  // the clean rounds it finished are kept, and said to be partial.
  bool partial = false;
  bool unreliable = false;
  std::string unreliable_reason{};
  std::optional<TimeAttribution> attribution{};
};

// The machine a run was measured on: host facts and every device discovery found.
struct MachineInfo {
  std::string hostname, os, arch;
  std::vector<DeviceInfo> devices;
  std::vector<std::string> notes;  // a line per device kind that found nothing or failed
};

// Where the inputs came from: the user's data folder, or seeded random tensors.
struct RunInputs {
  std::string source;                // "seeded random" | "data DIR"
  std::optional<uint64_t> seed{};    // seeded random only
  std::optional<int64_t> samples{};  // data only
  // The shape each graph input was run with ("1x3x48x192"), as bound for this run: runs of one model
  // with other shapes are not compared. Empty in runs made before it was recorded.
  std::map<std::string, std::string> shapes{};
  // data only: what the folder held ("npy", "images", "audio"), the files used (their count and the
  // SHA-256 of their list, so two runs can tell they saw the same files), and the preprocessing.
  std::string kind{};
  int64_t files = 0;
  std::string files_sha256{};
  std::string preprocess{};
  std::vector<std::string> notes{};
};

// The settings a run was made with, as the JSON's `settings` object records them.
struct RunSettings {
  int warmup = 10;
  int iterations = 50;
  double min_time_s = 1.0;
  std::string reference = "ref:fp32";
  std::string targets;  // as given ("cpu:fp32,cpu:int8") or "all"
  int threads = 0;      // CPU threads the run used (OpenMP); 0: not recorded (older runs)
  // How `threads` was chosen: "--threads 2" or "2 cores, ~1 busy with other work: 1 thread"; the CPUs
  // this process may use, and the CPUs other processes kept busy just before timing.
  std::string threads_reason{};
  int cores = 0;
  std::optional<double> other_cpus_before{};
  double max_time_s = 0;         // the timing rounds' budget (dropped slots are repeated within it)
  std::string calibration;       // int8 calibration method ("minmax" …); "" when not recorded
  bool int8_all_layers = false;  // int8 in every eligible layer (--int8-all-layers), not only where faster
  // Nodes every target computed in fp32 by request (--keep-fp32, the GUI's What-if); empty for most runs.
  std::vector<std::string> keep_fp32{};
};

struct EnergySensorsInfo {
  std::vector<std::string> found;
  std::optional<std::string> used{};
  std::vector<std::string> notes;
};

// One profile run. Targets are immutable once finished and shared (the GUI hands them to its models
// while the run goes on); the run itself is shared as std::shared_ptr<const RunResult> when done.
struct RunResult {
  std::string chipfit_version;
  std::optional<int64_t> run_id{};      // absent when the run was not stored
  std::string run_uid;                  // set by the store
  std::string status = "incomplete";    // incomplete | ok | cancelled
  std::string started_at, finished_at;  // UTC ISO 8601; set by the store
  std::string command;
  std::string source = "cli";  // cli | gui: which front end made the run
  ModelSummary model;
  int64_t model_flops = 0;  // of the reference compilation
  MachineInfo machine;
  RunInputs inputs;
  RunSettings settings;
  EnergySensorsInfo energy_sensors;
  std::vector<CeilingReport> ceilings;
  std::vector<std::shared_ptr<const TargetResult>> targets;
  std::map<std::string, std::string> node_ops;  // ONNX node name → op type, for each target's node view
  nlohmann::json recommendation;                // null until recommended (chipfit.profile/1 `recommendation`)
  // `profile --project`: projected targets on catalog hardware (chipfit.projection/1 `projections`
  // entries, each labelled "projected": true with its band); empty when none were asked for.
  nlohmann::json projections = nlohmann::json::array();
  nlohmann::json projection_calibration;  // the calibration they used; null without projections
  // Top-level members of a JSON this binary does not know (a newer chipfit's), kept so a run read and
  // written again loses nothing.
  nlohmann::json extra = nlohmann::json::object();

  // The target with this name ("cpu:int8"), or nullptr.
  const TargetResult* FindTarget(const std::string& target) const;
};

}  // namespace chipfit
