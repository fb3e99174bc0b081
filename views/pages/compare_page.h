// ComparePage: A against B layer by layer — two targets of one run, or one target in two stored runs:
// the totals with their verdict, the per-layer ratio table (largest regression first, flagged only
// beyond noise), a scatter of A vs B per layer, and what changed in placement and precision.
#pragma once

#include <QChartView>
#include <QWidget>
#include <memory>

#include "profilers/run_result.h"
#include "views/models/compare_model.h"
#include "views/models/layer_selection.h"

class QComboBox;
class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace chipfit {

class ComparePage : public QWidget {
  Q_OBJECT

 public:
  explicit ComparePage(LayerSelection* selection, QWidget* parent = nullptr);

  // A from `a`, B from `b` (the same run: two of its targets). Targets default to cpu:fp32 (or the first
  // ok target) for A and the next ok target for B, or the same target when the runs differ.
  void setRuns(std::shared_ptr<const RunResult> a, std::shared_ptr<const RunResult> b);
  void setTargets(const QString& a, const QString& b);
  // A line above the totals saying what the comparison is for ("What-if on cpu:int8: kept in fp32 …");
  // cleared by setRuns.
  void setNote(const QString& note);

  CompareModel* model() const { return model_; }
  QSortFilterProxyModel* proxy() const { return proxy_; }
  QTableView* table() const { return table_; }
  QChartView* scatter() const { return scatter_; }
  QString totalsText() const;

 private:
  void rebuild();
  void rebuildChart();
  void onSelectionChanged(const QStringList& nodes, QObject* origin);

  LayerSelection* selection_;
  std::shared_ptr<const RunResult> run_a_, run_b_;
  CompareModel* model_;
  QSortFilterProxyModel* proxy_;
  QLabel* title_;
  QLabel* totals_;
  QComboBox* target_a_;
  QComboBox* target_b_;
  QTableView* table_;
  QChartView* scatter_;
  QString note_;
  bool syncing_ = false;
};

}  // namespace chipfit
