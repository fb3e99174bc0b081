// The run store: round trip of a run, runs left incomplete, files that are not (or not yet) a store
// this binary may write, migration of an empty file, and concurrent writers.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "core/store/run_diff.h"
#include "core/store/run_store.h"

namespace chipfit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path TempDb(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("chipfit_store_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / (name + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);
  return path;
}

std::string ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

const json kModel = {{"path", "models/cnn.onnx"},
                     {"sha256", std::string(64, 'a')},
                     {"opset", 13},
                     {"nodes", 8},
                     {"params", 1234},
                     {"flops", 567890}};
const json kMachine = {{"hostname", "bench-1"},
                       {"os", "Linux 6.1"},
                       {"arch", "x86_64"},
                       {"devices", json::array({{{"id", "cpu"}, {"name", "Test CPU"}, {"kind", "cpu"}}})}};
const json kRun = {{"settings", {{"iterations", 50}}},
                   {"ceilings", json::array({{{"device", "cpu"},
                                              {"measured_at", "2026-11-23T19:00:00Z"},
                                              {"measured", {{"peak_gflops", {{"fp32", 222.9}}}}}}})}};

json Target(const std::string& name, double p50, const std::string& status = "ok") {
  json layers = json::array();
  for (int i = 0; i < 3; ++i) {
    layers.push_back({{"name", "conv" + std::to_string(i)},
                      {"op", "FusedConv"},
                      {"onnx_nodes", {"conv" + std::to_string(i), "relu" + std::to_string(i)}},
                      {"device", "cpu"},
                      {"precision", "fp32"},
                      {"time_ms", {{"p50", p50 / 3}, {"p90", p50 / 2}}},
                      {"flops", 1000 * (i + 1)},
                      {"bytes_read", 400},
                      {"bytes_written", 100},
                      {"bound", "memory"},
                      {"drift", {{"cosine", 0.999}, {"nmse", 1e-4}, {"sqnr_db", 40.0 - i}, {"max_abs", 0.01}}},
                      {"energy_j", nullptr}});
  }
  return {{"target", name},
          {"status", status},
          {"error", status == "ok" ? json(nullptr) : json("refused")},
          {"latency_ms",
           status == "ok" ? json{{"p50", p50}, {"p90", p50 * 1.1}, {"p99", p50 * 1.3}, {"cov", 0.02}, {"noisy", false}}
                          : json(nullptr)},
          {"energy_j", {{"value", 1e-3}, {"source", "estimated"}}},
          {"accuracy", {{"output_sqnr_db", 35.5}, {"top1_agreement", 1.0}}},
          {"layers", status == "ok" ? layers : json::array()}};
}

TEST(RunStoreTest, RoundTripsARun) {
  const fs::path path = TempDb("roundtrip");
  auto store = RunStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->schema_version(), kStoreSchemaVersion);
  auto run = (*store)->BeginRun(kModel, kMachine, kRun, "chipfit profile cnn.onnx", "0.1.0 (test)");
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const json fp32 = Target("cpu:fp32", 0.9), int8 = Target("cpu:int8", 0.4),
             fp16 = Target("cpu:fp16", 0, "unsupported");
  for (const json* t : {&fp32, &int8, &fp16}) ASSERT_TRUE((*store)->AddTarget(*run, *t).ok());
  ASSERT_TRUE((*store)->FinishRun(*run, "ok").ok());

  auto loaded = (*store)->LoadRun(*run);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)["schema"], "chipfit.profile/1");
  EXPECT_EQ((*loaded)["run_id"], *run);
  EXPECT_EQ((*loaded)["status"], "ok");
  EXPECT_EQ((*loaded)["model"], kModel);
  EXPECT_EQ((*loaded)["machine"], kMachine);
  EXPECT_EQ((*loaded)["settings"], kRun["settings"]);
  EXPECT_EQ((*loaded)["command"], "chipfit profile cnn.onnx");
  ASSERT_EQ((*loaded)["targets"].size(), 3u);
  EXPECT_EQ((*loaded)["targets"][0], fp32);
  EXPECT_EQ((*loaded)["targets"][1], int8);
  EXPECT_EQ((*loaded)["targets"][2], fp16);

  // The columns a query uses hold the same numbers as the JSON.
  SQLite::Database db(path.string());
  EXPECT_DOUBLE_EQ(db.execAndGet("SELECT p50_ms FROM target_results WHERE target = 'cpu:int8'").getDouble(), 0.4);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM layer_results").getInt(), 6);
  EXPECT_DOUBLE_EQ(db.execAndGet("SELECT drift_sqnr_db FROM layer_results WHERE position = 2 LIMIT 1").getDouble(),
                   38.0);
  EXPECT_EQ(db.execAndGet("SELECT ceilings_measured_at FROM devices").getString(), "2026-11-23T19:00:00Z");

  auto runs = (*store)->ListRuns();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].targets, 3);
  EXPECT_EQ((*runs)[0].targets_ok, 2);
  EXPECT_EQ((*runs)[0].hostname, "bench-1");
  auto other_model = (*store)->ListRuns(std::string(64, 'b'));
  ASSERT_TRUE(other_model.ok());
  EXPECT_TRUE(other_model->empty());
  EXPECT_EQ((*store)->LoadRun(99).status().code(), StatusCode::kNotFound);
}

