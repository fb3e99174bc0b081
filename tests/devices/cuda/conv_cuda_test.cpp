// Conv and FusedConv on CUDA: the plan (output geometry, pads and auto_pad, cuDNN's symmetric pads plus the
// explicit rest, groups, depthwise detection, which epilogues cuDNN fuses, types and math per precision,
// refusals) and the dlopen'ed cuDNN everywhere; results against the reference where a GPU is.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "devices/cuda/cudnn_api.h"
#include "devices/cuda/ops/cuda_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cuda/cuda_test_util.h"

namespace chipfit::testing {
namespace {

using cuda::ConvPath;
using cuda::ConvPlan;
using cuda::PlanConv;

Node ConvNode(std::map<std::string, Attribute> attrs = {}, const std::string& op = "Conv") {
  Node node = MakeNode(op, 3, 1, std::move(attrs));
  if (op == "FusedConv") node.domain = "com.chipfit";
  return node;
}

ConvPlan MustPlan(const Node& node, const Shape& x, const Shape& w, bool bias = false, const Shape* z = nullptr,
                  DType storage = DType::kF32, Precision precision = Precision::kFp32) {
  const Shape b{w[0]};
  auto plan = PlanConv(node, x, w, bias ? &b : nullptr, z, storage, precision);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return plan.ok() ? *plan : ConvPlan{};
}

void ExpectStatus(const Status& s, StatusCode code, const std::string& mentions) {
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(mentions), std::string::npos) << s.ToString();
}

// ---- Host-side: the plan.

TEST(ConvCudaPlanTest, OutputGeometryAndSymmetricPads) {
  const ConvPlan p = MustPlan(ConvNode({{"pads", IntsAttr({1, 2, 1, 2})}, {"strides", IntsAttr({2, 1})}}),
                              {2, 8, 11, 12}, {16, 8, 3, 5});
  EXPECT_EQ(p.spatial_rank, 2);
  EXPECT_EQ(p.n, 2);
  EXPECT_EQ(p.c, 8);
  EXPECT_EQ(p.m, 16);
  EXPECT_EQ(p.kh, 3);
  EXPECT_EQ(p.kw, 5);
  EXPECT_EQ(p.oh, 6);  // (11 + 2 - 3) / 2 + 1
  EXPECT_EQ(p.ow, 12);
  EXPECT_EQ(p.cudnn_ph, 1);
  EXPECT_EQ(p.cudnn_pw, 2);
  EXPECT_FALSE(p.ExplicitPad());
  EXPECT_EQ(p.path, ConvPath::kCudnn);
  EXPECT_FALSE(p.needs_epilogue);
  EXPECT_EQ(p.Describe(), "2-D 3x5 s2x1 g1 [2,8,11,12]->[2,16,6,12] f32 cudnn");
}

TEST(ConvCudaPlanTest, DilationsAndValid) {
  ConvPlan p = MustPlan(ConvNode({{"dilations", IntsAttr({2, 3})}}), {1, 4, 13, 11}, {6, 4, 3, 3});
  EXPECT_EQ(p.oh, 9);  // extent 5
  EXPECT_EQ(p.ow, 5);  // extent 7
  EXPECT_EQ(p.dh, 2);
  EXPECT_EQ(p.dw, 3);
  // VALID ignores explicit pads.
  p = MustPlan(
      ConvNode({{"auto_pad", StringAttr("VALID")}, {"pads", IntsAttr({1, 1, 1, 1})}, {"strides", IntsAttr({2, 2})}}),
      {1, 3, 8, 7}, {5, 3, 3, 3});
  EXPECT_EQ(p.oh, 3);
  EXPECT_EQ(p.ow, 3);
  EXPECT_EQ(p.pad_top + p.pad_left + p.pad_bottom + p.pad_right, 0);
}

TEST(ConvCudaPlanTest, AutoPadSameSplitsOddTotalsAndPadsTheRestExplicitly) {
  // 8 wide, kernel 3, stride 2: 4 outputs need a total pad of 1; SAME_UPPER puts it at the end.
  ConvPlan p = MustPlan(ConvNode({{"auto_pad", StringAttr("SAME_UPPER")}, {"strides", IntsAttr({2, 2})}}), {1, 3, 8, 8},
                        {5, 3, 3, 3});
  EXPECT_EQ(p.oh, 4);
  EXPECT_EQ(p.ow, 4);
  EXPECT_EQ(p.pad_top, 0);
  EXPECT_EQ(p.pad_bottom, 1);
  EXPECT_EQ(p.cudnn_ph, 0);
  EXPECT_EQ(p.extra_top, 0);
  EXPECT_EQ(p.extra_bottom, 1);
  EXPECT_EQ(p.extra_right, 1);
  EXPECT_TRUE(p.ExplicitPad());
  EXPECT_EQ(p.PaddedH(), 9);
  EXPECT_EQ(p.PaddedW(), 9);
  // SAME_LOWER: at the beginning.
  p = MustPlan(ConvNode({{"auto_pad", StringAttr("SAME_LOWER")}, {"strides", IntsAttr({2, 2})}}), {1, 3, 8, 8},
               {5, 3, 3, 3});
  EXPECT_EQ(p.pad_top, 1);
  EXPECT_EQ(p.pad_bottom, 0);
  EXPECT_EQ(p.extra_top, 1);
  EXPECT_EQ(p.extra_left, 1);
  EXPECT_EQ(p.extra_bottom, 0);
  // An even total (kernel 4, stride 1: 3) splits 1 + 2 (UPPER) and 2 + 1 (LOWER); kernel 3: 1 + 1, symmetric.
  p = MustPlan(ConvNode({{"auto_pad", StringAttr("SAME_UPPER")}}), {1, 3, 8, 8}, {5, 3, 3, 3});
  EXPECT_EQ(p.cudnn_ph, 1);
  EXPECT_FALSE(p.ExplicitPad());
  p = MustPlan(ConvNode({{"auto_pad", StringAttr("SAME_UPPER")}}), {1, 3, 8, 8}, {5, 3, 4, 4});
  EXPECT_EQ(p.oh, 8);
  EXPECT_EQ(p.cudnn_ph, 1);
  EXPECT_EQ(p.extra_bottom, 1);
  EXPECT_EQ(p.extra_top, 0);
  // Explicit asymmetric pads: the common part to cuDNN.
  p = MustPlan(ConvNode({{"pads", IntsAttr({1, 0, 3, 2})}}), {1, 5, 12, 10}, {7, 5, 3, 2});
  EXPECT_EQ(p.cudnn_ph, 1);
  EXPECT_EQ(p.cudnn_pw, 0);
  EXPECT_EQ(p.extra_top, 0);
  EXPECT_EQ(p.extra_bottom, 2);
  EXPECT_EQ(p.extra_left, 0);
  EXPECT_EQ(p.extra_right, 2);
  EXPECT_EQ(p.oh, 14);
  EXPECT_EQ(p.ow, 11);
}

TEST(ConvCudaPlanTest, OneDimensionalIsHeightOne) {
  const ConvPlan p =
      MustPlan(ConvNode({{"pads", IntsAttr({2, 2})}, {"strides", IntsAttr({2})}}), {2, 4, 20}, {6, 4, 5});
  EXPECT_EQ(p.spatial_rank, 1);
  EXPECT_EQ(p.ih, 1);
  EXPECT_EQ(p.kh, 1);
  EXPECT_EQ(p.oh, 1);
  EXPECT_EQ(p.sh, 1);
  EXPECT_EQ(p.cudnn_ph, 0);
  EXPECT_EQ(p.iw, 20);
  EXPECT_EQ(p.ow, 10);
  EXPECT_EQ(p.cudnn_pw, 2);
}

TEST(ConvCudaPlanTest, GroupsAndDepthwiseDetection) {
  ConvPlan p = MustPlan(ConvNode({{"group", IntAttr(2)}}), {1, 8, 6, 6}, {6, 4, 3, 3});
  EXPECT_EQ(p.group, 2);
  EXPECT_EQ(p.path, ConvPath::kCudnn);
  // One channel per group in and out: depthwise, chipfit's kernel.
  p = MustPlan(ConvNode({{"group", IntAttr(8)}}), {1, 8, 6, 6}, {8, 1, 3, 3}, true);
  EXPECT_EQ(p.path, ConvPath::kDepthwise);
  p = MustPlan(ConvNode({{"group", IntAttr(6)}}), {1, 6, 20}, {6, 1, 5});
  EXPECT_EQ(p.path, ConvPath::kDepthwise);
  // A depthwise multiplier of 2 and groups of two channels stay on cuDNN.
  p = MustPlan(ConvNode({{"group", IntAttr(4)}}), {1, 4, 7, 7}, {8, 1, 3, 3});
  EXPECT_EQ(p.path, ConvPath::kCudnn);
  p = MustPlan(ConvNode({{"group", IntAttr(4)}}), {1, 8, 7, 7}, {8, 2, 3, 3});
  EXPECT_EQ(p.path, ConvPath::kCudnn);
  EXPECT_TRUE(cuda::IsDepthwise(32, 32, 32));
  EXPECT_FALSE(cuda::IsDepthwise(1, 1, 1));
  EXPECT_FALSE(cuda::IsDepthwise(32, 64, 32));
}

TEST(ConvCudaPlanTest, WhatCudnnFuses) {
  const Shape x{1, 8, 6, 6}, w{16, 8, 3, 3};
  const Node relu = ConvNode({{"activation", StringAttr("Relu")}}, "FusedConv");
  // Bias + Relu, bias alone (identity), and a Z of the output's shape: cuDNN's fused call.
  ConvPlan p = MustPlan(relu, x, w, true);
  EXPECT_EQ(p.path, ConvPath::kCudnnFused);
  EXPECT_EQ(p.fused_activation, CUDNN_ACTIVATION_RELU);
  p = MustPlan(ConvNode(), x, w, true);
  EXPECT_EQ(p.path, ConvPath::kCudnnFused);
  EXPECT_EQ(p.fused_activation, CUDNN_ACTIVATION_IDENTITY);
  const Shape full{1, 16, 4, 4};
  p = MustPlan(relu, x, w, true, &full);
  EXPECT_EQ(p.path, ConvPath::kCudnnFused);
  EXPECT_TRUE(p.has_z);
  EXPECT_TRUE(p.z_walk.full);
  // No bias: the plain convolution, and the epilogue kernel for the Relu.
  p = MustPlan(ConvNode(), x, w);
  EXPECT_EQ(p.path, ConvPath::kCudnn);
  EXPECT_FALSE(p.needs_epilogue);
  p = MustPlan(relu, x, w);
  EXPECT_EQ(p.path, ConvPath::kCudnn);
  EXPECT_TRUE(p.needs_epilogue);
  // Activations cuDNN's fused call does not take.
  for (const char* act : {"Clip", "LeakyRelu", "Sigmoid", "HardSwish", "HardSigmoid", "Tanh"}) {
    p = MustPlan(ConvNode({{"activation", StringAttr(act)}}, "FusedConv"), x, w, true);
    EXPECT_EQ(p.path, ConvPath::kCudnn) << act;
    EXPECT_TRUE(p.needs_epilogue) << act;
  }
  // A broadcast Z, a clamp, a scale: the epilogue kernel.
  const Shape per_channel{1, 16, 1, 1};
  p = MustPlan(relu, x, w, true, &per_channel);
  EXPECT_EQ(p.path, ConvPath::kCudnn);
  EXPECT_FALSE(p.z_walk.full);
  EXPECT_EQ(p.z_walk.stride[0], 0u);
  EXPECT_EQ(p.z_walk.stride[1], 1u);
  EXPECT_EQ(p.z_walk.stride[2], 0u);
  EXPECT_EQ(p.z_walk.stride[3], 0u);
  p = MustPlan(ConvNode({{"activation", StringAttr("Relu")}, {"clamp_max", FloatAttr(6.0f)}}, "FusedConv"), x, w, true);
  EXPECT_EQ(p.path, ConvPath::kCudnn);
  p = MustPlan(ConvNode({{"post_scale", FloatAttr(0.5f)}}, "FusedConv"), x, w, true);
  EXPECT_EQ(p.path, ConvPath::kCudnn);
  // bf16 storage goes the unfused way.
  p = MustPlan(relu, x, w, true, nullptr, DType::kBF16, Precision::kBf16);
  EXPECT_EQ(p.path, ConvPath::kCudnn);
  EXPECT_TRUE(p.needs_epilogue);
}

TEST(ConvCudaPlanTest, ResidualStridesOfEveryBroadcast) {
  const Shape x{2, 4, 6, 5}, w{8, 4, 1, 1};
  const Node node = ConvNode({{"activation", StringAttr("Sigmoid")}}, "FusedConv");
  const std::vector<std::pair<Shape, std::array<uint32_t, 4>>> cases = {
      {{1, 1, 6, 5}, {0, 0, 5, 1}}, {{5}, {0, 0, 0, 1}},       {{6, 1}, {0, 0, 1, 0}},
      {{2, 1, 1, 5}, {5, 0, 0, 1}}, {{8, 1, 1}, {0, 1, 0, 0}}, {{}, {0, 0, 0, 0}},
  };
  for (const auto& [z, strides] : cases) {
    const ConvPlan p = MustPlan(node, x, w, false, &z);
    EXPECT_FALSE(p.z_walk.full) << ShapeToString(z);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(p.z_walk.stride[i], strides[i]) << ShapeToString(z) << " dim " << i;
  }
  // 1-D: [N, M, W] walks as [N, M, 1, W].
  const Shape z1{1, 8, 1};
  const ConvPlan p = MustPlan(node, {2, 4, 9}, {8, 4, 3}, false, &z1);
  EXPECT_EQ(p.z_walk.stride[1], 1u);
  EXPECT_EQ(p.z_walk.stride[2], 0u);
  EXPECT_EQ(p.z_walk.stride[3], 0u);
}

TEST(ConvCudaPlanTest, EpilogueAttributes) {
  auto e = cuda::ReadConvEpilogue(ConvNode({{"activation", StringAttr("LeakyRelu")}}, "FusedConv"));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->act, cuda::conv::Act::kLeakyRelu);
  EXPECT_FLOAT_EQ(e->a, 0.01f);
  e = cuda::ReadConvEpilogue(ConvNode({{"activation", StringAttr("HardSigmoid")}}, "FusedConv"));
  ASSERT_TRUE(e.ok());
  EXPECT_FLOAT_EQ(e->a, 0.2f);
  EXPECT_FLOAT_EQ(e->b, 0.5f);
  e = cuda::ReadConvEpilogue(ConvNode({{"activation", StringAttr("Clip")},
                                       {"activation_params", FloatsAttr({0, 6})},
                                       {"clamp_min", FloatAttr(-1.0f)},
                                       {"post_scale", FloatAttr(2.0f)}},
                                      "FusedConv"));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->act, cuda::conv::Act::kClip);
  EXPECT_FLOAT_EQ(e->a, 0.0f);
  EXPECT_FLOAT_EQ(e->b, 6.0f);
  EXPECT_TRUE(e->clamp);
  EXPECT_FLOAT_EQ(e->lo, -1.0f);
  EXPECT_GT(e->hi, 1e30f);
  EXPECT_TRUE(e->linear);
  EXPECT_FLOAT_EQ(e->scale, 2.0f);
  EXPECT_FLOAT_EQ(e->shift, 0.0f);
  // A plain Conv has no epilogue, whatever its attributes.
  e = cuda::ReadConvEpilogue(ConvNode({{"activation", StringAttr("Relu")}}));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->act, cuda::conv::Act::kNone);
}

