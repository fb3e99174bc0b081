// NVML through dlopen: loading, telemetry and the energy meter (nvml.h).
#include "profilers/energy/nvml.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <condition_variable>
#include <limits>

namespace chipfit::nvml {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct ThrottleName {
  uint64_t bit;
  const char* name;
};
constexpr std::array<ThrottleName, 9> kThrottleNames = {{
    {kThrottleGpuIdle, "GpuIdle"},
    {kThrottleApplicationsClocksSetting, "ApplicationsClocksSetting"},
    {kThrottleSwPowerCap, "SwPowerCap"},
    {kThrottleHwSlowdown, "HwSlowdown"},
    {kThrottleSyncBoost, "SyncBoost"},
    {kThrottleSwThermalSlowdown, "SwThermalSlowdown"},
    {kThrottleHwThermalSlowdown, "HwThermalSlowdown"},
    {kThrottleHwPowerBrakeSlowdown, "HwPowerBrakeSlowdown"},
    {kThrottleDisplayClockSetting, "DisplayClockSetting"},
}};

}  // namespace

std::vector<std::string> ThrottleReasonNames(uint64_t reasons) {
  std::vector<std::string> names;
  for (int bit = 0; bit < 64; ++bit) {
    const uint64_t mask = uint64_t{1} << bit;
    if ((reasons & mask) == 0) continue;
    auto known = std::find_if(kThrottleNames.begin(), kThrottleNames.end(),
                              [mask](const ThrottleName& n) { return n.bit == mask; });
    names.push_back(known != kThrottleNames.end() ? std::string(known->name) : fmt::format("{:#x}", mask));
  }
  return names;
}

const char* EnergyReading::MethodName(Method method) {
  switch (method) {
    case Method::kCounter: return "energy counter";
    case Method::kPowerSampling: return "power sampling";
  }
  return "?";
}

// NVML's entry points. Enum parameters are passed as int: NVML's enums are int-sized in its C ABI.
struct Nvml::Api {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*handle_by_index)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*device_count)(unsigned int*) = nullptr;
  // Optional: drivers older than the entry point, or stripped fakes, lack them; the calls that need
  // them say so instead of failing Load.
  nvmlReturn_t (*handle_by_pci_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*total_energy)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*clock_info)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*throttle_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  const char* throttle_reasons_name = "nvmlDeviceGetCurrentClocksEventReasons";
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned int*) = nullptr;
};

namespace {

template <typename Fn>
void LoadSymbol(void* handle, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
}

std::string Missing(const char* function) { return fmt::format("this NVML has no {}", function); }

}  // namespace

Result<std::shared_ptr<Nvml>> Nvml::Load(const std::string& library) {
  dlerror();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Unsupported(fmt::format("no NVML library: {}", why != nullptr ? why : library));
  }
  auto api = std::make_unique<Api>();
  LoadSymbol(handle, "nvmlInit_v2", api->init);
  LoadSymbol(handle, "nvmlShutdown", api->shutdown);
  LoadSymbol(handle, "nvmlErrorString", api->error_string);
  LoadSymbol(handle, "nvmlDeviceGetHandleByIndex_v2", api->handle_by_index);
  LoadSymbol(handle, "nvmlDeviceGetCount_v2", api->device_count);
  for (const char* required :
       {"nvmlInit_v2", "nvmlShutdown", "nvmlErrorString", "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetCount_v2"}) {
    if (dlsym(handle, required) == nullptr) {
      dlclose(handle);
      return Unsupported(fmt::format("no NVML library: {} has no {}", library, required));
    }
  }
  LoadSymbol(handle, "nvmlDeviceGetHandleByPciBusId_v2", api->handle_by_pci_bus_id);
  LoadSymbol(handle, "nvmlDeviceGetTotalEnergyConsumption", api->total_energy);
  LoadSymbol(handle, "nvmlDeviceGetPowerUsage", api->power_usage);
  LoadSymbol(handle, "nvmlDeviceGetClockInfo", api->clock_info);
  LoadSymbol(handle, "nvmlDeviceGetTemperature", api->temperature);
  LoadSymbol(handle, "nvmlDeviceGetEnforcedPowerLimit", api->power_limit);
  // Drivers since R535 call throttle reasons "clocks event reasons" and deprecate the old name.
  LoadSymbol(handle, "nvmlDeviceGetCurrentClocksEventReasons", api->throttle_reasons);
  if (api->throttle_reasons == nullptr) {
    LoadSymbol(handle, "nvmlDeviceGetCurrentClocksThrottleReasons", api->throttle_reasons);
    api->throttle_reasons_name = "nvmlDeviceGetCurrentClocksThrottleReasons";
  }

  const nvmlReturn_t err = api->init();
  if (err != NVML_SUCCESS) {
    // Built by hand: there is no Nvml yet to call Error() on, and nvmlShutdown must not follow a failed
    // init.
    const char* text = api->error_string(err);
    std::string message = fmt::format("nvmlInit_v2: {} (NVML error {})", text != nullptr ? text : "?", err);
    dlclose(handle);
    const bool no_driver = err == NVML_ERROR_DRIVER_NOT_LOADED || err == NVML_ERROR_LIBRARY_NOT_FOUND ||
                           err == NVML_ERROR_NOT_SUPPORTED || err == NVML_ERROR_NO_PERMISSION;
    return no_driver ? Unsupported(std::move(message)) : Internal(std::move(message));
  }
  return std::shared_ptr<Nvml>(new Nvml(library, handle, std::move(api)));
}

