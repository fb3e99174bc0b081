// Sequence and optional values through import, compile and run on the reference target: the Sequence*
// ops, a Loop that carries a sequence and reads an outer value, an If whose branches return an empty
// and a full optional, and the errors a sequence meets where a tensor is expected.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/graph/onnx_import.h"
#include "core/graph/onnx_loader.h"
#include "core/runtime/compiled_model.h"
#include "tests/core/onnx_builder.h"
#include "tests/core/reference/ref_test_util.h"

namespace chipfit {
namespace {

using testing::AddGraphAttr;
using testing::AddNode;
using testing::AddScalarInit;
using testing::AddTypedValue;
using testing::AddValue;
using testing::F32;
using testing::MakeTensor;
using testing::NewModel;
using testing::SetIntAttr;

constexpr int kFloat = onnx::TensorProto_DataType_FLOAT;
constexpr int kInt64 = onnx::TensorProto_DataType_INT64;
constexpr int kBool = onnx::TensorProto_DataType_BOOL;

// seq(float) or optional(float): a value without a declared element shape.
void AddSequenceValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name) {
  auto* v = list->Add();
  v->set_name(name);
  v->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(kFloat);
}

void AddOptionalValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name) {
  auto* v = list->Add();
  v->set_name(name);
  v->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(kFloat);
}

std::vector<float> Values(const Tensor& t) { return testing::Values<float>(t); }

Result<std::vector<Tensor>> RunModel(const onnx::ModelProto& m, const std::map<std::string, Tensor>& inputs) {
  ASSIGN_OR_RETURN(LoadedOnnxModel loaded, CheckOnnxModel(m, "sequence test", {}));
  ASSIGN_OR_RETURN(Graph graph, ImportModel(loaded, {.require_static_inputs = false}));
  ASSIGN_OR_RETURN(std::unique_ptr<CompiledModel> model, Compile(graph, Target{}));
  return model->Run(inputs);
}

// x [4, 2] → rows as a sequence → erase the last → insert x's first row at the front → length, the
// element at -1, and the rows stacked again (then Relu, a tensor op after a sequence op).
onnx::ModelProto SplitEditConcat() {
  onnx::ModelProto m = NewModel("split_edit_concat", 16);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {4, 2});
  AddTypedValue(g->mutable_output(), "n", kInt64, {});
  AddTypedValue(g->mutable_output(), "last", kFloat, {1, 2});
  AddTypedValue(g->mutable_output(), "y", kFloat, {4, 2});
  AddSequenceValue(g->mutable_output(), "rows");
  AddScalarInit(g, "zero", kInt64, 0);
  AddScalarInit(g, "minus_one", kInt64, -1);
  AddNode(g, "SplitToSequence", {"x"}, {"rows"}, "split");
  AddNode(g, "SequenceErase", {"rows"}, {"erased"}, "erase");
  AddNode(g, "SequenceAt", {"rows", "zero"}, {"first"}, "at0");
  AddNode(g, "SequenceInsert", {"erased", "first", "zero"}, {"edited"}, "insert");
  AddNode(g, "SequenceLength", {"edited"}, {"n"}, "length");
  AddNode(g, "SequenceAt", {"edited", "minus_one"}, {"last"}, "at_last");
  SetIntAttr(AddNode(g, "ConcatFromSequence", {"edited"}, {"stacked"}, "concat"), "axis", 0);
  AddNode(g, "Neg", {"stacked"}, {"y"}, "neg");
  return m;
}

