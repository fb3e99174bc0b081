// RunPage: the runner's signals into the progress model, and the page's labels and buttons.
#include "views/pages/run_page.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QVBoxLayout>

#include "views/pages/profile_runner.h"

namespace chipfit {
namespace {

// The progress column as a bar, drawn by the style (no widget per cell: a run may have dozens of rows).
class ProgressDelegate final : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;
  void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override {
    QStyleOptionProgressBar bar;
    bar.rect = option.rect.adjusted(2, 3, -2, -3);
    bar.minimum = 0;
    bar.maximum = 100;
    bar.progress = index.data(RunProgressModel::ProgressRole).toInt();
    bar.text = index.data(Qt::DisplayRole).toString();
    bar.textVisible = true;
    bar.state = option.state | QStyle::State_Horizontal;
    const QWidget* widget = option.widget;
    QStyle* style = widget != nullptr ? widget->style() : nullptr;
    if (style != nullptr) style->drawControl(QStyle::CE_ProgressBar, &bar, painter, widget);
  }
};

}  // namespace

RunPage::RunPage(ProfileSession::Discover discover, QWidget* parent)
    : QWidget(parent),
      runner_(new ProfileRunner(std::move(discover), this)),
      model_(new RunProgressModel(this)),
      title_label_(
          new QLabel(tr("No run yet. Open a model, tick targets on the Targets page, then Run (Ctrl+R)."), this)),
      status_label_(new QLabel(this)),
      recommendation_label_(new QLabel(this)),
      overall_(new QProgressBar(this)),
      cancel_button_(new QPushButton(tr("Cancel (Esc)"), this)),
      table_(new QTableView(this)) {
  title_label_->setObjectName(QStringLiteral("runTitle"));
  title_label_->setWordWrap(true);
  status_label_->setObjectName(QStringLiteral("runStatus"));
  status_label_->setWordWrap(true);
  status_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  recommendation_label_->setObjectName(QStringLiteral("runRecommendation"));
  recommendation_label_->setWordWrap(true);
  recommendation_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  recommendation_label_->hide();
  overall_->setObjectName(QStringLiteral("runOverall"));
  overall_->setRange(0, 100);
  overall_->setValue(0);
  cancel_button_->setObjectName(QStringLiteral("cancelRun"));
  cancel_button_->setEnabled(false);
  connect(cancel_button_, &QPushButton::clicked, this, &RunPage::cancel);

  table_->setObjectName(QStringLiteral("runTable"));
  table_->setModel(model_);
  table_->setItemDelegateForColumn(RunProgressModel::kProgressColumn, new ProgressDelegate(table_));
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->verticalHeader()->hide();
  // Columns fit their contents (figures are short, a target's error may be long: the last column
  // stretches and its tooltip holds the whole text).
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(RunProgressModel::kProgressColumn, QHeaderView::Fixed);
  table_->horizontalHeader()->resizeSection(RunProgressModel::kProgressColumn, 140);
  table_->horizontalHeader()->setSectionResizeMode(RunProgressModel::kNotesColumn, QHeaderView::Stretch);
  table_->setWordWrap(false);

  auto* top = new QHBoxLayout;
  top->addWidget(overall_, 1);
  top->addWidget(cancel_button_);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(title_label_);
  layout->addLayout(top);
  layout->addWidget(table_, 1);
  layout->addWidget(status_label_);
  layout->addWidget(recommendation_label_);

  connect(runner_, &ProfileRunner::message, this, &RunPage::setStatus);
  connect(runner_, &ProfileRunner::runStarted, this, &RunPage::onRunStarted);
  connect(runner_, &ProfileRunner::targetStarted, this,
          [this](int index) { model_->setPhase(index, QStringLiteral("compile"), {}); });
  connect(runner_, &ProfileRunner::phase, this, [this](int index, const QString& phase, const QString& detail) {
    model_->setPhase(index, phase, detail);
    updateOverall();
  });
  connect(runner_, &ProfileRunner::layerProgress, this, [this](int index, int run, int runs, int done, int total) {
    model_->setLayerProgress(index, run, runs, done, total);
    updateOverall();
  });
  connect(runner_, &ProfileRunner::targetFinished, this, &RunPage::onTargetFinished);
  connect(runner_, &ProfileRunner::runFinished, this, &RunPage::onRunFinished);
  connect(runner_, &ProfileRunner::runFailed, this, &RunPage::onRunFailed);
}

