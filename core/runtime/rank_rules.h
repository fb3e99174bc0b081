// What a node's outputs are when their shapes wait for run-time data: the element type and the
// rank, from the op's definition. A kernel is chosen for a rank, so a node after Range, NonZero or a
// value-dependent Reshape can still get a device kernel whose loops read the dims when it runs.
#pragma once

#include <optional>
#include <vector>

#include "core/graph/graph.h"
#include "core/tensor/dtype.h"

namespace chipfit::compile {

struct RankedType {
  DType dtype = DType::kUndefined;
  int rank = -1;           // -1: not known before the node runs
  int64_t first_dim = -1;  // a 1-D input's length where known (a shape or axes list): Reshape, Expand …
};

// One entry per node output; nullopt where the op's definition does not fix it from the inputs'
// element types and ranks (Reshape to a shape computed at run time, Squeeze without axes …).
// `inputs` has one entry per node input; an omitted input has rank -1 and kUndefined.
std::vector<std::optional<RankedType>> OutputRanks(const Node& node, const std::vector<RankedType>& inputs);

}  // namespace chipfit::compile
