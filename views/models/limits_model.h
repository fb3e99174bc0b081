// LimitsModel: the one set of limits and objective a model is recommended by, shared by every form that
// shows it (Targets and Recommend) and saved with the model's settings.
#pragma once

#include <QObject>
#include <QString>

#include "profilers/session/profile_session.h"

namespace chipfit {

// What a limits form shows: each limit ticked or not, with the value it keeps while unticked (so
// unticking and ticking again brings the number back, in every form at once).
struct LimitsState {
  struct Bound {
    bool on = false;
    double value = 0;
    bool operator==(const Bound&) const = default;
  };
  Bound max_latency_ms{false, 10};
  QString latency_stat = QStringLiteral("p99");
  Bound min_top1_percent{false, 99};
  Bound min_sqnr_db{false, 30};
  Bound max_memory_mb{false, 512};
  Bound max_energy_mj{false, 1};
  QString objective = QStringLiteral("latency");
  bool accuracy_guard = true;
  bool operator==(const LimitsState&) const = default;
};

class LimitsModel : public QObject {
  Q_OBJECT

 public:
  explicit LimitsModel(QObject* parent = nullptr);

  const LimitsState& state() const { return state_; }
  // Replaces the state; saved under the model key (when there is one) and announced when it changed.
  void setState(const LimitsState& state);

  // The state as the recommender takes it; weights and the cost table are kept from setSettings.
  RecommendSettings settings() const;
  // Fills the state from `settings` (unset limits keep their last value, unticked).
  void setSettings(const RecommendSettings& settings);

  // Loads the limits saved for the model with this sha256 (QSettings "models/<sha256>/limits/…"), or
  // the defaults when it has none. Limits saved by an older chipfit (the Targets page's "0 means no
  // limit" fields) are read too. An empty key: defaults, and edits are not saved.
  void setModelKey(const QString& sha256);
  QString modelKey() const { return model_key_; }

  // One line a page can print: "p99 ≤ 5 ms · top-1 ≥ 99 % · objective latency"; "no limits · …".
  QString summary() const;

 signals:
  void changed();

 private:
  void load();
  void save() const;

  LimitsState state_;
  RecommendSettings kept_;  // weights and cost table
  QString model_key_;
};

}  // namespace chipfit
