// CUDA discovery through the runtime API (cudart linked statically, so a machine without the
// toolkit still starts chipfit; without a driver it reports why).
#include "devices/cuda/cuda_device.h"

#include <cuda_runtime_api.h>

#include "fmt/format.h"

namespace chipfit {
namespace {

std::string VersionString(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

int Attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  return cudaDeviceGetAttribute(&value, attr, device) == cudaSuccess ? value : 0;
}

DeviceInfo Describe(int device, int driver_version, int runtime_version) {
  DeviceInfo info;
  info.kind = DeviceKind::kCuda;
  info.index = device;
  info.vendor = "NVIDIA";
  info.driver_version = VersionString(driver_version);
  info.runtime_version = "CUDA runtime " + VersionString(runtime_version);
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
    info.name = prop.name;
    info.memory_bytes = prop.totalGlobalMem;
    info.compute_units = prop.multiProcessorCount;
  }
  const int major = Attribute(cudaDevAttrComputeCapabilityMajor, device);
  const int minor = Attribute(cudaDevAttrComputeCapabilityMinor, device);
  const int cc = major * 10 + minor;
  info.features.push_back(fmt::format("sm_{}{}", major, minor));
  info.properties.emplace_back("compute capability", fmt::format("{}.{}", major, minor));
  info.properties.emplace_back("SM clock", fmt::format("{} MHz", Attribute(cudaDevAttrClockRate, device) / 1000));
  info.properties.emplace_back("memory bus", fmt::format("{} bit", Attribute(cudaDevAttrGlobalMemoryBusWidth, device)));
  info.properties.emplace_back("L2 cache", fmt::format("{} KiB", Attribute(cudaDevAttrL2CacheSize, device) >> 10));

  auto needs = [&](int min_cc, const char* what) {
    return cc >= min_cc ? Support::Yes()
                        : Support::No(fmt::format("{} needs compute capability {}.{}; this GPU is {}.{}", what,
                                                  min_cc / 10, min_cc % 10, major, minor));
  };
  info.precisions.push_back({Precision::kFp32, Support::Yes()});
  info.precisions.push_back({Precision::kTf32, needs(80, "tf32 tensor cores")});
  info.precisions.push_back({Precision::kFp16, needs(53, "fp16 arithmetic")});
  info.precisions.push_back({Precision::kBf16, needs(80, "bf16 tensor cores")});
  // The GPU may have int8 dot products, but chipfit's CUDA int8 kernels do not exist yet: the target is
  // listed as unsupported so that --all-targets does not pick it.
  info.precisions.push_back({Precision::kInt8, Support::No("chipfit's CUDA device has no int8 kernels yet (they need "
                                                           "quantised weights with per-channel scales); int8 runs on "
                                                           "cpu")});
  return info;
}

}  // namespace

void DiscoverCuda(DiscoveryReport& report) {
  int runtime_version = 0;
  cudaRuntimeGetVersion(&runtime_version);
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    report.notes.push_back(fmt::format("CUDA: no device usable ({}: {}); built with CUDA runtime {}",
                                       cudaGetErrorName(err), cudaGetErrorString(err), VersionString(runtime_version)));
    return;
  }
  if (count == 0) {
    report.notes.push_back("CUDA: driver present but it reports no GPU");
    return;
  }
  int driver_version = 0;
  cudaDriverGetVersion(&driver_version);
  for (int device = 0; device < count; ++device) {
    report.devices.push_back(std::make_unique<CudaDevice>(Describe(device, driver_version, runtime_version)));
  }
}

}  // namespace chipfit
