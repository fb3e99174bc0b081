// The CPU selection kernels (select_cpu.cpp) against the reference: Unique, Compress, ReverseSequence
// and MaxUnpool byte for byte, Det within a tolerance per dtype. Every dtype the reference takes,
// every axis, NaN and signed zeros in Unique's order, empty tensors, sizes large enough for the
// threaded paths, outputs the kernels size themselves, the reference's errors for values out of
// range, and the refusals (with their reasons) of what the kernels leave to the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "devices/cpu/ops/kernel_groups.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"

namespace chipfit::testing {
namespace {

// The group's table alone: the kernels under test whatever the rest of the CPU table holds.
const KernelTable& SelectTable() {
  static const KernelTable table = [] {
    KernelTable t;
    cpu::AddSelectKernels(t);
    return t;
  }();
  return table;
}

KernelFactory Factory(const std::string& op) {
  const auto& impls = SelectTable().Find(op, "", DeviceKind::kCpu, Precision::kFp32);
  return impls.empty() ? nullptr : impls.front().create;
}

const std::vector<DType> kEveryDType = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8,
                                        DType::kU8,  DType::kI16, DType::kU16, DType::kI32,  DType::kU32,
                                        DType::kI64, DType::kU64, DType::kBool};

// Element value v (a small integer) stored as T: halved for floating types, modulo for unsigned
// ones, the parity for bool.
template <typename T>
T FromSmallInt(int64_t v) {
  if constexpr (std::is_same_v<T, bool>) {
    return (v & 1) != 0;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(v);
  } else {
    return T(static_cast<float>(v) * 0.5f);
  }
}

// A tensor of any dtype whose element i is value(i) (a small integer, see FromSmallInt).
template <typename F>
Tensor Generated(DType dtype, const Shape& shape, const F& value) {
  Tensor t(dtype, shape);
  const auto status = VisitDType(dtype, [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::nullptr_t>) {
      return Unsupported("dtype");
    } else {
      for (int64_t i = 0; i < t.numel(); ++i) t.data<T>()[i] = FromSmallInt<T>(value(i));
      return Status();
    }
  });
  EXPECT_TRUE(status.ok());
  return t;
}

// Seeded values in [-range, range], so that repeats occur.
Tensor Filled(DType dtype, const Shape& shape, uint64_t seed, int64_t range = 6) {
  SplitMix64 rng(seed);
  return Generated(dtype, shape, [&](int64_t) {
    return static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(2 * range + 1)) - range;
  });
}

// Slices along `axis` drawn from `kinds` different ones (seeded), so that whole slices repeat.
Tensor RepeatedSlices(DType dtype, const Shape& shape, int64_t axis, int64_t kinds, uint64_t seed) {
  SplitMix64 rng(seed);
  const auto a = static_cast<size_t>(axis);
  std::vector<int64_t> kind(static_cast<size_t>(shape[a]));
  for (int64_t& k : kind) k = static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(kinds));
  int64_t inner = 1;
  for (size_t d = a + 1; d < shape.size(); ++d) inner *= shape[d];
  return Generated(dtype, shape, [&](int64_t i) {
    const int64_t j = i / inner % shape[a];                        // the position along the axis
    const int64_t q = i / (inner * shape[a]) * inner + i % inner;  // the element within the slice
    return (kind[static_cast<size_t>(j)] * 7 + q * 3) % 5 - 2;
  });
}

Tensor Bools(const std::vector<bool>& values) {
  Tensor t(DType::kBool, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.data<bool>()[i] = values[i];
  return t;
}

KernelCase Case(const std::string& op, size_t inputs, size_t outputs, Attrs attrs, int64_t opset) {
  return KernelCase{.node = MakeNode(op, inputs, outputs, std::move(attrs)), .opset = opset};
}

// Every output the same dtype, shape and bytes as the reference's.
void ExpectSameAsReference(const KernelCase& c) {
  const KernelFactory factory = Factory(c.node.op_type);
  ASSERT_NE(factory, nullptr) << c.node.op_type;
  auto out = RunCpuKernel(factory, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  ASSERT_EQ(out->size(), ref.size());
  for (size_t k = 0; k < ref.size(); ++k) {
    SCOPED_TRACE("output " + std::to_string(k));
    ASSERT_EQ((*out)[k].dtype(), ref[k].dtype());
    ASSERT_EQ((*out)[k].shape(), ref[k].shape());
    EXPECT_EQ(std::memcmp((*out)[k].raw_data(), ref[k].raw_data(), ref[k].nbytes()), 0)
        << DescribeTensor(ref[k]) << " differs";
  }
}

// The kernel fails at run time with exactly the reference's error.
void ExpectSameError(const KernelCase& c) {
  auto out = RunCpuKernel(Factory(c.node.op_type), c);
  auto ref = RunNodeOnReference(c.node, c.opset, c.inputs);
  ASSERT_FALSE(ref.ok());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), ref.status().code());
  EXPECT_EQ(out.status().message(), ref.status().message());
  EXPECT_NE(out.status().message().find(c.node.Describe()), std::string::npos) << out.status().message();
}

