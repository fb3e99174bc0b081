// Graph passes: dead-node elimination, Constant promotion, BatchNormalization folding and Conv fusion keep
// the model's results.
#include "core/graph/passes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "core/graph/onnx_import.h"
#include "core/runtime/compiled_model.h"
#include "core/tensor/random.h"
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

// x [1, 2, 7, 7] → Pad (zeros; opset 13: pads as an input) → Conv 3x3 stride 2 "conv" [with its own pads 1]:
// what tf2onnx writes before a strided convolution. `value` is the pad value; `channel_pad` pads C as well.
onnx::ModelProto PadConv(float value, bool channel_pad, bool conv_pads) {
  onnx::ModelProto m = testing::NewModel("pad_conv", 13);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {1, 2, 7, 7});
  const int64_t c = channel_pad ? 3 : 2, hw = conv_pads ? 5 : 4;
  AddValue(g->mutable_output(), "y", {1, 3, hw, hw});
  auto* pads = g->add_initializer();
  pads->set_name("pads");
  pads->set_data_type(onnx::TensorProto_DataType_INT64);
  pads->add_dims(8);
  for (int64_t v : {0L, 0L, 0L, 1L, 0L, channel_pad ? 1L : 0L, 2L, 1L}) pads->add_int64_data(v);
  AddInitializer(g, "value", {}, [&](int64_t) { return value; });
  AddNode(g, "Pad", {"x", "pads", "value"}, {"padded"}, "pad");
  AddInitializer(g, "w", {3, c, 3, 3}, [](int64_t i) { return Wave(i, 0.5); });
  auto* conv = AddNode(g, "Conv", {"padded", "w"}, {"y"}, "conv");
  testing::AddIntsAttr(conv, "strides", {2, 2});
  if (conv_pads) testing::AddIntsAttr(conv, "pads", {1, 1, 1, 1});
  return m;
}

TEST(PassesTest, ZeroPadFoldsIntoTheConvsPads) {
  for (bool conv_pads : {false, true}) {
    Graph graph = ImportOrDie(PadConv(0.0f, false, conv_pads));
    Graph folded = graph;
    ASSERT_EQ(FoldPadIntoConv(folded), 1);
    ASSERT_EQ(folded.nodes.size(), 1u);
    const Node& conv = folded.nodes[0];
    EXPECT_EQ(conv.inputs[0], "x");
    const int64_t base = conv_pads ? 1 : 0;
    EXPECT_EQ(conv.GetInts("pads"), (std::vector<int64_t>{base, base + 1, base + 2, base + 1}));
    EXPECT_EQ(conv.covers, (std::vector<std::string>{"conv", "pad"}));
    EXPECT_FALSE(folded.initializers.contains("pads"));
    auto a = Compile(graph, Target{});
    auto b = Compile(folded, Target{});
    ASSERT_TRUE(a.ok() && b.ok());
    const Tensor x = Input({1, 2, 7, 7});
    auto ya = (*a)->Run({{"x", x}});
    auto yb = (*b)->Run({{"x", x}});
    ASSERT_TRUE(ya.ok() && yb.ok());
    ASSERT_EQ((*ya)[0].shape(), (*yb)[0].shape());
    for (int64_t i = 0; i < (*ya)[0].numel(); ++i) {
      EXPECT_NEAR((*ya)[0].data<float>()[i], (*yb)[0].data<float>()[i], 1e-6) << i;
    }
  }
}

TEST(PassesTest, PadsThatAreNotZerosOrTouchChannelsStay) {
  Graph nonzero = ImportOrDie(PadConv(1.5f, false, false));
  EXPECT_EQ(FoldPadIntoConv(nonzero), 0);
  EXPECT_EQ(nonzero.nodes.size(), 2u);
  Graph channels = ImportOrDie(PadConv(0.0f, true, false));
  EXPECT_EQ(FoldPadIntoConv(channels), 0);
}

TEST(PassesTest, CpuTargetFoldsThePadAndReportsItOnTheConv) {
  Graph graph = ImportOrDie(PadConv(0.0f, false, true));
  auto cpu = Compile(graph, *ParseTarget("cpu:fp32"));
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  ASSERT_EQ((*cpu)->kernels().size(), 1u);
  EXPECT_EQ((*cpu)->kernels()[0].onnx_nodes, (std::vector<std::string>{"conv", "pad"}));
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

// ---------------------------------------------------------------------------------------------------------------
// PromoteConstantNodes and FuseConvActivations.

namespace chipfit {
namespace {

using testing::AddInitializer;
using testing::AddNode;
using testing::AddValue;

void SetFloatAttr(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void SetFloatsAttr(onnx::NodeProto* n, const std::string& name, const std::vector<float>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float f : v) a->add_floats(f);
}

void SetIntsAttr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t i : v) a->add_ints(i);
}

// A Constant node holding a float tensor attribute `value` filled by f(i), as paddle2onnx writes weights.
template <typename F>
void AddConstantNode(onnx::GraphProto* g, const std::string& out, const std::vector<int64_t>& dims, F f) {
  auto* n = AddNode(g, "Constant", {}, {out}, out + "_const");
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto_DataType_FLOAT);
  int64_t count = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    count *= d;
  }
  for (int64_t i = 0; i < count; ++i) t->add_float_data(static_cast<float>(f(i)));
}

