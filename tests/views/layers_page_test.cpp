// The Layers page as a user meets it: a run's table sorted slowest first, linked selection between the
// table and every chart, the detail pane, the heat map, the What-if request, and a screenshot.
#include <gtest/gtest.h>

#include <QAbstractBarSeries>
#include <QBarSet>
#include <QChartView>
#include <QComboBox>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QTextBrowser>
#include <set>

#include "tests/views/synthetic_run.h"
#include "views/charts/run_charts.h"
#include "views/models/layer_selection.h"
#include "views/pages/layers_page.h"

namespace chipfit {
namespace {

using testing::SyntheticRun;

// Distinct colours in an image: a blank page has one or two.
int Colours(const QImage& image) {
  std::set<QRgb> seen;
  for (int y = 0; y < image.height(); y += 3) {
    for (int x = 0; x < image.width(); x += 3) seen.insert(image.pixel(x, y));
  }
  return static_cast<int>(seen.size());
}

class LayersPageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    page.resize(1400, 900);
    page.setRun(SyntheticRun(40, 3));
    page.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&page));
  }
  QString NodeAtRow(int row) const { return page.proxy()->index(row, 0).data(LayerTableModel::KeyRole).toString(); }

  LayerSelection selection;
  LayersPage page{&selection};
};

TEST_F(LayersPageTest, OpensSortedSlowestFirst) {
  ASSERT_EQ(page.proxy()->rowCount(), 40);
  const int p50 = LayerTableModel::column(0, LayerTableModel::kP50);
  EXPECT_GE(page.proxy()->index(0, p50).data(LayerTableModel::RawRole).toDouble(),
            page.proxy()->index(1, p50).data(LayerTableModel::RawRole).toDouble());
}

TEST_F(LayersPageTest, SelectingARowHighlightsItInEveryChart) {
  // The slowest fp32 layer: the time chart's top bar; pick a Conv so the rooflines have it too.
  int row = 0;
  while (page.proxy()->index(row, LayerTableModel::kOpColumn).data().toString() != QStringLiteral("Conv")) ++row;
  const QString node = NodeAtRow(row);
  page.table()->selectRow(row);
  EXPECT_EQ(selection.current(), node);
  const auto& views = page.chartViews();
  // Roofline (tab 1) and the drift chart (tab 3) draw every layer: both must mark this one.
  for (size_t tab : {size_t{1}, size_t{3}}) {
    const QStringList marked = charts::HighlightedNodes(*views[tab]->chart());
    EXPECT_TRUE(marked.contains(node)) << "chart " << tab << " marks " << marked.join(",").toStdString();
  }
  // The detail pane names the layer and every target's kernel.
  const QString details = page.details()->toPlainText();
  EXPECT_TRUE(details.contains(node));
  EXPECT_TRUE(details.contains(QStringLiteral("cpu:int8")));
}

TEST_F(LayersPageTest, ClickingAPointSelectsItsRow) {
  // The drift chart's int8 markers carry their nodes: a click on one (its `clicked` signal, as
  // QChartView emits it for a mouse press on the marker) selects that row in the table.
  QChart* drift = page.chartViews()[3]->chart();
  QScatterSeries* int8 = nullptr;
  for (QAbstractSeries* s : drift->series()) {
    if (s->name() == QStringLiteral("cpu:int8")) int8 = qobject_cast<QScatterSeries*>(s);
  }
  ASSERT_NE(int8, nullptr);
  ASSERT_GT(int8->count(), 5);
  const QPointF point = int8->at(5);
  const QStringList nodes = charts::NodesNear(*int8, point);
  ASSERT_FALSE(nodes.isEmpty());
  emit int8->clicked(point);
  EXPECT_EQ(selection.current(), nodes.front());
  const QModelIndexList rows = page.table()->selectionModel()->selectedRows();
  ASSERT_EQ(rows.size(), 1);
  EXPECT_EQ(rows.front().data(LayerTableModel::KeyRole).toString(), nodes.front());
  // And the point itself is now marked.
  EXPECT_TRUE(charts::HighlightedNodes(*drift).contains(nodes.front()));
}

