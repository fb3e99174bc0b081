// Real discovery on this machine: the CPU with its ISA and oneDNN facts, and POCL's OpenCL device
// (scripts/setup-deps.sh installs pocl-opencl-icd, so a missing OpenCL device is a failure here).
#include "devices/registry.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>

#include <fstream>
#include <thread>

#include "devices/cpu/cpu_device.h"

#include "devices/device_json.h"

namespace chipfit {
namespace {

const DeviceInfo* Find(const DiscoveryReport& report, DeviceKind kind) {
  for (const auto& device : report.devices) {
    if (device->info().kind == kind) return &device->info();
  }
  return nullptr;
}

std::string Property(const DeviceInfo& info, const std::string& key) {
  for (const auto& [k, v] : info.properties) {
    if (k == key) return v;
  }
  return {};
}

TEST(DiscoveryTest, FindsTheCpuWithIsaAndOneDnn) {
  DiscoveryReport report = DiscoverDevices();
  const DeviceInfo* cpu = Find(report, DeviceKind::kCpu);
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->Id(), "cpu");
  EXPECT_FALSE(cpu->name.empty());
  EXPECT_GE(cpu->compute_units, 1);
  EXPECT_GT(cpu->memory_bytes, 0u);
  EXPECT_NE(cpu->runtime_version.find("oneDNN 2."), std::string::npos) << cpu->runtime_version;
  EXPECT_FALSE(Property(*cpu, "oneDNN ISA").empty());
#if defined(__x86_64__)
  // Every x86-64 CPU oneDNN 2.6 can use has at least SSE4.2; the list must come from CPUID.
  EXPECT_NE(std::find(cpu->features.begin(), cpu->features.end(), "sse4_2"), cpu->features.end());
#endif
  EXPECT_TRUE(cpu->SupportFor(Precision::kFp32).ok);
  EXPECT_FALSE(cpu->SupportFor(Precision::kTf32).ok);
  EXPECT_FALSE(cpu->SupportFor(Precision::kTf32).reason.empty());
}

// A fake /sys/devices/system/cpu: cores are distinct (package, core) pairs; SMT siblings and CPUs
// without topology (offline) do not add any.
TEST(CpuTopologyTest, CoresAreDistinctPackageCorePairs) {
  const auto root = std::filesystem::temp_directory_path() / ("chipfit_cpu_topology_" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  EXPECT_EQ(SysfsCoreCount(root), std::nullopt);  // no such folder
  auto add = [&](const std::string& cpu, int package, int core) {
    std::filesystem::create_directories(root / cpu / "topology");
    std::ofstream(root / cpu / "topology" / "physical_package_id") << package << "\n";
    std::ofstream(root / cpu / "topology" / "core_id") << core << "\n";
  };
  add("cpu0", 0, 0);
  add("cpu1", 0, 1);
  add("cpu2", 0, 0);                                   // SMT sibling of cpu0
  add("cpu3", 1, 0);                                   // second socket, same core id
  std::filesystem::create_directories(root / "cpu4");  // offline: no topology
  std::filesystem::create_directories(root / "cpufreq" / "topology");
  EXPECT_EQ(SysfsCoreCount(root), 3);
  std::filesystem::remove_all(root);
}

TEST(CpuTopologyTest, DiscoveredCoresMatchTheKernelsTopology) {
  const auto sysfs = SysfsCoreCount("/sys/devices/system/cpu");
  if (!sysfs) GTEST_SKIP() << "no CPU topology in /sys on this machine";
  DiscoveryReport report = DiscoverDevices();
  const DeviceInfo* cpu = Find(report, DeviceKind::kCpu);
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->compute_units, *sysfs);
  EXPECT_LE(cpu->compute_units, static_cast<int>(std::thread::hardware_concurrency()));
}

TEST(DiscoveryTest, PrecisionsFollowTheIsa) {
  DiscoveryReport report = DiscoverDevices();
  const DeviceInfo* cpu = Find(report, DeviceKind::kCpu);
  ASSERT_NE(cpu, nullptr);
  auto has = [&](const char* f) {
    return std::find(cpu->features.begin(), cpu->features.end(), f) != cpu->features.end();
  };
  if (has("avx512_bf16")) {
    EXPECT_TRUE(cpu->SupportFor(Precision::kBf16).ok);
    EXPECT_NE(cpu->SupportFor(Precision::kBf16).reason.find("native"), std::string::npos);
  }
  if (has("avx512_vnni")) {
    // A CPU with AMX runs int8 on its tile unit and says so; VNNI otherwise.
    const std::string& reason = cpu->SupportFor(Precision::kInt8).reason;
    EXPECT_TRUE(reason.find(has("amx_int8") ? "AMX" : "VNNI") != std::string::npos) << reason;
  }
}

TEST(DiscoveryTest, FindsThePoclOpenClDevice) {
  DiscoveryReport report = DiscoverDevices();
  const DeviceInfo* cl = nullptr;
  for (const auto& device : report.devices) {
    const DeviceInfo& info = device->info();
    if (info.kind == DeviceKind::kOpenCL &&
        Property(info, "platform").find("Portable Computing Language") != std::string::npos) {
      cl = &info;
    }
  }
  ASSERT_NE(cl, nullptr) << "no POCL OpenCL device; is pocl-opencl-icd installed (scripts/setup-deps.sh)?";
  EXPECT_GE(cl->compute_units, 1);
  EXPECT_GT(cl->memory_bytes, 0u);
  EXPECT_NE(cl->runtime_version.find("OpenCL"), std::string::npos);
  const Support fp16 = cl->SupportFor(Precision::kFp16);
  EXPECT_TRUE(fp16.ok);
  const bool khr_fp16 = std::find(cl->features.begin(), cl->features.end(), "cl_khr_fp16") != cl->features.end();
  EXPECT_NE(fp16.reason.find(khr_fp16 ? "native half" : "half storage"), std::string::npos) << fp16.reason;
  EXPECT_NE(Property(*cl, "fp16").find(khr_fp16 ? "arithmetic yes" : "arithmetic no"), std::string::npos);
  EXPECT_FALSE(cl->SupportFor(Precision::kInt8).ok);
}

TEST(DiscoveryTest, JsonHasEveryDeviceAndTargets) {
  DiscoveryReport report = DiscoverDevices();
  nlohmann::json j = DiscoveryToJson(report);
  ASSERT_EQ(j["devices"].size(), report.devices.size());
  EXPECT_EQ(j["devices"][0]["id"], "cpu");
  EXPECT_EQ(j["devices"][0]["precisions"][0]["target"], "cpu:fp32");
  EXPECT_TRUE(j["notes"].is_array());
}

}  // namespace
}  // namespace chipfit
