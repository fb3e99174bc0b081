// CPU discovery: libcpuinfo for the processor, CPUID for features libcpuinfo 2022 predates, oneDNN
// for its version and effective ISA.
#include "devices/cpu/cpu_device.h"

#include <cpuid.h>
#include <cpuinfo.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "fmt/format.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace chipfit {
namespace {

// Features read straight from CPUID leaf 7: Debian 12's libcpuinfo (2022) knows no AMX or AVX512-FP16.
struct ExtraX86Features {
  bool amx_tile = false;
  bool amx_bf16 = false;
  bool amx_int8 = false;
  bool avx512_fp16 = false;
  bool avx_vnni = false;
};

ExtraX86Features ReadExtraFeatures() {
  ExtraX86Features f;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
    f.amx_bf16 = (edx >> 22) & 1;
    f.avx512_fp16 = (edx >> 23) & 1;
    f.amx_tile = (edx >> 24) & 1;
    f.amx_int8 = (edx >> 25) & 1;
    const unsigned max_subleaf = eax;
    if (max_subleaf >= 1 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) f.avx_vnni = (eax >> 4) & 1;
  }
  return f;
}

std::string IsaName(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::all: return "all";
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_mic: return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
  }
  return fmt::format("0x{:x}", static_cast<unsigned>(isa));
}

std::string Bytes(uint64_t bytes) {
  if (bytes >= (1ull << 30)) return fmt::format("{:.1f} GiB", bytes / double(1ull << 30));
  if (bytes >= (1ull << 20)) return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} KiB", bytes >> 10);
}

// Sum of a cache level over all instances (an L2 per core → total L2), plus the size of one.
std::string CacheLine(const cpuinfo_cache* caches, uint32_t count) {
  if (caches == nullptr || count == 0) return "none reported";
  uint64_t total = 0;
  for (uint32_t i = 0; i < count; ++i) total += caches[i].size;
  if (count == 1) return Bytes(total);
  return fmt::format("{} x {} ({} total)", count, Bytes(caches[0].size), Bytes(total));
}

uint64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? uint64_t(pages) * uint64_t(page_size) : 0;
}

std::string ProcessorName() {
  const cpuinfo_package* package = cpuinfo_get_package(0);
  if (package != nullptr && package->name[0] != '\0') return package->name;
  // libcpuinfo leaves the name empty for CPUs newer than it; /proc/cpuinfo still has the brand string.
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto pos = line.find(':');
      if (pos != std::string::npos) return line.substr(line.find_first_not_of(' ', pos + 1));
    }
  }
  return "unknown CPU";
}

std::string VendorName(cpuinfo_vendor vendor) {
  switch (vendor) {
    case cpuinfo_vendor_intel: return "Intel";
    case cpuinfo_vendor_amd: return "AMD";
    case cpuinfo_vendor_arm: return "ARM";
    case cpuinfo_vendor_hygon: return "Hygon";
    default: return "unknown";
  }
}

}  // namespace

