// Layers as exporters write them become one kernel on the CPU, and the model's outputs stay the
// reference's: Linear layers (MatMul + bias Add, then Relu or GELU decomposed into its erf or tanh
// form) one FusedMatMul, a convolution with SiLU (x · Sigmoid(x)) one FusedConv; patterns with a
// reader outside them stay as written.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "devices/target_compiler.h"
#include "tests/core/onnx_builder.h"
#include "tests/devices/cpu/graph_test_util.h"

namespace chipfit {
namespace {

using testing::AddInitializer;
using testing::AddNode;
using testing::AddValue;

double Wave(int64_t i, double scale) { return std::sin(0.37 * static_cast<double>(i) + 0.3) * scale; }

void Scalar(onnx::GraphProto* g, const std::string& name, double v) {
  AddInitializer(g, name, {}, [v](int64_t) { return v; });
}

// y = Linear(x): MatMul(x, w) + b, with weights named after `prefix`.
std::string Linear(onnx::GraphProto* g, const std::string& x, const std::string& prefix, int64_t k, int64_t n,
                   bool bias_first = false) {
  AddInitializer(g, prefix + "_w", {k, n}, [k](int64_t i) { return Wave(i, 1.5 / std::sqrt(static_cast<double>(k))); });
  AddInitializer(g, prefix + "_b", {n}, [](int64_t i) { return Wave(i + 5, 0.3); });
  AddNode(g, "MatMul", {x, prefix + "_w"}, {prefix + "_mm"}, prefix + "_matmul");
  if (bias_first) {
    AddNode(g, "Add", {prefix + "_b", prefix + "_mm"}, {prefix + "_y"}, prefix + "_add");
  } else {
    AddNode(g, "Add", {prefix + "_mm", prefix + "_b"}, {prefix + "_y"}, prefix + "_add");
  }
  return prefix + "_y";
}

// GELU as torch exports it: Mul(Mul(x, 1 + Erf(x / √2)), 0.5); `mul_form`: x · (1/√2) and 0.5 · x first.
std::string GeluErf(onnx::GraphProto* g, const std::string& x, bool mul_form) {
  const std::string p = x + "_gelu";
  if (mul_form) {
    Scalar(g, p + "_rsqrt2", std::sqrt(0.5));
    AddNode(g, "Mul", {x, p + "_rsqrt2"}, {p + "_d"}, p + "_scale");
  } else {
    Scalar(g, p + "_sqrt2", std::sqrt(2.0));
    AddNode(g, "Div", {x, p + "_sqrt2"}, {p + "_d"}, p + "_scale");
  }
  AddNode(g, "Erf", {p + "_d"}, {p + "_e"}, p + "_erf");
  Scalar(g, p + "_one", 1.0);
  AddNode(g, "Add", {p + "_one", p + "_e"}, {p + "_a"}, p + "_plus");
  Scalar(g, p + "_half", 0.5);
  if (mul_form) {
    AddNode(g, "Mul", {p + "_half", x}, {p + "_h"}, p + "_halve");
    AddNode(g, "Mul", {p + "_h", p + "_a"}, {p + "_out"}, p + "_times");
  } else {
    AddNode(g, "Mul", {x, p + "_a"}, {p + "_m"}, p + "_times");
    AddNode(g, "Mul", {p + "_m", p + "_half"}, {p + "_out"}, p + "_halve");
  }
  return p + "_out";
}

// GPT-2's GELU: 0.5 · x · (1 + Tanh(√(2/π) · (x + 0.044715 · Pow(x, 3)))).
std::string GeluTanh(onnx::GraphProto* g, const std::string& x) {
  const std::string p = x + "_gelu";
  Scalar(g, p + "_three", 3.0);
  Scalar(g, p + "_c", 0.044715);
  Scalar(g, p + "_k", std::sqrt(2.0 / std::acos(-1.0)));
  Scalar(g, p + "_one", 1.0);
  Scalar(g, p + "_half", 0.5);
  AddNode(g, "Mul", {x, p + "_half"}, {p + "_h"}, p + "_halve");
  AddNode(g, "Pow", {x, p + "_three"}, {p + "_p"}, p + "_pow");
  AddNode(g, "Mul", {p + "_p", p + "_c"}, {p + "_q"}, p + "_cube");
  AddNode(g, "Add", {x, p + "_q"}, {p + "_s"}, p + "_sum");
  AddNode(g, "Mul", {p + "_s", p + "_k"}, {p + "_t"}, p + "_scale");
  AddNode(g, "Tanh", {p + "_t"}, {p + "_th"}, p + "_tanh");
  AddNode(g, "Add", {p + "_th", p + "_one"}, {p + "_u"}, p + "_plus");
  AddNode(g, "Mul", {p + "_h", p + "_u"}, {p + "_out"}, p + "_times");
  return p + "_out";
}

// x [2, 5, 16] through four feed-forward blocks: Linear → GELU (Div form) → Linear, Linear → GELU
// (Mul form) → Linear (bias first), Linear → GELU tanh → Linear, Linear → Relu.
onnx::ModelProto FeedForwardModel() {
  onnx::ModelProto m = testing::NewModel("feed_forward", 17);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {2, 5, 16});
  std::string h = GeluErf(g, Linear(g, "x", "fc1", 16, 32), false);
  h = Linear(g, h, "fc2", 32, 16);
  h = GeluErf(g, Linear(g, h, "fc3", 16, 24), true);
  h = Linear(g, h, "fc4", 24, 16, true);
  h = GeluTanh(g, Linear(g, h, "fc5", 16, 32));
  h = Linear(g, h, "fc6", 32, 8);
  AddNode(g, "Relu", {Linear(g, h, "fc7", 8, 8)}, {"y"}, "relu");
  AddValue(g->mutable_output(), "y", {2, 5, 8});
  return m;
}

Tensor Input(const Shape& shape) {
  Tensor x(DType::kF32, shape);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(Wave(i * 3, 2.0));
  return x;
}

double MaxAbsDiff(const Tensor& a, const Tensor& b) {
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i) worst = std::max(worst, std::fabs(a.GetAsDouble(i) - b.GetAsDouble(i)));
  return worst;
}