// Compiles both graphs on the reference target, runs them on the same seeded inputs and expects
// every output to agree within 1e-5.
void ExpectSameResults(const Graph& original, const Graph& rewritten) {
  auto a = Compile(original, Target{});
  auto b = Compile(rewritten, Target{});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  std::map<std::string, Tensor> inputs;
  uint64_t seed = 7;
  for (const ValueDesc& in : original.inputs) inputs[in.name] = SeededTensor(in.dtype, in.shape, seed++);
  auto ya = (*a)->Run(inputs);
  auto yb = (*b)->Run(inputs);
  ASSERT_TRUE(ya.ok()) << ya.status().ToString();
  ASSERT_TRUE(yb.ok()) << yb.status().ToString();
  ASSERT_EQ(ya->size(), yb->size());
  for (size_t k = 0; k < ya->size(); ++k) {
    const Tensor& ta = (*ya)[k];
    const Tensor& tb = (*yb)[k];
    ASSERT_EQ(ta.shape(), tb.shape());
    double max_abs = 0;
    for (int64_t i = 0; i < ta.numel(); ++i) {
      max_abs = std::max(max_abs, std::fabs(ta.GetAsDouble(i) - tb.GetAsDouble(i)));
    }
    EXPECT_LE(max_abs, 1e-5) << "output " << k;
  }
}

// x [1, 2, 5, 5] → Conv "conv" (3 output channels, pads 1) → "c" [1, 3, 5, 5]; the caller adds the
// nodes after it and the graph output `out`. Weights large enough that activations see both sides
// of their kinks (|c| reaches past 3).
onnx::ModelProto ConvModel(const std::string& name, int64_t opset, bool residual_input = false) {
  onnx::ModelProto m = testing::NewModel(name, opset);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {1, 2, 5, 5});
  if (residual_input) AddValue(g->mutable_input(), "r", {1, 3, 5, 5});
  AddInitializer(g, "w", {3, 2, 3, 3}, [](int64_t i) { return Wave(i, 1.5); });
  AddInitializer(g, "b", {3}, [](int64_t i) { return 0.3 * i - 0.2; });
  auto* conv = AddNode(g, "Conv", {"x", "w", "b"}, {"c"}, "conv");
  SetIntsAttr(conv, "pads", {1, 1, 1, 1});
  return m;
}

void AddOutput(onnx::ModelProto& m, const std::string& name) {
  AddValue(m.mutable_graph()->mutable_output(), name, {1, 3, 5, 5});
}

struct Fused {
  Graph original;
  Graph graph;
  int count = 0;
};

// Imports, promotes Constant nodes, fuses; checks the results did not change.
Fused FuseAndCompare(const onnx::ModelProto& m, bool swish = false) {
  Fused f;
  f.original = ImportOrDie(m);
  f.graph = f.original;
  PromoteConstantNodes(f.graph);
  f.count = FuseConvActivations(f.graph, swish);
  ExpectSameResults(f.original, f.graph);
  return f;
}

const Node* FindOp(const Graph& graph, const std::string& op_type) {
  for (const Node& node : graph.nodes) {
    if (node.op_type == op_type) return &node;
  }
  return nullptr;
}

// Exactly one FusedConv with the given activation, params and covers; `nodes` nodes remain.
void ExpectOneFused(const Fused& f, size_t nodes, const std::string& activation, const std::vector<float>& params,
                    const std::vector<std::string>& covers, const std::string& z = "") {
  EXPECT_EQ(f.count, 1);
  ASSERT_EQ(f.graph.nodes.size(), nodes);
  const Node* fused = FindOp(f.graph, "FusedConv");
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->name, "conv");
  EXPECT_EQ(fused->domain, "com.chipfit");
  EXPECT_EQ(fused->GetString("activation", ""), activation);
  const std::vector<float> got = fused->GetFloats("activation_params");
  ASSERT_EQ(got.size(), params.size());
  for (size_t i = 0; i < params.size(); ++i)
    EXPECT_NEAR(got[i], params[i], 1e-6f * std::max(1.0f, std::fabs(params[i])));
  EXPECT_EQ(fused->covers, covers);
  EXPECT_EQ(fused->inputs.size() > 3 ? fused->inputs[3] : "", z);
  EXPECT_EQ(fused->GetInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));  // the Conv's attributes travel along
}

TEST(PromoteConstantNodesTest, ConstantWeightsBecomeInitializersAndBatchNormFolds) {
  onnx::ModelProto m = testing::NewModel("paddle_style", 13);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {1, 2, 5, 5});
  AddValue(g->mutable_output(), "y", {1, 3, 5, 5});
  AddConstantNode(g, "w", {3, 2, 3, 3}, [](int64_t i) { return Wave(i, 0.5); });
  AddConstantNode(g, "gamma", {3}, [](int64_t i) { return 1.0 + 0.1 * i; });
  AddConstantNode(g, "beta", {3}, [](int64_t i) { return 0.05 * i - 0.1; });
  AddConstantNode(g, "mean", {3}, [](int64_t i) { return Wave(i, 0.2); });
  // value_floats (opset >= 12) instead of a tensor attribute.
  auto* var = AddNode(g, "Constant", {}, {"var"}, "var_const");
  SetFloatsAttr(var, "value_floats", {0.5f, 0.75f, 1.0f});
  auto* conv = AddNode(g, "Conv", {"x", "w"}, {"c"}, "conv");
  SetIntsAttr(conv, "pads", {1, 1, 1, 1});
  AddNode(g, "BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"y"}, "bn");
  const Graph original = ImportOrDie(m);

  Graph graph = original;
  auto not_folded = FoldBatchNorm(graph);
  ASSERT_TRUE(not_folded.ok());
  EXPECT_EQ(*not_folded, 0);  // weights in Constant nodes are invisible to the fold

  EXPECT_EQ(PromoteConstantNodes(graph), 5);
  ASSERT_EQ(graph.nodes.size(), 2u);
  ASSERT_TRUE(graph.initializers.contains("var"));
  EXPECT_EQ(graph.initializers.at("var").shape(), (Shape{3}));
  EXPECT_EQ(graph.initializers.at("var").data<float>()[1], 0.75f);
  EXPECT_EQ(graph.initializers.at("w").shape(), (Shape{3, 2, 3, 3}));
  auto folded = FoldBatchNorm(graph);
  ASSERT_TRUE(folded.ok());
  EXPECT_EQ(*folded, 1);
  ASSERT_EQ(graph.nodes.size(), 1u);
  EXPECT_EQ(graph.nodes[0].covers, (std::vector<std::string>{"conv", "bn"}));
  ExpectSameResults(original, graph);
}

