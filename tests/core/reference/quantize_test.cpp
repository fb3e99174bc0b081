// Reference QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearConv, QLinearMatMul: each against
// hand-computed or formula results.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor/half.h"
#include "tests/core/reference/ref_test_util.h"

namespace chipfit::testing {
namespace {

Tensor U8(Shape shape, std::vector<uint8_t> values) { return MakeTensor<uint8_t>(std::move(shape), std::move(values)); }
Tensor I8(Shape shape, std::vector<int8_t> values) { return MakeTensor<int8_t>(std::move(shape), std::move(values)); }
Tensor ScalarF32(float v) { return F32({}, {v}); }

template <typename T>
void ExpectValues(const Tensor& t, const std::vector<T>& expected) {
  ASSERT_EQ(t.dtype(), DTypeOf<T>()) << DescribeTensor(t);
  EXPECT_EQ(Values<T>(t), expected);
}

// ----------------------------------------------------------------------------------------------------------------
// QuantizeLinear

TEST(QuantizeLinearTest, PerTensorUint8RoundsHalfToEvenAndSaturates) {
  const Node node = MakeNode("QuantizeLinear", 3);
  // x / 2 = 0, 0.5, 1.5, 2.5, -1.5, 300, -300: ties go to the even neighbour, then + 128 and clamp to [0, 255].
  const Tensor y = RunOne(node, {F32({7}, {0, 1, 3, 5, -3, 600, -600}), ScalarF32(2), U8({}, {128})}, 13);
  ExpectValues<uint8_t>(y, {128, 128, 130, 130, 126, 255, 0});
}

TEST(QuantizeLinearTest, Int8ZeroPointSaturatesToSignedRange) {
  const Node node = MakeNode("QuantizeLinear", 3);
  const Tensor y = RunOne(node, {F32({6}, {1, -1, 0.5f, -0.5f, 200, -200}), ScalarF32(1), I8({}, {0})}, 10);
  ExpectValues<int8_t>(y, {1, -1, 0, 0, 127, -128});
}

TEST(QuantizeLinearTest, OmittedZeroPointMeansUint8Zero) {
  const Tensor y = RunOne(MakeNode("QuantizeLinear", 2), {F32({3}, {-1, 2.4f, 2.6f}), ScalarF32(1)}, 13);
  ExpectValues<uint8_t>(y, {0, 2, 3});
}

TEST(QuantizeLinearTest, Int32InputIsDividedByTheScale) {
  const Tensor y = RunOne(MakeNode("QuantizeLinear", 3), {I32({3}, {10, 15, -25}), ScalarF32(10), I8({}, {1})}, 13);
  ExpectValues<int8_t>(y, {2, 3, -1});  // 1, 1.5 → 2, -2.5 → -2
}

TEST(QuantizeLinearTest, PerAxisUsesOneScaleAndZeroPointPerChannel) {
  const Node node = MakeNode("QuantizeLinear", 3);  // axis defaults to 1
  const Tensor y = RunOne(node, {F32({2, 3}, {1, 2, 4, 3, 6, 8}), F32({3}, {1, 2, 4}), U8({3}, {0, 10, 20})}, 13);
  ExpectValues<uint8_t>(y, {1, 11, 21, 3, 13, 22});
}

TEST(QuantizeLinearTest, NegativeAxisCountsFromTheBack) {
  const Node node = MakeNode("QuantizeLinear", 2, 1, {{"axis", IntAttr(-2)}});
  const Tensor y = RunOne(node, {F32({2, 3}, {5, 6, 7, 50, 60, 70}), F32({2}, {1, 10})}, 13);
  ExpectValues<uint8_t>(y, {5, 6, 7, 5, 6, 7});
}

TEST(QuantizeLinearTest, BlockedScalesCoverBlockSizeIndicesAlongTheAxis) {
  // output_dtype int8 (ONNX code 3) without a zero point; the last block of 5 holds one element.
  const Node node = MakeNode("QuantizeLinear", 2, 1,
                             {{"axis", IntAttr(1)}, {"block_size", IntAttr(2)}, {"output_dtype", IntAttr(3)}});
  const Tensor x = F32({2, 5}, {1, 1, 4, 4, -9, 10, 10, 40, 40, 90});
  const Tensor y = RunOne(node, {x, F32({2, 3}, {1, 2, 3, 10, 20, 30})}, 21);
  ExpectValues<int8_t>(y, {1, 1, 2, 2, -3, 1, 1, 2, 2, 3});
}

TEST(QuantizeLinearTest, Uint16OutputAtOpset21) {
  const Tensor zp = MakeTensor<uint16_t>({}, {1000});
  const Tensor y = RunOne(MakeNode("QuantizeLinear", 3), {F32({3}, {-2000, 0.5f, 70000}), ScalarF32(1), zp}, 21);
  ExpectValues<uint16_t>(y, {0, 1000, 65535});
}

TEST(QuantizeLinearTest, Float16ScaleDividesInHalfPrecision) {
  // The scale is 1/3 in half precision, 0.33325195. 1000 / it = 3000.73: in float that would round to
  // 3001, but rounded to half precision first (spacing 2 near 3000) the quotient is 3000.
  const Tensor scale = MakeTensor<Float16>({}, {Float16(1.0f / 3.0f)});
  const Tensor x = MakeTensor<Float16>({1}, {Float16(1000.0f)});
  const Tensor zp = MakeTensor<int16_t>({}, {0});
  const Tensor y = RunOne(MakeNode("QuantizeLinear", 3), {x, scale, zp}, 21);
  ExpectValues<int16_t>(y, {3000});
}

TEST(QuantizeLinearTest, SaturateIsIgnoredForIntegerOutputs) {
  const Node node = MakeNode("QuantizeLinear", 3, 1, {{"saturate", IntAttr(0)}});
  const Tensor y = RunOne(node, {F32({2}, {1000, -1000}), ScalarF32(1), I8({}, {0})}, 19);
  ExpectValues<int8_t>(y, {127, -128});
}

TEST(QuantizeLinearTest, Float8OutputIsRefusedNamingTheType) {
  const Node node = MakeNode("QuantizeLinear", 2, 1, {{"output_dtype", IntAttr(17)}});
  ExpectError(node, {F32({1}, {1}), ScalarF32(1)}, StatusCode::kUnsupported, "float8e4m3fn", 21);
}

TEST(QuantizeLinearTest, OutputDtypeMustAgreeWithZeroPoint) {
  const Node node = MakeNode("QuantizeLinear", 3, 1, {{"output_dtype", IntAttr(3)}});
  ExpectError(node, {F32({1}, {1}), ScalarF32(1), U8({}, {0})}, StatusCode::kInvalidArgument,
              "output_dtype i8 differs from y_zero_point's dtype u8", 21);
}

TEST(QuantizeLinearTest, PerAxisScaleOfTheWrongLengthIsAnError) {
  ExpectError(MakeNode("QuantizeLinear", 2), {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({2}, {1, 1})},
              StatusCode::kInvalidArgument, "y_scale 2 must be a scalar or hold one value per index of axis 1", 13);
}

TEST(QuantizeLinearTest, Opset10TakesOnlyAScalarScale) {
  ExpectError(MakeNode("QuantizeLinear", 2), {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({3}, {1, 1, 1})},
              StatusCode::kInvalidArgument, "must be a scalar at opset 10", 10);
}

TEST(QuantizeLinearTest, BlockedScaleOfTheWrongShapeIsAnError) {
  const Node node = MakeNode("QuantizeLinear", 2, 1, {{"block_size", IntAttr(2)}});
  ExpectError(node, {F32({1, 5}, {1, 2, 3, 4, 5}), F32({1, 2}, {1, 1})}, StatusCode::kInvalidArgument,
              "needs y_scale of shape 1x3", 21);
}

// ----------------------------------------------------------------------------------------------------------------
// DequantizeLinear

TEST(DequantizeLinearTest, PerTensorUint8) {
  const Tensor y =
      RunOne(MakeNode("DequantizeLinear", 3), {U8({3}, {0, 128, 255}), ScalarF32(0.5f), U8({}, {128})}, 13);
  ExpectNear(y, {-64, 0, 63.5f}, 0, 0);
}

TEST(DequantizeLinearTest, PerAxisInt8) {
  const Tensor x = I8({2, 2}, {-128, 127, 10, 20});
  const Tensor y = RunOne(MakeNode("DequantizeLinear", 3, 1, {{"axis", IntAttr(0)}}),
                          {x, F32({2}, {1, 0.5f}), I8({2}, {0, 10})}, 13);
  ExpectNear(y, {-128, 127, 0, 5}, 0, 0);
}

TEST(DequantizeLinearTest, BlockedAlongTheFirstAxis) {
  const Node node = MakeNode("DequantizeLinear", 3, 1, {{"axis", IntAttr(0)}, {"block_size", IntAttr(2)}});
  const Tensor x = U8({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor y = RunOne(node, {x, F32({2, 2}, {1, 10, 2, 20}), U8({2, 2}, {1, 0, 5, 6})}, 21);
  ExpectNear(y, {0, 20, 2, 40, 0, 0}, 0, 0);
}

TEST(DequantizeLinearTest, Int32HasNoZeroPoint) {
  const Tensor y = RunOne(MakeNode("DequantizeLinear", 2), {I32({2}, {-3, 1000}), ScalarF32(0.25f)}, 13);
  ExpectNear(y, {-0.75f, 250}, 0, 0);
  ExpectError(MakeNode("DequantizeLinear", 3), {I32({1}, {1}), ScalarF32(1), I32({}, {2})},
              StatusCode::kInvalidArgument, "int32 x has no zero point", 13);
}

TEST(DequantizeLinearTest, OutputTakesTheScalesFloat16Type) {
  const Tensor scale = MakeTensor<Float16>({}, {Float16(0.5f)});
  const Tensor y = RunOne(MakeNode("DequantizeLinear", 2), {I8({2}, {-3, 7}), scale}, 19);
  ASSERT_EQ(y.dtype(), DType::kF16);
  EXPECT_EQ(static_cast<float>(y.data<Float16>()[0]), -1.5f);
  EXPECT_EQ(static_cast<float>(y.data<Float16>()[1]), 3.5f);
}

TEST(DequantizeLinearTest, ZeroPointOfAnotherDtypeIsAnError) {
  ExpectError(MakeNode("DequantizeLinear", 3), {U8({1}, {1}), ScalarF32(1), I8({}, {0})}, StatusCode::kInvalidArgument,
              "x_zero_point has dtype i8 but x has u8", 13);
}

// ----------------------------------------------------------------------------------------------------------------
// DynamicQuantizeLinear

TEST(DynamicQuantizeLinearTest, ZeroPointTieRoundsToEven) {
  // Range [-2.5, 252.5]: scale 1, zero point 2.5 → 2 (half to even; half away from zero would give 3).
  const std::vector<Tensor> out =
      RunAll(MakeNode("DynamicQuantizeLinear", 1, 3), {F32({4}, {-2.5f, 252.5f, 0, 1.5f})}, 11);
  ASSERT_EQ(out.size(), 3u);
  ExpectValues<uint8_t>(out[0], {0, 254, 2, 4});
  ExpectNear(out[1], {1.0f}, 0, 0);
  ExpectValues<uint8_t>(out[2], {2});
}

TEST(DynamicQuantizeLinearTest, RangeIsWidenedToIncludeZero) {
  // min 25.5 would otherwise be the low end; with 0 included the scale is 127.5 / 255 = 0.5.
  const std::vector<Tensor> out = RunAll(MakeNode("DynamicQuantizeLinear", 1, 3), {F32({2}, {127.5f, 25.5f})}, 11);
  ASSERT_EQ(out.size(), 3u);
  ExpectValues<uint8_t>(out[0], {255, 51});
  ExpectNear(out[1], {0.5f}, 0, 0);
  ExpectValues<uint8_t>(out[2], {0});
}

TEST(DynamicQuantizeLinearTest, AllZeroInputQuantizesToZero) {
  const std::vector<Tensor> out = RunAll(MakeNode("DynamicQuantizeLinear", 1, 3), {F32({3}, {0, 0, 0})}, 11);
  ASSERT_EQ(out.size(), 3u);
  ExpectValues<uint8_t>(out[0], {0, 0, 0});
  ExpectValues<uint8_t>(out[2], {0});
  EXPECT_TRUE(std::isfinite(out[1].data<float>()[0]));
}

TEST(DynamicQuantizeLinearTest, NonFiniteInputIsAnError) {
  ExpectError(MakeNode("DynamicQuantizeLinear", 1, 3), {F32({2}, {1, std::numeric_limits<float>::infinity()})},
              StatusCode::kInvalidArgument, "flat index 1", 11);
}

// ----------------------------------------------------------------------------------------------------------------
// QLinearConv

TEST(QLinearConvTest, PerChannelWeightsBiasAndTiesToEven) {
  // x - 2 = [-2 -1 0; 1 2 3; 4 5 6]. Channel 0 sums each 2x2 window (+1), times 0.5 * 1 / 1:
  // 0.5, 2.5, 6.5, 8.5 → 0, 2, 6, 8 (ties to even) + 10. Channel 1 is 2 * top-left (w - 1), -4, times
  // 0.5 * 0.25: -1, -0.75, -0.25, 0 → -1, -1, 0, 0 + 10.
  const Tensor x = U8({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor w = I8({2, 1, 2, 2}, {1, 1, 1, 1, 3, 1, 1, 1});
  const Tensor y = RunOne(MakeNode("QLinearConv", 9),
                          {x, ScalarF32(0.5f), U8({}, {2}), w, F32({2}, {1, 0.25f}), I8({2}, {0, 1}), ScalarF32(1),
                           U8({}, {10}), I32({2}, {1, -4})},
                          10);
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2, 2}));
  ExpectValues<uint8_t>(y, {10, 12, 16, 18, 9, 9, 10, 10});
}

TEST(QLinearConvTest, PadsAndInt8Saturation) {
  // Every padded 3x3 window covers all four inputs: 10 / 0.05 = 200, beyond int8's 127.
  const Node node = MakeNode("QLinearConv", 8, 1, {{"pads", IntsAttr({1, 1, 1, 1})}});
  const Tensor w = I8({1, 1, 3, 3}, std::vector<int8_t>(9, 1));
  const Tensor y = RunOne(node,
                          {I8({1, 1, 2, 2}, {1, 2, 3, 4}), ScalarF32(1), I8({}, {0}), w, ScalarF32(1), I8({}, {0}),
                           ScalarF32(0.05f), I8({}, {0})},
                          10);
  ExpectValues<int8_t>(y, {127, 127, 127, 127});
}

TEST(QLinearConvTest, GroupsStridesAndDilations) {
  // Depthwise over two channels, stride 2 and dilation 2 on a 1x5 row: taps 0 and 2, then 2 and 4.
  const Node node =
      MakeNode("QLinearConv", 8, 1, {{"group", IntAttr(2)}, {"strides", IntsAttr({2})}, {"dilations", IntsAttr({2})}});
  const Tensor x = U8({1, 2, 5}, {1, 2, 3, 4, 5, 10, 20, 30, 40, 50});
  const Tensor w = U8({2, 1, 2}, {1, 1, 1, 2});
  const Tensor y =
      RunOne(node, {x, ScalarF32(1), U8({}, {0}), w, ScalarF32(1), U8({}, {0}), ScalarF32(1), U8({}, {0})}, 10);
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2}));
  ExpectValues<uint8_t>(y, {4, 8, 70, 130});
}

