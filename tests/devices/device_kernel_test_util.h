// Runs one device kernel the way the executor does (inputs uploaded to device buffers, outputs in
// device buffers) with guard bytes around every output, and compares it with the reference kernel.
// Device-neutral: the OpenCL and CUDA kernel tests share it through their own context helpers.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/reference/reference_kernels.h"
#include "core/runtime/kernel.h"
#include "core/runtime/node_runner.h"
#include "core/tensor/metrics.h"
#include "core/tensor/random.h"
#include "tests/devices/kernel_test_metrics.h"

namespace chipfit::testing {

struct DeviceCase {
  Node node;
  int64_t opset = 17;
  std::vector<Tensor> inputs{};  // in ONNX order; undefined Tensor = omitted
  std::vector<bool> constant{};  // inputs known at compile time (weights, shapes); default none
  Precision precision = Precision::kFp32;
};

// The kernel's outputs downloaded to the host (f32 for float outputs, whatever the storage).
// Refusals come back as the factory's Status; a write outside an output's buffer fails.
inline Result<std::vector<Tensor>> RunDeviceKernel(KernelFactory factory, const DeviceCase& c,
                                                   const std::shared_ptr<DeviceContext>& context) {
  std::vector<ValueInfo> infos(c.inputs.size());
  std::vector<const ValueInfo*> ptrs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i].defined()) {
      ptrs.push_back(nullptr);
      continue;
    }
    const bool constant = i < c.constant.size() && c.constant[i];
    infos[i] = {c.inputs[i].dtype(), c.inputs[i].shape(), constant ? &c.inputs[i] : nullptr};
    ptrs.push_back(&infos[i]);
  }
  const OpEntry* op = FindReferenceOp(c.node.op_type, c.node.domain);
  if (op == nullptr) return Internal("no reference op " + c.node.op_type);
  InferContext infer(c.node, c.opset, ptrs);
  RETURN_IF_ERROR(op->infer(infer));
  const std::vector<ValueInfo> out_infos = infer.outputs();
  KernelInit init{c.node, ptrs, c.opset, c.precision, nullptr, context.get(), &out_infos};
  ASSIGN_OR_RETURN(auto kernel, factory(init));

  const size_t guard = context->Alignment();
  std::vector<std::shared_ptr<DeviceAllocation>> keep;
  // A buffer of `bytes` with `guard` bytes of sentinel on both sides.
  auto guarded = [&](size_t bytes, DeviceBuffer& inner) -> Status {
    const size_t padded = (bytes + guard - 1) / guard * guard;
    ASSIGN_OR_RETURN(auto alloc, context->Allocate(padded + 2 * guard));
    ASSIGN_OR_RETURN(DeviceBuffer whole, alloc->View(0, padded + 2 * guard));
    Tensor fill(DType::kU8, {static_cast<int64_t>(padded + 2 * guard)});
    std::memset(fill.raw_data(), 0xA5, fill.nbytes());
    RETURN_IF_ERROR(context->Upload(fill, whole));
    if (bytes > 0) {
      ASSIGN_OR_RETURN(inner, alloc->View(guard, bytes));
    }
    keep.push_back(std::move(alloc));
    return Status();
  };
  std::vector<Tensor> host_in(c.inputs.size());
  std::vector<const Tensor*> in_ptrs;
  std::vector<DeviceBuffer> dev_in(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i].defined()) {
      in_ptrs.push_back(nullptr);
      continue;
    }
    if (!kernel->InputOnDevice(i)) {
      in_ptrs.push_back(&c.inputs[i]);
      continue;
    }
    const DType storage = context->StorageType(c.inputs[i].dtype());
    host_in[i] = Tensor::View(storage, c.inputs[i].shape(), nullptr);
    const size_t bytes = static_cast<size_t>(c.inputs[i].numel()) * DTypeSize(storage);
    RETURN_IF_ERROR(guarded(bytes, dev_in[i]));
    if (bytes > 0) RETURN_IF_ERROR(context->Upload(c.inputs[i], dev_in[i]));
    in_ptrs.push_back(&host_in[i]);
  }
  std::vector<Tensor> outs;
  std::vector<DeviceBuffer> dev_out(out_infos.size());
  std::vector<size_t> out_bytes;
  for (size_t k = 0; k < out_infos.size(); ++k) {
    if (!kernel->OutputOnDevice(k)) return Internal("output " + std::to_string(k) + " is not on the device");
    const DType storage = context->StorageType(out_infos[k].dtype);
    outs.push_back(Tensor::View(storage, out_infos[k].shape, nullptr));
    out_bytes.push_back(static_cast<size_t>(NumElements(out_infos[k].shape)) * DTypeSize(storage));
    RETURN_IF_ERROR(guarded(out_bytes.back(), dev_out[k]));
  }
  std::vector<Tensor*> out_ptrs;
  for (Tensor& t : outs) out_ptrs.push_back(&t);
  KernelContext ctx(c.node, c.opset, in_ptrs, out_ptrs);
  ctx.SetDeviceBuffers(dev_in, dev_out);
  RETURN_IF_ERROR(kernel->Run(ctx));
  RETURN_IF_ERROR(context->Finish());

  std::vector<Tensor> results;
  for (size_t k = 0; k < out_infos.size(); ++k) {
    // The whole guarded allocation back as bytes: sentinels must be intact on both sides.
    std::shared_ptr<DeviceAllocation>& alloc = keep[keep.size() - out_infos.size() + k];
    ASSIGN_OR_RETURN(DeviceBuffer whole, alloc->View(0, alloc->bytes()));
    Tensor raw(DType::kU8, {static_cast<int64_t>(alloc->bytes())});
    RETURN_IF_ERROR(context->Download(whole, raw));
    const auto* bytes = raw.data<uint8_t>();
    for (size_t b = 0; b < guard; ++b) {
      if (bytes[b] != 0xA5) return Internal("output " + std::to_string(k) + ": write before the start");
    }
    for (size_t b = guard + out_bytes[k]; b < alloc->bytes(); ++b) {
      if (bytes[b] != 0xA5) return Internal("output " + std::to_string(k) + ": write past the end");
    }
    Tensor host(out_infos[k].dtype, out_infos[k].shape);
    if (out_bytes[k] > 0) RETURN_IF_ERROR(context->Download(dev_out[k], host));
    results.push_back(std::move(host));
  }
  return results;
}

