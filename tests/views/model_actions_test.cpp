// The Model and File menu's jobs on the sample CNN: Export int8 model writes a QDQ ONNX file that loads
// back, Save outputs writes one .npy per output, Open profile JSON reads a run; each through ModelActions
// (pool thread, finished signal) and, for the export, cancelled too.
#include "views/pages/model_actions.h"

#include "app/mainwindow.h"

#include <gtest/gtest.h>

#include <QFile>
#include <QMenuBar>
#include <QSignalSpy>
#include <QStackedWidget>
#include <QTemporaryDir>
#include <QWidget>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/graph/onnx_import.h"
#include "core/graph/onnx_loader.h"
#include "core/store/run_store.h"
#include "core/tensor/npy.h"
#include "views/pages/layers_page.h"

namespace chipfit {
namespace {

constexpr int kWaitMs = 120000;
const std::filesystem::path kCnn = CHIPFIT_SOURCE_DIR "/resources/models/cnn.onnx";

int CountOps(const std::filesystem::path& file, const char* op) {
  auto model = LoadOnnxModel(file);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return -1;
  auto graph = ImportModel(*model);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  if (!graph.ok()) return -1;
  int count = 0;
  for (const Node& node : graph->nodes) count += node.op_type == op;
  return count;
}

TEST(ModelActionsTest, ExportInt8WritesALoadableQdqModelAndSaysTheCalibrationWasRandom) {
  QTemporaryDir dir;
  QWidget window;
  ModelActions actions(&window);
  actions.setShowResults(false);
  QSignalSpy finished(&actions, &ModelActions::finished);
  QSignalSpy steps(&actions, &ModelActions::stepChanged);
  Int8ExportRequest request{.model = kCnn, .shapes = {}, .output = dir.filePath("cnn_int8.onnx").toStdString()};
  actions.startExport(request);
  EXPECT_TRUE(actions.isBusy());
  ASSERT_TRUE(finished.wait(kWaitMs));
  ASSERT_TRUE(finished.first().at(0).toBool()) << finished.first().at(1).toString().toStdString();
  const QString message = finished.first().at(1).toString();
  EXPECT_TRUE(message.contains(QStringLiteral("it loads back"))) << message.toStdString();
  // No data folder: the message says the scales come from seeded random data, and where to give real data.
  EXPECT_TRUE(message.contains(QStringLiteral("seeded random samples"))) << message.toStdString();
  EXPECT_TRUE(message.contains(QStringLiteral("data folder on the Targets page"))) << message.toStdString();
  EXPECT_FALSE(message.contains(QStringLiteral("--"))) << message.toStdString();
  EXPECT_GT(CountOps(request.output, "QuantizeLinear"), 0);
  EXPECT_GT(CountOps(request.output, "DequantizeLinear"), 0);
  EXPECT_GE(steps.count(), 3);  // loading, calibrating, writing, loading back
}

// A stop request (the progress dialog's Cancel) ends the export before the file is written. The job is
// given an already-stopped token: through the dialog, a busy machine may finish the small model first.
TEST(ModelActionsTest, ACancelledExportWritesNothing) {
  QTemporaryDir dir;
  const std::filesystem::path out = dir.filePath("cnn_int8.onnx").toStdString();
  std::stop_source stop;
  stop.request_stop();
  auto result = ExportInt8Model({.model = kCnn, .shapes = {}, .output = out}, {}, stop.get_token());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kCancelled);
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(ModelActionsTest, SaveOutputsWritesOneNpyPerOutput) {
  QTemporaryDir dir;
  const std::filesystem::path folder = dir.filePath("outputs").toStdString();
  auto written = SaveModelOutputs({.model = kCnn, .shapes = {}, .target = *ParseTarget("cpu:fp32"), .folder = folder});
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  auto model = LoadOnnxModel(kCnn);
  ASSERT_TRUE(model.ok());
  auto graph = ImportModel(*model);
  ASSERT_TRUE(graph.ok());
  ASSERT_EQ(written->outputs.size(), graph->outputs.size());
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) files += entry.path().extension() == ".npy";
  EXPECT_EQ(files, graph->outputs.size());
  for (const SavedOutput& out : written->outputs) {
    auto tensor = ReadNpy(out.file);
    ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
    EXPECT_GT(tensor->shape().size(), 0u);
  }
  EXPECT_EQ(written->inputs, "seeded random inputs (seed 1)");