TEST(PromoteConstantNodesTest, ScalarFormsArePromotedAndGraphOutputsStayNodes) {
  onnx::ModelProto m = testing::NewModel("scalars", 13);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {4});
  AddValue(g->mutable_output(), "y", {4});
  AddValue(g->mutable_output(), "k", {1});
  auto* f = AddNode(g, "Constant", {}, {"f"}, "f_const");
  SetFloatAttr(f, "value_float", 2.5f);
  auto* k = AddNode(g, "Constant", {}, {"k"}, "k_const");  // a graph output: must stay a node
  SetFloatsAttr(k, "value_floats", {1.0f});
  AddNode(g, "Mul", {"x", "f"}, {"y"}, "mul");
  const Graph original = ImportOrDie(m);
  Graph graph = original;
  EXPECT_EQ(PromoteConstantNodes(graph), 1);
  ASSERT_EQ(graph.nodes.size(), 2u);
  EXPECT_EQ(graph.nodes[0].name, "k_const");
  ASSERT_TRUE(graph.initializers.contains("f"));
  EXPECT_EQ(graph.initializers.at("f").rank(), 0);
  EXPECT_EQ(graph.initializers.at("f").data<float>()[0], 2.5f);
  EXPECT_FALSE(graph.initializers.contains("k"));
  ExpectSameResults(original, graph);
}

// torch.onnx.export's deduplicated parameters: Identity(an initializer) is that tensor under a
// second name (so passes see the zero bias of every Linear layer as a constant); an Identity
// writing a graph output stays a node.
TEST(PromoteConstantNodesTest, IdentityOfAnInitializerSharesItsTensor) {
  onnx::ModelProto m = testing::NewModel("dedup", 13);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {4});
  AddValue(g->mutable_output(), "y", {4});
  AddValue(g->mutable_output(), "out_alias", {4});
  AddInitializer(g, "bias", {4}, [](int64_t i) { return 0.25 * static_cast<double>(i); });
  AddNode(g, "Identity", {"bias"}, {"bias_again"}, "dedup");
  AddNode(g, "Identity", {"bias"}, {"out_alias"}, "output_identity");
  AddNode(g, "Add", {"x", "bias_again"}, {"y"}, "add");
  const Graph original = ImportOrDie(m);
  Graph graph = original;
  EXPECT_EQ(PromoteConstantNodes(graph), 1);
  ASSERT_TRUE(graph.initializers.contains("bias_again"));
  EXPECT_EQ(graph.initializers.at("bias_again").raw_data(), graph.initializers.at("bias").raw_data());
  EXPECT_FALSE(graph.initializers.contains("out_alias"));
  std::vector<std::string> names;
  for (const Node& n : graph.nodes) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"output_identity", "add"}));
  ExpectSameResults(original, graph);
}

struct SingleActivationCase {
  std::string op;
  int64_t opset;
  std::vector<float> attrs;  // alpha[, beta] where the op has them
  std::vector<float> params;
};

// Names the case in gtest's messages instead of dumping its bytes.
void PrintTo(const SingleActivationCase& c, std::ostream* os) { *os << c.op << " at opset " << c.opset; }

class FuseSingleActivationTest : public ::testing::TestWithParam<SingleActivationCase> {};

TEST_P(FuseSingleActivationTest, ConvThenActivationFuses) {
  const SingleActivationCase& p = GetParam();
  onnx::ModelProto m = ConvModel("conv_act", p.opset);
  auto* act = AddNode(m.mutable_graph(), p.op, {"c"}, {"y"}, "act");
  if (!p.attrs.empty()) SetFloatAttr(act, "alpha", p.attrs[0]);
  if (p.attrs.size() > 1) SetFloatAttr(act, "beta", p.attrs[1]);
  AddOutput(m, "y");
  ExpectOneFused(FuseAndCompare(m), 1, p.op, p.params, {"conv", "act"});
}

INSTANTIATE_TEST_SUITE_P(Activations, FuseSingleActivationTest,
                         ::testing::Values(SingleActivationCase{"Relu", 13, {}, {}},
                                           SingleActivationCase{"LeakyRelu", 13, {0.2f}, {0.2f}},
                                           SingleActivationCase{"LeakyRelu", 13, {}, {0.01f}},
                                           SingleActivationCase{"Sigmoid", 13, {}, {}},
                                           SingleActivationCase{"Tanh", 13, {}, {}},
                                           SingleActivationCase{"HardSigmoid", 13, {0.3f, 0.4f}, {0.3f, 0.4f}},
                                           SingleActivationCase{"HardSwish", 14, {}, {}}),
                         [](const auto& info) { return info.param.op + std::to_string(info.index); });

TEST(FuseConvActivationsTest, ClipWithAttributesBeforeOpset11) {
  onnx::ModelProto m = ConvModel("relu6", 9);
  auto* clip = AddNode(m.mutable_graph(), "Clip", {"c"}, {"y"}, "clip");
  SetFloatAttr(clip, "min", 0.0f);
  SetFloatAttr(clip, "max", 2.0f);
  AddOutput(m, "y");
  ExpectOneFused(FuseAndCompare(m), 1, "Clip", {0.0f, 2.0f}, {"conv", "clip"});
}

