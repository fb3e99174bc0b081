// Runs one CPU kernel the way the executor does (its requested input orders, arena-like output
// buffers) with sentinel bytes around every output, and compares it with the reference kernel.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/reference/reference_kernels.h"
#include "core/runtime/kernel.h"
#include "core/runtime/layout.h"
#include "core/runtime/node_runner.h"
#include "core/tensor/metrics.h"
#include "core/tensor/random.h"
#include "tests/devices/kernel_test_metrics.h"

namespace chipfit::testing {

struct KernelCase {
  Node node;
  int64_t opset = 17;
  std::vector<Tensor> inputs{};   // in ONNX order; undefined Tensor = omitted
  std::vector<bool> constant{};   // inputs known at compile time (weights, bias); default none
  std::vector<Layout> layouts{};  // the order each input's producer writes; default plain
  Precision precision = Precision::kFp32;
  const QuantTable* quant = nullptr;
};

inline constexpr size_t kGuardBytes = 64;
inline constexpr unsigned char kSentinel = 0xA5;

// The kernel's outputs in plain order. Refusals come back as the factory's Status; a write past
// an output's end (or before its start) fails the test.
inline Result<std::vector<Tensor>> RunCpuKernel(KernelFactory factory, const KernelCase& c) {
  std::vector<ValueInfo> infos(c.inputs.size());
  std::vector<const ValueInfo*> ptrs;
  std::vector<Tensor> producer_order(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i].defined()) {
      ptrs.push_back(nullptr);
      continue;
    }
    const bool constant = i < c.constant.size() && c.constant[i];
    const Layout layout = i < c.layouts.size() ? c.layouts[i] : Layout::kPlain;
    producer_order[i] = Tensor(c.inputs[i].dtype(), c.inputs[i].shape());
    RETURN_IF_ERROR(ReorderTensor(c.inputs[i], Layout::kPlain, producer_order[i], layout));
    infos[i] = {c.inputs[i].dtype(), c.inputs[i].shape(), constant ? &c.inputs[i] : nullptr, layout};
    ptrs.push_back(&infos[i]);
  }
  ASSIGN_OR_RETURN(auto kernel, factory(KernelInit{c.node, ptrs, c.opset, c.precision, c.quant}));

  // Output shapes from the op's own shape function, given every input's values, as the executor
  // sizes a node's outputs (at compile time, or when it runs where they depend on run-time values).
  const OpEntry* op = FindReferenceOp(c.node.op_type, c.node.domain);
  if (op == nullptr) return Internal("no reference op " + c.node.op_type);
  std::vector<const Tensor*> given;
  for (const Tensor& t : c.inputs) given.push_back(t.defined() ? &t : nullptr);
  const TensorInfos given_infos(given);
  InferContext infer(c.node, c.opset, given_infos.pointers());
  RETURN_IF_ERROR(op->infer(infer));

  // Inputs in the order the kernel asked for (the executor's reorders).
  std::vector<Tensor> fed(c.inputs.size());
  std::vector<const Tensor*> in_ptrs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i].defined()) {
      in_ptrs.push_back(nullptr);
      continue;
    }
    const Layout from = infos[i].layout;
    const Layout want = kernel->InputLayout(i);
    fed[i] = Tensor(c.inputs[i].dtype(), c.inputs[i].shape());
    RETURN_IF_ERROR(ReorderTensor(producer_order[i], from, fed[i], want));
    in_ptrs.push_back(&fed[i]);
  }
  std::vector<std::vector<unsigned char>> buffers;
  std::vector<Tensor> outs;
  for (const ValueInfo& o : infer.outputs()) {
    const size_t bytes = static_cast<size_t>(NumElements(o.shape)) * DTypeSize(o.dtype);
    buffers.emplace_back(bytes + 2 * kGuardBytes + 64, kSentinel);
  }
  for (size_t k = 0; k < buffers.size(); ++k) {
    // 64-byte aligned start after the guard, as the arena gives.
    auto base = reinterpret_cast<uintptr_t>(buffers[k].data()) + kGuardBytes;
    base = (base + 63) / 64 * 64;
    const ValueInfo& o = infer.outputs()[k];
    outs.push_back(Tensor::View(o.dtype, o.shape, reinterpret_cast<void*>(base)));
  }
  std::vector<Tensor*> out_ptrs;
  for (Tensor& t : outs) out_ptrs.push_back(&t);
  KernelContext ctx(c.node, c.opset, in_ptrs, out_ptrs);
  RETURN_IF_ERROR(kernel->Run(ctx));
  std::vector<Tensor> plain;
  for (size_t k = 0; k < outs.size(); ++k) {
    const auto* start = static_cast<const unsigned char*>(outs[k].raw_data());
    const unsigned char* end = start + outs[k].nbytes();
    for (const unsigned char* p = buffers[k].data(); p < start; ++p) {
      if (*p != kSentinel) return Internal("output " + std::to_string(k) + ": write before the start");
    }
    for (const unsigned char* p = end; p < buffers[k].data() + buffers[k].size(); ++p) {
      if (*p != kSentinel) return Internal("output " + std::to_string(k) + ": write past the end");
    }
    Tensor t(outs[k].dtype(), outs[k].shape());
    RETURN_IF_ERROR(ReorderTensor(outs[k], kernel->OutputLayout(k), t, Layout::kPlain));
    plain.push_back(std::move(t));
  }
  return plain;
}

// A calibration table giving `name` the range of the f32 tensor `x` (widened to include 0), as the
// int8 kernels' tests calibrate on their own input.
inline QuantTable RangeOf(const std::string& name, const Tensor& x) {
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    lo = std::min(lo, x.data<float>()[i]);
    hi = std::max(hi, x.data<float>()[i]);
  }
  return {{name, QuantParams{.min = lo, .max = hi}}};
}

inline std::vector<Tensor> RunReference(const KernelCase& c) {
  auto out = RunNodeOnReference(c.node, c.opset, c.inputs);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? std::move(out).value() : std::vector<Tensor>{};
}

}  // namespace chipfit::testing
