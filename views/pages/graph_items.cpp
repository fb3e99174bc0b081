// Graph items: box labels sized by level of detail, node boxes, edge paths and fused-kernel groups.
#include "views/pages/graph_items.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace chipfit {
namespace {

constexpr double kHighlightPen = 4.0;  // points; the box's bounds make room for it whether drawn or not
constexpr double kCornerRadius = 5.0;
constexpr double kNodeHeight = GraphLayoutOptions{}.node_height;

// Text sizes in pixels: at 100 % and above the text scales with the graph; zoomed out, the first line
// keeps kMinFirstScreenPx on screen (about 7 px capitals) and the second line goes once it no longer fits.
constexpr double kFirstPx = 12;
constexpr double kSecondPx = 11;
constexpr double kMinFirstScreenPx = 10;
constexpr double kMinSecondScreenPx = 7;
// The first line may spill a little past a short box rather than shrink below readable: a rank gap
// lies above and below each box.
constexpr double kFirstLineSpill = 1.2;
constexpr double kPaddingX = 6;
constexpr double kPaddingY = 3;

QFont LabelFont(int pixels, bool bold) {
  QFont font = QApplication::font();
  font.setPixelSize(std::max(1, pixels));
  font.setBold(bold);
  return font;
}

struct LabelSizes {
  int first_px = 0;  // scene units; 0: no such line
  int second_px = 0;
};

LabelSizes SizesAt(double scale, double box_height) {
  if (!(scale >= BoxLabel::kBoxesOnlyScale)) return {};
  const double inner = box_height - 2 * kPaddingY;
  const double first = std::min(std::max(kFirstPx, kMinFirstScreenPx / scale), box_height * kFirstLineSpill);
  const double second = std::max(kSecondPx, kMinSecondScreenPx / scale);
  return {.first_px = static_cast<int>(std::lround(first)),
          .second_px = first + second <= inner + 0.5 ? static_cast<int>(std::lround(second)) : 0};
}

// Shorter names of ops whose full name does not fit a zoomed-out box; tried in order before eliding.
QStringList Candidates(const QString& op) {
  static const std::array<std::pair<const char*, QStringList>, 6> kShort = {{
      {"BatchNormalization", {QStringLiteral("BatchNorm"), QStringLiteral("BN")}},
      {"GlobalAveragePool", {QStringLiteral("GlobalAvgPool"), QStringLiteral("GAP")}},
      {"ConvTranspose", {QStringLiteral("ConvT")}},
      {"HardSigmoid", {QStringLiteral("HardSig")}},
      {"HardSwish", {QStringLiteral("HSwish")}},
      {"LayerNormalization", {QStringLiteral("LayerNorm"), QStringLiteral("LN")}},
  }};
  QStringList candidates{op};
  for (const auto& [name, shorter] : kShort) {
    if (op == QLatin1String(name)) candidates += shorter;
  }
  return candidates;
}

QString FitFirstLine(const QString& text, const QFontMetricsF& metrics, double width) {
  const QStringList candidates = Candidates(text);
  for (const QString& candidate : candidates) {
    if (metrics.horizontalAdvance(candidate) <= width) return candidate;
  }
  return metrics.elidedText(candidates.back(), Qt::ElideRight, width);
}

QColor TextColour(const QColor& fill) { return fill.lightnessF() < 0.45 ? Qt::white : QColor(0x1a, 0x1a, 0x1a); }

}  // namespace

int BoxLabel::LinesAt(double scale, double box_height) {
  const LabelSizes sizes = SizesAt(scale, box_height);
  return sizes.first_px == 0 ? 0 : (sizes.second_px == 0 ? 1 : 2);
}

