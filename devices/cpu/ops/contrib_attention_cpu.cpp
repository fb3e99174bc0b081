// ONNX Runtime's contrib attention operators on the CPU (kernel_groups.h): RotaryEmbedding,
// MultiHeadAttention, Attention and GroupQueryAttention in fp32.
//
// The attention ops share the reference's preparation (core/reference/contrib_attention.h: projections,
// biases, caches, rotary embedding, masks), which is linear in the tensors' sizes; what is quadratic,
// softmax(Q·Kᵀ·scale + mask)·V, runs here in float as ORT's CPU kernels do: both products on oneDNN
// matmuls batched over (batch, kv head), the softmax on oneDNN's or, for GroupQueryAttention's row ranges
// and extra denominator terms, a vectorised row loop; one query row per task where oneDNN declines.
#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/reference/contrib_attention.h"
#include "devices/cpu/onednn_util.h"
#include "devices/cpu/ops/kernel_groups.h"

namespace chipfit::cpu {
namespace {

using KernelResult = Result<std::unique_ptr<IKernel>>;

Status RequireF32(const KernelInit& init, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs) {
    const ValueInfo* in = i < init.inputs.size() ? init.inputs[i] : nullptr;
    if (in != nullptr && in->dtype != DType::kF32) {
      return Unsupported("input " + std::to_string(i) + " is " + std::string(DTypeName(in->dtype)) + ", not f32");
    }
  }
  return Status();
}

// Multiply-adds (or values, for the rotary) below which threads cost more than they give.
constexpr int64_t kParallelWork = int64_t{1} << 15;

// One query row: scores over keys [lo, hi), softmax, the weighted sum of V rows into `out`.
void AttendRow(const AttentionPlan& p, int64_t b, int64_t n, int64_t s, float* score, float* out) {
  const int64_t T = p.kv_len, S = p.q_len, H = p.head_size, Hv = p.v_head_size;
  const int64_t kvh = b * p.kv_heads + n / (p.heads / p.kv_heads);
  const float* q = p.q.data() + ((b * p.heads + n) * S + s) * H;
  const float* k = p.k.data() + kvh * p.kv_stride * H;
  const float* v = p.v.data() + kvh * p.kv_stride * Hv;
  const size_t r = static_cast<size_t>(b * S + s);
  const int64_t lo = p.row_begin.empty() ? 0 : p.row_begin[r];
  const int64_t hi = p.row_end.empty() ? T : std::min(p.row_end[r], T);
  const float* mask = p.mask.empty() ? nullptr : p.mask.data() + (b * S + s) * T;
  const float* bias =
      p.bias != nullptr ? p.bias + b * p.bias_batch_stride + n * p.bias_head_stride + s * p.bias_row_stride : nullptr;
  if (hi <= lo) {  // a row that sees no key (GroupQueryAttention's padding)
    std::fill(out, out + Hv, 0.0f);
    return;
  }
  float max = -INFINITY;
  for (int64_t t = lo; t < hi; ++t) {
    const float* kr = k + t * H;
    float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
    for (int64_t h = 0; h < H; ++h) dot += q[h] * kr[h];
    float x = dot * p.scale;
    if (p.softcap > 0.0f) x = p.softcap * std::tanh(x / p.softcap);
    if (mask != nullptr) x += mask[t];
    if (bias != nullptr) x += bias[t];
    score[t] = x;
    max = std::max(max, x);
  }
  // One more term in the denominator: exp(head_sink[n]), or exp(0) for smooth_softmax.
  const bool extra = p.head_sink != nullptr || p.smooth_softmax;
  const float sink = p.head_sink != nullptr ? p.head_sink[n] : 0.0f;
  if (extra) max = std::max(max, sink);
  float sum = extra ? std::exp(sink - max) : 0.0f;
  for (int64_t t = lo; t < hi; ++t) {
    score[t] = std::exp(score[t] - max);
    sum += score[t];
  }
  const float inv = 1.0f / sum;
  std::fill(out, out + Hv, 0.0f);
  for (int64_t t = lo; t < hi; ++t) {
    const float w = score[t] * inv;
    const float* vr = v + t * Hv;
#pragma omp simd
    for (int64_t h = 0; h < Hv; ++h) out[h] += w * vr[h];
  }
}

void RunRows(const AttentionPlan& p, float* out) {
  const int64_t rows = p.batch * p.heads * p.q_len;
  const bool parallel = rows * p.kv_len * (p.head_size + p.v_head_size) >= kParallelWork;
#pragma omp parallel if (parallel)
  {
    std::vector<float> score(static_cast<size_t>(std::max<int64_t>(p.kv_len, 1)));
#pragma omp for schedule(static)
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t s = i % p.q_len, bn = i / p.q_len, b = bn / p.heads, n = bn % p.heads;
      AttendRow(p, b, n, s, score.data(), out + ((b * p.q_len + s) * p.heads + n) * p.v_head_size);
    }
  }
}

