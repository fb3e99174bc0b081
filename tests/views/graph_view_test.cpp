// Graph view: Graphviz layout of node lists, and GraphPage's layout hand-off, colours, search and linked selection.
#include <gtest/gtest.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QGraphicsView>
#include <QImage>
#include <QLineEdit>
#include <QMenu>
#include <QScrollBar>
#include <QSet>
#include <QSignalSpy>
#include <QTest>
#include <QToolTip>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <utility>

#include "views/models/graph_layout.h"
#include "views/pages/graph_overview.h"
#include "views/pages/graph_page.h"

namespace chipfit {
namespace {

constexpr int kLayoutTimeoutMs = 120000;  // generous: a loaded CI machine or a sanitizer build

// A NodeRow as AnalyzeModel writes it; assigned field by field, so fields added later keep their defaults.
NodeRow Row(std::string name, std::string op, std::vector<std::string> inputs, std::vector<std::string> outputs) {
  NodeRow row;
  row.name = std::move(name);
  row.op = std::move(op);
  row.inputs = std::move(inputs);
  row.outputs = std::move(outputs);
  return row;
}

GraphNodeSpec Spec(const char* name, const char* op, QStringList inputs, QStringList outputs) {
  return {.name = QString::fromLatin1(name),
          .op = QString::fromLatin1(op),
          .inputs = std::move(inputs),
          .outputs = std::move(outputs)};
}

// x and w are a graph input and an initializer: no node produces them, so they make no edge.
std::vector<GraphNodeSpec> Diamond() {
  return {Spec("conv", "Conv", {"x", "w"}, {"c"}), Spec("left", "Relu", {"c"}, {"l"}),
          Spec("right", "Sigmoid", {"c"}, {"r"}), Spec("join", "Add", {"l", "r"}, {"y"})};
}

int IndexOf(const GraphLayout& layout, const QString& name) {
  for (qsizetype i = 0; i < layout.nodes.size(); ++i) {
    if (layout.nodes[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

double Distance(QPointF a, QPointF b) { return std::hypot(a.x() - b.x(), a.y() - b.y()); }

TEST(GraphLayoutTest, LaysOutEveryNodeWithEdgesGoingDown) {
  const GraphLayoutOptions options;
  auto result = LayOutGraph(Diamond(), options);
  ASSERT_TRUE(result.ok()) << result.status().message();
  const GraphLayout& layout = *result;
  ASSERT_EQ(layout.nodes.size(), 4);
  for (const LaidOutNode& node : layout.nodes) {
    EXPECT_NEAR(node.width, options.node_width, 0.5) << node.name.toStdString();
    EXPECT_NEAR(node.height, options.node_height, 0.5) << node.name.toStdString();
    EXPECT_TRUE(layout.bounds.contains(node.rect().adjusted(1, 1, -1, -1))) << node.name.toStdString();
  }
  EXPECT_EQ(layout.nodes[0].name, QStringLiteral("conv"));
  EXPECT_EQ(layout.nodes[0].op, QStringLiteral("Conv"));

  // Exactly the four producer → consumer edges; each leaves its producer's box and ends at its consumer's.
  std::set<std::pair<QString, QString>> edges;
  for (const LaidOutEdge& edge : layout.edges) {
    const LaidOutNode& from = layout.nodes[edge.from];
    const LaidOutNode& to = layout.nodes[edge.to];
    edges.insert({from.name, to.name});
    ASSERT_GE(edge.points.size(), 4) << "a cubic Bézier chain";
    EXPECT_EQ((edge.points.size() - 1) % 3, 0);
    EXPECT_LT(Distance(edge.points.front(), QPointF(from.centre.x(), from.rect().bottom())), from.width / 2 + 1);
    ASSERT_TRUE(edge.arrow_tip.has_value());
    EXPECT_LT(std::abs(edge.arrow_tip->y() - to.rect().top()), 2.0) << "the arrow ends on the consumer's top";
    // Ranks go downwards on screen: the producer is above its consumer.
    EXPECT_LT(from.centre.y(), to.centre.y());
    EXPECT_LT(from.rank, to.rank);
  }
  const std::set<std::pair<QString, QString>> expected = {
      {"conv", "left"}, {"conv", "right"}, {"left", "join"}, {"right", "join"}};
  EXPECT_EQ(edges, expected);
  // The two branches share a rank, side by side.
  const LaidOutNode& left = layout.nodes[IndexOf(layout, "left")];
  const LaidOutNode& right = layout.nodes[IndexOf(layout, "right")];
  EXPECT_EQ(left.rank, right.rank);
  EXPECT_NEAR(left.centre.y(), right.centre.y(), 0.5);
  EXPECT_FALSE(left.rect().intersects(right.rect()));
}

TEST(GraphLayoutTest, LeftToRightPutsSuccessorsToTheRight) {
  GraphLayoutOptions options;
  options.direction = GraphDirection::kLeftToRight;
  auto result = LayOutGraph(Diamond(), options);
  ASSERT_TRUE(result.ok()) << result.status().message();
  const GraphLayout& layout = *result;
  ASSERT_EQ(layout.edges.size(), 4);
  for (const LaidOutEdge& edge : layout.edges) {
    const LaidOutNode& from = layout.nodes[edge.from];
    const LaidOutNode& to = layout.nodes[edge.to];
    EXPECT_LT(from.rect().right(), to.rect().left()) << from.name.toStdString() << " → " << to.name.toStdString();
    ASSERT_TRUE(edge.arrow_tip.has_value());
    EXPECT_LT(std::abs(edge.arrow_tip->x() - to.rect().left()), 2.0) << "the arrow ends on the consumer's left side";
  }
  // The boxes keep their size (not turned on their side), and the two branches stand in one column.
  EXPECT_NEAR(layout.nodes[0].width, options.node_width, 0.5);
  EXPECT_NEAR(layout.nodes[0].height, options.node_height, 0.5);
  const LaidOutNode& left = layout.nodes[IndexOf(layout, "left")];
  const LaidOutNode& right = layout.nodes[IndexOf(layout, "right")];
  EXPECT_NEAR(left.centre.x(), right.centre.x(), 0.5);
  EXPECT_GT(layout.bounds.width(), layout.bounds.height());
}

TEST(GraphLayoutTest, ValuesBetweenTheSameTwoNodesShareOneEdge) {
  auto result =
      LayOutGraph({Spec("split", "Split", {"x"}, {"a", "b"}), Spec("concat", "Concat", {"a", "b", "a"}, {"y"})});
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->edges.size(), 1);
  EXPECT_EQ(result->edges[0].values, (QStringList{"a", "b"}));
}

TEST(GraphLayoutTest, BadInputIsAnErrorThatSaysWhy) {
  const auto message = [](const std::vector<GraphNodeSpec>& nodes) {
    auto result = LayOutGraph(nodes);
    EXPECT_FALSE(result.ok());
    return result.ok() ? std::string() : result.status().message();
  };
  EXPECT_NE(message({}).find("empty"), std::string::npos);
  EXPECT_NE(message({Spec("", "Relu", {"x"}, {"y"})}).find("node 0 (Relu) has no name"), std::string::npos);
  EXPECT_NE(message({Spec("a", "Relu", {"x"}, {"y"}), Spec("a", "Relu", {"y"}, {"z"})}).find("both named 'a'"),
            std::string::npos);
  EXPECT_NE(message({Spec("a", "Relu", {"x"}, {"y"}), Spec("b", "Relu", {"x"}, {"y"})})
                .find("value 'y' is produced by both 'a' and 'b'"),
            std::string::npos);
  GraphLayoutOptions zero;
  zero.node_width = 0;
  auto result = LayOutGraph(Diamond(), zero);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("not positive"), std::string::npos);
  // A cycle is not a valid ONNX graph, but dot still draws it: no crash, every node placed.
  auto cycle = LayOutGraph({Spec("a", "Add", {"x", "b_out"}, {"a_out"}), Spec("b", "Relu", {"a_out"}, {"b_out"})});
  ASSERT_TRUE(cycle.ok()) << cycle.status().message();
  EXPECT_EQ(cycle->nodes.size(), 2);
}

TEST(GraphLayoutTest, LayoutsFromSeveralThreadsAtOnceAllSucceed) {
  std::vector<QFuture<bool>> runs;
  for (int i = 0; i < 4; ++i) {
    runs.push_back(QtConcurrent::run([] {
      auto layout = LayOutGraph(Diamond());
      return layout.ok() && layout->nodes.size() == 4 && layout->edges.size() == 4;
    }));
  }
  for (auto& run : runs) EXPECT_TRUE(run.result());
}

TEST(GraphLayoutTest, ParsesValueNamesOutOfNodeRowTexts) {
  EXPECT_EQ(ValueNameOfRowText("x: 1x3x48x192 f32"), QStringLiteral("x"));
  EXPECT_EQ(ValueNameOfRowText("onnx::Conv_12: 16 f32"), QStringLiteral("onnx::Conv_12"));
  EXPECT_EQ(ValueNameOfRowText("x: batchx64 f32"), QStringLiteral("x"));
  EXPECT_EQ(ValueNameOfRowText("axes: scalar i64"), QStringLiteral("axes"));
  EXPECT_EQ(ValueNameOfRowText("y: f32"), QStringLiteral("y"));
  EXPECT_EQ(ValueNameOfRowText("bare_name"), QStringLiteral("bare_name"));
  EXPECT_EQ(ValueNameOfRowText("model/layer:0"), QStringLiteral("model/layer:0"));

  ModelAnalysis analysis;
  analysis.nodes = {Row("c", "Conv", {"x: 1x3x8x8 f32", "w: 4x3x3x3 f32"}, {"c_out"}),
                    Row("r", "Relu", {"c_out"}, {"y: 1x4x6x6 f32"})};
  const std::vector<GraphNodeSpec> nodes = GraphNodesOf(analysis);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].inputs, (QStringList{"x", "w"}));
  EXPECT_EQ(nodes[1].inputs, QStringList{"c_out"});
  EXPECT_EQ(nodes[1].outputs, QStringList{"y"});
  auto layout = LayOutGraph(nodes);
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  EXPECT_EQ(layout->edges.size(), 1);
}

// A chain of `count` nodes with a skip connection every 10 nodes and a side branch every 25: the shape
// of a ResNet-like model, as NodeRows with shapes in their texts.
std::shared_ptr<const ModelAnalysis> SyntheticModel(int count) {
  auto analysis = std::make_shared<ModelAnalysis>();
  const auto value = [](int i) { return "v" + std::to_string(i) + ": 1x64x56x56 f32"; };
  for (int i = 0; i < count; ++i) {
    NodeRow row = Row("node_" + std::to_string(i), i % 3 == 0 ? "Conv" : (i % 3 == 1 ? "Relu" : "Add"), {}, {value(i)});
    row.inputs.push_back(i == 0 ? "input: 1x64x56x56 f32" : value(i - 1));
    if (i >= 10 && i % 10 == 0) row.inputs.push_back(value(i - 10));
    if (i >= 2 && i % 25 == 0) row.inputs.push_back(value(i - 2));
    if (i % 3 == 0) row.inputs.push_back("weight_" + std::to_string(i) + ": 64x64x3x3 f32");
    analysis->nodes.push_back(std::move(row));
  }
  return analysis;
}

// Shows the page and waits for the layout and its first paint; returns {layout ms, first paint ms}.
std::pair<qint64, qint64> LayOutAndPaint(GraphPage& page, std::shared_ptr<const ModelAnalysis> analysis) {
  QSignalSpy laid_out(&page, &GraphPage::laidOut);
  QSignalSpy failed(&page, &GraphPage::layoutFailed);
  page.setModel(std::move(analysis));
  EXPECT_TRUE(page.isLayingOut());
  if (!laid_out.wait(kLayoutTimeoutMs)) {
    ADD_FAILURE() << "no laidOut: " << page.statusText().toStdString()
                  << (failed.isEmpty() ? "" : " / " + failed.first().at(0).toString().toStdString());
    return {-1, -1};
  }
  return {laid_out.first().at(0).toLongLong(), laid_out.first().at(1).toLongLong()};
}

// Whether the view shows at least one node box: its fill colour (no run: the neutral one) is on screen.
bool ShowsANode(const GraphPage& page, QColor fill = QColor(0xe3, 0xea, 0xf2)) {
  const QImage image = page.view()->viewport()->grab().toImage();
  for (int y = 0; y < image.height(); y += 2) {
    for (int x = 0; x < image.width(); x += 2) {
      if (image.pixelColor(x, y) == fill) return true;
    }
  }
  return false;
}

class GraphPageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    page_.resize(1100, 700);
    page_.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&page_));
  }

  LayerSelection selection_;
  GraphPage page_{&selection_};
};

