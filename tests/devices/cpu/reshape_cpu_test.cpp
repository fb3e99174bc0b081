// Reshape-like copies and Transpose on the CPU against the reference.
#include <gtest/gtest.h>

#include <cstring>

#include "core/graph/passes.h"
#include "devices/cpu/ops/cpu_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"
#include "tests/devices/cpu/kernel_layout_util.h"

namespace chipfit::testing {
namespace {

Tensor Int64s(const std::vector<int64_t>& values) {
  Tensor t(DType::kI64, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.data<int64_t>()[i] = values[i];
  return t;
}

TEST(ReshapeCpuTest, ReshapeOfAChannelsLastProducerCopiesPlainOrder) {
  KernelCase c{.node = MakeNode("Reshape", 2)};
  c.inputs = {RandomF32({1, 6, 5, 3}, 1), Int64s({1, -1})};
  c.constant = {false, true};
  c.layouts = {Layout::kChannelsLast};
  auto out = RunCpuKernel(cpu::CreateCopy, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  EXPECT_EQ((*out)[0].shape(), ref[0].shape());
  EXPECT_EQ(MaxRelError((*out)[0], ref[0]), 0.0);
}

TEST(ReshapeCpuTest, TransposeMatchesReference) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{2, 3, 4}, {2, 0, 1}}, {{1, 5, 7, 3}, {0, 2, 3, 1}}, {{4, 9}, {}}, {{2, 3, 4, 5, 2}, {4, 2, 0, 3, 1}}};
  uint64_t seed = 10;
  for (const auto& [shape, perm] : cases) {
    std::map<std::string, Attribute> attrs;
    if (!perm.empty()) attrs["perm"] = IntsAttr(perm);
    KernelCase c{.node = MakeNode("Transpose", 1, 1, attrs)};
    c.inputs = {RandomF32(shape, ++seed)};
    auto out = RunCpuKernel(cpu::CreateTranspose, c);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const auto ref = RunReference(c);
    EXPECT_EQ((*out)[0].shape(), ref[0].shape());
    EXPECT_EQ(MaxRelError((*out)[0], ref[0]), 0.0) << ShapeToString(shape);
  }
}

// Transpose moves bits, whatever the element type: int64 (shapes and indices in detectors), double,
// float16, uint8 and bool give the reference's bytes exactly.
TEST(ReshapeCpuTest, TransposeOfEveryElementSizeMatchesReferenceBitForBit) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{2, 3, 4}, {2, 0, 1}}, {{3, 5}, {}}, {{2, 1, 3, 2, 2, 3}, {5, 3, 1, 0, 2, 4}}};
  for (DType dtype : {DType::kI64, DType::kF64, DType::kF16, DType::kU8, DType::kBool, DType::kI32}) {
    for (const auto& [shape, perm] : cases) {
      std::map<std::string, Attribute> attrs;
      if (!perm.empty()) attrs["perm"] = IntsAttr(perm);
      KernelCase c{.node = MakeNode("Transpose", 1, 1, attrs)};
      Tensor x(dtype, shape);
      auto* bytes = static_cast<uint8_t*>(x.raw_data());
      for (size_t i = 0; i < x.nbytes(); ++i) {
        bytes[i] = dtype == DType::kBool ? static_cast<uint8_t>(i % 3 == 0) : static_cast<uint8_t>((i * 37 + 11) % 251);
      }
      c.inputs = {x};
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + ShapeToString(shape));
      auto out = RunCpuKernel(cpu::CreateTranspose, c);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const auto ref = RunReference(c);
      ASSERT_EQ((*out)[0].shape(), ref[0].shape());
      ASSERT_EQ((*out)[0].dtype(), dtype);
      EXPECT_EQ(std::memcmp((*out)[0].raw_data(), ref[0].raw_data(), ref[0].nbytes()), 0);
    }
  }
}

// An empty tensor (no boxes left after NMS) transposes to an empty tensor of the permuted shape.
TEST(ReshapeCpuTest, TransposeOfAnEmptyTensorIsEmpty) {
  KernelCase c{.node = MakeNode("Transpose", 1, 1, {{"perm", IntsAttr({1, 0, 2})}})};
  c.inputs = {Tensor(DType::kI64, {0, 4, 2})};
  auto out = RunCpuKernel(cpu::CreateTranspose, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{4, 0, 2}));
  EXPECT_EQ((*out)[0].numel(), 0);
}

TEST(ReshapeCpuTest, DynamicShapesAreRefused) {
  KernelCase c{.node = MakeNode("Transpose", 1)};
  c.inputs = {RandomF32({2, 3}, 1)};
  std::vector<ValueInfo> infos = {{DType::kF32, {-1, 3}, nullptr, Layout::kPlain}};
  std::vector<const ValueInfo*> ptrs = {&infos[0]};
  auto kernel = cpu::CreateTranspose(KernelInit{c.node, ptrs, 17, Precision::kFp32, nullptr});
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.status().message().find("run time"), std::string::npos);
}

