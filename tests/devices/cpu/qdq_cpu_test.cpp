// A QDQ model on the CPU device: cpu:int8 runs its DequantizeLinear → Conv → QuantizeLinear pattern on oneDNN's
// int8 QLinearConv with the model's own scales (no calibration) and matches the graph as written on ref:fp32;
// cpu:fp32 runs the graph as written.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "core/graph/onnx_import.h"
#include "core/graph/onnx_loader.h"
#include "core/tensor/metrics.h"
#include "core/tensor/random.h"
#include "devices/target_compiler.h"
#include "tests/core/onnx_builder.h"

namespace chipfit {
namespace {

using testing::AddInitializer;
using testing::AddNode;
using testing::AddValue;

void AddIntInit(onnx::GraphProto* g, const std::string& name, int elem_type, const std::vector<int64_t>& dims,
                const std::vector<int64_t>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(elem_type);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int32_data(static_cast<int32_t>(v));
}

// x [1, 16, 20, 20] → Q/DQ (u8) → Conv "conv" (24 channels, 3x3, pads 1, int8 weights per tensor or per output
// channel, float bias) [→ Relu] → Q/DQ (u8) → y: the layout ONNX Runtime's static quantizer writes.
onnx::ModelProto QdqConvModel(bool per_channel, bool relu) {
  constexpr int kU8 = onnx::TensorProto_DataType_UINT8, kI8 = onnx::TensorProto_DataType_INT8;
  const int64_t c_in = 16, c_out = 24;
  onnx::ModelProto m = testing::NewModel("qdq_conv_cpu", 13);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {1, c_in, 20, 20});
  AddInitializer(g, "x_scale", {}, [](int64_t) { return 0.01; });
  AddIntInit(g, "x_zp", kU8, {}, {128});
  AddNode(g, "QuantizeLinear", {"x", "x_scale", "x_zp"}, {"x_q"}, "x_quant");
  AddNode(g, "DequantizeLinear", {"x_q", "x_scale", "x_zp"}, {"x_dq"}, "x_dequant");
  std::vector<int64_t> w(static_cast<size_t>(c_out * c_in * 9));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int64_t>((i * 37 + 11) % 255) - 127;
  AddIntInit(g, "w_q", kI8, {c_out, c_in, 3, 3}, w);
  const std::vector<int64_t> scale_dims = per_channel ? std::vector<int64_t>{c_out} : std::vector<int64_t>{};
  AddInitializer(g, "w_scale", scale_dims, [](int64_t c) { return 0.002 + 0.0002 * static_cast<double>(c); });
  auto* wdq = AddNode(g, "DequantizeLinear", {"w_q", "w_scale"}, {"w_dq"}, "w_dequant");
  testing::SetIntAttr(wdq, "axis", 0);
  AddInitializer(g, "b", {c_out}, [](int64_t c) { return 0.05 * static_cast<double>(c) - 0.5; });
  auto* conv = AddNode(g, "Conv", {"x_dq", "w_dq", "b"}, {"c"}, "conv");
  testing::AddIntsAttr(conv, "pads", {1, 1, 1, 1});
  if (relu) AddNode(g, "Relu", {"c"}, {"r"}, "relu");
  AddInitializer(g, "y_scale", {}, [](int64_t) { return 0.02; });
  AddIntInit(g, "y_zp", kU8, {}, {relu ? 0 : 128});
  AddNode(g, "QuantizeLinear", {relu ? "r" : "c", "y_scale", "y_zp"}, {"y_q"}, "y_quant");
  AddNode(g, "DequantizeLinear", {"y_q", "y_scale", "y_zp"}, {"y"}, "y_dequant");
  AddValue(g->mutable_output(), "y", {1, c_out, 20, 20});
  return m;
}

// x [4, 64] → Q/DQ (u8) → Gemm "fc" (transB, int8 weights [32, 64] per output channel, C as ONNX Runtime's
// quantizer writes it: DequantizeLinear of int32 at x_scale·w_scale[n]) → Q/DQ (u8) → y [4, 32].
onnx::ModelProto QdqGemmModel() {
  constexpr int kU8 = onnx::TensorProto_DataType_UINT8, kI8 = onnx::TensorProto_DataType_INT8;
  constexpr int kI32 = onnx::TensorProto_DataType_INT32;
  const int64_t k = 64, n = 32;
  onnx::ModelProto m = testing::NewModel("qdq_gemm_cpu", 13);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {4, k});
  AddInitializer(g, "x_scale", {}, [](int64_t) { return 0.01; });
  AddIntInit(g, "x_zp", kU8, {}, {128});
  AddNode(g, "QuantizeLinear", {"x", "x_scale", "x_zp"}, {"x_q"}, "x_quant");
  AddNode(g, "DequantizeLinear", {"x_q", "x_scale", "x_zp"}, {"x_dq"}, "x_dequant");
  std::vector<int64_t> w(static_cast<size_t>(n * k));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int64_t>((i * 53 + 7) % 255) - 127;
  AddIntInit(g, "w_q", kI8, {n, k}, w);
  auto w_scale = [](int64_t c) { return 0.002 + 0.0001 * static_cast<double>(c); };
  AddInitializer(g, "w_scale", {n}, w_scale);
  auto* wdq = AddNode(g, "DequantizeLinear", {"w_q", "w_scale"}, {"w_dq"}, "w_dequant");
  testing::SetIntAttr(wdq, "axis", 0);
  std::vector<int64_t> bias(static_cast<size_t>(n));
  for (int64_t c = 0; c < n; ++c) bias[static_cast<size_t>(c)] = 40 * c - 600;
  AddIntInit(g, "b_q", kI32, {n}, bias);
  AddInitializer(g, "b_scale", {n},
                 [&](int64_t c) { return static_cast<double>(0.01f * static_cast<float>(w_scale(c))); });
  testing::SetIntAttr(AddNode(g, "DequantizeLinear", {"b_q", "b_scale"}, {"b_dq"}, "b_dequant"), "axis", 0);
  auto* gemm = AddNode(g, "Gemm", {"x_dq", "w_dq", "b_dq"}, {"f"}, "fc");
  testing::SetIntAttr(gemm, "transB", 1);
  AddInitializer(g, "y_scale", {}, [](int64_t) { return 0.02; });
  AddIntInit(g, "y_zp", kU8, {}, {128});
  AddNode(g, "QuantizeLinear", {"f", "y_scale", "y_zp"}, {"y_q"}, "y_quant");
  AddNode(g, "DequantizeLinear", {"y_q", "y_scale", "y_zp"}, {"y"}, "y_dequant");
  AddValue(g->mutable_output(), "y", {4, n});
  return m;
}

