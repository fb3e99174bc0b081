// The CPU index and shape kernels (gather_cpu.cpp) against the reference, byte for byte: Gather,
// GatherElements, GatherND, Scatter/ScatterElements/ScatterND with every reduction, ArgMax/ArgMin,
// TopK, CumSum, Trilu, Expand, Tile, Split (every opset form), DepthToSpace/SpaceToDepth, OneHot,
// EyeLike, Range, ConstantOfShape and Shape; several dtypes, negative axes and indices, empty tensors,
// sizes large enough for the threaded paths, the reference's error for an index out of range, and
// the refusals of parameters known only at run time.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "devices/cpu/ops/kernel_groups.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"

namespace chipfit::testing {
namespace {

// The group's table alone: the kernels under test whatever the rest of the CPU table holds.
const KernelTable& IndexTable() {
  static const KernelTable table = [] {
    KernelTable t;
    cpu::AddIndexKernels(t);
    return t;
  }();
  return table;
}

KernelFactory Factory(const std::string& op) {
  const auto& impls = IndexTable().Find(op, "", DeviceKind::kCpu, Precision::kFp32);
  return impls.empty() ? nullptr : impls.front().create;
}

// Deterministic values of any dtype: small integers in [-range, range] (so ties occur) for every
// dtype, halved for floating types; unsigned types take them modulo their size, bool the parity.
Tensor Filled(DType dtype, const Shape& shape, uint64_t seed, int64_t range = 6) {
  Tensor t(dtype, shape);
  SplitMix64 rng(seed);
  const auto status = VisitDType(dtype, [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::nullptr_t>) {
      return Unsupported("dtype");
    } else {
      for (int64_t i = 0; i < t.numel(); ++i) {
        const auto v = static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(2 * range + 1)) - range;
        if constexpr (std::is_same_v<T, bool>) {
          t.data<T>()[i] = (v & 1) != 0;
        } else if constexpr (std::is_integral_v<T>) {
          t.data<T>()[i] = static_cast<T>(v);
        } else {
          t.data<T>()[i] = T(static_cast<float>(v) * 0.5f);
        }
      }
      return Status();
    }
  });
  EXPECT_TRUE(status.ok());
  return t;
}

// Index values in [-dim, dim) (negative ones included) as int32 or int64.
Tensor RandomIndices(DType dtype, const Shape& shape, int64_t dim, uint64_t seed) {
  Tensor t(dtype, shape);
  SplitMix64 rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const auto v = static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(2 * dim)) - dim;
    if (dtype == DType::kI32) {
      t.data<int32_t>()[i] = static_cast<int32_t>(v);
    } else {
      t.data<int64_t>()[i] = v;
    }
  }
  return t;
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

KernelCase Case(const std::string& op, size_t inputs, size_t outputs, Attrs attrs, int64_t opset = 18) {
  return KernelCase{.node = MakeNode(op, inputs, outputs, std::move(attrs)), .opset = opset};
}

// ---------------------------------------------------------------------------------------------
// Gather

TEST(GatherCpuTest, GatherEveryAxisNegativeIndicesAndDtypes) {
  for (DType dtype : {DType::kF32, DType::kI8, DType::kU16, DType::kF64, DType::kBool, DType::kF16}) {
    for (int64_t axis : {0, 1, 2, -1, -3}) {
      for (DType index : {DType::kI32, DType::kI64}) {
        SCOPED_TRACE(std::string(DTypeName(dtype)) + " axis " + std::to_string(axis));
        const Shape shape = {3, 4, 5};
        const int64_t dim = shape[static_cast<size_t>(axis < 0 ? axis + 3 : axis)];
        KernelCase c = Case("Gather", 2, 1, {{"axis", IntAttr(axis)}}, 13);
        c.inputs = {Filled(dtype, shape, 1), RandomIndices(index, {2, 3}, dim, 2)};
        ExpectSameAsReference(c);
      }
    }
  }
}

TEST(GatherCpuTest, GatherScalarAndEmptyIndicesAndEmptyData) {
  KernelCase c = Case("Gather", 2, 1, {{"axis", IntAttr(1)}}, 13);
  c.inputs = {Filled(DType::kF32, {3, 4, 5}, 3), I64({}, {-2})};
  ExpectSameAsReference(c);
  c.inputs = {Filled(DType::kF32, {3, 4, 5}, 3), I64({0}, {})};
  ExpectSameAsReference(c);
  c.inputs = {Filled(DType::kI64, {0, 4, 5}, 3), I32({2}, {3, -4})};
  ExpectSameAsReference(c);
}

