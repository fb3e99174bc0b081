// Reference kernel tests: unary math, activations, broadcasting binary and variadic ops, Where, Cast.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "tests/core/reference/ref_test_util.h"

namespace chipfit::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Status RunStatus(const Node& node, const std::vector<Tensor>& inputs, int64_t opset = 17) {
  return RunNodeOnReference(node, opset, inputs).status();
}

// The failure names the node and contains `text`.
void ExpectError(const Status& status, StatusCode code, const std::string& text) {
  EXPECT_EQ(status.code(), code) << status.ToString();
  EXPECT_NE(status.message().find("_under_test"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find(text), std::string::npos) << status.message();
}

// A 1-D overload beside the shared F32(shape, values), which it would otherwise hide.
using chipfit::testing::F32;
Tensor F32(std::vector<float> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return F32({n}, std::move(values));
}
template <typename T>
Tensor Vec(std::vector<T> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return MakeTensor<T>({n}, std::move(values));
}
Tensor Bools(Shape shape, std::vector<uint8_t> values) {
  Tensor t(DType::kBool, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) t.data<bool>()[i] = values[i] != 0;
  return t;
}
std::vector<uint8_t> BoolValues(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DType::kBool);
  std::vector<uint8_t> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.data<bool>()[i] ? 1 : 0);
  return out;
}

// ----------------------------------------------------------------------------------------------------------------
// Unary math and activations on float32, against values computed by hand (Python's math module).

struct UnaryCase {
  const char* op;
  std::vector<float> x;
  std::vector<float> y;
  std::map<std::string, Attribute> attributes = {};
  int64_t opset = 17;
};

const std::vector<float> kX = {-1.0f, 0.5f, 2.0f};

TEST(ElementwiseUnary, FloatOpsMatchHandComputedValues) {
  const std::vector<UnaryCase> cases = {
      {"Abs", {-1.5f, 0.0f, 2.0f}, {1.5f, 0.0f, 2.0f}},
      {"Neg", {-1.5f, 0.0f, 2.0f}, {1.5f, 0.0f, -2.0f}},
      {"Exp", kX, {0.3678794f, 1.648721f, 7.389056f}},
      {"Log", {0.5f, 1.0f, 10.0f}, {-0.6931472f, 0.0f, 2.302585f}},
      {"Sqrt", {0.0f, 2.25f, 9.0f}, {0.0f, 1.5f, 3.0f}},
      {"Reciprocal", {-4.0f, 0.5f, 8.0f}, {-0.25f, 2.0f, 0.125f}},
      {"Floor", {-1.5f, 0.5f, 2.0f}, {-2.0f, 0.0f, 2.0f}},
      {"Ceil", {-1.5f, 0.5f, 2.0f}, {-1.0f, 1.0f, 2.0f}},
      {"Sin", kX, {-0.841471f, 0.4794255f, 0.9092974f}},
      {"Cos", kX, {0.5403023f, 0.8775826f, -0.4161468f}},
      {"Tan", kX, {-1.557408f, 0.5463025f, -2.18504f}},
      {"Asin", {0.5f}, {0.5235988f}},
      {"Acos", {0.5f}, {1.047198f}},
      {"Atan", {2.0f}, {1.107149f}},
      {"Sinh", kX, {-1.175201f, 0.5210953f, 3.62686f}},
      {"Cosh", kX, {1.543081f, 1.127626f, 3.762196f}},
      {"Asinh", kX, {-0.8813736f, 0.4812118f, 1.443635f}},
      {"Acosh", {1.0f, 2.0f, 10.0f}, {0.0f, 1.316958f, 2.993223f}},
      {"Atanh", {-0.5f, 0.0f, 0.5f}, {-0.5493061f, 0.0f, 0.5493061f}},
      {"Tanh", kX, {-0.7615942f, 0.4621172f, 0.9640276f}},
      {"Erf", kX, {-0.8427008f, 0.5204999f, 0.9953223f}},
      {"Relu", kX, {0.0f, 0.5f, 2.0f}},
      {"LeakyRelu", kX, {-0.01f, 0.5f, 2.0f}},
      {"LeakyRelu", kX, {-0.5f, 0.5f, 2.0f}, {{"alpha", FloatAttr(0.5f)}}},
      {"Elu", kX, {-0.6321206f, 0.5f, 2.0f}},
      {"Elu", kX, {-1.2642412f, 0.5f, 2.0f}, {{"alpha", FloatAttr(2.0f)}}},
      {"Selu", kX, {-1.111331f, 0.5253505f, 2.101402f}},
      {"Celu", kX, {-0.7869387f, 0.5f, 2.0f}, {{"alpha", FloatAttr(2.0f)}}},
      {"ThresholdedRelu", {0.5f, 1.0f, 1.5f}, {0.0f, 0.0f, 1.5f}},
      {"ThresholdedRelu", {0.5f, 1.0f, 1.5f}, {0.5f, 1.0f, 1.5f}, {{"alpha", FloatAttr(0.25f)}}},
      {"Sigmoid", kX, {0.2689414f, 0.6224593f, 0.8807971f}},
      {"HardSigmoid", {-3.0f, 0.0f, 1.0f, 3.0f}, {0.0f, 0.5f, 0.7f, 1.0f}},
      {"HardSigmoid",
       {-3.0f, 0.0f, 1.0f},
       {0.0f, 0.25f, 0.75f},
       {{"alpha", FloatAttr(0.5f)}, {"beta", FloatAttr(0.25f)}}},
      {"HardSwish", {-4.0f, -1.0f, 1.0f, 4.0f}, {0.0f, -0.3333333f, 0.6666667f, 4.0f}},
      // Softplus must not overflow for large inputs: log(1 + e^100) is 100.
      {"Softplus", {-1.0f, 0.5f, 2.0f, 100.0f}, {0.3132617f, 0.974077f, 2.126928f, 100.0f}},
      {"Softsign", {-3.0f, 0.0f, 1.0f}, {-0.75f, 0.0f, 0.5f}},
      {"Mish", kX, {-0.3034015f, 0.3752452f, 1.943959f}, {}, 18},
      {"Gelu", kX, {-0.1586553f, 0.3457312f, 1.9545f}, {}, 20},
      {"Gelu", kX, {-0.158808f, 0.345714f, 1.954598f}, {{"approximate", StringAttr("tanh")}}, 20},
  };
  for (const UnaryCase& c : cases) {
    SCOPED_TRACE(c.op);
    const Tensor y = RunOne(MakeNode(c.op, 1, 1, c.attributes), {F32(c.x)}, c.opset);
    ExpectNear(y, c.y);
  }
}

