// CPU broadcasting binary ops against the reference: numpy broadcasting patterns, both input
// orders, each implementation (own loop for tiny tensors, oneDNN binary, own strided loop);
// Add/Sub/Mul/Div/Max/Min round once like the reference, so they must match it bit for bit.
#include <gtest/gtest.h>

#include "core/reference/ref_util.h"
#include "devices/cpu/ops/cpu_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"
#include "tests/devices/cpu/kernel_layout_util.h"

namespace chipfit::testing {
namespace {

struct Pair {
  Shape a, b;
  bool onednn_jit = true;  // oneDNN 2.6 has a jit kernel for the pattern (after merging dims)
};

const std::vector<Pair> kPairs = {
    {{2, 16, 9, 11}, {1, 16, 1, 1}},   // per channel
    {{2, 16, 9, 11}, {16, 1, 1}},      // per channel, lower rank
    {{2, 16, 9, 11}, {}},              // scalar
    {{2, 16, 9, 11}, {1}},             // one-element vector
    {{2, 16, 9, 11}, {2, 16, 9, 11}},  // same shape
    {{2, 16, 9, 11}, {2, 16, 1, 11}},  // merged dims make this jit-able
    {{2, 16, 9, 11}, {9, 11}},         // per image plane
    {{2, 3, 9, 11}, {2, 3, 9, 1}},     // per row
    {{1, 16, 1, 1}, {2, 16, 9, 11}},   // input 0 broadcasts
    {{7, 13}, {7, 1}},                 // [H,1]
    {{5, 7, 13}, {13}},
    {{3, 1}, {1, 4}},                           // both broadcast
    {{3, 5, 7, 9, 2}, {1, 5, 1, 1, 2}, false},  // broadcast, full, broadcast, full: own loop
    {{1, 40, 1, 1}, {1, 40, 1, 1}},             // small
    {{2, 16, 33, 35}, {1, 16, 1, 1}},           // large enough for oneDNN and the parallel own loop
};

const std::vector<std::string> kOps = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"};

KernelCase MakeCase(const std::string& op, const Pair& p, uint64_t seed, Layout la, Layout lb) {
  KernelCase c{.node = MakeNode(op, 2)};
  // Divisors away from 0; Pow on positive bases with moderate exponents.
  const bool positive = op == "Pow";
  c.inputs = {RandomF32(p.a, seed, positive ? 0.1f : -2.0f, 2.0f),
              RandomF32(p.b, seed + 1, op == "Div" ? 0.5f : -2.0f, 2.0f)};
  if (op == "Div") {
    for (int64_t i = 0; i < c.inputs[1].numel(); i += 2) c.inputs[1].data<float>()[i] *= -1.0f;
  }
  c.layouts = {p.a.size() == 4 ? la : Layout::kPlain, p.b.size() == 4 ? lb : Layout::kPlain};
  return c;
}

bool BothBroadcast(const Pair& p) {
  auto out = BroadcastShapes(p.a, p.b);
  return out.ok() && *out != p.a && *out != p.b;
}

void ExpectExact(KernelFactory factory, const KernelCase& c, const std::string& op) {
  auto out = RunCpuKernel(factory, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  ASSERT_EQ(ref.size(), 1u);
  EXPECT_EQ((*out)[0].shape(), ref[0].shape());
  // One rounding of the exact result in both; Pow's std::pow in float vs double differs by an ulp.
  EXPECT_LE(MaxRelError((*out)[0], ref[0]), op == "Pow" ? 1e-5 : 0.0);
}

TEST(BinaryCpuTest, EveryImplementationMatchesReference) {
  uint64_t seed = 2000;
  for (const std::string& op : kOps) {
    for (const Pair& p : kPairs) {
      for (Layout la : {Layout::kPlain, Layout::kChannelsLast}) {
        for (Layout lb : {Layout::kPlain, Layout::kChannelsLast}) {
          if ((la == Layout::kChannelsLast && p.a.size() != 4) || (lb == Layout::kChannelsLast && p.b.size() != 4)) {
            continue;
          }
          const KernelCase c = MakeCase(op, p, seed += 2, la, lb);
          SCOPED_TRACE(op + " " + ShapeToString(p.a) + " " + std::string(LayoutName(la)) + " with " +
                       ShapeToString(p.b) + " " + std::string(LayoutName(lb)));
          {
            SCOPED_TRACE("own loop");
            ExpectExact(cpu::CreateBinaryOwnF32, c, op);
          }
          const bool a_broadcasts = *BroadcastShapes(p.a, p.b) != p.a;
          if (op == "Pow") {
            EXPECT_NE(RefusalOf(cpu::CreateBinaryF32, c).find("Pow with a tensor exponent"), std::string::npos);
          } else if (BothBroadcast(p)) {
            EXPECT_NE(RefusalOf(cpu::CreateBinaryF32, c).find("both inputs broadcast"), std::string::npos);
          } else if (op == "Div" && a_broadcasts) {
            EXPECT_NE(RefusalOf(cpu::CreateBinaryF32, c).find("broadcast dividend"), std::string::npos);
          } else if (!p.onednn_jit) {
            EXPECT_NE(RefusalOf(cpu::CreateBinaryF32, c).find("only oneDNN's reference binary"), std::string::npos);
          } else {
            SCOPED_TRACE("oneDNN");
            ExpectExact(cpu::CreateBinaryF32, c, op);
          }
          const int64_t n = NumElements(*BroadcastShapes(p.a, p.b));
          if (n <= 128) {
            SCOPED_TRACE("small");
            ExpectExact(cpu::CreateBinarySmallF32, c, op);
          } else if (n > 8192) {
            EXPECT_NE(RefusalOf(cpu::CreateBinarySmallF32, c).find("a oneDNN call is faster above"), std::string::npos);
          }
        }
      }
    }
  }
}

// The output keeps the order of the full-shape input; an operand whose bytes are the same in both
// orders is read as is; another full-shape operand is asked for in the output's order.
TEST(BinaryCpuTest, OutputKeepsTheOrderOfTheFullShapeInput) {
  for (KernelFactory factory : {cpu::CreateBinaryF32, cpu::CreateBinaryOwnF32}) {
    KernelCase c = MakeCase("Add", kPairs[0], 1, Layout::kChannelsLast, Layout::kPlain);
    auto layouts = LayoutsOf(factory, c);
    ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
    EXPECT_EQ(layouts->output, Layout::kChannelsLast);
    EXPECT_EQ(layouts->inputs[0], Layout::kChannelsLast);

    c = MakeCase("Mul", kPairs[8], 1, Layout::kPlain, Layout::kChannelsLast);  // input 1 is the full one
    layouts = LayoutsOf(factory, c);
    ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
    EXPECT_EQ(layouts->output, Layout::kChannelsLast);
    EXPECT_EQ(layouts->inputs[1], Layout::kChannelsLast);

    c = MakeCase("Add", kPairs[4], 1, Layout::kPlain, Layout::kChannelsLast);
    layouts = LayoutsOf(factory, c);
    ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
    EXPECT_EQ(layouts->output, Layout::kPlain);
    EXPECT_EQ(layouts->inputs[1], Layout::kPlain);

    // A constant full-shape operand follows the computed one (the executor reorders constants once).
    c = MakeCase("Add", kPairs[4], 1, Layout::kPlain, Layout::kChannelsLast);
    c.constant = {true, false};
    layouts = LayoutsOf(factory, c);
    ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
    EXPECT_EQ(layouts->output, Layout::kChannelsLast);
    EXPECT_EQ(layouts->inputs[0], Layout::kChannelsLast);
  }
}

TEST(BinaryCpuTest, ConstantOperandsWork) {
  KernelCase c = MakeCase("Mul", kPairs[0], 5, Layout::kChannelsLast, Layout::kPlain);
  c.constant = {false, true};
  ExpectExact(cpu::CreateBinaryF32, c, "Mul");
  c = MakeCase("Sub", kPairs[8], 6, Layout::kPlain, Layout::kChannelsLast);
  c.constant = {true, false};
  ExpectExact(cpu::CreateBinaryF32, c, "Sub");
}

// Pow by a constant scalar exponent runs on oneDNN's eltwise pow (as products for 2 and 3), also on negative bases with
// integer exponents and with an int64 exponent.
TEST(BinaryCpuTest, PowByConstantScalar) {
  const Shape shape = {2, 8, 9, 11};
  const std::vector<Tensor> exponents = {MakeTensor<float>({}, {2.0f}), MakeTensor<float>({}, {3.0f}),
                                         MakeTensor<int64_t>({1}, {2}), MakeTensor<float>({}, {0.5f}),
                                         MakeTensor<float>({}, {-1.5f})};
  for (size_t k = 0; k < exponents.size(); ++k) {
    const bool fractional = k >= 3;
    KernelCase c{.node = MakeNode("Pow", 2)};
    c.inputs = {RandomF32(shape, 40 + k, fractional ? 0.1f : -2.0f, 2.0f), exponents[k]};
    c.constant = {false, true};
    c.layouts = {Layout::kChannelsLast};
    SCOPED_TRACE("exponent " + std::to_string(exponents[k].GetAsDouble(0)));
    auto out = RunCpuKernel(cpu::CreatePowScalarF32, c);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    // oneDNN computes x^e through exp2(e·log2 x) polynomials: a few ulp.
    EXPECT_LE(MaxRelError((*out)[0], RunReference(c)[0]), 1e-5);
    auto layouts = LayoutsOf(cpu::CreatePowScalarF32, c);
    ASSERT_TRUE(layouts.ok());
    EXPECT_EQ(layouts->output, Layout::kChannelsLast);
  }
}

TEST(BinaryCpuTest, SumOfTwoAndVariadicRefusals) {
  KernelCase sum{.node = MakeNode("Sum", 2)};
  sum.inputs = {RandomF32({3, 17}, 1), RandomF32({17}, 2)};
  ExpectExact(cpu::CreateBinaryF32, sum, "Sum");

  KernelCase max3{.node = MakeNode("Max", 3)};
  max3.inputs = {RandomF32({3, 4}, 1), RandomF32({3, 4}, 2), RandomF32({3, 4}, 3)};
  EXPECT_NE(RefusalOf(cpu::CreateBinaryF32, max3).find("Max of 3 inputs"), std::string::npos);

  KernelCase ints{.node = MakeNode("Add", 2)};
  ints.inputs = {MakeTensor<int64_t>({2}, {1, 2}), MakeTensor<int64_t>({2}, {3, 4})};
  EXPECT_EQ(RunCpuKernel(cpu::CreateBinaryOwnF32, ints).status().code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace chipfit::testing
