// LayerNormalization, InstanceNormalization and inference BatchNormalization on OpenCL
// (ops/norm.cl). Statistics accumulate in float whatever the storage type.
#include <algorithm>
#include <string>

#include "core/reference/conv_util.h"
#include "devices/opencl/ops/eltwise_util_opencl.h"
#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit::opencl {
namespace {

using eltwise_util::MemArg;
using eltwise_util::RequireStaticF32;
using eltwise_util::RoundUp;

size_t PresentOutputs(const Node& node) {
  return static_cast<size_t>(
      std::count_if(node.outputs.begin(), node.outputs.end(), [](const std::string& name) { return !name.empty(); }));
}

// How many values a LayerNormalization parameter of `shape` holds along rows of X's dims from
// `axis`: it must broadcast over the trailing dims only (then element j of a row takes value
// j % count); anything else is refused.
Result<int64_t> RowParameterCount(const Shape& shape, const Shape& x, size_t axis, const char* name) {
  Shape padded(x.size() - std::min(x.size(), shape.size()), 1);
  padded.insert(padded.end(), shape.begin(), shape.end());
  // Leading 1s, then X's own dims: a suffix of the row.
  size_t first = 0;
  while (first < padded.size() && padded[first] == 1) ++first;
  bool suffix = padded.size() == x.size() && first >= axis;
  for (size_t d = first; suffix && d < x.size(); ++d) suffix = padded[d] == x[d];
  if (NumElements(shape) == 1 || suffix) return NumElements(shape);
  return Unsupported(std::string("LayerNormalization ") + name + " of shape " + ShapeToString(shape) +
                     " broadcasts within the normalised dims " + ShapeToString(Shape(x.begin() + axis, x.end())) +
                     " other than over leading dims (the OpenCL kernel takes a parameter repeating along the row)");
}

// The define for a parameter of `count` values along rows of n.
std::string RowParameterDefine(const char* prefix, int64_t count, int64_t n) {
  if (count == 1) return std::string(" -D") + prefix + "_ONE";
  if (count != n) return std::string(" -D") + prefix + "_MOD";
  return "";
}

// LayerNormalization and InstanceNormalization: rows normalised by a work group each.
class RowNormKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> CreateLayer(const KernelInit& init) {
    const bool has_bias = init.inputs.size() > 2 && init.inputs[2] != nullptr;
    ASSIGN_OR_RETURN(ocl::OpenClContext * ctx,
                     has_bias ? RequireStaticF32(init, {0, 1, 2}) : RequireStaticF32(init, {0, 1}));
    const Node& node = init.node;
    if (PresentOutputs(node) > 1) {
      return Unsupported("LayerNormalization's Mean and InvStdDev outputs are not computed on OpenCL");
    }
    const Shape& x = init.inputs[0]->shape;
    Result<int64_t> axis = NormalizeAxis(node.GetInt("axis", -1), static_cast<int64_t>(x.size()), node);
    if (!axis.ok()) return Unsupported(axis.status().message());
    const auto a = static_cast<size_t>(*axis);
    const int64_t n = Product(x, a);
    ASSIGN_OR_RETURN(const int64_t scale_n, RowParameterCount(init.inputs[1]->shape, x, a, "scale"));
    int64_t bias_n = 1;
    if (has_bias) {
      ASSIGN_OR_RETURN(bias_n, RowParameterCount(init.inputs[2]->shape, x, a, "bias"));
    }
    std::string defines = RowParameterDefine("SCALE", scale_n, n);
    if (has_bias) defines += " -DHAS_BIAS" + RowParameterDefine("BIAS", bias_n, n);
    ASSIGN_OR_RETURN(auto kernel, Make(ctx, init, Product(x, 0, a), n, 1, has_bias, defines));
    kernel->scale_n_ = scale_n;
    kernel->bias_n_ = bias_n;
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  static Result<std::unique_ptr<IKernel>> CreateInstance(const KernelInit& init) {
    ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, RequireStaticF32(init, {0, 1, 2}));
    const Shape& x = init.inputs[0]->shape;
    if (x.size() < 3) return Unsupported("InstanceNormalization of a rank " + std::to_string(x.size()) + " tensor");
    ASSIGN_OR_RETURN(auto kernel, Make(ctx, init, x[0] * x[1], Product(x, 2), x[1], true, "-DPER_CHANNEL"));
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const cl::Memory scale = MemArg(ctx.device_input(1));
    RETURN_IF_ERROR(ocl::SetArgs(kernel_, what_, MemArg(ctx.device_input(0)), scale,
                                 has_bias_ ? MemArg(ctx.device_input(2)) : scale, MemArg(ctx.device_output(0)),
                                 static_cast<cl_uint>(n_), static_cast<cl_uint>(channels_),
                                 static_cast<cl_uint>(scale_n_), static_cast<cl_uint>(bias_n_), epsilon_));
    return ctx_->Launch(kernel_, cl::NDRange(static_cast<size_t>(rows_) * local_), cl::NDRange(local_), what_);
  }
  bool InputOnDevice(size_t input) const override { return input == 0 || input == 1 || (input == 2 && has_bias_); }
  bool OutputOnDevice(size_t) const override { return true; }

