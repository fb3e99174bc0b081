// Quantized-model ops on the CPU: QLinearConv, ConvInteger, QLinearMatMul and MatMulInteger on oneDNN's
// int8 kernels; QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear as OpenMP loops.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/reference/conv_util.h"
#include "core/reference/ref_util.h"
#include "devices/cpu/onednn_util.h"
#include "devices/cpu/ops/cpu_ops.h"

namespace chipfit::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

const ValueInfo* InputInfo(const KernelInit& init, size_t i) {
  return i < init.inputs.size() && init.node.HasInput(i) ? init.inputs[i] : nullptr;
}

bool StaticShape(const ValueInfo* v) {
  return v != nullptr && std::all_of(v->shape.begin(), v->shape.end(), [](int64_t d) { return d > 0; });
}

bool IsInt8(DType dtype) { return dtype == DType::kU8 || dtype == DType::kI8; }

// A zero point: a constant, a scalar computed at run time (DynamicQuantizeLinear's), or absent (0).
struct ZeroPoint {
  std::vector<int32_t> values = {0};
  bool runtime = false;
};

Result<ZeroPoint> ReadZeroPoint(const KernelInit& init, size_t i, const char* name, bool allow_runtime) {
  ZeroPoint zp;
  const ValueInfo* v = InputInfo(init, i);
  if (v == nullptr) return zp;
  if (v->value == nullptr) {
    if (!allow_runtime || NumElements(v->shape) != 1) return Unsupported(std::string(name) + " computed at run time");
    zp.runtime = true;
    return zp;
  }
  zp.values.clear();
  for (int64_t z : v->value->ToInt64Vector()) zp.values.push_back(static_cast<int32_t>(z));
  if (zp.values.empty()) zp.values = {0};
  return zp;
}

Result<std::vector<float>> ConstantFloats(const KernelInit& init, size_t i, const char* name) {
  const ValueInfo* v = InputInfo(init, i);
  if (v == nullptr || v->value == nullptr) return Unsupported(std::string(name) + " computed at run time");
  if (v->dtype != DType::kF32) return Unsupported(std::string(name) + " is " + std::string(DTypeName(v->dtype)));
  const Tensor& t = *v->value;
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

// Constant weights minus their zero point (one per group of `per` consecutive elements, or one per
// column when `column_count` > 0) as s8: oneDNN 2.6's int8 convolutions and matmuls take s8 weights
// and no weight zero points, so the shift is folded in once, when every shifted value fits.
Result<std::vector<int8_t>> ShiftedWeights(const Tensor& w, const std::vector<int32_t>& zp, int64_t per,
                                           int64_t column_count) {
  const std::vector<int64_t> values = w.ToInt64Vector();
  std::vector<int8_t> out(values.size());
  int64_t lo = 0, hi = 0, magnitude = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t group = column_count > 0 ? static_cast<int64_t>(i) % column_count : static_cast<int64_t>(i) / per;
    const int64_t v = values[i] - zp[zp.size() == 1 ? 0 : static_cast<size_t>(group)];
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    magnitude = std::max(magnitude, std::abs(v));
    out[i] = static_cast<int8_t>(std::clamp<int64_t>(v, -128, 127));
  }
  if (lo < -128 || hi > 127) {
    return Unsupported("weights minus their zero point span [" + std::to_string(lo) + ", " + std::to_string(hi) +
                       "], beyond s8 (oneDNN 2.6 takes s8 weights without zero points)");
  }
  // Without VNNI oneDNN multiplies u8·s8 pairs with vpmaddubsw, whose 16-bit pair sums saturate.
  if (!HasVnni() && magnitude > 63) {
    return Unsupported("weights reach " + std::to_string(magnitude) +
                       " in magnitude; without VNNI oneDNN's 16-bit u8·s8 sums would saturate");
  }
  return out;
}

// y's zero point as post-ops: the scaled accumulator is rounded half to even first, then the zero point added.
// Adding it before rounding (one linear post-op) differs where the float sum loses the scaled value's last bits:
// 4.4999986 + 131 is 135.5 in float and rounds to 136, where ONNX Runtime and the reference give 4 + 131.
dnnl::post_ops AddZeroPointAfterRounding(int32_t zero_point) {
  dnnl::post_ops ops;
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_round, 0.0f, 0.0f);
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, 1.0f, static_cast<float>(zero_point));
  return ops;
}

// Without VNNI oneDNN shifts an s8 source to u8 and halves the weights so that vpmaddubsw's 16-bit pair sums
// cannot saturate; halving rounds odd weights, so its result is no longer exact.
constexpr const char* kSignedSourceWithoutVnni =
    "s8 input without VNNI: oneDNN halves the weights (rounding odd ones) to keep its 16-bit sums from saturating";

// The s32 paths take weights known only at run time, which may use the full int8 range: without VNNI
// vpmaddubsw's u8·s8 pair sums would saturate at 16 bits (as they do in ONNX Runtime's U8S8 kernels there).
constexpr const char* kRuntimeWeightsWithoutVnni =
    "no VNNI here: oneDNN's 16-bit u8·s8 pair sums would saturate on full-range run-time weights";

// Sets a per-run s32 zero point from a run-time u8/s8 scalar.
int32_t ScalarAsInt32(const Tensor& t) { return static_cast<int32_t>(t.GetAsInt64(0)); }

// ---------------------------------------------------------------------------------------------------------------
// QLinearConv (x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B) and ConvInteger (x, w, x_zp, w_zp).

class IntConvKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, bool qlinear) {
    const Node& node = init.node;
    const size_t w_in = qlinear ? 3 : 1, x_zp_in = 2, w_zp_in = qlinear ? 5 : 3;
    const ValueInfo* x = InputInfo(init, 0);
    const ValueInfo* w = InputInfo(init, w_in);
    if (!StaticShape(x) || !StaticShape(w)) return Unsupported("shapes known only at run time");
    if (!IsInt8(x->dtype) || !IsInt8(w->dtype)) return Unsupported("x and w must be u8 or s8");
    if (x->dtype == DType::kI8 && !HasVnni()) return Unsupported(kSignedSourceWithoutVnni);
    if (x->shape.size() != 4 || w->shape.size() != 4) return Unsupported("only 2-D convolutions run on oneDNN here");
    if (w->value == nullptr) return Unsupported("weights computed at run time");
    const Shape& xs = x->shape;
    const Shape& ws = w->shape;
    const int64_t groups = node.GetInt("group", 1);
    if (groups < 1 || xs[1] % groups != 0 || ws[0] % groups != 0 || xs[1] / groups != ws[1]) {
      return Unsupported("channels do not match the group count");
    }
    ASSIGN_OR_RETURN(Window win, ReadWindow(node, {xs[2], xs[3]}, {ws[2], ws[3]}));
    RETURN_IF_ERROR(ResolveForwardWindow(node, win, false));
    const int64_t channels = ws[0];
    const Shape ys = {xs[0], channels, win.out[0], win.out[1]};

