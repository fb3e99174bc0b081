// The run charts and the Pareto chart as a user reads them: one colour per target in every run, ticks on
// nice numbers, a selection colour of its own, readable node names, hover readouts, titles that fit, and
// roofline ceilings that say when and how they were measured.
#include <gtest/gtest.h>

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QCategoryAxis>
#include <QChartView>
#include <QDir>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QHorizontalBarSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QTest>
#include <QToolTip>
#include <QValueAxis>
#include <cmath>
#include <fstream>
#include <map>

#include "profilers/profile_json.h"
#include "views/charts/chart_style.h"
#include "views/charts/pareto_chart.h"
#include "views/charts/run_charts.h"

namespace chipfit {
namespace {

// A target with `layers` Conv layers named like a converted Paddle model's ("p2o.Conv.12"): each with
// FLOPs, bytes, a time, drift and energy. `speed` scales its rates.
std::shared_ptr<TargetResult> MakeTarget(const std::string& name, int layers, double speed) {
  auto t = std::make_shared<TargetResult>();
  t->target = ParseTarget(name).value();
  t->status = "ok";
  t->device_name = "test device";
  for (int i = 0; i < layers; ++i) {
    LayerResult l;
    l.name = "p2o.Conv." + std::to_string(i);
    l.op = "Conv";
    l.onnx_nodes = {l.name};
    l.device = t->target.DeviceId();
    l.precision = std::string(PrecisionName(t->target.precision));
    l.time_p50_ms = 0.02 * (1 + i % 7) / speed;
    l.time_p90_ms = l.time_p50_ms * 1.1;
    l.flops = 2000000 + 100000 * i;
    l.bytes_read = 50000 + 1000 * i;
    l.bytes_written = 20000;
    l.arithmetic_intensity = static_cast<double>(l.flops) / static_cast<double>(l.bytes_read + l.bytes_written);
    l.gflops_per_s = static_cast<double>(l.flops) / (l.time_p50_ms * 1e6);
    l.drift = DriftStats{.cosine = 0.999, .nmse = 1e-4, .sqnr_db = 40.0 + i % 20, .max_abs = 0.01};
    l.energy = EnergyValue{l.time_p50_ms * 1e-3 * 20, "estimated"};
    t->layers.push_back(std::move(l));
  }
  double total = 0;
  for (const LayerResult& l : t->layers) total += l.time_p50_ms;
  t->latency.p50 = total;
  t->latency.p90 = total * 1.1;
  t->energy = EnergyValue{total * 1e-3 * 20, "estimated"};
  return t;
}

// Ceilings measured on the CPU (fp32 200 GFLOP/s, int8 800 GOP/s, 50 GB/s), on the CPU targets.
void AddCpuCeilings(RunResult& run, double other_cpu_share) {
  CeilingReport report;
  report.device_id = "cpu";
  report.measured.peak_gflops = {{Precision::kFp32, 200.0}, {Precision::kInt8, 800.0}};
  report.measured.memory_bandwidth_gbps = 50.0;
  report.measured_at = "2026-11-29T11:23:19Z";
  report.threads = 2;
  if (other_cpu_share > 0) report.other_cpu_share = other_cpu_share;
  run.ceilings.push_back(report);
  for (auto& t : run.targets) {
    if (t->target.DeviceId() != "cpu") continue;
    auto copy = std::make_shared<TargetResult>(*t);
    copy->ceilings = report.measured;
    t = copy;
  }
}

RunResult MakeRun(const std::vector<std::string>& targets, int layers = 12) {
  RunResult run;
  run.run_id = 1;
  run.status = "ok";
  run.settings.threads = 2;
  for (const std::string& t : targets) {
    // The speed follows the target, not its place, so two runs differ only in order.
    const double speed = t == "cpu:int8" ? 3 : t == "opencl:0:fp32" ? 0.1 : 1;
    run.targets.push_back(MakeTarget(t, layers, speed));
  }
  return run;
}

RunResult LoadSampleRun() {
  std::ifstream in(std::string(CHIPFIT_SOURCE_DIR) + "/tests/data/sample_run.json");
  EXPECT_TRUE(in.good()) << "missing fixture tests/data/sample_run.json";
  Result<RunResult> run = RunResultFromJson(nlohmann::json::parse(in));
  EXPECT_TRUE(run.ok()) << run.status().message();
  return run.ok() ? std::move(run).value() : RunResult{};
}

template <typename T>
T* SeriesNamed(const QChart& chart, const QString& name) {
  for (QAbstractSeries* s : chart.series()) {
    if (s->name() == name) return qobject_cast<T*>(s);
  }
  return nullptr;
}

// Every visible text the chart draws (axis labels, title, its own labels), as the screen shows it.
QStringList VisibleTexts(const QGraphicsItem* root) {
  QStringList out;
  for (const QGraphicsItem* item : root->childItems()) {
    if (!item->isVisible()) continue;
    if (const auto* text = dynamic_cast<const QGraphicsTextItem*>(item)) out << text->toPlainText();
    if (const auto* simple = dynamic_cast<const QGraphicsSimpleTextItem*>(item)) out << simple->text();
    out << VisibleTexts(item);
  }
  return out;
}

// Shows `chart` in a view the size of the Layers page's chart pane and lets it lay out.
class ShownChart {
 public:
  ShownChart(std::unique_ptr<QChart> chart, QSize size) {
    // setChart hands the view's own empty chart back to the caller instead of deleting it.
    QChart* empty = view_.chart();
    view_.setChart(chart.release());
    delete empty;
    view_.resize(size);
    view_.show();
    EXPECT_TRUE(QTest::qWaitForWindowExposed(&view_));
    QTest::qWait(30);
  }
  QChart* chart() const { return view_.chart(); }
  QChartView& view() { return view_; }

