// LayersPage: the filter bar, the table, the chart tabs and the detail pane, all driven by one
// LayerSelection.
#include "views/pages/layers_page.h"

#include <QAbstractBarSeries>
#include <QBarSet>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSet>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <QXYSeries>
#include <algorithm>
#include <cmath>
#include <set>

#include "profilers/precision_mix.h"
#include "views/charts/formats.h"
#include "views/charts/run_charts.h"

namespace chipfit {
namespace {

QString Q(const std::string& s) { return QString::fromStdString(s); }

// Warnings in the summary's rich text: the tone the Run page's banner and the report use.
const QString kWarnHtml = QStringLiteral("#a05a00");

enum ChartTab { kTimeTab, kRooflineTab, kCrossTab, kDriftTab, kEnergyTab };

}  // namespace

LayersPage::LayersPage(LayerSelection* selection, QWidget* parent)
    : QWidget(parent),
      selection_(selection),
      model_(new LayerTableModel(this)),
      proxy_(new LayerFilterProxy(this)),
      heat_map_(new HeatMapModel(model_, this)),
      table_(new QTableView(this)),
      heat_table_(new QTableView(this)),
      tabs_(new QTabWidget(this)),
      details_(new QTextBrowser(this)),
      summary_(new QLabel(tr("No run. Profile a model (Run page) or open a stored run (History)."), this)) {
  setObjectName(QStringLiteral("layersPage"));
  proxy_->setSourceModel(model_);
  table_->setObjectName(QStringLiteral("layersTable"));
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table_->setAlternatingRowColors(true);
  table_->setWordWrap(false);
  // Fixed row heights: the view never measures thousands of rows to lay them out.
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setDefaultSectionSize(86);
  table_->horizontalHeader()->setHighlightSections(false);
  summary_->setObjectName(QStringLiteral("layersSummary"));
  summary_->setTextFormat(Qt::RichText);
  summary_->setWordWrap(true);

  auto* bar = new QWidget(this);
  buildFilters(bar);

  // Charts: one view per chart, a target and a device combo for the ones that show one.
  chart_target_ = new QComboBox(this);
  chart_target_->setObjectName(QStringLiteral("chartTarget"));
  chart_target_->setToolTip(tr("The target the per-layer time chart shows"));
  chart_device_ = new QComboBox(this);
  chart_device_->setObjectName(QStringLiteral("chartDevice"));
  chart_device_->setToolTip(tr("The device the rooflines show (its measured ceilings: chipfit devices --measure)"));
  const QStringList titles = {tr("Time"), tr("Roofline"), tr("Cross-target roofline"), tr("Drift"), tr("Energy")};
  for (const QString& title : titles) {
    auto* view = new QChartView(this);
    view->setRenderHint(QPainter::Antialiasing);
    view->setObjectName(QStringLiteral("chart") + QString(title).remove(QChar(' ')).remove(QChar('-')));
    chart_views_.push_back(view);
    tabs_->addTab(view, title);
  }
  tabs_->setTabToolTip(kTimeTab, tr("The slowest layers of the chosen target by p50 device time"));
  tabs_->setTabToolTip(kRooflineTab, tr("Every layer with FLOPs on the chosen device against its measured ceilings"));
  tabs_->setTabToolTip(kCrossTab, tr("The same layer on each precision of the device, joined fp32 → bf16 → int8"));
  tabs_->setTabToolTip(kDriftTab, tr("Output SQNR of each layer against the reference, per target; 30 dB dashed"));
  tabs_->setTabToolTip(kEnergyTab, tr("Energy per inference of each target, split into its costliest layers"));
  auto* heat = new QWidget(this);
  auto* heat_layout = new QVBoxLayout(heat);
  heat_layout->setContentsMargins(0, 0, 0, 0);
  heat_measure_ = new QComboBox(heat);
  heat_measure_->setObjectName(QStringLiteral("heatMeasure"));
  heat_measure_->addItems(
      {tr("time relative to the baseline"), tr("energy relative to the baseline"), tr("drift SQNR")});
  heat_layout->addWidget(heat_measure_);
  heat_table_->setObjectName(QStringLiteral("heatMap"));
  heat_table_->setModel(heat_map_);
  heat_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  heat_table_->verticalHeader()->hide();
  heat_table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  heat_table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 4);
  heat_layout->addWidget(heat_table_);
  tabs_->addTab(heat, tr("Heat map"));
  tabs_->setTabToolTip(tabs_->count() - 1, tr("Layer × target: where splitting the model across devices or precisions "
                                              "would pay (green: faster or cheaper than the baseline)"));
  connect(heat_measure_, &QComboBox::currentIndexChanged, this, [this](int i) {
    heat_map_->setMeasure(i == 0   ? HeatMapModel::Measure::kTime
                          : i == 1 ? HeatMapModel::Measure::kEnergy
                                   : HeatMapModel::Measure::kDrift);
  });
  connect(heat_table_, &QTableView::clicked, this, [this](const QModelIndex& index) {
    const QString key = index.data(HeatMapModel::KeyRole).toString();
    const int row = model_->rowOfNode(key) >= 0 ? model_->rowOfNode(key) : index.row();
    selection_->select(model_->table().rows[static_cast<size_t>(row)].nodes, heat_table_);
  });

