// Output element types and ranks by op family, for nodes whose dims are only known at run time.
#include "core/runtime/rank_rules.h"

#include <algorithm>
#include <set>
#include <string>

#include "core/tensor/tensor.h"

namespace chipfit::compile {
namespace {

// The output has input 0's type and rank.
const std::set<std::string>& SameAsInput() {
  static const std::set<std::string> ops = {"Abs",      "Acos",        "Acosh",
                                            "Asin",     "Asinh",       "Atan",
                                            "Atanh",    "BitwiseNot",  "Ceil",
                                            "Celu",     "Clip",        "Cos",
                                            "Cosh",     "CumSum",      "Elu",
                                            "Erf",      "Exp",         "Floor",
                                            "Gelu",     "HardSigmoid", "HardSwish",
                                            "Hardmax",  "Identity",    "LeakyRelu",
                                            "Log",      "LogSoftmax",  "LpNormalization",
                                            "Mish",     "Neg",         "Reciprocal",
                                            "Relu",     "Round",       "Selu",
                                            "Shrink",   "Sigmoid",     "Sign",
                                            "Sin",      "Sinh",        "Softmax",
                                            "Softplus", "Softsign",    "Sqrt",
                                            "Tan",      "Tanh",        "ThresholdedRelu",
                                            "Not"};
  return ops;
}

// Numpy-style broadcasting: the output's rank is the largest input rank.
const std::set<std::string>& Broadcasting() {
  static const std::set<std::string> ops = {"Add",        "And",         "BitShift", "BitwiseAnd", "BitwiseOr",
                                            "BitwiseXor", "Div",         "Equal",    "Greater",    "GreaterOrEqual",
                                            "Less",       "LessOrEqual", "Max",      "Mean",       "Min",
                                            "Mod",        "Mul",         "Or",       "Pow",        "PRelu",
                                            "Sub",        "Sum",         "Where",    "Xor"};
  return ops;
}

// The dims change, the rank and type do not.
bool KeepsRank(const std::string& op) {
  static const std::set<std::string> ops = {"Transpose", "Slice",          "Pad", "Tile", "Resize",
                                            "Upsample",  "ReverseSequence"};
  return ops.contains(op);
}

// The broadcasting ops whose output is bool whatever their inputs are.
bool ReturnsBool(const std::string& op) {
  static const std::set<std::string> ops = {"And",  "Equal",       "Greater", "GreaterOrEqual",
                                            "Less", "LessOrEqual", "Or",      "Xor"};
  return ops.contains(op);
}

RankedType Input(const std::vector<RankedType>& inputs, size_t k) {
  return k < inputs.size() ? inputs[k] : RankedType{};
}

std::optional<RankedType> Known(RankedType t) {
  if (t.rank < 0 || t.dtype == DType::kUndefined) return std::nullopt;
  return t;
}

std::optional<RankedType> Broadcast(const Node& node, const std::vector<RankedType>& inputs) {
  RankedType out;
  // Where's condition is bool; the values are inputs 1 and 2.
  const size_t type_from = node.op_type == "Where" ? 1 : 0;
  out.dtype = ReturnsBool(node.op_type) ? DType::kBool : Input(inputs, type_from).dtype;
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    if (node.inputs[k].empty()) continue;
    if (inputs[k].rank < 0) return std::nullopt;
    out.rank = std::max(out.rank, inputs[k].rank);
  }
  return Known(out);
}

}  // namespace

std::vector<std::optional<RankedType>> OutputRanks(const Node& node, const std::vector<RankedType>& inputs) {
  std::vector<std::optional<RankedType>> outs(node.outputs.size());
  if (outs.empty()) return outs;
  const std::string& op = node.op_type;
  const RankedType in0 = Input(inputs, 0);
  if (!node.domain.empty() && node.domain != "ai.onnx") return outs;
  if (SameAsInput().contains(op) || KeepsRank(op)) {
    outs[0] = Known(in0);
  } else if (op == "IsNaN" || op == "IsInf") {
    outs[0] = Known({DType::kBool, in0.rank});
  } else if (Broadcasting().contains(op)) {
    outs[0] = Broadcast(node, inputs);
  } else if (op == "Cast") {
    if (auto to = DTypeFromOnnx(static_cast<int32_t>(node.GetInt("to", 0)))) outs[0] = Known({*to, in0.rank});
  } else if (op == "CastLike") {
    outs[0] = Known({Input(inputs, 1).dtype, in0.rank});
  } else if (op == "Range") {
    outs[0] = Known({in0.dtype, 1});
  } else if (op == "Shape") {
    outs[0] = RankedType{DType::kI64, 1};
  } else if (op == "Size") {
    outs[0] = RankedType{DType::kI64, 0};
  } else if (op == "NonZero") {
    outs[0] = RankedType{DType::kI64, 2};
  } else if (op == "Dropout") {
    outs[0] = Known(in0);
    if (outs.size() > 1) outs[1] = Known({DType::kBool, in0.rank});
  } else if (op == "TopK") {
    outs[0] = Known(in0);
    if (outs.size() > 1) outs[1] = Known({DType::kI64, in0.rank});
  } else if (op.starts_with("Reduce") || op == "ArgMax" || op == "ArgMin") {
    // Axes given at run time: kept dims keep the rank; dropped ones leave it open.
    if (node.GetInt("keepdims", 1) != 0) {
      outs[0] = Known({op.starts_with("Arg") ? DType::kI64 : in0.dtype, in0.rank});
    }
  } else if (op == "Reshape") {
    outs[0] = Known({in0.dtype, static_cast<int>(Input(inputs, 1).first_dim)});
  } else if (op == "Expand") {
    const int64_t shape_len = Input(inputs, 1).first_dim;
    if (shape_len >= 0 && in0.rank >= 0) outs[0] = Known({in0.dtype, std::max(in0.rank, static_cast<int>(shape_len))});
  } else if (op == "ConstantOfShape") {
    const Tensor* value = node.GetTensor("value");
    outs[0] = Known({value != nullptr ? value->dtype() : DType::kF32, static_cast<int>(in0.first_dim)});
  } else if (op == "OneHot") {
    if (in0.rank >= 0) outs[0] = Known({Input(inputs, 2).dtype, in0.rank + 1});
  } else if (op == "Split") {
    for (auto& out : outs) out = Known(in0);
  }
  return outs;
}

}  // namespace chipfit::compile
