// The layer table and its proxy alone (no widgets): rows, cells, sort and filters, and the timing a
// user feels on a 5,000-layer model.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <cmath>

#include "tests/views/synthetic_run.h"
#include "views/models/heat_map_model.h"
#include "views/models/layer_table_model.h"

namespace chipfit {
namespace {

using testing::SyntheticRun;

TEST(LayerTableModel, NodeRowsSplitAFusedKernelAndNameIt) {
  LayerTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setRun(SyntheticRun(16, 3));
  ASSERT_EQ(model.rowCount(), 16);  // every ONNX node once, whatever each target fused
  ASSERT_EQ(model.targetCount(), 3);
  ASSERT_EQ(model.columnCount(), LayerTableModel::kFixedColumns + 3 * LayerTableModel::kMetricCount);
  const int conv = model.rowOfNode(QStringLiteral("n0")), relu = model.rowOfNode(QStringLiteral("n1"));
  ASSERT_GE(conv, 0);
  ASSERT_GE(relu, 0);
  // bf16 fused n0+n1: each node carries half the kernel's time, and the kernel is named.
  const auto& run = *model.run();
  const double kernel = run.targets[1]->layers[0].time_p50_ms;
  EXPECT_NEAR(model.number(conv, LayerTableModel::column(1, LayerTableModel::kP50)), kernel / 2, 1e-12);
  EXPECT_NEAR(model.number(relu, LayerTableModel::column(1, LayerTableModel::kP50)), kernel / 2, 1e-12);
  EXPECT_EQ(model.text(relu, LayerTableModel::column(1, LayerTableModel::kKernel)), QStringLiteral("FusedConv n0"));
  // fp32 did not fuse: the Relu's own kernel.
  EXPECT_EQ(model.text(relu, LayerTableModel::column(0, LayerTableModel::kKernel)), QStringLiteral("Relu n1"));
  // Shares of a target add up to the whole.
  double share = 0;
  for (int r = 0; r < model.rowCount(); ++r)
    share += model.number(r, LayerTableModel::column(2, LayerTableModel::kShare));
  EXPECT_NEAR(share, 1.0, 1e-9);
  EXPECT_EQ(model.headerData(LayerTableModel::column(2, LayerTableModel::kP50), Qt::Horizontal).toString(),
            QStringLiteral("cpu:int8\np50 ms"));
  EXPECT_FALSE(model.headerData(LayerTableModel::column(2, LayerTableModel::kP50), Qt::Horizontal, Qt::ToolTipRole)
                   .toString()
                   .isEmpty());
}

TEST(LayerTableModel, KernelRowsAndFallbacks) {
  LayerTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setRun(SyntheticRun(16, 4), LayerRowMode::kKernels);
  // fp32 has all 16 kernels; the fused targets name theirs after the Conv: 16 keys in all.
  EXPECT_EQ(model.rowCount(), 16);
  const int fused = model.rowOfNode(QStringLiteral("n1"));  // the Relu, covered by FusedConv n0 on bf16
  ASSERT_GE(fused, 0);
  const int resize = model.rowOfNode(QStringLiteral("n5"));
  const int opencl = model.targetIndex(QStringLiteral("opencl:0:fp32"));
  ASSERT_GE(opencl, 0);
  EXPECT_TRUE(model.table().rows[static_cast<size_t>(resize)].cells[static_cast<size_t>(opencl)].fallback);
  EXPECT_TRUE(model.text(resize, LayerTableModel::column(opencl, LayerTableModel::kPrecision)).contains("fallback"));
}

TEST(LayerFilterProxy, FiltersAUserCombines) {
  LayerTableModel model;
  LayerFilterProxy proxy;
  proxy.setSourceModel(&model);
  QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setRun(SyntheticRun(80, 3));
  proxy.setOpFilter(QStringLiteral("Resize"));
  EXPECT_EQ(proxy.rowCount(), 10);
  proxy.clearFilters();
  proxy.setTextFilter(QStringLiteral("n7"));  // n7, n70 … n79
  EXPECT_EQ(proxy.rowCount(), 11);
  proxy.clearFilters();
  // int8 drifts below 30 dB past half the depth.
  proxy.setDriftBelow(2, 30);
  EXPECT_GT(proxy.rowCount(), 0);
  for (int r = 0; r < proxy.rowCount(); ++r) {
    const int source = proxy.mapToSource(proxy.index(r, 0)).row();
    EXPECT_LT(model.number(source, LayerTableModel::column(2, LayerTableModel::kSqnr)), 30);
  }
  proxy.clearFilters();
  proxy.setSlowerThan(2, 0, 1.5);
  for (int r = 0; r < proxy.rowCount(); ++r) {
    const int source = proxy.mapToSource(proxy.index(r, 0)).row();
    EXPECT_GE(model.number(source, LayerTableModel::column(2, LayerTableModel::kP50)) /
                  model.number(source, LayerTableModel::column(0, LayerTableModel::kP50)),
              1.5);
  }
  proxy.clearFilters();
  proxy.setBoundFilter(QStringLiteral("compute"));
  EXPECT_LT(proxy.rowCount(), model.rowCount());
}

TEST(LayerFilterProxy, SortsNumbersWithAbsentValuesLast) {
  LayerTableModel model;
  LayerFilterProxy proxy;
  proxy.setSourceModel(&model);
  model.setRun(SyntheticRun(40, 2));
  const int flops = LayerTableModel::column(0, LayerTableModel::kIntensity);  // NaN for layers without FLOPs
  for (Qt::SortOrder order : {Qt::AscendingOrder, Qt::DescendingOrder}) {
    proxy.sort(flops, order);
    bool seen_absent = false;
    double previous = order == Qt::AscendingOrder ? -INFINITY : INFINITY;
    for (int r = 0; r < proxy.rowCount(); ++r) {
      const double v = model.number(proxy.mapToSource(proxy.index(r, 0)).row(), flops);
      if (!std::isfinite(v)) {
        seen_absent = true;
        continue;
      }
      EXPECT_FALSE(seen_absent) << "a number after an absent value at row " << r;
      EXPECT_TRUE(order == Qt::AscendingOrder ? v >= previous : v <= previous);
      previous = v;
    }
    EXPECT_TRUE(seen_absent);
  }
}

// A big model stays fluid: 5,000 layers × 5 targets, every sort and filter under 200 ms.
TEST(LayerFilterProxy, SortAndFilterFiveThousandLayersUnder200Ms) {
  LayerTableModel model;
  LayerFilterProxy proxy;
  proxy.setSourceModel(&model);
  QElapsedTimer clock;
  clock.start();
  model.setRun(SyntheticRun(5000, 5));
  const qint64 build_ms = clock.elapsed();
  ASSERT_EQ(model.rowCount(), 5000);
  ASSERT_EQ(model.targetCount(), 5);
  qint64 worst = 0;
  for (int column :
       {LayerTableModel::column(4, LayerTableModel::kP50), LayerTableModel::column(2, LayerTableModel::kSqnr),
        LayerTableModel::column(1, LayerTableModel::kEnergy), int(LayerTableModel::kNameColumn),
        LayerTableModel::column(3, LayerTableModel::kPrecision)}) {
    for (Qt::SortOrder order : {Qt::DescendingOrder, Qt::AscendingOrder}) {
      clock.restart();
      proxy.sort(column, order);
      worst = std::max(worst, clock.elapsed());
    }
  }
  const qint64 sort_ms = worst;
  worst = 0;
  const auto timed = [&](auto&& apply) {
    clock.restart();
    apply();
    (void)proxy.rowCount();
    worst = std::max(worst, clock.elapsed());
  };
  timed([&] { proxy.setTextFilter(QStringLiteral("n12")); });
  timed([&] { proxy.setOpFilter(QStringLiteral("Conv")); });
  timed([&] { proxy.clearFilters(); });
  timed([&] { proxy.setDriftBelow(2, 30); });
  timed([&] { proxy.setSlowerThan(4, 0, 1.2); });
  timed([&] { proxy.setBoundFilter(QStringLiteral("memory")); });
  timed([&] { proxy.clearFilters(); });
  std::printf("5000 layers x 5 targets: build %lld ms, worst sort %lld ms, worst filter %lld ms\n",
              static_cast<long long>(build_ms), static_cast<long long>(sort_ms), static_cast<long long>(worst));
  EXPECT_LT(sort_ms, 200);
  EXPECT_LT(worst, 200);
}

TEST(HeatMapModel, RatiosToTheFp32Baseline) {
  LayerTableModel layers;
  HeatMapModel heat(&layers);
  QAbstractItemModelTester tester(&heat, QAbstractItemModelTester::FailureReportingMode::Fatal);
  layers.setRun(SyntheticRun(24, 3));
  ASSERT_EQ(heat.baseline(), 0);
  ASSERT_EQ(heat.columnCount(), 4);
  const int row = layers.rowOfNode(QStringLiteral("n2"));
  const double expected = layers.number(row, LayerTableModel::column(2, LayerTableModel::kP50)) /
                          layers.number(row, LayerTableModel::column(0, LayerTableModel::kP50));
  EXPECT_NEAR(heat.index(row, 3).data(HeatMapModel::RawRole).toDouble(), expected, 1e-12);
  EXPECT_NEAR(heat.index(row, 1).data(HeatMapModel::RawRole).toDouble(), 1.0, 1e-12);
  // Faster is green, slower is red.
  EXPECT_GT(heat.colour(0.5).green(), heat.colour(0.5).red());
  EXPECT_GT(heat.colour(2.0).red(), heat.colour(2.0).green());
  heat.setMeasure(HeatMapModel::Measure::kDrift);
  EXPECT_NEAR(heat.index(row, 3).data(HeatMapModel::RawRole).toDouble(),
              layers.number(row, LayerTableModel::column(2, LayerTableModel::kSqnr)), 1e-12);
}

}  // namespace
}  // namespace chipfit
