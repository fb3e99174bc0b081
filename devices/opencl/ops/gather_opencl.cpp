// Gather (any axis, int32/int64 indices read on the device, negative indices), Expand and Tile on
// OpenCL. Expand and Tile are strided copies: broadcast dims read with stride 0, and a tiled dim of n
// repeated r times is the pair of dims (r, n) read with strides (0, stride).
#include "core/reference/ref_util.h"
#include "devices/opencl/ops/data_opencl.h"
#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit::opencl {
namespace {

class GatherKernel final : public IKernel {
 public:
  GatherKernel(ocl::OpenClContext* ctx, cl::Kernel kernel, int64_t n, int64_t inner, int64_t count, int64_t axis_dim)
      : ctx_(ctx), kernel_(std::move(kernel)), n_(n), inner_(inner), count_(count), axis_dim_(axis_dim) {}

  bool InputOnDevice(size_t) const override { return true; }
  bool OutputOnDevice(size_t) const override { return true; }

  Status Run(KernelContext& ctx) override {
    const std::string what = ctx.node().Describe();
    RETURN_IF_ERROR(ocl::SetArgs(kernel_, what, ocl::Mem(ctx.device_input(0)), ocl::Mem(ctx.device_input(1)),
                                 ocl::Mem(ctx.device_output(0)), static_cast<cl_int>(n_), static_cast<cl_int>(inner_),
                                 static_cast<cl_int>(count_), static_cast<cl_int>(axis_dim_)));
    const size_t local = ctx_->WorkGroup1D(kernel_);
    return ctx_->Launch(kernel_, cl::NDRange(data::RoundUp(static_cast<size_t>(n_), local)), cl::NDRange(local), what);
  }

 private:
  ocl::OpenClContext* ctx_;
  cl::Kernel kernel_;
  int64_t n_, inner_, count_, axis_dim_;  // in (widened) elements
};

int64_t Product(const Shape& shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t d = begin; d < end; ++d) n *= shape[d];
  return n;
}

}  // namespace

Result<std::unique_ptr<IKernel>> CreateGather(const KernelInit& init) {
  ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, data::CheckInit(init, {0, 1}));
  const Node& node = init.node;
  const Shape& in = init.inputs[0]->shape;
  const ValueInfo& indices = *init.inputs[1];
  if (indices.dtype != DType::kI32 && indices.dtype != DType::kI64) {
    return InvalidArgument(node.Describe() + ": indices must be int32 or int64, got " +
                           std::string(DTypeName(indices.dtype)));
  }
  if (in.empty()) return InvalidArgument(node.Describe() + ": data must have rank >= 1");
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(node.GetInt("axis", 0), static_cast<int64_t>(in.size()), node));
  const auto a = static_cast<size_t>(axis);
  const int64_t axis_dim = in[a];
  if (indices.value != nullptr) {
    // Constant indices fail here, with the value, rather than as zeros on the device.
    for (int64_t i : indices.value->ToInt64Vector()) {
      if (i < -axis_dim || i >= axis_dim) {
        return InvalidArgument(node.Describe() + ": index " + std::to_string(i) + " is out of range for a dim of " +
                               std::to_string(axis_dim));
      }
    }
  }
  const DType storage = ctx->StorageType(init.inputs[0]->dtype);
  const size_t elem = DTypeSize(storage);
  if (data::ElemType(elem).empty()) return Unsupported("dtype " + std::string(DTypeName(storage)) + " on OpenCL");
  int64_t inner = Product(in, a + 1, in.size());
  // The inner block moves as wide elements when it splits evenly (Alignment keeps buffers aligned).
  int64_t f = 1;
  while (elem * static_cast<size_t>(f) * 2 <= 16 && inner % (f * 2) == 0 &&
         ctx->Alignment() % (elem * static_cast<size_t>(f) * 2) == 0) {
    f *= 2;
  }
  inner /= f;
  const int64_t count = NumElements(indices.shape);
  const int64_t n = Product(in, 0, a) * count * inner;
  const std::string defines = " -DELEM=" + data::ElemType(elem * static_cast<size_t>(f)) +
                              (indices.dtype == DType::kI64 ? " -DINDEX=long" : " -DINDEX=int");
  ASSIGN_OR_RETURN(cl::Kernel kernel, ctx->CreateKernel("gather", "gather", defines));
  return std::unique_ptr<IKernel>(new GatherKernel(ctx, std::move(kernel), n, inner, count, axis_dim));
}

Result<std::unique_ptr<IKernel>> CreateExpand(const KernelInit& init) {
  ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, data::CheckInit(init, {0}));
  const Shape& in = init.inputs[0]->shape;
  const Shape& out = (*init.outputs)[0].shape;
  if (out.size() < in.size()) return InvalidArgument(init.node.Describe() + ": output rank below the input's");
  const std::vector<int64_t> in_strides = data::DenseStrides(in);
  data::StridedSpec spec{out, std::vector<int64_t>(out.size(), 0), data::DenseStrides(out), 0, 0};
  const size_t lead = out.size() - in.size();
  for (size_t j = 0; j < in.size(); ++j) {
    if (in[j] != out[lead + j] && in[j] != 1) {
      return InvalidArgument(init.node.Describe() + ": cannot broadcast " + ShapeToString(in) + " to " +
                             ShapeToString(out));
    }
    spec.src_strides[lead + j] = in[j] == 1 ? 0 : in_strides[j];
  }
  ASSIGN_OR_RETURN(data::StridedCopy copy,
                   data::StridedCopy::Create(ctx, ctx->StorageType(init.inputs[0]->dtype), spec));
  return data::StridedOutputsKernel::One(ctx, std::move(copy));
}

Result<std::unique_ptr<IKernel>> CreateTile(const KernelInit& init) {
  ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, data::CheckInit(init, {0}));
  const Shape& in = init.inputs[0]->shape;
  const Shape& out = (*init.outputs)[0].shape;
  if (out.size() != in.size()) return InvalidArgument(init.node.Describe() + ": output rank differs from the input's");
  // The repeats follow from the shapes (shape inference read them), so they need not be constant here.
  const std::vector<int64_t> in_strides = data::DenseStrides(in);
  data::StridedSpec spec;
  for (size_t d = 0; d < in.size(); ++d) {
    if (out[d] % in[d] != 0) {
      return InvalidArgument(init.node.Describe() + ": output " + ShapeToString(out) + " does not tile " +
                             ShapeToString(in));
    }
    spec.dims.insert(spec.dims.end(), {out[d] / in[d], in[d]});
    spec.src_strides.insert(spec.src_strides.end(), {0, in_strides[d]});
  }
  spec.dst_strides = data::DenseStrides(spec.dims);
  ASSIGN_OR_RETURN(data::StridedCopy copy,
                   data::StridedCopy::Create(ctx, ctx->StorageType(init.inputs[0]->dtype), spec));
  return data::StridedOutputsKernel::One(ctx, std::move(copy));
}

}  // namespace chipfit::opencl
