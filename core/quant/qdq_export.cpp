// QDQ export of a calibrated model: Q/DQ insertion, per-channel int8 weights, the opset 13 upgrade, writing.
#include "core/quant/qdq_export.h"

#include <unistd.h>
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>

#include "core/graph/onnx_import.h"
#include "core/graph/passes.h"
#include "core/quant/calibration.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace chipfit {
namespace {

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

constexpr int64_t kQdqOpset = 13;  // DequantizeLinear's axis (per-channel weights) is new in 13

bool IsDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

onnx::OperatorSetIdProto* DefaultOpsetImport(onnx::ModelProto& model) {
  for (auto& opset : *model.mutable_opset_import()) {
    if (IsDefaultDomain(opset.domain())) return &opset;
  }
  return nullptr;
}

// chipfit's node names (onnx_import.cpp): the ONNX name, "<op_type>#<index>" when empty, "#<index>" appended
// to a repeated name.
std::vector<std::string> ChipfitNodeNames(const onnx::GraphProto& graph) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    std::string name = node.name().empty() ? node.op_type() + "#" + std::to_string(i) : node.name();
    if (!seen.insert(name).second) {
      name += "#" + std::to_string(i);
      seen.insert(name);
    }
    names.push_back(std::move(name));
  }
  return names;
}

// Visits every node of `graph` and of the bodies nested in its attributes.
void ForEachNode(onnx::GraphProto& graph, const std::function<void(onnx::NodeProto&)>& visit) {
  for (auto& node : *graph.mutable_node()) {
    visit(node);
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) ForEachNode(*attr.mutable_g(), visit);
      for (auto& body : *attr.mutable_graphs()) ForEachNode(body, visit);
    }
  }
}

void CollectNames(const onnx::GraphProto& graph, std::set<std::string>& names) {
  for (const auto& v : graph.input()) names.insert(v.name());
  for (const auto& v : graph.output()) names.insert(v.name());
  for (const auto& v : graph.value_info()) names.insert(v.name());
  for (const auto& t : graph.initializer()) names.insert(t.name());
  for (const auto& node : graph.node()) {
    names.insert(node.name());
    for (const auto& s : node.input()) names.insert(s);
    for (const auto& s : node.output()) names.insert(s);
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) CollectNames(attr.g(), names);
      for (const auto& body : attr.graphs()) CollectNames(body, names);
    }
  }
}

// Fresh value and node names: `base` itself when the model does not use it yet, else base_2, base_3 …
class NameAllocator {
 public:
  explicit NameAllocator(const onnx::GraphProto& graph) { CollectNames(graph, used_); }
  std::string Fresh(const std::string& base) {
    std::string name = base;
    for (int k = 2; used_.contains(name); ++k) name = base + "_" + std::to_string(k);
    used_.insert(name);
    return name;
  }

 private:
  std::set<std::string> used_;
};

onnx::TensorProto RawTensor(const std::string& name, int32_t onnx_type, const std::vector<int64_t>& dims,
                            const void* data, size_t bytes) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx_type);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(std::string(static_cast<const char*>(data), bytes));
  return t;
}

onnx::TensorProto FloatTensor(const std::string& name, const std::vector<int64_t>& dims,
                              const std::vector<float>& values) {
  return RawTensor(name, onnx::TensorProto_DataType_FLOAT, dims, values.data(), values.size() * sizeof(float));
}

onnx::TensorProto Int64Tensor(const std::string& name, const std::vector<int64_t>& values) {
  return RawTensor(name, onnx::TensorProto_DataType_INT64, {static_cast<int64_t>(values.size())}, values.data(),
                   values.size() * sizeof(int64_t));
}

onnx::NodeProto MakeNode(const std::string& op, const std::string& name, std::vector<std::string> inputs,
                         const std::string& output) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  for (auto& in : inputs) n.add_input(std::move(in));
  n.add_output(output);
  return n;
}

const onnx::AttributeProto* FindAttr(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

bool IsExternal(const onnx::TensorProto& t) { return t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL; }

// Where a constant value of the main graph comes from: an initializer or a Constant node's `value`.
struct ConstantSource {
  const onnx::TensorProto* tensor = nullptr;
  int constant_node = -1;  // index of the Constant node, -1 for an initializer
};

std::map<std::string, ConstantSource> FindConstants(const onnx::GraphProto& graph) {
  std::map<std::string, ConstantSource> constants;
  for (const auto& t : graph.initializer()) constants[t.name()] = {&t, -1};
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    if (node.op_type() != "Constant" || !IsDefaultDomain(node.domain()) || node.output_size() != 1) continue;
    if (const auto* value = FindAttr(node, "value"); value != nullptr && value->has_t()) {
      constants[node.output(0)] = {&value->t(), i};
    }
  }
  return constants;
}

// Every value name read anywhere (nested bodies included) or returned by the main graph.
std::set<std::string> ReadNames(onnx::GraphProto& graph) {
  std::set<std::string> reads;
  ForEachNode(graph, [&](onnx::NodeProto& node) {
    for (const auto& in : node.input()) reads.insert(in);
  });
  for (const auto& out : graph.output()) reads.insert(out.name());
  return reads;
}

// The per-channel axis of a node's weights (input 1), or nullopt with the reason it cannot have one.
Result<int> WeightAxis(const onnx::NodeProto& node, const Tensor& w) {
  if (node.op_type() == "Conv") return 0;
  if (w.rank() < 2) return Unsupported("its weights are a vector; chipfit's int8 kernels need a matrix");
  if (node.op_type() == "MatMul") return static_cast<int>(w.rank() - 1);
  const auto* trans_b = FindAttr(node, "transB");
  return trans_b != nullptr && trans_b->i() != 0 ? 0 : 1;  // Gemm: B is [K, N], or [N, K] with transB
}

// What one quantised node's weights add: the int8 initializer and its scales, the DequantizeLinear before it.
struct NodeQdq {
  std::vector<onnx::TensorProto> initializers;
  std::vector<onnx::NodeProto> before;
};

