// GraphPage: pool-thread layout hand-off, the scene's node and edge items, colouring, search, zoom, selection.
#include "views/pages/graph_page.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFontMetricsF>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QStackedWidget>
#include <QStyleOptionGraphicsItem>
#include <QThread>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <utility>

namespace chipfit {
namespace {

constexpr double kHighlightPen = 4.0;  // points; the box's bounds make room for it whether drawn or not
constexpr double kCornerRadius = 5.0;
constexpr double kTextLevelOfDetail = 0.45;   // below this scale the text is unreadable: skip it
constexpr double kPlainLevelOfDetail = 0.15;  // below this scale rounded corners are invisible: skip them
constexpr double kMinScale = 0.02;
constexpr double kOpeningMinScale = 0.8;  // node text stays readable when a graph first opens
constexpr double kMaxScale = 4.0;
constexpr double kZoomStep = 1.25;
constexpr double kDriftRedBelowDb = 30.0;
constexpr double kDriftGreenFromDb = 60.0;
constexpr double kSceneMargin = 24.0;

const QColor kNeutralFill(0xe3, 0xea, 0xf2);     // no run to colour by
const QColor kUnprofiledFill(0xc4, 0xc4, 0xc4);  // the chosen target has no figure for the node
const QColor kMemoryBoundFill(0x64, 0xa7, 0xe8);
const QColor kComputeBoundFill(0xf5, 0xa6, 0x3c);
const QColor kUnknownBoundFill(0xf4, 0xee, 0xc4);
const QColor kTimeLowFill(0xff, 0xf3, 0xe6);
const QColor kTimeMidFill(0xf7, 0x9a, 0x4a);
const QColor kTimeHighFill(0xb0, 0x10, 0x10);
const QColor kDriftBadFill(0xe5, 0x39, 0x35);
const QColor kDriftFairFill(0xf6, 0xd8, 0x4c);
const QColor kDriftGoodFill(0x8b, 0xc8, 0x7a);
const QColor kErrorColor(0xb0, 0x00, 0x20);

QColor Mix(const QColor& a, const QColor& b, double t) {
  t = std::clamp(t, 0.0, 1.0);
  return QColor::fromRgbF(static_cast<float>(a.redF() + (b.redF() - a.redF()) * t),
                          static_cast<float>(a.greenF() + (b.greenF() - a.greenF()) * t),
                          static_cast<float>(a.blueF() + (b.blueF() - a.blueF()) * t));
}

// Pale → orange → dark red over 0..1 of the largest share: the hottest node always reads as hot.
QColor TimeShareFill(double fraction_of_largest) {
  return fraction_of_largest < 0.5 ? Mix(kTimeLowFill, kTimeMidFill, fraction_of_largest * 2)
                                   : Mix(kTimeMidFill, kTimeHighFill, (fraction_of_largest - 0.5) * 2);
}

QColor DriftFill(double sqnr_db) {
  if (sqnr_db < kDriftRedBelowDb) return kDriftBadFill;
  return Mix(kDriftFairFill, kDriftGoodFill, (sqnr_db - kDriftRedBelowDb) / (kDriftGreenFromDb - kDriftRedBelowDb));
}

QColor BoundFill(const QString& bound) {
  if (bound == QLatin1String("memory")) return kMemoryBoundFill;
  if (bound == QLatin1String("compute")) return kComputeBoundFill;
  return kUnknownBoundFill;
}

// A legend entry: `text` on the colour it explains, readable on dark and light fills alike.
QString Swatch(const QColor& fill, const QString& text) {
  return QStringLiteral("<span style=\"background-color:%1; color:%2;\">&nbsp;%3&nbsp;</span>")
      .arg(fill.name(), fill.lightnessF() < 0.45 ? QStringLiteral("#ffffff") : QStringLiteral("#1a1a1a"),
           text.isEmpty() ? QStringLiteral("&nbsp;&nbsp;") : text.toHtmlEscaped());
}

const QFont& OpFont() {
  static const QFont font = [] {
    QFont f = QApplication::font();
    f.setPointSizeF(9);
    f.setBold(true);
    return f;
  }();
  return font;
}

const QFont& NameFont() {
  static const QFont font = [] {
    QFont f = QApplication::font();
    f.setPointSizeF(8);
    return f;
  }();
  return font;
}

// Per ONNX node on one target, from the Layers table's node rows (table target `t`): the whole time,
// drift and bound of the kernel that computes the node.
QHash<QString, GraphNodeMetrics> NodeMetricsOf(const LayerTable& table, int t) {
  QHash<QString, GraphNodeMetrics> metrics;
  for (const LayerRow& row : table.rows) {
    const LayerCell& c = row.cells[static_cast<size_t>(t)];
    if (!c.present) continue;
    GraphNodeMetrics& m = metrics[row.key];
    m.time_ms = std::isfinite(c.p50_ms) ? c.p50_ms : 0;
    if (std::isfinite(c.sqnr_db)) m.sqnr_db = c.sqnr_db;
    m.bound = c.bound;
    m.kernel = c.kernel;
    m.kernel_nodes = c.kernel_nodes;
    m.other_kernels_ms = c.other_kernels_ms;
  }
  return metrics;
}

QString ToolTip(const GraphNodeItem& item, const GraphNodeMetrics* metrics, const QString& target, double total_ms) {
  QString text = QStringLiteral("<b>%1</b><br>%2").arg(item.op().toHtmlEscaped(), item.name().toHtmlEscaped());
  if (target.isEmpty()) return text;
  if (metrics == nullptr) return text + GraphPage::tr("<br>not profiled on %1").arg(target.toHtmlEscaped());
  const double percent = total_ms > 0 ? 100.0 * metrics->time_ms / total_ms : 0.0;
  text += GraphPage::tr("<br>time p50 %1 ms (%2 % of %3)")
              .arg(metrics->time_ms, 0, 'g', 3)
              .arg(percent, 0, 'f', 1)
              .arg(target.toHtmlEscaped());
  if (metrics->kernel_nodes > 1) {
    text += GraphPage::tr("<br>kernel %1, shared by %2 nodes: its whole time")
                .arg(metrics->kernel.toHtmlEscaped())
                .arg(metrics->kernel_nodes);
  }
  if (metrics->other_kernels_ms > 0) {
    text += GraphPage::tr("<br>plus %1 ms in a reorder or copy in front of it (a kernel of its own)")
                .arg(metrics->other_kernels_ms, 0, 'g', 3);
  }
  text += metrics->sqnr_db ? GraphPage::tr("<br>drift %1 dB SQNR").arg(*metrics->sqnr_db, 0, 'f', 1)
                           : GraphPage::tr("<br>no drift measured");
  text += GraphPage::tr("<br>bound: %1")
              .arg(metrics->bound.isEmpty() ? GraphPage::tr("unknown (no ceilings)") : metrics->bound);
  return text;
}

// One edge: its path built once from Graphviz's Bézier points, with the arrow head.
class GraphEdgeItem : public QGraphicsItem {
 public:
  explicit GraphEdgeItem(const LaidOutEdge& edge) {
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

  QRectF boundingRect() const override { return bounds_; }
  // Edges never catch a click or a hover meant for the node under them.
  QPainterPath shape() const override { return {}; }

  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) override {
    static const QPen pen(QColor(0x70, 0x78, 0x84), 1.2);
    painter->setPen(pen);
    painter->setBrush(Qt::NoBrush);
    painter->drawPath(path_);
    if (!arrow_.isEmpty() && option->levelOfDetailFromTransform(painter->worldTransform()) >= kPlainLevelOfDetail) {
      painter->setBrush(pen.color());
      painter->drawPolygon(arrow_);
    }
  }

