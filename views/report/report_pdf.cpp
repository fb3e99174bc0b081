// The PDF report: the same document laid out by QTextDocument (Qt's rich-text subset of HTML) and
// paginated onto A4 by QPdfWriter, with the charts as images. Landscape: the per-layer tables have 16
// columns, which portrait A4 can only show with every name broken over three lines.
#include <QBuffer>
#include <QFont>
#include <QPageLayout>
#include <QPageSize>
#include <QPdfWriter>
#include <QTextDocument>
#include <QUrl>
#include <algorithm>

#include "views/charts/run_charts.h"
#include "views/report/report_writers.h"

namespace chipfit::report {

namespace {

// QTextDocument knows class selectors and a few properties: colours, fonts, margins, page breaks.
constexpr const char* kCss = R"css(
h1 { font-size: 16pt; }
h2 { font-size: 12.5pt; margin-top: 14px; }
h3 { font-size: 10pt; margin-top: 10px; }
th { background-color: #eef2f7; font-weight: bold; }
.good { color: #1b6e2b; }
.warn { color: #9a5b00; }
.bad { color: #b3261e; }
.muted { color: #5f6b7a; }
.mono { font-family: "DejaVu Sans Mono"; }
.lead { font-size: 11pt; font-weight: bold; }
.compact { font-size: 7pt; }
.footer { font-size: 7pt; color: #5f6b7a; }
)css";

// Half of landscape A4's text width (about 970 px at 96 dpi) less the cell padding.
constexpr int kChartWidth = 470;

std::string Span(const std::string& text, const std::vector<std::string>& classes) {
  const std::string joined = JoinClasses(classes);
  if (joined.empty()) return EscapeXml(text);
  return "<span class=\"" + joined + "\">" + EscapeXml(text) + "</span>";
}

void EmitTable(const report::Table& table, std::string& out) {
  const bool kv = table.header.empty();
  out += std::string("<table border=\"1\" cellspacing=\"0\" cellpadding=\"") + (table.compact ? "2" : "3") +
         "\" style=\"border-collapse: collapse; border-color: #c5ccd6;\"" + (kv ? "" : " width=\"100%\"") + ">";
  const std::string size_class = table.compact ? "compact" : "";
  if (!kv) {
    // In <thead>, QTextDocument repeats the header row on every page a long layer table runs onto.
    out += "<thead><tr>";
    for (const std::string& h : table.header) out += "<th>" + Span(h, {size_class}) + "</th>";
    out += "</tr></thead>";
  }
  for (const std::vector<Cell>& row : table.rows) {
    out += "<tr>";
    for (size_t i = 0; i < row.size(); ++i) {
      const Cell& c = row[i];
      const bool key = kv && i == 0;
      out += std::string(key ? "<th align=\"left\"" : "<td") + (c.numeric ? " align=\"right\"" : "") +
             (c.colspan > 1 ? " colspan=\"" + std::to_string(c.colspan) + "\"" : "") + ">" +
             Span(c.text, {size_class, c.mono ? "mono" : "", ToneClass(c.tone)}) + (key ? "</th>" : "</td>");
    }
    out += "</tr>";
  }
  out += "</table>\n";
}

}  // namespace

std::string WritePdf(const RunResult& run, const Document& doc) {
  QTextDocument text;
  text.setDefaultFont(QFont(QStringLiteral("DejaVu Sans"), 8));
  text.setDefaultStyleSheet(QString::fromUtf8(kCss));

  // The charts become image resources the HTML below points at. Landscape A4 less QTextDocument::print's
  // 2 cm margins is about 970 px wide at 96 dpi; the charts are drawn at twice their pixel size.
  std::vector<charts::RunChart> all;
  std::string html = "<html><body>";
  for (const Block& b : doc.blocks) {
    switch (b.kind) {
      case Block::Kind::kHeading: {
        const std::string tag = "h" + std::to_string(std::clamp(b.level, 1, 3));
        // The summary and recommendation fill the first page; targets, layers and charts each start a
        // new one (no heading left alone at the foot of a page).
        const bool new_page = b.level == 2 && (b.id == "targets" || b.id == "layers" || b.id == "charts");
        html += "<" + tag + (new_page ? " style=\"page-break-before: always;\"" : "") + ">" + EscapeXml(b.text) + "</" +
                tag + ">";
        break;
      }
      case Block::Kind::kParagraph:
        html += "<p>";
        if (!b.label.empty()) html += Span(b.label, {b.lead ? "lead" : "", "muted"});
        html += Span(b.text, {b.lead ? "lead" : "", ToneClass(b.tone)}) + "</p>";
        break;
      case Block::Kind::kList:
        html += "<ul>";
        for (const std::string& item : b.items) html += "<li>" + EscapeXml(item) + "</li>";
        html += "</ul>";
        break;
      case Block::Kind::kTable: EmitTable(b.table, html); break;
      case Block::Kind::kCharts: {
        // Two charts side by side, as in the HTML page.
        all = charts::BuildRunCharts(run);
        html += "<table width=\"100%\" cellspacing=\"0\" cellpadding=\"4\">";
        for (size_t i = 0; i < all.size(); ++i) {
          charts::RunChart& c = all[i];
          const QString name = QStringLiteral("chart-%1.png").arg(i);
          text.addResource(QTextDocument::ImageResource, QUrl(name), charts::RenderImage(*c.chart, c.size, 2.0));
          if (i % 2 == 0) html += "<tr>";
          // QTextDocument does not shrink an image to its cell: size it to half the text width.
          const int height = c.size.height() * kChartWidth / std::max(c.size.width(), 1);
          html += "<td valign=\"top\" width=\"50%\"><img src=\"" + name.toStdString() + "\" width=\"" +
                  std::to_string(kChartWidth) + "\" height=\"" + std::to_string(height) + "\"/><br/>" +
                  Span(c.caption, {"muted"}) + "</td>";
          if (i % 2 == 1 || i + 1 == all.size()) html += "</tr>";
        }
        html += "</table>";
        break;
      }
      case Block::Kind::kBoxBegin: {
        const char* colour = b.tone == Tone::kGood ? "#f1f8f2" : b.tone == Tone::kBad ? "#fdf3f2" : "#f6f8fa";
        html += std::string("<table width=\"100%\" border=\"1\" cellspacing=\"0\" cellpadding=\"8\" bgcolor=\"") +
                colour + "\" style=\"border-collapse: collapse; border-color: #9aa5b1;\"><tr><td>";
        break;
      }
      case Block::Kind::kBoxEnd: html += "</td></tr></table>"; break;
      case Block::Kind::kFooter:
        html += "<hr/>";
        for (const std::string& item : b.items) html += "<p class=\"footer\">" + EscapeXml(item) + "</p>";
        break;
    }
  }
  html += "</body></html>";
  text.setHtml(QString::fromStdString(html));

  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  {
    QPdfWriter writer(&buffer);
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize::A4), QPageLayout::Landscape, QMarginsF(0, 0, 0, 0)));
    writer.setResolution(300);
    writer.setTitle(QString::fromStdString(doc.title));
    writer.setCreator(QStringLiteral("chipfit ") + QString::fromStdString(run.chipfit_version));
    // No page size on the document: print() lays it out on the page with 2 cm margins and numbers the pages.
    text.print(&writer);
  }
  buffer.close();
  return bytes.toStdString();
}

}  // namespace chipfit::report
