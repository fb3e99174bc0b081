// Einsum's equation read against its inputs' shapes: one label per dim of every input (an ellipsis
// expanded into labels of its own) and of the output, and each label's size. Shared by the reference
// kernel (linalg.cpp) and the CPU device's (devices/cpu/ops/einsum_cpu.cpp).
#pragma once

#include <vector>

#include "core/graph/graph.h"
#include "core/status.h"
#include "core/tensor/tensor.h"

namespace chipfit {

struct EinsumPlan {
  std::vector<std::vector<int>> inputs;  // per input, one label per dim (ellipsis expanded)
  std::vector<int> output;
  std::vector<int64_t> sizes;  // per label; -1 when not known yet
};

// Errors (InvalidArgument) name the node and the equation: a malformed term, a term that does not fit
// its input's rank, a label of two sizes, an output label in no input or repeated.
Result<EinsumPlan> PlanEinsum(const Node& node, const std::vector<Shape>& shapes);

}  // namespace chipfit
