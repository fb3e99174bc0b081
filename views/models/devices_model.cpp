// DevicesModel and CeilingsModel: columns, display strings, tooltips and raw values for discovered devices
// and their measured roofline ceilings.
#include "views/models/devices_model.h"

#include <QColor>
#include <QDateTime>
#include <QLocale>
#include <QStringList>
#include <QThread>
#include <algorithm>
#include <utility>

#include "views/charts/formats.h"

namespace chipfit {
namespace {

QString ToQString(std::string_view text) { return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size())); }

QStringList SupportedPrecisions(const DeviceInfo& device) {
  QStringList names;
  for (const auto& entry : device.precisions) {
    if (entry.support.ok) names << ToQString(PrecisionName(entry.precision));
  }
  return names;
}

// Why a precision is missing matters more than that it is: the tooltip is where a user learns that
// bf16 needs avx512_bf16, or that fp16 on this OpenCL device is storage only.
QString PrecisionsToolTip(const DeviceInfo& device) {
  QStringList unsupported;
  QStringList notes;
  for (const auto& entry : device.precisions) {
    const QString line =
        ToQString(PrecisionName(entry.precision)) + QStringLiteral(": ") + ToQString(entry.support.reason);
    if (!entry.support.ok) {
      unsupported << line;
    } else if (!entry.support.reason.empty()) {
      notes << line;
    }
  }
  QStringList parts;
  const QString indent = QStringLiteral("\n  ");
  if (!unsupported.isEmpty()) parts << DevicesModel::tr("Unsupported:") + indent + unsupported.join(indent);
  if (!notes.isEmpty()) parts << DevicesModel::tr("Notes:") + indent + notes.join(indent);
  if (parts.isEmpty()) return DevicesModel::tr("Every precision this device offers is supported.");
  return parts.join(QStringLiteral("\n"));
}

// Features can run to dozens of ISA flags; wrap them so the tooltip stays narrower than the screen.
QString WrapWords(const std::vector<std::string>& words, qsizetype width) {
  QString text;
  qsizetype line_length = 0;
  for (const auto& word : words) {
    const QString piece = ToQString(word);
    if (line_length > 0 && line_length + 1 + piece.size() > width) {
      text += QStringLiteral("\n  ");
      line_length = 0;
    } else if (line_length > 0) {
      text += QLatin1Char(' ');
      ++line_length;
    }
    text += piece;
    line_length += piece.size();
  }
  return text;
}

QString NameToolTip(const DeviceInfo& device) {
  QStringList lines;
  lines << ToQString(device.name);
  if (!device.driver_version.empty()) lines << DevicesModel::tr("Driver: %1").arg(ToQString(device.driver_version));
  for (const auto& [key, value] : device.properties) lines << ToQString(key) + QStringLiteral(": ") + ToQString(value);
  if (!device.features.empty()) {
    lines << DevicesModel::tr("Features:") + QStringLiteral("\n  ") + WrapWords(device.features, 80);
  }
  return lines.join(QStringLiteral("\n"));
}

QString RuntimeToolTip(const DeviceInfo& device) {
  QString text = ToQString(device.runtime_version);
  if (!device.driver_version.empty()) {
    text += QLatin1Char('\n') + DevicesModel::tr("Driver: %1").arg(ToQString(device.driver_version));
  }
  return text;
}

// The line of `report.methods` that says how `precision`'s peak (or, without one, the bandwidth) was
// measured, without its "fp32 peak: " lead: the row already names the precision.
QString HowText(const CeilingReport& report, std::optional<Precision> precision) {
  const std::string lead = precision ? std::string(PrecisionName(*precision)) + " peak: " : "memory bandwidth: ";
  for (const std::string& method : report.methods) {
    if (method.rfind(lead, 0) == 0) return ToQString(std::string_view(method).substr(lead.size()));
  }
  return {};
}

QDateTime MeasuredAt(const CeilingReport& report) {
  QDateTime time = QDateTime::fromString(ToQString(report.measured_at), Qt::ISODate);
  if (time.isValid()) time = time.toUTC();
  return time;
}

