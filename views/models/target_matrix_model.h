// TargetMatrixModel: devices × precisions, one checkable cell per target a profile may run.
#pragma once

#include <QAbstractTableModel>
#include <array>
#include <vector>

#include "core/runtime/target.h"
#include "views/models/devices_model.h"

namespace chipfit {

// Rows are the devices of a discovery snapshot, columns the precisions. A cell is checkable only where
// the device supports the precision; the others stay in the grid, disabled, so the user sees what is
// missing and (in the tooltip) why, instead of wondering where a target went.
class TargetMatrixModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  static constexpr std::array<Precision, 5> kPrecisions = {Precision::kFp32, Precision::kTf32, Precision::kFp16,
                                                           Precision::kBf16, Precision::kInt8};
  enum Role {
    TargetRole = Qt::UserRole + 1,  // QString "cpu:int8", for every cell, supported or not
    SupportedRole,                  // bool
  };

  explicit TargetMatrixModel(QObject* parent = nullptr);

  // A model reset with every supported cell checked, as `profile --all-targets` would run.
  void setDevices(DevicesModel::Snapshot devices);
  const DevicesModel::Snapshot& devices() const { return devices_; }

  // Device order, then precision order: the order a profile runs them in.
  std::vector<Target> checkedTargets() const;
  int checkedCount() const;
  int supportedCount() const;
  // Checks exactly these; targets of unknown devices or unsupported precisions are ignored.
  void setCheckedTargets(const std::vector<Target>& targets);
  void setAllChecked(bool checked);
  // False (and nothing changes) for an unknown device or an unsupported precision.
  bool setChecked(const Target& target, bool checked);
  bool isChecked(const Target& target) const;
  bool isSupported(const Target& target) const;
  // The cell of `target`, supported or not; invalid when its device is not in the snapshot.
  QModelIndex indexOf(const Target& target) const;
  Target targetAt(const QModelIndex& index) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 signals:
  void checkedTargetsChanged();

 private:
  const DeviceInfo& deviceAt(int row) const { return (*devices_)[static_cast<size_t>(row)]; }
  bool supportedAt(int row, int column) const;
  void emitAllChanged();

  DevicesModel::Snapshot devices_;
  // One flag per cell, row-major; never true for an unsupported cell.
  std::vector<bool> checked_;
};

}  // namespace chipfit
