// The int8 nodes and value ranks of a compiled cpu:int8 model, for ExportQdq.
#include "devices/int8_export.h"

#include <vector>

#include "core/runtime/observer.h"

namespace chipfit {
namespace {

class RankObserver final : public RunObserver {
 public:
  bool WantsOutputs(size_t) override { return true; }
  void KernelOutputs(size_t, const KernelInfo& kernel, const std::vector<const Tensor*>& outputs) override {
    for (size_t k = 0; k < outputs.size() && k < kernel.outputs.size(); ++k) {
      if (outputs[k] != nullptr && !kernel.outputs[k].empty()) ranks[kernel.outputs[k]] = outputs[k]->rank();
    }
  }
  std::map<std::string, int64_t> ranks;
};

}  // namespace

std::set<std::string> Int8WeightedNodes(const CompiledModel& model, const Graph& graph) {
  std::set<std::string> nodes;
  for (const KernelInfo& k : model.kernels()) {
    if (k.precision != "int8") continue;
    for (const std::string& name : k.onnx_nodes) {
      const Node* node = graph.FindNode(name);
      if (node != nullptr && (node->op_type == "Conv" || node->op_type == "MatMul" || node->op_type == "Gemm")) {
        nodes.insert(name);
      }
    }
  }
  return nodes;
}

Result<std::map<std::string, int64_t>> KernelOutputRanks(CompiledModel& model,
                                                         const std::map<std::string, Tensor>& sample,
                                                         std::stop_token stop) {
  RankObserver observer;
  RETURN_IF_ERROR(model.Run(sample, &observer, std::move(stop)).status());
  return std::move(observer.ranks);
}

}  // namespace chipfit
