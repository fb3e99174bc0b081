// DevicesModel: one row per discovered device, read from an immutable snapshot of DeviceInfo; CeilingsModel:
// one row per device and precision of their measured roofline ceilings.
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "devices/device.h"
#include "profilers/memory/ceilings.h"

namespace chipfit {

class DevicesModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kIdColumn,
    kNameColumn,
    kVendorColumn,
    kComputeUnitsColumn,
    kMemoryColumn,
    kRuntimeColumn,
    kPrecisionsColumn,
    kCeilingsColumn,
    kColumnCount
  };
  // Numbers as numbers (memory bytes as qulonglong, compute units as int, supported precisions as a
  // QStringList) so sorting, charts and tests never parse the display strings back.
  enum Role { RawValueRole = Qt::UserRole + 1 };

  // Shared and const: discovery builds the vector once on a worker thread and nobody mutates it after,
  // so the GUI thread can read it without locks.
  using Snapshot = std::shared_ptr<const std::vector<DeviceInfo>>;

  explicit DevicesModel(Snapshot devices = {}, QObject* parent = nullptr);

  // Replaces every row (a model reset): a new discovery is a new snapshot, never an edit.
  void setDevices(Snapshot devices);
  const Snapshot& devices() const { return devices_; }
  // The measured roofline ceilings (the cache `chipfit devices --measure` and profiles fill): each
  // device shows the entries measured on it, one per thread count, with their busy flag.
  void setCeilings(std::vector<CeilingReport> ceilings);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  // The ceilings measured on `device`, fewest threads first.
  std::vector<const CeilingReport*> ceilingsOf(const DeviceInfo& device) const;

  Snapshot devices_;
  std::vector<CeilingReport> ceilings_;
};

// The measured roofline ceilings, one row per device, thread count and precision (the cache holds a CPU's
// ceilings per thread count): peak GFLOP/s, its share of the theoretical peak, the device's memory
// bandwidth, and when and how they were measured. A device without ceilings has one row that says so.
class CeilingsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kDeviceColumn,
    kPrecisionColumn,
    kPeakColumn,
    kTheoreticalColumn,
    kBandwidthColumn,
    kThreadsColumn,
    kMeasuredColumn,
    kHowColumn,
    kColumnCount
  };
  // Numbers as numbers: GFLOP/s and GB/s as double (0: not measured), threads as int, the measurement
  // time as a UTC QDateTime.
  enum Role { RawValueRole = Qt::UserRole + 1 };

  explicit CeilingsModel(QObject* parent = nullptr);

  // Replaces every row: the devices discovered and the ceilings cache as last read.
  void setCeilings(const DevicesModel::Snapshot& devices, std::vector<CeilingReport> ceilings);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    std::string device_id;
    const CeilingReport* report = nullptr;  // null: the device has no measured ceilings
    std::optional<Precision> precision{};   // none: the report measured no peak, only the bandwidth
    double gflops = 0;
  };
  QVariant display(const Row& row, Column column) const;

  std::vector<CeilingReport> ceilings_;
  std::vector<Row> rows_;
};

}  // namespace chipfit