Result<NodeQdq> QuantizeWeights(onnx::NodeProto& node, const std::string& name, const Tensor& weights,
                                NameAllocator& names) {
  NodeQdq out;
  ASSIGN_OR_RETURN(const int axis, WeightAxis(node, weights));
  ASSIGN_OR_RETURN(const std::vector<float> scales, PerChannelScales(weights, axis));
  ASSIGN_OR_RETURN(const Tensor q, QuantizeWeightsPerChannel(weights, axis, scales));
  const std::string w_q = names.Fresh(name + "/w_quantized"), w_scale = names.Fresh(name + "/w_scale"),
                    w_zp = names.Fresh(name + "/w_zero_point"), w_dq = names.Fresh(name + "/w_dequantized");
  const auto channels = static_cast<int64_t>(scales.size());
  out.initializers.push_back(RawTensor(w_q, onnx::TensorProto_DataType_INT8, q.shape(), q.raw_data(), q.nbytes()));
  out.initializers.push_back(FloatTensor(w_scale, {channels}, scales));
  const std::vector<int8_t> zeros(scales.size(), 0);
  out.initializers.push_back(RawTensor(w_zp, onnx::TensorProto_DataType_INT8, {channels}, zeros.data(), zeros.size()));
  onnx::NodeProto dq = MakeNode("DequantizeLinear", names.Fresh(name + "/w_dq"), {w_q, w_scale, w_zp}, w_dq);
  auto* a = dq.add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(axis);
  out.before.push_back(std::move(dq));
  node.set_input(1, w_dq);
  return out;
}

// One QuantizeLinear → DequantizeLinear pair on an activation value. A value gets one pair whoever reads it.
struct ValueQdq {
  std::string base;  // "<node>/x" (a quantised node's input) or "<node>/y" (its output): names the pair
  QuantParams params;
  bool every_reader = false;                 // a layer's output: every main-graph reader goes through the pair
  std::vector<std::pair<int, int>> slots{};  // (node, input) that read the dequantized copy otherwise
};

// The pair's scale and zero point initializers and its two nodes; returns the dequantized value's name.
std::string AddPair(const std::string& value, const ValueQdq& v, NameAllocator& names,
                    std::vector<onnx::TensorProto>& initializers, std::vector<onnx::NodeProto>& nodes) {
  const std::string scale = names.Fresh(v.base + "_scale"), zp = names.Fresh(v.base + "_zero_point");
  initializers.push_back(FloatTensor(scale, {}, {v.params.scale}));
  if (v.params.dtype == DType::kU8) {
    const auto z = static_cast<uint8_t>(v.params.zero_point);
    initializers.push_back(RawTensor(zp, onnx::TensorProto_DataType_UINT8, {}, &z, 1));
  } else {
    const auto z = static_cast<int8_t>(v.params.zero_point);
    initializers.push_back(RawTensor(zp, onnx::TensorProto_DataType_INT8, {}, &z, 1));
  }
  const std::string q = names.Fresh(v.base + "_quantized");
  std::string dq = names.Fresh(v.base + "_dequantized");
  nodes.push_back(MakeNode("QuantizeLinear", names.Fresh(v.base + "_q"), {value, scale, zp}, q));
  nodes.push_back(MakeNode("DequantizeLinear", names.Fresh(v.base + "_dq"), {q, scale, zp}, dq));
  return dq;
}

// Who reads each value of the main graph: main-graph nodes by index, and how many reads in all (nested bodies
// and graph outputs included).
struct Readers {
  std::map<std::string, std::vector<int>> nodes;
  std::map<std::string, int> count;
  std::set<std::string> graph_outputs;
};

Readers FindReaders(onnx::GraphProto& graph) {
  Readers r;
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const auto& in : graph.node(i).input()) {
      if (!in.empty() && (r.nodes[in].empty() || r.nodes[in].back() != i)) r.nodes[in].push_back(i);
    }
  }
  ForEachNode(graph, [&](onnx::NodeProto& node) {
    for (const auto& in : node.input()) ++r.count[in];
  });
  for (const auto& out : graph.output()) {
    ++r.count[out.name()];
    r.graph_outputs.insert(out.name());
  }
  return r;
}

// Relu's or Clip's bounds, -inf/inf where absent; nullopt when Clip's bounds are computed in the graph.
std::optional<std::pair<double, double>> ActivationBounds(const onnx::NodeProto& act, int64_t opset,
                                                          const std::map<std::string, ConstantSource>& constants) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (act.op_type() == "Relu") return std::make_pair(0.0, kInf);
  std::pair<double, double> bounds(-kInf, kInf);
  if (opset < 11) {  // attributes until opset 11
    if (const auto* lo = FindAttr(act, "min")) bounds.first = lo->f();
    if (const auto* hi = FindAttr(act, "max")) bounds.second = hi->f();
    return bounds;
  }
  for (int k = 1; k < act.input_size() && k < 3; ++k) {
    if (act.input(k).empty()) continue;
    const auto it = constants.find(act.input(k));
    if (it == constants.end()) return std::nullopt;
    auto t = TensorFromOnnx(*it->second.tensor, {}, act.input(k));
    if (!t.ok() || t->numel() != 1) return std::nullopt;
    (k == 1 ? bounds.first : bounds.second) = t->GetAsDouble(0);
  }
  return bounds;
}

// Whether quantising with `p` saturates exactly where [lo, hi] clips, so that the clip changes no quantised value
// (the condition chipfit's QDQ fusion checks, with QuantizeLinear's arithmetic, before it drops a Relu/Clip).
bool SaturatesAtBounds(double lo, double hi, const QuantParams& p) {
  const double qmin = p.dtype == DType::kU8 ? 0 : -128, qmax = p.dtype == DType::kU8 ? 255 : 127;
  auto quantized = [&](double v) {
    return std::isinf(v) ? v : std::nearbyint(static_cast<float>(v) / p.scale) + static_cast<double>(p.zero_point);
  };
  return quantized(lo) <= qmin && quantized(hi) >= qmax;
}

