// MainWindow: discovery off the GUI thread, only working pages listed, and a screenshot of real discovery.
#include <gtest/gtest.h>

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QListWidget>
#include <QSemaphore>
#include <QSettings>
#include <QSignalSpy>
#include <QStackedWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <atomic>
#include <memory>
#include <stdexcept>
#include <thread>

#include "app/mainwindow.h"
#include "chipfit/version.h"
#include "profilers/session/model_analysis.h"
#include "tests/views/sample_devices.h"
#include "tests/views/synthetic_run.h"
#include "views/models/limits_model.h"
#include "views/pages/compare_page.h"
#include "views/pages/devices_page.h"
#include "views/pages/history_page.h"
#include "views/pages/layers_page.h"
#include "views/pages/model_page.h"
#include "views/pages/recommend_page.h"
#include "views/pages/run_page.h"
#include "views/pages/targets_page.h"

namespace chipfit {
namespace {

constexpr int kDiscoveryTimeoutMs = 60'000;  // real discovery loads OpenCL ICDs; slow on a loaded CI host

class FakeDevice final : public IDevice {
 public:
  explicit FakeDevice(DeviceInfo info) : info_(std::move(info)) {}
  const DeviceInfo& info() const override { return info_; }

 private:
  DeviceInfo info_;
};

DiscoveryReport SampleReport() {
  DiscoveryReport report;
  report.devices.push_back(std::make_unique<FakeDevice>(samples::SampleCpu()));
  report.devices.push_back(std::make_unique<FakeDevice>(samples::SampleOpenCL()));
  report.notes.push_back("CUDA: not built into this binary");
  return report;
}

// Holds a fake discovery on its worker until the test opens it. Opened on destruction as well: a failed
// test must not leave a pool thread blocked, since QApplication waits for the pool when it exits.
class Gate {
 public:
  ~Gate() { Open(); }
  void Open() {
    if (!opened_.exchange(true)) semaphore_.release();
  }
  void Wait() { semaphore_.acquire(); }

