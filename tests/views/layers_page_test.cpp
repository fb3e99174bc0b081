// The Layers page as a user meets it: a run's table sorted slowest first, linked selection between the
// table and every chart, the detail pane, the heat map, the What-if request, and a screenshot.
#include <gtest/gtest.h>

#include <QAbstractBarSeries>
#include <QAbstractTextDocumentLayout>
#include <QBarSet>
#include <QChartView>
#include <QComboBox>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScatterSeries>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextLayout>
#include <QTextTable>
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

// The words of a rich-text pane that its layout broke across two lines ("targe|t", "cpu:fp|32").
QStringList BrokenWords(QTextDocument& doc) {
  (void)doc.documentLayout()->documentSize();  // lays the whole document out at its current width
  // A break after a hyphen ("per-|layer") is a break between words.
  static const QRegularExpression kWord(QStringLiteral("[^\\s-]+"));
  QStringList broken;
  for (QTextBlock block = doc.begin(); block.isValid(); block = block.next()) {
    const QTextLayout* layout = block.layout();
    if (layout == nullptr || layout->lineCount() < 2) continue;
    for (auto it = kWord.globalMatch(block.text()); it.hasNext();) {
      const QRegularExpressionMatch word = it.next();
      if (layout->lineForTextPosition(word.capturedStart()).lineNumber() !=
          layout->lineForTextPosition(word.capturedEnd() - 1).lineNumber())
        broken << word.captured();
    }
  }
  return broken;
}

// Columns a user sees (not hidden) in a table view.
int ShownColumns(const QTableView& view) {
  int shown = 0;
  for (int c = 0; c < view.model()->columnCount(); ++c) shown += view.isColumnHidden(c) ? 0 : 1;
  return shown;
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

// Scrolled fully right, the node names stay where they were: the frozen column over the table's left edge.
TEST_F(LayersPageTest, NameColumnStaysVisibleWhenScrolledFullyRight) {
  QTableView* table = page.table();
  auto* frozen = page.findChild<QTableView*>(QStringLiteral("frozenColumn"));
  ASSERT_NE(frozen, nullptr) << "no frozen name column";
  QApplication::processEvents();
  const int x = frozen->mapTo(table, QPoint(0, 0)).x();
  QScrollBar* across = table->horizontalScrollBar();
  ASSERT_GT(across->maximum(), 0) << "the table fits: nothing to scroll";
  across->setValue(across->maximum());
  QApplication::processEvents();
  EXPECT_EQ(across->value(), across->maximum());
  EXPECT_TRUE(frozen->isVisible());
  EXPECT_GT(frozen->columnWidth(LayerTableModel::kNameColumn), 0);
  EXPECT_EQ(frozen->columnWidth(LayerTableModel::kNameColumn), table->columnWidth(LayerTableModel::kNameColumn));
  EXPECT_EQ(frozen->mapTo(table, QPoint(0, 0)).x(), x);
  EXPECT_EQ(ShownColumns(*frozen), 1);
  EXPECT_EQ(frozen->model(), table->model());
  EXPECT_EQ(frozen->selectionModel(), table->selectionModel());
  // Its rows are the table's rows, on the same lines, also scrolled down.
  QScrollBar* down = table->verticalScrollBar();
  down->setValue(down->maximum() / 2);
  QApplication::processEvents();
  // A row in the middle of the viewport: scrolling is per pixel, so the top row may be cut, its centre
  // outside the view.
  const QModelIndex top = table->indexAt(QPoint(5, table->viewport()->height() / 2));
  ASSERT_TRUE(top.isValid());
  const QModelIndex name = top.siblingAtColumn(LayerTableModel::kNameColumn);
  EXPECT_EQ(frozen->visualRect(name).top() + frozen->viewport()->mapTo(table, QPoint(0, 0)).y(),
            table->visualRect(top).top() + table->viewport()->mapTo(table, QPoint(0, 0)).y());
  EXPECT_FALSE(frozen->visualRect(name).isEmpty());
  // Clicking a name in the frozen column selects its row in the table.
  QTest::mouseClick(frozen->viewport(), Qt::LeftButton, {}, frozen->visualRect(name).center());
  EXPECT_EQ(selection.current(), name.data(LayerTableModel::KeyRole).toString());
  // Its header sorts the table by name, A to Z first, as the table's own header would.
  QHeaderView* names = frozen->horizontalHeader();
  const QPoint middle(names->sectionSize(0) / 2, names->height() / 2);
  QTest::mouseClick(names->viewport(), Qt::LeftButton, {}, middle);
  EXPECT_EQ(table->horizontalHeader()->sortIndicatorSection(), int(LayerTableModel::kNameColumn));
  EXPECT_EQ(table->horizontalHeader()->sortIndicatorOrder(), Qt::AscendingOrder);
  EXPECT_LT(QString::localeAwareCompare(NodeAtRow(0), NodeAtRow(1)), 0);
  QTest::mouseClick(names->viewport(), Qt::LeftButton, {}, middle);
  EXPECT_EQ(table->horizontalHeader()->sortIndicatorOrder(), Qt::DescendingOrder);
  EXPECT_EQ(names->sortIndicatorOrder(), Qt::DescendingOrder);
  EXPECT_GT(QString::localeAwareCompare(NodeAtRow(0), NodeAtRow(1)), 0);
  // The same run again (a profile streaming in) keeps the overlay to one column.
  page.setRun(page.run());
  EXPECT_EQ(ShownColumns(*frozen), 1);
  page.grab().save(QStringLiteral("layers_page_scrolled_right.png"));
}

// A first click on a time column's header shows the slowest first.
TEST_F(LayersPageTest, FirstClickOnATimeColumnSortsSlowestFirst) {
  QTableView* table = page.table();
  QHeaderView* header = table->horizontalHeader();
  for (const LayerTableModel::Metric metric :
       {LayerTableModel::kP90, LayerTableModel::kShare, LayerTableModel::kEnergy}) {
    const int column = LayerTableModel::column(1, metric);
    ASSERT_NE(header->sortIndicatorSection(), column);
    table->scrollTo(page.proxy()->index(0, column));
    QApplication::processEvents();
    const int x = header->sectionViewportPosition(column) + header->sectionSize(column) / 2;
    QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, QPoint(x, header->height() / 2));
    EXPECT_EQ(header->sortIndicatorSection(), column);
    EXPECT_EQ(header->sortIndicatorOrder(), Qt::DescendingOrder) << LayerTableModel::metricName(metric).toStdString();
    EXPECT_GE(page.proxy()->index(0, column).data(LayerTableModel::RawRole).toDouble(),
              page.proxy()->index(1, column).data(LayerTableModel::RawRole).toDouble());
  }
  // The time cells read in scaled units.
  const QString shown = page.proxy()->index(0, LayerTableModel::column(0, LayerTableModel::kP50)).data().toString();
  EXPECT_TRUE(shown.contains(QString::fromUtf8(" µs")) || shown.contains(QStringLiteral(" ms"))) << shown.toStdString();
}