// The value after a quantised layer that gets its output Q/DQ, so that DequantizeLinear → layer [→ Relu/Clip] →
// QuantizeLinear is there to fuse: the output of a Relu/Clip that is the layer's only reader when the quantisation
// makes it exact, else the layer's own output. Unsupported with the reason when neither can take a pair.
Result<std::string> OutputPoint(const onnx::GraphProto& graph, int index, const Readers& readers,
                                const QuantTable& table, const std::map<std::string, ValueQdq>& pairs,
                                const std::map<std::string, ConstantSource>& constants, int64_t opset) {
  const onnx::NodeProto& layer = graph.node(index);
  if (layer.output_size() != 1 || layer.output(0).empty()) return Unsupported("it has more than one output");
  const std::string& y = layer.output(0);
  if (readers.graph_outputs.contains(y)) return Unsupported("its output '" + y + "' is a graph output");
  const auto y_readers = readers.nodes.find(y);
  const auto y_count = readers.count.find(y);
  if (y_readers != readers.nodes.end() && y_readers->second.size() == 1 && y_count->second == 1) {
    const onnx::NodeProto& act = graph.node(y_readers->second[0]);
    const bool relu_or_clip = IsDefaultDomain(act.domain()) && (act.op_type() == "Relu" || act.op_type() == "Clip");
    if (relu_or_clip && act.input(0) == y && act.output_size() == 1 && !readers.graph_outputs.contains(act.output(0))) {
      const std::string& a = act.output(0);
      const auto range = table.find(a);
      const auto bounds = ActivationBounds(act, opset, constants);
      if (range != table.end() && bounds) {
        const auto pair = pairs.find(a);
        const QuantParams p = pair != pairs.end() ? pair->second.params : ActivationParamsFor("Conv", range->second);
        if (SaturatesAtBounds(bounds->first, bounds->second, p)) return a;
      }
    }
  }
  if (!table.contains(y)) return Unsupported("its output '" + y + "' has no calibrated range");
  return y;
}

bool IsWeightedLayer(const onnx::NodeProto& node) {
  return IsDefaultDomain(node.domain()) &&
         (node.op_type() == "Conv" || node.op_type() == "MatMul" || node.op_type() == "Gemm");
}

// Whether ONNX Runtime's WeightBiasQuantization would quantise the float weights of node `index` once `value`, its
// input, comes from a DequantizeLinear: a Conv/ConvTranspose/Gemm with float constant weights whose output goes,
// through Relu/Clip nodes without branching, to the QuantizeLinear of a pair that is its only reader.
bool OrtQuantizesFloatLayer(const onnx::GraphProto& graph, int index, const std::string& value, const Readers& readers,
                            const std::map<std::string, ValueQdq>& pairs,
                            const std::map<std::string, ConstantSource>& constants) {
  const onnx::NodeProto& layer = graph.node(index);
  const std::string& op = layer.op_type();
  if (!IsDefaultDomain(layer.domain()) || (op != "Conv" && op != "ConvTranspose" && op != "Gemm")) return false;
  if (layer.input_size() < 2 || layer.input(0) != value || layer.output_size() != 1) return false;
  const auto weight = constants.find(layer.input(1));
  if (weight == constants.end() || weight->second.tensor->data_type() != onnx::TensorProto_DataType_FLOAT) return false;
  std::string current = layer.output(0);
  for (int hop = 0; hop < 8; ++hop) {
    const auto count = readers.count.find(current);
    const int reads = count == readers.count.end() ? 0 : count->second;
    if (const auto pair = pairs.find(current); pair != pairs.end()) {
      return pair->second.every_reader || reads == static_cast<int>(pair->second.slots.size());
    }
    const auto next = readers.nodes.find(current);
    if (reads != 1 || next == readers.nodes.end() || next->second.size() != 1) return false;
    const onnx::NodeProto& act = graph.node(next->second[0]);
    if (!IsDefaultDomain(act.domain()) || (act.op_type() != "Relu" && act.op_type() != "Clip") ||
        act.input(0) != current || act.output_size() != 1) {
      return false;
    }
    current = act.output(0);
  }
  return false;
}

// Folds BatchNormalization into the Conv/Gemm before it, in the main graph, with chipfit's own pass on an imported
// copy (FoldBatchNorm after PromoteConstantNodes, as the cpu:int8 compile's Fuse runs them: the same pairs, the same
// arithmetic, the same value names for the calibrated ranges). Each folded layer takes the pass's weights and bias
// as new initializers and writes the BatchNormalization's output; the BatchNormalization node goes (from
// `chipfit_names` too). Inputs the pair read go to `candidates`, to drop once nothing reads them.
Result<int> FoldBatchNormalization(onnx::ModelProto& model, std::vector<std::string>& chipfit_names,
                                   NameAllocator& names, std::set<std::string>& candidates) {
  onnx::GraphProto& graph = *model.mutable_graph();
  const onnx::OperatorSetIdProto* opset = DefaultOpsetImport(model);
  ASSIGN_OR_RETURN(Graph copy, ImportGraph(graph, opset == nullptr ? 0 : opset->version(), {}));
  PromoteConstantNodes(copy);
  ASSIGN_OR_RETURN(const int folded, FoldBatchNorm(copy));
  if (folded == 0) return 0;
  std::map<std::string, int> index;
  for (size_t i = 0; i < chipfit_names.size(); ++i) index[chipfit_names[i]] = static_cast<int>(i);
  std::set<int> erased;
  for (const Node& node : copy.nodes) {
    // FoldBatchNorm's layers cover themselves, then the BatchNormalization folded into them.
    if (node.covers.size() != 2 || (node.op_type != "Conv" && node.op_type != "Gemm")) continue;
    const auto layer_at = index.find(node.covers[0]), bn_at = index.find(node.covers[1]);
    if (layer_at == index.end() || bn_at == index.end() || node.inputs.size() != 3) {
      return Internal("folded BatchNormalization '" + node.covers[1] + "' does not map back to the model");
    }
    onnx::NodeProto& layer = *graph.mutable_node(layer_at->second);
    const onnx::NodeProto& bn = graph.node(bn_at->second);
    for (int k = 1; k < layer.input_size(); ++k) candidates.insert(layer.input(k));
    for (int k = 1; k < bn.input_size(); ++k) candidates.insert(bn.input(k));
    std::vector<std::string> inputs;
    for (int k = 1; k <= 2; ++k) {
      const Tensor& t = copy.initializers.at(node.inputs[static_cast<size_t>(k)]);
      inputs.push_back(names.Fresh(node.name + (k == 1 ? "/bn_folded_weight" : "/bn_folded_bias")));
      *graph.add_initializer() =
          RawTensor(inputs.back(), onnx::TensorProto_DataType_FLOAT, t.shape(), t.raw_data(), t.nbytes());
    }
    while (layer.input_size() < 3) layer.add_input("");
    layer.set_input(1, inputs[0]);
    layer.set_input(2, inputs[1]);
    auto* info = graph.mutable_value_info();  // the layer's own output value is gone
    for (int i = info->size() - 1; i >= 0; --i) {
      if (info->Get(i).name() == layer.output(0)) info->DeleteSubrange(i, 1);
    }
    layer.set_output(0, bn.output(0));
    auto* attrs = layer.mutable_attribute();  // Gemm: FoldBatchNorm folded C's beta into the bias
    for (int i = attrs->size() - 1; i >= 0; --i) {
      if (layer.op_type() == "Gemm" && attrs->Get(i).name() == "beta") attrs->DeleteSubrange(i, 1);
    }
    erased.insert(bn_at->second);
  }
  for (auto it = erased.rbegin(); it != erased.rend(); ++it) {
    graph.mutable_node()->DeleteSubrange(*it, 1);
    chipfit_names.erase(chipfit_names.begin() + *it);
  }
  return static_cast<int>(erased.size());
}

