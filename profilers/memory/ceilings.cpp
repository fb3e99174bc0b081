// Ceilings micro-benchmarks, theoretical peaks and the ceilings cache.
#include "profilers/memory/ceilings.h"

#include <fmt/format.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <limits>
#include <utility>

#include "core/tensor/random.h"
#include "profilers/latency/latency_stats.h"

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

// The CPU model table. Every figure comes from the vendor's public spec page named beside it; a
// processor or figure chipfit is not sure of is left out (then the datapath is assumed from the ISA
// and the clock is the OS's). The first entry that matches wins.
struct MicroarchEntry {
  const char* vendor_id;   // /proc/cpuinfo "vendor_id"
  int family;              // "cpu family"
  int model_lo, model_hi;  // "model", inclusive
  const char* name_has;    // text "model name" must contain ("" = any)
  const char* microarch;
  int fma_pipes, fma_bits;  // the FMA datapath of one core
  const char* datapath_note;
  double max_boost_ghz;  // the family's highest boost clock (an upper bound for any SKU); 0 = none
  const char* clock_of;  // the SKU that clock belongs to
};

constexpr MicroarchEntry kMicroarchs[] = {
    // AMD family 23: Zen and Zen+ split 256-bit AVX2 into two 128-bit halves (AMD Zen software
    // optimization guide); Zen 2 has two 256-bit FMA pipes. No clocks: the families span too much.
    {"AuthenticAMD", 23, 0x00, 0x2f, "", "Zen / Zen+", 2, 128, "AVX2 executed on 128-bit units", 0, ""},
    {"AuthenticAMD", 23, 0x30, 0xff, "", "Zen 2", 2, 256, "", 0, ""},  // AMD Zen 2 software optimization guide
    // Zen 3, EPYC 7003 (Milan): highest boost of the series 4.1 GHz, EPYC 72F3 (AMD EPYC 72F3
    // product page); other Zen 3 parts of these models (Threadripper PRO 5000 WX) get no clock.
    {"AuthenticAMD", 25, 0x00, 0x0f, "EPYC", "Zen 3 (EPYC 7003 Milan)", 2, 256, "", 4.1, "EPYC 72F3"},
    // Zen 4, EPYC 9004 (Genoa): highest boost of the series 4.4 GHz, EPYC 9174F (AMD EPYC 9174F
    // product page). Zen 4 executes AVX-512 on 256-bit units (AMD Zen 4 software optimization guide).
    {"AuthenticAMD", 25, 0x10, 0x1f, "EPYC", "Zen 4 (EPYC 9004 Genoa)", 2, 256, "AVX-512 executed on 256-bit units",
     4.4, "EPYC 9174F"},
    // Zen 4 client, Ryzen 7000 / 8000 and EPYC 4004: highest boost 5.7 GHz, Ryzen 9 7950X (AMD
    // Ryzen 9 7950X product page).
    {"AuthenticAMD", 25, 0x60, 0x7f, "", "Zen 4 (client: Ryzen 7000/8000)", 2, 256, "AVX-512 executed on 256-bit units",
     5.7, "Ryzen 9 7950X"},
    // Any other family 25 part (Zen 3 client, Threadripper, Zen 4c): two 256-bit FMA pipes, no clock.
    {"AuthenticAMD", 25, 0x00, 0xff, "", "Zen 3 / Zen 4 (family 25)", 2, 256,
     "AVX-512, where present, on 256-bit units", 0, ""},
    // Zen 5, EPYC 9005 (Turin): full 512-bit datapath; highest boost of the series 5.0 GHz, EPYC
    // 9575F (AMD EPYC 9575F product page).
    {"AuthenticAMD", 26, 0x00, 0x1f, "EPYC", "Zen 5 (EPYC 9005 Turin)", 2, 512, "full 512-bit datapath", 5.0,
     "EPYC 9575F"},
    {"AuthenticAMD", 26, 0x00, 0xff, "", "Zen 5 (family 26)", 2, 512,
     "full 512-bit datapath as on the server and desktop parts; mobile Zen 5 runs AVX-512 on 256-bit units, half this",
     0, ""},
    // Intel Xeon Scalable: two 512-bit FMA units per core on Platinum and Gold 6xxx (and Gold
    // 5122/5222), one on Silver, Bronze and the other Gold 5xxx (Intel ARK, "# of AVX-512 FMA Units").
    // Intel publishes turbo clocks per SKU only: see kSkus.
    {"GenuineIntel", 6, 85, 85, "Gold 5122", "Skylake-SP", 2, 512, "", 0, ""},
    {"GenuineIntel", 6, 85, 85, "Gold 5222", "Cascade Lake-SP", 2, 512, "", 0, ""},
    {"GenuineIntel", 6, 85, 85, "Gold 5", "Skylake-SP / Cascade Lake-SP", 1, 512, "one AVX-512 FMA unit on Gold 5xxx",
     0, ""},
    {"GenuineIntel", 6, 85, 85, "Silver", "Skylake-SP / Cascade Lake-SP", 1, 512, "one AVX-512 FMA unit on Silver", 0,
     ""},
    {"GenuineIntel", 6, 85, 85, "Bronze", "Skylake-SP / Cascade Lake-SP", 1, 512, "one AVX-512 FMA unit on Bronze", 0,
     ""},
    {"GenuineIntel", 6, 85, 85, "", "Skylake-SP / Cascade Lake-SP", 2, 512,
     "two AVX-512 FMA units as on Platinum and Gold 6xxx", 0, ""},
    // Ice Lake-SP and later Xeon Scalable: two AVX-512 FMA units (Intel ARK, "# of AVX-512 FMA Units" of
    // their Gold and Platinum SKUs); AMX from Sapphire Rapids on comes from the amx_* CPU flags.
    {"GenuineIntel", 6, 106, 106, "", "Ice Lake-SP", 2, 512, "", 0, ""},
    {"GenuineIntel", 6, 143, 143, "", "Sapphire Rapids", 2, 512, "", 0, ""},
    {"GenuineIntel", 6, 207, 207, "", "Emerald Rapids", 2, 512, "", 0, ""},
    {"GenuineIntel", 6, 173, 173, "", "Granite Rapids", 2, 512, "", 0, ""},
};

