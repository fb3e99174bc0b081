// Energy sensors (powercap/RAPL, hwmon energy and power, NVML) behind one interface, their detection,
// and the measured-energy loop that turns a sensor into joules per inference (docs/measurement.md, "Energy").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "profilers/run_result.h"

namespace chipfit {

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

// Sensors found under `sysfs_root` (powercap zones, hwmon energy and power files) and, when the root is
// the real "/sys", NVML GPUs through dlopen("libnvidia-ml.so.1"). `notes`, when given, receives one line
// per place looked at and why nothing usable was there (missing, unreadable, NVML absent), so an empty
// result can say what was tried. Unreadable files (RAPL is root-only since Linux 5.10) are skipped.
std::vector<std::unique_ptr<EnergySensor>> DetectEnergySensors(const std::string& sysfs_root = "/sys",
                                                               std::vector<std::string>* notes = nullptr);

struct EnergyMeasurement {
  double joules_per_inference = 0;
  double total_joules = 0;
  double seconds = 0;
  int iterations = 0;
  std::string source;  // "measured:<sensor name>"
  EnergyValue value() const { return {joules_per_inference, source}; }
};

// Runs `run_once` until at least `min_seconds` have passed (and at least once), reading the sensor
// before and after and sampling it in between. The figure is everything the sensor's domain drew
// meanwhile (a whole package, a whole GPU), idle power included: a loop with nothing else running is
// the caller's job. A counter that did not move is an error, not zero joules.
Result<EnergyMeasurement> MeasureEnergy(EnergySensor& sensor, const std::function<Status()>& run_once,
                                        double min_seconds = 1.0);

}  // namespace chipfit
