// The batch manifest of `chipfit batch` (docs/manifest.md): models × targets × limits, read from YAML.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "profilers/session/profile_session.h"

namespace chipfit {

// int8 calibration, as `profile --calibration …` takes it (a `calibration:` map).
struct BatchCalibration {
  std::string method = "minmax";  // minmax | entropy | percentile
  double percentile = 99.99;
  int samples = 8;  // seeded random samples without data
  std::vector<std::string> keep_fp32;
  double auto_fp32_sqnr = 0;
  double auto_fp32_agreement = 0;  // percent
  bool int8_all_layers = false;    // also the layers where int8 measures no faster than fp32
};

struct BatchModel {
  std::filesystem::path path;       // resolved against the manifest's folder
  std::vector<std::string> shapes;  // NAME=DxD…
  std::string data;                 // resolved against the manifest's folder; empty: none
  int line = 0;                     // of the entry in the manifest, for messages
  // This model's own targets:, limits: and calibration:, over the manifest's (limits key by key).
  std::optional<std::string> targets;  // "T1,T2" or "all"
  std::optional<Limits> limits;
  std::optional<BatchCalibration> calibration;
  std::optional<std::string> preprocess;  // images in data: (the --preprocess text), over the manifest's
  std::optional<int> sample_rate;         // .wav files in data:, over the manifest's
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
  int threads = 0;  // 0: every core
  BatchCalibration calibration;
  bool fail_on_inconclusive = false;  // an inconclusive verdict against the baseline fails the batch
  // Confirmation profiles of a model inconclusive against its baseline (`confirm:`); unset: --confirm or 2.
  std::optional<int> confirm;
  std::string preprocess;   // images in a model's data: (the --preprocess text)
  int sample_rate = 16000;  // .wav files in a model's data:
};

// Reads and checks `path`: every model file exists and has every dynamic input dim bound in its
// shapes:, every target, limit, objective, weight and calibration setting parses.
// A missing file is NotFound; anything else wrong is a ParseError naming the file and, where it can,
// the line ("m.yaml:4: unknown key 'colour' …").
Result<BatchManifest> ReadBatchManifest(const std::filesystem::path& path);

}  // namespace chipfit