// Highest boost ("max boost" / "max turbo") clock of SKUs whose "model name" names them.
struct SkuEntry {
  const char* sku;  // as it appears in "model name", a whole word
  double max_boost_ghz;
};

constexpr SkuEntry kSkus[] = {
    {"EPYC 7763", 3.5},       // AMD EPYC 7763 product page
    {"EPYC 72F3", 4.1},       // AMD EPYC 72F3 product page
    {"EPYC 9654", 3.7},       // AMD EPYC 9654 product page
    {"EPYC 9174F", 4.4},      // AMD EPYC 9174F product page
    {"EPYC 9575F", 5.0},      // AMD EPYC 9575F product page
    {"Platinum 8180", 3.8},   // Intel ARK, Xeon Platinum 8180
    {"Platinum 8280", 4.0},   // Intel ARK, Xeon Platinum 8280
    {"Platinum 8380", 3.4},   // Intel ARK, Xeon Platinum 8380
    {"Platinum 8480+", 3.8},  // Intel ARK, Xeon Platinum 8480+
    {"Platinum 8592+", 3.9},  // Intel ARK, Xeon Platinum 8592+
    {"6980P", 3.9},           // Intel ARK, Xeon 6980P
};

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+'; }

// `word` in `text` with no letter, digit or '+' right before or after it ("Platinum 8380" is not in
// "Platinum 8380H").
bool HasWord(const std::string& text, std::string_view word) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at == 0 || !IsWordChar(text[at - 1]) || !IsWordChar(word.front())) &&
        (end == text.size() || !IsWordChar(text[end]) || !IsWordChar(word.back()))) {
      return true;
    }
  }
  return false;
}