// One target, A vs B (with their p50 ratio), or every target: the column-set switch.
TEST_F(LayersPageTest, ColumnSetSwitchShowsOneTwoOrAllTargets) {
  auto* set = page.findChild<QComboBox*>(QStringLiteral("columnSet"));
  auto* a = page.findChild<QComboBox*>(QStringLiteral("columnTargetA"));
  auto* b = page.findChild<QComboBox*>(QStringLiteral("columnTargetB"));
  ASSERT_NE(set, nullptr);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  QTableView& table = *page.table();
  const int fixed = 2;  // node and op
  EXPECT_EQ(set->currentText(), QStringLiteral("All targets"));
  EXPECT_EQ(ShownColumns(table), fixed + 3 * LayerTableModel::kMetricCount);
  set->setCurrentText(QStringLiteral("One target"));
  a->setCurrentText(QStringLiteral("cpu:bf16"));
  EXPECT_EQ(ShownColumns(table), fixed + LayerTableModel::kMetricCount);
  EXPECT_FALSE(table.isColumnHidden(LayerTableModel::column(1, LayerTableModel::kKernel)));
  EXPECT_TRUE(table.isColumnHidden(LayerTableModel::column(0, LayerTableModel::kP50)));
  // Sorted by what is shown: bf16's time.
  EXPECT_EQ(table.horizontalHeader()->sortIndicatorSection(), LayerTableModel::column(1, LayerTableModel::kP50));
  set->setCurrentText(QStringLiteral("A vs B"));
  a->setCurrentText(QStringLiteral("cpu:fp32"));
  b->setCurrentText(QStringLiteral("cpu:int8"));
  // Kernel, p50, share, precision, drift and energy of each, and the ratio.
  EXPECT_EQ(ShownColumns(table), fixed + 2 * 6 + 1);
  EXPECT_FALSE(table.isColumnHidden(LayerTableModel::kRatioColumn));
  EXPECT_FALSE(table.isColumnHidden(LayerTableModel::column(2, LayerTableModel::kP50)));
  EXPECT_TRUE(table.isColumnHidden(LayerTableModel::column(1, LayerTableModel::kP50)));
  EXPECT_EQ(page.model()->headerData(LayerTableModel::kRatioColumn, Qt::Horizontal).toString(),
            QString::fromUtf8("cpu:int8 ÷ cpu:fp32\np50"));
  EXPECT_EQ(table.horizontalHeader()->sortIndicatorSection(), int(LayerTableModel::kRatioColumn));
  EXPECT_GE(page.proxy()->index(0, LayerTableModel::kRatioColumn).data(LayerTableModel::RawRole).toDouble(),
            page.proxy()->index(1, LayerTableModel::kRatioColumn).data(LayerTableModel::RawRole).toDouble());
  page.grab().save(QStringLiteral("layers_page_a_vs_b.png"));
  set->setCurrentText(QStringLiteral("All targets"));
  EXPECT_EQ(ShownColumns(table), fixed + 3 * LayerTableModel::kMetricCount);
}