// Drops the initializers and Constant nodes in `candidates` that nothing reads any more (a float
// initializer also listed as a graph input goes from the inputs too: IR < 4 lists every initializer there).
int DropUnread(onnx::GraphProto& graph, const std::set<std::string>& candidates) {
  const std::set<std::string> reads = ReadNames(graph);
  auto dead = [&](const std::string& name) { return candidates.contains(name) && !reads.contains(name); };
  int dropped = 0;
  auto* inits = graph.mutable_initializer();
  for (int i = inits->size() - 1; i >= 0; --i) {
    if (!dead(inits->Get(i).name())) continue;
    inits->DeleteSubrange(i, 1);
    ++dropped;
  }
  auto* inputs = graph.mutable_input();
  for (int i = inputs->size() - 1; i >= 0; --i) {
    if (dead(inputs->Get(i).name())) inputs->DeleteSubrange(i, 1);
  }
  auto* nodes = graph.mutable_node();
  for (int i = nodes->size() - 1; i >= 0; --i) {
    const auto& n = nodes->Get(i);
    if (n.op_type() != "Constant" || n.output_size() != 1 || !dead(n.output(0))) continue;
    nodes->DeleteSubrange(i, 1);
    ++dropped;
  }
  return dropped;
}

// --- opset upgrade ---------------------------------------------------------------------------------------

// Attributes that became inputs at opset `at`, as (attribute, input index). Moving them is exact.
struct AttrMove {
  const char* op;
  int64_t at;
  std::vector<std::pair<const char*, int>> attrs;
  bool scalar_of_input_type;  // a scalar of input 0's type (Clip, Pad value, Dropout ratio) instead of int64s
};

const std::vector<AttrMove>& AttrMoves() {
  static const std::vector<AttrMove> moves = {
      {"Slice", 10, {{"starts", 1}, {"ends", 2}, {"axes", 3}}, false},
      {"TopK", 10, {{"k", 1}}, false},
      {"Clip", 11, {{"min", 1}, {"max", 2}}, true},
      {"Pad", 11, {{"pads", 1}, {"value", 2}}, false},
      {"Dropout", 12, {{"ratio", 1}}, true},
      {"Split", 13, {{"split", 1}}, false},
      {"Squeeze", 13, {{"axes", 1}}, false},
      {"Unsqueeze", 13, {{"axes", 1}}, false},
      {"ReduceSum", 13, {{"axes", 1}}, false},
  };
  return moves;
}

// Ops whose every schema change from opset 7 to 13 only widened it (more types, negative axes, optional
// inputs or attributes whose default keeps the old behaviour, wider broadcasting).
const std::set<std::string>& WidenedOnly() {
  static const std::set<std::string> ops = {
      "Abs",
      "Acos",
      "Acosh",
      "Add",
      "And",
      "ArgMax",
      "ArgMin",
      "Asin",
      "Asinh",
      "Atan",
      "Atanh",
      "AveragePool",
      "BitShift",
      "Cast",
      "Ceil",
      "Celu",
      "Compress",
      "Concat",
      "Constant",
      "ConstantOfShape",
      "Conv",
      "ConvInteger",
      "ConvTranspose",
      "Cos",
      "Cosh",
      "CumSum",
      "DepthToSpace",
      "DequantizeLinear",
      "Det",
      "Div",
      "DynamicQuantizeLinear",
      "Einsum",
      "Elu",
      "Equal",
      "Erf",
      "Exp",
      "Expand",
      "EyeLike",
      "Flatten",
      "Floor",
      "GRU",
      "Gather",
      "GatherElements",
      "GatherND",
      "Gemm",
      "GlobalAveragePool",
      "GlobalLpPool",
      "GlobalMaxPool",
      "Greater",
      "GreaterOrEqual",
      "HardSigmoid",
      "Identity",
      "If",
      "InstanceNormalization",
      "IsInf",
      "IsNaN",
      "LRN",
      "LSTM",
      "LeakyRelu",
      "Less",
      "LessOrEqual",
      "Log",
      "Loop",
      "LpNormalization",
      "LpPool",
      "MatMul",
      "MatMulInteger",
      "Max",
      "MaxPool",
      "MaxRoiPool",
      "MaxUnpool",
      "Mean",
      "MeanVarianceNormalization",
      "Min",
      "Mod",
      "Mul",
      "Neg",
      "NonMaxSuppression",
      "NonZero",
      "Not",
      "OneHot",
      "Or",
      "PRelu",
      "Pow",
      "QLinearConv",
      "QLinearMatMul",
      "QuantizeLinear",
      "RNN",
      "Range",
      "Reciprocal",
      "ReduceL1",
      "ReduceL2",
      "ReduceLogSum",
      "ReduceLogSumExp",
      "ReduceMax",
      "ReduceMean",
      "ReduceMin",
      "ReduceProd",
      "ReduceSumSquare",
      "Relu",
      "Reshape",
      "RoiAlign",
      "Round",
      "ScatterElements",
      "ScatterND",
      "Selu",
      "Shape",
      "Shrink",
      "Sigmoid",
      "Sign",
      "Sin",
      "Sinh",
      "Size",
      "Softplus",
      "Softsign",
      "SpaceToDepth",
      "Sqrt",
      "Sub",
      "Sum",
      "Tan",
      "Tanh",
      "ThresholdedRelu",
      "Tile",
      "Transpose",
      "Unique",
      "Where",
      "Xor",
  };
  return ops;
}

