// ModelInputsModel: rows from the declared and bound inputs, shape parsing and validation of edits.
#include "views/models/model_inputs_model.h"

#include <QFont>
#include <QRegularExpression>
#include <QThread>
#include <QVariantList>
#include <algorithm>
#include <utility>

namespace chipfit {
namespace {

QString ToQString(const std::string& text) { return QString::fromStdString(text); }

constexpr size_t kMaxShownDimName = 12;

bool IsDynamic(const TensorSpec& spec) {
  if (!spec.has_shape) return true;
  for (const DimSpec& dim : spec.dims) {
    if (!dim.is_static()) return true;
  }
  return false;
}

// Every dim has a value (an input of unknown rank has none until the user gives a shape).
bool IsComplete(const std::vector<int64_t>& dims) {
  return !dims.empty() && std::ranges::none_of(dims, [](int64_t dim) { return dim < 0; });
}

// The declared shape with every open dim at 1: what a tooltip offers as an example to type.
QString ExampleDims(const TensorSpec& spec) {
  if (!spec.has_shape) return QStringLiteral("1x3x224x224");
  QStringList parts;
  for (const DimSpec& dim : spec.dims) parts << QString::number(dim.is_static() ? dim.value : 1);
  return parts.join(QLatin1Char('x'));
}

QString JoinDims(const std::vector<int64_t>& dims) {
  QStringList parts;
  for (int64_t dim : dims) parts << QString::number(dim);
  return parts.join(QLatin1Char('x'));
}

// Dims from "1x3x48x192" or an error for `name` (rank, positivity and fixed dims are checked by the caller).
QString ParseDims(const QString& name, const QString& text, std::vector<int64_t>& dims) {
  static const QRegularExpression separators(QStringLiteral("\\s*[xX×,]\\s*"));
  const QString trimmed = text.trimmed();
  if (trimmed.isEmpty()) {
    return ModelInputsModel::tr("%1: enter the dims separated by 'x', e.g. 1x3x224x224").arg(name);
  }
  const QStringList parts = trimmed.split(separators);
  for (qsizetype i = 0; i < parts.size(); ++i) {
    bool ok = false;
    const qlonglong value = parts[i].toLongLong(&ok);
    if (!ok) {
      return ModelInputsModel::tr("%1: dimension %2 is '%3', not a whole number").arg(name).arg(i).arg(parts[i]);
    }
    if (value <= 0) {
      return ModelInputsModel::tr("%1: dimension %2 must be a positive integer, not %3").arg(name).arg(i).arg(value);
    }
    dims.push_back(value);
  }
  return {};
}

}  // namespace

ModelInputsModel::ModelInputsModel(std::shared_ptr<const ModelAnalysis> analysis, QObject* parent)
    : QAbstractTableModel(parent) {
  setAnalysis(std::move(analysis));
}

void ModelInputsModel::setAnalysis(std::shared_ptr<const ModelAnalysis> analysis) {
  Q_ASSERT(QThread::currentThread() == thread());
  beginResetModel();
  analysis_ = std::move(analysis);
  rows_.clear();
  last_error_.clear();
  if (analysis_) {
    for (const TensorSpec& declared : analysis_->declared_inputs) {
      InputRow row{.declared = declared, .dims = {}, .dynamic = IsDynamic(declared)};
      for (const DimSpec& dim : declared.dims) row.dims.push_back(dim.value);
      // The summary carries the bound dims: they are what the analysis ran with.
      for (const TensorSpec& bound : analysis_->summary.inputs) {
        if (bound.name != declared.name || !bound.has_shape || IsDynamic(bound)) continue;
        row.dims.clear();
        for (const DimSpec& dim : bound.dims) row.dims.push_back(dim.value);
      }
      rows_.push_back(std::move(row));
    }
  }
  endResetModel();
}

QStringList ModelInputsModel::bindings() const {
  QStringList list;
  for (const InputRow& row : rows_) {
    if (!row.dynamic || !IsComplete(row.dims)) continue;
    list << ToQString(row.declared.name) + QLatin1Char('=') + JoinDims(row.dims);
  }
  return list;
}

QString ModelInputsModel::shapeText(const InputRow& row) const {
  if (!row.declared.has_shape && row.dims.empty()) return tr("(unknown rank)");
  QStringList parts;
  for (size_t i = 0; i < row.dims.size(); ++i) {
    if (row.dims[i] >= 0) {
      parts << QString::number(row.dims[i]);
    } else {
      // "batch" says what a dim is; "p2o.DynamicDimension.0" (paddle2onnx) only makes the cell unreadable.
      // Long names are in the tooltip.
      const std::string param = i < row.declared.dims.size() ? row.declared.dims[i].param : "";
      parts << (!param.empty() && param.size() <= kMaxShownDimName ? ToQString(param) : QStringLiteral("?"));
    }
  }
  return parts.isEmpty() ? tr("scalar") : parts.join(QLatin1Char('x'));
}

int ModelInputsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int ModelInputsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant ModelInputsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return {};
  Q_ASSERT(checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid));
  const InputRow& row = rows_[static_cast<size_t>(index.row())];
  const auto column = static_cast<Column>(index.column());
  switch (role) {
    case Qt::DisplayRole:
    case Qt::EditRole:
      switch (column) {
        case kNameColumn: return ToQString(row.declared.name);
        case kDTypeColumn: return ToQString(row.declared.dtype);
        case kShapeColumn: return shapeText(row);
        case kColumnCount: break;
      }
      break;
    case RawValueRole:
      if (column == kShapeColumn) {
        QVariantList dims;
        for (int64_t dim : row.dims) dims << QVariant::fromValue<qlonglong>(dim);
        return dims;
      }
      return data(index, Qt::DisplayRole);
    case DynamicRole: return row.dynamic;
    case Qt::ToolTipRole:
      if (column == kShapeColumn && row.dynamic) {
        return tr("Declared %1. Double-click to set the dynamic dims, e.g. %2")
            .arg(ToQString(FormatDims(row.declared)), ExampleDims(row.declared));
      }
      break;
    case Qt::FontRole:
      // Dims that still wait for a value stand out: until they have one nothing is compiled.
      if (column == kShapeColumn && row.dynamic && !IsComplete(row.dims)) {
        QFont font;
        font.setItalic(true);
        return font;
      }
      break;
    default: break;
  }
  return {};
}