    auto kernel = std::unique_ptr<IntConvKernel>(new IntConvKernel());
    ASSIGN_OR_RETURN(kernel->x_zp_, ReadZeroPoint(init, x_zp_in, "x_zero_point", !qlinear));
    if (kernel->x_zp_.values.size() != 1) return Unsupported("x_zero_point is not a scalar");
    ASSIGN_OR_RETURN(const ZeroPoint w_zp, ReadZeroPoint(init, w_zp_in, "w_zero_point", false));
    const int64_t per = NumElements(ws) / channels;
    ASSIGN_OR_RETURN(const std::vector<int8_t> w_s8, ShiftedWeights(*w->value, w_zp.values, per, 0));
    kernel->weight_sums_.assign(static_cast<size_t>(channels), 0);
    for (size_t i = 0; i < w_s8.size(); ++i) kernel->weight_sums_[i / static_cast<size_t>(per)] += w_s8[i];

    // Requantization: dst = round(x_scale · w_scale[m] / y_scale · acc) + y_zp.
    std::vector<float> out_scales;
    dt dst_type = dt::s32;
    int32_t y_zp = 0;
    std::vector<int32_t> bias(static_cast<size_t>(channels), 0);
    if (qlinear) {
      ASSIGN_OR_RETURN(const std::vector<float> x_scale, ConstantFloats(init, 1, "x_scale"));
      ASSIGN_OR_RETURN(const std::vector<float> w_scale, ConstantFloats(init, 4, "w_scale"));
      ASSIGN_OR_RETURN(const std::vector<float> y_scale, ConstantFloats(init, 6, "y_scale"));
      ASSIGN_OR_RETURN(const ZeroPoint y, ReadZeroPoint(init, 7, "y_zero_point", false));
      const ValueInfo* y_info = InputInfo(init, 7);
      if (y_info == nullptr || !IsInt8(y_info->dtype)) return Unsupported("y_zero_point is missing or not u8/s8");
      if (x_scale.size() != 1 || y_scale.size() != 1 || y.values.size() != 1) {
        return Unsupported("x_scale, y_scale and y_zero_point must be scalars");
      }
      for (int64_t m = 0; m < channels; ++m) {
        out_scales.push_back(x_scale[0] * w_scale[w_scale.size() == 1 ? 0 : static_cast<size_t>(m)] / y_scale[0]);
      }
      dst_type = ToDnnl(y_info->dtype);
      y_zp = y.values[0];
      if (const ValueInfo* b = InputInfo(init, 8)) {
        if (b->value == nullptr || b->dtype != DType::kI32) return Unsupported("B is not a constant int32 vector");
        for (int64_t m = 0; m < channels; ++m) bias[static_cast<size_t>(m)] = b->value->data<int32_t>()[m];
      }
    }
    kernel->bias_values_ = bias;

    const memory::desc src_md = Describe(xs, ToDnnl(x->dtype), Layout::kChannelsLast);
    const memory::desc dst_md = Describe(ys, dst_type, Layout::kChannelsLast);
    const memory::dims w_dims = groups == 1 ? ToDims(ws) : memory::dims{groups, ws[0] / groups, ws[1], ws[2], ws[3]};
    const memory::desc w_any(w_dims, dt::s8, tag::any);
    const memory::desc b_md({channels}, dt::s32, tag::a);
    const bool padded = std::any_of(win.pad_begin.begin(), win.pad_begin.end(), [](int64_t p) { return p != 0; }) ||
                        std::any_of(win.pad_end.begin(), win.pad_end.end(), [](int64_t p) { return p != 0; });
    const bool has_x_zp = kernel->x_zp_.runtime || kernel->x_zp_.values[0] != 0;

    // x's zero point: oneDNN's source zero point where it has one (it treats padding as the zero
    // point, as ONNX does); else, without padding, folded into the bias: Σ(x − z)·w = Σx·w − z·Σw.
    std::string refusals;
    dnnl::convolution_forward::primitive_desc pd;
    bool found = false;
    for (bool fold : {false, true}) {
      if (fold && (!has_x_zp || padded)) break;
      dnnl::primitive_attr attr;
      if (!out_scales.empty()) attr.set_output_scales(1 << 1, out_scales);
      if (has_x_zp && !fold) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
      if (y_zp != 0) attr.set_post_ops(AddZeroPointAfterRounding(y_zp));
      Status status = Guard(node, "int8 convolution", [&] {
        dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                             src_md, w_any, b_md, dst_md, {win.strides[0], win.strides[1]},
                                             {win.dilations[0] - 1, win.dilations[1] - 1},
                                             {win.pad_begin[0], win.pad_begin[1]}, {win.pad_end[0], win.pad_end[1]});
        pd = dnnl::convolution_forward::primitive_desc(desc, attr, Engine());
      });
      if (status.ok() && !IsReferenceImpl(pd.impl_info_str())) {
        kernel->fold_zero_point_ = fold;
        found = true;
        break;
      }
      refusals += (refusals.empty() ? "" : "; ") + std::string(fold ? "zero point in the bias: " : "") +
                  (status.ok() ? "only oneDNN's reference implementation" : status.message());
    }
    if (!found) {
      if (has_x_zp && padded) refusals += "; a padded convolution cannot fold x_zero_point into the bias";
      return Unsupported(refusals);
    }

    Status status = Guard(node, "weight reorder", [&] {
      const memory::desc plain(w_dims, dt::s8, groups == 1 ? tag::oihw : tag::goihw);
      memory user(plain, Engine(), const_cast<int8_t*>(w_s8.data()));
      kernel->weights_ = memory(pd.weights_desc(), Engine());
      dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), plain, Engine(), pd.weights_desc()))
          .execute(Stream(), user, kernel->weights_);
      Stream().wait();
    });
    RETURN_IF_ERROR(status);
    kernel->bias_ = memory(b_md, Engine());
    kernel->zp_ = memory({{1}, dt::s32, tag::a}, Engine());
    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] = memory(pd.src_desc(), Engine(), DNNL_MEMORY_NONE);
    args[DNNL_ARG_WEIGHTS] = kernel->weights_;
    args[DNNL_ARG_BIAS] = kernel->bias_;
    args[DNNL_ARG_DST] = memory(pd.dst_desc(), Engine(), DNNL_MEMORY_NONE);
    if (has_x_zp && !kernel->fold_zero_point_) args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC] = kernel->zp_;
    kernel->conv_ = PrimitiveCall(dnnl::convolution_forward(pd), std::move(args));
    kernel->x_zp_input_ = x_zp_in;
    kernel->SetZeroPoint(kernel->x_zp_.values[0]);
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    if (x_zp_.runtime) SetZeroPoint(ScalarAsInt32(*ctx.input(x_zp_input_)));
    conv_.SetHandle(DNNL_ARG_SRC, ctx.input(0)->raw_data());
    conv_.SetHandle(DNNL_ARG_DST, ctx.output(0)->raw_data());
    conv_.Execute();
    return Status();
  }
  Layout InputLayout(size_t i) const override { return i == 0 ? Layout::kChannelsLast : Layout::kPlain; }
  Layout OutputLayout(size_t) const override { return Layout::kChannelsLast; }

 private:
  IntConvKernel() = default;

  void SetZeroPoint(int32_t zp) {
    *static_cast<int32_t*>(zp_.get_data_handle()) = zp;
    auto* b = static_cast<int32_t*>(bias_.get_data_handle());
    for (size_t m = 0; m < bias_values_.size(); ++m) {
      b[m] = bias_values_[m] - (fold_zero_point_ ? zp * weight_sums_[m] : 0);
    }
  }

 public:
  std::string Isa() const override { return conv_.Impl(); }

 private:
  PrimitiveCall conv_;
  memory weights_, bias_, zp_;
  ZeroPoint x_zp_;
  size_t x_zp_input_ = 2;
  std::vector<int32_t> bias_values_, weight_sums_;
  bool fold_zero_point_ = false;
};

