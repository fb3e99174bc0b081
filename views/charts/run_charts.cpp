// Builds the run charts from a RunResult and renders charts without a window.
#include "views/charts/run_charts.h"

#include <QApplication>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QBuffer>
#include <QCategoryAxis>
#include <QFontInfo>
#include <QFontMetricsF>
#include <QGraphicsLayout>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QHorizontalBarSeries>
#include <QHorizontalStackedBarSeries>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QRegularExpression>
#include <QScatterSeries>
#include <QSet>
#include <QSvgGenerator>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <list>
#include <map>
#include <set>
#include <unordered_map>

#include "views/charts/chart_style.h"
#include "views/charts/formats.h"

namespace chipfit::charts {

using formats::Finite;

namespace {

QString Q(const std::string& s) { return QString::fromStdString(s); }

// Layer slices of the energy bars: muted, so they do not read as targets.
const QColor kLayerPalette[] = {QColor(0x4C, 0x72, 0xB0), QColor(0xDD, 0x84, 0x52), QColor(0x55, 0xA8, 0x68),
                                QColor(0xC4, 0x4E, 0x52), QColor(0x81, 0x72, 0xB3), QColor(0x93, 0x78, 0x60)};
const QColor kOtherColor(0xB8, 0xBE, 0xC6);

constexpr double kDriftThresholdDb = 30.0;

std::unique_ptr<QChart> NewChart(const QString& title) {
  auto chart = std::make_unique<QChart>();
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->setTheme(QChart::ChartThemeLight);
  chart->setBackgroundRoundness(0);
  chart->setMargins(QMargins(4, 4, 8, 4));
  chart->setTitle(title);
  chart->setTitleFont(ChartFont(10, true));
  chart->legend()->setFont(ChartFont(8));
  chart->legend()->setAlignment(Qt::AlignBottom);
  FitTitle(*chart);
  return chart;
}

void StyleAxis(QAbstractAxis* axis, const QString& title) {
  axis->setTitleText(title);
  axis->setTitleFont(ChartFont(8.5));
  axis->setLabelsFont(ChartFont(8));
}

// Long layer names ("softmax/copy from opencl:0:probabilities") would squeeze the plot: keep the
// start and the end, which say what and where.
QString Elide(const QString& text, int max_chars) {
  if (text.size() <= max_chars) return text;
  const int head = (max_chars - 1) * 2 / 3;
  const int tail = max_chars - 1 - head;
  return text.left(head) + QChar(0x2026) + text.right(tail);
}

double Floor10(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double Ceil10(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

// Word-wraps `text` (lines split at '\n' kept) to `width` pixels in `font`.
QString WrapText(const QString& text, const QFont& font, qreal width) {
  const QFontMetricsF metrics(font);
  QStringList out;
  for (const QString& paragraph : text.split(QLatin1Char('\n'))) {
    QString line;
    for (const QString& word : paragraph.split(QLatin1Char(' '))) {
      const QString candidate = line.isEmpty() ? word : line + QLatin1Char(' ') + word;
      if (!line.isEmpty() && metrics.horizontalAdvance(candidate) > width) {
        out << line;
        line = word;
      } else {
        line = candidate;
      }
    }
    out << line;
  }
  return out.join(QLatin1Char('\n'));
}

// Text on the plot at data points (layer names, ceiling values), placed after every layout (the
// positions depend on the plot area) and hidden where it would overlap another label or a marker, or
// leave the plot. The chart's note comes first, in a free corner; then labels, those added first win.
// Ceiling labels and the note sit on a white box above the markers, so no point can hide them.
class PointLabels : public QObject {
 public:
  enum class Side { kBesidePoint, kAboveLeft, kBelowLeft, kAboveSlope };

  explicit PointLabels(QChart* chart) : QObject(chart), chart_(chart) {
    connect(chart, &QChart::plotAreaChanged, this, [this] { Place(); });
  }

  // `value` is where the label belongs; kAboveSlope labels go above the line from `value` to `end`.
  void Add(QXYSeries* series, QPointF value, const QString& text, const QColor& color, Side side = Side::kBesidePoint,
           QPointF end = {}) {
    auto* item = new QGraphicsSimpleTextItem(text, chart_);
    item->setFont(ChartFont(7.5));
    item->setBrush(color.darker(130));
    item->setZValue(101);
    labels_.push_back({series, value, end, item, side == Side::kBesidePoint ? nullptr : Box(), side});
  }
  // A marker no label may cover.
  void AddObstacle(QXYSeries* series, QPointF value) { obstacles_.push_back({series, value}); }
  // A note on the plot (wrapped to its width), in the first corner free of markers.
  void SetNote(const QString& text) {
    note_text_ = text;
    note_ = new QGraphicsSimpleTextItem(chart_);
    note_->setFont(ChartFont(7.5));
    note_->setBrush(QColor(0x33, 0x33, 0x33));
    note_->setZValue(101);
    note_box_ = Box();
  }

  void Place() {
    const QRectF plot = chart_->plotArea();
    std::vector<QRectF> markers;
    for (const auto& [series, value] : obstacles_) {
      const QPointF at = chart_->mapToPosition(value, series);
      markers.emplace_back(at - QPointF(4, 4), QSizeF(8, 8));
    }
    std::vector<QRectF> taken = markers;
    if (note_ != nullptr) PlaceNote(plot, markers, taken);
    for (const Label& label : labels_) {
      const QPointF at = chart_->mapToPosition(label.value, label.series);
      const QSizeF size = label.item->boundingRect().size();
      const std::vector<QPointF> candidates = Candidates(label, at, size);
      bool placed = false;
      for (const QPointF& pos : candidates) {
        const QRectF rect(pos, size);
        if (!plot.contains(rect)) continue;
        if (std::any_of(taken.begin(), taken.end(), [&](const QRectF& r) { return r.intersects(rect); })) continue;
        Show(label, pos);
        taken.push_back(rect.adjusted(-2, -1, 2, 1));
        placed = true;
        break;
      }
      // A ceiling's value is worth an overlap: it goes at its first place anyway (layer names give way).
      if (!placed && label.side != Side::kBesidePoint) {
        for (const QPointF& pos : candidates) {
          if (!plot.contains(QRectF(pos, size))) continue;
          Show(label, pos);
          taken.push_back(QRectF(pos, size));
          placed = true;
          break;
        }
      }
      label.item->setVisible(placed);
      if (label.box != nullptr) label.box->setVisible(placed);
    }
  }

  QString Note() const { return note_text_; }

 private:
  struct Label {
    QXYSeries* series;
    QPointF value, end;
    QGraphicsSimpleTextItem* item;
    QGraphicsRectItem* box;  // white under ceiling labels, none under layer names
    Side side;
  };

  QGraphicsRectItem* Box() {
    auto* box = new QGraphicsRectItem(chart_);
    box->setPen(Qt::NoPen);
    box->setBrush(QColor(255, 255, 255, 225));
    box->setZValue(100);
    return box;
  }

  void Show(const Label& label, QPointF pos) {
    label.item->setPos(pos);
    if (label.box != nullptr) label.box->setRect(QRectF(pos, label.item->boundingRect().size()).adjusted(-2, 0, 2, 0));
  }

  static std::vector<QPointF> Candidates(const Label& label, QPointF at, QSizeF size) {
    const qreal w = size.width(), h = size.height();
    std::vector<QPointF> candidates;
    if (label.side == Side::kAboveSlope) {
      // Above a rising line the plot is empty (a layer there would beat the roof): the box's lower
      // right corner on the line, at points along it from the middle out.
      // Past the slope's end the roof is flat: a short slope at the plot's left edge puts its value
      // above the start of the flat part.
      const QPointF from = at;
      const QPointF to = label.series->chart()->mapToPosition(label.end, label.series);
      const auto line_y = [&](qreal x) {
        if (x >= to.x() || to.x() <= from.x()) return to.y();
        return from.y() + (to.y() - from.y()) * (x - from.x()) / (to.x() - from.x());
      };
      std::vector<qreal> rights;
      for (qreal f : {0.5, 0.35, 0.65, 0.2, 0.8}) rights.push_back(from.x() + (to.x() - from.x()) * f);
      for (int k = 0; k < 6; ++k) rights.push_back(from.x() + w + 6 + 24 * k);
      for (qreal right : rights) candidates.push_back(QPointF(right - w - 3, line_y(right) - h - 3));
      candidates.push_back(at + QPointF(4, 2));
    } else if (label.side == Side::kBelowLeft || label.side == Side::kAboveLeft) {
      // Beside the line's end (below or above as asked, then the other), then further left along
      // it: close peaks (bf16 and int8 on a VNNI CPU lie a fifth of a decade apart) would
      // otherwise hide one another's value.
      const qreal first = label.side == Side::kBelowLeft ? 1 : -h - 1;
      const qreal second = label.side == Side::kBelowLeft ? -h - 1 : 1;
      for (qreal shift : {w + 4, 2 * w + 12, 3 * w + 20}) {
        candidates.push_back(at + QPointF(-shift, first));
        candidates.push_back(at + QPointF(-shift, second));
      }
      // Under a rising line, right of the point (a short memory slope near the plot's left edge).
      candidates.push_back(at + QPointF(4, 2));
    } else {
      // Right of the point, then left, above, below.
      candidates = {at + QPointF(7, -h / 2), at + QPointF(-7 - w, -h / 2), at + QPointF(-w / 2, -h - 6),
                    at + QPointF(-w / 2, 6)};
    }
    return candidates;
  }

  void PlaceNote(const QRectF& plot, const std::vector<QRectF>& markers, std::vector<QRectF>& taken) {
    note_->setText(WrapText(note_text_, note_->font(), std::max<qreal>(plot.width() * 0.7, 120)));
    const QSizeF size = note_->boundingRect().size();
    // Bottom right first: on a roofline, high intensity at low speed is where layers seldom are, and the
    // top left stays free for the memory roof's value.
    const QPointF corners[] = {plot.bottomRight() - QPointF(size.width() + 6, size.height() + 4),
                               plot.topLeft() + QPointF(6, 4), plot.topRight() - QPointF(size.width() + 6, -4),
                               plot.bottomLeft() + QPointF(6, -size.height() - 4)};
    QPointF pos = corners[0];
    for (const QPointF& corner : corners) {
      const QRectF rect(corner, size);
      if (std::none_of(markers.begin(), markers.end(), [&](const QRectF& r) { return r.intersects(rect); })) {
        pos = corner;
        break;
      }
    }
    note_->setPos(pos);
    note_box_->setRect(QRectF(pos, size).adjusted(-3, -1, 3, 1));
    taken.push_back(QRectF(pos, size).adjusted(-4, -2, 4, 2));
  }

  QChart* chart_;
  std::vector<Label> labels_;
  std::vector<std::pair<QXYSeries*, QPointF>> obstacles_;
  QString note_text_;
  QGraphicsSimpleTextItem* note_ = nullptr;
  QGraphicsRectItem* note_box_ = nullptr;
};

// Adds `series` (horizontal bars) to `chart` with its category axis on the left and a value axis
// from 0 to about `x_max` (ticks on nice numbers) titled `x_title` at the bottom.
void AddHorizontalBarAxes(QChart& chart, QAbstractBarSeries* series, const QStringList& categories, double x_max,
                          const QString& x_title) {
  chart.addSeries(series);
  auto* y = new QBarCategoryAxis;
  y->append(categories);
  StyleAxis(y, {});
  // The labels are elided to fit already; Qt would cut a label taller than its bar's row to "…", and
  // hides one that overlaps its neighbour: a size smaller than the value axis's keeps ten rows named in
  // the Layers page's chart pane.
  y->setTruncateLabels(false);
  y->setLabelsFont(ChartFont(7));
  chart.addAxis(y, Qt::AlignLeft);
  series->attachAxis(y);
  auto* x = new QValueAxis;
  SetNiceRange(x, 0, x_max, 5);
  // Four digits: an axis to 1500 µs reads "1500", not "1.5e+03".
  x->setLabelFormat(QStringLiteral("%.4g"));
  StyleAxis(x, x_title);
  chart.addAxis(x, Qt::AlignBottom);
  series->attachAxis(x);
}

struct LayerRow {
  int index;
  const LayerResult* layer;
  double p50;
};

std::vector<LayerRow> LayersByTime(const TargetResult& target) {
  std::vector<LayerRow> rows;
  for (size_t i = 0; i < target.layers.size(); ++i) {
    const auto p50 = Finite(target.layers[i].time_p50_ms);
    if (p50) rows.push_back({static_cast<int>(i), &target.layers[i], *p50});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const LayerRow& a, const LayerRow& b) { return a.p50 > b.p50; });
  return rows;
}

// Unit for a set of energies in J: the largest one decides, by the report's rule (views/report states
// one energy unit for the whole report, and this chart is in it): J from 1 J, mJ from 1 mJ, else µJ.
std::pair<double, QString> EnergyUnit(double max_joules) {
  if (max_joules >= 1) return {1, QStringLiteral("J")};
  if (max_joules >= 1e-3) return {1e3, QStringLiteral("mJ")};
  return {1e6, QStringLiteral("µJ")};
}

// The measured ceilings a run holds for a device (RunResult::ceilings, what `chipfit devices
// --measure` cached), or nullptr when it holds none with a figure.
const CeilingReport* MeasuredCeilings(const RunResult& run, const std::string& device_id) {
  for (const CeilingReport& c : run.ceilings) {
    if (c.device_id != device_id) continue;
    const bool has_peak = std::any_of(c.measured.peak_gflops.begin(), c.measured.peak_gflops.end(),
                                      [](const auto& p) { return Finite(p.second).value_or(0) > 0; });
    if (has_peak || Finite(c.measured.memory_bandwidth_gbps).value_or(0) > 0) return &c;
  }
  return nullptr;
}

// The ONNX node whose output a layer's drift compares: a fused kernel's output is its last node's
// (Conv+BatchNorm+Relu → the Relu's), and an unfused layer's its own.
std::string OutputNode(const LayerResult& layer) {
  return layer.onnx_nodes.empty() ? layer.name : layer.onnx_nodes.back();
}

// The property a series or bar set keeps its points' nodes in: one entry per point, the nodes joined
// by '\n' (a QStringList property needs no extra metatype).
constexpr char kNodesProperty[] = "chipfit_nodes";
// The property a chart keeps its plot's note in (ChartNote).
constexpr char kNoteProperty[] = "chipfit_note";

QString JoinNodes(const LayerResult& layer) {
  QStringList nodes;
  if (layer.onnx_nodes.empty()) nodes << Q(layer.name);
  for (const std::string& n : layer.onnx_nodes) nodes << Q(n);
  return nodes.join(QChar('\n'));
}

void TagNodes(QObject* series_or_set, const QStringList& joined) {
  series_or_set->setProperty(kNodesProperty, joined);
  if (auto* xy = qobject_cast<QXYSeries*>(series_or_set)) xy->setSelectedColor(kSelectionColor);
  if (auto* set = qobject_cast<QBarSet*>(series_or_set)) set->setSelectedColor(kSelectionColor);
}

// Every ok target's ONNX nodes in one order that keeps each target's execution order: a node the
// order lacks goes right after the node the target ran before it. Targets fuse differently, so no
// single target's layer list names every node.
std::vector<std::string> MergedNodeOrder(const RunResult& run) {
  // A list with an index into it: linear in the layers, so a 5,000-node model draws at once.
  std::list<std::string> order;
  std::unordered_map<std::string, std::list<std::string>::iterator> where;
  for (const auto& t : run.targets) {
    if (t->status != "ok") continue;
    auto previous = order.end();  // where this target's previous node sits in `order`
    for (const LayerResult& layer : t->layers) {
      const std::vector<std::string> nodes =
          layer.onnx_nodes.empty() ? std::vector<std::string>{layer.name} : layer.onnx_nodes;
      for (const std::string& node : nodes) {
        if (const auto found = where.find(node); found != where.end()) {
          previous = found->second;
          continue;
        }
        previous = order.insert(previous == order.end() ? order.begin() : std::next(previous), node);
        where.emplace(node, previous);
      }
    }
  }
  return {order.begin(), order.end()};
}

}  // namespace

QFont ChartFont(qreal point_size, bool bold) {
  QFont font = QApplication::font();
  // The family the font resolves to ("DejaVu Sans"), not an alias ("Sans Serif") that an SVG viewer
  // would not know.
  font.setFamily(QFontInfo(font).family());
  font.setPointSizeF(point_size);
  font.setBold(bold);
  return font;
}

// `run` is unused since colours come from the target alone; kept so every chart takes the run.
std::unique_ptr<QChart> LayerTimeChart(const RunResult& /*run*/, const TargetResult& target, int top_n,
                                       int label_chars) {
  const std::string name = target.target.ToString();
  const std::vector<LayerRow> all = LayersByTime(target);
  const size_t shown = std::min(all.size(), static_cast<size_t>(std::max(top_n, 1)));
  auto chart =
      NewChart(all.empty()          ? Q(name + " — no layer times (" + target.status + ")")
               : shown < all.size() ? Q(name + " — top " + std::to_string(shown) + " of " + std::to_string(all.size()) +
                                        " layers by p50 device time")
                                    : Q(name + " — " + std::to_string(all.size()) + " layers by p50 device time"));
  chart->legend()->hide();
  if (all.empty()) return chart;

  double max_ms = 0, total_ms = 0;
  for (const LayerRow& r : all) total_ms += r.p50;
  for (size_t i = 0; i < shown; ++i) max_ms = std::max(max_ms, all[i].p50);
  const bool micro = max_ms < 1.0;
  const double scale = micro ? 1e3 : 1.0;

  auto* set = new QBarSet(Q(name));
  set->setColor(TargetColor(name));
  set->setBorderColor(TargetColor(name).darker(120));
  set->setLabelColor(QColor(0x22, 0x22, 0x22));
  set->setLabelFont(ChartFont(7.5));
  QStringList categories;
  std::set<QString> seen;
  // Bar categories run bottom to top: append the fastest first so the slowest is on top.
  QStringList bar_nodes, tips;
  for (size_t k = shown; k-- > 0;) {
    const LayerRow& r = all[k];
    QString label = label_chars > 0 ? Elide(Q(r.layer->name), label_chars)
                                    : Elide(Q(r.layer->name), 30) + " (" + Elide(Q(r.layer->op), 18) + ")";
    if (!seen.insert(label).second) label += QStringLiteral(" #%1").arg(r.index);  // categories must be unique
    categories.append(label);
    set->append(r.p50 * scale);
    bar_nodes << JoinNodes(*r.layer);
    tips << QStringLiteral("%1 (%2) on %3\np50 %4, %5 % of all layers")
                .arg(Q(r.layer->name), Q(r.layer->op), Q(name), Q(formats::FormatDuration(r.p50)))
                .arg(total_ms > 0 ? r.p50 / total_ms * 100 : 0, 0, 'f', 1);
  }
  TagNodes(set, bar_nodes);
  SetToolTips(set, tips);
  auto* series = new QHorizontalBarSeries;
  series->append(set);
  series->setBarWidth(0.72);
  series->setLabelsVisible(true);
  series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
  series->setLabelsFormat(QStringLiteral("@value"));
  series->setLabelsPrecision(3);
  AddHorizontalBarAxes(*chart, series, categories, max_ms * scale * 1.2,
                       QStringLiteral("p50 device time (%1); all %2 layers: %3")
                           .arg(micro ? QStringLiteral("µs") : QStringLiteral("ms"))
                           .arg(all.size())
                           .arg(Q(formats::FormatDuration(total_ms))));
  return chart;
}

std::vector<std::string> RooflineDevices(const RunResult& run) {
  std::vector<std::string> out;
  for (const auto& t : run.targets) {
    if (t->status != "ok") continue;
    const std::string device = t->target.DeviceId();
    if (std::find(out.begin(), out.end(), device) == out.end()) out.push_back(device);
  }
  // A device measured but not profiled in this run still has its ceilings to show.
  for (const CeilingReport& c : run.ceilings) {
    if (std::find(out.begin(), out.end(), c.device_id) == out.end() && MeasuredCeilings(run, c.device_id) != nullptr) {
      out.push_back(c.device_id);
    }
  }
  return out;
}

namespace {

// One roof line: a target's measured ceilings (or, on a device no target ran on, one precision's).
struct Roof {
  std::string target, precision;
  std::optional<double> peak, bandwidth;
  QColor color;
};

// What a layer can reach at intensity `ai` under `roof`: min(peak, ai × bandwidth).
std::optional<double> Attainable(const Roof& roof, double ai) {
  std::optional<double> v;
  if (roof.bandwidth) v = *roof.bandwidth * ai;
  if (roof.peak) v = v ? std::min(*v, *roof.peak) : *roof.peak;
  return v;
}

QString RateUnit(const std::string& precision) {
  return precision == "int8" ? QStringLiteral("GOP/s") : QStringLiteral("GFLOP/s");
}

// The hover readout of a roofline point: the layer, where it sits, how long it took, against its roof.
QString RooflineReadout(const LayerResult& l, const std::string& target, const std::optional<double>& roof) {
  QStringList lines;
  lines << QStringLiteral("%1 (%2) on %3").arg(Q(l.name), Q(l.op), Q(target));
  lines << QStringLiteral("%1 %2 at %3 FLOP/byte")
               .arg(Q(formats::FormatSig(l.gflops_per_s)), RateUnit(l.precision),
                    Q(formats::FormatSig(l.arithmetic_intensity)));
  lines << QStringLiteral("p50 %1 · %2 FLOP · %3 moved")
               .arg(Q(formats::FormatDuration(l.time_p50_ms)), Q(formats::FormatSi(static_cast<double>(l.flops))),
                    Q(formats::FormatBytes(static_cast<double>(l.bytes_read + l.bytes_written))));
  if (roof && *roof > 0) {
    const double share = l.gflops_per_s / *roof;
    lines << (share > 1.02 ? QStringLiteral("above the measured roof (%1× of it)").arg(share, 0, 'f', 2)
                           : QStringLiteral("%1 % of the measured roof").arg(share * 100, 0, 'f', 0));
  }
  if (!l.bound.empty()) lines << Q(l.bound) + QStringLiteral("-bound");
  return lines.join(QLatin1Char('\n'));
}

// What the plot says of its ceilings: when and how they were measured, and why layers beat them.
// `above`: layers over their roof; `above_slope`: those of them left of the ridge point (memory-bound).
QString CeilingNoteText(const RunResult& run, const CeilingReport* report, int above, int above_slope) {
  QStringList lines;
  if (report != nullptr) {
    QString when = Q(report->measured_at.substr(0, 16));
    when.replace(QLatin1Char('T'), QLatin1Char(' '));
    const std::string how = formats::FormatCeilingConditions(*report);
    lines << QStringLiteral("Ceilings measured%1%2")
                 .arg(when.isEmpty() ? QString() : QStringLiteral(" ") + when + QStringLiteral(" UTC"),
                      how.empty() ? QString() : QStringLiteral(": ") + Q(how));
  }
  if (above > 0) {
    QStringList why;
    if (report != nullptr && report->MeasuredWhileBusy())
      why << QStringLiteral("the ceilings were measured while busy, so they are low");
    if (report != nullptr && report->threads > 0 && run.settings.threads > report->threads)
      why << QStringLiteral("they were measured with %1 thread(s), this run used %2")
                 .arg(report->threads)
                 .arg(run.settings.threads);
    if (why.isEmpty() && above_slope > 0)
      why << QStringLiteral("data that stays in cache moves faster than the memory bandwidth measured");
    if (why.isEmpty()) why << QStringLiteral("the peak's benchmark is not the fastest kernel on this device");
    lines << QStringLiteral("%1 layer(s) above the measured roof: %2").arg(above).arg(why.join(QStringLiteral("; ")));
  }
  return lines.join(QLatin1Char('\n'));
}

// The layers of each target to draw (those with FLOPs), with the ranges they span.
struct RooflinePoints {
  std::vector<std::pair<const TargetResult*, std::vector<std::pair<QPointF, const LayerResult*>>>> by_target;
  double x_lo = INFINITY, x_hi = 0, y_lo = INFINITY, y_hi = 0;
  int skipped = 0, plotted = 0;
};

RooflinePoints CollectPoints(const std::vector<const TargetResult*>& targets) {
  RooflinePoints out;
  for (const TargetResult* t : targets) {
    std::vector<std::pair<QPointF, const LayerResult*>> pts;
    for (const LayerResult& layer : t->layers) {
      const auto flops = Finite(static_cast<double>(layer.flops));
      const auto ai = Finite(layer.arithmetic_intensity);
      const auto gf = Finite(layer.gflops_per_s);
      // A log axis has no zero: copies, reorders and reshapes (no FLOPs) are counted, not drawn.
      if (!flops || *flops <= 0 || !ai || *ai <= 0 || !gf || *gf <= 0) {
        ++out.skipped;
        continue;
      }
      pts.push_back({QPointF(*ai, *gf), &layer});
      out.x_lo = std::min(out.x_lo, *ai);
      out.x_hi = std::max(out.x_hi, *ai);
      out.y_lo = std::min(out.y_lo, *gf);
      out.y_hi = std::max(out.y_hi, *gf);
      ++out.plotted;
    }
    out.by_target.push_back({t, std::move(pts)});
  }
  return out;
}

// The roofs: each target's measured ceilings; on a device no target ran on, its measured ceilings alone,
// every precision's peak (theoretical figures stay in run.ceilings and never reach a roof).
std::vector<Roof> CollectRoofs(const RunResult& run, const std::vector<const TargetResult*>& targets,
                               const std::string& device_id) {
  std::vector<Roof> roofs;
  for (const TargetResult* t : targets) {
    const std::optional<DeviceCeilings>& c = t->ceilings;
    if (!c) continue;
    const std::string name = t->target.ToString();
    // A bandwidth of 0 is "not measured", as is a precision without a peak.
    const auto bandwidth = Finite(c->memory_bandwidth_gbps);
    Roof roof{name, std::string(PrecisionName(t->target.precision)), std::nullopt,
              bandwidth && *bandwidth > 0 ? bandwidth : std::nullopt, TargetColor(name)};
    if (const auto peak = c->peak_gflops.find(t->target.precision); peak != c->peak_gflops.end())
      roof.peak = Finite(peak->second);
    if (roof.peak || roof.bandwidth) roofs.push_back(roof);
  }
  const CeilingReport* measured = targets.empty() ? MeasuredCeilings(run, device_id) : nullptr;
  if (measured != nullptr) {
    const auto bandwidth = Finite(measured->measured.memory_bandwidth_gbps);
    for (const auto& [precision, gflops] : measured->measured.peak_gflops) {
      const auto peak = Finite(gflops);
      if (!peak || *peak <= 0) continue;
      const std::string name = device_id + ":" + std::string(PrecisionName(precision));
      roofs.push_back({name, std::string(PrecisionName(precision)), peak,
                       bandwidth && *bandwidth > 0 ? bandwidth : std::nullopt, TargetColor(name)});
    }
    if (roofs.empty() && bandwidth && *bandwidth > 0) {
      roofs.push_back({{}, "memory", std::nullopt, bandwidth, QColor(0x55, 0x55, 0x55)});
    }
  }
  return roofs;
}

QLogValueAxis* DecadeAxis(double lo, double hi, const QString& title) {
  auto* axis = new QLogValueAxis;
  axis->setBase(10);
  // A hair beyond the decades, so rounding in log10 does not drop the first and last labels.
  axis->setRange(lo * 0.999, hi * 1.001);
  axis->setLabelFormat(QStringLiteral("%g"));
  axis->setMinorTickCount(-1);
  axis->setMinorGridLineColor(QColor(0xF0, 0xF2, 0xF5));
  StyleAxis(axis, title);
  return axis;
}

// Ceilings: bandwidth slope up to the ridge point, then flat at the precision's peak; their values
// written on the lines (ceiling labels first, so layer names give way to them).
void DrawRoofs(QChart& chart, const std::vector<Roof>& roofs, QAbstractAxis* x, QAbstractAxis* y, double x_lo,
               double x_hi, double y_lo, double y_hi, PointLabels& labels) {
  std::set<std::string> drawn;
  bool bandwidth_named = false;
  int peaks_named = 0;
  for (const Roof& r : roofs) {
    const std::string key =
        (r.peak ? std::to_string(*r.peak) : "-") + "|" + (r.bandwidth ? std::to_string(*r.bandwidth) : "-");
    if (!drawn.insert(key).second) continue;  // identical ceilings: one line
    auto* line = new QLineSeries;
    QPen pen(r.color);
    pen.setWidthF(1.6);
    pen.setStyle(Qt::DashLine);
    line->setPen(pen);
    line->setName(Q(r.precision) + QStringLiteral(" roof"));
    double start = x_lo;
    if (r.bandwidth && *r.bandwidth > 0) {
      start = std::max(x_lo, y_lo / *r.bandwidth);
      const double end = r.peak ? std::min(x_hi, *r.peak / *r.bandwidth) : std::min(x_hi, y_hi / *r.bandwidth);
      if (start < end) line->append(start, start * *r.bandwidth);
      line->append(end, end * *r.bandwidth);
    }
    if (r.peak) {
      if (line->count() == 0) line->append(x_lo, *r.peak);
      line->append(x_hi, *r.peak);
    }
    chart.addSeries(line);
    line->attachAxis(x);
    line->attachAxis(y);
    if (r.peak) {
      labels.Add(
          line, QPointF(x_hi, *r.peak),
          QStringLiteral("%1 peak %2 %3").arg(Q(r.precision), Q(formats::FormatSig(*r.peak)), RateUnit(r.precision)),
          r.color, peaks_named++ == 0 ? PointLabels::Side::kAboveLeft : PointLabels::Side::kBelowLeft);
    }
    if (r.bandwidth && *r.bandwidth > 0 && !bandwidth_named && line->count() > 1) {
      // Above the slope, where no layer can be unless it beats the roof.
      labels.Add(line, line->at(0), QStringLiteral("memory %1 GB/s").arg(Q(formats::FormatSig(*r.bandwidth))),
                 QColor(0x44, 0x44, 0x44), PointLabels::Side::kAboveSlope, line->at(1));
      bandwidth_named = true;
    }
    // The line's colour already matches its target's points: the legend lists the targets only.
    for (QLegendMarker* marker : chart.legend()->markers(line)) marker->setVisible(false);
  }
}

const Roof* RoofOf(const std::vector<Roof>& roofs, const std::string& target) {
  for (const Roof& r : roofs) {
    if (r.target == target) return &r;
  }
  return nullptr;
}

// Each target's layers as one scatter series in its colour, every point with its nodes and readout; the
// three slowest layers of each target named on the plot.
void DrawRooflinePoints(QChart& chart, const RooflinePoints& points, const std::vector<Roof>& roofs, QAbstractAxis* x,
                        QAbstractAxis* y, PointLabels& labels) {
  std::set<std::string> named;
  for (const auto& [t, pts] : points.by_target) {
    if (pts.empty()) continue;
    const std::string name = t->target.ToString();
    const Roof* roof = RoofOf(roofs, name);
    const QColor color = TargetColor(name);
    auto* scatter = new QScatterSeries;
    scatter->setName(Q(name) + QStringLiteral(" layers"));
    scatter->setColor(color);
    scatter->setBorderColor(color.darker(140));
    scatter->setMarkerSize(9);
    QStringList point_nodes, tips;
    for (const auto& p : pts) {
      scatter->append(p.first);
      point_nodes << JoinNodes(*p.second);
      tips << RooflineReadout(*p.second, name, roof != nullptr ? Attainable(*roof, p.first.x()) : std::nullopt);
    }
    TagNodes(scatter, point_nodes);
    SetToolTips(scatter, tips);
    chart.addSeries(scatter);
    scatter->attachAxis(x);
    scatter->attachAxis(y);
    for (const auto& p : pts) labels.AddObstacle(scatter, p.first);
    // Name the three slowest layers of each target, each name once per chart: the same layer on
    // several targets sits in one cluster.
    std::vector<std::pair<double, size_t>> by_time;
    for (size_t i = 0; i < pts.size(); ++i) by_time.push_back({Finite(pts[i].second->time_p50_ms).value_or(0), i});
    std::sort(by_time.begin(), by_time.end(), std::greater<>());
    for (size_t k = 0; k < std::min<size_t>(3, by_time.size()); ++k) {
      const auto& [p, layer] = pts[by_time[k].second];
      if (!named.insert(layer->name).second) continue;
      labels.Add(scatter, p, Elide(Q(layer->name), 20), color);
    }
  }
}

}  // namespace

QString ChartNote(const QChart& chart) { return chart.property(kNoteProperty).toString(); }

std::unique_ptr<QChart> RooflineChart(const RunResult& run, const std::string& device_id) {
  std::vector<const TargetResult*> targets;
  for (const auto& t : run.targets) {
    if (t->status == "ok" && t->target.DeviceId() == device_id) targets.push_back(t.get());
  }
  std::string device_name = targets.empty() ? std::string() : targets.front()->device_name;
  for (const DeviceInfo& d : run.machine.devices) {
    if (device_name.empty() && d.Id() == device_id) device_name = d.name;
  }
  // Points first: the axes' ranges come from them and from the ceilings.
  const RooflinePoints points = CollectPoints(targets);
  std::vector<Roof> roofs = CollectRoofs(run, targets, device_id);
  double x_lo = points.x_lo, x_hi = points.x_hi, y_lo = points.y_lo, y_hi = points.y_hi;

  // A target's ceilings are always the measured ones (`chipfit devices --measure`): theoretical
  // figures stay in run.ceilings and never reach a roof.
  std::string title = "Roofline — " + device_id + (device_name.empty() ? "" : " (" + device_name + ")");
  if (roofs.empty()) title += " — no measured ceilings";
  // Roofs measured while other processes held the CPUs are low: every layer looks closer to them.
  const CeilingReport* ceiling_report = MeasuredCeilings(run, device_id);
  const std::string busy = ceiling_report != nullptr && ceiling_report->MeasuredWhileBusy() && !roofs.empty()
                               ? " — ceilings measured while busy (low)"
                               : "";
  title += busy;
  auto chart = NewChart(Q(title));
  if (points.plotted == 0 && (roofs.empty() || !targets.empty())) {
    chart->setTitle(Q(title + (targets.empty() ? " — no target ran here" : " — no layer with FLOPs")));
    chart->legend()->hide();
    return chart;
  }
  if (points.plotted == 0) {
    // Without the device's name, which the devices table gives: the title must fit the chart.
    chart->setTitle(Q("Roofline — " + device_id + ": measured ceilings, no target ran here" + busy));
    chart->legend()->hide();
    // The ceilings alone: from a tenth of a FLOP per byte past the ridge points, down to a hundredth
    // of the peaks.
    x_lo = 0.1;
    x_hi = 1;
    for (const Roof& r : roofs) {
      if (r.peak) y_lo = std::min(y_lo, *r.peak / 100);
      if (r.bandwidth) y_lo = std::min(y_lo, *r.bandwidth * x_lo);
      y_hi = std::max(y_hi, r.peak ? *r.peak : *r.bandwidth * 10);
    }
  }
  // Highest roof first: its value goes above its line, the lower ones' below theirs, so no label
  // sits on another roof's line.
  std::stable_sort(roofs.begin(), roofs.end(),
                   [](const Roof& a, const Roof& b) { return a.peak.value_or(0) > b.peak.value_or(0); });
  for (const Roof& r : roofs) {
    // Room above the highest roof for its value.
    if (r.peak) y_hi = std::max(y_hi, *r.peak * 2);
    if (r.peak && r.bandwidth && *r.bandwidth > 0) x_hi = std::max(x_hi, *r.peak / *r.bandwidth);
  }
  // Whole decades with room around the points, so no marker sits on the frame.
  x_lo = Floor10(x_lo / 1.5);
  x_hi = Ceil10(x_hi * 1.5);
  y_lo = Floor10(y_lo / 1.5);
  y_hi = Ceil10(y_hi * 1.5);
  if (x_hi / x_lo < 100) x_hi = x_lo * 100;
  if (y_hi / y_lo < 100) y_lo = y_hi / 100;

  auto* x = DecadeAxis(
      x_lo, x_hi,
      points.skipped > 0
          ? QStringLiteral("arithmetic intensity (FLOP/byte); %1 layers without FLOPs not shown").arg(points.skipped)
          : QStringLiteral("arithmetic intensity (FLOP/byte)"));
  chart->addAxis(x, Qt::AlignBottom);
  auto* y = DecadeAxis(y_lo, y_hi, QStringLiteral("achieved GFLOP/s (p50)"));
  chart->addAxis(y, Qt::AlignLeft);

  auto* labels = new PointLabels(chart.get());
  DrawRoofs(*chart, roofs, x, y, x_lo, x_hi, y_lo, y_hi, *labels);
  DrawRooflinePoints(*chart, points, roofs, x, y, *labels);
  int above = 0, above_slope = 0;
  for (const auto& [t, pts] : points.by_target) {
    const Roof* roof = RoofOf(roofs, t->target.ToString());
    if (roof == nullptr) continue;
    for (const auto& p : pts) {
      const auto attainable = Attainable(*roof, p.first.x());
      if (!attainable || p.first.y() <= *attainable * 1.02) continue;
      ++above;
      const bool left_of_ridge = roof->bandwidth && (!roof->peak || p.first.x() < *roof->peak / *roof->bandwidth);
      above_slope += left_of_ridge ? 1 : 0;
    }
  }
  const QString note = CeilingNoteText(run, roofs.empty() ? nullptr : ceiling_report, above, above_slope);
  if (!note.isEmpty()) {
    labels->SetNote(note);
    chart->setProperty(kNoteProperty, note);
  }
  return chart;
}

namespace {

// A short node name for a crowded axis: the last path segments that fit ("/backbone/stage2/conv/Conv" →
// "conv/Conv"), else the start and end of the name.
QString ShortNodeName(const QString& name, int max_chars) {
  if (name.size() <= max_chars) return name;
  const QStringList parts = name.split(QLatin1Char('/'), Qt::SkipEmptyParts);
  QString tail;
  for (qsizetype i = parts.size(); i-- > 0;) {
    const QString candidate = tail.isEmpty() ? parts[i] : parts[i] + QLatin1Char('/') + tail;
    if (candidate.size() > max_chars) break;
    tail = candidate;
  }
  return tail.isEmpty() ? Elide(name, max_chars) : tail;
}

// The drift chart's node names on its x axis, upright (rotated a quarter turn, so each takes a line's
// height of the axis) and as many as the plot's width holds: every k-th node when they do not all fit,
// recomputed as the chart is resized. Qt's own truncation is off: it cut rotated names to "…". A chart
// too short for the names and the axis title (the Layers page's pane) leaves the title out.
class NodeAxisLabels : public QObject {
 public:
  NodeAxisLabels(QChart* chart, QCategoryAxis* axis, const std::vector<std::string>& columns)
      : QObject(chart), axis_(axis) {
    for (const std::string& c : columns) columns_ << ShortNodeName(Q(c), kMaxChars);
    axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    axis->setRange(-0.5, static_cast<double>(columns_.size()) - 0.5);
    axis->setTruncateLabels(false);
    axis->setLabelsFont(ChartFont(7));
    if (columns_.size() > 6) axis->setLabelsAngle(-90);
    // Before any layout (a test, a report's first pass): two dozen names at most.
    Relabel(columns_.size() > 24 ? static_cast<int>(std::ceil(columns_.size() / 24.0)) : 1);
    connect(chart, &QChart::plotAreaChanged, this, [this, chart](const QRectF& plot) {
      const qsizetype fit = std::max<qsizetype>(1, static_cast<qsizetype>(plot.width() / kPixelsPerLabel));
      Relabel(static_cast<int>((columns_.size() + fit - 1) / fit));
      const bool room = chart->size().height() >= kTitleMinHeight || columns_.size() <= 6;
      if (axis_->isTitleVisible() != room) axis_->setTitleVisible(room);
    });
  }

