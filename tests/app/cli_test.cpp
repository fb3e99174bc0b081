// The chipfit CLI as a user runs it: exit codes 0/2, messages that name the culprit, JSON that parses.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/store/run_store.h"
#include "core/tensor/npy.h"
#include "nlohmann/json.hpp"
#include "onnx/onnx_pb.h"
#include "tests/app/run_shell.h"

namespace {

using chipfit::testing::Outcome;

// Runs chipfit (or `program`, e.g. timeout wrapping it) with `args`; stderr joins stdout unless
// `stdout_only` (for output that must parse).
Outcome RunCli(const std::string& args, bool stdout_only = false, const std::string& program = CHIPFIT_CLI) {
  return chipfit::testing::RunShell(program + " " + args + (stdout_only ? " 2>/dev/null" : " 2>&1"));
}

Outcome RunStdout(const std::string& args) { return RunCli(args, /*stdout_only=*/true); }

TEST(CliTest, VersionAndHelpExitZero) {
  Outcome version = RunCli("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("chipfit 0."), std::string::npos) << version.out;
  Outcome help = RunCli("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("devices"), std::string::npos);
  EXPECT_NE(help.out.find("inspect"), std::string::npos);
  EXPECT_EQ(RunCli("devices --help").exit_code, 0);
  EXPECT_EQ(RunCli("inspect --help").exit_code, 0);
}

TEST(CliTest, UnknownFlagExitsTwoAndNamesIt) {
  Outcome o = RunCli("devices --no-such-flag");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("--no-such-flag"), std::string::npos) << o.out;
}

TEST(CliTest, UnknownSubcommandAndNoSubcommandExitTwo) {
  Outcome unknown = RunCli("frobnicate");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.out.find("unknown command 'frobnicate'; the commands are: devices, inspect, run"),
            std::string::npos)
      << unknown.out;
  Outcome near = RunCli("profil x.onnx");
  EXPECT_EQ(near.exit_code, 2);
  EXPECT_NE(near.out.find("(did you mean 'profile'?)"), std::string::npos) << near.out;
  EXPECT_EQ(RunCli("").exit_code, 2);
}

// What a new user types: a short flag name gets the nearest one; a missing required flag is one line
// naming the command's help, not the whole help.
TEST(CliTest, MisspeltFlagsSuggestTheNearestAndMissingOnesTakeOneLine) {
  const std::string cnn = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";
  Outcome iters = RunCli("profile " + cnn + " --targets cpu:fp32 --iters 3 --no-store");
  EXPECT_EQ(iters.exit_code, 2);
  EXPECT_NE(iters.out.find("--iters: did you mean --iterations?"), std::string::npos) << iters.out;
  Outcome no_dir = RunCli("run " + cnn);
  EXPECT_EQ(no_dir.exit_code, 2);
  EXPECT_EQ(no_dir.out, "chipfit: error: --output-dir is required\nRun 'chipfit run --help' for usage.\n");
}

// Bad output paths and empty dims are refused before any work, naming the flag, the path and why.
TEST(CliTest, OutputPathsAndEmptyDimsAreCheckedBeforeAnyWork) {
  const std::string cnn = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";
  Outcome json = RunCli("profile " + cnn + " --targets cpu:fp32 --no-store --json /nonexistent/dir/p.json");
  EXPECT_EQ(json.exit_code, 2);
  EXPECT_NE(json.out.find("--json '/nonexistent/dir/p.json': the folder '/nonexistent/dir' does not exist"),
            std::string::npos)
      << json.out;
  EXPECT_FALSE(std::filesystem::exists("/nonexistent/dir"));
  // A "folder" that is a file.
  Outcome trace = RunCli("profile " + cnn + " --targets cpu:fp32 --no-store --trace " + cnn + "/t.json");
  EXPECT_EQ(trace.exit_code, 2);
  EXPECT_NE(trace.out.find("--trace '" + cnn + "/t.json': the folder '" + cnn + "' does not exist"), std::string::npos)
      << trace.out;
  EXPECT_EQ(trace.out.find("compile"), std::string::npos) << trace.out;  // nothing ran
  Outcome zero = RunCli("inspect " + cnn + " --shape input=0x3x32x32");
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_NE(zero.out.find("a dimension of 0 makes 'input' empty"), std::string::npos) << zero.out;
}

// `--target cuda:0:fp32` on a machine without a usable CUDA device ran every kernel on the reference
// ("fallback to ref" ~180 times, exit 0). It is refused like opencl:1, saying why.
TEST(CliTest, ATargetOnADeviceThatIsNotThereIsRefused) {
  const std::string cnn = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";
  const auto dir = std::filesystem::temp_directory_path() / ("chipfit_cuda_" + std::to_string(::getpid()));
  Outcome run = RunCli("run " + cnn + " --target cuda:0:fp32 --output-dir " + dir.string());
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.out.find("target cuda:0:fp32: "), std::string::npos) << run.out;
  EXPECT_TRUE(run.out.find("there is no cuda:0 on this machine") != std::string::npos ||
              run.out.find("no CUDA kernels yet") != std::string::npos)
      << run.out;
  EXPECT_EQ(run.out.find("fallback to"), std::string::npos) << run.out;
  const auto json_path = dir.string() + ".json";
  Outcome profile = RunCli("profile " + cnn + " --targets cpu:fp32,cuda:0:fp32 --min-time 0 --iterations 3 " +
                           "--warmup 1 --quiet --no-store --rank-unreliable --json " + json_path);
  EXPECT_EQ(profile.exit_code, 0) << profile.out;
  std::ifstream in(json_path);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["targets"][1]["target"], "cuda:0:fp32");
  EXPECT_EQ(j["targets"][1]["status"], "unsupported");
  EXPECT_EQ(j["recommendation"]["best"], "cpu:fp32");
  std::filesystem::remove(json_path);
}

TEST(CliTest, MissingModelFileExitsTwoAndNamesIt) {
  Outcome o = RunCli("inspect /nonexistent/model_xyz.onnx");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("/nonexistent/model_xyz.onnx"), std::string::npos) << o.out;
}

TEST(CliTest, GarbageModelExitsTwoAndNamesIt) {
  const auto path =
      std::filesystem::temp_directory_path() / ("chipfit_cli_test_garbage_" + std::to_string(getpid()) + ".onnx");
  std::ofstream(path) << "this is not a protobuf at all \x01\x02\x03";
  Outcome o = RunCli("inspect " + path.string());
  std::filesystem::remove(path);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find(path.filename().string()), std::string::npos) << o.out;
}

TEST(CliTest, DevicesJsonListsCpuAndOpenCl) {
  Outcome o = RunStdout("devices --json");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  nlohmann::json j = nlohmann::json::parse(o.out);
  ASSERT_FALSE(j["devices"].empty());
  EXPECT_EQ(j["devices"][0]["kind"], "cpu");
  EXPECT_FALSE(j["devices"][0]["features"].empty());
  bool opencl = false;
  for (const auto& d : j["devices"]) opencl |= d["kind"] == "opencl";
  EXPECT_TRUE(opencl) << "no OpenCL device in: " << o.out;
}

TEST(CliTest, DevicesTextNamesTargets) {
  Outcome o = RunStdout("devices");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("cpu:fp32"), std::string::npos) << o.out;
}

TEST(CliTest, InspectSampleModel) {
  const std::string model = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";
  Outcome o = RunStdout("inspect --json " + model);
  ASSERT_EQ(o.exit_code, 0) << o.out;
  nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["schema"], "chipfit.inspect/1");
  EXPECT_EQ(j["model"]["inputs"][0]["shape"], nlohmann::json::parse("[1, 3, 32, 32]"));
  EXPECT_GT(j["model"]["op_histogram"]["Conv"].get<int>(), 0);
  Outcome text = RunStdout("inspect " + model);
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("opset 13"), std::string::npos) << text.out;
}