std::vector<float> AsFloats(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(t.GetAsDouble(static_cast<int64_t>(i)));
  return v;
}

std::vector<int32_t> ZeroPointValues(const Tensor* t) {
  if (t == nullptr || !t->defined() || t->numel() == 0) return {0};
  std::vector<int32_t> v(static_cast<size_t>(t->numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(t->GetAsInt64(static_cast<int64_t>(i)));
  return v;
}

// The general convolution path, for weights, scales or bias known only at run time: oneDNN convolves (x − zx)
// with w' = w − 128 (u8 w) or w (s8 w) into s32, a second convolution with all-one weights sums (x − zx) over
// each window and group, and one loop adds o·sum with o = (u8 w ? 128 : 0) − zw per output channel, the bias,
// and requantizes as the reference does. oneDNN's source zero point keeps padding at the real zero.

class IntConvGeneralKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, bool qlinear) {
    const Node& node = init.node;
    const ValueInfo* x = InputInfo(init, 0);
    const ValueInfo* w = InputInfo(init, qlinear ? 3 : 1);
    if (!StaticShape(x) || !StaticShape(w)) return Unsupported("shapes known only at run time");
    if (!IsInt8(x->dtype) || !IsInt8(w->dtype)) return Unsupported("x and w must be u8 or s8");
    if (!HasVnni()) return Unsupported(kRuntimeWeightsWithoutVnni);
    if (x->shape.size() != 4 || w->shape.size() != 4) return Unsupported("only 2-D convolutions run on oneDNN here");
    const Shape& xs = x->shape;
    const Shape& ws = w->shape;
    const int64_t groups = node.GetInt("group", 1);
    if (groups < 1 || xs[1] % groups != 0 || ws[0] % groups != 0 || xs[1] / groups != ws[1]) {
      return Unsupported("channels do not match the group count");
    }
    ASSIGN_OR_RETURN(Window win, ReadWindow(node, {xs[2], xs[3]}, {ws[2], ws[3]}));
    RETURN_IF_ERROR(ResolveForwardWindow(node, win, false));
    auto kernel = std::unique_ptr<IntConvGeneralKernel>(new IntConvGeneralKernel());
    kernel->qlinear_ = qlinear;
    kernel->w_unsigned_ = w->dtype == DType::kU8;
    kernel->groups_ = groups;
    kernel->channels_ = ws[0];
    kernel->w_in_ = qlinear ? 3 : 1;
    kernel->w_zp_in_ = qlinear ? 5 : 3;
    if (qlinear) {
      const ValueInfo* y_zp = InputInfo(init, 7);
      if (y_zp == nullptr || !IsInt8(y_zp->dtype)) return Unsupported("y_zero_point is missing or not u8/s8");
      kernel->y_unsigned_ = y_zp->dtype == DType::kU8;
    }
    kernel->need_sums_ = kernel->w_unsigned_ || InputInfo(init, kernel->w_zp_in_) != nullptr;
    const Shape ys = {xs[0], ws[0], win.out[0], win.out[1]};
    const memory::desc src_md = Describe(xs, ToDnnl(x->dtype), Layout::kChannelsLast);
    const memory::dims w_dims = groups == 1 ? ToDims(ws) : memory::dims{groups, ws[0] / groups, ws[1], ws[2], ws[3]};
    const memory::dims ones_dims =
        groups == 1 ? memory::dims{1, ws[1], ws[2], ws[3]} : memory::dims{groups, 1, ws[1], ws[2], ws[3]};
    const tag plain_tag = groups == 1 ? tag::oihw : tag::goihw;
    dnnl::primitive_attr attr;
    attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    kernel->zp_ = memory({{1}, dt::s32, tag::a}, Engine());
    // Builds a convolution of x into s32 with `dims` weights; returns its weights desc.
    const auto build = [&](const memory::dims& dims, const Shape& out, PrimitiveCall& call, std::vector<int32_t>& dst,
                           memory::desc& weights_desc) -> Status {
      dnnl::convolution_forward::primitive_desc pd;
      RETURN_IF_ERROR(Guard(node, "int8 convolution", [&] {
        dnnl::convolution_forward::desc desc(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md,
            memory::desc(dims, dt::s8, tag::any), Describe(out, dt::s32, Layout::kChannelsLast),
            {win.strides[0], win.strides[1]}, {win.dilations[0] - 1, win.dilations[1] - 1},
            {win.pad_begin[0], win.pad_begin[1]}, {win.pad_end[0], win.pad_end[1]});
        pd = dnnl::convolution_forward::primitive_desc(desc, attr, Engine());
      }));
      if (IsReferenceImpl(pd.impl_info_str())) {
        return Unsupported(std::string("only oneDNN's reference implementation (") + pd.impl_info_str() + ")");
      }
      dst.resize(static_cast<size_t>(NumElements(out)));
      weights_desc = pd.weights_desc();
      std::unordered_map<int, memory> args;
      args[DNNL_ARG_SRC] = memory(pd.src_desc(), Engine(), DNNL_MEMORY_NONE);
      args[DNNL_ARG_WEIGHTS] = memory(weights_desc, Engine());
      args[DNNL_ARG_DST] = memory(pd.dst_desc(), Engine(), dst.data());
      args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC] = kernel->zp_;
      call = PrimitiveCall(dnnl::convolution_forward(pd), std::move(args));
      return Status();
    };
    memory::desc w_desc, ones_desc;
    RETURN_IF_ERROR(build(w_dims, ys, kernel->conv_, kernel->acc_, w_desc));
    const memory::desc plain(w_dims, dt::s8, plain_tag);
    kernel->w_s8_.resize(static_cast<size_t>(NumElements(ws)));
    RETURN_IF_ERROR(Guard(node, "weight reorder", [&] {
      kernel->reorder_w_ =
          PrimitiveCall::SrcDst(dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), plain, Engine(), w_desc)), plain,
                                w_desc, DNNL_ARG_FROM, DNNL_ARG_TO);
      kernel->reorder_w_.SetHandle(DNNL_ARG_TO, kernel->conv_.arg(DNNL_ARG_WEIGHTS).get_data_handle());
    }));
    if (kernel->need_sums_) {
      RETURN_IF_ERROR(
          build(ones_dims, {xs[0], groups, win.out[0], win.out[1]}, kernel->sum_conv_, kernel->sums_, ones_desc));
      RETURN_IF_ERROR(Guard(node, "weight reorder", [&] {
        const memory::desc ones_plain(ones_dims, dt::s8, plain_tag);
        std::vector<int8_t> ones(static_cast<size_t>(NumElements(Shape(ones_dims.begin(), ones_dims.end()))), 1);
        memory user(ones_plain, Engine(), ones.data());
        dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), ones_plain, Engine(), ones_desc))
            .execute(Stream(), user, kernel->sum_conv_.arg(DNNL_ARG_WEIGHTS));
        Stream().wait();
      }));
    }
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& w = *ctx.input(w_in_);
    const std::vector<int32_t> x_zp = ZeroPointValues(ctx.input(2));
    const std::vector<int32_t> w_zp = ZeroPointValues(ctx.input(w_zp_in_));
    const size_t channels = static_cast<size_t>(channels_);
    if (x_zp.size() != 1 || (w_zp.size() != 1 && w_zp.size() != channels)) {
      return ctx.Error("x_zero_point must be a scalar and w_zero_point a scalar or one per output channel");
    }
    if (w_unsigned_) {
      const uint8_t* wp = w.data<uint8_t>();
      for (size_t i = 0; i < w_s8_.size(); ++i) w_s8_[i] = static_cast<int8_t>(static_cast<int32_t>(wp[i]) - 128);
    } else {
      std::memcpy(w_s8_.data(), w.raw_data(), w_s8_.size());
    }
    *static_cast<int32_t*>(zp_.get_data_handle()) = x_zp[0];
    reorder_w_.Run(w_s8_.data(), conv_.arg(DNNL_ARG_WEIGHTS).get_data_handle());
    conv_.SetHandle(DNNL_ARG_SRC, ctx.input(0)->raw_data());
    conv_.Execute();
    if (need_sums_) {
      sum_conv_.SetHandle(DNNL_ARG_SRC, ctx.input(0)->raw_data());
      sum_conv_.Execute();
    }
    std::vector<int64_t> offset(channels), bias(channels, 0);
    for (size_t m = 0; m < channels; ++m) offset[m] = (w_unsigned_ ? 128 : 0) - w_zp[w_zp.size() == 1 ? 0 : m];
    std::vector<float> multiplier(channels, 1.0f);
    int32_t y_zp = 0;
    if (qlinear_) {
      const std::vector<float> x_scale = AsFloats(*ctx.input(1)), w_scale = AsFloats(*ctx.input(4)),
                               y_scale = AsFloats(*ctx.input(6));
      const std::vector<int32_t> yz = ZeroPointValues(ctx.input(7));
      if (x_scale.size() != 1 || y_scale.size() != 1 || yz.size() != 1 ||
          (w_scale.size() != 1 && w_scale.size() != channels)) {
        return ctx.Error("x_scale, y_scale, y_zero_point must be scalars and w_scale a scalar or one per channel");
      }
      for (size_t m = 0; m < channels; ++m) {
        multiplier[m] = x_scale[0] * w_scale[w_scale.size() == 1 ? 0 : m] / y_scale[0];
      }
      y_zp = yz[0];
      if (const Tensor* b = ctx.input(8); b != nullptr && b->defined()) {
        if (static_cast<size_t>(b->numel()) != channels) return ctx.Error("B must hold one value per output channel");
        for (size_t m = 0; m < channels; ++m) bias[m] = b->GetAsInt64(static_cast<int64_t>(m));
      }
    }
    const int64_t total = static_cast<int64_t>(acc_.size()), per_group = channels_ / groups_;
    void* out = ctx.output(0)->raw_data();
