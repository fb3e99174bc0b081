// The CPU device: discovery through libcpuinfo, execution through oneDNN (kernels arrive with issue 4).
#pragma once

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

}  // namespace chipfit
