// DeviceInfo → JSON. Field names are part of the CLI contract (docs/json.md).
#include "devices/device_json.h"

namespace chipfit {

nlohmann::json DeviceInfoToJson(const DeviceInfo& info) {
  nlohmann::json j;
  j["id"] = info.Id();
  j["kind"] = std::string(DeviceKindName(info.kind));
  j["index"] = info.index;
  j["name"] = info.name;
  j["vendor"] = info.vendor;
  j["driver_version"] = info.driver_version;
  j["runtime_version"] = info.runtime_version;
  j["memory_bytes"] = info.memory_bytes;
  j["compute_units"] = info.compute_units;
  j["features"] = info.features;
  nlohmann::json props = nlohmann::json::object();
  for (const auto& [key, value] : info.properties) props[key] = value;
  j["properties"] = props;
  nlohmann::json precisions = nlohmann::json::array();
  for (const auto& p : info.precisions) {
    nlohmann::json entry;
    entry["precision"] = std::string(PrecisionName(p.precision));
    entry["target"] = Target{info.kind, info.index, p.precision}.ToString();
    entry["supported"] = p.support.ok;
    entry[p.support.ok ? "note" : "reason"] = p.support.reason;
    precisions.push_back(std::move(entry));
  }
  j["precisions"] = precisions;
  nlohmann::json ceilings = nlohmann::json::object();
  if (!info.ceilings.peak_gflops.empty() || info.ceilings.memory_bandwidth_gbps > 0) {
    nlohmann::json peak = nlohmann::json::object();
    for (const auto& [precision, gflops] : info.ceilings.peak_gflops)
      peak[std::string(PrecisionName(precision))] = gflops;
    ceilings["peak_gflops"] = peak;
    ceilings["memory_bandwidth_gbps"] = info.ceilings.memory_bandwidth_gbps;
    j["ceilings"] = ceilings;
  } else {
    j["ceilings"] = nullptr;
  }
  return j;
}

nlohmann::json DiscoveryToJson(const DiscoveryReport& report) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& device : report.devices) devices.push_back(DeviceInfoToJson(device->info()));
  return {{"devices", devices}, {"notes", report.notes}};
}

Result<DeviceInfo> DeviceInfoFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return ParseError("a device entry is not a JSON object");
  try {
    DeviceInfo info;
    const std::string kind = j.value("kind", "cpu");
    const auto parsed = ParseDeviceKind(kind);
    if (!parsed) return ParseError("device kind '" + kind + "' is not one chipfit knows");
    info.kind = *parsed;
    info.index = j.value("index", 0);
    info.name = j.value("name", "");
    info.vendor = j.value("vendor", "");
    info.driver_version = j.value("driver_version", "");
    info.runtime_version = j.value("runtime_version", "");
    info.memory_bytes = j.value("memory_bytes", uint64_t{0});
    info.compute_units = j.value("compute_units", 0);
    if (j.contains("features") && j["features"].is_array())
      info.features = j["features"].get<std::vector<std::string>>();
    if (j.contains("properties") && j["properties"].is_object()) {
      for (const auto& [key, value] : j["properties"].items()) {
        info.properties.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
      }
    }
    if (j.contains("precisions") && j["precisions"].is_array()) {
      for (const auto& p : j["precisions"]) {
        const auto precision = ParsePrecision(p.value("precision", ""));
        if (!precision) continue;  // a precision a newer chipfit knows
        const bool ok = p.value("supported", false);
        info.precisions.push_back({*precision, {ok, p.value(ok ? "note" : "reason", "")}});
      }
    }
    if (j.contains("ceilings") && j["ceilings"].is_object()) {
      const auto& c = j["ceilings"];
      if (c.contains("peak_gflops") && c["peak_gflops"].is_object()) {
        for (const auto& [name, value] : c["peak_gflops"].items()) {
          if (const auto precision = ParsePrecision(name); precision && value.is_number())
            info.ceilings.peak_gflops[*precision] = value.get<double>();
        }
      }
      if (c.contains("memory_bandwidth_gbps") && c["memory_bandwidth_gbps"].is_number())
        info.ceilings.memory_bandwidth_gbps = c["memory_bandwidth_gbps"].get<double>();
    }
    return info;
  } catch (const nlohmann::json::exception& e) {
    return ParseError(std::string("device entry: ") + e.what());
  }
}

}  // namespace chipfit
