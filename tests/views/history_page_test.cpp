// HistoryPage on a temporary store of real profile runs (tests/data/sample_run.json): listing off the
// GUI thread, filters, Open / Enter / Compare / Re-run, delete with and without confirmation, a store
// that is missing or not a store, and a screenshot.
#include "views/pages/history_page.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDateEdit>
#include <QDir>
#include <QImage>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <QTimer>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/store/run_store.h"
#include "nlohmann/json.hpp"

namespace chipfit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kWaitMs = 20000;

nlohmann::json SampleRun() {
  std::ifstream in(std::string(CHIPFIT_SOURCE_DIR) + "/tests/data/sample_run.json");
  return json::parse(in);
}

// The ids of the runs the fixture stored, by what they are.
struct StoredRuns {
  int64_t cnn_ok = 0, det_gui = 0, cnn_incomplete = 0, mlp_cancelled = 0;
};

// Stores the sample run four times as a profile would: other models (by path and sha256), sources and
// statuses. The store keeps a model's latest path per sha256, so each model gets its own hash.
StoredRuns FillStore(const fs::path& db) {
  const json sample = SampleRun();
  json rest = sample;
  for (const char* key : {"schema", "chipfit_version", "run_id", "status", "command", "model", "machine", "targets"}) {
    rest.erase(key);
  }
  // What a run of today records (the sample predates it), so the Shapes and Threads columns show.
  rest["inputs"]["shapes"] = {{"input", "1x3x32x32"}};
  rest["settings"]["threads"] = 2;
  auto store = RunStore::Open(db);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) return {};
  const auto add = [&](const std::string& path, char hash, const std::string& source, size_t targets,
                       const std::string& status) {
    json model = sample["model"];
    model["path"] = path;
    if (hash != 0) model["sha256"] = std::string(64, hash);
    auto id = (*store)->BeginRun(model, sample["machine"], rest, "chipfit profile " + path, "0.4.0 (test)", source);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    for (size_t i = 0; i < targets && i < sample["targets"].size(); ++i) {
      EXPECT_TRUE((*store)->AddTarget(*id, sample["targets"][i]).ok());
    }
    if (status != "incomplete") {
      EXPECT_TRUE((*store)->FinishRun(*id, status).ok());
    }
    return *id;
  };
  StoredRuns runs;
  runs.cnn_ok = add("resources/models/cnn.onnx", 0, "cli", 5, "ok");
  runs.det_gui = add("/data/models/det.onnx", 'd', "gui", 5, "ok");
  runs.cnn_incomplete = add("resources/models/cnn.onnx", 0, "cli", 2, "incomplete");
  runs.mlp_cancelled = add("/data/models/mlp.onnx", 'e', "gui", 1, "cancelled");
  return runs;
}

class HistoryPageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("chipfit_history_page_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = dir_ / "chipfit.db";
    runs_ = FillStore(db_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // refresh() and wait for the listing it starts.
  static void Refresh(HistoryPage& page) {
    QSignalSpy refreshed(&page, &HistoryPage::refreshed);
    page.refresh();
    ASSERT_TRUE(refreshed.wait(kWaitMs)) << "the listing never arrived";
  }

  static void Select(HistoryPage& page, const std::vector<int64_t>& ids) {
    page.table()->clearSelection();
    for (const int64_t id : ids) {
      const QModelIndex source = page.model()->index(page.model()->rowOf(id), 0);
      const QModelIndex row = page.filter()->mapFromSource(source);
      ASSERT_TRUE(row.isValid()) << "run " << id << " is not in the table";
      page.table()->selectionModel()->select(row, QItemSelectionModel::Select | QItemSelectionModel::Rows);
    }
  }

  static std::set<int64_t> Shown(const HistoryPage& page) {
    std::set<int64_t> ids;
    for (int row = 0; row < page.filter()->rowCount(); ++row) {
      ids.insert(page.filter()->index(row, 0).data(HistoryModel::RunIdRole).toLongLong());
    }
    return ids;
  }

  static std::set<int64_t> Stored(const fs::path& db) {
    std::set<int64_t> ids;
    auto store = RunStore::Open(db);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return ids;
    auto runs = (*store)->ListRuns();
    EXPECT_TRUE(runs.ok()) << runs.status().ToString();
    if (runs.ok()) {
      for (const RunSummary& run : *runs) ids.insert(run.id);
    }
    return ids;
  }

  fs::path dir_, db_;
  StoredRuns runs_;
};

TEST_F(HistoryPageTest, ListsEveryRunNewestFirst) {
  HistoryPage page(db_);
  Refresh(page);
  ASSERT_EQ(page.model()->rowCount(), 4);
  EXPECT_EQ(page.filter()->index(0, 0).data(HistoryModel::RunIdRole).toLongLong(), runs_.mlp_cancelled);
  EXPECT_EQ(page.filter()->index(3, 0).data(HistoryModel::RunIdRole).toLongLong(), runs_.cnn_ok);
  EXPECT_TRUE(page.statusText().startsWith(QStringLiteral("4 runs in "))) << page.statusText().toStdString();
  EXPECT_TRUE(page.errorText().isEmpty()) << page.errorText().toStdString();
  const QModelIndex targets =
      page.model()->index(page.model()->rowOf(runs_.cnn_incomplete), HistoryModel::kTargetsColumn);
  EXPECT_EQ(targets.data().toString(), QStringLiteral("2/2"));
}

TEST_F(HistoryPageTest, FiltersByModelStatusSourceAndDate) {
  HistoryPage page(db_);
  Refresh(page);
  auto* text = page.findChild<QLineEdit*>(QStringLiteral("historyModelFilter"));
  auto* status = page.findChild<QComboBox*>(QStringLiteral("historyStatusFilter"));
  auto* source = page.findChild<QComboBox*>(QStringLiteral("historySourceFilter"));
  auto* from_check = page.findChild<QCheckBox*>(QStringLiteral("historyFromCheck"));
  auto* to_check = page.findChild<QCheckBox*>(QStringLiteral("historyToCheck"));
  auto* from = page.findChild<QDateEdit*>(QStringLiteral("historyFromDate"));
  auto* to = page.findChild<QDateEdit*>(QStringLiteral("historyToDate"));
  ASSERT_TRUE(text && status && source && from_check && to_check && from && to);

  QTest::keyClicks(text, QStringLiteral("CNN"));
  EXPECT_EQ(Shown(page), (std::set<int64_t>{runs_.cnn_ok, runs_.cnn_incomplete}));
  EXPECT_TRUE(page.statusText().contains(QStringLiteral("(2 shown)"))) << page.statusText().toStdString();
  status->setCurrentIndex(status->findData(QStringLiteral("incomplete")));
  EXPECT_EQ(Shown(page), (std::set<int64_t>{runs_.cnn_incomplete}));
  text->clear();
  status->setCurrentIndex(0);  // any status
  source->setCurrentIndex(source->findData(QStringLiteral("gui")));
  EXPECT_EQ(Shown(page), (std::set<int64_t>{runs_.det_gui, runs_.mlp_cancelled}));
  status->setCurrentIndex(status->findData(QStringLiteral("cancelled")));
  EXPECT_EQ(Shown(page), (std::set<int64_t>{runs_.mlp_cancelled}));
  status->setCurrentIndex(0);
  source->setCurrentIndex(0);
  EXPECT_EQ(Shown(page).size(), 4u);

  // Dates: the runs started just now; the day they started (local) keeps them, the day before drops them.
  const QDate day = page.model()
                        ->index(0, HistoryModel::kStartedColumn)
                        .data(HistoryModel::RawValueRole)
                        .toDateTime()
                        .toLocalTime()
                        .date();
  from->setDate(day);
  EXPECT_EQ(Shown(page).size(), 4u) << "an unchecked date must not filter";
  from_check->setChecked(true);
  EXPECT_EQ(Shown(page).size(), 4u);
  from->setDate(day.addDays(1));
  EXPECT_TRUE(Shown(page).empty());
  from_check->setChecked(false);
  to->setDate(day.addDays(-1));
  to_check->setChecked(true);
  EXPECT_TRUE(Shown(page).empty());
  to->setDate(day);
  EXPECT_EQ(Shown(page).size(), 4u);
}

TEST_F(HistoryPageTest, OpenEmitsTheStoredRunAndButtonsFollowTheSelection) {
  HistoryPage page(db_);
  Refresh(page);
  auto* open = page.findChild<QPushButton*>(QStringLiteral("historyOpen"));
  auto* compare = page.findChild<QPushButton*>(QStringLiteral("historyCompare"));
  auto* rerun = page.findChild<QPushButton*>(QStringLiteral("historyRerun"));
  auto* remove = page.findChild<QPushButton*>(QStringLiteral("historyDelete"));
  ASSERT_TRUE(open && compare && rerun && remove);
  EXPECT_FALSE(open->isEnabled());
  EXPECT_FALSE(remove->isEnabled());

  std::shared_ptr<const RunResult> opened;
  QObject::connect(&page, &HistoryPage::openRun, [&](std::shared_ptr<const RunResult> run) { opened = run; });
  Select(page, {runs_.det_gui});
  EXPECT_TRUE(open->isEnabled());
  EXPECT_TRUE(rerun->isEnabled());
  EXPECT_FALSE(compare->isEnabled());
  EXPECT_TRUE(remove->isEnabled());
  QTest::mouseClick(open, Qt::LeftButton);
  ASSERT_TRUE(QTest::qWaitFor([&] { return opened != nullptr; }, kWaitMs)) << page.errorText().toStdString();
  ASSERT_TRUE(opened->run_id.has_value());
  EXPECT_EQ(*opened->run_id, runs_.det_gui);
  EXPECT_EQ(opened->targets.size(), 5u);
  EXPECT_EQ(opened->status, "ok");

  std::shared_ptr<const RunResult> rerun_of;
  QObject::connect(&page, &HistoryPage::rerunRequested, [&](std::shared_ptr<const RunResult> run) { rerun_of = run; });
  Select(page, {runs_.cnn_incomplete});
  QTest::mouseClick(rerun, Qt::LeftButton);
  ASSERT_TRUE(QTest::qWaitFor([&] { return rerun_of != nullptr; }, kWaitMs)) << page.errorText().toStdString();
  EXPECT_EQ(*rerun_of->run_id, runs_.cnn_incomplete);
  EXPECT_EQ(rerun_of->status, "incomplete");
  EXPECT_EQ(rerun_of->targets.size(), 2u);

  Select(page, {runs_.cnn_ok, runs_.det_gui});
  EXPECT_FALSE(open->isEnabled());
  EXPECT_TRUE(compare->isEnabled());
}

TEST_F(HistoryPageTest, EnterAndDoubleClickOpenTheRunUnderTheCursor) {
  HistoryPage page(db_);
  page.resize(1100, 500);
  page.show();
  page.activateWindow();
  ASSERT_TRUE(QTest::qWaitForWindowActive(&page));
  Refresh(page);
  std::vector<int64_t> opened;
  QObject::connect(&page, &HistoryPage::openRun,
                   [&](std::shared_ptr<const RunResult> run) { opened.push_back(run->run_id.value_or(-1)); });

  Select(page, {runs_.cnn_ok});
  page.table()->setFocus();
  QTest::keyClick(page.table(), Qt::Key_Return);
  ASSERT_TRUE(QTest::qWaitFor([&] { return opened.size() == 1; }, kWaitMs)) << page.errorText().toStdString();
  EXPECT_EQ(opened[0], runs_.cnn_ok);

  const QModelIndex row =
      page.filter()->mapFromSource(page.model()->index(page.model()->rowOf(runs_.mlp_cancelled), 1));
  const QPoint centre = page.table()->visualRect(row).center();
  // As a mouse sends it: the first click's press and release, then the double-click.
  QTest::mouseClick(page.table()->viewport(), Qt::LeftButton, {}, centre);
  QTest::mouseDClick(page.table()->viewport(), Qt::LeftButton, {}, centre);
  ASSERT_TRUE(QTest::qWaitFor([&] { return opened.size() == 2; }, kWaitMs)) << page.errorText().toStdString();
  EXPECT_EQ(opened[1], runs_.mlp_cancelled);
}

TEST_F(HistoryPageTest, CompareHandsTheOlderRunFirst) {
  HistoryPage page(db_);
  Refresh(page);
  std::shared_ptr<const RunResult> a, b;
  QObject::connect(&page, &HistoryPage::compareRuns,
                   [&](std::shared_ptr<const RunResult> first, std::shared_ptr<const RunResult> second) {
                     a = first;
                     b = second;
                   });
  // The table lists newest first, so the newer run is the first selected row.
  Select(page, {runs_.cnn_incomplete, runs_.cnn_ok});
  page.compareSelected();
  ASSERT_TRUE(QTest::qWaitFor([&] { return a && b; }, kWaitMs)) << page.errorText().toStdString();
  EXPECT_EQ(*a->run_id, runs_.cnn_ok);
  EXPECT_EQ(*b->run_id, runs_.cnn_incomplete);
}

TEST_F(HistoryPageTest, DeleteWithoutConfirmationRemovesTheRunFromTheStore) {
  HistoryPage page(db_);
  Refresh(page);
  QSignalSpy deleted(&page, &HistoryPage::runsDeleted);
  QSignalSpy refreshed(&page, &HistoryPage::refreshed);
  Select(page, {runs_.det_gui});
  page.deleteSelected(/*confirm=*/false);
  ASSERT_TRUE(deleted.wait(kWaitMs));
  ASSERT_TRUE(QTest::qWaitFor([&] { return refreshed.count() > 0; }, kWaitMs))
      << "the history was not read again after the delete";
  EXPECT_TRUE(page.errorText().isEmpty()) << page.errorText().toStdString();
  EXPECT_EQ(page.model()->rowOf(runs_.det_gui), -1);
  EXPECT_EQ(page.model()->rowCount(), 3);
  EXPECT_EQ(Stored(db_), (std::set<int64_t>{runs_.cnn_ok, runs_.cnn_incomplete, runs_.mlp_cancelled}));
  // The other runs keep every target.
  auto store = RunStore::Open(db_);
  ASSERT_TRUE(store.ok());
  auto kept = (*store)->LoadRun(runs_.cnn_ok);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ((*kept)["targets"].size(), 5u);
  EXPECT_TRUE(page.table()->selectionModel()->selectedRows().isEmpty());
}

TEST_F(HistoryPageTest, TheConfirmationNamesTheRunsAndCancelKeepsThem) {
  HistoryPage page(db_);
  page.resize(1100, 500);
  page.show();
  page.activateWindow();
  ASSERT_TRUE(QTest::qWaitForWindowActive(&page));
  Refresh(page);
  Select(page, {runs_.cnn_ok, runs_.mlp_cancelled});

  // The box is modal: answer it from the event loop its exec() runs.
  QString question, details;
  const auto answer = [&](QMessageBox::StandardButton button) {
    QTimer::singleShot(0, &page, [&, button] {
      auto* box = page.findChild<QMessageBox*>(QStringLiteral("historyDeleteConfirmation"));
      ASSERT_NE(box, nullptr);
      question = box->text();
      details = box->informativeText();
      box->button(button)->click();
    });
  };
  answer(QMessageBox::Cancel);
  page.deleteSelected(/*confirm=*/true);
  EXPECT_EQ(question, QStringLiteral("Delete these 2 runs from the run store?"));
  EXPECT_TRUE(details.contains(QStringLiteral("run %1: mlp.onnx").arg(runs_.mlp_cancelled))) << details.toStdString();
  EXPECT_TRUE(details.contains(QStringLiteral("run %1: cnn.onnx").arg(runs_.cnn_ok))) << details.toStdString();
  EXPECT_TRUE(details.contains(QString::fromStdString(db_.string()))) << details.toStdString();
  QTest::qWait(200);
  EXPECT_EQ(Stored(db_).size(), 4u) << "Cancel deleted runs";

  // The Delete key asks too; Yes deletes. The closed box took the activation with it: a shortcut
  // only reaches an active window.
  QSignalSpy deleted(&page, &HistoryPage::runsDeleted);
  page.activateWindow();
  ASSERT_TRUE(QTest::qWaitForWindowActive(&page));
  Select(page, {runs_.mlp_cancelled});
  page.table()->setFocus();
  answer(QMessageBox::Yes);
  QTest::keyClick(page.table(), Qt::Key_Delete);
  EXPECT_EQ(question, QStringLiteral("Delete run %1 from the run store?").arg(runs_.mlp_cancelled));
  ASSERT_TRUE(deleted.wait(kWaitMs));
  EXPECT_EQ(Stored(db_), (std::set<int64_t>{runs_.cnn_ok, runs_.det_gui, runs_.cnn_incomplete}));
}

TEST_F(HistoryPageTest, AMissingStoreIsAnEmptyHistoryAndIsNotCreated) {
  const fs::path missing = dir_ / "none" / "chipfit.db";
  HistoryPage page(missing);
  Refresh(page);
  EXPECT_EQ(page.model()->rowCount(), 0);
  EXPECT_TRUE(page.statusText().contains(QStringLiteral("No runs yet"))) << page.statusText().toStdString();
  EXPECT_TRUE(page.errorText().isEmpty()) << page.errorText().toStdString();
  EXPECT_FALSE(fs::exists(missing));
}

TEST_F(HistoryPageTest, AFileThatIsNotAStoreIsAnErrorInThePageAndLeftUntouched) {
  const fs::path garbage = dir_ / "garbage.db";
  {
    std::ofstream out(garbage, std::ios::binary);
    out << std::string(4096, 'x');
  }
  HistoryPage page(garbage);
  QSignalSpy failed(&page, &HistoryPage::failed);
  Refresh(page);
  EXPECT_EQ(failed.count(), 1);
  EXPECT_EQ(page.model()->rowCount(), 0);
  EXPECT_TRUE(page.errorText().contains(QString::fromStdString(garbage.string()))) << page.errorText().toStdString();
  EXPECT_EQ(fs::file_size(garbage), 4096u);

  // A store that turns bad after a good listing: the runs seen stay, the error says what happened.
  HistoryPage good(db_);
  Refresh(good);
  ASSERT_EQ(good.model()->rowCount(), 4);
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db_.string() + suffix);
  {
    std::ofstream out(db_, std::ios::binary);
    out << std::string(4096, 'x');
  }
  Refresh(good);
  EXPECT_EQ(good.model()->rowCount(), 4);
  EXPECT_TRUE(good.errorText().startsWith(QStringLiteral("Cannot read the run store:")))
      << good.errorText().toStdString();
}

