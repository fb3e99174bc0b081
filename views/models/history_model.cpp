// HistoryModel and HistoryFilterModel: columns, display strings, tooltips, raw values and the row filter.
#include "views/models/history_model.h"

#include <QColor>
#include <QFileInfo>
#include <QThread>
#include <utility>

namespace chipfit {
namespace {

QString ToQString(const std::string& text) { return QString::fromStdString(text); }

// Fixed, not the locale's short format: it sorts as text too and never drops the seconds that tell
// two runs of one minute apart.
constexpr auto kLocalTimeFormat = "yyyy-MM-dd HH:mm:ss";

QString ModelToolTip(const RunSummary& run) {
  QString text = ToQString(run.model_path);
  if (!run.model_sha256.empty()) text += QStringLiteral("\nsha256 ") + ToQString(run.model_sha256);
  return text;
}

QString StartedToolTip(const RunSummary& run) {
  const QDateTime started = HistoryModel::StartedAt(run);
  QString text = HistoryModel::tr("Started %1 (UTC)").arg(ToQString(run.started_at));
  if (run.finished_at.empty()) return text + QLatin1Char('\n') + HistoryModel::tr("Never finished");
  const QDateTime finished = QDateTime::fromString(ToQString(run.finished_at), Qt::ISODate);
  text += QLatin1Char('\n') + HistoryModel::tr("Finished %1 (UTC)").arg(ToQString(run.finished_at));
  if (started.isValid() && finished.isValid()) {
    text += QLatin1Char('\n') + HistoryModel::tr("Took %1 s").arg(started.secsTo(finished));
  }
  return text;
}

// Anything but ok deserves a second look: a run killed mid-way, stopped, or failed.
QVariant StatusColor(const std::string& status) {
  if (status == "ok") return {};
  if (status == "failed") return QColor(0xb0, 0x00, 0x20);
  return QColor(0xa0, 0x5a, 0x00);  // incomplete, cancelled
}

}  // namespace

HistoryModel::HistoryModel(QObject* parent) : QAbstractTableModel(parent) {}

QDateTime HistoryModel::StartedAt(const RunSummary& run) {
  QDateTime time = QDateTime::fromString(ToQString(run.started_at), Qt::ISODate);
  if (time.isValid()) time = time.toUTC();
  return time;
}

void HistoryModel::setRuns(std::vector<RunSummary> runs) {
  // Views attached to this model live on its thread; a reset from elsewhere would race their reads.
  Q_ASSERT(QThread::currentThread() == thread());
  beginResetModel();
  runs_ = std::move(runs);
  endResetModel();
}

const RunSummary* HistoryModel::runAt(int row) const {
  if (row < 0 || static_cast<size_t>(row) >= runs_.size()) return nullptr;
  return &runs_[static_cast<size_t>(row)];
}

int HistoryModel::rowOf(int64_t run_id) const {
  for (size_t row = 0; row < runs_.size(); ++row) {
    if (runs_[row].id == run_id) return static_cast<int>(row);
  }
  return -1;
}

int HistoryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(runs_.size());
}

int HistoryModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant HistoryModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return {};
  Q_ASSERT(checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid));
  const RunSummary& run = runs_[static_cast<size_t>(index.row())];
  const auto column = static_cast<Column>(index.column());
  const QString none = QStringLiteral("–");

  switch (role) {
    case Qt::DisplayRole:
      switch (column) {
        case kIdColumn: return QString::number(run.id);
        case kStartedColumn: {
          const QDateTime started = StartedAt(run);
          return started.isValid() ? started.toLocalTime().toString(QLatin1String(kLocalTimeFormat))
                                   : ToQString(run.started_at);
        }
        case kModelColumn: return QFileInfo(ToQString(run.model_path)).fileName();
        case kStatusColumn: return ToQString(run.status);
        case kTargetsColumn: return QStringLiteral("%1/%2").arg(run.targets_ok).arg(run.targets);
        case kSourceColumn: return ToQString(run.source);
        case kShapesColumn: return run.shapes.empty() ? none : ToQString(run.shapes);
        case kThreadsColumn: return run.threads > 0 ? QString::number(run.threads) : none;
        case kHostColumn: return ToQString(run.hostname);
        case kVersionColumn: return ToQString(run.chipfit_version);
        case kColumnCount: break;
      }
      break;
    case RawValueRole:
      switch (column) {
        case kIdColumn: return QVariant::fromValue<qlonglong>(run.id);
        case kStartedColumn: return StartedAt(run);
        case kModelColumn: return ToQString(run.model_path);
        case kTargetsColumn: return run.targets_ok;
        case kThreadsColumn: return run.threads;
        case kShapesColumn: return ToQString(run.shapes);
        case kColumnCount: break;
        default: return data(index, Qt::DisplayRole);  // text columns: the text is the raw value
      }
      break;
    case RunIdRole: return QVariant::fromValue<qlonglong>(run.id);
    case TargetsTotalRole:
      if (column == kTargetsColumn) return run.targets;
      break;
    case Qt::ToolTipRole:
      switch (column) {
        case kIdColumn: return ToQString(run.command);  // how the run was made, to repeat it by hand
        case kStartedColumn: return StartedToolTip(run);
        case kModelColumn: return ModelToolTip(run);
        case kTargetsColumn: return tr("%1 of %2 targets finished ok").arg(run.targets_ok).arg(run.targets);
        case kThreadsColumn:
        case kShapesColumn:
          if (run.threads == 0 && run.shapes.empty()) return tr("Not recorded by the chipfit that made this run");
          break;
        default: break;
      }
      break;
    case Qt::ForegroundRole:
      if (column == kStatusColumn) return StatusColor(run.status);
      break;
    case Qt::TextAlignmentRole:
      if (column == kIdColumn || column == kTargetsColumn || column == kThreadsColumn) {
        return (Qt::AlignRight | Qt::AlignVCenter).toInt();
      }
      break;
    default: break;
  }
  return {};
}

QVariant HistoryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
    return QAbstractTableModel::headerData(section, orientation, role);
  }
  switch (static_cast<Column>(section)) {
    case kIdColumn: return tr("Run");
    case kStartedColumn: return tr("Started");
    case kModelColumn: return tr("Model");
    case kStatusColumn: return tr("Status");
    case kTargetsColumn: return tr("Targets ok");
    case kSourceColumn: return tr("Source");
    case kShapesColumn: return tr("Shapes");
    case kThreadsColumn: return tr("Threads");
    case kHostColumn: return tr("Host");
    case kVersionColumn: return tr("chipfit");
    case kColumnCount: break;
  }
  return {};
}

HistoryFilterModel::HistoryFilterModel(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(HistoryModel::RawValueRole);
}

void HistoryFilterModel::setModelText(const QString& text) {
  if (text == model_text_) return;
  model_text_ = text;
  invalidateRowsFilter();
}

void HistoryFilterModel::setStatus(const QString& status) {
  if (status == status_) return;
  status_ = status;
  invalidateRowsFilter();
}

void HistoryFilterModel::setSource(const QString& source) {
  if (source == source_) return;
  source_ = source;
  invalidateRowsFilter();
}

void HistoryFilterModel::setDateRange(const QDate& from, const QDate& to) {
  if (from == from_ && to == to_) return;
  from_ = from;
  to_ = to;
  invalidateRowsFilter();
}

bool HistoryFilterModel::filterAcceptsRow(int source_row, const QModelIndex& source_parent) const {
  const auto raw = [&](int column) {
    return sourceModel()->data(sourceModel()->index(source_row, column, source_parent), HistoryModel::RawValueRole);
  };
  if (!model_text_.isEmpty() &&
      !raw(HistoryModel::kModelColumn).toString().contains(model_text_, Qt::CaseInsensitive)) {
    return false;
  }
  if (!status_.isEmpty() && raw(HistoryModel::kStatusColumn).toString() != status_) return false;
  if (!source_.isEmpty() && raw(HistoryModel::kSourceColumn).toString() != source_) return false;
  if (from_.isValid() || to_.isValid()) {
    const QDateTime started = raw(HistoryModel::kStartedColumn).toDateTime();
    // A start that does not parse cannot be placed in a range: it is kept out rather than guessed.
    if (!started.isValid()) return false;
    const QDate day = started.toLocalTime().date();
    if (from_.isValid() && day < from_) return false;
    if (to_.isValid() && day > to_) return false;
  }
  return true;
}

}  // namespace chipfit
