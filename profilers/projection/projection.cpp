// The projection model (projection.h): op classes, η priors and calibration, the per-layer roofline
// blend with wave and tile quantisation, bands from leave-one-out errors, energy and cost.
#include "profilers/projection/projection.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "profilers/memory/ceilings.h"

namespace chipfit {
namespace {

// The exponent of the max-like blend of the compute and memory terms: 3 keeps the larger term
// dominant (within 26 % of max for equal terms) while a layer near the ridge point pays for both.
constexpr double kBlendPower = 3.0;

// Per-layer launch overhead by the catalog's class, ms: a oneDNN primitive call, a CUDA kernel
// launch without graphs, a graph-compiled accelerator's per-op cost, an NPU's per-op dispatch.
double PriorOverheadMs(const std::string& launch_class) {
  if (launch_class == "cpu") return 0.002;
  if (launch_class == "gpu") return 0.005;
  if (launch_class == "accelerator") return 0.003;
  return 0.01;  // npu
}

bool IsMatrix(OpClass c) { return c == OpClass::kMatrix; }

// Bytes per element relative to fp32 that a layer moves at `p`. int8 pipelines keep
// elementwise and reductions in float around the quantised matrix ops.
double ByteFactor(Precision p, OpClass c) {
  switch (p) {
    case Precision::kFp32:
    case Precision::kTf32: return 1.0;
    case Precision::kFp16:
    case Precision::kBf16: return 0.5;
    case Precision::kInt8: return (c == OpClass::kMatrix || c == OpClass::kDepthwise) ? 0.25 : 1.0;
  }
  return 1.0;
}

// The layer's own size, whatever the device: how many units it can keep busy is the fill's business
// (Terms), so the cell a layer calibrates is the cell it is projected with on every device.
std::string SizeOf(const LayerFeature& f, double bytes) {
  if (IsMatrix(f.op_class)) return f.flops < 1e6 ? "small" : f.flops < 50e6 ? "medium" : "large";
  return bytes < 64e3 ? "small" : bytes < 4e6 ? "medium" : "large";
}

// chipfit's priors (docs/projection.md): typical shares of dense peak and of memory bandwidth that
// vendor libraries reach, by device kind and op class, lowered for layers too small to fill the
// device. Calibration replaces them cell by cell where this machine measured the cell.
std::pair<double, double> PriorEta(const std::string& kind, const EtaCell& cell) {
  double c = 0.5, m = 0.6;
  const bool cpu = kind == "cpu";
  switch (cell.op_class) {
    case OpClass::kMatrix:
      c = cpu ? (cell.group == "fp32" ? 0.75 : 0.6) : (cell.group == "fp32" ? 0.65 : 0.5);
      m = 0.7;
      break;
    case OpClass::kDepthwise:
      c = 0.3;
      m = cpu ? 0.35 : 0.5;
      break;
    case OpClass::kElementwise:
      c = 0.3;
      m = cpu ? 0.5 : 0.75;
      break;
    case OpClass::kReduce:
    case OpClass::kData:  // both stream their inputs once with little arithmetic
      c = 0.2;
      m = cpu ? 0.4 : 0.6;
      break;
  }
  if (kind == "npu" || kind == "accelerator") {
    c *= 0.8;
    m *= 0.8;
  }
  const double size = cell.size == "small" ? 0.3 : cell.size == "medium" ? 0.7 : 1.0;
  return {c * size, m * size};
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

double PeakFor(const HardwareSpec& spec, Precision p, OpClass c) {
  if (IsMatrix(c)) {
    auto it = spec.peak_gflops.find(p);
    if (it != spec.peak_gflops.end()) return it->second;
  }
  // Other ops run on the vector units: the fp32 figure, else the smallest one the device has.
  auto fp32 = spec.peak_gflops.find(Precision::kFp32);
  if (fp32 != spec.peak_gflops.end()) return fp32->second;
  double lowest = 0;
  for (const auto& [precision, peak] : spec.peak_gflops) lowest = lowest == 0 ? peak : std::min(lowest, peak);
  return lowest;
}

// A layer whose bytes fit in half the on-chip memory (last-level cache, L2, SRAM) streams from there, not
// from DRAM; these factors are chipfit's priors for how much faster that is (a CPU's L3 against its
// DRAM share, a GPU's L2 against HBM/GDDR, an accelerator's SRAM), calibrated through η_m.
double CacheSpeedup(const HardwareSpec& spec, double bytes) {
  if (!spec.on_chip_memory_mb || bytes > *spec.on_chip_memory_mb * 1e6 / 2) return 1.0;
  if (spec.kind == "cpu") return 4.0;
  if (spec.kind == "gpu") return 3.0;
  return 4.0;
}

double Blend(double a, double b) {
  return std::pow(std::pow(a, kBlendPower) + std::pow(b, kBlendPower), 1 / kBlendPower);
}

std::optional<Precision> LayerPrecision(const std::string& text) {
  if (text == "fp32" || text.empty()) return Precision::kFp32;
  return ParsePrecision(text);
}

LayerFeature FeatureOf(const LayerResult& l) {
  LayerFeature f;
  f.name = l.name;
  f.op = l.op;
  f.flops = static_cast<double>(l.flops);
  // Bytes as the layer moved them here: chipfit's int8 and bf16 kernels keep fp32 activations
  // between layers, so these are fp32-like bytes; a projection scales them to its precision.
  f.bytes = static_cast<double>(l.bytes_read + l.bytes_written);
  // Matrix layers: M × N from the output's shape (NCHW: N = channels; MatMul/Gemm: the last dim).
  const auto& shape = l.output_shape;
  if (!shape.empty() && f.flops > 0) {
    double elements = 1;
    for (int64_t d : shape) elements *= static_cast<double>(std::max<int64_t>(d, 1));
    const bool conv = l.op.find("Conv") != std::string::npos;
    const double n = conv && shape.size() >= 3 ? static_cast<double>(shape[1]) : static_cast<double>(shape.back());
    if (n > 0) {
      f.n = n;
      f.m = elements / n;
      f.k = f.flops / (2 * f.m * f.n);
    }
  }
  f.op_class = ClassifyOp(l.op, f.k);
  f.iterations = l.iterations;
  return f;
}

LayerTerms Terms(const LayerFeature& f, const HardwareSpec& spec, Precision p, double byte_factor,
                 bool all_units_busy = false) {
  LayerTerms t;
  const double bytes = f.bytes * byte_factor;
  double flops = f.flops;
  double fill = 1;
  const double cu = std::max(1, spec.compute_units);
  if (IsMatrix(f.op_class) && f.m > 0 && f.n > 0 && spec.matrix_tile && p != Precision::kFp32) {
    // Matrix units pad channels and depth to their tile: 20 channels on a 16-wide tile cost 32.
    const double tn = (*spec.matrix_tile)[1], tk = (*spec.matrix_tile)[2];
    const double k = std::max(1.0, f.k);
    flops *= (std::ceil(f.n / tn) * tn / f.n) * (std::ceil(k / tk) * tk / k);
  }
  if (spec.kind != "cpu" && IsMatrix(f.op_class) && f.m > 0 && f.n > 0) {
    // Output tiles are dealt to compute units in waves; the last wave may leave most of them idle. A
    // small product (a batch-1 transformer's 128 × 768) gets the tiles libraries pick for it, 64 × 64,
    // and its depth split over idle units (split-K, 256 deep at least) until they are busy.
    const double tiles = std::ceil(f.m / 64) * std::ceil(f.n / 64);
    const double split = tiles < cu ? std::clamp(std::floor(f.k / 256), 1.0, std::ceil(cu / tiles)) : 1.0;
    const double work = tiles * split;
    fill = work / (std::ceil(work / cu) * cu);
  } else {
    // A layer keeps only as many units busy as it has grains of work (a thread's share on a CPU,
    // a block's on a GPU); two cores run a 100 KB elementwise layer no faster than one.
    // A CPU matrix layer's grain is 10 µs of one core's work at the precision's peak: the faster the
    // matrix unit (AMX int8 does 16× a core's fp32 FMAs), the fewer cores a layer is worth splitting over.
    const bool cpu = spec.kind == "cpu";
    const double core_peak = PeakFor(spec, p, f.op_class) / cu;  // GFLOP/s
    const double grains = !IsMatrix(f.op_class)  ? f.bytes / (cpu ? 128e3 : 32e3)
                          : cpu && core_peak > 0 ? f.flops / (core_peak * 1e4)
                                                 : f.flops / (cpu ? 2e6 : 2 * 128.0 * 128 * 64);
    fill = std::clamp(grains / cu, 1 / cu, 1.0);
  }
  // Throughput with concurrent requests (an inference server's streams, MLPerf Offline): other requests
  // occupy the units a small layer leaves idle.
  if (all_units_busy) fill = 1;
  const double peak = PeakFor(spec, p, f.op_class);
  t.cell = {f.op_class, PrecisionGroup(p), SizeOf(f, f.bytes)};
  // With every unit busy a small layer is no less efficient than a large one: the size penalty of the
  // priors is for the units a lone request leaves idle.
  std::tie(t.eta_c, t.eta_m) =
      PriorEta(spec.kind, all_units_busy ? EtaCell{t.cell.op_class, t.cell.group, "large"} : t.cell);
  t.ideal_compute_ms = peak > 0 ? f.flops / (peak * 1e6) : 0;
  t.ideal_memory_ms = spec.memory_bandwidth_gbs > 0 ? bytes / (spec.memory_bandwidth_gbs * 1e6) : 0;
  t.compute_ms = peak > 0 ? flops / (peak * 1e6) / fill / t.eta_c : 0;
  t.memory_ms = t.ideal_memory_ms / CacheSpeedup(spec, bytes) / fill / t.eta_m;
  return t;
}

// Per family and cell, Σ prior body time and Σ measured body time (measured less the launch overhead):
// their ratio is the cell's scale, weighted by time so the layers that make up the model decide it.
struct Sums {
  double prior = 0, measured = 0;
  int layers = 0;
  void Add(double p, double m) {
    prior += p;
    measured += m;
    layers += 1;
  }
};
struct Cells {
  std::map<std::pair<std::string, EtaCell>, Sums> exact;
  std::map<std::tuple<std::string, OpClass, std::string>, Sums> by_group;  // any size
  std::map<std::pair<std::string, OpClass>, Sums> by_class;                // any precision and size
  std::map<std::string, Sums> by_family;
};

// What one sample's layers say, added to `cells`. Layer times are scaled so they sum to the
// end-to-end p50: per-layer timing adds its own overhead to every kernel.
void Collect(const CalibrationSample& s, double cpu_overhead_ms, Cells& cells) {
  double layer_sum = 0;
  for (const LayerResult& l : s.target->layers) {
    if (l.parent.empty()) layer_sum += l.time_p50_ms;
  }
  const double norm = layer_sum > 0 && s.target->latency.p50 > 0 ? s.target->latency.p50 / layer_sum : 1.0;
  const double overhead = s.spec.launch_overhead == "cpu" ? cpu_overhead_ms : PriorOverheadMs(s.spec.launch_overhead);
  for (const LayerResult& l : s.target->layers) {
    if (l.time_p50_ms <= 0 || !l.parent.empty()) continue;
    const double measured = l.time_p50_ms * norm;
    const auto p = LayerPrecision(l.precision).value_or(Precision::kFp32);
    const LayerFeature f = FeatureOf(l);
    const LayerTerms t = Terms(f, s.spec, p, 1.0);
    const double body_prior = Blend(t.compute_ms, t.memory_ms);
    if (body_prior <= 0) continue;
    const double body_measured = std::max(measured - overhead, 0.05 * measured);
    cells.exact[{s.family, t.cell}].Add(body_prior, body_measured);
    cells.by_group[{s.family, t.cell.op_class, t.cell.group}].Add(body_prior, body_measured);
    cells.by_class[{s.family, t.cell.op_class}].Add(body_prior, body_measured);
    cells.by_family[s.family].Add(body_prior, body_measured);
  }
}

// The scale of a cell on a CPU (prior time / measured time): the exact cell where two layers measured
// it, else its class and precision at any size, else its class, else every layer of the family.
double ScaleFor(const Calibration& cal, const EtaCell& cell) {
  if (auto it = cal.scale.find(cell); it != cal.scale.end()) return it->second;
  if (auto it = cal.scale_by_group.find({cell.op_class, cell.group}); it != cal.scale_by_group.end()) return it->second;
  if (auto it = cal.scale_by_class.find(cell.op_class); it != cal.scale_by_class.end()) return it->second;
  return cal.scale_overall.value_or(1.0);
}

// The tables from the samples, without the leave-one-out pass.
Calibration CalibrateCells(const std::vector<CalibrationSample>& samples) {
  Cells cells;
  Calibration cal;
  // The CPU's launch overhead first: the lower quartile of its tiny data and elementwise layers.
  std::vector<double> small;
  for (const auto& s : samples) {
    if (s.target == nullptr || s.target->status != "ok" || s.spec.launch_overhead != "cpu") continue;
    for (const LayerResult& l : s.target->layers) {
      const OpClass c = ClassifyOp(l.op, 0);
      if (l.parent.empty() && l.time_p50_ms > 0 && (c == OpClass::kData || c == OpClass::kElementwise) &&
          l.bytes_read + l.bytes_written < 16000) {
        small.push_back(l.time_p50_ms);
      }
    }
  }
  if (small.size() >= 3) cal.cpu_overhead_ms = std::clamp(Quantile(small, 0.25), 0.0005, 0.05);
  for (const auto& s : samples) {
    if (s.target == nullptr || s.target->status != "ok") continue;
    Collect(s, cal.cpu_overhead_ms.value_or(PriorOverheadMs("cpu")), cells);
    std::string peaks;
    for (const auto& [p, gflops] : s.spec.peak_gflops) {
      peaks += fmt::format("{}{} {:.0f}", peaks.empty() ? "" : ", ", PrecisionName(p), gflops);
    }
    cal.calibrated_on.push_back(fmt::format("{} (peak GFLOP/s {}; {:.1f} GB/s)",
                                            s.label.empty() ? s.target->target.ToString() : s.label, peaks,
                                            s.spec.memory_bandwidth_gbs));
  }
  // Only the CPU family calibrates projections (the catalog's CPUs run oneDNN-like libraries; the
  // OpenCL device here is another software stack, checked only against itself).
  auto ratio = [](const Sums& s) { return std::clamp(s.prior / s.measured, 0.02, 50.0); };
  for (const auto& [key, sums] : cells.exact) {
    if (key.first != "cpu" || sums.layers < 2 || sums.measured <= 0) continue;
    cal.scale[key.second] = ratio(sums);
    cal.samples[key.second] = sums.layers;
    const auto prior = PriorEta("cpu", key.second);
    cal.eta_c[key.second] = prior.first * ratio(sums);
    cal.eta_m[key.second] = prior.second * ratio(sums);
  }
  for (const auto& [key, sums] : cells.by_group) {
    if (std::get<0>(key) == "cpu" && sums.layers >= 2 && sums.measured > 0) {
      cal.scale_by_group[{std::get<1>(key), std::get<2>(key)}] = ratio(sums);
    }
  }
  for (const auto& [key, sums] : cells.by_class) {
    if (key.first == "cpu" && sums.layers >= 2 && sums.measured > 0) cal.scale_by_class[key.second] = ratio(sums);
  }
  if (auto it = cells.by_family.find("cpu"); it != cells.by_family.end() && it->second.measured > 0) {
    cal.scale_overall = ratio(it->second);
  }
  return cal;
}

// The largest cache the device describes ("L3 cache": "32 MiB", "L2 cache": "2 x 1 MiB (2 MiB total)"), MB.
std::optional<double> LastLevelCacheMb(const DeviceInfo& device) {
  std::optional<double> best;
  for (const auto& [key, value] : device.properties) {
    if (key.find("cache") == std::string::npos) continue;
    // The total where a count of per-core caches is given, else the single figure.
    const auto total = value.find('(');
    const std::string text = total != std::string::npos ? value.substr(total + 1) : value;
    double amount = 0;
    char unit[8] = {};
    if (std::sscanf(text.c_str(), "%lf %7s", &amount, unit) != 2) continue;
    const std::string u = unit;
    const double mb = u.rfind("MiB", 0) == 0 ? amount * 1.048576 : u.rfind("KiB", 0) == 0 ? amount * 1.024e-3 : 0;
    if (mb > 0 && (!best || mb > *best)) best = mb;
  }
  return best;
}

// One layer at one precision: its projected terms, the body time (without the launch overhead) and
// the plain roofline time.
struct LayerChoice {
  ProjectedLayer layer;
  double body = -1, roof = 0;
};

// How a projection turns a layer's prior terms into time: the learned efficiency of the device's kind,
// the local calibration, or a baseline's fixed η.
struct LayerModel {
  const HardwareSpec& spec;
  const Calibration& calibration;
  const KindEfficiency* learned;
  const ProjectOptions& options;
  bool calibrated;
  double fixed_eta;

  LayerChoice Body(const LayerFeature& f, Precision q, bool all_units_busy) const {
    LayerChoice c;
    ProjectedLayer& l = c.layer;
    // A vendor's runtime moves activations at the precision it computes in; chipfit's CPU kernels
    // (measured here) keep them in fp32.
    const double byte_factor =
        learned != nullptr ? PrecisionByteFactor(q, f.op_class) : SpecByteFactor(spec, q, f.op_class);
    const LayerTerms t = Terms(f, spec, q, options.byte_factor.value_or(byte_factor), all_units_busy);
    if (learned != nullptr) {
      // The learned factors of the device's kind; on a CPU also this machine's variation from cell
      // to cell around its mean (how this model's layers sit against the roofline here).
      double fc = IsMatrix(f.op_class)                ? learned->matrix.at(PrecisionGroup(q))
                  : f.op_class == OpClass::kDepthwise ? learned->depthwise
                                                      : learned->memory;
      double fm = IsMatrix(f.op_class) ? learned->memory : fc;
      if (spec.kind == "cpu" && calibration.scale_overall) {
        const double relative = std::clamp(ScaleFor(calibration, t.cell) / *calibration.scale_overall, 0.5, 2.0);
        fc *= relative;
        fm *= relative;
      }
      // No factor makes a unit compute faster than its peak (η_c ≤ 1); the memory term may shrink
      // further (a runtime that fuses an elementwise layer into its neighbour never moves its bytes).
      l.compute_ms = std::max(t.compute_ms / fc, t.compute_ms * t.eta_c);
      l.memory_ms = t.memory_ms / fm;
      l.eta = l.compute_ms >= l.memory_ms ? t.eta_c * fc : t.eta_m * fm;
      c.body = Blend(l.compute_ms, l.memory_ms);
    } else if (calibrated) {
      // On a CPU the calibrated scale applies as measured; on other kinds of device its square root
      // (a shrunk correction: the software differs, the effects of layer shape and size carry over
      // in part).
      const double scale = ScaleFor(calibration, t.cell);
      const double applied = spec.kind == "cpu" ? scale : std::sqrt(scale);
      l.compute_ms = t.compute_ms / applied;
      l.memory_ms = t.memory_ms / applied;
      l.eta = (l.compute_ms >= l.memory_ms ? t.eta_c : t.eta_m) * applied;
      c.body = Blend(l.compute_ms, l.memory_ms);
    } else {
      l.compute_ms = t.ideal_compute_ms / fixed_eta;
      l.memory_ms = t.ideal_memory_ms / fixed_eta;
      l.eta = fixed_eta;
      c.body = std::max(l.compute_ms, l.memory_ms);
    }
    c.roof = std::max(t.ideal_compute_ms, t.ideal_memory_ms);
    return c;
  }
};

// A catalog CPU with at least this machine's cores, memory bandwidth and per-core peak at every
// precision it may use could run the model as chipfit ran it here: its projection is capped at the
// fastest local p50 among those precisions, the layers scaled alike, and a note says so.
std::optional<double> CapAtLocalCpu(const HardwareSpec& spec, const std::vector<Precision>& allowed,
                                    const Calibration& cal, Projection& out) {
  if (spec.kind != "cpu" || !cal.local_cpu || out.p50_ms <= 0) return std::nullopt;
  const HardwareSpec& local = *cal.local_cpu;
  if (spec.compute_units < local.compute_units || spec.memory_bandwidth_gbs < local.memory_bandwidth_gbs) {
    return std::nullopt;
  }
  std::optional<double> ceiling;
  for (Precision q : allowed) {
    auto measured = cal.local_cpu_p50_ms.find(q);
    auto theirs = spec.peak_gflops.find(q), ours = local.peak_gflops.find(q);
    if (measured == cal.local_cpu_p50_ms.end() || theirs == spec.peak_gflops.end() || ours == local.peak_gflops.end())
      continue;
    if (theirs->second / spec.compute_units < ours->second / local.compute_units) continue;
    ceiling = ceiling ? std::min(*ceiling, measured->second) : measured->second;
  }
  if (!ceiling || out.p50_ms <= *ceiling) return ceiling;
  const double scale = *ceiling / out.p50_ms;
  for (ProjectedLayer& l : out.layers) {
    l.time_ms *= scale;
    l.p10_ms *= scale;
    l.p90_ms *= scale;
  }
  out.notes.push_back(fmt::format(
      "capped at {:.3g} ms, measured here: {} has at least this CPU's cores, bandwidth and per-core peak, so it could "
      "run the model as it ran here (the model projected {:.3g} ms)",
      *ceiling, spec.name, out.p50_ms));
  out.p50_ms = *ceiling;
  return ceiling;
}

}  // namespace

// The band of a projection onto a device of a kind with published rows: the P10–P90 of the kind's
// leave-one-device-out errors, drawn towards ×/÷ 2 when the kind has fewer than ten rows (a few rows'
// quantiles say little about the tails).
std::pair<double, double> PublishedBand(const std::vector<double>& log_errors) {
  constexpr double kPrior = 0.6931471805599453;  // log 2
  double lo = -kPrior, hi = kPrior;
  if (log_errors.size() >= 2) {
    const double w = std::min(1.0, static_cast<double>(log_errors.size()) / 10.0);
    lo = w * Quantile(log_errors, 0.10) - (1 - w) * kPrior;
    hi = w * Quantile(log_errors, 0.90) + (1 - w) * kPrior;
  }
  return {std::exp(std::min(lo, -0.05)), std::exp(std::max(hi, 0.05))};
}

std::string PrecisionGroup(Precision p) {
  switch (p) {
    case Precision::kFp32: return "fp32";
    case Precision::kInt8: return "int8";
    default: return "half";  // tf32, fp16, bf16: the matrix units' reduced-precision path
  }
}

LayerTerms PriorTerms(const LayerFeature& f, const HardwareSpec& spec, Precision p, double byte_factor,
                      bool all_units_busy) {
  return Terms(f, spec, p, byte_factor, all_units_busy);
}

double SpecByteFactor(const HardwareSpec& spec, Precision p, OpClass c) {
  // chipfit's CPU device keeps fp32 activations between layers at every precision (measured here);
  // other devices move activations at the precision.
  return spec.kind == "cpu" ? 1.0 : ByteFactor(p, c);
}

double PrecisionByteFactor(Precision p, OpClass c) {
  // A vendor's int8 engine keeps quantised tensors between its fused layers (TensorRT, OpenVINO, QNN);
  // only normalisations and softmax run in 16-bit.
  if (p == Precision::kInt8) return c == OpClass::kReduce ? 0.5 : 0.25;
  return ByteFactor(p, c);
}

std::vector<Precision> AllowedPrecisions(const HardwareSpec& spec, Precision p) {
  // Each precision with what a runtime asked for it may fall back to: tf32 and the 16-bit formats
  // keep fp32 kernels available, int8 keeps the 16-bit and fp32 ones (TensorRT's --int8 with --fp16).
  std::vector<Precision> lower;
  switch (p) {
    case Precision::kFp32: break;
    case Precision::kTf32: lower = {Precision::kFp32}; break;
    case Precision::kFp16:
    case Precision::kBf16: lower = {Precision::kTf32, Precision::kFp32}; break;
    case Precision::kInt8: lower = {Precision::kFp16, Precision::kBf16, Precision::kTf32, Precision::kFp32}; break;
  }
  std::vector<Precision> out = {p};
  for (Precision q : lower) {
    if (spec.Supports(q)) out.push_back(q);
  }
  return out;
}

bool ElidedByCompiledRuntime(const std::string& op) {
  static const std::set<std::string> kElided = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity",
                                                "Concat",  "Split",   "Reorder", "Copy"};
  return kElided.contains(op.substr(0, op.find('+')));
}

double PriorLaunchOverheadMs(const std::string& launch_class) { return PriorOverheadMs(launch_class); }

std::string AssumedRuntime(const std::string& kind) {
  if (kind == "gpu") return "TensorRT";
  if (kind == "cpu") return "OpenVINO";
  if (kind == "npu") return "the vendor's NPU runtime (QNN)";
  return "the vendor's graph compiler (Neuron, SynapseAI, XLA)";
}

const char* OpClassName(OpClass op_class) {
  switch (op_class) {
    case OpClass::kMatrix: return "matrix";
    case OpClass::kDepthwise: return "depthwise";
    case OpClass::kElementwise: return "elementwise";
    case OpClass::kReduce: return "reduce";
    case OpClass::kData: return "data";
  }
  return "elementwise";
}

OpClass ClassifyOp(const std::string& op, double k) {
  const std::string base = op.substr(0, op.find('+'));
  static const char* kMatrixOps[] = {"Conv",        "FusedConv",     "ConvTranspose", "MatMul",        "Gemm",
                                     "QLinearConv", "QLinearMatMul", "ConvInteger",   "MatMulInteger", "Einsum",
                                     "LSTM",        "GRU",           "RNN",           "Attention",     "FusedMatMul"};
  for (const char* m : kMatrixOps) {
    if (base == m) {
      const bool conv = base.find("Conv") != std::string::npos;
      return conv && k > 0 && k < 64 ? OpClass::kDepthwise : OpClass::kMatrix;
    }
  }
  static const char* kReduceOps[] = {"Softmax",
                                     "LogSoftmax",
                                     "LayerNormalization",
                                     "BatchNormalization",
                                     "InstanceNormalization",
                                     "GroupNormalization",
                                     "MaxPool",
                                     "AveragePool",
                                     "GlobalAveragePool",
                                     "GlobalMaxPool",
                                     "LpNormalization",
                                     "TopK",
                                     "ArgMax",
                                     "ArgMin",
                                     "CumSum"};
  for (const char* r : kReduceOps) {
    if (base == r) return OpClass::kReduce;
  }
  if (base.rfind("Reduce", 0) == 0) return OpClass::kReduce;
  static const char* kDataOps[] = {
      "Reshape",  "Transpose", "Concat",       "Slice",        "Gather",    "GatherElements", "Pad",    "Resize",
      "Copy",     "Cast",      "Split",        "Squeeze",      "Unsqueeze", "Flatten",        "Expand", "Identity",
      "Upsample", "Tile",      "DepthToSpace", "SpaceToDepth", "ScatterND", "Shape",          "Reorder"};
  for (const char* d : kDataOps) {
    if (base == d) return OpClass::kData;
  }
  return OpClass::kElementwise;
}

std::vector<LayerFeature> FeaturesOf(const TargetResult& target) {
  std::vector<LayerFeature> features;
  for (const LayerResult& l : target.layers) {
    if (l.parent.empty()) features.push_back(FeatureOf(l));  // a control-flow layer's time covers its body
  }
  return features;
}

std::optional<HardwareSpec> LocalHardwareSpec(const DeviceInfo& device, const CeilingReport* ceilings,
                                              const DeviceInfo* host_cpu, const CeilingReport* cpu_ceilings) {
  HardwareSpec spec;
  spec.id = "local-" + device.Id();
  std::replace(spec.id.begin(), spec.id.end(), ':', '-');
  spec.name = device.name;
  spec.vendor = device.vendor;
  spec.kind = "cpu";
  spec.launch_overhead = device.kind == DeviceKind::kCpu ? "cpu" : "gpu";
  spec.compute_units = std::max(1, device.compute_units);
  spec.memory_gb = static_cast<double>(device.memory_bytes) / 1e9;
  const DeviceInfo& cache_of = device.kind == DeviceKind::kCpu || host_cpu == nullptr ? device : *host_cpu;
  if (auto mb = LastLevelCacheMb(cache_of)) {
    spec.on_chip_memory_mb = *mb;
    spec.sources["on_chip_memory_mb"] = {"the CPU's last-level cache (libcpuinfo)", ""};
  }
  std::vector<std::string> notes;
  const bool opencl_on_cpu =
      device.kind == DeviceKind::kOpenCL && host_cpu != nullptr &&
      (device.name.find("pthread") != std::string::npos || device.name.find("cpu") != std::string::npos);
  const auto theoretical = device.kind == DeviceKind::kCpu ? TheoreticalPeakGflops(device, &notes)
                           : opencl_on_cpu                 ? TheoreticalPeakGflops(*host_cpu, &notes)
                                                           : std::map<Precision, double>{};
  for (const auto& ps : device.precisions) {
    if (!ps.support.ok) continue;
    const Precision p = ps.precision;
    if (opencl_on_cpu) {
      // OpenCL C on POCL computes in float: fp16 is half storage at the fp32 rate.
      auto fp32 = theoretical.find(Precision::kFp32);
      if (fp32 != theoretical.end()) {
        spec.peak_gflops[p] = fp32->second;
        spec.sources["peak_gflops." + std::string(PrecisionName(p))] = {"theoretical fp32 peak of the host CPU", ""};
        continue;
      }
    }
    auto t = theoretical.find(p);
    if (t != theoretical.end()) {
      spec.peak_gflops[p] = t->second;
      spec.sources["peak_gflops." + std::string(PrecisionName(p))] = {"theoretical (cores × clock × FLOP/cycle)", ""};
    } else if (ceilings != nullptr && ceilings->measured.peak_gflops.contains(p)) {
      spec.peak_gflops[p] = ceilings->measured.peak_gflops.at(p);
      spec.sources["peak_gflops." + std::string(PrecisionName(p))] = {"measured (devices --measure)", ""};
    }
  }
  const CeilingReport* bw = ceilings != nullptr && ceilings->measured.memory_bandwidth_gbps > 0 ? ceilings
                            : opencl_on_cpu                                                     ? cpu_ceilings
                                                                                                : nullptr;
  if (bw != nullptr && bw->measured.memory_bandwidth_gbps > 0) {
    spec.memory_bandwidth_gbs = bw->measured.memory_bandwidth_gbps;
    spec.sources["memory_bandwidth_gbs"] = {"measured (devices --measure)", bw->measured_at};
  }
  if (spec.peak_gflops.empty() || spec.memory_bandwidth_gbs <= 0) return std::nullopt;
  spec.notes = notes;
  return spec;
}

Calibration Calibrate(const std::vector<CalibrationSample>& samples) {
  Calibration cal = CalibrateCells(samples);
  // Leave one target out: the others calibrate, it is projected, its measurement is the truth. With
  // one target there is nothing to calibrate the left-out one on.
  for (size_t i = 0; samples.size() >= 2 && i < samples.size(); ++i) {
    const auto& s = samples[i];
    if (s.target == nullptr || s.target->status != "ok" || s.target->latency.p50 <= 0) continue;
    std::vector<CalibrationSample> others;
    for (size_t j = 0; j < samples.size(); ++j) {
      if (j != i) others.push_back(samples[j]);
    }
    const Calibration partial = CalibrateCells(others);
    const auto features = FeaturesOf(*s.target);
    const Projection p = Project(features, s.spec, s.target->target.precision, partial, {.byte_factor = 1.0});
    if (p.status != "ok" || p.p50_ms <= 0) continue;
    const double measured = s.target->latency.p50;
    const double error = std::log(measured / p.p50_ms);
    if (s.family == "cpu") cal.model_log_errors.push_back(error);
    cal.loo_rows.push_back({{"target", s.label.empty() ? s.target->target.ToString() : s.label},
                            {"family", s.family},
                            {"projected_ms", p.p50_ms},
                            {"measured_ms", measured},
                            {"error", measured / p.p50_ms - 1}});
    // Layer errors: matched by name, the projection's layers are the target's own.
    std::map<std::string, double> measured_layers;
    for (const auto& l : s.target->layers) measured_layers[l.name] = l.time_p50_ms;
    if (s.family != "cpu") continue;
    for (const auto& l : p.layers) {
      auto it = measured_layers.find(l.name);
      if (it != measured_layers.end() && it->second > 0 && l.time_ms > 0) {
        cal.layer_log_errors.push_back(std::log(it->second / l.time_ms));
      }
    }
  }
  if (cal.model_log_errors.size() < 2) {
    cal.notes.push_back(
        "fewer than two local CPU targets to leave out: the band is chipfit's prior spread (×/÷ 1.5), not measured");
  }
  return cal;
}

std::pair<double, double> BandFactors(const std::vector<double>& log_errors, double floor) {
  double lo = -std::log(1.5), hi = std::log(1.5);  // the prior spread without measurements
  if (log_errors.size() >= 2) {
    lo = Quantile(log_errors, 0.10);
    hi = Quantile(log_errors, 0.90);
  }
  lo = std::min(lo, -floor);
  hi = std::max(hi, floor);
  return {std::exp(lo), std::exp(hi)};
}

Projection Project(const std::vector<LayerFeature>& features, const HardwareSpec& spec, Precision precision,
                   const Calibration& calibration, const ProjectOptions& options) {
  Projection out;
  out.hardware = spec.id;
  out.hardware_name = spec.name;
  out.kind = spec.kind;
  out.precision = precision;
  out.target = spec.id + ":" + std::string(PrecisionName(precision));
  if (!spec.Supports(precision)) {
    out.status = "unsupported";
    out.reason = fmt::format("{} has no {} (the catalog lists no dense {} peak for it)", spec.name,
                             PrecisionName(precision), PrecisionName(precision));
    return out;
  }
  const double need_gb = options.model_bytes * ByteFactor(precision, OpClass::kMatrix) / 1e9;
  if (spec.memory_gb > 0 && need_gb > spec.memory_gb) {
    out.status = "unsupported";
    out.reason = fmt::format("the model needs {:.2f} GB at {} and {} has {:.1f} GB", need_gb, PrecisionName(precision),
                             spec.name, spec.memory_gb);
    return out;
  }
  const bool calibrated = options.model == ProjectionModel::kCalibrated;
  const double fixed_eta = options.model == ProjectionModel::kFixed70 ? 0.7 : 1.0;
  const KindEfficiency* learned = nullptr;
  if (calibrated && !options.local_software && calibration.published) {
    auto it = calibration.published->kinds.find(spec.kind);
    if (it != calibration.published->kinds.end()) learned = &it->second;
  }
  const double overhead = !calibrated          ? 0.0
                          : learned != nullptr ? PriorOverheadMs(spec.launch_overhead) * learned->layer_overhead_factor
                          : spec.launch_overhead == "cpu" && calibration.cpu_overhead_ms
                              ? *calibration.cpu_overhead_ms
                              : PriorOverheadMs(spec.launch_overhead);
  const bool cross_kind = spec.kind != "cpu";
  // The baselines are the plain roofline at the precision asked; the model lets every layer take the
  // fastest precision the runtime may choose for it.
  const std::vector<Precision> allowed =
      calibrated ? AllowedPrecisions(spec, precision) : std::vector<Precision>{precision};
  auto [layer_lo, layer_hi] = BandFactors(calibration.layer_log_errors, 0.10);
  double roof_ms = 0;
  const LayerModel model{spec, calibration, learned, options, calibrated, fixed_eta};
  double busy_ms = 0;  // every unit busy with concurrent requests: the throughput
  for (const LayerFeature& f : features) {
    if (learned != nullptr && ElidedByCompiledRuntime(f.op)) {
      // A view, an in-place concatenation or one of chipfit's own reorders: the runtime assumed does
      // not run it.
      out.layers.push_back({.name = f.name, .op = f.op, .op_class = OpClassName(f.op_class), .bound = "elided"});
      continue;
    }
    LayerChoice best;
    for (Precision q : allowed) {
      LayerChoice c = model.Body(f, q, /*all_units_busy=*/false);
      if (best.body < 0 || c.body < best.body) best = std::move(c);
    }
    double busy_body = -1;
    for (Precision q : allowed) {
      const double b = model.Body(f, q, /*all_units_busy=*/true).body;
      busy_body = busy_body < 0 ? b : std::min(busy_body, b);
    }
    busy_ms += (overhead + busy_body) * f.iterations;
    const double best_body = best.body, best_roof = best.roof;
    ProjectedLayer& l = best.layer;
    l.name = f.name;
    l.op = f.op;
    l.op_class = OpClassName(f.op_class);
    l.time_ms = (overhead + best_body) * f.iterations;
    l.bound = overhead > best_body ? "overhead" : l.compute_ms >= l.memory_ms ? "compute" : "memory";
    l.p10_ms = l.time_ms * layer_lo;
    l.p90_ms = l.time_ms * layer_hi;
    roof_ms += best_roof * f.iterations;
    out.p50_ms += l.time_ms;
    out.layers.push_back(std::move(l));
  }
  auto [lo, hi] = BandFactors(calibration.model_log_errors, 0.05);
  if (learned != nullptr) out.p50_ms += learned->inference_overhead_ms;
  const std::optional<double> ceiling =
      calibrated && !options.local_software ? CapAtLocalCpu(spec, allowed, calibration, out) : std::nullopt;
  if (learned != nullptr) {
    out.runtime = learned->runtime;
    std::tie(lo, hi) = PublishedBand(learned->lodo_log_errors);
    if (!learned->lodo_log_errors.empty()) {
      std::vector<double> abs_errors;
      // As a factor: projected twice or half the measurement are both 100 % off.
      for (double e : learned->lodo_log_errors) abs_errors.push_back(std::exp(std::abs(e)) - 1);
      out.validated_error = Median(abs_errors);
      out.validated_rows = static_cast<int>(abs_errors.size());
    }
    out.notes.push_back(fmt::format(
        "as {} would run it: η learned from {} published measurements on {} {} device(s) ({}){}", learned->runtime,
        learned->rows, learned->devices.size(), spec.kind, fmt::join(learned->devices, ", "),
        out.validated_error ? fmt::format("; leave-one-device-out median |error| {:.0f} % over {} rows",
                                          *out.validated_error * 100, out.validated_rows)
                            : std::string()));
  } else if (cross_kind && calibrated) {
    // Calibrated on CPUs only: the band adds the prior's spread for another kind of device.
    lo *= 1 / 1.5;
    hi *= 1.5;
    out.notes.push_back(fmt::format(
        "{} is a {}: η from chipfit's priors for it, corrected by this machine's CPU calibration; the band adds "
        "×/÷ 1.5 for the transfer between kinds of device",
        spec.name, spec.kind));
  }
  out.p10_ms = out.p50_ms * lo;
  out.p90_ms = ceiling ? std::min(out.p50_ms * hi, std::max(*ceiling, out.p50_ms)) : out.p50_ms * hi;
  if (learned != nullptr) busy_ms += learned->inference_overhead_ms;
  // Throughput with concurrent requests keeping every unit busy (a server's throughput mode, MLPerf
  // Offline): never below one request at a time.
  out.throughput_per_s = busy_ms > 0 && out.p50_ms > 0 ? std::max(1000.0 / busy_ms, 1000.0 / out.p50_ms) : 0;
  out.utilisation = out.p50_ms > 0 ? std::clamp(roof_ms / out.p50_ms, 0.0, 1.0) : 0;
  out.energy_j = out.p50_ms / 1000.0 * (spec.idle_w + (spec.tdp_w - spec.idle_w) * out.utilisation);
  out.price_per_hour_usd = spec.price_per_hour_usd;
  if (spec.price_per_hour_usd) {
    out.cost_per_million = *spec.price_per_hour_usd * out.p50_ms / 1000.0 / 3600.0 * 1e6;
  }
  return out;
}

std::optional<double> KendallTau(const std::vector<double>& a, const std::vector<double>& b) {
  const size_t n = std::min(a.size(), b.size());
  if (n < 2) return std::nullopt;
  double concordant = 0, discordant = 0, ties_a = 0, ties_b = 0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      const double da = a[i] - a[j], db = b[i] - b[j];
      if (da == 0 && db == 0) continue;
      if (da == 0) {
        ties_a += 1;
      } else if (db == 0) {
        ties_b += 1;
      } else if ((da > 0) == (db > 0)) {
        concordant += 1;
      } else {
        discordant += 1;
      }
    }
  }
  const double denom = std::sqrt((concordant + discordant + ties_a) * (concordant + discordant + ties_b));
  if (denom == 0) return std::nullopt;
  return (concordant - discordant) / denom;
}

