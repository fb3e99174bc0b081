// FuseQdqPatterns: which DequantizeLinear → Conv/MatMul/Gemm → QuantizeLinear patterns become QLinearConv or
// QLinearMatMul, what they cover, and that the fused graph computes the same quantized values (within one
// step of the output scale: integer accumulation rounds once, the float graph twice).
#include "core/graph/qdq_fusion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/graph/onnx_import.h"
#include "core/graph/onnx_loader.h"
#include "core/graph/passes.h"
#include "core/runtime/compiled_model.h"
#include "core/tensor/random.h"
#include "tests/core/onnx_builder.h"

namespace chipfit {
namespace {

using testing::AddInitializer;
using testing::AddNode;
using testing::AddValue;

constexpr int kU8 = onnx::TensorProto_DataType_UINT8;
constexpr int kI8 = onnx::TensorProto_DataType_INT8;
constexpr int kI32 = onnx::TensorProto_DataType_INT32;

// An integer initializer (uint8, int8, int32 are all stored in int32_data).
void AddIntInit(onnx::GraphProto* g, const std::string& name, int elem_type, const std::vector<int64_t>& dims,
                const std::vector<int64_t>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(elem_type);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int32_data(static_cast<int32_t>(v));
}

// Deterministic int8 weights spread over [-127, 127].
std::vector<int64_t> Weights(int64_t count) {
  std::vector<int64_t> w(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) w[static_cast<size_t>(i)] = (i * 37 + 11) % 255 - 127;
  return w;
}

void SetInt(onnx::NodeProto* n, const std::string& name, int64_t v) { testing::SetIntAttr(n, name, v); }

// x (float) → QuantizeLinear "x_quant" → DequantizeLinear "x_dequant": the quantized activation every
// model below starts from, as ONNX Runtime's static quantizer writes it.
void AddQuantizedInput(onnx::GraphProto* g, const std::string& x, const std::vector<int64_t>& dims, float scale,
                       int64_t zp) {
  AddValue(g->mutable_input(), x, dims);
  AddInitializer(g, x + "_scale", {}, [&](int64_t) { return scale; });
  AddIntInit(g, x + "_zp", kU8, {}, {zp});
  AddNode(g, "QuantizeLinear", {x, x + "_scale", x + "_zp"}, {x + "_q"}, x + "_quant");
  AddNode(g, "DequantizeLinear", {x + "_q", x + "_scale", x + "_zp"}, {x + "_dq"}, x + "_dequant");
}

// `in` → QuantizeLinear "y_quant" → DequantizeLinear "y_dequant" → graph output "y".
void AddQuantizedOutput(onnx::GraphProto* g, const std::string& in, const std::vector<int64_t>& dims, float scale,
                        int64_t zp) {
  AddInitializer(g, "y_scale", {}, [&](int64_t) { return scale; });
  AddIntInit(g, "y_zp", kU8, {}, {zp});
  AddNode(g, "QuantizeLinear", {in, "y_scale", "y_zp"}, {"y_q"}, "y_quant");
  AddNode(g, "DequantizeLinear", {"y_q", "y_scale", "y_zp"}, {"y"}, "y_dequant");
  AddValue(g->mutable_output(), "y", dims);
}

struct ConvSpec {
  bool per_channel = false;
  std::string activation{};  // "", "Relu", "Clip"
  int64_t y_zp = 128;
  float y_scale = 0.05f;
  bool int32_bias = false;       // the bias as DequantizeLinear(int32) at scale sx·sw, as ORT writes it
  bool x_dq_output = false;      // x_dq also a graph output: the DequantizeLinear stays for it
  bool conv_output = false;      // the Conv's float output also a graph output: no fusion
  bool runtime_weights = false;  // w_q a graph input: not constant, no fusion
};

constexpr float kXScale = 0.02f, kYScale = 0.05f;
float WScale(int64_t m, bool per_channel) { return per_channel ? 0.004f + 0.002f * static_cast<float>(m) : 0.006f; }

// x [1, 4, 8, 8] → Q/DQ → Conv "conv" (6 output channels, 3x3, pads 1, DQ'd int8 weights, bias) [→ activation]
// → Q/DQ → y [1, 6, 8, 8].
onnx::ModelProto ConvModel(const ConvSpec& s) {
  onnx::ModelProto m = testing::NewModel("qdq_conv", 13);
  auto* g = m.mutable_graph();
  AddQuantizedInput(g, "x", {1, 4, 8, 8}, kXScale, 128);
  const int64_t channels = 6;
  if (s.runtime_weights) {
    testing::AddTypedValue(g->mutable_input(), "w_q", kI8, {channels, 4, 3, 3});
  } else {
    AddIntInit(g, "w_q", kI8, {channels, 4, 3, 3}, Weights(channels * 36));
  }
  if (s.per_channel) {
    AddInitializer(g, "w_scale", {channels}, [](int64_t c) { return WScale(c, true); });
    AddIntInit(g, "w_zp", kI8, {channels}, std::vector<int64_t>(channels, 0));
  } else {
    AddInitializer(g, "w_scale", {}, [](int64_t) { return WScale(0, false); });
    AddIntInit(g, "w_zp", kI8, {}, {0});
  }
  auto* wdq = AddNode(g, "DequantizeLinear", {"w_q", "w_scale", "w_zp"}, {"w_dq"}, "w_dequant");
  SetInt(wdq, "axis", 0);
  std::string bias = "b";
  if (s.int32_bias) {
    std::vector<int64_t> b(channels);
    for (int64_t c = 0; c < channels; ++c) b[static_cast<size_t>(c)] = 40 * c - 90;
    AddIntInit(g, "b_q", kI32, {channels}, b);
    AddInitializer(g, "b_scale", {channels}, [&](int64_t c) { return kXScale * WScale(c, s.per_channel); });
    auto* bdq = AddNode(g, "DequantizeLinear", {"b_q", "b_scale"}, {"b_dq"}, "b_dequant");
    SetInt(bdq, "axis", 0);
    bias = "b_dq";
  } else {
    AddInitializer(g, "b", {channels}, [](int64_t c) { return 0.1 * static_cast<double>(c) - 0.2; });
  }
  auto* conv = AddNode(g, "Conv", {"x_dq", "w_dq", bias}, {"c"}, "conv");
  testing::AddIntsAttr(conv, "pads", {1, 1, 1, 1});
  std::string out = "c";
  if (s.activation == "Relu") {
    AddNode(g, "Relu", {"c"}, {"r"}, "relu");
    out = "r";
  } else if (s.activation == "Clip") {
    AddInitializer(g, "lo", {}, [](int64_t) { return 0.0; });
    AddInitializer(g, "hi", {}, [](int64_t) { return 6.0; });
    AddNode(g, "Clip", {"c", "lo", "hi"}, {"r"}, "clip");
    out = "r";
  }
  AddQuantizedOutput(g, out, {1, channels, 8, 8}, s.y_scale, s.y_zp);
  if (s.x_dq_output) AddValue(g->mutable_output(), "x_dq", {1, 4, 8, 8});
  if (s.conv_output) AddValue(g->mutable_output(), "c", {1, channels, 8, 8});
  return m;
}

Graph ImportOrDie(const onnx::ModelProto& m) {
  auto loaded = CheckOnnxModel(m, "test model");
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto graph = ImportModel(*loaded);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return graph.ok() ? *graph : Graph{};
}

struct Fused {
  Graph original, graph;
  QdqFusionResult result;
};

Fused Fuse(const onnx::ModelProto& m, const QdqFusionOptions& options = {}) {
  Fused f;
  f.original = ImportOrDie(m);
  f.graph = f.original;
  f.result = FuseQdqPatterns(f.graph, options);
  return f;
}

const Node* FindOp(const Graph& graph, const std::string& op_type) {
  for (const Node& node : graph.nodes) {
    if (node.op_type == op_type) return &node;
  }
  return nullptr;
}

// Both graphs on the reference kernels with the same inputs (uniform in [-1, 1), scaled): the float
// output "y" agrees within one output step everywhere, and exactly on at least 95 % of the values.
void ExpectSameQuantizedResults(const Graph& original, const Graph& fused, float y_scale, float input_scale = 2.0f) {
  auto a = Compile(original, Target{});
  auto b = Compile(fused, Target{});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  std::map<std::string, Tensor> inputs;
  uint64_t seed = 11;
  for (const ValueDesc& in : original.inputs) {
    Tensor t = SeededTensor(in.dtype, in.shape, seed++);
    if (t.dtype() == DType::kF32) {
      for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] *= input_scale;
    }
    inputs[in.name] = std::move(t);
  }
  auto ya = (*a)->Run(inputs);
  auto yb = (*b)->Run(inputs);
  ASSERT_TRUE(ya.ok()) << ya.status().ToString();
  ASSERT_TRUE(yb.ok()) << yb.status().ToString();
  const Tensor& ta = (*ya)[0];
  const Tensor& tb = (*yb)[0];
  ASSERT_EQ(ta.shape(), tb.shape());
  int64_t differ = 0, distinct = 0;
  for (int64_t i = 0; i < ta.numel(); ++i) {
    const double d = std::fabs(ta.GetAsDouble(i) - tb.GetAsDouble(i));
    ASSERT_LE(d, y_scale * 1.001) << "at flat index " << i;
    differ += d != 0;
    distinct += i > 0 && ta.GetAsDouble(i) != ta.GetAsDouble(i - 1);
  }
  EXPECT_LE(differ * 20, ta.numel()) << differ << " of " << ta.numel() << " values differ";
  EXPECT_GT(distinct * 2, ta.numel()) << "the output should not be saturated or constant";
}

TEST(FuseQdqPatternsTest, PerTensorConvBecomesQLinearConvCoveringFourNodes) {
  const Fused f = Fuse(ConvModel({}));
  EXPECT_EQ(f.result.fused, 1);
  EXPECT_EQ(f.result.fused_nodes, std::vector<std::string>{"conv"});
  const Node* q = FindOp(f.graph, "QLinearConv");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->name, "conv");
  EXPECT_EQ(q->domain, "");
  EXPECT_EQ(q->covers, (std::vector<std::string>{"conv", "x_dequant", "w_dequant", "y_quant"}));
  EXPECT_EQ(q->outputs, std::vector<std::string>{"y_q"});
  ASSERT_EQ(q->inputs.size(), 9u);
  EXPECT_EQ(q->inputs[0], "x_q");
  EXPECT_EQ(q->inputs[3], "w_q");
  EXPECT_EQ(q->GetInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  // The bias at scale sx·sw: round((0.1·m − 0.2) / (0.02 · 0.006)).
  const Tensor& bias = f.graph.initializers.at(q->inputs[8]);
  ASSERT_EQ(bias.dtype(), DType::kI32);
  EXPECT_EQ(bias.data<int32_t>()[0], static_cast<int32_t>(std::nearbyint(-0.2 / (0.02 * 0.006))));
  EXPECT_EQ(FindOp(f.graph, "Conv"), nullptr);
  EXPECT_EQ(f.graph.nodes.size(), 3u);               // x_quant, conv, y_dequant
  EXPECT_FALSE(f.graph.initializers.contains("b"));  // the float bias has no reader left
  ExpectSameQuantizedResults(f.original, f.graph, kYScale);
}

TEST(FuseQdqPatternsTest, PerChannelConvWithReluAndInt32Bias) {
  const Fused f = Fuse(ConvModel({.per_channel = true, .activation = "Relu", .y_zp = 0, .int32_bias = true}));
  ASSERT_EQ(f.result.fused, 1);
  const Node* q = FindOp(f.graph, "QLinearConv");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->covers, (std::vector<std::string>{"conv", "x_dequant", "w_dequant", "b_dequant", "relu", "y_quant"}));
  EXPECT_EQ(f.graph.initializers.at(q->inputs[4]).numel(), 6);  // w_scale per output channel
  // Written at exactly sx·sw[m]: the int32 bias is taken as it is.
  const Tensor& bias = f.graph.initializers.at(q->inputs[8]);
  for (int64_t c = 0; c < 6; ++c) EXPECT_EQ(bias.data<int32_t>()[c], 40 * c - 90);
  ExpectSameQuantizedResults(f.original, f.graph, kYScale);
}

