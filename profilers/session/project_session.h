// `chipfit project` (docs/projection.md): a model's projected targets on catalog hardware, calibrated
// on a profile of this machine's devices, and `project --validate`, which holds out local
// configurations (AVX2 only, one thread, no VNNI/bf16, the OpenCL device), describes each as a
// catalog entry, projects it from the others and measures it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/runtime/target.h"
#include "core/status.h"
#include "profilers/projection/catalog.h"
#include "profilers/projection/projection.h"
#include "profilers/projection/published.h"
#include "profilers/run_result.h"

namespace chipfit {

struct ProjectRequest {
  std::vector<std::string> hardware;  // catalog ids; empty with all_hardware
  bool all_hardware = false;
  std::vector<std::string> hardware_files;  // --hardware-file: the user's own devices
  std::vector<Precision> precisions;        // empty: fp32, tf32, fp16, bf16, int8
};

// The catalog plus the user's files, narrowed to the ids asked for; an unknown id is an error listing
// the known ones, a user file whose id is taken is an error naming both files.
Result<std::vector<HardwareSpec>> SelectHardware(const ProjectRequest& request);

// The calibration samples of a measured run: each ok target on a device the run describes, with the
// device's local spec (LocalHardwareSpec) and its family ("cpu", "opencl", "cuda").
std::vector<CalibrationSample> LocalCalibrationSamples(const RunResult& run);

// The layers a projection starts from: the run's cpu:fp32 target, else its first ok fp32 target,
// else its first ok target; nullptr when none ran.
const TargetResult* FeatureSource(const RunResult& run);

// Every hardware × precision of the request projected from `run`, calibrated on its local targets:
// the chipfit.projection/1 document ({"schema", "model", "calibration", "projections"}).
Result<nlohmann::json> ProjectRun(const RunResult& run, const std::vector<HardwareSpec>& hardware,
                                  const std::vector<Precision>& precisions);

// The table `project` prints: per projection, p50 and its P10–P90 band, throughput, estimated
// energy, cost per million, or the reason it is unsupported.
std::string ProjectionTable(const nlohmann::json& document);

// `project --validate`: the held-out configurations of this machine.
struct ValidationOptions {
  std::vector<std::filesystem::path> models;
  std::vector<std::string> shapes;  // NAME=dims for every model, or STEM:NAME=dims for the model file STEM.onnx
  std::filesystem::path chipfit;    // the binary that profiles each configuration (a child process each)
  std::filesystem::path work_dir;   // profiles and the held-out catalog entries are written here
  double min_time_s = 0.5;
  int iterations = 20;
  std::vector<std::string> configurations;  // empty: all (avx2, 1-thread, no-vnni-bf16, opencl)
};

// Runs the validation; the document has one row per model × configuration × precision (projected
// p50 and band, measured p50, error, in band; the two baselines' errors) and the summary statistics.
Result<nlohmann::json> ValidateProjection(const ValidationOptions& options,
                                          const std::function<void(const std::string&)>& progress);
std::string ValidationTable(const nlohmann::json& document);

}  // namespace chipfit
