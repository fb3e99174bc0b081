// The unary math oneDNN 2.6 lacks (Sin … Atanh), Clip with bounds given at run time, PRelu, Shrink, ReduceLogSum and
// ReduceLogSumExp (f32 and f64), LRN, MeanVarianceNormalization and Hardmax in fp32: own OpenMP loops over plain
// tensors.
//
// oneDNN's LRN is not used: it centres an even-sized window on (size − 1) / 2 channels either side,
// ONNX puts the extra channel after; the own loop below is one pass over `size` channel planes.
//
// Shapes known only at run time are fine: every kernel derives its loop plan from the shapes it is
// run with (and keeps it while they stay the same).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/reference/ref_util.h"
#include "devices/cpu/ops/kernel_groups.h"

namespace chipfit::cpu {
namespace {

// Element counts from which the loops fork OpenMP threads (a fork/join costs ~1 µs on the 2-core
// development VM, see eltwise_cpu.cpp): libm's scalar float functions cost ~7 (sinf) to ~30 ns
// (atanhf) a value there, the vectorised loops (compares, multiply-adds) well under 1 ns.
constexpr int64_t kParallelTranscendental = 2048;
constexpr int64_t kParallelCheap = 32768;

// Present f32 inputs. Unknown dims and empty tensors are fine: the loops take their sizes at run time.
Status RequireF32(const KernelInit& init, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs) {
    const ValueInfo* in = i < init.inputs.size() ? init.inputs[i] : nullptr;
    if (in == nullptr) return Unsupported("input " + std::to_string(i) + " is missing");
    if (in->dtype != DType::kF32) return Unsupported(std::string(DTypeName(in->dtype)) + " input");
  }
  return Status();
}

// `pick ? a : b` as a bit blend. GCC vectorises this; with its default -ftrapping-math it keeps a
// float select after a float compare as a branch (a random sign then mispredicts every other value).
inline float Blend(bool pick, float a, float b) {
  const int32_t mask = -static_cast<int32_t>(pick);
  return std::bit_cast<float>((std::bit_cast<int32_t>(a) & mask) | (std::bit_cast<int32_t>(b) & ~mask));
}

bool KnownShape(const Shape& shape) {
  return std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d >= 0; });
}

// Calls body(begin, end) over [0, n) in blocks of `block`, in parallel from `parallel_from` elements.
template <typename Body>
void ForBlocks(int64_t n, int64_t block, int64_t parallel_from, Body&& body) {
  const int64_t blocks = (n + block - 1) / block;
#pragma omp parallel for schedule(static) if (n >= parallel_from && blocks > 1)
  for (int64_t b = 0; b < blocks; ++b) body(b * block, std::min(n, (b + 1) * block));
}

// ---------------------------------------------------------------------------------------------------------------
// Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh: libm's float functions (within an
// ulp or two of the exact value; the reference rounds the double result once).

enum class Math { kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kAsinh, kAcosh, kAtanh };

template <Math F>
void MathRange(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    if constexpr (F == Math::kSin) y[i] = std::sin(v);
    if constexpr (F == Math::kCos) y[i] = std::cos(v);
    if constexpr (F == Math::kTan) y[i] = std::tan(v);
    if constexpr (F == Math::kAsin) y[i] = std::asin(v);
    if constexpr (F == Math::kAcos) y[i] = std::acos(v);
    if constexpr (F == Math::kAtan) y[i] = std::atan(v);
    if constexpr (F == Math::kSinh) y[i] = std::sinh(v);
    if constexpr (F == Math::kCosh) y[i] = std::cosh(v);
    if constexpr (F == Math::kAsinh) y[i] = std::asinh(v);
    if constexpr (F == Math::kAcosh) y[i] = std::acosh(v);
    if constexpr (F == Math::kAtanh) y[i] = std::atanh(v);
  }
}

using MathFn = void (*)(const float*, float*, int64_t);

struct MathOp {
  const char* op_type;
  MathFn fn;
};

constexpr MathOp kMathOps[] = {
    {"Sin", MathRange<Math::kSin>},     {"Cos", MathRange<Math::kCos>},     {"Tan", MathRange<Math::kTan>},
    {"Asin", MathRange<Math::kAsin>},   {"Acos", MathRange<Math::kAcos>},   {"Atan", MathRange<Math::kAtan>},
    {"Sinh", MathRange<Math::kSinh>},   {"Cosh", MathRange<Math::kCosh>},   {"Asinh", MathRange<Math::kAsinh>},
    {"Acosh", MathRange<Math::kAcosh>}, {"Atanh", MathRange<Math::kAtanh>},
};

class MathKernel final : public IKernel {
 public:
  explicit MathKernel(MathFn fn) : fn_(fn) {}
  Status Run(KernelContext& ctx) override {
    const float* x = ctx.input(0)->data<float>();
    float* y = ctx.output(0)->data<float>();
    ForBlocks(ctx.output(0)->numel(), 1024, kParallelTranscendental,
              [&](int64_t begin, int64_t end) { fn_(x + begin, y + begin, end - begin); });
    return Status();
  }