 private:
  QSemaphore semaphore_;
  std::atomic<bool> opened_ = false;
};

QString StatusBarText(const MainWindow& window) {
  const auto* label = window.findChild<QLabel*>(QStringLiteral("deviceCount"));
  return label ? label->text() : QString();
}

TEST(MainWindowTest, DiscoversOffTheGuiThreadAndShowsDiscoveringMeanwhile) {
  auto gate = std::make_shared<Gate>();
  auto worker_thread = std::make_shared<std::thread::id>();
  MainWindow window([gate, worker_thread] {
    *worker_thread = std::this_thread::get_id();
    gate->Wait();
    return SampleReport();
  });
  QSignalSpy discovered(&window, &MainWindow::devicesDiscovered);

  QTest::qWait(50);  // the event loop runs while discovery is held: the window stays responsive
  EXPECT_TRUE(window.isDiscovering());
  EXPECT_EQ(window.devicesPage()->statusText(), QStringLiteral("Discovering devices…"));
  EXPECT_EQ(StatusBarText(window), QStringLiteral("Discovering devices…"));

  gate->Open();
  ASSERT_TRUE(discovered.wait(kDiscoveryTimeoutMs));
  EXPECT_EQ(discovered.first().first().toInt(), 2);
  EXPECT_NE(*worker_thread, std::this_thread::get_id());
  EXPECT_FALSE(window.isDiscovering());
  EXPECT_EQ(window.devicesPage()->table()->model()->rowCount(), 2);
  EXPECT_EQ(StatusBarText(window), QStringLiteral("2 devices"));
  EXPECT_TRUE(window.devicesPage()->notesText().contains(QStringLiteral("CUDA: not built into this binary")));
}

TEST(MainWindowTest, DiscoveryFailureBecomesANoteInsteadOfACrash) {
  MainWindow window([]() -> DiscoveryReport { throw std::runtime_error("ICD loader exploded"); });
  QSignalSpy discovered(&window, &MainWindow::devicesDiscovered);
  ASSERT_TRUE(discovered.wait(kDiscoveryTimeoutMs));
  EXPECT_EQ(window.devicesPage()->table()->model()->rowCount(), 0);
  EXPECT_EQ(StatusBarText(window), QStringLiteral("0 devices"));
  EXPECT_TRUE(
      window.devicesPage()->notesText().contains(QStringLiteral("Device discovery failed: ICD loader exploded")))
      << window.devicesPage()->notesText().toStdString();
}

TEST(MainWindowTest, ListsOnlyPagesThatWorkAndHasQuitAndAbout) {
  MainWindow window([] { return DiscoveryReport{}; });
  const auto* navigation = window.findChild<QListWidget*>(QStringLiteral("navigation"));
  ASSERT_NE(navigation, nullptr);
  QStringList titles;
  for (int i = 0; i < navigation->count(); ++i) titles << navigation->item(i)->text();
  EXPECT_EQ(titles,
            (QStringList{"Model", "Targets", "Run", "Layers", "Graph", "Compare", "Recommend", "History", "Devices"}));
  const auto* pages = window.findChild<QStackedWidget*>(QStringLiteral("pages"));
  ASSERT_NE(pages, nullptr);
  EXPECT_EQ(pages->currentWidget(), window.modelPage());
  window.showPage(window.devicesPage());
  EXPECT_EQ(pages->currentWidget(), window.devicesPage());

  EXPECT_EQ(window.windowTitle(), QStringLiteral("chipfit"));
  EXPECT_NE(window.findChild<QAction*>(QStringLiteral("quitAction")), nullptr);
  EXPECT_NE(window.findChild<QAction*>(QStringLiteral("aboutAction")), nullptr);
  EXPECT_NE(window.findChild<QAction*>(QStringLiteral("openAction")), nullptr);
  // Nothing to run before a model is open.
  const auto* run = window.findChild<QAction*>(QStringLiteral("runAction"));
  ASSERT_NE(run, nullptr);
  EXPECT_FALSE(run->isEnabled());
  EXPECT_TRUE(MainWindow::aboutText().contains(QStringLiteral(CHIPFIT_VERSION)));
  EXPECT_TRUE(
      MainWindow::aboutText({QStringLiteral("cpu: EPYC — oneDNN 3.0.0")}).contains(QStringLiteral("oneDNN 3.0.0")));
  // Every main action has a shortcut, and Help › Keyboard shortcuts lists them.
  const QStringList shortcuts = window.shortcutList();
  for (const char* action : {"openAction", "runAction", "cancelAction", "exportAction", "findAction", "quitAction",
                             "shortcutsAction", "page1Action", "page9Action"}) {
    const auto* a = window.findChild<QAction*>(QString::fromLatin1(action));
    ASSERT_NE(a, nullptr) << action;
    ASSERT_FALSE(a->shortcut().isEmpty()) << action;
    const QString line =
        a->shortcut().toString(QKeySequence::NativeText) + QChar('\t') + QString(a->text()).remove(QChar('&'));
    EXPECT_TRUE(shortcuts.contains(line)) << line.toStdString();
  }

  QSignalSpy discovered(&window, &MainWindow::devicesDiscovered);
  ASSERT_TRUE(discovered.wait(kDiscoveryTimeoutMs));  // let the worker finish before the window goes
}

// The real registry on this machine: the CPU is always found. The screenshot is the test artefact a
// reviewer looks at.
TEST(MainWindowTest, RealDiscoveryShowsTheCpuAndSavesAScreenshot) {
  MainWindow window;
  QSignalSpy discovered(&window, &MainWindow::devicesDiscovered);
  window.showPage(window.devicesPage());
  window.resize(1280, 480);
  window.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));
  ASSERT_TRUE(QTest::qWaitFor([&window] { return !window.isDiscovering(); }, kDiscoveryTimeoutMs));
  EXPECT_EQ(discovered.count(), 1);

