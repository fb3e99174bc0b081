// Op formulas for FLOPs; bytes come straight from the shapes and dtypes.
#include "core/runtime/cost.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>

namespace chipfit {
namespace {

int64_t Elements(const ValueInfo* v) { return v ? NumElements(v->shape) : 0; }
int64_t Bytes(const ValueInfo* v) { return v ? Elements(v) * static_cast<int64_t>(DTypeSize(v->dtype)) : 0; }

int64_t Product(const Shape& shape, size_t from) {
  int64_t p = 1;
  for (size_t i = from; i < shape.size(); ++i) p *= shape[i];
  return p;
}

bool IsDataMovement(const std::string& op) {
  static const std::set<std::string> kOps = {"Reshape",      "Flatten",
                                             "Squeeze",      "Unsqueeze",
                                             "Transpose",    "Concat",
                                             "Split",        "Slice",
                                             "Gather",       "GatherElements",
                                             "GatherND",     "Expand",
                                             "Tile",         "Pad",
                                             "Shape",        "Size",
                                             "Identity",     "Dropout",
                                             "Constant",     "ConstantOfShape",
                                             "Range",        "DepthToSpace",
                                             "SpaceToDepth", "Cast",
                                             "CastLike",     "ScatterElements",
                                             "ScatterND",    "Trilu",
                                             "EyeLike",      "OneHot",
                                             "NonZero",      "If",
                                             "Loop",         "Scan"};
  return kOps.contains(op);
}

// Ops per element for normalisations and softmax-like ops (subtract, square, sum, scale, shift …).
int64_t OpsPerElement(const std::string& op) {
  if (op == "BatchNormalization") return 2;  // inference: one multiply-add per element
  if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") return 4;
  if (op == "LayerNormalization" || op == "InstanceNormalization" || op == "GroupNormalization") return 6;
  if (op == "LRN" || op == "MeanVarianceNormalization") return 6;
  return 1;
}

}  // namespace

void CountGatheredReads(const std::string& op, int64_t data_bytes, KernelCost& cost) {
  if (op != "Gather" && op != "GatherElements" && op != "GatherND") return;
  cost.bytes_read -= std::clamp<int64_t>(data_bytes - cost.bytes_written, 0, cost.bytes_read);
}

// ONNX Runtime's contrib ops whose work is matrix products: their multiply-adds from the shapes (the rest of
// com.microsoft counts per output element like the ONNX ops). Attention projects x with its weights, then each
// head multiplies Q·Kᵀ and the weights by V over T keys (past + new); nullopt where the shapes do not say.
std::optional<int64_t> ContribFlops(const Node& node, const std::vector<const ValueInfo*>& inputs,
                                    const std::vector<ValueInfo>& outputs) {
  const std::string& op = node.op_type;
  const ValueInfo* x = inputs.empty() ? nullptr : inputs[0];
  const int64_t y = outputs.empty() ? 0 : NumElements(outputs[0].shape);
  auto dim = [](const ValueInfo* v, size_t i) { return v != nullptr && v->shape.size() > i ? v->shape[i] : -1; };
  if (x == nullptr || y <= 0 || x->shape.empty() || NumElements(x->shape) < 0) return std::nullopt;
  const int64_t k = x->shape.back();
  if (op == "MatMulNBits") return 2 * y * node.GetInt("K", k);
  if (op == "MatMulIntegerToFloat" || op == "DynamicQuantizeMatMul") return 2 * y * k;
  if (op == "FusedMatMul") {
    const int64_t inner = node.GetInt("transA", 0) && x->shape.size() >= 2 ? x->shape[x->shape.size() - 2] : k;
    return 2 * y * inner;
  }
  if (op == "QGemm") {
    const int64_t inner = node.GetInt("transA", 0) && x->shape.size() == 2 ? x->shape[0] : k;
    return 2 * y * inner;
  }
  if (op == "Attention" && inputs.size() > 1 && dim(inputs[1], 1) > 0 && x->shape.size() == 3) {
    const int64_t projected = dim(inputs[1], 1);  // q + k + v hidden sizes
    const std::vector<int64_t> sizes = node.GetInts("qkv_hidden_sizes");
    const int64_t qv = sizes.size() == 3 ? sizes[0] + sizes[2] : 2 * projected / 3;  // Q·Kᵀ and weights·V widths
    const int64_t past = inputs.size() > 4 ? std::max<int64_t>(dim(inputs[4], 3), 0) : 0;
    const int64_t tokens = x->shape[0] * x->shape[1];
    return 2 * tokens * k * projected + 2 * tokens * (x->shape[1] + past) * qv;
  }
  if (op == "MultiHeadAttention" && inputs.size() > 1 && x->shape.size() == 3) {
    const ValueInfo* key = inputs[1];
    int64_t total = key == nullptr ? x->shape[1] : key->shape.size() == 4 ? dim(key, 2) : dim(key, 1);
    if (inputs.size() > 6 && dim(inputs[6], 2) > 0) total += dim(inputs[6], 2);
    if (total <= 0) return std::nullopt;
    return 2 * total * (NumElements(x->shape) + y);
  }
  if (op == "GroupQueryAttention" && outputs.size() > 1 && dim(&outputs[1], 2) > 0) {
    return 4 * dim(&outputs[1], 2) * y;  // T keys for each query head: Q·Kᵀ and the weights by V
  }
  return std::nullopt;
}

KernelCost EstimateCost(const Node& node, const std::vector<const ValueInfo*>& inputs,
                        const std::vector<ValueInfo>& outputs) {
  KernelCost cost;
  for (const ValueInfo* in : inputs) cost.bytes_read += Bytes(in);
  int64_t out_elements = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    // An omitted optional output ("" name) still gets a shape from the shape function, but the
    // executor gives the kernel no tensor for it: nothing is written.
    if (i < node.outputs.size() && node.outputs[i].empty()) continue;
    cost.bytes_written += NumElements(outputs[i].shape) * static_cast<int64_t>(DTypeSize(outputs[i].dtype));
    out_elements += NumElements(outputs[i].shape);
  }
  const std::string& op = node.op_type;
  if (!inputs.empty()) CountGatheredReads(op, Bytes(inputs[0]), cost);
  const ValueInfo* x = inputs.empty() ? nullptr : inputs[0];
  const ValueInfo* w = inputs.size() > 1 ? inputs[1] : nullptr;
  const int64_t y = outputs.empty() ? 0 : NumElements(outputs[0].shape);
  if (IsDataMovement(op)) {
    cost.flops = 0;
  } else if (const auto contrib = node.domain == "com.microsoft" ? ContribFlops(node, inputs, outputs) : std::nullopt;
             contrib) {
    cost.flops = *contrib;
  } else if ((op == "Conv" || op == "ConvInteger" || op == "FusedConv") && x && w && w->shape.size() >= 2) {
    // Per output element: (Cin/g)·k MACs, where W is [Cout, Cin/g, k…]; a fused residual Z, an
    // activation ("" is none) and each absorbed Max/Min clamp add one op per output element, and an
    // absorbed scale-and-shift two (a Mul and an Add), as the ops they replace did. ConvInteger's third input is x's
    // zero point, not a bias.
    const bool bias = op != "ConvInteger" && inputs.size() > 2 && inputs[2];
    cost.flops = 2 * y * Product(w->shape, 1) + (bias ? y : 0);
    if (op == "FusedConv") {
      const int64_t post_ops = (inputs.size() > 3 && inputs[3] ? 1 : 0) +
                               (node.GetString("activation", "").empty() ? 0 : 1) + (node.Has("clamp_min") ? 1 : 0) +
                               (node.Has("clamp_max") ? 1 : 0) +
                               (node.Has("post_scale") || node.Has("post_shift") ? 2 : 0);
      cost.flops += post_ops * y;
    }
  } else if (op == "QLinearConv" && x && inputs.size() > 3 && inputs[3] && inputs[3]->shape.size() >= 2) {
    // Integer MACs as Conv's (W is input 3), plus the requantisation per output element.
    cost.flops = 2 * y * Product(inputs[3]->shape, 1) + y;
  } else if ((op == "LSTM" || op == "GRU" || op == "RNN") && x && w && w->shape.size() == 3 && inputs.size() > 2 &&
             inputs[2] && inputs[2]->shape.size() == 3 && x->shape.size() == 3) {
    // Per time step, batch row and direction: the gates' two matrix products (W·x and R·h, W is
    // [dirs, gates·hidden, input], R [dirs, gates·hidden, hidden]) and about two ops per gate value
    // for the activations and the state update.
    const int64_t steps = x->shape[0] * x->shape[1] * w->shape[0];
    const int64_t gate_values = w->shape[1];
    cost.flops = steps * gate_values * (2 * (w->shape[2] + inputs[2]->shape[2]) + 2);
  } else if (op == "ConvTranspose" && x && w && w->shape.size() >= 2) {
    // Every input element scatters into (Cout/g)·k outputs; W is [Cin, Cout/g, k…].
    cost.flops = 2 * Elements(x) * Product(w->shape, 1) + (inputs.size() > 2 && inputs[2] ? y : 0);
  } else if ((op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul" || op == "QLinearGemm") && x &&
             !x->shape.empty()) {
    cost.flops = 2 * y * x->shape.back();
  } else if (op == "FusedMatMul" && x && !x->shape.empty()) {
    // The product, plus one op per output element for the bias and one for the activation, as
    // FusedConv counts its activation (a decomposed GELU's five elementwise ops count as one).
    const bool bias = inputs.size() > 2 && inputs[2];
    cost.flops = 2 * y * x->shape.back() + (bias ? y : 0) + (node.GetString("activation", "").empty() ? 0 : y);
  } else if (op == "Gemm" && x && x->shape.size() == 2) {
    const int64_t k = node.GetInt("transA", 0) ? x->shape[0] : x->shape[1];
    cost.flops = 2 * y * k + (inputs.size() > 2 && inputs[2] ? y : 0);
  } else if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
    int64_t window = 1;
    for (int64_t k : node.GetInts("kernel_shape")) window *= k;
    cost.flops = y * window;
  } else if (op.starts_with("Global") || op.starts_with("Reduce") || op == "ArgMax" || op == "ArgMin" ||
             op == "CumSum" || op == "TopK") {
    cost.flops = Elements(x);
  } else {
    cost.flops = out_elements * OpsPerElement(op);
  }
  return cost;
}

}  // namespace chipfit
