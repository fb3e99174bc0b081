// Reports (views/report) and run charts (views/charts) of real profile runs (tests/data fixtures, made by
// `chipfit profile` on resources/models/cnn.onnx), rendered offscreen in every format.
#include "views/report/report.h"

#include <gtest/gtest.h>

#include <QAbstractTextDocumentLayout>
#include <QBarCategoryAxis>
#include <QCategoryAxis>
#include <QDir>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QLineSeries>
#include <QProcess>
#include <QRegularExpression>
#include <QScatterSeries>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextTable>
#include <QThread>
#include <QValueAxis>
#include <QXmlStreamReader>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "profilers/profile_json.h"
#include "views/charts/run_charts.h"
#include "views/report/report_command.h"
#include "views/report/report_document.h"

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

// The tables of the HTML page as a reader sees them: header cells, rows of cell texts, and whether the
// table is folded inside a <details> (under which summary, open or not).
struct HtmlTable {
  QStringList header;
  std::vector<QStringList> rows;
  bool folded = false;
  bool open = false;
  QString summary;

  int Column(const QString& prefix) const {
    for (int i = 0; i < header.size(); ++i) {
      if (header[i].startsWith(prefix)) return i;
    }
    return -1;
  }
  // The row whose first cell starts with `key` (a target, a layer index, a device).
  QStringList Row(const QString& key) const {
    for (const QStringList& row : rows) {
      if (!row.isEmpty() && row[0].startsWith(key)) return row;
    }
    return {};
  }
};

std::vector<HtmlTable> HtmlTables(const std::string& html) {
  std::vector<HtmlTable> tables;
  QXmlStreamReader reader(QByteArray::fromStdString(html));
  bool in_details = false, details_open = false, in_head = false;
  QString summary;
  QStringList row;
  while (!reader.atEnd()) {
    reader.readNext();
    const QStringView name = reader.name();
    if (reader.isStartElement()) {
      if (name == QLatin1String("details")) {
        in_details = true;
        details_open = reader.attributes().hasAttribute(QStringLiteral("open"));
        summary.clear();
      } else if (name == QLatin1String("summary")) {
        summary = reader.readElementText(QXmlStreamReader::IncludeChildElements);
      } else if (name == QLatin1String("table")) {
        tables.push_back({{}, {}, in_details, details_open, in_details ? summary : QString()});
      } else if (name == QLatin1String("thead")) {
        in_head = true;
      } else if (name == QLatin1String("tr")) {
        row.clear();
      } else if (name == QLatin1String("th") || name == QLatin1String("td")) {
        row << reader.readElementText(QXmlStreamReader::IncludeChildElements);
      }
    } else if (reader.isEndElement()) {
      if (name == QLatin1String("details")) {
        in_details = false;
      } else if (name == QLatin1String("thead")) {
        in_head = false;
      } else if (name == QLatin1String("tr") && !tables.empty()) {
        if (in_head) {
          tables.back().header = row;
        } else {
          tables.back().rows.push_back(row);
        }
      }
    }
  }
  EXPECT_FALSE(reader.hasError()) << reader.errorString().toStdString();
  return tables;
}

// The first table whose header has a column starting with `column`.
const HtmlTable* FindTable(const std::vector<HtmlTable>& tables, const QString& column) {
  for (const HtmlTable& t : tables) {
    if (t.Column(column) >= 0) return &t;
  }
  return nullptr;
}

std::string Html(const RunResult& run) {
  const auto html = RenderHtmlReport(run);
  EXPECT_TRUE(html.ok()) << html.status().message();
  return html.ok() ? *html : std::string();
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

// The CSV's tables (targets, layers, throughput), split at the empty lines; each starts with its header.
using CsvTable = std::vector<std::vector<std::string>>;
std::vector<CsvTable> CsvTables(const std::string& csv) {
  std::vector<CsvTable> tables(1);
  for (auto& row : ParseCsv(csv)) {
    if (row == std::vector<std::string>{""}) {
      tables.emplace_back();
    } else {
      tables.back().push_back(std::move(row));
    }
  }
  return tables;
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
  // Recommendation before the targets table, the charts before the long layer tables (the order readers
  // need).
  EXPECT_LT(parsed.text.indexOf(QStringLiteral("Recommendation")),
            parsed.text.indexOf(QStringLiteral("Peak memory planned")));
  EXPECT_LT(parsed.text.indexOf(QStringLiteral("Roofline")), parsed.text.indexOf(QStringLiteral("Bytes r+w")));
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

// A spreadsheet user opens the CSV on one row per target; the layer rows follow as a table of their own.
TEST_P(ReportTest, CsvHasOneRowPerTargetThenOneRowPerLayer) {
  const auto path = Out("layers.csv");
  ASSERT_TRUE(WriteReport(run_, ReportFormat::kCsv, path).ok());
  const std::vector<CsvTable> tables = CsvTables(ReadFile(path));
  ASSERT_EQ(tables.size(), 2u);  // targets, layers (no throughput points)
  const CsvTable& targets = tables[0];
  ASSERT_EQ(targets.size(), json_["targets"].size() + 1);
  EXPECT_EQ(targets[0][0], "target");
  const auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(targets[0].begin(), targets[0].end(), name) - targets[0].begin());
  };
  ASSERT_LT(column("p50_ms"), targets[0].size());
  ASSERT_LT(column("status"), targets[0].size());
  ASSERT_LT(column("rank"), targets[0].size());
  for (size_t i = 0; i < json_["targets"].size(); ++i) {
    const json& t = json_["targets"][i];
    const std::vector<std::string>& row = targets[i + 1];
    ASSERT_EQ(row.size(), targets[0].size());
    EXPECT_EQ(row[0], t["target"].get<std::string>());
    EXPECT_EQ(row[column("status")], t["status"].get<std::string>());
    if (t["status"] == "ok") {
      EXPECT_DOUBLE_EQ(std::stod(row[column("p50_ms")]), t["latency_ms"]["p50"].get<double>());
    } else {
      EXPECT_EQ(row[column("p50_ms")], "");  // not measured: empty, never 0
      EXPECT_NE(row[column("error")], "");
    }
  }
  if (json_.contains("recommendation")) {
    const json& ranked = json_["recommendation"]["ranked"];
    ASSERT_FALSE(ranked.empty());
    for (const auto& row : targets) {
      if (row[0] == ranked[0].get<std::string>()) {
        EXPECT_EQ(row[column("rank")], "1");
      }
    }
  }

  const CsvTable& rows = tables[1];
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
  const std::vector<CsvTable> tables = CsvTables(*csv);
  ASSERT_EQ(tables.size(), 2u);
  const CsvTable& rows = tables[1];
  ASSERT_EQ(rows.size(), LayerCount(j) + 1);
  EXPECT_EQ(rows[2][2], "conv,1 \"quoted\"\nnext line");  // RFC 4180 round trip
}

