// Conv and FusedConv (Conv + Z + activation) on oneDNN: fp32; int8 with calibrated activation
// scales and per-channel weight scales; bf16 inputs and weights with f32 accumulation and output. Activations stay
// channels-last between convolutions. 1-D convolutions run as 2-D ones over an H = 1 view (plain order).
#include "devices/cpu/ops/cpu_ops.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "core/reference/conv_util.h"
#include "devices/cpu/onednn_util.h"

namespace chipfit::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

struct ConvGeometry {
  Shape x, w, y;  // 1-D convolutions: the 2-D view with H = 1 ([N, C, 1, W]: the same bytes)
  Shape y_shape;  // the output's ONNX shape (rank 3 for a 1-D convolution)
  bool one_d = false;
  bool three_d = false;  // [N, C, D, H, W]: plain order on both sides, fp32 only
  int64_t groups = 1;
  memory::dims strides, dilates, pad_l, pad_r;
};

// 2-D convolutions as they are; 1-D ones ([N, C, W] with weights [M, C/group, kW]) as 2-D ones over
// a view with H = 1, which holds the same bytes in plain order.
Result<ConvGeometry> ReadGeometry(const KernelInit& init) {
  const Node& node = init.node;
  ConvGeometry g;
  const Shape& x = init.inputs[0]->shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank < 3 || rank > 5) {
    return Unsupported(std::to_string(rank - 2) + "-D convolution: only 1-D, 2-D and 3-D run on oneDNN here");
  }
  g.one_d = rank == 3;
  g.three_d = rank == 5;
  const ValueInfo* w = init.inputs.size() > 1 ? init.inputs[1] : nullptr;
  if (w == nullptr) return Unsupported("weights are missing");
  if (w->dtype != DType::kF32 || static_cast<int64_t>(w->shape.size()) != rank) {
    return Unsupported("weights are not f32 of rank " + std::to_string(rank));
  }
  for (int64_t d : w->shape) {
    if (d < 0) return Unsupported("weight shape known only at run time");
  }
  g.x = g.one_d ? Shape{x[0], x[1], 1, x[2]} : x;
  g.w = g.one_d ? Shape{w->shape[0], w->shape[1], 1, w->shape[2]} : w->shape;
  g.groups = node.GetInt("group", 1);
  if (g.groups < 1 || g.x[1] % g.groups != 0 || g.w[0] % g.groups != 0 || g.x[1] / g.groups != g.w[1]) {
    return Unsupported("channels do not match the group count");
  }
  const Shape spatial(x.begin() + 2, x.end());
  const std::vector<int64_t> kernel(w->shape.begin() + 2, w->shape.end());
  ASSIGN_OR_RETURN(Window win, ReadWindow(node, spatial, kernel));
  RETURN_IF_ERROR(ResolveForwardWindow(node, win, false));
  if (g.one_d) {
    // The added H dim: one row, a kernel of one tap, no stride, dilation or padding.
    g.y = {g.x[0], g.w[0], 1, win.out[0]};
    g.y_shape = {g.x[0], g.w[0], win.out[0]};
    g.strides = {1, win.strides[0]};
    g.dilates = {0, win.dilations[0] - 1};
    g.pad_l = {0, win.pad_begin[0]};
    g.pad_r = {0, win.pad_end[0]};
    return g;
  }
  g.y = {g.x[0], g.w[0]};
  for (size_t d = 0; d < spatial.size(); ++d) {
    g.y.push_back(win.out[d]);
    g.strides.push_back(win.strides[d]);
    g.dilates.push_back(win.dilations[d] - 1);
    g.pad_l.push_back(win.pad_begin[d]);
    g.pad_r.push_back(win.pad_end[d]);
  }
  g.y_shape = g.y;
  return g;
}

// Weights as oneDNN sees them: oi(d)hw, or goi(d)hw for grouped convolutions (same bytes as ONNX's).
memory::dims WeightDims(const ConvGeometry& g) {
  if (g.groups == 1) return ToDims(g.w);
  memory::dims dims = {g.groups, g.w[0] / g.groups};
  dims.insert(dims.end(), g.w.begin() + 1, g.w.end());
  return dims;
}

