// chipfit: the headless front end. Parses flags, calls core and devices, prints; nothing else.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <thread>

#include <omp.h>
#include <unistd.h>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include "CLI/CLI.hpp"
#include "chipfit/version.h"
#include "core/graph/index_bounds.h"
#include "core/graph/model_summary.h"
#include "core/graph/onnx_import.h"
#include "core/graph/onnx_loader.h"
#include "core/quant/calibration_data.h"
#include "core/quant/input_data.h"
#include "core/quant/qdq_export.h"
#include "core/recommend/recommend.h"
#include "core/runtime/allocator.h"
#include "core/runtime/compiled_model.h"
#include "core/runtime/conformance.h"
#include "core/sha256.h"
#include "core/store/run_diff.h"
#include "core/store/run_store.h"
#include "core/suggest.h"
#include "core/tensor/metrics.h"
#include "core/tensor/npy.h"
#include "core/tensor/random.h"
#include "devices/device_json.h"
#include "devices/int8_export.h"
#include "devices/registry.h"
#include "devices/target_compiler.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "profilers/accuracy/drift.h"
#include "profilers/energy/energy_profiler.h"
#include "profilers/latency/rounds.h"
#include "profilers/memory/ceilings.h"
#include "profilers/memory/memory_profiler.h"
#include "profilers/precision_mix.h"
#include "profilers/profile_json.h"
#include "profilers/profiler.h"
#include "profilers/session/batch_manifest.h"
#include "profilers/session/profile_session.h"
#include "profilers/session/project_session.h"
#include "profilers/trace.h"

#ifdef CHIPFIT_WITH_REPORTS
#include <QApplication>

#include "views/report/report.h"
#endif