void ExpectRefused(const KernelCase& c, const std::string& reason) {
  auto out = RunCpuKernel(Factory(c.node.op_type), c);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(out.status().message().find(reason), std::string::npos) << out.status().message();
}

// Runs the kernel as the executor does on a step whose shapes are known only at run time: Init sees
// inputs of unknown dims, Run gets empty output Tensors (nullptr for the omitted ones) to size itself.
Result<std::vector<Tensor>> RunUnsized(const KernelCase& c, const std::vector<bool>& omitted = {}) {
  std::vector<ValueInfo> infos(c.inputs.size());
  std::vector<const ValueInfo*> ptrs;
  std::vector<const Tensor*> in_ptrs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    infos[i] = {c.inputs[i].dtype(), Shape(c.inputs[i].shape().size(), -1), nullptr};
    ptrs.push_back(&infos[i]);
    in_ptrs.push_back(&c.inputs[i]);
  }
  ASSIGN_OR_RETURN(auto kernel, Factory(c.node.op_type)(KernelInit{c.node, ptrs, c.opset}));
  EXPECT_TRUE(kernel->AllocatesOutputs());
  std::vector<Tensor> outs(c.node.outputs.size());
  std::vector<Tensor*> out_ptrs;
  for (size_t k = 0; k < outs.size(); ++k) out_ptrs.push_back(k < omitted.size() && omitted[k] ? nullptr : &outs[k]);
  KernelContext ctx(c.node, c.opset, in_ptrs, out_ptrs);
  RETURN_IF_ERROR(kernel->Run(ctx));
  return outs;
}

void ExpectUnsizedSameAsReference(const KernelCase& c, const std::vector<bool>& omitted = {}) {
  auto out = RunUnsized(c, omitted);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  ASSERT_EQ(out->size(), ref.size());
  for (size_t k = 0; k < ref.size(); ++k) {
    SCOPED_TRACE("output " + std::to_string(k));
    if (k < omitted.size() && omitted[k]) {
      EXPECT_FALSE((*out)[k].defined());
      continue;
    }
    ASSERT_EQ((*out)[k].dtype(), ref[k].dtype());
    ASSERT_EQ((*out)[k].shape(), ref[k].shape());
    EXPECT_EQ(std::memcmp((*out)[k].raw_data(), ref[k].raw_data(), ref[k].nbytes()), 0);
  }
}

// ---------------------------------------------------------------------------------------------
// Unique

KernelCase UniqueCase(Tensor x, std::optional<int64_t> axis, int64_t sorted = 1) {
  Attrs attrs = {{"sorted", IntAttr(sorted)}};
  if (axis) attrs["axis"] = IntAttr(*axis);
  KernelCase c = Case("Unique", 1, 4, std::move(attrs), 11);
  c.inputs = {std::move(x)};
  return c;
}

TEST(SelectCpuTest, UniqueFlattenedEveryDtypeSortedAndNot) {
  for (DType dtype : kEveryDType) {
    for (int64_t sorted : {0, 1}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " sorted " + std::to_string(sorted));
      ExpectSameAsReference(UniqueCase(Filled(dtype, {3, 4, 5}, 1), std::nullopt, sorted));
      ExpectSameAsReference(UniqueCase(Filled(dtype, {7}, 2), std::nullopt, sorted));
      ExpectSameAsReference(UniqueCase(Filled(dtype, {}, 3), std::nullopt, sorted));
    }
  }
  // Extremes of the integer types sort by value, not by bit pattern.
  ExpectSameAsReference(
      UniqueCase(I64({6}, {std::numeric_limits<int64_t>::max(), -1, std::numeric_limits<int64_t>::min(), 0, -1, 1}),
                 std::nullopt));
  ExpectSameAsReference(UniqueCase(MakeTensor<uint64_t>({4}, {~uint64_t{0}, 1, uint64_t{1} << 63, 1}), std::nullopt));
}

