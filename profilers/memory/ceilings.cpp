// Ceilings micro-benchmarks, theoretical peaks and the ceilings cache.
#include "profilers/memory/ceilings.h"

#include <fmt/format.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <limits>
#include <utility>

#include "core/tensor/random.h"

namespace chipfit {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// Device time of the kernels that compute `node` (copies to and from the device excluded).
class NodeTimer final : public RunObserver {
 public:
  explicit NodeTimer(std::string node) : node_(std::move(node)) {}
  void KernelEnd(size_t, const KernelInfo& k, double elapsed_ms) override {
    if (k.op_type == "Copy") return;
    if (std::find(k.onnx_nodes.begin(), k.onnx_nodes.end(), node_) == k.onnx_nodes.end()) return;
    ms_ += elapsed_ms;
    kernel_ = k;
  }
  double TakeMs() { return std::exchange(ms_, 0.0); }
  const KernelInfo& kernel() const { return kernel_; }

 private:
  std::string node_;
  double ms_ = 0;
  KernelInfo kernel_;
};

struct NodeTiming {
  double best_ms = 0;
  KernelInfo kernel;  // the (last) kernel that computed the node: implementation and precision
};

// Runs `model` until both limits are met and returns the best (smallest) device time of `node`.
Result<NodeTiming> BestNodeMs(CompiledModel& model, const std::map<std::string, Tensor>& inputs,
                              const std::string& node, const CeilingOptions& options) {
  NodeTimer timer(node);
  RETURN_IF_ERROR(model.Run(inputs, nullptr, options.stop).status());  // warm-up: first-touch, JIT, caches
  double best = std::numeric_limits<double>::infinity();
  const auto t0 = Clock::now();
  for (int run = 0; run < options.min_runs || SecondsSince(t0) < options.min_time_s; ++run) {
    if (options.stop.stop_requested()) return Cancelled("measuring ceilings cancelled");
    RETURN_IF_ERROR(model.Run(inputs, &timer, options.stop).status());
    const double ms = timer.TakeMs();
    if (ms > 0) best = std::min(best, ms);
  }
  if (!std::isfinite(best)) return Internal("no kernel of node '" + node + "' reported a time");
  return NodeTiming{best, timer.kernel()};
}

ValueDesc MatrixDesc(const std::string& name, const Shape& shape) {
  return ValueDesc{.name = name,
                   .dtype = DType::kF32,
                   .has_shape = true,
                   .shape = shape,
                   .dim_params = std::vector<std::string>(shape.size())};
}

// Y = A op B with A an input and B a constant of `b_shape`.
Graph BinaryGraph(const std::string& op, const Shape& a_shape, const Shape& b_shape, const Shape& y_shape) {
  Graph g;
  g.name = "ceiling_" + op;
  g.opset = 17;
  g.inputs = {MatrixDesc("A", a_shape)};
  g.outputs = {MatrixDesc("Y", y_shape)};
  g.initializers["B"] = SeededTensor(DType::kF32, b_shape, 7);
  Node node;
  node.name = "ceiling";
  node.op_type = op;
  node.inputs = {"A", "B"};
  node.outputs = {"Y"};
  g.nodes.push_back(std::move(node));
  return g;
}

bool Has(const DeviceInfo& d, std::string_view feature) {
  return std::find(d.features.begin(), d.features.end(), feature) != d.features.end();
}

// "cpu family" from /proc/cpuinfo (x86), or -1.
int CpuFamily(const std::filesystem::path& root) {
  std::ifstream in(root / "proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("cpu family")) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return std::atoi(line.c_str() + colon + 1);
    }
  }
  return -1;
}

nlohmann::json GflopsJson(const std::map<Precision, double>& by_precision) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [precision, gflops] : by_precision) j[std::string(PrecisionName(precision))] = gflops;
  return j;
}

