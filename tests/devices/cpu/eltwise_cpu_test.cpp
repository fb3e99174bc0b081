// CPU elementwise activations and unary math against the reference: every op through each of its
// three implementations (own loop for tiny tensors, oneDNN eltwise, own loop at any size), odd
// shapes, both input orders; fp32 within 1e-4 of max|ref|; refusals with their reasons.
#include <gtest/gtest.h>

#include <cmath>

#include "devices/cpu/ops/cpu_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"
#include "tests/devices/cpu/kernel_layout_util.h"

namespace chipfit::testing {
namespace {

struct UnarySpec {
  std::string op;
  std::map<std::string, Attribute> attrs{};
  int64_t opset = 17;
  float lo = -3.0f, hi = 3.0f;
  bool quarters = false;     // inputs on a 0.25 grid (exact halves for Round, integers for Floor/Ceil)
  bool onednn = true;        // oneDNN 2.6 has an algorithm for it
  bool away_from_0 = false;  // |x| ≥ 0.2 (Reciprocal)
};

const std::vector<UnarySpec> kSpecs = {
    {.op = "Relu"},
    {.op = "LeakyRelu", .attrs = {{"alpha", FloatAttr(0.13f)}}},
    {.op = "Clip", .attrs = {{"min", FloatAttr(-0.3f)}, {"max", FloatAttr(0.4f)}}, .opset = 6},
    {.op = "Sigmoid", .lo = -8.0f, .hi = 8.0f},
    {.op = "HardSigmoid", .attrs = {{"alpha", FloatAttr(0.3f)}, {"beta", FloatAttr(0.4f)}}},
    {.op = "HardSwish", .lo = -5.0f, .hi = 5.0f},
    {.op = "Tanh"},
    {.op = "Elu", .attrs = {{"alpha", FloatAttr(0.7f)}}},
    {.op = "Selu"},
    {.op = "Celu", .attrs = {{"alpha", FloatAttr(1.5f)}}},
    {.op = "Gelu", .opset = 20, .lo = -5.0f, .hi = 5.0f},
    {.op = "Gelu", .attrs = {{"approximate", StringAttr("tanh")}}, .opset = 20, .lo = -5.0f, .hi = 5.0f},
    {.op = "Exp"},
    {.op = "Log", .lo = 0.01f, .hi = 5.0f},
    {.op = "Sqrt", .lo = 0.0f, .hi = 4.0f},
    {.op = "Abs"},
    {.op = "Neg"},
    {.op = "Softplus", .lo = -10.0f, .hi = 10.0f},
    {.op = "Mish", .opset = 18, .lo = -6.0f, .hi = 6.0f},
    {.op = "Round", .lo = -5.0f, .hi = 5.0f, .quarters = true},
    {.op = "Reciprocal", .away_from_0 = true},
    {.op = "Erf", .onednn = false},
    {.op = "Softsign", .onednn = false},
    {.op = "Floor", .lo = -5.0f, .hi = 5.0f, .quarters = true, .onednn = false},
    {.op = "Ceil", .lo = -5.0f, .hi = 5.0f, .quarters = true, .onednn = false},
    {.op = "ThresholdedRelu", .attrs = {{"alpha", FloatAttr(0.5f)}}, .onednn = false},
};

// 1173 values (own loop for the cheap ops, oneDNN for the others), 36960 (oneDNN, parallel own
// loop), 7 (own loop), rank 5 with odd dims.
const std::vector<Shape> kShapes = {{1, 3, 17, 23}, {2, 16, 33, 35}, {7}, {3, 5, 7, 9, 2}};

Tensor MakeInput(const UnarySpec& s, const Shape& shape, uint64_t seed) {
  Tensor t = RandomF32(shape, seed, s.lo, s.hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    float& v = t.data<float>()[i];
    if (s.quarters) v = std::floor(v * 4.0f) / 4.0f;
    if (s.away_from_0) v = v < 0 ? v - 0.2f : v + 0.2f;
  }
  return t;
}

KernelCase MakeCase(const UnarySpec& s, const Shape& shape, uint64_t seed, Layout layout) {
  KernelCase c{.node = MakeNode(s.op, 1, 1, s.attrs), .opset = s.opset};
  c.inputs = {MakeInput(s, shape, seed)};
  c.layouts = {shape.size() == 4 ? layout : Layout::kPlain};
  return c;
}

void ExpectClose(KernelFactory factory, const KernelCase& c) {
  auto out = RunCpuKernel(factory, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  ASSERT_EQ(ref.size(), 1u);
  EXPECT_EQ((*out)[0].shape(), ref[0].shape());
  // oneDNN's jit exp/log/tanh/erf polynomials are accurate to a few ulp, far inside 1e-4.
  EXPECT_LE(MaxRelError((*out)[0], ref[0]), 1e-4);
}

TEST(EltwiseCpuTest, EveryImplementationMatchesReference) {
  uint64_t seed = 1000;
  for (const UnarySpec& spec : kSpecs) {
    for (const Shape& shape : kShapes) {
      for (Layout layout : {Layout::kPlain, Layout::kChannelsLast}) {
        if (layout == Layout::kChannelsLast && shape.size() != 4) continue;
        const KernelCase c = MakeCase(spec, shape, ++seed, layout);
        SCOPED_TRACE(spec.op + " " + ShapeToString(shape) + " " + std::string(LayoutName(layout)));
        {
          SCOPED_TRACE("own loop");
          ExpectClose(cpu::CreateEltwiseOwnF32, c);
        }
        if (spec.onednn) {
          SCOPED_TRACE("oneDNN");
          ExpectClose(cpu::CreateEltwiseF32, c);
        } else {
          EXPECT_NE(RefusalOf(cpu::CreateEltwiseF32, c).find("has no oneDNN 2.6 eltwise algorithm"), std::string::npos);
        }
        // The small-tensor loop takes only what is cheaper than a oneDNN call.
        auto small = RunCpuKernel(cpu::CreateEltwiseSmallF32, c);
        if (NumElements(shape) <= 128) {
          ASSERT_TRUE(small.ok()) << small.status().ToString();
          EXPECT_LE(MaxRelError((*small)[0], RunReference(c)[0]), 1e-4);
        } else if (NumElements(shape) > 4096) {
          ASSERT_FALSE(small.ok());
          EXPECT_NE(small.status().message().find("a oneDNN call is faster above"), std::string::npos);
        }
      }
    }
  }
}

TEST(EltwiseCpuTest, ChannelsLastActivationsStayChannelsLast) {
  for (KernelFactory factory : {cpu::CreateEltwiseF32, cpu::CreateEltwiseOwnF32}) {
    const KernelCase c = MakeCase(kSpecs[0], {1, 8, 5, 7}, 3, Layout::kChannelsLast);
    auto layouts = LayoutsOf(factory, c);
    ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
    EXPECT_EQ(layouts->inputs[0], Layout::kChannelsLast);
    EXPECT_EQ(layouts->output, Layout::kChannelsLast);
    const KernelCase plain = MakeCase(kSpecs[0], {1, 8, 5, 7}, 3, Layout::kPlain);
    layouts = LayoutsOf(factory, plain);
    ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
    EXPECT_EQ(layouts->output, Layout::kPlain);
  }
}

// Clip from opset 11: bounds are constant inputs; an absent one leaves that side open.
TEST(EltwiseCpuTest, ClipWithBoundInputs) {
  const Shape shape = {2, 3, 5, 7};
  for (int variant = 0; variant < 3; ++variant) {
    KernelCase c{.node = MakeNode("Clip", 3), .opset = 13};
    c.inputs = {RandomF32(shape, 7 + variant, -2.0f, 2.0f), MakeTensor<float>({}, {-0.5f}),
                MakeTensor<float>({}, {0.75f})};
    if (variant > 0) {  // 1: no min, 2: no max
      c.node.inputs[static_cast<size_t>(variant)].clear();
      c.inputs[static_cast<size_t>(variant)] = Tensor();
    }
    c.constant = {false, true, true};
    SCOPED_TRACE("variant " + std::to_string(variant));
    for (KernelFactory factory : {cpu::CreateEltwiseF32, cpu::CreateEltwiseSmallF32}) ExpectClose(factory, c);
  }
}

TEST(EltwiseCpuTest, RefusesWhatItCannotRunWithAReason) {
  KernelCase clip{.node = MakeNode("Clip", 3), .opset = 13};
  clip.inputs = {RandomF32({4, 5}, 1), MakeTensor<float>({}, {-0.5f}), MakeTensor<float>({}, {0.5f})};
  clip.constant = {false, false, true};  // min computed at run time
  EXPECT_NE(RefusalOf(cpu::CreateEltwiseF32, clip).find("Clip bounds computed at run time"), std::string::npos);

  KernelCase ints{.node = MakeNode("Relu", 1)};
  ints.inputs = {MakeTensor<int32_t>({3}, {-1, 0, 1})};
  EXPECT_NE(RefusalOf(cpu::CreateEltwiseF32, ints).find("input"), std::string::npos);

  KernelCase gelu{.node = MakeNode("Gelu", 1, 1, {{"approximate", StringAttr("sigmoid")}}), .opset = 20};
  gelu.inputs = {RandomF32({4, 5}, 1)};
  EXPECT_NE(RefusalOf(cpu::CreateEltwiseF32, gelu).find("Gelu approximation 'sigmoid'"), std::string::npos);
}

}  // namespace
}  // namespace chipfit::testing
