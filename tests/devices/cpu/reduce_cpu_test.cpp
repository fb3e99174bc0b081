// CPU Reduce* against the reference: axes as attribute and as input, keepdims, noop_with_empty_axes,
// reduced dims innermost (oneDNN) or not (own loop), nhwc inputs; each implementation; fp32
// within 1e-4 of max|ref|; refusals with their reasons.
#include <gtest/gtest.h>

#include <cstring>

#include "core/reference/conv_util.h"
#include "devices/cpu/ops/cpu_ops.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"
#include "tests/devices/cpu/kernel_layout_util.h"

namespace chipfit::testing {
namespace {

const std::vector<std::string> kOps = {"ReduceSum",  "ReduceMean", "ReduceMax", "ReduceMin",
                                       "ReduceProd", "ReduceL1",   "ReduceL2",  "ReduceSumSquare"};

struct ReduceSpec {
  Shape x;
  std::vector<int64_t> axes;  // empty: all (or none with noop)
  int64_t keepdims = 1;
  bool noop = false;
  bool one_block = true;  // the reduced dims are adjacent in a plain tensor
};

const std::vector<ReduceSpec> kSpecs = {
    {.x = {2, 16, 9, 11}, .axes = {2, 3}},               // spatial: innermost when plain
    {.x = {2, 16, 9, 11}, .axes = {1}, .keepdims = 0},   // channels: innermost when nhwc
    {.x = {2, 16, 9, 11}, .axes = {-2}, .keepdims = 0},  // nhwc output order would differ: plain
    {.x = {32, 99}, .axes = {0}},                        // strided
    {.x = {32, 99}, .axes = {1}, .keepdims = 0},         // rows
    {.x = {5, 7, 3}, .axes = {}, .keepdims = 0},         // everything
    {.x = {7, 1, 5}, .axes = {1}},                       // a dim of 1: L2 is |x|
    {.x = {4, 6, 5}, .axes = {}, .noop = true},          // identity (SumSquare squares)
    {.x = {3, 5, 7, 9}, .axes = {0, 2}, .one_block = false},
    {.x = {64, 130}, .axes = {0}},  // parallel own loop
};

KernelCase MakeReduce(const std::string& op, const ReduceSpec& s, uint64_t seed, Layout layout) {
  std::map<std::string, Attribute> attrs{{"keepdims", IntAttr(s.keepdims)}};
  if (s.noop) attrs["noop_with_empty_axes"] = IntAttr(1);
  KernelCase c{.node = MakeNode(op, s.axes.empty() ? 1 : 2, 1, attrs), .opset = 18};
  // Products of values near 1 stay far from overflow and underflow.
  const bool prod = op == "ReduceProd";
  c.inputs = {RandomF32(s.x, seed, prod ? 0.9f : -2.0f, prod ? 1.1f : 2.0f)};
  if (!s.axes.empty()) c.inputs.push_back(MakeTensor<int64_t>({static_cast<int64_t>(s.axes.size())}, s.axes));
  c.constant = {false, true};
  c.layouts = {s.x.size() == 4 ? layout : Layout::kPlain};
  return c;
}

void ExpectClose(KernelFactory factory, const KernelCase& c) {
  auto out = RunCpuKernel(factory, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  ASSERT_EQ(ref.size(), 1u);
  EXPECT_EQ((*out)[0].shape(), ref[0].shape());
  EXPECT_LE(MaxRelError((*out)[0], ref[0]), 1e-4);
}

TEST(ReduceCpuTest, EveryImplementationMatchesReference) {
  uint64_t seed = 7000;
  for (const std::string& op : kOps) {
    for (const ReduceSpec& s : kSpecs) {
      for (Layout layout : {Layout::kPlain, Layout::kChannelsLast}) {
        if (layout == Layout::kChannelsLast && s.x.size() != 4) continue;
        const KernelCase c = MakeReduce(op, s, ++seed, layout);
        SCOPED_TRACE(op + " " + ShapeToString(s.x) + " axes " + JoinInts(s.axes) + " keepdims " +
                     std::to_string(s.keepdims) + " " + std::string(LayoutName(layout)));
        // In nhwc order axes {0, 2} (N, H) of [3,5,7,9] are adjacent: one run of reduced dims.
        {
          // Reduced runs that are not adjacent take the odometer loop.
          SCOPED_TRACE("own loop");
          ExpectClose(cpu::CreateReduceOwnF32, c);
        }
        if (!s.one_block && layout == Layout::kPlain) {
          EXPECT_NE(RefusalOf(cpu::CreateReduceSmallF32, c).find("not adjacent"), std::string::npos);
        }
        // oneDNN 2.6 has jit reductions only for innermost reduced dims and not for the Lp norms;
        // whatever it refuses says why, and whatever it takes matches.
        auto onednn = RunCpuKernel(cpu::CreateReduceF32, c);
        if (onednn.ok()) {
          EXPECT_LE(MaxRelError((*onednn)[0], RunReference(c)[0]), 1e-4);
        } else {
          EXPECT_EQ(onednn.status().code(), StatusCode::kUnsupported);
          const std::string why = onednn.status().message();
          EXPECT_TRUE(why.find("reference reduction") != std::string::npos ||
                      why.find("nothing to reduce") != std::string::npos)
              << why;
        }
        if (NumElements(s.x) > 4096) {
          EXPECT_NE(RefusalOf(cpu::CreateReduceSmallF32, c).find("a oneDNN call is faster above"), std::string::npos);
        } else if (s.one_block || layout == Layout::kChannelsLast) {
          SCOPED_TRACE("small");
          ExpectClose(cpu::CreateReduceSmallF32, c);
        }
      }
    }
  }
}

// The common cases reach oneDNN's jit kernels: spatial means of plain tensors, channel sums of nhwc.
TEST(ReduceCpuTest, InnermostReductionsRunOnOnednn) {
  for (const std::string& op : std::vector<std::string>{"ReduceMean", "ReduceSum", "ReduceMax"}) {
    SCOPED_TRACE(op);
    ExpectClose(cpu::CreateReduceF32, MakeReduce(op, kSpecs[0], 1, Layout::kPlain));
    ExpectClose(cpu::CreateReduceF32, MakeReduce(op, kSpecs[1], 2, Layout::kChannelsLast));
  }
}

// A spatial mean of channels-last activations (squeeze-excitation) reads them in place and writes
// [N,C,1,1], whose bytes are the same in both orders.
TEST(ReduceCpuTest, ChannelsLastInputsAreReadInPlace) {
  auto layouts = LayoutsOf(cpu::CreateReduceOwnF32, MakeReduce("ReduceMean", kSpecs[0], 1, Layout::kChannelsLast));
  ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
  EXPECT_EQ(layouts->inputs[0], Layout::kChannelsLast);
  // Channels of nhwc without keepdims: [N,H,W] comes out plain.
  layouts = LayoutsOf(cpu::CreateReduceF32, MakeReduce("ReduceSum", kSpecs[1], 1, Layout::kChannelsLast));
  ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
  EXPECT_EQ(layouts->inputs[0], Layout::kChannelsLast);
  EXPECT_EQ(layouts->output, Layout::kPlain);
  // Reducing H alone without keepdims would list C after W in nhwc: that one is read plain.
  layouts = LayoutsOf(cpu::CreateReduceOwnF32, MakeReduce("ReduceMean", kSpecs[2], 1, Layout::kChannelsLast));
  ASSERT_TRUE(layouts.ok()) << layouts.status().ToString();
  EXPECT_EQ(layouts->inputs[0], Layout::kPlain);
  EXPECT_EQ(layouts->output, Layout::kPlain);
}

// Before opset 18 (13 for ReduceSum) the axes are an attribute.
TEST(ReduceCpuTest, AxesAsAttribute) {
  KernelCase c{.node = MakeNode("ReduceMean", 1, 1, {{"axes", IntsAttr({1})}, {"keepdims", IntAttr(0)}}), .opset = 13};
  c.inputs = {RandomF32({4, 33, 5}, 9)};
  ExpectClose(cpu::CreateReduceOwnF32, c);
  c.node = MakeNode("ReduceSum", 1, 1, {{"axes", IntsAttr({-1})}});
  c.opset = 11;
  ExpectClose(cpu::CreateReduceF32, c);
}

// int64 and int32 Sum / Min / Max / Prod (a detector's shape arithmetic) in the own integer pass,
// exactly as the reference: axes as attribute and as input, keepdims both ways, all axes, negative
// values (small enough that no product overflows, where the reference's doubles and wrapping differ).
TEST(ReduceCpuTest, IntegerReductionsMatchReferenceExactly) {
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;  // empty: all
    int64_t keepdims;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, {1}, 1}, {{2, 3, 4}, {0, 2}, 0}, {{5}, {}, 0}, {{3, 1, 2}, {-1}, 1}, {{4, 6}, {}, 1}};
  for (DType dtype : {DType::kI64, DType::kI32}) {
    for (const char* op : {"ReduceSum", "ReduceMin", "ReduceMax", "ReduceProd"}) {
      for (int64_t opset : {13, 18}) {
        for (const Case& k : cases) {
          const bool axes_input = opset >= 18 || std::string(op) == "ReduceSum";
          std::map<std::string, Attribute> attrs{{"keepdims", IntAttr(k.keepdims)}};
          if (!axes_input && !k.axes.empty()) attrs["axes"] = IntsAttr(k.axes);
          KernelCase c{.node = MakeNode(op, axes_input && !k.axes.empty() ? 2 : 1, 1, attrs), .opset = opset};
          Tensor x(dtype, k.shape);
          for (int64_t i = 0; i < x.numel(); ++i) {
            const int64_t v = (i * 7) % 5 - 2;
            if (dtype == DType::kI64) {
              x.data<int64_t>()[i] = v;
            } else {
              x.data<int32_t>()[i] = static_cast<int32_t>(v);
            }
          }
          c.inputs = {x};
          if (axes_input && !k.axes.empty()) {
            c.inputs.push_back(MakeTensor<int64_t>({static_cast<int64_t>(k.axes.size())}, k.axes));
            c.constant = {false, true};
          }
          SCOPED_TRACE(std::string(op) + " " + std::string(DTypeName(dtype)) + " opset " + std::to_string(opset) + " " +
                       ShapeToString(k.shape));
          auto out = RunCpuKernel(cpu::CreateReduceInt, c);
          ASSERT_TRUE(out.ok()) << out.status().ToString();
          const auto ref = RunReference(c);
          ASSERT_EQ((*out)[0].shape(), ref[0].shape());
          ASSERT_EQ((*out)[0].dtype(), ref[0].dtype());
          EXPECT_EQ(std::memcmp((*out)[0].raw_data(), ref[0].raw_data(), ref[0].nbytes()), 0);
        }
      }
    }
  }
  KernelCase mean{.node = MakeNode("ReduceMean", 1, 1, {}), .opset = 13};
  mean.inputs = {MakeTensor<int64_t>({3}, {1, 2, 3})};
  EXPECT_NE(RefusalOf(cpu::CreateReduceInt, mean).find("ReduceMean of integers"), std::string::npos);
}

// oneDNN needs the axes at compile time; the own loop plans when the node runs, for every op, for
// axes that change between runs, and for an empty input (the reduction's identity).
TEST(ReduceCpuTest, AxesComputedAtRunTimeArePlannedWhenTheNodeRuns) {
  KernelCase c = MakeReduce("ReduceMean", kSpecs[3], 1, Layout::kPlain);
  c.constant = {false, false};
  EXPECT_NE(RefusalOf(cpu::CreateReduceF32, c).find("axes computed at run time"), std::string::npos);
  uint64_t seed = 9000;
  for (const std::string& op : kOps) {
    for (const ReduceSpec& s : kSpecs) {
      if (s.axes.empty()) continue;
      KernelCase run_time = MakeReduce(op, s, ++seed, Layout::kPlain);
      run_time.constant = {false, false};
      SCOPED_TRACE(op + " " + ShapeToString(s.x) + " axes " + JoinInts(s.axes));
      ExpectClose(cpu::CreateReduceOwnF32, run_time);
    }
  }
  for (const char* op : {"ReduceSum", "ReduceMax", "ReduceProd"}) {
    KernelCase empty{.node = MakeNode(op, 2, 1, {{"keepdims", IntAttr(1)}}), .opset = 18};
    empty.inputs = {Tensor(DType::kF32, {2, 0, 4}), MakeTensor<int64_t>({1}, {1})};
    empty.constant = {false, false};
    SCOPED_TRACE(std::string(op) + " of an empty axis");
    ExpectClose(cpu::CreateReduceOwnF32, empty);
  }
}

}  // namespace
}  // namespace chipfit::testing
