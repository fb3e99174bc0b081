// Device discovery across every backend built into this binary.
#pragma once

#include "devices/device.h"

namespace chipfit {

// Finds the CPU, every OpenCL device and every CUDA device. Never fails: a backend that finds
// nothing, or fails, adds a note saying why ("CUDA: no driver (cudaErrorInsufficientDriver)").
DiscoveryReport DiscoverDevices();

}  // namespace chipfit