Result<std::map<Precision, double>> GflopsFromJson(const nlohmann::json& j) {
  std::map<Precision, double> out;
  if (!j.is_object()) return out;
  for (const auto& [name, value] : j.items()) {
    auto precision = ParsePrecision(name);
    if (!precision || !value.is_number()) return ParseError("unknown precision or non-number '" + name + "'");
    out[*precision] = value.get<double>();
  }
  return out;
}

}  // namespace

double MeasureStreamTriadGbps(int64_t bytes_per_array, int runs) {
  const int64_t n = std::max<int64_t>(1, bytes_per_array / static_cast<int64_t>(sizeof(double)));
  // Uninitialised, then first-touched by the threads that will stream them (NUMA placement).
  std::unique_ptr<double[]> a(new double[static_cast<size_t>(n)]);
  std::unique_ptr<double[]> b(new double[static_cast<size_t>(n)]);
  std::unique_ptr<double[]> c(new double[static_cast<size_t>(n)]);
  double* pa = a.get();
  double* pb = b.get();
  double* pc = c.get();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    pa[i] = 0.0;
    pb[i] = 1.0;
    pc[i] = 2.0;
  }
  const double scalar = 3.0;
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < std::max(1, runs); ++r) {
    const auto t0 = Clock::now();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) pa[i] = pb[i] + scalar * pc[i];
    best = std::min(best, SecondsSince(t0));
  }
  // Read the result so the stores cannot be dropped.
  volatile double sink = pa[n / 2];
  (void)sink;
  return 24.0 * static_cast<double>(n) / best / 1e9;
}

Result<KernelRate> MeasureGemmGflops(const GraphCompiler& compile, const Target& target, int64_t size,
                                     const CeilingOptions& options) {
  const Graph graph = BinaryGraph("MatMul", {size, size}, {size, size}, {size, size});
  auto model = compile(graph, target);
  if (!model.ok()) return model.status();
  const std::map<std::string, Tensor> inputs = {{"A", SeededTensor(DType::kF32, {size, size}, 3)}};
  auto timing = BestNodeMs(**model, inputs, "ceiling", options);
  if (!timing.ok()) return timing.status();
  const KernelInfo& k = timing->kernel;
  if (k.precision != PrecisionName(target.precision)) {
    return Unsupported(fmt::format("{} runs a {}³ MatMul in {} ({}{}), so it has no {} peak of its own",
                                   target.ToString(), size, k.precision, k.implementation,
                                   k.precision_reason.empty() ? "" : ": " + k.precision_reason,
                                   PrecisionName(target.precision)));
  }
  const double flops = 2.0 * static_cast<double>(size) * static_cast<double>(size) * static_cast<double>(size);
  return KernelRate{flops / (timing->best_ms * 1e6), k.implementation, k.precision};
}

Result<KernelRate> MeasureDeviceStreamGbps(const GraphCompiler& compile, const Target& target, int64_t elements,
                                           const CeilingOptions& options) {
  const Graph graph = BinaryGraph("Add", {elements}, {elements}, {elements});
  auto model = compile(graph, target);
  if (!model.ok()) return model.status();
  const std::map<std::string, Tensor> inputs = {{"A", SeededTensor(DType::kF32, {elements}, 3)}};
  auto timing = BestNodeMs(**model, inputs, "ceiling", options);
  if (!timing.ok()) return timing.status();
  const double element_bytes = target.precision == Precision::kFp16 || target.precision == Precision::kBf16 ? 2 : 4;
  return KernelRate{3.0 * element_bytes * static_cast<double>(elements) / (timing->best_ms * 1e6),
                    timing->kernel.implementation, timing->kernel.precision};
}

