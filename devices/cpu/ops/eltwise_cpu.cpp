// Elementwise activations and unary math (fp32): oneDNN eltwise chains, and an own loop for tiny
// tensors and for the functions oneDNN 2.6 lacks (Erf, Softsign, Floor, Ceil, ThresholdedRelu).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numbers>
#include <optional>

#include "devices/cpu/onednn_util.h"
#include "devices/cpu/ops/cpu_ops.h"

namespace chipfit::cpu {
namespace {

using dnnl::algorithm;
using dnnl::memory;

// The functions an op is made of; most are oneDNN eltwise algorithms with the same alpha/beta.
enum class Fn {
  kRelu,  // x < 0 ? alpha·x : x
  kLinear,
  kClip,  // min(max(x, alpha), beta)
  kLogistic,
  kTanh,
  kElu,
  kGeluErf,
  kGeluTanh,
  kExp,
  kLog,
  kSqrt,
  kAbs,
  kSoftplus,
  kMish,
  kRound,
  kHardSwish,
  kPow,  // alpha · x^beta
  // Own only:
  kErf,
  kSoftsign,
  kFloor,
  kCeil,
  kThresholdedRelu,
};

struct Step {
  Fn fn;
  float alpha = 0.0f, beta = 0.0f;
};

std::optional<algorithm> OnednnAlgorithm(Fn fn) {
  switch (fn) {
    case Fn::kRelu: return algorithm::eltwise_relu;
    case Fn::kLinear: return algorithm::eltwise_linear;
    case Fn::kClip: return algorithm::eltwise_clip_v2;
    case Fn::kLogistic: return algorithm::eltwise_logistic;
    case Fn::kTanh: return algorithm::eltwise_tanh;
    case Fn::kElu: return algorithm::eltwise_elu;
    case Fn::kGeluErf: return algorithm::eltwise_gelu_erf;
    case Fn::kGeluTanh: return algorithm::eltwise_gelu_tanh;
    case Fn::kExp: return algorithm::eltwise_exp;
    case Fn::kLog: return algorithm::eltwise_log;
    case Fn::kSqrt: return algorithm::eltwise_sqrt;
    case Fn::kAbs: return algorithm::eltwise_abs;
    case Fn::kSoftplus: return algorithm::eltwise_soft_relu;
    case Fn::kMish: return algorithm::eltwise_mish;
    case Fn::kRound: return algorithm::eltwise_round;
    case Fn::kHardSwish: return algorithm::eltwise_hardswish;
    case Fn::kPow: return algorithm::eltwise_pow;
    default: return std::nullopt;
  }
}

float Softplus(float x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

float Eval(const Step& s, float x) {
  switch (s.fn) {
    case Fn::kRelu: return x < 0 ? s.alpha * x : x;
    case Fn::kLinear: return s.alpha * x + s.beta;
    case Fn::kClip: return std::min(std::max(x, s.alpha), s.beta);  // NaN passes through
    case Fn::kLogistic: return 1.0f / (1.0f + std::exp(-x));
    case Fn::kTanh: return std::tanh(x);
    case Fn::kElu: return x > 0 ? x : s.alpha * std::expm1(x);
    case Fn::kGeluErf: return 0.5f * x * (1.0f + std::erf(x * static_cast<float>(1.0 / std::numbers::sqrt2)));
    case Fn::kGeluTanh: {
      const float k = static_cast<float>(std::sqrt(2.0 / std::numbers::pi));
      return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
    }
    case Fn::kExp: return std::exp(x);
    case Fn::kLog: return std::log(x);
    case Fn::kSqrt: return std::sqrt(x);
    case Fn::kAbs: return std::fabs(x);
    case Fn::kSoftplus: return Softplus(x);
    case Fn::kMish: return x * std::tanh(Softplus(x));
    case Fn::kRound: return std::nearbyint(x);  // halves to even, as ONNX Round
    case Fn::kHardSwish: return x * std::clamp(x / 6.0f + 0.5f, 0.0f, 1.0f);
    case Fn::kPow: return s.alpha * std::pow(x, s.beta);
    case Fn::kErf: return std::erf(x);
    case Fn::kSoftsign: return x / (1.0f + std::fabs(x));
    case Fn::kFloor: return std::floor(x);
    case Fn::kCeil: return std::ceil(x);
    case Fn::kThresholdedRelu: return x > s.alpha ? x : 0.0f;
  }
  return x;
}

// Functions cheap enough that the own loop beats a oneDNN call for a few thousand elements.
bool IsCheap(Fn fn) {
  switch (fn) {
    case Fn::kRelu:
    case Fn::kLinear:
    case Fn::kClip:
    case Fn::kAbs:
    case Fn::kRound:
    case Fn::kHardSwish:
    case Fn::kFloor:
    case Fn::kCeil:
    case Fn::kThresholdedRelu:
    case Fn::kSoftsign: return true;
    default: return false;
  }
}

// Clip's bounds: attributes before opset 11, then optional constant scalar inputs.
Result<Step> ClipStep(const KernelInit& init) {
  const Node& node = init.node;
  float lo = -FLT_MAX, hi = FLT_MAX;
  if (init.opset < 11) {
    lo = node.GetFloat("min", lo);
    hi = node.GetFloat("max", hi);
    return Step{Fn::kClip, lo, hi};
  }
  for (size_t i = 1; i <= 2; ++i) {
    const ValueInfo* bound = i < init.inputs.size() ? init.inputs[i] : nullptr;
    if (bound == nullptr) continue;
    if (bound->value == nullptr) return Unsupported("Clip bounds computed at run time");
    if (bound->dtype != DType::kF32 || bound->value->numel() != 1) return Unsupported("Clip bound is not an f32 scalar");
    (i == 1 ? lo : hi) = bound->value->data<float>()[0];
  }
  return Step{Fn::kClip, lo, hi};
}

// The chain of functions computing `node`, applied one after the other.
Result<std::vector<Step>> PlanUnary(const KernelInit& init) {
  const Node& node = init.node;
  const std::string& op = node.op_type;
  auto alpha = [&](float fallback) { return node.GetFloat("alpha", fallback); };
  if (op == "Relu") return std::vector<Step>{{Fn::kRelu}};
  if (op == "LeakyRelu") return std::vector<Step>{{Fn::kRelu, alpha(0.01f)}};
  if (op == "Clip") {
    ASSIGN_OR_RETURN(Step clip, ClipStep(init));
    return std::vector<Step>{clip};
  }
  if (op == "Sigmoid") return std::vector<Step>{{Fn::kLogistic}};
  // oneDNN 2.6 has no hardsigmoid: max(0, min(1, alpha·x + beta)) as linear then clip.
  if (op == "HardSigmoid") {
    return std::vector<Step>{{Fn::kLinear, alpha(0.2f), node.GetFloat("beta", 0.5f)}, {Fn::kClip, 0.0f, 1.0f}};
  }
  if (op == "HardSwish") return std::vector<Step>{{Fn::kHardSwish}};
  if (op == "Tanh") return std::vector<Step>{{Fn::kTanh}};
  if (op == "Elu") return std::vector<Step>{{Fn::kElu, alpha(1.0f)}};
  if (op == "Selu") {
    return std::vector<Step>{{Fn::kElu, alpha(1.67326319217681884765625f)},
                             {Fn::kLinear, node.GetFloat("gamma", 1.05070102214813232421875f), 0.0f}};
  }
  if (op == "Celu") {
    // alpha·elu(x / alpha): the spec's max(0, x) + min(0, alpha·(exp(x / alpha) − 1)).
    const float a = alpha(1.0f);
    if (a == 0.0f) return Unsupported("Celu alpha is 0");
    return std::vector<Step>{{Fn::kLinear, 1.0f / a, 0.0f}, {Fn::kElu, 1.0f}, {Fn::kLinear, a, 0.0f}};
  }
  if (op == "Gelu") {
    const std::string approximate = node.GetString("approximate", "none");
    if (approximate == "none") return std::vector<Step>{{Fn::kGeluErf}};
    if (approximate == "tanh") return std::vector<Step>{{Fn::kGeluTanh}};
    return Unsupported("Gelu approximation '" + approximate + "'");
  }
  if (op == "Exp") return std::vector<Step>{{Fn::kExp}};
  if (op == "Log") return std::vector<Step>{{Fn::kLog}};
  if (op == "Sqrt") return std::vector<Step>{{Fn::kSqrt}};
  if (op == "Abs") return std::vector<Step>{{Fn::kAbs}};
  if (op == "Neg") return std::vector<Step>{{Fn::kLinear, -1.0f, 0.0f}};
  if (op == "Softplus") return std::vector<Step>{{Fn::kSoftplus}};
  if (op == "Mish") return std::vector<Step>{{Fn::kMish}};
  if (op == "Round") return std::vector<Step>{{Fn::kRound}};
  if (op == "Reciprocal") return std::vector<Step>{{Fn::kPow, 1.0f, -1.0f}};
  if (op == "Erf") return std::vector<Step>{{Fn::kErf}};
  if (op == "Softsign") return std::vector<Step>{{Fn::kSoftsign}};
  if (op == "Floor") return std::vector<Step>{{Fn::kFloor}};
  if (op == "Ceil") return std::vector<Step>{{Fn::kCeil}};
  if (op == "ThresholdedRelu") return std::vector<Step>{{Fn::kThresholdedRelu, alpha(1.0f)}};
  return Unsupported(op + " is not an elementwise op the CPU device knows");
}

// Below these sizes the own serial loop is faster than a oneDNN call. Measured on this 2-core VM
// (oneDNN 2.6, 2 OpenMP threads, best of 20 × 100 calls): a jit:avx2 eltwise call costs ≥ 2.4 µs
// whatever its size (OpenMP fork/join; 0.4 µs with one thread), while the own loop takes ~1 µs for
// 1024 Relu values and ~1.5 µs for 256 Sigmoid values (scalar std::exp, ~6 ns each).
constexpr int64_t kSmallCheap = 2048;
constexpr int64_t kSmallTranscendental = 256;
// The own loop for the functions oneDNN lacks goes parallel from here.
constexpr int64_t kParallelFrom = 32768;

int64_t SmallLimit(const std::vector<Step>& steps) {
  const bool cheap = std::all_of(steps.begin(), steps.end(), [](const Step& s) { return IsCheap(s.fn); });
  return cheap ? kSmallCheap : kSmallTranscendental;
}

// Both kernels are blind to the memory order: they read and write the producer's order, so
// channels-last activations stay channels-last.
class OwnUnaryKernel final : public IKernel {
 public:
  OwnUnaryKernel(std::vector<Step> steps, Layout layout) : steps_(std::move(steps)), layout_(layout) {}

  Status Run(KernelContext& ctx) override {
    const float* x = ctx.input(0)->data<float>();
    float* y = ctx.output(0)->data<float>();
    const int64_t n = ctx.output(0)->numel();
    const std::vector<Step>& steps = steps_;
#pragma omp parallel for schedule(static) if (n >= kParallelFrom)
    for (int64_t i = 0; i < n; ++i) {
      float v = x[i];
      for (const Step& s : steps) v = Eval(s, v);
      y[i] = v;
    }
    return Status();
  }
  Layout InputLayout(size_t i) const override { return i == 0 ? layout_ : Layout::kPlain; }
  Layout OutputLayout(size_t) const override { return layout_; }

 private:
  std::vector<Step> steps_;
  Layout layout_;
};

class OnednnUnaryKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, const std::vector<Step>& steps) {
    const int64_t n = NumElements(init.inputs[0]->shape);
    // Order-blind: a dense 1-D view of the tensor (one jit kernel for every rank and order).
    const memory::desc md({n}, memory::data_type::f32, memory::format_tag::a);
    auto kernel = std::unique_ptr<OnednnUnaryKernel>(new OnednnUnaryKernel(init.inputs[0]->layout));
    for (const Step& s : steps) {
      dnnl::eltwise_forward::primitive_desc pd;
      RETURN_IF_ERROR(Guard(init.node, "eltwise", [&] {
        dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, *OnednnAlgorithm(s.fn), md, s.alpha,
                                         s.beta);
        pd = dnnl::eltwise_forward::primitive_desc(desc, Engine());
      }));
      if (IsReferenceImpl(pd.impl_info_str())) return Unsupported("only oneDNN's reference eltwise implementation");
      std::unordered_map<int, memory> args;
      args[DNNL_ARG_SRC] = memory(md, Engine(), DNNL_MEMORY_NONE);
      args[DNNL_ARG_DST] = memory(md, Engine(), DNNL_MEMORY_NONE);
      kernel->calls_.emplace_back(dnnl::eltwise_forward(pd), std::move(args));
    }
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    // The first step reads the input; later ones work in place on the output.
    const void* src = ctx.input(0)->raw_data();
    void* dst = ctx.output(0)->raw_data();
    for (PrimitiveCall& call : calls_) {
      call.SetHandle(DNNL_ARG_SRC, src);
      call.SetHandle(DNNL_ARG_DST, dst);
      call.Execute();
      src = dst;
    }
    return Status();
  }
  Layout InputLayout(size_t i) const override { return i == 0 ? layout_ : Layout::kPlain; }
  Layout OutputLayout(size_t) const override { return layout_; }

