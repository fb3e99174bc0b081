// oneDNN pooling against the reference pooling: odd sizes, strides, pads, ceil_mode, auto_pad,
// count_include_pad, global pools, both input orders, 1-D windows; refusals with their reasons.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "core/reference/conv_util.h"
#include "devices/cpu/ops/cpu_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"
#include "tests/devices/cpu/kernel_layout_util.h"

namespace chipfit::testing {
namespace {

struct PoolSpec {
  Shape x;  // N C H W
  std::vector<int64_t> kernel, strides{1, 1}, pads{0, 0, 0, 0};
  int64_t ceil_mode = 0;
  std::string auto_pad{};
};

Node PoolNode(const std::string& op, const PoolSpec& s, int64_t count_include_pad = 0) {
  std::map<std::string, Attribute> attrs{
      {"kernel_shape", IntsAttr(s.kernel)}, {"strides", IntsAttr(s.strides)}, {"ceil_mode", IntAttr(s.ceil_mode)}};
  if (s.auto_pad.empty()) {
    attrs["pads"] = IntsAttr(s.pads);
  } else {
    attrs["auto_pad"] = StringAttr(s.auto_pad);
  }
  if (op == "AveragePool") attrs["count_include_pad"] = IntAttr(count_include_pad);
  return MakeNode(op, 1, 1, attrs);
}

const std::vector<PoolSpec> kSpecs = {
    {.x = {1, 3, 17, 23}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}},
    {.x = {2, 8, 9, 11}, .kernel = {2, 2}, .strides = {2, 2}, .ceil_mode = 1},
    {.x = {1, 5, 13, 7}, .kernel = {3, 2}, .strides = {2, 1}, .pads = {0, 1, 2, 0}, .ceil_mode = 1},
    {.x = {1, 16, 15, 15}, .kernel = {3, 3}, .strides = {2, 2}, .auto_pad = "SAME_UPPER"},
    {.x = {1, 4, 11, 11}, .kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}, .ceil_mode = 1},
    {.x = {3, 1, 6, 10}, .kernel = {6, 1}, .strides = {1, 3}},
    {.x = {1, 7, 12, 9}, .kernel = {5, 5}, .strides = {3, 3}, .pads = {2, 2, 2, 2}},
};

// Runs `c` on the CPU kernel with the input in both orders and compares with the reference.
void ExpectMatchesReference(KernelFactory factory, KernelCase c, const std::string& what) {
  for (Layout layout : {Layout::kPlain, Layout::kChannelsLast}) {
    c.layouts = {layout};
    SCOPED_TRACE(what + " input " + std::string(LayoutName(layout)));
    auto out = RunCpuKernel(factory, c);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const auto ref = RunReference(c);
    ASSERT_EQ(ref.size(), 1u);
    EXPECT_EQ((*out)[0].shape(), ref[0].shape());
    EXPECT_LE(MaxRelError((*out)[0], ref[0]), 1e-4);
  }
}

std::string Describe(const PoolSpec& s) {
  return ShapeToString(s.x) + " k" + JoinInts(s.kernel) + " s" + JoinInts(s.strides) + " p" + JoinInts(s.pads) +
         " ceil" + std::to_string(s.ceil_mode) + " " + s.auto_pad;
}

TEST(PoolCpuTest, MaxPoolMatchesReference) {
  uint64_t seed = 10;
  for (const PoolSpec& spec : kSpecs) {
    KernelCase c{.node = PoolNode("MaxPool", spec)};
    c.inputs = {RandomF32(spec.x, ++seed)};
    ExpectMatchesReference(cpu::CreateMaxPoolF32, c, Describe(spec));
  }
}

TEST(PoolCpuTest, AveragePoolMatchesReferenceWithAndWithoutPadCounting) {
  uint64_t seed = 20;
  for (const PoolSpec& spec : kSpecs) {
    for (int64_t include : {0, 1}) {
      KernelCase c{.node = PoolNode("AveragePool", spec, include)};
      c.inputs = {RandomF32(spec.x, ++seed)};
      if (include == 1 && spec.ceil_mode == 1 && spec.x[2] == 9) {
        // 9 rows, kernel 2, stride 2, ceil_mode: the fifth window hangs one row past the input,
        // which ONNX leaves out of the divisor and oneDNN's include-padding mode would count.
        auto out = RunCpuKernel(cpu::CreateAveragePoolF32, c);
        ASSERT_FALSE(out.ok());
        EXPECT_EQ(out.status().code(), StatusCode::kUnsupported);
        EXPECT_NE(out.status().message().find("count_include_pad and ceil_mode"), std::string::npos);
        continue;
      }
      ExpectMatchesReference(cpu::CreateAveragePoolF32, c,
                             Describe(spec) + " count_include_pad " + std::to_string(include));
    }
  }
}

