// Per-layer energy from the layers' FLOPs and bytes at their device and precision.
#include "profilers/energy/energy_profiler.h"

namespace chipfit {

std::string DefaultEnergyTablePath() { return CHIPFIT_ENERGY_TABLE; }

void AttributeTargetEnergy(const EnergyModel& model, const std::optional<EnergyMeasurement>& measured,
                           TargetResult& result) {
  std::vector<double> joules;
  for (const LayerResult& layer : result.layers) {
    const std::string kind_text = layer.device.substr(0, layer.device.find(':'));
    const DeviceKind kind = ParseDeviceKind(kind_text).value_or(DeviceKind::kCpu);
    const Precision precision = ParsePrecision(layer.precision).value_or(Precision::kFp32);
    joules.push_back(EstimateJoules(model, kind, precision, layer.flops, layer.bytes_read, layer.bytes_written));
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
  } else {
    result.energy = estimate.model_total;
    result.notes.push_back("energy: estimated (no sensor): ops x pJ/op + bytes x DRAM pJ/byte from " +
                           std::string("resources/energy/coefficients.json; an upper bound for memory traffic"));
  }
  if (!note.empty()) result.notes.push_back("energy: " + note);
}

}  // namespace chipfit
