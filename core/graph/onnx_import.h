// ONNX protobufs → chipfit Graph IR: tensors (raw, typed fields, external data), attributes,
// subgraphs, stable node names, topological order and dangling-input checks.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "core/graph/graph.h"
#include "core/graph/onnx_loader.h"
#include "core/status.h"

namespace chipfit {

// Decodes a TensorProto; `base_dir` resolves external data files. `what` names it in errors.
Result<Tensor> TensorFromOnnx(const onnx::TensorProto& proto, const std::filesystem::path& base_dir,
                              const std::string& what);
// Reads a serialized TensorProto file (the ONNX test suite's input_N.pb / output_N.pb).
Result<Tensor> ReadTensorProtoFile(const std::filesystem::path& path);
// The type a graph input/output declares (element dtype, shape, sequence/optional).
ValueDesc ValueDescFromOnnx(const onnx::ValueInfoProto& value);
// Reads the suite's file for a value of type `desc`: a TensorProto, or for seq(…) a SequenceProto and
// for optional(…) an OptionalProto (an empty one becomes Tensor::None).
Result<Tensor> ReadValueProtoFile(const std::filesystem::path& path, const ValueDesc& desc);

// Imports a (sub)graph; names in `outer_scope` may be used by nodes without being defined here.
Result<Graph> ImportGraph(const onnx::GraphProto& proto, int64_t opset, const std::filesystem::path& base_dir,
                          const std::set<std::string>& outer_scope = {});

struct ImportOptions {
  // All graph inputs must have static dims after binding; a model that does not gets an error
  // listing every input (set false to import anyway, e.g. for `inspect`).
  bool require_static_inputs = true;
};

// Imports the main graph of a loaded model (bind user shapes through OnnxLoadOptions first).
Result<Graph> ImportModel(const LoadedOnnxModel& model, const ImportOptions& options = {});

// Parses "NAME=1x3x224x224" (as given to --shape).
Result<std::pair<std::string, Shape>> ParseShapeBinding(const std::string& text);

}  // namespace chipfit
