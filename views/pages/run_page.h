// RunPage: the profile in progress, one row per target with its phase and progress, its figures as it
// finishes, Cancel, and the run's outcome.
#pragma once

#include <QElapsedTimer>
#include <QString>
#include <QWidget>
#include <memory>

#include "profilers/run_result.h"
#include "profilers/session/profile_session.h"
#include "views/models/run_progress_model.h"

class QLabel;
class QProgressBar;
class QPushButton;
class QTableView;

namespace chipfit {

class ProfileRunner;

class RunPage : public QWidget {
  Q_OBJECT

 public:
  // `discover` as ProfileSession's (tests pass their own; empty: the real discovery).
  explicit RunPage(ProfileSession::Discover discover = {}, QWidget* parent = nullptr);

  // Starts profiling `model_path` with `options` on the worker; false (and a message in the page) when
  // a run is in progress already or the options name no target.
  bool start(const QString& model_path, const ProfileOptions& options);
  // Stops after the current kernel; the run is stored `cancelled`.
  void cancel();
  bool isRunning() const;

  RunProgressModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  QString statusText() const;
  // The last finished run, or null.
  std::shared_ptr<const RunResult> lastRun() const { return last_run_; }

 signals:
  void runningChanged(bool running);
  void runFinished(std::shared_ptr<const chipfit::RunResult> run);
  void runFailed(const QString& message);

 private:
  void onRunStarted(qint64 run_id, const std::vector<Target>& targets);
  void onTargetFinished(int index, std::shared_ptr<const TargetResult> result);
  void onRunFinished(std::shared_ptr<const RunResult> run);
  void onRunFailed(const QString& message);
  void updateOverall();
  void setStatus(const QString& text);

  ProfileRunner* runner_;
  RunProgressModel* model_;
  QLabel* title_label_;
  QLabel* status_label_;
  QLabel* recommendation_label_;
  QProgressBar* overall_;
  QPushButton* cancel_button_;
  QTableView* table_;
  QElapsedTimer clock_;
  QString model_path_;
  std::shared_ptr<const RunResult> last_run_;
};

}  // namespace chipfit
