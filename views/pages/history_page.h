// HistoryPage: the runs of a store, filtered and sorted, with Open, Compare, Re-run, Delete and Merge.
#pragma once

#include <QFutureWatcher>
#include <QString>
#include <QWidget>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "core/store/run_store.h"
#include "profilers/run_result.h"
#include "views/models/history_model.h"

class QCheckBox;
class QComboBox;
class QDateEdit;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;

namespace chipfit {

// What a pool-thread job hands back to the page. Value types only: a job never holds the page, so a
// page closed while a job runs is no hazard.
struct HistoryListing {
  std::vector<RunSummary> runs;
  bool store_missing = false;  // no file at the path yet: nothing stored, not an error
  QString error;               // non-empty: the store could not be read
};
struct HistoryLoad {
  enum class Purpose { kOpen, kCompare, kRerun };
  Purpose purpose = Purpose::kOpen;
  std::vector<std::shared_ptr<const RunResult>> runs;  // in the order asked for
  QString error;
};
struct HistoryDeletion {
  std::vector<int64_t> deleted;
  QString error;  // the first deletion that failed; the ones before it are gone
};
struct HistoryMerge {
  QString other;       // the store merged from
  MergeStats stats{};  // runs copied in, runs this store already had
  QString error;
};

// The store is opened afresh by every job on its pool thread (a RunStore is one SQLite connection,
// not for sharing between threads), and never created: a missing file shows as an empty history.
// Nothing is read until the page is shown (every show reads again) or refresh() is called.
class HistoryPage : public QWidget {
  Q_OBJECT

 public:
  explicit HistoryPage(std::filesystem::path db, QWidget* parent = nullptr);
  ~HistoryPage() override;

  // Reads the store's runs on a pool thread; the table keeps showing the last listing (and the
  // selected runs stay selected) until the new one arrives. Errors show in the page.
  void refresh();
  // The selected runs (one or more) are deleted on a pool thread after a confirmation naming them,
  // then the history is read again.
  void deleteSelected(bool confirm = true);
  // The actions of the buttons, for the selection: each loads its runs on a pool thread first.
  void openSelected();
  void compareSelected();
  void rerunSelected();
  // Copies the runs of the store at `other` that this store lacks (a store another machine or a batch
  // shard filled), on a pool thread; the summary shows in the status line and the table is read again.
  // Without a path, a file dialog asks for one.
  void mergeStore(const QString& other = {});

  QTableView* table() const { return table_; }
  HistoryModel* model() const { return model_; }
  HistoryFilterModel* filter() const { return filter_; }
  const std::filesystem::path& db() const { return db_; }
  // The selected runs' ids, in the table's order.
  std::vector<int64_t> selectedRunIds() const;
  // The count line ("12 runs in …", "Loading run 5…") and the last error (empty: none). An error
  // stays until the user's next action (refresh, open, delete).
  QString statusText() const;
  QString errorText() const;
  bool isListing() const { return listing_.isRunning(); }

 signals:
  void openRun(std::shared_ptr<const chipfit::RunResult> run);
  // `a` started before `b`: a diff reads as "what changed since a".
  void compareRuns(std::shared_ptr<const chipfit::RunResult> a, std::shared_ptr<const chipfit::RunResult> b);
  void rerunRequested(std::shared_ptr<const chipfit::RunResult> run);
  // A listing arrived (or failed to): the table and the status line are up to date.
  void refreshed();
  // Deleting runs finished; `deleted` the ids that are gone (empty when it failed first).
  void runsDeleted(const std::vector<int64_t>& deleted);
  // Merging another store finished: `summary` is the line the page shows ("Merged 3 runs from …").
  void merged(const QString& summary);
  // Reading, loading or deleting failed; the same text shows in the page.
  void failed(const QString& message);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  QWidget* buildFilters();
  QWidget* buildButtons();
  void applyFilters();
  void updateButtons();
  void load(HistoryLoad::Purpose purpose, std::vector<int64_t> run_ids);
  std::vector<RunSummary> selectedRuns() const;
  QString describeRuns(const std::vector<RunSummary>& runs) const;
  void onListed();
  void onLoaded();
  void onDeleted();
  void onMerged();
  void showCount();
  void showError(const QString& text);

  std::filesystem::path db_;
  HistoryModel* model_;
  HistoryFilterModel* filter_;
  QTableView* table_;
  QLabel* status_label_;
  QLabel* error_label_;
  QLineEdit* model_edit_ = nullptr;
  QComboBox* status_combo_ = nullptr;
  QComboBox* source_combo_ = nullptr;
  QCheckBox* from_check_ = nullptr;
  QCheckBox* to_check_ = nullptr;
  QDateEdit* from_edit_ = nullptr;
  QDateEdit* to_edit_ = nullptr;
  QPushButton* refresh_button_ = nullptr;
  QPushButton* open_button_ = nullptr;
  QPushButton* compare_button_ = nullptr;
  QPushButton* rerun_button_ = nullptr;
  QPushButton* delete_button_ = nullptr;
  QPushButton* merge_button_ = nullptr;
  QFutureWatcher<HistoryListing> listing_;
  QFutureWatcher<HistoryLoad> loading_;
  QFutureWatcher<HistoryDeletion> deleting_;
  QFutureWatcher<HistoryMerge> merging_;
  QString merge_summary_;  // shown in place of the count until the next action
  bool store_missing_ = false;
  std::vector<int64_t> reselect_;  // run ids to select again when the next listing arrives
};

}  // namespace chipfit