// Bad input through `chipfit run`: each case exits 2 with a message naming the culprit.
class CliRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("chipfit_cli_run_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // y = Relu(Add(x, x)) with x float [2, 3].
  static onnx::ModelProto Model() {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    auto* g = m.mutable_graph();
    g->set_name("g");
    for (auto* v : {g->add_input(), g->add_output()}) {
      auto* t = v->mutable_type()->mutable_tensor_type();
      t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
      t->mutable_shape()->add_dim()->set_dim_value(2);
      t->mutable_shape()->add_dim()->set_dim_value(3);
    }
    g->mutable_input(0)->set_name("x");
    g->mutable_output(0)->set_name("y");
    auto* add = g->add_node();
    add->set_op_type("Add");
    add->set_name("add");
    add->add_input("x");
    add->add_input("x");
    add->add_output("s");
    auto* relu = g->add_node();
    relu->set_op_type("Relu");
    relu->set_name("relu");
    relu->add_input("s");
    relu->add_output("y");
    return m;
  }
  std::string Write(const std::string& name, const std::string& bytes) {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path.string();
  }
  Outcome RunModel(const std::string& model, const std::string& extra = "") {
    return RunCli("run " + model + " --output-dir " + (dir_ / "out").string() + " " + extra);
  }
  std::filesystem::path dir_;
};

TEST_F(CliRunTest, GoodModelWritesItsOutputs) {
  const std::string model = Write("good.onnx", Model().SerializeAsString());
  Outcome o = RunModel(model, "--seed 3");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  auto y = chipfit::ReadNpy(dir_ / "out" / "y.npy");
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->shape(), (chipfit::Shape{2, 3}));
  for (int64_t i = 0; i < y->numel(); ++i) EXPECT_GE(y->data<float>()[i], 0.0f);
}

TEST_F(CliRunTest, TruncatedModel) {
  const std::string bytes = Model().SerializeAsString();
  const std::string model = Write("truncated.onnx", bytes.substr(0, bytes.size() / 2));
  Outcome o = RunModel(model);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("truncated.onnx"), std::string::npos) << o.out;
}

TEST_F(CliRunTest, NodeWithAMissingInput) {
  onnx::ModelProto m = Model();
  m.mutable_graph()->mutable_node(1)->set_input(0, "nowhere");
  Outcome o = RunModel(Write("missing_input.onnx", m.SerializeAsString()));
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("nowhere"), std::string::npos) << o.out;
}

TEST_F(CliRunTest, Cycle) {
  onnx::ModelProto m = Model();
  m.mutable_graph()->mutable_node(0)->set_input(1, "y");
  Outcome o = RunModel(Write("cycle.onnx", m.SerializeAsString()));
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("cycle"), std::string::npos) << o.out;
}

TEST_F(CliRunTest, WrongShapeInput) {
  const std::string model = Write("good.onnx", Model().SerializeAsString());
  ASSERT_TRUE(chipfit::WriteNpy(dir_ / "x.npy", chipfit::Tensor(chipfit::DType::kF32, {3, 2})).ok());
  Outcome o = RunModel(model, "--input x=" + (dir_ / "x.npy").string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("input 'x' is f32[3x2], the model expects f32[2x3]"), std::string::npos) << o.out;
}

TEST_F(CliRunTest, NpyOfTheWrongDtype) {
  const std::string model = Write("good.onnx", Model().SerializeAsString());
  ASSERT_TRUE(chipfit::WriteNpy(dir_ / "x.npy", chipfit::Tensor(chipfit::DType::kI64, {2, 3})).ok());
  Outcome o = RunModel(model, "--input x=" + (dir_ / "x.npy").string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("input 'x' is i64[2x3]"), std::string::npos) << o.out;
}

TEST_F(CliRunTest, MalformedNpyAndUnknownInputName) {
  const std::string model = Write("good.onnx", Model().SerializeAsString());
  const std::string bad = Write("bad.npy", "\x93NUMPY garbage");
  Outcome o = RunModel(model, "--input x=" + bad);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("bad.npy"), std::string::npos) << o.out;
  ASSERT_TRUE(chipfit::WriteNpy(dir_ / "x.npy", chipfit::Tensor(chipfit::DType::kF32, {2, 3})).ok());
  o = RunModel(model, "--input nope=" + (dir_ / "x.npy").string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("'nope'"), std::string::npos) << o.out;
}

TEST_F(CliRunTest, UnsupportedPrecisionSaysWhy) {
  const std::string model = Write("good.onnx", Model().SerializeAsString());
  Outcome o = RunModel(model, "--target cpu:tf32");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("cpu:tf32 is unsupported on this CPU: tf32 is an NVIDIA tensor-core mode"), std::string::npos)
      << o.out;
  o = RunModel(model, "--target ref:int8");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("the reference kernels compute in fp32 only"), std::string::npos) << o.out;
}

// int8 on the sample CNN: calibrated on seeded random inputs, and every output says so.
TEST_F(CliRunTest, Int8RunSaysHowItWasCalibrated) {
  const std::string cnn = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";
  Outcome o = RunModel(cnn, "--target cpu:int8 --calibration percentile --calibration-samples 3");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("calibrated with percentile on 3 seeded random sample(s)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("random calibration"), std::string::npos) << o.out;
  EXPECT_TRUE(std::filesystem::exists(dir_ / "out" / "probabilities.npy"));
  o = RunModel(cnn, "--target cpu:int8 --calibration kl");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("--calibration 'kl'"), std::string::npos) << o.out;
  o = RunModel(cnn, "--target cpu:int8 --keep-fp32 no_such_node");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("no node named 'no_such_node'"), std::string::npos) << o.out;
  o = RunModel(cnn, "--target cpu:int8 --data " + (dir_ / "missing").string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("missing"), std::string::npos) << o.out;
}

// inspect --target: where every kernel runs, with the ONNX nodes each covers.
TEST(CliInspectTest, TargetPlacementJson) {
  const std::string cnn = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";
  Outcome o = RunCli("inspect " + cnn + " --target cpu:fp32 --json", /*stdout_only=*/true);
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["schema"], "chipfit.placement/1");
  const auto& kernels = j["placement"]["kernels"];
  ASSERT_FALSE(kernels.empty());
  int on_cpu = 0, covered = 0;
  for (const auto& k : kernels) {
    on_cpu += k["device"] == "cpu" ? 1 : 0;
    covered += static_cast<int>(k["onnx_nodes"].size());
    // oneDNN kernels say which of its implementations (and instruction set) runs them.
    const std::string implementation = k["implementation"];
    if (implementation.starts_with("onednn:")) {
      EXPECT_FALSE(k["isa"].get<std::string>().empty()) << k["name"];
    }
  }
  EXPECT_EQ(on_cpu, static_cast<int>(kernels.size())) << o.out;
  EXPECT_GT(covered, static_cast<int>(kernels.size()));  // something was fused
  EXPECT_TRUE(j["placement"]["fallbacks"].empty());
}

// The OpenCL device (POCL in CI): placement with device memory and copies, the fallback of a node
// it refuses, and --no-fallback turning that refusal into an error naming the node.
TEST(CliInspectTest, OpenClPlacementCopiesAndFallback) {
  const std::string cnn = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";
  Outcome o = RunCli("inspect " + cnn + " --target opencl:0:fp16 --json", /*stdout_only=*/true);
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  const auto& p = j["placement"];
  EXPECT_EQ(p["target"], "opencl:0:fp16");
  EXPECT_EQ(p["transfers"], 2);  // the input up, the output down
  EXPECT_GT(p["device_arena_bytes"].get<int64_t>(), 0);
  int copies = 0;
  for (const auto& k : p["kernels"]) {
    EXPECT_EQ(k["device"], "opencl:0") << k.dump();
    if (k["op"] == "Copy") {
      ++copies;
      continue;
    }
    EXPECT_EQ(k["precision"], "fp16") << k.dump();
  }
  EXPECT_EQ(copies, 2);
  EXPECT_EQ(p["device_kernels"].get<int>() + copies, static_cast<int>(p["kernels"].size()));
}

