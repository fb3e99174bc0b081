// ProfileSession and the profile JSON's one writer and one reader: events in order, stop, bad input, the
// store, and a run read and written back losing no field.
#include "profilers/session/profile_session.h"

#include <gtest/gtest.h>

#include <omp.h>
#include <unistd.h>
#include <set>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/store/run_store.h"
#include "profilers/profile_json.h"
#include "tests/core/onnx_builder.h"

namespace chipfit {
namespace {

namespace fs = std::filesystem;

const fs::path kCnn = fs::path(CHIPFIT_SOURCE_DIR) / "resources/models/cnn.onnx";

fs::path TempPath(const std::string& name) {
  return fs::temp_directory_path() / ("chipfit_session_" + std::to_string(::getpid()) + "_" + name);
}

// Every event as one line, so a test can assert the order a front end sees.
class Recorder final : public ProfileEvents {
 public:
  void RunStarted(const RunResult& run, const std::vector<Target>& targets) override {
    lines.push_back("run-started " + std::to_string(targets.size()) + (run.run_id ? " stored" : ""));
  }
  void TargetStarted(size_t index, const Target& target) override {
    lines.push_back("target-started " + std::to_string(index) + " " + target.ToString());
  }
  void Phase(size_t index, const std::string& phase, const std::string&) override {
    if (phases.empty() || phases.back() != phase) phases.push_back(phase);
    lines.push_back("phase " + std::to_string(index));
  }
  void LayerProgress(size_t, int, int, int done, int total) override {
    ++layer_events;
    EXPECT_LT(done, total);
  }
  void TargetFinished(size_t index, std::shared_ptr<const TargetResult> result) override {
    lines.push_back("target-finished " + std::to_string(index) + " " + result->status);
  }
  void RunFinished(std::shared_ptr<const RunResult> run) override { lines.push_back("run-finished " + run->status); }

  std::vector<std::string> lines, phases;
  int layer_events = 0;
};

ProfileOptions QuickOptions(const fs::path& db) {
  ProfileOptions o;
  o.targets = {{DeviceKind::kCpu, 0, Precision::kFp32}, {DeviceKind::kReference, 0, Precision::kFp32}};
  o.iterations = 3;
  o.warmup = 1;
  o.min_time_s = 0;
  o.drift_samples = 1;
  o.measure_ceilings = false;  // seconds of GEMMs, and not what these tests are about
  o.db = db;
  o.command = "profile_session_test";
  o.source = "gui";
  return o;
}

TEST(ProfileSessionTest, ProfilesEveryTargetWithEventsInOrderAndStoresTheRun) {
  const fs::path db = TempPath("events.db");
  fs::remove(db);
  ProfileSession session(QuickOptions(db));
  Recorder events;
  auto run = session.Run(kCnn, events);
  ASSERT_TRUE(run.ok()) << run.status().message();

  ASSERT_GE(events.lines.size(), 6u);
  EXPECT_EQ(events.lines.front(), "run-started 2 stored");
  EXPECT_EQ(events.lines[1], "target-started 0 cpu:fp32");
  EXPECT_EQ(events.lines.back(), "run-finished ok");
  const auto at = [&](const std::string& line) {
    return std::find(events.lines.begin(), events.lines.end(), line) - events.lines.begin();
  };
  // Every target is compiled before the timing, which interleaves them, and each is finished after it.
  EXPECT_LT(at("target-started 1 ref:fp32"), at("target-finished 0 ok"));
  EXPECT_LT(at("target-finished 0 ok"), at("target-finished 1 ok"));
  EXPECT_EQ(events.phases.front(), "compile");
  EXPECT_NE(std::find(events.phases.begin(), events.phases.end(), "per-layer"), events.phases.end());
  EXPECT_EQ(events.phases.back(), "drift");
  EXPECT_GT(events.layer_events, 0);

  const RunResult& r = **run;
  EXPECT_EQ(r.status, "ok");
  EXPECT_EQ(r.source, "gui");
  EXPECT_FALSE(r.settings.threads_reason.empty());
  EXPECT_GT(r.settings.cores, 0);
  for (const auto& t : r.targets) {  // timed in rounds, first and second in turn
    std::set<int> places;
    for (const TimingRound& round : t->rounds) places.insert(round.position);
    EXPECT_GE(t->rounds.size(), 10u);
    EXPECT_EQ(places, (std::set<int>{0, 1})) << t->target.ToString();
  }
  ASSERT_EQ(r.targets.size(), 2u);
  EXPECT_EQ(r.targets[0]->status, "ok");
  EXPECT_GT(r.targets[0]->latency.p50, 0);
  EXPECT_FALSE(r.targets[0]->layers.empty());
  ASSERT_TRUE(r.targets[0]->accuracy.has_value());
  EXPECT_GT(r.model_flops, 0);
  EXPECT_TRUE(r.recommendation.is_object());
  ASSERT_TRUE(r.run_id.has_value());

  auto store = RunStore::Open(db);
  ASSERT_TRUE(store.ok());
  auto runs = (*store)->ListRuns();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].source, "gui");
  EXPECT_EQ((*runs)[0].status, "ok");
  EXPECT_EQ((*runs)[0].targets_ok, 2);
  // The stored run reads back into the same typed run.
  auto stored = (*store)->LoadRun(*r.run_id);
  ASSERT_TRUE(stored.ok());
  auto typed = RunResultFromJson(*stored);
  ASSERT_TRUE(typed.ok()) << typed.status().message();
  EXPECT_EQ(typed->targets.size(), 2u);
  EXPECT_EQ(typed->targets[0]->layers.size(), r.targets[0]->layers.size());
  EXPECT_EQ(typed->source, "gui");
  EXPECT_EQ(typed->model.sha256, r.model.sha256);
  fs::remove(db);
}

