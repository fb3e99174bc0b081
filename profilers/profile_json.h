// TargetProfile → the `targets[]` entries of the profile JSON (DESIGN.md §7, schema chipfit.profile/1).
#pragma once

#include <map>
#include <string>

#include "nlohmann/json.hpp"
#include "profilers/profile.h"

namespace chipfit {

// The per-ONNX-node view of a target: each node of the model with the layers (kernels) that compute
// it and its share of their p50 time (a fused kernel's time split evenly among the nodes it covers;
// a copy step counts for the node that reads it). `node_ops`: ONNX node name → op type, for the view.
nlohmann::json OnnxNodeView(const TargetProfile& profile, const std::map<std::string, std::string>& node_ops);

// `node_ops` as for OnnxNodeView (may be empty: ops are then null).
nlohmann::json TargetProfileToJson(const TargetProfile& profile,
                                   const std::map<std::string, std::string>& node_ops = {});

}  // namespace chipfit