// Types and ranks of values as libonnx infers them (for Softmax's axis and Clip's scalar type).
std::map<std::string, onnx::TypeProto> InferTypes(const onnx::ModelProto& model, const onnx::ModelProto* shaped) {
  onnx::ModelProto copy = shaped != nullptr ? *shaped : model;
  try {
    // Data propagation: a Reshape's rank often comes from a Shape → Slice → Concat chain.
    const onnx::ShapeInferenceOptions options(/*check_type_val=*/false, /*strict_mode_val=*/0, /*data_prop_val=*/true);
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception&) {
    // Types stay unknown where inference stops; the callers refuse rather than guess.
  }
  std::map<std::string, onnx::TypeProto> types;
  const auto& g = copy.graph();
  for (const auto* list : {&g.input(), &g.output(), &g.value_info()}) {
    for (const auto& v : *list) types[v.name()] = v.type();
  }
  for (const auto& t : g.initializer()) {
    onnx::TypeProto type;
    type.mutable_tensor_type()->set_elem_type(t.data_type());
    for (int64_t d : t.dims()) type.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    types[t.name()] = type;
  }
  return types;
}

std::string DescribeProtoNode(const onnx::NodeProto& node) {
  return "node '" + (node.name().empty() ? "(unnamed)" : node.name()) + "' (" + node.op_type() + ")";
}

// Moves the attributes of `move` into constant inputs (initializers of the main graph, visible in every body).
void MoveAttributes(onnx::NodeProto& node, const AttrMove& move, int32_t scalar_type, NameAllocator& names,
                    onnx::GraphProto& main) {
  std::vector<std::string> inputs(node.input().begin(), node.input().end());
  const std::string base = node.name().empty() ? node.op_type() : node.name();
  for (const auto& [attr_name, index] : move.attrs) {
    const auto* attr = FindAttr(node, attr_name);
    if (attr == nullptr) continue;
    const std::string value = names.Fresh(base + "/" + attr_name);
    if (attr->type() == onnx::AttributeProto::INTS) {
      *main.add_initializer() = Int64Tensor(value, {attr->ints().begin(), attr->ints().end()});
    } else if (attr->type() == onnx::AttributeProto::INT) {
      *main.add_initializer() = Int64Tensor(value, {attr->i()});  // TopK's k: a 1-D tensor of one value
    } else if (scalar_type == onnx::TensorProto_DataType_DOUBLE) {
      const double v = attr->f();
      *main.add_initializer() = RawTensor(value, scalar_type, {}, &v, sizeof v);
    } else {
      *main.add_initializer() = FloatTensor(value, {}, {attr->f()});  // Pad's value, Clip (float inputs)
    }
    if (static_cast<int>(inputs.size()) <= index) inputs.resize(static_cast<size_t>(index) + 1);
    inputs[static_cast<size_t>(index)] = value;
  }
  node.clear_input();
  for (const auto& in : inputs) node.add_input(in);
  auto* attrs = node.mutable_attribute();
  for (int i = attrs->size() - 1; i >= 0; --i) {
    for (const auto& [attr_name, index] : move.attrs) {
      if (attrs->Get(i).name() == attr_name) {
        attrs->DeleteSubrange(i, 1);
        break;
      }
    }
  }
}

// Why `node` would mean something else at `target` than at `from`; empty when it means the same (after
// the attribute moves, which the caller makes).
std::string UpgradeRefusal(const onnx::NodeProto& node, int64_t from, int64_t target,
                           const std::map<std::string, onnx::TypeProto>& types) {
  const std::string& op = node.op_type();
  const auto* old_schema = onnx::OpSchemaRegistry::Schema(op, static_cast<int>(from), onnx::ONNX_DOMAIN);
  const auto* new_schema = onnx::OpSchemaRegistry::Schema(op, static_cast<int>(target), onnx::ONNX_DOMAIN);
  if (old_schema == nullptr) return "";  // the checker already refused an unknown op
  if (new_schema == nullptr || new_schema->Deprecated()) return "it no longer exists at opset 13";
  if (new_schema->SinceVersion() == old_schema->SinceVersion()) return "";
  if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") {
    if (from >= 13) return "";
    // Before 13 these flatten to 2-D at `axis` (default 1); from 13 they work along `axis` (default -1).
    // The same only when the axis is the last one.
    const auto* axis_attr = FindAttr(node, "axis");
    const int64_t axis = axis_attr != nullptr ? axis_attr->i() : 1;
    const auto it = node.input_size() > 0 ? types.find(node.input(0)) : types.end();
    if (it == types.end() || !it->second.tensor_type().has_shape()) {
      return "its input's rank is unknown, and opset 13 changed what its axis means";
    }
    const int64_t rank = it->second.tensor_type().shape().dim_size();
    if ((axis < 0 ? axis + rank : axis) == rank - 1) return "";
    return "it works on axis " + std::to_string(axis) + " of a rank-" + std::to_string(rank) +
           " input, which opset 13 no longer flattens";
  }
  if (op == "BatchNormalization") {
    const auto* spatial = FindAttr(node, "spatial");
    return spatial != nullptr && spatial->i() == 0 ? "spatial=0 (per-element statistics) is gone since opset 9" : "";
  }
  if (op == "Resize") {
    if (from < 11) return "its inputs changed at opset 11 (roi before scales)";
    const auto* mode = FindAttr(node, "coordinate_transformation_mode");
    return mode != nullptr && mode->s() == "tf_half_pixel_for_nn" ? "tf_half_pixel_for_nn is gone at opset 13" : "";
  }
  if (op == "Dropout" && from < 10 && node.output_size() > 1 && !node.output(1).empty()) {
    return "its mask output became bool at opset 10";
  }
  for (const AttrMove& move : AttrMoves()) {
    if (op == move.op) return "";  // moved by the caller; the other changes only widened it
  }
  if (WidenedOnly().contains(op)) return "";
  return "its schema changed between opset " + std::to_string(from) + " (" + op + "-" +
         std::to_string(old_schema->SinceVersion()) + ") and " + std::to_string(target) + " (" + op + "-" +
         std::to_string(new_schema->SinceVersion()) + ") in a way chipfit does not know to be safe";
}