TEST(FuseQdqPatternsTest, ClipThatTheOutputRangeMakesExactFuses) {
  // y_scale 6/255 with zero point 0 saturates exactly at 0 and 6: Clip(0, 6) changes no quantized value.
  const Fused f = Fuse(ConvModel({.activation = "Clip", .y_zp = 0, .y_scale = 6.0f / 255.0f}));
  ASSERT_EQ(f.result.fused, 1);
  EXPECT_EQ(FindOp(f.graph, "QLinearConv")->covers,
            (std::vector<std::string>{"conv", "x_dequant", "w_dequant", "clip", "y_quant"}));
  EXPECT_FALSE(f.graph.initializers.contains("lo"));
  ExpectSameQuantizedResults(f.original, f.graph, 6.0f / 255.0f);
}

TEST(FuseQdqPatternsTest, ActivationThatClipsInsideTheOutputRangeDoesNotFuse) {
  // y_scale 0.05 with zero point 0 saturates at 0 and 12.75; Clip(0, 6) clips inside: not redundant.
  const Fused inside = Fuse(ConvModel({.activation = "Clip", .y_zp = 0}));
  EXPECT_EQ(inside.result.fused, 0);
  ASSERT_TRUE(inside.result.left.contains("conv"));
  EXPECT_NE(inside.result.left.at("conv").find("clips inside"), std::string::npos) << inside.result.left.at("conv");
  // Relu with zero point 128 keeps quantized values below 128 apart from 128: not redundant either.
  const Fused relu = Fuse(ConvModel({.activation = "Relu", .y_zp = 128}));
  EXPECT_EQ(relu.result.fused, 0);
}

