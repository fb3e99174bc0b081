// RunProgressModel: rows per target through a run (phases, per-layer progress, results, a failing
// target beside ok ones, cancellation), under QAbstractItemModelTester, without a widget.
#include "views/models/run_progress_model.h"

#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QCoreApplication>
#include <QSignalSpy>

namespace chipfit {
namespace {

const Target kFp32{DeviceKind::kCpu, 0, Precision::kFp32};
const Target kInt8{DeviceKind::kCpu, 0, Precision::kInt8};
const Target kOpenCl{DeviceKind::kOpenCL, 0, Precision::kFp16};

std::shared_ptr<const TargetResult> Ok(const Target& target, double p50, double sqnr, std::string energy_source) {
  auto r = std::make_shared<TargetResult>();
  r->target = target;
  r->latency.p50 = p50;
  r->latency.p99 = p50 * 1.5;
  r->layers.resize(3);
  AccuracySummary accuracy;
  accuracy.output_sqnr_db = sqnr;
  accuracy.top1_agreement = 1.0;
  r->accuracy = accuracy;
  r->energy = EnergyValue{.joules = 1.5e-3, .source = std::move(energy_source)};
  return r;
}

// `clean` clean slots then `dropped` busy ones, each slot's median `ms` (busy: `busy_ms`), other
// processes at 3 % of the CPUs in clean slots and `busy_share` in dropped ones.
std::vector<TimingRound> Rounds(int clean, int dropped, double ms, double busy_ms = 0, double busy_share = 0.7) {
  std::vector<TimingRound> rounds;
  for (int i = 0; i < clean + dropped; ++i) {
    TimingRound r;
    r.round = i + 1;
    r.runs = 20;
    r.clean = i < clean;
    r.median_ms = r.clean ? ms : busy_ms;
    r.other_cpu_share = r.clean ? 0.03 : busy_share;
    r.threads = 2;
    if (!r.clean) r.dropped = "other processes used 1.4 of 2 CPUs, more than the 0.0 this run's 2 threads left them";
    rounds.push_back(r);
  }
  return rounds;
}

QVariant Cell(const RunProgressModel& m, int row, int column, int role = Qt::DisplayRole) {
  return m.index(row, column).data(role);
}

class RunProgressModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tester_ =
        std::make_unique<QAbstractItemModelTester>(&model_, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model_.startRun({kFp32, kInt8, kOpenCl});
  }
  RunProgressModel model_;
  std::unique_ptr<QAbstractItemModelTester> tester_;
};

TEST_F(RunProgressModelTest, OneWaitingRowPerTarget) {
  ASSERT_EQ(model_.rowCount(), 3);
  EXPECT_EQ(Cell(model_, 0, RunProgressModel::kTargetColumn).toString(), QStringLiteral("cpu:fp32"));
  EXPECT_EQ(Cell(model_, 2, RunProgressModel::kTargetColumn).toString(), QStringLiteral("opencl:0:fp16"));
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(model_.status(r), QStringLiteral("waiting"));
    EXPECT_EQ(Cell(model_, r, 0, RunProgressModel::ProgressRole).toInt(), 0);
    EXPECT_FALSE(Cell(model_, r, RunProgressModel::kP50Column, RunProgressModel::RawValueRole).isValid());
  }
}

TEST_F(RunProgressModelTest, PhasesAndLayerProgressOnlyMoveForward) {
  QSignalSpy changed(&model_, &QAbstractItemModel::dataChanged);
  model_.setPhase(0, QStringLiteral("compile"), {});
  model_.setPhase(0, QStringLiteral("end-to-end"), QStringLiteral("32 runs"));
  EXPECT_EQ(model_.status(0), QStringLiteral("end-to-end"));
  EXPECT_EQ(Cell(model_, 0, RunProgressModel::kNotesColumn).toString(), QStringLiteral("32 runs"));
  const int at_timing = Cell(model_, 0, 0, RunProgressModel::ProgressRole).toInt();
  model_.setLayerProgress(0, 10, 20, 5, 10);  // halfway through the per-layer passes
  const int halfway = Cell(model_, 0, 0, RunProgressModel::ProgressRole).toInt();
  EXPECT_GT(halfway, at_timing);
  model_.setLayerProgress(0, 1, 20, 0, 10);  // a late, older update never moves the bar back
  EXPECT_EQ(Cell(model_, 0, 0, RunProgressModel::ProgressRole).toInt(), halfway);
  model_.setPhase(0, QStringLiteral("drift"), {});
  EXPECT_GT(Cell(model_, 0, 0, RunProgressModel::ProgressRole).toInt(), halfway);
  EXPECT_LT(Cell(model_, 0, 0, RunProgressModel::ProgressRole).toInt(), 100);
  EXPECT_GE(changed.count(), 5);
  // Out-of-range rows are ignored, not a crash.
  model_.setPhase(7, QStringLiteral("compile"), {});
  model_.setLayerProgress(-1, 1, 1, 0, 1);
}