 private:
  static constexpr int kMaxChars = 12;
  static constexpr double kPixelsPerLabel = 16;   // a 7 pt line's height and a gap
  static constexpr double kTitleMinHeight = 330;  // chart height with room for upright names and a title

  void Relabel(int every) {
    every = std::max(every, 1);
    if (every == every_) return;
    every_ = every;
    for (const QString& label : axis_->categoriesLabels()) axis_->remove(label);
    axis_->setStartValue(-0.5);
    std::set<QString> seen;
    for (qsizetype i = 0; i < columns_.size(); i += every) {
      QString label = columns_[i];
      if (!seen.insert(label).second) label += QStringLiteral(" #%1").arg(i);  // labels must be unique
      axis_->append(label, static_cast<double>(i));
    }
  }

  QCategoryAxis* axis_;
  QStringList columns_;
  int every_ = 0;
};

}  // namespace

std::unique_ptr<QChart> DriftChart(const RunResult& run) {
  // One column per ONNX node whose output some target compared, in model order: the same node is
  // the same x on every target, however each fused its layers; a node a target has no value for
  // (fused into a later kernel, or not compared) is a gap in its line.
  struct Line {
    std::string target;
    std::map<std::string, double> by_node;  // sqnr as measured; the sentinel mapped below
  };
  std::vector<Line> lines;
  std::set<std::string> compared;
  double lo = INFINITY, hi = -INFINITY;
  bool any_exact = false;
  for (const auto& t : run.targets) {
    if (t->status != "ok") continue;
    Line line{t->target.ToString(), {}};
    for (const LayerResult& layer : t->layers) {
      const std::optional<DriftStats>& drift = layer.drift;
      const auto db = drift ? Finite(drift->sqnr_db) : std::nullopt;
      if (!db) continue;  // no reference value (inserted copies, reorders)
      // Two kernels ending at one node (a device copy after it): the first measured stands.
      if (!line.by_node.emplace(OutputNode(layer), *db).second) continue;
      compared.insert(OutputNode(layer));
      if (*db >= kExactSqnrDb) {
        any_exact = true;
      } else {
        lo = std::min(lo, *db);
        hi = std::max(hi, *db);
      }
    }
    if (!line.by_node.empty()) lines.push_back(std::move(line));
  }
  auto chart = NewChart(QStringLiteral("Accuracy drift per layer (SQNR against the reference; higher is closer)"));
  if (lines.empty()) {
    chart->setTitle(QStringLiteral("Accuracy drift per layer — no drift measured"));
    chart->legend()->hide();
    return chart;
  }
  std::vector<std::string> columns;
  for (const std::string& node : MergedNodeOrder(run)) {
    if (compared.count(node) != 0) columns.push_back(node);
  }
  const int last = static_cast<int>(columns.size()) - 1;
  if (!std::isfinite(lo)) lo = hi = kDriftThresholdDb;  // every value exact
  // Four or five rows of 10, 20 or 50 dB: more would not fit a short chart's axis.
  const double step = std::max(NiceStep(std::max(hi, kDriftThresholdDb) - std::min(0.0, lo), 4), 10.0);
  const double y_min = std::min(0.0, std::floor(lo / step) * step);
  const double grid_top = std::max(std::ceil(hi / step) * step, 2 * step);
  // Identical values sit on their own row above the grid, labelled "exact", so a 200 dB sentinel
  // neither flattens the real values nor reads as a measurement.
  const double exact_y = grid_top + std::min(step, 20.0);
  const double y_max = any_exact ? exact_y + std::min(step, 20.0) / 2 : grid_top;

  auto* x = new QCategoryAxis;
  StyleAxis(x, QStringLiteral("ONNX node in model order (a fused layer at its last)"));
  chart->addAxis(x, Qt::AlignBottom);
  new NodeAxisLabels(chart.get(), x, columns);
  auto* y = new QCategoryAxis;
  y->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  y->setMin(y_min);
  y->setMax(y_max);
  y->setStartValue(y_min);
  for (double v = y_min; v <= grid_top + 1e-9; v += step) y->append(QString::number(v), v);
  if (any_exact) y->append(QStringLiteral("exact"), exact_y);
  StyleAxis(y, QStringLiteral("drift SQNR (dB)"));
  // Short labels that Qt would cut to "…" on a short chart, whose row is lower than their text.
  y->setTruncateLabels(false);
  chart->addAxis(y, Qt::AlignLeft);

  auto* threshold = new QLineSeries;
  threshold->setName(QStringLiteral("%1 dB threshold").arg(kDriftThresholdDb));
  QPen pen(QColor(0x88, 0x88, 0x88));
  pen.setStyle(Qt::DashLine);
  pen.setWidthF(1.2);
  threshold->setPen(pen);
  threshold->append(-0.5, kDriftThresholdDb);
  threshold->append(last + 0.5, kDriftThresholdDb);
  chart->addSeries(threshold);
  threshold->attachAxis(x);
  threshold->attachAxis(y);

  auto attach = [&](QXYSeries* series) {
    chart->addSeries(series);
    series->attachAxis(x);
    series->attachAxis(y);
  };
  for (const Line& line : lines) {
    const QColor color = TargetColor(line.target);
    // The markers carry the target's name in the legend; the lines between them stop at every gap.
    auto* points = new QScatterSeries;
    points->setName(Q(line.target));
    points->setColor(color);
    points->setBorderColor(color);
    points->setMarkerSize(7);
    QLineSeries* segment = nullptr;
    QStringList point_nodes, tips;
    for (int i = 0; i <= last; ++i) {
      const auto it = line.by_node.find(columns[i]);
      if (it == line.by_node.end()) {
        segment = nullptr;
        continue;
      }
      const QPointF pt(i, it->second >= kExactSqnrDb ? exact_y : it->second);
      points->append(pt);
      point_nodes << Q(columns[i]);
      tips << QStringLiteral("%1 on %2\nSQNR %3%4")
                  .arg(Q(columns[i]), Q(line.target), Q(formats::FormatSqnr(it->second)),
                       it->second < kDriftThresholdDb
                           ? QStringLiteral(", below the %1 dB threshold").arg(kDriftThresholdDb)
                           : QString());
      if (segment == nullptr) {
        segment = new QLineSeries;
        QPen p(color);
        p.setWidthF(2);
        segment->setPen(p);
        attach(segment);
        for (QLegendMarker* marker : chart->legend()->markers(segment)) marker->setVisible(false);
      }
      segment->append(pt);
    }
    TagNodes(points, point_nodes);
    SetToolTips(points, tips);
    attach(points);
  }
  return chart;
}

std::unique_ptr<QChart> EnergyChart(const RunResult& run, int top_layers) {
  struct Row {
    std::string target, source;
    double total;
    std::map<std::string, double> by_layer;
  };
  std::vector<Row> rows;
  std::map<std::string, double> layer_sum;
  bool all_estimated = true;
  for (const auto& t : run.targets) {
    const auto value = t->energy ? Finite(t->energy->joules) : std::nullopt;
    if (!value) continue;
    Row row{t->target.ToString(), t->energy->source, *value, {}};
    all_estimated = all_estimated && row.source.rfind("estimated", 0) == 0;
    for (const LayerResult& layer : t->layers) {
      const auto lv = layer.energy ? Finite(layer.energy->joules) : std::nullopt;
      if (!lv) continue;
      row.by_layer[layer.name] += *lv;
      layer_sum[layer.name] += *lv;
    }
    rows.push_back(std::move(row));
  }
  auto chart =
      NewChart(all_estimated ? QStringLiteral("Energy per inference — ESTIMATED by the energy model, not measured")
                             : QStringLiteral("Energy per inference (source on each bar)"));
  if (rows.empty()) {
    chart->setTitle(QStringLiteral("Energy per inference — none measured or estimated"));
    chart->legend()->hide();
    return chart;
  }
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& [name, sum] : layer_sum) ranked.push_back({sum, name});
  std::sort(ranked.begin(), ranked.end(), std::greater<>());
  if (ranked.size() > static_cast<size_t>(std::max(top_layers, 0))) ranked.resize(std::max(top_layers, 0));

