// CUDA runtime, error mapping and CudaContext (see cuda_runtime.h).
#include "devices/cuda/cuda_runtime.h"

#include <cstring>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "core/tensor/half.h"

namespace chipfit::cuda {
namespace {

std::string MiB(uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

// Workspaces, the CUDA context's own allocations and fragmentation: kept free when checking a model.
constexpr uint64_t kReserveBytes = uint64_t{256} << 20;

class CudaAllocation final : public DeviceAllocation {
 public:
  CudaAllocation(std::shared_ptr<CudaRuntime> runtime, void* ptr, size_t bytes)
      : runtime_(std::move(runtime)), ptr_(ptr), bytes_(bytes) {}
  ~CudaAllocation() override {
    if (ptr_ != nullptr && runtime_->Activate().ok()) cudaFree(ptr_);
  }
  size_t bytes() const override { return bytes_; }
  Result<DeviceBuffer> View(size_t offset, size_t bytes) override {
    if (offset + bytes > bytes_) {
      return Internal(fmt::format("view [{}, {}) outside a {}-byte device allocation", offset, offset + bytes, bytes_));
    }
    return DeviceBuffer{bytes == 0 ? nullptr : static_cast<char*>(ptr_) + offset, bytes};
  }

 private:
  std::shared_ptr<CudaRuntime> runtime_;
  void* ptr_;
  size_t bytes_;
};

}  // namespace

std::string ErrorText(cudaError_t err) {
  return fmt::format("{} ({}): {}", cudaGetErrorName(err), static_cast<int>(err), cudaGetErrorString(err));
}

bool IsStickyError(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable: return true;
    default: return false;
  }
}

Status CudaError(cudaError_t err, std::string_view what) {
  const std::string text = fmt::format("{}: {}", what, ErrorText(err));
  switch (err) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorDevicesUnavailable:
    case cudaErrorInvalidDevice: return Unsupported(text);
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorInvalidKernelImage:
      return Unsupported(text +
                         "; this chipfit's kernels are built for sm_75, sm_80, sm_86, sm_89 and sm_90 with PTX for "
                         "newer GPUs, which needs a driver at least as new as the CUDA toolkit it was built with");
    case cudaErrorMemoryAllocation: return Unsupported(text + "; the GPU is out of memory");
    default:
      if (IsStickyError(err)) {
        return Internal(text +
                        "; the CUDA context is unusable after this error, so every later CUDA call in this "
                        "process fails too");
      }
      return Internal(text);
  }
}

Status CheckFitsIn(const DeviceMemoryNeeds& needs, uint64_t free_bytes, uint64_t total_bytes, uint64_t reserve,
                   std::string_view device) {
  const uint64_t need = needs.arena_bytes + needs.constant_bytes;
  if (need > total_bytes) {
    return Unsupported(fmt::format("the model needs {} of device memory ({} arena + {} constants); {} has {} in all",
                                   MiB(need), MiB(needs.arena_bytes), MiB(needs.constant_bytes), device,
                                   MiB(total_bytes)));
  }
  const uint64_t usable = free_bytes > reserve ? free_bytes - reserve : 0;
  if (need > usable) {
    return Unsupported(fmt::format(
        "the model needs {} of device memory ({} arena + {} constants); {} has {} free, of which {} "
        "stay reserved for cuBLASLt/cuDNN workspaces and the CUDA context",
        MiB(need), MiB(needs.arena_bytes), MiB(needs.constant_bytes), device, MiB(free_bytes), MiB(reserve)));
  }
  return Status();
}

Result<std::shared_ptr<CudaRuntime>> CudaRuntime::Get(int index) {
  static std::mutex mutex;
  static std::map<int, std::shared_ptr<CudaRuntime>> opened;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = opened.find(index); it != opened.end()) return it->second;
  int count = 0;
  RETURN_IF_ERROR(Check(cudaGetDeviceCount(&count), "cudaGetDeviceCount"));
  if (index < 0 || index >= count) {
    return Unsupported(fmt::format("there is no cuda:{}; the CUDA driver reports {} GPU(s)", index, count));
  }
  cudaDeviceProp prop{};
  RETURN_IF_ERROR(Check(cudaGetDeviceProperties(&prop, index), fmt::format("cudaGetDeviceProperties({})", index)));
  auto runtime = std::shared_ptr<CudaRuntime>(new CudaRuntime());
  GpuProps& p = runtime->props_;
  p.name = prop.name;
  p.index = index;
  p.cc_major = prop.major;
  p.cc_minor = prop.minor;
  p.total_mem = prop.totalGlobalMem;
  p.shared_per_block = prop.sharedMemPerBlock;
  p.shape.sm_count = prop.multiProcessorCount;
  p.shape.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  p.shape.max_threads_per_block = prop.maxThreadsPerBlock;
  p.shape.max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
  p.shape.max_grid_x = prop.maxGridSize[0];
  p.shape.warp_size = prop.warpSize;
  opened[index] = runtime;
  return runtime;
}

