// Chrome trace / Perfetto JSON of a profile: one track per target, one slice per kernel.
#pragma once

#include <vector>

#include "nlohmann/json.hpp"
#include "profilers/run_result.h"

namespace chipfit {

// Each target's kernels laid out back to back with their p50 device times (a representative run,
// not one recorded run: the slices' args say so), named by the ONNX nodes they cover.
nlohmann::json ChromeTrace(const std::vector<TargetResult>& targets);

}  // namespace chipfit
