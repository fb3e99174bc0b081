// GPU energy and telemetry through NVML (libnvidia-ml), opened with dlopen at run time so that chipfit
// builds without nvml.h or the CUDA toolkit (NVML is a driver library) and runs where the driver is
// missing: Nvml::Load then says why, it never crashes. The library path is a parameter so that tests
// can load a fake NVML. The energy profiler's NVML sensor (sensors.h) is built on it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/status.h"

namespace chipfit::nvml {

// The few declarations of NVIDIA's public nvml.h that chipfit uses; values and signatures follow the
// NVML API. The throttle-reason masks are named kThrottle* (not NVML's macro names) so that a real
// nvml.h included beside this header cannot clash with them.
using nvmlReturn_t = int;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
inline constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
inline constexpr nvmlReturn_t NVML_ERROR_DRIVER_NOT_LOADED = 9;
inline constexpr nvmlReturn_t NVML_ERROR_LIBRARY_NOT_FOUND = 12;
inline constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;
inline constexpr int NVML_TEMPERATURE_GPU = 0;
inline constexpr int NVML_CLOCK_SM = 1;
inline constexpr int NVML_CLOCK_MEM = 2;

inline constexpr uint64_t kThrottleGpuIdle = 0x1;
inline constexpr uint64_t kThrottleApplicationsClocksSetting = 0x2;
inline constexpr uint64_t kThrottleSwPowerCap = 0x4;
inline constexpr uint64_t kThrottleHwSlowdown = 0x8;
inline constexpr uint64_t kThrottleSyncBoost = 0x10;
inline constexpr uint64_t kThrottleSwThermalSlowdown = 0x20;
inline constexpr uint64_t kThrottleHwThermalSlowdown = 0x40;
inline constexpr uint64_t kThrottleHwPowerBrakeSlowdown = 0x80;
inline constexpr uint64_t kThrottleDisplayClockSetting = 0x100;
// The reasons that make a timing or energy figure unrepresentative: power and thermal slowdowns. Idle,
// application clocks, sync boost and display clocks are settings or states, not the GPU holding back.
inline constexpr uint64_t kThrottleSlowdownMask = kThrottleSwPowerCap | kThrottleHwSlowdown |
                                                  kThrottleSwThermalSlowdown | kThrottleHwThermalSlowdown |
                                                  kThrottleHwPowerBrakeSlowdown;

// NVML's names of the bits set in `reasons` ("SwPowerCap", "HwThermalSlowdown"), lowest bit first;
// bits NVML has not defined show as hex ("0x200").
std::vector<std::string> ThrottleReasonNames(uint64_t reasons);

// One reading of a GPU's clocks, temperature and power. A quantity the GPU does not report is NaN
// (throttle_reasons: 0).
struct GpuTelemetry {
  double sm_clock_mhz = 0;
  double mem_clock_mhz = 0;
  double temperature_c = 0;
  double power_w = 0;
  double power_limit_w = 0;
  uint64_t throttle_reasons = 0;
  std::vector<std::string> ThrottleNames() const { return ThrottleReasonNames(throttle_reasons); }
  bool Throttled() const { return (throttle_reasons & kThrottleSlowdownMask) != 0; }
};

class NvmlGpu;

// A loaded and initialised NVML. Shared by the NvmlGpu handles it opens, which keep it (and the
// library) alive; nvmlShutdown and dlclose run when the last one goes.
class Nvml : public std::enable_shared_from_this<Nvml> {
 public:
  static constexpr const char* kDefaultLibrary = "libnvidia-ml.so.1";

  // dlopens `library` and runs nvmlInit_v2. Unsupported "no NVML library: <dlerror>" where it cannot be
  // opened or lacks NVML's entry points, and where NVML finds no driver; Internal for other failures.
  static Result<std::shared_ptr<Nvml>> Load(const std::string& library = kDefaultLibrary);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // The GPU with PCI bus id `pci_bus_id` ("0000:01:00.0", as cudaDeviceGetPCIBusId gives it) when one is
  // given, else NVML's GPU `index`. NVML orders GPUs by PCI bus while CUDA by default puts the fastest
  // first, so an index alone can name another GPU than CUDA's device of the same number. An NVML without
  // nvmlDeviceGetHandleByPciBusId_v2 (older than R450) falls back to the index.
  Result<NvmlGpu> Open(int index, std::string_view pci_bus_id = {});
  // How many GPUs NVML sees (nvmlDeviceGetCount_v2); their indices are 0 .. count-1.
  Result<int> DeviceCount() const;

