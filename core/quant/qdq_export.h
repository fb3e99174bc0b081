// Writing chipfit's int8 calibration as a standard QDQ ONNX model (QuantizeLinear → DequantizeLinear pairs).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor/quant_params.h"
#include "onnx/onnx_pb.h"

namespace chipfit {

struct QdqOptions {
  // Nodes to quantise, by chipfit's node name (the ONNX name, or "<op_type>#<index>" for an unnamed node):
  // what chipfit's cpu:int8 compile ran in int8 (nodes of other ops are ignored). Empty: every Conv, MatMul and
  // Gemm whose first input has a calibrated range and whose weights are constant.
  std::set<std::string> int8_nodes{};
  std::set<std::string> keep_fp32{};  // never quantised, even when listed in int8_nodes
  std::string origin = "model";       // names the model in messages
  // The same model with its input shapes bound and shapes inferred (LoadOnnxModel's proto), where the opset
  // upgrade reads ranks and types from; null: libonnx infers them from the model as it is.
  const onnx::ModelProto* shaped = nullptr;
  // Ranks of values as chipfit ran them, for values libonnx's inference leaves without a shape.
  std::map<std::string, int64_t> ranks{};
  // Which quantised layers' outputs get a Q/DQ pair. kShared: only where the value (after a Relu/Clip that
  // saturates there) is already quantised as another quantised layer's input, so the model computes what
  // chipfit's cpu:int8 computes. kEvery: every one, ONNX Runtime's full QDQ form, which lets an int8 runtime
  // fuse each layer but rounds values chipfit's int8 keeps in float (hard-swish inputs, residual sums).
  enum class Outputs { kShared, kEvery };
  Outputs outputs = Outputs::kShared;
};

struct QdqExport {
  onnx::ModelProto model;
  std::vector<std::string> quantized{};  // chipfit names of the nodes that got Q/DQ, in graph order
  std::vector<std::string> kept_fp32{};  // "node: reason" for listed nodes left in float
  int batchnorms_folded = 0;
  int quantized_outputs = 0;                 // quantised nodes whose output has a Q/DQ pair too
  std::vector<std::string> float_outputs{};  // "node: reason" for quantised nodes whose output stays float
  int64_t from_opset = 0, to_opset = 0;
  std::vector<std::string> notes{};  // folds, output pairs, opset rewrites, removed float weights
};

// The activation quantisation chipfit's cpu:int8 kernels use for a calibrated input (devices/cpu: Conv takes
// the calibrated asymmetric u8 with its zero point; MatMul and Gemm take u8 with zero point 0 for a range that
// never goes negative, else symmetric s8). Same float arithmetic as the kernels, so the scales match bit for bit.
QuantParams ActivationParamsFor(const std::string& op_type, const QuantParams& calibrated);

// Rewrites `model` in ONNX Runtime's QDQ form. First BatchNormalization folds into the Conv/Gemm before it, exactly
// as chipfit's cpu:int8 compile folds it (FoldBatchNorm), so the calibrated value names match. Then each quantised
// node's activation input gets QuantizeLinear → DequantizeLinear with its per-tensor parameters ("<node>/x_q",
// "<node>/x_dq"), and so does its output ("<node>/y_q", "<node>/y_dq", every reader reading the DequantizeLinear),
// placed after a Relu/Clip that is the output's only reader when the quantisation saturates where it clips, so
// DequantizeLinear → layer [→ Relu/Clip] → QuantizeLinear fuses into one int8 kernel exactly; a value feeding the
// next quantised node has one pair. The weights become an int8 initializer with symmetric per-channel scales along
// the output channel (Conv: axis 0, MatMul: the last axis, Gemm: 1, or 0 with transB) feeding "<node>/w_dq"; bias
// stays float, as chipfit adds it. Float constants nothing reads any more are dropped. Every other node, name, input
// and output is kept. A default opset below 13 (per-axis DequantizeLinear) is raised to 13 when every op means the
// same there; attributes that became inputs (Clip min/max, Slice starts/ends/axes, Squeeze/Unsqueeze/ReduceSum axes,
// Split, Pad, TopK k, Dropout ratio) move to constant inputs. Unsupported naming the op when an op's meaning changed
// (Softmax over a non-last axis, Upsample, …); InvalidArgument for a listed node without a calibrated input.
Result<QdqExport> ExportQdq(const onnx::ModelProto& model, const QuantTable& table, const QdqOptions& options = {});

// Raises the default-domain opset of `model` to `target` (13 or more) as described above; notes say what moved.
Status UpgradeOpset(onnx::ModelProto& model, int64_t target, std::vector<std::string>& notes,
                    const onnx::ModelProto* shaped = nullptr, const std::map<std::string, int64_t>& ranks = {});

// Serializes `model` to `path` through a temporary file in the same folder; refuses models of 2 GiB or more
// (protobuf's limit; chipfit writes no external data).
Status WriteOnnxModel(const onnx::ModelProto& model, const std::filesystem::path& path);

}  // namespace chipfit
