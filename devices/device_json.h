// JSON form of DeviceInfo (the `devices` part of `chipfit devices --json` and profile JSON).
#pragma once

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "devices/device.h"

namespace chipfit {

nlohmann::json DeviceInfoToJson(const DeviceInfo& info);
nlohmann::json DiscoveryToJson(const DiscoveryReport& report);
// The inverse of DeviceInfoToJson, for runs read back from the store or a profile JSON. Tolerant of
// members an older chipfit did not write; a value of the wrong type is an error naming it.
Result<DeviceInfo> DeviceInfoFromJson(const nlohmann::json& j);

}  // namespace chipfit