TEST(QLinearConvTest, MissingOutputZeroPointIsAnError) {
  const Tensor x = U8({1, 1, 1, 1}, {1});
  ExpectError(MakeNode("QLinearConv", 7), {x, ScalarF32(1), U8({}, {0}), x, ScalarF32(1), U8({}, {0}), ScalarF32(1)},
              StatusCode::kInvalidArgument, "y_zero_point is required", 10);
}

TEST(QLinearConvTest, WeightScalePerChannelMustMatchOutputChannels) {
  const Tensor x = U8({1, 1, 1, 1}, {1});
  ExpectError(MakeNode("QLinearConv", 8),
              {x, ScalarF32(1), U8({}, {0}), x, F32({3}, {1, 1, 1}), U8({}, {0}), ScalarF32(1), U8({}, {0})},
              StatusCode::kInvalidArgument, "w_scale 3 must be a scalar", 10);
}

// ----------------------------------------------------------------------------------------------------------------
// QLinearMatMul

TEST(QLinearMatMulTest, PerTensor2D) {
  // (a - 10) = [0 2; 4 6] times b = [1 2; 3 -4] = [6 -8; 22 -16], times 0.5 * 1 / 0.5, + 100.
  const Tensor y = RunOne(MakeNode("QLinearMatMul", 8),
                          {U8({2, 2}, {10, 12, 14, 16}), ScalarF32(0.5f), U8({}, {10}), I8({2, 2}, {1, 2, 3, -4}),
                           ScalarF32(1), I8({}, {0}), ScalarF32(0.5f), U8({}, {100})},
                          10);
  ExpectValues<uint8_t>(y, {106, 92, 122, 84});
}

