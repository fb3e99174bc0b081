// RecommendPage: the limits form, the live re-rank through RecommendRun, and the report export.
#include "views/pages/recommend_page.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QDesktopServices>
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
#include <QSettings>
#include <QSplitter>
#include <QTableView>
#include <QUrl>
#include <QVBoxLayout>
#include <utility>

#include "views/charts/pareto_chart.h"
#include "views/models/gui_wording.h"
#include "views/models/limits_model.h"
#include "views/pages/limits_form.h"
#include "views/report/report.h"

namespace chipfit {
namespace {

QString Q(const std::string& s) { return QString::fromStdString(s); }

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
  QString text = ranked.isEmpty() ? QObject::tr("No target passes (objective: %1).\n").arg(objective)
                                  : QObject::tr("Ranked by %1: %2\n").arg(objective, ranked.join(", "));
  if (r.contains("summary") && r["summary"].is_string()) text += GuiWording(r["summary"].get<std::string>());
  text += QStringLiteral("\nPareto frontier (latency x drift x energy): %1").arg(pareto.join(QStringLiteral(", ")));
  return text;
}

}  // namespace

RecommendPage::RecommendPage(LimitsModel* limits, QWidget* parent)
    : QWidget(parent),
      limits_(limits != nullptr ? limits : new LimitsModel(this)),
      ranked_model_(new RecommendModel(this)),
      rejection_model_(new RejectionModel(this)) {
  connect(limits_, &LimitsModel::changed, this, &RecommendPage::rerank);
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
      tr("Write the report of this run with these limits and this recommendation: HTML, PDF, CSV or the profile "
         "JSON"));
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
  left_layout->addWidget(new LimitsForm(limits_, left));
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
  // The next steps an accuracy-guard rejection offers, as buttons rather than advice to type.
  guard_actions_ = new QWidget(tables);
  auto* actions = new QHBoxLayout(guard_actions_);
  actions->setContentsMargins(0, 0, 0, 0);
  auto* guard_label = new QLabel(tr("The accuracy guard rejected a target:"), guard_actions_);
  auto* data = new QPushButton(tr("Choose data folder…"), guard_actions_);
  data->setObjectName(QStringLiteral("chooseDataFolder"));
  data->setToolTip(
      tr("Real inputs (Targets page) measure int8's accuracy instead of leaving it unknown; profile "
         "again afterwards"));
  connect(data, &QPushButton::clicked, this, &RecommendPage::chooseDataFolderRequested);
  auto* untick = new QPushButton(tr("Untick accuracy guard"), guard_actions_);
  untick->setObjectName(QStringLiteral("untickAccuracyGuard"));
  untick->setToolTip(tr("Rank the targets without the guard's default accuracy bar"));
  connect(untick, &QPushButton::clicked, this, [this] {
    LimitsState state = limits_->state();
    state.accuracy_guard = false;
    limits_->setState(state);
  });
  actions->addWidget(guard_label);
  actions->addWidget(data);
  actions->addWidget(untick);
  actions->addStretch(1);
  guard_actions_->hide();
  tables_layout->addWidget(guard_actions_);

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

RecommendSettings RecommendPage::settings() const { return limits_->settings(); }

void RecommendPage::setSettings(const RecommendSettings& s) { limits_->setSettings(s); }

void RecommendPage::setRun(std::shared_ptr<const RunResult> run) {
  run_ = std::move(run);
  rerank();
}

void RecommendPage::rerank() {
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
  bool guard_rejected = false;
  if (recommendation_.is_object() && recommendation_.contains("rejected") && recommendation_["rejected"].is_array()) {
    for (const nlohmann::json& r : recommendation_["rejected"]) {
      guard_rejected = guard_rejected || (r.is_object() && r.value("limit", std::string()) == "accuracy_guard");
    }
  }
  guard_actions_->setVisible(guard_rejected);
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

QString RecommendPage::suggestedReportPath() const {
  if (!run_) return {};
  const QFileInfo model(Q(run_->model.path));
  QString stem = run_->model.path.empty() ? QStringLiteral("chipfit") : model.completeBaseName();
  if (run_->run_id) stem += QStringLiteral("_run%1").arg(*run_->run_id);
  // The folder of the last export, else the model's: reports usually sit together, or beside the model.
  QString dir = QSettings().value(QStringLiteral("export/lastDir")).toString();
  if (dir.isEmpty() || !QFileInfo(dir).isDir()) dir = model.exists() ? model.absolutePath() : QDir::homePath();
  return QDir(dir).filePath(stem + QStringLiteral(".html"));
}

void RecommendPage::exportClicked() {
  if (!run_) return;
  const QString html = tr("HTML report (*.html)");
  const QString pdf = tr("PDF report (*.pdf)");
  const QString csv = tr("CSV: one row per target, then one per layer (*.csv)");
  const QString json = tr("Profile JSON (*.json)");
  QString filter = html;
  QString path = QFileDialog::getSaveFileName(this, tr("Export report"), suggestedReportPath(),
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
  offerToOpen(path);
}

void RecommendPage::offerToOpen(const QString& path) {
  QSettings().setValue(QStringLiteral("export/lastDir"), QFileInfo(path).absolutePath());
  status_label_->setText(tr("Wrote %1").arg(QDir::toNativeSeparators(path)));
  auto* box = new QMessageBox(QMessageBox::Information, tr("Report written"),
                              tr("Wrote %1\n(limits: %2)").arg(QDir::toNativeSeparators(path), limits_->summary()),
                              QMessageBox::Close, this);
  box->setObjectName(QStringLiteral("reportWritten"));
  box->setAttribute(Qt::WA_DeleteOnClose);
  QPushButton* open = box->addButton(tr("Open the report"), QMessageBox::AcceptRole);
  open->setObjectName(QStringLiteral("openReport"));
  connect(open, &QPushButton::clicked, this, [path] { QDesktopServices::openUrl(QUrl::fromLocalFile(path)); });
  QPushButton* folder = box->addButton(tr("Open its folder"), QMessageBox::ActionRole);
  connect(folder, &QPushButton::clicked, this,
          [path] { QDesktopServices::openUrl(QUrl::fromLocalFile(QFileInfo(path).absolutePath())); });
  box->open();
}

}  // namespace chipfit
