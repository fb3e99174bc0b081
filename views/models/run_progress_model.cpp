// RunProgressModel: the Run page's rows; figures come from the immutable TargetResult of each target.
#include "views/models/run_progress_model.h"

#include <QColor>
#include <QLocale>
#include <algorithm>
#include <cmath>

#include "core/recommend/recommend.h"
#include "profilers/latency/latency_stats.h"
#include "profilers/latency/rounds.h"
#include "profilers/precision_mix.h"
#include "views/charts/formats.h"

namespace chipfit {
namespace {

// Where each phase of the pipeline starts on a target's 0..100 bar. The per-layer passes get the
// widest band because they take the longest on every model profiled so far.
int PhaseStart(const QString& phase) {
  if (phase == QLatin1String("compile")) return 0;
  if (phase == QLatin1String("warm-up")) return 5;
  if (phase == QLatin1String("end-to-end")) return 10;
  if (phase == QLatin1String("per-layer")) return 35;
  if (phase == QLatin1String("energy")) return 80;
  if (phase == QLatin1String("drift")) return 85;
  return -1;
}

// One unit rule with the charts and the Layers table: "473 µs", "9.93 ms", "1.20 s".
QString Ms(double ms) { return QString::fromStdString(formats::FormatDuration(ms)); }

// The history page's colour for a run that needs a second look: the same warning tone here.
const QColor kWarnColor(0xa0, 0x5a, 0x00);

bool Unreliable(const TargetResult* r) { return r != nullptr && r->status == "ok" && r->unreliable; }

// A target whose kernels ran as `base` (an int8 target left in fp32): no speed-up of its own.
bool RanAsBaseline(const TargetResult& r, const TargetResult& base) {
  const std::string ran_as = ComputePrecisionMix(r).ran_as;
  return !ran_as.empty() && ran_as == base.target.ToString();
}

// "a", "a and b", "a, b and c".
QString JoinNames(const QStringList& names) {
  if (names.size() <= 1) return names.join(QString());
  return names.mid(0, names.size() - 1).join(QStringLiteral(", ")) + RunProgressModel::tr(" and ") + names.back();
}

// Other processes' share of the CPUs in the dropped slots of `results` (their median, 0..1): what
// the machine was like while it was busy, which the clean slots' share does not say.
std::optional<double> DroppedShare(const std::vector<const TargetResult*>& results) {
  std::vector<double> shares;
  for (const TargetResult* r : results) {
    for (const TimingRound& round : r->rounds) {
      if (!round.clean && round.other_cpu_share) shares.push_back(*round.other_cpu_share);
    }
  }
  if (shares.empty()) return std::nullopt;
  return Quantile(shares, 0.5);
}

}  // namespace

RunProgressModel::RunProgressModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunProgressModel::startRun(const std::vector<Target>& targets) {
  beginResetModel();
  rows_.clear();
  for (const Target& t : targets) rows_.push_back(Row{.target = t});
  endResetModel();
}

void RunProgressModel::setPhase(int row, const QString& phase, const QString& detail) {
  if (row < 0 || row >= static_cast<int>(rows_.size())) return;
  Row& r = rows_[static_cast<size_t>(row)];
  r.status = phase;
  r.detail = detail;
  if (const int start = PhaseStart(phase); start >= 0) r.progress = std::max(r.progress, start);
  rowChanged(row);
}

void RunProgressModel::setLayerProgress(int row, int run, int runs, int done, int total) {
  if (row < 0 || row >= static_cast<int>(rows_.size()) || runs <= 0 || total <= 0) return;
  Row& r = rows_[static_cast<size_t>(row)];
  const double fraction = (std::max(run - 1, 0) + static_cast<double>(done) / total) / runs;
  r.status = QStringLiteral("per-layer");
  r.detail = tr("run %1/%2, layer %3/%4").arg(run).arg(runs).arg(done + 1).arg(total);
  r.progress = std::max(r.progress, 35 + static_cast<int>(45 * std::clamp(fraction, 0.0, 1.0)));
  rowChanged(row);
}

void RunProgressModel::setResult(int row, std::shared_ptr<const TargetResult> result) {
  if (row < 0 || row >= static_cast<int>(rows_.size()) || !result) return;
  Row& r = rows_[static_cast<size_t>(row)];
  r.result = std::move(result);
  r.status = QString::fromStdString(r.result->status);
  r.detail.clear();
  r.progress = 100;
  // A new ok target may become the speed-up baseline: every row's speed-up can change.
  emit dataChanged(index(0, 0), index(rowCount() - 1, kColumnCount - 1));
}

void RunProgressModel::markUnfinished(const QString& status) {
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].result) continue;
    rows_[i].status = status;
    rows_[i].detail.clear();
    rowChanged(static_cast<int>(i));
  }
}

