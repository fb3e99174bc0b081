// chipfit: the headless front end. Parses flags, calls core and devices, prints; nothing else.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <fstream>
#include <thread>

#include <sys/utsname.h>
#include <unistd.h>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>

#include "CLI/CLI.hpp"
#include "chipfit/version.h"
#include "core/graph/model_summary.h"
#include "core/graph/onnx_import.h"
#include "core/graph/onnx_loader.h"
#include "core/quant/calibration_data.h"
#include "core/recommend/recommend.h"
#include "core/runtime/compiled_model.h"
#include "core/runtime/conformance.h"
#include "core/sha256.h"
#include "core/store/run_diff.h"
#include "core/store/run_store.h"
#include "core/tensor/npy.h"
#include "core/tensor/random.h"
#include "devices/device_json.h"
#include "devices/registry.h"
#include "devices/target_compiler.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "profilers/accuracy/drift.h"
#include "profilers/energy/energy_profiler.h"
#include "profilers/memory/ceilings.h"
#include "profilers/memory/memory_profiler.h"
#include "profilers/profile_json.h"
#include "profilers/profiler.h"
#include "profilers/trace.h"
#include "yaml-cpp/yaml.h"

#ifdef CHIPFIT_WITH_REPORTS
#include <QApplication>

#include "views/report/report.h"
#endif