Nvml::Nvml(std::string library, void* handle, std::unique_ptr<Api> api)
    : library_(std::move(library)), handle_(handle), api_(std::move(api)) {}

Nvml::~Nvml() {
  api_->shutdown();
  dlclose(handle_);
}

std::string Nvml::ErrorText(nvmlReturn_t code) const {
  const char* text = api_->error_string(code);
  return fmt::format("{} (NVML error {})", text != nullptr ? text : "?", code);
}

Status Nvml::Error(nvmlReturn_t code, std::string_view function) const {
  std::string message = fmt::format("{}: {}", function, ErrorText(code));
  switch (code) {
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_NO_PERMISSION:
    case NVML_ERROR_DRIVER_NOT_LOADED:
    case NVML_ERROR_LIBRARY_NOT_FOUND: return Unsupported(std::move(message));
    default: return Internal(std::move(message));
  }
}

Result<NvmlGpu> Nvml::Open(int index, std::string_view pci_bus_id) {
  nvmlDevice_t device = nullptr;
  if (!pci_bus_id.empty() && api_->handle_by_pci_bus_id != nullptr) {
    const std::string id(pci_bus_id);
    const nvmlReturn_t err = api_->handle_by_pci_bus_id(id.c_str(), &device);
    if (err != NVML_SUCCESS) {
      return Error(err, fmt::format("nvmlDeviceGetHandleByPciBusId_v2(\"{}\")", id));
    }
    return NvmlGpu(shared_from_this(), device);
  }
  if (index < 0) return InvalidArgument(fmt::format("no GPU {}: NVML indices start at 0", index));
  const nvmlReturn_t err = api_->handle_by_index(static_cast<unsigned int>(index), &device);
  if (err != NVML_SUCCESS) return Error(err, fmt::format("nvmlDeviceGetHandleByIndex_v2({})", index));
  return NvmlGpu(shared_from_this(), device);
}

Result<int> Nvml::DeviceCount() const {
  unsigned int count = 0;
  const nvmlReturn_t err = api_->device_count(&count);
  if (err != NVML_SUCCESS) return Error(err, "nvmlDeviceGetCount_v2");
  return static_cast<int>(count);
}

bool NvmlGpu::HasEnergyCounter() const { return EnergyJoules().ok(); }

Result<double> NvmlGpu::EnergyJoules() const {
  const auto& api = *nvml_->api_;
  if (api.total_energy == nullptr)
    return Unsupported("this GPU has no energy counter: " + Missing("nvmlDeviceGetTotalEnergyConsumption"));
  unsigned long long millijoules = 0;
  const nvmlReturn_t err = api.total_energy(device_, &millijoules);
  if (err == NVML_ERROR_NOT_SUPPORTED) {
    return Unsupported(
        fmt::format("this GPU has no energy counter (nvmlDeviceGetTotalEnergyConsumption: {})", nvml_->ErrorText(err)));
  }
  if (err != NVML_SUCCESS) return nvml_->Error(err, "nvmlDeviceGetTotalEnergyConsumption");
  return static_cast<double>(millijoules) / 1000.0;
}