  double max_total = 0;
  for (const Row& r : rows) max_total = std::max(max_total, r.total);
  const auto [scale, unit] = EnergyUnit(max_total);

  auto* series = new QHorizontalStackedBarSeries;
  series->setBarWidth(0.6);
  std::vector<QBarSet*> sets;
  for (size_t i = 0; i < ranked.size(); ++i) {
    auto* set = new QBarSet(Elide(Q(ranked[i].second), 24));
    set->setColor(kLayerPalette[i % std::size(kLayerPalette)]);
    set->setBorderColor(Qt::white);
    sets.push_back(set);
  }
  auto* other =
      new QBarSet(ranked.empty() ? QStringLiteral("total (no per-layer breakdown)") : QStringLiteral("other layers"));
  other->setColor(kOtherColor);
  other->setBorderColor(Qt::white);
  QStringList categories;
  std::vector<QStringList> tips(ranked.size());
  QStringList other_tips;
  const auto tip = [](const std::string& what, const Row& r, double joules) {
    return QStringLiteral("%1 on %2\n%3 of %4 per inference (%5)")
        .arg(Q(what), Q(r.target), Q(formats::FormatEnergy(joules)), Q(formats::FormatEnergy(r.total)), Q(r.source));
  };
  // Bottom to top: reverse, so the run's first target is on top.
  for (size_t k = rows.size(); k-- > 0;) {
    const Row& r = rows[k];
    double top_sum = 0;
    for (size_t i = 0; i < ranked.size(); ++i) {
      const auto it = r.by_layer.find(ranked[i].second);
      const double v = it == r.by_layer.end() ? 0 : it->second;
      top_sum += v;
      sets[i]->append(v * scale);
      tips[i] << tip(ranked[i].second, r, v);
    }
    other->append(std::max(0.0, r.total - top_sum) * scale);
    other_tips << tip(ranked.empty() ? "every layer" : "other layers", r, std::max(0.0, r.total - top_sum));
    // In the chart's one unit, as the report's tables give it.
    categories << Q(r.target + "  " + formats::FormatShort(r.total * scale, 3) + " ") + unit +
                      Q("  (" + r.source + ")");
  }
  for (size_t i = 0; i < sets.size(); ++i) {
    SetToolTips(sets[i], tips[i]);
    series->append(sets[i]);
  }
  SetToolTips(other, other_tips);
  series->append(other);
  AddHorizontalBarAxes(*chart, series, categories, max_total * scale * 1.05,
                       QStringLiteral("energy per inference (%1), split by layer").arg(unit));
  return chart;
}

std::unique_ptr<QChart> CrossTargetRooflineChart(const RunResult& run, const std::string& device_id, int top_n) {
  // The device's ok targets in precision order: the order a node's points are joined in.
  static const std::map<std::string, int> kRank = {{"fp32", 0}, {"tf32", 1}, {"fp16", 2}, {"bf16", 3}, {"int8", 4}};
  std::vector<const TargetResult*> targets;
  for (const auto& t : run.targets) {
    if (t->status == "ok" && t->target.DeviceId() == device_id) targets.push_back(t.get());
  }
  const auto rank = [&](const TargetResult* t) {
    const auto it = kRank.find(std::string(PrecisionName(t->target.precision)));
    return it == kRank.end() ? 9 : it->second;
  };
  std::stable_sort(targets.begin(), targets.end(),
                   [&](const TargetResult* a, const TargetResult* b) { return rank(a) < rank(b); });
  // Compute kernels by their first ONNX node (the node that does the work: a Conv fused with its
  // activation is named after the Conv on every target).
  std::map<std::string, double> slowest;
  std::vector<std::map<std::string, const LayerResult*>> kernels(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    for (const LayerResult& l : targets[i]->layers) {
      if (l.flops <= 0 || !(Finite(l.gflops_per_s).value_or(0) > 0) ||
          !(Finite(l.arithmetic_intensity).value_or(0) > 0))
        continue;
      kernels[i].emplace(l.name, &l);
      slowest[l.name] = std::max(slowest[l.name], Finite(l.time_p50_ms).value_or(0));
    }
  }
  std::vector<std::pair<double, std::string>> by_time;
  for (const auto& [node, ms] : slowest) by_time.push_back({ms, node});
  std::sort(by_time.begin(), by_time.end(), std::greater<>());
  if (by_time.size() > static_cast<size_t>(std::max(top_n, 1))) by_time.resize(static_cast<size_t>(std::max(top_n, 1)));

  auto chart = NewChart(Q("Cross-target roofline — " + device_id + ": the " + std::to_string(by_time.size()) +
                          " slowest layers on each precision, joined"));
  if (targets.size() < 2 || by_time.empty()) {
    chart->setTitle(
        Q("Cross-target roofline — " + device_id +
          (targets.size() < 2 ? ": needs two or more precisions on this device" : ": no layer with FLOPs")));
    chart->legend()->hide();
    return chart;
  }
  double x_lo = INFINITY, x_hi = 0, y_lo = INFINITY, y_hi = 0;
  for (const auto& [ms, node] : by_time) {
    for (const auto& by_node : kernels) {
      const auto it = by_node.find(node);
      if (it == by_node.end()) continue;
      x_lo = std::min(x_lo, it->second->arithmetic_intensity);
      x_hi = std::max(x_hi, it->second->arithmetic_intensity);
      y_lo = std::min(y_lo, it->second->gflops_per_s);
      y_hi = std::max(y_hi, it->second->gflops_per_s);
    }
  }
  for (const TargetResult* t : targets) {
    if (!t->ceilings) continue;
    const auto peak = t->ceilings->peak_gflops.find(t->target.precision);
    if (peak != t->ceilings->peak_gflops.end() && Finite(peak->second).value_or(0) > 0)
      y_hi = std::max(y_hi, peak->second);
  }
  x_lo = Floor10(x_lo / 1.5);
  x_hi = Ceil10(x_hi * 1.5);
  y_lo = Floor10(y_lo / 1.5);
  y_hi = Ceil10(y_hi * 1.5);
  auto* x = DecadeAxis(x_lo, x_hi, QStringLiteral("arithmetic intensity (FLOP/byte)"));
  chart->addAxis(x, Qt::AlignBottom);
  auto* y = DecadeAxis(y_lo, y_hi, QStringLiteral("achieved GFLOP/s (p50)"));
  chart->addAxis(y, Qt::AlignLeft);
  const auto attach = [&](QXYSeries* series) {
    chart->addSeries(series);
    series->attachAxis(x);
    series->attachAxis(y);
  };
  // Each target's measured compute peak as a dashed line in its colour.
  for (const TargetResult* t : targets) {
    if (!t->ceilings) continue;
    const auto peak = t->ceilings->peak_gflops.find(t->target.precision);
    if (peak == t->ceilings->peak_gflops.end() || !(Finite(peak->second).value_or(0) > 0)) continue;
    auto* roof = new QLineSeries;
    QPen pen(TargetColor(t->target.ToString()));
    pen.setStyle(Qt::DashLine);
    roof->setPen(pen);
    roof->append(x_lo, peak->second);
    roof->append(x_hi, peak->second);
    attach(roof);
    for (QLegendMarker* marker : chart->legend()->markers(roof)) marker->setVisible(false);
  }
  // The moves: one thin line per node through its targets, in precision order.
  for (const auto& [ms, node] : by_time) {
    auto* path = new QLineSeries;
    QPen pen(QColor(0x90, 0x90, 0x90));
    pen.setWidthF(1.0);
    path->setPen(pen);
    for (const auto& by_node : kernels) {
      const auto it = by_node.find(node);
      if (it != by_node.end()) path->append(it->second->arithmetic_intensity, it->second->gflops_per_s);
    }
    attach(path);
    for (QLegendMarker* marker : chart->legend()->markers(path)) marker->setVisible(false);
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    const std::string name = targets[i]->target.ToString();
    auto* points = new QScatterSeries;
    points->setName(Q(name));
    points->setColor(TargetColor(name));
    points->setBorderColor(TargetColor(name).darker(140));
    points->setMarkerSize(9);
    QStringList point_nodes, tips;
    for (const auto& [ms, node] : by_time) {
      const auto it = kernels[i].find(node);
      if (it == kernels[i].end()) continue;
      points->append(it->second->arithmetic_intensity, it->second->gflops_per_s);
      point_nodes << JoinNodes(*it->second);
      tips << RooflineReadout(*it->second, name, std::nullopt);
    }
    TagNodes(points, point_nodes);
    SetToolTips(points, tips);
    attach(points);
  }
  return chart;
}

std::vector<QStringList> NodesOfPoints(const QObject* series_or_set) {
  std::vector<QStringList> out;
  for (const QString& joined : series_or_set->property(kNodesProperty).toStringList()) {
    out.push_back(joined.split(QChar('\n')));
  }
  return out;
}

void SetNodesOfPoints(QObject* series_or_set, const std::vector<QStringList>& nodes) {
  QStringList joined;
  for (const QStringList& n : nodes) joined << n.join(QChar('\n'));
  TagNodes(series_or_set, joined);
}

namespace {

QList<int> MatchingIndexes(const QObject* tagged, const QSet<QString>& want) {
  QList<int> indexes;
  const std::vector<QStringList> nodes = NodesOfPoints(tagged);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (std::any_of(nodes[i].begin(), nodes[i].end(), [&](const QString& n) { return want.contains(n); }))
      indexes << static_cast<int>(i);
  }
  return indexes;
}

}  // namespace

