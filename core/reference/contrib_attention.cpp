// Reference kernels of ONNX Runtime's contrib attention ops: RotaryEmbedding, MultiHeadAttention,
// Attention and GroupQueryAttention, as ORT's CPU kernels compute them (float inputs; masks added as
// mask_filter_value, GroupQueryAttention's causal window cut out of the softmax).
#include "core/reference/contrib_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/reference/conv_util.h"
#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

// ---- shape-function helpers --------------------------------------------------------------------

bool Known(int64_t d) { return d >= 0; }

const Shape* ShapeOf(const InferContext& ctx, size_t i) {
  return ctx.input(i) != nullptr ? &ctx.input(i)->shape : nullptr;
}

// Input i, when present, has dtype `dtype` (ORT's CPU kernels of these ops take float and int32/int64 only).
Status RequireDType(const InferContext& ctx, size_t i, DType dtype, const char* name) {
  const ValueInfo* in = ctx.input(i);
  if (in == nullptr || in->dtype == dtype) return Status::Ok();
  return Unsupported(ctx.node().Describe() + ": input '" + name + "' has dtype " + std::string(DTypeName(in->dtype)) +
                     ", only " + std::string(DTypeName(dtype)) + " is supported (as ONNX Runtime's CPU kernel)");
}

// The named inputs (by position; "" skips one) that are present are f32.
Status RequireF32Inputs(const InferContext& ctx, std::initializer_list<const char*> names) {
  size_t i = 0;
  for (const char* name : names) {
    if (*name != '\0') RETURN_IF_ERROR(RequireDType(ctx, i, DType::kF32, name));
    ++i;
  }
  return Status::Ok();
}

Status RequireRank(const InferContext& ctx, size_t i, std::initializer_list<size_t> ranks, const char* name) {
  const Shape* s = ShapeOf(ctx, i);
  if (s == nullptr) return Status::Ok();
  for (size_t r : ranks) {
    if (s->size() == r) return Status::Ok();
  }
  std::string allowed;
  for (size_t r : ranks) allowed += (allowed.empty() ? "" : " or ") + std::to_string(r);
  return ctx.Error("input '" + std::string(name) + "' must have rank " + allowed + ", got " + ShapeToString(*s));
}

// dims that are both known must agree.
Status ExpectDim(const InferContext& ctx, int64_t actual, int64_t expected, const std::string& what) {
  if (!Known(actual) || !Known(expected) || actual == expected) return Status::Ok();
  return ctx.Error(what + " is " + std::to_string(actual) + ", expected " + std::to_string(expected));
}

// Inputs past `count` and outputs past `outputs` are newer ORT features this reference does not do.
Status RefuseExtras(const InferContext& ctx, size_t count, size_t outputs, const char* what) {
  for (size_t i = count; i < ctx.node().inputs.size(); ++i) {
    if (ctx.node().HasInput(i)) {
      return Unsupported(ctx.node().Describe() + ": input " + std::to_string(i) + " is not supported (" + what + ")");
    }
  }
  for (size_t i = outputs; i < ctx.node().outputs.size(); ++i) {
    if (!ctx.node().outputs[i].empty()) {
      return Unsupported(ctx.node().Describe() + ": output " + std::to_string(i) + " is not supported (" + what + ")");
    }
  }
  return Status::Ok();
}

Result<int64_t> PositiveAttr(const InferContext& ctx, const char* name) {
  const int64_t v = ctx.node().GetInt(name, 0);
  if (v <= 0) return ctx.Error(std::string("attribute '") + name + "' must be given and positive");
  return v;
}

int64_t DivKnown(int64_t a, int64_t b) { return Known(a) && b > 0 ? a / b : -1; }
int64_t AddKnown(int64_t a, int64_t b) { return Known(a) && Known(b) ? a + b : -1; }

const float* F32(const Tensor* t) { return t != nullptr ? t->data<float>() : nullptr; }

// ---- RotaryEmbedding ---------------------------------------------------------------------------

// The head size, head count and rotary dim ORT derives from the input's shape and the attributes.
struct RotaryGeometry {
  int64_t batch, seq, heads, head_size, rotary_dim;
  bool bnsh;
};

Result<RotaryGeometry> GetRotaryGeometry(const Node& node, const Shape& x, const Shape& cos) {
  const int64_t rotary_attr = node.GetInt("rotary_embedding_dim", 0);
  const int64_t heads_attr = node.GetInt("num_heads", 0);
  const auto error = [&](const std::string& m) { return InvalidArgument(node.Describe() + ": " + m); };
  if (rotary_attr > 0 && heads_attr <= 0) return error("num_heads must be given when rotary_embedding_dim is");
  RotaryGeometry g{};
  g.bnsh = x.size() == 4;
  g.batch = x[0];
  g.seq = g.bnsh ? x[2] : x[1];
  const int64_t hidden = g.bnsh ? x[1] * x[3] : x[2];
  g.head_size = rotary_attr == 0 ? cos[1] * 2 : (heads_attr > 0 ? hidden / heads_attr : 0);
  if (g.head_size <= 0 || hidden % g.head_size != 0) {
    return error("hidden size " + std::to_string(hidden) + " is not a multiple of the head size " +
                 std::to_string(g.head_size));
  }
  g.heads = heads_attr > 0 ? heads_attr : hidden / g.head_size;
  if (g.heads * g.head_size != hidden) return error("num_heads × head size does not give the hidden size");
  if (g.bnsh && (x[1] != g.heads || x[3] != g.head_size)) {
    return error("a 4-D input must be [batch, num_heads, sequence, head_size] with head_size " +
                 std::to_string(g.head_size) + ", got " + ShapeToString(x));
  }
  g.rotary_dim = rotary_attr > 0 ? rotary_attr : g.head_size;
  if (g.rotary_dim > g.head_size || g.rotary_dim % 2 != 0) {
    return error("rotary_embedding_dim must be even and at most the head size " + std::to_string(g.head_size));
  }
  if (cos[1] != g.rotary_dim / 2) {
    // ORT accepts head_size / 2 too, then reads its rows with the rotary_embedding_dim / 2 stride.
    return Unsupported(node.Describe() + ": cos_cache/sin_cache dim 1 is " + std::to_string(cos[1]) +
                       ", only rotary_embedding_dim / 2 = " + std::to_string(g.rotary_dim / 2) + " is supported");
  }
  return g;
}

bool AllKnown(const Shape& s) {
  return std::all_of(s.begin(), s.end(), [](int64_t d) { return d >= 0; });
}