TEST(SelectCpuTest, UniqueAlongEveryAxisWithRepeatedSlices) {
  const Shape shape = {4, 6, 3};
  for (DType dtype : {DType::kF32, DType::kI32, DType::kBool, DType::kF16, DType::kU8}) {
    for (int64_t axis : {0, 1, 2, -1, -3}) {
      for (int64_t sorted : {0, 1}) {
        SCOPED_TRACE(std::string(DTypeName(dtype)) + " axis " + std::to_string(axis) + " sorted " +
                     std::to_string(sorted));
        const int64_t a = axis < 0 ? axis + 3 : axis;
        ExpectSameAsReference(UniqueCase(RepeatedSlices(dtype, shape, a, 3, 10 + a), axis, sorted));
        ExpectSameAsReference(UniqueCase(Filled(dtype, shape, 20 + a, 1), axis, sorted));
      }
    }
  }
  // The backend suite's 2-D case: rows [1 0 0] [1 0 0] [2 3 4] [2 3 5].
  const Tensor x = F32({4, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4, 2, 3, 5});
  auto out = RunCpuKernel(Factory("Unique"), UniqueCase(x, 0));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{3, 3}));
  EXPECT_EQ(Values<int64_t>((*out)[1]), (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(Values<int64_t>((*out)[2]), (std::vector<int64_t>{0, 0, 1, 2}));
  EXPECT_EQ(Values<int64_t>((*out)[3]), (std::vector<int64_t>{2, 1, 1}));
}

TEST(SelectCpuTest, UniqueOrdersNanLastAndSignedZerosTogether) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {nan, 0.0f, -0.0f, 1.0f, -nan, -inf, inf, -0.0f, -2.5f, nan};
  const Tensor x = F32({10}, values);
  for (int64_t sorted : {0, 1}) ExpectSameAsReference(UniqueCase(x, std::nullopt, sorted));
  auto out = RunCpuKernel(Factory("Unique"), UniqueCase(x, std::nullopt));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // -inf, -2.5, 0 (first seen as +0 at 1), 1, inf, one NaN for all three.
  EXPECT_EQ(Values<int64_t>((*out)[1]), (std::vector<int64_t>{5, 8, 1, 3, 6, 0}));
  EXPECT_EQ(Values<int64_t>((*out)[3]), (std::vector<int64_t>{1, 1, 3, 1, 1, 3}));
  EXPECT_FALSE(std::signbit((*out)[0].data<float>()[2]));

  Tensor half(DType::kF16, {10});
  Tensor wide(DType::kF64, {10});
  for (size_t i = 0; i < values.size(); ++i) {
    half.data<Float16>()[i] = Float16(values[i]);
    wide.data<double>()[i] = values[i];
  }
  ExpectSameAsReference(UniqueCase(half, std::nullopt));
  ExpectSameAsReference(UniqueCase(wide, std::nullopt, 0));
  // Rows holding NaN: equal to each other where the rest agrees.
  ExpectSameAsReference(UniqueCase(F32({4, 2}, {nan, 1, 0, 1, nan, 1, -0.0f, 1}), 0));
}

TEST(SelectCpuTest, UniqueLargeInputsSortInThreads) {
  ExpectSameAsReference(UniqueCase(Filled(DType::kF32, {300000}, 30, 5000), std::nullopt));
  ExpectSameAsReference(UniqueCase(Filled(DType::kI16, {500, 400}, 31, 300), std::nullopt, 0));
  ExpectSameAsReference(UniqueCase(RepeatedSlices(DType::kI32, {50000, 3}, 0, 40, 32), 0));
  ExpectSameAsReference(UniqueCase(Filled(DType::kU8, {2, 40000, 2}, 33, 1), 1, 0));
}

TEST(SelectCpuTest, UniqueEmptyInputs) {
  ExpectSameAsReference(UniqueCase(Tensor(DType::kF32, {0}), std::nullopt));
  ExpectSameAsReference(UniqueCase(Tensor(DType::kI64, {2, 0, 3}), std::nullopt, 0));
  ExpectSameAsReference(UniqueCase(Tensor(DType::kF32, {2, 0, 3}), 1));
  // Slices of no elements are all equal: one unique slice.
  ExpectSameAsReference(UniqueCase(Tensor(DType::kF32, {3, 0}), 0));
}

TEST(SelectCpuTest, UniqueSizesItsOwnOutputsAndSkipsOmittedOnes) {
  const KernelCase c = UniqueCase(RepeatedSlices(DType::kF64, {5, 4}, 1, 2, 40), 1, 0);
  ExpectUnsizedSameAsReference(c);
  ExpectUnsizedSameAsReference(c, {false, true, false, true});
  ExpectUnsizedSameAsReference(c, {true, false, true, false});
  ExpectUnsizedSameAsReference(UniqueCase(Filled(DType::kBF16, {6, 7}, 41), std::nullopt));
}

