// HistoryModel and HistoryFilterModel: model contract, display strings in local time, raw values that
// sort as numbers, and each filter alone and combined.
#include "views/models/history_model.h"

#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTimeZone>
#include <string>
#include <vector>

#include "tests/views/model_test_messages.h"

namespace chipfit {
namespace {

// A run that started at `local` (this machine's time zone), stored as the store writes it: UTC text.
RunSummary Run(int64_t id, const std::string& status, const QDateTime& local, const std::string& model,
               const std::string& source, int ok, int targets, int threads = 0, const std::string& shapes = "") {
  RunSummary run;
  run.id = id;
  run.status = status;
  run.started_at = local.toUTC().toString(Qt::ISODate).toStdString();
  run.finished_at = status == "incomplete" ? "" : local.addSecs(12).toUTC().toString(Qt::ISODate).toStdString();
  run.model_path = model;
  run.model_sha256 = std::string(64, static_cast<char>('a' + id % 6));
  run.hostname = "bench-" + std::to_string(id);
  run.chipfit_version = "0.4.0";
  run.command = "chipfit profile " + model;
  run.targets = targets;
  run.targets_ok = ok;
  run.source = source;
  run.shapes = shapes;
  run.threads = threads;
  return run;
}

QDateTime Local(int year, int month, int day, int hour = 10) {
  return QDateTime(QDate(year, month, day), QTime(hour, 30, 5), QTimeZone::systemTimeZone());
}

// Ids 9 and 10 on purpose: sorted as text, "10" would come before "9".
std::vector<RunSummary> SampleRuns() {
  return {Run(10, "ok", Local(2026, 3, 14), "/data/models/cnn.onnx", "gui", 2, 2, 4, "input=1x3x32x32"),
          Run(9, "incomplete", Local(2026, 3, 12), "/data/models/MLP.onnx", "cli", 1, 3),
          Run(3, "cancelled", Local(2026, 2, 28, 23), "/other/cnn.onnx", "cli", 0, 2, 1),
          Run(2, "ok", Local(2026, 1, 5), "/data/models/det.onnx", "cli", 5, 5, 2, "x=1x3x640x640")};
}

QVariant Cell(const QAbstractItemModel& model, int row, int column, int role = Qt::DisplayRole) {
  return model.data(model.index(row, column), role);
}

TEST(HistoryModelTest, PassesModelTesterAcrossResetsAndThroughItsFilter) {
  ModelTestMessages messages;
  HistoryModel model;
  HistoryFilterModel filter;
  filter.setSourceModel(&model);
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  QAbstractItemModelTester filter_tester(&filter, QAbstractItemModelTester::FailureReportingMode::Warning);
  QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
  EXPECT_EQ(model.rowCount(), 0);
  EXPECT_EQ(model.columnCount(), HistoryModel::kColumnCount);

  model.setRuns(SampleRuns());
  EXPECT_EQ(model.rowCount(), 4);
  filter.setStatus(QStringLiteral("ok"));
  filter.sort(HistoryModel::kIdColumn, Qt::AscendingOrder);
  EXPECT_EQ(filter.rowCount(), 2);
  model.setRuns({SampleRuns()[1]});  // a store read again, one run left
  EXPECT_EQ(filter.rowCount(), 0);
  model.setRuns({});
  EXPECT_EQ(model.rowCount(), 0);
  EXPECT_EQ(resets.count(), 3);
  EXPECT_TRUE(messages.empty()) << messages.text().toStdString();
}

TEST(HistoryModelTest, ShowsLocalTimeFileNameAndTargetsOkOfTotal) {
  HistoryModel model;
  model.setRuns(SampleRuns());
  EXPECT_EQ(Cell(model, 0, HistoryModel::kIdColumn).toString(), QStringLiteral("10"));
  // The store keeps UTC; the table shows this machine's time.
  EXPECT_EQ(Cell(model, 0, HistoryModel::kStartedColumn).toString(), QStringLiteral("2026-03-14 10:30:05"));
  EXPECT_EQ(Cell(model, 0, HistoryModel::kModelColumn).toString(), QStringLiteral("cnn.onnx"));
  const QString model_tip = Cell(model, 0, HistoryModel::kModelColumn, Qt::ToolTipRole).toString();
  EXPECT_TRUE(model_tip.startsWith(QStringLiteral("/data/models/cnn.onnx"))) << model_tip.toStdString();
  EXPECT_TRUE(model_tip.contains(QStringLiteral("sha256 "))) << model_tip.toStdString();
  EXPECT_EQ(Cell(model, 1, HistoryModel::kStatusColumn).toString(), QStringLiteral("incomplete"));
  EXPECT_EQ(Cell(model, 1, HistoryModel::kTargetsColumn).toString(), QStringLiteral("1/3"));
  EXPECT_EQ(Cell(model, 0, HistoryModel::kSourceColumn).toString(), QStringLiteral("gui"));
  // Shapes read as a person writes them, not as the store keeps them ("input=1x3x32x32").
  EXPECT_EQ(Cell(model, 0, HistoryModel::kShapesColumn).toString(), QStringLiteral("input 1×3×32×32"));
  EXPECT_EQ(Cell(model, 0, HistoryModel::kShapesColumn, HistoryModel::RawValueRole).toString(),
            QStringLiteral("input=1x3x32x32"));
  EXPECT_EQ(Cell(model, 0, HistoryModel::kThreadsColumn).toString(), QStringLiteral("4"));
  EXPECT_EQ(Cell(model, 0, HistoryModel::kHostColumn).toString(), QStringLiteral("bench-10"));
  EXPECT_EQ(Cell(model, 0, HistoryModel::kVersionColumn).toString(), QStringLiteral("0.4.0"));
  // Runs from before shapes and threads were recorded say so rather than show 0.
  EXPECT_EQ(Cell(model, 1, HistoryModel::kThreadsColumn).toString(), QStringLiteral("–"));
  EXPECT_EQ(Cell(model, 1, HistoryModel::kShapesColumn).toString(), QStringLiteral("–"));
  EXPECT_TRUE(Cell(model, 1, HistoryModel::kStartedColumn, Qt::ToolTipRole)
                  .toString()
                  .contains(QStringLiteral("Never finished")));
  EXPECT_TRUE(
      Cell(model, 0, HistoryModel::kStartedColumn, Qt::ToolTipRole).toString().contains(QStringLiteral("Took 12 s")));
  // Runs that did not finish ok stand out; ok ones keep the view's colour.
  EXPECT_TRUE(Cell(model, 1, HistoryModel::kStatusColumn, Qt::ForegroundRole).isValid());
  EXPECT_FALSE(Cell(model, 0, HistoryModel::kStatusColumn, Qt::ForegroundRole).isValid());
  EXPECT_EQ(model.headerData(HistoryModel::kTargetsColumn, Qt::Horizontal).toString(), QStringLiteral("Targets ok"));
  EXPECT_EQ(model.rowOf(3), 2);
  EXPECT_EQ(model.rowOf(77), -1);
  ASSERT_NE(model.runAt(3), nullptr);
  EXPECT_EQ(model.runAt(3)->id, 2);
  EXPECT_EQ(model.runAt(4), nullptr);
}

TEST(HistoryModelTest, ShapesReadAsDimsWithTheirInputNames) {
  EXPECT_EQ(HistoryModel::ShapesText("x=1x3x48x192"), QStringLiteral("x 1×3×48×192"));
  EXPECT_EQ(HistoryModel::ShapesText("mask=1x48,x=1x3x48x192"), QStringLiteral("mask 1×48, x 1×3×48×192"));
  EXPECT_EQ(HistoryModel::ShapesText(""), QString());
}

// A What-if run (nodes kept in fp32 by request) carries a mark and names the nodes it kept; the others
// leave the column empty.
TEST(HistoryModelTest, MarksWhatIfRunsAndNamesTheLayersTheyKept) {
  std::vector<RunSummary> runs = SampleRuns();
  runs[0].keep_fp32 = {"Conv_0"};
  runs[1].keep_fp32 = {"conv1", "conv2", "conv3", "fc1", "fc2"};
  HistoryModel model;
  model.setRuns(runs);
  EXPECT_EQ(model.headerData(HistoryModel::kWhatIfColumn, Qt::Horizontal).toString(), QStringLiteral("What-if"));
  EXPECT_EQ(Cell(model, 0, HistoryModel::kWhatIfColumn).toString(), QStringLiteral("Conv_0 in fp32"));
  EXPECT_EQ(Cell(model, 1, HistoryModel::kWhatIfColumn).toString(),
            QStringLiteral("conv1, conv2, conv3 and 2 more in fp32"));
  const QString tip = Cell(model, 1, HistoryModel::kWhatIfColumn, Qt::ToolTipRole).toString();
  EXPECT_TRUE(tip.startsWith(QStringLiteral("What-if run"))) << tip.toStdString();
  EXPECT_TRUE(tip.contains(QStringLiteral("fc2"))) << tip.toStdString();
  EXPECT_TRUE(Cell(model, 1, HistoryModel::kIdColumn, HistoryModel::WhatIfRole).toBool());
  EXPECT_FALSE(Cell(model, 2, HistoryModel::kIdColumn, HistoryModel::WhatIfRole).toBool());
  EXPECT_EQ(Cell(model, 2, HistoryModel::kWhatIfColumn).toString(), QString());
  EXPECT_EQ(Cell(model, 1, HistoryModel::kWhatIfColumn, HistoryModel::RawValueRole).toInt(), 5);
}

TEST(HistoryModelTest, RawValuesAreNumbersAndSortAsNumbers) {
  HistoryModel model;
  model.setRuns(SampleRuns());
  const QVariant id = Cell(model, 0, HistoryModel::kIdColumn, HistoryModel::RawValueRole);
  ASSERT_EQ(id.typeId(), QMetaType::LongLong);
  EXPECT_EQ(id.toLongLong(), 10);
  const QVariant started = Cell(model, 0, HistoryModel::kStartedColumn, HistoryModel::RawValueRole);
  ASSERT_EQ(started.typeId(), QMetaType::QDateTime);
  EXPECT_EQ(started.toDateTime(), Local(2026, 3, 14));
  EXPECT_EQ(started.toDateTime().timeSpec(), Qt::UTC);
  const QVariant ok = Cell(model, 1, HistoryModel::kTargetsColumn, HistoryModel::RawValueRole);
  ASSERT_EQ(ok.typeId(), QMetaType::Int);
  EXPECT_EQ(ok.toInt(), 1);
  EXPECT_EQ(Cell(model, 1, HistoryModel::kTargetsColumn, HistoryModel::TargetsTotalRole).toInt(), 3);
  EXPECT_EQ(Cell(model, 1, HistoryModel::kThreadsColumn, HistoryModel::RawValueRole).toInt(), 0);
  EXPECT_EQ(Cell(model, 2, HistoryModel::kModelColumn, HistoryModel::RawValueRole).toString(),
            QStringLiteral("/other/cnn.onnx"));
  EXPECT_EQ(Cell(model, 3, HistoryModel::kStatusColumn, HistoryModel::RunIdRole).toLongLong(), 2);

  HistoryFilterModel filter;
  filter.setSourceModel(&model);
  filter.sort(HistoryModel::kIdColumn, Qt::AscendingOrder);
  QStringList ids;
  for (int row = 0; row < filter.rowCount(); ++row) ids << Cell(filter, row, HistoryModel::kIdColumn).toString();
  EXPECT_EQ(ids, (QStringList{"2", "3", "9", "10"}));
  // By start time, not by the text of a local time: run 3 started late on 28 Feb.
  filter.sort(HistoryModel::kStartedColumn, Qt::DescendingOrder);
  ids.clear();
  for (int row = 0; row < filter.rowCount(); ++row) ids << Cell(filter, row, HistoryModel::kIdColumn).toString();
  EXPECT_EQ(ids, (QStringList{"10", "9", "3", "2"}));
}

// The ids the filter lets through, in the source's order.
QStringList Shown(const HistoryFilterModel& filter) {
  QStringList ids;
  for (int row = 0; row < filter.rowCount(); ++row) ids << Cell(filter, row, HistoryModel::kIdColumn).toString();
  return ids;
}

TEST(HistoryModelTest, FiltersByModelStatusSourceAndLocalDates) {
  HistoryModel model;
  model.setRuns(SampleRuns());
  HistoryFilterModel filter;
  filter.setSourceModel(&model);
  EXPECT_EQ(Shown(filter), (QStringList{"10", "9", "3", "2"}));

  // Part of the path, any case; the folder counts too.
  filter.setModelText(QStringLiteral("CNN"));
  EXPECT_EQ(Shown(filter), (QStringList{"10", "3"}));
  filter.setModelText(QStringLiteral("/data/"));
  EXPECT_EQ(Shown(filter), (QStringList{"10", "9", "2"}));
  filter.setModelText(QStringLiteral("mlp"));
  EXPECT_EQ(Shown(filter), (QStringList{"9"}));
  filter.setModelText({});

  filter.setStatus(QStringLiteral("ok"));
  EXPECT_EQ(Shown(filter), (QStringList{"10", "2"}));
  filter.setSource(QStringLiteral("cli"));
  EXPECT_EQ(Shown(filter), (QStringList{"2"}));
  filter.setStatus({});
  EXPECT_EQ(Shown(filter), (QStringList{"9", "3", "2"}));
  filter.setSource(QStringLiteral("gui"));
  EXPECT_EQ(Shown(filter), (QStringList{"10"}));
  filter.setSource({});

  // Inclusive days in local time: 28 Feb 23:30 local is on the 28th whatever its UTC date.
  filter.setDateRange(QDate(2026, 2, 28), QDate(2026, 3, 12));
  EXPECT_EQ(Shown(filter), (QStringList{"9", "3"}));
  filter.setDateRange(QDate(2026, 3, 1), QDate());
  EXPECT_EQ(Shown(filter), (QStringList{"10", "9"}));
  filter.setDateRange(QDate(), QDate(2026, 2, 27));
  EXPECT_EQ(Shown(filter), (QStringList{"2"}));
  filter.setDateRange(QDate(2026, 3, 14), QDate(2026, 3, 14));
  EXPECT_EQ(Shown(filter), (QStringList{"10"}));

  // Together: every criterion must hold.
  filter.setDateRange(QDate(2026, 1, 1), QDate(2026, 12, 31));
  filter.setModelText(QStringLiteral("cnn"));
  filter.setSource(QStringLiteral("cli"));
  EXPECT_EQ(Shown(filter), (QStringList{"3"}));
  filter.setStatus(QStringLiteral("ok"));
  EXPECT_TRUE(Shown(filter).isEmpty());
}

TEST(HistoryModelTest, AStartThatDoesNotParseIsShownAsStoredAndKeptOutOfDateRanges) {
  HistoryModel model;
  RunSummary odd = SampleRuns()[0];
  odd.started_at = "yesterday";
  model.setRuns({odd});
  EXPECT_EQ(Cell(model, 0, HistoryModel::kStartedColumn).toString(), QStringLiteral("yesterday"));
  EXPECT_FALSE(Cell(model, 0, HistoryModel::kStartedColumn, HistoryModel::RawValueRole).toDateTime().isValid());
  HistoryFilterModel filter;
  filter.setSourceModel(&model);
  EXPECT_EQ(filter.rowCount(), 1);
  filter.setDateRange(QDate(2000, 1, 1), QDate());
  EXPECT_EQ(filter.rowCount(), 0);
}

}  // namespace
}  // namespace chipfit