// A team reads a table's figures against one unit in its header: µs while every time of the table is
// under a millisecond, ms as soon as one is not; never a unit inside a cell.
TEST(ReportUnitsTest, EachTableStatesOneTimeUnitInItsHeader) {
  RunResult run = LoadRun("sample_run.json");
  std::vector<HtmlTable> tables = HtmlTables(Html(run));
  const HtmlTable* targets = FindTable(tables, QStringLiteral("Spread"));
  ASSERT_NE(targets, nullptr);
  // Every target of this run is under a millisecond (opencl:0:fp32's p99 is 0.744 ms).
  ASSERT_GE(targets->Column(QStringLiteral("p50 µs")), 0) << targets->header.join(u'|').toStdString();
  const int p50 = targets->Column(QStringLiteral("p50 "));
  const int p99 = targets->Column(QStringLiteral("p99 "));
  EXPECT_EQ(targets->header[p99], QStringLiteral("p99 µs"));
  EXPECT_EQ(targets->Row(QStringLiteral("cpu:int8"))[p50], QStringLiteral("14.6"));
  EXPECT_EQ(targets->Row(QStringLiteral("opencl:0:fp32"))[p99], QStringLiteral("744"));
  for (const HtmlTable& table : tables) {
    for (const QStringList& row : table.rows) {
      for (const QString& cell : row) {
        EXPECT_FALSE(cell.endsWith(QStringLiteral(" ms")) || cell.endsWith(QStringLiteral(" µs")))
            << cell.toStdString();
      }
    }
  }
  // Each layer table alone: cpu:fp32's layers are all in µs.
  const HtmlTable* fp32_layers = nullptr;
  const HtmlTable* opencl_layers = nullptr;
  for (const HtmlTable& t : tables) {
    if (t.summary.endsWith(QStringLiteral("cpu:fp32"))) fp32_layers = &t;
    if (t.summary.endsWith(QStringLiteral("opencl:0:fp32"))) opencl_layers = &t;
  }
  ASSERT_NE(fp32_layers, nullptr);
  ASSERT_NE(opencl_layers, nullptr);
  EXPECT_GE(fp32_layers->Column(QStringLiteral("p50 µs")), 0);
  EXPECT_GE(opencl_layers->Column(QStringLiteral("p90 µs")), 0);

  // One target at 2.5 ms at p99: that table goes to ms for every figure, the fast targets included;
  // one slow opencl layer moves its own layer table only.
  TargetResult& slow = EditTarget(run, 4);
  slow.latency.p99 = 2.5;
  slow.layers.at(1).time_p90_ms = 1.2;
  tables = HtmlTables(Html(run));
  targets = FindTable(tables, QStringLiteral("Spread"));
  ASSERT_NE(targets, nullptr);
  EXPECT_EQ(targets->header[p50], QStringLiteral("p50 ms"));
  EXPECT_EQ(targets->header[p99], QStringLiteral("p99 ms"));
  EXPECT_EQ(targets->Row(QStringLiteral("cpu:int8"))[p50], QStringLiteral("0.0146"));
  EXPECT_EQ(targets->Row(QStringLiteral("opencl:0:fp32"))[p99], QStringLiteral("2.50"));
  for (const HtmlTable& t : tables) {
    if (t.summary.endsWith(QStringLiteral("opencl:0:fp32"))) {
      EXPECT_GE(t.Column(QStringLiteral("p50 ms")), 0);
      EXPECT_EQ(t.Row(QStringLiteral("1"))[t.Column(QStringLiteral("p90 ms"))], QStringLiteral("1.20"));
    }
    if (t.summary.endsWith(QStringLiteral("cpu:fp32"))) {
      EXPECT_GE(t.Column(QStringLiteral("p50 µs")), 0);
    }
  }
}

TEST(ReportUnitsTest, OneEnergyUnitForTheWholeReport) {
  RunResult run = LoadRun("sample_run_recommended.json");
  std::vector<HtmlTable> tables = HtmlTables(Html(run));
  // Every inference here costs tens of µJ: µJ in the targets table and in the ranking.
  const HtmlTable* targets = FindTable(tables, QStringLiteral("Peak memory planned"));
  const HtmlTable* ranking = FindTable(tables, QStringLiteral("Score (1 = best)"));
  ASSERT_NE(targets, nullptr);
  ASSERT_NE(ranking, nullptr);
  const int energy = targets->Column(QStringLiteral("Energy / inference"));
  ASSERT_GE(energy, 0);
  EXPECT_EQ(targets->header[energy], QStringLiteral("Energy / inference µJ"));
  EXPECT_EQ(targets->Row(QStringLiteral("cpu:fp32"))[energy], QStringLiteral("27.8 (estimated)"));
  const int ranked = ranking->Column(QStringLiteral("Energy"));
  EXPECT_EQ(ranking->header[ranked], QStringLiteral("Energy µJ"));
  EXPECT_EQ(ranking->Row(QStringLiteral("1"))[ranked], QStringLiteral("20.9"));  // cpu:int8, 0.0209 mJ
  // The ranking's latencies are in the unit of that table (all under 1 ms: µs).
  EXPECT_GE(ranking->Column(QStringLiteral("p99 µs")), 0);

  // One target measured at 2 J: J everywhere, the µJ figures written in J.
  EditTarget(run, 0).energy = EnergyValue{2.0, "measured:rapl"};
  tables = HtmlTables(Html(run));
  targets = FindTable(tables, QStringLiteral("Peak memory planned"));
  ranking = FindTable(tables, QStringLiteral("Score (1 = best)"));
  EXPECT_EQ(targets->header[energy], QStringLiteral("Energy / inference J"));
  EXPECT_EQ(targets->Row(QStringLiteral("cpu:fp32"))[energy], QStringLiteral("2.00 (measured:rapl)"));
  EXPECT_EQ(targets->Row(QStringLiteral("cpu:int8"))[energy], QStringLiteral("0.0000209 (estimated)"));
  EXPECT_EQ(ranking->header[ranked], QStringLiteral("Energy J"));
  // The energy chart speaks the same unit.
  auto chart = charts::EnergyChart(run);
  auto* x = qobject_cast<QValueAxis*>(chart->axes(Qt::Horizontal).value(0));
  ASSERT_NE(x, nullptr);
  EXPECT_TRUE(x->titleText().contains(QStringLiteral("(J)"))) << x->titleText().toStdString();
}