QString MemoryText(uint64_t bytes) {
  if (bytes == 0) return DevicesModel::tr("unknown");
  return QLocale().formattedDataSize(static_cast<qint64>(bytes), 1, QLocale::DataSizeIecFormat);
}

// "fp32 223 GFLOP/s, bf16 432 GFLOP/s, 32.9 GB/s (2 threads; measured while busy (…): low)".
QString CeilingText(const CeilingReport& c) {
  QStringList parts;
  for (const auto& [precision, gflops] : c.measured.peak_gflops) {
    if (gflops > 0) {
      parts << ToQString(PrecisionName(precision)) + QLatin1Char(' ') + ToQString(formats::FormatSig(gflops)) +
                   QStringLiteral(" GFLOP/s");
    }
  }
  // A bandwidth of 0 is one not measured.
  if (c.measured.memory_bandwidth_gbps > 0) {
    parts << ToQString(formats::FormatSig(c.measured.memory_bandwidth_gbps)) + QStringLiteral(" GB/s");
  }
  QString text = parts.isEmpty() ? DevicesModel::tr("no figure") : parts.join(QStringLiteral(", "));
  const std::string conditions = formats::FormatCeilingConditions(c);
  if (!conditions.empty()) text += QStringLiteral(" (") + ToQString(conditions) + QLatin1Char(')');
  return text;
}

}  // namespace

DevicesModel::DevicesModel(Snapshot devices, QObject* parent)
    : QAbstractTableModel(parent), devices_(std::move(devices)) {}

void DevicesModel::setDevices(Snapshot devices) {
  // Views attached to this model live on its thread; a reset from elsewhere would race their reads.
  Q_ASSERT(QThread::currentThread() == thread());
  beginResetModel();
  devices_ = std::move(devices);
  endResetModel();
}

void DevicesModel::setCeilings(std::vector<CeilingReport> ceilings) {
  Q_ASSERT(QThread::currentThread() == thread());
  ceilings_ = std::move(ceilings);
  if (rowCount() > 0) emit dataChanged(index(0, kCeilingsColumn), index(rowCount() - 1, kCeilingsColumn));
}

std::vector<const CeilingReport*> DevicesModel::ceilingsOf(const DeviceInfo& device) const {
  std::vector<const CeilingReport*> out;
  // The key names the device and, for a CPU, the threads: an entry of another machine or driver, or
  // one written before the thread count was recorded, is not this device's.
  for (const CeilingReport& c : ceilings_) {
    if (c.device_key == CeilingKey(device, c.threads)) out.push_back(&c);
  }
  std::sort(out.begin(), out.end(),
            [](const CeilingReport* a, const CeilingReport* b) { return a->threads < b->threads; });
  return out;
}

int DevicesModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !devices_) return 0;
  return static_cast<int>(devices_->size());
}

int DevicesModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant DevicesModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !devices_) return {};
  Q_ASSERT(checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid));
  const DeviceInfo& device = (*devices_)[static_cast<size_t>(index.row())];
  const auto column = static_cast<Column>(index.column());

  switch (role) {
    case Qt::DisplayRole:
      switch (column) {
        case kIdColumn: return ToQString(device.Id());
        case kNameColumn: return ToQString(device.name);
        case kVendorColumn: return ToQString(device.vendor);
        case kComputeUnitsColumn:
          return device.compute_units > 0 ? QString::number(device.compute_units) : tr("unknown");
        case kMemoryColumn: return MemoryText(device.memory_bytes);
        case kRuntimeColumn: return ToQString(device.runtime_version);
        case kPrecisionsColumn: return SupportedPrecisions(device).join(QLatin1Char(' '));
        case kCeilingsColumn: {
          QStringList texts;
          for (const CeilingReport* c : ceilingsOf(device)) texts << CeilingText(*c);
          return texts.isEmpty() ? tr("not measured (Measure again)") : texts.join(QStringLiteral("; "));
        }
        case kColumnCount: break;
      }
      break;
    case RawValueRole:
      switch (column) {
        case kComputeUnitsColumn: return device.compute_units;
        case kMemoryColumn: return QVariant::fromValue<qulonglong>(device.memory_bytes);
        case kPrecisionsColumn: return SupportedPrecisions(device);
        case kColumnCount: break;
        default: return data(index, Qt::DisplayRole);  // text columns: the text is the raw value
      }
      break;
    case Qt::ToolTipRole:
      if (column == kPrecisionsColumn) return PrecisionsToolTip(device);
      if (column == kNameColumn) return NameToolTip(device);
      if (column == kRuntimeColumn) return RuntimeToolTip(device);
      if (column == kCeilingsColumn) {
        // When and how each figure was measured, and the notes (a busy machine, estimates).
        QStringList lines;
        for (const CeilingReport* c : ceilingsOf(device)) {
          lines << tr("Measured %1").arg(ToQString(c->measured_at));
          for (const std::string& m : c->methods) lines << QStringLiteral("  ") + ToQString(m);
          for (const std::string& n : c->notes) lines << QStringLiteral("  ") + ToQString(n);
        }
        return lines.isEmpty() ? QVariant() : QVariant(lines.join(QLatin1Char('\n')));
      }
      break;
    case Qt::ForegroundRole:
      if (column == kCeilingsColumn) {
        const auto ceilings = ceilingsOf(device);
        // Figures measured while other processes held the CPUs are low: the warning tone.
        if (std::any_of(ceilings.begin(), ceilings.end(),
                        [](const CeilingReport* c) { return c->MeasuredWhileBusy(); }))
          return QColor(0xa0, 0x5a, 0x00);
      }
      break;
    case Qt::TextAlignmentRole:
      if (column == kComputeUnitsColumn || column == kMemoryColumn) {
        return (Qt::AlignRight | Qt::AlignVCenter).toInt();
      }
      break;
    default: break;
  }
  return {};
}

QVariant DevicesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
    return QAbstractTableModel::headerData(section, orientation, role);
  }
  switch (static_cast<Column>(section)) {
    case kIdColumn: return tr("Id");
    case kNameColumn: return tr("Name");
    case kVendorColumn: return tr("Vendor");
    case kComputeUnitsColumn: return tr("Compute units");
    case kMemoryColumn: return tr("Memory");
    case kRuntimeColumn: return tr("Runtime");
    case kPrecisionsColumn: return tr("Precisions");
    case kCeilingsColumn: return tr("Roofline ceilings");
    case kColumnCount: break;
  }
  return {};
}

CeilingsModel::CeilingsModel(QObject* parent) : QAbstractTableModel(parent) {}

void CeilingsModel::setCeilings(const DevicesModel::Snapshot& devices, std::vector<CeilingReport> ceilings) {
  Q_ASSERT(QThread::currentThread() == thread());
  beginResetModel();
  ceilings_ = std::move(ceilings);
  rows_.clear();
  for (const DeviceInfo& device : devices ? *devices : std::vector<DeviceInfo>{}) {
    std::vector<const CeilingReport*> reports;
    for (const CeilingReport& c : ceilings_) {
      if (c.device_key == CeilingKey(device, c.threads)) reports.push_back(&c);
    }
    std::sort(reports.begin(), reports.end(),
              [](const CeilingReport* a, const CeilingReport* b) { return a->threads < b->threads; });
    if (reports.empty()) rows_.push_back({.device_id = device.Id()});
    for (const CeilingReport* report : reports) {
      const size_t before = rows_.size();
      for (const auto& [precision, gflops] : report->measured.peak_gflops) {
        rows_.push_back({.device_id = device.Id(), .report = report, .precision = precision, .gflops = gflops});
      }
      if (rows_.size() == before) rows_.push_back({.device_id = device.Id(), .report = report});
    }
  }
  endResetModel();
}

int CeilingsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int CeilingsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant CeilingsModel::display(const Row& row, Column column) const {
  const QString none = QStringLiteral("–");
  if (row.report == nullptr) {
    if (column == kDeviceColumn) return ToQString(row.device_id);
    if (column == kPrecisionColumn) return tr("not measured yet: press Measure again");
    return {};
  }
  const CeilingReport& r = *row.report;
  switch (column) {
    case kDeviceColumn: return ToQString(row.device_id);
    case kPrecisionColumn: return row.precision ? ToQString(PrecisionName(*row.precision)) : none;
    case kPeakColumn:
      return row.gflops > 0 ? ToQString(formats::FormatSig(row.gflops)) + QStringLiteral(" GFLOP/s") : none;
    case kTheoreticalColumn:
      return row.precision && row.gflops > 0 ? ToQString(PeakShareText(r, *row.precision, row.gflops)) : none;
    case kBandwidthColumn:
      return r.measured.memory_bandwidth_gbps > 0
                 ? ToQString(formats::FormatSig(r.measured.memory_bandwidth_gbps)) + QStringLiteral(" GB/s")
                 : none;
    case kThreadsColumn: return r.threads > 0 ? QString::number(r.threads) : none;
    case kMeasuredColumn: {
      const QDateTime at = MeasuredAt(r);
      QString text =
          at.isValid() ? at.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")) : ToQString(r.measured_at);
      if (r.MeasuredWhileBusy()) text += tr(", while busy: low");
      return text;
    }
    case kHowColumn: return HowText(r, row.precision);
    case kColumnCount: break;
  }
  return {};
}

QVariant CeilingsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return {};
  Q_ASSERT(checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid));
  const Row& row = rows_[static_cast<size_t>(index.row())];
  const auto column = static_cast<Column>(index.column());
  switch (role) {
    case Qt::DisplayRole: return display(row, column);
    case RawValueRole:
      if (column == kPeakColumn) return row.gflops;
      if (column == kBandwidthColumn) return row.report ? row.report->measured.memory_bandwidth_gbps : 0.0;
      if (column == kThreadsColumn) return row.report ? row.report->threads : 0;
      if (column == kMeasuredColumn) return row.report ? MeasuredAt(*row.report) : QDateTime();
      return display(row, column);
    case Qt::ToolTipRole: {
      if (row.report == nullptr) return {};
      // When and how, every figure of the device and the notes (a busy machine, what an estimate assumes).
      QStringList lines;
      lines << tr("Measured %1 (UTC)").arg(ToQString(row.report->measured_at));
      if (row.report->MeasuredWhileBusy()) lines << ToQString(formats::FormatCeilingConditions(*row.report));
      for (const std::string& m : row.report->methods) lines << QStringLiteral("  ") + ToQString(m);
      for (const std::string& n : row.report->notes) lines << QStringLiteral("  ") + ToQString(n);
      return lines.join(QLatin1Char('\n'));
    }
    case Qt::ForegroundRole:
      if (row.report == nullptr && column == kPrecisionColumn) return QColor(0x70, 0x70, 0x70);
      if (row.report != nullptr && row.report->MeasuredWhileBusy() && column == kMeasuredColumn)
        return QColor(0xa0, 0x5a, 0x00);
      break;
    case Qt::TextAlignmentRole:
      if (column == kPeakColumn || column == kBandwidthColumn || column == kThreadsColumn)
        return (Qt::AlignRight | Qt::AlignVCenter).toInt();
      break;
    default: break;
  }
  return {};
}

QVariant CeilingsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
    return QAbstractTableModel::headerData(section, orientation, role);
  }
  switch (static_cast<Column>(section)) {
    case kDeviceColumn: return tr("Device");
    case kPrecisionColumn: return tr("Precision");
    case kPeakColumn: return tr("Peak");
    case kTheoreticalColumn: return tr("Against the theoretical peak");
    case kBandwidthColumn: return tr("Memory bandwidth");
    case kThreadsColumn: return tr("Threads");
    case kMeasuredColumn: return tr("Measured");
    case kHowColumn: return tr("How");
    case kColumnCount: break;
  }
  return {};
}

}  // namespace chipfit
