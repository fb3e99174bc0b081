// RecommendModel and RejectionModel: rows from the run's typed targets and the recommendation JSON's verdicts.
#include "views/models/recommend_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QStringList>
#include <cmath>
#include <map>

#include "core/recommend/recommend.h"
#include "views/charts/formats.h"

namespace chipfit {
namespace {

using nlohmann::json;

QString Q(const std::string& s) { return QString::fromStdString(s); }

std::optional<double> Finite(double v) { return std::isfinite(v) ? std::optional(v) : std::nullopt; }

std::optional<double> Number(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  return Finite(j[key].get<double>());
}

std::string String(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

QVariant Raw(std::optional<double> v) { return v ? QVariant(*v) : QVariant(); }

// Four significant digits under a millisecond (the sample CNN runs in 15 µs), three decimals above.
QString Ms(double ms) { return QString::number(ms, 'f', ms < 1 ? 4 : 3); }

// The charts' and the reports' formats (views/charts/formats.h), so a figure reads the same on the page and in an
// exported report.
QString Energy(double joules) { return Q(formats::FormatEnergy(joules)); }
QString Bytes(double bytes) { return Q(formats::FormatBytes(bytes)); }
QString Sqnr(double db) { return Q(formats::FormatSqnr(db)); }

QString Percent(double fraction) { return QStringLiteral("%1 %").arg(fraction * 100, 0, 'f', 1); }

// How a limit reads in the table, for its JSON name.
QString LimitName(const QString& limit, const QString& latency_stat) {
  if (limit == QLatin1String("max_latency_ms")) return QStringLiteral("max latency (%1)").arg(latency_stat);
  if (limit == QLatin1String("min_top1")) return QStringLiteral("min top-1/task agreement");
  if (limit == QLatin1String("min_sqnr_db")) return QStringLiteral("min output SQNR");
  if (limit == QLatin1String("max_memory_mb")) return QStringLiteral("max planned memory");
  if (limit == QLatin1String("max_energy_mj")) return QStringLiteral("max energy per inference");
  if (limit == QLatin1String("accuracy_guard")) return QStringLiteral("accuracy guard");
  if (limit == QLatin1String("device")) return QStringLiteral("share on its own device");
  if (limit == QLatin1String("status")) return QStringLiteral("did not run");
  return limit;
}

enum class Unit { kMs, kFraction, kDb, kMib, kMj, kNone };

// The unit of a rejection's value and bound. The accuracy guard bounds task agreement (a fraction) or, where no
// output has a task metric, output SQNR: its bound says which.
Unit UnitOf(const QString& limit, std::optional<double> bound) {
  if (limit == QLatin1String("max_latency_ms")) return Unit::kMs;
  if (limit == QLatin1String("min_top1") || limit == QLatin1String("device")) return Unit::kFraction;
  if (limit == QLatin1String("min_sqnr_db")) return Unit::kDb;
  if (limit == QLatin1String("max_memory_mb")) return Unit::kMib;
  if (limit == QLatin1String("max_energy_mj")) return Unit::kMj;
  if (limit == QLatin1String("accuracy_guard") && bound) {
    return *bound == kGuardMinSqnrDb ? Unit::kDb : *bound > 0 ? Unit::kFraction : Unit::kNone;
  }
  return Unit::kNone;
}

QString WithUnit(double v, Unit unit) {
  switch (unit) {
    case Unit::kMs: return Ms(v) + QStringLiteral(" ms");
    case Unit::kFraction: return Percent(v);
    case Unit::kDb: return QStringLiteral("%1 dB").arg(v, 0, 'f', 1);
    case Unit::kMib: return QStringLiteral("%1 MiB").arg(v, 0, 'g', 4);
    case Unit::kMj: return QStringLiteral("%1 mJ").arg(v, 0, 'g', 4);
    case Unit::kNone: return QString::number(v, 'g', 4);
  }
  return QString::number(v, 'g', 4);
}

// Limits that cap a value from above; the others (agreement, SQNR, the guard, the device share) from below.
bool IsUpperBound(const QString& limit) { return limit.startsWith(QLatin1String("max_")); }

std::optional<double> Miss(const QString& limit, std::optional<double> value, std::optional<double> bound) {
  if (!value || !bound) return std::nullopt;
  return IsUpperBound(limit) ? *value - *bound : *bound - *value;
}

}  // namespace

RecommendModel::RecommendModel(QObject* parent) : QAbstractTableModel(parent) {}

void RecommendModel::setRecommendation(std::shared_ptr<const RunResult> run, const json& recommendation) {
  beginResetModel();
  rows_.clear();
  run_ = std::move(run);
  if (run_ && recommendation.is_object()) {
    std::map<std::string, int> rank;
    if (recommendation.contains("ranked") && recommendation["ranked"].is_array()) {
      int next = 1;
      for (const json& t : recommendation["ranked"]) {
        if (t.is_string()) rank[t.get<std::string>()] = next++;
      }
    }
    std::map<std::string, const json*> scores;
    if (recommendation.contains("scores") && recommendation["scores"].is_array()) {
      for (const json& s : recommendation["scores"]) scores[String(s, "target")] = &s;
    }
    std::map<std::string, QStringList> reasons;
    if (recommendation.contains("rejected") && recommendation["rejected"].is_array()) {
      for (const json& r : recommendation["rejected"]) reasons[String(r, "target")] << Q(String(r, "reason"));
    }
    const std::string best = String(recommendation, "best");

    std::vector<Row> ranked, broke, not_run;
    for (const auto& t : run_->targets) {
      Row row{.result = t.get(), .target = t->target.ToString()};
      if (const auto it = rank.find(row.target); it != rank.end()) {
        row.rank = it->second;
        row.status = row.target == best ? QStringLiteral("recommended") : QStringLiteral("passes");
        if (const auto s = scores.find(row.target); s != scores.end()) {
          row.score = Number(*s->second, "score");
          row.tie = s->second->value("tie", false);
        }
        ranked.push_back(std::move(row));
        continue;
      }
      row.status = QStringLiteral("rejected");
      row.reasons = reasons[row.target].join(QLatin1Char('\n'));
      (t->status == "ok" ? broke : not_run).push_back(std::move(row));
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const Row& a, const Row& b) { return a.rank < b.rank; });
    for (auto* group : {&ranked, &broke, &not_run}) {
      for (Row& row : *group) rows_.push_back(std::move(row));
    }
  }
  endResetModel();
}

int RecommendModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int RecommendModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant RecommendModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::DisplayRole) {
    switch (section) {
      case kRankColumn: return tr("Rank");
      case kTargetColumn: return tr("Target");
      case kP50Column: return tr("p50 ms");
      case kP90Column: return tr("p90 ms");
      case kP99Column: return tr("p99 ms");
      case kDriftColumn: return tr("Drift");
      case kEnergyColumn: return tr("Energy / inference");
      case kMemoryColumn: return tr("Planned memory");
      case kScoreColumn: return tr("Score");
      case kStatusColumn: return tr("Status");
      default: return {};
    }
  }
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case kP50Column:
      case kP90Column:
      case kP99Column: return tr("End-to-end latency of the timed runs (no per-layer instrumentation)");
      case kDriftColumn:
        return tr(
            "Worst output's SQNR against the reference run on the same inputs; top-1 or task agreement "
            "where an output has one");
      case kEnergyColumn: return tr("Measured by a sensor where the run found one, otherwise estimated");
      case kMemoryColumn: return tr("Planned peak: activation arenas after buffer reuse, plus the weights");
      case kScoreColumn: return tr("Objective (or weighted) value over the best passing value: 1 is the best");
      default: return {};
    }
  }
  return {};
}

