// oneDNN Conv against the reference Conv: odd sizes, strides, pads, dilations, groups, both input
// orders; 1-D convolutions (an H = 1 view); fp32 within 1e-4 of max|ref|, int8 by SQNR.
#include <gtest/gtest.h>

#include "core/reference/conv_util.h"
#include "devices/cpu/ops/cpu_ops.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"
#include "tests/devices/cpu/kernel_layout_util.h"

namespace chipfit::testing {
namespace {

struct ConvSpec {
  Shape x;  // N C H W
  int64_t out_channels, kh, kw, group = 1;
  std::vector<int64_t> strides{1, 1}, dilations{1, 1}, pads{0, 0, 0, 0};
  bool bias = true;
  std::string auto_pad{};
};

KernelCase MakeConv(const ConvSpec& s, uint64_t seed, Layout x_layout) {
  std::map<std::string, Attribute> attrs{
      {"strides", IntsAttr(s.strides)}, {"dilations", IntsAttr(s.dilations)}, {"group", IntAttr(s.group)}};
  if (s.auto_pad.empty()) {
    attrs["pads"] = IntsAttr(s.pads);
  } else {
    attrs["auto_pad"] = StringAttr(s.auto_pad);
  }
  KernelCase c{.node = MakeNode("Conv", s.bias ? 3 : 2, 1, attrs)};
  c.inputs.push_back(RandomF32(s.x, seed));
  c.inputs.push_back(RandomF32({s.out_channels, s.x[1] / s.group, s.kh, s.kw}, seed + 1, -0.5f, 0.5f));
  if (s.bias) c.inputs.push_back(RandomF32({s.out_channels}, seed + 2));
  c.constant = {false, true, true};
  c.layouts = {x_layout};
  return c;
}

const std::vector<ConvSpec> kSpecs = {
    {.x = {1, 3, 17, 23}, .out_channels = 8, .kh = 3, .kw = 3, .strides = {2, 2}, .pads = {1, 1, 1, 1}},
    {.x = {2, 16, 9, 11}, .out_channels = 24, .kh = 1, .kw = 1},
    {.x = {1, 16, 13, 7}, .out_channels = 16, .kh = 3, .kw = 3, .group = 16, .pads = {1, 1, 1, 1}},
    {.x = {1, 12, 10, 10}, .out_channels = 6, .kh = 3, .kw = 2, .group = 3, .dilations = {2, 1}, .bias = false},
    {.x = {1, 5, 8, 9}, .out_channels = 7, .kh = 5, .kw = 5, .strides = {2, 1}, .pads = {2, 1, 0, 3}},
    {.x = {1, 8, 15, 15}, .out_channels = 8, .kh = 3, .kw = 3, .strides = {2, 2}, .auto_pad = "SAME_UPPER"},
    {.x = {1, 32, 6, 6}, .out_channels = 32, .kh = 5, .kw = 5, .group = 32, .strides = {2, 2}, .pads = {2, 2, 2, 2}},
};

TEST(ConvCpuTest, Fp32MatchesReference) {
  uint64_t seed = 100;
  for (const ConvSpec& spec : kSpecs) {
    for (Layout layout : {Layout::kPlain, Layout::kChannelsLast}) {
      const KernelCase c = MakeConv(spec, seed += 10, layout);
      SCOPED_TRACE(ShapeToString(spec.x) + " -> " + std::to_string(spec.out_channels) + " k" + std::to_string(spec.kh) +
                   "x" + std::to_string(spec.kw) + " g" + std::to_string(spec.group) + " input " +
                   std::string(LayoutName(layout)));
      auto out = RunCpuKernel(cpu::CreateConvF32, c);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const auto ref = RunReference(c);
      ASSERT_EQ(ref.size(), 1u);
      EXPECT_EQ((*out)[0].shape(), ref[0].shape());
      EXPECT_LE(MaxRelError((*out)[0], ref[0]), 1e-4);
    }
  }
}

TEST(ConvCpuTest, WeightsComputedAtRunTimeAreReorderedEachRun) {
  for (size_t n : {0u, 2u}) {
    KernelCase c = MakeConv(kSpecs[n], 7, Layout::kPlain);
    c.constant = {false, false, false};
    auto out = RunCpuKernel(cpu::CreateConvF32, c);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_LE(MaxRelError((*out)[0], RunReference(c)[0]), 1e-4);
  }
}

TEST(ConvCpuTest, RefusesWhatItCannotRunWithAReason) {
  KernelCase c = MakeConv(kSpecs[1], 7, Layout::kPlain);
  c.constant = {false, false, false};  // weights computed at run time
  const QuantTable table = {{c.node.inputs[0], QuantParams{.min = -1, .max = 1}}};
  c.precision = Precision::kInt8;
  c.quant = &table;
  auto out = RunCpuKernel(cpu::CreateConvInt8, c);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(out.status().message().find("int8 needs constant weights"), std::string::npos);

  // 4-D convolutions are left to the reference; 3-D ones run in fp32 only.
  KernelCase conv4d{.node = MakeNode("Conv", 2)};
  conv4d.inputs = {RandomF32({1, 2, 3, 3, 3, 3}, 1), RandomF32({2, 2, 2, 2, 2, 2}, 2)};
  conv4d.constant = {false, true};
  out = RunCpuKernel(cpu::CreateConvF32, conv4d);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(out.status().message().find("4-D convolution"), std::string::npos);
  KernelCase conv3d{.node = MakeNode("Conv", 2)};
  conv3d.inputs = {RandomF32({1, 4, 5, 5, 5}, 1), RandomF32({4, 4, 3, 3, 3}, 2)};
  conv3d.constant = {false, true};
  conv3d.precision = Precision::kInt8;
  conv3d.quant = &table;
  EXPECT_NE(RefusalOf(cpu::CreateConvInt8, conv3d).find("3-D convolution runs in fp32"), std::string::npos);
}

// 3-D convolutions (NCDHW, weights MxC/gxkDxkHxkW) on oneDNN in plain order: strides, pads,
// dilations, groups, bias.
TEST(ConvCpuTest, ThreeDimensionalConvolutionsMatchReference) {
  struct Conv3d {
    Shape x, w;
    std::map<std::string, Attribute> attrs;
  };
  const std::vector<Conv3d> cases = {
      {{1, 4, 5, 6, 7}, {6, 4, 3, 3, 3}, {{"pads", IntsAttr({1, 1, 1, 1, 1, 1})}}},
      {{2, 6, 8, 5, 9}, {6, 2, 3, 1, 3}, {{"group", IntAttr(3)}, {"strides", IntsAttr({2, 1, 2})}}},
      {{1, 3, 9, 9, 9}, {5, 3, 2, 2, 2}, {{"dilations", IntsAttr({2, 2, 1})}, {"pads", IntsAttr({0, 1, 0, 1, 0, 1})}}},
  };
  uint64_t seed = 300;
  for (const Conv3d& spec : cases) {
    KernelCase c{.node = MakeNode("Conv", 3, 1, spec.attrs)};
    c.inputs = {RandomF32(spec.x, ++seed), RandomF32(spec.w, ++seed), RandomF32({spec.w[0]}, ++seed)};
    c.constant = {false, true, true};
    SCOPED_TRACE(ShapeToString(spec.x) + " * " + ShapeToString(spec.w));
    auto out = RunCpuKernel(cpu::CreateConvF32, c);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const auto ref = RunReference(c);
    ASSERT_EQ((*out)[0].shape(), ref[0].shape());
    EXPECT_LE(MaxRelError((*out)[0], ref[0]), 1e-4);
  }
}

// int8: activations quantised with the calibrated range (u8 when never negative, else s8), weights
// per output channel. Uniform data over the range gives ~48 dB per 8-bit operand; 7-bit weights
// (no VNNI) and the rounding of both operands summed over C·kh·kw products leave ≥ 30 dB in
// practice; 25 dB catches a wrong scale (≤ 10 dB) or a wrong zero point, sign or bias (≤ 0 dB).
TEST(ConvCpuTest, Int8IsCloseToReferenceBySqnr) {
  uint64_t seed = 500;
  for (size_t n = 0; n < kSpecs.size(); ++n) {
    const ConvSpec& spec = kSpecs[n];
    for (bool non_negative : {true, false}) {
      KernelCase c = MakeConv(spec, seed += 10, Layout::kPlain);
      if (non_negative) c.inputs[0] = RandomF32(spec.x, seed, 0.0f, 2.0f);
      const QuantTable table = RangeOf(c.node.inputs[0], c.inputs[0]);
      c.precision = Precision::kInt8;
      c.quant = &table;
      SCOPED_TRACE(ShapeToString(spec.x) + " g" + std::to_string(spec.group) + (non_negative ? " u8" : " s8"));
      auto out = RunCpuKernel(cpu::CreateConvInt8, c);
      if (n == 3) {
        // Grouped (not depthwise) int8 with 4 channels per group: oneDNN 2.6 on AVX2 has only its
        // reference kernel, which the CPU device refuses so placement moves on (to fp32).
        if (!out.ok()) {
          EXPECT_NE(out.status().message().find("reference implementation"), std::string::npos);
          continue;
        }
      }
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const auto ref = RunReference(c);
      EXPECT_GE(SqnrDb((*out)[0], ref[0]), 25.0);
    }
  }
}

TEST(ConvCpuTest, Int8WithoutCalibrationRangeIsRefused) {
  KernelCase c = MakeConv(kSpecs[0], 3, Layout::kPlain);
  const QuantTable empty;
  c.precision = Precision::kInt8;
  c.quant = &empty;
  auto out = RunCpuKernel(cpu::CreateConvInt8, c);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("no calibrated range for input 'in0'"), std::string::npos);
}

}  // namespace
}  // namespace chipfit::testing

