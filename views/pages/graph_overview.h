// GraphOverview: a small view of the whole graph scene that marks, and moves, what the main view shows.
#pragma once

#include <QGraphicsView>
#include <QRectF>

namespace chipfit {

// Lives in a corner of the main view and shows the same scene fitted whole, with the main view's
// visible rectangle drawn on top; a click or a drag centres the main view there. It reads the main
// view's visible rectangle when told (followMainView()) and only repaints when that moved.
class GraphOverview : public QGraphicsView {
  Q_OBJECT

 public:
  explicit GraphOverview(QGraphicsView* main, QWidget* parent = nullptr);

  // The scene rectangle of the main view drawn at the last paint; empty before the first.
  QRectF shownRect() const { return drawn_; }
  // Re-reads the main view's visible rectangle; repaints when it moved.
  void followMainView();
  // Fits the whole scene again (after a new layout or a resize) and repaints.
  void refit();
  // The size the overview wants for a scene inside a corner of `available` (the main viewport).
  static QSize SizeFor(const QRectF& scene, const QSize& available);

 protected:
  void drawForeground(QPainter* painter, const QRectF& rect) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;

 private:
  QRectF MainVisibleRect() const;
  void MoveMainTo(const QPoint& at);

  QGraphicsView* main_;
  QRectF drawn_;
  bool dragging_ = false;
};

}  // namespace chipfit