// exp(x) for softmax exponents, x in [-87, 0] (the caller clamps: exp(-87) ~ 1.6e-38 is nothing next to
// the row's largest term, 1), in plain arithmetic the compiler vectorises: x = n·ln2 + r, |r| <= ln2/2,
// exp(r) by Cephes' degree-6 polynomial (relative error ~1e-7), 2^n built in the exponent bits. NaN stays NaN.
inline float ExpNonPositive(float x) {
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round to nearest
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float poly = 1.9875691500e-4f;
  poly = poly * r + 1.3981999507e-3f;
  poly = poly * r + 8.3334519073e-3f;
  poly = poly * r + 4.1665795894e-2f;
  poly = poly * r + 1.6666665459e-1f;
  poly = poly * r + 5.0000001201e-1f;
  const float e = poly * r * r + r + 1.0f;
  return e * std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
}

// Turns row (b, n, s) of raw Q·Kᵀ dot products over all T keys into its softmax probabilities,
// with the same scale, softcap, mask, bias and extra denominator term as AttendRow; keys outside the
// row's range get 0.
void SoftmaxRow(const AttentionPlan& p, int64_t b, int64_t n, int64_t s, float* x) {
  const int64_t T = p.kv_len, S = p.q_len;
  const size_t r = static_cast<size_t>(b * S + s);
  const int64_t lo = p.row_begin.empty() ? 0 : std::max<int64_t>(p.row_begin[r], 0);
  const int64_t hi = p.row_end.empty() ? T : std::min(p.row_end[r], T);
  if (hi <= lo) {
    std::fill(x, x + T, 0.0f);
    return;
  }
  std::fill(x, x + lo, 0.0f);
  std::fill(x + hi, x + T, 0.0f);
  const float* mask = p.mask.empty() ? nullptr : p.mask.data() + (b * S + s) * T;
  const float* bias =
      p.bias != nullptr ? p.bias + b * p.bias_batch_stride + n * p.bias_head_stride + s * p.bias_row_stride : nullptr;
  const float scale = p.scale;
#pragma omp simd
  for (int64_t t = lo; t < hi; ++t) x[t] *= scale;
  if (p.softcap > 0.0f) {
    for (int64_t t = lo; t < hi; ++t) x[t] = p.softcap * std::tanh(x[t] / p.softcap);
  }
  if (mask != nullptr) {
#pragma omp simd
    for (int64_t t = lo; t < hi; ++t) x[t] += mask[t];
  }
  if (bias != nullptr) {
#pragma omp simd
    for (int64_t t = lo; t < hi; ++t) x[t] += bias[t];
  }
  float max = -INFINITY;
#pragma omp simd reduction(max : max)
  for (int64_t t = lo; t < hi; ++t) max = x[t] > max ? x[t] : max;
  const bool extra = p.head_sink != nullptr || p.smooth_softmax;
  const float sink = p.head_sink != nullptr ? p.head_sink[n] : 0.0f;
  if (extra) max = std::max(max, sink);
  float sum = extra ? std::exp(sink - max) : 0.0f;
  // Three passes, each of which GCC vectorises (the clamp inside the exponential's loop stops it).
#pragma omp simd
  for (int64_t t = lo; t < hi; ++t) {
    const float y = x[t] - max;
    x[t] = y < -87.0f ? -87.0f : y;
  }
#pragma omp simd
  for (int64_t t = lo; t < hi; ++t) x[t] = ExpNonPositive(x[t]);
#pragma omp simd reduction(+ : sum)
  for (int64_t t = lo; t < hi; ++t) sum += x[t];
  const float inv = 1.0f / sum;
#pragma omp simd
  for (int64_t t = lo; t < hi; ++t) x[t] *= inv;
}