// A What-if run made by the GUI records the nodes it kept in fp32; the History page marks it and names
// them, and every run's shapes read "input 1×3×32×32", not the store's JSON or "input=1x3x32x32".
TEST_F(HistoryPageTest, MarksAWhatIfRunAndShowsReadableShapes) {
  json run = SampleRun();
  run["settings"]["keep_fp32"] = {"Conv_0", "Gemm_5"};
  run["inputs"]["shapes"] = {{"input", "1x3x32x32"}};
  int64_t what_if = 0;
  {
    auto store = RunStore::Open(db_);
    ASSERT_TRUE(store.ok());
    json rest = run;
    for (const char* key : {"schema", "chipfit_version", "run_id", "status", "command", "model", "machine", "targets"})
      rest.erase(key);
    auto id = (*store)->BeginRun(run["model"], run["machine"], rest, "chipfit-gui what-if", "0.4.0 (test)", "gui");
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    what_if = *id;
    ASSERT_TRUE((*store)->AddTarget(what_if, run["targets"][0]).ok());
    ASSERT_TRUE((*store)->FinishRun(what_if, "ok").ok());
  }
  HistoryPage page(db_);
  Refresh(page);
  const int row = page.filter()->mapFromSource(page.model()->index(page.model()->rowOf(what_if), 0)).row();
  ASSERT_GE(row, 0);
  const auto cell = [&](int r, int column, int role = Qt::DisplayRole) {
    return page.filter()->index(r, column).data(role);
  };
  EXPECT_EQ(cell(row, HistoryModel::kWhatIfColumn).toString(), QStringLiteral("Conv_0, Gemm_5 in fp32"));
  EXPECT_TRUE(cell(row, HistoryModel::kWhatIfColumn, Qt::ToolTipRole).toString().contains(QStringLiteral("Gemm_5")));
  EXPECT_EQ(cell(row, HistoryModel::kShapesColumn).toString(), QStringLiteral("input 1×3×32×32"));
  // The runs the fixture stored kept nothing in fp32: no mark.
  const int plain = page.filter()->mapFromSource(page.model()->index(page.model()->rowOf(runs_.cnn_ok), 0)).row();
  EXPECT_EQ(cell(plain, HistoryModel::kWhatIfColumn).toString(), QString());
  EXPECT_EQ(cell(plain, HistoryModel::kShapesColumn).toString(), QStringLiteral("input 1×3×32×32"));
}