TEST(FuseQdqPatternsTest, DequantizeReadByAnotherNodeStaysForIt) {
  const Fused f = Fuse(ConvModel({.x_dq_output = true}));
  ASSERT_EQ(f.result.fused, 1);
  const Node* q = FindOp(f.graph, "QLinearConv");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->covers, (std::vector<std::string>{"conv", "w_dequant", "y_quant"}));
  ASSERT_NE(f.graph.FindNode("x_dequant"), nullptr);
  ExpectSameQuantizedResults(f.original, f.graph, kYScale);
}

TEST(FuseQdqPatternsTest, ConvOutputReadTwiceDoesNotFuse) {
  const Fused f = Fuse(ConvModel({.conv_output = true}));
  EXPECT_EQ(f.result.fused, 0);
  EXPECT_NE(FindOp(f.graph, "Conv"), nullptr);
  ASSERT_TRUE(f.result.left.contains("conv"));
  EXPECT_NE(f.result.left.at("conv").find("other readers"), std::string::npos) << f.result.left.at("conv");
}

TEST(FuseQdqPatternsTest, WeightsComputedAtRunTimeDoNotFuse) {
  const Fused f = Fuse(ConvModel({.runtime_weights = true}));
  EXPECT_EQ(f.result.fused, 0);
  EXPECT_EQ(f.graph.nodes.size(), f.original.nodes.size());
  EXPECT_TRUE(f.result.left.contains("conv"));
}

