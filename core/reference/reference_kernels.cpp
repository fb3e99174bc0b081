// The one explicit list of reference op families (no static registration: see STYLE.md).
#include "core/reference/reference_kernels.h"

#include <map>
#include <utility>

#include "core/graph/passes.h"
#include "core/reference/ops.h"

namespace chipfit {

const std::vector<OpEntry>& ReferenceOps() {
  static const std::vector<OpEntry> table = [] {
    std::vector<OpEntry> all;
    for (auto family :
         {ElementwiseOps, ConvOps,      MatMulOps,           PoolOps,        NormalizationOps, ReduceOps,
          TensorOps,      ResizeOps,    ControlFlowOps,      LossOps,        LinalgOps,        SelectionOps,
          DetectionOps,   SignalOps,    RecurrentOps,        QuantizeOps,    RandomOps,        TextOps,
          SequenceOps,    ContribNnOps, ContribAttentionOps, ContribQuantOps}) {
      for (OpEntry& entry : family()) all.push_back(entry);
    }
    all.push_back({"FusedConv", InferFusedConv, RunFusedConv, kChipfitDomain});
    all.push_back({"FusedMatMul", InferFusedMatMul, RunFusedMatMul, kChipfitDomain});
    all.push_back({"ChannelShuffle", InferChannelShuffle, RunChannelShuffle, kChipfitDomain});
    return all;
  }();
  return table;
}

const OpEntry* FindReferenceOp(const std::string& op_type, const std::string& domain) {
  static const std::map<std::pair<std::string, std::string>, const OpEntry*> index = [] {
    std::map<std::pair<std::string, std::string>, const OpEntry*> m;
    for (const OpEntry& entry : ReferenceOps()) m.emplace(std::make_pair(entry.op_type, entry.domain), &entry);
    return m;
  }();
  const std::string normalized = domain == "ai.onnx" ? "" : domain;
  auto it = index.find({op_type, normalized});
  return it == index.end() ? nullptr : it->second;
}

}  // namespace chipfit
