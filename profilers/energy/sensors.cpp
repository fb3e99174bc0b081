// Energy sensors over sysfs (powercap, hwmon) and NVML (dlopen), their detection and the measuring loop.
#include "profilers/energy/sensors.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace chipfit {
namespace {

namespace fs = std::filesystem;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Whole file as text; sysfs files are tiny. The errno text matters: "Permission denied" on RAPL is
// the usual reason a present sensor cannot be used.
Result<std::string> ReadText(const std::string& path) {
  std::ifstream in(path);
  if (!in) return IoError("cannot read " + path + ": " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return IoError("cannot read " + path + ": " + std::strerror(errno));
  return text.str();
}

std::string Trim(std::string text) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  text.erase(text.begin(), std::find_if(text.begin(), text.end(), not_space));
  text.erase(std::find_if(text.rbegin(), text.rend(), not_space).base(), text.end());
  return text;
}

Result<uint64_t> ReadUnsigned(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadText(path));
  text = Trim(std::move(text));
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return ParseError(path + ": expected an unsigned integer, got '" + text + "'");
  }
  return value;
}

// Directory entries sorted by name, so detection order (and the first sensor) is stable.
std::vector<fs::path> SortedEntries(const fs::path& dir) {
  std::vector<fs::path> entries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
  std::sort(entries.begin(), entries.end());
  return entries;
}

std::string NameFileOr(const fs::path& dir, const std::string& fallback) {
  Result<std::string> name = ReadText((dir / "name").string());
  if (!name.ok()) return fallback;
  std::string trimmed = Trim(std::move(name).value());
  return trimmed.empty() ? fallback : trimmed;
}

void DetectPowercap(const fs::path& root, std::vector<std::unique_ptr<EnergySensor>>& sensors,
                    std::vector<std::string>& notes) {
  const fs::path dir = root / "class" / "powercap";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    notes.push_back("powercap: " + dir.string() + " does not exist (no RAPL driver)");
    return;
  }
  size_t zones = 0;
  for (const fs::path& zone : SortedEntries(dir)) {
    const fs::path energy = zone / "energy_uj";
    if (!fs::exists(energy, ec)) continue;  // control types such as intel-rapl itself
    ++zones;
    const std::string name = "powercap:" + zone.filename().string() + "/" + NameFileOr(zone, "zone");
    Result<uint64_t> range = ReadUnsigned((zone / "max_energy_range_uj").string());
    if (!range.ok() || *range == 0) {
      notes.push_back(name + ": no usable max_energy_range_uj, wrap-around could not be handled; skipped");
      continue;
    }
    Result<uint64_t> probe = ReadUnsigned(energy.string());
    if (!probe.ok()) {
      const bool denied = probe.status().message().find(std::strerror(EACCES)) != std::string::npos;
      notes.push_back(name + ": " + probe.status().message() +
                      (denied ? " (RAPL counters are root-only since Linux 5.10)" : ""));
      continue;
    }
    sensors.push_back(std::make_unique<PowercapSensor>(name, energy.string(), *range));
  }
  if (zones == 0) notes.push_back("powercap: no zone with energy_uj under " + dir.string());
}

void DetectHwmon(const fs::path& root, std::vector<std::unique_ptr<EnergySensor>>& sensors,
                 std::vector<std::string>& notes) {
  const fs::path dir = root / "class" / "hwmon";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    notes.push_back("hwmon: " + dir.string() + " does not exist");
    return;
  }
  size_t found = 0;
  for (const fs::path& chip : SortedEntries(dir)) {
    const std::string chip_name = NameFileOr(chip, chip.filename().string());
    for (const fs::path& file : SortedEntries(chip)) {
      // energy<N>_input, power<N>_input or power<N>_average (parsed by hand: GCC 12 warns inside
      // std::regex under the sanitizer build's -O1, and warnings are errors).
      const std::string base = file.filename().string();
      const bool is_energy = base.starts_with("energy");
      if (!is_energy && !base.starts_with("power")) continue;
      const size_t digits = is_energy ? 6 : 5;
      size_t end = digits;
      while (end < base.size() && std::isdigit(static_cast<unsigned char>(base[end])) != 0) ++end;
      if (end == digits) continue;
      const std::string suffix = base.substr(end);
      if (suffix != "_input" && (is_energy || suffix != "_average")) continue;
      const std::string channel = base.substr(0, end);
      // A channel with both files (power1_input, power1_average) is one sensor: take the instantaneous one.
      if (!is_energy && suffix == "_average" && fs::exists(chip / (channel + "_input"), ec)) continue;
      ++found;
      const std::string name = "hwmon:" + chip_name + "/" + channel;
      Result<uint64_t> probe = ReadUnsigned(file.string());
      if (!probe.ok()) {
        notes.push_back(name + ": " + probe.status().message());
        continue;
      }
      if (is_energy) {
        sensors.push_back(std::make_unique<HwmonEnergySensor>(name, file.string()));
      } else {
        sensors.push_back(std::make_unique<HwmonPowerSensor>(name, file.string()));
      }
    }
  }
  if (found == 0) notes.push_back("hwmon: no energy*_input or power*_input/_average under " + dir.string());
}

