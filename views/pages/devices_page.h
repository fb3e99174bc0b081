// DevicesPage: the table of discovered devices, their measured roofline ceilings with "Measure again",
// and the notes on backends that found none.
#pragma once

#include <QFutureWatcher>
#include <QStringList>
#include <QWidget>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>

#include "core/status.h"
#include "views/models/devices_model.h"

class QLabel;
class QProgressBar;
class QPushButton;
class QTableView;
class QTimer;

namespace chipfit {

// What a measurement job hands back: the devices measured (their ceilings are in the cache), the ones
// that failed with why, and whether Cancel stopped it.
struct CeilingMeasurement {
  QStringList measured{};
  QStringList failed{};  // "opencl:0: …"
  // Measured while other processes held the CPUs, over ceilings measured idle: those were kept.
  QStringList kept_busy{};
  bool cancelled = false;
  QString cache_error{};  // the cache could not be written
};

// The device a measurement job is at, written by the job and read by the page's timer (Qt's own progress
// text is rate-limited and may drop a step that follows a fast one).
struct MeasureStep {
  std::mutex mutex;
  QString text;
};

// The page never discovers anything itself: whoever owns the worker hands it a finished snapshot, so the
// page stays a pure view that tests can fill with hand-made devices. Measuring ceilings again is the
// page's own job (on a pool thread, one device after the other, as `chipfit devices --measure` does).
class DevicesPage : public QWidget {
  Q_OBJECT

 public:
  // Measures one device's ceilings (the default: MeasureCeilings with the profiles' compiler); checks
  // `stop` between figures. Tests pass a fast fake.
  using MeasureFunction = std::function<Result<CeilingReport>(const DeviceInfo&, const std::stop_token&)>;

  explicit DevicesPage(QWidget* parent = nullptr);
  ~DevicesPage() override;

  // Shows the discovery result; `notes` are the backends' lines ("CUDA: not built ..."). The devices'
  // measured ceilings come from the ceilings cache, read here (a small file).
  void setDiscovery(DevicesModel::Snapshot devices, const QStringList& notes);
  // The ceilings cache to read and write (default: DefaultCeilingCachePath(); tests give their own).
  void setCeilingCachePath(std::filesystem::path path) { ceiling_cache_ = std::move(path); }
  void setMeasureFunction(MeasureFunction measure) { measure_ = std::move(measure); }
  bool isDiscovering() const { return discovering_; }

  // Measures every discovered device's ceilings again off the GUI thread, with progress; each device's
  // new ceilings replace its cached ones as soon as they are measured. False when nothing can start (no
  // devices yet, or a measurement runs).
  bool measureAgain();
  // Stops the measurement after the current figure; the devices measured so far keep their new ceilings.
  void cancelMeasuring();
  bool isMeasuring() const { return measuring_.isRunning(); }
  // Off while a profile runs (the window says when): measuring beside it would spoil both.
  void setMeasureAllowed(bool allowed);

  DevicesModel* model() const { return model_; }
  CeilingsModel* ceilingsModel() const { return ceilings_model_; }
  QTableView* table() const { return table_; }
  QTableView* ceilingsTable() const { return ceilings_table_; }
  QString statusText() const;
  QString notesText() const;
  // The line under the ceilings: progress while measuring, then what the last measurement did.
  QString measureText() const;

 signals:
  // A measurement ended (finished, cancelled or failed); `summary` is the line the page shows.
  void measuringFinished(const QString& summary);

 private:
  QWidget* buildCeilings();
  // Reads the cache into both models; a corrupt cache is a note. Returns that note (empty: none).
  QString loadCeilings();
  void showNotes();
  void onMeasured();

  DevicesModel* model_;
  CeilingsModel* ceilings_model_;
  QTableView* table_;
  QTableView* ceilings_table_ = nullptr;
  QLabel* status_label_;
  QLabel* notes_label_;
  QLabel* measure_label_ = nullptr;
  QProgressBar* measure_progress_ = nullptr;
  QPushButton* measure_button_ = nullptr;
  QPushButton* cancel_button_ = nullptr;
  bool discovering_ = true;
  QStringList discovery_notes_;
  QString cache_note_;
  std::filesystem::path ceiling_cache_;
  MeasureFunction measure_;
  std::stop_source stop_;
  std::shared_ptr<MeasureStep> step_;
  QTimer* step_timer_ = nullptr;
  QFutureWatcher<CeilingMeasurement> measuring_;
  bool measure_allowed_ = true;
};

}  // namespace chipfit