 private:
  MathFn fn_;
};

Result<std::unique_ptr<IKernel>> CreateMath(const KernelInit& init) {
  RETURN_IF_ERROR(RequireF32(init, {0}));
  for (const MathOp& op : kMathOps) {
    if (init.node.op_type == op.op_type) return std::unique_ptr<IKernel>(std::make_unique<MathKernel>(op.fn));
  }
  return Unsupported(init.node.op_type + " is not a unary math op of the CPU device");
}

// ---------------------------------------------------------------------------------------------------------------
// Shrink: x < −lambd ? x + bias : x > lambd ? x − bias : 0 (NaN gives 0, as in the reference).

class ShrinkKernel final : public IKernel {
 public:
  ShrinkKernel(float lambd, float bias) : lambd_(lambd), bias_(bias) {}
  Status Run(KernelContext& ctx) override {
    const float* x = ctx.input(0)->data<float>();
    float* y = ctx.output(0)->data<float>();
    const float lambd = lambd_, bias = bias_;
    ForBlocks(ctx.output(0)->numel(), 4096, kParallelCheap, [&](int64_t begin, int64_t end) {
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) {
        const float v = x[i];
        y[i] = Blend(v < -lambd, v + bias, Blend(v > lambd, v - bias, 0.0f));
      }
    });
    return Status();
  }

 private:
  float lambd_, bias_;
};

Result<std::unique_ptr<IKernel>> CreateShrink(const KernelInit& init) {
  RETURN_IF_ERROR(RequireF32(init, {0}));
  return std::unique_ptr<IKernel>(
      std::make_unique<ShrinkKernel>(init.node.GetFloat("lambd", 0.5f), init.node.GetFloat("bias", 0.0f)));
}

// ---------------------------------------------------------------------------------------------------------------
// Clip whose bounds are inputs computed at run time (constant bounds take the eltwise kernels): each
// run reads them. As the reference: min > max gives max everywhere, and NaN passes through.

class ClipKernel final : public IKernel {
 public:
  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    Tensor& y = *ctx.output(0);
    return VisitKernelDType(ctx.node(), x.dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      if constexpr (!std::is_arithmetic_v<T> || std::is_same_v<T, bool>) {
        return ctx.Error("Clip of " + std::string(DTypeName(x.dtype())));
      } else {
        T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
        for (size_t k = 1; k <= 2; ++k) {
          const Tensor* bound = ctx.input(k);
          if (bound == nullptr) continue;
          if (bound->numel() != 1 || bound->dtype() != x.dtype())
            return ctx.Error("a bound is not one value of X's type");
          (k == 1 ? lo : hi) = bound->data<T>()[0];
        }
        const T* in = x.data<T>();
        T* out = y.data<T>();
        ForBlocks(x.numel(), 4096, kParallelCheap, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            T v = in[i];
            if (v < lo) v = lo;
            if (v > hi) v = hi;
            out[i] = v;
          }
        });
        return Status();
      }
    });
  }
};

Result<std::unique_ptr<IKernel>> CreateClip(const KernelInit& init) {
  const ValueInfo* x = init.inputs.empty() ? nullptr : init.inputs[0];
  if (x == nullptr) return Unsupported("input 0 is missing");
  if (init.opset < 11) return Unsupported("bounds are attributes: the eltwise kernels take them");
  if (!IsOneOf(x->dtype, {DType::kF32, DType::kF64, DType::kI8, DType::kU8, DType::kI16, DType::kU16, DType::kI32,
                          DType::kU32, DType::kI64, DType::kU64})) {
    return Unsupported(std::string(DTypeName(x->dtype)) + " input");
  }
  return std::unique_ptr<IKernel>(std::make_unique<ClipKernel>());
}

// ---------------------------------------------------------------------------------------------------------------
// PRelu: y = x < 0 ? slope · x : x, the slope broadcast unidirectionally to X (from opset 7; before,
// a 1-D slope of X's channel count applies along axis 1).

Shape PReluSlopeShape(const Shape& x, const Shape& slope, int64_t opset) {
  if (opset >= 7 || slope.size() != 1 || x.size() < 2 || slope[0] != x[1] || slope[0] == 1) return slope;
  Shape per_channel(x.size() - 1, 1);
  per_channel[0] = slope[0];
  return per_channel;
}

// X in rows of `inner` contiguous values; a row's slopes start at slope_offset(row) and either
// advance with X (`varying`) or stay one value. Dims of 1 are dropped and adjacent dims that the
// slope spans alike (both as X, or both broadcast) merged.
struct PReluPlan {
  Shape x, slope;  // the shapes the plan is for
  int64_t inner = 1;
  bool varying = false;
  std::vector<int64_t> outer_dims, outer_slope_strides;  // row-major, outermost first

