// ModelPage: what chipfit makes of an opened model: summary, op histogram, inputs, placement and nodes.
#pragma once

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <memory>
#include <mutex>
#include <stop_token>
#include <vector>

#include "core/runtime/target.h"
#include "profilers/session/model_analysis.h"
#include "views/models/model_inputs_model.h"
#include "views/models/node_list_model.h"
#include "views/models/target_placement_model.h"

class QChart;
class QChartView;
class QCheckBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QStackedWidget;
class QMimeData;
class QProgressBar;
class QPushButton;
class QTableView;
class QTimer;

namespace chipfit {

// The step an analysis is in, written by the pool thread and read by the page's timer: shared, so the
// pool thread never holds the page.
struct AnalysisStep {
  std::mutex mutex;
  std::string text;
};

// What a pool thread hands back to the page: the analysis, or why there is none.
struct ModelLoadOutcome {
  quint64 generation = 0;  // which openModel call this answers; older answers are dropped
  QString path{};
  QStringList shapes{};
  std::shared_ptr<const ModelAnalysis> analysis{};
  QString error{};
  bool cancelled = false;
};

class ModelPage : public QWidget {
  Q_OBJECT

 public:
  explicit ModelPage(QWidget* parent = nullptr);

  // The first local .onnx file among dragged URLs; empty when there is none (the window's drops too).
  static QString OnnxFileIn(const QMimeData* mime);
  ~ModelPage() override;

  // Analyses `path` with the dynamic-dim bindings `shapes` ("NAME=1x3x48x192") on a pool thread; the
  // page keeps showing the previous model until the new one is ready. A call while another analysis
  // runs cancels that one.
  void openModel(const QString& path, const QStringList& shapes = {});
  // The targets whose placement the page shows (the discovered ones); re-analyses an open model.
  void setTargets(std::vector<Target> targets);

  bool isLoading() const { return loading_; }
  // Cancel while analysing: the analysis stops after its current compile and its result, if it comes,
  // is dropped; the page keeps the model it showed before (or its hint).
  void cancelAnalysis();
  // While analysing: "Analysing cls.onnx: compiling for cpu:int8 (2 of 4) … 12 s".
  QString progressText() const;
  QString modelPath() const { return model_path_; }
  std::shared_ptr<const ModelAnalysis> analysis() const { return analysis_; }
  QString statusText() const;

  NodeListModel* nodeModel() const { return node_model_; }
  NodeFilterModel* nodeFilter() const { return node_filter_; }
  ModelInputsModel* inputsModel() const { return inputs_model_; }
  TargetPlacementModel* placementModel() const { return placement_model_; }
  QLineEdit* filterEdit() const { return filter_edit_; }
  QTableView* inputsTable() const { return inputs_table_; }
  QChart* opChart() const { return op_chart_; }

 signals:
  // After every successful analysis (a re-analysis with new dims or targets too): the shapes are the
  // bindings it used, so a Run page can start from them.
  void modelLoaded(const QString& path, const QString& sha256, const QStringList& shapes);
  // The page shows `message` in its own status line; a window may also show a dialog.
  void loadFailed(const QString& path, const QString& message);
  // A .onnx file was dropped on the page; emitted before it is opened.
  void modelDropped(const QString& path);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  QWidget* buildContent();
  QWidget* buildSummary();
  QWidget* buildInputs();
  QWidget* buildOpChart();
  QWidget* buildNodes();
  QWidget* buildPlacement();

  void onAnalysisFinished();
  void showAnalysis(const QString& path, std::shared_ptr<const ModelAnalysis> analysis);
  void showSummary(const ModelAnalysis& analysis);
  void showOpHistogram(const ModelSummary& summary);
  void showPlacementSummary(const ModelAnalysis& analysis);
  void showStatus(const QString& text, bool error);
  void setBusy(bool busy);
  void updateProgress();
  void updateNodeCount();

  std::vector<Target> targets_;
  QString model_path_;  // of the analysis on screen
  std::shared_ptr<const ModelAnalysis> analysis_;
  bool loading_ = false;
  QString pending_path_;  // of the analysis under way
  QStringList pending_shapes_;
  quint64 generation_ = 0;
  std::stop_source stop_;
  QFutureWatcher<ModelLoadOutcome> watcher_;
  std::shared_ptr<AnalysisStep> step_;
  QElapsedTimer elapsed_;
  QTimer* progress_timer_;

  NodeListModel* node_model_;
  NodeFilterModel* node_filter_;
  ModelInputsModel* inputs_model_;
  TargetPlacementModel* placement_model_;

  QLabel* status_label_;
  QWidget* busy_row_ = nullptr;
  QLabel* busy_label_ = nullptr;
  QProgressBar* busy_bar_ = nullptr;
  QPushButton* cancel_button_ = nullptr;
  QStackedWidget* stack_;
  QFormLayout* summary_form_ = nullptr;
  QLabel* summary_file_ = nullptr;
  QLabel* summary_format_ = nullptr;
  QLabel* summary_producer_ = nullptr;
  QLabel* summary_nodes_ = nullptr;
  QLabel* summary_parameters_ = nullptr;
  QLabel* summary_flops_ = nullptr;
  QLabel* summary_memory_ = nullptr;
  QLabel* summary_outputs_ = nullptr;
  QLabel* summary_notes_ = nullptr;
  QTableView* inputs_table_ = nullptr;
  QLabel* inputs_hint_ = nullptr;
  QLabel* inputs_error_ = nullptr;
  QChart* op_chart_ = nullptr;
  QChartView* op_chart_view_ = nullptr;
  QLineEdit* filter_edit_ = nullptr;
  QLabel* node_count_ = nullptr;
  QCheckBox* show_constants_ = nullptr;
  QTableView* node_table_ = nullptr;
  QLabel* placement_summary_ = nullptr;
  QTableView* placement_table_ = nullptr;
};

}  // namespace chipfit
