// ProfileSession: the profile pipeline (docs/measurement.md) as named steps (prepare the run, profile each
// target, finish), shared by the CLI, batch and the GUI.
#include "profilers/session/profile_session.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <latch>
#include <mutex>
#include <thread>

#include <omp.h>

#include "chipfit/version.h"
#include "core/graph/index_bounds.h"
#include "core/graph/onnx_import.h"
#include "core/graph/onnx_loader.h"
#include "core/quant/calibration_data.h"
#include "core/store/run_store.h"
#include "core/tensor/random.h"
#include "devices/registry.h"
#include "devices/target_compiler.h"
#include "fmt/format.h"
#include "profilers/accuracy/drift.h"
#include "profilers/energy/energy_profiler.h"
#include "profilers/energy/sensors.h"
#include "profilers/latency/latency_stats.h"
#include "profilers/memory/ceilings.h"
#include "profilers/memory/memory_profiler.h"
#include "profilers/precision_mix.h"
#include "profilers/profile_json.h"
#include "profilers/profiler.h"

namespace chipfit {
namespace {

// Everything a run sets up once, before its first target.
struct RunSetup {
  std::unique_ptr<Graph> graph;
  std::filesystem::path model_path;  // throughput mode loads it again at each batch size
  std::vector<Target> targets;
  std::vector<std::map<std::string, Tensor>> samples;  // the user's data (empty: seeded random)
  std::map<std::string, Tensor> inputs;                // timed inputs
  std::vector<std::map<std::string, Tensor>> drift_samples;
  std::unique_ptr<CompiledModel> reference;  // null: no target runs the model to compare with
  // Why drift is measured against another target than --reference asked for, or not at all.
  std::string reference_note;
  std::map<std::string, DeviceCeilings> ceilings;  // by device id
  std::vector<std::unique_ptr<EnergySensor>> sensors;
  std::optional<EnergyModel> energy_model;
  std::unique_ptr<RunStore> store;
  ThreadChoice threads;                       // the run's CPU threads and why
  std::optional<double> other_cpus_before{};  // CPUs other processes kept busy just before the run
  RunResult run;                              // everything but its targets
};

std::string VersionString() { return std::string(CHIPFIT_VERSION) + " (" + CHIPFIT_GIT_REVISION + ")"; }

Result<std::unique_ptr<Graph>> LoadGraph(const std::filesystem::path& path, const std::vector<std::string>& shapes,
                                         RunResult& run) {
  OnnxLoadOptions load;
  for (const std::string& text : shapes) {
    ASSIGN_OR_RETURN(auto binding, ParseShapeBinding(text));
    load.input_shapes[binding.first] = binding.second;
  }
  ASSIGN_OR_RETURN(LoadedOnnxModel model, LoadOnnxModel(path, load));
  run.model = Summarize(model);
  ASSIGN_OR_RETURN(Graph graph, ImportModel(model));
  // Nodes inside If/Loop/Scan bodies are named by their path, as their layers are.
  std::function<void(const Graph&, const std::string&)> add_ops = [&](const Graph& g, const std::string& prefix) {
    for (const Node& node : g.nodes) {
      run.node_ops[prefix + node.name] = node.op_type;
      for (const auto& [attribute, attr] : node.attributes) {
        if (attr.kind == Attribute::Kind::kGraph && attr.graph) {
          add_ops(*attr.graph, prefix + node.name + "/" + attribute + "/");
        }
      }
    }
  };
  add_ops(graph, "");
  return std::make_unique<Graph>(std::move(graph));
}

std::vector<Target> ResolveTargets(const ProfileOptions& options, const std::vector<DeviceInfo>& devices) {
  if (!options.all_targets) return options.targets;
  std::vector<Target> targets;
  for (const DeviceInfo& device : devices) {
    for (const PrecisionSupport& p : device.precisions) {
      if (p.support.ok) targets.push_back({device.kind, device.index, p.precision});
    }
  }
  return targets;
}

// Inputs: the user's data (the first sample is timed; int8 targets calibrate on all of them; drift
// runs over all of them), or seeded random ones, said in the run's `inputs`.
Status PrepareInputs(const ProfileOptions& options, RunSetup& setup) {
  if (!options.data_dir.empty()) {
    ASSIGN_OR_RETURN(InputData data, LoadInputData(options.data_dir, setup.graph->inputs, options.data));
    setup.samples = std::move(data.samples);
    setup.run.inputs = {.source = "data " + options.data_dir,
                        .samples = static_cast<int64_t>(setup.samples.size()),
                        .kind = data.kind,
                        .files = static_cast<int64_t>(data.files.size()),
                        .files_sha256 = data.files_sha256,
                        .preprocess = data.preprocess,
                        .notes = data.notes};
  }
  if (!setup.samples.empty()) {
    setup.inputs = setup.samples.front();
    setup.drift_samples = setup.samples;
    return Status::Ok();
  }
  // Token ids stay inside the tables they index and a decoder's lengths agree with its cache: a language
  // model runs on seeded inputs.
  const auto bounds = InputIndexBounds(*setup.graph);
  for (const ValueDesc& desc : setup.graph->inputs) setup.inputs[desc.name] = SeededInput(desc, options.seed);
  BoundIndexInputs(bounds, setup.inputs);
  SeedSequenceLengths(*setup.graph, setup.inputs);
  for (int i = 0; i < options.drift_samples; ++i) {
    std::map<std::string, Tensor> sample;
    for (const ValueDesc& desc : setup.graph->inputs) sample[desc.name] = SeededInput(desc, options.seed + i);
    BoundIndexInputs(bounds, sample);
    SeedSequenceLengths(*setup.graph, sample);
    setup.drift_samples.push_back(std::move(sample));
  }
  setup.run.inputs = {.source = "seeded random", .seed = options.seed};
  return Status::Ok();
}

// Roofline ceilings: cached by `chipfit devices --measure`; a device profiled here without them is
// measured once now (and cached), so every layer gets its bound. A stop request leaves the rest
// unmeasured (the targets are then cancelled anyway).
Status PrepareCeilings(const ProfileOptions& options, const Target& reference, ProfileEvents& events,
                       const std::stop_token& stop, RunSetup& setup) {
  const auto cache_path = DefaultCeilingCachePath();
  ASSIGN_OR_RETURN(auto cache, LoadCeilingCache(cache_path));
  for (const DeviceInfo& info : setup.run.machine.devices) {
    const bool profiled = std::any_of(setup.targets.begin(), setup.targets.end(),
                                      [&](const Target& t) { return t.kind == info.kind && t.index == info.index; }) ||
                          (info.kind == DeviceKind::kCpu && reference.kind == DeviceKind::kCpu);
    auto entry = cache.find(CeilingKey(info, setup.threads.threads));
    if (!profiled) {
      // Not measured for this run, but shown with it when measured before (the machine's devices).
      if (entry != cache.end()) setup.run.ceilings.push_back(entry->second);
      continue;
    }
    // Ceilings cached while the machine was busy are low: measured again when it was idle just now, and
    // replaced when the new ones were measured idle.
    const bool busy_entry = entry != cache.end() && entry->second.MeasuredWhileBusy() && setup.other_cpus_before &&
                            *setup.other_cpus_before <= kBusyCpuShare * CpuShareMeter::MachineCpus();
    if ((entry == cache.end() || busy_entry) && options.measure_ceilings) {
      events.Message(fmt::format("measuring the roofline ceilings of {} {} (cached in {}) ...", info.Id(),
                                 busy_entry ? "again, the cached ones were measured while busy," : "once",
                                 cache_path.string()));
      auto measured = MeasureCeilings(info, CeilingCompiler(), {.stop = stop});
      if (!measured.ok() && measured.status().code() == StatusCode::kCancelled) break;
      RETURN_IF_ERROR(measured.status());
      if (measured->MeasuredWhileBusy()) {
        // Used for this run with its note, but not cached: the next profile measures again.
        events.Message(
            fmt::format("the machine was busy ({:.0f} % of the CPUs used by other processes): the "
                        "ceilings of {} are not cached",
                        *measured->other_cpu_share * 100, info.Id()));
      } else {
        RETURN_IF_ERROR(SaveCeilingReport(cache_path, *measured));
      }
      if (!busy_entry || measured->other_cpu_share.value_or(0) < entry->second.other_cpu_share.value_or(0)) {
        entry = cache.insert_or_assign(measured->device_key, *measured).first;
      }
    }
    if (entry == cache.end()) continue;
    setup.ceilings[info.Id()] = entry->second.measured;
    setup.run.ceilings.push_back(entry->second);
  }
  return Status::Ok();
}

// Energy: a sensor when this machine has one (the first found: a package-level zone on RAPL
// machines), the model's estimate always.
Status PrepareEnergy(RunSetup& setup) {
  std::vector<std::string> notes;
  setup.sensors = DetectEnergySensors("/sys", &notes);
  ASSIGN_OR_RETURN(setup.energy_model, LoadEnergyModel(DefaultEnergyTablePath()));
  EnergySensorsInfo& info = setup.run.energy_sensors;
  for (const auto& s : setup.sensors) info.found.push_back(s->name());
  if (!setup.sensors.empty()) info.used = setup.sensors.front()->name();
  info.notes = std::move(notes);
  return Status::Ok();
}

std::string JoinTargets(const std::vector<Target>& targets) {
  std::string text;
  for (const Target& t : targets) text += (text.empty() ? "" : ",") + t.ToString();
  return text;
}

// The run in the store, `incomplete` until it finishes: its JSON apart from the targets, through the
// one profile writer.
Status BeginStoredRun(const ProfileOptions& options, RunSetup& setup) {
  if (!options.store) return Status::Ok();
  ASSIGN_OR_RETURN(setup.store, RunStore::Open(options.db.empty() ? RunStore::DefaultPath() : options.db));
  const nlohmann::json doc = RunResultToJson(setup.run);
  nlohmann::json rest = nlohmann::json::object();
  for (const char* key : {"inputs", "settings", "energy_sensors", "ceilings"}) rest[key] = doc[key];
  ASSIGN_OR_RETURN(setup.run.run_id, setup.store->BeginRun(doc["model"], doc["machine"], rest, options.command,
                                                           setup.run.chipfit_version, options.source));
  return Status::Ok();
}

}  // namespace

GraphCompiler CeilingCompiler() {
  return [](const Graph& graph, const Target& target) {
    Int8Options int8;
    int8.random_samples = 2;  // the GEMMs' calibration: their ranges do not matter for a peak
    return CompileForTarget(graph, target, {}, int8);
  };
}

std::string DescribeBf16Choice(const QuantReport& q) {
  if (q.kept_slower.empty()) return {};
  std::string layers;
  for (const LayerSpeed& l : q.kept_slower) {
    layers += fmt::format("{}{} ({:.3f} vs {:.3f} ms)", layers.empty() ? "" : ", ", l.name, l.low_ms, l.fp32_ms);
  }
  return fmt::format(
      "{} layer(s) kept in fp32, bf16 measured no faster here (bf16 vs fp32 median, --int8-all-layers to run them "
      "in bf16): {}",
      q.kept_slower.size(), layers);
}

std::string DescribeQuantReport(const QuantReport& q) {
  // No ranges: nothing was calibrated (a QDQ model runs with its own scales; its notes say so).
  std::string text =
      q.table.empty()
          ? fmt::format("int8: {} kernels in int8; output SQNR vs fp32 on {} sample(s) {:.1f} dB", q.int8_kernels,
                        q.samples, q.output_sqnr_db)
          : fmt::format(
                "int8: {} kernels in int8; calibrated with {} on {} {}sample(s); output SQNR vs fp32 on them {:.1f} dB",
                q.int8_kernels, q.method, q.samples, q.random_calibration ? "seeded random " : "", q.output_sqnr_db);
  for (const std::string& note : q.notes) text += "\n      " + note;
  auto join = [](const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
    return out;
  };
  if (q.random_calibration)
    text += "\n      random calibration: ranges do not reflect real data; give --data for real figures";
  if (!q.kept_fp32.empty()) text += "\n      kept in fp32 by request: " + join(q.kept_fp32);
  if (!q.kept_small.empty()) {
    text += fmt::format("\n      {} small layer(s) kept in fp32 (too few multiply-adds for int8 to pay off)",
                        q.kept_small.size());
  }
  if (!q.kept_slower.empty()) {
    std::vector<std::string> layers;
    for (const LayerSpeed& l : q.kept_slower)
      layers.push_back(fmt::format("{} ({:.3f} vs {:.3f} ms)", l.name, l.low_ms, l.fp32_ms));
    text += fmt::format(
        "\n      {} layer(s) kept in fp32, int8 measured no faster here (int8 vs fp32 median, "
        "--int8-all-layers to quantise them): {}",
        q.kept_slower.size(), join(layers));
  }
  if (q.output_agreement)
    text += fmt::format("\n      task agreement with fp32 on them {:.1f} %", *q.output_agreement * 100);
  if (!q.auto_reverted.empty()) text += "\n      reverted to fp32 by the accuracy search: " + join(q.auto_reverted);
  return text;
}

namespace {

std::string DeviceName(const std::vector<DeviceInfo>& devices, const Target& t) {
  for (const DeviceInfo& d : devices) {
    if (d.kind == t.kind && d.index == t.index) return d.name;
  }
  return t.kind == DeviceKind::kReference ? "reference kernels" : "";
}

// Units of a target's device the run keeps powered: the CPU threads it uses, an OpenCL device's
// compute units, one GPU.
double StaticUnits(const RunResult& run, const Target& target) {
  if (target.kind == DeviceKind::kCpu || target.kind == DeviceKind::kReference) {
    // Per core used: threads beyond the cores (--oversubscribe) share them and draw no more static power.
    const int cores = run.settings.cores > 0 ? run.settings.cores : run.settings.threads;
    return std::max(1, std::min(run.settings.threads, cores));
  }
  for (const DeviceInfo& d : run.machine.devices) {
    if (d.kind == target.kind && d.index == target.index && target.kind == DeviceKind::kOpenCL)
      return std::max(1, d.compute_units);
  }
  return 1;
}

// The energy step: measured over a loop where a sensor exists, attributed to layers by the model.
Status ProfileEnergy(RunSetup& setup, CompiledModel& compiled, const ProgressFn& progress, const std::stop_token& stop,
                     TargetResult& result) {
  std::optional<EnergyMeasurement> measured;
  if (!setup.sensors.empty()) {
    progress("energy", setup.sensors.front()->name());
    auto m = MeasureEnergy(*setup.sensors.front(), [&] { return compiled.Run(setup.inputs, nullptr, stop).status(); });
    if (m.ok()) {
      measured = *m;
    } else if (m.status().code() == StatusCode::kCancelled) {
      return m.status();
    } else {
      result.notes.push_back("energy: measuring with " + setup.sensors.front()->name() +
                             " failed: " + m.status().message());
    }
  }
  AttributeTargetEnergy(*setup.energy_model, measured, result, StaticUnits(setup.run, result.target));
  return Status::Ok();
}

// The drift step: every kernel's outputs against the reference on the same inputs.
Status ProfileDrift(const ProfileOptions& options, RunSetup& setup, CompiledModel& compiled, bool random_calibration,
                    const ProgressFn& progress, const std::stop_token& stop, TargetResult& result) {
  if (setup.reference == nullptr) {
    result.notes.push_back("accuracy not measured: " + setup.reference_note);
    return Status::Ok();
  }
  if (!setup.reference_note.empty()) result.notes.push_back(setup.reference_note);
  progress("drift", "vs " + setup.run.settings.reference);
  DriftOptions drift_options{.classifier_output = options.classifier_output,
                             .task = WithGraph(options.task, *setup.graph),
                             .random_inputs = setup.samples.empty(),
                             .stop = stop};
  ASSIGN_OR_RETURN(DriftReport drift, MeasureDrift(compiled, *setup.reference, setup.drift_samples, drift_options));
  result.accuracy = drift.summary;
  result.accuracy->random_calibration = random_calibration;
  for (size_t i = 0; i < result.layers.size() && i < drift.kernels.size(); ++i)
    result.layers[i].drift = drift.kernels[i];
  return Status::Ok();
}

// Throughput mode ------------------------------------------------------------------------------------

// The timed inputs at batch `batch`: the user's samples (or the seeded inputs) stacked along dim 0,
// cycling through them. Every input must have a dim 0 of 1 as bound for the run.
Result<std::map<std::string, Tensor>> StackBatch(const RunSetup& setup, int batch) {
  std::vector<const std::map<std::string, Tensor>*> sources;
  for (const auto& sample : setup.samples) sources.push_back(&sample);
  if (sources.empty()) sources.push_back(&setup.inputs);
  std::map<std::string, Tensor> stacked;
  for (const auto& [name, first] : *sources.front()) {
    if (first.rank() == 0 || first.dim(0) != 1) {
      return Unsupported("input '" + name + "' has " + ShapeToString(first.shape()) +
                         " in this run; --batch stacks inputs of batch 1 along their first dim");
    }
    Shape shape = first.shape();
    shape[0] = batch;
    Tensor t(first.dtype(), shape);
    const size_t row = first.nbytes();
    for (int b = 0; b < batch; ++b) {
      const Tensor& src = sources[static_cast<size_t>(b) % sources.size()]->at(name);
      std::memcpy(static_cast<uint8_t*>(t.raw_data()) + static_cast<size_t>(b) * row, src.raw_data(), row);
    }
    stacked.emplace(name, std::move(t));
  }
  return stacked;
}

// The model with every input's dim 0 bound to `batch` (the rest as the run bound them). A model whose
// first dim is fixed is refused by the loader, naming the input.
Result<std::unique_ptr<Graph>> GraphAtBatch(const RunSetup& setup, int batch) {
  std::vector<std::string> shapes;
  for (const auto& [name, tensor] : setup.inputs) {
    std::string dims = std::to_string(batch);
    for (int64_t i = 1; i < tensor.rank(); ++i) dims += "x" + std::to_string(tensor.dim(i));
    shapes.push_back(name + "=" + dims);
  }
  RunResult scratch;
  auto graph = LoadGraph(setup.model_path, shapes, scratch);
  // A fixed first dim (or any other binding the model refuses) means this batch size cannot run.
  if (!graph.ok()) return Unsupported("--batch " + std::to_string(batch) + ": " + graph.status().message());
  return graph;
}

// N compiled copies run concurrently, each on its own thread with its share of the OpenMP threads,
// until the timed window (at least min_time_s, and `iterations` requests in all) is over.
Status RunStreams(std::vector<std::unique_ptr<CompiledModel>>& copies, const std::map<std::string, Tensor>& inputs,
                  const ProfileOptions& options, const std::stop_token& stop, ThroughputPoint& point) {
  const int streams = static_cast<int>(copies.size());
  point.threads_per_stream = std::max(1, omp_get_max_threads() / streams);
  const int per_stream = std::max(1, (options.iterations + streams - 1) / streams);
  const double window_s = std::max(options.min_time_s, 0.2);
  std::vector<std::vector<double>> latencies(copies.size());
  std::vector<Status> statuses(copies.size());
  std::vector<std::chrono::steady_clock::time_point> ends(copies.size());
  std::latch warmed(streams);
  std::chrono::steady_clock::time_point start;
  std::mutex start_mutex;
  bool started = false;
  auto stream = [&](size_t s) {
    omp_set_num_threads(point.threads_per_stream);
    for (int i = 0; i < std::max(1, options.warmup) && statuses[s].ok(); ++i) {
      statuses[s] = copies[s]->Run(inputs, nullptr, stop).status();
    }
    warmed.arrive_and_wait();
    {
      const std::lock_guard lock(start_mutex);
      if (!started) start = std::chrono::steady_clock::now();
      started = true;
    }
    const auto deadline = start + std::chrono::duration<double>(window_s);
    while (statuses[s].ok() && !stop.stop_requested() &&
           (static_cast<int>(latencies[s].size()) < per_stream || std::chrono::steady_clock::now() < deadline)) {
      const auto t0 = std::chrono::steady_clock::now();
      statuses[s] = copies[s]->Run(inputs, nullptr, stop).status();
      const auto t1 = std::chrono::steady_clock::now();
      if (statuses[s].ok()) latencies[s].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      ends[s] = t1;
    }
  };
  std::vector<std::thread> threads;
  for (size_t s = 0; s < copies.size(); ++s) threads.emplace_back(stream, s);
  for (std::thread& t : threads) t.join();
  for (const Status& s : statuses) RETURN_IF_ERROR(s);
  if (stop.stop_requested()) return Cancelled("throughput stopped");
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  const auto end = *std::max_element(ends.begin(), ends.end());
  point.duration_s = std::chrono::duration<double>(end - start).count();
  point.requests = static_cast<int64_t>(all.size());
  point.latency = ComputeLatencyStats(std::move(all));
  point.inferences_per_s = point.duration_s > 0 ? point.batch * point.requests / point.duration_s : 0;
  return Status::Ok();
}

// One throughput point: compile at the batch, then either the end-to-end and per-layer passes (one
// stream) or the concurrent streams. Never an error: what went wrong is the point's status.
ThroughputPoint ProfileThroughputPoint(const ProfileOptions& options, RunSetup& setup, const Target& target,
                                       const CompileOptions& compile, int batch, int streams,
                                       const ProfileSettings& settings, const ProgressFn& progress,
                                       const std::stop_token& stop) {
  ThroughputPoint point{.batch = batch, .streams = streams};
  Status status = [&]() -> Status {
    progress("throughput", fmt::format("batch {}, {} stream(s)", batch, streams));
    ASSIGN_OR_RETURN(auto graph, GraphAtBatch(setup, batch));
    ASSIGN_OR_RETURN(const auto inputs, StackBatch(setup, batch));
    Int8Options int8;
    int8.calibration.method = options.calibration;
    int8.calibration.percentile = options.calibration_percentile;
    int8.random_samples = options.calibration_samples;
    // int8 calibrates on the stacked timed inputs at this batch (the user's data when given).
    int8.samples = {inputs};
    std::vector<std::unique_ptr<CompiledModel>> copies;
    for (int s = 0; s < streams; ++s) {
      ASSIGN_OR_RETURN(auto compiled, CompileForTarget(*graph, target, compile, int8));
      copies.push_back(std::move(compiled));
    }
    if (streams > 1) return RunStreams(copies, inputs, options, stop, point);
    point.threads_per_stream = omp_get_max_threads();
    TargetResult one;
    one.target = target;
    RETURN_IF_ERROR(RunProfilePipeline(*copies.front(), inputs, settings, {}, one, stop, progress));
    point.latency = one.latency;
    point.layers = std::move(one.layers);
    point.requests = one.latency.iterations;
    point.duration_s = one.latency.mean * one.latency.iterations / 1e3;
    point.inferences_per_s = one.latency.p50 > 0 ? batch * 1e3 / one.latency.p50 : 0;
    return Status::Ok();
  }();
  if (!status.ok()) {
    point.status = status.code() == StatusCode::kCancelled     ? "cancelled"
                   : status.code() == StatusCode::kUnsupported ? "unsupported"
                                                               : "failed";
    point.error = status.message();
    point.layers.clear();
  }
  return point;
}

// Every batch size with one stream, then each with --streams N when N > 1. Without --batch: the
// run's own batch.
void ProfileThroughput(const ProfileOptions& options, RunSetup& setup, const CompileOptions& compile,
                       const ProfileSettings& settings, const ProgressFn& progress, const std::stop_token& stop,
                       TargetResult& result) {
  std::vector<int> batches = options.batches;
  if (batches.empty()) {
    const Tensor& first = setup.inputs.begin()->second;
    batches.push_back(first.rank() > 0 ? static_cast<int>(first.dim(0)) : 1);
  }
  for (int batch : batches) {
    for (int streams : options.streams > 1 ? std::vector<int>{1, options.streams} : std::vector<int>{1}) {
      if (stop.stop_requested()) return;
      result.throughput.push_back(
          ProfileThroughputPoint(options, setup, result.target, compile, batch, streams, settings, progress, stop));
    }
  }
}

// A target compiled for the rounds (or the status that stopped it first), kept until it is finished.
struct PreparedTarget {
  TargetResult result;
  std::unique_ptr<CompiledModel> compiled;
  CompileOptions compile;
  bool random_calibration = false;
  std::optional<int64_t> heap_compile_bytes;
  Status status;
};

// The settings every target is timed with.
ProfileSettings TimingSettings(const ProfileOptions& options, const RunSetup& setup) {
  return ProfileSettings{.warmup = options.warmup,
                         .iterations = options.iterations,
                         .min_time_s = options.min_time_s,
                         .ceilings = setup.ceilings,
                         .max_time_s = options.max_time_s,
                         .threads = setup.run.settings.threads,
                         .other_cpus_before = setup.other_cpus_before};
}

// Compile one target (int8: calibrate), with its notes; what fails is the prepared target's status.
PreparedTarget CompileTarget(const ProfileOptions& options, RunSetup& setup, size_t index, ProfileEvents& events) {
  const Target& target = setup.targets[index];
  PreparedTarget p;
  p.result.target = target;
  p.result.device_name = DeviceName(setup.run.machine.devices, target);
  events.Phase(index, "compile", "");
  const auto t0 = std::chrono::steady_clock::now();
  const std::optional<int64_t> heap_before = HeapInUseBytes();
  Int8Options int8;
  int8.samples = setup.samples;
  int8.calibration.method = options.calibration;
  int8.calibration.percentile = options.calibration_percentile;
  int8.random_samples = options.calibration_samples;
  int8.target_sqnr_db = options.auto_fp32_sqnr;
  int8.target_agreement = options.auto_fp32_agreement / 100;
  int8.fp32_where_faster = !options.int8_all_layers;
  int8.agreement = OutputAgreementFn(WithGraph(options.task, *setup.graph));
  p.compile.allow_fallback = !options.no_fallback;
  for (const std::string& node : options.keep_fp32) p.compile.keep_fp32[node] = "kept in fp32 by request (--keep-fp32)";
  QuantReport quant;
  auto compiled = CompileForTarget(*setup.graph, target, p.compile, int8, &quant);
  if (compiled.ok() && target.precision == Precision::kInt8) p.result.notes.push_back(DescribeQuantReport(quant));
  if (compiled.ok() && target.precision == Precision::kBf16 && !DescribeBf16Choice(quant).empty()) {
    p.result.notes.push_back(DescribeBf16Choice(quant));
  }
  if (compiled.ok()) {
    const std::vector<std::string> lint = TensorCoreChannelLint(*setup.graph, target);
    constexpr size_t kShown = 8;
    for (size_t i = 0; i < lint.size() && i < kShown; ++i) p.result.notes.push_back("lint: " + lint[i]);
    if (lint.size() > kShown) {
      p.result.notes.push_back(fmt::format("lint: {} more layers with channels not a multiple of the tensor-core tile",
                                           lint.size() - kShown));
    }
    p.compiled = std::move(compiled).value();
    if (const auto heap_after = HeapInUseBytes(); heap_before && heap_after) {
      p.heap_compile_bytes = *heap_after - *heap_before;
    }
  } else {
    p.status = compiled.status();
  }
  p.random_calibration = target.precision == Precision::kInt8 && quant.random_calibration;
  p.result.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

// After the rounds: energy → drift → throughput, and the status of whatever stopped the target.
// Never an error: what went wrong is the result's status and message.
TargetResult FinishTarget(const ProfileOptions& options, RunSetup& setup, size_t index, PreparedTarget& p,
                          ProfileEvents& events, const std::stop_token& stop) {
  TargetResult& result = p.result;
  const ProgressFn progress = [&](const std::string& phase, const std::string& detail) {
    events.Phase(index, phase, detail);
  };
  Status status = p.status;
  // Ceilings measured while the machine was busy make every bound of this target's roofline low.
  const std::string device = result.target.kind == DeviceKind::kReference ? "cpu" : result.target.DeviceId();
  for (const CeilingReport& c : setup.run.ceilings) {
    if (const std::string note = BusyCeilingsNote(c); status.ok() && c.device_id == device && !note.empty()) {
      result.notes.push_back(note);
    }
  }
  const bool timed = status.ok();
  if (status.ok()) status = ProfileEnergy(setup, *p.compiled, progress, stop, result);
  if (status.ok()) status = ProfileDrift(options, setup, *p.compiled, p.random_calibration, progress, stop, result);
  if (status.ok() && (!options.batches.empty() || options.streams > 1)) {
    ProfileThroughput(options, setup, p.compile, TimingSettings(options, setup), progress, stop, result);
  }
  if (!status.ok()) {
    result.status = status.code() == StatusCode::kCancelled     ? "cancelled"
                    : status.code() == StatusCode::kUnsupported ? "unsupported"
                                                                : "failed";
    result.error = status.message();
    // Stopped after (some of) its timing: the latency and layers measured are kept, marked partial;
    // what did not finish (energy, drift) stays absent.
    if (status.code() == StatusCode::kCancelled && (timed || result.partial)) {
      result.partial = true;
      result.error += timed ? " after its timing finished: latency and layers kept, accuracy and energy not measured"
                            : ": the latency and layers of the rounds it finished are kept";
    } else {
      result.layers.clear();
    }
  }
  p.compiled.reset();  // its memory is not needed by the targets still to finish
  return std::move(result);
}

// Every compiled target timed together in interleaved rounds (profiler.h, RunProfileRounds).
void TimeTargets(const ProfileOptions& options, RunSetup& setup, std::vector<PreparedTarget>& prepared,
                 ProfileEvents& events, const std::stop_token& stop) {
  std::vector<RoundTarget> rounds;
  std::vector<size_t> index_of;
  for (size_t i = 0; i < prepared.size(); ++i) {
    if (!prepared[i].status.ok() || !prepared[i].compiled) continue;
    rounds.push_back({.model = prepared[i].compiled.get(),
                      .inputs = &setup.inputs,
                      .result = &prepared[i].result,
                      .progress = [&events, i](const std::string& phase,
                                               const std::string& detail) { events.Phase(i, phase, detail); },
                      .layer_progress =
                          [&events, i](int run, int runs, size_t done, size_t total) {
                            events.LayerProgress(i, run, runs, static_cast<int>(done), static_cast<int>(total));
                          },
                      .heap_compile_bytes = prepared[i].heap_compile_bytes});
    index_of.push_back(i);
  }
  if (rounds.empty()) return;
  RunProfileRounds(rounds, TimingSettings(options, setup), stop);
  for (size_t k = 0; k < rounds.size(); ++k) prepared[index_of[k]].status = rounds[k].status;
}

// The drift reference: --reference, or where it cannot run the model (an op only a device has), the first
// fp32 target that can, said to the user; none at all leaves drift unmeasured with the reason. Errors that
// are not a refusal (a malformed model, wrong shapes) stop the run: no target would run either.
Result<Target> PrepareReference(const Target& asked, ProfileEvents& events, RunSetup& setup) {
  auto compiled = CompileForTarget(*setup.graph, asked);
  if (compiled.ok()) {
    setup.reference = std::move(compiled).value();
    return asked;
  }
  if (compiled.status().code() != StatusCode::kUnsupported) {
    return Status(compiled.status().code(), "--reference " + asked.ToString() + ": " + compiled.status().message());
  }
  const std::string why = asked.ToString() + " cannot run this model (" + compiled.status().message() + ")";
  std::vector<Target> candidates = {Target{.kind = DeviceKind::kCpu, .precision = Precision::kFp32}};
  for (const Target& t : setup.targets) {
    if (t.precision == Precision::kFp32 && !(t == asked) && !(t == candidates.front())) candidates.push_back(t);
  }
  for (const Target& candidate : candidates) {
    if (candidate == asked) continue;
    auto other = CompileForTarget(*setup.graph, candidate);
    if (!other.ok()) continue;
    setup.reference = std::move(other).value();
    setup.reference_note = why + "; accuracy is measured against " + candidate.ToString() + " instead";
    events.Message("warning: " + setup.reference_note);
    return candidate;
  }
  setup.reference_note = why + ", nor does any fp32 target";
  events.Message("warning: " + setup.reference_note + ": accuracy is not measured");
  return asked;
}

// Load, discover, inputs, reference, ceilings, energy, store: everything before the first target.
Status PrepareRun(const ProfileOptions& options, const ProfileSession::Discover& discover,
                  const std::filesystem::path& model_path, ProfileEvents& events, const std::stop_token& stop,
                  RunSetup& setup) {
  RunResult& run = setup.run;
  run.chipfit_version = VersionString();
  run.command = options.command;
  run.source = options.source;
  ASSIGN_OR_RETURN(setup.graph, LoadGraph(model_path, options.shapes, run));
  setup.model_path = model_path;
  for (const std::string& name : options.keep_fp32) {
    if (setup.graph->FindNode(name) == nullptr)
      return InvalidArgument("--keep-fp32: the model has no node named '" + name + "'");
  }
  run.machine = DescribeMachine(discover ? discover() : DiscoverDevices());
  setup.targets = ResolveTargets(options, run.machine.devices);
  RETURN_IF_ERROR(PrepareInputs(options, setup));
  for (const auto& [name, tensor] : setup.inputs) {
    std::string dims;
    for (int64_t d : tensor.shape()) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    run.inputs.shapes[name] = dims;
  }
  ASSIGN_OR_RETURN(const Target reference, ParseTarget(options.reference));
  ASSIGN_OR_RETURN(const Target drift_reference, PrepareReference(reference, events, setup));
  if (setup.reference != nullptr) run.model_flops = setup.reference->stats().flops;
  run.settings = {.warmup = options.warmup,
                  .iterations = options.iterations,
                  .min_time_s = options.min_time_s,
                  .reference = drift_reference.ToString(),
                  .targets = options.all_targets            ? "all"
                             : options.targets_text.empty() ? JoinTargets(options.targets)
                                                            : options.targets_text,
                  .threads = omp_get_max_threads(),
                  .calibration = std::string(CalibrationMethodName(options.calibration)),
                  .int8_all_layers = options.int8_all_layers};
  run.settings.threads_reason = setup.threads.reason;
  run.settings.cores = omp_get_num_procs();
  run.settings.other_cpus_before = setup.other_cpus_before;
  run.settings.max_time_s = options.max_time_s;
  run.settings.keep_fp32 = options.keep_fp32;
  RETURN_IF_ERROR(PrepareCeilings(options, reference, events, stop, setup));
  RETURN_IF_ERROR(PrepareEnergy(setup));
  return BeginStoredRun(options, setup);
}

}  // namespace

Tensor SeededInput(const ValueDesc& desc, uint64_t seed) {
  uint64_t key = seed;
  for (char c : desc.name) key = key * 1099511628211ull ^ static_cast<unsigned char>(c);
  return SeededTensor(desc.dtype, desc.shape, key);
}

std::optional<double> DeviceShare(const TargetResult& result) {
  const std::string device = result.target.DeviceId();
  double on_device = 0, total = 0;
  for (const LayerResult& layer : result.layers) {
    total += layer.time_p50_ms;
    if (layer.device == device) on_device += layer.time_p50_ms;
  }
  if (total <= 0) return std::nullopt;
  return on_device / total;
}

namespace {

// The accuracy figures a recommendation reads, from a measured target's summary.
void CopyAccuracy(const AccuracySummary& a, RecommendCandidate& c) {
  c.output_sqnr_db = a.output_sqnr_db;
  c.top1_agreement = a.top1_agreement;
  c.task_agreement = a.task_agreement;
  c.task_metric = a.task_metric;
  c.random_calibration = a.random_calibration;
}

// `profile --project`'s projected targets as candidates: their p50 and band, estimated energy, the
// catalog's price, and the accuracy of the measured target of the same precision (a projection has
// none of its own); none where no target of that precision was measured here.
void AddProjectedCandidates(const RunResult& run, std::vector<RecommendCandidate>& candidates) {
  for (const auto& p : run.projections) {
    if (!p.is_object()) continue;
    RecommendCandidate c;
    c.target = p.value("target", std::string());
    c.status = p.value("status", std::string("unsupported"));
    c.error = p.contains("reason") && p["reason"].is_string() ? p["reason"].get<std::string>() : std::string();
    c.device_kind = p.value("kind", std::string());
    c.device_name = p.value("hardware_name", std::string());
    c.projected = true;
    if (c.status == "ok") {
      c.p50_ms = p.value("p50_ms", 0.0);
      c.band_p10_ms = p.value("p10_ms", 0.0);
      c.band_p90_ms = p.value("p90_ms", 0.0);
      if (p.contains("energy_j") && p["energy_j"].is_object()) {
        c.energy_j = p["energy_j"].value("value", 0.0);
        c.energy_source = "estimated";
      }
    }
    if (p.contains("price_per_hour_usd") && p["price_per_hour_usd"].is_number()) {
      c.price_per_hour_usd = p["price_per_hour_usd"].get<double>();
    }
    const std::string precision = p.value("precision", std::string());
    const TargetResult* from = nullptr;
    for (const auto& t : run.targets) {
      if (t->status == "ok" && t->accuracy && PrecisionName(t->target.precision) == precision) {
        from = t.get();
        break;
      }
    }
    if (from == nullptr && precision == "fp32") from = run.FindTarget("cpu:fp32");
    if (from != nullptr && from->accuracy) {
      c.accuracy_from = from->target.ToString();
      CopyAccuracy(*from->accuracy, c);
    }
    candidates.push_back(std::move(c));
  }
}

}  // namespace

Result<nlohmann::json> RecommendRun(const RunResult& run, const RecommendSettings& settings) {
  RecommendOptions o;
  o.limits = settings.limits;
  ASSIGN_OR_RETURN(o.objective, ParseObjective(settings.objective));
  if (!settings.weights.empty()) {
    ASSIGN_OR_RETURN(o.weights, ParseWeights(settings.weights));
  }
  ASSIGN_OR_RETURN(CostTable costs, LoadCostTable(settings.costs.empty() ? DefaultCostTablePath()
                                                                         : std::filesystem::path(settings.costs)));
  o.costs = &costs;
  std::vector<RecommendCandidate> candidates;
  for (const auto& t : run.targets) {
    RecommendCandidate c{.target = t->target.ToString(),
                         .status = t->status,
                         .error = t->error,
                         .device_kind = std::string(DeviceKindName(t->target.kind)),
                         .device_name = t->device_name,
                         .peak_memory_bytes = static_cast<double>(t->peak_memory_bytes)};
    for (const ThroughputPoint& p : t->throughput) {
      if (p.status == "ok" && p.inferences_per_s > c.inferences_per_s.value_or(0)) {
        c.inferences_per_s = p.inferences_per_s;
        c.best_batch = p.batch;
      }
    }
    if (t->status == "ok") {  // latency is measured only for targets that ran
      c.p50_ms = t->latency.p50;
      c.p90_ms = t->latency.p90;
      c.p99_ms = t->latency.p99;
      c.device_id = t->target.DeviceId();
      c.device_share = DeviceShare(*t);
      c.latency_samples = t->latency.iterations;
      c.unreliable = t->unreliable;
      c.unreliable_reason = t->unreliable_reason;
      const PrecisionMix mix = ComputePrecisionMix(*t);
      c.precision_mix = mix.text;
      c.ran_as = mix.ran_as;
    }
    if (t->energy) {
      c.energy_j = t->energy->joules;
      c.energy_source = t->energy->source;
    }
    if (t->accuracy) CopyAccuracy(*t->accuracy, c);
    candidates.push_back(std::move(c));
  }
  AddProjectedCandidates(run, candidates);
  return Recommend(candidates, o);
}

ProfileSession::ProfileSession(ProfileOptions options, Discover discover)
    : options_(std::move(options)), discover_(std::move(discover)) {}

Status ProfileSession::Validate() const {
  if (options_.targets.empty() == !options_.all_targets) {
    return InvalidArgument("profile: give --targets T1,T2,... or --all-targets");
  }
  for (size_t i = 0; i < options_.targets.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (options_.targets[i].ToString() == options_.targets[j].ToString()) {
        return InvalidArgument(
            fmt::format("--targets names {} twice: each target is profiled once", options_.targets[i].ToString()));
      }
    }
  }
  if (options_.iterations < 1 || options_.warmup < 0 || options_.min_time_s < 0) {
    return InvalidArgument("profile: --iterations must be ≥ 1, --warmup and --min-time ≥ 0");
  }
  if (options_.drift_samples < 1) return InvalidArgument("--drift-samples must be at least 1");
  if (options_.project) RETURN_IF_ERROR(SelectHardware(options_.project_request).status());
  if (options_.threads < 0) {
    return InvalidArgument("--threads must be at least 1 (or 0: the cores other processes leave free)");
  }
  if (const int cores = omp_get_num_procs(); options_.threads > cores && !options_.oversubscribe) {
    return InvalidArgument(fmt::format(
        "--threads {}: this process may use {} core{}; more threads than cores make every parallel region wait "
        "for a thread the scheduler put aside (--oversubscribe runs it anyway)",
        options_.threads, cores, cores == 1 ? "" : "s"));
  }
  if (options_.max_time_s < 0) return InvalidArgument("--max-time must be ≥ 0 seconds (0: four times the plan)");
  if (!(options_.calibration_percentile > 50 && options_.calibration_percentile <= 100)) {
    return InvalidArgument(
        fmt::format("--percentile {}: expected a value in (50, 100]", options_.calibration_percentile));
  }
  if (options_.calibration_samples < 1) return InvalidArgument("--calibration-samples must be at least 1");
  RETURN_IF_ERROR(ParseTarget(options_.reference).status());
  RETURN_IF_ERROR(ParseObjective(options_.recommend.objective).status());
  if (!options_.recommend.weights.empty()) RETURN_IF_ERROR(ParseWeights(options_.recommend.weights).status());
  return Status::Ok();
}

Result<std::shared_ptr<const RunResult>> ProfileSession::Run(const std::filesystem::path& model_path,
                                                             ProfileEvents& events, const std::stop_token& stop) {
  RETURN_IF_ERROR(Validate());
  RunSetup setup;
  // Threads that fit the machine now. OpenMP's thread count is per calling thread: set here, it holds
  // for everything this run does.
  {
    CpuShareMeter meter;
    meter.Start();
    if (options_.threads > 0) {
      setup.threads = {.threads = options_.threads, .reason = fmt::format("--threads {}", options_.threads)};
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    if (const auto share = meter.Stop()) setup.other_cpus_before = *share * CpuShareMeter::MachineCpus();
    if (options_.threads == 0) setup.threads = ChooseThreads(omp_get_num_procs(), setup.other_cpus_before);
    omp_set_num_threads(setup.threads.threads);
  }
  events.Message("threads: " + setup.threads.reason);
  if (const ThreadChoice fit = ChooseThreads(omp_get_num_procs(), setup.other_cpus_before);
      options_.threads > fit.threads && setup.other_cpus_before) {
    events.Message(fmt::format(
        "warning: --threads {} while other processes keep ~{:.1f} CPUs busy: every parallel region will wait for a "
        "thread the scheduler put aside ({} without --threads)",
        options_.threads, *setup.other_cpus_before, fit.reason));
  }
  // Tail statistics need a sample that supports them: a limit (or ranking) on p90 or p99 takes at
  // least 20 or 100 timed runs.
  if (const Limits& limits = options_.recommend.limits; limits.max_latency_ms || limits.latency_stat_given) {
    const std::string& stat = limits.latency_stat;
    const int needed = SamplesNeeded(stat);
    if (options_.iterations < needed) {
      events.Message(fmt::format("a {} latency limit needs at least {} timed runs: --iterations {} raised to {}", stat,
                                 needed, options_.iterations, needed));
      options_.iterations = needed;
    }
  }
  RETURN_IF_ERROR(PrepareRun(options_, discover_, model_path, events, stop, setup));
  RunResult& run = setup.run;
  events.RunStarted(run, setup.targets);
  // Compile every target first: the timing interleaves them.
  std::vector<PreparedTarget> prepared(setup.targets.size());
  for (size_t i = 0; i < setup.targets.size(); ++i) {
    events.TargetStarted(i, setup.targets[i]);
    if (stop.stop_requested()) {
      prepared[i].result.target = setup.targets[i];
      prepared[i].result.device_name = DeviceName(run.machine.devices, setup.targets[i]);
      prepared[i].status = Cancelled("stopped (" + options_.stop_source + ") before this target");
    } else {
      prepared[i] = CompileTarget(options_, setup, i, events);
    }
  }
  TimeTargets(options_, setup, prepared, events, stop);
  for (size_t i = 0; i < setup.targets.size(); ++i) {
    auto finished = std::make_shared<const TargetResult>(FinishTarget(options_, setup, i, prepared[i], events, stop));
    if (setup.store) RETURN_IF_ERROR(setup.store->AddTarget(*run.run_id, TargetResultToJson(*finished, run.node_ops)));
    run.targets.push_back(finished);
    events.TargetFinished(i, finished);
  }
  run.status = stop.stop_requested() ? "cancelled" : "ok";
  nlohmann::json finished = nlohmann::json::object();
  if (options_.project && run.status == "ok") {
    ASSIGN_OR_RETURN(auto hardware, SelectHardware(options_.project_request));
    auto projected = ProjectRun(run, hardware, options_.project_request.precisions);
    if (projected.ok()) {
      run.projections = (*projected)["projections"];
      run.projection_calibration = (*projected)["calibration"];
      finished["projections"] = run.projections;
      finished["projection_calibration"] = run.projection_calibration;
    } else {
      events.Message("no projected targets: " + projected.status().message());
    }
  }
  ASSIGN_OR_RETURN(run.recommendation, RecommendRun(run, options_.recommend));
  finished["recommendation"] = run.recommendation;
  if (setup.store) RETURN_IF_ERROR(setup.store->FinishRun(*run.run_id, run.status, finished));
  auto done = std::make_shared<const RunResult>(std::move(run));
  events.RunFinished(done);
  return std::shared_ptr<const RunResult>(done);
}

}  // namespace chipfit
