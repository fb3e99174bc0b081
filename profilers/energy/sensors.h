// Energy sensors (powercap/RAPL, hwmon energy and power, NVML) behind one interface, their detection,
// and the measured-energy loop that turns a sensor into joules per inference (docs/measurement.md, "Energy").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "profilers/energy/nvml.h"
#include "profilers/run_result.h"

namespace chipfit {

// What a sensor adds to one MeasureEnergy loop besides its two reads.
struct SensorReport {
  // The sensor's own figure for the loop, used instead of the difference of its reads (NVML without an
  // energy counter: power sampled every 10 ms on a thread of its own, whatever one inference takes).
  std::optional<double> joules{};
  // What it saw of its device meanwhile, a line each (NVML: clocks, temperature, throttling).
  std::vector<std::string> notes{};
};

// A source of cumulative energy. ReadJoules() has an arbitrary origin: only differences between two
// reads of the same sensor mean anything.
class EnergySensor {
 public:
  EnergySensor() = default;
  EnergySensor(const EnergySensor&) = delete;
  EnergySensor& operator=(const EnergySensor&) = delete;
  virtual ~EnergySensor() = default;

  // Short and stable, used in the source string: "powercap:intel-rapl:0/package-0", "hwmon:amdgpu/energy1",
  // "hwmon:nct6775/power1", "nvml:0".
  virtual std::string name() const = 0;
  virtual Result<double> ReadJoules() = 0;
  // Sensors that must be read often to stay right (a power reading to integrate, a counter that can
  // wrap more than once between reads) do it here; the measuring loop calls it every few milliseconds.
  virtual Status Sample() { return Status::Ok(); }
  // True for a sensor whose joules are a time integral of sampled watts, not a hardware counter: its
  // figure is only as good as the sampling, which the report should say.
  virtual bool integrated() const { return false; }
  // Called by MeasureEnergy before its first read and after its last: sensors that watch their device
  // during a measurement start and stop doing so here.
  virtual Status BeginMeasurement() { return Status::Ok(); }
  virtual Result<SensorReport> EndMeasurement() { return SensorReport{}; }
};

// A powercap zone (Intel/AMD RAPL through the kernel): `energy_uj` counts µJ and wraps to 0 after
// `max_energy_range_uj`. The sensor remembers its last raw reading and adds the range whenever the
// counter goes down, so reads at least once per wrap period (minutes at full power) stay exact.
class PowercapSensor final : public EnergySensor {
 public:
  PowercapSensor(std::string name, std::string energy_uj_path, uint64_t max_energy_range_uj);
  std::string name() const override { return name_; }
  Result<double> ReadJoules() override;
  Status Sample() override { return ReadJoules().status(); }

 private:
  std::string name_, path_;
  uint64_t range_uj_;
  bool has_last_ = false;
  uint64_t last_raw_uj_ = 0;
  uint64_t wrapped_uj_ = 0;  // Σ range over every wrap seen
};

// An hwmon `energy*_input` file: a 64-bit µJ counter that the drivers (amd_energy, amdgpu, …) do not
// wrap in practice; a decrease is reported as an error rather than guessed at.
class HwmonEnergySensor final : public EnergySensor {
 public:
  HwmonEnergySensor(std::string name, std::string energy_input_path);
  std::string name() const override { return name_; }
  Result<double> ReadJoules() override;

 private:
  std::string name_, path_;
};

// An hwmon `power*_input` / `power*_average` file (µW). Joules are the trapezoidal integral of the
// readings taken at each Sample() / ReadJoules(), so a loop that samples rarely gets a coarse figure.
class HwmonPowerSensor final : public EnergySensor {
 public:
  HwmonPowerSensor(std::string name, std::string power_path);
  std::string name() const override { return name_; }
  Result<double> ReadJoules() override;
  Status Sample() override;
  bool integrated() const override { return true; }
  Result<double> ReadWatts() const;

 private:
  std::string name_, path_;
  bool has_last_ = false;
  double last_watts_ = 0;
  int64_t last_ns_ = 0;  // steady_clock
  double joules_ = 0;
};

// An NVIDIA GPU through NVML (nvml.h), named "nvml:<NVML index>". Where the GPU has a total-energy
// counter (Volta and later) ReadJoules reads it. Where it has none the sensor is integrated():
// Sample() reads the power and ReadJoules is the trapezoidal integral of the readings. Between
// BeginMeasurement and EndMeasurement an nvml::EnergyMeter also samples power, clocks, temperature and
// throttle reasons every 10 ms on its own thread: without a counter its integral is the measurement's
// figure (the loop's own samples come only between inferences), and either way EndMeasurement reports
// the GPU's telemetry as a note, saying so when the GPU slowed down for power or heat.
class NvmlSensor final : public EnergySensor {
 public:
  // Unsupported where the GPU has neither an energy counter nor a power reading.
  static Result<std::unique_ptr<NvmlSensor>> Create(std::string name, nvml::NvmlGpu gpu);
  std::string name() const override { return name_; }
  Result<double> ReadJoules() override;
  Status Sample() override;
  bool integrated() const override { return !counter_; }
  Status BeginMeasurement() override;
  Result<SensorReport> EndMeasurement() override;
  // The telemetry line EndMeasurement reports, from the meter's reading.
  static std::string TelemetryNote(const std::string& name, const nvml::EnergyReading& reading);

 private:
  NvmlSensor(std::string name, nvml::NvmlGpu gpu, bool counter);

  std::string name_;
  nvml::NvmlGpu gpu_;
  bool counter_;
  nvml::EnergyMeter meter_;
  bool measuring_ = false;
  bool has_last_ = false;  // the power integral (no counter), as HwmonPowerSensor keeps it
  double last_watts_ = 0;
  int64_t last_ns_ = 0;
  double joules_ = 0;
};

// Sensors found under `sysfs_root` (powercap zones, hwmon energy and power files) and NVML GPUs through
// dlopen of `nvml_library`; by default (nullopt) libnvidia-ml.so.1, and only when the root is the real
// "/sys". `notes`, when given, receives one line per place looked at and why nothing usable was there
// (missing, unreadable, NVML absent), so an empty result can say what was tried. Unreadable files (RAPL
// is root-only since Linux 5.10) are skipped.
std::vector<std::unique_ptr<EnergySensor>> DetectEnergySensors(const std::string& sysfs_root = "/sys",
                                                               std::vector<std::string>* notes = nullptr,
                                                               const std::optional<std::string>& nvml_library = {});

struct EnergyMeasurement {
  double joules_per_inference = 0;
  double total_joules = 0;
  double seconds = 0;
  int iterations = 0;
  std::string source;  // "measured:<sensor name>"
  // What the sensor saw of its device during the loop (SensorReport::notes): NVML's clocks,
  // temperature and throttling. AttributeTargetEnergy adds them to the target's notes.
  std::vector<std::string> notes;
  EnergyValue value() const { return {joules_per_inference, source}; }
};

// Runs `run_once` until at least `min_seconds` have passed (and at least once), reading the sensor
// before and after and sampling it in between. The figure is everything the sensor's domain drew
// meanwhile (a whole package, a whole GPU), idle power included: a loop with nothing else running is
// the caller's job. A counter that did not move is an error, not zero joules. Sensors are sampled at
// most every 10 ms between runs, and BeginMeasurement / EndMeasurement bracket the loop.
Result<EnergyMeasurement> MeasureEnergy(EnergySensor& sensor, const std::function<Status()>& run_once,
                                        double min_seconds = 1.0);

}  // namespace chipfit
