// Reports of a profile run (RunResult): one self-contained HTML file, a paginated A4 PDF, the
// targets-and-layers CSV, or the run's profile JSON (RunResultToJson, the one writer). Shared by `chipfit
// report`, `chipfit profile --report` and the GUI's Export.
//
// HTML and PDF draw the run's charts (views/charts), and Qt charts are QGraphicsWidgets: the caller
// creates a QApplication first (QApplication, not QGuiApplication; headless callers set
// QT_QPA_PLATFORM=offscreen or pass `-platform offscreen`) and calls from its thread. Without one,
// WriteReport returns an error saying so. JSON and CSV need no Qt application.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/status.h"
#include "profilers/run_result.h"

namespace chipfit {

enum class ReportFormat { kHtml, kPdf, kJson, kCsv };

// "html", "pdf", "json", "csv" (case-insensitive; "htm" too); an error names the format and lists
// the known ones.
Result<ReportFormat> ParseReportFormat(std::string_view name);
// From the file's extension (report.html, out.PDF, …); an error names the file.
Result<ReportFormat> ReportFormatFromPath(const std::filesystem::path& path);
const char* ReportFormatName(ReportFormat format);

// Writes the report of `run` to `out` (replaced atomically: a failed write leaves no half file).
// Errors: kUnsupported when HTML/PDF is asked for without a QApplication (or off its thread),
// kIoError naming `out` when it cannot be written.
Status WriteReport(const RunResult& run, ReportFormat format, const std::filesystem::path& out);

// The same content in memory (standard output, tests, the GUI's preview). HTML and PDF need the
// QApplication as above.
Result<std::string> RenderReport(const RunResult& run, ReportFormat format);
Result<std::string> RenderHtmlReport(const RunResult& run);
Result<std::string> RenderPdfReport(const RunResult& run);
// RFC 4180 (CRLF, quoted where needed): tables separated by an empty line, each with its header row. The
// targets (one row per target), then the layers (one row per target × layer), then in throughput mode (a
// target with throughput points) one row per target × throughput point. docs/cli.md lists the columns.
Result<std::string> RenderCsvReport(const RunResult& run);

}  // namespace chipfit
