// RecommendModel and RejectionModel: the Recommend page's ranked list of targets and the limits each rejected target
// broke, read from an immutable run and the recommendation JSON it was ranked into.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <memory>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "profilers/run_result.h"

namespace chipfit {

// One row per target of the run: the ranked ones in rank order, then those that ran but broke a limit, then those
// that did not run (run order within each group).
class RecommendModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kRankColumn,
    kTargetColumn,
    kP50Column,
    kP90Column,
    kP99Column,
    kDriftColumn,
    kEnergyColumn,
    kMemoryColumn,
    kScoreColumn,
    kStatusColumn,
    kColumnCount
  };
  // RawValueRole: numbers as numbers (rank; ms; output SQNR dB; energy J; planned peak bytes; score), null where
  // there is none; StatusRole: "recommended", "passes" or "rejected" in every column; TargetRole: "cpu:int8".
  enum Role { RawValueRole = Qt::UserRole + 1, StatusRole, TargetRole };

  explicit RecommendModel(QObject* parent = nullptr);

  // `recommendation` is Recommend()'s JSON for `run`; a null run or a non-object recommendation empties the model.
  void setRecommendation(std::shared_ptr<const RunResult> run, const nlohmann::json& recommendation);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    const TargetResult* result = nullptr;
    std::string target{};
    int rank = 0;  // 1-based; 0 when not ranked
    QString status{};
    std::optional<double> score{};
    bool tie = false;
    QString reasons{};  // every limit it broke, one per line
  };
  QVariant display(const Row& row, int column) const;
  QVariant raw(const Row& row, int column) const;

  std::shared_ptr<const RunResult> run_;  // keeps every Row::result alive
  std::vector<Row> rows_;
};

// One row per limit a target broke (recommendation.rejected): the limit, the value measured against it, its bound
// and by how much it is missed.
class RejectionModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kTargetColumn, kLimitColumn, kValueColumn, kBoundColumn, kMissColumn, kReasonColumn, kColumnCount };
  // RawValueRole: the value and bound in the recommendation's units (ms, fraction, dB, MiB, mJ); for the miss
  // column, how far past the bound the value lies in the same unit (positive; null when not measured).
  // LimitRole: the limit's JSON name ("max_latency_ms", "status", …).
  enum Role { RawValueRole = Qt::UserRole + 1, LimitRole };

  explicit RejectionModel(QObject* parent = nullptr);

  void setRecommendation(const nlohmann::json& recommendation);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    QString target, limit, reason, latency_stat;
    std::optional<double> value{}, bound{};
  };
  QVariant display(const Row& row, int column) const;

  std::vector<Row> rows_;
};

}  // namespace chipfit