TEST(GatherCpuTest, GatherLargeRunsThreaded) {
  KernelCase c = Case("Gather", 2, 1, {{"axis", IntAttr(0)}}, 13);
  c.inputs = {Filled(DType::kF32, {1000, 64}, 4), RandomIndices(DType::kI64, {37, 50}, 1000, 5)};
  ExpectSameAsReference(c);
  c.node.attributes["axis"] = IntAttr(-1);
  c.inputs = {Filled(DType::kU8, {300, 500}, 6), RandomIndices(DType::kI32, {1000}, 500, 7)};
  ExpectSameAsReference(c);
}

TEST(GatherCpuTest, GatherIndexOutOfRangeGivesTheReferenceError) {
  KernelCase c = Case("Gather", 2, 1, {{"axis", IntAttr(1)}}, 13);
  c.inputs = {Filled(DType::kF32, {3, 4}, 8), I64({5}, {0, -4, 4, 9, -5})};
  ExpectSameError(c);
  c.inputs = {Filled(DType::kF32, {3, 4}, 8), I32({3}, {1, -5, 2})};
  ExpectSameError(c);
  // Checked by several threads: still the first bad index in flat order is the one reported.
  Tensor many = RandomIndices(DType::kI64, {300000}, 4, 81);
  many.data<int64_t>()[290000] = -9;
  many.data<int64_t>()[150001] = 7;
  c.inputs = {Filled(DType::kF32, {3, 4}, 8), many};
  ExpectSameError(c);
}

TEST(GatherCpuTest, GatherRunsWithShapesKnownOnlyAtRunTime) {
  // The factory sees dims of -1 (a dynamic step): the geometry comes from the tensors.
  const Node node = MakeNode("Gather", 2, 1, {{"axis", IntAttr(-2)}});
  const ValueInfo data{DType::kF32, {-1, -1, 3}}, indices{DType::kI64, {-1}};
  std::vector<const ValueInfo*> infos = {&data, &indices};
  auto kernel = Factory("Gather")(KernelInit{node, infos, 13});
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  const Tensor x = Filled(DType::kF32, {2, 5, 3}, 9);
  const Tensor idx = I64({4}, {4, -1, 0, 2});
  const auto ref = RunReference(KernelCase{.node = node, .opset = 13, .inputs = {x, idx}});
  ASSERT_EQ(ref.size(), 1u);
  Tensor y(ref[0].dtype(), ref[0].shape());
  KernelContext ctx(node, 13, {&x, &idx}, {&y});
  ASSERT_TRUE((*kernel)->Run(ctx).ok());
  EXPECT_EQ(std::memcmp(y.raw_data(), ref[0].raw_data(), y.nbytes()), 0);
}

// ---------------------------------------------------------------------------------------------
// GatherElements

TEST(GatherCpuTest, GatherElementsIndicesSmallerThanDataOnEveryAxis) {
  for (DType dtype : {DType::kF32, DType::kI64, DType::kU8, DType::kBF16}) {
    for (int64_t axis : {0, 1, 2, -1}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " axis " + std::to_string(axis));
      const Shape data = {4, 5, 6};
      const int64_t dim = data[static_cast<size_t>(axis < 0 ? axis + 3 : axis)];
      Shape ind = {3, 2, 4};
      ind[static_cast<size_t>(axis < 0 ? axis + 3 : axis)] = 7;  // longer than data along the axis
      KernelCase c = Case("GatherElements", 2, 1, {{"axis", IntAttr(axis)}}, 13);
      c.inputs = {Filled(dtype, data, 10), RandomIndices(axis == 1 ? DType::kI32 : DType::kI64, ind, dim, 11)};
      ExpectSameAsReference(c);
    }
  }
}

TEST(GatherCpuTest, GatherElementsLargeAndEmpty) {
  KernelCase c = Case("GatherElements", 2, 1, {{"axis", IntAttr(0)}}, 13);
  c.inputs = {Filled(DType::kF32, {200, 500}, 12), RandomIndices(DType::kI64, {600, 500}, 200, 13)};
  ExpectSameAsReference(c);
  c.inputs = {Filled(DType::kF32, {200, 300}, 12), I64({0, 300}, {})};
  ExpectSameAsReference(c);
}

TEST(GatherCpuTest, GatherElementsIndexOutOfRangeGivesTheReferenceError) {
  KernelCase c = Case("GatherElements", 2, 1, {{"axis", IntAttr(-1)}}, 13);
  c.inputs = {Filled(DType::kF32, {2, 3}, 14), I64({2, 2}, {0, 1, 2, 3})};
  ExpectSameError(c);
}

// ---------------------------------------------------------------------------------------------
// GatherND

