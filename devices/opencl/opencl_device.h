// The OpenCL device: every platform/device the ICD loader finds (POCL's CPU device in CI).
#pragma once

#include "devices/device.h"

namespace chipfit {

class OpenCLDevice final : public IDevice {
 public:
  explicit OpenCLDevice(DeviceInfo info) : info_(std::move(info)) {}
  const DeviceInfo& info() const override { return info_; }

 private:
  DeviceInfo info_;
};

// Adds one device per OpenCL device across all platforms, numbered opencl:0, opencl:1 … in
// platform order. No platform (no ICD installed) is a note, not an error.
void DiscoverOpenCL(DiscoveryReport& report);

}  // namespace chipfit
