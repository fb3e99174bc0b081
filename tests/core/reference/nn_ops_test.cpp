// Reference kernel tests: Conv/ConvTranspose/FusedConv, MatMul/Gemm, pooling, normalization and Softmax ops,
// each against values computed by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/reference/reference_kernels.h"
#include "core/tensor/random.h"
#include "tests/core/reference/ref_test_util.h"

namespace chipfit::testing {
namespace {

void ExpectShape(const Tensor& t, const Shape& shape) { EXPECT_EQ(t.shape(), shape) << DescribeTensor(t); }

// ----------------------------------------------------------------------------------------------------------------
// Conv, ConvInteger

const Tensor kX3x3 = F32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});

TEST(ConvTest, ValidWindowSumsEachTwoByTwoBlock) {
  const Tensor y = RunOne(MakeNode("Conv", 2), {kX3x3, F32({1, 1, 2, 2}, {1, 1, 1, 1})});
  ExpectShape(y, {1, 1, 2, 2});
  ExpectNear(y, {8, 12, 20, 24});
}

TEST(ConvTest, PadsStridesAndBias) {
  const Node node = MakeNode("Conv", 3, 1, {{"pads", IntsAttr({1, 1, 1, 1})}, {"strides", IntsAttr({2, 2})}});
  const Tensor y = RunOne(node, {kX3x3, F32({1, 1, 3, 3}, std::vector<float>(9, 1.0f)), F32({1}, {1})});
  ExpectShape(y, {1, 1, 2, 2});
  ExpectNear(y, {9, 13, 21, 25});  // each window at -1 or +1 sees one 2x2 corner of X
}

TEST(ConvTest, DepthwiseGroupsUseTheirOwnChannel) {
  const Node node = MakeNode("Conv", 2, 1, {{"group", IntAttr(2)}});
  const Tensor y = RunOne(node, {F32({1, 2, 1, 3}, {1, 2, 3, 10, 20, 30}), F32({2, 1, 1, 2}, {1, 1, 1, -1})});
  ExpectShape(y, {1, 2, 1, 2});
  ExpectNear(y, {3, 5, -10, -10});
}

TEST(ConvTest, GroupedConvSumsOnlyItsGroupsChannels) {
  // 4 input channels, 2 groups, 2 output channels: out0 = ch0 + ch1, out1 = ch2 - ch3.
  const Node node = MakeNode("Conv", 2, 1, {{"group", IntAttr(2)}});
  const Tensor x = F32({1, 4, 1, 1}, {1, 2, 30, 4});
  const Tensor y = RunOne(node, {x, F32({2, 2, 1, 1}, {1, 1, 1, -1})});
  ExpectNear(y, {3, 26});
}

TEST(ConvTest, DilatedOneDimensional) {
  const Node node = MakeNode("Conv", 2, 1, {{"dilations", IntsAttr({2})}});
  const Tensor y = RunOne(node, {F32({1, 1, 5}, {1, 2, 3, 4, 5}), F32({1, 1, 2}, {1, 1})});
  ExpectShape(y, {1, 1, 3});
  ExpectNear(y, {4, 6, 8});
}

TEST(ConvTest, SameUpperPadsTheEndAndSameLowerTheStart) {
  const Tensor x = F32({1, 1, 4}, {1, 2, 3, 4});
  const Tensor w = F32({1, 1, 2}, {1, 10});
  ExpectNear(RunOne(MakeNode("Conv", 2, 1, {{"auto_pad", StringAttr("SAME_UPPER")}}), {x, w}), {21, 32, 43, 4});
  ExpectNear(RunOne(MakeNode("Conv", 2, 1, {{"auto_pad", StringAttr("SAME_LOWER")}}), {x, w}), {10, 21, 32, 43});
  // auto_pad VALID ignores explicit pads.
  const Node valid = MakeNode("Conv", 2, 1, {{"auto_pad", StringAttr("VALID")}, {"pads", IntsAttr({3, 3})}});
  ExpectNear(RunOne(valid, {x, w}), {21, 32, 43});
}

TEST(ConvTest, ThreeDimensionalAndKernelShapeAttribute) {
  const Node node = MakeNode("Conv", 2, 1, {{"kernel_shape", IntsAttr({2, 2, 2})}});
  const Tensor y = RunOne(
      node, {F32({1, 1, 2, 2, 3}, std::vector<float>(12, 1.0f)), F32({1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})});
  ExpectShape(y, {1, 1, 1, 1, 2});
  ExpectNear(y, {36, 36});
}

TEST(ConvTest, DoubleAndFloat16) {
  const Tensor xd = MakeTensor<double>({1, 1, 3}, {0.1, 0.2, 0.3});
  const Tensor yd = RunOne(MakeNode("Conv", 2), {xd, MakeTensor<double>({1, 1, 2}, {1e8, 1})});
  ASSERT_EQ(yd.dtype(), DType::kF64);
  EXPECT_DOUBLE_EQ(yd.data<double>()[0], 0.1 * 1e8 + 0.2);

  const Tensor xh = MakeTensor<Float16>({1, 1, 2}, {Float16(1.5f), Float16(2.0f)});
  const Tensor yh = RunOne(MakeNode("Conv", 2), {xh, MakeTensor<Float16>({1, 1, 2}, {Float16(2.0f), Float16(0.25f)})});
  ASSERT_EQ(yh.dtype(), DType::kF16);
  EXPECT_EQ(static_cast<float>(yh.data<Float16>()[0]), 3.5f);
}