TEST(GatherCpuTest, GatherNDElementsSlicesAndBatchDims) {
  struct Spec {
    Shape data, indices;
    int64_t batch_dims;
  };
  for (const Spec& s : std::vector<Spec>{{{3, 4, 5}, {2, 3}, 0},
                                         {{3, 4, 5}, {6, 1}, 0},
                                         {{3, 4, 5}, {2, 2, 2}, 0},
                                         {{3, 4, 5}, {3, 2, 1}, 1},
                                         {{3, 4, 5}, {3, 4, 1}, 2},
                                         {{2, 3, 4, 5}, {2, 3, 2}, 1},
                                         {{3, 4}, {5, 0}, 0}}) {
    for (DType index : {DType::kI32, DType::kI64}) {
      SCOPED_TRACE(ShapeToString(s.data) + " " + ShapeToString(s.indices));
      KernelCase c = Case("GatherND", 2, 1, {{"batch_dims", IntAttr(s.batch_dims)}}, 13);
      // Index values within the smallest indexed dim (negative ones too).
      const int64_t smallest = s.indices.back() == 0 ? 1 : 3;
      c.inputs = {Filled(DType::kF32, s.data, 15), RandomIndices(index, s.indices, smallest, 16)};
      ExpectSameAsReference(c);
      c.inputs[0] = Filled(DType::kI16, s.data, 17);
      ExpectSameAsReference(c);
    }
  }
}

TEST(GatherCpuTest, GatherNDIndexOutOfRangeGivesTheReferenceError) {
  KernelCase c = Case("GatherND", 2, 1, {}, 13);
  c.inputs = {Filled(DType::kF32, {3, 4, 5}, 18), I64({2, 2}, {0, 1, 2, -5})};
  ExpectSameError(c);
}

// ---------------------------------------------------------------------------------------------
// ScatterElements, Scatter, ScatterND

TEST(GatherCpuTest, ScatterElementsEveryReductionWithDuplicates) {
  for (const char* reduction : {"none", "add", "mul", "max", "min"}) {
    for (DType dtype : {DType::kF32, DType::kI32, DType::kF16, DType::kBool, DType::kU8}) {
      for (int64_t axis : {0, -1, 1}) {
        SCOPED_TRACE(std::string(reduction) + " " + std::string(DTypeName(dtype)) + " axis " + std::to_string(axis));
        KernelCase c = Case("ScatterElements", 3, 1, {{"axis", IntAttr(axis)}, {"reduction", StringAttr(reduction)}});
        const Shape data = {4, 5, 3};
        Shape ind = {3, 4, 2};
        const auto a = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
        ind[a] = 6;  // more updates than slots along the axis: duplicates
        c.inputs = {Filled(dtype, data, 19), RandomIndices(DType::kI64, ind, data[a], 20), Filled(dtype, ind, 21)};
        ExpectSameAsReference(c);
      }
    }
  }
}

TEST(GatherCpuTest, ScatterElementsLargeAndTheOldScatterName) {
  KernelCase c = Case("ScatterElements", 3, 1, {{"axis", IntAttr(0)}, {"reduction", StringAttr("add")}});
  c.inputs = {Filled(DType::kF32, {100, 400}, 22), RandomIndices(DType::kI32, {700, 400}, 100, 23),
              Filled(DType::kF32, {700, 400}, 24)};
  ExpectSameAsReference(c);
  KernelCase old = Case("Scatter", 3, 1, {{"axis", IntAttr(1)}}, 10);
  old.inputs = {Filled(DType::kF32, {3, 5}, 25), RandomIndices(DType::kI64, {3, 2}, 5, 26),
                Filled(DType::kF32, {3, 2}, 27)};
  ExpectSameAsReference(old);
}

TEST(GatherCpuTest, ScatterElementsErrorsAndReductionsOfLaterOpsets) {
  KernelCase c = Case("ScatterElements", 3, 1, {{"axis", IntAttr(0)}});
  c.inputs = {Filled(DType::kF32, {3, 2}, 28), I64({1, 2}, {1, 3}), Filled(DType::kF32, {1, 2}, 29)};
  ExpectSameError(c);
  KernelCase early = Case("ScatterElements", 3, 1, {{"reduction", StringAttr("max")}}, 16);
  early.inputs = {Filled(DType::kF32, {3, 2}, 28), I64({1, 2}, {1, 2}), Filled(DType::kF32, {1, 2}, 29)};
  ExpectRefused(early, "reduction 'max' at opset 16");
}

