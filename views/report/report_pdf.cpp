// The PDF report: the same document laid out by QTextDocument (Qt's rich-text subset of HTML) as one
// long page, then cut into A4 pages here, at the boundaries a reader expects: between blocks and between
// table rows, never inside a row, never right after a heading; a table's header row repeats on each page
// it continues on. QTextDocument::print cuts anywhere (a device row over two pages) and, with forced
// breaks, left pages three-quarters empty. Landscape: the per-layer tables have 16 columns.
#include <QAbstractTextDocumentLayout>
#include <QBuffer>
#include <QFont>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextTable>
#include <QUrl>
#include <algorithm>
#include <limits>

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
.nowrap { white-space: nowrap; }
.lead { font-size: 11pt; font-weight: bold; }
.compact { font-size: 6.5pt; }
.footer { font-size: 7pt; color: #5f6b7a; }
)css";

// A third of landscape A4's text width (about 970 px at 96 dpi) less the cell padding: three charts a
// row, so the eight charts of a four-target run take a page and a half, not four.
constexpr int kChartWidth = 310;
constexpr size_t kChartsPerRow = 3;
// The width of a table's name-list column (Table::wide_column): ONNX node lists two lines high at most.
constexpr const char* kWideColumn = " width=\"240\"";

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
    for (size_t i = 0; i < table.header.size(); ++i) {
      // A fixed width (CSS px): QTextDocument gives a percentage up to the other columns' minimums.
      const bool wide = static_cast<int>(i) == table.wide_column;
      out += std::string(wide ? "<th" + std::string(kWideColumn) + ">" : "<th>") + Span(table.header[i], {size_class}) +
             "</th>";
    }
    out += "</tr></thead>";
  }
  for (const std::vector<Cell>& row : table.rows) {
    out += "<tr>";
    for (size_t i = 0; i < row.size(); ++i) {
      const Cell& c = row[i];
      const bool key = kv && i == 0;
      out += std::string(key ? "<th align=\"left\"" : "<td") + (c.numeric ? " align=\"right\"" : "") +
             // Figures stay on one line ("181 KiB", not "181" over "KiB"), as names do.
             (c.nowrap || c.numeric ? " class=\"nowrap\"" : "") +
             (static_cast<int>(i) == table.wide_column ? kWideColumn : "") +
             (c.colspan > 1 ? " colspan=\"" + std::to_string(c.colspan) + "\"" : "") + ">" +
             Span(c.text, {size_class, c.mono ? "mono" : "", ToneClass(c.tone)}) + (key ? "</th>" : "</td>");
    }
    out += "</tr>";
  }
  out += "</table>\n";
}