// `scale` only matters to ORT's GPU kernels, which rebuild the caches; its CPU kernel, and this one, ignore it.
Status InferRotaryEmbedding(InferContext& ctx) {
  for (size_t i = 0; i < 4; ++i) {
    if (ctx.input(i) == nullptr) return ctx.Error("inputs input, position_ids, cos_cache and sin_cache are required");
  }
  RETURN_IF_ERROR(RefuseExtras(ctx, 4, 1, "RotaryEmbedding has four inputs and one output"));
  RETURN_IF_ERROR(RequireDType(ctx, 0, DType::kF32, "input"));
  RETURN_IF_ERROR(RequireDType(ctx, 1, DType::kI64, "position_ids"));
  RETURN_IF_ERROR(RequireDType(ctx, 2, DType::kF32, "cos_cache"));
  RETURN_IF_ERROR(RequireDType(ctx, 3, DType::kF32, "sin_cache"));
  RETURN_IF_ERROR(RequireRank(ctx, 0, {3, 4}, "input"));
  RETURN_IF_ERROR(RequireRank(ctx, 2, {2}, "cos_cache"));
  RETURN_IF_ERROR(RequireRank(ctx, 3, {2}, "sin_cache"));
  const Shape& x = *ShapeOf(ctx, 0);
  const Shape &cos = *ShapeOf(ctx, 2), &sin = *ShapeOf(ctx, 3);
  RETURN_IF_ERROR(ExpectDim(ctx, sin[0], cos[0], "sin_cache dim 0"));
  RETURN_IF_ERROR(ExpectDim(ctx, sin[1], cos[1], "sin_cache dim 1"));
  const Shape& pos = *ShapeOf(ctx, 1);
  const bool pos_single = pos.size() <= 1 && (pos.empty() || pos[0] == 1);
  if (!pos_single) {
    if (pos.size() != 2)
      return ctx.Error("position_ids must be one offset or [batch, sequence], got " + ShapeToString(pos));
    RETURN_IF_ERROR(ExpectDim(ctx, pos[0], x[0], "position_ids dim 0 (batch)"));
    RETURN_IF_ERROR(ExpectDim(ctx, pos[1], x.size() == 4 ? x[2] : x[1], "position_ids dim 1 (sequence)"));
  }
  if (AllKnown(x) && AllKnown(cos)) {
    Result<RotaryGeometry> g = GetRotaryGeometry(ctx.node(), x, cos);
    if (!g.ok()) return g.status();
  }
  ctx.SetOutput(0, DType::kF32, x);
  return Status::Ok();
}

Status RunRotaryEmbedding(KernelContext& ctx) {
  const Tensor &x = *ctx.input(0), &pos = *ctx.input(1), &cos = *ctx.input(2);
  ASSIGN_OR_RETURN(RotaryGeometry g, GetRotaryGeometry(ctx.node(), x.shape(), cos.shape()));
  const bool interleaved = ctx.node().GetInt("interleaved", 0) == 1;
  const int64_t max_pos = cos.dim(0), half = cos.dim(1);
  const int64_t* p = pos.data<int64_t>();
  const bool single = pos.numel() == 1 && pos.rank() <= 1;
  const float *in = F32(&x), *cos_data = F32(&cos), *sin_data = F32(ctx.input(3));
  float* out = ctx.output(0)->data<float>();
  for (int64_t b = 0; b < g.batch; ++b) {
    for (int64_t s = 0; s < g.seq; ++s) {
      const int64_t position = single ? p[0] + s : p[b * g.seq + s];
      if (position < 0 || position >= max_pos) {
        return ctx.Error("position " + std::to_string(position) + " is outside the cos/sin cache of " +
                         std::to_string(max_pos) + " positions");
      }
      for (int64_t n = 0; n < g.heads; ++n) {
        const int64_t offset =
            g.bnsh ? ((b * g.heads + n) * g.seq + s) * g.head_size : ((b * g.seq + s) * g.heads + n) * g.head_size;
        RotateHalfOrPairs(in + offset, out + offset, g.head_size, g.rotary_dim, cos_data + position * half,
                          sin_data + position * half, interleaved);
      }
    }
  }
  return Status::Ok();
}

// The shape function's checks on this run's tensors: what the plan reads is what they allowed.
template <typename Geometry>
Result<Geometry> CheckAtRun(const KernelContext& ctx, Result<Geometry> (*get)(InferContext&)) {
  std::vector<const Tensor*> inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(ctx.input(i));
  TensorInfos infos(inputs);
  InferContext ictx(ctx.node(), ctx.opset(), infos.pointers());
  return get(ictx);
}

// ---- masks shared by MultiHeadAttention and Attention -------------------------------------------

// ORT's mask forms: 1-D end positions [B] (Attention also [2B]: ends then starts), 2-D raw [B, T],
// 3-D raw [B, S, T]; all int32, 0 masking a key. Checked where dims are known.
Status CheckMaskShape(const InferContext& ctx, size_t i, int64_t batch, int64_t q_len, int64_t total,
                      bool allow_starts) {
  const Shape* m = ShapeOf(ctx, i);
  if (m == nullptr) return Status::Ok();
  RETURN_IF_ERROR(RequireDType(ctx, i, DType::kI32, "mask"));
  if (m->size() == 4) {
    return Unsupported(ctx.node().Describe() + ": a 4-D mask (Megatron [B, 1, max, max]) is not supported " +
                       "(ONNX Runtime's CPU kernel does not implement it either)");
  }
  if (m->size() == 1) {
    if (Known((*m)[0]) && Known(batch) && (*m)[0] != batch && !(allow_starts && (*m)[0] == 2 * batch)) {
      if ((*m)[0] == 3 * batch + 2) {
        return Unsupported(ctx.node().Describe() + ": a mask of key lengths with starts (3·B + 2 values) is " +
                           "only implemented by ONNX Runtime's CUDA kernels; not supported");
      }
      return ctx.Error("a 1-D mask must hold " + std::string(allow_starts ? "B or 2·B" : "B") + " values, got " +
                       ShapeToString(*m));
    }
    return Status::Ok();
  }
  if (m->size() == 2) {
    RETURN_IF_ERROR(ExpectDim(ctx, (*m)[0], batch, "mask dim 0 (batch)"));
    return ExpectDim(ctx, (*m)[1], total, "mask dim 1 (total sequence length)");
  }
  if (m->size() == 3) {
    RETURN_IF_ERROR(ExpectDim(ctx, (*m)[0], batch, "mask dim 0 (batch)"));
    RETURN_IF_ERROR(ExpectDim(ctx, (*m)[1], q_len, "mask dim 1 (sequence length)"));
    return ExpectDim(ctx, (*m)[2], total, "mask dim 2 (total sequence length)");
  }
  return ctx.Error("mask must have rank 1, 2 or 3, got " + ShapeToString(*m));
}

// attention_bias: [B or 1, N or 1, S, T], float.
Status CheckAttentionBias(const InferContext& ctx, size_t i, int64_t batch, int64_t heads, int64_t q_len,
                          int64_t total) {
  const Shape* a = ShapeOf(ctx, i);
  if (a == nullptr) return Status::Ok();
  RETURN_IF_ERROR(RequireDType(ctx, i, DType::kF32, "attention_bias"));
  RETURN_IF_ERROR(RequireRank(ctx, i, {4}, "attention_bias"));
  if ((*a)[0] != 1) RETURN_IF_ERROR(ExpectDim(ctx, (*a)[0], batch, "attention_bias dim 0 (batch or 1)"));
  if ((*a)[1] != 1) RETURN_IF_ERROR(ExpectDim(ctx, (*a)[1], heads, "attention_bias dim 1 (num_heads or 1)"));
  RETURN_IF_ERROR(ExpectDim(ctx, (*a)[2], q_len, "attention_bias dim 2 (sequence length)"));
  return ExpectDim(ctx, (*a)[3], total, "attention_bias dim 3 (total sequence length)");
}