Result<double> NvmlGpu::PowerWatts() const {
  const auto& api = *nvml_->api_;
  if (api.power_usage == nullptr) return Unsupported(Missing("nvmlDeviceGetPowerUsage"));
  unsigned int milliwatts = 0;
  const nvmlReturn_t err = api.power_usage(device_, &milliwatts);
  if (err != NVML_SUCCESS) return nvml_->Error(err, "nvmlDeviceGetPowerUsage");
  return milliwatts / 1000.0;
}

Result<uint64_t> NvmlGpu::ThrottleReasons() const {
  const auto& api = *nvml_->api_;
  if (api.throttle_reasons == nullptr) return Unsupported(Missing("nvmlDeviceGetCurrentClocksEventReasons"));
  unsigned long long reasons = 0;
  const nvmlReturn_t err = api.throttle_reasons(device_, &reasons);
  if (err != NVML_SUCCESS) return nvml_->Error(err, api.throttle_reasons_name);
  return static_cast<uint64_t>(reasons);
}

Result<double> NvmlGpu::TemperatureC() const {
  const auto& api = *nvml_->api_;
  if (api.temperature == nullptr) return Unsupported(Missing("nvmlDeviceGetTemperature"));
  unsigned int celsius = 0;
  const nvmlReturn_t err = api.temperature(device_, NVML_TEMPERATURE_GPU, &celsius);
  if (err != NVML_SUCCESS) return nvml_->Error(err, "nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU)");
  return static_cast<double>(celsius);
}

namespace {

// A quantity of Telemetry(): its value, NaN where the GPU does not report it, or the error.
Status Fill(const Result<double>& value, double& out) {
  if (value.ok()) {
    out = *value;
    return Status::Ok();
  }
  out = kNaN;
  return value.status().code() == StatusCode::kUnsupported ? Status::Ok() : value.status();
}

}  // namespace

Result<GpuTelemetry> NvmlGpu::Telemetry() const {
  const auto& api = *nvml_->api_;
  auto read_uint = [&](auto fn, const char* name, auto... args) -> Result<double> {
    if (fn == nullptr) return Unsupported(Missing(name));
    unsigned int value = 0;
    const nvmlReturn_t err = fn(device_, args..., &value);
    if (err != NVML_SUCCESS) return nvml_->Error(err, name);
    return static_cast<double>(value);
  };
  GpuTelemetry t;
  RETURN_IF_ERROR(
      Fill(read_uint(api.clock_info, "nvmlDeviceGetClockInfo(NVML_CLOCK_SM)", NVML_CLOCK_SM), t.sm_clock_mhz));
  RETURN_IF_ERROR(
      Fill(read_uint(api.clock_info, "nvmlDeviceGetClockInfo(NVML_CLOCK_MEM)", NVML_CLOCK_MEM), t.mem_clock_mhz));
  RETURN_IF_ERROR(Fill(TemperatureC(), t.temperature_c));
  RETURN_IF_ERROR(Fill(PowerWatts(), t.power_w));
  auto limit = read_uint(api.power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  RETURN_IF_ERROR(Fill(limit.ok() ? Result<double>(*limit / 1000.0) : limit, t.power_limit_w));
  auto reasons = ThrottleReasons();
  if (reasons.ok()) {
    t.throttle_reasons = *reasons;
  } else if (reasons.status().code() != StatusCode::kUnsupported) {
    return reasons.status();
  }
  return t;
}

EnergyMeter::EnergyMeter(NvmlGpu gpu, std::chrono::milliseconds period) : gpu_(std::move(gpu)), period_(period) {}

EnergyMeter::~EnergyMeter() = default;  // the jthread stops and joins the sampler

void EnergyMeter::Record(const Sample& sample, uint64_t reasons, double temperature_c) {
  std::lock_guard lock(mutex_);
  samples_.push_back(sample);
  reasons_ |= reasons;
  max_temperature_c_ = std::fmax(max_temperature_c_, temperature_c);
}

void EnergyMeter::Sampler(std::stop_token stop) {
  std::mutex sleep_mutex;
  std::condition_variable_any wake;
  // Deadlines on a fixed grid, so that the time NVML calls take does not stretch the period.
  auto next = std::chrono::steady_clock::now() + period_;
  while (true) {
    {
      std::unique_lock lock(sleep_mutex);
      if (wake.wait_until(lock, stop, next, [&stop] { return stop.stop_requested(); })) return;
    }
    next += period_;
    const auto now = std::chrono::steady_clock::now();
    if (next <= now) next = now + period_;  // fell behind (a loaded machine): skip, do not burst

    auto power = gpu_.PowerWatts();
    auto reasons = gpu_.ThrottleReasons();
    auto temperature = gpu_.TemperatureC();
    if (!power.ok() && method_ == EnergyReading::Method::kPowerSampling) {
      std::lock_guard lock(mutex_);
      sampler_error_ = power.status();
      return;
    }
    Record({now, power.ok() ? *power : kNaN}, reasons.ok() ? *reasons : 0, temperature.ok() ? *temperature : kNaN);
  }
}

Status EnergyMeter::Start() {
  if (running_) return InvalidArgument("EnergyMeter::Start: already started");
  ASSIGN_OR_RETURN(start_telemetry_, gpu_.Telemetry());
  method_ = EnergyReading::Method::kPowerSampling;
  if (!force_sampling_) {
    auto energy = gpu_.EnergyJoules();
    if (energy.ok()) {
      method_ = EnergyReading::Method::kCounter;
      start_energy_j_ = *energy;
    } else if (energy.status().code() != StatusCode::kUnsupported) {
      return energy.status();
    }
  }
  if (method_ == EnergyReading::Method::kPowerSampling && std::isnan(start_telemetry_.power_w)) {
    return Unsupported("this GPU has no energy counter and reports no power (nvmlDeviceGetPowerUsage)");
  }
  start_time_ = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    samples_.clear();
    samples_.push_back({start_time_, start_telemetry_.power_w});
    reasons_ = start_telemetry_.throttle_reasons;
    max_temperature_c_ = start_telemetry_.temperature_c;
    sampler_error_ = Status::Ok();
  }
  sampler_ = std::jthread([this](std::stop_token stop) { Sampler(std::move(stop)); });
  running_ = true;
  return Status::Ok();
}