nlohmann::json ProjectionToJson(const Projection& p, bool with_layers) {
  auto opt = [](double v, bool ok) { return ok ? nlohmann::json(v) : nlohmann::json(nullptr); };
  const bool ok = p.status == "ok";
  nlohmann::json j = {
      {"hardware", p.hardware},
      {"hardware_name", p.hardware_name},
      {"kind", p.kind},
      {"target", p.target},
      {"precision", std::string(PrecisionName(p.precision))},
      {"status", p.status},
      {"reason", p.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.reason)},
      {"projected", true},
      {"p50_ms", opt(p.p50_ms, ok)},
      {"p10_ms", opt(p.p10_ms, ok)},
      {"p90_ms", opt(p.p90_ms, ok)},
      {"throughput_per_s", opt(p.throughput_per_s, ok)},
      {"energy_j", ok ? nlohmann::json{{"value", p.energy_j}, {"source", "estimated"}} : nlohmann::json(nullptr)},
      {"utilisation", opt(p.utilisation, ok)},
      {"price_per_hour_usd", p.price_per_hour_usd ? nlohmann::json(*p.price_per_hour_usd) : nlohmann::json(nullptr)},
      {"cost_per_million", p.cost_per_million && ok ? nlohmann::json(*p.cost_per_million) : nlohmann::json(nullptr)},
      {"runtime", p.runtime.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.runtime)},
      {"validated_error", p.validated_error ? nlohmann::json(*p.validated_error) : nlohmann::json(nullptr)},
      {"validated_rows", p.validated_rows},
      {"notes", p.notes}};
  if (with_layers && ok) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : p.layers) {
      layers.push_back({{"name", l.name},
                        {"op", l.op},
                        {"class", l.op_class},
                        {"time_ms", l.time_ms},
                        {"p10_ms", l.p10_ms},
                        {"p90_ms", l.p90_ms},
                        {"compute_ms", l.compute_ms},
                        {"memory_ms", l.memory_ms},
                        {"bound", l.bound},
                        {"eta", l.eta}});
    }
    j["layers"] = std::move(layers);
  }
  return j;
}

