// Reference NonMaxSuppression, RoiAlign, GridSample, DFT, STFT, windows, MelWeightMatrix: each against hand-computed or
// formula results.
#include <gtest/gtest.h>

#include <algorithm>
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

// The run fails with `code`, the message names the node and contains `text`.
void ExpectError(const Node& node, const std::vector<Tensor>& inputs, int64_t opset, StatusCode code,
                 const std::string& text) {
  const Status status = RunNodeOnReference(node, opset, inputs).status();
  EXPECT_EQ(status.code(), code) << status.ToString();
  EXPECT_NE(status.message().find(node.name), std::string::npos) << status.message();
  EXPECT_NE(status.message().find(text), std::string::npos) << status.message();
}

// Runs only the shape function with the contents of inputs `unknown` hidden. Returns its status and
// whether it asked for values; `out` gets the inferred output 0.
Status InferOnly(const Node& node, const std::vector<Tensor>& inputs, std::vector<size_t> unknown, int64_t opset,
                 bool* value_missing, ValueInfo* out = nullptr) {
  std::vector<ValueInfo> infos(inputs.size());
  std::vector<const ValueInfo*> ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    infos[i].dtype = inputs[i].dtype();
    infos[i].shape = inputs[i].shape();
    infos[i].value = std::find(unknown.begin(), unknown.end(), i) == unknown.end() ? &inputs[i] : nullptr;
    ptrs.push_back(&infos[i]);
  }
  InferContext ctx(node, opset, ptrs);
  const OpEntry* op = FindReferenceOp(node.op_type, "");
  if (op == nullptr) return Internal("no reference op " + node.op_type);
  const Status status = op->infer(ctx);
  *value_missing = ctx.value_missing();
  if (out != nullptr && !ctx.outputs().empty()) *out = ctx.outputs()[0];
  return status;
}

Tensor ScalarI64(int64_t v) { return I64({}, {v}); }
Tensor ScalarF32(float v) { return F32({}, {v}); }

void ExpectShape(const Tensor& t, const Shape& shape) { EXPECT_EQ(t.shape(), shape) << DescribeTensor(t); }

// ----------------------------------------------------------------------------------------------------------------
// NonMaxSuppression

// Three unit boxes [y1, x1, y2, x2]: the second overlaps the first with IoU 0.9 / 1.1, the third is apart.
const Tensor kBoxes = F32({1, 3, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 10, 1, 11});
const Tensor kScores = F32({1, 1, 3}, {0.9f, 0.8f, 0.7f});

Node Nms(Attrs attrs = {}) { return MakeNode("NonMaxSuppression", 5, 1, std::move(attrs)); }

TEST(NonMaxSuppressionTest, SuppressesBoxesOverlappingAHigherScoredOne) {
  const Tensor y = RunOne(Nms(), {kBoxes, kScores, ScalarI64(3), ScalarF32(0.5f), ScalarF32(0.0f)}, 11);
  ExpectShape(y, {2, 3});
  EXPECT_EQ(Values<int64_t>(y), (std::vector<int64_t>{0, 0, 0, 0, 0, 2}));
}

TEST(NonMaxSuppressionTest, KeepsABoxWhoseIouEqualsTheThreshold) {
  // IoU = 2 / (3 + 3 - 2) = 0.5 exactly: only a strictly greater IoU suppresses.
  const Tensor boxes = F32({1, 2, 4}, {0, 0, 1, 3, 0, 1, 1, 4});
  const Tensor y = RunOne(Nms(), {boxes, F32({1, 1, 2}, {0.9f, 0.8f}), ScalarI64(5), ScalarF32(0.5f), Tensor()}, 11);
  EXPECT_EQ(Values<int64_t>(y), (std::vector<int64_t>{0, 0, 0, 0, 0, 1}));
}

TEST(NonMaxSuppressionTest, CenterPointBoxesAndFlippedCornersMeanTheSameBoxes) {
  const Tensor centers = F32({1, 3, 4}, {0.5f, 0.5f, 1, 1, 0.6f, 0.5f, 1, 1, 10.5f, 0.5f, 1, 1});
  const Tensor a = RunOne(Nms({{"center_point_box", IntAttr(1)}}),
                          {centers, kScores, ScalarI64(3), ScalarF32(0.5f), ScalarF32(0.0f)}, 11);
  EXPECT_EQ(Values<int64_t>(a), (std::vector<int64_t>{0, 0, 0, 0, 0, 2}));
  const Tensor flipped = F32({1, 3, 4}, {1, 1, 0, 0, 1, 1.1f, 0, 0.1f, 1, 11, 0, 10});
  const Tensor b = RunOne(Nms(), {flipped, kScores, ScalarI64(3), ScalarF32(0.5f), ScalarF32(0.0f)}, 10);
  EXPECT_EQ(Values<int64_t>(b), (std::vector<int64_t>{0, 0, 0, 0, 0, 2}));
}