// The softmax's input for row (b, n, s) when oneDNN takes the softmax itself (no row range, no extra
// denominator term): scale, softcap, mask and bias applied in place, in AttendRow's order.
void ScoreRow(const AttentionPlan& p, int64_t b, int64_t n, int64_t s, float* x) {
  const int64_t T = p.kv_len, S = p.q_len;
  const float* mask = p.mask.empty() ? nullptr : p.mask.data() + (b * S + s) * T;
  const float* bias =
      p.bias != nullptr ? p.bias + b * p.bias_batch_stride + n * p.bias_head_stride + s * p.bias_row_stride : nullptr;
  const float scale = p.scale;
  if (p.softcap > 0.0f) {
    for (int64_t t = 0; t < T; ++t) x[t] = p.softcap * std::tanh(x[t] * scale / p.softcap);
  } else if (mask != nullptr) {
#pragma omp simd
    for (int64_t t = 0; t < T; ++t) x[t] = x[t] * scale + mask[t];
    mask = nullptr;
  } else {
#pragma omp simd
    for (int64_t t = 0; t < T; ++t) x[t] *= scale;
  }
  if (mask != nullptr) {
#pragma omp simd
    for (int64_t t = 0; t < T; ++t) x[t] += mask[t];
  }
  if (bias != nullptr) {
#pragma omp simd
    for (int64_t t = 0; t < T; ++t) x[t] += bias[t];
  }
}

