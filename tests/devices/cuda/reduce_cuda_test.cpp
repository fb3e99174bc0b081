// CUDA Softmax/LogSoftmax, Reduce*, Layer/Instance/BatchNormalization. The planning (rows of an
// outer × n × inner view, which reductions collapse to one run of axes, launch shapes) is tested
// everywhere; the kernels against the reference on fp32, fp16 and bf16 storage where a GPU is.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/reference/conv_util.h"
#include "devices/cuda/cuda_launch.h"
#include "devices/cuda/ops/cuda_ops.h"
#include "devices/cuda/ops/reduce_launch.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cuda/cuda_test_util.h"

namespace chipfit::testing {
namespace {

using cuda::RowView;

std::string ViewString(const RowView& v) {
  return std::to_string(v.outer) + "x" + std::to_string(v.n) + "x" + std::to_string(v.inner);
}

// ---- planning (no GPU)

TEST(SoftmaxCudaPlan, RowsAlongAxis) {
  EXPECT_EQ(ViewString(cuda::RowsAlong({2, 3, 4}, 2, false)), "6x4x1");
  EXPECT_EQ(ViewString(cuda::RowsAlong({2, 3, 4}, 1, false)), "2x3x4");
  EXPECT_EQ(ViewString(cuda::RowsAlong({2, 3, 4}, 0, false)), "1x2x12");
  // Before opset 13 the row is everything from the axis on.
  EXPECT_EQ(ViewString(cuda::RowsAlong({2, 3, 4, 5}, 1, true)), "2x60x1");
  EXPECT_EQ(ViewString(cuda::RowsAlong({2, 3, 4, 5}, 0, true)), "1x120x1");
  EXPECT_EQ(ViewString(cuda::RowsAlong({5}, 0, false)), "1x5x1");
  EXPECT_EQ(cuda::RowsAlong({2, 0, 4}, 1, false).rows(), 8);
}

TEST(ReduceCudaPlan, CollapsesOneRunOfAxes) {
  auto collapse = [](const Shape& x, std::vector<bool> reduced) {
    const std::optional<RowView> v = cuda::CollapseReduction(x, reduced);
    return v ? ViewString(*v) : std::string("refused");
  };
  EXPECT_EQ(collapse({2, 16, 9, 11}, {false, false, true, true}), "32x99x1");
  EXPECT_EQ(collapse({2, 16, 9, 11}, {false, true, false, false}), "2x16x99");
  EXPECT_EQ(collapse({32, 99}, {true, false}), "1x32x99");
  EXPECT_EQ(collapse({5, 7, 3}, {true, true, true}), "1x105x1");
  // noop_with_empty_axes: every output reduces one element.
  EXPECT_EQ(collapse({4, 6, 5}, {false, false, false}), "120x1x1");
  // Dims of 1 neither split a run nor count.
  EXPECT_EQ(collapse({3, 1, 5, 7}, {true, false, true, false}), "1x15x7");
  EXPECT_EQ(collapse({7, 1, 5}, {false, true, false}), "35x1x1");
  EXPECT_EQ(collapse({1, 4, 1}, {true, false, true}), "4x1x1");  // only dims of 1 reduced
  // Kept dims between reduced ones are refused.
  EXPECT_EQ(collapse({3, 5, 7, 9}, {true, false, true, false}), "refused");
  EXPECT_EQ(collapse({2, 3, 4, 5, 6}, {true, false, true, false, true}), "refused");
  EXPECT_EQ(collapse({2, 3, 4}, {true, false, true}), "refused");
}

TEST(ReduceCudaPlan, LaunchShapes) {
  cuda::GpuShape gpu;
  gpu.sm_count = 108;
  // Long contiguous rows: a block each, no wider than the row, wider for very long rows.
  cuda::RowLaunch l = cuda::PlanRowLaunch({4, 1000, 1}, gpu);
  EXPECT_TRUE(l.block_per_row);
  EXPECT_EQ(l.grid, 4u);
  EXPECT_EQ(l.block, 256u);
  l = cuda::PlanRowLaunch({3, 64, 1}, gpu);
  EXPECT_TRUE(l.block_per_row);
  EXPECT_EQ(l.block, 64u);
  l = cuda::PlanRowLaunch({2, 50000, 1}, gpu);
  EXPECT_TRUE(l.block_per_row);
  EXPECT_EQ(l.block, 512u);
  // More rows than a grid holds: the blocks stride over them.
  l = cuda::PlanRowLaunch({int64_t{1} << 32, 100, 1}, gpu);
  EXPECT_TRUE(l.block_per_row);
  EXPECT_EQ(l.grid, static_cast<uint32_t>(gpu.max_grid_x));
  // Short or strided rows: a thread each, whole warps.
  l = cuda::PlanRowLaunch({15, 7, 1}, gpu);
  EXPECT_FALSE(l.block_per_row);
  EXPECT_EQ(l.grid, 1u);
  EXPECT_EQ(l.block % 32, 0u);
  l = cuda::PlanRowLaunch({6, 4000, 3}, gpu);
  EXPECT_FALSE(l.block_per_row);
  EXPECT_EQ(l.grid, 1u);
  l = cuda::PlanRowLaunch({100000, 5, 7}, gpu);
  EXPECT_FALSE(l.block_per_row);
  EXPECT_GE(static_cast<int64_t>(l.grid) * l.block, 108 * 256);
  // Empty work still has a valid launch shape.
  l = cuda::PlanRowLaunch({0, 5, 1}, gpu);
  EXPECT_GE(l.grid, 1u);
  EXPECT_GE(l.block, 32u);
}

// ---- kernels against the reference (GPU)

TEST(SoftmaxCuda, AxesMatchReference) {
  CHIPFIT_REQUIRE_CUDA();
  struct Spec {
    Shape x;
    int64_t axis;
    int64_t opset;
  };
  // Long contiguous rows (a block each), a very long row, short rows, strided rows (middle and first
  // axis), and the opset 11 coercion to 2-D.
  const std::vector<Spec> specs = {{{4, 1000}, -1, 13}, {{2, 5000}, -1, 13},   {{3, 5, 7}, -1, 13}, {{3, 5, 7}, 1, 13},
                                   {{6, 4, 3}, 0, 13},  {{2, 3, 4, 5}, 1, 11}, {{2, 3, 40}, 1, 11}, {{1, 97}, -1, 13},
                                   {{5}, 0, 13},        {{2, 300, 5}, 1, 13}};
  uint64_t seed = 1;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (const Spec& s : specs) {
      SCOPED_TRACE(std::string(op) + " " + ShapeToString(s.x) + " axis " + std::to_string(s.axis) + " opset " +
                   std::to_string(s.opset));
      DeviceCase c{.node = MakeNode(op, 1, 1, {{"axis", IntAttr(s.axis)}}), .opset = s.opset};
      c.inputs = {RandomF32(s.x, seed++, -4.0f, 4.0f)};
      ExpectCudaMatchesReference(cuda::CreateSoftmax, c);
    }
  }
}

TEST(LayerNormCuda, MatchesReference) {
  CHIPFIT_REQUIRE_CUDA();
  struct Spec {
    Shape x;
    int64_t axis;
    Shape scale, bias;  // empty bias: omitted
  };
  const std::vector<Spec> specs = {
      {{2, 7, 384}, -1, {384}, {384}}, {{3, 5, 6}, 1, {5, 6}, {5, 6}}, {{4, 33}, -1, {33}, {}},
      {{2, 3, 8}, -1, {1}, {8}},       {{2, 3, 8}, 0, {3, 8}, {1}},    {{6, 16}, -1, {1, 16}, {16}},
      {{2, 5000}, -1, {5000}, {5000}},
  };
  uint64_t seed = 100;
  for (const Spec& s : specs) {
    SCOPED_TRACE(ShapeToString(s.x) + " axis " + std::to_string(s.axis));
    DeviceCase c{.node = MakeNode("LayerNormalization", s.bias.empty() ? 2 : 3, 1,
                                  {{"axis", IntAttr(s.axis)}, {"epsilon", FloatAttr(1e-3f)}}),
                 .opset = 17};
    // A mean far from 0 checks the two-pass variance; half rounding of x is amplified by 1/σ
    // (σ ≈ 0.58 for values in [2, 4)): NMSE ≈ 2e-6 on fp16, within 1e-5.
    c.inputs = {RandomF32(s.x, seed++, 2.0f, 4.0f), RandomF32(s.scale, seed++, 0.5f, 1.5f)};
    if (!s.bias.empty()) c.inputs.push_back(RandomF32(s.bias, seed++));
    c.constant = {false, true, true};
    ExpectCudaMatchesReference(cuda::CreateLayerNorm, c);
  }
}

TEST(InstanceNormCuda, MatchesReference) {
  CHIPFIT_REQUIRE_CUDA();
  uint64_t seed = 200;
  for (const Shape& x : std::vector<Shape>{{2, 3, 9, 11}, {1, 4, 64, 65}, {3, 2, 5}, {1, 2, 1, 1, 7}}) {
    SCOPED_TRACE(ShapeToString(x));
    DeviceCase c{.node = MakeNode("InstanceNormalization", 3, 1, {{"epsilon", FloatAttr(1e-4f)}})};
    c.inputs = {RandomF32(x, seed++, -1.0f, 3.0f), RandomF32({x[1]}, seed++, 0.5f, 1.5f), RandomF32({x[1]}, seed++)};
    c.constant = {false, true, true};
    ExpectCudaMatchesReference(cuda::CreateInstanceNorm, c);
  }
}

TEST(BatchNormCuda, MatchesReference) {
  CHIPFIT_REQUIRE_CUDA();
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
    DeviceCase c{.node = MakeNode("BatchNormalization", 5, 1, {{"epsilon", FloatAttr(1e-3f)}}), .opset = s.opset};
    if (!s.spatial) c.node.attributes["spatial"] = IntAttr(0);
    c.inputs = {RandomF32(s.x, seed++, -2.0f, 2.0f), RandomF32(p, seed++, 0.5f, 1.5f), RandomF32(p, seed++),
                RandomF32(p, seed++), RandomF32(p, seed++, 0.2f, 2.0f)};
    c.constant = {false, true, true, true, true};
    ExpectCudaMatchesReference(cuda::CreateBatchNorm, c);
  }
}

