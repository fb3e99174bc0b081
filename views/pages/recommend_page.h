// RecommendPage: the limits form, and, re-ranked live from a finished run's stored results, the ranked targets, the
// limits each rejected target broke, the Pareto chart and the recommendation's paragraph; Export report.
#pragma once

#include <QString>
#include <QWidget>
#include <memory>

#include "nlohmann/json.hpp"
#include "profilers/run_result.h"
#include "profilers/session/profile_session.h"
#include "views/models/recommend_model.h"

class QCheckBox;
class QChartView;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QTableView;

namespace chipfit {

// Every edit of the form re-ranks with RecommendRun on the run it holds: the same function `chipfit recommend`
// calls, on the figures already measured. The page has no session and no device: nothing is profiled again.
class LimitsModel;

class RecommendPage : public QWidget {
  Q_OBJECT

 public:
  // `limits`: the model's limits, shared with the Targets page (null: the page keeps its own).
  explicit RecommendPage(LimitsModel* limits = nullptr, QWidget* parent = nullptr);
  LimitsModel* limits() const { return limits_; }

  // The run to recommend from (immutable, shared); re-ranks at once with the form's limits. Null clears the page.
  void setRun(std::shared_ptr<const RunResult> run);
  std::shared_ptr<const RunResult> run() const { return run_; }

  // The form. Weights and the cost table are not on the form: setSettings keeps them and settings() returns them.
  RecommendSettings settings() const;
  void setSettings(const RecommendSettings& settings);

  // Recommend()'s JSON for the run under the form's settings; null without a run or when ranking failed (the
  // page then shows the error).
  const nlohmann::json& recommendation() const { return recommendation_; }
  // Wall time of the last re-rank (RecommendRun, cost table read included), in milliseconds.
  double lastRerankMs() const { return last_rerank_ms_; }

  // Writes the report of the run with the recommendation shown here, in the format its suffix names (.html .pdf
  // .csv .json): the bytes `chipfit report RUN --format F -o FILE` writes for a run whose stored recommendation was
  // made with these limits (the same views/report code, WriteReport). False, and *error set, on failure.
  bool exportReport(const QString& path, QString* error = nullptr);

  // File › Export report… and the page's button: a save dialog with a suggested name
  // ("<model>_run<id>.html" in the last export folder, else the model's), then an offer to open it.
  void exportClicked();
  QString suggestedReportPath() const;

  RecommendModel* rankedModel() const { return ranked_model_; }
  RejectionModel* rejectionModel() const { return rejection_model_; }
  QChartView* chartView() const { return chart_view_; }

 signals:
  void recommendationChanged();
  // "Choose data folder…" after an accuracy-guard rejection: the window opens the Targets page's chooser.
  void chooseDataFolderRequested();

 private:
  void rerank();
  void showRecommendation();
  void offerToOpen(const QString& path);

  std::shared_ptr<const RunResult> run_;
  nlohmann::json recommendation_;
  LimitsModel* limits_;
  double last_rerank_ms_ = 0;

  RecommendModel* ranked_model_;
  RejectionModel* rejection_model_;
  QTableView* ranked_table_ = nullptr;
  QTableView* rejection_table_ = nullptr;
  QChartView* chart_view_ = nullptr;
  QLabel* summary_label_ = nullptr;
  QLabel* status_label_ = nullptr;
  QPushButton* export_button_ = nullptr;
  QWidget* guard_actions_ = nullptr;  // shown while the accuracy guard rejects a target
};

}  // namespace chipfit