TEST(FuseConvActivationsTest, ClipWithInitializerBoundsAndAnAbsentMin) {
  onnx::ModelProto m = ConvModel("clip13", 13);
  auto* g = m.mutable_graph();
  AddInitializer(g, "hi", {}, [](int64_t) { return 1.5; });
  AddNode(g, "Clip", {"c", "", "hi"}, {"y"}, "clip");
  AddOutput(m, "y");
  ExpectOneFused(FuseAndCompare(m), 1, "Clip", {-FLT_MAX, 1.5f}, {"conv", "clip"});
}

TEST(FuseConvActivationsTest, ClipBoundsFromConstantNodesFuseAfterPromotion) {
  onnx::ModelProto m = ConvModel("clip_const", 13);
  auto* g = m.mutable_graph();
  AddConstantNode(g, "lo", {}, [](int64_t) { return -0.5; });
  AddConstantNode(g, "hi", {}, [](int64_t) { return 0.8; });
  AddNode(g, "Clip", {"c", "lo", "hi"}, {"y"}, "clip");
  AddOutput(m, "y");
  Graph graph = ImportOrDie(m);
  EXPECT_EQ(FuseConvActivations(graph), 0);  // the pass reads only initializers
  ExpectOneFused(FuseAndCompare(m), 1, "Clip", {-0.5f, 0.8f}, {"conv", "clip"});
}

TEST(FuseConvActivationsTest, ResidualAddThenReluEitherOperandOrder) {
  for (bool conv_first : {true, false}) {
    onnx::ModelProto m = ConvModel("residual", 13, true);
    auto* g = m.mutable_graph();
    AddNode(g, "Add", conv_first ? std::vector<std::string>{"c", "r"} : std::vector<std::string>{"r", "c"}, {"s"},
            "add");
    AddNode(g, "Relu", {"s"}, {"y"}, "relu");
    AddOutput(m, "y");
    ExpectOneFused(FuseAndCompare(m), 1, "Relu", {}, {"conv", "add", "relu"}, "r");
  }
}

TEST(FuseConvActivationsTest, ResidualAddWithoutActivationAndBroadcastZ) {
  onnx::ModelProto m = ConvModel("residual_bcast", 13);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "r", {3, 1, 1});  // per-channel, broadcast over N, H and W
  AddNode(g, "Add", {"c", "r"}, {"y"}, "add");
  AddOutput(m, "y");
  const Fused f = FuseAndCompare(m);
  ExpectOneFused(f, 1, "", {}, {"conv", "add"}, "r");
  EXPECT_FALSE(f.graph.nodes[0].Has("activation"));
}

TEST(FuseConvActivationsTest, HardSwishAsHardSigmoidTimesX) {
  onnx::ModelProto m = ConvModel("hs_mul", 13);
  auto* g = m.mutable_graph();
  auto* hs = AddNode(g, "HardSigmoid", {"c"}, {"h"}, "hsig");
  SetFloatAttr(hs, "alpha", 1.0f / 6.0f);
  SetFloatAttr(hs, "beta", 0.5f);
  AddNode(g, "Mul", {"c", "h"}, {"y"}, "mul");
  AddOutput(m, "y");
  ExpectOneFused(FuseAndCompare(m), 1, "HardSwish", {}, {"conv", "hsig", "mul"});
}

// SiLU as exporters write it, x · Sigmoid(x) (EfficientNet, YOLO): a Swish activation where the device
// takes it, and the Sigmoid alone is not taken for the activation (its input has another reader).
TEST(FuseConvActivationsTest, SiluAsSigmoidTimesXWhereTheDeviceTakesSwish) {
  onnx::ModelProto m = ConvModel("silu", 13);
  auto* g = m.mutable_graph();
  AddNode(g, "Sigmoid", {"c"}, {"s"}, "sig");
  AddNode(g, "Mul", {"s", "c"}, {"y"}, "mul");
  AddOutput(m, "y");
  ExpectOneFused(FuseAndCompare(m, true), 1, "Swish", {}, {"conv", "sig", "mul"});
  EXPECT_EQ(FuseAndCompare(m, false).count, 0);
}

// PaddleOCR MobileNetV3 at opset 9: Add(x, 3) → Clip(0, 6) → Mul(x, clip) → Div(mul, 6), constants in
// Constant nodes.
TEST(FuseConvActivationsTest, PaddleHardSwishDecompositionAtOpset9) {
  onnx::ModelProto m = ConvModel("paddle_hswish", 9);
  auto* g = m.mutable_graph();
  AddConstantNode(g, "three", {1}, [](int64_t) { return 3.0; });
  AddConstantNode(g, "six", {1}, [](int64_t) { return 6.0; });
  AddNode(g, "Add", {"c", "three"}, {"a"}, "add3");
  auto* clip = AddNode(g, "Clip", {"a"}, {"cl"}, "clip");
  SetFloatAttr(clip, "min", 0.0f);
  SetFloatAttr(clip, "max", 6.0f);
  AddNode(g, "Mul", {"c", "cl"}, {"p"}, "mul");
  AddNode(g, "Div", {"p", "six"}, {"y"}, "div");
  AddOutput(m, "y");
  const Fused f = FuseAndCompare(m);
  ExpectOneFused(f, 1, "HardSwish", {}, {"conv", "add3", "clip", "mul", "div"});
  EXPECT_FALSE(f.graph.initializers.contains("three"));  // constants the pattern used are gone
  EXPECT_FALSE(f.graph.initializers.contains("six"));
}

