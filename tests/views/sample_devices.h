// Hand-made devices for the views tests: one CPU and one OpenCL device with known numbers and reasons.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/target.h"
#include "devices/device.h"

namespace chipfit::samples {

// Above 4 GiB on purpose: a raw value squeezed through int or uint32 would show up as wrong.
inline constexpr uint64_t kCpuMemoryBytes = 68719476736ull + 12345;  // 64 GiB + a little
inline constexpr uint64_t kOpenCLMemoryBytes = 2147483648ull;        // 2 GiB
inline constexpr char kCpuFp16Reason[] = "oneDNN 2.6 has no fp16 kernels for avx512_core on this CPU";
inline constexpr char kOpenCLFp16Note[] = "half storage, float arithmetic: no cl_khr_fp16";
inline constexpr char kOpenCLInt8Reason[] = "int8 kernels are not implemented for OpenCL yet";

inline DeviceInfo SampleCpu() {
  DeviceInfo cpu;
  cpu.kind = DeviceKind::kCpu;
  cpu.name = "Sample Zen 4 CPU";
  cpu.vendor = "AMD";
  cpu.runtime_version = "oneDNN 2.6";
  cpu.memory_bytes = kCpuMemoryBytes;
  cpu.compute_units = 16;
  cpu.features = {"avx2", "avx512f", "avx512_bf16", "avx512_vnni"};
  cpu.properties = {{"L2 cache", "1 MiB"}};
  cpu.precisions = {{Precision::kFp32, Support::Yes()},
                    {Precision::kBf16, Support::Yes()},
                    {Precision::kInt8, Support::Yes()},
                    {Precision::kFp16, Support::No(kCpuFp16Reason)}};
  return cpu;
}

inline DeviceInfo SampleOpenCL() {
  DeviceInfo gpu;
  gpu.kind = DeviceKind::kOpenCL;
  gpu.index = 0;
  gpu.name = "pthread-skylake-avx512";
  gpu.vendor = "POCL";
  gpu.driver_version = "3.1";
  gpu.runtime_version = "OpenCL 3.0 PoCL";
  gpu.memory_bytes = kOpenCLMemoryBytes;
  gpu.compute_units = 2;
  gpu.precisions = {{Precision::kFp32, Support::Yes()},
                    {Precision::kFp16, Support::Yes(kOpenCLFp16Note)},
                    {Precision::kInt8, Support::No(kOpenCLInt8Reason)}};
  return gpu;
}

inline std::shared_ptr<const std::vector<DeviceInfo>> SampleSnapshot() {
  return std::make_shared<const std::vector<DeviceInfo>>(std::vector<DeviceInfo>{SampleCpu(), SampleOpenCL()});
}

// "cpu:int8" as a Target (the tests' texts are all valid), and targets back as texts for comparisons.
inline Target T(const char* text) { return *ParseTarget(text); }
inline std::vector<std::string> Strings(const std::vector<Target>& targets) {
  std::vector<std::string> out;
  for (const Target& target : targets) out.push_back(target.ToString());
  return out;
}

}  // namespace chipfit::samples
