// The chipfit CLI as a user runs it: exit codes 0/2, messages that name the culprit, JSON that parses.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "nlohmann/json.hpp"

namespace {

struct Outcome {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

// Runs chipfit with `args`; stderr joins stdout unless `stdout_only` (for output that must parse).
Outcome RunCli(const std::string& args, bool stdout_only = false) {
  const std::string command = std::string(CHIPFIT_CLI) + " " + args + (stdout_only ? " 2>/dev/null" : " 2>&1");
  Outcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return outcome;
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) outcome.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
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
  EXPECT_EQ(RunCli("frobnicate").exit_code, 2);
  EXPECT_EQ(RunCli("").exit_code, 2);
}

TEST(CliTest, MissingModelFileExitsTwoAndNamesIt) {
  Outcome o = RunCli("inspect /nonexistent/model_xyz.onnx");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("/nonexistent/model_xyz.onnx"), std::string::npos) << o.out;
}

TEST(CliTest, GarbageModelExitsTwoAndNamesIt) {
  const auto path = std::filesystem::temp_directory_path() / "chipfit_cli_test_garbage.onnx";
  std::ofstream(path) << "this is not a protobuf at all \x01\x02\x03";
  Outcome o = RunCli("inspect " + path.string());
  std::filesystem::remove(path);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find("chipfit_cli_test_garbage.onnx"), std::string::npos) << o.out;
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

}  // namespace