 private:
  QPainterPath path_;
  QPolygonF arrow_;
  QRectF bounds_;
};

}  // namespace

// The view: hand-drag panning, Ctrl+wheel zoom, clicks on nodes, and the first-paint hook.
class GraphView : public QGraphicsView {
 public:
  explicit GraphView(QGraphicsScene* scene, QWidget* parent) : QGraphicsView(scene, parent) {}

  std::function<void(const QString&)> on_node_clicked;
  std::function<void()> on_painted;
  std::function<void(double, bool)> on_zoom;  // factor, under the mouse

 protected:
  void mousePressEvent(QMouseEvent* event) override {
    if (event->button() == Qt::LeftButton) press_ = event->position().toPoint();
    QGraphicsView::mousePressEvent(event);
  }

  // A press and release in (about) one place is a click; anything longer was a drag to pan.
  void mouseReleaseEvent(QMouseEvent* event) override {
    QGraphicsView::mouseReleaseEvent(event);
    if (event->button() != Qt::LeftButton || !press_) return;
    const QPoint at = event->position().toPoint();
    const bool click = (at - *press_).manhattanLength() < QApplication::startDragDistance();
    press_.reset();
    if (!click || !on_node_clicked) return;
    for (QGraphicsItem* item : items(at)) {
      if (item->type() == GraphNodeItem::Type) {
        on_node_clicked(static_cast<GraphNodeItem*>(item)->name());
        return;
      }
    }
  }

