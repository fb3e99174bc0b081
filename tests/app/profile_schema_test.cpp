// `chipfit profile --json` against resources/schema/profile.schema.json (docs/json.md's contract, checked
// by ajv through tests/tools/validate-json.mjs): real output validates, broken output is rejected.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/app/run_shell.h"

namespace {

namespace fs = std::filesystem;

using chipfit::testing::Outcome;

Outcome RunShell(const std::string& command) { return chipfit::testing::RunShell(command + " 2>&1"); }

std::string Quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

fs::path PeerDir() {
  const char* env = std::getenv("CHIPFIT_PEER_DIR");
  return env != nullptr && *env != '\0' ? fs::path(env) : fs::path(CHIPFIT_DEFAULT_PEER_DIR);
}

fs::path TempJson(const std::string& what) {
  return fs::temp_directory_path() / ("chipfit_schema_" + what + "_" + std::to_string(::getpid()) + ".json");
}

const std::string kCnn = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";

// Runs the validator on `data`; exit 0 valid, 1 invalid, 2 usage or setup error.
Outcome Validate(const fs::path& data) {
  return RunShell("CHIPFIT_PEER_DIR=" + Quote(PeerDir().string()) + " node " + Quote(CHIPFIT_VALIDATE_JSON) + " " +
                  Quote(CHIPFIT_PROFILE_SCHEMA) + " " + Quote(data.string()));
}

nlohmann::json ReadJson(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

void WriteJson(const fs::path& path, const nlohmann::json& j) { std::ofstream(path) << j.dump(2) << "\n"; }

// A throughput point (`profile --batch … --streams N`) as profilers/profile_json.cpp writes it, made from
// a measured target's own latency_ms and layers: one stream has the per-layer profile, several none.
nlohmann::json ThroughputPoint(const nlohmann::json& target, int batch, int streams) {
  return {{"batch", batch},
          {"streams", streams},
          {"threads_per_stream", streams == 1 ? 4 : 2},
          {"status", "ok"},
          {"error", nullptr},
          {"latency_ms", target["latency_ms"]},
          {"inferences_per_s", 1234.5},
          {"requests", 200},
          {"duration_s", 0.5},
          {"layers", streams == 1 ? target["layers"] : nlohmann::json::array()}};
}

class ProfileSchemaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunShell("node --version").exit_code != 0) {
      GTEST_SKIP() << "node is not on PATH: run scripts/setup-deps.sh, then scripts/fetch-models.sh";
    }
    if (!fs::exists(PeerDir() / "node_modules/ajv/package.json")) {
      GTEST_SKIP() << "ajv is not installed under " << PeerDir() << ": run scripts/fetch-models.sh";
    }
  }

  // Profiles cnn.onnx on `targets` into `json`; fails the test unless chipfit exits 0.
  static void Profile(const std::string& targets, const fs::path& json) {
    const Outcome o = RunShell(std::string(CHIPFIT_CLI) + " profile " + Quote(kCnn) + " --targets " + targets +
                               " --min-time 0.05 --warmup 2 --iterations 5 --quiet --json " + Quote(json.string()));
    ASSERT_EQ(o.exit_code, 0) << o.out;
  }
};

TEST_F(ProfileSchemaTest, RealProfileValidates) {
  const fs::path json = TempJson("real");
  ASSERT_NO_FATAL_FAILURE(Profile("cpu:fp32,cpu:bf16,cpu:int8", json));
  const nlohmann::json j = ReadJson(json);
  ASSERT_EQ(j["targets"].size(), 3u);
  EXPECT_EQ(j["targets"][0]["status"], "ok") << j["targets"][0].dump();
  EXPECT_FALSE(j["targets"][0]["layers"].empty());
  const Outcome v = Validate(json);
  EXPECT_EQ(v.exit_code, 0) << v.out;
  fs::remove(json);
}