TEST(FuseQdqPatternsTest, KeptLayerAndMissingDeviceKernelDoNotFuse) {
  EXPECT_EQ(Fuse(ConvModel({}), {.keep = {"conv"}}).result.fused, 0);
  const Fused f = Fuse(ConvModel({}), {.conv = false});
  EXPECT_EQ(f.result.fused, 0);
  EXPECT_NE(f.result.left.at("conv").find("no QLinearConv kernel"), std::string::npos);
}

// a [2, 3, 8] → Q/DQ → MatMul "matmul" with b → Q/DQ → y [2, 3, 5]. b is a DQ'd constant int8 [8, 5]
// with a scale per column, or a second quantized input [8, 5] (activation × activation).
onnx::ModelProto MatMulModel(bool constant_b) {
  onnx::ModelProto m = testing::NewModel("qdq_matmul", 13);
  auto* g = m.mutable_graph();
  AddQuantizedInput(g, "a", {2, 3, 8}, 0.02f, 128);
  if (constant_b) {
    AddIntInit(g, "b_q", kI8, {8, 5}, Weights(40));
    AddInitializer(g, "b_scale", {5}, [](int64_t c) { return 0.01 + 0.002 * static_cast<double>(c); });
    auto* dq = AddNode(g, "DequantizeLinear", {"b_q", "b_scale"}, {"b_dq"}, "b_dequant");
    SetInt(dq, "axis", 1);
  } else {
    AddQuantizedInput(g, "b", {8, 5}, 0.02f, 120);
  }
  AddNode(g, "MatMul", {"a_dq", "b_dq"}, {"mm"}, "matmul");
  AddQuantizedOutput(g, "mm", {2, 3, 5}, constant_b ? 0.03f : 0.02f, 128);
  return m;
}

