// What a target computed in: its kernels and their time per device and precision, read from the
// compiled kernels the run recorded (docs/measurement.md, "Precision mix"). A target is named for the
// precision it asked for; when most of its compute time ran in another one (an int8 target whose
// convolutions had no int8 kernel), it is that other target in all but name.
#pragma once

#include <string>
#include <vector>

#include "profilers/run_result.h"

namespace chipfit {

// A target whose own precision has under this share of its compute time ran as another target: its
// time is that target's kernels' within noise. Above it, what it made in its own precision is real
// (PP-OCR-like int8 with 38 % of its compute time in int8 ran 1.4x faster than fp32), and the mix says
// how much of it there is.
inline constexpr double kMinOwnPrecisionShare = 0.1;

struct PrecisionShare {
  std::string device;     // "cpu", "opencl:0", "ref"
  std::string precision;  // "fp32", "int8", …
  int kernels = 0;
  double time_ms = 0;          // Σ of the kernels' p50
  double compute_time_ms = 0;  // of that, the kernels that do arithmetic (FLOPs > 0)
};

struct PrecisionMix {
  std::vector<PrecisionShare> shares;  // most time first
  int kernels = 0;
  int own_kernels = 0;  // kernels on the target's device in the target's precision
  // The share of the compute time (kernels with FLOPs; every kernel's time when none has FLOPs) that
  // ran on the target's device in its precision: 1 for an fp32 target that stayed on its device.
  double own_time_share = 0;
  // "cpu:fp32" when the target's own precision has under kMinOwnPrecisionShare of the compute time:
  // the target it ran as (its device, and the precision with the most compute time). Empty otherwise,
  // and always for fp32 targets (fp32 is every device's base).
  std::string ran_as;
  // "int8 1 of 77 kernels, 3 % of compute time"; empty when the layers carry no precision.
  std::string text;
};

// Whether a target's mix says more than its name: any non-fp32 target, or an fp32 one whose compute
// time was not all on its device in fp32. Where the summary, pages and report print the mix.
inline bool MixWorthSaying(const PrecisionMix& mix, const Target& target) {
  return !mix.text.empty() && (target.precision != Precision::kFp32 || mix.own_time_share < 0.995);
}

// From the target's layers; a target that did not run, or whose layers predate the precision field,
// gives an empty mix (no shares, no text).
PrecisionMix ComputePrecisionMix(const TargetResult& result);

}  // namespace chipfit
