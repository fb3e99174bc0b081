// HistoryPage: layout, filters, selection-driven buttons, and the pool-thread jobs on the run store.
#include "views/pages/history_page.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateEdit>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QShortcut>
#include <QTableView>
#include <QThread>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <exception>
#include <tuple>
#include <utility>

#include "profilers/profile_json.h"

namespace chipfit {
namespace {

const QColor kErrorColor(0xb0, 0x00, 0x20);
// Runs named one per line in the delete confirmation; past this many the rest are counted.
constexpr size_t kRunsNamed = 8;

QString ToQString(const std::string& text) { return QString::fromStdString(text); }
QString PathText(const std::filesystem::path& path) { return QString::fromStdString(path.string()); }

// The store as the jobs open it: an existing chipfit store only. RunStore::Open would create a missing
// file and make an empty one a store, which a page that only reads (or deletes) must not do.
Result<std::unique_ptr<RunStore>> OpenExisting(const std::filesystem::path& db) {
  std::error_code ec;
  if (!std::filesystem::exists(db, ec)) return NotFound("no run store at '" + db.string() + "'");
  if (std::filesystem::is_regular_file(db, ec) && std::filesystem::file_size(db, ec) == 0 && !ec) {
    return InvalidArgument("'" + db.string() + "' is an empty file, not a chipfit run store (left untouched)");
  }
  return RunStore::Open(db);
}

// The jobs below run on a pool thread and catch everything: an exception must not end the process
// from a thread nobody joins.
HistoryListing ListJob(const std::filesystem::path& db) {
  HistoryListing out;
  try {
    std::error_code ec;
    if (!std::filesystem::exists(db, ec)) {
      out.store_missing = true;
      return out;
    }
    auto store = OpenExisting(db);
    if (!store.ok()) {
      out.error = ToQString(store.status().message());
      return out;
    }
    auto runs = (*store)->ListRuns();
    if (!runs.ok()) {
      out.error = ToQString(runs.status().message());
      return out;
    }
    out.runs = std::move(*runs);
  } catch (const std::exception& e) {
    out.error = QStringLiteral("reading the run store '%1': %2").arg(PathText(db), QString::fromUtf8(e.what()));
  }
  return out;
}

HistoryLoad LoadJob(const std::filesystem::path& db, HistoryLoad::Purpose purpose, const std::vector<int64_t>& ids) {
  HistoryLoad out;
  out.purpose = purpose;
  try {
    auto store = OpenExisting(db);
    if (!store.ok()) {
      out.error = ToQString(store.status().message());
      return out;
    }
    for (const int64_t id : ids) {
      auto json = (*store)->LoadRun(id);
      if (!json.ok()) {
        out.error = ToQString(json.status().message());
        return out;
      }
      auto run = RunResultFromJson(*json);
      if (!run.ok()) {
        out.error = QStringLiteral("run %1 in '%2' cannot be read: %3")
                        .arg(id)
                        .arg(PathText(db), ToQString(run.status().message()));
        return out;
      }
      out.runs.push_back(std::make_shared<const RunResult>(std::move(*run)));
    }
  } catch (const std::exception& e) {
    out.error = QStringLiteral("loading runs from '%1': %2").arg(PathText(db), QString::fromUtf8(e.what()));
    out.runs.clear();
  }
  return out;
}

HistoryDeletion DeleteJob(const std::filesystem::path& db, const std::vector<int64_t>& ids) {
  HistoryDeletion out;
  try {
    auto store = OpenExisting(db);
    if (!store.ok()) {
      out.error = ToQString(store.status().message());
      return out;
    }
    for (const int64_t id : ids) {
      if (Status s = (*store)->DeleteRun(id); !s.ok()) {
        out.error = ToQString(s.message());
        return out;
      }
      out.deleted.push_back(id);
    }
  } catch (const std::exception& e) {
    out.error = QStringLiteral("deleting runs from '%1': %2").arg(PathText(db), QString::fromUtf8(e.what()));
  }
  return out;
}

// The store at `other` (an existing one, never created) merged into `db` (created when missing, as a
// profile would): what `chipfit merge` does.
HistoryMerge MergeJob(const std::filesystem::path& db, const QString& other) {
  HistoryMerge out;
  out.other = other;
  try {
    std::error_code ec;
    if (std::filesystem::equivalent(db, other.toStdString(), ec)) {
      out.error = HistoryPage::tr("%1 is this store: nothing to merge").arg(other);
      return out;
    }
    auto from = OpenExisting(other.toStdString());
    if (!from.ok()) {
      out.error = ToQString(from.status().message());
      return out;
    }
    auto into = RunStore::Open(db);
    if (!into.ok()) {
      out.error = ToQString(into.status().message());
      return out;
    }
    auto stats = (*into)->MergeFrom(**from);
    if (!stats.ok()) {
      out.error = ToQString(stats.status().message());
      return out;
    }
    out.stats = *stats;
  } catch (const std::exception& e) {
    out.error = QStringLiteral("merging '%1' into '%2': %3").arg(other, PathText(db), QString::fromUtf8(e.what()));
  }
  return out;
}

}  // namespace

HistoryPage::HistoryPage(std::filesystem::path db, QWidget* parent)
    : QWidget(parent),
      db_(std::move(db)),
      model_(new HistoryModel(this)),
      filter_(new HistoryFilterModel(this)),
      table_(new QTableView(this)),
      status_label_(new QLabel(this)),
      error_label_(new QLabel(this)) {
  // Object names let tests and style sheets find the parts without accessors for every widget.
  table_->setObjectName(QStringLiteral("historyTable"));
  status_label_->setObjectName(QStringLiteral("historyStatus"));
  error_label_->setObjectName(QStringLiteral("historyError"));
  for (QLabel* label : {status_label_, error_label_}) {
    label->setTextFormat(Qt::PlainText);  // paths and SQLite messages may hold '<' or '&'
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);  // users paste errors into bug reports
  }
  QPalette palette = error_label_->palette();
  palette.setColor(QPalette::WindowText, kErrorColor);
  error_label_->setPalette(palette);
  error_label_->hide();