  int64_t SlopeOffset(int64_t row) const {
    int64_t off = 0;
    for (size_t d = outer_dims.size(); d-- > 0;) {
      off += row % outer_dims[d] * outer_slope_strides[d];
      row /= outer_dims[d];
    }
    return off;
  }
};

Result<PReluPlan> PlanPRelu(const Shape& x, const Shape& given_slope, int64_t opset) {
  const Shape slope = PReluSlopeShape(x, given_slope, opset);
  PReluPlan plan;
  plan.x = x;
  plan.slope = given_slope;
  if (slope.size() > x.size()) return Unsupported("slope of higher rank than X");
  const size_t lead = x.size() - slope.size();
  std::vector<int64_t> dims, strides;  // innermost first
  std::vector<bool> spans;
  int64_t slope_stride = 1;
  for (size_t d = x.size(); d-- > 0;) {
    const int64_t s = d >= lead ? slope[d - lead] : 1;
    if (s != 1 && s != x[d]) {
      return Unsupported("slope of shape " + ShapeToString(given_slope) + " does not broadcast to X of shape " +
                         ShapeToString(x));
    }
    if (x[d] == 1) continue;
    const bool span = s != 1;
    if (!dims.empty() && spans.back() == span) {
      dims.back() *= x[d];
    } else {
      dims.push_back(x[d]);
      strides.push_back(span ? slope_stride : 0);
      spans.push_back(span);
    }
    if (span) slope_stride *= s;
  }
  if (!dims.empty()) {
    plan.inner = dims[0];
    plan.varying = spans[0];
  }
  for (size_t k = dims.size(); k-- > 1;) {
    plan.outer_dims.push_back(dims[k]);
    plan.outer_slope_strides.push_back(strides[k]);
  }
  return plan;
}

class PReluKernel final : public IKernel {
 public:
  explicit PReluKernel(int64_t opset) : opset_(opset) {}
  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& slope = *ctx.input(1);
    if (!planned_ || plan_.x != x.shape() || plan_.slope != slope.shape()) {
      Result<PReluPlan> plan = PlanPRelu(x.shape(), slope.shape(), opset_);
      if (!plan.ok()) return ctx.Error(plan.status().message());
      plan_ = std::move(plan).value();
      planned_ = true;
    }
    const float* px = x.data<float>();
    const float* ps = slope.data<float>();
    float* py = ctx.output(0)->data<float>();
    const int64_t inner = plan_.inner;
    if (inner == 0) return Status();
    const int64_t rows = x.numel() / inner;
    // Rows in blocks of about 4096 values.
    const int64_t rows_per_block = std::max<int64_t>(1, 4096 / inner);
    ForBlocks(rows, rows_per_block, std::max<int64_t>(1, kParallelCheap / inner), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const float* xr = px + r * inner;
        float* yr = py + r * inner;
        const float* sr = ps + plan_.SlopeOffset(r);
        if (plan_.varying) {
#pragma omp simd
          for (int64_t i = 0; i < inner; ++i) yr[i] = Blend(xr[i] < 0.0f, sr[i] * xr[i], xr[i]);
        } else {
          const float s = sr[0];
#pragma omp simd
          for (int64_t i = 0; i < inner; ++i) yr[i] = Blend(xr[i] < 0.0f, s * xr[i], xr[i]);
        }
      }
    });
    return Status();
  }

 private:
  int64_t opset_;
  bool planned_ = false;
  PReluPlan plan_;
};

Result<std::unique_ptr<IKernel>> CreatePRelu(const KernelInit& init) {
  RETURN_IF_ERROR(RequireF32(init, {0, 1}));
  auto kernel = std::make_unique<PReluKernel>(init.opset);
  const Shape& x = init.inputs[0]->shape;
  const Shape& slope = init.inputs[1]->shape;
  if (slope.size() > x.size()) return Unsupported("slope of higher rank than X");
  if (KnownShape(x) && KnownShape(slope)) RETURN_IF_ERROR(PlanPRelu(x, slope, init.opset).status());
  return std::unique_ptr<IKernel>(std::move(kernel));
}

// ---------------------------------------------------------------------------------------------------------------
// Groups of values reduced together (ReduceLogSum, ReduceLogSumExp, MeanVarianceNormalization).

// A plain tensor's values grouped by the kept dims: group g = o · inner + i gathers the values at
// Base(o) + roff[r] + l + i over r and l. Dims of 1 are dropped and adjacent dims that are both kept or
// both reduced merged; a trailing kept run is `inner` (then run = 1), a trailing reduced run is `run`
// (then inner = 1). Groups are numbered as the kept dims' row-major order, the reduction's output order.
struct GroupView {
  Shape shape;  // the shape the view is for
  int64_t outer = 1, inner = 1, run = 1;
  std::vector<int64_t> outer_dims, outer_strides;  // row-major, outermost first
  std::vector<int64_t> roff;                       // the other reduced dims' offsets, row-major

