// Control flow on the reference target: If, Loop and Scan bodies that read values of the graphs
// around them (to any depth), the forms of Loop and Scan; and import: graphs whose nodes are out of
// order, value types chipfit lacks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/graph/onnx_import.h"
#include "core/graph/onnx_loader.h"
#include "core/runtime/compiled_model.h"
#include "tests/core/onnx_builder.h"

namespace chipfit {
namespace {

using testing::AddGraphAttr;
using testing::AddIntsAttr;
using testing::AddNode;
using testing::AddScalarInit;
using testing::AddTypedValue;
using testing::AddValue;
using testing::NewModel;

Tensor Floats(Shape shape, const std::vector<float>& values) {
  Tensor t(DType::kF32, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = values[i];
  return t;
}

std::vector<float> Values(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.numel()); }

Result<std::vector<Tensor>> RunOnReference(const onnx::ModelProto& m, const std::map<std::string, Tensor>& inputs,
                                           const OnnxLoadOptions& load = {}) {
  ASSIGN_OR_RETURN(LoadedOnnxModel loaded, CheckOnnxModel(m, "control flow test", load));
  ASSIGN_OR_RETURN(Graph graph, ImportModel(loaded));
  ASSIGN_OR_RETURN(std::unique_ptr<CompiledModel> model, Compile(graph, Target{}));
  return model->Run(inputs);
}

// A branch with no nodes that returns `value` of the enclosing graph.
onnx::GraphProto Forward(const std::string& name, const std::string& value, const std::vector<int64_t>& dims) {
  onnx::GraphProto g;
  g.set_name(name);
  AddValue(g.mutable_output(), value, dims);
  return g;
}

// x → a = Relu(x) → b = Neg(a) → c = Abs(b); y = If(cond) then a else b. `a`'s last reader in the
// main graph is Neg, before the If: a taken branch that only forwards it must still see it, not the
// arena bytes that c reuses.
onnx::ModelProto IfForwardingOuterValue() {
  onnx::ModelProto m = NewModel("if_forward");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {2, 3});
  AddTypedValue(g->mutable_input(), "cond", onnx::TensorProto_DataType_BOOL, {});
  AddValue(g->mutable_output(), "y", {2, 3});
  AddValue(g->mutable_output(), "c", {2, 3});
  AddNode(g, "Relu", {"x"}, {"a"}, "relu");
  AddNode(g, "Neg", {"a"}, {"b"}, "neg");
  AddNode(g, "Abs", {"b"}, {"c"}, "abs");
  auto* node = AddNode(g, "If", {"cond"}, {"y"}, "if");
  AddGraphAttr(node, "then_branch", Forward("then", "a", {2, 3}));
  AddGraphAttr(node, "else_branch", Forward("else", "b", {2, 3}));
  return m;
}

Tensor Bool(bool v) {
  Tensor t(DType::kBool, {});
  t.data<bool>()[0] = v;
  return t;
}

TEST(ControlFlowTest, IfBranchForwardsAnOuterValueWhoseLastOtherReaderRanBefore) {
  const Tensor x = Floats({2, 3}, {-1, 2, -3, 4, -5, 6});
  auto taken = RunOnReference(IfForwardingOuterValue(), {{"x", x}, {"cond", Bool(true)}});
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_EQ(Values((*taken)[0]), (std::vector<float>{0, 2, 0, 4, 0, 6}));
  EXPECT_EQ(Values((*taken)[1]), (std::vector<float>{0, 2, 0, 4, 0, 6}));
  auto other = RunOnReference(IfForwardingOuterValue(), {{"x", x}, {"cond", Bool(false)}});
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_EQ(Values((*other)[0]), (std::vector<float>{0, -2, 0, -4, 0, -6}));
}

// Two levels: the outer If's then branch computes t = Add(x, w) and holds an inner If whose branch
// reads x (two scopes up), w (a main-graph initializer) and t (one scope up).
TEST(ControlFlowTest, NestedIfReadsValuesFromEveryEnclosingScope) {
  onnx::ModelProto m = NewModel("nested_if");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {3});
  AddTypedValue(g->mutable_input(), "cond", onnx::TensorProto_DataType_BOOL, {});
  AddValue(g->mutable_output(), "y", {3});
  testing::AddInitializer(g, "w", {3}, [](int64_t i) { return static_cast<float>(i + 1); });

