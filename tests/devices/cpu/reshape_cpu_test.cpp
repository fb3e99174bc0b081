// Reshape-like copies and Transpose on the CPU against the reference.
#include <gtest/gtest.h>

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

TEST(ReshapeCpuTest, DynamicShapesAreRefused) {
  KernelCase c{.node = MakeNode("Transpose", 1)};
  c.inputs = {RandomF32({2, 3}, 1)};
  std::vector<ValueInfo> infos = {{DType::kF32, {-1, 3}, nullptr, Layout::kPlain}};
  std::vector<const ValueInfo*> ptrs = {&infos[0]};
  auto kernel = cpu::CreateTranspose(KernelInit{c.node, ptrs, 17, Precision::kFp32, nullptr});
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.status().message().find("run time"), std::string::npos);
}

}  // namespace
}  // namespace chipfit::testing
