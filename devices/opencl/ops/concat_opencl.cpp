// Concat on OpenCL: one strided copy per non-empty input into its place along the axis (any axis, any
// number of inputs, any dtype by element size; contiguous runs move as wide elements).
#include "core/reference/ref_util.h"
#include "devices/opencl/ops/data_opencl.h"
#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit::opencl {
namespace {

class ConcatKernel final : public IKernel {
 public:
  ConcatKernel(ocl::OpenClContext* ctx, std::vector<std::pair<size_t, data::StridedCopy>> copies)
      : ctx_(ctx), copies_(std::move(copies)) {}

  bool InputOnDevice(size_t) const override { return true; }
  bool OutputOnDevice(size_t) const override { return true; }

  Status Run(KernelContext& ctx) override {
    const std::string what = ctx.node().Describe();
    for (auto& [input, copy] : copies_) {
      RETURN_IF_ERROR(copy.Run(ctx_, ctx.device_input(input), ctx.device_output(0), what));
    }
    return Status();
  }

 private:
  ocl::OpenClContext* ctx_;
  std::vector<std::pair<size_t, data::StridedCopy>> copies_;  // (input, its copy into the output)
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateConcat(const KernelInit& init) {
  ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, data::CheckInit(init, {}));
  const Node& node = init.node;
  if (init.inputs.empty() || init.inputs[0] == nullptr) return Unsupported("Concat without inputs");
  const Shape& out = (*init.outputs)[0].shape;
  if (out.empty()) return InvalidArgument(node.Describe() + ": cannot concatenate scalars");
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(node.GetInt("axis", 0), static_cast<int64_t>(out.size()), node));
  const auto a = static_cast<size_t>(axis);
  const std::vector<int64_t> out_strides = data::DenseStrides(out);
  std::vector<std::pair<size_t, data::StridedCopy>> copies;
  int64_t at = 0;
  for (size_t i = 0; i < init.inputs.size(); ++i) {
    const ValueInfo* in = init.inputs[i];
    if (in == nullptr) return Unsupported("input " + std::to_string(i) + " is missing");
    for (int64_t d : in->shape) {
      if (d < 0) return Unsupported("input " + std::to_string(i) + " has a shape known only at run time");
    }
    if (in->shape.size() != out.size()) return InvalidArgument(node.Describe() + ": inputs differ in rank");
    const int64_t len = in->shape[a];
    if (NumElements(in->shape) > 0) {
      data::StridedSpec spec{in->shape, data::DenseStrides(in->shape), out_strides, 0, at * out_strides[a]};
      ASSIGN_OR_RETURN(data::StridedCopy copy, data::StridedCopy::Create(ctx, ctx->StorageType(in->dtype), spec));
      copies.emplace_back(i, std::move(copy));
    }
    at += len;
  }
  if (at != out[a]) {
    return InvalidArgument(node.Describe() + ": inputs add up to " + std::to_string(at) + " along axis " +
                           std::to_string(axis) + ", the output has " + std::to_string(out[a]));
  }
  return std::unique_ptr<IKernel>(new ConcatKernel(ctx, std::move(copies)));
}

}  // namespace chipfit::opencl
