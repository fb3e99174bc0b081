// MainWindow: discovery off the GUI thread, only working pages listed, and a screenshot of real discovery.
#include <gtest/gtest.h>

#include <QAction>
#include <QDir>
#include <QLabel>
#include <QListWidget>
#include <QSemaphore>
#include <QSignalSpy>
#include <QStackedWidget>
#include <QTableView>
#include <QTest>
#include <atomic>
#include <memory>
#include <stdexcept>
#include <thread>

#include "app/mainwindow.h"
#include "chipfit/version.h"
#include "tests/views/sample_devices.h"
#include "views/pages/devices_page.h"
#include "views/pages/model_page.h"

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

}  // namespace
}  // namespace chipfit
