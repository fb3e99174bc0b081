// The three sample models chipfit ships (cnn, mlp, transformer), built in code with fixed-seed weights.
#pragma once

#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace chipfit {

struct SampleModel {
  std::string file_name;  // "cnn.onnx": the name under resources/models
  onnx::ModelProto proto;
};

// cnn.onnx, mlp.onnx, transformer.onnx in that order. Same bytes on every call and every machine: weights
// come from a fixed-seed generator written here, not from <random>, whose distributions vary by library.
std::vector<SampleModel> BuildSampleModels();

// Protobuf wire bytes with deterministic serialization, so the committed files can be compared byte for byte.
std::string SerializeDeterministic(const onnx::ModelProto& proto);

}  // namespace chipfit