TEST(ConvTest, BadShapesAndAttributesAreErrors) {
  const Tensor w = F32({1, 1, 2, 2}, {1, 1, 1, 1});
  ExpectError(MakeNode("Conv", 2, 1, {{"kernel_shape", IntsAttr({3, 3})}}), {kX3x3, w}, StatusCode::kInvalidArgument,
              "kernel_shape");
  ExpectError(MakeNode("Conv", 2), {kX3x3, F32({1, 2, 2, 2}, std::vector<float>(8, 1))}, StatusCode::kInvalidArgument,
              "channels");
  ExpectError(MakeNode("Conv", 2, 1, {{"strides", IntsAttr({0, 1})}}), {kX3x3, w}, StatusCode::kInvalidArgument,
              "strides");
  ExpectError(MakeNode("Conv", 2, 1, {{"auto_pad", StringAttr("SAME")}}), {kX3x3, w}, StatusCode::kInvalidArgument,
              "auto_pad");
  ExpectError(MakeNode("Conv", 2), {kX3x3, F32({1, 1, 4, 4}, std::vector<float>(16, 1))}, StatusCode::kInvalidArgument,
              "exceeds");
  ExpectError(MakeNode("Conv", 2), {MakeTensor<int32_t>({1, 1, 2}, {1, 2}), MakeTensor<int32_t>({1, 1, 1}, {1})},
              StatusCode::kUnsupported, "i32");
}

TEST(ConvIntegerTest, SubtractsZeroPoints) {
  const Tensor x = MakeTensor<uint8_t>({1, 1, 3}, {10, 11, 12});
  const Tensor w = MakeTensor<uint8_t>({2, 1, 2}, {1, 2, 3, 3});
  const Tensor x_zero = MakeTensor<uint8_t>({}, {10});
  const Tensor w_zero = MakeTensor<uint8_t>({2}, {0, 2});  // per output channel
  const Tensor y = RunOne(MakeNode("ConvInteger", 4), {x, w, x_zero, w_zero});
  ASSERT_EQ(y.dtype(), DType::kI32);
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{2, 5, 1, 3}));  // [0 1 2] * [1 2] and * [1 1]
}

// ----------------------------------------------------------------------------------------------------------------
// ConvTranspose

const Tensor kTx = F32({1, 1, 2}, {1, 2});
const Tensor kTw = F32({1, 1, 3}, {1, 1, 1});

TEST(ConvTransposeTest, ScattersEachInputThroughTheKernel) {
  const Tensor y = RunOne(MakeNode("ConvTranspose", 2), {F32({1, 1, 3}, {1, 2, 3}), F32({1, 1, 2}, {1, 1})});
  ExpectShape(y, {1, 1, 4});
  ExpectNear(y, {1, 3, 5, 3});
}

TEST(ConvTransposeTest, StridesPadsAndOutputPadding) {
  ExpectNear(RunOne(MakeNode("ConvTranspose", 2, 1, {{"strides", IntsAttr({2})}}), {kTx, kTw}), {1, 1, 3, 2, 2});
  const Node padded = MakeNode("ConvTranspose", 2, 1, {{"strides", IntsAttr({2})}, {"pads", IntsAttr({1, 1})}});
  ExpectNear(RunOne(padded, {kTx, kTw}), {1, 3, 2});
  const Node extra = MakeNode("ConvTranspose", 2, 1, {{"strides", IntsAttr({2})}, {"output_padding", IntsAttr({1})}});
  ExpectNear(RunOne(extra, {kTx, kTw}), {1, 1, 3, 2, 2, 0});
}

TEST(ConvTransposeTest, OutputShapeOverridesPads) {
  // A larger output_shape appends rows (as output_padding does); a smaller one pads, odd pad first.
  const Node larger = MakeNode(
      "ConvTranspose", 2, 1, {{"strides", IntsAttr({2})}, {"output_shape", IntsAttr({6})}, {"pads", IntsAttr({1, 1})}});
  ExpectNear(RunOne(larger, {kTx, kTw}), {1, 1, 3, 2, 2, 0});
  const Node smaller = MakeNode("ConvTranspose", 2, 1, {{"strides", IntsAttr({2})}, {"output_shape", IntsAttr({4})}});
  ExpectNear(RunOne(smaller, {kTx, kTw}), {1, 3, 2, 2});
}

TEST(ConvTransposeTest, AutoPadSameUpperAndLower) {
  const Node upper =
      MakeNode("ConvTranspose", 2, 1, {{"strides", IntsAttr({2})}, {"auto_pad", StringAttr("SAME_UPPER")}});
  const Tensor y = RunOne(upper, {kTx, kTw});
  ExpectShape(y, {1, 1, 4});  // input size x stride
  ExpectNear(y, {1, 1, 3, 2});
  const Node lower =
      MakeNode("ConvTranspose", 2, 1, {{"strides", IntsAttr({2})}, {"auto_pad", StringAttr("SAME_LOWER")}});
  ExpectNear(RunOne(lower, {kTx, kTw}), {1, 3, 2, 2});
}

TEST(ConvTransposeTest, GroupsWithBias) {
  const Node node = MakeNode("ConvTranspose", 3, 1, {{"group", IntAttr(2)}});
  const Tensor y = RunOne(node, {F32({1, 2, 2}, {1, 2, 3, 4}), F32({2, 1, 1}, {2, 3}), F32({2}, {0.5f, -1})});
  ExpectShape(y, {1, 2, 2});
  ExpectNear(y, {2.5f, 4.5f, 8, 11});
}

TEST(ConvTransposeTest, DilationsAndTwoDimensions) {
  const Node node = MakeNode("ConvTranspose", 2, 1, {{"dilations", IntsAttr({1, 2})}});
  const Tensor y = RunOne(node, {F32({1, 1, 1, 1}, {2}), F32({1, 1, 1, 2}, {1, 3})});
  ExpectShape(y, {1, 1, 1, 3});
  ExpectNear(y, {2, 0, 6});
}

TEST(ConvTransposeTest, ChannelMismatchIsAnError) {
  ExpectError(MakeNode("ConvTranspose", 2), {F32({1, 2, 2}, {1, 2, 3, 4}), kTw}, StatusCode::kInvalidArgument,
              "channels");
  ExpectError(MakeNode("ConvTranspose", 2, 1, {{"output_padding", IntsAttr({1, 1})}}), {kTx, kTw},
              StatusCode::kInvalidArgument, "output_padding");
}

// ----------------------------------------------------------------------------------------------------------------
// FusedConv (com.chipfit): activation(Conv(X, W, B) + Z) must equal the separate reference ops.

