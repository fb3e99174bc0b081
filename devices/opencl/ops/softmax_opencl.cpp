// Softmax and LogSoftmax on OpenCL (ops/softmax.cl) along any axis; before opset 13 the input is
// coerced to 2-D at `axis` (default 1) and whole rows are normalised, as in the reference.
#include <string>

#include "core/reference/conv_util.h"
#include "devices/opencl/ops/eltwise_util_opencl.h"
#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit::opencl {
namespace {

using eltwise_util::MemArg;
using eltwise_util::RequireStaticF32;
using eltwise_util::RoundUp;

// Contiguous rows at least this long get a work group each; shorter ones (or strided rows) a work
// item each.
constexpr int64_t kGroupPerRowFrom = 64;

class SoftmaxKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init) {
    ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, RequireStaticF32(init, {0}));
    const Node& node = init.node;
    const Shape& x = init.inputs[0]->shape;
    const bool legacy = init.opset < 13;
    Result<int64_t> axis = NormalizeAxis(node.GetInt("axis", legacy ? 1 : -1), static_cast<int64_t>(x.size()), node);
    if (!axis.ok()) return Unsupported(axis.status().message());
    const auto a = static_cast<size_t>(*axis);
    auto kernel = std::unique_ptr<SoftmaxKernel>(new SoftmaxKernel(ctx, node.Describe()));
    kernel->outer_ = Product(x, 0, a);
    kernel->n_ = legacy ? Product(x, a) : x[a];
    kernel->inner_ = legacy ? 1 : Product(x, a + 1);
    kernel->per_group_ = kernel->inner_ == 1 && kernel->n_ >= kGroupPerRowFrom;
    const std::string defines = node.op_type == "LogSoftmax" ? "-DLOG" : "";
    ASSIGN_OR_RETURN(kernel->kernel_,
                     ctx->CreateKernel("softmax", kernel->per_group_ ? "softmax_wg" : "softmax_item", defines));
    kernel->local_ = kernel->per_group_
                         ? eltwise_util::ReductionGroup(*ctx, kernel->kernel_, static_cast<size_t>(kernel->n_))
                         : ctx->WorkGroup1D(kernel->kernel_);
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const cl::Memory x = MemArg(ctx.device_input(0)), y = MemArg(ctx.device_output(0));
    const auto n = static_cast<cl_uint>(n_);
    if (per_group_) {
      RETURN_IF_ERROR(ocl::SetArgs(kernel_, what_, x, y, n));
      return ctx_->Launch(kernel_, cl::NDRange(static_cast<size_t>(outer_) * local_), cl::NDRange(local_), what_);
    }
    const auto rows = static_cast<cl_uint>(outer_ * inner_);
    RETURN_IF_ERROR(ocl::SetArgs(kernel_, what_, x, y, rows, n, static_cast<cl_uint>(inner_)));
    return ctx_->Launch(kernel_, cl::NDRange(RoundUp(rows, local_)), cl::NDRange(local_), what_);
  }
  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t) const override { return true; }

 private:
  SoftmaxKernel(ocl::OpenClContext* ctx, std::string what) : ctx_(ctx), what_(std::move(what)) {}
  ocl::OpenClContext* ctx_;
  std::string what_;
  cl::Kernel kernel_;
  size_t local_ = 1;
  int64_t outer_ = 1, n_ = 1, inner_ = 1;
  bool per_group_ = false;
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateSoftmax(const KernelInit& init) { return SoftmaxKernel::Create(init); }

}  // namespace chipfit::opencl