namespace chipfit {
namespace {

// The command as typed, recorded with every stored run.
std::string g_command_line;

// Exit codes of DESIGN.md §7.
constexpr int kExitOk = 0;
constexpr int kExitInputError = 2;

int Fail(const Status& status) {
  fmt::print(stderr, "chipfit: error: {}\n", status.message());
  return kExitInputError;
}

std::string HumanBytes(uint64_t bytes) {
  if (bytes >= (1ull << 30)) return fmt::format("{:.1f} GiB", bytes / double(1ull << 30));
  if (bytes >= (1ull << 20)) return fmt::format("{:.1f} MiB", bytes / double(1ull << 20));
  if (bytes >= (1ull << 10)) return fmt::format("{:.1f} KiB", bytes / double(1ull << 10));
  return fmt::format("{} B", bytes);
}

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

// Limits and objective of a recommendation (profile, recommend, later batch).
struct LimitFlags {
  std::optional<double> max_latency_ms, min_top1, min_sqnr_db, max_memory_mb, max_energy_mj;
  std::string latency_stat = "p99";
  std::string objective = "latency";
  std::string weights;
  std::string costs;  // empty: the shipped table
};

void AddLimitFlags(CLI::App* cmd, LimitFlags& f) {
  cmd->add_option("--max-latency-ms", f.max_latency_ms, "Limit: latency (the --latency-stat statistic) in ms");
  cmd->add_option("--latency-stat", f.latency_stat, "Which latency the limit bounds: p50, p90 or p99")
      ->capture_default_str();
  cmd->add_option("--min-top1", f.min_top1, "Limit: top-1 agreement with the reference, 0..1 (e.g. 0.99)");
  cmd->add_option("--min-sqnr-db", f.min_sqnr_db, "Limit: output SQNR against the reference, dB");
  cmd->add_option("--max-memory-mb", f.max_memory_mb, "Limit: planned peak memory, MiB");
  cmd->add_option("--max-energy-mj", f.max_energy_mj, "Limit: energy per inference, mJ (estimated where not measured)");
  cmd->add_option("--objective", f.objective, "Rank passing targets by latency, energy or cost")->capture_default_str();
  cmd->add_option("--weights", f.weights, "Weighted ranking instead: latency=1,energy=0.5,cost=0,drift=0.2");
  cmd->add_option("--costs", f.costs, "Device $/hour table (YAML) for the cost objective (default: the shipped one)");
}

bool RecommendFromFlagsHadLimits(const LimitFlags& f) {
  return f.max_latency_ms || f.min_top1 || f.min_sqnr_db || f.max_memory_mb || f.max_energy_mj;
}

// The recommendation JSON for `run`, from the limit flags.
Result<nlohmann::json> RecommendFromFlags(const nlohmann::json& run, const LimitFlags& f) {
  RecommendOptions o;
  o.limits = Limits{.max_latency_ms = f.max_latency_ms,
                    .latency_stat = f.latency_stat,
                    .min_top1 = f.min_top1,
                    .min_sqnr_db = f.min_sqnr_db,
                    .max_memory_mb = f.max_memory_mb,
                    .max_energy_mj = f.max_energy_mj};
  ASSIGN_OR_RETURN(o.objective, ParseObjective(f.objective));
  if (!f.weights.empty()) {
    ASSIGN_OR_RETURN(o.weights, ParseWeights(f.weights));
  }
  ASSIGN_OR_RETURN(CostTable costs,
                   LoadCostTable(f.costs.empty() ? DefaultCostTablePath() : std::filesystem::path(f.costs)));
  o.costs = &costs;
  return Recommend(run, o);
}

void PrintRecommendation(const nlohmann::json& r) {
  fmt::print("\nrecommendation ({}{}):\n  {}\n", r["objective"].get<std::string>(),
             r["ranked"].empty() ? "" : ", ranked: " + Join(r["ranked"].get<std::vector<std::string>>(), ", "),
             r["summary"].get<std::string>());
  for (const auto& rej : r["rejected"]) {
    fmt::print("  rejected {}: {}\n", rej["target"].get<std::string>(), rej["reason"].get<std::string>());
  }
  fmt::print("  Pareto frontier (latency x drift x energy): {}\n",
             Join(r["pareto"].get<std::vector<std::string>>(), ", "));
}

void PrintDevice(const DeviceInfo& info) {
  fmt::print("{}  {}\n", info.Id(), info.name);
  auto row = [](std::string_view key, const std::string& value) {
    if (!value.empty()) fmt::print("    {:<18} {}\n", key, value);
  };
  row("vendor", info.vendor);
  row("compute units", info.compute_units ? std::to_string(info.compute_units) : "");
  row("memory", info.memory_bytes ? HumanBytes(info.memory_bytes) : "");
  row("runtime", info.runtime_version);
  row("driver", info.driver_version);
  row("features", Join(info.features, " "));
  for (const auto& [key, value] : info.properties) {
    if (key != "extensions") row(key, value);
  }
  for (const auto& p : info.precisions) {
    const std::string target = Target{info.kind, info.index, p.precision}.ToString();
    if (p.support.ok) {
      row("target", p.support.reason.empty() ? target : fmt::format("{}  ({})", target, p.support.reason));
    } else {
      row("unsupported", fmt::format("{}  ({})", target, p.support.reason));
    }
  }
}

nlohmann::json EnergySensorsJson(const std::vector<std::unique_ptr<EnergySensor>>& sensors,
                                 const std::vector<std::string>& notes) {
  nlohmann::json found = nlohmann::json::array();
  for (const auto& s : sensors) found.push_back(s->name());
  return {{"found", found},
          {"used", sensors.empty() ? nlohmann::json(nullptr) : nlohmann::json(sensors.front()->name())},
          {"notes", notes}};
}

// How ceilings micro-benchmarks compile their graphs: the target's own path; int8 calibrates on two
// seeded random samples (a MatMul's speed does not depend on its calibration).
GraphCompiler CeilingCompiler() {
  return [](const Graph& graph, const Target& target) {
    Int8Options int8;
    int8.random_samples = 2;
    return CompileForTarget(graph, target, {}, int8);
  };
}

void PrintCeilings(const CeilingReport* r, bool verbose) {
  if (r == nullptr) {
    fmt::print("    {:<18} not measured: run `chipfit devices --measure`\n", "ceilings");
    return;
  }
  fmt::print("    {:<18} measured {} (`chipfit devices --measure` re-measures)\n", "ceilings", r->measured_at);
  const double bw = r->measured.memory_bandwidth_gbps;
  if (bw > 0) fmt::print("      {:<16} {:>8.1f} GB/s measured\n", "memory bandwidth", bw);
  for (const auto& [precision, gflops] : r->measured.peak_gflops) {
    const auto theory = r->theoretical_gflops.find(precision);
    std::string theory_text = "theoretical: no figure";
    if (theory != r->theoretical_gflops.end()) {
      theory_text = fmt::format("theoretical {:.0f} (estimate), measured = {:.0f} %", theory->second,
                                100 * gflops / theory->second);
    }
    fmt::print("      {:<16} {:>8.1f} GFLOP/s measured, {}; ridge point {:.1f} FLOP/byte\n",
               std::string(PrecisionName(precision)) + " peak", gflops, theory_text, bw > 0 ? gflops / bw : 0.0);
  }
  if (!verbose) return;
  for (const std::string& m : r->methods) fmt::print("      how: {}\n", m);
  for (const std::string& n : r->notes) fmt::print("      note: {}\n", n);
}

int RunDevices(bool json, bool measure) {
  DiscoveryReport report = DiscoverDevices();
  std::vector<std::string> sensor_notes;
  const auto sensors = DetectEnergySensors("/sys", &sensor_notes);
  const auto cache_path = DefaultCeilingCachePath();
  auto cache = LoadCeilingCache(cache_path);
  if (!cache.ok()) return Fail(cache.status());
  if (measure) {
    CeilingOptions options;
    for (const auto& device : report.devices) {
      fmt::print(stderr, "measuring {} ({}) ...\n", device->info().Id(), device->info().name);
      auto measured = MeasureCeilings(device->info(), CeilingCompiler(), options);
      if (!measured.ok()) {
        report.notes.push_back(device->info().Id() + ": ceilings not measured: " + measured.status().message());
        continue;
      }
      if (Status saved = SaveCeilingReport(cache_path, *measured); !saved.ok()) return Fail(saved);
      const std::string key = measured->device_key;
      (*cache)[key] = std::move(measured).value();
    }
  }
  auto cached = [&](const DeviceInfo& info) -> const CeilingReport* {
    const auto it = cache->find(CeilingKey(info));
    return it == cache->end() ? nullptr : &it->second;
  };
  if (json) {
    nlohmann::json j = DiscoveryToJson(report);
    for (size_t i = 0; i < report.devices.size(); ++i) {
      const CeilingReport* r = cached(report.devices[i]->info());
      j["devices"][i]["ceilings"] = r ? CeilingReportToJson(*r) : nlohmann::json(nullptr);
    }
    j["ceilings_cache"] = cache_path.string();
    j["energy_sensors"] = EnergySensorsJson(sensors, sensor_notes);
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  for (const auto& device : report.devices) {
    PrintDevice(device->info());
    PrintCeilings(cached(device->info()), measure);
    fmt::print("\n");
  }
  if (sensors.empty()) {
    fmt::print("energy sensors: none; profiles estimate energy from the energy model\n");
    for (const auto& note : sensor_notes) fmt::print("    {}\n", note);
  } else {
    fmt::print("energy sensors:\n");
    for (const auto& sensor : sensors) fmt::print("    {}\n", sensor->name());
  }
  for (const auto& note : report.notes) fmt::print("note: {}\n", note);
  return kExitOk;
}

void PrintSummary(const ModelSummary& s) {
  fmt::print("model        {}\n", s.path);
  fmt::print("format       ONNX IR {}, opset {}{}\n", s.ir_version, s.default_opset,
             s.producer.empty() ? "" : ", produced by " + s.producer);
  for (const TensorSpec& in : s.inputs) fmt::print("input        {}  {}  {}\n", in.name, in.dtype, FormatDims(in));
  for (const TensorSpec& out : s.outputs) {
    fmt::print("output       {}  {}  {}\n", out.name, out.dtype, FormatDims(out));
  }
  std::vector<std::string> ops;
  for (const auto& [op, count] : s.op_histogram) ops.push_back(fmt::format("{} {}", op, count));
  fmt::print("nodes        {}: {}\n", s.node_count, Join(ops, ", "));
  fmt::print("parameters   {} ({}) in {} initializers{}\n", s.parameter_count, HumanBytes(s.parameter_bytes),
             s.initializer_count,
             s.constant_node_count ? fmt::format(" and {} Constant nodes", s.constant_node_count) : "");
  for (const auto& note : s.notes) fmt::print("note         {}\n", note);
}

Result<OnnxLoadOptions> LoadOptionsFor(const std::vector<std::string>& shapes) {
  OnnxLoadOptions options;
  for (const std::string& text : shapes) {
    ASSIGN_OR_RETURN(auto binding, ParseShapeBinding(text));
    options.input_shapes[binding.first] = binding.second;
  }
  return options;
}

// "a,b,,c" → {"a", "b", "c"}.
std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// int8 calibration flags shared by the commands that compile for a target.
struct QuantFlags {
  std::string data_dir;
  std::string method = "minmax";
  double percentile = 99.99;
  int samples = 8;
  std::string keep_fp32;
  double auto_fp32_sqnr = 0;
  bool no_fallback = false;
};

void AddQuantFlags(CLI::App* command, QuantFlags& flags) {
  command->add_option("--data", flags.data_dir,
                      "int8 calibration inputs: a folder of <input>.npy, or of sub-folders each holding a set");
  command->add_option("--calibration", flags.method, "int8 calibration: minmax, entropy or percentile")
      ->capture_default_str();
  command->add_option("--percentile", flags.percentile, "Percentile for --calibration percentile")
      ->capture_default_str();
  command->add_option("--calibration-samples", flags.samples, "Seeded random samples when --data is not given")
      ->capture_default_str();
  command->add_option("--keep-fp32", flags.keep_fp32, "Nodes to keep in fp32 on int8 targets: NODE,NODE");
  command->add_option("--auto-fp32-sqnr", flags.auto_fp32_sqnr,
                      "Revert the worst int8 layers to fp32 until the outputs reach this SQNR (dB) vs fp32");
  command->add_flag("--no-fallback", flags.no_fallback,
                    "Fail instead of running a node the target's device refuses on the CPU or reference kernels");
}

Result<Int8Options> MakeInt8Options(const QuantFlags& flags, const Graph& graph, CompileOptions& compile) {
  Int8Options int8;
  compile.allow_fallback = !flags.no_fallback;
  auto method = ParseCalibrationMethod(flags.method);
  if (!method) return InvalidArgument("--calibration '" + flags.method + "': expected minmax, entropy or percentile");
  int8.calibration.method = *method;
  if (!(flags.percentile > 50 && flags.percentile <= 100)) {
    return InvalidArgument("--percentile " + std::to_string(flags.percentile) + ": expected a value in (50, 100]");
  }
  int8.calibration.percentile = flags.percentile;
  if (flags.samples < 1) return InvalidArgument("--calibration-samples must be at least 1");
  int8.random_samples = flags.samples;
  if (!flags.data_dir.empty()) {
    ASSIGN_OR_RETURN(int8.samples, LoadCalibrationData(flags.data_dir, graph.inputs));
  }
  int8.target_sqnr_db = flags.auto_fp32_sqnr;
  for (const std::string& name : SplitList(flags.keep_fp32)) {
    if (graph.FindNode(name) == nullptr)
      return InvalidArgument("--keep-fp32: the model has no node named '" + name + "'");
    compile.keep_fp32[name] = "kept in fp32 by request (--keep-fp32)";
  }
  return int8;
}

std::string DescribeQuantReport(const QuantReport& q) {
  std::string text = fmt::format(
      "int8: {} kernels in int8; calibrated with {} on {} {}sample(s); output SQNR vs fp32 on them {:.1f} dB",
      q.int8_kernels, q.method, q.samples, q.random_calibration ? "seeded random " : "", q.output_sqnr_db);
  if (q.random_calibration)
    text += "\n      random calibration: ranges do not reflect real data; give --data for real figures";
  if (!q.kept_fp32.empty()) text += "\n      kept in fp32 by request: " + Join(q.kept_fp32, ", ");
  if (!q.kept_small.empty()) {
    text += fmt::format("\n      {} small layer(s) kept in fp32 (too few multiply-adds for int8 to pay off)",
                        q.kept_small.size());
  }
  if (!q.auto_reverted.empty()) text += "\n      reverted to fp32 by the SQNR search: " + Join(q.auto_reverted, ", ");
  return text;
}

// Where each kernel runs on a target: device, implementation, precision and every reason.
void PrintPlacement(const CompiledModel& model) {
  fmt::print("{:>4}  {:<28} {:<16} {:<9} {:<28} {:<5} {}\n", "#", "kernel", "op", "device", "implementation", "prec",
             "note");
  for (size_t i = 0; i < model.kernels().size(); ++i) {
    const KernelInfo& k = model.kernels()[i];
    std::string note = !k.fallback_reason.empty() ? "fallback: " + k.fallback_reason : k.precision_reason;
    if (k.onnx_nodes.size() > 1) note = "covers " + Join(k.onnx_nodes, "+") + (note.empty() ? "" : "; " + note);
    fmt::print("{:>4}  {:<28} {:<16} {:<9} {:<28} {:<5} {}\n", i, k.name.substr(0, 28), k.op_type.substr(0, 16),
               k.device, k.implementation.substr(0, 28), k.precision, note);
  }
}

nlohmann::json PlacementJson(const CompiledModel& model) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const KernelInfo& k : model.kernels()) {
    kernels.push_back({{"name", k.name},
                       {"op", k.op_type},
                       {"onnx_nodes", k.onnx_nodes},
                       {"device", k.device},
                       {"implementation", k.implementation},
                       {"precision", k.precision},
                       {"precision_reason", k.precision_reason},
                       {"fallback_reason", k.fallback_reason}});
  }
  nlohmann::json fallbacks = nlohmann::json::array();
  for (const Fallback& f : model.fallbacks())
    fallbacks.push_back({{"node", f.node}, {"op", f.op}, {"reason", f.reason}});
  const CompileStats& st = model.stats();
  return {{"target", model.target().ToString()},
          {"kernels", kernels},
          {"fallbacks", fallbacks},
          {"device_kernels", st.device_kernels},
          {"transfers", st.transfers},
          {"device_arena_bytes", st.device_arena_bytes},
          {"device_constant_bytes", st.device_constant_bytes}};
}

int RunInspect(const std::string& path, const std::vector<std::string>& shapes, bool json,
               const std::string& target_text, const QuantFlags& quant_flags) {
  auto options = LoadOptionsFor(shapes);
  if (!options.ok()) return Fail(options.status());
  auto model = LoadOnnxModel(path, *options);
  if (!model.ok()) return Fail(model.status());
  const ModelSummary summary = Summarize(*model);
  // What the reference path makes of it: unsupported nodes, folded nodes and the planned arena.
  nlohmann::json execution;
  std::string execution_text;
  auto graph = ImportModel(*model);
  if (!graph.ok()) {
    execution = {{"status", "not compiled"}, {"reason", graph.status().message()}};
    execution_text = "not compiled: " + graph.status().message();
  } else if (auto compiled = Compile(*graph, Target{}); !compiled.ok()) {
    execution = {{"status", "unsupported"}, {"reason", compiled.status().message()}};
    execution_text = compiled.status().message();
  } else {
    if (!target_text.empty()) {
      auto target = ParseTarget(target_text);
      if (!target.ok()) return Fail(target.status());
      CompileOptions compile;
      auto int8 = MakeInt8Options(quant_flags, *graph, compile);
      if (!int8.ok()) return Fail(int8.status());
      QuantReport quant;
      auto placed = CompileForTarget(*graph, *target, compile, *int8, &quant);
      if (!placed.ok()) return Fail(placed.status());
      const bool is_int8 = target->precision == Precision::kInt8;
      if (json) {
        nlohmann::json j = PlacementJson(**placed);
        if (is_int8) {
          j["quantization"] = {{"method", quant.method},
                               {"samples", quant.samples},
                               {"random_calibration", quant.random_calibration},
                               {"output_sqnr_db", quant.output_sqnr_db},
                               {"int8_kernels", quant.int8_kernels},
                               {"kept_fp32", quant.kept_fp32},
                               {"auto_reverted", quant.auto_reverted}};
        }
        std::cout << nlohmann::json{{"schema", "chipfit.placement/1"}, {"model", path}, {"placement", j}}.dump(2)
                  << "\n";
      } else {
        const CompileStats& st = (*placed)->stats();
        fmt::print("model        {}\ntarget       {}: {} kernels, {} on {}, {} fell back{}\n", path, target->ToString(),
                   st.kernels - st.transfers, st.device_kernels, target->DeviceId(), (*placed)->fallbacks().size(),
                   target->kind == DeviceKind::kOpenCL || target->kind == DeviceKind::kCuda ? " (to cpu, else ref)"
                                                                                            : " (to ref)");
        if (st.transfers > 0 || st.device_arena_bytes > 0) {
          fmt::print("device mem   {} arena + {} constants; {} copies between host and {}\n",
                     HumanBytes(st.device_arena_bytes), HumanBytes(st.device_constant_bytes), st.transfers,
                     target->DeviceId());
        }
        if (is_int8) fmt::print("      {}\n", DescribeQuantReport(quant));
        PrintPlacement(**placed);
      }
      return kExitOk;
    }
    const CompileStats& st = (*compiled)->stats();
    execution = {{"status", "ok"},
                 {"target", "ref:fp32"},
                 {"kernels", st.kernels},
                 {"folded_nodes", st.folded_nodes},
                 {"flops", st.flops},
                 {"dynamic_kernels", st.dynamic_kernels},
                 {"planned_peak_bytes", st.planned_arena_bytes},
                 {"unplanned_total_bytes", st.planned_total_bytes},
                 {"constant_bytes", st.constant_bytes}};
    execution_text = fmt::format(
        "ref:fp32: {} kernels, {:.4f} GFLOP{} ({} nodes folded at compile time{}), activations {} planned "
        "in {} (without reuse: {})",
        st.kernels, st.flops / 1e9, st.dynamic_kernels ? " in kernels with static shapes" : "", st.folded_nodes,
        st.dynamic_kernels ? fmt::format(", {} with run-time shapes", st.dynamic_kernels) : "",
        HumanBytes(st.planned_total_bytes), HumanBytes(st.planned_arena_bytes), HumanBytes(st.planned_total_bytes));
  }
  if (json) {
    std::cout << nlohmann::json{{"schema", "chipfit.inspect/1"},
                                {"model", SummaryToJson(summary)},
                                {"execution", execution}}
                     .dump(2)
              << "\n";
  } else {
    PrintSummary(summary);
    fmt::print("execution    {}\n", execution_text);
  }
  return kExitOk;
}

// Deterministic inputs for `run --seed`: each input draws its own stream, keyed by its name.
Tensor SeededInput(const ValueDesc& desc, uint64_t seed) {
  uint64_t key = seed;
  for (char c : desc.name) key = key * 1099511628211ull ^ static_cast<unsigned char>(c);
  return SeededTensor(desc.dtype, desc.shape, key);
}

std::string OutputFileName(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (c == '/' || c == ':') c = '_';
  }
  return out + ".npy";
}

