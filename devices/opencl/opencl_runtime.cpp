// OpenCL runtime: device opening, program build + binary cache, buffers, transfers, timers.
#include "devices/opencl/opencl_runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <unistd.h>

#include "devices/opencl/opencl_sources.h"
#include "fmt/format.h"

namespace chipfit::ocl {
namespace {

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

// FNV-1a 64: a stable hash across processes (std::hash is not), for cache file names and checks.
uint64_t Fnv1a(std::string_view data, uint64_t hash = 0xcbf29ce484222325ULL) {
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string DefaultCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/chipfit/opencl";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.cache/chipfit/opencl";
  }
  return {};
}

// Cache file: magic, payload size, FNV-1a of the payload, payload (the driver's program binary).
constexpr char kCacheMagic[8] = {'C', 'F', 'C', 'L', 'B', 'I', 'N', '1'};

std::optional<std::vector<unsigned char>> ReadCacheFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  char magic[8];
  uint64_t size = 0, checksum = 0;
  if (!in.read(magic, 8) || std::memcmp(magic, kCacheMagic, 8) != 0) return std::nullopt;
  if (!in.read(reinterpret_cast<char*>(&size), 8) || !in.read(reinterpret_cast<char*>(&checksum), 8)) {
    return std::nullopt;
  }
  if (size == 0 || size > (uint64_t{1} << 30)) return std::nullopt;
  std::vector<unsigned char> payload(size);
  if (!in.read(reinterpret_cast<char*>(payload.data()), static_cast<std::streamsize>(size))) return std::nullopt;
  const std::string_view view(reinterpret_cast<const char*>(payload.data()), payload.size());
  if (Fnv1a(view) != checksum) return std::nullopt;
  return payload;
}

