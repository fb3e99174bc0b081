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
#include <QScrollArea>
#include <QScrollBar>
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

#include "core/runtime/target.h"
#include "profilers/precision_mix.h"
#include "views/charts/formats.h"
#include "views/charts/run_charts.h"
#include "views/pages/frozen_table_view.h"

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
      table_(new FrozenTableView(this)),
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
  // Kernel and node names keep both ends ("FusedConv p2o…Conv.42"); the tooltip has the whole name.
  table_->setTextElideMode(Qt::ElideMiddle);
  // Fixed row heights: the view never measures thousands of rows to lay them out.
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setResizeContentsPrecision(300);  // column widths from the first 300 rows
  table_->horizontalHeader()->setDefaultSectionSize(86);
  table_->horizontalHeader()->setHighlightSections(false);
  table_->syncFrozenLook();
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
  chart_device_->setToolTip(
      tr("The device the rooflines show (its ceilings as measured on the Devices page, Measure again)"));
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
  // Break lines between words only, never inside a name ("cpu:fp 32"), and never narrower than a
  // key, a target name and a kernel name side by side.
  details_->setWordWrapMode(QTextOption::WordWrap);
  details_->setMinimumWidth(details_->fontMetrics().averageCharWidth() * 42);

  auto* lower = new QSplitter(Qt::Horizontal, this);
  lower->setObjectName(QStringLiteral("layersLowerSplitter"));
  lower->addWidget(chart_panel);
  lower->addWidget(details_);
  lower->setStretchFactor(0, 2);
  lower->setStretchFactor(1, 1);
  lower->setSizes({640, 360});
  auto* split = new QSplitter(Qt::Vertical, this);
  split->setObjectName(QStringLiteral("layersSplitter"));
  split->addWidget(table_);
  split->addWidget(lower);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);

  // The run's notes (one or two lines per target, more on a busy machine) scroll within five lines, so
  // at 800 pixels high the table keeps its rows.
  auto* summary_area = new QScrollArea(this);
  summary_area->setObjectName(QStringLiteral("layersSummaryArea"));
  summary_area->setWidget(summary_);
  summary_area->setWidgetResizable(true);
  summary_area->setFrameShape(QFrame::NoFrame);
  summary_area->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  summary_area->viewport()->setAutoFillBackground(false);
  summary_area->setMaximumHeight(summary_->fontMetrics().lineSpacing() * 5 + 6);
  summary_area->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(summary_area);
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
         "layers that drift most) computed in fp32; the result opens in Compare beside this one, with both drifts."));
  buildColumnControls(bar);
  auto* columns = new QHBoxLayout;
  for (QWidget* w : std::initializer_list<QWidget*>{column_set_, column_a_, column_versus_, column_b_})
    columns->addWidget(w);
  grid->addWidget(mode_, 0, 0);
  grid->addLayout(columns, 0, 1);
  grid->addWidget(search_, 0, 2, 1, 2);
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

void LayersPage::buildColumnControls(QWidget* bar) {
  column_set_ = new QComboBox(bar);
  column_set_->setObjectName(QStringLiteral("columnSet"));
  column_set_->addItem(tr("One target"), static_cast<int>(ColumnSet::kOneTarget));
  column_set_->addItem(tr("A vs B"), static_cast<int>(ColumnSet::kAVersusB));
  column_set_->addItem(tr("All targets"), static_cast<int>(ColumnSet::kAllTargets));
  column_set_->setCurrentIndex(2);
  column_set_->setToolTip(
      tr("Which targets' columns the table shows: one target's, two side by side (kernel, p50, share, "
         "precision, drift, energy) with the ratio of their p50, or every target's."));
  column_a_ = new QComboBox(bar);
  column_a_->setObjectName(QStringLiteral("columnTargetA"));
  column_a_->setToolTip(tr("The target whose columns are shown (A: the baseline of the ratio)"));
  column_versus_ = new QLabel(tr("vs"), bar);
  column_b_ = new QComboBox(bar);
  column_b_->setObjectName(QStringLiteral("columnTargetB"));
  column_b_->setToolTip(tr("The target compared with A: the ratio is B's p50 over A's"));
  for (QComboBox* combo : {column_a_, column_b_}) combo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  for (QComboBox* combo : {column_set_, column_a_, column_b_})
    connect(combo, &QComboBox::currentIndexChanged, this, &LayersPage::onColumnSetChanged);
}

