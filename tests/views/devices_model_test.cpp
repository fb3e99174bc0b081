// DevicesModel and CeilingsModel: model contract under QAbstractItemModelTester, display strings, raw values, tooltips.
#include "views/models/devices_model.h"

#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QDateTime>
#include <QSignalSpy>
#include <QStringList>
#include <QTimeZone>
#include <memory>
#include <vector>

#include "tests/views/model_test_messages.h"
#include "tests/views/sample_devices.h"

namespace chipfit {
namespace {

QModelIndex Cell(const DevicesModel& model, int row, DevicesModel::Column column) { return model.index(row, column); }
QModelIndex Cell(const CeilingsModel& model, int row, int column) { return model.index(row, column); }

TEST(DevicesModelTest, PassesModelTesterAcrossResets) {
  ModelTestMessages messages;
  DevicesModel model(samples::SampleSnapshot());
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
  EXPECT_EQ(model.rowCount(), 2);
  EXPECT_EQ(model.columnCount(), DevicesModel::kColumnCount);

  model.setDevices(std::make_shared<const std::vector<DeviceInfo>>(std::vector<DeviceInfo>{samples::SampleOpenCL()}));
  EXPECT_EQ(model.rowCount(), 1);
  EXPECT_EQ(model.data(Cell(model, 0, DevicesModel::kIdColumn)).toString(), QStringLiteral("opencl:0"));

  model.setDevices(nullptr);  // "nothing discovered yet" is a valid state too
  EXPECT_EQ(model.rowCount(), 0);

  model.setDevices(samples::SampleSnapshot());
  EXPECT_EQ(model.rowCount(), 2);
  EXPECT_EQ(resets.count(), 3);
  EXPECT_TRUE(messages.messages().isEmpty()) << messages.messages().join(QLatin1Char('\n')).toStdString();
}

TEST(DevicesModelTest, ShowsOneRowPerDeviceWithSupportedPrecisionsOnly) {
  DevicesModel model(samples::SampleSnapshot());
  EXPECT_EQ(model.data(Cell(model, 0, DevicesModel::kIdColumn)).toString(), QStringLiteral("cpu"));
  EXPECT_EQ(model.data(Cell(model, 0, DevicesModel::kNameColumn)).toString(), QStringLiteral("Sample Zen 4 CPU"));
  EXPECT_EQ(model.data(Cell(model, 0, DevicesModel::kVendorColumn)).toString(), QStringLiteral("AMD"));
  EXPECT_EQ(model.data(Cell(model, 0, DevicesModel::kComputeUnitsColumn)).toString(), QStringLiteral("16"));
  EXPECT_EQ(model.data(Cell(model, 0, DevicesModel::kRuntimeColumn)).toString(), QStringLiteral("oneDNN 2.6"));
  // fp16 is unsupported on the sample CPU: it is left out, not listed with a mark.
  EXPECT_EQ(model.data(Cell(model, 0, DevicesModel::kPrecisionsColumn)).toString(), QStringLiteral("fp32 bf16 int8"));
  EXPECT_EQ(model.data(Cell(model, 1, DevicesModel::kIdColumn)).toString(), QStringLiteral("opencl:0"));
  // Supported with a note still counts as supported.
  EXPECT_EQ(model.data(Cell(model, 1, DevicesModel::kPrecisionsColumn)).toString(), QStringLiteral("fp32 fp16"));
  EXPECT_EQ(model.headerData(DevicesModel::kMemoryColumn, Qt::Horizontal).toString(), QStringLiteral("Memory"));
}

TEST(DevicesModelTest, RawValueRoleReturnsNumbersNotText) {
  DevicesModel model(samples::SampleSnapshot());
  const QVariant memory = model.data(Cell(model, 0, DevicesModel::kMemoryColumn), DevicesModel::RawValueRole);
  ASSERT_EQ(memory.typeId(), QMetaType::ULongLong);
  EXPECT_EQ(memory.toULongLong(), samples::kCpuMemoryBytes);
  // The display string is rounded ("64.0 GiB"); only the raw role keeps the exact byte count.
  EXPECT_NE(model.data(Cell(model, 0, DevicesModel::kMemoryColumn)).toString(),
            QString::number(samples::kCpuMemoryBytes));

  const QVariant units = model.data(Cell(model, 1, DevicesModel::kComputeUnitsColumn), DevicesModel::RawValueRole);
  ASSERT_EQ(units.typeId(), QMetaType::Int);
  EXPECT_EQ(units.toInt(), 2);

  const QVariant precisions = model.data(Cell(model, 1, DevicesModel::kPrecisionsColumn), DevicesModel::RawValueRole);
  EXPECT_EQ(precisions.toStringList(), (QStringList{QStringLiteral("fp32"), QStringLiteral("fp16")}));
}

TEST(DevicesModelTest, PrecisionToolTipGivesReasonsAndNotes) {
  DevicesModel model(samples::SampleSnapshot());
  const QString cpu_tip = model.data(Cell(model, 0, DevicesModel::kPrecisionsColumn), Qt::ToolTipRole).toString();
  EXPECT_TRUE(cpu_tip.contains(QStringLiteral("fp16: ") + QLatin1String(samples::kCpuFp16Reason)))
      << cpu_tip.toStdString();

  const QString gpu_tip = model.data(Cell(model, 1, DevicesModel::kPrecisionsColumn), Qt::ToolTipRole).toString();
  EXPECT_TRUE(gpu_tip.contains(QStringLiteral("int8: ") + QLatin1String(samples::kOpenCLInt8Reason)))
      << gpu_tip.toStdString();
  // A supported precision's caveat is shown too, but not under "Unsupported".
  const qsizetype notes_at = gpu_tip.indexOf(QStringLiteral("Notes:"));
  ASSERT_GE(notes_at, 0) << gpu_tip.toStdString();
  EXPECT_GT(gpu_tip.indexOf(QLatin1String(samples::kOpenCLFp16Note)), notes_at);
}

TEST(DevicesModelTest, EmptyModelHasHeadersButNoRows) {
  DevicesModel model;
  EXPECT_EQ(model.rowCount(), 0);
  EXPECT_EQ(model.columnCount(), DevicesModel::kColumnCount);
  EXPECT_FALSE(model.data(model.index(0, 0)).isValid());
  EXPECT_EQ(model.headerData(DevicesModel::kPrecisionsColumn, Qt::Horizontal).toString(), QStringLiteral("Precisions"));
}

// Ceilings measured while other processes held the CPUs are low, and a CPU's figures depend on its
// threads: the Devices page shows both with the figures, one entry per thread count.
TEST(DevicesModelTest, CeilingsShowTheirThreadsAndTheBusyFlag) {
  ModelTestMessages messages;
  DevicesModel model(samples::SampleSnapshot());
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  const DeviceInfo cpu = samples::SampleCpu();
  EXPECT_EQ(model.data(Cell(model, 0, DevicesModel::kCeilingsColumn)).toString(),
            QStringLiteral("not measured (Measure again)"));

  CeilingReport busy;
  busy.device_id = "cpu";
  busy.threads = 2;
  busy.device_key = CeilingKey(cpu, 2);
  busy.measured.peak_gflops[Precision::kFp32] = 223;
  busy.measured.memory_bandwidth_gbps = 32.9;
  busy.other_cpu_share = 0.45;
  busy.measured_at = "2026-11-23T18:50:16Z";
  CeilingReport idle = busy;
  idle.threads = 1;
  idle.device_key = CeilingKey(cpu, 1);
  idle.measured.peak_gflops[Precision::kFp32] = 120;
  idle.other_cpu_share = 0.02;
  CeilingReport other_machine = busy;
  other_machine.device_key = "cpu|Another CPU||oneDNN 2.6|16 units|2 threads";
  QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
  model.setCeilings({busy, other_machine, idle});
  EXPECT_EQ(changed.count(), 1);

  const QString text = model.data(Cell(model, 0, DevicesModel::kCeilingsColumn)).toString();
  EXPECT_EQ(text, QStringLiteral("fp32 120 GFLOP/s, 32.9 GB/s (1 thread); fp32 223 GFLOP/s, 32.9 GB/s (2 threads; "
                                 "measured while busy (other processes used 45 % of the CPUs): low)"));
  EXPECT_TRUE(model.data(Cell(model, 0, DevicesModel::kCeilingsColumn), Qt::ForegroundRole).isValid());
  EXPECT_TRUE(model.data(Cell(model, 0, DevicesModel::kCeilingsColumn), Qt::ToolTipRole)
                  .toString()
                  .contains(QStringLiteral("Measured 2026-11-23T18:50:16Z")));
  // The OpenCL device has no entry: not measured, no warning.
  EXPECT_EQ(model.data(Cell(model, 1, DevicesModel::kCeilingsColumn)).toString(),
            QStringLiteral("not measured (Measure again)"));
  EXPECT_FALSE(model.data(Cell(model, 1, DevicesModel::kCeilingsColumn), Qt::ForegroundRole).isValid());
  EXPECT_EQ(model.headerData(DevicesModel::kCeilingsColumn, Qt::Horizontal).toString(),
            QStringLiteral("Roofline ceilings"));
  EXPECT_TRUE(messages.messages().isEmpty()) << messages.messages().join(QLatin1Char('\n')).toStdString();
}

// The ceilings table: one row per device, thread count and precision with its peak, the share of the
// theoretical peak, the device's bandwidth and when and how it was measured; a device without ceilings
// gets one row that says how to measure them, in the page's words.
TEST(CeilingsModelTest, OneRowPerDeviceAndPrecisionWithWhenAndHow) {
  ModelTestMessages messages;
  CeilingsModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  CeilingReport cpu;
  cpu.device_id = "cpu";
  cpu.threads = 2;
  cpu.device_key = CeilingKey(samples::SampleCpu(), 2);
  cpu.measured.peak_gflops[Precision::kFp32] = 219.7;
  cpu.measured.peak_gflops[Precision::kInt8] = 861.3;
  cpu.measured.memory_bandwidth_gbps = 51.2;
  cpu.theoretical_gflops[Precision::kFp32] = 332.3;
  cpu.methods = {"memory bandwidth: STREAM triad over 3 x 128 MiB doubles, best of 5 runs",
                 "fp32 peak: 2048³ MatMul compiled for cpu:fp32, best run",
                 "int8 peak: 2048³ MatMul compiled for cpu:int8, best run"};
  cpu.measured_at = "2026-11-29T11:23:19Z";
  cpu.other_cpu_share = 0.01;
  model.setCeilings(samples::SampleSnapshot(), {cpu});
  ASSERT_EQ(model.rowCount(), 3);  // cpu fp32, cpu int8, opencl:0 not measured
  const auto text = [&](int row, int column) { return model.data(Cell(model, row, column)).toString(); };
  EXPECT_EQ(text(0, CeilingsModel::kDeviceColumn), QStringLiteral("cpu"));
  EXPECT_EQ(text(0, CeilingsModel::kPrecisionColumn), QStringLiteral("fp32"));
  EXPECT_EQ(text(0, CeilingsModel::kPeakColumn), QStringLiteral("220 GFLOP/s"));
  EXPECT_TRUE(text(0, CeilingsModel::kTheoreticalColumn).contains(QStringLiteral("66 %")))
      << text(0, CeilingsModel::kTheoreticalColumn).toStdString();
  EXPECT_EQ(text(0, CeilingsModel::kBandwidthColumn), QStringLiteral("51.2 GB/s"));
  EXPECT_EQ(text(0, CeilingsModel::kThreadsColumn), QStringLiteral("2"));
  EXPECT_EQ(text(0, CeilingsModel::kHowColumn), QStringLiteral("2048³ MatMul compiled for cpu:fp32, best run"));
  EXPECT_EQ(text(1, CeilingsModel::kPrecisionColumn), QStringLiteral("int8"));
  EXPECT_EQ(model.data(Cell(model, 1, CeilingsModel::kPeakColumn), CeilingsModel::RawValueRole).toDouble(), 861.3);
  EXPECT_EQ(model.data(Cell(model, 1, CeilingsModel::kMeasuredColumn), CeilingsModel::RawValueRole).toDateTime(),
            QDateTime(QDate(2026, 11, 29), QTime(11, 23, 19), QTimeZone::utc()));
  EXPECT_TRUE(model.data(Cell(model, 0, CeilingsModel::kDeviceColumn), Qt::ToolTipRole)
                  .toString()
                  .contains(QStringLiteral("STREAM triad")));
  EXPECT_EQ(text(2, CeilingsModel::kDeviceColumn), QStringLiteral("opencl:0"));
  EXPECT_EQ(text(2, CeilingsModel::kPrecisionColumn), QStringLiteral("not measured yet: press Measure again"));
  EXPECT_FALSE(text(2, CeilingsModel::kPrecisionColumn).contains(QStringLiteral("--")));
  model.setCeilings({}, {});
  EXPECT_EQ(model.rowCount(), 0);
  EXPECT_TRUE(messages.messages().isEmpty()) << messages.messages().join(QLatin1Char('\n')).toStdString();
}

}  // namespace
}  // namespace chipfit