// The elem type of a node's first input, FLOAT when unknown (the only type Clip, Pad and Dropout share before
// opset 11 with every later version).
int32_t InputElemType(const onnx::NodeProto& node, const std::map<std::string, onnx::TypeProto>& types) {
  const auto it = node.input_size() > 0 ? types.find(node.input(0)) : types.end();
  if (it == types.end() || it->second.tensor_type().elem_type() == 0) return onnx::TensorProto_DataType_FLOAT;
  return it->second.tensor_type().elem_type();
}

}  // namespace

QuantParams ActivationParamsFor(const std::string& op_type, const QuantParams& calibrated) {
  QuantParams q;
  q.min = calibrated.min;
  q.max = calibrated.max;
  if (calibrated.min >= 0.0f) {
    q.dtype = DType::kU8;
    q.scale = calibrated.max > 0.0f ? calibrated.max / 255.0f : 1.0f;
    return q;
  }
  if (op_type == "Conv") {
    const float lo = std::min(calibrated.min, 0.0f), hi = std::max(calibrated.max, 0.0f);
    q.dtype = DType::kU8;
    q.scale = hi > lo ? (hi - lo) / 255.0f : 1.0f;
    q.zero_point = static_cast<int32_t>(std::clamp(std::nearbyint(-lo / q.scale), 0.0f, 255.0f));
    return q;
  }
  const float bound = std::max(std::fabs(calibrated.min), std::fabs(calibrated.max));
  q.dtype = DType::kI8;
  q.scale = bound > 0.0f ? bound / 127.0f : 1.0f;
  return q;
}

Status UpgradeOpset(onnx::ModelProto& model, int64_t target, std::vector<std::string>& notes,
                    const onnx::ModelProto* shaped, const std::map<std::string, int64_t>& ranks) {
  onnx::OperatorSetIdProto* opset = DefaultOpsetImport(model);
  const int64_t from = opset == nullptr ? 0 : opset->version();
  if (from >= target) return Status::Ok();
  if (opset == nullptr) {
    // No ai.onnx node (the loader refuses that otherwise): the import is new.
    opset = model.add_opset_import();
    opset->set_version(target);
    return Status::Ok();
  }
  if (from < 7) {
    return Unsupported("opset " + std::to_string(from) +
                       " predates ONNX's numpy-style broadcasting (opset 7); chipfit does not upgrade it to " +
                       std::to_string(target) + " (convert the model to opset 13 first)");
  }
  std::map<std::string, onnx::TypeProto> types = InferTypes(model, shaped);
  for (const auto& [name, rank] : ranks) {
    auto& type = types[name];
    if (type.tensor_type().has_shape()) continue;
    for (int64_t d = 0; d < rank; ++d) type.mutable_tensor_type()->mutable_shape()->add_dim();
  }
  Status refused;
  ForEachNode(*model.mutable_graph(), [&](onnx::NodeProto& node) {
    if (!refused.ok() || !IsDefaultDomain(node.domain())) return;
    const std::string why = UpgradeRefusal(node, from, target, types);
    if (!why.empty()) {
      refused = Unsupported("cannot raise the opset from " + std::to_string(from) + " to " + std::to_string(target) +
                            " (needed for per-channel DequantizeLinear): " + DescribeProtoNode(node) + ": " + why);
    }
  });
  RETURN_IF_ERROR(refused);
  NameAllocator names(model.graph());
  std::map<std::string, int> moved;
  ForEachNode(*model.mutable_graph(), [&](onnx::NodeProto& node) {
    if (!IsDefaultDomain(node.domain())) return;
    for (const AttrMove& move : AttrMoves()) {
      if (node.op_type() != move.op || from >= move.at) continue;
      const bool has_any = std::any_of(move.attrs.begin(), move.attrs.end(),
                                       [&](const auto& a) { return FindAttr(node, a.first) != nullptr; });
      if (!has_any) continue;
      MoveAttributes(node, move, move.scalar_of_input_type ? InputElemType(node, types) : 0, names,
                     *model.mutable_graph());
      ++moved[node.op_type()];
    }
    if (node.op_type() == "BatchNormalization") {  // spatial=1 is what every later version does
      auto* attrs = node.mutable_attribute();
      for (int i = attrs->size() - 1; i >= 0; --i) {
        if (attrs->Get(i).name() == "spatial") attrs->DeleteSubrange(i, 1);
      }
    }
  });
  opset->set_version(target);
  // Opset 13 needs IR version 7.
  if (model.ir_version() < 7) model.set_ir_version(7);
  std::string what;
  for (const auto& [op, count] : moved) what += (what.empty() ? "" : ", ") + std::to_string(count) + " " + op;
  notes.push_back("opset raised from " + std::to_string(from) + " to " + std::to_string(target) +
                  (what.empty() ? "" : "; attributes that became inputs moved to constant inputs in " + what));
  return Status::Ok();
}

