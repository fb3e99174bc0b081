// Pad and Slice on the CPU (index_copy_cpu.cpp) against the reference: every Pad mode, negative pads,
// the opset forms of pads, value and axes, Slice steps in both directions, integer dtypes, pads or
// starts known only at run time (planned when the node runs), and Slice of channels-last inputs.
#include <gtest/gtest.h>

#include "devices/cpu/ops/cpu_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"
#include "tests/devices/cpu/kernel_layout_util.h"

namespace chipfit::testing {
namespace {

using cpu::CreatePad;
using cpu::CreateSlice;

Tensor Ramp(DType dtype, const Shape& shape) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == DType::kF32) t.data<float>()[i] = static_cast<float>(i) * 0.5f - 3.0f;
    if (dtype == DType::kI64) t.data<int64_t>()[i] = i * 7 - 20;
    if (dtype == DType::kU8) t.data<uint8_t>()[i] = static_cast<uint8_t>(i * 3);
  }
  return t;
}

void ExpectSameAsReference(KernelFactory factory, const KernelCase& c) {
  auto out = RunCpuKernel(factory, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  ASSERT_EQ(ref.size(), 1u);
  ASSERT_EQ((*out)[0].shape(), ref[0].shape());
  ASSERT_EQ((*out)[0].dtype(), ref[0].dtype());
  EXPECT_EQ(std::memcmp((*out)[0].raw_data(), ref[0].raw_data(), ref[0].nbytes()), 0);
}

// Pad-13 with constant pads (and value) inputs.
KernelCase PadCase(const std::string& mode, DType dtype, const Shape& shape, std::vector<int64_t> pads,
                   int64_t opset = 13) {
  Attrs attrs;
  attrs["mode"] = StringAttr(mode);
  KernelCase c{.node = MakeNode("Pad", 3, 1, attrs), .opset = opset};
  c.inputs = {Ramp(dtype, shape), I64({static_cast<int64_t>(pads.size())}, pads)};
  Tensor value(dtype, {});
  if (dtype == DType::kF32) value.data<float>()[0] = 1.5f;
  if (dtype == DType::kI64) value.data<int64_t>()[0] = -9;
  if (dtype == DType::kU8) value.data<uint8_t>()[0] = 200;
  c.inputs.push_back(mode == "constant" ? value : Tensor());
  if (mode != "constant") c.node.inputs[2] = "";  // omitted
  c.constant = {false, true, true};
  return c;
}

TEST(IndexCopyCpuTest, PadConstantValueOnEveryDimOfAnNchwTensor) {
  ExpectSameAsReference(CreatePad, PadCase("constant", DType::kF32, {2, 3, 5, 6}, {0, 1, 2, 3, 1, 0, 1, 2}));
}

TEST(IndexCopyCpuTest, PadEdgeReflectAndWrap) {
  ExpectSameAsReference(CreatePad, PadCase("edge", DType::kF32, {1, 2, 4, 5}, {0, 0, 2, 3, 0, 0, 3, 2}));
  ExpectSameAsReference(CreatePad, PadCase("reflect", DType::kF32, {1, 2, 4, 5}, {0, 0, 2, 3, 0, 0, 3, 4}));
  ExpectSameAsReference(CreatePad, PadCase("wrap", DType::kF32, {1, 2, 4, 5}, {0, 0, 2, 3, 0, 0, 3, 4}, 19));
}

TEST(IndexCopyCpuTest, NegativePadsCrop) {
  ExpectSameAsReference(CreatePad, PadCase("constant", DType::kF32, {1, 2, 6, 7}, {0, 0, -1, 2, 0, -1, -2, 1}));
}

TEST(IndexCopyCpuTest, IntegerDtypesAndTheirFillValues) {
  ExpectSameAsReference(CreatePad, PadCase("constant", DType::kI64, {3, 4}, {1, 2, 2, 1}));
  ExpectSameAsReference(CreatePad, PadCase("constant", DType::kU8, {3, 4}, {0, 3, 1, 0}));
}

TEST(IndexCopyCpuTest, PadAttributeFormBeforeOpset11) {
  Attrs attrs;
  attrs["pads"] = IntsAttr({0, 0, 1, 1, 0, 0, 2, 0});
  attrs["value"] = FloatAttr(-2.0f);
  KernelCase c{.node = MakeNode("Pad", 1, 1, attrs), .opset = 2};
  c.inputs = {Ramp(DType::kF32, {1, 2, 3, 3})};
  ExpectSameAsReference(CreatePad, c);
}

TEST(IndexCopyCpuTest, PadAxesInputFromOpset18) {
  KernelCase c{.node = MakeNode("Pad", 4, 1), .opset = 18};
  c.inputs = {Ramp(DType::kF32, {2, 3, 4}), I64({4}, {1, 2, 0, 3}), Tensor(), I64({2}, {-1, 1})};
  c.node.inputs[2] = "";  // no constant_value: zeros
  c.constant = {false, true, false, true};
  ExpectSameAsReference(CreatePad, c);
}

TEST(IndexCopyCpuTest, PadsKnownOnlyAtRunTimeArePlannedWhenItRuns) {
  KernelCase c = PadCase("constant", DType::kF32, {1, 2, 3, 3}, {0, 0, 1, 1, 0, 0, 1, 1});
  c.constant = {false, false, true};
  ExpectSameAsReference(CreatePad, c);
  c = PadCase("reflect", DType::kI64, {2, 5}, {0, 2, 1, -1});
  c.constant = {false, false};
  ExpectSameAsReference(CreatePad, c);
}

KernelCase SliceCase(DType dtype, const Shape& shape, std::vector<int64_t> starts, std::vector<int64_t> ends,
                     std::vector<int64_t> axes, std::vector<int64_t> steps) {
  const auto n = static_cast<int64_t>(starts.size());
  KernelCase c{.node = MakeNode("Slice", 5, 1), .opset = 13};
  c.inputs = {Ramp(dtype, shape), I64({n}, starts), I64({n}, ends), I64({n}, axes), I64({n}, steps)};
  c.constant = {false, true, true, true, true};
  return c;
}

TEST(IndexCopyCpuTest, SliceForwardAndBackwardSteps) {
  ExpectSameAsReference(CreateSlice, SliceCase(DType::kF32, {2, 8, 10}, {1, 0}, {7, 9}, {1, 2}, {2, 1}));
  ExpectSameAsReference(CreateSlice, SliceCase(DType::kF32, {2, 8, 10}, {-1, 9}, {-100, 1}, {0, 2}, {-1, -3}));
  ExpectSameAsReference(CreateSlice, SliceCase(DType::kI64, {4, 6}, {1}, {1000}, {-1}, {1}));
}

TEST(IndexCopyCpuTest, SliceWithStartsAndShapeKnownOnlyAtRunTime) {
  KernelCase c = SliceCase(DType::kF32, {2, 8, 10}, {-1, 9}, {-100, 1}, {0, 2}, {-1, -3});
  c.constant = {false, false, true, false, true};
  ExpectSameAsReference(CreateSlice, c);
  c = SliceCase(DType::kU8, {4, 6}, {1}, {3}, {1}, {1});
  c.constant = {false, true, false, true, true};
  ExpectSameAsReference(CreateSlice, c);
}

TEST(IndexCopyCpuTest, EmptySliceWritesNothing) {
  ExpectSameAsReference(CreateSlice, SliceCase(DType::kF32, {3, 4}, {2}, {2}, {1}, {1}));
}

// The same Slice with its data input written channels-last by its producer: the kernel keeps that order
// for input 0 and its output (the slice parameters stay plain) and must give the reference's result.
KernelCase ChannelsLast(KernelCase c) {
  c.layouts = {Layout::kChannelsLast};
  return c;
}

void ExpectChannelsLastSameAsReference(const KernelCase& plain) {
  const KernelCase c = ChannelsLast(plain);
  auto layouts = LayoutsOf(CreateSlice, c);
  ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
  EXPECT_EQ(layouts->inputs[0], Layout::kChannelsLast);
  for (size_t k = 1; k < layouts->inputs.size(); ++k) EXPECT_EQ(layouts->inputs[k], Layout::kPlain) << k;
  EXPECT_EQ(layouts->output, Layout::kChannelsLast);
  ExpectSameAsReference(CreateSlice, c);
}

TEST(IndexCopyCpuTest, SliceChannelsLastSplitsChannelsInHalves) {
  // A ShuffleNet split: [1, 116, 7, 7] into channels [0, 58) and [58, 116).
  ExpectChannelsLastSameAsReference(SliceCase(DType::kF32, {1, 116, 7, 7}, {0}, {58}, {1}, {1}));
  ExpectChannelsLastSameAsReference(SliceCase(DType::kF32, {1, 116, 7, 7}, {58}, {116}, {1}, {1}));
  ExpectChannelsLastSameAsReference(SliceCase(DType::kF32, {2, 8, 3, 5}, {4}, {1000}, {1}, {1}));
}

TEST(IndexCopyCpuTest, SliceChannelsLastHeightAndWidthWithSteps) {
  ExpectChannelsLastSameAsReference(SliceCase(DType::kF32, {2, 6, 9, 10}, {1, 0}, {8, 10}, {2, 3}, {2, 3}));
  ExpectChannelsLastSameAsReference(SliceCase(DType::kF32, {2, 6, 9, 10}, {1, 9}, {8, 0}, {2, 3}, {2, -3}));
  ExpectChannelsLastSameAsReference(SliceCase(DType::kU8, {1, 5, 7, 4}, {-1, 1}, {-100, 4}, {2, 3}, {-2, 1}));
}

TEST(IndexCopyCpuTest, SliceChannelsLastOfEveryDimGivenNegativeAxes) {
  ExpectChannelsLastSameAsReference(
      SliceCase(DType::kF32, {3, 10, 6, 8}, {1, -8, 5, 1}, {3, 9, 0, 8}, {-4, -3, -2, -1}, {1, 3, -2, 2}));
  ExpectChannelsLastSameAsReference(
      SliceCase(DType::kI64, {2, 7, 5, 6}, {-1, 6, 1, -2}, {-100, 0, 4, 1}, {-4, -3, -2, -1}, {-1, -2, 1, -1}));
}

TEST(IndexCopyCpuTest, SliceChannelsLastWithStartsKnownOnlyAtRunTime) {
  KernelCase c = SliceCase(DType::kF32, {2, 8, 5, 6}, {1, 5}, {7, 0}, {1, 3}, {2, -2});
  c.constant = {false, false, true, true, true};
  ExpectChannelsLastSameAsReference(c);
}

// A plain Slice input stays plain; Pad runs plain whatever order its input arrives in.
TEST(IndexCopyCpuTest, PlainSliceAndPadStayPlain) {
  const KernelCase plain = SliceCase(DType::kF32, {1, 8, 4, 4}, {0}, {4}, {1}, {1});
  auto layouts = LayoutsOf(CreateSlice, plain);
  ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
  EXPECT_EQ(layouts->inputs[0], Layout::kPlain);
  EXPECT_EQ(layouts->output, Layout::kPlain);
  const KernelCase pad = ChannelsLast(PadCase("constant", DType::kF32, {1, 3, 4, 5}, {0, 0, 1, 1, 0, 0, 1, 1}));
  layouts = LayoutsOf(CreatePad, pad);
  ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
  EXPECT_EQ(layouts->inputs[0], Layout::kPlain);
  EXPECT_EQ(layouts->output, Layout::kPlain);
  ExpectSameAsReference(CreatePad, pad);
}

}  // namespace
}  // namespace chipfit::testing