namespace chipfit::testing {
namespace {

// FusedConv: residual Z and each activation as oneDNN post-ops, in fp32 and int8 (the output
// scales apply before the post-ops, so Z and the activation see real values).
// oneDNN's Winograd kernels (3x3, stride 1) round differently from a direct sum but stay within fp32's
// tolerance; the test factory takes them whatever they measure. oneDNN 2.6 has them from AVX-512 on only.
TEST(ConvCpuTest, WinogradMatchesReference) {
  const bool avx512 =
      (static_cast<unsigned>(dnnl::get_effective_cpu_isa()) & static_cast<unsigned>(dnnl::cpu_isa::avx512_core)) ==
      static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  const std::vector<ConvSpec> specs = {
      {.x = {1, 64, 20, 20}, .out_channels = 64, .kh = 3, .kw = 3, .pads = {1, 1, 1, 1}},
      {.x = {1, 32, 9, 13}, .out_channels = 48, .kh = 3, .kw = 3, .pads = {1, 1, 1, 1}, .bias = false},
      {.x = {2, 16, 12, 10}, .out_channels = 16, .kh = 3, .kw = 3},
  };
  uint64_t seed = 3000;
  for (const ConvSpec& spec : specs) {
    for (Layout layout : {Layout::kPlain, Layout::kChannelsLast}) {
      for (const char* activation : {"", "Relu"}) {
        KernelCase c = MakeConv(spec, seed += 10, layout);
        if (*activation != 0) {
          c.node.op_type = "FusedConv";
          c.node.domain = "com.chipfit";
          c.node.attributes["activation"] = StringAttr(activation);
        }
        SCOPED_TRACE(ShapeToString(spec.x) + " -> " + std::to_string(spec.out_channels) + " input " +
                     std::string(LayoutName(layout)) + " " + activation);
        auto out = RunCpuKernel(cpu::CreateConvWinogradForTest, c);
        if (!avx512) {
          EXPECT_FALSE(out.ok());
          GTEST_SKIP() << "oneDNN 2.6 has no Winograd kernel below AVX-512: " << out.status().message();
        }
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        const auto ref = RunReference(c);
        EXPECT_LE(MaxRelError((*out)[0], ref[0]), 1e-4);
        // The table's factory picks Winograd or the direct convolution by timing; either agrees.
        out = RunCpuKernel(cpu::CreateConvF32, c);
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        EXPECT_LE(MaxRelError((*out)[0], ref[0]), 1e-4);
      }
    }
  }
}

TEST(ConvCpuTest, WinogradRefusesWhatItCannotRunWithAReason) {
  struct Case {
    ConvSpec spec;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {{.x = {1, 32, 9, 9}, .out_channels = 32, .kh = 3, .kw = 3, .strides = {2, 2}}, "stride 1"},
      {{.x = {1, 32, 9, 9}, .out_channels = 32, .kh = 5, .kw = 5}, "3x3 kernels"},
      {{.x = {1, 32, 9, 9}, .out_channels = 32, .kh = 3, .kw = 3, .dilations = {2, 2}}, "without dilation"},
      {{.x = {1, 8, 9, 9}, .out_channels = 32, .kh = 3, .kw = 3}, "fewer than 16 channels"},
      {{.x = {1, 32, 9, 9}, .out_channels = 32, .kh = 3, .kw = 3, .group = 2}, "ungrouped"},
  };
  uint64_t seed = 3500;
  for (const Case& k : cases) {
    const auto out = RunCpuKernel(cpu::CreateConvWinogradForTest, MakeConv(k.spec, seed += 10, Layout::kChannelsLast));
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(out.status().message().find(k.reason), std::string::npos) << out.status().message();
  }
  // Weights computed at run time: the direct kernel reorders them each run; Winograd refuses.
  KernelCase c = MakeConv({.x = {1, 32, 9, 9}, .out_channels = 32, .kh = 3, .kw = 3}, 3600, Layout::kChannelsLast);
  c.constant = {false, false, true};
  const auto out = RunCpuKernel(cpu::CreateConvWinogradForTest, c);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("known at compile time"), std::string::npos) << out.status().message();
}

TEST(ConvCpuTest, FusedConvPostOpsMatchReference) {
  const ConvSpec spec{.x = {1, 8, 9, 7}, .out_channels = 16, .kh = 3, .kw = 3, .pads = {1, 1, 1, 1}};
  const std::vector<std::pair<std::string, std::vector<float>>> activations = {
      {"", {}},        {"Relu", {}}, {"LeakyRelu", {0.2f}},         {"Clip", {0.0f, 6.0f}},
      {"Sigmoid", {}}, {"Tanh", {}}, {"HardSigmoid", {0.2f, 0.5f}}, {"HardSwish", {}}};
  uint64_t seed = 900;
  for (const auto& [activation, params] : activations) {
    for (bool with_z : {false, true}) {
      KernelCase c = MakeConv(spec, seed += 3, Layout::kChannelsLast);
      c.node.op_type = "FusedConv";
      c.node.domain = "com.chipfit";
      if (!activation.empty()) {
        c.node.attributes["activation"] = StringAttr(activation);
        c.node.attributes["activation_params"] = FloatsAttr(params);
      }
      if (with_z) {
        c.node.inputs.push_back("in3");
        c.inputs.push_back(RandomF32({1, 16, 9, 7}, seed + 1, -2.0f, 2.0f));
        c.layouts = {Layout::kChannelsLast, Layout::kPlain, Layout::kPlain, Layout::kChannelsLast};
        // An absorbed clamp, then an absorbed scale and shift (the last post-op).
        c.node.attributes["clamp_max"] = FloatAttr(0.75f);
        c.node.attributes["post_scale"] = FloatAttr(-1.5f);
        c.node.attributes["post_shift"] = FloatAttr(1.0f);
      }
      SCOPED_TRACE(activation + (with_z ? " + Z, clamp, scale and shift" : ""));
      const auto ref = RunReference(c);
      auto out = RunCpuKernel(cpu::CreateConvF32, c);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_LE(MaxRelError((*out)[0], ref[0]), 1e-4);

      const QuantTable table = {{c.node.inputs[0], QuantParams{.min = -1, .max = 1}}};
      c.precision = Precision::kInt8;
      c.quant = &table;
      out = RunCpuKernel(cpu::CreateConvInt8, c);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_GE(SqnrDb((*out)[0], ref[0]), 25.0);
    }
  }
}

}  // namespace
}  // namespace chipfit::testing