namespace {

// Every node --int8-nodes and --keep-fp32 name must be in the graph.
Status CheckNamedNodes(const std::vector<std::string>& names_in_graph, const QdqOptions& options) {
  for (const std::string& wanted : options.int8_nodes) {
    if (std::find(names_in_graph.begin(), names_in_graph.end(), wanted) == names_in_graph.end()) {
      return InvalidArgument("'" + options.origin + "' has no node named '" + wanted + "' to quantise");
    }
  }
  for (const std::string& kept : options.keep_fp32) {
    if (std::find(names_in_graph.begin(), names_in_graph.end(), kept) == names_in_graph.end()) {
      return InvalidArgument("--keep-fp32: '" + options.origin + "' has no node named '" + kept + "'");
    }
  }
  return Status();
}

// The pairs go right after the node that writes their value (first for graph inputs), the weights' DequantizeLinear
// right before their node: the order stays topological. Readers of a pair read its DequantizeLinear.
void InsertPairs(onnx::GraphProto& graph, const std::map<std::string, ValueQdq>& pairs, Readers& readers,
                 std::vector<NodeQdq>& added, NameAllocator& names) {
  std::map<std::string, int> producer;
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const auto& o : graph.node(i).output()) producer[o] = i;
  }
  std::map<int, std::vector<onnx::NodeProto>> after;  // -1: before every node
  for (const auto& [value, pair] : pairs) {
    const auto at = producer.find(value);
    std::vector<onnx::TensorProto> initializers;
    auto& nodes = after[at == producer.end() ? -1 : at->second];
    const std::string dq = AddPair(value, pair, names, initializers, nodes);
    for (auto& t : initializers) *graph.add_initializer() = std::move(t);
    if (pair.every_reader) {
      for (int reader : readers.nodes[value]) {
        auto& node = *graph.mutable_node(reader);
        for (int k = 0; k < node.input_size(); ++k) {
          if (node.input(k) == value) node.set_input(k, dq);
        }
      }
    } else {
      for (const auto& [reader, slot] : pair.slots) graph.mutable_node(reader)->set_input(slot, dq);
    }
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (auto& n : after[-1]) *nodes.Add() = std::move(n);
  for (int i = 0; i < graph.node_size(); ++i) {
    for (auto& n : added[static_cast<size_t>(i)].before) *nodes.Add() = std::move(n);
    for (auto& t : added[static_cast<size_t>(i)].initializers) *graph.add_initializer() = std::move(t);
    *nodes.Add() = std::move(*graph.mutable_node(i));
    for (auto& n : after[i]) *nodes.Add() = std::move(n);
  }
  graph.mutable_node()->Swap(&nodes);
}

}  // namespace

