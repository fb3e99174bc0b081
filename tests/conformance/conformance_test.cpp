// The ONNX backend test suite on the reference path. Every case must pass, except those listed in
// tests/conformance/expected.txt with the outcome and the reason; the list may only shrink: a listed
// case that starts passing fails this test until its line is removed.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "core/runtime/conformance.h"

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

}  // namespace
}  // namespace chipfit