TEST(ProfileSessionTest, AStopBeforeTheFirstTargetCancelsEveryTargetAndTheRun) {
  const fs::path db = TempPath("stop.db");
  fs::remove(db);
  ProfileSession session(QuickOptions(db));
  Recorder events;
  std::stop_source stop;
  stop.request_stop();
  auto run = session.Run(kCnn, events, stop.get_token());
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ((*run)->status, "cancelled");
  for (const auto& t : (*run)->targets) {
    EXPECT_EQ(t->status, "cancelled");
    EXPECT_NE(t->error.find("before this target"), std::string::npos) << t->error;
  }
  auto store = RunStore::Open(db);
  ASSERT_TRUE(store.ok());
  auto runs = (*store)->ListRuns();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].status, "cancelled");
  fs::remove(db);
}

TEST(ProfileSessionTest, AMissingModelIsAnErrorNamingTheFileAndStoresNothing) {
  const fs::path db = TempPath("missing.db");
  fs::remove(db);
  ProfileSession session(QuickOptions(db));
  Recorder events;
  auto run = session.Run("/nonexistent/model.onnx", events);
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("/nonexistent/model.onnx"), std::string::npos) << run.status().message();
  EXPECT_TRUE(events.lines.empty());
  EXPECT_FALSE(fs::exists(db));
}