  filter_->setSourceModel(model_);
  table_->setModel(filter_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setAlternatingRowColors(true);
  table_->setWordWrap(false);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->horizontalHeader()->setMaximumSectionSize(320);  // long paths and shapes: the tooltip has them
  table_->setSortingEnabled(true);
  table_->sortByColumn(HistoryModel::kIdColumn, Qt::DescendingOrder);  // newest first, as the CLI lists

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(buildFilters());
  layout->addWidget(status_label_);
  layout->addWidget(error_label_);
  layout->addWidget(table_, 1);
  layout->addWidget(buildButtons());

  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &HistoryPage::updateButtons);
  connect(filter_, &QAbstractItemModel::modelReset, this, &HistoryPage::updateButtons);
  connect(filter_, &QAbstractItemModel::rowsRemoved, this, &HistoryPage::updateButtons);
  connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    if (!index.isValid()) return;
    const qlonglong id = index.data(HistoryModel::RunIdRole).toLongLong();
    load(HistoryLoad::Purpose::kOpen, {static_cast<int64_t>(id)});
  });
  // Table-scoped: Enter and Delete typed into the filter's line edit must stay the line edit's.
  for (const auto key : {Qt::Key_Return, Qt::Key_Enter}) {
    auto* open = new QShortcut(QKeySequence(key), table_);
    open->setContext(Qt::WidgetShortcut);
    connect(open, &QShortcut::activated, this, &HistoryPage::openSelected);
  }
  auto* remove = new QShortcut(QKeySequence::Delete, table_);
  remove->setContext(Qt::WidgetShortcut);
  connect(remove, &QShortcut::activated, this, [this] { deleteSelected(true); });

  connect(&listing_, &QFutureWatcher<HistoryListing>::finished, this, &HistoryPage::onListed);
  connect(&loading_, &QFutureWatcher<HistoryLoad>::finished, this, &HistoryPage::onLoaded);
  connect(&deleting_, &QFutureWatcher<HistoryDeletion>::finished, this, &HistoryPage::onDeleted);
  connect(&merging_, &QFutureWatcher<HistoryMerge>::finished, this, &HistoryPage::onMerged);

  status_label_->setText(tr("Reading %1…").arg(PathText(db_)));
  updateButtons();
}

