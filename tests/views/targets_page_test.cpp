// TargetsPage: the ProfileOptions its controls produce, and its settings remembered per model.
#include "views/pages/targets_page.h"

#include <gtest/gtest.h>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolTip>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

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
  // No limit is ticked, and an unticked value cannot be edited.
  EXPECT_FALSE(Find<QCheckBox>("maxLatencyOn")->isChecked());
  EXPECT_FALSE(Find<QDoubleSpinBox>("maxLatency")->isEnabled());
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

TEST_F(TargetsPageTest, UntickedLimitsAreUnsetAndTickedOnesAreCarried) {
  auto* stat = Find<QComboBox>("latencyStat");
  EXPECT_FALSE(stat->isEnabled());  // a statistic only matters once there is a latency limit
  Find<QCheckBox>("maxLatencyOn")->setChecked(true);
  Find<QDoubleSpinBox>("maxLatency")->setValue(5);
  EXPECT_TRUE(stat->isEnabled());
  stat->setCurrentIndex(stat->findData(QStringLiteral("p90")));
  Find<QCheckBox>("minTop1On")->setChecked(true);
  Find<QDoubleSpinBox>("minTop1")->setValue(99);
  Find<QCheckBox>("maxMemoryOn")->setChecked(true);
  Find<QDoubleSpinBox>("maxMemory")->setValue(512);

  Limits limits = page_.options().recommend.limits;
  ASSERT_TRUE(limits.max_latency_ms.has_value());
  EXPECT_DOUBLE_EQ(*limits.max_latency_ms, 5);
  EXPECT_EQ(limits.latency_stat, "p90");
  ASSERT_TRUE(limits.min_top1.has_value());
  EXPECT_DOUBLE_EQ(*limits.min_top1, 0.99);  // the form's percent is the recommender's fraction
  ASSERT_TRUE(limits.max_memory_mb.has_value());
  EXPECT_DOUBLE_EQ(*limits.max_memory_mb, 512);
  EXPECT_EQ(limits.min_sqnr_db, std::nullopt);
  EXPECT_EQ(limits.max_energy_mj, std::nullopt);

  // Unticked, the limit is gone but its value stays for the next tick.
  Find<QCheckBox>("maxLatencyOn")->setChecked(false);
  limits = page_.options().recommend.limits;
  EXPECT_EQ(limits.max_latency_ms, std::nullopt);
  EXPECT_FALSE(stat->isEnabled());
  Find<QCheckBox>("maxLatencyOn")->setChecked(true);
  EXPECT_EQ(page_.options().recommend.limits.max_latency_ms, 5.0);
}