 private:
  explicit OnednnUnaryKernel(Layout layout) : layout_(layout) {}
  std::vector<PrimitiveCall> calls_;
  Layout layout_;
};

enum class Use { kSmall, kOnednn, kAny };

Result<std::unique_ptr<IKernel>> CreateUnary(const KernelInit& init, Use use) {
  RETURN_IF_ERROR(RequireStaticF32(init, {0}));
  ASSIGN_OR_RETURN(std::vector<Step> steps, PlanUnary(init));
  const bool onednn_has_all =
      std::all_of(steps.begin(), steps.end(), [](const Step& s) { return OnednnAlgorithm(s.fn).has_value(); });
  const int64_t n = NumElements(init.inputs[0]->shape);
  if (use == Use::kSmall && n > SmallLimit(steps)) {
    return Unsupported(std::to_string(n) + " values: a oneDNN call is faster above " +
                       std::to_string(SmallLimit(steps)));
  }
  if (use == Use::kOnednn) {
    if (!onednn_has_all) return Unsupported(init.node.op_type + " has no oneDNN 2.6 eltwise algorithm");
    return OnednnUnaryKernel::Create(init, steps);
  }
  return std::unique_ptr<IKernel>(std::make_unique<OwnUnaryKernel>(std::move(steps), init.inputs[0]->layout));
}

}  // namespace

Result<std::unique_ptr<IKernel>> CreateEltwiseSmallF32(const KernelInit& init) { return CreateUnary(init, Use::kSmall); }
Result<std::unique_ptr<IKernel>> CreateEltwiseF32(const KernelInit& init) { return CreateUnary(init, Use::kOnednn); }
Result<std::unique_ptr<IKernel>> CreateEltwiseOwnF32(const KernelInit& init) { return CreateUnary(init, Use::kAny); }

}  // namespace chipfit::cpu