  onnx::GraphProto inner_then;
  inner_then.set_name("inner_then");
  AddValue(inner_then.mutable_output(), "r", {3});
  AddNode(&inner_then, "Mul", {"x", "w"}, {"xw"}, "mul");
  AddNode(&inner_then, "Add", {"xw", "t"}, {"r"}, "add_t");
  onnx::GraphProto inner_else = Forward("inner_else", "t", {3});

  onnx::GraphProto outer_then;
  outer_then.set_name("outer_then");
  AddValue(outer_then.mutable_output(), "inner_out", {3});
  AddNode(&outer_then, "Add", {"x", "w"}, {"t"}, "add_w");
  auto* inner = AddNode(&outer_then, "If", {"cond"}, {"inner_out"}, "inner_if");
  AddGraphAttr(inner, "then_branch", inner_then);
  AddGraphAttr(inner, "else_branch", inner_else);

  auto* outer = AddNode(g, "If", {"cond"}, {"y"}, "outer_if");
  AddGraphAttr(outer, "then_branch", outer_then);
  AddGraphAttr(outer, "else_branch", Forward("outer_else", "x", {3}));

  auto out = RunOnReference(m, {{"x", Floats({3}, {1, 2, 3})}, {"cond", Bool(true)}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // x·w + (x + w) = {1+2, 4+4, 9+6}
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{3, 8, 15}));
}