// The schema must be able to fail: each mutation of a real profile breaks one rule of the contract,
// and the validator names the value at fault.
TEST_F(ProfileSchemaTest, BrokenProfilesAreRejected) {
  const fs::path json = TempJson("base");
  ASSERT_NO_FATAL_FAILURE(Profile("cpu:fp32", json));
  const nlohmann::json base = ReadJson(json);
  fs::remove(json);
  ASSERT_EQ(base["targets"][0]["status"], "ok") << base["targets"][0].dump();
  ASSERT_FALSE(base["targets"][0]["layers"].empty());

  struct Mutation {
    const char* what;
    const char* instance_path;  // as the validator prints it
    std::function<void(nlohmann::json&)> apply;
  };
  const std::vector<Mutation> mutations = {
      {"status outside the enum", "/targets/0/status", [](auto& j) { j["targets"][0]["status"] = "okay"; }},
      {"p50 as a string", "/targets/0/latency_ms/p50", [](auto& j) { j["targets"][0]["latency_ms"]["p50"] = "1.5"; }},
      {"required status missing", "/targets/0", [](auto& j) { j["targets"][0].erase("status"); }},
      {"required model.path missing", "/model", [](auto& j) { j["model"].erase("path"); }},
      {"wrong schema name", "/schema", [](auto& j) { j["schema"] = "chipfit.profile/2"; }},
      {"energy source unknown", "/targets/0/energy_j/source",
       [](auto& j) {
         j["targets"][0]["energy_j"] = {{"value", 0.001}, {"source", "guessed"}};
       }},
      {"bound outside the enum", "/targets/0/layers/0/bound",
       [](auto& j) { j["targets"][0]["layers"][0]["bound"] = "io"; }},
      {"sha256 not lowercase hex", "/model/sha256", [](auto& j) { j["model"]["sha256"] = "ABC123"; }},
      {"ok target without latency", "/targets/0/latency_ms", [](auto& j) { j["targets"][0]["latency_ms"] = nullptr; }},
      {"peak memory negative", "/targets/0/peak_memory_bytes",
       [](auto& j) { j["targets"][0]["peak_memory_bytes"] = -1; }},
      {"throughput batch 0", "/targets/0/throughput/0/batch",
       [](auto& j) {
         j["targets"][0]["throughput"] = nlohmann::json::array({ThroughputPoint(j["targets"][0], 0, 1)});
       }},
      {"throughput layers with several streams", "/targets/0/throughput/0/layers",
       [](auto& j) {
         nlohmann::json point = ThroughputPoint(j["targets"][0], 4, 2);
         point["layers"] = j["targets"][0]["layers"];
         j["targets"][0]["throughput"] = nlohmann::json::array({point});
       }},
  };
  for (const Mutation& m : mutations) {
    nlohmann::json broken = base;
    m.apply(broken);
    const fs::path path = TempJson("broken");
    WriteJson(path, broken);
    const Outcome v = Validate(path);
    EXPECT_EQ(v.exit_code, 1) << m.what << ":\n" << v.out;
    EXPECT_NE(v.out.find(std::string(m.instance_path) + ":"), std::string::npos) << m.what << ":\n" << v.out;
    fs::remove(path);
  }
}

// Throughput mode adds an optional "throughput" array to each target: points on one stream (with their
// layers) and on several (without), measured or not, validate; so does the same target without it.
TEST_F(ProfileSchemaTest, ThroughputPointsValidate) {
  const fs::path json = TempJson("throughput");
  ASSERT_NO_FATAL_FAILURE(Profile("cpu:fp32", json));
  nlohmann::json j = ReadJson(json);
  ASSERT_EQ(j["targets"][0]["status"], "ok") << j["targets"][0].dump();
  EXPECT_FALSE(j["targets"][0].contains("throughput")) << "only throughput mode writes it";
  nlohmann::json failed = ThroughputPoint(j["targets"][0], 64, 1);
  failed["status"] = "failed";
  failed["error"] = "out of memory at batch 64";
  failed["latency_ms"] = nullptr;
  failed["inferences_per_s"] = nullptr;
  failed["requests"] = 0;
  failed["duration_s"] = 0;
  failed["layers"] = nlohmann::json::array();
  j["targets"][0]["throughput"] =
      nlohmann::json::array({ThroughputPoint(j["targets"][0], 1, 1), ThroughputPoint(j["targets"][0], 4, 1),
                             ThroughputPoint(j["targets"][0], 4, 2), failed});
  WriteJson(json, j);
  const Outcome v = Validate(json);
  EXPECT_EQ(v.exit_code, 0) << v.out;
  fs::remove(json);
}

