// Runs one node on the reference kernels: for constant folding and for kernel tests.
#pragma once

#include <vector>

#include "core/graph/graph.h"
#include "core/status.h"

namespace chipfit {

// Infers output types/shapes from the inputs (with their values), allocates outputs, runs the
// reference kernel. Omitted optional inputs are passed as undefined Tensors.
Result<std::vector<Tensor>> RunNodeOnReference(const Node& node, int64_t opset, const std::vector<Tensor>& inputs);

}  // namespace chipfit
