// RunPage: the runner's signals into the progress model, the page's labels and buttons, and the
// busy-machine banner with its wait for an idle machine.
#include "views/pages/run_page.h"

#include <QFileInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "views/models/gui_wording.h"
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
      table_(new QTableView(this)),
      threads_label_(new QLabel(this)),
      banner_(new QFrame(this)),
      banner_label_(new QLabel(banner_)),
      rerun_button_(new QPushButton(tr("Re-run when idle"), banner_)),
      cancel_wait_button_(new QPushButton(tr("Cancel"), banner_)),
      accuracy_fix_button_(new QPushButton(tr("Re-profile int8 with percentile calibration, fp32 where it breaks the "
                                              "answer"),
                                           this)),
      idle_timer_(new QTimer(this)) {
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

  threads_label_->setObjectName(QStringLiteral("runThreads"));
  threads_label_->setWordWrap(true);
  threads_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  threads_label_->hide();

  // The banner replaces the word "noisy" of earlier versions: which targets the machine was too busy
  // to time, why, and the one action that helps (measure again once the machine is idle).
  banner_->setObjectName(QStringLiteral("busyBanner"));
  banner_->setFrameShape(QFrame::StyledPanel);
  banner_->setStyleSheet(
      QStringLiteral("QFrame#busyBanner { background: #fff3dc; border: 1px solid #d9a03f; "
                     "border-radius: 4px; } QFrame#busyBanner QLabel { color: #5a3a00; }"));
  banner_label_->setObjectName(QStringLiteral("busyBannerText"));
  banner_label_->setWordWrap(true);
  banner_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  rerun_button_->setObjectName(QStringLiteral("rerunWhenIdle"));
  rerun_button_->setToolTip(tr("Waits until other processes use under %1 % of the CPUs for %2 s in a row, then "
                               "profiles the same model with the same settings again")
                                .arg(kBusyCpuShare * 100, 0, 'f', 0)
                                .arg(kIdlePolls));
  cancel_wait_button_->setObjectName(QStringLiteral("cancelIdleWait"));
  cancel_wait_button_->hide();
  auto* banner_layout = new QHBoxLayout(banner_);
  banner_layout->addWidget(banner_label_, 1);
  banner_layout->addWidget(rerun_button_, 0, Qt::AlignVCenter);
  banner_layout->addWidget(cancel_wait_button_, 0, Qt::AlignVCenter);
  banner_->hide();
  connect(rerun_button_, &QPushButton::clicked, this, &RunPage::rerunWhenIdle);
  connect(cancel_wait_button_, &QPushButton::clicked, this, &RunPage::cancelIdleWait);

  // Other processes' share over the last poll: /proc/stat around a window that each poll closes and
  // opens again.
  idle_probe_ = [this]() -> std::optional<double> {
    const std::optional<double> share = idle_meter_.Stop();
    idle_meter_.Start();
    return share;
  };
  idle_timer_->setInterval(1000);
  connect(idle_timer_, &QTimer::timeout, this, &RunPage::onIdlePoll);

  auto* top = new QHBoxLayout;
  top->addWidget(overall_, 1);
  top->addWidget(cancel_button_);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(title_label_);
  layout->addLayout(top);
  layout->addWidget(banner_);
  layout->addWidget(table_, 1);
  layout->addWidget(status_label_);
  layout->addWidget(threads_label_);
  layout->addWidget(recommendation_label_);
  // The accuracy guard's advice as an action: the calibration settings that fix int8 before turning
  // the guard off.
  accuracy_fix_button_->setObjectName(QStringLiteral("accuracyFix"));
  accuracy_fix_button_->setToolTip(
      tr("Profiles the same model and targets again with percentile calibration (int8 ranges from the 99.99th "
         "percentile) and keeps in fp32 the layers that change the answer, until the outputs agree on 99 %"));
  accuracy_fix_button_->hide();
  connect(accuracy_fix_button_, &QPushButton::clicked, this, &RunPage::rerunWithAccuracyFix);
  layout->addWidget(accuracy_fix_button_, 0, Qt::AlignLeft);

  connect(runner_, &ProfileRunner::message, this, &RunPage::setStatus);
  connect(runner_, &ProfileRunner::runHeader, this, [this](std::shared_ptr<const RunResult> run) {
    header_ = std::move(run);
    shown_run_ = header_;
    finished_.clear();
  });
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
  // A run the user starts meanwhile ends the wait for an idle machine.
  stopIdleWait();
  model_path_ = model_path;
  last_options_ = options;
  has_options_ = true;
  model_->startRun(options.targets);
  header_ = nullptr;
  overall_->setValue(0);
  overall_->setFormat(QStringLiteral("%p %"));
  recommendation_label_->hide();
  accuracy_fix_button_->hide();
  threads_label_->hide();
  title_label_->setText(tr("Profiling %1 on %n target(s)…", nullptr, static_cast<int>(options.targets.size()))
                            .arg(QFileInfo(model_path).fileName()));
  setStatus(tr("Loading the model and preparing inputs…"));
  clock_.start();
  if (!runner_->start(model_path, options)) return false;
  updateBanner();
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
  updateBanner();
}

