// ONNX opset 18–21 forms on the reference target: models built here at the opset that introduced each form,
// imported with chipfit's own inference (libonnx 1.12 stops at 17), run on ref, values computed by hand;
// forms chipfit refuses say so, naming op, version or type; and the coverage table matches the op table.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/graph/onnx_import.h"
#include "core/graph/onnx_loader.h"
#include "core/reference/op_versions.h"
#include "core/reference/reference_kernels.h"
#include "core/runtime/compiled_model.h"
#include "core/runtime/conformance.h"
#include "tests/core/onnx_builder.h"
#include "tests/core/reference/ref_test_util.h"

namespace chipfit {
namespace {

using testing::AddIntsAttr;
using testing::AddNode;
using testing::AddTypedValue;
using testing::MakeTensor;
using testing::NewModel;
using testing::SetIntAttr;
using testing::Values;

constexpr int kFloat = onnx::TensorProto_DataType_FLOAT;
constexpr int kInt64 = onnx::TensorProto_DataType_INT64;

// A one-op model under construction: graph inputs, initializers and outputs are added by the tests.
struct OpModel {
  onnx::ModelProto proto;
  onnx::GraphProto* g;
  onnx::NodeProto* node = nullptr;
  explicit OpModel(int64_t opset) : proto(NewModel("opset" + std::to_string(opset), opset)), g(proto.mutable_graph()) {}

  void Input(const std::string& name, int elem_type, const std::vector<int64_t>& dims) {
    AddTypedValue(g->mutable_input(), name, elem_type, dims);
  }
  // Output shapes are left undeclared: the test checks what chipfit infers.
  void Output(const std::string& name, int elem_type) {
    AddTypedValue(g->mutable_output(), name, elem_type, {}, false);
  }
  void Ints(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(kInt64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
  }
  void Floats(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(kFloat);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
  }
  onnx::NodeProto* Op(const std::string& op, std::vector<std::string> in, std::vector<std::string> out = {"y"}) {
    node = AddNode(g, op, std::move(in), std::move(out), "node_under_test");
    return node;
  }
  void Str(const std::string& name, const std::string& value) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(value);
  }
  void Float(const std::string& name, float value) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(value);
  }
};

Result<std::vector<Tensor>> RunOnReference(const OpModel& m, const std::map<std::string, Tensor>& inputs) {
  ASSIGN_OR_RETURN(LoadedOnnxModel loaded, CheckOnnxModel(m.proto, "opset18 test"));
  ASSIGN_OR_RETURN(Graph graph, ImportModel(loaded));
  ASSIGN_OR_RETURN(std::unique_ptr<CompiledModel> model, Compile(graph, Target{}));
  return model->Run(inputs);
}

// Runs and expects success: the outputs, or an empty list after a test failure.
std::vector<Tensor> RunModel(const OpModel& m, const std::map<std::string, Tensor>& inputs) {
  auto out = RunOnReference(m, inputs);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? std::move(out).value() : std::vector<Tensor>{};
}

// Runs and expects a refusal whose message holds every one of `words`.
void ExpectRefused(const OpModel& m, const std::map<std::string, Tensor>& inputs, StatusCode code,
                   const std::vector<std::string>& words) {
  auto out = RunOnReference(m, inputs);
  ASSERT_FALSE(out.ok()) << "the model ran";
  EXPECT_EQ(out.status().code(), code) << out.status().ToString();
  for (const std::string& w : words)
    EXPECT_NE(out.status().message().find(w), std::string::npos) << out.status().ToString();
}

Tensor Floats(Shape shape, std::vector<float> values) { return MakeTensor<float>(std::move(shape), std::move(values)); }

// ---------------------------------------------------------------------------------------------------------------
// Reduce*: axes as an input from ReduceMean-18, noop_with_empty_axes, bool ReduceMax-20.

TEST(Opset18Test, ReduceMean18TakesAxesAsInput) {
  OpModel m(18);
  m.Input("x", kFloat, {2, 3});
  m.Ints("axes", {1}, {1});
  m.Output("y", kFloat);
  m.Op("ReduceMean", {"x", "axes"});
  SetIntAttr(m.node, "keepdims", 0);
  auto out = RunModel(m, {{"x", Floats({2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2}));
  EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{2, 5}));
}

TEST(Opset18Test, ReduceL2With18EmptyAxesAndNoopKeepsInput) {
  OpModel m(18);
  m.Input("x", kFloat, {2, 2});
  m.Ints("axes", {0}, {});
  m.Output("y", kFloat);
  m.Op("ReduceL2", {"x", "axes"});
  SetIntAttr(m.node, "noop_with_empty_axes", 1);
  auto out = RunModel(m, {{"x", Floats({2, 2}, {-3, 4, 0, 2})}});
  ASSERT_EQ(out.size(), 1u);
  // Each element is a reduction over itself: |x|.
  EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{3, 4, 0, 2}));
}