TEST(GatherCpuTest, ScatterNDEveryReductionWithDuplicates) {
  struct Spec {
    Shape data, indices;
  };
  for (const char* reduction : {"none", "add", "mul", "max", "min"}) {
    for (const Spec& s : std::vector<Spec>{{{4, 5, 6}, {7, 1}}, {{4, 5, 6}, {9, 2}}, {{4, 5}, {3, 4, 2}}}) {
      for (DType dtype : {DType::kF32, DType::kI64, DType::kBF16}) {
        SCOPED_TRACE(std::string(reduction) + " " + ShapeToString(s.indices));
        KernelCase c = Case("ScatterND", 3, 1, {{"reduction", StringAttr(reduction)}});
        Shape updates(s.indices.begin(), s.indices.end() - 1);
        for (auto d = static_cast<size_t>(s.indices.back()); d < s.data.size(); ++d) updates.push_back(s.data[d]);
        c.inputs = {Filled(dtype, s.data, 30), RandomIndices(DType::kI64, s.indices, 4, 31),
                    Filled(dtype, updates, 32)};
        ExpectSameAsReference(c);
      }
    }
  }
}

TEST(GatherCpuTest, ScatterNDLargeSlicesAndTheReferenceError) {
  KernelCase c = Case("ScatterND", 3, 1, {{"reduction", StringAttr("mul")}});
  c.inputs = {Filled(DType::kF32, {6, 64, 1024}, 33), RandomIndices(DType::kI32, {10, 1}, 6, 34),
              Filled(DType::kF32, {10, 64, 1024}, 35)};
  ExpectSameAsReference(c);
  c.inputs = {Filled(DType::kF32, {6, 4}, 33), I64({2, 2}, {1, 1, 2, 4}), Filled(DType::kF32, {2}, 35)};
  ExpectSameError(c);
}

// ---------------------------------------------------------------------------------------------
// ArgMax, ArgMin

Tensor WithNans(Tensor t, int64_t every) {
  for (int64_t i = 0; i < t.numel(); i += every) t.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
  return t;
}

TEST(GatherCpuTest, ArgMaxArgMinKeepdimsLastIndexTiesAndDtypes) {
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (DType dtype : {DType::kF32, DType::kI64, DType::kU8, DType::kF16, DType::kBool}) {
      for (int64_t axis : {0, 1, -1}) {
        for (int64_t keepdims : {0, 1}) {
          for (int64_t last : {0, 1}) {
            SCOPED_TRACE(std::string(op) + " " + std::string(DTypeName(dtype)) + " axis " + std::to_string(axis));
            KernelCase c = Case(
                op, 1, 1,
                {{"axis", IntAttr(axis)}, {"keepdims", IntAttr(keepdims)}, {"select_last_index", IntAttr(last)}}, 13);
            c.inputs = {Filled(dtype, {5, 7, 6}, 36, 2)};  // few values: many ties
            ExpectSameAsReference(c);
          }
        }
      }
    }
  }
}

TEST(GatherCpuTest, ArgMaxNanAndLarge) {
  for (const char* op : {"ArgMax", "ArgMin"}) {
    KernelCase c = Case(op, 1, 1, {{"axis", IntAttr(1)}, {"select_last_index", IntAttr(1)}}, 13);
    c.inputs = {WithNans(Filled(DType::kF32, {4, 9, 5}, 37), 7)};
    ExpectSameAsReference(c);
    c.node.attributes["axis"] = IntAttr(0);
    c.inputs = {Filled(DType::kF32, {600, 500}, 38, 1000)};
    ExpectSameAsReference(c);
    c.node.attributes["axis"] = IntAttr(-1);
    ExpectSameAsReference(c);
  }
}

// ---------------------------------------------------------------------------------------------
// TopK

KernelCase TopKCase(const Tensor& x, int64_t k, int64_t axis, int64_t largest, int64_t opset = 11) {
  KernelCase c = Case("TopK", 2, 2, {{"axis", IntAttr(axis)}, {"largest", IntAttr(largest)}}, opset);
  c.inputs = {x, I64({1}, {k})};
  c.constant = {false, true};
  return c;
}

TEST(GatherCpuTest, TopKLargestSmallestTiesAndDtypes) {
  for (DType dtype : {DType::kF32, DType::kI32, DType::kF16, DType::kU8, DType::kF64}) {
    for (int64_t axis : {0, 1, -1}) {
      for (int64_t largest : {0, 1}) {
        for (int64_t k : {0, 1, 3, 5}) {
          SCOPED_TRACE(std::string(DTypeName(dtype)) + " axis " + std::to_string(axis) + " k " + std::to_string(k));
          ExpectSameAsReference(TopKCase(Filled(dtype, {5, 6, 7}, 39, 2), k, axis, largest));
        }
      }
    }
  }
}

