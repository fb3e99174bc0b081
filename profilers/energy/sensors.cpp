// Energy sensors over sysfs (powercap, hwmon) and NVML (nvml.h), their detection and the measuring loop.
#include "profilers/energy/sensors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
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

// NVML GPUs: one sensor per GPU with an energy counter or, failing that, a power reading.
void DetectNvml(const std::string& library, std::vector<std::unique_ptr<EnergySensor>>& sensors,
                std::vector<std::string>& notes) {
  Result<std::shared_ptr<nvml::Nvml>> lib = nvml::Nvml::Load(library);
  if (!lib.ok()) {
    notes.push_back("NVML: " + lib.status().message());
    return;
  }
  Result<int> count = (*lib)->DeviceCount();
  if (!count.ok()) {
    notes.push_back("NVML: " + count.status().message());
    return;
  }
  if (*count == 0) notes.push_back("NVML: no GPU");
  for (int i = 0; i < *count; ++i) {
    const std::string name = "nvml:" + std::to_string(i);
    Result<nvml::NvmlGpu> gpu = (*lib)->Open(i);
    if (!gpu.ok()) {
      notes.push_back(name + ": " + gpu.status().message());
      continue;
    }
    Result<std::unique_ptr<NvmlSensor>> sensor = NvmlSensor::Create(name, std::move(gpu).value());
    if (!sensor.ok()) {
      notes.push_back(name + ": " + sensor.status().message());
      continue;
    }
    if ((*sensor)->integrated()) {
      notes.push_back(name + ": no energy counter (older than Volta): power sampled every 10 ms and integrated");
    }
    sensors.push_back(std::move(sensor).value());
  }
}

// "1410→1155 MHz"; a quantity the GPU did not report shows as "?".
std::string Quantity(double value, int precision = 0) {
  return std::isnan(value) ? std::string("?") : fmt::format("{:.{}f}", value, precision);
}

std::string Join(const std::vector<std::string>& parts) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : ", ") + part;
  return text;
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

NvmlSensor::NvmlSensor(std::string name, nvml::NvmlGpu gpu, bool counter)
    : name_(std::move(name)), gpu_(gpu), counter_(counter), meter_(std::move(gpu)) {}

Result<std::unique_ptr<NvmlSensor>> NvmlSensor::Create(std::string name, nvml::NvmlGpu gpu) {
  Result<double> energy = gpu.EnergyJoules();
  if (!energy.ok() && energy.status().code() != StatusCode::kUnsupported) return energy.status();
  if (!energy.ok()) {
    // Pre-Volta: integrate the power, which such GPUs report.
    Result<double> power = gpu.PowerWatts();
    if (!power.ok()) {
      return Unsupported(energy.status().message() + ", and no power reading: " + power.status().message());
    }
  }
  return std::unique_ptr<NvmlSensor>(new NvmlSensor(std::move(name), std::move(gpu), energy.ok()));
}

Status NvmlSensor::Sample() {
  // The counter needs no sampling (64 bits of mJ), and during a measurement the meter samples.
  if (counter_ || measuring_) return Status::Ok();
  ASSIGN_OR_RETURN(double watts, gpu_.PowerWatts());
  const int64_t now = NowNs();
  if (has_last_) joules_ += 0.5 * (last_watts_ + watts) * static_cast<double>(now - last_ns_) * 1e-9;
  has_last_ = true;
  last_watts_ = watts;
  last_ns_ = now;
  return Status::Ok();
}

Result<double> NvmlSensor::ReadJoules() {
  if (counter_) return gpu_.EnergyJoules();
  if (!measuring_) RETURN_IF_ERROR(Sample());
  return joules_;
}

Status NvmlSensor::BeginMeasurement() {
  if (measuring_) return InvalidArgument(name_ + ": a measurement is already running");
  RETURN_IF_ERROR(meter_.Start());
  measuring_ = true;
  return Status::Ok();
}

Result<SensorReport> NvmlSensor::EndMeasurement() {
  if (!measuring_) return InvalidArgument(name_ + ": no measurement is running");
  measuring_ = false;
  ASSIGN_OR_RETURN(nvml::EnergyReading reading, meter_.Stop());
  SensorReport report;
  if (reading.method == nvml::EnergyReading::Method::kPowerSampling) report.joules = reading.joules;
  report.notes.push_back(TelemetryNote(name_, reading));
  return report;
}