TEST(MatMulFusionTest, LinearLayersWithGeluAndReluBecomeOneKernelEach) {
  const Graph graph = testing::ImportOrFail(FeedForwardModel());
  auto cpu = CompileForTarget(graph, Target{.kind = DeviceKind::kCpu, .precision = Precision::kFp32});
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  auto ref = CompileForTarget(graph, Target{});
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  ASSERT_EQ((*cpu)->kernels().size(), 7u) << "one kernel per linear layer";
  for (const KernelInfo& k : (*cpu)->kernels()) {
    EXPECT_EQ(k.op_type, "FusedMatMul") << k.name;
    EXPECT_EQ(k.device, "cpu") << k.name << ": " << k.fallback_reason;
  }
  // The fused kernels name every ONNX node they compute: 2 per linear layer, 5 per erf GELU, 8 per
  // tanh GELU, 1 Relu.
  size_t covered = 0;
  for (const KernelInfo& k : (*cpu)->kernels()) covered += k.onnx_nodes.size();
  EXPECT_EQ(covered, 7u * 2 + 5 + 5 + 8 + 1);
  const std::map<std::string, Tensor> inputs = {{"x", Input({2, 5, 16})}};
  auto got = (*cpu)->Run(inputs);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  auto want = (*ref)->Run(inputs);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  ASSERT_EQ((*got)[0].shape(), (*want)[0].shape());
  EXPECT_LE(MaxAbsDiff((*got)[0], (*want)[0]), 1e-4);
}

TEST(MatMulFusionTest, Bf16AndInt8TargetsRunTheFusedLayers) {
  const Graph graph = testing::ImportOrFail(FeedForwardModel());
  auto ref = CompileForTarget(graph, Target{});
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  const std::map<std::string, Tensor> inputs = {{"x", Input({2, 5, 16})}};
  auto want = (*ref)->Run(inputs);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  for (Precision precision : {Precision::kBf16, Precision::kInt8}) {
    SCOPED_TRACE(std::string(PrecisionName(precision)));
    auto model = CompileForTarget(graph, Target{.kind = DeviceKind::kCpu, .precision = precision});
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    for (const KernelInfo& k : (*model)->kernels()) EXPECT_EQ(k.op_type, "FusedMatMul") << k.name;
    auto got = (*model)->Run(inputs);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    // Low precision: close in relative terms (the outputs are O(1)).
    EXPECT_LE(MaxAbsDiff((*got)[0], (*want)[0]), 0.15);
  }
}

