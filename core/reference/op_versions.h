// Which ONNX version of each reference op chipfit implements, and what it refuses (the coverage report).
#pragma once

#include <vector>

namespace chipfit {

// One row per op of the reference table (ReferenceOps()).
struct OpVersion {
  const char* op_type;
  const char* domain;       // "" = ai.onnx
  int onnx_version;         // newest version ONNX defines up to opset 21
  int implemented_version;  // newest version whose semantics the reference kernel and shape function implement
  const char* refuses;      // what a model of these versions may ask that chipfit refuses, "" when nothing
};

// The one explicit table, kept beside the kernels (core/reference/op_versions.cpp).
const std::vector<OpVersion>& ReferenceOpVersions();

}  // namespace chipfit