std::shared_ptr<const TargetResult> RunProgressModel::result(int row) const {
  return row >= 0 && row < static_cast<int>(rows_.size()) ? rows_[static_cast<size_t>(row)].result : nullptr;
}

QString RunProgressModel::status(int row) const {
  return row >= 0 && row < static_cast<int>(rows_.size()) ? rows_[static_cast<size_t>(row)].status : QString();
}

int RunProgressModel::finishedCount() const {
  return static_cast<int>(std::count_if(rows_.begin(), rows_.end(), [](const Row& r) { return r.result != nullptr; }));
}

int RunProgressModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int RunProgressModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumnCount; }

const TargetResult* RunProgressModel::baseline() const {
  const TargetResult* base = nullptr;
  for (const Row& r : rows_) {
    if (!r.result || r.result->status != "ok") continue;
    if (base == nullptr || r.target.ToString() == "cpu:fp32") base = r.result.get();
  }
  return base;
}

QStringList RunProgressModel::unreliableTargets() const {
  QStringList names;
  for (const Row& r : rows_) {
    if (Unreliable(r.result.get())) names << QString::fromStdString(r.target.ToString());
  }
  return names;
}

QString RunProgressModel::busyMachineText() const {
  std::vector<const TargetResult*> unreliable, dropped;
  QStringList unreliable_names, dropped_names;
  for (const Row& r : rows_) {
    if (!r.result || r.result->status != "ok") continue;
    const QString name = QString::fromStdString(r.target.ToString());
    if (r.result->unreliable) {
      unreliable.push_back(r.result.get());
      unreliable_names << name;
    } else if (formats::CountRounds(r.result->rounds).dropped > 0) {
      dropped.push_back(r.result.get());
      dropped_names << name;
    }
  }
  QString text;
  if (!unreliable.empty()) {
    // One count when the targets share it (they usually do: every round times every target).
    QStringList counts;
    for (size_t i = 0; i < unreliable.size(); ++i) {
      const formats::RoundCounts c = formats::CountRounds(unreliable[i]->rounds);
      counts << tr("%1 of %2").arg(c.clean).arg(c.clean + c.dropped);
    }
    counts.removeDuplicates();
    if (counts.size() > 1) {
      counts.clear();
      for (size_t i = 0; i < unreliable.size(); ++i) {
        const formats::RoundCounts c = formats::CountRounds(unreliable[i]->rounds);
        counts
            << tr("%1 %2 of %3").arg(unreliable_names[static_cast<qsizetype>(i)]).arg(c.clean).arg(c.clean + c.dropped);
      }
    }
    QString detail = counts.join(QStringLiteral(", "));
    if (const auto share = DroppedShare(unreliable)) {
      detail += tr("; other processes used %1 % of the CPUs").arg(*share * 100, 0, 'f', 0);
    }
    text = tr("The machine was busy: %1 had too few clean rounds (%2). %3")
               .arg(JoinNames(unreliable_names), detail,
                    unreliable.size() == 1 ? tr("It is not ranked.") : tr("They are not ranked."));
  }
  if (!dropped.empty()) {
    int rounds = 0;
    for (const TargetResult* r : dropped) rounds += formats::CountRounds(r->rounds).dropped;
    QString sentence =
        rounds == 1 ? tr("1 timing round of %1 was dropped and repeated").arg(JoinNames(dropped_names))
                    : tr("%1 timing rounds of %2 were dropped and repeated").arg(rounds).arg(JoinNames(dropped_names));
    if (const auto share = DroppedShare(dropped)) {
      sentence += tr(" (other processes used %1 % of the CPUs in them)").arg(*share * 100, 0, 'f', 0);
    }
    sentence += tr("; their figures come from the clean rounds.");
    text += text.isEmpty() ? tr("The machine was busy at times: ") + sentence : QStringLiteral(" ") + sentence;
  }
  return text;
}