  int64_t groups() const { return outer * inner; }
  int64_t Base(int64_t o) const {
    int64_t off = 0;
    for (size_t d = outer_dims.size(); d-- > 0;) {
      off += o % outer_dims[d] * outer_strides[d];
      o /= outer_dims[d];
    }
    return off;
  }
};

GroupView MakeGroupView(const Shape& shape, const std::vector<bool>& reduced) {
  std::vector<int64_t> dims, strides;  // innermost first
  std::vector<bool> red;
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    const int64_t n = shape[d];
    if (n == 1) continue;
    if (!dims.empty() && red.back() == reduced[d]) {
      dims.back() *= n;
    } else {
      dims.push_back(n);
      strides.push_back(stride);
      red.push_back(reduced[d]);
    }
    stride *= n;
  }
  GroupView v;
  v.shape = shape;
  size_t first = 0;
  if (!dims.empty()) {
    (red[0] ? v.run : v.inner) = dims[0];
    first = 1;
  }
  std::vector<int64_t> rdims, rstrides;
  for (size_t k = dims.size(); k-- > first;) {
    if (red[k]) {
      rdims.push_back(dims[k]);
      rstrides.push_back(strides[k]);
    } else {
      v.outer_dims.push_back(dims[k]);
      v.outer_strides.push_back(strides[k]);
      v.outer *= dims[k];
    }
  }
  v.roff = {0};
  for (size_t k = 0; k < rdims.size(); ++k) {
    std::vector<int64_t> next;
    next.reserve(v.roff.size() * static_cast<size_t>(rdims[k]));
    for (int64_t base : v.roff) {
      for (int64_t j = 0; j < rdims[k]; ++j) next.push_back(base + j * rstrides[k]);
    }
    v.roff = std::move(next);
  }
  return v;
}

// How the groups' work is cut into tasks: a few groups of many values each are split into `splits`
// parts (partial results merged in a fixed order, so results do not depend on the thread count).
constexpr int64_t kLanes = 256;        // groups side by side when inner > 1
constexpr int64_t kSplitUnit = 16384;  // values per split part at least
constexpr int64_t kMaxSplits = 64;
constexpr int64_t kFewTasks = 16;

int64_t SplitsFor(int64_t tasks, int64_t values_per_task, int64_t max_splits) {
  if (tasks >= kFewTasks || values_per_task < 2 * kSplitUnit) return 1;
  return std::clamp<int64_t>(values_per_task / kSplitUnit, 1, std::min(kMaxSplits, max_splits));
}

// The largest value with `a < v` as std::max_element compares (a NaN never wins).
template <typename T = float>
struct MaxOp {
  using Value = T;
  using Acc = T;
  Acc init = -std::numeric_limits<T>::infinity();
  Acc Contig(Acc a, const T* p, int64_t n, int64_t /*g*/) const {
    for (int64_t k = 0; k < n; ++k) a = a < p[k] ? p[k] : a;
    return a;
  }
  void Lanes(Acc* acc, const T* p, int64_t n, int64_t /*g0*/) const {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] < p[i] ? p[i] : acc[i];
  }
  Acc Merge(Acc a, Acc b) const { return a < b ? b : a; }
};

// Σ term(value, group) in double.
template <typename Term, typename T = float>
struct SumOp {
  using Value = T;
  using Acc = double;
  Term term;
  Acc init = 0.0;
  Acc Contig(Acc a, const T* p, int64_t n, int64_t g) const {
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (int64_t k = 0; k < n; ++k) s += term(p[k], g);
    return a + s;
  }
  void Lanes(Acc* acc, const T* p, int64_t n, int64_t g0) const {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) acc[i] += term(p[i], g0 + i);
  }
  Acc Merge(Acc a, Acc b) const { return a + b; }
};
template <typename T = float, typename Term>
SumOp<Term, T> Sum(Term term) {
  return SumOp<Term, T>{term};
}