TEST(RunStoreTest, ARunNeverFinishedStaysIncompleteWithItsFinishedTargets) {
  const fs::path path = TempDb("incomplete");
  {
    auto store = RunStore::Open(path);
    ASSERT_TRUE(store.ok());
    auto run = (*store)->BeginRun(kModel, kMachine, kRun, "chipfit profile", "test");
    ASSERT_TRUE(run.ok());
    ASSERT_TRUE((*store)->AddTarget(*run, Target("cpu:fp32", 1.0)).ok());
    // The process ends here without FinishRun.
  }
  auto store = RunStore::Open(path);
  ASSERT_TRUE(store.ok());
  auto runs = (*store)->ListRuns();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].status, "incomplete");
  EXPECT_EQ((*runs)[0].targets, 1);
  EXPECT_FALSE((*store)->FinishRun((*runs)[0].id, "great").ok());
}

// Two runs of one model (one models row) with other input shapes and threads: each run keeps its own,
// history lists them, and a diff of the two stored runs names the differences (a 1x76x32x1 run was
// compared with a 4x76x32x1 one without a word).
TEST(RunStoreTest, EachRunKeepsItsShapesAndThreadsAndDiffSaysTheyDiffer) {
  auto store = RunStore::Open(TempDb("shapes"));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto begin = [&](const std::string& shape, int threads) {
    json run = kRun;
    run["inputs"] = {{"source", "seeded random"}, {"seed", 1}, {"shapes", {{"input_1", shape}}}};
    run["settings"]["threads"] = threads;
    auto id = (*store)->BeginRun(kModel, kMachine, run, "chipfit profile", "test");
    EXPECT_TRUE(id.ok());
    EXPECT_TRUE((*store)->AddTarget(*id, Target("cpu:fp32", 0.3)).ok());
    EXPECT_TRUE((*store)->FinishRun(*id, "ok").ok());
    return *id;
  };
  const int64_t one = begin("1x76x32x1", 2), four = begin("4x76x32x1", 1);
  auto runs = (*store)->ListRuns();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].shapes, "input_1=4x76x32x1");
  EXPECT_EQ((*runs)[0].threads, 1);
  EXPECT_EQ((*runs)[1].shapes, "input_1=1x76x32x1");
  EXPECT_EQ((*runs)[1].threads, 2);
  const json diff = DiffRuns(*(*store)->LoadRun(one), *(*store)->LoadRun(four));
  ASSERT_EQ(diff["differences"].size(), 2u) << diff["differences"].dump();
  EXPECT_EQ(diff["differences"][0],
            R"(input shapes: {"input_1":"1x76x32x1"} in run A, {"input_1":"4x76x32x1"} in run B)");
  EXPECT_EQ(diff["differences"][1], "threads: 2 in run A, 1 in run B");
}

TEST(RunStoreTest, AnEmptyFileIsMigratedToTheCurrentSchema) {
  const fs::path path = TempDb("empty");
  std::ofstream(path).close();  // 0 bytes: SQLite's empty database, user_version 0
  auto store = RunStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->schema_version(), kStoreSchemaVersion);
  SQLite::Database db(path.string());
  EXPECT_EQ(db.execAndGet("PRAGMA application_id").getInt(), kStoreApplicationId);
  EXPECT_EQ(db.execAndGet("PRAGMA journal_mode").getString(), "wal");
}