// The pattern of a public voice-activity model: the outer If's else branch holds an inner If whose then
// branch squeezes axis 2 of x, valid only when that dim is 1 (another sample rate). With x 1x2x2 the branch
// never runs: the model compiles and runs as ONNX Runtime runs it, and with x 1x2x1 it takes that branch.
// The placement counts cover the kernels of every body, as the kernel list does.
TEST(ControlFlowTest, ABranchValidOnlyForOtherInputsCompilesAndRunsWhenTaken) {
  onnx::ModelProto m = NewModel("nested_if_squeeze");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {1, 2, 1});
  g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(2)->set_dim_param("T");
  AddTypedValue(g->mutable_input(), "outer", onnx::TensorProto_DataType_BOOL, {});
  AddTypedValue(g->mutable_input(), "inner", onnx::TensorProto_DataType_BOOL, {});
  AddTypedValue(g->mutable_output(), "y", onnx::TensorProto_DataType_FLOAT, {}, false);
  testing::AddI64Init(g, "axes", {2});

  onnx::GraphProto squeeze;
  squeeze.set_name("inner_then");
  AddTypedValue(squeeze.mutable_output(), "squeezed", onnx::TensorProto_DataType_FLOAT, {}, false);
  AddNode(&squeeze, "Squeeze", {"x", "axes"}, {"squeezed"}, "decoder/Squeeze");
  onnx::GraphProto reduce;
  reduce.set_name("inner_else");
  AddTypedValue(reduce.mutable_output(), "reduced", onnx::TensorProto_DataType_FLOAT, {}, false);
  auto* max = AddNode(&reduce, "ReduceMax", {"x"}, {"reduced"}, "decoder/ReduceMax");
  AddIntsAttr(max, "axes", {2});
  testing::SetIntAttr(max, "keepdims", 0);

  onnx::GraphProto outer_else;
  outer_else.set_name("outer_else");
  AddTypedValue(outer_else.mutable_output(), "inner_out", onnx::TensorProto_DataType_FLOAT, {}, false);
  auto* inner = AddNode(&outer_else, "If", {"inner"}, {"inner_out"}, "decoder/If");
  AddGraphAttr(inner, "then_branch", squeeze);
  AddGraphAttr(inner, "else_branch", reduce);
  onnx::GraphProto outer_then;
  outer_then.set_name("outer_then");
  AddTypedValue(outer_then.mutable_output(), "mean", onnx::TensorProto_DataType_FLOAT, {}, false);
  auto* mean = AddNode(&outer_then, "ReduceMean", {"x"}, {"mean"}, "encoder/ReduceMean");
  AddIntsAttr(mean, "axes", {2});
  testing::SetIntAttr(mean, "keepdims", 0);
  auto* outer = AddNode(g, "If", {"outer"}, {"y"}, "If_0");
  AddGraphAttr(outer, "then_branch", outer_then);
  AddGraphAttr(outer, "else_branch", outer_else);

  auto loaded = CheckOnnxModel(m, "nested if test", {.input_shapes = {{"x", {1, 2, 2}}}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto graph = ImportModel(*loaded);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  auto model = Compile(*graph, Target{});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ((*model)->stats().kernels, static_cast<int>((*model)->kernels().size()));
  EXPECT_GT((*model)->stats().kernels, 3);  // If_0 and the bodies' kernels
  const Tensor wide = Floats({1, 2, 2}, {1, 5, -2, 4});
  auto other_branch = (*model)->Run({{"x", wide}, {"outer", Bool(false)}, {"inner", Bool(false)}});
  ASSERT_TRUE(other_branch.ok()) << other_branch.status().ToString();
  EXPECT_EQ(Values((*other_branch)[0]), (std::vector<float>{5, 4}));
  // Taken with a dim that is not 1: the error of running it, naming the node.
  auto taken_wrongly = (*model)->Run({{"x", wide}, {"outer", Bool(false)}, {"inner", Bool(true)}});
  ASSERT_FALSE(taken_wrongly.ok());
  EXPECT_NE(taken_wrongly.status().message().find("decoder/Squeeze"), std::string::npos)
      << taken_wrongly.status().message();

  auto narrow_loaded = CheckOnnxModel(m, "nested if test", {.input_shapes = {{"x", {1, 2, 1}}}});
  ASSERT_TRUE(narrow_loaded.ok()) << narrow_loaded.status().ToString();
  auto narrow_graph = ImportModel(*narrow_loaded);
  ASSERT_TRUE(narrow_graph.ok()) << narrow_graph.status().ToString();
  auto narrow = Compile(*narrow_graph, Target{});
  ASSERT_TRUE(narrow.ok()) << narrow.status().ToString();
  auto taken = (*narrow)->Run({{"x", Floats({1, 2, 1}, {3, -7})}, {"outer", Bool(false)}, {"inner", Bool(true)}});
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_EQ(Values((*taken)[0]), (std::vector<float>{3, -7}));
}

// Loop body: acc' = acc + x (x from the main graph), scan output acc'; cond' = iteration < limit.
onnx::ModelProto LoopModel(bool with_trip_count, bool with_cond, int64_t limit) {
  onnx::ModelProto m = NewModel("loop");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {2});
  AddValue(g->mutable_input(), "acc0", {2});
  AddValue(g->mutable_output(), "acc", {2});
  AddTypedValue(g->mutable_output(), "history", onnx::TensorProto_DataType_FLOAT, {}, false);
  AddScalarInit(g, "trips", onnx::TensorProto_DataType_INT64, 5);
  AddScalarInit(g, "go", onnx::TensorProto_DataType_BOOL, 1);

  onnx::GraphProto body;
  body.set_name("body");
  AddTypedValue(body.mutable_input(), "i", onnx::TensorProto_DataType_INT64, {});
  AddTypedValue(body.mutable_input(), "cond_in", onnx::TensorProto_DataType_BOOL, {});
  AddTypedValue(body.mutable_input(), "acc_in", onnx::TensorProto_DataType_FLOAT, {2});
  AddTypedValue(body.mutable_output(), "cond_out", onnx::TensorProto_DataType_BOOL, {});
  AddTypedValue(body.mutable_output(), "acc_out", onnx::TensorProto_DataType_FLOAT, {2});
  AddTypedValue(body.mutable_output(), "acc_scan", onnx::TensorProto_DataType_FLOAT, {2});
  AddScalarInit(&body, "limit", onnx::TensorProto_DataType_INT64, limit);
  AddNode(&body, "Add", {"acc_in", "x"}, {"acc_out"}, "add");
  AddNode(&body, "Identity", {"acc_out"}, {"acc_scan"}, "copy");
  AddNode(&body, "Less", {"i", "limit"}, {"cond_out"}, "less");

  auto* loop =
      AddNode(g, "Loop", {with_trip_count ? "trips" : "", with_cond ? "go" : "", "acc0"}, {"acc", "history"}, "loop");
  AddGraphAttr(loop, "body", body);
  return m;
}