// A model with an op no kernel knows: the reference cannot run it either, yet the run goes on, each
// target says which node it refused, and the warning says why accuracy is not measured.
TEST(ProfileSessionTest, AModelTheReferenceCannotRunStillProfilesTheTargets) {
  onnx::ModelProto m = testing::NewModel("unknown_op");
  auto* g = m.mutable_graph();
  testing::AddValue(g->mutable_input(), "x", {2, 4});
  testing::AddValue(g->mutable_output(), "y", {2, 4});
  testing::AddNode(g, "Relu", {"x"}, {"r"}, "relu");
  testing::AddNode(g, "NotAnOpAnywhere", {"r"}, {"y"}, "mystery")->set_domain("com.example");
  auto* domain = m.add_opset_import();
  domain->set_domain("com.example");
  domain->set_version(1);
  const fs::path path = TempPath("unknown_op.onnx");
  {
    std::ofstream out(path, std::ios::binary);
    ASSERT_TRUE(m.SerializeToOstream(&out));
  }
  ProfileOptions o = QuickOptions({});
  o.db.clear();
  o.targets = {{DeviceKind::kCpu, 0, Precision::kFp32}};
  ProfileSession session(o);
  class Messages final : public ProfileEvents {
   public:
    void Message(const std::string& text) override { lines.push_back(text); }
    std::vector<std::string> lines;
  } events;
  auto run = session.Run(path, events);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ((*run)->targets.size(), 1u);
  EXPECT_EQ((*run)->targets[0]->status, "unsupported");
  EXPECT_NE((*run)->targets[0]->error.find("'mystery'"), std::string::npos) << (*run)->targets[0]->error;
  bool warned = false;
  for (const std::string& line : events.lines) {
    warned |= line.find("ref:fp32 cannot run this model") != std::string::npos &&
              line.find("accuracy is not measured") != std::string::npos;
  }
  EXPECT_TRUE(warned);
  fs::remove(path);
}

TEST(ProfileSessionTest, ValidateRefusesWhatCannotRun) {
  ProfileOptions none;
  EXPECT_FALSE(ProfileSession(none).Validate().ok());
  ProfileOptions bad = QuickOptions({});
  bad.iterations = 0;
  EXPECT_FALSE(ProfileSession(bad).Validate().ok());
  bad = QuickOptions({});
  bad.recommend.objective = "speed";
  EXPECT_FALSE(ProfileSession(bad).Validate().ok());
  EXPECT_TRUE(ProfileSession(QuickOptions({})).Validate().ok());
}

// The first member path at which `b` differs from `a` (a member `a` lacks is not a difference: the
// writer may add fields), or "" when `b` holds every field of `a` with the same value.
std::string FirstDifference(const nlohmann::json& a, const nlohmann::json& b, const std::string& path = "") {
  if (a.is_object() && b.is_object()) {
    for (const auto& [key, value] : a.items()) {
      if (!b.contains(key)) return path + "/" + key + " (missing)";
      if (auto d = FirstDifference(value, b[key], path + "/" + key); !d.empty()) return d;
    }
    return "";
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size())
      return path + " (size " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + ")";
    for (size_t i = 0; i < a.size(); ++i) {
      if (auto d = FirstDifference(a[i], b[i], path + "/" + std::to_string(i)); !d.empty()) return d;
    }
    return "";
  }
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>() ? "" : path;
  return a == b ? "" : path + " (" + a.dump() + " vs " + b.dump() + ")";
}

// Profiles written by earlier chipfit versions (the test data) read into the typed run and written
// back are the same document, field by field; the writer only adds `source`.
TEST(ProfileSessionTest, TheBf16NoteNamesEachLayerKeptInFp32WithBothTimes) {
  QuantReport report;
  EXPECT_EQ(DescribeBf16Choice(report), "") << "no note when every layer runs in bf16";
  report.kept_slower = {{"dw1", {"dw1"}, 0.25, 0.125}, {"dw2", {"dw2", "bn2"}, 0.5, 0.5}};
  EXPECT_EQ(DescribeBf16Choice(report),
            "2 layer(s) kept in fp32, bf16 measured no faster here (bf16 vs fp32 median, --int8-all-layers to run "
            "them in bf16): dw1 (0.250 vs 0.125 ms), dw2 (0.500 vs 0.500 ms)");
}

TEST(ProfileJsonTest, AStoredProfileReadAndWrittenBackKeepsEveryField) {
  for (const char* name : {"sample_run.json", "sample_run_recommended.json"}) {
    std::ifstream in(fs::path(CHIPFIT_SOURCE_DIR) / "tests/data" / name);
    const nlohmann::json original = nlohmann::json::parse(in);
    auto typed = RunResultFromJson(original);
    ASSERT_TRUE(typed.ok()) << name << ": " << typed.status().message();
    const nlohmann::json written = RunResultToJson(*typed);
    EXPECT_EQ(FirstDifference(original, written), "") << name;
    EXPECT_EQ(FirstDifference(written, original), "/source (missing)") << name;
    // And once more: the writer's output is a fixed point of read + write.
    auto again = RunResultFromJson(written);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(RunResultToJson(*again), written) << name;
  }
}

