// Order statistics of repeated timings: p50/p90/p99/mean/min/max, CoV (reported only), and the robust
// spread the `noisy` flag and the outlier count come from (median absolute deviation, p90 − p50).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "profilers/run_result.h"

namespace chipfit {

// `noisy` when (p90 − p50)/p50 exceeds the first or MAD/p50 the second. One stall in a thousand
// runs moves neither (it moves the CoV by orders of magnitude).
inline constexpr double kNoisyTailSpread = 0.05;
inline constexpr double kNoisyMadSpread = 0.03;
// A run slower than p50 + kOutlierMads·MAD is counted as an outlier.
inline constexpr double kOutlierMads = 10.0;
// Timed runs kept with a result; above this, the medians of that many consecutive slices of them.
inline constexpr size_t kMaxStoredSamples = 4096;
// Other processes' CPU share above which the machine is flagged busy.
inline constexpr double kBusyCpuShare = 0.10;

// Percentiles by linear interpolation between order statistics (NumPy's default); an empty list
// gives all zeros. Keeps the samples (or their sketch) in the result.
LatencyStats ComputeLatencyStats(std::vector<double> ms);

// The q-quantile (0..1) of `values` (sorted in place).
double Quantile(std::vector<double>& values, double q);

// Median absolute deviation from `median`.
double MedianAbsoluteDeviation(const std::vector<double>& values, double median);

// Samples to keep for a result: all of them, rounded to the nanosecond, when there are at most
// `max_samples`; else the medians of `max_samples` consecutive slices of the runs, in the order they
// ran. `sketch` says which.
std::vector<double> SampleSketch(const std::vector<double>& ms, size_t max_samples, bool& sketch);

// Other processes' share of the machine's CPUs over a window: /proc/stat's busy time of all CPUs less
// this process's own CPU time (getrusage), over all CPUs' time. Start() and Stop() bracket the window.
class CpuShareMeter {
 public:
  // Other processes' share and the hypervisor's steal time, both as shares of all CPUs' time.
  struct Shares {
    double others = 0, steal = 0;
  };
  void Start();
  // nullopt when /proc/stat could not be read at either end.
  std::optional<double> Stop();
  std::optional<Shares> StopShares();
  // The CPUs /proc/stat's shares are of (online CPUs), at least 1.
  static int MachineCpus();

 private:
  struct Sample {
    double busy_s = 0, total_s = 0, self_s = 0, steal_s = 0;
  };
  static std::optional<Sample> Read();
  std::optional<Sample> start_;
};

}  // namespace chipfit