// A store written by every earlier schema version opens, migrates to the current one and keeps
// its runs.
TEST(RunStoreTest, EveryEarlierSchemaVersionMigratesForwardKeepingItsRuns) {
  for (int version = 1; version < kStoreSchemaVersion; ++version) {
    SCOPED_TRACE("from schema version " + std::to_string(version));
    const fs::path path = TempDb("v" + std::to_string(version));
    {
      SQLite::Database db(path.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
      for (int v = 1; v <= version; ++v) db.exec(StoreMigrations()[static_cast<size_t>(v - 1)]);
      db.exec("PRAGMA application_id=" + std::to_string(kStoreApplicationId));
      db.exec("PRAGMA user_version=" + std::to_string(version));
      // A run as version 1 stored it (the columns every version has).
      db.exec("INSERT INTO models(sha256, path, summary) VALUES('" + std::string(64, 'a') + "', 'm.onnx', '{}')");
      db.exec("INSERT INTO machines(fingerprint, hostname) VALUES('host|x86_64|cpu', 'host')");
      db.exec(
          "INSERT INTO runs(model_id, machine_id, status, started_at, chipfit_version, command, machine, run) "
          "VALUES(1, 1, 'ok', '2026-01-01T00:00:00Z', 'old', 'chipfit profile m.onnx', '{}', '{}')");
      db.exec(
          "INSERT INTO target_results(run_id, position, target, status, result) VALUES(1, 0, 'cpu:fp32', 'ok', "
          "'{\"target\": \"cpu:fp32\", \"status\": \"ok\"}')");
    }
    auto store = RunStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_EQ((*store)->schema_version(), kStoreSchemaVersion);
    auto run = (*store)->LoadRun(1);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    EXPECT_EQ((*run)["status"], "ok");
    EXPECT_EQ((*run)["targets"][0]["target"], "cpu:fp32");
    EXPECT_EQ((*run)["run_uid"].get<std::string>().size(), 32u);  // given one by migration 2
    // And it takes new runs.
    EXPECT_TRUE((*store)->BeginRun(kModel, kMachine, kRun, "x", "test").ok());
  }
}

TEST(RunStoreTest, MergeCopiesMissingRunsOnce) {
  const fs::path a_path = TempDb("merge_a"), b_path = TempDb("merge_b");
  auto a = RunStore::Open(a_path);
  auto b = RunStore::Open(b_path);
  ASSERT_TRUE(a.ok() && b.ok());
  for (int i = 0; i < 3; ++i) {
    auto run = (*a)->BeginRun(kModel, kMachine, kRun, "shard a " + std::to_string(i), "test");
    ASSERT_TRUE(run.ok());
    ASSERT_TRUE((*a)->AddTarget(*run, Target("cpu:fp32", 1.0 + i)).ok());
    if (i < 2) {
      ASSERT_TRUE((*a)->FinishRun(*run, "ok", {{"recommendation", {{"best", "cpu:fp32"}}}}).ok());
    }
  }
  auto own = (*b)->BeginRun(kModel, kMachine, kRun, "shard b", "test");
  ASSERT_TRUE(own.ok());
  auto stats = (*b)->MergeFrom(**a);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->merged, 3);
  EXPECT_EQ(stats->skipped, 0);
  auto again = (*b)->MergeFrom(**a);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->merged, 0);
  EXPECT_EQ(again->skipped, 3);
  auto runs = (*b)->ListRuns();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 4u);
  // Same content, status, times and uid as in the shard; only the id differs.
  for (int64_t id = 1; id <= 3; ++id) {
    json from = *(*a)->LoadRun(id);
    json to = *(*b)->LoadRun(id + 1);
    EXPECT_EQ(to["run_uid"], from["run_uid"]);
    from.erase("run_id");
    to.erase("run_id");
    EXPECT_EQ(to, from);
  }
  EXPECT_EQ((*(*b)->LoadRun(4))["status"], "incomplete");
  EXPECT_EQ((*(*b)->LoadRun(2))["recommendation"]["best"], "cpu:fp32");
}

// Deleting a run takes its targets and layers with it and nothing else: the other runs keep theirs,
// the model and machine rows stay for them, and a second delete of the same id says it is not there.
TEST(RunStoreTest, DeleteRunRemovesItsTargetsAndLayersOnly) {
  const fs::path path = TempDb("delete");
  auto store = RunStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  std::vector<int64_t> ids;
  for (int i = 0; i < 3; ++i) {
    auto run = (*store)->BeginRun(kModel, kMachine, kRun, "run " + std::to_string(i), "test");
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    ASSERT_TRUE((*store)->AddTarget(*run, Target("cpu:fp32", 1.0 + i)).ok());
    ASSERT_TRUE((*store)->AddTarget(*run, Target("cpu:int8", 0.5 + i)).ok());
    ASSERT_TRUE((*store)->FinishRun(*run, "ok").ok());
    ids.push_back(*run);
  }
  const json first_before = *(*store)->LoadRun(ids[0]);
  const json last_before = *(*store)->LoadRun(ids[2]);

  const Status deleted = (*store)->DeleteRun(ids[1]);
  ASSERT_TRUE(deleted.ok()) << deleted.ToString();

  auto runs = (*store)->ListRuns();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].id, ids[2]);
  EXPECT_EQ((*runs)[1].id, ids[0]);
  const auto gone = (*store)->LoadRun(ids[1]);
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*(*store)->LoadRun(ids[0]), first_before);
  EXPECT_EQ(*(*store)->LoadRun(ids[2]), last_before);

  // Rows, not only what LoadRun shows: two runs × two targets × three layers left, no orphans.
  SQLite::Database db(path.string());
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM target_results").getInt(), 4);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM layer_results").getInt(), 12);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM layer_results WHERE target_result_id NOT IN "
                          "(SELECT id FROM target_results)")
                .getInt(),
            0);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM models").getInt(), 1);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM machines").getInt(), 1);

  const Status again = (*store)->DeleteRun(ids[1]);
  EXPECT_EQ(again.code(), StatusCode::kNotFound);
  EXPECT_NE(again.message().find("run " + std::to_string(ids[1]) + " is not in"), std::string::npos) << again.message();
  EXPECT_EQ((*store)->ListRuns()->size(), 2u);
}