// The jobs hold no pointer to the page, but they hold the store open: a page that goes away waits
// for the store work it started (a listing or a load reads for milliseconds; a deletion must not be
// cut short), so nothing touches the store's files once the page is gone.
HistoryPage::~HistoryPage() {
  listing_.waitForFinished();
  loading_.waitForFinished();
  deleting_.waitForFinished();
  merging_.waitForFinished();
}

QWidget* HistoryPage::buildFilters() {
  auto* box = new QWidget(this);
  auto* row = new QHBoxLayout(box);
  row->setContentsMargins(0, 0, 0, 0);

  model_edit_ = new QLineEdit(box);
  model_edit_->setObjectName(QStringLiteral("historyModelFilter"));
  model_edit_->setPlaceholderText(tr("Model path contains…"));
  model_edit_->setClearButtonEnabled(true);

  status_combo_ = new QComboBox(box);
  status_combo_->setObjectName(QStringLiteral("historyStatusFilter"));
  status_combo_->addItem(tr("Any status"), QString());
  for (const char* status : {"ok", "incomplete", "cancelled", "failed"}) {
    status_combo_->addItem(QString::fromLatin1(status), QString::fromLatin1(status));
  }

  source_combo_ = new QComboBox(box);
  source_combo_->setObjectName(QStringLiteral("historySourceFilter"));
  source_combo_->addItem(tr("Any source"), QString());
  source_combo_->addItem(tr("cli"), QStringLiteral("cli"));
  source_combo_->addItem(tr("gui"), QStringLiteral("gui"));

  // A QDateEdit always holds a date; the check box says whether that end of the range applies.
  const QDate today = QDate::currentDate();
  from_check_ = new QCheckBox(tr("From"), box);
  from_check_->setObjectName(QStringLiteral("historyFromCheck"));
  from_edit_ = new QDateEdit(today.addDays(-30), box);
  from_edit_->setObjectName(QStringLiteral("historyFromDate"));
  to_check_ = new QCheckBox(tr("to"), box);
  to_check_->setObjectName(QStringLiteral("historyToCheck"));
  to_edit_ = new QDateEdit(today, box);
  to_edit_->setObjectName(QStringLiteral("historyToDate"));
  for (QDateEdit* edit : {from_edit_, to_edit_}) {
    edit->setCalendarPopup(true);
    edit->setDisplayFormat(QStringLiteral("yyyy-MM-dd"));  // the table's own date format
    edit->setEnabled(false);
    connect(edit, &QDateEdit::dateChanged, this, &HistoryPage::applyFilters);
  }
  connect(from_check_, &QCheckBox::toggled, from_edit_, &QWidget::setEnabled);
  connect(to_check_, &QCheckBox::toggled, to_edit_, &QWidget::setEnabled);
  connect(from_check_, &QCheckBox::toggled, this, &HistoryPage::applyFilters);
  connect(to_check_, &QCheckBox::toggled, this, &HistoryPage::applyFilters);
  connect(model_edit_, &QLineEdit::textChanged, this, &HistoryPage::applyFilters);
  connect(status_combo_, &QComboBox::currentIndexChanged, this, &HistoryPage::applyFilters);
  connect(source_combo_, &QComboBox::currentIndexChanged, this, &HistoryPage::applyFilters);

  row->addWidget(model_edit_, 1);
  row->addWidget(status_combo_);
  row->addWidget(source_combo_);
  row->addWidget(from_check_);
  row->addWidget(from_edit_);
  row->addWidget(to_check_);
  row->addWidget(to_edit_);
  return box;
}

