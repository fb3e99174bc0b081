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
#include "core/status.h"
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

// Factors on chipfit's prior η for one kind of device, learned from measurements published for
// devices of that kind (published.h): how far the vendor's runtime (TensorRT, OpenVINO, Neuron, QNN)
// gets from the roofline, by op class and precision group, and its per-layer dispatch cost.
struct KindEfficiency {
  std::map<std::string, double> matrix = {{"fp32", 1.0}, {"half", 1.0}, {"int8", 1.0}};  // by precision group
  double depthwise = 1, memory = 1;  // depthwise convolutions; every other class (η_c and η_m alike)
  double layer_overhead_factor = 1;  // on the launch prior of the device's class
  double inference_overhead_ms = 0;  // once per inference (the runtime's own call, input binding)
  std::string runtime;               // "TensorRT", "OpenVINO", …: what the published figures ran
  int rows = 0;                      // published rows of this kind behind the fit
  std::vector<std::string> devices;  // their catalog ids
  // log(measured / projected) of this kind's rows, each projected with its device left out of the fit:
  // the band of a projection onto a device of this kind.
  std::vector<double> lodo_log_errors;
};
struct PublishedEfficiency {
  std::map<std::string, KindEfficiency> kinds;  // cpu | gpu | npu | accelerator
  std::string fitted_on;                        // "97 rows on 10 devices (resources/hardware/validation)"
};
nlohmann::json PublishedEfficiencyToJson(const PublishedEfficiency& e);
Result<PublishedEfficiency> PublishedEfficiencyFromJson(const nlohmann::json& j, const std::string& file);

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
  // Catalog devices of a kind the published measurements cover are projected with that kind's
  // learned efficiency (and, on CPUs, this machine's cell-to-cell variation around its mean).
  std::optional<PublishedEfficiency> published{};
  // This machine's CPU and what its targets measured (p50 per precision): a catalog CPU with at least
  // its cores, bandwidth and per-core peak could run the model as it ran here, so it is never
  // projected slower than that.
  std::optional<HardwareSpec> local_cpu{};
  std::map<Precision, double> local_cpu_p50_ms{};
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
  std::string bound;                     // compute | memory | overhead | elided (the runtime does not run it)
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
  std::string runtime;                         // the runtime the efficiency assumes ("TensorRT")
  // The leave-one-device-out median |error| of the published rows of this device's kind, and how
  // many rows: how far projections of the kind were from measurements (nullopt: no published rows).
  std::optional<double> validated_error{};
  int validated_rows = 0;
  std::vector<ProjectedLayer> layers;
  std::vector<std::string> notes;
};

// A layer's two roofline terms on `spec` at `p` with chipfit's prior η, ms: the matrix units' tile
// padding and the wave fill of compute units are in the compute term, on-chip caching in the memory
// term; the ideal terms are the plain roofline (FLOPs / peak, bytes / DRAM bandwidth).
struct LayerTerms {
  double compute_ms = 0, memory_ms = 0;
  double ideal_compute_ms = 0, ideal_memory_ms = 0;
  double eta_c = 1, eta_m = 1;
  EtaCell cell;
};
// `byte_factor`: what the layer's bytes are multiplied by at `p` (1 for a layer measured as it ran).
// `all_units_busy`: concurrent requests fill the units a small layer leaves idle (throughput).
LayerTerms PriorTerms(const LayerFeature& f, const HardwareSpec& spec, Precision p, double byte_factor,
                      bool all_units_busy = false);
// The bytes factor relative to fp32 that `spec` moves at `p` (1 on CPUs: chipfit's CPU kernels keep fp32
// activations between layers).
double SpecByteFactor(const HardwareSpec& spec, Precision p, OpClass c);
// The bytes factor relative to fp32 of a layer computed at `p` by a runtime that keeps activations at
// the precision (half for fp16/bf16; a quarter for int8 matrix layers, whose neighbours stay in float).
double PrecisionByteFactor(Precision p, OpClass c);
// "fp32", "half" (tf32, fp16, bf16) or "int8".
std::string PrecisionGroup(Precision p);
// The precisions a runtime asked for `p` may also pick per layer, the fastest winning (TensorRT's
// builder flags, OpenVINO's inference precision hint): `p` itself, then each lower one `spec` has. So a
// precision with a higher peak is never projected slower than the ones it includes.
std::vector<Precision> AllowedPrecisions(const HardwareSpec& spec, Precision p);
// Layers a vendor's compiled runtime does not run at all: views (Reshape, Flatten, Squeeze, Unsqueeze,
// Identity), concatenations and splits written in place by their producers, and the layout reorders
// chipfit's CPU device inserts around oneDNN (a runtime with its own layouts places its own).
bool ElidedByCompiledRuntime(const std::string& op);
// The per-layer launch prior of a catalog launch class, ms.
double PriorLaunchOverheadMs(const std::string& launch_class);
// The runtime a projection onto a device of `kind` assumes (what the published figures of the kind ran).
std::string AssumedRuntime(const std::string& kind);

struct ProjectOptions {
  ProjectionModel model = ProjectionModel::kCalibrated;
  double model_bytes = 0;  // weights + peak activations at fp32, for the memory-capacity check
  // Bytes per element relative to the features' at the projected precision; nullopt: 1 on CPUs
  // (chipfit's CPU kernels keep fp32 activations between layers at every precision), else the
  // precision's (fp16/bf16 half, int8 a quarter in matrix layers).
  std::optional<double> byte_factor{};
  // Projecting a configuration of this machine that runs chipfit's own kernels (`--validate`, the
  // leave-one-out pass): the local calibration only, never the published efficiency.
  bool local_software = false;
};

// Projects `features` onto `spec` at `precision`. Unsupported (precision absent from the spec, model
// larger than its memory) comes back with status "unsupported" and the reason.
Projection Project(const std::vector<LayerFeature>& features, const HardwareSpec& spec, Precision precision,
                   const Calibration& calibration, const ProjectOptions& options = {});

// The band of a projection onto a device of a kind with published rows, as factors: the P10–P90 of
// the kind's leave-one-device-out log errors, drawn towards ×/÷ 2 below ten rows, at least ±5 %.
std::pair<double, double> PublishedBand(const std::vector<double>& log_errors);

// The P10 and P90 of log errors as factors (exp), widened to at least ±`floor` and never excluding 1.
std::pair<double, double> BandFactors(const std::vector<double>& log_errors, double floor);

// Kendall's τ-b between two rankings (the same items' values); nullopt below two items.
std::optional<double> KendallTau(const std::vector<double>& a, const std::vector<double>& b);

inline constexpr char kProjectionSchema[] = "chipfit.projection/1";
nlohmann::json ProjectionToJson(const Projection& projection, bool with_layers = true);
nlohmann::json CalibrationToJson(const Calibration& calibration);

}  // namespace chipfit