  auto* chart_panel = new QWidget(this);
  auto* chart_layout = new QVBoxLayout(chart_panel);
  chart_layout->setContentsMargins(0, 0, 0, 0);
  auto* chart_bar = new QHBoxLayout;
  chart_bar->addWidget(new QLabel(tr("Target:"), chart_panel));
  chart_bar->addWidget(chart_target_);
  chart_bar->addWidget(new QLabel(tr("Device:"), chart_panel));
  chart_bar->addWidget(chart_device_);
  chart_bar->addStretch(1);
  chart_layout->addLayout(chart_bar);
  chart_layout->addWidget(tabs_, 1);
  connect(chart_target_, &QComboBox::currentIndexChanged, this, [this] { rebuildCharts(); });
  connect(chart_device_, &QComboBox::currentIndexChanged, this, [this] { rebuildCharts(); });

  details_->setObjectName(QStringLiteral("layerDetails"));
  details_->setOpenLinks(false);
  details_->setPlaceholderText(tr("Select a layer to see its nodes, shapes, kernels and reasons on every target."));

  auto* lower = new QSplitter(Qt::Horizontal, this);
  lower->setObjectName(QStringLiteral("layersLowerSplitter"));
  lower->addWidget(chart_panel);
  lower->addWidget(details_);
  lower->setStretchFactor(0, 2);
  lower->setStretchFactor(1, 1);
  lower->setSizes({640, 320});
  auto* split = new QSplitter(Qt::Vertical, this);
  split->setObjectName(QStringLiteral("layersSplitter"));
  split->addWidget(table_);
  split->addWidget(lower);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(summary_);
  layout->addWidget(bar);
  layout->addWidget(split, 1);

  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &LayersPage::onTableSelection);
  connect(selection_, &LayerSelection::changed, this, &LayersPage::onSelectionChanged);
}