TEST_F(LayersPageTest, ABarClickSelectsItsLayer) {
  QChart* time = page.chartViews()[0]->chart();
  QBarSet* set = nullptr;
  for (QAbstractSeries* s : time->series()) {
    if (auto* bars = qobject_cast<QAbstractBarSeries*>(s)) set = bars->barSets().value(0);
  }
  ASSERT_NE(set, nullptr);
  const auto nodes = charts::NodesOfPoints(set);
  ASSERT_EQ(static_cast<int>(nodes.size()), set->count());
  emit set->clicked(set->count() - 1);  // the top bar: the slowest layer
  EXPECT_EQ(selection.current(), nodes.back().front());
  EXPECT_TRUE(set->isBarSelected(set->count() - 1));
}

TEST_F(LayersPageTest, SelectionFromElsewhereSelectsTheRowEvenAfterAFilter) {
  selection.select({QStringLiteral("n13")});
  ASSERT_EQ(page.table()->selectionModel()->selectedRows().size(), 1);
  EXPECT_EQ(page.table()->selectionModel()->selectedRows().front().data(LayerTableModel::KeyRole).toString(),
            QStringLiteral("n13"));
  auto* search = page.findChild<QLineEdit*>(QStringLiteral("layerSearch"));
  ASSERT_NE(search, nullptr);
  QTest::keyClicks(search, QStringLiteral("n1"));
  // n1, n10 … n19, and n20, whose kernel on the fused targets is "FusedConv n19": the filter reads kernels too.
  EXPECT_EQ(page.proxy()->rowCount(), 12);
  // Switching to kernel rows keeps the layer selected: n13 is a Relu fused into n12 on bf16, but on
  // fp32 a kernel of its own.
  auto* mode = page.findChild<QComboBox*>(QStringLiteral("rowMode"));
  mode->setCurrentIndex(1);
  EXPECT_EQ(selection.current(), QStringLiteral("n13"));
  EXPECT_EQ(page.table()->selectionModel()->selectedRows().size(), 1);
}

TEST_F(LayersPageTest, WhatIfAsksForTheWorstDriftingLayersOnTheDriftTarget) {
  QSignalSpy spy(&page, &LayersPage::whatIfRequested);
  auto* button = page.findChild<QPushButton*>(QStringLiteral("whatIfButton"));
  ASSERT_NE(button, nullptr);
  selection.clear();
  page.table()->clearSelection();
  QTest::mouseClick(button, Qt::LeftButton);
  ASSERT_EQ(spy.size(), 1);
  EXPECT_EQ(spy.front().at(0).toString(), QStringLiteral("cpu:int8"));  // the lowest precision
  const QStringList nodes = spy.front().at(1).toStringList();
  ASSERT_FALSE(nodes.isEmpty());
  // The synthetic int8 drifts most at the end of the model.
  EXPECT_TRUE(nodes.contains(QStringLiteral("n39")) || nodes.contains(QStringLiteral("n38")))
      << nodes.join(",").toStdString();
}

TEST(LayersPage, SaysWhenPerLayerTimesAreNotToBeTakenAsTheyAre) {
  LayerSelection selection;
  LayersPage page(&selection);
  auto run = SyntheticRun(10, 2);
  auto busy = std::make_shared<TargetResult>(*run->targets[1]);
  busy->latency.machine_busy = true;
  busy->latency.other_cpu_share = 0.34;
  busy->instrumentation_overhead = 40;
  run->targets[1] = busy;
  page.setRun(run);
  auto* summary = page.findChild<QLabel*>(QStringLiteral("layersSummary"));
  ASSERT_NE(summary, nullptr);
  EXPECT_TRUE(summary->text().contains(QStringLiteral("cpu:bf16 was timed while other processes used 34 %")))
      << summary->text().toStdString();
  EXPECT_TRUE(summary->text().contains(QStringLiteral("add up to 40.0×"))) << summary->text().toStdString();
  EXPECT_FALSE(summary->text().contains(QStringLiteral("cpu:fp32 was timed")));
  // A filter keeps the warnings.
  page.proxy()->setOpFilter(QStringLiteral("Conv"));
  page.findChild<QLineEdit*>(QStringLiteral("layerSearch"))->setText(QStringLiteral("n"));
  EXPECT_TRUE(summary->text().contains(QStringLiteral("was timed while")));
}

