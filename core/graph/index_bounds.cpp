// Bounds of integer graph inputs that index a table (index_bounds.h).
#include "core/graph/index_bounds.h"

#include <algorithm>
#include <functional>
#include <set>

namespace chipfit {
namespace {

// The graph input a value is, through ops that keep the values (Cast to another integer type, shape ops);
// empty when it is computed from something else.
std::string SourceInput(const Graph& graph, const std::map<std::string, const Node*>& producer, std::string value) {
  static const std::set<std::string> kPassThrough = {"Cast", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity"};
  for (int depth = 0; depth < 16; ++depth) {
    for (const ValueDesc& in : graph.inputs) {
      if (in.name == value) return value;
    }
    auto it = producer.find(value);
    if (it == producer.end() || !kPassThrough.contains(it->second->op_type) || !it->second->HasInput(0)) return {};
    value = it->second->inputs[0];
  }
  return {};
}

// Rows along `axis` of a constant table, or 0 when `name` is not a constant of known shape.
int64_t TableRows(const Graph& graph, const std::string& name, int64_t axis) {
  auto it = graph.initializers.find(name);
  if (it == graph.initializers.end()) return 0;
  const auto rank = static_cast<int64_t>(it->second.rank());
  if (axis < 0) axis += rank;
  return axis >= 0 && axis < rank ? it->second.dim(axis) : 0;
}

}  // namespace

std::map<std::string, int64_t> InputIndexBounds(const Graph& graph) {
  std::map<std::string, const Node*> producer;
  for (const Node& node : graph.nodes) {
    for (const std::string& out : node.outputs) producer[out] = &node;
  }
  std::map<std::string, int64_t> bounds;
  auto bound = [&](const Node& node, size_t index_input, int64_t rows) {
    if (rows <= 0 || !node.HasInput(index_input)) return;
    const std::string input = SourceInput(graph, producer, node.inputs[index_input]);
    if (input.empty()) return;
    auto [it, inserted] = bounds.emplace(input, rows);
    if (!inserted) it->second = std::min(it->second, rows);
  };
  for (const Node& node : graph.nodes) {
    if (node.op_type == "Gather" && (node.domain.empty() || node.domain == "ai.onnx") && node.HasInput(0)) {
      bound(node, 1, TableRows(graph, node.inputs[0], node.GetInt("axis", 0)));
    } else if (node.op_type == "EmbedLayerNormalization" && node.domain == "com.microsoft") {
      if (node.HasInput(2)) bound(node, 0, TableRows(graph, node.inputs[2], 0));  // word embedding
      if (node.HasInput(4)) bound(node, 1, TableRows(graph, node.inputs[4], 0));  // segment embedding
      bound(node, 7, 2);                                                          // the mask: 0 or 1
    }
  }
  return bounds;
}

void BoundIndexInputs(const std::map<std::string, int64_t>& bounds, std::map<std::string, Tensor>& sample) {
  for (const auto& [name, rows] : bounds) {
    auto it = sample.find(name);
    if (it == sample.end()) continue;
    Tensor& t = it->second;
    if (t.dtype() != DType::kI64 && t.dtype() != DType::kI32) continue;
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (t.dtype() == DType::kI64) {
        int64_t& v = t.data<int64_t>()[i];
        v = ((v % rows) + rows) % rows;
      } else {
        int32_t& v = t.data<int32_t>()[i];
        v = static_cast<int32_t>(((v % rows) + rows) % rows);
      }
    }
  }
}

namespace {

void Fill(Tensor& t, const std::function<int64_t(int64_t)>& value) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.dtype() == DType::kI64) t.data<int64_t>()[i] = value(i);
    if (t.dtype() == DType::kI32) t.data<int32_t>()[i] = static_cast<int32_t>(value(i));
  }
}

}  // namespace

void SeedSequenceLengths(const Graph& graph, std::map<std::string, Tensor>& sample,
                         const std::set<std::string>& given) {
  // The new tokens: dim 1 of a [batch, sequence] token-id input.
  int64_t tokens = -1;
  for (const auto& [name, rows] : InputIndexBounds(graph)) {
    auto it = sample.find(name);
    if (it != sample.end() && it->second.rank() == 2) tokens = it->second.dim(1);
  }
  if (tokens < 1) return;
  auto input = [&](const Node& node, size_t i) -> const Tensor* {
    if (!node.HasInput(i)) return nullptr;
    auto it = sample.find(node.inputs[i]);
    return it == sample.end() ? nullptr : &it->second;
  };
  // An input this may set: seeded, not the user's.
  auto seeded = [&](const Node& node, size_t i) -> Tensor* {
    if (!node.HasInput(i) || given.contains(node.inputs[i])) return nullptr;
    auto it = sample.find(node.inputs[i]);
    return it == sample.end() ? nullptr : &it->second;
  };
  int64_t past = 0;
  for (const Node& node : graph.nodes) {
    if (node.domain != "com.microsoft" || node.op_type != "GroupQueryAttention") continue;
    if (const Tensor* past_key = input(node, 3); past_key != nullptr && past_key->rank() == 4) {
      past = past_key->dim(2);
    }
    const int64_t total = past + tokens;
    if (Tensor* seqlens = seeded(node, 5)) Fill(*seqlens, [&](int64_t) { return total - 1; });
    if (Tensor* length = seeded(node, 6)) Fill(*length, [&](int64_t) { return total; });
  }
  for (const Node& node : graph.nodes) {
    if (node.domain != "com.microsoft" || node.op_type != "RotaryEmbedding") continue;
    if (Tensor* positions = seeded(node, 1); positions != nullptr && positions->rank() == 2) {
      const int64_t width = positions->dim(1);
      Fill(*positions, [&](int64_t i) { return past + i % width; });
    }
  }
}

}  // namespace chipfit
