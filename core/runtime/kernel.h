// The op contract: every op has a shape/type function (InferContext) and kernels (KernelContext).
// Reference kernels are plain functions listed in core/reference/reference_kernels.cpp.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/runtime/device_context.h"
#include "core/runtime/layout.h"
#include "core/runtime/target.h"
#include "core/status.h"
#include "core/tensor/quant_params.h"
#include "core/tensor/tensor.h"

namespace chipfit {

// What shape inference knows about one input: its type and shape, and its contents when they are
// known at compile time (initializers, folded constants) or at run time (always).
struct ValueInfo {
  DType dtype = DType::kUndefined;
  Shape shape;
  const Tensor* value = nullptr;
  Layout layout = Layout::kPlain;  // at placement: the order the producer writes
};

// ValueInfos describing tensors whose contents are known (run time, constant folding): shapes,
// dtypes and values for InferContext. Absent inputs (nullptr) stay absent.
class TensorInfos {
 public:
  explicit TensorInfos(const std::vector<const Tensor*>& tensors) : infos_(tensors.size()) {
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (tensors[i] == nullptr) {
        pointers_.push_back(nullptr);
        continue;
      }
      infos_[i] = {tensors[i]->dtype(), tensors[i]->shape(), tensors[i]};
      pointers_.push_back(&infos_[i]);
    }
  }
  TensorInfos(const TensorInfos&) = delete;
  TensorInfos& operator=(const TensorInfos&) = delete;
  const std::vector<const ValueInfo*>& pointers() const { return pointers_; }

 private:
  std::vector<ValueInfo> infos_;
  std::vector<const ValueInfo*> pointers_;
};

class InferContext {
 public:
  InferContext(const Node& node, int64_t opset, std::vector<const ValueInfo*> inputs)
      : node_(node), opset_(opset), inputs_(std::move(inputs)), outputs_(node.outputs.size()) {}

  const Node& node() const { return node_; }
  int64_t opset() const { return opset_; }
  size_t num_inputs() const { return inputs_.size(); }
  // nullptr when the input is omitted (optional) or past the end.
  const ValueInfo* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  size_t num_outputs() const { return outputs_.size(); }

  // The contents of input i, needed to compute output shapes (Reshape's shape, Slice's starts …).
  // Returns nullptr and marks the node data-dependent when the contents are not known yet; the
  // shape function must then return ValueNeeded().
  const Tensor* RequireValue(size_t i) {
    const ValueInfo* in = input(i);
    if (in != nullptr && in->value != nullptr) return in->value;
    value_missing_ = true;
    return nullptr;
  }
  Status ValueNeeded() const {
    return Unsupported(node_.Describe() + ": output shape depends on input values not known before running");
  }
  bool value_missing() const { return value_missing_; }

  void SetOutput(size_t i, DType dtype, Shape shape) {
    if (i < outputs_.size()) outputs_[i] = {dtype, std::move(shape), nullptr};
  }
  const std::vector<ValueInfo>& outputs() const { return outputs_; }

  // InvalidArgument naming the node: "node 'x' (Op): message".
  Status Error(const std::string& message) const { return InvalidArgument(node_.Describe() + ": " + message); }

 private:
  const Node& node_;
  int64_t opset_;
  std::vector<const ValueInfo*> inputs_;
  std::vector<ValueInfo> outputs_;
  bool value_missing_ = false;
};

class KernelContext;
// Runs a subgraph (If/Loop/Scan bodies) with the given inputs; outer-scope values stay visible.
using SubgraphRunner =
    std::function<Result<std::vector<Tensor>>(const Graph& graph, const std::vector<Tensor>& inputs)>;

class KernelContext {
 public:
  KernelContext(const Node& node, int64_t opset, std::vector<const Tensor*> inputs, std::vector<Tensor*> outputs,
                SubgraphRunner subgraphs = {})
      : node_(node),
        opset_(opset),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)),
        subgraphs_(std::move(subgraphs)) {}

  const Node& node() const { return node_; }
  int64_t opset() const { return opset_; }
  size_t num_inputs() const { return inputs_.size(); }
  const Tensor* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  size_t num_outputs() const { return outputs_.size(); }
  // Allocated by the executor with the dtype and shape the shape function gave; nullptr when omitted.
  Tensor* output(size_t i) { return i < outputs_.size() ? outputs_[i] : nullptr; }

  Result<std::vector<Tensor>> RunSubgraph(const Graph& graph, const std::vector<Tensor>& inputs) const {
    if (!subgraphs_) return Internal(node_.Describe() + ": subgraphs cannot run here");
    return subgraphs_(graph, inputs);
  }
  Status Error(const std::string& message) const { return InvalidArgument(node_.Describe() + ": " + message); }

  // Kernels whose tensors live in device memory (IKernel::InputOnDevice): input i's and output
  // i's device buffers; ctx.input(i)/output(i) then carry dtype and shape without host data.
  void SetDeviceBuffers(std::vector<DeviceBuffer> inputs, std::vector<DeviceBuffer> outputs) {
    device_inputs_ = std::move(inputs);
    device_outputs_ = std::move(outputs);
  }
  DeviceBuffer device_input(size_t i) const { return i < device_inputs_.size() ? device_inputs_[i] : DeviceBuffer{}; }
  DeviceBuffer device_output(size_t i) const {
    return i < device_outputs_.size() ? device_outputs_[i] : DeviceBuffer{};
  }

 private:
  const Node& node_;
  int64_t opset_;
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor*> outputs_;
  SubgraphRunner subgraphs_;
  std::vector<DeviceBuffer> device_inputs_;
  std::vector<DeviceBuffer> device_outputs_;
};

