// GraphPage: the model as a node graph (Graphviz layout off the GUI thread), coloured by a target's profile.
#pragma once

#include <QColor>
#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QGraphicsItem>
#include <QHash>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>
#include <memory>
#include <optional>

#include "profilers/run_result.h"
#include "profilers/session/model_analysis.h"
#include "views/models/graph_layout.h"
#include "views/models/layer_selection.h"
#include "views/models/layer_table_model.h"

class QCheckBox;
class QComboBox;
class QGraphicsScene;
class QGraphicsView;
class QLabel;
class QLineEdit;
class QStackedWidget;

namespace chipfit {

class GraphView;

// One node: a rounded box with its op and (elided) name. Light on purpose: a tight boundingRect() so
// the scene's BSP index hands the view only what is visible, no shadow, text cached after first use.
class GraphNodeItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 1 };

  GraphNodeItem(int index, const LaidOutNode& node);

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

 private:
  int index_;
  QString name_;
  QString op_;
  QRectF box_;  // centred on the item's position
  QColor fill_;
  bool highlighted_ = false;
  QString elided_name_;  // made on first paint, when a font is at hand
  bool elided_ = false;
};

// What a pool thread hands back: the layout, or why there is none.
struct GraphLayoutOutcome {
  quint64 generation = 0;  // which layout request this answers; older answers are dropped
  std::optional<GraphLayout> layout{};
  QString error{};
  qint64 layout_ms = 0;  // node list + Graphviz, on the pool thread
};

// How one ONNX node did on the chosen target: the figures of the kernel that computes it, as the
// Layers table's node rows show them (the executed kernel is the unit of time: a fused kernel's whole
// time on each of its nodes, never a share).
struct GraphNodeMetrics {
  double time_ms = 0;  // the computing kernel's p50
  std::optional<double> sqnr_db{};
  QString bound{};   // "memory", "compute" or "" when no ceilings were known
  QString kernel{};  // "FusedConv conv1"
  int kernel_nodes = 1;
  double other_kernels_ms = 0;  // reorders or copies in front of the node, kernels of their own
};

// A fused kernel's nodes drawn as one cluster: a box behind them in the kernel's colour.
class GraphClusterItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 2 };

  GraphClusterItem(const QRectF& rect, const QColor& fill, QStringList nodes);

  int type() const override { return Type; }
  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  const QStringList& nodes() const { return nodes_; }
  QColor fill() const { return fill_; }

 private:
  QRectF rect_;
  QColor fill_;
  QStringList nodes_;
};

class GraphPage : public QWidget {
  Q_OBJECT

 public:
  enum class ColourMode { kTimeShare, kDrift, kBound };

  explicit GraphPage(LayerSelection* selection, QWidget* parent = nullptr);
  ~GraphPage() override;

  // Lays the model out on a pool thread, showing "Laying out N nodes…" meanwhile; a newer call
  // supersedes an older one (whose answer is dropped). nullptr clears the page.
  void setModel(std::shared_ptr<const ModelAnalysis> analysis);
  // Colours the nodes by this run; the target combo lists its targets whose status is ok.
  void setRun(std::shared_ptr<const RunResult> run);

  bool isLaidOut() const { return laid_out_; }
  bool isLayingOut() const { return laying_out_; }
  QGraphicsView* view() const;
  int nodeCount() const { return static_cast<int>(items_.size()); }
  QString statusText() const;
  QString legendText() const;

  // The item drawing `node`, or nullptr; for tests and for a window that wants to point at one.
  GraphNodeItem* itemFor(const QString& node) const;
  // The fused-kernel clusters drawn for the current target (each a kernel over several drawn nodes).
  const std::vector<GraphClusterItem*>& clusters() const { return clusters_; }
  void setColourMode(ColourMode mode);
  ColourMode colourMode() const { return mode_; }
  // The target the colours come from ("cpu:fp32"), empty without a run.
  QString currentTarget() const;
  void setCurrentTarget(const QString& target);

  // Constant nodes are hidden unless shown (as the Model page's node list does): an exported model has
  // one per shape or scale operand, and they crowd out the nodes that compute. Showing them lays out again.
  void setShowConstants(bool show);
  bool showsConstants() const;

  QLineEdit* searchEdit() const { return search_edit_; }
  void zoomBy(double factor);
  void fitToView();

 signals:
  // Once per layout (a model, or Constant nodes shown or hidden) that produced a scene: the pool thread's layout time,
  // and the time from the layout's arrival on the GUI thread (building the items included) to the end of the view's
  // first paint of the new scene; a page that is hidden then counts until it is shown and painted.
  void laidOut(qint64 layout_ms, qint64 first_paint_ms);
  // The layout failed: the page shows `message` too.
  void layoutFailed(const QString& message);

 private:
  void startLayout();
  void onLayoutFinished();
  void onViewportPainted();
  void buildScene(const GraphLayout& layout);
  void showMessage(const QString& text, bool error);
  void fillTargets();
  void recolour();
  void redrawClusters(const TargetResult& target, int table_target);
  void onSelectionChanged(const QStringList& nodes, QObject* origin);
  void highlight(const QStringList& nodes, bool centre);
  void onNodeClicked(const QString& node);
  void search(bool next);
  void updateZoomLabel();

  LayerSelection* selection_;
  std::shared_ptr<const ModelAnalysis> analysis_;
  std::shared_ptr<const RunResult> run_;
  LayerTable table_;  // the run's node rows: the attribution the Layers table shows
  ColourMode mode_ = ColourMode::kTimeShare;

  quint64 generation_ = 0;
  bool laying_out_ = false;
  bool laid_out_ = false;
  qint64 pending_layout_ms_ = 0;
  bool awaiting_first_paint_ = false;
  QElapsedTimer since_layout_arrived_;
  QFutureWatcher<GraphLayoutOutcome> watcher_;

  std::vector<GraphNodeItem*> items_;  // owned by the scene, in layout order
  QHash<QString, GraphNodeItem*> item_of_node_;
  QVector<GraphNodeItem*> highlighted_;
  std::vector<GraphClusterItem*> clusters_;  // owned by the scene
  int search_index_ = -1;                    // the item the last search landed on

  QLabel* status_label_;
  QStackedWidget* stack_;
  QLabel* message_label_;
  GraphView* view_;
  QGraphicsScene* scene_;
  QLineEdit* search_edit_;
  QCheckBox* show_constants_;
  QComboBox* mode_combo_;
  QComboBox* target_combo_;
  QLabel* zoom_label_;
  QLabel* legend_label_;
};

}  // namespace chipfit
