// HistoryModel and HistoryFilterModel: columns, display strings, tooltips, raw values and the row filter.
#include "views/models/history_model.h"

#include <QColor>
#include <QFileInfo>
#include <QStringList>
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

// "conv1, conv2 and 3 more": the cell stays one short line; the tooltip names every node.
QString WhatIfText(const std::vector<std::string>& nodes) {
  constexpr size_t kNamed = 3;
  QStringList names;
  for (size_t i = 0; i < nodes.size() && i < kNamed; ++i) names << ToQString(nodes[i]);
  QString text = names.join(QStringLiteral(", "));
  if (nodes.size() > kNamed) text += HistoryModel::tr(" and %1 more").arg(nodes.size() - kNamed);
  return HistoryModel::tr("%1 in fp32").arg(text);
}

QString WhatIfToolTip(const std::vector<std::string>& nodes) {
  QStringList lines;
  lines << HistoryModel::tr("What-if run: every target computed these %n layer(s) in fp32:", nullptr,
                            static_cast<int>(nodes.size()));
  for (const std::string& node : nodes) lines << QStringLiteral("  ") + ToQString(node);
  return lines.join(QLatin1Char('\n'));
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

QString HistoryModel::ShapesText(const std::string& shapes) {
  QStringList parts;
  for (const QString& binding : ToQString(shapes).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    const qsizetype eq = binding.indexOf(QLatin1Char('='));
    if (eq < 0) {
      parts << binding;
      continue;
    }
    // Only the dims get the multiplication sign: an input may well be called "x".
    QString dims = binding.mid(eq + 1);
    dims.replace(QLatin1Char('x'), QChar(0x00D7));
    parts << binding.left(eq) + QLatin1Char(' ') + dims;
  }
  return parts.join(QStringLiteral(", "));
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
        case kWhatIfColumn: return run.keep_fp32.empty() ? QString() : WhatIfText(run.keep_fp32);
        case kTargetsColumn: return QStringLiteral("%1/%2").arg(run.targets_ok).arg(run.targets);
        case kSourceColumn: return ToQString(run.source);
        case kShapesColumn: return run.shapes.empty() ? none : ShapesText(run.shapes);
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
        case kWhatIfColumn: return static_cast<int>(run.keep_fp32.size());  // sorts What-ifs together
        case kColumnCount: break;
        default: return data(index, Qt::DisplayRole);  // text columns: the text is the raw value
      }
      break;
    case RunIdRole: return QVariant::fromValue<qlonglong>(run.id);
    case WhatIfRole: return !run.keep_fp32.empty();
    case TargetsTotalRole:
      if (column == kTargetsColumn) return run.targets;
      break;
    case Qt::ToolTipRole:
      switch (column) {
        case kIdColumn: return ToQString(run.command);  // how the run was made, to repeat it by hand
        case kStartedColumn: return StartedToolTip(run);
        case kModelColumn: return ModelToolTip(run);
        case kTargetsColumn: return tr("%1 of %2 targets finished ok").arg(run.targets_ok).arg(run.targets);
        case kWhatIfColumn:
          if (!run.keep_fp32.empty()) return WhatIfToolTip(run.keep_fp32);
          break;
        case kThreadsColumn:
        case kShapesColumn:
          if (run.threads == 0 && run.shapes.empty()) return tr("Not recorded by the chipfit that made this run");
          break;
        default: break;
      }
      break;
    case Qt::ForegroundRole:
      if (column == kStatusColumn) return StatusColor(run.status);
      if (column == kWhatIfColumn) return QColor(0x1f, 0x5f, 0xa8);  // a mark to find, not a warning
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
    case kWhatIfColumn: return tr("What-if");
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