// The value after "key<spaces>:" of a /proc/cpuinfo line, or nullopt when the line is another key's.
std::optional<std::string> CpuinfoValue(const std::string& line, std::string_view key) {
  if (!line.starts_with(key)) return std::nullopt;
  const auto colon = line.find(':');
  if (colon == std::string::npos) return std::nullopt;
  for (size_t i = key.size(); i < colon; ++i) {
    if (line[i] != ' ' && line[i] != '\t') return std::nullopt;  // "model" is not "model name"
  }
  const auto begin = line.find_first_not_of(" \t", colon + 1);
  return begin == std::string::npos ? std::string() : line.substr(begin);
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

CpuIdentity ReadCpuIdentity(const std::filesystem::path& root) {
  CpuIdentity cpu;
  std::ifstream in(root / "proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    std::optional<std::string> value;
    if (CpuinfoValue(line, "processor")) {
      ++cpu.processors;
    } else if ((value = CpuinfoValue(line, "cpu MHz"))) {
      cpu.max_mhz = std::max(cpu.max_mhz, std::atof(value->c_str()));
    } else if (cpu.vendor_id.empty() && (value = CpuinfoValue(line, "vendor_id"))) {
      cpu.vendor_id = *value;
    } else if (cpu.family < 0 && (value = CpuinfoValue(line, "cpu family"))) {
      cpu.family = std::atoi(value->c_str());
    } else if (cpu.model < 0 && (value = CpuinfoValue(line, "model"))) {
      cpu.model = std::atoi(value->c_str());
    } else if (cpu.model_name.empty() && (value = CpuinfoValue(line, "model name"))) {
      cpu.model_name = *value;
    }
  }
  return cpu;
}

std::optional<CpuModelInfo> LookupCpuModel(const CpuIdentity& cpu) {
  std::optional<CpuModelInfo> info;
  for (const MicroarchEntry& e : kMicroarchs) {
    if (cpu.vendor_id != e.vendor_id || cpu.family != e.family || cpu.model < e.model_lo || cpu.model > e.model_hi ||
        cpu.model_name.find(e.name_has) == std::string::npos) {
      continue;
    }
    info.emplace();
    info->microarch = e.microarch;
    info->fma_pipes = e.fma_pipes;
    info->fma_bits = e.fma_bits;
    info->datapath_note = e.datapath_note;
    if (e.max_boost_ghz > 0) {
      info->max_boost_ghz = e.max_boost_ghz;
      info->clock_upper_bound = true;
      info->clock_of = e.clock_of;
    }
    break;
  }
  for (const SkuEntry& sku : kSkus) {
    if (!HasWord(cpu.model_name, sku.sku)) continue;
    if (!info) info.emplace();
    info->max_boost_ghz = sku.max_boost_ghz;
    info->clock_upper_bound = false;
    info->clock_of = sku.sku;
    break;
  }
  return info;
}

std::optional<double> CpuClockGhz(const std::filesystem::path& root, std::string* source) {
  // cpufreq's maximum, the highest over the CPUs (cores of a hybrid CPU differ).
  double max_khz = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root / "sys/devices/system/cpu", ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("cpu") || name.size() == 3 || !std::all_of(name.begin() + 3, name.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        })) {
      continue;
    }
    std::ifstream in(entry.path() / "cpufreq/cpuinfo_max_freq");
    double khz = 0;
    if (in >> khz && khz > 0) max_khz = std::max(max_khz, khz);
  }
  if (max_khz > 0) {
    if (source) *source = "cpufreq cpuinfo_max_freq";
    return max_khz / 1e6;
  }
  const CpuIdentity cpu = ReadCpuIdentity(root);
  const std::optional<double> os_ghz = cpu.max_mhz > 0 ? std::optional<double>(cpu.max_mhz / 1e3) : std::nullopt;
  // Without cpufreq, "cpu MHz" is what the hypervisor or firmware says: in a VM usually the base (or
  // TSC) clock, below the boost clock the cores run at. A named SKU's boost clock from the model table
  // is better than that; a family-wide figure is only an upper bound (the fastest part of the family),
  // so it is used only when the OS says nothing, and otherwise named beside the OS's figure: a
  // measured peak above the estimate then says why.
  const auto model = LookupCpuModel(cpu);
  if (model && model->max_boost_ghz && !model->clock_upper_bound && (!os_ghz || *model->max_boost_ghz > *os_ghz)) {
    if (source) {
      *source = fmt::format("model table: {} max boost {:.1f} GHz", model->clock_of, *model->max_boost_ghz);
      if (os_ghz) *source += fmt::format("; the OS reports {:.2f} GHz, likely the base clock", *os_ghz);
    }
    return model->max_boost_ghz;
  }
  if (os_ghz) {
    if (source) {
      *source = fmt::format(
          "highest /proc/cpuinfo cpu MHz of {} cores: the OS's figure, likely the base clock, not the boost clock",
          cpu.processors);
      if (model && model->max_boost_ghz && *model->max_boost_ghz > *os_ghz) {
        *source += fmt::format("; {} parts boost up to {:.1f} GHz ({}), so the estimate may be low", model->microarch,
                               *model->max_boost_ghz, model->clock_of);
      }
    }
    return os_ghz;
  }
  if (model && model->max_boost_ghz) {
    if (source) {
      *source = fmt::format("model table: {} max boost {:.1f} GHz, an upper bound (the family's highest, {})",
                            model->microarch, *model->max_boost_ghz, model->clock_of);
    }
    return model->max_boost_ghz;
  }
  return std::nullopt;
}