void LayersPage::onColumnSetChanged() {
  applyColumnSet();
  // A sort by a column the set just hid would leave the order unexplained: sort by what is shown.
  const int sorted = table_->horizontalHeader()->sortIndicatorSection();
  if (sorted < 0 || table_->isColumnHidden(sorted) || sorted == LayerTableModel::kRatioColumn ||
      columnSet() == ColumnSet::kAVersusB)
    table_->sortByColumn(defaultSortColumn(), Qt::DescendingOrder);
  applyFilters();  // the Σ p50 line follows target A
}

QTableView* LayersPage::table() const { return table_; }

QTableView* LayersPage::frozenColumn() const { return table_->frozenView(); }

LayersPage::ColumnSet LayersPage::columnSet() const {
  return static_cast<ColumnSet>(column_set_->currentData().toInt());
}

void LayersPage::setColumnSet(ColumnSet set, const QString& a, const QString& b) {
  const QSignalBlocker block_a(column_a_), block_b(column_b_);
  if (!a.isEmpty()) column_a_->setCurrentText(a);
  if (!b.isEmpty()) column_b_->setCurrentText(b);
  const int index = column_set_->findData(static_cast<int>(set));
  if (index == column_set_->currentIndex()) {
    onColumnSetChanged();  // new targets in the same set
  } else {
    column_set_->setCurrentIndex(index);
  }
}

void LayersPage::applyColumnSet() {
  const ColumnSet set = columnSet();
  const int a = model_->targetIndex(column_a_->currentText());
  const int b = model_->targetIndex(column_b_->currentText());
  const bool versus = set == ColumnSet::kAVersusB && a >= 0 && b >= 0;
  column_a_->setVisible(set != ColumnSet::kAllTargets);
  column_versus_->setVisible(set == ColumnSet::kAVersusB);
  column_b_->setVisible(set == ColumnSet::kAVersusB);
  model_->setRatioTargets(versus ? column_a_->currentText() : QString(), versus ? column_b_->currentText() : QString());
  // Side by side, the figures a comparison reads; one target alone or all: every metric.
  static const std::set<LayerTableModel::Metric> kVersus = {LayerTableModel::kKernel, LayerTableModel::kP50,
                                                            LayerTableModel::kShare,  LayerTableModel::kPrecision,
                                                            LayerTableModel::kSqnr,   LayerTableModel::kEnergy};
  table_->setColumnHidden(LayerTableModel::kRatioColumn, !versus);
  if (versus) sizeColumn(LayerTableModel::kRatioColumn);  // its header names the pair
  for (int c = LayerTableModel::kFixedColumns; c < model_->columnCount(); ++c) {
    const int t = LayerTableModel::targetOfColumn(c);
    bool shown = true;
    if (set == ColumnSet::kOneTarget && a >= 0) shown = t == a;
    if (versus) shown = (t == a || t == b) && kVersus.count(LayerTableModel::metricOfColumn(c)) > 0;
    if (table_->isColumnHidden(c) == shown) table_->setColumnHidden(c, !shown);
  }
}

int LayersPage::defaultSortColumn() const {
  if (model_->targetCount() == 0) return LayerTableModel::kNameColumn;
  const int a = model_->targetIndex(column_a_->currentText());
  switch (columnSet()) {
    case ColumnSet::kOneTarget: return LayerTableModel::column(std::max(a, 0), LayerTableModel::kP50);
    case ColumnSet::kAVersusB:
      if (model_->ratioA() >= 0 && model_->ratioB() >= 0) return LayerTableModel::kRatioColumn;
      return LayerTableModel::column(std::max(a, 0), LayerTableModel::kP50);
    case ColumnSet::kAllTargets: break;
  }
  return LayerTableModel::column(0, LayerTableModel::kP50);
}

QString LayersPage::columnKey(int column) const {
  if (column < LayerTableModel::kFixedColumns) return QStringLiteral("#%1").arg(column);
  return model_->targetName(LayerTableModel::targetOfColumn(column)) + QChar('/') +
         QString::number(LayerTableModel::metricOfColumn(column));
}

int LayersPage::columnOfKey(const QString& key) const {
  for (int c = 0; c < model_->columnCount(); ++c) {
    if (columnKey(c) == key) return c;
  }
  return -1;
}

void LayersPage::sizeColumn(int column) {
  // As wide as the column's header and cells ("17.4 µs (shared by 3)", "26.7 mJ (est.)"); a name wider
  // than the limit is elided in the middle, whole in its tooltip. QTableView hides sizeHintForColumn
  // (its base class makes it public); it measures a few hundred rows, not every row.
  const bool name =
      column == LayerTableModel::kNameColumn ||
      (column >= LayerTableModel::kFixedColumns && LayerTableModel::metricOfColumn(column) == LayerTableModel::kKernel);
  const int chars = table_->fontMetrics().averageCharWidth();
  const int content = std::max(static_cast<const QAbstractItemView*>(table_)->sizeHintForColumn(column),
                               table_->horizontalHeader()->sectionSizeHint(column));
  table_->setColumnWidth(column, std::clamp(content, name ? chars * 16 : chars * 6, name ? chars * 40 : chars * 60));
}