QVariant RunProgressModel::raw(const Row& row, int column) const {
  const TargetResult* r = row.result && row.result->status == "ok" ? row.result.get() : nullptr;
  // A target stopped after part of its timing keeps those figures (said partial in its status).
  const TargetResult* timed =
      row.result && (row.result->status == "ok" || row.result->partial) ? row.result.get() : nullptr;
  switch (column) {
    case kTargetColumn: return QString::fromStdString(row.target.ToString());
    case kStatusColumn: return row.status;
    case kProgressColumn: return row.progress;
    case kP50Column: return timed ? QVariant(timed->latency.p50) : QVariant();
    case kP99Column: return timed ? QVariant(timed->latency.p99) : QVariant();
    case kSpeedupColumn: {
      // Within-round pairs when both were timed in rounds (a load that came and went moved both
      // sides), else the ratio of their p50s.
      const TargetResult* base = baseline();
      if (r == nullptr || base == nullptr) return {};
      const double speedup = SpeedUp(*base, *r);
      return speedup > 0 && std::isfinite(speedup) ? QVariant(speedup) : QVariant();
    }
    case kDriftColumn: return r && r->accuracy ? QVariant(r->accuracy->output_sqnr_db) : QVariant();
    case kEnergyColumn: return r && r->energy ? QVariant(r->energy->joules) : QVariant();
    case kNotesColumn:
      return row.result && !row.result->error.empty() ? QString::fromStdString(row.result->error) : row.detail;
    default: return {};
  }
}

QVariant RunProgressModel::display(const Row& row, int column) const {
  const QVariant value = raw(row, column);
  const TargetResult* r = row.result.get();
  switch (column) {
    case kStatusColumn:
      if (row.result && row.result->partial) return tr("%1 (partial)").arg(value.toString());
      return Unreliable(r) ? tr("unreliable") : value;
    case kProgressColumn: return QStringLiteral("%1 %").arg(row.progress);
    case kP50Column: return value.isValid() ? Ms(value.toDouble()) : QVariant();
    case kP99Column:
      // A p99 of fewer than 100 runs is an interpolation between the slowest few, not a tail.
      if (value.isValid() && r != nullptr && r->latency.iterations < kTailSamplesP99) return QStringLiteral("–");
      return value.isValid() ? Ms(value.toDouble()) : QVariant();
    case kSpeedupColumn:
      // Two timings of the same kernels differ by noise only: never a speed-up of its own.
      if (value.isValid() && r != nullptr && baseline() != nullptr && RanAsBaseline(*r, *baseline())) {
        return tr("same");
      }
      return value.isValid() ? QStringLiteral("%1×").arg(value.toDouble(), 0, 'f', 2) : QVariant();
    case kDriftColumn: {
      if (!value.isValid()) return {};
      const double db = value.toDouble();
      QString text = !r->accuracy->output_invalid.empty() ? tr("not measurable")
                     : db >= kExactSqnrDb                 ? tr("exact")
                                                          : tr("%1 dB").arg(db, 0, 'f', 1);
      if (r->accuracy->output_invalid.empty() && db < 0) text += tr(" (output differs more than it agrees)");
      // The worst output's task metric (top-1, CTC sequence, map IoU), as the CLI and report say it.
      if (r->accuracy->task_agreement) {
        const double percent = *r->accuracy->task_agreement * 100;
        if (r->accuracy->task_metric == "top-1 agreement") {
          text += tr(", top-1 %1 %").arg(percent, 0, 'f', 1);
        } else {
          text += tr(", %1 %2 %").arg(QString::fromStdString(r->accuracy->task_metric)).arg(percent, 0, 'f', 1);
        }
      } else if (r->accuracy->top1_agreement) {  // a run stored before task metrics were recorded
        text += tr(", top-1 %1 %").arg(*r->accuracy->top1_agreement * 100, 0, 'f', 1);
      }
      if (r->accuracy->random_calibration) text += tr(" (random calibration)");
      if (!r->accuracy->first_non_finite_layer.empty()) {
        text += tr(", non-finite from %1").arg(QString::fromStdString(r->accuracy->first_non_finite_layer));
      }
      return text;
    }
    case kEnergyColumn: {
      if (!value.isValid()) return {};
      const double mj = value.toDouble() * 1e3;
      // The source always travels with the figure: an estimate is never shown as a measurement.
      return tr("%1 mJ (%2)").arg(QLocale::c().toString(mj, 'g', 3), QString::fromStdString(r->energy->source));
    }
    case kNotesColumn:
      if (r != nullptr && r->status == "ok") {
        QString text = tr("%n layer(s)", nullptr, static_cast<int>(r->layers.size()));
        if (!r->fallbacks.empty()) text += tr(", %n fallback(s)", nullptr, static_cast<int>(r->fallbacks.size()));
        // Timing rounds said where they matter: dropped ones, and a target with too few clean ones.
        const formats::RoundCounts rounds = formats::CountRounds(r->rounds);
        if (r->unreliable) {
          text += tr(", unreliable (%1 clean / %2 dropped rounds): %3")
                      .arg(rounds.clean)
                      .arg(rounds.dropped)
                      .arg(QString::fromStdString(r->unreliable_reason));
        } else if (rounds.dropped > 0) {
          text += tr(", %1 clean / %2 dropped rounds").arg(rounds.clean).arg(rounds.dropped);
        }
        // What the kernels computed in, where it is not simply the target's precision.
        const PrecisionMix mix = ComputePrecisionMix(*r);
        if (MixWorthSaying(mix, r->target)) {
          text += QStringLiteral(", ") + QString::fromStdString(mix.text);
          if (!mix.ran_as.empty()) text += tr(" — ran as %1").arg(QString::fromStdString(mix.ran_as));
        }
        return text;
      }
      return value;
    default: return value;
  }
}

