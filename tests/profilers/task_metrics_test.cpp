// Task metrics: the task an output gets from its shape, top-1 rows, CTC-collapsed sequences (a shifted
// repeat is the same text, another character is not), map IoU and pixel agreement counted by hand.
#include "profilers/accuracy/task_metrics.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/graph/onnx_import.h"
#include "tests/core/onnx_builder.h"

namespace chipfit {
namespace {

Tensor F32(const Shape& shape, const std::vector<float>& values) {
  Tensor t(DType::kF32, shape);
  for (size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = values[i];
  return t;
}

// [1, T, C] scores whose argmax at each position is `path[t]`.
Tensor Path(const std::vector<int>& path, int classes) {
  Tensor t(DType::kF32, {1, static_cast<int64_t>(path.size()), classes});
  for (size_t p = 0; p < path.size(); ++p) t.data<float>()[p * classes + path[p]] = 1.0f;
  return t;
}

// Path's scores as logits (−1 and 3): not distributions, so not taken for a Softmax's output.
Tensor Logits(const std::vector<int>& path, int classes) {
  Tensor t = Path(path, classes);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = t.data<float>()[i] * 4 - 1;
  return t;
}

TEST(TaskMetricsTest, WithoutAGraphTheTaskComesFromShapeAndValuesUnlessOverridden) {
  TaskOptions o;
  EXPECT_EQ(ChooseTask("scores", Tensor(DType::kF32, {1, 2}), o).task, TaskKind::kClassify);
  EXPECT_EQ(ChooseTask("scores", Tensor(DType::kF32, {4, 1}), o).task, TaskKind::kNone);  // one class: no argmax
  // [N, T, C] is a CTC recogniser's only when every position is a distribution (a Softmax's output);
  // logits with a vocabulary-sized last dim are a language model's; other widths are features.
  EXPECT_EQ(ChooseTask("ctc", Path({0, 3, 3, 0}, 6625), o).task, TaskKind::kSequence);
  EXPECT_EQ(ChooseTask("logits", Tensor(DType::kF32, {1, 40, 6625}), o).task, TaskKind::kLanguageModel);
  EXPECT_EQ(ChooseTask("hidden", Tensor(DType::kF32, {1, 40, 64}), o).task, TaskKind::kEmbedding);
  EXPECT_EQ(ChooseTask("map", F32({1, 1, 2, 2}, {0, 0.2f, 0.7f, 1}), o).task, TaskKind::kMap);
  // Outside [0, 1] it is not a probability map (logits, a depth map): SQNR only.
  EXPECT_EQ(ChooseTask("map", F32({1, 1, 2, 2}, {0, 0.2f, 3.5f, 1}), o).task, TaskKind::kNone);
  EXPECT_EQ(ChooseTask("emb", Tensor(DType::kF32, {1, 96, 1, 1}), o).task, TaskKind::kNone);
  EXPECT_EQ(ChooseTask("ids", Tensor(DType::kI64, {1, 5}), o).task, TaskKind::kNone);
  ASSERT_TRUE(ParseTaskOverride("emb=classify", o).ok());
  const TaskChoice forced = ChooseTask("emb", Tensor(DType::kF32, {1, 96, 1, 1}), o);
  EXPECT_EQ(forced.task, TaskKind::kClassify);
  EXPECT_EQ(forced.why, "--task emb=classify");
  ASSERT_TRUE(ParseTaskOverride("ctc=none", o).ok());
  EXPECT_EQ(ChooseTask("ctc", Path({0, 3, 3, 0}, 6625), o).task, TaskKind::kNone);
  for (const char* kind : {"detect", "segment", "lm", "embedding", "sequence", "map"}) {
    ASSERT_TRUE(ParseTaskOverride(std::string("out=") + kind, o).ok()) << kind;
    EXPECT_EQ(TaskName(o.overrides["out"]), kind);
  }
  ASSERT_TRUE(ParseTaskOverride("out=ctc", o).ok());
  EXPECT_EQ(o.overrides["out"], TaskKind::kSequence);
  const Status bad = ParseTaskOverride("ctc=segmentation", o);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("'ctc=segmentation'"), std::string::npos) << bad.message();
  EXPECT_NE(bad.message().find("classify|detect|segment|lm|embedding|sequence|map|none"), std::string::npos)
      << bad.message();
  EXPECT_FALSE(ParseTaskOverride("classify", o).ok());
}

TEST(TaskMetricsTest, CtcCollapseMergesRepeatsThenDropsTheBlank) {
  EXPECT_EQ(CtcCollapse({0, 3, 3, 0, 3, 5, 5, 0}, 0), (std::vector<int64_t>{3, 3, 5}));
  EXPECT_EQ(CtcCollapse({0, 0, 0}, 0), std::vector<int64_t>{});
  EXPECT_EQ(CtcCollapse({2, 2, 1, 2}, 2), (std::vector<int64_t>{1}));
}

TEST(TaskMetricsTest, ClassifyCountsAgreeingRows) {
  TaskAccumulator acc({});
  // Two rows: the first agrees (class 1), the second does not (2 vs 0).
  acc.Add("scores", F32({2, 3}, {0.1f, 0.8f, 0.1f, 0.1f, 0.2f, 0.7f}), F32({2, 3}, {0, 1, 0, 0.9f, 0, 0.1f}));
  const TaskAgreement r = acc.Result();
  EXPECT_EQ(r.task, TaskKind::kClassify);
  EXPECT_EQ(r.metric, "top-1 agreement");
  EXPECT_EQ(r.items, 2);
  ASSERT_TRUE(r.agreement);
  EXPECT_DOUBLE_EQ(*r.agreement, 0.5);
}

// A recogniser's text is the CTC-collapsed argmax path: a repeat held one step longer reads the same,
// another character does not.
TEST(TaskMetricsTest, SequencesAgreeWhenTheirDecodedTextDoes) {
  TaskAccumulator acc({});
  const Tensor reference = Path({0, 4, 4, 0, 7, 0}, 9);    // "4 7"
  acc.Add("ctc", Path({0, 4, 4, 4, 7, 0}, 9), reference);  // "4 7": one position differs
  acc.Add("ctc", Path({0, 4, 4, 0, 8, 0}, 9), reference);  // "4 8": another character
  const TaskAgreement r = acc.Result();
  EXPECT_EQ(r.task, TaskKind::kSequence);
  EXPECT_EQ(r.items, 2);
  ASSERT_TRUE(r.agreement && r.position_agreement);
  EXPECT_DOUBLE_EQ(*r.agreement, 0.5);
  EXPECT_DOUBLE_EQ(*r.position_agreement, 10.0 / 12.0);
  EXPECT_NE(r.metric.find("CTC"), std::string::npos);
  // Another blank index changes what collapses.
  TaskAccumulator blank7({.ctc_blank = 7});
  blank7.Add("ctc", Path({0, 4, 4, 0, 8, 0}, 9), reference);  // "0 4 0 8 0" vs "0 4 0 0" with 7 dropped
  EXPECT_DOUBLE_EQ(*blank7.Result().agreement, 0.0);
}

TEST(TaskMetricsTest, MapsAgreeByIoUAtTheThreshold) {
  TaskAccumulator acc({.map_threshold = 0.3});
  // Reference on at 3 pixels, actual on at 3 pixels, 2 in common: IoU 2/4; 6 of 8 pixels agree.
  const Tensor r = F32({1, 1, 2, 4}, {0.9f, 0.8f, 0.35f, 0.1f, 0, 0, 0, 0.2f});
  const Tensor a = F32({1, 1, 2, 4}, {0.95f, 0.7f, 0.25f, 0.31f, 0, 0, 0, 0.2f});
  acc.Add("maps", a, r);
  const TaskAgreement res = acc.Result();
  EXPECT_EQ(res.task, TaskKind::kMap);
  ASSERT_TRUE(res.agreement && res.pixel_agreement);
  EXPECT_DOUBLE_EQ(*res.agreement, 0.5);
  EXPECT_DOUBLE_EQ(*res.pixel_agreement, 6.0 / 8.0);
  EXPECT_EQ(res.metric, "map IoU at 0.3");
}

// A reference map empty (or full) at the threshold cannot tell a good target from a bad one: "map
// IoU 100 %" beside an SQNR of −24 dB was the symptom. No agreement, and the reason.
TEST(TaskMetricsTest, AnEmptyOrFullReferenceMapIsNotInformative) {
  TaskAccumulator empty({});
  empty.Add("maps", F32({1, 1, 1, 2}, {0.1f, 0.2f}), F32({1, 1, 1, 2}, {0.0f, 0.1f}));
  const TaskAgreement e = empty.Result();
  EXPECT_EQ(e.task, TaskKind::kMap);
  EXPECT_FALSE(e.agreement.has_value());
  EXPECT_NE(e.not_informative.find("no pixel at or above 0.3"), std::string::npos) << e.not_informative;
  ASSERT_TRUE(e.pixel_agreement.has_value());
  EXPECT_DOUBLE_EQ(*e.pixel_agreement, 1.0);

  TaskAccumulator full({});
  full.Add("maps", F32({1, 1, 1, 2}, {0.9f, 0.1f}), F32({1, 1, 1, 2}, {0.5f, 0.6f}));
  EXPECT_FALSE(full.Result().agreement.has_value());
  EXPECT_NE(full.Result().not_informative.find("every pixel"), std::string::npos);
}

// An output of another shape than the reference's agrees nowhere (never a crash or a NaN).
TEST(TaskMetricsTest, AnotherShapeAgreesNowhere) {
  TaskAccumulator acc({});
  acc.Add("scores", Tensor(DType::kF32, {1, 4}), F32({2, 2}, {1, 0, 0, 1}));
  EXPECT_DOUBLE_EQ(*acc.Result().agreement, 0.0);
}

Tensor I64(const Shape& shape, const std::vector<int64_t>& values) {
  Tensor t(DType::kI64, shape);
  for (size_t i = 0; i < values.size(); ++i) t.data<int64_t>()[i] = values[i];
  return t;
}

TEST(TaskMetricsTest, ClassifyCountsTopFiveAgreement) {
  TaskAccumulator acc({});
  // 7 classes. Row 1: target top-1 differs, the reference's class 2nd in the target: top-5 agrees.
  // Row 2: the reference's class (6) is the target's lowest: neither agrees.
  const Tensor r = F32({2, 7}, {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
  const Tensor a = F32({2, 7}, {0, 0, 0, 0.5f, 0.9f, 0, 0, 0.6f, 0.5f, 0.4f, 0.3f, 0.2f, 0.1f, 0});
  acc.Add("scores", a, r);
  const TaskAgreement res = acc.Result();
  EXPECT_DOUBLE_EQ(*res.agreement, 0.0);
  ASSERT_TRUE(res.top5_agreement.has_value());
  EXPECT_DOUBLE_EQ(*res.top5_agreement, 0.5);
}

// Boxes [N, 4] with labels [N] and scores [N] beside them (found by their shape): reference boxes
// match target boxes at IoU ≥ 0.5 with equal labels, once each.
TEST(TaskMetricsTest, DetectionsMatchByIouAndLabel) {
  TaskOptions o;
  ASSERT_TRUE(ParseTaskOverride("boxes=detect", o).ok());
  const Tensor rb = F32({3, 4}, {0, 0, 10, 10, 20, 20, 30, 30, 50, 50, 60, 60});
  const Tensor rl = I64({3}, {1, 2, 3});
  const Tensor rs = F32({3}, {0.9f, 0.8f, 0.7f});
  // Box 0: shifted by 1 (IoU 81/119 ≈ 0.68), same label: matched. Box 1: same place, another label:
  // not matched. Box 2: far from every reference box: not matched.
  const Tensor ab = F32({3, 4}, {1, 1, 11, 11, 20, 20, 30, 30, 80, 80, 90, 90});
  const Tensor al = I64({3}, {1, 5, 3});
  const Tensor as = F32({3}, {0.9f, 0.8f, 0.7f});
  const OutputValues a = {{"boxes", &ab}, {"labels", &al}, {"scores", &as}};
  const OutputValues r = {{"boxes", &rb}, {"labels", &rl}, {"scores", &rs}};
  TaskAccumulator acc(o);
  acc.Add("boxes", ab, rb, a, r);
  TaskAgreement res = acc.Result();
  EXPECT_EQ(res.task, TaskKind::kDetect);
  ASSERT_TRUE(res.agreement && res.precision && res.recall);
  EXPECT_DOUBLE_EQ(*res.precision, 1.0 / 3);
  EXPECT_DOUBLE_EQ(*res.recall, 1.0 / 3);
  EXPECT_DOUBLE_EQ(*res.agreement, 2.0 / 6);  // F1
  EXPECT_NE(res.metric.find("equal labels"), std::string::npos) << res.metric;
  EXPECT_EQ(res.items, 3);

  // A second image where the target misses one box of two: precision 1, recall 1/2. Over both:
  // 2 of 4 target boxes and 2 of 5 reference boxes matched.
  const Tensor rb2 = F32({2, 4}, {0, 0, 10, 10, 40, 40, 50, 50});
  const Tensor rl2 = I64({2}, {1, 1}), rs2 = F32({2}, {0.9f, 0.5f});
  const Tensor ab2 = F32({1, 4}, {40, 40, 50, 50});
  const Tensor al2 = I64({1}, {1}), as2 = F32({1}, {0.6f});
  acc.Add("boxes", ab2, rb2, {{"boxes", &ab2}, {"labels", &al2}, {"scores", &as2}},
          {{"boxes", &rb2}, {"labels", &rl2}, {"scores", &rs2}});
  res = acc.Result();
  EXPECT_DOUBLE_EQ(*res.precision, 2.0 / 4);
  EXPECT_DOUBLE_EQ(*res.recall, 2.0 / 5);
  EXPECT_DOUBLE_EQ(*res.agreement, 4.0 / 9);

  // Without a labels output the boxes match by IoU alone, and the metric says so.
  TaskAccumulator iou_only(o);
  iou_only.Add("boxes", ab, rb, {{"boxes", &ab}}, {{"boxes", &rb}});
  const TaskAgreement io = iou_only.Result();
  EXPECT_DOUBLE_EQ(*io.recall, 2.0 / 3);
  EXPECT_NE(io.metric.find("labels not compared"), std::string::npos) << io.metric;

  // No boxes on either side: nothing to match, not 100 %.
  TaskAccumulator none(o);
  const Tensor nb(DType::kF32, {0, 4});
  none.Add("boxes", nb, nb, {{"boxes", &nb}}, {{"boxes", &nb}});
  EXPECT_FALSE(none.Result().agreement.has_value());
  EXPECT_FALSE(none.Result().not_informative.empty());
}

TEST(TaskMetricsTest, BoxIouOfKnownBoxes) {
  const double a[4] = {0, 0, 10, 10}, b[4] = {5, 0, 15, 10}, c[4] = {20, 20, 30, 30}, flat[4] = {0, 0, 0, 10};
  EXPECT_DOUBLE_EQ(BoxIou(a, b), 50.0 / 150.0);
  EXPECT_DOUBLE_EQ(BoxIou(a, a), 1.0);
  EXPECT_DOUBLE_EQ(BoxIou(a, c), 0.0);
  EXPECT_DOUBLE_EQ(BoxIou(flat, flat), 0.0);
}

// [1, 3, 2, 2] class scores. Argmax per pixel: reference 0 1 2 2, target 0 1 1 2. IoU per class:
// 0 → 1/1, 1 → 1/2, 2 → 1/2: mIoU 2/3; 3 of 4 pixels agree.
TEST(TaskMetricsTest, SegmentationIsMeanIouOfTheArgmaxClasses) {
  auto scores = [](const std::vector<int>& classes) {
    Tensor t(DType::kF32, {1, 3, 2, 2});
    for (size_t p = 0; p < classes.size(); ++p) t.data<float>()[classes[p] * 4 + p] = 1.0f;
    return t;
  };
  TaskOptions o;
  ASSERT_TRUE(ParseTaskOverride("out=segment", o).ok());
  TaskAccumulator acc(o);
  acc.Add("out", scores({0, 1, 1, 2}), scores({0, 1, 2, 2}));
  const TaskAgreement r = acc.Result();
  EXPECT_EQ(r.task, TaskKind::kSegment);
  ASSERT_TRUE(r.agreement && r.pixel_agreement);
  EXPECT_DOUBLE_EQ(*r.agreement, 2.0 / 3);
  EXPECT_DOUBLE_EQ(*r.pixel_agreement, 0.75);
  EXPECT_NE(r.metric.find("mIoU"), std::string::npos);
}

// A language model's logits: one flipped next token of 8 costs 1/8, not the whole sequence.
TEST(TaskMetricsTest, LanguageModelAgreementIsPerPosition) {
  const std::vector<int> tokens = {5, 17, 1100, 3, 3, 42, 999, 7};
  std::vector<int> flipped = tokens;
  flipped[4] = 4;
  TaskAccumulator acc({});
  acc.Add("logits", Logits(flipped, 1200), Logits(tokens, 1200));
  const TaskAgreement r = acc.Result();
  EXPECT_EQ(r.task, TaskKind::kLanguageModel) << r.why;
  ASSERT_TRUE(r.agreement.has_value());
  EXPECT_DOUBLE_EQ(*r.agreement, 7.0 / 8);
  EXPECT_EQ(r.items, 8);
  EXPECT_NE(r.metric.find("next-token"), std::string::npos);
}

// Hidden states: the mean cosine over the vectors of the last dim.
TEST(TaskMetricsTest, EmbeddingsAgreeByMeanCosine) {
  TaskOptions o;
  ASSERT_TRUE(ParseTaskOverride("hidden=embedding", o).ok());
  TaskAccumulator acc(o);
  acc.Add("hidden", F32({1, 2, 3}, {2, 0, 0, 1, 1, 0}), F32({1, 2, 3}, {1, 0, 0, 0, 1, 0}));
  const TaskAgreement r = acc.Result();
  EXPECT_EQ(r.task, TaskKind::kEmbedding);
  ASSERT_TRUE(r.agreement.has_value());
  EXPECT_NEAR(*r.agreement, (1.0 + 1.0 / std::sqrt(2.0)) / 2, 1e-12);
  EXPECT_EQ(r.items, 2);
  // Opposite vectors: cosine −1, reported as 0 agreement (never below).
  TaskAccumulator opposite(o);
  opposite.Add("hidden", F32({1, 1, 2}, {-1, 0}), F32({1, 1, 2}, {1, 0}));
  EXPECT_DOUBLE_EQ(*opposite.Result().agreement, 0.0);
}

// CTC's whole-sequence agreement only where chosen: the same per-position logits without a Softmax
// and without --task are features, and one flipped position does not zero them.
TEST(TaskMetricsTest, CtcSequencesOnlyWhenChosen) {
  auto logits = [](const std::vector<int>& path) { return Logits(path, 9); };
  const std::vector<int> path = {0, 4, 4, 0, 7, 0};
  const std::vector<int> other = {0, 4, 4, 0, 8, 0};
  TaskAccumulator plain({});
  plain.Add("out", logits(other), logits(path));
  EXPECT_EQ(plain.Result().task, TaskKind::kEmbedding) << plain.Result().why;
  TaskOptions o;
  ASSERT_TRUE(ParseTaskOverride("out=sequence", o).ok());
  TaskAccumulator ctc(o);
  ctc.Add("out", logits(other), logits(path));
  EXPECT_EQ(ctc.Result().task, TaskKind::kSequence);
  EXPECT_DOUBLE_EQ(*ctc.Result().agreement, 0.0);
}

// Task inference from small graphs -------------------------------------------------------------

using testing::AddNode;
using testing::AddTypedValue;
using testing::AddValue;

Graph Import(const onnx::ModelProto& m) {
  auto loaded = CheckOnnxModel(m, m.graph().name());
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok()) return {};
  auto graph = ImportModel(*loaded);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return graph.ok() ? std::move(*graph) : Graph{};
}

TaskChoice ChooseIn(const Graph& graph, const std::string& output, const Shape& shape, DType dtype = DType::kF32) {
  return ChooseTask(output, Tensor(dtype, shape), WithGraph({}, graph));
}

// Token ids → embedding table → (LayerNormalization → hidden states) and (MatMul to 1200 → logits).
TEST(TaskInferenceTest, TokenModelsGiveLogitsAndHiddenStates) {
  onnx::ModelProto m = testing::NewModel("tiny_lm", 17);
  auto* g = m.mutable_graph();
  AddTypedValue(g->mutable_input(), "ids", onnx::TensorProto_DataType_INT64, {1, 8});
  AddValue(g->mutable_output(), "logits", {1, 8, 1200});
  AddValue(g->mutable_output(), "hidden", {1, 8, 16});
  testing::AddInitializer(g, "table", {50, 16}, [](int64_t i) { return (i % 7) * 0.1; });
  testing::AddInitializer(g, "gamma", {16}, [](int64_t) { return 1.0; });
  testing::AddInitializer(g, "beta", {16}, [](int64_t) { return 0.0; });
  testing::AddInitializer(g, "head", {16, 1200}, [](int64_t i) { return (i % 11) * 0.01; });
  AddNode(g, "Gather", {"table", "ids"}, {"emb"}, "embed");
  AddNode(g, "LayerNormalization", {"emb", "gamma", "beta"}, {"hidden"}, "norm");
  AddNode(g, "MatMul", {"hidden", "head"}, {"logits"}, "lm_head");
  const Graph graph = Import(m);
  const TaskChoice logits = ChooseIn(graph, "logits", {1, 8, 1200});
  EXPECT_EQ(logits.task, TaskKind::kLanguageModel) << logits.why;
  EXPECT_NE(logits.why.find("MatMul over 16 features"), std::string::npos) << logits.why;
  EXPECT_NE(logits.why.find("token-id input"), std::string::npos) << logits.why;
  const TaskChoice hidden = ChooseIn(graph, "hidden", {1, 8, 16});
  EXPECT_EQ(hidden.task, TaskKind::kEmbedding) << hidden.why;
  EXPECT_NE(hidden.why.find("LayerNormalization"), std::string::npos) << hidden.why;
}

// A float input (an image row, audio frames) → MatMul down to 12 classes → Softmax: CTC-like. The
// same head without a Softmax, widening to 24: features.
TEST(TaskInferenceTest, ASoftmaxHeadOverFloatInputIsACtcSequence) {
  onnx::ModelProto m = testing::NewModel("tiny_ctc", 17);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {1, 8, 16});
  AddValue(g->mutable_output(), "probs", {1, 8, 12});
  AddValue(g->mutable_output(), "wide", {1, 8, 24});
  testing::AddInitializer(g, "w", {16, 12}, [](int64_t i) { return (i % 5) * 0.1; });
  testing::AddInitializer(g, "w2", {16, 24}, [](int64_t i) { return (i % 3) * 0.1; });
  AddNode(g, "MatMul", {"x", "w"}, {"s"}, "head");
  AddNode(g, "Softmax", {"s"}, {"probs"}, "softmax");
  AddNode(g, "MatMul", {"x", "w2"}, {"wide"}, "proj");
  const Graph graph = Import(m);
  const TaskChoice probs = ChooseIn(graph, "probs", {1, 8, 12});
  EXPECT_EQ(probs.task, TaskKind::kSequence) << probs.why;
  EXPECT_NE(probs.why.find("Softmax"), std::string::npos) << probs.why;
  EXPECT_EQ(ChooseIn(graph, "wide", {1, 8, 24}).task, TaskKind::kEmbedding);
}

// Boxes downstream of NonMaxSuppression are detections, whatever their [N, 4] shape suggests; the
// scores beside them get no task of their own. A Gemm's [1, 4] is still class scores.
TEST(TaskInferenceTest, BoxesAfterNonMaxSuppressionAreDetections) {
  onnx::ModelProto m = testing::NewModel("tiny_det", 17);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "candidates", {1, 10, 4});
  AddValue(g->mutable_input(), "confidence", {1, 1, 10});
  AddValue(g->mutable_input(), "features", {1, 8});
  AddTypedValue(g->mutable_output(), "boxes", onnx::TensorProto_DataType_FLOAT, {}, false);
  AddTypedValue(g->mutable_output(), "scores", onnx::TensorProto_DataType_FLOAT, {}, false);
  AddValue(g->mutable_output(), "cls", {1, 4});
  testing::AddScalarInit(g, "two", onnx::TensorProto_DataType_INT64, 2);
  testing::AddScalarInit(g, "zero", onnx::TensorProto_DataType_INT64, 0);
  testing::AddInitializer(g, "wc", {8, 4}, [](int64_t i) { return (i % 3) * 0.1; });
  AddNode(g, "NonMaxSuppression", {"candidates", "confidence"}, {"selected"}, "nms");
  auto* column = AddNode(g, "Gather", {"selected", "two"}, {"keep"}, "keep");
  testing::SetIntAttr(column, "axis", 1);
  AddNode(g, "Squeeze", {"candidates", "zero"}, {"all_boxes"}, "squeeze_boxes");
  AddNode(g, "Gather", {"all_boxes", "keep"}, {"boxes"}, "pick_boxes");
  AddNode(g, "Squeeze", {"confidence", "zero"}, {"conf2"}, "squeeze_scores");
  AddNode(g, "Squeeze", {"conf2", "zero"}, {"conf1"}, "squeeze_scores2");
  AddNode(g, "Gather", {"conf1", "keep"}, {"scores"}, "pick_scores");
  AddNode(g, "Gemm", {"features", "wc"}, {"cls"}, "classifier");
  const Graph graph = Import(m);
  const TaskChoice boxes = ChooseIn(graph, "boxes", {3, 4});
  EXPECT_EQ(boxes.task, TaskKind::kDetect) << boxes.why;
  EXPECT_NE(boxes.why.find("NonMaxSuppression 'nms'"), std::string::npos) << boxes.why;
  EXPECT_EQ(ChooseIn(graph, "scores", {3}).task, TaskKind::kNone);
  const TaskChoice cls = ChooseIn(graph, "cls", {1, 4});
  EXPECT_EQ(cls.task, TaskKind::kClassify) << cls.why;
  EXPECT_NE(cls.why.find("Gemm over 8 features"), std::string::npos) << cls.why;
}

// [1, C, H, W] class scores at the input's resolution are a segmentation; a strided feature map is not.
TEST(TaskInferenceTest, ClassScoresAtTheInputResolutionAreASegmentation) {
  onnx::ModelProto m = testing::NewModel("tiny_seg", 17);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "image", {1, 3, 8, 8});
  AddValue(g->mutable_output(), "out", {1, 5, 8, 8});
  AddValue(g->mutable_output(), "features", {1, 5, 4, 4});
  testing::AddInitializer(g, "w", {5, 3, 1, 1}, [](int64_t i) { return (i % 4) * 0.2; });
  AddNode(g, "Conv", {"image", "w"}, {"out"}, "classifier");
  auto* strided = AddNode(g, "Conv", {"image", "w"}, {"features"}, "strided");
  testing::AddIntsAttr(strided, "strides", {2, 2});
  const Graph graph = Import(m);
  const TaskChoice out = ChooseIn(graph, "out", {1, 5, 8, 8});
  EXPECT_EQ(out.task, TaskKind::kSegment) << out.why;
  EXPECT_NE(out.why.find("5 classes"), std::string::npos) << out.why;
  EXPECT_EQ(ChooseIn(graph, "features", {1, 5, 4, 4}).task, TaskKind::kNone);
}