TEST(CliConformanceTest, OpenClFallbackAndNoFallback) {
  // Strided 2-D convolutions run entirely on the device. CumSum has no OpenCL kernel: it falls back
  // (and passes) and is listed, or with --no-fallback the case is unsupported.
  Outcome o = RunCli("conformance --filter test_conv_with_strides --targets opencl:0:fp32 --json", true);
  ASSERT_EQ(o.exit_code, 0) << o.out;
  nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["targets"][0]["total"]["fail"].get<int>(), 0);
  EXPECT_GE(j["targets"][0]["total"]["cases_fully_on_device"].get<int>(), 1);
  Outcome cumsum = RunCli("conformance --filter test_cumsum_1d --targets opencl:0:fp32 --json", true);
  ASSERT_EQ(cumsum.exit_code, 0) << cumsum.out;
  j = nlohmann::json::parse(cumsum.out);
  EXPECT_TRUE(j["targets"][0]["fallbacks"].contains("CumSum")) << cumsum.out;
  Outcome strict = RunCli("conformance --filter test_cumsum_1d --targets opencl:0:fp32 --no-fallback --json", true);
  ASSERT_EQ(strict.exit_code, 0) << strict.out;
  j = nlohmann::json::parse(strict.out);
  EXPECT_EQ(j["targets"][0]["total"]["pass"].get<int>(), 0);
  EXPECT_GE(j["targets"][0]["total"]["unsupported"].get<int>(), 1);
}

// devices --measure: ceilings for every device, cached and shown again without --measure; a cache
// that is not one is an error naming it, left untouched.
TEST(CliDevicesTest, MeasureCachesCeilingsThatLaterCallsShow) {
  const auto cache = std::filesystem::temp_directory_path() / ("chipfit_xdg_" + std::to_string(::getpid()));
  std::filesystem::remove_all(cache);
  const std::string env = "XDG_CACHE_HOME=" + cache.string() + " ";
  Outcome measured = RunCli("devices --measure --json", true, env + CHIPFIT_CLI);
  ASSERT_EQ(measured.exit_code, 0) << measured.out;
  const nlohmann::json j = nlohmann::json::parse(measured.out);
  const auto& cpu = j["devices"][0];
  ASSERT_EQ(cpu["id"], "cpu") << cpu.dump();
  const auto& c = cpu["ceilings"];
  ASSERT_TRUE(c.is_object()) << cpu.dump();
  EXPECT_GT(c["measured"]["memory_bandwidth_gbps"].get<double>(), 0.1);
  EXPECT_GT(c["measured"]["peak_gflops"]["fp32"].get<double>(), 0.1);
  EXPECT_FALSE(c["methods"].empty());
  EXPECT_TRUE(std::filesystem::exists(cache / "chipfit" / "ceilings.json"));
  // Energy sensors: those found, or why none was (this VM has none: the notes say what was tried).
  const auto& sensors = j["energy_sensors"];
  EXPECT_GT(sensors["found"].size() + sensors["notes"].size(), 0u) << sensors.dump();
  // Cached: shown without measuring again, the same figures.
  Outcome again = RunCli("devices --json", true, env + CHIPFIT_CLI);
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(nlohmann::json::parse(again.out)["devices"][0]["ceilings"], c);
  Outcome text = RunCli("devices", false, env + CHIPFIT_CLI);
  EXPECT_NE(text.out.find("GFLOP/s measured"), std::string::npos) << text.out;
  // A file that is not a ceilings cache.
  std::ofstream(cache / "chipfit" / "ceilings.json") << "not json";
  Outcome corrupt = RunCli("devices", false, env + CHIPFIT_CLI);
  EXPECT_EQ(corrupt.exit_code, 2);
  EXPECT_NE(corrupt.out.find("ceilings.json"), std::string::npos) << corrupt.out;
  std::ifstream in(cache / "chipfit" / "ceilings.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "not json");
  std::filesystem::remove_all(cache);
}

// chipfit profile: the JSON contract's fields per target, an unsupported target recorded with its
// reason while the others go on, and Ctrl-C ending the run cleanly with every target accounted for.
TEST(CliProfileTest, JsonHasEveryTargetAndItsLayers) {
  const std::string cnn = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";
  const auto json_path =
      std::filesystem::temp_directory_path() / ("chipfit_profile_" + std::to_string(::getpid()) + ".json");
  const auto trace_path = json_path.string() + ".trace.json";
  Outcome o =
      RunCli("profile " + cnn + " --targets cpu:fp32,cpu:fp16,opencl:0:fp32 --min-time 0.05 --warmup 2 --json " +
             json_path.string() + " --trace " + trace_path + " --quiet");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  std::ifstream in(json_path);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["schema"], "chipfit.profile/1");
  ASSERT_EQ(j["targets"].size(), 3u);
  EXPECT_EQ(j["targets"][1]["status"], "unsupported");
  EXPECT_FALSE(j["targets"][1]["error"].get<std::string>().empty());
  for (int t : {0, 2}) {
    const auto& target = j["targets"][t];
    EXPECT_EQ(target["status"], "ok") << target.dump();
    const auto& lat = target["latency_ms"];
    EXPECT_GE(lat["iterations"].get<int>(), 50);
    EXPECT_LE(lat["min"].get<double>(), lat["p50"].get<double>());
    EXPECT_LE(lat["p50"].get<double>(), lat["p99"].get<double>());
    EXPECT_GT(target["instrumentation_overhead"].get<double>(), 0);
    ASSERT_FALSE(target["layers"].empty());
    int64_t flops = 0;
    for (const auto& layer : target["layers"]) {
      flops += layer["flops"].get<int64_t>();
      EXPECT_FALSE(layer["onnx_nodes"].empty());
      EXPECT_GE(layer["time_ms"]["p90"].get<double>(), layer["time_ms"]["p50"].get<double>());
      // A oneDNN kernel names the implementation and instruction set that ran it, as inspect does.
      if (layer["implementation"].get<std::string>().starts_with("onednn:")) {
        ASSERT_TRUE(layer.contains("isa")) << layer.dump();
        EXPECT_FALSE(layer["isa"].get<std::string>().empty()) << layer.dump();
      }
    }
    EXPECT_GT(flops, 0);
    // Roofline: the CPU's and the OpenCL device's ceilings were measured (or cached), so every
    // layer with a cost has a bound and none is attainable beyond its device's peak.
    ASSERT_TRUE(target["ceilings"].is_object()) << target["ceilings"].dump();
    for (const auto& layer : target["layers"]) {
      if (layer["bytes_read"].get<int64_t>() + layer["bytes_written"].get<int64_t>() > 0) {
        EXPECT_TRUE(layer["bound"] == "memory" || layer["bound"] == "compute") << layer.dump();
      }
    }
    // The per-ONNX-node view: each node shows its computing kernel's whole time ("shared_by" its
    // nodes when fused); counting each kernel once, the nodes' time is that of the kernels computing them.
    double computing_ms = 0, node_ms = 0;
    std::set<int64_t> kernels;
    for (const auto& node : target["nodes"]) {
      EXPECT_TRUE(node["op"].is_string()) << node.dump();
      const int64_t k = node["kernel"].get<int64_t>();
      const auto& kernel = target["layers"][static_cast<size_t>(k)];
      EXPECT_EQ(node["time_ms"]["p50"], kernel["time_ms"]["p50"]) << node.dump();
      EXPECT_EQ(node["shared_by"], kernel["onnx_nodes"].size()) << node.dump();
      if (kernels.insert(k).second) node_ms += node["time_ms"]["p50"].get<double>();
    }
    for (const int64_t k : kernels)
      computing_ms += target["layers"][static_cast<size_t>(k)]["time_ms"]["p50"].get<double>();
    EXPECT_NEAR(node_ms, computing_ms, 1e-9);
    EXPECT_FALSE(kernels.empty());
    if (target["measured_peak_memory_bytes"].is_number()) {
      EXPECT_GT(target["measured_peak_memory_bytes"].get<int64_t>(), 0);
    }
  }
  EXPECT_EQ(j["model"]["sha256"].get<std::string>().size(), 64u);
  EXPECT_GT(j["model"]["flops"].get<int64_t>(), 0);
  std::filesystem::remove(json_path);
  // The trace: a named track per target and one complete slice per kernel of each that ran.
  std::ifstream trace_in(trace_path);
  const nlohmann::json trace = nlohmann::json::parse(trace_in);
  size_t slices = 0, tracks = 0;
  for (const auto& e : trace["traceEvents"]) {
    slices += e["ph"] == "X" ? 1 : 0;
    tracks += e["ph"] == "M" && e["name"] == "process_name" ? 1 : 0;
  }
  EXPECT_EQ(tracks, 3u);
  EXPECT_EQ(slices, j["targets"][0]["layers"].size() + j["targets"][2]["layers"].size());
  std::filesystem::remove(trace_path);
  EXPECT_EQ(RunCli("profile " + cnn).exit_code, 2);  // no targets
  EXPECT_EQ(RunCli("profile " + cnn + " --targets cpu:fp99").exit_code, 2);
  // Throughput mode's flags: a batch size or stream count that cannot be is exit 2, naming it.
  for (const char* bad : {" --batch 0", " --batch 1,x", " --streams 0"}) {
    const Outcome o = RunCli("profile " + cnn + " --targets cpu:fp32 --no-store" + bad);
    EXPECT_EQ(o.exit_code, 2) << bad << ": " << o.out;
    EXPECT_NE(o.out.find(std::string(bad).substr(1, 8)), std::string::npos) << o.out;
  }
}