TEST_F(GraphPageTest, LaysOutAThousandNodesOffTheGuiThreadAndPaintsThem) {
  QSignalSpy laid_out(&page_, &GraphPage::laidOut);
  page_.setModel(SyntheticModel(1000));
  EXPECT_TRUE(page_.isLayingOut());
  EXPECT_FALSE(page_.isLaidOut());
  EXPECT_EQ(page_.statusText(), QStringLiteral("Laying out 1000 nodes…"));
  ASSERT_TRUE(laid_out.wait(kLayoutTimeoutMs)) << page_.statusText().toStdString();
  const qint64 layout_ms = laid_out.first().at(0).toLongLong();
  const qint64 first_paint_ms = laid_out.first().at(1).toLongLong();
  std::cout << "[ graph    ] 1000 synthetic nodes: layout " << layout_ms << " ms, first paint " << first_paint_ms
            << " ms after the layout arrived\n";
  EXPECT_TRUE(page_.isLaidOut());
  EXPECT_FALSE(page_.isLayingOut());
  EXPECT_EQ(page_.nodeCount(), 1000);
  EXPECT_LT(layout_ms, kLayoutTimeoutMs);
  EXPECT_GE(first_paint_ms, 0);  // it painted; how fast depends on the machine
  EXPECT_TRUE(ShowsANode(page_)) << "opens on nodes, not on empty canvas";
  // The worst case for painting: every node and edge on screen at once (Fit). Printed, not asserted.
  page_.fitToView();
  QElapsedTimer repaint;
  repaint.start();
  page_.view()->viewport()->repaint();
  std::cout << "[ graph    ] 1000 synthetic nodes: repaint of the whole graph (Fit) " << repaint.elapsed() << " ms\n";
  EXPECT_TRUE(page_.statusText().startsWith(QStringLiteral("1000 nodes, "))) << page_.statusText().toStdString();
  EXPECT_EQ(laid_out.count(), 1);
  QTest::qWait(50);
  EXPECT_EQ(laid_out.count(), 1) << "laidOut once per model, not per paint";
}

