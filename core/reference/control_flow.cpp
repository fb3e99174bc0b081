// Reference control flow: If runs the branch its condition selects as a subgraph. Loop and Scan are
// not implemented; Compile reports them as unsupported (never a wrong answer).
#include "core/reference/ops.h"

namespace chipfit {
namespace {

Status InferIf(InferContext& ctx) {
  // Output shapes come from whichever branch runs; the executor lets the kernel allocate them.
  return ctx.ValueNeeded();
}

Status RunIf(KernelContext& ctx) {
  const Tensor* cond = ctx.input(0);
  if (cond == nullptr || cond->numel() != 1) return ctx.Error("condition must be a single element");
  const bool take_then = cond->GetAsDouble(0) != 0.0;
  const char* branch_name = take_then ? "then_branch" : "else_branch";
  const Graph* branch = ctx.node().GetGraph(branch_name);
  if (branch == nullptr) return ctx.Error(std::string("missing ") + branch_name);
  ASSIGN_OR_RETURN(std::vector<Tensor> outputs, ctx.RunSubgraph(*branch, {}));
  if (outputs.size() != ctx.num_outputs()) {
    return ctx.Error(std::string(branch_name) + " returns " + std::to_string(outputs.size()) + " values, If has " +
                     std::to_string(ctx.num_outputs()) + " outputs");
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    // Copies: a branch may return an outer-scope value or a constant that must not be aliased.
    if (Tensor* out = ctx.output(i)) *out = outputs[i].Clone();
  }
  return Status::Ok();
}

}  // namespace

std::vector<OpEntry> ControlFlowOps() {
  return {
      {"If", InferIf, RunIf, "", /*self_allocating=*/true},
  };
}

}  // namespace chipfit
