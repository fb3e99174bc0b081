// Roofline ceilings (docs/measurement.md): each device's memory bandwidth and peak FLOP/s per
// precision, measured by micro-benchmarks (`chipfit devices --measure`), next to the theoretical
// figures from the ISA and clock, and cached so every profile's roofline reuses them.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/graph/graph.h"
#include "core/runtime/compiled_model.h"
#include "devices/device.h"

namespace chipfit {

// One device's ceilings, measured and theoretical, with how each number was obtained.
struct CeilingReport {
  std::string device_id;   // "cpu", "opencl:0"
  std::string device_key;  // name + driver/runtime: a cache entry is only reused for the same device
  DeviceCeilings measured;
  std::map<Precision, double> theoretical_gflops;  // absent where no formula applies
  std::optional<double> theoretical_bandwidth_gbps;
  std::vector<std::string> methods;  // one line per figure: what ran, its size, best of how many
  std::vector<std::string> notes;    // why a figure is missing, or what an estimate assumes
  std::string measured_at;           // UTC, ISO 8601
};

// Compiles a graph for a target (the app passes devices/target_compiler's CompileForTarget).
using GraphCompiler = std::function<Result<std::unique_ptr<CompiledModel>>(const Graph&, const Target&)>;

struct CeilingOptions {
  int64_t triad_bytes_per_array = int64_t{128} << 20;  // 3 arrays, far beyond any last-level cache
  int64_t cpu_gemm_size = 2048;                        // M = N = K
  int64_t device_gemm_size = 1024;                     // for OpenCL/CUDA devices
  int64_t device_stream_elements = int64_t{32} << 20;  // elements per array of the device's streaming Add
  double min_time_s = 0.5;                             // per figure: runs until this long and …
  int min_runs = 3;                                    // … at least this many; the best run counts
  std::stop_token stop{};
};

// STREAM triad a[i] = b[i] + s·c[i] over doubles with every OpenMP thread; GB/s counts 24 bytes per
// element (STREAM's convention: no write-allocate traffic). Best of `runs`.
double MeasureStreamTriadGbps(int64_t bytes_per_array, int runs);

// What a micro-benchmark measured and which kernel it measured.
struct KernelRate {
  double rate = 0;             // GFLOP/s or GB/s
  std::string implementation;  // the kernel that ran: "onednn:matmul", "opencl:gemm" …
  std::string precision;       // the precision it computed in
};

// A square MatMul graph Y = A·B (B a constant weight) for `size`, compiled for `target`; GFLOP/s of
// the MatMul kernel's device time (2·size³ per run), best run. int8 calibrates on seeded random data.
// A target whose MatMul does not run in its own precision is an error saying so (no false peak).
Result<KernelRate> MeasureGemmGflops(const GraphCompiler& compile, const Target& target, int64_t size,
                                     const CeilingOptions& options);

// Device memory bandwidth from a compiled elementwise Add of two device-resident arrays: GB/s of the
// Add kernel's device time (read 2 + write 1 arrays at the precision's element size), best run.
Result<KernelRate> MeasureDeviceStreamGbps(const GraphCompiler& compile, const Target& target, int64_t elements,
                                           const CeilingOptions& options);

// Theoretical peak GFLOP/s for the CPU: cores × clock × FLOP/cycle for the ISA (notes say which
// figures were assumed); for other devices, none unless their vendor publishes a formula chipfit knows.
std::map<Precision, double> TheoreticalPeakGflops(const DeviceInfo& device, std::vector<std::string>* notes);
// Highest clock the OS reports for CPU 0, in GHz (cpufreq's cpuinfo_max_freq, else /proc/cpuinfo's
// "cpu MHz"); nullopt when neither is readable. `root` is "/" outside tests.
std::optional<double> CpuClockGhz(const std::filesystem::path& root, std::string* source);

// Measures every supported precision of `device` and its bandwidth; a precision whose measurement
// fails gets a note instead of a figure.
Result<CeilingReport> MeasureCeilings(const DeviceInfo& device, const GraphCompiler& compile,
                                      const CeilingOptions& options);

// Stable identity of a device for the cache: id + name + driver + runtime versions + compute units.
std::string CeilingKey(const DeviceInfo& device);

// The ceilings cache: $XDG_CACHE_HOME/chipfit/ceilings.json (else ~/.cache/chipfit/ceilings.json),
// one entry per device key.
std::filesystem::path DefaultCeilingCachePath();
// Entries whose key matches a device; a missing file is an empty cache; a corrupt one is an error
// naming the file (it is never overwritten silently: Save replaces it only after a new measurement).
Result<std::map<std::string, CeilingReport>> LoadCeilingCache(const std::filesystem::path& path);
Status SaveCeilingReport(const std::filesystem::path& path, const CeilingReport& report);

nlohmann::json CeilingReportToJson(const CeilingReport& report);
Result<CeilingReport> CeilingReportFromJson(const nlohmann::json& j);

}  // namespace chipfit
