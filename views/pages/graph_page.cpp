// GraphPage: pool-thread layout hand-off, the scene's node and edge items, colouring, search, zoom, selection.
#include "views/pages/graph_page.h"
#include "views/charts/formats.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMouseEvent>
#include <QPushButton>
#include <QScrollBar>
#include <QStackedWidget>
#include <QThread>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <utility>

#include "views/pages/graph_overview.h"

namespace chipfit {
namespace {

constexpr double kMinScale = 0.02;
constexpr double kOpeningMinScale = 0.8;  // node text stays readable when a graph first opens
// Fit never goes below this: the op names still show at a readable size (GraphNodeItem's level of detail).
constexpr double kFitMinScale = 0.35;
// On a graph too long to show whole, Fit goes no further in than this, the smallest scale that still shows
// each node's name under its op: as much of the graph as can be read, rather than 100 % of its width.
constexpr double kFitMaxScale = 0.6;
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

}  // namespace

// The view: hand-drag panning, Ctrl+wheel zoom, clicks and double-clicks on nodes, the context menu,
// and hooks for the first paint and for every change of what it shows (the overview follows those).
class GraphView : public QGraphicsView {
 public:
  explicit GraphView(QGraphicsScene* scene, QWidget* parent) : QGraphicsView(scene, parent) {}

  std::function<void(const QPoint&)> on_clicked;
  std::function<void(const QPoint&)> on_double_clicked;
  std::function<void(const QPoint&, const QPoint&)> on_context_menu;  // viewport point, global point
  std::function<void()> on_painted;
  std::function<void()> on_resized;
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
    if (click && on_clicked) on_clicked(at);
  }

  void mouseDoubleClickEvent(QMouseEvent* event) override {
    if (event->button() == Qt::LeftButton && on_double_clicked) {
      on_double_clicked(event->position().toPoint());
      event->accept();
      return;
    }
    QGraphicsView::mouseDoubleClickEvent(event);
  }

  void contextMenuEvent(QContextMenuEvent* event) override {
    if (!on_context_menu) return QGraphicsView::contextMenuEvent(event);
    on_context_menu(event->pos(), event->globalPos());
    event->accept();
  }

  void wheelEvent(QWheelEvent* event) override {
    if (!(event->modifiers() & Qt::ControlModifier) || !on_zoom) {
      QGraphicsView::wheelEvent(event);
      return;
    }
    on_zoom(std::pow(kZoomStep, event->angleDelta().y() / 120.0), true);
    event->accept();
  }

  void resizeEvent(QResizeEvent* event) override {
    QGraphicsView::resizeEvent(event);
    if (on_resized) on_resized();
  }

  // QAbstractScrollArea routes the viewport's paint events here: after the base class has drawn the
  // visible items, the frame is done. Every scroll and zoom repaints, so this also tells the overview.
  void paintEvent(QPaintEvent* event) override {
    QGraphicsView::paintEvent(event);
    if (on_painted) on_painted();
  }

 private:
  std::optional<QPoint> press_;
};