// The additive mask [B, S, T] of ORT's CPU attention: masked keys and, when causal, keys after the
// row's own position (past + s) get mask_filter_value (not -inf: a fully masked row stays a softmax).
Status BuildMask(const KernelContext& ctx, const Tensor* mask, bool causal, AttentionPlan& plan, int64_t past) {
  const int64_t B = plan.batch, S = plan.q_len, T = plan.kv_len;
  causal = causal && S > 1;
  if (mask == nullptr && !causal) return Status::Ok();
  const float filter = ctx.node().GetFloat("mask_filter_value", -10000.0f);
  plan.mask.assign(static_cast<size_t>(B * S * T), 0.0f);
  const int32_t* m = mask != nullptr ? mask->data<int32_t>() : nullptr;
  if (m != nullptr && mask->rank() == 2 && mask->dim(1) != T) {
    return ctx.Error("a 2-D mask must be [batch, total sequence length " + std::to_string(T) + "], got " +
                     ShapeToString(mask->shape()));
  }
  for (int64_t b = 0; b < B; ++b) {
    float* row0 = plan.mask.data() + b * S * T;
    for (int64_t s = 0; s < S; ++s) {
      float* row = row0 + s * T;
      for (int64_t t = 0; t < T; ++t) {
        bool masked = false;
        if (m != nullptr && mask->rank() == 3) {
          masked = m[(b * S + s) * T + t] <= 0;
        } else if (m != nullptr && mask->rank() == 2) {
          masked = m[b * T + t] <= 0;
        } else if (m != nullptr) {
          masked = t >= m[b];
          if (mask->dim(0) == 2 * B) masked = masked || t < std::min<int64_t>(m[b + B], T);
        }
        if (causal && t > past + s) masked = true;
        if (masked) row[t] = filter;
      }
    }
  }
  return Status::Ok();
}

void SetAttentionBias(const Tensor* bias, AttentionPlan& plan) {
  if (bias == nullptr) return;
  plan.bias = F32(bias);
  plan.bias_row_stride = bias->dim(3);
  const int64_t matrix = plan.q_len * bias->dim(3);
  plan.bias_head_stride = bias->dim(1) == 1 ? 0 : matrix;
  plan.bias_batch_stride = bias->dim(0) == 1 ? 0 : bias->dim(1) * matrix;
}

// [B, L, N·H] (+ bias[offset ..]) → rows [b, n, dst_offset + l] of a [B, N, dst_rows, H] buffer.
void ToHeads(const float* src, const float* bias, int64_t B, int64_t L, int64_t N, int64_t H, int64_t src_row_stride,
             float* dst, int64_t dst_rows, int64_t dst_offset) {
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t l = 0; l < L; ++l) {
      const float* in = src + (b * L + l) * src_row_stride;
      for (int64_t n = 0; n < N; ++n) {
        float* out = dst + ((b * N + n) * dst_rows + dst_offset + l) * H;
        for (int64_t h = 0; h < H; ++h) out[h] = in[n * H + h] + (bias != nullptr ? bias[n * H + h] : 0.0f);
      }
    }
  }
}

// Copies `rows` rows of each (b, n) block of a [B, N, src_rows, H] buffer to the head of the
// corresponding block of a [B, N, dst_rows, H] buffer.
void CopyRows(const float* src, int64_t src_rows, float* dst, int64_t dst_rows, int64_t BN, int64_t rows, int64_t H) {
  for (int64_t i = 0; i < BN; ++i) {
    std::memcpy(dst + i * dst_rows * H, src + i * src_rows * H, static_cast<size_t>(rows * H) * sizeof(float));
  }
}

// ---- MultiHeadAttention ------------------------------------------------------------------------

enum MhaInput { kQuery, kKey, kValue, kBias, kKeyPaddingMask, kAttnBias, kPastKey, kPastValue };

// Q, K, V geometry that the shape function and the plan share (dims < 0 where unknown).
struct MhaGeometry {
  int64_t batch, q_len, kv_len, past, heads, head_size, v_head_size;
  bool kv_bnsh;  // key and value given per head ([B, N, L, H]): used as they are
};