TEST(QLinearMatMulTest, PerRowAndPerColumnScales) {
  // [6 -8; 22 -16] with a_scale per row [1, 0.5] and b_scale per column [1, 2].
  const Tensor y = RunOne(MakeNode("QLinearMatMul", 8),
                          {U8({2, 2}, {10, 12, 14, 16}), F32({2}, {1, 0.5f}), U8({2}, {10, 10}),
                           I8({2, 2}, {1, 2, 3, -4}), F32({2}, {1, 2}), I8({2}, {0, 0}), ScalarF32(1), I8({}, {0})},
                          10);
  ExpectValues<int8_t>(y, {6, -16, 11, -16});
}

TEST(QLinearMatMulTest, PerColumnZeroPointShiftsOnlyItsColumn) {
  const Tensor y = RunOne(MakeNode("QLinearMatMul", 8),
                          {U8({1, 2}, {1, 1}), ScalarF32(1), U8({}, {0}), U8({2, 2}, {5, 5, 5, 5}), ScalarF32(1),
                           U8({2}, {0, 3}), ScalarF32(1), U8({}, {0})},
                          10);
  ExpectValues<uint8_t>(y, {10, 4});
}

TEST(QLinearMatMulTest, BatchDimsBroadcast) {
  // a [2, 1, 2] against one b [1, 2, 2]: rows [1 1] and [2 0] times [1 2; 3 4].
  const Tensor y = RunOne(MakeNode("QLinearMatMul", 8),
                          {I8({2, 1, 2}, {1, 1, 2, 0}), ScalarF32(1), I8({}, {0}), I8({1, 2, 2}, {1, 2, 3, 4}),
                           ScalarF32(1), I8({}, {0}), ScalarF32(1), I8({}, {0})},
                          10);
  EXPECT_EQ(y.shape(), (Shape{2, 1, 2}));
  ExpectValues<int8_t>(y, {4, 6, 2, 4});
}