// Written to a temporary name and renamed, so a reader never sees half a file.
void WriteCacheFile(const std::string& path, const std::vector<unsigned char>& payload) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    const uint64_t size = payload.size();
    const uint64_t checksum = Fnv1a(std::string_view(reinterpret_cast<const char*>(payload.data()), payload.size()));
    out.write(kCacheMagic, 8);
    out.write(reinterpret_cast<const char*>(&size), 8);
    out.write(reinterpret_cast<const char*>(&checksum), 8);
    out.write(reinterpret_cast<const char*>(payload.data()), static_cast<std::streamsize>(payload.size()));
    if (!out) {
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

class OpenClAllocation final : public DeviceAllocation {
 public:
  OpenClAllocation(cl::Buffer buffer, size_t bytes) : buffer_(std::move(buffer)), bytes_(bytes) {}
  size_t bytes() const override { return bytes_; }
  Result<DeviceBuffer> View(size_t offset, size_t bytes) override {
    if (bytes == 0) return DeviceBuffer{};
    if (offset + bytes > bytes_) {
      return Internal(
          fmt::format("device buffer view [{}, {}) outside the {}-byte allocation", offset, offset + bytes, bytes_));
    }
    if (offset == 0 && bytes == bytes_) return DeviceBuffer{buffer_(), bytes};
    cl_buffer_region region{offset, bytes};
    cl_int err = CL_SUCCESS;
    cl::Buffer view = buffer_.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if (err != CL_SUCCESS) return ClError(err, fmt::format("clCreateSubBuffer(offset {}, {} bytes)", offset, bytes));
    views_.push_back(view);
    return DeviceBuffer{view(), bytes};
  }

 private:
  cl::Buffer buffer_;
  size_t bytes_;
  std::vector<cl::Buffer> views_;  // owned here: a view's cl_mem lives as long as the allocation
};

std::string MiB(uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

}  // namespace

std::string ErrorName(cl_int err) {
  switch (err) {
#define CHIPFIT_CL_ERROR(name) \
  case name: return #name;
    CHIPFIT_CL_ERROR(CL_DEVICE_NOT_FOUND)
    CHIPFIT_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    CHIPFIT_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    CHIPFIT_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    CHIPFIT_CL_ERROR(CL_OUT_OF_RESOURCES)
    CHIPFIT_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    CHIPFIT_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    CHIPFIT_CL_ERROR(CL_MEM_COPY_OVERLAP)
    CHIPFIT_CL_ERROR(CL_IMAGE_FORMAT_MISMATCH)
    CHIPFIT_CL_ERROR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    CHIPFIT_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    CHIPFIT_CL_ERROR(CL_MAP_FAILURE)
    CHIPFIT_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    CHIPFIT_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    CHIPFIT_CL_ERROR(CL_COMPILE_PROGRAM_FAILURE)
    CHIPFIT_CL_ERROR(CL_LINKER_NOT_AVAILABLE)
    CHIPFIT_CL_ERROR(CL_LINK_PROGRAM_FAILURE)
    CHIPFIT_CL_ERROR(CL_INVALID_VALUE)
    CHIPFIT_CL_ERROR(CL_INVALID_DEVICE_TYPE)
    CHIPFIT_CL_ERROR(CL_INVALID_PLATFORM)
    CHIPFIT_CL_ERROR(CL_INVALID_DEVICE)
    CHIPFIT_CL_ERROR(CL_INVALID_CONTEXT)
    CHIPFIT_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
    CHIPFIT_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    CHIPFIT_CL_ERROR(CL_INVALID_HOST_PTR)
    CHIPFIT_CL_ERROR(CL_INVALID_MEM_OBJECT)
    CHIPFIT_CL_ERROR(CL_INVALID_BINARY)
    CHIPFIT_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    CHIPFIT_CL_ERROR(CL_INVALID_PROGRAM)
    CHIPFIT_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    CHIPFIT_CL_ERROR(CL_INVALID_KERNEL_NAME)
    CHIPFIT_CL_ERROR(CL_INVALID_KERNEL_DEFINITION)
    CHIPFIT_CL_ERROR(CL_INVALID_KERNEL)
    CHIPFIT_CL_ERROR(CL_INVALID_ARG_INDEX)
    CHIPFIT_CL_ERROR(CL_INVALID_ARG_VALUE)
    CHIPFIT_CL_ERROR(CL_INVALID_ARG_SIZE)
    CHIPFIT_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    CHIPFIT_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    CHIPFIT_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    CHIPFIT_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    CHIPFIT_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    CHIPFIT_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
    CHIPFIT_CL_ERROR(CL_INVALID_EVENT)
    CHIPFIT_CL_ERROR(CL_INVALID_OPERATION)
    CHIPFIT_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    CHIPFIT_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    CHIPFIT_CL_ERROR(CL_INVALID_PROPERTY)
    CHIPFIT_CL_ERROR(CL_INVALID_COMPILER_OPTIONS)
    CHIPFIT_CL_ERROR(CL_INVALID_LINKER_OPTIONS)
    CHIPFIT_CL_ERROR(CL_PLATFORM_NOT_FOUND_KHR)
#undef CHIPFIT_CL_ERROR
    default: return fmt::format("CL error {}", err);
  }
}

Status ClError(cl_int err, std::string_view what) {
  return Internal(fmt::format("{}: {} ({})", what, ErrorName(err), err));
}

Result<std::shared_ptr<OpenClRuntime>> OpenClRuntime::Get(int index) {
  static std::mutex mutex;
  static std::map<int, std::shared_ptr<OpenClRuntime>> opened;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = opened.find(index); it != opened.end()) return it->second;

  std::vector<cl::Platform> platforms;
  cl_int err = cl::Platform::get(&platforms);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && platforms.empty())) {
    return Unsupported("OpenCL: no platform found (no OpenCL driver installed; install pocl-opencl-icd)");
  }
  if (err != CL_SUCCESS) return ClError(err, "clGetPlatformIDs");
  // The same numbering as discovery (DiscoverOpenCL): devices of all platforms in order.
  int seen = 0;
  for (const cl::Platform& platform : platforms) {
    std::vector<cl::Device> devices;
    if (platform.getDevices(CL_DEVICE_TYPE_ALL, &devices) != CL_SUCCESS) continue;
    for (const cl::Device& device : devices) {
      if (seen++ != index) continue;
      std::shared_ptr<OpenClRuntime> rt(new OpenClRuntime());
      rt->index_ = index;
      rt->device_ = device;
      rt->context_ = cl::Context(device, nullptr, nullptr, nullptr, &err);
      if (err != CL_SUCCESS) return ClError(err, fmt::format("clCreateContext(opencl:{})", index));
      rt->queue_ = cl::CommandQueue(rt->context_, device, CL_QUEUE_PROFILING_ENABLE, &err);
      if (err != CL_SUCCESS) return ClError(err, fmt::format("clCreateCommandQueue(opencl:{})", index));
      DeviceLimits& l = rt->limits_;
      std::string s;
      device.getInfo(CL_DEVICE_NAME, &s);
      l.name = Trim(s);
      device.getInfo(CL_DRIVER_VERSION, &s);
      l.driver_version = Trim(s);
      platform.getInfo(CL_PLATFORM_VERSION, &s);
      l.platform_version = Trim(s);
      cl_ulong ul = 0;
      device.getInfo(CL_DEVICE_GLOBAL_MEM_SIZE, &ul);
      l.global_mem_bytes = ul;
      device.getInfo(CL_DEVICE_MAX_MEM_ALLOC_SIZE, &ul);
      l.max_alloc_bytes = ul;
      device.getInfo(CL_DEVICE_LOCAL_MEM_SIZE, &ul);
      l.local_mem_bytes = ul;
      size_t sz = 0;
      device.getInfo(CL_DEVICE_MAX_WORK_GROUP_SIZE, &sz);
      l.max_work_group_size = sz;
      device.getInfo(CL_DEVICE_MAX_WORK_ITEM_SIZES, &l.max_work_item_sizes);
      cl_uint bits = 0;
      device.getInfo(CL_DEVICE_MEM_BASE_ADDR_ALIGN, &bits);
      l.base_align_bytes = std::max<size_t>(bits / 8, 64);
      device.getInfo(CL_DEVICE_EXTENSIONS, &s);
      l.native_fp16 = s.find("cl_khr_fp16") != std::string::npos;
      rt->cache_dir_ = DefaultCacheDir();
      opened[index] = rt;
      return rt;
    }
  }
  return NotFound(fmt::format("no OpenCL device opencl:{} ({} found; see `chipfit devices`)", index, seen));
}

