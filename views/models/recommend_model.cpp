// RecommendModel and RejectionModel: rows from the run's typed targets and the recommendation JSON's verdicts.
#include "views/models/recommend_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QStringList>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include "core/recommend/recommend.h"
#include "profilers/precision_mix.h"
#include "views/charts/formats.h"
#include "views/models/gui_wording.h"

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
// One unit rule with the charts and the Layers table: "473 µs", "9.93 ms", "1.20 s".
QString Ms(double ms) { return QString::fromStdString(formats::FormatDuration(ms)); }

// The charts' and the reports' formats (views/charts/formats.h), so a figure reads the same on the page and in an
// exported report.
QString Energy(double joules) { return Q(formats::FormatEnergy(joules)); }
QString Bytes(double bytes) { return Q(formats::FormatBytes(bytes)); }
QString Sqnr(double db) { return Q(formats::FormatSqnr(db)); }

QString Percent(double fraction) { return QStringLiteral("%1 %").arg(fraction * 100, 0, 'f', 1); }

// A projection's figures to three significant digits, as `chipfit project` prints them: its band is ×/÷ 1.5 wide or
// more, so a fourth digit would claim a precision it does not have.
QString Sig(double v) { return Q(formats::FormatSig(v, 3)); }

// "0.705–2.17", or "" without both edges.
QString BandText(std::optional<double> p10, std::optional<double> p90) {
  if (!p10 || !p90) return {};
  return QStringLiteral("%1–%2").arg(Sig(*p10), Sig(*p90));
}

QString ProjectedName(const QString& target) { return RecommendModel::tr("%1 (projected)").arg(target); }

// The band of a recommendation entry's "band_ms": [p10, p90], either null.
std::pair<std::optional<double>, std::optional<double>> BandOf(const json& entry) {
  if (!entry.is_object() || !entry.contains("band_ms") || !entry["band_ms"].is_array() ||
      entry["band_ms"].size() != 2) {
    return {};
  }
  const json& band = entry["band_ms"];
  auto edge = [](const json& v) { return v.is_number() ? Finite(v.get<double>()) : std::nullopt; };
  return {edge(band[0]), edge(band[1])};
}

bool IsProjected(const json& entry) {
  return entry.is_object() && entry.contains("projected") && entry["projected"].is_boolean() &&
         entry["projected"].get<bool>();
}

// "59.3 dB, top-1 100.0 %": the worst output's SQNR and the agreement the limits read.
QString DriftText(const AccuracySummary& accuracy) {
  QString text = Sqnr(accuracy.output_sqnr_db);
  if (accuracy.top1_agreement) {
    text += RecommendModel::tr(", top-1 %1").arg(Percent(*accuracy.top1_agreement));
  } else if (accuracy.task_agreement) {
    text += QStringLiteral(", %1 %2").arg(Q(accuracy.task_metric), Percent(*accuracy.task_agreement));
  }
  return text;
}