bool RunPage::isRunning() const { return runner_->isRunning(); }

QString RunPage::statusText() const { return status_label_->text(); }

void RunPage::setStatus(const QString& text) { status_label_->setText(text); }

bool RunPage::start(const QString& model_path, const ProfileOptions& options) {
  if (runner_->isRunning()) {
    setStatus(tr("A run is in progress: cancel it first (Esc)."));
    return false;
  }
  if (options.targets.empty() && !options.all_targets) {
    setStatus(tr("No target is ticked: tick at least one on the Targets page."));
    return false;
  }
  model_path_ = model_path;
  model_->startRun(options.targets);
  overall_->setValue(0);
  recommendation_label_->hide();
  title_label_->setText(tr("Profiling %1 on %n target(s)…", nullptr, static_cast<int>(options.targets.size()))
                            .arg(QFileInfo(model_path).fileName()));
  setStatus(tr("Loading the model and preparing inputs…"));
  clock_.start();
  if (!runner_->start(model_path, options)) return false;
  cancel_button_->setEnabled(true);
  emit runningChanged(true);
  return true;
}

void RunPage::cancel() {
  if (!runner_->isRunning()) return;
  runner_->cancel();
  cancel_button_->setEnabled(false);
  setStatus(tr("Cancelling after the current kernel…"));
}

void RunPage::onRunStarted(qint64 run_id, const std::vector<Target>& targets) {
  // --all-targets style options learn their targets only now, from discovery.
  if (static_cast<size_t>(model_->rowCount()) != targets.size()) model_->startRun(targets);
  setStatus(run_id >= 0 ? tr("Run %1 started; results are stored as each target finishes.").arg(run_id)
                        : tr("Run started (not stored)."));
}

void RunPage::onTargetFinished(int index, std::shared_ptr<const TargetResult> result) {
  model_->setResult(index, std::move(result));
  updateOverall();
}

void RunPage::updateOverall() {
  const int rows = model_->rowCount();
  if (rows == 0) return;
  int sum = 0;
  for (int r = 0; r < rows; ++r) sum += model_->data(model_->index(r, 0), RunProgressModel::ProgressRole).toInt();
  overall_->setValue(sum / rows);
}

void RunPage::onRunFinished(std::shared_ptr<const RunResult> run) {
  last_run_ = run;
  cancel_button_->setEnabled(false);
  model_->markUnfinished(QStringLiteral("cancelled"));
  overall_->setValue(100);
  const QString stored =
      run->run_id ? tr("stored as run %1 (chipfit report %1 -o FILE)").arg(*run->run_id) : tr("not stored");
  int ok = 0;
  for (const auto& t : run->targets) ok += t->status == "ok" ? 1 : 0;
  title_label_->setText(tr("%1: run %2 — %3 of %n target(s) ok, %4 s", nullptr, static_cast<int>(run->targets.size()))
                            .arg(QFileInfo(model_path_).fileName(), QString::fromStdString(run->status))
                            .arg(ok)
                            .arg(clock_.elapsed() / 1000.0, 0, 'f', 1));
  setStatus(stored);
  const auto& rec = run->recommendation;
  if (rec.is_object() && rec.contains("summary") && rec["summary"].is_string()) {
    recommendation_label_->setText(
        tr("<b>Recommendation:</b> %1").arg(QString::fromStdString(rec["summary"].get<std::string>()).toHtmlEscaped()));
    recommendation_label_->show();
  }
  emit runningChanged(false);
  emit runFinished(run);
}

void RunPage::onRunFailed(const QString& message) {
  cancel_button_->setEnabled(false);
  model_->markUnfinished(QStringLiteral("not run"));
  title_label_->setText(tr("The run stopped: %1").arg(message));
  setStatus(message);
  emit runningChanged(false);
  emit runFailed(message);
}

}  // namespace chipfit
