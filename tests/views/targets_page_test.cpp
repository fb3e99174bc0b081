// TargetsPage: the ProfileOptions its controls produce, and its settings remembered per model.
#include "views/pages/targets_page.h"

#include <gtest/gtest.h>

#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

#include "tests/views/sample_devices.h"

namespace chipfit {
namespace {

using samples::Strings;
using samples::T;

// The page writes QSettings as it goes: every test here points QSettings at a folder of its own, so
// nothing reads or writes the user's real settings, and no test sees another's.
class TargetsPageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(settings_dir_.isValid());
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings_dir_.path());
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settings_dir_.path());
    QCoreApplication::setOrganizationName(QStringLiteral("chipfit-test"));
    page_.setDevices(samples::SampleSnapshot());
  }

  template <typename T>
  T* Find(const char* name) {
    auto* widget = page_.findChild<T*>(QLatin1String(name));
    EXPECT_NE(widget, nullptr) << name;
    return widget;
  }

  // As a user does it: select the old text, type the new one.
  template <typename Box>
  void Type(const char* name, const QString& text) {
    Box* box = Find<Box>(name);
    box->selectAll();
    QTest::keyClicks(box, text);
  }

  QTemporaryDir settings_dir_;
  TargetsPage page_;
};

TEST_F(TargetsPageTest, DefaultsMatchTheCli) {
  const ProfileOptions options = page_.options();
  const ProfileOptions cli;
  EXPECT_EQ(options.iterations, cli.iterations);
  EXPECT_EQ(options.warmup, cli.warmup);
  EXPECT_DOUBLE_EQ(options.min_time_s, cli.min_time_s);
  EXPECT_EQ(options.drift_samples, cli.drift_samples);
  EXPECT_EQ(options.calibration, CalibrationMethod::kMinMax);
  EXPECT_EQ(options.data_dir, "");
  EXPECT_EQ(options.recommend.objective, "latency");
  EXPECT_FALSE(options.recommend.limits.any());
  EXPECT_EQ(Strings(options.targets),
            (std::vector<std::string>{"cpu:fp32", "cpu:bf16", "cpu:int8", "opencl:0:fp32", "opencl:0:fp16"}));
  EXPECT_TRUE(page_.hasCheckedTargets());
  // "no limit" is what the user reads at 0, not "0.000 ms".
  EXPECT_EQ(Find<QDoubleSpinBox>("maxLatency")->text(), QStringLiteral("no limit"));
}

TEST_F(TargetsPageTest, OptionsFollowTypedEdits) {
  QSignalSpy changed(&page_, &TargetsPage::optionsChanged);
  Type<QSpinBox>("iterations", QStringLiteral("200"));
  Type<QSpinBox>("warmup", QStringLiteral("3"));
  Type<QDoubleSpinBox>("minTime", QStringLiteral("2.5"));
  Type<QSpinBox>("driftSamples", QStringLiteral("8"));
  QTest::keyClicks(Find<QLineEdit>("dataDir"), QStringLiteral("/data/cls"));
  auto* calibration = Find<QComboBox>("calibration");
  calibration->setCurrentIndex(calibration->findData(QStringLiteral("entropy")));
  auto* objective = Find<QComboBox>("objective");
  objective->setCurrentIndex(objective->findData(QStringLiteral("energy")));

  const ProfileOptions options = page_.options();
  EXPECT_EQ(options.iterations, 200);
  EXPECT_EQ(options.warmup, 3);
  EXPECT_DOUBLE_EQ(options.min_time_s, 2.5);
  EXPECT_EQ(options.drift_samples, 8);
  EXPECT_EQ(options.data_dir, "/data/cls");
  EXPECT_EQ(options.calibration, CalibrationMethod::kEntropy);
  EXPECT_EQ(options.recommend.objective, "energy");
  EXPECT_GT(changed.count(), 0);
}

TEST_F(TargetsPageTest, ZeroLimitsAreUnsetAndOthersAreCarried) {
  Find<QDoubleSpinBox>("maxLatency")->setValue(5);
  auto* stat = Find<QComboBox>("latencyStat");
  EXPECT_TRUE(stat->isEnabled());  // a statistic only matters once there is a latency limit
  stat->setCurrentIndex(stat->findData(QStringLiteral("p90")));
  Find<QDoubleSpinBox>("minTop1")->setValue(99);
  Find<QDoubleSpinBox>("maxMemory")->setValue(512);

  Limits limits = page_.options().recommend.limits;
  ASSERT_TRUE(limits.max_latency_ms.has_value());
  EXPECT_DOUBLE_EQ(*limits.max_latency_ms, 5);
  EXPECT_EQ(limits.latency_stat, "p90");
  ASSERT_TRUE(limits.min_top1.has_value());
  EXPECT_DOUBLE_EQ(*limits.min_top1, 0.99);  // the form's percent is the CLI's fraction
  ASSERT_TRUE(limits.max_memory_mb.has_value());
  EXPECT_DOUBLE_EQ(*limits.max_memory_mb, 512);
  EXPECT_EQ(limits.min_sqnr_db, std::nullopt);
  EXPECT_EQ(limits.max_energy_mj, std::nullopt);

  Find<QDoubleSpinBox>("maxLatency")->setValue(0);
  limits = page_.options().recommend.limits;
  EXPECT_EQ(limits.max_latency_ms, std::nullopt);
  EXPECT_FALSE(stat->isEnabled());
}

