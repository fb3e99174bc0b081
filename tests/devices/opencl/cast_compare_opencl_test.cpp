// OpenCL Cast/CastLike, comparisons, logical ops, IsNaN/IsInf and ArgMax/ArgMin against the
// reference on fp32 and fp16 storage. These ops are exact: integer and bool outputs must match byte
// for byte, float outputs value for value (NaN matching NaN), under fp16 storage after rounding the
// reference's f32 outputs to half. Inputs are exact in half (0.25 grid, small integers) so fp16
// storage changes nothing before the op. Then the refusals with their reasons.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "core/reference/ref_util.h"
#include "core/tensor/half.h"
#include "devices/opencl/ops/opencl_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/opencl/opencl_test_util.h"

namespace chipfit::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// A tensor of `dtype` with value(i) stored as the reference stores a computed double.
Tensor Filled(DType dtype, const Shape& shape, const std::function<double(int64_t)>& value) {
  Tensor t(dtype, shape);
  VisitDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, std::nullptr_t>) {
      for (int64_t i = 0; i < t.numel(); ++i) t.data<T>()[i] = FromDouble<T>(value(i));
    }
    return 0;
  });
  return t;
}

// Seeded values on a 0.25 grid in [lo, hi]: exact in half for |v| < 512.
Tensor Quarters(DType dtype, const Shape& shape, uint64_t seed, double lo, double hi) {
  SplitMix64 rng(seed);
  return Filled(dtype, shape, [&](int64_t) { return std::floor((lo + (hi - lo) * rng.Unit()) * 4.0) / 4.0; });
}

// Seeded bools.
Tensor Bools(const Shape& shape, uint64_t seed) {
  SplitMix64 rng(seed);
  return Filled(DType::kBool, shape, [&](int64_t) { return static_cast<double>(rng.Next() & 1); });
}

// `t` with `specials` written over its first elements.
Tensor WithSpecials(Tensor t, const std::vector<float>& specials) {
  for (size_t i = 0; i < specials.size() && static_cast<int64_t>(i) < t.numel(); ++i) {
    if (t.dtype() == DType::kF32) t.data<float>()[i] = specials[i];
    if (t.dtype() == DType::kF16) t.data<Float16>()[i] = Float16(specials[i]);
  }
  return t;
}