Graph Import(const onnx::ModelProto& m) {
  auto loaded = CheckOnnxModel(m, "qdq test model");
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto graph = ImportModel(*loaded);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return graph.ok() ? *graph : Graph{};
}

std::map<std::string, Tensor> Inputs(const Graph& graph) {
  Tensor x = SeededTensor(DType::kF32, graph.inputs[0].shape, 5);  // [-1, 1): within x's quantized range
  return {{"x", std::move(x)}};
}

// Runs `graph` on cpu:int8 and on ref:fp32 as written; the int8 compile must fuse (into `fused_op` on
// `implementation`) and not calibrate.
void ExpectFusedAndAccurate(const Graph& graph, const std::vector<std::string>& covers,
                            const std::string& fused_op = "QLinearConv",
                            const std::string& implementation = "onednn:qlinearconv") {
  QuantReport report;
  const Target cpu_int8{.kind = DeviceKind::kCpu, .precision = Precision::kInt8};
  auto int8 = CompileForTarget(graph, cpu_int8, {}, {}, &report);
  ASSERT_TRUE(int8.ok()) << int8.status().ToString();
  auto ref = CompileForTarget(graph, Target{});
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();

  const KernelInfo* qconv = nullptr;
  for (const KernelInfo& k : (*int8)->kernels()) {
    if (k.op_type == fused_op) {
      qconv = &k;
    } else if (k.op_type != "Reorder") {  // the executor's own layout steps have no ONNX node
      // Everything outside the pattern runs as written, and says so.
      EXPECT_EQ(k.precision, "fp32") << k.name;
      EXPECT_EQ(k.precision_reason.rfind("fp32 as written", 0), 0u) << k.name << ": " << k.precision_reason;
    }
  }
  ASSERT_NE(qconv, nullptr) << "the DQ → layer → Q pattern did not become a " << fused_op;
  EXPECT_EQ(qconv->name, covers.front());
  EXPECT_EQ(qconv->implementation, implementation);
  EXPECT_EQ(qconv->precision, "int8");
  EXPECT_TRUE(qconv->fallback_reason.empty()) << qconv->fallback_reason;
  EXPECT_EQ(qconv->onnx_nodes, covers);

  // No calibration: the model's own scales.
  EXPECT_TRUE(report.table.empty());
  EXPECT_FALSE(report.random_calibration);
  EXPECT_EQ(report.method.rfind("none (the model's own", 0), 0u) << report.method;
  EXPECT_EQ(report.int8_kernels, 1);
  EXPECT_GE(report.output_sqnr_db, 35.0);

  const auto inputs = Inputs(graph);
  auto got = (*int8)->Run(inputs);
  auto want = (*ref)->Run(inputs);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  const double sqnr = SqnrDb((*got)[0], (*want)[0]);
  EXPECT_GE(sqnr, 35.0);
  std::cout << "cpu:int8 " << fused_op << " vs ref:fp32 as written: SQNR " << sqnr << " dB\n";
}

TEST(QdqCpuTest, PerTensorConvRunsOnQLinearConvWithTheModelsScales) {
  ExpectFusedAndAccurate(Import(QdqConvModel(false, false)), {"conv", "x_dequant", "w_dequant", "y_quant"});
}

TEST(QdqCpuTest, PerChannelConvWithReluRunsOnQLinearConv) {
  ExpectFusedAndAccurate(Import(QdqConvModel(true, true)), {"conv", "x_dequant", "w_dequant", "relu", "y_quant"});
}

TEST(QdqCpuTest, GemmWithInt32BiasRunsOnOneDnnAsQLinearGemm) {
  ExpectFusedAndAccurate(Import(QdqGemmModel()), {"fc", "x_dequant", "w_dequant", "b_dequant", "y_quant"},
                         "QLinearGemm", "onednn:qlinearmatmul");
}

TEST(QdqCpuTest, Fp32TargetRunsTheGraphAsWritten) {
  const Graph graph = Import(QdqConvModel(true, false));
  auto fp32 = CompileForTarget(graph, Target{.kind = DeviceKind::kCpu, .precision = Precision::kFp32});
  ASSERT_TRUE(fp32.ok()) << fp32.status().ToString();
  bool conv = false;
  for (const KernelInfo& k : (*fp32)->kernels()) {
    EXPECT_NE(k.op_type, "QLinearConv");
    conv |= k.name == "conv" && k.precision == "fp32";
  }
  EXPECT_TRUE(conv) << "the float Conv should run as written";
}

}  // namespace
}  // namespace chipfit
