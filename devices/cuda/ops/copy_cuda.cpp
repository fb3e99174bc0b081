// Reshape-like ops on CUDA (the bytes stay as they are, so the kernel is one device-to-device copy
// on the model's stream), and the check every CUDA factory starts with.
#include <algorithm>

#include "devices/cuda/ops/cuda_ops.h"

namespace chipfit::cuda {
namespace {

bool Known(const Shape& shape) {
  return std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d >= 0; });
}

class CopyKernel final : public IKernel {
 public:
  CopyKernel(CudaContext* ctx, std::string what) : ctx_(ctx), what_(std::move(what)) {}
  Status Run(KernelContext& ctx) override {
    const DeviceBuffer in = ctx.device_input(0), out = ctx.device_output(0);
    if (in.bytes != out.bytes) {
      return Internal(what_ + ": copy of " + std::to_string(in.bytes) + " bytes into " + std::to_string(out.bytes));
    }
    return ctx_->Copy(in, out, out.bytes, what_);
  }
  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t output) const override { return output == 0; }

 private:
  CudaContext* ctx_;
  std::string what_;
};

}  // namespace

Result<CudaContext*> RequireStaticContext(const KernelInit& init) {
  auto* ctx = dynamic_cast<CudaContext*>(init.device);
  if (ctx == nullptr) return Unsupported("no CUDA device context");
  if (init.outputs == nullptr) return Unsupported("shapes only known at run time");
  for (const ValueInfo* in : init.inputs) {
    if (in != nullptr && !Known(in->shape)) return Unsupported("shapes only known at run time");
  }
  for (const ValueInfo& out : *init.outputs) {
    if (!Known(out.shape)) return Unsupported("shapes only known at run time");
  }
  return ctx;
}

Status CheckStaticShapes(const KernelInit& init) {
  constexpr int64_t kMaxElements = (int64_t{1} << 31) - 1;
  if (init.outputs == nullptr || init.outputs->empty()) return Unsupported("shapes only known at run time");
  for (const ValueInfo* in : init.inputs) {
    if (in == nullptr) continue;
    if (!Known(in->shape)) return Unsupported("shapes only known at run time");
    if (NumElements(in->shape) > kMaxElements) {
      return Unsupported("input of 2^31 or more values (the CUDA kernels index in 32 bits)");
    }
  }
  for (const ValueInfo& out : *init.outputs) {
    if (!Known(out.shape)) return Unsupported("shapes only known at run time");
    if (NumElements(out.shape) > kMaxElements) {
      return Unsupported("output of 2^31 or more values (the CUDA kernels index in 32 bits)");
    }
  }
  return Status();
}

DType StorageOf(const KernelInit& init, DType dtype) {
  const auto* ctx = dynamic_cast<const CudaContext*>(init.device);
  return ctx != nullptr ? ctx->StorageType(dtype) : dtype;
}

Result<std::unique_ptr<IKernel>> CreateCopy(const KernelInit& init) {
  ASSIGN_OR_RETURN(CudaContext * ctx, RequireStaticContext(init));
  const Node& node = init.node;
  if (node.op_type == "Dropout") {
    // Inference Dropout is a copy; training mode draws a random mask and stays on the reference.
    if (init.inputs.size() > 2 && init.inputs[2] != nullptr) {
      const Tensor* training = init.inputs[2]->value;
      if (training == nullptr || training->numel() != 1 || training->data<bool>()[0]) {
        return Unsupported(
            "Dropout in training mode (or with training_mode known only at run time) draws a "
            "random mask; it stays on the reference so that a seed draws the same values everywhere");
      }
    }
    if (init.outputs->size() > 1) return Unsupported("Dropout's mask output is not produced on CUDA");
  }
  if (init.inputs.empty() || init.inputs[0] == nullptr) return Unsupported("input 0 is missing");
  return std::unique_ptr<IKernel>(new CopyKernel(ctx, node.Describe()));
}

}  // namespace chipfit::cuda