void HighlightNodes(QChart& chart, const QStringList& nodes) {
  const QSet<QString> want(nodes.begin(), nodes.end());
  for (QAbstractSeries* series : chart.series()) {
    if (auto* xy = qobject_cast<QXYSeries*>(series)) {
      if (!xy->property(kNodesProperty).isValid()) continue;
      const QList<int> picked = MatchingIndexes(xy, want);
      xy->deselectAllPoints();
      // Larger as well as recoloured: a red marker among orange ones is easy to miss.
      xy->clearPointsConfiguration(QXYSeries::PointConfiguration::Size);
      if (!picked.isEmpty()) xy->selectPoints(picked);
      if (auto* scatter = qobject_cast<QScatterSeries*>(xy)) {
        for (int i : picked)
          xy->setPointConfiguration(i, QXYSeries::PointConfiguration::Size, scatter->markerSize() * 1.8);
      }
    } else if (auto* bars = qobject_cast<QAbstractBarSeries*>(series)) {
      for (QBarSet* set : bars->barSets()) {
        if (!set->property(kNodesProperty).isValid()) continue;
        const QList<int> picked = MatchingIndexes(set, want);
        set->deselectAllBars();
        if (!picked.isEmpty()) set->selectBars(picked);
      }
    }
  }
}

QStringList HighlightedNodes(const QChart& chart) {
  QStringList out;
  const auto add = [&out](const QStringList& nodes) {
    for (const QString& n : nodes) {
      if (!out.contains(n)) out << n;
    }
  };
  for (QAbstractSeries* series : chart.series()) {
    if (auto* xy = qobject_cast<QXYSeries*>(series)) {
      const std::vector<QStringList> nodes = NodesOfPoints(xy);
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (xy->isPointSelected(static_cast<int>(i))) add(nodes[i]);
      }
    } else if (auto* bars = qobject_cast<QAbstractBarSeries*>(series)) {
      for (QBarSet* set : bars->barSets()) {
        const std::vector<QStringList> nodes = NodesOfPoints(set);
        for (size_t i = 0; i < nodes.size(); ++i) {
          if (set->isBarSelected(static_cast<int>(i))) add(nodes[i]);
        }
      }
    }
  }
  return out;
}