void RunPage::onTargetFinished(int index, std::shared_ptr<const TargetResult> result) {
  const bool has_figures = result && result->status == "ok";
  model_->setResult(index, result);
  updateOverall();
  updateBanner();
  if (!header_ || !has_figures) return;
  // The run so far, a new immutable snapshot: the pages already showing the previous one keep it intact.
  finished_[index] = result;
  auto partial = std::make_shared<RunResult>(*header_);
  partial->targets.clear();
  for (const auto& [i, finished] : finished_) partial->targets.push_back(finished);
  shown_run_ = partial;
  emit partialRun(partial);
}

void RunPage::showRun(const std::shared_ptr<const RunResult>& run, const QString& origin) {
  if (!run || runner_->isRunning() || run == shown_run_) return;
  shown_run_ = run;
  std::vector<Target> targets;
  for (const auto& t : run->targets) targets.push_back(t->target);
  model_->startRun(targets);
  for (size_t i = 0; i < run->targets.size(); ++i) model_->setResult(static_cast<int>(i), run->targets[i]);
  overall_->setValue(100);
  overall_->setFormat(QStringLiteral("%p %"));
  int ok = 0;
  for (const auto& t : run->targets) ok += t->status == "ok" ? 1 : 0;
  const QString id = run->run_id ? tr("Run %1").arg(*run->run_id) : tr("A run");
  title_label_->setText(tr("%1 of %2 (%3, %4): %5 of %n target(s) ok", nullptr, static_cast<int>(run->targets.size()))
                            .arg(id, QFileInfo(QString::fromStdString(run->model.path)).fileName(),
                                 QString::fromStdString(run->status), origin)
                            .arg(ok));
  setStatus(run->started_at.empty() ? QString() : tr("Profiled %1.").arg(QString::fromStdString(run->started_at)));
  threads_label_->hide();
  recommendation_label_->hide();
  accuracy_fix_button_->setVisible(run == last_run_ && isAccuracyFixOffered());
  updateBanner();
}

void RunPage::updateOverall() {
  const int rows = model_->rowCount();
  if (rows == 0) return;
  int sum = 0;
  for (int r = 0; r < rows; ++r) sum += model_->data(model_->index(r, 0), RunProgressModel::ProgressRole).toInt();
  const int percent = sum / rows;
  overall_->setValue(percent);
  // A rough time left from the pace so far (targets' phases differ in length, hence "about"); only once
  // there is a pace to go by.
  const qint64 elapsed_ms = clock_.isValid() ? clock_.elapsed() : 0;
  if (runner_->isRunning() && percent >= 5 && percent < 100 && elapsed_ms > 2000) {
    const double left_s = static_cast<double>(elapsed_ms) / 1000.0 * (100.0 - percent) / percent;
    overall_->setFormat(left_s < 90 ? tr("%p % · about %1 s left").arg(std::max(1.0, std::round(left_s)))
                                    : tr("%p % · about %1 min left").arg(std::round(left_s / 60.0)));
  } else {
    overall_->setFormat(QStringLiteral("%p %"));
  }
}

void RunPage::onRunFinished(std::shared_ptr<const RunResult> run) {
  last_run_ = run;
  shown_run_ = run;
  header_ = nullptr;
  cancel_button_->setEnabled(false);
  model_->markUnfinished(QStringLiteral("cancelled"));
  overall_->setValue(100);
  const QString stored =
      run->run_id ? tr("Stored as run %1: File › Export report… writes its report; History lists it.").arg(*run->run_id)
                  : tr("Not stored.");
  int ok = 0;
  for (const auto& t : run->targets) ok += t->status == "ok" ? 1 : 0;
  QString title = tr("%1: run %2 — %3 of %n target(s) ok, %4 s", nullptr, static_cast<int>(run->targets.size()))
                      .arg(QFileInfo(model_path_).fileName(), QString::fromStdString(run->status))
                      .arg(ok)
                      .arg(clock_.elapsed() / 1000.0, 0, 'f', 1);
  if (const qsizetype unreliable = model_->unreliableTargets().size(); unreliable > 0) {
    title += tr(", %1 unreliable").arg(unreliable);
  }
  title_label_->setText(title);
  setStatus(stored);
  // The thread choice, since a busy machine changes it ("2 cores, ~1 busy with other work: 1 thread").
  const RunSettings& settings = run->settings;
  QString threads;
  if (!settings.threads_reason.empty()) {
    threads = tr("CPU threads: %1").arg(QString::fromStdString(settings.threads_reason));
  } else if (settings.threads > 0) {
    threads = tr("CPU threads: %1").arg(settings.threads);
  }
  threads_label_->setText(threads);
  threads_label_->setVisible(!threads.isEmpty());
  updateBanner();
  const auto& rec = run->recommendation;
  if (rec.is_object() && rec.contains("summary") && rec["summary"].is_string()) {
    recommendation_label_->setText(
        tr("<b>Recommendation:</b> %1").arg(GuiWording(rec["summary"].get<std::string>()).toHtmlEscaped()));
    recommendation_label_->show();
  }
  accuracy_fix_button_->setVisible(isAccuracyFixOffered());
  emit runningChanged(false);
  emit runFinished(run);
}

