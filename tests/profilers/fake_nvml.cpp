// A fake libnvidia-ml for the NVML tests: one GPU whose power, energy counter, throttle reasons and
// init result the test sets through fake_nvml_set (found with dlsym on the same handle Nvml::Load
// opens, so both see one state). The energy counter integrates the set power over real time, as the
// driver's does. Exports nvmlDeviceGetCurrentClocksThrottleReasons only (not the newer
// ...ClocksEventReasons), so that the tests cover the loader's fallback to the older name.
#include <chrono>
#include <cstring>
#include <mutex>
#include <string_view>

namespace {

using Clock = std::chrono::steady_clock;
struct FakeDevice {};

constexpr const char* kPciBusId = "00000000:01:00.0";

struct State {
  long long init_error = 0;
  long long init_count = 0;
  long long device_count = 1;  // what nvmlDeviceGetCount_v2 says; only index 0 opens
  long long energy_supported = 1;
  long long power_mw = 0;
  long long power_supported = 1;
  long long throttle_reasons = 0;
  long long sm_clock_mhz = 1410;
  long long mem_clock_mhz = 1215;
  long long temperature_c = 40;
  long long power_limit_mw = 400000;
  long long power_queries = 0;
  double energy_mj = 0;  // accumulated up to `since`
  Clock::time_point since = Clock::now();

  void Advance() {
    const auto now = Clock::now();
    energy_mj += static_cast<double>(power_mw) * std::chrono::duration<double>(now - since).count();
    since = now;
  }
};

std::mutex mutex;
State state;
FakeDevice device;

long long* Field(std::string_view key) {
  if (key == "init_error") return &state.init_error;
  if (key == "init_count") return &state.init_count;
  if (key == "device_count") return &state.device_count;
  if (key == "energy_supported") return &state.energy_supported;
  if (key == "power_mw") return &state.power_mw;
  if (key == "power_supported") return &state.power_supported;
  if (key == "throttle_reasons") return &state.throttle_reasons;
  if (key == "sm_clock_mhz") return &state.sm_clock_mhz;
  if (key == "mem_clock_mhz") return &state.mem_clock_mhz;
  if (key == "temperature_c") return &state.temperature_c;
  if (key == "power_limit_mw") return &state.power_limit_mw;
  if (key == "power_queries") return &state.power_queries;
  return nullptr;
}

using nvmlReturn_t = int;
using nvmlDevice_t = FakeDevice*;
constexpr nvmlReturn_t kSuccess = 0, kUninitialized = 1, kInvalidArgument = 2, kNotSupported = 3, kNotFound = 6;

// Every device call checks the handle and that NVML is initialised, as the real library does.
nvmlReturn_t CheckDevice(nvmlDevice_t dev) {
  if (state.init_count == 0) return kUninitialized;
  return dev == &device ? kSuccess : kInvalidArgument;
}

}  // namespace

extern "C" {

// Test control. Keys are State's fields; an unknown key is ignored (get: -1). Setting power_mw first
// banks the energy used at the old power.
void fake_nvml_set(const char* key, long long value) {
  std::lock_guard lock(mutex);
  if (std::string_view(key) == "power_mw") state.Advance();
  if (long long* field = Field(key)) *field = value;
}
long long fake_nvml_get(const char* key) {
  std::lock_guard lock(mutex);
  long long* field = Field(key);
  return field != nullptr ? *field : -1;
}
void fake_nvml_reset() {
  std::lock_guard lock(mutex);
  const long long init_count = state.init_count;  // a test may still hold an Nvml
  state = State();
  state.init_count = init_count;
}

nvmlReturn_t nvmlInit_v2() {
  std::lock_guard lock(mutex);
  if (state.init_error != kSuccess) return static_cast<nvmlReturn_t>(state.init_error);
  ++state.init_count;
  return kSuccess;
}

nvmlReturn_t nvmlShutdown() {
  std::lock_guard lock(mutex);
  if (state.init_count == 0) return kUninitialized;
  --state.init_count;
  return kSuccess;
}

const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 6: return "Not Found";
    case 9: return "Driver Not Loaded";
    case 12: return "NVML Shared Library Not Found";
    default: return "Unknown Error";
  }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  std::lock_guard lock(mutex);
  if (state.init_count == 0) return kUninitialized;
  *count = static_cast<unsigned int>(state.device_count);
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* dev) {
  std::lock_guard lock(mutex);
  if (state.init_count == 0) return kUninitialized;
  if (index != 0) return kInvalidArgument;
  *dev = &device;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* pci_bus_id, nvmlDevice_t* dev) {
  std::lock_guard lock(mutex);
  if (state.init_count == 0) return kUninitialized;
  if (std::strcmp(pci_bus_id, kPciBusId) != 0) return kNotFound;
  *dev = &device;
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t dev, unsigned long long* energy) {
  std::lock_guard lock(mutex);
  if (nvmlReturn_t err = CheckDevice(dev); err != kSuccess) return err;
  if (state.energy_supported == 0) return kNotSupported;
  state.Advance();
  *energy = static_cast<unsigned long long>(state.energy_mj);
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t dev, unsigned int* power) {
  std::lock_guard lock(mutex);
  if (nvmlReturn_t err = CheckDevice(dev); err != kSuccess) return err;
  if (state.power_supported == 0) return kNotSupported;
  ++state.power_queries;
  *power = static_cast<unsigned int>(state.power_mw);
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t dev, int type, unsigned int* clock) {
  std::lock_guard lock(mutex);
  if (nvmlReturn_t err = CheckDevice(dev); err != kSuccess) return err;
  switch (type) {
    case 1: *clock = static_cast<unsigned int>(state.sm_clock_mhz); return kSuccess;
    case 2: *clock = static_cast<unsigned int>(state.mem_clock_mhz); return kSuccess;
    default: return kInvalidArgument;
  }
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t dev, int sensor, unsigned int* temp) {
  std::lock_guard lock(mutex);
  if (nvmlReturn_t err = CheckDevice(dev); err != kSuccess) return err;
  if (sensor != 0) return kInvalidArgument;
  *temp = static_cast<unsigned int>(state.temperature_c);
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t dev, unsigned long long* reasons) {
  std::lock_guard lock(mutex);
  if (nvmlReturn_t err = CheckDevice(dev); err != kSuccess) return err;
  *reasons = static_cast<unsigned long long>(state.throttle_reasons);
  return kSuccess;
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t dev, unsigned int* limit) {
  std::lock_guard lock(mutex);
  if (nvmlReturn_t err = CheckDevice(dev); err != kSuccess) return err;
  *limit = static_cast<unsigned int>(state.power_limit_mw);
  return kSuccess;
}

}  // extern "C"
