// DevicesPage: layout, the switch from "discovering" to the discovered devices, the ceilings cache and the
// pool-thread "Measure again" job.
#include "views/pages/devices_page.h"

#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPromise>
#include <QPushButton>
#include <QScrollBar>
#include <QTableView>
#include <QThread>
#include <QTime>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <exception>
#include <utility>

#include "profilers/session/profile_session.h"
#include "views/models/gui_wording.h"

namespace chipfit {
namespace {

QString ToQString(const std::string& text) { return QString::fromStdString(text); }

Result<CeilingReport> MeasureWithProfileCompiler(const DeviceInfo& device, const std::stop_token& stop) {
  return MeasureCeilings(device, CeilingCompiler(), {.stop = stop});
}

// Whether the cache holds ceilings for `key` measured while the machine was idle.
bool HasIdleEntry(const std::filesystem::path& cache, const std::string& key) {
  auto cached = LoadCeilingCache(cache);
  if (!cached.ok()) return false;
  const auto entry = cached->find(key);
  return entry != cached->end() && !entry->second.MeasuredWhileBusy();
}

// On a pool thread: each device in turn, its ceilings saved to the cache as soon as they are measured (a
// cancel keeps what is done). Progress runs 2·i+1 while device i is measured and 2·i+2 once it is.
void MeasureJob(QPromise<CeilingMeasurement>& promise, const DevicesModel::Snapshot& devices,
                const DevicesPage::MeasureFunction& measure, const std::filesystem::path& cache,
                const std::stop_token& stop, const std::shared_ptr<MeasureStep>& step) {
  CeilingMeasurement out;
  const int count = devices ? static_cast<int>(devices->size()) : 0;
  promise.setProgressRange(0, 2 * count);
  for (int i = 0; i < count; ++i) {
    const DeviceInfo& device = (*devices)[static_cast<size_t>(i)];
    const QString id = ToQString(device.Id());
    if (stop.stop_requested()) {
      out.cancelled = true;
      break;
    }
    promise.setProgressValue(2 * i + 1);
    {
      const std::lock_guard lock(step->mutex);
      step->text = DevicesPage::tr("Measuring %1 (%2 of %3): peak FLOP/s of each precision and memory bandwidth…")
                       .arg(id)
                       .arg(i + 1)
                       .arg(count);
    }
    try {
      auto measured = measure(device, stop);
      if (!measured.ok() && measured.status().code() == StatusCode::kCancelled) {
        out.cancelled = true;
        break;
      }
      if (!measured.ok()) {
        out.failed << id + QStringLiteral(": ") + GuiWording(measured.status().message());
        continue;
      }
      // Low figures measured while busy never replace ones measured idle (a profile keeps them the same way).
      if (measured->MeasuredWhileBusy() && HasIdleEntry(cache, measured->device_key)) {
        out.kept_busy << DevicesPage::tr("%1 (other processes used %2 % of the CPUs)")
                             .arg(id)
                             .arg(*measured->other_cpu_share * 100, 0, 'f', 0);
        promise.setProgressValue(2 * i + 2);
        continue;
      }
      if (Status saved = SaveCeilingReport(cache, *measured); !saved.ok()) {
        out.cache_error = ToQString(saved.message());
        break;
      }
      out.measured << id;
    } catch (const std::exception& error) {
      // Device libraries may throw; the other devices still get measured.
      out.failed << id + QStringLiteral(": ") + QString::fromUtf8(error.what());
    }
    promise.setProgressValue(2 * i + 2);
  }
  promise.addResult(out);
}

QString Summary(const CeilingMeasurement& m) {
  const QString time = QTime::currentTime().toString(QStringLiteral("HH:mm"));
  QStringList parts;
  if (m.cancelled) {
    parts << (m.measured.isEmpty() ? DevicesPage::tr("Measuring cancelled: every device keeps its earlier ceilings.")
                                   : DevicesPage::tr("Measuring cancelled after %1; the others keep their earlier "
                                                     "ceilings.")
                                         .arg(m.measured.join(QStringLiteral(", "))));
  } else if (!m.measured.isEmpty()) {
    parts << DevicesPage::tr("Measured %1 again at %2.").arg(m.measured.join(QStringLiteral(", ")), time);
  }
  if (!m.kept_busy.isEmpty()) {
    parts << DevicesPage::tr(
                 "Measured while the machine was busy, so the earlier ceilings stay: %1. Measure again "
                 "when it is idle.")
                 .arg(m.kept_busy.join(QStringLiteral(", ")));
  }
  for (const QString& failure : m.failed) parts << DevicesPage::tr("Not measured: %1").arg(failure);
  if (!m.cache_error.isEmpty()) parts << DevicesPage::tr("The ceilings could not be saved: %1").arg(m.cache_error);
  return parts.join(QLatin1Char('\n'));
}

}  // namespace

DevicesPage::DevicesPage(QWidget* parent)
    : QWidget(parent),
      model_(new DevicesModel({}, this)),
      ceilings_model_(new CeilingsModel(this)),
      table_(new QTableView(this)),
      status_label_(new QLabel(tr("Discovering devices…"), this)),
      notes_label_(new QLabel(this)) {
  // Object names let tests and style sheets find the parts without accessors for every widget.
  table_->setObjectName(QStringLiteral("devicesTable"));
  status_label_->setObjectName(QStringLiteral("discoveryStatus"));
  notes_label_->setObjectName(QStringLiteral("discoveryNotes"));

  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setAlternatingRowColors(true);
  table_->setWordWrap(false);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  // Runtime strings run long ("OpenCL 3.0 PoCL HSTR: pthread-x86_64-..."); capping columns keeps
  // Precisions, the column users came for, on screen. The full text is in the tooltip.
  table_->horizontalHeader()->setMaximumSectionSize(300);
  // The ceilings have a table of their own below, one row per precision.
  table_->hideColumn(DevicesModel::kCeilingsColumn);
  // One line per row: the default section height leaves half of each row empty.
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);

