// OpenCL pooling against the reference on fp32 and fp16 storage: MaxPool and AveragePool over
// 1-D to 3-D windows with pads, strides, dilations, ceil_mode, auto_pad and count_include_pad; the
// global pools on small planes (a work item each) and large ones (a work group each); refusals.
#include <gtest/gtest.h>

#include "devices/opencl/ops/opencl_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/opencl/opencl_test_util.h"

namespace chipfit::testing {
namespace {

struct PoolSpec {
  Shape x;
  std::map<std::string, Attribute> attrs;
};

const std::vector<PoolSpec> kWindows = {
    {{2, 3, 9, 11}, {{"kernel_shape", IntsAttr({3, 3})}, {"pads", IntsAttr({1, 1, 1, 1})}}},
    {{1, 4, 13, 10}, {{"kernel_shape", IntsAttr({3, 2})}, {"strides", IntsAttr({2, 3})}}},
    {{1, 2, 10, 10}, {{"kernel_shape", IntsAttr({3, 3})}, {"strides", IntsAttr({2, 2})}, {"ceil_mode", IntAttr(1)}}},
    {{1, 2, 11, 9},
     {{"kernel_shape", IntsAttr({3, 3})},
      {"strides", IntsAttr({2, 2})},
      {"pads", IntsAttr({1, 0, 2, 1})},
      {"ceil_mode", IntAttr(1)}}},
    {{1, 3, 12, 12}, {{"kernel_shape", IntsAttr({3, 3})}, {"dilations", IntsAttr({2, 2})}}},
    {{2, 2, 7, 8}, {{"kernel_shape", IntsAttr({3, 4})}, {"auto_pad", StringAttr("SAME_UPPER")}}},
    {{2, 2, 7, 8},
     {{"kernel_shape", IntsAttr({2, 2})}, {"strides", IntsAttr({2, 2})}, {"auto_pad", StringAttr("SAME_LOWER")}}},
    {{1, 2, 7, 8}, {{"kernel_shape", IntsAttr({3, 3})}, {"auto_pad", StringAttr("VALID")}}},
    {{3, 5, 31}, {{"kernel_shape", IntsAttr({4})}, {"strides", IntsAttr({3})}, {"pads", IntsAttr({2, 1})}}},
    {{1, 2, 5, 6, 7}, {{"kernel_shape", IntsAttr({2, 3, 2})}, {"pads", IntsAttr({1, 1, 0, 0, 1, 1})}}},
};

TEST(PoolOpenCl, WindowsMatchReference) {
  CHIPFIT_REQUIRE_OPENCL();
  uint64_t seed = 1;
  for (const char* op : {"MaxPool", "AveragePool"}) {
    for (const PoolSpec& s : kWindows) {
      for (int include_pad : {0, 1}) {
        if (include_pad == 1 && std::string(op) == "MaxPool") continue;
        std::map<std::string, Attribute> attrs = s.attrs;
        if (include_pad) attrs["count_include_pad"] = IntAttr(1);
        SCOPED_TRACE(std::string(op) + " " + ShapeToString(s.x) + " include_pad " + std::to_string(include_pad) +
                     " case " + std::to_string(&s - kWindows.data()));
        OpenClCase c{.node = MakeNode(op, 1, 1, attrs), .opset = 19};
        c.inputs = {RandomF32(s.x, seed++, -2.0f, 2.0f)};
        // Max copies a stored value and the average sums ≤ 12 values in float: fp16 error is the
        // rounding of inputs and outputs, NMSE ~1e-7 (ExpectMatchesReference's 1e-5 default).
        ExpectMatchesReference(op == std::string("MaxPool") ? opencl::CreateMaxPool : opencl::CreateAveragePool, c);
      }
    }
  }
}

TEST(PoolOpenCl, GlobalPoolsMatchReference) {
  CHIPFIT_REQUIRE_OPENCL();
  // Small planes (a work item per plane), large ones (a work group per plane, odd sizes), 1-D, 3-D.
  const std::vector<Shape> shapes = {{2, 3, 5, 5}, {1, 4, 40, 37}, {2, 3, 300}, {1, 2, 6, 7, 9}, {3, 2, 1, 1}};
  uint64_t seed = 50;
  for (const char* op : {"GlobalMaxPool", "GlobalAveragePool"}) {
    for (const Shape& x : shapes) {
      SCOPED_TRACE(std::string(op) + " " + ShapeToString(x));
      OpenClCase c{.node = MakeNode(op, 1)};
      c.inputs = {RandomF32(x, seed++, -2.0f, 2.0f)};
      ExpectMatchesReference(
          op == std::string("GlobalMaxPool") ? opencl::CreateGlobalMaxPool : opencl::CreateGlobalAveragePool, c);
    }
  }
}

TEST(PoolOpenCl, Refusals) {
  CHIPFIT_REQUIRE_OPENCL();
  auto context = TestContext(Precision::kFp32);
  ASSERT_TRUE(context.ok());
  auto refusal = [&](const Node& node, const ValueInfo& x, const Shape& out) {
    const std::vector<const ValueInfo*> ptrs = {&x};
    const std::vector<ValueInfo> outs = {{DType::kF32, out}, {DType::kI64, out}};
    return opencl::CreateMaxPool(KernelInit{node, ptrs, 12, Precision::kFp32, nullptr, context->get(), &outs}).status();
  };
  const Node with_indices = MakeNode("MaxPool", 1, 2, {{"kernel_shape", IntsAttr({2, 2})}});
  Status s = refusal(with_indices, {DType::kF32, {1, 2, 4, 4}}, {1, 2, 3, 3});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("Indices output"), std::string::npos) << s.ToString();

  const Node four_d = MakeNode("MaxPool", 1, 1, {{"kernel_shape", IntsAttr({2, 2, 2, 2})}});
  s = refusal(four_d, {DType::kF32, {1, 1, 4, 4, 4, 4}}, {1, 1, 3, 3, 3, 3});
  EXPECT_NE(s.message().find("4-D pooling"), std::string::npos) << s.ToString();

  const Node plain = MakeNode("MaxPool", 1, 1, {{"kernel_shape", IntsAttr({2, 2})}});
  s = refusal(plain, {DType::kF32, {-1, 2, 4, 4}}, {-1, 2, 3, 3});
  EXPECT_NE(s.message().find("shapes only known at run time"), std::string::npos) << s.ToString();
  EXPECT_TRUE(refusal(plain, {DType::kF32, {1, 2, 4, 4}}, {1, 2, 3, 3}).ok());
}

}  // namespace
}  // namespace chipfit::testing
