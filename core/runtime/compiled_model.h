// Compile(graph, target) → CompiledModel: placement, constant folding, static shapes, memory plan;
// CompiledModel::Run executes it with optional per-kernel observation and cancellation.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/runtime/cost.h"
#include "core/runtime/device_context.h"
#include "core/runtime/kernel.h"
#include "core/runtime/kernel_table.h"
#include "core/runtime/observer.h"
#include "core/runtime/target.h"
#include "core/status.h"

namespace chipfit {

struct CompileOptions {
  bool fold_constants = true;
  bool eliminate_dead_nodes = true;
  // Fold BatchNormalization into the Conv/Gemm before it. Never on ref: the reference path runs the
  // graph as written, since it is the oracle the devices are compared with.
  bool fold_batchnorm = true;
  // Merge Conv (+ residual Add) + activation into FusedConv when the device has a FusedConv kernel
  // (fusions are the device's to declare). Never on ref, for the same reason.
  bool fuse = true;
  // Device kernels to place nodes on (nullptr: none, every node runs on the reference kernels).
  const KernelTable* kernels = nullptr;
  // int8 targets: calibrated activation ranges by value name (core/quant makes them).
  const QuantTable* quant = nullptr;
  // Nodes that compute in fp32 whatever the target's precision, by ONNX node name, with the reason
  // shown for them ("kept in fp32 by request", a layer the accuracy search reverted …).
  std::map<std::string, std::string> keep_fp32{};
  // Devices with their own memory (OpenCL, CUDA): the context buffers, transfers and device kernels
  // use. The executor then inserts the copies between host and device as steps of their own.
  std::shared_ptr<DeviceContext> device{};
  // Where nodes the target's device refuses run before the reference: the CPU device's kernels
  // (a node no device kernel takes falls back to the CPU). Only for targets of another device kind.
  const KernelTable* fallback_kernels = nullptr;
  // false: a node the target's device refuses is an error naming it and the reasons, instead of a
  // fallback (kernel tests, `--no-fallback`).
  bool allow_fallback = true;
};

// A node the target's device did not take, and why (never a silent fallback).
struct Fallback {
  std::string node;
  std::string op;
  std::string reason;
};

struct CompileStats {
  int graph_nodes = 0;
  int folded_nodes = 0;              // computed at compile time (constants, Shape of static shapes)
  int dead_nodes = 0;                // removed: nothing reads their outputs
  int batchnorms_folded = 0;         // merged into the Conv/Gemm before them
  int constants_promoted = 0;        // Constant nodes turned into initializers
  int fused = 0;                     // FusedConv kernels made from Conv (+ Add) + activation
  int kernels = 0;                   // steps Run executes
  int dynamic_kernels = 0;           // steps whose output shapes are only known while running
  size_t planned_arena_bytes = 0;    // peak of planned intermediate tensors
  size_t planned_total_bytes = 0;    // all planned intermediates without reuse
  size_t constant_bytes = 0;         // initializers and folded constants
  int64_t flops = 0;                 // sum over kernels with shapes known at compile time
  size_t device_arena_bytes = 0;     // devices with own memory: planned intermediates there
  size_t device_constant_bytes = 0;  // constants uploaded to the device once
  int transfers = 0;                 // copy steps between host and device
  int device_kernels = 0;            // kernels that run on the target's device (not a fallback)
};

class CompiledModel {
 public:
  CompiledModel(const CompiledModel&) = delete;
  CompiledModel& operator=(const CompiledModel&) = delete;
  ~CompiledModel();

  // Inputs by graph input name; outputs in graph output order. Checks every input's dtype and
  // shape against the compiled ones. Runs are serialised (one arena per model).
  Result<std::vector<Tensor>> Run(const std::map<std::string, Tensor>& inputs, RunObserver* observer = nullptr,
                                  std::stop_token stop = {});

  const Target& target() const { return target_; }
  const std::vector<KernelInfo>& kernels() const { return kernel_infos_; }
  // Per kernel, from op formulas at the compiled shapes; cost.known is false for run-time shapes.
  const std::vector<KernelCost>& costs() const { return costs_; }
  const std::vector<Fallback>& fallbacks() const { return fallbacks_; }
  const std::vector<ValueDesc>& inputs() const { return graph_->inputs; }
  const std::vector<ValueDesc>& outputs() const { return output_descs_; }
  const CompileStats& stats() const { return stats_; }

 private:
  friend Result<std::unique_ptr<CompiledModel>> Compile(const Graph&, const Target&, const CompileOptions&);
  struct Impl;
  CompiledModel();

  Target target_;
  std::shared_ptr<const Graph> graph_;
  std::vector<KernelInfo> kernel_infos_;
  std::vector<KernelCost> costs_;
  std::vector<Fallback> fallbacks_;
  std::vector<ValueDesc> output_descs_;
  CompileStats stats_;
  std::unique_ptr<Impl> impl_;
  std::mutex run_mutex_;
};

Result<std::unique_ptr<CompiledModel>> Compile(const Graph& graph, const Target& target,
                                               const CompileOptions& options = {});

// Runs a graph node by node with shapes computed as it goes (subgraphs of If, and small tools).
// `outer` resolves names from enclosing scopes (nullptr for none).
using ValueLookup = std::function<const Tensor*(const std::string&)>;
Result<std::vector<Tensor>> InterpretGraph(const Graph& graph, const std::map<std::string, Tensor>& inputs,
                                           const ValueLookup& outer, std::stop_token stop = {});

}  // namespace chipfit