Result<MhaGeometry> GetMhaGeometry(InferContext& ctx) {
  const Node& node = ctx.node();
  if (ctx.input(kQuery) == nullptr) return ctx.Error("input 'query' is required");
  RETURN_IF_ERROR(RefuseExtras(ctx, 8, 3, "past_sequence_length, cache_indirection and output_qk are not supported"));
  RETURN_IF_ERROR(
      RequireF32Inputs(ctx, {"query", "key", "value", "bias", "", "attention_bias", "past_key", "past_value"}));
  const Shape& q = *ShapeOf(ctx, kQuery);
  if (q.size() == 5 || ctx.input(kKey) == nullptr) {
    return Unsupported(node.Describe() + ": packed QKV (key and value absent) is not supported; ONNX Runtime's " +
                       "CPU kernel does not implement it either");
  }
  RETURN_IF_ERROR(RequireRank(ctx, kQuery, {3}, "query"));
  const Shape& k = *ShapeOf(ctx, kKey);
  if (k.size() == 5) {
    return Unsupported(node.Describe() + ": packed KV (key [B, L, N, 2, H], value absent) is not supported; " +
                       "ONNX Runtime's CPU kernel does not implement it either");
  }
  RETURN_IF_ERROR(RequireRank(ctx, kKey, {3, 4}, "key"));
  if (ctx.input(kValue) == nullptr) return ctx.Error("input 'value' is required when 'key' is given");
  const Shape& v = *ShapeOf(ctx, kValue);
  if (v.size() != k.size()) return ctx.Error("'key' and 'value' must have the same rank");
  MhaGeometry g{};
  ASSIGN_OR_RETURN(g.heads, PositiveAttr(ctx, "num_heads"));
  g.batch = q[0];
  g.q_len = q[1];
  if (Known(q[2]) && q[2] % g.heads != 0) return ctx.Error("query hidden size is not a multiple of num_heads");
  g.head_size = DivKnown(q[2], g.heads);
  RETURN_IF_ERROR(ExpectDim(ctx, k[0], g.batch, "key dim 0 (batch)"));
  RETURN_IF_ERROR(ExpectDim(ctx, v[0], g.batch, "value dim 0 (batch)"));
  g.kv_bnsh = k.size() == 4;
  if (g.kv_bnsh) {
    RETURN_IF_ERROR(ExpectDim(ctx, k[1], g.heads, "key dim 1 (num_heads)"));
    RETURN_IF_ERROR(ExpectDim(ctx, k[3], g.head_size, "key dim 3 (head size)"));
    RETURN_IF_ERROR(ExpectDim(ctx, v[1], g.heads, "value dim 1 (num_heads)"));
    RETURN_IF_ERROR(ExpectDim(ctx, v[2], k[2], "value dim 2 (kv sequence length)"));
    RETURN_IF_ERROR(ExpectDim(ctx, v[3], k[3], "value dim 3 (4-D key and value share one shape)"));
    if (ctx.input(kBias) != nullptr) return ctx.Error("'bias' must be absent when key is 4-D");
    if (ctx.input(kPastKey) != nullptr) return ctx.Error("past_key/past_value must be absent when key is 4-D");
    g.kv_len = k[2];
    g.v_head_size = v[3];
  } else {
    RETURN_IF_ERROR(ExpectDim(ctx, k[2], q[2], "key dim 2 (hidden size)"));
    RETURN_IF_ERROR(ExpectDim(ctx, v[1], k[1], "value dim 1 (kv sequence length)"));
    if (Known(v[2]) && v[2] % g.heads != 0) return ctx.Error("value hidden size is not a multiple of num_heads");
    g.kv_len = k[1];
    g.v_head_size = DivKnown(v[2], g.heads);
  }
  if (const Shape* bias = ShapeOf(ctx, kBias)) {
    RETURN_IF_ERROR(RequireRank(ctx, kBias, {1}, "bias"));
    RETURN_IF_ERROR(ExpectDim(ctx, (*bias)[0], Known(q[2]) && Known(v[2]) ? 2 * q[2] + v[2] : -1, "bias length"));
  }
  if ((ctx.input(kPastKey) == nullptr) != (ctx.input(kPastValue) == nullptr)) {
    return ctx.Error("past_key and past_value must both be given or both be absent");
  }
  if (const Shape* pk = ShapeOf(ctx, kPastKey)) {
    RETURN_IF_ERROR(RequireRank(ctx, kPastKey, {4}, "past_key"));
    RETURN_IF_ERROR(RequireRank(ctx, kPastValue, {4}, "past_value"));
    const Shape& pv = *ShapeOf(ctx, kPastValue);
    RETURN_IF_ERROR(ExpectDim(ctx, (*pk)[0], g.batch, "past_key dim 0 (batch)"));
    RETURN_IF_ERROR(ExpectDim(ctx, (*pk)[1], g.heads, "past_key dim 1 (num_heads)"));
    RETURN_IF_ERROR(ExpectDim(ctx, (*pk)[3], g.head_size, "past_key dim 3 (head size)"));
    RETURN_IF_ERROR(ExpectDim(ctx, pv[0], g.batch, "past_value dim 0 (batch)"));
    RETURN_IF_ERROR(ExpectDim(ctx, pv[1], g.heads, "past_value dim 1 (num_heads)"));
    RETURN_IF_ERROR(ExpectDim(ctx, pv[2], (*pk)[2], "past_value dim 2 (past sequence length)"));
    RETURN_IF_ERROR(ExpectDim(ctx, pv[3], g.v_head_size, "past_value dim 3 (v head size)"));
    g.past = (*pk)[2];
  }
  const int64_t total = AddKnown(g.past, g.kv_len);
  RETURN_IF_ERROR(CheckMaskShape(ctx, kKeyPaddingMask, g.batch, g.q_len, total, false));
  RETURN_IF_ERROR(CheckAttentionBias(ctx, kAttnBias, g.batch, g.heads, g.q_len, total));
  return g;
}

Status InferMultiHeadAttention(InferContext& ctx) {
  ASSIGN_OR_RETURN(MhaGeometry g, GetMhaGeometry(ctx));
  const int64_t total = AddKnown(g.past, g.kv_len);
  const int64_t v_hidden = Known(g.v_head_size) ? g.v_head_size * g.heads : -1;
  ctx.SetOutput(0, DType::kF32, {g.batch, g.q_len, v_hidden});
  ctx.SetOutput(1, DType::kF32, {g.batch, g.heads, total, g.head_size});
  ctx.SetOutput(2, DType::kF32, {g.batch, g.heads, total, g.v_head_size});
  return Status::Ok();
}

// Writes the present outputs (when asked for) from the plan's k and v.
void WritePresent(KernelContext& ctx, size_t key_output, size_t value_output, const AttentionPlan& plan) {
  const int64_t BN = plan.batch * plan.kv_heads;
  if (Tensor* pk = ctx.output(key_output)) {
    CopyRows(plan.k.data(), plan.kv_stride, pk->data<float>(), plan.kv_len, BN, plan.kv_len, plan.head_size);
  }
  if (Tensor* pv = ctx.output(value_output)) {
    CopyRows(plan.v.data(), plan.kv_stride, pv->data<float>(), plan.kv_len, BN, plan.kv_len, plan.v_head_size);
  }
}

float DefaultScale(const Node& node, int64_t head_size) {
  const float scale = node.GetFloat("scale", 0.0f);
  return scale == 0.0f ? 1.0f / std::sqrt(static_cast<float>(head_size)) : scale;
}

}  // namespace

Result<AttentionPlan> PlanMultiHeadAttention(KernelContext& ctx) {
  ASSIGN_OR_RETURN(MhaGeometry g, CheckAtRun(ctx, GetMhaGeometry));
  AttentionPlan plan;
  plan.batch = g.batch;
  plan.heads = plan.kv_heads = g.heads;
  plan.q_len = g.q_len;
  plan.kv_len = plan.kv_stride = g.past + g.kv_len;
  plan.head_size = g.head_size;
  plan.v_head_size = g.v_head_size;
  plan.scale = DefaultScale(ctx.node(), g.head_size);
  const int64_t B = g.batch, N = g.heads, H = g.head_size, Hv = g.v_head_size, T = plan.kv_len;
  const float* bias = F32(ctx.input(kBias));
  plan.q.resize(static_cast<size_t>(B * N * g.q_len * H));
  ToHeads(F32(ctx.input(kQuery)), bias, B, g.q_len, N, H, N * H, plan.q.data(), g.q_len, 0);
  plan.k.resize(static_cast<size_t>(B * N * T * H));
  plan.v.resize(static_cast<size_t>(B * N * T * Hv));
  if (g.kv_bnsh) {
    std::memcpy(plan.k.data(), F32(ctx.input(kKey)), plan.k.size() * sizeof(float));
    std::memcpy(plan.v.data(), F32(ctx.input(kValue)), plan.v.size() * sizeof(float));
  } else {
    if (g.past > 0) {
      CopyRows(F32(ctx.input(kPastKey)), g.past, plan.k.data(), T, B * N, g.past, H);
      CopyRows(F32(ctx.input(kPastValue)), g.past, plan.v.data(), T, B * N, g.past, Hv);
    }
    ToHeads(F32(ctx.input(kKey)), bias != nullptr ? bias + N * H : nullptr, B, g.kv_len, N, H, N * H, plan.k.data(), T,
            g.past);
    ToHeads(F32(ctx.input(kValue)), bias != nullptr ? bias + 2 * N * H : nullptr, B, g.kv_len, N, Hv, N * Hv,
            plan.v.data(), T, g.past);
  }
  RETURN_IF_ERROR(
      BuildMask(ctx, ctx.input(kKeyPaddingMask), ctx.node().GetInt("unidirectional", 0) == 1, plan, g.past));
  SetAttentionBias(ctx.input(kAttnBias), plan);
  WritePresent(ctx, 1, 2, plan);
  return plan;
}