TEST_F(GraphPageTest, ANewerModelSupersedesOneStillLayingOut) {
  QSignalSpy laid_out(&page_, &GraphPage::laidOut);
  page_.setModel(SyntheticModel(400));
  page_.setModel(SyntheticModel(12));
  ASSERT_TRUE(laid_out.wait(kLayoutTimeoutMs));
  QTest::qWait(300);  // a late answer for the first model would arrive now
  EXPECT_EQ(laid_out.count(), 1);
  EXPECT_EQ(page_.nodeCount(), 12);
  EXPECT_NE(page_.itemFor(QStringLiteral("node_11")), nullptr);
  EXPECT_EQ(page_.itemFor(QStringLiteral("node_12")), nullptr);
}

TEST_F(GraphPageTest, ALayoutErrorIsShownNotACrash) {
  auto analysis = std::make_shared<ModelAnalysis>();
  analysis->nodes = {Row("twice", "Relu", {"x"}, {"y"}), Row("twice", "Relu", {"y"}, {"z"})};
  QSignalSpy failed(&page_, &GraphPage::layoutFailed);
  page_.setModel(analysis);
  ASSERT_TRUE(failed.wait(kLayoutTimeoutMs));
  EXPECT_TRUE(failed.first().at(0).toString().contains(QStringLiteral("both named 'twice'")));
  EXPECT_EQ(page_.statusText(), failed.first().at(0).toString());
  EXPECT_FALSE(page_.isLaidOut());
  EXPECT_EQ(page_.nodeCount(), 0);
}

TEST_F(GraphPageTest, SelectionFromElsewhereHighlightsAndCentresTheNode) {
  LayOutAndPaint(page_, SyntheticModel(200));
  ASSERT_TRUE(page_.isLaidOut());
  GraphNodeItem* item = page_.itemFor(QStringLiteral("node_150"));
  ASSERT_NE(item, nullptr);
  EXPECT_FALSE(item->isHighlighted());
  const QRect viewport = page_.view()->viewport()->rect();
  EXPECT_FALSE(viewport.contains(page_.view()->mapFromScene(item->scenePos()))) << "starts at the top";

  QObject table;  // another view
  selection_.select({QStringLiteral("node_150"), QStringLiteral("node_151")}, &table);
  EXPECT_TRUE(item->isHighlighted());
  EXPECT_TRUE(page_.itemFor(QStringLiteral("node_151"))->isHighlighted());
  const QPoint centre = page_.view()->mapFromScene(item->scenePos());
  EXPECT_TRUE(viewport.contains(centre));
  // Vertically centred; across, a graph narrower than the window cannot scroll, so it is just visible.
  EXPECT_LT(std::abs(centre.y() - viewport.center().y()), 20) << "the current node is centred";

  selection_.select({QStringLiteral("node_3")}, &table);
  EXPECT_FALSE(item->isHighlighted());
  EXPECT_TRUE(page_.itemFor(QStringLiteral("node_3"))->isHighlighted());
}