  void wheelEvent(QWheelEvent* event) override {
    if (!(event->modifiers() & Qt::ControlModifier) || !on_zoom) {
      QGraphicsView::wheelEvent(event);
      return;
    }
    on_zoom(std::pow(kZoomStep, event->angleDelta().y() / 120.0), true);
    event->accept();
  }

  // QAbstractScrollArea routes the viewport's paint events here: after the base class has drawn the
  // visible items, the frame is done.
  void paintEvent(QPaintEvent* event) override {
    QGraphicsView::paintEvent(event);
    if (on_painted) on_painted();
  }

 private:
  std::optional<QPoint> press_;
};

GraphClusterItem::GraphClusterItem(const QRectF& rect, const QColor& fill, QStringList nodes)
    : rect_(rect), fill_(fill), nodes_(std::move(nodes)) {
  setZValue(0.5);  // above the edges, below the node boxes
  setAcceptedMouseButtons(Qt::NoButton);
}

QRectF GraphClusterItem::boundingRect() const { return rect_.adjusted(-1, -1, 1, 1); }

void GraphClusterItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
  QColor wash = fill_;
  wash.setAlphaF(0.35F);
  painter->setPen(QPen(fill_.darker(130), 1.5, Qt::DashLine));
  painter->setBrush(wash);
  painter->drawRoundedRect(rect_, kCornerRadius * 2, kCornerRadius * 2);
}

GraphNodeItem::GraphNodeItem(int index, const LaidOutNode& node)
    : index_(index),
      name_(node.name),
      op_(node.op),
      box_(-node.width / 2, -node.height / 2, node.width, node.height),
      fill_(kNeutralFill) {
  setPos(node.centre);
  setZValue(1);
}

QRectF GraphNodeItem::boundingRect() const {
  const double margin = kHighlightPen / 2 + 0.5;
  return box_.adjusted(-margin, -margin, margin, margin);
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

void GraphNodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  static const QPen outline(QColor(0x55, 0x5d, 0x68), 1.0);
  static const QPen highlight(QColor(0x10, 0x3c, 0xc8), kHighlightPen);
  const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
  painter->setPen(highlighted_ ? highlight : outline);
  painter->setBrush(fill_);
  if (lod < kPlainLevelOfDetail) {
    painter->drawRect(box_);
    return;
  }
  painter->drawRoundedRect(box_, kCornerRadius, kCornerRadius);
  if (lod < kTextLevelOfDetail) return;

  const QRectF text_box = box_.adjusted(6, 3, -6, -3);
  if (!elided_) {
    elided_name_ = QFontMetricsF(NameFont()).elidedText(name_, Qt::ElideMiddle, text_box.width());
    elided_ = true;
  }
  painter->setPen(fill_.lightnessF() < 0.45 ? Qt::white : QColor(0x1a, 0x1a, 0x1a));
  const QRectF top(text_box.left(), text_box.top(), text_box.width(), text_box.height() / 2);
  const QRectF bottom(text_box.left(), top.bottom(), text_box.width(), text_box.height() / 2);
  painter->setFont(OpFont());
  painter->drawText(top, Qt::AlignCenter, op_);
  painter->setFont(NameFont());
  painter->drawText(bottom, Qt::AlignCenter, elided_name_);
}