namespace {

// ---- Attention ---------------------------------------------------------------------------------

enum AttnInput { kInput, kWeights, kAttnQkvBias, kMaskIndex, kPast, kAttnAttentionBias, kPastSeqLen };

struct AttnGeometry {
  int64_t batch, q_len, input_hidden, past, heads;
  int64_t q_hidden, k_hidden, v_hidden;
};

Result<AttnGeometry> GetAttnGeometry(InferContext& ctx) {
  const Node& node = ctx.node();
  for (size_t i : {kInput, kWeights}) {
    if (ctx.input(i) == nullptr) return ctx.Error("inputs 'input' and 'weights' are required");
  }
  RETURN_IF_ERROR(RefuseExtras(ctx, 6, 2, "past_sequence_length goes with past_present_share_buffer, not supported"));
  if (node.GetInt("do_rotary", 0) != 0) {
    return Unsupported(node.Describe() + ": attribute 'do_rotary'=1 is not supported (ONNX Runtime's CPU kernel " +
                       "does not implement it either)");
  }
  if (node.GetInt("past_present_share_buffer", 0) != 0) {
    return Unsupported(node.Describe() + ": attribute 'past_present_share_buffer'=1 is not supported");
  }
  RETURN_IF_ERROR(RequireF32Inputs(ctx, {"input", "weights", "bias", "", "past", "attention_bias"}));
  RETURN_IF_ERROR(RequireRank(ctx, kInput, {3}, "input"));
  RETURN_IF_ERROR(RequireRank(ctx, kWeights, {2}, "weights"));
  const Shape &x = *ShapeOf(ctx, kInput), &w = *ShapeOf(ctx, kWeights);
  AttnGeometry g{};
  ASSIGN_OR_RETURN(g.heads, PositiveAttr(ctx, "num_heads"));
  g.batch = x[0];
  g.q_len = x[1];
  g.input_hidden = x[2];
  RETURN_IF_ERROR(ExpectDim(ctx, w[0], x[2], "weights dim 0 (input hidden size)"));
  const std::vector<int64_t> sizes = node.GetInts("qkv_hidden_sizes");
  if (!sizes.empty()) {
    if (sizes.size() != 3 || sizes[0] != sizes[1] || sizes[0] <= 0 || sizes[2] <= 0) {
      return ctx.Error("qkv_hidden_sizes must hold three positive sizes with Q's equal to K's, got " + JoinInts(sizes));
    }
    g.q_hidden = sizes[0];
    g.k_hidden = sizes[1];
    g.v_hidden = sizes[2];
    RETURN_IF_ERROR(ExpectDim(ctx, w[1], sizes[0] + sizes[1] + sizes[2], "weights dim 1 (sum of qkv_hidden_sizes)"));
  } else {
    if (!Known(w[1])) return Unsupported(node.Describe() + ": weights dim 1 must be known");
    if (w[1] % 3 != 0) return ctx.Error("weights dim 1 must be 3 × hidden size, got " + std::to_string(w[1]));
    g.q_hidden = g.k_hidden = g.v_hidden = w[1] / 3;
  }
  if (g.q_hidden % g.heads != 0 || g.v_hidden % g.heads != 0) {
    return ctx.Error("the Q/K/V hidden sizes must be multiples of num_heads");
  }
  if (const Shape* b = ShapeOf(ctx, kAttnQkvBias)) {
    RETURN_IF_ERROR(RequireRank(ctx, kAttnQkvBias, {1}, "bias"));
    RETURN_IF_ERROR(ExpectDim(ctx, (*b)[0], g.q_hidden + g.k_hidden + g.v_hidden, "bias length"));
  }
  if (const Shape* p = ShapeOf(ctx, kPast)) {
    RETURN_IF_ERROR(RequireRank(ctx, kPast, {5}, "past"));
    if (g.q_hidden != g.v_hidden) return ctx.Error("past needs equal Q, K and V hidden sizes");
    RETURN_IF_ERROR(ExpectDim(ctx, (*p)[0], 2, "past dim 0"));
    RETURN_IF_ERROR(ExpectDim(ctx, (*p)[1], g.batch, "past dim 1 (batch)"));
    RETURN_IF_ERROR(ExpectDim(ctx, (*p)[2], g.heads, "past dim 2 (num_heads)"));
    RETURN_IF_ERROR(ExpectDim(ctx, (*p)[4], g.q_hidden / g.heads, "past dim 4 (head size)"));
    g.past = (*p)[3];
  }
  const int64_t total = AddKnown(g.past, g.q_len);
  RETURN_IF_ERROR(CheckMaskShape(ctx, kMaskIndex, g.batch, g.q_len, total, true));
  RETURN_IF_ERROR(CheckAttentionBias(ctx, kAttnAttentionBias, g.batch, g.heads, g.q_len, total));
  return g;
}

Status InferAttention(InferContext& ctx) {
  ASSIGN_OR_RETURN(AttnGeometry g, GetAttnGeometry(ctx));
  ctx.SetOutput(0, DType::kF32, {g.batch, g.q_len, g.v_hidden});
  if (ctx.num_outputs() > 1 && g.q_hidden != g.v_hidden) {
    if (!ctx.node().outputs[1].empty()) return ctx.Error("present needs equal Q, K and V hidden sizes");
  }
  ctx.SetOutput(1, DType::kF32, {2, g.batch, g.heads, AddKnown(g.past, g.q_len), g.q_hidden / g.heads});
  return Status::Ok();
}

}  // namespace

Result<AttentionPlan> PlanAttention(KernelContext& ctx) { return PlanAttentionFromQkv(ctx, nullptr); }