#pragma omp parallel for schedule(static)
    for (int64_t idx = 0; idx < total; ++idx) {  // channels-last: the channel varies fastest
      const size_t m = static_cast<size_t>(idx % channels_);
      int64_t acc = acc_[static_cast<size_t>(idx)] + bias[m];
      if (need_sums_) {
        acc += offset[m] * sums_[static_cast<size_t>(idx / channels_ * groups_ + static_cast<int64_t>(m) / per_group)];
      }
      if (!qlinear_) {
        static_cast<int32_t*>(out)[idx] = static_cast<int32_t>(static_cast<uint32_t>(acc));
        continue;
      }
      const double v = std::nearbyint(static_cast<float>(acc) * multiplier[m]) + y_zp;  // float, as the reference
      if (y_unsigned_) {
        static_cast<uint8_t*>(out)[idx] = FromDouble<uint8_t>(v);
      } else {
        static_cast<int8_t*>(out)[idx] = FromDouble<int8_t>(v);
      }
    }
    return Status();
  }
  Layout InputLayout(size_t i) const override { return i == 0 ? Layout::kChannelsLast : Layout::kPlain; }
  Layout OutputLayout(size_t) const override { return Layout::kChannelsLast; }

 private:
  IntConvGeneralKernel() = default;
  PrimitiveCall conv_, sum_conv_, reorder_w_;
  memory zp_;
  std::vector<int8_t> w_s8_;
  std::vector<int32_t> acc_, sums_;
  int64_t groups_ = 1, channels_ = 1;
  size_t w_in_ = 1, w_zp_in_ = 3;
  bool qlinear_ = false, w_unsigned_ = false, y_unsigned_ = false, need_sums_ = false;
};