TEST(GatherCpuTest, TopKNanWholeAxisEarlyOpsetsAndLarge) {
  for (int64_t largest : {0, 1}) {
    ExpectSameAsReference(TopKCase(WithNans(Filled(DType::kF32, {3, 11}, 40), 4), 6, 1, largest));
    ExpectSameAsReference(TopKCase(Filled(DType::kF32, {3, 11}, 41, 3), 11, -1, largest));
    ExpectSameAsReference(TopKCase(Filled(DType::kF32, {200, 500}, 42, 100), 20, 1, largest));
    ExpectSameAsReference(TopKCase(Filled(DType::kI64, {1000, 80}, 43, 100), 7, 0, largest));
  }
  ExpectSameAsReference(TopKCase(Filled(DType::kF32, {4, 9}, 44), 3, 1, 0, 10));  // largest only from 11
  KernelCase attr = Case("TopK", 1, 2, {{"axis", IntAttr(0)}, {"k", IntAttr(2)}}, 1);
  attr.inputs = {Filled(DType::kF32, {4, 9}, 45)};
  ExpectSameAsReference(attr);
}

TEST(GatherCpuTest, TopKWithKKnownOnlyAtRunTimeReadsItWhenItRuns) {
  KernelCase c = TopKCase(Filled(DType::kF32, {4, 9}, 46), 3, 1, 1);
  c.constant = {false, false};
  ExpectSameAsReference(c);
  c.inputs[1] = I64({1}, {9});
  ExpectSameAsReference(c);
}

// ---------------------------------------------------------------------------------------------
// CumSum

TEST(GatherCpuTest, CumSumExclusiveReverseAxesAndDtypes) {
  for (DType dtype : {DType::kF32, DType::kI32, DType::kU64, DType::kF16, DType::kF64, DType::kI8}) {
    for (int64_t axis : {0, 1, -1, -3}) {
      for (int64_t exclusive : {0, 1}) {
        for (int64_t reverse : {0, 1}) {
          for (bool constant_axis : {true, false}) {
            SCOPED_TRACE(std::string(DTypeName(dtype)) + " axis " + std::to_string(axis));
            KernelCase c = Case("CumSum", 2, 1, {{"exclusive", IntAttr(exclusive)}, {"reverse", IntAttr(reverse)}}, 14);
            c.inputs = {Filled(dtype, {4, 5, 6}, 47, 40), I64({}, {axis})};
            c.constant = {false, constant_axis};
            ExpectSameAsReference(c);
          }
        }
      }
    }
  }
}

TEST(GatherCpuTest, CumSumLargeAndEmpty) {
  KernelCase c = Case("CumSum", 2, 1, {}, 14);
  c.inputs = {Filled(DType::kF32, {600, 500}, 48, 1000), I32({}, {0})};
  c.constant = {false, true};
  ExpectSameAsReference(c);
  c.inputs[1] = I32({}, {1});
  ExpectSameAsReference(c);
  c.inputs = {Filled(DType::kF32, {0, 4}, 49), I32({}, {1})};
  ExpectSameAsReference(c);
}

// ---------------------------------------------------------------------------------------------
// Trilu

TEST(GatherCpuTest, TriluUpperLowerEveryDiagonal) {
  for (int64_t upper : {0, 1}) {
    for (int64_t k : std::vector<int64_t>{-100, -4, -1, 0, 1, 2, 6, 100, std::numeric_limits<int64_t>::max(),
                                          std::numeric_limits<int64_t>::min()}) {
      for (DType dtype : {DType::kF32, DType::kI64, DType::kU8}) {
        SCOPED_TRACE("upper " + std::to_string(upper) + " k " + std::to_string(k));
        KernelCase c = Case("Trilu", 2, 1, {{"upper", IntAttr(upper)}}, 14);
        c.inputs = {Filled(dtype, {2, 3, 4, 6}, 50), I64({}, {k})};
        ExpectSameAsReference(c);
      }
    }
    KernelCase no_k = Case("Trilu", 1, 1, {{"upper", IntAttr(upper)}}, 14);
    no_k.inputs = {Filled(DType::kF32, {7, 5}, 51)};
    ExpectSameAsReference(no_k);
    no_k.inputs = {Filled(DType::kF32, {300, 512}, 52)};
    ExpectSameAsReference(no_k);
    no_k.inputs = {Filled(DType::kF32, {3, 0, 5}, 53)};
    ExpectSameAsReference(no_k);
  }
}

// ---------------------------------------------------------------------------------------------
// Expand, Tile

KernelCase ExpandCase(const Tensor& x, std::vector<int64_t> shape) {
  KernelCase c = Case("Expand", 2, 1, {}, 13);
  c.inputs = {x, I64({static_cast<int64_t>(shape.size())}, shape)};
  c.constant = {false, true};
  return c;
}