// Merge stores… copies another store's runs that this one lacks, says how many, and a second merge of
// the same store adds nothing; a file that is not a store is an error in the page, this store untouched.
TEST_F(HistoryPageTest, MergeStoresCopiesTheOtherStoresRunsAndSaysHowMany) {
  const fs::path other = dir_ / "shard.db";
  FillStore(other);
  HistoryPage page(db_);
  Refresh(page);
  ASSERT_EQ(page.model()->rowCount(), 4);

  QSignalSpy merged(&page, &HistoryPage::merged);
  QSignalSpy refreshed(&page, &HistoryPage::refreshed);
  page.mergeStore(QString::fromStdString(other.string()));
  ASSERT_TRUE(merged.wait(kWaitMs));
  EXPECT_EQ(merged.first().first().toString(), QStringLiteral("Merged 4 runs from shard.db."));
  ASSERT_TRUE(refreshed.count() > 0 || refreshed.wait(kWaitMs));
  EXPECT_EQ(page.model()->rowCount(), 8);
  EXPECT_EQ(page.statusText(), QStringLiteral("Merged 4 runs from shard.db."));
  EXPECT_EQ(Stored(db_).size(), 8u);

  page.mergeStore(QString::fromStdString(other.string()));
  ASSERT_TRUE(merged.wait(kWaitMs));
  EXPECT_EQ(merged.last().first().toString(), QStringLiteral("No new runs in shard.db (4 already here)."));

  const fs::path junk = dir_ / "notes.db";
  std::ofstream(junk) << "not a store";
  QSignalSpy failed(&page, &HistoryPage::failed);
  page.mergeStore(QString::fromStdString(junk.string()));
  ASSERT_TRUE(failed.wait(kWaitMs));
  EXPECT_TRUE(page.errorText().startsWith(QStringLiteral("Merge failed: "))) << page.errorText().toStdString();
  EXPECT_EQ(Stored(db_).size(), 8u);
}

TEST_F(HistoryPageTest, Screenshot) {
  HistoryPage page(db_);
  page.resize(1200, 420);
  Refresh(page);
  Select(page, {runs_.det_gui});
  const QImage image = page.grab().toImage();
  ASSERT_FALSE(image.isNull());
  // Not blank: a page with a table, text and buttons has many colours, a blank grab one.
  std::set<QRgb> colours;
  for (int y = 0; y < image.height(); y += 3) {
    for (int x = 0; x < image.width(); x += 3) colours.insert(image.pixel(x, y));
  }
  EXPECT_GT(colours.size(), 20u);
  const QString artifacts = QStringLiteral(CHIPFIT_BINARY_DIR "/test-artifacts");
  ASSERT_TRUE(QDir().mkpath(artifacts));
  EXPECT_TRUE(image.save(artifacts + QStringLiteral("/history_page.png")));
}

}  // namespace
}  // namespace chipfit