GraphPage::GraphPage(LayerSelection* selection, QWidget* parent) : QWidget(parent), selection_(selection) {
  search_edit_ = new QLineEdit(this);
  search_edit_->setObjectName(QStringLiteral("graphSearch"));
  search_edit_->setPlaceholderText(tr("Find a node by name or op (Enter: next)"));
  search_edit_->setClearButtonEnabled(true);
  show_constants_ = new QCheckBox(this);
  show_constants_->setObjectName(QStringLiteral("showConstants"));
  show_constants_->hide();  // until a model has Constant nodes
  mode_combo_ = new QComboBox(this);
  mode_combo_->setObjectName(QStringLiteral("colourMode"));
  mode_combo_->addItems({tr("time share"), tr("drift"), tr("bound")});
  target_combo_ = new QComboBox(this);
  target_combo_->setObjectName(QStringLiteral("graphTarget"));
  target_combo_->setMinimumContentsLength(12);
  target_combo_->setEnabled(false);
  auto* zoom_out = new QPushButton(QStringLiteral("−"), this);
  zoom_out->setObjectName(QStringLiteral("zoomOut"));
  zoom_out->setToolTip(tr("Zoom out (Ctrl+wheel)"));
  zoom_label_ = new QLabel(this);
  zoom_label_->setObjectName(QStringLiteral("zoomLevel"));
  zoom_label_->setMinimumWidth(48);
  zoom_label_->setAlignment(Qt::AlignCenter);
  auto* zoom_in = new QPushButton(QStringLiteral("+"), this);
  zoom_in->setObjectName(QStringLiteral("zoomIn"));
  zoom_in->setToolTip(tr("Zoom in (Ctrl+wheel)"));
  auto* fit = new QPushButton(tr("Fit"), this);
  fit->setObjectName(QStringLiteral("zoomFit"));
  fit->setToolTip(tr("Show the whole graph"));
  for (QPushButton* button : {zoom_out, zoom_in}) button->setFixedWidth(32);

  auto* bar = new QHBoxLayout;
  bar->addWidget(search_edit_, 2);
  bar->addWidget(show_constants_);
  bar->addWidget(new QLabel(tr("Colour by"), this));
  bar->addWidget(mode_combo_);
  bar->addWidget(new QLabel(tr("on"), this));
  bar->addWidget(target_combo_);
  bar->addStretch(1);
  bar->addWidget(zoom_out);
  bar->addWidget(zoom_label_);
  bar->addWidget(zoom_in);
  bar->addWidget(fit);

  status_label_ = new QLabel(this);
  status_label_->setObjectName(QStringLiteral("graphStatus"));
  status_label_->setWordWrap(true);
  status_label_->hide();

  scene_ = new QGraphicsScene(this);
  scene_->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
  scene_->setBackgroundBrush(Qt::white);
  view_ = new GraphView(scene_, this);
  view_->setObjectName(QStringLiteral("graphView"));
  view_->setDragMode(QGraphicsView::ScrollHandDrag);
  view_->setViewportUpdateMode(QGraphicsView::MinimalViewportUpdate);
  view_->setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  // Every item sets the pen, brush and font it draws with, so the view need not save and restore them.
  view_->setOptimizationFlag(QGraphicsView::DontSavePainterState);
  view_->setTransformationAnchor(QGraphicsView::AnchorViewCenter);
  view_->on_node_clicked = [this](const QString& node) { onNodeClicked(node); };
  view_->on_painted = [this] { onViewportPainted(); };
  view_->on_zoom = [this](double factor, bool under_mouse) {
    view_->setTransformationAnchor(under_mouse ? QGraphicsView::AnchorUnderMouse : QGraphicsView::AnchorViewCenter);
    zoomBy(factor);
    view_->setTransformationAnchor(QGraphicsView::AnchorViewCenter);
  };

  message_label_ = new QLabel(tr("Open a model to see its graph"), this);
  message_label_->setObjectName(QStringLiteral("graphMessage"));
  message_label_->setAlignment(Qt::AlignCenter);
  message_label_->setWordWrap(true);
  stack_ = new QStackedWidget(this);
  stack_->setObjectName(QStringLiteral("graphStack"));
  stack_->addWidget(message_label_);
  stack_->addWidget(view_);

  legend_label_ = new QLabel(this);
  legend_label_->setObjectName(QStringLiteral("graphLegend"));
  legend_label_->setWordWrap(true);
  legend_label_->setTextFormat(Qt::RichText);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(status_label_);
  layout->addWidget(stack_, 1);
  layout->addWidget(legend_label_);

  connect(&watcher_, &QFutureWatcher<GraphLayoutOutcome>::finished, this, &GraphPage::onLayoutFinished);
  connect(show_constants_, &QCheckBox::toggled, this, [this] { startLayout(); });
  connect(search_edit_, &QLineEdit::textEdited, this, [this] { search(false); });
  connect(search_edit_, &QLineEdit::returnPressed, this, [this] { search(true); });
  connect(mode_combo_, &QComboBox::currentIndexChanged, this, [this](int index) {
    mode_ = static_cast<ColourMode>(index);
    recolour();
  });
  connect(target_combo_, &QComboBox::currentIndexChanged, this, [this] { recolour(); });
  connect(zoom_in, &QPushButton::clicked, this, [this] { zoomBy(kZoomStep); });
  connect(zoom_out, &QPushButton::clicked, this, [this] { zoomBy(1 / kZoomStep); });
  connect(fit, &QPushButton::clicked, this, &GraphPage::fitToView);
  if (selection_) connect(selection_, &LayerSelection::changed, this, &GraphPage::onSelectionChanged);
  updateZoomLabel();
  recolour();
}

