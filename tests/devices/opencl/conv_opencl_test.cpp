// Conv, FusedConv and ConvTranspose on OpenCL against the reference, fp32 and fp16 storage: every
// path (depthwise, 1x1 GEMM, implicit GEMM, transposed gather), the window attributes, the fused
// epilogue, and the refusals.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "devices/opencl/ops/opencl_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/opencl/opencl_test_util.h"

namespace chipfit::testing {
namespace {

// fp16 storage rounds inputs, weights and outputs to half (relative error <= 2^-11 each); the
// sums of C*KH*KW products with random signs keep that relative size, so the NMSE is about
// 3 * (2^-11)^2 ~ 7e-7. 1e-5 leaves a margin of 10x; an indexing mistake gives an NMSE near 1.
constexpr double kNmse16 = 1e-5;

struct ConvSpec {
  std::string name;
  Shape x, w;
  std::map<std::string, Attribute> attrs;
  bool bias = true;
};

OpenClCase MakeCase(const std::string& op, const ConvSpec& s, uint64_t seed, int64_t bias_size) {
  OpenClCase c{.node = MakeNode(op, s.bias ? 3 : 2, 1, s.attrs)};
  c.inputs = {RandomF32(s.x, seed), RandomF32(s.w, seed + 1)};
  if (s.bias) c.inputs.push_back(RandomF32({bias_size}, seed + 2));
  return c;
}

std::vector<ConvSpec> ForwardSpecs() {
  return {
      {"3x3 pad 1", {1, 8, 9, 7}, {16, 8, 3, 3}, {{"pads", IntsAttr({1, 1, 1, 1})}}},
      {"3x3 no bias odd channels", {2, 3, 11, 13}, {17, 3, 3, 3}, {}, false},
      {"stride 2 asymmetric pads",
       {1, 5, 12, 10},
       {7, 5, 3, 2},
       {{"strides", IntsAttr({2, 2})}, {"pads", IntsAttr({1, 0, 2, 1})}}},
      {"dilation 2", {1, 4, 13, 11}, {6, 4, 3, 3}, {{"dilations", IntsAttr({2, 2})}}},
      {"groups 2", {2, 6, 8, 9}, {10, 3, 3, 3}, {{"group", IntAttr(2)}, {"pads", IntsAttr({1, 1, 1, 1})}}},
      {"pointwise", {2, 65, 5, 7}, {33, 65, 1, 1}, {}},
      {"pointwise groups 4", {1, 8, 6, 6}, {12, 2, 1, 1}, {{"group", IntAttr(4)}}},
      {"1x1 stride 2", {1, 16, 9, 9}, {8, 16, 1, 1}, {{"strides", IntsAttr({2, 2})}}},
      {"SAME_UPPER stride 2",
       {1, 3, 10, 9},
       {5, 3, 4, 3},
       {{"auto_pad", StringAttr("SAME_UPPER")}, {"strides", IntsAttr({2, 2})}}},
      {"SAME_LOWER", {1, 3, 8, 8}, {5, 3, 4, 4}, {{"auto_pad", StringAttr("SAME_LOWER")}}},
      {"VALID", {1, 3, 8, 7}, {5, 3, 3, 3}, {{"auto_pad", StringAttr("VALID")}, {"pads", IntsAttr({1, 1, 1, 1})}}},
      {"depthwise 3x3", {2, 17, 9, 8}, {17, 1, 3, 3}, {{"group", IntAttr(17)}, {"pads", IntsAttr({1, 1, 1, 1})}}},
      {"depthwise stride 2 dilation 2",
       {1, 8, 15, 14},
       {8, 1, 3, 5},
       {{"group", IntAttr(8)},
        {"strides", IntsAttr({2, 2})},
        {"dilations", IntsAttr({2, 1})},
        {"pads", IntsAttr({2, 2, 1, 0})}}},
      {"depthwise multiplier 2", {1, 4, 7, 7}, {8, 1, 3, 3}, {{"group", IntAttr(4)}}},
      {"1-D", {2, 5, 31}, {9, 5, 3}, {{"pads", IntsAttr({1, 2})}, {"strides", IntsAttr({2})}}},
      {"1-D depthwise", {1, 6, 20}, {6, 1, 5}, {{"group", IntAttr(6)}, {"auto_pad", StringAttr("SAME_UPPER")}}},
      {"1-D pointwise", {1, 7, 33}, {3, 7, 1}, {}},
      {"large", {1, 32, 28, 28}, {64, 32, 3, 3}, {{"pads", IntsAttr({1, 1, 1, 1})}}},
  };
}

TEST(ConvOpenClTest, MatchesReferenceOnEveryPath) {
  CHIPFIT_REQUIRE_OPENCL();
  uint64_t seed = 1000;
  for (const ConvSpec& s : ForwardSpecs()) {
    SCOPED_TRACE(s.name);
    ExpectMatchesReference(opencl::CreateConv, MakeCase("Conv", s, seed += 3, s.w[0]), 1e-4, kNmse16);
  }
}

TEST(FusedConvOpenClTest, EveryActivationWithAndWithoutResidual) {
  CHIPFIT_REQUIRE_OPENCL();
  const std::vector<std::pair<std::string, std::vector<float>>> activations = {
      {"", {}},
      {"Relu", {}},
      {"LeakyRelu", {0.2f}},
      {"LeakyRelu", {}},
      {"Clip", {0, 6}},
      {"Clip", {}},
      {"Sigmoid", {}},
      {"Tanh", {}},
      {"HardSigmoid", {0.2f, 0.5f}},
      {"HardSigmoid", {}},
      {"HardSwish", {}},
  };
  // One spec per path: implicit GEMM, 1x1 GEMM, depthwise.
  const std::vector<ConvSpec> specs = {
      {"3x3", {1, 5, 9, 7}, {11, 5, 3, 3}, {{"pads", IntsAttr({1, 1, 1, 1})}}},
      {"pointwise", {1, 6, 5, 7}, {9, 6, 1, 1}, {}},
      {"depthwise", {1, 6, 8, 7}, {6, 1, 3, 3}, {{"group", IntAttr(6)}, {"pads", IntsAttr({1, 1, 1, 1})}}},
  };
  uint64_t seed = 2000;
  for (const ConvSpec& spec : specs) {
    for (const auto& [activation, params] : activations) {
      for (bool with_z : {false, true}) {
        OpenClCase c = MakeCase("FusedConv", spec, seed += 5, spec.w[0]);
        c.node.domain = "com.chipfit";
        if (!activation.empty()) c.node.attributes["activation"] = StringAttr(activation);
        if (!params.empty()) c.node.attributes["activation_params"] = FloatsAttr(params);
        if (with_z) {
          auto out = RunReference(c);
          ASSERT_EQ(out.size(), 1u);
          c.node.inputs.push_back("in3");
          // Inputs scaled to [-3, 3] so that Clip, HardSigmoid and HardSwish reach their kinks.
          c.inputs.push_back(RandomF32(out[0].shape(), seed + 4, -3.0f, 3.0f));
        }
        SCOPED_TRACE(spec.name + " " + activation + " params " + std::to_string(params.size()) +
                     (with_z ? " + Z" : ""));
        ExpectMatchesReference(opencl::CreateFusedConv, c, 1e-4, kNmse16);
      }
    }
  }
}

TEST(FusedConvOpenClTest, ResidualBroadcastsClampsAndScaleShift) {
  CHIPFIT_REQUIRE_OPENCL();
  const std::vector<ConvSpec> specs = {
      {"3x3", {2, 4, 6, 5}, {8, 4, 3, 3}, {{"pads", IntsAttr({1, 1, 1, 1})}}},
      {"pointwise", {2, 4, 6, 5}, {8, 4, 1, 1}, {}},
      {"depthwise", {2, 8, 6, 5}, {8, 1, 3, 3}, {{"group", IntAttr(8)}, {"pads", IntsAttr({1, 1, 1, 1})}}},
  };
  // Output [2, 8, 6, 5]: Z broadcast along every subset of dims, and a scalar.
  const std::vector<Shape> z_shapes = {{2, 8, 6, 5}, {1, 8, 1, 1}, {8, 1, 1},    {1, 1, 6, 5},
                                       {5},          {6, 1},       {2, 1, 1, 5}, {}};
  const std::vector<std::map<std::string, Attribute>> clamps = {
      {{"clamp_min", FloatAttr(-0.5f)}},
      {{"clamp_max", FloatAttr(0.25f)}},
      {{"clamp_min", FloatAttr(0.0f)}, {"clamp_max", FloatAttr(6.0f)}, {"activation", StringAttr("LeakyRelu")}},
      // An absorbed scale and shift, last: after the activation and the clamp.
      {{"activation", StringAttr("HardSigmoid")}, {"post_scale", FloatAttr(-1.5f)}, {"post_shift", FloatAttr(1.0f)}},
      {{"clamp_max", FloatAttr(0.25f)}, {"post_scale", FloatAttr(2.0f)}, {"post_shift", FloatAttr(-0.5f)}},
  };
  uint64_t seed = 3000;
  for (const ConvSpec& spec : specs) {
    for (const Shape& z : z_shapes) {
      OpenClCase c = MakeCase("FusedConv", spec, seed += 5, 8);
      c.node.domain = "com.chipfit";
      c.node.inputs.push_back("in3");
      c.inputs.push_back(RandomF32(z, seed + 4, -2.0f, 2.0f));
      SCOPED_TRACE(spec.name + " Z " + ShapeToString(z));
      ExpectMatchesReference(opencl::CreateFusedConv, c, 1e-4, kNmse16);
    }
    for (const auto& attrs : clamps) {
      OpenClCase c = MakeCase("FusedConv", spec, seed += 5, 8);
      c.node.domain = "com.chipfit";
      for (const auto& [name, attr] : attrs) c.node.attributes[name] = attr;
      SCOPED_TRACE(spec.name + " clamp");
      ExpectMatchesReference(opencl::CreateFusedConv, c, 1e-4, kNmse16);
    }
  }
}

TEST(ConvTransposeOpenClTest, MatchesReference) {
  CHIPFIT_REQUIRE_OPENCL();
  const std::vector<ConvSpec> specs = {
      {"3x3", {1, 4, 5, 6}, {4, 7, 3, 3}, {}},
      {"stride 2 pads output_padding",
       {2, 5, 6, 5},
       {5, 3, 3, 4},
       {{"strides", IntsAttr({2, 2})}, {"pads", IntsAttr({1, 0, 1, 2})}, {"output_padding", IntsAttr({1, 1})}}},
      {"groups 2 dilation 2 no bias",
       {1, 6, 5, 5},
       {6, 2, 3, 3},
       {{"group", IntAttr(2)}, {"dilations", IntsAttr({2, 2})}, {"strides", IntsAttr({2, 1})}},
       false},
      {"depthwise-like groups", {1, 4, 7, 7}, {4, 1, 4, 4}, {{"group", IntAttr(4)}, {"strides", IntsAttr({2, 2})}}},
      {"output_shape",
       {1, 3, 5, 5},
       {3, 4, 3, 3},
       {{"strides", IntsAttr({2, 2})}, {"output_shape", IntsAttr({10, 11})}}},
      {"output_shape larger than produced",
       {1, 3, 4, 4},
       {3, 2, 3, 3},
       {{"strides", IntsAttr({2, 2})}, {"output_shape", IntsAttr({12, 12})}}},
      {"SAME_UPPER",
       {1, 3, 5, 6},
       {3, 4, 3, 4},
       {{"strides", IntsAttr({2, 2})}, {"auto_pad", StringAttr("SAME_UPPER")}}},
      {"SAME_LOWER",
       {1, 3, 5, 6},
       {3, 4, 3, 4},
       {{"strides", IntsAttr({2, 2})}, {"auto_pad", StringAttr("SAME_LOWER")}}},
      {"1-D", {2, 5, 17}, {5, 3, 4}, {{"strides", IntsAttr({3})}, {"pads", IntsAttr({1, 2})}}},
      {"large", {1, 32, 14, 14}, {32, 16, 4, 4}, {{"strides", IntsAttr({2, 2})}, {"pads", IntsAttr({1, 1, 1, 1})}}},
  };
  uint64_t seed = 4000;
  for (const ConvSpec& s : specs) {
    SCOPED_TRACE(s.name);
    const int64_t groups = s.attrs.contains("group") ? s.attrs.at("group").i : 1;
    ExpectMatchesReference(opencl::CreateConvTranspose, MakeCase("ConvTranspose", s, seed += 3, s.w[1] * groups), 1e-4,
                           kNmse16);
  }
}

void ExpectRefused(KernelFactory factory, const OpenClCase& c, const std::string& mentions) {
  auto got = RunOpenClKernel(factory, c);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnsupported) << got.status().ToString();
  EXPECT_NE(got.status().message().find(mentions), std::string::npos) << got.status().ToString();
}

TEST(ConvOpenClTest, RefusesWhatItCannotRun) {
  CHIPFIT_REQUIRE_OPENCL();
  // 3-D convolutions.
  const ConvSpec conv3d{"3-D", {1, 2, 4, 4, 4}, {3, 2, 3, 3, 3}, {}};
  ExpectRefused(opencl::CreateConv, MakeCase("Conv", conv3d, 1, 3), "3-D convolution");
  const ConvSpec deconv3d{"3-D", {1, 2, 4, 4, 4}, {2, 3, 3, 3, 3}, {}};
  ExpectRefused(opencl::CreateConvTranspose, MakeCase("ConvTranspose", deconv3d, 1, 3), "3-D convolution");
  // Non-f32 tensors (the reference runs f64 Conv).
  OpenClCase f64{.node = MakeNode("Conv", 2)};
  f64.inputs = {Tensor(DType::kF64, {1, 2, 5, 5}), Tensor(DType::kF64, {3, 2, 3, 3})};
  ExpectRefused(opencl::CreateConv, f64, "f64");
  // No device context, and shapes known only at run time.
  const Node node = MakeNode("Conv", 2);
  ValueInfo x{DType::kF32, {-1, 2, 5, 5}, nullptr}, w{DType::kF32, {3, 2, 3, 3}, nullptr};
  const std::vector<const ValueInfo*> inputs = {&x, &w};
  const std::vector<ValueInfo> outs = {{DType::kF32, {-1, 3, 3, 3}, nullptr}};
  auto no_device = opencl::CreateConv(KernelInit{node, inputs, 17, Precision::kFp32, nullptr, nullptr, &outs});
  ASSERT_FALSE(no_device.ok());
  EXPECT_EQ(no_device.status().code(), StatusCode::kUnsupported);
  auto context = TestContext(Precision::kFp32);
  ASSERT_TRUE(context.ok());
  auto dynamic = opencl::CreateConv(KernelInit{node, inputs, 17, Precision::kFp32, nullptr, context->get(), &outs});
  ASSERT_FALSE(dynamic.ok());
  EXPECT_EQ(dynamic.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(dynamic.status().message().find("only known at run time"), std::string::npos);
}

}  // namespace
}  // namespace chipfit::testing