LayersPage::TableState LayersPage::saveTableState() const {
  TableState state;
  const QHeaderView* header = table_->horizontalHeader();
  if (header->sortIndicatorSection() >= 0) state.sort_key = columnKey(header->sortIndicatorSection());
  state.sort_order = header->sortIndicatorOrder();
  for (int c = 0; c < model_->columnCount(); ++c) {
    if (!table_->isColumnHidden(c)) state.widths.insert(columnKey(c), table_->columnWidth(c));
  }
  state.across = table_->horizontalScrollBar()->value();
  state.down = table_->verticalScrollBar()->value();
  return state;
}

void LayersPage::applyFilters() {
  proxy_->setTextFilter(search_->text());
  proxy_->setOpFilter(op_->currentIndex() > 0 ? op_->currentText() : QString());
  proxy_->setDeviceFilter(device_->currentIndex() > 0 ? device_->currentText() : QString());
  proxy_->setBoundFilter(bound_->currentIndex() > 0 ? bound_->currentText() : QString());
  proxy_->setDriftBelow(drift_on_->isChecked() ? drift_target_->currentIndex() : -1, drift_db_->value());
  proxy_->setSlowerThan(slower_on_->isChecked() ? slower_a_->currentIndex() : -1,
                        slower_on_->isChecked() ? slower_b_->currentIndex() : -1, slower_factor_->value());
  if (!run()) {
    summary_->setText(tr("No run. Profile a model (Run page) or open a stored run (History)."));
    return;
  }
  QString shown = tr("%1 of %2 rows shown").arg(proxy_->rowCount()).arg(model_->rowCount());
  // The target the columns show (A), else the first.
  const int target =
      columnSet() == ColumnSet::kAllTargets ? 0 : std::max(0, model_->targetIndex(column_a_->currentText()));
  if (model_->targetCount() > 0 && proxy_->rowCount() > 0) {
    // What the shown rows cost on that target: each kernel once, however many node rows it covers.
    std::vector<int> rows;
    rows.reserve(static_cast<size_t>(proxy_->rowCount()));
    for (int r = 0; r < proxy_->rowCount(); ++r) rows.push_back(proxy_->mapToSource(proxy_->index(r, 0)).row());
    const double sum = SumP50(model_->table(), target, rows);
    if (std::isfinite(sum)) {
      shown += tr(", Σ p50 on %1 %2 (each kernel once)")
                   .arg(model_->targetName(target).toHtmlEscaped(), Q(formats::FormatDuration(sum)));
    }
  }
  summary_->setText(run_text_ + shown + run_notes_);
}

void LayersPage::fillTargetCombos(bool keep_choices) {
  const QSignalBlocker b1(op_), b2(device_), b3(drift_target_), b4(slower_a_), b5(slower_b_), b6(chart_target_),
      b7(chart_device_), b8(column_a_), b9(column_b_);
  std::set<QString> ops, devices;
  for (const LayerRow& row : model_->table().rows) {
    if (!row.op.isEmpty()) ops.insert(row.op);
    for (const LayerCell& c : row.cells) {
      if (c.present && !c.device.isEmpty()) devices.insert(c.device);
    }
  }
  // A filter the user chose stays while the run grows (its op or device may be new, or not yet in).
  const auto refill = [](QComboBox* combo, const QString& any, const std::set<QString>& items) {
    const QString keep = combo->currentIndex() > 0 ? combo->currentText() : QString();
    combo->clear();
    combo->addItem(any);
    for (const QString& item : items) combo->addItem(item);
    if (!keep.isEmpty() && combo->findText(keep) < 0) combo->addItem(keep);
    if (!keep.isEmpty()) combo->setCurrentText(keep);
  };
  refill(op_, tr("any op"), ops);
  refill(device_, tr("any device"), devices);
  QStringList targets;
  for (int i = 0; i < model_->targetCount(); ++i) targets << model_->targetName(i);
  for (QComboBox* combo : {drift_target_, slower_a_, slower_b_, chart_target_, column_a_, column_b_}) {
    combo->setSizeAdjustPolicy(QComboBox::AdjustToContents);  // "opencl:0:fp32" whole, not "opencl:0"
    const QString keep = combo->currentText();
    combo->clear();
    combo->addItems(targets);
    if (targets.contains(keep)) combo->setCurrentText(keep);
  }
  // Sensible starting points on a new run: drift on the lowest precision, "int8 slower than fp32",
  // "fp32 vs int8"; a run that grows keeps what the user chose.
  if (!targets.isEmpty() && !keep_choices) {
    const int last = static_cast<int>(targets.size()) - 1;
    const int fp32 = std::max(0, model_->targetIndex(QStringLiteral("cpu:fp32")));
    drift_target_->setCurrentIndex(last);
    slower_a_->setCurrentIndex(last);
    slower_b_->setCurrentIndex(fp32);
    column_a_->setCurrentIndex(fp32);
    column_b_->setCurrentIndex(last == fp32 ? 0 : last);
  }
  // A against itself compares nothing: B is another target once there is one.
  if (targets.size() > 1 && column_b_->currentIndex() == column_a_->currentIndex())
    column_b_->setCurrentIndex(column_a_->currentIndex() == targets.size() - 1 ? 0
                                                                               : static_cast<int>(targets.size()) - 1);
  const QString device = chart_device_->currentText();
  chart_device_->clear();
  if (run()) {
    for (const std::string& d : charts::RooflineDevices(*run())) chart_device_->addItem(Q(d));
  }
  if (chart_device_->findText(device) >= 0) chart_device_->setCurrentText(device);
}

