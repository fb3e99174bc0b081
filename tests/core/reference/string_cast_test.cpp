// Reference Cast and CastLike to and from string tensors: numpy's text for floats, round trips, parsing, errors.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/reference/reference_kernels.h"
#include "core/runtime/kernel.h"
#include "tests/core/reference/ref_test_util.h"

namespace chipfit::testing {
namespace {

// ONNX TensorProto element type codes for Cast's `to`.
constexpr int64_t kOnnxFloat = 1, kOnnxUint8 = 2, kOnnxInt32 = 6, kOnnxInt64 = 7, kOnnxString = 8, kOnnxBool = 9,
                  kOnnxFloat16 = 10, kOnnxDouble = 11, kOnnxUint64 = 13;

Node CastTo(int64_t to) { return MakeNode("Cast", 1, 1, {{"to", IntAttr(to)}}); }

template <typename T>
std::vector<std::string> ToText(std::vector<T> values) {
  const auto n = static_cast<int64_t>(values.size());
  return Texts(RunOne(CastTo(kOnnxString), {MakeTensor<T>({n}, std::move(values))}));
}

// The first inputs and outputs of the ONNX suite's test_cast_FLOAT_to_STRING.
TEST(CastToStringTest, FloatsReadAsTheOnnxSuiteWritesThem) {
  EXPECT_EQ(ToText<float>({0.9767611026763916f, 0.6048455238342285f, 0.03918779268860817f, 0.12019655853509903f,
                           0.06414749473333359f}),
            (std::vector<std::string>{"0.9767611", "0.6048455", "0.039187793", "0.12019656", "0.064147495"}));
}

// numpy's str: positional for 1e-4 <= |x| < 1e16 (whole numbers keep ".0"), scientific outside.
TEST(CastToStringTest, FloatsArePositionalInNumpysRangeAndScientificOutside) {
  EXPECT_EQ(ToText<float>({3, -0.0f, 0, 16777216, 1234.5f, -0.00015f}),
            (std::vector<std::string>{"3.0", "-0.0", "0.0", "16777216.0", "1234.5", "-0.00015"}));
  // float's 0.0001 lies just below 1e-4, so numpy writes it in scientific form too.
  EXPECT_EQ(ToText<float>({1e-5f, 0.0001f, 1e16f, 1.5e20f, -2.5e-30f, std::numeric_limits<float>::denorm_min()}),
            (std::vector<std::string>{"1e-05", "1e-04", "1e+16", "1.5e+20", "-2.5e-30", "1e-45"}));
}

TEST(CastToStringTest, SpecialValuesAreSpelledAsTheCastSpecSays) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(ToText<float>({std::nanf(""), kInf, -kInf}), (std::vector<std::string>{"NaN", "INF", "-INF"}));
  EXPECT_EQ(ToText<double>({-std::nan(""), std::numeric_limits<double>::infinity()}),
            (std::vector<std::string>{"NaN", "INF"}));
}

TEST(CastToStringTest, EachFloatTypeGetsTheFewestDigitsOfItsOwnPrecision) {
  EXPECT_EQ(ToText<double>({0.1, 1.0 / 3, 1e100}), (std::vector<std::string>{"0.1", "0.3333333333333333", "1e+100"}));
  EXPECT_EQ(ToText<float>({0.1f, 1.0f / 3}), (std::vector<std::string>{"0.1", "0.33333334"}));
  // float16's 0.1 is float's 0.099975586, but 0.1 already reads back to it.
  EXPECT_EQ(ToText<Float16>({Float16(0.1f), Float16(65504.0f), Float16(-1.0f / 3)}),
            (std::vector<std::string>{"0.1", "65500.0", "-0.3333"}));
  EXPECT_EQ(ToText<BFloat16>({BFloat16(0.1f), BFloat16(3.0f)}), (std::vector<std::string>{"0.1", "3.0"}));
}

TEST(CastToStringTest, IntegersAndBoolsAreDecimal) {
  EXPECT_EQ(ToText<int8_t>({-128, 0, 127}), (std::vector<std::string>{"-128", "0", "127"}));
  EXPECT_EQ(ToText<uint8_t>({255}), (std::vector<std::string>{"255"}));
  EXPECT_EQ(ToText<int64_t>({std::numeric_limits<int64_t>::min()}), (std::vector<std::string>{"-9223372036854775808"}));
  EXPECT_EQ(ToText<uint64_t>({std::numeric_limits<uint64_t>::max()}),
            (std::vector<std::string>{"18446744073709551615"}));
  EXPECT_EQ(ToText<bool>({true, false}), (std::vector<std::string>{"1", "0"}));
}

// Every float, whatever its magnitude, reads back from its text to the same bits.
TEST(CastToStringTest, FloatsRoundTripThroughText) {
  std::vector<float> values = {std::numeric_limits<float>::max(),
                               std::numeric_limits<float>::lowest(),
                               std::numeric_limits<float>::min(),
                               std::numeric_limits<float>::denorm_min(),
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               0.1f,
                               -0.0f};
  uint32_t bits = 0x9e3779b9u;
  while (values.size() < 4096) {
    bits = bits * 1664525u + 1013904223u;  // every exponent, both signs, denormals
    const auto value = std::bit_cast<float>(bits);
    if (!std::isnan(value)) values.push_back(value);
  }
  const auto n = static_cast<int64_t>(values.size());
  const Tensor text = RunOne(CastTo(kOnnxString), {F32({n}, values)});
  const Tensor back = RunOne(CastTo(kOnnxFloat), {text});
  ASSERT_EQ(back.numel(), n);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(back.data<float>()[i]), std::bit_cast<uint32_t>(values[i]))
        << values[i] << " became \"" << text.data<std::string>()[i] << "\"";
  }
  const Tensor nan_back = RunOne(CastTo(kOnnxFloat), {RunOne(CastTo(kOnnxString), {F32({1}, {std::nanf("")})})});
  EXPECT_TRUE(std::isnan(nan_back.data<float>()[0]));
}

