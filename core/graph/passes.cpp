// Dead-node elimination, Constant promotion and BatchNormalization folding.
#include "core/graph/passes.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <type_traits>
#include <utility>
#include <vector>

namespace chipfit {
namespace {

// Nested subgraphs read outer values by name; their reads count like the outer graph's own.
void CountReads(const Graph& graph, std::map<std::string, int>& readers) {
  for (const Node& node : graph.nodes) {
    for (const std::string& in : node.inputs) {
      if (!in.empty()) ++readers[in];
    }
    for (const auto& [name, attr] : node.attributes) {
      if (attr.graph != nullptr) CountReads(*attr.graph, readers);
    }
  }
}

// Float32 initializer of exactly `count` elements, or nullptr.
const Tensor* F32Constant(const Graph& graph, const std::string& name, int64_t count) {
  auto it = graph.initializers.find(name);
  if (it == graph.initializers.end() || it->second.dtype() != DType::kF32) return nullptr;
  return it->second.numel() == count ? &it->second : nullptr;
}

// The tensor a Constant node holds, or nullopt for forms that stay nodes (sparse, strings, none).
std::optional<Tensor> ConstantNodeValue(const Node& node) {
  auto filled = [](DType dtype, Shape shape, const auto& values) {
    Tensor t(dtype, std::move(shape));
    using V = std::decay_t<decltype(values[0])>;
    for (size_t i = 0; i < values.size(); ++i) t.data<V>()[i] = values[i];
    return t;
  };
  if (const Tensor* t = node.GetTensor("value")) {
    if (t->dtype() == DType::kString || t->dtype() == DType::kUndefined) return std::nullopt;
    return t->Clone();
  }
  if (node.Has("value_float")) return filled(DType::kF32, {}, std::vector<float>{node.GetFloat("value_float", 0)});
  if (node.Has("value_int")) return filled(DType::kI64, {}, std::vector<int64_t>{node.GetInt("value_int", 0)});
  if (node.Has("value_floats")) {
    const std::vector<float> v = node.GetFloats("value_floats");
    return filled(DType::kF32, {static_cast<int64_t>(v.size())}, v);
  }
  if (node.Has("value_ints")) {
    const std::vector<int64_t> v = node.GetInts("value_ints");
    return filled(DType::kI64, {static_cast<int64_t>(v.size())}, v);
  }
  return std::nullopt;
}

// Drops the nodes at `erased` and the initializers nothing reads any more (weights only they read).
void EraseNodes(Graph& graph, const std::set<size_t>& erased) {
  if (erased.empty()) return;
  std::vector<Node> kept;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!erased.contains(i)) kept.push_back(std::move(graph.nodes[i]));
  }
  graph.nodes = std::move(kept);
  const auto now_read = CountValueReaders(graph);
  for (auto it = graph.initializers.begin(); it != graph.initializers.end();) {
    it = now_read.contains(it->first) ? std::next(it) : graph.initializers.erase(it);
  }
}

// A constant Pad's begin/end amounts per axis of a rank-`rank` tensor (ONNX order: all begins, then all
// ends), when it pads with zeros in constant mode; nullopt otherwise. Opset < 11: attributes `pads` and
// `value`; 11+: inputs pads, constant_value (empty: 0) and, from 18, axes.
std::optional<std::vector<int64_t>> ZeroPadAmounts(const Graph& graph, const Node& pad, int64_t rank) {
  if (pad.GetString("mode", "constant") != "constant") return std::nullopt;
  auto constant = [&](size_t input) -> const Tensor* {
    if (!pad.HasInput(input)) return nullptr;
    auto it = graph.initializers.find(pad.inputs[input]);
    return it == graph.initializers.end() ? nullptr : &it->second;
  };
  std::vector<int64_t> pads;
  if (graph.opset < 11 || !pad.HasInput(1)) {
    if (pad.GetFloat("value", 0.0f) != 0.0f || !pad.Has("pads")) return std::nullopt;
    pads = pad.GetInts("pads");
  } else {
    const Tensor* given = constant(1);
    if (given == nullptr) return std::nullopt;
    pads = given->ToInt64Vector();
    if (pad.HasInput(2)) {
      const Tensor* value = constant(2);
      if (value == nullptr || value->numel() != 1 || value->GetAsDouble(0) != 0.0) return std::nullopt;
    }
    if (pad.HasInput(3)) {
      const Tensor* axes_tensor = constant(3);
      if (axes_tensor == nullptr) return std::nullopt;
      const std::vector<int64_t> axes = axes_tensor->ToInt64Vector();
      if (pads.size() != 2 * axes.size()) return std::nullopt;
      std::vector<int64_t> full(static_cast<size_t>(2 * rank), 0);
      for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (axis < 0 || axis >= rank) return std::nullopt;
        full[static_cast<size_t>(axis)] = pads[i];
        full[static_cast<size_t>(axis + rank)] = pads[i + axes.size()];
      }
      pads = std::move(full);
    }
  }
  if (static_cast<int64_t>(pads.size()) != 2 * rank) return std::nullopt;
  return pads;
}

