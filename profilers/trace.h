// Chrome trace / Perfetto JSON of a profile: one track per target, one slice per kernel.
#pragma once

#include <vector>

#include "nlohmann/json.hpp"
#include "profilers/run_result.h"

namespace chipfit {

// Each target's kernels as one observed run recorded them (LayerResult::observed_start_ms and
// observed_ms, the first per-layer pass): real start times and durations, so the gaps between kernels
// (launches, host work, synchronisation) show. A target whose layers lack them (a run recorded before
// chipfit kept them) falls back to its kernels laid out back to back with their p50 device times.
// Either way each slice's args say which timeline it is; slices are named by the ONNX nodes they cover.
nlohmann::json ChromeTrace(const std::vector<TargetResult>& targets);

}  // namespace chipfit