 private:
  QChartView view_;
};

void SaveArtifact(QWidget& widget, const QString& name) {
  const QString artifacts = QStringLiteral(CHIPFIT_BINARY_DIR "/test-artifacts");
  ASSERT_TRUE(QDir().mkpath(artifacts));
  EXPECT_TRUE(widget.grab().save(artifacts + QLatin1Char('/') + name));
}

// A target keeps its colour from run to run, whatever order the runs list their targets in.
TEST(ChartColorsTest, ATargetHasOneColourInEveryRun) {
  const RunResult a = MakeRun({"cpu:fp32", "cpu:int8", "opencl:0:fp32"});
  const RunResult b = MakeRun({"opencl:0:fp32", "cpu:int8", "cpu:fp32"});
  const auto drift_a = charts::DriftChart(a);
  const auto drift_b = charts::DriftChart(b);
  for (const QString& target :
       {QStringLiteral("cpu:fp32"), QStringLiteral("cpu:int8"), QStringLiteral("opencl:0:fp32")}) {
    const auto* in_a = SeriesNamed<QScatterSeries>(*drift_a, target);
    const auto* in_b = SeriesNamed<QScatterSeries>(*drift_b, target);
    ASSERT_TRUE(in_a != nullptr && in_b != nullptr) << target.toStdString();
    EXPECT_EQ(in_a->color(), in_b->color()) << target.toStdString() << " changed colour between the runs";
    EXPECT_EQ(in_a->color(), charts::TargetColor(target)) << "every view asks TargetColor";
  }
  // The time chart's bars and the roofline's points agree with the drift chart.
  const auto time_b = charts::LayerTimeChart(b, *b.targets[1]);
  auto* bars = qobject_cast<QAbstractBarSeries*>(time_b->series().value(0));
  ASSERT_NE(bars, nullptr);
  EXPECT_EQ(bars->barSets().value(0)->color(), charts::TargetColor("cpu:int8"));
  // Common targets are told apart; a projected catalog device gets a colour of its own, every time.
  std::set<QRgb> common;
  for (const char* t : {"cpu:fp32", "cpu:int8", "cpu:bf16", "cpu:fp16", "opencl:0:fp32", "opencl:0:fp16", "cuda:0:fp16",
                        "cuda:0:int8", "ref:fp32", "opencl:1:fp32"})
    common.insert(charts::TargetColor(t).rgb());
  EXPECT_EQ(common.size(), 10u);
  EXPECT_EQ(charts::TargetColor("rtx-4090:fp16"), charts::TargetColor("rtx-4090:fp16"));
  EXPECT_TRUE(charts::TargetColor("rtx-4090:fp16").isValid());
}

// The value of every tick of a linear axis, computed from its range and tick settings.
std::vector<double> Ticks(const QValueAxis& axis) {
  std::vector<double> ticks;
  if (axis.tickType() == QValueAxis::TicksDynamic) {
    for (double t = axis.tickAnchor(); t <= axis.max() + 1e-9; t += axis.tickInterval()) {
      if (t >= axis.min() - 1e-9) ticks.push_back(t);
    }
  } else {
    for (int i = 0; i < axis.tickCount(); ++i)
      ticks.push_back(axis.min() + (axis.max() - axis.min()) * i / (axis.tickCount() - 1));
  }
  return ticks;
}

// Whether `step` is 1, 2 or 5 × 10^k.
bool IsNiceStep(double step) {
  if (!(step > 0)) return false;
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
  return std::fabs(mantissa - 1) < 1e-6 || std::fabs(mantissa - 2) < 1e-6 || std::fabs(mantissa - 5) < 1e-6;
}

void ExpectNiceTicks(const QChart& chart, const std::string& what) {
  int value_axes = 0;
  for (const QAbstractAxis* axis : chart.axes()) {
    if (const auto* log = qobject_cast<const QLogValueAxis*>(axis)) {
      // Qt ticks a log axis at the powers of its base inside its range: base ten, two of them at least.
      EXPECT_EQ(log->base(), 10.0) << what;
      EXPECT_GE(std::floor(std::log10(log->max()) + 1e-9) - std::ceil(std::log10(log->min()) - 1e-9), 1.0) << what;
      continue;
    }
    const auto* value = qobject_cast<const QValueAxis*>(axis);
    if (value == nullptr) continue;
    ++value_axes;
    const std::vector<double> ticks = Ticks(*value);
    ASSERT_GE(ticks.size(), 3u) << what;
    const double step = ticks[1] - ticks[0];
    EXPECT_TRUE(IsNiceStep(step)) << what << ": step " << step;
    for (double t : ticks) {
      EXPECT_NEAR(t / step, std::round(t / step), 1e-6) << what << ": tick " << t << " is not on the step " << step;
    }
  }
  EXPECT_GE(value_axes, 1) << what;
}

TEST(ChartTicksTest, ParetoAndBarChartsTickOnNiceNumbers) {
  const RunResult run = LoadSampleRun();
  ASSERT_FALSE(run.targets.empty());
  ExpectNiceTicks(*charts::ParetoChart(run, nlohmann::json()), "Pareto chart");
  ExpectNiceTicks(*charts::LayerTimeChart(run, *run.targets[0]), "time chart");
  ExpectNiceTicks(*charts::EnergyChart(run), "energy chart");
  // The SQNR axis of the sample run spans −40 … 110 dB by its data: ticks every 20 or 50 dB, not 37.5.
  const auto pareto = charts::ParetoChart(run, nlohmann::json());
  const auto* sqnr = qobject_cast<const QValueAxis*>(pareto->axes(Qt::Vertical).value(0));
  ASSERT_NE(sqnr, nullptr);
  for (double t : Ticks(*sqnr)) EXPECT_EQ(std::fmod(t, 10.0), 0.0) << t;
}

// A selected layer is drawn in a colour of its own: not the red that says "slower", not a target's.
TEST(ChartColorsTest, SelectionHasItsOwnColour) {
  RunResult run = MakeRun({"cpu:fp32", "cpu:int8"});
  AddCpuCeilings(run, 0);
  const auto roofline = charts::RooflineChart(run, "cpu");
  charts::HighlightNodes(*roofline, {QStringLiteral("p2o.Conv.3")});
  const auto* int8 = SeriesNamed<QScatterSeries>(*roofline, QStringLiteral("cpu:int8 layers"));
  ASSERT_NE(int8, nullptr);
  ASSERT_EQ(charts::HighlightedNodes(*roofline), QStringList{QStringLiteral("p2o.Conv.3")});
  const QColor selected = int8->selectedColor();
  const QColor slower = charts::kSlowerColor;
  const int distance = std::abs(selected.red() - slower.red()) + std::abs(selected.green() - slower.green()) +
                       std::abs(selected.blue() - slower.blue());
  EXPECT_GT(distance, 200) << "selection " << selected.name().toStdString() << " looks like slower "
                           << slower.name().toStdString();
  // Not a red of any shade: its red channel does not stand out.
  EXPECT_LT(selected.red() - std::max(selected.green(), selected.blue()), 60) << selected.name().toStdString();
  for (const char* t : {"cpu:fp32", "cpu:int8", "cpu:bf16", "opencl:0:fp32"})
    EXPECT_NE(selected, charts::TargetColor(t)) << t;
  // The time chart's bars use the same selection colour.
  const auto time = charts::LayerTimeChart(run, *run.targets[0]);
  auto* bars = qobject_cast<QAbstractBarSeries*>(time->series().value(0));
  ASSERT_NE(bars, nullptr);
  EXPECT_EQ(bars->barSets().value(0)->selectedColor(), selected);
}

// On the Layers page (a chart pane about 600 × 250 px), the drift chart names its nodes; Qt no longer
// cuts every name to "…", and the time chart's bar labels stay whole too.
TEST(ChartLabelsTest, DriftAndTimeChartNamesAreReadable) {
  RunResult run = MakeRun({"cpu:fp32", "cpu:int8"}, 80);
  // fp32 close to the reference (140 dB), int8 at 40–60 dB: the SQNR axis spans 0–140 dB.
  auto fp32 = std::make_shared<TargetResult>(*run.targets[0]);
  for (LayerResult& l : fp32->layers) l.drift->sqnr_db = 140 - l.flops % 5;
  run.targets[0] = fp32;
  ShownChart drift(charts::DriftChart(run), QSize(600, 250));
  auto* x = qobject_cast<QCategoryAxis*>(drift.chart()->axes(Qt::Horizontal).value(0));
  ASSERT_NE(x, nullptr);
  const QStringList categories = x->categoriesLabels();
  const QStringList texts = VisibleTexts(drift.chart());
  int whole = 0;
  for (const QString& t : texts) {
    EXPECT_NE(t, QStringLiteral("...")) << "a label cut to nothing";
    EXPECT_NE(t, QStringLiteral("…"));
    whole += categories.contains(t) ? 1 : 0;
  }
  EXPECT_GE(whole, 8) << "drift chart shows " << whole << " node names: " << texts.join(u'|').toStdString();
  SaveArtifact(drift.view(), QStringLiteral("charts_drift.png"));

  ShownChart time(charts::LayerTimeChart(run, *run.targets[0], 10, 18), QSize(600, 230));
  auto* y = qobject_cast<QBarCategoryAxis*>(time.chart()->axes(Qt::Vertical).value(0));
  ASSERT_NE(y, nullptr);
  int named = 0;
  for (const QString& t : VisibleTexts(time.chart())) {
    EXPECT_NE(t, QStringLiteral("..."));
    named += y->categories().contains(t) ? 1 : 0;
  }
  EXPECT_EQ(named, 10) << "every bar is named";
  SaveArtifact(time.view(), QStringLiteral("charts_time.png"));
}

// Resting the pointer on a roofline point tells which layer it is and what it did.
TEST(ChartHoverTest, RooflinePointsAndBarsHaveReadouts) {
  RunResult run = MakeRun({"cpu:fp32", "cpu:int8"});
  AddCpuCeilings(run, 0);
  const auto roofline = charts::RooflineChart(run, "cpu");
  auto* int8 = SeriesNamed<QScatterSeries>(*roofline, QStringLiteral("cpu:int8 layers"));
  ASSERT_NE(int8, nullptr);
  ASSERT_GT(int8->count(), 3);
  const QString text = charts::ToolTipNear(*int8, int8->at(3));
  EXPECT_TRUE(text.contains(QStringLiteral("p2o.Conv.3"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("cpu:int8"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("GOP/s"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("FLOP/byte"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("p50 "))) << text.toStdString();
  // The series shows it when hovered.
  emit int8->hovered(int8->at(3), true);
  EXPECT_EQ(QToolTip::text(), text);
  // …and keeps it while the pointer rests there (the view's tooltip event shows the chart's).
  EXPECT_EQ(roofline->toolTip(), text);
  emit int8->hovered(int8->at(3), false);
  EXPECT_TRUE(roofline->toolTip().isEmpty());

  // A bar of the time chart names its layer and its time.
  const auto time = charts::LayerTimeChart(run, *run.targets[0], 5);
  auto* bars = qobject_cast<QAbstractBarSeries*>(time->series().value(0));
  ASSERT_NE(bars, nullptr);
  QBarSet* set = bars->barSets().value(0);
  const QString bar = charts::ToolTipOf(*set, set->count() - 1);  // the slowest, on top
  EXPECT_TRUE(bar.contains(QStringLiteral("p2o.Conv.6"))) << bar.toStdString();
  EXPECT_TRUE(bar.contains(QStringLiteral("140 µs"))) << bar.toStdString();
  // Drift points name their node, target and SQNR.
  const auto drift = charts::DriftChart(run);
  auto* fp32 = SeriesNamed<QScatterSeries>(*drift, QStringLiteral("cpu:fp32"));
  ASSERT_NE(fp32, nullptr);
  EXPECT_EQ(charts::ToolTipNear(*fp32, fp32->at(2)), QStringLiteral("p2o.Conv.2 on cpu:fp32\nSQNR 42.0 dB"));
}

// Ceilings measured while other processes were busy are low: the roofline says so on the plot, with
// when and how they were measured, and explains the layers above them.
TEST(ChartCeilingsTest, BusyCeilingsAreAnnotated) {
  RunResult run = MakeRun({"cpu:fp32", "cpu:int8"});
  auto fast = std::make_shared<TargetResult>(*run.targets[0]);
  fast->layers[0].gflops_per_s = 400;  // twice the fp32 peak
  run.targets[0] = fast;
  AddCpuCeilings(run, 0.45);
  ShownChart shown(charts::RooflineChart(run, "cpu"), QSize(640, 420));
  const QString note = charts::ChartNote(*shown.chart());
  EXPECT_TRUE(note.contains(QStringLiteral("Ceilings measured 2026-11-29 11:23 UTC: 2 threads; measured while busy")))
      << note.toStdString();
  EXPECT_TRUE(
      note.contains(QStringLiteral("1 layer(s) above the measured roof: the ceilings were measured while busy")))
      << note.toStdString();
  // Drawn on the plot, whole.
  const QString drawn = VisibleTexts(shown.chart()).join(u' ').simplified();
  EXPECT_TRUE(drawn.contains(QStringLiteral("above the measured roof"))) << drawn.toStdString();
  // The memory roof's value sits where no point covers it.
  QRectF memory;
  for (const QGraphicsItem* item : shown.chart()->childItems()) {
    const auto* label = dynamic_cast<const QGraphicsSimpleTextItem*>(item);
    if (label != nullptr && label->isVisible() && label->text().startsWith(QStringLiteral("memory ")))
      memory = label->sceneBoundingRect();
  }
  ASSERT_FALSE(memory.isEmpty()) << drawn.toStdString();
  for (QAbstractSeries* s : shown.chart()->series()) {
    if (s->type() != QAbstractSeries::SeriesTypeScatter) continue;
    for (const QPointF& p : static_cast<QXYSeries*>(s)->points()) {
      EXPECT_FALSE(memory.adjusted(-4, -4, 4, 4).contains(shown.chart()->mapToPosition(p, s)))
          << "a point hides the memory roof's label";
    }
  }
  SaveArtifact(shown.view(), QStringLiteral("charts_roofline_busy.png"));

  // Ceilings measured on an idle machine: when and how, and no layer above them, no explanation.
  RunResult idle = MakeRun({"cpu:fp32"});
  AddCpuCeilings(idle, 0.01);
  const QString calm = charts::ChartNote(*charts::RooflineChart(idle, "cpu"));
  EXPECT_EQ(calm, QStringLiteral("Ceilings measured 2026-11-29 11:23 UTC: 2 threads"));
}

// A title longer than its chart is wrapped, not cut; the whole text stays the chart's title off screen.
TEST(ChartTitleTest, LongTitlesWrapToTheChart) {
  RunResult run = MakeRun({"cpu:fp32", "cpu:int8"});
  AddCpuCeilings(run, 0.45);
  auto chart = charts::RooflineChart(run, "cpu");
  const QString full = chart->title();
  ASSERT_TRUE(full.endsWith(QStringLiteral(" — ceilings measured while busy (low)")));
  ShownChart shown(std::move(chart), QSize(380, 360));
  EXPECT_EQ(charts::FullTitle(*shown.chart()), full);
  const QString drawn = VisibleTexts(shown.chart()).join(u' ').simplified();
  for (const QString& word : full.split(u' ')) EXPECT_TRUE(drawn.contains(word)) << word.toStdString();
  SaveArtifact(shown.view(), QStringLiteral("charts_roofline_narrow.png"));
  // Rendered off screen, the chart keeps its whole title.
  auto report = charts::RooflineChart(run, "cpu");
  charts::RenderImage(*report, QSize(380, 360), 1.0);
  EXPECT_EQ(report->title(), full);
}

}  // namespace
}  // namespace chipfit