memory::format_tag UserWeightTag(const ConvGeometry& g) {
  if (g.three_d) return g.groups == 1 ? tag::oidhw : tag::goidhw;
  return g.groups == 1 ? tag::oihw : tag::goihw;
}

// A Conv/FusedConv's post-ops for an output in order `dst_layout`: the residual Z (a binary add in that order)
// when it has one, then its activation, clamp and linear steps.
Result<dnnl::post_ops> ConvPostOps(const Node& node, const ConvGeometry& geo, bool has_z, Layout dst_layout) {
  dnnl::post_ops ops;
  if (has_z) ops.append_binary(dnnl::algorithm::binary_add, Describe(geo.y, dt::f32, dst_layout));
  EltwiseChain chain;
  RETURN_IF_ERROR(chain.AddActivation(node.GetString("activation", ""), node.GetFloats("activation_params")));
  if (node.Has("clamp_min") || node.Has("clamp_max")) {
    chain.AddClip(node.GetFloat("clamp_min", -std::numeric_limits<float>::max()),
                  node.GetFloat("clamp_max", std::numeric_limits<float>::max()));
  }
  if (node.Has("post_scale") || node.Has("post_shift")) {
    chain.AddLinear(node.GetFloat("post_scale", 1.0f), node.GetFloat("post_shift", 0.0f));
  }
  chain.AppendTo(ops);
  return ops;
}

enum class ConvMode { kF32, kInt8, kBf16 };

class ConvKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, ConvMode mode, bool allow_reference) {
    const bool int8 = mode == ConvMode::kInt8;
    const bool bf16 = mode == ConvMode::kBf16;
    // Both convert the f32 input before the convolution: int8 quantises, bf16 rounds.
    const bool convert_input = int8 || bf16;
    RETURN_IF_ERROR(RequireStaticF32(init, {0}));
    ASSIGN_OR_RETURN(ConvGeometry geo, ReadGeometry(init));
    if (geo.three_d && convert_input) return Unsupported("3-D convolution runs in fp32 here");
    const Node& node = init.node;
    auto kernel = std::unique_ptr<ConvKernel>(new ConvKernel());
    const ValueInfo* bias = init.inputs.size() > 2 ? init.inputs[2] : nullptr;
    const bool runtime_weights = init.inputs[1]->value == nullptr;
    if (runtime_weights && convert_input) {
      return Unsupported(std::string(int8 ? "int8" : "bf16") +
                         " needs constant weights (they are computed at run time)");
    }
    if (bias != nullptr &&
        (bias->dtype != DType::kF32 || bias->shape != Shape{geo.w[0]} || (int8 && bias->value == nullptr))) {
      return Unsupported("bias is not an f32 vector of " + std::to_string(geo.w[0]) +
                         (int8 ? " known at compile time" : ""));
    }
    const ValueInfo* z = init.inputs.size() > 3 ? init.inputs[3] : nullptr;
    if (z != nullptr) {
      RETURN_IF_ERROR(RequireStaticF32(init, {3}));
      if (z->shape != geo.y_shape) {
        return Unsupported("the added input Z broadcasts (" + ShapeToString(z->shape) + ")");
      }
      kernel->has_z_ = true;
    }
    const ValueInfo* x = init.inputs[0];

    std::vector<ActivationQuant> quant_options = {ActivationQuant{}};
    std::vector<float> w_scales;
    if (int8) {
      if (init.quant == nullptr) return Unsupported("no calibration ranges");
      auto it = init.quant->find(node.inputs[0]);
      if (it == init.quant->end()) return Unsupported("no calibrated range for input '" + node.inputs[0] + "'");
      quant_options = {ChooseActivationQuant(it->second)};
      if (it->second.min < 0.0f) quant_options.insert(quant_options.begin(), AsymmetricU8(it->second));
      // Without VNNI, 7-bit weights keep oneDNN's pairwise 16-bit sums from saturating.
      const float w_max = HasVnni() ? 127.0f : 63.0f;
      const Tensor& w = *init.inputs[1]->value;  // int8 refused runtime weights above
      const int64_t per = w.numel() / geo.w[0];
      for (int64_t m = 0; m < geo.w[0]; ++m) {
        float amax = 0.0f;
        for (int64_t k = 0; k < per; ++k) amax = std::max(amax, std::fabs(w.data<float>()[m * per + k]));
        w_scales.push_back(amax > 0.0f ? amax / w_max : 1.0f);
      }
    }

