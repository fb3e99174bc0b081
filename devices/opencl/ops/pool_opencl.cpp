// MaxPool, AveragePool (1-D to 3-D windows: pads, strides, dilations, ceil_mode, auto_pad) and
// GlobalMaxPool / GlobalAveragePool on OpenCL (ops/pool.cl).
#include <string>
#include <vector>

#include "core/reference/conv_util.h"
#include "devices/opencl/ops/eltwise_util_opencl.h"
#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit::opencl {
namespace {

using eltwise_util::RequireStaticF32;
using eltwise_util::RoundUp;

enum class PoolKind { kMax, kAverage };

// (D, H, W) of 1-, 2- or 3-D spatial values, leading dims filled with `fill`.
std::vector<int64_t> Spatial3(const std::vector<int64_t>& v, int64_t fill) {
  std::vector<int64_t> out(3 - v.size(), fill);
  out.insert(out.end(), v.begin(), v.end());
  return out;
}

class WindowPoolKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, PoolKind kind) {
    ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, RequireStaticF32(init, {0}));
    const Node& node = init.node;
    if (kind == PoolKind::kMax && node.outputs.size() > 1 && !node.outputs[1].empty()) {
      return Unsupported("MaxPool's Indices output (argmax positions) is not computed on OpenCL");
    }
    const Shape& x = init.inputs[0]->shape;
    if (x.size() < 3 || x.size() > 5) {
      return Unsupported(std::to_string(static_cast<int64_t>(x.size()) - 2) +
                         "-D pooling (the OpenCL kernel takes 1-D to 3-D windows)");
    }
    if (!node.Has("kernel_shape")) return Unsupported("attribute kernel_shape is missing");
    Result<Window> read = ReadWindow(node, Shape(x.begin() + 2, x.end()), node.GetInts("kernel_shape"));
    if (!read.ok()) return Unsupported(read.status().message());
    Window w = std::move(read).value();
    RETURN_IF_ERROR(ResolveForwardWindow(node, w, node.GetInt("ceil_mode", 0) != 0));
    std::string defines = kind == PoolKind::kMax ? "-DPOOL_MAX" : "-DPOOL_AVG";
    if (kind == PoolKind::kAverage && node.GetInt("count_include_pad", 0) != 0) defines += " -DINCLUDE_PAD";

    auto kernel = std::unique_ptr<WindowPoolKernel>(new WindowPoolKernel(ctx, node.Describe()));
    ASSIGN_OR_RETURN(kernel->kernel_, ctx->CreateKernel("pool", "pool", defines));
    kernel->local_ = ctx->WorkGroup1D(kernel->kernel_);
    kernel->in_ = eltwise_util::PackI4(Spatial3(w.in, 1));
    kernel->out_ = eltwise_util::PackI4(Spatial3(w.out, 1));
    kernel->kernel_size_ = eltwise_util::PackI4(Spatial3(w.kernel, 1));
    kernel->strides_ = eltwise_util::PackI4(Spatial3(w.strides, 1));
    kernel->dilations_ = eltwise_util::PackI4(Spatial3(w.dilations, 1));
    kernel->pad_begin_ = eltwise_util::PackI4(Spatial3(w.pad_begin, 0));
    kernel->pad_end_ = eltwise_util::PackI4(Spatial3(w.pad_end, 0));
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const auto total = static_cast<cl_uint>(ctx.output(0)->numel());
    RETURN_IF_ERROR(ocl::SetArgs(kernel_, what_, eltwise_util::MemArg(ctx.device_input(0)),
                                 eltwise_util::MemArg(ctx.device_output(0)), total, in_, out_, kernel_size_, strides_,
                                 dilations_, pad_begin_, pad_end_));
    return ctx_->Launch(kernel_, cl::NDRange(RoundUp(total, local_)), cl::NDRange(local_), what_);
  }
  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t) const override { return true; }

 private:
  WindowPoolKernel(ocl::OpenClContext* ctx, std::string what) : ctx_(ctx), what_(std::move(what)) {}
  ocl::OpenClContext* ctx_;
  std::string what_;
  cl::Kernel kernel_;
  size_t local_ = 1;
  cl_int4 in_{}, out_{}, kernel_size_{}, strides_{}, dilations_{}, pad_begin_{}, pad_end_{};
};

// Planes at least this large get a work group each; smaller ones a work item each.
constexpr int64_t kGroupPerPlaneFrom = 128;

class GlobalPoolKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, PoolKind kind) {
    ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, RequireStaticF32(init, {0}));
    const Shape& x = init.inputs[0]->shape;
    if (x.size() < 2) return Unsupported("global pooling of a rank " + std::to_string(x.size()) + " tensor");
    auto kernel = std::unique_ptr<GlobalPoolKernel>(new GlobalPoolKernel(ctx, init.node.Describe()));
    kernel->planes_ = x[0] * x[1];
    kernel->plane_ = Product(x, 2);
    kernel->per_group_ = kernel->plane_ >= kGroupPerPlaneFrom;
    const char* defines = kind == PoolKind::kMax ? "-DPOOL_MAX" : "-DPOOL_AVG";
    ASSIGN_OR_RETURN(kernel->kernel_,
                     ctx->CreateKernel("pool", kernel->per_group_ ? "global_pool_wg" : "global_pool_item", defines));
    kernel->local_ = kernel->per_group_
                         ? eltwise_util::ReductionGroup(*ctx, kernel->kernel_, static_cast<size_t>(kernel->plane_))
                         : ctx->WorkGroup1D(kernel->kernel_);
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const auto planes = static_cast<cl_uint>(planes_), plane = static_cast<cl_uint>(plane_);
    const cl::Memory x = eltwise_util::MemArg(ctx.device_input(0)), y = eltwise_util::MemArg(ctx.device_output(0));
    if (per_group_) {
      RETURN_IF_ERROR(ocl::SetArgs(kernel_, what_, x, y, plane));
      return ctx_->Launch(kernel_, cl::NDRange(planes * local_), cl::NDRange(local_), what_);
    }
    RETURN_IF_ERROR(ocl::SetArgs(kernel_, what_, x, y, planes, plane));
    return ctx_->Launch(kernel_, cl::NDRange(RoundUp(planes, local_)), cl::NDRange(local_), what_);
  }
  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t) const override { return true; }

 private:
  GlobalPoolKernel(ocl::OpenClContext* ctx, std::string what) : ctx_(ctx), what_(std::move(what)) {}
  ocl::OpenClContext* ctx_;
  std::string what_;
  cl::Kernel kernel_;
  size_t local_ = 1;
  int64_t planes_ = 0, plane_ = 0;
  bool per_group_ = false;
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateMaxPool(const KernelInit& init) {
  return WindowPoolKernel::Create(init, PoolKind::kMax);
}
Result<std::unique_ptr<IKernel>> CreateAveragePool(const KernelInit& init) {
  return WindowPoolKernel::Create(init, PoolKind::kAverage);
}
Result<std::unique_ptr<IKernel>> CreateGlobalMaxPool(const KernelInit& init) {
  return GlobalPoolKernel::Create(init, PoolKind::kMax);
}
Result<std::unique_ptr<IKernel>> CreateGlobalAveragePool(const KernelInit& init) {
  return GlobalPoolKernel::Create(init, PoolKind::kAverage);
}

}  // namespace chipfit::opencl
