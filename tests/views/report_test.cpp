// Reports (views/report) and run charts (views/charts) of real profile runs (tests/data fixtures, made by
// `chipfit profile` on resources/models/cnn.onnx), rendered offscreen in every format.
#include "views/report/report.h"

#include <gtest/gtest.h>

#include <QBarCategoryAxis>
#include <QCategoryAxis>
#include <QDir>
#include <QGraphicsScene>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThread>
#include <QXmlStreamReader>
#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>

#include "profilers/profile_json.h"
#include "views/charts/run_charts.h"

namespace chipfit {
namespace {

using nlohmann::json;

json LoadFixture(const char* name) {
  std::ifstream in(std::string(CHIPFIT_SOURCE_DIR) + "/tests/data/" + name);
  EXPECT_TRUE(in.good()) << "missing fixture tests/data/" << name;
  return json::parse(in);
}

// A run as `chipfit report --in FILE` reads it: through the one reader.
RunResult ReadRun(const json& j) {
  Result<RunResult> run = RunResultFromJson(j);
  EXPECT_TRUE(run.ok()) << run.status().message();
  return run.ok() ? std::move(run).value() : RunResult{};
}

RunResult LoadRun(const char* name) { return ReadRun(LoadFixture(name)); }

// Targets are shared and immutable: a test edits a copy that takes the original's place.
TargetResult& EditTarget(RunResult& run, size_t index) {
  auto copy = std::make_shared<TargetResult>(*run.targets.at(index));
  run.targets[index] = copy;
  return *copy;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> TargetNames(const json& run) {
  std::vector<std::string> names;
  for (const json& t : run["targets"]) names.push_back(t["target"].get<std::string>());
  return names;
}

// Reports are kept as test artefacts (like the page screenshots) for a person to look at.
void KeepArtefact(const std::filesystem::path& file, const std::string& fixture) {
  const std::filesystem::path dir = CHIPFIT_BINARY_DIR "/test-artifacts";
  std::filesystem::create_directories(dir);
  const std::string stem = std::filesystem::path(fixture).stem().string();
  std::filesystem::copy_file(file, dir / ("report_" + stem + file.extension().string()),
                             std::filesystem::copy_options::overwrite_existing);
}

size_t LayerCount(const json& run) {
  size_t n = 0;
  for (const json& t : run["targets"]) n += t["layers"].size();
  return n;
}

// What a reader of the HTML sees: the text of every element, parsed as XML (so the test fails on any
// markup that is not well-formed), and how many <svg> elements there are.
struct ParsedHtml {
  bool ok = false;
  QString error;
  QString text;
  int svgs = 0;
  int tables = 0;
};

ParsedHtml ParseXml(const std::string& html) {
  ParsedHtml parsed;
  QXmlStreamReader reader(QByteArray::fromStdString(html));
  while (!reader.atEnd()) {
    reader.readNext();
    if (reader.isStartElement() && reader.name() == QLatin1String("svg")) ++parsed.svgs;
    if (reader.isStartElement() && reader.name() == QLatin1String("table")) ++parsed.tables;
    if (reader.isCharacters()) parsed.text += reader.text().toString() + QLatin1Char(' ');
  }
  parsed.ok = !reader.hasError();
  parsed.error = QStringLiteral("%1 at line %2, column %3")
                     .arg(reader.errorString())
                     .arg(reader.lineNumber())
                     .arg(reader.columnNumber());
  return parsed;
}

// RFC 4180 reader: rows of fields, quotes and embedded line breaks honoured.
std::vector<std::vector<std::string>> ParseCsv(const std::string& csv) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < csv.size(); ++i) {
    const char c = csv[i];
    if (quoted) {
      if (c == '"' && i + 1 < csv.size() && csv[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
    } else if (c == '\r' && i + 1 < csv.size() && csv[i + 1] == '\n') {
      rows.back().push_back(field);
      field.clear();
      rows.emplace_back();
      ++i;
    } else {
      field += c;
    }
  }
  if (rows.back().empty() && field.empty()) rows.pop_back();
  return rows;
}

class ReportTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    json_ = LoadFixture(GetParam());
    auto run = RunResultFromJson(json_);
    ASSERT_TRUE(run.ok()) << run.status().message();
    run_ = std::move(run).value();
    ASSERT_TRUE(dir_.isValid());
  }
  std::filesystem::path Out(const std::string& name) const {
    return dir_.filePath(QString::fromStdString(name)).toStdString();
  }