Node FusedConvNode(size_t inputs, const std::string& activation, const std::vector<float>& params) {
  Attrs attrs = {{"pads", IntsAttr({1, 1, 1, 1})}};
  if (!activation.empty()) attrs["activation"] = StringAttr(activation);
  if (!params.empty()) attrs["activation_params"] = FloatsAttr(params);
  Node node = MakeNode("FusedConv", inputs, 1, attrs);
  node.domain = "com.chipfit";
  return node;
}

// Conv, then Add(conv, z), then the activation op, each a separate reference node.
Tensor ComposedConv(const std::vector<Tensor>& conv_inputs, const Tensor* z, const std::string& activation,
                    const std::vector<float>& params) {
  Tensor y = RunOne(MakeNode("Conv", 3, 1, {{"pads", IntsAttr({1, 1, 1, 1})}}), conv_inputs);
  if (z != nullptr) y = RunOne(MakeNode("Add", 2), {y, *z});
  if (activation.empty()) return y;
  if (activation == "Clip") {
    return RunOne(MakeNode("Clip", 3), {y, F32({}, {params[0]}), F32({}, {params[1]})});
  }
  Attrs attrs;
  if (!params.empty()) attrs["alpha"] = FloatAttr(params[0]);
  if (params.size() > 1) attrs["beta"] = FloatAttr(params[1]);
  return RunOne(MakeNode(activation, 1, 1, attrs), {y});
}

TEST(FusedConvTest, EachActivationAndZBroadcastMatchTheSeparateOps) {
  // X 1x2x4x4 → conv output 1x3x5x5; weights scaled so outputs reach past ±3 (HardSwish's kinks).
  const Tensor x = SeededTensor(DType::kF32, {1, 2, 4, 4}, 1);
  Tensor w = SeededTensor(DType::kF32, {3, 2, 2, 2}, 2);
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] *= 3.0f;
  const Tensor b = SeededTensor(DType::kF32, {3}, 3);
  const std::vector<Shape> z_shapes = {{1, 3, 5, 5}, {3, 1, 1}, {5}, {}};
  const std::vector<std::pair<std::string, std::vector<float>>> activations = {{"", {}},
                                                                               {"Relu", {}},
                                                                               {"Clip", {-0.5f, 0.7f}},
                                                                               {"LeakyRelu", {0.2f}},
                                                                               {"HardSigmoid", {0.3f, 0.4f}},
                                                                               {"HardSwish", {}},
                                                                               {"Sigmoid", {}},
                                                                               {"Tanh", {}}};
  bool saw_negative = false, saw_large = false;
  for (const auto& [activation, params] : activations) {
    // Without Z (3 inputs), then with each Z shape.
    const Tensor fused = RunOne(FusedConvNode(3, activation, params), {x, w, b});
    ExpectShape(fused, {1, 3, 5, 5});
    ExpectNear(fused, Values<float>(ComposedConv({x, w, b}, nullptr, activation, params)));
    for (size_t k = 0; k < z_shapes.size(); ++k) {
      SCOPED_TRACE("activation '" + activation + "', Z " + ShapeToString(z_shapes[k]));
      const Tensor z = SeededTensor(DType::kF32, z_shapes[k], 10 + k);
      const Tensor y = RunOne(FusedConvNode(4, activation, params), {x, w, b, z});
      ExpectShape(y, {1, 3, 5, 5});
      const Tensor expected = ComposedConv({x, w, b}, &z, activation, params);
      ExpectNear(y, Values<float>(expected));
      if (activation.empty()) {
        for (float v : Values<float>(expected)) {
          saw_negative |= v < -3.0f;
          saw_large |= v > 3.0f;
        }
      }
    }
  }
  EXPECT_TRUE(saw_negative && saw_large);  // the activations were tested on both sides of their kinks
}

TEST(FusedConvTest, AbsentParamsMeanTheOnnxDefaults) {
  const Tensor x = SeededTensor(DType::kF32, {1, 1, 3, 3}, 4);
  const Tensor w = F32({1, 1, 2, 2}, {2, -3, 1, 4});
  const Tensor b = F32({1}, {-0.5f});
  ExpectNear(RunOne(FusedConvNode(3, "LeakyRelu", {}), {x, w, b}),
             Values<float>(ComposedConv({x, w, b}, nullptr, "LeakyRelu", {0.01f})));
  ExpectNear(RunOne(FusedConvNode(3, "HardSigmoid", {}), {x, w, b}),
             Values<float>(ComposedConv({x, w, b}, nullptr, "HardSigmoid", {0.2f, 0.5f})));
}