Result<AttentionPlan> PlanAttentionFromQkv(KernelContext& ctx, const float* projected) {
  ASSIGN_OR_RETURN(AttnGeometry g, CheckAtRun(ctx, GetAttnGeometry));
  const int64_t B = g.batch, S = g.q_len, N = g.heads, D = g.input_hidden;
  const int64_t H = g.q_hidden / N, Hv = g.v_hidden / N, T = g.past + S;
  const int64_t width = g.q_hidden + g.k_hidden + g.v_hidden;
  // input · weights + bias, one row per token: [B·S, Q | K | V] in float, as ORT keeps it.
  std::vector<float> own;
  if (projected == nullptr) {
    const float *x = F32(ctx.input(kInput)), *w = F32(ctx.input(kWeights)), *bias = F32(ctx.input(kAttnQkvBias));
    own.resize(static_cast<size_t>(B * S * width));
#pragma omp parallel for
    for (int64_t r = 0; r < B * S; ++r) {
      std::vector<double> acc(static_cast<size_t>(width), 0.0);
      for (int64_t d = 0; d < D; ++d) {
        const double xv = x[r * D + d];
        const float* wrow = w + d * width;
        for (int64_t c = 0; c < width; ++c) acc[static_cast<size_t>(c)] += xv * wrow[c];
      }
      for (int64_t c = 0; c < width; ++c) {
        own[static_cast<size_t>(r * width + c)] =
            static_cast<float>(acc[static_cast<size_t>(c)] + (bias != nullptr ? bias[c] : 0.0f));
      }
    }
    projected = own.data();
  }
  const float* qkv = projected;
  AttentionPlan plan;
  plan.batch = B;
  plan.heads = plan.kv_heads = N;
  plan.q_len = S;
  plan.kv_len = plan.kv_stride = T;
  plan.head_size = H;
  plan.v_head_size = Hv;
  plan.scale = DefaultScale(ctx.node(), H);
  plan.q.resize(static_cast<size_t>(B * N * S * H));
  plan.k.resize(static_cast<size_t>(B * N * T * H));
  plan.v.resize(static_cast<size_t>(B * N * T * Hv));
  ToHeads(qkv, nullptr, B, S, N, H, width, plan.q.data(), S, 0);
  if (const Tensor* past = ctx.input(kPast)) {
    const float* p = F32(past);
    CopyRows(p, g.past, plan.k.data(), T, B * N, g.past, H);
    CopyRows(p + B * N * g.past * H, g.past, plan.v.data(), T, B * N, g.past, Hv);
  }
  ToHeads(qkv + g.q_hidden, nullptr, B, S, N, H, width, plan.k.data(), T, g.past);
  ToHeads(qkv + g.q_hidden + g.k_hidden, nullptr, B, S, N, Hv, width, plan.v.data(), T, g.past);
  RETURN_IF_ERROR(BuildMask(ctx, ctx.input(kMaskIndex), ctx.node().GetInt("unidirectional", 0) == 1, plan, g.past));
  SetAttentionBias(ctx.input(kAttnAttentionBias), plan);
  if (Tensor* present = ctx.output(1)) {
    float* out = present->data<float>();
    CopyRows(plan.k.data(), T, out, T, B * N, T, H);
    CopyRows(plan.v.data(), T, out + B * N * T * H, T, B * N, T, Hv);
  }
  return plan;
}

void RotateHalfOrPairs(const float* in, float* out, int64_t head_size, int64_t rotary_dim, const float* cos,
                       const float* sin, bool interleaved) {
  const int64_t half = rotary_dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
    const float x1 = in[a], x2 = in[b];
    out[a] = x1 * cos[i] - x2 * sin[i];
    out[b] = x2 * cos[i] + x1 * sin[i];
  }
  if (in != out) {
    for (int64_t i = rotary_dim; i < head_size; ++i) out[i] = in[i];
  }
}

namespace {

// ---- GroupQueryAttention -----------------------------------------------------------------------

enum GqaInput {
  kGQuery,
  kGKey,
  kGValue,
  kGPastKey,
  kGPastValue,
  kSeqLensK,
  kTotalSeqLen,
  kCos,
  kSin,
  kPositionIds,
  kGAttnBias,
  kHeadSink
};

struct GqaGeometry {
  int64_t batch, q_len, heads, kv_heads, head_size, past, total, present;
  bool packed;
};

Result<GqaGeometry> GetGqaGeometry(InferContext& ctx) {
  const Node& node = ctx.node();
  for (size_t i : {kGQuery, kSeqLensK, kTotalSeqLen}) {
    if (ctx.input(i) == nullptr) return ctx.Error("inputs query, seqlens_k and total_sequence_length are required");
  }
  RETURN_IF_ERROR(RefuseExtras(ctx, 12, 3, "output_qk is not supported"));
  RETURN_IF_ERROR(RequireF32Inputs(ctx, {"query", "key", "value", "past_key", "past_value", "", "", "cos_cache",
                                         "sin_cache", "", "attention_bias", "head_sink"}));
  RETURN_IF_ERROR(RequireDType(ctx, kPositionIds, DType::kI64, "position_ids"));
  RETURN_IF_ERROR(RequireDType(ctx, kSeqLensK, DType::kI32, "seqlens_k"));
  RETURN_IF_ERROR(RequireDType(ctx, kTotalSeqLen, DType::kI32, "total_sequence_length"));
  RETURN_IF_ERROR(RequireRank(ctx, kGQuery, {3}, "query"));
  GqaGeometry g{};
  ASSIGN_OR_RETURN(g.heads, PositiveAttr(ctx, "num_heads"));
  ASSIGN_OR_RETURN(g.kv_heads, PositiveAttr(ctx, "kv_num_heads"));
  if (g.heads % g.kv_heads != 0) return ctx.Error("num_heads must be a multiple of kv_num_heads");
  const Shape& q = *ShapeOf(ctx, kGQuery);
  g.batch = q[0];
  g.q_len = q[1];
  g.packed = ctx.input(kGKey) == nullptr;
  if (g.packed != (ctx.input(kGValue) == nullptr)) return ctx.Error("key and value must both be given or both absent");
  g.head_size = DivKnown(q[2], g.packed ? g.heads + 2 * g.kv_heads : g.heads);
  if (Known(g.head_size) && g.head_size % 8 != 0) {
    return ctx.Error("head size must be a multiple of 8 (as ONNX Runtime requires), got " +
                     std::to_string(g.head_size));
  }
  if (!g.packed) {
    RETURN_IF_ERROR(RequireRank(ctx, kGKey, {3}, "key"));
    RETURN_IF_ERROR(RequireRank(ctx, kGValue, {3}, "value"));
    for (size_t i : {kGKey, kGValue}) {
      const Shape& s = *ShapeOf(ctx, i);
      RETURN_IF_ERROR(ExpectDim(ctx, s[0], g.batch, "key/value dim 0 (batch)"));
      RETURN_IF_ERROR(ExpectDim(ctx, s[1], g.q_len, "key/value dim 1 (sequence length)"));
      RETURN_IF_ERROR(
          ExpectDim(ctx, s[2], Known(g.head_size) ? g.head_size * g.kv_heads : -1, "key/value dim 2 (kv hidden)"));
    }
  }
  if ((ctx.input(kGPastKey) == nullptr) != (ctx.input(kGPastValue) == nullptr)) {
    return ctx.Error("past_key and past_value must both be given or both be absent");
  }
  for (size_t i : {kGPastKey, kGPastValue}) {
    const Shape* p = ShapeOf(ctx, i);
    if (p == nullptr) continue;
    RETURN_IF_ERROR(RequireRank(ctx, i, {4}, "past_key/past_value"));
    RETURN_IF_ERROR(ExpectDim(ctx, (*p)[0], g.batch, "past dim 0 (batch)"));
    RETURN_IF_ERROR(ExpectDim(ctx, (*p)[1], g.kv_heads, "past dim 1 (kv_num_heads)"));
    RETURN_IF_ERROR(ExpectDim(ctx, (*p)[3], g.head_size, "past dim 3 (head size)"));
    g.past = (*p)[2];
  }
  RETURN_IF_ERROR(RequireRank(ctx, kSeqLensK, {1}, "seqlens_k"));
  RETURN_IF_ERROR(ExpectDim(ctx, (*ShapeOf(ctx, kSeqLensK))[0], g.batch, "seqlens_k length (batch)"));
  if (NumElements(*ShapeOf(ctx, kTotalSeqLen)) != 1) return ctx.Error("total_sequence_length must hold one value");
  const Tensor* total = ctx.RequireValue(kTotalSeqLen);
  if (total == nullptr) return ctx.ValueNeeded();
  g.total = total->GetAsInt64(0);
  g.present = Known(g.past) ? std::max(g.total, g.past) : -1;
  if ((ctx.input(kCos) == nullptr) != (ctx.input(kSin) == nullptr)) {
    return ctx.Error("cos_cache and sin_cache must both be given or both be absent");
  }
  const bool rotary = node.GetInt("do_rotary", 0) == 1;
  if (rotary && ctx.input(kCos) == nullptr) return ctx.Error("do_rotary=1 needs cos_cache and sin_cache");
  if (rotary) {
    RETURN_IF_ERROR(RequireRank(ctx, kCos, {2}, "cos_cache"));
    RETURN_IF_ERROR(RequireRank(ctx, kSin, {2}, "sin_cache"));
    const Shape &c = *ShapeOf(ctx, kCos), &s = *ShapeOf(ctx, kSin);
    RETURN_IF_ERROR(ExpectDim(ctx, s[0], c[0], "sin_cache dim 0"));
    RETURN_IF_ERROR(ExpectDim(ctx, s[1], c[1], "sin_cache dim 1"));
    if (Known(c[0]) && c[0] < g.total) return ctx.Error("cos_cache has fewer rows than total_sequence_length");
    if (Known(c[1]) && Known(g.head_size) && (c[1] % 8 != 0 || c[1] > g.head_size / 16 * 8)) {
      return ctx.Error("cos_cache dim 1 must be a multiple of 8 and at most head_size / 2 (ONNX Runtime's rule)");
    }
  }
  if (const Shape* pos = ShapeOf(ctx, kPositionIds)) {
    RETURN_IF_ERROR(RequireRank(ctx, kPositionIds, {2}, "position_ids"));
    RETURN_IF_ERROR(ExpectDim(ctx, (*pos)[0], g.batch, "position_ids dim 0 (batch)"));
    RETURN_IF_ERROR(ExpectDim(ctx, (*pos)[1], g.q_len, "position_ids dim 1 (sequence length)"));
  }
  RETURN_IF_ERROR(CheckAttentionBias(ctx, kGAttnBias, g.batch, g.heads, g.q_len, g.total));
  if (const Shape* sink = ShapeOf(ctx, kHeadSink)) {
    RETURN_IF_ERROR(RequireRank(ctx, kHeadSink, {1}, "head_sink"));
    RETURN_IF_ERROR(ExpectDim(ctx, (*sink)[0], g.heads, "head_sink length (num_heads)"));
  }
  if (Known(g.q_len) && g.q_len > 1 && g.q_len != g.total && Known(g.batch) && g.batch != 1) {
    return ctx.Error("with past context and sequence length > 1 the batch size must be 1 (as ONNX Runtime requires)");
  }
  return g;
}

Status InferGroupQueryAttention(InferContext& ctx) {
  ASSIGN_OR_RETURN(GqaGeometry g, GetGqaGeometry(ctx));
  ctx.SetOutput(0, DType::kF32, {g.batch, g.q_len, Known(g.head_size) ? g.head_size * g.heads : -1});
  ctx.SetOutput(1, DType::kF32, {g.batch, g.kv_heads, g.present, g.head_size});
  ctx.SetOutput(2, DType::kF32, {g.batch, g.kv_heads, g.present, g.head_size});
  return Status::Ok();
}

}  // namespace

