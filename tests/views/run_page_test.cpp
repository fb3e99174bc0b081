// The Run page when the machine was busy: the banner that names the unreliable targets and why, the
// thread choice, and "Re-run when idle", which waits for other processes to leave the CPUs and then
// starts the same profile again through the page's own start().
#include "views/pages/run_page.h"

#include <gtest/gtest.h>

#include <QDir>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <deque>
#include <memory>

#include "views/pages/profile_runner.h"

namespace chipfit {
namespace {

const Target kFp32{DeviceKind::kCpu, 0, Precision::kFp32};
const Target kBf16{DeviceKind::kCpu, 0, Precision::kBf16};
const Target kInt8{DeviceKind::kCpu, 0, Precision::kInt8};

// A finished target timed in 10 rounds: `clean` of them clean (other processes at 3 %), the rest
// dropped with other processes at 70 % of the CPUs.
std::shared_ptr<TargetResult> Timed(const Target& target, double p50, int clean) {
  auto t = std::make_shared<TargetResult>();
  t->target = target;
  t->latency.p50 = p50;
  t->latency.p99 = p50 * 1.4;
  t->layers.resize(12);
  for (int i = 0; i < 10; ++i) {
    TimingRound r{.round = i + 1, .position = i % 3, .runs = 20, .median_ms = p50, .threads = 1};
    r.clean = i < clean;
    r.other_cpu_share = r.clean ? 0.03 : 0.7;
    if (!r.clean) {
      r.median_ms = p50 * 30;
      r.dropped = "other processes used 1.4 of 2 CPUs, more than the 1.0 this run's 1 thread left them";
    }
    t->rounds.push_back(r);
  }
  if (clean < 5) {
    t->unreliable = true;
    t->unreliable_reason = "only " + std::to_string(clean) +
                           " of 10 timing rounds were clean within the 25 s budget (other processes used 1.4 of 2 "
                           "CPUs); its latency comes from too few clean runs and is not ranked";
    t->notes.push_back("unreliable: " + t->unreliable_reason);
  }
  return t;
}

std::shared_ptr<const RunResult> BusyRun() {
  auto run = std::make_shared<RunResult>();
  run->status = "ok";
  run->model.path = "/nonexistent/rec.onnx";
  run->settings.threads = 1;
  run->settings.cores = 2;
  run->settings.threads_reason = "2 cores, ~1 busy with other work: 1 thread";
  run->targets = {Timed(kFp32, 15.0, 3), Timed(kBf16, 12.0, 3), Timed(kInt8, 6.0, 10)};
  return run;
}

class RunPageTest : public ::testing::Test {
 protected:
  // A run the worker refuses at once (there is no model at that path): the page then holds the model
  // and options a re-run starts again, and the finished run is played as the runner delivers one.
  void SetUp() override {
    ProfileOptions options;
    options.targets = {kFp32, kBf16, kInt8};
    options.store = false;
    QSignalSpy failed(&page_, &RunPage::runFailed);
    ASSERT_TRUE(page_.start(QStringLiteral("/nonexistent/rec.onnx"), options));
    ASSERT_TRUE(failed.wait(30000));
    runner_ = page_.findChild<ProfileRunner*>();
    ASSERT_NE(runner_, nullptr);
    const auto run = BusyRun();
    emit runner_->runStarted(-1, {kFp32, kBf16, kInt8});
    for (size_t i = 0; i < run->targets.size(); ++i) emit runner_->targetFinished(static_cast<int>(i), run->targets[i]);
    emit runner_->runFinished(run);
  }
  void TearDown() override {
    // A re-run the test started: its worker has failed (no model) before the page goes.
    if (page_.isRunning()) {
      QSignalSpy failed(&page_, &RunPage::runFailed);
      failed.wait(30000);
    }
  }

  QPushButton* button(const char* name) { return page_.findChild<QPushButton*>(QString::fromLatin1(name)); }