TEST(SelectCpuTest, UniqueRefusesWhatTheReferenceReports) {
  ExpectRefused(UniqueCase(Strings({2}, {"a", "b"}), std::nullopt), "string input 'X'");
  ExpectRefused(UniqueCase(Filled(DType::kF32, {3}, 50), std::nullopt, 2), "sorted 2");
  ExpectRefused(UniqueCase(Filled(DType::kF32, {3, 2}, 51), 2), "axis 2 is outside rank 2");
  ExpectRefused(UniqueCase(Filled(DType::kF32, {}, 52), 0), "axis 0 is outside rank 0");
}

// ---------------------------------------------------------------------------------------------
// Compress

KernelCase CompressCase(Tensor x, Tensor condition, std::optional<int64_t> axis) {
  Attrs attrs;
  if (axis) attrs["axis"] = IntAttr(*axis);
  KernelCase c = Case("Compress", 2, 1, std::move(attrs), 11);
  c.inputs = {std::move(x), std::move(condition)};
  return c;
}

std::vector<bool> RandomBools(size_t n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<bool> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = rng.Next() % 2 == 0;
  return v;
}

TEST(SelectCpuTest, CompressAlongEveryAxisAndFlattened) {
  const Shape shape = {3, 4, 5};
  for (DType dtype : {DType::kF32, DType::kI64, DType::kU8, DType::kBool, DType::kF16, DType::kI16}) {
    for (std::optional<int64_t> axis :
         {std::optional<int64_t>{}, std::optional<int64_t>{0}, std::optional<int64_t>{1}, std::optional<int64_t>{2},
          std::optional<int64_t>{-1}, std::optional<int64_t>{-3}}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " axis " + (axis ? std::to_string(*axis) : "none"));
      const int64_t len = axis ? shape[static_cast<size_t>(*axis < 0 ? *axis + 3 : *axis)] : 60;
      const Tensor x = Filled(dtype, shape, 60);
      for (int64_t cond_len : {len, len - 1, int64_t{1}}) {
        ExpectSameAsReference(CompressCase(x, Bools(RandomBools(static_cast<size_t>(cond_len), 61)), axis));
      }
      // Longer than the axis, false past its end.
      std::vector<bool> longer = RandomBools(static_cast<size_t>(len), 62);
      longer.insert(longer.end(), 3, false);
      ExpectSameAsReference(CompressCase(x, Bools(longer), axis));
    }
  }
}

TEST(SelectCpuTest, CompressEmptySelectionsAndInputs) {
  ExpectSameAsReference(CompressCase(Filled(DType::kF32, {3, 4}, 70), Bools({}), 1));
  ExpectSameAsReference(CompressCase(Filled(DType::kF32, {3, 4}, 71), Bools({false, false, false}), 0));
  ExpectSameAsReference(CompressCase(Filled(DType::kF32, {3, 4}, 72), Bools({false, false}), std::nullopt));
  ExpectSameAsReference(CompressCase(Tensor(DType::kI32, {2, 0, 3}), Bools({true, false}), 0));
  ExpectSameAsReference(CompressCase(Tensor(DType::kI32, {2, 0, 3}), Bools({}), std::nullopt));
  ExpectSameAsReference(CompressCase(Filled(DType::kF64, {}, 73), Bools({true}), std::nullopt));
}

TEST(SelectCpuTest, CompressLargeInputsCopyInThreads) {
  const Tensor x = Filled(DType::kF32, {600, 500}, 80);
  ExpectSameAsReference(CompressCase(x, Bools(RandomBools(500, 81)), 1));
  ExpectSameAsReference(CompressCase(x, Bools(RandomBools(600, 82)), 0));
  ExpectSameAsReference(CompressCase(x, Bools(RandomBools(300000, 83)), std::nullopt));
}

TEST(SelectCpuTest, CompressConditionBeyondTheAxisFailsLikeTheReference) {
  std::vector<bool> cond(6, false);
  cond[4] = true;  // one past the axis's end
  ExpectSameError(CompressCase(Filled(DType::kF32, {3, 4}, 90), Bools(cond), 1));
  std::vector<bool> flat(13, false);
  flat[12] = true;
  ExpectSameError(CompressCase(Filled(DType::kF32, {3, 4}, 91), Bools(flat), std::nullopt));
  // The kernel's own check, on a step sized at run time.
  auto out = RunUnsized(CompressCase(Filled(DType::kF32, {3, 4}, 92), Bools(cond), 1));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("condition selects index 4 but the selected axis has only 4 entries"),
            std::string::npos)
      << out.status().message();
}

TEST(SelectCpuTest, CompressSizesItsOwnOutput) {
  ExpectUnsizedSameAsReference(CompressCase(Filled(DType::kU16, {4, 5, 2}, 100), Bools(RandomBools(5, 101)), -2));
  ExpectUnsizedSameAsReference(CompressCase(Filled(DType::kI8, {4, 5}, 102), Bools(RandomBools(20, 103)), {}));
}

