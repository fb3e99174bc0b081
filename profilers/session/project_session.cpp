// `chipfit project` and `project --validate` (project_session.h).
#include "profilers/session/project_session.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "profilers/memory/ceilings.h"
#include "profilers/profile_json.h"

namespace chipfit {
namespace {

const std::vector<Precision> kAllPrecisions = {Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16,
                                               Precision::kInt8};

const DeviceInfo* FindDevice(const RunResult& run, const std::string& id) {
  for (const auto& d : run.machine.devices) {
    if (d.Id() == id) return &d;
  }
  return nullptr;
}

const CeilingReport* FindCeilings(const RunResult& run, const std::string& id) {
  for (const auto& c : run.ceilings) {
    if (c.device_id == id) return &c;
  }
  return nullptr;
}

std::string Family(DeviceKind kind) {
  return kind == DeviceKind::kCpu ? "cpu" : kind == DeviceKind::kOpenCL ? "opencl" : "cuda";
}

// A projected time rounded to what its band supports: two significant figures when the band is wider
// than ±25 %, three otherwise (a 1.234 ms projection with a ×/÷ 2 band reads 1.2).
std::string Rounded(double v, double p10, double p90) {
  const int digits = v > 0 && (p90 - p10) / v > 0.5 ? 2 : 3;
  return fmt::format("{:.{}g}", v, digits);
}

std::string Ms(double v) {
  return v >= 100 ? fmt::format("{:.0f}", v) : v >= 1 ? fmt::format("{:.2f}", v) : fmt::format("{:.3f}", v);
}

double NumberOr(const nlohmann::json& j, const char* key, double fallback) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

}  // namespace

Result<std::vector<HardwareSpec>> SelectHardware(const ProjectRequest& request) {
  ASSIGN_OR_RETURN(std::vector<HardwareSpec> catalog, LoadHardwareCatalog(DefaultHardwareDir()));
  std::vector<HardwareSpec> chosen;
  std::set<std::string> wanted(request.hardware.begin(), request.hardware.end());
  for (const auto& path : request.hardware_files) {
    ASSIGN_OR_RETURN(HardwareSpec spec, LoadHardwareFile(path));
    for (const auto& c : catalog) {
      if (c.id == spec.id) {
        return InvalidArgument(fmt::format(
            "--hardware-file {}: id '{}' is already the catalog's ({}); give yours another id", path, spec.id, c.file));
      }
    }
    for (const auto& c : chosen) {
      if (c.id == spec.id) {
        return InvalidArgument(fmt::format("--hardware-file {}: id '{}' is also in {}", path, spec.id, c.file));
      }
    }
    chosen.push_back(std::move(spec));
  }
  std::vector<std::string> known;
  for (const auto& c : catalog) known.push_back(c.id);
  for (const auto& id : wanted) {
    const bool in_catalog = std::find(known.begin(), known.end(), id) != known.end();
    const bool in_files = std::any_of(chosen.begin(), chosen.end(), [&](const HardwareSpec& s) { return s.id == id; });
    if (!in_catalog && !in_files) {
      return InvalidArgument(fmt::format("--hardware: no device '{}' in the catalog ({}); known: {}", id,
                                         DefaultHardwareDir().string(), fmt::join(known, ", ")));
    }
  }
  for (auto& c : catalog) {
    if (request.all_hardware || wanted.contains(c.id)) chosen.push_back(std::move(c));
  }
  if (chosen.empty())
    return InvalidArgument("project: give --hardware ID,... , --all-hardware or --hardware-file FILE");
  return chosen;
}

std::vector<CalibrationSample> LocalCalibrationSamples(const RunResult& run) {
  std::vector<CalibrationSample> samples;
  const DeviceInfo* cpu = FindDevice(run, "cpu");
  const CeilingReport* cpu_ceilings = FindCeilings(run, "cpu");
  for (const auto& t : run.targets) {
    if (t->status != "ok") continue;
    const std::string id = t->target.DeviceId();
    const DeviceInfo* device = FindDevice(run, id);
    if (device == nullptr) continue;
    auto spec = LocalHardwareSpec(*device, FindCeilings(run, id), cpu, cpu_ceilings);
    if (!spec) continue;
    samples.push_back({*spec, t.get(), Family(t->target.kind), t->target.ToString()});
  }
  return samples;
}

const TargetResult* FeatureSource(const RunResult& run) {
  if (const TargetResult* t = run.FindTarget("cpu:fp32"); t != nullptr && t->status == "ok") return t;
  const TargetResult* first = nullptr;
  for (const auto& t : run.targets) {
    if (t->status != "ok" || t->layers.empty()) continue;
    if (t->target.precision == Precision::kFp32) return t.get();
    if (first == nullptr) first = t.get();
  }
  return first;
}

Result<nlohmann::json> ProjectRun(const RunResult& run, const std::vector<HardwareSpec>& hardware,
                                  const std::vector<Precision>& precisions) {
  const TargetResult* source = FeatureSource(run);
  if (source == nullptr) {
    return InvalidArgument("project: no target of the local profile ran, so there are no layers to project from");
  }
  const auto samples = LocalCalibrationSamples(run);
  Calibration calibration = Calibrate(samples);
  // The efficiency learned from published measurements (project --validate-published --write-efficiency):
  // what the vendors' runtimes reach on each kind of device.
  if (auto published = LoadPublishedEfficiency(DefaultEfficiencyFile()); published.ok()) {
    calibration.published = std::move(*published);
  } else {
    calibration.notes.push_back(
        "no published efficiency (" + published.status().message() +
        "): catalog devices are projected with chipfit's priors and this machine's calibration");
  }
  // This machine's CPU and its measured p50s: a bigger catalog CPU is never projected slower.
  if (const DeviceInfo* cpu = FindDevice(run, "cpu"); cpu != nullptr) {
    calibration.local_cpu = LocalHardwareSpec(*cpu, FindCeilings(run, "cpu"));
    for (const auto& t : run.targets) {
      if (t->status == "ok" && t->target.kind == DeviceKind::kCpu && t->latency.p50 > 0) {
        calibration.local_cpu_p50_ms[t->target.precision] = t->latency.p50;
      }
    }
  }
  const auto features = FeaturesOf(*source);
  ProjectOptions options;
  options.model_bytes = static_cast<double>(source->peak_memory_bytes);
  nlohmann::json projections = nlohmann::json::array();
  for (const auto& spec : hardware) {
    for (Precision p : precisions.empty() ? kAllPrecisions : precisions) {
      const Projection projection = Project(features, spec, p, calibration, options);
      projections.push_back(ProjectionToJson(projection));
    }
  }
  return nlohmann::json{{"schema", kProjectionSchema},
                        {"chipfit_version", run.chipfit_version},
                        {"model", {{"path", run.model.path}, {"sha256", run.model.sha256}}},
                        {"inputs", run.inputs.shapes},
                        {"projected_from", source->target.ToString()},
                        {"calibration", CalibrationToJson(calibration)},
                        {"projections", projections}};
}

std::string ProjectionTable(const nlohmann::json& document) {
  std::string out = fmt::format("{:<28} {:>8} {:>13} {:>9} {:>10} {:>9} {:>16}  {}\n", "projected target", "p50 ms",
                                "P10–P90 ms", "inf/s", "energy J*", "$/1M inf", "validated (kind)", "notes");
  for (const auto& p : document["projections"]) {
    const std::string target = p.value("target", std::string());
    if (p.value("status", std::string()) != "ok") {
      out += fmt::format("{:<28} {:>8} {:>13} {:>9} {:>10} {:>9} {:>16}  unsupported: {}\n", target, "-", "-", "-", "-",
                         "-", "-", p["reason"].is_string() ? p["reason"].get<std::string>() : "");
      continue;
    }
    const double energy = p["energy_j"].is_object() ? NumberOr(p["energy_j"], "value", 0) : 0;
    const std::string cost =
        p["cost_per_million"].is_number() ? fmt::format("{:.2g}", p["cost_per_million"].get<double>()) : "-";
    const double p50 = NumberOr(p, "p50_ms", 0), p10 = NumberOr(p, "p10_ms", 0), p90 = NumberOr(p, "p90_ms", 0);
    // The leave-one-device-out median |error| of published measurements on devices of this kind.
    const std::string validated =
        p.contains("validated_error") && p["validated_error"].is_number()
            ? fmt::format("±{:.0f} % ({} rows)", 100 * p["validated_error"].get<double>(), p.value("validated_rows", 0))
            : "not validated";
    out += fmt::format(
        "{:<28} {:>8} {:>13} {:>9.3g} {:>10.2g} {:>9} {:>16}  {}\n", target, Rounded(p50, p10, p90),
        Rounded(p10, p10, p90) + "–" + Rounded(p90, p10, p90), NumberOr(p, "throughput_per_s", 0), energy, cost,
        validated, p.contains("runtime") && p["runtime"].is_string() ? "as " + p["runtime"].get<std::string>() : "");
  }
  const auto& cal = document["calibration"];
  out +=
      "* energy is estimated: time × (idle + (TDP − idle) × utilisation); cost = catalog price × p50, one inference "
      "at a time\n";
  out +=
      fmt::format("projected from the layers of {}; calibrated on {}", document.value("projected_from", std::string()),
                  fmt::join(cal["calibrated_on"].get<std::vector<std::string>>(), ", "));
  if (cal["local_median_abs_error"].is_number()) {
    out += fmt::format("; leave-one-out median |error| on the local targets {:.1f} %",
                       100 * cal["local_median_abs_error"].get<double>());
  }
  out += "\n";
  for (const auto& n : cal["notes"]) out += "note: " + n.get<std::string>() + "\n";
  return out;
}

namespace {

// One local configuration of the validation: how its profile is run and how it is described.
struct Configuration {
  std::string id;           // "avx2"
  std::string env;          // environment of its child process
  std::string extra_flags;  // more profile flags
  std::vector<std::string> targets;
  std::string description;
};

std::vector<Configuration> Configurations(bool has_bf16) {
  std::vector<std::string> cpu_all = {"cpu:fp32", "cpu:int8"};
  if (has_bf16) cpu_all.insert(cpu_all.begin() + 1, "cpu:bf16");
  return {
      {"full", "", "", cpu_all, "this CPU, every ISA extension and thread (calibration only)"},
      {"avx2", "ONEDNN_MAX_CPU_ISA=AVX2", "", {"cpu:fp32", "cpu:int8"}, "oneDNN limited to AVX2"},
      {"1-thread", "OMP_NUM_THREADS=1", "--threads 1", cpu_all, "one thread"},
      {"no-vnni-bf16",
       "ONEDNN_MAX_CPU_ISA=AVX512_CORE",
       "",
       {"cpu:fp32", "cpu:int8"},
       "oneDNN limited to AVX-512 without VNNI and bf16"},
      {"opencl", "", "", {"opencl:0:fp32", "opencl:0:fp16"}, "the OpenCL device (POCL on this CPU)"},
  };
}

DeviceInfo WithoutFeatures(DeviceInfo d, const std::vector<std::string>& prefixes, bool drop_bf16) {
  std::erase_if(d.features, [&](const std::string& f) {
    return std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) { return f.rfind(p, 0) == 0; });
  });
  for (auto& ps : d.precisions) {
    if (drop_bf16 && ps.precision == Precision::kBf16)
      ps.support = Support::No("held out: no bf16 in this configuration");
  }
  return d;
}

