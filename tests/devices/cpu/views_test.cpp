// Shape-only nodes (Reshape, Flatten, Squeeze, Unsqueeze, Identity) on the CPU are views of their
// input's bytes: no kernel runs, and the buffer under a view lives as long as the view's readers,
// however long the chain of views and whatever the memory plan reuses in between.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "devices/target_compiler.h"
#include "tests/core/onnx_builder.h"
#include "tests/devices/cpu/graph_test_util.h"

namespace chipfit {
namespace {

using testing::AddNode;
using testing::AddTypedValue;

constexpr int kF32 = onnx::TensorProto_DataType_FLOAT;
constexpr const char* kView = "view (no copy)";

// x (f32 [4, 16]):
//   v = Flatten(Reshape(Relu(x), [8, 8]))     a chain of two views over Relu's buffer
//   c = Exp(Neg(x))                           two buffers made after Relu's last own reader
//   e = Add(v, Reshape(c, [8, 8]))
//   out = Unsqueeze(e, [0])                   a graph output: its own memory, not a view
//   s = Sigmoid(Squeeze(Reshape(x, [1, 64]))) a view of the graph input
//   kept = Identity(v)                        a graph output again
onnx::ModelProto ViewsModel() {
  onnx::ModelProto m = testing::NewModel("views", 13);
  auto* g = m.mutable_graph();
  AddTypedValue(g->mutable_input(), "x", kF32, {4, 16});
  testing::AddI64Init(g, "shape88", {8, 8});
  testing::AddI64Init(g, "shape164", {1, 64});
  testing::AddI64Init(g, "axis0", {0});
  AddNode(g, "Relu", {"x"}, {"a"}, "relu");
  AddNode(g, "Reshape", {"a", "shape88"}, {"r"}, "reshape_a");
  testing::SetIntAttr(AddNode(g, "Flatten", {"r"}, {"v"}, "flatten"), "axis", 1);
  AddNode(g, "Neg", {"x"}, {"b"}, "neg");
  AddNode(g, "Exp", {"b"}, {"c"}, "exp");
  AddNode(g, "Reshape", {"c", "shape88"}, {"d"}, "reshape_c");
  AddNode(g, "Add", {"v", "d"}, {"e"}, "add");
  AddNode(g, "Unsqueeze", {"e", "axis0"}, {"out"}, "unsqueeze");
  AddNode(g, "Reshape", {"x", "shape164"}, {"x1"}, "reshape_x");
  AddNode(g, "Squeeze", {"x1", "axis0"}, {"xs"}, "squeeze");
  AddNode(g, "Sigmoid", {"xs"}, {"s"}, "sigmoid");
  AddNode(g, "Identity", {"v"}, {"kept"}, "identity");
  for (const char* out : {"out", "s", "kept"}) AddTypedValue(g->mutable_output(), out, kF32, {}, false);
  return m;
}

TEST(ViewsTest, ShapeOnlyNodesAreViewsAndTheirBuffersOutliveTheirReaders) {
  const Graph graph = testing::ImportOrFail(ViewsModel());
  auto cpu = CompileForTarget(graph, Target{.kind = DeviceKind::kCpu, .precision = Precision::kFp32});
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  auto ref = CompileForTarget(graph, Target{});
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();

  std::map<std::string, std::string> implementation;
  for (const KernelInfo& k : (*cpu)->kernels()) implementation[k.name] = k.implementation;
  for (const char* view : {"reshape_a", "flatten", "reshape_c", "reshape_x", "squeeze"}) {
    EXPECT_EQ(implementation[view], kView) << view;
  }
  // Graph outputs are handed to the caller: they are never views of the arena.
  EXPECT_NE(implementation["unsqueeze"], kView);
  EXPECT_NE(implementation["identity"], kView);
  // The reference runs every node as written.
  for (const KernelInfo& k : (*ref)->kernels()) EXPECT_NE(k.implementation, kView) << k.name;

  for (int seed = 0; seed < 3; ++seed) {
    Tensor x(DType::kF32, {4, 16});
    for (int64_t i = 0; i < x.numel(); ++i) {
      x.data<float>()[i] = static_cast<float>((i * (5 + seed)) % 17) * 0.125f - 1.0f;
    }
    auto got = (*cpu)->Run({{"x", x}});
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    auto want = (*ref)->Run({{"x", x}});
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    ASSERT_EQ(got->size(), want->size());
    for (size_t o = 0; o < got->size(); ++o) {
      ASSERT_EQ((*got)[o].shape(), (*want)[o].shape()) << "output " << o;
      for (int64_t e = 0; e < (*got)[o].numel(); ++e) {
        ASSERT_NEAR((*got)[o].data<float>()[e], (*want)[o].data<float>()[e], 1e-5)
            << "seed " << seed << ", output " << o << "[" << e << "]";
      }
    }
    // The input is not written through its view.
    EXPECT_FLOAT_EQ(x.data<float>()[1], static_cast<float>((5 + seed) % 17) * 0.125f - 1.0f);
  }
}

}  // namespace
}  // namespace chipfit