// A Conv or ConvTranspose (ai.onnx) whose f32 initializer weights and bias (or none) can absorb a
// per-output-channel affine map: its output channels and output rank.
struct AffineLayer {
  bool transposed = false;
  int64_t channels = 0, rank = 0, groups = 1;
};

std::optional<AffineLayer> FoldableLayer(const Graph& graph, const Node& layer) {
  const bool conv = layer.op_type == "Conv", transposed = layer.op_type == "ConvTranspose";
  if ((!conv && !transposed) || !layer.domain.empty() || layer.inputs.size() < 2 || layer.outputs.size() != 1) {
    return std::nullopt;
  }
  auto w = graph.initializers.find(layer.inputs[1]);
  if (w == graph.initializers.end() || w->second.dtype() != DType::kF32 || w->second.rank() < 3) return std::nullopt;
  // Conv W is [M, C/g, k…]; ConvTranspose W is [C, M/g, k…].
  const int64_t groups = layer.GetInt("group", 1);
  if (groups < 1 || (transposed && w->second.dim(0) % groups != 0)) return std::nullopt;
  const int64_t channels = transposed ? w->second.dim(1) * groups : w->second.dim(0);
  if (layer.HasInput(2) && F32Constant(graph, layer.inputs[2], channels) == nullptr) return std::nullopt;
  return AffineLayer{transposed, channels, w->second.rank(), groups};
}

// y' = scale[m] · y + shift[m] per output channel m.
struct Affine {
  std::vector<double> scale, shift;
};

// c's values per output channel (one entry when c is a scalar) when c is an f32 initializer that
// broadcasts against a rank-`rank` layer output along the channel axis (1) only.
std::optional<std::vector<float>> ChannelConstant(const Graph& graph, const std::string& name, int64_t rank,
                                                  int64_t channels) {
  auto it = graph.initializers.find(name);
  if (it == graph.initializers.end() || it->second.dtype() != DType::kF32) return std::nullopt;
  const Tensor& c = it->second;
  if (c.rank() > rank || (c.numel() != 1 && c.numel() != channels)) return std::nullopt;
  for (int64_t i = 0; i < c.rank(); ++i) {
    const int64_t axis = rank - c.rank() + i;  // right-aligned, as ONNX broadcasting
    if (c.dim(i) != 1 && axis != 1) return std::nullopt;
  }
  return std::vector<float>(c.data<float>(), c.data<float>() + c.numel());
}

// Mul / Div / Add / Sub of the layer output (operand `side`) and a channel constant.
std::optional<Affine> BinaryAffine(const Graph& graph, const Node& op, size_t side, int64_t rank, int64_t channels) {
  const auto c = ChannelConstant(graph, op.inputs[1 - side], rank, channels);
  if (!c) return std::nullopt;
  Affine f;
  for (size_t m = 0; m < static_cast<size_t>(channels); ++m) {
    const auto map = ConstantOperandMap(op, side == 0, (*c)[c->size() == 1 ? 0 : m]);
    if (!map) return std::nullopt;
    f.scale.push_back(map->scale);
    f.shift.push_back(map->shift);
  }
  return f;
}

