// DeviceContext: what the executor needs from a device with its own memory (OpenCL, CUDA): buffers,
// transfers, a device timer. core knows only this interface; devices/<dev> implement it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/status.h"
#include "core/tensor/tensor.h"

namespace chipfit {

// One tensor's storage in device memory. `handle` is the device's own object (a cl_mem for
// OpenCL, a device pointer for CUDA) covering exactly `bytes`; null when `bytes` is 0.
struct DeviceBuffer {
  void* handle = nullptr;
  size_t bytes = 0;
};

// Device memory a compiled model needs, known before anything is allocated.
struct DeviceMemoryNeeds {
  size_t arena_bytes = 0;       // the planned intermediates (one allocation)
  size_t constant_bytes = 0;    // weights and other constants uploaded once
  size_t largest_constant = 0;  // the biggest single constant allocation
};

// Owns device memory; freed when the last reference goes.
class DeviceAllocation {
 public:
  DeviceAllocation() = default;
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;
  virtual ~DeviceAllocation() = default;
  virtual size_t bytes() const = 0;
  // The part [offset, offset + bytes) as a buffer of its own; offset is a multiple of Alignment().
  // The view stays valid while this allocation lives.
  virtual Result<DeviceBuffer> View(size_t offset, size_t bytes) = 0;
};

class DeviceContext {
 public:
  DeviceContext() = default;
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;
  virtual ~DeviceContext() = default;

  // "opencl:0": the device part of the target, as kernels and transfers are attributed.
  virtual std::string DeviceId() const = 0;
  // The dtype a value of `dtype` is kept in on the device (f16 for f32 under half storage).
  virtual DType StorageType(DType dtype) const { return dtype; }
  // Offsets of views into an allocation are multiples of this (bytes).
  virtual size_t Alignment() const = 0;
  // Whether a compiled model needing this much fits the device: checked before any allocation,
  // the error names both sizes and the device limit.
  virtual Status CheckFits(const DeviceMemoryNeeds& needs) const = 0;
  virtual Result<std::shared_ptr<DeviceAllocation>> Allocate(size_t bytes) = 0;
  // Host → device; converts the host tensor's dtype to the buffer's StorageType on the way.
  virtual Status Upload(const Tensor& host, const DeviceBuffer& dst) = 0;
  // Device → host, blocking; `host` has the host dtype and shape, converted from the storage type.
  virtual Status Download(const DeviceBuffer& src, Tensor& host) = 0;
  // Waits until everything enqueued so far has finished.
  virtual Status Finish() = 0;
  // Device time of the work enqueued between TimerBegin and TimerEndMs (waits for it).
  virtual void TimerBegin() = 0;
  virtual Result<double> TimerEndMs() = 0;
};

}  // namespace chipfit