TEST(ElementwiseUnary, RoundHalvesToEven) {
  ExpectNear(RunOne(MakeNode("Round", 1), {F32({0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4f, 2.6f})}),
             {0.0f, 2.0f, 2.0f, -0.0f, -2.0f, -2.0f, 2.0f, 3.0f});
}

TEST(ElementwiseUnary, NaNPropagatesThroughSignAndRelu) {
  const Tensor sign = RunOne(MakeNode("Sign", 1), {F32({-3.0f, 0.0f, 7.0f, kNaN})});
  EXPECT_EQ(Values<float>(sign)[0], -1.0f);
  EXPECT_EQ(Values<float>(sign)[1], 0.0f);
  EXPECT_EQ(Values<float>(sign)[2], 1.0f);
  EXPECT_TRUE(std::isnan(Values<float>(sign)[3]));
  EXPECT_TRUE(std::isnan(Values<float>(RunOne(MakeNode("Relu", 1), {F32({kNaN})}))[0]));
}

TEST(ElementwiseUnary, IntegerAbsNegSignReluWrapLikeTwosComplement) {
  EXPECT_EQ(Values<int8_t>(RunOne(MakeNode("Abs", 1), {Vec<int8_t>({-5, 0, 7, -128})})),
            (std::vector<int8_t>{5, 0, 7, -128}));
  EXPECT_EQ(Values<int8_t>(RunOne(MakeNode("Neg", 1), {Vec<int8_t>({-5, 0, 7, -128})})),
            (std::vector<int8_t>{5, 0, -7, -128}));
  const int64_t big = int64_t{1} << 60;
  EXPECT_EQ(Values<int64_t>(RunOne(MakeNode("Neg", 1), {Vec<int64_t>({big + 1})})), (std::vector<int64_t>{-big - 1}));
  EXPECT_EQ(Values<int32_t>(RunOne(MakeNode("Sign", 1), {Vec<int32_t>({-9, 0, 4})})), (std::vector<int32_t>{-1, 0, 1}));
  EXPECT_EQ(Values<uint8_t>(RunOne(MakeNode("Sign", 1), {Vec<uint8_t>({0, 200})})), (std::vector<uint8_t>{0, 1}));
  EXPECT_EQ(Values<uint16_t>(RunOne(MakeNode("Abs", 1), {Vec<uint16_t>({65535})})), (std::vector<uint16_t>{65535}));
  EXPECT_EQ(Values<int16_t>(RunOne(MakeNode("Relu", 1), {Vec<int16_t>({-3, 0, 3})}, 14)),
            (std::vector<int16_t>{0, 0, 3}));
}

TEST(ElementwiseUnary, DtypeOutsideTheOpsListIsRefused) {
  ExpectError(RunStatus(MakeNode("Exp", 1), {Vec<int32_t>({1})}), StatusCode::kUnsupported, "i32");
  ExpectError(RunStatus(MakeNode("Neg", 1), {Vec<uint8_t>({1})}), StatusCode::kUnsupported, "u8");
  ExpectError(RunStatus(MakeNode("Not", 1), {F32({1.0f})}), StatusCode::kUnsupported, "f32");
}

TEST(ElementwiseUnary, OpsNewerThanTheModelOpsetAreErrors) {
  ExpectError(RunStatus(MakeNode("Gelu", 1), {F32({1.0f})}, 17), StatusCode::kInvalidArgument, "opset 20");
  ExpectError(RunStatus(MakeNode("Mish", 1), {F32({1.0f})}, 17), StatusCode::kInvalidArgument, "opset 18");
  ExpectError(RunStatus(MakeNode("HardSwish", 1), {F32({1.0f})}, 13), StatusCode::kInvalidArgument, "opset 14");
}

