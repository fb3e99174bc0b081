// The rules of the interleaved timing rounds on synthetic inputs: order, slot verdicts, the thread
// choice, within-round ratios and the time attribution (the driver itself: latency_profiler_test).
#include "profilers/latency/rounds.h"

#include <gtest/gtest.h>

#include <set>

namespace chipfit {
namespace {

TEST(RoundsTest, OrderRotatesSoEveryTargetTakesEveryPlace) {
  std::vector<std::set<size_t>> places(3);
  for (int round = 1; round <= 3; ++round) {
    const std::vector<size_t> order = RoundOrder(3, round);
    ASSERT_EQ(order.size(), 3u);
    EXPECT_EQ(std::set<size_t>(order.begin(), order.end()).size(), 3u);  // each target once per round
    for (size_t position = 0; position < order.size(); ++position) places[order[position]].insert(position);
  }
  for (const auto& p : places) EXPECT_EQ(p.size(), 3u);
  EXPECT_EQ(RoundOrder(3, 4), RoundOrder(3, 1));
  EXPECT_TRUE(RoundOrder(0, 5).empty());
}

TEST(RoundsTest, ASlotIsDroppedWhenOthersTakeTheCoresTheThreadsNeed) {
  // 2 CPUs, 2 threads: nothing is left for others; 0.6 of a CPU used by them is past the half-CPU margin.
  EXPECT_NE(SlotDropReason(0.30, 0.0, 2, 2, std::nullopt), "");
  EXPECT_EQ(SlotDropReason(0.20, 0.0, 2, 2, std::nullopt), "");
  // 1 thread leaves one CPU: a one-CPU load is clean, a two-CPU one is not.
  EXPECT_EQ(SlotDropReason(0.60, 0.0, 2, 1, std::nullopt), "");
  EXPECT_NE(SlotDropReason(0.90, 0.0, 2, 1, std::nullopt), "");
  // The threads were chosen for a load already there before the run: that load is not held against a slot.
  EXPECT_EQ(SlotDropReason(0.90, 0.0, 2, 1, 2.0), "");
  // The hypervisor's steal time drops a slot whatever the others did; an unreadable meter drops nothing.
  EXPECT_NE(SlotDropReason(0.0, 0.10, 2, 1, std::nullopt), "");
  EXPECT_EQ(SlotDropReason(std::nullopt, std::nullopt, 2, 2, std::nullopt), "");
  const std::string reason = SlotDropReason(0.95, 0.0, 2, 2, std::nullopt);
  EXPECT_NE(reason.find("1.9 of 2 CPUs"), std::string::npos) << reason;
}

TEST(RoundsTest, ThreadsAreTheCoresOthersLeaveFree) {
  EXPECT_EQ(ChooseThreads(2, 0.1).threads, 2);
  EXPECT_EQ(ChooseThreads(2, 0.1).reason, "2 cores, idle: 2 threads");
  EXPECT_EQ(ChooseThreads(2, 1.0).threads, 1);
  EXPECT_EQ(ChooseThreads(2, 1.0).reason, "2 cores, ~1 busy with other work: 1 thread");
  EXPECT_EQ(ChooseThreads(2, 2.0).threads, 1);  // never fewer than one
  EXPECT_EQ(ChooseThreads(8, 2.6).threads, 5);
  EXPECT_EQ(ChooseThreads(4, std::nullopt).threads, 4);
}

std::vector<TimingRound> Rounds(const std::vector<double>& medians, const std::set<int>& dropped = {}) {
  std::vector<TimingRound> rounds;
  for (size_t i = 0; i < medians.size(); ++i) {
    const int round = static_cast<int>(i) + 1;
    rounds.push_back({.round = round, .runs = 10, .median_ms = medians[i], .clean = !dropped.contains(round)});
  }
  return rounds;
}

TEST(RoundsTest, PairedRatioFollowsALoadThatMovesBothTargets) {
  // B is twice as fast as A; in rounds 3 and 4 a load slows both by 5x, which a ratio of p50s over
  // unpaired slots would not cancel.
  const auto a = Rounds({2, 2, 10, 10, 2});
  const auto b = Rounds({1, 1, 5, 5, 1});
  ASSERT_TRUE(PairedRatio(a, b));
  EXPECT_DOUBLE_EQ(*PairedRatio(a, b), 2.0);
  // Rounds dropped on either side are not pairs; no shared clean round: no ratio.
  const auto b_busy = Rounds({1, 9, 1, 1, 1}, {2});
  EXPECT_DOUBLE_EQ(*PairedRatio(Rounds({2, 2, 2, 2, 2}), b_busy), 2.0);
  EXPECT_FALSE(PairedRatio(Rounds({2}, {1}), Rounds({1})));
  TargetResult base, fast;
  base.rounds = a;
  fast.rounds = b;
  base.latency.p50 = 10;  // p50s taken in different rounds would say 10x
  fast.latency.p50 = 1;
  EXPECT_DOUBLE_EQ(SpeedUp(base, fast), 2.0);
  fast.rounds.clear();  // no rounds (an older run): the p50s
  EXPECT_DOUBLE_EQ(SpeedUp(base, fast), 10.0);
}

TEST(RoundsTest, AttributionExplainsAGapBeyondTwentyPercent) {
  // In agreement: no explanation.
  TimeAttribution ok = AttributeTime(1.0, 0.95, {1.0, 1.0}, {0.95, 0.95}, 10, 0);
  EXPECT_NEAR(ok.between_ms, 0.05, 1e-12);
  EXPECT_NEAR(ok.unexplained_ms, 0.0, 1e-12);
  EXPECT_TRUE(ok.explanation.empty());
  // Gaps in the timed runs beyond what the layers leave of end to end (the timers' cost): capped, so
  // the parts add up and nothing is a negative rest.
  const TimeAttribution capped = AttributeTime(0.93, 0.89, {1.1, 1.1}, {0.89, 0.89}, 78, 0);
  EXPECT_NEAR(capped.between_ms, 0.04, 1e-12);
  EXPECT_NEAR(capped.unexplained_ms, 0.0, 1e-12);
  // The per-layer timers' cost: observed runs far slower than the untimed ones.
  const TimeAttribution timers = AttributeTime(0.5, 0.9, {1.0}, {0.9}, 77, 0);
  EXPECT_NE(timers.explanation.find("timing each of the 77 kernels"), std::string::npos) << timers.explanation;
  EXPECT_LT(timers.unexplained_ms, 0);
  // Time between kernels (an executor or device waits).
  const TimeAttribution between = AttributeTime(1.0, 0.6, {1.0, 1.0}, {0.6, 0.6}, 10, 0);
  EXPECT_NE(between.explanation.find("between kernels"), std::string::npos) << between.explanation;
  // End-to-end runs slower than the observed ones: stalls the per-layer runs did not have.
  const TimeAttribution stalls = AttributeTime(50.0, 6.7, {7.0}, {6.7}, 10, 4);
  EXPECT_NE(stalls.explanation.find("slowed"), std::string::npos) << stalls.explanation;
  EXPECT_NE(stalls.explanation.find("4 busy slot(s) were dropped"), std::string::npos);
  EXPECT_NEAR(stalls.unexplained_ms, 50.0 - 6.7 - 0.3, 1e-9);
  // Observed runs as slow as the untimed ones, but each layer's median misses its own slow runs.
  const TimeAttribution tails = AttributeTime(31.0, 18.5, {30.5, 31.5}, {30.0, 31.0}, 300, 0);
  EXPECT_NE(tails.explanation.find("slow runs"), std::string::npos) << tails.explanation;
}

}  // namespace
}  // namespace chipfit