std::optional<double> CpuClockGhz(const std::filesystem::path& root, std::string* source) {
  {
    std::ifstream in(root / "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
    double khz = 0;
    if (in >> khz && khz > 0) {
      if (source) *source = "cpufreq cpuinfo_max_freq";
      return khz / 1e6;
    }
  }
  std::ifstream in(root / "proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("cpu MHz")) {
      const auto colon = line.find(':');
      const double mhz = colon == std::string::npos ? 0 : std::atof(line.c_str() + colon + 1);
      if (mhz > 0) {
        if (source) *source = "/proc/cpuinfo \"cpu MHz\" (the clock the OS reports, not necessarily the boost clock)";
        return mhz / 1e3;
      }
    }
  }
  return std::nullopt;
}

std::map<Precision, double> TheoreticalPeakGflops(const DeviceInfo& device, std::vector<std::string>* notes) {
  std::map<Precision, double> peak;
  auto note = [&](std::string line) {
    if (notes) notes->push_back(std::move(line));
  };
  if (device.kind != DeviceKind::kCpu) {
    note("theoretical peak: chipfit has no FLOP-per-cycle figure for " + device.name + "; measured ceilings only");
    return peak;
  }
  std::string clock_source;
  const auto ghz = CpuClockGhz("/", &clock_source);
  if (!ghz || device.compute_units <= 0) {
    note("theoretical peak: unknown (no CPU clock or core count readable)");
    return peak;
  }
  // SIMD width of one FMA pipe; two FMA pipes per core assumed (true of recent Intel server cores
  // and AMD Zen 2-5; some Xeon Silver/Bronze parts have one 512-bit pipe).
  int width = Has(device, "avx512f") ? 512 : Has(device, "avx2") || Has(device, "fma3") ? 256 : 128;
  std::string width_note;
  if (width == 512 && device.vendor == "AMD" && CpuFamily("/") == 25) {
    width = 256;  // Zen 4 executes AVX-512 on 256-bit pipes
    width_note = " (Zen 4: AVX-512 on 256-bit pipes)";
  }
  const double fp32_per_cycle = 2.0 * (width / 32.0) * 2.0;  // 2 pipes × lanes × (multiply + add)
  const double cycles = device.compute_units * *ghz * 1.0;   // Gcycles/s over all cores
  peak[Precision::kFp32] = cycles * fp32_per_cycle;
  std::string bf16_how = "none", int8_how = "none";
  if (Has(device, "amx_bf16")) {
    peak[Precision::kBf16] = cycles * 1024;
    bf16_how = "AMX 1024/cycle";
  } else if (Has(device, "avx512_bf16")) {
    peak[Precision::kBf16] = cycles * fp32_per_cycle * 2;  // vdpbf16ps: two products per fp32 lane
    bf16_how = "avx512_bf16 2x fp32";
  }
  if (Has(device, "amx_int8")) {
    peak[Precision::kInt8] = cycles * 2048;
    int8_how = "AMX 2048/cycle";
  } else if (Has(device, "avx512_vnni") || Has(device, "avx_vnni")) {
    peak[Precision::kInt8] = cycles * fp32_per_cycle * 4;  // vpdpbusd: four u8·s8 products per 32-bit lane
    int8_how = "VNNI 4x fp32";
  } else if (Has(device, "avx2")) {
    peak[Precision::kInt8] = cycles * fp32_per_cycle * 2;  // vpmaddubsw + vpmaddwd, roughly twice fp32
    int8_how = "AVX2 u8·s8 about 2x fp32";
  }
  note(
      fmt::format("theoretical peak (an estimate): {} cores × {:.2f} GHz ({}) × {:.0f} fp32 FLOP/cycle "
                  "(2 FMA pipes of {} bits{}); bf16: {}; int8: {}",
                  device.compute_units, *ghz, clock_source, fp32_per_cycle, width, width_note, bf16_how, int8_how));
  return peak;
}

std::string CeilingKey(const DeviceInfo& device) {
  // The core count is part of it: the theoretical peak is computed with it when measuring.
  return device.Id() + "|" + device.name + "|" + device.driver_version + "|" + device.runtime_version + "|" +
         std::to_string(device.compute_units) + " units";
}