void OpenClRuntime::SetCacheDir(std::string dir) {
  std::lock_guard<std::mutex> lock(mutex_);
  cache_dir_ = std::move(dir);
}

ProgramCacheStats OpenClRuntime::cache_stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void OpenClRuntime::ClearMemoryCache() {
  std::lock_guard<std::mutex> lock(mutex_);
  programs_.clear();
}

Result<cl::Program> OpenClRuntime::BuildFromSource(const std::string& source, const std::string& options,
                                                   std::string_view what) {
  cl_int err = CL_SUCCESS;
  cl::Program program(context_, source, false, &err);
  if (err != CL_SUCCESS) return ClError(err, fmt::format("clCreateProgramWithSource({})", what));
  err = program.build(std::vector<cl::Device>{device_}, options.c_str());
  if (err != CL_SUCCESS) {
    std::string log;
    program.getBuildInfo(device_, CL_PROGRAM_BUILD_LOG, &log);
    if (log.size() > 4000) log = log.substr(0, 4000) + "\n…";
    return Internal(fmt::format("building OpenCL program {} ({}) failed: {} ({})\n{}", what, options, ErrorName(err),
                                err, Trim(log)));
  }
  return program;
}

Result<cl::Program> OpenClRuntime::Program(std::string_view name, const std::string& options) {
  const std::string key = std::string(name) + "\n" + options;
  if (auto it = programs_.find(key); it != programs_.end()) {
    ++stats_.memory_hits;
    return it->second;
  }
  const std::string_view common = ClProgramSource("common");
  const std::string_view body = ClProgramSource(name);
  if (body.empty()) return Internal(fmt::format("no OpenCL program '{}' in this build", name));
  const std::string source = std::string(common) + "\n" + std::string(body);
  const auto t0 = std::chrono::steady_clock::now();
  // The cache key covers everything that changes the binary: device, driver, options, source.
  const uint64_t hash = Fnv1a(
      source, Fnv1a(options, Fnv1a(limits_.name + "\n" + limits_.driver_version + "\n" + limits_.platform_version)));
  const std::string path = cache_dir_.empty() ? "" : fmt::format("{}/{}-{:016x}.bin", cache_dir_, name, hash);
  std::optional<cl::Program> built;
  if (!path.empty()) {
    if (auto binary = ReadCacheFile(path)) {
      cl_int err = CL_SUCCESS;
      std::vector<cl_int> binary_status;
      cl::Program program(context_, std::vector<cl::Device>{device_}, cl::Program::Binaries{*binary}, &binary_status,
                          &err);
      if (err == CL_SUCCESS && program.build(std::vector<cl::Device>{device_}, options.c_str()) == CL_SUCCESS) {
        built = program;
        ++stats_.loaded_from_disk;
      } else {
        ++stats_.rebuilt_bad_cache;  // a driver that refuses the binary: rebuild and overwrite
      }
    } else if (std::filesystem::exists(path)) {
      ++stats_.rebuilt_bad_cache;  // truncated or corrupt: the checksum did not match
    }
  }
  if (!built) {
    ASSIGN_OR_RETURN(cl::Program program, BuildFromSource(source, options, name));
    ++stats_.built_from_source;
    if (!path.empty()) {
      std::vector<std::vector<unsigned char>> binaries;
      if (program.getInfo(CL_PROGRAM_BINARIES, &binaries) == CL_SUCCESS && binaries.size() == 1 &&
          !binaries[0].empty()) {
        WriteCacheFile(path, binaries[0]);
      }
    }
    built = program;
  }
  stats_.last_build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  programs_[key] = *built;
  return *built;
}