void LayersPage::buildFilters(QWidget* bar) {
  auto* grid = new QGridLayout(bar);
  grid->setContentsMargins(0, 0, 0, 0);
  mode_ = new QComboBox(bar);
  mode_->setObjectName(QStringLiteral("rowMode"));
  mode_->addItems({tr("Rows: ONNX nodes"), tr("Rows: kernels")});
  mode_->setToolTip(
      tr("ONNX nodes: each node shows the whole time of the kernel that computes it; the nodes of a fused "
         "kernel read \"shared by N\" and any sum counts the kernel once. Kernels: one row per kernel, "
         "matched across targets by its first node."));
  search_ = new QLineEdit(bar);
  search_->setObjectName(QStringLiteral("layerSearch"));
  search_->setPlaceholderText(tr("Filter by name, op or kernel (Ctrl+F)"));
  search_->setClearButtonEnabled(true);
  op_ = new QComboBox(bar);
  op_->setObjectName(QStringLiteral("opFilter"));
  device_ = new QComboBox(bar);
  device_->setObjectName(QStringLiteral("deviceFilter"));
  bound_ = new QComboBox(bar);
  bound_->setObjectName(QStringLiteral("boundFilter"));
  bound_->addItems({tr("any bound"), QStringLiteral("memory"), QStringLiteral("compute")});
  drift_on_ = new QCheckBox(tr("drift below"), bar);
  drift_on_->setObjectName(QStringLiteral("driftFilter"));
  drift_db_ = new QDoubleSpinBox(bar);
  drift_db_->setObjectName(QStringLiteral("driftDb"));
  drift_db_->setRange(0, 200);
  drift_db_->setValue(30);
  drift_db_->setSuffix(tr(" dB on"));
  drift_target_ = new QComboBox(bar);
  drift_target_->setObjectName(QStringLiteral("driftTarget"));
  slower_on_ = new QCheckBox(tr("slower:"), bar);
  slower_on_->setObjectName(QStringLiteral("slowerFilter"));
  slower_a_ = new QComboBox(bar);
  slower_a_->setObjectName(QStringLiteral("slowerA"));
  slower_factor_ = new QDoubleSpinBox(bar);
  slower_factor_->setObjectName(QStringLiteral("slowerFactor"));
  slower_factor_->setRange(1, 1000);
  slower_factor_->setValue(1.5);
  slower_factor_->setPrefix(tr("by ≥ "));
  slower_factor_->setSuffix(tr("× than"));
  slower_b_ = new QComboBox(bar);
  slower_b_->setObjectName(QStringLiteral("slowerB"));
  what_if_count_ = new QSpinBox(bar);
  what_if_count_->setObjectName(QStringLiteral("whatIfCount"));
  what_if_count_->setRange(1, 100);
  what_if_count_->setValue(3);
  what_if_count_->setPrefix(tr("keep "));
  what_if_count_->setSuffix(tr(" in fp32"));
  what_if_ = new QPushButton(tr("What-if re-run…"), bar);
  what_if_->setObjectName(QStringLiteral("whatIfButton"));
  what_if_->setToolTip(
      tr("Re-run only the drift target with the selected layers (or, with none selected, the "
         "layers that drift most) computed in fp32 (--keep-fp32); the result opens in Compare."));
  grid->addWidget(mode_, 0, 0);
  grid->addWidget(search_, 0, 1, 1, 3);
  grid->addWidget(op_, 0, 4);
  grid->addWidget(device_, 0, 5);
  grid->addWidget(bound_, 0, 6);
  auto* second = new QHBoxLayout;
  for (QWidget* w : std::initializer_list<QWidget*>{drift_on_, drift_db_, drift_target_, slower_on_, slower_a_,
                                                    slower_factor_, slower_b_}) {
    second->addWidget(w);
  }
  second->addStretch(1);
  second->addWidget(what_if_count_);
  second->addWidget(what_if_);
  grid->addLayout(second, 1, 0, 1, 7);

  const auto apply = [this] { applyFilters(); };
  connect(mode_, &QComboBox::currentIndexChanged, this, [this](int i) {
    model_->setMode(i == 0 ? LayerRowMode::kNodes : LayerRowMode::kKernels);
    onSelectionChanged(selection_->nodes(), nullptr);
  });
  connect(search_, &QLineEdit::textChanged, this, apply);
  for (QComboBox* combo : {op_, device_, bound_, drift_target_, slower_a_, slower_b_})
    connect(combo, &QComboBox::currentIndexChanged, this, apply);
  connect(drift_on_, &QCheckBox::toggled, this, apply);
  connect(slower_on_, &QCheckBox::toggled, this, apply);
  connect(drift_db_, &QDoubleSpinBox::valueChanged, this, apply);
  connect(slower_factor_, &QDoubleSpinBox::valueChanged, this, apply);
  connect(what_if_, &QPushButton::clicked, this, [this] {
    const QString target = drift_target_->currentText();
    const QStringList nodes = whatIfNodes(target, what_if_count_->value());
    if (!target.isEmpty() && !nodes.isEmpty()) emit whatIfRequested(target, nodes);
  });
}

void LayersPage::applyFilters() {
  proxy_->setTextFilter(search_->text());
  proxy_->setOpFilter(op_->currentIndex() > 0 ? op_->currentText() : QString());
  proxy_->setDeviceFilter(device_->currentIndex() > 0 ? device_->currentText() : QString());
  proxy_->setBoundFilter(bound_->currentIndex() > 0 ? bound_->currentText() : QString());
  proxy_->setDriftBelow(drift_on_->isChecked() ? drift_target_->currentIndex() : -1, drift_db_->value());
  proxy_->setSlowerThan(slower_on_->isChecked() ? slower_a_->currentIndex() : -1,
                        slower_on_->isChecked() ? slower_b_->currentIndex() : -1, slower_factor_->value());
  QString shown = tr("%1 of %2 rows shown").arg(proxy_->rowCount()).arg(model_->rowCount());
  if (model_->targetCount() > 0 && proxy_->rowCount() > 0) {
    // What the shown rows cost on the first target: each kernel once, however many node rows it covers.
    std::vector<int> rows;
    rows.reserve(static_cast<size_t>(proxy_->rowCount()));
    for (int r = 0; r < proxy_->rowCount(); ++r) rows.push_back(proxy_->mapToSource(proxy_->index(r, 0)).row());
    const double sum = SumP50(model_->table(), 0, rows);
    if (std::isfinite(sum)) {
      shown += tr(", Σ p50 on %1 %2 (each kernel once)")
                   .arg(model_->targetName(0).toHtmlEscaped(), Q(formats::FormatDuration(sum)));
    }
  }
  summary_->setText(run_text_ + shown + run_notes_);
}