// ORT's CPU GroupQueryAttention: batch b sees total_b = seqlens_k[b] + 1 keys; its new tokens sit at
// past_b = total_b - S (0 on the first prompt, S == total_sequence_length), row s sees keys up to
// past_b + s, and only the last local_window_size of them (itself included: what ORT 1.30 computes;
// its older kernels and documentation say local_window_size + 1). The present buffers hold each
// batch's past rows, its new rows after them, zeros beyond.
Result<AttentionPlan> PlanGroupQueryAttention(KernelContext& ctx) {
  ASSIGN_OR_RETURN(GqaGeometry g, CheckAtRun(ctx, GetGqaGeometry));
  const Node& node = ctx.node();
  const int64_t B = g.batch, S = g.q_len, N = g.heads, kvN = g.kv_heads, H = g.head_size, P = g.present;
  const bool first_prompt = S == g.total;
  AttentionPlan plan;
  plan.batch = B;
  plan.heads = N;
  plan.kv_heads = kvN;
  plan.q_len = S;
  plan.kv_len = plan.kv_stride = P;
  plan.head_size = plan.v_head_size = H;
  plan.scale = DefaultScale(node, H);
  plan.softcap = node.GetFloat("softcap", 0.0f);
  plan.smooth_softmax = node.GetInt("smooth_softmax", 0) == 1;
  plan.head_sink = F32(ctx.input(kHeadSink));
  SetAttentionBias(ctx.input(kGAttnBias), plan);
  const int64_t window = node.GetInt("local_window_size", -1);
  const int32_t* seqlens = ctx.input(kSeqLensK)->data<int32_t>();
  std::vector<int64_t> past_len(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    const int64_t total_b = static_cast<int64_t>(seqlens[b]) + 1;
    const int64_t past_b = first_prompt ? 0 : total_b - S;
    if (total_b > P || past_b < 0 || past_b > g.past) {
      return ctx.Error("seqlens_k[" + std::to_string(b) + "] = " + std::to_string(seqlens[b]) +
                       " does not fit the past (" + std::to_string(g.past) + ") and present (" + std::to_string(P) +
                       ") lengths with " + std::to_string(S) + " new tokens");
    }
    past_len[static_cast<size_t>(b)] = past_b;
  }
  // New tokens per head: [B, S, heads · H] slices of query (and of key/value, or of packed query).
  const int64_t q_row = g.packed ? (N + 2 * kvN) * H : N * H;
  const float* qsrc = F32(ctx.input(kGQuery));
  const float* ksrc = g.packed ? qsrc + N * H : F32(ctx.input(kGKey));
  const float* vsrc = g.packed ? qsrc + (N + kvN) * H : F32(ctx.input(kGValue));
  const int64_t kv_row = g.packed ? q_row : kvN * H;
  plan.q.resize(static_cast<size_t>(B * N * S * H));
  ToHeads(qsrc, nullptr, B, S, N, H, q_row, plan.q.data(), S, 0);
  std::vector<float> new_k(static_cast<size_t>(B * kvN * S * H)), new_v(new_k.size());
  ToHeads(ksrc, nullptr, B, S, kvN, H, kv_row, new_k.data(), S, 0);
  ToHeads(vsrc, nullptr, B, S, kvN, H, kv_row, new_v.data(), S, 0);
  if (node.GetInt("do_rotary", 0) == 1) {
    const Tensor& cos = *ctx.input(kCos);
    const int64_t half = cos.dim(1), rows = cos.dim(0);
    const bool interleaved = node.GetInt("rotary_interleaved", 0) == 1;
    // position_ids when given, else each new token's place after the batch's past; ORT 1.30 ignores
    // position_ids on the first prompt (positions 0 .. S-1 whatever they say).
    const Tensor* position_ids = first_prompt ? nullptr : ctx.input(kPositionIds);
    const int64_t* positions = position_ids != nullptr ? position_ids->data<int64_t>() : nullptr;
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t s = 0; s < S; ++s) {
        const int64_t pos = positions != nullptr ? positions[b * S + s] : past_len[static_cast<size_t>(b)] + s;
        if (pos < 0 || pos >= rows) {
          return ctx.Error("position " + std::to_string(pos) + " is outside the cos/sin cache");
        }
        const float *c = F32(&cos) + pos * half, *sn = F32(ctx.input(kSin)) + pos * half;
        for (int64_t n = 0; n < N; ++n) {
          float* r = plan.q.data() + ((b * N + n) * S + s) * H;
          RotateHalfOrPairs(r, r, H, 2 * half, c, sn, interleaved);
        }
        for (int64_t n = 0; n < kvN; ++n) {
          float* r = new_k.data() + ((b * kvN + n) * S + s) * H;
          RotateHalfOrPairs(r, r, H, 2 * half, c, sn, interleaved);
        }
      }
    }
  }
  plan.k.assign(static_cast<size_t>(B * kvN * P * H), 0.0f);
  plan.v.assign(plan.k.size(), 0.0f);
  const float *past_k = F32(ctx.input(kGPastKey)), *past_v = F32(ctx.input(kGPastValue));
  for (int64_t b = 0; b < B; ++b) {
    const int64_t past_b = past_len[static_cast<size_t>(b)];
    for (int64_t n = 0; n < kvN; ++n) {
      const int64_t blk = b * kvN + n;
      float *dk = plan.k.data() + blk * P * H, *dv = plan.v.data() + blk * P * H;
      if (past_b > 0) {
        std::memcpy(dk, past_k + blk * g.past * H, static_cast<size_t>(past_b * H) * sizeof(float));
        std::memcpy(dv, past_v + blk * g.past * H, static_cast<size_t>(past_b * H) * sizeof(float));
      }
      std::memcpy(dk + past_b * H, new_k.data() + blk * S * H, static_cast<size_t>(S * H) * sizeof(float));
      std::memcpy(dv + past_b * H, new_v.data() + blk * S * H, static_cast<size_t>(S * H) * sizeof(float));
    }
  }
  plan.row_begin.resize(static_cast<size_t>(B * S));
  plan.row_end.resize(static_cast<size_t>(B * S));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t s = 0; s < S; ++s) {
      // A padded prompt's rows past its length see at most the batch's seqlens_k[b] + 1 keys, with the window
      // still ending at the row's own position: late rows may see none and give zeros (as ORT 1.30).
      const int64_t end = past_len[static_cast<size_t>(b)] + s + 1;
      const size_t r = static_cast<size_t>(b * S + s);
      plan.row_end[r] = std::min(end, static_cast<int64_t>(seqlens[b]) + 1);
      plan.row_begin[r] = window > 0 && end > window ? end - window : 0;
    }
  }
  WritePresent(ctx, 1, 2, plan);
  return plan;
}

