// Reference kernel tests: Reduce*/ArgMax/TopK/CumSum, data movement and construction ops, Resize/Upsample.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "core/reference/reference_kernels.h"
#include "tests/core/reference/ref_test_util.h"

namespace chipfit::testing {
namespace {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

Tensor I64s(std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return I64({n}, std::move(v));
}
Tensor F32s(std::vector<float> v) {
  const auto n = static_cast<int64_t>(v.size());
  return F32({n}, std::move(v));
}

// 0, 1, 2, … as float in `shape`.
Tensor Iota(Shape shape) {
  Tensor t(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

// Runs and returns the single output, checking its shape.
Tensor RunOne(const Node& node, const std::vector<Tensor>& inputs, int64_t opset, const Shape& expected_shape) {
  std::vector<Tensor> out = Run(node, inputs, opset);
  if (out.empty()) return {};
  EXPECT_EQ(out[0].shape(), expected_shape) << node.op_type << " got " << ShapeToString(out[0].shape());
  return out[0];
}

// Expects the node to fail with a Status whose message names the node and contains `text`.
void ExpectError(const Node& node, const std::vector<Tensor>& inputs, int64_t opset, const std::string& text) {
  auto result = RunNodeOnReference(node, opset, inputs);
  ASSERT_FALSE(result.ok()) << node.op_type << " unexpectedly succeeded";
  EXPECT_NE(result.status().message().find(node.name), std::string::npos) << result.status().message();
  EXPECT_NE(result.status().message().find(text), std::string::npos) << result.status().message();
}

// Runs only the shape function with input `unknown` lacking its value: it must ask for the value.
void ExpectValueNeeded(const Node& node, const std::vector<Tensor>& inputs, size_t unknown, int64_t opset) {
  std::vector<ValueInfo> infos(inputs.size());
  std::vector<const ValueInfo*> ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    infos[i] = {inputs[i].dtype(), inputs[i].shape(), i == unknown ? nullptr : &inputs[i]};
    ptrs.push_back(&infos[i]);
  }
  InferContext ctx(node, opset, ptrs);
  const OpEntry* op = FindReferenceOp(node.op_type, "");
  ASSERT_NE(op, nullptr);
  const Status status = op->infer(ctx);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.ToString();
  EXPECT_TRUE(ctx.value_missing());
}

// Marks input i of `node` as omitted.
Node Omit(Node node, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs) node.inputs[i] = "";
  return node;
}

// =============================================================================================
// Reduce*

TEST(ReduceTest, SumWithAxesAttributeKeepsDims) {
  Node node = MakeNode("ReduceSum", 1, 1, {{"axes", IntsAttr({1})}});
  ExpectNear(RunOne(node, {Iota({2, 3})}, 11, {2, 1}), {3, 12});
}

TEST(ReduceTest, SumWithAxesInputNegativeAxisNoKeepdims) {
  Node node = MakeNode("ReduceSum", 2, 1, {{"keepdims", IntAttr(0)}});
  ExpectNear(RunOne(node, {Iota({2, 3}), I64s({-2})}, 13, {3}), {3, 5, 7});
}

TEST(ReduceTest, EmptyAxesReduceAllUnlessNoop) {
  Node all = MakeNode("ReduceSum", 1, 1);
  ExpectNear(RunOne(all, {Iota({2, 3})}, 13, {1, 1}), {15});
  Node noop = MakeNode("ReduceSum", 2, 1, {{"noop_with_empty_axes", IntAttr(1)}});
  ExpectNear(RunOne(noop, {Iota({2, 3}), I64({0}, {})}, 13, {2, 3}), {0, 1, 2, 3, 4, 5});
  // A noop ReduceSumSquare still squares each element (a reduction over one element).
  Node square = MakeNode("ReduceSumSquare", 1, 1, {{"noop_with_empty_axes", IntAttr(1)}});
  ExpectNear(RunOne(square, {F32s({-2, 3})}, 18, {2}), {4, 9});
}

TEST(ReduceTest, EveryKindOverAxisOneAtOpset18) {
  const Tensor x = F32({2, 2}, {1, -2, 3, 4});
  const struct {
    const char* op;
    std::vector<float> expected;
  } cases[] = {
      {"ReduceMean", {-0.5f, 3.5f}},
      {"ReduceMax", {1, 4}},
      {"ReduceMin", {-2, 3}},
      {"ReduceProd", {-2, 12}},
      {"ReduceL1", {3, 7}},
      {"ReduceL2", {std::sqrt(5.0f), 5}},
      {"ReduceSumSquare", {5, 25}},
      {"ReduceLogSumExp", {std::log(std::exp(1.0f) + std::exp(-2.0f)), std::log(std::exp(3.0f) + std::exp(4.0f))}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.op);
    Node node = MakeNode(c.op, 2, 1, {{"keepdims", IntAttr(0)}});
    ExpectNear(RunOne(node, {x, I64s({1})}, 18, {2}), c.expected);
  }
  Node log_sum = MakeNode("ReduceLogSum", 1, 1, {{"axes", IntsAttr({0})}});
  ExpectNear(RunOne(log_sum, {F32({2, 2}, {1, 2, 3, 4})}, 17, {1, 2}), {std::log(4.0f), std::log(6.0f)});
}

TEST(ReduceTest, LogSumExpIsStableForLargeValues) {
  Node node = MakeNode("ReduceLogSumExp", 1, 1, {{"keepdims", IntAttr(0)}});
  ExpectNear(RunOne(node, {F32s({1000, 1000})}, 13, {}), {1000 + std::log(2.0f)});
}

TEST(ReduceTest, MaxOfInt64IsExactAndEmptySumIsZero) {
  Node max = MakeNode("ReduceMax", 1, 1, {{"keepdims", IntAttr(0)}});
  const int64_t big = (int64_t{1} << 62) + 1;
  Tensor out = RunOne(max, {I64s({big - 1, big, 3})}, 13, {});
  EXPECT_EQ(Values<int64_t>(out), std::vector<int64_t>{big});
  Node sum = MakeNode("ReduceSum", 1, 1, {{"axes", IntsAttr({1})}, {"keepdims", IntAttr(0)}});
  ExpectNear(RunOne(sum, {F32({2, 0}, {})}, 11, {2}), {0, 0});
}

TEST(ReduceTest, IntegerMeanTruncatesLikeIntegerDivision) {
  Node node = MakeNode("ReduceMean", 1, 1, {{"keepdims", IntAttr(0)}});
  Tensor out = RunOne(node, {MakeTensor<int32_t>({3}, {1, 2, 4})}, 13, {});
  EXPECT_EQ(Values<int32_t>(out), std::vector<int32_t>{2});
}

TEST(ReduceTest, BadAxisAndUnknownAxesInput) {
  ExpectError(MakeNode("ReduceMean", 1, 1, {{"axes", IntsAttr({2})}}), {Iota({2, 3})}, 13, "axis 2");
  ExpectValueNeeded(MakeNode("ReduceMean", 2, 1), {Iota({2, 3}), I64s({1})}, 1, 18);
}

// =============================================================================================
// ArgMax, ArgMin, TopK, CumSum

TEST(ArgTest, ArgMaxTiesAndSelectLastIndex) {
  const Tensor x = F32({2, 3}, {1, 5, 5, 7, 2, 7});
  Node first = MakeNode("ArgMax", 1, 1, {{"axis", IntAttr(-1)}});
  EXPECT_EQ(Values<int64_t>(RunOne(first, {x}, 13, {2, 1})), (std::vector<int64_t>{1, 0}));
  Node last =
      MakeNode("ArgMax", 1, 1, {{"axis", IntAttr(1)}, {"keepdims", IntAttr(0)}, {"select_last_index", IntAttr(1)}});
  EXPECT_EQ(Values<int64_t>(RunOne(last, {x}, 13, {2})), (std::vector<int64_t>{2, 2}));
}

TEST(ArgTest, ArgMinOverAxisZeroOnInt32) {
  Node node = MakeNode("ArgMin", 1, 1, {{"keepdims", IntAttr(0)}});
  const Tensor x = MakeTensor<int32_t>({2, 3}, {4, -1, 6, 3, 5, 6});
  EXPECT_EQ(Values<int64_t>(RunOne(node, {x}, 13, {3})), (std::vector<int64_t>{1, 0, 0}));
}

TEST(TopKTest, LargestAndSmallestWithTiesLowerIndexFirst) {
  const Tensor x = F32({2, 4}, {3, 1, 3, 2, 0, 9, 8, 9});
  Node largest = MakeNode("TopK", 2, 2);
  std::vector<Tensor> out = RunAll(largest, {x, I64s({2})}, 11);
  ASSERT_EQ(out.size(), 2u);
  ExpectNear(out[0], {3, 3, 9, 9});
  EXPECT_EQ(Values<int64_t>(out[1]), (std::vector<int64_t>{0, 2, 1, 3}));
  Node smallest = MakeNode("TopK", 2, 2, {{"largest", IntAttr(0)}, {"axis", IntAttr(0)}});
  out = RunAll(smallest, {x, I64s({1})}, 11);
  ASSERT_EQ(out.size(), 2u);
  ExpectNear(out[0], {0, 1, 3, 2});
  EXPECT_EQ(Values<int64_t>(out[1]), (std::vector<int64_t>{1, 0, 0, 0}));
}

TEST(TopKTest, OpsetOneTakesKAsAttributeAndKBeyondDimFails) {
  Node node = MakeNode("TopK", 1, 2, {{"k", IntAttr(1)}});
  std::vector<Tensor> out = RunAll(node, {F32s({1, 4, 2})}, 1);
  ASSERT_EQ(out.size(), 2u);
  ExpectNear(out[0], {4});
  ExpectError(MakeNode("TopK", 2, 2), {F32s({1, 4, 2}), I64s({4})}, 11, "K = 4");
  ExpectValueNeeded(MakeNode("TopK", 2, 2), {F32s({1, 4, 2}), I64s({1})}, 1, 11);
}

TEST(CumSumTest, PlainExclusiveReverseAndInt) {
  const Tensor axis = MakeTensor<int32_t>({}, {-1});
  ExpectNear(RunOne(MakeNode("CumSum", 2), {F32s({1, 2, 3}), axis}, 14, {3}), {1, 3, 6});
  Node both = MakeNode("CumSum", 2, 1, {{"exclusive", IntAttr(1)}, {"reverse", IntAttr(1)}});
  ExpectNear(RunOne(both, {F32s({1, 2, 3}), axis}, 14, {3}), {5, 3, 0});
  Tensor ints = RunOne(MakeNode("CumSum", 2), {MakeTensor<int64_t>({2, 2}, {1, 2, 3, 4}), I64({}, {0})}, 14, {2, 2});
  EXPECT_EQ(Values<int64_t>(ints), (std::vector<int64_t>{1, 2, 4, 6}));
  ExpectError(MakeNode("CumSum", 2), {F32s({1, 2}), I64({}, {1})}, 14, "axis 1");
}

// =============================================================================================
// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout

TEST(ReshapeTest, ZeroCopiesDimAndMinusOneIsInferred) {
  Tensor out = RunOne(MakeNode("Reshape", 2), {Iota({2, 3, 4}), I64s({0, -1})}, 13, {2, 12});
  ExpectNear(out, std::vector<float>(Values<float>(Iota({24}))));
}

TEST(ReshapeTest, AllowZeroKeepsLiteralZeroAndOpsetOneUsesAttribute) {
  Node allow = MakeNode("Reshape", 2, 1, {{"allowzero", IntAttr(1)}});
  RunOne(allow, {F32({0, 3}, {}), I64s({3, 0})}, 14, {3, 0});
  Node attr = MakeNode("Reshape", 1, 1, {{"shape", IntsAttr({3, 2})}});
  RunOne(attr, {Iota({6})}, 4, {3, 2});
}

TEST(ReshapeTest, ErrorsAndUnknownShape) {
  ExpectError(MakeNode("Reshape", 2), {Iota({6}), I64s({4, -1})}, 13, "cannot reshape");
  ExpectError(MakeNode("Reshape", 2), {Iota({6}), I64s({-1, -1})}, 13, "two -1");
  ExpectValueNeeded(MakeNode("Reshape", 2), {Iota({6}), I64s({2, 3})}, 1, 13);
}

TEST(FlattenTest, DefaultNegativeAndZeroAxis) {
  RunOne(MakeNode("Flatten", 1), {Iota({2, 3, 4})}, 13, {2, 12});
  RunOne(MakeNode("Flatten", 1, 1, {{"axis", IntAttr(-1)}}), {Iota({2, 3, 4})}, 13, {6, 4});
  RunOne(MakeNode("Flatten", 1, 1, {{"axis", IntAttr(0)}}), {Iota({2, 3, 4})}, 13, {1, 24});
  ExpectError(MakeNode("Flatten", 1, 1, {{"axis", IntAttr(4)}}), {Iota({2, 3, 4})}, 13, "axis 4");
}

TEST(SqueezeTest, AttributeInputAndAllOnes) {
  RunOne(MakeNode("Squeeze", 1, 1, {{"axes", IntsAttr({0})}}), {Iota({1, 3, 1})}, 11, {3, 1});
  RunOne(MakeNode("Squeeze", 2), {Iota({1, 3, 1}), I64s({-1})}, 13, {1, 3});
  RunOne(MakeNode("Squeeze", 1), {Iota({1, 3, 1})}, 13, {3});
  ExpectError(MakeNode("Squeeze", 2), {Iota({1, 3, 1}), I64s({1})}, 13, "cannot squeeze axis 1");
}

TEST(UnsqueezeTest, UnsortedNegativeAxesFromInputAndAttribute) {
  Tensor out = RunOne(MakeNode("Unsqueeze", 2), {Iota({3, 4}), I64s({-1, 0})}, 13, {1, 3, 4, 1});
  EXPECT_EQ(out.numel(), 12);
  RunOne(MakeNode("Unsqueeze", 1, 1, {{"axes", IntsAttr({1})}}), {Iota({3})}, 11, {3, 1});
  ExpectError(MakeNode("Unsqueeze", 2), {Iota({3}), I64s({0, 0})}, 13, "repeated");
}

TEST(IdentityTest, CopiesBool) {
  Tensor out = RunOne(MakeNode("Identity", 1), {MakeTensor<bool>({2}, {true, false})}, 16, {2});
  EXPECT_EQ(Values<bool>(out), (std::vector<bool>{true, false}));
}

TEST(DropoutTest, InferenceCopiesAndMaskIsAllTrue) {
  std::vector<Tensor> out = RunAll(MakeNode("Dropout", 1, 2), {F32s({1, -2})}, 13);
  ASSERT_EQ(out.size(), 2u);
  ExpectNear(out[0], {1, -2});
  EXPECT_EQ(Values<bool>(out[1]), (std::vector<bool>{true, true}));
  // Opset 7's mask has the data's type.
  out = RunAll(MakeNode("Dropout", 1, 2, {{"ratio", FloatAttr(0.3f)}}), {F32s({5})}, 7);
  ASSERT_EQ(out.size(), 2u);
  ExpectNear(out[1], {1});
}

// training_mode: about 1 − ratio of the elements are kept, each scaled by 1 / (1 − ratio), the mask
// says which; the same node draws the same mask every run, another seed another one.
TEST(DropoutTest, TrainingModeKeepsAboutOneMinusRatioScaled) {
  const Tensor ones = MakeTensor<float>({1000}, std::vector<float>(1000, 1.0f));
  const std::vector<Tensor> in = {ones, F32({}, {0.25f}), MakeTensor<bool>({}, {true})};
  const Node node = MakeNode("Dropout", 3, 2, {{"seed", IntAttr(7)}});
  const std::vector<Tensor> out = RunAll(node, in, 13);
  ASSERT_EQ(out.size(), 2u);
  int kept = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    const bool keep = out[1].data<bool>()[i];
    kept += keep ? 1 : 0;
    EXPECT_FLOAT_EQ(out[0].data<float>()[i], keep ? 1.0f / 0.75f : 0.0f);
  }
  EXPECT_NEAR(kept, 750, 60);  // binomial(1000, 0.75): sd ≈ 14
  EXPECT_EQ(Values<bool>(RunAll(node, in, 13)[1]), Values<bool>(out[1])) << "the same node, the same draws";
  const Node other = MakeNode("Dropout", 3, 2, {{"seed", IntAttr(8)}});
  EXPECT_NE(Values<bool>(RunAll(other, in, 13)[1]), Values<bool>(out[1]));
  ExpectError(node, {ones, F32({}, {1.0f}), MakeTensor<bool>({}, {true})}, 13, "outside [0, 1)");
}

// =============================================================================================
// Transpose, Concat, Split

TEST(TransposeTest, DefaultReversesAndPermAttribute) {
  ExpectNear(RunOne(MakeNode("Transpose", 1), {Iota({2, 3})}, 13, {3, 2}), {0, 3, 1, 4, 2, 5});
  Node perm = MakeNode("Transpose", 1, 1, {{"perm", IntsAttr({1, 2, 0})}});
  Tensor out = RunOne(perm, {MakeTensor<int8_t>({2, 1, 2}, {1, 2, 3, 4})}, 13, {1, 2, 2});
  EXPECT_EQ(Values<int8_t>(out), (std::vector<int8_t>{1, 3, 2, 4}));
  ExpectError(MakeNode("Transpose", 1, 1, {{"perm", IntsAttr({0, 0})}}), {Iota({2, 3})}, 13, "perm");
}

TEST(ConcatTest, NegativeAxisInt64AndMismatch) {
  Node node = MakeNode("Concat", 2, 1, {{"axis", IntAttr(-1)}});
  Tensor out = RunOne(node, {I64({2, 1}, {1, 2}), I64({2, 2}, {3, 4, 5, 6})}, 13, {2, 3});
  EXPECT_EQ(Values<int64_t>(out), (std::vector<int64_t>{1, 3, 4, 2, 5, 6}));
  ExpectNear(RunOne(MakeNode("Concat", 2, 1, {{"axis", IntAttr(0)}}), {F32({0, 2}, {}), Iota({1, 2})}, 13, {1, 2}),
             {0, 1});
  ExpectError(node, {Iota({2, 1}), Iota({3, 1})}, 13, "does not match");
}

TEST(SplitTest, AttributeInputEqualAndNumOutputs) {
  std::vector<Tensor> out = RunAll(MakeNode("Split", 1, 2, {{"split", IntsAttr({1, 2})}}), {Iota({3})}, 11);
  ASSERT_EQ(out.size(), 2u);
  ExpectNear(out[0], {0});
  ExpectNear(out[1], {1, 2});
  out = RunAll(MakeNode("Split", 2, 2, {{"axis", IntAttr(1)}}), {Iota({2, 3}), I64s({2, 1})}, 13);
  ASSERT_EQ(out.size(), 2u);
  ExpectNear(out[0], {0, 1, 3, 4});
  ExpectNear(out[1], {2, 5});
  out = RunAll(MakeNode("Split", 1, 2), {Iota({4})}, 13);
  ASSERT_EQ(out.size(), 2u);
  ExpectNear(out[1], {2, 3});
  // num_outputs: chunks of ceil(5 / 3) = 2, the last one shorter.
  out = RunAll(MakeNode("Split", 1, 3, {{"num_outputs", IntAttr(3)}}), {Iota({5})}, 18);
  ASSERT_EQ(out.size(), 3u);
  ExpectNear(out[2], {4});
  ExpectError(MakeNode("Split", 1, 2), {Iota({5})}, 13, "does not split evenly");
}

// =============================================================================================
// Slice

TEST(SliceTest, OpsetNineAttributes) {
  Node node = MakeNode("Slice", 1, 1, {{"starts", IntsAttr({1})}, {"ends", IntsAttr({1000})}, {"axes", IntsAttr({1})}});
  ExpectNear(RunOne(node, {Iota({2, 3})}, 9, {2, 2}), {1, 2, 4, 5});
}

TEST(SliceTest, NegativeStepsClampHugeEnds) {
  // Reverse the whole axis: start INT64_MAX clamps to dim-1, end INT64_MIN clamps to -1.
  Tensor out =
      RunOne(MakeNode("Slice", 5), {Iota({5}), I64s({kI64Max}), I64s({kI64Min}), I64s({0}), I64s({-2})}, 13, {3});
  ExpectNear(out, {4, 2, 0});
  Tensor fwd =
      RunOne(MakeNode("Slice", 5), {Iota({2, 5}), I64s({-4}), I64s({kI64Max}), I64s({-1}), I64s({2})}, 13, {2, 2});
  ExpectNear(fwd, {1, 3, 6, 8});
  RunOne(Omit(MakeNode("Slice", 5), {3, 4}), {Iota({4}), I64s({10}), I64s({20}), Tensor{}, Tensor{}}, 13, {0});
}

TEST(SliceTest, ZeroStepIsAnErrorAndStartsMustBeKnown) {
  ExpectError(MakeNode("Slice", 5), {Iota({4}), I64s({0}), I64s({2}), I64s({0}), I64s({0})}, 13, "steps");
  ExpectValueNeeded(MakeNode("Slice", 3), {Iota({4}), I64s({0}), I64s({2})}, 1, 13);
}

// =============================================================================================
// Gather family, Scatter family

TEST(GatherTest, AxisOneNegativeIndices2DIndices) {
  Node node = MakeNode("Gather", 2, 1, {{"axis", IntAttr(1)}});
  Tensor out = RunOne(node, {Iota({2, 3}), I64({1, 2}, {-1, 0})}, 13, {2, 1, 2});
  ExpectNear(out, {2, 0, 5, 3});
  ExpectError(node, {Iota({2, 3}), I64s({3})}, 13, "index 3");
}

TEST(GatherTest, Float16DataIsMovedBitExact) {
  Tensor data(DType::kF16, {3});
  for (int i = 0; i < 3; ++i) data.data<Float16>()[i] = Float16(static_cast<float>(i) + 0.5f);
  Tensor out = RunOne(MakeNode("Gather", 2), {data, MakeTensor<int32_t>({2}, {2, 0})}, 13, {2});
  ASSERT_EQ(out.dtype(), DType::kF16);
  EXPECT_EQ(static_cast<float>(out.data<Float16>()[0]), 2.5f);
  EXPECT_EQ(static_cast<float>(out.data<Float16>()[1]), 0.5f);
}

TEST(GatherElementsTest, AxisOneWithNegativeIndex) {
  Node node = MakeNode("GatherElements", 2, 1, {{"axis", IntAttr(1)}});
  ExpectNear(RunOne(node, {F32({2, 2}, {1, 2, 3, 4}), I64({2, 2}, {0, 0, -1, 0})}, 13, {2, 2}), {1, 1, 4, 3});
}

TEST(GatherNDTest, BatchDimsOne) {
  Node node = MakeNode("GatherND", 2, 1, {{"batch_dims", IntAttr(1)}});
  // data [2][2][2]; per batch, index [1] picks row 1, index [0] row 0.
  Tensor out = RunOne(node, {Iota({2, 2, 2}), I64({2, 1}, {1, 0})}, 13, {2, 2});
  ExpectNear(out, {2, 3, 4, 5});
  Tensor elems = RunOne(MakeNode("GatherND", 2), {Iota({2, 2}), I64({2, 2}, {0, 0, 1, 1})}, 13, {2});
  ExpectNear(elems, {0, 3});
}

TEST(ScatterTest, ScatterElementsAddWithDuplicatesAndOldScatter) {
  Node add = MakeNode("ScatterElements", 3, 1, {{"axis", IntAttr(1)}, {"reduction", StringAttr("add")}});
  Tensor out = RunOne(add, {F32({1, 3}, {1, 2, 3}), I64({1, 2}, {1, 1}), F32({1, 2}, {10, 20})}, 16, {1, 3});
  ExpectNear(out, {1, 32, 3});
  Node old = MakeNode("Scatter", 3);
  ExpectNear(RunOne(old, {F32s({0, 0, 0}), I64s({-1}), F32s({7})}, 10, {3}), {0, 0, 7});
  ExpectError(add, {F32({1, 3}, {1, 2, 3}), I64({1, 1}, {3}), F32({1, 1}, {1})}, 16, "index 3");
}

TEST(ScatterTest, ScatterNDMultipliesSlices) {
  Node node = MakeNode("ScatterND", 3, 1, {{"reduction", StringAttr("mul")}});
  Tensor out = RunOne(node, {F32({2, 2}, {1, 2, 3, 4}), I64({1, 1}, {1}), F32({1, 2}, {10, 100})}, 16, {2, 2});
  ExpectNear(out, {1, 2, 30, 400});
  ExpectNear(RunOne(MakeNode("ScatterND", 3), {F32s({1, 2}), I64({1, 1}, {0}), F32s({9})}, 13, {2}), {9, 2});
}

// =============================================================================================
// Expand, Tile, Pad

TEST(ExpandTest, BidirectionalBroadcastOnBool) {
  Tensor x = MakeTensor<bool>({3, 1}, {true, false, true});
  Tensor out = RunOne(MakeNode("Expand", 2), {x, I64s({2, 1, 2})}, 13, {2, 3, 2});
  EXPECT_EQ(Values<bool>(out),
            (std::vector<bool>{true, true, false, false, true, true, true, true, false, false, true, true}));
  ExpectError(MakeNode("Expand", 2), {Iota({3}), I64s({2})}, 13, "broadcast");
  ExpectValueNeeded(MakeNode("Expand", 2), {Iota({3}), I64s({3})}, 1, 13);
}

TEST(TileTest, RepeatsEachAxis) {
  Tensor out = RunOne(MakeNode("Tile", 2), {MakeTensor<int32_t>({1, 2}, {1, 2}), I64s({2, 2})}, 13, {2, 4});
  EXPECT_EQ(Values<int32_t>(out), (std::vector<int32_t>{1, 2, 1, 2, 1, 2, 1, 2}));
}

TEST(PadTest, ConstantValueInputAndNegativeCrop) {
  Node node = MakeNode("Pad", 3);
  Tensor out = RunOne(node, {Iota({2, 2}), I64s({0, 1, 1, -1}), F32({}, {9})}, 13, {3, 2});
  ExpectNear(out, {9, 0, 9, 2, 9, 9});
}

TEST(PadTest, ReflectEdgeWrapModes) {
  const Tensor x = F32s({1, 2, 3});
  const Tensor pads = I64s({2, 2});
  ExpectNear(RunOne(MakeNode("Pad", 2, 1, {{"mode", StringAttr("reflect")}}), {x, pads}, 13, {7}),
             {3, 2, 1, 2, 3, 2, 1});
  ExpectNear(RunOne(MakeNode("Pad", 2, 1, {{"mode", StringAttr("edge")}}), {x, pads}, 13, {7}), {1, 1, 1, 2, 3, 3, 3});
  ExpectNear(RunOne(MakeNode("Pad", 2, 1, {{"mode", StringAttr("wrap")}}), {x, pads}, 19, {7}), {2, 3, 1, 2, 3, 1, 2});
}

TEST(PadTest, OpsetTwoAttributesAndOpset18Axes) {
  Node old = MakeNode("Pad", 1, 1, {{"pads", IntsAttr({1, 0})}, {"value", FloatAttr(-1)}});
  ExpectNear(RunOne(old, {F32s({5})}, 2, {2}), {-1, 5});
  Node axes = Omit(MakeNode("Pad", 4), {2});
  Tensor out = RunOne(axes, {MakeTensor<int64_t>({2, 1}, {7, 8}), I64s({1, 0}), Tensor{}, I64s({-1})}, 18, {2, 2});
  EXPECT_EQ(Values<int64_t>(out), (std::vector<int64_t>{0, 7, 0, 8}));
  ExpectError(MakeNode("Pad", 2, 1, {{"mode", StringAttr("mirror")}}), {F32s({1}), I64s({0, 0})}, 13, "mirror");
}

// =============================================================================================
// Shape, Size, Constant, ConstantOfShape, Range, EyeLike, OneHot, Trilu, NonZero

TEST(ShapeTest, StartEndFromOpset15) {
  Node node = MakeNode("Shape", 1, 1, {{"start", IntAttr(1)}, {"end", IntAttr(-1)}});
  EXPECT_EQ(Values<int64_t>(RunOne(node, {Iota({2, 3, 4, 5})}, 15, {2})), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(Values<int64_t>(RunOne(node, {Iota({2, 3})}, 13, {2})), (std::vector<int64_t>{2, 3}));
  Node clip = MakeNode("Shape", 1, 1, {{"start", IntAttr(-10)}});
  EXPECT_EQ(Values<int64_t>(RunOne(clip, {Iota({2, 3})}, 15, {2})), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Values<int64_t>(RunOne(MakeNode("Size", 1), {Iota({2, 3})}, 13, {})), std::vector<int64_t>{6});
}

TEST(ConstantTest, AttributeForms) {
  ExpectNear(RunOne(MakeNode("Constant", 0, 1, {{"value_floats", FloatsAttr({1, 2})}}), {}, 13, {2}), {1, 2});
  Tensor i = RunOne(MakeNode("Constant", 0, 1, {{"value_int", IntAttr(7)}}), {}, 13, {});
  EXPECT_EQ(Values<int64_t>(i), std::vector<int64_t>{7});
  Attribute tensor;
  tensor.kind = Attribute::Kind::kTensor;
  tensor.tensor = std::make_shared<Tensor>(MakeTensor<int32_t>({2}, {3, 4}));
  Tensor t = RunOne(MakeNode("Constant", 0, 1, {{"value", tensor}}), {}, 13, {2});
  EXPECT_EQ(Values<int32_t>(t), (std::vector<int32_t>{3, 4}));
  ExpectError(MakeNode("Constant", 0, 1, {{"sparse_value", tensor}}), {}, 13, "sparse_value");
}

TEST(ConstantOfShapeTest, DefaultFloatZeroAndInt64Value) {
  ExpectNear(RunOne(MakeNode("ConstantOfShape", 1), {I64s({2})}, 13, {2}), {0, 0});
  Attribute value;
  value.kind = Attribute::Kind::kTensor;
  value.tensor = std::make_shared<Tensor>(I64({1}, {kI64Max}));
  Tensor out = RunOne(MakeNode("ConstantOfShape", 1, 1, {{"value", value}}), {I64s({1, 2})}, 13, {1, 2});
  EXPECT_EQ(Values<int64_t>(out), (std::vector<int64_t>{kI64Max, kI64Max}));
  ExpectValueNeeded(MakeNode("ConstantOfShape", 1), {I64s({2})}, 0, 13);
}

TEST(RangeTest, FloatIntAndZeroDelta) {
  ExpectNear(RunOne(MakeNode("Range", 3), {F32({}, {1}), F32({}, {2}), F32({}, {0.3f})}, 13, {4}),
             {1, 1.3f, 1.6f, 1.9f});
  Tensor ints =
      RunOne(MakeNode("Range", 3),
             {MakeTensor<int32_t>({}, {10}), MakeTensor<int32_t>({}, {4}), MakeTensor<int32_t>({}, {-3})}, 13, {2});
  EXPECT_EQ(Values<int32_t>(ints), (std::vector<int32_t>{10, 7}));
  ExpectError(MakeNode("Range", 3), {I64({}, {0}), I64({}, {4}), I64({}, {0})}, 13, "delta");
}

TEST(EyeLikeTest, OffsetDiagonalAndDType) {
  Node node = MakeNode("EyeLike", 1, 1, {{"k", IntAttr(1)}, {"dtype", IntAttr(7)}});  // 7: ONNX int64
  Tensor out = RunOne(node, {Iota({2, 3})}, 13, {2, 3});
  EXPECT_EQ(Values<int64_t>(out), (std::vector<int64_t>{0, 1, 0, 0, 0, 1}));
}

TEST(OneHotTest, AxisZeroAndNegativeIndex) {
  Node node = MakeNode("OneHot", 3, 1, {{"axis", IntAttr(0)}});
  Tensor out = RunOne(node, {I64s({0, -1}), F32({}, {3}), F32s({0, 5})}, 11, {3, 2});
  ExpectNear(out, {5, 0, 0, 0, 0, 5});
}

TEST(TriluTest, UpperAndLowerWithK) {
  ExpectNear(RunOne(MakeNode("Trilu", 1), {Iota({2, 3})}, 14, {2, 3}), {0, 1, 2, 0, 4, 5});
  Node lower = MakeNode("Trilu", 2, 1, {{"upper", IntAttr(0)}});
  ExpectNear(RunOne(lower, {Iota({2, 3}), I64({}, {-1})}, 14, {2, 3}), {0, 0, 0, 3, 0, 0});
}

TEST(NonZeroTest, CoordinatesAndValueDependentShape) {
  Tensor out = RunOne(MakeNode("NonZero", 1), {F32({2, 2}, {1, 0, 0, 3})}, 13, {2, 2});
  EXPECT_EQ(Values<int64_t>(out), (std::vector<int64_t>{0, 1, 0, 1}));
  ExpectValueNeeded(MakeNode("NonZero", 1), {F32s({1})}, 0, 13);
}

// =============================================================================================
// DepthToSpace, SpaceToDepth

TEST(DepthToSpaceTest, DcrAndCrdOrders) {
  // 4 channels of 1x1, blocksize 2: DCR reads channel (bh*2 + bw); CRD the same for one output channel.
  Node dcr = MakeNode("DepthToSpace", 1, 1, {{"blocksize", IntAttr(2)}});
  ExpectNear(RunOne(dcr, {Iota({1, 4, 1, 1})}, 13, {1, 1, 2, 2}), {0, 1, 2, 3});
  // 8 channels, 2 outputs: DCR interleaves the two output channels, CRD keeps them in blocks.
  ExpectNear(RunOne(dcr, {Iota({1, 8, 1, 1})}, 13, {1, 2, 2, 2}), {0, 2, 4, 6, 1, 3, 5, 7});
  Node crd = MakeNode("DepthToSpace", 1, 1, {{"blocksize", IntAttr(2)}, {"mode", StringAttr("CRD")}});
  ExpectNear(RunOne(crd, {Iota({1, 8, 1, 1})}, 13, {1, 2, 2, 2}), {0, 1, 2, 3, 4, 5, 6, 7});
  ExpectError(dcr, {Iota({1, 3, 1, 1})}, 13, "blocksize");
}

TEST(SpaceToDepthTest, InvertsDepthToSpaceDcr) {
  Node s2d = MakeNode("SpaceToDepth", 1, 1, {{"blocksize", IntAttr(2)}});
  Tensor deep = RunOne(s2d, {Iota({1, 2, 2, 4})}, 13, {1, 8, 1, 2});
  ExpectNear(deep, {0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15});
  Node d2s = MakeNode("DepthToSpace", 1, 1, {{"blocksize", IntAttr(2)}});
  ExpectNear(RunOne(d2s, {deep}, 13, {1, 2, 2, 4}), Values<float>(Iota({16})));
}

// =============================================================================================
// Resize, Upsample

TEST(ResizeTest, NearestUpsampleWithScales) {
  Node node = MakeNode("Resize", 3, 1, {{"coordinate_transformation_mode", StringAttr("asymmetric")}});
  node.inputs[1] = "";
  Tensor out = RunOne(node, {F32({1, 1, 2, 2}, {1, 2, 3, 4}), Tensor{}, F32s({1, 1, 2, 2})}, 13, {1, 1, 4, 4});
  ExpectNear(out, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

TEST(ResizeTest, LinearHalfPixelClampsAtTheEdges) {
  Node node = Omit(MakeNode("Resize", 3, 1, {{"mode", StringAttr("linear")}}), {1});
  ExpectNear(RunOne(node, {F32s({1, 2, 3, 4}), Tensor{}, F32s({2})}, 13, {8}),
             {1, 1.25f, 1.75f, 2.25f, 2.75f, 3.25f, 3.75f, 4});
}

TEST(ResizeTest, LinearAlignCornersWithSizes) {
  Node node =
      Omit(MakeNode("Resize", 4, 1,
                    {{"mode", StringAttr("linear")}, {"coordinate_transformation_mode", StringAttr("align_corners")}}),
           {1, 2});
  ExpectNear(RunOne(node, {F32s({0, 3}), Tensor{}, Tensor{}, I64s({4})}, 13, {4}), {0, 1, 2, 3});
}

TEST(ResizeTest, CubicWithAndWithoutExcludeOutside) {
  // Keys kernel, a = -0.75: at r = 0.5 the weights are -0.09375, 0.59375, 0.59375, -0.09375.
  const Tensor x = F32s({0, 1, 4, 9});
  Node cubic =
      Omit(MakeNode("Resize", 3, 1,
                    {{"mode", StringAttr("cubic")}, {"coordinate_transformation_mode", StringAttr("asymmetric")}}),
           {1});
  Tensor out = RunOne(cubic, {x, Tensor{}, F32s({2})}, 13, {8});
  EXPECT_NEAR(out.data<float>()[3], 2.125f, 1e-5f);    // x = 1.5
  EXPECT_NEAR(out.data<float>()[1], 0.21875f, 1e-5f);  // x = 0.5, tap -1 repeats element 0
  cubic.attributes["exclude_outside"] = IntAttr(1);
  out = RunOne(cubic, {x, Tensor{}, F32s({2})}, 13, {8});
  EXPECT_NEAR(out.data<float>()[1], 0.2f, 1e-5f);  // tap -1 dropped, weights renormalised
}

TEST(ResizeTest, NearestModesAtExactHalves) {
  const Tensor x = F32s({10, 20, 30});
  for (const auto& [mode, second] : {std::pair<std::string, float>{"round_prefer_floor", 10},
                                     {"round_prefer_ceil", 20},
                                     {"floor", 10},
                                     {"ceil", 20}}) {
    SCOPED_TRACE(mode);
    Node node = Omit(
        MakeNode("Resize", 4, 1,
                 {{"nearest_mode", StringAttr(mode)}, {"coordinate_transformation_mode", StringAttr("asymmetric")}}),
        {1, 2});
    Tensor out = RunOne(node, {x, Tensor{}, Tensor{}, I64s({6})}, 13, {6});
    EXPECT_EQ(out.data<float>()[1], second);  // x = 0.5
  }
}

TEST(ResizeTest, TfCropAndResizeExtrapolates) {
  Node node = MakeNode("Resize", 4, 1,
                       {{"mode", StringAttr("linear")},
                        {"coordinate_transformation_mode", StringAttr("tf_crop_and_resize")},
                        {"extrapolation_value", FloatAttr(-7)}});
  node.inputs[2] = "";
  // roi [0.5, 1.5] of a 3-element axis: x = 1 + o * 2 * 2 / 2 → 1, 3 (outside).
  Tensor out = RunOne(node, {F32s({0, 10, 20}), F32s({0.5f, 1.5f}), Tensor{}, I64s({2})}, 13, {2});
  ExpectNear(out, {10, -7});
}

TEST(ResizeTest, OpsetTenNearestCeilsWhenDownsampling) {
  Node node = MakeNode("Resize", 2);
  ExpectNear(RunOne(node, {F32({1, 1, 1, 4}, {1, 2, 3, 4}), F32s({1, 1, 1, 0.6f})}, 10, {1, 1, 1, 2}), {1, 3});
}

TEST(ResizeTest, AlignCornersUsesUnflooredResizedLength) {
  // length_resized = 4 * 0.6 = 2.4: x(1) = 3 / 1.4 (the ONNX test data's 3.142857 for 1..4).
  Node node =
      Omit(MakeNode("Resize", 3, 1,
                    {{"mode", StringAttr("linear")}, {"coordinate_transformation_mode", StringAttr("align_corners")}}),
           {1});
  ExpectNear(RunOne(node, {F32s({1, 2, 3, 4}), Tensor{}, F32s({0.6f})}, 13, {2}), {1, 1 + 3 / 1.4f});
}

TEST(ResizeTest, Opset18AxesAndKeepAspectRatio) {
  const Tensor x = Iota({1, 1, 2, 4});
  Node node = Omit(
      MakeNode("Resize", 4, 1, {{"axes", IntsAttr({2, 3})}, {"keep_aspect_ratio_policy", StringAttr("not_larger")}}),
      {1, 2});
  RunOne(node, {x, Tensor{}, Tensor{}, I64s({4, 4})}, 18, {1, 1, 2, 4});
  node.attributes["keep_aspect_ratio_policy"] = StringAttr("not_smaller");
  RunOne(node, {x, Tensor{}, Tensor{}, I64s({4, 4})}, 18, {1, 1, 4, 8});
  Node plain = Omit(MakeNode("Resize", 3, 1, {{"axes", IntsAttr({-1})}}), {1});
  RunOne(plain, {x, Tensor{}, F32s({0.5f})}, 18, {1, 1, 2, 2});
}

TEST(ResizeTest, AntialiasWidensTheLinearFilterWhenDownsampling) {
  // scale 0.5: a triangle of half-width 2, normalised: weights 1/8, 3/8, 3/8, 1/8 around x = 2o + 0.5.
  Node node = Omit(MakeNode("Resize", 3, 1, {{"mode", StringAttr("linear")}, {"antialias", IntAttr(1)}}), {1});
  ExpectNear(RunOne(node, {Iota({8}), Tensor{}, F32s({0.5f})}, 18, {4}), {0.625f, 2.5f, 4.5f, 6.375f});
}

TEST(ResizeTest, IntegerDataAndErrors) {
  Node node = Omit(MakeNode("Resize", 3, 1, {{"mode", StringAttr("linear")}}), {1});
  Tensor out = RunOne(node, {MakeTensor<uint8_t>({2}, {0, 255}), Tensor{}, F32s({2})}, 13, {4});
  EXPECT_EQ(Values<uint8_t>(out), (std::vector<uint8_t>{0, 64, 191, 255}));
  Node both = MakeNode("Resize", 4);
  both.inputs[1] = "";
  ExpectError(both, {F32s({1, 2}), Tensor{}, F32s({2}), I64s({4})}, 13, "not both");
  ExpectError(Omit(MakeNode("Resize", 3, 1, {{"mode", StringAttr("area")}}), {1}), {F32s({1}), Tensor{}, F32s({2})}, 13,
              "area");
  ExpectValueNeeded(Omit(MakeNode("Resize", 3), {1}), {F32s({1}), F32s({}), F32s({2})}, 2, 13);
}

TEST(UpsampleTest, OpsetSevenAttributeAndOpsetNineInput) {
  Node attr = MakeNode("Upsample", 1, 1, {{"scales", FloatsAttr({1, 2})}});
  ExpectNear(RunOne(attr, {F32({1, 2}, {1, 2})}, 7, {1, 4}), {1, 1, 2, 2});
  Node linear = MakeNode("Upsample", 2, 1, {{"mode", StringAttr("linear")}});
  ExpectNear(RunOne(linear, {F32s({1, 3}), F32s({2})}, 9, {4}), {1, 2, 3, 3});
}

}  // namespace
}  // namespace chipfit::testing
