// WriteReport in a process with no QApplication (as a CLI that forgot to create one): HTML and PDF
// fail with a message that says what to do; JSON and CSV, which draw no charts, still work.
#include <gtest/gtest.h>

#include <QCoreApplication>
#include <QTemporaryDir>
#include <fstream>
#include <memory>

#include "profilers/profile_json.h"
#include "views/report/report.h"

namespace chipfit {
namespace {

TEST(ReportWithoutApplicationTest, ChartFormatsAskForAQApplication) {
  ASSERT_EQ(QCoreApplication::instance(), nullptr);
  std::ifstream in(std::string(CHIPFIT_SOURCE_DIR) + "/tests/data/sample_run.json");
  const Result<RunResult> read = RunResultFromJson(nlohmann::json::parse(in));
  ASSERT_TRUE(read.ok()) << read.status().message();
  const RunResult& run = *read;
  QTemporaryDir dir;
  for (ReportFormat format : {ReportFormat::kHtml, ReportFormat::kPdf}) {
    const std::filesystem::path out = dir.filePath(QStringLiteral("report.out")).toStdString();
    const Status s = WriteReport(run, format, out);
    EXPECT_EQ(s.code(), StatusCode::kUnsupported) << ReportFormatName(format);
    EXPECT_NE(s.message().find("need a QApplication"), std::string::npos) << s.message();
    EXPECT_FALSE(std::filesystem::exists(out));
  }
  EXPECT_TRUE(WriteReport(run, ReportFormat::kCsv, dir.filePath(QStringLiteral("r.csv")).toStdString()).ok());
  EXPECT_TRUE(WriteReport(run, ReportFormat::kJson, dir.filePath(QStringLiteral("r.json")).toStdString()).ok());
}

// The throughput table of the CSV needs no Qt application either.
TEST(ReportWithoutApplicationTest, CsvHasTheThroughputTable) {
  ASSERT_EQ(QCoreApplication::instance(), nullptr);
  std::ifstream in(std::string(CHIPFIT_SOURCE_DIR) + "/tests/data/sample_run.json");
  Result<RunResult> read = RunResultFromJson(nlohmann::json::parse(in));
  ASSERT_TRUE(read.ok()) << read.status().message();
  RunResult run = std::move(read).value();
  auto target = std::make_shared<TargetResult>(*run.targets.at(0));
  ThroughputPoint point;
  point.batch = 8;
  point.streams = 2;
  point.threads_per_stream = 4;
  point.latency.p50 = 4.0;
  point.latency.p90 = 5.0;
  point.inferences_per_s = 4000;
  target->throughput = {point};
  run.targets[0] = target;
  const Result<std::string> csv = RenderCsvReport(run);
  ASSERT_TRUE(csv.ok()) << csv.status().message();
  EXPECT_NE(csv->find("\r\n\r\ntarget,batch,streams,threads_per_stream,"), std::string::npos) << *csv;
  EXPECT_NE(csv->find("\r\n" + target->target.ToString() + ",8,2,4,4,5,4000,0.25,ok,\r\n"), std::string::npos) << *csv;
}

}  // namespace
}  // namespace chipfit