TEST_F(GraphPageTest, ClickingANodeSelectsItForEveryView) {
  LayOutAndPaint(page_, SyntheticModel(30));
  GraphNodeItem* item = page_.itemFor(QStringLiteral("node_4"));
  ASSERT_NE(item, nullptr);
  QGraphicsView* view = page_.view();
  view->centerOn(item);
  const QPoint at = view->mapFromScene(item->scenePos());
  ASSERT_TRUE(view->viewport()->rect().contains(at));

  QSignalSpy changed(&selection_, &LayerSelection::changed);
  QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, at);
  EXPECT_EQ(selection_.current(), QStringLiteral("node_4"));
  ASSERT_EQ(changed.count(), 1);
  EXPECT_EQ(changed.first().at(1).value<QObject*>(), &page_) << "the page names itself as the origin";
  EXPECT_TRUE(item->isHighlighted());

  // A drag pans instead of selecting.
  GraphNodeItem* other = page_.itemFor(QStringLiteral("node_5"));
  const QPoint from = view->mapFromScene(other->scenePos());
  QTest::mousePress(view->viewport(), Qt::LeftButton, {}, from);
  QTest::mouseMove(view->viewport(), from + QPoint(0, 60));
  QTest::mouseRelease(view->viewport(), Qt::LeftButton, {}, from + QPoint(0, 60));
  EXPECT_EQ(selection_.current(), QStringLiteral("node_4"));

  // Clicking empty canvas selects nothing new.
  QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, QPoint(3, 3));
  EXPECT_EQ(selection_.current(), QStringLiteral("node_4"));
}

TEST_F(GraphPageTest, SearchSelectsTheFirstMatchAndEnterGoesToTheNext) {
  LayOutAndPaint(page_, SyntheticModel(60));
  QTest::keyClicks(page_.searchEdit(), QStringLiteral("relu"));
  EXPECT_EQ(selection_.current(), QStringLiteral("node_1"));
  EXPECT_TRUE(page_.itemFor(QStringLiteral("node_1"))->isHighlighted());
  QTest::keyClick(page_.searchEdit(), Qt::Key_Return);
  EXPECT_EQ(selection_.current(), QStringLiteral("node_4"));
  page_.searchEdit()->clear();
  QTest::keyClicks(page_.searchEdit(), QStringLiteral("node_5"));
  EXPECT_EQ(selection_.current(), QStringLiteral("node_5")) << "an exact name wins over node_50…";
  QTest::keyClick(page_.searchEdit(), Qt::Key_Return);
  EXPECT_EQ(selection_.current(), QStringLiteral("node_50"));
  const QRect viewport = page_.view()->viewport()->rect();
  const QPoint centre = page_.view()->mapFromScene(page_.itemFor(QStringLiteral("node_50"))->scenePos());
  EXPECT_TRUE(viewport.contains(centre)) << "the match is scrolled into view";
  EXPECT_LT(std::abs(centre.y() - viewport.center().y()), 20);
  // The search narrows as one types; text nothing matches leaves the selection alone and turns red.
  page_.searchEdit()->clear();
  QTest::keyClicks(page_.searchEdit(), QStringLiteral("zz-missing"));
  EXPECT_EQ(selection_.current(), QStringLiteral("node_50"));
  EXPECT_EQ(page_.searchEdit()->palette().color(QPalette::Text), QColor(0xb0, 0x00, 0x20));
}

TEST_F(GraphPageTest, ConstantNodesAreHiddenUntilAskedFor) {
  auto analysis = std::make_shared<ModelAnalysis>();
  analysis->nodes = {Row("shape", "Constant", {}, {"s: 2 i64"}),
                     Row("reshape", "Reshape", {"x: 1x6 f32", "s: 2 i64"}, {"r"}), Row("act", "Relu", {"r"}, {"y"})};
  LayOutAndPaint(page_, analysis);
  EXPECT_FALSE(page_.showsConstants());
  EXPECT_EQ(page_.nodeCount(), 2);
  EXPECT_EQ(page_.itemFor(QStringLiteral("shape")), nullptr);
  auto* toggle = page_.findChild<QCheckBox*>(QStringLiteral("showConstants"));
  ASSERT_NE(toggle, nullptr);
  EXPECT_TRUE(toggle->isVisible());
  EXPECT_EQ(toggle->text(), QStringLiteral("Constant nodes (1)"));

  QSignalSpy laid_out(&page_, &GraphPage::laidOut);
  toggle->click();
  ASSERT_TRUE(laid_out.wait(kLayoutTimeoutMs));
  EXPECT_EQ(page_.nodeCount(), 3);
  ASSERT_NE(page_.itemFor(QStringLiteral("shape")), nullptr);
  EXPECT_LT(page_.itemFor(QStringLiteral("shape"))->y(), page_.itemFor(QStringLiteral("reshape"))->y());

  // A model without Constant nodes does not offer the box.
  LayOutAndPaint(page_, SyntheticModel(5));
  EXPECT_FALSE(toggle->isVisible());
}

TEST_F(GraphPageTest, ZoomButtonsAndFitChangeTheScale) {
  LayOutAndPaint(page_, SyntheticModel(200));
  const double before = page_.view()->transform().m11();
  page_.zoomBy(1.25);
  EXPECT_NEAR(page_.view()->transform().m11(), before * 1.25, 1e-9);
  // Ctrl+wheel zooms; a plain wheel scrolls and leaves the scale alone.
  QWidget* viewport = page_.view()->viewport();
  const QPointF at = viewport->rect().center();
  QWheelEvent zoom_in(at, viewport->mapToGlobal(at), {}, QPoint(0, 120), Qt::NoButton, Qt::ControlModifier,
                      Qt::NoScrollPhase, false);
  QCoreApplication::sendEvent(viewport, &zoom_in);
  EXPECT_NEAR(page_.view()->transform().m11(), before * 1.25 * 1.25, 1e-9);
  QWheelEvent scroll(at, viewport->mapToGlobal(at), {}, QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                     Qt::NoScrollPhase, false);
  QCoreApplication::sendEvent(viewport, &scroll);
  EXPECT_NEAR(page_.view()->transform().m11(), before * 1.25 * 1.25, 1e-9);
  // Fit on a graph too long to read whole: see FitOnALongGraphFitsItsWidthAndKeepsTheOpsReadable. A short one
  // shows whole.
  LayOutAndPaint(page_, SyntheticModel(8));
  page_.fitToView();
  const QRectF shown = page_.view()->mapToScene(page_.view()->viewport()->rect()).boundingRect();
  EXPECT_TRUE(shown.adjusted(-2, -2, 2, 2).contains(page_.view()->sceneRect())) << "Fit shows the whole graph";
  EXPECT_LE(page_.view()->transform().m11(), 1.0) << "and does not blow a few nodes up";
}