// The variant with Mul(clip, x) and · 1/6, Clip bounds as inputs (opset 13), after a residual Add.
TEST(FuseConvActivationsTest, ResidualThenHardSwishDecompositionWithOneSixth) {
  onnx::ModelProto m = ConvModel("hswish13", 13, true);
  auto* g = m.mutable_graph();
  AddInitializer(g, "three", {}, [](int64_t) { return 3.0; });
  AddInitializer(g, "zero", {}, [](int64_t) { return 0.0; });
  AddInitializer(g, "six", {}, [](int64_t) { return 6.0; });
  AddInitializer(g, "sixth", {}, [](int64_t) { return 1.0 / 6.0; });
  AddNode(g, "Add", {"r", "c"}, {"s"}, "add");
  AddNode(g, "Add", {"three", "s"}, {"a"}, "add3");
  AddNode(g, "Clip", {"a", "zero", "six"}, {"cl"}, "clip");
  AddNode(g, "Mul", {"cl", "s"}, {"p"}, "mul");
  AddNode(g, "Mul", {"sixth", "p"}, {"y"}, "scale");
  AddOutput(m, "y");
  ExpectOneFused(FuseAndCompare(m), 1, "HardSwish", {}, {"conv", "add", "add3", "clip", "mul", "scale"}, "r");
}

TEST(FuseConvActivationsTest, FoldedBatchNormCoversAreKept) {
  onnx::ModelProto m = ConvModel("conv_bn_relu", 13);
  auto* g = m.mutable_graph();
  AddBatchNorm(g, "c", "n", 3);
  AddNode(g, "Relu", {"n"}, {"y"}, "relu");
  AddOutput(m, "y");
  const Graph original = ImportOrDie(m);
  Graph graph = original;
  auto folded = FoldBatchNorm(graph);
  ASSERT_TRUE(folded.ok());
  ASSERT_EQ(*folded, 1);
  EXPECT_EQ(FuseConvActivations(graph), 1);
  ASSERT_EQ(graph.nodes.size(), 1u);
  EXPECT_EQ(graph.nodes[0].covers, (std::vector<std::string>{"conv", "bn", "relu"}));
  ExpectSameResults(original, graph);
}

TEST(FuseConvActivationsTest, FusedNodesStayTopologicallySorted) {
  // conv1 → relu1 → conv2, whose residual Add reads a value computed after conv2.
  onnx::ModelProto m = ConvModel("chain", 13);
  auto* g = m.mutable_graph();
  AddNode(g, "Relu", {"c"}, {"r1"}, "relu1");
  AddInitializer(g, "w2", {3, 3, 1, 1}, [](int64_t i) { return Wave(i, 0.9); });
  AddNode(g, "Conv", {"r1", "w2"}, {"c2"}, "conv2");
  AddNode(g, "Neg", {"r1"}, {"late"}, "late");
  AddNode(g, "Add", {"c2", "late"}, {"s"}, "add");
  AddNode(g, "Sigmoid", {"s"}, {"y"}, "sig");
  AddOutput(m, "y");
  const Fused f = FuseAndCompare(m);
  EXPECT_EQ(f.count, 2);
  ASSERT_EQ(f.graph.nodes.size(), 3u);
  EXPECT_EQ(f.graph.nodes[0].name, "conv");
  EXPECT_EQ(f.graph.nodes[1].name, "late");
  EXPECT_EQ(f.graph.nodes[2].name, "conv2");
  EXPECT_EQ(f.graph.nodes[2].covers, (std::vector<std::string>{"conv2", "add", "sig"}));
}

TEST(FuseConvActivationsTest, NoFusionWhenTheConvOutputHasAnotherReader) {
  onnx::ModelProto m = ConvModel("two_readers", 13);
  AddNode(m.mutable_graph(), "Relu", {"c"}, {"y"}, "relu");
  AddNode(m.mutable_graph(), "Neg", {"c"}, {"z"}, "neg");
  AddOutput(m, "y");
  AddOutput(m, "z");
  const Fused f = FuseAndCompare(m);
  EXPECT_EQ(f.count, 0);
  EXPECT_EQ(f.graph.nodes.size(), 3u);
}

TEST(FuseConvActivationsTest, NoFusionWhenTheConvOutputIsAGraphOutput) {
  onnx::ModelProto m = ConvModel("conv_out", 13);
  AddNode(m.mutable_graph(), "Relu", {"c"}, {"y"}, "relu");
  AddOutput(m, "y");
  AddOutput(m, "c");
  const Fused f = FuseAndCompare(m);
  EXPECT_EQ(f.count, 0);
  EXPECT_EQ(f.graph.nodes.size(), 2u);
}

TEST(FuseConvActivationsTest, AddSumThatIsAGraphOutputFusesWithoutTheActivation) {
  onnx::ModelProto m = ConvModel("sum_out", 13, true);
  AddNode(m.mutable_graph(), "Add", {"c", "r"}, {"s"}, "add");
  AddNode(m.mutable_graph(), "Relu", {"s"}, {"y"}, "relu");
  AddOutput(m, "y");
  AddOutput(m, "s");
  ExpectOneFused(FuseAndCompare(m), 2, "", {}, {"conv", "add"}, "r");
}

TEST(FuseConvActivationsTest, ConstantAddIsNotAResidual) {
  for (bool constant_node : {false, true}) {
    onnx::ModelProto m = ConvModel("bias_add", 13);
    auto* g = m.mutable_graph();
    if (constant_node) {
      AddConstantNode(g, "k", {3, 1, 1}, [](int64_t i) { return 0.1 * i; });
    } else {
      AddInitializer(g, "k", {3, 1, 1}, [](int64_t i) { return 0.1 * i; });
    }
    AddNode(g, "Add", {"c", "k"}, {"s"}, "add");
    AddNode(g, "Relu", {"s"}, {"y"}, "relu");
    AddOutput(m, "y");
    Graph graph = ImportOrDie(m);  // no promotion: a Constant node's output is a constant too
    EXPECT_EQ(FuseConvActivations(graph), 0) << constant_node;
    EXPECT_EQ(FindOp(graph, "FusedConv"), nullptr);
  }
}