std::map<Precision, double> TheoreticalPeakGflops(const DeviceInfo& device, std::vector<std::string>* notes,
                                                  const std::filesystem::path& root) {
  std::map<Precision, double> peak;
  auto note = [&](std::string line) {
    if (notes) notes->push_back(std::move(line));
  };
  if (device.kind != DeviceKind::kCpu) {
    note("theoretical peak: chipfit has no FLOP-per-cycle figure for " + device.name + "; measured ceilings only");
    return peak;
  }
  std::string clock_source;
  const auto ghz = CpuClockGhz(root, &clock_source);
  if (!ghz || device.compute_units <= 0) {
    note("theoretical peak: unknown (no CPU clock or core count readable)");
    return peak;
  }
  // The widest vector instructions the OS exposes, and the datapath that executes them: the model
  // table's for a known core, else two FMA pipes of that width (true of recent Intel server cores and
  // AMD Zen 2-5; not of Zen 4, which executes AVX-512 on 256-bit units).
  const int isa_bits = Has(device, "avx512f") ? 512 : Has(device, "avx2") || Has(device, "fma3") ? 256 : 128;
  const char* isa = isa_bits == 512 ? "AVX-512" : isa_bits == 256 ? "AVX2" : "SSE";
  const CpuIdentity cpu = ReadCpuIdentity(root);
  const auto model = LookupCpuModel(cpu);
  int pipes = 2;
  int bits = isa_bits;
  std::string datapath;
  if (model && model->fma_pipes > 0) {
    pipes = model->fma_pipes;
    bits = std::min(model->fma_bits, isa_bits);
    datapath = fmt::format("{}: {} FMA pipe{} of {} bits{}", model->microarch, pipes, pipes == 1 ? "" : "s",
                           model->fma_bits, model->datapath_note.empty() ? "" : ", " + model->datapath_note);
    if (bits < model->fma_bits) datapath += fmt::format(", used {} bits wide by {}", bits, isa);
    datapath += " (model table)";
  } else {
    const std::string who = !cpu.model_name.empty() ? cpu.model_name : !device.name.empty() ? device.name : "this CPU";
    datapath = fmt::format("datapath assumed: 2 FMA pipes of {} bits for {} ({} is not in chipfit's model table)", bits,
                           isa, who);
  }
  const double fp32_per_cycle = pipes * (bits / 32.0) * 2.0;      // pipes × lanes × (multiply + add)
  const double cycles = device.compute_units * *ghz;              // Gcycles/s over all cores
  std::map<Precision, std::pair<double, std::string>> per_cycle;  // FLOP/cycle/core and where it comes from
  per_cycle[Precision::kFp32] = {fp32_per_cycle, datapath};
  if (Has(device, "amx_bf16")) {
    per_cycle[Precision::kBf16] = {1024, "AMX: 1024 bf16 FLOP/cycle per core"};
  } else if (Has(device, "avx512_bf16")) {
    // vdpbf16ps: two bf16 products per fp32 lane.
    per_cycle[Precision::kBf16] = {fp32_per_cycle * 2, "avx512_bf16 (vdpbf16ps), 2x fp32 on " + datapath};
  }
  if (Has(device, "amx_int8")) {
    per_cycle[Precision::kInt8] = {2048, "AMX: 2048 int8 OP/cycle per core"};
  } else if (Has(device, "avx512_vnni") || Has(device, "avx_vnni")) {
    // vpdpbusd: four u8·s8 products per 32-bit lane.
    per_cycle[Precision::kInt8] = {fp32_per_cycle * 4, "VNNI (vpdpbusd), 4x fp32 on " + datapath};
  } else if (Has(device, "avx2")) {
    // vpmaddubsw + vpmaddwd, roughly twice fp32.
    per_cycle[Precision::kInt8] = {fp32_per_cycle * 2, "AVX2 u8·s8, about 2x fp32 on " + datapath};
  }
  // One note for the clock (where it came from), one per precision for its FLOP/cycle.
  note(fmt::format("theoretical peak (an estimate): {} cores × {:.2f} GHz ({}); datapath: {}", device.compute_units,
                   *ghz, clock_source, datapath));
  for (const auto& [precision, rate] : per_cycle) {
    peak[precision] = cycles * rate.first;
    note(fmt::format("theoretical {} peak assumes {} cores × {:.2f} GHz × {:.0f} FLOP/cycle ({})",
                     PrecisionName(precision), device.compute_units, *ghz, rate.first, rate.second));
  }
  return peak;
}