int RunRun(const std::string& path, const std::string& target_text, const std::vector<std::string>& shapes,
           const std::vector<std::string>& input_files, uint64_t seed, const std::string& output_dir,
           const QuantFlags& quant_flags) {
  auto target = ParseTarget(target_text);
  if (!target.ok()) return Fail(target.status());
  auto options = LoadOptionsFor(shapes);
  if (!options.ok()) return Fail(options.status());
  auto model = LoadOnnxModel(path, *options);
  if (!model.ok()) return Fail(model.status());
  auto graph = ImportModel(*model);
  if (!graph.ok()) return Fail(graph.status());
  CompileOptions compile;
  auto int8 = MakeInt8Options(quant_flags, *graph, compile);
  if (!int8.ok()) return Fail(int8.status());
  QuantReport quant;
  auto compiled = CompileForTarget(*graph, *target, compile, *int8, &quant);
  if (!compiled.ok()) return Fail(compiled.status());
  for (const KernelInfo& k : (*compiled)->kernels()) {
    if (!k.fallback_reason.empty()) {
      fmt::print(stderr, "fallback to {}: {} ({}): {}\n", k.device, k.name, k.op_type, k.fallback_reason);
    }
  }
  if (target->precision == Precision::kInt8) fmt::print(stderr, "{}\n", DescribeQuantReport(quant));
  std::map<std::string, Tensor> inputs;
  for (const std::string& spec : input_files) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Fail(InvalidArgument("--input '" + spec + "': expected NAME=FILE.npy"));
    }
    auto tensor = ReadNpy(spec.substr(eq + 1));
    if (!tensor.ok()) return Fail(tensor.status());
    inputs[spec.substr(0, eq)] = std::move(tensor).value();
  }
  for (const ValueDesc& desc : graph->inputs) {
    if (!inputs.contains(desc.name)) inputs[desc.name] = SeededInput(desc, seed);
  }
  auto outputs = (*compiled)->Run(inputs);
  if (!outputs.ok()) return Fail(outputs.status());
  std::error_code ec;
  std::filesystem::create_directories(output_dir, ec);
  if (ec) return Fail(IoError("cannot create output folder '" + output_dir + "': " + ec.message()));
  for (size_t i = 0; i < outputs->size(); ++i) {
    const std::string file = (std::filesystem::path(output_dir) / OutputFileName(graph->outputs[i].name)).string();
    Status written = WriteNpy(file, (*outputs)[i]);
    if (!written.ok()) return Fail(written);
    fmt::print("{}  {}  -> {}\n", graph->outputs[i].name, DescribeTensor((*outputs)[i]), file);
  }
  return kExitOk;
}

// Tolerances per precision: fp32 as the ONNX backend runner; bf16 keeps 8 mantissa bits (rel.
// error ≤ 2^-8 per rounding, a few roundings per op); int8 is judged by output SQNR instead.
void SetConformanceTolerances(const Target& target, ConformanceOptions& options) {
  if (target.precision == Precision::kBf16 || target.precision == Precision::kFp16) {
    options.rtol = 2e-2;
    options.atol = 1e-2;
  } else if (target.precision == Precision::kInt8) {
    options.min_sqnr_db = 20;
  }
}

int RunConformanceCommand(const std::vector<std::string>& suites, const std::string& filter,
                          const std::string& targets_text, bool json, bool verbose, bool no_fallback) {
  std::vector<std::filesystem::path> suite_paths;
  for (const std::string& s : suites) suite_paths.emplace_back(s);
  if (suite_paths.empty()) suite_paths = DefaultConformanceSuites();
  if (suite_paths.empty()) {
    return Fail(NotFound("no ONNX backend test data under /usr/share/libonnx-testdata (install libonnx-testdata)"));
  }
  std::vector<Target> targets;
  for (const std::string& text : SplitList(targets_text)) {
    auto target = ParseTarget(text);
    if (!target.ok()) return Fail(target.status());
    targets.push_back(*target);
  }
  if (targets.empty()) return Fail(InvalidArgument("--targets: no target given"));
  struct Counts {
    int pass = 0, fail = 0, unsupported = 0, kernels = 0, device_kernels = 0;
    int on_device = 0;  // passing cases that ran every kernel on the target's device
  };
  auto counts_json = [](const Counts& c) {
    return nlohmann::json{{"pass", c.pass},
                          {"fail", c.fail},
                          {"unsupported", c.unsupported},
                          {"kernels", c.kernels},
                          {"device_kernels", c.device_kernels},
                          {"cases_fully_on_device", c.on_device}};
  };
  nlohmann::json targets_json = nlohmann::json::array();
  bool any_failure = false;
  for (const Target& target : targets) {
    ConformanceOptions options;
    options.suites = suite_paths;
    options.target = target;
    options.filter = filter;
    SetConformanceTolerances(target, options);
    options.compile = [no_fallback](const Graph& graph, const Target& t, const std::map<std::string, Tensor>& sample) {
      Int8Options int8;
      int8.samples = {sample};
      return CompileForTarget(graph, t, {.allow_fallback = !no_fallback}, int8);
    };
    auto cases = RunConformance(options, [&](const ConformanceCase& c) {
      if (verbose && !json) {
        fmt::print("{:<12} {:<10} {}/{}  {}\n", OutcomeName(c.outcome), target.ToString(), c.suite, c.name, c.detail);
      }
    });
    if (!cases.ok()) return Fail(cases.status());
    std::map<std::string, Counts> by_suite, by_op;
    std::map<std::string, std::pair<int, std::string>> fallback_ops;  // op → (nodes, first reason)
    Counts total;
    nlohmann::json list = nlohmann::json::array();
    for (const ConformanceCase& c : *cases) {
      for (Counts* counts : {&total, &by_suite[c.suite], &by_op[c.ops]}) {
        (c.outcome == ConformanceCase::Outcome::kPass   ? counts->pass
         : c.outcome == ConformanceCase::Outcome::kFail ? counts->fail
                                                        : counts->unsupported)++;
        counts->kernels += c.kernels;
        counts->device_kernels += c.device_kernels;
        counts->on_device +=
            c.outcome == ConformanceCase::Outcome::kPass && c.kernels > 0 && c.device_kernels == c.kernels;
      }
      for (const Fallback& f : c.fallbacks) {
        auto& [count, reason] = fallback_ops[f.op];
        if (count++ == 0) reason = f.reason;
      }
      list.push_back({{"name", c.name},
                      {"suite", c.suite},
                      {"ops", c.ops},
                      {"outcome", OutcomeName(c.outcome)},
                      {"detail", c.detail},
                      {"max_abs_error", c.max_abs_error},
                      {"min_sqnr_db", c.min_sqnr_db},
                      {"kernels", c.kernels},
                      {"device_kernels", c.device_kernels},
                      {"data_sets", c.data_sets}});
    }
    any_failure |= total.fail > 0;
    if (json) {
      nlohmann::json suites_json = nlohmann::json::object(), ops_json = nlohmann::json::object();
      for (const auto& [name, c] : by_suite) suites_json[name] = counts_json(c);
      for (const auto& [name, c] : by_op) ops_json[name] = counts_json(c);
      nlohmann::json fallbacks_json = nlohmann::json::object();
      for (const auto& [op, f] : fallback_ops) fallbacks_json[op] = {{"nodes", f.first}, {"reason", f.second}};
      targets_json.push_back({{"target", target.ToString()},
                              {"total", counts_json(total)},
                              {"fallbacks", fallbacks_json},
                              {"suites", suites_json},
                              {"ops", ops_json},
                              {"cases", list}});
      continue;
    }
    // "on device": kernels the target's device ran (the rest fell back to the reference).
    fmt::print("{:<40} {:>6} {:>6} {:>12} {:>10}\n", "op(s) on " + target.ToString(), "pass", "fail", "unsupported",
               "on device");
    auto row = [](const std::string& name, const Counts& c) {
      fmt::print("{:<40} {:>6} {:>6} {:>12} {:>10}\n", name, c.pass, c.fail, c.unsupported,
                 fmt::format("{}/{}", c.device_kernels, c.kernels));
    };
    for (const auto& [name, c] : by_op) row(name, c);
    fmt::print("\n");
    for (const auto& [name, c] : by_suite) row("suite " + name, c);
    row("total (" + target.ToString() + ")", total);
    if (target.kind != DeviceKind::kReference) {
      fmt::print("{} of {} passing cases ran every kernel on {}\n", total.on_device, total.pass, target.DeviceId());
      for (const auto& [op, f] : fallback_ops) {
        fmt::print("fallback {} ({} nodes): {}\n", op, f.first, f.second.substr(0, 160));
      }
    }
    for (const ConformanceCase& c : *cases) {
      if (c.outcome == ConformanceCase::Outcome::kFail) fmt::print("FAIL {}/{}: {}\n", c.suite, c.name, c.detail);
    }
    fmt::print("\n");
  }
  if (json) {
    std::cout << nlohmann::json{{"schema", "chipfit.conformance/2"}, {"targets", targets_json}}.dump(2) << "\n";
  }
  return any_failure ? 1 : kExitOk;
}

// Ctrl-C during `profile`: the handler only sets a flag (all it may do); a watcher thread turns it
// into a stop request, which the executor checks between kernels.
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void OnInterrupt(int) { g_interrupted = 1; }

