#include "core/runtime/run_time_kernel.h"

#include <algorithm>
#include <utility>

#include "core/tensor/dtype.h"

namespace chipfit {
namespace {

// The part of input i that decides which kernel fits: dtype, shape, and small integer contents.
void AppendKey(std::string& key, const Tensor* t, bool with_contents) {
  if (t == nullptr) {
    key += "-|";
    return;
  }
  key += std::string(DTypeName(t->dtype())) + ShapeToString(t->shape());
  if (with_contents) {
    key += '=';
    for (int64_t i = 0; i < t->numel(); ++i) {
      key += std::to_string(t->dtype() == DType::kI64 ? t->data<int64_t>()[i] : t->data<int32_t>()[i]) + ',';
    }
  }
  key += '|';
}

}  // namespace

bool SmallIntegerInput(const Tensor& t) {
  return (t.dtype() == DType::kI64 || t.dtype() == DType::kI32) && t.numel() <= 16 && t.defined();
}

RunTimeShapedKernel::RunTimeShapedKernel(const Node& node, int64_t opset, std::vector<Candidate> impls,
                                         std::vector<const Tensor*> constants, const QuantTable* quant,
                                         RefKernelFn reference, ShapeFn infer, std::string device_id)
    : node_(node),
      opset_(opset),
      impls_(std::move(impls)),
      constants_(std::move(constants)),
      quant_(quant),
      reference_(reference),
      infer_(infer),
      device_id_(std::move(device_id)) {}

RunTimeShapedKernel::Entry RunTimeShapedKernel::Build(const std::vector<ValueInfo>& infos,
                                                      const std::vector<ValueInfo>& outputs) const {
  std::vector<const ValueInfo*> pointers;
  std::string shapes;
  for (const ValueInfo& info : infos) {
    const bool present = info.dtype != DType::kUndefined;
    pointers.push_back(present ? &info : nullptr);
    if (present) shapes += (shapes.empty() ? "" : ", ") + ShapeToString(info.shape);
  }
  std::string refusals;
  for (const Candidate& candidate : impls_) {
    auto created =
        candidate.impl.create(KernelInit{node_, pointers, opset_, candidate.precision, quant_, nullptr, &outputs});
    if (!created.ok()) {
      refusals += (refusals.empty() ? "" : "; ") + std::string(candidate.impl.name) + ": " + created.status().message();
      continue;
    }
    std::unique_ptr<IKernel> kernel = std::move(created).value();
    // The producers write plain order (this kernel said so at compile time), and its outputs are
    // read as plain.
    bool plain = true;
    for (size_t k = 0; k < infos.size(); ++k) {
      plain &= kernel->InputLayout(k) == Layout::kPlain && !kernel->InputOnDevice(k);
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      plain &= kernel->OutputLayout(k) == Layout::kPlain && !kernel->OutputOnDevice(k);
    }
    if (!plain) {
      refusals += (refusals.empty() ? "" : "; ") + std::string(candidate.impl.name) + ": wants a blocked layout";
      continue;
    }
    return Entry{std::move(kernel),
                 RunTimeChoice{device_id_, candidate.impl.name, std::string(PrecisionName(candidate.precision)), ""}};
  }
  if (refusals.empty()) refusals = "no " + device_id_ + " kernel for " + node_.op_type;
  return Entry{nullptr, RunTimeChoice{"ref", "reference", "fp32",
                                      "for the shapes met at run time (" + shapes + "): " + refusals}};
}

Status RunTimeShapedKernel::Run(KernelContext& ctx) {
  // The outputs as the op's shape function gives them for these inputs.
  std::vector<ValueInfo> outputs;
  auto infer_outputs = [&]() -> Status {
    std::vector<const Tensor*> inputs;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(ctx.input(i));
    const TensorInfos infos(inputs);
    InferContext infer(node_, opset_, infos.pointers());
    RETURN_IF_ERROR(infer_(infer));
    outputs = infer.outputs();
    return Status();
  };
  // A device kernel writes its outputs whole (at compile-time shapes it writes arena slots holding the last
  // run's values), so its outputs skip the zeroing pass (a 15 MB int64 Expand of Faster R-CNN's RoI pooling
  // spent as long zeroing as writing); the reference kernels get zeroed outputs as everywhere.
  auto allocate = [&](bool device_kernel) {
    for (size_t k = 0; k < ctx.num_outputs() && k < outputs.size(); ++k) {
      if (Tensor* out = ctx.output(k); out != nullptr) {
        *out = device_kernel ? Tensor::Uninitialized(outputs[k].dtype, outputs[k].shape)
                             : Tensor(outputs[k].dtype, outputs[k].shape);
      }
    }
  };
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input(i);
    if (t == nullptr || t->form() == ValueForm::kTensor) continue;
    static const RunTimeChoice kHost{"ref", "reference", "fp32",
                                     "a sequence or optional input (these stay on the host, on the reference kernels)"};
    last_ = &kHost;
    if (reference_ == nullptr) return Unsupported(kHost.fallback_reason + " (fallback disabled)");
    RETURN_IF_ERROR(infer_outputs());
    allocate(false);
    return reference_(ctx);
  }
  // What the kernel's Init would have seen had these shapes been known at compile time.
  std::string key;
  std::vector<ValueInfo> infos(ctx.num_inputs());
  std::vector<Tensor> contents;  // small integer inputs, owned by the cached kernel's entry
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input(i);
    const bool constant = i < constants_.size() && constants_[i] != nullptr;
    const bool small = t != nullptr && !constant && SmallIntegerInput(*t);
    AppendKey(key, t, small);
    if (t == nullptr) continue;
    infos[i] = {t->dtype(), t->shape(), constant ? constants_[i] : nullptr};
    if (small) contents.push_back(t->Clone());
  }
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    // Pointers into `contents` stay valid when the vector moves into the entry (its buffer moves).
    size_t next = 0;
    for (size_t i = 0; i < infos.size(); ++i) {
      const Tensor* t = ctx.input(i);
      const bool constant = i < constants_.size() && constants_[i] != nullptr;
      if (t != nullptr && !constant && SmallIntegerInput(*t)) infos[i].value = &contents[next++];
    }
    RETURN_IF_ERROR(infer_outputs());
    Entry entry = Build(infos, outputs);
    entry.contents = std::move(contents);
    if (cache_.size() >= kMaxCached) {
      cache_.erase(order_.front());
      order_.erase(order_.begin());
    }
    order_.push_back(key);
    it = cache_.emplace(key, std::move(entry)).first;
  }
  last_ = &it->second.choice;
  IKernel* kernel = it->second.kernel.get();
  if (kernel != nullptr && kernel->AllocatesOutputs()) return kernel->Run(ctx);
  if (outputs.empty()) RETURN_IF_ERROR(infer_outputs());
  allocate(kernel != nullptr);
  if (kernel != nullptr) return kernel->Run(ctx);
  if (reference_ == nullptr) {
    return Unsupported(node_.Describe() + " cannot run on " + device_id_ +
                       " (fallback disabled): " + it->second.choice.fallback_reason);
  }
  return reference_(ctx);
}

}  // namespace chipfit