QVariant RecommendModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& row = rows_[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole: return display(row, index.column());
    case RawValueRole: return raw(row, index.column());
    case StatusRole: return row.status;
    case TargetRole: return Q(row.target);
    case Qt::TextAlignmentRole:
      return index.column() == kTargetColumn || index.column() == kStatusColumn || index.column() == kDriftColumn ||
                     index.column() == kEnergyColumn
                 ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                 : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole:
      if (index.column() == kStatusColumn && !row.reasons.isEmpty()) return row.reasons;
      if (index.column() == kEnergyColumn && row.result->energy) {
        return row.result->energy->source.rfind("estimated", 0) == 0
                   ? tr("Estimated by the energy model (op counts and bytes moved), not measured")
                   : tr("Measured by %1").arg(Q(row.result->energy->source));
      }
      if (index.column() == kDriftColumn && row.result->accuracy) {
        return tr("Against %1 on %2 sample(s)%3")
            .arg(Q(row.result->accuracy->reference))
            .arg(row.result->accuracy->samples)
            .arg(row.result->accuracy->random_inputs ? tr(" of seeded random inputs") : QString());
      }
      if (index.column() == kScoreColumn && row.tie) return tr("Within 3 % of another score: ordered by p50");
      return {};
    case Qt::ForegroundRole:
      if (row.status == QLatin1String("rejected")) return QBrush(QColor(0x80, 0x80, 0x80));
      return {};
    case Qt::FontRole:
      if (row.status == QLatin1String("recommended")) {
        QFont bold;
        bold.setBold(true);
        return bold;
      }
      return {};
    default: return {};
  }
}

