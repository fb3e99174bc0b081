// The energy model (docs/measurement.md) (E = Σ ops·e_op(device, precision) + bytes·e_mem(device)), its
// coefficient table loaded from resources/energy/coefficients.json, and scaling to a measured total.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/target.h"
#include "core/status.h"
#include "profilers/run_result.h"

namespace chipfit {

// One coefficient in picojoules and where the figure comes from (paper, table, or "stand-in for …").
struct EnergyCoefficient {
  double pj = 0;
  std::string source;
};

// Arithmetic cost of one precision on one device kind: a multiply and an add.
struct OpEnergy {
  EnergyCoefficient mult, add;
};

// Memory cost of one device kind, per byte (the table quotes per 32-bit word; the loader divides by 4).
struct MemoryEnergy {
  EnergyCoefficient dram_per_byte, sram_per_byte;
};

// The coefficient table. Built only by the loaders below, which check that every device kind (cpu,
// opencl, cuda) × precision (fp32, fp16, bf16, int8) is present, so lookups cannot miss.
class EnergyModel {
 public:
  // Device kinds and precisions the table must cover.
  static const std::vector<DeviceKind>& TableKinds();
  static const std::vector<Precision>& TablePrecisions();

  // The reference device is costed as a CPU and tf32 as fp32 (tf32 multiplies are cheaper, but the
  // table has no figure for them; fp32 is the upper bound).
  const OpEnergy& Ops(DeviceKind kind, Precision precision) const;
  const MemoryEnergy& Memory(DeviceKind kind) const;
  // Static power per unit of a device kind (a CPU core, an OpenCL compute unit, a CUDA device), in
  // watts (the coefficient's `pj` field holds watts here), with its source.
  const EnergyCoefficient& StaticWattsPerUnit(DeviceKind kind) const;
  const std::string& origin() const { return origin_; }  // the file it came from

 private:
  friend Result<EnergyModel> ParseEnergyModel(const std::string& json_text, const std::string& origin);
  EnergyModel() = default;

  std::map<std::pair<DeviceKind, Precision>, OpEnergy> ops_;
  std::map<DeviceKind, MemoryEnergy> memory_;
  std::map<DeviceKind, EnergyCoefficient> static_watts_;
  std::string origin_;
};

// Reads the table; the library has no idea where chipfit's resources are installed, so the caller
// passes the path (the CLI: <source or share dir>/resources/energy/coefficients.json).
Result<EnergyModel> LoadEnergyModel(const std::string& path);
// The same from JSON text; `origin` names it in error messages.
Result<EnergyModel> ParseEnergyModel(const std::string& json_text, const std::string& origin);

// Estimated joules of one layer. Every flop costs the mean of a multiply and an add (a MAC = 2 flops
// = one of each, exact for Conv/MatMul; elementwise ops are approximated the same way). Every byte read
// or written is charged as a DRAM access: an upper bound, since caches serve much of the traffic
// (DRAM is ~128× SRAM in the table, so this term dominates memory-bound layers).
double EstimateJoules(const EnergyModel& model, DeviceKind kind, Precision precision, int64_t flops, int64_t bytes_read,
                      int64_t bytes_written);

// Scales `layer_joules` in place so they sum to `measured_total`, keeping their proportions. Returns
// the model's own total before scaling (to report beside the measured one). Fails, leaving the layers
// untouched, when the estimate sums to zero or either total is negative or not finite.
Result<double> ScaleToMeasured(std::vector<double>& layer_joules, double measured_total);

// Per-layer energies labelled with their source, and the model's own total.
struct EnergyEstimate {
  std::vector<EnergyValue> layers;  // "estimated", or "estimated:scaled" when scaled to a measurement
  EnergyValue model_total;          // Σ unscaled estimates, always "estimated"
};

// Labels the estimates; with a measured total they are scaled to it (when scaling is impossible they
// stay "estimated" and the error is returned alongside in `note`).
EnergyEstimate AttributeEnergy(std::vector<double> layer_joules, std::optional<double> measured_total,
                               std::string* note = nullptr);

}  // namespace chipfit