TEST(ConvCudaPlanTest, TypesAndMathPerPrecision) {
  const Shape x{1, 8, 6, 6}, w{16, 8, 3, 3};
  ConvPlan p = MustPlan(ConvNode(), x, w, false, nullptr, DType::kF32, Precision::kFp32);
  EXPECT_EQ(p.data_type, CUDNN_DATA_FLOAT);
  EXPECT_EQ(p.compute_type, CUDNN_DATA_FLOAT);
  EXPECT_EQ(p.math, CUDNN_FMA_MATH);  // no TF32
  p = MustPlan(ConvNode(), x, w, false, nullptr, DType::kF32, Precision::kTf32);
  EXPECT_EQ(p.math, CUDNN_DEFAULT_MATH);
  p = MustPlan(ConvNode(), x, w, false, nullptr, DType::kF16, Precision::kFp16);
  EXPECT_EQ(p.data_type, CUDNN_DATA_HALF);
  EXPECT_EQ(p.compute_type, CUDNN_DATA_FLOAT);
  EXPECT_EQ(p.math, CUDNN_TENSOR_OP_MATH);
  EXPECT_EQ(p.store, cuda::conv::Store::kF16);
  p = MustPlan(ConvNode(), x, w, false, nullptr, DType::kBF16, Precision::kBf16);
  EXPECT_EQ(p.data_type, CUDNN_DATA_BFLOAT16);
  EXPECT_EQ(p.math, CUDNN_TENSOR_OP_MATH);
  EXPECT_EQ(p.store, cuda::conv::Store::kBF16);
}