namespace {

// softmax(Q·Kᵀ·scale + mask + bias)·V per (batch, head, row), in double.
void RunPlanInDouble(const AttentionPlan& p, float* out) {
  const int64_t group = p.heads / p.kv_heads, T = p.kv_len, S = p.q_len;
#pragma omp parallel for
  for (int64_t bn = 0; bn < p.batch * p.heads; ++bn) {
    const int64_t b = bn / p.heads, n = bn % p.heads, kvh = b * p.kv_heads + n / group;
    const float* kb = p.k.data() + kvh * p.kv_stride * p.head_size;
    const float* vb = p.v.data() + kvh * p.kv_stride * p.v_head_size;
    std::vector<double> score(static_cast<size_t>(T));
    for (int64_t s = 0; s < S; ++s) {
      const float* q = p.q.data() + (bn * S + s) * p.head_size;
      const size_t r = static_cast<size_t>(b * S + s);
      const int64_t lo = p.row_begin.empty() ? 0 : p.row_begin[r];
      const int64_t hi = p.row_end.empty() ? T : std::min(p.row_end[r], T);
      double max = -INFINITY;
      for (int64_t t = lo; t < hi; ++t) {
        double dot = 0;
        for (int64_t h = 0; h < p.head_size; ++h) dot += static_cast<double>(q[h]) * kb[t * p.head_size + h];
        double x = dot * p.scale;
        if (p.softcap > 0) x = p.softcap * std::tanh(x / p.softcap);
        if (!p.mask.empty()) x += p.mask[static_cast<size_t>((b * S + s) * T + t)];
        if (p.bias != nullptr) {
          x += p.bias[b * p.bias_batch_stride + n * p.bias_head_stride + s * p.bias_row_stride + t];
        }
        score[static_cast<size_t>(t)] = x;
        max = std::max(max, x);
      }
      // One more term in the denominator: exp(head_sink[n]), or exp(0) for smooth_softmax.
      const bool extra = p.head_sink != nullptr || p.smooth_softmax;
      const double sink = p.head_sink != nullptr ? p.head_sink[n] : 0.0;
      if (extra) max = std::max(max, sink);
      double sum = extra ? std::exp(sink - max) : 0.0;
      for (int64_t t = lo; t < hi; ++t) {
        double& e = score[static_cast<size_t>(t)];
        e = std::exp(e - max);
        sum += e;
      }
      float* o = out + ((b * S + s) * p.heads + n) * p.v_head_size;
      if (hi <= lo) {  // a row that sees no key (GroupQueryAttention's padding)
        std::fill(o, o + p.v_head_size, 0.0f);
        continue;
      }
      for (int64_t h = 0; h < p.v_head_size; ++h) {
        double acc = 0;
        for (int64_t t = lo; t < hi; ++t) acc += score[static_cast<size_t>(t)] * vb[t * p.v_head_size + h];
        o[h] = static_cast<float>(acc / sum);
      }
    }
  }
}

template <Result<AttentionPlan> (*Plan)(KernelContext&)>
Status RunPlanned(KernelContext& ctx) {
  ASSIGN_OR_RETURN(AttentionPlan plan, Plan(ctx));
  RunPlanInDouble(plan, ctx.output(0)->data<float>());
  return Status::Ok();
}

}  // namespace

std::vector<OpEntry> ContribAttentionOps() {
  return {
      {"RotaryEmbedding", InferRotaryEmbedding, RunRotaryEmbedding, kMicrosoftDomain},
      {"MultiHeadAttention", InferMultiHeadAttention, RunPlanned<PlanMultiHeadAttention>, kMicrosoftDomain},
      {"Attention", InferAttention, RunPlanned<PlanAttention>, kMicrosoftDomain},
      {"GroupQueryAttention", InferGroupQueryAttention, RunPlanned<PlanGroupQueryAttention>, kMicrosoftDomain},
  };
}

}  // namespace chipfit