TEST(FuseConvActivationsTest, ResidualThatWouldGrowTheOutputIsNotFused) {
  onnx::ModelProto m = ConvModel("grow", 13);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "r", {2, 3, 5, 5});  // the sum is 2x3x5x5, not the conv's 1x3x5x5
  AddNode(g, "Add", {"c", "r"}, {"y"}, "add");
  AddValue(g->mutable_output(), "y", {2, 3, 5, 5});
  const Fused f = FuseAndCompare(m);
  EXPECT_EQ(f.count, 0);
}

TEST(FuseConvActivationsTest, HardSwishDecompositionWithAnOutsideReaderIsNotFused) {
  onnx::ModelProto m = ConvModel("hswish_leak", 13);
  auto* g = m.mutable_graph();
  AddInitializer(g, "three", {}, [](int64_t) { return 3.0; });
  AddInitializer(g, "zero", {}, [](int64_t) { return 0.0; });
  AddInitializer(g, "six", {}, [](int64_t) { return 6.0; });
  AddNode(g, "Add", {"c", "three"}, {"a"}, "add3");
  AddNode(g, "Clip", {"a", "zero", "six"}, {"cl"}, "clip");
  AddNode(g, "Mul", {"c", "cl"}, {"p"}, "mul");
  AddNode(g, "Div", {"p", "six"}, {"y"}, "div");
  AddOutput(m, "y");
  AddOutput(m, "cl");  // the Clip's result is read outside the pattern
  const Fused f = FuseAndCompare(m);
  EXPECT_EQ(f.count, 0);
  EXPECT_EQ(f.graph.nodes.size(), 5u);
}

TEST(FuseConvActivationsTest, WrongHardSwishConstantsAreNotFused) {
  onnx::ModelProto m = ConvModel("not_hswish", 13);
  auto* g = m.mutable_graph();
  AddInitializer(g, "three", {}, [](int64_t) { return 3.0; });
  AddInitializer(g, "zero", {}, [](int64_t) { return 0.0; });
  AddInitializer(g, "six", {}, [](int64_t) { return 6.0; });
  AddInitializer(g, "five", {}, [](int64_t) { return 5.0; });
  AddNode(g, "Add", {"c", "three"}, {"a"}, "add3");
  AddNode(g, "Clip", {"a", "zero", "six"}, {"cl"}, "clip");
  AddNode(g, "Mul", {"c", "cl"}, {"p"}, "mul");
  AddNode(g, "Div", {"p", "five"}, {"y"}, "div");
  AddOutput(m, "y");
  EXPECT_EQ(FuseAndCompare(m).count, 0);
}

// openWakeWord: Conv → LeakyRelu → Max(·, c): the Max becomes the FusedConv's clamp_min (tf2onnx writes
// c as [1, 1, 1, 1], of the output's rank).
TEST(FuseConvActivationsTest, MaxAndMinWithAConstantAfterTheActivationBecomeAClamp) {
  onnx::ModelProto m = ConvModel("clamp", 13);
  auto* g = m.mutable_graph();
  AddNode(g, "LeakyRelu", {"c"}, {"l"}, "leaky");
  AddInitializer(g, "floor", {1, 1, 1, 1}, [](int64_t) { return -0.05; });
  AddInitializer(g, "ceiling", {1}, [](int64_t) { return 0.3; });
  AddNode(g, "Max", {"l", "floor"}, {"m"}, "max");
  AddNode(g, "Min", {"ceiling", "m"}, {"y"}, "min");
  AddOutput(m, "y");
  const Fused f = FuseAndCompare(m);
  ASSERT_EQ(f.graph.nodes.size(), 1u);
  const Node& fused = f.graph.nodes[0];
  EXPECT_EQ(fused.op_type, "FusedConv");
  EXPECT_FLOAT_EQ(fused.GetFloat("clamp_min", 0), -0.05f);
  EXPECT_FLOAT_EQ(fused.GetFloat("clamp_max", 0), 0.3f);
  EXPECT_EQ(fused.covers, (std::vector<std::string>{"conv", "leaky", "max", "min"}));
  EXPECT_EQ(fused.outputs[0], "y");
}

// A one-element constant of a higher rank than the Conv's output broadcasts it to that rank: the Max stays.
TEST(FuseConvActivationsTest, AConstantOfHigherRankThanTheOutputIsNotAClamp) {
  onnx::ModelProto m = ConvModel("clamp_rank", 13);
  auto* g = m.mutable_graph();
  AddNode(g, "Relu", {"c"}, {"r"}, "relu");
  AddInitializer(g, "floor", {1, 1, 1, 1, 1}, [](int64_t) { return -0.05; });
  AddNode(g, "Max", {"r", "floor"}, {"y"}, "max");
  AddValue(m.mutable_graph()->mutable_output(), "y", {1, 1, 3, 5, 5});
  const Fused f = FuseAndCompare(m);
  ASSERT_EQ(f.graph.nodes.size(), 2u);
  EXPECT_EQ(f.graph.nodes[0].op_type, "FusedConv");
  EXPECT_EQ(f.graph.nodes[1].op_type, "Max");
}

// Imports, promotes Constant nodes, folds affine maps into the layers; checks the results did not change.
Fused FoldAffineAndCompare(const onnx::ModelProto& m) {
  Fused f;
  f.original = ImportOrDie(m);
  f.graph = f.original;
  PromoteConstantNodes(f.graph);
  f.count = FoldAffineIntoConv(f.graph);
  ExpectSameResults(f.original, f.graph);
  return f;
}