namespace chipfit {
namespace {

// The command as typed, recorded with every stored run.
std::string g_command_line;

// Exit codes (docs/cli.md, "Conventions").
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

// Limits and objective of a recommendation (profile, recommend, batch), as the session takes them.
using LimitFlags = RecommendSettings;

void AddLimitFlags(CLI::App* cmd, LimitFlags& f) {
  cmd->add_option("--max-latency-ms", f.limits.max_latency_ms, "Limit: latency (the --latency-stat statistic) in ms");
  cmd->add_option("--latency-stat", f.limits.latency_stat,
                  "Which latency the limit bounds, and the ranking uses when given: p50, p90 or p99 (default: the "
                  "limit bounds p99, targets rank by p50)")
      ->check(CLI::IsMember({"p50", "p90", "p99"}))
      ->each([&f](const std::string&) { f.limits.latency_stat_given = true; });
  cmd->add_option("--min-top1", f.limits.min_top1, "Limit: top-1 agreement with the reference, 0..1 (e.g. 0.99)");
  cmd->add_option("--min-sqnr-db", f.limits.min_sqnr_db, "Limit: output SQNR against the reference, dB");
  cmd->add_option("--max-memory-mb", f.limits.max_memory_mb, "Limit: planned peak memory, MiB");
  cmd->add_option("--max-energy-mj", f.limits.max_energy_mj,
                  "Limit: energy per inference, mJ (estimated where not measured)");
  cmd->add_option(
         "--objective", f.objective,
         "Rank passing targets by latency, energy, cost or throughput (inferences/s at the best --batch/--streams)")
      ->capture_default_str();
  cmd->add_option("--weights", f.weights, "Weighted ranking instead: latency=1,energy=0.5,cost=0,drift=0.2");
  cmd->add_option("--costs", f.costs, "Device $/hour table (YAML) for the cost objective (default: the shipped one)");
  cmd->add_flag("!--no-accuracy-guard", f.limits.accuracy_guard,
                "Without accuracy limits, also recommend targets under 99 % task agreement (or 20 dB output SQNR "
                "where no output has a task metric) and int8 calibrated on random data");
  cmd->add_flag("--rank-unreliable", f.limits.rank_unreliable,
                "Also rank targets whose timing is unreliable (too few clean rounds on a busy machine); by default "
                "they are rejected with the reason");
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

void PrintCeilings(const CeilingReport* r, bool verbose) {
  if (r == nullptr) {
    fmt::print("    {:<18} not measured: run `chipfit devices --measure`\n", "ceilings");
    return;
  }
  fmt::print("    {:<18} measured {}{} (`chipfit devices --measure` re-measures)\n", "ceilings", r->measured_at,
             r->threads > 0 ? fmt::format(" with {} thread{}", r->threads, r->threads == 1 ? "" : "s") : "");
  if (r->MeasuredWhileBusy()) {
    fmt::print(
        "      {:<16} other processes used {:.0f} % of the CPUs while these were measured: the figures are "
        "low; measure again on an idle machine\n",
        "warning", *r->other_cpu_share * 100);
  }
  const double bw = r->measured.memory_bandwidth_gbps;
  if (bw > 0) fmt::print("      {:<16} {:>8.1f} GB/s measured\n", "memory bandwidth", bw);
  for (const auto& [precision, gflops] : r->measured.peak_gflops) {
    const std::string theory_text = PeakShareText(*r, precision, gflops);
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
  // A CPU's ceilings as measured with this process's threads (what `--measure` just used).
  auto cached = [&](const DeviceInfo& info) -> const CeilingReport* {
    const auto it = cache->find(CeilingKey(info, omp_get_max_threads()));
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

// A shape as a user reads it: 1x3x48x192 when every dim is known, else [batch, 3, H, W] with the
// file's dim names ("?" where it has none).
std::string FormatShape(const TensorSpec& spec) {
  if (!spec.has_shape || spec.dims.empty()) return FormatDims(spec);
  if (std::all_of(spec.dims.begin(), spec.dims.end(), [](const DimSpec& d) { return d.is_static(); })) {
    return FormatDims(spec);
  }
  std::string out;
  for (const DimSpec& d : spec.dims) {
    out += (out.empty() ? "[" : ", ") + (d.is_static() ? std::to_string(d.value) : d.param.empty() ? "?" : d.param);
  }
  return out + "]";
}

void PrintSummary(const ModelSummary& s) {
  fmt::print("model        {}\n", s.path);
  fmt::print("format       ONNX IR {}, opset {}{}\n", s.ir_version, s.default_opset,
             s.producer.empty() ? "" : ", produced by " + s.producer);
  for (const TensorSpec& in : s.inputs) fmt::print("input        {}  {}  {}\n", in.name, in.dtype, FormatShape(in));
  for (const TensorSpec& out : s.outputs) {
    fmt::print("output       {}  {}  {}\n", out.name, out.dtype, FormatShape(out));
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
  std::string preprocess;   // images in data_dir: resize=…,channels=…,scale=…,mean=…,std=…,layout=…
  int sample_rate = 16000;  // .wav files in data_dir
  std::string method = "minmax";
  double percentile = 99.99;
  int samples = 8;
  std::string keep_fp32;
  double auto_fp32_sqnr = 0;
  double auto_fp32_agreement = 0;  // percent
  bool int8_all_layers = false;
  bool no_fallback = false;
};

// How a --data folder of images or recordings becomes the model's input.
void AddDataFlags(CLI::App* command, std::string& preprocess, int& sample_rate) {
  command->add_option("--preprocess", preprocess,
                      "Images in --data: resize=HxW|keep-aspect,channels=rgb|bgr|gray,scale=X,mean=R/G/B,std=R/G/B,"
                      "layout=nchw|nhwc (each optional; default: the input's HxW, rgb, 1/255, mean 0, std 1)");
  command
      ->add_option("--sample-rate", sample_rate,
                   ".wav files in --data must have this rate (Hz); a file at another rate is an error")
      ->capture_default_str();
}

// --preprocess and --sample-rate as the loader takes them.
Result<InputDataOptions> DataOptions(const std::string& preprocess, int sample_rate) {
  InputDataOptions o;
  ASSIGN_OR_RETURN(o.preprocess, ParsePreprocess(preprocess));
  if (sample_rate < 1) return InvalidArgument(fmt::format("--sample-rate {}: expected a rate in Hz", sample_rate));
  o.sample_rate = sample_rate;
  return o;
}

// `with_data`: --data too (profile has its own --data, which int8 targets calibrate on). `with_speed`:
// --int8-all-layers (quantize writes a model for other machines, so this one's timings do not choose).
void AddQuantFlags(CLI::App* command, QuantFlags& flags, bool with_data = true, bool with_speed = true) {
  if (with_data) {
    command->add_option("--data", flags.data_dir,
                        "int8 calibration inputs: a folder of <input>.npy (or sub-folders each holding a set), of "
                        "images (.png .jpg .bmp) or of mono .wav files");
    AddDataFlags(command, flags.preprocess, flags.sample_rate);
  }
  command->add_option("--calibration", flags.method, "int8 calibration: minmax, entropy or percentile")
      ->capture_default_str();
  command->add_option("--percentile", flags.percentile, "Percentile for --calibration percentile")
      ->capture_default_str();
  command->add_option("--calibration-samples", flags.samples, "Seeded random samples when --data is not given")
      ->capture_default_str();
  command->add_option("--keep-fp32", flags.keep_fp32,
                      "Nodes to keep in fp32 on int8, bf16 and fp16 targets: NODE,NODE");
  command->add_option("--auto-fp32-sqnr", flags.auto_fp32_sqnr,
                      "Revert the worst int8 layers to fp32 until the outputs reach this SQNR (dB) vs fp32");
  command
      ->add_option("--auto-fp32-agreement", flags.auto_fp32_agreement,
                   "Revert the worst int8 layers to fp32 until the outputs' task agreement with fp32 (top-1, "
                   "sequence or map IoU) reaches this percentage")
      ->check(CLI::Range(0.0, 100.0));
  if (with_speed) {
    command->add_flag("--int8-all-layers", flags.int8_all_layers,
                      "int8 and bf16: run every eligible layer in the target's precision, also where it measures "
                      "no faster than fp32 here (by default such layers stay fp32)");
  }
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
    ASSIGN_OR_RETURN(const InputDataOptions options, DataOptions(flags.preprocess, flags.sample_rate));
    ASSIGN_OR_RETURN(InputData data, LoadInputData(flags.data_dir, graph.inputs, options));
    int8.samples = std::move(data.samples);
  }
  int8.target_sqnr_db = flags.auto_fp32_sqnr;
  int8.target_agreement = flags.auto_fp32_agreement / 100;
  int8.fp32_where_faster = !flags.int8_all_layers;
  int8.agreement = OutputAgreementFn(TaskOptions{});
  for (const std::string& name : SplitList(flags.keep_fp32)) {
    if (graph.FindNode(name) == nullptr)
      return InvalidArgument("--keep-fp32: the model has no node named '" + name + "'");
    compile.keep_fp32[name] = "kept in fp32 by request (--keep-fp32)";
  }
  return int8;
}

// Where each kernel runs on a target: device, implementation, precision and every reason.
void PrintPlacement(const CompiledModel& model) {
  fmt::print("{:>4}  {:<28} {:<16} {:<9} {:<28} {:<5} {}\n", "#", "kernel", "op", "device", "implementation", "prec",
             "note");
  for (size_t i = 0; i < model.kernels().size(); ++i) {
    const KernelInfo& k = model.kernels()[i];
    std::string note = !k.fallback_reason.empty() ? "fallback: " + k.fallback_reason : k.precision_reason;
    if (k.onnx_nodes.size() > 1) note = "covers " + Join(k.onnx_nodes, "+") + (note.empty() ? "" : "; " + note);
    if (!k.isa.empty()) note = "isa " + k.isa + (note.empty() ? "" : "; " + note);
    fmt::print("{:>4}  {:<28} {:<16} {:<9} {:<28} {:<5} {}\n", i, k.name.substr(0, 28), k.op_type.substr(0, 16),
               k.device, k.implementation.substr(0, 28), k.precision, note);
  }
}

nlohmann::json PlacementJson(const CompiledModel& model) {
  nlohmann::json kernels = nlohmann::json::array();
  const auto& costs = model.costs();
  for (size_t i = 0; i < model.kernels().size(); ++i) {
    const KernelInfo& k = model.kernels()[i];
    nlohmann::json row = {
        {"name", k.name},
        {"op", k.op_type},
        {"onnx_nodes", k.onnx_nodes},
        {"device", k.device},
        {"implementation", k.implementation},
        {"isa", k.isa},
        {"precision", k.precision},
        {"precision_reason", k.precision_reason},
        {"fallback_reason", k.fallback_reason},
        {"parent", k.parent >= 0 ? nlohmann::json(model.kernels()[static_cast<size_t>(k.parent)].name) : nullptr}};
    // The op-formula cost (what a profile's layers report, known before running): `project
    // --validate-published` builds its layer features from it.
    if (i < costs.size() && costs[i].known) {
      row["flops"] = costs[i].flops;
      row["bytes_read"] = costs[i].bytes_read;
      row["bytes_written"] = costs[i].bytes_written;
      row["output_shape"] = costs[i].output_shape;
    }
    kernels.push_back(std::move(row));
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
  ModelSummary summary = Summarize(*model);
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
        if (target->precision == Precision::kBf16 && !DescribeBf16Choice(quant).empty()) {
          fmt::print("      {}\n", DescribeBf16Choice(quant));
        }
        PrintPlacement(**placed);
      }
      return kExitOk;
    }
    // The outputs as the bound shapes make them (the file may declare them symbolic).
    const std::vector<ValueDesc>& outputs = (*compiled)->outputs();
    for (size_t i = 0; i < outputs.size() && i < summary.outputs.size(); ++i) {
      if (!outputs[i].has_shape ||
          std::any_of(outputs[i].shape.begin(), outputs[i].shape.end(), [](int64_t d) { return d < 0; })) {
        continue;  // known only at run time (a sequence, a data-dependent shape)
      }
      summary.outputs[i].has_shape = true;
      summary.outputs[i].dims.clear();
      for (int64_t d : outputs[i].shape) summary.outputs[i].dims.push_back({.value = d, .param = {}});
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
  if (target->precision == Precision::kBf16 && !DescribeBf16Choice(quant).empty()) {
    fmt::print(stderr, "{}\n", DescribeBf16Choice(quant));
  }
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
  std::set<std::string> given;
  for (const auto& entry : inputs) given.insert(entry.first);
  std::map<std::string, Tensor> seeded;  // token ids among them kept inside their tables
  for (const ValueDesc& desc : graph->inputs) {
    if (!inputs.contains(desc.name)) seeded[desc.name] = SeededInput(desc, seed);
  }
  BoundIndexInputs(InputIndexBounds(*graph), seeded);
  inputs.merge(seeded);
  // Lengths the user did not give follow the cache and tokens (given or seeded).
  SeedSequenceLengths(*graph, inputs, given);
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
    // Which ONNX version of each op the reference implements (opset 18–21 forms included), and what it refuses.
    nlohmann::json coverage = nlohmann::json::array();
    for (const OpCoverage& c : ReferenceOpCoverage()) {
      coverage.push_back({{"op", c.op_type},
                          {"domain", c.domain},
                          {"onnx_version", c.onnx_version},
                          {"implemented_version", c.implemented_version},
                          {"refuses", c.refuses}});
    }
    std::cout << nlohmann::json{{"schema", "chipfit.conformance/2"}, {"targets", targets_json}, {"coverage", coverage}}
                     .dump(2)
              << "\n";
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

// Turns the SIGINT handler's flag into a stop request on `stop`, until the returned thread is
// destroyed (a jthread: on every return of its owner).
std::jthread InterruptWatcher(std::stop_source& stop) {
  return std::jthread([&stop](const std::stop_token& ended) {
    while (!ended.stop_requested()) {
      if (g_interrupted) stop.request_stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
}

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

// An output file the user named, checked before any work: its folder exists (never created behind
// the user's back) and it can be written there. The message names the flag, the file and the OS reason.
Status CheckWritable(const std::string& path, const std::string& flag) {
  const std::filesystem::path file(path);
  const std::filesystem::path folder = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) {
    return NotFound(fmt::format("{} '{}': the folder '{}' does not exist", flag, path, folder.string()));
  }
  if (std::filesystem::is_directory(file, ec)) return InvalidArgument(fmt::format("{} '{}' is a folder", flag, path));
  const bool exists = std::filesystem::exists(file, ec);
  if (::access(exists ? file.c_str() : folder.c_str(), W_OK) != 0) {
    return IoError(fmt::format("{} '{}': cannot write there: {}", flag, path, std::strerror(errno)));
  }
  return Status::Ok();
}

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
Status WriteRunReport(const RunResult& run, const std::string& path, const std::string& format = {}) {
  const std::filesystem::path out(path);
  if (path != "-") RETURN_IF_ERROR(CheckWritable(path, "report"));
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
    std::cout << RunResultToJson(run).dump(2) << "\n";
    return std::cout ? Status::Ok() : IoError("cannot write the report to standard output");
  }
  std::ofstream file(out);
  file << RunResultToJson(run).dump(2) << "\n";
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
  std::string preprocess;
  int sample_rate = 16000;
  std::string classifier_output;
  std::vector<std::string> tasks;  // OUTPUT=classify|sequence|map|none
  int64_t ctc_blank = 0;
  double map_threshold = 0.3;
  int drift_samples = 4;
  bool quiet = false;
  bool measure_ceilings = true;
  uint64_t seed = 1;
  std::string db;  // empty: RunStore::DefaultPath()
  bool no_store = false;
  int threads = 0;  // 0: the cores other processes leave free
  bool oversubscribe = false;
  double max_time = 0;  // 0: four times the plan, plus 10 s
  std::string batches;  // throughput mode: "1,4,16"
  int streams = 1;
  std::string project;                      // --project t4,h100-sxm | all
  std::vector<std::string> hardware_files;  // --hardware-file
  QuantFlags quant;
  LimitFlags limits;
};

// The session's options from the flags; the targets parsed here, so a typo is exit 2 at once.
Result<ProfileOptions> ProfileOptionsFromFlags(const std::vector<std::string>& shapes, const ProfileFlags& flags) {
  ProfileOptions o;
  o.all_targets = flags.all_targets;
  o.targets_text = flags.targets;
  for (const std::string& text : SplitList(flags.targets)) {
    ASSIGN_OR_RETURN(Target target, ParseTarget(text));
    o.targets.push_back(target);
  }
  if (flags.targets.empty() == !flags.all_targets) {
    return InvalidArgument("profile: give --targets T1,T2,... or --all-targets");
  }
  o.shapes = shapes;
  o.data_dir = flags.data_dir;
  ASSIGN_OR_RETURN(o.data, DataOptions(flags.preprocess, flags.sample_rate));
  o.seed = flags.seed;
  o.iterations = flags.iterations;
  o.warmup = flags.warmup;
  o.min_time_s = flags.min_time;
  o.reference = flags.reference;
  o.classifier_output = flags.classifier_output;
  for (const std::string& task : flags.tasks) RETURN_IF_ERROR(ParseTaskOverride(task, o.task));
  o.task.ctc_blank = flags.ctc_blank;
  if (!(flags.map_threshold > 0 && flags.map_threshold < 1)) {
    return InvalidArgument(fmt::format("--map-threshold {}: expected a value between 0 and 1", flags.map_threshold));
  }
  o.task.map_threshold = flags.map_threshold;
  o.drift_samples = flags.drift_samples;
  o.threads = flags.threads;
  o.oversubscribe = flags.oversubscribe;
  o.max_time_s = flags.max_time;
  for (const std::string& text : SplitList(flags.batches)) {
    char* end = nullptr;
    const long batch = std::strtol(text.c_str(), &end, 10);
    if (end == text.c_str() || *end != '\0' || batch < 1 || batch > 65536) {
      return InvalidArgument("--batch '" + text + "': expected batch sizes from 1 to 65536, comma-separated");
    }
    o.batches.push_back(static_cast<int>(batch));
  }
  if (flags.streams < 1 || flags.streams > 256) {
    return InvalidArgument(fmt::format("--streams {}: expected 1 to 256 concurrent streams", flags.streams));
  }
  o.streams = flags.streams;
  auto method = ParseCalibrationMethod(flags.quant.method);
  if (!method)
    return InvalidArgument("--calibration '" + flags.quant.method + "': expected minmax, entropy or percentile");
  o.calibration = *method;
  o.calibration_percentile = flags.quant.percentile;
  o.calibration_samples = flags.quant.samples;
  o.keep_fp32 = SplitList(flags.quant.keep_fp32);
  o.auto_fp32_sqnr = flags.quant.auto_fp32_sqnr;
  o.auto_fp32_agreement = flags.quant.auto_fp32_agreement;
  o.int8_all_layers = flags.quant.int8_all_layers;
  o.no_fallback = flags.quant.no_fallback;
  o.measure_ceilings = flags.measure_ceilings;
  o.recommend = flags.limits;
  o.store = !flags.no_store;
  if (!flags.project.empty() || !flags.hardware_files.empty()) {
    o.project = true;
    o.project_request.all_hardware = flags.project == "all";
    if (flags.project != "all") o.project_request.hardware = SplitList(flags.project);
    o.project_request.hardware_files = flags.hardware_files;
  }
  o.db = flags.db;
  o.command = g_command_line;
  o.source = "cli";
  return o;
}

// The CLI's view of a running session: on a TTY one line redrawn at most every 50 ms ([target i/n],
// target, phase, run and layer); otherwise a plain line per phase; nothing with --quiet.
class CliProgress final : public ProfileEvents {
 public:
  explicit CliProgress(bool quiet) : quiet_(quiet), tty_(!quiet && isatty(fileno(stderr))) {}
  void Message(const std::string& text) override {
    if (!quiet_) fmt::print(stderr, "{}\n", text);
  }
  void RunStarted(const RunResult&, const std::vector<Target>& targets) override {
    count_ = targets.size();
    names_.clear();
    for (const Target& t : targets) names_.push_back(t.ToString());
  }
  void TargetStarted(size_t index, const Target& target) override {
    target_ = target.ToString();
    counter_ = fmt::format("[{}/{}]", index + 1, count_);
    last_phase_.clear();
  }
  void Phase(size_t index, const std::string& phase, const std::string& detail) override {
    // The targets are timed in interleaved rounds: each phase line names its own target.
    if (index < names_.size() && names_[index] != target_) {
      target_ = names_[index];
      counter_ = fmt::format("[{}/{}]", index + 1, count_);
      last_phase_.clear();
    }
    const auto now = std::chrono::steady_clock::now();
    if (tty_ && (phase != last_phase_ || now - last_draw_ > std::chrono::milliseconds(50))) {
      fmt::print(stderr, "\r\033[K{} {:<16} {:<11} {}", counter_, target_, phase, detail.substr(0, 56));
      last_draw_ = now;
    } else if (!tty_ && !quiet_ && phase != last_phase_ && printed_.insert(target_ + "|" + phase).second) {
      // A log gets each target's phase once, not once per timing round.
      fmt::print(stderr, "{} {}: {}\n", counter_, target_, phase);
    }
    last_phase_ = phase;
  }
  void TargetFinished(size_t, std::shared_ptr<const TargetResult>) override {
    if (tty_) fmt::print(stderr, "\r\033[K");
  }

 private:
  bool quiet_, tty_;
  size_t count_ = 0;
  std::vector<std::string> names_;
  std::set<std::string> printed_;  // target|phase lines already in a non-TTY log
  std::string target_, counter_, last_phase_;
  std::chrono::steady_clock::time_point last_draw_{};
};

// The table after a profile: a line per target, then its peak memory, roofline split and top layers.
void PrintProfileSummary(const RunResult& run) {
  // The baseline for speed-ups: the CPU's fp32 target when it ran, else the first that did.
  const TargetResult* base = nullptr;
  for (const auto& r : run.targets) {
    if (r->status == "ok" && (base == nullptr || r->target.ToString() == "cpu:fp32")) base = r.get();
  }
  // What the accuracy figures were measured on: random tensors say nothing about a user's data.
  const RunInputs& in = run.inputs;
  if (!in.kind.empty()) {
    fmt::print("inputs: {} {} file(s) from {}{}{}\n", in.files, in.kind, in.source.substr(in.source.find(' ') + 1),
               in.preprocess.empty() ? "" : ", preprocessing " + in.preprocess,
               in.notes.empty() ? "" : "; " + Join(in.notes, "; "));
  } else if (in.source.rfind("seeded random", 0) == 0) {
    fmt::print(
        "inputs: seeded random tensors (give --data with real inputs for accuracy figures that mean something)\n");
  }
  for (const CeilingReport& c : run.ceilings) {
    if (!c.MeasuredWhileBusy()) continue;
    fmt::print(
        "warning: the roofline ceilings of {} were measured while other processes used {:.0f} % of the CPUs "
        "({}): memory- and compute-bound calls use figures that are low; `chipfit devices --measure` on an "
        "idle machine replaces them\n",
        c.device_id, *c.other_cpu_share * 100, c.measured_at);
  }
  if (!run.settings.threads_reason.empty()) {
    fmt::print("threads: {}; targets timed in interleaved rounds, speed-ups from within-round pairs\n",
               run.settings.threads_reason);
  }
  fmt::print("{:<16} {:<11} {:>9} {:>9} {:>7} {:>9}  {}\n", "target", "status", "p50 ms", "p99 ms", "spread",
             "speed-up", "notes (spread: (p90 - p50) / p50; p99 from 100 runs)");
  for (const auto& t : run.targets) {
    const TargetResult& r = *t;
    if (r.status != "ok") {
      fmt::print("{:<16} {:<11} {}{}\n", r.target.ToString(), r.status,
                 r.partial ? fmt::format("partial: p50 {:.3f} ms from {} runs; ", r.latency.p50, r.latency.iterations)
                           : std::string(),
                 r.error.substr(0, 140));
      continue;
    }
    std::string drift;
    if (r.accuracy) {
      const AccuracySummary& acc = *r.accuracy;
      if (!acc.output_invalid.empty()) {
        drift = ", SQNR not measurable (" + acc.output_invalid + ")";
      } else {
        drift = fmt::format(", SQNR {:.1f} dB{}", acc.output_sqnr_db,
                            acc.output_sqnr_db < 0 ? " (output differs more than it agrees)" : "");
      }
      for (const OutputTask& task : acc.tasks) {
        if (task.agreement) {
          drift += fmt::format(", {} {:.1f} %", task.metric, *task.agreement * 100);
        } else if (!task.not_informative.empty()) {
          drift += ", " + task.metric + " not informative";
        }
      }
      if (!acc.first_non_finite_layer.empty()) {
        drift += ", non-finite from " + acc.first_non_finite_layer + " (" + acc.non_finite + ")";
      }
      if (r.accuracy->random_calibration) drift += " (random calibration)";
      if (!r.accuracy->first_layer_below_threshold.empty()) {
        drift += ", below 30 dB from " + r.accuracy->first_layer_below_threshold;
      }
    }
    std::string energy;
    if (r.energy) energy = fmt::format(", {:.3g} mJ {}", r.energy->joules * 1e3, r.energy->source);
    std::string flags;
    if (const auto share = DeviceShare(r); share && *share < 0.995) {
      flags += fmt::format(", only {:.0f} % of the time on {}", *share * 100, r.target.DeviceId());
    }
    if (r.latency.noisy) flags += ", noisy";
    if (r.latency.outliers > 0) flags += fmt::format(", {} outlier run(s)", r.latency.outliers);
    if (r.latency.machine_busy) {
      flags += fmt::format(", machine busy ({:.0f} % CPU used by others)", r.latency.other_cpu_share.value_or(0) * 100);
    }
    const double spread = r.latency.p50 > 0 ? (r.latency.p90 - r.latency.p50) / r.latency.p50 * 100 : 0;
    int clean = 0;
    for (const TimingRound& round : r.rounds) clean += round.clean ? 1 : 0;
    const std::string rounds =
        r.rounds.empty() ? std::string()
                         : fmt::format(", {}/{} rounds clean, {} runs", clean, r.rounds.size(), r.latency.iterations);
    // A p99 from fewer than 100 runs is an interpolation between the slowest few, not a tail.
    const std::string p99 =
        r.latency.iterations >= kTailSamplesP99 ? fmt::format("{:>9.3f}", r.latency.p99) : fmt::format("{:>9}", "-");
    // A target whose kernels ran as another one made no speed-up of its own: "same" when that one is
    // the baseline, never a ratio of two timings of the same kernels.
    const PrecisionMix mix = ComputePrecisionMix(r);
    const std::string speed_up = !mix.ran_as.empty() && mix.ran_as == base->target.ToString()
                                     ? fmt::format("{:>9}", "same")
                                     : fmt::format("{:>8.2f}x", SpeedUp(*base, r));
    fmt::print("{:<16} {:<11} {:>9.3f} {} {:>6.1f}% {}  {} layers, {} fallbacks{}{}{}{}\n", r.target.ToString(),
               r.unreliable ? "unreliable" : r.status, r.latency.p50, p99, spread, speed_up, r.layers.size(),
               r.fallbacks.size(), rounds, drift, energy, flags);
    if (r.unreliable) fmt::print("  {:<14} {}\n", "unreliable:", r.unreliable_reason);
    if (MixWorthSaying(mix, r.target)) {
      fmt::print("  {:<14} {}{}\n", "precision:", mix.text,
                 mix.ran_as.empty() ? std::string()
                                    : fmt::format(" — ran as {}: reported and ranked as what it is", mix.ran_as));
    }
    if (r.attribution) {
      const TimeAttribution& a = *r.attribution;
      if (a.unexplained_ms < 0) {  // each layer's time carries its timer's cost: an excess, not a negative rest
        fmt::print(
            "  {:<14} Σ layers {:.3g} ms, above the {:.3g} ms end to end by {:.3g} ms (per-layer timing's own "
            "cost)\n",
            "time:", a.attributed_ms, a.end_to_end_ms, -a.unexplained_ms);
      } else {
        fmt::print(
            "  {:<14} Σ layers {:.3g} ms, between kernels {:.3g} ms, unexplained {:.3g} ms of {:.3g} ms end to end\n",
            "time:", a.attributed_ms, a.between_ms, a.unexplained_ms, a.end_to_end_ms);
      }
      if (!a.explanation.empty()) fmt::print("  {:<14} {}\n", "", a.explanation);
    }
  }
  // Each output's task and why, once: the choice comes from the graph and the reference's values,
  // the same for every target.
  for (const auto& t : run.targets) {
    if (!t->accuracy || t->accuracy->tasks.empty()) continue;
    for (const OutputTask& task : t->accuracy->tasks) {
      fmt::print("task of output {}: {} ({}){}\n", task.output, task.task, task.why,
                 task.not_informative.empty() ? "" : "; not informative: " + task.not_informative);
    }
    break;
  }
  for (const auto& t : run.targets) {
    const TargetResult& r = *t;
    if (r.status != "ok") continue;
    std::vector<const LayerResult*> top;
    for (const LayerResult& l : r.layers) top.push_back(&l);
    std::sort(top.begin(), top.end(),
              [](const LayerResult* a, const LayerResult* b) { return a->time_p50_ms > b->time_p50_ms; });
    int memory_bound = 0, compute_bound = 0;
    for (const LayerResult& l : r.layers) {
      memory_bound += l.bound == "memory" ? 1 : 0;
      compute_bound += l.bound == "compute" ? 1 : 0;
    }
    fmt::print("\n{}: peak memory {} planned, {}; roofline: {}\n", r.target.ToString(), HumanBytes(r.peak_memory_bytes),
               r.measured_peak_memory_bytes ? HumanBytes(*r.measured_peak_memory_bytes) + " heap high-water mark"
                                            : std::string("heap high-water mark not measurable here"),
               r.ceilings ? fmt::format("{} layers memory-bound, {} compute-bound", memory_bound, compute_bound)
                          : std::string("no measured ceilings (chipfit devices --measure)"));
    fmt::print("top layers on {} (p50, device time):\n", r.target.ToString());
    for (size_t i = 0; i < top.size() && i < 5; ++i) {
      // A Loop's or Scan's body layer: its time is the sum over the iterations of one inference.
      const std::string runs = top[i]->iterations == 1 ? "" : fmt::format("  {:g}x per inference", top[i]->iterations);
      fmt::print("  {:<32} {:<12} {:>9.3f} ms  {:>5.1f}%  {:>7.2f} GFLOP/s  {:>6.2f} GB/s  {}{}\n",
                 top[i]->name.substr(0, 32), top[i]->op.substr(0, 12), top[i]->time_p50_ms,
                 100 * top[i]->time_p50_ms / r.latency.p50, top[i]->gflops_per_s, top[i]->gb_per_s,
                 top[i]->bound.empty() ? "" : top[i]->bound + "-bound", runs);
    }
  }
}

// Throughput mode's table: a row per target, batch size and stream count.
void PrintThroughput(const RunResult& run) {
  bool any = false;
  for (const auto& t : run.targets) any = any || !t->throughput.empty();
  if (!any) return;
  fmt::print(
      "\nthroughput (latency per request of one batch; inferences/s = batch x requests / wall time; ms per "
      "inference = 1000 / inferences/s):\n");
  fmt::print("  {:<16} {:>6} {:>8} {:>8} {:>11} {:>11} {:>14} {:>13}\n", "target", "batch", "streams", "threads",
             "p50 ms", "p90 ms", "inferences/s", "ms/inference");
  for (const auto& t : run.targets) {
    for (const ThroughputPoint& p : t->throughput) {
      if (p.status != "ok") {
        fmt::print("  {:<16} {:>6} {:>8} {}: {}\n", t->target.ToString(), p.batch, p.streams, p.status,
                   p.error.substr(0, 100));
        continue;
      }
      fmt::print("  {:<16} {:>6} {:>8} {:>8} {:>11.3f} {:>11.3f} {:>14.1f} {:>13.3f}\n", t->target.ToString(), p.batch,
                 p.streams, p.threads_per_stream, p.latency.p50, p.latency.p90, p.inferences_per_s,
                 p.inferences_per_s > 0 ? 1e3 / p.inferences_per_s : 0.0);
    }
  }
}

// A JSON document to a file, indented (`--json FILE` of profile and project).
Status WriteJsonFile(const std::string& path, const nlohmann::json& j) {
  std::ofstream out(path);
  if (!out) return IoError("cannot write '" + path + "'");
  out << j.dump(2) << "\n";
  return out ? Status() : IoError("writing '" + path + "' failed");
}

// --json, --trace and --report of a finished profile.
Status WriteProfileOutputs(const RunResult& run, const ProfileFlags& flags) {
  const nlohmann::json out = RunResultToJson(run);
  if (!flags.json_file.empty()) RETURN_IF_ERROR(WriteJsonFile(flags.json_file, out));
  if (!flags.trace_file.empty()) {
    std::vector<TargetResult> targets;
    for (const auto& t : run.targets) targets.push_back(*t);
    std::ofstream file(flags.trace_file);
    file << ChromeTrace(targets).dump() << "\n";
    if (!file) return IoError("cannot write " + flags.trace_file);
  }
  if (!flags.report_file.empty()) {
    if (Status written = WriteRunReport(run, flags.report_file); !written.ok()) {
      return Status(written.code(), written.message() + (run.run_id ? fmt::format(" (the run is stored as run {}: "
                                                                                  "chipfit report {} -o FILE)",
                                                                                  *run.run_id, *run.run_id)
                                                                    : std::string()));
    }
  }
  return Status::Ok();
}

// chipfit profile: the flags become a ProfileSession's options; the session does the work. `result`
// (optional) receives the run.
int RunProfile(const std::string& path, const std::vector<std::string>& shapes, const ProfileFlags& flags,
               std::shared_ptr<const RunResult>* result = nullptr) {
  auto options = ProfileOptionsFromFlags(shapes, flags);
  if (!options.ok()) return Fail(options.status());
  ProfileSession session(*options);
  if (Status valid = session.Validate(); !valid.ok()) return Fail(valid);
  if (!flags.report_file.empty()) {
    if (Status s = CheckReportPath(flags.report_file); !s.ok())
      return Fail(Status(s.code(), "--report: " + s.message()));
    if (Status s = CheckWritable(flags.report_file, "--report"); !s.ok()) return Fail(s);
  }
  for (const auto& [flag, file] : {std::pair<const char*, const std::string&>{"--json", flags.json_file},
                                   std::pair<const char*, const std::string&>{"--trace", flags.trace_file}}) {
    if (!file.empty()) {
      if (Status s = CheckWritable(file, flag); !s.ok()) return Fail(s);
    }
  }
  const SigintScope sigint;
  std::stop_source stop;
  std::jthread watcher = InterruptWatcher(stop);
  CliProgress progress(flags.quiet);
  auto run = session.Run(path, progress, stop.get_token());
  watcher.request_stop();
  watcher.join();
  if (!run.ok()) return Fail(run.status());
  if (result != nullptr) *result = *run;
  if (Status written = WriteProfileOutputs(**run, flags); !written.ok()) return Fail(written);
  if (!flags.quiet) {
    PrintProfileSummary(**run);
    PrintThroughput(**run);
    if (!(*run)->projections.empty()) {
      const TargetResult* source = FeatureSource(**run);
      fmt::print("\n{}", ProjectionTable({{"projections", (*run)->projections},
                                          {"calibration", (*run)->projection_calibration},
                                          {"projected_from", source ? source->target.ToString() : ""}}));
    }
    PrintRecommendation((*run)->recommendation);
    if ((*run)->run_id) {
      fmt::print("\nstored as run {} ({}) in {}\n", *(*run)->run_id, (*run)->status,
                 (flags.db.empty() ? RunStore::DefaultPath() : std::filesystem::path(flags.db)).string());
    }
    if (!flags.report_file.empty()) fmt::print("report written to {}\n", flags.report_file);
  }
  if (stop.stop_requested()) return 130;  // 128 + SIGINT, as shells report an interrupted command
  // No target ran (every one refused or failed): nothing was measured, which a pipeline must see.
  if (std::none_of((*run)->targets.begin(), (*run)->targets.end(), [](const auto& t) { return t->status == "ok"; })) {
    std::string why;
    for (const auto& t : (*run)->targets) {
      why += fmt::format("\n  {} {}{}", t->target.ToString(), t->status, t->error.empty() ? "" : ": " + t->error);
    }
    fmt::print(stderr, "chipfit: no target ran, so nothing was measured:{}\n", why);
    return 1;
  }
  // Limits given and no target meets them: exit 1, so the command can gate a pipeline.
  if ((*run)->recommendation["best"].is_null() && flags.limits.limits.any()) return 1;
  return kExitOk;
}

Result<std::unique_ptr<RunStore>> OpenStore(const std::string& db) {
  const std::filesystem::path path = db.empty() ? RunStore::DefaultPath() : std::filesystem::path(db);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return NotFound("no run store at '" + path.string() + "' (profile a model first, or give --db FILE)");
  }
  // SQLite takes an empty file for a new database: a reading command would make it a store.
  if (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) == 0 && !ec) {
    return InvalidArgument("'" + path.string() + "' is an empty file, not a chipfit run store (left untouched)");
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
                      {"source", r.source},
                      {"targets", r.targets},
                      {"targets_ok", r.targets_ok},
                      {"shapes", r.shapes.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.shapes)},
                      {"threads", r.threads > 0 ? nlohmann::json(r.threads) : nlohmann::json(nullptr)}});
    }
    std::cout << nlohmann::json{{"db", (*store)->path().string()}, {"runs", list}}.dump(2) << "\n";
    return kExitOk;
  }
  fmt::print("{:>5}  {:<10}  {:<20}  {:<6}  {:>7}  {:>7}  {:<24}  {:<14}  {}\n", "run", "status", "started (UTC)",
             "source", "targets", "threads", "shapes", "model sha256", "model");
  for (const RunSummary& r : *runs) {
    fmt::print("{:>5}  {:<10}  {:<20}  {:<6}  {:>3}/{:<3}  {:>7}  {:<24}  {:<14}  {}\n", r.id, r.status, r.started_at,
               r.source, r.targets_ok, r.targets, r.threads > 0 ? std::to_string(r.threads) : "-",
               r.shapes.empty() ? "-" : r.shapes, r.model_sha256.substr(0, 12) + "..", r.model_path);
  }
  if (runs->empty()) fmt::print("(no runs{})\n", sha256 ? " of this model" : "");
  return kExitOk;
}

// chipfit history --delete RUN_ID...: removes the runs with their targets and layers. Every id is
// checked before the first is deleted, so a typo in one id deletes nothing.
int RunHistoryDelete(const std::vector<int64_t>& run_ids, const std::string& db, bool json) {
  auto store = OpenStore(db);
  if (!store.ok()) return Fail(store.status());
  auto runs = (*store)->ListRuns();
  if (!runs.ok()) return Fail(runs.status());
  for (const int64_t id : run_ids) {
    if (std::none_of(runs->begin(), runs->end(), [id](const RunSummary& r) { return r.id == id; })) {
      return Fail(
          NotFound(fmt::format("run {} is not in {} (chipfit history lists the stored runs); nothing was deleted", id,
                               (*store)->path().string())));
    }
  }
  nlohmann::json deleted = nlohmann::json::array();
  for (const int64_t id : run_ids) {
    if (Status s = (*store)->DeleteRun(id); !s.ok()) return Fail(s);
    deleted.push_back(id);
    if (!json) fmt::print("deleted run {} from {}\n", id, (*store)->path().string());
  }
  if (json) std::cout << nlohmann::json{{"db", (*store)->path().string()}, {"deleted", deleted}}.dump(2) << "\n";
  return kExitOk;
}

struct DiffFlags {
  bool json = false;
  bool force = false;                 // compare runs that measured different things
  bool fail_on_inconclusive = false;  // exit 1 on an inconclusive verdict too
  int confirm = 0;                    // an inconclusive verdict: profile B's model this many more times
};

// Prints the runs' differences; with --force they are compared anyway (said on top), else refused.
// Returns true when the comparison may go on.
bool CheckComparable(const nlohmann::json& diff, bool force, const std::string& what) {
  const auto& differences = diff["differences"];
  if (differences.empty()) return true;
  fmt::print(stderr, "{} {} measured different things:\n", what,
             force ? "are compared although they" : "not compared: they");
  for (const auto& d : differences) fmt::print(stderr, "  - {}\n", d.get<std::string>());
  if (!force) fmt::print(stderr, "(--force compares them anyway)\n");
  return force;
}

// The diff's verdict line of a target.
std::string VerdictText(const nlohmann::json& t) {
  std::string verdict = t.value("verdict", "inconclusive");
  if (verdict == "regressed") {
    std::string text = "REGRESSED";
    if (t.value("latency_regression", false)) text += " (latency)";
    if (t.value("drift_regression", false)) text += " (drift)";
    return text;
  }
  if (verdict == "inconclusive") return "INCONCLUSIVE (too noisy to tell)";
  return verdict;
}

// "; machine busy in B (34 % CPU used by others)" when a run was timed on a busy machine, else "".
std::string BusyText(const nlohmann::json& t) {
  if (!t.contains("machine_busy")) return "";
  std::string text;
  for (const auto& b : t["machine_busy"]) {
    text += (text.empty() ? "" : ", ") + b["run"].get<std::string>();
    if (b.contains("run_id") && b["run_id"].is_number()) text += fmt::format(" run {}", b["run_id"].get<int64_t>());
    if (b["other_cpu_share"].is_number())
      text += fmt::format(" ({:.0f} % CPU used by others)", b["other_cpu_share"].get<double>() * 100);
  }
  return "; machine busy in " + text;
}

// What a target's verdict rests on: " (3 runs vs 1, 150 + 50 clean runs, 12 + 4 clean rounds)"; "after 2
// confirmation runs" when B's runs include `confirmations` of them. "" for a row without a latency verdict.
std::string RestsOnText(const nlohmann::json& t, const std::vector<int64_t>& confirmations) {
  if (!t.contains("a_runs") || !t.contains("a_samples")) return "";
  const int a_runs = t["a_runs"].get<int>(), b_runs = t["b_runs"].get<int>();
  int confirmed = 0;
  for (const auto& id : t.value("b_run_ids", nlohmann::json::array())) {
    if (id.is_number() &&
        std::find(confirmations.begin(), confirmations.end(), id.get<int64_t>()) != confirmations.end())
      ++confirmed;
  }
  std::string text = fmt::format(
      " ({} run{} vs {}{}, {} + {} clean runs", a_runs, a_runs == 1 ? "" : "s", b_runs,
      confirmed > 0 ? fmt::format(" after {} confirmation run{}", confirmed, confirmed == 1 ? "" : "s") : std::string(),
      t["a_samples"].get<int64_t>(), t["b_samples"].get<int64_t>());
  if (t["a_clean_rounds"].is_number() && t["b_clean_rounds"].is_number()) {
    text +=
        fmt::format(", {} + {} clean rounds", t["a_clean_rounds"].get<int64_t>(), t["b_clean_rounds"].get<int64_t>());
  }
  return text + ")";
}

// The targets of a diff a confirmation profiles again: inconclusive ones, and latency changes that rest on
// one run of B.
std::vector<std::string> TargetsToConfirm(const nlohmann::json& diff) {
  std::vector<std::string> out;
  // No comparable baseline (every earlier run measured something else): nothing to confirm.
  if (!diff.is_object() || !diff.contains("targets") || !diff["targets"].is_array()) return out;
  for (const auto& t : diff["targets"]) {
    // A latency change seen in one run of B may be that run's load, not the build: it is measured
    // again like an inconclusive one (one run has no between-run spread to tell them apart).
    const std::string latency = t.value("latency_verdict", "");
    const bool single_b = t.value("b_runs", 1) <= 1;
    if (t.value("verdict", "") == "inconclusive" || (single_b && (latency == "regressed" || latency == "improved"))) {
      out.push_back(t["target"].get<std::string>());
    }
  }
  return out;
}

// "3" or "3,4" (RUN_A, RUN_B of `diff`): run ids, each given once.
Result<std::vector<int64_t>> ParseRunIds(const std::string& text, const char* what) {
  std::vector<int64_t> ids;
  for (const std::string& item : SplitList(text)) {
    char* end = nullptr;
    errno = 0;
    const long long id = std::strtoll(item.c_str(), &end, 10);
    if (end == item.c_str() || *end != '\0' || errno != 0 || id < 1) {
      return InvalidArgument(
          fmt::format("{} '{}': expected a run id or run ids, comma-separated (3 or 3,4)", what, text));
    }
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) {
      return InvalidArgument(fmt::format("{} '{}': run {} is given twice", what, text, id));
    }
    ids.push_back(id);
  }
  if (ids.empty())
    return InvalidArgument(fmt::format("{} '{}': expected a run id or run ids, comma-separated", what, text));
  return ids;
}

// The options that profile stored run `run`'s model again with its settings (`diff --confirm`): model
// file, input shapes, inputs (data folder and its preprocessing, or seed), iterations, warm-up, minimum
// time, time budget, threads, reference, int8 calibration; only `targets`. A model that no longer exists or has
// changed since (sha256), or a data folder that is gone, is an error naming it.
Result<ProfileOptions> ConfirmOptions(const nlohmann::json& run, const std::vector<std::string>& targets,
                                      const std::string& db) {
  const nlohmann::json empty = nlohmann::json::object();
  const int64_t id = run.value("run_id", int64_t{0});
  const nlohmann::json& model = run.contains("model") ? run["model"] : empty;
  const std::string path = model.value("path", "");
  std::error_code ec;
  if (path.empty() || !std::filesystem::is_regular_file(path, ec)) {
    return InvalidArgument(
        fmt::format("--confirm: run {}'s model '{}' no longer exists, so it cannot be profiled again", id, path));
  }
  ASSIGN_OR_RETURN(const std::string sha, Sha256File(path));
  const std::string stored_sha = model.value("sha256", "");
  if (sha != stored_sha) {
    return InvalidArgument(
        fmt::format("--confirm: run {}'s model '{}' has changed since it was profiled (sha256 {}.. then, {}.. now)", id,
                    path, stored_sha.substr(0, 12), sha.substr(0, 12)));
  }
  ProfileOptions o;
  for (const std::string& name : targets) {
    ASSIGN_OR_RETURN(Target target, ParseTarget(name));
    o.targets.push_back(target);
  }
  o.targets_text = Join(targets, ",");
  const nlohmann::json& inputs = run.contains("inputs") ? run["inputs"] : empty;
  if (inputs.contains("shapes") && inputs["shapes"].is_object()) {
    for (const auto& [name, dims] : inputs["shapes"].items()) {
      if (dims.is_string()) o.shapes.push_back(name + "=" + dims.get<std::string>());
    }
  }
  const std::string source = inputs.value("source", "");
  if (source.rfind("data ", 0) == 0) {
    o.data_dir = source.substr(5);
    if (!std::filesystem::is_directory(o.data_dir, ec)) {
      return InvalidArgument(fmt::format("--confirm: run {}'s data folder '{}' no longer exists", id, o.data_dir));
    }
    // Images: the preprocessing as resolved then (ParsePreprocess reads it back); audio: its sample rate.
    const std::string kind = inputs.value("kind", "");
    const nlohmann::json preprocess = inputs.value("preprocess", nlohmann::json(nullptr));
    if (kind == "images" && preprocess.is_string()) {
      ASSIGN_OR_RETURN(o.data.preprocess, ParsePreprocess(preprocess.get<std::string>()));
    } else if (kind == "audio" && preprocess.is_string()) {
      const std::string text = preprocess.get<std::string>();
      if (const auto at = text.find("sample_rate="); at != std::string::npos)
        o.data.sample_rate = std::atoi(text.c_str() + at + 12);
    }
  } else if (inputs.contains("seed") && inputs["seed"].is_number_unsigned()) {
    o.seed = inputs["seed"].get<uint64_t>();
  }
  const nlohmann::json& settings = run.contains("settings") ? run["settings"] : empty;
  o.iterations = settings.value("iterations", o.iterations);
  o.warmup = settings.value("warmup", o.warmup);
  o.min_time_s = settings.value("min_time_s", o.min_time_s);
  o.reference = settings.value("reference", o.reference);
  o.threads = settings.value("threads", 0);
  // A run made with --oversubscribe (more threads than cores) is confirmed the same way.
  o.oversubscribe = settings.value("cores", 0) > 0 && o.threads > settings.value("cores", 0);
  o.max_time_s = settings.value("max_time_s", 0.0);
  if (const auto method = ParseCalibrationMethod(settings.value("calibration", ""))) o.calibration = *method;
  o.int8_all_layers = settings.value("int8_layers", "") == "all";
  o.db = db;
  o.store = true;
  o.source = "cli";
  o.command = g_command_line;
  return o;
}

// How a confirmation run's command ends: "… (confirmation 1/2 of run 5)"; `batch`'s `baseline: latest`
// skips such runs.
constexpr std::string_view kConfirmationMark = "(confirmation ";

// `count` more profiles with `base` (a confirmation of run `of`), each stored, with `say` a line per run on
// standard error. The runs as the store holds them; `interrupted` when Ctrl-C stopped one (the finished ones are
// returned).
Result<std::vector<nlohmann::json>> RunConfirmations(const ProfileOptions& base, const std::filesystem::path& model,
                                                     int count, int64_t of, bool say, bool& interrupted) {
  std::vector<nlohmann::json> runs;
  interrupted = false;
  for (int i = 1; i <= count; ++i) {
    ProfileOptions options = base;
    options.command = fmt::format("{} {}{}/{} of run {})", base.command, kConfirmationMark, i, count, of);
    ProfileSession session(options);
    RETURN_IF_ERROR(session.Validate());
    const SigintScope sigint;
    std::stop_source stop;
    std::jthread watcher = InterruptWatcher(stop);
    ProfileEvents quiet;
    auto run = session.Run(model, quiet, stop.get_token());
    watcher.request_stop();
    watcher.join();
    if (!run.ok()) return run.status();
    if (stop.stop_requested()) {
      interrupted = true;
      return runs;
    }
    nlohmann::json stored = RunResultToJson(**run);
    if ((*run)->run_id) {
      ASSIGN_OR_RETURN(auto store, RunStore::Open(base.db.empty() ? RunStore::DefaultPath() : base.db));
      ASSIGN_OR_RETURN(stored, store->LoadRun(*(*run)->run_id));
    }
    std::string timings;
    for (const auto& t : stored.value("targets", nlohmann::json::array())) {
      const nlohmann::json latency = t.value("latency_ms", nlohmann::json(nullptr));
      timings += (timings.empty() ? "" : ", ") + t.value("target", "") + " " +
                 (t.value("status", "") == "ok" && latency.is_object() && latency.contains("p50")
                      ? fmt::format("p50 {:.4g} ms", latency["p50"].get<double>())
                      : t.value("status", ""));
    }
    if (say) {
      fmt::print(stderr, "confirmation {}/{} of run {}: {}{}\n", i, count, of,
                 (*run)->run_id ? fmt::format("stored as run {}; ", *(*run)->run_id) : std::string(), timings);
    }
    runs.push_back(std::move(stored));
  }
  return runs;
}

// NOLINTNEXTLINE(bugprone-exception-escape): nlohmann::json's destructor may allocate (an explicit stack)
struct BaselineComparison {
  int regressions = 0, inconclusive = 0;
  std::string text;                   // for the batch table: "1 regressed vs run 3", "no comparable baseline"
  std::vector<std::string> details;   // a line per target that regressed, was inconclusive or was confirmed
  int64_t baseline_id = 0;            // the baseline compared with; 0: none was comparable
  nlohmann::json baseline = nullptr;  // its run
  nlohmann::json diff = nullptr;      // and the comparison
};

// The counts, table text and detail lines of `out.diff`; `confirmations`: B's confirmation runs in it.
void SummarizeComparison(BaselineComparison& out, const std::vector<int64_t>& confirmations) {
  const nlohmann::json& diff = out.diff;
  out.regressions = diff["regressions"].get<int>();
  out.inconclusive = diff["inconclusive"].get<int>();
  out.text = fmt::format(
      "{} regressed{} vs run {}{}", out.regressions,
      out.inconclusive ? fmt::format(", {} inconclusive", out.inconclusive) : std::string(), out.baseline_id,
      confirmations.empty() ? std::string() : fmt::format(" after {} confirmation run(s)", confirmations.size()));
  out.details.clear();
  for (const auto& t : diff["targets"]) {
    const std::string verdict = t.value("verdict", "");
    const bool confirmed = t.value("b_runs", 1) > 1 && !confirmations.empty();
    if (verdict != "regressed" && verdict != "inconclusive" && !confirmed) continue;
    std::string numbers;
    if (t.contains("ratio")) {
      numbers = fmt::format(" (B/A {:.3f}", t["ratio"].get<double>());
      if (t.contains("ci_low"))
        numbers += fmt::format(" [{:.3f}, {:.3f}]", t["ci_low"].get<double>(), t["ci_high"].get<double>());
      numbers += ")";
    }
    out.details.push_back(fmt::format("  vs run {}: {} {}{}{}{}", out.baseline_id, t["target"].get<std::string>(),
                                      VerdictText(t), numbers, RestsOnText(t, confirmations), BusyText(t)));
  }
}

// This run against its baseline: the first candidate that measured the same thing (model, shapes,
// threads, machine, inputs, calibration). An explicit baseline that differs is an error naming the
// differences; with `latest`, runs that differ are skipped and, when none is left, that is said.
Result<BaselineComparison> CompareWithBaseline(const std::string& db_path, const std::vector<int64_t>& candidates,
                                               const nlohmann::json& run, bool latest) {
  ASSIGN_OR_RETURN(auto store, RunStore::Open(db_path));
  BaselineComparison out;
  std::string first_difference;
  for (const int64_t id : candidates) {
    ASSIGN_OR_RETURN(nlohmann::json baseline, store->LoadRun(id));
    nlohmann::json diff = DiffRuns(baseline, run);
    if (!diff["differences"].empty()) {
      if (!latest) {
        std::string what;
        for (const auto& d : diff["differences"]) what += "; " + d.get<std::string>();
        return InvalidArgument(fmt::format("baseline: run {} measured something else{}", id, what));
      }
      if (first_difference.empty()) first_difference = diff["differences"][0].get<std::string>();
      continue;
    }
    out.baseline_id = id;
    out.baseline = std::move(baseline);
    out.diff = std::move(diff);
    SummarizeComparison(out, {});
    return out;
  }
  out.text = fmt::format("no comparable baseline ({} earlier run(s) differ: {})", candidates.size(), first_difference);
  return out;
}

// chipfit batch MANIFEST.yaml: models × targets × limits, every run stored, reports written, a final
// table; exit 1 when a model breaks its limits or regresses against its baseline (a CI gate).
int RunBatch(const std::string& manifest_path, const std::string& db, const std::string& shard,
             const std::string& out_dir, bool quiet, bool fail_on_inconclusive, std::optional<int> confirm_flag) {
  auto manifest = ReadBatchManifest(manifest_path);
  if (!manifest.ok()) return Fail(manifest.status());
  fail_on_inconclusive = fail_on_inconclusive || manifest->fail_on_inconclusive;
  // Confirmation profiles of a model inconclusive against its baseline: --confirm, else the manifest's
  // confirm:, else 2.
  const int confirm = confirm_flag ? *confirm_flag : manifest->confirm.value_or(2);
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
    int inconclusive = 0;
    int exit_code = 0;
  };
  std::vector<Row> rows;
  int exit_code = kExitOk;
  for (size_t i = 0; i < manifest->models.size(); ++i) {
    if (static_cast<int>(i % static_cast<size_t>(shard_count)) != shard_index - 1) continue;
    const BatchModel& bm = manifest->models[i];
    Row row;
    row.model = bm.path.string();
    // Baseline candidates, listed before this run is stored: the given run, or this model's finished
    // runs newest first (`latest`: the newest that measured the same thing as this run). A confirmation
    // run (of `--confirm`, the inconclusive targets only) is no baseline of its own.
    std::vector<int64_t> candidates;
    if (manifest->baseline_run) candidates.push_back(*manifest->baseline_run);
    if (manifest->baseline_latest) {
      auto sha = Sha256File(bm.path);
      if (!sha.ok()) return Fail(sha.status());
      auto store = RunStore::Open(db_path);
      if (!store.ok()) return Fail(store.status());
      auto runs = (*store)->ListRuns(*sha);
      if (!runs.ok()) return Fail(runs.status());
      for (const RunSummary& r : *runs) {
        if (r.status == "ok" && r.command.find(std::string(kConfirmationMark)) == std::string::npos)
          candidates.push_back(r.id);
      }
    }
    ProfileFlags flags;
    flags.targets = bm.targets ? (*bm.targets == "all" ? "" : *bm.targets) : manifest->targets;
    flags.all_targets = bm.targets ? *bm.targets == "all" : manifest->all_targets;
    flags.iterations = manifest->iterations;
    flags.warmup = manifest->warmup;
    flags.min_time = manifest->min_time;
    flags.threads = manifest->threads;
    flags.data_dir = bm.data;
    flags.preprocess = bm.preprocess ? *bm.preprocess : manifest->preprocess;
    flags.sample_rate = bm.sample_rate ? *bm.sample_rate : manifest->sample_rate;
    flags.quiet = quiet;
    flags.db = db_path;
    flags.limits = manifest->recommend;
    if (bm.limits) flags.limits.limits = *bm.limits;
    const BatchCalibration& calibration = bm.calibration ? *bm.calibration : manifest->calibration;
    flags.quant.method = calibration.method;
    flags.quant.percentile = calibration.percentile;
    flags.quant.samples = calibration.samples;
    flags.quant.keep_fp32 = Join(calibration.keep_fp32, ",");
    flags.quant.auto_fp32_sqnr = calibration.auto_fp32_sqnr;
    flags.quant.auto_fp32_agreement = calibration.auto_fp32_agreement;
    flags.quant.int8_all_layers = calibration.int8_all_layers;
    if (!quiet) fmt::print("\n== {} ({}/{})\n", bm.path.string(), i + 1, manifest->models.size());
    std::shared_ptr<const RunResult> result;
    row.exit_code = RunProfile(bm.path.string(), bm.shapes, flags, &result);
    if (row.exit_code == 130) return 130;
    if (row.exit_code == kExitInputError || result == nullptr) {
      row.verdict = "error (see above)";
      row.best = "-";
      rows.push_back(row);
      exit_code = kExitInputError;
      continue;
    }
    const nlohmann::json run = RunResultToJson(*result);
    const nlohmann::json& rec = result->recommendation;
    row.best = rec["best"].is_string() ? rec["best"].get<std::string>() : "-";
    for (const auto& s : rec["scores"]) {
      if (s["target"] == rec["best"]) row.p50 = s["p50_ms"].get<double>();
    }
    row.verdict = row.exit_code == 1 ? "limits broken" : "ok";
    // Targets that failed inside an otherwise good run: said even with --quiet, which hides the summary.
    int failed = 0;
    for (const auto& t : result->targets) {
      if (t->status != "failed") continue;
      ++failed;
      fmt::print(stderr, "chipfit: {}: target {} failed: {}\n", bm.path.string(), t->target.ToString(), t->error);
    }
    if (failed > 0) row.verdict += fmt::format(", {} target(s) failed", failed);
    if (!candidates.empty()) {
      auto compared = CompareWithBaseline(db_path, candidates, run, manifest->baseline_latest);
      if (!compared.ok()) return Fail(compared.status());
      // Inconclusive against the baseline, or a latency change resting on this one run: this model profiled
      // again, those targets only, with this run's options and thread count, and the verdict taken on all
      // of this side's runs.
      if (!TargetsToConfirm(compared->diff).empty() && confirm > 0 && compared->baseline_id != 0) {
        ProfileFlags again = flags;
        again.targets = Join(TargetsToConfirm(compared->diff), ",");
        again.all_targets = false;
        again.quiet = true;
        auto options = ProfileOptionsFromFlags(bm.shapes, again);
        if (!options.ok()) return Fail(options.status());
        if (run.contains("settings") && run["settings"].contains("threads")) {
          const nlohmann::json& settings = run["settings"];
          options->threads = settings["threads"].get<int>();
          options->oversubscribe = settings.value("cores", 0) > 0 && options->threads > settings.value("cores", 0);
        }
        const int64_t run_id = result->run_id.value_or(0);
        if (!quiet) {
          fmt::print("  vs run {}: {} to confirm ({} inconclusive); profiling them again {} time(s)\n",
                     compared->baseline_id, again.targets, compared->inconclusive, confirm);
          std::fflush(stdout);
        }
        bool interrupted = false;
        auto more = RunConfirmations(*options, bm.path, confirm, run_id, !quiet, interrupted);
        if (interrupted) return 130;
        if (!more.ok()) return Fail(more.status());
        std::vector<nlohmann::json> side_b = {run};
        std::vector<int64_t> confirmations;
        for (nlohmann::json& r : *more) {
          if (r["run_id"].is_number()) confirmations.push_back(r["run_id"].get<int64_t>());
          side_b.push_back(std::move(r));
        }
        nlohmann::json confirmed = DiffRunSets({compared->baseline}, side_b);
        if (confirmed["differences"].empty()) {
          compared->diff = std::move(confirmed);
          SummarizeComparison(*compared, confirmations);
        } else {
          fmt::print(stderr,
                     "chipfit: {}: the confirmation runs measured something else than run {} ({}); the "
                     "verdict stays on run {} alone\n",
                     bm.path.string(), compared->baseline_id, confirmed["differences"][0].get<std::string>(), run_id);
        }
      }
      row.regressions = compared->regressions;
      row.inconclusive = compared->inconclusive;
      row.verdict += ", " + compared->text;
      if (!quiet) {
        for (const std::string& line : compared->details) fmt::print("{}\n", line);
      }
    }
    if (!manifest->report.empty()) {
      std::string out = manifest->report;
      const std::string stem = bm.path.stem().string();
      for (size_t at = out.find("{model}"); at != std::string::npos; at = out.find("{model}", at + stem.size())) {
        out.replace(at, 7, stem);
      }
      // The manifest's report pattern may name folders of its own (reports/{model}.html): made here.
      std::error_code ec;
      if (std::filesystem::path(out).has_parent_path())
        std::filesystem::create_directories(std::filesystem::path(out).parent_path(), ec);
      if (Status written = WriteRunReport(*result, out); !written.ok()) return Fail(written);
      row.report = out;
    }
    if (row.exit_code == 1 || row.regressions > 0 || (fail_on_inconclusive && row.inconclusive > 0))
      exit_code = std::max(exit_code, 1);
    rows.push_back(row);
  }
  fmt::print("\n{:<40} {:<16} {:>9}  {:<40} {}\n", "model", "best target", "p50 ms", "verdict", "report");
  for (const Row& r : rows) {
    // A model with no recommended target (it failed, or broke every limit) has no p50 to show.
    const std::string p50 = r.best == "-" || r.best.empty() ? "-" : fmt::format("{:.3f}", r.p50);
    fmt::print("{:<40} {:<16} {:>9}  {:<40} {}\n", r.model, r.best.empty() ? "-" : r.best, p50, r.verdict, r.report);
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

// A stored run (RUN_ID) or a profile JSON written by `profile --json` (--in FILE), read into the typed run.
Result<RunResult> LoadRunOrProfile(const std::optional<int64_t>& run_id, const std::string& json_in,
                                   const std::string& db) {
  nlohmann::json run;
  if (run_id) {
    auto store = OpenStore(db);
    if (!store.ok()) return store.status();
    ASSIGN_OR_RETURN(run, (*store)->LoadRun(*run_id));
  } else {
    std::ifstream in(json_in);
    if (!in) return NotFound("cannot read '" + json_in + "'");
    run = nlohmann::json::parse(in, nullptr, false);
    if (run.is_discarded() || !run.is_object() || !run.contains("targets")) {
      return ParseError("'" + json_in + "' is not a chipfit profile JSON (schema chipfit.profile/1)");
    }
  }
  auto typed = RunResultFromJson(run);
  if (!typed.ok()) {
    return Status(typed.status().code(),
                  (run_id ? fmt::format("run {}: ", *run_id) : "'" + json_in + "': ") + typed.status().message());
  }
  return typed;
}

struct ProjectFlags {
  std::vector<std::string> models;
  std::vector<std::string> shapes;
  std::string hardware;
  bool all_hardware = false;
  std::vector<std::string> hardware_files;
  std::string precisions;
  std::string json_file;
  std::string from_json;
  bool validate = false;
  bool validate_published = false;
  std::string published_dir;
  std::string write_efficiency;
  std::string configurations;
  std::string work_dir = "chipfit-validation";
  int iterations = 20;
  double min_time = 0.5;
  bool quiet = false;
};

// chipfit project --validate MODEL...: held-out local configurations projected and measured.
int RunProjectValidation(const ProjectFlags& f) {
  ValidationOptions o;
  for (const auto& m : f.models) {
    if (!std::filesystem::exists(m)) return Fail(NotFound("project --validate: no model file '" + m + "'"));
    o.models.emplace_back(m);
  }
  o.shapes = f.shapes;
  o.chipfit = std::filesystem::read_symlink("/proc/self/exe");
  o.work_dir = f.work_dir;
  o.iterations = f.iterations;
  o.min_time_s = f.min_time;
  o.configurations = SplitList(f.configurations);
  auto result = ValidateProjection(o, [&](const std::string& line) {
    if (!f.quiet) fmt::print(stderr, "{}\n", line);
  });
  if (!result.ok()) return Fail(result.status());
  if (!f.json_file.empty()) {
    if (Status s = WriteJsonFile(f.json_file, *result); !s.ok()) return Fail(s);
  }
  fmt::print("{}", ValidationTable(*result));
  return kExitOk;
}

// chipfit project --validate-published: every published measurement projected with its device left out.
int RunPublishedValidation(const ProjectFlags& f) {
  if (!f.models.empty()) return Fail(InvalidArgument("project --validate-published takes no MODEL"));
  auto catalog = LoadHardwareCatalog(DefaultHardwareDir());
  if (!catalog.ok()) return Fail(catalog.status());
  const std::filesystem::path dir =
      f.published_dir.empty() ? DefaultValidationDir() : std::filesystem::path(f.published_dir);
  for (const auto& [flag, path] :
       {std::pair{"--json", f.json_file}, std::pair{"--write-efficiency", f.write_efficiency}}) {
    if (!path.empty()) {
      if (Status s = CheckWritable(path, flag); !s.ok()) return Fail(s);
    }
  }
  auto result = ValidatePublished(dir, *catalog);
  if (!result.ok()) return Fail(result.status());
  if (!f.json_file.empty()) {
    if (Status s = WriteJsonFile(f.json_file, result->document); !s.ok()) return Fail(s);
  }
  if (!f.write_efficiency.empty()) {
    if (Status s = WriteJsonFile(f.write_efficiency, PublishedEfficiencyToJson(result->efficiency)); !s.ok())
      return Fail(s);
  }
  fmt::print("{}", PublishedValidationTable(result->document));
  return kExitOk;
}

// chipfit project MODEL: projected targets on catalog hardware, calibrated on a profile of this machine.
int RunProject(const ProjectFlags& f) {
  if (f.validate_published) return RunPublishedValidation(f);
  if (f.models.empty()) return Fail(InvalidArgument("project: give a MODEL"));
  if (f.validate) return RunProjectValidation(f);
  if (f.models.size() > 1) return Fail(InvalidArgument("project: one MODEL at a time (several only with --validate)"));
  ProjectRequest request;
  request.hardware = SplitList(f.hardware);
  request.all_hardware = f.all_hardware;
  request.hardware_files = f.hardware_files;
  for (const auto& text : SplitList(f.precisions)) {
    auto p = ParsePrecision(text);
    if (!p) return Fail(InvalidArgument("--precisions: '" + text + "' is not fp32, tf32, fp16, bf16 or int8"));
    request.precisions.push_back(*p);
  }
  auto hardware = SelectHardware(request);
  if (!hardware.ok()) return Fail(hardware.status());
  if (!f.json_file.empty()) {
    if (Status s = CheckWritable(f.json_file, "--json"); !s.ok()) return Fail(s);
  }
  RunResult run;
  if (!f.from_json.empty()) {
    auto loaded = LoadRunOrProfile(std::nullopt, f.from_json, "");
    if (!loaded.ok()) return Fail(loaded.status());
    run = std::move(*loaded);
    // The profile must be of MODEL: a projection of another model's layers would be wrong silently.
    auto sha = Sha256File(f.models.front());
    if (!sha.ok()) return Fail(sha.status());
    if (!run.model.sha256.empty() && *sha != run.model.sha256) {
      return Fail(
          InvalidArgument(fmt::format("--from-json {}: that profile is of {} (sha256 {}…), not of {}", f.from_json,
                                      run.model.path, run.model.sha256.substr(0, 12), f.models.front())));
    }
    if (!f.shapes.empty()) {
      return Fail(InvalidArgument("--from-json: the profile's own shapes are used; --shape does not apply"));
    }
  } else {
    // Calibration: every target this machine offers, a short profile each (no store, one drift sample).
    ProfileOptions o;
    o.all_targets = true;
    o.targets_text = "all";
    o.shapes = f.shapes;
    o.iterations = f.iterations;
    o.min_time_s = f.min_time;
    o.warmup = 3;
    o.drift_samples = 1;
    o.store = false;
    o.command = "chipfit project";
    ProfileSession session(o);
    CliProgress progress(f.quiet);
    auto profiled = session.Run(f.models.front(), progress);
    if (!profiled.ok()) return Fail(profiled.status());
    run = **profiled;
  }
  auto document = ProjectRun(run, *hardware, request.precisions);
  if (!document.ok()) return Fail(document.status());
  if (!f.json_file.empty()) {
    if (Status s = WriteJsonFile(f.json_file, *document); !s.ok()) return Fail(s);
  }
  fmt::print("{}", ProjectionTable(*document));
  return kExitOk;
}

// chipfit recommend RUN_ID | --in FILE: the recommendation for a stored run or a profile JSON.
int RunRecommend(const std::optional<int64_t>& run_id, const std::string& json_in, const std::string& db,
                 const LimitFlags& limits, const std::string& json_out) {
  if (run_id.has_value() == !json_in.empty()) return Fail(InvalidArgument("recommend: give RUN_ID or --in FILE"));
  auto run = LoadRunOrProfile(run_id, json_in, db);
  if (!run.ok()) return Fail(run.status());
  auto r = RecommendRun(*run, limits);
  if (!r.ok()) return Fail(r.status());
  if (!json_out.empty()) {
    std::ofstream file(json_out);
    file << r->dump(2) << "\n";
    if (!file) return Fail(IoError("cannot write " + json_out));
  }
  PrintRecommendation(*r);
  return (*r)["best"].is_null() && limits.limits.any() ? 1 : kExitOk;
}

// chipfit report RUN_ID | --in FILE: a stored run (or a profile JSON) as HTML, PDF, CSV or JSON.
int RunReportCommand(const std::optional<int64_t>& run_id, const std::string& json_in, const std::string& db,
                     const std::string& format, const std::string& out) {
  if (run_id.has_value() == !json_in.empty()) return Fail(InvalidArgument("report: give RUN_ID or --in FILE"));
  if (format.empty()) {
    if (Status s = CheckReportPath(out); !s.ok()) return Fail(Status(s.code(), s.message() + "; or give --format"));
  }
  if (out != "-") {
    if (Status s = CheckWritable(out, "-o"); !s.ok()) return Fail(s);
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

// chipfit diff A B (or A1,A2 B1,B2): per target a verdict from the medians of the runs' stored samples and
// the (hierarchical) bootstrap interval of their ratio; per layer the changes beyond both runs' spread.
// With --confirm N, an inconclusive target (or a latency change resting on one run of B) is profiled N
// more times with the newest B run's settings and decided on all the runs. Exit 1 on a regression (and on an
// inconclusive target with
// --fail-on-inconclusive); 2 when the runs measured different things (model, shapes, threads, machine …)
// unless --force, or a run, the store or (--confirm) the model is missing.
int RunDiff(const std::string& runs_a, const std::string& runs_b, const std::string& db, const DiffFlags& flags) {
  auto ids_a = ParseRunIds(runs_a, "RUN_A");
  if (!ids_a.ok()) return Fail(ids_a.status());
  auto ids_b = ParseRunIds(runs_b, "RUN_B");
  if (!ids_b.ok()) return Fail(ids_b.status());
  auto store = OpenStore(db);
  if (!store.ok()) return Fail(store.status());
  std::vector<nlohmann::json> a, b;
  for (const auto& [ids, runs] : {std::pair{&*ids_a, &a}, std::pair{&*ids_b, &b}}) {
    for (const int64_t id : *ids) {
      auto run = (*store)->LoadRun(id);
      if (!run.ok()) return Fail(run.status());
      runs->push_back(std::move(*run));
    }
  }
  auto joined = [](const std::vector<int64_t>& ids) {
    std::string text;
    for (const int64_t id : ids) text += (text.empty() ? "" : ",") + std::to_string(id);
    return text;
  };
  const std::string what = fmt::format("runs {} and {}", joined(*ids_a), joined(*ids_b));
  nlohmann::json diff = DiffRunSets(a, b);
  if (!CheckComparable(diff, flags.force, what)) return kExitInputError;
  std::vector<int64_t> confirmations;
  if (const std::vector<std::string> targets = TargetsToConfirm(diff); flags.confirm > 0 && !targets.empty()) {
    // The newest B run (highest id) is profiled again: its model, inputs and settings, the targets to
    // confirm only, into the same store.
    const size_t newest = static_cast<size_t>(std::max_element(ids_b->begin(), ids_b->end()) - ids_b->begin());
    auto options = ConfirmOptions(b[newest], targets, db);
    if (!options.ok()) return Fail(options.status());
    fmt::print(stderr, "{} to confirm: profiling run {}'s model again {} time(s) with its settings\n",
               Join(targets, ", "), (*ids_b)[newest], flags.confirm);
    bool interrupted = false;
    auto more = RunConfirmations(*options, b[newest]["model"]["path"].get<std::string>(), flags.confirm,
                                 (*ids_b)[newest], true, interrupted);
    if (!more.ok()) return Fail(more.status());
    for (nlohmann::json& run : *more) {
      if (run["run_id"].is_number()) confirmations.push_back(run["run_id"].get<int64_t>());
      b.push_back(std::move(run));
    }
    if (interrupted) return 130;
    diff = DiffRunSets(a, b);
    diff["confirmation_runs"] = confirmations;
    if (!CheckComparable(diff, flags.force, what + " and their confirmation runs")) return kExitInputError;
  }
  const int regressions = diff["regressions"].get<int>();
  const int inconclusive = diff["inconclusive"].get<int>();
  const int exit_code = regressions > 0 || (flags.fail_on_inconclusive && inconclusive > 0) ? 1 : kExitOk;
  if (flags.json) {
    std::cout << diff.dump(2) << "\n";
    return exit_code;
  }
  auto str = [](const nlohmann::json& j, const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string("-");
  };
  for (const auto& [side, runs] : {std::pair{"A", &a}, std::pair{"B", &b}}) {
    for (const nlohmann::json& run : *runs) {
      const nlohmann::json id = run.value("run_id", nlohmann::json(nullptr));
      const bool confirmation = id.is_number() && std::find(confirmations.begin(), confirmations.end(),
                                                            id.get<int64_t>()) != confirmations.end();
      fmt::print("{}: run {} ({}, {}){}\n", side, id.is_number() ? id.dump() : "-", str(run, "status"),
                 str(run, "started_at"), confirmation ? " (confirmation)" : "");
    }
  }
  for (const auto& note : diff["notes"]) fmt::print("note: {}\n", note.get<std::string>());
  fmt::print("\n{:<16} {:>10} {:>10} {:>8} {:>19} {:>14}  {}\n", "target", "A p50 ms", "B p50 ms", "B/A",
             "95 % interval B/A", "SQNR A→B dB", "verdict");
  std::string method;
  bool busy = false;
  for (const auto& t : diff["targets"]) {
    const std::string name = t["target"];
    if (t.contains("change")) {
      fmt::print("{:<16} {}\n", name, t["change"].get<std::string>() == "added" ? "only in B" : "only in A");
      continue;
    }
    if (!t.contains("ratio")) {
      fmt::print("{:<16} A {} / B {}{}\n", name, str(t, "a_status"), str(t, "b_status"),
                 t.value("regression", false)       ? "  REGRESSED (no longer runs)"
                 : str(t, "verdict") == "cancelled" ? "  not compared: stopped before it finished"
                                                    : "");
      continue;
    }
    std::string sqnr = "-";
    if (t.contains("a_sqnr_db")) {
      sqnr = fmt::format("{:.1f}→{:.1f}", t["a_sqnr_db"].get<double>(), t["b_sqnr_db"].get<double>());
    }
    const std::string interval =
        t.contains("ci_low") ? fmt::format("[{:.3f}, {:.3f}]", t["ci_low"].get<double>(), t["ci_high"].get<double>())
                             : "-";
    // The interval of a target confirmed on more runs says more than the others'.
    if (method.empty() || t.value("b_runs", 1) > 1 || t.value("a_runs", 1) > 1) method = str(t, "method");
    fmt::print("{:<16} {:>10.4g} {:>10.4g} {:>7.3f}x {:>19} {:>14}  {}\n", name, t["a_p50_ms"].get<double>(),
               t["b_p50_ms"].get<double>(), t["ratio"].get<double>(), interval, sqnr,
               VerdictText(t) + RestsOnText(t, confirmations) + BusyText(t));
    busy = busy || t.contains("machine_busy");
    // The flagged layers that added the most time first; a long tail is counted, not printed.
    std::vector<const nlohmann::json*> flagged;
    for (const auto& l : t["layers"]) {
      if (l.value("regression", false)) flagged.push_back(&l);
    }
    auto ms = [](const nlohmann::json& l, const char* key) {
      return l.contains(key) && l[key].is_number() ? l[key].get<double>() : 0.0;
    };
    auto added = [&](const nlohmann::json* l) { return ms(*l, "b_ms") - ms(*l, "a_ms"); };
    std::stable_sort(flagged.begin(), flagged.end(), [&](auto* x, auto* y) { return added(x) > added(y); });
    constexpr size_t kShownLayers = 10;
    for (size_t i = 0; i < std::min(flagged.size(), kShownLayers); ++i) {
      const nlohmann::json& l = *flagged[i];
      fmt::print("    layer {:<28} {:<18} {:>8.3f} → {:>8.3f} ms ({:.2f}x){}{}\n", l["name"].get<std::string>(),
                 l["op"].get<std::string>(), ms(l, "a_ms"), ms(l, "b_ms"), ms(l, "ratio"),
                 l.contains("sqnr_change_db") ? fmt::format(", SQNR {:+.1f} dB", l["sqnr_change_db"].get<double>())
                                              : std::string(),
                 l.value("same_kernel", false) ? ", the same kernel beyond its noise" : "");
    }
    if (flagged.size() > kShownLayers) {
      fmt::print("    … {} more layer(s) flagged (--json lists every layer)\n", flagged.size() - kShownLayers);
    }
    // Layers whose kernel, precision and device are the same on both sides differ by the moment they
    // were timed: said once, never as faster or slower.
    size_t same = 0;
    for (const auto& l : t["layers"]) same += l.value("verdict", std::string()) == "same kernel" ? 1 : 0;
    if (same > 0) {
      fmt::print("    {} layer(s) ran the same kernel on both sides: \"same kernel\", not faster or slower\n", same);
    }
  }
  fmt::print(
      "\n{} regressed, {} improved, {} inconclusive{} (a change within ±5 % of the median is unchanged)\n", regressions,
      diff["improvements"].get<int>(), inconclusive,
      confirmations.empty() ? std::string() : fmt::format(" after {} confirmation run(s)", confirmations.size()));
  if (!method.empty()) fmt::print("interval: {}\n", method);
  std::fflush(stdout);  // the warnings below come after the table, also when both streams are one pipe
  if (busy) {
    fmt::print(stderr,
               "warning: a run was timed while other processes used the CPUs: its median may have moved with the "
               "load, which the interval cannot see; re-run both on a quiet machine before trusting a small change\n");
  }
  if (inconclusive > 0) {
    fmt::print(
        stderr, "warning: {} target(s) inconclusive{}: the runs are too noisy to tell a 5 % change from none; {}{}\n",
        inconclusive,
        confirmations.empty() ? std::string() : fmt::format(" after {} confirmation run(s)", confirmations.size()),
        flags.confirm > 0 ? "more confirmation runs (--confirm N), more --iterations / --min-time or a quieter "
                            "machine may tell"
                          : "--confirm N profiles B's model N more times and decides on all the runs; or "
                            "re-run with more --iterations / --min-time or on a quieter machine",
        flags.fail_on_inconclusive ? "" : " (--fail-on-inconclusive makes this exit 1)");
  }
  return exit_code;
}

// A command line CLI11 refused: one line saying what is wrong, the nearest command or flag when the
// user misspelt one ("--iters: did you mean --iterations?"), and where the usage is. Exit 2.
int UsageError(CLI::App& app, const CLI::ParseError& error, int argc, char** argv) {
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    commands.push_back(sub->get_name());
  std::string all;
  for (const std::string& c : commands) all += (all.empty() ? "" : ", ") + c;
  const std::string first = argc > 1 ? argv[1] : "";
  CLI::App* command = nullptr;
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == first) command = sub;
  }
  if (!first.empty() && first[0] != '-' && command == nullptr) {
    const auto nearest = NearestName(first, commands);
    fmt::print(stderr,
               "chipfit: error: unknown command '{}'{}; the commands are: {}\nRun 'chipfit --help' for usage.\n", first,
               nearest ? " (did you mean '" + *nearest + "'?)" : std::string(), all);
    return kExitInputError;
  }
  if (first.empty()) {
    fmt::print(stderr, "chipfit: error: give a command: {}\nRun 'chipfit --help' for usage.\n", all);
    return kExitInputError;
  }
  std::string hint;
  if (command != nullptr) {
    std::vector<std::string> flags;
    for (const CLI::Option* option : command->get_options()) {
      for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
    }
    for (int i = 2; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg.rfind("--", 0) != 0) continue;
      const std::string flag = arg.substr(0, arg.find('='));
      if (std::find(flags.begin(), flags.end(), flag) != flags.end()) continue;
      if (const auto nearest = NearestName(flag, flags)) hint += fmt::format("\n{}: did you mean {}?", flag, *nearest);
    }
  }
  fmt::print(stderr, "chipfit: error: {}{}\nRun 'chipfit {} --help' for usage.\n", error.what(), hint,
             command != nullptr ? command->get_name() : std::string());
  return kExitInputError;
}

// chipfit quantize: chipfit's own int8 calibration (the cpu:int8 compile's) written as a QDQ ONNX model
// that ONNX Runtime runs and chipfit imports again (core/quant/qdq_export.h says what the file holds).
struct QuantizeFlags {
  std::string model;
  std::vector<std::string> shapes;
  QuantFlags quant;
  uint64_t seed = 1;
  CLI::Option* seed_option = nullptr;
  std::string output;
  std::string output_qdq = "shared";
};

CLI::App* AddQuantizeCommand(CLI::App& app, QuantizeFlags& f) {
  auto* cmd = app.add_subcommand(
      "quantize", "Calibrate for cpu:int8 and write the model with QuantizeLinear/DequantizeLinear (QDQ ONNX)");
  cmd->add_option("MODEL", f.model, "Path to an .onnx file")->required();
  cmd->add_option("--shape", f.shapes, "Bind an input's dims: NAME=1x3x224x224 (repeatable)");
  f.quant.int8_all_layers = true;
  AddQuantFlags(cmd, f.quant, /*with_data=*/true, /*with_speed=*/false);
  f.seed_option = cmd->add_option("--seed", f.seed,
                                  "Calibrate on seeded random inputs instead of --data (a smoke test: the scales fit "
                                  "random data, not yours)");
  cmd->add_option("-o,--output", f.output, "The QDQ model to write (.onnx)")->required();
  cmd->add_option("--output-qdq", f.output_qdq,
                  "Which quantised layers' outputs get Q/DQ: shared (where a quantised layer reads them: the model "
                  "computes what chipfit's cpu:int8 does) or every (ONNX Runtime's full QDQ form: every layer fuses "
                  "to int8, at some accuracy)")
      ->check(CLI::IsMember({"shared", "every"}))
      ->default_str("shared");
  return cmd;
}

// The written model imported again and run on cpu:fp32 next to the original (fp32 and chipfit's int8):
// the lowest SQNR over the float outputs of each pair, on one calibration sample.
Status CheckWrittenModel(const QuantizeFlags& f, const OnnxLoadOptions& load, const Graph& original,
                         CompiledModel& int8_model, const std::map<std::string, Tensor>& sample) {
  ASSIGN_OR_RETURN(LoadedOnnxModel written, LoadOnnxModel(f.output, load));
  ASSIGN_OR_RETURN(Graph graph, ImportModel(written));
  const Target cpu_fp32{.kind = DeviceKind::kCpu, .precision = Precision::kFp32};
  ASSIGN_OR_RETURN(auto qdq, CompileForTarget(graph, cpu_fp32));
  ASSIGN_OR_RETURN(auto fp32, CompileForTarget(original, cpu_fp32));
  ASSIGN_OR_RETURN(auto a, qdq->Run(sample));
  ASSIGN_OR_RETURN(auto b, fp32->Run(sample));
  ASSIGN_OR_RETURN(auto c, int8_model.Run(sample));
  double vs_fp32 = 200, vs_int8 = 200;
  for (size_t i = 0; i < a.size() && i < b.size() && i < c.size(); ++i) {
    if (a[i].dtype() != DType::kF32) continue;
    vs_fp32 = std::min(vs_fp32, SqnrDb(a[i], b[i]));
    vs_int8 = std::min(vs_int8, SqnrDb(a[i], c[i]));
  }
  size_t qdq_nodes = 0;
  for (const Node& n : graph.nodes) qdq_nodes += n.op_type == "QuantizeLinear" || n.op_type == "DequantizeLinear";
  fmt::print(
      "check        imported again ({} nodes, {} Q/DQ); on cpu:fp32 its outputs vs the original's: SQNR "
      "{:.1f} dB vs fp32, {:.1f} dB vs chipfit's cpu:int8 (on the first calibration sample)\n",
      graph.nodes.size(), qdq_nodes, vs_fp32, vs_int8);
  return Status::Ok();
}

int RunQuantize(const QuantizeFlags& f) {
  const bool seeded = f.seed_option != nullptr && f.seed_option->count() > 0;
  if (f.quant.data_dir.empty() && !seeded) {
    return Fail(InvalidArgument(
        "quantize needs calibration inputs: --data DIR (real inputs), or --seed N for seeded random inputs"));
  }
  if (!f.quant.data_dir.empty() && seeded) return Fail(InvalidArgument("--seed and --data exclude each other"));
  if (Status s = CheckWritable(f.output, "-o"); !s.ok()) return Fail(s);
  auto load = LoadOptionsFor(f.shapes);
  if (!load.ok()) return Fail(load.status());
  // The file as it is (no bound shapes, no inferred value_info) is what the QDQ model is made from.
  auto raw = LoadOnnxModel(f.model, {.run_checker = false, .infer_shapes = false});
  if (!raw.ok()) return Fail(raw.status());
  auto model = CheckOnnxModel(raw->proto, f.model, *load);
  if (!model.ok()) return Fail(model.status());
  auto graph = ImportModel(*model);
  if (!graph.ok()) return Fail(graph.status());

  CompileOptions compile;
  auto int8 = MakeInt8Options(f.quant, *graph, compile);
  if (!int8.ok()) {
    const Status& s = int8.status();
    return Fail(s.message().starts_with("--") ? s : Status(s.code(), "--data: " + s.message()));
  }
  int8->seed = f.seed;
  const Target cpu_int8{.kind = DeviceKind::kCpu, .precision = Precision::kInt8};
  QuantReport report;
  auto compiled = CompileForTarget(*graph, cpu_int8, compile, *int8, &report);
  if (!compiled.ok()) return Fail(compiled.status());

  const std::map<std::string, Tensor> sample =
      int8->samples.empty() ? RandomCalibrationData(*graph, 1, f.seed).front() : int8->samples.front();
  auto ranks = KernelOutputRanks(**compiled, sample);
  if (!ranks.ok()) return Fail(ranks.status());
  QdqOptions options{.int8_nodes = Int8WeightedNodes(**compiled, *graph),
                     .keep_fp32 = {},
                     .origin = f.model,
                     .shaped = &model->proto,
                     .ranks = std::move(*ranks),
                     .outputs = f.output_qdq == "every" ? QdqOptions::Outputs::kEvery : QdqOptions::Outputs::kShared};
  for (const std::string& name : SplitList(f.quant.keep_fp32)) options.keep_fp32.insert(name);
  if (options.int8_nodes.empty()) {
    return Fail(InvalidArgument("'" + f.model + "': no Conv, MatMul or Gemm runs in int8 on cpu:int8 (" +
                                DescribeQuantReport(report) + "); nothing to quantise"));
  }
  auto exported = ExportQdq(raw->proto, report.table, options);
  if (!exported.ok()) return Fail(exported.status());
  if (Status s = WriteOnnxModel(exported->model, f.output); !s.ok()) return Fail(s);

  fmt::print("model        {} (opset {}{})\n", f.model, exported->from_opset,
             exported->to_opset != exported->from_opset ? fmt::format(" → {}", exported->to_opset) : "");
  fmt::print("calibration  {}\n", DescribeQuantReport(report));
  fmt::print(
      "quantized    {} nodes: activations u8 (int8 where chipfit's MatMul/Gemm take signed inputs), "
      "weights int8 per output channel, bias float\n",
      exported->quantized.size());
  std::vector<std::string> kept = report.kept_small;
  kept.insert(kept.end(), report.auto_reverted.begin(), report.auto_reverted.end());
  kept.insert(kept.end(), report.kept_fp32.begin(), report.kept_fp32.end());
  if (!kept.empty()) fmt::print("kept fp32    {} (as chipfit's cpu:int8 keeps them)\n", Join(kept, ", "));
  for (const std::string& k : exported->kept_fp32) fmt::print("kept fp32    {}\n", k);
  for (const std::string& note : exported->notes) fmt::print("note         {}\n", note);
  if (Status s = CheckWrittenModel(f, *load, *graph, **compiled, sample); !s.ok()) {
    return Fail(Status(s.code(), "the written model '" + f.output + "' does not load back: " + s.message()));
  }
  std::error_code ec;
  fmt::print("wrote        {} ({})\n", f.output, HumanBytes(std::filesystem::file_size(f.output, ec)));
  return kExitOk;
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
  int run_threads = 0;
  run->add_option("--threads", run_threads, "CPU threads (default: every core)")->check(CLI::NonNegativeNumber);
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
  profile->add_option("--batch", profile_flags.batches,
                      "Throughput mode: also profile at these batch sizes (1,4,16; the inputs' first dim rebound)");
  profile
      ->add_option("--streams", profile_flags.streams,
                   "Throughput mode: also run N concurrent inference streams at each batch, splitting the threads")
      ->capture_default_str();
  profile->add_option("--json", profile_flags.json_file, "Write the profile JSON (schema chipfit.profile/1) here");
  profile->add_option("--trace", profile_flags.trace_file,
                      "Write a Chrome trace / Perfetto JSON: a track per target, a slice per kernel");
  profile->add_option("--report", profile_flags.report_file,
                      "Write a report of the run; its extension picks the format (.html, .pdf, .csv, .json)");
  profile->add_option("--data", profile_flags.data_dir,
                      "Inputs (int8 calibrates on all, drift runs over all): a folder of <input>.npy or of sub-folders "
                      "each holding a set, of images (.png .jpg .bmp), or of mono .wav files");
  AddDataFlags(profile, profile_flags.preprocess, profile_flags.sample_rate);
  profile->add_option("--reference", profile_flags.reference, "Drift reference target (ref:fp32 or cpu:fp32)")
      ->capture_default_str();
  profile->add_option("--classifier-output", profile_flags.classifier_output,
                      "Output holding class scores for top-1 agreement (default: rank-2 outputs with > 1 class)");
  profile->add_option("--task", profile_flags.tasks,
                      "An output's task metric: OUTPUT=classify|detect|segment|lm|embedding|sequence|map|none "
                      "(default: chosen from the graph and the output's shape, printed with why; repeatable)");
  profile->add_option("--ctc-blank", profile_flags.ctc_blank, "The blank class a sequence output's CTC decoding drops")
      ->capture_default_str();
  profile
      ->add_option("--map-threshold", profile_flags.map_threshold,
                   "A map output's pixel counts as on at or above this probability (IoU)")
      ->capture_default_str();
  profile->add_option("--drift-samples", profile_flags.drift_samples, "Seeded random inputs for drift without --data")
      ->capture_default_str();
  profile->add_option("--seed", profile_flags.seed, "Seed of the random inputs")->capture_default_str();
  profile->add_flag("--quiet", profile_flags.quiet, "No progress and no summary");
  profile->add_option("--db", profile_flags.db,
                      "Run store (SQLite) to record the run in (default: " + RunStore::DefaultPath().string() + ")");
  profile->add_flag("--no-store", profile_flags.no_store, "Do not record the run in the store");
  profile
      ->add_option("--threads", profile_flags.threads,
                   "CPU threads (default: the cores other processes leave free, measured just before the run); "
                   "more than the cores is refused unless --oversubscribe")
      ->check(CLI::NonNegativeNumber);
  profile->add_flag("--oversubscribe", profile_flags.oversubscribe,
                    "Allow --threads above the cores this process may use (timings then wait on the scheduler)");
  profile->add_option("--max-time", profile_flags.max_time,
                      "Seconds the timing rounds may take, busy rounds repeated included (default: four times the "
                      "plan, plus 10 s); a target short of clean rounds then is unreliable");
  AddQuantFlags(profile, profile_flags.quant, /*with_data=*/false);
  AddLimitFlags(profile, profile_flags.limits);

  profile->add_option("--project", profile_flags.project,
                      "Also project targets on catalog hardware you do not own: IDS (t4,h100-sxm) or all");
  profile->add_option("--hardware-file", profile_flags.hardware_files,
                      "Your own device for --project, in the catalog's YAML schema (repeatable)");

  ProjectFlags project_flags;
  auto* project = app.add_subcommand(
      "project", "Project a model onto hardware you do not own (catalog), calibrated on this machine's measurements");
  project->add_option("MODEL", project_flags.models, "Path to an .onnx file (several with --validate)");
  project->add_option("--shape", project_flags.shapes, "Bind an input's dims: NAME=1x3x224x224 (repeatable)");
  project->add_option("--hardware", project_flags.hardware, "Catalog ids, comma-separated (t4,h100-sxm …)");
  project->add_flag("--all-hardware", project_flags.all_hardware, "Every device of the catalog");
  project->add_option("--hardware-file", project_flags.hardware_files,
                      "Your own device, in the catalog's YAML schema (repeatable)");
  project->add_option("--precisions", project_flags.precisions,
                      "Precisions to project, comma-separated (default: fp32,tf32,fp16,bf16,int8)");
  project->add_option("--json", project_flags.json_file, "Write the projection JSON (chipfit.projection/1) here");
  project->add_option("--from-json", project_flags.from_json,
                      "Calibrate on this profile JSON instead of profiling this machine's targets now");
  project->add_flag("--validate", project_flags.validate,
                    "Hold out local configurations (AVX2, one thread, no VNNI/bf16, OpenCL), project each from the "
                    "others, measure it, and print the errors against two baselines");
  project->add_flag("--validate-published", project_flags.validate_published,
                    "Project every published measurement of the validation set (resources/hardware/validation) with "
                    "its device left out of the efficiency fit, and print the errors per row, device and kind "
                    "against the η=1 roofline and a fixed 70 % efficiency (no MODEL)");
  project->add_option("--published", project_flags.published_dir,
                      "--validate-published: the validation set's folder (published-*.csv and features/)");
  project->add_option("--write-efficiency", project_flags.write_efficiency,
                      "--validate-published: write the efficiency fitted on every row here (what `project` reads "
                      "from resources/hardware/validation/efficiency.json)");
  project->add_option("--configurations", project_flags.configurations,
                      "--validate: only these held-out configurations (avx2,1-thread,no-vnni-bf16,opencl)");
  project
      ->add_option("--work-dir", project_flags.work_dir,
                   "--validate: where the profiles and held-out catalog entries are written")
      ->capture_default_str();
  project->add_option("--iterations", project_flags.iterations, "Timed runs per target, at least")
      ->capture_default_str();
  project->add_option("--min-time", project_flags.min_time, "Seconds of timed runs per target, at least")
      ->capture_default_str();
  project->add_flag("--quiet", project_flags.quiet, "No progress lines");

  std::string history_model, history_db;
  auto* history = app.add_subcommand("history", "List the runs in the store, newest first; --delete removes runs");
  history->add_option("--model", history_model, "Only runs of this model (matched by its sha256)");
  history->add_option("--db", history_db, "Run store (default: " + RunStore::DefaultPath().string() + ")");
  history->add_flag("--json", json, "Print JSON instead of text");
  std::vector<int64_t> history_delete;
  history
      ->add_option("--delete", history_delete,
                   "Delete these runs (with their target and layer results) instead of listing; nothing is deleted "
                   "when one of them is not in the store")
      ->excludes("--model");

  std::string batch_manifest, batch_shard, batch_out, merge_other;
  bool batch_quiet = false;
  auto* batch = app.add_subcommand(
      "batch", "Profile every model of a YAML manifest, store and report each; exit 1 on a broken limit or regression");
  batch->add_option("MANIFEST", batch_manifest, "The manifest (models, targets, limits, baseline, report)")->required();
  batch->add_option("--db", history_db, "Run store (default: " + RunStore::DefaultPath().string() + ")");
  batch->add_option("--shard", batch_shard, "Run only the I-th of N slices of the models: I/N");
  batch->add_flag("--quiet", batch_quiet, "Only the final table (and every error)");
  bool batch_fail_on_inconclusive = false;
  std::optional<int> batch_confirm;
  batch
      ->add_option("--confirm", batch_confirm,
                   "A target inconclusive against the baseline: profile the model N more times and decide on all "
                   "its runs (default: the manifest's confirm:, else 2; 0: never)")
      ->check(CLI::Range(0, 20));
  batch->add_flag("--fail-on-inconclusive", batch_fail_on_inconclusive,
                  "Exit 1 when a target's change against its baseline cannot be told from noise, too");
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

  std::string diff_a, diff_b;
  auto* diff = app.add_subcommand(
      "diff",
      "Compare stored runs: a verdict per target (regressed, improved, unchanged, inconclusive); exit 1 on "
      "a regression");
  diff->add_option("RUN_A", diff_a, "The baseline run id, or several: 3,4")->required();
  diff->add_option("RUN_B", diff_b, "The run compared with it, or several: 5,6")->required();
  diff->add_option("--db", history_db, "Run store (default: " + RunStore::DefaultPath().string() + ")");
  DiffFlags diff_flags;
  diff->add_flag("--json", diff_flags.json, "Print JSON instead of text");
  diff->add_flag(
      "--force", diff_flags.force,
      "Compare runs that measured different things (model, shapes, threads, machine …), saying what differs");
  diff->add_flag("--fail-on-inconclusive", diff_flags.fail_on_inconclusive,
                 "Exit 1 when a target's change cannot be told from noise, too (default: warn, exit 0)");
  diff->add_option("--confirm", diff_flags.confirm,
                   "An inconclusive target, or a latency change resting on one run of B: profile the newest B "
                   "run's model N more times with its settings (into --db) and decide on all the runs")
      ->check(CLI::Range(0, 20));
  QuantizeFlags quantize_flags;
  auto* quantize = AddQuantizeCommand(app, quantize_flags);
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
    return UsageError(app, e, argc, argv);
  }