TEST_F(TargetsPageTest, AllAndNoneButtonsTickEverySupportedCellOrNone) {
  QTest::mouseClick(Find<QPushButton>("checkNone"), Qt::LeftButton);
  EXPECT_FALSE(page_.hasCheckedTargets());
  EXPECT_TRUE(page_.options().targets.empty());
  QTest::mouseClick(Find<QPushButton>("checkAll"), Qt::LeftButton);
  EXPECT_EQ(page_.options().targets.size(), 5u);
}

TEST_F(TargetsPageTest, ClickingASupportedCellTogglesItAndAGreyedOneDoesNothing) {
  page_.resize(900, 600);
  page_.show();
  auto* view = Find<QTableView>("targetMatrix");
  const auto click = [&](const char* target) {
    const QRect cell = view->visualRect(page_.matrixModel()->indexOf(T(target)));
    ASSERT_FALSE(cell.isEmpty()) << target;
    // Off the check box on purpose: the whole cell is the hit target.
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, cell.topLeft() + QPoint(3, 3));
  };
  click("cpu:int8");
  EXPECT_FALSE(page_.matrixModel()->isChecked(T("cpu:int8")));
  EXPECT_EQ(page_.options().targets.size(), 4u);
  click("cpu:int8");
  EXPECT_TRUE(page_.matrixModel()->isChecked(T("cpu:int8")));
  click("cpu:fp16");
  EXPECT_FALSE(page_.matrixModel()->isChecked(T("cpu:fp16")));
  EXPECT_EQ(page_.options().targets.size(), 5u);
}

TEST_F(TargetsPageTest, SettingsPersistPerModel) {
  page_.setModelKey(QStringLiteral("a"));
  Find<QSpinBox>("iterations")->setValue(123);
  Find<QDoubleSpinBox>("maxEnergy")->setValue(7.5);
  ASSERT_TRUE(page_.matrixModel()->setChecked(T("cpu:int8"), false));

  page_.setModelKey(QStringLiteral("b"));  // never seen: defaults, every supported target
  EXPECT_EQ(page_.options().iterations, 50);
  EXPECT_EQ(page_.options().recommend.limits.max_energy_mj, std::nullopt);
  EXPECT_TRUE(page_.matrixModel()->isChecked(T("cpu:int8")));
  Find<QSpinBox>("warmup")->setValue(1);

  page_.setModelKey(QStringLiteral("a"));
  EXPECT_EQ(page_.options().iterations, 123);
  EXPECT_EQ(page_.options().recommend.limits.max_energy_mj, 7.5);
  EXPECT_EQ(page_.options().warmup, 10);
  EXPECT_FALSE(page_.matrixModel()->isChecked(T("cpu:int8")));
  EXPECT_EQ(page_.options().targets.size(), 4u);

  // A new page (the next session of the app) reads the same settings back.
  TargetsPage later;
  later.setDevices(samples::SampleSnapshot());
  later.setModelKey(QStringLiteral("b"));
  EXPECT_EQ(later.options().warmup, 1);
  later.setModelKey(QStringLiteral("a"));
  EXPECT_EQ(later.options().iterations, 123);
  EXPECT_FALSE(later.matrixModel()->isChecked(T("cpu:int8")));
}

TEST_F(TargetsPageTest, NothingTickedIsRememberedAsNothing) {
  page_.setModelKey(QStringLiteral("a"));
  page_.matrixModel()->setAllChecked(false);
  page_.setModelKey(QStringLiteral("b"));
  EXPECT_TRUE(page_.hasCheckedTargets());
  page_.setModelKey(QStringLiteral("a"));
  EXPECT_FALSE(page_.hasCheckedTargets());  // not mistaken for "never saved", which means all
}

TEST_F(TargetsPageTest, SavedTargetsWaitForDiscoveryAndKeepAbsentDevices) {
  {
    QSettings settings;
    settings.setValue(QStringLiteral("models/c/targets"), QStringList{"cpu:fp32", "cuda:0:fp16"});
  }
  TargetsPage page;  // no devices yet, as at start-up: the model's key may arrive first
  page.setModelKey(QStringLiteral("c"));
  EXPECT_FALSE(page.hasCheckedTargets());
  page.setDevices(samples::SampleSnapshot());
  EXPECT_EQ(Strings(page.options().targets), (std::vector<std::string>{"cpu:fp32"}));

  // An edit here must not forget the CUDA target of a GPU that is missing today.
  page.matrixModel()->setChecked(T("opencl:0:fp32"), true);
  QSettings settings;
  EXPECT_EQ(settings.value(QStringLiteral("models/c/targets")).toStringList(),
            (QStringList{"cpu:fp32", "opencl:0:fp32", "cuda:0:fp16"}));
}

}  // namespace
}  // namespace chipfit
