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
class RecommendPage : public QWidget {
  Q_OBJECT

 public:
  explicit RecommendPage(QWidget* parent = nullptr);

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

  RecommendModel* rankedModel() const { return ranked_model_; }
  RejectionModel* rejectionModel() const { return rejection_model_; }
  QChartView* chartView() const { return chart_view_; }

 signals:
  void recommendationChanged();

 private:
  QWidget* buildForm();
  void rerank();
  void showRecommendation();
  void updateEnabled();
  void exportClicked();

  std::shared_ptr<const RunResult> run_;
  nlohmann::json recommendation_;
  RecommendSettings kept_;  // weights and cost table of the last setSettings
  double last_rerank_ms_ = 0;
  bool applying_ = false;  // setSettings is filling the form: one re-rank at the end, not one per field

  QCheckBox* max_latency_on_ = nullptr;
  QDoubleSpinBox* max_latency_ = nullptr;
  QComboBox* latency_stat_ = nullptr;
  QCheckBox* min_top1_on_ = nullptr;
  QDoubleSpinBox* min_top1_ = nullptr;
  QCheckBox* min_sqnr_on_ = nullptr;
  QDoubleSpinBox* min_sqnr_ = nullptr;
  QCheckBox* max_memory_on_ = nullptr;
  QDoubleSpinBox* max_memory_ = nullptr;
  QCheckBox* max_energy_on_ = nullptr;
  QDoubleSpinBox* max_energy_ = nullptr;
  QComboBox* objective_ = nullptr;
  QCheckBox* accuracy_guard_ = nullptr;

  RecommendModel* ranked_model_;
  RejectionModel* rejection_model_;
  QTableView* ranked_table_ = nullptr;
  QTableView* rejection_table_ = nullptr;
  QChartView* chart_view_ = nullptr;
  QLabel* summary_label_ = nullptr;
  QLabel* status_label_ = nullptr;
  QPushButton* export_button_ = nullptr;
};

}  // namespace chipfit