TEST(Opset18Test, ReduceMax20OnBool) {
  OpModel m(20);
  m.Input("x", onnx::TensorProto_DataType_BOOL, {2, 2});
  m.Ints("axes", {1}, {1});
  m.Output("y", onnx::TensorProto_DataType_BOOL);
  m.Op("ReduceMax", {"x", "axes"});
  SetIntAttr(m.node, "keepdims", 0);
  auto out = RunModel(m, {{"x", MakeTensor<bool>({2, 2}, {false, true, false, false})}});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].dtype(), DType::kBool);
  EXPECT_EQ(Values<bool>(out[0]), (std::vector<bool>{true, false}));
}

// ---------------------------------------------------------------------------------------------------------------
// Split-18 num_outputs, Shape-15 start/end, CenterCropPad-18, Col2Im-18.

TEST(Opset18Test, Split18NumOutputsMakesTheLastChunkSmaller) {
  OpModel m(18);
  m.Input("x", kFloat, {5});
  for (const char* y : {"a", "b", "c"}) m.Output(y, kFloat);
  m.Op("Split", {"x"}, {"a", "b", "c"});
  SetIntAttr(m.node, "num_outputs", 3);
  auto out = RunModel(m, {{"x", Floats({5}, {0, 1, 2, 3, 4})}});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{0, 1}));
  EXPECT_EQ(Values<float>(out[1]), (std::vector<float>{2, 3}));
  EXPECT_EQ(Values<float>(out[2]), (std::vector<float>{4}));
}

TEST(Opset18Test, Shape15StartAndEnd) {
  OpModel m(19);
  m.Input("x", kFloat, {2, 3, 4});
  m.Output("y", kInt64);
  m.Op("Shape", {"x"});
  SetIntAttr(m.node, "start", 1);
  SetIntAttr(m.node, "end", -1);
  auto out = RunModel(m, {{"x", Tensor(DType::kF32, {2, 3, 4})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values<int64_t>(out[0]), (std::vector<int64_t>{3}));
}

TEST(Opset18Test, CenterCropPad18CropsAndPadsAroundTheCentre) {
  OpModel m(18);
  m.Input("x", kFloat, {3, 4});
  m.Ints("shape", {2}, {2, 6});
  m.Output("y", kFloat);
  m.Op("CenterCropPad", {"x", "shape"});
  Tensor x(DType::kF32, {3, 4});
  for (int i = 0; i < 12; ++i) x.data<float>()[i] = static_cast<float>(i + 1);
  auto out = RunModel(m, {{"x", x}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 6}));
  // Rows 3 → 2 keep rows 0 and 1 (the odd element goes at the end); columns 4 → 6 pad one zero each side.
  EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{0, 1, 2, 3, 4, 0, 0, 5, 6, 7, 8, 0}));
}

TEST(Opset18Test, CenterCropPad18OnChosenAxes) {
  OpModel m(18);
  m.Input("x", kFloat, {3, 4});
  m.Ints("shape", {1}, {2});
  m.Output("y", kFloat);
  m.Op("CenterCropPad", {"x", "shape"});
  AddIntsAttr(m.node, "axes", {-1});
  Tensor x(DType::kF32, {3, 4});
  for (int i = 0; i < 12; ++i) x.data<float>()[i] = static_cast<float>(i);
  auto out = RunModel(m, {{"x", x}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{1, 2, 5, 6, 9, 10}));
}