TEST(FusedConvTest, BiasMayBeOmittedBeforeZ) {
  const Tensor x = F32({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor w = F32({1, 1, 1, 1}, {2});
  Node node = FusedConvNode(4, "Relu", {});
  node.inputs[2] = "";
  node.attributes.erase("pads");
  ExpectNear(RunOne(node, {x, w, Tensor(), F32({1}, {-5})}), {0, 0, 1, 3});  // relu(2x − 5)
}

TEST(FusedConvTest, BadResidualShapesAndActivationsAreErrors) {
  const Tensor x = F32({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor w = F32({1, 1, 1, 1}, {1});
  const Tensor b = F32({1}, {0});
  Node plain = FusedConvNode(4, "", {});
  plain.attributes.erase("pads");
  // A Z that would grow the output (2x1x2x2 or rank 5) is not a residual of this conv.
  ExpectError(plain, {x, w, b, F32({2, 1, 2, 2}, std::vector<float>(8, 0))}, StatusCode::kInvalidArgument,
              "does not broadcast to the conv output shape");
  ExpectError(plain, {x, w, b, F32({1, 1, 1, 2, 2}, std::vector<float>(4, 0))}, StatusCode::kInvalidArgument,
              "does not broadcast");
  ExpectError(FusedConvNode(3, "Gelu", {}), {x, w, b}, StatusCode::kInvalidArgument, "activation 'Gelu'");
  ExpectError(FusedConvNode(3, "LeakyRelu", {0.1f, 0.2f}), {x, w, b}, StatusCode::kInvalidArgument,
              "takes 1 activation_params");
}

TEST(FusedConvTest, ShapeFunctionIsConvsAndAcceptsUnknownDims) {
  const OpEntry* op = FindReferenceOp("FusedConv", "com.chipfit");
  ASSERT_NE(op, nullptr);
  const ValueInfo x{DType::kF32, {-1, 2, -1, 6}, nullptr}, w{DType::kF32, {4, 2, 3, 3}, nullptr};
  const ValueInfo z{DType::kF32, {1, 4, 1, 1}, nullptr}, z_f16{DType::kF16, {4, 1, 1}, nullptr};
  const Node node = FusedConvNode(4, "Relu", {});
  InferContext ctx(node, 17, {&x, &w, nullptr, &z});
  ASSERT_TRUE(op->infer(ctx).ok());
  EXPECT_EQ(ctx.outputs()[0].shape, (Shape{-1, 4, -1, 6}));
  InferContext mixed(node, 17, {&x, &w, nullptr, &z_f16});
  EXPECT_EQ(op->infer(mixed).code(), StatusCode::kInvalidArgument);
}

// ----------------------------------------------------------------------------------------------------------------
// MatMul, MatMulInteger, Gemm

const Tensor kA = F32({2, 2}, {1, 2, 3, 4});
const Tensor kB = F32({2, 2}, {5, 6, 7, 8});

TEST(MatMulTest, TwoDimensional) { ExpectNear(RunOne(MakeNode("MatMul", 2), {kA, kB}), {19, 22, 43, 50}); }

TEST(MatMulTest, OneDimensionalOperandsArePromotedAndDropped) {
  const Tensor row = RunOne(MakeNode("MatMul", 2), {F32({2}, {1, 2}), kB});
  ExpectShape(row, {2});
  ExpectNear(row, {19, 22});
  const Tensor column = RunOne(MakeNode("MatMul", 2), {kA, F32({2}, {5, 7})});
  ExpectShape(column, {2});
  ExpectNear(column, {19, 43});
  const Tensor dot = RunOne(MakeNode("MatMul", 2), {F32({2}, {1, 2}), F32({2}, {3, 4})});
  ExpectShape(dot, {});
  ExpectNear(dot, {11});
}

TEST(MatMulTest, BatchDimsBroadcast) {
  const Tensor a = F32({2, 1, 1, 2}, {1, 2, 3, 4});
  const Tensor b = F32({3, 2, 1}, {1, 0, 0, 1, 1, 1});
  const Tensor y = RunOne(MakeNode("MatMul", 2), {a, b});
  ExpectShape(y, {2, 3, 1, 1});
  ExpectNear(y, {1, 2, 3, 3, 4, 7});
}

TEST(MatMulTest, IntegersAreExactAndWrap) {
  const Tensor y = RunOne(MakeNode("MatMul", 2), {MakeTensor<int64_t>({1, 2}, {int64_t{1} << 40, 3}),
                                                  MakeTensor<int64_t>({2, 1}, {(int64_t{1} << 20) + 1, 5})});
  ASSERT_EQ(y.dtype(), DType::kI64);
  EXPECT_EQ(Values<int64_t>(y), (std::vector<int64_t>{(int64_t{1} << 60) + (int64_t{1} << 40) + 15}));  // > 2^53
  const Tensor wrapped =
      RunOne(MakeNode("MatMul", 2), {MakeTensor<int32_t>({1, 1}, {65536}), MakeTensor<int32_t>({1, 1}, {65537})});
  EXPECT_EQ(Values<int32_t>(wrapped), (std::vector<int32_t>{65536}));  // 2^32 + 2^16 mod 2^32
  const Tensor unsigned_y =
      RunOne(MakeNode("MatMul", 2), {MakeTensor<uint32_t>({1, 2}, {3, 4}), MakeTensor<uint32_t>({2}, {5, 6})});
  EXPECT_EQ(Values<uint32_t>(unsigned_y), (std::vector<uint32_t>{39}));
}

TEST(MatMulTest, MismatchedInnerDimsAndScalarsAreErrors) {
  ExpectError(MakeNode("MatMul", 2), {kA, F32({3, 2}, {1, 2, 3, 4, 5, 6})}, StatusCode::kInvalidArgument, "inner dims");
  ExpectError(MakeNode("MatMul", 2), {F32({}, {1}), kB}, StatusCode::kInvalidArgument, "rank >= 1");
  ExpectError(MakeNode("MatMul", 2), {F32({2, 1, 2}, {1, 2, 3, 4}), F32({3, 2, 1}, {1, 2, 3, 4, 5, 6})},
              StatusCode::kInvalidArgument, "broadcast");
  ExpectError(MakeNode("MatMul", 2), {kA, MakeTensor<double>({2, 2}, {1, 2, 3, 4})}, StatusCode::kInvalidArgument,
              "dtypes");
}

TEST(MatMulIntegerTest, PerRowAndPerColumnZeroPoints) {
  const Tensor a = MakeTensor<uint8_t>({2, 2}, {1, 2, 3, 4});
  const Tensor b = MakeTensor<int8_t>({2, 2}, {1, 2, 3, 4});
  const Tensor y =
      RunOne(MakeNode("MatMulInteger", 4), {a, b, MakeTensor<uint8_t>({}, {1}), MakeTensor<int8_t>({2}, {1, 2})});
  ASSERT_EQ(y.dtype(), DType::kI32);
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{2, 2, 6, 6}));  // [[0 1] [2 3]] x [[0 0] [2 2]]
  const Tensor per_row =
      RunOne(MakeNode("MatMulInteger", 3), {a, b, MakeTensor<uint8_t>({2}, {1, 3})});  // A → [[0 1] [0 1]]
  EXPECT_EQ(Values<int32_t>(per_row), (std::vector<int32_t>{3, 4, 3, 4}));
  ExpectError(MakeNode("MatMulInteger", 3), {a, b, MakeTensor<uint8_t>({3}, {1, 2, 3})}, StatusCode::kInvalidArgument,
              "a_zero_point");
}

TEST(GemmTest, TransposesAlphaBetaAndBroadcastBias) {
  const Node node =
      MakeNode("Gemm", 3, 1,
               {{"transA", IntAttr(1)}, {"transB", IntAttr(1)}, {"alpha", FloatAttr(2)}, {"beta", FloatAttr(0.5f)}});
  const Tensor y = RunOne(node, {F32({2, 2}, {1, 3, 2, 4}), F32({2, 2}, {5, 7, 6, 8}), F32({2}, {1, 2})});
  ExpectShape(y, {2, 2});
  ExpectNear(y, {38.5f, 45, 86.5f, 101});
  const Tensor column_bias = RunOne(MakeNode("Gemm", 3), {kA, kB, F32({2, 1}, {1, -1})});
  ExpectNear(column_bias, {20, 23, 42, 49});
}

TEST(GemmTest, BiasIsOptionalAndNonSquareShapesWork) {
  const Tensor y = RunOne(MakeNode("Gemm", 3), {F32({1, 3}, {1, 2, 3}), F32({3, 2}, {1, 0, 0, 1, 1, 1}), Tensor()});
  ExpectShape(y, {1, 2});
  ExpectNear(y, {4, 5});
}

TEST(GemmTest, IntegerGemmAndItsLimits) {
  const Node node = MakeNode("Gemm", 3, 1, {{"alpha", FloatAttr(2)}, {"beta", FloatAttr(-1)}});
  const Tensor y = RunOne(
      node, {MakeTensor<int32_t>({1, 2}, {1, 2}), MakeTensor<int32_t>({2, 1}, {3, 4}), MakeTensor<int32_t>({}, {5})});
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{17}));
  ExpectError(MakeNode("Gemm", 2, 1, {{"alpha", FloatAttr(0.5f)}}),
              {MakeTensor<int32_t>({1, 1}, {1}), MakeTensor<int32_t>({1, 1}, {1})}, StatusCode::kUnsupported, "alpha");
}

