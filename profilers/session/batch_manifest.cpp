// Reading the batch manifest: YAML → BatchManifest, each error naming the file and line.
#include "profilers/session/batch_manifest.h"

#include <cstdlib>
#include <system_error>
#include <utility>

#include "core/recommend/recommend.h"
#include "core/runtime/target.h"
#include "yaml-cpp/yaml.h"

namespace chipfit {

Result<BatchManifest> ReadBatchManifest(const std::filesystem::path& path) {
  // Paths in a manifest are relative to it, so a CI job may run it from any folder.
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  auto where = [&](const YAML::Node& n) { return path.string() + ":" + std::to_string(n.Mark().line + 1); };
  auto bad = [&](const YAML::Node& n, const std::string& what) { return ParseError(where(n) + ": " + what); };
  BatchManifest m;
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
            } else {
              return bad(f.first, "unknown model key '" + field + "' (path, shapes, data)");
            }
          }
          if (bm.path.empty()) return bad(entry, "a model entry needs path:");
          m.models.push_back(std::move(bm));
        }
      } else if (key == "targets") {
        if (v.IsScalar() && v.as<std::string>() == "all") {
          m.all_targets = true;
        } else if (v.IsSequence()) {
          for (const YAML::Node& t : v) {
            const auto text = t.as<std::string>();
            if (auto parsed = ParseTarget(text); !parsed.ok()) return bad(t, parsed.status().message());
            m.targets += (m.targets.empty() ? "" : ",") + text;
          }
        } else {
          return bad(v, "targets: needs a list of targets or 'all'");
        }
      } else if (key == "limits") {
        if (!v.IsMap()) return bad(v, "limits: needs a mapping");
        Limits& limits = m.recommend.limits;
        for (const auto& l : v) {
          const auto name = l.first.as<std::string>();
          if (name == "latency_stat") {
            limits.latency_stat = l.second.as<std::string>();
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
            return bad(l.first, "unknown limit '" + name +
                                    "' (max_latency_ms, latency_stat, min_top1, min_sqnr_db, "
                                    "max_memory_mb, max_energy_mj)");
        }
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
        return bad(kv.first, "unknown key '" + key +
                                 "' (models, targets, limits, objective, weights, costs, baseline, report, iterations, "
                                 "warmup, min_time)");
      }
    }
  } catch (const YAML::Exception& e) {
    return ParseError("batch manifest '" + path.string() + "' line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (m.models.empty()) return ParseError("batch manifest '" + path.string() + "': no models: list");
  if (m.targets.empty() && !m.all_targets) return ParseError("batch manifest '" + path.string() + "': no targets:");
  return m;
}

}  // namespace chipfit