std::string PeakShareText(double measured, std::optional<double> theoretical, const std::string& assumption) {
  if (!theoretical || !std::isfinite(*theoretical) || *theoretical <= 0) return "theoretical: no figure";
  const double share = measured / *theoretical;
  if (share > 1.05) {
    // The figures without their sources (the notes give those): the line stays readable.
    std::string bare;
    int depth = 0;
    for (char c : assumption) {
      depth += c == '(' ? 1 : 0;
      if (depth == 0) bare += c;
      depth -= c == ')' && depth > 0 ? 1 : 0;
    }
    while (bare.find("  ") != std::string::npos) bare.replace(bare.find("  "), 2, " ");
    while (!bare.empty() && bare.back() == ' ') bare.pop_back();
    return fmt::format("theoretical estimate too low ({:.0f} GFLOP/s): it assumes {}{}", *theoretical,
                       bare.empty() ? "a clock and FLOP/cycle this measurement did not record" : bare,
                       bare.empty() ? "" : ", and the clock may be below the one the cores ran at (see the notes)");
  }
  return fmt::format("theoretical {:.0f} (estimate), measured = {:.0f} % of theoretical", *theoretical,
                     std::min(100.0, 100 * share));
}

std::string TheoreticalAssumption(const CeilingReport& report, Precision precision) {
  const std::string own = fmt::format("theoretical {} peak assumes ", PrecisionName(precision));
  const std::string general = "theoretical peak (an estimate): ";  // all a cache written before had
  std::string fallback;
  for (const std::string& n : report.notes) {
    if (n.starts_with(own)) return n.substr(own.size());
    if (fallback.empty() && n.starts_with(general)) fallback = n.substr(general.size());
  }
  return fallback;
}