QWidget* HistoryPage::buildButtons() {
  auto* box = new QWidget(this);
  auto* row = new QHBoxLayout(box);
  row->setContentsMargins(0, 0, 0, 0);
  const auto button = [&](QPushButton*& slot, const QString& text, const char* name, const QString& tip) {
    slot = new QPushButton(text, box);
    slot->setObjectName(QString::fromLatin1(name));
    slot->setToolTip(tip);
    return slot;
  };
  button(refresh_button_, tr("Refresh"), "historyRefresh", tr("Read the run store again"));
  button(open_button_, tr("Open"), "historyOpen", tr("Show the selected run's results (Enter, double-click)"));
  button(compare_button_, tr("Compare"), "historyCompare", tr("Compare two selected runs, the older as the baseline"));
  button(rerun_button_, tr("Re-run with the same settings"), "historyRerun",
         tr("Profile the selected run's model again with its targets, shapes and settings"));
  button(delete_button_, tr("Delete"), "historyDelete", tr("Delete the selected runs from the store (Delete)"));
  button(merge_button_, tr("Merge stores…"), "historyMerge",
         tr("Copy the runs of another chipfit store (another machine's, a batch shard's) that this one lacks"));
  connect(refresh_button_, &QPushButton::clicked, this, &HistoryPage::refresh);
  connect(open_button_, &QPushButton::clicked, this, &HistoryPage::openSelected);
  connect(compare_button_, &QPushButton::clicked, this, &HistoryPage::compareSelected);
  connect(rerun_button_, &QPushButton::clicked, this, &HistoryPage::rerunSelected);
  connect(delete_button_, &QPushButton::clicked, this, [this] { deleteSelected(true); });
  connect(merge_button_, &QPushButton::clicked, this, [this] { mergeStore(); });
  row->addWidget(refresh_button_);
  row->addWidget(merge_button_);
  row->addStretch(1);
  for (QPushButton* b : {open_button_, compare_button_, rerun_button_, delete_button_}) row->addWidget(b);
  return box;
}

void HistoryPage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  // Runs made since the page was last shown (by the Run page or a CLI beside the GUI) appear.
  refresh();
}

void HistoryPage::refresh() {
  Q_ASSERT(QThread::currentThread() == thread());
  showError({});
  merge_summary_.clear();
  if (reselect_.empty()) reselect_ = selectedRunIds();
  // A listing under way is replaced: setFuture drops its result, which is older than this one.
  listing_.setFuture(QtConcurrent::run(&ListJob, db_));
}

void HistoryPage::onListed() {
  Q_ASSERT(QThread::currentThread() == thread());
  HistoryListing listing = listing_.result();
  if (!listing.error.isEmpty()) {
    // The last good listing stays: a store locked or damaged now does not erase what the user saw.
    showError(tr("Cannot read the run store: %1").arg(listing.error));
    reselect_.clear();
    emit failed(listing.error);
    emit refreshed();
    return;
  }
  model_->setRuns(std::move(listing.runs));
  store_missing_ = listing.store_missing;
  applyFilters();  // also writes the count line
  // Selected before the refresh, selected after it (where the runs still exist).
  QItemSelection selection;
  for (const int64_t id : reselect_) {
    const int row = model_->rowOf(id);
    if (row < 0) continue;
    const QModelIndex index = filter_->mapFromSource(model_->index(row, 0));
    if (index.isValid()) selection.select(index, index);
  }
  reselect_.clear();
  if (!selection.isEmpty()) {
    table_->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  }
  for (int column = 0; column + 1 < HistoryModel::kColumnCount; ++column) table_->resizeColumnToContents(column);
  updateButtons();
  emit refreshed();
}

void HistoryPage::applyFilters() {
  filter_->setModelText(model_edit_->text().trimmed());
  filter_->setStatus(status_combo_->currentData().toString());
  filter_->setSource(source_combo_->currentData().toString());
  filter_->setDateRange(from_check_->isChecked() ? from_edit_->date() : QDate(),
                        to_check_->isChecked() ? to_edit_->date() : QDate());
  showCount();
  updateButtons();
}

void HistoryPage::showCount() {
  if (!merge_summary_.isEmpty()) {
    status_label_->setText(merge_summary_);
    return;
  }
  if (store_missing_) {
    status_label_->setText(
        tr("No runs yet: there is no run store at %1. Profile a model and its run appears here.").arg(PathText(db_)));
    return;
  }
  const int total = model_->rowCount(), shown = filter_->rowCount();
  QString text = total == 1 ? tr("1 run in %1").arg(PathText(db_)) : tr("%1 runs in %2").arg(total).arg(PathText(db_));
  if (shown != total) text += tr(" (%1 shown)").arg(shown);
  status_label_->setText(text);
}