// PP-LCNet's learnable affine block and the other forms: every per-channel or scalar Mul / Add / Sub /
// Div after the Conv becomes its weights and bias, in either operand order.
TEST(FoldAffineIntoConvTest, ScaleShiftChainsFoldIntoTheConv) {
  onnx::ModelProto m = ConvModel("affine", 13);
  auto* g = m.mutable_graph();
  AddInitializer(g, "scale", {3, 1, 1}, [](int64_t i) { return 0.5 + 0.25 * static_cast<double>(i); });
  AddInitializer(g, "shift", {1}, [](int64_t) { return 0.75; });
  AddInitializer(g, "from", {1, 3, 1, 1}, [](int64_t i) { return 1.0 - 0.5 * static_cast<double>(i); });
  AddInitializer(g, "divisor", {}, [](int64_t) { return -4.0; });
  AddNode(g, "Mul", {"scale", "c"}, {"m"}, "mul");
  AddNode(g, "Add", {"m", "shift"}, {"a"}, "add");
  AddNode(g, "Sub", {"from", "a"}, {"s"}, "sub");
  AddNode(g, "Div", {"s", "divisor"}, {"y"}, "div");
  AddOutput(m, "y");
  const Fused f = FoldAffineAndCompare(m);
  EXPECT_EQ(f.count, 4);
  ASSERT_EQ(f.graph.nodes.size(), 1u);
  const Node& conv = f.graph.nodes[0];
  EXPECT_EQ(conv.op_type, "Conv");
  EXPECT_EQ(conv.covers, (std::vector<std::string>{"conv", "mul", "add", "sub", "div"}));
  EXPECT_EQ(conv.outputs[0], "y");
  // The original weights stay for whoever else reads them; the Conv reads its own.
  EXPECT_NE(conv.inputs[1], "w");
}

// ConvTranspose (W is [C, M/g, k…], so channel m is a column of W), then a bias Add and an inference
// BatchNormalization, as DB text detectors' heads write it; grouped too.
TEST(FoldAffineIntoConvTest, BiasAndBatchNormFoldIntoConvTranspose) {
  for (int64_t group : {1, 2}) {
    SCOPED_TRACE("group " + std::to_string(group));
    onnx::ModelProto m = testing::NewModel("deconv_affine", 13);
    auto* g = m.mutable_graph();
    AddValue(g->mutable_input(), "x", {1, 4, 3, 3});
    AddInitializer(g, "w", {4, 4 / group, 2, 2}, [](int64_t i) { return Wave(i, 0.7); });
    auto* deconv = AddNode(g, "ConvTranspose", {"x", "w"}, {"d"}, "deconv");
    SetIntsAttr(deconv, "strides", {2, 2});
    testing::SetIntAttr(deconv, "group", group);
    AddInitializer(g, "bias", {4, 1, 1}, [](int64_t i) { return 0.2 * static_cast<double>(i) - 0.3; });
    AddNode(g, "Add", {"d", "bias"}, {"a"}, "add");
    AddBatchNorm(g, "a", "y", 4);
    AddValue(g->mutable_output(), "y", {1, 4, 6, 6});
    const Fused f = FoldAffineAndCompare(m);
    EXPECT_EQ(f.count, 2);
    ASSERT_EQ(f.graph.nodes.size(), 1u);
    EXPECT_EQ(f.graph.nodes[0].covers, (std::vector<std::string>{"deconv", "add", "bn"}));
  }
}

TEST(FoldAffineIntoConvTest, WhatIsNotAPerChannelAffineMapStays) {
  // A constant that varies along a spatial axis, c / y, and a Conv output with a second reader.
  onnx::ModelProto m = ConvModel("not_affine", 13);
  auto* g = m.mutable_graph();
  AddInitializer(g, "rows", {5, 1}, [](int64_t i) { return 1.0 + static_cast<double>(i); });
  AddInitializer(g, "numerator", {1}, [](int64_t) { return 2.0; });
  AddNode(g, "Mul", {"c", "rows"}, {"m"}, "mul");
  AddNode(g, "Div", {"numerator", "m"}, {"q"}, "div");
  AddNode(g, "Add", {"q", "c"}, {"y"}, "add");
  AddOutput(m, "y");
  EXPECT_EQ(FoldAffineAndCompare(m).count, 0);
}

// Squeeze-and-excitation with a residual: x + x · s becomes x · (1 + s), and the + 1 joins the
// FusedConv that computes s as its post_shift.
TEST(FactorResidualScaleTest, ResidualScaleBecomesOneProductAndTheOneJoinsTheGate) {
  onnx::ModelProto m = ConvModel("se_residual", 13);
  auto* g = m.mutable_graph();
  AddNode(g, "GlobalAveragePool", {"c"}, {"pooled"}, "gap");
  AddInitializer(g, "w_gate", {3, 3, 1, 1}, [](int64_t i) { return Wave(i, 0.9); });
  AddNode(g, "Conv", {"pooled", "w_gate"}, {"logits"}, "gate_conv");
  AddNode(g, "HardSigmoid", {"logits"}, {"gate"}, "hsig");
  AddNode(g, "Mul", {"c", "gate"}, {"scaled"}, "mul");
  AddNode(g, "Add", {"scaled", "c"}, {"y"}, "add");
  AddOutput(m, "y");
  Graph original = ImportOrDie(m);
  Graph graph = original;
  ASSERT_EQ(FactorResidualScale(graph), 1);
  ExpectSameResults(original, graph);
  ASSERT_EQ(graph.nodes.size(), 6u);
  const Node& one_plus = graph.nodes[4];
  EXPECT_EQ(one_plus.op_type, "Add");
  EXPECT_EQ(one_plus.inputs[0], "gate");
  EXPECT_EQ(one_plus.covers, (std::vector<std::string>{"add"}));
  const Node& product = graph.nodes[5];
  EXPECT_EQ(product.op_type, "Mul");
  EXPECT_EQ(product.inputs[0], "c");
  EXPECT_EQ(product.outputs[0], "y");

  FuseConvActivations(graph);
  ExpectSameResults(original, graph);
  const Node* gate = nullptr;
  for (const Node& node : graph.nodes) {
    if (node.name == "gate_conv") gate = &node;
  }
  ASSERT_NE(gate, nullptr);
  EXPECT_EQ(gate->op_type, "FusedConv");
  EXPECT_FLOAT_EQ(gate->GetFloat("post_shift", 0), 1.0f);
  EXPECT_EQ(gate->covers, (std::vector<std::string>{"gate_conv", "hsig", "add"}));
}

