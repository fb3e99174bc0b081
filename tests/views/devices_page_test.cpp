// DevicesPage: what the user sees before and after discovery, filled with hand-made devices.
#include "views/pages/devices_page.h"

#include <gtest/gtest.h>

#include <QLabel>
#include <QTableView>

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

}  // namespace
}  // namespace chipfit