namespace chipfit::testing {
namespace {

// bf16 rounds inputs and weights to 8 significant bits (relative error ≤ 2^-9 each); products
// summed in f32 keep the output's SQNR near 6.02·9 ≈ 54 dB minus the accumulation of K terms:
// ≥ 35 dB catches a wrong conversion (a dropped exponent bit or byte order gives ≤ 0 dB). On
// CPUs with AVX-512 but no native bf16 oneDNN 2.6 may pick its reference bf16 kernel: the table's
// factory refuses it, the test factory takes it so the path is checked there too. Below AVX-512
// oneDNN has no bf16 convolution at all, and the test says it skipped.
TEST(ConvCpuTest, Bf16IsCloseToReferenceBySqnr) {
  uint64_t seed = 1200;
  for (size_t n : {0u, 1u, 2u, 5u}) {
    KernelCase c = MakeConv(kSpecs[n], seed += 10, Layout::kChannelsLast);
    c.precision = Precision::kBf16;
    auto out = RunCpuKernel(cpu::CreateConvBf16ForTest, c);
    // cpu_isa values are feature bit masks: avx512_core's bits are all set on AVX-512 CPUs.
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    if (!out.ok() && (isa & avx512) != avx512) {
      GTEST_SKIP() << "oneDNN 2.6 has no bf16 convolution at all below AVX-512 (this CPU: " << out.status().message()
                   << ")";
    }
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_GE(SqnrDb((*out)[0], RunReference(c)[0]), 35.0) << ShapeToString(kSpecs[n].x);
    auto table_kernel = RunCpuKernel(cpu::CreateConvBf16, c);
    if (!table_kernel.ok()) {
      EXPECT_NE(table_kernel.status().message().find("reference"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace chipfit::testing

namespace chipfit::testing {
namespace {

// 1-D-shaped kernels with channels in multiples of 8 run on nChw8c on AVX2 (see conv_cpu.cpp);
// whatever order the input arrives in, the result matches the reference.
TEST(ConvCpuTest, OneDimensionalKernelsInEveryInputOrder) {
  const std::vector<ConvSpec> specs = {
      {.x = {1, 16, 12, 9}, .out_channels = 24, .kh = 3, .kw = 1, .pads = {0, 0, 0, 0}},
      {.x = {1, 24, 10, 8}, .out_channels = 16, .kh = 1, .kw = 3, .pads = {0, 1, 0, 1}},
      {.x = {2, 8, 7, 7}, .out_channels = 8, .kh = 5, .kw = 1, .strides = {2, 1}, .pads = {2, 0, 2, 0}}};
  uint64_t seed = 1500;
  for (const ConvSpec& spec : specs) {
    for (Layout layout : {Layout::kPlain, Layout::kChannelsLast, Layout::kBlocked8}) {
      const KernelCase c = MakeConv(spec, seed += 7, layout);
      SCOPED_TRACE(ShapeToString(spec.x) + " k" + std::to_string(spec.kh) + "x" + std::to_string(spec.kw) + " from " +
                   std::string(LayoutName(layout)));
      auto out = RunCpuKernel(cpu::CreateConvF32, c);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_LE(MaxRelError((*out)[0], RunReference(c)[0]), 1e-4);
    }
  }
}

}  // namespace
}  // namespace chipfit::testing

namespace chipfit::testing {
namespace {

// 1-D convolutions ([N, C, W]) run as 2-D ones over an H = 1 view of the same bytes, in plain order.
struct Conv1dSpec {
  Shape x;  // N C W
  int64_t out_channels, k, group = 1;
  std::vector<int64_t> strides{1}, dilations{1}, pads{0, 0};
  bool bias = true;
  std::string auto_pad{};
};

KernelCase MakeConv1d(const Conv1dSpec& s, uint64_t seed) {
  std::map<std::string, Attribute> attrs{
      {"strides", IntsAttr(s.strides)}, {"dilations", IntsAttr(s.dilations)}, {"group", IntAttr(s.group)}};
  if (s.auto_pad.empty()) {
    attrs["pads"] = IntsAttr(s.pads);
  } else {
    attrs["auto_pad"] = StringAttr(s.auto_pad);
  }
  KernelCase c{.node = MakeNode("Conv", s.bias ? 3 : 2, 1, attrs)};
  c.inputs.push_back(RandomF32(s.x, seed));
  c.inputs.push_back(RandomF32({s.out_channels, s.x[1] / s.group, s.k}, seed + 1, -0.5f, 0.5f));
  if (s.bias) c.inputs.push_back(RandomF32({s.out_channels}, seed + 2));
  c.constant = {false, true, true};
  return c;
}

std::string Describe(const Conv1dSpec& s) {
  return ShapeToString(s.x) + " -> " + std::to_string(s.out_channels) + " k" + std::to_string(s.k) + " g" +
         std::to_string(s.group) + " s" + JoinInts(s.strides) + " d" + JoinInts(s.dilations) + " p" + JoinInts(s.pads) +
         " " + s.auto_pad;
}

const std::vector<Conv1dSpec> kConv1dSpecs = {
    {.x = {1, 3, 23}, .out_channels = 8, .k = 3, .strides = {2}, .pads = {1, 1}},
    {.x = {2, 16, 11}, .out_channels = 24, .k = 1},
    {.x = {1, 16, 13}, .out_channels = 16, .k = 3, .group = 16, .pads = {1, 1}},  // depthwise
    {.x = {1, 12, 20}, .out_channels = 6, .k = 3, .group = 3, .dilations = {2}, .bias = false},
    {.x = {1, 5, 9}, .out_channels = 7, .k = 5, .strides = {2}, .pads = {2, 3}},
    {.x = {1, 8, 15}, .out_channels = 8, .k = 4, .strides = {2}, .auto_pad = "SAME_UPPER"},
    {.x = {1, 8, 15}, .out_channels = 8, .k = 4, .strides = {3}, .auto_pad = "SAME_LOWER"},
    {.x = {2, 4, 30}, .out_channels = 4, .k = 7, .strides = {3}, .dilations = {3}, .auto_pad = "VALID"},
    {.x = {1, 32, 100}, .out_channels = 64, .k = 9, .strides = {4}, .dilations = {2}, .pads = {4, 4}},
};

TEST(ConvCpuTest, OneDimensionalConvMatchesReference) {
  uint64_t seed = 1700;
  for (const Conv1dSpec& spec : kConv1dSpecs) {
    const KernelCase c = MakeConv1d(spec, seed += 10);
    SCOPED_TRACE(Describe(spec));
    auto layouts = LayoutsOf(cpu::CreateConvF32, c);
    ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
    EXPECT_EQ(layouts->inputs[0], Layout::kPlain);
    EXPECT_EQ(layouts->output, Layout::kPlain);
    auto out = RunCpuKernel(cpu::CreateConvF32, c);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const auto ref = RunReference(c);
    ASSERT_EQ(ref.size(), 1u);
    EXPECT_EQ((*out)[0].shape(), ref[0].shape());
    EXPECT_LE(MaxRelError((*out)[0], ref[0]), 1e-4);
  }
}

TEST(ConvCpuTest, OneDimensionalConvWithWeightsAndBiasComputedAtRunTime) {
  KernelCase c = MakeConv1d(kConv1dSpecs[3], 31);
  c.constant = {false, false, false};
  auto out = RunCpuKernel(cpu::CreateConvF32, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_LE(MaxRelError((*out)[0], RunReference(c)[0]), 1e-4);
  c = MakeConv1d(kConv1dSpecs[0], 37);
  c.constant = {false, false, false};
  out = RunCpuKernel(cpu::CreateConvF32, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_LE(MaxRelError((*out)[0], RunReference(c)[0]), 1e-4);
}

TEST(ConvCpuTest, OneDimensionalFusedConvPostOpsMatchReference) {
  const Conv1dSpec spec{.x = {2, 8, 17}, .out_channels = 16, .k = 3, .pads = {1, 1}};
  uint64_t seed = 1800;
  for (const std::string activation : {"", "Relu", "LeakyRelu", "Sigmoid"}) {
    for (bool with_z : {false, true}) {
      KernelCase c = MakeConv1d(spec, seed += 3);
      c.node.op_type = "FusedConv";
      c.node.domain = "com.chipfit";
      if (!activation.empty()) c.node.attributes["activation"] = StringAttr(activation);
      if (activation == "LeakyRelu") c.node.attributes["activation_params"] = FloatsAttr({0.1f});
      if (with_z) {
        c.node.inputs.push_back("in3");
        c.inputs.push_back(RandomF32({2, 16, 17}, seed + 1, -2.0f, 2.0f));
        c.node.attributes["clamp_max"] = FloatAttr(0.75f);
      }
      SCOPED_TRACE(activation + (with_z ? " + Z and clamp" : ""));
      auto out = RunCpuKernel(cpu::CreateConvF32, c);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_LE(MaxRelError((*out)[0], RunReference(c)[0]), 1e-4);
    }
  }
  // Z of another shape (broadcast) is refused.
  KernelCase c = MakeConv1d(spec, 5);
  c.node.op_type = "FusedConv";
  c.node.domain = "com.chipfit";
  c.node.inputs.push_back("in3");
  c.inputs.push_back(RandomF32({1, 16, 17}, 6));
  auto out = RunCpuKernel(cpu::CreateConvF32, c);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("broadcasts"), std::string::npos);
}

// int8 and bf16 convert the input into the kernel's own buffer; the output stays plain. Where
// oneDNN has no kernel for that (int8: only its reference one), the refusal says so and placement
// moves on to fp32. The test's bf16 factory takes oneDNN's reference kernel, so the path is checked.
TEST(ConvCpuTest, OneDimensionalConvInt8AndBf16AreCloseOrRefused) {
  uint64_t seed = 1900;
  for (size_t n : {0u, 1u, 2u, 4u}) {
    KernelCase c = MakeConv1d(kConv1dSpecs[n], seed += 10);
    SCOPED_TRACE(Describe(kConv1dSpecs[n]));
    const QuantTable table = {{c.node.inputs[0], QuantParams{.min = -1, .max = 1}}};
    c.precision = Precision::kInt8;
    c.quant = &table;
    auto out = RunCpuKernel(cpu::CreateConvInt8, c);
    if (out.ok()) {
      EXPECT_GE(SqnrDb((*out)[0], RunReference(c)[0]), 25.0);
    } else {
      // oneDNN 2.6 has int8 convolutions into nhwc only; a rank-3 output is plain.
      EXPECT_EQ(out.status().code(), StatusCode::kUnsupported) << out.status().ToString();
      EXPECT_NE(out.status().message().find("reference implementation"), std::string::npos);
    }
    c.precision = Precision::kBf16;
    c.quant = nullptr;
    out = RunCpuKernel(cpu::CreateConvBf16ForTest, c);
    if (out.ok()) {
      EXPECT_GE(SqnrDb((*out)[0], RunReference(c)[0]), 35.0);
    } else {
      EXPECT_EQ(out.status().code(), StatusCode::kUnsupported) << out.status().ToString();
    }
  }
}

TEST(ConvCpuTest, OneDimensionalConvRefusesMismatchedWeights) {
  KernelCase c = MakeConv1d(kConv1dSpecs[0], 3);
  c.inputs[1] = RandomF32({8, 3, 1, 3}, 4);  // 2-D weights for a 1-D input
  auto out = RunCpuKernel(cpu::CreateConvF32, c);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("rank 3"), std::string::npos);
}

}  // namespace
}  // namespace chipfit::testing