// Charts first, then the layer tables, each folded closed in the page; the PDF, which cannot fold,
// still prints every layer.
TEST(ReportLayoutTest, LayerTablesComeLastFoldedInHtmlAndInFullInPdf) {
  const RunResult run = LoadRun("sample_run.json");
  const std::string html = Html(run);
  const ParsedHtml parsed = ParseXml(html);
  ASSERT_TRUE(parsed.ok) << parsed.error.toStdString();
  const qsizetype layers = parsed.text.indexOf(QStringLiteral("Bytes r+w"));
  EXPECT_LT(parsed.text.indexOf(QStringLiteral("Accuracy drift per layer")), layers);
  EXPECT_LT(parsed.text.indexOf(QStringLiteral("Machine and devices")), layers);
  int folded = 0;
  for (const HtmlTable& t : HtmlTables(html)) {
    const bool layer_table = t.Column(QStringLiteral("Bytes r+w")) >= 0;
    EXPECT_EQ(t.folded, layer_table) << t.header.join(u'|').toStdString();
    if (!layer_table) continue;
    ++folded;
    EXPECT_FALSE(t.open);
    EXPECT_TRUE(t.summary.startsWith(QStringLiteral("Show the "))) << t.summary.toStdString();
    EXPECT_TRUE(t.summary.contains(QStringLiteral(" layers of "))) << t.summary.toStdString();
  }
  EXPECT_EQ(folded, 4);  // the four targets that ran

  const auto pdf = RenderPdfReport(run);
  ASSERT_TRUE(pdf.ok()) << pdf.status().message();
  const QString pdftotext = QStandardPaths::findExecutable(QStringLiteral("pdftotext"));
  if (pdftotext.isEmpty()) GTEST_SKIP() << "pdftotext not found (Debian package poppler-utils)";
  QTemporaryDir dir;
  const QString file = dir.filePath(QStringLiteral("report.pdf"));
  std::ofstream(file.toStdString(), std::ios::binary) << *pdf;
  QProcess p;
  p.start(pdftotext, {QStringLiteral("-layout"), file, QStringLiteral("-")});
  ASSERT_TRUE(p.waitForFinished(60000));
  const QString text = QString::fromUtf8(p.readAllStandardOutput());
  // Every layer table, in full: one GlobalAveragePool row per target (the charts are images, no text).
  EXPECT_EQ(text.count(QStringLiteral("GlobalAveragePool")), 4) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("conv1/reorder:input")));
  // Each layer table's header, repeated on the next page when a table crosses a page break (a one-word
  // header, which no column width wraps).
  static const QRegularExpression kPrecision(QStringLiteral("\\bPrecision\\b"));
  EXPECT_GE(text.count(kPrecision), 4);
  // Each target's slowest layer named above its table, as the GUI names it: the fused conv1 on all four.
  EXPECT_EQ(text.count(QStringLiteral("Slowest layer: FusedConv conv1")), 4) << text.toStdString();
  EXPECT_LT(text.indexOf(QStringLiteral("Machine and devices")), text.indexOf(QStringLiteral("Bytes r+w")));
  EXPECT_FALSE(text.contains(QStringLiteral("Show the ")));  // nothing folded on paper
}

// "CoV 270. %" read like a typo and hid that the noisy flag no longer comes from the CoV: percentages
// print plainly, and the targets table shows the robust spread, outliers and a busy machine.
TEST(ReportLatencyTest, SpreadOutliersAndBusyMachineInTheTargetsTable) {
  RunResult run = LoadRun("sample_run.json");
  LatencyStats& noisy = EditTarget(run, 1).latency;  // cpu:int8, p50 0.014562 ms
  noisy.cov = 2.7;
  noisy.noisy = true;
  noisy.p90 = noisy.p50 * 1.092;
  noisy.mad = noisy.p50 * 0.011;
  noisy.outliers = 3;
  noisy.iterations = 6346;
  noisy.other_cpu_share = 0.34;
  noisy.machine_busy = true;
  LatencyStats& steady = EditTarget(run, 0).latency;  // cpu:fp32
  steady.cov = 0.027;
  steady.noisy = false;
  steady.p90 = steady.p50 * 1.02;
  steady.mad = steady.p50 * 0.004;
  steady.outliers = 0;
  steady.other_cpu_share = 0.021;
  steady.machine_busy = false;

  const std::string html = Html(run);
  const std::vector<HtmlTable> tables = HtmlTables(html);
  const HtmlTable* targets = FindTable(tables, QStringLiteral("Spread"));
  ASSERT_NE(targets, nullptr);
  const int cov = targets->Column(QStringLiteral("CoV"));
  const int spread = targets->Column(QStringLiteral("Spread"));
  const int outliers = targets->Column(QStringLiteral("Outliers"));
  const int busy = targets->Column(QStringLiteral("Machine busy"));
  ASSERT_TRUE(cov >= 0 && spread >= 0 && outliers >= 0 && busy >= 0) << targets->header.join(u'|').toStdString();
  const QStringList int8 = targets->Row(QStringLiteral("cpu:int8"));
  const QStringList fp32 = targets->Row(QStringLiteral("cpu:fp32"));
  EXPECT_EQ(int8[cov], QStringLiteral("270 %"));
  EXPECT_EQ(fp32[cov], QStringLiteral("2.70 %"));
  EXPECT_EQ(int8[spread], QStringLiteral("9.2 % / 1.1 % noisy"));
  EXPECT_EQ(fp32[spread], QStringLiteral("2.0 % / 0.40 %"));
  EXPECT_EQ(int8[outliers], QStringLiteral("3 of 6346"));
  EXPECT_EQ(fp32[outliers], QStringLiteral("0 of ") + QString::number(steady.iterations));
  EXPECT_EQ(int8[busy], QStringLiteral("yes (34 %)"));
  EXPECT_EQ(fp32[busy], QStringLiteral("no (2.1 %)"));
  // A run recorded before the robust spread (cpu:bf16 from the fixture) shows no invented zeros.
  EXPECT_EQ(targets->Row(QStringLiteral("cpu:bf16"))[outliers], QStringLiteral("–"));
  EXPECT_TRUE(targets->Row(QStringLiteral("cpu:bf16"))[spread].contains(QStringLiteral("/ –")))
      << targets->Row(QStringLiteral("cpu:bf16"))[spread].toStdString();

  // No number anywhere in a table ends in a bare point ("270. %").
  static const QRegularExpression bare_point(QStringLiteral(R"re(\d\.(?!\d))re"));
  for (const HtmlTable& t : tables) {
    for (const QStringList& row : t.rows) {
      for (const QString& cell : row) EXPECT_FALSE(bare_point.match(cell).hasMatch()) << cell.toStdString();
    }
  }
  // Nor in the notes: this fixture's cpu:int8 was recorded with the note "CoV 376. %".
  const ParsedHtml parsed = ParseXml(html);
  static const QRegularExpression bare_percent(QStringLiteral(R"re(\d\. ?%)re"));
  EXPECT_FALSE(bare_percent.match(parsed.text).hasMatch()) << bare_percent.match(parsed.text).captured(0).toStdString();
  EXPECT_TRUE(parsed.text.contains(QStringLiteral("CoV 376 %")));
  // The footnote says what decides `noisy` now.
  EXPECT_TRUE(parsed.text.contains(QStringLiteral("(p90 − p50)/p50 over 5 % or MAD/p50 over 3 %")));
  EXPECT_TRUE(parsed.text.contains(QStringLiteral("p50 + 10·MAD")));
  EXPECT_FALSE(parsed.text.contains(QStringLiteral("noisy when over 5 %")));
}

