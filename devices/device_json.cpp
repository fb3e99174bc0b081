// DeviceInfo → JSON. Field names are part of the CLI contract (DESIGN.md §7).
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

}  // namespace chipfit