TEST(ConvCudaPlanTest, RefusalsSayWhy) {
  const Shape x{1, 8, 6, 6}, w{16, 8, 3, 3};
  ExpectStatus(PlanConv(ConvNode(), x, w, nullptr, nullptr, DType::kF32, Precision::kInt8).status(),
               StatusCode::kUnsupported, "quantised weights and per-channel scales");
  ExpectStatus(
      PlanConv(ConvNode(), {1, 2, 4, 4, 4}, {3, 2, 3, 3, 3}, nullptr, nullptr, DType::kF32, Precision::kFp32).status(),
      StatusCode::kUnsupported, "3-D convolution");
  ExpectStatus(PlanConv(ConvNode(), x, w, nullptr, nullptr, DType::kI32, Precision::kFp32).status(),
               StatusCode::kUnsupported, "i32");
  ExpectStatus(
      PlanConv(ConvNode({{"group", IntAttr(3)}}), x, w, nullptr, nullptr, DType::kF32, Precision::kFp32).status(),
      StatusCode::kInvalidArgument, "group 3");
  const Shape bad_bias{8};
  ExpectStatus(PlanConv(ConvNode(), x, w, &bad_bias, nullptr, DType::kF32, Precision::kFp32).status(),
               StatusCode::kInvalidArgument, "bias");
  const Shape bad_z{1, 16, 3, 4};
  ExpectStatus(PlanConv(ConvNode({}, "FusedConv"), x, w, nullptr, &bad_z, DType::kF32, Precision::kFp32).status(),
               StatusCode::kInvalidArgument, "does not broadcast");
  ExpectStatus(PlanConv(ConvNode({{"activation", StringAttr("Gelu")}}, "FusedConv"), x, w, nullptr, nullptr,
                        DType::kF32, Precision::kFp32)
                   .status(),
               StatusCode::kUnsupported, "'Gelu'");
  ExpectStatus(PlanConv(ConvNode({{"activation", StringAttr("LeakyRelu")}, {"activation_params", FloatsAttr({1, 2})}},
                                 "FusedConv"),
                        x, w, nullptr, nullptr, DType::kF32, Precision::kFp32)
                   .status(),
               StatusCode::kInvalidArgument, "activation_params");
  ExpectStatus(
      PlanConv(ConvNode({{"kernel_shape", IntsAttr({5, 5})}}), x, w, nullptr, nullptr, DType::kF32, Precision::kFp32)
          .status(),
      StatusCode::kInvalidArgument, "kernel_shape");
}

