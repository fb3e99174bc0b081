// OpenCL elementwise kernels against the reference on fp32 and fp16 storage: every unary function
// with its attributes, broadcasting binary ops over each indexing path (same shape, one value, one
// run of dims, strided), Pow with constant exponents, PRelu, variadic Sum/Mean/Max/Min, Where, and
// the refusals with their reasons.
#include <gtest/gtest.h>

#include <cmath>

#include "devices/opencl/ops/opencl_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/opencl/opencl_test_util.h"

namespace chipfit::testing {
namespace {

// fp16 storage rounds every input and output to 11 significant bits: a relative error of at most
// 2^-11 each, NMSE ≈ (1 + κ²)·(2^-11)²/3 ≈ 1e-7 for a function of condition number κ ≈ 1. The
// default 1e-5 of ExpectMatchesReference leaves room for κ up to ~10 (Reciprocal, Log and Tan on
// the ranges below); the discontinuous functions get inputs exact in half and must match to 1e-12.
constexpr double kNmseExact = 1e-12;

struct UnarySpec {
  std::string op;
  std::map<std::string, Attribute> attrs{};
  int64_t opset = 17;
  float lo = -3.0f, hi = 3.0f;
  bool quarters = false;  // inputs on a 0.25 grid: exact in half, ties for Round, integers for Floor/Ceil
  bool away_from_0 = false;
  // OpenCL C's built-in accuracy (erf 16 ulp, pow 16 ulp, tanh/sinh 5 ulp …) is far inside 1e-4 of
  // max|ref| on these ranges; no op needs more.
  double rtol = 1e-4;
  double nmse16 = 1e-5;
};

const std::vector<UnarySpec> kUnary = {
    {.op = "Relu", .quarters = true},
    {.op = "LeakyRelu", .attrs = {{"alpha", FloatAttr(0.13f)}}},
    {.op = "LeakyRelu"},
    {.op = "Clip", .attrs = {{"min", FloatAttr(-0.3f)}, {"max", FloatAttr(0.4f)}}, .opset = 6},
    {.op = "Sigmoid", .lo = -8.0f, .hi = 8.0f},
    {.op = "HardSigmoid", .attrs = {{"alpha", FloatAttr(0.3f)}, {"beta", FloatAttr(0.4f)}}},
    {.op = "HardSigmoid"},
    {.op = "HardSwish", .opset = 14, .lo = -5.0f, .hi = 5.0f},
    {.op = "Tanh"},
    {.op = "Elu", .attrs = {{"alpha", FloatAttr(0.7f)}}},
    {.op = "Selu"},
    {.op = "Selu", .attrs = {{"alpha", FloatAttr(1.2f)}, {"gamma", FloatAttr(0.9f)}}},
    {.op = "Celu", .attrs = {{"alpha", FloatAttr(1.5f)}}},
    // Gelu's negative tail x·Φ(x) has condition number κ ≈ x² (25 at -5): one value stored in half
    // there gives NMSE up to 625·(2^-11)²/3 ≈ 5e-5.
    {.op = "Gelu", .opset = 20, .lo = -5.0f, .hi = 5.0f, .nmse16 = 1e-4},
    {.op = "Gelu",
     .attrs = {{"approximate", StringAttr("tanh")}},
     .opset = 20,
     .lo = -5.0f,
     .hi = 5.0f,
     .nmse16 = 1e-4},
    {.op = "Exp"},
    {.op = "Log", .lo = 0.05f, .hi = 5.0f},
    {.op = "Sqrt", .lo = 0.0f, .hi = 4.0f},
    {.op = "Abs"},
    {.op = "Neg"},
    {.op = "Softplus", .lo = -10.0f, .hi = 10.0f},
    {.op = "Mish", .opset = 18, .lo = -6.0f, .hi = 6.0f},
    {.op = "Round", .opset = 11, .lo = -5.0f, .hi = 5.0f, .quarters = true},
    {.op = "Reciprocal", .away_from_0 = true},
    {.op = "Erf"},
    {.op = "Softsign"},
    {.op = "Floor", .lo = -5.0f, .hi = 5.0f, .quarters = true},
    {.op = "Ceil", .lo = -5.0f, .hi = 5.0f, .quarters = true},
    {.op = "ThresholdedRelu", .attrs = {{"alpha", FloatAttr(0.5f)}}, .opset = 10, .quarters = true},
    {.op = "Sign", .quarters = true},
    {.op = "Sin"},
    {.op = "Cos"},
    {.op = "Tan", .lo = -1.2f, .hi = 1.2f},
    {.op = "Asin", .lo = -0.95f, .hi = 0.95f},
    {.op = "Acos", .lo = -0.95f, .hi = 0.95f},
    {.op = "Atan"},
    {.op = "Sinh"},
    {.op = "Cosh"},
    {.op = "Asinh"},
    {.op = "Acosh", .lo = 1.1f, .hi = 4.0f},
    {.op = "Atanh", .lo = -0.9f, .hi = 0.9f},
};

Tensor UnaryInput(const UnarySpec& s, const Shape& shape, uint64_t seed) {
  Tensor t = RandomF32(shape, seed, s.lo, s.hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    float& v = t.data<float>()[i];
    if (s.quarters) v = std::floor(v * 4.0f) / 4.0f;
    if (s.away_from_0) v = v < 0 ? v - 0.2f : v + 0.2f;
  }
  return t;
}

TEST(EltwiseOpenCl, UnaryMatchesReference) {
  CHIPFIT_REQUIRE_OPENCL();
  // Odd sizes that are no multiple of any work-group size, a single value, rank 5.
  const std::vector<Shape> shapes = {{2, 3, 17, 19}, {1}, {3, 5, 7, 3, 2}};
  uint64_t seed = 1;
  for (const UnarySpec& s : kUnary) {
    for (const Shape& shape : shapes) {
      SCOPED_TRACE(s.op + " " + ShapeToString(shape));
      OpenClCase c{.node = MakeNode(s.op, 1, 1, s.attrs), .opset = s.opset};
      c.inputs = {UnaryInput(s, shape, seed++)};
      ExpectMatchesReference(opencl::CreateUnary, c, s.rtol, s.quarters ? kNmseExact : s.nmse16);
    }
  }
}

TEST(EltwiseOpenCl, ClipBoundsAsInputs) {
  CHIPFIT_REQUIRE_OPENCL();
  const Tensor x = RandomF32({4, 33}, 7, -2.0f, 2.0f);
  const Tensor lo = MakeTensor<float>({}, {-0.5f});
  const Tensor hi = MakeTensor<float>({}, {0.75f});
  // Both bounds, only min, only max (min omitted), none, and min > max (max wins everywhere).
  struct Bounds {
    Tensor lo, hi;
  };
  const std::vector<Bounds> cases = {{lo, hi}, {lo, Tensor()}, {Tensor(), hi}, {Tensor(), Tensor()}, {hi, lo}};
  for (const Bounds& b : cases) {
    OpenClCase c{.node = MakeNode("Clip", 3), .opset = 13};
    if (!b.lo.defined()) c.node.inputs[1] = "";
    if (!b.hi.defined()) c.node.inputs[2] = "";
    c.inputs = {x, b.lo, b.hi};
    c.constant = {false, true, true};
    ExpectMatchesReference(opencl::CreateUnary, c);
  }
}

struct BinarySpec {
  Shape a, b;
};

// Each indexing path of the nary kernel: same shape, one value on either side, one run of dims
// (a bias per channel, per last dim, per first dim), both sides broadcast (outer product), and
// strided walks over several alternating dims.
const std::vector<BinarySpec> kBroadcasts = {
    {{3, 5, 7}, {3, 5, 7}},
    {{2, 5, 4, 3}, {}},
    {{1}, {6, 1, 11}},
    {{2, 5, 4, 3}, {5, 1, 1}},
    {{4, 6, 10}, {10}},
    {{9, 4, 3}, {9, 1, 1}},
    {{7, 1}, {1, 9}},
    {{2, 1, 3, 1, 5}, {1, 4, 1, 6, 1}},
    {{2, 1, 3, 1, 5, 1}, {1, 4, 1, 6, 1, 3}},
    {{1, 5, 1}, {2, 5, 3}},
};

TEST(EltwiseOpenCl, BinaryBroadcastMatchesReference) {
  CHIPFIT_REQUIRE_OPENCL();
  uint64_t seed = 100;
  // Every pattern for Add; the other operators (a program build per operator and pattern) on the
  // same-shape, run and strided paths.
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow"}) {
    for (size_t i = 0; i < kBroadcasts.size(); ++i) {
      if (std::string(op) != "Add" && i != 0 && i != 3 && i != 7) continue;
      const BinarySpec& s = kBroadcasts[i];
      SCOPED_TRACE(std::string(op) + " " + ShapeToString(s.a) + " " + ShapeToString(s.b));
      OpenClCase c{.node = MakeNode(op, 2)};
      const bool pow = std::string(op) == "Pow", div = std::string(op) == "Div";
      c.inputs = {RandomF32(s.a, seed++, pow ? 0.5f : -2.0f, 2.0f), RandomF32(s.b, seed++, pow ? -2.0f : 0.5f, 2.0f)};
      if (div) {  // divisors of both signs, away from 0
        for (int64_t i = 0; i < c.inputs[1].numel(); i += 2) c.inputs[1].data<float>()[i] *= -1.0f;
      }
      // pow(x, y) on x ∈ [0.5, 2], |y| ≤ 2: κ = |y|·1 ≤ 2 for x, |y ln x| ≤ 1.4 for y (NMSE as above).
      ExpectMatchesReference(opencl::CreateBinary, c);
    }
  }
}

TEST(EltwiseOpenCl, ConstantOperandStaysAnInput) {
  CHIPFIT_REQUIRE_OPENCL();
  // A constant bias is uploaded once by the executor; the kernel reads it from the device.
  OpenClCase c{.node = MakeNode("Add", 2)};
  c.inputs = {RandomF32({2, 8, 5, 5}, 1), RandomF32({8, 1, 1}, 2)};
  c.constant = {false, true};
  ExpectMatchesReference(opencl::CreateBinary, c);
}

TEST(EltwiseOpenCl, PowWithConstantExponent) {
  CHIPFIT_REQUIRE_OPENCL();
  const Tensor base = RandomF32({3, 17, 5}, 11, 0.25f, 2.0f);
  for (float e : {2.0f, 3.0f, 0.5f, -1.0f, 2.5f, 1.0f, 0.0f}) {
    SCOPED_TRACE(e);
    OpenClCase c{.node = MakeNode("Pow", 2), .opset = 15};
    c.inputs = {base, MakeTensor<float>({}, {e})};
    c.constant = {false, true};
    ExpectMatchesReference(opencl::CreateBinary, c);
  }
  // An integer exponent (opset 12+ allows any numeric B), and a negative base with it.
  OpenClCase c{.node = MakeNode("Pow", 2), .opset = 15};
  c.inputs = {RandomF32({4, 9}, 12, -2.0f, 2.0f), MakeTensor<int64_t>({1}, {3})};
  c.constant = {false, true};
  ExpectMatchesReference(opencl::CreateBinary, c);
}

TEST(EltwiseOpenCl, PReluSlopes) {
  CHIPFIT_REQUIRE_OPENCL();
  const Shape x = {2, 6, 5, 7};
  struct Slope {
    Shape shape;
    int64_t opset;
  };
  // Per channel, one value, full shape, per last dim, and the 1-D per-channel slope of opset 6.
  for (const Slope& s : std::vector<Slope>{{{6, 1, 1}, 16}, {{1}, 16}, {x, 16}, {{7}, 16}, {{6}, 6}}) {
    SCOPED_TRACE(ShapeToString(s.shape));
    OpenClCase c{.node = MakeNode("PRelu", 2), .opset = s.opset};
    c.inputs = {RandomF32(x, 21), RandomF32(s.shape, 22, 0.0f, 0.5f)};
    c.constant = {false, true};
    ExpectMatchesReference(opencl::CreateBinary, c);
  }
}

TEST(EltwiseOpenCl, VariadicMatchesReference) {
  CHIPFIT_REQUIRE_OPENCL();
  const std::vector<std::vector<Shape>> input_sets = {
      {{3, 4, 5}},                                                           // one input: a copy
      {{3, 4, 5}, {3, 4, 5}},                                                // two, same shape
      {{3, 4, 5}, {4, 1}, {}},                                               // broadcast run and scalar
      {{2, 1, 5}, {1, 3, 1}, {2, 3, 5}, {5}},                                // strided
      {{7}, {7}, {7}, {7}, {1}, {7}, {7}, {1, 7}},                           // eight
      {{2, 1, 3, 1, 5}, {1, 4, 1, 6, 1}, {2, 4, 3, 6, 5}, {1, 1, 1, 1, 1}},  // rank 5 strided
  };
  uint64_t seed = 300;
  // Every input set for Sum; Mean, Max and Min on the broadcast and strided sets.
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    for (size_t i = 0; i < input_sets.size(); ++i) {
      if (std::string(op) != "Sum" && i != 2 && i != 3) continue;
      const std::vector<Shape>& shapes = input_sets[i];
      SCOPED_TRACE(std::string(op) + " of " + std::to_string(shapes.size()));
      OpenClCase c{.node = MakeNode(op, shapes.size())};
      for (const Shape& s : shapes) c.inputs.push_back(RandomF32(s, seed++));
      // Sums of up to 8 values of either sign can cancel: κ up to ~8 for a value, NMSE still ≤ 1e-5.
      ExpectMatchesReference(opencl::CreateVariadic, c);
    }
  }
}