// NVML, loaded at run time so chipfit neither links nor needs the driver. The library stays loaded
// (and initialised) as long as any of its sensors lives.
class NvmlLibrary {
 public:
  using InitFn = int (*)();
  using CountFn = int (*)(unsigned int*);
  using HandleFn = int (*)(unsigned int, void**);
  using EnergyFn = int (*)(void*, unsigned long long*);
  using ErrorFn = const char* (*)(int);

  static Result<std::shared_ptr<NvmlLibrary>> Open() {
    void* handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return NotFound("NVML not found (dlopen libnvidia-ml.so.1 failed)");
    auto lib = std::shared_ptr<NvmlLibrary>(new NvmlLibrary(handle));
    auto init = reinterpret_cast<InitFn>(dlsym(handle, "nvmlInit_v2"));
    lib->shutdown_ = reinterpret_cast<InitFn>(dlsym(handle, "nvmlShutdown"));
    lib->count_ = reinterpret_cast<CountFn>(dlsym(handle, "nvmlDeviceGetCount_v2"));
    lib->device_ = reinterpret_cast<HandleFn>(dlsym(handle, "nvmlDeviceGetHandleByIndex_v2"));
    lib->energy_ = reinterpret_cast<EnergyFn>(dlsym(handle, "nvmlDeviceGetTotalEnergyConsumption"));
    lib->error_ = reinterpret_cast<ErrorFn>(dlsym(handle, "nvmlErrorString"));
    if (!init || !lib->shutdown_ || !lib->count_ || !lib->device_ || !lib->energy_) {
      return Unsupported("NVML: libnvidia-ml.so.1 lacks nvmlDeviceGetTotalEnergyConsumption or friends");
    }
    if (const int rc = init(); rc != 0) return Internal("NVML: nvmlInit_v2 failed: " + lib->ErrorText(rc));
    lib->initialised_ = true;
    return lib;
  }

  ~NvmlLibrary() {
    if (initialised_) shutdown_();
    dlclose(handle_);
  }
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  std::string ErrorText(int rc) const { return error_ ? std::string(error_(rc)) : "NVML error " + std::to_string(rc); }

  CountFn count_ = nullptr;
  HandleFn device_ = nullptr;
  EnergyFn energy_ = nullptr;

 private:
  explicit NvmlLibrary(void* handle) : handle_(handle) {}
  void* handle_;
  InitFn shutdown_ = nullptr;
  ErrorFn error_ = nullptr;
  bool initialised_ = false;
};

// nvmlDeviceGetTotalEnergyConsumption: mJ since the driver loaded (Volta and later).
class NvmlSensor final : public EnergySensor {
 public:
  NvmlSensor(std::shared_ptr<NvmlLibrary> lib, unsigned int index, void* device)
      : lib_(std::move(lib)), index_(index), device_(device) {}
  std::string name() const override { return "nvml:" + std::to_string(index_); }
  Result<double> ReadJoules() override {
    unsigned long long mj = 0;
    if (const int rc = lib_->energy_(device_, &mj); rc != 0) {
      return Internal(name() + ": nvmlDeviceGetTotalEnergyConsumption failed: " + lib_->ErrorText(rc));
    }
    return static_cast<double>(mj) * 1e-3;
  }

 private:
  std::shared_ptr<NvmlLibrary> lib_;
  unsigned int index_;
  void* device_;
};

void DetectNvml(std::vector<std::unique_ptr<EnergySensor>>& sensors, std::vector<std::string>& notes) {
  Result<std::shared_ptr<NvmlLibrary>> lib = NvmlLibrary::Open();
  if (!lib.ok()) {
    notes.push_back(lib.status().message());
    return;
  }
  unsigned int count = 0;
  if (const int rc = (*lib)->count_(&count); rc != 0) {
    notes.push_back("NVML: nvmlDeviceGetCount_v2 failed: " + (*lib)->ErrorText(rc));
    return;
  }
  if (count == 0) notes.push_back("NVML: no GPU");
  for (unsigned int i = 0; i < count; ++i) {
    void* device = nullptr;
    if (const int rc = (*lib)->device_(i, &device); rc != 0) {
      notes.push_back("nvml:" + std::to_string(i) + ": no handle: " + (*lib)->ErrorText(rc));
      continue;
    }
    auto sensor = std::make_unique<NvmlSensor>(*lib, i, device);
    // Pre-Volta GPUs answer NOT_SUPPORTED here; probing keeps them out of the list.
    if (Result<double> probe = sensor->ReadJoules(); !probe.ok()) {
      notes.push_back(probe.status().message());
      continue;
    }
    sensors.push_back(std::move(sensor));
  }
}

}  // namespace

