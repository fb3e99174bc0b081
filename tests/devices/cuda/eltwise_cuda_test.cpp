// CUDA elementwise kernels. Everywhere: the broadcast planner (collapsing, strides, limits) and the
// factories' refusals, which are decided before a context is asked for (a plan the factory accepts
// ends at "no CUDA device context" without a GPU). On a GPU: every unary function, broadcasting
// binary ops over each walk shape, Pow with constant exponents, integer ops, variadic ops, Where and
// Cast against the reference on fp32, fp16 and bf16 storage.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "devices/cuda/ops/cuda_ops.h"
#include "devices/cuda/ops/eltwise_launch.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cuda/cuda_test_util.h"

namespace chipfit::testing {
namespace {

using cuda::eltwise::Broadcast;
using cuda::eltwise::PlanBroadcast;

// ---- broadcast planning (host only)

std::vector<uint32_t> Dims(const Broadcast& w) { return {w.dims, w.dims + w.rank}; }
std::vector<uint32_t> Strides(const Broadcast& w, int k) { return {w.strides[k], w.strides[k] + w.rank}; }

TEST(EltwiseCudaPlan, SameShapesCollapseToOneDim) {
  Broadcast w;
  ASSERT_EQ(PlanBroadcast({{2, 3, 4}, {2, 3, 4}}, {2, 3, 4}, w), "");
  EXPECT_EQ(w.rank, 1);
  EXPECT_EQ(w.numel, 24u);
  EXPECT_EQ(Dims(w), std::vector<uint32_t>({24}));
  EXPECT_EQ(Strides(w, 0), std::vector<uint32_t>({1}));
  EXPECT_EQ(Strides(w, 1), std::vector<uint32_t>({1}));
}

TEST(EltwiseCudaPlan, OneValueHasStrideZero) {
  Broadcast w;
  ASSERT_EQ(PlanBroadcast({{5, 7}, {}, {1, 1}}, {5, 7}, w), "");
  EXPECT_EQ(w.rank, 1);
  EXPECT_EQ(w.num_inputs, 3);
  EXPECT_EQ(Strides(w, 0), std::vector<uint32_t>({1}));
  EXPECT_EQ(Strides(w, 1), std::vector<uint32_t>({0}));
  EXPECT_EQ(Strides(w, 2), std::vector<uint32_t>({0}));
}

TEST(EltwiseCudaPlan, BiasPerChannelMergesSpatialDims) {
  Broadcast w;
  ASSERT_EQ(PlanBroadcast({{2, 3, 4, 5}, {3, 1, 1}}, {2, 3, 4, 5}, w), "");
  EXPECT_EQ(Dims(w), std::vector<uint32_t>({2, 3, 20}));
  EXPECT_EQ(Strides(w, 0), std::vector<uint32_t>({60, 20, 1}));
  EXPECT_EQ(Strides(w, 1), std::vector<uint32_t>({0, 1, 0}));
}

TEST(EltwiseCudaPlan, OuterProductAndDroppedOnes) {
  Broadcast w;
  ASSERT_EQ(PlanBroadcast({{1, 3, 1}, {1, 1, 4}}, {1, 3, 4}, w), "");
  EXPECT_EQ(Dims(w), std::vector<uint32_t>({3, 4}));
  EXPECT_EQ(Strides(w, 0), std::vector<uint32_t>({1, 0}));
  EXPECT_EQ(Strides(w, 1), std::vector<uint32_t>({0, 1}));
  // Both broadcast alike on the outer two dims: merged.
  ASSERT_EQ(PlanBroadcast({{2, 3, 4}, {4}}, {2, 3, 4}, w), "");
  EXPECT_EQ(Dims(w), std::vector<uint32_t>({6, 4}));
  EXPECT_EQ(Strides(w, 0), std::vector<uint32_t>({4, 1}));
  EXPECT_EQ(Strides(w, 1), std::vector<uint32_t>({0, 1}));
}

TEST(EltwiseCudaPlan, ScalarAndEmptyOutputs) {
  Broadcast w;
  ASSERT_EQ(PlanBroadcast({{}, {1}}, {1}, w), "");
  EXPECT_EQ(w.rank, 1);
  EXPECT_EQ(w.numel, 1u);
  ASSERT_EQ(PlanBroadcast({{0, 3}, {3}}, {0, 3}, w), "");
  EXPECT_EQ(w.numel, 0u);
}

TEST(EltwiseCudaPlan, Refusals) {
  Broadcast w;
  // Nine alternating dims collapse to nothing.
  const std::vector<int64_t> a = {2, 1, 2, 1, 2, 1, 2, 1, 2}, b = {1, 2, 1, 2, 1, 2, 1, 2, 1};
  EXPECT_NE(PlanBroadcast({a, b}, std::vector<int64_t>(9, 2), w).find("9 alternating dims"), std::string::npos);
  // Eight alternating dims still fit.
  EXPECT_EQ(PlanBroadcast({{2, 1, 2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2, 1, 2}}, std::vector<int64_t>(8, 2), w), "");
  EXPECT_EQ(w.rank, 8);
  EXPECT_NE(PlanBroadcast({{3}, {4}}, {4}, w).find("does not broadcast"), std::string::npos);
  EXPECT_NE(PlanBroadcast({{2, 3}}, {3}, w).find("higher rank"), std::string::npos);
  EXPECT_NE(PlanBroadcast(std::vector<std::vector<int64_t>>(9, {3}), {3}, w).find("at most 8"), std::string::npos);
  EXPECT_NE(PlanBroadcast({{1 << 16, 1 << 15}}, {1 << 16, 1 << 15}, w).find("2^31"), std::string::npos);
}

// ---- factory refusals (host only: no context, so an accepted plan ends at the context check)

struct Info {
  DType dtype = DType::kUndefined;  // undefined: omitted
  Shape shape{};
  const Tensor* value = nullptr;
};

Status Plan(KernelFactory factory, const Node& node, const std::vector<Info>& inputs, DType out_dtype, Shape out_shape,
            int64_t opset = 17) {
  std::vector<ValueInfo> infos(inputs.size());
  std::vector<const ValueInfo*> ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    infos[i] = {inputs[i].dtype, inputs[i].shape, inputs[i].value};
    ptrs.push_back(inputs[i].dtype == DType::kUndefined ? nullptr : &infos[i]);
  }
  const std::vector<ValueInfo> outs = {{out_dtype, std::move(out_shape)}};
  KernelInit init{node, ptrs, opset, Precision::kFp32, nullptr, nullptr, &outs};
  return factory(init).status();
}

constexpr const char* kAccepted = "no CUDA device context";

void ExpectRefused(const Status& s, const std::string& why) {
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.ToString();
  EXPECT_NE(s.message().find(why), std::string::npos) << s.ToString() << " (wanted: " << why << ")";
  EXPECT_EQ(s.message().find(kAccepted), std::string::npos) << s.ToString();
}
void ExpectAccepted(const Status& s) { EXPECT_EQ(s.message(), kAccepted) << s.ToString(); }

TEST(EltwiseCudaRefusal, Unary) {
  const Shape s = {2, 3};
  ExpectAccepted(Plan(cuda::CreateUnary, MakeNode("Relu", 1), {{DType::kF32, s}}, DType::kF32, s));
  ExpectAccepted(Plan(cuda::CreateUnary, MakeNode("Mish", 1), {{DType::kF16, s}}, DType::kF16, s));
  ExpectRefused(Plan(cuda::CreateUnary, MakeNode("Relu", 1), {{DType::kI32, s}}, DType::kI32, s), "Relu on i32");
  ExpectRefused(Plan(cuda::CreateUnary, MakeNode("Exp", 1), {{DType::kF64, s}}, DType::kF64, s), "Exp on f64");
  ExpectRefused(
      Plan(cuda::CreateUnary, MakeNode("Celu", 1, 1, {{"alpha", FloatAttr(0.0f)}}), {{DType::kF32, s}}, DType::kF32, s),
      "Celu alpha is 0");
  ExpectRefused(Plan(cuda::CreateUnary, MakeNode("Gelu", 1, 1, {{"approximate", StringAttr("erf")}}),
                     {{DType::kF32, s}}, DType::kF32, s, 20),
                "Gelu approximation 'erf'");
  ExpectRefused(Plan(cuda::CreateUnary, MakeNode("Tan", 1), {{DType::kF32, s}}, DType::kF32, s),
                "Tan is not an elementwise op");
  ExpectRefused(Plan(cuda::CreateUnary, MakeNode("Relu", 1), {{DType::kF32, {-1, 3}}}, DType::kF32, {-1, 3}),
                "run time");
  ExpectRefused(Plan(cuda::CreateUnary, MakeNode("Relu", 1), {{DType::kF32, {1 << 16, 1 << 15}}}, DType::kF32,
                     {1 << 16, 1 << 15}),
                "2^31");
}

TEST(EltwiseCudaRefusal, ClipBounds) {
  const Shape s = {4};
  const Tensor lo = F32({}, {-1.0f});
  const Tensor two = F32({2}, {0.0f, 1.0f});
  ExpectAccepted(
      Plan(cuda::CreateUnary, MakeNode("Clip", 3), {{DType::kF32, s}, {DType::kF32, {}, &lo}, {}}, DType::kF32, s, 13));
  ExpectAccepted(Plan(cuda::CreateUnary, MakeNode("Clip", 1, 1, {{"min", FloatAttr(0.0f)}}), {{DType::kF32, s}},
                      DType::kF32, s, 6));
  ExpectRefused(Plan(cuda::CreateUnary, MakeNode("Clip", 2), {{DType::kF32, s}, {DType::kF32, {}}}, DType::kF32, s, 13),
                "Clip min computed at run time");
  ExpectRefused(Plan(cuda::CreateUnary, MakeNode("Clip", 3), {{DType::kF32, s}, {}, {DType::kF32, {2}, &two}},
                     DType::kF32, s, 13),
                "Clip max is not a single value");
}

TEST(EltwiseCudaRefusal, BinaryAndVariadic) {
  const Shape s = {2, 3};
  const Tensor e = I64({}, {3});
  ExpectAccepted(Plan(cuda::CreateBinary, MakeNode("Add", 2), {{DType::kI64, s}, {DType::kI64, {3}}}, DType::kI64, s));
  ExpectAccepted(
      Plan(cuda::CreateBinary, MakeNode("Pow", 2), {{DType::kF32, s}, {DType::kI64, {}, &e}}, DType::kF32, s));
  ExpectRefused(Plan(cuda::CreateBinary, MakeNode("Div", 2), {{DType::kI32, s}, {DType::kI32, s}}, DType::kI32, s),
                "integer division by zero");
  ExpectRefused(Plan(cuda::CreateBinary, MakeNode("Pow", 2), {{DType::kF32, s}, {DType::kI64, s}}, DType::kF32, s),
                "Pow of f32 and i64");
  ExpectRefused(Plan(cuda::CreateBinary, MakeNode("Pow", 2), {{DType::kI64, s}, {DType::kI64, s}}, DType::kI64, s),
                "Pow on i64");
  ExpectRefused(Plan(cuda::CreateBinary, MakeNode("Add", 2), {{DType::kU8, s}, {DType::kU8, s}}, DType::kU8, s),
                "Add on u8");
  ExpectRefused(Plan(cuda::CreateBinary, MakeNode("Mul", 2), {{DType::kF32, s}, {DType::kF32, {3}}}, DType::kF32, s, 6),
                "before opset 7");
  ExpectRefused(Plan(cuda::CreateBinary, MakeNode("Mod", 2), {{DType::kF32, s}, {DType::kF32, s}}, DType::kF32, s),
                "Mod is not a binary op");

  ExpectAccepted(Plan(cuda::CreateVariadic, MakeNode("Max", 3),
                      {{DType::kI32, s}, {DType::kI32, {3}}, {DType::kI32, {}}}, DType::kI32, s));
  ExpectRefused(Plan(cuda::CreateVariadic, MakeNode("Sum", 2), {{DType::kI32, s}, {DType::kI32, s}}, DType::kI32, s),
                "Sum on i32");
  const std::vector<Info> nine(9, {DType::kF32, s});
  ExpectRefused(Plan(cuda::CreateVariadic, MakeNode("Sum", 9), nine, DType::kF32, s), "at most 8");
  ExpectRefused(Plan(cuda::CreateVariadic, MakeNode("Min", 2), {{DType::kF32, s}, {DType::kF16, s}}, DType::kF32, s),
                "Min of f32 and f16");
}

TEST(EltwiseCudaRefusal, WhereAndCast) {
  const Shape s = {2, 3};
  ExpectAccepted(Plan(cuda::CreateWhere, MakeNode("Where", 3),
                      {{DType::kBool, s}, {DType::kI64, {3}}, {DType::kI64, {}}}, DType::kI64, s));
  ExpectRefused(Plan(cuda::CreateWhere, MakeNode("Where", 3), {{DType::kU8, s}, {DType::kF32, s}, {DType::kF32, s}},
                     DType::kF32, s),
                "condition of u8");
  ExpectRefused(Plan(cuda::CreateWhere, MakeNode("Where", 3),
                     {{DType::kBool, s}, {DType::kString, s}, {DType::kString, s}}, DType::kString, s),
                "Where on string");

  for (DType from : {DType::kF32, DType::kF16, DType::kBF16, DType::kI64, DType::kU8, DType::kBool}) {
    for (DType to : {DType::kF32, DType::kBF16, DType::kI32, DType::kI8, DType::kBool}) {
      ExpectAccepted(Plan(cuda::CreateCast, MakeNode("Cast", 1), {{from, s}}, to, s));
    }
  }
  ExpectRefused(Plan(cuda::CreateCast, MakeNode("Cast", 1), {{DType::kF64, s}}, DType::kF32, s), "Cast from f64");
  ExpectRefused(Plan(cuda::CreateCast, MakeNode("Cast", 1), {{DType::kF32, s}}, DType::kU64, s), "Cast to u64");
  ExpectRefused(Plan(cuda::CreateCast, MakeNode("Cast", 1), {{DType::kF32, s}}, DType::kString, s), "Cast to strings");
}

// ---- on a GPU, against the reference

// fp16 storage rounds each input and output to 11 significant bits (NMSE ≈ 1e-7 for a well-conditioned
// function); discontinuous functions get inputs exact in half and bf16 and must match closely.
constexpr double kNmseExact = 1e-12;

struct UnarySpec {
  std::string op;
  std::map<std::string, Attribute> attrs{};
  int64_t opset = 17;
  float lo = -3.0f, hi = 3.0f;
  bool quarters = false;  // on a 0.25 grid: exact in half/bf16, ties for Round, integers for Floor/Ceil
  bool away_from_0 = false;
  double nmse16 = 1e-5;
};

const std::vector<UnarySpec> kUnary = {
    {.op = "Relu", .quarters = true},
    {.op = "LeakyRelu", .attrs = {{"alpha", FloatAttr(0.13f)}}},
    {.op = "Clip", .attrs = {{"min", FloatAttr(-0.3f)}, {"max", FloatAttr(0.4f)}}, .opset = 6},
    {.op = "Sigmoid", .lo = -8.0f, .hi = 8.0f},
    {.op = "HardSigmoid", .attrs = {{"alpha", FloatAttr(0.3f)}, {"beta", FloatAttr(0.4f)}}},
    {.op = "HardSwish", .opset = 14, .lo = -5.0f, .hi = 5.0f},
    {.op = "Tanh"},
    {.op = "Elu", .attrs = {{"alpha", FloatAttr(0.7f)}}},
    {.op = "Selu"},
    {.op = "Celu", .attrs = {{"alpha", FloatAttr(1.5f)}}},
    // Gelu's negative tail has condition number ≈ x² (25 at -5).
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
};

Tensor Quarters(const Shape& shape, uint64_t seed, float lo, float hi) {
  Tensor t = RandomF32(shape, seed, lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = std::floor(t.data<float>()[i] * 4.0f) / 4.0f;
  return t;
}

TEST(EltwiseCuda, UnaryMatchesReference) {
  CHIPFIT_REQUIRE_CUDA();
  // Odd sizes (no multiple of a block), one value, rank 5.
  const std::vector<Shape> shapes = {{2, 3, 17, 19}, {1}, {3, 5, 7, 3, 2}};
  uint64_t seed = 1;
  for (const UnarySpec& s : kUnary) {
    for (const Shape& shape : shapes) {
      SCOPED_TRACE(s.op + " " + ShapeToString(shape));
      DeviceCase c{.node = MakeNode(s.op, 1, 1, s.attrs), .opset = s.opset};
      Tensor x = s.quarters ? Quarters(shape, seed++, s.lo, s.hi) : RandomF32(shape, seed++, s.lo, s.hi);
      for (int64_t i = 0; s.away_from_0 && i < x.numel(); ++i) {
        float& v = x.data<float>()[i];
        v = v < 0 ? v - 0.2f : v + 0.2f;
      }
      c.inputs = {x};
      ExpectCudaMatchesReference(cuda::CreateUnary, c, 1e-4, s.quarters ? kNmseExact : s.nmse16);
    }
  }
}

TEST(EltwiseCuda, ClipBoundsAsInputs) {
  CHIPFIT_REQUIRE_CUDA();
  const Tensor x = RandomF32({4, 33}, 7, -2.0f, 2.0f);
  const Tensor lo = F32({}, {-0.5f});
  const Tensor hi = F32({}, {0.75f});
  struct Bounds {
    Tensor lo, hi;
  };
  // Both, only min, only max, none, and min > max (max wins everywhere).
  for (const Bounds& b :
       std::vector<Bounds>{{lo, hi}, {lo, Tensor()}, {Tensor(), hi}, {Tensor(), Tensor()}, {hi, lo}}) {
    DeviceCase c{.node = MakeNode("Clip", 3), .opset = 13};
    if (!b.lo.defined()) c.node.inputs[1] = "";
    if (!b.hi.defined()) c.node.inputs[2] = "";
    c.inputs = {x, b.lo, b.hi};
    c.constant = {false, true, true};
    ExpectCudaMatchesReference(cuda::CreateUnary, c);
  }
}

// Shape pairs covering each walk: same shape, one value, a bias per channel, an outer product, both
// sides broadcasting over several alternating dims, and rank 8 alternating.
const std::vector<std::pair<Shape, Shape>> kBroadcasts = {
    {{2, 3, 17, 19}, {2, 3, 17, 19}}, {{2, 3, 17, 19}, {}},
    {{2, 3, 17, 19}, {3, 1, 1}},      {{7, 1}, {1, 9}},
    {{2, 1, 5, 1, 3}, {4, 1, 6, 1}},  {{2, 1, 2, 1, 2, 1, 2, 1}, {2, 1, 2, 1, 2, 1, 2}},
};

TEST(EltwiseCuda, BinaryMatchesReference) {
  CHIPFIT_REQUIRE_CUDA();
  uint64_t seed = 100;
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "PRelu"}) {
    for (size_t k = 0; k < kBroadcasts.size(); ++k) {
      const auto& [sa, sb] = kBroadcasts[k];
      if (std::string(op) == "PRelu" && k > 2) continue;  // the slope broadcasts to X, not X to the slope
      SCOPED_TRACE(std::string(op) + " " + ShapeToString(sa) + " " + ShapeToString(sb));
      const bool pow = std::string(op) == "Pow";
      Tensor a = RandomF32(sa, seed++, pow ? 0.5f : -2.0f, 2.0f);
      Tensor b = RandomF32(sb, seed++, pow ? -2.0f : 0.3f, 2.0f);  // Div away from 0
      DeviceCase c{.node = MakeNode(op, 2), .inputs = {a, b}};
      ExpectCudaMatchesReference(cuda::CreateBinary, c);
    }
  }
}