std::optional<int> SysfsCoreCount(const std::filesystem::path& cpu_root) {
  std::set<std::pair<long, long>> cores;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(cpu_root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 4 || name.compare(0, 3, "cpu") != 0 ||
        !std::all_of(name.begin() + 3, name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    std::ifstream package(entry.path() / "topology" / "physical_package_id");
    std::ifstream core(entry.path() / "topology" / "core_id");
    long package_id = 0, core_id = 0;
    if (!(package >> package_id) || !(core >> core_id)) continue;  // offline CPUs have no topology
    cores.insert({package_id, core_id});
  }
  if (ec || cores.empty()) return std::nullopt;
  return static_cast<int>(cores.size());
}

void DiscoverCpu(DiscoveryReport& report) {
  DeviceInfo info;
  info.kind = DeviceKind::kCpu;
  info.index = 0;
  info.memory_bytes = PhysicalMemoryBytes();
  if (!cpuinfo_initialize()) {
    report.notes.push_back("CPU: libcpuinfo could not read this processor; ISA features unknown");
    info.name = ProcessorName();
  } else {
    info.name = ProcessorName();
    info.compute_units = static_cast<int>(cpuinfo_get_cores_count());
    if (const auto sysfs = SysfsCoreCount("/sys/devices/system/cpu"); sysfs && *sysfs != info.compute_units) {
      report.notes.push_back("CPU: libcpuinfo counts " + std::to_string(info.compute_units) +
                             " core(s) from CPUID, the kernel's topology " + std::to_string(*sysfs) +
                             ": using the kernel's (theoretical peaks scale with it)");
      info.compute_units = *sysfs;
    }
    const cpuinfo_core* core = cpuinfo_get_core(0);
    if (core != nullptr) info.vendor = VendorName(core->vendor);
    info.properties.emplace_back("logical processors", std::to_string(cpuinfo_get_processors_count()));
    info.properties.emplace_back("cores", std::to_string(info.compute_units));
    info.properties.emplace_back("L1d cache", CacheLine(cpuinfo_get_l1d_caches(), cpuinfo_get_l1d_caches_count()));
    info.properties.emplace_back("L2 cache", CacheLine(cpuinfo_get_l2_caches(), cpuinfo_get_l2_caches_count()));
    info.properties.emplace_back("L3 cache", CacheLine(cpuinfo_get_l3_caches(), cpuinfo_get_l3_caches_count()));
  }

  const ExtraX86Features extra = ReadExtraFeatures();
  struct Flag {
    const char* name;
    bool present;
  };
  const Flag flags[] = {
      {"sse4_2", cpuinfo_has_x86_sse4_2()},
      {"avx", cpuinfo_has_x86_avx()},
      {"avx2", cpuinfo_has_x86_avx2()},
      {"fma3", cpuinfo_has_x86_fma3()},
      {"f16c", cpuinfo_has_x86_f16c()},
      {"avx512f", cpuinfo_has_x86_avx512f()},
      {"avx512bw", cpuinfo_has_x86_avx512bw()},
      {"avx512vl", cpuinfo_has_x86_avx512vl()},
      {"avx512dq", cpuinfo_has_x86_avx512dq()},
      {"avx512_vnni", cpuinfo_has_x86_avx512vnni()},
      {"avx512_bf16", cpuinfo_has_x86_avx512bf16()},
      {"avx512_fp16", extra.avx512_fp16},
      {"avx_vnni", extra.avx_vnni},
      {"amx_tile", extra.amx_tile},
      {"amx_bf16", extra.amx_bf16},
      {"amx_int8", extra.amx_int8},
  };
  for (const Flag& flag : flags) {
    if (flag.present) info.features.emplace_back(flag.name);
  }

  const dnnl_version_t* version = dnnl::version();
  info.runtime_version = fmt::format("oneDNN {}.{}.{}", version->major, version->minor, version->patch);
  // oneDNN's effective ISA, not the CPU's flags, decides what runs: ONEDNN_MAX_CPU_ISA (or the older
  // DNNL_MAX_CPU_ISA) holds oneDNN below what the CPU has, and a precision it then has no kernels for
  // is refused rather than run in fp32 under its name.
  const dnnl::cpu_isa effective = dnnl::get_effective_cpu_isa();
  const std::string isa = IsaName(effective);
  std::string limit;
  for (const char* variable : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"}) {
    if (const char* value = std::getenv(variable); value != nullptr && *value != '\0' && limit.empty()) {
      limit = fmt::format("{}={}", variable, value);
    }
  }
  // cpu_isa values are bit sets: a level reaches another when it has all of that one's bits.
  auto reaches = [&](dnnl::cpu_isa needed) {
    return (static_cast<unsigned>(effective) & static_cast<unsigned>(needed)) == static_cast<unsigned>(needed);
  };
  const std::string hash = version->hash == nullptr || std::string_view(version->hash) == "N/A" ? "" : version->hash;
  info.properties.emplace_back("oneDNN", fmt::format("{}.{}.{}{}, {} threads", version->major, version->minor,
                                                     version->patch, hash.empty() ? "" : " (" + hash + ")",
                                                     version->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other"));
  info.properties.emplace_back("oneDNN ISA", limit.empty() ? isa : fmt::format("{} (held there by {})", isa, limit));
  // The reason a precision is missing: oneDNN held back by the environment, or the CPU itself.
  auto missing = [&](const std::string& needs, const std::string& cpu_reason) {
    return limit.empty() ? cpu_reason
                         : fmt::format("{} holds oneDNN to {}, which has no {} kernels (unset it to use them)", limit,
                                       isa, needs);
  };

  // What oneDNN 2.6 can run natively here decides which precisions chipfit offers.
  info.precisions.push_back({Precision::kFp32, Support::Yes("oneDNN " + isa)});
  if (reaches(dnnl::cpu_isa::avx512_core_bf16)) {
    info.precisions.push_back(
        {Precision::kBf16,
         Support::Yes(reaches(dnnl::cpu_isa::avx512_core_amx) ? "native (AMX)" : "native (avx512_bf16)")});
  } else if (reaches(dnnl::cpu_isa::avx512_core)) {
    info.precisions.push_back(
        {Precision::kBf16, Support::Yes("emulated by oneDNN on avx512_core: expect fp32 speed or slower")});
  } else {
    info.precisions.push_back(
        {Precision::kBf16,
         Support::No(missing("bf16", "bf16 needs AVX-512 (avx512_core) in oneDNN 2.6; this CPU has none"))});
  }
  if (reaches(dnnl::cpu_isa::avx512_core_vnni) || reaches(dnnl::cpu_isa::avx2_vnni)) {
    info.precisions.push_back(
        {Precision::kInt8, Support::Yes(reaches(dnnl::cpu_isa::avx512_core_amx) ? "native (AMX)" : "native (VNNI)")});
  } else if (reaches(dnnl::cpu_isa::avx2)) {
    info.precisions.push_back({Precision::kInt8, Support::Yes("no VNNI: u8·s8 through AVX2, slower per op than VNNI")});
  } else {
    info.precisions.push_back(
        {Precision::kInt8, Support::No(missing("int8", "int8 in oneDNN 2.6 needs at least AVX2"))});
  }
  info.precisions.push_back(
      {Precision::kFp16, Support::No("oneDNN 2.6 (Debian 12) has no fp16 convolution or matmul for CPUs; use bf16")});
  info.precisions.push_back({Precision::kTf32, Support::No("tf32 is an NVIDIA tensor-core mode, not a CPU one")});

  report.devices.push_back(std::make_unique<CpuDevice>(std::move(info)));
}

}  // namespace chipfit
