// Reduce* on OpenCL (ops/reduce.cl): Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum,
// LogSumExp over any axes (attribute, or a constant input from opset 18 / ReduceSum 13), keepdims,
// noop_with_empty_axes. Work-group tree reductions for long contiguous slices.
#include <string>
#include <vector>

#include "core/reference/conv_util.h"
#include "devices/opencl/ops/eltwise_util_opencl.h"
#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit::opencl {
namespace {

using eltwise_util::MemArg;
using eltwise_util::RequireStaticF32;
using eltwise_util::RoundUp;

constexpr size_t kMaxRank = 6;

Result<std::string> ReduceFn(const std::string& op) {
  static const std::vector<std::pair<const char*, const char*>> kOps = {
      {"ReduceSum", "R_SUM"},        {"ReduceMean", "R_MEAN"},
      {"ReduceMax", "R_MAX"},        {"ReduceMin", "R_MIN"},
      {"ReduceProd", "R_PROD"},      {"ReduceL1", "R_L1"},
      {"ReduceL2", "R_L2"},          {"ReduceSumSquare", "R_SUM_SQUARE"},
      {"ReduceLogSum", "R_LOG_SUM"}, {"ReduceLogSumExp", "R_LOG_SUM_EXP"}};
  for (const auto& [name, fn] : kOps) {
    if (op == name) return std::string(fn);
  }
  return Unsupported(op + " is not a reduction the OpenCL device knows");
}

// Kept and reduced dims of the input, innermost first, with their input strides: dims of 1
// dropped, neighbours of the same kind merged.
struct Collapsed {
  std::vector<int64_t> kept_dims, kept_strides, red_dims, red_strides;
  int64_t count = 1;  // values per output
  bool innermost_reduced = false;
};

Collapsed Collapse(const Shape& x, const std::vector<bool>& reduced) {
  Collapsed c;
  int64_t stride = 1;
  int last = -1;  // kind of the previous kept dim: 0 kept, 1 reduced
  for (size_t d = x.size(); d-- > 0;) {
    const int64_t n = x[d];
    if (n != 1) {
      const int kind = reduced[d] ? 1 : 0;
      std::vector<int64_t>& dims = kind ? c.red_dims : c.kept_dims;
      std::vector<int64_t>& strides = kind ? c.red_strides : c.kept_strides;
      if (last == -1) c.innermost_reduced = kind == 1;
      if (kind == last) {
        dims.back() *= n;
      } else {
        dims.push_back(n);
        strides.push_back(stride);
      }
      if (kind) c.count *= n;
      last = kind;
    }
    stride *= n;
  }
  return c;
}

// Long contiguous slices (or few outputs) get a work group per output.
constexpr int64_t kGroupPerOutputFrom = 64;
constexpr int64_t kFewOutputs = 256;

class ReduceKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init) {
    ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, RequireStaticF32(init, {0}));
    const Node& node = init.node;
    ASSIGN_OR_RETURN(const std::string fn, ReduceFn(node.op_type));
    const Shape& x = init.inputs[0]->shape;
    const bool axes_input = init.opset >= (node.op_type == "ReduceSum" ? 13 : 18);
    std::vector<int64_t> axes;
    if (!axes_input) {
      axes = node.GetInts("axes");
    } else if (init.inputs.size() > 1 && init.inputs[1] != nullptr) {
      if (init.inputs[1]->value == nullptr) return Unsupported("reduction axes computed at run time");
      axes = init.inputs[1]->value->ToInt64Vector();
    }
    const bool noop = axes_input && node.GetInt("noop_with_empty_axes", 0) != 0 && axes.empty();
    std::vector<bool> reduced(x.size(), axes.empty() && !noop);
    Result<std::vector<int64_t>> normalized = NormalizeAxes(axes, static_cast<int64_t>(x.size()), node);
    if (!normalized.ok()) return Unsupported(normalized.status().message());
    for (int64_t a : *normalized) reduced[static_cast<size_t>(a)] = true;
    const Collapsed c = Collapse(x, reduced);
    if (c.kept_dims.size() > kMaxRank || c.red_dims.size() > kMaxRank) {
      return Unsupported("reduced and kept dims alternate more than " + std::to_string(kMaxRank) + " times");
    }

    auto kernel = std::unique_ptr<ReduceKernel>(new ReduceKernel(ctx, node.Describe()));
    kernel->outputs_ = NumElements((*init.outputs)[0].shape);
    kernel->count_ = c.count;
    kernel->per_group_ = c.count >= kGroupPerOutputFrom && (c.innermost_reduced || kernel->outputs_ < kFewOutputs);
    const std::string defines = "-DOP=" + fn + " -DKRANK=" + std::to_string(c.kept_dims.size()) +
                                " -DRRANK=" + std::to_string(c.red_dims.size());
    ASSIGN_OR_RETURN(kernel->kernel_,
                     ctx->CreateKernel("reduce", kernel->per_group_ ? "reduce_wg" : "reduce_item", defines));
    kernel->local_ = kernel->per_group_
                         ? eltwise_util::ReductionGroup(*ctx, kernel->kernel_,
                                                        eltwise_util::NextPowerOfTwo(static_cast<size_t>(c.count)))
                         : ctx->WorkGroup1D(kernel->kernel_);
    kernel->kept_dims_ = eltwise_util::PackU8(c.kept_dims);
    kernel->kept_strides_ = eltwise_util::PackU8(c.kept_strides);
    kernel->red_dims_ = eltwise_util::PackU8(c.red_dims);
    kernel->red_strides_ = eltwise_util::PackU8(c.red_strides);
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const cl::Memory x = MemArg(ctx.device_input(0)), y = MemArg(ctx.device_output(0));
    const auto outputs = static_cast<cl_uint>(outputs_), count = static_cast<cl_uint>(count_);
    if (per_group_) {
      RETURN_IF_ERROR(ocl::SetArgs(kernel_, what_, x, y, count, kept_dims_, kept_strides_, red_dims_, red_strides_));
      return ctx_->Launch(kernel_, cl::NDRange(outputs * local_), cl::NDRange(local_), what_);
    }
    RETURN_IF_ERROR(
        ocl::SetArgs(kernel_, what_, x, y, outputs, count, kept_dims_, kept_strides_, red_dims_, red_strides_));
    return ctx_->Launch(kernel_, cl::NDRange(RoundUp(outputs, local_)), cl::NDRange(local_), what_);
  }
  // The axes input was read at Init.
  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t) const override { return true; }

 private:
  ReduceKernel(ocl::OpenClContext* ctx, std::string what) : ctx_(ctx), what_(std::move(what)) {}
  ocl::OpenClContext* ctx_;
  std::string what_;
  cl::Kernel kernel_;
  size_t local_ = 1;
  int64_t outputs_ = 1, count_ = 1;
  bool per_group_ = false;
  cl_uint8 kept_dims_{}, kept_strides_{}, red_dims_{}, red_strides_{};
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateReduce(const KernelInit& init) { return ReduceKernel::Create(init); }

}  // namespace chipfit::opencl
