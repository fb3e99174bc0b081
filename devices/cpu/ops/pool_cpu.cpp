// MaxPool, AveragePool, GlobalMaxPool and GlobalAveragePool on oneDNN pooling_v2 (fp32): 2-D and 3-D
// windows (3-D in plain order), and 1-D ones as 2-D over an H = 1 view of the same bytes.
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
  Shape x, y;  // 1-D pools: the 2-D view with H = 1 ([N, C, 1, W]: the same bytes)
  bool one_d = false;
  bool three_d = false;
  memory::dims kernel, strides, dilates, pad_l, pad_r;
};

// 2-D windows as they are; 1-D ones ([N, C, W]) as 2-D ones over a view with H = 1 (one row, a
// window of one row, no stride, dilation or padding along it).
Result<PoolGeometry> ReadPoolGeometry(const KernelInit& init, PoolKind kind, bool global) {
  const Node& node = init.node;
  PoolGeometry g;
  const Shape& x = init.inputs[0]->shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank < 3 || rank > 5) {
    return Unsupported(std::to_string(rank - 2) +
                       "-D pooling: only 1-D, 2-D and 3-D windows (3-D to 5-D tensors) run on oneDNN here");
  }
  g.one_d = rank == 3;
  g.three_d = rank == 5;
  g.x = g.one_d ? Shape{x[0], x[1], 1, x[2]} : x;
  if (global) {
    g.y = {g.x[0], g.x[1]};
    for (size_t d = 2; d < g.x.size(); ++d) {
      g.y.push_back(1);
      g.kernel.push_back(g.x[d]);
      g.strides.push_back(1);
      g.dilates.push_back(0);
      g.pad_l.push_back(0);
      g.pad_r.push_back(0);
    }
    return g;
  }
  if (!node.Has("kernel_shape")) return InvalidArgument(node.Describe() + ": attribute kernel_shape is required");
  const bool ceil_mode = node.GetInt("ceil_mode", 0) != 0;
  ASSIGN_OR_RETURN(Window win, ReadWindow(node, Shape(x.begin() + 2, x.end()), node.GetInts("kernel_shape")));
  RETURN_IF_ERROR(ResolveForwardWindow(node, win, ceil_mode));
  const bool include_pad = kind == PoolKind::kAverage && node.GetInt("count_include_pad", 0) != 0;
  if (g.one_d) {
    g.y = {g.x[0], g.x[1], 1, win.out[0]};
    g.kernel = {1};
    g.strides = {1};
    g.dilates = {0};
    g.pad_l = {0};
    g.pad_r = {0};
  } else {
    g.y = {g.x[0], g.x[1]};
    g.y.insert(g.y.end(), win.out.begin(), win.out.end());
  }
  for (size_t i = 0; i < win.rank(); ++i) {
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
    // A 1-D pool reads and writes rank-3 tensors, which are only ever plain: its view is nchw; a 3-D
    // pool reads and writes rank-5 tensors, plain as well (ncdhw).
    const Layout in_layout = init.inputs[0]->layout;
    const Layout layout = geo.one_d || geo.three_d                ? Layout::kPlain
                          : in_layout == Layout::kBlocked8        ? Layout::kBlocked8
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
      std::vector<int64_t> dilations;
      for (size_t i = geo.one_d ? 1 : 0; i < geo.dilates.size(); ++i) dilations.push_back(geo.dilates[i] + 1);
      return Unsupported("only oneDNN's reference implementation for this pooling (dilations " + JoinInts(dilations) +
                         ")");
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
