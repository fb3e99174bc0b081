// Runs one node on the reference kernels: for constant folding and for kernel tests.
#pragma once

#include <vector>

#include "core/graph/graph.h"
#include "core/status.h"

namespace chipfit {

// Infers output types/shapes from the inputs (with their values), allocates outputs, runs the
// reference kernel. Omitted optional inputs are passed as undefined Tensors.
// Only sequence/optional ops (self-allocating), control flow and Identity take a sequence or an empty
// optional; any other op given one gets an error naming the node and the input, not a silently
// empty result.
Status CheckDenseInputs(const Node& node, bool self_allocating, const std::vector<const Tensor*>& inputs);

Result<std::vector<Tensor>> RunNodeOnReference(const Node& node, int64_t opset, const std::vector<Tensor>& inputs);

}  // namespace chipfit
