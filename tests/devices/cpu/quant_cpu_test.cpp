// CPU QLinearConv, ConvInteger, QLinearMatMul, MatMulInteger (oneDNN int8) and Quantize/Dequantize/DynamicQuantize
// loops against the reference: int32 outputs exact, requantized ones within 1 (float vs double rounding).
#include <gtest/gtest.h>

#include <cstdlib>

#include "devices/cpu/ops/cpu_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"

namespace chipfit::testing {
namespace {

template <typename T>
Tensor RandomInt(const Shape& shape, uint64_t seed, int lo, int hi) {
  Tensor t(DTypeOf<T>(), shape);
  SplitMix64 rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) {
    t.data<T>()[i] = static_cast<T>(std::min(hi, lo + static_cast<int>(rng.Uniform(0.0f, 1.0f) * (hi - lo + 1))));
  }
  return t;
}

Tensor Scalar(float v) { return MakeTensor<float>({}, {v}); }
template <typename T>
Tensor ScalarOf(T v) {
  return MakeTensor<T>({}, {v});
}

// Runs the CPU kernel and the reference; integer outputs may differ by `tolerance`, and at most 1 % of
// them at all (requantization rounds float products on oneDNN, double ones in the reference).
void ExpectMatchesReference(KernelFactory factory, const KernelCase& c, int64_t tolerance) {
  auto out = RunCpuKernel(factory, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const std::vector<Tensor> ref = RunReference(c);
  ASSERT_EQ(out->size(), ref.size());
  for (size_t k = 0; k < ref.size(); ++k) {
    ASSERT_EQ((*out)[k].dtype(), ref[k].dtype());
    ASSERT_EQ((*out)[k].shape(), ref[k].shape());
    int64_t differ = 0;
    for (int64_t i = 0; i < ref[k].numel(); ++i) {
      const double d = std::fabs((*out)[k].GetAsDouble(i) - ref[k].GetAsDouble(i));
      ASSERT_LE(d, static_cast<double>(tolerance)) << "output " << k << " at flat index " << i;
      differ += d != 0;
    }
    EXPECT_LE(differ * 100, ref[k].numel()) << differ << " of " << ref[k].numel() << " values differ";
  }
}

struct QConvSpec {
  Shape x, w;
  int64_t group = 1;
  std::vector<int64_t> pads = {0, 0, 0, 0}, strides = {1, 1};
  bool x_signed = false, w_unsigned = false, per_channel = true, bias = true;
  Layout x_layout = Layout::kPlain;
};

KernelCase MakeQLinearConv(const QConvSpec& s, uint64_t seed) {
  KernelCase c{
      .node = MakeNode("QLinearConv", s.bias ? 9 : 8, 1,
                       {{"group", IntAttr(s.group)}, {"pads", IntsAttr(s.pads)}, {"strides", IntsAttr(s.strides)}}),
      .opset = 10};
  const int64_t m = s.w[0];
  const Tensor x = s.x_signed ? RandomInt<int8_t>(s.x, seed, -128, 127) : RandomInt<uint8_t>(s.x, seed, 0, 255);
  const Tensor x_zp = s.x_signed ? ScalarOf<int8_t>(-5) : ScalarOf<uint8_t>(131);
  const Tensor w =
      s.w_unsigned ? RandomInt<uint8_t>(s.w, seed + 1, 0, 255) : RandomInt<int8_t>(s.w, seed + 1, -127, 127);
  Tensor w_zp = s.w_unsigned ? ScalarOf<uint8_t>(128) : ScalarOf<int8_t>(0);
  Tensor w_scale = Scalar(0.002f);
  if (s.per_channel) {
    w_scale = RandomF32({m}, seed + 2, 0.001f, 0.004f);
    w_zp = s.w_unsigned ? MakeTensor<uint8_t>({m}, std::vector<uint8_t>(static_cast<size_t>(m), 128))
                        : MakeTensor<int8_t>({m}, std::vector<int8_t>(static_cast<size_t>(m), 0));
  }
  c.inputs = {x, Scalar(0.05f), x_zp, w, w_scale, w_zp, Scalar(0.4f), ScalarOf<uint8_t>(120)};
  if (s.bias) c.inputs.push_back(RandomInt<int32_t>({m}, seed + 3, -2000, 2000));
  c.constant.assign(c.inputs.size(), true);
  c.constant[0] = false;
  c.layouts = {s.x_layout};
  return c;
}

TEST(QuantCpuTest, QLinearConvMatchesReference) {
  const std::vector<QConvSpec> specs = {
      {.x = {1, 16, 10, 10}, .w = {32, 16, 3, 3}, .pads = {1, 1, 1, 1}},
      {.x = {2, 8, 9, 7}, .w = {16, 8, 3, 3}, .strides = {2, 2}, .x_layout = Layout::kChannelsLast},
      {.x = {1, 32, 8, 8}, .w = {32, 1, 3, 3}, .group = 32, .pads = {1, 1, 1, 1}, .x_signed = true},
      {.x = {1, 24, 6, 6}, .w = {40, 24, 1, 1}, .w_unsigned = true, .per_channel = false, .bias = false},
  };
  for (size_t i = 0; i < specs.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    ExpectMatchesReference(cpu::CreateQLinearConv, MakeQLinearConv(specs[i], 100 + i), 1);
  }
}

TEST(QuantCpuTest, ConvIntegerWithRunTimeZeroPointIsExact) {
  for (const bool padded : {false, true}) {
    SCOPED_TRACE(padded ? "padded" : "unpadded");
    const std::vector<int64_t> pads = padded ? std::vector<int64_t>{1, 1, 1, 1} : std::vector<int64_t>{0, 0, 0, 0};
    KernelCase c{.node = MakeNode("ConvInteger", 4, 1, {{"pads", IntsAttr(pads)}}), .opset = 10};
    c.inputs = {RandomInt<uint8_t>({1, 16, 12, 12}, 7, 0, 255), RandomInt<int8_t>({24, 16, 3, 3}, 8, -127, 127),
                ScalarOf<uint8_t>(97), ScalarOf<int8_t>(0)};
    c.constant = {false, true, false, true};  // x's zero point comes from DynamicQuantizeLinear
    ExpectMatchesReference(cpu::CreateConvInteger, c, 0);
  }
}

TEST(QuantCpuTest, ConvolutionsWithRunTimeOrUnshiftableWeightsTakeTheExactS32Path) {
  // Everything at run time (as the backend test feeds it), u8 weights, padding and groups.
  KernelCase q = MakeQLinearConv(
      {.x = {1, 8, 7, 7}, .w = {12, 4, 3, 3}, .group = 2, .pads = {1, 0, 1, 2}, .w_unsigned = true}, 51);
  q.inputs[5] = RandomInt<uint8_t>({12}, 52, 0, 255);
  q.constant.assign(q.inputs.size(), false);
  ExpectMatchesReference(cpu::CreateQLinearConv, q, 0);
  // Constant u8 weights with zero point 0 reach 255: no s8 shift holds them.
  KernelCase c{.node = MakeNode("ConvInteger", 4, 1, {{"pads", IntsAttr({1, 1, 1, 1})}}), .opset = 10};
  c.inputs = {RandomInt<uint8_t>({2, 6, 9, 9}, 53, 0, 255), RandomInt<uint8_t>({10, 6, 3, 3}, 54, 0, 255),
              ScalarOf<uint8_t>(77), ScalarOf<uint8_t>(0)};
  c.constant = {false, true, false, true};
  ExpectMatchesReference(cpu::CreateConvInteger, c, 0);
}

TEST(QuantCpuTest, QLinearMatMulMatchesReference) {
  KernelCase c{.node = MakeNode("QLinearMatMul", 8), .opset = 10};
  c.inputs = {RandomInt<uint8_t>({2, 5, 64}, 11, 0, 255),
              Scalar(0.03f),
              ScalarOf<uint8_t>(7),
              RandomInt<int8_t>({64, 24}, 12, -127, 127),
              RandomF32({24}, 13, 0.001f, 0.004f),
              MakeTensor<int8_t>({24}, std::vector<int8_t>(24, 0)),
              Scalar(0.05f),
              ScalarOf<int8_t>(-3)};
  c.constant.assign(8, true);
  c.constant[0] = false;
  ExpectMatchesReference(cpu::CreateQLinearMatMul, c, 1);
}

TEST(QuantCpuTest, MatMulIntegerWithUnsignedWeightsIsExact) {
  KernelCase c{.node = MakeNode("MatMulInteger", 4), .opset = 10};
  // u8 weights with zero point 128 shift into s8 exactly; a's zero point arrives at run time.
  c.inputs = {RandomInt<uint8_t>({3, 7, 48}, 21, 0, 255), RandomInt<uint8_t>({48, 40}, 22, 0, 255),
              ScalarOf<uint8_t>(120), MakeTensor<uint8_t>({40}, std::vector<uint8_t>(40, 128))};
  c.constant = {false, true, false, true};
  ExpectMatchesReference(cpu::CreateMatMulInteger, c, 0);
}

TEST(QuantCpuTest, UnsignedWeightsBeyondS8TakeTheExactS32Path) {
  // u8 weights with zero point 0 reach 255: no s8 shift holds them, so oneDNN accumulates b − 128.
  KernelCase c{.node = MakeNode("MatMulInteger", 4), .opset = 10};
  c.inputs = {RandomInt<uint8_t>({6, 40}, 1, 0, 255), RandomInt<uint8_t>({40, 12}, 2, 0, 255), ScalarOf<uint8_t>(9),
              ScalarOf<uint8_t>(0)};
  c.constant = {false, true, false, true};
  ExpectMatchesReference(cpu::CreateMatMulInteger, c, 0);
}

TEST(QuantCpuTest, QLinearMatMulOfTwoActivationsWithPerRowAndColumnParameters) {
  // Attention-like: both operands at run time, batch dims on both, a's scale and zero point per row
  // ([D..., M, 1]) and b's per column ([D..., 1, N]). The s32 path requantizes as the reference does: exact.
  KernelCase c{.node = MakeNode("QLinearMatMul", 8), .opset = 10};
  c.inputs = {RandomInt<uint8_t>({2, 3, 5, 16}, 41, 0, 255),
              RandomF32({2, 3, 5, 1}, 42, 0.01f, 0.03f),
              RandomInt<uint8_t>({2, 3, 5, 1}, 43, 100, 140),
              RandomInt<uint8_t>({2, 3, 16, 7}, 44, 0, 255),
              RandomF32({2, 3, 1, 7}, 45, 0.01f, 0.03f),
              RandomInt<uint8_t>({2, 3, 1, 7}, 46, 100, 140),
              Scalar(0.02f),
              ScalarOf<uint8_t>(128)};
  ExpectMatchesReference(cpu::CreateQLinearMatMul, c, 0);
}

TEST(QuantCpuTest, RefusesWhatOneDnnCannotRunWithAReason) {
  KernelCase c{.node = MakeNode("MatMulInteger", 2), .opset = 10};
  c.inputs = {RandomInt<uint8_t>({2, 1, 4, 8}, 1, 0, 255), RandomInt<int8_t>({1, 3, 8, 4}, 2, -127, 127)};
  auto out = RunCpuKernel(cpu::CreateMatMulInteger, c);
  ASSERT_EQ(out.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(out.status().message().find("only 2-D b"), std::string::npos) << out.status().message();
  EXPECT_NE(out.status().message().find("s32 path: batch dims"), std::string::npos) << out.status().message();

  KernelCase conv1d{.node = MakeNode("ConvInteger", 2), .opset = 10};
  conv1d.inputs = {RandomInt<uint8_t>({1, 4, 9}, 3, 0, 255), RandomInt<int8_t>({4, 4, 3}, 4, -127, 127)};
  conv1d.constant = {false, true};
  out = RunCpuKernel(cpu::CreateConvInteger, conv1d);
  ASSERT_EQ(out.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(out.status().message().find("s32 path: only 2-D convolutions"), std::string::npos)
      << out.status().message();
}

TEST(QuantCpuTest, QuantizeDequantizeAndDynamicQuantizeAreExact) {
  const Tensor x = RandomF32({2, 3, 5, 4}, 31, -3.0f, 3.0f);
  const Tensor scale = Scalar(0.0234f);
  for (const Layout layout : {Layout::kPlain, Layout::kChannelsLast}) {
    SCOPED_TRACE(std::string(LayoutName(layout)));
    KernelCase q{.node = MakeNode("QuantizeLinear", 3), .opset = 13, .inputs = {x, scale, ScalarOf<int8_t>(3)}};
    q.layouts = {layout};
    ExpectMatchesReference(cpu::CreateQuantizeLinear, q, 0);
    KernelCase d{.node = MakeNode("DequantizeLinear", 3),
                 .opset = 13,
                 .inputs = {RandomInt<uint8_t>({2, 3, 5, 4}, 32, 0, 255), scale, ScalarOf<uint8_t>(128)}};
    d.layouts = {layout};
    ExpectMatchesReference(cpu::CreateDequantizeLinear, d, 0);
    KernelCase dq{.node = MakeNode("DynamicQuantizeLinear", 1, 3), .opset = 11, .inputs = {x}};
    dq.layouts = {layout};
    ExpectMatchesReference(cpu::CreateDynamicQuantizeLinear, dq, 0);
  }
  KernelCase axis{.node = MakeNode("QuantizeLinear", 3), .opset = 13};
  axis.inputs = {x, RandomF32({3}, 33, 0.01f, 0.05f), MakeTensor<uint8_t>({3}, {0, 100, 255})};
  ExpectMatchesReference(cpu::CreateQuantizeLinear, axis, 0);
}

}  // namespace
}  // namespace chipfit::testing