// A busy machine in the report: per target its clean and dropped rounds, "unreliable" with the reason
// in the warning tone, where the end-to-end time goes; the thread choice with the settings; the
// ceilings' thread count and busy flag where the ceilings are listed.
TEST(ReportLatencyTest, RoundsUnreliableTargetsAttributionThreadsAndBusyCeilings) {
  RunResult run = LoadRun("sample_run.json");
  TargetResult& fp32 = EditTarget(run, 0);
  for (int i = 0; i < 10; ++i) {
    TimingRound r{.round = i + 1, .runs = 20, .median_ms = fp32.latency.p50, .threads = 1};
    r.clean = i < 3;
    r.other_cpu_share = r.clean ? 0.03 : 0.7;
    if (!r.clean) r.dropped = "other processes used 1.4 of 2 CPUs";
    fp32.rounds.push_back(r);
  }
  fp32.unreliable = true;
  fp32.unreliable_reason = "only 3 of 10 timing rounds were clean within the 25 s budget";
  fp32.attribution = TimeAttribution{.end_to_end_ms = 52.7,
                                     .attributed_ms = 7.4,
                                     .between_ms = 0.5,
                                     .unexplained_ms = 44.8,
                                     .explanation = "Σ layers is 0.14× end to end: the end-to-end runs were slowed"};
  TargetResult& int8 = EditTarget(run, 1);
  for (int i = 0; i < 10; ++i) int8.rounds.push_back(TimingRound{.round = i + 1, .runs = 20, .median_ms = 0.01});
  run.settings.threads = 1;
  run.settings.cores = 2;
  run.settings.other_cpus_before = 0.9;
  run.settings.threads_reason = "2 cores, ~1 busy with other work: 1 thread";
  ASSERT_FALSE(run.ceilings.empty());
  run.ceilings[0].threads = 2;
  run.ceilings[0].other_cpu_share = 0.45;

  const std::string html = Html(run);
  const std::vector<HtmlTable> tables = HtmlTables(html);
  const HtmlTable* targets = FindTable(tables, QStringLiteral("Spread"));
  ASSERT_NE(targets, nullptr);
  const int status = targets->Column(QStringLiteral("Status"));
  const int rounds = targets->Column(QStringLiteral("Timing rounds"));
  ASSERT_TRUE(status >= 0 && rounds >= 0) << targets->header.join(u'|').toStdString();
  EXPECT_EQ(targets->Row(QStringLiteral("cpu:fp32"))[status], QStringLiteral("ok, unreliable"));
  EXPECT_EQ(targets->Row(QStringLiteral("cpu:fp32"))[rounds], QStringLiteral("3 clean / 7 dropped"));
  EXPECT_EQ(targets->Row(QStringLiteral("cpu:int8"))[rounds], QStringLiteral("10 clean / 0 dropped"));
  EXPECT_EQ(targets->Row(QStringLiteral("cpu:bf16"))[rounds], QStringLiteral("–"));  // recorded before rounds

  const HtmlTable* timing = FindTable(tables, QStringLiteral("Where the end-to-end time goes"));
  ASSERT_NE(timing, nullptr);
  const QStringList fp32_timing = timing->Row(QStringLiteral("cpu:fp32"));
  EXPECT_EQ(fp32_timing[timing->Column(QStringLiteral("Latency"))],
            QStringLiteral("unreliable: only 3 of 10 timing rounds were clean within the 25 s budget"));
  EXPECT_EQ(fp32_timing[timing->Column(QStringLiteral("Where the end-to-end time goes"))],
            QStringLiteral("Σ layers 7.40 ms · between kernels 500 µs · unexplained 44.8 ms of 52.7 ms end to end"));
  EXPECT_EQ(timing->Row(QStringLiteral("cpu:int8"))[timing->Column(QStringLiteral("Latency"))],
            QStringLiteral("every round clean"));
  // The warning tone on the verdict, and the explanation after the table in it too.
  EXPECT_NE(html.find("class=\"warn\">unreliable: only 3 of 10"), std::string::npos);
  const ParsedHtml parsed = ParseXml(html);
  EXPECT_TRUE(parsed.text.contains(QStringLiteral("Σ layers is 0.14× end to end: the end-to-end runs were slowed")));

  EXPECT_TRUE(parsed.text.contains(QStringLiteral(
      "2 cores, ~1 busy with other work: 1 thread (other processes kept 0.90 of 2 CPUs busy just before timing)")))
      << parsed.text.toStdString();
  EXPECT_TRUE(parsed.text.contains(
      QStringLiteral("; 2 threads; measured while busy (other processes used 45 % of the CPUs): low")))
      << parsed.text.toStdString();
  // The roofline drawn against those ceilings says so in its title.
  const auto roofline = charts::RooflineChart(run, "cpu");
  ASSERT_NE(roofline, nullptr);
  EXPECT_TRUE(roofline->title().endsWith(QStringLiteral(" — ceilings measured while busy (low)")))
      << roofline->title().toStdString();
}

// A throughput point as `profile --batch … --streams N` records it: the latency of one request (a batch).
ThroughputPoint Point(int batch, int streams, int threads, double p50, double p90, double per_s) {
  ThroughputPoint p;
  p.batch = batch;
  p.streams = streams;
  p.threads_per_stream = threads;
  p.latency.p50 = p50;
  p.latency.p90 = p90;
  p.latency.iterations = 100;
  p.inferences_per_s = per_s;
  p.requests = 100;
  p.duration_s = 1.0;
  return p;
}

// sample_run.json in throughput mode: cpu:fp32 at batch 1 and 4 on one and two streams, batch 16 out
// of memory; cpu:int8 at batch 4 on two streams.
RunResult ThroughputRun() {
  RunResult run = LoadRun("sample_run.json");
  TargetResult& fp32 = EditTarget(run, 0);
  EXPECT_EQ(fp32.target.ToString(), "cpu:fp32");
  fp32.throughput = {Point(1, 1, 8, 0.5, 0.6, 2000), Point(4, 1, 8, 1.6, 1.8, 2500), Point(4, 2, 4, 2.4, 3.0, 3333.3)};
  ThroughputPoint failed = Point(16, 1, 0, 0, 0, 0);
  failed.status = "failed";
  failed.error = "out of memory at batch 16";
  fp32.throughput.push_back(failed);
  TargetResult& int8 = EditTarget(run, 1);
  EXPECT_EQ(int8.target.ToString(), "cpu:int8");
  int8.throughput = {Point(4, 2, 4, 0.8, 0.9, 10000)};
  return run;
}

// Throughput mode adds a Throughput section after the targets, one row per target × point, with a
// link in the page's navigation; the PDF, from the same document, prints it too.
TEST(ReportThroughputTest, ThroughputTableInHtml) {
  const RunResult run = ThroughputRun();
  const std::string html = Html(run);
  const ParsedHtml parsed = ParseXml(html);
  ASSERT_TRUE(parsed.ok) << parsed.error.toStdString();
  // After the targets table, before the charts.
  const size_t section = html.find("<h2 id=\"throughput\">Throughput</h2>");
  ASSERT_NE(section, std::string::npos);
  EXPECT_LT(html.find("<h2 id=\"targets\">"), section);
  EXPECT_LT(section, html.find("<h2 id=\"charts\">"));
  EXPECT_NE(html.find("<a href=\"#targets\">Targets</a><a href=\"#throughput\">Throughput</a>"), std::string::npos);

  const std::vector<HtmlTable> tables = HtmlTables(html);
  const HtmlTable* table = FindTable(tables, QStringLiteral("Threads / stream"));
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->header, (QStringList{QStringLiteral("Target"), QStringLiteral("Batch"), QStringLiteral("Streams"),
                                        QStringLiteral("Threads / stream"), QStringLiteral("p50 ms / request"),
                                        QStringLiteral("p90 ms / request"), QStringLiteral("Inferences / s"),
                                        QStringLiteral("ms / inference (1000 / inferences/s)")}));
  ASSERT_EQ(table->rows.size(), 5u);
  EXPECT_EQ(table->rows[0], (QStringList{QStringLiteral("cpu:fp32"), QStringLiteral("1"), QStringLiteral("1"),
                                         QStringLiteral("8"), QStringLiteral("0.500"), QStringLiteral("0.600"),
                                         QStringLiteral("2000"), QStringLiteral("0.500")}));
  EXPECT_EQ(table->rows[2], (QStringList{QStringLiteral("cpu:fp32"), QStringLiteral("4"), QStringLiteral("2"),
                                         QStringLiteral("4"), QStringLiteral("2.40"), QStringLiteral("3.00"),
                                         QStringLiteral("3333"), QStringLiteral("0.300")}));
  // The point that did not run says why across the measurements; no threads were recorded for it.
  ASSERT_EQ(table->rows[3].size(), 5);
  EXPECT_EQ(table->rows[3][1], QStringLiteral("16"));
  EXPECT_EQ(table->rows[3][3], QStringLiteral("–"));
  EXPECT_EQ(table->rows[3][4], QStringLiteral("failed: out of memory at batch 16"));
  EXPECT_EQ(table->rows[4][0], QStringLiteral("cpu:int8"));
  EXPECT_EQ(table->rows[4][6], QStringLiteral("10000"));
  // Time per inference is 1000 / inferences/s, as the terminal prints it: with two streams of a batch of 4
  // at 10000 inferences/s, 0.1 ms (p50 / batch, 0.2 ms, is one stream's latency share, not the cost).
  EXPECT_EQ(table->rows[4][7], QStringLiteral("0.100"));

  const auto pdf = RenderPdfReport(run);
  ASSERT_TRUE(pdf.ok()) << pdf.status().message();
  const QString pdftotext = QStandardPaths::findExecutable(QStringLiteral("pdftotext"));
  if (pdftotext.isEmpty()) GTEST_SKIP() << "pdftotext not found (Debian package poppler-utils)";
  QTemporaryDir dir;
  const QString file = dir.filePath(QStringLiteral("report.pdf"));
  std::ofstream(file.toStdString(), std::ios::binary) << *pdf;
  QProcess p;
  p.start(pdftotext, {QStringLiteral("-layout"), file, QStringLiteral("-")});
  ASSERT_TRUE(p.waitForFinished(60000));
  const QString text = QString::fromUtf8(p.readAllStandardOutput());
  EXPECT_TRUE(text.contains(QStringLiteral("Threads / stream")));
  EXPECT_TRUE(text.contains(QStringLiteral("out of memory at batch 16")));
}

