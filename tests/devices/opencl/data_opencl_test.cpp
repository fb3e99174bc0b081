// OpenCL data-movement kernels against the reference: Reshape-like copies, Dropout, Concat, Slice, Split,
// Transpose (strided and tiled), Gather, Expand, Tile, Pad and Resize/Upsample, on fp32 and fp16
// storage and for int64/bool/uint8 tensors, with their opset forms, odd sizes and refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "devices/opencl/ops/opencl_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/opencl/opencl_test_util.h"

namespace chipfit::testing {
namespace {

// Seeded values that use every byte of the element: int64 over the whole range, bool 0/1, uint8 0–255,
// f32 uniform in [-1, 1) (rounded to half under fp16 storage, where moving them is still exact).
Tensor Random(DType dtype, const Shape& shape, uint64_t seed) {
  if (dtype == DType::kF32) return RandomF32(shape, seed);
  Tensor t(dtype, shape);
  SplitMix64 rng(seed);
  auto* bytes = static_cast<uint8_t*>(t.raw_data());
  for (size_t i = 0; i < t.nbytes(); ++i) bytes[i] = static_cast<uint8_t>(rng.Next());
  if (dtype == DType::kBool) {
    for (size_t i = 0; i < t.nbytes(); ++i) bytes[i] &= 1;
  }
  return t;
}

Tensor Ints(const std::vector<int64_t>& v) { return MakeTensor<int64_t>({static_cast<int64_t>(v.size())}, v); }
Tensor Floats(const std::vector<float>& v) { return MakeTensor<float>({static_cast<int64_t>(v.size())}, v); }

// Data movement must be exact: the bytes on fp32 storage and for non-float tensors; under fp16 storage
// the reference's floats rounded to half (moving elements commutes with the rounding).
void ExpectExact(KernelFactory factory, OpenClCase c) {
  const std::vector<Tensor> want = RunReference(c);
  ASSERT_FALSE(want.empty());
  for (Precision p : {Precision::kFp32, Precision::kFp16}) {
    c.precision = p;
    auto got = RunOpenClKernel(factory, c);
    ASSERT_TRUE(got.ok()) << c.node.Describe() << " " << PrecisionName(p) << ": " << got.status().ToString();
    ASSERT_EQ(got->size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      const Tensor& g = (*got)[k];
      const Tensor& w = want[k];
      ASSERT_EQ(g.shape(), w.shape()) << c.node.Describe() << " output " << k;
      ASSERT_EQ(g.dtype(), w.dtype()) << c.node.Describe() << " output " << k;
      if (w.dtype() == DType::kF32 && p == Precision::kFp16) {
        int64_t bad = 0;
        for (int64_t i = 0; i < w.numel(); ++i) {
          const float rounded = HalfBitsToFloat(FloatToHalfBits(w.data<float>()[i]));
          bad += g.data<float>()[i] != rounded;
        }
        EXPECT_EQ(bad, 0) << c.node.Describe() << " fp16 output " << k << ": elements differ";
      } else {
        EXPECT_EQ(std::memcmp(g.raw_data(), w.raw_data(), w.nbytes()), 0)
            << c.node.Describe() << " " << PrecisionName(p) << " output " << k << " differs";
      }
    }
  }
}

// The factory's answer for a case: the output shapes as shape inference gives them knowing every
// input's value (a parameter computed upstream but folded by shape specialisation), or none at all
// (`outputs_known` false); the factory sees as constant only the inputs `c.constant` marks.
Status InitStatus(KernelFactory factory, const OpenClCase& c, bool outputs_known = true) {
  auto context = TestContext(c.precision);
  if (!context.ok()) return context.status();
  std::vector<ValueInfo> infos(c.inputs.size()), known(c.inputs.size());
  std::vector<const ValueInfo*> ptrs, known_ptrs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const bool constant = i < c.constant.size() && c.constant[i];
    infos[i] = {c.inputs[i].dtype(), c.inputs[i].shape(), constant ? &c.inputs[i] : nullptr};
    known[i] = {c.inputs[i].dtype(), c.inputs[i].shape(), &c.inputs[i]};
    ptrs.push_back(c.inputs[i].defined() ? &infos[i] : nullptr);
    known_ptrs.push_back(c.inputs[i].defined() ? &known[i] : nullptr);
  }
  std::vector<ValueInfo> outs;
  if (outputs_known) {
    InferContext infer(c.node, c.opset, known_ptrs);
    RETURN_IF_ERROR(FindReferenceOp(c.node.op_type, c.node.domain)->infer(infer));
    outs = infer.outputs();
  }
  KernelInit init{c.node, ptrs, c.opset, c.precision, nullptr, context->get(), outputs_known ? &outs : nullptr};
  return factory(init).status();
}

void ExpectRefused(KernelFactory factory, const OpenClCase& c, const std::string& reason, bool outputs_known = true) {
  const Status s = InitStatus(factory, c, outputs_known);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << c.node.Describe() << ": " << s.ToString();
  EXPECT_NE(s.message().find(reason), std::string::npos) << s.message();
}

const DType kMoveTypes[] = {DType::kF32, DType::kI64, DType::kBool, DType::kU8};

// ---------------------------------------------------------------------------------------------
// Copies

TEST(DataOpenCl, ReshapeLikeCopiesEveryDtype) {
  CHIPFIT_REQUIRE_OPENCL();
  uint64_t seed = 1;
  for (DType dt : kMoveTypes) {
    ExpectExact(opencl::CreateCopy,
                {MakeNode("Reshape", 2), 13, {Random(dt, {3, 5, 7}, seed++), Ints({7, -1})}, {false, true}});
    ExpectExact(opencl::CreateCopy,
                {MakeNode("Reshape", 2), 13, {Random(dt, {3, 5, 7}, seed++), Ints({0, 35})}, {false, true}});
    ExpectExact(opencl::CreateCopy,
                {MakeNode("Flatten", 1, 1, {{"axis", IntAttr(2)}}), 13, {Random(dt, {2, 3, 5, 1}, seed++)}});
    ExpectExact(opencl::CreateCopy,
                {MakeNode("Squeeze", 1, 1, {{"axes", IntsAttr({1})}}), 11, {Random(dt, {3, 1, 9}, seed++)}});
    ExpectExact(opencl::CreateCopy,
                {MakeNode("Squeeze", 2), 13, {Random(dt, {1, 9, 1}, seed++), Ints({0, -1})}, {false, true}});
    ExpectExact(opencl::CreateCopy,
                {MakeNode("Unsqueeze", 2), 13, {Random(dt, {9, 11}, seed++), Ints({0, 3})}, {false, true}});
    ExpectExact(opencl::CreateCopy, {MakeNode("Identity", 1), 16, {Random(dt, {1001}, seed++)}});
  }
}

TEST(DataOpenCl, DropoutInferenceWithMask) {
  CHIPFIT_REQUIRE_OPENCL();
  ExpectExact(opencl::CreateCopy, {MakeNode("Dropout", 1, 2), 13, {Random(DType::kF32, {4, 33}, 3)}});
  // Before opset 10 the mask has the data's type: ones in float (half under fp16 storage).
  ExpectExact(opencl::CreateCopy, {MakeNode("Dropout", 1, 2), 7, {Random(DType::kF32, {5, 7}, 4)}});
  Tensor ratio = MakeTensor<float>({}, {0.5f});
  Tensor off = MakeTensor<bool>({}, {false});
  ExpectExact(opencl::CreateCopy,
              {MakeNode("Dropout", 3, 2), 13, {Random(DType::kF32, {17}, 5), ratio, off}, {false, true, true}});
  Tensor on = MakeTensor<bool>({}, {true});
  ExpectRefused(opencl::CreateCopy,
                {MakeNode("Dropout", 3, 2), 13, {Random(DType::kF32, {17}, 5), ratio, on}, {false, true, true}},
                "training_mode=1");
  ExpectRefused(opencl::CreateCopy, {MakeNode("Dropout", 3, 2), 13, {Random(DType::kF32, {17}, 5), ratio, on}},
                "training_mode is not a constant");
}

// ---------------------------------------------------------------------------------------------
// Concat

TEST(DataOpenCl, ConcatEveryAxisAndDtype) {
  CHIPFIT_REQUIRE_OPENCL();
  uint64_t seed = 100;
  const Shape base = {3, 5, 7, 2};
  for (DType dt : kMoveTypes) {
    for (int64_t axis = -4; axis < 4; ++axis) {
      const auto a = static_cast<size_t>(axis < 0 ? axis + 4 : axis);
      std::vector<Tensor> inputs;
      for (int64_t len : {1, 4, 3}) {
        Shape s = base;
        s[a] = len;
        inputs.push_back(Random(dt, s, seed++));
      }
      ExpectExact(opencl::CreateConcat, {MakeNode("Concat", 3, 1, {{"axis", IntAttr(axis)}}), 13, inputs});
    }
  }
  // Many inputs; a zero-length one is skipped.
  std::vector<Tensor> many;
  for (int64_t i = 0; i < 9; ++i) many.push_back(Random(DType::kF32, {2, i % 3 == 0 ? 0 : i, 8}, seed++));
  ExpectExact(opencl::CreateConcat, {MakeNode("Concat", 9, 1, {{"axis", IntAttr(1)}}), 13, many});
  // Wide runs (a multiple of 16 bytes) and a 1-D concat of odd lengths.
  ExpectExact(opencl::CreateConcat, {MakeNode("Concat", 2, 1, {{"axis", IntAttr(1)}}),
                                     13,
                                     {Random(DType::kF32, {2, 64, 4}, 7), Random(DType::kF32, {2, 32, 4}, 8)}});
  ExpectExact(opencl::CreateConcat, {MakeNode("Concat", 2, 1, {{"axis", IntAttr(0)}}),
                                     13,
                                     {Random(DType::kU8, {13}, 9), Random(DType::kU8, {1}, 10)}});
}

// ---------------------------------------------------------------------------------------------
// Slice and Split

struct SliceCase {
  Shape shape;
  std::vector<int64_t> starts, ends, axes, steps;  // axes/steps empty: omitted
};

TEST(DataOpenCl, SliceConstantParamsIncludingNegativeSteps) {
  CHIPFIT_REQUIRE_OPENCL();
  const std::vector<SliceCase> cases = {
      {{10, 11}, {1, 2}, {9, 10}, {}, {}},
      {{10, 11}, {-3}, {100}, {1}, {}},
      {{7, 9, 5}, {8, 0}, {-100, 9}, {1, 2}, {-2, 2}},
      {{7, 9, 5}, {-1, -1, -1}, {-8, -10, -6}, {0, 1, 2}, {-1, -1, -1}},
      {{6, 13}, {0, 1}, {6, 13}, {0, 1}, {5, 3}},
      {{4, 3, 17}, {2}, {14}, {-1}, {1}},
      {{33}, {32}, {0}, {0}, {-3}},
      {{2, 3, 4, 5, 6, 7}, {1, 1, 1}, {2, 3, 4}, {1, 3, 5}, {1, 2, 2}},
  };
  uint64_t seed = 200;
  for (DType dt : kMoveTypes) {
    for (const SliceCase& s : cases) {
      std::vector<Tensor> inputs = {Random(dt, s.shape, seed++), Ints(s.starts), Ints(s.ends)};
      inputs.push_back(s.axes.empty() ? Tensor() : Ints(s.axes));
      inputs.push_back(s.steps.empty() ? Tensor() : Ints(s.steps));
      Node node = MakeNode("Slice", 5);
      if (s.axes.empty()) node.inputs[3] = "";
      if (s.steps.empty()) node.inputs[4] = "";
      ExpectExact(opencl::CreateSlice, {node, 13, inputs, {false, true, true, true, true}});
    }
  }
  // Opset 1–9: attributes.
  ExpectExact(opencl::CreateSlice,
              {MakeNode("Slice", 1, 1,
                        {{"starts", IntsAttr({1, -4})}, {"ends", IntsAttr({3, 1000})}, {"axes", IntsAttr({0, 2})}}),
               9,
               {Random(DType::kF32, {4, 3, 9}, seed++)}});
  // Ends need not be constant: the output shape says how far to go.
  const Status ends =
      InitStatus(opencl::CreateSlice, {MakeNode("Slice", 3),
                                       13,
                                       {Random(DType::kF32, {8, 9}, seed++), Ints({1, 2}), Ints({7, 8})},
                                       {false, true, false}});
  EXPECT_TRUE(ends.ok()) << ends.ToString();
  ExpectRefused(opencl::CreateSlice,
                {MakeNode("Slice", 3), 13, {Random(DType::kF32, {8, 9}, seed++), Ints({1, 2}), Ints({7, 8})}},
                "starts are not constant");
}

TEST(DataOpenCl, SplitEveryOpsetForm) {
  CHIPFIT_REQUIRE_OPENCL();
  uint64_t seed = 300;
  for (DType dt : kMoveTypes) {
    // Equal parts (no split given), on every axis.
    for (int64_t axis = 0; axis < 3; ++axis) {
      ExpectExact(opencl::CreateSplit,
                  {MakeNode("Split", 1, 3, {{"axis", IntAttr(axis)}}), 13, {Random(dt, {6, 9, 3}, seed++)}});
    }
    // Opset 11: split attribute.
    ExpectExact(opencl::CreateSplit, {MakeNode("Split", 1, 3, {{"axis", IntAttr(-1)}, {"split", IntsAttr({2, 7, 4})}}),
                                      11,
                                      {Random(dt, {3, 5, 13}, seed++)}});
    // Opset 13: split input, constant or not (the output shapes carry the sizes), a part of 0.
    ExpectExact(opencl::CreateSplit, {MakeNode("Split", 2, 3, {{"axis", IntAttr(1)}}),
                                      13,
                                      {Random(dt, {3, 11, 5}, seed++), Ints({5, 0, 6})},
                                      {false, true}});
    const Status computed =
        InitStatus(opencl::CreateSplit,
                   {MakeNode("Split", 2, 2, {{"axis", IntAttr(0)}}), 13, {Random(dt, {11, 3}, seed++), Ints({1, 10})}});
    EXPECT_TRUE(computed.ok()) << computed.ToString();
    // Opset 18: num_outputs with a smaller last part.
    ExpectExact(opencl::CreateSplit, {MakeNode("Split", 1, 3, {{"axis", IntAttr(1)}, {"num_outputs", IntAttr(3)}}),
                                      18,
                                      {Random(dt, {2, 11, 3}, seed++)}});
  }
}

// ---------------------------------------------------------------------------------------------
// Transpose

TEST(DataOpenCl, TransposeRandomPermutations) {
  CHIPFIT_REQUIRE_OPENCL();
  SplitMix64 rng(42);
  uint64_t seed = 400;
  for (size_t rank = 1; rank <= 6; ++rank) {
    for (int trial = 0; trial < 4; ++trial) {
      Shape shape;
      for (size_t d = 0; d < rank; ++d) shape.push_back(1 + static_cast<int64_t>(rng.Next() % (rank <= 3 ? 9 : 5)));
      std::vector<int64_t> perm(rank);
      std::iota(perm.begin(), perm.end(), int64_t{0});
      for (size_t i = rank; i > 1; --i) std::swap(perm[i - 1], perm[rng.Next() % i]);
      for (DType dt : kMoveTypes) {
        ExpectExact(opencl::CreateTranspose,
                    {MakeNode("Transpose", 1, 1, {{"perm", IntsAttr(perm)}}), 13, {Random(dt, shape, seed++)}});
      }
    }
  }
  // No perm: dims reversed.
  ExpectExact(opencl::CreateTranspose, {MakeNode("Transpose", 1), 13, {Random(DType::kF32, {3, 4, 5}, seed++)}});
}

TEST(DataOpenCl, TransposeLastTwoDimsTiled) {
  CHIPFIT_REQUIRE_OPENCL();
  uint64_t seed = 500;
  // Sizes around the 32-wide tile, odd ones, a batch, and NCHW → NHWC-like swaps after merging.
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{33, 65}, {1, 0}},
      {{64, 32}, {1, 0}},
      {{3, 17, 40}, {0, 2, 1}},
      {{2, 3, 31, 9}, {0, 1, 3, 2}},
      {{2, 16, 5, 7}, {0, 2, 3, 1}},
      {{100, 8}, {1, 0}},
  };
  for (const auto& [shape, perm] : cases) {
    for (DType dt : kMoveTypes) {
      ExpectExact(opencl::CreateTranspose,
                  {MakeNode("Transpose", 1, 1, {{"perm", IntsAttr(perm)}}), 13, {Random(dt, shape, seed++)}});
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Gather, Expand, Tile

TEST(DataOpenCl, GatherAnyAxisWithNegativeIndices) {
  CHIPFIT_REQUIRE_OPENCL();
  uint64_t seed = 600;
  const Shape shape = {5, 6, 7};
  for (DType dt : kMoveTypes) {
    for (int64_t axis = -3; axis < 3; ++axis) {
      const int64_t dim = shape[static_cast<size_t>(axis < 0 ? axis + 3 : axis)];
      std::vector<int64_t> idx = {0, dim - 1, -1, -dim, 2, 1};
      Tensor i64 = MakeTensor<int64_t>({2, 3}, idx);
      Tensor i32(DType::kI32, {2, 3});
      for (size_t i = 0; i < idx.size(); ++i) i32.data<int32_t>()[i] = static_cast<int32_t>(idx[i]);
      Node node = MakeNode("Gather", 2, 1, {{"axis", IntAttr(axis)}});
      ExpectExact(opencl::CreateGather, {node, 13, {Random(dt, shape, seed++), i64}});
      ExpectExact(opencl::CreateGather, {node, 13, {Random(dt, shape, seed++), i32}, {false, true}});
    }
  }
  // Scalar index (a rank drop), embedding-like rows that move wide, 1-D data.
  ExpectExact(opencl::CreateGather, {MakeNode("Gather", 2, 1, {{"axis", IntAttr(1)}}),
                                     13,
                                     {Random(DType::kF32, {3, 4}, seed++), MakeTensor<int64_t>({}, {-2})}});
  ExpectExact(
      opencl::CreateGather,
      {MakeNode("Gather", 2), 13, {Random(DType::kF32, {50, 64}, seed++), MakeTensor<int32_t>({4}, {7, 49, 0, 7})}});
  ExpectExact(opencl::CreateGather,
              {MakeNode("Gather", 2), 13, {Random(DType::kI64, {9}, seed++), MakeTensor<int64_t>({3}, {8, -9, 4})}});
  // Constant indices out of range are an error at Init, naming the index.
  const Status s = InitStatus(
      opencl::CreateGather, {MakeNode("Gather", 2), 13, {Random(DType::kF32, {4, 2}, 1), Ints({1, 4})}, {false, true}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("index 4"), std::string::npos) << s.message();
}

TEST(DataOpenCl, ExpandAndTile) {
  CHIPFIT_REQUIRE_OPENCL();
  uint64_t seed = 700;
  for (DType dt : kMoveTypes) {
    ExpectExact(opencl::CreateExpand,
                {MakeNode("Expand", 2), 13, {Random(dt, {3, 1, 5}, seed++), Ints({2, 3, 4, 5})}, {false, true}});
    ExpectExact(opencl::CreateExpand,
                {MakeNode("Expand", 2), 13, {Random(dt, {1, 7}, seed++), Ints({6, 1})}, {false, true}});
    ExpectExact(opencl::CreateExpand,
                {MakeNode("Expand", 2), 13, {Random(dt, {1}, seed++), Ints({3, 1, 9})}, {false, true}});
    ExpectExact(opencl::CreateTile,
                {MakeNode("Tile", 2), 13, {Random(dt, {2, 3, 5}, seed++), Ints({3, 1, 2})}, {false, true}});
    ExpectExact(
        opencl::CreateTile,
        {MakeNode("Tile", 2), 13, {Random(dt, {2, 1, 3, 1, 2, 3}, seed++), Ints({2, 3, 2, 2, 1, 2})}, {false, true}});
    // Repeats computed upstream: the output shape carries them.
    const Status computed =
        InitStatus(opencl::CreateTile, {MakeNode("Tile", 2), 13, {Random(dt, {2, 3}, seed++), Ints({2, 2})}});
    EXPECT_TRUE(computed.ok()) << computed.ToString();
  }
}

// ---------------------------------------------------------------------------------------------
// Pad

TEST(DataOpenCl, PadModesAndOpsetForms) {
  CHIPFIT_REQUIRE_OPENCL();
  uint64_t seed = 800;
  // Opset 19: 'wrap' exists from Pad-19.
  for (const char* mode : {"constant", "edge", "reflect", "wrap"}) {
    for (DType dt : kMoveTypes) {
      Node node = MakeNode("Pad", 3, 1, {{"mode", StringAttr(mode)}});
      Tensor value = dt == DType::kF32    ? MakeTensor<float>({}, {0.75f})
                     : dt == DType::kI64  ? MakeTensor<int64_t>({}, {(int64_t{1} << 60) + 3})
                     : dt == DType::kBool ? MakeTensor<bool>({}, {true})
                                          : MakeTensor<uint8_t>({}, {200});
      ExpectExact(opencl::CreatePad,
                  {node, 19, {Random(dt, {3, 4, 5}, seed++), Ints({1, 0, 2, 2, 3, 1}), value}, {false, true, true}});
      // Negative pads crop; the trailing unpadded dims merge.
      ExpectExact(
          opencl::CreatePad,
          {node, 19, {Random(dt, {4, 6, 3, 2}, seed++), Ints({0, -1, 0, 0, 1, 2, 0, 0}), value}, {false, true, true}});
    }
  }
  // Opset 2: pads and value attributes; opset 18: axes input; value omitted.
  ExpectExact(opencl::CreatePad,
              {MakeNode("Pad", 1, 1, {{"pads", IntsAttr({0, 2, 1, 3})}, {"value", FloatAttr(-2.5f)}}),
               2,
               {Random(DType::kF32, {3, 7}, seed++)}});
  Node with_axes = MakeNode("Pad", 4, 1, {{"mode", StringAttr("reflect")}});
  with_axes.inputs[2] = "";
  ExpectExact(opencl::CreatePad, {with_axes,
                                  18,
                                  {Random(DType::kF32, {2, 5, 6}, seed++), Ints({3, 2, 4, 1}), Tensor(), Ints({-1, 1})},
                                  {false, true, false, true}});
  ExpectRefused(opencl::CreatePad, {MakeNode("Pad", 2), 13, {Random(DType::kF32, {3, 7}, seed++), Ints({0, 1, 0, 1})}},
                "pads are not constant");
}

// ---------------------------------------------------------------------------------------------
// Resize, Upsample

Node ResizeNode(std::map<std::string, Attribute> attrs) {
  Node node = MakeNode("Resize", 4, 1, std::move(attrs));
  node.inputs[1] = "";
  return node;
}

TEST(DataOpenCl, ResizeNearestEveryModeIsExact) {
  CHIPFIT_REQUIRE_OPENCL();
  uint64_t seed = 900;
  const std::vector<std::string> transforms = {"half_pixel",         "asymmetric",           "align_corners",
                                               "pytorch_half_pixel", "tf_half_pixel_for_nn", "half_pixel_symmetric"};
  for (const std::string& t : transforms) {
    for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
      for (const std::vector<float>& scales : std::vector<std::vector<float>>{{1, 1, 2, 3}, {1, 1, 0.6f, 0.5f}}) {
        Node node = ResizeNode({{"mode", StringAttr("nearest")},
                                {"coordinate_transformation_mode", StringAttr(t)},
                                {"nearest_mode", StringAttr(nearest)}});
        node.inputs[3] = "";
        // Opset 19: half_pixel_symmetric exists from Resize-19.
        ExpectExact(opencl::CreateResize,
                    {node,
                     19,
                     {Random(DType::kF32, {1, 2, 5, 7}, seed++), Tensor(), Floats(scales), Tensor()},
                     {false, false, true, false}});
      }
    }
  }
  // sizes instead of scales, int64 data, opset 10 (scales as input 1) and Upsample 7 and 9.
  Node sized = ResizeNode({{"mode", StringAttr("nearest")}});
  sized.inputs[2] = "";
  ExpectExact(opencl::CreateResize, {sized,
                                     13,
                                     {Random(DType::kI64, {2, 3, 4}, seed++), Tensor(), Tensor(), Ints({3, 7, 9})},
                                     {false, false, false, true}});
  ExpectExact(opencl::CreateResize, {MakeNode("Resize", 2, 1, {{"mode", StringAttr("nearest")}}),
                                     10,
                                     {Random(DType::kF32, {1, 1, 3, 4}, seed++), Floats({1, 1, 2.5f, 0.75f})},
                                     {false, true}});
  ExpectExact(opencl::CreateResize, {MakeNode("Upsample", 1, 1, {{"scales", FloatsAttr({1, 1, 2, 2})}}),
                                     7,
                                     {Random(DType::kF32, {1, 2, 3, 3}, seed++)}});
  ExpectExact(opencl::CreateResize, {MakeNode("Upsample", 2, 1),
                                     9,
                                     {Random(DType::kBool, {1, 2, 3, 3}, seed++), Floats({1, 1, 3, 2})},
                                     {false, true}});
}

TEST(DataOpenCl, ResizeLinearTransforms) {
  CHIPFIT_REQUIRE_OPENCL();
  uint64_t seed = 1000;
  for (const char* t : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "half_pixel_symmetric"}) {
    for (const std::vector<float>& scales :
         std::vector<std::vector<float>>{{1, 1, 2, 2}, {1, 1, 1.7f, 0.6f}, {1, 1, 0.5f, 3}}) {
      Node node = ResizeNode({{"mode", StringAttr("linear")}, {"coordinate_transformation_mode", StringAttr(t)}});
      node.inputs[3] = "";
      ExpectMatchesReference(opencl::CreateResize,
                             {node,
                              19,
                              {Random(DType::kF32, {2, 3, 9, 11}, seed++), Tensor(), Floats(scales), Tensor()},
                              {false, false, true, false}});
    }
  }
  // Trilinear over three axes (opset 18 axes), sizes, and tf_crop_and_resize with extrapolation.
  Node axes = ResizeNode({{"mode", StringAttr("linear")}, {"axes", IntsAttr({1, 2, 3})}});
  axes.inputs[2] = "";
  ExpectMatchesReference(opencl::CreateResize,
                         {axes,
                          18,
                          {Random(DType::kF32, {1, 4, 5, 6}, seed++), Tensor(), Tensor(), Ints({7, 3, 9})},
                          {false, false, false, true}});
  Node crop = MakeNode("Resize", 3, 1,
                       {{"mode", StringAttr("linear")},
                        {"coordinate_transformation_mode", StringAttr("tf_crop_and_resize")},
                        {"extrapolation_value", FloatAttr(-3.0f)}});
  ExpectMatchesReference(opencl::CreateResize,
                         {crop,
                          13,
                          {Random(DType::kF32, {1, 1, 6, 8}, seed++), Floats({0, 0, -0.2f, 0.1f, 1, 1, 0.9f, 1.3f}),
                           Floats({1, 1, 2, 1.5f})},
                          {false, true, true}});
  ExpectMatchesReference(opencl::CreateResize, {MakeNode("Upsample", 2, 1, {{"mode", StringAttr("linear")}}),
                                                9,
                                                {Random(DType::kF32, {1, 2, 4, 5}, seed++), Floats({1, 1, 2, 2})},
                                                {false, true}});
}

TEST(DataOpenCl, ResizeRefusals) {
  CHIPFIT_REQUIRE_OPENCL();
  auto resize = [](std::map<std::string, Attribute> attrs, DType dt, bool constant_scales) {
    Node node = ResizeNode(std::move(attrs));
    node.inputs[3] = "";
    return OpenClCase{node,
                      19,
                      {Random(dt, {1, 1, 4, 4}, 1), Tensor(), Floats({1, 1, 2, 2}), Tensor()},
                      {false, false, constant_scales, false}};
  };
  ExpectRefused(opencl::CreateResize, resize({{"mode", StringAttr("cubic")}}, DType::kF32, true), "cubic");
  ExpectRefused(opencl::CreateResize,
                resize({{"mode", StringAttr("linear")}, {"antialias", IntAttr(1)}}, DType::kF32, true), "antialias");
  ExpectRefused(opencl::CreateResize,
                resize({{"mode", StringAttr("nearest")}, {"exclude_outside", IntAttr(1)}}, DType::kF32, true),
                "exclude_outside");
  ExpectRefused(opencl::CreateResize, resize({{"mode", StringAttr("linear")}}, DType::kI64, true), "float32 only");
  ExpectRefused(opencl::CreateResize, resize({{"mode", StringAttr("nearest")}}, DType::kF32, false), "not constant");
}

// ---------------------------------------------------------------------------------------------
// Refusals every data kernel shares

TEST(DataOpenCl, RefusesRunTimeShapesAndEmptyTensors) {
  CHIPFIT_REQUIRE_OPENCL();
  const OpenClCase transpose{MakeNode("Transpose", 1), 13, {Random(DType::kF32, {3, 4}, 1)}};
  ExpectRefused(opencl::CreateTranspose, transpose, "only known at run time", /*outputs_known=*/false);
  ExpectRefused(opencl::CreateCopy, {MakeNode("Identity", 1), 13, {Tensor(DType::kF32, {3, 0})}}, "empty");
  ExpectRefused(opencl::CreateGather, {MakeNode("Gather", 2), 13, {Random(DType::kF32, {3, 4}, 1), Ints({})}}, "empty");
  // A dim unknown at compile time (-1 in the ValueInfo) is refused even when outputs were given.
  auto context = TestContext(Precision::kFp32);
  ASSERT_TRUE(context.ok());
  const Node node = MakeNode("Identity", 1);
  ValueInfo info{DType::kF32, {-1, 4}, nullptr};
  std::vector<const ValueInfo*> ptrs = {&info};
  std::vector<ValueInfo> outs = {{DType::kF32, {-1, 4}, nullptr}};
  KernelInit init{node, ptrs, 13, Precision::kFp32, nullptr, context->get(), &outs};
  const Status s = opencl::CreateCopy(init).status();
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("known only at run time"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace chipfit::testing