TEST(FuseQdqPatternsTest, MatMulWithConstantPerColumnWeights) {
  const Fused f = Fuse(MatMulModel(true));
  ASSERT_EQ(f.result.fused, 1);
  const Node* q = FindOp(f.graph, "QLinearMatMul");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->name, "matmul");
  EXPECT_EQ(q->covers, (std::vector<std::string>{"matmul", "a_dequant", "b_dequant", "y_quant"}));
  EXPECT_EQ(q->inputs[3], "b_q");
  EXPECT_EQ(f.graph.initializers.at(q->inputs[5]).dtype(), DType::kI8);  // b's zero point made, of b's type
  ExpectSameQuantizedResults(f.original, f.graph, 0.03f);
}

TEST(FuseQdqPatternsTest, ActivationTimesActivationMatMul) {
  const Fused f = Fuse(MatMulModel(false));
  ASSERT_EQ(f.result.fused, 1);
  const Node* q = FindOp(f.graph, "QLinearMatMul");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->inputs[3], "b_q");
  EXPECT_EQ(q->covers, (std::vector<std::string>{"matmul", "a_dequant", "b_dequant", "y_quant"}));
  ExpectSameQuantizedResults(f.original, f.graph, 0.02f);
}

// a [3, 8] → Q/DQ → Gemm "gemm" with DQ'd int8 B [5, 8] (transB, per output channel) [+ C] → Q/DQ → y [3, 5].
onnx::ModelProto GemmModel(bool trans_a, bool with_c) {
  onnx::ModelProto m = testing::NewModel("qdq_gemm", 13);
  auto* g = m.mutable_graph();
  AddQuantizedInput(g, "a", trans_a ? std::vector<int64_t>{8, 3} : std::vector<int64_t>{3, 8}, 0.02f, 128);
  AddIntInit(g, "b_q", kI8, {5, 8}, Weights(40));
  AddInitializer(g, "b_scale", {5}, [](int64_t c) { return 0.01 + 0.002 * static_cast<double>(c); });
  auto* dq = AddNode(g, "DequantizeLinear", {"b_q", "b_scale"}, {"b_dq"}, "b_dequant");
  SetInt(dq, "axis", 0);
  std::vector<std::string> inputs = {"a_dq", "b_dq"};
  if (with_c) {
    AddInitializer(g, "c", {5}, [](int64_t c) { return 0.1 * static_cast<double>(c); });
    inputs.push_back("c");
  }
  auto* gemm = AddNode(g, "Gemm", inputs, {"gm"}, "gemm");
  SetInt(gemm, "transB", 1);
  if (trans_a) SetInt(gemm, "transA", 1);
  AddQuantizedOutput(g, "gm", {3, 5}, 0.03f, 128);
  return m;
}

