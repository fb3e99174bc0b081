// Builds the Pareto chart of a recommendation from a RunResult and the recommendation JSON.
#include "views/charts/pareto_chart.h"

#include <QApplication>
#include <QFontInfo>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "views/charts/chart_style.h"
#include "views/charts/formats.h"
#include "views/charts/run_charts.h"

namespace chipfit::charts {
namespace {

using formats::Finite;
using nlohmann::json;

QString Q(const std::string& s) { return QString::fromStdString(s); }

const QColor kRejectedColor(0x9A, 0xA0, 0xA6);
const QColor kFrontierColor(0x33, 0x33, 0x33);

// Bubble diameters in pixels: the largest energy gets kMaxBubble, and area follows energy (diameter ∝ √energy), so
// twice the energy reads as twice the ink. kMinBubble keeps a tiny or missing figure visible and hoverable.
constexpr double kMaxBubble = 30.0;
constexpr double kMinBubble = 8.0;

// The verdicts the recommendation gives each target, read once from its JSON.
struct Verdicts {
  bool known = false;  // a recommendation was given
  std::set<std::string> ranked, pareto;
  std::string best;
  std::map<std::string, std::vector<std::string>> reasons;  // rejected target → every limit it broke
};

std::vector<std::string> Strings(const json& r, const char* key) {
  std::vector<std::string> out;
  if (!r.contains(key) || !r[key].is_array()) return out;
  for (const json& s : r[key]) {
    if (s.is_string()) out.push_back(s.get<std::string>());
  }
  return out;
}

Verdicts ReadVerdicts(const json& r) {
  Verdicts v;
  if (!r.is_object()) return v;
  v.known = true;
  for (const std::string& t : Strings(r, "ranked")) v.ranked.insert(t);
  for (const std::string& t : Strings(r, "pareto")) v.pareto.insert(t);
  if (r.contains("best") && r["best"].is_string()) v.best = r["best"].get<std::string>();
  if (r.contains("rejected") && r["rejected"].is_array()) {
    for (const json& rej : r["rejected"]) {
      if (!rej.is_object() || !rej.contains("target") || !rej["target"].is_string()) continue;
      const std::string reason = rej.contains("reason") && rej["reason"].is_string() ? rej["reason"].get<std::string>()
                                                                                     : std::string("rejected");
      v.reasons[rej["target"].get<std::string>()].push_back(reason);
    }
  }
  return v;
}

struct Bubble {
  std::string target{};
  double p50 = 0;
  double sqnr = 0;
  std::optional<double> energy_j{};
  std::string energy_source{};
  const TargetResult* result = nullptr;
  bool rejected = false;
};

bool IsEstimate(const std::string& source) { return source.rfind("estimated", 0) == 0; }

QString ToolTip(const Bubble& b, const Verdicts& v) {
  const LatencyStats& l = b.result->latency;
  QStringList lines;
  QString verdict;
  if (b.target == v.best) {
    verdict = QStringLiteral("recommended");
  } else if (v.ranked.contains(b.target)) {
    verdict = QStringLiteral("passes every limit");
  } else if (b.rejected) {
    verdict = QStringLiteral("rejected");
  }
  lines << (verdict.isEmpty() ? Q(b.target) : Q(b.target) + QStringLiteral(" — ") + verdict);
  lines << QStringLiteral("latency p50 %1, p90 %2, p99 %3")
               .arg(Q(formats::FormatDuration(l.p50)), Q(formats::FormatDuration(l.p90)),
                    Q(formats::FormatDuration(l.p99)));
  QString drift = QStringLiteral("output SQNR %1 vs %2").arg(Q(formats::FormatSqnr(b.sqnr)));
  const AccuracySummary& a = *b.result->accuracy;
  drift = drift.arg(a.reference.empty() ? QStringLiteral("the reference") : Q(a.reference));
  if (a.top1_agreement) {
    drift += QStringLiteral("; top-1 agreement %1 %").arg(*a.top1_agreement * 100, 0, 'f', 1);
  } else if (a.task_agreement) {
    drift += QStringLiteral("; %1 %2 %").arg(Q(a.task_metric)).arg(*a.task_agreement * 100, 0, 'f', 1);
  }
  if (a.random_calibration) drift += QStringLiteral(" (int8 calibrated on random data)");
  lines << drift;
  lines << (b.energy_j ? QStringLiteral("energy %1 per inference (%2)")
                             .arg(Q(formats::FormatEnergy(*b.energy_j)),
                                  IsEstimate(b.energy_source) ? QStringLiteral("ESTIMATED by the energy model")
                                                              : Q(b.energy_source))
                       : QStringLiteral("energy: no figure (smallest bubble)"));
  if (v.pareto.contains(b.target)) lines << QStringLiteral("on the Pareto frontier (p50 × drift × energy)");
  if (const auto it = v.reasons.find(b.target); it != v.reasons.end()) {
    for (const std::string& reason : it->second) lines << QStringLiteral("rejected: ") + Q(reason);
  }
  return lines.join(QLatin1Char('\n'));
}

// What the legend says of a bubble: the target, its energy and where that figure comes from, and its verdict.
QString LegendName(const Bubble& b, const Verdicts& v) {
  QString name = Q(b.target);
  name += b.energy_j ? QStringLiteral(" · %1 %2")
                           .arg(Q(formats::FormatEnergy(*b.energy_j)),
                                IsEstimate(b.energy_source) ? QStringLiteral("est.") : Q(b.energy_source))
                     : QStringLiteral(" · no energy");
  if (b.target == v.best) name += QStringLiteral(" (recommended)");
  if (b.rejected) name += QStringLiteral(" (rejected)");
  return name;
}

// A value axis from the figures, padded so the outermost bubbles are not cut by the plot's edge.
QAbstractAxis* LatencyAxis(double lo, double hi) {
  // The frontier's targets often differ by more than a decade (a CPU's int8 against an OpenCL device): a log axis
  // keeps the fast ones apart. Within a decade a linear axis reads more directly.
  if (hi / lo > 10.0) {
    // Ticks at the decades inside; room around the outermost bubbles (a decade boundary right at the
    // slowest target cut its bubble in half).
    auto* axis = new QLogValueAxis;
    axis->setBase(10);
    double from = lo / 1.4, to = hi * 1.4;
    if (std::floor(std::log10(to)) <= std::ceil(std::log10(from))) {
      from = std::pow(10.0, std::floor(std::log10(from)));  // fewer than two decades inside: whole ones
      to = std::pow(10.0, std::ceil(std::log10(to)));
    }
    axis->setRange(from, to);
    axis->setLabelFormat(QStringLiteral("%.3g"));
    axis->setMinorTickCount(-1);
    return axis;
  }
  auto* axis = new QValueAxis;
  const double pad = hi > lo ? (hi - lo) * 0.15 : lo * 0.1;
  SetNiceRange(axis, std::max(0.0, lo - pad), hi + pad, 5);
  axis->setLabelFormat(QStringLiteral("%.4g"));
  return axis;
}

// Ticks on nice numbers (0, 50, 100 dB), never 110, 73, 35, −3.
QValueAxis* SqnrAxis(double lo, double hi) {
  auto* axis = new QValueAxis;
  const double pad = std::max((hi - lo) * 0.12, 5.0);
  SetNiceRange(axis, lo - pad, hi + pad, 6);
  axis->setLabelFormat(QStringLiteral("%g"));
  return axis;
}

void StyleAxis(QAbstractAxis* axis, const QString& title) {
  axis->setTitleText(title);
  axis->setTitleFont(ChartFont(8.5));
  axis->setLabelsFont(ChartFont(8));
}

}  // namespace

std::unique_ptr<QChart> ParetoChart(const RunResult& run, const nlohmann::json& recommendation) {
  const Verdicts verdicts = ReadVerdicts(recommendation);
  std::vector<Bubble> bubbles;
  int without_drift = 0;
  for (const auto& t : run.targets) {
    if (t->status != "ok") continue;
    const auto p50 = Finite(t->latency.p50);
    const auto sqnr = t->accuracy ? Finite(t->accuracy->output_sqnr_db) : std::nullopt;
    if (!p50 || *p50 <= 0 || !sqnr) {
      ++without_drift;
      continue;
    }
    Bubble b{.target = t->target.ToString(), .p50 = *p50, .sqnr = *sqnr, .result = t.get()};
    if (t->energy) {
      b.energy_j = Finite(t->energy->joules);
      b.energy_source = t->energy->source;
    }
    b.rejected = verdicts.known && !verdicts.ranked.contains(b.target);
    bubbles.push_back(std::move(b));
  }

  auto chart = std::make_unique<QChart>();
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->setTheme(QChart::ChartThemeLight);
  chart->setBackgroundRoundness(0);
  chart->setMargins(QMargins(4, 4, 8, 4));
  chart->setTitleFont(ChartFont(10, true));
  chart->legend()->setFont(ChartFont(8));
  // On the right: a name per target with its energy is too long for a row under the plot.
  chart->legend()->setAlignment(Qt::AlignRight);

  const bool all_estimated = !bubbles.empty() && std::all_of(bubbles.begin(), bubbles.end(), [](const Bubble& b) {
    return !b.energy_j || IsEstimate(b.energy_source);
  });
  QString title = QStringLiteral("Latency × drift; bubble area = energy per inference");
  if (all_estimated) title += QStringLiteral(", ESTIMATED");
  if (without_drift > 0) title += QStringLiteral("; %1 target(s) without drift not shown").arg(without_drift);
  if (bubbles.empty()) title = QStringLiteral("Latency × drift — no target ran with a drift figure");
  chart->setTitle(title);
  FitTitle(*chart);
  if (bubbles.empty()) {
    chart->legend()->hide();
    return chart;
  }

  double x_lo = INFINITY, x_hi = 0, y_lo = INFINITY, y_hi = -INFINITY, e_max = 0;
  for (const Bubble& b : bubbles) {
    x_lo = std::min(x_lo, b.p50);
    x_hi = std::max(x_hi, b.p50);
    y_lo = std::min(y_lo, b.sqnr);
    y_hi = std::max(y_hi, b.sqnr);
    if (b.energy_j) e_max = std::max(e_max, *b.energy_j);
  }
  QAbstractAxis* x = LatencyAxis(x_lo, x_hi);
  // p50 because the frontier is computed on it (measurement.md, "Recommendation"), whichever statistic ranks.
  StyleAxis(x, QStringLiteral("p50 latency (ms), lower is faster"));
  chart->addAxis(x, Qt::AlignBottom);
  QValueAxis* y = SqnrAxis(y_lo, y_hi);
  StyleAxis(y, QStringLiteral("output SQNR vs reference (dB), higher is less drift"));
  chart->addAxis(y, Qt::AlignLeft);
  auto attach = [&](QAbstractSeries* series) {
    chart->addSeries(series);
    series->attachAxis(x);
    series->attachAxis(y);
  };

  // The frontier first so the bubbles sit on top of it. It is a frontier in three dimensions (energy too); the line
  // only joins its targets in latency order so the eye finds them.
  auto* frontier = new QLineSeries;
  frontier->setObjectName(QLatin1String(kParetoFrontierSeries));
  frontier->setName(QStringLiteral("Pareto frontier (p50 × drift × energy)"));
  QPen pen(kFrontierColor);
  pen.setWidthF(1.5);
  pen.setStyle(Qt::DashLine);
  frontier->setPen(pen);
  frontier->setPointsVisible(true);  // a frontier of one target is still seen
  std::vector<std::pair<double, double>> frontier_points;
  for (const Bubble& b : bubbles) {
    if (verdicts.pareto.contains(b.target)) frontier_points.push_back({b.p50, b.sqnr});
  }
  std::sort(frontier_points.begin(), frontier_points.end());
  for (const auto& [px, py] : frontier_points) frontier->append(px, py);
  attach(frontier);
  if (!verdicts.known) {
    for (QLegendMarker* marker : chart->legend()->markers(frontier)) marker->setVisible(false);
  }

  // Largest first: a small bubble drawn later stays visible inside a large one.
  std::vector<const Bubble*> order;
  for (const Bubble& b : bubbles) order.push_back(&b);
  auto diameter = [&](const Bubble& b) {
    if (!b.energy_j || e_max <= 0) return kMinBubble;
    return std::max(kMinBubble, kMaxBubble * std::sqrt(std::max(*b.energy_j, 0.0) / e_max));
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](const Bubble* a, const Bubble* b) { return diameter(*a) > diameter(*b); });
  for (const Bubble* b : order) {
    auto* series = new QScatterSeries;
    series->setObjectName(QLatin1String(kParetoTargetPrefix) + Q(b->target));
    series->setName(LegendName(*b, verdicts));
    series->setMarkerShape(QScatterSeries::MarkerShapeCircle);
    series->setMarkerSize(diameter(*b));
    const QColor color = TargetColor(b->target);
    if (b->rejected) {
      // Hollow and grey: out of the running, still placed where its figures put it.
      series->setBrush(Qt::NoBrush);
      QPen ring(kRejectedColor);
      ring.setWidthF(2);
      series->setPen(ring);
    } else {
      QColor fill = color;
      fill.setAlpha(190);  // overlapping bubbles stay visible through each other
      series->setBrush(fill);
      QPen ring(b->target == verdicts.best ? QColor(Qt::black) : color.darker(130));
      ring.setWidthF(b->target == verdicts.best ? 2.5 : 1.0);
      series->setPen(ring);
    }
    series->append(b->p50, b->sqnr);
    series->setProperty(kParetoToolTipProperty, ToolTip(*b, verdicts));
    attach(series);
    SetToolTips(series, {ToolTip(*b, verdicts)});
  }
  return chart;
}

}  // namespace chipfit::charts