  // Through the menu's job: the message names every file.
  QWidget window;
  ModelActions actions(&window);
  actions.setShowResults(false);
  QSignalSpy finished(&actions, &ModelActions::finished);
  const std::filesystem::path second = dir.filePath("again").toStdString();
  actions.startSaveOutputs({.model = kCnn, .shapes = {}, .target = *ParseTarget("cpu:int8"), .folder = second});
  ASSERT_TRUE(finished.wait(kWaitMs));
  ASSERT_TRUE(finished.first().at(0).toBool()) << finished.first().at(1).toString().toStdString();
  EXPECT_TRUE(finished.first().at(1).toString().contains(QString::fromStdString(written->outputs[0].name + ".npy")));
  EXPECT_TRUE(std::filesystem::exists(second / (written->outputs[0].name + ".npy")));
}

TEST(ModelActionsTest, OpenProfileJsonReadsTheRunAndRefusesOtherJson) {
  QWidget window;
  ModelActions actions(&window);
  actions.setShowResults(false);
  std::vector<std::shared_ptr<const RunResult>> opened;
  QObject::connect(&actions, &ModelActions::runOpened,
                   [&](std::shared_ptr<const RunResult> run) { opened.push_back(std::move(run)); });
  QSignalSpy finished(&actions, &ModelActions::finished);
  actions.startOpenProfileJson(QStringLiteral(CHIPFIT_SOURCE_DIR "/tests/data/sample_run.json"));
  ASSERT_TRUE(finished.wait(kWaitMs));
  ASSERT_EQ(opened.size(), 1u);
  ASSERT_NE(opened[0], nullptr);
  EXPECT_FALSE(opened[0]->targets.empty());

  QTemporaryDir dir;
  const QString other = dir.filePath(QStringLiteral("other.json"));
  {
    QFile file(other);
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    file.write(R"({"x": "1x3x48x192"})");
  }
  actions.startOpenProfileJson(other);
  ASSERT_TRUE(finished.wait(kWaitMs));
  EXPECT_FALSE(finished.last().at(0).toBool());
  EXPECT_TRUE(finished.last().at(1).toString().contains(QStringLiteral("is not a chipfit profile JSON")));
  EXPECT_EQ(opened.size(), 1u);
}

// File › Open profile JSON in the window: the file's run becomes the open run, shown on Layers; the
// Model menu has the two model jobs.
TEST(ModelActionsTest, TheWindowShowsAnOpenedProfileJsonAsTheOpenRun) {
  QTemporaryDir dir;
  MainWindow window([] { return DiscoveryReport{}; }, nullptr,
                    dir.filePath(QStringLiteral("chipfit.db")).toStdString());
  auto* open_json = window.findChild<QAction*>(QStringLiteral("openProfileJsonAction"));
  ASSERT_NE(open_json, nullptr);
  EXPECT_NE(window.findChild<QAction*>(QStringLiteral("exportInt8Action")), nullptr);
  EXPECT_NE(window.findChild<QAction*>(QStringLiteral("saveOutputsAction")), nullptr);
  auto* actions = window.findChild<ModelActions*>();
  ASSERT_NE(actions, nullptr);
  actions->setShowResults(false);
  QSignalSpy finished(actions, &ModelActions::finished);
  EXPECT_EQ(window.currentRun(), nullptr);
  actions->startOpenProfileJson(QStringLiteral(CHIPFIT_SOURCE_DIR "/tests/data/sample_run.json"));
  ASSERT_TRUE(finished.wait(kWaitMs));
  ASSERT_NE(window.currentRun(), nullptr);
  EXPECT_FALSE(window.currentRun()->targets.empty());
  EXPECT_EQ(window.findChild<QStackedWidget*>(QStringLiteral("pages"))->currentWidget(), window.layersPage());
}

// Run › Batch manifest: every model profiled into the store off the GUI thread, with the step said as it
// goes, and a summary that names the model whose limits no target meets.
TEST(ModelActionsTest, BatchProfilesEveryModelAndSaysWhichBrokeItsLimits) {
  QTemporaryDir dir;
  const QString manifest = dir.filePath(QStringLiteral("manifest.yaml"));
  {
    QFile file(manifest);
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    file.write(
        "models:\n"
        "  - path: " CHIPFIT_SOURCE_DIR
        "/resources/models/cnn.onnx\n"
        "  - path: " CHIPFIT_SOURCE_DIR
        "/resources/models/mlp.onnx\n"
        "    shapes: {x: 1x64}\n"
        "    limits: {max_latency_ms: 0.000001, latency_stat: p50}\n"
        "targets: [cpu:fp32]\n"
        "limits: {max_latency_ms: 1000, latency_stat: p50, rank_unreliable: true}\n"
        "iterations: 5\nwarmup: 1\nmin_time: 0.01\nthreads: 1\n");
  }
  const std::filesystem::path db = dir.filePath(QStringLiteral("chipfit.db")).toStdString();
  QWidget window;
  ModelActions actions(&window);
  actions.setShowResults(false);
  QSignalSpy finished(&actions, &ModelActions::finished);
  QSignalSpy steps(&actions, &ModelActions::stepChanged);
  actions.startBatch(manifest, db);
  ASSERT_TRUE(finished.wait(kWaitMs));
  const QString summary = finished.first().at(1).toString();
  ASSERT_TRUE(finished.first().at(0).toBool()) << summary.toStdString();
  EXPECT_TRUE(summary.startsWith(QStringLiteral("2 of 2 models profiled; 1 broke their limits.")))
      << summary.toStdString();
  EXPECT_TRUE(summary.contains(QStringLiteral("cnn.onnx: best cpu:fp32, p50 "))) << summary.toStdString();
  EXPECT_TRUE(summary.contains(QStringLiteral("mlp.onnx: no target recommended, every target breaks the limits")))
      << summary.toStdString();
  bool said_model = false;
  for (const auto& args : steps) said_model |= args.at(0).toString().startsWith(QStringLiteral("mlp.onnx (2 of 2)"));
  EXPECT_TRUE(said_model);
  auto store = RunStore::Open(db);
  ASSERT_TRUE(store.ok());
  auto runs = (*store)->ListRuns();
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->size(), 2u);
}

}  // namespace
}  // namespace chipfit