// A vector per item stored 4-D ([1, 1, 1, 96] from an NHWC exporter's Conv): an embedding, compared
// by the cosine of the whole vector, not of its 1-element rows.
TEST(TaskInferenceTest, AVectorStoredFourDimensionalIsAnEmbedding) {
  onnx::ModelProto m = testing::NewModel("tiny_emb", 17);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {1, 3, 4, 4});
  AddValue(g->mutable_output(), "emb", {1, 6, 1, 1});
  testing::AddInitializer(g, "w", {6, 3, 4, 4}, [](int64_t i) { return (i % 5) * 0.1; });
  AddNode(g, "Conv", {"x", "w"}, {"emb"}, "conv");
  const Graph graph = Import(m);
  const TaskChoice emb = ChooseIn(graph, "emb", {1, 6, 1, 1});
  EXPECT_EQ(emb.task, TaskKind::kEmbedding) << emb.why;
  TaskAccumulator acc(WithGraph({}, graph));
  acc.Add("emb", F32({1, 6, 1, 1}, {1, 1, 0, 0, 0, 0}), F32({1, 6, 1, 1}, {1, 0, 0, 0, 0, 0}));
  EXPECT_NEAR(*acc.Result().agreement, 1 / std::sqrt(2.0), 1e-12);
  EXPECT_EQ(acc.Result().items, 1);
}

}  // namespace
}  // namespace chipfit