nlohmann::json CalibrationToJson(const Calibration& cal) {
  nlohmann::json cells = nlohmann::json::array();
  auto add = [&](const std::map<EtaCell, double>& table, const char* which) {
    for (const auto& [cell, eta] : table) {
      cells.push_back(
          {{"class", OpClassName(cell.op_class)},
           {"precision_group", cell.group},
           {"size", cell.size},
           {"roof", which},
           {"eta", eta},
           {"prior", which == std::string("compute") ? PriorEta("cpu", cell).first : PriorEta("cpu", cell).second}});
    }
  };
  add(cal.eta_c, "compute");
  add(cal.eta_m, "memory");
  auto [lo, hi] = BandFactors(cal.model_log_errors, 0.05);
  std::vector<double> abs_errors;
  for (double e : cal.model_log_errors) abs_errors.push_back(std::abs(std::exp(e) - 1));
  return {{"calibrated_on", cal.calibrated_on},
          {"cells", cells},
          {"cpu_overhead_ms", cal.cpu_overhead_ms ? nlohmann::json(*cal.cpu_overhead_ms) : nlohmann::json(nullptr)},
          {"leave_one_out", cal.loo_rows},
          {"local_median_abs_error", abs_errors.empty() ? nlohmann::json(nullptr) : nlohmann::json(Median(abs_errors))},
          {"band_factors", {lo, hi}},
          {"published_efficiency", cal.published ? nlohmann::json(cal.published->fitted_on) : nlohmann::json(nullptr)},
          {"notes", cal.notes}};
}

