// Reading, checking and writing the hardware catalog's files (resources/hardware/*.yaml).
#include "profilers/projection/catalog.h"

#include "chipfit/data_dir.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>

namespace chipfit {
namespace {

// In the order a file lists them (and HardwareSpecToYaml writes them).
constexpr std::array<Precision, 5> kPrecisions = {Precision::kFp32, Precision::kTf32, Precision::kFp16,
                                                  Precision::kBf16, Precision::kInt8};
const std::vector<std::string> kTopLevelKeys = {"id",
                                                "name",
                                                "vendor",
                                                "kind",
                                                "compute_units",
                                                "clock_ghz",
                                                "peak_gflops",
                                                "memory_bandwidth_gbs",
                                                "memory_gb",
                                                "on_chip_memory_mb",
                                                "matrix_tile",
                                                "tdp_w",
                                                "idle_w",
                                                "launch_overhead",
                                                "price_per_hour_usd",
                                                "sources",
                                                "notes"};
const std::vector<std::string> kRequiredKeys = {
    "id",        "name",  "kind",   "compute_units", "clock_ghz", "peak_gflops", "memory_bandwidth_gbs",
    "memory_gb", "tdp_w", "idle_w", "sources"};
const std::vector<std::string> kKinds = {"cpu", "gpu", "npu", "accelerator"};
const std::vector<std::string> kLaunchOverheads = {"cpu", "gpu", "accelerator", "npu"};
// Besides the figures, a source may back these descriptive keys (a device's name, its dispatch class).
const std::vector<std::string> kDescriptiveSourceKeys = {"name", "vendor", "kind", "launch_overhead"};

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string Join(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& item : list) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string PrecisionList() {
  std::vector<std::string> names;
  for (Precision p : kPrecisions) names.emplace_back(PrecisionName(p));
  return Join(names);
}

// YAML's double-quoted scalars accept JSON's string escapes, so a JSON dump quotes any text safely.
std::string Quote(const std::string& text) { return nlohmann::json(text).dump(); }

// Ids and the fixed words (kind, launch_overhead) stay plain where YAML reads them back as the same
// text; "null" would read back as no value.
std::string Word(const std::string& text) {
  const bool plain =
      !text.empty() && text[0] >= 'a' && text[0] <= 'z' && text != "null" &&
      std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == '_';
      });
  return plain ? text : Quote(text);
}

// Shortest text that reads back as the same double (fmt's "{}"), so the round trip is exact.
std::string FormatNumber(double value) { return fmt::format("{}", value); }

// Checks one device file's parsed tree; every error names the file and the key, and the line where
// the key is (yaml-cpp keeps each node's mark).
class DeviceReader {
 public:
  explicit DeviceReader(std::string file) : file_(std::move(file)) {}

