// ReadBatchManifest: a manifest with every key, and each mistake a user makes, named by file and line.
#include "profilers/session/batch_manifest.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/core/onnx_builder.h"

namespace chipfit {
namespace {

namespace fs = std::filesystem;

// A model whose inputs are `x` [N, 3, H, W] and `mask` [1, L] (symbolic dims) when `dynamic`, else one
// input x [1, 4].
void WriteModel(const fs::path& path, bool dynamic) {
  onnx::ModelProto m = testing::NewModel("m");
  auto* g = m.mutable_graph();
  if (dynamic) {
    auto add = [&](const std::string& name, std::vector<std::string> dims) {
      auto* v = g->add_input();
      v->set_name(name);
      auto* t = v->mutable_type()->mutable_tensor_type();
      t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
      for (const std::string& d : dims) {
        if (d[0] >= '0' && d[0] <= '9') {
          t->mutable_shape()->add_dim()->set_dim_value(std::stoll(d));
        } else {
          t->mutable_shape()->add_dim()->set_dim_param(d);
        }
      }
    };
    add("x", {"N", "3", "H", "W"});
    add("mask", {"1", "L"});
    testing::AddNode(g, "Relu", {"x"}, {"y"}, "relu");
    testing::AddNode(g, "Relu", {"mask"}, {"z"}, "relu_mask");
    g->add_output()->set_name("y");
    g->add_output()->set_name("z");
  } else {
    testing::AddValue(g->mutable_input(), "x", {1, 4});
    testing::AddValue(g->mutable_output(), "y", {1, 4});
    testing::AddNode(g, "Relu", {"x"}, {"y"}, "relu");
  }
  std::ofstream out(path, std::ios::binary);
  m.SerializeToOstream(&out);
}

class BatchManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("chipfit_batch_manifest_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "models");
    // a.onnx has dynamic inputs x and mask, which every entry of it must bind; b.onnx has none.
    WriteModel(dir_ / "models" / "a.onnx", true);
    WriteModel(dir_ / "models" / "b.onnx", false);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Write(const std::string& text, const std::string& name = "manifest.yaml") {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }

  // The error of reading `text`, which must fail with `code`.
  std::string Error(const std::string& text, StatusCode code = StatusCode::kParseError) {
    const fs::path path = Write(text);
    auto read = ReadBatchManifest(path);
    EXPECT_FALSE(read.ok()) << text;
    if (read.ok()) return "";
    EXPECT_EQ(read.status().code(), code) << read.status().ToString();
    // Every message names the manifest.
    EXPECT_NE(read.status().message().find(path.string()), std::string::npos) << read.status().message();
    return read.status().message();
  }

  fs::path dir_;
};

TEST_F(BatchManifestTest, ReadsEveryKeyResolvingPathsAgainstTheManifestFolder) {
  const fs::path path = Write(R"(models:
  - path: models/a.onnx
    shapes: {x: 1x3x48x192, mask: 1x48}
    data: data/a/
  - path: ./models/../models/b.onnx
targets: [cpu:fp32, cpu:int8]
limits: {max_latency_ms: 5, latency_stat: p90, min_top1: 0.99, min_sqnr_db: 30, max_memory_mb: 512, max_energy_mj: 2.5}
objective: energy
weights: latency=1,energy=0.5
costs: costs.yaml
baseline: latest
report: reports/{model}.html
iterations: 20
warmup: 3
min_time: 0.25
)");
  auto read = ReadBatchManifest(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  const BatchManifest& m = *read;
  ASSERT_EQ(m.models.size(), 2u);
  EXPECT_EQ(m.models[0].path, (dir_ / "models" / "a.onnx").lexically_normal());
  EXPECT_EQ(m.models[0].shapes, (std::vector<std::string>{"x=1x3x48x192", "mask=1x48"}));
  EXPECT_EQ(m.models[0].data, (dir_ / "data/a/").string());
  EXPECT_EQ(m.models[0].line, 2);
  EXPECT_EQ(m.models[1].path, dir_ / "models" / "b.onnx");  // normalised
  EXPECT_TRUE(m.models[1].shapes.empty());
  EXPECT_TRUE(m.models[1].data.empty());
  EXPECT_EQ(m.models[1].line, 5);
  EXPECT_EQ(m.targets, "cpu:fp32,cpu:int8");
  EXPECT_FALSE(m.all_targets);
  const Limits& l = m.recommend.limits;
  EXPECT_EQ(l.max_latency_ms, 5.0);
  EXPECT_EQ(l.latency_stat, "p90");
  EXPECT_EQ(l.min_top1, 0.99);
  EXPECT_EQ(l.min_sqnr_db, 30.0);
  EXPECT_EQ(l.max_memory_mb, 512.0);
  EXPECT_EQ(l.max_energy_mj, 2.5);
  EXPECT_EQ(m.recommend.objective, "energy");
  EXPECT_EQ(m.recommend.weights, "latency=1,energy=0.5");
  EXPECT_EQ(m.recommend.costs, (dir_ / "costs.yaml").string());
  EXPECT_TRUE(m.baseline_latest);
  EXPECT_FALSE(m.baseline_run);
  EXPECT_EQ(m.report, (dir_ / "reports/{model}.html").string());
  EXPECT_EQ(m.iterations, 20);
  EXPECT_EQ(m.warmup, 3);
  EXPECT_DOUBLE_EQ(m.min_time, 0.25);
}

TEST_F(BatchManifestTest, DefaultsAllTargetsAndABaselineRun) {
  auto read = ReadBatchManifest(Write("models:\n  - path: models/b.onnx\ntargets: all\nbaseline: 12\n"));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_TRUE(read->all_targets);
  EXPECT_TRUE(read->targets.empty());
  EXPECT_EQ(read->baseline_run, 12);
  EXPECT_FALSE(read->baseline_latest);
  EXPECT_FALSE(read->recommend.limits.any());
  EXPECT_EQ(read->recommend.limits.latency_stat, "p99");
  EXPECT_EQ(read->recommend.objective, "latency");
  EXPECT_TRUE(read->recommend.weights.empty());
  EXPECT_TRUE(read->recommend.costs.empty());
  EXPECT_TRUE(read->report.empty());
  EXPECT_EQ(read->iterations, 50);
  EXPECT_EQ(read->warmup, 10);
  EXPECT_DOUBLE_EQ(read->min_time, 1.0);
  EXPECT_FALSE(read->confirm);  // unset: `batch --confirm`, else 2
}

TEST_F(BatchManifestTest, AManifestInTheCurrentFolderResolvesAgainstIt) {
  const fs::path before = fs::current_path();
  fs::current_path(dir_);
  Write("models:\n  - path: models/b.onnx\ntargets: [cpu:fp32]\n");
  auto read = ReadBatchManifest("manifest.yaml");
  fs::current_path(before);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->models[0].path, fs::path("models/b.onnx"));
}

TEST_F(BatchManifestTest, AMissingFileIsNotFoundNamingIt) {
  const fs::path path = dir_ / "absent.yaml";
  auto read = ReadBatchManifest(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(read.status().message(), "cannot read the batch manifest '" + path.string() + "'");
}

TEST_F(BatchManifestTest, MalformedYamlOrNotAMappingIsRefused) {
  EXPECT_NE(Error("models: [\n").find("batch manifest '"), std::string::npos);
  EXPECT_NE(Error("- path: models/a.onnx\n").find("expected a mapping (models:, targets: …)"), std::string::npos);
}

TEST_F(BatchManifestTest, AnUnknownKeyNamesFileAndLine) {
  const std::string e = Error("models:\n  - path: models/b.onnx\ntargets: [cpu:fp32]\ncolour: blue\n");
  EXPECT_EQ(e,
            (dir_ / "manifest.yaml").string() +
                ":4: unknown key 'colour' (models, targets, limits, calibration, objective, weights, costs, "
                "baseline, fail_on_inconclusive, confirm, report, iterations, warmup, min_time, threads, preprocess, "
                "sample_rate)");
}

TEST_F(BatchManifestTest, AnUnknownModelKeyNamesItsLine) {
  EXPECT_NE(Error("models:\n  - path: models/b.onnx\n    shape: {x: 1}\ntargets: [cpu:fp32]\n")
                .find(":3: unknown model key 'shape': did you mean 'shapes'? (path, shapes, data, preprocess, "
                      "sample_rate, targets, limits, calibration)"),
            std::string::npos);
  EXPECT_NE(Error("models:\n  - data: d/\ntargets: [cpu:fp32]\n").find(":2: a model entry needs path:"),
            std::string::npos);
  EXPECT_NE(Error("models:\n  - models/a.onnx\ntargets: [cpu:fp32]\n").find(":2: a model entry needs path: (and"),
            std::string::npos);
}

TEST_F(BatchManifestTest, AMissingModelFileNamesItAndItsLine) {
  const std::string e = Error("models:\n  - path: models/b.onnx\n  - path: models/c.onnx\ntargets: [cpu:fp32]\n");
  EXPECT_NE(e.find(":3: model '" + (dir_ / "models" / "c.onnx").string() + "' does not exist"), std::string::npos) << e;
  EXPECT_NE(Error("models:\n  - path: /nonexistent/model.onnx\ntargets: [cpu:fp32]\n")
                .find(":2: model '/nonexistent/model.onnx'"),
            std::string::npos);
}

TEST_F(BatchManifestTest, ABadTargetNamesItsLine) {
  const std::string e = Error("models:\n  - path: models/b.onnx\ntargets:\n  - cpu:fp32\n  - cpu:fp99\n");
  EXPECT_NE(e.find(":5: "), std::string::npos) << e;
  EXPECT_NE(e.find("fp99"), std::string::npos) << e;
  EXPECT_NE(Error("models:\n  - path: models/b.onnx\ntargets: {cpu: fp32}\n")
                .find(":3: targets: needs a list of targets or 'all'"),
            std::string::npos);
}

TEST_F(BatchManifestTest, ABadLimitNamesItsLine) {
  EXPECT_NE(Error("models:\n  - path: models/b.onnx\ntargets: [cpu:fp32]\nlimits: {max_latency: 3}\n")
                .find(":4: unknown limit 'max_latency': did you mean 'max_latency_ms'? (max_latency_ms, latency_stat, "
                      "min_top1, min_sqnr_db, "
                      "max_memory_mb, max_energy_mj, accuracy_guard, rank_unreliable)"),
            std::string::npos);
  EXPECT_NE(
      Error("models:\n  - path: models/b.onnx\ntargets: [cpu:fp32]\nlimits: [3]\n").find(":4: limits: needs a mapping"),
      std::string::npos);
  // Not a number: yaml-cpp's own message, with the line.
  EXPECT_NE(
      Error("models:\n  - path: models/b.onnx\ntargets: [cpu:fp32]\nlimits:\n  min_top1: high\n").find("' line 5: "),
      std::string::npos);
}

TEST_F(BatchManifestTest, ABadObjectiveOrWeightsNamesItsLine) {
  EXPECT_NE(Error("models:\n  - path: models/b.onnx\ntargets: [cpu:fp32]\nobjective: speed\n")
                .find(":4: unknown objective 'speed' (latency, energy, cost or throughput)"),
            std::string::npos);
  EXPECT_NE(Error("models:\n  - path: models/b.onnx\ntargets: [cpu:fp32]\nweights: speed=1\n").find(":4: "),
            std::string::npos);
}

TEST_F(BatchManifestTest, ABadBaselineNamesItsLine) {
  for (const char* baseline : {"earliest", "0", "-3", "12x"}) {
    EXPECT_NE(Error(std::string("models:\n  - path: models/b.onnx\ntargets: [cpu:fp32]\nbaseline: ") + baseline + "\n")
                  .find(":4: baseline: needs 'latest' or a run id"),
              std::string::npos)
        << baseline;
  }
}

TEST_F(BatchManifestTest, NoModelsOrNoTargetsIsRefused) {
  EXPECT_NE(Error("targets: [cpu:fp32]\n").find("': no models: list"), std::string::npos);
  EXPECT_NE(Error("models: []\ntargets: [cpu:fp32]\n").find(":1: models: needs a list of models"), std::string::npos);
  EXPECT_NE(Error("models:\n  - path: models/b.onnx\n").find(":2: no targets: for this model, and none for the whole"),
            std::string::npos);
}

// A model with dynamic dims and no binding for them is refused when the manifest is read, naming the
// key to add, not after the models before it have been profiled.
TEST_F(BatchManifestTest, AMissingShapeNamesTheShapesKey) {
  const std::string e = Error(
      "models:\n  - path: models/b.onnx\n  - path: models/a.onnx\n    shapes: {x: 1x3x8x8}\n"
      "targets: [cpu:fp32]\n");
  EXPECT_NE(e.find(":3: model '"), std::string::npos) << e;
  EXPECT_NE(e.find("input 'mask' has dynamic dims (1xL); bind them under shapes:"), std::string::npos) << e;
  const std::string unknown =
      Error("models:\n  - path: models/b.onnx\n    shapes: {image: 1x4}\ntargets: [cpu:fp32]\n");
  EXPECT_NE(unknown.find("shapes: model '"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("has no input 'image' (x)"), std::string::npos) << unknown;
}

// Per model targets:, limits: (key by key over the manifest's) and calibration:; the manifest's own
// calibration:, threads: and fail_on_inconclusive:.
TEST_F(BatchManifestTest, PerModelTargetsLimitsAndCalibrationOverrideTheManifests) {
  auto read = ReadBatchManifest(Write(R"(models:
  - path: models/b.onnx
  - path: models/b.onnx
    targets: [cpu:int8]
    limits: {max_latency_ms: 2}
    calibration: {method: percentile, percentile: 99.9}
targets: [cpu:fp32]
limits: {max_latency_ms: 5, min_top1: 0.99}
calibration: {method: entropy, samples: 4, keep_fp32: [relu], auto_fp32_sqnr: 30, auto_fp32_agreement: 99,
              int8_all_layers: true}
threads: 1
fail_on_inconclusive: true
confirm: 3
)"));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  const BatchManifest& m = *read;
  EXPECT_EQ(m.threads, 1);
  EXPECT_TRUE(m.fail_on_inconclusive);
  EXPECT_EQ(m.confirm, 3);
  EXPECT_EQ(m.calibration.method, "entropy");
  EXPECT_EQ(m.calibration.samples, 4);
  EXPECT_EQ(m.calibration.keep_fp32, std::vector<std::string>{"relu"});
  EXPECT_DOUBLE_EQ(m.calibration.auto_fp32_sqnr, 30);
  EXPECT_DOUBLE_EQ(m.calibration.auto_fp32_agreement, 99);
  EXPECT_TRUE(m.calibration.int8_all_layers);
  EXPECT_FALSE(m.models[0].targets || m.models[0].limits || m.models[0].calibration);
  ASSERT_TRUE(m.models[1].targets && m.models[1].limits && m.models[1].calibration);
  EXPECT_EQ(*m.models[1].targets, "cpu:int8");
  EXPECT_EQ(m.models[1].limits->max_latency_ms, 2.0);
  EXPECT_EQ(m.models[1].limits->min_top1, 0.99);  // the manifest's, where the model says nothing
  EXPECT_EQ(m.models[1].calibration->method, "percentile");
  EXPECT_EQ(m.models[1].calibration->samples, 4);  // from the manifest's calibration
  EXPECT_NE(Error("models:\n  - path: models/b.onnx\ntargets: [cpu:fp32]\ncalibration: {method: median}\n")
                .find(":4: method: needs minmax, entropy or percentile"),
            std::string::npos);
  EXPECT_NE(Error("models:\n  - path: models/b.onnx\ncalibration: {auto_fp32_agreement: 120}\n")
                .find("auto_fp32_agreement is a percentage (0 to 100)"),
            std::string::npos);
  EXPECT_NE(Error("models:\n  - path: models/b.onnx\ntargets: [cpu:fp32]\nconfirm: -1\n")
                .find(":4: confirm: needs a count of confirmation profiles, 0 to 20"),
            std::string::npos);
}

// Real inputs in a manifest: preprocess: as a mapping (lists for mean/std) or as the --preprocess text,
// sample_rate:, per model over the manifest's; the accuracy guard turned off under limits:; a bad
// preprocess key fails when the manifest is read, naming the line.
TEST_F(BatchManifestTest, PreprocessSampleRateAndTheAccuracyGuard) {
  auto read = ReadBatchManifest(Write(R"(models:
  - path: models/b.onnx
  - path: models/b.onnx
    preprocess: resize=keep-aspect,channels=gray
    sample_rate: 8000
targets: [cpu:fp32]
preprocess: {channels: bgr, mean: [0.485, 0.456, 0.406], std: 0.229/0.224/0.225}
limits: {accuracy_guard: false, rank_unreliable: true}
)"));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->preprocess, "channels=bgr,mean=0.485/0.456/0.406,std=0.229/0.224/0.225");
  EXPECT_EQ(read->sample_rate, 16000);
  EXPECT_FALSE(read->recommend.limits.accuracy_guard);
  EXPECT_TRUE(read->recommend.limits.rank_unreliable);
  EXPECT_FALSE(read->models[0].preprocess || read->models[0].sample_rate);
  ASSERT_TRUE(read->models[1].preprocess && read->models[1].sample_rate);
  EXPECT_EQ(*read->models[1].preprocess, "resize=keep-aspect,channels=gray");
  EXPECT_EQ(*read->models[1].sample_rate, 8000);
  const std::string bad = Error("models:\n  - path: models/b.onnx\ntargets: [cpu:fp32]\npreprocess: {colour: bgr}\n");
  EXPECT_NE(bad.find(":4: preprocess: "), std::string::npos) << bad;
  EXPECT_NE(bad.find("colour"), std::string::npos) << bad;
}

}  // namespace
}  // namespace chipfit