TEST(ElementwiseUnary, BadAttributesNameTheirValue) {
  ExpectError(RunStatus(MakeNode("Gelu", 1, 1, {{"approximate", StringAttr("fast")}}), {F32({1.0f})}, 20),
              StatusCode::kInvalidArgument, "'fast'");
  ExpectError(RunStatus(MakeNode("Celu", 1, 1, {{"alpha", FloatAttr(0.0f)}}), {F32({1.0f})}),
              StatusCode::kInvalidArgument, "alpha");
}

TEST(ElementwiseUnary, IsNaNIsInfAndNotGiveBools) {
  const Tensor x = F32({1.0f, kNaN, kInf, -kInf});
  EXPECT_EQ(BoolValues(RunOne(MakeNode("IsNaN", 1), {x})), (std::vector<uint8_t>{0, 1, 0, 0}));
  EXPECT_EQ(BoolValues(RunOne(MakeNode("IsInf", 1), {x})), (std::vector<uint8_t>{0, 0, 1, 1}));
  EXPECT_EQ(BoolValues(RunOne(MakeNode("IsInf", 1, 1, {{"detect_positive", IntAttr(0)}}), {x})),
            (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(BoolValues(RunOne(MakeNode("IsInf", 1, 1, {{"detect_negative", IntAttr(0)}}), {x})),
            (std::vector<uint8_t>{0, 0, 1, 0}));
  EXPECT_EQ(BoolValues(RunOne(MakeNode("Not", 1), {Bools({2, 2}, {1, 0, 0, 1})})), (std::vector<uint8_t>{0, 1, 1, 0}));
}

TEST(ElementwiseUnary, HalfTypesRoundTheDoubleResultOnce) {
  const Tensor h = RunOne(MakeNode("Sqrt", 1), {MakeTensor<Float16>({2}, {Float16(4.0f), Float16(2.0f)})});
  ASSERT_EQ(h.dtype(), DType::kF16);
  EXPECT_EQ(h.data<Float16>()[0].bits, Float16(2.0f).bits);
  EXPECT_EQ(h.data<Float16>()[1].bits, Float16(1.41421356f).bits);
  const Tensor b = RunOne(MakeNode("Exp", 1), {MakeTensor<BFloat16>({1}, {BFloat16(1.0f)})});
  ASSERT_EQ(b.dtype(), DType::kBF16);
  EXPECT_EQ(b.data<BFloat16>()[0].bits, BFloat16(2.7182818f).bits);
  const Tensor d = RunOne(MakeNode("Tanh", 1), {MakeTensor<double>({1}, {0.5})});
  EXPECT_DOUBLE_EQ(Values<double>(d)[0], std::tanh(0.5));
}

// ----------------------------------------------------------------------------------------------------------------
// PRelu and Clip.

TEST(ElementwisePRelu, SlopeBroadcastsToX) {
  const Tensor x = F32({2, 3}, {-1.0f, -2.0f, -3.0f, 4.0f, -5.0f, 6.0f});
  ExpectNear(RunOne(MakeNode("PRelu", 2), {x, F32({0.5f, 0.25f, 0.1f})}), {-0.5f, -0.5f, -0.3f, 4.0f, -1.25f, 6.0f});
  ExpectNear(RunOne(MakeNode("PRelu", 2), {x, F32({2, 1}, {1.0f, 0.5f})}), {-1.0f, -2.0f, -3.0f, 4.0f, -2.5f, 6.0f});
  EXPECT_EQ(Values<int32_t>(RunOne(MakeNode("PRelu", 2), {Vec<int32_t>({-3, 3}), Vec<int32_t>({2})})),
            (std::vector<int32_t>{-6, 3}));
}

TEST(ElementwisePRelu, SlopeMustNotGrowX) {
  // Unidirectional: a slope that would broadcast X to a bigger shape is an error.
  ExpectError(RunStatus(MakeNode("PRelu", 2), {F32({3}, {1, 2, 3}), F32({2, 3}, {1, 2, 3, 4, 5, 6})}),
              StatusCode::kInvalidArgument, "does not broadcast to X");
  ExpectError(RunStatus(MakeNode("PRelu", 2), {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({2}, {1, 2})}),
              StatusCode::kInvalidArgument, "slope of shape 2");
}

TEST(ElementwisePRelu, BeforeOpset7AOneDSlopeIsPerChannel) {
  // X is N=1, C=2, W=3: slope [C] applies along axis 1, not along the last axis.
  const Tensor x = F32({1, 2, 3}, {-1, -1, -1, -1, -1, 2});
  const Tensor slope = F32({0.5f, 0.25f});
  ExpectNear(RunOne(MakeNode("PRelu", 2), {x, slope}, 6), {-0.5f, -0.5f, -0.5f, -0.25f, -0.25f, 2.0f});
  EXPECT_FALSE(RunStatus(MakeNode("PRelu", 2), {x, slope}, 7).ok());
}

TEST(ElementwiseClip, OptionalBoundInputs) {
  const Tensor x = F32({-3.0f, -1.0f, 0.5f, 2.0f, 9.0f});
  ExpectNear(RunOne(MakeNode("Clip", 3), {x, F32({}, {-1.5f}), F32({}, {1.0f})}, 13), {-1.5f, -1.0f, 0.5f, 1.0f, 1.0f});
  Node only_max = MakeNode("Clip", 3);
  only_max.inputs[1] = "";
  ExpectNear(RunOne(only_max, {x, Tensor(), F32({}, {1.0f})}, 13), {-3.0f, -1.0f, 0.5f, 1.0f, 1.0f});
  ExpectNear(RunOne(MakeNode("Clip", 2), {x, F32({}, {0.0f})}, 13), {0.0f, 0.0f, 0.5f, 2.0f, 9.0f});
  ExpectNear(RunOne(MakeNode("Clip", 1), {x}, 13), {-3.0f, -1.0f, 0.5f, 2.0f, 9.0f});
}

TEST(ElementwiseClip, MinAboveMaxGivesMaxAndNaNPassesThrough) {
  const Tensor y = RunOne(MakeNode("Clip", 3), {F32({-5.0f, 5.0f, kNaN}), F32({}, {2.0f}), F32({}, {1.0f})}, 13);
  EXPECT_EQ(Values<float>(y)[0], 1.0f);
  EXPECT_EQ(Values<float>(y)[1], 1.0f);
  EXPECT_TRUE(std::isnan(Values<float>(y)[2]));
}

TEST(ElementwiseClip, IntegerInputsAndOpset6Attributes) {
  EXPECT_EQ(
      Values<int8_t>(RunOne(
          MakeNode("Clip", 3),
          {Vec<int8_t>({-128, -3, 0, 100, 127}), MakeTensor<int8_t>({}, {-4}), MakeTensor<int8_t>({}, {99})}, 13)),
      (std::vector<int8_t>{-4, -3, 0, 99, 99}));
  EXPECT_EQ(Values<int64_t>(RunOne(MakeNode("Clip", 1), {Vec<int64_t>({INT64_MIN, 5})}, 13)),
            (std::vector<int64_t>{INT64_MIN, 5}));
  const Node old = MakeNode("Clip", 1, 1, {{"min", FloatAttr(-1.0f)}, {"max", FloatAttr(0.5f)}});
  ExpectNear(RunOne(old, {F32({-3.0f, 0.0f, 3.0f})}, 6), {-1.0f, 0.0f, 0.5f});
}

TEST(ElementwiseClip, BoundsMustBeScalarsOfTheInputDtype) {
  ExpectError(RunStatus(MakeNode("Clip", 2), {F32({1.0f, 2.0f}), F32({0.0f, 1.0f})}, 13), StatusCode::kInvalidArgument,
              "min must be a scalar");
  ExpectError(RunStatus(MakeNode("Clip", 2), {F32({1.0f}), MakeTensor<double>({}, {0.0})}, 13),
              StatusCode::kInvalidArgument, "same dtype");
}

// ----------------------------------------------------------------------------------------------------------------
// Binary ops.

TEST(ElementwiseBinary, ArithmeticBroadcastsBothWays) {
  const Tensor col = F32({2, 1}, {10.0f, 20.0f});
  const Tensor row = F32({1, 3}, {1.0f, 2.0f, 4.0f});
  const Tensor sum = RunOne(MakeNode("Add", 2), {col, row});
  EXPECT_EQ(sum.shape(), (Shape{2, 3}));
  ExpectNear(sum, {11, 12, 14, 21, 22, 24});
  ExpectNear(RunOne(MakeNode("Sub", 2), {col, row}), {9, 8, 6, 19, 18, 16});
  ExpectNear(RunOne(MakeNode("Mul", 2), {row, col}), {10, 20, 40, 20, 40, 80});
  ExpectNear(RunOne(MakeNode("Div", 2), {col, row}), {10, 5, 2.5f, 20, 10, 5});
  // A scalar broadcasts against anything; an empty dimension stays empty.
  ExpectNear(RunOne(MakeNode("Add", 2), {F32({}, {1.0f}), row}), {2, 3, 5});
  EXPECT_EQ(RunOne(MakeNode("Add", 2), {F32({0, 3}, {}), row}).shape(), (Shape{0, 3}));
}

TEST(ElementwiseBinary, IncompatibleShapesNameNodeAndShapes) {
  ExpectError(RunStatus(MakeNode("Add", 2), {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({2}, {1, 2})}),
              StatusCode::kInvalidArgument, "2x3");
  ExpectError(RunStatus(MakeNode("Mul", 2), {F32({1.0f}), Vec<int32_t>({1})}), StatusCode::kInvalidArgument,
              "same dtype");
}

TEST(ElementwiseBinary, OpsetBoundsAreChecked) {
  // Opset 6 Add of equal shapes is fine (legacy broadcasting is tested in LegacyBroadcastTest).
  ExpectNear(RunOne(MakeNode("Add", 2), {F32({1.0f}), F32({1.0f})}, 6), {2.0f});
  ExpectError(RunStatus(MakeNode("LessOrEqual", 2), {F32({1.0f}), F32({1.0f})}, 11), StatusCode::kInvalidArgument,
              "opset 12");
}

TEST(ElementwiseBinary, IntegerArithmeticWrapsAndDivisionTruncates) {
  EXPECT_EQ(Values<int8_t>(RunOne(MakeNode("Add", 2), {Vec<int8_t>({127, -128}), Vec<int8_t>({1, -1})})),
            (std::vector<int8_t>{-128, 127}));
  EXPECT_EQ(Values<uint16_t>(RunOne(MakeNode("Mul", 2), {Vec<uint16_t>({65535}), Vec<uint16_t>({65535})})),
            (std::vector<uint16_t>{1}));
  EXPECT_EQ(Values<int32_t>(RunOne(MakeNode("Div", 2), {Vec<int32_t>({7, -7, 7, -7}), Vec<int32_t>({2, 2, -2, -2})})),
            (std::vector<int32_t>{3, -3, -3, 3}));
  EXPECT_EQ(Values<int64_t>(RunOne(MakeNode("Div", 2), {Vec<int64_t>({INT64_MIN}), Vec<int64_t>({-1})})),
            (std::vector<int64_t>{INT64_MIN}));
  EXPECT_EQ(Values<uint8_t>(RunOne(MakeNode("Div", 2), {Vec<uint8_t>({250}), Vec<uint8_t>({7})})),
            (std::vector<uint8_t>{35}));
}

TEST(ElementwiseBinary, IntegerDivisionByZeroIsAnError) {
  ExpectError(RunStatus(MakeNode("Div", 2), {Vec<int32_t>({1, 2}), Vec<int32_t>({1, 0})}), StatusCode::kInvalidArgument,
              "division by zero");
  ExpectError(RunStatus(MakeNode("Mod", 2), {Vec<int32_t>({1}), Vec<int32_t>({0})}), StatusCode::kInvalidArgument,
              "division by zero");
  const Tensor y = RunOne(MakeNode("Div", 2), {F32({1.0f, -1.0f}), F32({0.0f, 0.0f})});
  EXPECT_EQ(Values<float>(y), (std::vector<float>{kInf, -kInf}));
}

TEST(ElementwiseBinary, ModFollowsTheFmodAttribute) {
  const Tensor a = Vec<int32_t>({5, -5, 5, -5, 6});
  const Tensor b = Vec<int32_t>({3, 3, -3, -3, 3});
  EXPECT_EQ(Values<int32_t>(RunOne(MakeNode("Mod", 2), {a, b})), (std::vector<int32_t>{2, 1, -1, -2, 0}));
  EXPECT_EQ(Values<int32_t>(RunOne(MakeNode("Mod", 2, 1, {{"fmod", IntAttr(1)}}), {a, b})),
            (std::vector<int32_t>{2, -2, 2, -2, 0}));
  EXPECT_EQ(Values<int8_t>(RunOne(MakeNode("Mod", 2), {Vec<int8_t>({-128}), Vec<int8_t>({-1})})),
            (std::vector<int8_t>{0}));
  ExpectNear(RunOne(MakeNode("Mod", 2, 1, {{"fmod", IntAttr(1)}}), {F32({5.5f, -5.5f}), F32({-2.0f, 2.0f})}),
             {1.5f, -1.5f});
  ExpectError(RunStatus(MakeNode("Mod", 2), {F32({5.5f}), F32({2.0f})}), StatusCode::kInvalidArgument, "fmod=1");
}

TEST(ElementwiseBinary, PowKeepsTheBaseDtype) {
  ExpectNear(RunOne(MakeNode("Pow", 2), {F32({2.0f, 4.0f, -2.0f}), F32({3.0f, 0.5f, 2.0f})}), {8.0f, 2.0f, 4.0f});
  const Tensor mixed = RunOne(MakeNode("Pow", 2), {F32({2.0f, 3.0f}), Vec<int64_t>({3, -1})});
  ExpectNear(mixed, {8.0f, 1.0f / 3.0f});
  const Tensor int_float = RunOne(MakeNode("Pow", 2), {Vec<int32_t>({1, 2, 3}), F32({4.0f, 5.0f, 0.5f})});
  ASSERT_EQ(int_float.dtype(), DType::kI32);
  EXPECT_EQ(Values<int32_t>(int_float), (std::vector<int32_t>{1, 32, 1}));
  // Integer by integer is exact beyond double's 53 bits, and wraps like repeated multiplication.
  EXPECT_EQ(Values<int64_t>(RunOne(MakeNode("Pow", 2), {Vec<int64_t>({3, 2}), Vec<int64_t>({39, 64})})),
            (std::vector<int64_t>{4052555153018976267, 0}));
  EXPECT_EQ(Values<int32_t>(RunOne(MakeNode("Pow", 2), {Vec<int32_t>({2, 1, -1, -1}), Vec<int32_t>({-1, -5, -3, -2})})),
            (std::vector<int32_t>{0, 1, -1, 1}));
  ExpectError(RunStatus(MakeNode("Pow", 2), {Vec<int32_t>({0}), Vec<int32_t>({-1})}), StatusCode::kInvalidArgument,
              "division by zero");
}

TEST(ElementwiseBinary, BitShiftDirections) {
  const Tensor x = Vec<uint8_t>({1, 255, 16, 16});
  const Tensor s = Vec<uint8_t>({3, 1, 8, 2});
  EXPECT_EQ(Values<uint8_t>(RunOne(MakeNode("BitShift", 2, 1, {{"direction", StringAttr("LEFT")}}), {x, s})),
            (std::vector<uint8_t>{8, 254, 0, 64}));
  EXPECT_EQ(Values<uint8_t>(RunOne(MakeNode("BitShift", 2, 1, {{"direction", StringAttr("RIGHT")}}), {x, s})),
            (std::vector<uint8_t>{0, 127, 0, 4}));
  EXPECT_EQ(Values<uint64_t>(RunOne(MakeNode("BitShift", 2, 1, {{"direction", StringAttr("LEFT")}}),
                                    {Vec<uint64_t>({1}), Vec<uint64_t>({63})})),
            (std::vector<uint64_t>{uint64_t{1} << 63}));
  ExpectError(RunStatus(MakeNode("BitShift", 2, 1, {{"direction", StringAttr("UP")}}), {x, s}),
              StatusCode::kInvalidArgument, "'UP'");
  ExpectError(RunStatus(MakeNode("BitShift", 2, 1, {{"direction", StringAttr("LEFT")}}),
                        {Vec<int32_t>({1}), Vec<int32_t>({1})}),
              StatusCode::kUnsupported, "i32");
}

TEST(ElementwiseBinary, LogicOpsBroadcast) {
  const Tensor a = Bools({2, 2}, {0, 0, 1, 1});
  const Tensor b = Bools({2}, {0, 1});
  EXPECT_EQ(BoolValues(RunOne(MakeNode("And", 2), {a, b})), (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(BoolValues(RunOne(MakeNode("Or", 2), {a, b})), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(BoolValues(RunOne(MakeNode("Xor", 2), {a, b})), (std::vector<uint8_t>{0, 1, 1, 0}));
  ExpectError(RunStatus(MakeNode("And", 2), {F32({1.0f}), F32({1.0f})}), StatusCode::kUnsupported, "f32");
}

TEST(ElementwiseBinary, ComparisonsGiveBoolsAndNaNComparesFalse) {
  const Tensor a = F32({1.0f, 2.0f, 3.0f, kNaN});
  const Tensor b = F32({}, {2.0f});
  EXPECT_EQ(BoolValues(RunOne(MakeNode("Equal", 2), {a, b})), (std::vector<uint8_t>{0, 1, 0, 0}));
  EXPECT_EQ(BoolValues(RunOne(MakeNode("Less", 2), {a, b})), (std::vector<uint8_t>{1, 0, 0, 0}));
  EXPECT_EQ(BoolValues(RunOne(MakeNode("Greater", 2), {a, b})), (std::vector<uint8_t>{0, 0, 1, 0}));
  EXPECT_EQ(BoolValues(RunOne(MakeNode("LessOrEqual", 2), {a, b})), (std::vector<uint8_t>{1, 1, 0, 0}));
  EXPECT_EQ(BoolValues(RunOne(MakeNode("GreaterOrEqual", 2), {a, b})), (std::vector<uint8_t>{0, 1, 1, 0}));
  // int64 compares exactly where double would round both to the same value.
  const int64_t big = (int64_t{1} << 60) + 1;
  EXPECT_EQ(BoolValues(RunOne(MakeNode("Greater", 2), {Vec<int64_t>({big}), Vec<int64_t>({big - 1})})),
            (std::vector<uint8_t>{1}));
  EXPECT_EQ(BoolValues(RunOne(MakeNode("Equal", 2), {Bools({2}, {1, 0}), Bools({2}, {1, 1})})),
            (std::vector<uint8_t>{1, 0}));
  ExpectError(RunStatus(MakeNode("Less", 2), {Bools({1}, {1}), Bools({1}, {0})}), StatusCode::kUnsupported, "bool");
}

TEST(ElementwiseBinary, Float16ArithmeticRoundsToHalf) {
  const Tensor a = MakeTensor<Float16>({2}, {Float16(1.0f), Float16(2048.0f)});
  const Tensor b = MakeTensor<Float16>({2}, {Float16(std::ldexp(1.0f, -11)), Float16(1.0f)});
  const Tensor y = RunOne(MakeNode("Add", 2), {a, b});
  ASSERT_EQ(y.dtype(), DType::kF16);
  // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: even wins. 2048 + 1 is a tie between 2048 and 2050: even wins.
  EXPECT_EQ(static_cast<float>(y.data<Float16>()[0]), 1.0f);
  EXPECT_EQ(static_cast<float>(y.data<Float16>()[1]), 2048.0f);
}

// ----------------------------------------------------------------------------------------------------------------
// Variadic ops and Where.

TEST(ElementwiseVariadic, MaxMinSumMeanBroadcastAllInputs) {
  const Tensor a = F32({2, 1}, {1.0f, 6.0f});
  const Tensor b = F32({3}, {3.0f, 0.0f, 5.0f});
  const Tensor c = F32({}, {4.0f});
  const Tensor max = RunOne(MakeNode("Max", 3), {a, b, c});
  EXPECT_EQ(max.shape(), (Shape{2, 3}));
  ExpectNear(max, {4, 4, 5, 6, 6, 6});
  ExpectNear(RunOne(MakeNode("Min", 3), {a, b, c}), {1, 0, 1, 3, 0, 4});
  ExpectNear(RunOne(MakeNode("Sum", 3), {a, b, c}), {8, 5, 10, 13, 10, 15});
  ExpectNear(RunOne(MakeNode("Mean", 3), {a, b, c}), {8 / 3.0f, 5 / 3.0f, 10 / 3.0f, 13 / 3.0f, 10 / 3.0f, 5});
  ExpectNear(RunOne(MakeNode("Sum", 1), {b}), {3, 0, 5});
}

TEST(ElementwiseVariadic, NaNWinsMaxAndIntegersStayExact) {
  const Tensor y = RunOne(MakeNode("Max", 2), {F32({kNaN, 1.0f}), F32({2.0f, kNaN})});
  EXPECT_TRUE(std::isnan(Values<float>(y)[0]));
  EXPECT_TRUE(std::isnan(Values<float>(y)[1]));
  const int64_t big = (int64_t{1} << 60) + 1;
  EXPECT_EQ(Values<int64_t>(RunOne(MakeNode("Min", 2), {Vec<int64_t>({big, -1}), Vec<int64_t>({big + 1, -2})})),
            (std::vector<int64_t>{big, -2}));
  EXPECT_EQ(Values<uint32_t>(RunOne(MakeNode("Max", 2), {Vec<uint32_t>({4000000000u}), Vec<uint32_t>({1u})})),
            (std::vector<uint32_t>{4000000000u}));
}

TEST(ElementwiseVariadic, ErrorsNameTheNode) {
  ExpectError(RunStatus(MakeNode("Sum", 2), {Vec<int32_t>({1}), Vec<int32_t>({2})}), StatusCode::kUnsupported, "i32");
  ExpectError(RunStatus(MakeNode("Max", 2), {F32({1.0f}), MakeTensor<double>({1}, {2.0})}),
              StatusCode::kInvalidArgument, "same dtype");
  ExpectError(RunStatus(MakeNode("Min", 2), {F32({1, 2}), F32({1, 2, 3})}), StatusCode::kInvalidArgument,
              "do not broadcast");
}

TEST(ElementwiseWhere, BroadcastsConditionAndBothBranches) {
  const Tensor cond = Bools({2, 1}, {1, 0});
  const Tensor x = Vec<int64_t>({1, 2, 3});
  const Tensor y = MakeTensor<int64_t>({}, {-7});
  const Tensor out = RunOne(MakeNode("Where", 3), {cond, x, y});
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(Values<int64_t>(out), (std::vector<int64_t>{1, 2, 3, -7, -7, -7}));
  ExpectNear(RunOne(MakeNode("Where", 3), {Bools({3}, {0, 1, 0}), F32({1, 2, 3}), F32({4, 5, 6})}), {4, 2, 6});
  ExpectError(RunStatus(MakeNode("Where", 3), {F32({1.0f}), F32({1.0f}), F32({1.0f})}), StatusCode::kInvalidArgument,
              "condition must be bool");
  ExpectError(RunStatus(MakeNode("Where", 3), {cond, F32({1.0f}), x}), StatusCode::kInvalidArgument, "same dtype");
}

// ----------------------------------------------------------------------------------------------------------------
// Cast and CastLike.

Node CastTo(int64_t onnx_type) { return MakeNode("Cast", 1, 1, {{"to", IntAttr(onnx_type)}}); }
constexpr int64_t kOnnxFloat = 1, kOnnxUint8 = 2, kOnnxInt8 = 3, kOnnxInt32 = 6, kOnnxString = 8, kOnnxBool = 9,
                  kOnnxFloat16 = 10, kOnnxDouble = 11, kOnnxBFloat16 = 16, kOnnxFloat8E4M3 = 17;

TEST(ElementwiseCast, FloatToIntegerTruncatesTowardZero) {
  const Tensor y = RunOne(CastTo(kOnnxInt32), {F32({2.9f, -2.9f, 0.5f, -0.0f})});
  ASSERT_EQ(y.dtype(), DType::kI32);
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{2, -2, 0, 0}));
  // Out of range is undefined in ONNX: the oracle saturates (and NaN gives 0) rather than run undefined C++.
  EXPECT_EQ(Values<int8_t>(RunOne(CastTo(kOnnxInt8), {F32({1000.0f, -1000.0f, kNaN})})),
            (std::vector<int8_t>{127, -128, 0}));
}

TEST(ElementwiseCast, IntegersWrapAndBoolsAreZeroOrOne) {
  EXPECT_EQ(Values<int8_t>(RunOne(CastTo(kOnnxInt8), {Vec<int16_t>({200, -129, 5})})),
            (std::vector<int8_t>{-56, 127, 5}));
  EXPECT_EQ(Values<uint8_t>(RunOne(CastTo(kOnnxUint8), {Vec<int32_t>({-1, 256})})), (std::vector<uint8_t>{255, 0}));
  EXPECT_EQ(BoolValues(RunOne(CastTo(kOnnxBool), {F32({0.0f, -0.0f, 0.1f, kNaN})})),
            (std::vector<uint8_t>{0, 0, 1, 1}));
  ExpectNear(RunOne(CastTo(kOnnxFloat), {Bools({2}, {1, 0})}), {1.0f, 0.0f});
  ExpectNear(RunOne(CastTo(kOnnxFloat), {Vec<int64_t>({-3, 16777217})}), {-3.0f, 16777216.0f});
}

TEST(ElementwiseCast, DoubleToHalfTypesRoundsOnce) {
  // 1 + 2^-11 + 2^-40 lies just above the float16 tie between 1 and 1 + 2^-10; rounding to float first would land
  // on the tie and round down to 1.
  const Tensor h =
      RunOne(CastTo(kOnnxFloat16), {MakeTensor<double>({1}, {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)})});
  ASSERT_EQ(h.dtype(), DType::kF16);
  EXPECT_EQ(static_cast<float>(h.data<Float16>()[0]), 1.0f + std::ldexp(1.0f, -10));
  // Cast-19 and later round to nearest even (before 19, bfloat16 truncates: see the next test).
  const Tensor b =
      RunOne(CastTo(kOnnxBFloat16), {MakeTensor<double>({1}, {1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)})}, 19);
  ASSERT_EQ(b.dtype(), DType::kBF16);
  EXPECT_EQ(static_cast<float>(b.data<BFloat16>()[0]), 1.0f + std::ldexp(1.0f, -7));
  // float32 → bfloat16 rounds to nearest even; 65520 overflows float16 to infinity.
  const Tensor r = RunOne(CastTo(kOnnxBFloat16), {F32({1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)})}, 19);
  EXPECT_EQ(static_cast<float>(r.data<BFloat16>()[0]), 1.0f + std::ldexp(1.0f, -7));
  EXPECT_EQ(static_cast<float>(RunOne(CastTo(kOnnxFloat16), {F32({65520.0f})}).data<Float16>()[0]), kInf);
  const Tensor back = RunOne(CastTo(kOnnxDouble), {MakeTensor<Float16>({1}, {Float16(0.333f)})});
  EXPECT_EQ(Values<double>(back)[0], static_cast<double>(static_cast<float>(Float16(0.333f))));
}