TEST(GatherCpuTest, ExpandBroadcastsEveryWay) {
  for (DType dtype : {DType::kF32, DType::kI8, DType::kF64, DType::kBool}) {
    ExpectSameAsReference(ExpandCase(Filled(dtype, {3, 1}, 54), {2, 3, 4}));
    ExpectSameAsReference(ExpandCase(Filled(dtype, {1, 4, 1, 5}, 55), {3, 1, 6, 1}));
    ExpectSameAsReference(ExpandCase(Filled(dtype, {2, 3}, 56), {1, 1}));  // nothing grows
    ExpectSameAsReference(ExpandCase(Filled(dtype, {1}, 57), {4, 2}));
    ExpectSameAsReference(ExpandCase(Filled(dtype, {}, 58), {3}));
    ExpectSameAsReference(ExpandCase(Filled(dtype, {3, 1}, 59), {0, 3, 4}));
    ExpectSameAsReference(ExpandCase(Filled(dtype, {64, 1, 32}, 60), {64, 100, 32}));
  }
}

TEST(GatherCpuTest, ExpandWithShapeKnownOnlyAtRunTime) {
  KernelCase c = ExpandCase(Filled(DType::kF32, {3, 1}, 61), {2, 3, 4});
  c.constant = {false, false};
  ExpectSameAsReference(c);
}

KernelCase TileCase(const Tensor& x, std::vector<int64_t> repeats) {
  KernelCase c = Case("Tile", 2, 1, {}, 13);
  c.inputs = {x, I64({static_cast<int64_t>(repeats.size())}, repeats)};
  c.constant = {false, true};
  return c;
}

TEST(GatherCpuTest, TileRepeatsOfOneZeroAndMore) {
  for (DType dtype : {DType::kF32, DType::kI16, DType::kU64, DType::kBool}) {
    ExpectSameAsReference(TileCase(Filled(dtype, {2, 3, 4}, 62), {1, 1, 1}));
    ExpectSameAsReference(TileCase(Filled(dtype, {2, 3, 4}, 63), {2, 1, 3}));
    ExpectSameAsReference(TileCase(Filled(dtype, {2, 3, 4}, 64), {1, 0, 3}));
    ExpectSameAsReference(TileCase(Filled(dtype, {1, 3}, 65), {4, 5}));
    ExpectSameAsReference(TileCase(Filled(dtype, {5}, 66), {7}));
    ExpectSameAsReference(TileCase(Filled(dtype, {64, 128}, 67), {3, 4}));
  }
}

TEST(GatherCpuTest, TileWithRepeatsKnownOnlyAtRunTime) {
  KernelCase c = TileCase(Filled(DType::kF32, {2, 3}, 68), {2, 3});
  c.constant = {false, false};
  ExpectSameAsReference(c);
  c.inputs[1] = I64({2}, {0, 1});
  ExpectSameAsReference(c);
}

// ---------------------------------------------------------------------------------------------
// Split

TEST(GatherCpuTest, SplitEveryOpsetForm) {
  for (DType dtype : {DType::kF32, DType::kI64, DType::kU8}) {
    const Tensor x = Filled(dtype, {6, 7, 4}, 69);
    // Opset 11: sizes as attribute, or equal parts.
    KernelCase attr = Case("Split", 1, 3, {{"axis", IntAttr(1)}, {"split", IntsAttr({2, 0, 5})}}, 11);
    attr.inputs = {x};
    ExpectSameAsReference(attr);
    KernelCase equal = Case("Split", 1, 3, {{"axis", IntAttr(-3)}}, 11);
    equal.inputs = {x};
    ExpectSameAsReference(equal);
    // Opset 13: sizes as a constant input.
    KernelCase input = Case("Split", 2, 2, {{"axis", IntAttr(-1)}}, 13);
    input.inputs = {x, I64({2}, {1, 3})};
    input.constant = {false, true};
    ExpectSameAsReference(input);
    // Opset 18: num_outputs, the last part smaller.
    KernelCase chunks = Case("Split", 1, 3, {{"axis", IntAttr(1)}, {"num_outputs", IntAttr(3)}}, 18);
    chunks.inputs = {x};
    ExpectSameAsReference(chunks);
    KernelCase one = Case("Split", 1, 1, {{"axis", IntAttr(0)}}, 18);
    one.inputs = {x};
    ExpectSameAsReference(one);
  }
  KernelCase large = Case("Split", 1, 2, {{"axis", IntAttr(1)}}, 13);
  large.inputs = {Filled(DType::kF32, {256, 512}, 70)};
  ExpectSameAsReference(large);
}

