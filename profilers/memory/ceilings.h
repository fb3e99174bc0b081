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
  // CPU devices: other processes' share of the machine's CPUs while the figures were measured
  // (/proc/stat); above kBusyCpuShare the figures are low and a note says so.
  std::optional<double> other_cpu_share;
  // CPU devices: the OpenMP threads the figures were measured with (a 1-thread run has 1-thread
  // ceilings); 0 in caches written before it was recorded.
  int threads = 0;
  bool MeasuredWhileBusy() const;
};

// The note a target profiled with ceilings measured while busy gets: "ceilings measured while the
// machine was busy (35 % of the CPUs used by others): roofline bounds are low"; "" when they were not.
std::string BusyCeilingsNote(const CeilingReport& report);

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

// What <root>/proc/cpuinfo says about the processor (x86 fields; empty or -1 where absent).
struct CpuIdentity {
  std::string vendor_id;   // "AuthenticAMD", "GenuineIntel"
  int family = -1;         // "cpu family"
  int model = -1;          // "model"
  std::string model_name;  // "AMD EPYC 9654 96-Core Processor"
  int processors = 0;      // "processor" entries (logical CPUs)
  double max_mhz = 0;      // the highest "cpu MHz" over them; 0 when none
};
CpuIdentity ReadCpuIdentity(const std::filesystem::path& root);

// What chipfit's CPU model table (ceilings.cpp, every figure from a vendor's public spec) knows of a
// processor: its microarchitecture's FMA datapath and the highest boost clock of its SKU, or of its
// whole family (then an upper bound for this SKU).
struct CpuModelInfo {
  std::string microarch;                // "Zen 4 (EPYC 9004 Genoa)"
  int fma_pipes = 0;                    // FMA pipes per core; 0 when the table has no datapath for it
  int fma_bits = 0;                     // width of one pipe
  std::string datapath_note;            // "AVX-512 executed on 256-bit units"
  std::optional<double> max_boost_ghz;  // absent when the table has no clock for it
  bool clock_upper_bound = false;       // a family-wide maximum, not this SKU's own
  std::string clock_of;                 // whose clock: "EPYC 9654", or the family's fastest SKU
};
std::optional<CpuModelInfo> LookupCpuModel(const CpuIdentity& cpu);

// Theoretical peak GFLOP/s for the CPU: cores × clock × FLOP/cycle of the core's datapath (notes say
// which figures were assumed and where each comes from: "theoretical <precision> peak assumes …");
// for other devices, none unless their vendor publishes a formula chipfit knows. `root` is "/"
// outside tests (a fake /proc and /sys tree in them).
std::map<Precision, double> TheoreticalPeakGflops(const DeviceInfo& device, std::vector<std::string>* notes,
                                                  const std::filesystem::path& root = "/");
// The CPU's maximum clock in GHz: cpufreq's cpuinfo_max_freq (the highest over the CPUs) when
// present; else the model table's boost clock when it is above the highest "cpu MHz" of
// /proc/cpuinfo (a VM's figure is usually the base clock), else that "cpu MHz"; nullopt when none is
// known. `source` says which, as the notes print it. `root` is "/" outside tests.
std::optional<double> CpuClockGhz(const std::filesystem::path& root, std::string* source);

// How a measured peak compares with the theoretical one, the one text every view prints:
// "theoretical 333 (estimate), measured = 66 % of theoretical"; "theoretical: no figure" without one;
// a measured peak above 105 % of it gives "theoretical estimate too low (166 GFLOP/s): it assumes
// <assumption>" (never a share above 100 %; from 100 to 105 % it says 100 %).
std::string PeakShareText(double measured, std::optional<double> theoretical, const std::string& assumption);
// What a report's theoretical peak for `precision` assumed (cores × clock (source) × FLOP/cycle
// (source)), from its notes; "" when it recorded none.
std::string TheoreticalAssumption(const CeilingReport& report, Precision precision);
// PeakShareText for the measured peak of `precision` in `report`.
std::string PeakShareText(const CeilingReport& report, Precision precision, double measured);

// Measures every supported precision of `device` and its bandwidth; a precision whose measurement
// fails gets a note instead of a figure.
Result<CeilingReport> MeasureCeilings(const DeviceInfo& device, const GraphCompiler& compile,
                                      const CeilingOptions& options);

// Stable identity of a device's ceilings for the cache: id + name + driver + runtime versions + compute
// units, and for a CPU the OpenMP threads they are measured with (`threads`; ignored for other devices),
// so a 1-thread run never uses 2-thread ceilings.
std::string CeilingKey(const DeviceInfo& device, int threads);

// The ceilings cache: $XDG_CACHE_HOME/chipfit/ceilings.json (else ~/.cache/chipfit/ceilings.json),
// one entry per device key (a CPU's per thread count). Saving replaces the entry of the same key, so an
// entry measured while busy is replaced by the next measurement.
std::filesystem::path DefaultCeilingCachePath();
// Entries whose key matches a device; a missing file is an empty cache; a corrupt one is an error
// naming the file (it is never overwritten silently: Save replaces it only after a new measurement).
Result<std::map<std::string, CeilingReport>> LoadCeilingCache(const std::filesystem::path& path);
Status SaveCeilingReport(const std::filesystem::path& path, const CeilingReport& report);

nlohmann::json CeilingReportToJson(const CeilingReport& report);
Result<CeilingReport> CeilingReportFromJson(const nlohmann::json& j);

}  // namespace chipfit
