// Energy: sensors over fake sysfs trees (powercap with wrap-around, hwmon), the measuring loop, the
// coefficient table and the per-layer estimate against hand-computed picojoules.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <string>
#include <thread>

#include "profilers/energy/energy_model.h"
#include "profilers/energy/energy_profiler.h"
#include "profilers/energy/sensors.h"

namespace chipfit {
namespace {

namespace fs = std::filesystem;

// A per-process, per-test sysfs root, removed afterwards.
class EnergySensorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("chipfit_energy_test_" + std::to_string(getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  static void Write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text << "\n";
  }

  // A RAPL-like zone: class/powercap/intel-rapl:0 with name, energy_uj and max_energy_range_uj.
  fs::path MakeZone(const std::string& dir, const std::string& name, uint64_t energy_uj, uint64_t range_uj) {
    const fs::path zone = root_ / "class" / "powercap" / dir;
    Write(zone / "name", name);
    Write(zone / "energy_uj", std::to_string(energy_uj));
    Write(zone / "max_energy_range_uj", std::to_string(range_uj));
    return zone;
  }

  fs::path root_;
};

TEST_F(EnergySensorTest, PowercapZoneIsFoundAndReadInJoules) {
  MakeZone("intel-rapl:0", "package-0", 2'500'000, 262'143'328'850);
  // The control-type directory itself has no counter and must not become a sensor.
  Write(root_ / "class" / "powercap" / "intel-rapl" / "enabled", "1");
  std::vector<std::string> notes;
  auto sensors = DetectEnergySensors(root_.string(), &notes);
  ASSERT_EQ(sensors.size(), 1u);
  EXPECT_EQ(sensors[0]->name(), "powercap:intel-rapl:0/package-0");
  EXPECT_FALSE(sensors[0]->integrated());
  Result<double> joules = sensors[0]->ReadJoules();
  ASSERT_TRUE(joules.ok()) << joules.status().ToString();
  EXPECT_DOUBLE_EQ(*joules, 2.5);
}

TEST_F(EnergySensorTest, PowercapCounterWrapAddsTheRange) {
  const fs::path zone = MakeZone("intel-rapl:0", "package-0", 900'000, 1'000'000);
  PowercapSensor sensor("powercap:test", (zone / "energy_uj").string(), 1'000'000);
  Result<double> before = sensor.ReadJoules();
  ASSERT_TRUE(before.ok());
  EXPECT_DOUBLE_EQ(*before, 0.9);
  // 0.9 J → wrap at 1 J → 0.1 J on the counter: 0.2 J were used.
  Write(zone / "energy_uj", "100000");
  Result<double> after = sensor.ReadJoules();
  ASSERT_TRUE(after.ok());
  EXPECT_NEAR(*after - *before, 0.2, 1e-12);
  // A second wrap keeps accumulating.
  Write(zone / "energy_uj", "50000");
  EXPECT_NEAR(*sensor.ReadJoules() - *before, 1.15, 1e-12);
}

TEST_F(EnergySensorTest, EmptyRootFindsNothingAndSaysWhatItLookedFor) {
  std::vector<std::string> notes;
  auto sensors = DetectEnergySensors(root_.string(), &notes);
  EXPECT_TRUE(sensors.empty());
  const std::string all = std::accumulate(notes.begin(), notes.end(), std::string(),
                                          [](std::string a, const std::string& b) { return a + b + "\n"; });
  EXPECT_NE(all.find("powercap"), std::string::npos) << all;
  EXPECT_NE(all.find("hwmon"), std::string::npos) << all;
  EXPECT_NE(all.find("NVML"), std::string::npos) << all;
  EXPECT_NE(all.find("no energy sensor found"), std::string::npos) << all;
}

TEST_F(EnergySensorTest, UnreadableZoneIsSkippedWithAReason) {
  // A counter that cannot be read (here a directory, so the test holds even when run as root) is left
  // out with a note naming the zone, not turned into a sensor that fails later.
  const fs::path zone = MakeZone("intel-rapl:0", "package-0", 1, 1'000'000);
  fs::remove(zone / "energy_uj");
  fs::create_directory(zone / "energy_uj");
  std::vector<std::string> notes;
  EXPECT_TRUE(DetectEnergySensors(root_.string(), &notes).empty());
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("powercap:intel-rapl:0/package-0"), std::string::npos) << notes[0];
}

TEST(EnergyDetectTest, RealSystemDetectionSaysWhyWhenNothingIsFound) {
  std::vector<std::string> notes;
  auto sensors = DetectEnergySensors("/sys", &notes);
  for (const std::string& note : notes) std::cout << "  note: " << note << "\n";
  for (const auto& sensor : sensors) std::cout << "  sensor: " << sensor->name() << "\n";
  if (sensors.empty()) {
    ASSERT_FALSE(notes.empty());
    EXPECT_NE(notes.back().find("no energy sensor found"), std::string::npos);
  }
}

TEST_F(EnergySensorTest, HwmonEnergyAndPowerFiles) {
  const fs::path chip = root_ / "class" / "hwmon" / "hwmon3";
  Write(chip / "name", "amd_energy");
  Write(chip / "energy1_input", "7000000");  // µJ
  Write(chip / "power1_average", "1000000");
  Write(chip / "power1_input", "2000000");  // µW: 2 W; preferred over _average for the same channel
  Write(chip / "temp1_input", "45000");
  auto sensors = DetectEnergySensors(root_.string());
  ASSERT_EQ(sensors.size(), 2u);
  EXPECT_EQ(sensors[0]->name(), "hwmon:amd_energy/energy1");
  EXPECT_DOUBLE_EQ(*sensors[0]->ReadJoules(), 7.0);
  EXPECT_EQ(sensors[1]->name(), "hwmon:amd_energy/power1");
  EXPECT_TRUE(sensors[1]->integrated());

  // 2 W over ≥ 50 ms integrates to ≥ 0.1 J (and not wildly more on a loaded machine).
  auto* power = dynamic_cast<HwmonPowerSensor*>(sensors[1].get());
  ASSERT_NE(power, nullptr);
  EXPECT_DOUBLE_EQ(*power->ReadWatts(), 2.0);
  const double start = *power->ReadJoules();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const double used = *power->ReadJoules() - start;
  EXPECT_GE(used, 0.1 - 1e-9);
  EXPECT_LT(used, 1.0);
}

TEST_F(EnergySensorTest, MeasureEnergyGivesJoulesPerInference) {
  const fs::path zone = MakeZone("intel-rapl:0", "package-0", 0, 1'000'000'000);
  auto sensors = DetectEnergySensors(root_.string());
  ASSERT_EQ(sensors.size(), 1u);
  // Each "inference" draws 5 mJ on the fake counter.
  uint64_t counter = 0;
  auto run_once = [&]() {
    counter += 5000;
    Write(zone / "energy_uj", std::to_string(counter));
    return Status::Ok();
  };
  Result<EnergyMeasurement> m = MeasureEnergy(*sensors[0], run_once, 0.05);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_GE(m->seconds, 0.05);
  EXPECT_GT(m->iterations, 0);
  EXPECT_NEAR(m->joules_per_inference, 0.005, 1e-12);
  EXPECT_EQ(m->source, "measured:powercap:intel-rapl:0/package-0");
  EXPECT_EQ(m->value().source, m->source);

  // A counter that never moves is an error, not 0 J per inference.
  Result<EnergyMeasurement> stuck = MeasureEnergy(
      *sensors[0], [] { return Status::Ok(); }, 0.01);
  EXPECT_FALSE(stuck.ok());
  // A failing inference stops the loop with its error.
  Result<EnergyMeasurement> failed = MeasureEnergy(
      *sensors[0], [] { return Internal("kernel failed"); }, 0.01);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "kernel failed");
}

Result<EnergyModel> LoadShippedModel() {
  return LoadEnergyModel(std::string(CHIPFIT_SOURCE_DIR) + "/resources/energy/coefficients.json");
}

TEST(EnergyModelTest, CoefficientFileCoversEveryDeviceAndPrecisionWithSources) {
  Result<EnergyModel> model = LoadShippedModel();
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  for (DeviceKind kind : EnergyModel::TableKinds()) {
    EXPECT_FALSE(model->Memory(kind).dram_per_byte.source.empty());
    EXPECT_DOUBLE_EQ(model->Memory(kind).dram_per_byte.pj, 160.0);  // 640 pJ per 32-bit word
    EXPECT_DOUBLE_EQ(model->Memory(kind).sram_per_byte.pj, 1.25);   // 5 pJ per 32-bit word
    for (Precision precision : EnergyModel::TablePrecisions()) {
      const OpEnergy& ops = model->Ops(kind, precision);
      EXPECT_GT(ops.mult.pj, 0) << DeviceKindName(kind) << ":" << PrecisionName(precision);
      EXPECT_GT(ops.add.pj, 0) << DeviceKindName(kind) << ":" << PrecisionName(precision);
      EXPECT_FALSE(ops.mult.source.empty());
      EXPECT_FALSE(ops.add.source.empty());
    }
  }
  EXPECT_DOUBLE_EQ(model->Ops(DeviceKind::kCpu, Precision::kFp32).mult.pj, 3.7);
  EXPECT_DOUBLE_EQ(model->Ops(DeviceKind::kCpu, Precision::kFp32).add.pj, 0.9);
}

// The energy ranking a user met: opencl:0:fp32 at 25.9 ms was estimated at the energy of cpu:fp32 at
// 0.275 ms for the same work. With static power × time, the slow target costs more, in proportion.
TEST(EnergyModelTest, ASlowerTargetIsNeverCheaperForTheSameWork) {
  Result<EnergyModel> model = LoadShippedModel();
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  for (DeviceKind kind : EnergyModel::TableKinds()) {
    EXPECT_GT(model->StaticWattsPerUnit(kind).pj, 0) << DeviceKindName(kind);
    EXPECT_FALSE(model->StaticWattsPerUnit(kind).source.empty()) << DeviceKindName(kind);
  }
  auto target = [](const std::string& name, const std::string& device, double ms) {
    TargetResult t;
    t.target = *ParseTarget(name);
    t.layers.push_back({.name = "conv", .op = "Conv", .device = device, .precision = "fp32", .time_p50_ms = ms});
    t.layers.back().flops = 36'000'000;
    t.layers.back().bytes_read = 500'000;
    t.layers.back().bytes_written = 100'000;
    return t;
  };
  TargetResult cpu = target("cpu:fp32", "cpu", 0.275);
  TargetResult opencl = target("opencl:0:fp32", "opencl:0", 25.9);
  AttributeTargetEnergy(*model, std::nullopt, cpu, 2);
  AttributeTargetEnergy(*model, std::nullopt, opencl, 2);
  ASSERT_TRUE(cpu.energy && opencl.energy);
  EXPECT_EQ(cpu.energy->source, "estimated");
  EXPECT_GT(opencl.energy->joules, 10 * cpu.energy->joules);
  // The difference is the static term: 2 units × W per unit × (25.9 − 0.275) ms.
  const double watts = 2 * model->StaticWattsPerUnit(DeviceKind::kOpenCL).pj;
  EXPECT_NEAR(opencl.energy->joules - cpu.energy->joules, watts * (25.9 - 0.275) * 1e-3, 1e-9);
  EXPECT_NE(cpu.notes.back().find("static power"), std::string::npos) << cpu.notes.back();
}

TEST(EnergyModelTest, BadTablesAreRefusedWithTheirPlace) {
  EXPECT_EQ(LoadEnergyModel("/nonexistent/coefficients.json").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ParseEnergyModel("{", "t").status().code(), StatusCode::kParseError);
  const Result<EnergyModel> missing = ParseEnergyModel(R"({"devices": {"cpu": {}}})", "t");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("memory"), std::string::npos) << missing.status().message();
}

TEST(EnergyModelTest, EstimateMatchesHandComputedPicojoules) {
  Result<EnergyModel> model = LoadShippedModel();
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  // fp32: 500 MACs = 1000 flops × (3.7 + 0.9)/2 pJ = 2300 pJ; 500 bytes × 640/4 pJ = 80000 pJ.
  EXPECT_NEAR(EstimateJoules(*model, DeviceKind::kCpu, Precision::kFp32, 1000, 400, 100), 82300e-12, 1e-18);
  // int8: 1000 MACs × (0.2 + 0.03) pJ = 230 pJ, no traffic.
  EXPECT_NEAR(EstimateJoules(*model, DeviceKind::kCpu, Precision::kInt8, 2000, 0, 0), 230e-12, 1e-20);
  // The reference device is costed as a CPU, tf32 as fp32.
  EXPECT_DOUBLE_EQ(EstimateJoules(*model, DeviceKind::kReference, Precision::kTf32, 1000, 400, 100),
                   EstimateJoules(*model, DeviceKind::kCpu, Precision::kFp32, 1000, 400, 100));
  // Lower precision moves the same work for less energy.
  EXPECT_LT(EstimateJoules(*model, DeviceKind::kCpu, Precision::kFp16, 1000, 0, 0),
            EstimateJoules(*model, DeviceKind::kCpu, Precision::kFp32, 1000, 0, 0));
}

TEST(EnergyModelTest, ScalingSumsToTheMeasuredTotalAndKeepsTheModelTotal) {
  std::vector<double> layers = {1e-6, 3e-6, 4e-6};
  Result<double> model_total = ScaleToMeasured(layers, 0.016);
  ASSERT_TRUE(model_total.ok());
  EXPECT_NEAR(*model_total, 8e-6, 1e-18);
  EXPECT_NEAR(layers[0] + layers[1] + layers[2], 0.016, 1e-15);
  EXPECT_NEAR(layers[1] / layers[0], 3.0, 1e-12);

  std::vector<double> zeros = {0, 0};
  EXPECT_FALSE(ScaleToMeasured(zeros, 1.0).ok());
  EXPECT_EQ(zeros, (std::vector<double>{0, 0}));

  std::string note;
  const EnergyEstimate scaled = AttributeEnergy({1, 1, 2}, 8.0, &note);
  EXPECT_TRUE(note.empty());
  EXPECT_EQ(scaled.model_total.source, "estimated");
  EXPECT_DOUBLE_EQ(scaled.model_total.joules, 4.0);
  ASSERT_EQ(scaled.layers.size(), 3u);
  EXPECT_DOUBLE_EQ(scaled.layers[2].joules, 4.0);
  EXPECT_EQ(scaled.layers[2].source, "estimated:scaled");

  const EnergyEstimate unmeasured = AttributeEnergy({1, 2}, std::nullopt);
  EXPECT_EQ(unmeasured.layers[1].source, "estimated");
  EXPECT_DOUBLE_EQ(unmeasured.layers[1].joules, 2.0);

  const EnergyEstimate unscalable = AttributeEnergy({0, 0}, 1.0, &note);
  EXPECT_EQ(unscalable.layers[0].source, "estimated");
  EXPECT_FALSE(note.empty());
}

}  // namespace
}  // namespace chipfit
