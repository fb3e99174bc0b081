// LayersPage: where the time goes. One table of every layer on every target (sort, filter), the run's
// charts beside it (time, roofline, cross-target roofline, drift, energy, heat map), a detail pane, and
// one selection shared with every other view.
#pragma once

#include <QChartView>
#include <QHash>
#include <QStringList>
#include <QWidget>
#include <memory>
#include <vector>

#include "profilers/run_result.h"
#include "profilers/session/model_analysis.h"
#include "views/models/heat_map_model.h"
#include "views/models/layer_selection.h"
#include "views/models/layer_table_model.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTableView;
class QTextBrowser;

namespace chipfit {

class FrozenTableView;

class LayersPage : public QWidget {
  Q_OBJECT

 public:
  explicit LayersPage(LayerSelection* selection, QWidget* parent = nullptr);

  void setRun(std::shared_ptr<const RunResult> run);
  // The model's nodes (inputs, outputs and their shapes) for the detail pane; may be null.
  void setAnalysis(std::shared_ptr<const ModelAnalysis> analysis);
  const std::shared_ptr<const RunResult>& run() const { return model_->run(); }

  LayerTableModel* model() const { return model_; }
  LayerFilterProxy* proxy() const { return proxy_; }
  HeatMapModel* heatMap() const { return heat_map_; }
  QTableView* table() const;
  // The name column laid over the table's left edge: it stays in view however far right it scrolls.
  QTableView* frozenColumn() const;
  // Which target columns the table shows: one target's, two targets' side by side with their p50
  // ratio, or every target's.
  enum class ColumnSet { kOneTarget, kAVersusB, kAllTargets };
  void setColumnSet(ColumnSet set, const QString& a = {}, const QString& b = {});
  ColumnSet columnSet() const;
  QTabWidget* charts() const { return tabs_; }
  QTextBrowser* details() const { return details_; }
  // The chart views, by tab: time, roofline, cross-target roofline, drift, energy.
  const std::vector<QChartView*>& chartViews() const { return chart_views_; }
  // The chart target (time chart) and device (rooflines) the combos select.
  void setChartTarget(const QString& target);
  // The nodes a what-if run would keep in fp32 on `target`: the selected rows when any, else the
  // `count` rows computed below fp32 with the lowest drift SQNR under 30 dB.
  QStringList whatIfNodes(const QString& target, int count) const;

 signals:
  // Re-run only `target` with `nodes` computed in fp32 (the --keep-fp32 mechanism).
  void whatIfRequested(const QString& target, const QStringList& nodes);

 private:
  void buildFilters(QWidget* bar);
  void rebuildCharts();
  void connectChart(QChartView* view);
  void onTableSelection();
  void onSelectionChanged(const QStringList& nodes, QObject* origin);
  void updateDetails();
  // The detail pane's key/value rows for row `r` on table target `t`.
  QString targetDetailRows(const LayerRow& r, int t) const;
  void applyFilters();
  // keep_choices: the same run grown, whose target choices (drift, slower, columns) the user may have made.
  void fillTargetCombos(bool keep_choices);
  void buildColumnControls(QWidget* bar);
  // Hides the columns the column set leaves out and points the ratio column at its pair.
  void applyColumnSet();
  // The user picked another column set or target: apply it, and sort by a column it shows.
  void onColumnSetChanged();
  int defaultSortColumn() const;
  // A column's identity across a model reset: "#<fixed column>" or "<target>/<metric>".
  QString columnKey(int column) const;
  int columnOfKey(const QString& key) const;
  void sizeColumn(int column);
  QString runText(const RunResult& r) const;

  // What the user made of the table (sort, widths, scroll), kept while the same run grows.
  struct TableState {
    QString sort_key;
    Qt::SortOrder sort_order = Qt::DescendingOrder;
    QHash<QString, int> widths;
    int across = 0, down = 0;
  };
  TableState saveTableState() const;

  LayerSelection* selection_;
  std::shared_ptr<const ModelAnalysis> analysis_;
  LayerTableModel* model_;
  LayerFilterProxy* proxy_;
  HeatMapModel* heat_map_;
  FrozenTableView* table_;
  QTableView* heat_table_;
  QTabWidget* tabs_;
  std::vector<QChartView*> chart_views_;
  QTextBrowser* details_;
  QLabel* summary_;
  QComboBox* mode_;
  QComboBox* column_set_;
  QComboBox* column_a_;
  QLabel* column_versus_;
  QComboBox* column_b_;
  QLineEdit* search_;
  QComboBox* op_;
  QComboBox* device_;
  QComboBox* bound_;
  QCheckBox* drift_on_;
  QComboBox* drift_target_;
  QDoubleSpinBox* drift_db_;
  QCheckBox* slower_on_;
  QComboBox* slower_a_;
  QComboBox* slower_b_;
  QDoubleSpinBox* slower_factor_;
  QComboBox* chart_target_;
  QComboBox* chart_device_;
  QComboBox* heat_measure_;
  QSpinBox* what_if_count_;
  QPushButton* what_if_;
  QString run_text_, run_notes_;  // the summary's run line and its warnings (busy machine, slowed layers)
  bool syncing_ = false;          // applying a selection from elsewhere: no echo back
};

}  // namespace chipfit