TEST(Opset18Test, Col2Im18AddsOverlappingBlocks) {
  OpModel m(18);
  m.Input("x", kFloat, {1, 4, 4});
  m.Ints("image", {2}, {3, 3});
  m.Ints("block", {2}, {2, 2});
  m.Output("y", kFloat);
  m.Op("Col2Im", {"x", "image", "block"});
  // Row k (block element), column l (block): 10·k + l, so each sum shows which pairs landed where.
  Tensor x(DType::kF32, {1, 4, 4});
  for (int k = 0; k < 4; ++k) {
    for (int l = 0; l < 4; ++l) x.data<float>()[k * 4 + l] = static_cast<float>(10 * k + l);
  }
  auto out = RunModel(m, {{"x", x}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{0, 11, 11, 22, 66, 44, 22, 55, 33}));
}

TEST(Opset18Test, Col2Im18RejectsABlockCountThatDoesNotMatchTheImage) {
  OpModel m(18);
  m.Input("x", kFloat, {1, 4, 5});
  m.Ints("image", {2}, {3, 3});
  m.Ints("block", {2}, {2, 2});
  m.Output("y", kFloat);
  m.Op("Col2Im", {"x", "image", "block"});
  ExpectRefused(m, {{"x", Tensor(DType::kF32, {1, 4, 5})}}, StatusCode::kInvalidArgument,
                {"node_under_test", "5 blocks"});
}

// ---------------------------------------------------------------------------------------------------------------
// Pad-18 axes, Pad-19 wrap.

TEST(Opset18Test, Pad18PadsOnlyTheGivenAxes) {
  OpModel m(18);
  m.Input("x", kFloat, {2, 2});
  m.Ints("pads", {2}, {1, 2});
  m.Floats("value", {}, {9});
  m.Ints("axes", {1}, {-1});
  m.Output("y", kFloat);
  m.Op("Pad", {"x", "pads", "value", "axes"});
  auto out = RunModel(m, {{"x", Floats({2, 2}, {1, 2, 3, 4})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 5}));
  EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{9, 1, 2, 9, 9, 9, 3, 4, 9, 9}));
}

OpModel WrapPad(int64_t opset) {
  OpModel m(opset);
  m.Input("x", kFloat, {3});
  m.Ints("pads", {2}, {2, 1});
  m.Output("y", kFloat);
  m.Op("Pad", {"x", "pads"});
  m.Str("mode", "wrap");
  return m;
}

