// A test model as the compile sees it: checked and imported, every failure a test failure.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "core/graph/onnx_import.h"
#include "core/graph/onnx_loader.h"

namespace chipfit::testing {

inline Graph ImportOrFail(const onnx::ModelProto& m, const std::string& what = "test model") {
  auto loaded = CheckOnnxModel(m, what);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok()) return Graph{};
  auto graph = ImportModel(*loaded);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return graph.ok() ? std::move(graph).value() : Graph{};
}

}  // namespace chipfit::testing
