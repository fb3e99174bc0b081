// ComparePage: sides, totals, the ratio table and the A-vs-B scatter on the shared selection.
#include "views/pages/compare_page.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPushButton>
#include <QScatterSeries>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "views/charts/chart_style.h"
#include "views/charts/formats.h"
#include "views/charts/run_charts.h"

namespace chipfit {
namespace {

QString Q(const std::string& s) { return QString::fromStdString(s); }

// What each side's outputs lost against the reference: the other half of every precision or what-if
// comparison (a faster B that changes the answer is not a better B).
QString Accuracy(const TargetResult* t) {
  if (t == nullptr || !t->accuracy) return QObject::tr("not measured");
  const AccuracySummary& a = *t->accuracy;
  QString text = QObject::tr("output SQNR %1").arg(Q(formats::FormatSqnr(a.output_sqnr_db)));
  if (a.task_agreement) {
    text += QObject::tr(", %1 %2 %")
                .arg(Q(a.task_metric.empty() ? "task agreement" : a.task_metric))
                .arg(*a.task_agreement * 100, 0, 'f', 1);
  }
  return text;
}

QString DriftLine(const TargetResult* a, const TargetResult* b) {
  if ((a == nullptr || !a->accuracy) && (b == nullptr || !b->accuracy)) return {};
  return QObject::tr("<br>Drift against the reference: A %1; B %2.").arg(Accuracy(a), Accuracy(b));
}

QStringList OkTargets(const RunResult* run) {
  QStringList out;
  if (run == nullptr) return out;
  for (const auto& t : run->targets) {
    if (t->status == "ok") out << Q(t->target.ToString());
  }
  return out;
}

}  // namespace

ComparePage::ComparePage(LayerSelection* selection, QWidget* parent)
    : QWidget(parent),
      selection_(selection),
      model_(new CompareModel(this)),
      proxy_(new QSortFilterProxyModel(this)),
      title_(new QLabel(tr("Nothing to compare yet: profile a model, or pick two runs on the History page."), this)),
      totals_(new QLabel(this)),
      target_a_(new QComboBox(this)),
      target_b_(new QComboBox(this)),
      table_(new QTableView(this)),
      scatter_(new QChartView(this)) {
  setObjectName(QStringLiteral("comparePage"));
  title_->setObjectName(QStringLiteral("compareTitle"));
  title_->setWordWrap(true);
  totals_->setObjectName(QStringLiteral("compareTotals"));
  totals_->setWordWrap(true);
  totals_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  target_a_->setObjectName(QStringLiteral("compareTargetA"));
  target_b_->setObjectName(QStringLiteral("compareTargetB"));
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(CompareModel::RawRole);
  table_->setObjectName(QStringLiteral("compareTable"));
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table_->setAlternatingRowColors(true);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  table_->horizontalHeader()->setStretchLastSection(true);
  scatter_->setObjectName(QStringLiteral("compareScatter"));
  scatter_->setRenderHint(QPainter::Antialiasing);

  auto* swap = new QPushButton(tr("Swap A and B"), this);
  swap->setObjectName(QStringLiteral("compareSwap"));
  auto* sides = new QHBoxLayout;
  sides->addWidget(new QLabel(tr("A:"), this));
  sides->addWidget(target_a_);
  sides->addWidget(new QLabel(tr("B:"), this));
  sides->addWidget(target_b_);
  sides->addWidget(swap);
  sides->addStretch(1);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->setObjectName(QStringLiteral("compareSplitter"));
  split->addWidget(table_);
  split->addWidget(scatter_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  // The table's size hint is as wide as all its columns: without sizes it would leave the chart a sliver.
  split->setSizes({600, 400});
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(title_);
  layout->addLayout(sides);
  layout->addWidget(totals_);
  layout->addWidget(split, 1);

  connect(target_a_, &QComboBox::currentIndexChanged, this, [this] { rebuild(); });
  connect(target_b_, &QComboBox::currentIndexChanged, this, [this] { rebuild(); });
  connect(swap, &QPushButton::clicked, this, [this] {
    std::swap(run_a_, run_b_);
    const QString a = target_a_->currentText(), b = target_b_->currentText();
    const QSignalBlocker ba(target_a_), bb(target_b_);
    target_a_->clear();
    target_a_->addItems(OkTargets(run_a_.get()));
    target_b_->clear();
    target_b_->addItems(OkTargets(run_b_.get()));
    target_a_->setCurrentText(b);
    target_b_->setCurrentText(a);
    rebuild();
  });
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
    if (syncing_) return;
    QStringList nodes;
    const QModelIndex current = table_->selectionModel()->currentIndex();
    if (current.isValid()) nodes << current.data(CompareModel::NodeRole).toString();
    for (const QModelIndex& index : table_->selectionModel()->selectedRows()) {
      const QString node = index.data(CompareModel::NodeRole).toString();
      if (!nodes.contains(node)) nodes << node;
    }
    selection_->select(nodes, table_);
  });
  connect(selection_, &LayerSelection::changed, this, &ComparePage::onSelectionChanged);
}