  notes_label_->setTextFormat(Qt::PlainText);  // notes come from drivers and may contain '<' or '&'
  notes_label_->setWordWrap(true);
  notes_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);  // users paste these into bug reports
  notes_label_->hide();

  measure_ = &MeasureWithProfileCompiler;
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(status_label_);
  layout->addWidget(table_);
  layout->addWidget(buildCeilings(), 1);
  layout->addWidget(notes_label_);

  connect(&measuring_, &QFutureWatcher<CeilingMeasurement>::progressRangeChanged, measure_progress_,
          &QProgressBar::setRange);
  connect(&measuring_, &QFutureWatcher<CeilingMeasurement>::progressValueChanged, measure_progress_,
          &QProgressBar::setValue);
  step_timer_ = new QTimer(this);
  step_timer_->setInterval(200);
  connect(step_timer_, &QTimer::timeout, this, [this] {
    if (!step_) return;
    const std::lock_guard lock(step_->mutex);
    if (!step_->text.isEmpty()) measure_label_->setText(step_->text);
  });
  connect(&measuring_, &QFutureWatcher<CeilingMeasurement>::finished, this, &DevicesPage::onMeasured);
}

// The job holds no pointer to the page, but it writes the ceilings cache: a page that goes away stops it
// and waits, so no half-written measurement outlives the window.
DevicesPage::~DevicesPage() {
  stop_.request_stop();
  measuring_.waitForFinished();
}

QWidget* DevicesPage::buildCeilings() {
  auto* box = new QGroupBox(tr("Roofline ceilings: what each device reaches, measured on this machine"), this);
  box->setObjectName(QStringLiteral("ceilingsBox"));
  ceilings_table_ = new QTableView(box);
  ceilings_table_->setObjectName(QStringLiteral("ceilingsTable"));
  ceilings_table_->setModel(ceilings_model_);
  ceilings_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  ceilings_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  ceilings_table_->setAlternatingRowColors(true);
  ceilings_table_->setWordWrap(false);
  ceilings_table_->verticalHeader()->hide();
  ceilings_table_->horizontalHeader()->setStretchLastSection(true);
  ceilings_table_->horizontalHeader()->setMaximumSectionSize(420);
  ceilings_table_->verticalHeader()->setDefaultSectionSize(ceilings_table_->fontMetrics().height() + 8);

  auto* hint = new QLabel(tr("The Layers page's roofline places every layer against these figures; measure again "
                             "after a driver update, or when they were measured while the machine was busy."),
                          box);
  hint->setWordWrap(true);
  hint->setEnabled(false);  // greyed: a hint, not a result

  measure_label_ = new QLabel(box);
  measure_label_->setObjectName(QStringLiteral("measureStatus"));
  measure_label_->setTextFormat(Qt::PlainText);  // driver messages may hold '<' or '&'
  measure_label_->setWordWrap(true);
  measure_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  measure_progress_ = new QProgressBar(box);
  measure_progress_->setObjectName(QStringLiteral("measureProgress"));
  measure_progress_->setTextVisible(false);
  measure_progress_->setMaximumWidth(200);
  measure_progress_->hide();
  cancel_button_ = new QPushButton(tr("Cancel"), box);
  cancel_button_->setObjectName(QStringLiteral("measureCancel"));
  cancel_button_->hide();
  measure_button_ = new QPushButton(tr("Measure again"), box);
  measure_button_->setObjectName(QStringLiteral("measureAgain"));
  measure_button_->setToolTip(
      tr("Measure every device's peak FLOP/s per precision and its memory bandwidth "
         "(a few seconds per device; keep the machine idle meanwhile)"));
  measure_button_->setEnabled(false);  // until discovery has found the devices
  connect(measure_button_, &QPushButton::clicked, this, &DevicesPage::measureAgain);
  connect(cancel_button_, &QPushButton::clicked, this, &DevicesPage::cancelMeasuring);

  auto* row = new QHBoxLayout();
  row->addWidget(measure_label_, 1);
  row->addWidget(measure_progress_);
  row->addWidget(cancel_button_);
  row->addWidget(measure_button_);
  auto* layout = new QVBoxLayout(box);
  layout->addWidget(hint);
  layout->addWidget(ceilings_table_, 1);
  layout->addLayout(row);
  return box;
}