bool SameValue(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// Runs `c` on fp32 and fp16 storage and compares exactly with the reference (see the file comment).
void ExpectExact(KernelFactory factory, OpenClCase c,
                 const std::vector<Precision>& precisions = {Precision::kFp32, Precision::kFp16}) {
  const std::vector<Tensor> want = RunReference(c);
  ASSERT_FALSE(want.empty());
  for (Precision p : precisions) {
    c.precision = p;
    auto got = RunOpenClKernel(factory, c);
    ASSERT_TRUE(got.ok()) << c.node.Describe() << " " << PrecisionName(p) << ": " << got.status().ToString();
    ASSERT_EQ(got->size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      const Tensor& g = (*got)[k];
      const Tensor& w = want[k];
      ASSERT_EQ(g.dtype(), w.dtype());
      ASSERT_EQ(g.shape(), w.shape()) << c.node.Describe() << " output " << k;
      if (!IsFloatingDType(w.dtype())) {
        // Byte for byte: GetAsDouble would hide int64 differences past 2^53.
        EXPECT_EQ(std::memcmp(g.raw_data(), w.raw_data(), w.nbytes()), 0)
            << c.node.Describe() << " " << PrecisionName(p) << " output " << k;
        if (std::memcmp(g.raw_data(), w.raw_data(), w.nbytes()) == 0) continue;
        for (int64_t i = 0; i < w.numel(); ++i) {
          if (g.GetAsInt64(i) != w.GetAsInt64(i)) {
            ADD_FAILURE() << "first difference at " << i << ": " << g.GetAsInt64(i) << " vs " << w.GetAsInt64(i);
            break;
          }
        }
        continue;
      }
      int64_t mismatches = 0;
      for (int64_t i = 0; i < w.numel(); ++i) {
        double expected = w.GetAsDouble(i);
        if (w.dtype() == DType::kF32 && p == Precision::kFp16) {
          expected = static_cast<float>(Float16(static_cast<float>(expected)));
        }
        if (!SameValue(g.GetAsDouble(i), expected) && mismatches++ < 5) {
          ADD_FAILURE() << c.node.Describe() << " " << PrecisionName(p) << " output " << k << "[" << i
                        << "]: " << g.GetAsDouble(i) << " vs " << expected;
        }
      }
    }
  }
}

// ---- Cast

Node CastNode(DType to) { return MakeNode("Cast", 1, 1, {{"to", IntAttr(DTypeToOnnx(to))}}); }

// Float sources: the 0.25 grid around the small integer ranges, plus NaN, ±inf, -0 and values that
// saturate the 8- and 16-bit types, all exact in half.
Tensor FloatSource(DType dtype, const Shape& shape, uint64_t seed) {
  return WithSpecials(Quarters(dtype, shape, seed, -300.0, 300.0), {kNaN, kInf, -kInf, -0.0f, 60000.0f, -65504.0f,
                                                                    -2.75f, 2.75f, 127.75f, -128.75f, 255.5f, -0.25f});
}

TEST(CastOpenCl, FloatToEveryType) {
  CHIPFIT_REQUIRE_OPENCL();
  const std::vector<DType> targets = {DType::kF32, DType::kF16, DType::kBool, DType::kI8,  DType::kU8,
                                      DType::kI16, DType::kU16, DType::kI32,  DType::kU32, DType::kI64};
  uint64_t seed = 1;
  for (DType from : {DType::kF32, DType::kF16}) {
    for (DType to : targets) {
      for (const Shape& shape : std::vector<Shape>{{3, 7, 11}, {1}, {2, 1, 5, 3, 3}}) {
        SCOPED_TRACE(std::string(DTypeName(from)) + " -> " + std::string(DTypeName(to)) + " " + ShapeToString(shape));
        OpenClCase c{.node = CastNode(to), .opset = 19};
        c.inputs = {FloatSource(from, shape, seed++)};
        ExpectExact(opencl::CreateCast, c);
      }
    }
  }
}

// Floats past the 32-bit range (not representable in half: fp32 storage only) saturate; below 2^63
// they convert exactly to int64.
TEST(CastOpenCl, SaturatesLargeFloatsOnFp32) {
  CHIPFIT_REQUIRE_OPENCL();
  const Tensor x = MakeTensor<float>(
      {8}, {3e9f, -1e10f, 1e20f, -1e20f, 2147483520.0f, -2147483648.0f, 4294967040.0f, 9.2233715e18f});
  for (DType to : {DType::kI8, DType::kU8, DType::kI16, DType::kU16, DType::kI32, DType::kU32, DType::kI64}) {
    SCOPED_TRACE(DTypeName(to));
    OpenClCase c{.node = CastNode(to), .opset = 13};
    c.inputs = {x};
    ExpectExact(opencl::CreateCast, c, {Precision::kFp32});
  }
}

// Integer sources: values that wrap in narrower types and int64s that differ only past bit 32.
Tensor IntSource(DType dtype, const Shape& shape, uint64_t seed, bool small) {
  SplitMix64 rng(seed);
  Tensor t = Filled(dtype, shape, [&](int64_t) {
    const double range = small ? 1000.0 : 200000.0;
    return std::floor(-range + 2 * range * rng.Unit());
  });
  if (dtype == DType::kI64 && !small && t.numel() >= 4) {
    int64_t* v = t.data<int64_t>();
    v[0] = (int64_t{1} << 40) + 5;
    v[1] = std::numeric_limits<int64_t>::min();
    v[2] = std::numeric_limits<int64_t>::max();
    v[3] = -(int64_t{1} << 33) - 129;
  }
  if (dtype == DType::kI32 && !small && t.numel() >= 2) {
    t.data<int32_t>()[0] = std::numeric_limits<int32_t>::min();
    t.data<int32_t>()[1] = std::numeric_limits<int32_t>::max();
  }
  return t;
}

TEST(CastOpenCl, IntegerAndBoolToEveryType) {
  CHIPFIT_REQUIRE_OPENCL();
  const std::vector<DType> int_targets = {DType::kBool, DType::kI8,  DType::kU8,  DType::kI16,
                                          DType::kU16,  DType::kI32, DType::kU32, DType::kI64};
  uint64_t seed = 100;
  for (DType from : {DType::kI8, DType::kU8, DType::kI16, DType::kI32, DType::kU32, DType::kI64, DType::kBool}) {
    for (const Shape& shape : std::vector<Shape>{{5, 13}, {1}, {3, 2, 9}}) {
      // Wrapping between integer types, "not zero" to bool.
      for (DType to : int_targets) {
        SCOPED_TRACE(std::string(DTypeName(from)) + " -> " + std::string(DTypeName(to)) + " " + ShapeToString(shape));
        OpenClCase c{.node = CastNode(to), .opset = 13};
        c.inputs = {from == DType::kBool ? Bools(shape, seed++) : IntSource(from, shape, seed++, false)};
        ExpectExact(opencl::CreateCast, c);
      }
      // To floats: large values round in f32 (and overflow half), small ones are exact in half.
      for (DType to : {DType::kF32, DType::kF16}) {
        for (bool small : {true, false}) {
          SCOPED_TRACE(std::string(DTypeName(from)) + " -> " + std::string(DTypeName(to)) + " " + ShapeToString(shape) +
                       (small ? " small" : " large"));
          OpenClCase c{.node = CastNode(to), .opset = 13};
          c.inputs = {from == DType::kBool ? Bools(shape, seed++) : IntSource(from, shape, seed++, small)};
          ExpectExact(opencl::CreateCast, c);
        }
      }
    }
  }
}

TEST(CastOpenCl, CastLikeTakesTheDtypeOfInputOne) {
  CHIPFIT_REQUIRE_OPENCL();
  for (DType to : {DType::kI32, DType::kF16, DType::kBool, DType::kF32}) {
    SCOPED_TRACE(DTypeName(to));
    OpenClCase c{.node = MakeNode("CastLike", 2), .opset = 15};
    c.inputs = {FloatSource(DType::kF32, {4, 9}, 7), Filled(to, {1}, [](int64_t) { return 0.0; })};
    ExpectExact(opencl::CreateCast, c);
    c.inputs = {IntSource(DType::kI64, {4, 9}, 8, false), Filled(to, {2}, [](int64_t) { return 1.0; })};
    ExpectExact(opencl::CreateCast, c);
  }
}

// ---- comparisons and logical ops

// Shape pairs for each indexing path: same shape, one value, one run of dims, strided both sides.
const std::vector<std::pair<Shape, Shape>> kBroadcastPairs = {
    {{3, 5, 7}, {3, 5, 7}},       {{}, {2, 3, 17}}, {{3, 1, 7}, {5, 1}},
    {{4, 1, 6, 1}, {1, 5, 1, 3}}, {{1}, {1}},       {{2, 3, 1, 4, 1, 3}, {3, 5, 4, 2, 1}}};

Tensor CompareInput(DType dtype, const Shape& shape, uint64_t seed) {
  // A narrow range so that equal values are common; f32 gets NaN and ±inf too.
  if (dtype == DType::kF32 || dtype == DType::kF16) {
    return WithSpecials(Quarters(dtype, shape, seed, -1.0, 1.0), {kNaN, kInf, -kInf});
  }
  Tensor t = Quarters(dtype, shape, seed, dtype == DType::kU8 ? 0.0 : -3.0, 3.0);
  if (dtype == DType::kI64) {
    // Values equal in their low 32 bits.
    for (int64_t i = 0; i < t.numel(); i += 3) t.data<int64_t>()[i] += (int64_t{i % 2 ? 1 : -1}) << 32;
  }
  return t;
}

TEST(CompareOpenCl, MatchesReferenceWithBroadcasting) {
  CHIPFIT_REQUIRE_OPENCL();
  uint64_t seed = 200;
  for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kU8}) {
      for (const auto& [a, b] : kBroadcastPairs) {
        SCOPED_TRACE(std::string(op) + " " + std::string(DTypeName(dtype)) + " " + ShapeToString(a) + " vs " +
                     ShapeToString(b));
        OpenClCase c{.node = MakeNode(op, 2), .opset = 16};
        c.inputs = {CompareInput(dtype, a, seed++), CompareInput(dtype, b, seed++)};
        ExpectExact(opencl::CreateCompare, c);
        std::swap(c.inputs[0], c.inputs[1]);
        ExpectExact(opencl::CreateCompare, c);
      }
    }
  }
}