TEST_F(RunProgressModelTest, FiguresAppearWhenATargetFinishesAndAFailureStaysInItsRow) {
  model_.setResult(1, Ok(kInt8, 0.5, 24.5, "estimated"));
  // cpu:fp32 not finished yet: int8's speed-up is relative to itself, the only ok target.
  EXPECT_DOUBLE_EQ(Cell(model_, 1, RunProgressModel::kSpeedupColumn, RunProgressModel::RawValueRole).toDouble(), 1.0);
  model_.setResult(0, Ok(kFp32, 1.0, 130, "measured:rapl"));
  EXPECT_EQ(model_.status(0), QStringLiteral("ok"));
  EXPECT_EQ(Cell(model_, 0, 0, RunProgressModel::ProgressRole).toInt(), 100);
  EXPECT_DOUBLE_EQ(Cell(model_, 0, RunProgressModel::kP50Column, RunProgressModel::RawValueRole).toDouble(), 1.0);
  EXPECT_DOUBLE_EQ(Cell(model_, 0, RunProgressModel::kP99Column, RunProgressModel::RawValueRole).toDouble(), 1.5);
  // Now cpu:fp32 is the baseline: int8 is 2x faster.
  EXPECT_DOUBLE_EQ(Cell(model_, 1, RunProgressModel::kSpeedupColumn, RunProgressModel::RawValueRole).toDouble(), 2.0);
  EXPECT_EQ(Cell(model_, 1, RunProgressModel::kSpeedupColumn).toString(), QStringLiteral("2.00×"));
  EXPECT_EQ(Cell(model_, 1, RunProgressModel::kDriftColumn).toString(), QStringLiteral("24.5 dB, top-1 100.0 %"));
  // A detector's probability map: its task metric by name; int8 calibrated on random data says so.
  auto map = std::make_shared<TargetResult>(*Ok(kInt8, 0.5, 14.4, "estimated"));
  map->accuracy->top1_agreement.reset();
  map->accuracy->task_agreement = 0.952;
  map->accuracy->task_metric = "map IoU at 0.3";
  map->accuracy->random_calibration = true;
  model_.setResult(1, map);
  EXPECT_EQ(Cell(model_, 1, RunProgressModel::kDriftColumn).toString(),
            QStringLiteral("14.4 dB, map IoU at 0.3 95.2 % (random calibration)"));
  // The energy figure never comes without its source.
  EXPECT_EQ(Cell(model_, 1, RunProgressModel::kEnergyColumn).toString(), QStringLiteral("1.5 mJ (estimated)"));
  EXPECT_EQ(Cell(model_, 0, RunProgressModel::kEnergyColumn).toString(), QStringLiteral("1.5 mJ (measured:rapl)"));

  auto failed = std::make_shared<TargetResult>();
  failed->target = kOpenCl;
  failed->status = "failed";
  failed->error = "node conv1: CL_OUT_OF_RESOURCES in conv2d_nchw";
  model_.setResult(2, failed);
  EXPECT_EQ(model_.status(2), QStringLiteral("failed"));
  EXPECT_EQ(Cell(model_, 2, RunProgressModel::kNotesColumn).toString(), QString::fromStdString(failed->error));
  EXPECT_EQ(Cell(model_, 2, RunProgressModel::kNotesColumn, Qt::ToolTipRole).toString(),
            QString::fromStdString(failed->error));
  EXPECT_FALSE(Cell(model_, 2, RunProgressModel::kP50Column, RunProgressModel::RawValueRole).isValid());
  // The others keep their figures.
  EXPECT_EQ(model_.status(0), QStringLiteral("ok"));
  EXPECT_EQ(model_.finishedCount(), 3);
}

