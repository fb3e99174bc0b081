// The Model, File and Run menus' long jobs: export the int8 model as QDQ ONNX (`chipfit quantize`), save the
// outputs of one run of the model (`chipfit run --output-dir`), read a profile JSON (`report --in`) and
// profile every model of a batch manifest (`chipfit batch`, without its baseline verdicts and reports).
#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/quant/calibration.h"
#include "core/quant/input_data.h"
#include "core/runtime/target.h"
#include "core/status.h"
#include "profilers/run_result.h"

class QProgressDialog;
class QWidget;

namespace chipfit {

// What a job tells while it goes on: the step it is in ("calibrating on 8 samples").
using StepSink = std::function<void(const std::string& step)>;

// Export int8 model: chipfit's cpu:int8 calibration written as a QDQ ONNX model, as `chipfit quantize`
// writes it (every eligible layer in int8, Q/DQ pairs where chipfit's int8 reads a value).
struct Int8ExportRequest {
  std::filesystem::path model;
  std::vector<std::string> shapes;  // "NAME=1x3x48x192"
  std::filesystem::path output;
  // Calibration inputs: a folder as the Targets page's data folder takes it; empty: seeded random samples.
  std::string data_dir{};
  InputDataOptions data{};
  CalibrationMethod method = CalibrationMethod::kMinMax;
  double percentile = 99.99;
  int random_samples = 8;
  uint64_t seed = 1;
  std::vector<std::string> keep_fp32{};
};
struct Int8ExportResult {
  std::filesystem::path output;
  bool random_calibration = false;
  int samples = 0;
  std::string calibration;              // DescribeQuantReport's line
  std::vector<std::string> quantized;   // the nodes that got Q/DQ
  std::vector<std::string> kept_small;  // kept in float: too few multiply-adds to gain from int8
  std::vector<std::string> kept_fp32;   // kept in float for another reason (by request, not quantisable)
  int qdq_nodes = 0;                    // QuantizeLinear + DequantizeLinear in the written file, read back
  int64_t from_opset = 0, to_opset = 0;
  uintmax_t bytes = 0;
};
Result<Int8ExportResult> ExportInt8Model(const Int8ExportRequest& request, const StepSink& step = {},
                                         const std::stop_token& stop = {});

// Save outputs: the model run once on `target` (seeded inputs, or the data folder's first sample) and each
// output written as <output>.npy into `folder`.
struct SaveOutputsRequest {
  std::filesystem::path model;
  std::vector<std::string> shapes;
  Target target;
  std::filesystem::path folder;
  std::string data_dir{};
  InputDataOptions data{};
  uint64_t seed = 1;
};
struct SavedOutput {
  std::string name;
  std::string description;  // "f32 1x2 [min …]" as DescribeTensor writes it
  std::filesystem::path file;
};
struct SavedOutputs {
  std::vector<SavedOutput> outputs;
  std::string inputs;                  // where the inputs came from: "seeded random inputs (seed 1)" or the folder
  std::vector<std::string> fallbacks;  // "Conv_3 (Conv) on cpu: …" for nodes the target's device refused
};
Result<SavedOutputs> SaveModelOutputs(const SaveOutputsRequest& request, const StepSink& step = {},
                                      const std::stop_token& stop = {});

// A profile JSON written by `chipfit profile --json` (or the GUI's JSON report), read into the typed run.
Result<RunResult> ReadProfileJson(const std::filesystem::path& file);

// Run › Batch manifest…: each model of the manifest profiled with the manifest's targets, counts,
// calibration and limits (a model's own over them), stored in `db`, one after the other.
struct BatchModelOutcome {
  std::string model;
  std::optional<int64_t> run_id{};
  std::string best{};          // the recommended target; empty: none
  double p50_ms = 0;           // of the best target
  bool limits_broken = false;  // limits given and no target meets them
  int failed_targets = 0;
  std::string error{};  // the model did not profile at all
};
struct BatchOutcome {
  std::vector<BatchModelOutcome> models;
  size_t total = 0;  // models in the manifest
  bool cancelled = false;
};
// `step` hears "det.onnx (2 of 5): cpu:int8 timing". A manifest that does not read is the error; a model
// that fails is its outcome's error and the batch goes on.
Result<BatchOutcome> RunBatchManifest(const std::filesystem::path& manifest, const std::filesystem::path& db,
                                      const StepSink& step = {}, const std::stop_token& stop = {});
// The summary a person reads: one line per model, then how many broke their limits.
QString BatchSummary(const BatchOutcome& outcome);

// The menus' side of the jobs: the file dialogs, a progress dialog with Cancel while the job runs on a
// pool thread, and the result in a message box. One job at a time.
class ModelActions : public QObject {
  Q_OBJECT

 public:
  // `window`: the parent of the dialogs.
  explicit ModelActions(QWidget* window);
  ~ModelActions() override;

  // Model › Export int8 model…: asks where (suggesting <model>_int8.onnx beside it), then exports.
  void exportInt8(Int8ExportRequest request);
  // Model › Save outputs…: asks for the target among `targets` and for the folder, then runs and saves.
  void saveOutputs(SaveOutputsRequest request, const QStringList& targets);
  // File › Open profile JSON…: asks for the file, reads it on a pool thread and emits runOpened.
  void openProfileJson();
  // Run › Batch manifest…: asks for the manifest, profiles its models into `db`.
  void runBatch(const std::filesystem::path& db);

  // The same jobs without their dialogs (tests, and the dialogs' second half).
  void startExport(Int8ExportRequest request);
  void startSaveOutputs(SaveOutputsRequest request);
  void startOpenProfileJson(const QString& path);
  void startBatch(const QString& manifest, const std::filesystem::path& db);
  bool isBusy() const { return watcher_.isRunning(); }
  void cancel();
  // Whether finished() shows its text in a message box (tests turn it off).
  void setShowResults(bool show) { show_results_ = show; }

 signals:
  // A job ended: `ok` false for an error or a cancel; `message` is what the message box says.
  void finished(bool ok, const QString& message);
  // The step the job is in, as the progress dialog shows it.
  void stepChanged(const QString& step);
  void runOpened(std::shared_ptr<const chipfit::RunResult> run);

 private:
  struct Outcome {
    bool ok = false;
    QString title;
    QString message;
    std::shared_ptr<const RunResult> run;  // File › Open profile JSON
  };
  void start(const QString& label, std::function<Outcome(const StepSink&, const std::stop_token&)> job);
  void onFinished();

  QPointer<QWidget> window_;
  QProgressDialog* progress_ = nullptr;
  std::stop_source stop_;
  bool show_results_ = true;
  QFutureWatcher<Outcome> watcher_;
};

}  // namespace chipfit