TEST(Opset18Test, Pad19WrapRepeatsTheOtherEnd) {
  auto out = RunModel(WrapPad(19), {{"x", Floats({3}, {1, 2, 3})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{2, 3, 1, 2, 3, 1}));
}

TEST(Opset18Test, PadWrapBeforeOpset19IsAnError) {
  ExpectRefused(WrapPad(18), {{"x", Floats({3}, {1, 2, 3})}}, StatusCode::kInvalidArgument,
                {"node_under_test", "Pad-19", "opset 18"});
}

// ---------------------------------------------------------------------------------------------------------------
// Resize-18 axes and antialias, Resize-19 half_pixel_symmetric.

OpModel ResizeModel(int64_t opset, const std::string& transform, bool antialias, float scale) {
  OpModel m(opset);
  m.Input("x", kFloat, {1, 4});
  m.Floats("scales", {1}, {scale});
  m.Output("y", kFloat);
  m.Op("Resize", {"x", "", "scales"});
  m.Str("mode", "linear");
  m.Str("coordinate_transformation_mode", transform);
  AddIntsAttr(m.node, "axes", {1});
  if (antialias) SetIntAttr(m.node, "antialias", 1);
  return m;
}

TEST(Opset18Test, Resize18ScalesOnlyTheGivenAxes) {
  auto out = RunModel(ResizeModel(18, "half_pixel", false, 0.6f), {{"x", Floats({1, 4}, {0, 1, 2, 3})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 2}));
  // Output i samples (i + 0.5) / 0.6 − 0.5, where x's value equals its coordinate.
  testing::ExpectNear(out[0], {1.0f / 3, 2.0f});
}

TEST(Opset18Test, Resize18AntialiasWidensTheFilterWhenShrinking) {
  auto out = RunModel(ResizeModel(18, "half_pixel", true, 0.5f), {{"x", Floats({1, 4}, {0, 1, 2, 3})}});
  ASSERT_EQ(out.size(), 1u);
  // Triangle of half-width 2 at 0.5 and 2.5: weights 1/8, 3/8, 3/8, 1/8 over indices clamped to the edge.
  testing::ExpectNear(out[0], {0.625f, 2.375f});
}

TEST(Opset18Test, Resize19HalfPixelSymmetricCentresTheGrid) {
  auto out = RunModel(ResizeModel(19, "half_pixel_symmetric", false, 0.6f), {{"x", Floats({1, 4}, {0, 1, 2, 3})}});
  ASSERT_EQ(out.size(), 1u);
  // 4·0.6 = 2.4 floors to 2: offset = 2·(1 − 2/2.4) = 1/3 shifts half_pixel's 1/3 and 2.
  testing::ExpectNear(out[0], {2.0f / 3, 7.0f / 3});
}

TEST(Opset18Test, HalfPixelSymmetricBeforeResize19IsAnError) {
  ExpectRefused(ResizeModel(18, "half_pixel_symmetric", false, 0.6f), {{"x", Floats({1, 4}, {0, 1, 2, 3})}},
                StatusCode::kInvalidArgument, {"node_under_test", "Resize-19"});
}

// ---------------------------------------------------------------------------------------------------------------
// GroupNormalization: scale and bias per group at 18, per channel at 21.

OpModel GroupNorm(int64_t opset, const std::vector<float>& scale, const std::vector<float>& bias) {
  OpModel m(opset);
  m.Input("x", kFloat, {1, 4, 1, 2});
  const auto n = static_cast<int64_t>(scale.size());
  m.Floats("scale", {n}, scale);
  m.Floats("bias", {n}, bias);
  m.Output("y", kFloat);
  m.Op("GroupNormalization", {"x", "scale", "bias"});
  SetIntAttr(m.node, "num_groups", 2);
  return m;
}

// Each group holds {0, 2, 0, 2} + offset: mean 1 (+ offset), variance 1, so it normalises to ±1.
Tensor GroupNormInput() { return Floats({1, 4, 1, 2}, {0, 2, 0, 2, 1, 3, 1, 3}); }

TEST(Opset18Test, GroupNormalization18ScalesPerGroup) {
  auto out = RunModel(GroupNorm(18, {1, 2}, {0, 10}), {{"x", GroupNormInput()}});
  ASSERT_EQ(out.size(), 1u);
  testing::ExpectNear(out[0], {-1, 1, -1, 1, 8, 12, 8, 12}, 1e-4f);
}

TEST(Opset18Test, GroupNormalization21ScalesPerChannel) {
  auto out = RunModel(GroupNorm(21, {1, 2, 3, 4}, {0, 0, 0, 10}), {{"x", GroupNormInput()}});
  ASSERT_EQ(out.size(), 1u);
  testing::ExpectNear(out[0], {-1, 1, -2, 2, -3, 3, 6, 14}, 1e-4f);
}

TEST(Opset18Test, GroupNormalization21RejectsPerGroupScale) {
  ExpectRefused(GroupNorm(21, {1, 2}, {0, 10}), {{"x", GroupNormInput()}}, StatusCode::kInvalidArgument,
                {"node_under_test"});
}

// ---------------------------------------------------------------------------------------------------------------
// Bitwise*-18.

TEST(Opset18Test, Bitwise18OnInt32) {
  constexpr int kInt32 = onnx::TensorProto_DataType_INT32;
  OpModel m(18);
  m.Input("a", kInt32, {2});
  m.Input("b", kInt32, {2});
  for (const char* y : {"and", "or", "xor", "not"}) m.Output(y, kInt32);
  AddNode(m.g, "BitwiseAnd", {"a", "b"}, {"and"});
  AddNode(m.g, "BitwiseOr", {"a", "b"}, {"or"});
  AddNode(m.g, "BitwiseXor", {"a", "b"}, {"xor"});
  AddNode(m.g, "BitwiseNot", {"a"}, {"not"});
  auto out = RunModel(m, {{"a", MakeTensor<int32_t>({2}, {12, -1})}, {"b", MakeTensor<int32_t>({2}, {10, 5})}});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(Values<int32_t>(out[0]), (std::vector<int32_t>{8, 5}));
  EXPECT_EQ(Values<int32_t>(out[1]), (std::vector<int32_t>{14, -1}));
  EXPECT_EQ(Values<int32_t>(out[2]), (std::vector<int32_t>{6, -6}));
  EXPECT_EQ(Values<int32_t>(out[3]), (std::vector<int32_t>{-13, 0}));
}

TEST(Opset18Test, BitwiseAndRefusesFloats) {
  OpModel m(18);
  m.Input("a", kFloat, {2});
  m.Output("y", kFloat);
  m.Op("BitwiseAnd", {"a", "a"});
  ExpectRefused(m, {{"a", Floats({2}, {1, 2})}}, StatusCode::kUnsupported, {"node_under_test", "f32"});
}

// ---------------------------------------------------------------------------------------------------------------
// ScatterElements-18 / ScatterND-18 reductions max and min.

TEST(Opset18Test, ScatterElements18ReductionMax) {
  OpModel m(18);
  m.Input("data", kFloat, {3});
  m.Ints("indices", {3}, {0, 1, 1});
  m.Floats("updates", {3}, {4, 2, 7});
  m.Output("y", kFloat);
  m.Op("ScatterElements", {"data", "indices", "updates"});
  m.Str("reduction", "max");
  auto out = RunModel(m, {{"data", Floats({3}, {1, 5, 3})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{4, 7, 3}));
}

OpModel ScatterNDMin(int64_t opset) {
  OpModel m(opset);
  m.Input("data", kFloat, {4});
  m.Ints("indices", {2, 1}, {1, 3});
  m.Floats("updates", {2}, {2, 9});
  m.Output("y", kFloat);
  m.Op("ScatterND", {"data", "indices", "updates"});
  m.Str("reduction", "min");
  return m;
}

TEST(Opset18Test, ScatterND18ReductionMin) {
  auto out = RunModel(ScatterNDMin(18), {{"data", Floats({4}, {5, 5, 5, 5})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{5, 2, 5, 5}));
}

TEST(Opset18Test, ScatterNDMinBeforeOpset18IsAnError) {
  ExpectRefused(ScatterNDMin(16), {{"data", Floats({4}, {5, 5, 5, 5})}}, StatusCode::kInvalidArgument,
                {"node_under_test", "ScatterND-18"});
}

// ---------------------------------------------------------------------------------------------------------------
// LpPool-18 ceil_mode, AveragePool-19 dilations.

TEST(Opset18Test, LpPool18CeilModeKeepsThePartialWindow) {
  OpModel m(18);
  m.Input("x", kFloat, {1, 1, 1, 5});
  m.Output("y", kFloat);
  m.Op("LpPool", {"x"});
  AddIntsAttr(m.node, "kernel_shape", {1, 2});
  AddIntsAttr(m.node, "strides", {1, 2});
  SetIntAttr(m.node, "p", 1);
  SetIntAttr(m.node, "ceil_mode", 1);
  auto out = RunModel(m, {{"x", Floats({1, 1, 1, 5}, {1, 2, 3, 4, 5})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 1, 3}));
  testing::ExpectNear(out[0], {3, 7, 5});
}

TEST(Opset18Test, AveragePool19Dilations) {
  OpModel m(19);
  m.Input("x", kFloat, {1, 1, 1, 5});
  m.Output("y", kFloat);
  m.Op("AveragePool", {"x"});
  AddIntsAttr(m.node, "kernel_shape", {1, 2});
  AddIntsAttr(m.node, "dilations", {1, 2});
  auto out = RunModel(m, {{"x", Floats({1, 1, 1, 5}, {1, 2, 3, 4, 5})}});
  ASSERT_EQ(out.size(), 1u);
  testing::ExpectNear(out[0], {2, 3, 4});
}

// ---------------------------------------------------------------------------------------------------------------
// Gelu-20, AffineGrid-20.

TEST(Opset18Test, Gelu20TanhApproximation) {
  OpModel m(20);
  m.Input("x", kFloat, {2});
  m.Output("y", kFloat);
  m.Op("Gelu", {"x"});
  m.Str("approximate", "tanh");
  auto out = RunModel(m, {{"x", Floats({2}, {1, -1})}});
  ASSERT_EQ(out.size(), 1u);
  // 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) at ±1 (the exact erf form gives 0.841345 at 1).
  testing::ExpectNear(out[0], {0.8411920f, -0.1588080f}, 1e-6f);
}

OpModel AffineGrid(bool align_corners) {
  OpModel m(20);
  m.Input("theta", kFloat, {1, 2, 3});
  m.Ints("size", {4}, {1, 1, 2, 3});
  m.Output("grid", kFloat);
  m.Op("AffineGrid", {"theta", "size"}, {"grid"});
  SetIntAttr(m.node, "align_corners", align_corners ? 1 : 0);
  return m;
}

TEST(Opset18Test, AffineGrid20IdentityGivesPixelCentres) {
  auto out = RunModel(AffineGrid(false), {{"theta", Floats({1, 2, 3}, {1, 0, 0, 0, 1, 0})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 2, 3, 2}));
  const float t = 2.0f / 3;
  testing::ExpectNear(out[0], {-t, -0.5f, 0, -0.5f, t, -0.5f, -t, 0.5f, 0, 0.5f, t, 0.5f});
}

TEST(Opset18Test, AffineGrid20AlignCornersAndTranslation) {
  // x' = 2x + 1, y' = y: with align_corners the corner pixels sit on −1 and 1.
  auto out = RunModel(AffineGrid(true), {{"theta", Floats({1, 2, 3}, {2, 0, 1, 0, 1, 0})}});
  ASSERT_EQ(out.size(), 1u);
  testing::ExpectNear(out[0], {-1, -1, 1, -1, 3, -1, -1, 1, 1, 1, 3, 1});
}

// ---------------------------------------------------------------------------------------------------------------
// DeformConv-19.

OpModel DeformConv(bool with_mask, const std::vector<int64_t>& x_dims, const std::vector<int64_t>& w_dims,
                   const std::vector<int64_t>& offset_dims) {
  OpModel m(19);
  m.Input("x", kFloat, x_dims);
  m.Input("w", kFloat, w_dims);
  m.Input("offset", kFloat, offset_dims);
  m.Floats("b", {1}, {1});
  std::vector<std::string> in = {"x", "w", "offset", "b"};
  if (with_mask) {
    m.Input("mask", kFloat, {1, 4, 2, 2});
    in.push_back("mask");
  }
  m.Output("y", kFloat);
  m.Op("DeformConv", in);
  return m;
}

std::map<std::string, Tensor> DeformInputs(float dx, float mask) {
  Tensor x(DType::kF32, {1, 1, 3, 3});
  for (int i = 0; i < 9; ++i) x.data<float>()[i] = static_cast<float>(i);
  Tensor offset(DType::kF32, {1, 8, 2, 2});
  // Channel 2t holds tap t's dy, 2t + 1 its dx.
  for (int c = 0; c < 8; ++c) {
    for (int o = 0; o < 4; ++o) offset.data<float>()[c * 4 + o] = c % 2 == 1 ? dx : 0.0f;
  }
  Tensor m(DType::kF32, {1, 4, 2, 2});
  for (int i = 0; i < 16; ++i) m.data<float>()[i] = mask;
  return {{"x", x}, {"w", Floats({1, 1, 2, 2}, {1, 1, 1, 1})}, {"offset", offset}, {"mask", m}};
}

TEST(Opset18Test, DeformConv19WithZeroOffsetsIsAConv) {
  std::map<std::string, Tensor> inputs = DeformInputs(0, 1);
  inputs.erase("mask");
  auto out = RunModel(DeformConv(false, {1, 1, 3, 3}, {1, 1, 2, 2}, {1, 8, 2, 2}), inputs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 2, 2}));
  testing::ExpectNear(out[0], {9, 13, 21, 25});  // 2x2 window sums + bias 1
}

TEST(Opset18Test, DeformConv19SamplesBilinearlyAtTheOffsetAndMasks) {
  // Every tap moves half a pixel right: x + 0.5 inside, half the last column beyond the right edge (zero there).
  auto out = RunModel(DeformConv(true, {1, 1, 3, 3}, {1, 1, 2, 2}, {1, 8, 2, 2}), DeformInputs(0.5f, 0.5f));
  ASSERT_EQ(out.size(), 1u);
  testing::ExpectNear(out[0], {1 + 0.5f * 10, 1 + 0.5f * 9.5f, 1 + 0.5f * 22, 1 + 0.5f * 18.5f});
}

TEST(Opset18Test, DeformConv19In3DSaysItIsNotImplemented) {
  OpModel m = DeformConv(false, {1, 1, 2, 2, 2}, {1, 1, 1, 1, 1}, {1, 3, 2, 2, 2});
  ExpectRefused(m, {}, StatusCode::kUnsupported, {"node_under_test", "DeformConv-19", "not implemented"});
}

// ---------------------------------------------------------------------------------------------------------------
// Types newer opsets added that chipfit's tensors cannot hold: refused by name, never misread.

TEST(Opset18Test, Cast21ToInt4IsRefusedNamingTheType) {
  OpModel m(21);
  m.Input("x", kFloat, {2});
  m.Output("y", onnx::TensorProto_DataType_INT8);
  m.Op("Cast", {"x"});
  SetIntAttr(m.node, "to", 22);  // INT4
  ExpectRefused(m, {{"x", Floats({2}, {1, 2})}}, StatusCode::kUnsupported, {"node_under_test", "int4"});
}

TEST(Opset18Test, Cast19ToFloat8IsRefusedNamingTheType) {
  OpModel m(19);
  m.Input("x", kFloat, {2});
  m.Output("y", kFloat);
  m.Op("Cast", {"x"});
  SetIntAttr(m.node, "to", 17);  // FLOAT8E4M3FN
  SetIntAttr(m.node, "saturate", 1);
  ExpectRefused(m, {{"x", Floats({2}, {1, 2})}}, StatusCode::kUnsupported, {"float8e4m3fn"});
}

TEST(Opset18Test, Cast19ToBFloat16RoundsToNearestEven) {
  // 1 + 3/256 lies halfway between bfloat16 neighbours 1 + 1/128 and 1 + 2/128: Cast-19 rounds to the even one;
  // before 19 chipfit truncates, as the ONNX test data of those opsets does.
  OpModel m(19);
  m.Input("x", kFloat, {1});
  m.Output("y", onnx::TensorProto_DataType_BFLOAT16);
  m.Op("Cast", {"x"});
  SetIntAttr(m.node, "to", onnx::TensorProto_DataType_BFLOAT16);
  auto out = RunModel(m, {{"x", Floats({1}, {1.01171875f})}});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].dtype(), DType::kBF16);
  EXPECT_EQ(static_cast<float>(out[0].data<BFloat16>()[0]), 1.015625f);
}