// Kernel names are readable whole: their column fits them (up to a limit), elides in the middle beyond
// it, and the tooltip names the whole kernel.
TEST_F(LayersPageTest, KernelNamesAreReadable) {
  QTableView& table = *page.table();
  EXPECT_EQ(table.textElideMode(), Qt::ElideMiddle);
  for (int t = 0; t < page.model()->targetCount(); ++t) {
    const int column = LayerTableModel::column(t, LayerTableModel::kKernel);
    for (int r = 0; r < page.proxy()->rowCount(); ++r) {
      const QModelIndex cell = page.proxy()->index(r, column);
      const QString kernel = cell.data().toString();
      EXPECT_GE(table.columnWidth(column), table.fontMetrics().horizontalAdvance(kernel)) << kernel.toStdString();
      EXPECT_TRUE(cell.data(Qt::ToolTipRole).toString().contains(kernel));
    }
  }
}

// The detail pane of a layer on four targets: one key/value row per figure under each target's name,
// never a word broken across two lines, at the pane's default width or its narrowest.
TEST(LayersPage, DetailPaneNeverBreaksAWordAcrossLines) {
  LayerSelection selection;
  LayersPage page(&selection);
  page.resize(1280, 800);
  page.setRun(SyntheticRun(40, 4));
  page.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&page));
  selection.select({QStringLiteral("n12")});  // a Relu: in a fused kernel on three targets, its own on fp32
  QApplication::processEvents();
  QTextBrowser* details = page.details();
  const QString text = details->toPlainText();
  for (const char* target : {"cpu:fp32", "cpu:bf16", "cpu:int8", "opencl:0:fp32"})
    EXPECT_TRUE(text.contains(QString::fromLatin1(target))) << target;
  // Key/value rows: a two-column table.
  QTextTable* rows = nullptr;
  for (QTextBlock block = details->document()->begin(); block.isValid() && rows == nullptr; block = block.next())
    rows = QTextCursor(block).currentTable();
  ASSERT_NE(rows, nullptr);
  EXPECT_EQ(rows->columns(), 2);
  EXPECT_GE(rows->rows(), 4 * 8);
  EXPECT_GE(details->minimumWidth(),
            details->fontMetrics().horizontalAdvance(QStringLiteral("precision  opencl:0:fp32")));
  EXPECT_EQ(BrokenWords(*details->document()).join(QStringLiteral(", ")).toStdString(), "")
      << "at " << details->width() << " px";
  page.grab().save(QStringLiteral("layers_page_details_default.png"));
  // The splitter pushed all the way: the pane at its minimum width.
  auto* lower = page.findChild<QSplitter*>(QStringLiteral("layersLowerSplitter"));
  ASSERT_NE(lower, nullptr);
  lower->setCollapsible(1, false);  // dragged to its narrowest, not collapsed away
  lower->setSizes({10000, 0});
  QApplication::processEvents();
  EXPECT_EQ(details->width(), details->minimumWidth());
  EXPECT_EQ(BrokenWords(*details->document()).join(QStringLiteral(", ")).toStdString(), "")
      << "at " << details->width() << " px";
  page.grab().save(QStringLiteral("layers_page_details_narrow.png"));
}

