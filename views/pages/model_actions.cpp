// The Model, File and Run menus' jobs: the library calls `chipfit quantize`, `run --output-dir`, `report
// --in` and `batch` make, and the dialogs, progress and result messages around them.
#include "views/pages/model_actions.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMessageBox>
#include <QProgressDialog>
#include <QThread>
#include <QWidget>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>
#include <fstream>
#include <map>
#include <set>
#include <utility>

#include "core/graph/index_bounds.h"
#include "core/graph/onnx_import.h"
#include "core/graph/onnx_loader.h"
#include "core/quant/calibration_data.h"
#include "core/quant/preprocess.h"
#include "core/quant/qdq_export.h"
#include "core/tensor/npy.h"
#include "devices/int8_export.h"
#include "devices/target_compiler.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "profilers/profile_json.h"
#include "profilers/session/batch_manifest.h"
#include "profilers/session/profile_session.h"
#include "views/models/gui_wording.h"

namespace chipfit {
namespace {

QString ToQString(const std::string& text) { return QString::fromStdString(text); }

Result<OnnxLoadOptions> LoadOptionsFor(const std::vector<std::string>& shapes) {
  OnnxLoadOptions options;
  for (const std::string& text : shapes) {
    ASSIGN_OR_RETURN(auto binding, ParseShapeBinding(text));
    options.input_shapes[binding.first] = binding.second;
  }
  return options;
}

Status StopCheck(const std::stop_token& stop) { return stop.stop_requested() ? Cancelled("cancelled") : Status::Ok(); }

void Say(const StepSink& step, const std::string& text) {
  if (step) step(text);
}

}  // namespace

Result<Int8ExportResult> ExportInt8Model(const Int8ExportRequest& request, const StepSink& step,
                                         const std::stop_token& stop) {
  Say(step, "loading and checking the model");
  ASSIGN_OR_RETURN(const OnnxLoadOptions load, LoadOptionsFor(request.shapes));
  // The file as it is (no bound shapes, no inferred value_info) is what the QDQ model is made from.
  ASSIGN_OR_RETURN(LoadedOnnxModel raw, LoadOnnxModel(request.model, {.run_checker = false, .infer_shapes = false}));
  ASSIGN_OR_RETURN(LoadedOnnxModel model, CheckOnnxModel(raw.proto, request.model.string(), load));
  ASSIGN_OR_RETURN(Graph graph, ImportModel(model));
  RETURN_IF_ERROR(StopCheck(stop));

  Int8Options int8;
  int8.calibration.method = request.method;
  int8.calibration.percentile = request.percentile;
  int8.random_samples = request.random_samples;
  int8.seed = request.seed;
  int8.fp32_where_faster = false;  // a model for other machines: this one's timings do not choose its layers
  CompileOptions compile;
  for (const std::string& name : request.keep_fp32) compile.keep_fp32[name] = "kept in fp32 by request";
  if (!request.data_dir.empty()) {
    Say(step, "reading the calibration data");
    ASSIGN_OR_RETURN(InputData data, LoadInputData(request.data_dir, graph.inputs, request.data));
    int8.samples = std::move(data.samples);
  }
  RETURN_IF_ERROR(StopCheck(stop));
  Say(step, fmt::format("calibrating for cpu:int8 on {}",
                        int8.samples.empty() ? fmt::format("{} seeded random samples", int8.random_samples)
                                             : fmt::format("{} sample(s) of the data folder", int8.samples.size())));
  const Target cpu_int8{.kind = DeviceKind::kCpu, .precision = Precision::kInt8};
  QuantReport report;
  ASSIGN_OR_RETURN(auto compiled, CompileForTarget(graph, cpu_int8, compile, int8, &report));
  RETURN_IF_ERROR(StopCheck(stop));

  Say(step, "writing the QDQ model");
  const std::map<std::string, Tensor> sample =
      int8.samples.empty() ? RandomCalibrationData(graph, 1, request.seed).front() : int8.samples.front();
  ASSIGN_OR_RETURN(auto ranks, KernelOutputRanks(*compiled, sample, stop));
  QdqOptions options{.int8_nodes = Int8WeightedNodes(*compiled, graph),
                     .keep_fp32 = {request.keep_fp32.begin(), request.keep_fp32.end()},
                     .origin = request.model.string(),
                     .shaped = &model.proto,
                     .ranks = std::move(ranks),
                     .outputs = QdqOptions::Outputs::kShared};
  if (options.int8_nodes.empty()) {
    return InvalidArgument("'" + request.model.string() + "': no Conv, MatMul or Gemm runs in int8 on cpu:int8 (" +
                           DescribeQuantReport(report) + "); nothing to quantise");
  }
  ASSIGN_OR_RETURN(QdqExport exported, ExportQdq(raw.proto, report.table, options));
  RETURN_IF_ERROR(WriteOnnxModel(exported.model, request.output));

  // Read back as any runtime would: a file that does not load is an error, not a result.
  Say(step, "loading the written model back");
  ASSIGN_OR_RETURN(LoadedOnnxModel written, LoadOnnxModel(request.output, load));
  ASSIGN_OR_RETURN(Graph written_graph, ImportModel(written));
  Int8ExportResult result;
  for (const Node& n : written_graph.nodes) {
    result.qdq_nodes += n.op_type == "QuantizeLinear" || n.op_type == "DequantizeLinear";
  }
  result.output = request.output;
  result.random_calibration = report.random_calibration;
  result.samples = report.samples;
  result.calibration = DescribeQuantReport(report);
  result.quantized = exported.quantized;
  result.kept_small = report.kept_small;
  result.kept_fp32 = exported.kept_fp32;  // "node: why", the requested ones among them
  result.from_opset = exported.from_opset;
  result.to_opset = exported.to_opset;
  std::error_code ec;
  result.bytes = std::filesystem::file_size(request.output, ec);
  return result;
}

Result<SavedOutputs> SaveModelOutputs(const SaveOutputsRequest& request, const StepSink& step,
                                      const std::stop_token& stop) {
  Say(step, "loading and checking the model");
  ASSIGN_OR_RETURN(const OnnxLoadOptions load, LoadOptionsFor(request.shapes));
  ASSIGN_OR_RETURN(LoadedOnnxModel model, LoadOnnxModel(request.model, load));
  ASSIGN_OR_RETURN(Graph graph, ImportModel(model));
  RETURN_IF_ERROR(StopCheck(stop));

  SavedOutputs saved;
  std::map<std::string, Tensor> inputs;
  Int8Options int8;
  if (!request.data_dir.empty()) {
    Say(step, "reading the data folder");
    ASSIGN_OR_RETURN(InputData data, LoadInputData(request.data_dir, graph.inputs, request.data));
    inputs = data.samples.front();
    int8.samples = std::move(data.samples);
    saved.inputs = "the first sample of " + request.data_dir;
  } else {
    for (const ValueDesc& desc : graph.inputs) inputs[desc.name] = SeededInput(desc, request.seed);
    BoundIndexInputs(InputIndexBounds(graph), inputs);
    SeedSequenceLengths(graph, inputs);
    saved.inputs = fmt::format("seeded random inputs (seed {})", request.seed);
  }
  Say(step, "compiling for " + request.target.ToString());
  ASSIGN_OR_RETURN(auto compiled, CompileForTarget(graph, request.target, {}, int8));
  for (const KernelInfo& k : compiled->kernels()) {
    if (!k.fallback_reason.empty())
      saved.fallbacks.push_back(fmt::format("{} ({}) on {}: {}", k.name, k.op_type, k.device, k.fallback_reason));
  }
  RETURN_IF_ERROR(StopCheck(stop));
  Say(step, "running on " + request.target.ToString());
  ASSIGN_OR_RETURN(std::vector<Tensor> outputs, compiled->Run(inputs, nullptr, stop));

  Say(step, "writing the outputs");
  std::error_code ec;
  std::filesystem::create_directories(request.folder, ec);
  if (ec) return IoError("cannot create the folder '" + request.folder.string() + "': " + ec.message());
  for (size_t i = 0; i < outputs.size() && i < graph.outputs.size(); ++i) {
    // The file name of `chipfit run --output-dir` (and of a calibration folder's inputs).
    const std::filesystem::path file = request.folder / CalibrationFileName(graph.outputs[i].name);
    RETURN_IF_ERROR(WriteNpy(file, outputs[i]));
    saved.outputs.push_back({graph.outputs[i].name, DescribeTensor(outputs[i]), file});
  }
  return saved;
}

// `chipfit report --in FILE`'s reading of the file (cli_main.cpp's LoadRunOrProfile), for the GUI.
Result<RunResult> ReadProfileJson(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return NotFound("cannot read '" + file.string() + "'");
  const nlohmann::json run = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (run.is_discarded() || !run.is_object() || !run.contains("targets")) {
    return ParseError("'" + file.string() + "' is not a chipfit profile JSON (schema chipfit.profile/1)");
  }
  auto typed = RunResultFromJson(run);
  if (!typed.ok()) return Status(typed.status().code(), "'" + file.string() + "': " + typed.status().message());
  return typed;
}

namespace {

// What `chipfit batch` makes of a manifest entry (cli_main.cpp's RunBatch and ProfileOptionsFromFlags),
// straight into the session's options.
Result<ProfileOptions> BatchOptions(const BatchManifest& m, const BatchModel& bm, const std::filesystem::path& db) {
  ProfileOptions o;
  const std::string targets = bm.targets ? *bm.targets : (m.all_targets ? "all" : m.targets);
  o.all_targets = targets == "all";
  if (!o.all_targets) {
    o.targets_text = targets;
    for (size_t start = 0; start <= targets.size();) {
      const size_t comma = std::min(targets.find(',', start), targets.size());
      if (comma > start) {
        ASSIGN_OR_RETURN(Target target, ParseTarget(targets.substr(start, comma - start)));
        o.targets.push_back(target);
      }
      start = comma + 1;
    }
  }
  o.shapes = bm.shapes;
  o.data_dir = bm.data;
  ASSIGN_OR_RETURN(o.data.preprocess, ParsePreprocess(bm.preprocess ? *bm.preprocess : m.preprocess));
  o.data.sample_rate = bm.sample_rate ? *bm.sample_rate : m.sample_rate;
  o.iterations = m.iterations;
  o.warmup = m.warmup;
  o.min_time_s = m.min_time;
  o.threads = m.threads;
  const BatchCalibration& c = bm.calibration ? *bm.calibration : m.calibration;
  const auto method = ParseCalibrationMethod(c.method);
  if (!method) return InvalidArgument("calibration method '" + c.method + "': expected minmax, entropy or percentile");
  o.calibration = *method;
  o.calibration_percentile = c.percentile;
  o.calibration_samples = c.samples;
  o.keep_fp32 = c.keep_fp32;
  o.auto_fp32_sqnr = c.auto_fp32_sqnr;
  o.auto_fp32_agreement = c.auto_fp32_agreement;
  o.int8_all_layers = c.int8_all_layers;
  o.recommend = m.recommend;
  if (bm.limits) o.recommend.limits = *bm.limits;
  o.store = true;
  o.db = db;
  o.source = "gui";
  o.stop_source = "Cancel";
  return o;
}

// The session's phases as the batch's one step line.
class BatchEvents final : public ProfileEvents {
 public:
  BatchEvents(const StepSink& step, std::string model) : step_(step), model_(std::move(model)) {}
  void RunStarted(const RunResult&, const std::vector<Target>& targets) override {
    names_.clear();
    for (const Target& t : targets) names_.push_back(t.ToString());
  }
  void Phase(size_t index, const std::string& phase, const std::string&) override {
    const std::string target = index < names_.size() ? names_[index] : "";
    Say(step_, model_ + ": " + target + (target.empty() ? "" : " ") + phase);
  }