void ComparePage::setRuns(std::shared_ptr<const RunResult> a, std::shared_ptr<const RunResult> b) {
  note_.clear();
  run_a_ = std::move(a);
  run_b_ = b ? std::move(b) : run_a_;
  const QStringList in_a = OkTargets(run_a_.get()), in_b = OkTargets(run_b_.get());
  const QSignalBlocker ba(target_a_), bb(target_b_);
  target_a_->clear();
  target_a_->addItems(in_a);
  target_b_->clear();
  target_b_->addItems(in_b);
  const QString fp32 = QStringLiteral("cpu:fp32");
  const QString first = in_a.contains(fp32) ? fp32 : in_a.value(0);
  target_a_->setCurrentText(first);
  if (run_a_ == run_b_) {
    // Two targets of one run: A the baseline, B the first other target.
    for (const QString& t : in_b) {
      if (t != first) {
        target_b_->setCurrentText(t);
        break;
      }
    }
  } else {
    target_b_->setCurrentText(in_b.contains(first) ? first : in_b.value(0));
  }
  rebuild();
}

void ComparePage::setNote(const QString& note) {
  note_ = note;
  rebuild();
}

void ComparePage::setTargets(const QString& a, const QString& b) {
  const QSignalBlocker ba(target_a_), bb(target_b_);
  target_a_->setCurrentText(a);
  target_b_->setCurrentText(b);
  rebuild();
}

QString ComparePage::totalsText() const { return totals_->text(); }

void ComparePage::rebuild() {
  model_->setSides({run_a_, target_a_->currentText()}, {run_b_, target_b_->currentText()});
  const bool same = model_->sameRun();
  if (!run_a_) return;
  title_->setText(
      same ? tr("Two targets of run %1 (%2)")
                 .arg(run_a_->run_id ? QString::number(*run_a_->run_id) : tr("not stored"), Q(run_a_->model.path))
           : tr("One target in two runs: A = run %1, B = run %2 (%3)")
                 .arg(run_a_->run_id ? QString::number(*run_a_->run_id) : tr("not stored"),
                      run_b_->run_id ? QString::number(*run_b_->run_id) : tr("not stored"), Q(run_b_->model.path)));
  const CompareTotals& t = model_->totals();
  QString text;
  if (t.different_models) {
    title_->setText(
        tr("Two different models: A = run %1 (%2), B = run %3 (%4)")
            .arg(run_a_->run_id ? QString::number(*run_a_->run_id) : tr("not stored"), Q(run_a_->model.path),
                 run_b_->run_id ? QString::number(*run_b_->run_id) : tr("not stored"), Q(run_b_->model.path)));
    text = t.a_p50 > 0 && t.b_p50 > 0
               ? tr("End to end only: A %1, B %2 — B/A %3×. The runs profiled different models, so their layers are "
                    "not matched and there is no regressed/improved verdict: a different network is not a "
                    "regression.")
                     .arg(Q(formats::FormatDuration(t.a_p50)), Q(formats::FormatDuration(t.b_p50)))
                     .arg(t.interval.ratio, 0, 'f', 3)
               : tr("The runs profiled different models and a side has no end-to-end latency: nothing to compare.");
  } else if (!t.verdict.isEmpty()) {
    text = tr("End to end: A %1, B %2 — B/A %3× [%4, %5] (95 % interval, %6): <b>%7</b>.")
               .arg(Q(formats::FormatDuration(t.a_p50)), Q(formats::FormatDuration(t.b_p50)))
               .arg(t.interval.ratio, 0, 'f', 3)
               .arg(t.interval.low, 0, 'f', 3)
               .arg(t.interval.high, 0, 'f', 3)
               .arg(Q(t.interval.method), t.verdict);
  } else if (t.a_p50 > 0 && t.b_p50 > 0) {
    text = tr("End to end: A %1, B %2 — B/A %3× (ratio of the p50s: a side has no stored timing samples, so no "
              "interval and no verdict).")
               .arg(Q(formats::FormatDuration(t.a_p50)), Q(formats::FormatDuration(t.b_p50)))
               .arg(t.interval.ratio, 0, 'f', 3);
  } else {
    text = tr("A side without an end-to-end latency: no verdict.");
  }
  if (!t.different_models) {
    text += tr(" Layers beyond noise: %1 slower, %2 faster; %3 with a placement or precision change; %4 ran the same "
               "kernel on both sides within noise (\"same kernel\": neither side is faster there).")
                .arg(t.regressions)
                .arg(t.improvements)
                .arg(t.placement_changes)
                .arg(t.same_kernel);
  }
  text += DriftLine(model_->a().result(), model_->b().result());
  if (!note_.isEmpty()) text = QStringLiteral("<b>%1</b><br>").arg(note_.toHtmlEscaped()) + text;
  if (!t.differences.isEmpty())
    text += tr("<br><b>The runs measured different things:</b> %1")
                .arg(t.differences.join(QStringLiteral("; ")).toHtmlEscaped());
  totals_->setText(text);
  // The largest regression first: by the time B added, as `chipfit diff` lists its flagged layers (a
  // 2× on a 4 µs layer matters less than 1.2× on a millisecond one).
  table_->sortByColumn(CompareModel::kDeltaColumn, Qt::DescendingOrder);
  table_->resizeColumnToContents(CompareModel::kNodeColumn);
  rebuildChart();
  onSelectionChanged(selection_->nodes(), nullptr);
}

