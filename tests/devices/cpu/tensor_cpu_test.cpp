// oneDNN Concat, Resize and ConvTranspose against the reference: axes, input orders, the Resize
// modes oneDNN matches exactly (and refusals for the others), strides, pads, output_padding,
// output_shape and groups of ConvTranspose.
#include <gtest/gtest.h>

#include <cstring>

#include "core/reference/conv_util.h"
#include "devices/cpu/ops/cpu_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"

namespace chipfit::testing {
namespace {

void ExpectClose(KernelFactory factory, const KernelCase& c, double tolerance = 1e-4) {
  auto out = RunCpuKernel(factory, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  ASSERT_EQ(ref.size(), 1u);
  EXPECT_EQ((*out)[0].shape(), ref[0].shape());
  EXPECT_LE(MaxRelError((*out)[0], ref[0]), tolerance);
}

Status Refusal(KernelFactory factory, const KernelCase& c) {
  auto out = RunCpuKernel(factory, c);
  return out.ok() ? Status() : out.status();
}

// The order a kernel asks its inputs in and writes its output in, for producers writing `layout`.
Layout OutputLayoutFor(KernelFactory factory, const KernelCase& c) {
  std::vector<ValueInfo> infos;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    infos.push_back({c.inputs[i].dtype(), c.inputs[i].shape(), nullptr, c.layouts[i]});
  }
  std::vector<const ValueInfo*> ptrs;
  for (const ValueInfo& v : infos) ptrs.push_back(&v);
  auto kernel = factory(KernelInit{c.node, ptrs, c.opset});
  EXPECT_TRUE(kernel.ok()) << kernel.status().ToString();
  return kernel.ok() ? (*kernel)->OutputLayout(0) : Layout::kPlain;
}

// ---------------------------------------------------------------------------------------------
// Concat

struct ConcatSpec {
  std::vector<Shape> inputs;
  int64_t axis;
};

const std::vector<ConcatSpec> kConcats = {
    {{{1, 3, 5, 7}, {1, 5, 5, 7}, {1, 2, 5, 7}}, 1},
    {{{2, 4, 3, 3}, {2, 4, 3, 3}}, -1},
    {{{1, 6, 2, 9}, {1, 6, 7, 9}}, 2},
    {{{3, 1, 4, 4}, {2, 1, 4, 4}}, 0},
    {{{5, 3}, {5, 8}, {5, 1}}, 1},
    {{{7}, {2}}, 0},
    {{{2, 9, 4}, {2, 9, 4}}, -2},
    // Large enough to be split between threads (a ShuffleNet block's channel concat; a split inside a run).
    {{{1, 58, 28, 28}, {1, 58, 28, 28}}, 1},
    {{{1, 3, 97, 131}, {1, 5, 97, 131}, {1, 1, 97, 131}}, 1},
    {{{2, 24, 56, 56}, {2, 24, 1, 56}}, 2},
};

TEST(ConcatCpuTest, MatchesReferenceInEveryInputOrder) {
  uint64_t seed = 10;
  for (const ConcatSpec& spec : kConcats) {
    for (int order = 0; order < 3; ++order) {  // all plain, all channels-last, mixed
      KernelCase c{.node = MakeNode("Concat", spec.inputs.size(), 1, {{"axis", IntAttr(spec.axis)}})};
      for (size_t i = 0; i < spec.inputs.size(); ++i) {
        c.inputs.push_back(RandomF32(spec.inputs[i], ++seed));
        const bool nhwc = spec.inputs[i].size() == 4 && (order == 1 || (order == 2 && i % 2 == 0));
        c.layouts.push_back(nhwc ? Layout::kChannelsLast : Layout::kPlain);
      }
      SCOPED_TRACE(ShapeToString(spec.inputs[0]) + " axis " + std::to_string(spec.axis) + " order " +
                   std::to_string(order));
      ExpectClose(cpu::CreateConcatF32, c, 0.0);  // a copy: exact
      const bool all_nhwc = spec.inputs[0].size() == 4 && order == 1;
      EXPECT_EQ(OutputLayoutFor(cpu::CreateConcatF32, c), all_nhwc ? Layout::kChannelsLast : Layout::kPlain);
    }
  }
}

// Other element types are concatenated as bits: int64 (a detector's shapes and box indices),
// float16, uint8 and bool give the reference's bytes exactly.
TEST(ConcatCpuTest, EveryElementTypeMatchesReferenceBitForBit) {
  for (DType dtype : {DType::kI64, DType::kF16, DType::kU8, DType::kBool, DType::kI32, DType::kF64}) {
    for (const ConcatSpec& spec : kConcats) {
      KernelCase c{.node = MakeNode("Concat", spec.inputs.size(), 1, {{"axis", IntAttr(spec.axis)}})};
      for (size_t i = 0; i < spec.inputs.size(); ++i) {
        Tensor x(dtype, spec.inputs[i]);
        auto* bytes = static_cast<uint8_t*>(x.raw_data());
        for (size_t b = 0; b < x.nbytes(); ++b) {
          bytes[b] =
              dtype == DType::kBool ? static_cast<uint8_t>((b + i) % 2) : static_cast<uint8_t>((b * 29 + i) % 253);
        }
        c.inputs.push_back(x);
      }
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + ShapeToString(spec.inputs[0]) + " axis " +
                   std::to_string(spec.axis));
      auto out = RunCpuKernel(cpu::CreateConcatF32, c);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const auto ref = RunReference(c);
      ASSERT_EQ((*out)[0].shape(), ref[0].shape());
      EXPECT_EQ(std::memcmp((*out)[0].raw_data(), ref[0].raw_data(), ref[0].nbytes()), 0);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Resize

struct ResizeSpec {
  Shape x;
  std::vector<float> scales{};   // empty: sizes
  std::vector<int64_t> sizes{};  // empty: scales
  std::string mode = "nearest";
  std::string transform = "half_pixel";
  std::string nearest = "round_prefer_floor";
  int64_t opset = 13;
};

KernelCase MakeResize(const ResizeSpec& s, uint64_t seed, Layout layout) {
  std::map<std::string, Attribute> attrs{{"mode", StringAttr(s.mode)}};
  if (s.opset >= 11) {
    attrs["coordinate_transformation_mode"] = StringAttr(s.transform);
    attrs["nearest_mode"] = StringAttr(s.nearest);
  }
  KernelCase c{.node = Node{}, .opset = s.opset};
  if (s.opset < 11) {
    c.node = MakeNode("Resize", 2, 1, attrs);
    c.inputs = {RandomF32(s.x, seed), MakeTensor<float>({static_cast<int64_t>(s.scales.size())}, s.scales)};
    c.constant = {false, true};
  } else {
    c.node = MakeNode("Resize", s.sizes.empty() ? 3 : 4, 1, attrs);
    c.node.inputs[1] = "";  // no roi
    c.inputs = {RandomF32(s.x, seed), Tensor()};
    if (s.sizes.empty()) {
      c.inputs.push_back(MakeTensor<float>({static_cast<int64_t>(s.scales.size())}, s.scales));
    } else {
      c.node.inputs[2] = "";
      c.inputs.push_back(Tensor());
      c.inputs.push_back(MakeTensor<int64_t>({static_cast<int64_t>(s.sizes.size())}, s.sizes));
    }
    c.constant = {false, true, true, true};
  }
  c.layouts = {layout};
  return c;
}

std::string Describe(const ResizeSpec& s) {
  std::string scale;
  for (float f : s.scales) scale += std::to_string(f) + " ";
  return ShapeToString(s.x) + " " + s.mode + " " + s.transform + " " + s.nearest + " scales " + scale + "sizes " +
         JoinInts(s.sizes) + " opset " + std::to_string(s.opset);
}

TEST(ResizeCpuTest, MatchesReferenceWhereOneDnnSamplesTheSame) {
  const std::vector<ResizeSpec> specs = {
      // Integer upscaling with asymmetric + floor (Upsample, YOLO necks) picks the same pixels.
      {.x = {1, 3, 5, 7}, .scales = {1, 1, 2, 2}, .transform = "asymmetric", .nearest = "floor"},
      {.x = {2, 4, 3, 4}, .scales = {1, 1, 3, 3}, .transform = "asymmetric", .nearest = "floor"},
      // Half-pixel centres never tie when upscaling by 2, so either rounding works.
      {.x = {1, 3, 5, 7}, .scales = {1, 1, 2, 2}},
      {.x = {1, 3, 8, 6}, .scales = {1, 1, 0.5f, 0.5f}, .nearest = "round_prefer_ceil"},
      {.x = {1, 2, 4, 6}, .scales = {1, 1, 2, 2}, .transform = "asymmetric"},  // ties round down, as oneDNN
      {.x = {1, 3, 5, 7}, .scales = {1, 1, 2, 2}, .opset = 10},                // Resize-10: floor
      {.x = {1, 3, 5, 7}, .scales = {1, 1, 2, 2}, .mode = "linear"},
      {.x = {2, 5, 5, 7}, .sizes = {2, 5, 11, 13}, .mode = "linear"},
      {.x = {1, 3, 10, 8}, .scales = {1, 1, 0.5f, 0.5f}, .mode = "linear"},
      {.x = {1, 8, 6, 6}, .scales = {1, 1, 2, 3}, .mode = "linear", .transform = "pytorch_half_pixel"},
      {.x = {1, 3, 6, 6}, .sizes = {1, 3, 6, 12}, .mode = "linear", .transform = "half_pixel_symmetric", .opset = 19},
  };
  uint64_t seed = 100;
  for (const ResizeSpec& spec : specs) {
    for (Layout layout : {Layout::kPlain, Layout::kChannelsLast}) {
      SCOPED_TRACE(Describe(spec) + " input " + std::string(LayoutName(layout)));
      ExpectClose(cpu::CreateResizeF32, MakeResize(spec, ++seed, layout));
    }
  }
}

TEST(ResizeCpuTest, RefusesModesOneDnnDoesNotMatchNamingThem) {
  const std::vector<std::pair<ResizeSpec, std::string>> refused = {
      {{.x = {1, 3, 5, 7}, .scales = {1, 1, 2, 2}, .mode = "cubic"}, "mode 'cubic'"},
      {{.x = {1, 3, 5, 7}, .scales = {1, 1, 2, 2}, .mode = "linear", .transform = "align_corners"},
       "coordinate_transformation_mode 'align_corners'"},
      {{.x = {1, 3, 5, 7}, .scales = {1, 1, 2, 2}, .mode = "linear", .transform = "asymmetric"},
       "coordinate_transformation_mode 'asymmetric'"},
      // Half-pixel centres land exactly between two inputs when halving: ONNX rounds down here.
      {{.x = {1, 3, 8, 6}, .scales = {1, 1, 0.5f, 0.5f}}, "nearest_mode 'round_prefer_floor'"},
      // Upscaling by 3 with asymmetric rounding picks the next pixel earlier than oneDNN.
      {{.x = {1, 3, 4, 4}, .scales = {1, 1, 3, 3}, .transform = "asymmetric"}, "nearest_mode 'round_prefer_floor'"},
      // 9 rows at scale 0.5 give 4 (floored): ONNX samples with 0.5, oneDNN with 4/9.
      {{.x = {1, 3, 9, 8}, .scales = {1, 1, 0.5f, 0.5f}, .mode = "linear"}, "samples differently"},
      {{.x = {1, 3, 5, 7}, .scales = {1, 2, 2, 2}}, "channel axis"},
      {{.x = {3, 5, 7}, .scales = {1, 2, 2}}, "3-D Resize"},
  };
  uint64_t seed = 200;
  for (const auto& [spec, reason] : refused) {
    SCOPED_TRACE(Describe(spec));
    KernelCase c = MakeResize(spec, ++seed, Layout::kPlain);
    const Status status = Refusal(cpu::CreateResizeF32, c);
    EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.ToString();
    EXPECT_NE(status.message().find(reason), std::string::npos) << status.message();
  }
}

// ---------------------------------------------------------------------------------------------
// ConvTranspose

struct DeconvSpec {
  Shape x;  // N C H W
  int64_t out_channels, kh, kw, group = 1;
  std::vector<int64_t> strides{1, 1}, dilations{1, 1}, pads{0, 0, 0, 0}, output_padding{0, 0};
  std::vector<int64_t> output_shape{};
  std::string auto_pad{};
  bool bias = true;
};

KernelCase MakeDeconv(const DeconvSpec& s, uint64_t seed, Layout layout) {
  std::map<std::string, Attribute> attrs{{"strides", IntsAttr(s.strides)},
                                         {"dilations", IntsAttr(s.dilations)},
                                         {"group", IntAttr(s.group)},
                                         {"output_padding", IntsAttr(s.output_padding)}};
  if (!s.auto_pad.empty()) attrs["auto_pad"] = StringAttr(s.auto_pad);
  if (!s.output_shape.empty()) attrs["output_shape"] = IntsAttr(s.output_shape);
  if (s.auto_pad.empty() && s.output_shape.empty()) attrs["pads"] = IntsAttr(s.pads);
  KernelCase c{.node = MakeNode("ConvTranspose", s.bias ? 3 : 2, 1, attrs)};
  c.inputs.push_back(RandomF32(s.x, seed));
  c.inputs.push_back(RandomF32({s.x[1], s.out_channels / s.group, s.kh, s.kw}, seed + 1, -0.5f, 0.5f));
  if (s.bias) c.inputs.push_back(RandomF32({s.out_channels}, seed + 2));
  c.constant = {false, true, true};
  c.layouts = {layout};
  return c;
}

TEST(ConvTransposeCpuTest, Fp32MatchesReference) {
  const std::vector<DeconvSpec> specs = {
      {.x = {1, 8, 5, 5},
       .out_channels = 4,
       .kh = 3,
       .kw = 3,
       .strides = {2, 2},
       .pads = {1, 1, 1, 1},
       .output_padding = {1, 1}},
      {.x = {2, 6, 7, 6}, .out_channels = 6, .kh = 3, .kw = 2, .group = 2, .strides = {1, 2}, .pads = {0, 1, 2, 0}},
      {.x = {1, 8, 6, 6}, .out_channels = 8, .kh = 4, .kw = 4, .group = 8, .strides = {2, 2}, .pads = {1, 1, 1, 1}},
      {.x = {1, 3, 4, 7}, .out_channels = 5, .kh = 3, .kw = 3, .dilations = {2, 1}, .bias = false},
      {.x = {1, 4, 5, 5}, .out_channels = 3, .kh = 3, .kw = 3, .strides = {2, 2}, .output_shape = {11, 12}},
      {.x = {1, 4, 5, 6}, .out_channels = 4, .kh = 3, .kw = 3, .strides = {2, 2}, .auto_pad = "SAME_UPPER"},
      {.x = {1, 4, 5, 6}, .out_channels = 4, .kh = 4, .kw = 3, .strides = {2, 3}, .auto_pad = "SAME_LOWER"},
      {.x = {1, 16, 3, 3}, .out_channels = 32, .kh = 2, .kw = 2, .strides = {2, 2}},
  };
  uint64_t seed = 300;
  for (const DeconvSpec& spec : specs) {
    for (Layout layout : {Layout::kPlain, Layout::kChannelsLast}) {
      SCOPED_TRACE(ShapeToString(spec.x) + " -> " + std::to_string(spec.out_channels) + " k" + std::to_string(spec.kh) +
                   "x" + std::to_string(spec.kw) + " g" + std::to_string(spec.group) + " s" + JoinInts(spec.strides) +
                   " input " + std::string(LayoutName(layout)));
      ExpectClose(cpu::CreateConvTransposeF32, MakeDeconv(spec, seed += 10, layout));
    }
  }
}

// Weights (and bias) computed at run time: reordered into oneDNN's layout before every run.
TEST(ConvTransposeCpuTest, WeightsAndBiasComputedAtRunTime) {
  KernelCase c = MakeDeconv({.x = {1, 4, 5, 5}, .out_channels = 6, .kh = 3, .kw = 3, .group = 2, .strides = {2, 2}}, 1,
                            Layout::kPlain);
  c.constant = {false, false, false};
  ExpectClose(cpu::CreateConvTransposeF32, c);
  c.constant = {false, false, true};
  ExpectClose(cpu::CreateConvTransposeF32, c);
}

// int8: the calibrated input range (u8 when never negative, else s8), weights per output channel (the
// groups' channels included), the f32 bias added after. 25 dB catches a wrong scale or channel order
// (the rounding of both operands leaves ≥ 30 dB, as for the int8 convolutions).
TEST(ConvTransposeCpuTest, Int8IsCloseToReferenceBySqnr) {
  const std::vector<DeconvSpec> specs = {
      {.x = {1, 16, 6, 6}, .out_channels = 8, .kh = 2, .kw = 2, .strides = {2, 2}},
      {.x = {1, 8, 5, 5}, .out_channels = 12, .kh = 3, .kw = 3, .group = 2, .strides = {2, 2}, .pads = {1, 1, 1, 1}},
      {.x = {2, 24, 9, 7}, .out_channels = 24, .kh = 4, .kw = 4, .strides = {2, 2}, .pads = {1, 1, 1, 1}},
  };
  uint64_t seed = 700;
  for (const DeconvSpec& spec : specs) {
    for (bool non_negative : {true, false}) {
      KernelCase c = MakeDeconv(spec, seed += 10, Layout::kChannelsLast);
      if (non_negative) c.inputs[0] = RandomF32(spec.x, seed, 0.0f, 2.0f);
      const QuantTable table = RangeOf(c.node.inputs[0], c.inputs[0]);
      c.precision = Precision::kInt8;
      c.quant = &table;
      SCOPED_TRACE(ShapeToString(spec.x) + " g" + std::to_string(spec.group) + (non_negative ? " u8" : " s8"));
      auto out = RunCpuKernel(cpu::CreateConvTransposeInt8, c);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const auto ref = RunReference(c);
      EXPECT_GE(SqnrDb((*out)[0], ref[0]), 25.0);
    }
  }
  KernelCase c = MakeDeconv(specs[0], 1, Layout::kPlain);
  const QuantTable empty;
  c.precision = Precision::kInt8;
  c.quant = &empty;
  EXPECT_NE(Refusal(cpu::CreateConvTransposeInt8, c).message().find("no calibrated range"), std::string::npos);
}

// 1-D ConvTranspose (audio decoders): a 2-D one over an H = 1 view, plain in and out, with strides,
// padding, output_padding, output_shape, dilations, groups, SAME padding and a bias. int8 refuses, with
// its reason.
TEST(ConvTransposeCpuTest, OneDimensionalMatchesReference) {
  struct Spec1d {
    int64_t c, w, m, k, group = 1, stride = 1, dilation = 1;
    std::vector<int64_t> pads{0, 0}, output_padding{0}, output_shape{};
    std::string auto_pad{};
    bool bias = true;
  };
  const std::vector<Spec1d> specs = {
      {.c = 8, .w = 20, .m = 4, .k = 16, .stride = 8, .pads = {4, 4}},  // an upsampling vocoder stage
      {.c = 6, .w = 9, .m = 6, .k = 3, .group = 3, .stride = 2, .pads = {1, 1}, .output_padding = {1}},
      {.c = 4, .w = 7, .m = 5, .k = 3, .dilation = 2, .bias = false},
      {.c = 4, .w = 5, .m = 3, .k = 3, .stride = 2, .output_shape = {12}},
      {.c = 4, .w = 6, .m = 4, .k = 4, .stride = 3, .auto_pad = "SAME_LOWER"},
      {.c = 3, .w = 1, .m = 2, .k = 1},
  };
  uint64_t seed = 900;
  for (const Spec1d& s : specs) {
    std::map<std::string, Attribute> attrs{{"strides", IntsAttr({s.stride})},
                                           {"dilations", IntsAttr({s.dilation})},
                                           {"group", IntAttr(s.group)},
                                           {"output_padding", IntsAttr(s.output_padding)}};
    if (!s.auto_pad.empty()) attrs["auto_pad"] = StringAttr(s.auto_pad);
    if (!s.output_shape.empty()) attrs["output_shape"] = IntsAttr(s.output_shape);
    if (s.auto_pad.empty() && s.output_shape.empty()) attrs["pads"] = IntsAttr(s.pads);
    KernelCase c{.node = MakeNode("ConvTranspose", s.bias ? 3 : 2, 1, attrs)};
    c.inputs = {RandomF32({2, s.c, s.w}, seed += 10), RandomF32({s.c, s.m / s.group, s.k}, seed + 1, -0.5f, 0.5f)};
    if (s.bias) c.inputs.push_back(RandomF32({s.m}, seed + 2));
    c.constant = {false, true, true};
    SCOPED_TRACE("C" + std::to_string(s.c) + " W" + std::to_string(s.w) + " -> " + std::to_string(s.m) + " k" +
                 std::to_string(s.k) + " g" + std::to_string(s.group) + " s" + std::to_string(s.stride));
    ExpectClose(cpu::CreateConvTransposeF32, c);
    const QuantTable table = RangeOf(c.node.inputs[0], c.inputs[0]);
    c.precision = Precision::kInt8;
    c.quant = &table;
    EXPECT_NE(Refusal(cpu::CreateConvTransposeInt8, c).message().find("1-D int8 ConvTranspose"), std::string::npos);
  }
}

// 3-D ConvTranspose in plain order: strides, padding, groups, output_padding and a bias.
TEST(ConvTransposeCpuTest, ThreeDimensionalMatchesReference) {
  uint64_t seed = 950;
  for (int64_t group : {1, 2}) {
    for (bool bias : {true, false}) {
      std::map<std::string, Attribute> attrs{{"strides", IntsAttr({2, 1, 2})},
                                             {"pads", IntsAttr({1, 0, 0, 1, 0, 1})},
                                             {"output_padding", IntsAttr({1, 0, 0})},
                                             {"group", IntAttr(group)}};
      KernelCase c{.node = MakeNode("ConvTranspose", bias ? 3 : 2, 1, attrs)};
      c.inputs = {RandomF32({2, 4, 3, 4, 5}, seed += 10), RandomF32({4, 6 / group, 3, 2, 3}, seed + 1, -0.5f, 0.5f)};
      if (bias) c.inputs.push_back(RandomF32({6}, seed + 2));
      c.constant = {false, true, true};
      SCOPED_TRACE("group " + std::to_string(group) + (bias ? " bias" : ""));
      ExpectClose(cpu::CreateConvTransposeF32, c);
    }
  }
}

TEST(ConvTransposeCpuTest, RefusesWhatItCannotRunWithAReason) {
  Status status;
  KernelCase deconv4d{.node = MakeNode("ConvTranspose", 2)};
  deconv4d.inputs = {RandomF32({1, 4, 3, 3, 3, 3}, 1), RandomF32({4, 2, 2, 2, 2, 2}, 2)};
  deconv4d.constant = {false, true};
  status = Refusal(cpu::CreateConvTransposeF32, deconv4d);
  EXPECT_NE(status.message().find("4-D ConvTranspose"), std::string::npos) << status.message();
  KernelCase deconv3d{.node = MakeNode("ConvTranspose", 2)};
  deconv3d.inputs = {RandomF32({1, 4, 3, 3, 3}, 1), RandomF32({4, 2, 2, 2, 2}, 2)};
  deconv3d.constant = {false, true};
  const QuantTable table = RangeOf(deconv3d.node.inputs[0], deconv3d.inputs[0]);
  deconv3d.precision = Precision::kInt8;
  deconv3d.quant = &table;
  status = Refusal(cpu::CreateConvTransposeInt8, deconv3d);
  EXPECT_NE(status.message().find("3-D int8 ConvTranspose"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace chipfit::testing