TEST(SelectCpuTest, CompressRefusesWhatTheReferenceReports) {
  ExpectRefused(CompressCase(Strings({2}, {"a", "b"}), Bools({true, false}), 0), "string input 'input'");
  KernelCase int_condition = CompressCase(Filled(DType::kF32, {3}, 110), I32({3}, {1, 0, 1}), 0);
  ExpectRefused(int_condition, "i32[3] condition, not 1-D bool");
  Tensor square(DType::kBool, {2, 2});
  ExpectRefused(CompressCase(Filled(DType::kF32, {4}, 111), square, std::nullopt), "bool[2x2] condition");
  ExpectRefused(CompressCase(Filled(DType::kF32, {4}, 112), Bools({true}), 1), "axis 1 is outside rank 1");
}

// ---------------------------------------------------------------------------------------------
// ReverseSequence

KernelCase ReverseCase(Tensor x, std::vector<int64_t> lens, int64_t batch_axis, int64_t time_axis) {
  KernelCase c =
      Case("ReverseSequence", 2, 1, {{"batch_axis", IntAttr(batch_axis)}, {"time_axis", IntAttr(time_axis)}}, 10);
  const auto n = static_cast<int64_t>(lens.size());
  c.inputs = {std::move(x), I64({n}, std::move(lens))};
  return c;
}

std::vector<int64_t> RandomLens(int64_t batches, int64_t steps, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<int64_t> lens(static_cast<size_t>(batches));
  for (int64_t& l : lens) l = static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(steps + 1));
  return lens;
}

TEST(SelectCpuTest, ReverseSequenceBothLayoutsAndDtypes) {
  for (DType dtype : {DType::kF32, DType::kI8, DType::kF64, DType::kBool, DType::kF16, DType::kU64}) {
    for (bool batch_major : {false, true}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + (batch_major ? " batch-major" : " time-major"));
      const int64_t b = batch_major ? 0 : 1;
      for (const Shape& shape : {Shape{4, 3}, Shape{5, 3, 2, 2}, Shape{6, 7, 3}}) {
        const int64_t batches = shape[static_cast<size_t>(b)], steps = shape[static_cast<size_t>(1 - b)];
        ExpectSameAsReference(ReverseCase(Filled(dtype, shape, 120), RandomLens(batches, steps, 121), b, 1 - b));
        // Every length from 0 to all steps.
        std::vector<int64_t> all(static_cast<size_t>(batches));
        for (int64_t i = 0; i < batches; ++i) all[static_cast<size_t>(i)] = i % (steps + 1);
        ExpectSameAsReference(ReverseCase(Filled(dtype, shape, 122), all, b, 1 - b));
      }
    }
  }
}

TEST(SelectCpuTest, ReverseSequenceLargeAndEmpty) {
  ExpectSameAsReference(ReverseCase(Filled(DType::kF32, {64, 32, 256}, 130), RandomLens(32, 64, 131), 1, 0));
  ExpectSameAsReference(ReverseCase(Filled(DType::kF32, {512, 1024}, 132), RandomLens(512, 1024, 133), 0, 1));
  ExpectSameAsReference(ReverseCase(Tensor(DType::kF32, {0, 3, 2}), {0, 0, 0}, 1, 0));
  ExpectSameAsReference(ReverseCase(Tensor(DType::kF32, {4, 0, 2}), {}, 1, 0));
  ExpectSameAsReference(ReverseCase(Tensor(DType::kF32, {4, 3, 0}), {1, 4, 2}, 1, 0));
}

TEST(SelectCpuTest, ReverseSequenceLengthOutOfRangeFailsLikeTheReference) {
  ExpectSameError(ReverseCase(Filled(DType::kF32, {4, 3}, 140), {2, 5, 1}, 1, 0));
  ExpectSameError(ReverseCase(Filled(DType::kF32, {4, 3}, 141), {2, 4, -1}, 1, 0));
  ExpectSameError(ReverseCase(Filled(DType::kF32, {3, 4, 2}, 142), {0, 1, 5}, 0, 1));
  // A length count that shape inference could not check (shapes known only at run time).
  const KernelCase c = ReverseCase(Filled(DType::kF32, {4, 3}, 143), {1, 2}, 1, 0);
  std::vector<ValueInfo> infos = {{DType::kF32, {-1, -1}, nullptr}, {DType::kI64, {-1}, nullptr}};
  const std::vector<const ValueInfo*> ptrs = {&infos[0], &infos[1]};
  auto kernel = Factory("ReverseSequence")(KernelInit{c.node, ptrs, c.opset});
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  Tensor out(DType::kF32, {4, 3});
  KernelContext ctx(c.node, c.opset, {&c.inputs[0], &c.inputs[1]}, {&out});
  const Status status = (*kernel)->Run(ctx);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("sequence_lens has shape 2 but needs one length per batch (3)"), std::string::npos)
      << status.message();
}

