// TargetMatrixModel: model contract, support-driven check boxes, tooltips and the checked target list.
#include "views/models/target_matrix_model.h"

#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QStringList>
#include <memory>
#include <vector>

#include "tests/views/model_test_messages.h"
#include "tests/views/sample_devices.h"

namespace chipfit {
namespace {

using samples::Strings;
using samples::T;

int Column(Precision precision) {
  for (size_t c = 0; c < TargetMatrixModel::kPrecisions.size(); ++c) {
    if (TargetMatrixModel::kPrecisions[c] == precision) return static_cast<int>(c);
  }
  return -1;
}

TEST(TargetMatrixModelTest, PassesModelTesterThroughResetsAndToggles) {
  ModelTestMessages warnings;
  TargetMatrixModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  EXPECT_EQ(model.rowCount(), 0);  // before discovery: headers only

  model.setDevices(samples::SampleSnapshot());
  EXPECT_EQ(model.rowCount(), 2);
  EXPECT_EQ(model.columnCount(), 5);
  EXPECT_TRUE(model.setData(model.indexOf(T("cpu:int8")), Qt::Unchecked, Qt::CheckStateRole));
  model.setAllChecked(false);
  model.setCheckedTargets({T("opencl:0:fp16")});
  model.setDevices(nullptr);
  EXPECT_EQ(model.rowCount(), 0);
  model.setDevices(samples::SampleSnapshot());
  EXPECT_TRUE(warnings.empty()) << warnings.text().toStdString();
}

TEST(TargetMatrixModelTest, HeadersNameDevicesAndPrecisions) {
  TargetMatrixModel model;
  model.setDevices(samples::SampleSnapshot());
  EXPECT_EQ(model.headerData(0, Qt::Vertical).toString(), QStringLiteral("cpu — Sample Zen 4 CPU"));
  EXPECT_EQ(model.headerData(1, Qt::Vertical).toString(), QStringLiteral("opencl:0 — pthread-skylake-avx512"));
  QStringList precisions;
  for (int c = 0; c < model.columnCount(); ++c) precisions << model.headerData(c, Qt::Horizontal).toString();
  EXPECT_EQ(precisions.join(QLatin1Char(' ')), QStringLiteral("fp32 tf32 fp16 bf16 int8"));
}

TEST(TargetMatrixModelTest, EverySupportedTargetIsCheckedAfterSetDevices) {
  TargetMatrixModel model;
  QSignalSpy changed(&model, &TargetMatrixModel::checkedTargetsChanged);
  model.setDevices(samples::SampleSnapshot());
  EXPECT_EQ(changed.count(), 1);
  // As --all-targets: device order, then precision order (fp32 tf32 fp16 bf16 int8), unsupported left out.
  EXPECT_EQ(Strings(model.checkedTargets()),
            (std::vector<std::string>{"cpu:fp32", "cpu:bf16", "cpu:int8", "opencl:0:fp32", "opencl:0:fp16"}));
  EXPECT_EQ(model.checkedCount(), 5);
  EXPECT_EQ(model.supportedCount(), 5);
  EXPECT_EQ(model.data(model.indexOf(T("cpu:int8")), Qt::CheckStateRole).toInt(), Qt::Checked);
}

TEST(TargetMatrixModelTest, UnsupportedCellIsDisabledAndExplainsWhy) {
  TargetMatrixModel model;
  model.setDevices(samples::SampleSnapshot());
  const QModelIndex cpu_fp16 = model.indexOf(T("cpu:fp16"));
  ASSERT_TRUE(cpu_fp16.isValid());
  EXPECT_EQ(cpu_fp16.row(), 0);
  EXPECT_EQ(cpu_fp16.column(), Column(Precision::kFp16));
  EXPECT_FALSE(model.flags(cpu_fp16) & Qt::ItemIsEnabled);
  EXPECT_FALSE(model.flags(cpu_fp16) & Qt::ItemIsUserCheckable);
  EXPECT_FALSE(model.data(cpu_fp16, Qt::CheckStateRole).isValid());  // no check box drawn at all
  EXPECT_EQ(model.data(cpu_fp16).toString(), QStringLiteral("—"));
  EXPECT_EQ(model.data(cpu_fp16, Qt::ToolTipRole).toString(), QLatin1String(samples::kCpuFp16Reason));
  EXPECT_FALSE(model.data(cpu_fp16, TargetMatrixModel::SupportedRole).toBool());

  // Not listed by the device at all (tf32 on a CPU): still a reason, from DeviceInfo::SupportFor.
  const QString tf32_tip = model.data(model.indexOf(T("cpu:tf32")), Qt::ToolTipRole).toString();
  EXPECT_TRUE(tf32_tip.contains(QStringLiteral("not offered"))) << tf32_tip.toStdString();

  // A view's click arrives as setData; an unsupported cell refuses it.
  EXPECT_FALSE(model.setData(cpu_fp16, Qt::Checked, Qt::CheckStateRole));
  EXPECT_FALSE(model.setChecked(T("cpu:fp16"), true));
  EXPECT_FALSE(model.isChecked(T("cpu:fp16")));
}

TEST(TargetMatrixModelTest, SupportedCellToolTipIsItsNote) {
  TargetMatrixModel model;
  model.setDevices(samples::SampleSnapshot());
  const QModelIndex gpu_fp16 = model.indexOf(T("opencl:0:fp16"));
  EXPECT_TRUE(model.flags(gpu_fp16) & Qt::ItemIsUserCheckable);
  EXPECT_EQ(model.data(gpu_fp16, Qt::ToolTipRole).toString(), QLatin1String(samples::kOpenCLFp16Note));
  // The raw target string, through its own role, for code that wants the target of a cell.
  EXPECT_EQ(model.data(gpu_fp16, TargetMatrixModel::TargetRole).toString(), QStringLiteral("opencl:0:fp16"));
  EXPECT_EQ(model.data(model.indexOf(T("cpu:int8")), TargetMatrixModel::TargetRole).toString(),
            QStringLiteral("cpu:int8"));
}

TEST(TargetMatrixModelTest, UncheckingACellDropsItsTarget) {
  TargetMatrixModel model;
  model.setDevices(samples::SampleSnapshot());
  QSignalSpy changed(&model, &TargetMatrixModel::checkedTargetsChanged);
  QSignalSpy data_changed(&model, &QAbstractItemModel::dataChanged);

  EXPECT_TRUE(model.setData(model.indexOf(T("cpu:int8")), Qt::Unchecked, Qt::CheckStateRole));
  EXPECT_EQ(Strings(model.checkedTargets()),
            (std::vector<std::string>{"cpu:fp32", "cpu:bf16", "opencl:0:fp32", "opencl:0:fp16"}));
  EXPECT_EQ(model.data(model.indexOf(T("cpu:int8")), Qt::CheckStateRole).toInt(), Qt::Unchecked);
  EXPECT_EQ(changed.count(), 1);
  EXPECT_EQ(data_changed.count(), 1);

  EXPECT_TRUE(model.setChecked(T("cpu:int8"), false));  // already unchecked: no signal
  EXPECT_EQ(changed.count(), 1);
  EXPECT_TRUE(model.setChecked(T("opencl:0:fp32"), false));
  EXPECT_EQ(model.checkedCount(), 3);
  EXPECT_EQ(changed.count(), 2);
}

TEST(TargetMatrixModelTest, SetCheckedTargetsIgnoresUnsupportedAndUnknown) {
  TargetMatrixModel model;
  model.setDevices(samples::SampleSnapshot());
  model.setCheckedTargets(
      {T("opencl:0:int8"), T("cpu:fp16"), T("cuda:0:fp16"), T("opencl:1:fp32"), T("opencl:0:fp16"), T("cpu:fp32")});
  // Device order wins over the order given.
  EXPECT_EQ(Strings(model.checkedTargets()), (std::vector<std::string>{"cpu:fp32", "opencl:0:fp16"}));
  EXPECT_FALSE(model.indexOf(T("cuda:0:fp16")).isValid());
  EXPECT_FALSE(model.setChecked(T("cuda:0:fp16"), true));

  model.setAllChecked(false);
  EXPECT_TRUE(model.checkedTargets().empty());
  model.setAllChecked(true);
  EXPECT_EQ(model.checkedCount(), 5);
}

}  // namespace
}  // namespace chipfit
