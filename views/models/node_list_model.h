// NodeListModel: one row per imported node (name, op, inputs, outputs); NodeFilterModel: its name/op search.
#pragma once

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <memory>

#include "profilers/session/model_analysis.h"

namespace chipfit {

class NodeListModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kNameColumn, kOpColumn, kInputsColumn, kOutputsColumn, kColumnCount };
  // Name and op as QString, inputs and outputs as a QStringList with one "name: dims dtype" per value.
  enum Role { RawValueRole = Qt::UserRole + 1 };

  explicit NodeListModel(std::shared_ptr<const ModelAnalysis> analysis = {}, QObject* parent = nullptr);

  // A model reset: a new analysis is a new snapshot, never an edit of the old one.
  void setAnalysis(std::shared_ptr<const ModelAnalysis> analysis);
  const std::shared_ptr<const ModelAnalysis>& analysis() const { return analysis_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const ModelAnalysis> analysis_;
};

// Searches name and op only: a value name such as "conv1_out" in a node's inputs would otherwise match
// every reader of it, which is not what a user typing a node's name is after.
class NodeFilterModel : public QSortFilterProxyModel {
  Q_OBJECT

 public:
  explicit NodeFilterModel(QObject* parent = nullptr);

  // Exporters such as paddle2onnx keep every weight in a Constant node: hundreds of rows that bury the
  // layers. Shown by default; the page hides them.
  void setShowConstants(bool show);
  bool showConstants() const { return show_constants_; }

 protected:
  bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;

 private:
  bool show_constants_ = true;
};

}  // namespace chipfit