Result<cl::Kernel> OpenClRuntime::CreateKernel(std::string_view program, std::string_view kernel_name,
                                               const std::string& options) {
  std::lock_guard<std::mutex> lock(mutex_);
  ASSIGN_OR_RETURN(cl::Program built, Program(program, options));
  cl_int err = CL_SUCCESS;
  cl::Kernel kernel(built, std::string(kernel_name).c_str(), &err);
  if (err != CL_SUCCESS) return ClError(err, fmt::format("clCreateKernel({}::{})", program, kernel_name));
  return kernel;
}

OpenClContext::OpenClContext(std::shared_ptr<OpenClRuntime> runtime, Precision precision)
    : runtime_(std::move(runtime)), half_storage_(precision == Precision::kFp16) {
  base_options_ = "-cl-std=CL1.2";
  if (half_storage_) base_options_ += " -DCF_HALF_STORAGE";
  if (half_storage_ && runtime_->limits().native_fp16) base_options_ += " -DCF_NATIVE_HALF";
}

Result<cl::Kernel> OpenClContext::CreateKernel(std::string_view program, std::string_view kernel_name,
                                               const std::string& defines) {
  return runtime_->CreateKernel(program, kernel_name, defines.empty() ? base_options_ : base_options_ + " " + defines);
}

Status OpenClContext::Record(const cl::Event& event) {
  if (timing_) timed_events_.push_back(event);
  return Status();
}

Status OpenClContext::Launch(const cl::Kernel& kernel, const cl::NDRange& global, const cl::NDRange& local,
                             std::string_view what) {
  cl::Event event;
  const cl_int err =
      runtime_->queue().enqueueNDRangeKernel(kernel, cl::NullRange, global, local, nullptr, timing_ ? &event : nullptr);
  if (err != CL_SUCCESS) {
    std::string name;
    kernel.getInfo(CL_KERNEL_FUNCTION_NAME, &name);
    return ClError(err, fmt::format("{}: clEnqueueNDRangeKernel({})", what, Trim(name)));
  }
  return Record(event);
}

Status OpenClContext::Copy(const DeviceBuffer& src, const DeviceBuffer& dst, size_t bytes, std::string_view what) {
  if (bytes == 0) return Status();
  cl::Event event;
  const cl_int err = clEnqueueCopyBuffer(runtime_->queue()(), Mem(src), Mem(dst), 0, 0, bytes, 0, nullptr,
                                         timing_ ? &event() : nullptr);
  if (err != CL_SUCCESS) return ClError(err, fmt::format("{}: clEnqueueCopyBuffer({} bytes)", what, bytes));
  return Record(event);
}

size_t OpenClContext::WorkGroup1D(const cl::Kernel& kernel, size_t want) const {
  size_t max = 0, multiple = 0;
  kernel.getWorkGroupInfo(runtime_->device(), CL_KERNEL_WORK_GROUP_SIZE, &max);
  kernel.getWorkGroupInfo(runtime_->device(), CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, &multiple);
  if (max == 0) max = runtime_->limits().max_work_group_size;
  if (multiple == 0) multiple = 1;
  size_t size = std::min(want, max);
  if (size >= multiple) size = size / multiple * multiple;
  return std::max<size_t>(size, 1);
}

std::string OpenClContext::DeviceId() const { return fmt::format("opencl:{}", runtime_->index()); }

DType OpenClContext::StorageType(DType dtype) const {
  return half_storage_ && dtype == DType::kF32 ? DType::kF16 : dtype;
}

size_t OpenClContext::Alignment() const { return runtime_->limits().base_align_bytes; }

Status OpenClContext::CheckFits(const DeviceMemoryNeeds& needs) const {
  const DeviceLimits& l = runtime_->limits();
  const std::string device = fmt::format("{} ({})", DeviceId(), l.name);
  if (needs.arena_bytes > l.max_alloc_bytes) {
    return Unsupported(
        fmt::format("the model's intermediate tensors need a {} device arena; {} allows at most {} "
                    "per allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
                    MiB(needs.arena_bytes), device, MiB(l.max_alloc_bytes)));
  }
  if (needs.largest_constant > l.max_alloc_bytes) {
    return Unsupported(fmt::format("a {} constant exceeds {}'s {} per allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
                                   MiB(needs.largest_constant), device, MiB(l.max_alloc_bytes)));
  }
  if (needs.arena_bytes + needs.constant_bytes > l.global_mem_bytes) {
    return Unsupported(
        fmt::format("the model needs {} of device memory ({} arena + {} constants); {} has {} "
                    "(CL_DEVICE_GLOBAL_MEM_SIZE)",
                    MiB(needs.arena_bytes + needs.constant_bytes), MiB(needs.arena_bytes), MiB(needs.constant_bytes),
                    device, MiB(l.global_mem_bytes)));
  }
  return Status();
}

