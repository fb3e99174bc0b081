// oneDNN BatchNormalization, LayerNormalization and InstanceNormalization against the reference:
// ranks 2–5, both input orders, constant and computed parameters, LayerNorm's statistics outputs;
// fp32 within 1e-4 of max|ref|; refusals with their reasons.
#include <gtest/gtest.h>

#include "devices/cpu/ops/cpu_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"
#include "tests/devices/cpu/kernel_layout_util.h"

namespace chipfit::testing {
namespace {

void ExpectClose(KernelFactory factory, const KernelCase& c) {
  auto out = RunCpuKernel(factory, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  ASSERT_EQ(ref.size(), out->size());
  for (size_t k = 0; k < ref.size(); ++k) {
    SCOPED_TRACE("output " + std::to_string(k));
    EXPECT_EQ((*out)[k].shape(), ref[k].shape());
    EXPECT_LE(MaxRelError((*out)[k], ref[k]), 1e-4);
  }
}

KernelCase MakeBatchNorm(const Shape& x, uint64_t seed, Layout layout, bool constant) {
  KernelCase c{.node = MakeNode("BatchNormalization", 5, 1, {{"epsilon", FloatAttr(1e-3f)}}), .opset = 15};
  const Shape per_channel = {x[1]};
  c.inputs = {RandomF32(x, seed, -3.0f, 3.0f), RandomF32(per_channel, seed + 1), RandomF32(per_channel, seed + 2),
              RandomF32(per_channel, seed + 3), RandomF32(per_channel, seed + 4, 0.5f, 2.0f)};
  c.constant = std::vector<bool>(5, constant);
  c.constant[0] = false;
  c.layouts = {x.size() == 4 ? layout : Layout::kPlain};
  return c;
}

TEST(NormCpuTest, BatchNormMatchesReference) {
  uint64_t seed = 3000;
  for (const Shape& x : std::vector<Shape>{{2, 16, 9, 11}, {3, 5}, {2, 6, 17}, {1, 4, 3, 5, 6}, {1, 7, 1, 1}}) {
    for (Layout layout : {Layout::kPlain, Layout::kChannelsLast}) {
      for (bool constant : {true, false}) {
        SCOPED_TRACE(ShapeToString(x) + " " + std::string(LayoutName(layout)) + (constant ? " constant" : ""));
        ExpectClose(cpu::CreateBatchNormF32, MakeBatchNorm(x, seed += 5, layout, constant));
      }
    }
  }
}

TEST(NormCpuTest, BatchNormKeepsChannelsLast) {
  auto layouts = LayoutsOf(cpu::CreateBatchNormF32, MakeBatchNorm({1, 8, 5, 7}, 1, Layout::kChannelsLast, true));
  ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
  EXPECT_EQ(layouts->inputs[0], Layout::kChannelsLast);
  EXPECT_EQ(layouts->output, Layout::kChannelsLast);
}

TEST(NormCpuTest, BatchNormRefusals) {
  KernelCase c = MakeBatchNorm({2, 4, 3, 3}, 1, Layout::kPlain, true);
  c.node.attributes["training_mode"] = IntAttr(1);
  EXPECT_NE(RefusalOf(cpu::CreateBatchNormF32, c).find("training mode"), std::string::npos);
}

struct LayerNormSpec {
  Shape x;
  int64_t axis;
  Shape scale{};  // empty: X.shape[axis:]
  bool bias = true;
  size_t outputs = 1;
};

KernelCase MakeLayerNorm(const LayerNormSpec& s, uint64_t seed, bool constant) {
  const size_t axis = static_cast<size_t>(s.axis < 0 ? s.axis + static_cast<int64_t>(s.x.size()) : s.axis);
  const Shape normalised(s.x.begin() + static_cast<std::ptrdiff_t>(axis), s.x.end());
  const Shape scale = s.scale.empty() ? normalised : s.scale;
  KernelCase c{.node = MakeNode("LayerNormalization", s.bias ? 3 : 2, s.outputs,
                                {{"axis", IntAttr(s.axis)}, {"epsilon", FloatAttr(1e-4f)}}),
               .opset = 17};
  c.inputs = {RandomF32(s.x, seed, -2.0f, 3.0f), RandomF32(scale, seed + 1, 0.5f, 1.5f)};
  if (s.bias) c.inputs.push_back(RandomF32(scale, seed + 2));
  c.constant = {false, constant, constant};
  return c;
}

TEST(NormCpuTest, LayerNormMatchesReference) {
  const std::vector<LayerNormSpec> specs = {
      {.x = {4, 99}, .axis = -1},
      {.x = {2, 7, 64}, .axis = -1, .bias = false},
      {.x = {2, 3, 4, 5}, .axis = 2},  // two normalised dims
      {.x = {2, 3, 4, 5}, .axis = 1},
      {.x = {3, 10}, .axis = 0},
      {.x = {2, 3, 4, 5}, .axis = 2, .scale = {5}},  // broadcasts inside the normalised dims
      {.x = {2, 5, 33}, .axis = -1, .outputs = 3},   // Mean and InvStdDev too
      {.x = {2, 3, 4, 5}, .axis = 2, .outputs = 3},
  };
  uint64_t seed = 4000;
  for (const LayerNormSpec& s : specs) {
    for (bool constant : {true, false}) {
      if (!constant && !s.scale.empty()) continue;
      SCOPED_TRACE(ShapeToString(s.x) + " axis " + std::to_string(s.axis) + (constant ? " constant" : ""));
      ExpectClose(cpu::CreateLayerNormF32, MakeLayerNorm(s, seed += 3, constant));
    }
  }
}

TEST(NormCpuTest, LayerNormRefusals) {
  // A broadcasting scale computed at run time cannot be expanded once.
  KernelCase c = MakeLayerNorm({.x = {2, 3, 4, 5}, .axis = 2, .scale = {5}}, 1, false);
  EXPECT_NE(RefusalOf(cpu::CreateLayerNormF32, c).find("broadcasts and is computed at run time"), std::string::npos);
  // A scale that varies along the rows is not a layer normalisation scale oneDNN knows.
  c = MakeLayerNorm({.x = {2, 3, 4, 5}, .axis = 2, .scale = {3, 4, 5}}, 1, true);
  EXPECT_NE(RefusalOf(cpu::CreateLayerNormF32, c).find("varies along un-normalised axis 1"), std::string::npos);
  c = MakeLayerNorm({.x = {4, 9}, .axis = -1}, 1, true);
  c.node.attributes["stash_type"] = IntAttr(10);
  EXPECT_NE(RefusalOf(cpu::CreateLayerNormF32, c).find("stash_type"), std::string::npos);
}

KernelCase MakeInstanceNorm(const Shape& x, uint64_t seed, Layout layout, bool constant) {
  KernelCase c{.node = MakeNode("InstanceNormalization", 3, 1, {{"epsilon", FloatAttr(1e-4f)}})};
  c.inputs = {RandomF32(x, seed, -1.0f, 4.0f), RandomF32({x[1]}, seed + 1), RandomF32({x[1]}, seed + 2)};
  c.constant = {false, constant, constant};
  c.layouts = {x.size() == 4 ? layout : Layout::kPlain};
  return c;
}

TEST(NormCpuTest, InstanceNormMatchesReference) {
  uint64_t seed = 5000;
  for (const Shape& x : std::vector<Shape>{{2, 3, 9, 11}, {1, 8, 9, 11}, {2, 4, 17}, {1, 2, 3, 4, 5}}) {
    for (Layout layout : {Layout::kPlain, Layout::kChannelsLast}) {
      for (bool constant : {true, false}) {
        SCOPED_TRACE(ShapeToString(x) + " " + std::string(LayoutName(layout)) + (constant ? " constant" : ""));
        ExpectClose(cpu::CreateInstanceNormF32, MakeInstanceNorm(x, seed += 3, layout, constant));
      }
    }
  }
  // One channels-last image stays channels-last.
  auto layouts = LayoutsOf(cpu::CreateInstanceNormF32, MakeInstanceNorm({1, 8, 9, 11}, 1, Layout::kChannelsLast, true));
  ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
  EXPECT_EQ(layouts->output, Layout::kChannelsLast);
}

}  // namespace
}  // namespace chipfit::testing