// The inputs and outputs of the ONNX suite's test_cast_STRING_to_FLOAT, and the other spellings the spec allows.
TEST(CastFromStringTest, FloatsReadPlainScientificAndSpecialSpellings) {
  const Tensor y =
      RunOne(CastTo(kOnnxFloat), {Strings({7}, {"0.47892547", "0.816468", "NaN", "INF", "+INF", "-INF", "0.7229038"})});
  const std::vector<float> got = Values<float>(y);
  EXPECT_EQ(got[0], 0.4789254665374756f);
  EXPECT_EQ(got[1], 0.8164680004119873f);
  EXPECT_TRUE(std::isnan(got[2]));
  EXPECT_EQ(got[3], std::numeric_limits<float>::infinity());
  EXPECT_EQ(got[4], std::numeric_limits<float>::infinity());
  EXPECT_EQ(got[5], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(got[6], 0.7229037880897522f);

  const Tensor more =
      RunOne(CastTo(kOnnxDouble), {Strings({8}, {"nan", "inf", "-Inf", "1E8", "-1e-5", " 2.5 ", "1e400", "-1e-400"})});
  const std::vector<double> d = Values<double>(more);
  EXPECT_TRUE(std::isnan(d[0]));
  EXPECT_EQ(d[1], std::numeric_limits<double>::infinity());
  EXPECT_EQ(d[2], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(d[3], 1e8);
  EXPECT_EQ(d[4], -1e-5);
  EXPECT_EQ(d[5], 2.5);
  // Beyond the range: infinity; below it: zero, keeping the sign.
  EXPECT_EQ(d[6], std::numeric_limits<double>::infinity());
  EXPECT_EQ(d[7], 0.0);
  EXPECT_TRUE(std::signbit(d[7]));
  EXPECT_EQ(Values<float>(RunOne(CastTo(kOnnxFloat), {Strings({2}, {"1e39", "0.00001e-45"})})),
            (std::vector<float>{std::numeric_limits<float>::infinity(), 0.0f}));

  const Tensor half = RunOne(CastTo(kOnnxFloat16), {Strings({2}, {"0.1", "1e5"})});
  EXPECT_EQ(half.data<Float16>()[0].bits, Float16(0.1f).bits);
  EXPECT_TRUE(std::isinf(static_cast<float>(half.data<Float16>()[1])));
}

TEST(CastFromStringTest, IntegersAndBoolsParse) {
  EXPECT_EQ(Values<int64_t>(RunOne(CastTo(kOnnxInt64), {Strings({4}, {"42", "+7", "-9223372036854775808", "1e3"})})),
            (std::vector<int64_t>{42, 7, std::numeric_limits<int64_t>::min(), 1000}));
  // Other numerals truncate toward zero; integer numerals wrap as integer casts do.
  EXPECT_EQ(Values<int32_t>(RunOne(CastTo(kOnnxInt32), {Strings({2}, {"100.5", "-2.9"})})),
            (std::vector<int32_t>{100, -2}));
  EXPECT_EQ(Values<uint8_t>(RunOne(CastTo(kOnnxUint8), {Strings({2}, {"-1", "256"})})), (std::vector<uint8_t>{255, 0}));
  EXPECT_EQ(Values<uint64_t>(RunOne(CastTo(kOnnxUint64), {Strings({1}, {"18446744073709551615"})})),
            (std::vector<uint64_t>{std::numeric_limits<uint64_t>::max()}));
  EXPECT_EQ(Values<bool>(RunOne(CastTo(kOnnxBool), {Strings({6}, {"true", "FALSE", "0", "1", "2.5", "0.0"})})),
            (std::vector<bool>{true, false, false, true, true, false}));
}

TEST(CastFromStringTest, TextThatIsNoNumberIsAnErrorNamingTheElement) {
  ExpectError(CastTo(kOnnxFloat), {Strings({3}, {"1", "2", "Hello World!"})}, StatusCode::kInvalidArgument,
              "element 2 \"Hello World!\"");
  ExpectError(CastTo(kOnnxFloat), {Strings({1}, {"1.5x"})}, StatusCode::kInvalidArgument, "element 0 \"1.5x\"");
  ExpectError(CastTo(kOnnxDouble), {Strings({1}, {""})}, StatusCode::kInvalidArgument, "element 0 \"\"");
  ExpectError(CastTo(kOnnxInt64), {Strings({1}, {"+-3"})}, StatusCode::kInvalidArgument, "casts to i64");
  ExpectError(CastTo(kOnnxBool), {Strings({1}, {"yes"})}, StatusCode::kInvalidArgument, "element 0 \"yes\"");
}

TEST(CastStringTest, StringToStringCopies) {
  EXPECT_EQ(Texts(RunOne(CastTo(kOnnxString), {Strings({2}, {"a", " b "})})), (std::vector<std::string>{"a", " b "}));
}

TEST(CastStringTest, CastLikeTakesTheStringTypeOfItsSecondInput) {
  const Node node = MakeNode("CastLike", 2, 1);
  EXPECT_EQ(Texts(RunOne(node, {F32({2}, {0.25f, 2}), Strings({1}, {"x"})})),
            (std::vector<std::string>{"0.25", "2.0"}));
  EXPECT_EQ(Values<float>(RunOne(node, {Strings({2}, {"0.25", "-INF"}), F32({1}, {0})})),
            (std::vector<float>{0.25f, -std::numeric_limits<float>::infinity()}));
}

TEST(CastStringTest, ShapeFunctionGivesStringsAndRefusesThemBeforeOpset9) {
  const Node node = CastTo(kOnnxString);
  ValueInfo x;
  x.dtype = DType::kF32;
  x.shape = {-1, 4};
  InferContext ctx(node, 13, {&x});
  ASSERT_TRUE(FindReferenceOp("Cast", "")->infer(ctx).ok());
  EXPECT_EQ(ctx.outputs()[0].dtype, DType::kString);
  EXPECT_EQ(ctx.outputs()[0].shape, (Shape{-1, 4}));

  ExpectError(node, {F32({1}, {1})}, StatusCode::kInvalidArgument, "need opset 9", 8);
  ExpectError(CastTo(kOnnxFloat), {Strings({1}, {"1"})}, StatusCode::kInvalidArgument, "need opset 9", 6);
}

}  // namespace
}  // namespace chipfit::testing
