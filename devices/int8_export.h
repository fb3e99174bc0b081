// What a QDQ export needs to know from chipfit's own cpu:int8 compile: the nodes that ran in int8 and the
// rank of every value as it ran. Shared by `chipfit quantize` and the GUI's Model › Export int8 model.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <stop_token>
#include <string>

#include "core/runtime/compiled_model.h"

namespace chipfit {

// The Conv/MatMul/Gemm nodes that ran in int8 in `model` (a fused kernel lists its nodes).
std::set<std::string> Int8WeightedNodes(const CompiledModel& model, const Graph& graph);

// Runs `model` once on `sample` and returns the rank of every kernel output, by value name: where
// libonnx's shape inference stops, they tell the opset upgrade what an axis means (QdqOptions::ranks).
Result<std::map<std::string, int64_t>> KernelOutputRanks(CompiledModel& model,
                                                         const std::map<std::string, Tensor>& sample,
                                                         std::stop_token stop = {});

}  // namespace chipfit
