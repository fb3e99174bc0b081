// RecommendPage: the limits form, the live re-rank through RecommendRun, and the report export.
#include "views/pages/recommend_page.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <utility>

#include "views/charts/pareto_chart.h"
#include "views/report/report.h"

namespace chipfit {
namespace {

QString Q(const std::string& s) { return QString::fromStdString(s); }

QDoubleSpinBox* LimitSpin(const QString& name, double minimum, double maximum, int decimals, double value,
                          const QString& suffix, QWidget* parent) {
  auto* box = new QDoubleSpinBox(parent);
  box->setObjectName(name);
  box->setDecimals(decimals);
  box->setRange(minimum, maximum);
  box->setValue(value);
  box->setSuffix(suffix);
  box->setGroupSeparatorShown(true);
  box->setEnabled(false);  // until its limit is ticked
  return box;
}

QCheckBox* LimitCheck(const QString& name, const QString& text, QWidget* parent) {
  auto* box = new QCheckBox(text, parent);
  box->setObjectName(name);
  return box;
}

QTableView* Table(const QString& name, QAbstractItemModel* model, QWidget* parent) {
  auto* table = new QTableView(parent);
  table->setObjectName(name);
  table->setModel(model);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->setWordWrap(false);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setStretchLastSection(true);
  return table;
}

// How the CLI prints a recommendation (app/cli_main.cpp, PrintRecommendation), less the rejected lines, which the
// page shows as a table.
QString RecommendationText(const nlohmann::json& r) {
  QStringList ranked;
  if (r.contains("ranked") && r["ranked"].is_array()) {
    for (const auto& t : r["ranked"]) ranked << Q(t.get<std::string>());
  }
  QStringList pareto;
  if (r.contains("pareto") && r["pareto"].is_array()) {
    for (const auto& t : r["pareto"]) pareto << Q(t.get<std::string>());
  }
  const QString objective =
      r.contains("objective") && r["objective"].is_string() ? Q(r["objective"].get<std::string>()) : QString();
  QString text = QStringLiteral("recommendation (%1%2):\n")
                     .arg(objective, ranked.isEmpty() ? QString() : QStringLiteral(", ranked: ") + ranked.join(", "));
  if (r.contains("summary") && r["summary"].is_string()) text += Q(r["summary"].get<std::string>());
  text += QStringLiteral("\nPareto frontier (latency x drift x energy): %1").arg(pareto.join(QStringLiteral(", ")));
  return text;
}

}  // namespace

RecommendPage::RecommendPage(QWidget* parent)
    : QWidget(parent), ranked_model_(new RecommendModel(this)), rejection_model_(new RejectionModel(this)) {
  summary_label_ = new QLabel(this);
  summary_label_->setObjectName(QStringLiteral("summary"));
  summary_label_->setWordWrap(true);
  summary_label_->setTextFormat(Qt::PlainText);
  summary_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_label_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  status_label_ = new QLabel(this);
  status_label_->setObjectName(QStringLiteral("rerankStatus"));
  status_label_->setWordWrap(true);
  export_button_ = new QPushButton(tr("Export report…"), this);
  export_button_->setObjectName(QStringLiteral("exportReport"));
  export_button_->setToolTip(
      tr("Write the report of this run with this recommendation: HTML, PDF, CSV (per layer) or the profile JSON, "
         "as `chipfit report` writes it"));
  connect(export_button_, &QPushButton::clicked, this, &RecommendPage::exportClicked);

  auto* summary_box = new QGroupBox(tr("Recommendation"), this);
  auto* summary_layout = new QVBoxLayout(summary_box);
  // A long paragraph (fallback, rejections, unmeasurable limits) scrolls instead of being cut off.
  auto* summary_scroll = new QScrollArea(summary_box);
  summary_scroll->setWidget(summary_label_);
  summary_scroll->setWidgetResizable(true);
  summary_scroll->setFrameShape(QFrame::NoFrame);
  summary_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  summary_scroll->viewport()->setAutoFillBackground(false);
  summary_layout->addWidget(summary_scroll, 1);
  summary_layout->addWidget(status_label_);
  auto* buttons = new QHBoxLayout;
  buttons->addStretch(1);
  buttons->addWidget(export_button_);
  summary_layout->addLayout(buttons);

  chart_view_ = new QChartView(this);
  chart_view_->setObjectName(QStringLiteral("paretoChart"));
  chart_view_->setRenderHint(QPainter::Antialiasing);
  chart_view_->setMinimumSize(420, 320);

  // Form and paragraph on the left, the chart beside them; the ranked table below takes the full width, which its
  // ten columns need.
  auto* top = new QWidget(this);
  auto* left = new QWidget(top);
  left->setMaximumWidth(480);  // the paragraph wraps; the chart gets the rest
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  left_layout->addWidget(buildForm());
  left_layout->addWidget(summary_box, 1);
  auto* top_layout = new QHBoxLayout(top);
  top_layout->setContentsMargins(0, 0, 0, 0);
  top_layout->addWidget(left);
  top_layout->addWidget(chart_view_, 1);

  ranked_table_ = Table(QStringLiteral("rankedTable"), ranked_model_, this);
  rejection_table_ = Table(QStringLiteral("rejectedTable"), rejection_model_, this);
  auto* tables = new QWidget(this);
  auto* tables_layout = new QVBoxLayout(tables);
  tables_layout->setContentsMargins(0, 0, 0, 0);
  tables_layout->addWidget(new QLabel(tr("Targets, best first"), tables));
  tables_layout->addWidget(ranked_table_, 3);
  tables_layout->addWidget(new QLabel(tr("Rejected: the limit each target broke, and by how much"), tables));
  tables_layout->addWidget(rejection_table_, 2);

  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(top);
  splitter->addWidget(tables);
  // The form and the paragraph need about 430 px; the tables fit five targets and their rejections in the rest.
  splitter->setSizes({450, 370});
  splitter->setChildrenCollapsible(false);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(splitter);

  showRecommendation();
}

QWidget* RecommendPage::buildForm() {
  const Limits defaults;
  auto* box = new QGroupBox(tr("Limits and objective"), this);
  box->setToolTip(tr("Any change re-ranks the targets from the figures this run measured; nothing is profiled again"));

  max_latency_on_ = LimitCheck(QStringLiteral("maxLatencyOn"), tr("Max latency"), box);
  max_latency_ = LimitSpin(QStringLiteral("maxLatency"), 0.0001, 1e6, 4, 10, tr(" ms"), box);
  latency_stat_ = new QComboBox(box);
  latency_stat_->setObjectName(QStringLiteral("latencyStat"));
  for (const char* stat : {"p50", "p90", "p99"}) latency_stat_->addItem(QLatin1String(stat), QLatin1String(stat));
  latency_stat_->setCurrentIndex(latency_stat_->findData(Q(defaults.latency_stat)));
  latency_stat_->setEnabled(false);
  const QString latency_tip =
      tr("Bounds each target's end-to-end latency at this statistic (p50, p90 or p99 of the timed whole-model runs "
         "after warm-up, without per-layer instrumentation). With a latency limit the ranking uses the same "
         "statistic; without one, targets rank by p50. A projected target (hardware not measured here) meets it only "
         "by the P90 of its error band, and ranks by its median.");
  max_latency_on_->setToolTip(latency_tip);
  max_latency_->setToolTip(latency_tip);
  latency_stat_->setToolTip(latency_tip);

  min_top1_on_ = LimitCheck(QStringLiteral("minTop1On"), tr("Min top-1 / task agreement"), box);
  min_top1_ = LimitSpin(QStringLiteral("minTop1"), 0, 100, 2, 99, tr(" %"), box);
  const QString top1_tip =
      tr("Bounds top-1 agreement with the reference: the share of rows whose arg-max class matches the reference "
         "run's on the same drift inputs. On a model without class scores, the worst output's task agreement "
         "(sequence or map IoU). Not measured on a model with neither: the limit then rejects every target.");
  min_top1_on_->setToolTip(top1_tip);
  min_top1_->setToolTip(top1_tip);

  min_sqnr_on_ = LimitCheck(QStringLiteral("minSqnrOn"), tr("Min output SQNR"), box);
  min_sqnr_ = LimitSpin(QStringLiteral("minSqnr"), -200, 200, 1, 30, tr(" dB"), box);
  const QString sqnr_tip =
      tr("Bounds the worst graph output's SQNR against the reference run on the same inputs: 10·log10(Σr² / "
         "Σ(a−r)²), 200 dB when identical. The inputs are the run's data, or seeded random tensors.");
  min_sqnr_on_->setToolTip(sqnr_tip);
  min_sqnr_->setToolTip(sqnr_tip);

  max_memory_on_ = LimitCheck(QStringLiteral("maxMemoryOn"), tr("Max memory"), box);
  max_memory_ = LimitSpin(QStringLiteral("maxMemory"), 0.001, 1e8, 3, 512, tr(" MiB"), box);
  const QString memory_tip =
      tr("Bounds the planned peak memory, in MiB: the activation arenas after the planner reuses buffers, plus "
         "the device arena and the weights. Planned, not the heap's measured high-water mark.");
  max_memory_on_->setToolTip(memory_tip);
  max_memory_->setToolTip(memory_tip);

  max_energy_on_ = LimitCheck(QStringLiteral("maxEnergyOn"), tr("Max energy"), box);
  max_energy_ = LimitSpin(QStringLiteral("maxEnergy"), 0.0001, 1e6, 4, 1, tr(" mJ"), box);
  const QString energy_tip =
      tr("Bounds energy per inference, in mJ: measured by a sensor (RAPL, hwmon, NVML) where the run found one, "
         "otherwise ESTIMATED by the energy model from each layer's operations, bytes moved and time. The table "
         "and the chart say which.");
  max_energy_on_->setToolTip(energy_tip);
  max_energy_->setToolTip(energy_tip);

  objective_ = new QComboBox(box);
  objective_->setObjectName(QStringLiteral("objective"));
  objective_->addItem(tr("Latency"), QStringLiteral("latency"));
  objective_->addItem(tr("Energy per inference"), QStringLiteral("energy"));
  objective_->addItem(tr("Cost per million inferences"), QStringLiteral("cost"));
  objective_->setToolTip(
      tr("How the targets within every limit are ranked: latency (p50, or the latency limit's statistic), energy "
         "per inference, or cost per million inferences (the device's $/hour from the cost table × p50)"));

  accuracy_guard_ = new QCheckBox(tr("Accuracy guard"), box);
  accuracy_guard_->setObjectName(QStringLiteral("accuracyGuard"));
  accuracy_guard_->setChecked(defaults.accuracy_guard);
  accuracy_guard_->setToolTip(
      tr("Without an accuracy limit, reject targets under 99 % task agreement (or 20 dB output SQNR where no output "
         "has a task metric) and int8 calibrated on random data. An accuracy limit replaces it."));

  auto* grid = new QGridLayout(box);
  int row = 0;
  grid->addWidget(max_latency_on_, row, 0);
  grid->addWidget(max_latency_, row, 1);
  grid->addWidget(latency_stat_, row++, 2);
  for (auto [check, spin] : {std::pair{min_top1_on_, min_top1_}, std::pair{min_sqnr_on_, min_sqnr_},
                             std::pair{max_memory_on_, max_memory_}, std::pair{max_energy_on_, max_energy_}}) {
    grid->addWidget(check, row, 0);
    grid->addWidget(spin, row++, 1, 1, 2);
  }
  grid->addWidget(new QLabel(tr("Objective"), box), row, 0);
  grid->addWidget(objective_, row++, 1, 1, 2);
  grid->addWidget(accuracy_guard_, row++, 0, 1, 3);
  grid->setColumnStretch(1, 1);

  for (QCheckBox* check : {max_latency_on_, min_top1_on_, min_sqnr_on_, max_memory_on_, max_energy_on_}) {
    connect(check, &QCheckBox::toggled, this, [this] {
      updateEnabled();
      rerank();
    });
  }
  for (QDoubleSpinBox* spin : {max_latency_, min_top1_, min_sqnr_, max_memory_, max_energy_}) {
    connect(spin, &QDoubleSpinBox::valueChanged, this, &RecommendPage::rerank);
  }
  connect(latency_stat_, &QComboBox::currentIndexChanged, this, &RecommendPage::rerank);
  connect(objective_, &QComboBox::currentIndexChanged, this, &RecommendPage::rerank);
  connect(accuracy_guard_, &QCheckBox::toggled, this, &RecommendPage::rerank);
  return box;
}

void RecommendPage::updateEnabled() {
  max_latency_->setEnabled(max_latency_on_->isChecked());
  latency_stat_->setEnabled(max_latency_on_->isChecked());
  min_top1_->setEnabled(min_top1_on_->isChecked());
  min_sqnr_->setEnabled(min_sqnr_on_->isChecked());
  max_memory_->setEnabled(max_memory_on_->isChecked());
  max_energy_->setEnabled(max_energy_on_->isChecked());
  // The guard stands in for accuracy limits: with one ticked it does nothing, and the box says so by greying.
  accuracy_guard_->setEnabled(!min_top1_on_->isChecked() && !min_sqnr_on_->isChecked());
}

RecommendSettings RecommendPage::settings() const {
  RecommendSettings s = kept_;
  Limits& l = s.limits;
  l = Limits{};
  if (max_latency_on_->isChecked()) l.max_latency_ms = max_latency_->value();
  l.latency_stat = latency_stat_->currentData().toString().toStdString();
  // As on the Targets page: the statistic is chosen with a latency limit, and then the ranking uses it too.
  l.latency_stat_given = max_latency_on_->isChecked();
  // The form speaks percent; Limits, like --min-top1, a fraction.
  if (min_top1_on_->isChecked()) l.min_top1 = min_top1_->value() / 100.0;
  if (min_sqnr_on_->isChecked()) l.min_sqnr_db = min_sqnr_->value();
  if (max_memory_on_->isChecked()) l.max_memory_mb = max_memory_->value();
  if (max_energy_on_->isChecked()) l.max_energy_mj = max_energy_->value();
  l.accuracy_guard = accuracy_guard_->isChecked();
  s.objective = objective_->currentData().toString().toStdString();
  return s;
}

void RecommendPage::setSettings(const RecommendSettings& s) {
  applying_ = true;
  kept_ = s;
  const Limits& l = s.limits;
  auto set = [](QCheckBox* check, QDoubleSpinBox* spin, std::optional<double> value, double scale) {
    check->setChecked(value.has_value());
    if (value) spin->setValue(*value * scale);
  };
  set(max_latency_on_, max_latency_, l.max_latency_ms, 1);
  set(min_top1_on_, min_top1_, l.min_top1, 100);
  set(min_sqnr_on_, min_sqnr_, l.min_sqnr_db, 1);
  set(max_memory_on_, max_memory_, l.max_memory_mb, 1);
  set(max_energy_on_, max_energy_, l.max_energy_mj, 1);
  if (const int i = latency_stat_->findData(Q(l.latency_stat)); i >= 0) latency_stat_->setCurrentIndex(i);
  if (const int i = objective_->findData(Q(s.objective)); i >= 0) objective_->setCurrentIndex(i);
  accuracy_guard_->setChecked(l.accuracy_guard);
  updateEnabled();
  applying_ = false;
  rerank();
}

void RecommendPage::setRun(std::shared_ptr<const RunResult> run) {
  run_ = std::move(run);
  rerank();
}

void RecommendPage::rerank() {
  if (applying_) return;
  recommendation_ = nullptr;
  QString error;
  if (run_) {
    QElapsedTimer clock;
    clock.start();
    Result<nlohmann::json> r = RecommendRun(*run_, settings());
    last_rerank_ms_ = static_cast<double>(clock.nsecsElapsed()) / 1e6;
    if (r.ok()) {
      recommendation_ = std::move(*r);
    } else {
      error = Q(r.status().message());
    }
  }
  showRecommendation();
  if (!error.isEmpty()) summary_label_->setText(tr("Cannot rank the targets: %1").arg(error));
  emit recommendationChanged();
}

void RecommendPage::showRecommendation() {
  ranked_model_->setRecommendation(run_, recommendation_);
  rejection_model_->setRecommendation(recommendation_);
  ranked_table_->resizeColumnsToContents();
  rejection_table_->resizeColumnsToContents();

  // QChartView::setChart hands the previous chart back to its caller instead of deleting it.
  QChart* previous = chart_view_->chart();
  if (run_) {
    chart_view_->setChart(charts::ParetoChart(*run_, recommendation_).release());
  } else {
    auto* empty = new QChart;
    empty->setTitle(tr("No run: profile a model on the Run page, or open a stored run"));
    chart_view_->setChart(empty);
  }
  delete previous;

  export_button_->setEnabled(run_ != nullptr);
  if (!run_) {
    summary_label_->setText(tr("No run yet: profile a model on the Run page, or open a stored run."));
    status_label_->clear();
    return;
  }
  summary_label_->setText(recommendation_.is_object() ? RecommendationText(recommendation_) : QString());
  status_label_->setText(tr("Re-ranked in %1 ms from the figures %2 measured; nothing was profiled again.")
                             .arg(last_rerank_ms_, 0, 'f', 2)
                             .arg(run_->run_id ? tr("run %1").arg(*run_->run_id) : tr("this run")));
}

bool RecommendPage::exportReport(const QString& path, QString* error) {
  auto fail = [&](const QString& message) {
    if (error != nullptr) *error = message;
    return false;
  };
  if (!run_) return fail(tr("no run to export: profile a model or open a stored run first"));
  const std::filesystem::path out = path.toStdString();
  Result<ReportFormat> format = ReportFormatFromPath(out);
  if (!format.ok()) return fail(Q(format.status().message()));
  // The run as `chipfit report` reads it back from the store, with the recommendation of this page's limits in place
  // of the one it was profiled with (as `chipfit recommend` would have stored it).
  RunResult copy = *run_;
  if (recommendation_.is_object()) copy.recommendation = recommendation_;
  if (Status written = WriteReport(copy, *format, out); !written.ok()) return fail(Q(written.message()));
  return true;
}

void RecommendPage::exportClicked() {
  if (!run_) return;
  const QString html = tr("HTML report (*.html)");
  const QString pdf = tr("PDF report (*.pdf)");
  const QString csv = tr("Per-layer CSV (*.csv)");
  const QString json = tr("Profile JSON (*.json)");
  QString filter = html;
  const QString stem =
      run_->model.path.empty() ? QStringLiteral("report") : QFileInfo(Q(run_->model.path)).completeBaseName();
  QString path = QFileDialog::getSaveFileName(this, tr("Export report"), stem + QStringLiteral(".html"),
                                              QStringList{html, pdf, csv, json}.join(QStringLiteral(";;")), &filter);
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) {
    path += filter == pdf    ? QStringLiteral(".pdf")
            : filter == csv  ? QStringLiteral(".csv")
            : filter == json ? QStringLiteral(".json")
                             : QStringLiteral(".html");
  }
  QString error;
  if (!exportReport(path, &error)) {
    QMessageBox::warning(this, tr("Export report"), tr("The report was not written: %1").arg(error));
    return;
  }
  status_label_->setText(tr("Wrote %1").arg(QDir::toNativeSeparators(path)));
}

}  // namespace chipfit