TEST(NonMaxSuppressionTest, MaxOutputAndScoreThresholdLimitTheSelection) {
  const Tensor limited = RunOne(Nms(), {kBoxes, kScores, ScalarI64(1), ScalarF32(0.5f), ScalarF32(0.0f)}, 11);
  EXPECT_EQ(Values<int64_t>(limited), (std::vector<int64_t>{0, 0, 0}));
  // 0.7 is not above 0.75, and the box at 0.8 is suppressed.
  const Tensor scored = RunOne(Nms(), {kBoxes, kScores, ScalarI64(3), ScalarF32(0.5f), ScalarF32(0.75f)}, 11);
  EXPECT_EQ(Values<int64_t>(scored), (std::vector<int64_t>{0, 0, 0}));
}

TEST(NonMaxSuppressionTest, OmittedMaxOutputSelectsNothing) {
  const Tensor y = RunOne(MakeNode("NonMaxSuppression", 2), {kBoxes, kScores}, 11);
  ExpectShape(y, {0, 3});
}

TEST(NonMaxSuppressionTest, RowsGoByBatchThenClassThenScore) {
  const Tensor boxes = F32({2, 2, 4}, {0, 0, 1, 1, 0, 5, 1, 6, 0, 0, 1, 1, 0, 5, 1, 6});
  const Tensor scores = F32({2, 2, 2}, {0.1f, 0.2f, 0.4f, 0.3f, 0.5f, 0.6f, 0.8f, 0.7f});
  const Tensor y = RunOne(Nms(), {boxes, scores, ScalarI64(1), ScalarF32(0.5f), Tensor()}, 11);
  EXPECT_EQ(Values<int64_t>(y), (std::vector<int64_t>{0, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 0}));
}

TEST(NonMaxSuppressionTest, OutputShapeNeedsTheInputValues) {
  bool missing = false;
  const Status s =
      InferOnly(Nms(), {kBoxes, kScores, ScalarI64(3), ScalarF32(0.5f), ScalarF32(0.0f)}, {1}, 11, &missing);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.ToString();
  EXPECT_TRUE(missing);
}

TEST(NonMaxSuppressionTest, RejectsBadThresholdAndShapes) {
  ExpectError(Nms(), {kBoxes, kScores, ScalarI64(3), ScalarF32(1.5f), ScalarF32(0.0f)}, 11,
              StatusCode::kInvalidArgument, "iou_threshold must be in [0, 1], got 1.5");
  ExpectError(Nms(),
              {F32({1, 2, 3}, std::vector<float>(6, 0)), F32({1, 1, 2}, {1, 1}), ScalarI64(1), Tensor(), Tensor()}, 11,
              StatusCode::kInvalidArgument, "boxes must be [num_batches, spatial_dimension, 4]");
  ExpectError(Nms(), {kBoxes, F32({1, 1, 2}, {1, 1}), ScalarI64(1), Tensor(), Tensor()}, 11,
              StatusCode::kInvalidArgument, "disagree");
}

// ----------------------------------------------------------------------------------------------------------------
// RoiAlign

