// ConvTranspose on oneDNN deconvolution (2-D, groups), channels-last in and out: fp32 (weights constant or
// computed at run time), and int8 with the calibrated input range (quantised before each run, as the int8
// convolutions do) and constant weights quantised per output channel; the output is f32 either way.
// 1-D ones (audio decoders, vocoders) run as 2-D over an H = 1 view of the same bytes, in plain order:
// rank-3 tensors are only ever plain; 3-D ones (volumetric decoders) in plain order too, fp32 only.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/reference/conv_util.h"
#include "devices/cpu/onednn_util.h"
#include "devices/cpu/ops/cpu_ops.h"

namespace chipfit::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

struct DeconvGeometry {
  Shape x, w, y;  // 1-D: the 2-D views with H = 1 ([N, C, 1, W]: the same bytes)
  bool one_d = false, three_d = false;
  int64_t groups = 1;
  memory::dims strides, dilates, pad_l, pad_r;
};

// Output size and leading padding by the reference's rule (core/reference/conv.cpp): output_shape or
// SAME fixes the output and the total padding follows (clamped at 0, odd pad at the end for
// SAME_UPPER); otherwise the explicit pads and output_padding give the output.
Status ResolveTransposed(const Node& node, Window& w) {
  const size_t n = w.in.size();
  const std::vector<int64_t> output_padding = node.GetInts("output_padding", std::vector<int64_t>(n, 0));
  std::vector<int64_t> output_shape = node.GetInts("output_shape");
  const std::string count = std::to_string(n) + (n == 1 ? " entry" : " entries");
  if (output_padding.size() != n ||
      std::any_of(output_padding.begin(), output_padding.end(), [](int64_t v) { return v < 0; })) {
    return InvalidArgument(node.Describe() + ": output_padding " + JoinInts(output_padding) + " must have " + count +
                           ", none negative");
  }
  if (output_shape.size() == n + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != n) {
    return InvalidArgument(node.Describe() + ": output_shape " + JoinInts(output_shape) + " must have " + count);
  }
  const bool same = w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER";
  w.out.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const int64_t full = w.strides[i] * (w.in[i] - 1) + output_padding[i] + w.Extent(i);
    if (!output_shape.empty() || same) {
      w.out[i] = !output_shape.empty() ? output_shape[i] : w.in[i] * w.strides[i];
      const int64_t total = std::max<int64_t>(0, full - w.out[i]);
      w.pad_begin[i] = w.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[i] = total - w.pad_begin[i];
    } else {
      w.out[i] = full - w.pad_begin[i] - w.pad_end[i];
    }
    if (w.out[i] <= 0) {
      return InvalidArgument(node.Describe() + ": output spatial dim " + std::to_string(i) + " would be " +
                             std::to_string(w.out[i]));
    }
  }
  return Status();
}