// What a kernel chosen per run (RunTimeShapedKernel) used the last time it ran: the step's
// KernelInfo shows it instead of what placement knew at compile time.
struct RunTimeChoice {
  std::string device;           // "cpu", or "ref" when every device implementation refused
  std::string implementation;   // "onednn:matmul", or "reference"
  std::string precision;        // "fp32" …
  std::string fallback_reason;  // why the reference ran (empty on the device)
};

// A device kernel bound to one node: it may hold primitives, reordered weights, compiled programs.
class IKernel {
 public:
  IKernel() = default;
  IKernel(const IKernel&) = delete;
  IKernel& operator=(const IKernel&) = delete;
  virtual ~IKernel() = default;
  virtual Status Run(KernelContext& ctx) = 0;
  // The order Run expects input i in; the executor reorders when the producer wrote another.
  virtual Layout InputLayout(size_t /*input*/) const { return Layout::kPlain; }
  // The order Run writes output i in.
  virtual Layout OutputLayout(size_t /*output*/) const { return Layout::kPlain; }
  // Whether Run reads input i from / writes output i to device memory (KernelContext's device
  // buffers); the executor inserts the copies. Inputs a kernel consumed at Init (Reshape's shape,
  // Slice's starts) stay on the host.
  virtual bool InputOnDevice(size_t /*input*/) const { return false; }
  virtual bool OutputOnDevice(size_t /*output*/) const { return false; }
  // Whether Run gives its outputs their dtype and shape itself (an output whose shape depends on the
  // input values: NonMaxSuppression). On a step whose shapes are only known at run time, the executor
  // then hands it empty Tensors instead of running the op's shape function first (which, for such an
  // op, computes the whole result once more). Host outputs only.
  virtual bool AllocatesOutputs() const { return false; }
  // Kernels built at run time for the shapes met: what the last Run used (nullptr: fixed at compile time).
  virtual const RunTimeChoice* LastChoice() const { return nullptr; }
  // The library implementation and instruction set of its main computation (KernelInfo::isa); empty
  // when the kernel does not know one.
  virtual std::string Isa() const { return {}; }
};

// What an implementation's Init sees: the node, its inputs (dtype, shape with dims < 0 when known
// only at run time, constant contents, the order the producer writes), and the precision asked for.
struct KernelInit {
  const Node& node;
  const std::vector<const ValueInfo*>& inputs;
  int64_t opset = 0;
  Precision precision = Precision::kFp32;
  // int8: calibrated ranges of activations by value name (nullptr when there are none).
  const QuantTable* quant = nullptr;
  // Devices with their own memory: the context kernels build programs and launch work on.
  DeviceContext* device = nullptr;
  // The outputs' dtypes and shapes when shape inference knew them at compile time (else nullptr).
  const std::vector<ValueInfo>* outputs = nullptr;
};

// Init of one implementation: a kernel for this node, or Unsupported with the reason a user reads
// ("group count 3 unsupported").
using KernelFactory = Result<std::unique_ptr<IKernel>> (*)(const KernelInit& init);

struct KernelImpl {
  const char* name;  // "onednn:conv", shown as the kernel's implementation
  KernelFactory create;
};

using ShapeFn = Status (*)(InferContext&);
using RefKernelFn = Status (*)(KernelContext&);

// One row of the reference op table. Semantics that changed between opsets branch on ctx.opset().
struct OpEntry {
  const char* op_type;
  ShapeFn infer;
  RefKernelFn run;
  const char* domain = "";
  // Ops whose output shapes only the kernel can know (If runs a branch): the executor skips the
  // shape function and passes empty output Tensors that the kernel assigns.
  bool self_allocating = false;
};

}  // namespace chipfit
