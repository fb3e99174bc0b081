// The writers of views/report, one per format, behind report.h (which checks arguments and the Qt
// application, and writes the file).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "views/report/report_document.h"

namespace chipfit::report {

// XML text or attribute value: & < > " ' escaped; characters XML 1.0 forbids (C0 controls other than
// tab, newline, carriage return) dropped, so any run text keeps the file well-formed.
std::string EscapeXml(std::string_view text);

// The CSS class of a tone ("good", "warn", "bad", "muted"; "" for normal), shared by the HTML page's
// stylesheet and the PDF's QTextDocument one.
const char* ToneClass(Tone tone);
// Class names joined by spaces, empty ones skipped: {"num", "", "bad"} → "num bad".
std::string JoinClasses(const std::vector<std::string>& classes);

// One XHTML file (parses as XML and as HTML5): inline CSS, the charts as inline <svg>, no scripts, no
// external references.
std::string WriteHtml(const RunResult& run, const Document& doc);
// A4 PDF through QTextDocument and QPdfWriter, the charts as images.
std::string WritePdf(const RunResult& run, const Document& doc);
// RFC 4180 CSV: the targets table (one row per target), an empty line, the layer table (one row per
// target × layer); in throughput mode, an empty line and the throughput table (one row per target × point).
// Each table has its own header row.
std::string WriteCsv(const RunResult& run);

}  // namespace chipfit::report