Result<std::unique_ptr<IKernel>> CreateIntConv(const KernelInit& init, bool qlinear) {
  auto fused = IntConvKernel::Create(init, qlinear);
  if (fused.ok() || fused.status().code() != StatusCode::kUnsupported) return fused;
  auto general = IntConvGeneralKernel::Create(init, qlinear);
  if (general.ok() || general.status().code() != StatusCode::kUnsupported) return general;
  return Unsupported(fused.status().message() + "; s32 path: " + general.status().message());
}

// ---------------------------------------------------------------------------------------------------------------
// QLinearMatMul (a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) and MatMulInteger (a, b, a_zp, b_zp), for a
// constant 2-D b: a's batch dims fold into its rows. a's zero point always goes into a per-column bias
// (Σ(a − z)·b = Σa·b − z·Σb), which holds for every row and needs no oneDNN zero-point support.

class IntMatMulKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, bool qlinear) {
    const Node& node = init.node;
    const size_t b_in = qlinear ? 3 : 1, a_zp_in = 2, b_zp_in = qlinear ? 5 : 3;
    const ValueInfo* a = InputInfo(init, 0);
    const ValueInfo* b = InputInfo(init, b_in);
    if (!StaticShape(a) || !StaticShape(b)) return Unsupported("shapes known only at run time");
    if (!IsInt8(a->dtype) || !IsInt8(b->dtype)) return Unsupported("a and b must be u8 or s8");
    if (a->dtype == DType::kI8 && !HasVnni()) return Unsupported(kSignedSourceWithoutVnni);
    if (a->shape.empty()) return Unsupported("a scalar a");
    if (b->shape.size() != 2) return Unsupported("b of rank " + std::to_string(b->shape.size()) + " (only 2-D b)");
    if (b->value == nullptr) return Unsupported("b computed at run time (oneDNN 2.6 wants s8 weights it can shift)");
    const int64_t k = a->shape.back(), n = b->shape[1];
    if (k != b->shape[0]) return Unsupported("inner dims differ");
    const int64_t m = NumElements(a->shape) / k;

    auto kernel = std::unique_ptr<IntMatMulKernel>(new IntMatMulKernel());
    ASSIGN_OR_RETURN(kernel->a_zp_, ReadZeroPoint(init, a_zp_in, "a_zero_point", !qlinear));
    if (kernel->a_zp_.values.size() != 1) return Unsupported("a_zero_point per row");
    ASSIGN_OR_RETURN(const ZeroPoint b_zp, ReadZeroPoint(init, b_zp_in, "b_zero_point", false));
    if (b_zp.values.size() != 1 && static_cast<int64_t>(b_zp.values.size()) != n) {
      return Unsupported("b_zero_point with batch dims");
    }
    ASSIGN_OR_RETURN(const std::vector<int8_t> b_s8, ShiftedWeights(*b->value, b_zp.values, 1, n));
    // QLinearGemm's bias (input 8, int32 [N] at scale a_scale·b_scale) joins the zero-point term.
    kernel->bias_values_.assign(static_cast<size_t>(n), 0);
    if (qlinear && node.HasInput(8)) {
      const ValueInfo* bias = InputInfo(init, 8);
      if (bias == nullptr || bias->value == nullptr || bias->dtype != DType::kI32 || bias->value->numel() != n) {
        return Unsupported("a bias that is not a constant int32 [N]");
      }
      for (int64_t j = 0; j < n; ++j) kernel->bias_values_[static_cast<size_t>(j)] = bias->value->data<int32_t>()[j];
    }
    kernel->column_sums_.assign(static_cast<size_t>(n), 0);
    for (size_t i = 0; i < b_s8.size(); ++i) kernel->column_sums_[i % static_cast<size_t>(n)] += b_s8[i];

    std::vector<float> out_scales;
    dt dst_type = dt::s32;
    int32_t y_zp = 0;
    if (qlinear) {
      ASSIGN_OR_RETURN(const std::vector<float> a_scale, ConstantFloats(init, 1, "a_scale"));
      ASSIGN_OR_RETURN(const std::vector<float> b_scale, ConstantFloats(init, 4, "b_scale"));
      ASSIGN_OR_RETURN(const std::vector<float> y_scale, ConstantFloats(init, 6, "y_scale"));
      ASSIGN_OR_RETURN(const ZeroPoint y, ReadZeroPoint(init, 7, "y_zero_point", false));
      const ValueInfo* y_info = InputInfo(init, 7);
      if (y_info == nullptr || !IsInt8(y_info->dtype)) return Unsupported("y_zero_point is missing or not u8/s8");
      if (a_scale.size() != 1) return Unsupported("a_scale per row");
      if (y_scale.size() != 1 || y.values.size() != 1) return Unsupported("y_scale and y_zero_point must be scalars");
      if (b_scale.size() != 1 && static_cast<int64_t>(b_scale.size()) != n) {
        return Unsupported("b_scale with batch dims");
      }
      for (int64_t j = 0; j < n; ++j) {
        out_scales.push_back(a_scale[0] * b_scale[b_scale.size() == 1 ? 0 : static_cast<size_t>(j)] / y_scale[0]);
      }
      dst_type = ToDnnl(y_info->dtype);
      y_zp = y.values[0];
    }

