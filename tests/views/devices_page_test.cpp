// DevicesPage: what the user sees before and after discovery, filled with hand-made devices.
#include "views/pages/devices_page.h"

#include <gtest/gtest.h>

#include <QApplication>
#include <QDir>
#include <QImage>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include "tests/views/sample_devices.h"

namespace chipfit {
namespace {

TEST(DevicesPageTest, SaysDiscoveringUntilTheResultArrives) {
  DevicesPage page;
  EXPECT_TRUE(page.isDiscovering());
  EXPECT_EQ(page.statusText(), QStringLiteral("Discovering devices…"));
  EXPECT_EQ(page.table()->model()->rowCount(), 0);

  page.setDiscovery(samples::SampleSnapshot(), {});
  EXPECT_FALSE(page.isDiscovering());
  EXPECT_EQ(page.statusText(), QStringLiteral("2 devices found"));
  EXPECT_EQ(page.table()->model()->rowCount(), 2);
}

TEST(DevicesPageTest, ListsEveryDiscoveryNote) {
  DevicesPage page;
  page.setDiscovery(samples::SampleSnapshot(), {QStringLiteral("CUDA: not built (toolkit not found at configure time)"),
                                                QStringLiteral("OpenCL: <no platforms> & no ICD")});
  EXPECT_TRUE(page.notesText().contains(QStringLiteral("CUDA: not built")));
  // Driver text is shown as typed, not interpreted as markup.
  EXPECT_TRUE(page.notesText().contains(QStringLiteral("OpenCL: <no platforms> & no ICD")));
  const auto* notes = page.findChild<QLabel*>(QStringLiteral("discoveryNotes"));
  ASSERT_NE(notes, nullptr);
  EXPECT_EQ(notes->textFormat(), Qt::PlainText);
  EXPECT_FALSE(notes->isHidden());
}

TEST(DevicesPageTest, HidesNotesWhenThereAreNone) {
  DevicesPage page;
  page.setDiscovery(std::make_shared<const std::vector<DeviceInfo>>(std::vector<DeviceInfo>{samples::SampleCpu()}), {});
  EXPECT_EQ(page.statusText(), QStringLiteral("1 device found"));
  const auto* notes = page.findChild<QLabel*>(QStringLiteral("discoveryNotes"));
  ASSERT_NE(notes, nullptr);
  EXPECT_TRUE(notes->isHidden());
}

// The page reads the ceilings cache itself: a CPU's cached ceilings show with their threads and, when
// other processes held the CPUs while they were measured, the busy flag; a corrupt cache is a note.
TEST(DevicesPageTest, ShowsTheCachedCeilingsWithTheirThreadsAndBusyFlag) {
  QTemporaryDir dir;
  const std::filesystem::path cache = dir.filePath(QStringLiteral("ceilings.json")).toStdString();
  CeilingReport busy;
  busy.device_id = "cpu";
  busy.threads = 2;
  busy.device_key = CeilingKey(samples::SampleCpu(), 2);
  busy.measured.peak_gflops[Precision::kFp32] = 223;
  busy.measured.memory_bandwidth_gbps = 32.9;
  busy.other_cpu_share = 0.45;
  ASSERT_TRUE(SaveCeilingReport(cache, busy).ok());

  DevicesPage page;
  page.setCeilingCachePath(cache);
  page.setDiscovery(samples::SampleSnapshot(), {});
  const QString text = page.model()->index(0, DevicesModel::kCeilingsColumn).data().toString();
  EXPECT_EQ(text, QStringLiteral("fp32 223 GFLOP/s, 32.9 GB/s (2 threads; measured while busy (other processes used 45 "
                                 "% of the CPUs): low)"));
  EXPECT_TRUE(page.findChild<QLabel*>(QStringLiteral("discoveryNotes"))->isHidden());

  std::ofstream(cache) << "{ not json";
  page.setDiscovery(samples::SampleSnapshot(), {});
  EXPECT_TRUE(page.notesText().startsWith(QStringLiteral("Roofline ceilings: "))) << page.notesText().toStdString();
  EXPECT_EQ(page.model()->index(0, DevicesModel::kCeilingsColumn).data().toString(),
            QStringLiteral("not measured (Measure again)"));
  EXPECT_EQ(page.model()->rowCount(), 2);  // the devices are shown all the same
}

// A fake measurement: fixed figures for `device` in no time.
Result<CeilingReport> FakeCeilings(const DeviceInfo& device, double fp32_gflops) {
  CeilingReport r;
  r.device_id = device.Id();
  r.threads = device.kind == DeviceKind::kCpu ? 2 : 0;
  r.device_key = CeilingKey(device, r.threads);
  r.measured.peak_gflops[Precision::kFp32] = fp32_gflops;
  r.measured.memory_bandwidth_gbps = 40;
  r.methods = {"fp32 peak: 2048³ MatMul (fake)"};
  r.measured_at = "2026-11-29T12:00:00Z";
  return r;
}

QString CeilingCell(const DevicesPage& page, int row, int column) {
  return page.ceilingsModel()->index(row, column).data().toString();
}

// The ceilings table shows each device's cached ceilings per precision; Measure again measures every
// device off the GUI thread and the table, and the cache, show the new figures.
TEST(DevicesPageTest, ShowsCeilingsPerPrecisionAndMeasureAgainUpdatesThem) {
  QTemporaryDir dir;
  const std::filesystem::path cache = dir.filePath(QStringLiteral("ceilings.json")).toStdString();
  ASSERT_TRUE(SaveCeilingReport(cache, *FakeCeilings(samples::SampleCpu(), 100)).ok());

  DevicesPage page;
  page.setCeilingCachePath(cache);
  auto* button = page.findChild<QPushButton*>(QStringLiteral("measureAgain"));
  ASSERT_NE(button, nullptr);
  EXPECT_FALSE(button->isEnabled());  // nothing to measure before discovery
  page.setDiscovery(samples::SampleSnapshot(), {});
  EXPECT_TRUE(button->isEnabled());
  ASSERT_EQ(page.ceilingsModel()->rowCount(), 2);  // cpu fp32; opencl:0 not measured
  EXPECT_EQ(CeilingCell(page, 0, CeilingsModel::kPeakColumn), QStringLiteral("100 GFLOP/s"));
  EXPECT_EQ(CeilingCell(page, 0, CeilingsModel::kBandwidthColumn), QStringLiteral("40.0 GB/s"));
  EXPECT_EQ(CeilingCell(page, 1, CeilingsModel::kPrecisionColumn),
            QStringLiteral("not measured yet: press Measure again"));

  std::atomic<bool> on_gui_thread{false};
  page.setMeasureFunction([&](const DeviceInfo& device, const std::stop_token&) {
    if (QThread::currentThread() == qApp->thread()) on_gui_thread = true;
    return FakeCeilings(device, device.kind == DeviceKind::kCpu ? 250 : 30);
  });
  QSignalSpy finished(&page, &DevicesPage::measuringFinished);
  button->click();
  EXPECT_TRUE(page.isMeasuring());
  EXPECT_FALSE(button->isEnabled());
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_FALSE(on_gui_thread);
  EXPECT_TRUE(button->isEnabled());
  EXPECT_TRUE(page.measureText().startsWith(QStringLiteral("Measured cpu, opencl:0 again at ")))
      << page.measureText().toStdString();
  ASSERT_EQ(page.ceilingsModel()->rowCount(), 2);
  EXPECT_EQ(CeilingCell(page, 0, CeilingsModel::kPeakColumn), QStringLiteral("250 GFLOP/s"));
  EXPECT_EQ(CeilingCell(page, 1, CeilingsModel::kDeviceColumn), QStringLiteral("opencl:0"));
  EXPECT_EQ(CeilingCell(page, 1, CeilingsModel::kPeakColumn), QStringLiteral("30.0 GFLOP/s"));
  // Saved where profiles read them.
  auto cached = LoadCeilingCache(cache);
  ASSERT_TRUE(cached.ok());
  EXPECT_EQ(cached->size(), 2u);
}

// Cancel stops the measurement after the current figure: the devices measured keep their new ceilings,
// the others their earlier ones, and the page says so.
TEST(DevicesPageTest, CancelStopsMeasuringAndSaysWhatWasKept) {
  QTemporaryDir dir;
  DevicesPage page;
  page.setCeilingCachePath(dir.filePath(QStringLiteral("ceilings.json")).toStdString());
  page.setDiscovery(samples::SampleSnapshot(), {});
  std::atomic<bool> started{false};
  page.setMeasureFunction([&](const DeviceInfo& device, const std::stop_token& stop) -> Result<CeilingReport> {
    if (device.kind == DeviceKind::kCpu) return FakeCeilings(device, 250);
    started = true;
    while (!stop.stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return Cancelled("measuring ceilings cancelled");
  });
  QSignalSpy finished(&page, &DevicesPage::measuringFinished);
  ASSERT_TRUE(page.measureAgain());
  auto* cancel = page.findChild<QPushButton*>(QStringLiteral("measureCancel"));
  ASSERT_NE(cancel, nullptr);
  ASSERT_TRUE(QTest::qWaitFor([&] { return started.load(); }, 10000));
  EXPECT_TRUE(cancel->isVisible() || !page.isVisible());
  // The step arrives through the event loop.
  EXPECT_TRUE(QTest::qWaitFor([&] { return page.measureText().contains(QStringLiteral("opencl:0 (2 of 2)")); }, 10000))
      << page.measureText().toStdString();
  cancel->click();
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_EQ(page.measureText(),
            QStringLiteral("Measuring cancelled after cpu; the others keep their earlier ceilings."));
  EXPECT_EQ(CeilingCell(page, 0, CeilingsModel::kPeakColumn), QStringLiteral("250 GFLOP/s"));
  EXPECT_EQ(CeilingCell(page, 1, CeilingsModel::kPrecisionColumn),
            QStringLiteral("not measured yet: press Measure again"));
}

// A measurement made while other processes held the CPUs is low: it does not replace ceilings measured
// idle, and the page says why and what to do.
TEST(DevicesPageTest, BusyFiguresDoNotReplaceIdleOnes) {
  QTemporaryDir dir;
  const std::filesystem::path cache = dir.filePath(QStringLiteral("ceilings.json")).toStdString();
  ASSERT_TRUE(SaveCeilingReport(cache, *FakeCeilings(samples::SampleCpu(), 200)).ok());
  DevicesPage page;
  page.setCeilingCachePath(cache);
  page.setDiscovery(std::make_shared<const std::vector<DeviceInfo>>(std::vector<DeviceInfo>{samples::SampleCpu()}), {});
  page.setMeasureFunction([](const DeviceInfo& device, const std::stop_token&) {
    auto busy = FakeCeilings(device, 60);
    busy->other_cpu_share = 0.5;
    return busy;
  });
  QSignalSpy finished(&page, &DevicesPage::measuringFinished);
  ASSERT_TRUE(page.measureAgain());
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_EQ(CeilingCell(page, 0, CeilingsModel::kPeakColumn), QStringLiteral("200 GFLOP/s"));
  EXPECT_EQ(page.measureText(),
            QStringLiteral("Measured while the machine was busy, so the earlier ceilings stay: cpu "
                           "(other processes used 50 % of the CPUs). Measure again when it is idle."));
}

TEST(DevicesPageTest, Screenshot) {
  QTemporaryDir dir;
  const std::filesystem::path cache = dir.filePath(QStringLiteral("ceilings.json")).toStdString();
  ASSERT_TRUE(SaveCeilingReport(cache, *FakeCeilings(samples::SampleCpu(), 219.7)).ok());
  DevicesPage page;
  page.setCeilingCachePath(cache);
  page.setDiscovery(samples::SampleSnapshot(), {QStringLiteral("CUDA: not built")});
  page.resize(1200, 600);
  const QImage image = page.grab().toImage();
  ASSERT_FALSE(image.isNull());
  const QString artifacts = QStringLiteral(CHIPFIT_BINARY_DIR "/test-artifacts");
  ASSERT_TRUE(QDir().mkpath(artifacts));
  EXPECT_TRUE(image.save(artifacts + QStringLiteral("/devices_page.png")));
}

}  // namespace
}  // namespace chipfit
