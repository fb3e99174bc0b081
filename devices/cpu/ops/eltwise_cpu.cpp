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

template <Fn F>
float Eval(float x, float alpha, float beta) {
  // Branch-free so that it vectorises (a branch mispredicts on every other random sign).
  if constexpr (F == Fn::kRelu) return std::max(x, 0.0f) + alpha * std::min(x, 0.0f);
  if constexpr (F == Fn::kLinear) return alpha * x + beta;
  if constexpr (F == Fn::kClip) return std::min(std::max(x, alpha), beta);  // NaN passes through
  if constexpr (F == Fn::kLogistic) return 1.0f / (1.0f + std::exp(-x));
  if constexpr (F == Fn::kTanh) return std::tanh(x);
  if constexpr (F == Fn::kElu) return x > 0 ? x : alpha * std::expm1(x);
  if constexpr (F == Fn::kGeluErf) {
    return 0.5f * x * (1.0f + std::erf(x * static_cast<float>(1.0 / std::numbers::sqrt2)));
  }
  if constexpr (F == Fn::kGeluTanh) {
    const float k = static_cast<float>(std::sqrt(2.0 / std::numbers::pi));
    return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
  }
  if constexpr (F == Fn::kExp) return std::exp(x);
  if constexpr (F == Fn::kLog) return std::log(x);
  if constexpr (F == Fn::kSqrt) return std::sqrt(x);
  if constexpr (F == Fn::kAbs) return std::fabs(x);
  if constexpr (F == Fn::kSoftplus) return Softplus(x);
  if constexpr (F == Fn::kMish) return x * std::tanh(Softplus(x));
  if constexpr (F == Fn::kRound) return std::nearbyint(x);  // halves to even, as ONNX Round
  if constexpr (F == Fn::kHardSwish) return x * std::clamp(x / 6.0f + 0.5f, 0.0f, 1.0f);
  if constexpr (F == Fn::kPow) return alpha * std::pow(x, beta);
  if constexpr (F == Fn::kErf) return std::erf(x);
  if constexpr (F == Fn::kSoftsign) return x / (1.0f + std::fabs(x));
  if constexpr (F == Fn::kFloor) return std::floor(x);
  if constexpr (F == Fn::kCeil) return std::ceil(x);
  if constexpr (F == Fn::kThresholdedRelu) return x > alpha ? x : 0.0f;
  return x;
}

// One function over a range, a loop per function so the cheap ones vectorise; in may equal out.
template <Fn F>
void ApplyRange(const float* in, float* out, int64_t n, float alpha, float beta) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = Eval<F>(in[i], alpha, beta);
}

void Apply(const Step& s, const float* in, float* out, int64_t n) {
  const float a = s.alpha, b = s.beta;
  switch (s.fn) {
    case Fn::kRelu: return ApplyRange<Fn::kRelu>(in, out, n, a, b);
    case Fn::kLinear: return ApplyRange<Fn::kLinear>(in, out, n, a, b);
    case Fn::kClip: return ApplyRange<Fn::kClip>(in, out, n, a, b);
    case Fn::kLogistic: return ApplyRange<Fn::kLogistic>(in, out, n, a, b);
    case Fn::kTanh: return ApplyRange<Fn::kTanh>(in, out, n, a, b);
    case Fn::kElu: return ApplyRange<Fn::kElu>(in, out, n, a, b);
    case Fn::kGeluErf: return ApplyRange<Fn::kGeluErf>(in, out, n, a, b);
    case Fn::kGeluTanh: return ApplyRange<Fn::kGeluTanh>(in, out, n, a, b);
    case Fn::kExp: return ApplyRange<Fn::kExp>(in, out, n, a, b);
    case Fn::kLog: return ApplyRange<Fn::kLog>(in, out, n, a, b);
    case Fn::kSqrt: return ApplyRange<Fn::kSqrt>(in, out, n, a, b);
    case Fn::kAbs: return ApplyRange<Fn::kAbs>(in, out, n, a, b);
    case Fn::kSoftplus: return ApplyRange<Fn::kSoftplus>(in, out, n, a, b);
    case Fn::kMish: return ApplyRange<Fn::kMish>(in, out, n, a, b);
    case Fn::kRound: return ApplyRange<Fn::kRound>(in, out, n, a, b);
    case Fn::kHardSwish: return ApplyRange<Fn::kHardSwish>(in, out, n, a, b);
    case Fn::kPow: return ApplyRange<Fn::kPow>(in, out, n, a, b);
    case Fn::kErf: return ApplyRange<Fn::kErf>(in, out, n, a, b);
    case Fn::kSoftsign: return ApplyRange<Fn::kSoftsign>(in, out, n, a, b);
    case Fn::kFloor: return ApplyRange<Fn::kFloor>(in, out, n, a, b);
    case Fn::kCeil: return ApplyRange<Fn::kCeil>(in, out, n, a, b);
    case Fn::kThresholdedRelu: return ApplyRange<Fn::kThresholdedRelu>(in, out, n, a, b);
  }
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
    if (bound->dtype != DType::kF32 || bound->value->numel() != 1) {
      return Unsupported("Clip bound is not an f32 scalar");
    }
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
// (oneDNN 2.6 jit:avx2, 2 OpenMP threads, best of 30 × 100 calls): a oneDNN eltwise call costs
// ~1.0 µs at any small size (OpenMP fork/join), 2.0 µs for HardSigmoid's two; the own loop costs
// 0.35 µs + 0.2 ns per value for the cheap functions (HardSigmoid: 1.2 µs for 4096, 3.4 µs vs
// oneDNN's 3.8 µs for 16384) and ~4 ns (Sigmoid) to ~12 ns (Tanh) per value for the others
// (scalar libm; Sigmoid 64: 0.56 vs 1.03 µs, 256: 1.16 vs 1.08 µs; Tanh 256: 3.3 vs 2.3 µs).
constexpr int64_t kSmallCheap = 4096;
constexpr int64_t kSmallTranscendental = 128;
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
    // Blocks small enough that a chain of functions finds its values in L1.
    constexpr int64_t kBlock = 4096;
    const int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (n >= kParallelFrom)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t begin = b * kBlock, len = std::min(kBlock, n - begin);
      const float* src = x + begin;
      for (const Step& s : steps_) {
        Apply(s, src, y + begin, len);
        src = y + begin;
      }
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

Result<std::unique_ptr<IKernel>> CreateEltwiseSmallF32(const KernelInit& init) {
  return CreateUnary(init, Use::kSmall);
}
Result<std::unique_ptr<IKernel>> CreateEltwiseF32(const KernelInit& init) { return CreateUnary(init, Use::kOnednn); }
Result<std::unique_ptr<IKernel>> CreateEltwiseOwnF32(const KernelInit& init) { return CreateUnary(init, Use::kAny); }

}  // namespace chipfit::cpu
