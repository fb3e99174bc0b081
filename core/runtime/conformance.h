// Conformance against the ONNX backend test data (model.onnx + test_data_set_*/{input,output}_N.pb).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/runtime/compiled_model.h"
#include "core/runtime/target.h"
#include "core/status.h"

namespace chipfit {

struct ConformanceCase {
  enum class Outcome { kPass, kFail, kUnsupported };
  std::string name;   // "test_conv_with_strides_padding"
  std::string suite;  // the suite folder's name: "node", "pytorch-converted" …
  std::string ops;    // op types in the model, e.g. "Conv" or "Conv,Relu"
  Outcome outcome = Outcome::kPass;
  std::string detail;  // why it failed or is unsupported
  double max_abs_error = 0;
  double min_sqnr_db = 0;  // lowest output SQNR over the data sets (when SQNR decides)
  int data_sets = 0;
  int kernels = 0;                    // kernels of the compiled case (host/device copies not counted)
  int device_kernels = 0;             // of those, kernels on the target's device (not a CPU/reference fallback)
  std::vector<Fallback> fallbacks{};  // nodes the target's device refused, with its reasons
};

// Compiles a case's graph for the target; `sample` is the case's first data set (int8 calibrates
// on it). The default compiles with the reference kernels only.
using ConformanceCompiler = std::function<Result<std::unique_ptr<CompiledModel>>(
    const Graph& graph, const Target& target, const std::map<std::string, Tensor>& sample)>;

struct ConformanceOptions {
  std::vector<std::filesystem::path> suites;  // folders holding test_* case folders
  std::string filter;                         // substring of the case name; empty = all
  Target target;                              // ref:fp32 by default
  // Tolerances of the ONNX backend runner for floating outputs; integers and bool are exact.
  double rtol = 1e-3;
  double atol = 1e-5;
  // When > 0, floating outputs pass by output SQNR ≥ this many dB instead of rtol/atol (int8).
  double min_sqnr_db = 0;
  ConformanceCompiler compile{};
};

// The four suites of Debian's libonnx-testdata that exist on this machine.
std::vector<std::filesystem::path> DefaultConformanceSuites();
const char* OutcomeName(ConformanceCase::Outcome outcome);

// Coverage of one reference op: the newest ONNX version (opsets <= 21) and the newest whose semantics
// chipfit implements, with what it refuses. `implemented` 0 means the op has no version record.
struct OpCoverage {
  std::string op_type;
  std::string domain;  // "" = ai.onnx
  int onnx_version = 0;
  int implemented_version = 0;
  std::string refuses;
};

// One row per op of the reference table, in table order (core/reference/op_versions.cpp holds the data).
std::vector<OpCoverage> ReferenceOpCoverage();

// Runs every matching case; `on_case` sees each result as it finishes (progress).
Result<std::vector<ConformanceCase>> RunConformance(const ConformanceOptions& options,
                                                    const std::function<void(const ConformanceCase&)>& on_case = {});

}  // namespace chipfit
