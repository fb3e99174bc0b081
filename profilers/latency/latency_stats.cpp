// Latency statistics: interpolated percentiles, mean, population standard deviation → CoV.
#include "profilers/latency/latency_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace chipfit {

double Quantile(std::vector<double>& values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

LatencyStats ComputeLatencyStats(std::vector<double> ms, double noisy_cov) {
  LatencyStats s;
  if (ms.empty()) return s;
  s.iterations = static_cast<int>(ms.size());
  s.p50 = Quantile(ms, 0.50);
  s.p90 = Quantile(ms, 0.90);
  s.p99 = Quantile(ms, 0.99);
  s.min = ms.front();
  s.max = ms.back();
  s.mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  double var = 0;
  for (double v : ms) var += (v - s.mean) * (v - s.mean);
  var /= static_cast<double>(ms.size());
  s.cov = s.mean > 0 ? std::sqrt(var) / s.mean : 0;
  s.noisy = s.cov > noisy_cov;
  return s;
}

}  // namespace chipfit