TEST(CompareOpenCl, EqualOnBool) {
  CHIPFIT_REQUIRE_OPENCL();
  OpenClCase c{.node = MakeNode("Equal", 2), .opset = 13};
  c.inputs = {Bools({3, 1, 7}, 1), Bools({5, 1}, 2)};
  ExpectExact(opencl::CreateCompare, c);
}

TEST(LogicOpenCl, AndOrXorNot) {
  CHIPFIT_REQUIRE_OPENCL();
  uint64_t seed = 300;
  for (const char* op : {"And", "Or", "Xor"}) {
    for (const auto& [a, b] : kBroadcastPairs) {
      SCOPED_TRACE(std::string(op) + " " + ShapeToString(a) + " vs " + ShapeToString(b));
      OpenClCase c{.node = MakeNode(op, 2), .opset = 7};
      c.inputs = {Bools(a, seed++), Bools(b, seed++)};
      ExpectExact(opencl::CreateLogical, c);
    }
  }
  for (const Shape& shape : std::vector<Shape>{{3, 5, 17}, {1}, {}}) {
    OpenClCase c{.node = MakeNode("Not", 1), .opset = 1};
    c.inputs = {Bools(shape, seed++)};
    ExpectExact(opencl::CreateLogical, c);
  }
}

TEST(LogicOpenCl, IsNaNAndIsInf) {
  CHIPFIT_REQUIRE_OPENCL();
  const std::vector<float> specials = {kNaN, kInf, -kInf, 0.0f, -0.0f, 65504.0f, -65504.0f, kNaN, 1.5f, -kInf};
  uint64_t seed = 400;
  for (DType dtype : {DType::kF32, DType::kF16}) {
    for (const Shape& shape : std::vector<Shape>{{2, 7, 9}, {11}}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + ShapeToString(shape));
      const Tensor x = WithSpecials(Quarters(dtype, shape, seed++, -100.0, 100.0), specials);
      OpenClCase nan{.node = MakeNode("IsNaN", 1), .opset = 13};
      nan.inputs = {x};
      ExpectExact(opencl::CreateIsNaNOrInf, nan);
      for (int64_t positive : {0, 1}) {
        for (int64_t negative : {0, 1}) {
          SCOPED_TRACE("detect_positive " + std::to_string(positive) + " detect_negative " + std::to_string(negative));
          OpenClCase inf{
              .node = MakeNode("IsInf", 1, 1,
                               {{"detect_positive", IntAttr(positive)}, {"detect_negative", IntAttr(negative)}}),
              .opset = 10};
          inf.inputs = {x};
          ExpectExact(opencl::CreateIsNaNOrInf, inf);
        }
      }
    }
  }
}