TEST(PoolCpuTest, GlobalPoolsMatchReference) {
  uint64_t seed = 30;
  for (const Shape& x : std::vector<Shape>{{2, 7, 9, 11}, {1, 32, 1, 1}, {1, 3, 1, 17}, {4, 20, 7, 7}}) {
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
      KernelCase c{.node = MakeNode(op, 1)};
      c.inputs = {RandomF32(x, ++seed)};
      const KernelFactory factory =
          std::string(op) == "GlobalMaxPool" ? cpu::CreateGlobalMaxPoolF32 : cpu::CreateGlobalAveragePoolF32;
      ExpectMatchesReference(factory, c, std::string(op) + " " + ShapeToString(x));
    }
  }
}

TEST(PoolCpuTest, RefusesWhatItCannotRunWithAReason) {
  // The Indices output.
  KernelCase indices{.node = PoolNode("MaxPool", kSpecs[0])};
  indices.node.outputs.push_back("indices");
  indices.inputs = {RandomF32(kSpecs[0].x, 1)};
  auto out = RunCpuKernel(cpu::CreateMaxPoolF32, indices);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(out.status().message().find("Indices"), std::string::npos);

  // Dilated windows: oneDNN 2.6 has only its reference pooling for them.
  KernelCase dilated{.node = PoolNode("MaxPool", kSpecs[0])};
  dilated.node.attributes["dilations"] = IntsAttr({2, 2});
  dilated.inputs = {RandomF32(kSpecs[0].x, 2)};
  out = RunCpuKernel(cpu::CreateMaxPoolF32, dilated);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("reference implementation"), std::string::npos);

  // 4-D windows (rank-6 tensors).
  KernelCase pool4d{.node = MakeNode("MaxPool", 1, 1, {{"kernel_shape", IntsAttr({2, 2, 2, 2})}})};
  pool4d.inputs = {RandomF32({1, 2, 3, 3, 3, 3}, 3)};
  out = RunCpuKernel(cpu::CreateMaxPoolF32, pool4d);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(out.status().message().find("4-D pooling"), std::string::npos);
}

// 1-D pools ([N, C, W]) run as 2-D ones over an H = 1 view of the same bytes, in plain order.
struct Pool1dSpec {
  Shape x;  // N C W
  int64_t kernel, stride = 1;
  std::vector<int64_t> pads{0, 0};
  int64_t ceil_mode = 0;
  std::string auto_pad{};
  // count_include_pad with ceil_mode where the last window hangs past the end padding: ONNX leaves
  // the overhang out of the divisor, oneDNN's include-padding mode would count it.
  bool include_pad_refused = false;
};

const std::vector<Pool1dSpec> kPool1dSpecs = {
    {.x = {1, 3, 23}, .kernel = 3, .stride = 2, .pads = {1, 1}},
    {.x = {2, 8, 9}, .kernel = 2, .stride = 2, .ceil_mode = 1, .include_pad_refused = true},
    {.x = {1, 5, 13}, .kernel = 3, .stride = 2, .pads = {0, 2}, .ceil_mode = 1},
    {.x = {1, 4, 11}, .kernel = 3, .stride = 2, .pads = {1, 1}, .ceil_mode = 1},
    {.x = {1, 16, 15}, .kernel = 3, .stride = 2, .auto_pad = "SAME_UPPER"},
    {.x = {1, 16, 16}, .kernel = 4, .stride = 3, .auto_pad = "SAME_LOWER"},
    {.x = {2, 6, 20}, .kernel = 5, .stride = 3, .auto_pad = "VALID"},
    {.x = {3, 1, 10}, .kernel = 10},
    {.x = {1, 7, 12}, .kernel = 5, .stride = 3, .pads = {2, 2}},
    {.x = {2, 64, 1000}, .kernel = 3, .stride = 1, .pads = {1, 1}},
};

Node Pool1dNode(const std::string& op, const Pool1dSpec& s, int64_t count_include_pad = 0) {
  std::map<std::string, Attribute> attrs{
      {"kernel_shape", IntsAttr({s.kernel})}, {"strides", IntsAttr({s.stride})}, {"ceil_mode", IntAttr(s.ceil_mode)}};
  if (s.auto_pad.empty()) {
    attrs["pads"] = IntsAttr(s.pads);
  } else {
    attrs["auto_pad"] = StringAttr(s.auto_pad);
  }
  if (op == "AveragePool") attrs["count_include_pad"] = IntAttr(count_include_pad);
  return MakeNode(op, 1, 1, attrs);
}

