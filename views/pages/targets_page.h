// TargetsPage: which targets a profile runs, how it measures them, and the limits it recommends by.
#pragma once

#include <QString>
#include <QStringList>
#include <QWidget>
#include <optional>
#include <vector>

#include "profilers/session/profile_session.h"
#include "views/models/devices_model.h"
#include "views/models/target_matrix_model.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTableView;

namespace chipfit {

// The page fills a ProfileOptions and nothing else: the Run page owns the session, the store and the
// command line. Settings persist per model, keyed by its sha256, so reopening a model brings back the
// targets and limits it was last profiled with.
class TargetsPage : public QWidget {
  Q_OBJECT

 public:
  explicit TargetsPage(QWidget* parent = nullptr);

  void setDevices(DevicesModel::Snapshot devices);
  // Loads that model's saved settings (QSettings group "models/<sha256>"), or the defaults with every
  // supported target checked when it has none. An empty key: defaults, and edits are not saved.
  void setModelKey(const QString& sha256);
  QString modelKey() const { return model_key_; }

  // Targets (checked), counts, data folder, calibration, drift samples, limits and objective; the
  // store, db, command and source are the caller's. No checked cell: empty targets.
  ProfileOptions options() const;
  bool hasCheckedTargets() const;

  TargetMatrixModel* matrixModel() const { return matrix_; }
  QTableView* matrixView() const { return matrix_view_; }

 signals:
  void optionsChanged();

 private:
  QWidget* buildMatrix();
  QWidget* buildRunSettings();
  QWidget* buildLimits();
  QWidget* buildDataDir();
  void watchEdits();

  void onEdited();
  void onMatrixChanged();
  void browseDataDir();
  void applyTargets();
  void updateCount();
  void fitMatrixHeight();
  void load();
  void save() const;
  QStringList targetsToSave() const;

  TargetMatrixModel* matrix_;
  QTableView* matrix_view_ = nullptr;
  QLabel* count_label_ = nullptr;
  QSpinBox* iterations_ = nullptr;
  QSpinBox* warmup_ = nullptr;
  QDoubleSpinBox* min_time_ = nullptr;
  QLineEdit* data_dir_ = nullptr;
  QComboBox* calibration_ = nullptr;
  QComboBox* int8_layers_ = nullptr;  // "faster" (default) or "all" (ProfileOptions::int8_all_layers)
  QSpinBox* drift_samples_ = nullptr;
  QDoubleSpinBox* max_latency_ = nullptr;
  QComboBox* latency_stat_ = nullptr;
  QDoubleSpinBox* min_top1_ = nullptr;
  QDoubleSpinBox* min_sqnr_ = nullptr;
  QDoubleSpinBox* max_memory_ = nullptr;
  QDoubleSpinBox* max_energy_ = nullptr;
  QComboBox* objective_ = nullptr;

  // Every persisted control, saved under its objectName, with the value it had when built (the default).
  struct Field {
    QWidget* widget;
    QVariant default_value;
  };
  std::vector<Field> fields_;

  QString model_key_;
  // The targets the user chose for this model, as strings; nullopt until they touch the matrix, which
  // means "every supported one". Kept as strings so targets of a device that is absent today (a GPU
  // unplugged, a driver not loaded) survive an edit of the ones present.
  std::optional<QStringList> chosen_targets_;
  bool applying_ = false;  // true while the page itself sets controls: not an edit to save
};

}  // namespace chipfit