// Before opset 19 the ONNX test data truncates float → bfloat16 (Cast-19 rounds to nearest even):
// 1 + 2^-8 + 2^-10 is past the half step above 1, so it rounds up but truncates to 1. A NaN stays a
// NaN (truncating some NaN patterns would give infinity).
TEST(ElementwiseCast, BFloat16BeforeOpset19Truncates) {
  const float x = 1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -10);
  const Tensor t = RunOne(CastTo(kOnnxBFloat16), {F32({x, -x, NAN})}, 13);
  EXPECT_EQ(static_cast<float>(t.data<BFloat16>()[0]), 1.0f);
  EXPECT_EQ(static_cast<float>(t.data<BFloat16>()[1]), -1.0f);
  EXPECT_TRUE(std::isnan(static_cast<float>(t.data<BFloat16>()[2])));
  const Tensor rounded = RunOne(CastTo(kOnnxBFloat16), {F32({x})}, 19);
  EXPECT_EQ(static_cast<float>(rounded.data<BFloat16>()[0]), 1.0f + std::ldexp(1.0f, -7));
}

TEST(ElementwiseCast, UnsupportedTargetsAreClearErrors) {
  ExpectError(RunStatus(CastTo(kOnnxFloat8E4M3), {F32({1.0f})}, 19), StatusCode::kUnsupported, "float8");
  ExpectError(RunStatus(MakeNode("Cast", 1), {F32({1.0f})}), StatusCode::kInvalidArgument, "'to'");
}