TEST(GatherCpuTest, SplitWithSizesKnownOnlyAtRunTime) {
  KernelCase c = Case("Split", 2, 2, {{"axis", IntAttr(0)}}, 13);
  c.inputs = {Filled(DType::kF32, {6, 2}, 71), I64({2}, {2, 4})};
  c.constant = {false, false};
  ExpectSameAsReference(c);
  c.inputs[1] = I64({2}, {6, 0});
  ExpectSameAsReference(c);
}

// ---------------------------------------------------------------------------------------------
// DepthToSpace, SpaceToDepth

TEST(GatherCpuTest, DepthToSpaceBothModesAndSpaceToDepth) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kI64}) {
    for (const char* mode : {"DCR", "CRD"}) {
      for (int64_t b : {1, 2, 3}) {
        SCOPED_TRACE(std::string(mode) + " blocksize " + std::to_string(b));
        KernelCase c = Case("DepthToSpace", 1, 1, {{"blocksize", IntAttr(b)}, {"mode", StringAttr(mode)}}, 13);
        c.inputs = {Filled(dtype, {2, 2 * b * b, 3, 4}, 72)};
        ExpectSameAsReference(c);
      }
    }
    for (int64_t b : {1, 2, 3}) {
      KernelCase c = Case("SpaceToDepth", 1, 1, {{"blocksize", IntAttr(b)}}, 13);
      c.inputs = {Filled(dtype, {2, 3, 2 * b, 4 * b}, 73)};
      ExpectSameAsReference(c);
    }
  }
  KernelCase large = Case("DepthToSpace", 1, 1, {{"blocksize", IntAttr(2)}}, 13);
  large.inputs = {Filled(DType::kF32, {2, 64, 32, 32}, 74)};
  ExpectSameAsReference(large);
  KernelCase back = Case("SpaceToDepth", 1, 1, {{"blocksize", IntAttr(4)}}, 13);
  back.inputs = {Filled(DType::kF32, {2, 8, 64, 64}, 75)};
  ExpectSameAsReference(back);
}

// ---------------------------------------------------------------------------------------------
// OneHot, EyeLike, Range, ConstantOfShape, Shape

TEST(GatherCpuTest, OneHotAxesNegativeAndOutOfRangeIndices) {
  for (int64_t axis : {-1, 0, 1, -2}) {
    KernelCase c = Case("OneHot", 3, 1, {{"axis", IntAttr(axis)}}, 11);
    c.inputs = {I64({2, 3}, {0, -1, 4, 5, -6, -7}), F32({}, {5.0f}), I64({2}, {-3, 8})};
    c.constant = {false, true, false};
    ExpectSameAsReference(c);
    c.inputs = {F32({4}, {1.7f, -2.2f, 3.0f, 9.0f}), I32({1}, {4}), F32({2}, {0.25f, 1.5f})};
    ExpectSameAsReference(c);
  }
  KernelCase large = Case("OneHot", 3, 1, {}, 11);
  large.inputs = {RandomIndices(DType::kI32, {100, 50}, 30, 76), I64({}, {30}), F32({2}, {0.0f, 1.0f})};
  large.constant = {false, true, false};
  ExpectSameAsReference(large);
}

TEST(GatherCpuTest, OneHotWithDepthKnownOnlyAtRunTime) {
  KernelCase c = Case("OneHot", 3, 1, {}, 11);
  c.inputs = {I64({2}, {0, 1}), I64({}, {3}), F32({2}, {0.0f, 1.0f})};
  ExpectSameAsReference(c);
  c.inputs[1] = I64({}, {7});
  ExpectSameAsReference(c);
}

// NonZero: row-major coordinates for every dtype, scalars (rank 1), none and all non-zero, and a
// large input counted in parallel chunks; handed no output, it sizes its own.
TEST(GatherCpuTest, NonZeroCoordinatesInRowMajorOrder) {
  auto nonzero = [](Tensor x) {
    KernelCase c = Case("NonZero", 1, 1, {}, 13);
    c.inputs = {std::move(x)};
    return c;
  };
  for (DType dtype : {DType::kF32, DType::kI64, DType::kU8, DType::kBool, DType::kF16}) {
    ExpectSameAsReference(nonzero(Filled(dtype, {3, 4, 5}, 90, 1)));
    ExpectSameAsReference(nonzero(Filled(dtype, {7}, 91, 1)));
    ExpectSameAsReference(nonzero(Filled(dtype, {}, 92, 1)));
  }
  ExpectSameAsReference(nonzero(Tensor(DType::kF32, {2, 0, 3})));
  ExpectSameAsReference(nonzero(Filled(DType::kF32, {600, 700}, 93, 1)));
  const KernelCase c = nonzero(Filled(DType::kI32, {40, 50}, 94, 2));
  std::vector<ValueInfo> infos = {{DType::kI32, {40, 50}, nullptr}};
  const std::vector<const ValueInfo*> ptrs = {&infos[0]};
  auto kernel = Factory("NonZero")(KernelInit{c.node, ptrs, c.opset});
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  EXPECT_TRUE((*kernel)->AllocatesOutputs());
  Tensor out;
  KernelContext ctx(c.node, c.opset, {&c.inputs[0]}, {&out});
  ASSERT_TRUE((*kernel)->Run(ctx).ok());
  const auto ref = RunReference(c);
  ASSERT_EQ(out.shape(), ref[0].shape());
  for (int64_t i = 0; i < out.numel(); ++i) EXPECT_EQ(out.data<int64_t>()[i], ref[0].data<int64_t>()[i]);
}