PowercapSensor::PowercapSensor(std::string name, std::string energy_uj_path, uint64_t max_energy_range_uj)
    : name_(std::move(name)), path_(std::move(energy_uj_path)), range_uj_(max_energy_range_uj) {}

Result<double> PowercapSensor::ReadJoules() {
  ASSIGN_OR_RETURN(uint64_t raw, ReadUnsigned(path_));
  // The counter runs 0..range and restarts at 0: a lower reading means one wrap since the last read
  // (the usual convention of turbostat and friends; an off-by-one µJ is below the counter's noise).
  if (has_last_ && raw < last_raw_uj_) wrapped_uj_ += range_uj_;
  has_last_ = true;
  last_raw_uj_ = raw;
  return static_cast<double>(wrapped_uj_ + raw) * 1e-6;
}

HwmonEnergySensor::HwmonEnergySensor(std::string name, std::string energy_input_path)
    : name_(std::move(name)), path_(std::move(energy_input_path)) {}

Result<double> HwmonEnergySensor::ReadJoules() {
  ASSIGN_OR_RETURN(uint64_t uj, ReadUnsigned(path_));
  return static_cast<double>(uj) * 1e-6;
}

HwmonPowerSensor::HwmonPowerSensor(std::string name, std::string power_path)
    : name_(std::move(name)), path_(std::move(power_path)) {}

Result<double> HwmonPowerSensor::ReadWatts() const {
  ASSIGN_OR_RETURN(uint64_t uw, ReadUnsigned(path_));
  return static_cast<double>(uw) * 1e-6;
}

Status HwmonPowerSensor::Sample() {
  ASSIGN_OR_RETURN(double watts, ReadWatts());
  const int64_t now = NowNs();
  if (has_last_) joules_ += 0.5 * (last_watts_ + watts) * static_cast<double>(now - last_ns_) * 1e-9;
  has_last_ = true;
  last_watts_ = watts;
  last_ns_ = now;
  return Status::Ok();
}

Result<double> HwmonPowerSensor::ReadJoules() {
  RETURN_IF_ERROR(Sample());
  return joules_;
}

std::vector<std::unique_ptr<EnergySensor>> DetectEnergySensors(const std::string& sysfs_root,
                                                               std::vector<std::string>* notes) {
  std::vector<std::unique_ptr<EnergySensor>> sensors;
  std::vector<std::string> local_notes;
  std::vector<std::string>& out = notes ? *notes : local_notes;
  DetectPowercap(sysfs_root, sensors, out);
  DetectHwmon(sysfs_root, sensors, out);
  // NVML does not live under a sysfs root, so a fake root (tests) leaves it out.
  if (fs::path(sysfs_root).lexically_normal() == fs::path("/sys")) {
    DetectNvml(sensors, out);
  } else {
    out.push_back("NVML: not probed for sysfs root " + sysfs_root);
  }
  if (sensors.empty()) out.push_back("no energy sensor found: energy can only be estimated");
  return sensors;
}

Result<EnergyMeasurement> MeasureEnergy(EnergySensor& sensor, const std::function<Status()>& run_once,
                                        double min_seconds) {
  // Often enough for a power integral and for any counter to be seen before it can wrap twice.
  constexpr int64_t kSampleEveryNs = 10'000'000;
  ASSIGN_OR_RETURN(double start_joules, sensor.ReadJoules());
  const int64_t start_ns = NowNs();
  const int64_t min_ns = static_cast<int64_t>(min_seconds * 1e9);
  int64_t last_sample_ns = start_ns, now = start_ns;
  int iterations = 0;
  do {
    RETURN_IF_ERROR(run_once());
    ++iterations;
    now = NowNs();
    if (now - last_sample_ns >= kSampleEveryNs) {
      RETURN_IF_ERROR(sensor.Sample());
      last_sample_ns = now;
    }
  } while (now - start_ns < min_ns);
  ASSIGN_OR_RETURN(double end_joules, sensor.ReadJoules());
  const double seconds = static_cast<double>(NowNs() - start_ns) * 1e-9;
  const double total = end_joules - start_joules;
  if (!(total > 0)) {
    return Unsupported(sensor.name() + ": energy did not increase over " + std::to_string(seconds) +
                       " s; the sensor is not updating");
  }
  EnergyMeasurement m;
  m.total_joules = total;
  m.seconds = seconds;
  m.iterations = iterations;
  m.joules_per_inference = total / iterations;
  m.source = "measured:" + sensor.name();
  return m;
}

}  // namespace chipfit