// ---- ArgMax / ArgMin

TEST(ArgMaxOpenCl, MatchesReferenceOnEveryAxis) {
  CHIPFIT_REQUIRE_OPENCL();
  uint64_t seed = 500;
  const Shape shape = {3, 17, 5, 2};
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kI32, DType::kI64}) {
      // A coarse grid: ties along every axis, so select_last_index matters.
      const Tensor x = Quarters(dtype, shape, seed++, -2.0, 2.0);
      for (int64_t axis : {0, 1, 2, 3, -1, -3}) {
        for (int64_t keepdims : {0, 1}) {
          for (int64_t last : {0, 1}) {
            SCOPED_TRACE(std::string(op) + " " + std::string(DTypeName(dtype)) + " axis " + std::to_string(axis) +
                         " keepdims " + std::to_string(keepdims) + " select_last_index " + std::to_string(last));
            OpenClCase c{
                .node = MakeNode(
                    op, 1, 1,
                    {{"axis", IntAttr(axis)}, {"keepdims", IntAttr(keepdims)}, {"select_last_index", IntAttr(last)}}),
                .opset = 13};
            c.inputs = {x};
            ExpectExact(opencl::CreateArgMax, c);
          }
        }
      }
    }
  }
}

TEST(ArgMaxOpenCl, NaNLongAxisAndOldOpset) {
  CHIPFIT_REQUIRE_OPENCL();
  // NaN and ±inf compare as the reference's > and < do; a 1-D input of 1000 values (one work item).
  Tensor x = WithSpecials(Quarters(DType::kF32, {4, 250}, 9, -100.0, 100.0), {kNaN, -kInf});
  x.data<float>()[260] = kInf;
  x.data<float>()[251] = kNaN;
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int64_t axis : {0, 1}) {
      SCOPED_TRACE(std::string(op) + " axis " + std::to_string(axis));
      OpenClCase c{.node = MakeNode(op, 1, 1, {{"axis", IntAttr(axis)}}), .opset = 13};
      c.inputs = {x};
      ExpectExact(opencl::CreateArgMax, c);
    }
    OpenClCase flat{.node = MakeNode(op, 1, 1, {{"keepdims", IntAttr(0)}}), .opset = 13};
    flat.inputs = {x.Reshaped({1000})};
    ExpectExact(opencl::CreateArgMax, flat);
    // Opset 11 has no select_last_index: the first index wins even when the attribute is set.
    OpenClCase old{.node = MakeNode(op, 1, 1, {{"axis", IntAttr(1)}, {"select_last_index", IntAttr(1)}}), .opset = 11};
    old.inputs = {Quarters(DType::kF32, {6, 7}, 10, -1.0, 1.0)};
    ExpectExact(opencl::CreateArgMax, old);
  }
}