  const QAbstractItemModel* model = window.devicesPage()->table()->model();
  ASSERT_GE(model->rowCount(), 1);
  bool has_cpu = false;
  for (int row = 0; row < model->rowCount(); ++row) {
    has_cpu = has_cpu || model->index(row, DevicesModel::kIdColumn).data().toString() == QStringLiteral("cpu");
  }
  EXPECT_TRUE(has_cpu);
  EXPECT_GT(model->index(0, DevicesModel::kMemoryColumn).data(DevicesModel::RawValueRole).toULongLong(), 0u);

  const QString artifacts = QStringLiteral(CHIPFIT_BINARY_DIR "/test-artifacts");
  ASSERT_TRUE(QDir().mkpath(artifacts));
  EXPECT_TRUE(window.grab().save(artifacts + QStringLiteral("/devices_page.png")));
}

// One set of limits per model: what is ticked on Targets is what Recommend ranks by, an edit on either
// form shows on the other, and a later window opening the same model finds them again.
TEST(MainWindowTest, TargetsAndRecommendShareOneSetOfLimitsSavedWithTheModel) {
  QTemporaryDir settings_dir;
  ASSERT_TRUE(settings_dir.isValid());
  QSettings::setDefaultFormat(QSettings::IniFormat);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings_dir.path());
  QCoreApplication::setOrganizationName(QStringLiteral("chipfit-test"));
  QTemporaryDir store_dir;
  const std::filesystem::path db = store_dir.filePath(QStringLiteral("runs.db")).toStdString();
  {
    MainWindow window([] { return SampleReport(); }, nullptr, db);
    window.targetsPage()->setModelKey(QStringLiteral("model-sha"));
    auto* targets_on = window.targetsPage()->findChild<QCheckBox*>(QStringLiteral("maxLatencyOn"));
    auto* targets_value = window.targetsPage()->findChild<QDoubleSpinBox*>(QStringLiteral("maxLatency"));
    auto* recommend_on = window.recommendPage()->findChild<QCheckBox*>(QStringLiteral("maxLatencyOn"));
    auto* recommend_value = window.recommendPage()->findChild<QDoubleSpinBox*>(QStringLiteral("maxLatency"));
    auto* recommend_objective = window.recommendPage()->findChild<QComboBox*>(QStringLiteral("objective"));
    ASSERT_TRUE(targets_on && targets_value && recommend_on && recommend_value && recommend_objective);
    EXPECT_NE(targets_on, recommend_on);  // two forms, one model

    targets_on->setChecked(true);
    targets_value->setValue(4.5);
    EXPECT_TRUE(recommend_on->isChecked());
    EXPECT_DOUBLE_EQ(recommend_value->value(), 4.5);
    EXPECT_EQ(window.recommendPage()->settings().limits.max_latency_ms, 4.5);

    recommend_objective->setCurrentIndex(recommend_objective->findData(QStringLiteral("energy")));
    EXPECT_EQ(window.targetsPage()->options().recommend.objective, "energy");
    EXPECT_EQ(window.targetsPage()->options().recommend.limits.max_latency_ms, 4.5);
  }
  MainWindow later([] { return SampleReport(); }, nullptr, db);
  EXPECT_EQ(later.recommendPage()->settings().limits.max_latency_ms, std::nullopt);  // another model: none
  later.targetsPage()->setModelKey(QStringLiteral("model-sha"));
  EXPECT_EQ(later.recommendPage()->settings().limits.max_latency_ms, 4.5);
  EXPECT_EQ(later.recommendPage()->settings().objective, "energy");
  EXPECT_EQ(later.limits()->summary(), QStringLiteral("p99 ≤ 4.5 ms · accuracy guard on · objective energy"));
}