Status CudaRuntime::Activate() const {
  return Check(cudaSetDevice(props_.index), fmt::format("cudaSetDevice({})", props_.index));
}

Result<std::shared_ptr<CudaContext>> CudaContext::Create(std::shared_ptr<CudaRuntime> runtime, Precision precision) {
  RETURN_IF_ERROR(runtime->Activate());
  auto ctx = std::shared_ptr<CudaContext>(new CudaContext(std::move(runtime), precision));
  RETURN_IF_ERROR(Check(cudaStreamCreateWithFlags(&ctx->stream_, cudaStreamNonBlocking), "cudaStreamCreate"));
  RETURN_IF_ERROR(Check(cudaEventCreate(&ctx->begin_), "cudaEventCreate"));
  RETURN_IF_ERROR(Check(cudaEventCreate(&ctx->end_), "cudaEventCreate"));
  return ctx;
}

CudaContext::~CudaContext() {
  if (!runtime_->Activate().ok()) return;
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  if (begin_ != nullptr) cudaEventDestroy(begin_);
  if (end_ != nullptr) cudaEventDestroy(end_);
  if (staging_ != nullptr) cudaFreeHost(staging_);
  if (workspace_ != nullptr) cudaFree(workspace_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

Status CudaContext::AfterLaunch(cudaError_t launch, std::string_view what, std::string_view kernel) {
  if (launch == cudaSuccess) launch = cudaGetLastError();
  return launch == cudaSuccess ? Status() : CudaError(launch, fmt::format("{}: {}", what, kernel));
}

Status CudaContext::Copy(const DeviceBuffer& src, const DeviceBuffer& dst, size_t bytes, std::string_view what) {
  if (bytes == 0) return Status();
  return Check(cudaMemcpyAsync(dst.handle, src.handle, bytes, cudaMemcpyDeviceToDevice, stream_),
               fmt::format("{}: cudaMemcpyAsync({} bytes, device to device)", what, bytes));
}

Result<void*> CudaContext::Workspace(size_t bytes) {
  if (bytes <= workspace_bytes_) return workspace_;
  RETURN_IF_ERROR(Finish());  // the old workspace may still be in use by enqueued work
  if (workspace_ != nullptr) cudaFree(workspace_);
  workspace_ = nullptr;
  workspace_bytes_ = 0;
  RETURN_IF_ERROR(Check(cudaMalloc(&workspace_, bytes), fmt::format("workspace of {} on {}", MiB(bytes), DeviceId())));
  workspace_bytes_ = bytes;
  return workspace_;
}

Result<void*> CudaContext::Staging(size_t bytes) {
  if (bytes <= staging_bytes_) return staging_;
  if (staging_ != nullptr) cudaFreeHost(staging_);
  staging_ = nullptr;
  staging_bytes_ = 0;
  RETURN_IF_ERROR(Check(cudaMallocHost(&staging_, bytes), fmt::format("pinned staging buffer of {}", MiB(bytes))));
  staging_bytes_ = bytes;
  return staging_;
}

std::string CudaContext::DeviceId() const { return fmt::format("cuda:{}", runtime_->index()); }

DType CudaContext::StorageType(DType dtype) const {
  if (dtype != DType::kF32) return dtype;
  if (precision_ == Precision::kFp16) return DType::kF16;
  if (precision_ == Precision::kBf16) return DType::kBF16;
  return dtype;
}

Status CudaContext::CheckFits(const DeviceMemoryNeeds& needs) const {
  RETURN_IF_ERROR(runtime_->Activate());
  size_t free_bytes = 0, total_bytes = 0;
  RETURN_IF_ERROR(Check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo"));
  return CheckFitsIn(needs, free_bytes, total_bytes, kReserveBytes,
                     fmt::format("{} ({})", DeviceId(), runtime_->props().name));
}

Result<std::shared_ptr<DeviceAllocation>> CudaContext::Allocate(size_t bytes) {
  RETURN_IF_ERROR(runtime_->Activate());
  if (bytes == 0) bytes = 1;
  void* ptr = nullptr;
  RETURN_IF_ERROR(Check(cudaMalloc(&ptr, bytes), fmt::format("cudaMalloc({} on {})", MiB(bytes), DeviceId())));
  return std::shared_ptr<DeviceAllocation>(std::make_shared<CudaAllocation>(runtime_, ptr, bytes));
}

Status CudaContext::Upload(const Tensor& host, const DeviceBuffer& dst) {
  const DType storage = StorageType(host.dtype());
  const size_t bytes = static_cast<size_t>(host.numel()) * DTypeSize(storage);
  if (bytes != dst.bytes) {
    return Internal(fmt::format("upload of {} into a {}-byte device buffer", DescribeTensor(host), dst.bytes));
  }
  if (bytes == 0) return Status();
  RETURN_IF_ERROR(runtime_->Activate());
  ASSIGN_OR_RETURN(void* staging, Staging(bytes));
  // The staging buffer may still feed an earlier upload: wait before overwriting it.
  RETURN_IF_ERROR(Check(cudaStreamSynchronize(stream_), fmt::format("upload to {}", DeviceId())));
  if (storage == host.dtype()) {
    std::memcpy(staging, host.raw_data(), bytes);
  } else {
    const float* f = host.data<float>();
    auto* bits = static_cast<uint16_t*>(staging);
    const auto n = static_cast<size_t>(host.numel());
    if (storage == DType::kF16) {
      for (size_t i = 0; i < n; ++i) bits[i] = FloatToHalfBits(f[i]);
    } else {
      for (size_t i = 0; i < n; ++i) bits[i] = FloatToBFloat16Bits(f[i]);
    }
  }
  return Check(cudaMemcpyAsync(dst.handle, staging, bytes, cudaMemcpyHostToDevice, stream_),
               fmt::format("copy to {} ({} bytes)", DeviceId(), bytes));
}

Status CudaContext::Download(const DeviceBuffer& src, Tensor& host) {
  const DType storage = StorageType(host.dtype());
  const size_t bytes = static_cast<size_t>(host.numel()) * DTypeSize(storage);
  if (bytes != src.bytes) {
    return Internal(fmt::format("download of a {}-byte device buffer into {}", src.bytes, DescribeTensor(host)));
  }
  if (bytes == 0) return Status();
  RETURN_IF_ERROR(runtime_->Activate());
  ASSIGN_OR_RETURN(void* staging, Staging(bytes));
  RETURN_IF_ERROR(Check(cudaMemcpyAsync(staging, src.handle, bytes, cudaMemcpyDeviceToHost, stream_),
                        fmt::format("copy from {} ({} bytes)", DeviceId(), bytes)));
  RETURN_IF_ERROR(Check(cudaStreamSynchronize(stream_), fmt::format("copy from {}", DeviceId())));
  if (storage == host.dtype()) {
    std::memcpy(host.raw_data(), staging, bytes);
  } else {
    float* f = host.data<float>();
    const auto* bits = static_cast<const uint16_t*>(staging);
    const auto n = static_cast<size_t>(host.numel());
    if (storage == DType::kF16) {
      for (size_t i = 0; i < n; ++i) f[i] = HalfBitsToFloat(bits[i]);
    } else {
      for (size_t i = 0; i < n; ++i) f[i] = BFloat16BitsToFloat(bits[i]);
    }
  }
  return Status();
}

Status CudaContext::Finish() {
  RETURN_IF_ERROR(runtime_->Activate());
  return Check(cudaStreamSynchronize(stream_), fmt::format("cudaStreamSynchronize({})", DeviceId()));
}

void CudaContext::TimerBegin() {
  timing_ = runtime_->Activate().ok() && cudaEventRecord(begin_, stream_) == cudaSuccess;
}

Result<double> CudaContext::TimerEndMs() {
  if (!timing_) return Internal(fmt::format("{}: timer ended without a recorded start event", DeviceId()));
  timing_ = false;
  RETURN_IF_ERROR(Check(cudaEventRecord(end_, stream_), "cudaEventRecord"));
  RETURN_IF_ERROR(Check(cudaEventSynchronize(end_), "cudaEventSynchronize"));
  float ms = 0;
  RETURN_IF_ERROR(Check(cudaEventElapsedTime(&ms, begin_, end_), "cudaEventElapsedTime"));
  return static_cast<double>(ms);
}

}  // namespace chipfit::cuda
