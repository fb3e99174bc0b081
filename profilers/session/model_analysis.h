// AnalyzeModel: what `chipfit inspect` and `inspect --target` say about a model, as one typed result for the GUI.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/graph/model_summary.h"
#include "core/runtime/compiled_model.h"
#include "core/runtime/target.h"
#include "core/status.h"

namespace chipfit {

// One imported node; each input/output reads "name: 1x3x48x192 f32", or the bare name where neither the
// file nor shape inference described the value.
struct NodeRow {
  std::string name;
  std::string op;  // "Conv", or "domain::Op" outside ai.onnx
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> attributes{};  // "kernel_shape=[3, 3]", in name order
};

// Where a target's device would run the model: the nodes it refuses, each with the device's reason.
struct TargetPlacement {
  Target target;
  std::string status = "ok";        // ok | unsupported | failed (the compile itself did not succeed)
  std::string error;                // why, when status is not ok
  std::vector<Fallback> fallbacks;  // empty: the device takes every node
};

struct ModelAnalysis {
  ModelSummary summary;  // with the shape bindings applied
  // Inputs as the file declares them, before any binding: which dims a user may (and must) set.
  std::vector<TensorSpec> declared_inputs;
  std::vector<std::string> shapes;  // the bindings this analysis used, "NAME=1x3x48x192"
  // Inputs with a dynamic dim no binding set, "x (batchx64)": nothing is compiled while any is left.
  std::vector<std::string> unbound_inputs;
  // The reference compile (ref:fp32): false while a dynamic dim is unbound or when it failed (see notes).
  bool compiled = false;
  int64_t flops = 0;
  int64_t planned_peak_bytes = 0;  // activations with reuse: the arena the memory planner lays out
  int64_t constant_bytes = 0;
  // Graph outputs at the shapes the reference compile computed (a declared "batchx10" becomes "4x10");
  // as declared when nothing was compiled.
  std::vector<TensorSpec> outputs;
  std::vector<NodeRow> nodes;
  std::vector<TargetPlacement> placements;  // one per requested target, in the order given
  std::vector<std::string> notes;
};

// Loads `path` with the dynamic-dim bindings `shapes` ("NAME=1x3x224x224"), imports it, compiles it for
// the reference (FLOPs, planned memory) and for every target in `targets` (what each cannot run, and
// why). A target that does not compile is a TargetPlacement with its status and error, not an error of
// the analysis; a model that does not load or import is, and its message names the file. A stop request
// is checked between compiles and returns kCancelled. `step` (optional) hears each step as it starts
// ("compiling for cpu:int8 (2 of 4)"), on the calling thread: a GUI shows where a long analysis is.
Result<ModelAnalysis> AnalyzeModel(const std::filesystem::path& path, const std::vector<std::string>& shapes,
                                   const std::vector<Target>& targets, const std::stop_token& stop = {},
                                   const std::function<void(const std::string& step)>& step = {});

}  // namespace chipfit
