// The one writer and the one reader of the profile JSON (docs/json.md, schema chipfit.profile/1): a
// RunResult (and each TargetResult, a `targets[]` entry) to JSON and back. Everything else reads the
// typed result.
#pragma once

#include <map>
#include <string>

#include "nlohmann/json.hpp"
#include "profilers/run_result.h"

namespace chipfit {

// The per-ONNX-node view of a target: each node of the model with the layers (kernels) that compute
// it and its share of their p50 time (a fused kernel's time split evenly among the nodes it covers;
// a copy step counts for the node that reads it). `node_ops`: ONNX node name → op type, for the view.
nlohmann::json OnnxNodeView(const TargetResult& profile, const std::map<std::string, std::string>& node_ops);

// `node_ops` as for OnnxNodeView (may be empty: ops are then null).
nlohmann::json TargetResultToJson(const TargetResult& profile, const std::map<std::string, std::string>& node_ops = {});

// A `targets[]` entry back to its typed form (the `nodes` view is derived, so it is not read).
Result<TargetResult> TargetResultFromJson(const nlohmann::json& j);

inline constexpr char kProfileSchema[] = "chipfit.profile/1";

// The whole profile document, as `profile --json` writes it and the store gives it back.
nlohmann::json RunResultToJson(const RunResult& run);
// The inverse; members this chipfit does not know are kept in RunResult::extra. Errors name the member.
Result<RunResult> RunResultFromJson(const nlohmann::json& j);

// The machine a run was measured on: host facts of this process's machine plus every device found.
MachineInfo DescribeMachine(const DiscoveryReport& discovery);

}  // namespace chipfit
