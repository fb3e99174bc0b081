// WriteReport and its formats: argument checks, the Qt application check, atomic file writes.
#include "views/report/report.h"

#include <QApplication>
#include <QSaveFile>
#include <QThread>
#include <algorithm>
#include <cctype>
#include <exception>

#include "profilers/profile_json.h"
#include "views/report/report_document.h"
#include "views/report/report_writers.h"

namespace chipfit {

using nlohmann::json;

namespace {

// HTML and PDF build QCharts, which are QGraphicsWidgets: they need a QApplication and its thread.
Status CheckQtApplication(ReportFormat format) {
  auto* app = qobject_cast<QApplication*>(QCoreApplication::instance());
  if (app == nullptr) {
    return Unsupported(std::string(ReportFormatName(format)) +
                       " reports draw Qt charts and need a QApplication: create one before WriteReport "
                       "(QApplication with QT_QPA_PLATFORM=offscreen when there is no display); json and csv "
                       "reports do not");
  }
  if (QThread::currentThread() != app->thread()) {
    return Unsupported(std::string(ReportFormatName(format)) +
                       " reports draw Qt charts and must be written on the QApplication's thread");
  }
  return Status::Ok();
}

template <typename F>
Result<std::string> Guarded(const char* what, F&& render) {
  try {
    return render();
  } catch (const std::exception& e) {
    return Internal(std::string("writing the ") + what + " report failed: " + e.what());
  }
}

}  // namespace

const char* ReportFormatName(ReportFormat format) {
  switch (format) {
    case ReportFormat::kHtml: return "html";
    case ReportFormat::kPdf: return "pdf";
    case ReportFormat::kJson: return "json";
    case ReportFormat::kCsv: return "csv";
  }
  return "html";
}

Result<ReportFormat> ParseReportFormat(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "html" || lower == "htm") return ReportFormat::kHtml;
  if (lower == "pdf") return ReportFormat::kPdf;
  if (lower == "json") return ReportFormat::kJson;
  if (lower == "csv") return ReportFormat::kCsv;
  return InvalidArgument("unknown report format '" + std::string(name) + "' (html, pdf, json or csv)");
}

Result<ReportFormat> ReportFormatFromPath(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  if (ext.empty()) {
    return InvalidArgument("cannot tell the report format of '" + path.string() +
                           "': no extension (.html, .pdf, .json or .csv)");
  }
  auto format = ParseReportFormat(ext.substr(1));
  if (!format.ok()) {
    return InvalidArgument("cannot tell the report format of '" + path.string() + "': unknown extension '" + ext +
                           "' (.html, .pdf, .json or .csv)");
  }
  return format;
}

Result<std::string> RenderHtmlReport(const RunResult& run) {
  RETURN_IF_ERROR(CheckQtApplication(ReportFormat::kHtml));
  return Guarded("html", [&] { return report::WriteHtml(run, report::BuildDocument(run)); });
}

Result<std::string> RenderPdfReport(const RunResult& run) {
  RETURN_IF_ERROR(CheckQtApplication(ReportFormat::kPdf));
  return Guarded("pdf", [&] { return report::WritePdf(run, report::BuildDocument(run)); });
}

Result<std::string> RenderCsvReport(const RunResult& run) {
  return Guarded("csv", [&] { return report::WriteCsv(run); });
}

Result<std::string> RenderReport(const RunResult& run, ReportFormat format) {
  switch (format) {
    case ReportFormat::kHtml: return RenderHtmlReport(run);
    case ReportFormat::kPdf: return RenderPdfReport(run);
    case ReportFormat::kCsv: return RenderCsvReport(run);
    case ReportFormat::kJson: return Guarded("json", [&] { return RunResultToJson(run).dump(2) + "\n"; });
  }
  return InvalidArgument("unknown report format");
}

Status WriteReport(const RunResult& run, ReportFormat format, const std::filesystem::path& out) {
  Result<std::string> bytes = RenderReport(run, format);
  if (!bytes.ok()) return bytes.status();

  // QSaveFile writes a temporary file beside `out` and renames it on commit: a reader never sees a
  // half-written report, and a failed write leaves the previous file alone.
  const QString path = QString::fromStdString(out.string());
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) {
    return IoError("cannot write the " + std::string(ReportFormatName(format)) + " report to '" + out.string() +
                   "': " + file.errorString().toStdString());
  }
  const std::string& data = bytes.value();
  if (file.write(data.data(), static_cast<qint64>(data.size())) != static_cast<qint64>(data.size()) || !file.commit()) {
    return IoError("cannot write the " + std::string(ReportFormatName(format)) + " report to '" + out.string() +
                   "': " + file.errorString().toStdString());
  }
  return Status::Ok();
}

}  // namespace chipfit