QString ScoreText(std::optional<double> score, bool tie) {
  if (!score) return QString();
  return tie ? RecommendModel::tr("%1 (tie)").arg(*score, 0, 'f', 3) : QString::number(*score, 'f', 3);
}

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
    case Unit::kMs: return Ms(v);
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
    std::map<std::string, const json*> first_rejection;
    if (recommendation.contains("rejected") && recommendation["rejected"].is_array()) {
      for (const json& r : recommendation["rejected"]) {
        const std::string target = String(r, "target");
        reasons[target] << GuiWording(String(r, "reason"));
        first_rejection.emplace(target, &r);
      }
    }
    const std::string best = String(recommendation, "best");

    // Projected targets, in the run's order: its projections, then any the recommendation marks projected that the
    // run does not hold (a recommendation made elsewhere); their figures then come from its entries.
    std::vector<std::pair<std::string, Projection>> projected;
    std::map<std::string, size_t> projected_index;
    auto entry_of = [&](const std::string& target) -> const json* {
      if (const auto s = scores.find(target); s != scores.end()) return s->second;
      if (const auto r = first_rejection.find(target); r != first_rejection.end()) return r->second;
      return nullptr;
    };
    if (run_->projections.is_array()) {
      for (const json& p : run_->projections) {
        const std::string target = String(p, "target");
        if (target.empty() || projected_index.contains(target)) continue;
        Projection projection{.hardware_name = Q(String(p, "hardware_name")),
                              .status = p.value("status", std::string("unsupported")),
                              .reason = Q(String(p, "reason")),
                              .p50 = Number(p, "p50_ms"),
                              .p10 = Number(p, "p10_ms"),
                              .p90 = Number(p, "p90_ms")};
        if (p.contains("energy_j") && p["energy_j"].is_object()) projection.energy_j = Number(p["energy_j"], "value");
        if (const json* entry = entry_of(target)) projection.accuracy_from = String(*entry, "accuracy_from");
        projected_index[target] = projected.size();
        projected.emplace_back(target, std::move(projection));
      }
    }
    std::vector<std::string> marked;
    if (recommendation.contains("projected") && recommendation["projected"].is_array()) {
      for (const json& t : recommendation["projected"]) {
        if (t.is_string()) marked.push_back(t.get<std::string>());
      }
    }
    for (const auto& [target, entry] : scores) {
      if (IsProjected(*entry)) marked.push_back(target);
    }
    for (const auto& [target, entry] : first_rejection) {
      if (IsProjected(*entry)) marked.push_back(target);
    }
    for (const std::string& target : marked) {
      if (target.empty() || projected_index.contains(target) || run_->FindTarget(target) != nullptr) continue;
      Projection projection;
      if (const json* entry = entry_of(target)) {
        std::tie(projection.p10, projection.p90) = BandOf(*entry);
        projection.p50 = Number(*entry, "p50_ms");
        if (const auto mj = Number(*entry, "energy_mj")) projection.energy_j = *mj / 1e3;
        projection.accuracy_from = String(*entry, "accuracy_from");
        if (String(*entry, "limit") == "status") {
          projection.status = "unsupported";
          projection.reason = Q(String(*entry, "reason"));
        }
      }
      projected_index[target] = projected.size();
      projected.emplace_back(target, std::move(projection));
    }

    std::vector<Row> ranked, broke, not_run, projected_broke, projected_not_run;
    auto place = [&](Row row, bool ok, std::vector<Row>& broke_group, std::vector<Row>& not_run_group) {
      if (const auto it = rank.find(row.target); it != rank.end()) {
        row.rank = it->second;
        row.status = row.target == best ? QStringLiteral("recommended") : QStringLiteral("passes");
        if (const auto s = scores.find(row.target); s != scores.end()) {
          row.score = Number(*s->second, "score");
          row.tie = s->second->value("tie", false);
        }
        ranked.push_back(std::move(row));
        return;
      }
      row.status = QStringLiteral("rejected");
      row.reasons = reasons[row.target].join(QLatin1Char('\n'));
      (ok ? broke_group : not_run_group).push_back(std::move(row));
    };
    for (const auto& t : run_->targets) {
      place(Row{.result = t.get(), .target = t->target.ToString()}, t->status == "ok", broke, not_run);
    }
    for (auto& [target, projection] : projected) {
      const bool ok = projection.status == "ok";
      place(Row{.projection = std::move(projection), .target = target}, ok, projected_broke, projected_not_run);
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const Row& a, const Row& b) { return a.rank < b.rank; });
    for (auto* group : {&ranked, &broke, &projected_broke, &not_run, &projected_not_run}) {
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
      case kP50Column: return tr("p50");
      case kP90Column: return tr("p90");
      case kP99Column: return tr("p99");
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
      case kP99Column:
        return tr(
            "End-to-end latency of the timed runs (no per-layer instrumentation). A projected target (not measured "
            "here) has its median and the P10–P90 band of its error in the p50 cell, and no p90 or p99");
      case kDriftColumn:
        return tr(
            "Worst output's SQNR against the reference run on the same inputs; top-1 or task agreement "
            "where an output has one");
      case kEnergyColumn:
        return tr(
            "Measured by a sensor where the run found one, otherwise estimated; always estimated for a projected "
            "target");
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
    case Qt::DisplayRole: return row.projection ? projectedDisplay(row, index.column()) : display(row, index.column());
    case RawValueRole: return row.projection ? projectedRaw(row, index.column()) : raw(row, index.column());
    case StatusRole: return row.status;
    case TargetRole: return Q(row.target);
    case ProjectedRole: return row.projection.has_value();
    case BandRole:
      if (!row.projection || !row.projection->p10 || !row.projection->p90) return {};
      return QVariantList{*row.projection->p10, *row.projection->p90};
    case Qt::TextAlignmentRole:
      return index.column() == kTargetColumn || index.column() == kStatusColumn || index.column() == kDriftColumn ||
                     index.column() == kEnergyColumn
                 ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                 : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole: return row.projection ? projectedToolTip(row, index.column()) : toolTip(row, index.column());
    case Qt::ForegroundRole:
      if (row.status == QLatin1String("rejected")) return QBrush(QColor(0x80, 0x80, 0x80));
      return {};
    case Qt::FontRole: {
      // Projected rows in italics, so that a glance down the table tells estimates from measurements.
      if (row.status != QLatin1String("recommended") && !row.projection) return {};
      QFont font;
      font.setBold(row.status == QLatin1String("recommended"));
      font.setItalic(row.projection.has_value());
      return font;
    }
    default: return {};
  }
}

