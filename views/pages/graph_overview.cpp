// GraphOverview: fitting the whole scene, drawing the main view's rectangle, and click or drag to move it.
#include "views/pages/graph_overview.h"

#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <algorithm>
#include <cmath>

namespace chipfit {
namespace {

constexpr int kMinSide = 48;        // pixels: a strip any thinner is hard to hit
constexpr int kMaxWidth = 220;      // pixels: the overview must not hide much of the graph
constexpr double kMaxShare = 0.35;  // of the main viewport's width or height (the long side may take more)
constexpr double kMaxLongShare = 0.9;
const QColor kShownColour(0x10, 0x3c, 0xc8);

}  // namespace

GraphOverview::GraphOverview(QGraphicsView* main, QWidget* parent) : QGraphicsView(main->scene(), parent), main_(main) {
  setObjectName(QStringLiteral("graphOverview"));
  setInteractive(false);  // no tooltips or clicks on the tiny items: a click means "go there"
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setFrameShape(QFrame::Box);
  setLineWidth(1);
  setCursor(Qt::PointingHandCursor);
  // The items draw as plain boxes at this scale; antialiasing would only cost time.
  setRenderHints({});
  setOptimizationFlag(QGraphicsView::DontSavePainterState);
  setViewportUpdateMode(QGraphicsView::FullViewportUpdate);
  setToolTip(tr("Overview: click or drag to move the graph"));
}

QSize GraphOverview::SizeFor(const QRectF& scene, const QSize& available) {
  if (scene.isEmpty() || available.isEmpty()) return {kMinSide, kMinSide};
  const bool tall = scene.height() >= scene.width();
  const double max_w =
      tall ? std::min<double>(kMaxWidth, available.width() * kMaxShare) : available.width() * kMaxLongShare;
  const double max_h = tall ? available.height() * kMaxLongShare : available.height() * kMaxShare;
  const double scale = std::min(max_w / scene.width(), max_h / scene.height());
  const int frame = 2 + 4;  // the box's line, and the margin fitInView() keeps on each side
  return {std::max(kMinSide, static_cast<int>(std::lround(scene.width() * scale)) + frame),
          std::max(kMinSide, static_cast<int>(std::lround(scene.height() * scale)) + frame)};
}

void GraphOverview::refit() {
  if (scene() == nullptr) return;
  fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
  drawn_ = QRectF();
  viewport()->update();
}

QRectF GraphOverview::MainVisibleRect() const {
  return main_->mapToScene(main_->viewport()->rect()).boundingRect().intersected(main_->sceneRect());
}

void GraphOverview::followMainView() {
  if (MainVisibleRect() != drawn_) viewport()->update();
}

void GraphOverview::drawForeground(QPainter* painter, const QRectF&) {
  drawn_ = MainVisibleRect();
  if (drawn_.isEmpty()) return;
  QColor wash = kShownColour;
  wash.setAlphaF(0.12F);
  QPen pen(kShownColour, 2);
  pen.setCosmetic(true);  // two pixels wide whatever the overview's scale
  painter->setPen(pen);
  painter->setBrush(wash);
  painter->drawRect(drawn_);
}

void GraphOverview::MoveMainTo(const QPoint& at) {
  main_->centerOn(mapToScene(at));
  followMainView();
}

void GraphOverview::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QGraphicsView::mousePressEvent(event);
  dragging_ = true;
  MoveMainTo(event->position().toPoint());
  event->accept();
}

void GraphOverview::mouseMoveEvent(QMouseEvent* event) {
  if (!dragging_) return QGraphicsView::mouseMoveEvent(event);
  MoveMainTo(event->position().toPoint());
  event->accept();
}

void GraphOverview::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) dragging_ = false;
  event->accept();
}

void GraphOverview::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  refit();
}

// A wheel over the overview scrolls the main view, as it would a step beside it.
void GraphOverview::wheelEvent(QWheelEvent* event) {
  QScrollBar* bar = std::abs(event->angleDelta().x()) > std::abs(event->angleDelta().y()) ? main_->horizontalScrollBar()
                                                                                          : main_->verticalScrollBar();
  const int delta = std::abs(event->angleDelta().x()) > std::abs(event->angleDelta().y()) ? event->angleDelta().x()
                                                                                          : event->angleDelta().y();
  bar->setValue(bar->value() - delta * bar->singleStep() * 3 / 120);
  followMainView();
  event->accept();
}

}  // namespace chipfit