// oneDNN held to SSE4.1 has no bf16 kernels: cpu:bf16 is refused naming the variable (not run in fp32
// under its name), the ISA is in `devices`, and a profile where no target ran is exit 1 with the reasons.
// A target named twice is exit 2.
TEST(CliProfileTest, APrecisionOneDnnCannotComputeIsRefusedAndNoTargetRanIsExitOne) {
  const std::string cnn = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";
  const std::string held = "ONEDNN_MAX_CPU_ISA=SSE41 " + std::string(CHIPFIT_CLI);
  Outcome devices = RunCli("devices", false, held);
  EXPECT_EQ(devices.exit_code, 0) << devices.out;
  EXPECT_NE(devices.out.find("sse41 (held there by ONEDNN_MAX_CPU_ISA=SSE41)"), std::string::npos) << devices.out;
  Outcome o =
      RunCli("profile " + cnn + " --targets cpu:bf16 --min-time 0 --iterations 3 --quiet --no-store", false, held);
  EXPECT_EQ(o.exit_code, 1) << o.out;
  EXPECT_NE(o.out.find("no target ran"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("cpu:bf16 unsupported"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("ONEDNN_MAX_CPU_ISA=SSE41 holds oneDNN to sse41, which has no bf16 kernels"), std::string::npos)
      << o.out;
  Outcome twice = RunCli("profile " + cnn + " --targets cpu:fp32,cpu:fp32 --quiet --no-store");
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.out.find("--targets names cpu:fp32 twice"), std::string::npos) << twice.out;
}

TEST(CliProfileTest, CtrlCStopsCleanlyAndMarksTheRestCancelled) {
  const std::string cnn = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";
  const auto json_path =
      std::filesystem::temp_directory_path() / ("chipfit_sigint_" + std::to_string(::getpid()) + ".json");
  // The shell's exit status is chipfit's.
  const auto [o, progress] = chipfit::testing::InterruptWhenProgressShows(
      std::string(CHIPFIT_CLI) + " profile " + cnn +
          " --targets cpu:fp32,opencl:0:fp32 --min-time 30 --warmup 1 --no-store --json " + json_path.string(),
      "end-to-end", json_path.string() + ".log");
  EXPECT_NE(progress.find("cpu:fp32: end-to-end"), std::string::npos) << progress;
  EXPECT_EQ(o.exit_code, 130) << o.out << progress;
  std::ifstream in(json_path);
  ASSERT_TRUE(in.good()) << "no JSON after Ctrl-C";
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j["targets"].size(), 2u);
  for (const auto& t : j["targets"]) EXPECT_EQ(t["status"], "cancelled") << t.dump();
  std::filesystem::remove(json_path);
}

TEST(CliConformanceTest, CountsAndExitCode) {
  Outcome o = RunCli("conformance --filter test_conv_with --targets ref,cpu:fp32 --json", /*stdout_only=*/true);
  ASSERT_EQ(o.exit_code, 0) << o.out;
  nlohmann::json j = nlohmann::json::parse(o.out);
  ASSERT_EQ(j["targets"].size(), 2u);
  EXPECT_EQ(j["targets"][0]["target"], "ref:fp32");
  EXPECT_EQ(j["targets"][1]["target"], "cpu:fp32");
  for (const auto& t : j["targets"]) {
    EXPECT_GE(t["total"]["pass"].get<int>(), 1);
    EXPECT_EQ(t["total"]["fail"].get<int>(), 0);
  }
  // The Conv cases run on oneDNN on cpu:fp32, never on the reference path.
  EXPECT_EQ(j["targets"][0]["total"]["device_kernels"].get<int>(), 0);
  EXPECT_GE(j["targets"][1]["total"]["device_kernels"].get<int>(), 1);
  EXPECT_EQ(RunCli("conformance --suite /nonexistent/suite").exit_code, 2);
}

}  // namespace