  const std::string& library() const { return library_; }
  // "<function>: <nvmlErrorString> (NVML error <code>)" as a Status: Unsupported for NOT_SUPPORTED,
  // NO_PERMISSION, DRIVER_NOT_LOADED and LIBRARY_NOT_FOUND, Internal for the rest.
  Status Error(nvmlReturn_t code, std::string_view function) const;
  // "<nvmlErrorString> (NVML error <code>)".
  std::string ErrorText(nvmlReturn_t code) const;

 private:
  struct Api;
  friend class NvmlGpu;
  Nvml(std::string library, void* handle, std::unique_ptr<Api> api);

  std::string library_;
  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
};

// One GPU as NVML sees it. Cheap to copy; safe to use from several threads (NVML is thread-safe).
class NvmlGpu {
 public:
  // Whether the GPU has a total-energy counter (Volta and later).
  bool HasEnergyCounter() const;
  // The total-energy counter, in joules since the driver was loaded; Unsupported "this GPU has no
  // energy counter" where there is none.
  Result<double> EnergyJoules() const;
  Result<double> PowerWatts() const;
  // The throttle reasons now (nvmlDeviceGetCurrentClocksEventReasons, or the older
  // nvmlDeviceGetCurrentClocksThrottleReasons).
  Result<uint64_t> ThrottleReasons() const;
  Result<double> TemperatureC() const;
  // Everything in GpuTelemetry. Quantities the GPU does not report are NaN; other failures are errors.
  Result<GpuTelemetry> Telemetry() const;

  const std::shared_ptr<const Nvml>& nvml() const { return nvml_; }

 private:
  friend class Nvml;
  NvmlGpu(std::shared_ptr<const Nvml> nvml, nvmlDevice_t device) : nvml_(std::move(nvml)), device_(device) {}

  std::shared_ptr<const Nvml> nvml_;
  nvmlDevice_t device_ = nullptr;
};

// What an EnergyMeter measured over one run.
struct EnergyReading {
  enum class Method { kCounter, kPowerSampling };
  Method method = Method::kCounter;
  double joules = 0;
  double seconds = 0;
  double average_power_w = 0;  // joules / seconds
  double peak_power_w = 0;     // highest power sample (NaN where the GPU reports no power)
  // Power samples taken: by the sampler (method kPowerSampling integrates them with the trapezoid rule)
  // plus one at Start and one at Stop.
  int samples = 0;
  // OR of the throttle reasons seen at Start, Stop and every sample in between.
  uint64_t throttle_reasons = 0;
  double max_temperature_c = 0;
  GpuTelemetry start;
  GpuTelemetry end;
  bool Throttled() const { return (throttle_reasons & kThrottleSlowdownMask) != 0; }
  std::vector<std::string> ThrottleNames() const { return ThrottleReasonNames(throttle_reasons); }
  static const char* MethodName(Method method);
};

// Measures the energy a GPU uses over a run: Start() before, Stop() after. Uses the total-energy
// counter (two readings) where the GPU has one; otherwise integrates power sampled every `period` on a
// background thread. Either way the thread samples throttle reasons and temperature, so that a run
// slowed by power or heat says so. One run at a time; Start again after Stop for another.
class EnergyMeter {
 public:
  explicit EnergyMeter(NvmlGpu gpu, std::chrono::milliseconds period = std::chrono::milliseconds(10));
  ~EnergyMeter();
  EnergyMeter(const EnergyMeter&) = delete;
  EnergyMeter& operator=(const EnergyMeter&) = delete;

  // Forces power sampling even where the GPU has an energy counter (to compare the two).
  void ForcePowerSampling(bool force) { force_sampling_ = force; }
  Status Start();
  Result<EnergyReading> Stop();

 private:
  struct Sample {
    std::chrono::steady_clock::time_point time;
    double power_w;
  };
  void Sampler(std::stop_token stop);
  void Record(const Sample& sample, uint64_t reasons, double temperature_c);

  NvmlGpu gpu_;
  std::chrono::milliseconds period_;
  bool force_sampling_ = false;
  bool running_ = false;
  EnergyReading::Method method_ = EnergyReading::Method::kCounter;
  double start_energy_j_ = 0;
  std::chrono::steady_clock::time_point start_time_;
  GpuTelemetry start_telemetry_;

  std::mutex mutex_;  // guards what the sampler writes below
  std::vector<Sample> samples_;
  uint64_t reasons_ = 0;
  double max_temperature_c_ = 0;
  Status sampler_error_;
  std::jthread sampler_;
};

}  // namespace chipfit::nvml