// ---- refusals

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

TEST(CastOpenCl, Refusals) {
  CHIPFIT_REQUIRE_OPENCL();
  const ValueInfo f32{DType::kF32, {4, 5}};
  auto out = [](DType dtype) { return std::vector<ValueInfo>{{dtype, {4, 5}}}; };
  const auto to_f64 = out(DType::kF64), to_bf16 = out(DType::kBF16), to_u64 = out(DType::kU64);
  const auto to_i32 = out(DType::kI32);
  ExpectRefused(Refusal(opencl::CreateCast, CastNode(DType::kF64), 13, {f32}, &to_f64), "f64");
  ExpectRefused(Refusal(opencl::CreateCast, CastNode(DType::kBF16), 13, {f32}, &to_bf16), "bf16");
  ExpectRefused(Refusal(opencl::CreateCast, CastNode(DType::kU64), 13, {f32}, &to_u64), "u64");
  ExpectRefused(Refusal(opencl::CreateCast, CastNode(DType::kI32), 13, {{DType::kF64, {4, 5}}}, &to_i32),
                "Cast from f64");
  ExpectRefused(Refusal(opencl::CreateCast, CastNode(DType::kI32), 13, {{DType::kString, {4, 5}}}, &to_i32), "string");
  ExpectRefused(Refusal(opencl::CreateCast, CastNode(DType::kI32), 13, {{DType::kF32, {-1, 5}}}, &to_i32),
                "known only at run time");
  ExpectRefused(Refusal(opencl::CreateCast, CastNode(DType::kI32), 13, {f32}, nullptr), "only known at run time");
  const std::vector<ValueInfo> empty_out = {{DType::kI32, {0, 5}}};
  ExpectRefused(Refusal(opencl::CreateCast, CastNode(DType::kI32), 13, {{DType::kF32, {0, 5}}}, &empty_out), "empty");
  EXPECT_TRUE(Refusal(opencl::CreateCast, CastNode(DType::kI32), 13, {f32}, &to_i32).ok());
}

