// TargetPlacementModel: per target, the nodes its device cannot run and why, plus targets that did not compile.
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <vector>

#include "profilers/session/model_analysis.h"

namespace chipfit {

class TargetPlacementModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kTargetColumn, kNodeColumn, kOpColumn, kReasonColumn, kColumnCount };
  enum Role {
    RawValueRole = Qt::UserRole + 1,  // the strings as they are, "" where a compile-failure row has no node
    StatusRole,                       // QString: ok (a fallback row) | unsupported | failed
  };

  explicit TargetPlacementModel(std::shared_ptr<const ModelAnalysis> analysis = {}, QObject* parent = nullptr);

  void setAnalysis(std::shared_ptr<const ModelAnalysis> analysis);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    size_t placement = 0;
    const Fallback* fallback = nullptr;  // nullptr: the target did not compile
  };

  std::shared_ptr<const ModelAnalysis> analysis_;
  std::vector<Row> rows_;  // point into *analysis_, which the model keeps alive
};

}  // namespace chipfit