// out[g] = op over group g's values.
template <typename Op>
void ReduceGroups(const GroupView& v, const typename Op::Value* x, typename Op::Acc* out, const Op& op,
                  int64_t parallel_from) {
  using T = typename Op::Value;
  using Acc = typename Op::Acc;
  const int64_t groups = v.groups(), rcount = static_cast<int64_t>(v.roff.size());
  if (groups == 0) return;
  if (v.inner == 1) {
    const int64_t per = rcount * v.run;
    // Values [begin, end) of group o, in whole contiguous pieces.
    auto span = [&](int64_t o, int64_t begin, int64_t end) {
      Acc acc = op.init;
      const T* base = x + v.Base(o);
      for (int64_t j = begin; j < end;) {
        const int64_t r = j / v.run, l = j % v.run, len = std::min(v.run - l, end - j);
        acc = op.Contig(acc, base + v.roff[static_cast<size_t>(r)] + l, len, o);
        j += len;
      }
      return acc;
    };
    const int64_t splits = SplitsFor(groups, per, per);
    const bool parallel = groups * per >= parallel_from;
    if (splits == 1) {
#pragma omp parallel for schedule(static) if (parallel && groups > 1)
      for (int64_t o = 0; o < groups; ++o) out[o] = span(o, 0, per);
      return;
    }
    std::vector<Acc> part(static_cast<size_t>(groups * splits));
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t t = 0; t < groups * splits; ++t) {
      const int64_t o = t / splits, s = t % splits;
      part[static_cast<size_t>(t)] = span(o, per * s / splits, per * (s + 1) / splits);
    }
    for (int64_t o = 0; o < groups; ++o) {
      Acc acc = part[static_cast<size_t>(o * splits)];
      for (int64_t s = 1; s < splits; ++s) acc = op.Merge(acc, part[static_cast<size_t>(o * splits + s)]);
      out[o] = acc;
    }
    return;
  }
  // inner > 1 (run = 1): kLanes neighbouring groups at a time, reading rows of contiguous values.
  const int64_t chunks = (v.inner + kLanes - 1) / kLanes;
  const int64_t tasks = v.outer * chunks;
  const int64_t splits = SplitsFor(tasks, rcount * std::min(v.inner, kLanes), rcount);
  std::vector<Acc> part(splits > 1 ? static_cast<size_t>(groups * splits) : 0);
#pragma omp parallel for schedule(static) if (groups * rcount >= parallel_from && tasks * splits > 1)
  for (int64_t t = 0; t < tasks * splits; ++t) {
    const int64_t s = t % splits, o = t / splits / chunks, i0 = t / splits % chunks * kLanes;
    const int64_t n = std::min(kLanes, v.inner - i0), g0 = o * v.inner + i0;
    Acc acc[kLanes];
    std::fill(acc, acc + n, op.init);
    const T* base = x + v.Base(o) + i0;
    for (int64_t r = rcount * s / splits; r < rcount * (s + 1) / splits; ++r) {
      op.Lanes(acc, base + v.roff[static_cast<size_t>(r)], n, g0);
    }
    Acc* dst = splits == 1 ? out + g0 : part.data() + s * groups + g0;
    std::copy(acc, acc + n, dst);
  }
  if (splits == 1) return;
  for (int64_t g = 0; g < groups; ++g) {
    Acc acc = part[static_cast<size_t>(g)];
    for (int64_t s = 1; s < splits; ++s) acc = op.Merge(acc, part[static_cast<size_t>(s * groups + g)]);
    out[g] = acc;
  }
}