// Ctrl-C handling for the whole of a profile, from its first step: a SIGINT while the model loads or
// the ceilings are measured must still end in a stored, cancelled run and the JSON, not in a killed
// process (seen on a fresh machine, where measuring the ceilings first takes seconds).
class SigintScope {
 public:
  SigintScope() {
    g_interrupted = 0;
    std::signal(SIGINT, OnInterrupt);
  }
  ~SigintScope() { std::signal(SIGINT, SIG_DFL); }
  SigintScope(const SigintScope&) = delete;
  SigintScope& operator=(const SigintScope&) = delete;
};

#ifdef CHIPFIT_WITH_REPORTS
// HTML and PDF reports draw Qt charts, which need a QApplication. The CLI is headless: it makes one
// on the offscreen platform (no display is touched, whatever DISPLAY says) the first time a report
// needs it, and main() destroys it before returning.
std::unique_ptr<QApplication> g_qt_app;

// Qt's own messages on a headless run: its debug/info chatter and the missing XDG_RUNTIME_DIR (no
// desktop session, expected in CI and over ssh) are dropped; real warnings reach stderr, marked.
void QtMessages(QtMsgType type, const QMessageLogContext&, const QString& message) {
  if (type == QtDebugMsg || type == QtInfoMsg) return;
  if (message.startsWith(QStringLiteral("QStandardPaths: XDG_RUNTIME_DIR not set"))) return;
  fmt::print(stderr, "chipfit: Qt: {}\n", message.toStdString());
}

void EnsureQtApplication() {
  if (QCoreApplication::instance() != nullptr) return;
  qInstallMessageHandler(QtMessages);
  static int argc = 3;
  static char arg0[] = "chipfit", arg1[] = "-platform", arg2[] = "offscreen";
  static char* argv[] = {arg0, arg1, arg2, nullptr};
  g_qt_app = std::make_unique<QApplication>(argc, argv);
}
#endif

#ifndef CHIPFIT_WITH_REPORTS
Status JsonReportsOnly(const std::string& path) {
  return Unsupported("report '" + path +
                     "': this chipfit was built without Qt (CHIPFIT_BUILD_GUI=OFF), so it writes json reports "
                     "only; html, pdf and csv reports come with the Qt build");
}
#endif

// The report format `path` names, checked before any work is done (exit 2 at once, not after a
// profile). "-" (standard output) has no extension: it needs an explicit format.
Status CheckReportPath(const std::string& path) {
  if (path == "-") return InvalidArgument("-o - (standard output) needs --format");
#ifdef CHIPFIT_WITH_REPORTS
  return ReportFormatFromPath(path).status();
#else
  return std::filesystem::path(path).extension() == ".json" ? Status::Ok() : JsonReportsOnly(path);
#endif
}

// Writes the report of a run: in `format` ("html", "pdf", "json", "csv") or, when empty, the format
// `path`'s extension names (CheckReportPath first). "-" writes to standard output; a file's folder is
// created and the file replaced atomically.
Status WriteRunReport(const nlohmann::json& run, const std::string& path, const std::string& format = {}) {
  const std::filesystem::path out(path);
  std::error_code ec;
  if (path != "-" && out.has_parent_path()) std::filesystem::create_directories(out.parent_path(), ec);
#ifdef CHIPFIT_WITH_REPORTS
  auto parsed = format.empty() ? ReportFormatFromPath(out) : ParseReportFormat(format);
  if (!parsed.ok()) return parsed.status();
  if (*parsed == ReportFormat::kHtml || *parsed == ReportFormat::kPdf) EnsureQtApplication();
  if (path != "-") return WriteReport(run, *parsed, out);
  Result<std::string> bytes = RenderReport(run, *parsed);
  if (!bytes.ok()) return bytes.status();
  std::fwrite(bytes->data(), 1, bytes->size(), stdout);
  return std::fflush(stdout) == 0 ? Status::Ok() : IoError("cannot write the report to standard output");
#else
  if (format.empty() ? out.extension() != ".json" : format != "json") return JsonReportsOnly(path);
  if (path == "-") {
    std::cout << run.dump(2) << "\n";
    return std::cout ? Status::Ok() : IoError("cannot write the report to standard output");
  }
  std::ofstream file(out);
  file << run.dump(2) << "\n";
  return file ? Status() : IoError("cannot write report '" + path + "'");
#endif
}

struct ProfileFlags {
  std::string targets;
  bool all_targets = false;
  int iterations = 50;
  int warmup = 10;
  double min_time = 1.0;
  std::string json_file;
  std::string trace_file;
  std::string report_file;
  std::string data_dir;
  std::string reference = "ref:fp32";
  std::string classifier_output;
  int drift_samples = 4;
  bool quiet = false;
  bool measure_ceilings = true;
  uint64_t seed = 1;
  std::string db;  // empty: RunStore::DefaultPath()
  bool no_store = false;
  LimitFlags limits;
};

// The machine a profile was measured on: host, OS, and every device as `chipfit devices --json`.
nlohmann::json MachineJson(const DiscoveryReport& discovery) {
  nlohmann::json machine = DiscoveryToJson(discovery);
  utsname name{};
  if (uname(&name) == 0) {
    machine["hostname"] = name.nodename;
    machine["os"] = std::string(name.sysname) + " " + name.release;
    machine["arch"] = name.machine;
  }
  return machine;
}

