// What a pattern-matching graph pass looks up about each value: who writes it, who reads it, how many
// reads it has (nested bodies included) and what the model declares of it.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/graph/passes.h"

namespace chipfit {

class GraphIndex {
 protected:
  explicit GraphIndex(Graph& graph) : graph_(graph), readers_(CountValueReaders(graph)) {
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      const Node& node = graph_.nodes[i];
      for (const std::string& out : node.outputs) {
        if (!out.empty()) producer_[out] = i;
      }
      for (const std::string& in : node.inputs) {
        // A node reading a value twice (Mul(x, x)) is one consumer.
        if (!in.empty() && (consumers_[in].empty() || consumers_[in].back() != i)) consumers_[in].push_back(i);
      }
    }
    for (const ValueDesc& v : graph_.inputs) descs_[v.name] = &v;
    for (const auto& [name, v] : graph_.value_info) descs_[name] = &v;
    for (const ValueDesc& v : graph_.outputs) descs_[v.name] = &v;
  }

  // What a fused node covers: the ONNX nodes `head` covers (itself when it is one), then those of
  // `rest` in graph order.
  std::vector<std::string> CoversOf(size_t head, std::vector<size_t> rest) const;

  // One pattern a pass rewrites: its nodes (any order) and the node that computes it, writing the
  // pattern's last output under its name.
  struct FusedRewrite {
    std::vector<size_t> nodes;
    Node fused;
  };
  // Puts each fused node in the place of its pattern's last node (the pattern's inputs are computed
  // before it, every reader of its output after it), drops the pattern's other nodes, the
  // descriptions of the values they wrote, and initializers nothing reads any more.
  void ReplaceWithFused(std::vector<FusedRewrite> rewrites);

  // The only main-graph node reading `value`, when it is read exactly once (no graph output, no body).
  std::optional<size_t> SoleReader(const std::string& value) const {
    auto it = consumers_.find(value);
    auto reads = readers_.find(value);
    if (it == consumers_.end() || it->second.size() != 1 || reads == readers_.end() || reads->second != 1) {
      return std::nullopt;
    }
    return it->second[0];
  }

  Graph& graph_;
  std::map<std::string, int> readers_;                    // CountValueReaders: every read, bodies and outputs too
  std::map<std::string, size_t> producer_;                // value → the node that writes it
  std::map<std::string, std::vector<size_t>> consumers_;  // value → the nodes that read it, once each
  std::map<std::string, const ValueDesc*> descs_;         // declared inputs, value_info and outputs
};

}  // namespace chipfit
