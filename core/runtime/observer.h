// RunObserver: per-kernel hooks for profilers. With no observer, Run does no instrumentation at all.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/tensor/tensor.h"

namespace chipfit {

// One executed kernel and the ONNX nodes it covers (a fused kernel lists them all).
struct KernelInfo {
  std::string name;                     // the (first) ONNX node's name
  std::string op_type;                  // "Conv", or "Conv+Relu" for fused kernels
  std::vector<std::string> onnx_nodes;  // names of every ONNX node this kernel computes
  std::string device;                   // "ref", "cpu", "opencl:0"
  std::string implementation;           // "reference", "onednn:jit:avx2" …
  // What the device library says runs it, with the instruction set: oneDNN's implementation name
  // ("brg:avx512_core_amx_bf16", "jit:uni"); empty where the kernel's code is chipfit's own or the
  // library does not say.
  std::string isa{};
  std::string fallback_reason{};       // non-empty when the target's device refused the node
  std::vector<std::string> outputs{};  // value names of the kernel's outputs ("" when omitted)
  std::string precision = "fp32";      // the precision it computes in
  std::string precision_reason{};      // why it runs in another precision than the target's
  // Nodes inside an If/Loop/Scan body: the index of the control-flow kernel whose body runs it (its
  // name is then the path "If_25/then_branch/LSTM_719"); -1 for the main graph's kernels.
  int parent = -1;
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void KernelBegin(size_t /*index*/, const KernelInfo& /*kernel*/) {}
  // `elapsed_ms`: the device timer's time for this kernel (steady_clock on the reference path).
  virtual void KernelEnd(size_t /*index*/, const KernelInfo& /*kernel*/, double /*elapsed_ms*/) {}
  // Return true to receive the kernel's outputs through KernelOutputs (accuracy drift).
  virtual bool WantsOutputs(size_t /*index*/) { return false; }
  virtual void KernelOutputs(size_t /*index*/, const KernelInfo& /*kernel*/,
                             const std::vector<const Tensor*>& /*outputs*/) {}
};

}  // namespace chipfit