QVariant RunProgressModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= static_cast<int>(rows_.size()) || index.column() >= kColumnCount) return {};
  const Row& row = rows_[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole: return display(row, index.column());
    case RawValueRole: return raw(row, index.column());
    case ProgressRole: return row.progress;
    case Qt::ToolTipRole:
      if (row.result && !row.result->error.empty()) return QString::fromStdString(row.result->error);
      if (index.column() == kNotesColumn && row.result && !row.result->notes.empty()) {
        // The whole notes (unreliable, dropped rounds, random calibration …): the cell shows a line.
        QStringList notes;
        for (const std::string& note : row.result->notes) notes << QString::fromStdString(note);
        return notes.join(QLatin1Char('\n'));
      }
      if (index.column() == kSpeedupColumn && row.result && row.result->status == "ok") {
        const TargetResult* base = baseline();
        if (base != nullptr && RanAsBaseline(*row.result, *base)) {
          return tr("%1 ran as %2 (%3): the same kernels, so no speed-up of its own")
              .arg(QString::fromStdString(row.result->target.ToString()),
                   QString::fromStdString(base->target.ToString()),
                   QString::fromStdString(ComputePrecisionMix(*row.result).text));
        }
        if (base != nullptr && PairedRatio(base->rounds, row.result->rounds)) {
          return tr("%1 time over this target's, round by round (median of the rounds both timed cleanly)")
              .arg(QString::fromStdString(base->target.ToString()));
        }
        if (base != nullptr)
          return tr("%1 p50 over this target's p50").arg(QString::fromStdString(base->target.ToString()));
      }
      return index.column() == kNotesColumn ? row.detail : QVariant();
    case Qt::ForegroundRole:
      if (Unreliable(row.result.get()) && (index.column() == kStatusColumn || index.column() == kNotesColumn)) {
        return kWarnColor;
      }
      return {};
    case Qt::TextAlignmentRole:
      if (index.column() >= kP50Column && index.column() <= kSpeedupColumn) {
        return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
      }
      return {};
    default: return {};
  }
}

QVariant RunProgressModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kTargetColumn: return tr("Target");
    case kStatusColumn: return tr("Phase / status");
    case kProgressColumn: return tr("Progress");
    case kP50Column: return tr("p50");
    case kP99Column: return tr("p99");
    case kSpeedupColumn: return tr("Speed-up");
    case kDriftColumn: return tr("Drift (output SQNR)");
    case kEnergyColumn: return tr("Energy / inference");
    case kNotesColumn: return tr("Notes");
    default: return {};
  }
}

void RunProgressModel::rowChanged(int row) { emit dataChanged(index(row, 0), index(row, kColumnCount - 1)); }

}  // namespace chipfit
