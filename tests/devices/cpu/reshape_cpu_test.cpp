// Reshape-like copies and Transpose on the CPU against the reference.
#include <gtest/gtest.h>

#include <cstring>

#include "devices/cpu/ops/cpu_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"

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

}  // namespace
}  // namespace chipfit::testing
