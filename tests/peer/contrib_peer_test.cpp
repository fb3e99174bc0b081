// ONNX Runtime's contrib operators against ONNX Runtime itself: the case generators in tests/peer/contrib
// (python3-onnx) write one small model per op and attribute set with seeded inputs; each runs through
// `chipfit run` on every target its case.json names and through onnxruntime-node (ort_run.mjs), and
// every output must agree within the case's tolerance (max abs error relative to max |ORT|).
// CHIPFIT_CONTRIB_CASE=SUBSTRING runs only the cases whose name holds it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/tensor/metrics.h"
#include "core/tensor/npy.h"
#include "tests/peer/peer_util.h"

namespace chipfit {
namespace {

namespace fs = std::filesystem;

using peer::PeerDir;
using peer::ReadText;
using peer::Shell;

// Debian's python3-onnx is installed for the system interpreter, whatever else is first on PATH.
constexpr const char* kPython = "/usr/bin/python3";

class ContribPeerTest : public ::testing::TestWithParam<const char*> {
 protected:
  void CompareCase(const fs::path& dir);
};

TEST_P(ContribPeerTest, MatchesOnnxRuntime) {
  if (Shell(std::string(kPython) + " -c 'import onnx, numpy' > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << kPython << " has no onnx/numpy module: run scripts/setup-deps.sh (python3-onnx)";
  }
  if (Shell("node --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "node is not installed";
  if (!fs::exists(PeerDir() / "node_modules/onnxruntime-node")) {
    GTEST_SKIP() << "onnxruntime-node is missing under " << PeerDir() << ": run scripts/fetch-models.sh";
  }
  const std::string family = GetParam();
  const fs::path work = fs::temp_directory_path() / ("chipfit_contrib_" + family + "_" + std::to_string(::getpid()));
  fs::remove_all(work);
  const char* filter = std::getenv("CHIPFIT_CONTRIB_CASE");
  ASSERT_EQ(Shell(std::string(kPython) + " " + CHIPFIT_SOURCE_DIR + "/tests/peer/contrib/" + family + "_cases.py " +
                  work.string() + (filter != nullptr ? std::string(" '") + filter + "'" : std::string())),
            0)
      << "the " << family << " case generator failed";
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(work)) {
    if (fs::exists(entry.path() / "case.json")) cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());
  if (filter == nullptr) {
    EXPECT_GE(cases.size(), 3u) << family;
  }
  for (const fs::path& dir : cases) CompareCase(dir);
  if (!HasFailure()) fs::remove_all(work);
}

// One case: ORT, then chipfit on each target, every output compared. A failure ends this case only.
void ContribPeerTest::CompareCase(const fs::path& dir) {
  {
    const nlohmann::json spec = nlohmann::json::parse(ReadText(dir / "case.json"));
    const std::string name = spec.at("name");
    SCOPED_TRACE(name);
    std::string chipfit_inputs, ort_inputs;
    for (const auto& [input, file] : spec.at("inputs").items()) {
      chipfit_inputs += " --input '" + input + "=" + (dir / file.get<std::string>()).string() + "'";
      // Dynamic dims bound to the array's shape, as a user binds them.
      auto array = ReadNpy(dir / file.get<std::string>());
      ASSERT_TRUE(array.ok()) << array.status().ToString();
      if (!array->shape().empty()) {
        std::string dims;
        for (int64_t d : array->shape()) dims += (dims.empty() ? "" : "x") + std::to_string(d);
        chipfit_inputs += " --shape '" + input + "=" + dims + "'";
      }
      ort_inputs += " '" + input + "=" + (dir / file.get<std::string>()).string() + "'";
    }
    const fs::path model = dir / "model.onnx";
    ASSERT_EQ(Shell("NODE_PATH=" + (PeerDir() / "node_modules").string() + " node " + CHIPFIT_SOURCE_DIR +
                    "/tests/peer/ort_run.mjs " + model.string() + " " + (dir / "ort").string() + ort_inputs + " > " +
                    (dir / "ort.log").string() + " 2>&1"),
              0)
        << "ONNX Runtime did not run the case: " << ReadText(dir / "ort.log");
    const double tolerance = spec.at("tolerance").get<double>();
    for (const std::string target : spec.at("targets")) {
      const fs::path out =
          dir / ("chipfit_" + target.substr(0, target.find(':')) + "_" + target.substr(target.rfind(':') + 1));
      const fs::path log = out.string() + ".log";
      ASSERT_EQ(Shell(std::string(CHIPFIT_CLI) + " run " + model.string() + " --target " + target + chipfit_inputs +
                      " --output-dir " + out.string() + " > " + log.string() + " 2>&1"),
                0)
          << target << ": " << ReadText(log);
      int compared = 0;
      for (const auto& entry : fs::directory_iterator(dir / "ort")) {
        auto expected = ReadNpy(entry.path());
        auto actual = ReadNpy(out / entry.path().filename());
        ASSERT_TRUE(expected.ok()) << expected.status().ToString();
        ASSERT_TRUE(actual.ok()) << target << ": " << actual.status().ToString();
        ASSERT_EQ(actual->shape(), expected->shape()) << target << " " << entry.path().filename();
        double max_ref = 0, max_err = 0;
        for (int64_t i = 0; i < expected->numel(); ++i) {
          const double e = expected->GetAsDouble(i), a = actual->GetAsDouble(i);
          max_ref = std::max(max_ref, std::fabs(e));
          max_err =
              std::max(max_err, std::isnan(e) == std::isnan(a) ? (std::isnan(e) ? 0.0 : std::fabs(e - a)) : INFINITY);
        }
        EXPECT_LE(max_err, tolerance * std::max(max_ref, 1e-30))
            << target << " " << entry.path().filename() << ": max abs error " << max_err << ", max |ORT| " << max_ref;
        std::printf("%-40s %-10s %-14s max abs error %.3g (max |ORT| %.3g, allowed %.3g)\n", name.c_str(),
                    target.c_str(), entry.path().filename().c_str(), max_err, max_ref, tolerance * max_ref);
        ++compared;
      }
      EXPECT_GT(compared, 0) << target;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Families, ContribPeerTest,
                         ::testing::Values("nn", "attention", "quant", "qstd", "graphs", "models"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
}  // namespace chipfit