// Limits an older chipfit saved among the page's fields (0 meaning none) come back as ticked limits.
TEST_F(TargetsPageTest, LimitsSavedByAnOlderVersionAreRead) {
  {
    QSettings settings;
    settings.beginGroup(QStringLiteral("models/old"));
    settings.setValue(QStringLiteral("maxLatency"), 4.5);
    settings.setValue(QStringLiteral("minTop1"), 0.0);
    settings.setValue(QStringLiteral("objective"), QStringLiteral("energy"));
  }
  page_.setModelKey(QStringLiteral("old"));
  const RecommendSettings r = page_.options().recommend;
  EXPECT_EQ(r.limits.max_latency_ms, 4.5);
  EXPECT_EQ(r.limits.min_top1, std::nullopt);
  EXPECT_EQ(r.objective, "energy");
  EXPECT_TRUE(Find<QCheckBox>("maxLatencyOn")->isChecked());
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
  Find<QCheckBox>("maxEnergyOn")->setChecked(true);
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

// resources/hardware/t4.yaml with `from` replaced by `to`, written to `dir`/`name`: a device file of the
// catalog's schema, valid or not as the edit makes it.
QString WriteDeviceFile(const QTemporaryDir& dir, const char* name, const std::string& from, const std::string& to) {
  std::ifstream in(std::string(CHIPFIT_SOURCE_DIR) + "/resources/hardware/t4.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  const size_t at = yaml.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) yaml.replace(at, from.size(), to);
  const QString path = dir.filePath(QLatin1String(name));
  QFile file(path);
  EXPECT_TRUE(file.open(QIODevice::WriteOnly));
  file.write(yaml.data(), static_cast<qint64>(yaml.size()));
  return path;
}

TEST_F(TargetsPageTest, ProjectedHardwareIsOffTillADeviceIsTicked) {
  EXPECT_FALSE(page_.options().project);
  // One check box per catalog device, named as the user knows it and as the CLI takes it.
  auto* t4 = Find<QCheckBox>("project:t4");
  ASSERT_NE(t4, nullptr);
  EXPECT_EQ(t4->text(), QStringLiteral("NVIDIA T4 (t4)"));
  EXPECT_FALSE(t4->isChecked());
  const QString tip = t4->toolTip();
  for (const char* part : {"8.1 TFLOP/s", "130 TOP/s", "320 GB/s", "$0.526 per hour", "catalog", "t4.yaml", "datasheet",
                           "Projected, not measured"}) {
    EXPECT_TRUE(tip.contains(QLatin1String(part))) << part << " not in " << tip.toStdString();
  }
  EXPECT_TRUE(Find<QLabel>("catalogStatus")->isHidden());

  QSignalSpy changed(&page_, &TargetsPage::optionsChanged);
  t4->click();
  EXPECT_GT(changed.count(), 0);
  ProfileOptions options = page_.options();
  EXPECT_TRUE(options.project);
  EXPECT_EQ(options.project_request.hardware, (std::vector<std::string>{"t4"}));
  EXPECT_TRUE(options.project_request.hardware_files.empty());
  EXPECT_FALSE(options.project_request.all_hardware);
  // The measured targets are what they were: projection comes on top of them.
  EXPECT_EQ(options.targets.size(), 5u);
  EXPECT_TRUE(Find<QLabel>("projectionSummary")->text().contains(QStringLiteral("t4")));
  // What the session will accept: the ids are the catalog's.
  EXPECT_TRUE(SelectHardware(options.project_request).ok());

  t4->click();
  EXPECT_FALSE(page_.options().project);
}

TEST_F(TargetsPageTest, ABadDeviceFileIsRefusedWithTheFileAndKey) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  auto* error = Find<QLabel>("projectionError");
  EXPECT_TRUE(error->isHidden());

  const QString bad = WriteDeviceFile(dir, "bad.yaml", "fp16: 65000", "fp16: -1");
  EXPECT_FALSE(page_.addHardwareFile(bad));
  EXPECT_FALSE(error->isHidden());
  EXPECT_TRUE(error->text().contains(bad)) << error->text().toStdString();
  EXPECT_TRUE(error->text().contains(QStringLiteral("peak_gflops.fp16"))) << error->text().toStdString();
  EXPECT_EQ(page_.projectionError(), error->text());
  EXPECT_FALSE(page_.options().project);
  EXPECT_TRUE(page_.hardwareFiles().isEmpty());

  // Not YAML at all: yaml-cpp's message, still naming the file.
  const QString broken = dir.filePath(QStringLiteral("broken.yaml"));
  {
    QFile file(broken);
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    file.write("id: [unclosed\n");
  }
  EXPECT_FALSE(page_.addHardwareFile(broken));
  EXPECT_TRUE(error->text().contains(broken)) << error->text().toStdString();
  EXPECT_FALSE(page_.addHardwareFile(dir.filePath(QStringLiteral("missing.yaml"))));
  EXPECT_TRUE(error->text().contains(QStringLiteral("missing.yaml"))) << error->text().toStdString();

  // The catalog's own id is refused here, not at the start of a run.
  const QString clash = WriteDeviceFile(dir, "clash.yaml", "name: NVIDIA T4", "name: My T4");
  EXPECT_FALSE(page_.addHardwareFile(clash));
  EXPECT_TRUE(error->text().contains(QStringLiteral("already the catalog's"))) << error->text().toStdString();

  // A good file: listed, in the options, the error gone.
  const QString good = WriteDeviceFile(dir, "mine.yaml", "id: t4", "id: my-t4");
  EXPECT_TRUE(page_.addHardwareFile(good));
  EXPECT_TRUE(error->isHidden());
  EXPECT_EQ(page_.hardwareFiles(), QStringList{good});
  auto* list = Find<QListWidget>("hardwareFiles");
  ASSERT_EQ(list->count(), 1);
  EXPECT_TRUE(list->item(0)->text().contains(QStringLiteral("(my-t4)"))) << list->item(0)->text().toStdString();
  EXPECT_TRUE(list->item(0)->text().contains(good));
  ProfileOptions options = page_.options();
  EXPECT_TRUE(options.project);
  EXPECT_TRUE(options.project_request.hardware.empty());
  EXPECT_EQ(options.project_request.hardware_files, (std::vector<std::string>{good.toStdString()}));
  EXPECT_TRUE(SelectHardware(options.project_request).ok());

  page_.removeHardwareFile(good);
  EXPECT_EQ(list->count(), 0);
  EXPECT_FALSE(page_.options().project);
}

TEST_F(TargetsPageTest, AnUnreadableCatalogSaysWhy) {
  page_.loadHardwareCatalog("/nonexistent/chipfit-hardware");
  auto* status = Find<QLabel>("catalogStatus");
  EXPECT_FALSE(status->isHidden());
  EXPECT_TRUE(status->text().contains(QStringLiteral("/nonexistent/chipfit-hardware"))) << status->text().toStdString();
  EXPECT_TRUE(status->text().contains(QStringLiteral("no such hardware directory"))) << status->text().toStdString();
  EXPECT_EQ(page_.findChild<QCheckBox*>(QStringLiteral("project:t4")), nullptr);
  EXPECT_FALSE(page_.options().project);

  page_.loadHardwareCatalog(DefaultHardwareDir());
  EXPECT_TRUE(status->isHidden());
  EXPECT_NE(page_.findChild<QCheckBox*>(QStringLiteral("project:t4")), nullptr);
}

TEST_F(TargetsPageTest, ProjectedHardwarePersistsPerModel) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString mine = WriteDeviceFile(dir, "mine.yaml", "id: t4", "id: my-t4");
  page_.setModelKey(QStringLiteral("a"));
  Find<QCheckBox>("project:h100-sxm")->click();
  ASSERT_TRUE(page_.addHardwareFile(mine));

  page_.setModelKey(QStringLiteral("b"));
  EXPECT_FALSE(page_.options().project);
  EXPECT_TRUE(page_.hardwareFiles().isEmpty());

  TargetsPage later;
  later.setDevices(samples::SampleSnapshot());
  later.setModelKey(QStringLiteral("a"));
  const ProfileOptions options = later.options();
  EXPECT_TRUE(options.project);
  EXPECT_EQ(options.project_request.hardware, (std::vector<std::string>{"h100-sxm"}));
  EXPECT_EQ(options.project_request.hardware_files, (std::vector<std::string>{mine.toStdString()}));

  // A file gone since: left out, and said so.
  ASSERT_TRUE(QFile::remove(mine));
  TargetsPage after;
  after.setModelKey(QStringLiteral("a"));
  EXPECT_TRUE(after.hardwareFiles().isEmpty());
  EXPECT_TRUE(after.projectionError().contains(QStringLiteral("mine.yaml"))) << after.projectionError().toStdString();
  EXPECT_EQ(after.options().project_request.hardware, (std::vector<std::string>{"h100-sxm"}));
}