// softmax(Q·Kᵀ·scale + mask)·V with both products on oneDNN batched matmuls over (batch, kv head):
// a kv head's query heads are consecutive in Q, so each batch item is [G·S, H] · [H, T] → [G·S, T]
// scores (K read transposed in place through strides), then [G·S, T] · [T, Hv]. The primitives are
// made on the first run and again only when the geometry changes.
class BatchedAttention {
 public:
  // False when oneDNN offers no JIT matmul for this geometry: the caller runs the rows instead.
  bool Run(const AttentionPlan& p, float* out) {
    const std::vector<int64_t> key = {p.batch,  p.heads,     p.kv_heads,    p.q_len,
                                      p.kv_len, p.head_size, p.v_head_size, p.kv_stride};
    if (key != key_) {
      key_ = key;
      ok_ = Make(p);
    }
    if (!ok_) return false;
    const int64_t G = p.heads / p.kv_heads, S = p.q_len, GS = G * S, BK = p.batch * p.kv_heads, Hv = p.v_head_size;
    const int64_t H = p.head_size;
    for (int64_t first = 0; first < BK; first += chunk_) {
      const float* q = p.q.data() + first * GS * H;
      const float* k = p.k.data() + first * p.kv_stride * H;
      const float* v = p.v.data() + first * p.kv_stride * Hv;
      RunChunk(p, first, q, k, v, context_.data() + first * GS * Hv);
    }
    // [B, N, S, Hv] → the output's [B, S, N, Hv].
    const int64_t rows = BK * GS;
#pragma omp parallel for schedule(static) if (rows * Hv >= kParallelWork)
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t bn = i / S, s = i % S, b = bn / p.heads, n = bn % p.heads;
      std::copy_n(context_.data() + i * Hv, Hv, out + ((b * S + s) * p.heads + n) * Hv);
    }
    return true;
  }

 private:
  // Batch items [first, first + chunk_) (b · kv_heads + kv head) into their rows of context_.
  void RunChunk(const AttentionPlan& p, int64_t first, const float* q, const float* k, const float* v, float* context) {
    const int64_t G = p.heads / p.kv_heads, S = p.q_len, GS = G * S;
    qk_.SetHandle(DNNL_ARG_SRC, q);
    qk_.SetHandle(DNNL_ARG_WEIGHTS, k);
    qk_.SetHandle(DNNL_ARG_DST, scores_.data());
    qk_.Execute();
    const int64_t rows = chunk_ * GS;
    // oneDNN's softmax is faster than ours (its exponential is vectorised for the machine), but has no
    // per-row key ranges and no extra denominator term.
    const bool plain = p.row_begin.empty() && p.head_sink == nullptr && !p.smooth_softmax;
#pragma omp parallel for schedule(static) if (rows * p.kv_len >= kParallelWork / 8)
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t bk = first + i / GS, g = (i % GS) / S, s = i % S, b = bk / p.kv_heads;
      const int64_t n = (bk % p.kv_heads) * G + g;
      if (plain) {
        ScoreRow(p, b, n, s, scores_.data() + i * p.kv_len);
      } else {
        SoftmaxRow(p, b, n, s, scores_.data() + i * p.kv_len);
      }
    }
    if (plain) softmax_.Run(scores_.data(), scores_.data());
    pv_.SetHandle(DNNL_ARG_SRC, scores_.data());
    pv_.SetHandle(DNNL_ARG_WEIGHTS, v);
    pv_.SetHandle(DNNL_ARG_DST, context);
    pv_.Execute();
  }

  bool Make(const AttentionPlan& p) {
    namespace md = dnnl;
    using dt = md::memory::data_type;
    const int64_t G = p.heads / p.kv_heads, GS = G * p.q_len, BK = p.batch * p.kv_heads;
    const int64_t T = p.kv_len, H = p.head_size, Hv = p.v_head_size, KS = p.kv_stride;
    if (BK <= 0 || GS <= 0 || T <= 0 || H <= 0 || Hv <= 0 || p.heads % p.kv_heads != 0) return false;
    // The scores of all batch items at once would be B·N·S·T floats: long sequences take them in
    // chunks of equal size (a divisor of B · kv_heads) under kMaxScores; one item over it runs by rows.
    chunk_ = BK;
    while (chunk_ > 1 && chunk_ * GS * T > kMaxScores) {
      --chunk_;
      while (BK % chunk_ != 0) --chunk_;
    }
    if (chunk_ * GS * T > kMaxScores) return false;
    const int64_t C = chunk_;
    const md::memory::desc q({C, GS, H}, dt::f32, md::memory::dims{GS * H, H, 1});
    const md::memory::desc k({C, H, T}, dt::f32, md::memory::dims{KS * H, 1, H});
    const md::memory::desc scores({C, GS, T}, dt::f32, md::memory::dims{GS * T, T, 1});
    const md::memory::desc v({C, T, Hv}, dt::f32, md::memory::dims{KS * Hv, Hv, 1});
    const md::memory::desc context({C, GS, Hv}, dt::f32, md::memory::dims{GS * Hv, Hv, 1});
    auto make = [&](const md::memory::desc& src, const md::memory::desc& wei, const md::memory::desc& dst,
                    PrimitiveCall& call) {
      try {
        const md::matmul::primitive_desc pd(md::matmul::desc(src, wei, dst), Engine());
        if (IsReferenceImpl(pd.impl_info_str())) return false;
        std::unordered_map<int, md::memory> args;
        args[DNNL_ARG_SRC] = md::memory(src, Engine(), DNNL_MEMORY_NONE);
        args[DNNL_ARG_WEIGHTS] = md::memory(wei, Engine(), DNNL_MEMORY_NONE);
        args[DNNL_ARG_DST] = md::memory(dst, Engine(), DNNL_MEMORY_NONE);
        call = PrimitiveCall(md::matmul(pd), std::move(args));
        return true;
      } catch (const md::error&) {
        return false;
      }
    };
    if (!make(q, k, scores, qk_) || !make(scores, v, context, pv_)) return false;
    try {
      const md::memory::desc rows({C * GS, T}, dt::f32, md::memory::dims{T, 1});
      const md::softmax_v2_forward::primitive_desc pd(
          md::softmax_v2_forward::desc(md::prop_kind::forward_inference, md::algorithm::softmax_accurate, rows, rows,
                                       1),
          Engine());
      if (IsReferenceImpl(pd.impl_info_str())) return false;
      softmax_ = PrimitiveCall::SrcDst(md::softmax_v2_forward(pd), rows, rows);
    } catch (const md::error&) {
      return false;
    }
    scores_.assign(static_cast<size_t>(C * GS * T), 0.0f);
    context_.assign(static_cast<size_t>(BK * GS * Hv), 0.0f);
    return true;
  }

  static constexpr int64_t kMaxScores = int64_t{1} << 24;  // 64 MiB of floats
  std::vector<int64_t> key_;
  bool ok_ = false;
  int64_t chunk_ = 1;
  PrimitiveCall qk_, pv_, softmax_;
  std::vector<float> scores_, context_;
};