// The CSV's targets and layer tables, then the throughput table after an empty line; ms per inference is
// 1000 / inferences/s there too.
TEST(ReportThroughputTest, ThroughputTableInCsv) {
  const RunResult run = ThroughputRun();
  const auto csv = RenderCsvReport(run);
  ASSERT_TRUE(csv.ok()) << csv.status().message();
  const std::vector<CsvTable> tables = CsvTables(*csv);
  ASSERT_EQ(tables.size(), 3u);
  size_t layers = 0;
  for (const auto& t : run.targets) layers += t->layers.size();
  ASSERT_EQ(tables[1].size(), layers + 1);
  for (const auto& row : tables[1]) EXPECT_EQ(row.size(), 19u);
  const CsvTable& rows = tables[2];
  ASSERT_EQ(rows.size(), 1u + 5);  // header, 5 points
  EXPECT_EQ(rows[0], (std::vector<std::string>{"target", "batch", "streams", "threads_per_stream", "p50_ms_per_request",
                                               "p90_ms_per_request", "inferences_per_s", "ms_per_inference", "status",
                                               "error"}));
  const std::vector<std::vector<std::string>> points(rows.begin() + 1, rows.end());
  EXPECT_EQ(points[2], (std::vector<std::string>{"cpu:fp32", "4", "2", "4", "2.4", "3", "3333.3", "0.3000030000300003",
                                                 "ok", ""}));
  EXPECT_EQ(points[3], (std::vector<std::string>{"cpu:fp32", "16", "1", "", "", "", "", "", "failed",
                                                 "out of memory at batch 16"}));
  EXPECT_EQ(points[4], (std::vector<std::string>{"cpu:int8", "4", "2", "4", "0.8", "0.9", "10000", "0.1", "ok", ""}));
  // The targets table: each target's best point, in the same definition.
  const CsvTable& targets = tables[0];
  const auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(targets[0].begin(), targets[0].end(), name) - targets[0].begin());
  };
  ASSERT_LT(column("ms_per_inference"), targets[0].size());
  EXPECT_EQ(targets[2][0], "cpu:int8");
  EXPECT_EQ(targets[2][column("inferences_per_s")], "10000");
  EXPECT_EQ(targets[2][column("ms_per_inference")], "0.1");
  EXPECT_EQ(targets[3][column("ms_per_inference")], "");  // cpu:bf16: no throughput points
}

// A run without throughput points (every run not made in throughput mode) has no such section, no link
// to it, and the CSV is the layer table alone.
TEST(ReportThroughputTest, NoThroughputSectionWithoutPoints) {
  const RunResult run = LoadRun("sample_run.json");
  const std::string html = Html(run);
  EXPECT_EQ(html.find("throughput"), std::string::npos);
  EXPECT_EQ(html.find("Throughput"), std::string::npos);
  EXPECT_EQ(FindTable(HtmlTables(html), QStringLiteral("Threads / stream")), nullptr);
  const auto csv = RenderCsvReport(run);
  ASSERT_TRUE(csv.ok());
  const std::vector<CsvTable> tables = CsvTables(*csv);
  ASSERT_EQ(tables.size(), 2u);  // targets and layers only
  EXPECT_EQ(csv->find("threads_per_stream"), std::string::npos);
  for (const auto& row : tables[1]) EXPECT_EQ(row.size(), 19u);
}

// Ceilings measured for a device no target of this run used (cached by `chipfit devices --measure`)
// are still the machine's: the devices table and a roofline show them.
TEST(ReportCeilingsTest, MeasuredCeilingsOfADeviceWithoutTargetsAreShown) {
  RunResult run = LoadRun("sample_run.json");
  run.targets.erase(run.targets.begin() + 4);  // no opencl:0 target any more
  EXPECT_EQ(charts::RooflineDevices(run), (std::vector<std::string>{"cpu", "opencl:0"}));
  auto roofline = charts::RooflineChart(run, "opencl:0");
  EXPECT_TRUE(roofline->title().contains(QStringLiteral("measured ceilings, no target ran here")))
      << roofline->title().toStdString();
  // One roof per measured precision (fp16, fp32): peak labels and lines, no layer points.
  int roofs = 0;
  for (QAbstractSeries* series : roofline->series()) roofs += series->type() == QAbstractSeries::SeriesTypeLine;
  EXPECT_EQ(roofs, 2);
  EXPECT_EQ(roofline->series().size(), 2);

  std::string html = Html(run);
  std::vector<HtmlTable> tables = HtmlTables(html);
  const HtmlTable* devices = FindTable(tables, QStringLiteral("Roofline ceilings"));
  ASSERT_NE(devices, nullptr);
  const int ceilings = devices->Column(QStringLiteral("Roofline ceilings"));
  EXPECT_TRUE(devices->Row(QStringLiteral("opencl:0"))[ceilings].startsWith(
      QStringLiteral("measured: fp16 7.68 GFLOP/s, fp32 8.65 GFLOP/s, 34.1 GB/s")))
      << devices->Row(QStringLiteral("opencl:0"))[ceilings].toStdString();
  EXPECT_TRUE(html.find("id=\"chart-roofline-opencl-0\"") != std::string::npos);

  // Even when discovery did not list the device (a run read from a JSON without its machine).
  run.machine.devices.erase(run.machine.devices.begin() + 1);
  tables = HtmlTables(Html(run));
  devices = FindTable(tables, QStringLiteral("Roofline ceilings"));
  ASSERT_NE(devices, nullptr);
  const QStringList row = devices->Row(QStringLiteral("opencl:0"));
  ASSERT_FALSE(row.isEmpty());
  EXPECT_TRUE(row[ceilings].startsWith(QStringLiteral("measured: "))) << row[ceilings].toStdString();
}