void LayersPage::fillTargetCombos() {
  const QSignalBlocker b1(op_), b2(device_), b3(drift_target_), b4(slower_a_), b5(slower_b_), b6(chart_target_),
      b7(chart_device_);
  std::set<QString> ops, devices;
  for (const LayerRow& row : model_->table().rows) {
    if (!row.op.isEmpty()) ops.insert(row.op);
    for (const LayerCell& c : row.cells) {
      if (c.present && !c.device.isEmpty()) devices.insert(c.device);
    }
  }
  op_->clear();
  op_->addItem(tr("any op"));
  for (const QString& op : ops) op_->addItem(op);
  device_->clear();
  device_->addItem(tr("any device"));
  for (const QString& d : devices) device_->addItem(d);
  QStringList targets;
  for (int i = 0; i < model_->targetCount(); ++i) targets << model_->targetName(i);
  for (QComboBox* combo : {drift_target_, slower_a_, slower_b_, chart_target_}) {
    combo->setSizeAdjustPolicy(QComboBox::AdjustToContents);  // "opencl:0:fp32" whole, not "opencl:0"
    const QString keep = combo->currentText();
    combo->clear();
    combo->addItems(targets);
    if (targets.contains(keep)) combo->setCurrentText(keep);
  }
  // Sensible starting points: drift on the lowest precision, "int8 slower than fp32".
  if (!targets.isEmpty()) {
    drift_target_->setCurrentIndex(static_cast<int>(targets.size()) - 1);
    slower_a_->setCurrentIndex(static_cast<int>(targets.size()) - 1);
    slower_b_->setCurrentIndex(std::max(0, model_->targetIndex(QStringLiteral("cpu:fp32"))));
  }
  chart_device_->clear();
  if (run()) {
    for (const std::string& d : charts::RooflineDevices(*run())) chart_device_->addItem(Q(d));
  }
}

