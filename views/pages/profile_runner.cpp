// ProfileRunner: the worker thread and the queued hand-off of every session event to the GUI thread.
#include "views/pages/profile_runner.h"

#include <QMetaObject>
#include <QPointer>
#include <QThread>
#include <chrono>
#include <exception>
#include <map>

namespace chipfit {

// Lives on the worker thread; every method posts a lambda to the runner's thread. Captures are by
// value: the worker's strings and results must outlive nothing but the posted call.
class ProfileRunner::Forwarder final : public ProfileEvents {
 public:
  explicit Forwarder(ProfileRunner* runner) : runner_(runner) {}

  void Message(const std::string& text) override {
    post([r = runner_, t = QString::fromStdString(text)] { emit r->message(t); });
  }
  void RunStarted(const RunResult& run, const std::vector<Target>& targets) override {
    const qint64 id = run.run_id ? *run.run_id : -1;
    auto header = std::make_shared<const RunResult>(run);
    post([r = runner_, header] { emit r->runHeader(header); });
    post([r = runner_, id, targets] { emit r->runStarted(id, targets); });
  }
  void TargetStarted(size_t index, const Target&) override {
    post([r = runner_, i = static_cast<int>(index)] { emit r->targetStarted(i); });
  }
  void Phase(size_t index, const std::string& phase, const std::string& detail) override {
    // A new phase always goes through; repeats of the same phase (run counters) are thinned.
    const bool fresh = phase != last_phase_[index];
    if (!fresh && !due(index)) return;
    last_phase_[index] = phase;
    post([r = runner_, i = static_cast<int>(index), p = QString::fromStdString(phase),
          d = QString::fromStdString(detail)] { emit r->phase(i, p, d); });
  }
  void LayerProgress(size_t index, int run, int runs, int done, int total) override {
    if (!due(index)) return;
    post([=, r = runner_, i = static_cast<int>(index)] { emit r->layerProgress(i, run, runs, done, total); });
  }
  void TargetFinished(size_t index, std::shared_ptr<const TargetResult> result) override {
    post([r = runner_, i = static_cast<int>(index), result] { emit r->targetFinished(i, result); });
  }

 private:
  template <typename F>
  void post(F&& f) {
    QMetaObject::invokeMethod(runner_, std::forward<F>(f), Qt::QueuedConnection);
  }
  bool due(size_t index) {
    const auto now = std::chrono::steady_clock::now();
    auto& last = last_sent_[index];
    if (now - last < std::chrono::milliseconds(50)) return false;
    last = now;
    return true;
  }

  ProfileRunner* runner_;
  std::map<size_t, std::string> last_phase_;
  std::map<size_t, std::chrono::steady_clock::time_point> last_sent_;
};

ProfileRunner::ProfileRunner(ProfileSession::Discover discover, QObject* parent)
    : QObject(parent), discover_(std::move(discover)) {}

ProfileRunner::~ProfileRunner() {
  if (worker_.joinable()) {
    worker_.request_stop();
    worker_.join();
  }
}

bool ProfileRunner::start(const QString& model_path, ProfileOptions options) {
  Q_ASSERT(QThread::currentThread() == thread());
  if (running_) return false;
  if (worker_.joinable()) worker_.join();  // the previous run's thread, already past its last event
  running_ = true;
  worker_ = std::jthread([this, path = model_path.toStdString(), options = std::move(options),
                          discover = discover_](const std::stop_token& stop) {
    Forwarder forward(this);
    QString error;
    std::shared_ptr<const RunResult> result;
    try {
      ProfileSession session(options, discover);
      auto run = session.Run(path, forward, stop);
      if (run.ok()) {
        result = *run;
      } else {
        error = QString::fromStdString(run.status().message());
      }
    } catch (const std::exception& e) {
      // Library edges (protobuf, oneDNN, OpenCL) may still throw: the GUI gets a message, not a crash.
      error = tr("internal error: %1").arg(QString::fromUtf8(e.what()));
    }
    QMetaObject::invokeMethod(
        this,
        [this, error, result] {
          // Not running any more before anyone hears the end, so a slot may start the next run.
          running_ = false;
          if (result) {
            emit runFinished(result);
          } else {
            emit runFailed(error);
          }
        },
        Qt::QueuedConnection);
  });
  return true;
}

void ProfileRunner::cancel() {
  if (running_) worker_.request_stop();
}

}  // namespace chipfit
