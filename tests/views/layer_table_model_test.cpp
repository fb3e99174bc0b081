// The layer table and its proxy alone (no widgets): rows, cells, sort and filters, and the timing a
// user feels on a 5,000-layer model.
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QRegularExpression>
#include <cmath>

#include "tests/views/synthetic_run.h"
#include "views/models/heat_map_model.h"
#include "views/models/layer_table_model.h"

namespace chipfit {
namespace {

using testing::SyntheticRun;

TEST(LayerTableModel, NodeRowsShowAFusedKernelsWholeTimeSharedByItsNodes) {
  LayerTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setRun(SyntheticRun(16, 3));
  ASSERT_EQ(model.rowCount(), 16);  // every ONNX node once, whatever each target fused
  ASSERT_EQ(model.targetCount(), 3);
  ASSERT_EQ(model.columnCount(), LayerTableModel::kFixedColumns + 3 * LayerTableModel::kMetricCount);
  const int conv = model.rowOfNode(QStringLiteral("n0")), relu = model.rowOfNode(QStringLiteral("n1"));
  ASSERT_GE(conv, 0);
  ASSERT_GE(relu, 0);
  // bf16 fused n0+n1: each node shows the kernel's whole time, marked as shared, and the kernel is named.
  const auto& run = *model.run();
  const double kernel = run.targets[1]->layers[0].time_p50_ms;
  const int bf16_p50 = LayerTableModel::column(1, LayerTableModel::kP50);
  EXPECT_DOUBLE_EQ(model.number(conv, bf16_p50), kernel);
  EXPECT_DOUBLE_EQ(model.number(relu, bf16_p50), kernel);
  EXPECT_TRUE(model.index(relu, bf16_p50).data().toString().endsWith(QStringLiteral("(shared by 2)")))
      << model.index(relu, bf16_p50).data().toString().toStdString();
  EXPECT_TRUE(model.index(relu, bf16_p50).data(Qt::ToolTipRole).toString().contains(QStringLiteral("shared by 2")));
  EXPECT_EQ(model.text(relu, LayerTableModel::column(1, LayerTableModel::kKernel)), QStringLiteral("FusedConv n0"));
  // fp32 did not fuse: the Relu's own kernel, not marked.
  EXPECT_EQ(model.text(relu, LayerTableModel::column(0, LayerTableModel::kKernel)), QStringLiteral("Relu n1"));
  EXPECT_FALSE(
      model.index(relu, LayerTableModel::column(0, LayerTableModel::kP50)).data().toString().contains("shared"));
  // The node row reads what the kernel row reads.
  LayerTableModel kernels;
  kernels.setRun(model.run(), LayerRowMode::kKernels);
  EXPECT_DOUBLE_EQ(kernels.number(kernels.rowOfNode(QStringLiteral("n1")), bf16_p50), kernel);
  // Σ over every node row counts each kernel once: the target's Σ layer p50, on every target.
  std::vector<int> all(static_cast<size_t>(model.rowCount()));
  for (int r = 0; r < model.rowCount(); ++r) all[static_cast<size_t>(r)] = r;
  for (int t = 0; t < 3; ++t) {
    double total = 0;
    for (const LayerResult& l : run.targets[static_cast<size_t>(t)]->layers) total += l.time_p50_ms;
    EXPECT_NEAR(SumP50(model.table(), t, all), total, 1e-12) << "target " << t;
  }
  EXPECT_NEAR(SumP50(model.table(), 1, {conv, relu}), kernel, 1e-12) << "the fused kernel once, not twice";
  // Sorted either way, however sorted before, the nodes of one kernel keep model order: its first node
  // (the one the kernel is named after) leads.
  LayerFilterProxy proxy;
  proxy.setSourceModel(&model);
  for (const Qt::SortOrder order : {Qt::DescendingOrder, Qt::AscendingOrder, Qt::DescendingOrder}) {
    proxy.sort(bf16_p50, order);
    EXPECT_LT(proxy.mapFromSource(model.index(conv, 0)).row(), proxy.mapFromSource(model.index(relu, 0)).row());
  }
  EXPECT_TRUE(std::isnan(SumP50(model.table(), 1, {})));
  EXPECT_EQ(model.headerData(LayerTableModel::column(2, LayerTableModel::kP50), Qt::Horizontal).toString(),
            QStringLiteral("cpu:int8\np50"));
  EXPECT_FALSE(model.headerData(LayerTableModel::column(2, LayerTableModel::kP50), Qt::Horizontal, Qt::ToolTipRole)
                   .toString()
                   .isEmpty());
}

// A reorder chipfit put in front of a fused convolution: the node shows the convolution's time (what the
// kernel row and the charts show), names the reorder's apart, and a sum counts both kernels once.
TEST(LayerTableModel, AReorderInFrontOfANodeIsAKernelOfItsOwn) {
  auto run = std::make_shared<RunResult>();
  run->node_ops = {{"conv", "Conv"}, {"bn", "BatchNormalization"}, {"relu", "Relu"}, {"pool", "MaxPool"}};
  auto t = std::make_shared<TargetResult>();
  t->target = {DeviceKind::kCpu, 0, Precision::kFp32};
  const auto layer = [](std::string name, std::string op, std::vector<std::string> nodes, double ms, int64_t flops) {
    LayerResult l;
    l.name = std::move(name);
    l.op = std::move(op);
    l.onnx_nodes = std::move(nodes);
    l.device = "cpu";
    l.precision = "fp32";
    l.implementation = "onednn";
    l.time_p50_ms = ms;
    l.time_p90_ms = ms;
    l.flops = flops;
    return l;
  };
  t->layers = {layer("conv/reorder:input", "Reorder", {"conv"}, 0.004, 0),
               layer("conv", "FusedConv", {"conv", "bn", "relu"}, 0.020, 1000),
               layer("pool", "MaxPool", {"pool"}, 0.010, 0)};
  run->targets = {t};
  const LayerTable table = BuildLayerTable(*run, LayerRowMode::kNodes);
  ASSERT_EQ(table.rows.size(), 4U);
  const LayerCell& conv = table.rows[static_cast<size_t>(table.row_of_node.at("conv"))].cells[0];
  const LayerCell& relu = table.rows[static_cast<size_t>(table.row_of_node.at("relu"))].cells[0];
  EXPECT_EQ(conv.kernel, QStringLiteral("FusedConv conv"));
  EXPECT_DOUBLE_EQ(conv.p50_ms, 0.020);
  EXPECT_DOUBLE_EQ(conv.other_kernels_ms, 0.004);
  EXPECT_DOUBLE_EQ(relu.p50_ms, 0.020);
  EXPECT_DOUBLE_EQ(relu.other_kernels_ms, 0);
  EXPECT_NEAR(conv.share, 0.020 / 0.034, 1e-12);
  EXPECT_NEAR(SumP50(table, 0, {0, 1, 2, 3}), 0.034, 1e-12);
  EXPECT_NEAR(SumP50(table, 0, {table.row_of_node.at("bn"), table.row_of_node.at("relu")}), 0.020, 1e-12);
  // The slowest node rows are the fused kernel's, as the slowest kernel row is.
  const LayerTable kernels = BuildLayerTable(*run, LayerRowMode::kKernels);
  double slowest = 0;
  QString slowest_kernel;
  for (const LayerRow& row : kernels.rows) {
    if (row.cells[0].p50_ms > slowest) slowest = row.cells[0].p50_ms, slowest_kernel = row.cells[0].kernel;
  }
  EXPECT_EQ(slowest_kernel, conv.kernel);
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

// Times read like the charts beside the table ("17.4 µs", "3.20 ms"), never "0.0174"; the sort still
// reads the raw milliseconds.
TEST(LayerTableModel, TimesShowScaledUnits) {
  LayerTableModel model;
  model.setRun(SyntheticRun(40, 3));
  static const QRegularExpression kTime(QString::fromUtf8("^(\\d+(?:\\.\\d+)?) (µs|ms)( \\(shared by \\d+\\))?$"));
  int micro = 0, milli = 0;
  for (int r = 0; r < model.rowCount(); ++r) {
    for (int t = 0; t < model.targetCount(); ++t) {
      for (const LayerTableModel::Metric metric : {LayerTableModel::kP50, LayerTableModel::kP90}) {
        const QModelIndex cell = model.index(r, LayerTableModel::column(t, metric));
        const double ms = cell.data(LayerTableModel::RawRole).toDouble();
        const QString shown = cell.data().toString();
        const QRegularExpressionMatch m = kTime.match(shown);
        ASSERT_TRUE(m.hasMatch()) << shown.toStdString();
        // Under a millisecond in µs (what rounds to 1000 µs may read 1.00 ms), three significant digits.
        const bool in_micro = m.captured(2) == QString::fromUtf8("µs");
        EXPECT_TRUE(in_micro ? ms < 1.0005 : ms >= 0.9995) << shown.toStdString();
        EXPECT_NEAR(m.captured(1).toDouble() * (in_micro ? 1e-3 : 1), ms, ms * 0.006) << shown.toStdString();
        (in_micro ? micro : milli) += 1;
      }
    }
  }
  EXPECT_GT(micro, 0);
  EXPECT_GT(milli, 0);
  // A fused kernel's node keeps its mark after the unit.
  EXPECT_TRUE(model.index(model.rowOfNode(QStringLiteral("n1")), LayerTableModel::column(1, LayerTableModel::kP50))
                  .data()
                  .toString()
                  .contains(QString::fromUtf8("s (shared by 2)")));
  EXPECT_EQ(model.headerData(LayerTableModel::column(0, LayerTableModel::kP90), Qt::Horizontal).toString(),
            QStringLiteral("cpu:fp32\np90"));
}

// A first click on a cost column's header shows the largest first; on a name, A to Z; on drift, the
// worst (lowest) first.
TEST(LayerTableModel, CostColumnsSortLargestFirstOnTheFirstClick) {
  LayerTableModel model;
  model.setRun(SyntheticRun(8, 2));
  const auto initial = [&](int column) {
    return model.headerData(column, Qt::Horizontal, Qt::InitialSortOrderRole).toInt();
  };
  for (const LayerTableModel::Metric metric :
       {LayerTableModel::kP50, LayerTableModel::kP90, LayerTableModel::kShare, LayerTableModel::kFlops,
        LayerTableModel::kBytes, LayerTableModel::kEnergy}) {
    EXPECT_EQ(initial(LayerTableModel::column(1, metric)), Qt::DescendingOrder)
        << LayerTableModel::metricName(metric).toStdString();
  }
  EXPECT_EQ(initial(LayerTableModel::kRatioColumn), Qt::DescendingOrder);
  EXPECT_EQ(initial(LayerTableModel::kNameColumn), Qt::AscendingOrder);
  EXPECT_EQ(initial(LayerTableModel::column(0, LayerTableModel::kKernel)), Qt::AscendingOrder);
  EXPECT_EQ(initial(LayerTableModel::column(0, LayerTableModel::kSqnr)), Qt::AscendingOrder);
}

// "A vs B": the ratio column is B's p50 over A's, sorts by that number, names its pair, and keeps it
// when the same run comes back grown by a target.
TEST(LayerTableModel, RatioColumnComparesTwoTargets) {
  LayerTableModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  auto run = SyntheticRun(16, 3);
  model.setRun(run);
  const int row = model.rowOfNode(QStringLiteral("n2"));
  EXPECT_TRUE(std::isnan(model.number(row, LayerTableModel::kRatioColumn)));
  model.setRatioTargets(QStringLiteral("cpu:fp32"), QStringLiteral("cpu:int8"));
  const double expected = model.number(row, LayerTableModel::column(2, LayerTableModel::kP50)) /
                          model.number(row, LayerTableModel::column(0, LayerTableModel::kP50));
  EXPECT_DOUBLE_EQ(model.index(row, LayerTableModel::kRatioColumn).data(LayerTableModel::RawRole).toDouble(), expected);
  EXPECT_TRUE(model.index(row, LayerTableModel::kRatioColumn).data().toString().endsWith(QChar(0xD7)));
  EXPECT_EQ(model.headerData(LayerTableModel::kRatioColumn, Qt::Horizontal).toString(),
            QString::fromUtf8("cpu:int8 ÷ cpu:fp32\np50"));
  LayerFilterProxy proxy;
  proxy.setSourceModel(&model);
  proxy.sort(LayerTableModel::kRatioColumn, Qt::DescendingOrder);
  EXPECT_GE(proxy.index(0, LayerTableModel::kRatioColumn).data(LayerTableModel::RawRole).toDouble(),
            proxy.index(1, LayerTableModel::kRatioColumn).data(LayerTableModel::RawRole).toDouble());
  // Int8 first missing, then in: the pair holds by name.
  auto partial = std::make_shared<RunResult>(*run);
  partial->targets.pop_back();
  model.setRun(partial);
  EXPECT_TRUE(std::isnan(model.number(row, LayerTableModel::kRatioColumn)));
  model.setRun(run);
  EXPECT_DOUBLE_EQ(model.number(row, LayerTableModel::kRatioColumn), expected);
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

// A fused kernel's ratio is the same in node and kernel rows (each the whole kernel's time).
TEST(HeatMapModel, NodeAndKernelRowsGiveAFusedKernelOneRatio) {
  LayerTableModel layers;
  HeatMapModel heat(&layers);
  const auto run = SyntheticRun(24, 3);
  for (const LayerRowMode mode : {LayerRowMode::kNodes, LayerRowMode::kKernels}) {
    layers.setRun(run, mode);
    const int row = layers.rowOfNode(QStringLiteral("n3"));  // a Conv fused with n4 on bf16 and int8
    const double fused = run->targets[2]->layers[2].time_p50_ms;
    ASSERT_EQ(run->targets[2]->layers[2].name, "n3");
    const double alone = run->targets[0]->layers[3].time_p50_ms;
    EXPECT_NEAR(heat.value(row, 2), fused / alone, 1e-12) << (mode == LayerRowMode::kNodes ? "nodes" : "kernels");
  }
}

// The same kernel on both targets, a little faster on one: "same kernel", painted neutral, not green.
TEST(HeatMapModel, TheSameKernelWithinNoiseIsNeutral) {
  auto run = SyntheticRun(8, 3);
  auto int8 = std::make_shared<TargetResult>(*run->targets[2]);
  const LayerResult& fp32_add = run->targets[0]->layers[2];  // n2, an Add, unfused on every target
  ASSERT_EQ(fp32_add.name, "n2");
  for (LayerResult& l : int8->layers) {
    if (l.name != "n2") continue;
    l.precision = fp32_add.precision;  // the int8 target kept this layer in fp32, same kernel
    l.time_p50_ms = fp32_add.time_p50_ms * 0.85;
    l.time_p90_ms = l.time_p50_ms * 1.01;
  }
  auto fp32 = std::make_shared<TargetResult>(*run->targets[0]);
  for (LayerResult& l : fp32->layers) {
    if (l.name == "n2") l.time_p90_ms = l.time_p50_ms * 1.01;
  }
  run->targets[0] = fp32;
  run->targets[2] = int8;
  LayerTableModel layers;
  HeatMapModel heat(&layers);
  layers.setRun(run);
  const int row = layers.rowOfNode(QStringLiteral("n2"));
  EXPECT_NEAR(heat.value(row, 2), 0.85, 1e-9);
  EXPECT_EQ(heat.judgement(row, 2).verdict, LayerVerdict::kSameKernel);
  EXPECT_EQ(heat.index(row, 3).data(Qt::BackgroundRole).value<QColor>(), heat.colour(1.0));
  EXPECT_TRUE(heat.index(row, 3).data().toString().contains(QStringLiteral("same kernel")));
  // Another kernel (bf16) at the same 0.85× would be green.
  EXPECT_NE(heat.colour(0.85), heat.colour(1.0));
}

}  // namespace
}  // namespace chipfit
