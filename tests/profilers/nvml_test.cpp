// NVML loading, telemetry and energy metering, and the energy profiler's NVML sensor (detection,
// MeasureEnergy with the counter and with power sampling, the telemetry note), against a fake
// libnvidia-ml (fake_nvml.cpp), so that they run without a GPU or driver. The fake's state is steered
// through its exported fake_nvml_* functions.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <thread>

#include "profilers/energy/energy_profiler.h"
#include "profilers/energy/nvml.h"
#include "profilers/energy/sensors.h"

#ifndef CHIPFIT_FAKE_NVML_PATH
#error "CHIPFIT_FAKE_NVML_PATH must name the fake NVML library (tests/profilers/nvml.cmake)"
#endif

namespace chipfit::nvml {
namespace {

using namespace std::chrono_literals;
// gtest without gmock: substring checks that print both strings when they fail.
::testing::AssertionResult HasSubstr(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}
::testing::AssertionResult StartsWith(const std::string& text, const std::string& prefix) {
  if (text.starts_with(prefix)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not start with \"" << prefix << "\"";
}

class NvmlTest : public ::testing::Test {
 protected:
  // The test's own handle on the fake: dlopen of the same path returns the library Nvml::Load opens, so
  // the controls reach its state; holding it keeps the state across Nvml's dlclose.
  static void SetUpTestSuite() {
    handle_ = dlopen(CHIPFIT_FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    set_ = reinterpret_cast<void (*)(const char*, long long)>(dlsym(handle_, "fake_nvml_set"));
    get_ = reinterpret_cast<long long (*)(const char*)>(dlsym(handle_, "fake_nvml_get"));
    reset_ = reinterpret_cast<void (*)()>(dlsym(handle_, "fake_nvml_reset"));
    ASSERT_TRUE(set_ != nullptr && get_ != nullptr && reset_ != nullptr);
  }
  static void TearDownTestSuite() {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(handle_, nullptr);
    reset_();
  }

  static void Set(const char* key, long long value) { set_(key, value); }
  static long long Get(const char* key) { return get_(key); }

  static NvmlGpu OpenFake() {
    auto nvml = Nvml::Load(CHIPFIT_FAKE_NVML_PATH);
    EXPECT_TRUE(nvml.ok()) << nvml.status().ToString();
    auto gpu = (*nvml)->Open(0);
    EXPECT_TRUE(gpu.ok()) << gpu.status().ToString();
    return *gpu;
  }

  static inline void* handle_ = nullptr;
  static inline void (*set_)(const char*, long long) = nullptr;
  static inline long long (*get_)(const char*) = nullptr;
  static inline void (*reset_)() = nullptr;
};

TEST_F(NvmlTest, MissingLibraryIsUnsupportedWithDlerror) {
  auto nvml = Nvml::Load("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(StartsWith(nvml.status().message(), "no NVML library: "));
  EXPECT_TRUE(HasSubstr(nvml.status().message(), "/nonexistent/libnvidia-ml.so.1"));
}

TEST_F(NvmlTest, LibraryWithoutNvmlIsUnsupported) {
  auto nvml = Nvml::Load("libm.so.6");
  ASSERT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(nvml.status().message(), "no NVML library: libm.so.6 has no nvmlInit_v2");
}

TEST_F(NvmlTest, InitFailureSurfacesErrorString) {
  Set("init_error", 9);  // NVML_ERROR_DRIVER_NOT_LOADED: a machine without the driver
  auto no_driver = Nvml::Load(CHIPFIT_FAKE_NVML_PATH);
  ASSERT_FALSE(no_driver.ok());
  EXPECT_EQ(no_driver.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(no_driver.status().message(), "nvmlInit_v2: Driver Not Loaded (NVML error 9)");

  Set("init_error", 999);
  auto unknown = Nvml::Load(CHIPFIT_FAKE_NVML_PATH);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInternal);
  EXPECT_EQ(unknown.status().message(), "nvmlInit_v2: Unknown Error (NVML error 999)");
  EXPECT_EQ(Get("init_count"), 0);
}

TEST_F(NvmlTest, ShutsDownWhenLastHandleGoes) {
  {
    auto nvml = Nvml::Load(CHIPFIT_FAKE_NVML_PATH);
    ASSERT_TRUE(nvml.ok()) << nvml.status().ToString();
    auto gpu = (*nvml)->Open(0);
    ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
    nvml = Unsupported("released");  // the NvmlGpu alone keeps NVML up
    EXPECT_EQ(Get("init_count"), 1);
    EXPECT_TRUE(gpu->PowerWatts().ok());
  }
  EXPECT_EQ(Get("init_count"), 0);
}

TEST_F(NvmlTest, OpensByPciBusIdBeforeIndex) {
  auto nvml = Nvml::Load(CHIPFIT_FAKE_NVML_PATH);
  ASSERT_TRUE(nvml.ok()) << nvml.status().ToString();
  EXPECT_TRUE((*nvml)->Open(0).ok());
  // The bus id wins: CUDA's device 3 may be NVML's 0.
  EXPECT_TRUE((*nvml)->Open(3, "00000000:01:00.0").ok());

  auto bad_index = (*nvml)->Open(1);
  ASSERT_FALSE(bad_index.ok());
  EXPECT_EQ(bad_index.status().code(), StatusCode::kInternal);
  EXPECT_EQ(bad_index.status().message(), "nvmlDeviceGetHandleByIndex_v2(1): Invalid Argument (NVML error 2)");

  auto bad_bus = (*nvml)->Open(0, "0000:99:00.0");
  ASSERT_FALSE(bad_bus.ok());
  EXPECT_TRUE(HasSubstr(bad_bus.status().message(), "nvmlDeviceGetHandleByPciBusId_v2(\"0000:99:00.0\")"));
  EXPECT_TRUE(HasSubstr(bad_bus.status().message(), "Not Found"));
}

TEST_F(NvmlTest, TelemetryReadsEveryQuantity) {
  Set("power_mw", 123500);
  Set("power_limit_mw", 250000);
  Set("temperature_c", 67);
  Set("sm_clock_mhz", 1980);
  Set("mem_clock_mhz", 2619);
  Set("throttle_reasons", 0x4 | 0x20);
  NvmlGpu gpu = OpenFake();
  auto t = gpu.Telemetry();
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_DOUBLE_EQ(t->power_w, 123.5);
  EXPECT_DOUBLE_EQ(t->power_limit_w, 250);
  EXPECT_DOUBLE_EQ(t->temperature_c, 67);
  EXPECT_DOUBLE_EQ(t->sm_clock_mhz, 1980);
  EXPECT_DOUBLE_EQ(t->mem_clock_mhz, 2619);
  EXPECT_EQ(t->throttle_reasons, 0x24u);
  EXPECT_EQ(t->ThrottleNames(), (std::vector<std::string>{"SwPowerCap", "SwThermalSlowdown"}));
  EXPECT_TRUE(t->Throttled());
}

TEST_F(NvmlTest, TelemetryLeavesUnreportedQuantitiesNaN) {
  Set("power_supported", 0);
  NvmlGpu gpu = OpenFake();
  auto t = gpu.Telemetry();
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(std::isnan(t->power_w));
  EXPECT_DOUBLE_EQ(t->temperature_c, 40);
  auto power = gpu.PowerWatts();
  ASSERT_FALSE(power.ok());
  EXPECT_EQ(power.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(power.status().message(), "nvmlDeviceGetPowerUsage: Not Supported (NVML error 3)");
}

TEST(ThrottleReasonNamesTest, NamesKnownBitsAndShowsOthersInHex) {
  EXPECT_TRUE(ThrottleReasonNames(0).empty());
  EXPECT_EQ(ThrottleReasonNames(kThrottleGpuIdle | kThrottleHwThermalSlowdown | 0x200),
            (std::vector<std::string>{"GpuIdle", "HwThermalSlowdown", "0x200"}));
  EXPECT_EQ(ThrottleReasonNames(0x1ff).size(), 9u);
  EXPECT_EQ(ThrottleReasonNames(0x1ff).back(), "DisplayClockSetting");
  GpuTelemetry idle;
  idle.throttle_reasons = kThrottleGpuIdle | kThrottleApplicationsClocksSetting;
  EXPECT_FALSE(idle.Throttled());  // settings and idleness, not a slowdown
  idle.throttle_reasons |= kThrottleHwPowerBrakeSlowdown;
  EXPECT_TRUE(idle.Throttled());
}

TEST_F(NvmlTest, EnergyFromCounterAndThrottlingSeenDuringRun) {
  Set("power_mw", 50000);
  NvmlGpu gpu = OpenFake();
  ASSERT_TRUE(gpu.HasEnergyCounter());
  EnergyMeter meter(gpu);
  ASSERT_TRUE(meter.Start().ok());
  std::this_thread::sleep_for(100ms);
  Set("throttle_reasons", kThrottleHwThermalSlowdown);  // a slowdown that is over by the end of the run
  Set("temperature_c", 88);
  std::this_thread::sleep_for(50ms);
  Set("throttle_reasons", 0);
  Set("temperature_c", 45);
  std::this_thread::sleep_for(50ms);
  auto r = meter.Stop();
  ASSERT_TRUE(r.ok()) << r.status().ToString();

  EXPECT_EQ(r->method, EnergyReading::Method::kCounter);
  EXPECT_GE(r->seconds, 0.2);
  EXPECT_LT(r->seconds, 0.6);
  // The fake's counter integrates 50 W over the same clock, to 1 mJ.
  EXPECT_NEAR(r->joules, 50 * r->seconds, 0.01 + 0.01 * r->joules);
  EXPECT_GE(r->joules, 9.9);
  EXPECT_NEAR(r->average_power_w, 50, 0.6);
  EXPECT_DOUBLE_EQ(r->peak_power_w, 50);
  EXPECT_GE(r->samples, 5);  // the sampler runs for throttling and temperature even with a counter
  EXPECT_TRUE(r->Throttled());
  EXPECT_EQ(r->ThrottleNames(), (std::vector<std::string>{"HwThermalSlowdown"}));
  EXPECT_EQ(r->end.throttle_reasons, 0u);
  EXPECT_DOUBLE_EQ(r->max_temperature_c, 88);
  EXPECT_DOUBLE_EQ(r->start.temperature_c, 40);
  EXPECT_DOUBLE_EQ(r->end.temperature_c, 45);
  EXPECT_DOUBLE_EQ(r->start.sm_clock_mhz, 1410);
  EXPECT_STREQ(EnergyReading::MethodName(r->method), "energy counter");
}

TEST_F(NvmlTest, FallsBackToPowerSamplingEvery10ms) {
  Set("energy_supported", 0);
  Set("power_mw", 50000);
  NvmlGpu gpu = OpenFake();
  auto counter = gpu.EnergyJoules();
  ASSERT_FALSE(counter.ok());
  EXPECT_EQ(counter.status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(StartsWith(counter.status().message(), "this GPU has no energy counter"));
  EXPECT_TRUE(HasSubstr(counter.status().message(), "Not Supported"));

  EnergyMeter meter(gpu);
  ASSERT_TRUE(meter.Start().ok());
  const long long queries_at_start = Get("power_queries");
  std::this_thread::sleep_for(200ms);
  auto r = meter.Stop();
  ASSERT_TRUE(r.ok()) << r.status().ToString();

  EXPECT_EQ(r->method, EnergyReading::Method::kPowerSampling);
  EXPECT_STREQ(EnergyReading::MethodName(r->method), "power sampling");
  // About 20 sampler samples in 200 ms, plus Start's and Stop's; a loaded machine may take fewer.
  EXPECT_GE(r->samples, 8);
  EXPECT_LE(r->samples, static_cast<int>(r->seconds / 0.010) + 3);
  EXPECT_GE(Get("power_queries") - queries_at_start, r->samples - 1);
  EXPECT_NEAR(r->joules, 50 * r->seconds, 1e-6);
  EXPECT_GE(r->joules, 10.0 - 1e-6);
  EXPECT_FALSE(r->Throttled());
}

TEST_F(NvmlTest, PowerSamplingIntegratesAStep) {
  Set("power_mw", 50000);
  NvmlGpu gpu = OpenFake();
  EnergyMeter meter(gpu);
  meter.ForcePowerSampling(true);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(meter.Start().ok());
  std::this_thread::sleep_for(100ms);
  const auto t1 = std::chrono::steady_clock::now();
  Set("power_mw", 100000);
  std::this_thread::sleep_for(100ms);
  auto r = meter.Stop();
  const auto t2 = std::chrono::steady_clock::now();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->method, EnergyReading::Method::kPowerSampling);
  const double expected =
      50 * std::chrono::duration<double>(t1 - t0).count() + 100 * std::chrono::duration<double>(t2 - t1).count();
  // The trapezoid misplaces the step by at most one 10 ms period: 50 W x 10 ms.
  EXPECT_NEAR(r->joules, expected, 0.6);
  EXPECT_DOUBLE_EQ(r->peak_power_w, 100);
}

TEST_F(NvmlTest, NoCounterAndNoPowerIsUnsupported) {
  Set("energy_supported", 0);
  Set("power_supported", 0);
  NvmlGpu gpu = OpenFake();
  EnergyMeter meter(gpu);
  Status started = meter.Start();
  EXPECT_EQ(started.code(), StatusCode::kUnsupported);
  EXPECT_TRUE(HasSubstr(started.message(), "no energy counter"));
  EXPECT_EQ(meter.Stop().status().code(), StatusCode::kInvalidArgument);
}

TEST_F(NvmlTest, MeterRunsAgainAfterStop) {
  Set("power_mw", 20000);
  NvmlGpu gpu = OpenFake();
  EnergyMeter meter(gpu);
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE(meter.Start().ok());
    EXPECT_EQ(meter.Start().code(), StatusCode::kInvalidArgument);
    std::this_thread::sleep_for(20ms);
    auto r = meter.Stop();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_NEAR(r->joules, 20 * r->seconds, 0.01 + 0.01 * r->joules);
  }
}

// The energy profiler's sensor -------------------------------------------------------------------------

std::string JoinLines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

// No sysfs sensors under this root, so NVML's are the only ones.
constexpr const char* kNoSysfs = "/nonexistent/chipfit-sysfs";

TEST_F(NvmlTest, DetectFindsTheGpuWithItsCounter) {
  std::vector<std::string> notes;
  auto sensors = DetectEnergySensors(kNoSysfs, &notes, std::string(CHIPFIT_FAKE_NVML_PATH));
  ASSERT_EQ(sensors.size(), 1u) << JoinLines(notes);
  EXPECT_EQ(sensors[0]->name(), "nvml:0");
  EXPECT_FALSE(sensors[0]->integrated());
  EXPECT_FALSE(HasSubstr(JoinLines(notes), "NVML"));
  EXPECT_FALSE(HasSubstr(JoinLines(notes), "no energy sensor found"));
}

TEST_F(NvmlTest, DetectWithoutCounterGivesAPowerIntegratingSensor) {
  Set("energy_supported", 0);
  Set("power_mw", 20000);
  std::vector<std::string> notes;
  auto sensors = DetectEnergySensors(kNoSysfs, &notes, std::string(CHIPFIT_FAKE_NVML_PATH));
  ASSERT_EQ(sensors.size(), 1u) << JoinLines(notes);
  EXPECT_TRUE(sensors[0]->integrated());
  EXPECT_TRUE(HasSubstr(JoinLines(notes), "nvml:0: no energy counter (older than Volta): power sampled every 10 ms"));
  // Outside a measurement it integrates its own readings, as HwmonPowerSensor does: 20 W x >= 50 ms.
  const double start = *sensors[0]->ReadJoules();
  std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(sensors[0]->Sample().ok());
  const double used = *sensors[0]->ReadJoules() - start;
  EXPECT_GE(used, 1.0 - 1e-9);
  EXPECT_LT(used, 5.0);
}

TEST_F(NvmlTest, DetectSaysWhyNvmlIsUnusable) {
  auto notes_for = [](const std::string& library) {
    std::vector<std::string> notes;
    EXPECT_TRUE(DetectEnergySensors(kNoSysfs, &notes, library).empty());
    EXPECT_TRUE(!notes.empty() && HasSubstr(notes.back(), "no energy sensor found"));
    return JoinLines(notes);
  };
  EXPECT_TRUE(HasSubstr(notes_for("/nonexistent/libnvidia-ml.so.1"), "NVML: no NVML library: "));
  EXPECT_TRUE(HasSubstr(notes_for("libm.so.6"), "NVML: no NVML library: libm.so.6 has no nvmlInit_v2"));

  Set("init_error", 9);
  EXPECT_TRUE(HasSubstr(notes_for(CHIPFIT_FAKE_NVML_PATH), "NVML: nvmlInit_v2: Driver Not Loaded (NVML error 9)"));
  Set("init_error", 0);

  Set("device_count", 0);
  EXPECT_TRUE(HasSubstr(notes_for(CHIPFIT_FAKE_NVML_PATH), "NVML: no GPU"));
  Set("device_count", 2);  // the fake opens only index 0
  std::vector<std::string> notes;
  EXPECT_EQ(DetectEnergySensors(kNoSysfs, &notes, std::string(CHIPFIT_FAKE_NVML_PATH)).size(), 1u);
  EXPECT_TRUE(HasSubstr(JoinLines(notes), "nvml:1: nvmlDeviceGetHandleByIndex_v2(1): Invalid Argument"));
  Set("device_count", 1);

  Set("energy_supported", 0);
  Set("power_supported", 0);
  const std::string neither = notes_for(CHIPFIT_FAKE_NVML_PATH);
  EXPECT_TRUE(HasSubstr(neither, "nvml:0: this GPU has no energy counter"));
  EXPECT_TRUE(HasSubstr(neither, "and no power reading: nvmlDeviceGetPowerUsage: Not Supported"));
  EXPECT_EQ(Get("init_count"), 0);  // nothing kept NVML open
}

TEST_F(NvmlTest, MeasureEnergyWithTheCounterRecordsTelemetry) {
  Set("power_mw", 50000);
  auto sensor = NvmlSensor::Create("nvml:0", OpenFake());
  ASSERT_TRUE(sensor.ok()) << sensor.status().ToString();
  ASSERT_FALSE((*sensor)->integrated());
  auto m = MeasureEnergy(
      **sensor,
      [] {
        std::this_thread::sleep_for(5ms);
        return Status::Ok();
      },
      0.1);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->source, "measured:nvml:0");
  // The fake's counter integrates 50 W (to 1 mJ).
  EXPECT_NEAR(m->total_joules, 50 * m->seconds, 0.01 + 0.02 * m->total_joules);
  EXPECT_NEAR(m->joules_per_inference, m->total_joules / m->iterations, 1e-12);
  ASSERT_EQ(m->notes.size(), 1u);
  EXPECT_TRUE(StartsWith(m->notes[0],
                         "nvml:0 during the energy measurement: SM clock 1410→1410 MHz, memory clock "
                         "1215→1215 MHz, 40 °C max, "));
  EXPECT_TRUE(HasSubstr(m->notes[0], "(energy counter, "));
  EXPECT_TRUE(HasSubstr(m->notes[0], "50.0 W peak"));
  EXPECT_TRUE(HasSubstr(m->notes[0], "; no throttling"));
}

TEST_F(NvmlTest, MeasureEnergyWithoutCounterSamplesPowerOnItsOwnThread) {
  Set("energy_supported", 0);
  Set("power_mw", 50000);
  auto sensor = NvmlSensor::Create("nvml:0", OpenFake());
  ASSERT_TRUE(sensor.ok()) << sensor.status().ToString();
  ASSERT_TRUE((*sensor)->integrated());
  // Inferences of 40 ms: the loop samples only between them, the meter every 10 ms. The power steps
  // from 50 W to 100 W a third of the way in, in the middle of an inference.
  const auto t0 = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point t1;
  int runs = 0;
  auto m = MeasureEnergy(
      **sensor,
      [&] {
        if (runs++ == 2) {
          std::this_thread::sleep_for(15ms);
          t1 = std::chrono::steady_clock::now();
          Set("power_mw", 100000);
          std::this_thread::sleep_for(25ms);
        } else {
          std::this_thread::sleep_for(40ms);
        }
        return Status::Ok();
      },
      0.2);
  const auto t2 = std::chrono::steady_clock::now();
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_GE(runs, 3);
  const double expected =
      50 * std::chrono::duration<double>(t1 - t0).count() + 100 * std::chrono::duration<double>(t2 - t1).count();
  // The trapezoid misplaces the step by at most one 10 ms period (0.5 J), where the loop's own samples
  // could misplace it by a whole 40 ms inference (2 J); a loaded machine may skip a sample.
  EXPECT_NEAR(m->total_joules, expected, 1.0);
  ASSERT_EQ(m->notes.size(), 1u);
  EXPECT_TRUE(HasSubstr(m->notes[0], "(power sampling, "));
  EXPECT_TRUE(HasSubstr(m->notes[0], "100.0 W peak"));
  EXPECT_GE(Get("power_queries"), 10);
}

TEST_F(NvmlTest, ThrottlingDuringTheMeasurementBecomesATargetNote) {
  Set("power_mw", 300000);
  auto sensor = NvmlSensor::Create("nvml:0", OpenFake());
  ASSERT_TRUE(sensor.ok()) << sensor.status().ToString();
  int runs = 0;
  auto m = MeasureEnergy(
      **sensor,
      [&] {
        if (runs++ == 3) {
          Set("throttle_reasons", kThrottleSwPowerCap | kThrottleHwThermalSlowdown | kThrottleGpuIdle);
          Set("sm_clock_mhz", 1155);
          Set("temperature_c", 83);
        }
        std::this_thread::sleep_for(10ms);
        if (runs == 8) Set("throttle_reasons", kThrottleSwPowerCap);  // still capped at the end
        return Status::Ok();
      },
      0.1);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->notes.size(), 1u);
  EXPECT_TRUE(StartsWith(m->notes[0],
                         "nvml:0 throttled during the energy measurement: SwPowerCap, HwThermalSlowdown; SM clock "
                         "1410→1155 MHz, memory clock 1215→1215 MHz, 83 °C max, "))
      << m->notes[0];
  EXPECT_TRUE(HasSubstr(m->notes[0], "; clock events: GpuIdle)"));
  EXPECT_FALSE(HasSubstr(m->notes[0], "no throttling"));

  // The profiler records it with the measured figure: a target note, beside "energy: measured by".
  auto model = LoadEnergyModel(std::string(CHIPFIT_SOURCE_DIR) + "/resources/energy/coefficients.json");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  TargetResult result;
  AttributeTargetEnergy(*model, *m, result);
  ASSERT_TRUE(result.energy.has_value());
  EXPECT_EQ(result.energy->source, "measured:nvml:0");
  const std::string notes = JoinLines(result.notes);
  EXPECT_TRUE(HasSubstr(notes, "energy: measured by nvml:0 over "));
  EXPECT_TRUE(
      HasSubstr(notes, "energy: nvml:0 throttled during the energy measurement: SwPowerCap, HwThermalSlowdown; "));
}

TEST_F(NvmlTest, MeasurementEndsWhenTheLoopFails) {
  Set("power_mw", 50000);
  auto sensor = NvmlSensor::Create("nvml:0", OpenFake());
  ASSERT_TRUE(sensor.ok()) << sensor.status().ToString();
  auto failed = MeasureEnergy(
      **sensor, [] { return Internal("kernel failed"); }, 0.01);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "kernel failed");
  // The meter was stopped: the next measurement starts.
  auto m = MeasureEnergy(
      **sensor,
      [] {
        std::this_thread::sleep_for(5ms);
        return Status::Ok();
      },
      0.03);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->notes.size(), 1u);
}

TEST(NvmlSensorNoteTest, UnreportedQuantitiesShowAsQuestionMarks) {
  EnergyReading r;
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  r.method = EnergyReading::Method::kPowerSampling;
  r.start.sm_clock_mhz = kNaN;
  r.end.sm_clock_mhz = kNaN;
  r.start.mem_clock_mhz = 5001;
  r.end.mem_clock_mhz = 5001;
  r.max_temperature_c = kNaN;
  r.average_power_w = 61.25;
  r.peak_power_w = 70;
  r.samples = 102;
  r.throttle_reasons = kThrottleGpuIdle | kThrottleApplicationsClocksSetting;
  EXPECT_EQ(NvmlSensor::TelemetryNote("nvml:1", r),
            "nvml:1 during the energy measurement: SM clock ?→? MHz, memory clock 5001→5001 MHz, ? °C max, 61.2 W "
            "average, 70.0 W peak (power sampling, 102 samples; clock events: GpuIdle, ApplicationsClocksSetting); no "
            "throttling");
}

}  // namespace
}  // namespace chipfit::nvml