void DevicesPage::setDiscovery(DevicesModel::Snapshot devices, const QStringList& notes) {
  Q_ASSERT(QThread::currentThread() == thread());
  const auto count = devices ? devices->size() : 0;
  model_->setDevices(std::move(devices));
  discovering_ = false;
  status_label_->setText(count == 1 ? tr("1 device found") : tr("%1 devices found").arg(count));
  discovery_notes_ = notes;
  cache_note_ = loadCeilings();
  showNotes();
  measure_button_->setEnabled(count > 0 && !isMeasuring() && measure_allowed_);
  // The last column keeps stretching to the table's edge; sizing it to contents would undo that.
  for (int column = 0; column + 1 < model_->columnCount(); ++column) table_->resizeColumnToContents(column);
  // A machine has a handful of devices: the table is as tall as its rows, the ceilings take the rest.
  const int rows = std::clamp(static_cast<int>(count), 1, 8);
  table_->setFixedHeight(table_->horizontalHeader()->sizeHint().height() +
                         rows * table_->verticalHeader()->defaultSectionSize() + 2 * table_->frameWidth() +
                         table_->horizontalScrollBar()->sizeHint().height());
}

QString DevicesPage::loadCeilings() {
  const std::filesystem::path cache = ceiling_cache_.empty() ? DefaultCeilingCachePath() : ceiling_cache_;
  auto ceilings = LoadCeilingCache(cache);
  std::vector<CeilingReport> reports;
  QString note;
  if (ceilings.ok()) {
    for (auto& [key, report] : *ceilings) reports.push_back(std::move(report));
  } else {
    // A corrupt cache is the user's to look at (profiles refuse it too), not a reason to hide devices.
    note = tr("Roofline ceilings: %1").arg(QString::fromStdString(ceilings.status().message()));
  }
  ceilings_model_->setCeilings(model_->devices(), reports);
  model_->setCeilings(std::move(reports));
  for (int column = 0; column + 1 < CeilingsModel::kColumnCount; ++column) {
    ceilings_table_->resizeColumnToContents(column);
  }
  return note;
}

void DevicesPage::showNotes() {
  QStringList lines = discovery_notes_;
  if (!cache_note_.isEmpty()) lines << cache_note_;
  notes_label_->setText(lines.join(QLatin1Char('\n')));
  notes_label_->setVisible(!lines.isEmpty());
}

void DevicesPage::setMeasureAllowed(bool allowed) {
  measure_allowed_ = allowed;
  measure_button_->setEnabled(allowed && !isMeasuring() && model_->rowCount() > 0);
  measure_button_->setToolTip(allowed ? QString()
                                      : tr("Not while a profile runs: both would time the same cores and neither "
                                           "figure would hold"));
}

bool DevicesPage::measureAgain() {
  Q_ASSERT(QThread::currentThread() == thread());
  const DevicesModel::Snapshot devices = model_->devices();
  if (isMeasuring() || !devices || devices->empty() || !measure_ || !measure_allowed_) return false;
  stop_ = std::stop_source();
  const std::filesystem::path cache = ceiling_cache_.empty() ? DefaultCeilingCachePath() : ceiling_cache_;
  measure_label_->setText(tr("Starting…"));
  measure_progress_->setRange(0, 0);  // busy until the job reports its range
  measure_progress_->show();
  cancel_button_->setEnabled(true);
  cancel_button_->show();
  measure_button_->setEnabled(false);
  step_ = std::make_shared<MeasureStep>();
  step_timer_->start();
  measuring_.setFuture(QtConcurrent::run(&MeasureJob, devices, measure_, cache, stop_.get_token(), step_));
  return true;
}

void DevicesPage::cancelMeasuring() {
  if (!isMeasuring()) return;
  stop_.request_stop();
  step_timer_->stop();
  cancel_button_->setEnabled(false);
  measure_label_->setText(tr("Stopping after the current figure…"));
}

void DevicesPage::onMeasured() {
  Q_ASSERT(QThread::currentThread() == thread());
  const CeilingMeasurement result =
      measuring_.future().resultCount() > 0 ? measuring_.result() : CeilingMeasurement{.cancelled = true};
  step_timer_->stop();
  measure_progress_->hide();
  cancel_button_->hide();
  measure_button_->setEnabled(model_->rowCount() > 0 && measure_allowed_);
  cache_note_ = loadCeilings();
  showNotes();
  const QString summary = Summary(result);
  measure_label_->setText(summary);
  emit measuringFinished(summary);
}

QString DevicesPage::statusText() const { return status_label_->text(); }

QString DevicesPage::notesText() const { return notes_label_->text(); }

QString DevicesPage::measureText() const { return measure_label_->text(); }

}  // namespace chipfit