QStringList NodesNear(const QXYSeries& series, QPointF value) {
  const std::vector<QStringList> nodes = NodesOfPoints(&series);
  const int best = NearestPoint(series, value);
  return best < 0 || best >= static_cast<int>(nodes.size()) ? QStringList() : nodes[static_cast<size_t>(best)];
}

std::vector<RunChart> BuildRunCharts(const RunResult& run) {
  std::vector<RunChart> out;
  constexpr int kWidth = 580;  // two side by side in a report page 1280 px wide
  for (const auto& t : run.targets) {
    if (t->status != "ok") continue;
    const std::string name = t->target.ToString();
    const int bars = static_cast<int>(std::min<size_t>(t->layers.size(), 10));
    std::string id = "layers-" + name;
    std::replace(id.begin(), id.end(), ':', '-');
    out.push_back({id, "Per-layer device time on " + name + " (p50 of the observed runs).",
                   QSize(kWidth, 110 + 26 * std::max(bars, 1)), LayerTimeChart(run, *t, 10)});
  }
  for (const std::string& device : RooflineDevices(run)) {
    std::string id = "roofline-" + device;
    std::replace(id.begin(), id.end(), ':', '-');
    const bool profiled = std::any_of(run.targets.begin(), run.targets.end(), [&](const auto& t) {
      return t->status == "ok" && t->target.DeviceId() == device;
    });
    out.push_back({id,
                   profiled ? "Roofline of " + device +
                                  ": each layer's achieved GFLOP/s against its arithmetic intensity, under the "
                                  "device's ceilings (dashed)."
                            : "Roofline ceilings of " + device +
                                  " as measured by chipfit devices --measure (no target of this run ran on it).",
                   QSize(kWidth, profiled ? 440 : 360), RooflineChart(run, device)});
  }
  out.push_back({"drift",
                 "Accuracy drift per layer: SQNR of each layer's output against the reference run on the same inputs, "
                 "matched across targets by ONNX node (a fused layer sits at its last node; a gap is a node the "
                 "target has no value for).",
                 QSize(kWidth, 420), DriftChart(run)});
  int energy_rows = 0;
  for (const auto& t : run.targets) energy_rows += t->energy ? 1 : 0;
  out.push_back({"energy", "Energy per inference by target, split into the layers that use the most.",
                 QSize(kWidth, 150 + 40 * std::max(energy_rows, 1)), EnergyChart(run)});
  return out;
}