TEST(SelectCpuTest, ReverseSequenceRefusesWhatTheReferenceReports) {
  ExpectRefused(ReverseCase(Strings({2, 1}, {"a", "b"}), {1}, 1, 0), "string input 'input'");
  KernelCase int32_lens = ReverseCase(Filled(DType::kF32, {2, 2}, 150), {1, 2}, 1, 0);
  int32_lens.inputs[1] = I32({2}, {1, 2});
  ExpectRefused(int32_lens, "i32 sequence_lens (i64 expected");
  ExpectRefused(ReverseCase(Filled(DType::kF32, {2, 2}, 151), {1, 2}, 1, 1), "batch_axis 1 and time_axis 1");
  ExpectRefused(ReverseCase(Filled(DType::kF32, {2, 2}, 152), {1, 2}, 2, 0), "batch_axis 2 and time_axis 0");
}

// ---------------------------------------------------------------------------------------------
// MaxUnpool

KernelCase UnpoolCase(Tensor x, Tensor indices, std::vector<int64_t> kernel, std::vector<int64_t> strides,
                      std::vector<int64_t> pads = {}) {
  Attrs attrs = {{"kernel_shape", IntsAttr(std::move(kernel))}, {"strides", IntsAttr(std::move(strides))}};
  if (!pads.empty()) attrs["pads"] = IntsAttr(std::move(pads));
  KernelCase c = Case("MaxUnpool", 2, 1, std::move(attrs), 11);
  c.inputs = {std::move(x), std::move(indices)};
  return c;
}

// Indices for an X of shape x into `unpooled`: each in its own (n, c) plane, or (cross) anywhere;
// drawn at random, so that positions repeat.
Tensor UnpoolIndices(const Shape& x, const Shape& unpooled, uint64_t seed, bool cross = false) {
  SplitMix64 rng(seed);
  Tensor t(DType::kI64, x);
  const int64_t planes = x[0] * x[1];
  const int64_t in_plane = t.numel() / planes;
  const int64_t out_plane = NumElements(unpooled) / planes;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const auto r = static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(cross ? out_plane * planes : out_plane));
    t.data<int64_t>()[i] = cross ? r : i / in_plane * out_plane + r;
  }
  return t;
}

TEST(SelectCpuTest, MaxUnpoolInvertsMaxPool) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16}) {
    SCOPED_TRACE(std::string(DTypeName(dtype)));
    const Node pool =
        MakeNode("MaxPool", 1, 2,
                 {{"kernel_shape", IntsAttr({2, 2})}, {"strides", IntsAttr({2, 2})}, {"pads", IntsAttr({0, 0, 1, 1})}});
    Tensor x = Filled(DType::kF32, {2, 3, 7, 7}, 160, 50);
    if (dtype != DType::kF32) {
      Tensor converted(dtype, x.shape());
      for (int64_t i = 0; i < x.numel(); ++i) {
        if (dtype == DType::kF64) converted.data<double>()[i] = x.data<float>()[i];
        if (dtype == DType::kF16) converted.data<Float16>()[i] = Float16(x.data<float>()[i]);
      }
      x = converted;
    }
    auto pooled = RunNodeOnReference(pool, 12, {x});
    ASSERT_TRUE(pooled.ok()) << pooled.status().ToString();
    ExpectSameAsReference(UnpoolCase((*pooled)[0], (*pooled)[1], {2, 2}, {2, 2}, {0, 0, 1, 1}));
  }
}

TEST(SelectCpuTest, MaxUnpoolShapesStridesAndPads) {
  // 1-D, 2-D with overlapping windows, 3-D with pads; repeated positions in every plane.
  struct Geometry {
    Shape x, unpooled;
    std::vector<int64_t> kernel, strides, pads;
  };
  const std::vector<Geometry> cases = {
      {{2, 3, 5}, {2, 3, 10}, {2}, {2}, {}},
      {{1, 2, 4, 4}, {1, 2, 6, 6}, {3, 3}, {1, 1}, {}},
      {{2, 2, 3, 4}, {2, 2, 6, 8}, {3, 3}, {2, 2}, {0, 1, 1, 0}},
      {{1, 2, 2, 3, 2}, {1, 2, 3, 6, 2}, {2, 2, 2}, {2, 2, 2}, {0, 0, 1, 1, 0, 1}},
  };
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF64}) {
    for (const Geometry& g : cases) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " X " + ShapeToString(g.x));
      const Tensor x = Filled(dtype, g.x, 170);
      ExpectSameAsReference(UnpoolCase(x, UnpoolIndices(g.x, g.unpooled, 171), g.kernel, g.strides, g.pads));
      ExpectSameAsReference(UnpoolCase(x, UnpoolIndices(g.x, g.unpooled, 172, true), g.kernel, g.strides, g.pads));
    }
  }
}