// The visible part of the scene.
QRectF Shown(const GraphPage& page) { return page.view()->mapToScene(page.view()->viewport()->rect()).boundingRect(); }

// Whether the view draws text inside `item`'s box: pixels far darker than any fill or outline there.
bool ShowsTextIn(const GraphPage& page, const QGraphicsItem* item) {
  const QImage image = page.view()->viewport()->grab().toImage();
  const double ratio = image.devicePixelRatio();
  const QRect box = page.view()->mapFromScene(item->sceneBoundingRect()).boundingRect();
  const QRect inner = box.adjusted(box.width() / 6, box.height() / 5, -box.width() / 6, -box.height() / 5);
  for (int y = inner.top(); y <= inner.bottom(); ++y) {
    for (int x = inner.left(); x <= inner.right(); ++x) {
      const QPoint pixel(static_cast<int>(x * ratio), static_cast<int>(y * ratio));
      if (image.rect().contains(pixel) && image.pixelColor(pixel).lightness() < 110) return true;
    }
  }
  return false;
}

TEST_F(GraphPageTest, FitOnALongGraphFitsItsWidthAndKeepsTheOpsReadable) {
  LayOutAndPaint(page_, SyntheticModel(400));
  page_.zoomBy(0.5);
  page_.fitToView();
  const double scale = page_.view()->transform().m11();
  std::cout << "[ graph    ] 400 synthetic nodes: Fit at " << std::lround(scale * 100) << " %\n";
  EXPECT_GE(GraphNodeItem::labelLinesAt(scale), 1) << "Fit at " << scale << " still names the ops";
  EXPECT_EQ(GraphNodeItem::labelLinesAt(scale), 2) << "a narrow graph: op and name both show";
  const QRectF scene = page_.view()->sceneRect();
  const QRectF shown = Shown(page_);
  EXPECT_LE(shown.left(), scene.left() + 2) << "the graph's whole width shows";
  EXPECT_GE(shown.right(), scene.right() - 2);
  GraphNodeItem* first = page_.itemFor(QStringLiteral("node_0"));
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(shown.contains(first->sceneBoundingRect())) << "Fit starts at the inputs' end";
  EXPECT_TRUE(ShowsTextIn(page_, first));

  // With a node selected, Fit keeps it in sight.
  selection_.select({QStringLiteral("node_300")});
  page_.fitToView();
  EXPECT_TRUE(Shown(page_).contains(page_.itemFor(QStringLiteral("node_300"))->scenePos()));
}

TEST_F(GraphPageTest, ZoomedOutNodesKeepTheirOpAndATooltip) {
  LayOutAndPaint(page_, SyntheticModel(60));
  EXPECT_EQ(GraphNodeItem::labelLinesAt(1.0), 2) << "op and name at 100 %";
  EXPECT_GE(GraphNodeItem::labelLinesAt(0.2), 1) << "the op down to 20 %";
  EXPECT_EQ(GraphNodeItem::labelLinesAt(0.1), 0) << "coloured boxes only far out";
  GraphNodeItem* item = page_.itemFor(QStringLiteral("node_30"));
  ASSERT_NE(item, nullptr);
  page_.zoomBy(0.2 / page_.view()->transform().m11());
  ASSERT_NEAR(page_.view()->transform().m11(), 0.2, 1e-9);
  page_.view()->centerOn(item);
  EXPECT_TRUE(ShowsTextIn(page_, item)) << "at 20 % the box still shows its op";

  // Hovering names the node at any zoom.
  QWidget* viewport = page_.view()->viewport();
  const QPoint at = page_.view()->mapFromScene(item->scenePos());
  QHelpEvent help(QEvent::ToolTip, at, viewport->mapToGlobal(at));
  QCoreApplication::sendEvent(viewport, &help);
  EXPECT_TRUE(QToolTip::isVisible());
  EXPECT_TRUE(QToolTip::text().contains(QStringLiteral("node_30"))) << QToolTip::text().toStdString();
  QToolTip::hideText();
}

TEST_F(GraphPageTest, SearchCountsItsMatchesAndStepsThroughThem) {
  LayOutAndPaint(page_, SyntheticModel(60));
  EXPECT_EQ(page_.searchCountText(), QString());
  QTest::keyClicks(page_.searchEdit(), QStringLiteral("relu"));  // node_1, node_4, … node_58: 20
  EXPECT_EQ(page_.searchCountText(), QStringLiteral("1 of 20 matches"));
  // Every match is marked, not only the current one.
  EXPECT_TRUE(page_.itemFor(QStringLiteral("node_58"))->isMatched());
  EXPECT_FALSE(page_.itemFor(QStringLiteral("node_2"))->isMatched());
  EXPECT_EQ(selection_.current(), QStringLiteral("node_1"));
  QTest::keyClick(page_.searchEdit(), Qt::Key_Return);
  EXPECT_EQ(page_.searchCountText(), QStringLiteral("2 of 20 matches"));
  EXPECT_EQ(selection_.current(), QStringLiteral("node_4"));
  QTest::keyClick(page_.searchEdit(), Qt::Key_Return, Qt::ShiftModifier);
  EXPECT_EQ(selection_.current(), QStringLiteral("node_1"));
  QTest::keyClick(page_.searchEdit(), Qt::Key_Return, Qt::ShiftModifier);
  EXPECT_EQ(page_.searchCountText(), QStringLiteral("20 of 20 matches")) << "Shift+Enter wraps to the last";
  EXPECT_EQ(selection_.current(), QStringLiteral("node_58"));
  const QPoint centre = page_.view()->mapFromScene(page_.itemFor(QStringLiteral("node_58"))->scenePos());
  EXPECT_TRUE(page_.view()->viewport()->rect().contains(centre)) << "the match is scrolled into view";
  page_.searchEdit()->clear();
  EXPECT_EQ(page_.searchCountText(), QString());
  EXPECT_FALSE(page_.itemFor(QStringLiteral("node_58"))->isMatched()) << "a cleared search marks nothing";
  QTest::keyClicks(page_.searchEdit(), QStringLiteral("node_59"));
  EXPECT_EQ(page_.searchCountText(), QStringLiteral("1 of 1 match"));
  QTest::keyClicks(page_.searchEdit(), QStringLiteral("x"));
  EXPECT_EQ(page_.searchCountText(), QStringLiteral("no match"));
}

