// Reference Compress, Unique, ReverseSequence, MaxUnpool, Shrink, random ops and BatchNormalization training
// mode: each against hand-computed or formula results.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/reference/reference_kernels.h"
#include "core/runtime/kernel.h"
#include "tests/core/reference/ref_test_util.h"

namespace chipfit::testing {
namespace {

Tensor Bools(std::vector<bool> values) {
  Tensor t(DType::kBool, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.data<bool>()[i] = values[i];
  return t;
}

ValueInfo Info(DType dtype, Shape shape, const Tensor* value = nullptr) {
  ValueInfo info;
  info.dtype = dtype;
  info.shape = std::move(shape);
  info.value = value;
  return info;
}

void ExpectShape(const Tensor& t, const Shape& shape) { EXPECT_EQ(t.shape(), shape) << DescribeTensor(t); }

// ----------------------------------------------------------------------------------------------------------------
// Compress

const Tensor k3x2 = F32({3, 2}, {1, 2, 3, 4, 5, 6});

TEST(CompressTest, AxisZeroKeepsTheSelectedRows) {
  const Tensor y = RunOne(MakeNode("Compress", 2, 1, {{"axis", IntAttr(0)}}), {k3x2, Bools({false, true, true})});
  ExpectShape(y, {2, 2});
  ExpectNear(y, {3, 4, 5, 6});
}

TEST(CompressTest, NegativeAxisSelectsColumns) {
  const Tensor y = RunOne(MakeNode("Compress", 2, 1, {{"axis", IntAttr(-1)}}), {k3x2, Bools({false, true})});
  ExpectShape(y, {3, 1});
  ExpectNear(y, {2, 4, 6});
}

TEST(CompressTest, WithoutAxisFlattensAndAShortConditionDropsTheTail) {
  const Tensor y = RunOne(MakeNode("Compress", 2), {k3x2, Bools({true, false, true})}, 9);
  ExpectShape(y, {2});
  ExpectNear(y, {1, 3});
}

TEST(CompressTest, NothingSelectedGivesAnEmptyAxis) {
  const Tensor y = RunOne(MakeNode("Compress", 2, 1, {{"axis", IntAttr(1)}}), {k3x2, Bools({false, false})});
  ExpectShape(y, {3, 0});
}

TEST(CompressTest, IntegerDataIsCopiedExactly) {
  const int64_t big = (int64_t{1} << 62) + 1;
  const Tensor y = RunOne(MakeNode("Compress", 2), {I64({2}, {big, 7}), Bools({true, false})});
  EXPECT_EQ(Values<int64_t>(y), std::vector<int64_t>{big});
}

TEST(CompressTest, ATrueEntryPastTheAxisIsAnError) {
  ExpectError(MakeNode("Compress", 2, 1, {{"axis", IntAttr(0)}}), {k3x2, Bools({false, false, false, true})},
              StatusCode::kInvalidArgument, "selects index 3");
}

TEST(CompressTest, AConditionThatIsNotBoolIsAnError) {
  ExpectError(MakeNode("Compress", 2), {k3x2, I64({2}, {1, 0})}, StatusCode::kInvalidArgument, "must be bool");
}

TEST(CompressTest, ShapeFunctionAsksForTheConditionsValues) {
  const Node node = MakeNode("Compress", 2, 1, {{"axis", IntAttr(0)}});
  const ValueInfo x = Info(DType::kF32, {3, 2});
  const ValueInfo condition = Info(DType::kBool, {3});
  InferContext ctx(node, 11, {&x, &condition});
  const Status status = FindReferenceOp("Compress", "")->infer(ctx);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.ToString();
  EXPECT_TRUE(ctx.value_missing());
}

TEST(CompressTest, ShapeFunctionKeepsUnknownDimsOfTheData) {
  const Node node = MakeNode("Compress", 2, 1, {{"axis", IntAttr(1)}});
  const Tensor c = Bools({true, false, true});
  const ValueInfo x = Info(DType::kF32, {-1, 3});
  const ValueInfo condition = Info(DType::kBool, {3}, &c);
  InferContext ctx(node, 11, {&x, &condition});
  ASSERT_TRUE(FindReferenceOp("Compress", "")->infer(ctx).ok());
  EXPECT_EQ(ctx.outputs()[0].shape, (Shape{-1, 2}));
}

// ----------------------------------------------------------------------------------------------------------------
// Unique

TEST(UniqueTest, SortedFlattenedGivesAllFourOutputs) {
  const std::vector<Tensor> out = RunAll(MakeNode("Unique", 1, 4), {F32({2, 3}, {2, 1, 1, 3, 4, 3})}, 11);
  ASSERT_EQ(out.size(), 4u);
  ExpectShape(out[0], {4});
  ExpectNear(out[0], {1, 2, 3, 4});
  EXPECT_EQ(Values<int64_t>(out[1]), (std::vector<int64_t>{1, 0, 3, 4}));        // first occurrences
  EXPECT_EQ(Values<int64_t>(out[2]), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));  // per input element
  EXPECT_EQ(Values<int64_t>(out[3]), (std::vector<int64_t>{2, 1, 2, 1}));
}

TEST(UniqueTest, UnsortedKeepsTheOrderOfFirstOccurrence) {
  const Node node = MakeNode("Unique", 1, 4, {{"sorted", IntAttr(0)}});
  const std::vector<Tensor> out = RunAll(node, {F32({6}, {2, 1, 1, 3, 4, 3})}, 11);
  ASSERT_EQ(out.size(), 4u);
  ExpectNear(out[0], {2, 1, 3, 4});
  EXPECT_EQ(Values<int64_t>(out[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(Values<int64_t>(out[2]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(Values<int64_t>(out[3]), (std::vector<int64_t>{1, 2, 2, 1}));
}

TEST(UniqueTest, AxisComparesWholeSlicesLexicographically) {
  // Rows [1 0], [0 5], [1 0]: two unique rows, [0 5] sorts first.
  const std::vector<Tensor> out =
      RunAll(MakeNode("Unique", 1, 4, {{"axis", IntAttr(0)}}), {F32({3, 2}, {1, 0, 0, 5, 1, 0})}, 11);
  ASSERT_EQ(out.size(), 4u);
  ExpectShape(out[0], {2, 2});
  ExpectNear(out[0], {0, 5, 1, 0});
  EXPECT_EQ(Values<int64_t>(out[1]), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(Values<int64_t>(out[2]), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(Values<int64_t>(out[3]), (std::vector<int64_t>{1, 2}));
}

TEST(UniqueTest, NegativeAxisSelectsColumns) {
  // Columns [1 3], [2 4], [1 3].
  const std::vector<Tensor> out =
      RunAll(MakeNode("Unique", 1, 4, {{"axis", IntAttr(-1)}}), {F32({2, 3}, {1, 2, 1, 3, 4, 3})}, 11);
  ASSERT_EQ(out.size(), 4u);
  ExpectShape(out[0], {2, 2});
  ExpectNear(out[0], {1, 2, 3, 4});
  EXPECT_EQ(Values<int64_t>(out[2]), (std::vector<int64_t>{0, 1, 0}));
}

TEST(UniqueTest, OmittedOptionalOutputsAreSkipped) {
  Node node = MakeNode("Unique", 1, 4);
  node.outputs[1] = "";
  node.outputs[2] = "";
  const std::vector<Tensor> out = RunAll(node, {I64({4}, {7, -1, 7, 7})}, 11);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(Values<int64_t>(out[0]), (std::vector<int64_t>{-1, 7}));
  EXPECT_FALSE(out[1].defined());
  EXPECT_FALSE(out[2].defined());
  EXPECT_EQ(Values<int64_t>(out[3]), (std::vector<int64_t>{1, 3}));
}

TEST(UniqueTest, NaNsCollapseIntoOneValueSortedLast) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Tensor> out = RunAll(MakeNode("Unique", 1, 4), {F32({4}, {nan, 1, nan, 0})}, 11);
  ASSERT_EQ(out.size(), 4u);
  ASSERT_EQ(out[0].numel(), 3);
  EXPECT_EQ(out[0].data<float>()[0], 0.0f);
  EXPECT_EQ(out[0].data<float>()[1], 1.0f);
  EXPECT_TRUE(std::isnan(out[0].data<float>()[2]));
  EXPECT_EQ(Values<int64_t>(out[3]), (std::vector<int64_t>{1, 1, 2}));
}

TEST(UniqueTest, SortedMustBeZeroOrOne) {
  ExpectError(MakeNode("Unique", 1, 1, {{"sorted", IntAttr(2)}}), {F32({2}, {1, 2})}, StatusCode::kInvalidArgument,
              "sorted 2", 11);
}

// ----------------------------------------------------------------------------------------------------------------
// ReverseSequence

TEST(ReverseSequenceTest, DefaultAxesReverseAlongTimeForEachBatchColumn) {
  // time_axis 0, batch_axis 1: x[t][b] = 10 * t + b, lengths 3, 1, 0.
  const Tensor x = F32({3, 3}, {0, 1, 2, 10, 11, 12, 20, 21, 22});
  const Tensor y = RunOne(MakeNode("ReverseSequence", 2), {x, I64({3}, {3, 1, 0})}, 10);
  ExpectNear(y, {20, 1, 2, 10, 11, 12, 0, 21, 22});
}

TEST(ReverseSequenceTest, BatchAxisZeroReversesRowsAndCarriesInnerDims) {
  // batch_axis 0, time_axis 1, each step a pair: row 0 reversed over 2 steps, row 1 untouched.
  const Node node = MakeNode("ReverseSequence", 2, 1, {{"batch_axis", IntAttr(0)}, {"time_axis", IntAttr(1)}});
  const Tensor x = F32({2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  const Tensor y = RunOne(node, {x, I64({2}, {2, 1})}, 10);
  ExpectShape(y, {2, 3, 2});
  ExpectNear(y, {3, 4, 1, 2, 5, 6, 7, 8, 9, 10, 11, 12});
}

TEST(ReverseSequenceTest, ALengthPastTheTimeAxisIsAnError) {
  ExpectError(MakeNode("ReverseSequence", 2), {F32({2, 2}, {1, 2, 3, 4}), I64({2}, {1, 3})},
              StatusCode::kInvalidArgument, "sequence_lens[1] = 3", 10);
}

TEST(ReverseSequenceTest, EqualAxesAreAnError) {
  const Node node = MakeNode("ReverseSequence", 2, 1, {{"batch_axis", IntAttr(0)}});
  ExpectError(node, {F32({2, 2}, {1, 2, 3, 4}), I64({2}, {1, 1})}, StatusCode::kInvalidArgument, "batch_axis 0", 10);
}

TEST(ReverseSequenceTest, OneLengthPerBatchIsRequired) {
  ExpectError(MakeNode("ReverseSequence", 2), {F32({2, 3}, {1, 2, 3, 4, 5, 6}), I64({2}, {1, 1})},
              StatusCode::kInvalidArgument, "one length per batch", 10);
}

// ----------------------------------------------------------------------------------------------------------------
// MaxUnpool

const Attrs kPool2x2 = {{"kernel_shape", IntsAttr({2, 2})}, {"strides", IntsAttr({2, 2})}};

TEST(MaxUnpoolTest, ScattersEachValueToItsIndexInTheInferredShape) {
  const Tensor y =
      RunOne(MakeNode("MaxUnpool", 2, 1, kPool2x2), {F32({1, 1, 1, 2}, {5, 6}), I64({1, 1, 1, 2}, {5, 2})}, 11);
  ExpectShape(y, {1, 1, 2, 4});
  ExpectNear(y, {0, 0, 6, 0, 0, 5, 0, 0});
}

TEST(MaxUnpoolTest, UndoesMaxPoolIndices) {
  // MaxPool (2x2, stride 2) of this 2x4 input gives values 9, 8 at flat indices 4, 3.
  const Node pool = MakeNode("MaxPool", 1, 2, kPool2x2);
  const std::vector<Tensor> pooled = RunAll(pool, {F32({1, 1, 2, 4}, {1, 2, 3, 8, 9, 0, 7, 4})});
  ASSERT_EQ(pooled.size(), 2u);
  const Tensor y = RunOne(MakeNode("MaxUnpool", 2, 1, kPool2x2), {pooled[0], pooled[1]}, 11);
  ExpectNear(y, {0, 0, 0, 8, 9, 0, 0, 0});
}

TEST(MaxUnpoolTest, OutputShapePadsTheUnpooledShapeAtTheEnd) {
  // As the ONNX reference and backend suite: index 3 addresses the default 2x2 unpooled shape (its
  // last element), which sits at the top-left of the 3x3 output_shape.
  const Tensor y = RunOne(MakeNode("MaxUnpool", 3, 1, kPool2x2),
                          {F32({1, 1, 1, 1}, {7}), I64({1, 1, 1, 1}, {3}), I64({4}, {1, 1, 3, 3})}, 11);
  ExpectShape(y, {1, 1, 3, 3});
  ExpectNear(y, {0, 0, 0, 0, 7, 0, 0, 0, 0});
}

TEST(MaxUnpoolTest, OutputShapeLikeTheBackendSuite) {
  const Tensor y =
      RunOne(MakeNode("MaxUnpool", 3, 1, kPool2x2),
             {F32({1, 1, 2, 2}, {5, 6, 7, 8}), I64({1, 1, 2, 2}, {5, 7, 13, 15}), I64({4}, {1, 1, 5, 5})}, 11);
  ExpectShape(y, {1, 1, 5, 5});
  ExpectNear(y, {0, 0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 0, 0, 7, 0, 8, 0, 0, 0, 0, 0, 0});
}

TEST(MaxUnpoolTest, OutputShapeSmallerThanTheUnpooledShapeIsAnError) {
  ExpectError(MakeNode("MaxUnpool", 3, 1, kPool2x2),
              {F32({1, 1, 2, 2}, {5, 6, 7, 8}), I64({1, 1, 2, 2}, {0, 1, 2, 3}), I64({4}, {1, 1, 3, 3})},
              StatusCode::kInvalidArgument, "smaller than the unpooled shape", 11);
}

TEST(MaxUnpoolTest, PadsShrinkTheInferredShape) {
  Attrs attrs = kPool2x2;
  attrs["pads"] = IntsAttr({0, 1, 0, 1});
  const Tensor y =
      RunOne(MakeNode("MaxUnpool", 2, 1, attrs), {F32({1, 1, 1, 2}, {5, 6}), I64({1, 1, 1, 2}, {0, 1})}, 11);
  ExpectShape(y, {1, 1, 2, 2});
  ExpectNear(y, {5, 6, 0, 0});
}

TEST(MaxUnpoolTest, AnIndexOutsideTheOutputIsAnError) {
  ExpectError(MakeNode("MaxUnpool", 2, 1, kPool2x2), {F32({1, 1, 1, 1}, {5}), I64({1, 1, 1, 1}, {4})},
              StatusCode::kInvalidArgument, "index 4 at I[0]", 11);
}

TEST(MaxUnpoolTest, OutputShapeMustMatchTheRank) {
  ExpectError(MakeNode("MaxUnpool", 3, 1, kPool2x2), {F32({1, 1, 1, 1}, {5}), I64({1, 1, 1, 1}, {0}), I64({2}, {2, 2})},
              StatusCode::kInvalidArgument, "output_shape [2, 2]", 11);
}

TEST(MaxUnpoolTest, KernelShapeIsRequired) {
  ExpectError(MakeNode("MaxUnpool", 2), {F32({1, 1, 1, 1}, {5}), I64({1, 1, 1, 1}, {0})}, StatusCode::kInvalidArgument,
              "kernel_shape", 11);
}

// ----------------------------------------------------------------------------------------------------------------
// Shrink

const Tensor kShrinkInput = F32({5}, {-2, -1, 0, 1, 2});

TEST(ShrinkTest, DefaultsZeroTheBandAndKeepTheRest) {
  // lambd 0.5, bias 0: hard shrink.
  ExpectNear(RunOne(MakeNode("Shrink", 1), {F32({4}, {-0.6f, -0.5f, 0.5f, 0.7f})}, 9), {-0.6f, 0, 0, 0.7f});
}

TEST(ShrinkTest, SoftShrinkMovesValuesTowardZeroByBias) {
  const Node node = MakeNode("Shrink", 1, 1, {{"lambd", FloatAttr(1.5f)}, {"bias", FloatAttr(1.5f)}});
  ExpectNear(RunOne(node, {kShrinkInput}, 9), {-0.5f, 0, 0, 0, 0.5f});
}

TEST(ShrinkTest, IntegerInputsTruncateTheResult) {
  const Node node = MakeNode("Shrink", 1, 1, {{"lambd", FloatAttr(1.0f)}, {"bias", FloatAttr(0.5f)}});
  const Tensor y = RunOne(node, {MakeTensor<int32_t>({4}, {-3, -1, 1, 3})}, 9);
  EXPECT_EQ(Values<int32_t>(y), (std::vector<int32_t>{-2, 0, 0, 2}));  // -2.5 and 2.5 truncate toward zero
}

TEST(ShrinkTest, BoolIsNotNumeric) {
  ExpectError(MakeNode("Shrink", 1), {Bools({true})}, StatusCode::kUnsupported, "numeric", 9);
}

// ----------------------------------------------------------------------------------------------------------------
// BatchNormalization, training mode

// N=1, C=2, D=2: channel 0 holds 1, 3 (mean 2, variance 1), channel 1 holds 10, 10 (mean 10, variance 0).
const Tensor kBnX = F32({1, 2, 2}, {1, 3, 10, 10});
const std::vector<Tensor> kBnInputs = {kBnX, F32({2}, {2, 1}), F32({2}, {0, 5}), F32({2}, {4, 0}), F32({2}, {8, 4})};
const Attrs kBnTraining = {{"training_mode", IntAttr(1)}, {"epsilon", FloatAttr(3)}, {"momentum", FloatAttr(0.75f)}};

TEST(BatchNormTrainingTest, NormalizesWithBatchStatisticsAndUpdatesRunningOnes) {
  const std::vector<Tensor> out = RunAll(MakeNode("BatchNormalization", 5, 3, kBnTraining), kBnInputs, 15);
  ASSERT_EQ(out.size(), 3u);
  ExpectNear(out[0], {-1, 1, 5, 5});  // channel 0: (x - 2) / sqrt(1 + 3) * 2; channel 1: bias only
  ExpectNear(out[1], {3.5f, 2.5f});   // 4 * 0.75 + 2 * 0.25, 0 * 0.75 + 10 * 0.25
  ExpectNear(out[2], {6.25f, 3});     // 8 * 0.75 + 1 * 0.25, 4 * 0.75 + 0 * 0.25
}

TEST(BatchNormTrainingTest, RunningOutputsAreOptional) {
  Node node = MakeNode("BatchNormalization", 5, 3, kBnTraining);
  node.outputs[1] = "";
  node.outputs[2] = "";
  const std::vector<Tensor> out = RunAll(node, kBnInputs, 14);
  ASSERT_EQ(out.size(), 3u);
  ExpectNear(out[0], {-1, 1, 5, 5});
  EXPECT_FALSE(out[1].defined());
}

TEST(BatchNormTrainingTest, RunningStatisticsKeepTheirOwnDType) {
  std::vector<Tensor> inputs = kBnInputs;
  inputs[3] = MakeTensor<double>({2}, {4, 0});
  inputs[4] = MakeTensor<double>({2}, {8, 4});
  const std::vector<Tensor> out = RunAll(MakeNode("BatchNormalization", 5, 3, kBnTraining), inputs, 15);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(Values<double>(out[1]), (std::vector<double>{3.5, 2.5}));
  EXPECT_EQ(Values<double>(out[2]), (std::vector<double>{6.25, 3}));
}

TEST(BatchNormTrainingTest, InferenceModeStillUsesTheGivenStatistics) {
  const Node node = MakeNode("BatchNormalization", 5, 1, {{"epsilon", FloatAttr(0)}});
  // channel 0: (x - 4) / sqrt(8) * 2; channel 1: (10 - 0) / sqrt(4) + 5
  ExpectNear(RunOne(node, kBnInputs, 15), {-3 / std::sqrt(2.0f), -1 / std::sqrt(2.0f), 10, 10});
}

TEST(BatchNormTrainingTest, TrainingOutputsBeforeOpset14AreUnsupported) {
  ExpectError(MakeNode("BatchNormalization", 5, 5), kBnInputs, StatusCode::kUnsupported, "before opset 14", 9);
}

// ----------------------------------------------------------------------------------------------------------------
// RandomUniform, RandomNormal (+Like), Bernoulli

constexpr int64_t kOnnxInt32 = 6, kOnnxBool = 9, kOnnxFloat16 = 10, kOnnxDouble = 11;

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}
double StdDev(const std::vector<double>& v) {
  const double m = Mean(v);
  double sum = 0;
  for (double x : v) sum += (x - m) * (x - m);
  return std::sqrt(sum / static_cast<double>(v.size()));
}
std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.GetAsDouble(i));
  return out;
}

TEST(RandomTest, UniformFillsTheShapeWithinLowAndHigh) {
  const Node node =
      MakeNode("RandomUniform", 0, 1, {{"shape", IntsAttr({100, 50})}, {"low", FloatAttr(-2)}, {"high", FloatAttr(3)}});
  const Tensor y = RunOne(node, {});
  EXPECT_EQ(y.dtype(), DType::kF32);
  ExpectShape(y, {100, 50});
  const std::vector<double> v = AsDoubles(y);
  for (double x : v) ASSERT_TRUE(x >= -2 && x < 3) << x;
  EXPECT_NEAR(Mean(v), 0.5, 0.1);
  EXPECT_NEAR(StdDev(v), 5 / std::sqrt(12.0), 0.05);
}

TEST(RandomTest, ASeedGivesTheSameValuesAndAnotherSeedOthers) {
  auto draw = [](float seed, const std::string& name) {
    Node node = MakeNode("RandomUniform", 0, 1, {{"shape", IntsAttr({16})}, {"seed", FloatAttr(seed)}});
    node.name = name;
    return Values<float>(RunOne(node, {}));
  };
  EXPECT_EQ(draw(1, "a"), draw(1, "b"));  // the seed decides, not the node
  EXPECT_NE(draw(1, "a"), draw(2, "a"));
}

TEST(RandomTest, WithoutSeedEachNodeDrawsItsOwnRepeatableStream) {
  auto draw = [](const std::string& name) {
    Node node = MakeNode("RandomNormal", 0, 1, {{"shape", IntsAttr({16})}});
    node.name = name;
    return Values<float>(RunOne(node, {}));
  };
  EXPECT_EQ(draw("noise"), draw("noise"));
  EXPECT_NE(draw("noise"), draw("other_noise"));
}

TEST(RandomTest, NormalHasTheRequestedMeanAndScale) {
  const Node node = MakeNode(
      "RandomNormal", 0, 1,
      {{"shape", IntsAttr({20001})}, {"mean", FloatAttr(5)}, {"scale", FloatAttr(2)}, {"dtype", IntAttr(kOnnxDouble)}});
  const Tensor y = RunOne(node, {});
  EXPECT_EQ(y.dtype(), DType::kF64);
  const std::vector<double> v = AsDoubles(y);
  EXPECT_NEAR(Mean(v), 5, 0.05);
  EXPECT_NEAR(StdDev(v), 2, 0.05);
}

TEST(RandomTest, LikeOpsTakeTheInputsShapeAndDType) {
  const Tensor x = MakeTensor<double>({2, 3}, {0, 0, 0, 0, 0, 0});
  const Tensor u = RunOne(MakeNode("RandomUniformLike", 1), {x});
  EXPECT_EQ(u.dtype(), DType::kF64);
  ExpectShape(u, {2, 3});
  const Tensor n = RunOne(MakeNode("RandomNormalLike", 1, 1, {{"dtype", IntAttr(kOnnxFloat16)}}), {x});
  EXPECT_EQ(n.dtype(), DType::kF16);
  ExpectShape(n, {2, 3});
}

TEST(RandomTest, LikeOfAnIntegerInputNeedsAFloatDType) {
  ExpectError(MakeNode("RandomUniformLike", 1), {I64({2}, {1, 2})}, StatusCode::kUnsupported, "not a floating type");
}

TEST(RandomTest, ShapeIsRequiredAndLowMayNotExceedHigh) {
  ExpectError(MakeNode("RandomNormal", 0), {}, StatusCode::kInvalidArgument, "shape is required");
  const Node node =
      MakeNode("RandomUniform", 0, 1, {{"shape", IntsAttr({2})}, {"low", FloatAttr(1)}, {"high", FloatAttr(0)}});
  ExpectError(node, {}, StatusCode::kInvalidArgument, "must not exceed high");
}

TEST(BernoulliTest, CertainProbabilitiesGiveCertainResults) {
  const Tensor y = RunOne(MakeNode("Bernoulli", 1), {F32({4}, {0, 1, 1, 0})}, 15);
  ExpectNear(y, {0, 1, 1, 0});
}

TEST(BernoulliTest, OnesAppearWithTheGivenProbabilityInTheRequestedDType) {
  const Node node = MakeNode("Bernoulli", 1, 1, {{"dtype", IntAttr(kOnnxInt32)}, {"seed", FloatAttr(3)}});
  const Tensor y = RunOne(node, {F32({10000}, std::vector<float>(10000, 0.3f))}, 15);
  ASSERT_EQ(y.dtype(), DType::kI32);
  const std::vector<double> v = AsDoubles(y);
  for (double x : v) ASSERT_TRUE(x == 0 || x == 1) << x;
  EXPECT_NEAR(Mean(v), 0.3, 0.02);
}

TEST(BernoulliTest, BoolOutput) {
  const Tensor y = RunOne(MakeNode("Bernoulli", 1, 1, {{"dtype", IntAttr(kOnnxBool)}}), {F32({2}, {1, 0})}, 15);
  ASSERT_EQ(y.dtype(), DType::kBool);
  EXPECT_TRUE(y.data<bool>()[0]);
  EXPECT_FALSE(y.data<bool>()[1]);
}

TEST(BernoulliTest, AProbabilityOutsideZeroToOneIsAnError) {
  ExpectError(MakeNode("Bernoulli", 1), {F32({2}, {0.5f, 1.5f})}, StatusCode::kInvalidArgument,
              "probability 1.500000 at flat index 1", 15);
}

}  // namespace
}  // namespace chipfit::testing