GraphPage::GraphPage(LayerSelection* selection, QWidget* parent) : QWidget(parent), selection_(selection) {
  search_edit_ = new QLineEdit(this);
  search_edit_->setObjectName(QStringLiteral("graphSearch"));
  search_edit_->setPlaceholderText(tr("Find a node by name or op (Enter: next, Shift+Enter: previous)"));
  search_edit_->setClearButtonEnabled(true);
  search_edit_->setMinimumWidth(search_edit_->fontMetrics().horizontalAdvance(search_edit_->placeholderText()) / 2);
  search_edit_->installEventFilter(this);
  search_count_ = new QLabel(this);
  search_count_->setObjectName(QStringLiteral("graphSearchCount"));
  search_count_->setMinimumWidth(search_count_->fontMetrics().horizontalAdvance(tr("888 of 888 matches")));
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
  direction_combo_ = new QComboBox(this);
  direction_combo_->setObjectName(QStringLiteral("graphDirection"));
  direction_combo_->addItems({tr("Top to bottom"), tr("Left to right")});
  direction_combo_->setToolTip(tr("Which way the graph runs from its inputs"));
  collapse_all_box_ = new QCheckBox(tr("Collapse fused groups"), this);
  collapse_all_box_->setObjectName(QStringLiteral("collapseGroups"));
  collapse_all_box_->setToolTip(
      tr("Draw each kernel that fuses several nodes as one box with its time; double-click a group to "
         "collapse or expand it alone"));
  collapse_all_box_->setEnabled(false);  // until the chosen target fused some nodes
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
  fit->setToolTip(tr("Show the whole graph, or its full width at a readable size when it is long"));
  for (QPushButton* button : {zoom_out, zoom_in}) button->setFixedWidth(32);

  // Two rows: in one the page would be wider than a 1280-pixel window leaves it, squeezing the navigation.
  auto* bar = new QHBoxLayout;
  bar->addWidget(search_edit_, 2);
  bar->addWidget(search_count_);
  bar->addStretch(1);
  bar->addWidget(direction_combo_);
  bar->addWidget(zoom_out);
  bar->addWidget(zoom_label_);
  bar->addWidget(zoom_in);
  bar->addWidget(fit);
  auto* colour_bar = new QHBoxLayout;
  colour_bar->addWidget(new QLabel(tr("Colour by"), this));
  colour_bar->addWidget(mode_combo_);
  colour_bar->addWidget(new QLabel(tr("on"), this));
  colour_bar->addWidget(target_combo_);
  colour_bar->addWidget(collapse_all_box_);
  colour_bar->addWidget(show_constants_);
  colour_bar->addStretch(1);

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
  connectView();

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
  layout->addLayout(colour_bar);
  layout->addWidget(status_label_);
  layout->addWidget(stack_, 1);
  layout->addWidget(legend_label_);

  connect(&watcher_, &QFutureWatcher<GraphLayoutOutcome>::finished, this, &GraphPage::onLayoutFinished);
  connect(show_constants_, &QCheckBox::toggled, this, [this] { startLayout(); });
  connect(search_edit_, &QLineEdit::textChanged, this, [this] { search(0); });
  connect(mode_combo_, &QComboBox::currentIndexChanged, this, [this](int index) {
    mode_ = static_cast<ColourMode>(index);
    recolour();
  });
  connect(target_combo_, &QComboBox::currentIndexChanged, this, [this] { recolour(); });
  connect(direction_combo_, &QComboBox::currentIndexChanged, this,
          [this](int index) { setDirection(static_cast<GraphDirection>(index)); });
  connect(collapse_all_box_, &QCheckBox::toggled, this, [this](bool on) { setCollapseAllGroups(on); });
  connect(zoom_in, &QPushButton::clicked, this, [this] { zoomBy(kZoomStep); });
  connect(zoom_out, &QPushButton::clicked, this, [this] { zoomBy(1 / kZoomStep); });
  connect(fit, &QPushButton::clicked, this, &GraphPage::fitToView);
  if (selection_) connect(selection_, &LayerSelection::changed, this, &GraphPage::onSelectionChanged);
  updateZoomLabel();
  recolour();
}

