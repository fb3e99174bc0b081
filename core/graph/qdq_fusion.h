// FuseQdqPatterns: DequantizeLinear → Conv/MatMul/Gemm [→ Relu/Clip] → QuantizeLinear rewritten into QLinearConv
// and QLinearMatMul nodes that compute with the model's own scales and zero points.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/graph/graph.h"

namespace chipfit {

struct QdqFusionOptions {
  bool conv = true;    // make QLinearConv nodes (the device runs them)
  bool matmul = true;  // make QLinearMatMul nodes
  bool gemm = true;    // make QLinearGemm nodes (com.chipfit: QLinearMatMul + an int32 bias) of Gemm with C
  // ONNX nodes that must run as written (kept in fp32 by request): a layer listed here is not fused.
  std::set<std::string> keep{};
};

struct QdqFusionResult {
  int fused = 0;
  std::vector<std::string> fused_nodes{};  // the Conv/MatMul/Gemm names that became QLinear* nodes
  // Why each Conv/MatMul/Gemm that reads a DequantizeLinear output or feeds a QuantizeLinear was left as
  // written, by node name.
  std::map<std::string, std::string> left{};
};

// Rewrites, in the main graph,
//   DequantizeLinear(x_q, sx, zx) ─┐
//   DequantizeLinear(w_q, sw, zw) ─┴→ Conv(·, ·, B) [→ Relu | Clip] → QuantizeLinear(·, sy, zy) → y_q
// into QLinearConv(x_q, sx, zx, w_q, sw, zw, sy, zy, B_int32) writing y_q, and the same with MatMul, or Gemm
// (transA 0, alpha 1, constant B; transB transposes the stored weights), into QLinearMatMul; a Gemm with C
// (beta 1) into com.chipfit's QLinearGemm, QLinearMatMul's inputs plus C in int32 as Conv's bias. Conditions:
// sx, sy, zx, zy are constant scalars; w_q is a constant u8/s8 initializer with a per-tensor scale or one per
// output channel (Conv: axis 0; MatMul/Gemm: per column of a 2-D B); MatMul's b may also be an activation
// with a per-tensor scale; all scales f32 and every zero point of its quantized value's type. Conv's bias is
// a constant float [M] or DequantizeLinear of a constant int32 [M] (so is Gemm's C); it becomes round(B / (sx·sw[m]))
// in int32, the bias scale ONNX Runtime's quantizer writes (exact when B was written with that scale). Relu and Clip
// fuse only when the output quantization saturates exactly where they clip (Relu: zy is the type's lowest
// value), so dropping them changes no quantized value. The Conv's float output (and the activation's) must
// have no other reader; a DequantizeLinear read by others stays for them. The fused node keeps the
// Conv/MatMul/Gemm name and covers every ONNX node it replaces: the layer first, then the DequantizeLinear
// nodes, the activation and the QuantizeLinear in graph order.
QdqFusionResult FuseQdqPatterns(Graph& graph, const QdqFusionOptions& options = {});

}  // namespace chipfit
