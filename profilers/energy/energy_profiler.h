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
// `static_units`: how many units of the target's device the run keeps powered (CPU threads, OpenCL
// compute units, 1 for a GPU); the estimate adds static power × units × each layer's p50 time, so a
// slower device never comes out cheaper for the same work.
void AttributeTargetEnergy(const EnergyModel& model, const std::optional<EnergyMeasurement>& measured,
                           TargetResult& result, double static_units = 1);

}  // namespace chipfit