TEST(GemmTest, BadShapesAreErrors) {
  ExpectError(MakeNode("Gemm", 3), {kA, kB, F32({3}, {1, 2, 3})}, StatusCode::kInvalidArgument, "broadcast");
  ExpectError(MakeNode("Gemm", 2), {F32({2}, {1, 2}), kB}, StatusCode::kInvalidArgument, "2-D");
  ExpectError(MakeNode("Gemm", 2, 1, {{"transA", IntAttr(1)}}), {F32({3, 2}, {1, 2, 3, 4, 5, 6}), kB},
              StatusCode::kInvalidArgument, "inner dims");
}

// ----------------------------------------------------------------------------------------------------------------
// Pooling

Node Pool(const std::string& op, Attrs attrs, size_t outputs = 1) { return MakeNode(op, 1, outputs, std::move(attrs)); }

TEST(MaxPoolTest, TwoByTwoStrideTwoWithIndices) {
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  const std::vector<Tensor> out = RunAll(
      Pool("MaxPool", {{"kernel_shape", IntsAttr({2, 2})}, {"strides", IntsAttr({2, 2})}}, 2), {F32({1, 1, 4, 4}, x)});
  ASSERT_EQ(out.size(), 2u);
  ExpectNear(out[0], {5, 7, 13, 15});
  EXPECT_EQ(Values<int64_t>(out[1]), (std::vector<int64_t>{5, 7, 13, 15}));
}

TEST(MaxPoolTest, IndicesIncludeThePlaneOffsetAndHonourStorageOrder) {
  const Tensor x = F32({2, 1, 2, 3}, {1, 6, 3, 4, 5, 2, 7, 1, 1, 1, 1, 9});
  const Attrs attrs = {{"kernel_shape", IntsAttr({2, 2})}};
  const std::vector<Tensor> row_major = RunAll(Pool("MaxPool", attrs, 2), {x});
  ExpectNear(row_major[0], {6, 6, 7, 9});
  EXPECT_EQ(Values<int64_t>(row_major[1]), (std::vector<int64_t>{1, 1, 6, 11}));
  Attrs column = attrs;
  column["storage_order"] = IntAttr(1);
  const std::vector<Tensor> column_major = RunAll(Pool("MaxPool", column, 2), {x});
  EXPECT_EQ(Values<int64_t>(column_major[1]), (std::vector<int64_t>{2, 2, 6, 11}));  // (h, w) → w * H + h
}

TEST(MaxPoolTest, CeilModeDropsAWindowThatWouldStartInTheRightPadding) {
  // Length 3, kernel 2, stride 2, pads 1: ceil((3 + 2 - 2) / 2) + 1 = 3 windows, but the third would
  // start at 4, past the input and its left padding, so only 2 remain (PyTorch agrees).
  const Tensor y = RunOne(Pool("MaxPool", {{"kernel_shape", IntsAttr({2})},
                                           {"strides", IntsAttr({2})},
                                           {"pads", IntsAttr({1, 1})},
                                           {"ceil_mode", IntAttr(1)}}),
                          {F32({1, 1, 3}, {1, 2, 3})});
  ExpectShape(y, {1, 1, 2});
  ExpectNear(y, {1, 3});
  const Tensor partial =
      RunOne(Pool("MaxPool", {{"kernel_shape", IntsAttr({3})}, {"strides", IntsAttr({2})}, {"ceil_mode", IntAttr(1)}}),
             {F32({1, 1, 4}, {1, 2, 3, 4})});
  ExpectNear(partial, {3, 4});  // the last window hangs over the end
}

TEST(MaxPoolTest, DilationsAndSamePadding) {
  const Tensor x = F32({1, 1, 5}, {1, 5, 2, 4, 3});
  ExpectNear(RunOne(Pool("MaxPool", {{"kernel_shape", IntsAttr({2})}, {"dilations", IntsAttr({2})}}), {x}), {2, 5, 3});
  const Tensor x4 = F32({1, 1, 4}, {1, 3, 2, 4});
  ExpectNear(RunOne(Pool("MaxPool", {{"kernel_shape", IntsAttr({2})}, {"auto_pad", StringAttr("SAME_UPPER")}}), {x4}),
             {3, 3, 4, 4});
  ExpectNear(RunOne(Pool("MaxPool", {{"kernel_shape", IntsAttr({2})}, {"auto_pad", StringAttr("SAME_LOWER")}}), {x4}),
             {1, 3, 3, 4});
}