std::vector<RunSummary> HistoryPage::selectedRuns() const {
  QModelIndexList rows = table_->selectionModel()->selectedRows();
  // Table order, not click order: the confirmation and the jobs list runs as the user sees them.
  std::sort(rows.begin(), rows.end(), [](const QModelIndex& a, const QModelIndex& b) { return a.row() < b.row(); });
  std::vector<RunSummary> runs;
  for (const QModelIndex& index : rows) {
    if (const RunSummary* run = model_->runAt(filter_->mapToSource(index).row())) runs.push_back(*run);
  }
  return runs;
}

std::vector<int64_t> HistoryPage::selectedRunIds() const {
  std::vector<int64_t> ids;
  for (const RunSummary& run : selectedRuns()) ids.push_back(run.id);
  return ids;
}

void HistoryPage::updateButtons() {
  const size_t selected = table_->selectionModel()->selectedRows().size();
  const bool loading = loading_.isRunning(), deleting = deleting_.isRunning();
  open_button_->setEnabled(selected == 1 && !loading);
  rerun_button_->setEnabled(selected == 1 && !loading);
  compare_button_->setEnabled(selected == 2 && !loading);
  delete_button_->setEnabled(selected >= 1 && !deleting);
  merge_button_->setEnabled(!merging_.isRunning() && !deleting);
}

void HistoryPage::openSelected() {
  const auto ids = selectedRunIds();
  if (ids.size() == 1) load(HistoryLoad::Purpose::kOpen, ids);
}

void HistoryPage::rerunSelected() {
  const auto ids = selectedRunIds();
  if (ids.size() == 1) load(HistoryLoad::Purpose::kRerun, ids);
}

void HistoryPage::compareSelected() {
  std::vector<RunSummary> runs = selectedRuns();
  if (runs.size() != 2) return;
  // Older first by start time (ISO UTC text sorts as time); merged runs keep their start but take a
  // new id, so the id alone could put a newer run first.
  std::sort(runs.begin(), runs.end(), [](const RunSummary& a, const RunSummary& b) {
    return std::tie(a.started_at, a.id) < std::tie(b.started_at, b.id);
  });
  load(HistoryLoad::Purpose::kCompare, {runs[0].id, runs[1].id});
}

void HistoryPage::load(HistoryLoad::Purpose purpose, std::vector<int64_t> run_ids) {
  Q_ASSERT(QThread::currentThread() == thread());
  if (loading_.isRunning()) return;  // one load at a time: a second click must not emit twice
  showError({});
  merge_summary_.clear();
  QStringList names;
  for (const int64_t id : run_ids) names << QString::number(id);
  status_label_->setText(tr("Loading run %1…").arg(names.join(QStringLiteral(" and "))));
  loading_.setFuture(QtConcurrent::run(&LoadJob, db_, purpose, std::move(run_ids)));
  updateButtons();
}

void HistoryPage::onLoaded() {
  Q_ASSERT(QThread::currentThread() == thread());
  const HistoryLoad load = loading_.result();
  updateButtons();
  showCount();  // in place of "Loading…"
  if (!load.error.isEmpty()) {
    showError(load.error);
    emit failed(load.error);
    return;
  }
  switch (load.purpose) {
    case HistoryLoad::Purpose::kOpen:
      if (load.runs.size() == 1) emit openRun(load.runs[0]);
      break;
    case HistoryLoad::Purpose::kRerun:
      if (load.runs.size() == 1) emit rerunRequested(load.runs[0]);
      break;
    case HistoryLoad::Purpose::kCompare:
      if (load.runs.size() == 2) emit compareRuns(load.runs[0], load.runs[1]);
      break;
  }
}

QString HistoryPage::describeRuns(const std::vector<RunSummary>& runs) const {
  QStringList lines;
  for (size_t i = 0; i < runs.size() && i < kRunsNamed; ++i) {
    const RunSummary& run = runs[i];
    const int row = model_->rowOf(run.id);
    const QString started = model_->index(row, HistoryModel::kStartedColumn).data().toString();
    const QString model = model_->index(row, HistoryModel::kModelColumn).data().toString();
    lines << tr("run %1: %2, %3, %4").arg(run.id).arg(model, started, ToQString(run.status));
  }
  if (runs.size() > kRunsNamed) lines << tr("and %1 more").arg(runs.size() - kRunsNamed);
  return lines.join(QLatin1Char('\n'));
}

