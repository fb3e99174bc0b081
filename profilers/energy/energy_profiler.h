// Energy for a profiled target: each layer's estimate from the energy model, scaled to a measured
// total when a sensor measured one, and the target's per-inference figure with its source.
#pragma once

#include <optional>
#include <string>

#include "profilers/energy/energy_model.h"
#include "profilers/energy/sensors.h"

namespace chipfit {

// The coefficient table shipped with chipfit (resources/energy/coefficients.json).
std::string DefaultEnergyTablePath();

// Fills result.layers[i].energy and result.energy: measured (source "measured:<sensor>") when
// `measured` is given, else the model's total (source "estimated"); says which in result.notes.
void AttributeTargetEnergy(const EnergyModel& model, const std::optional<EnergyMeasurement>& measured,
                           TargetResult& result);

}  // namespace chipfit