TEST(MaxPoolTest, Int8AndUint8) {
  const Tensor y = RunOne(Pool("MaxPool", {{"kernel_shape", IntsAttr({2})}, {"strides", IntsAttr({2})}}),
                          {MakeTensor<int8_t>({1, 1, 4}, {-5, -3, -7, -128})});
  ASSERT_EQ(y.dtype(), DType::kI8);
  EXPECT_EQ(Values<int8_t>(y), (std::vector<int8_t>{-3, -7}));
  const Tensor u =
      RunOne(Pool("MaxPool", {{"kernel_shape", IntsAttr({2})}}), {MakeTensor<uint8_t>({1, 1, 3}, {200, 255, 1})});
  EXPECT_EQ(Values<uint8_t>(u), (std::vector<uint8_t>{255, 255}));
}

TEST(MaxPoolTest, BadAttributesAreErrors) {
  const Tensor x = F32({1, 1, 3}, {1, 2, 3});
  ExpectError(Pool("MaxPool", {}), {x}, StatusCode::kInvalidArgument, "kernel_shape");
  ExpectError(Pool("MaxPool", {{"kernel_shape", IntsAttr({4})}}), {x}, StatusCode::kInvalidArgument, "exceeds");
  ExpectError(Pool("MaxPool", {{"kernel_shape", IntsAttr({2})}, {"storage_order", IntAttr(2)}}), {x},
              StatusCode::kInvalidArgument, "storage_order");
  ExpectError(Pool("MaxPool", {{"kernel_shape", IntsAttr({2})}, {"pads", IntsAttr({1})}}), {x},
              StatusCode::kInvalidArgument, "pads");
  ExpectError(Pool("MaxPool", {{"kernel_shape", IntsAttr({2})}}), {F32({3}, {1, 2, 3})}, StatusCode::kInvalidArgument,
              "rank >= 3");
  ExpectError(Pool("AveragePool", {{"kernel_shape", IntsAttr({2})}}), {MakeTensor<int8_t>({1, 1, 2}, {1, 2})},
              StatusCode::kUnsupported, "i8");
}

TEST(AveragePoolTest, CountIncludePadAndCeilMode) {
  // Kernel 3, stride 2, pads 1, length 4 → windows at -1, 1, 3; the last covers [4, pad, beyond].
  const Tensor x = F32({1, 1, 4}, {1, 2, 3, 4});
  Attrs attrs = {{"kernel_shape", IntsAttr({3})},
                 {"strides", IntsAttr({2})},
                 {"pads", IntsAttr({1, 1})},
                 {"ceil_mode", IntAttr(1)}};
  ExpectNear(RunOne(Pool("AveragePool", attrs), {x}), {1.5f, 3, 4});
  attrs["count_include_pad"] = IntAttr(1);
  ExpectNear(RunOne(Pool("AveragePool", attrs), {x}), {1, 3, 2});  // padding counts, the overhang does not
}

TEST(AveragePoolTest, SameUpperTwoDimensional) {
  const Tensor y =
      RunOne(Pool("AveragePool", {{"kernel_shape", IntsAttr({2, 2})}, {"auto_pad", StringAttr("SAME_UPPER")}}),
             {F32({1, 1, 2, 2}, {1, 2, 3, 4})});
  ExpectShape(y, {1, 1, 2, 2});
  ExpectNear(y, {2.5f, 3, 3.5f, 4});
}

TEST(GlobalPoolTest, AverageMaxAndLp) {
  const Tensor x = F32({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -4});
  const Tensor avg = RunOne(MakeNode("GlobalAveragePool", 1), {x});
  ExpectShape(avg, {1, 2, 1, 1});
  ExpectNear(avg, {2.5f, -2.5f});
  ExpectNear(RunOne(MakeNode("GlobalMaxPool", 1), {x}), {4, -1});
  ExpectNear(RunOne(MakeNode("GlobalLpPool", 1, 1, {{"p", IntAttr(1)}}), {x}), {10, 10});
  const Tensor d = RunOne(MakeNode("GlobalAveragePool", 1), {MakeTensor<double>({1, 1, 3}, {1, 2, 4})});
  EXPECT_DOUBLE_EQ(d.data<double>()[0], 7.0 / 3.0);
}

TEST(LpPoolTest, EuclideanNormOfEachWindow) {
  const Tensor y = RunOne(Pool("LpPool", {{"kernel_shape", IntsAttr({2})}, {"strides", IntsAttr({2})}}),
                          {F32({1, 1, 4}, {3, -4, 0, 2})});
  ExpectNear(y, {5, 2});
}

// ----------------------------------------------------------------------------------------------------------------
// BatchNormalization, InstanceNormalization, LayerNormalization, GroupNormalization

TEST(BatchNormTest, PerChannelInference) {
  const Node node = MakeNode("BatchNormalization", 5, 1, {{"epsilon", FloatAttr(0)}});
  const Tensor y = RunOne(
      node, {F32({1, 2, 1, 2}, {1, 3, 2, 4}), F32({2}, {1, 2}), F32({2}, {0, 1}), F32({2}, {2, 3}), F32({2}, {1, 4})});
  ExpectNear(y, {-1, 1, 0, 2});
}

TEST(BatchNormTest, SpatialZeroBeforeOpset9IsPerActivation) {
  const Node node = MakeNode("BatchNormalization", 5, 1, {{"epsilon", FloatAttr(0)}, {"spatial", IntAttr(0)}});
  const Tensor ones = F32({1, 2}, {1, 1});
  const Tensor y =
      RunOne(node, {F32({2, 1, 2}, {1, 12, 3, 14}), ones, F32({1, 2}, {0, 0}), F32({1, 2}, {0, 10}), ones}, 7);
  ExpectNear(y, {1, 2, 3, 4});
  // From opset 9 the attribute is gone and parameters are per channel again.
  ExpectError(node, {F32({2, 1, 2}, {1, 12, 3, 14}), ones, ones, ones, ones}, StatusCode::kInvalidArgument,
              "one per channel", 9);
}