// ---- Host-side: the library, its descriptors and its errors.

TEST(CudnnApiTest, LoadsWithoutAGpuAndDescribesEveryPlan) {
  auto loaded = cuda::LoadCudnn();
  if (!loaded.ok()) GTEST_SKIP() << loaded.status().ToString();
  const cuda::Cudnn* api = *loaded;
  EXPECT_EQ(api->GetVersion() / 10000, 9u);
  EXPECT_NE(api->ConvolutionBiasActivationForward, nullptr);
  // Descriptors are host objects; Make checks cuDNN's output dims against the plan's.
  struct Case {
    std::string name;
    Node node;
    Shape x, w;
    bool bias;
  };
  const std::vector<Case> cases = {
      {"3x3", ConvNode({{"pads", IntsAttr({1, 1, 1, 1})}}), {1, 8, 9, 7}, {16, 8, 3, 3}, false},
      {"fused relu", ConvNode({{"activation", StringAttr("Relu")}}, "FusedConv"), {2, 8, 9, 7}, {16, 8, 3, 3}, true},
      {"SAME_UPPER stride 2",
       ConvNode({{"auto_pad", StringAttr("SAME_UPPER")}, {"strides", IntsAttr({2, 2})}}),
       {1, 3, 10, 9},
       {5, 3, 4, 3},
       false},
      {"asymmetric", ConvNode({{"pads", IntsAttr({1, 0, 3, 2})}}), {1, 5, 12, 10}, {7, 5, 3, 2}, true},
      {"dilated groups",
       ConvNode({{"group", IntAttr(2)}, {"dilations", IntsAttr({2, 2})}}),
       {2, 6, 13, 11},
       {10, 3, 3, 3},
       false},
      {"1-D", ConvNode({{"pads", IntsAttr({1, 2})}, {"strides", IntsAttr({2})}}), {2, 5, 31}, {9, 5, 3}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    for (auto [storage, precision] : std::vector<std::pair<DType, Precision>>{
             {DType::kF32, Precision::kFp32}, {DType::kF16, Precision::kFp16}, {DType::kBF16, Precision::kBf16}}) {
      const ConvPlan plan = MustPlan(c.node, c.x, c.w, c.bias, nullptr, storage, precision);
      cuda::ConvDescriptors descs;
      const Status made = descs.Make(api, plan, "node");
      ASSERT_TRUE(made.ok()) << made.ToString();
      auto dims = descs.OutputDims("node");
      ASSERT_TRUE(dims.ok());
      EXPECT_EQ((*dims)[2], plan.oh);
      EXPECT_EQ((*dims)[3], plan.ow);
    }
  }
  auto again = cuda::LoadCudnn();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, api);
}

