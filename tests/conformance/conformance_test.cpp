// The ONNX backend test suite on the reference path. Every case must pass, except those listed in
// tests/conformance/expected.txt with the outcome and the reason; the list may only shrink: a listed
// case that starts passing fails this test until its line is removed.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "core/runtime/conformance.h"
#include "devices/target_compiler.h"

namespace chipfit {
namespace {

struct Expectation {
  std::string outcome;
  std::string reason;
};

std::map<std::string, Expectation> ReadExpectations() {
  std::map<std::string, Expectation> out;
  std::ifstream in(std::string(CHIPFIT_SOURCE_DIR) + "/tests/conformance/expected.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string name, outcome, reason;
    words >> name >> outcome;
    std::getline(words, reason);
    out[name] = {outcome, reason};
  }
  return out;
}

TEST(ConformanceTest, ReferencePathMatchesTheOnnxBackendSuite) {
  ConformanceOptions options;
  options.suites = DefaultConformanceSuites();
  ASSERT_FALSE(options.suites.empty()) << "libonnx-testdata is not installed (scripts/setup-deps.sh)";
  auto cases = RunConformance(options);
  ASSERT_TRUE(cases.ok()) << cases.status().ToString();
  const auto expected = ReadExpectations();
  ASSERT_FALSE(expected.empty()) << "tests/conformance/expected.txt is missing or empty";
  std::map<std::string, int> counts;
  std::map<std::string, bool> seen;
  for (const ConformanceCase& c : *cases) {
    const std::string key = c.suite + "/" + c.name;
    const std::string outcome = OutcomeName(c.outcome);
    ++counts[outcome];
    seen[key] = true;
    auto it = expected.find(key);
    const std::string want = it == expected.end() ? "pass" : it->second.outcome;
    EXPECT_EQ(outcome, want) << key << " (" << c.ops << "): " << c.detail
                             << (outcome == "pass" ? "\n  → it passes now: remove its line from expected.txt"
                                                   : "\n  → fix it, or list it in expected.txt with the reason");
  }
  for (const auto& [key, e] : expected) {
    EXPECT_TRUE(seen.contains(key)) << key << " is listed in expected.txt but no such case ran";
  }
  std::printf("conformance (ref:fp32): %d pass, %d fail, %d unsupported of %zu cases\n", counts["pass"], counts["fail"],
              counts["unsupported"], cases->size());
}

// The CPU device must pass everything the reference passes: the same outcome for every case (a
// node the device refuses runs on the reference, so only a wrong device kernel can differ).
TEST(ConformanceTest, CpuFp32PassesWhatTheReferencePasses) {
  ConformanceOptions options;
  options.suites = DefaultConformanceSuites();
  ASSERT_FALSE(options.suites.empty());
  auto reference = RunConformance(options);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  options.target = *ParseTarget("cpu:fp32");
  options.compile = [](const Graph& graph, const Target& target, const std::map<std::string, Tensor>&) {
    return CompileForTarget(graph, target);
  };
  auto cpu = RunConformance(options);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  ASSERT_EQ(cpu->size(), reference->size());
  int device_kernels = 0;
  for (size_t i = 0; i < cpu->size(); ++i) {
    const ConformanceCase& c = (*cpu)[i];
    device_kernels += c.device_kernels;
    EXPECT_EQ(OutcomeName(c.outcome), std::string(OutcomeName((*reference)[i].outcome)))
        << c.suite << "/" << c.name << " (" << c.ops << ") on cpu:fp32: " << c.detail;
  }
  EXPECT_GT(device_kernels, 0) << "no case ran a CPU kernel";
  std::printf("conformance (cpu:fp32): %d kernels ran on the CPU device\n", device_kernels);
}

}  // namespace
}  // namespace chipfit
