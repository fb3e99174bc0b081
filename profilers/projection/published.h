// The published validation set (resources/hardware/validation/, docs/projection.md): latencies and
// throughputs that vendors and benchmark programmes published for known architectures on catalog
// devices, the layer features of those architectures, the efficiency per kind of device fitted on
// them, and the leave-one-device-out validation of projections against them.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/runtime/target.h"
#include "core/status.h"
#include "profilers/projection/catalog.h"
#include "profilers/projection/projection.h"
#include "profilers/run_result.h"

namespace chipfit {

// One published figure (a row of resources/hardware/validation/published-*.csv).
struct PublishedRow {
  std::string model, input, device;  // architecture, per-sample input ("224x224", "seq128"), catalog id
  Precision precision = Precision::kFp32;
  int batch = 1;
  std::string runtime;  // "tensorrt 8.4.3", "openvino 2024.3", "pytorch", …
  std::string metric;   // latency_ms | throughput_per_s
  double value = 0;
  int devices = 1;            // devices the figure used (a throughput of two sockets is two)
  std::string status = "ok";  // ok | "excluded: why" (kept in the file, reported, not fitted or scored)
  std::string includes, source, table, date, notes;
  std::string file;
  int line = 0;
  bool Used() const { return status == "ok"; }
  // One batch on one device, ms: the latency as published, or batch / (throughput per device).
  double MeasuredBatchMs() const;
};

// Reads one CSV file (RFC 4180, the header names the columns); an error names the file, line and column.
Result<std::vector<PublishedRow>> ParsePublishedCsv(const std::string& text, const std::string& file);
// Every published-*.csv in `dir`, in file order.
Result<std::vector<PublishedRow>> LoadPublishedSet(const std::filesystem::path& dir);
// The catalog's validation/ folder.
std::filesystem::path DefaultValidationDir();

// An architecture's compiled layers at batch 1 and 2 (features/<model>-<input>.json, written by
// scripts/make-validation-features.py): FLOPs, bytes and rows are affine in the batch, so any batch
// follows from the two exactly.
struct ArchitectureFeatures {
  std::string model, input;
  std::vector<LayerResult> b1, b2;
  std::vector<LayerFeature> AtBatch(int batch) const;
};
Result<ArchitectureFeatures> ParseArchitectureFeatures(const nlohmann::json& j, const std::string& file);
// Every features/*.json in `dir`, keyed "<model>-<input>".
Result<std::map<std::string, ArchitectureFeatures>> LoadArchitectureFeatures(const std::filesystem::path& dir);

// How a published figure ran: a compiled engine (TensorRT, OpenVINO, Neuron, QNN), a framework in eager
// mode (per-op dispatch from Python), or through a serving stack (client and transport in the time).
enum class RuntimeClass { kCompiled, kEager, kServed };
RuntimeClass RuntimeClassOf(const std::string& runtime);

struct PublishedValidation {
  nlohmann::json document;         // chipfit.published-validation/1
  PublishedEfficiency efficiency;  // fitted on every used row, with each kind's leave-one-device-out errors
};

// Fits the efficiency on the rows of `dir`, projects every row with its device left out of the fit, and
// scores chipfit against the η = 1 roofline and a fixed 70 % efficiency. `catalog`: the devices rows name.
Result<PublishedValidation> ValidatePublished(const std::filesystem::path& dir,
                                              const std::vector<HardwareSpec>& catalog);
// The table `project --validate-published` prints.
std::string PublishedValidationTable(const nlohmann::json& document);

// The efficiency file `project` reads (validation/efficiency.json); nullopt with a note when absent.
Result<PublishedEfficiency> LoadPublishedEfficiency(const std::filesystem::path& file);
std::filesystem::path DefaultEfficiencyFile();

}  // namespace chipfit
