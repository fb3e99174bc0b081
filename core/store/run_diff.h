// A/B comparison of two stored runs (`chipfit diff`): per target and per layer, latency ratio and
// drift change, with regressions flagged only beyond the noise both runs measured.
#pragma once

#include <nlohmann/json.hpp>

namespace chipfit {

// Thresholds of a regression. Latency: B's p50 exceeds A's by more than
// max(min_latency_change, z · the standard error of the difference of the two medians), where a
// median's standard error is 1.2533 · CoV · mean / √iterations (normal approximation; both runs'
// CoV and iteration counts are stored). Layers, timed over fewer runs, use their p90 − p50 spread
// instead: max(min_layer_change, spread A + spread B) relative to A's p50.
struct DiffOptions {
  double min_latency_change = 0.05;
  double z = 3.0;
  double min_layer_change = 0.10;
  double min_layer_ms = 0.02;     // layers under 20 µs in both runs (dispatch noise) are never flagged
  double max_sqnr_drop_db = 1.0;  // output (and layer) SQNR drops beyond this are regressions
  double max_top1_drop = 0.005;   // top-1 agreement drops beyond half a point
};

// `a`, `b`: profile JSON (schema chipfit.profile/1, e.g. RunStore::LoadRun). Targets are matched by
// name, layers by name and op; those only one run has are listed as added or removed.
// Result: {"a": {...}, "b": {...}, "targets": [...], "regressions": N, "notes": [...]}.
nlohmann::json DiffRuns(const nlohmann::json& a, const nlohmann::json& b, const DiffOptions& options = {});

}  // namespace chipfit
