// Softmax and LogSoftmax (fp32) on oneDNN softmax_v2 over the innermost dim of a 2-D view:
// rows of the flattened input before opset 13, the one axis from 13 on (channels of an nhwc
// tensor are innermost too).
#include "core/reference/ref_util.h"
#include "devices/cpu/onednn_util.h"
#include "devices/cpu/ops/cpu_ops.h"

namespace chipfit::cpu {
namespace {

using dnnl::memory;

int64_t Product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= shape[i];
  return p;
}

class SoftmaxKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init) {
    RETURN_IF_ERROR(RequireStaticF32(init, {0}));
    const Node& node = init.node;
    const Shape& x = init.inputs[0]->shape;
    const bool legacy = init.opset < 13;
    const auto rank = static_cast<int64_t>(x.size());
    Result<int64_t> axis_or = NormalizeAxis(node.GetInt("axis", legacy ? 1 : -1), std::max<int64_t>(rank, 1), node);
    if (!axis_or.ok()) return Unsupported(axis_or.status().message());
    const auto axis = static_cast<size_t>(*axis_or);
    const size_t end = x.size();

    // rows × cols with the softmax along cols, in the order `layout`.
    int64_t rows = 0, cols = 0;
    Layout layout = Layout::kPlain;
    if (legacy) {
      rows = Product(x, 0, axis);
      cols = Product(x, axis, end);
    } else if (Product(x, axis + 1, end) == 1) {
      rows = Product(x, 0, axis);
      cols = x.empty() ? 1 : x[axis];
    } else if (x.size() == 4 && axis == 1) {
      layout = Layout::kChannelsLast;  // N·H·W rows of C contiguous channels
      rows = x[0] * x[2] * x[3];
      cols = x[1];
    } else {
      return Unsupported("softmax along axis " + std::to_string(axis) + " of " + ShapeToString(x) +
                         ": oneDNN has only its reference kernel for an axis that is not innermost");
    }
    auto kernel = std::unique_ptr<SoftmaxKernel>(new SoftmaxKernel());
    kernel->layout_ = layout;
    const memory::desc md({rows, cols}, memory::data_type::f32, memory::format_tag::ab);
    const auto alg = node.op_type == "LogSoftmax" ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate;
    dnnl::softmax_v2_forward::primitive_desc pd;
    RETURN_IF_ERROR(Guard(node, "softmax", [&] {
      dnnl::softmax_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, md, md, 1);
      pd = dnnl::softmax_v2_forward::primitive_desc(desc, Engine());
    }));
    if (IsReferenceImpl(pd.impl_info_str())) return Unsupported("only oneDNN's reference softmax implementation");
    kernel->call_ = PrimitiveCall::SrcDst(dnnl::softmax_v2_forward(pd), md, md);
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    call_.Run(ctx.input(0)->raw_data(), ctx.output(0)->raw_data());
    return Status();
  }
  Layout InputLayout(size_t) const override { return layout_; }
  Layout OutputLayout(size_t) const override { return layout_; }

 private:
  SoftmaxKernel() = default;
  PrimitiveCall call_;
  Layout layout_ = Layout::kPlain;
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateSoftmaxF32(const KernelInit& init) { return SoftmaxKernel::Create(init); }

}  // namespace chipfit::cpu