std::string Describe(const Pool1dSpec& s) {
  return ShapeToString(s.x) + " k" + std::to_string(s.kernel) + " s" + std::to_string(s.stride) + " p" +
         JoinInts(s.pads) + " ceil" + std::to_string(s.ceil_mode) + " " + s.auto_pad;
}

void ExpectPlainMatchesReference(KernelFactory factory, const KernelCase& c) {
  auto layouts = LayoutsOf(factory, c);
  ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
  EXPECT_EQ(layouts->inputs[0], Layout::kPlain);
  EXPECT_EQ(layouts->output, Layout::kPlain);
  auto out = RunCpuKernel(factory, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  ASSERT_EQ(ref.size(), 1u);
  EXPECT_EQ((*out)[0].shape(), ref[0].shape());
  EXPECT_LE(MaxRelError((*out)[0], ref[0]), 1e-4);
}

TEST(PoolCpuTest, OneDimensionalPoolsMatchReference) {
  uint64_t seed = 40;
  for (const Pool1dSpec& spec : kPool1dSpecs) {
    KernelCase max{.node = Pool1dNode("MaxPool", spec)};
    max.inputs = {RandomF32(spec.x, ++seed)};
    SCOPED_TRACE(Describe(spec));
    {
      SCOPED_TRACE("MaxPool");
      ExpectPlainMatchesReference(cpu::CreateMaxPoolF32, max);
    }
    for (int64_t include : {0, 1}) {
      SCOPED_TRACE("AveragePool count_include_pad " + std::to_string(include));
      KernelCase avg{.node = Pool1dNode("AveragePool", spec, include)};
      avg.inputs = {RandomF32(spec.x, ++seed)};
      if (include == 1 && spec.include_pad_refused) {
        auto out = RunCpuKernel(cpu::CreateAveragePoolF32, avg);
        ASSERT_FALSE(out.ok());
        EXPECT_EQ(out.status().code(), StatusCode::kUnsupported);
        EXPECT_NE(out.status().message().find("count_include_pad and ceil_mode"), std::string::npos);
        continue;
      }
      ExpectPlainMatchesReference(cpu::CreateAveragePoolF32, avg);
    }
  }
}

TEST(PoolCpuTest, OneDimensionalGlobalPoolsMatchReference) {
  uint64_t seed = 60;
  for (const Shape& x : std::vector<Shape>{{2, 7, 9}, {1, 32, 1}, {4, 20, 300}}) {
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
      KernelCase c{.node = MakeNode(op, 1)};
      c.inputs = {RandomF32(x, ++seed)};
      SCOPED_TRACE(std::string(op) + " " + ShapeToString(x));
      ExpectPlainMatchesReference(
          std::string(op) == "GlobalMaxPool" ? cpu::CreateGlobalMaxPoolF32 : cpu::CreateGlobalAveragePoolF32, c);
    }
  }
}

// What the 2-D kernel refuses it refuses in 1-D too: the Indices output, dilated windows.
TEST(PoolCpuTest, OneDimensionalPoolsRefuseAsTwoDimensionalOnes) {
  KernelCase indices{.node = Pool1dNode("MaxPool", kPool1dSpecs[0])};
  indices.node.outputs.push_back("indices");
  indices.inputs = {RandomF32(kPool1dSpecs[0].x, 1)};
  auto out = RunCpuKernel(cpu::CreateMaxPoolF32, indices);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(out.status().message().find("Indices"), std::string::npos);

  KernelCase dilated{.node = Pool1dNode("MaxPool", kPool1dSpecs[0])};
  dilated.node.attributes["dilations"] = IntsAttr({2});
  dilated.inputs = {RandomF32(kPool1dSpecs[0].x, 2)};
  out = RunCpuKernel(cpu::CreateMaxPoolF32, dilated);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("reference implementation"), std::string::npos);
  EXPECT_NE(out.status().message().find("dilations [2]"), std::string::npos);
}