void BoxLabel::Paint(QPainter* painter, const QRectF& box, double scale, const QColor& fill, const QString& first,
                     const QString& second) {
  const LabelSizes sizes = SizesAt(scale, box.height());
  if (sizes.first_px == 0) return;
  const QRectF inner = box.adjusted(kPaddingX, kPaddingY, -kPaddingX, -kPaddingY);
  const QFont first_font = LabelFont(sizes.first_px, true);
  const QFont second_font = LabelFont(sizes.second_px, false);
  if (sizes.first_px != first_px_ || sizes.second_px != second_px_ || inner.width() != width_) {
    first_ = FitFirstLine(first, QFontMetricsF(first_font), inner.width());
    second_ = sizes.second_px == 0 ? QString()
                                   : QFontMetricsF(second_font).elidedText(second, Qt::ElideMiddle, inner.width());
    first_px_ = sizes.first_px;
    second_px_ = sizes.second_px;
    width_ = inner.width();
  }
  painter->setPen(TextColour(fill));
  painter->setFont(first_font);
  if (sizes.second_px == 0) {
    // One line centred on the box, allowed past its top and bottom (see kFirstLineSpill).
    const QRectF line(inner.left(), box.center().y() - sizes.first_px, inner.width(), 2.0 * sizes.first_px);
    painter->drawText(line, Qt::AlignCenter | Qt::TextDontClip, first_);
    return;
  }
  // Two lines, centred together; in a tall box (a collapsed group) they stay a block in the middle.
  const double block = std::min(inner.height(), 1.25 * (sizes.first_px + sizes.second_px));
  const double top = inner.center().y() - block / 2;
  const double split = block * sizes.first_px / (sizes.first_px + sizes.second_px);
  painter->drawText(QRectF(inner.left(), top, inner.width(), split), Qt::AlignCenter | Qt::TextDontClip, first_);
  painter->setFont(second_font);
  painter->drawText(QRectF(inner.left(), top + split, inner.width(), block - split), Qt::AlignCenter | Qt::TextDontClip,
                    second_);
}

GraphNodeItem::GraphNodeItem(int index, const LaidOutNode& node, const QColor& fill)
    : index_(index),
      name_(node.name),
      op_(node.op),
      box_(-node.width / 2, -node.height / 2, node.width, node.height),
      fill_(fill) {
  setPos(node.centre);
  setZValue(1);
}

int GraphNodeItem::labelLinesAt(double scale) { return BoxLabel::LinesAt(scale, kNodeHeight); }

QRectF GraphNodeItem::boundingRect() const {
  const double margin = kHighlightPen / 2 + 0.5;
  // Zoomed out, the op may spill past the box's top and bottom (kFirstLineSpill).
  const double spill = box_.height() * (kFirstLineSpill - 1) / 2 + 1;
  return box_.adjusted(-margin, -margin - spill, margin, margin + spill);
}

void GraphNodeItem::setFill(const QColor& fill) {
  if (fill == fill_) return;
  fill_ = fill;
  update();
}

void GraphNodeItem::setHighlighted(bool highlighted) {
  if (highlighted == highlighted_) return;
  highlighted_ = highlighted;
  update();
}

void GraphNodeItem::setMatched(bool matched) {
  if (matched == matched_) return;
  matched_ = matched;
  update();
}

void GraphNodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  static const QPen outline(QColor(0x55, 0x5d, 0x68), 1.0);
  static const QPen highlight(QColor(0x10, 0x3c, 0xc8), kHighlightPen);
  static const QPen match(QColor(0xE0, 0x9A, 0x00), kHighlightPen);
  const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
  QPen pen = highlighted_ ? highlight : matched_ ? match : outline;
  // Zoomed far out the highlight must still show: at least 2 screen pixels.
  if ((highlighted_ || matched_) && lod > 0) pen.setWidthF(std::max(kHighlightPen, 2.0 / lod));
  painter->setPen(pen);
  painter->setBrush(fill_);
  if (lod < BoxLabel::kBoxesOnlyScale) {
    painter->drawRect(box_);
    return;
  }
  painter->drawRoundedRect(box_, kCornerRadius, kCornerRadius);
  label_.Paint(painter, box_, lod, fill_, op_, name_);
}