void LayersPage::setRun(std::shared_ptr<const RunResult> run) {
  model_->setRun(std::move(run), mode_->currentIndex() == 0 ? LayerRowMode::kNodes : LayerRowMode::kKernels);
  fillTargetCombos();
  applyFilters();
  // The slowest rows first: what a user opens this page for.
  const int p50 = model_->targetCount() > 0 ? LayerTableModel::column(0, LayerTableModel::kP50) : 0;
  table_->sortByColumn(p50, Qt::DescendingOrder);
  table_->setColumnWidth(LayerTableModel::kNameColumn, 200);
  // Wide enough for "0.0080 (shared by 3)" on the nodes of a fused kernel.
  for (int t = 0; t < model_->targetCount(); ++t)
    table_->resizeColumnToContents(LayerTableModel::column(t, LayerTableModel::kP50));
  run_text_.clear();
  run_notes_.clear();
  if (const auto& r = this->run()) {
    run_text_ = tr("Run %1 of %2: %3 rows on %4 targets; ")
                    .arg(r->run_id ? QString::number(*r->run_id) : tr("(not stored)"), Q(r->model.path).toHtmlEscaped(),
                         QString::number(model_->rowCount()), QString::number(model_->targetCount()));
    // Per-layer times a user should not take as they are: said where they are shown.
    for (const auto& t : model_->table().targets) {
      const QString name = Q(t->target.ToString()).toHtmlEscaped();
      if (t->unreliable) {
        run_notes_ += tr("<br><span style=\"color:%1\"><b>%2 is unreliable</b>: %3</span>")
                          .arg(kWarnHtml, name, Q(t->unreliable_reason).toHtmlEscaped());
      } else if (t->latency.machine_busy) {
        run_notes_ += tr("<br><b>%1 was timed while other processes used %2 % of the CPUs</b>: its times may be "
                         "inflated.")
                          .arg(name)
                          .arg(t->latency.other_cpu_share.value_or(0) * 100, 0, 'f', 0);
      }
      // Where the end-to-end time goes, and why Σ layers and end to end disagree when they do; a run
      // recorded before the attribution has only the bare ratio.
      if (const std::optional<TimeAttribution>& a = t->attribution) {
        run_notes_ += tr("<br>%1: %2").arg(name, Q(formats::FormatAttribution(*a)).toHtmlEscaped());
        if (!a->explanation.empty()) {
          run_notes_ +=
              tr("<br><span style=\"color:%1\">⚠ %2</span>").arg(kWarnHtml, Q(a->explanation).toHtmlEscaped());
        }
      } else if (t->instrumentation_overhead > 2) {
        run_notes_ +=
            tr("<br><b>%1's layer times add up to %2× its end-to-end latency</b>: the per-layer pass was "
               "slowed (timers, or a busy machine); compare its layers with each other, not with the latency.")
                .arg(name)
                .arg(t->instrumentation_overhead, 0, 'f', 1);
      }
      // What the kernels computed in, where it is not simply the target's precision: the column of a
      // "cpu:int8" that ran as cpu:fp32 holds fp32 kernels, and says so.
      if (const PrecisionMix mix = ComputePrecisionMix(*t); MixWorthSaying(mix, t->target)) {
        run_notes_ += mix.ran_as.empty()
                          ? tr("<br>%1: %2").arg(name, Q(mix.text).toHtmlEscaped())
                          : tr("<br><span style=\"color:%1\"><b>%2 ran as %3</b>: %4</span>")
                                .arg(kWarnHtml, name, Q(mix.ran_as).toHtmlEscaped(), Q(mix.text).toHtmlEscaped());
      }
      if (t->accuracy && !t->accuracy->first_non_finite_layer.empty()) {
        run_notes_ += tr("<br><span style=\"color:%1\"><b>%2 produced non-finite values</b> from layer %3</span>")
                          .arg(kWarnHtml, name, Q(t->accuracy->first_non_finite_layer).toHtmlEscaped());
      }
    }
  }
  applyFilters();
  rebuildCharts();
  onSelectionChanged(selection_->nodes(), nullptr);
}

void LayersPage::setAnalysis(std::shared_ptr<const ModelAnalysis> analysis) {
  analysis_ = std::move(analysis);
  updateDetails();
}

void LayersPage::setChartTarget(const QString& target) { chart_target_->setCurrentText(target); }

QStringList LayersPage::whatIfNodes(const QString& target, int count) const {
  QStringList nodes;
  for (const QModelIndex& index : table_->selectionModel()->selectedRows()) {
    for (const QString& n : index.data(LayerTableModel::NodesRole).toStringList()) {
      if (!nodes.contains(n)) nodes << n;
    }
  }
  if (!nodes.isEmpty()) return nodes;
  const int t = model_->targetIndex(target);
  if (t < 0) return {};
  std::vector<std::pair<double, int>> worst;
  const auto& rows = model_->table().rows;
  for (size_t r = 0; r < rows.size(); ++r) {
    const LayerCell& cell = rows[r].cells[static_cast<size_t>(t)];
    // Only layers computed below fp32 can gain: a layer that already ran in fp32 (the last MatMul of
    // a classifier often does) only shows the drift of the layers before it.
    if (cell.precision == QStringLiteral("fp32")) continue;
    if (std::isfinite(cell.sqnr_db) && cell.sqnr_db < 30) worst.push_back({cell.sqnr_db, static_cast<int>(r)});
  }
  std::sort(worst.begin(), worst.end());
  for (size_t i = 0; i < worst.size() && static_cast<int>(nodes.size()) < count; ++i) {
    for (const QString& n : rows[static_cast<size_t>(worst[i].second)].nodes) {
      if (!nodes.contains(n)) nodes << n;
    }
  }
  return nodes;
}

