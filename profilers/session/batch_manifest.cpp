// Reading the batch manifest: YAML → BatchManifest, each error naming the file and line.
#include "profilers/session/batch_manifest.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <system_error>
#include <utility>

#include "core/graph/model_summary.h"
#include "core/graph/onnx_loader.h"
#include "core/quant/calibration.h"
#include "core/quant/preprocess.h"
#include "core/recommend/recommend.h"
#include "core/runtime/target.h"
#include "core/suggest.h"
#include "yaml-cpp/yaml.h"

namespace chipfit {
namespace {

// ": did you mean 'shapes'?" when a known key is near `key`, else "".
std::string DidYouMean(const std::string& key, const std::vector<std::string>& known) {
  const auto nearest = NearestName(key, known);
  return nearest ? ": did you mean '" + *nearest + "'?" : "";
}

using Bad = std::function<Status(const YAML::Node&, const std::string&)>;

// targets: [cpu:fp32, …] or all → "cpu:fp32,…" or "all".
Result<std::string> ReadTargets(const YAML::Node& v, const Bad& bad) {
  if (v.IsScalar() && v.as<std::string>() == "all") return std::string("all");
  if (!v.IsSequence() || v.size() == 0) return bad(v, "targets: needs a list of targets or 'all'");
  std::string targets;
  for (const YAML::Node& t : v) {
    const auto text = t.as<std::string>();
    if (auto parsed = ParseTarget(text); !parsed.ok()) return bad(t, parsed.status().message());
    targets += (targets.empty() ? "" : ",") + text;
  }
  return targets;
}

// limits: {max_latency_ms: 5, …} over `limits` (keys given replace those there).
Status ReadLimits(const YAML::Node& v, Limits& limits, const Bad& bad) {
  if (!v.IsMap()) return bad(v, "limits: needs a mapping");
  for (const auto& l : v) {
    const auto name = l.first.as<std::string>();
    if (name == "accuracy_guard") {
      limits.accuracy_guard = l.second.as<bool>();
      continue;
    }
    if (name == "rank_unreliable") {
      limits.rank_unreliable = l.second.as<bool>();
      continue;
    }
    if (name == "latency_stat") {
      limits.latency_stat = l.second.as<std::string>();
      limits.latency_stat_given = true;
      if (limits.latency_stat != "p50" && limits.latency_stat != "p90" && limits.latency_stat != "p99")
        return bad(l.second, "latency_stat: needs p50, p90 or p99");
      continue;
    }
    const double value = l.second.as<double>();
    if (name == "max_latency_ms")
      limits.max_latency_ms = value;
    else if (name == "min_top1")
      limits.min_top1 = value;
    else if (name == "min_sqnr_db")
      limits.min_sqnr_db = value;
    else if (name == "max_memory_mb")
      limits.max_memory_mb = value;
    else if (name == "max_energy_mj")
      limits.max_energy_mj = value;
    else
      return bad(l.first,
                 "unknown limit '" + name + "'" +
                     DidYouMean(name, {"max_latency_ms", "latency_stat", "min_top1", "min_sqnr_db", "max_memory_mb",
                                       "max_energy_mj", "accuracy_guard", "rank_unreliable"}) +
                     " (max_latency_ms, latency_stat, min_top1, min_sqnr_db, max_memory_mb, max_energy_mj, "
                     "accuracy_guard, rank_unreliable)");
  }
  return Status::Ok();
}

// preprocess: {resize: 640x640, channels: bgr, mean: [0.485, 0.456, 0.406], …} (or the --preprocess text)
// as the text --preprocess takes, checked here so a typo fails before any model runs.
Result<std::string> ReadPreprocess(const YAML::Node& v, const Bad& bad) {
  std::string text;
  if (v.IsScalar()) {
    text = v.as<std::string>();
  } else if (v.IsMap()) {
    for (const auto& f : v) {
      std::string value;
      if (f.second.IsSequence()) {
        for (const YAML::Node& item : f.second) value += (value.empty() ? "" : "/") + item.as<std::string>();
      } else {
        value = f.second.as<std::string>();
      }
      text += (text.empty() ? "" : ",") + f.first.as<std::string>() + "=" + value;
    }
  } else {
    return bad(v, "preprocess: needs a mapping (resize, channels, scale, mean, std, layout)");
  }
  if (auto parsed = ParsePreprocess(text); !parsed.ok()) return bad(v, "preprocess: " + parsed.status().message());
  return text;
}

// sample_rate: the rate every .wav of a data folder must have.
Result<int> ReadSampleRate(const YAML::Node& v, const Bad& bad) {
  const int rate = v.as<int>();
  if (rate < 1) return bad(v, "sample_rate: needs a rate in Hz");
  return rate;
}

// calibration: {method: entropy, percentile: 99.9, samples: 8, keep_fp32: [node, …], auto_fp32_sqnr: 30,
// auto_fp32_agreement: 99, int8_all_layers: false}.
Status ReadCalibration(const YAML::Node& v, BatchCalibration& c, const Bad& bad) {
  if (!v.IsMap())
    return bad(
        v,
        "calibration: needs a mapping (method, percentile, samples, keep_fp32, auto_fp32_sqnr, auto_fp32_agreement, "
        "int8_all_layers)");
  for (const auto& f : v) {
    const auto key = f.first.as<std::string>();
    if (key == "method") {
      c.method = f.second.as<std::string>();
      if (!ParseCalibrationMethod(c.method)) return bad(f.second, "method: needs minmax, entropy or percentile");
    } else if (key == "percentile") {
      c.percentile = f.second.as<double>();
      if (!(c.percentile > 50 && c.percentile <= 100)) return bad(f.second, "percentile: needs a value in (50, 100]");
    } else if (key == "samples") {
      c.samples = f.second.as<int>();
      if (c.samples < 1) return bad(f.second, "samples: needs at least 1");
    } else if (key == "keep_fp32") {
      if (!f.second.IsSequence()) return bad(f.second, "keep_fp32: needs a list of node names");
      for (const YAML::Node& n : f.second) c.keep_fp32.push_back(n.as<std::string>());
    } else if (key == "auto_fp32_sqnr") {
      c.auto_fp32_sqnr = f.second.as<double>();
    } else if (key == "auto_fp32_agreement") {
      c.auto_fp32_agreement = f.second.as<double>();
      if (!(c.auto_fp32_agreement >= 0 && c.auto_fp32_agreement <= 100)) {
        return bad(f.second, "calibration: auto_fp32_agreement is a percentage (0 to 100)");
      }
    } else if (key == "int8_all_layers") {
      c.int8_all_layers = f.second.as<bool>();
    } else {
      return bad(f.first, "unknown calibration key '" + key + "'" +
                              DidYouMean(key, {"method", "percentile", "samples", "keep_fp32", "auto_fp32_sqnr",
                                               "auto_fp32_agreement", "int8_all_layers"}) +
                              " (method, percentile, samples, keep_fp32, auto_fp32_sqnr, auto_fp32_agreement, "
                              "int8_all_layers)");
    }
  }
  return Status::Ok();
}

// Every dynamic dim of the model's inputs needs a binding in shapes:, and every binding an input.
Status CheckShapes(const BatchModel& bm, const YAML::Node& entry, const Bad& bad) {
  auto model = LoadOnnxModel(bm.path, {.run_checker = false, .infer_shapes = false});
  if (!model.ok()) return bad(entry, model.status().message());
  const ModelSummary summary = Summarize(*model);
  std::map<std::string, bool> bound;
  for (const std::string& s : bm.shapes) bound[s.substr(0, s.find('='))] = false;
  std::string inputs;
  for (const TensorSpec& input : summary.inputs) {
    inputs += (inputs.empty() ? "" : ", ") + input.name;
    const bool dynamic = !input.has_shape || std::any_of(input.dims.begin(), input.dims.end(),
                                                         [](const DimSpec& d) { return !d.is_static(); });
    if (const auto it = bound.find(input.name); it != bound.end()) {
      it->second = true;
    } else if (dynamic) {
      return bad(entry, "model '" + bm.path.string() + "': input '" + input.name + "' has dynamic dims (" +
                            FormatDims(input) + "); bind them under shapes: (e.g. shapes: {" + input.name +
                            ": 1x3x224x224})");
    }
  }
  for (const auto& [name, used] : bound) {
    if (!used)
      return bad(entry, "shapes: model '" + bm.path.string() + "' has no input '" + name + "' (" + inputs + ")");
  }
  return Status::Ok();
}

}  // namespace

Result<BatchManifest> ReadBatchManifest(const std::filesystem::path& path) {
  // Paths in a manifest are relative to it, so a CI job may run it from any folder.
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  auto where = [&](const YAML::Node& n) { return path.string() + ":" + std::to_string(n.Mark().line + 1); };
  const Bad bad = [&](const YAML::Node& n, const std::string& what) { return ParseError(where(n) + ": " + what); };
  BatchManifest m;
  std::vector<std::pair<size_t, YAML::Node>> model_limits, model_calibrations;  // read after the globals
  YAML::Node root;
  try {
    root = YAML::LoadFile(path.string());
  } catch (const YAML::BadFile&) {
    return NotFound("cannot read the batch manifest '" + path.string() + "'");
  } catch (const YAML::Exception& e) {
    return ParseError("batch manifest '" + path.string() + "': " + e.what());
  }
  if (!root.IsMap())
    return ParseError("batch manifest '" + path.string() + "': expected a mapping (models:, targets: …)");
  // A value of the wrong type (a list where a number belongs) throws from as<>(); its mark names the line.
  try {
    for (const auto& kv : root) {
      const auto key = kv.first.as<std::string>();
      const YAML::Node& v = kv.second;
      if (key == "models") {
        if (!v.IsSequence() || v.size() == 0) return bad(kv.first, "models: needs a list of models");
        for (const YAML::Node& entry : v) {
          if (!entry.IsMap()) return bad(entry, "a model entry needs path: (and optionally shapes:, data:)");
          BatchModel bm;
          bm.line = entry.Mark().line + 1;
          for (const auto& f : entry) {
            const auto field = f.first.as<std::string>();
            if (field == "path") {
              bm.path = (dir / f.second.as<std::string>()).lexically_normal();
              std::error_code ec;
              if (!std::filesystem::is_regular_file(bm.path, ec)) {
                return bad(f.second, "model '" + bm.path.string() + "' does not exist");
              }
            } else if (field == "shapes") {
              if (!f.second.IsMap()) return bad(f.second, "shapes: needs NAME: 1x3x224x224 pairs");
              for (const auto& s : f.second)
                bm.shapes.push_back(s.first.as<std::string>() + "=" + s.second.as<std::string>());
            } else if (field == "data") {
              bm.data = (dir / f.second.as<std::string>()).string();
            } else if (field == "preprocess") {
              ASSIGN_OR_RETURN(bm.preprocess, ReadPreprocess(f.second, bad));
            } else if (field == "sample_rate") {
              ASSIGN_OR_RETURN(bm.sample_rate, ReadSampleRate(f.second, bad));
            } else if (field == "targets") {
              ASSIGN_OR_RETURN(bm.targets, ReadTargets(f.second, bad));
            } else if (field == "limits") {
              model_limits.emplace_back(m.models.size(), f.second);
            } else if (field == "calibration") {
              model_calibrations.emplace_back(m.models.size(), f.second);
            } else {
              return bad(f.first, "unknown model key '" + field + "'" +
                                      DidYouMean(field, {"path", "shapes", "data", "preprocess", "sample_rate",
                                                         "targets", "limits", "calibration"}) +
                                      " (path, shapes, data, preprocess, sample_rate, targets, limits, calibration)");
            }
          }
          if (bm.path.empty()) return bad(entry, "a model entry needs path:");
          RETURN_IF_ERROR(CheckShapes(bm, entry, bad));
          m.models.push_back(std::move(bm));
        }
      } else if (key == "targets") {
        ASSIGN_OR_RETURN(const std::string targets, ReadTargets(v, bad));
        m.all_targets = targets == "all";
        m.targets = m.all_targets ? "" : targets;
      } else if (key == "limits") {
        RETURN_IF_ERROR(ReadLimits(v, m.recommend.limits, bad));
      } else if (key == "calibration") {
        RETURN_IF_ERROR(ReadCalibration(v, m.calibration, bad));
      } else if (key == "preprocess") {
        ASSIGN_OR_RETURN(m.preprocess, ReadPreprocess(v, bad));
      } else if (key == "sample_rate") {
        ASSIGN_OR_RETURN(m.sample_rate, ReadSampleRate(v, bad));
      } else if (key == "threads") {
        m.threads = v.as<int>();
        if (m.threads < 0) return bad(v, "threads: needs a count (0: every core)");
      } else if (key == "fail_on_inconclusive") {
        m.fail_on_inconclusive = v.as<bool>();
      } else if (key == "confirm") {
        m.confirm = v.as<int>();
        if (*m.confirm < 0 || *m.confirm > 20)
          return bad(v, "confirm: needs a count of confirmation profiles, 0 to 20");
      } else if (key == "objective") {
        m.recommend.objective = v.as<std::string>();
        if (auto o = ParseObjective(m.recommend.objective); !o.ok()) return bad(v, o.status().message());
      } else if (key == "weights") {
        m.recommend.weights = v.as<std::string>();
        if (auto w = ParseWeights(m.recommend.weights); !w.ok()) return bad(v, w.status().message());
      } else if (key == "costs") {
        m.recommend.costs = (dir / v.as<std::string>()).string();
      } else if (key == "baseline") {
        const auto text = v.as<std::string>();
        if (text == "latest") {
          m.baseline_latest = true;
        } else {
          char* end = nullptr;
          const long long id = std::strtoll(text.c_str(), &end, 10);
          if (end == text.c_str() || *end != '\0' || id < 1) return bad(v, "baseline: needs 'latest' or a run id");
          m.baseline_run = id;
        }
      } else if (key == "report") {
        m.report = (dir / v.as<std::string>()).string();
      } else if (key == "iterations") {
        m.iterations = v.as<int>();
      } else if (key == "warmup") {
        m.warmup = v.as<int>();
      } else if (key == "min_time") {
        m.min_time = v.as<double>();
      } else {
        return bad(kv.first,
                   "unknown key '" + key + "'" +
                       DidYouMean(key, {"models", "targets", "limits", "calibration", "objective", "weights", "costs",
                                        "baseline", "fail_on_inconclusive", "confirm", "report", "iterations", "warmup",
                                        "min_time", "threads", "preprocess", "sample_rate"}) +
                       " (models, targets, limits, calibration, objective, weights, costs, baseline, "
                       "fail_on_inconclusive, confirm, report, iterations, warmup, min_time, threads, "
                       "preprocess, sample_rate)");
      }
    }
    // A model's limits: and calibration: start from the manifest's, wherever those are written.
    for (const auto& [index, node] : model_limits) {
      Limits limits = m.recommend.limits;
      RETURN_IF_ERROR(ReadLimits(node, limits, bad));
      m.models[index].limits = limits;
    }
    for (const auto& [index, node] : model_calibrations) {
      BatchCalibration calibration = m.calibration;
      RETURN_IF_ERROR(ReadCalibration(node, calibration, bad));
      m.models[index].calibration = calibration;
    }
  } catch (const YAML::Exception& e) {
    return ParseError("batch manifest '" + path.string() + "' line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (m.models.empty()) return ParseError("batch manifest '" + path.string() + "': no models: list");
  if (m.targets.empty() && !m.all_targets) {
    for (const BatchModel& bm : m.models) {
      if (!bm.targets) {
        return ParseError(path.string() + ":" + std::to_string(bm.line) +
                          ": no targets: for this model, and none for the whole manifest");
      }
    }
  }
  return m;
}

}  // namespace chipfit
