// Reference RandomUniform, RandomNormal (+Like), Bernoulli.
//
// Every draw is deterministic. With a `seed` attribute the values follow from the seed alone; without
// one they follow from the node's name. ONNX leaves an unseeded generator's values open, and a
// profiler has no use for fresh randomness: the reference run, each target's run, a device that falls
// back to the reference and every repeated timing iteration must see the same values, or drift
// between targets would measure the generator instead of the precision, and a data-dependent branch
// could time differently from one run to the next. The price is that a node inside a Loop body draws
// the same values on every iteration. The generator is splitmix64 (core/tensor/random.h), not numpy's,
// so values never equal the ONNX test data; only their distribution does.
#include <bit>
#include <cmath>
#include <numbers>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "core/reference/conv_util.h"
#include "core/reference/ops.h"
#include "core/reference/ref_util.h"
#include "core/reference/reference_kernels.h"
#include "core/tensor/random.h"

namespace chipfit {
namespace {

// The `dtype` attribute as a chipfit dtype; absent, `fallback` (the input's dtype for the *Like ops).
Result<DType> OutputDType(const InferContext& ctx, DType fallback) {
  if (!ctx.node().Has("dtype")) return fallback;
  const int64_t onnx_type = ctx.node().GetInt("dtype", 1);
  const std::optional<DType> dtype = DTypeFromOnnx(static_cast<int32_t>(onnx_type));
  if (!dtype) return ctx.Error("dtype " + std::to_string(onnx_type) + " is not an ONNX tensor type");
  return *dtype;
}

Status RequireFloat(const InferContext& ctx, DType dtype) {
  if (IsFloatingDType(dtype)) return Status::Ok();
  return Unsupported(ctx.node().Describe() + ": output dtype " + std::string(DTypeName(dtype)) +
                     " is not a floating type (float16, float, double, bfloat16)");
}

enum class Distribution { kUniform, kNormal };

// RandomUniform/RandomNormal take their shape from the `shape` attribute, the *Like ops from input 0.
template <Distribution kDist, bool kLike>
Status InferRandom(InferContext& ctx) {
  DType dtype = DType::kF32;
  Shape shape;
  if constexpr (kLike) {
    const ValueInfo* x = ctx.input(0);
    if (x == nullptr) return ctx.Error("missing input");
    ASSIGN_OR_RETURN(dtype, OutputDType(ctx, x->dtype));
    shape = x->shape;
  } else {
    ASSIGN_OR_RETURN(dtype, OutputDType(ctx, DType::kF32));
    if (!ctx.node().Has("shape")) return ctx.Error("attribute shape is required");
    shape = ctx.node().GetInts("shape");
    for (int64_t d : shape) {
      if (d < 0) return ctx.Error("shape " + JoinInts(shape) + " has a negative dim");
    }
  }
  RETURN_IF_ERROR(RequireFloat(ctx, dtype));
  if constexpr (kDist == Distribution::kUniform) {
    const float low = ctx.node().GetFloat("low", 0.0f), high = ctx.node().GetFloat("high", 1.0f);
    if (!(low <= high)) {
      return ctx.Error("low " + std::to_string(low) + " must not exceed high " + std::to_string(high));
    }
  }
  ctx.SetOutput(0, dtype, shape);
  return Status::Ok();
}

// Uniform in [low, high). Rounding to a narrow type can land on `high`; such draws are redrawn, and a
// range too narrow for the type to hold any value below high gives low.
template <typename T>
void FillUniform(SplitMix64& rng, double low, double high, T* out, int64_t n) {
  const T low_t = FromDouble<T>(low);
  for (int64_t i = 0; i < n; ++i) {
    T v = low_t;
    for (int attempt = 0; attempt < 64; ++attempt) {
      const T draw = FromDouble<T>(low + (high - low) * rng.Unit());
      if (static_cast<double>(draw) < high || low == high) {
        v = draw;
        break;
      }
    }
    out[i] = v;
  }
}

// Box-Muller: each pair of uniforms gives two independent standard normals.
template <typename T>
void FillNormal(SplitMix64& rng, double mean, double scale, T* out, int64_t n) {
  for (int64_t i = 0; i < n; i += 2) {
    const double radius = std::sqrt(-2.0 * std::log(1.0 - rng.Unit()));  // 1 - [0, 1) avoids log(0)
    const double angle = 2.0 * std::numbers::pi * rng.Unit();
    out[i] = FromDouble<T>(mean + scale * radius * std::cos(angle));
    if (i + 1 < n) out[i + 1] = FromDouble<T>(mean + scale * radius * std::sin(angle));
  }
}

template <Distribution kDist, bool kLike>
Status RunRandom(KernelContext& ctx) {
  Tensor& y = *ctx.output(0);
  SplitMix64 rng = RandomStream(ctx.node());
  return VisitKernelDType(ctx.node(), y.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      return Internal(ctx.node().Describe() + ": integer output passed shape inference");
    } else if constexpr (kDist == Distribution::kUniform) {
      FillUniform(rng, ctx.node().GetFloat("low", 0.0f), ctx.node().GetFloat("high", 1.0f), y.data<T>(), y.numel());
    } else {
      FillNormal(rng, ctx.node().GetFloat("mean", 0.0f), ctx.node().GetFloat("scale", 1.0f), y.data<T>(), y.numel());
    }
    return Status::Ok();
  });
}

// ---------------------------------------------------------------------------------------------
// Bernoulli

Status InferBernoulli(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input");
  RETURN_IF_ERROR(CheckDType(ctx, 0, kFloatDTypes));
  ASSIGN_OR_RETURN(DType dtype, OutputDType(ctx, x->dtype));
  if (!IsFloatingDType(dtype) && !IsIntegerDType(dtype) && dtype != DType::kBool) {
    return Unsupported(ctx.node().Describe() + ": output dtype " + std::string(DTypeName(dtype)) +
                       " is not numeric or bool");
  }
  ctx.SetOutput(0, dtype, x->shape);
  return Status::Ok();
}

Status RunBernoulli(KernelContext& ctx) {
  const std::vector<double> p = ToDoubles(*ctx.input(0));
  std::vector<double> draws(p.size());
  SplitMix64 rng = RandomStream(ctx.node());
  for (size_t i = 0; i < p.size(); ++i) {
    if (!(p[i] >= 0.0 && p[i] <= 1.0)) {
      return ctx.Error("probability " + std::to_string(p[i]) + " at flat index " + std::to_string(i) +
                       " is outside [0, 1]");
    }
    draws[i] = rng.Unit() < p[i] ? 1.0 : 0.0;
  }
  StoreDoubles(draws, ctx.output(0));
  return Status::Ok();
}

}  // namespace

std::vector<OpEntry> RandomOps() {
  using D = Distribution;
  return {
      {"RandomUniform", InferRandom<D::kUniform, false>, RunRandom<D::kUniform, false>},
      {"RandomNormal", InferRandom<D::kNormal, false>, RunRandom<D::kNormal, false>},
      {"RandomUniformLike", InferRandom<D::kUniform, true>, RunRandom<D::kUniform, true>},
      {"RandomNormalLike", InferRandom<D::kNormal, true>, RunRandom<D::kNormal, true>},
      {"Bernoulli", InferBernoulli, RunBernoulli},
  };
}

bool IsRandomOp(const std::string& op_type) {
  static const std::set<std::string> kRandom = {"RandomNormal",      "RandomUniform", "RandomNormalLike",
                                                "RandomUniformLike", "Multinomial",   "Bernoulli"};
  return kRandom.contains(op_type);
}

}  // namespace chipfit