    // Output order: channels-last, except for 1-D-shaped kernels (kx1 or 1xk, k > 1) with channels
    // in multiples of 8 on AVX2. oneDNN 2.6 runs kx1 about twice as fast on nChw8c (measured on
    // openWakeWord's 3x1 convs: 48 ch 36x16 130 → 71 µs, 72 ch 30x8 137 → 71 µs) and 1xk equally
    // fast; it has no fast kernel from an nhwc source to an nChw8c destination, so the 1xk convs
    // that feed the kx1 ones switch to nChw8c too. Models of square kernels keep channels-last,
    // which every other CPU kernel reads without a reorder.
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    // A 1-D convolution reads and writes rank-3 tensors, which are only ever plain: its view is
    // nchw on both sides (int8 and bf16 convert the input into their own buffer, in any order).
    std::vector<Layout> dst_layouts = {geo.one_d || geo.three_d ? Layout::kPlain : Layout::kChannelsLast};
    if (!geo.one_d && !geo.three_d && !convert_input && (isa & avx512) != avx512 && geo.w[0] % 8 == 0 &&
        (geo.w[2] > 1) != (geo.w[3] > 1)) {
      dst_layouts.insert(dst_layouts.begin(), Layout::kBlocked8);
    }

    // Source order: what the producer wrote when oneDNN has a fast kernel for it; small-channel
    // plain inputs (the first layer) have one, other plain inputs are reordered to channels-last.
    std::vector<Layout> candidates;
    if ((geo.one_d || geo.three_d) && !convert_input) {
      candidates = {Layout::kPlain};
    } else if (convert_input || x->layout == Layout::kChannelsLast) {
      candidates = {Layout::kChannelsLast};
    } else if (x->layout == Layout::kBlocked8) {
      candidates = {Layout::kBlocked8, Layout::kChannelsLast};
    } else {
      if (geo.x[1] <= 4) candidates.push_back(Layout::kPlain);
      candidates.push_back(Layout::kChannelsLast);
    }
    const memory::desc w_any(WeightDims(geo), int8 ? dt::s8 : (bf16 ? dt::bf16 : dt::f32), tag::any);
    const memory::desc b_md = bias ? memory::desc({geo.w[0]}, dt::f32, tag::a) : memory::desc();
    std::string refusals;
    dnnl::convolution_forward::primitive_desc pd;
    bool found = false;
    ActivationQuant aq;
    std::vector<float> out_scales;
    for (Layout dst_layout : dst_layouts) {
      const memory::desc dst_md = Describe(geo.y, dt::f32, dst_layout);
      ASSIGN_OR_RETURN(const dnnl::post_ops ops, ConvPostOps(node, geo, kernel->has_z_, dst_layout));
      for (const ActivationQuant& option : quant_options) {
        aq = option;
        dnnl::primitive_attr attr;
        attr.set_post_ops(ops);
        out_scales.clear();
        if (int8) {
          for (float s : w_scales) out_scales.push_back(aq.scale * s);
          attr.set_output_scales(1 << 1, out_scales);
          if (aq.zero_point != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {aq.zero_point});
        }
        const dt src_type = int8 ? aq.type : (bf16 ? dt::bf16 : dt::f32);
        // oneDNN's JIT kernels want the source in the destination's blocked order.
        const std::vector<Layout> sources =
            dst_layout == Layout::kBlocked8 && geo.x[1] % 8 == 0 ? std::vector<Layout>{Layout::kBlocked8} : candidates;
        for (Layout layout : sources) {
          const memory::desc src_md = Describe(geo.x, src_type, layout);
          Status status = Guard(node, "convolution", [&] {
            dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                                 dnnl::algorithm::convolution_direct, src_md, w_any, b_md, dst_md,
                                                 geo.strides, geo.dilates, geo.pad_l, geo.pad_r);
            pd = dnnl::convolution_forward::primitive_desc(desc, attr, Engine());
          });
          const std::string impl = status.ok() ? pd.impl_info_str() : "";
          if (status.ok() && (allow_reference || !IsReferenceImpl(impl))) {
            kernel->src_layout_ = layout;
            kernel->dst_layout_ = dst_layout;
            found = true;
            break;
          }
          refusals += (refusals.empty() ? "" : "; ") + std::string(LayoutName(layout)) +
                      (aq.zero_point != 0 ? " with a u8 zero point" : "") + ": " +
                      (status.ok() ? "only oneDNN's reference implementation" : status.message());
        }
        if (found) break;
      }
      if (found) break;
    }
    if (!found) return Unsupported(refusals);
    kernel->impl_ = pd.impl_info_str();

    // Weights: reordered (and for int8 quantised per output channel) once, into oneDNN's layout;
    // weights computed at run time are reordered before every run.
    Status status = Guard(node, "weight reorder", [&] {
      const memory::desc user_md(WeightDims(geo), dt::f32, UserWeightTag(geo));
      kernel->weights_ = memory(pd.weights_desc(), Engine());
      if (runtime_weights) {
        kernel->weight_reorder_ = PrimitiveCall::ReorderInto(user_md, kernel->weights_);
        kernel->runtime_weights_ = true;
        return;
      }
      const Tensor& w = *init.inputs[1]->value;
      memory user(user_md, Engine(), const_cast<void*>(w.raw_data()));
      dnnl::primitive_attr reorder_attr;
      if (int8) {
        std::vector<float> inv;
        for (float s : w_scales) inv.push_back(1.0f / s);
        reorder_attr.set_output_scales(geo.groups == 1 ? 1 : 3, inv);
      }
      dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), user_md, Engine(), pd.weights_desc(), reorder_attr))
          .execute(Stream(), user, kernel->weights_);
      Stream().wait();
    });
    RETURN_IF_ERROR(status);

    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] = memory(pd.src_desc(), Engine(), DNNL_MEMORY_NONE);
    args[DNNL_ARG_WEIGHTS] = kernel->weights_;
    args[DNNL_ARG_DST] = memory(pd.dst_desc(), Engine(), DNNL_MEMORY_NONE);
    if (bias && bias->value == nullptr) {
      args[DNNL_ARG_BIAS] = memory(b_md, Engine(), DNNL_MEMORY_NONE);
      kernel->runtime_bias_ = true;
    } else if (bias) {
      kernel->bias_ = memory(b_md, Engine());
      auto* b = static_cast<float*>(kernel->bias_.get_data_handle());
      std::memcpy(b, bias->value->raw_data(), bias->value->nbytes());
      // oneDNN 2.x int8: dst = output_scale · (Σ src·wei + bias), so the bias goes in unscaled units.
      for (size_t m = 0; m < out_scales.size(); ++m) b[m] /= out_scales[m];
      args[DNNL_ARG_BIAS] = kernel->bias_;
    }
    if (kernel->has_z_) {
      args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] =
          memory(Describe(geo.y, dt::f32, kernel->dst_layout_), Engine(), DNNL_MEMORY_NONE);
    }
    kernel->conv_ = PrimitiveCall(dnnl::convolution_forward(pd), std::move(args));

    if (convert_input) {
      // Quantise (int8) or round (bf16) the f32 input, whatever its order, into channels-last
      // before each run.
      const memory::desc f32_md = Describe(geo.x, dt::f32, x->layout);
      dnnl::primitive_attr q_attr;
      if (int8) q_attr.set_output_scales(0, {1.0f / aq.scale});
      if (aq.zero_point != 0) q_attr.set_zero_points(DNNL_ARG_DST, 0, {aq.zero_point});
      kernel->quantized_.resize(static_cast<size_t>(NumElements(geo.x)) * (bf16 ? 2 : 1) + 64);
      status = Guard(node, "input quantisation", [&] {
        dnnl::reorder::primitive_desc rpd(Engine(), f32_md, Engine(), pd.src_desc(), q_attr);
        std::unordered_map<int, memory> q_args;
        q_args[DNNL_ARG_FROM] = memory(f32_md, Engine(), DNNL_MEMORY_NONE);
        q_args[DNNL_ARG_TO] = memory(pd.src_desc(), Engine(), kernel->quantized_.data());
        kernel->quantize_ = PrimitiveCall(dnnl::reorder(rpd), std::move(q_args));
      });
      RETURN_IF_ERROR(status);
      kernel->src_layout_ = x->layout;
      kernel->convert_input_ = true;
    }
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    if (convert_input_) {
      quantize_.SetHandle(DNNL_ARG_FROM, ctx.input(0)->raw_data());
      quantize_.Execute();
      conv_.SetHandle(DNNL_ARG_SRC, quantized_.data());
    } else {
      conv_.SetHandle(DNNL_ARG_SRC, ctx.input(0)->raw_data());
    }
    if (runtime_weights_) {
      weight_reorder_.Refill(ctx.input(1)->raw_data());
    }
    if (runtime_bias_) conv_.SetHandle(DNNL_ARG_BIAS, ctx.input(2)->raw_data());
    conv_.SetHandle(DNNL_ARG_DST, ctx.output(0)->raw_data());
    if (has_z_) conv_.SetHandle(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, ctx.input(3)->raw_data());
    conv_.Execute();
    return Status();
  }
  Layout InputLayout(size_t i) const override {
    if (i == 0) return src_layout_;
    return i == 3 ? dst_layout_ : Layout::kPlain;
  }
  Layout OutputLayout(size_t) const override { return dst_layout_; }

 private:
  ConvKernel() = default;

 public:
  std::string Isa() const override { return conv_.Impl(); }

 private:
  PrimitiveCall conv_;
  PrimitiveCall quantize_;
  PrimitiveCall weight_reorder_;
  memory weights_;
  memory bias_;
  std::vector<uint8_t> quantized_;
  Layout src_layout_ = Layout::kChannelsLast;
  Layout dst_layout_ = Layout::kChannelsLast;
  bool has_z_ = false;
  bool convert_input_ = false;
  bool runtime_weights_ = false;
  bool runtime_bias_ = false;
  std::string impl_;
};

