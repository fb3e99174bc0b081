// StreamingHistogram: fixed-size histogram of |x| for calibration, with percentile and KL thresholds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace chipfit {

// Histogram of |x| over [0, range] with a fixed number of equal bins. The range starts at the largest |x|
// of the first non-zero batch; a value beyond it doubles the range (adjacent bin pairs merge) until it
// fits, so memory stays constant whatever the number of samples. Zeros always land in bin 0.
class StreamingHistogram {
 public:
  explicit StreamingHistogram(int bins = 2048);

  // NaN and ±inf are not binned (they would poison the range) but are counted.
  void Add(const float* data, size_t n);

  int bins() const { return static_cast<int>(counts_.size()); }
  double range() const { return range_; }
  double bin_width() const { return range_ / static_cast<double>(counts_.size()); }
  const std::vector<uint64_t>& counts() const { return counts_; }
  float min() const { return min_; }  // exact signed extremes of the finite values; 0 when none
  float max() const { return max_; }
  float abs_max() const;
  uint64_t total() const { return total_; }  // finite values binned
  uint64_t nan_count() const { return nan_count_; }
  uint64_t inf_count() const { return inf_count_; }
  size_t MemoryBytes() const;

  // |x| below which `percentile` % of the finite values lie, linear inside the bin; capped at abs_max().
  double AbsPercentile(double percentile) const;
  // KL-divergence threshold: for i from `levels` to bins, the first i bins (outliers folded into bin i-1)
  // are compared with their quantisation to `levels` levels; the i with the smallest KL(P||Q) wins.
  // Returns the |x| threshold, capped at abs_max().
  double EntropyThreshold(int levels = 128) const;

 private:
  void GrowTo(double abs_value);

  std::vector<uint64_t> counts_;
  double range_ = 0.0;  // 0 until a non-zero finite value arrives
  float min_ = 0.0f;
  float max_ = 0.0f;
  uint64_t total_ = 0;
  uint64_t nan_count_ = 0;
  uint64_t inf_count_ = 0;
};

}  // namespace chipfit
