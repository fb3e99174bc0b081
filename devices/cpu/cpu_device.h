// The CPU device: discovery through libcpuinfo, execution through oneDNN.
#pragma once

#include <filesystem>
#include <optional>

#include "devices/device.h"

namespace chipfit {

class CpuDevice final : public IDevice {
 public:
  explicit CpuDevice(DeviceInfo info) : info_(std::move(info)) {}
  const DeviceInfo& info() const override { return info_; }

 private:
  DeviceInfo info_;
};

// Describes this machine's CPU: model, cores, caches, ISA features, the oneDNN build and the
// ISA oneDNN will dispatch to, and which precisions chipfit offers on it (with reasons).
void DiscoverCpu(DiscoveryReport& report);

// Physical cores as the kernel sees them: distinct (physical_package_id, core_id) pairs under
// `cpu_root` (/sys/devices/system/cpu), or nullopt when the topology files are missing. libcpuinfo
// derives cores from CPUID, which some hypervisors fill oddly (a 2-core VM reported as 1 core with
// 2 threads); the kernel's view is what the threads actually run on.
std::optional<int> SysfsCoreCount(const std::filesystem::path& cpu_root);

}  // namespace chipfit
