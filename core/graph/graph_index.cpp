#include "core/graph/graph_index.h"

#include <algorithm>
#include <utility>

namespace chipfit {

std::vector<std::string> GraphIndex::CoversOf(size_t head, std::vector<size_t> rest) const {
  const Node& first = graph_.nodes[head];
  std::vector<std::string> covers = first.covers.empty() ? std::vector<std::string>{first.name} : first.covers;
  std::sort(rest.begin(), rest.end());
  for (size_t i : rest) {
    const Node& node = graph_.nodes[i];
    if (node.covers.empty()) {
      covers.push_back(node.name);
    } else {
      covers.insert(covers.end(), node.covers.begin(), node.covers.end());
    }
  }
  return covers;
}

void GraphIndex::ReplaceWithFused(std::vector<FusedRewrite> rewrites) {
  std::map<size_t, Node> fused_at;
  std::set<size_t> removed;
  std::set<std::string> removed_values, maybe_unused;
  for (FusedRewrite& r : rewrites) {
    const std::string& output = r.fused.outputs[0];
    for (size_t i : r.nodes) {
      removed.insert(i);
      for (const std::string& out : graph_.nodes[i].outputs) {
        if (out != output) removed_values.insert(out);
      }
      for (const std::string& in : graph_.nodes[i].inputs) {
        if (graph_.initializers.contains(in)) maybe_unused.insert(in);
      }
    }
    fused_at.emplace(*std::max_element(r.nodes.begin(), r.nodes.end()), std::move(r.fused));
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    if (auto it = fused_at.find(i); it != fused_at.end()) {
      kept.push_back(std::move(it->second));
    } else if (!removed.contains(i)) {
      kept.push_back(std::move(graph_.nodes[i]));
    }
  }
  graph_.nodes = std::move(kept);
  for (const std::string& value : removed_values) graph_.value_info.erase(value);
  // Constants only the pattern read (activation parameters, Clip bounds, GELU's 0.5 …).
  const std::map<std::string, int> now_read = CountValueReaders(graph_);
  for (const std::string& name : maybe_unused) {
    if (!now_read.contains(name)) graph_.initializers.erase(name);
  }
}

}  // namespace chipfit