TEST(SelectCpuTest, MaxUnpoolLargeRunsPlanesInThreads) {
  const Shape x = {4, 16, 64, 64}, unpooled = {4, 16, 128, 128};
  ExpectSameAsReference(UnpoolCase(Filled(DType::kF32, x, 180, 100), UnpoolIndices(x, unpooled, 181), {2, 2}, {2, 2}));
  // Indices across planes, with repeats: written in order, the last write wins.
  ExpectSameAsReference(
      UnpoolCase(Filled(DType::kF32, x, 182, 100), UnpoolIndices(x, unpooled, 183, true), {2, 2}, {2, 2}));
}

TEST(SelectCpuTest, MaxUnpoolWithOutputShape) {
  // The backend suite's case: output_shape larger than the default unpooled shape.
  const Shape x = {1, 1, 2, 2};
  for (bool constant : {false, true}) {
    KernelCase c = UnpoolCase(F32(x, {5, 6, 7, 8}), I64(x, {5, 7, 13, 15}), {2, 2}, {2, 2});
    c.node.inputs.push_back("in2");
    c.inputs.push_back(I64({4}, {1, 1, 5, 5}));
    c.constant = {false, false, constant};
    ExpectSameAsReference(c);
    c.inputs[2] = I64({4}, {1, 1, 4, 4});
    ExpectSameAsReference(c);
  }
  const Shape big = {2, 3, 6, 5};
  KernelCase c =
      UnpoolCase(Filled(DType::kF64, big, 190), UnpoolIndices(big, {2, 3, 12, 10}, 191, true), {2, 2}, {2, 2});
  c.node.inputs.push_back("in2");
  c.inputs.push_back(I64({4}, {2, 3, 13, 17}));
  ExpectSameAsReference(c);
}

TEST(SelectCpuTest, MaxUnpoolEmptyInput) {
  ExpectSameAsReference(
      UnpoolCase(Tensor(DType::kF32, {0, 3, 2, 2}), Tensor(DType::kI64, {0, 3, 2, 2}), {2, 2}, {2, 2}));
  ExpectSameAsReference(UnpoolCase(Tensor(DType::kF32, {1, 2, 0}), Tensor(DType::kI64, {1, 2, 0}), {3}, {1}));
}

TEST(SelectCpuTest, MaxUnpoolIndexOutOfRangeFailsLikeTheReference) {
  const Shape x = {1, 2, 2, 2};  // unpooled 1 x 2 x 4 x 4: 32 positions
  ExpectSameError(UnpoolCase(Filled(DType::kF32, x, 200), I64(x, {0, 1, 2, 3, 32, 5, 6, 7}), {2, 2}, {2, 2}));
  ExpectSameError(UnpoolCase(Filled(DType::kF32, x, 201), I64(x, {0, 1, 2, 3, 4, 5, -1, 40}), {2, 2}, {2, 2}));
  // output_shape smaller than the unpooled shape.
  KernelCase small = UnpoolCase(Filled(DType::kF32, x, 202), I64(x, {0, 1, 2, 3, 4, 5, 6, 7}), {2, 2}, {2, 2});
  small.node.inputs.push_back("in2");
  small.inputs.push_back(I64({4}, {1, 2, 3, 4}));
  ExpectSameError(small);
  // Pads that leave no output.
  ExpectSameError(UnpoolCase(Filled(DType::kF32, {1, 1, 1}, 203), I64({1, 1, 1}, {0}), {2}, {1}, {2, 1}));
}

TEST(SelectCpuTest, MaxUnpoolRefusesOtherDtypes) {
  const Shape x = {1, 1, 2};
  ExpectRefused(UnpoolCase(Filled(DType::kI32, x, 210), I64(x, {0, 3}), {2}, {2}),
                "i32 X (f32, f64, f16 or bf16 expected)");
  ExpectRefused(UnpoolCase(Filled(DType::kF32, x, 211), I32(x, {0, 3}), {2}, {2}), "i32 I (i64 expected)");
  KernelCase no_kernel = UnpoolCase(Filled(DType::kF32, x, 212), I64(x, {0, 3}), {2}, {2});
  no_kernel.node.attributes.erase("kernel_shape");
  ExpectRefused(no_kernel, "kernel_shape missing");
}

// ---------------------------------------------------------------------------------------------
// Det

KernelCase DetCase(Tensor x) {
  KernelCase c = Case("Det", 1, 1, {}, 11);
  c.inputs = {std::move(x)};
  return c;
}