// Where "overhead 0.12" or "add up to 40×" was, the page says where the end-to-end time goes, why Σ layers
// and end to end disagree when they do, and which targets the machine was too busy to time.
TEST(LayersPage, SaysWhereTheEndToEndTimeGoes) {
  LayerSelection selection;
  LayersPage page(&selection);
  auto run = SyntheticRun(10, 3);
  auto fp32 = std::make_shared<TargetResult>(*run->targets[0]);
  fp32->attribution =
      TimeAttribution{.end_to_end_ms = 7.1, .attributed_ms = 6.7, .between_ms = 0.3, .unexplained_ms = 0.1};
  fp32->instrumentation_overhead = 0.12;
  run->targets[0] = fp32;
  auto bf16 = std::make_shared<TargetResult>(*run->targets[1]);
  bf16->attribution = TimeAttribution{.end_to_end_ms = 52.7,
                                      .attributed_ms = 7.4,
                                      .between_ms = 0.5,
                                      .unexplained_ms = 44.8,
                                      .explanation = "Σ layers is 0.14× end to end: the end-to-end runs were slowed"};
  bf16->unreliable = true;
  bf16->unreliable_reason = "only 2 of 10 timing rounds were clean within the 25 s budget";
  run->targets[1] = bf16;
  page.setRun(run);
  auto* summary = page.findChild<QLabel*>(QStringLiteral("layersSummary"));
  ASSERT_NE(summary, nullptr);
  const QString text = summary->text();
  EXPECT_TRUE(text.contains(
      QStringLiteral("cpu:fp32: Σ layers 6.70 ms · between kernels 300 µs · unexplained 100 µs of 7.10 ms end to end")))
      << text.toStdString();
  EXPECT_TRUE(
      text.contains(QStringLiteral("cpu:bf16: Σ layers 7.40 ms · between kernels 500 µs · unexplained 44.8 ms "
                                   "of 52.7 ms end to end")))
      << text.toStdString();
  // The explanation in the warning tone, the bare ratio gone.
  EXPECT_TRUE(text.contains(QStringLiteral("color:#a05a00\">⚠ Σ layers is 0.14× end to end"))) << text.toStdString();
  // Σ layers above end to end (each layer's time carries its timer): an excess, never a negative rest.
  auto over = std::make_shared<TargetResult>(*fp32);
  over->attribution =
      TimeAttribution{.end_to_end_ms = 0.64, .attributed_ms = 0.7285, .between_ms = 0, .unexplained_ms = -0.0885};
  run->targets[0] = over;
  page.setRun(run);
  const QString excess = summary->text();
  EXPECT_TRUE(excess.contains(QStringLiteral(
      "cpu:fp32: Σ layers 728 µs · above the 640 µs end to end by 88.5 µs (per-layer timing's own cost)")))
      << excess.toStdString();
  EXPECT_FALSE(excess.contains(QStringLiteral("unexplained -"))) << excess.toStdString();
  // An int8 column whose kernels ran in fp32 says so above the table.
  auto int8 = std::make_shared<TargetResult>(*run->targets[2]);
  int8->target = {DeviceKind::kCpu, 0, Precision::kInt8};
  for (LayerResult& l : int8->layers) {
    l.precision = "fp32";
    l.device = "cpu";
  }
  run->targets[2] = int8;
  page.setRun(run);
  EXPECT_TRUE(summary->text().contains(QStringLiteral("<b>cpu:int8 ran as cpu:fp32</b>: int8 0 of ")))
      << summary->text().toStdString();
  EXPECT_FALSE(text.contains(QStringLiteral("overhead"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("cpu:bf16 is unreliable</b>: only 2 of 10 timing rounds")))
      << text.toStdString();
  // A target without an attribution (a run recorded before it) has no line.
  EXPECT_FALSE(text.contains(QStringLiteral("cpu:int8: Σ layers"))) << text.toStdString();
}

TEST_F(LayersPageTest, ScreenshotOfEachTabIsNotBlank) {
  page.table()->selectRow(0);
  for (int tab = 0; tab < page.charts()->count(); ++tab) {
    page.charts()->setCurrentIndex(tab);
    QApplication::processEvents();
    const QImage shot = page.grab().toImage();
    const QString name = QStringLiteral("layers_page_%1.png").arg(tab);
    shot.save(name);
    EXPECT_GT(Colours(shot), 20) << name.toStdString();
  }
}

}  // namespace
}  // namespace chipfit
