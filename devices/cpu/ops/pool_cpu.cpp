// MaxPool, AveragePool, GlobalMaxPool and GlobalAveragePool on oneDNN pooling_v2 (2-D windows, fp32).
#include <string>
#include <unordered_map>

#include "core/reference/conv_util.h"
#include "devices/cpu/onednn_util.h"
#include "devices/cpu/ops/cpu_ops.h"

namespace chipfit::cpu {
namespace {

using dnnl::memory;
using dt = memory::data_type;

enum class PoolKind { kMax, kAverage };

struct PoolGeometry {
  Shape x, y;
  memory::dims kernel, strides, dilates, pad_l, pad_r;
};

Result<PoolGeometry> ReadPoolGeometry(const KernelInit& init, PoolKind kind, bool global) {
  const Node& node = init.node;
  PoolGeometry g;
  g.x = init.inputs[0]->shape;
  if (g.x.size() != 4) {
    return Unsupported(std::to_string(static_cast<int64_t>(g.x.size()) - 2) +
                       "-D pooling: only 2-D windows (4-D tensors) run on oneDNN here");
  }
  if (global) {
    g.y = {g.x[0], g.x[1], 1, 1};
    g.kernel = {g.x[2], g.x[3]};
    g.strides = {1, 1};
    g.dilates = {0, 0};
    g.pad_l = {0, 0};
    g.pad_r = {0, 0};
    return g;
  }
  if (!node.Has("kernel_shape")) return InvalidArgument(node.Describe() + ": attribute kernel_shape is required");
  const bool ceil_mode = node.GetInt("ceil_mode", 0) != 0;
  ASSIGN_OR_RETURN(Window win, ReadWindow(node, {g.x[2], g.x[3]}, node.GetInts("kernel_shape")));
  RETURN_IF_ERROR(ResolveForwardWindow(node, win, ceil_mode));
  const bool include_pad = kind == PoolKind::kAverage && node.GetInt("count_include_pad", 0) != 0;
  g.y = {g.x[0], g.x[1], win.out[0], win.out[1]};
  for (size_t i = 0; i < 2; ++i) {
    g.kernel.push_back(win.kernel[i]);
    g.strides.push_back(win.strides[i]);
    g.dilates.push_back(win.dilations[i] - 1);
    g.pad_l.push_back(win.pad_begin[i]);
    // oneDNN has no ceil mode: the end padding that makes its (floor) output size ONNX's. The
    // last window ends `reach` past the input; flooring may leave reach below the given padding,
    // or below zero, and any value in [reach, reach + stride) gives the same output size.
    const int64_t reach = (win.out[i] - 1) * win.strides[i] + win.Extent(i) - win.in[i] - win.pad_begin[i];
    if (include_pad && reach > win.pad_end[i]) {
      // ONNX counts explicit padding but not the ceil-mode overhang; oneDNN would count both.
      return Unsupported(
          "AveragePool with count_include_pad and ceil_mode: the last window reaches past the "
          "padding, which oneDNN would count in the divisor");
    }
    g.pad_r.push_back(std::max<int64_t>(reach, 0));
  }
  return g;
}

class PoolKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, PoolKind kind, bool global) {
    RETURN_IF_ERROR(RequireStaticF32(init, {0}));
    const Node& node = init.node;
    if (kind == PoolKind::kMax && node.outputs.size() > 1 && !node.outputs[1].empty()) {
      return Unsupported("MaxPool's Indices output (argmax positions) is not computed by oneDNN");
    }
    ASSIGN_OR_RETURN(PoolGeometry geo, ReadPoolGeometry(init, kind, global));
    dnnl::algorithm alg = dnnl::algorithm::pooling_max;
    if (kind == PoolKind::kAverage) {
      alg = !global && node.GetInt("count_include_pad", 0) != 0 ? dnnl::algorithm::pooling_avg_include_padding
                                                                : dnnl::algorithm::pooling_avg_exclude_padding;
    }
    // Channels-last is where oneDNN's JIT pooling runs; a global pool over a plain input reduces
    // contiguous planes, fast enough to skip a reorder of the (large) input.
    // A blocked (nChw8c) input from a convolution is pooled in place, in that order.
    const Layout in_layout = init.inputs[0]->layout;
    const Layout layout = in_layout == Layout::kBlocked8          ? Layout::kBlocked8
                          : global && in_layout == Layout::kPlain ? Layout::kPlain
                                                                  : Layout::kChannelsLast;
    const memory::desc src_md = Describe(geo.x, dt::f32, layout);
    const memory::desc dst_md = Describe(geo.y, dt::f32, layout);
    dnnl::pooling_v2_forward::primitive_desc pd;
    RETURN_IF_ERROR(Guard(node, "pooling", [&] {
      dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, src_md, dst_md, geo.strides,
                                          geo.kernel, geo.dilates, geo.pad_l, geo.pad_r);
      pd = dnnl::pooling_v2_forward::primitive_desc(desc, Engine());
    }));
    if (IsReferenceImpl(pd.impl_info_str())) {
      return Unsupported("only oneDNN's reference implementation for this pooling (dilations " +
                         JoinInts({geo.dilates[0] + 1, geo.dilates[1] + 1}) + ")");
    }
    auto kernel = std::unique_ptr<PoolKernel>(new PoolKernel());
    kernel->layout_ = layout;
    kernel->pool_ = PrimitiveCall::SrcDst(dnnl::pooling_v2_forward(pd), pd.src_desc(), pd.dst_desc());
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    pool_.Run(ctx.input(0)->raw_data(), ctx.output(0)->raw_data());
    return Status();
  }
  Layout InputLayout(size_t /*input*/) const override { return layout_; }
  Layout OutputLayout(size_t /*output*/) const override { return layout_; }

 private:
  PoolKernel() = default;
  PrimitiveCall pool_;
  Layout layout_ = Layout::kChannelsLast;
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateMaxPoolF32(const KernelInit& init) {
  return PoolKernel::Create(init, PoolKind::kMax, false);
}
Result<std::unique_ptr<IKernel>> CreateAveragePoolF32(const KernelInit& init) {
  return PoolKernel::Create(init, PoolKind::kAverage, false);
}
Result<std::unique_ptr<IKernel>> CreateGlobalMaxPoolF32(const KernelInit& init) {
  return PoolKernel::Create(init, PoolKind::kMax, true);
}
Result<std::unique_ptr<IKernel>> CreateGlobalAveragePoolF32(const KernelInit& init) {
  return PoolKernel::Create(init, PoolKind::kAverage, true);
}

}  // namespace chipfit::cpu