// `result` (optional) receives the run's JSON, as --json writes it.
int RunProfile(const std::string& path, const std::vector<std::string>& shapes, const ProfileFlags& flags,
               nlohmann::json* result = nullptr) {
  if (flags.targets.empty() == !flags.all_targets) {
    return Fail(InvalidArgument("profile: give --targets T1,T2,... or --all-targets"));
  }
  if (flags.iterations < 1 || flags.warmup < 0 || flags.min_time < 0) {
    return Fail(InvalidArgument("profile: --iterations must be ≥ 1, --warmup and --min-time ≥ 0"));
  }
  if (!flags.report_file.empty()) {
    if (Status s = CheckReportPath(flags.report_file); !s.ok())
      return Fail(Status(s.code(), "--report: " + s.message()));
  }
  const SigintScope sigint;
  // The watcher turns the handler's flag into a stop request; it ends (jthread) on every return.
  std::stop_source stop;
  std::jthread watcher([&](const std::stop_token& ended) {
    while (!ended.stop_requested()) {
      if (g_interrupted) stop.request_stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  auto options = LoadOptionsFor(shapes);
  if (!options.ok()) return Fail(options.status());
  auto model = LoadOnnxModel(path, *options);
  if (!model.ok()) return Fail(model.status());
  auto graph = ImportModel(*model);
  if (!graph.ok()) return Fail(graph.status());
  const DiscoveryReport discovery = DiscoverDevices();
  std::vector<Target> targets;
  if (flags.all_targets) {
    for (const auto& device : discovery.devices) {
      for (const PrecisionSupport& p : device->info().precisions) {
        if (p.support.ok) targets.push_back({device->info().kind, device->info().index, p.precision});
      }
    }
  } else {
    for (const std::string& text : SplitList(flags.targets)) {
      auto target = ParseTarget(text);
      if (!target.ok()) return Fail(target.status());
      targets.push_back(*target);
    }
  }
  auto device_name = [&](const Target& t) -> std::string {
    for (const auto& d : discovery.devices) {
      if (d->info().kind == t.kind && d->info().index == t.index) return d->info().name;
    }
    return t.kind == DeviceKind::kReference ? "reference kernels" : "";
  };
  // Inputs: the user's --data (the first sample is timed; int8 targets calibrate on all of them), or
  // seeded random ones, said in the JSON and in every int8 target's notes.
  std::vector<std::map<std::string, Tensor>> samples;
  if (!flags.data_dir.empty()) {
    auto loaded = LoadCalibrationData(flags.data_dir, graph->inputs);
    if (!loaded.ok()) return Fail(loaded.status());
    samples = std::move(loaded).value();
  }
  std::map<std::string, Tensor> inputs;
  if (!samples.empty()) {
    inputs = samples.front();
  } else {
    for (const ValueDesc& desc : graph->inputs) inputs[desc.name] = SeededInput(desc, flags.seed);
  }

  // Drift: every target against the reference on the same inputs (the user's, else seeded random).
  auto reference_target = ParseTarget(flags.reference);
  if (!reference_target.ok()) return Fail(reference_target.status());
  if (flags.drift_samples < 1) return Fail(InvalidArgument("--drift-samples must be at least 1"));
  std::vector<std::map<std::string, Tensor>> drift_samples = samples;
  if (drift_samples.empty()) {
    for (int i = 0; i < flags.drift_samples; ++i) {
      std::map<std::string, Tensor> sample;
      for (const ValueDesc& desc : graph->inputs) sample[desc.name] = SeededInput(desc, flags.seed + i);
      drift_samples.push_back(std::move(sample));
    }
  }
  auto reference_model = CompileForTarget(*graph, *reference_target);
  if (!reference_model.ok()) {
    return Fail(Status(reference_model.status().code(),
                       "--reference " + flags.reference + ": " + reference_model.status().message()));
  }

  // Roofline ceilings: cached by `chipfit devices --measure`; a device profiled here without them is
  // measured once now (and cached), so every layer gets its bound.
  const auto ceiling_cache_path = DefaultCeilingCachePath();
  auto ceiling_cache = LoadCeilingCache(ceiling_cache_path);
  if (!ceiling_cache.ok()) return Fail(ceiling_cache.status());
  std::map<std::string, DeviceCeilings> ceilings;
  std::vector<CeilingReport> ceilings_used;
  for (const auto& device : discovery.devices) {
    const DeviceInfo& info = device->info();
    const bool profiled = std::any_of(targets.begin(), targets.end(),
                                      [&](const Target& t) { return t.kind == info.kind && t.index == info.index; }) ||
                          (info.kind == DeviceKind::kCpu && reference_target->kind == DeviceKind::kCpu);
    if (!profiled) continue;
    auto entry = ceiling_cache->find(CeilingKey(info));
    if (entry == ceiling_cache->end() && flags.measure_ceilings) {
      if (!flags.quiet) {
        fmt::print(stderr, "measuring the roofline ceilings of {} once (cached in {}) ...\n", info.Id(),
                   ceiling_cache_path.string());
      }
      auto measured = MeasureCeilings(info, CeilingCompiler(), {.stop = stop.get_token()});
      if (!measured.ok() && measured.status().code() == StatusCode::kCancelled) break;  // Ctrl-C: targets cancelled
      if (!measured.ok()) return Fail(measured.status());
      if (Status saved = SaveCeilingReport(ceiling_cache_path, *measured); !saved.ok()) return Fail(saved);
      entry = ceiling_cache->insert_or_assign(measured->device_key, *measured).first;
    }
    if (entry == ceiling_cache->end()) continue;
    ceilings[info.Id()] = entry->second.measured;
    ceilings_used.push_back(entry->second);
  }

  // Energy: a sensor when this machine has one (the first found: a package-level zone on RAPL
  // machines), the model's estimate always.
  std::vector<std::string> sensor_notes;
  auto sensors = DetectEnergySensors("/sys", &sensor_notes);
  auto energy_model = LoadEnergyModel(DefaultEnergyTablePath());
  if (!energy_model.ok()) return Fail(energy_model.status());

  // The run's JSON apart from its targets, known before the first target runs: stored now (the run
  // stays `incomplete` until it finishes), each target added as it finishes.
  std::map<std::string, std::string> node_ops;
  for (const Node& node : graph->nodes) node_ops[node.name] = node.op_type;
  nlohmann::json ceilings_json = nlohmann::json::array();
  for (const CeilingReport& c : ceilings_used) ceilings_json.push_back(CeilingReportToJson(c));
  nlohmann::json model_json = SummaryToJson(Summarize(*model));
  model_json["flops"] = (*reference_model)->stats().flops;
  const std::string version = std::string(CHIPFIT_VERSION) + " (" + CHIPFIT_GIT_REVISION + ")";
  const nlohmann::json machine_json = MachineJson(discovery);
  const nlohmann::json run_json = {
      {"inputs", samples.empty() ? nlohmann::json{{"source", "seeded random"}, {"seed", flags.seed}}
                                 : nlohmann::json{{"source", "data " + flags.data_dir}, {"samples", samples.size()}}},
      {"settings",
       {{"warmup", flags.warmup},
        {"iterations", flags.iterations},
        {"min_time_s", flags.min_time},
        {"reference", flags.reference},
        {"targets", flags.all_targets ? "all" : flags.targets}}},
      {"energy_sensors", EnergySensorsJson(sensors, sensor_notes)},
      {"ceilings", ceilings_json}};
  std::unique_ptr<RunStore> store;
  std::optional<int64_t> run_id;
  if (!flags.no_store) {
    auto opened = RunStore::Open(flags.db.empty() ? RunStore::DefaultPath() : std::filesystem::path(flags.db));
    if (!opened.ok()) return Fail(opened.status());
    store = std::move(opened).value();
    auto begun = store->BeginRun(model_json, machine_json, run_json, g_command_line, version);
    if (!begun.ok()) return Fail(begun.status());
    run_id = *begun;
  }

  const bool tty = !flags.quiet && isatty(fileno(stderr));
  ProfileSettings settings{
      .warmup = flags.warmup, .iterations = flags.iterations, .min_time_s = flags.min_time, .ceilings = ceilings};
  std::vector<TargetProfile> results;
  for (const Target& target : targets) {
    TargetProfile result;
    result.target = target;
    result.device_name = device_name(target);
    if (stop.stop_requested()) {
      result.status = "cancelled";
      result.error = "stopped (Ctrl-C) before this target";
      results.push_back(std::move(result));
      continue;
    }
    // On a TTY one line redrawn at most every 50 ms: [target i/n], target, phase, run and layer;
    // otherwise a plain line per phase.
    std::string last_phase;
    auto last_draw = std::chrono::steady_clock::time_point{};
    const std::string counter = fmt::format("[{}/{}]", results.size() + 1, targets.size());
    const ProgressFn progress = [&](const std::string& phase, const std::string& detail) {
      const auto now = std::chrono::steady_clock::now();
      if (tty && (phase != last_phase || now - last_draw > std::chrono::milliseconds(50))) {
        fmt::print(stderr, "\r\033[K{} {:<16} {:<11} {}", counter, target.ToString(), phase, detail.substr(0, 56));
        last_draw = now;
      } else if (!tty && !flags.quiet && phase != last_phase) {
        fmt::print(stderr, "{} {}: {}\n", counter, target.ToString(), phase);
      }
      last_phase = phase;
    };
    progress("compile", "");
    const auto t0 = std::chrono::steady_clock::now();
    settings.heap_baseline_bytes = HeapInUseBytes();
    Int8Options int8;
    int8.samples = samples;
    QuantReport quant;
    auto compiled = CompileForTarget(*graph, target, {}, int8, &quant);
    if (compiled.ok() && target.precision == Precision::kInt8) result.notes.push_back(DescribeQuantReport(quant));
    result.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    Status status = compiled.ok()
                        ? RunProfilePipeline(**compiled, inputs, settings, {}, result, stop.get_token(), progress)
                        : compiled.status();
    if (status.ok()) {
      std::optional<EnergyMeasurement> measured;
      if (!sensors.empty()) {
        progress("energy", sensors.front()->name());
        auto m = MeasureEnergy(*sensors.front(),
                               [&] { return (*compiled)->Run(inputs, nullptr, stop.get_token()).status(); });
        if (m.ok()) {
          measured = *m;
        } else if (m.status().code() == StatusCode::kCancelled) {
          status = m.status();
        } else {
          result.notes.push_back("energy: measuring with " + sensors.front()->name() +
                                 " failed: " + m.status().message());
        }
      }
      if (status.ok()) AttributeTargetEnergy(*energy_model, measured, result);
    }
    if (status.ok()) {
      progress("drift", "vs " + flags.reference);
      DriftOptions drift_options{
          .classifier_output = flags.classifier_output, .random_inputs = samples.empty(), .stop = stop.get_token()};
      auto drift = MeasureDrift(**compiled, **reference_model, drift_samples, drift_options);
      if (drift.ok()) {
        result.accuracy = drift->summary;
        for (size_t i = 0; i < result.layers.size() && i < drift->kernels.size(); ++i) {
          result.layers[i].drift = drift->kernels[i];
        }
      } else {
        status = drift.status();
      }
    }
    if (tty) fmt::print(stderr, "\r\033[K");
    if (!status.ok()) {
      result.status = status.code() == StatusCode::kCancelled     ? "cancelled"
                      : status.code() == StatusCode::kUnsupported ? "unsupported"
                                                                  : "failed";
      result.error = status.message();
      result.layers.clear();
    }
    if (store) {
      if (Status stored = store->AddTarget(*run_id, TargetProfileToJson(result, node_ops)); !stored.ok()) {
        return Fail(stored);
      }
    }
    results.push_back(std::move(result));
  }
  watcher.request_stop();
  watcher.join();

  const std::string run_status = stop.stop_requested() ? "cancelled" : "ok";
  nlohmann::json targets_json = nlohmann::json::array();
  for (const TargetProfile& r : results) targets_json.push_back(TargetProfileToJson(r, node_ops));
  auto recommendation = RecommendFromFlags({{"targets", targets_json}}, flags.limits);
  if (!recommendation.ok()) return Fail(recommendation.status());
  if (store) {
    if (Status finished = store->FinishRun(*run_id, run_status, {{"recommendation", *recommendation}});
        !finished.ok()) {
      return Fail(finished);
    }
  }
  nlohmann::json out = {{"schema", "chipfit.profile/1"},
                        {"chipfit_version", version},
                        {"run_id", run_id ? nlohmann::json(*run_id) : nlohmann::json(nullptr)},
                        {"status", run_status},
                        {"command", g_command_line},
                        {"model", model_json},
                        {"machine", machine_json}};
  for (const auto& [key, value] : run_json.items()) out[key] = value;
  out["targets"] = targets_json;
  out["recommendation"] = *recommendation;
  if (result != nullptr) *result = out;
  if (!flags.json_file.empty()) {
    std::ofstream file(flags.json_file);
    file << out.dump(2) << "\n";
    if (!file) return Fail(IoError("cannot write " + flags.json_file));
  }
  if (!flags.trace_file.empty()) {
    std::ofstream file(flags.trace_file);
    file << ChromeTrace(results).dump() << "\n";
    if (!file) return Fail(IoError("cannot write " + flags.trace_file));
  }
  if (!flags.report_file.empty()) {
    if (Status written = WriteRunReport(out, flags.report_file); !written.ok()) {
      return Fail(Status(written.code(), written.message() + (run_id ? fmt::format(" (the run is stored as run {}: "
                                                                                   "chipfit report {} -o FILE)",
                                                                                   *run_id, *run_id)
                                                                     : std::string())));
    }
  }
  if (!flags.quiet) {
    // The baseline for speed-ups: the CPU's fp32 target when it ran, else the first that did.
    const TargetProfile* base = nullptr;
    for (const TargetProfile& r : results) {
      if (r.status == "ok" && (base == nullptr || r.target.ToString() == "cpu:fp32")) base = &r;
    }
    fmt::print("{:<16} {:<11} {:>9} {:>9} {:>7} {:>9}  {}\n", "target", "status", "p50 ms", "p99 ms", "CoV", "speed-up",
               "notes");
    for (const TargetProfile& r : results) {
      if (r.status != "ok") {
        fmt::print("{:<16} {:<11} {}\n", r.target.ToString(), r.status, r.error.substr(0, 100));
        continue;
      }
      std::string drift;
      if (r.accuracy) {
        drift = fmt::format(", SQNR {:.1f} dB", r.accuracy->output_sqnr_db);
        if (r.accuracy->top1_agreement) drift += fmt::format(", top-1 {:.1f} %", *r.accuracy->top1_agreement * 100);
        if (!r.accuracy->first_layer_below_threshold.empty()) {
          drift += ", below 30 dB from " + r.accuracy->first_layer_below_threshold;
        }
      }
      std::string energy;
      if (r.energy) energy = fmt::format(", {:.3g} mJ {}", r.energy->joules * 1e3, r.energy->source);
      fmt::print(
          "{:<16} {:<11} {:>9.3f} {:>9.3f} {:>6.1f}% {:>8.2f}x  {} layers, {} fallbacks, overhead {:.2f}{}{}{}\n",
          r.target.ToString(), r.status, r.latency.p50, r.latency.p99, r.latency.cov * 100,
          base->latency.p50 / r.latency.p50, r.layers.size(), r.fallbacks.size(), r.instrumentation_overhead, drift,
          energy, r.latency.noisy ? ", noisy" : "");
    }
    for (const TargetProfile& r : results) {
      if (r.status != "ok") continue;
      std::vector<const LayerProfile*> top;
      for (const LayerProfile& l : r.layers) top.push_back(&l);
      std::sort(top.begin(), top.end(),
                [](const LayerProfile* a, const LayerProfile* b) { return a->time_p50_ms > b->time_p50_ms; });
      int memory_bound = 0, compute_bound = 0;
      for (const LayerProfile& l : r.layers) {
        memory_bound += l.bound == "memory" ? 1 : 0;
        compute_bound += l.bound == "compute" ? 1 : 0;
      }
      fmt::print("\n{}: peak memory {} planned, {}; roofline: {}\n", r.target.ToString(),
                 HumanBytes(r.peak_memory_bytes),
                 r.measured_peak_memory_bytes ? HumanBytes(*r.measured_peak_memory_bytes) + " heap high-water mark"
                                              : std::string("heap high-water mark not measurable here"),
                 r.ceilings ? fmt::format("{} layers memory-bound, {} compute-bound", memory_bound, compute_bound)
                            : std::string("no measured ceilings (chipfit devices --measure)"));
      fmt::print("top layers on {} (p50, device time):\n", r.target.ToString());
      for (size_t i = 0; i < top.size() && i < 5; ++i) {
        fmt::print("  {:<32} {:<12} {:>9.3f} ms  {:>5.1f}%  {:>7.2f} GFLOP/s  {:>6.2f} GB/s  {}\n",
                   top[i]->name.substr(0, 32), top[i]->op.substr(0, 12), top[i]->time_p50_ms,
                   100 * top[i]->time_p50_ms / r.latency.p50, top[i]->gflops_per_s, top[i]->gb_per_s,
                   top[i]->bound.empty() ? "" : top[i]->bound + "-bound");
      }
    }
  }
  if (!flags.quiet) PrintRecommendation(*recommendation);
  if (store && !flags.quiet) {
    fmt::print("\nstored as run {} ({}) in {}\n", *run_id, run_status, store->path().string());
  }
  if (!flags.report_file.empty() && !flags.quiet) fmt::print("report written to {}\n", flags.report_file);
  if (stop.stop_requested()) return 130;  // 128 + SIGINT, as shells report an interrupted command
  // Limits given and no target meets them: exit 1, so the command can gate a pipeline.
  if ((*recommendation)["best"].is_null() && RecommendFromFlagsHadLimits(flags.limits)) return 1;
  return kExitOk;
}

Result<std::unique_ptr<RunStore>> OpenStore(const std::string& db) {
  const std::filesystem::path path = db.empty() ? RunStore::DefaultPath() : std::filesystem::path(db);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return NotFound("no run store at '" + path.string() + "' (profile a model first, or give --db FILE)");
  }
  return RunStore::Open(path);
}

// chipfit history: the stored runs, newest first; --model limits them to that model's sha256.
int RunHistory(const std::string& model_file, const std::string& db, bool json) {
  std::optional<std::string> sha256;
  if (!model_file.empty()) {
    auto hash = Sha256File(model_file);
    if (!hash.ok()) return Fail(hash.status());
    sha256 = *hash;
  }
  auto store = OpenStore(db);
  if (!store.ok()) return Fail(store.status());
  auto runs = (*store)->ListRuns(sha256);
  if (!runs.ok()) return Fail(runs.status());
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const RunSummary& r : *runs) {
      list.push_back({{"run_id", r.id},
                      {"status", r.status},
                      {"started_at", r.started_at},
                      {"finished_at", r.finished_at.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.finished_at)},
                      {"model", {{"path", r.model_path}, {"sha256", r.model_sha256}}},
                      {"hostname", r.hostname},
                      {"chipfit_version", r.chipfit_version},
                      {"command", r.command},
                      {"targets", r.targets},
                      {"targets_ok", r.targets_ok}});
    }
    std::cout << nlohmann::json{{"db", (*store)->path().string()}, {"runs", list}}.dump(2) << "\n";
    return kExitOk;
  }
  fmt::print("{:>5}  {:<10}  {:<20}  {:>7}  {:<14}  {}\n", "run", "status", "started (UTC)", "targets", "model sha256",
             "model");
  for (const RunSummary& r : *runs) {
    fmt::print("{:>5}  {:<10}  {:<20}  {:>3}/{:<3}  {:<14}  {}\n", r.id, r.status, r.started_at, r.targets_ok,
               r.targets, r.model_sha256.substr(0, 12) + "..", r.model_path);
  }
  if (runs->empty()) fmt::print("(no runs{})\n", sha256 ? " of this model" : "");
  return kExitOk;
}