Result<CeilingReport> MeasureCeilings(const DeviceInfo& device, const GraphCompiler& compile,
                                      const CeilingOptions& options) {
  if (device.kind == DeviceKind::kReference) return Unsupported("the reference kernels have no ceilings to measure");
  CeilingReport report;
  report.device_id = device.Id();
  report.device_key = CeilingKey(device);
  report.measured_at = UtcNow();
  report.theoretical_gflops = TheoreticalPeakGflops(device, &report.notes);
  report.notes.push_back(
      "theoretical memory bandwidth: unknown (needs the DIMM speed and channel count, which Linux shows only to "
      "root through dmidecode)");
  const bool cpu = device.kind == DeviceKind::kCpu;
  if (cpu) {
    const auto t0 = Clock::now();
    int runs = 0;
    double best = 0;
    while (runs < std::max(options.min_runs, 5) || SecondsSince(t0) < options.min_time_s) {
      if (options.stop.stop_requested()) return Cancelled("measuring ceilings cancelled");
      best = std::max(best, MeasureStreamTriadGbps(options.triad_bytes_per_array, 1));
      ++runs;
    }
    report.measured.memory_bandwidth_gbps = best;
    report.methods.push_back(
        fmt::format("memory bandwidth: STREAM triad over 3 x {} MiB doubles, {} OpenMP threads, "
                    "24 bytes/element, best of {} runs",
                    options.triad_bytes_per_array >> 20, omp_get_max_threads(), runs));
  } else {
    const Target target{device.kind, device.index, Precision::kFp32};
    auto gbps = MeasureDeviceStreamGbps(compile, target, options.device_stream_elements, options);
    if (gbps.ok()) {
      report.measured.memory_bandwidth_gbps = gbps->rate;
      report.methods.push_back(
          fmt::format("memory bandwidth: chipfit's Add kernel ({}) on {} over 3 x {} MiB fp32 "
                      "arrays resident on the device, device timer, best run",
                      gbps->implementation, device.Id(), options.device_stream_elements * 4 >> 20));
    } else if (gbps.status().code() == StatusCode::kCancelled) {
      return gbps.status();
    } else {
      report.notes.push_back("memory bandwidth not measured: " + gbps.status().message());
    }
  }
  const int64_t size = cpu ? options.cpu_gemm_size : options.device_gemm_size;
  for (const PrecisionSupport& p : device.precisions) {
    if (!p.support.ok) continue;
    const Target target{device.kind, device.index, p.precision};
    auto gflops = MeasureGemmGflops(compile, target, size, options);
    if (gflops.ok()) {
      report.measured.peak_gflops[p.precision] = gflops->rate;
      report.methods.push_back(
          fmt::format("{} peak: {}³ MatMul compiled for {}, device time of its kernel ({}), "
                      "best run",
                      PrecisionName(p.precision), size, target.ToString(), gflops->implementation));
      const auto theory = report.theoretical_gflops.find(p.precision);
      if (theory != report.theoretical_gflops.end() && gflops->rate > theory->second * 1.02) {
        report.notes.push_back(
            fmt::format("{}: measured {:.0f} GFLOP/s is above the estimated peak {:.0f}: the "
                        "clock the OS reports is below the clock the cores ran at",
                        PrecisionName(p.precision), gflops->rate, theory->second));
      }
    } else if (gflops.status().code() == StatusCode::kCancelled) {
      return gflops.status();
    } else {
      report.notes.push_back(
          fmt::format("{} peak not measured: {}", PrecisionName(p.precision), gflops.status().message()));
    }
  }
  return report;
}

std::filesystem::path DefaultCeilingCachePath() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::filesystem::path(xdg) / "chipfit" / "ceilings.json";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::filesystem::path(home) / ".cache" / "chipfit" / "ceilings.json";
  }
  return {};
}

