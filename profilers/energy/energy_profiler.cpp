// Per-layer energy from the layers' FLOPs and bytes at their device and precision.
#include "profilers/energy/energy_profiler.h"

#include "chipfit/data_dir.h"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

namespace chipfit {

std::string DefaultEnergyTablePath() {
  // The source tree's table in a build; the installed copy (CHIPFIT_DATA_DIR) where that tree is absent.
  std::error_code error;
  if (std::filesystem::exists(CHIPFIT_ENERGY_TABLE, error)) return CHIPFIT_ENERGY_TABLE;
  return std::string(CHIPFIT_DATA_DIR) + "/energy/coefficients.json";
}

void AttributeTargetEnergy(const EnergyModel& model, const std::optional<EnergyMeasurement>& measured,
                           TargetResult& result, double static_units) {
  // Static power of the target's device for as long as each layer takes (its p50), whichever device
  // the layer ran on: the target's device stays powered while its fallbacks run elsewhere.
  const double static_watts = model.StaticWattsPerUnit(result.target.kind).pj * static_units;
  std::vector<double> joules;
  double static_joules = 0;
  for (const LayerResult& layer : result.layers) {
    const std::string kind_text = layer.device.substr(0, layer.device.find(':'));
    const DeviceKind kind = ParseDeviceKind(kind_text).value_or(DeviceKind::kCpu);
    const Precision precision = ParsePrecision(layer.precision).value_or(Precision::kFp32);
    const double held = static_watts * layer.time_p50_ms * 1e-3;
    static_joules += held;
    joules.push_back(EstimateJoules(model, kind, precision, layer.flops, layer.bytes_read, layer.bytes_written) + held);
  }
  std::string note;
  const EnergyEstimate estimate =
      AttributeEnergy(joules, measured ? std::optional<double>(measured->joules_per_inference) : std::nullopt, &note);
  for (size_t i = 0; i < result.layers.size() && i < estimate.layers.size(); ++i) {
    result.layers[i].energy = estimate.layers[i];
  }
  if (measured) {
    result.energy = measured->value();
    result.notes.push_back("energy: measured by " + measured->source.substr(measured->source.find(':') + 1) + " over " +
                           std::to_string(measured->iterations) + " runs; per-layer figures are the " +
                           "model's estimates scaled to it (model total " +
                           std::to_string(estimate.model_total.joules) + " J)");
    // The sensor's view of its device meanwhile (NVML: clocks, temperature, throttling).
    for (const std::string& line : measured->notes) result.notes.push_back("energy: " + line);
  } else {
    result.energy = estimate.model_total;
    result.notes.push_back(fmt::format(
        "energy: estimated (no sensor): ops x pJ/op + bytes x DRAM pJ/byte + static power {:.3g} W ({:g} unit(s) x "
        "{:.3g} W) x layer time, from resources/energy/coefficients.json; static share {:.3g} of {:.3g} mJ",
        static_watts, static_units, model.StaticWattsPerUnit(result.target.kind).pj, static_joules * 1e3,
        estimate.model_total.joules * 1e3));
  }
  if (!note.empty()) result.notes.push_back("energy: " + note);
}

}  // namespace chipfit