std::string PeakShareText(const CeilingReport& report, Precision precision, double measured) {
  const auto theory = report.theoretical_gflops.find(precision);
  return PeakShareText(measured,
                       theory == report.theoretical_gflops.end() ? std::nullopt : std::optional<double>(theory->second),
                       TheoreticalAssumption(report, precision));
}

std::string CeilingKey(const DeviceInfo& device, int threads) {
  // The core count is part of it: the theoretical peak is computed with it when measuring.
  std::string key = device.Id() + "|" + device.name + "|" + device.driver_version + "|" + device.runtime_version + "|" +
                    std::to_string(device.compute_units) + " units";
  // A CPU's bandwidth and GEMM peak scale with the threads that ran them. Keys written before this
  // lack the suffix, so such entries are never found again and the ceilings are measured anew.
  if (device.kind == DeviceKind::kCpu) key += "|" + std::to_string(threads) + " threads";
  // The oneDNN ISA (and any ONEDNN_MAX_CPU_ISA holding it back) picks the kernels that set the peak.
  for (const auto& [name, value] : device.properties) {
    if (name == "oneDNN ISA") key += "|oneDNN ISA " + value;
  }
  return key;
}

bool CeilingReport::MeasuredWhileBusy() const { return other_cpu_share && *other_cpu_share > kBusyCpuShare; }

std::string BusyCeilingsNote(const CeilingReport& report) {
  if (!report.MeasuredWhileBusy()) return "";
  return fmt::format(
      "ceilings measured while the machine was busy ({:.0f} % of the CPUs used by others): roofline bounds are low",
      *report.other_cpu_share * 100);
}

Result<CeilingReport> MeasureCeilings(const DeviceInfo& device, const GraphCompiler& compile,
                                      const CeilingOptions& options) {
  if (device.kind == DeviceKind::kReference) return Unsupported("the reference kernels have no ceilings to measure");
  CpuShareMeter others;
  others.Start();
  CeilingReport report;
  report.device_id = device.Id();
  report.threads = device.kind == DeviceKind::kCpu ? omp_get_max_threads() : 0;
  report.device_key = CeilingKey(device, report.threads);
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
      if (theory != report.theoretical_gflops.end() && gflops->rate > theory->second * 1.05) {
        report.notes.push_back(fmt::format("{}: measured {:.0f} GFLOP/s, {}", PrecisionName(p.precision), gflops->rate,
                                           PeakShareText(report, p.precision, gflops->rate)));
      }
    } else if (gflops.status().code() == StatusCode::kCancelled) {
      return gflops.status();
    } else {
      report.notes.push_back(
          fmt::format("{} peak not measured: {}", PrecisionName(p.precision), gflops.status().message()));
    }
  }
  if (device.kind == DeviceKind::kCpu) report.other_cpu_share = others.Stop();
  if (report.MeasuredWhileBusy()) {
    report.notes.push_back(
        fmt::format("machine busy: other processes used {:.0f} % of the CPUs while these ceilings were measured, so "
                    "the measured figures are low; measure again on an idle machine (chipfit devices --measure)",
                    *report.other_cpu_share * 100));
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
  nlohmann::json j = {
      {"device", r.device_id},
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
  // Written only when recorded, so a cache or run from before it reads back unchanged.
  if (r.other_cpu_share) j["other_cpu_share"] = *r.other_cpu_share;
  if (r.threads > 0) j["threads"] = r.threads;
  return j;
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
    if (j.contains("other_cpu_share") && j["other_cpu_share"].is_number()) {
      r.other_cpu_share = j["other_cpu_share"].get<double>();
    }
    if (j.contains("threads") && j["threads"].is_number_integer()) r.threads = j["threads"].get<int>();
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