Result<QdqExport> ExportQdq(const onnx::ModelProto& model, const QuantTable& table, const QdqOptions& options) {
  QdqExport out;
  out.model = model;
  onnx::GraphProto& graph = *out.model.mutable_graph();
  for (const auto& t : graph.initializer()) {
    if (IsExternal(t)) {
      return Unsupported("'" + options.origin + "' keeps initializer '" + t.name() +
                         "' in an external data file; chipfit quantize writes single-file models only");
    }
  }
  std::vector<std::string> names_in_graph = ChipfitNodeNames(graph);
  RETURN_IF_ERROR(CheckNamedNodes(names_in_graph, options));

  NameAllocator names(graph);
  std::set<std::string> replaced;  // float constants that may have lost their last reader
  ASSIGN_OR_RETURN(out.batchnorms_folded, FoldBatchNormalization(out.model, names_in_graph, names, replaced));
  const onnx::OperatorSetIdProto* opset = DefaultOpsetImport(out.model);
  const int64_t opset_version = opset == nullptr ? 0 : opset->version();
  const std::map<std::string, ConstantSource> constants = FindConstants(graph);
  std::vector<NodeQdq> added(static_cast<size_t>(graph.node_size()));
  std::map<std::string, ValueQdq> pairs;  // by the value they quantise
  std::vector<int> quantized;
  // Quantises layer `i` (weights per output channel, its input's pair): false when it stays float, with the reason
  // in kept_fp32 where the user asked for it or would want to know.
  auto quantize_layer = [&](int i, bool listed) -> Result<bool> {
    onnx::NodeProto& node = *graph.mutable_node(i);
    const std::string& name = names_in_graph[static_cast<size_t>(i)];
    if (options.keep_fp32.contains(name)) {
      out.kept_fp32.push_back(name + ": kept in fp32 by request (--keep-fp32)");
      return false;
    }
    if (node.input_size() < 2) return false;
    const auto range = table.find(node.input(0));
    if (range == table.end()) {
      if (!listed) return false;
      return InvalidArgument(DescribeProtoNode(node) + ": its input '" + node.input(0) + "' has no calibrated range");
    }
    const auto weight = constants.find(node.input(1));
    if (weight == constants.end()) {
      out.kept_fp32.push_back(name + ": its weights '" + node.input(1) + "' are computed in the graph");
      return false;
    }
    if (IsExternal(*weight->second.tensor)) {
      return Unsupported("'" + options.origin + "' keeps weights '" + node.input(1) +
                         "' in an external data file; chipfit quantize writes single-file models only");
    }
    ASSIGN_OR_RETURN(const Tensor w, TensorFromOnnx(*weight->second.tensor, {}, "weights '" + node.input(1) + "'"));
    if (w.dtype() != DType::kF32) {
      out.kept_fp32.push_back(name + ": its weights are " + DescribeTensor(w) + ", not f32");
      return false;
    }
    const std::string weight_name = node.input(1);
    auto qdq = QuantizeWeights(node, name, w, names);
    if (!qdq.ok()) {
      if (qdq.status().code() != StatusCode::kUnsupported) {
        return Status(qdq.status().code(), DescribeProtoNode(node) + ": " + qdq.status().message());
      }
      out.kept_fp32.push_back(name + ": " + qdq.status().message());
      return false;
    }
    added[static_cast<size_t>(i)] = std::move(qdq).value();
    replaced.insert(weight_name);
    // The input's pair has the parameters chipfit's int8 kernel of this op uses (the first quantised reader's,
    // when layers of different ops read one value).
    auto [pair, fresh] = pairs.try_emplace(node.input(0));
    if (fresh) pair->second = {.base = name + "/x", .params = ActivationParamsFor(node.op_type(), range->second)};
    pair->second.slots.emplace_back(i, 0);
    out.quantized.push_back(name);
    quantized.push_back(i);
    return true;
  };
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    const std::string& name = names_in_graph[static_cast<size_t>(i)];
    const bool listed = options.int8_nodes.contains(name);
    if (!IsWeightedLayer(node) || (!options.int8_nodes.empty() && !listed)) continue;
    RETURN_IF_ERROR(quantize_layer(i, listed).status());
  }

  // Each quantised layer's output gets a pair too (ONNX Runtime's QDQ form), read by every reader, so that
  // DequantizeLinear → layer [→ Relu/Clip] → QuantizeLinear is a pattern an int8 runtime fuses. Where the output
  // feeds the next quantised layer, that layer's input pair is the one.
  Readers readers = FindReaders(graph);
  std::vector<std::string> unread;  // kShared: layers whose output no quantised layer reads
  auto add_output_pair = [&](int i) {
    const std::string& name = names_in_graph[static_cast<size_t>(i)];
    auto point = OutputPoint(graph, i, readers, table, pairs, constants, opset_version);
    if (!point.ok()) {
      out.float_outputs.push_back(name + ": " + point.status().message());
      return;
    }
    if (options.outputs == QdqOptions::Outputs::kShared && !pairs.contains(*point)) {
      unread.push_back(name);
      return;
    }
    auto [pair, fresh] = pairs.try_emplace(*point);
    if (fresh) pair->second = {.base = name + "/y", .params = ActivationParamsFor("Conv", table.at(*point))};
    pair->second.every_reader = true;
    ++out.quantized_outputs;
  };
  for (int i : quantized) add_output_pair(i);

  // A float layer that reads a pair every reader goes through and feeds (through Relu/Clip) the next quantised
  // layer's pair is what ONNX Runtime's WeightBiasQuantization (optimisation level basic and up) takes for a QDQ
  // layer missing its weights' Q/DQ: it quantises them to int8 per tensor, which neither the model as written nor
  // chipfit's int8 computes (a depthwise Conv's channels differ widely in range: per tensor, the small ones lose
  // most of their bits). kEvery quantises such a layer per output channel, as a QDQ layer of its own; kShared
  // (chipfit's int8 keeps it in float) lets it read the float value, so only the quantised readers take the pair.
  std::vector<std::string> shielded;
  std::vector<int> also_quantized;
  const std::set<int> quantized_set(quantized.begin(), quantized.end());
  for (auto& [value, pair] : pairs) {
    if (!pair.every_reader) continue;
    for (int reader : readers.nodes[value]) {
      if (quantized_set.contains(reader) || !OrtQuantizesFloatLayer(graph, reader, value, readers, pairs, constants)) {
        continue;
      }
      const std::string& name = names_in_graph[static_cast<size_t>(reader)];
      if (options.outputs == QdqOptions::Outputs::kEvery && graph.node(reader).op_type() != "ConvTranspose") {
        ASSIGN_OR_RETURN(const bool done, quantize_layer(reader, false));
        if (done) {
          also_quantized.push_back(reader);
          continue;
        }
      }
      if (pair.every_reader) --out.quantized_outputs;
      pair.every_reader = false;
      shielded.push_back(name);
    }
  }
  for (int i : also_quantized) add_output_pair(i);
  if (!also_quantized.empty() || !shielded.empty()) {
    std::vector<std::string> also;
    for (int i : also_quantized) also.push_back(names_in_graph[static_cast<size_t>(i)]);
    out.notes.push_back(
        "float layers between two pairs, whose weights ONNX Runtime would quantise per tensor itself: " +
        (also.empty() ? "" : "quantised per output channel: " + JoinNames(also)) +
        (also.empty() || shielded.empty() ? "" : "; ") +
        (shielded.empty() ? ""
                          : "read the float value (only the quantised layers read the pair): " + JoinNames(shielded)));
  }

  InsertPairs(graph, pairs, readers, added, names);
  if (out.batchnorms_folded > 0) {
    out.notes.push_back(std::to_string(out.batchnorms_folded) +
                        " BatchNormalization nodes folded into the Conv before them (weights and bias per output "
                        "channel, as chipfit's cpu:int8 compile folds them)");
  }
  if (!quantized.empty()) {
    std::string left;
    for (const std::string& f : out.float_outputs) left += (left.empty() ? "" : "; ") + f;
    out.notes.push_back(std::to_string(out.quantized_outputs) + " of " + std::to_string(quantized.size()) +
                        " quantised layers quantise their output too (after a Relu/Clip where that is exact)" +
                        (left.empty() ? "" : "; float output: " + left) +
                        (unread.empty() ? ""
                                        : "; float output where no quantised layer reads it, as chipfit's int8 "
                                          "computes (--output-qdq every quantises these too): " +
                                              JoinNames(unread)));
  }
  if (const int dropped = DropUnread(graph, replaced); dropped > 0) {
    out.notes.push_back(std::to_string(dropped) +
                        " float constants nothing reads any more (weights now int8, folded BatchNormalization "
                        "parameters) were dropped");
  }

  out.from_opset = DefaultOpsetImport(out.model) == nullptr ? 0 : DefaultOpsetImport(out.model)->version();
  out.to_opset = std::max(out.from_opset, kQdqOpset);
  if (!out.quantized.empty()) {
    // Types come from the model before the Q/DQ nodes: libonnx's inference stops at a QuantizeLinear that the
    // old opset does not have.
    RETURN_IF_ERROR(
        UpgradeOpset(out.model, kQdqOpset, out.notes, options.shaped ? options.shaped : &model, options.ranks));
  }
  if (out.quantized.empty()) out.to_opset = out.from_opset;
  return out;
}

Status WriteOnnxModel(const onnx::ModelProto& model, const std::filesystem::path& path) {
  const size_t bytes = model.ByteSizeLong();
  if (bytes >= static_cast<size_t>(INT_MAX)) {
    return Unsupported("'" + path.string() + "': the model would take " + std::to_string(bytes >> 20) +
                       " MiB, over protobuf's 2 GiB limit for one file (chipfit writes no external data)");
  }
  const std::filesystem::path tmp = path.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    if (!file) return IoError("cannot write '" + tmp.string() + "': " + std::strerror(errno));
    if (!model.SerializeToOstream(&file) || !file.flush()) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      return IoError("cannot write '" + path.string() + "': " + std::strerror(errno));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return IoError("cannot write '" + path.string() + "': " + ec.message());
  }
  return Status::Ok();
}

}  // namespace chipfit
