// TargetsPage: which targets a profile runs, how it measures them, and the limits it recommends by.
#pragma once

#include <QString>
#include <QStringList>
#include <QWidget>
#include <filesystem>
#include <optional>
#include <vector>

#include "profilers/session/profile_session.h"
#include "views/models/devices_model.h"
#include "views/models/target_matrix_model.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGridLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;
class QTableView;

namespace chipfit {

// The page fills a ProfileOptions and nothing else: the Run page owns the session, the store and the
// command line. Settings persist per model, keyed by its sha256, so reopening a model brings back the
// targets and limits it was last profiled with, and the hardware it projected onto.
//
// Projected hardware (docs/projection.md): one check box per device of the catalog (resources/hardware)
// and the user's own device files, as `profile --project IDS --hardware-file F.yaml` takes them. They
// are estimated from the devices' published figures and this run's measured targets, never measured.
class LimitsModel;

class TargetsPage : public QWidget {
  Q_OBJECT

 public:
  // `limits`: the model's limits, shared with the Recommend page (null: the page keeps its own).
  explicit TargetsPage(LimitsModel* limits = nullptr, QWidget* parent = nullptr);
  LimitsModel* limits() const { return limits_; }

  void setDevices(DevicesModel::Snapshot devices);
  // Loads that model's saved settings (QSettings group "models/<sha256>"), or the defaults with every
  // supported target checked when it has none. An empty key: defaults, and edits are not saved.
  void setModelKey(const QString& sha256);
  QString modelKey() const { return model_key_; }

  // Targets (checked), counts, data folder, calibration, drift samples, limits and objective; the
  // store, db, command and source are the caller's. No checked cell: empty targets. Projected hardware
  // ticked or added: project = true and project_request's hardware (catalog ids) and hardware_files.
  ProfileOptions options() const;
  bool hasCheckedTargets() const;

  // Rebuilds the projected hardware's check boxes from the catalog in `dir` (the constructor reads
  // DefaultHardwareDir()). A catalog that cannot be read leaves the group saying why, never empty.
  void loadHardwareCatalog(const std::filesystem::path& dir);
  // Adds the user's own device file to the projected hardware once LoadHardwareFile validates it and its
  // id is neither the catalog's nor another added file's; otherwise shows the error (it names the file
  // and the key) and returns false. "Add device file…" asks for the path and calls this.
  bool addHardwareFile(const QString& path);
  void removeHardwareFile(const QString& path);
  QStringList hardwareFiles() const;      // the added files, in the order added
  QStringList projectedHardware() const;  // the ticked catalog ids, in catalog order
  QString projectionError() const;        // the last device file's error; empty when none

  TargetMatrixModel* matrixModel() const { return matrix_; }
  QTableView* matrixView() const { return matrix_view_; }

 signals:
  void optionsChanged();

 private:
  QWidget* buildMatrix();
  QWidget* buildRunSettings();
  QWidget* buildLimits();
  QWidget* buildDataDir();
  QWidget* buildProjection();
  void watchEdits();

  void onEdited();
  void onMatrixChanged();
  void browseDataDir();
  void browseHardwareFile();
  void onProjectionEdited();
  void updateProjectionSummary();
  void showProjectionError(const QString& text);
  // The spec of a device file the page may add, or why not (unreadable, invalid, an id already taken).
  Result<HardwareSpec> checkHardwareFile(const QString& path) const;
  void appendHardwareFile(const QString& path, const HardwareSpec& spec);
  void applyTargets();
  void updateCount();
  void fitMatrixHeight();
  void load();
  void save() const;
  QStringList targetsToSave() const;

  TargetMatrixModel* matrix_;
  LimitsModel* limits_;
  QTableView* matrix_view_ = nullptr;
  QLabel* count_label_ = nullptr;
  QSpinBox* iterations_ = nullptr;
  QSpinBox* warmup_ = nullptr;
  QDoubleSpinBox* min_time_ = nullptr;
  QLineEdit* data_dir_ = nullptr;
  QComboBox* calibration_ = nullptr;
  QComboBox* int8_layers_ = nullptr;  // "faster" (default) or "all" (ProfileOptions::int8_all_layers)
  QSpinBox* drift_samples_ = nullptr;

  // Projected hardware: the catalog's devices (one check box each, in catalog order) and the user's files.
  std::vector<HardwareSpec> catalog_;
  std::vector<QCheckBox*> hardware_checks_;  // parallel to catalog_
  QGridLayout* catalog_grid_ = nullptr;
  QLabel* catalog_status_ = nullptr;  // why the catalog could not be read; hidden when it was
  struct HardwareFile {
    QString path;
    HardwareSpec spec;
  };
  std::vector<HardwareFile> hardware_files_;
  QListWidget* files_list_ = nullptr;
  QPushButton* remove_file_ = nullptr;
  QLabel* projection_summary_ = nullptr;
  QLabel* projection_error_ = nullptr;
  // Saved catalog ids that today's catalog lacks: kept in the settings, never asked for.
  QStringList absent_hardware_;

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