  if (devices->parsed()) return RunDevices(json, measure);
  if (inspect->parsed()) return RunInspect(model_path, shapes, json, inspect_target, quant_flags);
  // OpenMP's thread count for this (the only) thread that runs kernels.
  if (run->parsed() && run_threads > 0) omp_set_num_threads(run_threads);
  if (run->parsed()) return RunRun(model_path, target, shapes, input_files, seed, output_dir, quant_flags);
  if (profile->parsed()) return RunProfile(model_path, shapes, profile_flags);
  if (project->parsed()) return RunProject(project_flags);
  if (history->parsed() && !history_delete.empty()) return RunHistoryDelete(history_delete, history_db, json);
  if (history->parsed()) return RunHistory(history_model, history_db, json);
  if (report->parsed()) return RunReportCommand(report_run, report_in, history_db, report_format, report_out);
  if (diff->parsed()) return RunDiff(diff_a, diff_b, history_db, diff_flags);
  if (batch->parsed())
    return RunBatch(batch_manifest, history_db, batch_shard, batch_out, batch_quiet, batch_fail_on_inconclusive,
                    batch_confirm);
  if (merge->parsed()) return RunMerge(merge_other, history_db);
  if (recommend->parsed())
    return RunRecommend(recommend_run, recommend_json, history_db, recommend_limits, recommend_out);
  if (quantize->parsed()) return RunQuantize(quantize_flags);
  if (conformance->parsed()) return RunConformanceCommand(suites, filter, target, json, verbose, no_fallback);
  return kExitInputError;
}

}  // namespace
}  // namespace chipfit

int main(int argc, char** argv) {
  chipfit::KeepFreedMemoryForReuse();
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