// Dropout is a copy (mask all true) when training_mode is a constant false or the ratio a constant 0;
// otherwise it draws a random mask and stays on the reference, which the refusal says.
TEST(ReshapeCpuTest, DropoutCopiesOutsideTrainingAndRefusesRandomMasks) {
  const Tensor x = RandomF32({3, 5}, 7);
  const Tensor ratio = MakeTensor<float>({}, {0.3f}), zero = MakeTensor<float>({}, {0.0f});
  const Tensor off = MakeTensor<bool>({}, {false}), on = MakeTensor<bool>({}, {true});
  struct Form {
    Tensor ratio, training;
    bool constant_training;
    bool copies;
  };
  const std::vector<Form> forms = {{ratio, off, true, true},
                                   {zero, on, true, true},
                                   {ratio, on, true, false},
                                   {ratio, off, false, false},    // training_mode computed at run time
                                   {Tensor(), on, true, false}};  // ratio omitted: 0.5
  for (const Form& f : forms) {
    KernelCase c{.node = MakeNode("Dropout", 3, 2), .opset = 13};
    c.inputs = {x, f.ratio, f.training};
    if (!f.ratio.defined()) c.node.inputs[1].clear();
    c.constant = {false, true, f.constant_training};
    auto out = RunCpuKernel(cpu::CreateCopy, c);
    if (!f.copies) {
      ASSERT_FALSE(out.ok());
      EXPECT_NE(out.status().message().find("random mask"), std::string::npos) << out.status().message();
      continue;
    }
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const std::vector<Tensor> ref = RunReference(c);
    ASSERT_EQ(out->size(), 2u);
    EXPECT_EQ(MaxRelError((*out)[0], ref[0]), 0.0);
    for (int64_t i = 0; i < (*out)[1].numel(); ++i) EXPECT_TRUE((*out)[1].data<bool>()[i]);
  }
}

// ChannelShuffle (FuseChannelShuffle's node) gives the reference's bytes in the order its producer writes:
// channels-last stays channels-last (a permutation within each pixel), plain moves planes; an input of
// another shape with the same element count is read as `shape` in plain order. Element sizes 1 to 8.
TEST(ReshapeCpuTest, ChannelShuffleMatchesReferenceInEitherOrder) {
  struct Case {
    Shape input, shape;
    int64_t group;
  };
  const std::vector<Case> cases = {{{1, 6, 3, 4}, {1, 6, 3, 4}, 2},
                                   {{1, 6, 3, 4}, {1, 6, 3, 4}, 3},
                                   {{2, 8, 5, 2}, {2, 8, 5, 2}, 4},
                                   {{1, 24, 5}, {1, 6, 4, 5}, 2}};
  for (DType dtype : {DType::kF32, DType::kI64, DType::kF16, DType::kU8}) {
    for (const Case& k : cases) {
      for (Layout layout : {Layout::kPlain, Layout::kChannelsLast}) {
        if (layout == Layout::kChannelsLast && k.input.size() != 4) continue;
        KernelCase c{.node =
                         MakeNode("ChannelShuffle", 1, 1, {{"group", IntAttr(k.group)}, {"shape", IntsAttr(k.shape)}})};
        c.node.domain = kChipfitDomain;
        Tensor x(dtype, k.input);
        auto* bytes = static_cast<uint8_t*>(x.raw_data());
        for (size_t i = 0; i < x.nbytes(); ++i) bytes[i] = static_cast<uint8_t>((i * 37 + 11) % 251);
        c.inputs = {x};
        c.layouts = {layout};
        SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + ShapeToString(k.input) + " group " +
                     std::to_string(k.group) + " " + std::string(LayoutName(layout)));
        auto layouts = LayoutsOf(cpu::CreateChannelShuffle, c);
        ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
        const Layout expected = k.input == k.shape ? layout : Layout::kPlain;
        EXPECT_EQ(layouts->inputs[0], expected);
        EXPECT_EQ(layouts->output, expected);
        auto out = RunCpuKernel(cpu::CreateChannelShuffle, c);
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        const auto ref = RunReference(c);
        ASSERT_EQ((*out)[0].shape(), k.shape);
        ASSERT_EQ(ref[0].shape(), k.shape);
        EXPECT_EQ(std::memcmp((*out)[0].raw_data(), ref[0].raw_data(), ref[0].nbytes()), 0);
      }
    }
  }
}

// The reference's own definition, on a small case written out: output channel j·g + i is input
// channel i·(C/g) + j.
TEST(ReshapeCpuTest, ChannelShuffleInterleavesTheGroups) {
  KernelCase c{.node = MakeNode("ChannelShuffle", 1, 1, {{"group", IntAttr(2)}, {"shape", IntsAttr({1, 6, 1, 1})}})};
  c.node.domain = kChipfitDomain;
  c.inputs = {MakeTensor<float>({1, 6, 1, 1}, {0, 1, 2, 3, 4, 5})};
  const auto ref = RunReference(c);
  const float* y = ref[0].data<float>();
  EXPECT_EQ(std::vector<float>(y, y + 6), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  auto out = RunCpuKernel(cpu::CreateChannelShuffle, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(std::memcmp((*out)[0].raw_data(), ref[0].raw_data(), ref[0].nbytes()), 0);
}

}  // namespace
}  // namespace chipfit::testing
