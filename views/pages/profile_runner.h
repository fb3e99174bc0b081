// ProfileRunner: a ProfileSession on a worker thread, its events delivered as signals on the GUI thread.
#pragma once

#include <QObject>
#include <QString>
#include <memory>
#include <stop_token>
#include <thread>
#include <vector>

#include "profilers/session/profile_session.h"

namespace chipfit {

// The GUI never runs a profile on its own thread: the session runs on one worker thread (which owns
// every device context it opens) and each event is posted back to this object's thread. Per-layer
// progress arrives thousands of times a second; it is thinned to one update per target every 50 ms so
// the event loop stays free for the user.
class ProfileRunner : public QObject {
  Q_OBJECT

 public:
  explicit ProfileRunner(ProfileSession::Discover discover = {}, QObject* parent = nullptr);
  // Stops a run in progress (after its current kernel) and waits for the worker.
  ~ProfileRunner() override;

  bool isRunning() const { return running_; }
  // False (and nothing started) while a run is in progress.
  bool start(const QString& model_path, ProfileOptions options);
  // Asks the run to stop after the current kernel; the run ends `cancelled` and is stored so.
  void cancel();

 signals:
  void message(const QString& text);
  void runStarted(qint64 run_id, const std::vector<chipfit::Target>& targets);
  // Just before runStarted: the run as the store began it (model, machine, settings, no target yet), so
  // the pages can show each target the moment it finishes.
  void runHeader(std::shared_ptr<const chipfit::RunResult> run);
  void targetStarted(int index);
  void phase(int index, const QString& phase, const QString& detail);
  void layerProgress(int index, int run, int runs, int done, int total);
  void targetFinished(int index, std::shared_ptr<const chipfit::TargetResult> result);
  // The run ended, ok or cancelled (stored so); isRunning() is already false when this arrives.
  void runFinished(std::shared_ptr<const chipfit::RunResult> run);
  // The run could not start, or stopped on an error (bad model, store refused); isRunning() is false.
  void runFailed(const QString& message);

 private:
  class Forwarder;

  ProfileSession::Discover discover_;
  std::jthread worker_;
  bool running_ = false;
};

}  // namespace chipfit