// 4×4 map with X[y][x] = 4y + x: bilinear interpolation of it is exact, so a sample at (y, x) reads 4y + x.
const Tensor kRamp = F32({1, 1, 4, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
const Tensor kOneRoiBatch = I64({1}, {0});

Node Roi(Attrs attrs) { return MakeNode("RoiAlign", 3, 1, std::move(attrs)); }

TEST(RoiAlignTest, HalfPixelShiftsTheRoiByHalfAPixel) {
  const Tensor roi = F32({1, 4}, {0, 0, 3, 3});  // x1, y1, x2, y2
  // output_half_pixel: one sample at the RoI centre (1.5, 1.5); half_pixel: at (1.0, 1.0).
  const Tensor legacy =
      RunOne(Roi({{"sampling_ratio", IntAttr(1)}, {"coordinate_transformation_mode", StringAttr("output_half_pixel")}}),
             {kRamp, roi, kOneRoiBatch}, 16);
  ExpectShape(legacy, {1, 1, 1, 1});
  ExpectNear(legacy, {7.5f});
  const Tensor shifted = RunOne(Roi({{"sampling_ratio", IntAttr(1)}}), {kRamp, roi, kOneRoiBatch}, 16);
  ExpectNear(shifted, {5.0f});
  // Opset 10 has no coordinate_transformation_mode and behaves as output_half_pixel.
  ExpectNear(RunOne(Roi({{"sampling_ratio", IntAttr(1)}}), {kRamp, roi, kOneRoiBatch}, 10), {7.5f});
}

TEST(RoiAlignTest, AveragesTheSamplesOfEachBin) {
  const Node node = Roi({{"output_height", IntAttr(2)},
                         {"output_width", IntAttr(2)},
                         {"sampling_ratio", IntAttr(2)},
                         {"spatial_scale", FloatAttr(0.5f)},
                         {"coordinate_transformation_mode", StringAttr("output_half_pixel")}});
  // RoI [0, 4] scaled by 0.5 is [0, 2]: bins of one pixel sampled at .25 and .75.
  const Tensor y = RunOne(node, {kRamp, F32({1, 4}, {0, 0, 4, 4}), kOneRoiBatch}, 16);
  ExpectShape(y, {1, 1, 2, 2});
  ExpectNear(y, {2.5f, 3.5f, 6.5f, 7.5f});
}

TEST(RoiAlignTest, AdaptiveSamplingTakesCeilOfBinSizeSamples) {
  // One row [0, 1, 4, 9]: RoI x in [0, 3] is one bin; adaptive sampling reads x = 0.5, 1.5, 2.5.
  const Tensor x = F32({1, 1, 1, 4}, {0, 1, 4, 9});
  const Tensor roi = F32({1, 4}, {0, 0, 3, 0});
  const Attrs legacy = {{"coordinate_transformation_mode", StringAttr("output_half_pixel")}};
  ExpectNear(RunOne(Roi(legacy), {x, roi, kOneRoiBatch}, 16), {(0.5f + 2.5f + 6.5f) / 3});
  Attrs one = legacy;
  one["sampling_ratio"] = IntAttr(1);
  ExpectNear(RunOne(Roi(one), {x, roi, kOneRoiBatch}, 16), {2.5f});
}

TEST(RoiAlignTest, MaxModeTakesTheLargestWeightedCorner) {
  // One sample at (1.5, 1.5): corners 5, 6, 9, 10 each weigh 1/4; max mode gives 10/4, as ONNX's
  // reference and ONNX Runtime do, not the interpolated 7.5.
  const Node node = Roi({{"mode", StringAttr("max")},
                         {"sampling_ratio", IntAttr(1)},
                         {"coordinate_transformation_mode", StringAttr("output_half_pixel")}});
  ExpectNear(RunOne(node, {kRamp, F32({1, 4}, {0, 0, 3, 3}), kOneRoiBatch}, 16), {2.5f});
}

TEST(RoiAlignTest, PicksTheBatchOfEachRoi) {
  Tensor x(DType::kF32, {2, 1, 4, 4});
  for (int64_t i = 0; i < 32; ++i) x.data<float>()[i] = i < 16 ? 0.0f : kRamp.data<float>()[i - 16];
  const Node node =
      Roi({{"sampling_ratio", IntAttr(1)}, {"coordinate_transformation_mode", StringAttr("output_half_pixel")}});
  const Tensor y = RunOne(node, {x, F32({2, 4}, {0, 0, 3, 3, 0, 0, 3, 3}), I64({2}, {1, 0})}, 16);
  ExpectShape(y, {2, 1, 1, 1});
  ExpectNear(y, {7.5f, 0.0f});
}

TEST(RoiAlignTest, RejectsBadBatchIndexAndMode) {
  ExpectError(Roi({}), {kRamp, F32({1, 4}, {0, 0, 1, 1}), I64({1}, {3})}, 16, StatusCode::kInvalidArgument,
              "batch_indices[0] = 3 is outside [0, 1)");
  ExpectError(Roi({{"mode", StringAttr("min")}}), {kRamp, F32({1, 4}, {0, 0, 1, 1}), kOneRoiBatch}, 16,
              StatusCode::kInvalidArgument, "mode must be 'avg' or 'max'");
  ExpectError(Roi({}), {kRamp, F32({1, 5}, {0, 0, 0, 1, 1}), kOneRoiBatch}, 16, StatusCode::kInvalidArgument,
              "rois must be [num_rois, 4]");
  // A sample count that would run for hours is refused rather than attempted.
  ExpectError(Roi({{"sampling_ratio", IntAttr(int64_t{1} << 40)}}), {kRamp, F32({1, 4}, {0, 0, 1, 1}), kOneRoiBatch},
              16, StatusCode::kInvalidArgument, "sampling_ratio or the RoI is too large");
  // No pixels: an error, not a read past the empty map.
  ExpectError(Roi({}), {Tensor(DType::kF32, {1, 1, 0, 4}), F32({1, 4}, {0, 0, 1, 1}), kOneRoiBatch}, 16,
              StatusCode::kInvalidArgument, "has no pixels to sample");
}

// ----------------------------------------------------------------------------------------------------------------
// GridSample

const Tensor k2x2 = F32({1, 1, 2, 2}, {1, 2, 3, 4});

Node Grid(Attrs attrs = {}) { return MakeNode("GridSample", 2, 1, std::move(attrs)); }
Tensor Point(float x, float y) { return F32({1, 1, 1, 2}, {x, y}); }

TEST(GridSampleTest, BilinearAtTheCentreAveragesAllFourPixels) {
  const Tensor y = RunOne(Grid(), {k2x2, Point(0, 0)}, 16);
  ExpectShape(y, {1, 1, 1, 1});
  ExpectNear(y, {2.5f});
  ExpectNear(RunOne(Grid({{"align_corners", IntAttr(1)}}), {k2x2, Point(0, 0)}, 16), {2.5f});
}

TEST(GridSampleTest, CornerDependsOnAlignCornersAndPadding) {
  // (-1, -1) is the first pixel's centre with align_corners=1, its outer corner (-0.5, -0.5) without.
  ExpectNear(RunOne(Grid({{"align_corners", IntAttr(1)}}), {k2x2, Point(-1, -1)}, 16), {1.0f});
  ExpectNear(RunOne(Grid(), {k2x2, Point(-1, -1)}, 16), {0.25f});  // three of four taps read zeros
  ExpectNear(RunOne(Grid({{"padding_mode", StringAttr("border")}}), {k2x2, Point(-1, -1)}, 16), {1.0f});
  ExpectNear(RunOne(Grid({{"padding_mode", StringAttr("reflection")}}), {k2x2, Point(-1, -1)}, 16), {1.0f});
  // Far outside: zeros reads 0, border the nearest edge pixel (row 0, column 1), and reflection folds
  // the rounded x = 4 back over 1.5 and -0.5 to column 0.
  ExpectNear(RunOne(Grid(), {k2x2, Point(5, 5)}, 16), {0.0f});
  ExpectNear(RunOne(Grid({{"padding_mode", StringAttr("border")}}), {k2x2, Point(5, -5)}, 16), {2.0f});
  ExpectNear(RunOne(Grid({{"padding_mode", StringAttr("reflection")}, {"mode", StringAttr("nearest")}}),
                    {k2x2, Point(3, 0.5f)}, 16),
             {3.0f});
}

TEST(GridSampleTest, NearestRoundsHalfToEven) {
  // x = 0.6 → 1, y = -0.1 → 0.
  ExpectNear(RunOne(Grid({{"mode", StringAttr("nearest")}}), {k2x2, Point(0.1f, -0.6f)}, 16), {2.0f});
  // (0, 0) maps to (0.5, 0.5), which rounds to the even 0.
  ExpectNear(RunOne(Grid({{"mode", StringAttr("nearest")}}), {k2x2, Point(0, 0)}, 16), {1.0f});
}

TEST(GridSampleTest, BicubicUsesKeysWeights) {
  // Constant 5 with zeros padding at the centre: per axis the taps weigh -0.09375, 0.59375, 0.59375,
  // -0.09375 and the outer two read zero, so the result is 5 * (2 * 0.59375)^2.
  const Tensor x = F32({1, 1, 2, 2}, {5, 5, 5, 5});
  ExpectNear(RunOne(Grid({{"mode", StringAttr("bicubic")}}), {x, Point(0, 0)}, 16), {7.05078125f});
  // With border padding all 16 taps read 5 and the weights sum to one.
  ExpectNear(
      RunOne(Grid({{"mode", StringAttr("bicubic")}, {"padding_mode", StringAttr("border")}}), {x, Point(0, 0)}, 16),
      {5.0f});
}

TEST(GridSampleTest, Opset20SamplesOneAndThreeSpatialAxes) {
  const Tensor line = F32({1, 1, 4}, {0, 10, 20, 30});
  const Tensor y1 = RunOne(Grid({{"mode", StringAttr("linear")}}), {line, F32({1, 2, 1}, {0, 0.5f})}, 20);
  ExpectShape(y1, {1, 1, 2});
  ExpectNear(y1, {15.0f, 25.0f});
  // X[z][y][x] = 4z + 2y + x; the grid's (x, y, z) = (0.5, -0.5, 0) lands on (z, y, x) = (0.5, 0, 1).
  const Tensor cube = F32({1, 1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  const Tensor y3 = RunOne(Grid({{"mode", StringAttr("linear")}}), {cube, F32({1, 1, 1, 1, 3}, {0.5f, -0.5f, 0})}, 20);
  ExpectShape(y3, {1, 1, 1, 1, 1});
  ExpectNear(y3, {3.0f});
}

TEST(GridSampleTest, EmptyMapReadsZeros) {
  const Tensor y = RunOne(Grid({{"padding_mode", StringAttr("border")}}), {F32({1, 1, 0, 2}, {}), Point(0, 0)}, 16);
  ExpectNear(y, {0.0f});
}

TEST(GridSampleTest, ShapeIsKnownWithoutValues) {
  bool missing = false;
  ValueInfo out;
  const Tensor grid = F32({1, 3, 5, 2}, std::vector<float>(30, 0));
  const Status s = InferOnly(Grid(), {F32({1, 2, 4, 4}, std::vector<float>(32, 0)), grid}, {0, 1}, 16, &missing, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(missing);
  EXPECT_EQ(out.shape, (Shape{1, 2, 3, 5}));
}

TEST(GridSampleTest, ModeNamesAndRankFollowTheOpset) {
  const Tensor cube = F32({1, 1, 2, 2, 2}, std::vector<float>(8, 1));
  ExpectError(Grid(), {cube, F32({1, 1, 1, 1, 3}, {0, 0, 0})}, 16, StatusCode::kInvalidArgument, "X must be 4-D");
  ExpectError(Grid({{"mode", StringAttr("linear")}}), {k2x2, Point(0, 0)}, 16, StatusCode::kInvalidArgument,
              "mode 'linear' is not one of bilinear, nearest, bicubic");
  ExpectError(Grid({{"mode", StringAttr("bilinear")}}), {k2x2, Point(0, 0)}, 20, StatusCode::kInvalidArgument,
              "mode 'bilinear' is not one of linear, nearest, cubic");
  ExpectError(Grid(), {k2x2, F32({1, 1, 1, 3}, {0, 0, 0})}, 16, StatusCode::kInvalidArgument, "grid must be");
}

// ----------------------------------------------------------------------------------------------------------------
// DFT

const Tensor kSignal = F32({1, 4, 1}, {1, 2, 3, 4});

TEST(DftTest, RealInputGivesTheFullSpectrum) {
  // DFT of [1, 2, 3, 4]: 10, -2+2i, -2, -2-2i.
  const Tensor y = RunOne(MakeNode("DFT", 1), {kSignal}, 17);
  ExpectShape(y, {1, 4, 2});
  ExpectNear(y, {10, 0, -2, 2, -2, 0, -2, -2});
}

TEST(DftTest, OnesidedKeepsHalfTheBins) {
  const Tensor y = RunOne(MakeNode("DFT", 1, 1, {{"onesided", IntAttr(1)}}), {kSignal}, 17);
  ExpectShape(y, {1, 3, 2});
  ExpectNear(y, {10, 0, -2, 2, -2, 0});
}

TEST(DftTest, InverseUndoesTheTransform) {
  const Tensor spectrum = F32({1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2});
  const Tensor y = RunOne(MakeNode("DFT", 1, 1, {{"inverse", IntAttr(1)}}), {spectrum}, 17);
  ExpectNear(y, {1, 0, 2, 0, 3, 0, 4, 0});
}

TEST(DftTest, DftLengthTruncatesOrPads) {
  ExpectNear(RunOne(MakeNode("DFT", 2), {kSignal, ScalarI64(2)}, 17), {3, 0, -1, 0});
  // [1, 0] padded to 4 points has a flat spectrum.
  const Tensor y = RunOne(MakeNode("DFT", 2), {F32({1, 2, 1}, {1, 0}), ScalarI64(4)}, 17);
  ExpectShape(y, {1, 4, 2});
  ExpectNear(y, {1, 0, 1, 0, 1, 0, 1, 0});
}

TEST(DftTest, ComplexInput) {
  // [1+i, 1-i] → [2, 2i].
  ExpectNear(RunOne(MakeNode("DFT", 1), {F32({1, 2, 2}, {1, 1, 1, -1})}, 17), {2, 0, 0, 2});
}

TEST(DftTest, AxisIsAnAttributeThenAnInput) {
  // [[1, 2], [3, 4]] transformed along axis 0: [[4, 6], [-2, -2]].
  const Tensor x = F32({2, 2, 1}, {1, 2, 3, 4});
  const std::vector<float> expected = {4, 0, 6, 0, -2, 0, -2, 0};
  ExpectNear(RunOne(MakeNode("DFT", 1, 1, {{"axis", IntAttr(0)}}), {x}, 17), expected);
  Node v20 = MakeNode("DFT", 3);
  v20.inputs[1] = "";
  ExpectNear(RunOne(v20, {x, Tensor(), ScalarI64(0)}, 20), expected);
  // Opset 20 defaults to axis -2, the last signal axis: [[3, -1], [7, -1]].
  ExpectNear(RunOne(MakeNode("DFT", 1), {x}, 20), {3, 0, -1, 0, 7, 0, -1, 0});
}

TEST(DftTest, RejectsBadAxisAndOnesidedCombinations) {
  ExpectError(MakeNode("DFT", 1, 1, {{"axis", IntAttr(-1)}}), {kSignal}, 17, StatusCode::kInvalidArgument,
              "axis -1 is outside");
  ExpectError(MakeNode("DFT", 1, 1, {{"onesided", IntAttr(1)}, {"inverse", IntAttr(1)}}), {kSignal}, 17,
              StatusCode::kUnsupported, "onesided=1 with inverse=1");
  ExpectError(MakeNode("DFT", 1, 1, {{"onesided", IntAttr(1)}}), {F32({1, 2, 2}, {1, 1, 1, -1})}, 17,
              StatusCode::kInvalidArgument, "needs a real input");
  ExpectError(MakeNode("DFT", 2), {kSignal, ScalarI64(0)}, 17, StatusCode::kInvalidArgument,
              "dft_length must be positive");
}

TEST(DftTest, OutputShapeNeedsDftLengthsValue) {
  bool missing = false;
  const Status s = InferOnly(MakeNode("DFT", 2), {kSignal, ScalarI64(2)}, {1}, 17, &missing);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_TRUE(missing);
}

// ----------------------------------------------------------------------------------------------------------------
// STFT

TEST(StftTest, FramesWithStepAndOnesidedBins) {
  Node node = MakeNode("STFT", 4);
  node.inputs[2] = "";
  // Frames [1, 2] and [3, 4]: spectra [3, -1] and [7, -1].
  const Tensor y = RunOne(node, {kSignal, ScalarI64(2), Tensor(), ScalarI64(2)}, 17);
  ExpectShape(y, {1, 2, 2, 2});
  ExpectNear(y, {3, 0, -1, 0, 7, 0, -1, 0});
}

TEST(StftTest, WindowWeighsEachFrame) {
  // Frames [0.5, 2] and [1.5, 4].
  const Tensor y = RunOne(MakeNode("STFT", 3), {kSignal, ScalarI64(2), F32({2}, {0.5f, 1})}, 17);
  ExpectShape(y, {1, 2, 2, 2});
  ExpectNear(y, {2.5f, 0, -1.5f, 0, 5.5f, 0, -2.5f, 0});
}

TEST(StftTest, TwoSidedKeepsEveryBin) {
  const Tensor y =
      RunOne(MakeNode("STFT", 3, 1, {{"onesided", IntAttr(0)}}), {kSignal, ScalarI64(1), F32({3}, {1, 1, 1})}, 17);
  ExpectShape(y, {1, 2, 3, 2});
  // [1, 2, 3]: 6, -1.5 + 0.866i, -1.5 - 0.866i.
  ExpectNear(y, {6, 0, -1.5f, 0.8660254f, -1.5f, -0.8660254f, 9, 0, -1.5f, 0.8660254f, -1.5f, -0.8660254f});
}

TEST(StftTest, RejectsMismatchedWindowAndLongFrames) {
  ExpectError(MakeNode("STFT", 4), {kSignal, ScalarI64(1), F32({2}, {1, 1}), ScalarI64(3)}, 17,
              StatusCode::kInvalidArgument, "window has 2 points but frame_length is 3");
  Node node = MakeNode("STFT", 4);
  node.inputs[2] = "";
  ExpectError(node, {kSignal, ScalarI64(1), Tensor(), ScalarI64(5)}, 17, StatusCode::kInvalidArgument,
              "frame length 5 is outside [1, 4]");
  ExpectError(MakeNode("STFT", 3), {kSignal, ScalarI64(0), F32({2}, {1, 1})}, 17, StatusCode::kInvalidArgument,
              "frame_step must be positive");
}

// ----------------------------------------------------------------------------------------------------------------
// Windows, MelWeightMatrix

TEST(WindowTest, HannPeriodicAndSymmetric) {
  ExpectNear(RunOne(MakeNode("HannWindow", 1), {ScalarI64(4)}, 17), {0, 0.5f, 1, 0.5f});
  ExpectNear(RunOne(MakeNode("HannWindow", 1, 1, {{"periodic", IntAttr(0)}}), {ScalarI64(4)}, 17),
             {0, 0.75f, 0.75f, 0});
}

TEST(WindowTest, HammingAndBlackman) {
  const float a0 = 25.0f / 46, a1 = 21.0f / 46;
  ExpectNear(RunOne(MakeNode("HammingWindow", 1), {ScalarI64(4)}, 17), {a0 - a1, a0, 1, a0});
  ExpectNear(RunOne(MakeNode("BlackmanWindow", 1), {ScalarI64(4)}, 17), {0, 0.34f, 1, 0.34f}, 1e-6f);
}

TEST(WindowTest, OutputDatatypeAndOnePointWindow) {
  const Tensor y = RunOne(MakeNode("HannWindow", 1, 1, {{"output_datatype", IntAttr(11)}}), {ScalarI64(2)}, 17);
  ASSERT_EQ(y.dtype(), DType::kF64);
  EXPECT_EQ(Values<double>(y), (std::vector<double>{0.0, 1.0}));
  ExpectNear(RunOne(MakeNode("HannWindow", 1, 1, {{"periodic", IntAttr(0)}}), {ScalarI64(1)}, 17), {1.0f});
  ExpectError(MakeNode("BlackmanWindow", 1), {ScalarI64(-1)}, 17, StatusCode::kInvalidArgument, "size must be >= 0");
  ExpectError(MakeNode("HannWindow", 1, 1, {{"output_datatype", IntAttr(8)}}), {ScalarI64(2)}, 17,
              StatusCode::kInvalidArgument, "output_datatype 8");
}

double HzToMel(double hz) { return 2595 * std::log10(1 + hz / 700); }
double MelToHz(double mel) { return 700 * (std::pow(10.0, mel / 2595) - 1); }

TEST(MelWeightMatrixTest, OneTriangleOverTheDftBins) {
  // Edges every mel(1000 Hz): 0, 1000 and ~3428 Hz fall in bins floor(17 * hz / 16000) = 0, 1, 3.
  const auto upper = static_cast<float>(MelToHz(3 * HzToMel(1000)));
  const Tensor y = RunOne(MakeNode("MelWeightMatrix", 5),
                          {ScalarI64(1), ScalarI64(16), ScalarI64(16000), ScalarF32(0), ScalarF32(upper)}, 17);
  ExpectShape(y, {9, 1});
  ExpectNear(y, {0, 1, 0.5f, 0, 0, 0, 0, 0, 0});
}

TEST(MelWeightMatrixTest, RejectsEdgesPastTheLastBin) {
  ExpectError(MakeNode("MelWeightMatrix", 5),
              {ScalarI64(1), ScalarI64(16), ScalarI64(16000), ScalarF32(0), ScalarF32(100000)}, 17,
              StatusCode::kInvalidArgument, "falls outside the 9 DFT bins");
}

}  // namespace
}  // namespace chipfit::testing
