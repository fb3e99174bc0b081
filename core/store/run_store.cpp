// SQLite run store: schema, migrations, and the JSON ↔ rows mapping.
#include "core/store/run_store.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <thread>

namespace chipfit {
namespace {

using nlohmann::json;

// Migration N creates schema version N from N-1 (index 0: an empty file → version 1). Never edit
// a released migration: add the next one.
const std::vector<const char*> kMigrations = {
    // 1: models, machines, devices (with measured ceilings), runs, target and layer results.
    R"sql(
CREATE TABLE models(
  id INTEGER PRIMARY KEY,
  sha256 TEXT NOT NULL UNIQUE,
  path TEXT NOT NULL,
  opset INTEGER, nodes INTEGER, params INTEGER, flops INTEGER,
  summary TEXT NOT NULL);
CREATE TABLE machines(
  id INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL UNIQUE,
  hostname TEXT, os TEXT, arch TEXT);
CREATE TABLE devices(
  id INTEGER PRIMARY KEY,
  machine_id INTEGER NOT NULL REFERENCES machines(id),
  device TEXT NOT NULL,
  name TEXT NOT NULL,
  info TEXT NOT NULL,
  ceilings TEXT,
  ceilings_measured_at TEXT,
  UNIQUE(machine_id, device, name));
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  model_id INTEGER NOT NULL REFERENCES models(id),
  machine_id INTEGER NOT NULL REFERENCES machines(id),
  status TEXT NOT NULL CHECK(status IN ('incomplete', 'ok', 'cancelled', 'failed')),
  started_at TEXT NOT NULL,
  finished_at TEXT,
  chipfit_version TEXT NOT NULL,
  command TEXT NOT NULL,
  machine TEXT NOT NULL,
  run TEXT NOT NULL);
CREATE INDEX runs_by_model ON runs(model_id, id);
CREATE TABLE target_results(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  target TEXT NOT NULL,
  status TEXT NOT NULL,
  error TEXT,
  p50_ms REAL, p90_ms REAL, p99_ms REAL, cov REAL, noisy INTEGER,
  peak_memory_bytes INTEGER,
  energy_j REAL, energy_source TEXT,
  output_sqnr_db REAL, top1_agreement REAL,
  result TEXT NOT NULL,
  UNIQUE(run_id, target));
CREATE TABLE layer_results(
  id INTEGER PRIMARY KEY,
  target_result_id INTEGER NOT NULL REFERENCES target_results(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  name TEXT NOT NULL,
  op TEXT NOT NULL,
  onnx_nodes TEXT NOT NULL,
  device TEXT, precision TEXT,
  time_p50_ms REAL, time_p90_ms REAL,
  flops INTEGER, bytes_read INTEGER, bytes_written INTEGER,
  bound TEXT,
  drift_sqnr_db REAL, drift_cosine REAL,
  energy_j REAL);
CREATE INDEX layers_by_target ON layer_results(target_result_id, position);
)sql",
    // 2: a run's identity across stores (chipfit merge): a random 128-bit id.
    R"sql(
ALTER TABLE runs ADD COLUMN uid TEXT;
UPDATE runs SET uid = lower(hex(randomblob(16))) WHERE uid IS NULL;
CREATE UNIQUE INDEX runs_by_uid ON runs(uid);
)sql",
    // 3: the front end that made a run (cli | gui); every run before the GUI came from the CLI. The
    // uid column allows NULL, so a row written without one gets it here: merge tells runs apart by it.
    R"sql(
ALTER TABLE runs ADD COLUMN source TEXT NOT NULL DEFAULT 'cli';
UPDATE runs SET uid = lower(hex(randomblob(16))) WHERE uid IS NULL;
)sql",
};
static_assert(kStoreSchemaVersion == 3, "add a migration to kMigrations with every schema version");