 private:
  RowNormKernel(ocl::OpenClContext* ctx, std::string what) : ctx_(ctx), what_(std::move(what)) {}

  static Result<std::unique_ptr<RowNormKernel>> Make(ocl::OpenClContext* ctx, const KernelInit& init, int64_t rows,
                                                     int64_t n, int64_t channels, bool has_bias,
                                                     const std::string& defines) {
    auto kernel = std::unique_ptr<RowNormKernel>(new RowNormKernel(ctx, init.node.Describe()));
    kernel->rows_ = rows;
    kernel->n_ = n;
    kernel->channels_ = channels;
    kernel->has_bias_ = has_bias;
    kernel->epsilon_ = init.node.GetFloat("epsilon", 1e-5f);
    ASSIGN_OR_RETURN(kernel->kernel_, ctx->CreateKernel("norm", "rownorm", defines));
    kernel->local_ =
        eltwise_util::ReductionGroup(*ctx, kernel->kernel_, eltwise_util::NextPowerOfTwo(static_cast<size_t>(n)));
    return kernel;
  }

  ocl::OpenClContext* ctx_;
  std::string what_;
  cl::Kernel kernel_;
  size_t local_ = 1;
  int64_t rows_ = 1, n_ = 1, channels_ = 1, scale_n_ = 1, bias_n_ = 1;
  bool has_bias_ = false;
  float epsilon_ = 1e-5f;
};

class BatchNormKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init) {
    ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, RequireStaticF32(init, {0, 1, 2, 3, 4}));
    const Node& node = init.node;
    if (node.GetInt("training_mode", 0) != 0 || PresentOutputs(node) > 1) {
      return Unsupported("BatchNormalization in training mode (only inference: one output Y)");
    }
    const Shape& x = init.inputs[0]->shape;
    if (x.size() < 2) return Unsupported("BatchNormalization of a rank " + std::to_string(x.size()) + " tensor");
    auto kernel = std::unique_ptr<BatchNormKernel>(new BatchNormKernel(ctx, node.Describe()));
    const bool per_activation = init.opset < 9 && node.GetInt("spatial", 1) == 0;
    kernel->plane_ = per_activation ? 1 : Product(x, 2);
    kernel->count_ = per_activation ? Product(x, 1) : x[1];
    kernel->epsilon_ = node.GetFloat("epsilon", 1e-5f);
    for (size_t i = 1; i < 5; ++i) {
      if (NumElements(init.inputs[i]->shape) != kernel->count_) {
        return Unsupported("BatchNormalization input " + std::to_string(i) + " of shape " +
                           ShapeToString(init.inputs[i]->shape) + " does not hold " + std::to_string(kernel->count_) +
                           " values");
      }
    }
    ASSIGN_OR_RETURN(kernel->kernel_, ctx->CreateKernel("norm", "batchnorm"));
    kernel->local_ = ctx->WorkGroup1D(kernel->kernel_);
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const auto total = static_cast<cl_uint>(ctx.output(0)->numel());
    RETURN_IF_ERROR(ocl::SetArgs(kernel_, what_, MemArg(ctx.device_input(0)), MemArg(ctx.device_input(1)),
                                 MemArg(ctx.device_input(2)), MemArg(ctx.device_input(3)), MemArg(ctx.device_input(4)),
                                 MemArg(ctx.device_output(0)), total, static_cast<cl_uint>(plane_),
                                 static_cast<cl_uint>(count_), epsilon_));
    return ctx_->Launch(kernel_, cl::NDRange(RoundUp(total, local_)), cl::NDRange(local_), what_);
  }
  bool InputOnDevice(size_t input) const override { return input < 5; }
  bool OutputOnDevice(size_t) const override { return true; }

 private:
  BatchNormKernel(ocl::OpenClContext* ctx, std::string what) : ctx_(ctx), what_(std::move(what)) {}
  ocl::OpenClContext* ctx_;
  std::string what_;
  cl::Kernel kernel_;
  size_t local_ = 1;
  int64_t plane_ = 1, count_ = 1;
  float epsilon_ = 1e-5f;
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateLayerNorm(const KernelInit& init) { return RowNormKernel::CreateLayer(init); }
Result<std::unique_ptr<IKernel>> CreateInstanceNorm(const KernelInit& init) {
  return RowNormKernel::CreateInstance(init);
}
Result<std::unique_ptr<IKernel>> CreateBatchNorm(const KernelInit& init) { return BatchNormKernel::Create(init); }

}  // namespace chipfit::opencl
