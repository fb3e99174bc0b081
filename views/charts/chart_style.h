// What every chart of a run shares: one colour per target, the selection and comparison colours, nice
// axis ticks, titles that fit their chart, and hover readouts of points and bars. The Graph, Compare
// and Recommend pages and the reports call these too, so a target looks the same everywhere.
//
// Like the charts themselves (run_charts.h), the QChart and QToolTip parts need a QApplication.
#pragma once

#include <QBarSet>
#include <QChart>
#include <QColor>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QValueAxis>
#include <QXYSeries>
#include <string>

namespace chipfit::charts {

// A target's colour, from its name alone ("cpu:int8", "opencl:0:fp16", "rtx-4090:fp16"): the same in
// every run, chart, page and report, whatever the order the run lists its targets in. Common targets
// have fixed colours (colour-blind safe on white, none near black or red); another device gets a hue
// from a hash of its id, its precisions lighter or darker shades of it.
QColor TargetColor(const std::string& target);
QColor TargetColor(const QString& target);
inline QColor TargetColor(const char* target) { return TargetColor(std::string(target)); }

// Linked selection: a selected layer's points and bars. Near-black, so it is no target's colour and not
// the red that says "slower" or "regressed".
inline constexpr QColor kSelectionColor(0x11, 0x11, 0x11);
// Comparisons: a layer or target slower (regressed) or faster (improved) than its baseline.
inline constexpr QColor kSlowerColor(0xD6, 0x45, 0x3D);
inline constexpr QColor kFasterColor(0x2E, 0x9E, 0x5B);

// The tick step for `span` in at most `max_intervals` intervals: 1, 2 or 5 × 10^k.
double NiceStep(double span, int max_intervals = 6);
// Gives `axis` a range that covers [lo, hi] and starts and ends on a nice step, with a tick at every
// step: the labels read 0, 20, 40 …, never 35 or −3.
void SetNiceRange(QValueAxis* axis, double lo, double hi, int max_intervals = 6);

// Titles that fit: as the chart is resized, `chart`'s title is wrapped at spaces to the chart's width
// (three lines at most, the last elided), and the full text is the title area's tooltip. Every chart
// built here calls it; title() gives the wrapped text while the chart is shown, FullTitle the whole.
void FitTitle(QChart& chart);
QString FullTitle(const QChart& chart);
// Puts the full title back (a chart rendered off-screen is handed back as it came).
void RestoreFullTitle(QChart& chart);

// Hover readouts. Each point of a series (or bar of a set) gets a text, shown as a tooltip while the
// pointer rests on it. Call once per series or set.
void SetToolTips(QObject* series_or_set, const QStringList& texts);
// The text of the point of `series` nearest to `value` (the point a hover reports), or "".
QString ToolTipNear(const QXYSeries& series, QPointF value);
// The text of bar `index` of `set`, or "".
QString ToolTipOf(const QBarSet& set, int index);
// The index of the point of `series` nearest to `value` (in decades on log axes), or -1.
int NearestPoint(const QXYSeries& series, QPointF value);

}  // namespace chipfit::charts
