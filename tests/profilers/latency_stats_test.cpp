// Latency statistics against hand-computed values.
#include <gtest/gtest.h>

#include "profilers/latency/latency_stats.h"

namespace chipfit {
namespace {

TEST(LatencyStatsTest, PercentilesInterpolateAndCovFlagsNoise) {
  // 1..100 ms: p50 50.5, p90 90.1, p99 99.01 by linear interpolation; mean 50.5.
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
  EXPECT_TRUE(s.noisy);
  EXPECT_EQ(s.iterations, 100);

  const LatencyStats steady = ComputeLatencyStats({1.00, 1.01, 0.99, 1.00});
  EXPECT_LT(steady.cov, 0.01);
  EXPECT_FALSE(steady.noisy);
  EXPECT_EQ(ComputeLatencyStats({}).iterations, 0);
}

}  // namespace
}  // namespace chipfit