// The batched matmuls where oneDNN has them, else one query row per task.
void RunPlan(const AttentionPlan& p, BatchedAttention& batched, float* out) {
  if (!batched.Run(p, out)) RunRows(p, out);
}

using PlanFn = Result<AttentionPlan> (*)(KernelContext&);

class AttentionKernel final : public IKernel {
 public:
  explicit AttentionKernel(PlanFn plan) : plan_(plan) {}
  Status Run(KernelContext& ctx) override {
    ASSIGN_OR_RETURN(AttentionPlan plan, plan_(ctx));
    RunPlan(plan, batched_, ctx.output(0)->data<float>());
    return Status();
  }

 private:
  PlanFn plan_;
  BatchedAttention batched_;
};

template <PlanFn Plan>
KernelResult CreateAttention(const KernelInit& init) {
  // Every float input (the reference's shape function has refused other dtypes and forms).
  RETURN_IF_ERROR(RequireF32(init, {0, 1, 2}));
  return std::unique_ptr<IKernel>(new AttentionKernel(Plan));
}

// Attention with its projection input · weights + bias on a oneDNN matmul (it dominates the op's cost: B·S·D·3D
// against B·N·S·T·H for the attention itself); shapes known at compile time.
class ProjectedAttentionKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    RETURN_IF_ERROR(RequireStaticF32(init, {0, 1}));
    const bool has_bias = init.inputs.size() > 2 && init.inputs[2] != nullptr;
    if (has_bias) RETURN_IF_ERROR(RequireStaticF32(init, {2}));
    const Shape &x = init.inputs[0]->shape, &w = init.inputs[1]->shape;
    if (x.size() != 3 || w.size() != 2 || w[0] != x[2] || (has_bias && NumElements(init.inputs[2]->shape) != w[1])) {
      return Unsupported("input, weights and bias shapes do not fit (the reference names the mismatch)");
    }
    namespace md = dnnl;
    using dt = md::memory::data_type;
    using tag = md::memory::format_tag;
    const int64_t rows = x[0] * x[1];
    const md::memory::desc src({rows, x[2]}, dt::f32, tag::ab), wei({w[0], w[1]}, dt::f32, tag::ab);
    const md::memory::desc dst({rows, w[1]}, dt::f32, tag::ab), bias({1, w[1]}, dt::f32, tag::ab);
    auto kernel = std::unique_ptr<ProjectedAttentionKernel>(new ProjectedAttentionKernel());
    md::matmul::primitive_desc pd;
    RETURN_IF_ERROR(Guard(init.node, "matmul", [&] {
      const md::matmul::desc desc = has_bias ? md::matmul::desc(src, wei, bias, dst) : md::matmul::desc(src, wei, dst);
      pd = md::matmul::primitive_desc(desc, Engine());
    }));
    if (IsReferenceImpl(pd.impl_info_str())) return Unsupported("only oneDNN's reference matmul implementation");
    std::unordered_map<int, md::memory> args;
    args[DNNL_ARG_SRC] = md::memory(src, Engine(), DNNL_MEMORY_NONE);
    args[DNNL_ARG_WEIGHTS] = md::memory(wei, Engine(), DNNL_MEMORY_NONE);
    args[DNNL_ARG_DST] = md::memory(dst, Engine(), DNNL_MEMORY_NONE);
    if (has_bias) args[DNNL_ARG_BIAS] = md::memory(bias, Engine(), DNNL_MEMORY_NONE);
    kernel->call_ = PrimitiveCall(md::matmul(pd), std::move(args));
    kernel->has_bias_ = has_bias;
    kernel->qkv_.resize(static_cast<size_t>(rows * w[1]));
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    call_.SetHandle(DNNL_ARG_SRC, ctx.input(0)->raw_data());
    call_.SetHandle(DNNL_ARG_WEIGHTS, ctx.input(1)->raw_data());
    if (has_bias_) call_.SetHandle(DNNL_ARG_BIAS, ctx.input(2)->raw_data());
    call_.SetHandle(DNNL_ARG_DST, qkv_.data());
    call_.Execute();
    ASSIGN_OR_RETURN(AttentionPlan plan, PlanAttentionFromQkv(ctx, qkv_.data()));
    RunPlan(plan, batched_, ctx.output(0)->data<float>());
    return Status();
  }
  std::string Isa() const override { return call_.Impl(); }

 private:
  ProjectedAttentionKernel() = default;
  PrimitiveCall call_;
  bool has_bias_ = false;
  std::vector<float> qkv_;
  BatchedAttention batched_;
};

