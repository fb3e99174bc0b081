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

// A decoder step as a generation loop feeds it: 3 new tokens after a cache of 4, so GroupQueryAttention's
// seqlens_k is 6 and its total length 7, and RotaryEmbedding's positions run 4, 5, 6.
TEST(IndexBoundsTest, ADecodersLengthsFollowItsCacheAndTokens) {
  Graph graph;
  for (const char* name : {"input_ids", "past_key", "seqlens_k", "total_sequence_length", "position_ids"}) {
    ValueDesc in;
    in.name = name;
    graph.inputs.push_back(in);
  }
  graph.initializers["embed"] = Tensor(DType::kF32, {10, 8});
  auto add = [&](const char* name, const char* op, const char* domain, std::vector<std::string> inputs,
                 std::vector<std::string> outputs) {
    Node node;
    node.name = name;
    node.op_type = op;
    node.domain = domain;
    node.inputs = std::move(inputs);
    node.outputs = std::move(outputs);
    graph.nodes.push_back(std::move(node));
  };
  add("embed", "Gather", "", {"embed", "input_ids"}, {"x"});
  add("rotary", "RotaryEmbedding", "com.microsoft", {"x", "position_ids", "cos", "sin"}, {"q"});
  add("attention", "GroupQueryAttention", "com.microsoft",
      {"q", "q", "q", "past_key", "past_value", "seqlens_k", "total_sequence_length"},
      {"y", "present_key", "present_value"});
  std::map<std::string, Tensor> sample = {{"input_ids", SeededTensor(DType::kI64, {1, 3}, 1)},
                                          {"past_key", SeededTensor(DType::kF32, {1, 2, 4, 8}, 2)},
                                          {"seqlens_k", SeededTensor(DType::kI32, {1}, 3)},
                                          {"total_sequence_length", SeededTensor(DType::kI32, {}, 4)},
                                          {"position_ids", SeededTensor(DType::kI64, {1, 3}, 5)}};
  SeedSequenceLengths(graph, sample);
  EXPECT_EQ(sample.at("seqlens_k").data<int32_t>()[0], 6);
  EXPECT_EQ(sample.at("total_sequence_length").data<int32_t>()[0], 7);
  const int64_t* positions = sample.at("position_ids").data<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(positions, positions + 3), (std::vector<int64_t>{4, 5, 6}));

  // The user's own lengths (per batch row, a shorter past in one) are read, never written.
  Tensor mine(DType::kI32, {1});
  mine.data<int32_t>()[0] = 3;
  sample["seqlens_k"] = mine;
  SeedSequenceLengths(graph, sample, {"seqlens_k"});
  EXPECT_EQ(mine.data<int32_t>()[0], 3);
  EXPECT_EQ(sample.at("total_sequence_length").data<int32_t>()[0], 7);
}

}  // namespace
}  // namespace chipfit