TEST(ProfileJsonTest, TheReaderNamesWhatIsWrong) {
  EXPECT_FALSE(RunResultFromJson(nlohmann::json::array()).ok());
  EXPECT_FALSE(RunResultFromJson({{"schema", "other/1"}}).ok());
  auto bad = RunResultFromJson({{"schema", "chipfit.profile/1"}, {"targets", {{{"target", "cpu:fp99"}}}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("fp99"), std::string::npos) << bad.status().message();
  auto wrong_type = RunResultFromJson(
      {{"schema", "chipfit.profile/1"}, {"targets", {{{"target", "cpu:fp32"}, {"latency_ms", {{"p50", "fast"}}}}}}});
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_NE(wrong_type.status().message().find("cpu:fp32"), std::string::npos) << wrong_type.status().message();
}

// The interleaved timing's members (rounds, unreliable, time attribution, how the threads were chosen)
// are written and read back; a target or run without them reads the defaults and writes none of them.
TEST(ProfileJsonTest, RoundsUnreliableAndTimeAttributionRoundTrip) {
  RunResult run;
  run.settings.threads = 1;
  run.settings.threads_reason = "2 cores, ~1 busy with other work: 1 thread";
  run.settings.cores = 2;
  run.settings.other_cpus_before = 0.93;
  run.settings.max_time_s = 30;
  auto timed = std::make_shared<TargetResult>();
  timed->target = {DeviceKind::kCpu, 0, Precision::kFp32};
  timed->latency.p50 = 0.5;
  timed->rounds = {{.round = 1,
                    .position = 0,
                    .runs = 20,
                    .median_ms = 0.51,
                    .other_cpu_share = 0.02,
                    .steal_share = 0.0,
                    .threads = 1,
                    .clean = true},
                   {.round = 2,
                    .position = 1,
                    .runs = 20,
                    .median_ms = 9.3,
                    .other_cpu_share = 0.71,
                    .threads = 1,
                    .clean = false,
                    .dropped = "other processes used 1.4 CPUs (limit 1.5)"}};
  timed->unreliable = true;
  timed->unreliable_reason = "1 clean round of the 10 needed within the 30 s budget";
  timed->attribution = TimeAttribution{.end_to_end_ms = 0.5,
                                       .attributed_ms = 0.3,
                                       .between_ms = 0.15,
                                       .unexplained_ms = 0.05,
                                       .explanation = "Σ layers is 60 % of end to end: the executor's time"};
  auto plain = std::make_shared<TargetResult>();
  plain->target = {DeviceKind::kCpu, 0, Precision::kInt8};
  run.targets = {timed, plain};

  const nlohmann::json j = RunResultToJson(run);
  EXPECT_EQ(j["settings"]["threads_reason"], run.settings.threads_reason);
  EXPECT_EQ(j["settings"]["cores"], 2);
  EXPECT_EQ(j["targets"][0]["rounds"].size(), 2u);
  EXPECT_TRUE(j["targets"][0]["rounds"][0]["dropped"].is_null());
  EXPECT_TRUE(j["targets"][0]["rounds"][1]["steal_share"].is_null());
  EXPECT_EQ(j["targets"][0]["unreliable"], true);
  EXPECT_EQ(j["targets"][0]["time_attribution"]["between_ms"], 0.15);
  for (const char* member : {"rounds", "unreliable", "unreliable_reason", "time_attribution"}) {
    EXPECT_FALSE(j["targets"][1].contains(member)) << member;
  }

  auto back = RunResultFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->settings.threads_reason, run.settings.threads_reason);
  EXPECT_EQ(back->settings.cores, 2);
  EXPECT_EQ(back->settings.other_cpus_before, 0.93);
  EXPECT_EQ(back->settings.max_time_s, 30);
  const TargetResult& t = *back->targets[0];
  ASSERT_EQ(t.rounds.size(), 2u);
  EXPECT_EQ(t.rounds[1].round, 2);
  EXPECT_EQ(t.rounds[1].position, 1);
  EXPECT_EQ(t.rounds[1].runs, 20);
  EXPECT_EQ(t.rounds[1].median_ms, 9.3);
  EXPECT_EQ(t.rounds[1].other_cpu_share, 0.71);
  EXPECT_FALSE(t.rounds[1].steal_share.has_value());
  EXPECT_EQ(t.rounds[1].threads, 1);
  EXPECT_FALSE(t.rounds[1].clean);
  EXPECT_EQ(t.rounds[1].dropped, timed->rounds[1].dropped);
  EXPECT_TRUE(t.rounds[0].clean);
  EXPECT_EQ(t.rounds[0].dropped, "");
  EXPECT_EQ(t.rounds[0].steal_share, 0.0);
  EXPECT_TRUE(t.unreliable);
  EXPECT_EQ(t.unreliable_reason, timed->unreliable_reason);
  ASSERT_TRUE(t.attribution.has_value());
  EXPECT_EQ(t.attribution->end_to_end_ms, 0.5);
  EXPECT_EQ(t.attribution->attributed_ms, 0.3);
  EXPECT_EQ(t.attribution->unexplained_ms, 0.05);
  EXPECT_EQ(t.attribution->explanation, timed->attribution->explanation);
  EXPECT_EQ(RunResultToJson(*back), j);  // a fixed point of read + write

  // A run made before rounds: no settings.cores, no target members; the defaults hold.
  const TargetResult& old = *back->targets[1];
  EXPECT_TRUE(old.rounds.empty());
  EXPECT_FALSE(old.unreliable);
  EXPECT_FALSE(old.attribution.has_value());
  RunResult before;
  before.targets = {plain};
  const nlohmann::json old_json = RunResultToJson(before);
  for (const char* member : {"threads_reason", "cores", "other_cpus_before", "max_time_s"}) {
    EXPECT_FALSE(old_json["settings"].contains(member)) << member;
  }
  auto old_back = RunResultFromJson(old_json);
  ASSERT_TRUE(old_back.ok());
  EXPECT_EQ(old_back->settings.cores, 0);
  EXPECT_FALSE(old_back->settings.other_cpus_before.has_value());
  EXPECT_EQ(old_back->settings.threads_reason, "");
}

// x [N, 8] → MatMul [8, 16] → Relu: a model whose batch dim N is symbolic, as exporters write it.
fs::path DynamicBatchModel() {
  onnx::ModelProto m = testing::NewModel("dynamic_batch");
  auto* g = m.mutable_graph();
  testing::AddValue(g->mutable_input(), "x", {1, 8});
  g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("N");
  testing::AddValue(g->mutable_output(), "y", {1, 16});
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("N");
  testing::AddInitializer(g, "w", {8, 16}, [](int64_t i) { return 0.01 * static_cast<double>(i % 17) - 0.05; });
  testing::AddNode(g, "MatMul", {"x", "w"}, {"h"}, "matmul");
  testing::AddNode(g, "Relu", {"h"}, {"y"}, "relu");
  const fs::path path = TempPath("dynamic_batch.onnx");
  std::ofstream out(path, std::ios::binary);
  m.SerializeToOstream(&out);
  return path;
}

// Throughput mode: a point per batch size with one stream (latency per batch and its per-layer
// profile) and with N streams (per-request latency, the threads split); the JSON keeps every point.
TEST(ProfileSessionTest, ThroughputModeMeasuresEachBatchAndStreamCount) {
  const fs::path model = DynamicBatchModel();
  ProfileOptions o = QuickOptions({});
  o.store = false;
  o.targets = {{DeviceKind::kCpu, 0, Precision::kFp32}};
  o.shapes = {"x=1x8"};
  o.batches = {1, 3};
  o.streams = 2;
  o.iterations = 6;
  o.min_time_s = 0.05;
  ProfileSession session(o);
  Recorder events;
  auto run = session.Run(model, events);
  ASSERT_TRUE(run.ok()) << run.status().message();
  const TargetResult& t = *(*run)->targets.at(0);
  ASSERT_EQ(t.status, "ok") << t.error;
  ASSERT_EQ(t.throughput.size(), 4u);
  const std::vector<std::pair<int, int>> expected = {{1, 1}, {1, 2}, {3, 1}, {3, 2}};
  for (size_t i = 0; i < expected.size(); ++i) {
    const ThroughputPoint& p = t.throughput[i];
    SCOPED_TRACE("batch " + std::to_string(p.batch) + ", " + std::to_string(p.streams) + " streams");
    EXPECT_EQ(std::make_pair(p.batch, p.streams), expected[i]);
    ASSERT_EQ(p.status, "ok") << p.error;
    EXPECT_GE(p.requests, 6);
    EXPECT_GT(p.latency.p50, 0);
    // inferences/s = batch × requests / wall time; each request takes at least its p50's share.
    EXPECT_GT(p.inferences_per_s, 0);
    EXPECT_LE(p.inferences_per_s, p.batch * p.streams * 1e3 / p.latency.min * 1.01);
    EXPECT_EQ(p.layers.empty(), p.streams > 1);
    EXPECT_EQ(p.threads_per_stream, p.streams == 1 ? omp_get_max_threads() : std::max(1, omp_get_max_threads() / 2));
  }
  EXPECT_NE(std::find(events.phases.begin(), events.phases.end(), "throughput"), events.phases.end());
  // Written and read back: the same points.
  const nlohmann::json j = RunResultToJson(**run);
  ASSERT_TRUE(j["targets"][0].contains("throughput"));
  auto back = RunResultFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->targets[0]->throughput.size(), 4u);
  EXPECT_EQ(back->targets[0]->throughput[2].batch, 3);
  EXPECT_EQ(back->targets[0]->throughput[2].layers.size(), t.throughput[2].layers.size());
  EXPECT_DOUBLE_EQ(back->targets[0]->throughput[3].inferences_per_s, t.throughput[3].inferences_per_s);
  // The recommendation knows the best batch.
  const nlohmann::json& scores = (*run)->recommendation["scores"];
  ASSERT_EQ(scores.size(), 1u);
  EXPECT_TRUE(scores[0].contains("best_batch"));
  fs::remove(model);
}