// Every page follows the run that is open: opening a stored run puts it on Layers, Recommend, Compare
// and Run alike; a profile that ends with nothing measured (cancelled at once) leaves that run on screen;
// comparing two runs from History changes neither the open run nor the open model.
TEST(MainWindowTest, PagesFollowTheOpenRunAndACancelWithNothingKeepsIt) {
  QTemporaryDir store_dir;
  MainWindow window([] { return SampleReport(); }, nullptr,
                    store_dir.filePath(QStringLiteral("runs.db")).toStdString());
  std::shared_ptr<RunResult> opened = testing::SyntheticRun(12, 2);
  opened->run_id = 1;
  window.showRun(opened, QStringLiteral("opened from History"));
  window.showPageNamed(QStringLiteral("Layers"));
  EXPECT_EQ(window.layersPage()->run(), opened);
  window.showPageNamed(QStringLiteral("Recommend"));
  EXPECT_EQ(window.recommendPage()->run(), opened);
  EXPECT_EQ(window.runPage()->shownRun(), opened);

  // A profile that ended before any target finished: nothing replaces run 1.
  auto cancelled = std::make_shared<RunResult>();
  cancelled->run_id = 4;
  cancelled->status = "cancelled";
  auto stopped = std::make_shared<TargetResult>();
  stopped->target = opened->targets[0]->target;
  stopped->status = "cancelled";
  cancelled->targets.push_back(stopped);
  emit window.runPage()->runFinished(cancelled);
  EXPECT_EQ(window.currentRun(), opened);
  window.showPageNamed(QStringLiteral("Layers"));
  EXPECT_EQ(window.layersPage()->run(), opened);

  // A profile in progress shows each finished target at once, and its end replaces it.
  std::shared_ptr<RunResult> partial = testing::SyntheticRun(12, 1);
  partial->run_id = 5;
  partial->status = "incomplete";
  emit window.runPage()->partialRun(partial);
  EXPECT_EQ(window.layersPage()->run(), partial);

  // Compare from History: the two runs side by side, the open run and model untouched.
  const QString model_before = window.modelPath();
  std::shared_ptr<RunResult> other = testing::SyntheticRun(12, 2);
  other->run_id = 9;
  other->model.path = "/elsewhere/other.onnx";
  other->model.sha256 = "other";
  emit window.historyPage()->compareRuns(opened, other);
  EXPECT_EQ(window.currentRun(), partial);
  EXPECT_EQ(window.modelPath(), model_before);
  EXPECT_TRUE(window.comparePage()->model()->totals().different_models);
}

// "Use 1 for the batch dim": offered only where the leading dim is the one open dim of each input.
TEST(MainWindowTest, ABatchOfOneBindsOnlyTheLeadingDim) {
  ModelAnalysis analysis;
  const auto dim = [](int64_t value) { return DimSpec{value, ""}; };
  TensorSpec images{
      .name = "images", .dtype = "f32", .dims = {{-1, "batch"}, dim(3), dim(224), dim(224)}, .has_shape = true};
  TensorSpec mask{.name = "mask", .dtype = "f32", .dims = {dim(4)}, .has_shape = true};
  analysis.declared_inputs = {images, mask};
  EXPECT_EQ(MainWindow::batchOnlyBindings(analysis, {}), QStringList{QStringLiteral("images=1x3x224x224")});
  // Already bound by the user: nothing to add.
  EXPECT_TRUE(MainWindow::batchOnlyBindings(analysis, {QStringLiteral("images=2x3x224x224")}).isEmpty());
  // Height and width open too (PP-OCR's x: ?x3x?x?): no default fits them.
  analysis.declared_inputs[0].dims = {{-1, "n"}, dim(3), {-1, "h"}, {-1, "w"}};
  EXPECT_TRUE(MainWindow::batchOnlyBindings(analysis, {}).isEmpty());
}

}  // namespace
}  // namespace chipfit