// Every figure of a local entry gets its source, so the written file loads as a catalog entry.
void SourceEverything(HardwareSpec& spec, const std::string& why) {
  spec.clock_ghz = spec.clock_ghz > 0 ? spec.clock_ghz : 1;
  for (const auto& key : HardwareFigureKeys()) {
    if (spec.sources.contains(key)) continue;
    spec.sources[key] = {why, ""};
  }
  // Keep only sources of figures present.
  std::erase_if(spec.sources, [&](const auto& kv) {
    const std::string& k = kv.first;
    if (k.rfind("peak_gflops.", 0) == 0) {
      auto p = ParsePrecision(k.substr(12));
      return !p || !spec.peak_gflops.contains(*p);
    }
    if (k == "on_chip_memory_mb") return !spec.on_chip_memory_mb.has_value();
    if (k == "matrix_tile") return !spec.matrix_tile.has_value();
    if (k == "price_per_hour_usd") return !spec.price_per_hour_usd.has_value();
    return false;
  });
}

std::optional<HardwareSpec> ConfigSpec(const RunResult& full, const Configuration& c) {
  const DeviceInfo* cpu = FindDevice(full, "cpu");
  const CeilingReport* cpu_ceilings = FindCeilings(full, "cpu");
  if (cpu == nullptr) return std::nullopt;
  std::optional<HardwareSpec> spec;
  if (c.id == "opencl") {
    const DeviceInfo* ocl = FindDevice(full, "opencl:0");
    if (ocl == nullptr) return std::nullopt;
    spec = LocalHardwareSpec(*ocl, FindCeilings(full, "opencl:0"), cpu, cpu_ceilings);
  } else if (c.id == "avx2") {
    spec = LocalHardwareSpec(WithoutFeatures(*cpu, {"avx512", "amx", "avx_vnni"}, true), cpu_ceilings);
  } else if (c.id == "no-vnni-bf16") {
    spec =
        LocalHardwareSpec(WithoutFeatures(*cpu, {"avx512_vnni", "avx512_bf16", "amx", "avx_vnni"}, true), cpu_ceilings);
  } else if (c.id == "1-thread") {
    DeviceInfo one = *cpu;
    one.compute_units = 1;
    spec = LocalHardwareSpec(one, cpu_ceilings);
    // One core of a VM reaches most of its memory bandwidth: the whole machine's triad is kept.
  } else {
    spec = LocalHardwareSpec(*cpu, cpu_ceilings);
  }
  if (!spec) return std::nullopt;
  spec->id = "local-" + c.id;
  spec->name = fmt::format("{} ({})", spec->name, c.description);
  std::string clock_source;
  spec->clock_ghz = CpuClockGhz("/", &clock_source).value_or(1);
  spec->tdp_w = 1;  // a VM's share of a CPU has no published power: energy of these entries is not meaningful
  spec->idle_w = 0;
  SourceEverything(*spec,
                   "this machine (validation entry): theoretical peaks from cores × clock × FLOP/cycle, "
                   "bandwidth measured by devices --measure; power unknown (placeholder 1 W)");
  return spec;
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

Result<RunResult> ProfileConfiguration(const ValidationOptions& o, const std::filesystem::path& model,
                                       const Configuration& c, const std::vector<std::string>& targets,
                                       const std::filesystem::path& json) {
  std::string command = c.env.empty() ? "" : c.env + " ";
  command += Quote(o.chipfit.string()) + " profile " + Quote(model.string()) + " --targets " +
             Quote(fmt::format("{}", fmt::join(targets, ","))) + " --json " + Quote(json.string()) +
             " --no-store --quiet --warmup 3 --drift-samples 1 --int8-all-layers --no-accuracy-guard" +
             fmt::format(" --iterations {} --min-time {}", o.iterations, o.min_time_s);
  if (!c.extra_flags.empty()) command += " " + c.extra_flags;
  // "STEM:NAME=dims" binds only the model whose file stem is STEM; "NAME=dims" binds every model.
  for (const auto& s : o.shapes) {
    const auto colon = s.find(':'), equals = s.find('=');
    if (colon != std::string::npos && colon < equals) {
      if (s.substr(0, colon) == model.stem().string()) command += " --shape " + Quote(s.substr(colon + 1));
    } else {
      command += " --shape " + Quote(s);
    }
  }
  command += " > " + Quote(json.string() + ".log") + " 2>&1";
  const int rc = std::system(command.c_str());
  if (rc != 0) {
    return Internal(fmt::format("validation: profiling {} under '{}' failed (exit {}); see {}.log", model.string(),
                                c.id, rc, json.string()));
  }
  std::ifstream in(json);
  nlohmann::json j;
  try {
    in >> j;
  } catch (const std::exception& e) {
    return ParseError(fmt::format("{}: {}", json.string(), e.what()));
  }
  return RunResultFromJson(j);
}

struct Summary {
  std::vector<double> abs_errors;
  int in_band = 0, banded = 0;
};

nlohmann::json Summarise(const Summary& s) {
  auto share = [&](double limit) {
    if (s.abs_errors.empty()) return 0.0;
    return static_cast<double>(
               std::count_if(s.abs_errors.begin(), s.abs_errors.end(), [&](double e) { return e <= limit; })) /
           static_cast<double>(s.abs_errors.size());
  };
  std::vector<double> sorted = s.abs_errors;
  std::sort(sorted.begin(), sorted.end());
  auto q = [&](double f) {
    if (sorted.empty()) return 0.0;
    return sorted[std::min(sorted.size() - 1,
                           static_cast<size_t>(std::ceil(f * static_cast<double>(sorted.size())) - 1))];
  };
  nlohmann::json j = {{"n", s.abs_errors.size()},
                      {"median_abs_error", q(0.5)},
                      {"p90_abs_error", q(0.9)},
                      {"within_10", share(0.10)},
                      {"within_25", share(0.25)}};
  if (s.banded > 0) j["in_band"] = static_cast<double>(s.in_band) / s.banded;
  return j;
}

}  // namespace