// Training mode from opset 14 is tested with the other training-time ops (selection_test.cpp); the
// older form, asking for training by listing the extra outputs, stays unsupported with the reason.
TEST(BatchNormTest, TrainingOutputsBeforeOpset14AreUnsupported) {
  const std::vector<Tensor> in = {F32({1, 1, 1}, {1}), F32({1}, {1}), F32({1}, {0}), F32({1}, {0}), F32({1}, {1})};
  ExpectError(MakeNode("BatchNormalization", 5, 5), in, StatusCode::kUnsupported, "before opset 14", 9);
}

TEST(InstanceNormTest, NormalizesEachChannelOfEachSample) {
  const Tensor y =
      RunOne(MakeNode("InstanceNormalization", 3), {F32({1, 2, 2}, {1, 3, 5, 5}), F32({2}, {2, 1}), F32({2}, {0, 5})});
  ExpectNear(y, {-2, 2, 5, 5}, 1e-4f);
}

TEST(LayerNormTest, LastAxisWithMeanAndInvStdDevOutputs) {
  const Node node = MakeNode("LayerNormalization", 3, 3, {{"epsilon", FloatAttr(0)}});
  const std::vector<Tensor> out = RunAll(node, {F32({2, 2}, {1, 3, 2, 6}), F32({2}, {1, 2}), F32({2}, {0, 1})});
  ASSERT_EQ(out.size(), 3u);
  ExpectNear(out[0], {-1, 3, -1, 3});
  ExpectShape(out[1], {2, 1});
  ExpectNear(out[1], {2, 4});
  ExpectNear(out[2], {1, 0.5f});
}

TEST(LayerNormTest, AxisZeroNormalizesEverythingAndBiasIsOptional) {
  const Node node = MakeNode("LayerNormalization", 2, 1, {{"axis", IntAttr(0)}, {"epsilon", FloatAttr(0)}});
  const float s = 1.0f / std::sqrt(3.5f);
  ExpectNear(RunOne(node, {F32({2, 2}, {1, 3, 2, 6}), F32({}, {2})}), {-4 * s, 0, -2 * s, 6 * s});
  ExpectError(MakeNode("LayerNormalization", 2, 1, {{"axis", IntAttr(2)}}), {F32({2, 2}, {1, 3, 2, 6}), F32({}, {2})},
              StatusCode::kInvalidArgument, "axis 2");
  ExpectError(MakeNode("LayerNormalization", 2), {F32({2, 2}, {1, 3, 2, 6}), F32({3}, {1, 1, 1})},
              StatusCode::kInvalidArgument, "broadcast");
}

TEST(GroupNormTest, ScalePerGroupInOpset18AndPerChannelInOpset21) {
  const Tensor x = F32({1, 4, 1}, {1, 3, 10, 14});
  const Node node = MakeNode("GroupNormalization", 3, 1, {{"num_groups", IntAttr(2)}, {"epsilon", FloatAttr(0)}});
  ExpectNear(RunOne(node, {x, F32({2}, {2, 3}), F32({2}, {0, 1})}, 18), {-2, 2, -2, 4});
  ExpectNear(RunOne(node, {x, F32({4}, {1, 2, 3, 4}), F32({4}, {0, 0, 0, 1})}, 21), {-1, 2, -3, 5});
  ExpectError(node, {x, F32({2}, {2, 3}), F32({2}, {0, 1})}, StatusCode::kInvalidArgument, "one per channel", 21);
  ExpectError(MakeNode("GroupNormalization", 3, 1, {{"num_groups", IntAttr(3)}}),
              {x, F32({3}, {1, 1, 1}), F32({3}, {0, 0, 0})}, StatusCode::kInvalidArgument, "num_groups", 18);
}

// ----------------------------------------------------------------------------------------------------------------
// LRN, MeanVarianceNormalization, LpNormalization

TEST(LrnTest, OddAndEvenWindowSizes) {
  const Tensor x = F32({1, 3, 1, 1}, {1, 2, 3});
  const Attrs attrs = {{"size", IntAttr(3)}, {"alpha", FloatAttr(3)}, {"beta", FloatAttr(1)}};
  ExpectNear(RunOne(MakeNode("LRN", 1, 1, attrs), {x}), {1.0f / 6, 2.0f / 15, 3.0f / 14});
  // Even size: the window reaches one channel further up than down ([c, c + 1] for size 2).
  const Attrs even = {{"size", IntAttr(2)}, {"alpha", FloatAttr(2)}, {"beta", FloatAttr(1)}};
  ExpectNear(RunOne(MakeNode("LRN", 1, 1, even), {x}), {1.0f / 6, 2.0f / 14, 3.0f / 10});
  ExpectError(MakeNode("LRN", 1), {x}, StatusCode::kInvalidArgument, "size");
}

TEST(MvnTest, DefaultAxesAndExplicitAxes) {
  const Tensor x = F32({1, 2, 1, 2}, {1, 3, 5, 5});
  ExpectNear(RunOne(MakeNode("MeanVarianceNormalization", 1), {x}), {-1, 1, 0, 0});
  const Tensor y = RunOne(MakeNode("MeanVarianceNormalization", 1, 1, {{"axes", IntsAttr({1})}}), {x});
  ExpectNear(y, {-1, -1, 1, 1});  // pairs (1, 5) and (3, 5) across channels
  ExpectError(MakeNode("MeanVarianceNormalization", 1, 1, {{"axes", IntsAttr({4})}}), {x}, StatusCode::kInvalidArgument,
              "axis 4");
}