TEST(CudnnApiTest, ErrorsNameTheStatusAndTheCall) {
  EXPECT_EQ(cuda::CudnnStatusText(nullptr, CUDNN_STATUS_NOT_SUPPORTED), "CUDNN_STATUS_NOT_SUPPORTED (3000)");
  Status s = cuda::CudnnError(nullptr, CUDNN_STATUS_NOT_SUPPORTED_SHAPE, "node 'c' (Conv)", "cudnnConvolutionForward");
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(), "node 'c' (Conv): cudnnConvolutionForward: CUDNN_STATUS_NOT_SUPPORTED_SHAPE (3002)");
  EXPECT_EQ(cuda::CudnnError(nullptr, CUDNN_STATUS_NOT_INITIALIZED, "w", "cudnnCreate").code(),
            StatusCode::kUnsupported);
  EXPECT_EQ(cuda::CudnnError(nullptr, CUDNN_STATUS_EXECUTION_FAILED, "w", "c").code(), StatusCode::kInternal);
  EXPECT_EQ(cuda::CudnnError(nullptr, CUDNN_STATUS_BAD_PARAM, "w", "c").code(), StatusCode::kInternal);
  EXPECT_TRUE(cuda::CheckCudnn(nullptr, CUDNN_STATUS_SUCCESS, "w", "c").ok());
  auto loaded = cuda::LoadCudnn();
  if (!loaded.ok()) GTEST_SKIP() << loaded.status().ToString();
  const std::string text = cuda::CudnnStatusText(*loaded, CUDNN_STATUS_BAD_PARAM);
  EXPECT_NE(text.find("CUDNN_STATUS_BAD_PARAM"), std::string::npos) << text;
  EXPECT_NE(text.find("(2000)"), std::string::npos) << text;
}

