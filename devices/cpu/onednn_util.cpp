// oneDNN engine, stream, descriptors and post-op helpers for the CPU kernels.
#include "devices/cpu/onednn_util.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace chipfit::cpu {

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& Stream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

dnnl::memory::data_type ToDnnl(DType dtype) {
  using dt = dnnl::memory::data_type;
  switch (dtype) {
    case DType::kF32: return dt::f32;
    case DType::kF16: return dt::f16;
    case DType::kBF16: return dt::bf16;
    case DType::kI8: return dt::s8;
    case DType::kU8: return dt::u8;
    case DType::kI32: return dt::s32;
    default: return dt::undef;
  }
}

dnnl::memory::dims ToDims(const Shape& shape) { return {shape.begin(), shape.end()}; }

dnnl::memory::desc Describe(const Shape& shape, dnnl::memory::data_type type, Layout layout) {
  const auto dims = ToDims(shape);
  if (layout == Layout::kChannelsLast && shape.size() == 4) {
    return {dims, type, dnnl::memory::format_tag::nhwc};
  }
  if (layout == Layout::kBlocked8 && shape.size() == 4) return {dims, type, dnnl::memory::format_tag::nChw8c};
  // Row-major strides for any rank (a scalar becomes a one-element 1-D tensor).
  if (dims.empty()) return {{1}, type, dnnl::memory::format_tag::a};
  dnnl::memory::dims strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * dims[i];
  return {dims, type, strides};
}

dnnl::memory::desc Describe(const Shape& shape, DType dtype, Layout layout) {
  return Describe(shape, ToDnnl(dtype), layout);
}

Status RequireStaticF32(const KernelInit& init, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs) {
    const ValueInfo* in = i < init.inputs.size() ? init.inputs[i] : nullptr;
    if (in == nullptr) return Unsupported("input " + std::to_string(i) + " is missing");
    for (int64_t d : in->shape) {
      if (d < 0) return Unsupported("shapes known only at run time");
      if (d == 0) return Unsupported("empty tensor");
    }
    if (in->dtype != DType::kF32) return Unsupported(std::string(DTypeName(in->dtype)) + " input");
  }
  return Status();
}

ActivationQuant ChooseActivationQuant(const QuantParams& p) {
  ActivationQuant q;
  if (p.min >= 0.0f) {
    q.scale = p.max > 0.0f ? p.max / 255.0f : 1.0f;
  } else {
    q.type = dnnl::memory::data_type::s8;
    const float bound = std::max(std::fabs(p.min), std::fabs(p.max));
    q.scale = bound > 0.0f ? bound / 127.0f : 1.0f;
  }
  return q;
}

ActivationQuant AsymmetricU8(const QuantParams& p) {
  ActivationQuant q;
  const float lo = std::min(p.min, 0.0f), hi = std::max(p.max, 0.0f);
  q.scale = hi > lo ? (hi - lo) / 255.0f : 1.0f;
  q.zero_point = static_cast<int32_t>(std::clamp(std::nearbyint(-lo / q.scale), 0.0f, 255.0f));
  return q;
}

bool HasVnni() {
  const auto isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx2_vnni || isa == dnnl::cpu_isa::avx512_core_vnni ||
         isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

bool IsReferenceImpl(const std::string& impl_info) { return impl_info.rfind("ref", 0) == 0; }

Status EltwiseChain::AddActivation(const std::string& activation, const std::vector<float>& params) {
  using alg = dnnl::algorithm;
  auto param = [&](size_t i, float fallback) { return i < params.size() ? params[i] : fallback; };
  if (activation.empty()) return Status();
  if (activation == "Relu") {
    Add(alg::eltwise_relu, 0.0f, 0.0f);
  } else if (activation == "LeakyRelu") {
    Add(alg::eltwise_relu, param(0, 0.01f), 0.0f);
  } else if (activation == "Clip") {
    AddClip(param(0, -std::numeric_limits<float>::max()), param(1, std::numeric_limits<float>::max()));
  } else if (activation == "Sigmoid") {
    Add(alg::eltwise_logistic, 0.0f, 0.0f);
  } else if (activation == "Tanh") {
    Add(alg::eltwise_tanh, 0.0f, 0.0f);
  } else if (activation == "HardSigmoid") {
    // oneDNN 2.7 has no hardsigmoid: max(0, min(1, alpha·x + beta)) as linear then clip.
    AddLinear(param(0, 0.2f), param(1, 0.5f));
    AddClip(0.0f, 1.0f);
  } else if (activation == "HardSwish") {
    Add(alg::eltwise_hardswish, 0.0f, 0.0f);
  } else if (activation == "Swish") {
    Add(alg::eltwise_swish, 1.0f, 0.0f);  // x · sigmoid(1 · x)
  } else {
    return Unsupported("activation " + activation + " has no oneDNN post-op");
  }
  return Status();
}

void EltwiseChain::AddClip(float lo, float hi) {
  if (!ops_.empty() && ops_.back().alg == dnnl::algorithm::eltwise_clip_v2) {
    // clamp(clamp(x, a, b), lo, hi) = clamp(x, clamp(a, lo, hi), clamp(b, lo, hi)).
    Op& last = ops_.back();
    last.alpha = std::clamp(last.alpha, lo, hi);
    last.beta = std::clamp(last.beta, lo, hi);
    return;
  }
  Add(dnnl::algorithm::eltwise_clip_v2, lo, hi);
}

void EltwiseChain::AddLinear(float scale, float shift) {
  if (!ops_.empty() && ops_.back().alg == dnnl::algorithm::eltwise_clip_v2) {
    // s · clamp(u, lo, hi) + t = clamp(s · u + t, s · lo + t, s · hi + t), the bounds swapped for s < 0.
    const Op clip = ops_.back();
    ops_.pop_back();
    AddLinear(scale, shift);
    const float a = scale * clip.alpha + shift, b = scale * clip.beta + shift;
    Add(dnnl::algorithm::eltwise_clip_v2, std::min(a, b), std::max(a, b));
    return;
  }
  if (!ops_.empty() && ops_.back().alg == dnnl::algorithm::eltwise_linear) {
    Op& last = ops_.back();  // s · (a · x + b) + t
    last.alpha *= scale;
    last.beta = scale * last.beta + shift;
    return;
  }
  Add(dnnl::algorithm::eltwise_linear, scale, shift);
}

void EltwiseChain::Add(dnnl::algorithm alg, float alpha, float beta) { ops_.push_back({alg, alpha, beta}); }

void EltwiseChain::AppendTo(dnnl::post_ops& ops) const {
  for (const Op& op : ops_) ops.append_eltwise(1.0f, op.alg, op.alpha, op.beta);
}

std::string PrimitiveCall::Impl() const {
  if (!primitive_) return {};
  const char* info = nullptr;
  if (dnnl_primitive_desc_query(primitive_.get_primitive_desc(), dnnl_query_impl_info_str, 0,
                                static_cast<void*>(&info)) != dnnl_success ||
      info == nullptr) {
    return {};
  }
  return info;
}

}  // namespace chipfit::cpu