// Scalar Mul / Add / Sub / Div after a FusedConv compose into one post_scale / post_shift; a Max
// after them stays a node (the clamp comes before the linear map).
TEST(FuseConvActivationsTest, ScalarArithmeticAfterTheActivationBecomesAScaleAndShift) {
  onnx::ModelProto m = ConvModel("post_linear", 13);
  auto* g = m.mutable_graph();
  AddNode(g, "Relu", {"c"}, {"r"}, "relu");
  AddInitializer(g, "k", {1}, [](int64_t) { return 1.5; });
  AddInitializer(g, "t", {}, [](int64_t) { return -0.5; });
  AddInitializer(g, "two", {1}, [](int64_t) { return 2.0; });
  AddInitializer(g, "floor", {1}, [](int64_t) { return 0.1; });
  AddNode(g, "Mul", {"k", "r"}, {"m"}, "mul");
  AddNode(g, "Add", {"m", "t"}, {"a"}, "add");
  AddNode(g, "Sub", {"two", "a"}, {"s"}, "sub");
  AddNode(g, "Div", {"s", "two"}, {"d"}, "div");
  AddNode(g, "Max", {"d", "floor"}, {"y"}, "max");
  AddOutput(m, "y");
  const Fused f = FuseAndCompare(m);
  ASSERT_EQ(f.graph.nodes.size(), 2u);
  const Node& fused = f.graph.nodes[0];
  EXPECT_EQ(fused.covers, (std::vector<std::string>{"conv", "relu", "mul", "add", "sub", "div"}));
  // (2 − (1.5 · r − 0.5)) / 2 = −0.75 · r + 1.25
  EXPECT_FLOAT_EQ(fused.GetFloat("post_scale", 0), -0.75f);
  EXPECT_FLOAT_EQ(fused.GetFloat("post_shift", 0), 1.25f);
  EXPECT_EQ(f.graph.nodes[1].op_type, "Max");
}

// ShuffleNet's channel shuffle: x [1, 6, 2, 3] → Reshape [1, g, 6/g, 2, 3] → Transpose(0, 2, 1, 3, 4) →
// Reshape `back` (torch writes [1, -1, 2, 3]); `extra_reader`: the transposed value is also an output.
onnx::ModelProto ShuffleModel(int64_t group, std::vector<int64_t> back, std::vector<int64_t> perm = {0, 2, 1, 3, 4},
                              bool extra_reader = false) {
  onnx::ModelProto m = testing::NewModel("shuffle", 13);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {1, 6, 2, 3});
  testing::AddI64Init(g, "grouped", {1, group, 6 / group, 2, 3});
  testing::AddI64Init(g, "back", back);
  AddNode(g, "Reshape", {"x", "grouped"}, {"r"}, "split");
  SetIntsAttr(AddNode(g, "Transpose", {"r"}, {"t"}, "transpose"), "perm", perm);
  AddNode(g, "Reshape", {"t", "back"}, {"y"}, "merge");
  const bool concrete = std::all_of(back.begin(), back.end(), [](int64_t d) { return d > 0; });
  AddValue(g->mutable_output(), "y", concrete ? back : std::vector<int64_t>{1, 6, 2, 3});
  if (extra_reader) AddValue(g->mutable_output(), "t", {1, 6 / group, group, 2, 3});
  return m;
}

Fused ShuffleAndCompare(const onnx::ModelProto& m) {
  Fused f;
  f.original = ImportOrDie(m);
  f.graph = f.original;
  PromoteConstantNodes(f.graph);
  f.count = FuseChannelShuffle(f.graph);
  ExpectSameResults(f.original, f.graph);
  return f;
}

TEST(FuseChannelShuffleTest, ReshapeTransposeReshapeBecomesOneNode) {
  for (const auto& [group, back] : std::vector<std::pair<int64_t, std::vector<int64_t>>>{
           {2, {1, -1, 2, 3}}, {3, {1, 6, 2, 3}}, {2, {0, 6, -1, 3}}}) {
    SCOPED_TRACE("group " + std::to_string(group));
    const Fused f = ShuffleAndCompare(ShuffleModel(group, back));
    EXPECT_EQ(f.count, 1);
    ASSERT_EQ(f.graph.nodes.size(), 1u);
    const Node& shuffle = f.graph.nodes[0];
    EXPECT_EQ(shuffle.op_type, "ChannelShuffle");
    EXPECT_EQ(shuffle.domain, kChipfitDomain);
    EXPECT_EQ(shuffle.GetInt("group", 0), group);
    EXPECT_EQ(shuffle.GetInts("shape"), (std::vector<int64_t>{1, 6, 2, 3}));
    EXPECT_EQ(shuffle.covers, (std::vector<std::string>{"split", "transpose", "merge"}));
    EXPECT_EQ(shuffle.inputs, (std::vector<std::string>{"x"}));
    EXPECT_EQ(shuffle.outputs, (std::vector<std::string>{"y"}));
  }
}

// Another permutation, a merge to another shape, an intermediate read elsewhere: not a channel shuffle.
TEST(FuseChannelShuffleTest, OtherPatternsStay) {
  EXPECT_EQ(ShuffleAndCompare(ShuffleModel(2, {1, -1, 2, 3}, {0, 1, 2, 4, 3})).count, 0);
  EXPECT_EQ(ShuffleAndCompare(ShuffleModel(2, {1, 3, 4, 3})).count, 0);
  EXPECT_EQ(ShuffleAndCompare(ShuffleModel(2, {1, -1, 2, 3}, {0, 2, 1, 3, 4}, true)).count, 0);
}

}  // namespace
}  // namespace chipfit