GraphPage::~GraphPage() = default;

QGraphicsView* GraphPage::view() const { return view_; }

QString GraphPage::statusText() const { return status_label_->isHidden() ? QString() : status_label_->text(); }

QString GraphPage::legendText() const { return legend_label_->text(); }

GraphNodeItem* GraphPage::itemFor(const QString& node) const { return item_of_node_.value(node, nullptr); }

QString GraphPage::currentTarget() const { return target_combo_->currentText(); }

void GraphPage::setCurrentTarget(const QString& target) {
  const int index = target_combo_->findText(target);
  if (index >= 0) target_combo_->setCurrentIndex(index);
}

void GraphPage::setColourMode(ColourMode mode) { mode_combo_->setCurrentIndex(static_cast<int>(mode)); }

void GraphPage::showMessage(const QString& text, bool error) {
  status_label_->setText(text);
  QPalette palette = status_label_->palette();
  palette.setColor(QPalette::WindowText, error ? kErrorColor : QApplication::palette().color(QPalette::WindowText));
  status_label_->setPalette(palette);
  status_label_->setVisible(!text.isEmpty());
}

void GraphPage::setModel(std::shared_ptr<const ModelAnalysis> analysis) {
  analysis_ = std::move(analysis);
  const auto constants =
      analysis_ ? std::ranges::count_if(analysis_->nodes, [](const NodeRow& node) { return node.op == "Constant"; })
                : 0;
  {
    const QSignalBlocker block(show_constants_);  // one layout for a new model, not two
    show_constants_->setText(tr("Constant nodes (%1)").arg(constants));
    show_constants_->setVisible(constants > 0);
  }
  startLayout();
}

bool GraphPage::showsConstants() const { return show_constants_->isChecked(); }

void GraphPage::setShowConstants(bool show) { show_constants_->setChecked(show); }

void GraphPage::startLayout() {
  Q_ASSERT(QThread::currentThread() == thread());
  const quint64 generation = ++generation_;
  scene_->clear();
  items_.clear();
  item_of_node_.clear();
  highlighted_.clear();
  clusters_.clear();  // scene_->clear() deleted them
  search_index_ = -1;
  laid_out_ = false;
  awaiting_first_paint_ = false;
  stack_->setCurrentWidget(message_label_);
  const bool constants = show_constants_->isChecked();
  const auto drawn =
      !analysis_  ? 0
      : constants ? static_cast<qsizetype>(analysis_->nodes.size())
                  : std::ranges::count_if(analysis_->nodes, [](const NodeRow& node) { return node.op != "Constant"; });
  if (drawn == 0) {
    laying_out_ = false;
    message_label_->setText(!analysis_ ? tr("Open a model to see its graph")
                            : analysis_->nodes.empty()
                                ? tr("The model has no nodes to draw")
                                : tr("The model has only Constant nodes: tick them to see them"));
    showMessage(QString(), false);
    recolour();
    return;
  }
  laying_out_ = true;
  const QString waiting = tr("Laying out %n nodes…", nullptr, static_cast<int>(drawn));
  message_label_->setText(waiting);
  showMessage(waiting, false);
  // The pool thread gets its own reference to the (immutable) analysis and never touches the page.
  watcher_.setFuture(QtConcurrent::run([generation, constants, analysis = analysis_] {
    GraphLayoutOutcome outcome{.generation = generation, .layout = std::nullopt, .error = {}, .layout_ms = 0};
    QElapsedTimer timer;
    timer.start();
    try {
      std::vector<GraphNodeSpec> nodes = GraphNodesOf(*analysis);
      if (!constants)
        std::erase_if(nodes, [](const GraphNodeSpec& node) { return node.op == QLatin1String("Constant"); });
      auto layout = LayOutGraph(nodes);
      if (layout.ok()) {
        outcome.layout = std::move(*layout);
      } else {
        outcome.error = QString::fromStdString(layout.status().message());
      }
    } catch (const std::exception& error) {
      // QFuture::result() must not rethrow in the GUI's event loop.
      outcome.error = GraphPage::tr("graph layout of %1 nodes failed: %2")
                          .arg(analysis->nodes.size())
                          .arg(QString::fromUtf8(error.what()));
    }
    outcome.layout_ms = timer.elapsed();
    return outcome;
  }));
}