namespace {

// Puts the chart in a scene at `size` and lays it out now (QGraphicsWidget layouts otherwise wait
// for the event loop, which a headless report never runs).
class SceneFrame {
 public:
  SceneFrame(QChart& chart, QSize size)
      : chart_(chart), previous_scene_(chart.scene()), previous_geometry_(chart.geometry()) {
    scene_.addItem(&chart_);
    chart_.setPos(0, 0);
    chart_.resize(size);
    // Twice: a layout can change what the next one lays out (a title wrapped to the width, the drift
    // chart's node names thinned to it).
    for (int pass = 0; pass < 2; ++pass) {
      QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
      if (chart_.layout() != nullptr) chart_.layout()->activate();
    }
    scene_.setSceneRect(QRectF(QPointF(0, 0), size));
  }
  ~SceneFrame() {
    scene_.removeItem(&chart_);  // else our scene would delete it
    // A chart a view shows goes back where it was; another gets its whole title back.
    if (previous_scene_ != nullptr) {
      previous_scene_->addItem(&chart_);
      chart_.setGeometry(previous_geometry_);
    } else {
      RestoreFullTitle(chart_);
    }
  }
  SceneFrame(const SceneFrame&) = delete;
  SceneFrame& operator=(const SceneFrame&) = delete;