QVariant RecommendModel::toolTip(const Row& row, int column) const {
  if (column == kStatusColumn && !row.reasons.isEmpty()) return row.reasons;
  if (column == kEnergyColumn && row.result->energy) {
    return row.result->energy->source.rfind("estimated", 0) == 0
               ? tr("Estimated by the energy model (op counts and bytes moved), not measured")
               : tr("Measured by %1").arg(Q(row.result->energy->source));
  }
  if (column == kDriftColumn && row.result->accuracy) {
    return tr("Against %1 on %2 sample(s)%3")
        .arg(Q(row.result->accuracy->reference))
        .arg(row.result->accuracy->samples)
        .arg(row.result->accuracy->random_inputs ? tr(" of seeded random inputs") : QString());
  }
  if (column == kTargetColumn && row.result->status == "ok") {
    // What the kernels computed in, where it is not simply the target's precision.
    const PrecisionMix mix = ComputePrecisionMix(*row.result);
    if (!mix.text.empty() && (row.result->target.precision != Precision::kFp32 || !mix.ran_as.empty())) {
      return mix.ran_as.empty() ? Q(mix.text) : tr("%1: ran as %2").arg(Q(mix.text), Q(mix.ran_as));
    }
  }
  if (column == kScoreColumn && row.tie) {
    return tr("Within 3 % of another score: ordered by accuracy (task agreement, SQNR under 60 dB), then p50");
  }
  return {};
}

bool RecommendModel::ran(const Row& row) const {
  return row.projection ? row.projection->status == "ok" : row.result->status == "ok";
}

const AccuracySummary* RecommendModel::carriedAccuracy(const Row& row) const {
  if (!row.projection || row.projection->accuracy_from.empty()) return nullptr;
  const TargetResult* from = run_->FindTarget(row.projection->accuracy_from);
  return from != nullptr && from->accuracy ? &*from->accuracy : nullptr;
}

