// The one verdict on a layer between two sides of a comparison (`chipfit diff`, the GUI's Compare page
// and the heat map's cross-target colours): "same kernel" when the same implementation ran in the same
// precision on the same device over the same ONNX nodes on both sides and its time did not move
// beyond noise; otherwise improved, regressed or unchanged by CompareLayerTimes.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/store/run_diff.h"

namespace chipfit {

// What ran for one layer on one side, and its per-layer device time (ms; NaN when not measured).
struct LayerKernelTiming {
  std::string implementation, precision, device;
  int nodes = 1;  // ONNX nodes the kernel covers (a fused kernel covers several)
  double p50_ms = std::numeric_limits<double>::quiet_NaN();
  double p90_ms = std::numeric_limits<double>::quiet_NaN();
};

// The same kernel timed twice is two samples of one thing: a difference between the sides is the
// machine's state at the two moments (clock, caches warmed by different neighbours, other load), which
// neither side's own p90 − p50 spread shows, since each spread comes from runs close together. So the
// same kernel must move by more than this share (and by more than both sides' spreads together, as any
// layer must) before it is called faster or slower; a kernel that changed needs only
// DiffOptions::min_layer_change.
inline constexpr double kSameKernelMinChange = 0.25;

enum class LayerVerdict { kNotCompared, kSameKernel, kUnchanged, kImproved, kRegressed };

struct LayerJudgement {
  LayerChange change{};      // ratio B/A, the threshold it had to pass, and whether it did
  bool same_kernel = false;  // implementation, precision, device and node count identical
  LayerVerdict verdict = LayerVerdict::kNotCompared;
};

// Whether both sides ran the same kernel. An empty implementation (a run that did not record it) is
// never the same as anything: without it there is no telling.
inline bool SameKernel(const LayerKernelTiming& a, const LayerKernelTiming& b) {
  return !a.implementation.empty() && a.implementation == b.implementation && a.precision == b.precision &&
         a.device == b.device && a.nodes == b.nodes;
}

// The verdict on layer A → B. kNotCompared when either side has no positive p50.
inline LayerJudgement JudgeLayer(const LayerKernelTiming& a, const LayerKernelTiming& b,
                                 const DiffOptions& options = {}) {
  LayerJudgement j;
  j.same_kernel = SameKernel(a, b);
  if (!(a.p50_ms > 0) || !(b.p50_ms > 0)) {
    j.change.ratio = std::numeric_limits<double>::quiet_NaN();
    return j;
  }
  DiffOptions o = options;
  if (j.same_kernel) o.min_layer_change = std::max(o.min_layer_change, kSameKernelMinChange);
  const auto p90 = [](double p50, double p90) { return std::isfinite(p90) ? p90 : p50; };
  j.change = CompareLayerTimes(a.p50_ms, p90(a.p50_ms, a.p90_ms), b.p50_ms, p90(b.p50_ms, b.p90_ms), o);
  if (j.change.regressed) {
    j.verdict = LayerVerdict::kRegressed;
  } else if (j.change.improved) {
    j.verdict = LayerVerdict::kImproved;
  } else {
    j.verdict = j.same_kernel ? LayerVerdict::kSameKernel : LayerVerdict::kUnchanged;
  }
  return j;
}

// "same kernel", "unchanged", "improved", "regressed", or "" when not compared.
inline const char* LayerVerdictName(LayerVerdict verdict) {
  switch (verdict) {
    case LayerVerdict::kSameKernel: return "same kernel";
    case LayerVerdict::kUnchanged: return "unchanged";
    case LayerVerdict::kImproved: return "improved";
    case LayerVerdict::kRegressed: return "regressed";
    case LayerVerdict::kNotCompared: break;
  }
  return "";
}

}  // namespace chipfit