  void Render(QPainter& painter, QSize size) {
    scene_.render(&painter, QRectF(QPointF(0, 0), size), QRectF(QPointF(0, 0), size));
  }

 private:
  QGraphicsScene scene_;
  QChart& chart_;
  QGraphicsScene* previous_scene_;
  QRectF previous_geometry_;
};

}  // namespace

namespace {

// QSvgGenerator writes a <g> per painter state change, most of them empty, and the font family without
// a fallback; a report holds a dozen charts, so trim them (about halves the size) and let a viewer
// without the font fall back to its sans-serif.
// QRegularExpression, not std::regex: GCC 12 at the sanitizer build's -O1 warns inside <regex>.
QByteArray TidySvg(const QByteArray& svg) {
  QString text = QString::fromUtf8(svg);
  static const QRegularExpression kEmptyGroup(QStringLiteral(R"re(<g [^>]*>\s*</g>\s*)re"));
  static const QRegularExpression kIdentity(QStringLiteral(R"re( transform="matrix\(1,0,0,1,0,0\)")re"));
  static const QRegularExpression kFamily(QStringLiteral(R"re(font-family="([^",]+)")re"));
  text.remove(kEmptyGroup);
  text.remove(kIdentity);
  text.replace(kFamily, QStringLiteral("font-family=\"\\1, sans-serif\""));
  return text.toUtf8();
}

}  // namespace

QByteArray RenderSvg(QChart& chart, QSize size, const QString& title) {
  SceneFrame frame(chart, size);
  QBuffer buffer;
  buffer.open(QIODevice::WriteOnly);
  QSvgGenerator generator;
  generator.setOutputDevice(&buffer);
  generator.setSize(size);
  generator.setViewBox(QRect(QPoint(0, 0), size));
  generator.setResolution(96);  // CSS pixels: the <svg> is as wide in a browser as `size` says
  generator.setTitle(title.isEmpty() ? FullTitle(chart) : title);
  generator.setDescription(QStringLiteral("chipfit chart"));
  QPainter painter(&generator);
  painter.setRenderHint(QPainter::Antialiasing);
  frame.Render(painter, size);
  painter.end();
  return TidySvg(buffer.data());
}

QImage RenderImage(QChart& chart, QSize size, qreal scale) {
  SceneFrame frame(chart, size);
  QImage image(size * scale, QImage::Format_ARGB32_Premultiplied);
  image.setDevicePixelRatio(scale);
  image.fill(Qt::white);
  QPainter painter(&image);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setRenderHint(QPainter::TextAntialiasing);
  frame.Render(painter, size);
  painter.end();
  return image;
}

}  // namespace chipfit::charts