  Result<HardwareSpec> Read(const YAML::Node& root) {
    if (!root.IsMap()) {
      return InvalidArgument(file_ + ": expected one device as a mapping of keys (" + Join(kRequiredKeys) + ", ...)");
    }
    RETURN_IF_ERROR(CheckTopLevelKeys(root));
    for (const std::string& key : kRequiredKeys) {
      if (!Present(root[key])) return Error(key, "missing (a device file needs " + Join(kRequiredKeys) + ")");
    }
    HardwareSpec spec;
    spec.file = file_;
    ASSIGN_OR_RETURN(spec.id, Text(root["id"], "id"));
    RETURN_IF_ERROR(CheckId(spec.id, root["id"]));
    ASSIGN_OR_RETURN(spec.name, Text(root["name"], "name"));
    if (Present(root["vendor"])) {
      ASSIGN_OR_RETURN(spec.vendor, Text(root["vendor"], "vendor", /*allow_empty=*/true));
    }
    ASSIGN_OR_RETURN(spec.kind, OneOf(root["kind"], "kind", kKinds));
    ASSIGN_OR_RETURN(spec.compute_units, PositiveInt(root["compute_units"], "compute_units"));
    ASSIGN_OR_RETURN(spec.clock_ghz, Positive(root["clock_ghz"], "clock_ghz"));
    RETURN_IF_ERROR(ReadPeaks(root["peak_gflops"], spec));
    ASSIGN_OR_RETURN(spec.memory_bandwidth_gbs, Positive(root["memory_bandwidth_gbs"], "memory_bandwidth_gbs"));
    ASSIGN_OR_RETURN(spec.memory_gb, Positive(root["memory_gb"], "memory_gb"));
    if (Present(root["on_chip_memory_mb"])) {
      ASSIGN_OR_RETURN(spec.on_chip_memory_mb, Positive(root["on_chip_memory_mb"], "on_chip_memory_mb"));
    }
    if (Present(root["matrix_tile"])) {
      ASSIGN_OR_RETURN(spec.matrix_tile, Tile(root["matrix_tile"]));
    }
    ASSIGN_OR_RETURN(spec.tdp_w, Positive(root["tdp_w"], "tdp_w"));
    ASSIGN_OR_RETURN(spec.idle_w, Number(root["idle_w"], "idle_w"));
    if (spec.idle_w < 0 || spec.idle_w >= spec.tdp_w) {
      return Error("idle_w",
                   fmt::format("must be at least 0 and below tdp_w ({}), not {}", FormatNumber(spec.tdp_w),
                               FormatNumber(spec.idle_w)),
                   root["idle_w"]);
    }
    // The dispatch classes are named like the kinds, so a device's own kind is the natural default.
    spec.launch_overhead = spec.kind;
    if (Present(root["launch_overhead"])) {
      ASSIGN_OR_RETURN(spec.launch_overhead, OneOf(root["launch_overhead"], "launch_overhead", kLaunchOverheads));
    }
    if (Present(root["price_per_hour_usd"])) {
      ASSIGN_OR_RETURN(spec.price_per_hour_usd, Positive(root["price_per_hour_usd"], "price_per_hour_usd"));
    }
    RETURN_IF_ERROR(ReadSources(root["sources"], spec));
    if (Present(root["notes"])) RETURN_IF_ERROR(ReadNotes(root["notes"], spec));
    return spec;
  }

 private:
  static bool Present(const YAML::Node& node) { return node.IsDefined() && !node.IsNull(); }

  static std::string Line(const YAML::Node& node) {
    if (!node.IsDefined() || node.Mark().is_null()) return "";
    return fmt::format(" (line {})", node.Mark().line + 1);
  }

  Status Error(const std::string& key, const std::string& what, const YAML::Node& at = YAML::Node()) const {
    return InvalidArgument(fmt::format("{}: key {}: {}{}", file_, key, what, Line(at)));
  }

  // Every top-level key known and given once: a misspelt key ("tdp") would otherwise be dropped in silence.
  Status CheckTopLevelKeys(const YAML::Node& root) const {
    std::set<std::string> seen;
    std::vector<std::string> unknown;
    for (const auto& kv : root) {
      if (!kv.first.IsScalar()) return InvalidArgument(file_ + ": a key is not a plain name" + Line(kv.first));
      const std::string key = kv.first.Scalar();
      if (!seen.insert(key).second) return Error(key, "given twice", kv.first);
      if (!Contains(kTopLevelKeys, key)) unknown.push_back(key + Line(kv.first));
    }
    if (unknown.empty()) return Status::Ok();
    return InvalidArgument(fmt::format("{}: unknown key{} {}; a device file has: {}", file_,
                                       unknown.size() == 1 ? "" : "s", Join(unknown), Join(kTopLevelKeys)));
  }