// The drift chart's series and the x of each ONNX node, read back as a reader reads the chart.
struct DriftPoints {
  std::map<QString, double> x;                // axis label → x
  std::map<QString, QList<QPointF>> markers;  // target → its markers
  std::vector<QList<QPointF>> lines;          // every line but the threshold
};

DriftPoints ReadDrift(QChart& chart) {
  DriftPoints out;
  auto* x = qobject_cast<QCategoryAxis*>(chart.axes(Qt::Horizontal).value(0));
  EXPECT_NE(x, nullptr);
  if (x != nullptr) {
    for (const QString& label : x->categoriesLabels()) out.x[label] = x->endValue(label);
  }
  for (QAbstractSeries* series : chart.series()) {
    auto* xy = qobject_cast<QXYSeries*>(series);
    if (xy == nullptr || xy->name().contains(QStringLiteral("threshold"))) continue;
    if (series->type() == QAbstractSeries::SeriesTypeScatter) {
      out.markers[xy->name()] = xy->points();
    } else {
      out.lines.push_back(xy->points());
    }
  }
  return out;
}

std::optional<double> At(const QList<QPointF>& points, double x) {
  for (const QPointF& p : points) {
    if (p.x() == x) return p.y();
  }
  return std::nullopt;
}

// cpu:fp32 runs a reorder before conv1 and int8 does not, so their conv1 layers have different indices;
// the chart matches them by ONNX node.
TEST(RunChartsTest, DriftChartMatchesLayersAcrossTargetsByOnnxNode) {
  RunResult run = LoadRun("sample_run.json");
  auto chart = charts::DriftChart(run);
  DriftPoints d = ReadDrift(*chart);
  ASSERT_TRUE(d.x.count(QStringLiteral("relu1"))) << "a fused Conv+BN+Relu sits at its last node";
  const double relu1 = d.x[QStringLiteral("relu1")];
  const double softmax = d.x[QStringLiteral("softmax")];
  EXPECT_NEAR(*At(d.markers[QStringLiteral("cpu:fp32")], relu1), 140.12, 0.01);
  EXPECT_NEAR(*At(d.markers[QStringLiteral("cpu:int8")], relu1), 45.70, 0.01);
  EXPECT_NEAR(*At(d.markers[QStringLiteral("opencl:0:fp32")], relu1), 139.98, 0.01);
  EXPECT_NEAR(*At(d.markers[QStringLiteral("cpu:fp32")], softmax), 130.23, 0.01);
  EXPECT_NEAR(*At(d.markers[QStringLiteral("cpu:int8")], softmax), 59.28, 0.01);
  EXPECT_EQ(d.x.size(), 7u);  // relu1 pool1 relu2 gap flatten fc softmax

  // opencl:0 no longer fuses conv2 with its BatchNorm and Relu: two layers where the others have one.
  TargetResult& opencl = EditTarget(run, 4);
  LayerResult conv2 = opencl.layers.at(3);
  ASSERT_EQ(conv2.name, "conv2");
  LayerResult bn_relu2 = conv2;
  conv2.op = "Conv";
  conv2.onnx_nodes = {"conv2"};
  conv2.drift->sqnr_db = 99.0;
  bn_relu2.name = "bn2";
  bn_relu2.op = "FusedBatchNorm";
  bn_relu2.onnx_nodes = {"bn2", "relu2"};
  bn_relu2.drift->sqnr_db = 98.0;
  opencl.layers.at(3) = conv2;
  opencl.layers.insert(opencl.layers.begin() + 4, bn_relu2);
  chart = charts::DriftChart(run);
  d = ReadDrift(*chart);
  ASSERT_TRUE(d.x.count(QStringLiteral("conv2")));
  const double at_conv2 = d.x[QStringLiteral("conv2")];
  const double at_relu2 = d.x[QStringLiteral("relu2")];
  EXPECT_LT(d.x[QStringLiteral("pool1")], at_conv2);
  EXPECT_LT(at_conv2, at_relu2);
  EXPECT_EQ(*At(d.markers[QStringLiteral("opencl:0:fp32")], at_conv2), 99.0);
  EXPECT_EQ(*At(d.markers[QStringLiteral("opencl:0:fp32")], at_relu2), 98.0);
  // The other targets have no value at conv2: a gap, not their next layer's value moved left.
  EXPECT_FALSE(At(d.markers[QStringLiteral("cpu:fp32")], at_conv2).has_value());
  EXPECT_NEAR(*At(d.markers[QStringLiteral("cpu:fp32")], at_relu2), 137.06, 0.01);
  EXPECT_EQ(d.x[QStringLiteral("softmax")], softmax + 1);  // one node more before it
  EXPECT_NEAR(*At(d.markers[QStringLiteral("cpu:int8")], d.x[QStringLiteral("softmax")]), 59.28, 0.01);
  // No line bridges a gap: every line joins neighbouring nodes only.
  for (const auto& line : d.lines) {
    for (qsizetype i = 1; i < line.size(); ++i) EXPECT_EQ(line[i].x() - line[i - 1].x(), 1.0);
  }
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

// ---- Reports on paper, in a 1400 px window, and the command line that repeats the run ----

// A run shaped like PP-OCR cls on four targets: 77 layers each, many of them fused convolutions covering
// six ONNX nodes, as `chipfit profile` names them.
RunResult ClsLikeRun() {
  RunResult run = LoadRun("sample_run.json");
  run.targets.erase(run.targets.begin() + 3);  // cpu:fp16, which did not run
  for (size_t i = 0; i < run.targets.size(); ++i) {
    TargetResult& t = EditTarget(run, i);
    const std::vector<LayerResult> base = t.layers;
    t.layers.clear();
    for (int n = 0; n < 77; ++n) {
      LayerResult layer = base[static_cast<size_t>(n) % base.size()];
      const std::string id = std::to_string(n);
      layer.name = "p2o.Conv." + id;
      layer.onnx_nodes = {layer.name};
      if (n % 3 == 0) {
        for (const char* op : {"BatchNormalization", "Add", "Clip", "Mul", "Div"})
          layer.onnx_nodes.push_back(std::string("p2o.") + op + "." + id);
      }
      t.layers.push_back(std::move(layer));
    }
  }
  return run;
}

std::string WriteTemp(const QTemporaryDir& dir, const char* name, const std::string& bytes) {
  const std::string path = dir.filePath(QString::fromLatin1(name)).toStdString();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

int PdfPageCount(const std::string& pdf) {
  int pages = 0;
  for (size_t at = pdf.find("/Type /Page\n"); at != std::string::npos; at = pdf.find("/Type /Page\n", at + 1)) ++pages;
  return pages;
}

// On paper: a target name is never broken over two lines ("cpu:fp3" / "2" in a cramped column), no page
// but the last is left mostly empty (forced page breaks left pages three-quarters blank), and the page
// count follows the content: a four-target run of a 77-layer model fits in a handful of pages.
TEST(ReportPaperTest, TargetNamesWholeAndPagesFull) {
  const RunResult run = ClsLikeRun();
  const auto pdf = RenderPdfReport(run);
  ASSERT_TRUE(pdf.ok()) << pdf.status().message();
  const int pages = PdfPageCount(*pdf);
  // 4 × 77 layer rows at about 30 a page (a third of them two lines high) are eleven pages; the rest,
  // four. Before, a layer row took up to five lines and each section began a page: 26 pages for cls.
  EXPECT_GE(pages, 4);
  EXPECT_LE(pages, 16);

  QTemporaryDir dir;
  const std::string file = WriteTemp(dir, "report.pdf", *pdf);
  KeepArtefact(file, "cls_like_run");
  const QString pdftotext = QStandardPaths::findExecutable(QStringLiteral("pdftotext"));
  const QString pdftoppm = QStandardPaths::findExecutable(QStringLiteral("pdftoppm"));
  if (pdftotext.isEmpty() || pdftoppm.isEmpty()) GTEST_SKIP() << "poppler-utils not found: PDF text not read";
  QProcess p;
  // -raw: the text in the order it was drawn, so a name broken over two lines reads "cpu:fp3\n2".
  p.start(pdftotext, {QStringLiteral("-raw"), QString::fromStdString(file), QStringLiteral("-")});
  ASSERT_TRUE(p.waitForFinished(60000));
  const QString text = QString::fromUtf8(p.readAllStandardOutput());
  for (const auto& t : run.targets) {
    const QString name = QString::fromStdString(t->target.ToString());
    EXPECT_TRUE(text.contains(name)) << name.toStdString();
    for (qsizetype k = 1; k < name.size(); ++k) {
      static const QRegularExpression kBreak(QStringLiteral("\\s*\\n\\s*"));
      const QString broken = QRegularExpression::escape(name.left(k)) + kBreak.pattern() +
                             QRegularExpression::escape(name.mid(k)) + QStringLiteral("(?![\\w:])");
      EXPECT_FALSE(QRegularExpression(broken).match(text).hasMatch())
          << name.toStdString() << " broken after " << k << " characters";
    }
  }

  // How far down each page the content reaches (30 dpi: A4 landscape is 351 × 248 px; 2 cm margins).
  p.start(pdftoppm, {QStringLiteral("-r"), QStringLiteral("30"), QStringLiteral("-gray"), QStringLiteral("-png"),
                     QString::fromStdString(file), dir.filePath(QStringLiteral("page"))});
  ASSERT_TRUE(p.waitForFinished(60000));
  const QStringList images = QDir(dir.path()).entryList({QStringLiteral("page-*.png")}, QDir::Files, QDir::Name);
  ASSERT_EQ(images.size(), pages);
  for (qsizetype i = 0; i + 1 < images.size(); ++i) {
    const QImage page = QImage(QDir(dir.path()).filePath(images[i])).convertToFormat(QImage::Format_Grayscale8);
    const int margin = 24, bottom = page.height() - margin - 6;  // above the page number
    int last = margin;
    for (int y = margin; y < bottom; ++y) {
      const uchar* line = page.constScanLine(y);
      for (int x = 0; x < page.width(); ++x) {
        if (line[x] < 200) last = y;
      }
    }
    const double fill = double(last - margin) / (bottom - margin);
    EXPECT_GE(fill, 0.6) << "page " << i + 1 << " of " << pages << " is only " << fill * 100 << " % full";
  }
}

// No table has two columns of the same name: the ranking named both its latency columns "p50 ms" when
// the limit bounded the median.
TEST(ReportTablesTest, NoTableRepeatsAColumnHeader) {
  std::vector<RunResult> runs = {LoadRun("sample_run.json"), LoadRun("sample_run_recommended.json"), ThroughputRun()};
  RunResult median = LoadRun("sample_run_recommended.json");
  median.recommendation["limits"]["latency_stat"] = "p50";
  runs.push_back(median);
  for (const RunResult& run : runs) {
    const report::Document doc = report::BuildDocument(run);
    for (const report::Block& b : doc.blocks) {
      if (b.kind != report::Block::Kind::kTable) continue;
      std::set<std::string> seen;
      for (const std::string& h : b.table.header) EXPECT_TRUE(seen.insert(h).second) << "two columns named " << h;
    }
  }
  const std::vector<HtmlTable> tables = HtmlTables(Html(median));
  const HtmlTable* ranking = FindTable(tables, QStringLiteral("Score (1 = best)"));
  ASSERT_NE(ranking, nullptr);
  EXPECT_EQ(ranking->header.count(QStringLiteral("p50 µs")), 1) << ranking->header.join(u'|').toStdString();
}

// Every table of the HTML page, laid out by Qt's own HTML engine at the page's width in a 1400 px window
// (the body's padding taken off), fits: the 17-column targets table did not.
TEST(ReportHtmlTest, EveryTableFitsA1400PxWindow) {
  for (const RunResult& run : {LoadRun("sample_run_recommended.json"), ClsLikeRun(), ThroughputRun()}) {
    QTextDocument page;
    page.setHtml(QString::fromStdString(Html(run)));
    const qreal width = 1400 - 2 * 24;
    page.setTextWidth(width);
    int tables = 0;
    for (QTextFrame* frame : page.rootFrame()->childFrames()) {
      auto* table = qobject_cast<QTextTable*>(frame);
      if (table == nullptr) continue;
      ++tables;
      const QString first = table->cellAt(0, 0).firstCursorPosition().block().text();
      EXPECT_LE(page.documentLayout()->frameBoundingRect(table).width(), width)
          << "table " << tables << " (" << table->columns() << " columns, first cell '" << first.toStdString()
          << "') is wider than the window";
    }
    EXPECT_GE(tables, 6);
  }
}

// Splits a command line as a POSIX shell does (the real one: quoting is what is under test).
std::vector<std::string> ShellWords(const std::string& line) {
  QProcess sh;
  sh.start(QStringLiteral("/bin/sh"),
           {QStringLiteral("-c"), QStringLiteral("printf '%s\\0' ") + QString::fromStdString(line)});
  EXPECT_TRUE(sh.waitForFinished(10000));
  const QByteArray out = sh.readAllStandardOutput();
  std::vector<std::string> words;
  for (const QByteArray& w : out.split('\0')) words.push_back(w.toStdString());
  if (!words.empty() && words.back().empty()) words.pop_back();
  return words;
}

// A GUI run with every recorded setting away from its default, a path with spaces, and the limits the
// Recommend page gave: the report's Command line, pasted into a shell, is `chipfit profile` with the
// run's model, shapes, targets and settings, and the limits and objective of the report's recommendation.
TEST(ReportCommandTest, CommandLineParsesBackToTheRunsSettings) {
  RunResult run = LoadRun("sample_run_recommended.json");
  run.command = "chipfit-gui /models/my cls.onnx";
  run.source = "gui";
  run.model.path = "/models/my cls.onnx";
  run.inputs = {.source = "data /data/cls set", .samples = 8, .shapes = {{"x", "1x3x48x192"}, {"mask", "1x48"}}};
  run.inputs.kind = "images";
  run.inputs.preprocess = "resize=48x192,channels=bgr,scale=0.00392157,mean=0.5/0.5/0.5,std=0.5/0.5/0.5";
  run.settings = {.warmup = 5,
                  .iterations = 80,
                  .min_time_s = 0.25,
                  .reference = "cpu:fp32",
                  .targets = "cpu:fp32,cpu:int8,opencl:0:fp32",
                  .threads = 3,
                  .threads_reason = "--threads 3",
                  .cores = 4,
                  .max_time_s = 12.5,
                  .calibration = "entropy",
                  .int8_all_layers = true,
                  .keep_fp32 = {"conv1", "bn 2"}};
  TargetResult& fp32 = EditTarget(run, 0);
  fp32.throughput = {Point(1, 1, 3, 0.5, 0.6, 2000), Point(1, 2, 1, 0.9, 1, 2200), Point(8, 1, 3, 2, 2.2, 4000),
                     Point(8, 2, 1, 4, 4.4, 3900)};
  run.recommendation["limits"]["latency_stat"] = "p90";
  run.recommendation["ranked_by"] = "p90 latency";
  run.recommendation["limits"]["accuracy_guard"] = false;
  run.recommendation["limits"]["max_memory_mb"] = 512;
  run.recommendation["objective"] = "energy";
  run.recommendation["cost_table"] = "/etc/chipfit/my costs.yaml";

  const std::string line = report::ProfileCommandLine(run);
  const std::vector<std::string> argv = ShellWords(line);
  ASSERT_EQ(argv, report::ProfileCommandArgs(run)) << line;
  ASSERT_GE(argv.size(), 3u);
  EXPECT_EQ(argv[0], "chipfit");
  EXPECT_EQ(argv[1], "profile");
  EXPECT_EQ(argv[2], "/models/my cls.onnx");
  std::map<std::string, std::vector<std::string>> flags;
  const std::set<std::string> switches = {"--all-targets", "--int8-all-layers", "--no-accuracy-guard",
                                          "--rank-unreliable"};
  for (size_t i = 3; i < argv.size(); ++i) {
    ASSERT_EQ(argv[i].rfind("--", 0), 0u) << "not a flag: " << argv[i];
    if (switches.contains(argv[i])) {
      flags[argv[i]].emplace_back();
    } else {
      ASSERT_LT(i + 1, argv.size()) << argv[i] << " has no value";
      flags[argv[i]].push_back(argv[i + 1]);
      ++i;
    }
  }
  using Values = std::vector<std::string>;
  EXPECT_EQ(flags["--shape"], (Values{"mask=1x48", "x=1x3x48x192"}));
  EXPECT_EQ(flags["--targets"], Values{"cpu:fp32,cpu:int8,opencl:0:fp32"});
  EXPECT_EQ(flags["--iterations"], Values{"80"});
  EXPECT_EQ(flags["--warmup"], Values{"5"});
  EXPECT_EQ(std::stod(flags["--min-time"].at(0)), 0.25);
  EXPECT_EQ(std::stod(flags["--max-time"].at(0)), 12.5);
  EXPECT_EQ(flags["--threads"], Values{"3"});
  EXPECT_EQ(flags["--reference"], Values{"cpu:fp32"});
  EXPECT_EQ(flags["--data"], Values{"/data/cls set"});
  EXPECT_EQ(flags["--preprocess"], Values{run.inputs.preprocess});
  EXPECT_EQ(flags.count("--seed"), 0u);  // real data, no random inputs
  EXPECT_EQ(flags["--batch"], Values{"1,8"});
  EXPECT_EQ(flags["--streams"], Values{"2"});
  EXPECT_EQ(flags["--calibration"], Values{"entropy"});
  EXPECT_EQ(flags.count("--int8-all-layers"), 1u);
  EXPECT_EQ(flags["--keep-fp32"], Values{"conv1,bn 2"});
  EXPECT_EQ(std::stod(flags["--max-latency-ms"].at(0)), 0.1);
  EXPECT_EQ(flags["--latency-stat"], Values{"p90"});
  EXPECT_EQ(std::stod(flags["--min-top1"].at(0)), 0.99);
  EXPECT_EQ(std::stod(flags["--max-memory-mb"].at(0)), 512);
  EXPECT_EQ(flags.count("--no-accuracy-guard"), 1u);
  EXPECT_EQ(flags["--objective"], Values{"energy"});
  EXPECT_EQ(flags["--costs"], Values{"/etc/chipfit/my costs.yaml"});

  // Every flag is one `chipfit profile` takes (where the CLI is built).
  const QString cli = QStringLiteral(CHIPFIT_BINARY_DIR "/app/chipfit");
  if (QFileInfo::exists(cli)) {
    QProcess help;
    help.start(cli, {QStringLiteral("profile"), QStringLiteral("--help")});
    ASSERT_TRUE(help.waitForFinished(30000));
    const QString text = QString::fromUtf8(help.readAllStandardOutput());
    for (const auto& [flag, values] : flags) {
      const QString f = QString::fromStdString(flag);
      EXPECT_TRUE(text.contains(f + u' ') || text.contains(f + u'\n') || text.contains(f + u'{'))
          << flag << " is not a flag of chipfit profile";
    }
  }

  // The report shows that line, and what the GUI recorded beside it.
  const ParsedHtml parsed = ParseXml(Html(run));
  ASSERT_TRUE(parsed.ok) << parsed.error.toStdString();
  EXPECT_TRUE(parsed.text.contains(QString::fromStdString(line))) << line;
  EXPECT_TRUE(parsed.text.contains(QStringLiteral("chipfit-gui /models/my cls.onnx")));

  // A run on seeded random inputs with every default: the seed, no flag for a default it need not name.
  RunResult plain = LoadRun("sample_run.json");
  const std::vector<std::string> args = report::ProfileCommandArgs(plain);
  const std::string joined = report::ProfileCommandLine(plain);
  EXPECT_NE(joined.find(" --seed 1"), std::string::npos) << joined;
  EXPECT_NE(joined.find(" --targets cpu:fp32,cpu:int8,cpu:bf16,cpu:fp16,opencl:0:fp32"), std::string::npos) << joined;
  EXPECT_EQ(joined.find("--objective"), std::string::npos) << joined;
  EXPECT_EQ(joined.find("--reference"), std::string::npos) << joined;
}

// The limits and objective of the recommendation the writer is given (the Recommend page's on an export)
// are in the report, the accuracy guard said apart from the limits the user set.
TEST(ReportRecommendationTest, ShowsTheLimitsAndObjectiveItIsGiven) {
  RunResult run = LoadRun("sample_run_recommended.json");
  run.recommendation["objective"] = "energy";
  run.recommendation["ranked_by"] = "energy";
  run.recommendation["limits"]["max_memory_mb"] = 256;
  run.recommendation["limits"]["accuracy_guard"] = true;
  const std::vector<HtmlTable> tables = HtmlTables(Html(run));
  const HtmlTable* box = nullptr;
  for (const HtmlTable& t : tables) {
    if (!t.Row(QStringLiteral("Objective")).isEmpty()) box = &t;
  }
  ASSERT_NE(box, nullptr);
  EXPECT_EQ(box->Row(QStringLiteral("Objective")).value(1), QStringLiteral("energy"));
  EXPECT_EQ(box->Row(QStringLiteral("Limits")).value(1),
            QStringLiteral("p99 latency ≤ 0.1 ms; planned peak memory ≤ 256 MiB; top-1 agreement ≥ 99 %"));
  EXPECT_TRUE(box->Row(QStringLiteral("Accuracy guard")).value(1).startsWith(QStringLiteral("on: ")));
  EXPECT_EQ(box->Row(QStringLiteral("Ranked by")).value(1), QStringLiteral("energy"));
}

}  // namespace
}  // namespace chipfit
