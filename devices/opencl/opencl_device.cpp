// OpenCL discovery through the Khronos C++ bindings, error codes instead of exceptions.
#include "devices/opencl/opencl_device.h"

#include <sstream>

#include "devices/opencl/opencl_headers.h"
#include "fmt/format.h"

namespace chipfit {
namespace {

std::string Trim(std::string s) {
  // Drivers return NUL-terminated strings, sometimes with trailing spaces.
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

template <cl_int Name, typename Object>
std::string InfoString(const Object& object) {
  std::string value;
  if (object.getInfo(Name, &value) != CL_SUCCESS) return {};
  return Trim(value);
}

std::string DeviceTypeName(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return "GPU";
  if (type & CL_DEVICE_TYPE_CPU) return "CPU";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

DeviceInfo Describe(const cl::Platform& platform, const cl::Device& device, int index) {
  DeviceInfo info;
  info.kind = DeviceKind::kOpenCL;
  info.index = index;
  info.name = InfoString<CL_DEVICE_NAME>(device);
  info.vendor = InfoString<CL_DEVICE_VENDOR>(device);
  info.driver_version = InfoString<CL_DRIVER_VERSION>(device);
  info.runtime_version = InfoString<CL_DEVICE_VERSION>(device);
  cl_ulong global_mem = 0, max_alloc = 0, local_mem = 0;
  cl_uint compute_units = 0, clock_mhz = 0;
  cl_device_type type = 0;
  device.getInfo(CL_DEVICE_GLOBAL_MEM_SIZE, &global_mem);
  device.getInfo(CL_DEVICE_MAX_MEM_ALLOC_SIZE, &max_alloc);
  device.getInfo(CL_DEVICE_LOCAL_MEM_SIZE, &local_mem);
  device.getInfo(CL_DEVICE_MAX_COMPUTE_UNITS, &compute_units);
  device.getInfo(CL_DEVICE_MAX_CLOCK_FREQUENCY, &clock_mhz);
  device.getInfo(CL_DEVICE_TYPE, &type);
  info.memory_bytes = global_mem;
  info.compute_units = static_cast<int>(compute_units);

  const std::string extensions = InfoString<CL_DEVICE_EXTENSIONS>(device);
  std::istringstream words(extensions);
  std::vector<std::string> all_extensions;
  for (std::string word; words >> word;) all_extensions.push_back(word);
  auto has = [&](std::string_view ext) {
    return std::find(all_extensions.begin(), all_extensions.end(), ext) != all_extensions.end();
  };
  // The extensions that change what chipfit's kernels can do; the full list is a property.
  for (const char* ext : {"cl_khr_fp16", "cl_khr_fp64", "cl_khr_subgroups", "cl_intel_subgroups",
                          "cl_khr_integer_dot_product", "cl_khr_int64_base_atomics"}) {
    if (has(ext)) info.features.emplace_back(ext);
  }

  info.properties.emplace_back("platform", InfoString<CL_PLATFORM_NAME>(platform));
  info.properties.emplace_back("platform version", InfoString<CL_PLATFORM_VERSION>(platform));
  info.properties.emplace_back("device type", DeviceTypeName(type));
  info.properties.emplace_back("OpenCL C", InfoString<CL_DEVICE_OPENCL_C_VERSION>(device));
  info.properties.emplace_back("max allocation", fmt::format("{} MiB", max_alloc >> 20));
  info.properties.emplace_back("local memory", fmt::format("{} KiB", local_mem >> 10));
  info.properties.emplace_back("max clock", fmt::format("{} MHz", clock_mhz));
  info.properties.emplace_back("fp16", has("cl_khr_fp16") ? "storage yes, native half arithmetic yes (cl_khr_fp16)"
                                                          : "storage yes (vload_half/vstore_half), native half "
                                                            "arithmetic no (no cl_khr_fp16): computed in float");
  info.properties.emplace_back("extensions", extensions);

  info.precisions.push_back({Precision::kFp32, Support::Yes()});
  info.precisions.push_back(
      {Precision::kFp16,
       has("cl_khr_fp16") ? Support::Yes("native half arithmetic (cl_khr_fp16)")
                          : Support::Yes("half storage (vload_half/vstore_half), float arithmetic: no cl_khr_fp16")});
  info.precisions.push_back(
      {Precision::kBf16, Support::No("OpenCL C has no bf16 type; chipfit's OpenCL device runs fp32 and fp16")});
  info.precisions.push_back(
      {Precision::kInt8, Support::No("chipfit's OpenCL device runs fp32 and fp16 only; int8 runs on cpu")});
  info.precisions.push_back({Precision::kTf32, Support::No("tf32 is an NVIDIA tensor-core mode")});
  return info;
}

}  // namespace

void DiscoverOpenCL(DiscoveryReport& report) {
  std::vector<cl::Platform> platforms;
  const cl_int err = cl::Platform::get(&platforms);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && platforms.empty())) {
    report.notes.push_back(
        "OpenCL: no platform found (no OpenCL driver installed; for a CPU device install "
        "pocl-opencl-icd)");
    return;
  }
  if (err != CL_SUCCESS) {
    report.notes.push_back(fmt::format("OpenCL: clGetPlatformIDs failed with error {}", err));
    return;
  }
  int index = 0;
  for (const cl::Platform& platform : platforms) {
    std::vector<cl::Device> devices;
    const cl_int derr = platform.getDevices(CL_DEVICE_TYPE_ALL, &devices);
    if (derr != CL_SUCCESS && derr != CL_DEVICE_NOT_FOUND) {
      report.notes.push_back(fmt::format("OpenCL: platform '{}' failed to list devices (error {})",
                                         InfoString<CL_PLATFORM_NAME>(platform), derr));
      continue;
    }
    for (const cl::Device& device : devices) {
      report.devices.push_back(std::make_unique<OpenCLDevice>(Describe(platform, device, index++)));
    }
  }
  if (index == 0) report.notes.push_back("OpenCL: platforms found, but none has a device");
}

}  // namespace chipfit
