// TargetProfile → the `targets[]` entries of the profile JSON (DESIGN.md §7, schema chipfit.profile/1).
#pragma once

#include "nlohmann/json.hpp"
#include "profilers/profile.h"

namespace chipfit {

nlohmann::json TargetProfileToJson(const TargetProfile& profile);

}  // namespace chipfit
