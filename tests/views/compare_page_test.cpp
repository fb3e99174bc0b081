// The Compare page: two targets of one run and one target in two runs, flagged by the diff rules,
// sorted by the largest regression, linked to the shared selection.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QChartView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QScatterSeries>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTest>
#include <cmath>

#include "tests/views/synthetic_run.h"
#include "views/charts/run_charts.h"
#include "views/pages/compare_page.h"

namespace chipfit {
namespace {

using testing::SyntheticRun;

TEST(CompareModel, TwoTargetsOfOneRunFlagOnlyBeyondNoise) {
  CompareModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  const std::shared_ptr<const RunResult> run = SyntheticRun(40, 3);
  model.setSides({run, QStringLiteral("cpu:fp32")}, {run, QStringLiteral("cpu:int8")});
  ASSERT_EQ(model.rowCount(), 40);
  int flagged = 0;
  for (const CompareRow& r : model.rows()) {
    ASSERT_TRUE(std::isfinite(r.change.ratio)) << r.node.toStdString();
    // p90 is 1.1 × p50 on both sides: the threshold is max(10 %, 20 %) = 20 %.
    EXPECT_NEAR(r.change.threshold, 0.2, 1e-9);
    EXPECT_EQ(r.change.regressed, r.change.ratio > 1.2 && std::max(r.a_ms, r.b_ms) >= 0.02) << r.node.toStdString();
    EXPECT_EQ(r.change.improved, r.change.ratio < 1 / 1.2 && std::max(r.a_ms, r.b_ms) >= 0.02) << r.node.toStdString();
    EXPECT_FALSE(r.same_kernel) << "fp32 and int8 kernels: never the same kernel";
    flagged += r.change.regressed || r.change.improved ? 1 : 0;
  }
  EXPECT_GT(flagged, 0);
  // Fusion and precision are named as changes.
  const CompareRow& relu = model.rows()[static_cast<size_t>(model.rowOfNode(QStringLiteral("n1")))];
  EXPECT_TRUE(relu.placement_change.contains(QStringLiteral("precision fp32 → int8")))
      << relu.placement_change.toStdString();
  EXPECT_TRUE(relu.placement_change.contains(QStringLiteral("fused"))) << relu.placement_change.toStdString();
  EXPECT_TRUE(model.totals().differences.isEmpty());
}

TEST(CompareModel, OneTargetInTwoRunsUsesTheSamplesVerdict) {
  auto a = SyntheticRun(20, 2);
  auto b = SyntheticRun(20, 2);
  b->run_id = 8;
  // B's fp32 end to end: 30 % slower, with samples that say so clearly.
  auto ta = std::make_shared<TargetResult>(*a->targets[0]);
  auto tb = std::make_shared<TargetResult>(*b->targets[0]);
  for (int i = 0; i < 200; ++i) {
    ta->latency.samples.push_back(1.0 + 0.001 * (i % 7));
    tb->latency.samples.push_back(1.3 + 0.001 * (i % 5));
  }
  ta->latency.p50 = 1.003;
  tb->latency.p50 = 1.302;
  a->targets[0] = ta;
  b->targets[0] = tb;
  CompareModel model;
  model.setSides({a, QStringLiteral("cpu:fp32")}, {b, QStringLiteral("cpu:fp32")});
  EXPECT_EQ(model.totals().verdict, QStringLiteral("regressed"));
  EXPECT_GT(model.totals().interval.low, 1.2);
  EXPECT_FALSE(model.sameRun());
  // Identical layer times in both runs: nothing flagged.
  EXPECT_EQ(model.totals().regressions, 0);
}

// One target in two runs: a layer whose kernel, precision and device did not change and that moved
// 15 % is "same kernel" (two timings of one kernel), while a layer that changed kernel and moved as much
// is faster.
TEST(CompareModel, TheSameKernelWithinNoiseIsSameKernelNotFaster) {
  auto a = SyntheticRun(8, 1);
  auto b = SyntheticRun(8, 1);
  b->run_id = 8;
  auto ta = std::make_shared<TargetResult>(*a->targets[0]);
  auto tb = std::make_shared<TargetResult>(*b->targets[0]);
  for (TargetResult* t : {ta.get(), tb.get()}) {
    for (LayerResult& l : t->layers) l.time_p90_ms = l.time_p50_ms * 1.01;
  }
  for (LayerResult& l : tb->layers) {
    if (l.name != "n2" && l.name != "n6") continue;
    l.time_p50_ms *= 0.85;
    l.time_p90_ms = l.time_p50_ms * 1.01;
    if (l.name == "n6") l.implementation = "synthetic:v2";  // a new kernel: the same gain is real
  }
  a->targets[0] = ta;
  b->targets[0] = tb;
  CompareModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setSides({a, QStringLiteral("cpu:fp32")}, {b, QStringLiteral("cpu:fp32")});
  const int same = model.rowOfNode(QStringLiteral("n2")), changed = model.rowOfNode(QStringLiteral("n6"));
  ASSERT_GE(same, 0);
  ASSERT_GE(changed, 0);
  const CompareRow& s = model.rows()[static_cast<size_t>(same)];
  EXPECT_NEAR(s.change.ratio, 0.85, 1e-9);
  EXPECT_TRUE(s.same_kernel);
  EXPECT_EQ(s.verdict, LayerVerdict::kSameKernel);
  EXPECT_FALSE(s.change.improved);
  EXPECT_EQ(model.index(same, CompareModel::kVerdictColumn).data().toString(), QStringLiteral("same kernel"));
  EXPECT_TRUE(model.index(same, CompareModel::kRatioColumn).data(Qt::ToolTipRole).toString().contains("same kernel"));
  const CompareRow& c = model.rows()[static_cast<size_t>(changed)];
  EXPECT_FALSE(c.same_kernel);
  EXPECT_EQ(c.verdict, LayerVerdict::kImproved);
  EXPECT_EQ(model.index(changed, CompareModel::kVerdictColumn).data().toString(), QStringLiteral("faster"));
  EXPECT_EQ(model.totals().improvements, 1);
  EXPECT_EQ(model.totals().same_kernel, 7) << "every layer but the changed one ran the same kernel";
}

// Two runs of different models share node names ("n0" …) but not layers: no layer is matched, no
// regressed/improved verdict is given, and the page says it compared end to end only.
TEST(ComparePage, AcrossModelsComparesEndToEndOnly) {
  auto a = SyntheticRun(20, 2);
  auto b = SyntheticRun(20, 2);
  a->model.sha256 = "aaaa";
  b->model.sha256 = "bbbb";
  b->model.path = "other.onnx";
  b->run_id = 8;
  auto slower = std::make_shared<TargetResult>(*b->targets[0]);
  slower->latency.p50 *= 3;  // would be "regressed" were the layers the same network's
  b->targets[0] = slower;
  LayerSelection selection;
  ComparePage page(&selection);
  page.setRuns(a, b);
  EXPECT_EQ(page.model()->rowCount(), 0);
  EXPECT_TRUE(page.model()->totals().different_models);
  EXPECT_TRUE(page.model()->totals().verdict.isEmpty());
  EXPECT_TRUE(page.totalsText().contains(QStringLiteral("End to end only"))) << page.totalsText().toStdString();
  EXPECT_FALSE(page.totalsText().contains(QStringLiteral("regressed</b>"))) << page.totalsText().toStdString();
  EXPECT_NEAR(page.model()->totals().interval.ratio, 3.0, 1e-9);

  // The same model file: layers are matched again.
  b->model.sha256 = "aaaa";
  page.setRuns(a, b);
  EXPECT_EQ(page.model()->rowCount(), 20);
  EXPECT_FALSE(page.model()->totals().different_models);
}

TEST(ComparePage, SortsByLargestRegressionAndFollowsTheSelection) {
  LayerSelection selection;
  ComparePage page(&selection);
  page.resize(1200, 700);
  const std::shared_ptr<const RunResult> run = SyntheticRun(40, 3);
  page.setRuns(run, run);
  page.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&page));
  EXPECT_EQ(page.model()->a().target, QStringLiteral("cpu:fp32"));
  EXPECT_EQ(page.model()->b().target, QStringLiteral("cpu:bf16"));
  const double first = page.proxy()->index(0, CompareModel::kDeltaColumn).data(CompareModel::RawRole).toDouble();
  const double second = page.proxy()->index(1, CompareModel::kDeltaColumn).data(CompareModel::RawRole).toDouble();
  EXPECT_GE(first, second);
  EXPECT_TRUE(page.totalsText().contains(QStringLiteral("B/A")));
  // A selection made elsewhere selects the row and marks its point in the scatter.
  selection.select({QStringLiteral("n6")});
  const QModelIndexList rows = page.table()->selectionModel()->selectedRows();
  ASSERT_EQ(rows.size(), 1);
  EXPECT_EQ(rows.front().data(CompareModel::NodeRole).toString(), QStringLiteral("n6"));
  EXPECT_TRUE(charts::HighlightedNodes(*page.scatter()->chart()).contains(QStringLiteral("n6")));
  // Clicking a row selects its node everywhere.
  page.table()->selectRow(0);
  EXPECT_EQ(selection.current(), page.proxy()->index(0, 0).data(CompareModel::NodeRole).toString());
  const QImage shot = page.grab().toImage();
  shot.save(QStringLiteral("compare_page.png"));
  EXPECT_GT(shot.width(), 0);
}

}  // namespace
}  // namespace chipfit