nlohmann::json PublishedEfficiencyToJson(const PublishedEfficiency& e) {
  nlohmann::json kinds = nlohmann::json::object();
  for (const auto& [kind, k] : e.kinds) {
    kinds[kind] = {{"runtime", k.runtime},
                   {"matrix", k.matrix},
                   {"depthwise", k.depthwise},
                   {"memory", k.memory},
                   {"layer_overhead_factor", k.layer_overhead_factor},
                   {"inference_overhead_ms", k.inference_overhead_ms},
                   {"rows", k.rows},
                   {"devices", k.devices},
                   {"lodo_log_errors", k.lodo_log_errors}};
  }
  return {{"schema", "chipfit.efficiency/1"}, {"fitted_on", e.fitted_on}, {"kinds", kinds}};
}

Result<PublishedEfficiency> PublishedEfficiencyFromJson(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object() || j.value("schema", std::string()) != "chipfit.efficiency/1" || !j.contains("kinds") ||
      !j["kinds"].is_object()) {
    return InvalidArgument(file + ": not a chipfit.efficiency/1 document");
  }
  PublishedEfficiency e;
  e.fitted_on = j.value("fitted_on", std::string());
  try {
    for (const auto& [kind, k] : j["kinds"].items()) {
      KindEfficiency ke;
      ke.runtime = k.at("runtime").get<std::string>();
      for (const auto& group : {"fp32", "half", "int8"}) ke.matrix[group] = k.at("matrix").at(group).get<double>();
      ke.depthwise = k.at("depthwise").get<double>();
      ke.memory = k.at("memory").get<double>();
      ke.layer_overhead_factor = k.at("layer_overhead_factor").get<double>();
      ke.inference_overhead_ms = k.at("inference_overhead_ms").get<double>();
      ke.rows = k.at("rows").get<int>();
      ke.devices = k.at("devices").get<std::vector<std::string>>();
      ke.lodo_log_errors = k.at("lodo_log_errors").get<std::vector<double>>();
      for (double v : {ke.matrix["fp32"], ke.matrix["half"], ke.matrix["int8"], ke.depthwise, ke.memory}) {
        if (!(v > 0) || !std::isfinite(v))
          return InvalidArgument(fmt::format("{}: kind {}: a factor is not positive", file, kind));
      }
      e.kinds[kind] = std::move(ke);
    }
  } catch (const nlohmann::json::exception& ex) {
    return InvalidArgument(fmt::format("{}: {}", file, ex.what()));
  }
  return e;
}

}  // namespace chipfit