  Status CheckId(const std::string& id, const YAML::Node& node) const {
    const bool ok = !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.';
    });
    if (ok) return Status::Ok();
    return Error("id", "'" + id + "' must be lowercase letters, digits, '-', '+' and '.'", node);
  }

  Result<std::string> Text(const YAML::Node& node, const std::string& key, bool allow_empty = false) const {
    if (!node.IsScalar()) return Error(key, "must be text", node);
    if (!allow_empty && node.Scalar().empty()) return Error(key, "must not be empty", node);
    return node.Scalar();
  }

  Result<std::string> OneOf(const YAML::Node& node, const std::string& key,
                            const std::vector<std::string>& allowed) const {
    ASSIGN_OR_RETURN(std::string value, Text(node, key));
    if (!Contains(allowed, value)) return Error(key, "'" + value + "' is not one of " + Join(allowed), node);
    return value;
  }

  Result<double> Number(const YAML::Node& node, const std::string& key) const {
    const std::string shown = node.IsScalar() ? node.Scalar() : std::string("a list or mapping");
    double value = 0;
    if (!node.IsScalar() || !YAML::convert<double>::decode(node, value) || !std::isfinite(value)) {
      return Error(key, "must be a number, not '" + shown + "'", node);
    }
    return value;
  }

  Result<double> Positive(const YAML::Node& node, const std::string& key) const {
    ASSIGN_OR_RETURN(double value, Number(node, key));
    if (!(value > 0)) return Error(key, "must be a positive number, not " + node.Scalar(), node);
    return value;
  }

  Result<int> PositiveInt(const YAML::Node& node, const std::string& key) const {
    int value = 0;
    if (!node.IsScalar() || !YAML::convert<int>::decode(node, value) || value <= 0) {
      return Error(key, "must be a positive whole number, not '" + (node.IsScalar() ? node.Scalar() : "a list") + "'",
                   node);
    }
    return value;
  }

  Result<std::array<int, 3>> Tile(const YAML::Node& node) const {
    if (!node.IsSequence() || node.size() != 3) return Error("matrix_tile", "must be a list [M, N, K]", node);
    std::array<int, 3> tile{};
    for (size_t i = 0; i < 3; ++i) {
      ASSIGN_OR_RETURN(tile[i], PositiveInt(node[i], fmt::format("matrix_tile[{}]", i)));
    }
    return tile;
  }

  Status ReadPeaks(const YAML::Node& node, HardwareSpec& spec) const {
    if (!node.IsMap() || node.size() == 0) {
      return Error("peak_gflops", "must map at least one precision (" + PrecisionList() + ") to its dense GFLOP/s",
                   node);
    }
    for (const auto& kv : node) {
      const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "?";
      const std::string key = "peak_gflops." + name;
      const std::optional<Precision> precision = ParsePrecision(name);
      if (!precision) return Error(key, "unknown precision (" + PrecisionList() + ")", kv.first);
      if (spec.peak_gflops.count(*precision) != 0) return Error(key, "given twice", kv.first);
      ASSIGN_OR_RETURN(spec.peak_gflops[*precision], Positive(kv.second, key));
    }
    return Status::Ok();
  }

  // The keys present in this file that a source may back.
  static std::vector<std::string> GivenKeys(const HardwareSpec& spec) {
    std::vector<std::string> keys = {"compute_units", "clock_ghz"};
    for (Precision p : kPrecisions) {
      if (spec.Supports(p)) keys.push_back("peak_gflops." + std::string(PrecisionName(p)));
    }
    keys.insert(keys.end(), {"memory_bandwidth_gbs", "memory_gb"});
    if (spec.on_chip_memory_mb) keys.push_back("on_chip_memory_mb");
    if (spec.matrix_tile) keys.push_back("matrix_tile");
    keys.insert(keys.end(), {"tdp_w", "idle_w"});
    if (spec.price_per_hour_usd) keys.push_back("price_per_hour_usd");
    return keys;
  }

  Status ReadSources(const YAML::Node& node, HardwareSpec& spec) const {
    if (!node.IsMap()) return Error("sources", "must map each figure's key to {source: ..., date: ...}", node);
    const std::vector<std::string> figures = GivenKeys(spec);
    for (const auto& kv : node) {
      const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "?";
      const std::string key = "sources." + name;
      if (spec.sources.count(name) != 0) return Error(key, "given twice", kv.first);
      const bool figure = Contains(HardwareFigureKeys(), name);
      if (!figure && !Contains(kDescriptiveSourceKeys, name)) {
        return Error(key, "names no figure of a device file (" + Join(HardwareFigureKeys()) + ")", kv.first);
      }
      if (figure && !Contains(figures, name)) {
        return Error(key, "backs a figure this file does not give (a stale or misspelt entry?)", kv.first);
      }
      if (!kv.second.IsMap()) return Error(key, "must be {source: \"...\", date: \"...\"}", kv.second);
      HardwareSource source;
      for (const auto& field : kv.second) {
        const std::string field_name = field.first.IsScalar() ? field.first.Scalar() : "?";
        if (field_name == "source") {
          ASSIGN_OR_RETURN(source.source, Text(field.second, key + ".source", /*allow_empty=*/true));
        } else if (field_name == "date") {
          ASSIGN_OR_RETURN(source.date, Text(field.second, key + ".date", /*allow_empty=*/true));
        } else {
          return Error(key + "." + field_name, "unknown field (source, date)", field.first);
        }
      }
      if (source.source.empty()) return Error(key + ".source", "must say where the figure is from", kv.second);
      spec.sources[name] = std::move(source);
    }
    // A figure without a source cannot be checked or updated by whoever reads the file next.
    for (const std::string& key : figures) {
      if (spec.sources.count(key) == 0) {
        return Error(key, "has no entry under sources (every figure says where it is from, and when)");
      }
    }
    return Status::Ok();
  }

  Status ReadNotes(const YAML::Node& node, HardwareSpec& spec) const {
    if (node.IsScalar()) {
      spec.notes.push_back(node.Scalar());
      return Status::Ok();
    }
    if (!node.IsSequence()) return Error("notes", "must be a list of text", node);
    for (size_t i = 0; i < node.size(); ++i) {
      ASSIGN_OR_RETURN(std::string note, Text(node[i], fmt::format("notes[{}]", i), /*allow_empty=*/true));
      spec.notes.push_back(std::move(note));
    }
    return Status::Ok();
  }

  std::string file_;
};

}  // namespace