// Inference BatchNormalization with constant statistics: scale = gamma / sqrt(var + eps),
// shift = beta − mean · scale.
std::optional<Affine> BatchNormAffine(const Graph& graph, const Node& bn, int64_t channels) {
  const Tensor* gamma = F32Constant(graph, bn.inputs[1], channels);
  const Tensor* beta = F32Constant(graph, bn.inputs[2], channels);
  const Tensor* mean = F32Constant(graph, bn.inputs[3], channels);
  const Tensor* var = F32Constant(graph, bn.inputs[4], channels);
  if (!gamma || !beta || !mean || !var) return std::nullopt;
  const double eps = bn.GetFloat("epsilon", 1e-5f);
  Affine f;
  for (int64_t m = 0; m < channels; ++m) {
    const double s = gamma->data<float>()[m] / std::sqrt(static_cast<double>(var->data<float>()[m]) + eps);
    f.scale.push_back(s);
    f.shift.push_back(beta->data<float>()[m] - mean->data<float>()[m] * s);
  }
  return f;
}

// W' = W · scale (per output channel), b' = b · scale + shift, as new initializers of the layer.
void ApplyAffine(Graph& graph, Node& layer, const AffineLayer& target, const Affine& f) {
  const Tensor& w = graph.initializers.at(layer.inputs[1]);
  Tensor new_w = w.Clone();
  Tensor new_b(DType::kF32, {target.channels});
  const float* b0 = layer.HasInput(2) ? graph.initializers.at(layer.inputs[2]).data<float>() : nullptr;
  for (int64_t m = 0; m < target.channels; ++m) {
    new_b.data<float>()[m] =
        static_cast<float>((b0 ? b0[m] : 0.0) * f.scale[static_cast<size_t>(m)] + f.shift[static_cast<size_t>(m)]);
  }
  // Conv: row m of W is channel m. ConvTranspose: W[c, j, k…] feeds channel g·(M/g) + j, g = c / (C/g).
  const int64_t rows = w.dim(0), per_row = w.numel() / rows;
  const int64_t out_per_group = target.transposed ? w.dim(1) : 1;
  const int64_t in_per_group = rows / target.groups;
  const int64_t kernel = target.transposed ? per_row / out_per_group : per_row;
  float* data = new_w.data<float>();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < per_row; ++k) {
      const int64_t m = target.transposed ? (r / in_per_group) * out_per_group + k / kernel : r;
      data[r * per_row + k] = static_cast<float>(data[r * per_row + k] * f.scale[static_cast<size_t>(m)]);
    }
  }
  const std::string base = (layer.name.empty() ? layer.outputs[0] : layer.name) + "/affine_folded_";
  graph.initializers[base + "weight"] = std::move(new_w);
  graph.initializers[base + "bias"] = std::move(new_b);
  layer.inputs.resize(3);
  layer.inputs[1] = base + "weight";
  layer.inputs[2] = base + "bias";
}

}  // namespace

std::map<std::string, int> CountValueReaders(const Graph& graph) {
  std::map<std::string, int> readers;
  CountReads(graph, readers);
  for (const ValueDesc& out : graph.outputs) ++readers[out.name];
  return readers;
}

int PromoteConstantNodes(Graph& graph) {
  std::set<std::string> graph_outputs;
  for (const ValueDesc& out : graph.outputs) graph_outputs.insert(out.name);
  int promoted = 0;
  std::vector<Node> kept;
  for (Node& node : graph.nodes) {
    const bool constant = node.op_type == "Constant" && (node.domain.empty() || node.domain == "ai.onnx");
    // Graph outputs stay produced by nodes, so the output list keeps naming computed values only.
    const bool promotable = node.outputs.size() == 1 && !node.outputs[0].empty() &&
                            !graph_outputs.contains(node.outputs[0]) && !graph.initializers.contains(node.outputs[0]);
    if (constant && promotable) {
      if (std::optional<Tensor> value = ConstantNodeValue(node)) {
        graph.initializers[node.outputs[0]] = std::move(*value);
        ++promoted;
        continue;
      }
    }
    // torch.onnx.export writes a parameter equal to another (the zero biases of a model's Linear
    // layers, tied weights) as Identity(the first one): the same tensor under the second name.
    const bool identity = node.op_type == "Identity" && (node.domain.empty() || node.domain == "ai.onnx");
    if (identity && promotable && node.inputs.size() == 1) {
      if (auto it = graph.initializers.find(node.inputs[0]); it != graph.initializers.end()) {
        const Tensor shared = it->second;  // shares the data
        graph.initializers[node.outputs[0]] = shared;
        ++promoted;
        continue;
      }
    }
    kept.push_back(std::move(node));
  }
  graph.nodes = std::move(kept);
  return promoted;
}

