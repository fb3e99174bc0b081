// Reference NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, Einsum, Det: each against hand-computed or formula
// results.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/reference/reference_kernels.h"
#include "tests/core/reference/ref_test_util.h"

namespace chipfit::testing {
namespace {

void ExpectShape(const Tensor& t, const Shape& shape) { EXPECT_EQ(t.shape(), shape) << DescribeTensor(t); }

// Runs only the shape function, on dtypes and shapes (dims of -1: known only at run time).
std::vector<ValueInfo> InferOnly(const Node& node, const std::vector<ValueInfo>& inputs) {
  std::vector<const ValueInfo*> ptrs;
  for (const ValueInfo& in : inputs) ptrs.push_back(&in);
  InferContext ctx(node, 13, ptrs);
  const Status status = FindReferenceOp(node.op_type, "")->infer(ctx);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return ctx.outputs();
}

Node Loss(const std::string& op, const std::string& reduction, size_t inputs = 2, size_t outputs = 1) {
  return MakeNode(op, inputs, outputs, {{"reduction", StringAttr(reduction)}});
}
Node LossIgnoring(const std::string& op, const std::string& reduction, int64_t ignore_index, size_t inputs = 2) {
  return MakeNode(op, inputs, 1, {{"reduction", StringAttr(reduction)}, {"ignore_index", IntAttr(ignore_index)}});
}

// ----------------------------------------------------------------------------------------------------------------
// NegativeLogLikelihoodLoss

// Rows of log-probabilities for 3 classes; the loss of a row is minus its entry at the target class.
const Tensor kLogP = F32({2, 3}, {-1, -2, -3, -4, -5, -6});
const Tensor kWeights = F32({3}, {1, 2, 0.5f});

TEST(NllLossTest, ReductionsOfPickedEntries) {
  const Tensor target = I64({2}, {2, 0});
  const Tensor none = RunOne(Loss("NegativeLogLikelihoodLoss", "none"), {kLogP, target});
  ExpectShape(none, {2});
  ExpectNear(none, {3, 4});
  const Tensor sum = RunOne(Loss("NegativeLogLikelihoodLoss", "sum"), {kLogP, target});
  ExpectShape(sum, {});
  ExpectNear(sum, {7});
  const Tensor mean = RunOne(MakeNode("NegativeLogLikelihoodLoss", 2), {kLogP, target});  // mean is the default
  ExpectShape(mean, {});
  ExpectNear(mean, {3.5f});
}

TEST(NllLossTest, WeightedMeanDividesByTheAppliedWeights) {
  const Tensor target = I64({2}, {2, 0});
  ExpectNear(RunOne(Loss("NegativeLogLikelihoodLoss", "none", 3), {kLogP, target, kWeights}), {1.5f, 4});
  // (3 * 0.5 + 4 * 1) / (0.5 + 1), not / 2.
  ExpectNear(RunOne(Loss("NegativeLogLikelihoodLoss", "mean", 3), {kLogP, target, kWeights}), {5.5f / 1.5f});
}

TEST(NllLossTest, NegativeIgnoreIndexZeroesTheLossAndLeavesTheMean) {
  const Tensor target = I64({2}, {-1, 1});
  ExpectNear(RunOne(LossIgnoring("NegativeLogLikelihoodLoss", "none", -1), {kLogP, target}), {0, 5});
  ExpectNear(RunOne(LossIgnoring("NegativeLogLikelihoodLoss", "mean", -1), {kLogP, target}), {5});
}

TEST(NllLossTest, IgnoreIndexPastTheClassesWithWeights) {
  const Tensor target = I64({2}, {10, 1});
  // Only the second row counts: 5 * 2 / 2.
  ExpectNear(RunOne(LossIgnoring("NegativeLogLikelihoodLoss", "mean", 10, 3), {kLogP, target, kWeights}), {5});
  ExpectNear(RunOne(LossIgnoring("NegativeLogLikelihoodLoss", "sum", 10, 3), {kLogP, target, kWeights}), {10});
}

TEST(NllLossTest, IgnoreIndexInsideTheClassRangeIsIgnoredToo) {
  const Tensor target = MakeTensor<int32_t>({2}, {1, 0});
  ExpectNear(RunOne(LossIgnoring("NegativeLogLikelihoodLoss", "none", 0), {kLogP, target}), {2, 0});
}

TEST(NllLossTest, SpatialDimsKeepTheirPlace) {
  // N=1, C=2, d1=2: class 0 holds {-0.1, -0.2}, class 1 holds {-0.3, -0.4}.
  const Tensor x = F32({1, 2, 2}, {-0.1f, -0.2f, -0.3f, -0.4f});
  const Tensor loss = RunOne(Loss("NegativeLogLikelihoodLoss", "none"), {x, I64({1, 2}, {1, 0})});
  ExpectShape(loss, {1, 2});
  ExpectNear(loss, {0.3f, 0.2f});
}

TEST(NllLossTest, DoubleInputStaysDouble) {
  const Tensor x = MakeTensor<double>({1, 2}, {-0.25, -0.75});
  const Tensor loss = RunOne(Loss("NegativeLogLikelihoodLoss", "sum"), {x, I64({1}, {1})});
  ASSERT_EQ(loss.dtype(), DType::kF64);
  EXPECT_DOUBLE_EQ(loss.data<double>()[0], 0.75);
}

TEST(NllLossTest, TargetOutsideTheClassesIsAnError) {
  ExpectError(Loss("NegativeLogLikelihoodLoss", "sum"), {kLogP, I64({2}, {0, 3})}, StatusCode::kInvalidArgument,
              "target value 3");
  // An ignore_index does not excuse other out-of-range values.
  ExpectError(LossIgnoring("NegativeLogLikelihoodLoss", "sum", -100), {kLogP, I64({2}, {-1, 0})},
              StatusCode::kInvalidArgument, "target value -1");
}

TEST(NllLossTest, BadShapesAndAttributesAreNamed) {
  ExpectError(Loss("NegativeLogLikelihoodLoss", "sum"), {kLogP, I64({3}, {0, 0, 0})}, StatusCode::kInvalidArgument,
              "does not match input");
  ExpectError(Loss("NegativeLogLikelihoodLoss", "sum"), {kLogP, I64({2, 1}, {0, 0})}, StatusCode::kInvalidArgument,
              "must have rank 1");
  ExpectError(Loss("NegativeLogLikelihoodLoss", "sum", 3), {kLogP, I64({2}, {0, 0}), F32({2}, {1, 1})},
              StatusCode::kInvalidArgument, "weight");
  ExpectError(Loss("NegativeLogLikelihoodLoss", "max"), {kLogP, I64({2}, {0, 0})}, StatusCode::kUnsupported,
              "reduction 'max'");
}

TEST(NllLossTest, ShapeFunctionFillsUnknownDimsFromTheInput) {
  const std::vector<ValueInfo> out =
      InferOnly(Loss("NegativeLogLikelihoodLoss", "none"), {{DType::kF16, {4, 3, -1}}, {DType::kI32, {-1, 5}}});
  EXPECT_EQ(out[0].dtype, DType::kF16);
  EXPECT_EQ(out[0].shape, (Shape{4, 5}));
  EXPECT_EQ(InferOnly(Loss("NegativeLogLikelihoodLoss", "sum"), {{DType::kF32, {4, 3}}, {DType::kI64, {4}}})[0].shape,
            Shape{});
}

// ----------------------------------------------------------------------------------------------------------------
// SoftmaxCrossEntropyLoss

// log_softmax({1, 2, 3}) = {1, 2, 3} - (3 + ln(1 + e^-1 + e^-2)).
const std::vector<float> kLogSoftmax123 = {-2.40760596f, -1.40760596f, -0.40760596f};

TEST(SceLossTest, LossIsMinusLogSoftmaxAtTheLabel) {
  const Tensor scores = F32({2, 3}, {1, 2, 3, 1, 2, 3});
  const std::vector<Tensor> out =
      RunAll(Loss("SoftmaxCrossEntropyLoss", "none", 2, 2), {scores, MakeTensor<int32_t>({2}, {0, 2})});
  ASSERT_EQ(out.size(), 2u);
  ExpectShape(out[0], {2});
  ExpectNear(out[0], {2.40760596f, 0.40760596f});
  ExpectShape(out[1], {2, 3});
  std::vector<float> both = kLogSoftmax123;
  both.insert(both.end(), kLogSoftmax123.begin(), kLogSoftmax123.end());
  ExpectNear(out[1], both);
}

TEST(SceLossTest, SoftmaxRunsOverTheClassAxisOfSpatialInputs) {
  // N=1, C=2, d1=2: position 0 has scores {0, 0}, position 1 has {0, ln 3} (softmax {1/4, 3/4}).
  const Tensor scores = F32({1, 2, 2}, {0, 0, 0, std::log(3.0f)});
  const Tensor loss = RunOne(Loss("SoftmaxCrossEntropyLoss", "none"), {scores, I64({1, 2}, {1, 1})});
  ExpectShape(loss, {1, 2});
  ExpectNear(loss, {std::log(2.0f), std::log(4.0f / 3.0f)});
}

TEST(SceLossTest, LargeScoresDoNotOverflow) {
  const Tensor loss = RunOne(Loss("SoftmaxCrossEntropyLoss", "sum"), {F32({1, 3}, {1001, 1002, 1003}), I64({1}, {0})});
  ExpectNear(loss, {2.40760596f});
}

TEST(SceLossTest, WeightedMeanWithIgnoredLabel) {
  const Tensor scores = F32({3, 3}, {1, 2, 3, 1, 2, 3, 1, 2, 3});
  const Node node = LossIgnoring("SoftmaxCrossEntropyLoss", "mean", -5, 3);
  const Tensor loss = RunOne(node, {scores, I64({3}, {0, -5, 2}), F32({3}, {2, 7, 1})});
  // (2 * 2.4076 + 1 * 0.4076) / (2 + 1); the ignored row's weight 7 does not count.
  ExpectNear(loss, {(2 * 2.40760596f + 0.40760596f) / 3});
}

TEST(SceLossTest, LabelOutOfRangeNamesTheLabels) {
  ExpectError(Loss("SoftmaxCrossEntropyLoss", "mean"), {F32({1, 3}, {1, 2, 3}), I64({1}, {-1})},
              StatusCode::kInvalidArgument, "labels value -1");
}

// ----------------------------------------------------------------------------------------------------------------
// Einsum

Node Einsum(const std::string& equation, size_t inputs) {
  return MakeNode("Einsum", inputs, 1, {{"equation", StringAttr(equation)}});
}

const Tensor kA2x3 = F32({2, 3}, {1, 2, 3, 4, 5, 6});
const Tensor kB3x2 = F32({3, 2}, {1, 0, 0, 1, 1, 1});

TEST(EinsumTest, ExplicitMatMulWithSpaces) {
  const Tensor y = RunOne(Einsum("ij, jk -> ik", 2), {kA2x3, kB3x2});
  ExpectShape(y, {2, 2});
  ExpectNear(y, {4, 5, 10, 11});
}

TEST(EinsumTest, ImplicitOutputIsTheSingleLettersSorted) {
  ExpectNear(RunOne(Einsum("ij,jk", 2), {kA2x3, kB3x2}), {4, 5, 10, 11});
  // "ba" has output "ab": a transpose.
  const Tensor t = RunOne(Einsum("ba", 1), {kA2x3});
  ExpectShape(t, {3, 2});
  ExpectNear(t, {1, 4, 2, 5, 3, 6});
  // Upper case sorts before lower case: "bA" -> "Ab" keeps the layout.
  ExpectNear(RunOne(Einsum("bA", 1), {kA2x3}), {1, 4, 2, 5, 3, 6});
}

TEST(EinsumTest, RepeatedLettersTakeTheDiagonal) {
  const Tensor m = F32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Tensor trace = RunOne(Einsum("ii", 1), {m});
  ExpectShape(trace, {});
  ExpectNear(trace, {15});
  ExpectNear(RunOne(Einsum("ii->i", 1), {m}), {1, 5, 9});
}

TEST(EinsumTest, SumsOverLettersMissingFromTheOutput) {
  ExpectNear(RunOne(Einsum("ij->i", 1), {kA2x3}), {6, 15});
  ExpectNear(RunOne(Einsum("ij->", 1), {kA2x3}), {21});
  ExpectNear(RunOne(Einsum("i,i", 2), {F32({3}, {1, 2, 3}), F32({3}, {4, 5, 6})}), {32});
}

TEST(EinsumTest, OuterProduct) {
  const Tensor y = RunOne(Einsum("i,j->ij", 2), {F32({2}, {1, 2}), F32({3}, {1, 10, 100})});
  ExpectShape(y, {2, 3});
  ExpectNear(y, {1, 10, 100, 2, 20, 200});
}

TEST(EinsumTest, BatchMatMul) {
  const Tensor a = F32({2, 1, 2}, {1, 2, 3, 4});
  const Tensor b = F32({2, 2, 1}, {1, 1, 2, -1});
  const Tensor y = RunOne(Einsum("bij,bjk->bik", 2), {a, b});
  ExpectShape(y, {2, 1, 1});
  ExpectNear(y, {3, 2});
}

TEST(EinsumTest, EllipsisBroadcastsLikeNumpy) {
  // a: batch 2 of 1x2 rows; b: one 2x1 matrix shared by the batch ("..." covers no dims in b).
  const Tensor a = F32({2, 1, 2}, {1, 2, 3, 4});
  const Tensor b = F32({2, 1}, {10, 1});
  const Tensor y = RunOne(Einsum("...ij,...jk->...ik", 2), {a, b});
  ExpectShape(y, {2, 1, 1});
  ExpectNear(y, {12, 34});
  // Size-1 batch dims broadcast against size-2.
  const Tensor c = F32({1, 2, 1}, {10, 1});
  ExpectNear(RunOne(Einsum("...ij,...jk->...ik", 2), {a, c}), {12, 34});
}

TEST(EinsumTest, EllipsisDiagonalAndImplicitEllipsisFirst) {
  const Tensor x = F32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor d = RunOne(Einsum("...ii->...i", 1), {x});
  ExpectShape(d, {2, 2});
  ExpectNear(d, {1, 4, 5, 8});
  // Implicit: "...ij" keeps the ellipsis dims first, then i, j: the identity.
  ExpectNear(RunOne(Einsum("...ij", 1), {x}), {1, 2, 3, 4, 5, 6, 7, 8});
  // An explicit output without "..." sums the ellipsis dims away.
  ExpectNear(RunOne(Einsum("...i->i", 1), {x}), {16, 20});
}

TEST(EinsumTest, ThreeOperandChain) {
  const Tensor c = F32({2, 1}, {1, -1});
  const Tensor y = RunOne(Einsum("ij,jk,kl->il", 3), {kA2x3, kB3x2, c});
  ExpectShape(y, {2, 1});
  ExpectNear(y, {-1, -1});  // (4 - 5), (10 - 11)
}

TEST(EinsumTest, OperandsThatShareNoLabelStillContractCorrectly) {
  // "ij,kl,jk->il" is the chain of ThreeOperandChain with the operands out of order.
  const Tensor c = F32({2, 1}, {1, -1});
  const Tensor y = RunOne(Einsum("ij,kl,jk->il", 3), {kA2x3, c, kB3x2});
  ExpectShape(y, {2, 1});
  ExpectNear(y, {-1, -1});
  // A diagonal in a later operand: sum_i x_i * m_ii.
  const Tensor m = F32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  ExpectNear(RunOne(Einsum("i,ii,j->j", 3), {F32({3}, {1, 1, 2}), m, F32({2}, {1, 10})}), {24, 240});
}

TEST(EinsumTest, IntegersAreExact) {
  const Tensor a = MakeTensor<int32_t>({3}, {100000, -3, 7});
  const Tensor b = MakeTensor<int32_t>({3}, {20000, 5, -2});
  const Tensor y = RunOne(Einsum("i,i->", 2), {a, b});
  ASSERT_EQ(y.dtype(), DType::kI32);
  EXPECT_EQ(y.data<int32_t>()[0], 2000000000 - 15 - 14);
}

TEST(EinsumTest, ZeroLengthSumGivesZeros) {
  const Tensor y = RunOne(Einsum("ij,jk->ik", 2), {F32({2, 0}, {}), F32({0, 2}, {})});
  ExpectShape(y, {2, 2});
  ExpectNear(y, {0, 0, 0, 0});
}

TEST(EinsumTest, ShapeFunctionKeepsUnknownDimsUnknown) {
  const std::vector<ValueInfo> out =
      InferOnly(Einsum("bij,bjk->bki", 2), {{DType::kF64, {-1, 2, 3}}, {DType::kF64, {1, -1, 4}}});
  EXPECT_EQ(out[0].dtype, DType::kF64);
  EXPECT_EQ(out[0].shape, (Shape{-1, 4, 2}));
}

TEST(EinsumTest, BadEquationsAreNamed) {
  ExpectError(Einsum("ij->k", 1), {kA2x3}, StatusCode::kInvalidArgument, "output label k");
  ExpectError(Einsum("ij->ii", 1), {kA2x3}, StatusCode::kInvalidArgument, "repeated");
  ExpectError(Einsum("ij,jk->ik", 1), {kA2x3}, StatusCode::kInvalidArgument, "2 input terms");
  ExpectError(Einsum("ijk", 1), {kA2x3}, StatusCode::kInvalidArgument, "does not fit");
  ExpectError(Einsum("ij,jk", 2), {kA2x3, kA2x3}, StatusCode::kInvalidArgument, "j is 2 in input 1");
  ExpectError(Einsum("i.j", 1), {kA2x3}, StatusCode::kInvalidArgument, "unexpected '.j'");
  ExpectError(MakeNode("Einsum", 1), {kA2x3}, StatusCode::kInvalidArgument, "equation");
}

// ----------------------------------------------------------------------------------------------------------------
// Det

TEST(DetTest, TwoByTwo) {
  const Tensor d = RunOne(MakeNode("Det", 1), {F32({2, 2}, {1, 2, 3, 4})});
  ExpectShape(d, {});
  ExpectNear(d, {-2});
}

TEST(DetTest, ZeroLeadingEntryNeedsAPivot) {
  // Cofactor expansion along row 0: 0 - 1 * (8 - 12) + 2 * (-3 - 0) = -2.
  ExpectNear(RunOne(MakeNode("Det", 1), {F32({3, 3}, {0, 1, 2, 1, 0, 3, 4, -3, 8})}), {-2});
}

TEST(DetTest, SingularIsZero) {
  ExpectNear(RunOne(MakeNode("Det", 1), {F32({3, 3}, {1, 2, 3, 2, 4, 6, 7, 8, 9})}), {0});
}

TEST(DetTest, BatchedDouble) {
  const Tensor x = MakeTensor<double>({2, 1, 2, 2}, {2, 0, 0, 3, 0, 1, 1, 0});
  const Tensor d = RunOne(MakeNode("Det", 1), {x});
  ExpectShape(d, {2, 1});
  ASSERT_EQ(d.dtype(), DType::kF64);
  EXPECT_DOUBLE_EQ(d.data<double>()[0], 6);
  EXPECT_DOUBLE_EQ(d.data<double>()[1], -1);
}

TEST(DetTest, NonSquareOrIntegerInputIsRefused) {
  ExpectError(MakeNode("Det", 1), {kA2x3}, StatusCode::kInvalidArgument, "[*, M, M]");
  ExpectError(MakeNode("Det", 1), {MakeTensor<int32_t>({1, 1}, {1})}, StatusCode::kUnsupported, "i32");
}

}  // namespace
}  // namespace chipfit::testing