Result<EnergyReading> EnergyMeter::Stop() {
  if (!running_) return InvalidArgument("EnergyMeter::Stop: not started");
  running_ = false;
  // The closing reading comes before the join, which can wait for a sampler inside an NVML call: that
  // wait is not part of the run.
  const bool counter = method_ == EnergyReading::Method::kCounter;
  Result<double> end_reading = counter ? gpu_.EnergyJoules() : gpu_.PowerWatts();
  const auto end_time = std::chrono::steady_clock::now();
  sampler_.request_stop();
  sampler_.join();
  RETURN_IF_ERROR(end_reading.status());
  ASSIGN_OR_RETURN(GpuTelemetry end, gpu_.Telemetry());

  std::lock_guard lock(mutex_);
  RETURN_IF_ERROR(sampler_error_);
  EnergyReading reading;
  reading.method = method_;
  reading.start = start_telemetry_;
  reading.end = end;
  reading.seconds = std::chrono::duration<double>(end_time - start_time_).count();
  samples_.push_back({end_time, counter ? end.power_w : *end_reading});
  reading.samples = static_cast<int>(samples_.size());
  reading.throttle_reasons = reasons_ | end.throttle_reasons;
  reading.max_temperature_c = std::fmax(max_temperature_c_, end.temperature_c);
  reading.peak_power_w = kNaN;
  for (const Sample& s : samples_) reading.peak_power_w = std::fmax(reading.peak_power_w, s.power_w);

  if (counter) {
    reading.joules = *end_reading - start_energy_j_;
  } else {
    // The sample at Stop is taken after the sampler's last one, so the points are in time order.
    double joules = 0;
    for (size_t i = 1; i < samples_.size(); ++i) {
      const double dt = std::chrono::duration<double>(samples_[i].time - samples_[i - 1].time).count();
      joules += 0.5 * (samples_[i].power_w + samples_[i - 1].power_w) * dt;
    }
    reading.joules = joules;
  }
  reading.average_power_w = reading.seconds > 0 ? reading.joules / reading.seconds : 0;
  return reading;
}

}  // namespace chipfit::nvml