Result<DeconvGeometry> ReadGeometry(const KernelInit& init) {
  const Node& node = init.node;
  DeconvGeometry g;
  const Shape& x = init.inputs[0]->shape;
  if (x.size() < 3 || x.size() > 5) {
    return Unsupported(std::to_string(static_cast<int64_t>(x.size()) - 2) +
                       "-D ConvTranspose: only 1-D, 2-D and 3-D run on oneDNN here");
  }
  g.one_d = x.size() == 3;
  g.three_d = x.size() == 5;
  const ValueInfo* w = init.inputs.size() > 1 ? init.inputs[1] : nullptr;
  if (w == nullptr) return Unsupported("weights are missing");
  if (w->dtype != DType::kF32 || w->shape.size() != x.size()) {
    return Unsupported("weights are not f32 of rank " + std::to_string(x.size()));
  }
  for (int64_t d : w->shape) {
    if (d < 0) return Unsupported("weight shape known only at run time");
  }
  g.x = g.one_d ? Shape{x[0], x[1], 1, x[2]} : x;
  g.w = g.one_d ? Shape{w->shape[0], w->shape[1], 1, w->shape[2]} : w->shape;
  g.groups = node.GetInt("group", 1);
  if (g.groups < 1 || g.x[1] != g.w[0] || g.x[1] % g.groups != 0) {
    return Unsupported("channels do not match the weights and group count");
  }
  const Shape spatial(x.begin() + 2, x.end());
  const std::vector<int64_t> kernel(w->shape.begin() + 2, w->shape.end());
  if (node.Has("kernel_shape") && node.GetInts("kernel_shape") != kernel) {
    return InvalidArgument(node.Describe() + ": kernel_shape " + JoinInts(node.GetInts("kernel_shape")) +
                           " disagrees with W " + ShapeToString(w->shape));
  }
  ASSIGN_OR_RETURN(Window win, ReadWindow(node, spatial, kernel));
  RETURN_IF_ERROR(ResolveTransposed(node, win));
  if (g.one_d) {
    // The added H dim: one row, a kernel of one tap, no stride, dilation or padding.
    g.y = {g.x[0], g.w[1] * g.groups, 1, win.out[0]};
    g.strides = {1, win.strides[0]};
    g.dilates = {0, win.dilations[0] - 1};
    g.pad_l = {0, win.pad_begin[0]};
    g.pad_r = {0, win.strides[0] * (win.in[0] - 1) + win.Extent(0) - win.pad_begin[0] - win.out[0]};
    return g;
  }
  g.y = {g.x[0], g.w[1] * g.groups};
  for (size_t i = 0; i < spatial.size(); ++i) {
    g.y.push_back(win.out[i]);
    g.strides.push_back(win.strides[i]);
    g.dilates.push_back(win.dilations[i] - 1);
    g.pad_l.push_back(win.pad_begin[i]);
    // oneDNN's output is stride·(in − 1) + extent − pad_l − pad_r: output_padding and a larger
    // output_shape make pad_r negative, which leaves the extra rows at the bias, as ONNX does.
    g.pad_r.push_back(win.strides[i] * (win.in[i] - 1) + win.Extent(i) - win.pad_begin[i] - win.out[i]);
  }
  return g;
}

// oneDNN deconvolution weights are {OC, IC, kh, kw} (grouped: {G, OC/G, IC/G, kh, kw}); ONNX's
// [IC, OC/G, kh, kw] bytes are the iohw (giohw) order of those dims.
memory::desc UserWeights(const DeconvGeometry& g) {
  memory::dims dims = {g.w[1], g.w[0]};
  if (g.groups > 1) dims = {g.groups, g.w[1], g.w[0] / g.groups};
  dims.insert(dims.end(), g.w.begin() + 2, g.w.end());
  if (g.three_d) return {dims, dt::f32, g.groups == 1 ? tag::iodhw : tag::giodhw};
  return {dims, dt::f32, g.groups == 1 ? tag::iohw : tag::giohw};
}

// int8 weights: per output channel m, the largest |w| over its group's input channels and taps.
std::vector<float> WeightScales(const DeconvGeometry& g, const Tensor& w) {
  const int64_t in = g.w[0], per_group = g.w[1], taps = g.w[2] * g.w[3];
  const int64_t in_per_group = in / g.groups;
  // Without VNNI, 7-bit weights keep oneDNN's pairwise 16-bit sums from saturating.
  const float w_max = HasVnni() ? 127.0f : 63.0f;
  std::vector<float> scales(static_cast<size_t>(per_group * g.groups), 0.0f);
  const float* data = w.data<float>();
  for (int64_t c = 0; c < in; ++c) {
    const int64_t group = c / in_per_group;
    for (int64_t o = 0; o < per_group; ++o) {
      float& amax = scales[static_cast<size_t>(group * per_group + o)];
      const float* tap = data + (c * per_group + o) * taps;
      for (int64_t t = 0; t < taps; ++t) amax = std::max(amax, std::fabs(tap[t]));
    }
  }
  for (float& s : scales) s = s > 0.0f ? s / w_max : 1.0f;
  return scales;
}

class ConvTransposeKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, bool int8) {
    RETURN_IF_ERROR(RequireStaticF32(init, {0}));
    ASSIGN_OR_RETURN(DeconvGeometry geo, ReadGeometry(init));
    const Node& node = init.node;
    const int64_t out_channels = geo.y[1];
    ActivationQuant aq;
    std::vector<float> w_scales, out_scales;
    if (int8) {
      if (geo.one_d || geo.three_d) {
        return Unsupported(std::string(geo.one_d ? "1-D" : "3-D") +
                           " int8 ConvTranspose: oneDNN 2.6 has only its reference implementation for the plain "
                           "order these tensors use (the layer stays fp32)");
      }
      if (init.inputs[1]->value == nullptr)
        return Unsupported("int8 needs constant weights (they are computed at run time)");
      if (init.quant == nullptr) return Unsupported("no calibration ranges");
      auto it = init.quant->find(node.inputs[0]);
      if (it == init.quant->end()) return Unsupported("no calibrated range for input '" + node.inputs[0] + "'");
      aq = ChooseActivationQuant(it->second);
      w_scales = WeightScales(geo, *init.inputs[1]->value);
      for (float s : w_scales) out_scales.push_back(aq.scale * s);
    }
    const ValueInfo* bias = init.inputs.size() > 2 ? init.inputs[2] : nullptr;
    if (bias != nullptr && (bias->dtype != DType::kF32 || bias->shape != Shape{out_channels})) {
      return Unsupported("bias is not an f32 vector of " + std::to_string(out_channels));
    }
    const memory::desc user_w = UserWeights(geo);
    const memory::desc w_any(user_w.dims(), int8 ? dt::s8 : dt::f32, tag::any);
    const Layout layout = geo.one_d || geo.three_d ? Layout::kPlain : Layout::kChannelsLast;
    const memory::desc src_md = Describe(geo.x, int8 ? aq.type : dt::f32, layout);
    const memory::desc dst_md = Describe(geo.y, dt::f32, layout);
    // The bias is added here after the primitive, not by it: oneDNN 2.7 builds deconvolution on
    // backward-data convolution and adds a bias in a slow separate pass (PP-OCRv4 det's 2x2 stride-2
    // heads, 24 channels 320x320: 0.73 ms without a bias, 3.94 ms with one, 110 ms with it as a
    // binary post-op; this loop over the channels-last output adds 0.2 ms).
    dnnl::deconvolution_forward::primitive_desc pd;
    dnnl::primitive_attr attr;
    if (int8) attr.set_output_scales(1 << 1, out_scales);
    RETURN_IF_ERROR(Guard(node, "deconvolution", [&] {
      dnnl::deconvolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                             src_md, w_any, memory::desc(), dst_md, geo.strides, geo.dilates, geo.pad_l,
                                             geo.pad_r);
      pd = dnnl::deconvolution_forward::primitive_desc(desc, attr, Engine());
    }));
    const std::string impl = pd.impl_info_str();
    // oneDNN builds deconvolution on a convolution and may name that one ("conv:ref:any").
    if (IsReferenceImpl(impl) || impl.find("ref") != std::string::npos) {
      return Unsupported("only oneDNN's reference implementation (" + impl + ")");
    }
    auto kernel = std::unique_ptr<ConvTransposeKernel>(new ConvTransposeKernel());
    kernel->src_layout_ = kernel->dst_layout_ = layout;
    kernel->plane_ = layout == Layout::kPlain ? NumElements(Shape(geo.y.begin() + 2, geo.y.end())) : 1;
    // Weights reordered into oneDNN's layout once, or before every run when they are computed then.
    const Tensor* w = init.inputs[1]->value;
    RETURN_IF_ERROR(Guard(node, "weight reorder", [&] {
      kernel->weights_ = memory(pd.weights_desc(), Engine());
      if (w == nullptr) {
        kernel->weight_reorder_ = PrimitiveCall::ReorderInto(user_w, kernel->weights_);
        kernel->runtime_weights_ = true;
        return;
      }
      memory user(user_w, Engine(), const_cast<void*>(w->raw_data()));
      dnnl::primitive_attr reorder_attr;
      if (int8) {
        std::vector<float> inverse;
        for (float scale : w_scales) inverse.push_back(1.0f / scale);
        reorder_attr.set_output_scales(geo.groups == 1 ? 1 : 3, inverse);
      }
      dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), user_w, Engine(), pd.weights_desc(), reorder_attr))
          .execute(Stream(), user, kernel->weights_);
      Stream().wait();
    }));
    if (int8) {
      // The f32 input, in whatever order its producer wrote, quantised into channels-last before each run.
      const memory::desc f32_md = Describe(geo.x, dt::f32, init.inputs[0]->layout);
      dnnl::primitive_attr q_attr;
      q_attr.set_output_scales(0, {1.0f / aq.scale});
      kernel->quantized_.resize(static_cast<size_t>(NumElements(geo.x)) + 64);
      RETURN_IF_ERROR(Guard(node, "input quantisation", [&] {
        std::unordered_map<int, memory> q_args;
        q_args[DNNL_ARG_FROM] = memory(f32_md, Engine(), DNNL_MEMORY_NONE);
        q_args[DNNL_ARG_TO] = memory(pd.src_desc(), Engine(), kernel->quantized_.data());
        kernel->quantize_ = PrimitiveCall(
            dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), f32_md, Engine(), pd.src_desc(), q_attr)),
            std::move(q_args));
      }));
      kernel->src_layout_ = init.inputs[0]->layout;
      kernel->quantize_input_ = true;
    }
    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] = memory(pd.src_desc(), Engine(), DNNL_MEMORY_NONE);
    args[DNNL_ARG_WEIGHTS] = kernel->weights_;
    args[DNNL_ARG_DST] = memory(pd.dst_desc(), Engine(), DNNL_MEMORY_NONE);
    kernel->channels_ = out_channels;
    if (bias != nullptr && bias->value != nullptr) {
      const float* b = bias->value->data<float>();
      kernel->bias_.assign(b, b + out_channels);
    }
    kernel->runtime_bias_ = bias != nullptr && bias->value == nullptr;
    kernel->deconv_ = PrimitiveCall(dnnl::deconvolution_forward(pd), std::move(args));
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    if (runtime_weights_) {
      weight_reorder_.Refill(ctx.input(1)->raw_data());
    }
    if (quantize_input_) {
      quantize_.SetHandle(DNNL_ARG_FROM, ctx.input(0)->raw_data());
      quantize_.Execute();
      deconv_.SetHandle(DNNL_ARG_SRC, quantized_.data());
    } else {
      deconv_.SetHandle(DNNL_ARG_SRC, ctx.input(0)->raw_data());
    }
    deconv_.SetHandle(DNNL_ARG_DST, ctx.output(0)->raw_data());
    deconv_.Execute();
    const float* bias = runtime_bias_ ? ctx.input(2)->data<float>() : (bias_.empty() ? nullptr : bias_.data());
    if (bias != nullptr) AddBias(bias, ctx.output(0)->data<float>(), ctx.output(0)->numel());
    return Status();
  }
  Layout InputLayout(size_t i) const override { return i == 0 ? src_layout_ : Layout::kPlain; }
  Layout OutputLayout(size_t /*output*/) const override { return dst_layout_; }

 private:
  ConvTransposeKernel() = default;
  // y[p, c] += bias[c] over the channels-last output, pixel rows in parallel; a plain (1-D) output adds
  // bias[c] to each row of plane_ values.
  void AddBias(const float* b, float* y, int64_t numel) const {
    const int64_t channels = channels_;
    if (plane_ > 1) {
      const int64_t rows = numel / plane_, plane = plane_;
#pragma omp parallel for schedule(static) if (numel >= (1 << 15))
      for (int64_t r = 0; r < rows; ++r) {
        float* row = y + r * plane;
        const float v = b[r % channels];
#pragma omp simd
        for (int64_t i = 0; i < plane; ++i) row[i] += v;
      }
      return;
    }
    const int64_t pixels = numel / channels;
#pragma omp parallel for schedule(static) if (numel >= (1 << 15))
    for (int64_t p = 0; p < pixels; ++p) {
      float* row = y + p * channels;
#pragma omp simd
      for (int64_t c = 0; c < channels; ++c) row[c] += b[c];
    }
  }

 public:
  std::string Isa() const override { return deconv_.Impl(); }

 private:
  PrimitiveCall deconv_;
  PrimitiveCall quantize_;
  PrimitiveCall weight_reorder_;
  std::vector<uint8_t> quantized_;
  Layout src_layout_ = Layout::kChannelsLast;
  Layout dst_layout_ = Layout::kChannelsLast;
  int64_t plane_ = 1;  // plain output: values per (n, c) row
  bool quantize_input_ = false;
  memory weights_;
  std::vector<float> bias_;
  int64_t channels_ = 1;
  bool runtime_weights_ = false;
  bool runtime_bias_ = false;  // input 2 computed at run time: added from it on each run
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateConvTransposeF32(const KernelInit& init) {
  return ConvTransposeKernel::Create(init, false);
}
Result<std::unique_ptr<IKernel>> CreateConvTransposeInt8(const KernelInit& init) {
  return ConvTransposeKernel::Create(init, true);
}

}  // namespace chipfit::cpu