// {"x": "1x3x48x192", "mask": "1x48"} → "mask=1x48,x=1x3x48x192"; "" for anything else.
std::string ShapesText(const std::string& json_text) {
  if (json_text.empty()) return "";
  const json shapes = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!shapes.is_object()) return "";
  std::string text;
  for (const auto& [name, dims] : shapes.items()) {
    text += (text.empty() ? "" : ",") + name + "=" + (dims.is_string() ? dims.get<std::string>() : dims.dump());
  }
  return text;
}

// ["conv1", "fc"] → {"conv1", "fc"}; empty for anything else.
std::vector<std::string> NamesFromJson(const std::string& json_text) {
  std::vector<std::string> names;
  const json list = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!list.is_array()) return names;
  for (const json& name : list) {
    if (name.is_string()) names.push_back(name.get<std::string>());
  }
  return names;
}

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// A JSON number (or bool) at `key`, else nullopt (null, absent, another type).
std::optional<double> Number(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  const auto it = j.find(key);
  if (it == j.end() || !(it->is_number() || it->is_boolean())) return std::nullopt;
  return it->is_boolean() ? (it->get<bool>() ? 1.0 : 0.0) : it->get<double>();
}
std::optional<std::string> Text(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// Binds an optional value at `index`, NULL when absent.
void BindOptional(SQLite::Statement& s, int index, const std::optional<double>& v) {
  if (v) {
    s.bind(index, *v);
  } else {
    s.bind(index);
  }
}
void BindOptional(SQLite::Statement& s, int index, const std::optional<std::string>& v) {
  if (v) {
    s.bind(index, *v);
  } else {
    s.bind(index);
  }
}
void BindInteger(SQLite::Statement& s, int index, const std::optional<double>& v) {
  if (v) {
    s.bind(index, static_cast<int64_t>(*v));
  } else {
    s.bind(index);
  }
}

// BEGIN IMMEDIATE: takes the write lock up front, so two writers queue on the busy timeout instead
// of one failing when it tries to upgrade a read lock.
class WriteTransaction {
 public:
  explicit WriteTransaction(SQLite::Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }
  ~WriteTransaction() {
    if (!done_) {
      try {
        db_.exec("ROLLBACK");
      } catch (...) {  // NOLINT(bugprone-empty-catch): nothing more to undo
      }
    }
  }
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;
  void Commit() {
    db_.exec("COMMIT");
    done_ = true;
  }

 private:
  SQLite::Database& db_;
  bool done_ = false;
};

// Runs `body`; every SQLite or JSON error becomes a Status naming the store's file and what was
// being done: exceptions never leave the store.
template <typename F>
auto Guarded(const std::filesystem::path& path, const std::string& context, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const SQLite::Exception& e) {
    return IoError("run store '" + path.string() + "': " + context + ": " + e.what());
  } catch (const json::exception& e) {
    return ParseError("run store '" + path.string() + "': " + context + ": " + e.what());
  }
}

}  // namespace

const std::vector<const char*>& StoreMigrations() { return kMigrations; }

RunStore::RunStore(std::filesystem::path path, std::unique_ptr<SQLite::Database> db)
    : path_(std::move(path)), db_(std::move(db)) {}

RunStore::~RunStore() = default;

std::filesystem::path RunStore::DefaultPath() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::filesystem::path(xdg) / "chipfit" / "chipfit.db";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::filesystem::path(home) / ".local" / "share" / "chipfit" / "chipfit.db";
  }
  return "chipfit.db";
}

// 15 s, as the connection's busy timeout.
constexpr int kBusyRetries = 150;