TEST_F(GraphPageTest, LeftToRightPutsEverySuccessorToTheRight) {
  LayOutAndPaint(page_, SyntheticModel(30));
  EXPECT_EQ(page_.direction(), GraphDirection::kTopToBottom);
  QSignalSpy laid_out(&page_, &GraphPage::laidOut);
  auto* combo = page_.findChild<QComboBox*>(QStringLiteral("graphDirection"));
  ASSERT_NE(combo, nullptr);
  combo->setCurrentIndex(1);
  ASSERT_TRUE(laid_out.wait(kLayoutTimeoutMs));
  EXPECT_EQ(page_.direction(), GraphDirection::kLeftToRight);
  for (int i = 0; i + 1 < 30; ++i) {
    const GraphNodeItem* from = page_.itemFor(QString::fromStdString("node_" + std::to_string(i)));
    const GraphNodeItem* to = page_.itemFor(QString::fromStdString("node_" + std::to_string(i + 1)));
    ASSERT_TRUE(from != nullptr && to != nullptr);
    EXPECT_LT(from->x(), to->x()) << "node_" << i << " → node_" << i + 1;
  }
  EXPECT_GT(page_.view()->sceneRect().width(), page_.view()->sceneRect().height()) << "a wide graph now";
  EXPECT_TRUE(Shown(page_).contains(page_.itemFor(QStringLiteral("node_0"))->sceneBoundingRect()))
      << "opens at the inputs, on the left";
  // Fit on a long left-to-right graph fits its height.
  page_.fitToView();
  const QRectF shown = Shown(page_);
  EXPECT_LE(shown.top(), page_.view()->sceneRect().top() + 2);
  EXPECT_GE(shown.bottom(), page_.view()->sceneRect().bottom() - 2);
}

TEST_F(GraphPageTest, TheOverviewShowsWhereTheViewIsAndMovesIt) {
  LayOutAndPaint(page_, SyntheticModel(300));
  GraphOverview* overview = page_.overview();
  ASSERT_NE(overview, nullptr);
  QTest::qWait(50);
  EXPECT_TRUE(overview->isVisible()) << "the graph does not fit: the overview shows";
  EXPECT_TRUE(page_.view()->rect().contains(overview->geometry())) << "in a corner of the view";
  EXPECT_GT(overview->height(), overview->width()) << "a tall graph, a tall overview";
  const QRect fitted = overview->mapFromScene(page_.view()->sceneRect()).boundingRect();
  EXPECT_GE(fitted.height(), overview->viewport()->height() - 8) << "the graph fills the overview's length";
  const auto near = [](const QRectF& a, const QRectF& b) {
    return std::abs(a.top() - b.top()) < 2 && std::abs(a.bottom() - b.bottom()) < 2;
  };
  EXPECT_TRUE(near(overview->shownRect(), Shown(page_).intersected(page_.view()->sceneRect())));
  const QRectF before = overview->shownRect();

  // Scrolling the main view moves the rectangle.
  QScrollBar* bar = page_.view()->verticalScrollBar();
  bar->setValue(bar->maximum());
  QTest::qWait(50);
  EXPECT_GT(overview->shownRect().top(), before.top() + 1000);
  EXPECT_NEAR(overview->shownRect().bottom(), page_.view()->sceneRect().bottom(), 2);
  EXPECT_TRUE(near(overview->shownRect(), Shown(page_).intersected(page_.view()->sceneRect())));

  // A click in the overview centres the main view there.
  const QPointF target = page_.itemFor(QStringLiteral("node_150"))->scenePos();
  QTest::mouseClick(overview->viewport(), Qt::LeftButton, {}, overview->mapFromScene(target));
  QTest::qWait(50);
  EXPECT_LT(std::abs(Shown(page_).center().y() - target.y()), 60);
  EXPECT_TRUE(near(overview->shownRect(), Shown(page_).intersected(page_.view()->sceneRect())));

  // A graph that fits whole needs no overview.
  LayOutAndPaint(page_, SyntheticModel(4));
  QTest::qWait(50);
  EXPECT_FALSE(overview->isVisible());
}

std::shared_ptr<const TargetResult> MakeTarget(const char* name, const char* status, std::vector<LayerResult> layers) {
  auto target = std::make_shared<TargetResult>();
  auto parsed = ParseTarget(name);
  EXPECT_TRUE(parsed.ok()) << name;
  if (parsed.ok()) target->target = *parsed;
  target->status = status;
  target->layers = std::move(layers);
  return target;
}

LayerResult Layer(std::vector<std::string> nodes, double ms, double sqnr_db, const char* bound) {
  LayerResult layer;
  layer.name = nodes.front();
  layer.onnx_nodes = std::move(nodes);
  layer.time_p50_ms = ms;
  layer.drift = DriftStats{.cosine = 1, .nmse = 0, .sqnr_db = sqnr_db, .max_abs = 0};
  layer.bound = bound;
  return layer;
}

