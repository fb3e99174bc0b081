// Single-node execution on the reference table.
#include "core/runtime/node_runner.h"

#include "core/reference/reference_kernels.h"
#include "core/runtime/kernel.h"

namespace chipfit {

Status CheckDenseInputs(const Node& node, bool self_allocating, const std::vector<const Tensor*>& inputs) {
  if (self_allocating || node.op_type == "Identity") return Status::Ok();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] != nullptr && !inputs[i]->is_dense()) {
      return InvalidArgument(node.Describe() + ": input '" + (i < node.inputs.size() ? node.inputs[i] : "") + "' is " +
                             DescribeTensor(*inputs[i]) + "; " + node.op_type + " takes tensors");
    }
  }
  return Status::Ok();
}

Result<std::vector<Tensor>> RunNodeOnReference(const Node& node, int64_t opset, const std::vector<Tensor>& inputs) {
  const OpEntry* op = FindReferenceOp(node.op_type, node.domain);
  if (op == nullptr) return Unsupported(node.Describe() + ": no reference kernel for op " + node.op_type);
  std::vector<const Tensor*> tensor_ptrs;
  for (const Tensor& t : inputs) tensor_ptrs.push_back(t.defined() ? &t : nullptr);
  RETURN_IF_ERROR(CheckDenseInputs(node, op->self_allocating, tensor_ptrs));
  const TensorInfos infos(tensor_ptrs);
  InferContext infer(node, opset, infos.pointers());
  RETURN_IF_ERROR(op->infer(infer));
  std::vector<Tensor> outputs(node.outputs.size());
  std::vector<Tensor*> output_ptrs;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const ValueInfo& out = infer.outputs()[i];
    if (node.outputs[i].empty() || out.dtype == DType::kUndefined) {
      output_ptrs.push_back(nullptr);
      continue;
    }
    for (int64_t d : out.shape) {
      if (d < 0) return Internal(node.Describe() + ": shape function left output " + std::to_string(i) + " unknown");
    }
    outputs[i] = Tensor(out.dtype, out.shape);
    output_ptrs.push_back(&outputs[i]);
  }
  KernelContext ctx(node, opset, tensor_ptrs, output_ptrs);
  RETURN_IF_ERROR(op->run(ctx));
  return outputs;
}

}  // namespace chipfit