// The Run page no longer says "noisy": a target the machine was too busy to time is `unreliable`,
// with the reason and its clean and dropped rounds, and the banner text names it.
TEST_F(RunProgressModelTest, AnUnreliableTargetSaysWhyAndTheBannerNamesIt) {
  auto fp32 = std::make_shared<TargetResult>(*Ok(kFp32, 1.0, 130, "estimated"));
  fp32->rounds = Rounds(3, 7, 1.0, 40.0);
  fp32->unreliable = true;
  fp32->unreliable_reason = "only 3 of 10 timing rounds were clean within the 25 s budget";
  fp32->latency.noisy = true;  // the old flag: no longer shown
  auto int8 = std::make_shared<TargetResult>(*Ok(kInt8, 0.5, 24.5, "estimated"));
  int8->rounds = Rounds(3, 7, 0.5, 30.0);
  int8->unreliable = true;
  int8->unreliable_reason = "only 3 of 10 timing rounds were clean within the 25 s budget";
  EXPECT_TRUE(model_.busyMachineText().isEmpty());
  model_.setResult(0, fp32);
  model_.setResult(1, int8);

  EXPECT_EQ(model_.status(0), QStringLiteral("ok"));  // it ran; the status column says what to make of it
  EXPECT_EQ(Cell(model_, 0, RunProgressModel::kStatusColumn).toString(), QStringLiteral("unreliable"));
  EXPECT_TRUE(Cell(model_, 0, RunProgressModel::kStatusColumn, Qt::ForegroundRole).isValid());
  const QString notes = Cell(model_, 0, RunProgressModel::kNotesColumn).toString();
  EXPECT_TRUE(notes.contains(QStringLiteral("unreliable (3 clean / 7 dropped rounds)"))) << notes.toStdString();
  EXPECT_TRUE(notes.contains(QString::fromStdString(fp32->unreliable_reason))) << notes.toStdString();
  EXPECT_FALSE(notes.contains(QStringLiteral("noisy"))) << notes.toStdString();
  EXPECT_EQ(model_.unreliableTargets(), QStringList({QStringLiteral("cpu:fp32"), QStringLiteral("cpu:int8")}));
  EXPECT_EQ(model_.busyMachineText(),
            QStringLiteral("The machine was busy: cpu:fp32 and cpu:int8 had too few clean rounds (3 of 10; other "
                           "processes used 70 % of the CPUs). They are not ranked."));

  // A target whose busy rounds were dropped and repeated is fine, and the banner says so too.
  auto opencl = std::make_shared<TargetResult>(*Ok(kOpenCl, 0.25, 60, "estimated"));
  opencl->rounds = Rounds(10, 2, 0.25, 9.0, 0.5);
  model_.setResult(2, opencl);
  EXPECT_EQ(Cell(model_, 2, RunProgressModel::kStatusColumn).toString(), QStringLiteral("ok"));
  EXPECT_TRUE(Cell(model_, 2, RunProgressModel::kNotesColumn)
                  .toString()
                  .endsWith(QStringLiteral(", 10 clean / 2 dropped rounds")));
  EXPECT_TRUE(model_.busyMachineText().endsWith(
      QStringLiteral("They are not ranked. 2 timing rounds of opencl:0:fp16 were dropped and repeated (other processes "
                     "used 50 % of the CPUs in them); their figures come from the clean rounds.")))
      << model_.busyMachineText().toStdString();
}

// The speed-up of targets timed in rounds is the median of within-round ratios: a load that slowed
// one round moves both sides of it, while the ratio of p50s taken from different rounds would not.
TEST_F(RunProgressModelTest, SpeedUpPrefersWithinRoundPairs) {
  auto fp32 = std::make_shared<TargetResult>(*Ok(kFp32, 1.0, 130, "estimated"));
  auto int8 = std::make_shared<TargetResult>(*Ok(kInt8, 0.8, 24.5, "estimated"));
  // Round by round int8 is 4× faster; its p50 (from other rounds than fp32's) says 1.25×.
  for (int round = 1; round <= 5; ++round) {
    const double load = round <= 2 ? 1.0 : 3.0;  // the load came in round 3
    fp32->rounds.push_back(TimingRound{.round = round, .runs = 10, .median_ms = 1.0 * load});
    int8->rounds.push_back(TimingRound{.round = round, .runs = 10, .median_ms = 0.25 * load});
  }
  model_.setResult(0, fp32);
  model_.setResult(1, int8);
  EXPECT_DOUBLE_EQ(Cell(model_, 1, RunProgressModel::kSpeedupColumn, RunProgressModel::RawValueRole).toDouble(), 4.0);
  EXPECT_TRUE(Cell(model_, 1, RunProgressModel::kSpeedupColumn, Qt::ToolTipRole)
                  .toString()
                  .contains(QStringLiteral("round by round")));
  // A target without rounds (a run recorded before them): the ratio of the p50s.
  auto opencl = std::make_shared<TargetResult>(*Ok(kOpenCl, 0.5, 60, "estimated"));
  model_.setResult(2, opencl);
  EXPECT_DOUBLE_EQ(Cell(model_, 2, RunProgressModel::kSpeedupColumn, RunProgressModel::RawValueRole).toDouble(), 2.0);
}