TEST(GatherCpuTest, EyeLikeDiagonalsAndDtypes) {
  for (int64_t k : std::vector<int64_t>{0, 1, -2, 5, -100, std::numeric_limits<int64_t>::min()}) {
    KernelCase c = Case("EyeLike", 1, 1, {{"k", IntAttr(k)}}, 9);
    c.inputs = {Filled(DType::kI32, {4, 6}, 77)};
    ExpectSameAsReference(c);
    c.node.attributes["dtype"] = IntAttr(10);  // float16
    ExpectSameAsReference(c);
    c.node.attributes["dtype"] = IntAttr(9);  // bool
    ExpectSameAsReference(c);
  }
  KernelCase large = Case("EyeLike", 1, 1, {}, 9);
  large.inputs = {Filled(DType::kF32, {500, 300}, 78)};
  ExpectSameAsReference(large);
}

TEST(GatherCpuTest, RangeOfConstantsAndOfRunTimeBounds) {
  KernelCase c = Case("Range", 3, 1, {}, 11);
  c.inputs = {I32({}, {10}), I32({}, {-7}), I32({}, {-3})};
  c.constant = {true, true, true};
  ExpectSameAsReference(c);
  c.inputs = {F32({}, {0.5f}), F32({}, {250000.0f}), F32({}, {0.75f})};
  ExpectSameAsReference(c);
  c.inputs = {I64({}, {5}), I64({}, {5}), I64({}, {1})};  // empty
  ExpectSameAsReference(c);
  c.constant = {true, false, true};
  ExpectSameAsReference(c);
  c.constant = {false, false, false};
  c.inputs = {F32({}, {-2.0f}), F32({}, {3.5f}), F32({}, {0.5f})};
  ExpectSameAsReference(c);
  c.inputs = {I64({}, {1}), I64({}, {2}), I32({}, {1})};  // mixed dtypes: the reference's error
  ExpectRefused(c, "not scalars of one numeric dtype");
}

TEST(GatherCpuTest, ConstantOfShapeValuesAndARunTimeShape) {
  KernelCase c = Case("ConstantOfShape", 1, 1, {}, 21);
  c.inputs = {I64({3}, {2, 3, 4})};
  c.constant = {true};
  ExpectSameAsReference(c);
  Attribute value;
  value.kind = Attribute::Kind::kTensor;
  value.tensor = std::make_shared<const Tensor>(I64({1}, {-42}));
  c.node.attributes["value"] = value;
  ExpectSameAsReference(c);
  c.inputs = {I64({2}, {300, 0})};
  ExpectSameAsReference(c);
  c.inputs = {I64({2}, {500, 300})};
  ExpectSameAsReference(c);
  c.constant = {false};
  ExpectSameAsReference(c);
}

TEST(GatherCpuTest, ShapeWithStartAndEnd) {
  const Tensor x = Filled(DType::kF32, {2, 3, 4, 5}, 79);
  for (int64_t opset : {13, 15}) {
    for (auto [start, end] : std::vector<std::pair<int64_t, int64_t>>{{0, 4}, {1, 3}, {-2, 100}, {3, 1}, {-9, -1}}) {
      KernelCase c = Case("Shape", 1, 1, {{"start", IntAttr(start)}, {"end", IntAttr(end)}}, opset);
      c.inputs = {x};
      ExpectSameAsReference(c);
    }
    KernelCase only_start = Case("Shape", 1, 1, {{"start", IntAttr(-1)}}, opset);
    only_start.inputs = {x};
    ExpectSameAsReference(only_start);
  }
  KernelCase scalar = Case("Shape", 1, 1, {}, 15);
  scalar.inputs = {Filled(DType::kU8, {}, 80)};
  ExpectSameAsReference(scalar);
}

}  // namespace
}  // namespace chipfit::testing