void ComparePage::rebuildChart() {
  auto chart = std::make_unique<QChart>();
  chart->setAnimationOptions(QChart::NoAnimation);
  const bool same = model_->sameRun();
  const QString a = model_->a().label(same), b = model_->b().label(same);
  chart->setTitle(tr("Per-layer p50: %1 (x) vs %2 (y)").arg(a, b));
  std::vector<QStringList> nodes_plain, nodes_slower, nodes_faster;
  auto* plain = new QScatterSeries;
  auto* slower = new QScatterSeries;
  auto* faster = new QScatterSeries;
  plain->setName(tr("within noise"));
  slower->setName(tr("B slower beyond noise"));
  faster->setName(tr("B faster beyond noise"));
  plain->setColor(QColor(0x80, 0x80, 0x80));
  slower->setColor(charts::kSlowerColor);
  faster->setColor(charts::kFasterColor);
  double lo = INFINITY, hi = 0;
  for (const CompareRow& r : model_->rows()) {
    if (!(r.a_ms > 0) || !(r.b_ms > 0)) continue;
    QScatterSeries* into = r.change.regressed ? slower : r.change.improved ? faster : plain;
    auto& nodes = r.change.regressed ? nodes_slower : r.change.improved ? nodes_faster : nodes_plain;
    into->append(r.a_ms, r.b_ms);
    nodes.push_back({r.node});
    lo = std::min({lo, r.a_ms, r.b_ms});
    hi = std::max({hi, r.a_ms, r.b_ms});
  }
  if (hi <= 0) {
    delete plain;
    delete slower;
    delete faster;
    chart->setTitle(model_->totals().different_models ? tr("Different models: layers are not compared")
                                                      : tr("No layer timed on both sides"));
  } else {
    lo = std::pow(10, std::floor(std::log10(lo)));
    hi = std::pow(10, std::ceil(std::log10(hi)));
    auto* x = new QLogValueAxis;
    x->setBase(10);
    x->setRange(lo, hi);
    x->setLabelFormat(QStringLiteral("%g"));
    x->setTitleText(tr("A p50 (ms)"));
    auto* y = new QLogValueAxis;
    y->setBase(10);
    y->setRange(lo, hi);
    y->setLabelFormat(QStringLiteral("%g"));
    y->setTitleText(tr("B p50 (ms)"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    auto* diagonal = new QLineSeries;
    diagonal->setName(tr("B = A"));
    QPen pen(QColor(0x60, 0x60, 0x60));
    pen.setStyle(Qt::DashLine);
    diagonal->setPen(pen);
    diagonal->append(lo, lo);
    diagonal->append(hi, hi);
    chart->addSeries(diagonal);
    diagonal->attachAxis(x);
    diagonal->attachAxis(y);
    const auto add = [&](QScatterSeries* s, const std::vector<QStringList>& nodes) {
      s->setMarkerSize(8);
      charts::SetNodesOfPoints(s, nodes);
      chart->addSeries(s);
      s->attachAxis(x);
      s->attachAxis(y);
      connect(s, &QXYSeries::clicked, this, [this, s](const QPointF& p) {
        const QStringList n = charts::NodesNear(*s, p);
        if (!n.isEmpty()) selection_->select(n, scatter_);
      });
    };
    add(plain, nodes_plain);
    add(slower, nodes_slower);
    add(faster, nodes_faster);
  }
  QChart* old = scatter_->chart();
  scatter_->setChart(chart.release());
  delete old;
  charts::HighlightNodes(*scatter_->chart(), selection_->nodes());
}

void ComparePage::onSelectionChanged(const QStringList& nodes, QObject* origin) {
  if (scatter_->chart() != nullptr) charts::HighlightNodes(*scatter_->chart(), nodes);
  if (origin == table_) return;
  syncing_ = true;
  QItemSelection rows;
  int first = -1;
  for (const QString& n : nodes) {
    const int source = model_->rowOfNode(n);
    if (source < 0) continue;
    const QModelIndex at = proxy_->mapFromSource(model_->index(source, 0));
    rows.select(at, at.siblingAtColumn(CompareModel::kColumnCount - 1));
    if (first < 0) first = at.row();
  }
  table_->selectionModel()->select(rows, QItemSelectionModel::ClearAndSelect);
  if (first >= 0) table_->scrollTo(proxy_->index(first, 0), QAbstractItemView::PositionAtCenter);
  syncing_ = false;
}

}  // namespace chipfit