TEST(SequenceTest, SplitEditAndConcatenate) {
  auto out = RunModel(SplitEditConcat(), {{"x", F32({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 4u);
  EXPECT_EQ((*out)[0].GetAsInt64(0), 4);
  EXPECT_EQ(Values((*out)[1]), (std::vector<float>{5, 6}));
  EXPECT_EQ((*out)[2].shape(), (Shape{4, 2}));
  EXPECT_EQ(Values((*out)[2]), (std::vector<float>{-1, -2, -1, -2, -3, -4, -5, -6}));
  const Tensor& rows = (*out)[3];
  ASSERT_TRUE(rows.is_sequence());
  ASSERT_EQ(rows.elements().size(), 4u);
  EXPECT_EQ(rows.elements()[3].shape(), (Shape{1, 2}));
  EXPECT_EQ(Values(rows.elements()[3]), (std::vector<float>{7, 8}));
  EXPECT_EQ(DescribeTensor(rows), "seq(f32)[4]");
}

// A Loop carries a sequence (from SequenceEmpty) and appends the outer value x each iteration; the
// result is stacked on a new axis.
onnx::ModelProto LoopBuildsASequence() {
  onnx::ModelProto m = NewModel("loop_sequence", 16);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {2});
  AddTypedValue(g->mutable_output(), "stacked", kFloat, {3, 2});
  AddScalarInit(g, "trips", kInt64, 3);
  AddNode(g, "SequenceEmpty", {}, {"empty"}, "empty");
  onnx::GraphProto body;
  body.set_name("body");
  AddTypedValue(body.mutable_input(), "i", kInt64, {});
  AddTypedValue(body.mutable_input(), "cond_in", kBool, {});
  AddSequenceValue(body.mutable_input(), "seq_in");
  AddTypedValue(body.mutable_output(), "cond_out", kBool, {});
  AddSequenceValue(body.mutable_output(), "seq_out");
  AddNode(&body, "Identity", {"cond_in"}, {"cond_out"}, "keep_going");
  AddNode(&body, "SequenceInsert", {"seq_in", "x"}, {"seq_out"}, "append");
  AddGraphAttr(AddNode(g, "Loop", {"trips", "", "empty"}, {"built"}, "loop"), "body", body);
  auto* concat = AddNode(g, "ConcatFromSequence", {"built"}, {"stacked"}, "stack");
  SetIntAttr(concat, "axis", 0);
  SetIntAttr(concat, "new_axis", 1);
  return m;
}

TEST(SequenceTest, LoopCarriesASequenceAndReadsAnOuterValue) {
  auto out = RunModel(LoopBuildsASequence(), {{"x", F32({2}, {1.5f, -2})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{1.5f, -2, 1.5f, -2, 1.5f, -2}));
}

// y = If(cond) then Optional() (empty) else Optional(x); has = OptionalHasElement(y).
onnx::ModelProto IfReturnsAnOptional() {
  onnx::ModelProto m = NewModel("if_optional", 16);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {2});
  AddTypedValue(g->mutable_input(), "cond", kBool, {});
  AddOptionalValue(g->mutable_output(), "y");
  AddTypedValue(g->mutable_output(), "has", kBool, {});
  onnx::GraphProto then_branch;
  then_branch.set_name("then");
  AddOptionalValue(then_branch.mutable_output(), "none");
  auto* empty = AddNode(&then_branch, "Optional", {}, {"none"}, "make_none");
  auto* type = empty->add_attribute();
  type->set_name("type");
  type->set_type(onnx::AttributeProto::TYPE_PROTO);
  type->mutable_tp()->mutable_tensor_type()->set_elem_type(kFloat);
  onnx::GraphProto else_branch;
  else_branch.set_name("else");
  AddOptionalValue(else_branch.mutable_output(), "some");
  AddNode(&else_branch, "Optional", {"x"}, {"some"}, "wrap");
  auto* node = AddNode(g, "If", {"cond"}, {"y"}, "if");
  AddGraphAttr(node, "then_branch", then_branch);
  AddGraphAttr(node, "else_branch", else_branch);
  AddNode(g, "OptionalHasElement", {"y"}, {"has"}, "has");
  return m;
}

TEST(SequenceTest, IfReturnsAnEmptyOrAFullOptional) {
  const Tensor x = F32({2}, {3, 4});
  auto none = RunModel(IfReturnsAnOptional(), {{"x", x}, {"cond", MakeTensor<bool>({}, {true})}});
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE((*none)[0].is_none());
  EXPECT_EQ(DescribeTensor((*none)[0]), "none(f32)");
  EXPECT_FALSE((*none)[1].data<bool>()[0]);
  auto some = RunModel(IfReturnsAnOptional(), {{"x", x}, {"cond", MakeTensor<bool>({}, {false})}});
  ASSERT_TRUE(some.ok()) << some.status().ToString();
  EXPECT_EQ(Values((*some)[0]), (std::vector<float>{3, 4}));
  EXPECT_TRUE((*some)[1].data<bool>()[0]);
}

// A sequence input: Identity passes it through; a tensor given for it is refused, naming the type.
onnx::ModelProto IdentityOfASequence() {
  onnx::ModelProto m = NewModel("identity_sequence", 16);
  auto* g = m.mutable_graph();
  AddSequenceValue(g->mutable_input(), "s");
  AddSequenceValue(g->mutable_output(), "t");
  AddNode(g, "Identity", {"s"}, {"t"}, "identity");
  return m;
}

TEST(SequenceTest, IdentityPassesASequenceAndAWrongFormIsRefused) {
  const Tensor s = Tensor::Sequence(DType::kF32, {F32({1}, {1}), F32({2}, {2, 3})});
  auto out = RunModel(IdentityOfASequence(), {{"s", s}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_TRUE((*out)[0].is_sequence());
  EXPECT_EQ(Values((*out)[0].elements()[1]), (std::vector<float>{2, 3}));
  auto wrong = RunModel(IdentityOfASequence(), {{"s", F32({2}, {1, 2})}});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("input 's' is f32[2], the model expects seq(f32)"), std::string::npos)
      << wrong.status().message();
}

TEST(SequenceTest, PositionsOutOfRangeNameTheNode) {
  onnx::ModelProto m = NewModel("bad_position", 16);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {3, 2});
  AddTypedValue(g->mutable_output(), "row", kFloat, {1, 2});
  AddScalarInit(g, "far", kInt64, 7);
  AddNode(g, "SplitToSequence", {"x"}, {"rows"}, "split");
  AddNode(g, "SequenceAt", {"rows", "far"}, {"row"}, "at_far");
  auto out = RunModel(m, {{"x", F32({3, 2}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("node 'at_far' (SequenceAt): position 7 is outside [-3, 2]"), std::string::npos)
      << out.status().message();
}

TEST(SequenceTest, SequenceValuesHaveNoDataAndCloneShareElements) {
  const Tensor s = Tensor::Sequence(DType::kF32, {F32({2}, {1, 2})});
  EXPECT_TRUE(s.defined());
  EXPECT_EQ(s.numel(), 0);
  EXPECT_EQ(s.Clone().elements()[0].raw_data(), s.elements()[0].raw_data());
  // An element that borrowed its data is copied into the sequence.
  float data[2] = {5, 6};
  const Tensor view = Tensor::View(DType::kF32, {2}, data);
  const Tensor owned = Tensor::Sequence(DType::kF32, {view});
  EXPECT_NE(owned.elements()[0].raw_data(), static_cast<const void*>(data));
  EXPECT_TRUE(Tensor::None(DType::kI64).defined());
  EXPECT_EQ(DescribeTensor(Tensor::None(DType::kF32, true)), "none(seq(f32))");
}

TEST(SequenceTest, StringTensorsOwnTheirStrings) {
  Tensor t(DType::kString, {2});
  t.data<std::string>()[0] = "monday";
  t.data<std::string>()[1] = "tuesday";
  Tensor copy = t.Clone();
  t.data<std::string>()[0] = "changed";
  EXPECT_EQ(copy.data<std::string>()[0], "monday");
  EXPECT_EQ(copy.data<std::string>()[1], "tuesday");
}

}  // namespace
}  // namespace chipfit