// ---- On a GPU: against the reference.

// Each f16/bf16 rounding is relative 2^-11 / 2^-8; sums of products with random signs keep that size, so the
// NMSE is a few 1e-7 for fp16 (64x for bf16). A wrong element gives an NMSE near 1.
constexpr double kNmse16 = 1e-5;

struct ConvSpec {
  std::string name;
  Shape x, w;
  std::map<std::string, Attribute> attrs;
  bool bias = true;
};

DeviceCase MakeCase(const std::string& op, const ConvSpec& s, uint64_t seed, int64_t bias_size) {
  DeviceCase c{.node = MakeNode(op, s.bias ? 3 : 2, 1, s.attrs)};
  if (op == "FusedConv") c.node.domain = "com.chipfit";
  c.inputs = {RandomF32(s.x, seed), RandomF32(s.w, seed + 1)};
  if (s.bias) c.inputs.push_back(RandomF32({bias_size}, seed + 2));
  c.constant = {false, true, true};  // weights and bias, as the executor sees them
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
      {"depthwise 3x3 stride 2 no bias",
       {1, 16, 15, 14},
       {16, 1, 3, 3},
       {{"group", IntAttr(16)}, {"strides", IntsAttr({2, 2})}, {"pads", IntsAttr({0, 0, 1, 1})}},
       false},
      {"depthwise 5x5", {1, 8, 12, 11}, {8, 1, 5, 5}, {{"group", IntAttr(8)}, {"pads", IntsAttr({2, 2, 2, 2})}}},
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

TEST(ConvCudaTest, MatchesReferenceOnEveryPath) {
  CHIPFIT_REQUIRE_CUDA();
  uint64_t seed = 1000;
  for (const ConvSpec& s : ForwardSpecs()) {
    SCOPED_TRACE(s.name);
    ExpectCudaMatchesReference(cuda::CreateConv, MakeCase("Conv", s, seed += 3, s.w[0]), 1e-4, kNmse16);
  }
}

TEST(ConvCudaTest, Tf32RoundsOnlyTheInputs) {
  CHIPFIT_REQUIRE_CUDA();
  DeviceCase c = MakeCase("Conv", ForwardSpecs().back(), 77, 64);
  const std::vector<Tensor> want = RunReference(c);
  c.precision = Precision::kTf32;
  auto got = RunCudaKernel(cuda::CreateConv, c);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_LE(Nmse((*got)[0], want[0]), kNmse16);
}

TEST(FusedConvCudaTest, EveryActivationWithAndWithoutResidual) {
  CHIPFIT_REQUIRE_CUDA();
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
  // One spec per path: cuDNN (fused or not), 1x1, asymmetric pads (explicit padding), depthwise.
  const std::vector<ConvSpec> specs = {
      {"3x3", {1, 5, 9, 7}, {11, 5, 3, 3}, {{"pads", IntsAttr({1, 1, 1, 1})}}},
      {"pointwise", {1, 6, 5, 7}, {9, 6, 1, 1}, {}},
      {"SAME_UPPER stride 2",
       {1, 4, 10, 10},
       {8, 4, 3, 3},
       {{"auto_pad", StringAttr("SAME_UPPER")}, {"strides", IntsAttr({2, 2})}}},
      {"depthwise", {1, 6, 8, 7}, {6, 1, 3, 3}, {{"group", IntAttr(6)}, {"pads", IntsAttr({1, 1, 1, 1})}}},
  };
  uint64_t seed = 2000;
  for (const ConvSpec& spec : specs) {
    for (const auto& [activation, params] : activations) {
      for (bool with_z : {false, true}) {
        DeviceCase c = MakeCase("FusedConv", spec, seed += 5, spec.w[0]);
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
        ExpectCudaMatchesReference(cuda::CreateFusedConv, c, 1e-4, kNmse16);
      }
    }
  }
}

TEST(FusedConvCudaTest, ResidualBroadcastsClampsAndScaleShift) {
  CHIPFIT_REQUIRE_CUDA();
  const std::vector<ConvSpec> specs = {
      {"3x3", {2, 4, 6, 5}, {8, 4, 3, 3}, {{"pads", IntsAttr({1, 1, 1, 1})}}},
      {"pointwise no bias", {2, 4, 6, 5}, {8, 4, 1, 1}, {}, false},
      {"depthwise", {2, 8, 6, 5}, {8, 1, 3, 3}, {{"group", IntAttr(8)}, {"pads", IntsAttr({1, 1, 1, 1})}}},
  };
  // Output [2, 8, 6, 5]: Z broadcast along every subset of dims, and a scalar.
  const std::vector<Shape> z_shapes = {{2, 8, 6, 5}, {1, 8, 1, 1}, {8, 1, 1},    {1, 1, 6, 5},
                                       {5},          {6, 1},       {2, 1, 1, 5}, {}};
  const std::vector<std::map<std::string, Attribute>> clamps = {
      {{"clamp_min", FloatAttr(-0.5f)}},
      {{"clamp_max", FloatAttr(0.25f)}},
      {{"clamp_min", FloatAttr(0.0f)}, {"clamp_max", FloatAttr(6.0f)}, {"activation", StringAttr("LeakyRelu")}},
      {{"activation", StringAttr("HardSigmoid")}, {"post_scale", FloatAttr(-1.5f)}, {"post_shift", FloatAttr(1.0f)}},
      {{"clamp_max", FloatAttr(0.25f)}, {"post_scale", FloatAttr(2.0f)}, {"post_shift", FloatAttr(-0.5f)}},
  };
  uint64_t seed = 3000;
  for (const ConvSpec& spec : specs) {
    for (const Shape& z : z_shapes) {
      DeviceCase c = MakeCase("FusedConv", spec, seed += 5, 8);
      if (!spec.bias) c.node.inputs.push_back("");  // Z is input 3
      if (!spec.bias) c.inputs.push_back(Tensor());
      c.node.inputs.push_back("in3");
      c.inputs.push_back(RandomF32(z, seed + 4, -2.0f, 2.0f));
      SCOPED_TRACE(spec.name + " Z " + ShapeToString(z));
      ExpectCudaMatchesReference(cuda::CreateFusedConv, c, 1e-4, kNmse16);
    }
    for (const auto& attrs : clamps) {
      DeviceCase c = MakeCase("FusedConv", spec, seed += 5, 8);
      for (const auto& [name, attr] : attrs) c.node.attributes[name] = attr;
      SCOPED_TRACE(spec.name + " clamp");
      ExpectCudaMatchesReference(cuda::CreateFusedConv, c, 1e-4, kNmse16);
    }
  }
}

TEST(ConvCudaTest, RefusesWhatItCannotRun) {
  CHIPFIT_REQUIRE_CUDA();
  DeviceCase c = MakeCase("Conv", {"3-D", {1, 2, 4, 4, 4}, {3, 2, 3, 3, 3}, {}}, 5, 3);
  auto got = RunCudaKernel(cuda::CreateConv, c);
  ASSERT_FALSE(got.ok());
  ExpectStatus(got.status(), StatusCode::kUnsupported, "3-D");
  c = MakeCase("Conv", ForwardSpecs().front(), 6, 16);
  c.precision = Precision::kInt8;
  got = RunCudaKernel(cuda::CreateConv, c);
  ASSERT_FALSE(got.ok());
  ExpectStatus(got.status(), StatusCode::kUnsupported, "per-channel scales");
}

}  // namespace
}  // namespace chipfit::testing