  json json_;      // the fixture as written, for the expected values
  RunResult run_;  // what the reports are made of
  QTemporaryDir dir_;
};

TEST_P(ReportTest, HtmlIsOneWellFormedSelfContainedFile) {
  const auto path = Out("report.html");
  ASSERT_TRUE(WriteReport(run_, ReportFormat::kHtml, path).ok());
  KeepArtefact(path, GetParam());
  const std::string html = ReadFile(path);
  const ParsedHtml parsed = ParseXml(html);
  ASSERT_TRUE(parsed.ok) << parsed.error.toStdString();

  for (const std::string& target : TargetNames(json_)) {
    EXPECT_TRUE(parsed.text.contains(QString::fromStdString(target))) << target;
  }
  // The failed target says why it did not run.
  EXPECT_TRUE(parsed.text.contains(QStringLiteral("no fp16 convolution")));
  EXPECT_TRUE(parsed.text.contains(QString::fromStdString(json_["command"].get<std::string>())));
  EXPECT_TRUE(parsed.text.contains(QString::fromStdString(json_["model"]["sha256"].get<std::string>())));
  if (json_.contains("recommendation")) {
    EXPECT_TRUE(parsed.text.contains(QString::fromStdString(json_["recommendation"]["summary"].get<std::string>())));
    EXPECT_TRUE(parsed.text.contains(QStringLiteral("Recommended target")));
  } else {
    EXPECT_TRUE(parsed.text.contains(QStringLiteral("No limits given: no recommendation")));
  }
  // Recommendation before the targets table, the charts after the layer tables (the order readers need).
  EXPECT_LT(parsed.text.indexOf(QStringLiteral("Recommendation")),
            parsed.text.indexOf(QStringLiteral("Peak memory planned")));
  EXPECT_LT(parsed.text.indexOf(QStringLiteral("Bytes r+w")), parsed.text.indexOf(QStringLiteral("Roofline")));
  EXPECT_TRUE(parsed.text.contains(QStringLiteral("estimated")));

  // Four ok targets: a layer-time chart each, a roofline per device (cpu, opencl:0), drift, energy.
  EXPECT_EQ(parsed.svgs, 8);
  EXPECT_NE(html.find("<svg"), std::string::npos);

  // Nothing fetched from elsewhere: the only URLs are the XML namespaces of XHTML and SVG.
  // (QRegularExpression: GCC 12 warns inside std::regex at the sanitizer build's -O1.)
  const QString page = QString::fromStdString(html);
  static const QRegularExpression url(QStringLiteral(R"re(https?://[^\s"'<>)]*)re"));
  for (auto it = url.globalMatch(page); it.hasNext();) {
    const QString u = it.next().captured(0);
    EXPECT_TRUE(u == QLatin1String("http://www.w3.org/1999/xhtml") ||
                u == QLatin1String("http://www.w3.org/2000/svg") || u == QLatin1String("http://www.w3.org/1999/xlink"))
        << "external reference " << u.toStdString();
  }
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  // Ids unique in the page, or the inline charts' clip paths would point into one another.
  std::set<QString> ids;
  static const QRegularExpression id(QStringLiteral(R"re( id="([^"]+)")re"));
  for (auto it = id.globalMatch(page); it.hasNext();) {
    const QString value = it.next().captured(1);
    EXPECT_TRUE(ids.insert(value).second) << "duplicate id " << value.toStdString();
  }
}

TEST_P(ReportTest, PdfHasSeveralA4Pages) {
  const auto path = Out("report.pdf");
  ASSERT_TRUE(WriteReport(run_, ReportFormat::kPdf, path).ok());
  KeepArtefact(path, GetParam());
  const std::string pdf = ReadFile(path);
  ASSERT_GT(pdf.size(), 10000u);
  EXPECT_EQ(pdf.substr(0, 5), "%PDF-");

  const QString pdftoppm = QStandardPaths::findExecutable(QStringLiteral("pdftoppm"));
  if (pdftoppm.isEmpty()) GTEST_SKIP() << "pdftoppm not found (Debian package poppler-utils): PDF pages not rasterised";
  QProcess p;
  p.start(pdftoppm, {QStringLiteral("-r"), QStringLiteral("40"), QStringLiteral("-png"),
                     QString::fromStdString(path.string()), dir_.filePath(QStringLiteral("page"))});
  ASSERT_TRUE(p.waitForFinished(60000));
  ASSERT_EQ(p.exitCode(), 0) << p.readAllStandardError().toStdString();
  const QStringList pages = QDir(dir_.path()).entryList({QStringLiteral("page-*.png")}, QDir::Files);
  EXPECT_GE(pages.size(), 2) << "pages: " << pages.join(QLatin1Char(',')).toStdString();
  // A4 landscape (for the wide layer tables) at 40 dpi: 468 × 331 px.
  const QImage first(QDir(dir_.path()).filePath(pages.value(0)));
  EXPECT_NEAR(first.width(), 468, 2);
  EXPECT_NEAR(first.height(), 331, 2);
}

TEST_P(ReportTest, CsvHasOneRowPerTargetLayer) {
  const auto path = Out("layers.csv");
  ASSERT_TRUE(WriteReport(run_, ReportFormat::kCsv, path).ok());
  const auto rows = ParseCsv(ReadFile(path));
  ASSERT_EQ(rows.size(), LayerCount(json_) + 1);
  ASSERT_EQ(rows[0].size(), 19u);
  EXPECT_EQ(rows[0][0], "target");
  EXPECT_EQ(rows[0][4], "onnx_nodes");
  EXPECT_EQ(rows[0][18], "energy_source");
  for (const auto& row : rows) EXPECT_EQ(row.size(), 19u);
  // The unsupported target has no layers, so no rows; the fused conv lists its nodes.
  bool fused = false;
  for (const auto& row : rows) {
    EXPECT_NE(row[0], "cpu:fp16");
    if (row[0] == "cpu:int8" && row[2] == "conv1") {
      fused = true;
      EXPECT_EQ(row[4], "conv1;bn1;relu1");
      EXPECT_EQ(row[18], "estimated");
      EXPECT_DOUBLE_EQ(std::stod(row[7]), json_["targets"][1]["layers"][0]["time_ms"]["p50"].get<double>());
    }
  }
  EXPECT_TRUE(fused);
}

TEST_P(ReportTest, JsonIsTheRunItself) {
  const auto path = Out("run.json");
  ASSERT_TRUE(WriteReport(run_, ReportFormat::kJson, path).ok());
  const json report = json::parse(ReadFile(path));
  EXPECT_EQ(report, RunResultToJson(run_));
  // Nothing the fixture holds is lost on the way through RunResult: every member comes back unchanged
  // (the reader only adds what the fixture predates, such as "source").
  for (const auto& [key, value] : json_.items()) EXPECT_EQ(report[key], value) << key;
}

// A run read from JSON and written back as the JSON report is the one writer's document, to the byte,
// and reads back as the same run.
TEST_P(ReportTest, JsonReportIsTheOneWritersJson) {
  const auto bytes = RenderReport(run_, ReportFormat::kJson);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  EXPECT_EQ(*bytes, RunResultToJson(run_).dump(2) + "\n");
  const auto again = RunResultFromJson(json::parse(*bytes));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(RunResultToJson(*again), RunResultToJson(run_));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ReportTest, ::testing::Values("sample_run.json", "sample_run_recommended.json"));

TEST(ReportFormatTest, ParsesNamesAndExtensions) {
  EXPECT_EQ(*ParseReportFormat("html"), ReportFormat::kHtml);
  EXPECT_EQ(*ParseReportFormat("PDF"), ReportFormat::kPdf);
  EXPECT_EQ(*ParseReportFormat("csv"), ReportFormat::kCsv);
  EXPECT_EQ(*ParseReportFormat("json"), ReportFormat::kJson);
  EXPECT_EQ(*ReportFormatFromPath("out/report.HTM"), ReportFormat::kHtml);
  EXPECT_EQ(*ReportFormatFromPath("/tmp/a.b/run.csv"), ReportFormat::kCsv);

  const auto unknown = ParseReportFormat("docx");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("'docx'"), std::string::npos) << unknown.status().message();
  const auto by_ext = ReportFormatFromPath("report.docx");
  ASSERT_FALSE(by_ext.ok());
  EXPECT_NE(by_ext.status().message().find("report.docx"), std::string::npos);
  EXPECT_FALSE(ReportFormatFromPath("report").ok());
}

TEST(ReportErrorTest, UnwritablePathIsNamed) {
  const RunResult run = LoadRun("sample_run.json");
  for (ReportFormat format : {ReportFormat::kHtml, ReportFormat::kCsv}) {
    const Status s = WriteReport(run, format, "/nonexistent-chipfit-dir/sub/report.out");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), StatusCode::kIoError);
    EXPECT_NE(s.message().find("/nonexistent-chipfit-dir/sub/report.out"), std::string::npos) << s.message();
  }
}

// Through the JSON overload that app/cli_main.cpp uses until it passes its RunResult.
TEST(ReportErrorTest, ChartsOffTheApplicationThreadAreRefused) {
  const RunResult run = LoadRun("sample_run.json");
  Status html, csv;
  QThread* worker = QThread::create([&] {
    html = RenderHtmlReport(run).status();
    csv = RenderCsvReport(run).status();
  });
  worker->start();
  worker->wait();
  delete worker;
  EXPECT_EQ(html.code(), StatusCode::kUnsupported);
  EXPECT_NE(html.message().find("QApplication's thread"), std::string::npos) << html.message();
  EXPECT_TRUE(csv.ok()) << csv.message();  // CSV needs no Qt at all
}

// Hand-edited or damaged runs: what the reader lets through (missing fields, odd text, a recommendation
// of the wrong shape) renders as dashes, never as a crash or as markup that breaks the page.
TEST(ReportRobustnessTest, OddFieldsStillGiveWellFormedHtml) {
  json j = LoadFixture("sample_run.json");
  // A wrong type no longer reaches a report: the one reader refuses it and says where it is.
  json bad = j;
  bad["model"]["flops"] = "many";
  const auto flops = RunResultFromJson(bad);
  ASSERT_FALSE(flops.ok());
  EXPECT_NE(flops.status().message().find("model"), std::string::npos) << flops.status().message();
  bad = j;
  bad["targets"][0]["latency_ms"]["p50"] = "fast";
  const auto latency = RunResultFromJson(bad);
  ASSERT_FALSE(latency.ok());
  EXPECT_NE(latency.status().message().find("cpu:fp32"), std::string::npos) << latency.status().message();

  j["command"] = "chipfit profile 'a<b>&c\".onnx' \x01";
  j["machine"] = nullptr;
  j["targets"][0]["layers"][1]["name"] = "conv,1 \"quoted\"\nnext line";
  j["targets"][0]["layers"][2]["drift"] = json::array();
  j["targets"][1]["energy_j"] = 5;
  j["recommendation"] = {{"best", nullptr}, {"ranked", json::array()}, {"rejected", "everything"}};
  RunResult run = ReadRun(j);
  // What JSON cannot carry: a latency that is not a number.
  EditTarget(run, 0).latency.p50 = std::nan("");
  const auto html = RenderHtmlReport(run);
  ASSERT_TRUE(html.ok()) << html.status().message();
  const ParsedHtml parsed = ParseXml(*html);
  ASSERT_TRUE(parsed.ok) << parsed.error.toStdString();
  EXPECT_TRUE(parsed.text.contains(QStringLiteral("a<b>&c")));
  EXPECT_TRUE(parsed.text.contains(QStringLiteral("No target meets every limit")));

  const auto csv = RenderCsvReport(run);
  ASSERT_TRUE(csv.ok());
  const auto rows = ParseCsv(*csv);
  ASSERT_EQ(rows.size(), LayerCount(j) + 1);
  EXPECT_EQ(rows[2][2], "conv,1 \"quoted\"\nnext line");  // RFC 4180 round trip
}

// The charts themselves, as the GUI will get them.
TEST(RunChartsTest, LayerTimeChartShowsTheSlowestLayersOnTop) {
  const RunResult run = LoadRun("sample_run.json");
  const TargetResult& int8 = *run.targets[1];
  auto chart = charts::LayerTimeChart(run, int8, 3);
  ASSERT_NE(chart, nullptr);
  EXPECT_TRUE(chart->title().contains(QStringLiteral("top 3 of 7")));
  const auto axes = chart->axes(Qt::Vertical);
  ASSERT_EQ(axes.size(), 1);
  const auto* categories = qobject_cast<QBarCategoryAxis*>(axes[0]);
  ASSERT_NE(categories, nullptr);
  ASSERT_EQ(categories->count(), 3);
  // Bars run bottom to top: the last category is the slowest layer (conv1 in this run).
  EXPECT_TRUE(categories->at(2).startsWith(QStringLiteral("conv1"))) << categories->at(2).toStdString();
}

TEST(RunChartsTest, RooflineSaysWhenCeilingsAreMissing) {
  RunResult run = LoadRun("sample_run.json");
  EXPECT_EQ(charts::RooflineDevices(run), (std::vector<std::string>{"cpu", "opencl:0"}));
  auto measured = charts::RooflineChart(run, "cpu");
  EXPECT_FALSE(measured->title().contains(QStringLiteral("no measured ceilings")));
  // Three scatter series (fp32, int8, bf16 layers) and three roofs (one per precision).
  EXPECT_EQ(measured->series().size(), 6);
  EditTarget(run, 4).ceilings.reset();
  auto missing = charts::RooflineChart(run, "opencl:0");
  EXPECT_TRUE(missing->title().contains(QStringLiteral("no measured ceilings"))) << missing->title().toStdString();
  EXPECT_EQ(missing->series().size(), 1);
}

TEST(RunChartsTest, DriftChartDrawsTheExactSentinelOnItsOwnRow) {
  RunResult run = LoadRun("sample_run.json");
  EditTarget(run, 0).layers.at(5).drift.value().sqnr_db = 200.0;
  auto chart = charts::DriftChart(run);
  const auto axes = chart->axes(Qt::Vertical);
  ASSERT_EQ(axes.size(), 1);
  auto* y = qobject_cast<QCategoryAxis*>(axes[0]);
  ASSERT_NE(y, nullptr);
  EXPECT_TRUE(y->categoriesLabels().contains(QStringLiteral("exact")));
  EXPECT_LT(y->max(), 200.0);  // the sentinel does not stretch the axis
}

TEST(RunChartsTest, EnergyChartSaysItsValuesAreEstimates) {
  const RunResult run = LoadRun("sample_run.json");
  auto chart = charts::EnergyChart(run);
  EXPECT_TRUE(chart->title().contains(QStringLiteral("ESTIMATED")));
  auto* y = qobject_cast<QBarCategoryAxis*>(chart->axes(Qt::Vertical).value(0));
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->count(), 4);  // the four targets that ran
  for (const QString& label : y->categories()) EXPECT_TRUE(label.contains(QStringLiteral("(estimated)")));
}

TEST(RunChartsTest, RendersToSvgAndImageWithoutAWindow) {
  const RunResult run = LoadRun("sample_run.json");
  auto chart = charts::DriftChart(run);
  const QByteArray svg = charts::RenderSvg(*chart, QSize(600, 400));
  EXPECT_TRUE(svg.contains("<svg"));
  EXPECT_TRUE(svg.contains("cpu:int8"));  // legend text stays text
  EXPECT_EQ(chart->scene(), nullptr);     // handed back
  const QImage image = charts::RenderImage(*chart, QSize(600, 400), 2.0);
  EXPECT_EQ(image.size(), QSize(1200, 800));
  // Something was drawn: not every pixel is the white background.
  int coloured = 0;
  for (int y = 0; y < image.height(); y += 7) {
    for (int x = 0; x < image.width(); x += 7) coloured += image.pixel(x, y) != qRgb(255, 255, 255) ? 1 : 0;
  }
  EXPECT_GT(coloured, 100);
}

// The GUI renders the chart a QChartView shows (Export): it must stay in that view's scene.
TEST(RunChartsTest, RenderingAShownChartLeavesItInItsScene) {
  const RunResult run = LoadRun("sample_run.json");
  auto chart = charts::EnergyChart(run);
  QGraphicsScene scene;
  scene.addItem(chart.get());
  chart->setGeometry(QRectF(10, 20, 500, 300));
  EXPECT_TRUE(charts::RenderSvg(*chart, QSize(600, 300)).contains("<svg"));
  EXPECT_EQ(chart->scene(), &scene);
  EXPECT_EQ(chart->geometry(), QRectF(10, 20, 500, 300));
  scene.removeItem(chart.get());  // the unique_ptr owns it
}

}  // namespace
}  // namespace chipfit