// The front end that made a run is stored with it, listed, loaded and carried by a merge; runs of a
// store from before the GUI read as the CLI's.
TEST(RunStoreTest, ARunKeepsTheFrontEndThatMadeIt) {
  const fs::path path = TempDb("source");
  auto store = RunStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto gui = (*store)->BeginRun(kModel, kMachine, kRun, "chipfit-gui", "test", "gui");
  ASSERT_TRUE(gui.ok()) << gui.status().ToString();
  ASSERT_TRUE((*store)->FinishRun(*gui, "ok").ok());
  auto cli = (*store)->BeginRun(kModel, kMachine, kRun, "chipfit profile", "test");  // the default
  ASSERT_TRUE(cli.ok());
  auto runs = (*store)->ListRuns();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].id, *cli);
  EXPECT_EQ((*runs)[0].source, "cli");
  EXPECT_EQ((*runs)[1].id, *gui);
  EXPECT_EQ((*runs)[1].source, "gui");
  EXPECT_EQ((*(*store)->LoadRun(*gui))["source"], "gui");
  EXPECT_EQ((*(*store)->LoadRun(*cli))["source"], "cli");
  auto bad = (*store)->BeginRun(kModel, kMachine, kRun, "x", "test", "web");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("'web'"), std::string::npos) << bad.status().message();

  const fs::path merged_path = TempDb("source_merged");
  auto merged = RunStore::Open(merged_path);
  ASSERT_TRUE(merged.ok());
  auto stats = (*merged)->MergeFrom(**store);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->merged, 2);
  auto merged_runs = (*merged)->ListRuns();
  ASSERT_TRUE(merged_runs.ok());
  ASSERT_EQ(merged_runs->size(), 2u);
  EXPECT_EQ((*merged_runs)[0].source, "cli");
  EXPECT_EQ((*merged_runs)[1].source, "gui");
  EXPECT_EQ((*(*merged)->LoadRun((*merged_runs)[1].id))["source"], "gui");
  // The source is a column, not part of the stored run JSON the merge copies.
  SQLite::Database db(merged_path.string());
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM runs WHERE run LIKE '%source%'").getInt(), 0);
}

TEST(RunStoreTest, RunsOfASchema2StoreReadAsTheCli) {
  const fs::path path = TempDb("v2_source");
  {
    SQLite::Database db(path.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    for (int v = 1; v <= 2; ++v) db.exec(StoreMigrations()[static_cast<size_t>(v - 1)]);
    db.exec("PRAGMA application_id=" + std::to_string(kStoreApplicationId));
    db.exec("PRAGMA user_version=2");
    db.exec("INSERT INTO models(sha256, path, summary) VALUES('" + std::string(64, 'a') + "', 'm.onnx', '{}')");
    db.exec("INSERT INTO machines(fingerprint, hostname) VALUES('host|x86_64|cpu', 'host')");
    for (int i = 0; i < 2; ++i) {
      db.exec(
          "INSERT INTO runs(model_id, machine_id, status, started_at, chipfit_version, command, machine, run, uid) "
          "VALUES(1, 1, 'ok', '2026-01-01T00:00:00Z', 'old', 'chipfit profile m.onnx', '{}', '{}', "
          "lower(hex(randomblob(16))))");
    }
  }
  auto store = RunStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->schema_version(), 3);
  auto runs = (*store)->ListRuns();
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 2u);
  for (const RunSummary& r : *runs) {
    EXPECT_EQ(r.source, "cli");
    auto run = (*store)->LoadRun(r.id);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    EXPECT_EQ((*run)["source"], "cli");
  }
  // And it takes GUI runs beside them.
  auto gui = (*store)->BeginRun(kModel, kMachine, kRun, "chipfit-gui", "test", "gui");
  ASSERT_TRUE(gui.ok()) << gui.status().ToString();
  EXPECT_EQ((*(*store)->LoadRun(*gui))["source"], "gui");
}