void LayersPage::setRun(std::shared_ptr<const RunResult> run) {
  // The same run again, grown by a target (a profile in progress streams its results), keeps what
  // the user made of the table: sort, column widths, filters, selection and scroll position.
  // A table without targets yet has nothing of the user's to keep, and no sort worth keeping.
  const auto& previous = this->run();
  const bool same_run = previous && run && model_->targetCount() > 0 &&
                        (previous == run || (previous->run_id && previous->run_id == run->run_id) ||
                         (!previous->run_uid.empty() && previous->run_uid == run->run_uid));
  const TableState state = same_run ? saveTableState() : TableState{};
  // With one target there was nothing to choose between: the grown run gets the starting choices.
  const bool keep_choices = same_run && model_->targetCount() > 1;
  model_->setRun(std::move(run), mode_->currentIndex() == 0 ? LayerRowMode::kNodes : LayerRowMode::kKernels);
  fillTargetCombos(keep_choices);
  applyColumnSet();
  for (int c = 0; c < model_->columnCount(); ++c) {
    const auto width = state.widths.find(columnKey(c));
    if (width != state.widths.end()) {
      table_->setColumnWidth(c, *width);
    } else {
      sizeColumn(c);
    }
  }
  // The slowest rows first: what a user opens this page for.
  const int sorted = same_run ? columnOfKey(state.sort_key) : -1;
  if (sorted >= 0) {
    table_->sortByColumn(sorted, state.sort_order);
  } else {
    table_->sortByColumn(defaultSortColumn(), Qt::DescendingOrder);
  }
  run_text_.clear();
  run_notes_.clear();
  if (const auto& r = this->run()) run_text_ = runText(*r);
  if (this->run()) {
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
  if (same_run) {
    table_->horizontalScrollBar()->setValue(state.across);
    table_->verticalScrollBar()->setValue(state.down);
  }
}

QString LayersPage::runText(const RunResult& r) const {
  const bool running = r.status == "incomplete";
  QString text = tr("Run %1 of %2%3: %4 rows on %5 targets; ")
                     .arg(r.run_id ? QString::number(*r.run_id) : tr("(not stored)"), Q(r.model.path).toHtmlEscaped(),
                          running ? tr(" (in progress)") : QString(), QString::number(model_->rowCount()),
                          QString::number(model_->targetCount()));
  // Targets not in the table, or in it without layers yet: what a profile in progress has not done.
  QStringList waiting, other;
  for (const auto& t : r.targets) {
    if (!t) continue;
    const QString name = Q(t->target.ToString()).toHtmlEscaped();
    const bool finished =
        t->status == "ok" || t->status == "failed" || t->status == "unsupported" || t->status == "cancelled";
    if (!finished || (running && t->status == "ok" && t->layers.empty())) {
      waiting << name;
    } else if (t->status != "ok") {
      other << (t->error.empty() ? tr("%1 %2").arg(name, Q(t->status))
                                 : tr("%1 %2: %3").arg(name, Q(t->status), Q(t->error).toHtmlEscaped()));
    }
  }
  // A profile in progress hands over the targets finished so far; the rest are those it was asked for.
  if (running && r.settings.targets != "all") {
    for (const QString& item : Q(r.settings.targets).split(QChar(','), Qt::SkipEmptyParts)) {
      const Result<Target> target = ParseTarget(item.trimmed().toStdString());
      if (!target.ok()) continue;
      const QString name = Q(target->ToString()).toHtmlEscaped();
      const bool in_run = std::any_of(r.targets.begin(), r.targets.end(),
                                      [&](const auto& t) { return t && t->target.ToString() == target->ToString(); });
      if (!in_run && !waiting.contains(name)) waiting << name;
    }
  }
  if (!waiting.isEmpty()) text += tr("%1 still running; ").arg(waiting.join(QStringLiteral(", ")));
  if (!other.isEmpty()) text += tr("not in the table: %1; ").arg(other.join(QStringLiteral("; ")));
  return text;
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

QString LayersPage::targetDetailRows(const LayerRow& r, int t) const {
  const auto row = [](const QString& key, const QString& value) {
    return QStringLiteral("<tr><td nowrap valign=top style=\"color:gray\">%1</td><td width=\"100%\">%2</td></tr>")
        .arg(key, value);
  };
  const LayerCell& c = r.cells[static_cast<size_t>(t)];
  const TargetResult& target = *model_->table().targets[static_cast<size_t>(t)];
  if (target.layers.empty()) {
    return row(QString(), run() && run()->status == "incomplete" ? tr("no per-layer times yet: still running")
                                                                 : tr("no per-layer times"));
  }
  if (!c.present) return row(QString(), tr("no kernel for this layer (fused into another, or not run)"));
  const LayerResult& l = target.layers[static_cast<size_t>(c.layer)];
  QString reason;
  for (const Fallback& f : target.fallbacks) {
    if (r.nodes.contains(Q(f.node))) reason += tr("<br><i>fallback: %1</i>").arg(Q(f.reason).toHtmlEscaped());
  }
  const QString observed = l.observed_ms ? Q(formats::FormatDuration(*l.observed_ms)) : QStringLiteral("—");
  QString html =
      row(tr("kernel"), c.kernel.toHtmlEscaped() +
                            (c.kernel_nodes > 1 ? tr(" (fused: shared by %1 nodes)").arg(c.kernel_nodes) : QString()));
  html +=
      row(tr("device"), c.device.toHtmlEscaped() + QStringLiteral(" / ") + c.implementation.toHtmlEscaped() + reason);
  html += row(tr("precision"), c.precision.toHtmlEscaped());
  html += row(tr("time"),
              tr("p50 %1 · p90 %2 · one run %3")
                  .arg(Q(formats::FormatDuration(l.time_p50_ms)), Q(formats::FormatDuration(l.time_p90_ms)), observed));
  html += row(tr("work"), tr("%1 FLOPs · %2")
                              .arg(Q(formats::FormatSi(static_cast<double>(l.flops))),
                                   Q(formats::FormatBytes(static_cast<double>(l.bytes_read + l.bytes_written)))));
  html += row(tr("bound"), c.bound.isEmpty() ? QStringLiteral("—") : c.bound.toHtmlEscaped());
  html += row(tr("drift"),
              l.drift ? Q(formats::FormatSqnr(l.drift->sqnr_db)) + tr(", cos %1").arg(l.drift->cosine, 0, 'f', 5)
                      : QStringLiteral("—"));
  html += row(tr("energy"), l.energy ? Q(formats::FormatEnergy(l.energy->joules)) + QStringLiteral(" (") +
                                           Q(l.energy->source).toHtmlEscaped() + QStringLiteral(")")
                                     : QStringLiteral("—"));
  return html;
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
  // One block of key/value rows per target: a narrow pane wraps a value between words, never a key
  // or a target's name inside it (a target per column broke "cpu:fp 32" at the pane's default width).
  html += QStringLiteral("<table width=\"100%\" cellspacing=0 cellpadding=2>");
  for (int t = 0; t < model_->targetCount(); ++t) {
    html += QStringLiteral("<tr><td colspan=2 nowrap style=\"padding-top:6px\"><b>%1</b></td></tr>")
                .arg(model_->targetName(t).toHtmlEscaped());
    html += targetDetailRows(r, t);
  }
  html += QStringLiteral("</table><p><small>") +
          tr("Times are the kernel's over the observed per-layer runs (p50, p90) and one observed run: the whole "
             "kernel's, also for a node of a fused kernel (the table marks it \"shared by N\"). A reorder or copy "
             "in front of a node is a kernel of its own (Rows: kernels).") +
          QStringLiteral("</small></p>");
  details_->setHtml(html);
}

}  // namespace chipfit