// Targets that did not run (unsupported, cancelled) carry an error and null measurements, and validate.
TEST_F(ProfileSchemaTest, TargetsThatDidNotRunValidate) {
  const fs::path json = TempJson("unsupported");
  ASSERT_NO_FATAL_FAILURE(Profile("cpu:fp32,cpu:fp16", json));
  nlohmann::json j = ReadJson(json);
  ASSERT_EQ(j["targets"].size(), 2u);
  EXPECT_EQ(j["targets"][1]["status"], "unsupported") << j["targets"][1].dump();
  Outcome v = Validate(json);
  EXPECT_EQ(v.exit_code, 0) << v.out;
  fs::remove(json);

  // Ctrl-C inside the first target's 30-second timing loop: every target cancelled.
  const fs::path cancelled = TempJson("cancelled");
  const auto [o, progress] = chipfit::testing::InterruptWhenProgressShows(
      std::string(CHIPFIT_CLI) + " profile " + Quote(kCnn) +
          " --targets cpu:fp32,cpu:int8 --min-time 30 --warmup 1 --no-store --json " + Quote(cancelled.string()),
      "end-to-end", cancelled.string() + ".log");
  EXPECT_NE(progress.find("cpu:fp32: end-to-end"), std::string::npos) << progress;
  EXPECT_EQ(o.exit_code, 130) << o.out << progress;
  ASSERT_TRUE(fs::exists(cancelled)) << "no JSON after Ctrl-C: " << progress;
  j = ReadJson(cancelled);
  ASSERT_EQ(j["targets"].size(), 2u);
  for (const auto& t : j["targets"]) EXPECT_EQ(t["status"], "cancelled") << t.dump();
  v = Validate(cancelled);
  EXPECT_EQ(v.exit_code, 0) << v.out;
  fs::remove(cancelled);
}

}  // namespace

namespace {

// Paths of the JSON members of `a` whose key sets or (for the fields named deterministic) values
// `b` does not match: the profile document's shape before and after a change, times and machine aside.
void CollectShapeDifferences(const nlohmann::json& a, const nlohmann::json& b, const std::string& path,
                             std::vector<std::string>& out) {
  if (a.is_object() != b.is_object() || a.is_array() != b.is_array()) {
    // null ↔ value is a measurement that happened or not (a noisy flag, a missing sensor): not shape.
    if (!a.is_null() && !b.is_null()) out.push_back(path + " (type)");
    return;
  }
  if (a.is_object()) {
    for (const auto& [key, value] : a.items()) {
      if (!b.contains(key)) {
        out.push_back(path + "/" + key + " (missing now)");
        continue;
      }
      CollectShapeDifferences(value, b[key], path + "/" + key, out);
    }
  } else if (a.is_array() && !a.empty() && !b.empty()) {
    CollectShapeDifferences(a[0], b[0], path + "/0", out);
  }
}

// The deterministic part of a cpu:fp32 target: the layers chipfit ran (reorders aside: their number
// follows the CPU's ISA), what they cover, their FLOPs and bytes.
nlohmann::json Deterministic(const nlohmann::json& target) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : target["layers"]) {
    if (l["op"] == "Reorder") continue;
    layers.push_back({l["name"], l["op"], l["onnx_nodes"], l["flops"], l["precision"]});
  }
  return {{"target", target["target"]},
          {"status", target["status"]},
          {"layers", layers},
          {"fallbacks", target["fallbacks"]}};
}

}  // namespace

// The profile JSON is the same document the CLI wrote before the pipeline became a library: every
// member of tests/data/sample_run_recommended.json (written by that CLI on cnn.onnx) is still there,
// and the cpu:fp32 target ran the same layers with the same FLOPs. Times and the machine aside.
TEST(ProfileDocumentTest, SameDocumentAsTheCliWroteBeforeTheSession) {
  std::ifstream in(fs::path(CHIPFIT_SOURCE_DIR) / "tests/data/sample_run_recommended.json");
  const nlohmann::json before = nlohmann::json::parse(in);
  const fs::path json = TempJson("document");
  const Outcome o = RunShell(std::string(CHIPFIT_CLI) + " profile " + Quote(kCnn) +
                             " --targets cpu:fp32,cpu:int8 --min-time 0.05 --warmup 2 --iterations 5 --quiet "
                             "--no-store --json " +
                             Quote(json.string()));
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const nlohmann::json now = ReadJson(json);
  fs::remove(json);

  std::vector<std::string> differences;
  CollectShapeDifferences(before, now, "", differences);
  EXPECT_TRUE(differences.empty()) << ::testing::PrintToString(differences);
  EXPECT_EQ(before["schema"], now["schema"]);
  // inputs gained a member since (shapes: the bound input shapes); the rest is as it was.
  nlohmann::json inputs_now = now["inputs"];
  EXPECT_EQ(inputs_now["shapes"], nlohmann::json({{"input", "1x3x32x32"}}));
  inputs_now.erase("shapes");
  EXPECT_EQ(before["inputs"], inputs_now);
  nlohmann::json model_before = before["model"], model_now = now["model"];
  model_before.erase("path");  // relative there, absolute here
  model_now.erase("path");
  EXPECT_EQ(model_before, model_now);
  EXPECT_EQ(before["settings"]["reference"], now["settings"]["reference"]);
  ASSERT_GE(now["targets"].size(), 1u);
  EXPECT_EQ(Deterministic(before["targets"][0]), Deterministic(now["targets"][0]));
  EXPECT_EQ(before["targets"][0]["nodes"].size(), now["targets"][0]["nodes"].size());
}
