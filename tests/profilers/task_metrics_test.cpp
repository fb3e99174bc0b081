// Task metrics: the task an output gets from its shape, top-1 rows, CTC-collapsed sequences (a shifted
// repeat is the same text, another character is not), map IoU and pixel agreement counted by hand.
#include "profilers/accuracy/task_metrics.h"

#include <gtest/gtest.h>

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

TEST(TaskMetricsTest, TheTaskComesFromTheShapeUnlessOverridden) {
  TaskOptions o;
  EXPECT_EQ(ChooseTask("scores", Tensor(DType::kF32, {1, 2}), o), TaskKind::kClassify);
  EXPECT_EQ(ChooseTask("scores", Tensor(DType::kF32, {4, 1}), o), TaskKind::kNone);  // one class: no argmax
  EXPECT_EQ(ChooseTask("ctc", Tensor(DType::kF32, {1, 40, 6625}), o), TaskKind::kSequence);
  EXPECT_EQ(ChooseTask("map", F32({1, 1, 2, 2}, {0, 0.2f, 0.7f, 1}), o), TaskKind::kMap);
  // Outside [0, 1] it is not a probability map (logits, a depth map): SQNR only.
  EXPECT_EQ(ChooseTask("map", F32({1, 1, 2, 2}, {0, 0.2f, 3.5f, 1}), o), TaskKind::kNone);
  EXPECT_EQ(ChooseTask("emb", Tensor(DType::kF32, {1, 96, 1, 1}), o), TaskKind::kNone);
  EXPECT_EQ(ChooseTask("ids", Tensor(DType::kI64, {1, 5}), o), TaskKind::kNone);
  ASSERT_TRUE(ParseTaskOverride("emb=classify", o).ok());
  EXPECT_EQ(ChooseTask("emb", Tensor(DType::kF32, {1, 96, 1, 1}), o), TaskKind::kClassify);
  ASSERT_TRUE(ParseTaskOverride("ctc=none", o).ok());
  EXPECT_EQ(ChooseTask("ctc", Tensor(DType::kF32, {1, 40, 6625}), o), TaskKind::kNone);
  const Status bad = ParseTaskOverride("ctc=segment", o);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("'ctc=segment'"), std::string::npos) << bad.message();
  EXPECT_NE(bad.message().find("classify, sequence, map or none"), std::string::npos) << bad.message();
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
  // Nothing detected on either side: they agree.
  TaskAccumulator empty({});
  empty.Add("maps", F32({1, 1, 1, 2}, {0.1f, 0.2f}), F32({1, 1, 1, 2}, {0.0f, 0.1f}));
  EXPECT_DOUBLE_EQ(*empty.Result().agreement, 1.0);
}

// An output of another shape than the reference's agrees nowhere (never a crash or a NaN).
TEST(TaskMetricsTest, AnotherShapeAgreesNowhere) {
  TaskAccumulator acc({});
  acc.Add("scores", Tensor(DType::kF32, {1, 4}), F32({2, 2}, {1, 0, 0, 1}));
  EXPECT_DOUBLE_EQ(*acc.Result().agreement, 0.0);
}

}  // namespace
}  // namespace chipfit
