// RunPage: the profile in progress, one row per target with its phase and progress, its figures as it
// finishes, Cancel, and the run's outcome: a banner when the machine was too busy to time a target,
// with "Re-run when idle".
#pragma once

#include <QElapsedTimer>
#include <QString>
#include <QWidget>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "profilers/latency/latency_stats.h"
#include "profilers/run_result.h"
#include "profilers/session/profile_session.h"
#include "views/models/run_progress_model.h"

class QFrame;
class QLabel;
class QProgressBar;
class QPushButton;
class QTableView;
class QTimer;

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
  // Shows a run that is not this page's profile (opened from History, a profile JSON): its targets and
  // figures in the table, said to be that run. Ignored while a profile runs (the page shows that).
  void showRun(const std::shared_ptr<const RunResult>& run, const QString& origin);
  // The run the page shows: the profile in progress or last finished, or the one given to showRun.
  std::shared_ptr<const RunResult> shownRun() const { return shown_run_; }

  // "Re-run when idle": other processes' share of all CPUs (0..1) since the previous call, nullopt
  // when it cannot be read. The default measures /proc/stat (CpuShareMeter) between polls.
  using CpuShareProbe = std::function<std::optional<double>()>;
  // Polls needed in a row under kBusyCpuShare before the profile starts again.
  static constexpr int kIdlePolls = 3;
  // Tests give a fake machine and a short poll; the default polls once a second.
  void setIdleProbe(CpuShareProbe probe, int interval_ms);
  // Waits until other processes leave the CPUs idle (kIdlePolls polls in a row), then starts the last
  // profile again with the same model and options; false when there is none or a run is in progress.
  bool rerunWhenIdle();
  void cancelIdleWait();
  bool isWaitingForIdle() const { return waiting_for_idle_; }
  // The accuracy guard rejected an int8 target of the last run: profile it again with the calibration
  // that fixes most such cases (percentile ranges, and fp32 kept where int8 breaks the answer, until
  // the outputs agree on 99 %), the rest of the options unchanged. False when there is nothing to fix
  // (no such rejection, or those settings were already used) or a run is in progress.
  bool rerunWithAccuracyFix();
  bool isAccuracyFixOffered() const;
  // The busy-machine banner above the table (empty and hidden when every target was timed cleanly).
  QString bannerText() const;
  bool isBannerVisible() const;

 signals:
  void runningChanged(bool running);
  void runFinished(std::shared_ptr<const chipfit::RunResult> run);
  // A target of the profile in progress finished with figures: the run so far (its header and every
  // target that has finished ok), for the analysis pages to show before the run ends.
  void partialRun(std::shared_ptr<const chipfit::RunResult> run);
  void runFailed(const QString& message);

 private:
  void onRunStarted(qint64 run_id, const std::vector<Target>& targets);
  void onTargetFinished(int index, std::shared_ptr<const TargetResult> result);
  void onRunFinished(std::shared_ptr<const RunResult> run);
  void onRunFailed(const QString& message);
  void updateOverall();
  void setStatus(const QString& text);
  void updateBanner();
  void onIdlePoll();
  void stopIdleWait();

  ProfileRunner* runner_;
  RunProgressModel* model_;
  QLabel* title_label_;
  QLabel* status_label_;
  QLabel* recommendation_label_;
  QProgressBar* overall_;
  QPushButton* cancel_button_;
  QTableView* table_;
  QLabel* threads_label_;  // how the run chose its CPU threads, once it finished
  QFrame* banner_;
  QLabel* banner_label_;
  QPushButton* rerun_button_;
  QPushButton* cancel_wait_button_;
  QPushButton* accuracy_fix_button_;
  QTimer* idle_timer_;
  CpuShareProbe idle_probe_;
  CpuShareMeter idle_meter_;  // the default probe's window
  bool waiting_for_idle_ = false;
  int idle_polls_ = 0;
  std::optional<double> last_share_;  // the last poll's share, for the waiting banner
  QElapsedTimer clock_;
  QString model_path_;
  ProfileOptions last_options_;  // what "Re-run when idle" starts again
  bool has_options_ = false;
  std::shared_ptr<const RunResult> last_run_;
  std::shared_ptr<const RunResult> header_;                      // the profile in progress, as the store began it
  std::map<int, std::shared_ptr<const TargetResult>> finished_;  // its targets finished ok, by index
  std::shared_ptr<const RunResult> shown_run_;                   // what the table shows
};

}  // namespace chipfit
