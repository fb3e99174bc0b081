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
// that did not run (run order within each group, measured targets before projected ones).
//
// Projected targets (`profile --project`: hardware from the catalog, not measured here; RunResult::projections and the
// recommendation's "projected" names) are rows too, labelled as such: the target reads "h100-sxm:fp16 (projected)",
// the p50 cell holds the projection's median and its P10–P90 band, p90/p99 and planned memory have none, energy is
// estimated and accuracy is carried from a measured target of the same precision.
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
  // there is none; a projected target's p50 is its median, its target the plain name ("h100-sxm:fp16").
  // StatusRole: "recommended", "passes" or "rejected" in every column; TargetRole: "cpu:int8".
  // ProjectedRole: true on every cell of a projected target. BandRole: a projected target's P10–P90 band in ms as
  // a list of two doubles, null elsewhere.
  enum Role { RawValueRole = Qt::UserRole + 1, StatusRole, TargetRole, ProjectedRole, BandRole };

  explicit RecommendModel(QObject* parent = nullptr);

  // `recommendation` is Recommend()'s JSON for `run`; a null run or a non-object recommendation empties the model.
  void setRecommendation(std::shared_ptr<const RunResult> run, const nlohmann::json& recommendation);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  // A projected target's figures: from RunResult::projections, else from its recommendation entry.
  struct Projection {
    QString hardware_name{};
    std::string status = "ok";  // ok | unsupported
    QString reason{};
    std::optional<double> p50{}, p10{}, p90{}, energy_j{};
    std::string accuracy_from{};  // the measured target whose accuracy it carries, "" none
  };
  struct Row {
    const TargetResult* result = nullptr;    // null for a projected target
    std::optional<Projection> projection{};  // set for a projected target
    std::string target{};
    int rank = 0;  // 1-based; 0 when not ranked
    QString status{};
    std::optional<double> score{};
    bool tie = false;
    QString reasons{};  // every limit it broke, one per line
  };
  QVariant display(const Row& row, int column) const;
  QVariant raw(const Row& row, int column) const;
  QVariant toolTip(const Row& row, int column) const;
  QVariant projectedDisplay(const Row& row, int column) const;
  QVariant projectedRaw(const Row& row, int column) const;
  QVariant projectedToolTip(const Row& row, int column) const;
  bool ran(const Row& row) const;
  // The accuracy a projected row carries: its accuracy_from target's, measured here; null when none.
  const AccuracySummary* carriedAccuracy(const Row& row) const;

  std::shared_ptr<const RunResult> run_;  // keeps every Row::result alive
  std::vector<Row> rows_;
};

// One row per limit a target broke (recommendation.rejected): the limit, the value measured against it, its bound
// and by how much it is missed. A projected target's rows read "t4:int8 (projected)"; its latency value is its band's
// P90, the figure a latency limit holds a projection to.
class RejectionModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kTargetColumn, kLimitColumn, kValueColumn, kBoundColumn, kMissColumn, kReasonColumn, kColumnCount };
  // RawValueRole: the value and bound in the recommendation's units (ms, fraction, dB, MiB, mJ); for the miss
  // column, how far past the bound the value lies in the same unit (positive; null when not measured).
  // LimitRole: the limit's JSON name ("max_latency_ms", "status", …). ProjectedRole: true on a projected target's
  // rows. The target column's RawValueRole is the plain target name.
  enum Role { RawValueRole = Qt::UserRole + 1, LimitRole, ProjectedRole };

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
    bool projected = false;
    std::optional<double> band_p10{}, band_p90{};
  };
  QVariant display(const Row& row, int column) const;

  std::vector<Row> rows_;
};

}  // namespace chipfit