void GraphPage::onLayoutFinished() {
  Q_ASSERT(QThread::currentThread() == thread());
  const GraphLayoutOutcome outcome = watcher_.result();
  if (outcome.generation != generation_) return;  // a newer setModel is under way
  laying_out_ = false;
  if (!outcome.layout) {
    message_label_->setText(outcome.error);
    showMessage(outcome.error, true);
    emit layoutFailed(outcome.error);
    return;
  }
  since_layout_arrived_.start();
  pending_layout_ms_ = outcome.layout_ms;
  buildScene(*outcome.layout);
  laid_out_ = true;
  showMessage(tr("%1 nodes, %2 edges, laid out in %3 ms")
                  .arg(outcome.layout->nodes.size())
                  .arg(outcome.layout->edges.size())
                  .arg(outcome.layout_ms),
              false);
  recolour();
  highlight(selection_ ? selection_->nodes() : QStringList(), true);
  awaiting_first_paint_ = true;
  stack_->setCurrentWidget(view_);
  view_->viewport()->update();
}

void GraphPage::buildScene(const GraphLayout& layout) {
  scene_->setSceneRect(layout.bounds.adjusted(-kSceneMargin, -kSceneMargin, kSceneMargin, kSceneMargin));
  for (const LaidOutEdge& edge : layout.edges) scene_->addItem(new GraphEdgeItem(edge));
  items_.reserve(static_cast<size_t>(layout.nodes.size()));
  for (qsizetype i = 0; i < layout.nodes.size(); ++i) {
    auto* item = new GraphNodeItem(static_cast<int>(i), layout.nodes[i]);
    scene_->addItem(item);
    items_.push_back(item);
    item_of_node_.insert(item->name(), item);
  }
  // A small graph fits the window; a large one opens readable at its first node (the inputs' end),
  // where a reader starts, rather than as a grey smear or an empty stretch of a wide graph.
  view_->resetTransform();
  const QSizeF viewport = view_->viewport()->size();
  const QRectF scene_rect = scene_->sceneRect();
  const double fit = std::min(viewport.width() / scene_rect.width(), viewport.height() / scene_rect.height());
  const double scale = std::clamp(fit, kOpeningMinScale, 1.0);
  view_->scale(scale, scale);
  const auto first = std::min_element(layout.nodes.cbegin(), layout.nodes.cend(), [](const auto& a, const auto& b) {
    return std::pair(a.centre.y(), a.centre.x()) < std::pair(b.centre.y(), b.centre.x());
  });
  view_->centerOn(first->centre.x(), scene_rect.top() + viewport.height() / (2 * scale));
  updateZoomLabel();
}

void GraphPage::onViewportPainted() {
  if (!awaiting_first_paint_ || !laid_out_) return;
  awaiting_first_paint_ = false;
  const qint64 first_paint_ms = since_layout_arrived_.elapsed();
  // Emitted once the paint event has returned, so a slot that does real work is not timed as painting.
  QMetaObject::invokeMethod(
      this, [this, layout_ms = pending_layout_ms_, first_paint_ms] { emit laidOut(layout_ms, first_paint_ms); },
      Qt::QueuedConnection);
}

void GraphPage::setRun(std::shared_ptr<const RunResult> run) {
  run_ = std::move(run);
  table_ = run_ ? BuildLayerTable(*run_, LayerRowMode::kNodes) : LayerTable{};
  fillTargets();
  recolour();
}

void GraphPage::fillTargets() {
  const QString previous = target_combo_->currentText();
  QSignalBlocker block(target_combo_);
  target_combo_->clear();
  if (run_) {
    for (const auto& target : run_->targets) {
      if (target && target->status == "ok") target_combo_->addItem(QString::fromStdString(target->target.ToString()));
    }
  }
  const int index = target_combo_->findText(previous);
  target_combo_->setCurrentIndex(index >= 0 ? index : (target_combo_->count() > 0 ? 0 : -1));
  target_combo_->setEnabled(target_combo_->count() > 0);
}