QVariant RecommendModel::display(const Row& row, int column) const {
  const TargetResult& t = *row.result;
  const bool ran = t.status == "ok";
  switch (column) {
    case kRankColumn: return row.rank > 0 ? QVariant(row.rank) : QVariant(QStringLiteral("—"));
    case kTargetColumn: return Q(row.target);
    case kP50Column: return ran ? Ms(t.latency.p50) : QString();
    case kP90Column: return ran ? Ms(t.latency.p90) : QString();
    case kP99Column: return ran ? Ms(t.latency.p99) : QString();
    case kDriftColumn: {
      if (!t.accuracy) return ran ? tr("not measured") : QString();
      QString text = Sqnr(t.accuracy->output_sqnr_db);
      if (t.accuracy->top1_agreement) {
        text += tr(", top-1 %1").arg(Percent(*t.accuracy->top1_agreement));
      } else if (t.accuracy->task_agreement) {
        text += QStringLiteral(", %1 %2").arg(Q(t.accuracy->task_metric), Percent(*t.accuracy->task_agreement));
      }
      return text;
    }
    case kEnergyColumn:
      if (!t.energy) return ran ? tr("not measured") : QString();
      return QStringLiteral("%1 (%2)").arg(Energy(t.energy->joules), Q(t.energy->source));
    case kMemoryColumn: return ran ? Bytes(static_cast<double>(t.peak_memory_bytes)) : QString();
    case kScoreColumn:
      if (!row.score) return QString();
      return row.tie ? tr("%1 (tie)").arg(*row.score, 0, 'f', 3) : QString::number(*row.score, 'f', 3);
    case kStatusColumn: {
      if (row.status != QLatin1String("rejected")) return row.status;
      return t.status == "ok" ? row.status : tr("rejected (%1)").arg(Q(t.status));
    }
    default: return {};
  }
}

QVariant RecommendModel::raw(const Row& row, int column) const {
  const TargetResult& t = *row.result;
  const bool ran = t.status == "ok";
  switch (column) {
    case kRankColumn: return row.rank > 0 ? QVariant(row.rank) : QVariant();
    case kTargetColumn: return Q(row.target);
    case kP50Column: return ran ? Raw(Finite(t.latency.p50)) : QVariant();
    case kP90Column: return ran ? Raw(Finite(t.latency.p90)) : QVariant();
    case kP99Column: return ran ? Raw(Finite(t.latency.p99)) : QVariant();
    case kDriftColumn: return t.accuracy ? Raw(Finite(t.accuracy->output_sqnr_db)) : QVariant();
    case kEnergyColumn: return t.energy ? Raw(Finite(t.energy->joules)) : QVariant();
    case kMemoryColumn: return ran ? QVariant(static_cast<qulonglong>(t.peak_memory_bytes)) : QVariant();
    case kScoreColumn: return Raw(row.score);
    case kStatusColumn: return row.status;
    default: return {};
  }
}

