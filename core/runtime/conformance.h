// Conformance against the ONNX backend test data (model.onnx + test_data_set_*/{input,output}_N.pb).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

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
  int data_sets = 0;
};

struct ConformanceOptions {
  std::vector<std::filesystem::path> suites;  // folders holding test_* case folders
  std::string filter;                         // substring of the case name; empty = all
  Target target;                              // ref:fp32 by default
  // Tolerances of the ONNX backend runner for floating outputs; integers and bool are exact.
  double rtol = 1e-3;
  double atol = 1e-5;
};

// The four suites of Debian's libonnx-testdata that exist on this machine.
std::vector<std::filesystem::path> DefaultConformanceSuites();
const char* OutcomeName(ConformanceCase::Outcome outcome);

// Runs every matching case; `on_case` sees each result as it finishes (progress).
Result<std::vector<ConformanceCase>> RunConformance(const ConformanceOptions& options,
                                                    const std::function<void(const ConformanceCase&)>& on_case = {});

}  // namespace chipfit