// The fastest of `runs` timed calls after one untimed one, in ms.
double FastestMs(const std::function<void()>& call, int runs) {
  call();
  double best = std::numeric_limits<double>::max();
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    call();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// A 3x3, stride-1 fp32 convolution through oneDNN's Winograd kernels (F(2x2,3x3) and F(4x4,3x3) on AVX-512), which
// need 2.25-4x fewer multiplications than the direct convolution. oneDNN runs them only in its blocked order
// (nChw16c), so the kernel reorders its input into a buffer of its own and its output back into channels-last.
// Winograd rounds differently from the direct sum (measured: max |difference| 1e-6 to 2.5e-6 of max |y| on
// 3x3 layers of 64-512 channels), so it is taken only where it pays: at compile time the kernel times itself,
// reorders included, against the direct convolution on the same shapes, and refuses unless it is clearly faster.
// (2-core AMD EPYC Zen 4, oneDNN 2.6.3 avx512_core, with ReLU: 64 ch 56x56 1.03 -> 0.62 ms, 128 ch 28x28 0.96 ->
// 0.36, 256 ch 14x14 0.98 -> 0.51, 512 ch 7x7 1.19 -> 0.64; 16 ch 112x112 0.25 -> 0.26, no gain.)
class WinogradConvKernel final : public IKernel {
 public:
  // Winograd must beat the direct convolution's time by this factor to be chosen, so that timing noise does not
  // flip the choice (and the rounding) between compiles of the same model.
  static constexpr double kMustBeFasterBy = 0.85;
  static constexpr int kTimedRuns = 5;

  // `must_be_faster_by`: the largest ratio of its time to the direct convolution's at which it is taken.
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, const ConvGeometry& geo,
                                                 double must_be_faster_by) {
    const Node& node = init.node;
    const ValueInfo* x = init.inputs[0];
    const ValueInfo* w = init.inputs[1];
    const ValueInfo* bias = init.inputs.size() > 2 ? init.inputs[2] : nullptr;
    if (geo.one_d || geo.three_d || geo.groups != 1) return Unsupported("Winograd: 2-D ungrouped convolutions only");
    if (geo.w[2] != 3 || geo.w[3] != 3 || geo.strides != memory::dims{1, 1} || geo.dilates != memory::dims{0, 0}) {
      return Unsupported("Winograd: 3x3 kernels of stride 1 without dilation only");
    }
    if (geo.x[1] < 16 || geo.w[0] < 16) return Unsupported("Winograd: fewer than 16 channels do not pay");
    if (w->value == nullptr || (bias != nullptr && bias->value == nullptr)) {
      return Unsupported("Winograd: weights and bias must be known at compile time");
    }
    if (init.inputs.size() > 3 && init.inputs[3] != nullptr) return Unsupported("Winograd: no residual input Z");
    if (x->layout != Layout::kPlain && x->layout != Layout::kChannelsLast) {
      return Unsupported("Winograd: input in plain or channels-last order only");
    }
    auto kernel = std::unique_ptr<WinogradConvKernel>(new WinogradConvKernel());
    kernel->src_layout_ = x->layout;
    const memory::desc b_md = bias ? memory::desc({geo.w[0]}, dt::f32, tag::a) : memory::desc();
    const memory::desc w_any(WeightDims(geo), dt::f32, tag::any);
    const memory::desc x_user = Describe(geo.x, dt::f32, x->layout);
    const memory::desc y_user = Describe(geo.y, dt::f32, Layout::kChannelsLast);
    ASSIGN_OR_RETURN(const dnnl::post_ops ops, ConvPostOps(node, geo, false, Layout::kChannelsLast));
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    auto describe = [&](dnnl::algorithm algorithm, const memory::desc& src, const memory::desc& dst) {
      return dnnl::convolution_forward::primitive_desc(
          dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, algorithm, src, w_any, b_md, dst,
                                          geo.strides, geo.dilates, geo.pad_l, geo.pad_r),
          attr, Engine());
    };
    dnnl::convolution_forward::primitive_desc wino;
    RETURN_IF_ERROR(Guard(node, "Winograd convolution", [&] {
      wino = describe(dnnl::algorithm::convolution_winograd, memory::desc(geo.x, dt::f32, tag::any),
                      memory::desc(geo.y, dt::f32, tag::any));
    }));
    if (IsReferenceImpl(wino.impl_info_str())) return Unsupported("Winograd: only oneDNN's reference implementation");

    // Weights reordered once, into the primitive's order.
    const memory::desc w_user(WeightDims(geo), dt::f32, UserWeightTag(geo));
    memory user_w(w_user, Engine(), const_cast<void*>(w->value->raw_data()));
    RETURN_IF_ERROR(Guard(node, "weight reorder", [&] {
      kernel->weights_ = memory(wino.weights_desc(), Engine());
      dnnl::reorder(user_w, kernel->weights_).execute(Stream(), user_w, kernel->weights_);
      Stream().wait();
      if (bias) {
        kernel->bias_ = memory(b_md, Engine());
        std::memcpy(kernel->bias_.get_data_handle(), bias->value->raw_data(), bias->value->nbytes());
      }
      kernel->src_ = memory(wino.src_desc(), Engine());
      kernel->dst_ = memory(wino.dst_desc(), Engine());
      kernel->to_blocked_ =
          PrimitiveCall(dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), x_user, Engine(), wino.src_desc())),
                        {{DNNL_ARG_FROM, memory(x_user, Engine(), DNNL_MEMORY_NONE)}, {DNNL_ARG_TO, kernel->src_}});
      kernel->from_blocked_ =
          PrimitiveCall(dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), wino.dst_desc(), Engine(), y_user)),
                        {{DNNL_ARG_FROM, kernel->dst_}, {DNNL_ARG_TO, memory(y_user, Engine(), DNNL_MEMORY_NONE)}});
      std::unordered_map<int, memory> args = {
          {DNNL_ARG_SRC, kernel->src_}, {DNNL_ARG_WEIGHTS, kernel->weights_}, {DNNL_ARG_DST, kernel->dst_}};
      if (bias) args[DNNL_ARG_BIAS] = kernel->bias_;
      kernel->conv_ = PrimitiveCall(dnnl::convolution_forward(wino), std::move(args));
    }));

    if (std::isinf(must_be_faster_by)) return std::unique_ptr<IKernel>(std::move(kernel));  // taken untimed

    // Both on zeros of the layer's shapes (fp32 takes the same time on any values): Winograd with its reorders
    // against the direct convolution from and to channels-last, as the direct kernel would run.
    std::vector<float> x_data(static_cast<size_t>(NumElements(geo.x))), y_data(static_cast<size_t>(NumElements(geo.y)));
    double direct_ms = 0, wino_ms = 0;
    RETURN_IF_ERROR(Guard(node, "timing Winograd against the direct convolution", [&] {
      const auto direct =
          describe(dnnl::algorithm::convolution_direct, Describe(geo.x, dt::f32, Layout::kChannelsLast), y_user);
      memory direct_w(direct.weights_desc(), Engine());
      dnnl::reorder(user_w, direct_w).execute(Stream(), user_w, direct_w);
      Stream().wait();
      std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, memory(direct.src_desc(), Engine(), x_data.data())},
                                              {DNNL_ARG_WEIGHTS, direct_w},
                                              {DNNL_ARG_DST, memory(direct.dst_desc(), Engine(), y_data.data())}};
      if (bias) args[DNNL_ARG_BIAS] = kernel->bias_;
      PrimitiveCall direct_call(dnnl::convolution_forward(direct), std::move(args));
      direct_ms = FastestMs([&] { direct_call.Execute(); }, kTimedRuns);
      wino_ms = FastestMs([&] { kernel->Compute(x_data.data(), y_data.data()); }, kTimedRuns);
    }));
    if (wino_ms >= must_be_faster_by * direct_ms) {
      return Unsupported("Winograd measured no faster here (" + std::to_string(wino_ms) + " ms vs direct " +
                         std::to_string(direct_ms) + " ms)");
    }
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    Compute(ctx.input(0)->raw_data(), ctx.output(0)->raw_data());
    return Status();
  }
  Layout InputLayout(size_t i) const override { return i == 0 ? src_layout_ : Layout::kPlain; }
  Layout OutputLayout(size_t) const override { return Layout::kChannelsLast; }
  std::string Isa() const override { return conv_.Impl(); }

 private:
  WinogradConvKernel() = default;

  void Compute(const void* x, void* y) {
    to_blocked_.SetHandle(DNNL_ARG_FROM, x);
    to_blocked_.Execute();
    conv_.Execute();
    from_blocked_.SetHandle(DNNL_ARG_TO, y);
    from_blocked_.Execute();
  }

  PrimitiveCall to_blocked_, conv_, from_blocked_;
  memory weights_, bias_, src_, dst_;
  Layout src_layout_ = Layout::kChannelsLast;
};