// y[value] = fn(x[value], group) for every value (the same traversal as ReduceGroups).
template <typename Fn>
void MapGroups(const GroupView& v, const float* x, float* y, Fn fn, int64_t parallel_from) {
  const int64_t groups = v.groups(), rcount = static_cast<int64_t>(v.roff.size());
  if (groups == 0) return;
  const bool parallel = groups * rcount * v.run >= parallel_from;
  if (v.inner == 1) {
    const int64_t per = rcount * v.run;
    const int64_t splits = SplitsFor(groups, per, per);
#pragma omp parallel for schedule(static) if (parallel && groups * splits > 1)
    for (int64_t t = 0; t < groups * splits; ++t) {
      const int64_t o = t / splits, s = t % splits, base = v.Base(o);
      const int64_t end = per * (s + 1) / splits;
      for (int64_t j = per * s / splits; j < end;) {
        const int64_t r = j / v.run, l = j % v.run, len = std::min(v.run - l, end - j);
        const int64_t at = base + v.roff[static_cast<size_t>(r)] + l;
#pragma omp simd
        for (int64_t k = 0; k < len; ++k) y[at + k] = fn(x[at + k], o);
        j += len;
      }
    }
    return;
  }
  const int64_t chunks = (v.inner + kLanes - 1) / kLanes;
  const int64_t tasks = v.outer * chunks;
  const int64_t splits = SplitsFor(tasks, rcount * std::min(v.inner, kLanes), rcount);
#pragma omp parallel for schedule(static) if (parallel && tasks * splits > 1)
  for (int64_t t = 0; t < tasks * splits; ++t) {
    const int64_t s = t % splits, o = t / splits / chunks, i0 = t / splits % chunks * kLanes;
    const int64_t n = std::min(kLanes, v.inner - i0), g0 = o * v.inner + i0, base = v.Base(o) + i0;
    for (int64_t r = rcount * s / splits; r < rcount * (s + 1) / splits; ++r) {
      const int64_t at = base + v.roff[static_cast<size_t>(r)];
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) y[at + i] = fn(x[at + i], g0 + i);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The group view of x over `axes` (every dim when reduce_all), kept while x's shape stays the same.
Status UpdateGroupView(const Tensor& x, const std::vector<int64_t>& axes, bool reduce_all, const Node& node,
                       std::optional<GroupView>& view) {
  if (view && view->shape == x.shape()) return Status();
  std::vector<bool> reduced(x.shape().size(), reduce_all);
  ASSIGN_OR_RETURN(const std::vector<int64_t> normalized, NormalizeAxes(axes, x.rank(), node));
  for (int64_t a : normalized) reduced[static_cast<size_t>(a)] = true;
  view = MakeGroupView(x.shape(), reduced);
  return Status();
}

// ReduceLogSum: log Σ x. ReduceLogSumExp: m + log Σ exp(x − m), m the group's largest value (0 when
// that is not finite), as the reference computes it.

template <typename T>
class ReduceLogKernel final : public IKernel {
 public:
  // reduce_all: no axes given (and noop_with_empty_axes not set).
  ReduceLogKernel(bool exp, std::vector<int64_t> axes, bool reduce_all)
      : exp_(exp), axes_(std::move(axes)), reduce_all_(reduce_all) {}
  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    RETURN_IF_ERROR(UpdateGroupView(x, axes_, reduce_all_, ctx.node(), view_));
    const int64_t groups = view_->groups();
    if (ctx.output(0)->numel() != groups) return ctx.Error("output size does not match the reduction");
    const T* px = x.data<T>();
    T* y = ctx.output(0)->data<T>();
    sums_.resize(static_cast<size_t>(groups));
    if (!exp_) {
      ReduceGroups(*view_, px, sums_.data(), Sum<T>([](T v, int64_t) { return static_cast<double>(v); }),
                   kParallelCheap);
      for (int64_t g = 0; g < groups; ++g) y[g] = static_cast<T>(std::log(sums_[static_cast<size_t>(g)]));
      return Status();
    }
    shift_.resize(static_cast<size_t>(groups));
    ReduceGroups(*view_, px, shift_.data(), MaxOp<T>{}, kParallelCheap);
    for (T& m : shift_) m = std::isfinite(m) ? m : T(0);
    const T* shift = shift_.data();
    ReduceGroups(*view_, px, sums_.data(),
                 Sum<T>([shift](T v, int64_t g) { return static_cast<double>(std::exp(v - shift[g])); }),
                 kParallelTranscendental);
    for (int64_t g = 0; g < groups; ++g) {
      const auto k = static_cast<size_t>(g);
      y[g] = static_cast<T>(static_cast<double>(shift_[k]) + std::log(sums_[k]));
    }
    return Status();
  }

 private:
  bool exp_;
  std::vector<int64_t> axes_;
  bool reduce_all_;
  std::optional<GroupView> view_;  // planned again when the input's shape changes
  std::vector<double> sums_;
  std::vector<T> shift_;
};

Result<std::unique_ptr<IKernel>> CreateReduceLog(const KernelInit& init) {
  const bool f64 = !init.inputs.empty() && init.inputs[0] != nullptr && init.inputs[0]->dtype == DType::kF64;
  if (!f64) RETURN_IF_ERROR(RequireF32(init, {0}));
  const Node& node = init.node;
  std::vector<int64_t> axes;
  const bool axes_input = init.opset >= 18;
  if (!axes_input) {
    axes = node.GetInts("axes");
  } else if (init.inputs.size() > 1 && init.inputs[1] != nullptr) {
    if (init.inputs[1]->value == nullptr) return Unsupported("reduction axes computed at run time");
    axes = init.inputs[1]->value->ToInt64Vector();
  }
  const bool noop = axes_input && node.GetInt("noop_with_empty_axes", 0) != 0;
  const int64_t rank = static_cast<int64_t>(init.inputs[0]->shape.size());
  Result<std::vector<int64_t>> normalized = NormalizeAxes(axes, rank, node);
  if (!normalized.ok()) return Unsupported(normalized.status().message());
  const bool reduce_all = axes.empty() && !noop;
  const bool exp = node.op_type == "ReduceLogSumExp";
  if (f64) return std::unique_ptr<IKernel>(std::make_unique<ReduceLogKernel<double>>(exp, std::move(axes), reduce_all));
  return std::unique_ptr<IKernel>(std::make_unique<ReduceLogKernel<float>>(exp, std::move(axes), reduce_all));
}

// ---------------------------------------------------------------------------------------------------------------
// MeanVarianceNormalization: (x − mean) / (sqrt(variance) + 1e-9) over `axes`, the statistics in
// double (two passes, as the reference).

class MvnKernel final : public IKernel {
 public:
  explicit MvnKernel(std::vector<int64_t> axes) : axes_(std::move(axes)) {}
  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    RETURN_IF_ERROR(UpdateGroupView(x, axes_, /*reduce_all=*/false, ctx.node(), view_));
    const int64_t groups = view_->groups();
    if (groups == 0) return Status();
    const double count = static_cast<double>(x.numel()) / static_cast<double>(groups);
    const float* px = x.data<float>();
    mean_.resize(static_cast<size_t>(groups));
    scale_.resize(static_cast<size_t>(groups));
    ReduceGroups(*view_, px, mean_.data(), Sum([](float v, int64_t) { return static_cast<double>(v); }),
                 kParallelCheap);
    for (double& m : mean_) m /= count;
    const double* mean = mean_.data();
    ReduceGroups(*view_, px, scale_.data(), Sum([mean](float v, int64_t g) {
      const double d = static_cast<double>(v) - mean[g];
      return d * d;
    }),
                 kParallelCheap);
    for (double& s : scale_) s = 1.0 / (std::sqrt(s / count) + 1e-9);
    const double* scale = scale_.data();
    MapGroups(
        *view_, px, ctx.output(0)->data<float>(),
        [mean, scale](float v, int64_t g) { return static_cast<float>((static_cast<double>(v) - mean[g]) * scale[g]); },
        kParallelCheap);
    return Status();
  }

 private:
  std::vector<int64_t> axes_;
  std::optional<GroupView> view_;  // planned again when the input's shape changes
  std::vector<double> mean_, scale_;
};

