// ONNX Runtime's contrib attention ops reduced to one form: Q, K and V per head (BNSH), an additive
// mask and the rows' softmax ranges. The reference and the CPU kernels share this preparation
// (projections, biases, past/present concatenation, rotary embedding, masks) and differ only in how
// they compute softmax(Q·Kᵀ·scale + mask)·V.
#pragma once

#include <cstdint>
#include <vector>

#include "core/runtime/kernel.h"

namespace chipfit {

struct AttentionPlan {
  int64_t batch = 0, heads = 0, kv_heads = 0;  // query head n reads kv head n / (heads / kv_heads)
  int64_t q_len = 0, kv_len = 0;               // S, and T: the keys a row may see (past + new)
  int64_t head_size = 0, v_head_size = 0;
  float scale = 1.0f;
  float softcap = 0.0f;              // > 0: scaled scores become softcap · tanh(score / softcap), before mask and bias
  bool smooth_softmax = false;       // the softmax's denominator gets one more exp(0) term
  const float* head_sink = nullptr;  // [N]: instead, one more exp(head_sink[n]) term (GroupQueryAttention)
  std::vector<float> q;              // [B, N, S, H]
  std::vector<float> k, v;           // [B, kvN, kv_stride, H] and [B, kvN, kv_stride, Hv]
  int64_t kv_stride = 0;             // rows per (batch, kv head) in k and v (>= kv_len)
  std::vector<float> mask;           // added to the scaled scores, [B, S, T]; empty when none
  const float* bias = nullptr;       // attention_bias added too, [B or 1, N or 1, S, bias_row_stride]
  int64_t bias_batch_stride = 0, bias_head_stride = 0, bias_row_stride = 0;
  // GroupQueryAttention: row (b, s) takes its softmax over keys [row_begin, row_end) and gives the
  // others probability 0. Empty: every row takes all T keys.
  std::vector<int64_t> row_begin, row_end;
};

// Each prepares the plan of one node and writes its present outputs (the concatenated keys and
// values); output 0, [B, S, N · Hv], is left to the caller. Errors name the node.
Result<AttentionPlan> PlanMultiHeadAttention(KernelContext& ctx);
Result<AttentionPlan> PlanAttention(KernelContext& ctx);
Result<AttentionPlan> PlanGroupQueryAttention(KernelContext& ctx);
// Attention from its projection input · weights + bias computed elsewhere: [B · S, Q | K | V hidden] rows.
Result<AttentionPlan> PlanAttentionFromQkv(KernelContext& ctx, const float* projected);

// Rotary embedding of one vector of head_size values: the first rotary_dim rotate (pairs (i, i + rotary_dim/2),
// or (2i, 2i+1) when interleaved) by the angles whose cos/sin rows are given (rotary_dim / 2 values each);
// the rest are copied. in and out may be the same.
void RotateHalfOrPairs(const float* in, float* out, int64_t head_size, int64_t rotary_dim, const float* cos,
                       const float* sin, bool interleaved);

}  // namespace chipfit