RejectionModel::RejectionModel(QObject* parent) : QAbstractTableModel(parent) {}

void RejectionModel::setRecommendation(const json& recommendation) {
  beginResetModel();
  rows_.clear();
  if (recommendation.is_object() && recommendation.contains("rejected") && recommendation["rejected"].is_array()) {
    QString stat = QStringLiteral("p99");
    if (recommendation.contains("limits")) {
      const std::string s = String(recommendation["limits"], "latency_stat");
      if (!s.empty()) stat = Q(s);
    }
    for (const json& r : recommendation["rejected"]) {
      rows_.push_back(Row{.target = Q(String(r, "target")),
                          .limit = Q(String(r, "limit")),
                          .reason = Q(String(r, "reason")),
                          .latency_stat = stat,
                          .value = Number(r, "value"),
                          .bound = Number(r, "bound")});
    }
  }
  endResetModel();
}

int RejectionModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int RejectionModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

QVariant RejectionModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kTargetColumn: return tr("Target");
    case kLimitColumn: return tr("Limit broken");
    case kValueColumn: return tr("Value");
    case kBoundColumn: return tr("Bound");
    case kMissColumn: return tr("Missed by");
    case kReasonColumn: return tr("Reason");
    default: return {};
  }
}

QVariant RejectionModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& row = rows_[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole: return display(row, index.column());
    case Qt::ToolTipRole: return row.reason;
    case LimitRole: return row.limit;
    case RawValueRole:
      switch (index.column()) {
        case kTargetColumn: return row.target;
        case kLimitColumn: return row.limit;
        case kValueColumn: return Raw(row.value);
        case kBoundColumn: return Raw(row.bound);
        case kMissColumn: return Raw(Miss(row.limit, row.value, row.bound));
        case kReasonColumn: return row.reason;
        default: return {};
      }
    default: return {};
  }
}

QVariant RejectionModel::display(const Row& row, int column) const {
  const Unit unit = UnitOf(row.limit, row.bound);
  switch (column) {
    case kTargetColumn: return row.target;
    case kLimitColumn: return LimitName(row.limit, row.latency_stat);
    case kValueColumn:
      if (row.value) return WithUnit(*row.value, unit);
      if (row.limit == QLatin1String("status")) return QStringLiteral("—");
      // The guard's only check without a value: int8 calibrated on random data.
      return row.limit == QLatin1String("accuracy_guard") ? tr("random calibration") : tr("not measured");
    case kBoundColumn: return row.bound && unit != Unit::kNone ? WithUnit(*row.bound, unit) : QStringLiteral("—");
    case kMissColumn: {
      const auto miss = Miss(row.limit, row.value, row.bound);
      if (!miss) {
        if (row.limit == QLatin1String("status")) return tr("did not run");
        return row.limit == QLatin1String("accuracy_guard") ? tr("accuracy unknown")
                                                            : tr("not measured: cannot be met");
      }
      const QString amount =
          unit == Unit::kFraction ? tr("%1 percentage points").arg(*miss * 100, 0, 'f', 1) : WithUnit(*miss, unit);
      if (IsUpperBound(row.limit)) {
        return *row.bound > 0 ? tr("over by %1 (%2×)").arg(amount).arg(*row.value / *row.bound, 0, 'f', 2)
                              : tr("over by %1").arg(amount);
      }
      return tr("under by %1").arg(amount);
    }
    case kReasonColumn: return row.reason;
    default: return {};
  }
}

}  // namespace chipfit