TEST(RunStoreTest, FilesItMustNotWriteAreRefusedAndLeftUntouched) {
  // Not SQLite at all.
  const fs::path text = TempDb("text");
  std::ofstream(text) << "these are notes, not a database\n";
  const std::string text_bytes = ReadBytes(text);
  auto opened = RunStore::Open(text);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find(text.string()), std::string::npos);
  EXPECT_EQ(ReadBytes(text), text_bytes);
  // Another program's SQLite database.
  const fs::path foreign = TempDb("foreign");
  {
    SQLite::Database db(foreign.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec("CREATE TABLE notes(text TEXT); INSERT INTO notes VALUES('keep me')");
  }
  const std::string foreign_bytes = ReadBytes(foreign);
  opened = RunStore::Open(foreign);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("not a chipfit run store"), std::string::npos);
  EXPECT_EQ(ReadBytes(foreign), foreign_bytes);
  // A chipfit store from a newer chipfit.
  const fs::path newer = TempDb("newer");
  ASSERT_TRUE(RunStore::Open(newer).ok());
  {
    SQLite::Database db(newer.string(), SQLite::OPEN_READWRITE);
    db.exec("PRAGMA user_version=" + std::to_string(kStoreSchemaVersion + 1));
  }
  const std::string newer_bytes = ReadBytes(newer);
  opened = RunStore::Open(newer);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(opened.status().message().find("newer"), std::string::npos);
  EXPECT_EQ(ReadBytes(newer), newer_bytes);
  // A store whose pages were overwritten: the error names the file when a query reaches them.
  const fs::path corrupt = TempDb("corrupt");
  {
    auto store = RunStore::Open(corrupt);
    ASSERT_TRUE(store.ok());
    auto run = (*store)->BeginRun(kModel, kMachine, kRun, "x", "test");
    ASSERT_TRUE(run.ok());
    ASSERT_TRUE((*store)->AddTarget(*run, Target("cpu:fp32", 1.0)).ok());
  }
  {
    SQLite::Database checkpoint(corrupt.string(), SQLite::OPEN_READWRITE);
    checkpoint.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  {
    // Every page after the first (the schema) overwritten.
    const auto size = fs::file_size(corrupt);
    std::fstream f(corrupt, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096);
    const std::string garbage(size - 4096, '\xA5');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  const std::string corrupt_bytes = ReadBytes(corrupt);
  opened = RunStore::Open(corrupt);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find(corrupt.string()), std::string::npos) << opened.status().message();
  EXPECT_NE(opened.status().message().find("damaged"), std::string::npos) << opened.status().message();
  EXPECT_EQ(ReadBytes(corrupt), corrupt_bytes);
}

TEST(RunStoreTest, TwoWritersAtOnceBothSucceed) {
  const fs::path path = TempDb("concurrent");
  ASSERT_TRUE(RunStore::Open(path).ok());
  auto writer = [&](const std::string& host, Status* status) {
    auto store = RunStore::Open(path);  // its own connection, as another process has
    if (!store.ok()) {
      *status = store.status();
      return;
    }
    json machine = kMachine;
    machine["hostname"] = host;
    for (int i = 0; i < 15 && status->ok(); ++i) {
      auto run = (*store)->BeginRun(kModel, machine, kRun, "profile", "test");
      if (!run.ok()) {
        *status = run.status();
        return;
      }
      for (const char* t : {"cpu:fp32", "cpu:int8"}) {
        if (Status s = (*store)->AddTarget(*run, Target(t, 1.0)); !s.ok()) *status = s;
      }
      if (Status s = (*store)->FinishRun(*run, "ok"); !s.ok()) *status = s;
    }
  };
  Status a, b;
  std::thread first(writer, "host-a", &a), second(writer, "host-b", &b);
  first.join();
  second.join();
  EXPECT_TRUE(a.ok()) << a.ToString();
  EXPECT_TRUE(b.ok()) << b.ToString();
  auto store = RunStore::Open(path);
  ASSERT_TRUE(store.ok());
  auto runs = (*store)->ListRuns();
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->size(), 30u);
  for (const RunSummary& r : *runs) {
    EXPECT_EQ(r.status, "ok");
    EXPECT_EQ(r.targets, 2);
  }
}

}  // namespace
}  // namespace chipfit