inline std::vector<Tensor> RunReference(const DeviceCase& c) {
  auto out = RunNodeOnReference(c.node, c.opset, c.inputs);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? std::move(out).value() : std::vector<Tensor>{};
}

// Normalised mean squared error Σ(a−b)² / Σb² (the drift profiler's NMSE).
inline double Nmse(const Tensor& a, const Tensor& b) { return std::pow(10.0, -SqnrDb(a, b) / 10.0); }

// Checks one case on fp32 (max rel error ≤ rtol) and on each reduced precision of `reduced` (fp16 or
// bf16 storage: NMSE ≤ nmse16) with the contexts `context_for` gives.
template <typename ContextFor>
void ExpectMatchesReferenceOn(KernelFactory factory, DeviceCase c, const ContextFor& context_for,
                              std::initializer_list<Precision> precisions, double rtol, double nmse16) {
  const std::vector<Tensor> want = RunReference(c);
  for (Precision p : precisions) {
    c.precision = p;
    auto context = context_for(p);
    ASSERT_TRUE(context.ok()) << context.status().ToString();
    auto got = RunDeviceKernel(factory, c, *context);
    ASSERT_TRUE(got.ok()) << c.node.Describe() << " " << PrecisionName(p) << ": " << got.status().ToString();
    ASSERT_EQ(got->size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      ASSERT_EQ((*got)[k].shape(), want[k].shape()) << c.node.Describe() << " output " << k;
      const bool is_float = want[k].dtype() == DType::kF32;
      if (p == Precision::kFp32 || !is_float) {
        EXPECT_LE(MaxRelError((*got)[k], want[k]), is_float ? rtol : 0.0)
            << c.node.Describe() << " " << PrecisionName(p) << " output " << k;
      } else {
        EXPECT_LE(Nmse((*got)[k], want[k]), nmse16) << c.node.Describe() << " " << PrecisionName(p) << " output " << k;
      }
    }
  }
}

}  // namespace chipfit::testing