void GraphPage::recolour() {
  const QString target_name = currentTarget();
  const TargetResult* target = run_ && !target_name.isEmpty() ? run_->FindTarget(target_name.toStdString()) : nullptr;
  int table_target = -1;
  for (size_t i = 0; target != nullptr && i < table_.targets.size(); ++i) {
    if (table_.targets[i].get() == target) table_target = static_cast<int>(i);
  }
  if (table_target < 0) target = nullptr;
  for (GraphClusterItem* cluster : clusters_) delete cluster;
  clusters_.clear();
  if (target == nullptr) {
    for (GraphNodeItem* item : items_) {
      item->setFill(kNeutralFill);
      item->setToolTip(ToolTip(*item, nullptr, QString(), 0));
    }
    legend_label_->setText(run_ ? tr("No target of this run finished: nothing to colour by.")
                                : tr("No profile run yet: run the model to colour its nodes by time share, drift "
                                     "or memory/compute bound."));
    return;
  }
  double total_ms = 0;
  for (const LayerResult& layer : target->layers) total_ms += std::isfinite(layer.time_p50_ms) ? layer.time_p50_ms : 0;
  const QHash<QString, GraphNodeMetrics> metrics = NodeMetricsOf(table_, table_target);
  double largest_ms = 0;
  for (const GraphNodeMetrics& m : metrics) largest_ms = std::max(largest_ms, m.time_ms);
  for (GraphNodeItem* item : items_) {
    const auto found = metrics.constFind(item->name());
    const GraphNodeMetrics* m = found == metrics.cend() ? nullptr : &*found;
    QColor fill = kUnprofiledFill;
    if (m != nullptr) {
      switch (mode_) {
        case ColourMode::kTimeShare: fill = TimeShareFill(largest_ms > 0 ? m->time_ms / largest_ms : 0); break;
        case ColourMode::kDrift: fill = m->sqnr_db ? DriftFill(*m->sqnr_db) : kUnprofiledFill; break;
        case ColourMode::kBound: fill = BoundFill(m->bound); break;
      }
    }
    item->setFill(fill);
    item->setToolTip(ToolTip(*item, m, target_name, total_ms));
  }
  redrawClusters(*target, table_target);
  const QString grey = Swatch(kUnprofiledFill, tr("not profiled on %1").arg(target_name));
  const QString name = target_name.toHtmlEscaped();
  switch (mode_) {
    case ColourMode::kTimeShare:
      legend_label_->setText(
          tr("Time share of %1's per-layer total, %2 ms p50, by the kernel that computes each node (a fused "
             "kernel's nodes share one box and its whole time): %3 → %4 → %5 %6")
              .arg(name)
              .arg(total_ms, 0, 'g', 4)
              .arg(Swatch(kTimeLowFill, QStringLiteral("0 %")), Swatch(kTimeMidFill, QString()),
                   Swatch(kTimeHighFill,
                          tr("%1 % (largest)").arg(total_ms > 0 ? 100 * largest_ms / total_ms : 0.0, 0, 'f', 1)),
                   grey));
      break;
    case ColourMode::kDrift:
      legend_label_->setText(
          tr("Layer drift on %1 against %2, SQNR: %3 %4 → %5 %6 (grey also where no drift was measured)")
              .arg(name,
                   target->accuracy ? QString::fromStdString(target->accuracy->reference).toHtmlEscaped()
                                    : tr("the reference"),
                   Swatch(kDriftBadFill, tr("below %1 dB").arg(kDriftRedBelowDb)),
                   Swatch(kDriftFairFill, tr("%1 dB").arg(kDriftRedBelowDb)),
                   Swatch(kDriftGoodFill, tr("%1 dB and above").arg(kDriftGreenFromDb)), grey));
      break;
    case ColourMode::kBound:
      legend_label_->setText(tr("Roofline bound on %1: %2 %3 %4 %5")
                                 .arg(name, Swatch(kMemoryBoundFill, tr("memory")),
                                      Swatch(kComputeBoundFill, tr("compute")),
                                      Swatch(kUnknownBoundFill, tr("unknown: no measured ceilings")), grey));
      break;
  }
}

