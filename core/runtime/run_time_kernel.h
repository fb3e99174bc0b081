// Device kernels for nodes whose input shapes are known only when the model runs (after NonZero,
// TopK, NonMaxSuppression, a Reshape to computed dims): the device's implementations are tried for
// the shapes each run meets, and the kernel made is kept for the next run with those shapes.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/runtime/kernel.h"

namespace chipfit {

class RunTimeShapedKernel final : public IKernel {
 public:
  // `impls`: the device's implementations in the order placement tries them, each with the
  // precision it computes in; `constants`: per input, its compile-time contents (nullptr when
  // computed at run time); `reference`: the op's reference kernel, for shapes every device
  // implementation refuses (nullptr: such shapes are an error, as with fallback disabled).
  struct Candidate {
    KernelImpl impl;
    Precision precision;
  };
  RunTimeShapedKernel(const Node& node, int64_t opset, std::vector<Candidate> impls,
                      std::vector<const Tensor*> constants, const QuantTable* quant, RefKernelFn reference,
                      ShapeFn infer, std::string device_id);

  Status Run(KernelContext& ctx) override;
  const RunTimeChoice* LastChoice() const override { return last_; }
  // The outputs are made here: by the op's shape function, or by a kernel that sizes its own
  // (NonMaxSuppression), which then spares the shape function's second computation of the result.
  bool AllocatesOutputs() const override { return true; }

  // Kernels kept, one per distinct set of input shapes (and small integer contents); past this many
  // the oldest is dropped.
  static constexpr size_t kMaxCached = 32;

 private:
  struct Entry {
    std::unique_ptr<IKernel> kernel;  // null: every implementation refused these shapes
    RunTimeChoice choice;
    std::vector<Tensor> contents{};  // the small integer inputs its Init read
  };
  Entry Build(const std::vector<ValueInfo>& infos, const std::vector<ValueInfo>& outputs) const;

  const Node& node_;
  int64_t opset_;
  std::vector<Candidate> impls_;
  std::vector<const Tensor*> constants_;
  const QuantTable* quant_;
  RefKernelFn reference_;
  ShapeFn infer_;
  std::string device_id_;
  std::map<std::string, Entry> cache_;
  std::vector<std::string> order_;  // cache keys, oldest first
  const RunTimeChoice* last_ = nullptr;
};

// Whether input i's contents take part in choosing a kernel at run time: integer inputs of a few
// elements (shapes, axes, starts, k), which kernels read at Init as they would a constant.
bool SmallIntegerInput(const Tensor& t);

}  // namespace chipfit
