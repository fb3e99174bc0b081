// Latency statistics against hand-computed values; the robust noise rule against the CoV's failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "profilers/latency/latency_stats.h"

namespace chipfit {
namespace {

TEST(LatencyStatsTest, PercentilesInterpolate) {
  // 1..100 ms: p50 50.5, p90 90.1, p99 99.01 by linear interpolation; mean 50.5; MAD 25.
  std::vector<double> ms;
  for (int i = 100; i >= 1; --i) ms.push_back(i);
  const LatencyStats s = ComputeLatencyStats(ms);
  EXPECT_DOUBLE_EQ(s.p50, 50.5);
  EXPECT_NEAR(s.p90, 90.1, 1e-9);
  EXPECT_NEAR(s.p99, 99.01, 1e-9);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  EXPECT_NEAR(s.cov, 28.866 / 50.5, 1e-4);  // population stddev of 1..100 is 28.866
  EXPECT_DOUBLE_EQ(s.mad, 25.0);
  EXPECT_TRUE(s.noisy);
  EXPECT_EQ(s.outliers, 0);
  EXPECT_EQ(s.iterations, 100);
  ASSERT_EQ(s.samples.size(), 100u);
  EXPECT_EQ(s.samples.front(), 100.0);  // in the order they ran
  EXPECT_FALSE(s.samples_sketch);

  const LatencyStats steady = ComputeLatencyStats({1.00, 1.01, 0.99, 1.00});
  EXPECT_LT(steady.cov, 0.01);
  EXPECT_FALSE(steady.noisy);
  EXPECT_EQ(ComputeLatencyStats({}).iterations, 0);
}

// 999 steady runs and one 1000× stall: the CoV (over 1000 %) would call it noisy; the robust
// spread does not, and the stall is counted as an outlier.
TEST(LatencyStatsTest, OneStallIsAnOutlierNotNoise) {
  std::vector<double> ms;
  for (int i = 0; i < 999; ++i) ms.push_back(0.275 + 0.001 * (i % 5));
  ms.push_back(275.0);
  const LatencyStats s = ComputeLatencyStats(ms);
  EXPECT_GT(s.cov, 10.0);
  EXPECT_FALSE(s.noisy);
  EXPECT_EQ(s.outliers, 1);
  EXPECT_NEAR(s.p50, 0.277, 1e-9);
}

TEST(LatencyStatsTest, WideSpreadIsNoisy) {
  // Half the runs 20 % slower: MAD/p50 and (p90 − p50)/p50 far above their limits.
  std::vector<double> ms;
  for (int i = 0; i < 200; ++i) ms.push_back(i % 2 ? 1.2 : 1.0);
  ms.push_back(1.001);
  EXPECT_TRUE(ComputeLatencyStats(ms).noisy);
}

TEST(LatencyStatsTest, ManyRunsKeepAFixedSizeSketch) {
  std::vector<double> ms;
  for (size_t i = 0; i < 3 * kMaxStoredSamples; ++i) ms.push_back(static_cast<double>(i % 1000) / 1000.0);
  const LatencyStats s = ComputeLatencyStats(ms);
  EXPECT_TRUE(s.samples_sketch);
  ASSERT_EQ(s.samples.size(), kMaxStoredSamples);
  // The sketch's median is the runs' median.
  std::vector<double> sketch = s.samples;
  EXPECT_NEAR(Quantile(sketch, 0.5), s.p50, 1e-3);
}

// A load that arrived half-way through the timed window: the sketch still shows it in time order (the
// regression verdict's block bootstrap needs the order; a sorted sketch would hide it).
TEST(LatencyStatsTest, TheSketchKeepsTheOrderTheRunsRanIn) {
  std::vector<double> ms;
  for (size_t i = 0; i < 5 * kMaxStoredSamples; ++i) ms.push_back(i < 5 * kMaxStoredSamples / 2 ? 1.0 : 2.0);
  ms[7] = 500.0;  // one stall: a slice's median ignores it
  const LatencyStats s = ComputeLatencyStats(ms);
  ASSERT_TRUE(s.samples_sketch);
  ASSERT_EQ(s.samples.size(), kMaxStoredSamples);
  EXPECT_EQ(s.samples.front(), 1.0);
  EXPECT_EQ(s.samples[kMaxStoredSamples / 2 - 1], 1.0);
  EXPECT_EQ(s.samples[kMaxStoredSamples / 2], 2.0);
  EXPECT_EQ(s.samples.back(), 2.0);
}

TEST(LatencyStatsTest, CpuShareOfOthersIsAFraction) {
  CpuShareMeter meter;
  meter.Start();
  // Longer than a few clock ticks (/proc/stat counts in 1/100 s): a window under one tick has no share.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(120);
  volatile double x = 0;
  while (std::chrono::steady_clock::now() < until) x = x + 1e-9;
  const auto share = meter.Stop();
  ASSERT_TRUE(share.has_value()) << "/proc/stat is readable on Linux";
  EXPECT_GE(*share, 0.0);
  EXPECT_LE(*share, 1.0);
}

}  // namespace
}  // namespace chipfit