TEST(MatMulFusionTest, PatternsWithAnOutsideReaderStayAsWritten) {
  onnx::ModelProto m = testing::NewModel("outside_reader", 17);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {3, 16});
  const std::string y = Linear(g, "x", "fc", 16, 16);
  const std::string gelu = GeluErf(g, y, false);
  AddValue(g->mutable_output(), gelu, {3, 16});
  AddValue(g->mutable_output(), "fc_mm", {3, 16});  // the product itself is an output
  const Graph graph = testing::ImportOrFail(m);
  auto cpu = CompileForTarget(graph, Target{.kind = DeviceKind::kCpu, .precision = Precision::kFp32});
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  int fused = 0, matmuls = 0;
  for (const KernelInfo& k : (*cpu)->kernels()) {
    fused += k.op_type == "FusedMatMul" ? 1 : 0;
    matmuls += k.op_type == "MatMul" ? 1 : 0;
  }
  EXPECT_EQ(fused, 0);
  EXPECT_EQ(matmuls, 1);
  auto ref = CompileForTarget(graph, Target{});
  ASSERT_TRUE(ref.ok());
  const std::map<std::string, Tensor> inputs = {{"x", Input({3, 16})}};
  auto got = (*cpu)->Run(inputs);
  auto want = (*ref)->Run(inputs);
  ASSERT_TRUE(got.ok() && want.ok());
  for (size_t i = 0; i < got->size(); ++i) EXPECT_LE(MaxAbsDiff((*got)[i], (*want)[i]), 1e-4);
}

// Conv → Sigmoid → Mul(conv, sigmoid): EfficientNet's SiLU, as oneDNN's swish post-op, in fp32, bf16
// and int8.
TEST(MatMulFusionTest, ConvWithSiluIsOneFusedConv) {
  onnx::ModelProto m = testing::NewModel("conv_silu", 13);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {1, 4, 9, 9});
  AddInitializer(g, "w", {8, 4, 3, 3}, [](int64_t i) { return Wave(i, 0.4); });
  AddInitializer(g, "b", {8}, [](int64_t i) { return Wave(i + 3, 0.2); });
  auto* conv = AddNode(g, "Conv", {"x", "w", "b"}, {"c"}, "conv");
  auto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  AddNode(g, "Sigmoid", {"c"}, {"s"}, "sig");
  AddNode(g, "Mul", {"c", "s"}, {"y"}, "silu");
  AddValue(g->mutable_output(), "y", {1, 8, 9, 9});
  const Graph graph = testing::ImportOrFail(m);
  auto ref = CompileForTarget(graph, Target{});
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  const std::map<std::string, Tensor> inputs = {{"x", Input({1, 4, 9, 9})}};
  auto want = (*ref)->Run(inputs);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  for (Precision precision : {Precision::kFp32, Precision::kBf16, Precision::kInt8}) {
    SCOPED_TRACE(std::string(PrecisionName(precision)));
    auto cpu = CompileForTarget(graph, Target{.kind = DeviceKind::kCpu, .precision = precision});
    ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
    size_t convs = 0;
    for (const KernelInfo& k : (*cpu)->kernels()) {
      if (k.op_type != "FusedConv") continue;
      ++convs;
      EXPECT_EQ(k.onnx_nodes, (std::vector<std::string>{"conv", "sig", "silu"}));
      EXPECT_EQ(k.device, "cpu") << k.fallback_reason;
    }
    EXPECT_EQ(convs, 1u);
    auto got = (*cpu)->Run(inputs);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_LE(MaxAbsDiff((*got)[0], (*want)[0]), precision == Precision::kFp32 ? 1e-4 : 0.1);
  }
}

}  // namespace
}  // namespace chipfit