QVariant RecommendModel::display(const Row& row, int column) const {
  const TargetResult& t = *row.result;
  const bool ran = t.status == "ok";
  switch (column) {
    case kRankColumn: return row.rank > 0 ? QVariant(row.rank) : QVariant(QStringLiteral("—"));
    case kTargetColumn: {
      // Named for what its kernels ran as when that is another target ("cpu:int8 ≈ cpu:fp32").
      const std::string ran_as = ran ? ComputePrecisionMix(t).ran_as : std::string();
      return ran_as.empty() ? Q(row.target) : Q(row.target + " ≈ " + ran_as);
    }
    case kP50Column: return ran ? Ms(t.latency.p50) : QString();
    case kP90Column: return ran ? Ms(t.latency.p90) : QString();
    case kP99Column: return ran ? Ms(t.latency.p99) : QString();
    case kDriftColumn: {
      if (!t.accuracy) return ran ? tr("not measured") : QString();
      return DriftText(*t.accuracy);
    }
    case kEnergyColumn:
      if (!t.energy) return ran ? tr("not measured") : QString();
      return QStringLiteral("%1 (%2)").arg(Energy(t.energy->joules), Q(t.energy->source));
    case kMemoryColumn: return ran ? Bytes(static_cast<double>(t.peak_memory_bytes)) : QString();
    case kScoreColumn: return ScoreText(row.score, row.tie);
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

QVariant RecommendModel::projectedDisplay(const Row& row, int column) const {
  const Projection& p = *row.projection;
  const bool ok = ran(row);
  switch (column) {
    case kTargetColumn: return ProjectedName(Q(row.target));
    case kP50Column: {
      if (!ok || !p.p50) return QString();
      const QString band = BandText(p.p10, p.p90);
      return band.isEmpty() ? tr("%1 ms").arg(Sig(*p.p50)) : tr("%1 ms (P10–P90 %2)").arg(Sig(*p.p50), band);
    }
    // A projection has no tail statistics of its own: its band is in the p50 cell.
    case kP90Column:
    case kP99Column:
    case kMemoryColumn: return ok ? QStringLiteral("—") : QString();
    case kDriftColumn: {
      if (const AccuracySummary* accuracy = carriedAccuracy(row)) {
        return tr("%1 (from %2)").arg(DriftText(*accuracy), Q(p.accuracy_from));
      }
      return ok ? tr("not measured here") : QString();
    }
    case kEnergyColumn:
      if (!p.energy_j) return ok ? tr("not projected") : QString();
      return tr("%1 (estimated)").arg(Energy(*p.energy_j));
    case kStatusColumn:
      if (row.status != QLatin1String("rejected") || ok) return row.status;
      return tr("rejected (%1)").arg(Q(p.status));
    case kRankColumn: return row.rank > 0 ? QVariant(row.rank) : QVariant(QStringLiteral("—"));
    case kScoreColumn: return ScoreText(row.score, row.tie);
    default: return {};
  }
}

QVariant RecommendModel::projectedRaw(const Row& row, int column) const {
  const Projection& p = *row.projection;
  const bool ok = ran(row);
  switch (column) {
    case kRankColumn: return row.rank > 0 ? QVariant(row.rank) : QVariant();
    case kTargetColumn: return Q(row.target);
    case kP50Column: return ok ? Raw(p.p50) : QVariant();
    case kDriftColumn: {
      const AccuracySummary* accuracy = carriedAccuracy(row);
      return accuracy ? Raw(Finite(accuracy->output_sqnr_db)) : QVariant();
    }
    case kEnergyColumn: return Raw(p.energy_j);
    case kScoreColumn: return Raw(row.score);
    case kStatusColumn: return row.status;
    default: return {};  // p90, p99, memory: a projection has none
  }
}

QVariant RecommendModel::projectedToolTip(const Row& row, int column) const {
  const Projection& p = *row.projection;
  const QString device = p.hardware_name.isEmpty() ? Q(row.target) : p.hardware_name;
  if (column == kStatusColumn && !row.reasons.isEmpty()) return row.reasons;
  if (!ran(row)) return p.reason.isEmpty() ? tr("Projected target that was not projected") : p.reason;
  switch (column) {
    case kEnergyColumn:
      return tr("Estimated, not measured: the projected time × (idle power + (TDP − idle) × utilisation), from the "
                "catalog's figures for %1")
          .arg(device);
    case kDriftColumn:
      if (carriedAccuracy(row) != nullptr) {
        return tr("A projection has no accuracy of its own: this is %1's, measured here, carried to the same "
                  "precision on %2")
            .arg(Q(p.accuracy_from), device);
      }
      return tr(
          "A projection has no accuracy of its own, and no target of this precision was measured here to "
          "carry it from");
    case kP90Column:
    case kP99Column:
      return tr("A projection has no tail statistics: a latency limit holds it to its band's P90 (in the p50 cell)");
    case kMemoryColumn: return tr("Planned memory is not projected");
    case kScoreColumn:
      if (row.tie) return tr("Within 3 % of another score: ordered by p50");
      break;
    default: break;
  }
  QString text =
      tr("Projected for %1 from chipfit's hardware catalog and this run's layers: not measured here.").arg(device);
  if (p.p50) {
    text += QLatin1Char('\n') + tr("The latency is the projection's median, %1 ms").arg(Sig(*p.p50));
    const QString band = BandText(p.p10, p.p90);
    text += band.isEmpty() ? tr(" (no error band).") : tr(", with the P10–P90 band of its error, %1 ms.").arg(band);
  }
  text +=
      QLatin1Char('\n') +
      (p.p90
           ? tr("A latency limit is met only by the band's P90 (%1 ms), whatever statistic it names.").arg(Sig(*p.p90))
           : tr("A latency limit is checked against the median: the projection has no band."));
  text += QLatin1Char('\n') + tr("Energy is estimated from the catalog's TDP and idle power, not measured.");
  return text;
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
      const auto [band_p10, band_p90] = BandOf(r);
      rows_.push_back(Row{.target = Q(String(r, "target")),
                          .limit = Q(String(r, "limit")),
                          .reason = GuiWording(String(r, "reason")),
                          .latency_stat = stat,
                          .value = Number(r, "value"),
                          .bound = Number(r, "bound"),
                          .projected = IsProjected(r),
                          .band_p10 = band_p10,
                          .band_p90 = band_p90});
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
    case Qt::ToolTipRole: {
      if (!row.projected) return row.reason;
      QString text = row.reason + QStringLiteral("\n\n") +
                     tr("%1 is projected from chipfit's hardware catalog, not measured here.").arg(row.target);
      const QString band = BandText(row.band_p10, row.band_p90);
      if (!band.isEmpty()) text += QLatin1Char(' ') + tr("The P10–P90 band of its latency is %1 ms.").arg(band);
      text += QLatin1Char(' ') +
              tr("A latency limit is met only by the band's P90; its energy is estimated and its accuracy, where it "
                 "has any, is carried from a measured target of the same precision.");
      return text;
    }
    case LimitRole: return row.limit;
    case ProjectedRole: return row.projected;
    case Qt::FontRole: {
      if (!row.projected) return {};
      QFont italic;
      italic.setItalic(true);
      return italic;
    }
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
    case kTargetColumn: return row.projected ? ProjectedName(row.target) : row.target;
    case kLimitColumn:
      // Whatever statistic the limit names, a projection is held to its band's P90 (its median without a band).
      if (row.projected && row.limit == QLatin1String("max_latency_ms")) {
        return tr("max latency (%1; projected: %2)")
            .arg(row.latency_stat, row.band_p90 ? tr("band P90") : tr("median"));
      }
      return LimitName(row.limit, row.latency_stat);
    case kValueColumn:
      if (row.value) return WithUnit(*row.value, unit);
      if (row.limit == QLatin1String("status")) return QStringLiteral("—");
      // The guard's checks without a value: int8 calibrated on random data, or a projection that carries no
      // measured target's accuracy.
      if (row.limit == QLatin1String("accuracy_guard")) {
        return row.projected ? tr("no accuracy (projected)") : tr("random calibration");
      }
      return tr("not measured");
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