// PP-OCR cls on cpu:int8 with every kernel left in fp32: "same", never "1.30×", and the mix is said;
// a stopped target that kept its timing shows it, marked partial; a non-finite layer is named.
TEST_F(RunProgressModelTest, WhatRanIsSaidAndNoSpeedUpIsCreditedToTheSameKernels) {
  auto fp32 = std::make_shared<TargetResult>(*Ok(kFp32, 1.0, 130, "estimated"));
  auto int8 = std::make_shared<TargetResult>(*Ok(kInt8, 0.77, 130, "estimated"));
  for (auto* r : {fp32.get(), int8.get()}) {
    for (LayerResult& l : r->layers)
      l = {.name = "conv", .device = "cpu", .precision = "fp32", .time_p50_ms = 0.3, .flops = 100};
  }
  int8->layers[0].precision = "int8";
  int8->layers[0].time_p50_ms = 0.02;
  model_.setResult(0, fp32);
  model_.setResult(1, int8);
  EXPECT_EQ(Cell(model_, 1, RunProgressModel::kSpeedupColumn).toString(), QStringLiteral("same"));
  EXPECT_TRUE(Cell(model_, 1, RunProgressModel::kSpeedupColumn, Qt::ToolTipRole)
                  .toString()
                  .contains(QStringLiteral("ran as cpu:fp32 (int8 1 of 3 kernels, 3 % of compute time)")))
      << Cell(model_, 1, RunProgressModel::kSpeedupColumn, Qt::ToolTipRole).toString().toStdString();
  EXPECT_TRUE(Cell(model_, 1, RunProgressModel::kNotesColumn).toString().contains(QStringLiteral("— ran as cpu:fp32")));
  EXPECT_FALSE(Cell(model_, 0, RunProgressModel::kNotesColumn).toString().contains(QStringLiteral("kernels,")));

  auto stopped = std::make_shared<TargetResult>(*Ok(kOpenCl, 0.4, 60, "estimated"));
  stopped->status = "cancelled";
  stopped->partial = true;
  AccuracySummary nan;
  nan.output_sqnr_db = -3;
  nan.first_non_finite_layer = "Log_3";
  auto broken = std::make_shared<TargetResult>(*Ok(kInt8, 0.5, -3, "estimated"));
  broken->accuracy = nan;
  model_.setResult(2, stopped);
  EXPECT_EQ(Cell(model_, 2, RunProgressModel::kStatusColumn).toString(), QStringLiteral("cancelled (partial)"));
  EXPECT_EQ(Cell(model_, 2, RunProgressModel::kP50Column).toString(), QStringLiteral("400 µs"));
  model_.setResult(1, broken);
  const QString drift = Cell(model_, 1, RunProgressModel::kDriftColumn).toString();
  EXPECT_TRUE(drift.contains(QStringLiteral("output differs more than it agrees"))) << drift.toStdString();
  EXPECT_TRUE(drift.contains(QStringLiteral("non-finite from Log_3"))) << drift.toStdString();
}

TEST_F(RunProgressModelTest, UnfinishedRowsAreMarkedWhenTheRunStops) {
  model_.setResult(0, Ok(kFp32, 1.0, 130, "estimated"));
  model_.setPhase(1, QStringLiteral("end-to-end"), {});
  model_.markUnfinished(QStringLiteral("cancelled"));
  EXPECT_EQ(model_.status(0), QStringLiteral("ok"));
  EXPECT_EQ(model_.status(1), QStringLiteral("cancelled"));
  EXPECT_EQ(model_.status(2), QStringLiteral("cancelled"));
  EXPECT_EQ(model_.finishedCount(), 1);
}

TEST_F(RunProgressModelTest, ANewRunResetsTheRows) {
  model_.setResult(0, Ok(kFp32, 1.0, 130, "estimated"));
  model_.startRun({kInt8});
  ASSERT_EQ(model_.rowCount(), 1);
  EXPECT_EQ(model_.status(0), QStringLiteral("waiting"));
  EXPECT_EQ(model_.result(0), nullptr);
  EXPECT_EQ(model_.headerData(RunProgressModel::kP50Column, Qt::Horizontal).toString(), QStringLiteral("p50"));
}

}  // namespace
}  // namespace chipfit
