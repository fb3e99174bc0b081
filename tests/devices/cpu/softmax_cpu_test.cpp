// oneDNN Softmax and LogSoftmax against the reference: the flattened rows before opset 13, one
// axis from 13 on (channels through the nhwc order), odd sizes; fp32 within 1e-4 of max|ref|.
#include <gtest/gtest.h>

#include "devices/cpu/ops/cpu_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"
#include "tests/devices/cpu/kernel_layout_util.h"

namespace chipfit::testing {
namespace {

struct SoftmaxSpec {
  Shape x;
  int64_t axis;
  int64_t opset = 13;
};

KernelCase MakeSoftmax(const std::string& op, const SoftmaxSpec& s, uint64_t seed, Layout layout) {
  KernelCase c{.node = MakeNode(op, 1, 1, {{"axis", IntAttr(s.axis)}}), .opset = s.opset};
  c.inputs = {RandomF32(s.x, seed, -6.0f, 6.0f)};
  c.layouts = {s.x.size() == 4 ? layout : Layout::kPlain};
  return c;
}

TEST(SoftmaxCpuTest, MatchesReference) {
  const std::vector<SoftmaxSpec> specs = {
      {{32, 99}, -1},          {{2, 16, 9, 11}, 1},     {{2, 16, 9, 11}, 3}, {{2, 16, 9, 11}, -1}, {{5}, 0},
      {{3, 7, 1}, 1},  // nothing after the axis
      {{2, 16, 9, 11}, 1, 11}, {{2, 16, 9, 11}, 2, 11}, {{3, 4, 5}, 1, 11},  {{1, 1000}, 1, 11},
  };
  uint64_t seed = 6000;
  for (const std::string& op : std::vector<std::string>{"Softmax", "LogSoftmax"}) {
    for (const SoftmaxSpec& s : specs) {
      for (Layout layout : {Layout::kPlain, Layout::kChannelsLast}) {
        if (layout == Layout::kChannelsLast && s.x.size() != 4) continue;
        const KernelCase c = MakeSoftmax(op, s, ++seed, layout);
        SCOPED_TRACE(op + " " + ShapeToString(s.x) + " axis " + std::to_string(s.axis) + " opset " +
                     std::to_string(s.opset) + " " + std::string(LayoutName(layout)));
        auto out = RunCpuKernel(cpu::CreateSoftmaxF32, c);
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        const auto ref = RunReference(c);
        EXPECT_EQ((*out)[0].shape(), ref[0].shape());
        // oneDNN's jit exp/log are accurate to a few ulp.
        EXPECT_LE(MaxRelError((*out)[0], ref[0]), 1e-4);
      }
    }
  }
}

// Softmax over channels reads them contiguously from the nhwc order (the order convolutions write).
TEST(SoftmaxCpuTest, ChannelSoftmaxUsesChannelsLast) {
  auto layouts = LayoutsOf(cpu::CreateSoftmaxF32, MakeSoftmax("Softmax", {{1, 8, 5, 7}, 1}, 1, Layout::kPlain));
  ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
  EXPECT_EQ(layouts->inputs[0], Layout::kChannelsLast);
  EXPECT_EQ(layouts->output, Layout::kChannelsLast);
  layouts = LayoutsOf(cpu::CreateSoftmaxF32, MakeSoftmax("Softmax", {{1, 8, 5, 7}, 3}, 1, Layout::kChannelsLast));
  ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
  EXPECT_EQ(layouts->inputs[0], Layout::kPlain);
}

TEST(SoftmaxCpuTest, RefusesAnAxisThatIsNotInnermost) {
  const KernelCase c = MakeSoftmax("Softmax", {{2, 16, 99}, 1}, 1, Layout::kPlain);
  EXPECT_NE(RefusalOf(cpu::CreateSoftmaxF32, c).find("axis that is not innermost"), std::string::npos);
}

// An axis with dims after it that no order makes innermost: oneDNN has only its reference kernel,
// cpu:softmax-axis runs it (also with dims known only at run time, and wide rows split in blocks).
TEST(SoftmaxCpuTest, AxisThatIsNotInnermostRunsTheOwnLoop) {
  const std::vector<SoftmaxSpec> specs = {{{3, 4, 5}, 0},     {{3, 4, 5}, 1}, {{2, 16, 9, 11}, 2},
                                          {{2, 21, 3000}, 1}, {{5, 7}, 1},    {{1, 0, 3}, 2}};
  uint64_t seed = 7000;
  for (const std::string& op : std::vector<std::string>{"Softmax", "LogSoftmax"}) {
    for (const SoftmaxSpec& s : specs) {
      const KernelCase c = MakeSoftmax(op, s, ++seed, Layout::kPlain);
      SCOPED_TRACE(op + " " + ShapeToString(s.x) + " axis " + std::to_string(s.axis));
      if (s.x.size() == 3 && s.x[2] > 1 && s.x[1] > 0) {
        EXPECT_FALSE(RunCpuKernel(cpu::CreateSoftmaxF32, c).ok()) << "oneDNN would run its reference kernel";
      }
      auto out = RunCpuKernel(cpu::CreateStridedSoftmaxF32, c);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const auto ref = RunReference(c);
      EXPECT_EQ((*out)[0].shape(), ref[0].shape());
      EXPECT_LE(MaxRelError((*out)[0], ref[0]), 1e-5);
    }
  }
}

}  // namespace
}  // namespace chipfit::testing
