// Loading an .onnx file with libonnx: parse, checker, shape inference, each failure a named Status.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "onnx/onnx_pb.h"

namespace chipfit {

struct OnnxLoadOptions {
  bool run_checker = true;
  bool infer_shapes = true;
  // Strict: a node whose shape cannot be inferred is an error (tests of our own models use this).
  bool strict_shape_inference = false;
  // User shapes for inputs (--shape NAME=1x3x48x192), bound before shape inference; every dim is
  // replaced, fixed dims must agree, and an unknown name is an error listing the inputs.
  std::map<std::string, std::vector<int64_t>> input_shapes{};
  // Replace declared dims even where they disagree (the conformance runner trusts its data; users
  // get an error instead).
  bool override_declared_shapes = false;
};

struct LoadedOnnxModel {
  std::filesystem::path path;
  std::string sha256;  // of the .onnx file (external data files not included); empty for in-memory models
  onnx::ModelProto proto;
  int64_t default_opset = 0;
  // What was not done and why (e.g. opset newer than libonnx knows: checker skipped).
  std::vector<std::string> notes;
};

// Highest default-domain opset the linked libonnx has schemas for (17 for Debian 12's 1.12).
int64_t LibOnnxMaxOpset();

Result<LoadedOnnxModel> LoadOnnxModel(const std::filesystem::path& path, const OnnxLoadOptions& options = {});
// Same checks on a model already in memory; `origin` names it in messages.
Result<LoadedOnnxModel> CheckOnnxModel(onnx::ModelProto proto, const std::string& origin,
                                       const OnnxLoadOptions& options = {});

}  // namespace chipfit