nlohmann::json CeilingReportToJson(const CeilingReport& r) {
  return {{"device", r.device_id},
          {"key", r.device_key},
          {"measured_at", r.measured_at},
          {"measured",
           {{"peak_gflops", GflopsJson(r.measured.peak_gflops)},
            {"memory_bandwidth_gbps", r.measured.memory_bandwidth_gbps > 0
                                          ? nlohmann::json(r.measured.memory_bandwidth_gbps)
                                          : nlohmann::json(nullptr)}}},
          {"theoretical",
           {{"peak_gflops", GflopsJson(r.theoretical_gflops)},
            {"memory_bandwidth_gbps",
             r.theoretical_bandwidth_gbps ? nlohmann::json(*r.theoretical_bandwidth_gbps) : nlohmann::json(nullptr)}}},
          {"methods", r.methods},
          {"notes", r.notes}};
}

Result<CeilingReport> CeilingReportFromJson(const nlohmann::json& j) {
  try {
    CeilingReport r;
    r.device_id = j.at("device").get<std::string>();
    r.device_key = j.at("key").get<std::string>();
    r.measured_at = j.at("measured_at").get<std::string>();
    const auto& measured = j.at("measured");
    auto peak = GflopsFromJson(measured.at("peak_gflops"));
    if (!peak.ok()) return peak.status();
    r.measured.peak_gflops = *peak;
    if (measured.at("memory_bandwidth_gbps").is_number()) {
      r.measured.memory_bandwidth_gbps = measured["memory_bandwidth_gbps"].get<double>();
    }
    const auto& theory = j.at("theoretical");
    auto theory_peak = GflopsFromJson(theory.at("peak_gflops"));
    if (!theory_peak.ok()) return theory_peak.status();
    r.theoretical_gflops = *theory_peak;
    if (theory.at("memory_bandwidth_gbps").is_number()) {
      r.theoretical_bandwidth_gbps = theory["memory_bandwidth_gbps"].get<double>();
    }
    r.methods = j.value("methods", std::vector<std::string>{});
    r.notes = j.value("notes", std::vector<std::string>{});
    return r;
  } catch (const nlohmann::json::exception& e) {
    return ParseError(std::string("ceilings entry: ") + e.what());
  }
}

Result<std::map<std::string, CeilingReport>> LoadCeilingCache(const std::filesystem::path& path) {
  std::map<std::string, CeilingReport> entries;
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) return entries;
  std::ifstream in(path);
  if (!in) return IoError("cannot read the ceilings cache '" + path.string() + "'");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || j.value("schema", "") != "chipfit.ceilings/1" || !j.contains("devices") ||
      !j["devices"].is_object()) {
    return ParseError("'" + path.string() +
                      "' is not a chipfit ceilings cache (schema chipfit.ceilings/1); move it away and run "
                      "`chipfit devices --measure`");
  }
  for (const auto& [key, value] : j["devices"].items()) {
    auto report = CeilingReportFromJson(value);
    if (!report.ok()) return ParseError("'" + path.string() + "': " + report.status().message());
    entries[key] = std::move(report).value();
  }
  return entries;
}

Status SaveCeilingReport(const std::filesystem::path& path, const CeilingReport& report) {
  if (path.empty()) return IoError("no cache folder: neither XDG_CACHE_HOME nor HOME is set");
  auto entries = LoadCeilingCache(path);
  if (!entries.ok()) return entries.status();
  (*entries)[report.device_key] = report;
  nlohmann::json devices = nlohmann::json::object();
  for (const auto& [key, r] : *entries) devices[key] = CeilingReportToJson(r);
  const nlohmann::json out = {{"schema", "chipfit.ceilings/1"}, {"devices", devices}};
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  const std::filesystem::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream file(tmp);
    file << out.dump(2) << "\n";
    if (!file) return IoError("cannot write '" + tmp.string() + "'");
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return IoError("cannot replace '" + path.string() + "': " + ec.message());
  return Status();
}

}  // namespace chipfit