namespace {

// The run store through the CLI: profile records each run, history lists it, two processes
// profiling into one store both succeed, and a process killed mid-run leaves its run incomplete
// and every earlier run intact.
std::string TempStore(const std::string& name) {
  const auto path =
      std::filesystem::temp_directory_path() / ("chipfit_cli_" + name + "_" + std::to_string(::getpid()) + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
  return path.string();
}

nlohmann::json History(const std::string& db) {
  Outcome o = RunCli("history --db " + db + " --json", true);
  EXPECT_EQ(o.exit_code, 0) << o.out;
  return nlohmann::json::parse(o.out, nullptr, false);
}

TEST(CliStoreTest, ProfileRecordsTheRunAndHistoryListsIt) {
  const std::string cnn = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";
  const std::string db = TempStore("history");
  const auto json_path = db + ".json";
  // Two threads, whatever else the machine runs (unset, a busy machine would choose one, the same as
  // the --threads 1 run below).
  Outcome o =
      RunCli("profile " + cnn +
             " --targets cpu:fp32,cpu:fp16 --min-time 0.05 --warmup 2 --quiet --threads 2 --oversubscribe --db " + db +
             " --json " + json_path);
  ASSERT_EQ(o.exit_code, 0) << o.out;
  std::ifstream in(json_path);
  const nlohmann::json profile = nlohmann::json::parse(in);
  ASSERT_TRUE(profile["run_id"].is_number_integer()) << profile["run_id"];
  const nlohmann::json history = History(db);
  ASSERT_EQ(history["runs"].size(), 1u);
  const auto& run = history["runs"][0];
  EXPECT_EQ(run["run_id"], profile["run_id"]);
  EXPECT_EQ(run["status"], "ok");
  EXPECT_EQ(run["targets"], 2);
  EXPECT_EQ(run["targets_ok"], 1);
  EXPECT_EQ(run["model"]["sha256"], profile["model"]["sha256"]);
  // --model matches by content: the same file found, another model not.
  Outcome mine = RunCli("history --db " + db + " --json --model " + cnn, true);
  EXPECT_EQ(nlohmann::json::parse(mine.out)["runs"].size(), 1u);
  Outcome other = RunCli(
      "history --db " + db + " --json --model " + std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/mlp.onnx", true);
  EXPECT_TRUE(nlohmann::json::parse(other.out)["runs"].empty());
  EXPECT_EQ(RunCli("history --db /nonexistent/chipfit.db").exit_code, 2);
  // diff: a run against itself has no regression (exit 0); an unknown run is an input error.
  const std::string id = std::to_string(profile["run_id"].get<int64_t>());
  Outcome same = RunCli("diff " + id + " " + id + " --db " + db + " --json", true);
  ASSERT_EQ(same.exit_code, 0) << same.out;
  const nlohmann::json diff = nlohmann::json::parse(same.out);
  EXPECT_EQ(diff["regressions"], 0);
  EXPECT_EQ(diff["targets"].size(), 2u);
  EXPECT_DOUBLE_EQ(diff["targets"][0]["ratio"].get<double>(), 1.0);
  Outcome text = RunCli("diff " + id + " " + id + " --db " + db);
  // The same run twice: never a regression (unchanged, or inconclusive when its few samples are noisy).
  EXPECT_NE(text.out.find("0 regressed, 0 improved, "), std::string::npos) << text.out;
  EXPECT_EQ(RunCli("diff " + id + " 999 --db " + db).exit_code, 2);
  // A run with other threads measured something else: refused (exit 2, saying what differs) unless
  // --force, which compares and says it on top.
  ASSERT_EQ(RunCli("profile " + cnn + " --targets cpu:fp32 --min-time 0.05 --warmup 2 --quiet --threads 1 --db " + db)
                .exit_code,
            0);
  Outcome refused = RunCli("diff " + id + " 2 --db " + db);
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_NE(refused.out.find("not compared: they measured different things"), std::string::npos) << refused.out;
  EXPECT_NE(refused.out.find("threads: "), std::string::npos) << refused.out;
  Outcome forced = RunCli("diff " + id + " 2 --db " + db + " --force");
  EXPECT_TRUE(forced.exit_code == 0 || forced.exit_code == 1) << forced.out;
  EXPECT_NE(forced.out.find("are compared although they measured different things"), std::string::npos) << forced.out;
  // history and diff on an empty file leave it alone: it does not become a store.
  const std::string empty = db + ".empty";
  std::ofstream(empty).close();
  Outcome on_empty = RunCli("history --db " + empty);
  EXPECT_EQ(on_empty.exit_code, 2);
  EXPECT_NE(on_empty.out.find("is an empty file, not a chipfit run store"), std::string::npos) << on_empty.out;
  EXPECT_EQ(std::filesystem::file_size(empty), 0u);
  std::filesystem::remove(empty);
  std::filesystem::remove(json_path);
}

// history --delete: the run leaves the listing with its targets, the others stay; an id the store does
// not have is an input error that names it and deletes nothing, even beside a good id.
TEST(CliStoreTest, HistoryDeleteRemovesTheRunAndRefusesAnUnknownId) {
  const std::string db = TempStore("delete");
  std::vector<int64_t> ids;
  {
    auto store = chipfit::RunStore::Open(db);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    const nlohmann::json model = {{"path", "models/cnn.onnx"}, {"sha256", std::string(64, 'c')}};
    const nlohmann::json machine = {{"hostname", "cli-test"}};
    for (int i = 0; i < 3; ++i) {
      auto id = (*store)->BeginRun(model, machine, nlohmann::json::object(), "chipfit profile", "test");
      ASSERT_TRUE(id.ok()) << id.status().ToString();
      ASSERT_TRUE((*store)->AddTarget(*id, {{"target", "cpu:fp32"}, {"status", "ok"}}).ok());
      ASSERT_TRUE((*store)->FinishRun(*id, "ok").ok());
      ids.push_back(*id);
    }
  }
  const std::string middle = std::to_string(ids[1]);
  Outcome deleted = RunCli("history --db " + db + " --delete " + middle);
  ASSERT_EQ(deleted.exit_code, 0) << deleted.out;
  EXPECT_NE(deleted.out.find("deleted run " + middle + " from " + db), std::string::npos) << deleted.out;
  nlohmann::json history = History(db);
  ASSERT_EQ(history["runs"].size(), 2u) << history.dump();
  EXPECT_EQ(history["runs"][0]["run_id"], ids[2]);
  EXPECT_EQ(history["runs"][1]["run_id"], ids[0]);

  Outcome again = RunCli("history --db " + db + " --delete " + middle);
  EXPECT_EQ(again.exit_code, 2) << again.out;
  EXPECT_NE(again.out.find("run " + middle + " is not in " + db), std::string::npos) << again.out;
  // One unknown id among good ones: nothing is deleted.
  Outcome mixed = RunCli("history --db " + db + " --delete " + std::to_string(ids[0]) + " 999");
  EXPECT_EQ(mixed.exit_code, 2) << mixed.out;
  EXPECT_NE(mixed.out.find("run 999 is not in"), std::string::npos) << mixed.out;
  EXPECT_NE(mixed.out.find("nothing was deleted"), std::string::npos) << mixed.out;
  EXPECT_EQ(History(db)["runs"].size(), 2u);

  Outcome as_json = RunCli("history --db " + db + " --delete " + std::to_string(ids[0]) + " --json", true);
  ASSERT_EQ(as_json.exit_code, 0) << as_json.out;
  const nlohmann::json report = nlohmann::json::parse(as_json.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << as_json.out;
  EXPECT_EQ(report["deleted"], nlohmann::json::array({ids[0]}));
  history = History(db);
  ASSERT_EQ(history["runs"].size(), 1u);
  EXPECT_EQ(history["runs"][0]["run_id"], ids[2]);

  EXPECT_EQ(RunCli("history --db " + db + " --delete notanumber").exit_code, 2);
  EXPECT_EQ(RunCli("history --db /nonexistent/chipfit.db --delete 1").exit_code, 2);
}

TEST(CliStoreTest, TwoProfilesIntoOneStoreAtOnceBothSucceed) {
  const std::string cnn = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";
  const std::string db = TempStore("concurrent");
  const std::string profile = std::string(CHIPFIT_CLI) + " profile " + cnn +
                              " --targets cpu:fp32,cpu:int8 --min-time 0.3 --warmup 2 --quiet --db " + db;
  // By pid: bash keeps a finished child's status for `wait PID`, while `wait %2` fails ("no such job")
  // when job 2 ended before job 1 and left the job table.
  Outcome both = RunCli("-c '" + profile + " & a=$!; " + profile + " & b=$!; wait $a && wait $b'", false, "bash");
  ASSERT_EQ(both.exit_code, 0) << both.out;
  const nlohmann::json history = History(db);
  ASSERT_EQ(history["runs"].size(), 2u) << history.dump();
  for (const auto& run : history["runs"]) {
    EXPECT_EQ(run["status"], "ok");
    EXPECT_EQ(run["targets_ok"], 2);
  }
}

TEST(CliStoreTest, KillNineMidRunLeavesItIncompleteAndEarlierRunsIntact) {
  const std::string cnn = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";
  const std::string db = TempStore("kill");
  ASSERT_EQ(RunCli("profile " + cnn + " --targets cpu:fp32 --min-time 0.05 --warmup 2 --quiet --db " + db).exit_code,
            0);
  // The second run: three targets timed together in rounds for about 3 s; killed while they are timed,
  // once the run is in the store.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    execl(CHIPFIT_CLI, CHIPFIT_CLI, "profile", cnn.c_str(), "--targets", "cpu:fp32,cpu:int8,cpu:bf16", "--min-time",
          "1", "--warmup", "2", "--quiet", "--db", db.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  bool started = false;
  for (int i = 0; i < 600 && !started; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const nlohmann::json h = History(db);
    started = h.is_object() && h["runs"].size() == 2;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(started) << "the second run never reached the store";
  ASSERT_TRUE(WIFSIGNALED(status));
  const nlohmann::json history = History(db);
  ASSERT_EQ(history["runs"].size(), 2u);
  EXPECT_EQ(history["runs"][0]["status"], "incomplete");
  EXPECT_EQ(history["runs"][0]["targets_ok"], 0) << "killed before any target finished its rounds";
  EXPECT_EQ(history["runs"][1]["status"], "ok");
  EXPECT_EQ(history["runs"][1]["targets_ok"], 1);
}

}  // namespace

namespace {

TEST(CliRecommendTest, LimitsRankRejectAndGateTheExitCode) {
  const std::string cnn = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";
  const std::string db = TempStore("recommend");
  const std::string json_path = db + ".json";
  // profile takes the limits too: the recommendation is in its JSON.
  Outcome o =
      // --int8-all-layers: int8 in int8 whatever this machine's timings (under a sanitizer, or busy, every
      // int8 layer can time slower than fp32, and a target left all in fp32 is ranked as cpu:fp32).
      RunCli("profile " + cnn + " --targets cpu:fp32,cpu:int8,cpu:fp16 --min-time 0.05 --warmup 2 --quiet --db " + db +
             " --json " + json_path + " --max-latency-ms 1000 --latency-stat p50 --min-sqnr-db 10 --int8-all-layers" +
             " --rank-unreliable");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  std::ifstream in(json_path);
  const nlohmann::json profile = nlohmann::json::parse(in);
  const auto& r = profile["recommendation"];
  EXPECT_FALSE(r["best"].is_null()) << r.dump();
  EXPECT_EQ(r["ranked"].size(), 2u) << r.dump();
  // Indexing a const json that is not an array is undefined (it crashed the test once): check first.
  ASSERT_TRUE(r["rejected"].is_array() && !r["rejected"].empty()) << r.dump();
  EXPECT_EQ(r["rejected"][0]["target"], "cpu:fp16");  // did not run
  const std::string id = std::to_string(profile["run_id"].get<int64_t>());
  // recommend on the stored run: an impossible limit → no target, the closest named, exit 1.
  Outcome none = RunCli("recommend " + id + " --db " + db + " --max-latency-ms 0.000001");
  EXPECT_EQ(none.exit_code, 1) << none.out;
  EXPECT_NE(none.out.find("No target meets the limits; the closest is"), std::string::npos) << none.out;
  // The profile JSON as input, ranked by cost with the shipped table.
  const std::string out_path = db + ".rec.json";
  Outcome cost = RunCli("recommend --in " + json_path + " --objective cost --json " + out_path);
  ASSERT_EQ(cost.exit_code, 0) << cost.out;
  std::ifstream rec_in(out_path);
  const nlohmann::json rec = nlohmann::json::parse(rec_in);
  EXPECT_EQ(rec["objective"], "cost");
  EXPECT_TRUE(rec["scores"][0]["cost_usd_per_million"].is_number()) << rec.dump();
  EXPECT_EQ(RunCli("recommend " + id + " --db " + db + " --objective speed").exit_code, 2);
  EXPECT_EQ(RunCli("recommend").exit_code, 2);
  EXPECT_EQ(RunCli("recommend --in /nonexistent.json").exit_code, 2);
  std::filesystem::remove(json_path);
  std::filesystem::remove(out_path);
}

}  // namespace

namespace {

// chipfit batch: the manifest in tests/data/batch on the sample models; shards merged equal the
// whole; bad manifests name their line.
const std::string kManifest = std::string(CHIPFIT_SOURCE_DIR) + "/tests/data/batch/manifest.yaml";

std::set<std::string> StoredModels(const std::string& db) {
  std::set<std::string> models;
  // The history in a local: a range-for over History(db)["runs"] would iterate a destroyed temporary.
  const nlohmann::json history = History(db);
  for (const auto& run : history["runs"]) models.insert(run["model"]["sha256"].get<std::string>());
  return models;
}

TEST(CliBatchTest, ProfilesStoresAndReportsEveryModel) {
  const std::string db = TempStore("batch");
  const auto out = std::filesystem::temp_directory_path() / ("chipfit_batch_out_" + std::to_string(::getpid()));
  std::filesystem::remove_all(out);
  Outcome o = RunCli("batch " + kManifest + " --quiet --db " + db + " --out " + out.string());
  ASSERT_EQ(o.exit_code, 0) << o.out;
  for (const char* model : {"cnn", "mlp", "transformer"}) {
    EXPECT_NE(o.out.find(std::string(model) + ".onnx"), std::string::npos) << o.out;
    const auto report = out / "reports" / (std::string(model) + ".html");
    ASSERT_TRUE(std::filesystem::exists(report)) << model;
    std::ifstream in(report);
    const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(html.find("<svg"), std::string::npos) << model;  // the charts are drawn
    EXPECT_NE(html.find(std::string(model) + ".onnx"), std::string::npos) << model;
  }
  EXPECT_EQ(History(db)["runs"].size(), 3u);
  // Again: each model is compared with its run from the first batch (exit 0, or 1 if this noisy
  // machine made a run slower beyond its noise).
  Outcome again = RunCli("batch " + kManifest + " --quiet --db " + db + " --out " + out.string());
  EXPECT_TRUE(again.exit_code == 0 || again.exit_code == 1) << again.out;
  // "0 regressed vs run 1", or "0 regressed, 1 inconclusive vs run 1" when the machine was noisy.
  EXPECT_NE(again.out.find(" regressed"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("vs run 1 "), std::string::npos) << again.out;
  std::filesystem::remove_all(out);
}

// chipfit report and profile --report: a stored run in every format, and the errors a user makes.
TEST(CliReportTest, StoredRunInEveryFormat) {
  const std::string db = TempStore("report");
  const auto dir = std::filesystem::temp_directory_path() / ("chipfit_reports_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string cnn = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";
  // A report format the CLI does not know is refused before anything is profiled or stored.
  Outcome bad = RunCli("profile " + cnn + " --targets cpu:fp32 --db " + db + " --report " + (dir / "r.docx").string());
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("r.docx"), std::string::npos) << bad.out;
  EXPECT_FALSE(std::filesystem::exists(db));

  // A report into a folder that does not exist is refused before any work: no folder is made behind
  // the user's back.
  Outcome no_folder = RunCli("profile " + cnn + " --targets cpu:fp32 --db " + db + " --report " +
                             (dir / "sub" / "profile.html").string());
  EXPECT_EQ(no_folder.exit_code, 2) << no_folder.out;
  EXPECT_NE(no_folder.out.find("the folder '" + (dir / "sub").string() + "' does not exist"), std::string::npos)
      << no_folder.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "sub"));
  EXPECT_FALSE(std::filesystem::exists(db));
  std::filesystem::create_directories(dir / "sub");
  Outcome profiled = RunCli("profile " + cnn + " --targets cpu:fp32,cpu:int8 --iterations 5 --warmup 1 --min-time 0 " +
                            "--quiet --db " + db + " --report " + (dir / "sub" / "profile.html").string());
  ASSERT_EQ(profiled.exit_code, 0) << profiled.out;
  ASSERT_TRUE(std::filesystem::exists(dir / "sub" / "profile.html"));
  // No Qt chatter on a headless run.
  EXPECT_EQ(profiled.out.find("QStandardPaths"), std::string::npos) << profiled.out;

  auto read = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  Outcome html = RunCli("report 1 --db " + db + " -o " + (dir / "run1.html").string());
  ASSERT_EQ(html.exit_code, 0) << html.out;
  const std::string page = read(dir / "run1.html");
  for (const char* text : {"cpu:fp32", "cpu:int8", "Recommendation", "<svg"}) {
    EXPECT_NE(page.find(text), std::string::npos) << text;
  }
  Outcome pdf = RunCli("report 1 --db " + db + " --format pdf -o " + (dir / "run1.out").string());
  ASSERT_EQ(pdf.exit_code, 0) << pdf.out;
  EXPECT_EQ(read(dir / "run1.out").substr(0, 5), "%PDF-");
  ASSERT_EQ(RunCli("report 1 --db " + db + " -o " + (dir / "run1.csv").string()).exit_code, 0);
  const std::string csv = read(dir / "run1.csv");
  const nlohmann::json stored =
      nlohmann::json::parse(RunStdout("report 1 --db " + db + " --format json -o -").out, nullptr, false);
  size_t layers = 0;
  ASSERT_FALSE(stored.is_discarded());
  for (const auto& t : stored["targets"]) layers += t["layers"].size();
  // A targets table (header + a row per target), an empty line, then the layers (header + a row each).
  EXPECT_EQ(static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n')),
            1 + stored["targets"].size() + 1 + 1 + layers);

  // Errors: exit 2, naming what is wrong.
  Outcome missing = RunCli("report 99 --db " + db + " -o " + (dir / "x.html").string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.out.find("99"), std::string::npos) << missing.out;
  Outcome ext = RunCli("report 1 --db " + db + " -o " + (dir / "x.docx").string());
  EXPECT_EQ(ext.exit_code, 2);
  EXPECT_NE(ext.out.find("x.docx"), std::string::npos) << ext.out;
  EXPECT_EQ(RunCli("report 1 --db " + db + " --format docx -o x").exit_code, 2);
  EXPECT_EQ(RunCli("report 1 --db " + db + " -o -").exit_code, 2);                           // stdout needs --format
  EXPECT_EQ(RunCli("report --db " + db + " -o " + (dir / "x.html").string()).exit_code, 2);  // no run
  Outcome unwritable = RunCli("report 1 --db " + db + " -o /proc/chipfit/x.html");
  EXPECT_EQ(unwritable.exit_code, 2);
  EXPECT_NE(unwritable.out.find("/proc/chipfit/x.html"), std::string::npos) << unwritable.out;
  std::filesystem::remove_all(dir);
}

TEST(CliBatchTest, ShardsMergedEqualTheWholeBatch) {
  const std::string whole = TempStore("whole"), first = TempStore("shard1"), second = TempStore("shard2");
  ASSERT_EQ(RunCli("batch " + kManifest + " --quiet --db " + whole + " --out /tmp").exit_code, 0);
  Outcome a = RunCli("batch " + kManifest + " --quiet --shard 1/2 --db " + first + " --out /tmp");
  Outcome b = RunCli("batch " + kManifest + " --quiet --shard 2/2 --db " + second + " --out /tmp");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  ASSERT_EQ(b.exit_code, 0) << b.out;
  EXPECT_EQ(History(first)["runs"].size(), 2u);  // models 1 and 3
  EXPECT_EQ(History(second)["runs"].size(), 1u);
  Outcome merged = RunCli("merge " + second + " --db " + first);
  ASSERT_EQ(merged.exit_code, 0) << merged.out;
  EXPECT_NE(merged.out.find("merged 1 run(s)"), std::string::npos) << merged.out;
  // Merging the same shard again adds nothing.
  EXPECT_NE(RunCli("merge " + second + " --db " + first).out.find("merged 0 run(s)"), std::string::npos);
  EXPECT_EQ(History(first)["runs"].size(), 3u);
  EXPECT_EQ(StoredModels(first), StoredModels(whole));
  EXPECT_EQ(RunCli("batch " + kManifest + " --shard 3/2 --db " + first).exit_code, 2);
}

TEST(CliBatchTest, BadManifestsNameTheLine) {
  const auto dir = std::filesystem::temp_directory_path() / ("chipfit_manifests_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string model = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";
  struct Case {
    std::string text, expected;
  };
  const std::vector<Case> cases = {
      {"models:\n  - path: " + model + "\ntargets: [cpu:fp32]\ncolour: blue\n", ":4: unknown key 'colour'"},
      {"models:\n  - path: /nonexistent/model.onnx\ntargets: [cpu:fp32]\n", ":2: model '/nonexistent/model.onnx'"},
      {"models:\n  - path: " + model + "\ntargets:\n  - cpu:fp32\n  - cpu:fp99\n", ":5:"},
      {"models:\n  - path: " + model + "\n    shape: {x: 1}\ntargets: [cpu:fp32]\n", ":3: unknown model key 'shape'"},
      {"models:\n  - path: " + model + "\ntargets: [cpu:fp32]\nlimits: {max_latency: 3}\n", ":4: unknown limit"},
      {"models: [\n", "manifest"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto path = dir / ("m" + std::to_string(i) + ".yaml");
    std::ofstream(path) << cases[i].text;
    Outcome o = RunCli("batch " + path.string() + " --db " + (dir / "x.db").string());
    EXPECT_EQ(o.exit_code, 2) << cases[i].text << o.out;
    EXPECT_NE(o.out.find(cases[i].expected), std::string::npos) << cases[i].text << "\n" << o.out;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "x.db"));  // nothing ran
  std::filesystem::remove_all(dir);
}

}  // namespace

namespace {

// chipfit project and profile --project: projected targets on catalog hardware. Bad ids, hardware
// files and precisions are exit 2 naming the culprit before any profiling; a projection is the
// chipfit.projection/1 document, and profile --project puts the projections beside the measured
// targets and into the recommendation, marked projected.
class CliProjectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("chipfit_cli_project_" + std::to_string(::getpid()) + "_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static nlohmann::json ReadJson(const std::filesystem::path& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in, nullptr, false);
  }
  // The entry of `projections` whose "target" is `target`, or null.
  static nlohmann::json Find(const nlohmann::json& projections, const std::string& target) {
    for (const auto& p : projections) {
      if (p.value("target", std::string()) == target) return p;
    }
    return nullptr;
  }

  const std::string cnn_ = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/cnn.onnx";
  const std::string mlp_ = std::string(CHIPFIT_SOURCE_DIR) + "/resources/models/mlp.onnx";
  const std::string quick_ = " --iterations 3 --min-time 0.05";
  // profile's too: these tests are about projections; a runner busy with the tests beside them can leave
  // cpu:fp32 without clean timing rounds, which would keep it out of the ranking they check.
  const std::string quick_profile_ = quick_ + " --rank-unreliable";
  std::filesystem::path dir_;
};

TEST_F(CliProjectTest, AnUnknownHardwareIdIsExitTwoListingTheKnownOnes) {
  Outcome o = RunCli("project " + cnn_ + " --hardware no-such-device" + quick_);
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find("'no-such-device'"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("known: "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("t4"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("end-to-end"), std::string::npos) << o.out;  // nothing was profiled
}

TEST_F(CliProjectTest, AHardwareFileWithAFigureWithoutASourceNamesTheFileAndTheKey) {
  std::ifstream in(std::string(CHIPFIT_SOURCE_DIR) + "/resources/hardware/t4.yaml");
  ASSERT_TRUE(in.good());
  std::string yaml, line;
  bool renamed = false, dropped = false;
  while (std::getline(in, line)) {
    if (line.rfind("id: t4", 0) == 0) {
      line = "id: my-t4";
      renamed = true;
    }
    if (line.find("peak_gflops.fp16:") != std::string::npos) {
      dropped = true;
      continue;  // the fp16 figure stays, its source goes
    }
    yaml += line + "\n";
  }
  ASSERT_TRUE(renamed && dropped) << "t4.yaml changed shape:\n" << yaml;
  const auto file = dir_ / "my-t4.yaml";
  std::ofstream(file) << yaml;
  Outcome o = RunCli("project " + cnn_ + " --hardware-file " + file.string() + quick_);
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find(file.string()), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("peak_gflops.fp16"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("end-to-end"), std::string::npos) << o.out;
}

TEST_F(CliProjectTest, AMissingHardwareFileIsExitTwoNamingIt) {
  const auto file = dir_ / "no-such-device.yaml";
  Outcome o = RunCli("project " + cnn_ + " --hardware-file " + file.string() + quick_);
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find(file.string()), std::string::npos) << o.out;
}

TEST_F(CliProjectTest, AnUnknownPrecisionIsExitTwo) {
  Outcome o = RunCli("project " + cnn_ + " --hardware t4 --precisions fp99" + quick_);
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find("fp99"), std::string::npos) << o.out;
}

TEST_F(CliProjectTest, ProjectsEachHardwareAndPrecisionFromAShortLocalProfile) {
  const auto json = dir_ / "projection.json";
  Outcome o =
      RunCli("project " + cnn_ + " --hardware t4,h100-sxm --precisions fp32,bf16 --json " + json.string() + quick_,
             /*stdout_only=*/true);
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const nlohmann::json d = ReadJson(json);
  ASSERT_TRUE(d.is_object()) << "no projection JSON";
  EXPECT_EQ(d["schema"], "chipfit.projection/1");
  ASSERT_TRUE(d["projections"].is_array());
  EXPECT_EQ(d["projections"].size(), 4u) << d["projections"].dump();
  for (const char* target : {"t4:fp32", "t4:bf16", "h100-sxm:fp32", "h100-sxm:bf16"}) {
    EXPECT_TRUE(Find(d["projections"], target).is_object()) << target;
  }
  // The T4 has no bf16: unsupported, saying so.
  const nlohmann::json t4_bf16 = Find(d["projections"], "t4:bf16");
  EXPECT_EQ(t4_bf16["status"], "unsupported") << t4_bf16.dump();
  ASSERT_TRUE(t4_bf16["reason"].is_string()) << t4_bf16.dump();
  EXPECT_NE(t4_bf16["reason"].get<std::string>().find("bf16"), std::string::npos) << t4_bf16.dump();
  // The H100 has: a median inside its band, estimated energy and a cost from the catalog's price.
  const nlohmann::json h100 = Find(d["projections"], "h100-sxm:bf16");
  ASSERT_EQ(h100["status"], "ok") << h100.dump();
  EXPECT_EQ(h100["projected"], true);
  ASSERT_TRUE(h100["p10_ms"].is_number() && h100["p50_ms"].is_number() && h100["p90_ms"].is_number()) << h100.dump();
  EXPECT_GT(h100["p50_ms"].get<double>(), 0);
  EXPECT_LE(h100["p10_ms"].get<double>(), h100["p50_ms"].get<double>());
  EXPECT_LE(h100["p50_ms"].get<double>(), h100["p90_ms"].get<double>());
  EXPECT_EQ(h100["energy_j"]["source"], "estimated") << h100.dump();
  EXPECT_TRUE(h100["cost_per_million"].is_number()) << h100.dump();
  // Calibrated on what ran here.
  ASSERT_TRUE(d["calibration"]["calibrated_on"].is_array()) << d["calibration"].dump();
  EXPECT_FALSE(d["calibration"]["calibrated_on"].empty()) << d["calibration"].dump();
  // The table: a line per projection.
  EXPECT_NE(("\n" + o.out).find("\nh100-sxm:fp32 "), std::string::npos) << o.out;
}

TEST_F(CliProjectTest, FromJsonProjectsAStoredProfileWithoutProfilingAgain) {
  const auto profile = dir_ / "profile.json", json = dir_ / "projection.json";
  Outcome profiled = RunCli("profile " + cnn_ + " --targets cpu:fp32 --json " + profile.string() +
                            " --no-store --quiet" + quick_profile_);
  ASSERT_EQ(profiled.exit_code, 0) << profiled.out;
  Outcome o = RunCli("project --from-json " + profile.string() + " " + cnn_ + " --hardware t4 --json " + json.string());
  ASSERT_EQ(o.exit_code, 0) << o.out;
  EXPECT_EQ(o.out.find("end-to-end"), std::string::npos) << o.out;  // no progress: nothing was profiled
  const nlohmann::json d = ReadJson(json);
  ASSERT_TRUE(d.is_object()) << "no projection JSON";
  EXPECT_EQ(d["projected_from"], "cpu:fp32") << d.dump();
  EXPECT_TRUE(Find(d["projections"], "t4:fp32").is_object()) << d["projections"].dump();
  // A profile of another model is refused: its layers are not MODEL's.
  Outcome other = RunCli("project --from-json " + profile.string() + " " + mlp_ + " --hardware t4");
  EXPECT_EQ(other.exit_code, 2) << other.out;
  EXPECT_NE(other.out.find("that profile is of"), std::string::npos) << other.out;
}

TEST_F(CliProjectTest, ProfileProjectAddsProjectedTargetsToTheJsonAndTheRecommendation) {
  const auto json = dir_ / "profile.json";
  Outcome o = RunCli("profile " + cnn_ + " --targets cpu:fp32 --project t4 --json " + json.string() + " --no-store" +
                     quick_profile_);
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const nlohmann::json d = ReadJson(json);
  ASSERT_TRUE(d.is_object()) << "no profile JSON";
  ASSERT_TRUE(d["projections"].is_array()) << d.dump().substr(0, 2000);
  ASSERT_FALSE(d["projections"].empty());
  std::vector<std::string> projected;
  for (const auto& p : d["projections"]) {
    const std::string target = p.value("target", std::string());
    EXPECT_EQ(target.rfind("t4:", 0), 0u) << p.dump();
    EXPECT_EQ(p["projected"], true) << p.dump();
    projected.push_back(target);
  }
  EXPECT_EQ(Find(d["projections"], "t4:fp32")["status"], "ok");
  // The measured targets stay measured; the recommendation names the projected ones it considered
  // and marks their entries.
  ASSERT_EQ(d["targets"].size(), 1u);
  EXPECT_EQ(d["targets"][0]["target"], "cpu:fp32");
  const nlohmann::json& r = d["recommendation"];
  ASSERT_TRUE(r["projected"].is_array()) << r.dump();
  EXPECT_EQ(r["projected"].get<std::vector<std::string>>(), projected) << r.dump();
  bool scored_projected = false, scored_measured = false;
  for (const auto& s : r["scores"]) {
    const std::string target = s.value("target", std::string());
    if (target.rfind("t4:", 0) == 0) {
      EXPECT_EQ(s["projected"], true) << s.dump();
      EXPECT_TRUE(s["band_ms"].is_array()) << s.dump();
      scored_projected = true;
    } else {
      EXPECT_FALSE(s.contains("projected")) << s.dump();
      scored_measured = scored_measured || target == "cpu:fp32";
    }
  }
  EXPECT_TRUE(scored_projected) << r.dump();
  EXPECT_TRUE(scored_measured) << r.dump();
  for (const auto& rejected : r["rejected"]) {
    if (rejected.value("target", std::string()).rfind("t4:", 0) == 0) {
      EXPECT_EQ(rejected["projected"], true) << rejected.dump();
    }
  }
}

TEST_F(CliProjectTest, ProfileProjectWithAnUnknownIdIsExitTwoBeforeProfiling) {
  Outcome o = RunCli("profile " + cnn_ + " --targets cpu:fp32 --project nope --no-store" + quick_);
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find("'nope'"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("compile"), std::string::npos) << o.out;  // nothing ran
  EXPECT_EQ(o.out.find("end-to-end"), std::string::npos) << o.out;
}

}  // namespace