// The view's clicks, double-clicks, context menu, zoom and repaints, and the overview in its corner.
void GraphPage::connectView() {
  view_->on_clicked = [this](const QPoint& at) {
    if (const GraphNodeItem* item = nodeAt(at)) {
      onNodeClicked(item->name());
    } else if (const GraphClusterItem* group = collapsedClusterAt(at)) {
      // A collapsed group stands for its kernel: select the node it computes, with the others.
      QStringList nodes = group->nodes();
      if (nodes.removeOne(group->kernel())) nodes.prepend(group->kernel());
      highlight(nodes, false);
      if (selection_) selection_->select(nodes, this);
    }
  };
  view_->on_double_clicked = [this](const QPoint& at) { toggleGroupAt(at); };
  view_->on_context_menu = [this](const QPoint& at, const QPoint& global) {
    QMenu menu(this);
    fillContextMenu(&menu, at);
    if (!menu.isEmpty()) menu.exec(global);
  };
  view_->on_painted = [this] {
    onViewportPainted();
    onViewChanged();
  };
  view_->on_resized = [this] { placeOverview(); };
  overview_ = new GraphOverview(view_, view_);
  overview_->hide();  // until a graph larger than the view is laid out
  view_->on_zoom = [this](double factor, bool under_mouse) {
    view_->setTransformationAnchor(under_mouse ? QGraphicsView::AnchorUnderMouse : QGraphicsView::AnchorViewCenter);
    zoomBy(factor);
    view_->setTransformationAnchor(QGraphicsView::AnchorViewCenter);
  };
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
  edges_.clear();     // scene_->clear() deleted them
  clusters_.clear();  // and these
  cluster_of_item_.clear();
  matches_.clear();
  match_ = -1;
  updateSearchCount();
  overview_->hide();
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
  watcher_.setFuture(QtConcurrent::run([generation, constants, direction = direction_, analysis = analysis_] {
    GraphLayoutOutcome outcome{.generation = generation, .layout = std::nullopt, .error = {}, .layout_ms = 0};
    QElapsedTimer timer;
    timer.start();
    try {
      std::vector<GraphNodeSpec> nodes = GraphNodesOf(*analysis);
      if (!constants)
        std::erase_if(nodes, [](const GraphNodeSpec& node) { return node.op == QLatin1String("Constant"); });
      GraphLayoutOptions options;
      options.direction = direction;
      auto layout = LayOutGraph(nodes, options);
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
  search(0);  // the search text still stands: count its matches in the new graph
  overview_->refit();
  placeOverview();
  awaiting_first_paint_ = true;
  stack_->setCurrentWidget(view_);
  view_->viewport()->update();
}

void GraphPage::buildScene(const GraphLayout& layout) {
  scene_->setSceneRect(layout.bounds.adjusted(-kSceneMargin, -kSceneMargin, kSceneMargin, kSceneMargin));
  edges_.reserve(static_cast<size_t>(layout.edges.size()));
  for (const LaidOutEdge& edge : layout.edges) {
    auto* item = new GraphEdgeItem(edge);
    scene_->addItem(item);
    edges_.push_back(item);
  }
  items_.reserve(static_cast<size_t>(layout.nodes.size()));
  for (qsizetype i = 0; i < layout.nodes.size(); ++i) {
    auto* item = new GraphNodeItem(static_cast<int>(i), layout.nodes[i], kNeutralFill);
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
  const QPointF start = startOfGraph();
  if (direction_ == GraphDirection::kLeftToRight) {
    view_->centerOn(scene_rect.left() + viewport.width() / (2 * scale), start.y());
  } else {
    view_->centerOn(start.x(), scene_rect.top() + viewport.height() / (2 * scale));
  }
  updateZoomLabel();
}

// Where a reader starts: the first node along the graph's direction (the top one, or the leftmost).
QPointF GraphPage::startOfGraph() const {
  const bool across = direction_ == GraphDirection::kLeftToRight;
  const auto first = std::ranges::min_element(items_, [across](const GraphNodeItem* a, const GraphNodeItem* b) {
    return across ? std::pair(a->x(), a->y()) < std::pair(b->x(), b->y())
                  : std::pair(a->y(), a->x()) < std::pair(b->y(), b->x());
  });
  return first == items_.end() ? scene_->sceneRect().center() : (*first)->pos();
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
  cluster_of_item_.clear();
  if (target == nullptr) {
    applyCollapse();  // no groups: every node shows
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
  applyCollapse();
  const QString grey = Swatch(kUnprofiledFill, tr("not profiled on %1").arg(target_name));
  const QString name = target_name.toHtmlEscaped();
  switch (mode_) {
    case ColourMode::kTimeShare:
      legend_label_->setText(
          tr("Time share of %1's per-layer total, %2 p50, by the kernel that computes each node (a fused "
             "kernel's nodes share one box and its whole time): %3 → %4 → %5 %6")
              .arg(name)
              .arg(QString::fromStdString(formats::FormatDuration(total_ms)))
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
    QStringList ops;  // the members' ops, for the collapsed box: "Conv+BatchNormalization+Relu"
    for (const std::string& node : layer.onnx_nodes) {
      const QString name = QString::fromStdString(node);
      const GraphNodeItem* item = itemFor(name);
      if (item == nullptr) continue;  // a node not drawn (a hidden Constant)
      rect = rect.united(item->mapRectToScene(item->boundingRect()));
      members << name;
      ops << item->op();
    }
    if (members.size() < 2) continue;
    // The cluster takes the colour of the kernel's nodes: of the node the kernel computes.
    const QString kernel = QString::fromStdString(layer.name);
    const int row = table_.row_of_node.contains(layer.name) ? table_.row_of_node.at(layer.name) : -1;
    const GraphNodeItem* named = itemFor(kernel);
    const QColor fill = named != nullptr ? named->fill() : itemFor(members.front())->fill();
    const LayerCell* cell =
        row >= 0 ? &table_.rows[static_cast<size_t>(row)].cells[static_cast<size_t>(table_target)] : nullptr;
    const double ms = cell != nullptr ? cell->p50_ms : layer.time_p50_ms;
    const QString op = QString::fromStdString(layer.op);
    auto* cluster =
        new GraphClusterItem(rect.adjusted(-kClusterMargin, -kClusterMargin, kClusterMargin, kClusterMargin), fill,
                             members, kernel, op, tr("%1 ms · %2").arg(ms, 0, 'g', 3).arg(ops.join(QLatin1Char('+'))));
    cluster->setToolTip(tr("<b>%1 %2</b>: one kernel over %3 ONNX nodes (%4), p50 %5 ms<br>Double-click to "
                           "collapse or expand the group")
                            .arg(op.toHtmlEscaped(), kernel.toHtmlEscaped())
                            .arg(members.size())
                            .arg(members.join(QStringLiteral(", ")).toHtmlEscaped())
                            .arg(ms, 0, 'g', 3));
    scene_->addItem(cluster);
    clusters_.push_back(cluster);
    for (const QString& member : std::as_const(members)) cluster_of_item_.insert(itemFor(member)->index(), cluster);
  }
}

bool GraphPage::isCollapsed(const QString& kernel) const { return collapse_all_ != toggled_groups_.contains(kernel); }

bool GraphPage::collapsesAllGroups() const { return collapse_all_; }

GraphClusterItem* GraphPage::clusterOf(const QString& node) const {
  const GraphNodeItem* item = itemFor(node);
  return item == nullptr ? nullptr : cluster_of_item_.value(item->index(), nullptr);
}

// Shows or hides each group's members, and the edges inside a group, as the groups' states say.
void GraphPage::applyCollapse() {
  for (GraphClusterItem* cluster : clusters_) cluster->setCollapsed(isCollapsed(cluster->kernel()));
  const auto hidden = [this](int index) {
    const GraphClusterItem* cluster = cluster_of_item_.value(index, nullptr);
    return cluster != nullptr && cluster->isCollapsed() ? cluster : nullptr;
  };
  for (GraphNodeItem* item : items_) item->setVisible(hidden(item->index()) == nullptr);
  for (GraphEdgeItem* edge : edges_) {
    const GraphClusterItem* group = hidden(edge->from());
    edge->setVisible(group == nullptr || group != hidden(edge->to()));
  }
  {
    const QSignalBlocker block(collapse_all_box_);
    collapse_all_box_->setChecked(collapse_all_);
    collapse_all_box_->setEnabled(!clusters_.empty());
  }
  QStringList nodes;
  for (const GraphNodeItem* item : std::as_const(highlighted_)) nodes << item->name();
  highlight(nodes, false);
}

void GraphPage::setGroupCollapsed(const QString& kernel, bool collapsed) {
  if (isCollapsed(kernel) == collapsed) return;
  if (toggled_groups_.contains(kernel)) {
    toggled_groups_.remove(kernel);
  } else {
    toggled_groups_.insert(kernel);
  }
  applyCollapse();
}

void GraphPage::setCollapseAllGroups(bool collapse) {
  collapse_all_ = collapse;
  toggled_groups_.clear();
  applyCollapse();
}

GraphNodeItem* GraphPage::nodeAt(const QPoint& at) const {
  for (QGraphicsItem* item : view_->items(at)) {
    if (item->type() == GraphNodeItem::Type && item->isVisible()) return static_cast<GraphNodeItem*>(item);
  }
  return nullptr;
}

GraphClusterItem* GraphPage::collapsedClusterAt(const QPoint& at) const {
  for (QGraphicsItem* item : view_->items(at)) {
    if (item->type() == GraphClusterItem::Type && static_cast<GraphClusterItem*>(item)->isCollapsed()) {
      return static_cast<GraphClusterItem*>(item);
    }
  }
  return nullptr;
}

void GraphPage::toggleGroupAt(const QPoint& at) {
  if (const GraphClusterItem* group = collapsedClusterAt(at)) {
    setGroupCollapsed(group->kernel(), false);
  } else if (const GraphNodeItem* item = nodeAt(at)) {
    if (const GraphClusterItem* cluster = cluster_of_item_.value(item->index(), nullptr)) {
      setGroupCollapsed(cluster->kernel(), true);
    }
  }
}

void GraphPage::fillContextMenu(QMenu* menu, const QPoint& at) {
  const GraphClusterItem* group = collapsedClusterAt(at);
  if (group == nullptr) {
    const GraphNodeItem* item = nodeAt(at);
    group = item != nullptr ? cluster_of_item_.value(item->index(), nullptr) : nullptr;
  }
  if (group != nullptr) {
    const QString kernel = group->kernel();
    const bool collapsed = group->isCollapsed();
    QAction* toggle =
        menu->addAction((collapsed ? tr("Expand the fused group %1 %2") : tr("Collapse the fused group %1 %2"))
                            .arg(group->title(), kernel));
    toggle->setObjectName(QStringLiteral("toggleGroup"));
    connect(toggle, &QAction::triggered, this, [this, kernel, collapsed] { setGroupCollapsed(kernel, !collapsed); });
  }
  if (clusters_.empty()) return;
  QAction* all = menu->addAction(tr("Collapse all fused groups"));
  all->setObjectName(QStringLiteral("collapseAllGroups"));
  all->setCheckable(true);
  all->setChecked(collapse_all_ && toggled_groups_.isEmpty());
  connect(all, &QAction::toggled, this, [this](bool on) { setCollapseAllGroups(on); });
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
  // A collapsed group shows the highlight of the nodes it hides.
  for (GraphClusterItem* cluster : clusters_) {
    cluster->setHighlighted(cluster->isCollapsed() && std::ranges::any_of(highlighted_, [&](const GraphNodeItem* item) {
                              return cluster_of_item_.value(item->index(), nullptr) == cluster;
                            }));
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

bool GraphPage::eventFilter(QObject* watched, QEvent* event) {
  if (watched == search_edit_ && event->type() == QEvent::KeyPress) {
    const auto* key = static_cast<QKeyEvent*>(event);
    if (key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) {
      search(key->modifiers() & Qt::ShiftModifier ? -1 : 1);
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

// Collects the nodes whose name or op holds the text; step 0 (the text changed) lands on a node of
// exactly that name if there is one, else on the first match; ±1 moves along the matches, wrapping.
void GraphPage::search(int step) {
  const QString text = search_edit_->text().trimmed();
  if (step == 0) {
    matches_.clear();
    match_ = -1;
    for (GraphNodeItem* item : items_) {
      const bool matched = !text.isEmpty() && (item->name().contains(text, Qt::CaseInsensitive) ||
                                               item->op().contains(text, Qt::CaseInsensitive));
      item->setMatched(matched);
      if (matched) matches_.push_back(item->index());
    }
    if (!matches_.isEmpty()) {
      // A full node name wins over nodes that merely contain it ("conv1" before "conv10").
      const GraphNodeItem* exact = itemFor(text);
      match_ = exact != nullptr ? static_cast<int>(matches_.indexOf(exact->index())) : 0;
    }
  } else if (!matches_.isEmpty()) {
    const auto count = static_cast<int>(matches_.size());
    match_ = ((match_ + step) % count + count) % count;
  }
  updateSearchCount();
  if (match_ >= 0) showMatch();
}

void GraphPage::showMatch() {
  const QString name = items_[static_cast<size_t>(matches_[match_])]->name();
  highlight({name}, true);
  if (selection_) selection_->select({name}, this);
}

void GraphPage::updateSearchCount() {
  const bool searching = !search_edit_->text().trimmed().isEmpty();
  const bool missing = searching && matches_.isEmpty() && laid_out_;
  QPalette palette = search_edit_->palette();
  palette.setColor(QPalette::Text, missing ? kErrorColor : QApplication::palette().color(QPalette::Text));
  search_edit_->setPalette(palette);
  QPalette label = search_count_->palette();
  label.setColor(QPalette::WindowText, missing ? kErrorColor : QApplication::palette().color(QPalette::WindowText));
  search_count_->setPalette(label);
  if (!searching || !laid_out_) {
    search_count_->clear();
  } else if (matches_.isEmpty()) {
    search_count_->setText(tr("no match"));
  } else {
    // Spelt out: without a translator loaded, %n does not pick the singular.
    search_count_->setText(matches_.size() == 1 ? tr("1 of 1 match")
                                                : tr("%1 of %2 matches").arg(match_ + 1).arg(matches_.size()));
  }
}

QString GraphPage::searchCountText() const { return search_count_->text(); }

void GraphPage::zoomBy(double factor) {
  const double current = view_->transform().m11();
  const double target = std::clamp(current * factor, kMinScale, kMaxScale);
  if (current <= 0 || target == current) return;
  view_->scale(target / current, target / current);
  updateZoomLabel();
}

void GraphPage::fitToView() {
  if (!laid_out_) return;
  const QRectF scene_rect = scene_->sceneRect();
  const QSizeF viewport = view_->viewport()->size();
  const double whole = std::min(viewport.width() / scene_rect.width(), viewport.height() / scene_rect.height());
  if (whole >= kFitMinScale) {
    // Readable whole: show it all, without blowing a handful of nodes up past 100 %.
    view_->resetTransform();
    view_->scale(std::min(whole, 1.0), std::min(whole, 1.0));
    view_->centerOn(scene_rect.center());
    updateZoomLabel();
    return;
  }
  // A long graph: fit it across, as Netron does, at no less than the op names need and no more than
  // kFitMaxScale; then show the selection, or the inputs' end.
  const bool across = direction_ == GraphDirection::kLeftToRight;
  const double cross = across ? viewport.height() / scene_rect.height() : viewport.width() / scene_rect.width();
  const double scale = std::clamp(cross, kFitMinScale, kFitMaxScale);
  view_->resetTransform();
  view_->scale(scale, scale);
  if (!highlighted_.isEmpty()) {
    view_->centerOn(highlighted_.front());
  } else if (across) {
    view_->centerOn(scene_rect.left() + viewport.width() / (2 * scale), scene_rect.center().y());
  } else {
    view_->centerOn(scene_rect.center().x(), scene_rect.top() + viewport.height() / (2 * scale));
  }
  updateZoomLabel();
}

void GraphPage::setDirection(GraphDirection direction) {
  if (direction_combo_->currentIndex() != static_cast<int>(direction)) {
    direction_combo_->setCurrentIndex(static_cast<int>(direction));  // comes back here through the combo
    return;
  }
  if (direction == direction_) return;
  direction_ = direction;
  startLayout();
}

void GraphPage::updateZoomLabel() {
  zoom_label_->setText(QStringLiteral("%1 %").arg(std::lround(view_->transform().m11() * 100)));
  onViewChanged();
}

// The overview shows while some of the graph is out of sight, and follows the main view.
void GraphPage::onViewChanged() {
  if (!laid_out_) return;
  const QRectF shown = view_->mapToScene(view_->viewport()->rect()).boundingRect();
  const bool whole = shown.adjusted(-2, -2, 2, 2).contains(scene_->sceneRect());
  if (overview_->isVisible() == whole) {
    overview_->setVisible(!whole);
    placeOverview();
  }
  if (overview_->isVisible()) overview_->followMainView();
}

void GraphPage::placeOverview() {
  const QRect area = view_->viewport()->geometry();
  const QSize size = GraphOverview::SizeFor(scene_->sceneRect(), area.size());
  constexpr int kInset = 8;
  const QRect wanted(area.right() - kInset - size.width() + 1, area.top() + kInset, size.width(), size.height());
  if (overview_->geometry() != wanted) overview_->setGeometry(wanted);
  overview_->raise();
}

}  // namespace chipfit