TEST(EltwiseOpenCl, WhereMatchesReference) {
  CHIPFIT_REQUIRE_OPENCL();
  const std::vector<std::vector<Shape>> input_sets = {
      {{4, 5}, {4, 5}, {4, 5}}, {{3, 1, 5}, {1, 4, 5}, {}}, {{1}, {2, 3}, {3}}, {{6, 1}, {1, 7}, {6, 7}}};
  uint64_t seed = 400;
  for (const std::vector<Shape>& shapes : input_sets) {
    SCOPED_TRACE(ShapeToString(shapes[0]));
    Tensor cond(DType::kBool, shapes[0]);
    SplitMix64 rng(seed++);
    for (int64_t i = 0; i < cond.numel(); ++i) cond.data<bool>()[i] = (rng.Next() & 1) != 0;
    OpenClCase c{.node = MakeNode("Where", 3), .opset = 16};
    c.inputs = {cond, RandomF32(shapes[1], seed++), RandomF32(shapes[2], seed++)};
    // Where copies values: exact up to the half rounding of the stored inputs.
    ExpectMatchesReference(opencl::CreateWhere, c, 0.0);
  }
}

// The factory's answer for inputs described by `inputs` (no values) and outputs `outputs`.
Status Refusal(KernelFactory factory, const Node& node, int64_t opset, const std::vector<ValueInfo>& inputs,
               const std::vector<ValueInfo>* outputs) {
  auto context = TestContext(Precision::kFp32);
  if (!context.ok()) return context.status();
  std::vector<const ValueInfo*> ptrs;
  for (const ValueInfo& v : inputs) ptrs.push_back(v.dtype == DType::kUndefined ? nullptr : &v);
  KernelInit init{node, ptrs, opset, Precision::kFp32, nullptr, context->get(), outputs};
  return factory(init).status();
}