TEST(EltwiseCuda, PowWithConstantExponents) {
  CHIPFIT_REQUIRE_CUDA();
  const Tensor x = RandomF32({3, 41}, 5, 0.1f, 3.0f);
  for (const Tensor& e : {F32({}, {2.0f}), F32({1}, {0.5f}), I64({}, {3}), F32({}, {-1.5f})}) {
    DeviceCase c{.node = MakeNode("Pow", 2), .inputs = {x, e}, .constant = {false, true}};
    ExpectCudaMatchesReference(cuda::CreateBinary, c);
  }
}

TEST(EltwiseCuda, IntegerOpsAreExactAndWrap) {
  CHIPFIT_REQUIRE_CUDA();
  const Tensor a64 = I64({2, 3}, {INT64_MAX, -5, 7, 1 << 20, -(int64_t{1} << 40), 0});
  const Tensor b64 = I64({3}, {1, -9, 3});
  const Tensor a32 = I32({2, 3}, {INT32_MAX, -5, 7, 1 << 20, INT32_MIN, 0});
  const Tensor b32 = I32({3}, {1, -9, 3});
  for (const char* op : {"Add", "Sub", "Mul"}) {
    ExpectCudaMatchesReference(cuda::CreateBinary, {.node = MakeNode(op, 2), .inputs = {a64, b64}});
    ExpectCudaMatchesReference(cuda::CreateBinary, {.node = MakeNode(op, 2), .inputs = {a32, b32}});
  }
  for (const char* op : {"Max", "Min"}) {
    ExpectCudaMatchesReference(cuda::CreateVariadic, {.node = MakeNode(op, 2), .inputs = {a64, b64}});
    ExpectCudaMatchesReference(cuda::CreateVariadic, {.node = MakeNode(op, 3), .inputs = {a32, b32, I32({}, {6})}});
  }
}

