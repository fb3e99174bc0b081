// ModelSummary: what `chipfit inspect` and the Model page show before anything runs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/graph/onnx_loader.h"

namespace chipfit {

// One dimension: a fixed size, or a symbolic name (dim_param) / unknown (-1, empty name).
struct DimSpec {
  int64_t value = -1;
  std::string param;
  bool is_static() const { return value >= 0; }
};

struct TensorSpec {
  std::string name;
  std::string dtype;  // DTypeName, or "onnx:<code>" for a type chipfit does not know
  std::vector<DimSpec> dims;
  bool has_shape = false;
};

struct ModelSummary {
  std::string path;
  std::string sha256;  // of the file; empty for a model built in memory
  int64_t ir_version = 0;
  std::string producer;                   // "name version"
  std::map<std::string, int64_t> opsets;  // domain ("" = ai.onnx) -> version
  int64_t default_opset = 0;
  std::vector<TensorSpec> inputs;  // graph inputs that are not initializers
  std::vector<TensorSpec> outputs;
  int64_t node_count = 0;
  std::map<std::string, int64_t> op_histogram;  // "Conv" or "domain::Op" -> count
  int64_t initializer_count = 0;
  int64_t constant_node_count = 0;  // Constant nodes holding a tensor (counted as parameters too)
  int64_t parameter_count = 0;      // elements in all initializers and Constant-node tensors
  int64_t parameter_bytes = 0;      // bytes at their stored dtype
  std::vector<std::string> notes;
};

ModelSummary Summarize(const LoadedOnnxModel& model);
// "1x3x32x32", "batchx64", "?x10"; "(unknown rank)" when there is no shape.
std::string FormatDims(const TensorSpec& spec);
// The `model` object of inspect/profile JSON (docs/json.md); dims are numbers or dim_param strings.
nlohmann::json SummaryToJson(const ModelSummary& summary);
// The inverse of SummaryToJson (a run read back from the store or a profile JSON); members an older
// chipfit did not write keep their defaults, a wrong type is an error naming it.
Result<ModelSummary> SummaryFromJson(const nlohmann::json& j);

}  // namespace chipfit
