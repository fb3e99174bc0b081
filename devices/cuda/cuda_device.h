// The CUDA device: every GPU the CUDA runtime sees (built only when the toolkit is found).
#pragma once

#include "devices/device.h"

namespace chipfit {

class CudaDevice final : public IDevice {
 public:
  explicit CudaDevice(DeviceInfo info) : info_(std::move(info)) {}
  const DeviceInfo& info() const override { return info_; }

 private:
  DeviceInfo info_;
};

// Adds cuda:0, cuda:1 …; no driver or no GPU is a note naming the CUDA error.
void DiscoverCuda(DiscoveryReport& report);

}  // namespace chipfit