std::vector<std::string> HardwareFigureKeys() {
  std::vector<std::string> keys = {"compute_units", "clock_ghz"};
  for (Precision p : kPrecisions) keys.push_back("peak_gflops." + std::string(PrecisionName(p)));
  keys.insert(keys.end(), {"memory_bandwidth_gbs", "memory_gb", "on_chip_memory_mb", "matrix_tile", "tdp_w", "idle_w",
                           "price_per_hour_usd"});
  return keys;
}

Result<HardwareSpec> ParseHardwareYaml(const std::string& text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return ParseError(
        fmt::format("{}: line {}, column {}: malformed YAML: {}", file, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  try {
    return DeviceReader(file).Read(root);
  } catch (const YAML::Exception& e) {
    // The reader checks each node's type before it reads it; this is a safety net, not a path.
    return ParseError(file + ": " + e.what());
  }
}

Result<HardwareSpec> LoadHardwareFile(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return NotFound(path.string() + ": no such hardware file");
  if (std::filesystem::is_directory(path, error)) {
    return InvalidArgument(path.string() + ": is a directory, not a hardware file (.yaml)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path.string() + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return IoError(path.string() + ": reading failed");
  return ParseHardwareYaml(text.str(), path.string());
}

Result<std::vector<HardwareSpec>> LoadHardwareCatalog(const std::filesystem::path& dir) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) return NotFound(dir.string() + ": no such hardware directory");
  std::vector<std::filesystem::path> files;
  for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    if (it->path().extension() == ".yaml" && it->is_regular_file(error)) files.push_back(it->path());
  }
  if (error) return IoError(dir.string() + ": cannot be listed: " + error.message());
  if (files.empty()) return NotFound(dir.string() + ": holds no hardware files (*.yaml)");
  // Read in name order, so that which of two clashing files an error names first does not depend on the file system.
  std::sort(files.begin(), files.end());
  std::vector<HardwareSpec> specs;
  std::map<std::string, std::string> file_of;
  for (const std::filesystem::path& path : files) {
    ASSIGN_OR_RETURN(HardwareSpec spec, LoadHardwareFile(path));
    const auto [it, inserted] = file_of.emplace(spec.id, spec.file);
    if (!inserted) {
      return InvalidArgument(
          fmt::format("hardware id '{}' is given by two files: {} and {}", spec.id, it->second, spec.file));
    }
    specs.push_back(std::move(spec));
  }
  std::sort(specs.begin(), specs.end(), [](const HardwareSpec& a, const HardwareSpec& b) { return a.id < b.id; });
  return specs;
}

std::filesystem::path DefaultHardwareDir() {
  // The source tree's catalog in a build; the installed copy (CHIPFIT_DATA_DIR) where that tree is absent.
  std::error_code error;
  if (std::filesystem::is_directory(CHIPFIT_HARDWARE_DIR, error)) return CHIPFIT_HARDWARE_DIR;
  return std::filesystem::path(CHIPFIT_DATA_DIR) / "hardware";
}

std::string HardwareSpecToYaml(const HardwareSpec& spec) {
  std::string out;
  const auto line = [&out](const std::string& key, const std::string& value) { out += key + ": " + value + "\n"; };
  line("id", Word(spec.id));
  line("name", Quote(spec.name));
  line("vendor", Quote(spec.vendor));
  line("kind", Word(spec.kind));
  line("compute_units", std::to_string(spec.compute_units));
  line("clock_ghz", FormatNumber(spec.clock_ghz));
  out += "peak_gflops:\n";
  for (const auto& [precision, gflops] : spec.peak_gflops) {
    out += "  " + std::string(PrecisionName(precision)) + ": " + FormatNumber(gflops) + "\n";
  }
  line("memory_bandwidth_gbs", FormatNumber(spec.memory_bandwidth_gbs));
  line("memory_gb", FormatNumber(spec.memory_gb));
  if (spec.on_chip_memory_mb) line("on_chip_memory_mb", FormatNumber(*spec.on_chip_memory_mb));
  if (spec.matrix_tile) {
    const auto& t = *spec.matrix_tile;
    line("matrix_tile", fmt::format("[{}, {}, {}]", t[0], t[1], t[2]));
  }
  line("tdp_w", FormatNumber(spec.tdp_w));
  line("idle_w", FormatNumber(spec.idle_w));
  line("launch_overhead", Word(spec.launch_overhead));
  if (spec.price_per_hour_usd) line("price_per_hour_usd", FormatNumber(*spec.price_per_hour_usd));
  // Sources in the order of the figures they back, as a person writes them.
  std::vector<std::string> order = HardwareFigureKeys();
  order.insert(order.end(), kDescriptiveSourceKeys.begin(), kDescriptiveSourceKeys.end());
  for (const auto& [key, source] : spec.sources) {
    if (!Contains(order, key)) order.push_back(key);
  }
  out += "sources:\n";
  for (const std::string& key : order) {
    const auto it = spec.sources.find(key);
    if (it == spec.sources.end()) continue;
    out += "  " + Word(key) + ": {source: " + Quote(it->second.source) + ", date: " + Quote(it->second.date) + "}\n";
  }
  if (!spec.notes.empty()) {
    out += "notes:\n";
    for (const std::string& note : spec.notes) out += "  - " + Quote(note) + "\n";
  }
  return out;
}

}  // namespace chipfit