std::string NvmlSensor::TelemetryNote(const std::string& name, const nvml::EnergyReading& reading) {
  // Throttled: "nvml:0 throttled during the energy measurement: SwPowerCap, HwThermalSlowdown; SM clock
  // 1410→1155 MHz, …". Otherwise the same figures, so that every NVML measurement records them.
  std::string text = name;
  if (reading.Throttled()) {
    std::vector<std::string> slowdowns =
        nvml::ThrottleReasonNames(reading.throttle_reasons & nvml::kThrottleSlowdownMask);
    text += " throttled during the energy measurement: " + Join(slowdowns) + ";";
  } else {
    text += " during the energy measurement:";
  }
  text += fmt::format(
      " SM clock {}→{} MHz, memory clock {}→{} MHz, {} °C max, {} W average, {} W peak ({}, {} samples",
      Quantity(reading.start.sm_clock_mhz), Quantity(reading.end.sm_clock_mhz), Quantity(reading.start.mem_clock_mhz),
      Quantity(reading.end.mem_clock_mhz), Quantity(reading.max_temperature_c), Quantity(reading.average_power_w, 1),
      Quantity(reading.peak_power_w, 1), nvml::EnergyReading::MethodName(reading.method), reading.samples);
  // Idle, application clocks, sync boost, display clocks: states, not slowdowns, but worth recording.
  const uint64_t other = reading.throttle_reasons & ~nvml::kThrottleSlowdownMask;
  if (other != 0) text += "; clock events: " + Join(nvml::ThrottleReasonNames(other));
  text += ")";
  if (!reading.Throttled()) text += "; no throttling";
  return text;
}

std::vector<std::unique_ptr<EnergySensor>> DetectEnergySensors(const std::string& sysfs_root,
                                                               std::vector<std::string>* notes,
                                                               const std::optional<std::string>& nvml_library) {
  std::vector<std::unique_ptr<EnergySensor>> sensors;
  std::vector<std::string> local_notes;
  std::vector<std::string>& out = notes ? *notes : local_notes;
  DetectPowercap(sysfs_root, sensors, out);
  DetectHwmon(sysfs_root, sensors, out);
  // NVML does not live under a sysfs root, so a fake root (tests) leaves it out unless a library is named.
  if (nvml_library) {
    DetectNvml(*nvml_library, sensors, out);
  } else if (fs::path(sysfs_root).lexically_normal() == fs::path("/sys")) {
    DetectNvml(nvml::Nvml::kDefaultLibrary, sensors, out);
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
  EnergyMeasurement m;
  double reads_joules = 0;  // end read - start read
  auto loop = [&]() -> Status {
    ASSIGN_OR_RETURN(double start_joules, sensor.ReadJoules());
    const int64_t start_ns = NowNs();
    const int64_t min_ns = static_cast<int64_t>(min_seconds * 1e9);
    int64_t last_sample_ns = start_ns, now = start_ns;
    do {
      RETURN_IF_ERROR(run_once());
      ++m.iterations;
      now = NowNs();
      if (now - last_sample_ns >= kSampleEveryNs) {
        RETURN_IF_ERROR(sensor.Sample());
        last_sample_ns = now;
      }
    } while (now - start_ns < min_ns);
    ASSIGN_OR_RETURN(double end_joules, sensor.ReadJoules());
    m.seconds = static_cast<double>(NowNs() - start_ns) * 1e-9;
    reads_joules = end_joules - start_joules;
    return Status::Ok();
  };
  RETURN_IF_ERROR(sensor.BeginMeasurement());
  const Status looped = loop();
  // The sensor's measurement ends whichever way the loop did; the loop's error comes first.
  Result<SensorReport> report = sensor.EndMeasurement();
  RETURN_IF_ERROR(looped);
  RETURN_IF_ERROR(report.status());
  const double total = report->joules ? *report->joules : reads_joules;
  if (!(total > 0)) {
    return Unsupported(sensor.name() + ": energy did not increase over " + std::to_string(m.seconds) +
                       " s; the sensor is not updating");
  }
  m.total_joules = total;
  m.joules_per_inference = total / m.iterations;
  m.source = "measured:" + sensor.name();
  m.notes = std::move(report->notes);
  return m;
}

}  // namespace chipfit