// 3-D windows over NCDHW tensors run on oneDNN in plain order: max, average with and without the
// padding counted, strides and padding, and the global pools.
TEST(PoolCpuTest, ThreeDimensionalPoolsMatchReference) {
  const std::map<std::string, Attribute> window = {
      {"kernel_shape", IntsAttr({3, 2, 3})}, {"strides", IntsAttr({2, 1, 2})}, {"pads", IntsAttr({1, 0, 1, 1, 1, 0})}};
  uint64_t seed = 80;
  KernelCase max{.node = MakeNode("MaxPool", 1, 1, window)};
  max.inputs = {RandomF32({2, 5, 7, 6, 9}, ++seed)};
  ExpectPlainMatchesReference(cpu::CreateMaxPoolF32, max);
  for (int64_t include : {0, 1}) {
    std::map<std::string, Attribute> attrs = window;
    attrs["count_include_pad"] = IntAttr(include);
    KernelCase avg{.node = MakeNode("AveragePool", 1, 1, attrs)};
    avg.inputs = {RandomF32({1, 3, 8, 5, 6}, ++seed)};
    SCOPED_TRACE("count_include_pad " + std::to_string(include));
    ExpectPlainMatchesReference(cpu::CreateAveragePoolF32, avg);
  }
  KernelCase global_max{.node = MakeNode("GlobalMaxPool", 1, 1)};
  global_max.inputs = {RandomF32({2, 4, 3, 5, 6}, ++seed)};
  ExpectPlainMatchesReference(cpu::CreateGlobalMaxPoolF32, global_max);
  KernelCase global_avg{.node = MakeNode("GlobalAveragePool", 1, 1)};
  global_avg.inputs = {RandomF32({2, 4, 3, 5, 6}, ++seed)};
  ExpectPlainMatchesReference(cpu::CreateGlobalAveragePoolF32, global_avg);
}

// The own MaxPool (what oneDNN refuses): dilations, ceil_mode, padding, the Indices output in both
// storage orders, 1-D to 3-D windows and f32, f64, u8, i8 inputs give exactly the reference's values and
// indices (a max rounds nothing). NaN inputs keep the reference's choice of the first tap.
TEST(PoolCpuTest, PlainMaxPoolMatchesReferenceExactly) {
  struct Case {
    Shape x;
    std::map<std::string, Attribute> attrs;
  };
  std::vector<Case> cases = {
      {{1, 3, 17, 23}, {{"kernel_shape", IntsAttr({3, 3})}, {"dilations", IntsAttr({2, 2})}}},
      {{2, 4, 12, 11},
       {{"kernel_shape", IntsAttr({2, 3})},
        {"dilations", IntsAttr({2, 3})},
        {"strides", IntsAttr({2, 1})},
        {"pads", IntsAttr({1, 2, 0, 1})},
        {"ceil_mode", IntAttr(1)}}},
      {{1, 2, 9, 9},
       {{"kernel_shape", IntsAttr({3, 3})}, {"strides", IntsAttr({2, 2})}, {"auto_pad", StringAttr("SAME_UPPER")}}},
      {{2, 3, 20}, {{"kernel_shape", IntsAttr({4})}, {"dilations", IntsAttr({3})}, {"pads", IntsAttr({2, 2})}}},
      {{1, 2, 6, 7, 8},
       {{"kernel_shape", IntsAttr({2, 2, 2})}, {"dilations", IntsAttr({2, 1, 3})}, {"strides", IntsAttr({1, 2, 1})}}},
  };
  uint64_t seed = 500;
  for (const Case& base : cases) {
    for (DType dtype : {DType::kF32, DType::kF64, DType::kU8, DType::kI8}) {
      for (int64_t order : {0, 1}) {
        for (bool with_indices : {false, true}) {
          KernelCase c{.node = MakeNode("MaxPool", 1, with_indices ? 2 : 1, base.attrs), .opset = 12};
          c.node.attributes["storage_order"] = IntAttr(order);
          c.inputs = {SeededTensor(dtype, base.x, ++seed)};
          if (dtype == DType::kF32) c.inputs[0].data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
          SCOPED_TRACE(ShapeToString(base.x) + " " + std::string(DTypeName(dtype)) + " order " + std::to_string(order) +
                       (with_indices ? " with indices" : ""));
          auto out = RunCpuKernel(cpu::CreatePlainMaxPool, c);
          ASSERT_TRUE(out.ok()) << out.status().ToString();
          const auto ref = RunReference(c);
          ASSERT_EQ(out->size(), ref.size());
          for (size_t i = 0; i < ref.size(); ++i) {
            ASSERT_EQ((*out)[i].shape(), ref[i].shape());
            ASSERT_EQ((*out)[i].nbytes(), ref[i].nbytes());
            EXPECT_EQ(std::memcmp((*out)[i].raw_data(), ref[i].raw_data(), ref[i].nbytes()), 0) << "output " << i;
          }
        }
      }
    }
  }
  KernelCase f16{.node = MakeNode("MaxPool", 1, 1, {{"kernel_shape", IntsAttr({2, 2})}})};
  f16.inputs = {SeededTensor(DType::kF16, {1, 1, 4, 4}, 1)};
  auto refused = RunCpuKernel(cpu::CreatePlainMaxPool, f16);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("f16 input"), std::string::npos) << refused.status().message();
}

}  // namespace
}  // namespace chipfit::testing
