// WriteReport in a process with no QApplication (as a CLI that forgot to create one): HTML and PDF
// fail with a message that says what to do; JSON and CSV, which draw no charts, still work.
#include <gtest/gtest.h>

#include <QCoreApplication>
#include <QTemporaryDir>
#include <fstream>

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

}  // namespace
}  // namespace chipfit
