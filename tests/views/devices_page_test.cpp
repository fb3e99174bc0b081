// DevicesPage: what the user sees before and after discovery, filled with hand-made devices.
#include "views/pages/devices_page.h"

#include <gtest/gtest.h>

#include <QLabel>
#include <QTableView>
#include <QTemporaryDir>
#include <fstream>

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
            QStringLiteral("not measured (chipfit devices --measure)"));
  EXPECT_EQ(page.model()->rowCount(), 2);  // the devices are shown all the same
}

}  // namespace
}  // namespace chipfit
