// The batch manifest of `chipfit batch` (DESIGN.md §7): models × targets × limits, read from YAML.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "profilers/session/profile_session.h"

namespace chipfit {

struct BatchModel {
  std::filesystem::path path;       // resolved against the manifest's folder
  std::vector<std::string> shapes;  // NAME=DxD…
  std::string data;                 // resolved against the manifest's folder; empty: none
  int line = 0;                     // of the entry in the manifest, for messages
};

struct BatchManifest {
  std::vector<BatchModel> models;
  std::string targets;  // "T1,T2" as written; empty when all_targets
  bool all_targets = false;
  RecommendSettings recommend;  // costs resolved against the manifest's folder
  std::optional<int64_t> baseline_run;
  bool baseline_latest = false;
  std::string report;  // pattern with {model}, resolved against the manifest's folder; empty: none
  int iterations = 50, warmup = 10;
  double min_time = 1.0;
};

// Reads and checks `path`: every model file exists, every target, limit, objective and weight parses.
// A missing file is NotFound; anything else wrong is a ParseError naming the file and, where it can,
// the line ("m.yaml:4: unknown key 'colour' …").
Result<BatchManifest> ReadBatchManifest(const std::filesystem::path& path);

}  // namespace chipfit