TEST(QLinearMatMulTest, OneDimensionalAIsARow) {
  const Tensor y = RunOne(MakeNode("QLinearMatMul", 8),
                          {U8({2}, {1, 2}), ScalarF32(1), U8({}, {0}), U8({2, 2}, {1, 2, 3, 4}), ScalarF32(1),
                           U8({}, {0}), ScalarF32(1), U8({}, {0})},
                          21);
  EXPECT_EQ(y.shape(), (Shape{2}));
  ExpectValues<uint8_t>(y, {7, 10});
}

TEST(QLinearMatMulTest, Float16ScalesAtOpset21) {
  const Tensor half = MakeTensor<Float16>({}, {Float16(0.5f)});
  const Tensor y =
      RunOne(MakeNode("QLinearMatMul", 8),
             {U8({1, 1}, {9}), half, U8({}, {0}), U8({1, 1}, {1}), half, U8({}, {0}), half, U8({}, {0})}, 21);
  ExpectValues<uint8_t>(y, {4});  // 9 * 0.25 / 0.5 = 4.5 → 4
  ExpectError(MakeNode("QLinearMatMul", 8),
              {U8({1, 1}, {9}), half, U8({}, {0}), U8({1, 1}, {1}), half, U8({}, {0}), half, U8({}, {0})},
              StatusCode::kUnsupported, "input 1 has dtype f16", 10);
}

TEST(QLinearMatMulTest, ScaleCountThatIsNeitherRowsNorTensorIsAnError) {
  ExpectError(MakeNode("QLinearMatMul", 8),
              {U8({2, 2}, {1, 2, 3, 4}), F32({3}, {1, 1, 1}), U8({}, {0}), U8({2, 2}, {1, 2, 3, 4}), ScalarF32(1),
               U8({}, {0}), ScalarF32(1), U8({}, {0})},
              StatusCode::kInvalidArgument, "a_scale 3 must be a scalar or 2 values", 10);
}

}  // namespace
}  // namespace chipfit::testing
