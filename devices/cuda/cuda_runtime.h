// The CUDA execution runtime: error mapping, one CudaRuntime per GPU (process-wide) and CudaContext,
// the DeviceContext a compiled model runs on: one stream owned by the thread that runs the model,
// one device arena, constants uploaded once, pinned staging buffers for transfers, cudaEvent timers.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "core/runtime/device_context.h"
#include "core/runtime/target.h"
#include "devices/cuda/cuda_launch.h"

namespace chipfit::cuda {

// "cudaErrorMemoryAllocation (2): out of memory".
std::string ErrorText(cudaError_t err);
// The Status of a failed CUDA call, "<what>: <ErrorText>", with the code a user can act on:
// Unsupported for a GPU or driver that cannot run this build (no device, old driver, no kernel
// image for the GPU's architecture) and for running out of device memory; Internal for the rest,
// with a note when the error leaves the CUDA context unusable (illegal address, launch failure).
Status CudaError(cudaError_t err, std::string_view what);
inline Status Check(cudaError_t err, std::string_view what) {
  return err == cudaSuccess ? Status() : CudaError(err, what);
}
// Whether `err` is sticky: every later call in the process fails the same way.
bool IsStickyError(cudaError_t err);

// What the runtime and the kernels need to know about one GPU.
struct GpuProps {
  std::string name;
  int index = 0;
  int cc_major = 0;
  int cc_minor = 0;
  uint64_t total_mem = 0;
  size_t shared_per_block = 0;
  GpuShape shape;
  int ComputeCapability() const { return cc_major * 10 + cc_minor; }
};

// The device-memory check CudaContext::CheckFits makes, on plain numbers: the arena and constants
// against the free memory cudaMemGetInfo reported, leaving `reserve` for cuBLASLt/cuDNN workspaces
// and the CUDA context. `device` names the GPU in the message.
Status CheckFitsIn(const DeviceMemoryNeeds& needs, uint64_t free_bytes, uint64_t total_bytes, uint64_t reserve,
                   std::string_view device);

// One GPU opened for execution, shared by every compiled model on it in this process.
class CudaRuntime {
 public:
  CudaRuntime(const CudaRuntime&) = delete;
  CudaRuntime& operator=(const CudaRuntime&) = delete;

  // GPU `index` (cuda:0 …), opened once per process; no driver or no such GPU is Unsupported.
  static Result<std::shared_ptr<CudaRuntime>> Get(int index);

  int index() const { return props_.index; }
  const GpuProps& props() const { return props_; }
  // Makes this GPU current for the calling thread (every CudaContext call does it first).
  Status Activate() const;

 private:
  CudaRuntime() = default;
  GpuProps props_;
};

// The DeviceContext of one compiled model on a GPU. Under fp16 and bf16 every f32 tensor on the device
// is stored in that type (converted on upload and download); fp32, tf32 and int8 keep f32 activations.
class CudaContext final : public DeviceContext {
 public:
  // Creates the model's stream, its two timing events and the pinned staging buffer.
  static Result<std::shared_ptr<CudaContext>> Create(std::shared_ptr<CudaRuntime> runtime, Precision precision);
  ~CudaContext() override;

  CudaRuntime& runtime() const { return *runtime_; }
  const GpuProps& props() const { return runtime_->props(); }
  Precision precision() const { return precision_; }
  cudaStream_t stream() const { return stream_; }

  // After a kernel launch on stream(): the launch's own error (bad configuration, no kernel image),
  // named "<what>: <kernel>: <error>"; `what` names the node.
  Status AfterLaunch(cudaError_t launch, std::string_view what, std::string_view kernel);
  // Device-to-device copy on the stream.
  Status Copy(const DeviceBuffer& src, const DeviceBuffer& dst, size_t bytes, std::string_view what);
  // Scratch for cuBLASLt and cuDNN workspaces: at least `bytes`, grown on demand, valid until the next
  // call with a larger size (work on the one stream is ordered, so reuse is safe).
  Result<void*> Workspace(size_t bytes);

  std::string DeviceId() const override;
  DType StorageType(DType dtype) const override;
  size_t Alignment() const override { return 256; }  // cudaMalloc's guarantee; cuBLASLt wants 16
  Status CheckFits(const DeviceMemoryNeeds& needs) const override;
  Result<std::shared_ptr<DeviceAllocation>> Allocate(size_t bytes) override;
  Status Upload(const Tensor& host, const DeviceBuffer& dst) override;
  Status Download(const DeviceBuffer& src, Tensor& host) override;
  Status Finish() override;
  void TimerBegin() override;
  Result<double> TimerEndMs() override;

 private:
  CudaContext(std::shared_ptr<CudaRuntime> runtime, Precision precision)
      : runtime_(std::move(runtime)), precision_(precision) {}
  Result<void*> Staging(size_t bytes);

  std::shared_ptr<CudaRuntime> runtime_;
  Precision precision_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t begin_ = nullptr;
  cudaEvent_t end_ = nullptr;
  bool timing_ = false;
  void* staging_ = nullptr;  // pinned (cudaMallocHost)
  size_t staging_bytes_ = 0;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

// The device pointer of a buffer (DeviceBuffer::handle is one on CUDA).
template <typename T = void>
T* Ptr(const DeviceBuffer& buffer) {
  return static_cast<T*>(buffer.handle);
}

}  // namespace chipfit::cuda
