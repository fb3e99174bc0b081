// TargetMatrixModel: check states, support flags, tooltips and target strings of the device × precision grid.
#include "views/models/target_matrix_model.h"

#include <QThread>
#include <algorithm>
#include <utility>

namespace chipfit {
namespace {

constexpr int kColumns = static_cast<int>(TargetMatrixModel::kPrecisions.size());

QString ToQString(const std::string& text) { return QString::fromStdString(text); }

QString DeviceHeader(const DeviceInfo& device) {
  if (device.name.empty()) return ToQString(device.Id());
  return ToQString(device.Id()) + QStringLiteral(" — ") + ToQString(device.name);
}

}  // namespace

TargetMatrixModel::TargetMatrixModel(QObject* parent) : QAbstractTableModel(parent) {}

void TargetMatrixModel::setDevices(DevicesModel::Snapshot devices) {
  // Views attached to this model live on its thread; a reset from elsewhere would race their reads.
  Q_ASSERT(QThread::currentThread() == thread());
  beginResetModel();
  devices_ = std::move(devices);
  const int rows = devices_ ? static_cast<int>(devices_->size()) : 0;
  checked_.assign(static_cast<size_t>(rows * kColumns), false);
  for (int row = 0; row < rows; ++row) {
    for (int column = 0; column < kColumns; ++column) {
      checked_[static_cast<size_t>(row * kColumns + column)] = supportedAt(row, column);
    }
  }
  endResetModel();
  emit checkedTargetsChanged();
}

bool TargetMatrixModel::supportedAt(int row, int column) const {
  return deviceAt(row).SupportFor(kPrecisions[static_cast<size_t>(column)]).ok;
}

std::vector<Target> TargetMatrixModel::checkedTargets() const {
  std::vector<Target> targets;
  for (int row = 0; row < rowCount(); ++row) {
    for (int column = 0; column < kColumns; ++column) {
      if (checked_[static_cast<size_t>(row * kColumns + column)]) targets.push_back(targetAt(index(row, column)));
    }
  }
  return targets;
}

int TargetMatrixModel::checkedCount() const {
  return static_cast<int>(std::count(checked_.begin(), checked_.end(), true));
}

int TargetMatrixModel::supportedCount() const {
  int count = 0;
  for (int row = 0; row < rowCount(); ++row) {
    for (int column = 0; column < kColumns; ++column) count += supportedAt(row, column) ? 1 : 0;
  }
  return count;
}

void TargetMatrixModel::setCheckedTargets(const std::vector<Target>& targets) {
  std::vector<bool> wanted(checked_.size(), false);
  for (const Target& target : targets) {
    const QModelIndex cell = indexOf(target);
    if (cell.isValid() && supportedAt(cell.row(), cell.column())) {
      wanted[static_cast<size_t>(cell.row() * kColumns + cell.column())] = true;
    }
  }
  if (wanted == checked_) return;
  checked_ = std::move(wanted);
  emitAllChanged();
}

void TargetMatrixModel::setAllChecked(bool checked) {
  std::vector<bool> wanted(checked_.size(), false);
  for (int row = 0; row < rowCount(); ++row) {
    for (int column = 0; column < kColumns; ++column) {
      wanted[static_cast<size_t>(row * kColumns + column)] = checked && supportedAt(row, column);
    }
  }
  if (wanted == checked_) return;
  checked_ = std::move(wanted);
  emitAllChanged();
}

void TargetMatrixModel::emitAllChanged() {
  if (rowCount() > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, kColumns - 1), {Qt::CheckStateRole});
  emit checkedTargetsChanged();
}

bool TargetMatrixModel::setChecked(const Target& target, bool checked) {
  const QModelIndex cell = indexOf(target);
  if (!cell.isValid() || !supportedAt(cell.row(), cell.column())) return false;
  const auto slot = static_cast<size_t>(cell.row() * kColumns + cell.column());
  if (checked_[slot] == checked) return true;
  checked_[slot] = checked;
  emit dataChanged(cell, cell, {Qt::CheckStateRole});
  emit checkedTargetsChanged();
  return true;
}

