// IDevice, DeviceInfo and Support: what every device backend (cpu, opencl, cuda) exposes to the rest.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/target.h"

namespace chipfit {

// Whether something is supported; when not, `reason` is a sentence a user can act on. A supported
// entry may carry a note too ("half storage, float arithmetic: no cl_khr_fp16").
struct Support {
  bool ok = false;
  std::string reason;

  static Support Yes(std::string note = {}) { return {true, std::move(note)}; }
  static Support No(std::string reason) { return {false, std::move(reason)}; }
};

struct PrecisionSupport {
  Precision precision;
  Support support;
};

// Measured roofline ceilings (filled by `chipfit devices --measure`; absent until measured).
struct DeviceCeilings {
  std::map<Precision, double> peak_gflops;
  double memory_bandwidth_gbps = 0;
};

struct DeviceInfo {
  DeviceKind kind = DeviceKind::kCpu;
  int index = 0;
  std::string name;
  std::string vendor;
  std::string driver_version;         // OpenCL driver, CUDA driver; empty for the CPU
  std::string runtime_version;        // oneDNN version, OpenCL platform version, CUDA runtime version
  uint64_t memory_bytes = 0;          // system RAM (cpu) or global memory (gpu)
  int compute_units = 0;              // cores, compute units, SMs
  std::vector<std::string> features;  // ISA features, extensions, compute capability
  // Further facts in display order: caches, oneDNN ISA, OpenCL C version, max allocation ...
  std::vector<std::pair<std::string, std::string>> properties;
  std::vector<PrecisionSupport> precisions;
  DeviceCeilings ceilings;

  // "cpu", "opencl:0", "cuda:1": the device part of a target string.
  std::string Id() const { return Target{kind, index, Precision::kFp32}.DeviceId(); }
  Support SupportFor(Precision precision) const;
};

// A device that can run kernels. Kernels and timers arrive with the execution layer; discovery is
// what every backend implements now.
class IDevice {
 public:
  IDevice() = default;
  IDevice(const IDevice&) = delete;
  IDevice& operator=(const IDevice&) = delete;
  virtual ~IDevice() = default;

  virtual const DeviceInfo& info() const = 0;
};

// Measures one kernel's device time (steady_clock on CPU, cl_event profiling, cudaEvent).
class ITimer {
 public:
  virtual ~ITimer() = default;
  virtual void Begin() = 0;
  virtual void End() = 0;
  // Milliseconds between Begin and End; may wait for the device to finish.
  virtual double ElapsedMs() = 0;
};

// Result of looking for devices: those found, and a line for each kind that found none or failed.
struct DiscoveryReport {
  std::vector<std::unique_ptr<IDevice>> devices;
  std::vector<std::string> notes;
};

}  // namespace chipfit