void GraphPage::redrawClusters(const TargetResult& target, int table_target) {
  constexpr double kClusterMargin = 7.0;  // points around the member boxes
  for (size_t k = 0; k < target.layers.size(); ++k) {
    const LayerResult& layer = target.layers[k];
    if (layer.onnx_nodes.size() < 2) continue;
    QRectF rect;
    QStringList members;
    for (const std::string& node : layer.onnx_nodes) {
      const QString name = QString::fromStdString(node);
      const GraphNodeItem* item = itemFor(name);
      if (item == nullptr) continue;  // a node not drawn (a hidden Constant)
      rect = rect.united(item->mapRectToScene(item->boundingRect()));
      members << name;
    }
    if (members.size() < 2) continue;
    // The cluster takes the colour of the kernel's nodes: of the node the kernel computes.
    const int row = table_.row_of_node.contains(layer.name) ? table_.row_of_node.at(layer.name) : -1;
    const GraphNodeItem* named = itemFor(QString::fromStdString(layer.name));
    const QColor fill = named != nullptr ? named->fill() : itemFor(members.front())->fill();
    auto* cluster = new GraphClusterItem(
        rect.adjusted(-kClusterMargin, -kClusterMargin, kClusterMargin, kClusterMargin), fill, members);
    const LayerCell* cell =
        row >= 0 ? &table_.rows[static_cast<size_t>(row)].cells[static_cast<size_t>(table_target)] : nullptr;
    cluster->setToolTip(
        tr("<b>%1 %2</b>: one kernel over %3 ONNX nodes (%4), p50 %5 ms")
            .arg(QString::fromStdString(layer.op).toHtmlEscaped(), QString::fromStdString(layer.name).toHtmlEscaped())
            .arg(members.size())
            .arg(members.join(QStringLiteral(", ")).toHtmlEscaped())
            .arg(cell != nullptr ? cell->p50_ms : layer.time_p50_ms, 0, 'g', 3));
    scene_->addItem(cluster);
    clusters_.push_back(cluster);
  }
}

void GraphPage::highlight(const QStringList& nodes, bool centre) {
  for (GraphNodeItem* item : std::as_const(highlighted_)) item->setHighlighted(false);
  highlighted_.clear();
  for (const QString& node : nodes) {
    if (GraphNodeItem* item = itemFor(node)) {
      item->setHighlighted(true);
      highlighted_.push_back(item);
    }
  }
  if (centre && !nodes.isEmpty()) {
    if (GraphNodeItem* current = itemFor(nodes.front())) view_->centerOn(current);
  }
}

void GraphPage::onSelectionChanged(const QStringList& nodes, QObject* origin) {
  if (origin == this) return;  // our own click or search, already drawn
  highlight(nodes, true);
}

void GraphPage::onNodeClicked(const QString& node) {
  highlight({node}, false);  // a click does not move the graph under the mouse
  if (selection_) selection_->select({node}, this);
}

void GraphPage::search(bool next) {
  const QString text = search_edit_->text().trimmed();
  QPalette palette = search_edit_->palette();
  palette.setColor(QPalette::Text, QApplication::palette().color(QPalette::Text));
  search_edit_->setPalette(palette);
  if (text.isEmpty() || items_.empty()) {
    search_index_ = -1;
    return;
  }
  const int count = static_cast<int>(items_.size());
  int found = -1;
  if (!next) {
    // A full node name wins over nodes that merely contain it ("conv1" before "conv10").
    if (GraphNodeItem* exact = itemFor(text)) found = exact->index();
  }
  const int start = next ? search_index_ + 1 : 0;
  for (int step = 0; found < 0 && step < count; ++step) {
    const GraphNodeItem* item = items_[static_cast<size_t>((start + step) % count)];
    if (item->name().contains(text, Qt::CaseInsensitive) || item->op().contains(text, Qt::CaseInsensitive)) {
      found = item->index();
    }
  }
  if (found < 0) {
    palette.setColor(QPalette::Text, kErrorColor);
    search_edit_->setPalette(palette);
    return;
  }
  search_index_ = found;
  const QString name = items_[static_cast<size_t>(found)]->name();
  highlight({name}, true);
  if (selection_) selection_->select({name}, this);
}

void GraphPage::zoomBy(double factor) {
  const double current = view_->transform().m11();
  const double target = std::clamp(current * factor, kMinScale, kMaxScale);
  if (current <= 0 || target == current) return;
  view_->scale(target / current, target / current);
  updateZoomLabel();
}

void GraphPage::fitToView() {
  if (!laid_out_) return;
  view_->fitInView(scene_->sceneRect(), Qt::KeepAspectRatio);
  updateZoomLabel();
}

void GraphPage::updateZoomLabel() {
  zoom_label_->setText(QStringLiteral("%1 %").arg(std::lround(view_->transform().m11() * 100)));
}

}  // namespace chipfit
