// ONNX Runtime's contrib attention operators on the CPU (kernel_groups.h): RotaryEmbedding,
// MultiHeadAttention, Attention and GroupQueryAttention in fp32.
//
// The attention ops share the reference's preparation (core/reference/contrib_attention.h: projections,
// biases, caches, rotary embedding, masks), which is linear in the tensors' sizes; what is quadratic,
// softmax(Q·Kᵀ·scale + mask)·V, runs here in float as ORT's CPU kernels do, one query row per task
// (rows of all batches and heads in parallel), every inner loop over contiguous keys or head values.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
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

void RunPlan(const AttentionPlan& p, float* out) {
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

using PlanFn = Result<AttentionPlan> (*)(KernelContext&);

class AttentionKernel final : public IKernel {
 public:
  explicit AttentionKernel(PlanFn plan) : plan_(plan) {}
  Status Run(KernelContext& ctx) override {
    ASSIGN_OR_RETURN(AttentionPlan plan, plan_(ctx));
    RunPlan(plan, ctx.output(0)->data<float>());
    return Status();
  }

 private:
  PlanFn plan_;
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
    RunPlan(plan, ctx.output(0)->data<float>());
    return Status();
  }
  std::string Isa() const override { return call_.Impl(); }

 private:
  ProjectedAttentionKernel() = default;
  PrimitiveCall call_;
  bool has_bias_ = false;
  std::vector<float> qkv_;
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
