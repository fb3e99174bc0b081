// The results of profiling one model on its targets (DESIGN.md §7's JSON contract, in C++): what
// every profiler fills in, what the CLI writes and (later) the store keeps and the GUI shows.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/runtime/compiled_model.h"
#include "core/runtime/target.h"
#include "devices/device.h"

namespace chipfit {

// Order statistics of repeated timings, in milliseconds.
struct LatencyStats {
  double p50 = 0, p90 = 0, p99 = 0, mean = 0, min = 0, max = 0;
  double cov = 0;  // coefficient of variation: stddev / mean
  int iterations = 0;
  bool noisy = false;  // cov above the noisy threshold (5 %)
};

// Accuracy of one tensor against its reference. sqnr_db is capped at kExactSqnrDb for identical
// tensors (never +inf, never NaN in JSON).
inline constexpr double kExactSqnrDb = 200.0;
struct DriftStats {
  double cosine = 1, nmse = 0, sqnr_db = kExactSqnrDb, max_abs = 0;
};

// An energy figure and where it comes from: "measured:<sensor>", "estimated", "estimated:scaled".
struct EnergyValue {
  double joules = 0;
  std::string source;
};

struct LayerProfile {
  std::string name{};                     // the kernel's (first) ONNX node
  std::string op{};                       // "FusedConv", "Copy" …
  std::vector<std::string> onnx_nodes{};  // every ONNX node the kernel covers
  std::string device{}, implementation{}, precision{};
  double time_p50_ms = 0, time_p90_ms = 0;
  int64_t flops = 0, bytes_read = 0, bytes_written = 0;
  double arithmetic_intensity = 0;  // flops / (bytes read + written)
  double gflops_per_s = 0, gb_per_s = 0;
  std::string bound{};                 // "memory", "compute", or "" when no ceilings are known
  double attainable_gflops_per_s = 0;  // roofline: min(peak, intensity × bandwidth); 0 when unknown
  std::optional<DriftStats> drift{};   // absent for kernels whose outputs the reference lacks
  std::optional<EnergyValue> energy{};
};

struct AccuracySummary {
  std::string reference;  // "ref:fp32" or "cpu:fp32"
  bool random_inputs = true;
  int samples = 0;
  double output_sqnr_db = kExactSqnrDb, output_cosine = 1;
  std::optional<double> top1_agreement{};   // for class-score outputs only
  std::string first_layer_below_threshold;  // "" when no layer's SQNR falls below it
};

struct TargetProfile {
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
  std::vector<LayerProfile> layers;
  std::vector<std::string> notes;  // random calibration, noisy, fallbacks …
};

}  // namespace chipfit
