// The run store: every profile run in one SQLite file, through SQLiteCpp. Runs,
// their targets and layers are kept as the profile JSON (docs/json.md) describes them (the store
// takes and gives back those JSON objects, so core needs no profiler types), with the numbers a
// query needs (latency, drift, energy per target and per layer) in columns of their own.
//
// Safety: WAL, foreign keys, a busy timeout so concurrent writers wait for each other, one
// transaction per finished target; a run starts `incomplete` and only FinishRun changes that, so
// a killed process leaves its finished targets and an `incomplete` run. A file that is not a
// chipfit store, is newer than this binary, or is corrupt is refused before anything is written.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace SQLite {
class Database;
}

namespace chipfit {

// PRAGMA user_version of the schema this binary writes; older files are migrated forward.
inline constexpr int kStoreSchemaVersion = 3;
// PRAGMA application_id of a chipfit store ("CHFT").
inline constexpr int32_t kStoreApplicationId = 0x43484654;

// The SQL of each migration: [N-1] makes schema version N (for tests that build older stores).
const std::vector<const char*>& StoreMigrations();

struct MergeStats {
  int merged = 0;   // runs copied in
  int skipped = 0;  // runs this store already had (same uid)
};

struct RunSummary {
  int64_t id = 0;
  std::string status;  // incomplete | ok | cancelled
  std::string started_at, finished_at;
  std::string model_path, model_sha256;
  std::string hostname;
  std::string chipfit_version;
  std::string command;
  int targets = 0;     // target results stored
  int targets_ok = 0;  // of which status ok
  std::string source;  // the front end that made the run: cli | gui
  // The bound input shapes ("x=1x3x48x192", comma-separated) and CPU threads the run used; empty / 0
  // for runs made before they were recorded.
  std::string shapes;
  int threads = 0;
  // The nodes the run kept in fp32 by request (settings.keep_fp32: a What-if, or --keep-fp32).
  std::vector<std::string> keep_fp32{};
};

class RunStore {
 public:
  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  // $XDG_DATA_HOME/chipfit/chipfit.db, else ~/.local/share/chipfit/chipfit.db.
  static std::filesystem::path DefaultPath();
  // Opens (creating the file and its folder when missing) and migrates to kStoreSchemaVersion.
  static Result<std::unique_ptr<RunStore>> Open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  int schema_version() const;

  // A new run, `incomplete` until FinishRun: `model`, `machine` are the profile JSON's objects;
  // `run` holds the rest of its top level (settings, inputs, energy_sensors, ceilings …). `source`
  // is the front end that made it, cli or gui.
  Result<int64_t> BeginRun(const nlohmann::json& model, const nlohmann::json& machine, const nlohmann::json& run,
                           const std::string& command, const std::string& chipfit_version,
                           const std::string& source = "cli");
  // One target's JSON (a `targets[]` entry), with its layers, in one transaction.
  Status AddTarget(int64_t run_id, const nlohmann::json& target);
  // ok | cancelled | failed; stamps the finish time. `extra` (an object, e.g. the recommendation)
  // is merged into the run's top-level JSON.
  Status FinishRun(int64_t run_id, const std::string& status, const nlohmann::json& extra = nullptr);

  // The run as profile JSON (schema chipfit.profile/1), `run_id`, `run_uid`, `status` and `source`
  // filled in.
  Result<nlohmann::json> LoadRun(int64_t run_id) const;
  // Newest first; only runs of the model with this sha256 when given.
  Result<std::vector<RunSummary>> ListRuns(const std::optional<std::string>& model_sha256 = std::nullopt) const;

  // Removes a run with its target and layer results, in one transaction; the model, machine and
  // device rows stay (other runs share them, and a later run of the model reuses them). kNotFound
  // naming the run id when the store has no such run.
  Status DeleteRun(int64_t run_id);

  // Copies every run of `other` this store lacks (runs are identified by their uid, so merging the
  // same shard twice adds nothing), each with its targets and layers, status, times and source.
  Result<MergeStats> MergeFrom(const RunStore& other);

 private:
  struct RunMeta {
    std::string status;
    std::string started_at;
    std::optional<std::string> finished_at;
    std::optional<std::string> uid;  // none: a new random one
    std::string source;
  };
  RunStore(std::filesystem::path path, std::unique_ptr<SQLite::Database> db);
  Result<int64_t> InsertRun(const nlohmann::json& model, const nlohmann::json& machine, const nlohmann::json& run,
                            const std::string& command, const std::string& chipfit_version, const RunMeta& meta);
  Status Migrate();

  std::filesystem::path path_;
  std::unique_ptr<SQLite::Database> db_;
};

}  // namespace chipfit