struct ReduceSpec {
  Shape x;
  std::vector<int64_t> axes;  // empty: all (or none with noop)
  int64_t keepdims = 1;
  bool noop = false;
};

// Reduced dims innermost (a block per output), outermost and in the middle (a thread per output,
// strided), everything, nothing (noop), a dim of 1, a run split only by a dim of 1, and few outputs
// of long strided rows.
const std::vector<ReduceSpec> kReduceSpecs = {
    {{2, 16, 9, 11}, {2, 3}}, {{2, 16, 9, 11}, {1}, 0}, {{32, 99}, {0}},  {{32, 99}, {1}, 0},
    {{5, 7, 3}, {}, 0},       {{4, 6, 5}, {}, 1, true}, {{7, 1, 5}, {1}}, {{3, 1, 5, 7}, {0, 2}},
    {{1000, 3}, {0}},         {{3, 700}, {-1}},         {{1}, {0}, 0},    {{2, 5000}, {1}},
};

TEST(ReduceCuda, MatchesReference) {
  CHIPFIT_REQUIRE_CUDA();
  const std::vector<std::string> ops = {"ReduceSum",    "ReduceMean",     "ReduceMax", "ReduceMin",
                                        "ReduceProd",   "ReduceL1",       "ReduceL2",  "ReduceSumSquare",
                                        "ReduceLogSum", "ReduceLogSumExp"};
  uint64_t seed = 400;
  for (const std::string& op : ops) {
    for (const ReduceSpec& s : kReduceSpecs) {
      // Opset 18 takes the axes as an input; 13 as the attribute (except ReduceSum, an input from 13).
      for (int64_t opset : {13, 18}) {
        SCOPED_TRACE(op + " " + ShapeToString(s.x) + " axes " + JoinInts(s.axes) + " opset " + std::to_string(opset));
        if (s.noop && opset == 13 && op != "ReduceSum") continue;  // noop_with_empty_axes is opset 18
        const bool axes_input = opset >= (op == "ReduceSum" ? 13 : 18);
        std::map<std::string, Attribute> attrs{{"keepdims", IntAttr(s.keepdims)}};
        if (s.noop) attrs["noop_with_empty_axes"] = IntAttr(1);
        if (!axes_input && !s.axes.empty()) attrs["axes"] = IntsAttr(s.axes);
        const bool pass_axes = axes_input && !s.axes.empty();
        DeviceCase c{.node = MakeNode(op, pass_axes ? 2 : 1, 1, attrs), .opset = opset};
        // Products of values near 1 stay far from overflow and underflow; logs need positive sums.
        const bool prod = op == "ReduceProd", log_sum = op == "ReduceLogSum";
        c.inputs = {RandomF32(s.x, seed++, prod ? 0.9f : log_sum ? 0.1f : -2.0f, prod ? 1.1f : 2.0f)};
        if (pass_axes) c.inputs.push_back(MakeTensor<int64_t>({static_cast<int64_t>(s.axes.size())}, s.axes));
        c.constant = {false, true};
        // fp16: a product's relative roundings add up (NMSE ≈ count·(2^-11)²/3 ≈ 4e-4 for 5000
        // factors, and 2 outputs make it vary); sums average them out.
        const double nmse16 = prod ? 5e-3 : 1e-5;
        ExpectCudaMatchesReference(cuda::CreateReduce, c, 1e-4, nmse16);
      }
    }
  }
}