int EliminateDeadNodes(Graph& graph) {
  int removed = 0;
  while (true) {
    const auto readers = CountValueReaders(graph);
    std::vector<Node> kept;
    for (Node& node : graph.nodes) {
      bool live = false;
      for (const std::string& out : node.outputs) live |= !out.empty() && readers.contains(out);
      if (live) {
        kept.push_back(std::move(node));
      } else {
        ++removed;
      }
    }
    const bool changed = kept.size() != graph.nodes.size();
    graph.nodes = std::move(kept);
    if (!changed) return removed;
  }
}

Result<int> FoldBatchNorm(Graph& graph) {
  int folded = 0;
  auto readers = CountValueReaders(graph);
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& out : graph.nodes[i].outputs) producer[out] = i;
  }
  std::set<size_t> erased;
  for (size_t b = 0; b < graph.nodes.size(); ++b) {
    const Node& bn = graph.nodes[b];
    if (bn.op_type != "BatchNormalization" || !bn.domain.empty() || bn.inputs.size() != 5) continue;
    if (bn.GetInt("training_mode", 0) != 0 || bn.outputs.size() != 1) continue;
    auto prod = producer.find(bn.inputs[0]);
    if (prod == producer.end() || erased.contains(prod->second)) continue;
    Node& layer = graph.nodes[prod->second];
    const bool conv = layer.op_type == "Conv" && layer.domain.empty();
    const bool gemm = layer.op_type == "Gemm" && layer.domain.empty() && layer.GetInt("transA", 0) == 0;
    if ((!conv && !gemm) || layer.outputs.size() != 1 || readers[layer.outputs[0]] != 1) continue;
    auto w_it = graph.initializers.find(layer.inputs.size() > 1 ? layer.inputs[1] : "");
    if (w_it == graph.initializers.end() || w_it->second.dtype() != DType::kF32 || w_it->second.rank() < 2) continue;
    const Tensor& w = w_it->second;
    const bool trans_b = gemm && layer.GetInt("transB", 0) != 0;
    // Output channels: Conv W is [M, C/g, k…]; Gemm B is [K, N] (or [N, K] with transB).
    const int64_t channels = conv ? w.dim(0) : (trans_b ? w.dim(0) : w.dim(1));
    const Tensor* gamma = F32Constant(graph, bn.inputs[1], channels);
    const Tensor* beta = F32Constant(graph, bn.inputs[2], channels);
    const Tensor* mean = F32Constant(graph, bn.inputs[3], channels);
    const Tensor* var = F32Constant(graph, bn.inputs[4], channels);
    if (!gamma || !beta || !mean || !var) continue;
    const Tensor* bias = nullptr;
    if (layer.inputs.size() > 2 && !layer.inputs[2].empty()) {
      bias = F32Constant(graph, layer.inputs[2], channels);
      if (bias == nullptr) continue;  // a broadcast or non-constant Gemm C: leave the pair alone
    }
    if (gemm && (layer.GetFloat("alpha", 1.0f) != 1.0f || (bias && layer.GetFloat("beta", 1.0f) != 1.0f))) continue;
    const double eps = bn.GetFloat("epsilon", 1e-5f);

    Tensor new_w = w.Clone();
    Tensor new_b(DType::kF32, {channels});
    const int64_t per_channel = w.numel() / channels;
    for (int64_t c = 0; c < channels; ++c) {
      const double s = gamma->data<float>()[c] / std::sqrt(static_cast<double>(var->data<float>()[c]) + eps);
      const double b0 = bias ? bias->data<float>()[c] : 0.0;
      new_b.data<float>()[c] = static_cast<float>((b0 - mean->data<float>()[c]) * s + beta->data<float>()[c]);
      for (int64_t k = 0; k < per_channel; ++k) {
        // Conv and transposed Gemm weights are channel-major; plain Gemm B has channels as columns.
        const int64_t index = (conv || trans_b) ? c * per_channel + k : k * channels + c;
        new_w.data<float>()[index] = static_cast<float>(new_w.data<float>()[index] * s);
      }
    }
    const std::string w_name = layer.name + "/bn_folded_weight";
    const std::string b_name = layer.name + "/bn_folded_bias";
    graph.initializers[w_name] = std::move(new_w);
    graph.initializers[b_name] = std::move(new_b);
    layer.inputs.resize(3);
    layer.inputs[1] = w_name;
    layer.inputs[2] = b_name;
    if (gemm) layer.attributes.erase("beta");
    if (layer.covers.empty()) layer.covers.push_back(layer.name);
    layer.covers.push_back(bn.name);
    layer.outputs[0] = bn.outputs[0];
    erased.insert(b);
    ++folded;
  }
  EraseNodes(graph, erased);
  return folded;
}

