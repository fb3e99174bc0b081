// Seeded token ids stay inside the tables they index: a Gather from a constant embedding (also through a
// Cast and an Unsqueeze), EmbedLayerNormalization's word and segment tables and its 0/1 mask.
#include "core/graph/index_bounds.h"

#include <gtest/gtest.h>

#include "core/graph/onnx_import.h"
#include "core/graph/onnx_loader.h"
#include "core/tensor/random.h"
#include "tests/core/onnx_builder.h"

namespace chipfit {
namespace {

TEST(IndexBoundsTest, TokenIdsFoldIntoTheirTablesAndOtherInputsStay) {
  onnx::ModelProto m = testing::NewModel("index_bounds");
  auto* g = m.mutable_graph();
  testing::AddTypedValue(g->mutable_input(), "ids", onnx::TensorProto_DataType_INT32, {2, 6});
  testing::AddTypedValue(g->mutable_input(), "positions", onnx::TensorProto_DataType_INT64, {2, 6});
  testing::AddTypedValue(g->mutable_input(), "count", onnx::TensorProto_DataType_INT64, {1});
  testing::AddValue(g->mutable_output(), "words", {2, 6, 4});
  testing::AddValue(g->mutable_output(), "where", {2, 6, 4});
  testing::AddValue(g->mutable_output(), "count_out", {1});
  testing::AddInitializer(g, "word_table", {3, 4}, [](int64_t i) { return static_cast<float>(i); });
  testing::AddInitializer(g, "position_table", {7, 4}, [](int64_t i) { return static_cast<float>(i); });
  auto* cast = testing::AddNode(g, "Cast", {"ids"}, {"ids64"}, "cast");
  testing::SetIntAttr(cast, "to", onnx::TensorProto_DataType_INT64);
  testing::AddNode(g, "Gather", {"word_table", "ids64"}, {"words"}, "embed");
  testing::AddNode(g, "Gather", {"position_table", "positions"}, {"where"}, "positions");
  testing::AddNode(g, "Identity", {"count"}, {"count_out"}, "count");
  auto loaded = CheckOnnxModel(m, "index bounds test");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto graph = ImportModel(*loaded);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();

  const auto bounds = InputIndexBounds(*graph);
  EXPECT_EQ(bounds, (std::map<std::string, int64_t>{{"ids", 3}, {"positions", 7}}));
  std::map<std::string, Tensor> sample = {{"ids", SeededTensor(DType::kI32, {2, 6}, 1)},
                                          {"positions", SeededTensor(DType::kI64, {2, 6}, 2)},
                                          {"count", SeededTensor(DType::kI64, {1}, 3)}};
  const Tensor count_before = sample.at("count");
  BoundIndexInputs(bounds, sample);
  bool varied = false;
  for (int64_t i = 0; i < 12; ++i) {
    EXPECT_GE(sample.at("ids").data<int32_t>()[i], 0);
    EXPECT_LT(sample.at("ids").data<int32_t>()[i], 3);
    EXPECT_LT(sample.at("positions").data<int64_t>()[i], 7);
    varied |= sample.at("ids").data<int32_t>()[i] != sample.at("ids").data<int32_t>()[0];
  }
  EXPECT_TRUE(varied) << "the fold keeps the ids varied";
  EXPECT_EQ(sample.at("count").data<int64_t>()[0], count_before.data<int64_t>()[0]);
}

}  // namespace
}  // namespace chipfit