TEST(FuseQdqPatternsTest, GemmWithTransposedConstantBBecomesQLinearMatMul) {
  const Fused f = Fuse(GemmModel(false, false));
  ASSERT_EQ(f.result.fused, 1);
  const Node* q = FindOp(f.graph, "QLinearMatMul");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->name, "gemm");
  const Tensor& b = f.graph.initializers.at(q->inputs[3]);
  EXPECT_EQ(b.shape(), (Shape{8, 5}));  // stored [N, K], read as [K, N]
  EXPECT_EQ(b.data<int8_t>()[1], Weights(40)[8]);
  ExpectSameQuantizedResults(f.original, f.graph, 0.03f);
}

TEST(FuseQdqPatternsTest, GemmWithTransAStaysAsWritten) {
  const Fused trans_a = Fuse(GemmModel(true, false));
  EXPECT_EQ(trans_a.result.fused, 0);
  EXPECT_NE(trans_a.result.left.at("gemm").find("transA"), std::string::npos);
  EXPECT_EQ(trans_a.graph.nodes.size(), trans_a.original.nodes.size());
}

TEST(FuseQdqPatternsTest, GemmWithBiasBecomesQLinearGemm) {
  const Fused f = Fuse(GemmModel(false, true));
  ASSERT_EQ(f.result.fused, 1);
  const Node* q = FindOp(f.graph, "QLinearGemm");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->domain, "com.chipfit");
  ASSERT_EQ(q->inputs.size(), 9u);
  // C = 0.1·n at scale a_scale·b_scale[n] = 0.02·(0.01 + 0.002·n), rounded to int32.
  const Tensor& bias = f.graph.initializers.at(q->inputs[8]);
  ASSERT_EQ(bias.dtype(), DType::kI32);
  EXPECT_EQ(bias.data<int32_t>()[0], 0);
  EXPECT_EQ(bias.data<int32_t>()[4], static_cast<int32_t>(std::nearbyint(0.4 / (0.02f * (0.01f + 0.008f)))));
  ExpectSameQuantizedResults(f.original, f.graph, 0.03f);
}

TEST(FuseQdqPatternsTest, GemmWithBiasStaysWhenTheDeviceHasNoQLinearGemm) {
  const Fused f = Fuse(GemmModel(false, true), {.gemm = false});
  EXPECT_EQ(f.result.fused, 0);
  EXPECT_NE(f.result.left.at("gemm").find("no QLinearGemm kernel"), std::string::npos);
}

TEST(FuseQdqPatternsTest, FloatModelIsUntouched) {
  onnx::ModelProto m = testing::NewModel("float_conv", 13);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {1, 2, 5, 5});
  AddValue(g->mutable_output(), "y", {1, 3, 3, 3});
  AddInitializer(g, "w", {3, 2, 3, 3}, [](int64_t i) { return 0.1 * static_cast<double>(i % 7); });
  AddNode(g, "Conv", {"x", "w"}, {"y"}, "conv");
  const Fused f = Fuse(m);
  EXPECT_EQ(f.result.fused, 0);
  EXPECT_TRUE(f.result.left.empty());  // not a QDQ layer at all: nothing to explain
}

}  // namespace
}  // namespace chipfit
