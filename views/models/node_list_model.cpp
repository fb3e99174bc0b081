// NodeListModel and NodeFilterModel: display strings, tooltips, raw values and the name/op filter.
#include "views/models/node_list_model.h"

#include <QRegularExpression>
#include <QStringList>
#include <QThread>
#include <utility>

namespace chipfit {
namespace {

QString ToQString(const std::string& text) { return QString::fromStdString(text); }

QStringList ToQStringList(const std::vector<std::string>& texts) {
  QStringList list;
  list.reserve(static_cast<qsizetype>(texts.size()));
  for (const auto& text : texts) list << ToQString(text);
  return list;
}

}  // namespace

NodeListModel::NodeListModel(std::shared_ptr<const ModelAnalysis> analysis, QObject* parent)
    : QAbstractTableModel(parent), analysis_(std::move(analysis)) {}

void NodeListModel::setAnalysis(std::shared_ptr<const ModelAnalysis> analysis) {
  Q_ASSERT(QThread::currentThread() == thread());
  beginResetModel();
  analysis_ = std::move(analysis);
  endResetModel();
}

int NodeListModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !analysis_) return 0;
  return static_cast<int>(analysis_->nodes.size());
}

int NodeListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant NodeListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !analysis_) return {};
  Q_ASSERT(checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid));
  const NodeRow& node = analysis_->nodes[static_cast<size_t>(index.row())];
  const auto column = static_cast<Column>(index.column());
  switch (role) {
    case Qt::DisplayRole:
      switch (column) {
        case kNameColumn: return ToQString(node.name);
        case kOpColumn: return ToQString(node.op);
        case kInputsColumn: return ToQStringList(node.inputs).join(QStringLiteral(", "));
        case kOutputsColumn: return ToQStringList(node.outputs).join(QStringLiteral(", "));
        case kColumnCount: break;
      }
      break;
    case RawValueRole:
      switch (column) {
        case kNameColumn: return ToQString(node.name);
        case kOpColumn: return ToQString(node.op);
        case kInputsColumn: return ToQStringList(node.inputs);
        case kOutputsColumn: return ToQStringList(node.outputs);
        case kColumnCount: break;
      }
      break;
    case Qt::ToolTipRole:
      // Value lists run long (a Conv's input, weight and bias); one per line reads better than a row.
      if (column == kInputsColumn) return ToQStringList(node.inputs).join(QLatin1Char('\n'));
      if (column == kOutputsColumn) return ToQStringList(node.outputs).join(QLatin1Char('\n'));
      if (column == kNameColumn) return ToQString(node.name);
      break;
    default: break;
  }
  return {};
}

QVariant NodeListModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
    return QAbstractTableModel::headerData(section, orientation, role);
  }
  switch (static_cast<Column>(section)) {
    case kNameColumn: return tr("Name");
    case kOpColumn: return tr("Op");
    case kInputsColumn: return tr("Inputs");
    case kOutputsColumn: return tr("Outputs");
    case kColumnCount: break;
  }
  return {};
}

NodeFilterModel::NodeFilterModel(QObject* parent) : QSortFilterProxyModel(parent) {
  setFilterCaseSensitivity(Qt::CaseInsensitive);
}

void NodeFilterModel::setShowConstants(bool show) {
  if (show == show_constants_) return;
  show_constants_ = show;
  invalidateRowsFilter();
}

bool NodeFilterModel::filterAcceptsRow(int source_row, const QModelIndex& source_parent) const {
  if (!show_constants_) {
    const QModelIndex op = sourceModel()->index(source_row, NodeListModel::kOpColumn, source_parent);
    if (sourceModel()->data(op, NodeListModel::RawValueRole).toString() == QLatin1String("Constant")) return false;
  }
  const QRegularExpression& pattern = filterRegularExpression();
  if (pattern.pattern().isEmpty()) return true;
  for (int column : {NodeListModel::kNameColumn, NodeListModel::kOpColumn}) {
    const QModelIndex cell = sourceModel()->index(source_row, column, source_parent);
    if (sourceModel()->data(cell, NodeListModel::RawValueRole).toString().contains(pattern)) return true;
  }
  return false;
}

}  // namespace chipfit
