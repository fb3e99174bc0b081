// Graph passes: dead-node elimination and BatchNormalization folding keep the model's results.
#include "core/graph/passes.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/graph/onnx_import.h"
#include "core/runtime/compiled_model.h"
#include "tests/core/onnx_builder.h"

namespace chipfit {
namespace {

using testing::AddInitializer;
using testing::AddNode;
using testing::AddValue;

Graph ImportOrDie(const onnx::ModelProto& m) {
  auto loaded = CheckOnnxModel(m, "test model");
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto graph = ImportModel(*loaded);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return *graph;
}

double Wave(int64_t i, double scale) { return std::sin(0.7 * static_cast<double>(i) + 0.3) * scale; }

void AddBatchNorm(onnx::GraphProto* g, const std::string& in, const std::string& out, int64_t channels) {
  AddInitializer(g, "gamma", {channels}, [](int64_t i) { return 1.0 + 0.1 * i; });
  AddInitializer(g, "beta", {channels}, [](int64_t i) { return 0.05 * i - 0.1; });
  AddInitializer(g, "mean", {channels}, [](int64_t i) { return Wave(i, 0.2); });
  AddInitializer(g, "var", {channels}, [](int64_t i) { return 0.5 + 0.25 * i; });
  AddNode(g, "BatchNormalization", {in, "gamma", "beta", "mean", "var"}, {out}, "bn");
}

onnx::ModelProto ConvBn(bool extra_reader) {
  onnx::ModelProto m = testing::NewModel("conv_bn");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {1, 2, 5, 5});
  AddValue(g->mutable_output(), "y", {1, 3, 5, 5});
  AddInitializer(g, "w", {3, 2, 3, 3}, [](int64_t i) { return Wave(i, 0.5); });
  AddInitializer(g, "b", {3}, [](int64_t i) { return 0.1 * i; });
  auto* conv = AddNode(g, "Conv", {"x", "w", "b"}, {"c"}, "conv");
  auto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  AddBatchNorm(g, "c", "y", 3);
  if (extra_reader) {
    AddValue(g->mutable_output(), "c", {1, 3, 5, 5});
  }
  return m;
}

onnx::ModelProto GemmBn(bool trans_b) {
  onnx::ModelProto m = testing::NewModel("gemm_bn");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {2, 4});
  AddValue(g->mutable_output(), "y", {2, 3});
  AddInitializer(g, "w", trans_b ? std::vector<int64_t>{3, 4} : std::vector<int64_t>{4, 3},
                 [](int64_t i) { return Wave(i, 0.8); });
  AddInitializer(g, "b", {3}, [](int64_t i) { return -0.2 * i; });
  auto* gemm = AddNode(g, "Gemm", {"x", "w", "b"}, {"c"}, "gemm");
  testing::SetIntAttr(gemm, "transB", trans_b ? 1 : 0);
  AddBatchNorm(g, "c", "y", 3);
  return m;
}

Tensor Input(const Shape& shape) {
  Tensor t(DType::kF32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(Wave(i * 3 + 1, 1.0));
  return t;
}

// Runs the graph as written on ref and with folding on cpu:fp32; outputs must agree.
void ExpectFoldKeepsResults(const onnx::ModelProto& m, const Shape& input_shape, int expected_kernels) {
  Graph graph = ImportOrDie(m);
  auto ref = Compile(graph, Target{});
  auto folded = Compile(graph, *ParseTarget("cpu:fp32"));
  ASSERT_TRUE(ref.ok() && folded.ok());
  EXPECT_EQ((*folded)->stats().batchnorms_folded, 1);
  ASSERT_EQ(static_cast<int>((*folded)->kernels().size()), expected_kernels);
  EXPECT_EQ((*folded)->kernels()[0].onnx_nodes, (std::vector<std::string>{graph.nodes[0].name, "bn"}));
  const Tensor x = Input(input_shape);
  auto a = (*ref)->Run({{"x", x}});
  auto b = (*folded)->Run({{"x", x}});
  ASSERT_TRUE(a.ok() && b.ok());
  for (int64_t i = 0; i < (*a)[0].numel(); ++i) {
    EXPECT_NEAR((*a)[0].data<float>()[i], (*b)[0].data<float>()[i], 1e-5) << i;
  }
}

TEST(PassesTest, BatchNormFoldsIntoConv) { ExpectFoldKeepsResults(ConvBn(false), {1, 2, 5, 5}, 1); }
TEST(PassesTest, BatchNormFoldsIntoGemm) { ExpectFoldKeepsResults(GemmBn(false), {2, 4}, 1); }
TEST(PassesTest, BatchNormFoldsIntoTransposedGemm) { ExpectFoldKeepsResults(GemmBn(true), {2, 4}, 1); }

TEST(PassesTest, NoFoldWhenTheConvOutputHasAnotherReader) {
  Graph graph = ImportOrDie(ConvBn(true));
  auto folded = FoldBatchNorm(graph);
  ASSERT_TRUE(folded.ok());
  EXPECT_EQ(*folded, 0);
  EXPECT_EQ(graph.nodes.size(), 2u);
}

TEST(PassesTest, ReferenceTargetRunsTheGraphAsWritten) {
  auto ref = Compile(ImportOrDie(ConvBn(false)), Target{});
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ((*ref)->stats().batchnorms_folded, 0);
  EXPECT_EQ((*ref)->kernels().size(), 2u);
}

TEST(PassesTest, DeadNodesAreRemovedTransitively) {
  onnx::ModelProto m = testing::NewModel("dead");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {4});
  AddValue(g->mutable_output(), "y", {4});
  AddNode(g, "Relu", {"x"}, {"y"}, "live");
  AddNode(g, "Neg", {"x"}, {"d1"}, "dead1");
  AddNode(g, "Abs", {"d1"}, {"d2"}, "dead2");
  Graph graph = ImportOrDie(m);
  EXPECT_EQ(EliminateDeadNodes(graph), 2);
  ASSERT_EQ(graph.nodes.size(), 1u);
  EXPECT_EQ(graph.nodes[0].name, "live");
}

}  // namespace
}  // namespace chipfit

namespace chipfit {
namespace {

TEST(CostTest, ConvAndGemmFollowTheirFormulas) {
  auto conv = Compile(ImportOrDie(ConvBn(false)), Target{});
  ASSERT_TRUE(conv.ok());
  // Conv: y = 1·3·5·5 = 75 outputs, each (Cin/g)·kh·kw = 2·3·3 MACs, plus the bias add.
  EXPECT_EQ((*conv)->costs()[0].flops, 2 * 75 * 18 + 75);
  EXPECT_EQ((*conv)->costs()[0].bytes_read, (50 + 54 + 3) * 4);
  EXPECT_EQ((*conv)->costs()[0].bytes_written, 75 * 4);
  auto gemm = Compile(ImportOrDie(GemmBn(true)), Target{});
  ASSERT_TRUE(gemm.ok());
  EXPECT_EQ((*gemm)->costs()[0].flops, 2 * 2 * 3 * 4 + 2 * 3);  // 2·M·N·K + M·N for C
  EXPECT_EQ((*gemm)->stats().flops, (*gemm)->costs()[0].flops + (*gemm)->costs()[1].flops);
}

}  // namespace
}  // namespace chipfit