TEST_F(GraphPageTest, ColoursNodesByTheChosenTargetsProfile) {
  auto analysis = std::make_shared<ModelAnalysis>();
  analysis->nodes = {Row("conv", "Conv", {"x"}, {"c"}), Row("bias", "Add", {"c"}, {"b"}),
                     Row("act", "Relu", {"b"}, {"a"}), Row("head", "Softmax", {"a"}, {"y"})};
  LayOutAndPaint(page_, analysis);
  auto run = std::make_shared<RunResult>();
  // conv alone 3 ms; bias+act fused in one 2 ms kernel (2 ms on each: the kernel's whole time); head
  // not run on this target.
  run->targets = {MakeTarget("cpu:fp32", "ok",
                             {Layer({"conv"}, 3.0, 20.0, "compute"), Layer({"bias", "act"}, 2.0, 80.0, "memory")}),
                  MakeTarget("cpu:int8", "failed", {}), MakeTarget("cpu:bf16", "ok", {Layer({"head"}, 1.0, 50, "")})};
  page_.setRun(run);
  auto* targets = page_.findChild<QComboBox*>(QStringLiteral("graphTarget"));
  ASSERT_NE(targets, nullptr);
  ASSERT_EQ(targets->count(), 2) << "only targets that finished";
  EXPECT_EQ(page_.currentTarget(), QStringLiteral("cpu:fp32"));

  const auto fill = [&](const char* node) { return page_.itemFor(QString::fromLatin1(node))->fill(); };
  EXPECT_EQ(fill("conv"), QColor(0xb0, 0x10, 0x10)) << "the largest share is the darkest";
  EXPECT_EQ(fill("bias"), fill("act")) << "a fused kernel's nodes take its colour";
  ASSERT_EQ(page_.clusters().size(), 1U) << "one fused kernel, one cluster";
  EXPECT_EQ(page_.clusters().front()->nodes(), QStringList({QStringLiteral("bias"), QStringLiteral("act")}));
  EXPECT_EQ(page_.clusters().front()->fill(), fill("bias"));
  EXPECT_GT(fill("bias").lightness(), fill("conv").lightness());
  EXPECT_EQ(fill("head"), QColor(0xc4, 0xc4, 0xc4)) << "not profiled on cpu:fp32: grey";
  const QString tip = page_.itemFor(QStringLiteral("bias"))->toolTip();
  EXPECT_TRUE(tip.contains(QStringLiteral("time p50 2 ms (40.0 % of cpu:fp32)"))) << tip.toStdString();
  EXPECT_TRUE(tip.contains(QStringLiteral("shared by 2 nodes"))) << tip.toStdString();
  EXPECT_TRUE(tip.contains(QStringLiteral("drift 80.0 dB SQNR"))) << tip.toStdString();
  EXPECT_TRUE(tip.contains(QStringLiteral("bound: memory"))) << tip.toStdString();
  EXPECT_TRUE(page_.itemFor(QStringLiteral("head"))->toolTip().contains(QStringLiteral("not profiled on cpu:fp32")));
  EXPECT_TRUE(page_.legendText().contains(QStringLiteral("60.0 %"))) << page_.legendText().toStdString();

  page_.setColourMode(GraphPage::ColourMode::kDrift);
  EXPECT_EQ(fill("conv"), QColor(0xe5, 0x39, 0x35)) << "20 dB is below 30 dB: red";
  EXPECT_EQ(fill("act"), QColor(0x8b, 0xc8, 0x7a)) << "80 dB: green";
  page_.setColourMode(GraphPage::ColourMode::kBound);
  EXPECT_NE(fill("conv"), fill("act")) << "compute and memory bound differ";

  page_.setCurrentTarget(QStringLiteral("cpu:bf16"));
  page_.setColourMode(GraphPage::ColourMode::kTimeShare);
  EXPECT_EQ(fill("head"), QColor(0xb0, 0x10, 0x10));
  EXPECT_EQ(fill("conv"), QColor(0xc4, 0xc4, 0xc4));
  EXPECT_TRUE(page_.clusters().empty()) << "cpu:bf16 fused nothing";

  // A newer run keeps the chosen target when it has it.
  page_.setRun(run);
  EXPECT_EQ(page_.currentTarget(), QStringLiteral("cpu:bf16"));
}

TEST_F(GraphPageTest, AFusedGroupCollapsesToOneBoxAndExpandsBack) {
  auto analysis = std::make_shared<ModelAnalysis>();
  analysis->nodes = {Row("conv", "Conv", {"x"}, {"c"}), Row("bias", "Add", {"c"}, {"b"}),
                     Row("act", "Relu", {"b"}, {"a"}), Row("head", "Softmax", {"a"}, {"y"})};
  LayOutAndPaint(page_, analysis);
  auto run = std::make_shared<RunResult>();
  LayerResult fused = Layer({"bias", "act"}, 2.0, 80.0, "memory");
  fused.op = "FusedAddRelu";
  run->targets = {MakeTarget("cpu:fp32", "ok", {Layer({"conv"}, 3.0, 20.0, "compute"), fused})};
  page_.setRun(run);
  ASSERT_EQ(page_.clusters().size(), 1U);
  GraphClusterItem* group = page_.clusters().front();
  EXPECT_EQ(page_.clusterOf(QStringLiteral("act")), group);
  EXPECT_EQ(page_.clusterOf(QStringLiteral("conv")), nullptr);
  EXPECT_FALSE(group->isCollapsed());
  GraphNodeItem* bias = page_.itemFor(QStringLiteral("bias"));
  GraphNodeItem* act = page_.itemFor(QStringLiteral("act"));
  QGraphicsView* view = page_.view();
  const auto visible_nodes_at = [&](QPointF scene_point) {
    int count = 0;
    for (QGraphicsItem* item : view->items(view->mapFromScene(scene_point))) {
      count += item->type() == GraphNodeItem::Type && item->isVisible() ? 1 : 0;
    }
    return count;
  };

  // A double-click on a member collapses the group: its nodes hide behind one box in the kernel's colour.
  QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, view->mapFromScene(bias->scenePos()));
  EXPECT_TRUE(group->isCollapsed());
  EXPECT_FALSE(bias->isVisible());
  EXPECT_FALSE(act->isVisible());
  EXPECT_TRUE(page_.itemFor(QStringLiteral("conv"))->isVisible());
  EXPECT_EQ(visible_nodes_at(bias->scenePos()), 0);
  EXPECT_EQ(group->title(), QStringLiteral("FusedAddRelu"));
  QTest::qWait(20);
  const QImage image = view->viewport()->grab().toImage();
  const QPoint middle = view->mapFromScene(group->sceneBoundingRect().center() + QPointF(60, 0));
  const QColor shown = image.pixelColor(middle * image.devicePixelRatio());
  const QColor fill = group->fill();
  EXPECT_LE(std::abs(shown.red() - fill.red()) + std::abs(shown.green() - fill.green()) +
                std::abs(shown.blue() - fill.blue()),
            6)
      << "one opaque box in the kernel's colour: " << shown.name().toStdString() << " vs " << fill.name().toStdString();
  EXPECT_TRUE(ShowsTextIn(page_, group)) << "labelled with its kernel and time";

  // Selecting a hidden node elsewhere marks the box.
  QObject table;
  selection_.select({QStringLiteral("act")}, &table);
  EXPECT_TRUE(group->isHighlighted());

  // A double-click on the box expands it again.
  QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, view->mapFromScene(act->scenePos()));
  EXPECT_FALSE(group->isCollapsed());
  EXPECT_TRUE(bias->isVisible());
  EXPECT_EQ(visible_nodes_at(bias->scenePos()), 1);

  // "Collapse fused groups" collapses every group, and survives a change of colouring.
  auto* all = page_.findChild<QCheckBox*>(QStringLiteral("collapseGroups"));
  ASSERT_NE(all, nullptr);
  EXPECT_TRUE(all->isEnabled());
  all->click();
  EXPECT_TRUE(page_.collapsesAllGroups());
  EXPECT_TRUE(group->isCollapsed());
  page_.setColourMode(GraphPage::ColourMode::kDrift);
  ASSERT_EQ(page_.clusters().size(), 1U);
  group = page_.clusters().front();
  EXPECT_TRUE(group->isCollapsed());
  EXPECT_FALSE(act->isVisible());

  // The context menu on the box offers to expand it.
  QMenu menu;
  page_.fillContextMenu(&menu, view->mapFromScene(act->scenePos()));
  auto* toggle = menu.findChild<QAction*>(QStringLiteral("toggleGroup"));
  ASSERT_NE(toggle, nullptr);
  EXPECT_TRUE(toggle->text().startsWith(QStringLiteral("Expand"))) << toggle->text().toStdString();
  toggle->trigger();
  EXPECT_FALSE(page_.clusters().front()->isCollapsed());
  EXPECT_TRUE(act->isVisible());
  all->click();
  EXPECT_FALSE(page_.collapsesAllGroups());
}

