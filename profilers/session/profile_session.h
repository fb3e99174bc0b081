// ProfileSession: the whole profile of one model on its targets (docs/measurement.md), as a library. The CLI's
// `profile` and `batch` and the GUI's Run page fill ProfileOptions, listen to the events and get the run;
// none of them holds a step of the pipeline itself.
//
// Per run: load and import the model, discover devices, prepare inputs and drift samples, compile the
// reference, load (or measure once) the roofline ceilings, detect energy sensors, begin the run in the
// store; then per target: compile → warm-up → end-to-end timing (no observer) → per-layer passes →
// energy → drift → store the target; finally recommend and finish the run in the store.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/quant/calibration.h"
#include "core/quant/input_data.h"
#include "core/recommend/recommend.h"
#include "core/runtime/target.h"
#include "core/status.h"
#include "devices/target_compiler.h"
#include "profilers/accuracy/task_metrics.h"
#include "profilers/latency/rounds.h"
#include "profilers/run_result.h"
#include "profilers/session/project_session.h"

namespace chipfit {

// Limits and objective of a recommendation, as a user gives them (flags, a manifest, the GUI's form).
struct RecommendSettings {
  Limits limits;
  std::string objective = "latency";  // latency | energy | cost
  std::string weights;                // "latency=1,energy=0.5" or empty
  std::string costs;                  // cost table YAML; empty: the shipped one
};

// Share of a target's per-layer time (Σ p50) spent on its own device, not on the devices its
// refused nodes fell back to; nullopt without layer times.
std::optional<double> DeviceShare(const TargetResult& result);

// The recommendation of `run`'s targets under `settings` (the cost table loaded as it says).
Result<nlohmann::json> RecommendRun(const RunResult& run, const RecommendSettings& settings);

struct ProfileOptions {
  std::vector<Target> targets;      // ignored when all_targets
  bool all_targets = false;         // every precision every discovered device supports
  std::string targets_text;         // as the user wrote them, recorded in settings ("" → joined targets)
  std::vector<std::string> shapes;  // NAME=1x3x224x224 bindings of dynamic dims
  std::string data_dir;             // .npy, image or .wav inputs (calibration, timing, drift); empty: seeded random
  InputDataOptions data;            // images' preprocessing, audio's sample rate
  uint64_t seed = 1;
  int iterations = 50;
  int warmup = 10;
  double min_time_s = 1.0;
  std::string reference = "ref:fp32";  // the drift reference target
  std::string classifier_output;       // output for top-1 agreement; empty: found by shape
  TaskOptions task;                    // per-output task metrics (--task, --ctc-blank, --map-threshold)
  int drift_samples = 4;               // seeded samples when there is no data
  // CPU threads (OpenMP); 0: the cores other processes leave free, measured just before the run.
  // More than the cores this process may use is refused unless `oversubscribe`.
  int threads = 0;
  bool oversubscribe = false;
  double max_time_s = 0;  // the timing rounds' budget; 0: four times the plan, plus 10 s
  // Throughput mode: each batch size (the inputs' dim 0 rebound) and, with streams > 1, that many
  // concurrent streams at each (TargetResult::throughput). Empty batches and streams 1: off.
  std::vector<int> batches;
  int streams = 1;
  // int8 targets: as `run` and `inspect` take them (--calibration, --percentile,
  // --calibration-samples, --keep-fp32, --auto-fp32-sqnr).
  CalibrationMethod calibration = CalibrationMethod::kMinMax;
  double calibration_percentile = 99.99;
  int calibration_samples = 8;         // seeded random samples when there is no data
  std::vector<std::string> keep_fp32;  // ONNX node names every target computes in fp32
  double auto_fp32_sqnr = 0;           // > 0: revert the worst int8 layers until the outputs reach it
  double auto_fp32_agreement = 0;      // > 0 (percent): … until the outputs' task agreement reaches it
  bool int8_all_layers = false;        // false: layers where int8 measures no faster stay fp32
  bool no_fallback = false;            // a node the target's device refuses fails the target
  bool measure_ceilings = true;        // measure a profiled device's roofline ceilings once when not cached
  RecommendSettings recommend;
  // `profile --project`: projected targets on catalog hardware next to the measured ones, calibrated
  // on this run's targets (RunResult::projections); they join the recommendation, labelled projected.
  bool project = false;
  ProjectRequest project_request;
  // The store: `db` (empty: RunStore::DefaultPath()), or none at all.
  bool store = true;
  std::filesystem::path db;
  std::string command;                 // the command line recorded with the run
  std::string source = "cli";          // cli | gui
  std::string stop_source = "Ctrl-C";  // what a stop request is called in a cancelled target's error
};

// Compiles the roofline ceilings' micro-benchmarks (`devices --measure`, and a profile's first use of a device).
GraphCompiler CeilingCompiler();

// The note an int8 target carries about its calibration (also printed by `inspect` and `run`).
std::string DescribeQuantReport(const QuantReport& q);
// The note a bf16 target carries when layers stayed fp32 as no faster in bf16 (empty when none did); for
// a report of a bf16 compile only (an int8 one lists its own in DescribeQuantReport).
std::string DescribeBf16Choice(const QuantReport& q);

// Deterministic inputs for a seed: each input draws its own stream, keyed by its name (`run --seed`,
// and a profile without --data).
Tensor SeededInput(const ValueDesc& desc, uint64_t seed);

// What a run reports while it goes on. Called on the thread that runs the session; a GUI forwards
// them to its own thread. Every method has an empty default.
class ProfileEvents {
 public:
  virtual ~ProfileEvents() = default;
  // Something the user should know that is not an error ("measuring the roofline ceilings once …").
  virtual void Message(const std::string& /*text*/) {}
  // The run is set up: targets known, stored as run_id (when stored). `run` has no targets yet.
  virtual void RunStarted(const RunResult& /*run*/, const std::vector<Target>& /*targets*/) {}
  virtual void TargetStarted(size_t /*index*/, const Target& /*target*/) {}
  // A phase of the target's pipeline: compile, warm-up, timing, per-layer, energy, drift; `detail`
  // names the run or layer.
  virtual void Phase(size_t /*index*/, const std::string& /*phase*/, const std::string& /*detail*/) {}
  // Per-layer passes: layer `done` of `total` of observed run `run` of `runs`.
  virtual void LayerProgress(size_t /*index*/, int /*run*/, int /*runs*/, int /*done*/, int /*total*/) {}
  // Immutable from here on; stored already when the run has a store.
  virtual void TargetFinished(size_t /*index*/, std::shared_ptr<const TargetResult> /*result*/) {}
  virtual void RunFinished(std::shared_ptr<const RunResult> /*run*/) {}
};

class ProfileSession {
 public:
  using Discover = std::function<DiscoveryReport()>;

  // `discover` is DiscoverDevices when empty (tests pass their own).
  explicit ProfileSession(ProfileOptions options, Discover discover = {});
  ProfileSession(const ProfileSession&) = delete;
  ProfileSession& operator=(const ProfileSession&) = delete;

  // Checks the options without running anything (bad report path, targets, counts): the front ends
  // call it to answer with exit 2 before any work.
  Status Validate() const;

  // Profiles `model_path`. An error before the first target (bad model, bad flag, store refused) is
  // returned as a Status; afterwards every target's failure is in its result and the run is returned.
  // A stop request ends the current target after its current kernel: it and the rest are `cancelled`,
  // the run is stored `cancelled`.
  Result<std::shared_ptr<const RunResult>> Run(const std::filesystem::path& model_path, ProfileEvents& events,
                                               const std::stop_token& stop = {});

 private:
  ProfileOptions options_;
  Discover discover_;
};

}  // namespace chipfit