void ExpectRefused(const Status& status, const std::string& reason) {
  EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.ToString();
  EXPECT_NE(status.message().find(reason), std::string::npos) << status.ToString();
}

TEST(EltwiseOpenCl, Refusals) {
  CHIPFIT_REQUIRE_OPENCL();
  const ValueInfo f32{DType::kF32, {4, 5}};
  const std::vector<ValueInfo> out = {{DType::kF32, {4, 5}}};
  const ValueInfo dynamic{DType::kF32, {-1, 5}};
  ExpectRefused(Refusal(opencl::CreateUnary, MakeNode("Relu", 1), 17, {dynamic}, nullptr),
                "shapes only known at run time");
  ExpectRefused(Refusal(opencl::CreateUnary, MakeNode("Relu", 1), 17, {dynamic}, &out),
                "shapes only known at run time");
  ExpectRefused(Refusal(opencl::CreateUnary, MakeNode("Relu", 1), 17, {{DType::kF64, {4, 5}}}, &out), "f64 input 0");
  const std::vector<ValueInfo> empty_out = {{DType::kF32, {0, 5}}};
  ExpectRefused(Refusal(opencl::CreateUnary, MakeNode("Relu", 1), 17, {{DType::kF32, {0, 5}}}, &empty_out), "empty");
  ExpectRefused(
      Refusal(opencl::CreateUnary, MakeNode("Gelu", 1, 1, {{"approximate", StringAttr("erf")}}), 20, {f32}, &out),
      "Gelu approximation 'erf'");
  ExpectRefused(Refusal(opencl::CreateUnary, MakeNode("Celu", 1, 1, {{"alpha", FloatAttr(0)}}), 12, {f32}, &out),
                "Celu alpha is 0");
  const ValueInfo bound{DType::kF32, {}};
  ExpectRefused(Refusal(opencl::CreateUnary, MakeNode("Clip", 2), 13, {f32, bound}, &out),
                "Clip min computed at run time");
  ExpectRefused(Refusal(opencl::CreateUnary, MakeNode("HardMax", 1), 17, {f32}, &out), "HardMax is not");
  ExpectRefused(Refusal(opencl::CreateBinary, MakeNode("Add", 2), 17, {f32, {DType::kI64, {4, 5}}}, &out),
                "i64 input 1");
  ExpectRefused(Refusal(opencl::CreateBinary, MakeNode("Add", 2, 1, {{"broadcast", IntAttr(1)}}), 6,
                        {f32, {DType::kF32, {5}}}, &out),
                "broadcasting before opset 7");
  // Seven alternating dims cannot be walked by the 6-D kernel.
  const std::vector<ValueInfo> wide_out = {{DType::kF32, {2, 2, 2, 2, 2, 2, 2}}};
  ExpectRefused(Refusal(opencl::CreateBinary, MakeNode("Mul", 2), 17,
                        {{DType::kF32, {2, 1, 2, 1, 2, 1, 2}}, {DType::kF32, {1, 2, 1, 2, 1, 2, 1}}}, &wide_out),
                "alternating dims");
  ExpectRefused(Refusal(opencl::CreateVariadic, MakeNode("Sum", 9), 13, std::vector<ValueInfo>(9, f32), &out),
                "Sum of 9 inputs");
  ExpectRefused(Refusal(opencl::CreateWhere, MakeNode("Where", 3), 16, {{DType::kU8, {4, 5}}, f32, f32}, &out),
                "condition is not bool");
  // The same node with known shapes is accepted.
  EXPECT_TRUE(Refusal(opencl::CreateUnary, MakeNode("Relu", 1), 17, {f32}, &out).ok());
}

}  // namespace
}  // namespace chipfit::testing