// The page as a user sees it with two catalog devices ticked and a file of their own: everything fits the
// main window's page area (1280×800 less the navigation, the menu and the status bar: about 1070×735), so the
// catalog's long names never widen the window, and the group lists the whole catalog.
TEST_F(TargetsPageTest, ScreenshotWithProjectedHardware) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  Find<QCheckBox>("project:t4")->click();
  Find<QCheckBox>("project:h100-sxm")->click();
  ASSERT_TRUE(page_.addHardwareFile(WriteDeviceFile(dir, "my-t4.yaml", "id: t4", "id: my-t4")));
  const QSize minimum = page_.minimumSizeHint();
  std::cout << "targets page minimum size " << minimum.width() << "x" << minimum.height() << "\n";
  EXPECT_LE(minimum.width(), 1000);
  EXPECT_LE(minimum.height(), 735);
  page_.resize(1070, 735);
  page_.show();
  QTest::qWait(20);
  const QImage image = page_.grab().toImage();
  const QString artifacts = QStringLiteral(CHIPFIT_BINARY_DIR "/test-artifacts");
  ASSERT_TRUE(QDir().mkpath(artifacts));
  EXPECT_TRUE(image.save(artifacts + QStringLiteral("/targets_page_projected.png")));
  std::set<QRgb> colours;
  for (int y = 0; y < image.height() && colours.size() < 32; y += 5) {
    for (int x = 0; x < image.width() && colours.size() < 32; x += 5) colours.insert(image.pixel(x, y));
  }
  EXPECT_GE(colours.size(), 32u) << "targets page looks blank";

  // And with a bad file's error under the list: the error's red line, as the other pages show theirs.
  EXPECT_FALSE(page_.addHardwareFile(WriteDeviceFile(dir, "bad.yaml", "fp16: 65000", "fp16: -1")));
  QTest::qWait(20);
  std::cout << "with an error " << page_.minimumSizeHint().width() << "x" << page_.minimumSizeHint().height() << "\n";
  EXPECT_TRUE(page_.grab().save(artifacts + QStringLiteral("/targets_page_projected_error.png")));

  // A device's tooltip as Qt shows it: rich text, wrapped.
  auto* t4 = Find<QCheckBox>("project:t4");
  QToolTip::showText(t4->mapToGlobal(QPoint(4, 4)), t4->toolTip(), t4);
  QTest::qWait(20);
  QWidget* tip = nullptr;
  for (QWidget* widget : QApplication::topLevelWidgets()) {
    if (widget->inherits("QTipLabel") && widget->isVisible()) tip = widget;
  }
  ASSERT_NE(tip, nullptr);
  EXPECT_LE(tip->width(), 1000);  // wrapped, not one line per source
  EXPECT_TRUE(tip->grab().save(artifacts + QStringLiteral("/targets_page_tooltip.png")));
  QToolTip::hideText();
}

}  // namespace
}  // namespace chipfit