Result<std::unique_ptr<RunStore>> RunStore::Open(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return InvalidArgument("run store '" + path.string() + "' is a directory, not a database file");
  }
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  std::unique_ptr<SQLite::Database> db;
  try {
    db = std::make_unique<SQLite::Database>(path.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, 15000);
    // Identify the file before writing anything to it, in one read transaction: another process
    // creating the schema at this moment is seen entirely or not at all.
    db->exec("BEGIN");
    const int app_id = db->execAndGet("PRAGMA application_id").getInt();
    const int version = db->execAndGet("PRAGMA user_version").getInt();
    const int objects = db->execAndGet("SELECT count(*) FROM sqlite_master").getInt();
    db->exec("COMMIT");
    if (app_id != kStoreApplicationId && !(app_id == 0 && objects == 0)) {
      return ParseError("'" + path.string() + "' is not a chipfit run store (an SQLite database with application_id " +
                        std::to_string(app_id) + " and " + std::to_string(objects) +
                        " schema objects); it was left untouched: choose another --db");
    }
    if (version > kStoreSchemaVersion) {
      return Unsupported("run store '" + path.string() + "' has schema version " + std::to_string(version) +
                         ", newer than this chipfit knows (" + std::to_string(kStoreSchemaVersion) +
                         "); it was left untouched: use a newer chipfit or another --db");
    }
    // Damaged pages: refuse the file before writing into it (quick_check reads every page once).
    const std::string check = db->execAndGet("PRAGMA quick_check").getString();
    if (check != "ok") {
      return ParseError("run store '" + path.string() + "' is damaged (SQLite quick_check: " + check +
                        "); it was left untouched: restore it from a backup or choose another --db");
    }
    // Switching a new file to WAL takes an exclusive lock, and SQLite answers BUSY at once (without its
    // busy handler) while another process is opening the same new store: wait for it, as the timeout
    // does for everything else.
    for (int attempt = 0;; ++attempt) {
      try {
        db->exec("PRAGMA journal_mode=WAL");
        break;
      } catch (const SQLite::Exception& e) {
        if (e.getErrorCode() != SQLITE_BUSY || attempt >= kBusyRetries) throw;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    db->exec("PRAGMA foreign_keys=ON");
  } catch (const SQLite::Exception& e) {
    return ParseError("'" + path.string() + "' is not a usable chipfit run store (" + e.what() +
                      "); it was left untouched: choose another --db");
  }
  auto store = std::unique_ptr<RunStore>(new RunStore(path, std::move(db)));
  RETURN_IF_ERROR(store->Migrate());
  return store;
}

int RunStore::schema_version() const {
  try {
    return db_->execAndGet("PRAGMA user_version").getInt();
  } catch (const SQLite::Exception&) {
    return -1;
  }
}

Status RunStore::Migrate() {
  return Guarded(path_, "migrating its schema", [&]() -> Status {
    if (db_->execAndGet("PRAGMA user_version").getInt() == kStoreSchemaVersion) return Status();
    WriteTransaction t(*db_);
    // Another process may have migrated while this one waited for the lock.
    const int version = db_->execAndGet("PRAGMA user_version").getInt();
    for (int next = version + 1; next <= kStoreSchemaVersion; ++next) {
      db_->exec(kMigrations[static_cast<size_t>(next - 1)]);
    }
    db_->exec("PRAGMA application_id=" + std::to_string(kStoreApplicationId));
    db_->exec("PRAGMA user_version=" + std::to_string(kStoreSchemaVersion));
    t.Commit();
    return Status();
  });
}

Result<int64_t> RunStore::BeginRun(const json& model, const json& machine, const json& run, const std::string& command,
                                   const std::string& chipfit_version, const std::string& source) {
  // Checked here rather than by the schema, so a later front end needs no migration.
  if (source != "cli" && source != "gui") {
    return InvalidArgument("a run's source is cli or gui, not '" + source + "'");
  }
  return InsertRun(model, machine, run, command, chipfit_version,
                   {.status = "incomplete",
                    .started_at = UtcNow(),
                    .finished_at = std::nullopt,
                    .uid = std::nullopt,
                    .source = source});
}

Result<int64_t> RunStore::InsertRun(const json& model, const json& machine, const json& run, const std::string& command,
                                    const std::string& chipfit_version, const RunMeta& meta) {
  const auto sha256 = Text(model, "sha256");
  if (!sha256) return InvalidArgument("a run is stored with its model's sha256; this model has none");
  return Guarded(path_, "starting a run", [&]() -> Result<int64_t> {
    WriteTransaction t(*db_);
    SQLite::Statement upsert_model(*db_, R"sql(
      INSERT INTO models(sha256, path, opset, nodes, params, flops, summary) VALUES(?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT(sha256) DO UPDATE SET path = excluded.path, flops = coalesce(excluded.flops, flops),
                                        summary = excluded.summary)sql");
    upsert_model.bind(1, *sha256);
    upsert_model.bind(2, Text(model, "path").value_or(""));
    BindInteger(upsert_model, 3, Number(model, "opset"));
    BindInteger(upsert_model, 4, Number(model, "nodes"));
    BindInteger(upsert_model, 5, Number(model, "params"));
    BindInteger(upsert_model, 6, Number(model, "flops"));
    upsert_model.bind(7, model.dump());
    upsert_model.exec();
    SQLite::Statement model_id(*db_, "SELECT id FROM models WHERE sha256 = ?");
    model_id.bind(1, *sha256);
    model_id.executeStep();
    const int64_t model_row = model_id.getColumn(0).getInt64();

    // A machine: its host name, architecture and CPU name.
    const std::string hostname = Text(machine, "hostname").value_or("unknown host");
    std::string cpu_name;
    if (machine.contains("devices") && machine["devices"].is_array() && !machine["devices"].empty()) {
      cpu_name = Text(machine["devices"][0], "name").value_or("");
    }
    const std::string fingerprint = hostname + "|" + Text(machine, "arch").value_or("") + "|" + cpu_name;
    SQLite::Statement upsert_machine(*db_, R"sql(
      INSERT INTO machines(fingerprint, hostname, os, arch) VALUES(?, ?, ?, ?)
      ON CONFLICT(fingerprint) DO UPDATE SET os = excluded.os)sql");
    upsert_machine.bind(1, fingerprint);
    upsert_machine.bind(2, hostname);
    BindOptional(upsert_machine, 3, Text(machine, "os"));
    BindOptional(upsert_machine, 4, Text(machine, "arch"));
    upsert_machine.exec();
    SQLite::Statement machine_id(*db_, "SELECT id FROM machines WHERE fingerprint = ?");
    machine_id.bind(1, fingerprint);
    machine_id.executeStep();
    const int64_t machine_row = machine_id.getColumn(0).getInt64();

    // Devices, with the ceilings this run used (measured ones are kept when a run has none).
    if (machine.contains("devices") && machine["devices"].is_array()) {
      SQLite::Statement upsert_device(*db_, R"sql(
        INSERT INTO devices(machine_id, device, name, info, ceilings, ceilings_measured_at) VALUES(?, ?, ?, ?, ?, ?)
        ON CONFLICT(machine_id, device, name) DO UPDATE SET info = excluded.info,
          ceilings = coalesce(excluded.ceilings, ceilings),
          ceilings_measured_at = coalesce(excluded.ceilings_measured_at, ceilings_measured_at))sql");
      for (const json& device : machine["devices"]) {
        const std::string id = Text(device, "id").value_or("");
        std::optional<std::string> ceilings, measured_at;
        if (run.contains("ceilings") && run["ceilings"].is_array()) {
          for (const json& c : run["ceilings"]) {
            if (Text(c, "device") == id) {
              ceilings = c.dump();
              measured_at = Text(c, "measured_at");
            }
          }
        }
        upsert_device.bind(1, machine_row);
        upsert_device.bind(2, id);
        upsert_device.bind(3, Text(device, "name").value_or(""));
        upsert_device.bind(4, device.dump());
        BindOptional(upsert_device, 5, ceilings);
        BindOptional(upsert_device, 6, measured_at);
        upsert_device.exec();
        upsert_device.reset();
      }
    }

    SQLite::Statement insert_run(*db_, R"sql(
      INSERT INTO runs(model_id, machine_id, status, started_at, finished_at, chipfit_version, command, machine, run,
                       uid, source)
      VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, coalesce(?, lower(hex(randomblob(16)))), ?))sql");
    insert_run.bind(1, model_row);
    insert_run.bind(2, machine_row);
    insert_run.bind(3, meta.status);
    insert_run.bind(4, meta.started_at);
    BindOptional(insert_run, 5, meta.finished_at);
    insert_run.bind(6, chipfit_version);
    insert_run.bind(7, command);
    insert_run.bind(8, machine.dump());
    insert_run.bind(9, run.dump());
    BindOptional(insert_run, 10, meta.uid);
    insert_run.bind(11, meta.source);
    insert_run.exec();
    const int64_t run_id = db_->getLastInsertRowid();
    t.Commit();
    return run_id;
  });
}

Status RunStore::AddTarget(int64_t run_id, const json& target) {
  const auto name = Text(target, "target");
  if (!name) return InvalidArgument("a target result needs its \"target\" name");
  return Guarded(path_, "storing target " + *name + " of run " + std::to_string(run_id), [&]() -> Status {
    WriteTransaction t(*db_);
    SQLite::Statement position(*db_, "SELECT count(*) FROM target_results WHERE run_id = ?");
    position.bind(1, run_id);
    position.executeStep();
    const int next = position.getColumn(0).getInt();
    SQLite::Statement insert(*db_, R"sql(
      INSERT INTO target_results(run_id, position, target, status, error, p50_ms, p90_ms, p99_ms, cov, noisy,
                                 peak_memory_bytes, energy_j, energy_source, output_sqnr_db, top1_agreement, result)
      VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
    const json& latency = target.value("latency_ms", json(nullptr));
    const json& energy = target.value("energy_j", json(nullptr));
    const json& accuracy = target.value("accuracy", json(nullptr));
    insert.bind(1, run_id);
    insert.bind(2, next);
    insert.bind(3, *name);
    insert.bind(4, Text(target, "status").value_or("failed"));
    BindOptional(insert, 5, Text(target, "error"));
    BindOptional(insert, 6, Number(latency, "p50"));
    BindOptional(insert, 7, Number(latency, "p90"));
    BindOptional(insert, 8, Number(latency, "p99"));
    BindOptional(insert, 9, Number(latency, "cov"));
    BindInteger(insert, 10, Number(latency, "noisy"));
    BindInteger(insert, 11, Number(target, "peak_memory_bytes"));
    BindOptional(insert, 12, Number(energy, "value"));
    BindOptional(insert, 13, Text(energy, "source"));
    BindOptional(insert, 14, Number(accuracy, "output_sqnr_db"));
    BindOptional(insert, 15, Number(accuracy, "top1_agreement"));
    insert.bind(16, target.dump());
    insert.exec();
    const int64_t target_row = db_->getLastInsertRowid();
    if (target.contains("layers") && target["layers"].is_array()) {
      SQLite::Statement layer(*db_, R"sql(
        INSERT INTO layer_results(target_result_id, position, name, op, onnx_nodes, device, precision, time_p50_ms,
                                  time_p90_ms, flops, bytes_read, bytes_written, bound, drift_sqnr_db, drift_cosine,
                                  energy_j)
        VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
      int index = 0;
      for (const json& l : target["layers"]) {
        const json& time = l.value("time_ms", json(nullptr));
        const json& drift = l.value("drift", json(nullptr));
        layer.bind(1, target_row);
        layer.bind(2, index++);
        layer.bind(3, Text(l, "name").value_or(""));
        layer.bind(4, Text(l, "op").value_or(""));
        layer.bind(5, l.value("onnx_nodes", json::array()).dump());
        BindOptional(layer, 6, Text(l, "device"));
        BindOptional(layer, 7, Text(l, "precision"));
        BindOptional(layer, 8, Number(time, "p50"));
        BindOptional(layer, 9, Number(time, "p90"));
        BindInteger(layer, 10, Number(l, "flops"));
        BindInteger(layer, 11, Number(l, "bytes_read"));
        BindInteger(layer, 12, Number(l, "bytes_written"));
        BindOptional(layer, 13, Text(l, "bound"));
        BindOptional(layer, 14, Number(drift, "sqnr_db"));
        BindOptional(layer, 15, Number(drift, "cosine"));
        BindOptional(layer, 16, Number(l.value("energy_j", json(nullptr)), "value"));
        layer.exec();
        layer.reset();
      }
    }
    t.Commit();
    return Status();
  });
}

Status RunStore::FinishRun(int64_t run_id, const std::string& status, const json& extra) {
  if (status != "ok" && status != "cancelled" && status != "failed") {
    return InvalidArgument("a run finishes as ok, cancelled or failed, not '" + status + "'");
  }
  return Guarded(path_, "finishing run " + std::to_string(run_id), [&]() -> Status {
    WriteTransaction t(*db_);
    SQLite::Statement read(*db_, "SELECT run FROM runs WHERE id = ?");
    read.bind(1, run_id);
    if (!read.executeStep()) return NotFound("run " + std::to_string(run_id) + " is not in " + path_.string());
    json run = json::parse(read.getColumn(0).getString());
    if (extra.is_object()) {
      for (const auto& [key, value] : extra.items()) run[key] = value;
    }
    SQLite::Statement update(*db_, "UPDATE runs SET status = ?, finished_at = ?, run = ? WHERE id = ?");
    update.bind(1, status);
    update.bind(2, UtcNow());
    update.bind(3, run.dump());
    update.bind(4, run_id);
    update.exec();
    t.Commit();
    return Status();
  });
}

Result<json> RunStore::LoadRun(int64_t run_id) const {
  return Guarded(path_, "reading run " + std::to_string(run_id), [&]() -> Result<json> {
    SQLite::Statement q(*db_, R"sql(
      SELECT runs.status, runs.started_at, runs.finished_at, runs.chipfit_version, runs.command, runs.machine,
             runs.run, models.summary, runs.uid, runs.source
      FROM runs JOIN models ON models.id = runs.model_id WHERE runs.id = ?)sql");
    q.bind(1, run_id);
    if (!q.executeStep()) return NotFound("run " + std::to_string(run_id) + " is not in " + path_.string());
    json out = {{"schema", "chipfit.profile/1"},
                {"chipfit_version", q.getColumn(3).getString()},
                {"run_id", run_id},
                {"run_uid", q.getColumn(8).getString()},
                {"status", q.getColumn(0).getString()},
                {"source", q.getColumn(9).getString()},
                {"started_at", q.getColumn(1).getString()},
                {"finished_at", q.getColumn(2).isNull() ? json(nullptr) : json(q.getColumn(2).getString())},
                {"command", q.getColumn(4).getString()},
                {"model", json::parse(q.getColumn(7).getString())},
                {"machine", json::parse(q.getColumn(5).getString())}};
    const json run = json::parse(q.getColumn(6).getString());
    for (const auto& [key, value] : run.items()) {
      if (!out.contains(key)) out[key] = value;
    }
    json targets = json::array();
    SQLite::Statement t(*db_, "SELECT result FROM target_results WHERE run_id = ? ORDER BY position");
    t.bind(1, run_id);
    while (t.executeStep()) targets.push_back(json::parse(t.getColumn(0).getString()));
    out["targets"] = targets;
    return out;
  });
}

Status RunStore::DeleteRun(int64_t run_id) {
  return Guarded(path_, "deleting run " + std::to_string(run_id), [&]() -> Status {
    WriteTransaction t(*db_);
    SQLite::Statement exists(*db_, "SELECT count(*) FROM runs WHERE id = ?");
    exists.bind(1, run_id);
    exists.executeStep();
    if (exists.getColumn(0).getInt() == 0) {
      return NotFound("run " + std::to_string(run_id) + " is not in " + path_.string());
    }
    // The schema cascades these deletes, but only on a connection with foreign_keys on: deleting the
    // children first leaves no orphan rows whatever the connection's setting.
    SQLite::Statement layers(*db_, R"sql(
      DELETE FROM layer_results WHERE target_result_id IN (SELECT id FROM target_results WHERE run_id = ?))sql");
    layers.bind(1, run_id);
    layers.exec();
    SQLite::Statement targets(*db_, "DELETE FROM target_results WHERE run_id = ?");
    targets.bind(1, run_id);
    targets.exec();
    SQLite::Statement run(*db_, "DELETE FROM runs WHERE id = ?");
    run.bind(1, run_id);
    run.exec();
    t.Commit();
    return Status();
  });
}

Result<MergeStats> RunStore::MergeFrom(const RunStore& other) {
  auto runs = other.ListRuns();
  if (!runs.ok()) return runs.status();
  MergeStats stats;
  // Oldest first, so merged runs keep their order.
  for (auto it = runs->rbegin(); it != runs->rend(); ++it) {
    auto run = other.LoadRun(it->id);
    if (!run.ok()) return run.status();
    const std::string uid = (*run)["run_uid"];
    auto present = Guarded(path_, "merging", [&]() -> Result<bool> {
      SQLite::Statement q(*db_, "SELECT count(*) FROM runs WHERE uid = ?");
      q.bind(1, uid);
      q.executeStep();
      return q.getColumn(0).getInt() > 0;
    });
    if (!present.ok()) return present.status();
    if (*present) {
      ++stats.skipped;
      continue;
    }
    json rest = *run;
    for (const char* key : {"schema", "chipfit_version", "run_id", "run_uid", "status", "source", "started_at",
                            "finished_at", "command", "model", "machine", "targets"}) {
      rest.erase(key);
    }
    const json& finished = (*run)["finished_at"];
    auto id =
        InsertRun((*run)["model"], (*run)["machine"], rest, (*run)["command"], (*run)["chipfit_version"],
                  {.status = (*run)["status"],
                   .started_at = (*run)["started_at"],
                   .finished_at = finished.is_string() ? std::optional(finished.get<std::string>()) : std::nullopt,
                   .uid = uid,
                   .source = (*run)["source"]});
    if (!id.ok()) return id.status();
    for (const json& target : (*run)["targets"]) RETURN_IF_ERROR(AddTarget(*id, target));
    ++stats.merged;
  }
  return stats;
}

Result<std::vector<RunSummary>> RunStore::ListRuns(const std::optional<std::string>& model_sha256) const {
  return Guarded(path_, "listing runs", [&]() -> Result<std::vector<RunSummary>> {
    SQLite::Statement q(*db_, std::string(R"sql(
      SELECT runs.id, runs.status, runs.started_at, coalesce(runs.finished_at, ''), models.path, models.sha256,
             coalesce(machines.hostname, ''), runs.chipfit_version, runs.command,
             (SELECT count(*) FROM target_results WHERE run_id = runs.id),
             (SELECT count(*) FROM target_results WHERE run_id = runs.id AND status = 'ok'), runs.source,
             coalesce(json_extract(runs.run, '$.inputs.shapes'), ''),
             coalesce(json_extract(runs.run, '$.settings.threads'), 0),
             coalesce(json_extract(runs.run, '$.settings.keep_fp32'), '')
      FROM runs JOIN models ON models.id = runs.model_id JOIN machines ON machines.id = runs.machine_id)sql") +
                                  (model_sha256 ? " WHERE models.sha256 = ?" : "") + " ORDER BY runs.id DESC");
    if (model_sha256) q.bind(1, *model_sha256);
    std::vector<RunSummary> runs;
    while (q.executeStep()) {
      runs.push_back({.id = q.getColumn(0).getInt64(),
                      .status = q.getColumn(1).getString(),
                      .started_at = q.getColumn(2).getString(),
                      .finished_at = q.getColumn(3).getString(),
                      .model_path = q.getColumn(4).getString(),
                      .model_sha256 = q.getColumn(5).getString(),
                      .hostname = q.getColumn(6).getString(),
                      .chipfit_version = q.getColumn(7).getString(),
                      .command = q.getColumn(8).getString(),
                      .targets = q.getColumn(9).getInt(),
                      .targets_ok = q.getColumn(10).getInt(),
                      .source = q.getColumn(11).getString(),
                      .shapes = ShapesText(q.getColumn(12).getString()),
                      .threads = q.getColumn(13).getInt(),
                      .keep_fp32 = NamesFromJson(q.getColumn(14).getString())});
    }
    return runs;
  });
}

}  // namespace chipfit