void HistoryPage::deleteSelected(bool confirm) {
  Q_ASSERT(QThread::currentThread() == thread());
  const std::vector<RunSummary> runs = selectedRuns();
  if (runs.empty() || deleting_.isRunning()) return;
  if (confirm) {
    QMessageBox box(QMessageBox::Warning, tr("Delete runs"),
                    runs.size() == 1 ? tr("Delete run %1 from the run store?").arg(runs[0].id)
                                     : tr("Delete these %1 runs from the run store?").arg(runs.size()),
                    QMessageBox::Yes | QMessageBox::Cancel, this);
    box.setObjectName(QStringLiteral("historyDeleteConfirmation"));
    box.setInformativeText(
        describeRuns(runs) + QStringLiteral("\n\n") +
        tr("Their target and layer results are deleted from %1 too. This cannot be undone.").arg(PathText(db_)));
    box.setDefaultButton(QMessageBox::Cancel);  // Enter on a reflex keeps the runs
    if (box.exec() != QMessageBox::Yes) return;
  }
  std::vector<int64_t> ids;
  for (const RunSummary& run : runs) ids.push_back(run.id);
  showError({});
  merge_summary_.clear();
  status_label_->setText(ids.size() == 1 ? tr("Deleting run %1…").arg(ids[0])
                                         : tr("Deleting %1 runs…").arg(ids.size()));
  deleting_.setFuture(QtConcurrent::run(&DeleteJob, db_, std::move(ids)));
  updateButtons();
}

void HistoryPage::onDeleted() {
  Q_ASSERT(QThread::currentThread() == thread());
  const HistoryDeletion deletion = deleting_.result();
  updateButtons();
  reselect_.clear();
  table_->clearSelection();
  emit runsDeleted(deletion.deleted);
  if (!deletion.error.isEmpty()) {
    showError(tr("Delete failed: %1").arg(deletion.error));
    emit failed(deletion.error);
  }
  // Also after a failure: the runs deleted before it are gone, and the table must say so. Not
  // refresh(), which would clear the error just shown.
  listing_.setFuture(QtConcurrent::run(&ListJob, db_));
}

void HistoryPage::mergeStore(const QString& other) {
  Q_ASSERT(QThread::currentThread() == thread());
  if (merging_.isRunning()) return;
  QString path = other;
  if (path.isEmpty()) {
    path = QFileDialog::getOpenFileName(this, tr("Merge another chipfit store into this one"), QString(),
                                        tr("chipfit stores (*.db);;All files (*)"));
    if (path.isEmpty()) return;
  }
  showError({});
  merge_summary_.clear();
  status_label_->setText(tr("Merging the runs of %1…").arg(path));
  merging_.setFuture(QtConcurrent::run(&MergeJob, db_, path));
  updateButtons();
}

void HistoryPage::onMerged() {
  Q_ASSERT(QThread::currentThread() == thread());
  const HistoryMerge merge = merging_.result();
  updateButtons();
  if (!merge.error.isEmpty()) {
    showCount();
    showError(tr("Merge failed: %1").arg(merge.error));
    emit failed(merge.error);
    return;
  }
  const QString name = QFileInfo(merge.other).fileName();
  QString summary = merge.stats.merged == 0   ? tr("No new runs in %1").arg(name)
                    : merge.stats.merged == 1 ? tr("Merged 1 run from %1").arg(name)
                                              : tr("Merged %1 runs from %2").arg(merge.stats.merged).arg(name);
  if (merge.stats.skipped > 0) summary += tr(" (%1 already here)").arg(merge.stats.skipped);
  merge_summary_ = summary + QLatin1Char('.');
  emit merged(merge_summary_);
  // The summary stays in the status line (showCount keeps it) until the user's next refresh or action.
  listing_.setFuture(QtConcurrent::run(&ListJob, db_));
}

QString HistoryPage::statusText() const { return status_label_->text(); }

QString HistoryPage::errorText() const { return error_label_->text(); }

void HistoryPage::showError(const QString& text) {
  error_label_->setText(text);
  error_label_->setVisible(!text.isEmpty());
}

}  // namespace chipfit