Result<std::unique_ptr<IKernel>> CreateMvn(const KernelInit& init) {
  RETURN_IF_ERROR(RequireF32(init, {0}));
  std::vector<int64_t> axes = init.node.GetInts("axes", {0, 2, 3});
  const int64_t rank = static_cast<int64_t>(init.inputs[0]->shape.size());
  Result<std::vector<int64_t>> normalized = NormalizeAxes(axes, rank, init.node);
  if (!normalized.ok()) return Unsupported(normalized.status().message());
  return std::unique_ptr<IKernel>(std::make_unique<MvnKernel>(std::move(axes)));
}

// ---------------------------------------------------------------------------------------------------------------
// Hardmax: 1 at the first largest value of each row (compared as std::max_element does), 0
// elsewhere. From opset 13 rows run along `axis` (default −1); before, the input is flattened to
// 2-D at `axis` (default 1).

struct Rows {
  int64_t outer = 1, n = 1, inner = 1;
};

Result<Rows> HardmaxRows(const Node& node, int64_t opset, const Shape& shape) {
  const bool legacy = opset < 13;
  const int64_t rank = static_cast<int64_t>(shape.size());
  Result<int64_t> axis = NormalizeAxis(node.GetInt("axis", legacy ? 1 : -1), rank, node);
  if (!axis.ok()) return Unsupported(axis.status().message());
  Rows r;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t n = shape[static_cast<size_t>(d)];
    if (d < *axis) {
      r.outer *= n;
    } else if (d == *axis || legacy) {
      r.n *= n;
    } else {
      r.inner *= n;
    }
  }
  return r;
}

class HardmaxKernel final : public IKernel {
 public:
  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    Result<Rows> rows = HardmaxRows(ctx.node(), ctx.opset(), x.shape());
    if (!rows.ok()) return rows.status();
    const Rows r = *rows;
    const float* px = x.data<float>();
    float* py = ctx.output(0)->data<float>();
    if (x.numel() == 0) return Status();
    const int64_t chunks = (r.inner + kLanes - 1) / kLanes;
    const int64_t tasks = r.outer * chunks;
#pragma omp parallel for schedule(static) if (x.numel() >= kParallelCheap && tasks > 1)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t o = t / chunks, i0 = t % chunks * kLanes, lanes = std::min(kLanes, r.inner - i0);
      const float* xs = px + o * r.n * r.inner + i0;
      float* ys = py + o * r.n * r.inner + i0;
      if (r.inner == 1) {
        int64_t arg = 0;
        for (int64_t k = 1; k < r.n; ++k) arg = xs[arg] < xs[k] ? k : arg;
        std::fill(ys, ys + r.n, 0.0f);
        ys[arg] = 1.0f;
        continue;
      }
      float best[kLanes];
      int64_t arg[kLanes];
      std::copy(xs, xs + lanes, best);
      std::fill(arg, arg + lanes, 0);
      for (int64_t k = 1; k < r.n; ++k) {
        const float* row = xs + k * r.inner;
#pragma omp simd
        for (int64_t i = 0; i < lanes; ++i) {
          const int64_t better = -static_cast<int64_t>(best[i] < row[i]);  // a mask, which vectorises
          best[i] = best[i] < row[i] ? row[i] : best[i];
          arg[i] = (k & better) | (arg[i] & ~better);
        }
      }
      for (int64_t k = 0; k < r.n; ++k) std::fill(ys + k * r.inner, ys + k * r.inner + lanes, 0.0f);
      for (int64_t i = 0; i < lanes; ++i) ys[arg[i] * r.inner + i] = 1.0f;
    }
    return Status();
  }
};

