// The HTML report: one XHTML file with inline CSS and inline SVG charts, readable offline, in a mail
// attachment or a CI artefact, and well-formed XML so tools (and tests) can parse it.
#include <QRegularExpression>
#include <QString>
#include <algorithm>

#include "views/charts/run_charts.h"
#include "views/report/report_writers.h"

namespace chipfit::report {

namespace {

// No external fonts or images: the system's sans-serif, tabular digits for the number columns.
constexpr const char* kCss = R"css(
body { font-family: "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; font-size: 14px; line-height: 1.4;
  color: #1d2330; background: #fff; margin: 0 auto; padding: 20px 24px 40px; max-width: 1280px; }
h1 { font-size: 24px; margin: 0 0 12px; }
h2 { font-size: 19px; margin: 34px 0 10px; padding-bottom: 4px; border-bottom: 2px solid #d5dbe5; }
h3 { font-size: 15px; margin: 22px 0 6px; }
p { margin: 6px 0; }
a { color: #0b5cad; }
nav { font-size: 13px; color: #556; margin-bottom: 14px; }
nav a { margin-right: 12px; }
table { border-collapse: collapse; margin: 6px 0 14px; font-size: 13px; }
th, td { border: 1px solid #d5dbe5; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #eef2f7; font-weight: 600; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.mono, span.mono { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
table.kv th { text-align: left; background: #f5f7fa; width: 220px; white-space: normal; }
table.kv td { word-break: break-word; }
table.compact { font-size: 12px; }
table.compact td, table.compact th { padding: 2px 6px; }
table.compact td.mono { font-size: 11px; }
.scroll { overflow-x: auto; }
td.nowrap { white-space: nowrap; }
.good { color: #1b6e2b; }
.warn { color: #9a5b00; }
.bad { color: #b3261e; }
.muted { color: #5f6b7a; }
.box { border: 2px solid #9aa5b1; border-radius: 6px; padding: 10px 16px; margin: 8px 0 14px; background: #f6f8fa; }
.box.good { border-color: #2e7d32; background: #f1f8f2; color: inherit; }
.box.bad { border-color: #b3261e; background: #fdf3f2; color: inherit; }
.box table.kv { margin-bottom: 4px; }
.box table.kv th { background: transparent; }
p.lead { font-size: 18px; font-weight: 600; margin: 2px 0 8px; }
ul { margin: 6px 0; padding-left: 22px; }
li { margin: 2px 0; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
figure.chart { margin: 0; padding: 6px; border: 1px solid #e1e6ee; background: #fff; max-width: 100%; }
figure.chart svg { display: block; max-width: 100%; height: auto; }
figcaption { font-size: 12px; color: #5f6b7a; margin-top: 4px; }
footer { margin-top: 34px; padding-top: 8px; border-top: 1px solid #d5dbe5; font-size: 12px; color: #5f6b7a; }
footer p { margin: 4px 0; }
details { margin: 4px 0 14px; }
summary { cursor: pointer; color: #0b5cad; font-size: 13px; margin-bottom: 4px; }
@media print { .scroll { overflow: visible; } figure.chart { break-inside: avoid; } }
)css";

std::string ClassAttr(const std::vector<std::string>& classes) {
  const std::string joined = JoinClasses(classes);
  return joined.empty() ? std::string() : " class=\"" + joined + "\"";
}

void EmitTable(const report::Table& table, std::string& out) {
  const bool kv = table.header.empty();
  // Closed until the reader opens it (no `open` attribute); no script needed.
  if (!table.folded_summary.empty()) out += "<details><summary>" + EscapeXml(table.folded_summary) + "</summary>\n";
  out += "<div class=\"scroll\"><table" + ClassAttr({kv ? "kv" : "", table.compact ? "compact" : ""}) + ">\n";
  if (!kv) {
    out += "<thead><tr>";
    for (const std::string& h : table.header) out += "<th>" + EscapeXml(h) + "</th>";
    out += "</tr></thead>\n";
  }
  out += "<tbody>\n";
  for (const std::vector<Cell>& row : table.rows) {
    out += "<tr>";
    for (size_t i = 0; i < row.size(); ++i) {
      const Cell& c = row[i];
      const char* tag = kv && i == 0 ? "th" : "td";
      out += std::string("<") + tag +
             ClassAttr({c.numeric ? "num" : "", c.mono ? "mono" : "", c.nowrap ? "nowrap" : "", ToneClass(c.tone)}) +
             (c.colspan > 1 ? " colspan=\"" + std::to_string(c.colspan) + "\"" : "") + ">" + EscapeXml(c.text) + "</" +
             tag + ">";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  if (!table.folded_summary.empty()) out += "</details>\n";
}

// QSvgGenerator writes a whole document; inline it needs the <svg> element only, sized in CSS
// pixels, and ids unique in the page (each chart's clip paths and gradients count from 1).
// QRegularExpression, not std::regex: GCC 12 at the sanitizer build's -O1 warns inside <regex>.
std::string InlineSvg(const QByteArray& svg, const QSize& size, const std::string& prefix, const std::string& label) {
  QString text = QString::fromUtf8(svg);
  const qsizetype start = text.indexOf(QLatin1String("<svg"));
  if (start < 0) return {};
  text.remove(0, start);
  const qsizetype tag_end = text.indexOf(QLatin1Char('>'));
  if (tag_end < 0) return {};
  static const QRegularExpression kSize(QStringLiteral(R"re( (width|height)="[^"]*")re"));
  QString root = text.left(tag_end).remove(kSize);
  root += QStringLiteral(" width=\"%1\" height=\"%2\" role=\"img\" aria-label=\"%3\"")
              .arg(size.width())
              .arg(size.height())
              .arg(QString::fromStdString(EscapeXml(label)));
  text = root + text.mid(tag_end);
  const QString p = QString::fromStdString(prefix);
  static const QRegularExpression kId(QStringLiteral(R"re((?<=\s)id="([^"]+)")re"));
  static const QRegularExpression kUrl(QStringLiteral(R"re(url\(#([^)]+)\))re"));
  static const QRegularExpression kHref(QStringLiteral(R"re(href="#([^"]+)")re"));
  text.replace(kId, QStringLiteral("id=\"%1-\\1\"").arg(p));
  text.replace(kUrl, QStringLiteral("url(#%1-\\1)").arg(p));
  text.replace(kHref, QStringLiteral("href=\"#%1-\\1\"").arg(p));
  while (text.endsWith(QLatin1Char('\n')) || text.endsWith(QLatin1Char(' '))) text.chop(1);
  return text.toStdString() + "\n";
}

void Charts(const RunResult& run, std::string& out) {
  std::vector<charts::RunChart> all = charts::BuildRunCharts(run);
  out += "<div class=\"charts\">\n";
  for (charts::RunChart& c : all) {
    // A chart title may be rich text (a line break as <br>); QSvgGenerator writes the title it is given
    // into <title> as it is, so it gets plain text, escaped.
    static const QRegularExpression kTags(QStringLiteral("<[^>]*>"));
    const QString title = c.chart->title().replace(kTags, QStringLiteral(" ")).simplified();
    const QByteArray svg = charts::RenderSvg(*c.chart, c.size, QString::fromStdString(EscapeXml(title.toStdString())));
    // As wide as the chart, so a long caption does not widen it and two charts share a row.
    out += "<figure class=\"chart\" id=\"chart-" + EscapeXml(c.id) +
           "\" style=\"width: " + std::to_string(c.size.width()) + "px\">\n";
    out += InlineSvg(svg, c.size, "c-" + c.id, title.toStdString());
    out += "<figcaption>" + EscapeXml(c.caption) + "</figcaption>\n</figure>\n";
  }
  out += "</div>\n";
}

}  // namespace

const char* ToneClass(Tone tone) {
  switch (tone) {
    case Tone::kGood: return "good";
    case Tone::kWarn: return "warn";
    case Tone::kBad: return "bad";
    case Tone::kMuted: return "muted";
    case Tone::kNormal: return "";
  }
  return "";
}

std::string JoinClasses(const std::vector<std::string>& classes) {
  std::string joined;
  for (const std::string& c : classes) {
    if (!c.empty()) joined += (joined.empty() ? "" : " ") + c;
  }
  return joined;
}

std::string EscapeXml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (c < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') break;  // not allowed in XML 1.0
        out += ch;
    }
  }
  return out;
}

std::string WriteHtml(const RunResult& run, const Document& doc) {
  std::string out;
  out += "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n";
  out += "<meta charset=\"utf-8\"/>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n";
  out += "<meta name=\"generator\" content=\"chipfit " + EscapeXml(run.chipfit_version) + "\"/>\n";
  out += "<title>" + EscapeXml(doc.title) + "</title>\n<style>" + std::string(kCss) + "</style>\n</head>\n<body>\n";
  for (const Block& b : doc.blocks) {
    switch (b.kind) {
      case Block::Kind::kHeading: {
        const std::string tag = "h" + std::to_string(std::clamp(b.level, 1, 3));
        out += "<" + tag + (b.id.empty() ? "" : " id=\"" + EscapeXml(b.id) + "\"") + ">" + EscapeXml(b.text) + "</" +
               tag + ">\n";
        if (b.level == 1) {
          // Where to jump: the sections in order (Throughput only in throughput mode).
          const bool throughput = std::any_of(doc.blocks.begin(), doc.blocks.end(), [](const Block& h) {
            return h.kind == Block::Kind::kHeading && h.id == "throughput";
          });
          out += "<nav><a href=\"#recommendation\">Recommendation</a><a href=\"#targets\">Targets</a>";
          if (throughput) out += "<a href=\"#throughput\">Throughput</a>";
          out +=
              "<a href=\"#charts\">Charts</a><a href=\"#machine\">Machine</a><a href=\"#notes\">Notes</a>"
              "<a href=\"#layers\">Layers</a></nav>\n";
        }
        break;
      }
      case Block::Kind::kParagraph:
        out += "<p" + ClassAttr({b.lead ? "lead" : "", ToneClass(b.tone)}) + ">";
        if (!b.label.empty()) out += "<span class=\"muted\">" + EscapeXml(b.label) + "</span>";
        out += EscapeXml(b.text) + "</p>\n";
        break;
      case Block::Kind::kList:
        out += "<ul>\n";
        for (const std::string& item : b.items) out += "<li>" + EscapeXml(item) + "</li>\n";
        out += "</ul>\n";
        break;
      case Block::Kind::kTable: EmitTable(b.table, out); break;
      case Block::Kind::kCharts: Charts(run, out); break;
      case Block::Kind::kBoxBegin: out += "<div" + ClassAttr({"box", ToneClass(b.tone)}) + ">\n"; break;
      case Block::Kind::kBoxEnd: out += "</div>\n"; break;
      case Block::Kind::kFooter:
        out += "<footer>\n";
        for (const std::string& item : b.items) out += "<p>" + EscapeXml(item) + "</p>\n";
        out += "</footer>\n";
        break;
    }
  }
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace chipfit::report