int FoldAffineIntoConv(Graph& graph) {
  int folded = 0;
  for (bool changed = true; changed;) {
    changed = false;
    const auto readers = CountValueReaders(graph);
    std::map<std::string, size_t> producer;
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      for (const std::string& out : graph.nodes[i].outputs) producer[out] = i;
    }
    std::set<size_t> erased;
    for (size_t a = 0; a < graph.nodes.size(); ++a) {
      const Node& op = graph.nodes[a];
      const bool bn = op.op_type == "BatchNormalization";
      const bool binary = op.op_type == "Mul" || op.op_type == "Div" || op.op_type == "Add" || op.op_type == "Sub";
      if ((!bn && !binary) || !op.domain.empty() || op.inputs.empty() || op.outputs.size() != 1) continue;
      if (binary && (op.inputs.size() != 2 || graph.opset < 7)) continue;
      if (bn && (op.inputs.size() != 5 || op.GetInt("training_mode", 0) != 0)) continue;
      // Which operand is the layer's output (BatchNormalization: X only); the rest are constants.
      for (size_t side = 0; side < (binary ? 2u : 1u); ++side) {
        const std::string& y = op.inputs[side];
        auto prod = producer.find(y);
        if (prod == producer.end() || erased.contains(prod->second) || erased.contains(a)) continue;
        Node& layer = graph.nodes[prod->second];
        const std::optional<AffineLayer> target = FoldableLayer(graph, layer);
        auto r = readers.find(y);
        if (!target || r == readers.end() || r->second != 1) continue;
        const std::optional<Affine> affine = bn ? BatchNormAffine(graph, op, target->channels)
                                                : BinaryAffine(graph, op, side, target->rank, target->channels);
        if (!affine) continue;
        ApplyAffine(graph, layer, *target, *affine);
        if (layer.covers.empty()) layer.covers.push_back(layer.name);
        layer.covers.push_back(op.name);
        graph.value_info.erase(y);
        layer.outputs[0] = op.outputs[0];
        erased.insert(a);
        ++folded;
        changed = true;
        break;
      }
    }
    // The layer stays where it was: it computes the op's output before any reader of it.
    EraseNodes(graph, erased);
  }
  return folded;
}

int FactorResidualScale(Graph& graph) {
  const auto readers = CountValueReaders(graph);
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& out : graph.nodes[i].outputs) producer[out] = i;
  }
  auto is_f32 = [&](const std::string& name) {
    auto it = graph.value_info.find(name);
    return it != graph.value_info.end() && it->second.dtype == DType::kF32;
  };
  int factored = 0;
  for (size_t a = 0; a < graph.nodes.size(); ++a) {
    const Node& add = graph.nodes[a];
    if (add.op_type != "Add" || !add.domain.empty() || add.inputs.size() != 2 || add.outputs.size() != 1 ||
        graph.opset < 7) {
      continue;
    }
    for (size_t side = 0; side < 2; ++side) {
      const std::string& x = add.inputs[1 - side];
      auto prod = producer.find(add.inputs[side]);
      if (prod == producer.end() || x.empty()) continue;
      const Node& mul = graph.nodes[prod->second];
      if (mul.op_type != "Mul" || !mul.domain.empty() || mul.inputs.size() != 2 || mul.outputs.size() != 1 ||
          readers.at(mul.outputs[0]) != 1) {
        continue;
      }
      const bool first = mul.inputs[0] == x, second = mul.inputs[1] == x;
      if (first == second) continue;  // x · x, or x is not a factor
      const std::string s = first ? mul.inputs[1] : mul.inputs[0];
      if (!is_f32(s) || !is_f32(x)) continue;
      const std::string one = add.name + "/one";
      Tensor one_value(DType::kF32, {});
      one_value.data<float>()[0] = 1.0f;
      graph.initializers[one] = std::move(one_value);
      // The Mul's place takes 1 + s (after s and x are computed); the Add's place the product.
      Node one_plus;
      one_plus.name = add.name + "/one_plus_scale";
      one_plus.op_type = "Add";
      one_plus.inputs = {s, one};
      one_plus.outputs = {add.name + "/one_plus_scale_output"};
      one_plus.covers = {add.name};
      Node product;
      product.name = mul.name;
      product.op_type = "Mul";
      product.inputs = {x, one_plus.outputs[0]};
      product.outputs = add.outputs;
      product.covers = mul.covers.empty() ? std::vector<std::string>{mul.name} : mul.covers;
      if (auto it = graph.value_info.find(s); it != graph.value_info.end()) {
        ValueDesc desc = it->second;
        desc.name = one_plus.outputs[0];
        graph.value_info[desc.name] = desc;
      }
      graph.value_info.erase(mul.outputs[0]);
      graph.nodes[prod->second] = std::move(one_plus);
      graph.nodes[a] = std::move(product);
      ++factored;
      break;
    }
  }
  return factored;
}