// A profile in progress: the page shows the finished targets and names the one still running, then
// keeps the user's sort, filter, selection and scroll position when the same run comes back grown.
TEST(LayersPage, ARunInProgressGrowsWithoutLosingTheUsersView) {
  LayerSelection selection;
  LayersPage page(&selection);
  page.resize(1400, 900);
  page.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&page));
  const std::shared_ptr<const RunResult> full = SyntheticRun(200, 3);
  // What the Run page hands over: the run as the store began it with the targets finished so far.
  auto partial = std::make_shared<RunResult>(*full);
  partial->status = "incomplete";
  partial->settings.targets = "cpu:fp32,cpu:bf16,cpu:int8";
  partial->targets.pop_back();
  auto* summary = page.findChild<QLabel*>(QStringLiteral("layersSummary"));
  ASSERT_NE(summary, nullptr);
  // Nothing finished yet: still a run, not "No run."
  auto none = std::make_shared<RunResult>(*partial);
  none->targets.clear();
  page.setRun(none);
  EXPECT_FALSE(summary->text().contains(QStringLiteral("No run"))) << summary->text().toStdString();
  EXPECT_TRUE(summary->text().contains(QStringLiteral("cpu:fp32, cpu:bf16, cpu:int8 still running")))
      << summary->text().toStdString();
  // A target handed over before its layers are in reads as running too.
  auto empty = std::make_shared<RunResult>(*partial);
  auto no_layers = std::make_shared<TargetResult>(*full->targets[1]);
  no_layers->layers.clear();
  empty->targets[1] = no_layers;
  page.setRun(empty);
  EXPECT_TRUE(summary->text().contains(QStringLiteral("cpu:bf16, cpu:int8 still running")))
      << summary->text().toStdString();
  page.setRun(partial);
  EXPECT_EQ(page.model()->targetCount(), 2);
  EXPECT_TRUE(summary->text().contains(QStringLiteral("cpu:int8 still running"))) << summary->text().toStdString();
  EXPECT_TRUE(summary->text().contains(QStringLiteral("(in progress)"))) << summary->text().toStdString();

  // The user filters, sorts by bf16's p90 ascending, widens the name, selects a layer and scrolls.
  page.findChild<QLineEdit*>(QStringLiteral("layerSearch"))->setText(QStringLiteral("n1"));
  const int filtered = page.proxy()->rowCount();
  ASSERT_GT(filtered, 50);
  QTableView* table = page.table();
  table->sortByColumn(LayerTableModel::column(1, LayerTableModel::kP90), Qt::AscendingOrder);
  table->setColumnWidth(LayerTableModel::kNameColumn, 260);
  selection.select({QStringLiteral("n150")});
  table->verticalScrollBar()->setValue(table->verticalScrollBar()->maximum() / 3);
  table->horizontalScrollBar()->setValue(table->horizontalScrollBar()->maximum() / 2);
  const int down = table->verticalScrollBar()->value(), across = table->horizontalScrollBar()->value();
  ASSERT_GT(down, 0);
  ASSERT_GT(across, 0);

  // Int8 finishes: the same run id, a third target.
  page.setRun(full);
  QApplication::processEvents();
  EXPECT_EQ(page.model()->targetCount(), 3);
  EXPECT_FALSE(summary->text().contains(QStringLiteral("still running"))) << summary->text().toStdString();
  EXPECT_EQ(page.proxy()->rowCount(), filtered);
  EXPECT_EQ(table->horizontalHeader()->sortIndicatorSection(), LayerTableModel::column(1, LayerTableModel::kP90));
  EXPECT_EQ(table->horizontalHeader()->sortIndicatorOrder(), Qt::AscendingOrder);
  EXPECT_EQ(table->columnWidth(LayerTableModel::kNameColumn), 260);
  ASSERT_EQ(table->selectionModel()->selectedRows().size(), 1);
  EXPECT_EQ(table->selectionModel()->selectedRows().front().data(LayerTableModel::KeyRole).toString(),
            QStringLiteral("n150"));
  EXPECT_EQ(table->verticalScrollBar()->value(), down);
  EXPECT_EQ(table->horizontalScrollBar()->value(), across);
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
