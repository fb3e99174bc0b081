// HeatMapModel: layer × target, each cell the layer's time, energy or drift on that target relative
// to a baseline target (cpu:fp32 when the run has it), coloured: where splitting the model across
// devices or precisions would pay. Reads a LayerTableModel's rows; widget-free.
#pragma once

#include <QAbstractTableModel>
#include <QColor>

#include "core/store/layer_verdict.h"
#include "views/models/layer_table_model.h"

namespace chipfit {

class HeatMapModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum class Measure { kTime, kEnergy, kDrift };
  // RawRole: the cell's number (ratio to the baseline, or dB for drift; NaN when absent).
  enum Role { RawRole = Qt::UserRole + 1, KeyRole };

  explicit HeatMapModel(const LayerTableModel* layers, QObject* parent = nullptr);

  void setMeasure(Measure measure);
  Measure measure() const { return measure_; }
  // The baseline's index in the layer table: cpu:fp32 when present, else the first target.
  int baseline() const;
  double value(int row, int target) const;
  // Time only: the layer on `target` against the baseline by the same-kernel rule (JudgeLayer); a row
  // that ran the same kernel on both and moved within noise is kSameKernel and painted neutral.
  LayerJudgement judgement(int row, int target) const;
  // The colour of a value: green where a target beats the baseline, red where it loses (log scale,
  // saturating at 4×); drift: red below 30 dB, green near exact.
  QColor colour(double value) const;
  // The colour of a cell: colour(value), neutral for the same kernel within noise.
  QColor cellColour(int row, int target) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  const LayerTableModel* layers_;
  Measure measure_ = Measure::kTime;
};

}  // namespace chipfit
