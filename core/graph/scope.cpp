// ONNX scoping for subgraphs: the outer-scope values a body reads.
#include "core/graph/scope.h"

#include <set>

namespace chipfit {
namespace {

void CollectReads(const Graph& graph, std::set<std::string>& reads) {
  std::set<std::string> defined;
  for (const ValueDesc& in : graph.inputs) defined.insert(in.name);
  for (const auto& [name, tensor] : graph.initializers) defined.insert(name);
  for (const Node& node : graph.nodes) {
    for (const std::string& out : node.outputs) defined.insert(out);
  }
  std::set<std::string> own;
  for (const Node& node : graph.nodes) {
    for (const std::string& in : node.inputs) {
      if (!in.empty()) own.insert(in);
    }
    for (const std::string& name : OuterScopeReads(node)) own.insert(name);
  }
  // A body may return an outer value directly as one of its outputs (an If branch that only forwards).
  for (const ValueDesc& out : graph.outputs) own.insert(out.name);
  for (const std::string& name : own) {
    if (!defined.contains(name)) reads.insert(name);
  }
}

}  // namespace

std::vector<std::string> OuterScopeReads(const Graph& graph) {
  std::set<std::string> reads;
  CollectReads(graph, reads);
  return {reads.begin(), reads.end()};
}

std::vector<std::string> OuterScopeReads(const Node& node) {
  std::set<std::string> reads;
  for (const auto& [name, attr] : node.attributes) {
    if (attr.kind == Attribute::Kind::kGraph && attr.graph != nullptr) CollectReads(*attr.graph, reads);
  }
  return {reads.begin(), reads.end()};
}

bool HasSubgraphs(const Node& node) {
  for (const auto& [name, attr] : node.attributes) {
    if (attr.kind == Attribute::Kind::kGraph && attr.graph != nullptr) return true;
  }
  return false;
}

}  // namespace chipfit
