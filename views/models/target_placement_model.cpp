// TargetPlacementModel: flattening placements into rows, display strings and raw values.
#include "views/models/target_placement_model.h"

#include <QBrush>
#include <QColor>
#include <QThread>
#include <utility>

namespace chipfit {
namespace {

QString ToQString(const std::string& text) { return QString::fromStdString(text); }

}  // namespace

TargetPlacementModel::TargetPlacementModel(std::shared_ptr<const ModelAnalysis> analysis, QObject* parent)
    : QAbstractTableModel(parent) {
  setAnalysis(std::move(analysis));
}

void TargetPlacementModel::setAnalysis(std::shared_ptr<const ModelAnalysis> analysis) {
  Q_ASSERT(QThread::currentThread() == thread());
  beginResetModel();
  analysis_ = std::move(analysis);
  rows_.clear();
  if (analysis_) {
    for (size_t i = 0; i < analysis_->placements.size(); ++i) {
      const TargetPlacement& placement = analysis_->placements[i];
      if (placement.status != "ok") rows_.push_back({.placement = i, .fallback = nullptr});
      for (const Fallback& fallback : placement.fallbacks) rows_.push_back({.placement = i, .fallback = &fallback});
    }
  }
  endResetModel();
}

int TargetPlacementModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int TargetPlacementModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant TargetPlacementModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return {};
  Q_ASSERT(checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid));
  const Row& row = rows_[static_cast<size_t>(index.row())];
  const TargetPlacement& placement = analysis_->placements[row.placement];
  const auto column = static_cast<Column>(index.column());
  switch (role) {
    case Qt::DisplayRole:
      if (!row.fallback && column == kNodeColumn) return tr("(whole model)");
      if (!row.fallback && column == kOpColumn) return ToQString(placement.status);
      [[fallthrough]];
    case RawValueRole:
      switch (column) {
        case kTargetColumn: return ToQString(placement.target.ToString());
        case kNodeColumn: return row.fallback ? ToQString(row.fallback->node) : QString();
        case kOpColumn: return row.fallback ? ToQString(row.fallback->op) : QString();
        case kReasonColumn: return ToQString(row.fallback ? row.fallback->reason : placement.error);
        case kColumnCount: break;
      }
      break;
    case StatusRole: return row.fallback ? QStringLiteral("ok") : ToQString(placement.status);
    case Qt::ToolTipRole:
      // Device reasons are whole sentences; the column cuts them, the tooltip does not.
      if (column == kReasonColumn) return ToQString(row.fallback ? row.fallback->reason : placement.error);
      break;
    case Qt::ForegroundRole:
      // A target that runs nothing is a different kind of answer from one that runs all but a node.
      if (!row.fallback) return QBrush(QColor(0xb0, 0x00, 0x20));
      break;
    default: break;
  }
  return {};
}

QVariant TargetPlacementModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
    return QAbstractTableModel::headerData(section, orientation, role);
  }
  switch (static_cast<Column>(section)) {
    case kTargetColumn: return tr("Target");
    case kNodeColumn: return tr("Node");
    case kOpColumn: return tr("Op");
    case kReasonColumn: return tr("Reason");
    case kColumnCount: break;
  }
  return {};
}

}  // namespace chipfit