Result<std::unique_ptr<IKernel>> CreateWinograd(const KernelInit& init, double must_be_faster_by) {
  if (init.inputs.size() < 2 || init.inputs[0] == nullptr || init.inputs[1] == nullptr) {
    return Unsupported("Winograd: input or weights missing");
  }
  RETURN_IF_ERROR(RequireStaticF32(init, {0}));
  ASSIGN_OR_RETURN(const ConvGeometry geo, ReadGeometry(init));
  return WinogradConvKernel::Create(init, geo, must_be_faster_by);
}

}  // namespace

Result<std::unique_ptr<IKernel>> CreateConvF32(const KernelInit& init) {
  // 3x3 stride-1 layers take Winograd where it measures faster; every other case, and every refusal, runs direct.
  if (auto wino = CreateWinograd(init, WinogradConvKernel::kMustBeFasterBy); wino.ok()) return wino;
  return ConvKernel::Create(init, ConvMode::kF32, false);
}
Result<std::unique_ptr<IKernel>> CreateConvWinogradForTest(const KernelInit& init) {
  return CreateWinograd(init, std::numeric_limits<double>::infinity());
}
Result<std::unique_ptr<IKernel>> CreateConvInt8(const KernelInit& init) {
  return ConvKernel::Create(init, ConvMode::kInt8, false);
}
Result<std::unique_ptr<IKernel>> CreateConvBf16(const KernelInit& init) {
  return ConvKernel::Create(init, ConvMode::kBf16, false);
}
Result<std::unique_ptr<IKernel>> CreateConvBf16ForTest(const KernelInit& init) {
  return ConvKernel::Create(init, ConvMode::kBf16, true);
}

}  // namespace chipfit::cpu