Result<std::unique_ptr<IKernel>> CreateHardmax(const KernelInit& init) {
  RETURN_IF_ERROR(RequireF32(init, {0}));
  const Shape& shape = init.inputs[0]->shape;
  if (shape.empty()) return Unsupported("a scalar input");
  RETURN_IF_ERROR(HardmaxRows(init.node, init.opset, Shape(shape.size(), 1)).status());
  return std::unique_ptr<IKernel>(std::make_unique<HardmaxKernel>());
}

// ---------------------------------------------------------------------------------------------------------------
// LRN: y = x / (bias + alpha / size · Σ x²)^beta, the sum over channels [c − ⌊(size−1)/2⌋, c + ⌈(size−1)/2⌉].

class LrnKernel final : public IKernel {
 public:
  LrnKernel(int64_t size, float alpha, float beta, float bias) : size_(size), beta_(beta), bias_(bias) {
    scale_ = alpha / static_cast<float>(size);
  }
  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    if (x.rank() < 2) return ctx.Error("input must have rank >= 2");
    const int64_t batch = x.dim(0), channels = x.dim(1), plane = x.numel() / std::max<int64_t>(1, batch * channels);
    if (x.numel() == 0) return Status();
    const float* px = x.data<float>();
    float* py = ctx.output(0)->data<float>();
    constexpr int64_t kBlock = 1024;
    const int64_t chunks = (plane + kBlock - 1) / kBlock;
    const int64_t tasks = batch * channels * chunks;
    const int64_t before = (size_ - 1) / 2, after = size_ / 2;
    const float scale = scale_, beta = beta_, bias = bias_;
#pragma omp parallel for schedule(static) if (x.numel() * size_ >= kParallelCheap && tasks > 1)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t nc = t / chunks, p0 = t % chunks * kBlock, len = std::min(kBlock, plane - p0);
      const int64_t n = nc / channels, c = nc % channels;
      float sum[kBlock];
      std::fill(sum, sum + len, 0.0f);
      for (int64_t k = std::max<int64_t>(0, c - before); k <= std::min(channels - 1, c + after); ++k) {
        const float* xk = px + (n * channels + k) * plane + p0;
#pragma omp simd
        for (int64_t i = 0; i < len; ++i) sum[i] += xk[i] * xk[i];
      }
      const float* xc = px + nc * plane + p0;
      float* yc = py + nc * plane + p0;
      if (beta == 0.75f) {  // the default: t^0.75 = sqrt(t) · sqrt(sqrt(t)), far cheaper than powf
        for (int64_t i = 0; i < len; ++i) {
          const float base = bias + scale * sum[i];
          const float root = std::sqrt(base);
          yc[i] = xc[i] / (root * std::sqrt(root));
        }
      } else {
        for (int64_t i = 0; i < len; ++i) yc[i] = xc[i] / std::pow(bias + scale * sum[i], beta);
      }
    }
    return Status();
  }

 private:
  int64_t size_;
  float beta_, bias_, scale_ = 0.0f;
};

Result<std::unique_ptr<IKernel>> CreateLrn(const KernelInit& init) {
  RETURN_IF_ERROR(RequireF32(init, {0}));
  const Node& node = init.node;
  const int64_t size = node.GetInt("size", 0);
  if (size < 1) return Unsupported("attribute size must be given and >= 1");
  if (init.inputs[0]->shape.size() < 2) return Unsupported("input of rank < 2");
  return std::unique_ptr<IKernel>(std::make_unique<LrnKernel>(
      size, node.GetFloat("alpha", 1e-4f), node.GetFloat("beta", 0.75f), node.GetFloat("bias", 1.0f)));
}

}  // namespace

void AddMathKernels(KernelTable& t) {
  constexpr auto kCpu = DeviceKind::kCpu;
  constexpr auto kFp32 = Precision::kFp32;
  for (const MathOp& op : kMathOps) t.Add(op.op_type, "", kCpu, kFp32, {"cpu:unary-math", CreateMath});
  t.Add("PRelu", "", kCpu, kFp32, {"cpu:prelu", CreatePRelu});
  t.Add("Shrink", "", kCpu, kFp32, {"cpu:shrink", CreateShrink});
  t.Add("Clip", "", kCpu, kFp32, {"cpu:clip", CreateClip});
  t.Add("ReduceLogSum", "", kCpu, kFp32, {"cpu:reduce-log", CreateReduceLog});
  t.Add("ReduceLogSumExp", "", kCpu, kFp32, {"cpu:reduce-log", CreateReduceLog});
  t.Add("MeanVarianceNormalization", "", kCpu, kFp32, {"cpu:mvn", CreateMvn});
  t.Add("Hardmax", "", kCpu, kFp32, {"cpu:hardmax", CreateHardmax});
  t.Add("LRN", "", kCpu, kFp32, {"cpu:lrn", CreateLrn});
}

}  // namespace chipfit::cpu