TEST(ReduceCuda, Refusals) {
  CHIPFIT_REQUIRE_CUDA();
  auto context = CudaTestContext(Precision::kFp32);
  ASSERT_TRUE(context.ok()) << context.status().ToString();
  auto refusal = [&](KernelFactory factory, const Node& node, const std::vector<const ValueInfo*>& inputs,
                     int64_t opset, const std::vector<ValueInfo>& outputs) {
    auto created = factory(KernelInit{node, inputs, opset, Precision::kFp32, nullptr, context->get(), &outputs});
    EXPECT_FALSE(created.ok());
    EXPECT_EQ(created.status().code(), StatusCode::kUnsupported) << created.status().ToString();
    return created.status().message();
  };
  const ValueInfo x{DType::kF32, {4, 5}};
  const ValueInfo axes{DType::kI64, {1}};
  const std::vector<ValueInfo> out = {{DType::kF32, {4, 1}}};
  std::string m = refusal(cuda::CreateReduce, MakeNode("ReduceSum", 2), {&x, &axes}, 18, out);
  EXPECT_NE(m.find("axes computed at run time"), std::string::npos) << m;

  const ValueInfo ints{DType::kI32, {4, 5}};
  m = refusal(cuda::CreateReduce, MakeNode("ReduceMax", 1), {&ints}, 13, out);
  EXPECT_NE(m.find("i32 input 0"), std::string::npos) << m;

  const ValueInfo x4{DType::kF32, {3, 5, 7, 9}};
  m = refusal(cuda::CreateReduce, MakeNode("ReduceSum", 1, 1, {{"axes", IntsAttr({0, 2})}}), {&x4}, 11,
              {{DType::kF32, {1, 5, 1, 9}}});
  EXPECT_NE(m.find("kept dims between reduced ones"), std::string::npos) << m;

  // LayerNormalization: the statistics outputs and a scale broadcast inside the row are refused.
  const ValueInfo lx{DType::kF32, {2, 3, 4}};
  const ValueInfo scale{DType::kF32, {3, 1}};
  const std::vector<ValueInfo> lout = {{DType::kF32, {2, 3, 4}}};
  m = refusal(cuda::CreateLayerNorm, MakeNode("LayerNormalization", 2, 1, {{"axis", IntAttr(1)}}), {&lx, &scale}, 17,
              lout);
  EXPECT_NE(m.find("broadcasts to the normalised dims"), std::string::npos) << m;
  const ValueInfo full_scale{DType::kF32, {4}};
  m = refusal(cuda::CreateLayerNorm, MakeNode("LayerNormalization", 2, 3), {&lx, &full_scale}, 17, lout);
  EXPECT_NE(m.find("Mean and InvStdDev"), std::string::npos) << m;
  m = refusal(cuda::CreateBatchNorm, MakeNode("BatchNormalization", 5, 1, {{"training_mode", IntAttr(1)}}),
              {&lx, &full_scale, &full_scale, &full_scale, &full_scale}, 15, lout);
  EXPECT_NE(m.find("training mode"), std::string::npos) << m;
  // Mixed storage: one kernel instantiation reads every input.
  const ValueInfo half_scale{DType::kF16, {4}};
  m = refusal(cuda::CreateLayerNorm, MakeNode("LayerNormalization", 2), {&lx, &half_scale}, 17, lout);
  EXPECT_NE(m.find("stored as f16"), std::string::npos) << m;
  m = refusal(cuda::CreateInstanceNorm, MakeNode("InstanceNormalization", 3), {&lx, &full_scale, &full_scale}, 6, lout);
  EXPECT_NE(m.find("does not hold 3 values"), std::string::npos) << m;
}

}  // namespace
}  // namespace chipfit::testing