// The document as QTextDocument HTML; the charts become image resources of `text` it points at.
std::string BuildHtml(const RunResult& run, const Document& doc, QTextDocument& text) {
  std::vector<charts::RunChart> all;
  std::string html = "<html><body>";
  for (const Block& b : doc.blocks) {
    switch (b.kind) {
      case Block::Kind::kHeading: {
        const std::string tag = "h" + std::to_string(std::clamp(b.level, 1, 3));
        // No forced page breaks: Paginate starts a page where the content runs out, never after a heading.
        html += "<" + tag + ">" + EscapeXml(b.text) + "</" + tag + ">";
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
        // Three charts side by side, in the order of the HTML page.
        all = charts::BuildRunCharts(run);
        html += "<table width=\"100%\" cellspacing=\"0\" cellpadding=\"4\">";
        for (size_t i = 0; i < all.size(); ++i) {
          charts::RunChart& c = all[i];
          const QString name = QStringLiteral("chart-%1.png").arg(i);
          text.addResource(QTextDocument::ImageResource, QUrl(name), charts::RenderImage(*c.chart, c.size, 2.0));
          if (i % kChartsPerRow == 0) html += "<tr>";
          // QTextDocument does not shrink an image to its cell: size it to a third of the text width.
          const int height = c.size.height() * kChartWidth / std::max(c.size.width(), 1);
          html += "<td valign=\"top\" width=\"33%\"><img src=\"" + name.toStdString() + "\" width=\"" +
                  std::to_string(kChartWidth) + "\" height=\"" + std::to_string(height) + "\"/><br/>" +
                  Span(c.caption, {"muted"}) + "</td>";
          if (i % kChartsPerRow == kChartsPerRow - 1 || i + 1 == all.size()) html += "</tr>";
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
  return html;
}

// Where a page may start, in the laid-out document's coordinates.
struct Breaks {
  std::vector<qreal> allowed;
  // Top-level tables with a header row: [top, header bottom, bottom), for repeating the header.
  struct Header {
    qreal top = 0, header_bottom = 0, bottom = 0;
  };
  std::vector<Header> headers;
};

// The top of each row of `table` (its first cell's content, less padding and half the border).
std::vector<qreal> RowTops(QTextTable& table, QAbstractTextDocumentLayout& layout, qreal device_scale) {
  const QTextTableFormat format = table.format();
  const qreal inset = (format.cellPadding() + format.border() / 2) * device_scale;
  std::vector<qreal> tops;
  for (int r = 0; r < table.rows(); ++r) {
    qreal top = std::numeric_limits<qreal>::max();
    for (int c = 0; c < table.columns(); ++c) {
      const QTextTableCell cell = table.cellAt(r, c);
      if (cell.row() != r) continue;  // spanned from above
      top = std::min(top, layout.blockBoundingRect(cell.firstCursorPosition().block()).top());
    }
    tops.push_back(top - inset);
  }
  return tops;
}

// The places a page may start: before every top-level block and table and between table rows (after a
// table's header rows), except right after a heading and after the paragraph that follows one, so a
// heading always has what it announces below it.
Breaks FindBreaks(QTextDocument& text, qreal device_scale) {
  Breaks breaks;
  QAbstractTextDocumentLayout& layout = *text.documentLayout();
  bool glue = false, after_heading = false;
  for (auto it = text.rootFrame()->begin(); !it.atEnd(); ++it) {
    if (QTextFrame* frame = it.currentFrame()) {
      const QRectF rect = layout.frameBoundingRect(frame);
      if (!glue) breaks.allowed.push_back(rect.top());
      glue = after_heading = false;
      auto* table = qobject_cast<QTextTable*>(frame);
      // A one-cell table is a framed box (the recommendation): it stays whole.
      if (table == nullptr || table->rows() * table->columns() <= 1) continue;
      const int head = table->format().headerRowCount();
      const std::vector<qreal> tops = RowTops(*table, layout, device_scale);
      // Not between the header and the first row: a header alone at the foot of a page says nothing.
      for (size_t r = static_cast<size_t>(head) + 1; r < tops.size(); ++r) breaks.allowed.push_back(tops[r]);
      if (head > 0 && static_cast<size_t>(head) < tops.size()) {
        breaks.headers.push_back({rect.top(), tops[static_cast<size_t>(head)], rect.bottom()});
      }
      continue;
    }
    const QTextBlock block = it.currentBlock();
    if (block.text().trimmed().isEmpty() && block.textList() == nullptr) continue;  // spacing between tables
    if (!glue) breaks.allowed.push_back(layout.blockBoundingRect(block).top());
    const bool heading = block.blockFormat().headingLevel() > 0;
    glue = heading || (after_heading && block.textList() == nullptr);
    after_heading = heading;
  }
  std::sort(breaks.allowed.begin(), breaks.allowed.end());
  return breaks;
}

struct PageSlice {
  qreal top = 0, bottom = 0;
  const Breaks::Header* header = nullptr;  // repeated above the slice
};

// Greedy: each page takes up to the last allowed break that fits; content taller than a page with no
// break inside is cut at the page's foot.
std::vector<PageSlice> Paginate(const Breaks& breaks, qreal document_height, qreal page_height) {
  std::vector<PageSlice> pages;
  qreal top = 0;
  const qreal epsilon = 1;
  while (top < document_height - epsilon) {
    const Breaks::Header* header = nullptr;
    for (const Breaks::Header& h : breaks.headers) {
      if (top >= h.header_bottom - epsilon && top < h.bottom - epsilon) header = &h;
    }
    const qreal room = page_height - (header != nullptr ? header->header_bottom - header->top : 0);
    qreal bottom = top + room;
    if (bottom >= document_height) {
      bottom = document_height;
    } else {
      const auto it = std::upper_bound(breaks.allowed.begin(), breaks.allowed.end(), bottom);
      if (it != breaks.allowed.begin() && *std::prev(it) > top + epsilon) bottom = *std::prev(it);
    }
    pages.push_back({top, bottom, header});
    top = bottom;
  }
  return pages;
}

}  // namespace

std::string WritePdf(const RunResult& run, const Document& doc) {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  {
    QPdfWriter writer(&buffer);
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize::A4), QPageLayout::Landscape, QMarginsF(0, 0, 0, 0)));
    writer.setResolution(300);
    writer.setTitle(QString::fromStdString(doc.title));
    writer.setCreator(QStringLiteral("chipfit ") + QString::fromStdString(run.chipfit_version));

    QTextDocument text;
    text.setDefaultFont(QFont(QStringLiteral("DejaVu Sans"), 8));
    text.setDefaultStyleSheet(QString::fromUtf8(kCss));
    // Lines break between words only: a name wider than its column widens the column instead of
    // breaking mid-token ("cpu:fp3" / "2").
    QTextOption option = text.defaultTextOption();
    option.setWrapMode(QTextOption::WordWrap);
    text.setDefaultTextOption(option);
    text.setHtml(QString::fromStdString(BuildHtml(run, doc, text)));
    // Laid out in the writer's pixels (as QTextDocument::print does): CSS pixels scale to 300 dpi.
    text.documentLayout()->setPaintDevice(&writer);
    const qreal scale = writer.logicalDpiY() / 96.0;
    // 2 cm margins, and a line at the foot for the page number.
    const qreal margin = 2 / 2.54 * writer.logicalDpiX();
    const QRectF page(0, 0, writer.width(), writer.height());
    const qreal footer = 14 * scale;
    const QRectF body = page.adjusted(margin, margin, -margin, -margin - footer);
    text.setTextWidth(body.width());
    const Breaks breaks = FindBreaks(text, scale);
    const std::vector<PageSlice> pages = Paginate(breaks, text.size().height(), body.height());

    QPainter painter(&writer);
    QFont number_font(QStringLiteral("DejaVu Sans"), 7);
    for (size_t i = 0; i < pages.size(); ++i) {
      if (i > 0) writer.newPage();
      const PageSlice& slice = pages[i];
      qreal y = body.top();
      if (slice.header != nullptr) {
        const qreal h = slice.header->header_bottom - slice.header->top;
        painter.save();
        painter.translate(body.left(), y - slice.header->top);
        text.drawContents(&painter, QRectF(0, slice.header->top, body.width(), h));
        painter.restore();
        y += h;
      }
      painter.save();
      painter.translate(body.left(), y - slice.top);
      text.drawContents(&painter, QRectF(0, slice.top, body.width(), slice.bottom - slice.top));
      painter.restore();
      painter.setFont(number_font);
      painter.setPen(QColor(0x5f, 0x6b, 0x7a));
      painter.drawText(QRectF(body.left(), page.bottom() - margin, body.width(), footer),
                       Qt::AlignRight | Qt::AlignBottom, QStringLiteral("%1 / %2").arg(i + 1).arg(pages.size()));
    }
  }
  buffer.close();
  return bytes.toStdString();
}

}  // namespace chipfit::report
