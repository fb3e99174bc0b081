// The hardware catalog of projected targets: one YAML file per device the user may not own.
#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/runtime/target.h"
#include "core/status.h"

namespace chipfit {

// Where one figure of a device comes from: a document or page, and when it was published or read.
struct HardwareSource {
  std::string source;
  std::string date;
  bool operator==(const HardwareSource&) const = default;
};

// One device as resources/hardware/README.md describes it. Figures are the vendor's dense peaks
// (no 2:4 sparsity), so that a projection never promises twice what the device does on a dense model.
struct HardwareSpec {
  std::string id, name, vendor, kind;  // kind: cpu | gpu | npu | accelerator
  int compute_units = 0;
  double clock_ghz = 0;
  std::map<Precision, double> peak_gflops;  // dense; a precision absent is unsupported
  double memory_bandwidth_gbs = 0, memory_gb = 0;
  std::optional<double> on_chip_memory_mb{};
  std::optional<std::array<int, 3>> matrix_tile{};  // M, N, K
  double tdp_w = 0, idle_w = 0;
  std::string launch_overhead = "gpu";  // cpu | gpu | accelerator | npu
  std::optional<double> price_per_hour_usd{};
  std::map<std::string, HardwareSource> sources;  // "peak_gflops.fp16" → where from
  std::vector<std::string> notes{};
  std::string file{};  // the file it was read from ("" when built in code)
  bool Supports(Precision p) const { return peak_gflops.count(p) != 0; }
  bool operator==(const HardwareSpec&) const = default;
};

// Parses one device; `file` names the file in errors ("t4.yaml: key peak_gflops.fp16: must be a positive number").
// Validation errors are InvalidArgument; YAML that does not parse is a ParseError with yaml-cpp's message and line.
Result<HardwareSpec> ParseHardwareYaml(const std::string& text, const std::string& file);
// Reads and parses one file (a user's --hardware-file); a missing file is NotFound, an unreadable one IoError.
Result<HardwareSpec> LoadHardwareFile(const std::filesystem::path& path);
// Every *.yaml in `dir`, sorted by id; two files with one id is an error naming both. A directory
// with no *.yaml is NotFound: a catalog that silently came out empty would project onto nothing.
Result<std::vector<HardwareSpec>> LoadHardwareCatalog(const std::filesystem::path& dir);
// The source tree's resources/hardware, else CHIPFIT_DATA_DIR "/hardware".
std::filesystem::path DefaultHardwareDir();
// Writes the same schema; ParseHardwareYaml reads it back equal (but for `file`, which it takes from its argument).
std::string HardwareSpecToYaml(const HardwareSpec& spec);

// The keys a `sources` entry may name: every figure a device file can hold (peak_gflops.<precision>
// for each precision), in file order.
std::vector<std::string> HardwareFigureKeys();

}  // namespace chipfit
