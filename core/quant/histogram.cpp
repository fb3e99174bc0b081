// StreamingHistogram: binning with range doubling, percentile and KL-divergence thresholds.
#include "core/quant/histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace chipfit {

namespace {

// Stand-in count for a quantised bin that lost all its mass while P still has some there (only the last
// bin, which holds the clipped outliers): tiny, so that threshold is heavily penalised, yet KL stays finite.
constexpr double kEmptyBinCount = 1e-4;

}  // namespace

StreamingHistogram::StreamingHistogram(int bins) : counts_(static_cast<size_t>(std::max(bins, 1)), 0) {}

float StreamingHistogram::abs_max() const { return std::max(std::fabs(min_), std::fabs(max_)); }

size_t StreamingHistogram::MemoryBytes() const { return sizeof(*this) + counts_.capacity() * sizeof(uint64_t); }

void StreamingHistogram::GrowTo(double abs_value) {
  if (abs_value <= range_) return;
  if (range_ == 0.0) {
    // Only zeros so far, all in bin 0 whatever the range: start at the first real magnitude.
    range_ = abs_value;
    return;
  }
  const size_t n = counts_.size();
  while (range_ < abs_value) {
    // Bin i of the doubled range covers old bins 2i and 2i+1.
    for (size_t i = 0; i < n; ++i) {
      const size_t a = 2 * i, b = 2 * i + 1;
      counts_[i] = (a < n ? counts_[a] : 0) + (b < n ? counts_[b] : 0);
    }
    range_ *= 2.0;
  }
}

void StreamingHistogram::Add(const float* data, size_t n) {
  // Extremes first, so the range grows at most once per batch instead of once per value.
  float lo = std::numeric_limits<float>::infinity();
  float hi = -std::numeric_limits<float>::infinity();
  uint64_t finite = 0;
  for (size_t i = 0; i < n; ++i) {
    const float x = data[i];
    if (std::isnan(x)) {
      ++nan_count_;
    } else if (std::isinf(x)) {
      ++inf_count_;
    } else {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      ++finite;
    }
  }
  if (finite == 0) return;
  min_ = total_ == 0 ? lo : std::min(min_, lo);
  max_ = total_ == 0 ? hi : std::max(max_, hi);
  total_ += finite;
  GrowTo(std::max(std::fabs(static_cast<double>(lo)), std::fabs(static_cast<double>(hi))));
  if (range_ == 0.0) {
    counts_[0] += finite;
    return;
  }
  const size_t last = counts_.size() - 1;
  const double per_unit = static_cast<double>(counts_.size()) / range_;
  for (size_t i = 0; i < n; ++i) {
    const float x = data[i];
    if (!std::isfinite(x)) continue;
    // |x| == range lands on index bins: the top edge belongs to the last bin.
    const auto bin = static_cast<size_t>(std::fabs(static_cast<double>(x)) * per_unit);
    ++counts_[std::min(bin, last)];
  }
}

double StreamingHistogram::AbsPercentile(double percentile) const {
  if (total_ == 0 || range_ == 0.0 || percentile <= 0.0) return 0.0;
  const double top = abs_max();
  if (percentile >= 100.0) return top;
  const double target = percentile / 100.0 * static_cast<double>(total_);
  double below = 0.0;
  for (size_t b = 0; b < counts_.size(); ++b) {
    const auto c = static_cast<double>(counts_[b]);
    if (c > 0.0 && below + c >= target) {
      const double fraction = (target - below) / c;
      return std::min((static_cast<double>(b) + fraction) * bin_width(), top);
    }
    below += c;
  }
  return top;
}

double StreamingHistogram::EntropyThreshold(int levels) const {
  const double top = abs_max();
  const int nb = bins();
  levels = std::max(levels, 1);
  if (total_ == 0 || range_ == 0.0 || nb <= levels) return top;

  // outliers[i]: mass beyond the first i bins, folded into P's last bin when clipping at i.
  std::vector<double> outliers(static_cast<size_t>(nb) + 1, 0.0);
  for (int b = nb - 1; b >= 0; --b) outliers[b] = outliers[b + 1] + static_cast<double>(counts_[b]);
  const double p_total = static_cast<double>(total_);

  // Each candidate i is independent: up to ~2M logarithms for 2048 bins, worth the threads. The
  // arg-min below is serial, so the result does not depend on the thread count.
  std::vector<double> kl(static_cast<size_t>(nb) + 1, std::numeric_limits<double>::infinity());
#pragma omp parallel for schedule(dynamic, 32)
  for (int i = levels; i <= nb; ++i) {
    const double outlier = outliers[i];
    auto p_at = [&](int b) { return static_cast<double>(counts_[b]) + (b == i - 1 ? outlier : 0.0); };
    // Q keeps the mass of the unclipped first i bins; only the last group can be empty where P is not.
    const auto last_group_start = static_cast<int>((levels - 1) * static_cast<int64_t>(i) / levels);
    const double last_group_mass = outliers[last_group_start] - outlier;
    const bool floor_used = outlier > 0.0 && last_group_mass == 0.0;
    const double q_total = (p_total - outlier) + (floor_used ? kEmptyBinCount : 0.0);
    double sum = 0.0;  // Σ P_b log(P_b / Q_b)
    for (int j = 0; j < levels; ++j) {
      const auto start = static_cast<int>(j * static_cast<int64_t>(i) / levels);
      const auto end = static_cast<int>((j + 1) * static_cast<int64_t>(i) / levels);
      const double group_mass = outliers[start] - outliers[end];
      int nonzero = 0;
      for (int b = start; b < end; ++b) nonzero += p_at(b) > 0.0 ? 1 : 0;
      if (nonzero == 0) continue;
      // Quantising to one level spreads the group's mass evenly over the bins P uses.
      const double q = group_mass > 0.0 ? group_mass / nonzero : kEmptyBinCount;
      for (int b = start; b < end; ++b) {
        const double p = p_at(b);
        if (p > 0.0) sum += p * std::log(p / q);
      }
    }
    // KL of the normalised distributions: (1/ΣP) Σ P_b [log(P_b/Q_b) + log(ΣQ/ΣP)].
    kl[i] = sum / p_total + std::log(q_total / p_total);
  }
  int best = levels;
  for (int i = levels + 1; i <= nb; ++i) {
    if (kl[i] < kl[best]) best = i;  // strict: ties keep the smallest threshold
  }
  return std::min(static_cast<double>(best) * bin_width(), top);
}

}  // namespace chipfit