    const memory::desc src_md({m, k}, ToDnnl(a->dtype), tag::ab);
    const memory::desc w_any({k, n}, dt::s8, tag::any);
    const memory::desc bias_md({1, n}, dt::s32, tag::ab);
    const memory::desc dst_md({m, n}, dst_type, tag::ab);
    dnnl::primitive_attr attr;
    if (!out_scales.empty()) attr.set_output_scales(1 << 1, out_scales);
    if (y_zp != 0) attr.set_post_ops(AddZeroPointAfterRounding(y_zp));
    dnnl::matmul::primitive_desc pd;
    RETURN_IF_ERROR(Guard(node, "int8 matmul", [&] {
      pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(src_md, w_any, bias_md, dst_md), attr, Engine());
    }));
    if (IsReferenceImpl(pd.impl_info_str())) {
      return Unsupported(std::string("only oneDNN's reference implementation (") + pd.impl_info_str() + ")");
    }
    RETURN_IF_ERROR(Guard(node, "weight reorder", [&] {
      const memory::desc plain({k, n}, dt::s8, tag::ab);
      memory user(plain, Engine(), const_cast<int8_t*>(b_s8.data()));
      kernel->weights_ = memory(pd.weights_desc(), Engine());
      dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), plain, Engine(), pd.weights_desc()))
          .execute(Stream(), user, kernel->weights_);
      Stream().wait();
    }));
    kernel->bias_ = memory(bias_md, Engine());
    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] = memory(src_md, Engine(), DNNL_MEMORY_NONE);
    args[DNNL_ARG_WEIGHTS] = kernel->weights_;
    args[DNNL_ARG_BIAS] = kernel->bias_;
    args[DNNL_ARG_DST] = memory(dst_md, Engine(), DNNL_MEMORY_NONE);
    kernel->matmul_ = PrimitiveCall(dnnl::matmul(pd), std::move(args));
    kernel->SetZeroPoint(kernel->a_zp_.values[0]);
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    if (a_zp_.runtime) SetZeroPoint(ScalarAsInt32(*ctx.input(2)));
    matmul_.SetHandle(DNNL_ARG_SRC, ctx.input(0)->raw_data());
    matmul_.SetHandle(DNNL_ARG_DST, ctx.output(0)->raw_data());
    matmul_.Execute();
    return Status();
  }

 private:
  IntMatMulKernel() = default;

  void SetZeroPoint(int32_t zp) {
    auto* b = static_cast<int32_t*>(bias_.get_data_handle());
    for (size_t j = 0; j < column_sums_.size(); ++j) b[j] = bias_values_[j] - zp * column_sums_[j];
  }

 public:
  std::string Isa() const override { return matmul_.Impl(); }

 private:
  PrimitiveCall matmul_;
  memory weights_, bias_;
  ZeroPoint a_zp_;
  std::vector<int32_t> bias_values_, column_sums_;
};

// The general path, for operands and parameters known only at run time (attention's Q·Kᵀ in a QOperator
// transformer: both sides are activations): oneDNN accumulates a·b' in s32 with b' = b − 128 for u8 b (oneDNN
// 2.6 has no u8 weights), then one loop adds the zero-point terms and requantizes exactly as the reference:
// Σ(a − za)(b' + o) = Σa·b' − za·Σb' + o·(Σa − K·za), with o = (u8 b ? 128 : 0) − zb per column.

class IntMatMulGeneralKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, bool qlinear) {
    const Node& node = init.node;
    const ValueInfo* a = InputInfo(init, 0);
    const ValueInfo* b = InputInfo(init, qlinear ? 3 : 1);
    if (!StaticShape(a) || !StaticShape(b)) return Unsupported("shapes known only at run time");
    if (!IsInt8(a->dtype) || !IsInt8(b->dtype)) return Unsupported("a and b must be u8 or s8");
    if (!HasVnni()) return Unsupported(kRuntimeWeightsWithoutVnni);
    if (a->shape.size() < 2 || b->shape.size() < 2) return Unsupported("1-D a or b");
    auto kernel = std::unique_ptr<IntMatMulGeneralKernel>(new IntMatMulGeneralKernel());
    kernel->qlinear_ = qlinear;
    kernel->b_unsigned_ = b->dtype == DType::kU8;
    const Shape a_batch(a->shape.begin(), a->shape.end() - 2), b_batch(b->shape.begin(), b->shape.end() - 2);
    kernel->k_ = a->shape.back();
    kernel->n_ = b->shape.back();
    if (kernel->k_ != b->shape[b->shape.size() - 2]) return Unsupported("inner dims differ");
    const int64_t m = a->shape[a->shape.size() - 2];
    // A 2-D b is shared by every row of a's batch; otherwise the batch dims must match (no broadcasting).
    if (b_batch.empty()) {
      kernel->batches_ = 1;
      kernel->m_ = NumElements(a->shape) / kernel->k_;
    } else if (a_batch == b_batch) {
      kernel->batches_ = NumElements(a_batch);
      kernel->m_ = m;
    } else {
      return Unsupported("batch dims " + ShapeToString(a->shape) + " and " + ShapeToString(b->shape) + " broadcast");
    }
    if (qlinear) {
      const ValueInfo* y_zp = InputInfo(init, 7);
      if (y_zp == nullptr || !IsInt8(y_zp->dtype)) return Unsupported("y_zero_point is missing or not u8/s8");
      kernel->y_unsigned_ = y_zp->dtype == DType::kU8;
    }
    const int64_t bt = kernel->batches_, rows = kernel->m_, k = kernel->k_, n = kernel->n_;
    const bool batched = bt > 1;
    const memory::desc src_md = batched ? memory::desc({bt, rows, k}, ToDnnl(a->dtype), tag::abc)
                                        : memory::desc({rows, k}, ToDnnl(a->dtype), tag::ab);
    const memory::desc w_md =
        batched ? memory::desc({bt, k, n}, dt::s8, tag::abc) : memory::desc({k, n}, dt::s8, tag::ab);
    const memory::desc dst_md =
        batched ? memory::desc({bt, rows, n}, dt::s32, tag::abc) : memory::desc({rows, n}, dt::s32, tag::ab);
    dnnl::matmul::primitive_desc pd;
    RETURN_IF_ERROR(Guard(node, "int8 matmul", [&] {
      pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(src_md, w_md, dst_md), Engine());
    }));
    if (IsReferenceImpl(pd.impl_info_str())) {
      return Unsupported(std::string("only oneDNN's reference implementation (") + pd.impl_info_str() + ")");
    }
    kernel->b_s8_.resize(static_cast<size_t>(bt * k * n));
    kernel->acc_.resize(static_cast<size_t>(bt * rows * n));
    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] = memory(src_md, Engine(), DNNL_MEMORY_NONE);
    args[DNNL_ARG_WEIGHTS] = memory(w_md, Engine(), kernel->b_s8_.data());
    args[DNNL_ARG_DST] = memory(dst_md, Engine(), kernel->acc_.data());
    kernel->matmul_ = PrimitiveCall(dnnl::matmul(pd), std::move(args));
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(qlinear_ ? 3 : 1);
    const int64_t rows = batches_ * m_;
    const int64_t b_cols = batches_ * n_;  // b's columns over its batch, as the zero points count them
    const std::vector<int32_t> a_zp = ZeroPointValues(ctx.input(2));
    const std::vector<int32_t> b_zp = ZeroPointValues(ctx.input(qlinear_ ? 5 : 3));
    const auto valid = [](size_t count, int64_t per_matrix, int64_t all) {
      return count == 1 || static_cast<int64_t>(count) == per_matrix || static_cast<int64_t>(count) == all;
    };
    if (!valid(a_zp.size(), m_, rows) || !valid(b_zp.size(), n_, b_cols)) {
      return ctx.Error("a zero point is neither a scalar nor one per row of a / column of b");
    }
    const int32_t base = b_unsigned_ ? 128 : 0;
    if (b_unsigned_) {
      const uint8_t* bp = b.data<uint8_t>();
      for (size_t i = 0; i < b_s8_.size(); ++i) b_s8_[i] = static_cast<int8_t>(static_cast<int32_t>(bp[i]) - 128);
    } else {
      std::memcpy(b_s8_.data(), b.raw_data(), b_s8_.size());
    }
    matmul_.SetHandle(DNNL_ARG_SRC, a.raw_data());
    matmul_.Execute();

    std::vector<int64_t> row_sums(static_cast<size_t>(rows)), col_sums(static_cast<size_t>(b_cols), 0);
    const bool a_unsigned = a.dtype() == DType::kU8;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t sum = 0;
      for (int64_t i = 0; i < k_; ++i) {
        sum += a_unsigned ? a.data<uint8_t>()[r * k_ + i] : a.data<int8_t>()[r * k_ + i];
      }
      row_sums[static_cast<size_t>(r)] = sum;
    }
    for (int64_t bt = 0; bt < batches_; ++bt) {
      for (int64_t i = 0; i < k_; ++i) {
        for (int64_t j = 0; j < n_; ++j) col_sums[static_cast<size_t>(bt * n_ + j)] += b_s8_[(bt * k_ + i) * n_ + j];
      }
    }
    std::vector<float> a_scale, b_scale;
    float y_scale = 1.0f;
    int32_t y_zp = 0;
    if (qlinear_) {
      a_scale = AsFloats(*ctx.input(1));
      b_scale = AsFloats(*ctx.input(4));
      const std::vector<float> ys = AsFloats(*ctx.input(6));
      const std::vector<int32_t> yz = ZeroPointValues(ctx.input(7));
      if (!valid(a_scale.size(), m_, rows) || !valid(b_scale.size(), n_, b_cols) || ys.size() != 1 || yz.size() != 1) {
        return ctx.Error("a scale is neither a scalar nor one per row of a / column of b, or y's is not a scalar");
      }
      y_scale = ys[0];
      y_zp = yz[0];
    }
    const int64_t total = rows * n_;
    void* out = ctx.output(0)->raw_data();