void LayersPage::rebuildCharts() {
  const auto& r = run();
  std::vector<std::unique_ptr<QChart>> charts(chart_views_.size());
  if (r) {
    const TargetResult* target = r->FindTarget(chart_target_->currentText().toStdString());
    if (target == nullptr && model_->targetCount() > 0) target = model_->table().targets.front().get();
    if (target !=
        nullptr)  // Ten bars: Qt Charts hides a category label whose row is lower than its text, and the chart
      // shares the page with the table.
      charts[kTimeTab] = charts::LayerTimeChart(*r, *target, 10, 18);
    const std::string device = chart_device_->currentText().toStdString();
    if (!device.empty()) {
      charts[kRooflineTab] = charts::RooflineChart(*r, device);
      charts[kCrossTab] = charts::CrossTargetRooflineChart(*r, device);
    }
    charts[kDriftTab] = charts::DriftChart(*r);
    charts[kEnergyTab] = charts::EnergyChart(*r);
  }
  for (size_t i = 0; i < chart_views_.size(); ++i) {
    if (!charts[i]) {
      charts[i] = std::make_unique<QChart>();
      charts[i]->setTitle(tr("No data"));
    }
    QChart* old = chart_views_[i]->chart();
    chart_views_[i]->setChart(charts[i].release());
    delete old;
    connectChart(chart_views_[i]);
    charts::HighlightNodes(*chart_views_[i]->chart(), selection_->nodes());
  }
}

void LayersPage::connectChart(QChartView* view) {
  // Clicking a point or bar selects the layer it stands for.
  for (QAbstractSeries* series : view->chart()->series()) {
    if (auto* xy = qobject_cast<QXYSeries*>(series)) {
      if (charts::NodesOfPoints(xy).empty()) continue;
      connect(xy, &QXYSeries::clicked, this, [this, xy, view](const QPointF& point) {
        const QStringList nodes = charts::NodesNear(*xy, point);
        if (!nodes.isEmpty()) selection_->select(nodes, view);
      });
    } else if (auto* bars = qobject_cast<QAbstractBarSeries*>(series)) {
      for (QBarSet* set : bars->barSets()) {
        if (charts::NodesOfPoints(set).empty()) continue;
        connect(set, &QBarSet::clicked, this, [this, set, view](int index) {
          const std::vector<QStringList> nodes = charts::NodesOfPoints(set);
          if (index >= 0 && index < static_cast<int>(nodes.size()))
            selection_->select(nodes[static_cast<size_t>(index)], view);
        });
      }
    }
  }
}

void LayersPage::onTableSelection() {
  if (syncing_) return;
  QStringList nodes;
  // The row the user clicked last leads: its nodes go first (the selection's current layer).
  const QModelIndex current = table_->selectionModel()->currentIndex();
  if (current.isValid() && table_->selectionModel()->isRowSelected(current.row(), current.parent()))
    nodes = current.data(LayerTableModel::NodesRole).toStringList();
  for (const QModelIndex& index : table_->selectionModel()->selectedRows()) {
    for (const QString& n : index.data(LayerTableModel::NodesRole).toStringList()) {
      if (!nodes.contains(n)) nodes << n;
    }
  }
  selection_->select(nodes, table_);
}

void LayersPage::onSelectionChanged(const QStringList& nodes, QObject* origin) {
  for (QChartView* view : chart_views_) {
    if (view->chart() != nullptr) charts::HighlightNodes(*view->chart(), nodes);
  }
  if (origin != table_) {
    syncing_ = true;
    QItemSelection rows;
    QSet<int> seen;
    int first = -1;
    for (const QString& n : nodes) {
      const int source = model_->rowOfNode(n);
      if (source < 0 || seen.contains(source)) continue;
      seen.insert(source);
      const QModelIndex at = proxy_->mapFromSource(model_->index(source, 0));
      if (!at.isValid()) continue;
      rows.select(at, at.siblingAtColumn(proxy_->columnCount() - 1));
      if (first < 0) first = at.row();
    }
    table_->selectionModel()->select(rows, QItemSelectionModel::ClearAndSelect);
    if (first >= 0) {
      table_->selectionModel()->setCurrentIndex(proxy_->index(first, 0), QItemSelectionModel::NoUpdate);
      table_->scrollTo(proxy_->index(first, 0), QAbstractItemView::PositionAtCenter);
    }
    syncing_ = false;
  }
  if (origin != heat_table_) {
    const int row = nodes.isEmpty() ? -1 : model_->rowOfNode(nodes.front());
    if (row >= 0) {
      heat_table_->selectRow(row);
      heat_table_->scrollTo(heat_map_->index(row, 0));
    } else {
      heat_table_->clearSelection();
    }
  }
  updateDetails();
}