TEST(EltwiseCuda, VariadicMatchesReference) {
  CHIPFIT_REQUIRE_CUDA();
  const Tensor a = RandomF32({2, 3, 5, 7}, 11);
  const Tensor b = RandomF32({3, 1, 7}, 12);
  const Tensor c3 = RandomF32({}, 13);
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    SCOPED_TRACE(op);
    ExpectCudaMatchesReference(cuda::CreateVariadic, {.node = MakeNode(op, 3), .inputs = {a, b, c3}});
    ExpectCudaMatchesReference(cuda::CreateVariadic, {.node = MakeNode(op, 1), .inputs = {a}});
    std::vector<Tensor> eight;
    for (int k = 0; k < 8; ++k) eight.push_back(RandomF32({4, 9}, 20 + k));
    ExpectCudaMatchesReference(cuda::CreateVariadic, {.node = MakeNode(op, 8), .inputs = eight});
  }
}

TEST(EltwiseCuda, MaxAndMinPropagateNaN) {
  CHIPFIT_REQUIRE_CUDA();
  const float nan = std::nanf("");
  const DeviceCase c{.node = MakeNode("Max", 2), .inputs = {F32({3}, {nan, 1.0f, 2.0f}), F32({3}, {0.0f, nan, 1.0f})}};
  auto got = RunCudaKernel(cuda::CreateVariadic, c);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(std::isnan((*got)[0].data<float>()[0]));
  EXPECT_TRUE(std::isnan((*got)[0].data<float>()[1]));
  EXPECT_EQ((*got)[0].data<float>()[2], 2.0f);
}