#pragma omp parallel for schedule(static)
    for (int64_t idx = 0; idx < total; ++idx) {
      const int64_t r = idx / n_, j = idx % n_, col = r / m_ * n_ + j;
      // A 2-D b has one set of columns: the per-batch column index folds onto it.
      const size_t bc = static_cast<size_t>(batches_ == 1 ? j : col);
      const int64_t za = a_zp[static_cast<size_t>(r) % a_zp.size()];
      const int64_t offset = base - b_zp[bc % b_zp.size()];
      const int64_t acc =
          acc_[static_cast<size_t>(idx)] - za * col_sums[bc] + offset * (row_sums[static_cast<size_t>(r)] - k_ * za);
      if (!qlinear_) {
        static_cast<int32_t*>(out)[idx] = static_cast<int32_t>(static_cast<uint32_t>(acc));
        continue;
      }
      const float multiplier =
          a_scale[static_cast<size_t>(r) % a_scale.size()] * b_scale[bc % b_scale.size()] / y_scale;
      const double v = std::nearbyint(static_cast<float>(acc) * multiplier) + y_zp;  // float, as the reference
      if (y_unsigned_) {
        static_cast<uint8_t*>(out)[idx] = FromDouble<uint8_t>(v);
      } else {
        static_cast<int8_t*>(out)[idx] = FromDouble<int8_t>(v);
      }
    }
    return Status();
  }

 private:
  IntMatMulGeneralKernel() = default;

 public:
  std::string Isa() const override { return matmul_.Impl(); }

 private:
  PrimitiveCall matmul_;
  std::vector<int8_t> b_s8_;
  std::vector<int32_t> acc_;
  int64_t batches_ = 1, m_ = 1, k_ = 1, n_ = 1;
  bool qlinear_ = false, b_unsigned_ = false, y_unsigned_ = false;
};

// The fused path when oneDNN can take it, else the general one; both refusals are the reason.
Result<std::unique_ptr<IKernel>> CreateIntMatMul(const KernelInit& init, bool qlinear) {
  auto fused = IntMatMulKernel::Create(init, qlinear);
  if (fused.ok() || fused.status().code() != StatusCode::kUnsupported) return fused;
  // The s32 path has no bias: QLinearGemm runs on the oneDNN path or on the reference.
  if (init.node.HasInput(8)) return fused;
  auto general = IntMatMulGeneralKernel::Create(init, qlinear);
  if (general.ok() || general.status().code() != StatusCode::kUnsupported) return general;
  return Unsupported(fused.status().message() + "; s32 path: " + general.status().message());
}

// ---------------------------------------------------------------------------------------------------------------
// QuantizeLinear / DequantizeLinear (f32 x or y, f32 scale, u8/s8) and DynamicQuantizeLinear: loops that
// compute exactly what the reference does. Per-tensor parameters make them elementwise, so they read and
// write whatever order the producer wrote; per-axis ones need plain order.

template <typename Q>
void Quantize(const float* x, int64_t n, const float* scale, const int32_t* zp, bool per_tensor, int64_t axis_dim,
              int64_t inner, Q* y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = per_tensor ? 0 : i / inner % axis_dim;
    const float v = std::nearbyint(x[i] / scale[c]) + static_cast<float>(zp[c]);
    // NaN becomes 0, as the reference's saturating conversion makes it.
    y[i] = std::isnan(v) ? Q{0}
                         : static_cast<Q>(std::clamp(v, static_cast<float>(std::numeric_limits<Q>::lowest()),
                                                     static_cast<float>(std::numeric_limits<Q>::max())));
  }
}

template <typename Q>
void Dequantize(const Q* x, int64_t n, const float* scale, const int32_t* zp, bool per_tensor, int64_t axis_dim,
                int64_t inner, float* y) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = per_tensor ? 0 : i / inner % axis_dim;
    y[i] = static_cast<float>(static_cast<int32_t>(x[i]) - zp[c]) * scale[c];
  }
}

class LinearQuantKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, bool quantize) {
    const Node& node = init.node;
    const ValueInfo* x = InputInfo(init, 0);
    const ValueInfo* scale = InputInfo(init, 1);
    if (!StaticShape(x)) return Unsupported("shapes known only at run time");
    if (scale == nullptr || scale->dtype != DType::kF32) return Unsupported("x_scale or y_scale is not f32");
    if (init.opset >= 21 && node.GetInt("block_size", 0) != 0) return Unsupported("blocked quantization");
    auto kernel = std::unique_ptr<LinearQuantKernel>(new LinearQuantKernel());
    kernel->quantize_ = quantize;
    if (quantize) {
      if (x->dtype != DType::kF32) return Unsupported(std::string(DTypeName(x->dtype)) + " x");
      const ValueInfo* zp = InputInfo(init, 2);
      const int64_t output_dtype = init.opset >= 21 ? node.GetInt("output_dtype", 0) : 0;
      kernel->q_dtype_ = zp != nullptr ? zp->dtype : (output_dtype == 3 ? DType::kI8 : DType::kU8);
      if (output_dtype != 0 && output_dtype != 2 && output_dtype != 3) return Unsupported("output_dtype not u8/s8");
    } else {
      kernel->q_dtype_ = x->dtype;
    }
    if (!IsInt8(kernel->q_dtype_)) return Unsupported(std::string(DTypeName(kernel->q_dtype_)) + " quantized values");
    if (StaticShape(scale) && NumElements(scale->shape) > 1) {
      ASSIGN_OR_RETURN(const int64_t axis,
                       NormalizeAxis(node.GetInt("axis", 1), static_cast<int64_t>(x->shape.size()), node));
      kernel->per_tensor_ = false;
      kernel->axis_dim_ = x->shape[static_cast<size_t>(axis)];
      kernel->inner_ = Product(x->shape, static_cast<size_t>(axis) + 1);
      if (NumElements(scale->shape) != kernel->axis_dim_) return Unsupported("scale does not match the axis");
    } else if (!scale->shape.empty() && NumElements(scale->shape) != 1) {
      return Unsupported("scale shape known only at run time");
    }
    kernel->layout_ = kernel->per_tensor_ ? x->layout : Layout::kPlain;
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& scale = *ctx.input(1);
    const size_t count = static_cast<size_t>(scale.numel());
    zp_.assign(count, 0);
    if (const Tensor* zp = ctx.input(2); zp != nullptr && zp->defined()) {
      if (static_cast<size_t>(zp->numel()) != count) return ctx.Error("zero point and scale differ in size");
      for (size_t c = 0; c < count; ++c) zp_[c] = static_cast<int32_t>(zp->GetAsInt64(static_cast<int64_t>(c)));
    }
    const float* s = scale.data<float>();
    const bool u8 = q_dtype_ == DType::kU8;
    if (quantize_) {
      Tensor& y = *ctx.output(0);
      if (u8) Quantize(x.data<float>(), x.numel(), s, zp_.data(), per_tensor_, axis_dim_, inner_, y.data<uint8_t>());
      if (!u8) Quantize(x.data<float>(), x.numel(), s, zp_.data(), per_tensor_, axis_dim_, inner_, y.data<int8_t>());
    } else {
      float* y = ctx.output(0)->data<float>();
      if (u8) Dequantize(x.data<uint8_t>(), x.numel(), s, zp_.data(), per_tensor_, axis_dim_, inner_, y);
      if (!u8) Dequantize(x.data<int8_t>(), x.numel(), s, zp_.data(), per_tensor_, axis_dim_, inner_, y);
    }
    return Status();
  }
  Layout InputLayout(size_t i) const override { return i == 0 ? layout_ : Layout::kPlain; }
  Layout OutputLayout(size_t) const override { return layout_; }

 private:
  LinearQuantKernel() = default;
  bool quantize_ = true;
  bool per_tensor_ = true;
  int64_t axis_dim_ = 1, inner_ = 1;
  DType q_dtype_ = DType::kU8;
  Layout layout_ = Layout::kPlain;
  std::vector<int32_t> zp_;
};

class DynamicQuantizeKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    if (x == nullptr || x->dtype != DType::kF32) return Unsupported("x is not f32");
    auto kernel = std::unique_ptr<DynamicQuantizeKernel>(new DynamicQuantizeKernel());
    kernel->layout_ = x->layout;  // elementwise with one range: any order will do
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const float* x = ctx.input(0)->data<float>();
    const int64_t n = ctx.input(0)->numel();
    float lo = 0.0f, hi = 0.0f;
    bool finite = true;
#pragma omp parallel for reduction(min : lo) reduction(max : hi) reduction(&& : finite)
    for (int64_t i = 0; i < n; ++i) {
      finite = finite && std::isfinite(x[i]);
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
    if (!finite) return ctx.Error("x holds inf or NaN, which leaves the quantization range undefined");
    // The reference's formulas, in the same float operations, so both give the same bytes.
    const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    const float zero_point = std::nearbyint(std::clamp(0.0f - lo / scale, 0.0f, 255.0f));
    const int32_t zp = static_cast<int32_t>(zero_point);
    Quantize(x, n, &scale, &zp, true, 1, 1, ctx.output(0)->data<uint8_t>());
    ctx.output(1)->data<float>()[0] = scale;
    ctx.output(2)->data<uint8_t>()[0] = static_cast<uint8_t>(zp);
    return Status();
  }
  Layout InputLayout(size_t i) const override { return i == 0 ? layout_ : Layout::kPlain; }
  Layout OutputLayout(size_t i) const override { return i == 0 ? layout_ : Layout::kPlain; }

 private:
  DynamicQuantizeKernel() = default;
  Layout layout_ = Layout::kPlain;
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateQLinearConv(const KernelInit& init) { return CreateIntConv(init, true); }
Result<std::unique_ptr<IKernel>> CreateConvInteger(const KernelInit& init) { return CreateIntConv(init, false); }
Result<std::unique_ptr<IKernel>> CreateQLinearMatMul(const KernelInit& init) { return CreateIntMatMul(init, true); }
Result<std::unique_ptr<IKernel>> CreateMatMulInteger(const KernelInit& init) { return CreateIntMatMul(init, false); }
Result<std::unique_ptr<IKernel>> CreateQuantizeLinear(const KernelInit& init) {
  return LinearQuantKernel::Create(init, true);
}
Result<std::unique_ptr<IKernel>> CreateDequantizeLinear(const KernelInit& init) {
  return LinearQuantKernel::Create(init, false);
}
Result<std::unique_ptr<IKernel>> CreateDynamicQuantizeLinear(const KernelInit& init) {
  return DynamicQuantizeKernel::Create(init);
}

}  // namespace chipfit::cpu
