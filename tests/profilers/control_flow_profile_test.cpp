// Profiling inside control flow: a body's nodes are layers of their own, named by their path, placed
// on the target's device, with Loop iterations counted and summed; the control-flow layer keeps only
// its own time.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/graph/onnx_import.h"
#include "devices/target_compiler.h"
#include "profilers/profiler.h"
#include "tests/core/onnx_builder.h"

namespace chipfit {
namespace {

using testing::AddGraphAttr;
using testing::AddNode;
using testing::AddScalarInit;
using testing::AddTypedValue;
using testing::AddValue;

const LayerResult* FindLayer(const TargetResult& result, const std::string& name) {
  auto it =
      std::find_if(result.layers.begin(), result.layers.end(), [&](const LayerResult& l) { return l.name == name; });
  return it == result.layers.end() ? nullptr : &*it;
}

// busy_rounds: the rounds whose slots are timed as if others used most of the CPUs (and dropped);
// every other slot counts as quiet, whatever the machine running the test is doing.
Result<TargetResult> Profile(const onnx::ModelProto& m, const std::map<std::string, Tensor>& inputs,
                             std::set<int> busy_rounds = {}) {
  ASSIGN_OR_RETURN(LoadedOnnxModel loaded, CheckOnnxModel(m, "control flow profile"));
  ASSIGN_OR_RETURN(Graph graph, ImportModel(loaded));
  ASSIGN_OR_RETURN(std::unique_ptr<CompiledModel> model, CompileForTarget(graph, *ParseTarget("cpu:fp32")));
  ProfileSettings settings{.warmup = 1, .warmup_min_s = 0, .iterations = 3, .min_time_s = 0, .layer_runs = 3};
  settings.slot_other_share = [busy_rounds](int round, size_t) -> std::optional<double> {
    return busy_rounds.contains(round) ? 0.9 : 0.0;
  };
  TargetResult result;
  RETURN_IF_ERROR(RunProfilePipeline(*model, inputs, settings, {}, result));
  return result;
}

Tensor Filled(Shape shape, float v) {
  Tensor t(DType::kF32, std::move(shape));
  std::fill(t.data<float>(), t.data<float>() + t.numel(), v);
  return t;
}

// y = If(cond) then MatMul(x, w) → Relu else x: the model's work sits in the If.
TEST(ControlFlowProfileTest, IfBranchNodesAreLayersWithTheirPathOnTheDevice) {
  onnx::ModelProto m = testing::NewModel("if_work");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {64, 64});
  AddTypedValue(g->mutable_input(), "cond", onnx::TensorProto_DataType_BOOL, {});
  AddValue(g->mutable_output(), "y", {64, 64});
  testing::AddInitializer(g, "w", {64, 64}, [](int64_t i) { return static_cast<float>(i % 5) * 0.1f; });
  onnx::GraphProto then_branch;
  then_branch.set_name("then");
  AddValue(then_branch.mutable_output(), "r", {64, 64});
  AddNode(&then_branch, "MatMul", {"x", "w"}, {"xw"}, "matmul");
  AddNode(&then_branch, "Relu", {"xw"}, {"r"}, "relu");
  onnx::GraphProto else_branch;
  else_branch.set_name("else");
  AddValue(else_branch.mutable_output(), "x", {64, 64});
  auto* node = AddNode(g, "If", {"cond"}, {"y"}, "If_25");
  AddGraphAttr(node, "then_branch", then_branch);
  AddGraphAttr(node, "else_branch", else_branch);
  Tensor cond(DType::kBool, {});
  cond.data<bool>()[0] = true;

  auto result = Profile(m, {{"x", Filled({64, 64}, 1)}, {"cond", cond}});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const LayerResult* matmul = FindLayer(*result, "If_25/then_branch/matmul");
  ASSERT_NE(matmul, nullptr) << "the branch's MatMul must be a layer of its own";
  EXPECT_EQ(matmul->parent, "If_25");
  EXPECT_EQ(matmul->device, "cpu") << "a branch's nodes are placed on the target's device";
  EXPECT_NE(matmul->implementation, "reference");
  EXPECT_EQ(matmul->iterations, 1);
  EXPECT_GT(matmul->time_p50_ms, 0);
  EXPECT_GT(matmul->flops, 0) << "shapes read from the enclosing graph are known at compile time";
  const LayerResult* control = FindLayer(*result, "If_25");
  ASSERT_NE(control, nullptr);
  EXPECT_TRUE(control->parent.empty());
  EXPECT_EQ(control->op, "If");
}

// The shape of a voice-activity model: its LSTM sits inside an If and reads the features and the
// weights from the main graph. The LSTM is a layer of its own and runs on oneDNN.
TEST(ControlFlowProfileTest, LstmInsideAnIfRunsOnTheDeviceAsItsOwnLayer) {
  constexpr int64_t kSeq = 8, kInput = 16, kHidden = 32;
  onnx::ModelProto m = testing::NewModel("vad_like", 14);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "features", {kSeq, 1, kInput});
  AddTypedValue(g->mutable_input(), "has_state", onnx::TensorProto_DataType_BOOL, {});
  AddValue(g->mutable_output(), "h", {1, 1, kHidden});
  auto weight = [](int64_t i) { return static_cast<float>((i * 37) % 11 - 5) * 0.02f; };
  testing::AddInitializer(g, "W", {1, 4 * kHidden, kInput}, weight);
  testing::AddInitializer(g, "R", {1, 4 * kHidden, kHidden}, weight);
  testing::AddInitializer(g, "B", {1, 8 * kHidden}, weight);
  testing::AddInitializer(g, "h0", {1, 1, kHidden}, [](int64_t) { return 0.0f; });
  onnx::GraphProto with_lstm;
  with_lstm.set_name("with_lstm");
  AddValue(with_lstm.mutable_output(), "y_h", {1, 1, kHidden});
  auto* lstm = AddNode(&with_lstm, "LSTM", {"features", "W", "R", "B"}, {"", "y_h"}, "LSTM_719");
  testing::SetIntAttr(lstm, "hidden_size", kHidden);
  auto* node = AddNode(g, "If", {"has_state"}, {"h"}, "If_25");
  AddGraphAttr(node, "then_branch", with_lstm);
  onnx::GraphProto zeros;
  zeros.set_name("zeros");
  AddValue(zeros.mutable_output(), "h0", {1, 1, kHidden});
  AddGraphAttr(node, "else_branch", zeros);
  Tensor cond(DType::kBool, {});
  cond.data<bool>()[0] = true;

