// ONNX scoping for subgraphs: the values an If/Loop/Scan body reads from the graphs around it.
#pragma once

#include <string>
#include <vector>

#include "core/graph/graph.h"

namespace chipfit {

// Names `graph` reads (its nodes' inputs and outputs it returns, in nested bodies too, to any depth)
// that it does not define itself (as an input, initializer or node output): the outer-scope values
// it needs from the enclosing graphs. Sorted, without duplicates.
std::vector<std::string> OuterScopeReads(const Graph& graph);

// The same for every subgraph attribute of one node (If's two branches, a Loop's or Scan's body).
std::vector<std::string> OuterScopeReads(const Node& node);

// Whether the node holds subgraphs (If, Loop, Scan, or any op with a graph attribute).
bool HasSubgraphs(const Node& node);

}  // namespace chipfit