int FoldPadIntoConv(Graph& graph) {
  auto readers = CountValueReaders(graph);
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& out : graph.nodes[i].outputs) producer[out] = i;
  }
  std::set<size_t> erased;
  for (Node& conv : graph.nodes) {
    if (conv.op_type != "Conv" || !conv.domain.empty() || conv.inputs.size() < 2) continue;
    const std::string auto_pad = conv.GetString("auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "VALID") continue;
    auto prod = producer.find(conv.inputs[0]);
    if (prod == producer.end() || erased.contains(prod->second)) continue;
    const Node& pad = graph.nodes[prod->second];
    if (pad.op_type != "Pad" || !pad.domain.empty() || pad.inputs.empty() || readers[conv.inputs[0]] != 1) continue;
    auto w = graph.initializers.find(conv.inputs[1]);
    if (w == graph.initializers.end() || w->second.rank() < 3) continue;
    const int64_t rank = w->second.rank(), spatial = rank - 2;
    const std::optional<std::vector<int64_t>> amounts = ZeroPadAmounts(graph, pad, rank);
    if (!amounts) continue;
    const std::vector<int64_t>& p = *amounts;
    // Only spatial padding, never negative (a crop): N and C stay, as Conv's pads are spatial.
    if (p[0] != 0 || p[1] != 0 || p[static_cast<size_t>(rank)] != 0 || p[static_cast<size_t>(rank + 1)] != 0 ||
        std::any_of(p.begin(), p.end(), [](int64_t v) { return v < 0; })) {
      continue;
    }
    std::vector<int64_t> conv_pads =
        auto_pad == "VALID" ? std::vector<int64_t>(static_cast<size_t>(2 * spatial), 0)
                            : conv.GetInts("pads", std::vector<int64_t>(static_cast<size_t>(2 * spatial), 0));
    if (static_cast<int64_t>(conv_pads.size()) != 2 * spatial) continue;
    for (int64_t d = 0; d < spatial; ++d) {
      conv_pads[static_cast<size_t>(d)] += p[static_cast<size_t>(2 + d)];
      conv_pads[static_cast<size_t>(spatial + d)] += p[static_cast<size_t>(rank + 2 + d)];
    }
    Attribute pads_attr;
    pads_attr.kind = Attribute::Kind::kInts;
    pads_attr.ints = std::move(conv_pads);
    conv.attributes["pads"] = std::move(pads_attr);
    conv.attributes.erase("auto_pad");
    conv.inputs[0] = pad.inputs[0];
    if (conv.covers.empty()) conv.covers.push_back(conv.name);
    conv.covers.push_back(pad.name);
    erased.insert(prod->second);
  }
  EraseNodes(graph, erased);
  return static_cast<int>(erased.size());
}

std::optional<LinearMap> ConstantOperandMap(const Node& op, bool y_first, double c) {
  if (!op.domain.empty()) return std::nullopt;
  if (op.op_type == "Mul") return LinearMap{c, 0.0};
  if (op.op_type == "Div" && y_first && c != 0.0) return LinearMap{1.0 / c, 0.0};
  if (op.op_type == "Add") return LinearMap{1.0, c};
  if (op.op_type == "Sub") return y_first ? LinearMap{1.0, -c} : LinearMap{-1.0, c};
  return std::nullopt;
}

}  // namespace chipfit