// Uniform values in [-1, 1) as any float type, plus `diagonal` on each matrix's diagonal.
Tensor RandomMatrices(DType dtype, const Shape& shape, uint64_t seed, double diagonal = 0) {
  const Tensor f = RandomF32(shape, seed);
  const int64_t m = shape.back();
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = f.data<float>()[i] + (i % (m * m) % (m + 1) == 0 ? diagonal : 0.0);
    switch (dtype) {
      case DType::kF32: t.data<float>()[i] = static_cast<float>(v); break;
      case DType::kF64: t.data<double>()[i] = v; break;
      case DType::kF16: t.data<Float16>()[i] = Float16(static_cast<float>(v)); break;
      default: t.data<BFloat16>()[i] = BFloat16(static_cast<float>(v)); break;
    }
  }
  return t;
}

// Each determinant within `rtol` of the reference's (relative to max(1, |reference|)).
void ExpectDetNearReference(const KernelCase& c, double rtol) {
  auto out = RunCpuKernel(Factory("Det"), c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  ASSERT_EQ(ref.size(), 1u);
  ASSERT_EQ((*out)[0].dtype(), ref[0].dtype());
  ASSERT_EQ((*out)[0].shape(), ref[0].shape());
  for (int64_t i = 0; i < ref[0].numel(); ++i) {
    const double want = ref[0].GetAsDouble(i), got = (*out)[0].GetAsDouble(i);
    EXPECT_NEAR(got, want, rtol * std::max(1.0, std::fabs(want))) << "matrix " << i;
  }
}

double Tolerance(DType dtype) {
  switch (dtype) {
    case DType::kF64: return 1e-12;
    case DType::kF32: return 1e-6;
    case DType::kF16: return 1e-3;
    default: return 1e-2;
  }
}

TEST(SelectCpuTest, DetBatchesAndFloatTypes) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    for (const Shape& shape : {Shape{3, 3}, Shape{2, 4, 4}, Shape{2, 3, 5, 5}, Shape{1, 1}, Shape{7, 2, 2}}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + ShapeToString(shape));
      ExpectDetNearReference(DetCase(RandomMatrices(dtype, shape, 220)), Tolerance(dtype));
    }
  }
  ExpectSameAsReference(DetCase(Tensor(DType::kF32, {0, 3, 3})));
  ExpectSameAsReference(DetCase(Tensor(DType::kF32, {2, 0, 0})));  // the empty product: 1
}

TEST(SelectCpuTest, DetPivotsSwapsAndSingularMatrices) {
  auto det = [](Tensor x) {
    auto out = RunCpuKernel(Factory("Det"), DetCase(std::move(x)));
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? (*out)[0].GetAsDouble(0) : std::nan("");
  };
  EXPECT_EQ(det(F32({2, 2}, {0, 1, 1, 0})), -1.0);
  EXPECT_EQ(det(F32({3, 3}, {0, 0, 2, 0, 3, 0, 4, 0, 0})), -24.0);
  EXPECT_EQ(det(F32({3, 3}, {1, 2, 3, 2, 4, 6, 1, 0, 1})), 0.0);
  EXPECT_EQ(det(F32({3, 3}, {0, 0, 0, 1, 2, 3, 4, 5, 6})), 0.0);
  EXPECT_NEAR(det(F32({3, 3}, {2, -3, 1, 2, 0, -1, 1, 4, 5})), 49.0, 1e-5);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ExpectSameAsReference(DetCase(F32({2, 2, 2}, {nan, 1, 2, 3, 1, 2, 2, 4})));
  ExpectSameAsReference(DetCase(F32({3, 3}, {1e-30f, 1, 2, 1, 1e30f, 3, 2, 3, 1e-20f})));
}

TEST(SelectCpuTest, DetLargeMatricesInThreads) {
  ExpectDetNearReference(DetCase(RandomMatrices(DType::kF64, {256, 256}, 230, 3.0)), 1e-9);
  ExpectDetNearReference(DetCase(RandomMatrices(DType::kF32, {300, 16, 16}, 231)), 1e-6);
  ExpectDetNearReference(DetCase(RandomMatrices(DType::kF64, {3, 128, 128}, 232, 1.0)), 1e-9);
}

TEST(SelectCpuTest, DetRefusesOtherDtypesAndShapes) {
  ExpectRefused(DetCase(I32({2, 2}, {1, 2, 3, 4})), "i32 X (f32, f64, f16 or bf16 expected)");
  ExpectRefused(DetCase(F32({2, 3}, {1, 2, 3, 4, 5, 6})), "is not [*, M, M]");
  ExpectRefused(DetCase(F32({3}, {1, 2, 3})), "is not [*, M, M]");
}

}  // namespace
}  // namespace chipfit::testing