 private:
  const StepSink& step_;
  std::string model_;
  std::vector<std::string> names_;
};

BatchModelOutcome ProfileOne(const BatchManifest& m, const BatchModel& bm, const std::filesystem::path& db,
                             const StepSink& step, const std::string& label, const std::stop_token& stop) {
  BatchModelOutcome out{.model = bm.path.string()};
  auto options = BatchOptions(m, bm, db);
  if (!options.ok()) {
    out.error = options.status().message();
    return out;
  }
  const bool limits = options->recommend.limits.any();
  ProfileSession session(std::move(*options));
  if (Status valid = session.Validate(); !valid.ok()) {
    out.error = valid.message();
    return out;
  }
  BatchEvents events(step, label);
  auto run = session.Run(bm.path, events, stop);
  if (!run.ok()) {
    out.error = run.status().message();
    return out;
  }
  out.run_id = (*run)->run_id;
  const nlohmann::json& rec = (*run)->recommendation;
  if (rec.is_object() && rec.contains("best") && rec["best"].is_string()) {
    out.best = rec["best"].get<std::string>();
    for (const auto& s : rec.value("scores", nlohmann::json::array())) {
      if (s.value("target", "") == out.best && s.contains("p50_ms") && s["p50_ms"].is_number())
        out.p50_ms = s["p50_ms"].get<double>();
    }
  }
  out.limits_broken = out.best.empty() && limits;
  for (const auto& t : (*run)->targets) out.failed_targets += t->status == "failed";
  return out;
}

}  // namespace

Result<BatchOutcome> RunBatchManifest(const std::filesystem::path& manifest, const std::filesystem::path& db,
                                      const StepSink& step, const std::stop_token& stop) {
  Say(step, "reading the manifest");
  ASSIGN_OR_RETURN(BatchManifest m, ReadBatchManifest(manifest));
  BatchOutcome outcome;
  outcome.total = m.models.size();
  for (size_t i = 0; i < m.models.size(); ++i) {
    if (stop.stop_requested()) {
      outcome.cancelled = true;
      break;
    }
    const std::string label =
        fmt::format("{} ({} of {})", m.models[i].path.filename().string(), i + 1, m.models.size());
    Say(step, label);
    outcome.models.push_back(ProfileOne(m, m.models[i], db, step, label, stop));
    // A stop request ends the model's run as cancelled; the models after it are not started.
    if (stop.stop_requested()) {
      outcome.cancelled = true;
      break;
    }
  }
  return outcome;
}

QString BatchSummary(const BatchOutcome& outcome) {
  QStringList lines;
  int broken = 0, errors = 0;
  for (const BatchModelOutcome& m : outcome.models) {
    const QString name = QFileInfo(ToQString(m.model)).fileName();
    const QString run = m.run_id ? ModelActions::tr("run %1").arg(*m.run_id) : QString();
    if (!m.error.empty()) {
      ++errors;
      lines << ModelActions::tr("%1: did not profile: %2").arg(name, GuiWording(m.error));
      continue;
    }
    QString line =
        m.best.empty()
            ? ModelActions::tr("%1: no target recommended").arg(name)
            : ModelActions::tr("%1: best %2, p50 %3 ms").arg(name, ToQString(m.best)).arg(m.p50_ms, 0, 'f', 3);
    if (m.limits_broken) {
      ++broken;
      line += ModelActions::tr(", every target breaks the limits");
    }
    if (m.failed_targets > 0) line += ModelActions::tr(", %1 target(s) failed").arg(m.failed_targets);
    if (!run.isEmpty()) line += QStringLiteral(" (") + run + QLatin1Char(')');
    lines << line;
  }
  QString head = ModelActions::tr("%1 of %2 models profiled").arg(outcome.models.size() - errors).arg(outcome.total);
  if (outcome.cancelled) head += ModelActions::tr(", then cancelled");
  head += broken == 0 ? ModelActions::tr("; no model broke its limits.")
                      : ModelActions::tr("; %1 broke their limits.").arg(broken);
  return head + QStringLiteral("\n\n") + lines.join(QLatin1Char('\n')) + QStringLiteral("\n\n") +
         ModelActions::tr("The runs are on the History page.");
}

ModelActions::ModelActions(QWidget* window) : QObject(window), window_(window) {
  connect(&watcher_, &QFutureWatcher<Outcome>::finished, this, &ModelActions::onFinished);
}

// The jobs hold no pointer to this object; they are stopped and waited for so that no file is left half
// written when the window goes.
ModelActions::~ModelActions() {
  stop_.request_stop();
  watcher_.waitForFinished();
}

void ModelActions::cancel() { stop_.request_stop(); }

void ModelActions::start(const QString& label, std::function<Outcome(const StepSink&, const std::stop_token&)> job) {
  Q_ASSERT(QThread::currentThread() == thread());
  stop_ = std::stop_source();
  if (show_results_ && window_) {
    // Window-modal: the rest of the window waits, the event loop (and a run in progress) goes on.
    progress_ = new QProgressDialog(label, tr("Cancel"), 0, 0, window_);
    progress_->setObjectName(QStringLiteral("modelActionProgress"));
    progress_->setWindowModality(Qt::WindowModal);
    progress_->setMinimumDuration(0);
    progress_->setAttribute(Qt::WA_DeleteOnClose);
    connect(progress_, &QProgressDialog::canceled, this, &ModelActions::cancel);
    connect(this, &ModelActions::stepChanged, progress_, [dialog = progress_, label](const QString& step) {
      dialog->setLabelText(label + QLatin1Char('\n') + step);
    });
    progress_->show();
  }
  // The sink runs on the pool thread: the step crosses to this object's thread as a queued call.
  StepSink sink = [this](const std::string& step) {
    QMetaObject::invokeMethod(
        this, [this, text = ToQString(step)] { emit stepChanged(text); }, Qt::QueuedConnection);
  };
  watcher_.setFuture(QtConcurrent::run([job = std::move(job), sink, stop = stop_.get_token()]() -> Outcome {
    try {
      return job(sink, stop);
    } catch (const std::exception& error) {
      // protobuf and device libraries may throw; result() must not rethrow in the event loop.
      return {.ok = false, .title = tr("Failed"), .message = QString::fromUtf8(error.what()), .run = nullptr};
    }
  }));
}

void ModelActions::onFinished() {
  Q_ASSERT(QThread::currentThread() == thread());
  const Outcome outcome = watcher_.result();
  if (progress_ != nullptr) {
    progress_->disconnect(this);
    progress_->close();
    progress_ = nullptr;
  }
  if (outcome.run) emit runOpened(outcome.run);
  if (show_results_ && window_ && !outcome.run) {
    auto* box = new QMessageBox(outcome.ok ? QMessageBox::Information : QMessageBox::Warning, outcome.title,
                                outcome.message, QMessageBox::Ok, window_);
    box->setObjectName(QStringLiteral("modelActionResult"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setTextInteractionFlags(Qt::TextSelectableByMouse);
    box->open();
  } else if (show_results_ && window_ && !outcome.ok) {
    QMessageBox::warning(window_, outcome.title, outcome.message);
  }
  emit finished(outcome.ok, outcome.message);
}

void ModelActions::exportInt8(Int8ExportRequest request) {
  if (isBusy()) return;
  const QFileInfo model(QString::fromStdString(request.model.string()));
  const QString suggested = model.absoluteDir().filePath(model.completeBaseName() + QStringLiteral("_int8.onnx"));
  const QString path = QFileDialog::getSaveFileName(window_, tr("Export the int8 model (QDQ ONNX)"), suggested,
                                                    tr("ONNX models (*.onnx)"));
  if (path.isEmpty()) return;
  request.output = path.toStdString();
  startExport(std::move(request));
}

void ModelActions::startExport(Int8ExportRequest request) {
  if (isBusy()) return;
  const QString name = QFileInfo(QString::fromStdString(request.model.string())).fileName();
  start(tr("Exporting %1 as an int8 model…").arg(name),
        [request = std::move(request)](const StepSink& step, const std::stop_token& stop) -> Outcome {
          auto result = ExportInt8Model(request, step, stop);
          if (!result.ok()) {
            const bool cancelled = result.status().code() == StatusCode::kCancelled;
            return {.ok = false,
                    .title = cancelled ? tr("Export cancelled") : tr("Cannot export the int8 model"),
                    .message = cancelled ? tr("Nothing was written.") : GuiWording(result.status().message()),
                    .run = nullptr};
          }
          QStringList lines;
          lines << tr("Wrote %1 (%2 KiB): %3 layers quantised, %4 QuantizeLinear/DequantizeLinear nodes; it loads "
                      "back.")
                       .arg(ToQString(result->output.string()))
                       .arg(result->bytes / 1024)
                       .arg(result->quantized.size())
                       .arg(result->qdq_nodes);
          if (result->random_calibration) {
            lines << tr("Calibrated on %1 seeded random samples, not on your data: the scales fit random inputs. "
                        "Choose a data folder on the Targets page to calibrate on real inputs.")
                         .arg(result->samples);
          } else {
            lines << tr("Calibrated on %1 sample(s) of the Targets page's data folder.").arg(result->samples);
          }
          if (result->to_opset != result->from_opset) {
            lines << tr("Opset raised from %1 to %2 (per-channel DequantizeLinear needs 13).")
                         .arg(result->from_opset)
                         .arg(result->to_opset);
          }
          if (!result->kept_small.empty()) {
            QStringList kept;
            for (const std::string& k : result->kept_small) kept << ToQString(k);
            lines << tr("Kept in float, too small to gain from int8: %1").arg(kept.join(QStringLiteral(", ")));
          }
          if (!result->kept_fp32.empty()) {
            QStringList kept;
            for (const std::string& k : result->kept_fp32) kept << GuiWording(k);
            lines << tr("Kept in float: %1").arg(kept.join(QStringLiteral(", ")));
          }
          return {.ok = true,
                  .title = tr("int8 model exported"),
                  .message = lines.join(QStringLiteral("\n\n")),
                  .run = nullptr};
        });
}

void ModelActions::saveOutputs(SaveOutputsRequest request, const QStringList& targets) {
  if (isBusy() || targets.isEmpty()) return;
  bool ok = false;
  const QString target = QInputDialog::getItem(window_, tr("Save outputs"), tr("Run the model once on:"), targets, 0,
                                               /*editable=*/false, &ok);
  if (!ok || target.isEmpty()) return;
  auto parsed = ParseTarget(target.toStdString());
  if (!parsed.ok()) return;
  const QString folder = QFileDialog::getExistingDirectory(window_, tr("Save each output as .npy into"));
  if (folder.isEmpty()) return;
  request.target = *parsed;
  request.folder = folder.toStdString();
  startSaveOutputs(std::move(request));
}

void ModelActions::startSaveOutputs(SaveOutputsRequest request) {
  if (isBusy()) return;
  const QString target = ToQString(request.target.ToString());
  start(tr("Running the model once on %1…").arg(target),
        [request = std::move(request), target](const StepSink& step, const std::stop_token& stop) -> Outcome {
          auto saved = SaveModelOutputs(request, step, stop);
          if (!saved.ok()) {
            const bool cancelled = saved.status().code() == StatusCode::kCancelled;
            return {.ok = false,
                    .title = cancelled ? tr("Saving outputs cancelled") : tr("Cannot save the outputs"),
                    .message = cancelled ? tr("No output was written.") : GuiWording(saved.status().message()),
                    .run = nullptr};
          }
          QStringList lines;
          const QString outputs =
              saved->outputs.size() == 1 ? tr("its output") : tr("its %1 outputs").arg(saved->outputs.size());
          lines << tr("Ran %1 once on %2 with %3 and wrote %4:")
                       .arg(QFileInfo(QString::fromStdString(request.model.string())).fileName(), target,
                            ToQString(saved->inputs), outputs);
          for (const SavedOutput& out : saved->outputs) {
            lines << QStringLiteral("  %1  %2  → %3")
                         .arg(ToQString(out.name), ToQString(out.description), ToQString(out.file.string()));
          }
          if (!saved->fallbacks.empty()) {
            lines << tr("Nodes the target's device refused, run elsewhere:");
            for (const std::string& f : saved->fallbacks) lines << QStringLiteral("  ") + ToQString(f);
          }
          return {.ok = true, .title = tr("Outputs saved"), .message = lines.join(QLatin1Char('\n')), .run = nullptr};
        });
}

void ModelActions::openProfileJson() {
  if (isBusy()) return;
  const QString path = QFileDialog::getOpenFileName(window_, tr("Open a profile JSON"), QString(),
                                                    tr("Profile JSON (*.json);;All files (*)"));
  if (!path.isEmpty()) startOpenProfileJson(path);
}

void ModelActions::startOpenProfileJson(const QString& path) {
  if (isBusy()) return;
  start(tr("Reading %1…").arg(QFileInfo(path).fileName()), [path](const StepSink&, const std::stop_token&) -> Outcome {
    auto run = ReadProfileJson(path.toStdString());
    if (!run.ok()) {
      return {.ok = false,
              .title = tr("Cannot open the profile JSON"),
              .message = ToQString(run.status().message()),
              .run = nullptr};
    }
    const QString name = QFileInfo(path).fileName();
    const size_t targets = run->targets.size();
    return {.ok = true,
            .title = tr("Profile opened"),
            .message = targets == 1 ? tr("%1: 1 target").arg(name) : tr("%1: %2 targets").arg(name).arg(targets),
            .run = std::make_shared<const RunResult>(std::move(*run))};
  });
}

void ModelActions::runBatch(const std::filesystem::path& db) {
  if (isBusy()) return;
  const QString path = QFileDialog::getOpenFileName(window_, tr("Profile every model of a batch manifest"), QString(),
                                                    tr("Batch manifests (*.yaml *.yml);;All files (*)"));
  if (!path.isEmpty()) startBatch(path, db);
}

void ModelActions::startBatch(const QString& manifest, const std::filesystem::path& db) {
  if (isBusy()) return;
  start(tr("Profiling the models of %1…").arg(QFileInfo(manifest).fileName()),
        [manifest, db](const StepSink& step, const std::stop_token& stop) -> Outcome {
          auto outcome = RunBatchManifest(manifest.toStdString(), db, step, stop);
          if (!outcome.ok()) {
            return {.ok = false,
                    .title = tr("Cannot run the batch"),
                    .message = GuiWording(outcome.status().message()),
                    .run = nullptr};
          }
          return {.ok = !outcome->cancelled,
                  .title = outcome->cancelled ? tr("Batch cancelled") : tr("Batch finished"),
                  .message = BatchSummary(*outcome),
                  .run = nullptr};
        });
}

}  // namespace chipfit
