// The Graph page's scene items: node boxes, routed edges and fused-kernel groups, drawn by level of detail.
#pragma once

#include <QColor>
#include <QGraphicsItem>
#include <QPainterPath>
#include <QPolygonF>
#include <QString>
#include <QStringList>

#include "views/models/graph_layout.h"

namespace chipfit {

// A box's text, sized from the zoom so that its first line stays readable on screen when zoomed out,
// and elided to the box; the elided texts are cached per font size, so a scroll does not measure again.
class BoxLabel {
 public:
  // Below this view scale a box is a coloured rectangle without text (tooltips still name it).
  static constexpr double kBoxesOnlyScale = 0.15;

  // How many lines a box `box_height` points tall shows at view scale `scale`: 2, 1 (the bold first
  // line only) or 0.
  static int LinesAt(double scale, double box_height);

  void Paint(QPainter* painter, const QRectF& box, double scale, const QColor& fill, const QString& first,
             const QString& second);

 private:
  int first_px_ = -1;  // the font sizes, in scene units, the elided texts below were made for
  int second_px_ = -1;
  double width_ = -1;
  QString first_;
  QString second_;
};

// One node: a rounded box with its op and (elided) name. Light on purpose: a tight boundingRect() so
// the scene's BSP index hands the view only what is visible, no shadow, text cached after first use.
class GraphNodeItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 1 };

  GraphNodeItem(int index, const LaidOutNode& node, const QColor& fill);

  int type() const override { return Type; }
  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  int index() const { return index_; }
  const QString& name() const { return name_; }
  const QString& op() const { return op_; }
  QColor fill() const { return fill_; }
  void setFill(const QColor& fill);
  bool isHighlighted() const { return highlighted_; }
  void setHighlighted(bool highlighted);
  // One of the search's matches: outlined in amber, so every match shows, not only the current one.
  bool isMatched() const { return matched_; }
  void setMatched(bool matched);
  // How many text lines (op, then name) the box shows at a view scale; for the page's Fit and tests.
  static int labelLinesAt(double scale);

 private:
  int index_;
  QString name_;
  QString op_;
  QRectF box_;  // centred on the item's position
  QColor fill_;
  bool highlighted_ = false;
  bool matched_ = false;
  BoxLabel label_;
};

// One edge: its path built once from Graphviz's Bézier points, with the arrow head.
class GraphEdgeItem : public QGraphicsItem {
 public:
  explicit GraphEdgeItem(const LaidOutEdge& edge);

  QRectF boundingRect() const override { return bounds_; }
  // Edges never catch a click or a hover meant for the node under them.
  QPainterPath shape() const override { return {}; }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  int from() const { return from_; }  // index into the layout's nodes
  int to() const { return to_; }

 private:
  int from_;
  int to_;
  QPainterPath path_;
  QPolygonF arrow_;
  QRectF bounds_;
};

// A fused kernel's nodes drawn as one group: a dashed box behind them in the kernel's colour or,
// collapsed, one opaque box over them that names the kernel and its time (the page hides the members).
class GraphClusterItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 2 };

  // `kernel` is the key of the kernel's layer (the node it computes); `title` and `time` label it.
  GraphClusterItem(const QRectF& rect, const QColor& fill, QStringList nodes, QString kernel = {}, QString title = {},
                   QString time = {});

  int type() const override { return Type; }
  QRectF boundingRect() const override;
  QPainterPath shape() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  const QStringList& nodes() const { return nodes_; }
  QColor fill() const { return fill_; }
  const QString& kernel() const { return kernel_; }
  const QString& title() const { return title_; }
  bool isCollapsed() const { return collapsed_; }
  void setCollapsed(bool collapsed);
  bool isHighlighted() const { return highlighted_; }
  void setHighlighted(bool highlighted);

 private:
  QRectF rect_;
  QColor fill_;
  QStringList nodes_;
  QString kernel_;
  QString title_;
  QString time_;
  bool collapsed_ = false;
  bool highlighted_ = false;
  BoxLabel label_;
};

}  // namespace chipfit
