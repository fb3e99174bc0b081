// Graph passes that keep semantics: dead-node elimination and BatchNormalization folding.
// (Constant folding runs inside Compile, where every value's shape is known.)
#pragma once

#include "core/graph/graph.h"
#include "core/status.h"

namespace chipfit {

// Removes nodes none of whose outputs reach a graph output. Returns how many were removed.
int EliminateDeadNodes(Graph& graph);

// Folds BatchNormalization (inference form, constant statistics) into the Conv or Gemm that feeds
// it when that node's output has no other reader and its weights are initializers:
//   W' = W · s,  b' = (b − mean) · s + beta,  s = gamma / sqrt(var + eps)   (per output channel).
// The merged node keeps the Conv/Gemm name and lists both ONNX nodes in `covers`.
Result<int> FoldBatchNorm(Graph& graph);

}  // namespace chipfit