TEST(LpNormalizationTest, L1AndL2AlongAnAxis) {
  const Tensor x = F32({2, 2}, {3, 4, 0, 0});
  ExpectNear(RunOne(MakeNode("LpNormalization", 1), {x}), {0.6f, 0.8f, 0, 0});
  ExpectNear(RunOne(MakeNode("LpNormalization", 1, 1, {{"p", IntAttr(1)}, {"axis", IntAttr(0)}}), {x}), {1, 1, 0, 0});
  ExpectError(MakeNode("LpNormalization", 1, 1, {{"p", IntAttr(3)}}), {x}, StatusCode::kInvalidArgument, "p 3");
}

// ----------------------------------------------------------------------------------------------------------------
// Softmax, LogSoftmax, Hardmax

TEST(SoftmaxTest, LastAxisByDefaultFromOpset13) {
  const Tensor y = RunOne(MakeNode("Softmax", 1), {F32({2, 2}, {0, std::log(3.0f), 1, 1})}, 13);
  ExpectNear(y, {0.25f, 0.75f, 0.5f, 0.5f});
}

TEST(SoftmaxTest, BeforeOpset13TheInputIsFlattenedAtAxis) {
  const Tensor x = F32({1, 2, 2}, {0, 0, 0, std::log(5.0f)});
  ExpectNear(RunOne(MakeNode("Softmax", 1), {x}, 11), {0.125f, 0.125f, 0.125f, 0.625f});
  ExpectNear(RunOne(MakeNode("Softmax", 1), {x}, 13), {0.5f, 0.5f, 1.0f / 6, 5.0f / 6});
  // axis 0 at opset 13 normalises along the first dim only (here a single element).
  ExpectNear(RunOne(MakeNode("Softmax", 1, 1, {{"axis", IntAttr(0)}}), {x}, 13), {1, 1, 1, 1});
}

TEST(SoftmaxTest, MiddleAxisAndFloat16) {
  const Tensor x = MakeTensor<Float16>({1, 2, 2}, {Float16(0), Float16(1), Float16(0), Float16(1)});
  const Tensor y = RunOne(MakeNode("Softmax", 1, 1, {{"axis", IntAttr(1)}}), {x}, 13);
  ASSERT_EQ(y.dtype(), DType::kF16);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(static_cast<float>(y.data<Float16>()[i]), 0.5f);
}

TEST(SoftmaxTest, LogSoftmaxIsStableForLargeInputs) {
  const Tensor y = RunOne(MakeNode("LogSoftmax", 1), {F32({1, 3}, {1000, 1000, -1000})}, 13);
  ExpectNear(y, {-std::log(2.0f), -std::log(2.0f), -2000 - std::log(2.0f)});
  ExpectNear(RunOne(MakeNode("Softmax", 1), {F32({2}, {1000, 0})}, 13), {1, 0});
}

TEST(SoftmaxTest, HardmaxPicksTheFirstMaximum) {
  const Tensor x = F32({2, 3}, {1, 3, 3, 2, 1, 0});
  ExpectNear(RunOne(MakeNode("Hardmax", 1), {x}, 13), {0, 1, 0, 1, 0, 0});
  ExpectNear(RunOne(MakeNode("Hardmax", 1, 1, {{"axis", IntAttr(0)}}), {x}, 13), {0, 1, 1, 1, 0, 0});
  ExpectNear(RunOne(MakeNode("Hardmax", 1, 1, {{"axis", IntAttr(0)}}), {x}, 11), {0, 1, 0, 0, 0, 0});
}

TEST(SoftmaxTest, AxisOutOfRangeIsAnError) {
  ExpectError(MakeNode("Softmax", 1, 1, {{"axis", IntAttr(2)}}), {F32({2, 2}, {1, 2, 3, 4})},
              StatusCode::kInvalidArgument, "axis 2", 13);
  ExpectError(MakeNode("LogSoftmax", 1), {MakeTensor<int32_t>({2}, {1, 2})}, StatusCode::kUnsupported, "i32", 13);
}

// ----------------------------------------------------------------------------------------------------------------
// Shape functions before dims are bound (compile time): unknown (-1) dims stay unknown, the rest is computed.

Shape InferredShape(const Node& node, const std::vector<Shape>& shapes, size_t output = 0) {
  std::vector<ValueInfo> infos;
  for (const Shape& s : shapes) infos.push_back({DType::kF32, s, nullptr});
  std::vector<const ValueInfo*> ptrs;
  for (const ValueInfo& info : infos) ptrs.push_back(&info);
  const OpEntry* op = FindReferenceOp(node.op_type, "");
  if (op == nullptr) return {};
  InferContext ctx(node, 17, ptrs);
  const Status status = op->infer(ctx);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return ctx.outputs()[output].shape;
}

TEST(ShapeInferenceTest, UnknownDimsStayUnknown) {
  EXPECT_EQ(InferredShape(MakeNode("Conv", 2), {{-1, 1, 3, 3}, {4, 1, 2, 2}}), (Shape{-1, 4, 2, 2}));
  EXPECT_EQ(InferredShape(MakeNode("Conv", 2), {{1, 1, -1, 3}, {4, 1, 2, 2}}), (Shape{1, 4, -1, 2}));
  EXPECT_EQ(InferredShape(MakeNode("ConvTranspose", 2), {{1, 1, -1, 3}, {1, 2, 2, 2}}), (Shape{1, 2, -1, 4}));
  EXPECT_EQ(InferredShape(Pool("MaxPool", {{"kernel_shape", IntsAttr({2, 2})}}, 2), {{2, 3, -1, 4}}, 1),
            (Shape{2, 3, -1, 3}));
  EXPECT_EQ(InferredShape(MakeNode("GlobalAveragePool", 1), {{1, 2, -1, -1}}), (Shape{1, 2, 1, 1}));
  EXPECT_EQ(InferredShape(MakeNode("MatMul", 2), {{-1, 3, 4}, {4, 5}}), (Shape{-1, 3, 5}));
  EXPECT_EQ(InferredShape(MakeNode("MatMul", 2), {{-1, 4}, {-1, 4, 5}}), (Shape{-1, -1, 5}));
  EXPECT_EQ(InferredShape(MakeNode("LayerNormalization", 2, 2), {{-1, 7, 8}, {8}}, 1), (Shape{-1, 7, 1}));
}

}  // namespace
}  // namespace chipfit::testing
