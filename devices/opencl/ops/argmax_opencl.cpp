// ArgMax and ArgMin on OpenCL (ops/argmax.cl): axis, keepdims, select_last_index; int64 output.
#include <string>

#include "core/reference/ref_util.h"
#include "devices/opencl/ops/data_opencl.h"
#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit::opencl {
namespace {

class ArgKernel final : public IKernel {
 public:
  ArgKernel(ocl::OpenClContext* ctx, cl::Kernel kernel, int64_t len, int64_t inner)
      : ctx_(ctx),
        kernel_(std::move(kernel)),
        len_(static_cast<cl_uint>(len)),
        inner_(static_cast<cl_uint>(inner)),
        local_(ctx_->WorkGroup1D(kernel_)) {}

  Status Run(KernelContext& ctx) override {
    const std::string what = ctx.node().Describe();
    const auto n = static_cast<cl_uint>(ctx.output(0)->numel());
    RETURN_IF_ERROR(
        ocl::SetArgs(kernel_, what, ocl::Mem(ctx.device_input(0)), ocl::Mem(ctx.device_output(0)), n, len_, inner_));
    return ctx_->Launch(kernel_, cl::NDRange(data::RoundUp(n, local_)), cl::NDRange(local_), what);
  }
  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t) const override { return true; }

 private:
  ocl::OpenClContext* ctx_;
  cl::Kernel kernel_;
  cl_uint len_, inner_;
  size_t local_;
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateArgMax(const KernelInit& init) {
  const std::string& op = init.node.op_type;
  if (op != "ArgMax" && op != "ArgMin") return Unsupported(op + " is not an arg reduction the OpenCL device knows");
  ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, data::CheckInit(init, {0}));
  const ValueInfo& x = *init.inputs[0];
  std::string defines;
  switch (ctx->StorageType(x.dtype)) {
    case DType::kF32: defines = "-DIN_KIND=K_FLOAT"; break;
    case DType::kF16: defines = "-DIN_KIND=K_HALF"; break;
    case DType::kI32: defines = "-DIN_KIND=K_NATIVE -DIN_T=int"; break;
    case DType::kI64:
      RETURN_IF_ERROR(RequireInt64(init));
      defines = "-DIN_KIND=K_NATIVE -DIN_T=long";
      break;
    default: return Unsupported(op + " on " + std::string(DTypeName(x.dtype)) + " (f32, f16, i32 and i64 on OpenCL)");
  }
  const auto rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) return Unsupported(op + " of a scalar");
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(init.node.GetInt("axis", 0), rank, init.node));
  int64_t len = 1, inner = 1;
  for (int64_t d = axis; d < rank; ++d) (d == axis ? len : inner) *= x.shape[static_cast<size_t>(d)];
  if (op == "ArgMax") defines += " -DIS_MAX";
  // select_last_index exists from opset 12; earlier opsets take the first index, as the reference.
  if (init.opset >= 12 && init.node.GetInt("select_last_index", 0) != 0) defines += " -DSELECT_LAST";
  ASSIGN_OR_RETURN(cl::Kernel kernel, ctx->CreateKernel("argmax", "arg_extreme", defines));
  return std::unique_ptr<IKernel>(new ArgKernel(ctx, std::move(kernel), len, inner));
}

}  // namespace chipfit::opencl