Tensor Bools(const Shape& shape, uint64_t seed) {
  const Tensor r = RandomF32(shape, seed);
  Tensor t(DType::kBool, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<bool>()[i] = r.data<float>()[i] > 0;
  return t;
}

TEST(EltwiseCuda, WhereMatchesReference) {
  CHIPFIT_REQUIRE_CUDA();
  const Tensor cond = Bools({2, 3, 1, 5}, 31);
  ExpectCudaMatchesReference(cuda::CreateWhere, {.node = MakeNode("Where", 3),
                                                 .inputs = {cond, RandomF32({4, 1}, 32), RandomF32({3, 4, 5}, 33)}});
  ExpectCudaMatchesReference(
      cuda::CreateWhere, {.node = MakeNode("Where", 3), .inputs = {cond, I64({5}, {1, 2, 3, 4, 5}), I64({}, {-7})}});
  ExpectCudaMatchesReference(cuda::CreateWhere,
                             {.node = MakeNode("Where", 3), .inputs = {cond, Bools({5}, 34), Bools({2, 3, 4, 5}, 35)}});
}

Node CastNode(DType to) { return MakeNode("Cast", 1, 1, {{"to", IntAttr(DTypeToOnnx(to))}}); }

constexpr DType kCastTypes[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kI8,  DType::kU8,  DType::kI16,
                                DType::kU16, DType::kI32, DType::kU32,  DType::kI64, DType::kBool};

TEST(EltwiseCuda, CastFromFloatToEveryType) {
  CHIPFIT_REQUIRE_CUDA();
  // Quarter values within ±60: exact in f16 and bf16 storage, so truncation sees the same value
  // everywhere; negatives saturate unsigned types to 0.
  const Tensor x = Quarters({3, 37}, 41, -60.0f, 60.0f);
  for (DType to : kCastTypes) {
    SCOPED_TRACE(std::string(DTypeName(to)));
    ExpectCudaMatchesReference(cuda::CreateCast, {.node = CastNode(to), .opset = 19, .inputs = {x}});
  }
}

TEST(EltwiseCuda, CastSaturatesLargeFloatsOnFp32) {
  CHIPFIT_REQUIRE_CUDA();
  const float nan = std::nanf("");
  const Tensor x = F32({8}, {1e20f, -1e20f, 3e9f, -3e9f, 300.0f, -300.0f, nan, -0.75f});
  for (DType to : {DType::kI8, DType::kU8, DType::kI32, DType::kU32, DType::kI64}) {
    SCOPED_TRACE(std::string(DTypeName(to)));
    ExpectMatchesReferenceOn(cuda::CreateCast, {.node = CastNode(to), .opset = 19, .inputs = {x}}, CudaTestContext,
                             {Precision::kFp32}, 0.0, 0.0);
  }
}

TEST(EltwiseCuda, CastFromIntegersAndBool) {
  CHIPFIT_REQUIRE_CUDA();
  // Within f16's range (±65504): past it f16 is ±inf, which the error metrics cannot compare.
  const Tensor i64 = I64({6}, {0, 1, -1, 300, -60000, 40001});
  const Tensor i32 = I32({5}, {0, 255, -129, 50001, -32768});
  Tensor flags(DType::kBool, {3});
  flags.data<bool>()[0] = true;
  flags.data<bool>()[1] = false;
  flags.data<bool>()[2] = true;
  for (const Tensor& x : {i64, i32, flags}) {
    for (DType to : kCastTypes) {
      SCOPED_TRACE(std::string(DTypeName(x.dtype())) + " to " + std::string(DTypeName(to)));
      ExpectCudaMatchesReference(cuda::CreateCast, {.node = CastNode(to), .opset = 19, .inputs = {x}}, 1e-6, 1e-5);
    }
  }
}

}  // namespace
}  // namespace chipfit::testing