QVariant ModelInputsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
    return QAbstractTableModel::headerData(section, orientation, role);
  }
  switch (static_cast<Column>(section)) {
    case kNameColumn: return tr("Input");
    case kDTypeColumn: return tr("Type");
    case kShapeColumn: return tr("Shape");
    case kColumnCount: break;
  }
  return {};
}

Qt::ItemFlags ModelInputsModel::flags(const QModelIndex& index) const {
  Qt::ItemFlags result = QAbstractTableModel::flags(index);
  if (index.isValid() && index.column() == kShapeColumn && rows_[static_cast<size_t>(index.row())].dynamic) {
    result |= Qt::ItemIsEditable;
  }
  return result;
}

bool ModelInputsModel::reject(const QString& message) {
  last_error_ = message;
  emit invalidEdit(message);
  return false;
}

bool ModelInputsModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (role != Qt::EditRole || !index.isValid() || !(flags(index) & Qt::ItemIsEditable)) return false;
  InputRow& row = rows_[static_cast<size_t>(index.row())];
  const QString name = ToQString(row.declared.name);
  std::vector<int64_t> dims;
  if (QString error = ParseDims(name, value.toString(), dims); !error.isEmpty()) return reject(error);
  const QString declared = ToQString(FormatDims(row.declared));
  if (row.declared.has_shape && dims.size() != row.declared.dims.size()) {
    return reject(
        tr("%1: expected %2 dims (%3), got %4").arg(name).arg(row.declared.dims.size()).arg(declared).arg(dims.size()));
  }
  for (size_t i = 0; row.declared.has_shape && i < dims.size(); ++i) {
    const DimSpec& dim = row.declared.dims[i];
    if (dim.is_static() && dim.value != dims[i]) {
      return reject(tr("%1: dimension %2 is fixed at %3 (%4)").arg(name).arg(i).arg(dim.value).arg(declared));
    }
  }
  last_error_.clear();
  if (dims == row.dims) return true;  // nothing to re-analyse
  row.dims = std::move(dims);
  emit dataChanged(index, index);
  emit shapesChanged(bindings());
  return true;
}

}  // namespace chipfit