TEST(ElementwiseCast, CastLikeTakesTheSecondInputsDtype) {
  const Tensor y = RunOne(MakeNode("CastLike", 2), {F32({2, 1}, {1.5f, -2.5f}), MakeTensor<int64_t>({}, {0})}, 15);
  ASSERT_EQ(y.dtype(), DType::kI64);
  EXPECT_EQ(y.shape(), (Shape{2, 1}));
  EXPECT_EQ(Values<int64_t>(y), (std::vector<int64_t>{1, -2}));
  ExpectError(RunStatus(MakeNode("CastLike", 2), {F32({1.0f}), F32({1.0f})}, 14), StatusCode::kInvalidArgument,
              "opset 15");
}

// Opset < 7: B broadcasts only with broadcast=1, aligned at `axis` (default: trailing dims).
TEST(LegacyBroadcastTest, AlignsBAtAxis) {
  const Node add = MakeNode("Add", 2, 1, {{"broadcast", IntAttr(1)}, {"axis", IntAttr(1)}});
  const Tensor a = MakeTensor<float>({2, 3, 2}, std::vector<float>(12, 1.0f));
  const Tensor b = MakeTensor<float>({3}, {10, 20, 30});
  auto out = chipfit::testing::Run(add, {a, b}, /*opset=*/6);
  ASSERT_EQ(out.size(), 1u);
  ExpectNear(out[0], {11, 11, 21, 21, 31, 31, 11, 11, 21, 21, 31, 31});
  const Node trailing = MakeNode("Mul", 2, 1, {{"broadcast", IntAttr(1)}});
  out = chipfit::testing::Run(trailing, {a, MakeTensor<float>({2}, {2, 3})}, 6);
  ASSERT_EQ(out.size(), 1u);
  ExpectNear(out[0], {2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3});
}

TEST(LegacyBroadcastTest, DifferentShapesWithoutBroadcastAreAnError) {
  const Node add = MakeNode("Add", 2);
  auto out = RunNodeOnReference(add, 6, {MakeTensor<float>({2}, {1, 2}), MakeTensor<float>({1}, {1})});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("broadcast=0"), std::string::npos) << out.status().message();
}

}  // namespace
}  // namespace chipfit::testing