TEST(ControlFlowTest, LoopRunsEveryFormOfTripCountAndCondition) {
  const std::map<std::string, Tensor> inputs = {{"x", Floats({2}, {1, 10})}, {"acc0", Floats({2}, {0, 0})}};
  struct Form {
    bool trips, cond;
    int64_t limit;
    int64_t expected_iterations;
  };
  // M = 5 alone: the body's cond still stops it (as ONNX Runtime does) when limit < 4.
  for (const Form& f : {Form{true, false, 100, 5}, Form{false, true, 2, 3}, Form{true, true, 100, 5},
                        Form{true, true, 1, 2}, Form{false, false, 3, 4}}) {
    SCOPED_TRACE(::testing::Message() << "trip count " << f.trips << ", cond " << f.cond << ", limit " << f.limit);
    auto out = RunOnReference(LoopModel(f.trips, f.cond, f.limit), inputs);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const auto n = static_cast<float>(f.expected_iterations);
    EXPECT_EQ(Values((*out)[0]), (std::vector<float>{n, 10 * n}));
    ASSERT_EQ((*out)[1].shape(), (Shape{f.expected_iterations, 2}));
    EXPECT_EQ((*out)[1].data<float>()[2], 2.0f);  // the second iteration's acc
  }
}

// Scan (opset 11): state s' = s + row; scan input read in reverse; the per-iteration output is
// stacked along axis 1.
TEST(ControlFlowTest, ScanReadsReverseAndStacksAlongTheOutputAxis) {
  onnx::ModelProto m = NewModel("scan", 11);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "s0", {2});
  AddValue(g->mutable_input(), "xs", {3, 2});
  AddValue(g->mutable_output(), "s", {2});
  AddValue(g->mutable_output(), "ys", {2, 3});
  onnx::GraphProto body;
  body.set_name("body");
  AddValue(body.mutable_input(), "s_in", {2});
  AddValue(body.mutable_input(), "row", {2});
  AddValue(body.mutable_output(), "s_out", {2});
  AddValue(body.mutable_output(), "y", {2});
  AddNode(&body, "Add", {"s_in", "row"}, {"s_out"}, "add");
  AddNode(&body, "Identity", {"s_out"}, {"y"}, "copy");
  auto* scan = AddNode(g, "Scan", {"s0", "xs"}, {"s", "ys"}, "scan");
  AddGraphAttr(scan, "body", body);
  testing::SetIntAttr(scan, "num_scan_inputs", 1);
  AddIntsAttr(scan, "scan_input_directions", {1});
  AddIntsAttr(scan, "scan_output_axes", {1});
  auto out = RunOnReference(m, {{"s0", Floats({2}, {0, 0})}, {"xs", Floats({3, 2}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{9, 12}));
  // Rows in reverse: (5,6), (3,4), (1,2) → running sums (5,6), (8,10), (9,12), stacked on axis 1.
  EXPECT_EQ(Values((*out)[1]), (std::vector<float>{5, 8, 9, 6, 10, 12}));
}

// The nodes of IfForwardingOuterValue, last first: the If comes before the Relu that makes the
// value its branch reads, so only a sort that counts a body's outer reads can order them.
onnx::ModelProto Reversed(onnx::ModelProto m) {
  auto* nodes = m.mutable_graph()->mutable_node();
  std::reverse(nodes->begin(), nodes->end());
  return m;
}

TEST(ControlFlowTest, UnsortedGraphIsSortedWithTheCheckersComplaintAsAWarning) {
  const onnx::ModelProto m = Reversed(IfForwardingOuterValue());
  auto loaded = CheckOnnxModel(m, "unsorted");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  bool warned = false;
  for (const std::string& note : loaded->notes) warned |= note.find("topologically sorted") != std::string::npos;
  EXPECT_TRUE(warned) << "inspect must show the checker's text";
  auto out = RunOnReference(m, {{"x", Floats({2, 3}, {-1, 2, -3, 4, -5, 6})}, {"cond", Bool(true)}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{0, 2, 0, 4, 0, 6}));
}

TEST(ControlFlowTest, UnsortedGraphWithoutTheCheckerIsSortedByTheImporter) {
  auto out = RunOnReference(Reversed(IfForwardingOuterValue()),
                            {{"x", Floats({2, 3}, {1, 1, 1, 1, 1, 1})}, {"cond", Bool(false)}}, {.run_checker = false});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{-1, -1, -1, -1, -1, -1}));
}