Result<std::shared_ptr<DeviceAllocation>> OpenClContext::Allocate(size_t bytes) {
  if (bytes == 0) bytes = 1;
  cl_int err = CL_SUCCESS;
  cl::Buffer buffer(runtime_->context(), CL_MEM_READ_WRITE, bytes, nullptr, &err);
  if (err != CL_SUCCESS) return ClError(err, fmt::format("clCreateBuffer({} on {})", MiB(bytes), DeviceId()));
  return std::shared_ptr<DeviceAllocation>(std::make_shared<OpenClAllocation>(std::move(buffer), bytes));
}

Status OpenClContext::Upload(const Tensor& host, const DeviceBuffer& dst) {
  const DType storage = StorageType(host.dtype());
  const size_t bytes = static_cast<size_t>(host.numel()) * DTypeSize(storage);
  if (bytes != dst.bytes) {
    return Internal(fmt::format("upload of {} into a {}-byte device buffer", DescribeTensor(host), dst.bytes));
  }
  if (bytes == 0) return Status();
  const void* src = host.raw_data();
  std::vector<uint16_t> half;
  if (storage != host.dtype()) {  // f32 → half storage
    half.resize(static_cast<size_t>(host.numel()));
    const float* f = host.data<float>();
    for (size_t i = 0; i < half.size(); ++i) half[i] = FloatToHalfBits(f[i]);
    src = half.data();
  }
  cl::Event event;
  const cl_int err = clEnqueueWriteBuffer(runtime_->queue()(), Mem(dst), CL_TRUE, 0, bytes, src, 0, nullptr,
                                          timing_ ? &event() : nullptr);
  if (err != CL_SUCCESS) return ClError(err, fmt::format("copy to {} ({} bytes)", DeviceId(), bytes));
  return Record(event);
}

Status OpenClContext::Download(const DeviceBuffer& src, Tensor& host) {
  const DType storage = StorageType(host.dtype());
  const size_t bytes = static_cast<size_t>(host.numel()) * DTypeSize(storage);
  if (bytes != src.bytes) {
    return Internal(fmt::format("download of a {}-byte device buffer into {}", src.bytes, DescribeTensor(host)));
  }
  if (bytes == 0) return Status();
  std::vector<uint16_t> half(storage != host.dtype() ? static_cast<size_t>(host.numel()) : 0);
  void* dst = half.empty() ? host.raw_data() : half.data();
  cl::Event event;
  const cl_int err = clEnqueueReadBuffer(runtime_->queue()(), Mem(src), CL_TRUE, 0, bytes, dst, 0, nullptr,
                                         timing_ ? &event() : nullptr);
  if (err != CL_SUCCESS) return ClError(err, fmt::format("copy from {} ({} bytes)", DeviceId(), bytes));
  if (!half.empty()) {
    float* f = host.data<float>();
    for (size_t i = 0; i < half.size(); ++i) f[i] = HalfBitsToFloat(half[i]);
  }
  return Record(event);
}

Status OpenClContext::Finish() {
  const cl_int err = runtime_->queue().finish();
  return err == CL_SUCCESS ? Status() : ClError(err, fmt::format("clFinish({})", DeviceId()));
}

void OpenClContext::TimerBegin() {
  timing_ = true;
  timed_events_.clear();
}

Result<double> OpenClContext::TimerEndMs() {
  timing_ = false;
  if (timed_events_.empty()) return 0.0;
  const cl_int err = cl::WaitForEvents(timed_events_);
  if (err != CL_SUCCESS) return ClError(err, fmt::format("waiting for {}", DeviceId()));
  // Device busy time: the sum of the commands' own start → end, from the queue's profiling.
  double ns = 0;
  for (const cl::Event& e : timed_events_) {
    cl_ulong start = 0, end = 0;
    if (e.getProfilingInfo(CL_PROFILING_COMMAND_START, &start) != CL_SUCCESS ||
        e.getProfilingInfo(CL_PROFILING_COMMAND_END, &end) != CL_SUCCESS) {
      return Internal(fmt::format("{}: profiling information unavailable", DeviceId()));
    }
    ns += static_cast<double>(end - start);
  }
  timed_events_.clear();
  return ns / 1e6;
}

}  // namespace chipfit::ocl
