// Order statistics of repeated timings (DESIGN.md §4: p50/p90/p99/mean/min/max/CoV, noisy flag).
#pragma once

#include <vector>

#include "profilers/run_result.h"

namespace chipfit {

// Runs whose coefficient of variation exceeds this are flagged noisy.
inline constexpr double kNoisyCov = 0.05;

// Percentiles by linear interpolation between order statistics (NumPy's default); an empty list
// gives all zeros.
LatencyStats ComputeLatencyStats(std::vector<double> ms, double noisy_cov = kNoisyCov);

// The q-quantile (0..1) of `values` (sorted in place).
double Quantile(std::vector<double>& values, double q);

}  // namespace chipfit