Result<nlohmann::json> ValidateProjection(const ValidationOptions& o,
                                          const std::function<void(const std::string&)>& progress) {
  for (const auto& c : o.configurations) {
    const auto all = Configurations(true);
    if (c == "full" || std::none_of(all.begin(), all.end(), [&](const Configuration& k) { return k.id == c; })) {
      return InvalidArgument("--configurations: '" + c + "' is not one of avx2, 1-thread, no-vnni-bf16, opencl");
    }
  }
  if (o.models.empty()) return InvalidArgument("project --validate: give at least one MODEL");
  std::error_code ec;
  std::filesystem::create_directories(o.work_dir, ec);
  if (ec) return IoError(fmt::format("--work-dir {}: {}", o.work_dir.string(), ec.message()));
  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json taus = nlohmann::json::array();
  nlohmann::json entries = nlohmann::json::array();
  std::map<std::string, Summary> summaries;  // method → errors
  for (const auto& model : o.models) {
    const std::string stem = model.stem().string();
    // The full configuration first: its machine description is where every entry comes from.
    const auto probe = Configurations(true);
    progress(fmt::format("{}: profiling configuration full", stem));
    ASSIGN_OR_RETURN(RunResult full,
                     ProfileConfiguration(o, model, probe[0], {"cpu:fp32"}, o.work_dir / (stem + "-probe.json")));
    const DeviceInfo* cpu = FindDevice(full, "cpu");
    const bool has_bf16 = cpu != nullptr && cpu->SupportFor(Precision::kBf16).ok;
    const bool has_opencl = FindDevice(full, "opencl:0") != nullptr;
    std::vector<Configuration> configs;
    for (const auto& c : Configurations(has_bf16)) {
      const bool wanted = o.configurations.empty() || c.id == "full" ||
                          std::find(o.configurations.begin(), o.configurations.end(), c.id) != o.configurations.end();
      if (wanted && (c.id != "opencl" || has_opencl)) configs.push_back(c);
    }
    std::map<std::string, RunResult> runs;
    std::map<std::string, HardwareSpec> specs;
    for (const auto& c : configs) {
      progress(fmt::format("{}: profiling configuration {} ({})", stem, c.id, fmt::join(c.targets, ",")));
      ASSIGN_OR_RETURN(runs[c.id],
                       ProfileConfiguration(o, model, c, c.targets, o.work_dir / (stem + "-" + c.id + ".json")));
      auto spec = ConfigSpec(full, c);
      if (!spec) return Internal("validation: no description of configuration " + c.id + " (no ceilings measured?)");
      specs[c.id] = *spec;
      const auto entry_path = o.work_dir / (spec->id + ".yaml");
      std::ofstream(entry_path) << HardwareSpecToYaml(*spec);
      if (&model == &o.models.front()) entries.push_back(entry_path.string());
    }
    const TargetResult* source = FeatureSource(runs["full"]);
    if (source == nullptr) return Internal("validation: cpu:fp32 did not run on " + model.string());
    const auto features = FeaturesOf(*source);
    std::vector<double> projected_p50, measured_p50;
    for (const auto& held : configs) {
      if (held.id == "full") continue;
      std::vector<CalibrationSample> samples;
      for (const auto& c : configs) {
        if (c.id == held.id) continue;
        for (const auto& t : runs[c.id].targets) {
          if (t->status == "ok") {
            samples.push_back(
                {specs[c.id], t.get(), c.id == "opencl" ? "opencl" : "cpu", c.id + " " + t->target.ToString()});
          }
        }
      }
      const Calibration cal = Calibrate(samples);
      for (const auto& t : runs[held.id].targets) {
        nlohmann::json row = {{"model", stem}, {"configuration", held.id}, {"target", t->target.ToString()}};
        if (t->status != "ok") {
          row["status"] = t->status;
          row["error"] = t->error;
          rows.push_back(row);
          continue;
        }
        const Precision p = t->target.precision;
        const Projection proj = Project(features, specs[held.id], p, cal);
        const Projection roof = Project(features, specs[held.id], p, cal, {.model = ProjectionModel::kRoofline});
        const Projection fixed = Project(features, specs[held.id], p, cal, {.model = ProjectionModel::kFixed70});
        if (proj.status != "ok") {
          row["status"] = "unsupported";
          row["error"] = proj.reason;
          rows.push_back(row);
          continue;
        }
        const double measured = t->latency.p50;
        const double err = proj.p50_ms / measured - 1;
        const bool in_band = measured >= proj.p10_ms && measured <= proj.p90_ms;
        row.update({{"status", "ok"},
                    {"projected_ms", proj.p50_ms},
                    {"p10_ms", proj.p10_ms},
                    {"p90_ms", proj.p90_ms},
                    {"measured_ms", measured},
                    {"error", err},
                    {"in_band", in_band},
                    {"roofline_ms", roof.p50_ms},
                    {"roofline_error", roof.p50_ms / measured - 1},
                    {"fixed70_ms", fixed.p50_ms},
                    {"fixed70_error", fixed.p50_ms / measured - 1}});
        rows.push_back(row);
        summaries["chipfit"].abs_errors.push_back(std::abs(err));
        summaries["chipfit"].banded += 1;
        summaries["chipfit"].in_band += in_band ? 1 : 0;
        summaries["roofline"].abs_errors.push_back(std::abs(roof.p50_ms / measured - 1));
        summaries["fixed70"].abs_errors.push_back(std::abs(fixed.p50_ms / measured - 1));
        projected_p50.push_back(proj.p50_ms);
        measured_p50.push_back(measured);
      }
    }
    // τ of the held-out targets' ranking, per model and method.
    std::vector<double> roof_p50, fixed_p50;
    for (const auto& r : rows) {
      if (r["model"] == stem && r.value("status", std::string()) == "ok") {
        roof_p50.push_back(r["roofline_ms"].get<double>());
        fixed_p50.push_back(r["fixed70_ms"].get<double>());
      }
    }
    auto tau = [](std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    taus.push_back({{"model", stem},
                    {"chipfit", tau(KendallTau(projected_p50, measured_p50))},
                    {"roofline", tau(KendallTau(roof_p50, measured_p50))},
                    {"fixed70", tau(KendallTau(fixed_p50, measured_p50))}});
  }
  nlohmann::json summary;
  for (const auto& [method, s] : summaries) summary[method] = Summarise(s);
  for (const char* method : {"chipfit", "roofline", "fixed70"}) {
    std::vector<double> values;
    for (const auto& t : taus) {
      if (t[method].is_number()) values.push_back(t[method].get<double>());
    }
    if (!values.empty() && summary.contains(method)) {
      std::sort(values.begin(), values.end());
      summary[method]["kendall_tau_median"] = values[values.size() / 2];
      summary[method]["kendall_tau_min"] = values.front();
    }
  }
  return nlohmann::json{{"schema", "chipfit.projection-validation/1"},
                        {"rows", rows},
                        {"kendall_tau", taus},
                        {"summary", summary},
                        {"held_out_entries", entries},
                        {"goals", {{"median_abs_error", 0.15}, {"in_band", 0.80}, {"kendall_tau", 0.9}}}};
}

std::string ValidationTable(const nlohmann::json& d) {
  std::string out =
      fmt::format("{:<22} {:<13} {:<14} {:>10} {:>19} {:>10} {:>8} {:>5} {:>9} {:>9}\n", "model", "held out", "target",
                  "projected", "P10–P90 ms", "measured", "error", "band", "η=1 err", "70% err");
  for (const auto& r : d["rows"]) {
    if (r.value("status", std::string()) != "ok") {
      out += fmt::format("{:<22} {:<13} {:<14} {}: {}\n", r["model"].get<std::string>(),
                         r["configuration"].get<std::string>(), r["target"].get<std::string>(),
                         r.value("status", std::string()), r.value("error", std::string()));
      continue;
    }
    out += fmt::format(
        "{:<22} {:<13} {:<14} {:>10} {:>19} {:>10} {:>+7.1f}% {:>5} {:>+8.1f}% {:>+8.1f}%\n",
        r["model"].get<std::string>(), r["configuration"].get<std::string>(), r["target"].get<std::string>(),
        Ms(r["projected_ms"].get<double>()), Ms(r["p10_ms"].get<double>()) + "–" + Ms(r["p90_ms"].get<double>()),
        Ms(r["measured_ms"].get<double>()), 100 * r["error"].get<double>(), r["in_band"].get<bool>() ? "yes" : "no",
        100 * r["roofline_error"].get<double>(), 100 * r["fixed70_error"].get<double>());
  }
  out += "\n";
  for (const char* method : {"chipfit", "roofline", "fixed70"}) {
    if (!d["summary"].contains(method)) continue;
    const auto& s = d["summary"][method];
    out +=
        fmt::format("{:<9} median |err| {:5.1f} %  P90 |err| {:5.1f} %  within ±10 % {:5.1f} %  within ±25 % {:5.1f} %",
                    method, 100 * s["median_abs_error"].get<double>(), 100 * s["p90_abs_error"].get<double>(),
                    100 * s["within_10"].get<double>(), 100 * s["within_25"].get<double>());
    if (s.contains("in_band")) out += fmt::format("  in band {:5.1f} %", 100 * s["in_band"].get<double>());
    if (s.contains("kendall_tau_median")) {
      out += fmt::format("  τ median {:.2f} (min {:.2f})", s["kendall_tau_median"].get<double>(),
                         s["kendall_tau_min"].get<double>());
    }
    out += "\n";
  }
  out += "goals: median |err| ≤ 15 %, ≥ 80 % inside the P10–P90 band, τ ≥ 0.9\n";
  return out;
}

}  // namespace chipfit