  RunPage page_{[] { return DiscoveryReport{}; }};
  ProfileRunner* runner_ = nullptr;
};

TEST_F(RunPageTest, BannerNamesTheUnreliableTargetsWithTheReasonAndOffersAReRun) {
  ASSERT_TRUE(page_.isBannerVisible());
  EXPECT_EQ(page_.bannerText(),
            QStringLiteral("The machine was busy: cpu:fp32 and cpu:bf16 had too few clean rounds (3 of 10; other "
                           "processes used 70 % of the CPUs). They are not ranked."));
  auto* text = page_.findChild<QLabel*>(QStringLiteral("busyBannerText"));
  ASSERT_NE(text, nullptr);
  EXPECT_TRUE(text->toolTip().contains(QStringLiteral("cpu:fp32: only 3 of 10 timing rounds were clean")))
      << text->toolTip().toStdString();
  ASSERT_NE(button("rerunWhenIdle"), nullptr);
  EXPECT_FALSE(button("rerunWhenIdle")->isHidden());
  EXPECT_TRUE(button("cancelIdleWait")->isHidden());

  // Each row says it too: "unreliable" instead of "noisy", with the reason and the rounds.
  RunProgressModel* model = page_.model();
  EXPECT_EQ(model->index(0, RunProgressModel::kStatusColumn).data().toString(), QStringLiteral("unreliable"));
  EXPECT_EQ(model->index(2, RunProgressModel::kStatusColumn).data().toString(), QStringLiteral("ok"));
  const QString notes = model->index(1, RunProgressModel::kNotesColumn).data().toString();
  EXPECT_TRUE(notes.contains(QStringLiteral("unreliable (3 clean / 7 dropped rounds): only 3 of 10")))
      << notes.toStdString();

  // The thread choice and the count of unreliable targets in the summary.
  auto* threads = page_.findChild<QLabel*>(QStringLiteral("runThreads"));
  ASSERT_NE(threads, nullptr);
  EXPECT_FALSE(threads->isHidden());
  EXPECT_EQ(threads->text(), QStringLiteral("CPU threads: 2 cores, ~1 busy with other work: 1 thread"));
  EXPECT_TRUE(page_.findChild<QLabel*>(QStringLiteral("runTitle"))->text().contains(QStringLiteral("2 unreliable")));

  // A person looks at it: the screenshot goes with the other pages'.
  page_.resize(1280, 560);
  page_.table()->resizeColumnsToContents();
  const QImage image = page_.grab().toImage();
  const QString artifacts = QStringLiteral(CHIPFIT_BINARY_DIR "/test-artifacts");
  QDir().mkpath(artifacts);
  EXPECT_TRUE(image.save(artifacts + QStringLiteral("/run_page_busy.png")));
}

// The accuracy guard rejected cpu:int8: the page offers the calibration that fixes it (not turning the
// guard off), and the re-run it starts carries those settings, the rest unchanged.
TEST_F(RunPageTest, AnInt8TargetTheGuardRejectedIsOfferedTheCalibrationFix) {
  ASSERT_NE(button("accuracyFix"), nullptr);
  EXPECT_TRUE(button("accuracyFix")->isHidden()) << "nothing was rejected for accuracy";
  auto run = std::make_shared<RunResult>(*BusyRun());
  run->recommendation = {
      {"summary", "cpu:fp32: p50 15 ms"},
      {"rejected",
       {{{"target", "cpu:int8"},
         {"limit", "accuracy_guard"},
         {"reason",
          "accuracy guard: sequence agreement (CTC) 0.0 % is under 99 % (try --calibration percentile, …)"}}}}};
  emit runner_->runStarted(-1, {kFp32, kBf16, kInt8});
  emit runner_->runFinished(run);
  ASSERT_TRUE(page_.isAccuracyFixOffered());
  EXPECT_FALSE(button("accuracyFix")->isHidden());
  // Said in the page's words, not the CLI's flags.
  EXPECT_TRUE(button("accuracyFix")->toolTip().contains(QStringLiteral("percentile calibration")));
  EXPECT_FALSE(button("accuracyFix")->toolTip().contains(QStringLiteral("--")));
  ASSERT_TRUE(page_.rerunWithAccuracyFix());
  EXPECT_TRUE(page_.isRunning());
  EXPECT_TRUE(button("accuracyFix")->isHidden());
  // The re-run fails at once (no model there); the settings it ran with are the fix, so it is not
  // offered again for a run made with them.
  QSignalSpy failed(&page_, &RunPage::runFailed);
  ASSERT_TRUE(failed.wait(30000));
  emit runner_->runStarted(-1, {kFp32, kBf16, kInt8});
  emit runner_->runFinished(run);
  EXPECT_FALSE(page_.isAccuracyFixOffered());
}

// While a profile runs, each target that finishes with figures is handed on at once as the run so far
// (the Layers page fills target by target); a cancelled target adds nothing.
TEST_F(RunPageTest, EachFinishedTargetGivesTheRunSoFar) {
  QSignalSpy partial(&page_, &RunPage::partialRun);
  auto header = std::make_shared<RunResult>();
  header->run_id = 7;
  header->model.path = "/nonexistent/rec.onnx";
  emit runner_->runHeader(header);
  emit runner_->runStarted(7, {kFp32, kBf16, kInt8});
  const auto run = BusyRun();
  emit runner_->targetFinished(0, run->targets[0]);
  ASSERT_EQ(partial.count(), 1);
  auto so_far = partial.last().first().value<std::shared_ptr<const RunResult>>();
  ASSERT_NE(so_far, nullptr);
  EXPECT_EQ(so_far->run_id, 7);
  ASSERT_EQ(so_far->targets.size(), 1u);
  EXPECT_EQ(so_far->targets[0]->target.ToString(), "cpu:fp32");
  auto cancelled = std::make_shared<TargetResult>(*run->targets[1]);
  cancelled->status = "cancelled";
  emit runner_->targetFinished(1, cancelled);
  EXPECT_EQ(partial.count(), 1);
  emit runner_->targetFinished(2, run->targets[2]);
  ASSERT_EQ(partial.count(), 2);
  so_far = partial.last().first().value<std::shared_ptr<const RunResult>>();
  EXPECT_EQ(so_far->targets.size(), 2u);
}

// A run opened elsewhere (History) is what the Run page shows too, named as such.
TEST_F(RunPageTest, ShowsARunOpenedElsewhere) {
  auto stored = std::make_shared<RunResult>(*BusyRun());
  stored->run_id = 1;
  page_.showRun(stored, QStringLiteral("opened from History"));
  EXPECT_EQ(page_.shownRun(), stored);
  const QString title = page_.findChild<QLabel*>(QStringLiteral("runTitle"))->text();
  EXPECT_TRUE(title.startsWith(QStringLiteral("Run 1 of rec.onnx"))) << title.toStdString();
  EXPECT_TRUE(title.contains(QStringLiteral("opened from History"))) << title.toStdString();
  EXPECT_EQ(page_.model()->rowCount(), 3);
  EXPECT_EQ(page_.model()->result(2), stored->targets[2]);
}

TEST_F(RunPageTest, ReRunWhenIdleWaitsForThreeIdlePollsThenStartsTheSameProfile) {
  // Other processes' share at each poll: busy, idle, busy again (the count starts over), then idle three times.
  std::deque<double> shares = {0.5, 0.05, 0.3, 0.02, 0.01, 0.03, 0.9};
  int polls = 0;
  page_.setIdleProbe(
      [&]() -> std::optional<double> {
        ++polls;
        const double share = shares.front();
        if (shares.size() > 1) shares.pop_front();
        return share;
      },
      20);
  QSignalSpy running(&page_, &RunPage::runningChanged);
  QTest::mouseClick(button("rerunWhenIdle"), Qt::LeftButton);
  EXPECT_TRUE(page_.isWaitingForIdle());
  EXPECT_FALSE(page_.isRunning());
  EXPECT_TRUE(page_.bannerText().startsWith(QStringLiteral("Waiting for the machine to be idle")));
  EXPECT_TRUE(button("rerunWhenIdle")->isHidden());
  EXPECT_FALSE(button("cancelIdleWait")->isHidden());
  ASSERT_TRUE(QTest::qWaitFor([&] { return polls >= 1; }, 5000));
  EXPECT_EQ(page_.bannerText(), QStringLiteral("Waiting for the machine to be idle (others use 50 % of the CPUs)…"));
  EXPECT_EQ(running.count(), 0);

  ASSERT_TRUE(QTest::qWaitFor([&] { return running.count() >= 1; }, 5000));
  EXPECT_EQ(polls, 6);  // the third idle poll in a row, not before
  EXPECT_TRUE(running.front().at(0).toBool());
  EXPECT_FALSE(page_.isWaitingForIdle());
  // The same profile: its targets waiting again, the busy banner gone with the old results.
  ASSERT_EQ(page_.model()->rowCount(), 3);
  EXPECT_EQ(page_.model()->status(0), QStringLiteral("waiting"));
  EXPECT_EQ(page_.model()->index(2, RunProgressModel::kTargetColumn).data().toString(), QStringLiteral("cpu:int8"));
  EXPECT_FALSE(page_.isBannerVisible());
}

TEST_F(RunPageTest, CancelEndsTheWaitAndStartsNothing) {
  int polls = 0;
  page_.setIdleProbe(
      [&]() -> std::optional<double> {
        ++polls;
        return 0.6;
      },
      10);
  QSignalSpy running(&page_, &RunPage::runningChanged);
  QTest::mouseClick(button("rerunWhenIdle"), Qt::LeftButton);
  ASSERT_TRUE(QTest::qWaitFor([&] { return polls >= 3; }, 5000));
  EXPECT_EQ(page_.bannerText(), QStringLiteral("Waiting for the machine to be idle (others use 60 % of the CPUs)…"));
  QTest::mouseClick(button("cancelIdleWait"), Qt::LeftButton);
  EXPECT_FALSE(page_.isWaitingForIdle());
  const int after_cancel = polls;
  QTest::qWait(100);
  EXPECT_EQ(polls, after_cancel);
  EXPECT_EQ(running.count(), 0);
  // Back to the busy banner, with its button.
  EXPECT_TRUE(page_.bannerText().startsWith(QStringLiteral("The machine was busy: ")));
  EXPECT_FALSE(button("rerunWhenIdle")->isHidden());
}

}  // namespace
}  // namespace chipfit
