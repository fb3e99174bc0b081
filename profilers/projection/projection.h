// Projected targets (docs/projection.md): a model's time, band, energy and cost on hardware from the
// catalog, from the layers measured here. Per layer, time = launch overhead + a max-like blend of
// FLOPs/(η_c·peak) and bytes/(η_m·bandwidth), with wave and matrix-tile quantisation; η per op class ×
// precision group × size starts from chipfit's priors and is calibrated on this machine's own
// measurements, whose leave-one-out error becomes the P10–P90 band.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/runtime/target.h"
#include "profilers/projection/catalog.h"
#include "profilers/run_result.h"

namespace chipfit {

// How a layer uses the hardware: matrix units (Conv, MatMul, Gemm), a low-K convolution that cannot
// (depthwise), one op per element, a reduction or normalisation, or data movement.
enum class OpClass { kMatrix, kDepthwise, kElementwise, kReduce, kData };
const char* OpClassName(OpClass op_class);
// From a layer's op ("FusedConv", "Conv+Relu", "Softmax") and its reduction depth K (0 when not a
// matrix op): a Conv with K below 64 products per output is depthwise-like.
OpClass ClassifyOp(const std::string& op, double k);

// One layer of the model as the projection sees it, from a measured cpu:fp32 (or any) profile.
struct LayerFeature {
  std::string name, op;
  OpClass op_class = OpClass::kElementwise;
  double flops = 0;
  double bytes = 0;       // read + written, at 4 bytes per element (fp32)
  double m = 0, n = 0;    // matrix ops: output rows × output channels; 0 when unknown
  double k = 0;           // matrix ops: products per output (flops / 2·m·n)
  double iterations = 1;  // control-flow bodies: runs per inference
};
// The layers of `target` (time-less features). Layers on a fallback device count as well: the
// projected device runs the whole model.
std::vector<LayerFeature> FeaturesOf(const TargetResult& target);

// Which η cell a layer falls in: op class × precision group (fp32 | half | int8) × size ("small",
// "medium", "large" by work per compute unit).
struct EtaCell {
  OpClass op_class = OpClass::kElementwise;
  std::string group, size;
  auto operator<=>(const EtaCell&) const = default;
};

// The efficiencies a projection uses. Each cell's scale is Σ prior time / Σ measured time of the
// layers that fell in it on this machine's CPU targets: η_c and η_m are the priors times the scale.
// Cells without two layers fall back to their class and precision, their class, then the whole CPU.
struct Calibration {
  std::map<EtaCell, double> scale;
  std::map<std::pair<OpClass, std::string>, double> scale_by_group;
  std::map<OpClass, double> scale_by_class;
  std::optional<double> scale_overall{};
  std::map<EtaCell, double> eta_c, eta_m;   // the calibrated cells' η, for reports
  std::map<EtaCell, int> samples;           // layers behind each calibrated cell
  std::optional<double> cpu_overhead_ms{};  // per-layer launch overhead measured on the CPU
  std::vector<std::string> calibrated_on;   // "cpu:fp32 (local-cpu)" …
  // Leave-one-target-out: each calibration target projected from the others, log(measured/projected)
  // of the whole model and of each layer; their quantiles are the bands.
  std::vector<double> model_log_errors, layer_log_errors;
  std::vector<nlohmann::json> loo_rows;  // {"target", "projected_ms", "measured_ms", "error"}
  std::vector<std::string> notes;
};

// One measured target with the spec of the hardware it ran on (a local device, described as a
// catalog entry would describe it). `family` keeps software stacks apart: "cpu" (oneDNN) cells
// calibrate projections of catalog CPUs; "opencl" cells only the OpenCL device's own checks.
struct CalibrationSample {
  HardwareSpec spec;
  const TargetResult* target = nullptr;
  std::string family = "cpu";
  std::string label{};  // "cpu:fp32", "avx2 cpu:fp32": how tables name it
};

// A catalog-style description of a local device: peaks from the theoretical (datasheet-like)
// figures where chipfit has them (an OpenCL device on the host CPU takes the CPU's fp32 peak, as it
// computes in float), else the measured ones; bandwidth measured (a VM has no datasheet figure).
// nullopt when no peak or no bandwidth is known. `host_cpu`/`cpu_ceilings`: the CPU's, for OpenCL
// devices on the CPU.
std::optional<HardwareSpec> LocalHardwareSpec(const DeviceInfo& device, const CeilingReport* ceilings,
                                              const DeviceInfo* host_cpu = nullptr,
                                              const CeilingReport* cpu_ceilings = nullptr);

// Median η per cell over the samples' layers (each layer's dominant roof over its measured time less
// the launch overhead), and the leave-one-target-out errors.
Calibration Calibrate(const std::vector<CalibrationSample>& samples);

// How the projection is computed: the calibrated model, or a baseline for validation.
enum class ProjectionModel { kCalibrated, kRoofline, kFixed70 };

struct ProjectedLayer {
  std::string name, op;
  std::string op_class;
  double time_ms = 0, p10_ms = 0, p90_ms = 0;
  double compute_ms = 0, memory_ms = 0;  // the two roofline terms after η
  std::string bound;                     // compute | memory | overhead
  double eta = 0;                        // the η of the dominant term
};

struct Projection {
  std::string hardware, hardware_name, kind;
  std::string target;  // "<id>:<precision>"
  Precision precision = Precision::kFp32;
  std::string status = "ok";  // ok | unsupported
  std::string reason;
  double p50_ms = 0, p10_ms = 0, p90_ms = 0;
  double throughput_per_s = 0;
  double energy_j = 0;                         // estimated
  double utilisation = 0;                      // share of time at a roof (energy model)
  std::optional<double> price_per_hour_usd{};  // the catalog's
  std::optional<double> cost_per_million{};    // from the catalog's price
  std::vector<ProjectedLayer> layers;
  std::vector<std::string> notes;
};

struct ProjectOptions {
  ProjectionModel model = ProjectionModel::kCalibrated;
  double model_bytes = 0;  // weights + peak activations at fp32, for the memory-capacity check
  // Bytes per element relative to the features' at the projected precision; nullopt: 1 on CPUs
  // (chipfit's CPU kernels keep fp32 activations between layers at every precision), else the
  // precision's (fp16/bf16 half, int8 a quarter in matrix layers).
  std::optional<double> byte_factor{};
};

// Projects `features` onto `spec` at `precision`. Unsupported (precision absent from the spec, model
// larger than its memory) comes back with status "unsupported" and the reason.
Projection Project(const std::vector<LayerFeature>& features, const HardwareSpec& spec, Precision precision,
                   const Calibration& calibration, const ProjectOptions& options = {});

// The P10 and P90 of log errors as factors (exp), widened to at least ±`floor` and never excluding 1.
std::pair<double, double> BandFactors(const std::vector<double>& log_errors, double floor);

// Kendall's τ-b between two rankings (the same items' values); nullopt below two items.
std::optional<double> KendallTau(const std::vector<double>& a, const std::vector<double>& b);

inline constexpr char kProjectionSchema[] = "chipfit.projection/1";
nlohmann::json ProjectionToJson(const Projection& projection, bool with_layers = true);
nlohmann::json CalibrationToJson(const Calibration& calibration);

}  // namespace chipfit
