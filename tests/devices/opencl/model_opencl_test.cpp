// Whole models on opencl:0 (POCL in CI) through CompileForTarget: outputs against the reference,
// how much runs on the device, fallbacks visible, and a plan too large for the device refused
// before anything is allocated.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "core/graph/onnx_import.h"
#include "core/graph/onnx_loader.h"
#include "core/tensor/metrics.h"
#include "core/tensor/random.h"
#include "devices/target_compiler.h"
#include "tests/core/onnx_builder.h"
#include "tests/devices/opencl/opencl_test_util.h"

namespace chipfit {
namespace {

const std::filesystem::path kModels = std::filesystem::path(CHIPFIT_SOURCE_DIR) / "resources/models";

Result<Graph> LoadGraph(const std::filesystem::path& path) {
  OnnxLoadOptions options;
  if (path.filename() == "mlp.onnx") options.input_shapes["x"] = {4, 64};  // its symbolic batch
  ASSIGN_OR_RETURN(LoadedOnnxModel loaded, LoadOnnxModel(path, options));
  return ImportModel(loaded);
}

class OpenClModelTest : public ::testing::TestWithParam<const char*> {};

TEST_P(OpenClModelTest, MatchesTheReferenceAndRunsOnTheDevice) {
  CHIPFIT_REQUIRE_OPENCL();
  auto graph = LoadGraph(kModels / GetParam());
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  auto ref = Compile(*graph, Target{});
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  std::map<std::string, Tensor> inputs;
  uint64_t seed = 1;
  for (const ValueDesc& in : (*ref)->inputs()) inputs[in.name] = SeededTensor(in.dtype, in.shape, seed++);
  auto want = (*ref)->Run(inputs);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  for (const char* target : {"opencl:0:fp32", "opencl:0:fp16"}) {
    auto model = CompileForTarget(*graph, *ParseTarget(target));
    ASSERT_TRUE(model.ok()) << target << ": " << model.status().ToString();
    auto got = (*model)->Run(inputs);
    ASSERT_TRUE(got.ok()) << target << ": " << got.status().ToString();
    ASSERT_EQ(got->size(), want->size());
    const CompileStats& st = (*model)->stats();
    for (size_t i = 0; i < want->size(); ++i) {
      const double sqnr = SqnrDb((*got)[i], (*want)[i]);
      if (std::string(target).ends_with("fp32")) {
        EXPECT_LE(testing::MaxRelError((*got)[i], (*want)[i]), 1e-4) << GetParam() << " " << target;
      } else {
        EXPECT_GE(sqnr, 30.0) << GetParam() << " " << target;  // half storage: see peer_test.cpp
      }
      std::printf("%s on %s: output %zu SQNR %.1f dB; %d of %d kernels on the device, %d copies, %zu fallbacks\n",
                  GetParam(), target, i, sqnr, st.device_kernels, st.kernels - st.transfers, st.transfers,
                  (*model)->fallbacks().size());
    }
    for (const Fallback& f : (*model)->fallbacks())
      std::printf("  fallback %s (%s): %s\n", f.node.c_str(), f.op.c_str(), f.reason.c_str());
    // The sample models use only ops the OpenCL device has: nothing may fall back.
    EXPECT_TRUE((*model)->fallbacks().empty()) << GetParam() << " " << target;
  }
}

INSTANTIATE_TEST_SUITE_P(SampleModels, OpenClModelTest, ::testing::Values("cnn.onnx", "mlp.onnx", "transformer.onnx"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           return name.substr(0, name.find('.'));
                         });

// y = Relu((x + x) + (x · x)) over `n` floats: the sum and the product are alive together, so the
// device arena holds at least 2n floats.
Result<Graph> ReluGraph(int64_t n) {
  onnx::ModelProto m = testing::NewModel("relu");
  auto* g = m.mutable_graph();
  testing::AddValue(g->mutable_input(), "x", {n});
  testing::AddValue(g->mutable_output(), "y", {n});
  testing::AddNode(g, "Add", {"x", "x"}, {"a"}, "add");
  testing::AddNode(g, "Mul", {"x", "x"}, {"b"}, "mul");
  testing::AddNode(g, "Add", {"a", "b"}, {"c"}, "sum");
  testing::AddNode(g, "Relu", {"c"}, {"y"}, "relu");
  ASSIGN_OR_RETURN(LoadedOnnxModel loaded, CheckOnnxModel(m, "relu"));
  return ImportModel(loaded);
}

TEST(OpenClModelLimitsTest, APlanLargerThanTheDeviceIsRefusedBeforeAllocating) {
  CHIPFIT_REQUIRE_OPENCL();
  auto runtime = ocl::OpenClRuntime::Get(0);
  ASSERT_TRUE(runtime.ok());
  // Two intermediates alive at once, together larger than the device's largest allocation (the arena
  // is one allocation), each under 2^31 values (a larger tensor is refused by the kernels for its
  // size: POCL allows 8 GiB per allocation on a 16 GiB machine).
  const int64_t n = static_cast<int64_t>((*runtime)->limits().max_alloc_bytes / 8) + 4096;
  ASSERT_LT(n, int64_t{1} << 31);
  auto graph = ReluGraph(n);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  auto model = CompileForTarget(*graph, *ParseTarget("opencl:0:fp32"));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(model.status().message().find("CL_DEVICE_MAX_MEM_ALLOC_SIZE"), std::string::npos)
      << model.status().message();
  // The same graph at a size that fits runs.
  auto small = ReluGraph(1000);
  ASSERT_TRUE(small.ok());
  auto fits = CompileForTarget(*small, *ParseTarget("opencl:0:fp32"));
  ASSERT_TRUE(fits.ok()) << fits.status().ToString();
  EXPECT_EQ((*fits)->stats().device_kernels, 4);
}

TEST(OpenClModelLimitsTest, RefusedNodesFallBackVisiblyOrFailWithoutFallback) {
  CHIPFIT_REQUIRE_OPENCL();
  // CumSum has no OpenCL (and no CPU) kernel: it runs on the reference between two copies.
  onnx::ModelProto m = testing::NewModel("cumsum", 14);
  auto* g = m.mutable_graph();
  testing::AddValue(g->mutable_input(), "x", {4, 8});
  testing::AddValue(g->mutable_output(), "y", {4, 8});
  auto* axis = g->add_initializer();
  axis->set_name("axis");
  axis->set_data_type(onnx::TensorProto_DataType_INT64);
  axis->add_int64_data(1);
  testing::AddNode(g, "Relu", {"x"}, {"r"}, "relu");
  testing::AddNode(g, "CumSum", {"r", "axis"}, {"c"}, "cumsum");
  testing::AddNode(g, "Relu", {"c"}, {"y"}, "relu2");
  auto loaded = CheckOnnxModel(m, "cumsum");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto graph = ImportModel(*loaded);
  ASSERT_TRUE(graph.ok());
  auto model = CompileForTarget(*graph, *ParseTarget("opencl:0:fp32"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_EQ((*model)->fallbacks().size(), 1u);
  EXPECT_EQ((*model)->fallbacks()[0].node, "cumsum");
  EXPECT_EQ((*model)->stats().transfers, 4);  // x up, r down, c up, y down
  const Tensor x = testing::RandomF32({4, 8}, 3);
  auto got = (*model)->Run({{"x", x}});
  auto ref = Compile(*graph, Target{});
  auto want = (*ref)->Run({{"x", x}});
  ASSERT_TRUE(got.ok() && want.ok());
  EXPECT_LE(testing::MaxRelError((*got)[0], (*want)[0]), 1e-6);

  auto strict = CompileForTarget(*graph, *ParseTarget("opencl:0:fp32"), {.allow_fallback = false});
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.status().message().find("cumsum"), std::string::npos) << strict.status().message();
}

}  // namespace
}  // namespace chipfit