// RotaryEmbedding: rows (b, s, n) in parallel, each one head's vector.
class RotaryKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    RETURN_IF_ERROR(RequireF32(init, {0, 2, 3}));
    const ValueInfo* x = init.inputs[0];
    if (x->shape.size() != 3 && x->shape.size() != 4) return Unsupported("input of rank other than 3 or 4");
    return std::unique_ptr<IKernel>(new RotaryKernel());
  }

  Status Run(KernelContext& ctx) override {
    const Node& node = ctx.node();
    const Tensor &x = *ctx.input(0), &pos = *ctx.input(1), &cos = *ctx.input(2);
    const bool bnsh = x.rank() == 4;
    const int64_t rotary_attr = node.GetInt("rotary_embedding_dim", 0), heads_attr = node.GetInt("num_heads", 0);
    const int64_t B = x.dim(0), S = bnsh ? x.dim(2) : x.dim(1), hidden = bnsh ? x.dim(1) * x.dim(3) : x.dim(2);
    const int64_t H = rotary_attr == 0 ? cos.dim(1) * 2 : (heads_attr > 0 ? hidden / heads_attr : 0);
    const int64_t rotary = rotary_attr > 0 ? rotary_attr : H;
    // The reference checks the geometry and names what is wrong.
    if (H <= 0 || hidden % H != 0 || (bnsh && x.dim(3) != H) || rotary > H || rotary % 2 != 0 ||
        cos.dim(1) != rotary / 2 || (heads_attr > 0 && heads_attr * H != hidden)) {
      return ctx.Error("the input, cache and attribute sizes do not fit (the reference names the mismatch)");
    }
    const int64_t N = hidden / H, max_pos = cos.dim(0), half = cos.dim(1);
    const int64_t* p = pos.data<int64_t>();
    const bool single = pos.numel() == 1 && pos.rank() <= 1;
    for (int64_t i = 0; i < (single ? 1 : B * S); ++i) {
      const int64_t first = p[i], last = single ? p[0] + S - 1 : p[i];
      if (first < 0 || last >= max_pos) {
        return ctx.Error("position " + std::to_string(first < 0 ? first : last) + " is outside the cos/sin cache of " +
                         std::to_string(max_pos) + " positions");
      }
    }
    const float *in = x.data<float>(), *c = cos.data<float>(), *sn = ctx.input(3)->data<float>();
    float* out = ctx.output(0)->data<float>();
    const bool interleaved = node.GetInt("interleaved", 0) == 1;
#pragma omp parallel for schedule(static) if (B * S * hidden >= kParallelWork)
    for (int64_t bs = 0; bs < B * S; ++bs) {
      const int64_t b = bs / S, s = bs % S;
      const int64_t position = single ? p[0] + s : p[bs];
      for (int64_t n = 0; n < N; ++n) {
        const int64_t offset = bnsh ? ((b * N + n) * S + s) * H : (bs * N + n) * H;
        RotateHalfOrPairs(in + offset, out + offset, H, rotary, c + position * half, sn + position * half, interleaved);
      }
    }
    return Status();
  }
};

}  // namespace

void AddContribAttentionKernels(KernelTable& t) {
  constexpr auto kCpu = DeviceKind::kCpu;
  constexpr auto kFp32 = Precision::kFp32;
  const std::string ms = "com.microsoft";
  t.Add("RotaryEmbedding", ms, kCpu, kFp32, {"cpu:rotary", RotaryKernel::Create});
  t.Add("MultiHeadAttention", ms, kCpu, kFp32, {"cpu:attention", CreateAttention<PlanMultiHeadAttention>});
  t.Add("Attention", ms, kCpu, kFp32, {"onednn:matmul+cpu:attention", ProjectedAttentionKernel::Create});
  t.Add("Attention", ms, kCpu, kFp32, {"cpu:attention", CreateAttention<PlanAttention>});
  t.Add("GroupQueryAttention", ms, kCpu, kFp32, {"cpu:attention", CreateAttention<PlanGroupQueryAttention>});
}

}  // namespace chipfit::cpu