  auto result = Profile(m, {{"features", Filled({kSeq, 1, kInput}, 0.5f)}, {"has_state", cond}});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const LayerResult* layer = FindLayer(*result, "If_25/then_branch/LSTM_719");
  ASSERT_NE(layer, nullptr);
  EXPECT_EQ(layer->parent, "If_25");
  EXPECT_EQ(layer->device, "cpu");
  EXPECT_EQ(layer->implementation.rfind("onednn:lstm", 0), 0u) << layer->implementation;
}

// acc' = acc + x, 4 times: the body's Add runs 4 times per inference and its time is their sum.
TEST(ControlFlowProfileTest, LoopBodyLayersCountTheirIterations) {
  onnx::ModelProto m = testing::NewModel("loop_work");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {256});
  AddValue(g->mutable_input(), "acc0", {256});
  AddValue(g->mutable_output(), "acc", {256});
  AddScalarInit(g, "trips", onnx::TensorProto_DataType_INT64, 4);
  onnx::GraphProto body;
  body.set_name("body");
  AddTypedValue(body.mutable_input(), "i", onnx::TensorProto_DataType_INT64, {});
  AddTypedValue(body.mutable_input(), "c", onnx::TensorProto_DataType_BOOL, {});
  AddValue(body.mutable_input(), "acc_in", {256});
  AddTypedValue(body.mutable_output(), "c_out", onnx::TensorProto_DataType_BOOL, {});
  AddValue(body.mutable_output(), "acc_out", {256});
  AddNode(&body, "Identity", {"c"}, {"c_out"}, "keep_going");
  AddNode(&body, "Add", {"acc_in", "x"}, {"acc_out"}, "add");
  auto* loop = AddNode(g, "Loop", {"trips", "", "acc0"}, {"acc"}, "loop");
  AddGraphAttr(loop, "body", body);

  auto result = Profile(m, {{"x", Filled({256}, 1)}, {"acc0", Filled({256}, 0)}});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const LayerResult* add = FindLayer(*result, "loop/body/add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->parent, "loop");
  EXPECT_EQ(add->iterations, 4);
  const LayerResult* control = FindLayer(*result, "loop");
  ASSERT_NE(control, nullptr);
  EXPECT_EQ(control->iterations, 1);

  // Slots dropped for a busy machine take their body runs with them: still 4 per model run.
  auto busy = Profile(m, {{"x", Filled({256}, 1)}, {"acc0", Filled({256}, 0)}}, {2, 3, 5});
  ASSERT_TRUE(busy.ok()) << busy.status().ToString();
  int dropped = 0;
  for (const TimingRound& r : busy->rounds) dropped += r.clean ? 0 : 1;
  EXPECT_EQ(dropped, 3);
  const LayerResult* busy_add = FindLayer(*busy, "loop/body/add");
  ASSERT_NE(busy_add, nullptr);
  EXPECT_EQ(busy_add->iterations, 4);
  EXPECT_EQ(FindLayer(*busy, "loop")->iterations, 1);
}

// Scan over 5 rows: each row's MatMul has the slice's static shape, so it runs on the device, 5 times
// per inference.
TEST(ControlFlowProfileTest, ScanBodyGetsTheSliceShapeAndRunsOnTheDevice) {
  onnx::ModelProto m = testing::NewModel("scan_work", 11);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "s0", {1, 8});
  AddValue(g->mutable_input(), "xs", {5, 1, 8});
  AddValue(g->mutable_output(), "s", {1, 8});
  testing::AddInitializer(g, "w", {8, 8}, [](int64_t i) { return static_cast<float>(i % 3) * 0.1f; });
  onnx::GraphProto body;
  body.set_name("body");
  AddValue(body.mutable_input(), "s_in", {1, 8});
  AddValue(body.mutable_input(), "row", {1, 8});
  AddValue(body.mutable_output(), "s_out", {1, 8});
  AddNode(&body, "MatMul", {"row", "w"}, {"rw"}, "matmul");
  AddNode(&body, "Add", {"s_in", "rw"}, {"s_out"}, "add");
  auto* scan = AddNode(g, "Scan", {"s0", "xs"}, {"s"}, "scan");
  AddGraphAttr(scan, "body", body);
  testing::SetIntAttr(scan, "num_scan_inputs", 1);

  auto result = Profile(m, {{"s0", Filled({1, 8}, 0)}, {"xs", Filled({5, 1, 8}, 1)}});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const LayerResult* matmul = FindLayer(*result, "scan/body/matmul");
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->device, "cpu");
  EXPECT_EQ(matmul->iterations, 5);
  EXPECT_GT(matmul->flops, 0);
}

}  // namespace
}  // namespace chipfit