TEST(CompareOpenCl, Refusals) {
  CHIPFIT_REQUIRE_OPENCL();
  const std::vector<ValueInfo> out = {{DType::kBool, {4, 5}}};
  const ValueInfo f32{DType::kF32, {4, 5}};
  ExpectRefused(
      Refusal(opencl::CreateCompare, MakeNode("Less", 2), 13, {{DType::kF64, {4, 5}}, {DType::kF64, {4, 5}}}, &out),
      "Less on f64");
  ExpectRefused(Refusal(opencl::CreateCompare, MakeNode("Less", 2), 13, {f32, {DType::kI32, {4, 5}}}, &out),
                "different input dtypes");
  ExpectRefused(Refusal(opencl::CreateCompare, MakeNode("Equal", 2), 13, {f32, {DType::kF32, {-1, 5}}}, &out),
                "known only at run time");
  ExpectRefused(Refusal(opencl::CreateCompare, MakeNode("Equal", 2), 13, {f32, f32}, nullptr),
                "only known at run time");
  ExpectRefused(Refusal(opencl::CreateCompare, MakeNode("Equal", 2, 1, {{"broadcast", IntAttr(1)}}), 6,
                        {f32, {DType::kF32, {5}}}, &out),
                "broadcasting before opset 7");
  const std::vector<ValueInfo> empty_out = {{DType::kBool, {0, 5}}};
  ExpectRefused(Refusal(opencl::CreateCompare, MakeNode("Equal", 2), 13, {{DType::kF32, {0, 5}}, {DType::kF32, {0, 5}}},
                        &empty_out),
                "empty");
  // Nine alternating dims cannot be walked by the 8-D kernel.
  const std::vector<ValueInfo> wide_out = {{DType::kBool, {2, 2, 2, 2, 2, 2, 2, 2, 2}}};
  ExpectRefused(
      Refusal(opencl::CreateCompare, MakeNode("Greater", 2), 13,
              {{DType::kF32, {2, 1, 2, 1, 2, 1, 2, 1, 2}}, {DType::kF32, {1, 2, 1, 2, 1, 2, 1, 2, 1}}}, &wide_out),
      "alternating dims");
  ExpectRefused(Refusal(opencl::CreateLogical, MakeNode("And", 2), 13, {f32, f32}, &out), "bool only");
  ExpectRefused(Refusal(opencl::CreateIsNaNOrInf, MakeNode("IsNaN", 1), 13, {{DType::kI32, {4, 5}}}, &out),
                "f32 and f16 only");
  ExpectRefused(Refusal(opencl::CreateIsNaNOrInf, MakeNode("IsNaN", 1), 13, {{DType::kF64, {4, 5}}}, &out),
                "f32 and f16 only");
  EXPECT_TRUE(Refusal(opencl::CreateCompare, MakeNode("Less", 2), 13, {f32, f32}, &out).ok());
}

TEST(ArgMaxOpenCl, Refusals) {
  CHIPFIT_REQUIRE_OPENCL();
  const std::vector<ValueInfo> out = {{DType::kI64, {1, 5}}};
  ExpectRefused(Refusal(opencl::CreateArgMax, MakeNode("ArgMax", 1), 13, {{DType::kF64, {4, 5}}}, &out),
                "ArgMax on f64");
  ExpectRefused(Refusal(opencl::CreateArgMax, MakeNode("ArgMin", 1), 13, {{DType::kU8, {4, 5}}}, &out), "ArgMin on u8");
  ExpectRefused(Refusal(opencl::CreateArgMax, MakeNode("ArgMax", 1), 13, {{DType::kF32, {-1, 5}}}, &out),
                "known only at run time");
  ExpectRefused(Refusal(opencl::CreateArgMax, MakeNode("ArgMax", 1), 13, {{DType::kF32, {4, 5}}}, nullptr),
                "only known at run time");
  const std::vector<ValueInfo> empty_out = {{DType::kI64, {1, 0}}};
  ExpectRefused(Refusal(opencl::CreateArgMax, MakeNode("ArgMax", 1), 13, {{DType::kF32, {4, 0}}}, &empty_out), "empty");
  EXPECT_TRUE(Refusal(opencl::CreateArgMax, MakeNode("ArgMax", 1), 13, {{DType::kF32, {4, 5}}}, &out).ok());
}

}  // namespace
}  // namespace chipfit::testing
