// Target colours, nice ticks, fitted titles and hover readouts shared by the charts.
#include "views/charts/chart_style.h"

#include <QAbstractAxis>
#include <QAbstractSeries>
#include <QCursor>
#include <QFontMetricsF>
#include <QGraphicsRectItem>
#include <QToolTip>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

namespace chipfit::charts {

namespace {

// Okabe–Ito and its neighbours: told apart with the common colour-vision deficiencies, readable on white.
// No red (it says "slower") and nothing near black (the selection).
const std::map<std::string, QColor>& FixedColors() {
  static const std::map<std::string, QColor> kColors = {
      {"cpu:fp32", QColor(0x00, 0x72, 0xB2)},    {"cpu:tf32", QColor(0x56, 0xB4, 0xE9)},
      {"cpu:fp16", QColor(0xCC, 0x79, 0xA7)},    {"cpu:bf16", QColor(0xE6, 0x9F, 0x00)},
      {"cpu:int8", QColor(0x00, 0x9E, 0x73)},    {"opencl:fp32", QColor(0x8C, 0x51, 0x0A)},
      {"opencl:tf32", QColor(0x2C, 0x7F, 0xB8)}, {"opencl:fp16", QColor(0x6A, 0x3D, 0x9A)},
      {"opencl:bf16", QColor(0xB8, 0x86, 0x0B)}, {"opencl:int8", QColor(0x1B, 0x78, 0x37)},
      {"cuda:fp32", QColor(0x3F, 0x4F, 0xA0)},   {"cuda:tf32", QColor(0x17, 0xBE, 0xCF)},
      {"cuda:fp16", QColor(0x7F, 0xBC, 0x41)},   {"cuda:bf16", QColor(0xBC, 0xBD, 0x22)},
      {"cuda:int8", QColor(0x00, 0x83, 0x8F)},   {"ref:fp32", QColor(0x8A, 0x8A, 0x8A)},
      {"ref:fp16", QColor(0xA8, 0xA8, 0xA8)},    {"ref:bf16", QColor(0x9A, 0x9A, 0x9A)},
      {"ref:int8", QColor(0x70, 0x70, 0x70)},    {"ref:tf32", QColor(0xB4, 0xB4, 0xB4)},
  };
  return kColors;
}

// FNV-1a: a hash that is the same on every platform and in every process (std::hash need not be).
uint32_t Fnv1a(const std::string& text) {
  uint32_t h = 2166136261u;
  for (unsigned char c : text) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

// "opencl:1:fp16" → {"opencl", 1, "fp16"}; "rtx-4090:fp16" → {"rtx-4090", 0, "fp16"}; "ref" → {"ref", 0, "fp32"}.
struct TargetParts {
  std::string device;
  int index = 0;
  std::string precision = "fp32";
};

TargetParts Split(const std::string& target) {
  TargetParts parts;
  const size_t last = target.rfind(':');
  if (last == std::string::npos) {
    parts.device = target;
    return parts;
  }
  parts.precision = target.substr(last + 1);
  parts.device = target.substr(0, last);
  const size_t colon = parts.device.rfind(':');
  if (colon != std::string::npos) {
    const std::string index = parts.device.substr(colon + 1);
    if (!index.empty() && std::all_of(index.begin(), index.end(), [](unsigned char c) { return std::isdigit(c); })) {
      parts.index = std::stoi(index);
      parts.device = parts.device.substr(0, colon);
    }
  }
  return parts;
}

// A device no table names (a projected catalog device, a new kind): a hue from its id, away from red
// (0–25° and 335–360°), mid saturation; each precision a shade of it.
QColor HashedColor(const TargetParts& parts) {
  static const std::map<std::string, int> kShade = {{"fp32", 0}, {"tf32", 1}, {"fp16", 2}, {"bf16", 3}, {"int8", 4}};
  const int hue = 25 + static_cast<int>(Fnv1a(parts.device) % 310);
  const auto shade = kShade.find(parts.precision);
  const int step = shade != kShade.end() ? shade->second : static_cast<int>(Fnv1a(parts.precision) % 5);
  // Value 0.45 … 0.85: never near black, never washed out.
  return QColor::fromHsvF(hue / 360.0, 0.75, 0.45 + 0.1 * step);
}

constexpr char kToolTipsProperty[] = "chipfit_tooltips";
constexpr char kTitleFitterName[] = "chipfit_title_fitter";

// Wraps a chart's title to its width whenever the chart is resized, and keeps the full text.
class TitleFitter : public QObject {
 public:
  explicit TitleFitter(QChart* chart) : QObject(chart), chart_(chart), full_(chart->title()) {
    setObjectName(QLatin1String(kTitleFitterName));
    tip_ = new QGraphicsRectItem(chart);
    tip_->setPen(Qt::NoPen);
    tip_->setBrush(Qt::NoBrush);
    tip_->setAcceptHoverEvents(false);
    tip_->setAcceptedMouseButtons(Qt::NoButton);
    connect(chart, &QGraphicsWidget::geometryChanged, this, [this] { Fit(); });
  }

  QString Full() const { return chart_->title() == shown_ ? full_ : chart_->title(); }

  void Restore() {
    if (chart_->title() == shown_) chart_->setTitle(full_);
    shown_ = full_;
  }

  void Fit() {
    if (chart_->title() != shown_) full_ = chart_->title();  // set anew since the last fit
    const QMarginsF margins = chart_->margins();
    const qreal width = chart_->size().width() - margins.left() - margins.right() - 16;
    if (width <= 40) return;
    const QFontMetricsF metrics(chart_->titleFont());
    QStringList lines;
    QString line;
    const QStringList words = full_.split(QLatin1Char(' '));
    for (int i = 0; i < words.size(); ++i) {
      const QString candidate = line.isEmpty() ? words[i] : line + QLatin1Char(' ') + words[i];
      if (line.isEmpty() || metrics.horizontalAdvance(candidate) <= width) {
        line = candidate;
        continue;
      }
      lines << line;
      line = words[i];
      if (lines.size() == 2) {  // the third line takes the rest, elided
        line = words.mid(i).join(QLatin1Char(' '));
        break;
      }
    }
    if (!line.isEmpty()) lines << metrics.elidedText(line, Qt::ElideRight, width);
    // The title is rich text to Qt: escape each line, join with line breaks.
    for (QString& l : lines) l = l.toHtmlEscaped();
    shown_ = lines.size() <= 1 ? full_ : lines.join(QStringLiteral("<br>"));
    tip_->setRect(0, 0, chart_->size().width(), margins.top() + metrics.lineSpacing() * lines.size() + 8);
    tip_->setToolTip(full_);
    if (chart_->title() != shown_) chart_->setTitle(shown_);
  }

 private:
  QChart* chart_;
  QString full_, shown_;
  QGraphicsRectItem* tip_;
};

TitleFitter* FitterOf(const QChart& chart) {
  return chart.findChild<TitleFitter*>(QLatin1String(kTitleFitterName), Qt::FindDirectChildrenOnly);
}

}  // namespace

QColor TargetColor(const std::string& target) {
  const TargetParts parts = Split(target);
  const auto fixed = FixedColors().find(parts.device + ":" + parts.precision);
  if (fixed == FixedColors().end()) return HashedColor(parts);
  // The second device of a kind darker, the third lighter; beyond, a hue of their own.
  if (parts.index == 0) return fixed->second;
  if (parts.index == 1) return fixed->second.darker(140);
  if (parts.index == 2) return fixed->second.lighter(135);
  return HashedColor({parts.device + ":" + std::to_string(parts.index), 0, parts.precision});
}

QColor TargetColor(const QString& target) { return TargetColor(target.toStdString()); }

double NiceStep(double span, int max_intervals) {
  if (!(span > 0) || !std::isfinite(span)) return 1;
  const double raw = span / std::max(max_intervals, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * magnitude >= raw * (1 - 1e-9)) return m * magnitude;
  }
  return 10 * magnitude;
}

void SetNiceRange(QValueAxis* axis, double lo, double hi, int max_intervals) {
  if (!(hi > lo)) {
    const double pad = lo != 0 ? std::fabs(lo) * 0.1 : 1;
    lo -= pad;
    hi += pad;
  }
  const double step = NiceStep(hi - lo, max_intervals);
  const double start = std::floor(lo / step + 1e-9) * step;
  const double end = std::ceil(hi / step - 1e-9) * step;
  axis->setRange(start, end);
  axis->setTickType(QValueAxis::TicksFixed);
  axis->setTickCount(static_cast<int>(std::lround((end - start) / step)) + 1);
}

void FitTitle(QChart& chart) {
  if (FitterOf(chart) == nullptr) new TitleFitter(&chart);
  if (chart.size().width() > 0) FitterOf(chart)->Fit();
}

QString FullTitle(const QChart& chart) {
  const TitleFitter* fitter = FitterOf(chart);
  return fitter != nullptr ? fitter->Full() : chart.title();
}

void RestoreFullTitle(QChart& chart) {
  if (TitleFitter* fitter = FitterOf(chart)) fitter->Restore();
}

namespace {

// Shows `text` at the pointer now, and makes it the chart's tooltip while the pointer stays: the view's
// own tooltip event, which follows a moment later, shows the tooltip of the item under the pointer
// (the chart, the series have none) and would otherwise hide it again.
void ShowHoverText(QChart* chart, const QString& text) {
  if (chart != nullptr) chart->setToolTip(text);
  if (text.isEmpty()) {
    QToolTip::hideText();
  } else {
    QToolTip::showText(QCursor::pos(), text);
  }
}

}  // namespace

void SetToolTips(QObject* series_or_set, const QStringList& texts) {
  series_or_set->setProperty(kToolTipsProperty, texts);
  if (auto* xy = qobject_cast<QXYSeries*>(series_or_set)) {
    QObject::connect(xy, &QXYSeries::hovered, xy, [xy](const QPointF& point, bool state) {
      ShowHoverText(xy->chart(), state ? ToolTipNear(*xy, point) : QString());
    });
  } else if (auto* set = qobject_cast<QBarSet*>(series_or_set)) {
    QObject::connect(set, &QBarSet::hovered, set, [set](bool state, int index) {
      // A set belongs to its series once appended.
      const auto* series = qobject_cast<const QAbstractSeries*>(set->parent());
      ShowHoverText(series != nullptr ? series->chart() : nullptr, state ? ToolTipOf(*set, index) : QString());
    });
  }
}

int NearestPoint(const QXYSeries& series, QPointF value) {
  const QList<QPointF> points = series.points();
  // On log axes (the rooflines) distance is measured in decades, else in data units.
  bool log_x = false, log_y = false;
  for (const QAbstractAxis* axis : const_cast<QXYSeries&>(series).attachedAxes()) {
    if (axis->type() != QAbstractAxis::AxisTypeLogValue) continue;
    (axis->orientation() == Qt::Horizontal ? log_x : log_y) = true;
  }
  const auto coordinate = [](double v, bool log) { return log ? std::log10(std::max(v, 1e-12)) : v; };
  int best = -1;
  double best_distance = INFINITY;
  for (int i = 0; i < points.size(); ++i) {
    const double distance = std::hypot(coordinate(points[i].x(), log_x) - coordinate(value.x(), log_x),
                                       coordinate(points[i].y(), log_y) - coordinate(value.y(), log_y));
    if (distance < best_distance) {
      best_distance = distance;
      best = i;
    }
  }
  return best;
}

QString ToolTipNear(const QXYSeries& series, QPointF value) {
  const QStringList texts = series.property(kToolTipsProperty).toStringList();
  const int i = NearestPoint(series, value);
  return i >= 0 && i < texts.size() ? texts[i] : QString();
}

QString ToolTipOf(const QBarSet& set, int index) {
  const QStringList texts = set.property(kToolTipsProperty).toStringList();
  return index >= 0 && index < texts.size() ? texts[index] : QString();
}

}  // namespace chipfit::charts