void LayersPage::updateDetails() {
  const QString node = selection_->current();
  const int row = node.isEmpty() ? -1 : model_->rowOfNode(node);
  if (row < 0) {
    details_->clear();
    return;
  }
  const LayerRow& r = model_->table().rows[static_cast<size_t>(row)];
  QString html = QStringLiteral("<h3>%1</h3><p><b>%2</b>").arg(r.key.toHtmlEscaped(), r.op.toHtmlEscaped());
  if (r.nodes.size() > 1) html += tr(" — ONNX nodes: %1").arg(r.nodes.join(QStringLiteral(", ")).toHtmlEscaped());
  html += QStringLiteral("</p>");
  if (analysis_) {
    for (const NodeRow& n : analysis_->nodes) {
      if (!r.nodes.contains(Q(n.name))) continue;
      html += QStringLiteral("<p><b>%1</b> (%2)<br>").arg(Q(n.name).toHtmlEscaped(), Q(n.op).toHtmlEscaped());
      for (const std::string& in : n.inputs) html += tr("in: %1<br>").arg(Q(in).toHtmlEscaped());
      for (const std::string& out : n.outputs) html += tr("out: %1<br>").arg(Q(out).toHtmlEscaped());
      for (const std::string& attr : n.attributes) html += QStringLiteral("<i>%1</i><br>").arg(Q(attr).toHtmlEscaped());
      html += QStringLiteral("</p>");
    }
  } else {
    html += tr("<p><i>Shapes: open the model (Model page) to see each node's inputs and outputs.</i></p>");
  }
  html += QStringLiteral(
      "<table border=1 cellspacing=0 cellpadding=3><tr><th>target</th><th>kernel</th><th>device / "
      "implementation</th><th>precision</th><th>p50 / p90 / one run</th><th>FLOPs · bytes</th>"
      "<th>bound</th><th>drift</th><th>energy</th></tr>");
  for (int t = 0; t < model_->targetCount(); ++t) {
    const LayerCell& c = r.cells[static_cast<size_t>(t)];
    const TargetResult& target = *model_->table().targets[static_cast<size_t>(t)];
    html += QStringLiteral("<tr><td>%1</td>").arg(model_->targetName(t));
    if (!c.present) {
      html += tr("<td colspan=8>no kernel for this layer (fused into another, or not run)</td></tr>");
      continue;
    }
    const LayerResult& l = target.layers[static_cast<size_t>(c.layer)];
    QString reason;
    for (const Fallback& f : target.fallbacks) {
      if (r.nodes.contains(Q(f.node))) reason += tr("<br><i>fallback: %1</i>").arg(Q(f.reason).toHtmlEscaped());
    }
    const QString observed = l.observed_ms ? Q(formats::FormatDuration(*l.observed_ms)) : QStringLiteral("—");
    html += QStringLiteral(
                "<td>%1%2</td><td>%3 / %4%5</td><td>%6</td><td>%7 / %8 / %9</td><td>%10 · %11</td>"
                "<td>%12</td><td>%13</td><td>%14</td></tr>")
                .arg(c.kernel.toHtmlEscaped(),
                     c.kernel_nodes > 1 ? tr(" (fused: shared by %1 nodes)").arg(c.kernel_nodes) : QString(),
                     c.device.toHtmlEscaped(), c.implementation.toHtmlEscaped(), reason, c.precision,
                     Q(formats::FormatDuration(l.time_p50_ms)), Q(formats::FormatDuration(l.time_p90_ms)), observed)
                .arg(Q(formats::FormatSi(static_cast<double>(l.flops))),
                     Q(formats::FormatBytes(static_cast<double>(l.bytes_read + l.bytes_written))),
                     c.bound.isEmpty() ? QStringLiteral("—") : c.bound,
                     l.drift ? Q(formats::FormatSqnr(l.drift->sqnr_db)) + tr(", cos %1").arg(l.drift->cosine, 0, 'f', 5)
                             : QStringLiteral("—"),
                     l.energy ? Q(formats::FormatEnergy(l.energy->joules)) + QStringLiteral(" (") +
                                    Q(l.energy->source) + QStringLiteral(")")
                              : QStringLiteral("—"));
  }
  html += QStringLiteral("</table><p><small>") +
          tr("Times are the kernel's over the observed per-layer runs (p50, p90) and one observed run: the whole "
             "kernel's, also for a node of a fused kernel (the table marks it \"shared by N\"). A reorder or copy "
             "in front of a node is a kernel of its own (Rows: kernels).") +
          QStringLiteral("</small></p>");
  details_->setHtml(html);
}

}  // namespace chipfit