// chipfit batch MANIFEST.yaml: models × targets × limits, every run stored, reports written, a final
// table; exit 1 when a model breaks its limits or regresses against its baseline (a CI gate).
struct BatchModel {
  std::filesystem::path path;
  std::vector<std::string> shapes;  // NAME=DxD…
  std::string data;
  int line = 0;
};

struct BatchManifest {
  std::vector<BatchModel> models;
  std::string targets;  // "T1,T2" or empty for all
  bool all_targets = false;
  LimitFlags limits;
  std::optional<int64_t> baseline_run;
  bool baseline_latest = false;
  std::string report;  // pattern with {model}
  int iterations = 50, warmup = 10;
  double min_time = 1.0;
};

Result<BatchManifest> ReadManifest(const std::filesystem::path& path) {
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  auto where = [&](const YAML::Node& n) { return path.string() + ":" + std::to_string(n.Mark().line + 1); };
  auto bad = [&](const YAML::Node& n, const std::string& what) { return ParseError(where(n) + ": " + what); };
  BatchManifest m;
  YAML::Node root;
  try {
    root = YAML::LoadFile(path.string());
  } catch (const YAML::BadFile&) {
    return NotFound("cannot read the batch manifest '" + path.string() + "'");
  } catch (const YAML::Exception& e) {
    return ParseError("batch manifest '" + path.string() + "': " + e.what());
  }
  if (!root.IsMap())
    return ParseError("batch manifest '" + path.string() + "': expected a mapping (models:, targets: …)");
  try {
    for (const auto& kv : root) {
      const auto key = kv.first.as<std::string>();
      const YAML::Node& v = kv.second;
      if (key == "models") {
        if (!v.IsSequence() || v.size() == 0) return bad(kv.first, "models: needs a list of models");
        for (const YAML::Node& entry : v) {
          if (!entry.IsMap()) return bad(entry, "a model entry needs path: (and optionally shapes:, data:)");
          BatchModel bm;
          bm.line = entry.Mark().line + 1;
          for (const auto& f : entry) {
            const auto field = f.first.as<std::string>();
            if (field == "path") {
              bm.path = (dir / f.second.as<std::string>()).lexically_normal();
              std::error_code ec;
              if (!std::filesystem::is_regular_file(bm.path, ec)) {
                return bad(f.second, "model '" + bm.path.string() + "' does not exist");
              }
            } else if (field == "shapes") {
              if (!f.second.IsMap()) return bad(f.second, "shapes: needs NAME: 1x3x224x224 pairs");
              for (const auto& s : f.second)
                bm.shapes.push_back(s.first.as<std::string>() + "=" + s.second.as<std::string>());
            } else if (field == "data") {
              bm.data = (dir / f.second.as<std::string>()).string();
            } else {
              return bad(f.first, "unknown model key '" + field + "' (path, shapes, data)");
            }
          }
          if (bm.path.empty()) return bad(entry, "a model entry needs path:");
          m.models.push_back(std::move(bm));
        }
      } else if (key == "targets") {
        if (v.IsScalar() && v.as<std::string>() == "all") {
          m.all_targets = true;
        } else if (v.IsSequence()) {
          for (const YAML::Node& t : v) {
            const auto text = t.as<std::string>();
            if (auto parsed = ParseTarget(text); !parsed.ok()) return bad(t, parsed.status().message());
            m.targets += (m.targets.empty() ? "" : ",") + text;
          }
        } else {
          return bad(v, "targets: needs a list of targets or 'all'");
        }
      } else if (key == "limits") {
        if (!v.IsMap()) return bad(v, "limits: needs a mapping");
        for (const auto& l : v) {
          const auto name = l.first.as<std::string>();
          if (name == "latency_stat") {
            m.limits.latency_stat = l.second.as<std::string>();
            continue;
          }
          const double value = l.second.as<double>();
          if (name == "max_latency_ms")
            m.limits.max_latency_ms = value;
          else if (name == "min_top1")
            m.limits.min_top1 = value;
          else if (name == "min_sqnr_db")
            m.limits.min_sqnr_db = value;
          else if (name == "max_memory_mb")
            m.limits.max_memory_mb = value;
          else if (name == "max_energy_mj")
            m.limits.max_energy_mj = value;
          else
            return bad(l.first, "unknown limit '" + name +
                                    "' (max_latency_ms, latency_stat, min_top1, min_sqnr_db, "
                                    "max_memory_mb, max_energy_mj)");
        }
      } else if (key == "objective") {
        m.limits.objective = v.as<std::string>();
        if (auto o = ParseObjective(m.limits.objective); !o.ok()) return bad(v, o.status().message());
      } else if (key == "weights") {
        m.limits.weights = v.as<std::string>();
        if (auto w = ParseWeights(m.limits.weights); !w.ok()) return bad(v, w.status().message());
      } else if (key == "costs") {
        m.limits.costs = (dir / v.as<std::string>()).string();
      } else if (key == "baseline") {
        const auto text = v.as<std::string>();
        if (text == "latest") {
          m.baseline_latest = true;
        } else {
          char* end = nullptr;
          const long long id = std::strtoll(text.c_str(), &end, 10);
          if (end == text.c_str() || *end != '\0' || id < 1) return bad(v, "baseline: needs 'latest' or a run id");
          m.baseline_run = id;
        }
      } else if (key == "report") {
        m.report = (dir / v.as<std::string>()).string();
      } else if (key == "iterations") {
        m.iterations = v.as<int>();
      } else if (key == "warmup") {
        m.warmup = v.as<int>();
      } else if (key == "min_time") {
        m.min_time = v.as<double>();
      } else {
        return bad(kv.first, "unknown key '" + key +
                                 "' (models, targets, limits, objective, weights, costs, baseline, report, iterations, "
                                 "warmup, min_time)");
      }
    }
  } catch (const YAML::Exception& e) {
    return ParseError("batch manifest '" + path.string() + "' line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (m.models.empty()) return ParseError("batch manifest '" + path.string() + "': no models: list");
  if (m.targets.empty() && !m.all_targets) return ParseError("batch manifest '" + path.string() + "': no targets:");
  return m;
}

int RunBatch(const std::string& manifest_path, const std::string& db, const std::string& shard,
             const std::string& out_dir, bool quiet) {
  auto manifest = ReadManifest(manifest_path);
  if (!manifest.ok()) return Fail(manifest.status());
  if (!out_dir.empty() && !manifest->report.empty()) {
    // Reports under --out instead of beside the manifest.
    manifest->report = (std::filesystem::path(out_dir) /
                        std::filesystem::path(manifest->report)
                            .lexically_relative(std::filesystem::path(manifest_path).has_parent_path()
                                                    ? std::filesystem::path(manifest_path).parent_path()
                                                    : std::filesystem::path(".")))
                           .string();
  }
  int shard_index = 1, shard_count = 1;
  if (!shard.empty()) {
    const auto slash = shard.find('/');
    shard_index = slash == std::string::npos ? 0 : std::atoi(shard.substr(0, slash).c_str());
    shard_count = slash == std::string::npos ? 0 : std::atoi(shard.substr(slash + 1).c_str());
    if (shard_count < 1 || shard_index < 1 || shard_index > shard_count) {
      return Fail(InvalidArgument("--shard '" + shard + "': needs I/N with 1 ≤ I ≤ N"));
    }
  }
  const std::string db_path = db.empty() ? RunStore::DefaultPath().string() : db;
  struct Row {
    std::string model, best, verdict, report;
    double p50 = 0;
    int regressions = 0;
    int exit_code = 0;
  };
  std::vector<Row> rows;
  int exit_code = kExitOk;
  for (size_t i = 0; i < manifest->models.size(); ++i) {
    if (static_cast<int>(i % static_cast<size_t>(shard_count)) != shard_index - 1) continue;
    const BatchModel& bm = manifest->models[i];
    Row row;
    row.model = bm.path.string();
    // The baseline, chosen before this run is stored: the latest finished run of this model.
    std::optional<int64_t> baseline = manifest->baseline_run;
    if (manifest->baseline_latest) {
      auto sha = Sha256File(bm.path);
      auto store = RunStore::Open(db_path);
      if (!sha.ok() || !store.ok()) return Fail(!sha.ok() ? sha.status() : store.status());
      auto runs = (*store)->ListRuns(*sha);
      if (!runs.ok()) return Fail(runs.status());
      for (const RunSummary& r : *runs) {
        if (r.status == "ok") {
          baseline = r.id;
          break;
        }
      }
    }
    ProfileFlags flags;
    flags.targets = manifest->targets;
    flags.all_targets = manifest->all_targets;
    flags.iterations = manifest->iterations;
    flags.warmup = manifest->warmup;
    flags.min_time = manifest->min_time;
    flags.data_dir = bm.data;
    flags.quiet = quiet;
    flags.db = db_path;
    flags.limits = manifest->limits;
    if (!quiet) fmt::print("\n== {} ({}/{})\n", bm.path.string(), i + 1, manifest->models.size());
    nlohmann::json run;
    row.exit_code = RunProfile(bm.path.string(), bm.shapes, flags, &run);
    if (row.exit_code == 130) return 130;
    if (row.exit_code == kExitInputError || run.is_null()) {
      row.verdict = "error (see above)";
      rows.push_back(row);
      exit_code = kExitInputError;
      continue;
    }
    const nlohmann::json& rec = run["recommendation"];
    row.best = rec["best"].is_string() ? rec["best"].get<std::string>() : "-";
    for (const auto& s : rec["scores"]) {
      if (s["target"] == rec["best"]) row.p50 = s["p50_ms"].get<double>();
    }
    row.verdict = row.exit_code == 1 ? "limits broken" : "ok";
    if (baseline) {
      auto store = RunStore::Open(db_path);
      if (!store.ok()) return Fail(store.status());
      auto a = (*store)->LoadRun(*baseline);
      if (!a.ok()) return Fail(a.status());
      const nlohmann::json diff = DiffRuns(*a, run);
      row.regressions = diff["regressions"].get<int>();
      row.verdict += fmt::format(", {} regression(s) vs run {}", row.regressions, *baseline);
    }
    if (!manifest->report.empty()) {
      std::string out = manifest->report;
      const std::string stem = bm.path.stem().string();
      for (size_t at = out.find("{model}"); at != std::string::npos; at = out.find("{model}", at + stem.size())) {
        out.replace(at, 7, stem);
      }
      if (Status written = WriteRunReport(run, out); !written.ok()) return Fail(written);
      row.report = out;
    }
    if (row.exit_code == 1 || row.regressions > 0) exit_code = std::max(exit_code, 1);
    rows.push_back(row);
  }
  fmt::print("\n{:<40} {:<16} {:>9}  {:<40} {}\n", "model", "best target", "p50 ms", "verdict", "report");
  for (const Row& r : rows) {
    fmt::print("{:<40} {:<16} {:>9.3f}  {:<40} {}\n", r.model, r.best, r.p50, r.verdict, r.report);
  }
  fmt::print("{} model(s) of {} in this shard ({}/{}); stored in {}\n", rows.size(), manifest->models.size(),
             shard_index, shard_count, db_path);
  return exit_code;
}

// chipfit merge OTHER.db: the runs of a shard's store that this store lacks.
int RunMerge(const std::string& other, const std::string& db) {
  auto from = OpenStore(other);
  if (!from.ok()) return Fail(from.status());
  auto into = RunStore::Open(db.empty() ? RunStore::DefaultPath() : std::filesystem::path(db));
  if (!into.ok()) return Fail(into.status());
  auto stats = (*into)->MergeFrom(**from);
  if (!stats.ok()) return Fail(stats.status());
  fmt::print("merged {} run(s) from {} into {} ({} already there)\n", stats->merged, other, (*into)->path().string(),
             stats->skipped);
  return kExitOk;
}

// A stored run (RUN_ID) or a profile JSON written by `profile --json` (--in FILE).
Result<nlohmann::json> LoadRunOrProfile(const std::optional<int64_t>& run_id, const std::string& json_in,
                                        const std::string& db) {
  if (run_id) {
    auto store = OpenStore(db);
    if (!store.ok()) return store.status();
    return (*store)->LoadRun(*run_id);
  }
  std::ifstream in(json_in);
  if (!in) return NotFound("cannot read '" + json_in + "'");
  nlohmann::json run = nlohmann::json::parse(in, nullptr, false);
  if (run.is_discarded() || !run.is_object() || !run.contains("targets")) {
    return ParseError("'" + json_in + "' is not a chipfit profile JSON (schema chipfit.profile/1)");
  }
  return run;
}

// chipfit recommend RUN_ID | --in FILE: the recommendation for a stored run or a profile JSON.
int RunRecommend(const std::optional<int64_t>& run_id, const std::string& json_in, const std::string& db,
                 const LimitFlags& limits, const std::string& json_out) {
  if (run_id.has_value() == !json_in.empty()) return Fail(InvalidArgument("recommend: give RUN_ID or --in FILE"));
  auto run = LoadRunOrProfile(run_id, json_in, db);
  if (!run.ok()) return Fail(run.status());
  auto r = RecommendFromFlags(*run, limits);
  if (!r.ok()) return Fail(r.status());
  if (!json_out.empty()) {
    std::ofstream file(json_out);
    file << r->dump(2) << "\n";
    if (!file) return Fail(IoError("cannot write " + json_out));
  }
  PrintRecommendation(*r);
  return (*r)["best"].is_null() && RecommendFromFlagsHadLimits(limits) ? 1 : kExitOk;
}

// chipfit report RUN_ID | --in FILE: a stored run (or a profile JSON) as HTML, PDF, CSV or JSON.
int RunReportCommand(const std::optional<int64_t>& run_id, const std::string& json_in, const std::string& db,
                     const std::string& format, const std::string& out) {
  if (run_id.has_value() == !json_in.empty()) return Fail(InvalidArgument("report: give RUN_ID or --in FILE"));
  if (format.empty()) {
    if (Status s = CheckReportPath(out); !s.ok()) return Fail(Status(s.code(), s.message() + "; or give --format"));
  }
  auto run = LoadRunOrProfile(run_id, json_in, db);
  if (!run.ok()) return Fail(run.status());
  if (Status written = WriteRunReport(*run, out, format); !written.ok()) {
    return Fail(Status(written.code(),
                       (run_id ? fmt::format("run {}: ", *run_id) : "'" + json_in + "': ") + written.message()));
  }
  if (out != "-") fmt::print("wrote {}\n", out);
  return kExitOk;
}

// chipfit diff A B: per target and layer, B against A; exit 1 when B regressed beyond the noise.
int RunDiff(int64_t run_a, int64_t run_b, const std::string& db, bool json) {
  auto store = OpenStore(db);
  if (!store.ok()) return Fail(store.status());
  auto a = (*store)->LoadRun(run_a);
  if (!a.ok()) return Fail(a.status());
  auto b = (*store)->LoadRun(run_b);
  if (!b.ok()) return Fail(b.status());
  const nlohmann::json diff = DiffRuns(*a, *b);
  const int regressions = diff["regressions"].get<int>();
  if (json) {
    std::cout << diff.dump(2) << "\n";
    return regressions > 0 ? 1 : kExitOk;
  }
  auto str = [](const nlohmann::json& j, const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string("-");
  };
  fmt::print("A: run {} ({}, {})\nB: run {} ({}, {})\n", run_a, str(diff["a"], "status"), str(diff["a"], "started_at"),
             run_b, str(diff["b"], "status"), str(diff["b"], "started_at"));
  for (const auto& note : diff["notes"]) fmt::print("note: {}\n", note.get<std::string>());
  fmt::print("\n{:<16} {:>9} {:>9} {:>7} {:>10} {:>16}  {}\n", "target", "A p50 ms", "B p50 ms", "B/A", "noise ±",
             "SQNR A→B dB", "verdict");
  for (const auto& t : diff["targets"]) {
    const std::string name = t["target"];
    if (t.contains("change")) {
      fmt::print("{:<16} {}\n", name, t["change"].get<std::string>() == "added" ? "only in B" : "only in A");
      continue;
    }
    if (!t.contains("ratio")) {
      fmt::print("{:<16} A {} / B {}{}\n", name, str(t, "a_status"), str(t, "b_status"),
                 t.value("regression", false) ? "  REGRESSION (no longer runs)" : "");
      continue;
    }
    std::string sqnr = "-";
    if (t.contains("a_sqnr_db")) {
      sqnr = fmt::format("{:.1f}→{:.1f}", t["a_sqnr_db"].get<double>(), t["b_sqnr_db"].get<double>());
    }
    std::string verdict = t["regression"].get<bool>()   ? "REGRESSION"
                          : t.value("faster", false)    ? "faster"
                          : t.value("too_noisy", false) ? "too noisy to compare (re-run on a quieter machine)"
                                                        : "same";
    if (t["regression"].get<bool>()) {
      verdict += t.value("latency_regression", false) ? " (latency)" : "";
      verdict += t.value("drift_regression", false) ? " (drift)" : "";
    }
    fmt::print("{:<16} {:>9.3f} {:>9.3f} {:>6.2f}x {:>9.1f}% {:>16}  {}\n", name, t["a_p50_ms"].get<double>(),
               t["b_p50_ms"].get<double>(), t["ratio"].get<double>(), 100 * t["threshold"].get<double>(), sqnr,
               verdict);
    for (const auto& l : t["layers"]) {
      if (!l.value("regression", false)) continue;
      fmt::print("    slower layer {:<28} {:<10} {:>8.3f} → {:>8.3f} ms ({:.2f}x){}\n", l["name"].get<std::string>(),
                 l["op"].get<std::string>(), l["a_ms"].get<double>(), l["b_ms"].get<double>(), l.value("ratio", 0.0),
                 l.contains("sqnr_change_db") ? fmt::format(", SQNR {:+.1f} dB", l["sqnr_change_db"].get<double>())
                                              : std::string());
    }
  }
  fmt::print("\n{} regression(s) beyond noise\n", regressions);
  return regressions > 0 ? 1 : kExitOk;
}

int Main(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) g_command_line += (i ? " " : "") + std::string(argv[i]);
  CLI::App app{"chipfit: profile ONNX models on every device and precision of this machine, and pick a target."};
  app.name("chipfit");
  app.set_version_flag("--version", std::string("chipfit ") + CHIPFIT_VERSION + " (" + CHIPFIT_GIT_REVISION + ")");
  app.require_subcommand(1);

  bool json = false;
  auto* devices = app.add_subcommand("devices", "List the devices chipfit found and the targets each offers");
  devices->add_flag("--json", json, "Print JSON instead of text");
  bool measure = false;
  devices->add_flag("--measure", measure,
                    "Measure each device's roofline ceilings (memory bandwidth, peak FLOP/s per precision) and cache "
                    "them for every profile's roofline");

  std::string model_path;
  std::vector<std::string> shapes;
  auto* inspect = app.add_subcommand("inspect", "Summarise an ONNX model: inputs, outputs, ops, parameters, memory");
  inspect->add_option("MODEL", model_path, "Path to an .onnx file")->required();
  inspect->add_option("--shape", shapes, "Bind an input's dims: NAME=1x3x224x224 (repeatable)");
  inspect->add_flag("--json", json, "Print JSON instead of text");
  std::string inspect_target;
  QuantFlags quant_flags;
  inspect->add_option("--target", inspect_target,
                      "Show where every kernel runs on this target (device, implementation, precision, reasons)");
  AddQuantFlags(inspect, quant_flags);

  std::string target = "ref:fp32";
  std::vector<std::string> input_files;
  uint64_t seed = 0;
  std::string output_dir;
  auto* run = app.add_subcommand("run", "Run a model once and write every output as .npy");
  run->add_option("MODEL", model_path, "Path to an .onnx file")->required();
  run->add_option("--target", target, "Target: ref:fp32, cpu:fp32, ...")->capture_default_str();
  run->add_option("--shape", shapes, "Bind an input's dims: NAME=1x3x224x224 (repeatable)");
  run->add_option("--input", input_files, "An input from a .npy file: NAME=FILE.npy (repeatable)");
  run->add_option("--seed", seed, "Seed for inputs not given with --input (uniform [-1,1) floats)")
      ->capture_default_str();
  run->add_option("--output-dir", output_dir, "Folder for the outputs (<output name>.npy)")->required();
  AddQuantFlags(run, quant_flags);

  std::vector<std::string> suites;
  std::string filter;
  bool verbose = false;
  bool no_fallback = false;
  auto* conformance = app.add_subcommand("conformance", "Run the ONNX backend test suite; exit 1 on any failure");
  conformance->add_option("--suite", suites, "A folder of test_* cases (repeatable; default: libonnx-testdata)");
  conformance->add_option("--filter", filter, "Only cases whose name contains this text");
  conformance->add_option("--targets,--target", target, "Targets to check, comma-separated (ref, cpu:fp32, cpu:int8 …)")
      ->capture_default_str();
  conformance->add_flag("--json", json, "Print JSON instead of text");
  conformance->add_flag("-v,--verbose", verbose, "Print every case as it finishes");
  conformance->add_flag("--no-fallback", no_fallback,
                        "A node the target's device refuses makes the case unsupported instead of falling back");

  ProfileFlags profile_flags;
  auto* profile =
      app.add_subcommand("profile", "Profile a model on targets: latency per run and per layer (JSON with --json)");
  profile->add_option("MODEL", model_path, "Path to an .onnx file")->required();
  profile->add_option("--targets", profile_flags.targets, "Targets, comma-separated (cpu:fp32,opencl:0:fp16 …)");
  profile->add_flag("--all-targets", profile_flags.all_targets, "Every device × precision `chipfit devices` offers");
  profile->add_option("--shape", shapes, "Bind an input's dims: NAME=1x3x224x224 (repeatable)");
  profile->add_option("--iterations", profile_flags.iterations, "Timed end-to-end runs, at least")
      ->capture_default_str();
  profile->add_option("--warmup", profile_flags.warmup, "Warm-up runs, at least (and ≥ 0.2 s)")->capture_default_str();
  profile->add_option("--min-time", profile_flags.min_time, "Timed runs last at least this many seconds")
      ->capture_default_str();
  profile->add_option("--json", profile_flags.json_file, "Write the profile JSON (schema chipfit.profile/1) here");
  profile->add_option("--trace", profile_flags.trace_file,
                      "Write a Chrome trace / Perfetto JSON: a track per target, a slice per kernel");
  profile->add_option("--report", profile_flags.report_file,
                      "Write a report of the run; its extension picks the format (.html, .pdf, .csv, .json)");
  profile->add_option("--data", profile_flags.data_dir,
                      "Inputs: a folder of <input>.npy, or of sub-folders each holding a set (int8 calibrates on all)");
  profile->add_option("--reference", profile_flags.reference, "Drift reference target (ref:fp32 or cpu:fp32)")
      ->capture_default_str();
  profile->add_option("--classifier-output", profile_flags.classifier_output,
                      "Output holding class scores for top-1 agreement (default: rank-2 outputs with > 1 class)");
  profile->add_option("--drift-samples", profile_flags.drift_samples, "Seeded random inputs for drift without --data")
      ->capture_default_str();
  profile->add_option("--seed", profile_flags.seed, "Seed of the random inputs")->capture_default_str();
  profile->add_flag("--quiet", profile_flags.quiet, "No progress and no summary");
  profile->add_option("--db", profile_flags.db,
                      "Run store (SQLite) to record the run in (default: " + RunStore::DefaultPath().string() + ")");
  profile->add_flag("--no-store", profile_flags.no_store, "Do not record the run in the store");
  AddLimitFlags(profile, profile_flags.limits);

  std::string history_model, history_db;
  auto* history = app.add_subcommand("history", "List the runs in the store, newest first");
  history->add_option("--model", history_model, "Only runs of this model (matched by its sha256)");
  history->add_option("--db", history_db, "Run store (default: " + RunStore::DefaultPath().string() + ")");
  history->add_flag("--json", json, "Print JSON instead of text");

  std::string batch_manifest, batch_shard, batch_out, merge_other;
  bool batch_quiet = false;
  auto* batch = app.add_subcommand(
      "batch", "Profile every model of a YAML manifest, store and report each; exit 1 on a broken limit or regression");
  batch->add_option("MANIFEST", batch_manifest, "The manifest (models, targets, limits, baseline, report)")->required();
  batch->add_option("--db", history_db, "Run store (default: " + RunStore::DefaultPath().string() + ")");
  batch->add_option("--shard", batch_shard, "Run only the I-th of N slices of the models: I/N");
  batch->add_flag("--quiet", batch_quiet, "Only the final table");
  batch->add_option("--out", batch_out, "Write the reports under this folder (default: beside the manifest)");
  auto* merge = app.add_subcommand("merge", "Copy the runs of another store (a shard's) that this store lacks");
  merge->add_option("OTHER", merge_other, "The other store")->required();
  merge->add_option("--db", history_db, "Run store to merge into (default: " + RunStore::DefaultPath().string() + ")");

  std::optional<int64_t> recommend_run;
  std::string recommend_json, recommend_out;
  LimitFlags recommend_limits;
  auto* recommend =
      app.add_subcommand("recommend", "Recommend a target of a stored run (or a profile JSON) under limits");
  recommend->add_option("RUN_ID", recommend_run, "A stored run");
  recommend->add_option("--in", recommend_json, "A profile JSON instead of a stored run");
  recommend->add_option("--db", history_db, "Run store (default: " + RunStore::DefaultPath().string() + ")");
  recommend->add_option("--json", recommend_out, "Also write the recommendation JSON here");
  AddLimitFlags(recommend, recommend_limits);

  std::optional<int64_t> report_run;
  std::string report_in, report_format, report_out;
  auto* report = app.add_subcommand("report", "Write the report of a stored run (or of a profile JSON)");
  report->add_option("RUN_ID", report_run, "A stored run (chipfit history lists them)");
  report->add_option("--in", report_in, "A profile JSON (profile --json) instead of a stored run");
  report->add_option("--db", history_db, "Run store (default: " + RunStore::DefaultPath().string() + ")");
  report->add_option("--format", report_format, "html, pdf, csv or json (default: from the -o file's extension)")
      ->check(CLI::IsMember({"html", "htm", "pdf", "csv", "json"}, CLI::ignore_case));
  report->add_option("-o,--output", report_out, "The report file ('-': standard output, with --format)")->required();

  int64_t diff_a = 0, diff_b = 0;
  auto* diff = app.add_subcommand(
      "diff", "Compare two stored runs per target and layer (exit 1 when B regressed beyond both runs' noise)");
  diff->add_option("RUN_A", diff_a, "The baseline run id")->required();
  diff->add_option("RUN_B", diff_b, "The run compared with it")->required();
  diff->add_option("--db", history_db, "Run store (default: " + RunStore::DefaultPath().string() + ")");
  diff->add_flag("--json", json, "Print JSON instead of text");
  profile->add_flag("!--no-measure", profile_flags.measure_ceilings,
                    "Do not measure missing roofline ceilings (layers then have no memory/compute bound)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "chipfit: error: {}\nRun 'chipfit --help' for usage.\n", e.what());
    return kExitInputError;
  }

  if (devices->parsed()) return RunDevices(json, measure);
  if (inspect->parsed()) return RunInspect(model_path, shapes, json, inspect_target, quant_flags);
  if (run->parsed()) return RunRun(model_path, target, shapes, input_files, seed, output_dir, quant_flags);
  if (profile->parsed()) return RunProfile(model_path, shapes, profile_flags);
  if (history->parsed()) return RunHistory(history_model, history_db, json);
  if (report->parsed()) return RunReportCommand(report_run, report_in, history_db, report_format, report_out);
  if (diff->parsed()) return RunDiff(diff_a, diff_b, history_db, json);
  if (batch->parsed()) return RunBatch(batch_manifest, history_db, batch_shard, batch_out, batch_quiet);
  if (merge->parsed()) return RunMerge(merge_other, history_db);
  if (recommend->parsed())
    return RunRecommend(recommend_run, recommend_json, history_db, recommend_limits, recommend_out);
  if (conformance->parsed()) return RunConformanceCommand(suites, filter, target, json, verbose, no_fallback);
  return kExitInputError;
}

}  // namespace
}  // namespace chipfit

int main(int argc, char** argv) {
  try {
    const int code = chipfit::Main(argc, argv);
#ifdef CHIPFIT_WITH_REPORTS
    chipfit::g_qt_app.reset();  // before static destruction, while Qt's own globals still exist
#endif
    return code;
  } catch (const std::exception& e) {
    // Core reports errors as Status; an exception here is a library failure nobody converted.
    fmt::print(stderr, "chipfit: internal error: {}\n", e.what());
    return 2;
  }
}
