// OpenCL Softmax/LogSoftmax, Layer/Instance/BatchNormalization and Reduce* against the reference on
// fp32 and fp16 storage: every axis (and the opset < 13 coercion), long rows (a work group each)
// and short or strided ones (a work item each), parameter broadcasts, axes as attribute and as
// input, keepdims, noop_with_empty_axes; refusals with their reasons.
#include <gtest/gtest.h>

#include "core/reference/conv_util.h"
#include "devices/opencl/ops/opencl_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/opencl/opencl_test_util.h"

namespace chipfit::testing {
namespace {

// fp16 storage: inputs and outputs rounded to 11 significant bits (NMSE ~1e-7 each) and float
// accumulation; 1e-5 (the ExpectMatchesReference default) unless a case says otherwise.

TEST(SoftmaxOpenCl, AxesMatchReference) {
  CHIPFIT_REQUIRE_OPENCL();
  struct Spec {
    Shape x;
    int64_t axis;
    int64_t opset;
  };
  // Long contiguous rows (work group), short rows, a middle and a first axis (strided rows), and
  // the opset 11 coercion to 2-D (rows of everything from the axis on).
  const std::vector<Spec> specs = {{{4, 1000}, -1, 13},   {{3, 5, 7}, -1, 13}, {{3, 5, 7}, 1, 13}, {{6, 4, 3}, 0, 13},
                                   {{2, 3, 4, 5}, 1, 11}, {{2, 3, 40}, 1, 11}, {{1, 97}, -1, 13},  {{5}, 0, 13}};
  uint64_t seed = 1;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (const Spec& s : specs) {
      SCOPED_TRACE(std::string(op) + " " + ShapeToString(s.x) + " axis " + std::to_string(s.axis) + " opset " +
                   std::to_string(s.opset));
      OpenClCase c{.node = MakeNode(op, 1, 1, {{"axis", IntAttr(s.axis)}}), .opset = s.opset};
      c.inputs = {RandomF32(s.x, seed++, -4.0f, 4.0f)};
      ExpectMatchesReference(opencl::CreateSoftmax, c);
    }
  }
}

TEST(LayerNormOpenCl, MatchesReference) {
  CHIPFIT_REQUIRE_OPENCL();
  struct Spec {
    Shape x;
    int64_t axis;
    Shape scale, bias;  // empty bias: omitted
  };
  const std::vector<Spec> specs = {
      {{2, 7, 384}, -1, {384}, {384}}, {{3, 5, 6}, 1, {5, 6}, {5, 6}}, {{4, 33}, -1, {33}, {}},
      {{2, 3, 8}, -1, {1}, {8}},       {{2, 3, 8}, 0, {3, 8}, {1}},    {{6, 16}, -1, {1, 16}, {16}},
  };
  uint64_t seed = 100;
  for (const Spec& s : specs) {
    SCOPED_TRACE(ShapeToString(s.x) + " axis " + std::to_string(s.axis));
    OpenClCase c{.node = MakeNode("LayerNormalization", s.bias.empty() ? 2 : 3, 1,
                                  {{"axis", IntAttr(s.axis)}, {"epsilon", FloatAttr(1e-3f)}}),
                 .opset = 17};
    // A mean far from 0 checks the two-pass variance.
    c.inputs = {RandomF32(s.x, seed++, 2.0f, 4.0f), RandomF32(s.scale, seed++, 0.5f, 1.5f)};
    if (!s.bias.empty()) c.inputs.push_back(RandomF32(s.bias, seed++));
    c.constant = {false, true, true};
    // Normalising amplifies the half rounding of x by 1/σ (σ ≈ 0.58 for values in [2, 4), mean 3):
    // relative error of (x − mean) up to 3/0.58·2^-11, NMSE ≈ 27·(2^-11)²/3 ≈ 2e-6; 1e-5 holds.
    ExpectMatchesReference(opencl::CreateLayerNorm, c);
  }
}

TEST(InstanceNormOpenCl, MatchesReference) {
  CHIPFIT_REQUIRE_OPENCL();
  uint64_t seed = 200;
  for (const Shape& x : std::vector<Shape>{{2, 3, 9, 11}, {1, 4, 64, 65}, {3, 2, 5}, {1, 2, 1, 1, 7}}) {
    SCOPED_TRACE(ShapeToString(x));
    OpenClCase c{.node = MakeNode("InstanceNormalization", 3, 1, {{"epsilon", FloatAttr(1e-4f)}})};
    c.inputs = {RandomF32(x, seed++, -1.0f, 3.0f), RandomF32({x[1]}, seed++, 0.5f, 1.5f), RandomF32({x[1]}, seed++)};
    c.constant = {false, true, true};
    ExpectMatchesReference(opencl::CreateInstanceNorm, c);
  }
}

TEST(BatchNormOpenCl, MatchesReference) {
  CHIPFIT_REQUIRE_OPENCL();
  uint64_t seed = 300;
  struct Spec {
    Shape x;
    int64_t opset;
    int64_t spatial;
  };
  // Per channel on rank 2, 3 and 4, and per activation (opset 7, spatial = 0).
  for (const Spec& s :
       std::vector<Spec>{{{2, 5, 7, 9}, 15, 1}, {{4, 6}, 15, 1}, {{2, 3, 11}, 15, 1}, {{2, 3, 4}, 7, 0}}) {
    SCOPED_TRACE(ShapeToString(s.x) + " opset " + std::to_string(s.opset));
    const int64_t params = s.spatial ? s.x[1] : Product(s.x, 1);
    const Shape p = s.spatial ? Shape{params} : Shape(s.x.begin() + 1, s.x.end());
    OpenClCase c{.node = MakeNode("BatchNormalization", 5, 1, {{"epsilon", FloatAttr(1e-3f)}}), .opset = s.opset};
    if (!s.spatial) c.node.attributes["spatial"] = IntAttr(0);
    c.inputs = {RandomF32(s.x, seed++, -2.0f, 2.0f), RandomF32(p, seed++, 0.5f, 1.5f), RandomF32(p, seed++),
                RandomF32(p, seed++), RandomF32(p, seed++, 0.2f, 2.0f)};
    c.constant = {false, true, true, true, true};
    ExpectMatchesReference(opencl::CreateBatchNorm, c);
  }
}

struct ReduceSpec {
  Shape x;
  std::vector<int64_t> axes;  // empty: all (or none with noop)
  int64_t keepdims = 1;
  bool noop = false;
};

// Reduced dims innermost (long: work groups), outermost (strided: work items), in the middle,
// alternating, everything, nothing (noop), a dim of 1, and few outputs of long strided slices.
const std::vector<ReduceSpec> kReduceSpecs = {
    {{2, 16, 9, 11}, {2, 3}}, {{2, 16, 9, 11}, {1}, 0}, {{32, 99}, {0}},
    {{32, 99}, {1}, 0},       {{5, 7, 3}, {}, 0},       {{4, 6, 5}, {}, 1, true},
    {{7, 1, 5}, {1}},         {{3, 5, 7, 9}, {0, 2}},   {{2, 3, 4, 5, 6}, {0, 2, 4}, 0},
    {{1000, 3}, {0}},         {{3, 700}, {-1}},         {{1}, {0}, 0},
};

TEST(ReduceOpenCl, MatchesReference) {
  CHIPFIT_REQUIRE_OPENCL();
  // Every spec for one op of each kind (sum-like, compare, two-pass); the others on a work-group,
  // a strided work-item and an alternating case (each (op, ranks) pair is a program build).
  const std::vector<std::string> full = {"ReduceSum", "ReduceMax", "ReduceLogSumExp"};
  const std::vector<std::string> some = {"ReduceMean", "ReduceMin",       "ReduceProd",  "ReduceL1",
                                         "ReduceL2",   "ReduceSumSquare", "ReduceLogSum"};
  std::vector<std::pair<std::string, const ReduceSpec*>> cases;
  for (const std::string& op : full) {
    for (const ReduceSpec& s : kReduceSpecs) cases.emplace_back(op, &s);
  }
  for (const std::string& op : some) {
    for (size_t i : {0, 2, 8, 9}) cases.emplace_back(op, &kReduceSpecs[i]);
  }
  uint64_t seed = 400;
  for (const auto& [op, spec] : cases) {
    const ReduceSpec& s = *spec;
    // Opset 18 takes the axes as an input; 13 as the attribute (except ReduceSum, an input from 13).
    for (int64_t opset : {13, 18}) {
      SCOPED_TRACE(op + " " + ShapeToString(s.x) + " axes " + JoinInts(s.axes) + " opset " + std::to_string(opset));
      if (s.noop && opset == 13 && op != "ReduceSum") continue;  // noop_with_empty_axes is opset 18
      const bool axes_input = opset >= (op == "ReduceSum" ? 13 : 18);
      std::map<std::string, Attribute> attrs{{"keepdims", IntAttr(s.keepdims)}};
      if (s.noop) attrs["noop_with_empty_axes"] = IntAttr(1);
      if (!axes_input && !s.axes.empty()) attrs["axes"] = IntsAttr(s.axes);
      const bool pass_axes = axes_input && !s.axes.empty();
      OpenClCase c{.node = MakeNode(op, pass_axes ? 2 : 1, 1, attrs), .opset = opset};
      // Products of values near 1 stay far from overflow and underflow; logs need positive sums.
      const bool prod = op == "ReduceProd", log_sum = op == "ReduceLogSum";
      c.inputs = {RandomF32(s.x, seed++, prod ? 0.9f : log_sum ? 0.1f : -2.0f, prod ? 1.1f : 2.0f)};
      if (pass_axes) c.inputs.push_back(MakeTensor<int64_t>({static_cast<int64_t>(s.axes.size())}, s.axes));
      c.constant = {false, true};
      // fp16: the input roundings (rms 2^-11·1.15/√3 ≈ 3e-4 for values in [-2, 2)) of a sum of
      // 1000 add up to √1000·3e-4 ≈ 0.01 against sums of rms √1000·1.15 ≈ 36: NMSE ~1e-7. A
      // product's relative errors add instead: NMSE ≈ count·(2^-11)²/3 ≈ 8e-5 for 1000 factors.
      const double nmse16 = prod ? 4e-4 : 1e-5;
      ExpectMatchesReference(opencl::CreateReduce, c, 1e-4, nmse16);
    }
  }
}

TEST(ReduceOpenCl, Refusals) {
  CHIPFIT_REQUIRE_OPENCL();
  auto context = TestContext(Precision::kFp32);
  ASSERT_TRUE(context.ok());
  const ValueInfo x{DType::kF32, {4, 5}};
  const ValueInfo axes{DType::kI64, {1}};
  const std::vector<ValueInfo> out = {{DType::kF32, {4, 1}}};
  const std::vector<const ValueInfo*> ptrs = {&x, &axes};
  const Node node = MakeNode("ReduceSum", 2);
  Status s = opencl::CreateReduce(KernelInit{node, ptrs, 18, Precision::kFp32, nullptr, context->get(), &out}).status();
  EXPECT_NE(s.message().find("axes computed at run time"), std::string::npos) << s.ToString();

  const ValueInfo ints{DType::kI32, {4, 5}};
  const std::vector<const ValueInfo*> int_ptrs = {&ints};
  s = opencl::CreateReduce(
          KernelInit{MakeNode("ReduceMax", 1), int_ptrs, 13, Precision::kFp32, nullptr, context->get(), &out})
          .status();
  EXPECT_NE(s.message().find("i32 input 0"), std::string::npos) << s.ToString();

  // LayerNormalization: the statistics outputs and a scale broadcast inside the row are refused.
  const ValueInfo lx{DType::kF32, {2, 3, 4}};
  const ValueInfo scale{DType::kF32, {3, 1}};
  const std::vector<ValueInfo> lout = {{DType::kF32, {2, 3, 4}}};
  const std::vector<const ValueInfo*> lptrs = {&lx, &scale};
  s = opencl::CreateLayerNorm(KernelInit{MakeNode("LayerNormalization", 2, 1, {{"axis", IntAttr(1)}}), lptrs, 17,
                                         Precision::kFp32, nullptr, context->get(), &lout})
          .status();
  EXPECT_NE(s.message().find("broadcasts within the normalised dims"), std::string::npos) << s.ToString();
  const ValueInfo full_scale{DType::kF32, {4}};
  const std::vector<const ValueInfo*> stats_ptrs = {&lx, &full_scale};
  s = opencl::CreateLayerNorm(KernelInit{MakeNode("LayerNormalization", 2, 3), stats_ptrs, 17, Precision::kFp32,
                                         nullptr, context->get(), &lout})
          .status();
  EXPECT_NE(s.message().find("Mean and InvStdDev"), std::string::npos) << s.ToString();
  const std::vector<const ValueInfo*> bn_ptrs = {&lx, &full_scale, &full_scale, &full_scale, &full_scale};
  s = opencl::CreateBatchNorm(KernelInit{MakeNode("BatchNormalization", 5, 1, {{"training_mode", IntAttr(1)}}), bn_ptrs,
                                         15, Precision::kFp32, nullptr, context->get(), &lout})
          .status();
  EXPECT_NE(s.message().find("training mode"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace chipfit::testing
