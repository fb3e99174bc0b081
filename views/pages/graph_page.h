// GraphPage: the model as a node graph (Graphviz layout off the GUI thread), coloured by a target's profile.
#pragma once

#include <QColor>
#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QHash>
#include <QSet>
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
#include "views/pages/graph_items.h"

class QCheckBox;
class QComboBox;
class QGraphicsScene;
class QGraphicsView;
class QLabel;
class QLineEdit;
class QMenu;
class QStackedWidget;

namespace chipfit {

class GraphOverview;
class GraphView;

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

  // The search box; Enter steps to the next match, Shift+Enter to the previous one.
  QLineEdit* searchEdit() const { return search_edit_; }
  // "3 of 12 matches" beside the search box; empty without search text.
  QString searchCountText() const;
  void zoomBy(double factor);
  // Shows the whole graph when it is readable so; otherwise fits the graph across (its width top to
  // bottom, its height left to right), never below the scale where the op names still show, and
  // scrolls to the selection or to the inputs' end.
  void fitToView();

  // Which way the graph runs; a change lays the graph out again.
  void setDirection(GraphDirection direction);
  GraphDirection direction() const { return direction_; }

  // The small whole-graph view in the top right corner, shown while the graph does not fit the page.
  GraphOverview* overview() const { return overview_; }

  // Fused groups (the current target's kernels over several nodes) collapse to one box that names the
  // kernel and its time, hiding their nodes; double-click or the context menu toggles one.
  void setGroupCollapsed(const QString& kernel, bool collapsed);
  void setCollapseAllGroups(bool collapse);
  bool collapsesAllGroups() const;
  // The group a drawn node belongs to on the current target, or nullptr.
  GraphClusterItem* clusterOf(const QString& node) const;
  // The view's context menu at a viewport point: the group under it and the collapse-all switch.
  void fillContextMenu(QMenu* menu, const QPoint& at);

 signals:
  // Once per layout (a model, or Constant nodes shown or hidden) that produced a scene: the pool thread's layout time,
  // and the time from the layout's arrival on the GUI thread (building the items included) to the end of the view's
  // first paint of the new scene; a page that is hidden then counts until it is shown and painted.
  void laidOut(qint64 layout_ms, qint64 first_paint_ms);
  // The layout failed: the page shows `message` too.
  void layoutFailed(const QString& message);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void connectView();
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
  void search(int step);
  void showMatch();
  void updateSearchCount();
  void updateZoomLabel();
  void onViewChanged();
  void placeOverview();
  void applyCollapse();
  bool isCollapsed(const QString& kernel) const;
  void toggleGroupAt(const QPoint& at);
  GraphClusterItem* collapsedClusterAt(const QPoint& at) const;
  GraphNodeItem* nodeAt(const QPoint& at) const;
  QPointF startOfGraph() const;

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
  std::vector<GraphEdgeItem*> edges_;        // owned by the scene
  std::vector<GraphClusterItem*> clusters_;  // owned by the scene
  QHash<int, GraphClusterItem*> cluster_of_item_;
  GraphDirection direction_ = GraphDirection::kTopToBottom;
  // Collapsed groups by kernel key: with "collapse all" on, the set lists the groups expanded again.
  bool collapse_all_ = false;
  QSet<QString> toggled_groups_;
  QVector<int> matches_;  // items matching the search text, in layout order
  int match_ = -1;        // the match the search is on, into matches_

  QLabel* status_label_;
  QStackedWidget* stack_;
  QLabel* message_label_;
  GraphView* view_;
  QGraphicsScene* scene_;
  QLineEdit* search_edit_;
  QLabel* search_count_;
  QComboBox* direction_combo_;
  QCheckBox* collapse_all_box_;
  GraphOverview* overview_;
  QCheckBox* show_constants_;
  QComboBox* mode_combo_;
  QComboBox* target_combo_;
  QLabel* zoom_label_;
  QLabel* legend_label_;
};

}  // namespace chipfit