TEST(Opset18Test, ConstantOfShape21WithAnInt4ValueIsRefused) {
  OpModel m(21);
  m.Ints("shape", {1}, {2});
  m.Output("y", kFloat);
  m.Op("ConstantOfShape", {"shape"});
  auto* a = m.node->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(22);  // INT4
  a->mutable_t()->add_dims(1);
  a->mutable_t()->set_raw_data(std::string(1, '\x01'));
  auto out = RunOnReference(m, {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnsupported) << out.status().ToString();
  EXPECT_NE(out.status().message().find("node_under_test"), std::string::npos) << out.status().ToString();
}

// ---------------------------------------------------------------------------------------------------------------
// The coverage report.

TEST(Opset18Test, EveryReferenceOpHasAVersionRecord) {
  std::set<std::pair<std::string, std::string>> ops;
  for (const OpCoverage& row : ReferenceOpCoverage()) {
    ops.insert({row.op_type, row.domain});
    EXPECT_GT(row.implemented_version, 0) << row.op_type << ": " << row.refuses;
    EXPECT_LE(row.implemented_version, row.onnx_version) << row.op_type;
    if (row.domain.empty()) {
      EXPECT_LE(row.onnx_version, 21) << row.op_type;
    }
  }
  EXPECT_EQ(ops.size(), ReferenceOps().size());
  // No stale rows: every record names an op of the table, once.
  std::set<std::pair<std::string, std::string>> records;
  for (const OpVersion& v : ReferenceOpVersions()) {
    EXPECT_TRUE(records.insert({v.op_type, v.domain}).second) << v.op_type << " has two records";
    EXPECT_TRUE(ops.count({v.op_type, v.domain})) << v.op_type << " is not in the reference table";
  }
}

TEST(Opset18Test, CoverageNamesTheNewerFormsThisWorkAdded) {
  std::map<std::string, OpCoverage> by_op;
  for (const OpCoverage& row : ReferenceOpCoverage()) by_op[row.op_type] = row;
  for (const char* op : {"Col2Im", "CenterCropPad", "BitwiseAnd", "BitwiseNot", "AffineGrid", "DeformConv"}) {
    ASSERT_TRUE(by_op.count(op)) << op << " is missing from the reference table";
  }
  EXPECT_EQ(by_op["Resize"].implemented_version, 19);
  EXPECT_EQ(by_op["ReduceMax"].implemented_version, 20);
  EXPECT_EQ(by_op["GroupNormalization"].implemented_version, 21);
  EXPECT_EQ(by_op["Upsample"].implemented_version, 9);
}

}  // namespace
}  // namespace chipfit
