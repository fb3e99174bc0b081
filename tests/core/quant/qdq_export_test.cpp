// QDQ export: the Q/DQ nodes and scales it writes (inputs and outputs), BatchNormalization folding, per-channel
// weights, kept-fp32 layers, the opset 13 upgrade, and `chipfit quantize` as a user runs it (chipfit's cpu:int8
// fuses what it writes; its errors exit 2 naming the value).
#include "core/quant/qdq_export.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/graph/onnx_import.h"
#include "core/graph/onnx_loader.h"
#include "core/runtime/compiled_model.h"
#include "core/runtime/observer.h"
#include "core/tensor/metrics.h"
#include "core/tensor/npy.h"
#include "core/tensor/random.h"
#include "onnx/checker.h"
#include "tests/app/run_shell.h"
#include "tests/core/onnx_builder.h"

namespace chipfit {
namespace {

namespace fs = std::filesystem;
using testing::AddInitializer;
using testing::AddNode;
using testing::AddValue;

// x [1, 8, 16, 16] → Conv (16 filters 3x3, pads 1, bias) → Relu → MatMul with B [16, 24] → y [1, 16, 16, 24]:
// big enough (294 912 and 98 304 multiply-adds… the Conv alone passes chipfit's int8 threshold).
onnx::ModelProto ConvReluMatMul(int64_t opset = 13) {
  onnx::ModelProto m = testing::NewModel("conv_relu_matmul", opset);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {1, 8, 16, 16});
  AddValue(g->mutable_output(), "y", {1, 16, 16, 24});
  // Channel c's weights span ±(c + 1) / 16: per-channel scales differ by 16x.
  AddInitializer(g, "w", {16, 8, 3, 3}, [](int64_t i) { return std::sin(0.37 * i) * (i / 72 + 1) / 16.0; });
  AddInitializer(g, "b", {16}, [](int64_t i) { return 0.05 * i - 0.3; });
  AddInitializer(g, "m", {16, 24}, [](int64_t i) { return std::cos(0.11 * i) * (1 + i % 24) / 24.0; });
  auto* conv = AddNode(g, "Conv", {"x", "w", "b"}, {"c"}, "conv");
  testing::AddIntsAttr(conv, "pads", {1, 1, 1, 1});
  AddNode(g, "Relu", {"c"}, {"r"}, "relu");
  AddNode(g, "MatMul", {"r", "m"}, {"y"}, "matmul");
  return m;
}

QuantParams Calibrated(float lo, float hi) {
  QuantParams p;
  p.min = std::min(lo, 0.0f);
  p.max = std::max(hi, 0.0f);
  p.scale = (p.max - p.min) / 255.0f;
  p.zero_point = static_cast<int32_t>(std::nearbyint(-p.min / p.scale));
  return p;
}

const QuantTable kTable = {{"x", Calibrated(-1.0f, 1.0f)}, {"r", Calibrated(0.0f, 4.0f)}};

// Min/max of every value (graph inputs and kernel outputs) on the reference kernels.
class RangeObserver final : public RunObserver {
 public:
  bool WantsOutputs(size_t) override { return true; }
  void KernelOutputs(size_t, const KernelInfo& kernel, const std::vector<const Tensor*>& outputs) override {
    for (size_t k = 0; k < outputs.size() && k < kernel.outputs.size(); ++k) {
      if (outputs[k] != nullptr && outputs[k]->dtype() == DType::kF32) Observe(kernel.outputs[k], *outputs[k]);
    }
  }
  void Observe(const std::string& name, const Tensor& t) {
    auto [it, fresh] = ranges.try_emplace(name, std::make_pair(1e30f, -1e30f));
    for (int64_t i = 0; i < t.numel(); ++i) {
      it->second.first = std::min(it->second.first, t.data<float>()[i]);
      it->second.second = std::max(it->second.second, t.data<float>()[i]);
    }
  }
  std::map<std::string, std::pair<float, float>> ranges;
};

Tensor TestInput() { return SeededTensor(DType::kF32, {1, 8, 16, 16}, 7); }

// The ranges of `m`'s values on the input the tests run (the reference runs the graph as written, BatchNormalization
// included: its output is the name the folded Conv writes).
QuantTable CalibrateOnTestInput(const onnx::ModelProto& m) {
  auto loaded = CheckOnnxModel(m, "test model");
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto graph = ImportModel(*loaded);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  auto compiled = Compile(*graph, Target{});
  EXPECT_TRUE(compiled.ok()) << compiled.status().ToString();
  RangeObserver observer;
  std::map<std::string, Tensor> inputs;
  inputs["x"] = TestInput();
  observer.Observe("x", inputs["x"]);
  EXPECT_TRUE((*compiled)->Run(inputs, &observer).ok());
  QuantTable table;
  for (const auto& [name, range] : observer.ranges) table[name] = Calibrated(range.first, range.second);
  return table;
}

// x → Conv (no bias) → BatchNormalization (statistics far from identity) → Relu → y.
onnx::ModelProto ConvBatchNormRelu() {
  onnx::ModelProto m = testing::NewModel("conv_bn_relu", 13);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {1, 8, 16, 16});
  AddValue(g->mutable_output(), "y", {1, 16, 16, 16});
  AddInitializer(g, "w", {16, 8, 3, 3}, [](int64_t i) { return std::sin(0.37 * i) / 8.0; });
  AddInitializer(g, "gamma", {16}, [](int64_t i) { return 0.5 + 0.1 * i; });
  AddInitializer(g, "beta", {16}, [](int64_t i) { return 0.2 * i - 1.0; });
  AddInitializer(g, "mean", {16}, [](int64_t i) { return 0.3 - 0.05 * i; });
  AddInitializer(g, "var", {16}, [](int64_t i) { return 0.2 + 0.3 * i; });
  auto* conv = AddNode(g, "Conv", {"x", "w"}, {"c"}, "conv");
  testing::AddIntsAttr(conv, "pads", {1, 1, 1, 1});
  AddNode(g, "BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"bn"}, "bn");
  AddNode(g, "Relu", {"bn"}, {"y"}, "relu");
  return m;
}

// ConvReluMatMul with Clip(0, `hi`) for the Relu (bounds as constant inputs, opset 13).
onnx::ModelProto ConvClipMatMul(float hi) {
  onnx::ModelProto m = ConvReluMatMul();
  auto* g = m.mutable_graph();
  AddInitializer(g, "lo", {}, [](int64_t) { return 0.0; });
  AddInitializer(g, "hi", {}, [hi](int64_t) { return hi; });
  auto* clip = g->mutable_node(1);
  clip->set_op_type("Clip");
  clip->add_input("lo");
  clip->add_input("hi");
  return m;
}

const onnx::NodeProto* FindNode(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& n : m.graph().node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

int QuantizeLinearsOf(const onnx::ModelProto& m, const std::string& value) {
  int count = 0;
  for (const auto& n : m.graph().node()) count += n.op_type() == "QuantizeLinear" && n.input(0) == value;
  return count;
}

const onnx::TensorProto* Initializer(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& t : m.graph().initializer()) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

std::vector<std::string> NodeNames(const onnx::ModelProto& m) {
  std::vector<std::string> names;
  for (const auto& n : m.graph().node()) names.push_back(n.name());
  return names;
}

Tensor Decode(const onnx::ModelProto& m, const std::string& name) {
  const onnx::TensorProto* t = Initializer(m, name);
  EXPECT_NE(t, nullptr) << name;
  auto tensor = TensorFromOnnx(*t, {}, name);
  EXPECT_TRUE(tensor.ok()) << tensor.status().ToString();
  return std::move(tensor).value();
}

// Output of `m` on the reference kernels for one seeded input.
Tensor RunReference(const onnx::ModelProto& m) {
  auto loaded = CheckOnnxModel(m, "test model");
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto graph = ImportModel(*loaded);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  auto compiled = Compile(*graph, Target{});
  EXPECT_TRUE(compiled.ok()) << compiled.status().ToString();
  std::map<std::string, Tensor> inputs;
  inputs["x"] = TestInput();
  auto out = (*compiled)->Run(inputs);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return std::move((*out)[0]);
}

// ONNX Runtime's full QDQ form: every quantised layer's output gets a pair (the tests of where it goes).
QdqOptions EveryOutput() {
  QdqOptions options;
  options.outputs = QdqOptions::Outputs::kEvery;
  return options;
}

TEST(QdqExport, InsertsTheExpectedNodesWithTheCalibratedScales) {
  auto exported = ExportQdq(ConvReluMatMul(), kTable);
  ASSERT_TRUE(exported.ok()) << exported.status().ToString();
  const onnx::ModelProto& m = exported->model;
  EXPECT_EQ(NodeNames(m), (std::vector<std::string>{"conv/x_q", "conv/x_dq", "conv/w_dq", "conv", "relu", "matmul/x_q",
                                                    "matmul/x_dq", "matmul/w_dq", "matmul"}));
  EXPECT_EQ(exported->quantized, (std::vector<std::string>{"conv", "matmul"}));
  // Conv takes the calibrated asymmetric u8 range as it is; Relu's output never goes negative: zero point 0.
  const Tensor x_scale = Decode(m, "conv/x_scale"), x_zp = Decode(m, "conv/x_zero_point");
  EXPECT_EQ(x_zp.dtype(), DType::kU8);
  EXPECT_FLOAT_EQ(x_scale.data<float>()[0], kTable.at("x").scale);
  EXPECT_EQ(x_zp.data<uint8_t>()[0], kTable.at("x").zero_point);
  EXPECT_FLOAT_EQ(Decode(m, "matmul/x_scale").data<float>()[0], 4.0f / 255.0f);
  EXPECT_EQ(Decode(m, "matmul/x_zero_point").data<uint8_t>()[0], 0);
  // Conv's input now comes through the DQ nodes; bias stays the float initializer.
  const onnx::NodeProto& conv = m.graph().node(3);
  EXPECT_EQ(conv.input(0), "conv/x_dequantized");
  EXPECT_EQ(conv.input(1), "conv/w_dequantized");
  EXPECT_EQ(conv.input(2), "b");
  EXPECT_EQ(Initializer(m, "b")->data_type(), onnx::TensorProto_DataType_FLOAT);
  // Conv's output is quantised after its Relu (zero point 0 saturates where Relu clips), by the pair that is
  // also MatMul's input pair: DQ → Conv → Relu → Q is there to fuse, and Relu's output has one pair, not two.
  EXPECT_EQ(m.graph().node(5).input(0), "r");
  EXPECT_EQ(QuantizeLinearsOf(m, "r"), 1);
  EXPECT_EQ(exported->quantized_outputs, 1);
  ASSERT_EQ(exported->float_outputs.size(), 1u);
  EXPECT_NE(exported->float_outputs[0].find("graph output"), std::string::npos) << exported->float_outputs[0];
  // The float weights nobody reads any more are gone; opset and outputs are as they were.
  EXPECT_EQ(Initializer(m, "w"), nullptr);
  EXPECT_EQ(Initializer(m, "m"), nullptr);
  EXPECT_EQ(m.opset_import(0).version(), 13);
  EXPECT_EQ(m.graph().output(0).name(), "y");
  EXPECT_NO_THROW(onnx::checker::check_model(m));
}

TEST(QdqExport, PerChannelWeightsReproduceTheWeightsWithinHalfAStep) {
  const onnx::ModelProto original = ConvReluMatMul();
  auto exported = ExportQdq(original, kTable);
  ASSERT_TRUE(exported.ok()) << exported.status().ToString();
  struct Case {
    const char* node;
    const char* weights;
    int64_t axis;
  };
  for (const Case& c : {Case{"conv", "w", 0}, Case{"matmul", "m", 1}}) {
    const Tensor w = Decode(original, c.weights);
    const Tensor q = Decode(exported->model, std::string(c.node) + "/w_quantized");
    const Tensor s = Decode(exported->model, std::string(c.node) + "/w_scale");
    ASSERT_EQ(q.dtype(), DType::kI8);
    ASSERT_EQ(q.shape(), w.shape());
    ASSERT_EQ(s.numel(), w.shape()[static_cast<size_t>(c.axis)]) << c.node;
    const onnx::NodeProto* dq = nullptr;
    for (const auto& n : exported->model.graph().node()) dq = n.name() == std::string(c.node) + "/w_dq" ? &n : dq;
    ASSERT_NE(dq, nullptr);
    EXPECT_EQ(dq->attribute(0).name(), "axis");
    EXPECT_EQ(dq->attribute(0).i(), c.axis);
    const int64_t inner = c.axis == 0 ? w.numel() / w.shape()[0] : 1;
    const int64_t channels = s.numel();
    float smallest = 1e9f, largest = 0;
    for (int64_t i = 0; i < w.numel(); ++i) {
      const int64_t channel = c.axis == 0 ? i / inner : i % channels;
      const float step = s.data<float>()[channel];
      smallest = std::min(smallest, step);
      largest = std::max(largest, step);
      EXPECT_LE(std::fabs(w.data<float>()[i] - step * q.data<int8_t>()[i]), step / 2 * 1.0001f)
          << c.node << " weight " << i;
    }
    EXPECT_GT(largest, 2 * smallest) << c.node << ": one scale for every channel is not per-channel";
  }
}

// The default (shared) form quantises a layer's output only where a quantised layer reads it: with the
// MatMul kept in fp32 the Conv's output stays float, as chipfit's cpu:int8 computes it.
TEST(QdqExport, SharedOutputsLeaveAValueOnlyFloatLayersReadInFloat) {
  const onnx::ModelProto original = ConvReluMatMul();
  auto exported = ExportQdq(original, CalibrateOnTestInput(original), {.int8_nodes = {}, .keep_fp32 = {"matmul"}});
  ASSERT_TRUE(exported.ok()) << exported.status().ToString();
  EXPECT_EQ(NodeNames(exported->model),
            (std::vector<std::string>{"conv/x_q", "conv/x_dq", "conv/w_dq", "conv", "relu", "matmul"}));
  EXPECT_EQ(exported->quantized_outputs, 0);
}

TEST(QdqExport, KeptLayersStayFloatAndTheModelImportsAndRunsClose) {
  const onnx::ModelProto original = ConvReluMatMul();
  auto exported = ExportQdq(original, CalibrateOnTestInput(original),
                            {.int8_nodes = {}, .keep_fp32 = {"matmul"}, .outputs = QdqOptions::Outputs::kEvery});
  ASSERT_TRUE(exported.ok()) << exported.status().ToString();
  const onnx::ModelProto& m = exported->model;
  // The float MatMul reads Conv's output through the output pair after the Relu.
  EXPECT_EQ(NodeNames(m), (std::vector<std::string>{"conv/x_q", "conv/x_dq", "conv/w_dq", "conv", "relu", "conv/y_q",
                                                    "conv/y_dq", "matmul"}));
  EXPECT_EQ(m.graph().node(5).input(0), "r");
  EXPECT_EQ(m.graph().node(7).input(0), "conv/y_dequantized");
  EXPECT_EQ(m.graph().node(7).input(1), "m");
  ASSERT_NE(Initializer(m, "m"), nullptr);
  EXPECT_EQ(Initializer(m, "m")->data_type(), onnx::TensorProto_DataType_FLOAT);
  ASSERT_EQ(exported->kept_fp32.size(), 1u);
  EXPECT_NE(exported->kept_fp32[0].find("matmul"), std::string::npos);
  // Imported again by chipfit and run on the reference kernels: close to the float model (8-bit input, weights
  // and output of one layer, ranges calibrated on this input: well above 30 dB).
  const double sqnr = SqnrDb(RunReference(m), RunReference(original));
  EXPECT_GT(sqnr, 30.0);
  EXPECT_LT(sqnr, 80.0) << "as close as float: the Q/DQ nodes did not quantise anything";
}

TEST(QdqExport, FoldsBatchNormalizationIntoTheConvBeforeQuantising) {
  const onnx::ModelProto original = ConvBatchNormRelu();
  const QuantTable table = CalibrateOnTestInput(original);
  auto exported = ExportQdq(original, table, EveryOutput());
  ASSERT_TRUE(exported.ok()) << exported.status().ToString();
  const onnx::ModelProto& m = exported->model;
  EXPECT_EQ(exported->batchnorms_folded, 1);
  // Relu's output is the graph's: the output pair goes on the Conv's own output, which is now the
  // BatchNormalization's ("bn", the name the cpu:int8 compile's folded Conv writes and calibration ranges).
  EXPECT_EQ(NodeNames(m),
            (std::vector<std::string>{"conv/x_q", "conv/x_dq", "conv/w_dq", "conv", "conv/y_q", "conv/y_dq", "relu"}));
  const onnx::NodeProto* conv = FindNode(m, "conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->output(0), "bn");
  ASSERT_EQ(conv->input_size(), 3);
  EXPECT_EQ(Decode(m, conv->input(2)).numel(), 16);
  EXPECT_EQ(FindNode(m, "relu")->input(0), "conv/y_dequantized");
  for (const char* gone : {"w", "gamma", "beta", "mean", "var"}) EXPECT_EQ(Initializer(m, gone), nullptr) << gone;
  // A dropped or misapplied BatchNormalization shifts and scales every channel: far below 30 dB.
  const double sqnr = SqnrDb(RunReference(m), RunReference(original));
  EXPECT_GT(sqnr, 30.0);
  EXPECT_NO_THROW(onnx::checker::check_model(m));
}

TEST(QdqExport, OutputPairGoesAfterAClipOnlyWhereTheQuantisationSaturatesThere) {
  // Relu's calibrated output spans [0, 4]: Clip(0, 6) clips outside it (after the Q/DQ it changes nothing), so the
  // pair follows the Clip; Clip(0, 2) clips inside it, so Conv's output gets its own pair before the Clip.
  QuantTable table = kTable;
  table["c"] = Calibrated(-3.0f, 4.0f);
  auto wide = ExportQdq(ConvClipMatMul(6.0f), table, EveryOutput());
  ASSERT_TRUE(wide.ok()) << wide.status().ToString();
  EXPECT_EQ(QuantizeLinearsOf(wide->model, "c"), 0);
  EXPECT_EQ(QuantizeLinearsOf(wide->model, "r"), 1);
  auto narrow = ExportQdq(ConvClipMatMul(2.0f), table, EveryOutput());
  ASSERT_TRUE(narrow.ok()) << narrow.status().ToString();
  EXPECT_EQ(QuantizeLinearsOf(narrow->model, "c"), 1);
  EXPECT_EQ(QuantizeLinearsOf(narrow->model, "r"), 1);
  EXPECT_EQ(FindNode(narrow->model, "relu")->input(0), "conv/y_dequantized");
  EXPECT_EQ(Decode(narrow->model, "conv/y_zero_point").data<uint8_t>()[0], table.at("c").zero_point);
}

TEST(QdqExport, ListedNodesOnlyAndAMissingRangeIsNamed) {
  auto only_matmul = ExportQdq(ConvReluMatMul(), kTable, {.int8_nodes = {"matmul"}});
  ASSERT_TRUE(only_matmul.ok()) << only_matmul.status().ToString();
  EXPECT_EQ(only_matmul->quantized, std::vector<std::string>{"matmul"});
  auto missing = ExportQdq(ConvReluMatMul(), {{"x", Calibrated(-1, 1)}}, {.int8_nodes = {"conv", "matmul"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("'matmul'"), std::string::npos) << missing.status().message();
  EXPECT_NE(missing.status().message().find("'r'"), std::string::npos) << missing.status().message();
  auto unknown = ExportQdq(ConvReluMatMul(), kTable, {.int8_nodes = {}, .keep_fp32 = {"conv9"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("'conv9'"), std::string::npos) << unknown.status().message();
}

TEST(QdqExport, SignedMatMulInputsAreSymmetricInt8) {
  const QuantParams p = ActivationParamsFor("MatMul", Calibrated(-2.0f, 1.0f));
  EXPECT_EQ(p.dtype, DType::kI8);
  EXPECT_FLOAT_EQ(p.scale, 2.0f / 127.0f);
  EXPECT_EQ(p.zero_point, 0);
  const QuantParams c = ActivationParamsFor("Conv", Calibrated(-2.0f, 1.0f));
  EXPECT_EQ(c.dtype, DType::kU8);
  EXPECT_EQ(c.zero_point, 170);
}

// Opset 9: Clip's bounds are attributes, Softmax flattens at axis 1 (the last axis of a rank-2 input here).
onnx::ModelProto Opset9Model(bool softmax_on_rank4) {
  onnx::ModelProto m = ConvReluMatMul(9);
  auto* g = m.mutable_graph();
  g->mutable_node(1)->set_op_type("Clip");
  auto* lo = g->mutable_node(1)->add_attribute();
  lo->set_name("min");
  lo->set_type(onnx::AttributeProto::FLOAT);
  lo->set_f(0.0f);
  auto* hi = g->mutable_node(1)->add_attribute();
  *hi = *lo;
  hi->set_name("max");
  hi->set_f(3.0f);
  g->clear_output();
  if (softmax_on_rank4) {
    AddValue(g->mutable_output(), "p", {1, 16, 16, 24});
    AddNode(g, "Softmax", {"y"}, {"p"}, "softmax");
  } else {
    AddValue(g->mutable_output(), "p", {16 * 16, 24});
    auto* shape = g->add_initializer();
    shape->set_name("flat");
    shape->set_data_type(onnx::TensorProto_DataType_INT64);
    shape->add_dims(2);
    shape->add_int64_data(16 * 16);
    shape->add_int64_data(24);
    AddNode(g, "Reshape", {"y", "flat"}, {"y2"}, "flatten");
    AddNode(g, "Softmax", {"y2"}, {"p"}, "softmax");
  }
  return m;
}

TEST(QdqExport, UpgradesOpset9ByMovingClipBoundsToInputs) {
  const onnx::ModelProto original = Opset9Model(false);
  auto exported = ExportQdq(original, kTable);
  ASSERT_TRUE(exported.ok()) << exported.status().ToString();
  EXPECT_EQ(exported->from_opset, 9);
  EXPECT_EQ(exported->to_opset, 13);
  EXPECT_EQ(exported->model.opset_import(0).version(), 13);
  const onnx::NodeProto* clip = nullptr;
  for (const auto& n : exported->model.graph().node()) clip = n.op_type() == "Clip" ? &n : clip;
  ASSERT_NE(clip, nullptr);
  EXPECT_EQ(clip->attribute_size(), 0);
  ASSERT_EQ(clip->input_size(), 3);
  EXPECT_FLOAT_EQ(Decode(exported->model, clip->input(2)).data<float>()[0], 3.0f);
  EXPECT_NO_THROW(onnx::checker::check_model(exported->model));
  // The same function as before the upgrade, up to the quantisation.
  EXPECT_GT(SqnrDb(RunReference(exported->model), RunReference(original)), 25.0);
}

TEST(QdqExport, RefusesAnUpgradeThatChangesAnOpsMeaning) {
  auto softmax = ExportQdq(Opset9Model(true), kTable);
  ASSERT_FALSE(softmax.ok());
  EXPECT_EQ(softmax.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(softmax.status().message().find("'softmax' (Softmax)"), std::string::npos) << softmax.status().message();
  onnx::ModelProto upsample = ConvReluMatMul(9);
  auto* g = upsample.mutable_graph();
  g->clear_output();
  AddValue(g->mutable_output(), "u", {1, 16, 32, 48});
  AddNode(g, "Upsample", {"y"}, {"u"}, "up");
  auto refused = ExportQdq(upsample, kTable);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("'up' (Upsample)"), std::string::npos) << refused.status().message();
}

// `chipfit quantize` on the test model written to a file.
class QuantizeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("chipfit_qdq_cli_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream file(dir_ / "model.onnx", std::ios::binary);
    ASSERT_TRUE(ConvReluMatMul().SerializeToOstream(&file));
  }
  void TearDown() override { fs::remove_all(dir_); }
  testing::Outcome Quantize(const std::string& flags) {
    return testing::RunShell(std::string(CHIPFIT_CLI) + " quantize " + (dir_ / "model.onnx").string() + " " + flags +
                             " 2>&1");
  }
  fs::path dir_;
};

TEST_F(QuantizeCli, WritesAModelChipfitImportsAgain) {
  const fs::path out = dir_ / "model.int8.onnx";
  const auto r = Quantize("--seed 3 -o " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("random calibration"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("check        imported again"), std::string::npos) << r.out;
  auto loaded = LoadOnnxModel(out);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  int q = 0;
  for (const auto& n : loaded->proto.graph().node()) q += n.op_type() == "QuantizeLinear";
  EXPECT_GE(q, 1);
  const auto inspect = testing::RunShell(std::string(CHIPFIT_CLI) + " inspect " + out.string() + " 2>&1");
  EXPECT_EQ(inspect.exit_code, 0) << inspect.out;
}

// chipfit's own cpu:int8 runs the written model's DQ → Conv → Relu → Q as one oneDNN int8 kernel, with the
// written scales, and computes what its cpu:int8 computes on the original (calibrated alike: seed 1). This model's
// Conv feeds a float MatMul only, so only ONNX Runtime's full form (--output-qdq every) quantises its output.
TEST_F(QuantizeCli, ChipfitsInt8FusesTheWrittenModelAndMatchesTheOriginal) {
  const fs::path out = dir_ / "model.int8.onnx";
  const auto r = Quantize("--seed 1 --output-qdq every -o " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string cli = CHIPFIT_CLI;
  const auto inspect = testing::RunShell(cli + " inspect " + out.string() + " --target cpu:int8 2>&1");
  ASSERT_EQ(inspect.exit_code, 0) << inspect.out;
  EXPECT_NE(inspect.out.find("onednn:qlinearconv"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("covers conv+conv/x_dq+conv/w_dq+relu+conv/y_q"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("not calibrated: the model's own scales (1 QDQ patterns run as oneDNN int8"),
            std::string::npos)
      << inspect.out;
  ASSERT_TRUE(WriteNpy(dir_ / "x.npy", TestInput()).ok());
  for (const auto& [model, dir] : {std::pair{out, "written"}, std::pair{dir_ / "model.onnx", "original"}}) {
    const auto run =
        testing::RunShell(cli + " run " + model.string() + " --target cpu:int8 --input x=" + (dir_ / "x.npy").string() +
                          " --output-dir " + (dir_ / dir).string() + " 2>&1");
    ASSERT_EQ(run.exit_code, 0) << run.out;
  }
  auto written = ReadNpy(dir_ / "written/y.npy"), original = ReadNpy(dir_ / "original/y.npy");
  ASSERT_TRUE(written.ok() && original.ok());
  // The one difference: the written model also rounds Relu's output to u8 on its way to the float MatMul (about
  // 35 dB here); a scale or zero point the fusion misread would cost far more.
  const double sqnr = SqnrDb(*written, *original);
  EXPECT_GE(sqnr, 30.0);
  std::printf("written model vs original on cpu:int8: SQNR %.1f dB\n", sqnr);
}

TEST_F(QuantizeCli, ErrorsNameTheValueAndExit2) {
  const std::string out = " -o " + (dir_ / "q.onnx").string();
  auto r = Quantize("--data " + (dir_ / "no_such_folder").string() + out);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("no_such_folder"), std::string::npos) << r.out;
  r = Quantize("--seed 1 --keep-fp32 conv,conv7" + out);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("'conv7'"), std::string::npos) << r.out;
  r = Quantize(out);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--data"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "q.onnx"));
}

}  // namespace
}  // namespace chipfit