void RunPage::onRunFailed(const QString& message) {
  cancel_button_->setEnabled(false);
  model_->markUnfinished(QStringLiteral("not run"));
  title_label_->setText(tr("The run stopped: %1").arg(message));
  setStatus(message);
  updateBanner();
  emit runningChanged(false);
  emit runFailed(message);
}

QString RunPage::bannerText() const { return banner_->isHidden() ? QString() : banner_label_->text(); }

bool RunPage::isBannerVisible() const { return !banner_->isHidden(); }

void RunPage::updateBanner() {
  if (waiting_for_idle_) {
    banner_label_->setText(
        last_share_
            ? tr("Waiting for the machine to be idle (others use %1 % of the CPUs)…").arg(*last_share_ * 100, 0, 'f', 0)
            : tr("Waiting for the machine to be idle…"));
    rerun_button_->hide();
    cancel_wait_button_->show();
    banner_->show();
    return;
  }
  cancel_wait_button_->hide();
  const QString text = model_->busyMachineText();
  banner_label_->setText(text);
  // Each unreliable target's own reason, in full, where the banner names it.
  QStringList reasons;
  for (int row = 0; row < model_->rowCount(); ++row) {
    const auto result = model_->result(row);
    if (result && result->status == "ok" && result->unreliable) {
      reasons << QStringLiteral("%1: %2").arg(QString::fromStdString(result->target.ToString()),
                                              QString::fromStdString(result->unreliable_reason));
    }
  }
  banner_label_->setToolTip(reasons.join(QLatin1Char('\n')));
  // Offered once the run is over: a second run beside this one would make both slower.
  rerun_button_->setVisible(has_options_ && !runner_->isRunning());
  banner_->setVisible(!text.isEmpty());
}

void RunPage::setIdleProbe(CpuShareProbe probe, int interval_ms) {
  idle_probe_ = std::move(probe);
  idle_timer_->setInterval(interval_ms);
}

bool RunPage::rerunWhenIdle() {
  if (!has_options_ || runner_->isRunning()) return false;
  waiting_for_idle_ = true;
  idle_polls_ = 0;
  last_share_.reset();
  idle_meter_.Start();
  idle_timer_->start();
  setStatus(tr("Re-runs %1 once other processes use under %2 % of the CPUs for %3 s in a row.")
                .arg(QFileInfo(model_path_).fileName())
                .arg(kBusyCpuShare * 100, 0, 'f', 0)
                .arg(kIdlePolls));
  updateBanner();
  return true;
}

void RunPage::cancelIdleWait() {
  if (!waiting_for_idle_) return;
  stopIdleWait();
  setStatus(tr("Re-run cancelled."));
  updateBanner();
}

void RunPage::stopIdleWait() {
  idle_timer_->stop();
  waiting_for_idle_ = false;
  idle_polls_ = 0;
}

void RunPage::onIdlePoll() {
  const std::optional<double> share = idle_probe_ ? idle_probe_() : std::nullopt;
  last_share_ = share;
  // Where /proc/stat cannot be read there is nothing to wait for: the run starts after the same polls.
  idle_polls_ = !share || *share < kBusyCpuShare ? idle_polls_ + 1 : 0;
  if (idle_polls_ < kIdlePolls) {
    updateBanner();
    return;
  }
  stopIdleWait();
  // The same path as the first run: the same model and options, stored as a new run.
  if (!start(model_path_, last_options_)) updateBanner();
}

bool RunPage::isAccuracyFixOffered() const {
  if (!last_run_ || !has_options_) return false;
  if (last_options_.calibration == CalibrationMethod::kPercentile && last_options_.auto_fp32_agreement >= 99) {
    return false;  // already tried: the advice has nothing more to offer
  }
  const nlohmann::json& rec = last_run_->recommendation;
  if (!rec.is_object() || !rec.contains("rejected") || !rec["rejected"].is_array()) return false;
  for (const nlohmann::json& r : rec["rejected"]) {
    const std::string target = r.value("target", std::string());
    if (r.value("limit", std::string()) == "accuracy_guard" && target.size() > 5 &&
        target.compare(target.size() - 5, 5, ":int8") == 0 && !r.value("projected", false)) {
      return true;
    }
  }
  return false;
}

bool RunPage::rerunWithAccuracyFix() {
  if (runner_->isRunning() || !isAccuracyFixOffered()) return false;
  ProfileOptions options = last_options_;
  options.calibration = CalibrationMethod::kPercentile;
  options.auto_fp32_agreement = 99;
  return start(model_path_, options);
}

}  // namespace chipfit
