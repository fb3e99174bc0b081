// Slice (constant starts/axes/steps, negative steps included) and Split (every opset form) on OpenCL:
// both are strided copies out of input 0. Split reads its part sizes from the output shapes, so the
// split input (opset 13+) or num_outputs (18+) need not be known beyond what shape inference saw.
#include <algorithm>
#include <numeric>

#include "core/reference/ref_util.h"
#include "devices/opencl/ops/data_opencl.h"
#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit::opencl {
namespace {

// A list from the attribute (before opset 10) or constant input `input`; `present` false when absent.
Result<std::vector<int64_t>> SliceList(const KernelInit& init, const char* name, size_t input, bool* present) {
  if (init.opset < 10) {
    *present = init.node.Has(name);
    return init.node.GetInts(name);
  }
  *present = init.node.HasInput(input);
  if (!*present) return std::vector<int64_t>{};
  const ValueInfo* in = input < init.inputs.size() ? init.inputs[input] : nullptr;
  if (in == nullptr || in->value == nullptr) {
    return Unsupported(std::string("Slice's ") + name + " are not constant");
  }
  return in->value->ToInt64Vector();
}

}  // namespace

Result<std::unique_ptr<IKernel>> CreateSlice(const KernelInit& init) {
  ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, data::CheckInit(init, {0}));
  const Node& node = init.node;
  const Shape& in = init.inputs[0]->shape;
  const Shape& out = (*init.outputs)[0].shape;
  // The start and step per axis decide where every output element comes from; the ends only decide the
  // output shape, which shape inference already gave.
  bool has_starts = false, has_axes = false, has_steps = false;
  ASSIGN_OR_RETURN(std::vector<int64_t> starts, SliceList(init, "starts", 1, &has_starts));
  ASSIGN_OR_RETURN(std::vector<int64_t> axes, SliceList(init, "axes", 3, &has_axes));
  std::vector<int64_t> steps;
  if (init.opset >= 10) {
    ASSIGN_OR_RETURN(steps, SliceList(init, "steps", 4, &has_steps));
  }
  if (!has_starts) return InvalidArgument(node.Describe() + ": missing starts");
  if (!has_axes) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), int64_t{0});
  }
  if (!has_steps) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) {
    return InvalidArgument(node.Describe() + ": starts, axes and steps differ in length");
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> norm, NormalizeAxes(axes, static_cast<int64_t>(in.size()), node));
  const std::vector<int64_t> in_strides = data::DenseStrides(in);
  data::StridedSpec spec{out, in_strides, data::DenseStrides(out), 0, 0};
  for (size_t i = 0; i < norm.size(); ++i) {
    const auto a = static_cast<size_t>(norm[i]);
    const int64_t dim = in[a];
    const int64_t step = steps[i];
    if (step == 0) return InvalidArgument(node.Describe() + ": steps must not be 0");
    int64_t s = starts[i];
    if (s < 0) s = s < -dim ? -1 : s + dim;
    s = step > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
    spec.src_offset += s * in_strides[a];
    // A dim of one output element never advances; its stride (maybe a huge step) is dropped unused.
    spec.src_strides[a] = out[a] > 1 ? in_strides[a] * step : 0;
  }
  ASSIGN_OR_RETURN(data::StridedCopy copy,
                   data::StridedCopy::Create(ctx, ctx->StorageType(init.inputs[0]->dtype), spec));
  return data::StridedOutputsKernel::One(ctx, std::move(copy));
}

Result<std::unique_ptr<IKernel>> CreateSplit(const KernelInit& init) {
  ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, data::CheckInit(init, {0}, /*allow_empty_outputs=*/true));
  const Node& node = init.node;
  const Shape& in = init.inputs[0]->shape;
  if (in.empty()) return InvalidArgument(node.Describe() + ": cannot split a scalar");
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(node.GetInt("axis", 0), static_cast<int64_t>(in.size()), node));
  const auto a = static_cast<size_t>(axis);
  const std::vector<int64_t> in_strides = data::DenseStrides(in);
  const DType storage = ctx->StorageType(init.inputs[0]->dtype);
  std::vector<std::pair<size_t, data::StridedCopy>> copies;
  int64_t at = 0;
  for (size_t k = 0; k < init.outputs->size(); ++k) {
    const Shape& out = (*init.outputs)[k].shape;
    if (out.size() != in.size()) return InvalidArgument(node.Describe() + ": output rank differs from the input's");
    const bool present = k < node.outputs.size() && !node.outputs[k].empty();
    if (present && NumElements(out) > 0) {
      data::StridedSpec spec{out, in_strides, data::DenseStrides(out), at * in_strides[a], 0};
      ASSIGN_OR_RETURN(data::StridedCopy copy, data::StridedCopy::Create(ctx, storage, spec));
      copies.emplace_back(k, std::move(copy));
    }
    at += out[a];
  }
  if (at != in[a]) {
    return InvalidArgument(node.Describe() + ": outputs cover " + std::to_string(at) + " of " + std::to_string(in[a]) +
                           " along axis " + std::to_string(axis));
  }
  return std::unique_ptr<IKernel>(new data::StridedOutputsKernel(ctx, std::move(copies)));
}

}  // namespace chipfit::opencl