GraphEdgeItem::GraphEdgeItem(const LaidOutEdge& edge) : from_(edge.from), to_(edge.to) {
  const QVector<QPointF>& p = edge.points;
  if (!p.isEmpty()) path_.moveTo(p.front());
  qsizetype i = 1;
  for (; i + 2 < p.size(); i += 3) path_.cubicTo(p[i], p[i + 1], p[i + 2]);
  for (; i < p.size(); ++i) path_.lineTo(p[i]);  // a chain that is not whole Béziers: straight pieces
  if (edge.arrow_tip && !p.isEmpty()) {
    const QPointF base = p.back();
    const QPointF tip = *edge.arrow_tip;
    const QPointF along = tip - base;
    const double length = std::hypot(along.x(), along.y());
    if (length > 0) {
      const QPointF side = QPointF(-along.y(), along.x()) * 0.35;  // a head 0.7 as wide as long
      arrow_ = QPolygonF({tip, base + side, base - side});
    }
  }
  bounds_ = path_.boundingRect().united(arrow_.boundingRect()).adjusted(-2, -2, 2, 2);
  setZValue(0);
  setAcceptedMouseButtons(Qt::NoButton);
}

void GraphEdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  static const QPen pen(QColor(0x70, 0x78, 0x84), 1.2);
  painter->setPen(pen);
  painter->setBrush(Qt::NoBrush);
  painter->drawPath(path_);
  if (!arrow_.isEmpty() && option->levelOfDetailFromTransform(painter->worldTransform()) >= BoxLabel::kBoxesOnlyScale) {
    painter->setBrush(pen.color());
    painter->drawPolygon(arrow_);
  }
}

GraphClusterItem::GraphClusterItem(const QRectF& rect, const QColor& fill, QStringList nodes, QString kernel,
                                   QString title, QString time)
    : rect_(rect),
      fill_(fill),
      nodes_(std::move(nodes)),
      kernel_(std::move(kernel)),
      title_(std::move(title)),
      time_(std::move(time)) {
  setZValue(0.5);  // above the edges, below the node boxes
  setAcceptedMouseButtons(Qt::NoButton);
}

QRectF GraphClusterItem::boundingRect() const {
  const double margin = kHighlightPen / 2 + 1;
  return rect_.adjusted(-margin, -margin, margin, margin);
}

QPainterPath GraphClusterItem::shape() const {
  QPainterPath path;
  path.addRect(rect_);
  return path;
}

void GraphClusterItem::setCollapsed(bool collapsed) {
  if (collapsed == collapsed_) return;
  prepareGeometryChange();
  collapsed_ = collapsed;
  // Collapsed, the group covers its hidden members and the edges between them, and takes clicks.
  setZValue(collapsed ? 2 : 0.5);
  update();
}

void GraphClusterItem::setHighlighted(bool highlighted) {
  if (highlighted == highlighted_) return;
  highlighted_ = highlighted;
  update();
}

void GraphClusterItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
  if (!collapsed_) {
    QColor wash = fill_;
    wash.setAlphaF(0.35F);
    painter->setPen(QPen(fill_.darker(130), 1.5, Qt::DashLine));
    painter->setBrush(wash);
    painter->drawRoundedRect(rect_, kCornerRadius * 2, kCornerRadius * 2);
    return;
  }
  QPen pen(highlighted_ ? QColor(0x10, 0x3c, 0xc8) : fill_.darker(160), highlighted_ ? kHighlightPen : 2.0);
  if (highlighted_ && lod > 0) pen.setWidthF(std::max(kHighlightPen, 2.0 / lod));
  painter->setPen(pen);
  painter->setBrush(fill_);
  painter->drawRoundedRect(rect_, kCornerRadius, kCornerRadius);
  if (lod < BoxLabel::kBoxesOnlyScale) return;
  label_.Paint(painter, rect_, lod, fill_, title_, time_);
}

}  // namespace chipfit
