// Charts of a profile run (RunResult): per-layer time, roofline, drift per layer, energy;
// and rendering a chart to SVG or to an image without a window. The report draws them; the GUI's
// Layers page shows the same QChart objects in a QChartView.
//
// QChart is a QGraphicsWidget: every function here needs a QApplication (QApplication, not
// QGuiApplication; the `offscreen` platform is enough) and must run on its thread.
#pragma once

#include <QByteArray>
#include <QChart>
#include <QColor>
#include <QFont>
#include <QImage>
#include <QSize>
#include <QString>
#include <QStringList>
#include <QXYSeries>
#include <memory>
#include <string>
#include <vector>

#include "profilers/run_result.h"
#include "views/charts/chart_style.h"

namespace chipfit::charts {

// (a) One target's top_n layers by p50 device time, as horizontal bars, slowest on top, in µs when
// every shown layer is under a millisecond. A target without layers gives a chart that says so.
// `label_chars`: the longest bar label; a narrow chart (the GUI's) passes fewer and gets node names only.
std::unique_ptr<QChart> LayerTimeChart(const RunResult& run, const TargetResult& target, int top_n = 10,
                                       int label_chars = 0);

// (b) Roofline of one device (log-log): every layer with FLOPs of every ok target that ran on it
// (x: arithmetic intensity in FLOP/byte, y: achieved GFLOP/s), with the measured ceilings of each
// target's precision as lines (bandwidth slope up to the ridge point, then the compute peak). The
// title says "no measured ceilings" when the targets carry none. The slowest layers are named.
// A device no target ran on shows its measured ceilings from RunResult::ceilings, every precision.
std::unique_ptr<QChart> RooflineChart(const RunResult& run, const std::string& device_id);
// The device ids of the ok targets, in run order, each once, then every other device RunResult::
// ceilings holds measured figures for: one roofline each.
std::vector<std::string> RooflineDevices(const RunResult& run);

// (c) Drift per layer: drift SQNR in dB at each ONNX node (x, in model order) whose output a target
// compared, one line per ok target, a dashed 30 dB threshold; the 200 dB sentinel (identical values)
// drawn on an "exact" row. Layers are matched across targets by ONNX node (a fused kernel at its last
// node), never by their index in each target's list, since targets fuse differently: a node a target
// has no value for is a gap in its line. Each target's markers are one scatter series named after it.
std::unique_ptr<QChart> DriftChart(const RunResult& run);

// (d) Energy per inference of every target that has one, as stacked bars split into the top_layers
// layers (by energy, over all targets) and "other layers"; each bar's label names its total and
// its source ("estimated", "measured:<sensor>"); the title says when every value is an estimate.
// One unit, the report's: J from 1 J, mJ from 1 mJ, else µJ.
std::unique_ptr<QChart> EnergyChart(const RunResult& run, int top_layers = 4);

// (e) Cross-target roofline of one device: the top_n slowest ONNX nodes (by their slowest target), each
// drawn on every ok target of the device at its kernel's (intensity, GFLOP/s), the points of one node
// joined in precision order (fp32 → tf32 → fp16 → bf16 → int8), so the move a precision buys is
// visible. Points carry their nodes for linked selection.
std::unique_ptr<QChart> CrossTargetRooflineChart(const RunResult& run, const std::string& device_id, int top_n = 12);

// Linked selection. Every bar and scatter point a chart draws for a layer carries the ONNX nodes it
// stands for; these find them and mark the selected ones (QXYSeries/QBarSet selection, drawn in
// kSelectionColor and larger). Each also carries a hover readout (chart_style.h: ToolTipNear, ToolTipOf).
// The nodes of each point (QXYSeries) or bar (QBarSet), in point order; empty for other series.
std::vector<QStringList> NodesOfPoints(const QObject* series_or_set);
// Gives a series' points (or a set's bars) their nodes, for charts built outside this file.
void SetNodesOfPoints(QObject* series_or_set, const std::vector<QStringList>& nodes);
// Marks the points and bars whose nodes meet `nodes`; unmarks the rest.
void HighlightNodes(QChart& chart, const QStringList& nodes);
// The nodes of every marked point and bar (what a test checks after a selection).
QStringList HighlightedNodes(const QChart& chart);
// The nodes of the point of `series` nearest to `value` (what a click on it means), or none.
QStringList NodesNear(const QXYSeries& series, QPointF value);

// The application font at `point_size`, resolved to a real family name (an SVG viewer does not know
// "Sans Serif"): every chart of a run, the Pareto chart included, uses it.
QFont ChartFont(qreal point_size, bool bold = false);

// A target's colour is TargetColor(target) (chart_style.h): from its name, the same in every run.

// The note a chart writes on its plot (the roofline: when and how its ceilings were measured, and why
// layers sit above them), or "" when it has none.
QString ChartNote(const QChart& chart);

// Every chart of a run, in the order a report shows them, each with its preferred size.
struct RunChart {
  std::string id;       // stable, for anchors and file names: "layers-cpu-int8", "roofline-cpu", …
  std::string caption;  // one sentence saying what it shows
  QSize size;
  std::unique_ptr<QChart> chart;
};
std::vector<RunChart> BuildRunCharts(const RunResult& run);

// Renders `chart` at `size` (pixels) through a QGraphicsScene, so no window or view is needed. The
// chart is taken into a scene for the call and handed back unchanged.
// SVG: an <svg> document (QSvgGenerator, text kept as text) of `size` user units; `title` becomes its
// <title>.
QByteArray RenderSvg(QChart& chart, QSize size, const QString& title = {});
// Image: ARGB32 of size × scale pixels with devicePixelRatio `scale` (2 for print).
QImage RenderImage(QChart& chart, QSize size, qreal scale = 2.0);

}  // namespace chipfit::charts
