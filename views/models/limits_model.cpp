// LimitsModel: the shared limits state, its conversion to RecommendSettings and its per-model settings.
#include "views/models/limits_model.h"

#include <QSettings>
#include <QStringList>

#include "views/charts/formats.h"

namespace chipfit {
namespace {

QString Group(const QString& key) { return QStringLiteral("models/") + key + QStringLiteral("/limits"); }

// The keys of each limit, under the model's group: "<name>On" and "<name>".
struct BoundKey {
  const char* name;
  LimitsState::Bound LimitsState::*bound;
};
constexpr BoundKey kBounds[] = {{"maxLatency", &LimitsState::max_latency_ms},
                                {"minTop1", &LimitsState::min_top1_percent},
                                {"minSqnr", &LimitsState::min_sqnr_db},
                                {"maxMemory", &LimitsState::max_memory_mb},
                                {"maxEnergy", &LimitsState::max_energy_mj}};

std::optional<double> IfOn(const LimitsState::Bound& b, double scale = 1) {
  return b.on ? std::optional<double>(b.value * scale) : std::nullopt;
}

void SetBound(LimitsState::Bound& b, const std::optional<double>& value, double scale = 1) {
  b.on = value.has_value();
  if (value) b.value = *value * scale;
}

QString Number(double value) { return QString::fromStdString(formats::FormatShort(value)); }

}  // namespace

LimitsModel::LimitsModel(QObject* parent) : QObject(parent) {}

void LimitsModel::setState(const LimitsState& state) {
  if (state == state_) return;
  state_ = state;
  save();
  emit changed();
}

RecommendSettings LimitsModel::settings() const {
  RecommendSettings s = kept_;
  Limits& l = s.limits;
  l = Limits{};
  l.max_latency_ms = IfOn(state_.max_latency_ms);
  l.latency_stat = state_.latency_stat.toStdString();
  // The statistic is chosen with a latency limit; then the ranking uses it too.
  l.latency_stat_given = state_.max_latency_ms.on;
  // The forms speak percent; Limits, a fraction.
  l.min_top1 = IfOn(state_.min_top1_percent, 0.01);
  l.min_sqnr_db = IfOn(state_.min_sqnr_db);
  l.max_memory_mb = IfOn(state_.max_memory_mb);
  l.max_energy_mj = IfOn(state_.max_energy_mj);
  l.accuracy_guard = state_.accuracy_guard;
  s.objective = state_.objective.toStdString();
  return s;
}

void LimitsModel::setSettings(const RecommendSettings& s) {
  kept_ = s;
  LimitsState next = state_;
  SetBound(next.max_latency_ms, s.limits.max_latency_ms);
  next.latency_stat = QString::fromStdString(s.limits.latency_stat);
  SetBound(next.min_top1_percent, s.limits.min_top1, 100);
  SetBound(next.min_sqnr_db, s.limits.min_sqnr_db);
  SetBound(next.max_memory_mb, s.limits.max_memory_mb);
  SetBound(next.max_energy_mj, s.limits.max_energy_mj);
  next.objective = QString::fromStdString(s.objective);
  next.accuracy_guard = s.limits.accuracy_guard;
  setState(next);
}

void LimitsModel::setModelKey(const QString& sha256) {
  model_key_ = sha256;
  load();
  emit changed();
}

void LimitsModel::load() {
  state_ = LimitsState{};
  if (model_key_.isEmpty()) return;
  QSettings settings;
  settings.beginGroup(QStringLiteral("models/") + model_key_);
  if (settings.childGroups().contains(QStringLiteral("limits"))) {
    settings.beginGroup(QStringLiteral("limits"));
    for (const BoundKey& key : kBounds) {
      LimitsState::Bound& b = state_.*key.bound;
      const QString name = QLatin1String(key.name);
      b.on = settings.value(name + QStringLiteral("On"), b.on).toBool();
      b.value = settings.value(name, b.value).toDouble();
    }
    state_.latency_stat = settings.value(QStringLiteral("latencyStat"), state_.latency_stat).toString();
    state_.objective = settings.value(QStringLiteral("objective"), state_.objective).toString();
    state_.accuracy_guard = settings.value(QStringLiteral("accuracyGuard"), state_.accuracy_guard).toBool();
    return;
  }
  // An older chipfit kept the limits among the Targets page's fields, 0 meaning no limit.
  for (const BoundKey& key : kBounds) {
    const double value = settings.value(QLatin1String(key.name), 0.0).toDouble();
    if (value > 0) (state_.*key.bound) = {true, value};
  }
  if (settings.contains(QStringLiteral("latencyStat")))
    state_.latency_stat = settings.value(QStringLiteral("latencyStat")).toString();
  if (settings.contains(QStringLiteral("objective")))
    state_.objective = settings.value(QStringLiteral("objective")).toString();
}

void LimitsModel::save() const {
  if (model_key_.isEmpty()) return;
  QSettings settings;
  settings.beginGroup(Group(model_key_));
  for (const BoundKey& key : kBounds) {
    const LimitsState::Bound& b = state_.*key.bound;
    const QString name = QLatin1String(key.name);
    settings.setValue(name + QStringLiteral("On"), b.on);
    settings.setValue(name, b.value);
  }
  settings.setValue(QStringLiteral("latencyStat"), state_.latency_stat);
  settings.setValue(QStringLiteral("objective"), state_.objective);
  settings.setValue(QStringLiteral("accuracyGuard"), state_.accuracy_guard);
}

QString LimitsModel::summary() const {
  QStringList parts;
  const LimitsState& s = state_;
  if (s.max_latency_ms.on) parts << tr("%1 ≤ %2 ms").arg(s.latency_stat, Number(s.max_latency_ms.value));
  if (s.min_top1_percent.on) parts << tr("top-1 ≥ %1 %").arg(Number(s.min_top1_percent.value));
  if (s.min_sqnr_db.on) parts << tr("output SQNR ≥ %1 dB").arg(Number(s.min_sqnr_db.value));
  if (s.max_memory_mb.on) parts << tr("memory ≤ %1 MiB").arg(Number(s.max_memory_mb.value));
  if (s.max_energy_mj.on) parts << tr("energy ≤ %1 mJ").arg(Number(s.max_energy_mj.value));
  if (parts.isEmpty()) parts << tr("no limits");
  if (!s.min_top1_percent.on && !s.min_sqnr_db.on) {
    parts << (s.accuracy_guard ? tr("accuracy guard on") : tr("accuracy guard off"));
  }
  parts << tr("objective %1").arg(s.objective);
  return parts.join(QStringLiteral(" · "));
}

}  // namespace chipfit