TEST_F(GraphPageTest, ScreenshotShowsTheColouredGraph) {
  LayOutAndPaint(page_, SyntheticModel(40));
  auto run = std::make_shared<RunResult>();
  std::vector<LayerResult> layers;
  for (int i = 0; i < 40; i += 2) layers.push_back(Layer({"node_" + std::to_string(i)}, 0.1 * (i + 1), 40, "memory"));
  run->targets = {MakeTarget("cpu:fp32", "ok", std::move(layers))};
  page_.setRun(run);
  selection_.select({QStringLiteral("node_6")});
  QTest::qWait(50);  // the legend's new text re-lays the page out through a posted event
  const QImage image = page_.grab().toImage();
  const QString path = QDir::current().filePath(QStringLiteral("graph_page.png"));
  ASSERT_TRUE(image.save(path)) << path.toStdString();
  std::cout << "[ graph    ] screenshot " << path.toStdString() << "\n";
  QSet<QRgb> colours;
  for (int y = 0; y < image.height() && colours.size() < 16; y += 3) {
    for (int x = 0; x < image.width(); x += 3) colours.insert(image.pixel(x, y));
  }
  EXPECT_GT(colours.size(), 1) << "not blank";
}

std::filesystem::path CachedModel(const char* name) {
  const char* cache = std::getenv("CHIPFIT_MODEL_CACHE");
  return std::filesystem::path(cache != nullptr ? cache : CHIPFIT_SOURCE_DIR "/.cache/models") / name;
}

TEST_F(GraphPageTest, LaysOutTheRealTextDetector) {
  const std::filesystem::path path = CachedModel("ppocrv4_det.onnx");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path << " (scripts/fetch-models.sh fetches it)";
  auto analysis = AnalyzeModel(path, {"x=1x3x640x640"}, {});
  ASSERT_TRUE(analysis.ok()) << analysis.status().message();
  const auto all = static_cast<int>(analysis->nodes.size());
  const auto constants = static_cast<int>(
      std::ranges::count_if(analysis->nodes, [](const NodeRow& node) { return node.op == "Constant"; }));
  auto shared = std::make_shared<const ModelAnalysis>(std::move(*analysis));
  const auto [layout_ms, first_paint_ms] = LayOutAndPaint(page_, shared);
  std::cout << "[ graph    ] ppocrv4_det (" << all - constants << " nodes without its " << constants
            << " Constant nodes): layout " << layout_ms << " ms, first paint " << first_paint_ms << " ms\n";
  ASSERT_TRUE(page_.isLaidOut());
  EXPECT_EQ(page_.nodeCount(), all - constants);
  EXPECT_GE(first_paint_ms, 0);
  EXPECT_TRUE(ShowsANode(page_)) << "opens on nodes, not on empty canvas";
  // Fit leaves det readable: its whole width at a scale where the ops are named, from its input on.
  page_.grab().save(QDir::current().filePath(QStringLiteral("graph_page_ppocrv4_det_open.png")));
  page_.fitToView();
  const double fit = page_.view()->transform().m11();
  std::cout << "[ graph    ] ppocrv4_det: Fit at " << std::lround(fit * 100) << " %\n";
  EXPECT_GE(GraphNodeItem::labelLinesAt(fit), 1) << fit;
  const QRectF scene = page_.view()->sceneRect();
  EXPECT_LE(Shown(page_).left(), scene.left() + 2) << "the whole width";
  EXPECT_GE(Shown(page_).right(), scene.right() - 2);
  EXPECT_LE(Shown(page_).top(), scene.top() + 2) << "from the input on";
  EXPECT_TRUE(ShowsANode(page_));
  page_.grab().save(QDir::current().filePath(QStringLiteral("graph_page_ppocrv4_det_fit.png")));

  QSignalSpy laid_out(&page_, &GraphPage::laidOut);
  page_.setShowConstants(true);
  ASSERT_TRUE(laid_out.wait(kLayoutTimeoutMs)) << page_.statusText().toStdString();
  std::cout << "[ graph    ] ppocrv4_det (all " << all << " nodes): layout " << laid_out.first().at(0).toLongLong()
            << " ms, first paint " << laid_out.first().at(1).toLongLong() << " ms\n";
  EXPECT_EQ(page_.nodeCount(), all);
  page_.grab().save(QDir::current().filePath(QStringLiteral("graph_page_ppocrv4_det.png")));
}

}  // namespace
}  // namespace chipfit
