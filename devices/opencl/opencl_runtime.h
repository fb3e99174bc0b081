// The OpenCL execution runtime: one context + in-order profiling queue per device (process-wide),
// programs built once per device and source hash with an on-disk binary cache, and OpenClContext,
// the DeviceContext a compiled model runs on (buffers, transfers, timers, kernel launches).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/runtime/device_context.h"
#include "core/runtime/target.h"
#include "devices/opencl/opencl_headers.h"

namespace chipfit::ocl {

// "CL_OUT_OF_RESOURCES" for -5; "CL error -1234" for codes the spec does not name.
std::string ErrorName(cl_int err);
// Unavailable-free error naming what failed: "<what>: CL_INVALID_WORK_GROUP_SIZE (-54)".
Status ClError(cl_int err, std::string_view what);

struct DeviceLimits {
  std::string name;
  std::string driver_version;
  std::string platform_version;
  uint64_t global_mem_bytes = 0;
  uint64_t max_alloc_bytes = 0;
  size_t local_mem_bytes = 0;
  size_t max_work_group_size = 0;
  std::vector<size_t> max_work_item_sizes;
  size_t base_align_bytes = 0;  // CL_DEVICE_MEM_BASE_ADDR_ALIGN / 8: sub-buffer offsets
  bool native_fp16 = false;     // cl_khr_fp16
};

struct ProgramCacheStats {
  int built_from_source = 0;
  int loaded_from_disk = 0;   // binaries from $XDG_CACHE_HOME/chipfit/opencl
  int rebuilt_bad_cache = 0;  // entries that were corrupt or refused by the driver, rebuilt
  int memory_hits = 0;        // programs already built in this process
  double last_build_ms = 0;
};

// One OpenCL device opened for execution. Thread-safe: programs and kernels are created under a
// mutex; the queue is in order, so work from one thread runs in the order it was enqueued.
class OpenClRuntime {
 public:
  OpenClRuntime(const OpenClRuntime&) = delete;
  OpenClRuntime& operator=(const OpenClRuntime&) = delete;

  // Device `index` in discovery order (opencl:0 …), opened once per process.
  static Result<std::shared_ptr<OpenClRuntime>> Get(int index);

  int index() const { return index_; }
  const cl::Context& context() const { return context_; }
  const cl::Device& device() const { return device_; }
  cl::CommandQueue& queue() { return queue_; }
  const DeviceLimits& limits() const { return limits_; }

  // The kernel `kernel_name` of the program made of common.cl + `program` (a .cl file of
  // devices/opencl/ops, by file stem: "eltwise"), built with `options` ("-DOP=1 -DCF_HALF_STORAGE").
  // Each call returns a new cl::Kernel (kernels hold their arguments, so every user owns one).
  Result<cl::Kernel> CreateKernel(std::string_view program, std::string_view kernel_name, const std::string& options);

  // Where compiled binaries are kept: $XDG_CACHE_HOME/chipfit/opencl (or ~/.cache/...); empty
  // disables the disk cache. Tests point it at a temp dir.
  void SetCacheDir(std::string dir);
  const std::string& cache_dir() const { return cache_dir_; }
  ProgramCacheStats cache_stats() const;
  // Forgets the programs built in this process (the disk cache stays): for cache tests.
  void ClearMemoryCache();

 private:
  OpenClRuntime() = default;
  Result<cl::Program> Program(std::string_view program, const std::string& options);
  Result<cl::Program> BuildFromSource(const std::string& source, const std::string& options, std::string_view what);

  int index_ = 0;
  cl::Context context_;
  cl::Device device_;
  cl::CommandQueue queue_;
  DeviceLimits limits_;
  std::string cache_dir_;
  mutable std::mutex mutex_;
  std::map<std::string, cl::Program> programs_;  // key: program + options
  ProgramCacheStats stats_;
};

// The DeviceContext of one compiled model on an OpenCL device. Under fp16 every float tensor on
// the device is stored as half (vload_half/vstore_half; core OpenCL C 1.2) and computed in float;
// with cl_khr_fp16 the kernels may use half arithmetic (CF_NATIVE_HALF).
class OpenClContext final : public DeviceContext {
 public:
  OpenClContext(std::shared_ptr<OpenClRuntime> runtime, Precision precision);

  OpenClRuntime& runtime() { return *runtime_; }
  bool half_storage() const { return half_storage_; }
  // Build options every program of this context gets ("-DCF_HALF_STORAGE" under fp16 …).
  const std::string& base_options() const { return base_options_; }
  // CreateKernel with base_options() + " " + defines.
  Result<cl::Kernel> CreateKernel(std::string_view program, std::string_view kernel_name,
                                  const std::string& defines = "");
  // Enqueues an NDRange; `local` NullRange lets the driver choose; `global` is rounded up to a
  // multiple of `local` by the caller (kernels check their bounds). `what` names the kernel and
  // node for errors. Records the event while a timer runs.
  Status Launch(const cl::Kernel& kernel, const cl::NDRange& global, const cl::NDRange& local, std::string_view what);
  // Enqueues a device-to-device copy (Identity-like kernels).
  Status Copy(const DeviceBuffer& src, const DeviceBuffer& dst, size_t bytes, std::string_view what);
  // A work-group size for a 1-D kernel: the device's preferred multiple up to its maximum.
  size_t WorkGroup1D(const cl::Kernel& kernel, size_t want = 256) const;

  std::string DeviceId() const override;
  DType StorageType(DType dtype) const override;
  size_t Alignment() const override;
  Status CheckFits(const DeviceMemoryNeeds& needs) const override;
  Result<std::shared_ptr<DeviceAllocation>> Allocate(size_t bytes) override;
  Status Upload(const Tensor& host, const DeviceBuffer& dst) override;
  Status Download(const DeviceBuffer& src, Tensor& host) override;
  Status Finish() override;
  void TimerBegin() override;
  Result<double> TimerEndMs() override;

 private:
  Status Record(const cl::Event& event);

  std::shared_ptr<OpenClRuntime> runtime_;
  bool half_storage_ = false;
  std::string base_options_;
  bool timing_ = false;
  std::vector<cl::Event> timed_events_;
};

// Sets kernel arguments in order, stopping at the first error (named with `what` and the index).
// cl_mem arguments come from DeviceBuffer::handle: pass Mem(buffer).
inline cl_mem Mem(const DeviceBuffer& buffer) { return static_cast<cl_mem>(buffer.handle); }

template <typename... Args>
Status SetArgs(cl::Kernel& kernel, std::string_view what, const Args&... args) {
  cl_uint index = 0;
  cl_int err = CL_SUCCESS;
  auto set = [&](const auto& value) {
    if (err != CL_SUCCESS) return;
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_pointer_v<T>) {
      // cl_mem (and any other handle): the C++ bindings' setArg would take a pointer for an SVM
      // pointer (OpenCL 2.0+), so buffers go through clSetKernelArg as the handle they are.
      static_assert(std::is_same_v<T, cl_mem>, "pass buffers as cl_mem (ocl::Mem), not raw pointers");
      err = clSetKernelArg(kernel(), index, sizeof(cl_mem), &value);
    } else {
      err = kernel.setArg(index, value);
    }
    if (err == CL_SUCCESS) ++index;
  };
  (set(args), ...);
  if (err != CL_SUCCESS) return ClError(err, std::string(what) + ": argument " + std::to_string(index));
  return Status();
}

}  // namespace chipfit::ocl