bool TargetMatrixModel::isChecked(const Target& target) const {
  const QModelIndex cell = indexOf(target);
  return cell.isValid() && checked_[static_cast<size_t>(cell.row() * kColumns + cell.column())];
}

bool TargetMatrixModel::isSupported(const Target& target) const {
  const QModelIndex cell = indexOf(target);
  return cell.isValid() && supportedAt(cell.row(), cell.column());
}

QModelIndex TargetMatrixModel::indexOf(const Target& target) const {
  int column = -1;
  for (int c = 0; c < kColumns; ++c) {
    if (kPrecisions[static_cast<size_t>(c)] == target.precision) column = c;
  }
  if (column < 0) return {};
  for (int row = 0; row < rowCount(); ++row) {
    const DeviceInfo& device = deviceAt(row);
    // Compared as ids so that "cpu" matches whatever index discovery gave the CPU.
    if (device.Id() == target.DeviceId()) return index(row, column);
  }
  return {};
}

Target TargetMatrixModel::targetAt(const QModelIndex& cell) const {
  const DeviceInfo& device = deviceAt(cell.row());
  return Target{device.kind, device.index, kPrecisions[static_cast<size_t>(cell.column())]};
}

int TargetMatrixModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !devices_) return 0;
  return static_cast<int>(devices_->size());
}

int TargetMatrixModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumns; }

QVariant TargetMatrixModel::data(const QModelIndex& cell, int role) const {
  if (!cell.isValid() || !devices_) return {};
  Q_ASSERT(checkIndex(cell, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid));
  const Support support = deviceAt(cell.row()).SupportFor(kPrecisions[static_cast<size_t>(cell.column())]);
  switch (role) {
    case Qt::DisplayRole: return support.ok ? QString() : QStringLiteral("—");
    case Qt::CheckStateRole:
      if (!support.ok) return {};
      return checked_[static_cast<size_t>(cell.row() * kColumns + cell.column())] ? Qt::Checked : Qt::Unchecked;
    case Qt::ToolTipRole:
      // A supported cell without a note still gets a tooltip: the target string the CLI would take.
      if (support.reason.empty()) return ToQString(targetAt(cell).ToString());
      return ToQString(support.reason);
    case Qt::TextAlignmentRole: return QVariant(static_cast<int>(Qt::AlignCenter));
    case TargetRole: return ToQString(targetAt(cell).ToString());
    case SupportedRole: return support.ok;
    default: break;
  }
  return {};
}

bool TargetMatrixModel::setData(const QModelIndex& cell, const QVariant& value, int role) {
  if (role != Qt::CheckStateRole || !cell.isValid() || !devices_) return false;
  return setChecked(targetAt(cell), static_cast<Qt::CheckState>(value.toInt()) == Qt::Checked);
}

Qt::ItemFlags TargetMatrixModel::flags(const QModelIndex& cell) const {
  if (!cell.isValid() || !devices_ || !supportedAt(cell.row(), cell.column())) return Qt::NoItemFlags;
  return Qt::ItemIsEnabled | Qt::ItemIsUserCheckable | Qt::ItemNeverHasChildren;
}

QVariant TargetMatrixModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
    return QAbstractTableModel::headerData(section, orientation, role);
  if (orientation == Qt::Horizontal) {
    if (section < 0 || section >= kColumns || role != Qt::DisplayRole) return {};
    return ToQString(std::string(PrecisionName(kPrecisions[static_cast<size_t>(section)])));
  }
  if (section < 0 || section >= rowCount()) return {};
  const DeviceInfo& device = deviceAt(section);
  if (role == Qt::DisplayRole) return DeviceHeader(device);
  QString tip = ToQString(device.name);
  if (!device.runtime_version.empty()) tip += QLatin1Char('\n') + ToQString(device.runtime_version);
  return tip;
}

}  // namespace chipfit