// A model whose batch dim is fixed: each --batch point says why it did not run; the target itself ran.
TEST(ProfileSessionTest, ThroughputModeOnAFixedBatchSaysWhy) {
  ProfileOptions o = QuickOptions({});
  o.store = false;
  o.targets = {{DeviceKind::kCpu, 0, Precision::kFp32}};
  o.batches = {2};
  ProfileSession session(o);
  Recorder events;
  auto run = session.Run(kCnn, events);
  ASSERT_TRUE(run.ok()) << run.status().message();
  const TargetResult& t = *(*run)->targets.at(0);
  EXPECT_EQ(t.status, "ok");
  ASSERT_EQ(t.throughput.size(), 1u);
  EXPECT_EQ(t.throughput[0].status, "unsupported");
  EXPECT_NE(t.throughput[0].error.find("is fixed at 1"), std::string::npos) << t.throughput[0].error;
  // Other profiles carry no throughput member: the same document as before.
  o.batches.clear();
  ProfileSession plain(o);
  auto again = plain.Run(kCnn, events);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(RunResultToJson(**again)["targets"][0].contains("throughput"));
}

// profile --project through the session: projected targets beside the measured ones, each labelled
// projected, the catalog's unsupported precisions with their reason, and the recommendation naming them.
TEST(ProfileSessionTest, ProjectAddsProjectedTargetsAndTheRecommendationMarksThem) {
  ProfileOptions o = QuickOptions({});
  o.store = false;
  o.project = true;
  o.project_request.hardware = {"t4"};
  ProfileSession session(o);
  ASSERT_TRUE(session.Validate().ok()) << session.Validate().message();
  Recorder events;
  auto run = session.Run(kCnn, events);
  ASSERT_TRUE(run.ok()) << run.status().message();
  const RunResult& r = **run;
  ASSERT_EQ(r.status, "ok");
  ASSERT_EQ(r.targets.size(), 2u);  // the measured targets only
  ASSERT_TRUE(r.projections.is_array());
  auto find = [&](const std::string& target) {
    for (const auto& p : r.projections) {
      if (p.value("target", std::string()) == target) return p;
    }
    return nlohmann::json();
  };
  const nlohmann::json fp32 = find("t4:fp32"), bf16 = find("t4:bf16");
  ASSERT_TRUE(fp32.is_object()) << r.projections.dump();
  ASSERT_TRUE(bf16.is_object()) << r.projections.dump();
  EXPECT_EQ(fp32["status"], "ok") << fp32.dump();
  EXPECT_EQ(fp32["projected"], true);
  EXPECT_GT(fp32["p50_ms"].get<double>(), 0);
  EXPECT_EQ(bf16["status"], "unsupported") << bf16.dump();
  EXPECT_EQ(bf16["projected"], true);
  EXPECT_NE(bf16.value("reason", std::string()).find("bf16"), std::string::npos) << bf16.dump();
  for (const auto& p : r.projections) EXPECT_EQ(p.value("target", std::string()).rfind("t4:", 0), 0u) << p.dump();
  EXPECT_TRUE(r.projection_calibration.is_object()) << r.projection_calibration.dump();

  // The recommendation: the projected targets named, their entries marked; the measured ones not.
  const nlohmann::json& rec = r.recommendation;
  ASSERT_TRUE(rec["projected"].is_array()) << rec.dump();
  const auto named = rec["projected"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(named.begin(), named.end(), "t4:fp32"), named.end()) << rec.dump();
  EXPECT_NE(std::find(named.begin(), named.end(), "t4:bf16"), named.end()) << rec.dump();
  EXPECT_EQ(std::find(named.begin(), named.end(), "cpu:fp32"), named.end()) << rec.dump();
  bool scored = false;
  for (const auto& s : rec["scores"]) {
    if (s["target"] == "t4:fp32") {
      scored = true;
      EXPECT_EQ(s["projected"], true) << s.dump();
    } else if (s["target"] == "cpu:fp32") {
      EXPECT_FALSE(s.contains("projected")) << s.dump();
    }
  }
  EXPECT_TRUE(scored) << rec.dump();
  bool rejected = false;
  for (const auto& s : rec["rejected"]) {
    if (s["target"] == "t4:bf16") {
      rejected = true;
      EXPECT_EQ(s["projected"], true) << s.dump();
    }
  }
  EXPECT_TRUE(rejected) << rec.dump();
  // The profile JSON keeps them, and reads back with them.
  const nlohmann::json j = RunResultToJson(r);
  EXPECT_EQ(j["projections"], r.projections);
  auto back = RunResultFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->projections, r.projections);
}

// An id the catalog lacks is refused before anything runs.
TEST(ProfileSessionTest, ProjectWithAnUnknownHardwareIdIsRefusedBeforeProfiling) {
  ProfileOptions o = QuickOptions({});
  o.store = false;
  o.project = true;
  o.project_request.hardware = {"no-such-device"};
  ProfileSession session(o);
  const Status valid = session.Validate();
  ASSERT_FALSE(valid.ok());
  EXPECT_NE(valid.message().find("'no-such-device'"), std::string::npos) << valid.message();
  Recorder events;
  auto run = session.Run(kCnn, events);
  ASSERT_FALSE(run.ok());
  EXPECT_TRUE(events.lines.empty());
}

}  // namespace
}  // namespace chipfit
