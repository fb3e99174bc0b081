// JSON form of DeviceInfo (the `devices` part of `chipfit devices --json` and profile JSON).
#pragma once

#include <nlohmann/json.hpp>

#include "devices/device.h"

namespace chipfit {

nlohmann::json DeviceInfoToJson(const DeviceInfo& info);
nlohmann::json DiscoveryToJson(const DiscoveryReport& report);

}  // namespace chipfit