// A segmentation-model pattern: weights stored as float16 initializers, Cast to float before use,
// written with each Cast after its reader (the file is not topologically sorted).
TEST(ControlFlowTest, Fp16WeightsCastToFloatInAnUnsortedGraph) {
  onnx::ModelProto m = NewModel("fp16_weights");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {1, 2});
  AddValue(g->mutable_output(), "y", {1, 2});
  auto* w = g->add_initializer();
  w->set_name("w16");
  w->set_data_type(onnx::TensorProto_DataType_FLOAT16);
  w->add_dims(2);
  w->add_dims(2);
  for (uint16_t bits : {0x3c00, 0x4000, 0xbc00, 0x3800}) w->add_int32_data(bits);  // 1, 2, -1, 0.5
  AddNode(g, "MatMul", {"x", "w"}, {"y"}, "matmul");
  testing::SetIntAttr(AddNode(g, "Cast", {"w16"}, {"w"}, "cast_w"), "to", onnx::TensorProto_DataType_FLOAT);
  auto loaded = CheckOnnxModel(m, "fp16 weights");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto out = RunOnReference(m, {{"x", Floats({1, 2}, {3, 4})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // [3 4] · [[1 2] [-1 0.5]] = [-1 8]
  EXPECT_EQ(Values((*out)[0]), (std::vector<float>{-1, 8}));
}

// Both branches return f32[2x3]: the If's output shape is known at compile time, so the node after
// it is compiled with static shapes (not left to run time).
TEST(ControlFlowTest, IfOutputShapeIsKnownWhenTheBranchesAgree) {
  onnx::ModelProto m = IfForwardingOuterValue();
  AddNode(m.mutable_graph(), "Relu", {"y"}, {"z"}, "after_if");
  AddValue(m.mutable_graph()->mutable_output(), "z", {2, 3});
  auto loaded = CheckOnnxModel(m, "if then relu");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto graph = ImportModel(*loaded);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  auto model = Compile(*graph, Target{});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(model->get()->stats().dynamic_kernels, 1) << "only the If itself allocates at run time";
  auto out = model->get()->Run({{"x", Floats({2, 3}, {-1, 2, -3, 4, -5, 6})}, {"cond", Bool(false)}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[2]), (std::vector<float>{0, 0, 0, 0, 0, 0}));
}

// A float8 input (element type 17, newer than libonnx 1.12's names) is refused naming the value and type.
TEST(ControlFlowTest, AnInputOfAnUnknownElementTypeIsRefusedByName) {
  onnx::ModelProto m = NewModel("float8", 19);
  auto* g = m.mutable_graph();
  AddTypedValue(g->mutable_input(), "x8", 17, {4});
  AddValue(g->mutable_output(), "y", {4});
  testing::SetIntAttr(AddNode(g, "Cast", {"x8"}, {"y"}, "cast"), "to", onnx::TensorProto_DataType_FLOAT);
  auto loaded = CheckOnnxModel(m, "float8", {.run_checker = false, .infer_shapes = false});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto graph = ImportModel(*loaded);
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(graph.status().message().find("'x8' has element type FLOAT8E4M3FN"), std::string::npos)
      << graph.status().message();
}

TEST(ControlFlowTest, ACycleIsAnErrorNamingANodeOnIt) {
  onnx::ModelProto m = NewModel("cycle");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {2});
  AddValue(g->mutable_output(), "y", {2});
  AddNode(g, "Add", {"x", "b"}, {"a"}, "first");
  AddNode(g, "Relu", {"a"}, {"b"}, "second");
  AddNode(g, "Identity", {"a"}, {"y"}, "out");
  auto loaded = CheckOnnxModel(m, "cycle", {.run_checker = false});
  ASSERT_TRUE(loaded.ok());
  auto graph = ImportModel(*loaded);
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("cycle"), std::string::npos) << graph.status().message();
  EXPECT_NE(graph.status().message().find("'first'"), std::string::npos) << graph.status().message();
}

TEST(ControlFlowTest, TrainingOperatorsAreUnsupportedWithThatReason) {
  onnx::ModelProto m = NewModel("training");
  auto* opset = m.add_opset_import();
  opset->set_domain("ai.onnx.preview.training");
  opset->set_version(1);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {2});
  AddValue(g->mutable_output(), "y", {2});
  auto* node = AddNode(g, "Momentum", {"x"}, {"y"}, "momentum");
  node->set_domain("ai.onnx.preview.training");
  auto out = RunOnReference(m, {{"x", Floats({2}, {1, 2})}}, {.run_checker = false});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(out.status().message().find("training operator"), std::string::npos) << out.status().message();
}

}  // namespace
}  // namespace chipfit
