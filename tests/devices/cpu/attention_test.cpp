// Multi-head attention as exporters write it (Reshape → Transpose(0, 2, 1, 3) per head, K as
// Transpose(0, 2, 3, 1), MatMul → scale → mask Add → Softmax → MatMul → Transpose → Reshape): on the
// CPU the head transposes and the scale become strides and an output scale of the two products
// (FoldTransposesIntoMatMul), no transpose is copied, and the outputs match the reference's on the
// graph as written, with padding masks of -inf, a causal mask and keys broadcast over the batch.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
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
constexpr int kI64 = onnx::TensorProto_DataType_INT64;
constexpr int64_t kBatch = 2, kLen = 5, kHeads = 3, kDim = 4, kEmbed = kHeads * kDim;

onnx::NodeProto* Transpose(onnx::GraphProto* g, const std::string& in, const std::string& out,
                           const std::vector<int64_t>& perm) {
  auto* node = AddNode(g, "Transpose", {in}, {out}, out);
  testing::AddIntsAttr(node, "perm", perm);
  return node;
}

// x [2, 5, 12] (queries and values), keys [kb, 5, 12] (kb = 2, or 1: keys shared by the batch).
// q = Reshape(x·Wq + bq) → Q; k = Reshape(keys·Wk) → K^T; v = Reshape(x·Wv) → V;
// y = Reshape(Transpose(Softmax(Q·K^T / 2 + mask) · V)). `causal`: the mask is a constant [1, 1, 5, 5]
// with -inf above the diagonal; else the graph input mask [2, 1, 1, 5] (0 or -inf per key).
onnx::ModelProto AttentionModel(bool causal, int64_t key_batch) {
  onnx::ModelProto m = testing::NewModel("attention", 13);
  auto* g = m.mutable_graph();
  AddTypedValue(g->mutable_input(), "x", kF32, {kBatch, kLen, kEmbed});
  AddTypedValue(g->mutable_input(), "keys", kF32, {key_batch, kLen, kEmbed});
  if (!causal) AddTypedValue(g->mutable_input(), "mask", kF32, {kBatch, 1, 1, kLen});
  auto weights = [&](const std::string& name, int salt) {
    testing::AddInitializer(g, name, {kEmbed, kEmbed}, [salt](int64_t i) {
      return 0.05 * static_cast<double>((i * (7 + salt) + salt) % 23) - 0.5;
    });
  };
  weights("wq", 1);
  weights("wk", 2);
  weights("wv", 3);
  testing::AddInitializer(g, "bq", {kEmbed}, [](int64_t i) { return 0.1 * static_cast<double>(i % 5) - 0.2; });
  testing::AddInitializer(g, "two", {}, [](int64_t) { return 2.0; });
  if (causal) {
    const float inf = std::numeric_limits<float>::infinity();
    testing::AddInitializer(g, "mask", {1, 1, kLen, kLen},
                            [inf](int64_t i) { return i % kLen > i / kLen ? -inf : 0.0f; });
  }
  testing::AddI64Init(g, "heads", {kBatch, kLen, kHeads, kDim});
  testing::AddI64Init(g, "key_heads", {key_batch, kLen, kHeads, kDim});
  testing::AddI64Init(g, "merged", {kBatch, kLen, kEmbed});
  AddNode(g, "MatMul", {"x", "wq"}, {"q0"}, "q_matmul");
  AddNode(g, "Add", {"q0", "bq"}, {"q1"}, "q_bias");
  AddNode(g, "Reshape", {"q1", "heads"}, {"q2"}, "q_reshape");
  Transpose(g, "q2", "q", {0, 2, 1, 3});
  AddNode(g, "MatMul", {"keys", "wk"}, {"k0"}, "k_matmul");
  AddNode(g, "Reshape", {"k0", "key_heads"}, {"k1"}, "k_reshape");
  Transpose(g, "k1", "kt", {0, 2, 3, 1});
  AddNode(g, "MatMul", {"x", "wv"}, {"v0"}, "v_matmul");
  AddNode(g, "Reshape", {"v0", "heads"}, {"v1"}, "v_reshape");
  Transpose(g, "v1", "v", {0, 2, 1, 3});
  AddNode(g, "MatMul", {"q", "kt"}, {"s0"}, "scores");
  AddNode(g, "Div", {"s0", "two"}, {"s1"}, "scale");
  AddNode(g, "Add", {"s1", "mask"}, {"s2"}, "mask_add");
  testing::SetIntAttr(AddNode(g, "Softmax", {"s2"}, {"p"}, "softmax"), "axis", -1);
  AddNode(g, "MatMul", {"p", "v"}, {"o0"}, "context");
  Transpose(g, "o0", "o1", {0, 2, 1, 3});
  AddNode(g, "Reshape", {"o1", "merged"}, {"y"}, "merge");
  AddTypedValue(g->mutable_output(), "y", kF32, {kBatch, kLen, kEmbed});
  return m;
}

Tensor Seeded(Shape shape, int seed) {
  Tensor t(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) {
    t.data<float>()[i] = static_cast<float>((i * (11 + seed) + 3 * seed) % 29) * 0.07f - 1.0f;
  }
  return t;
}

// Batch 0 sees every key, batch 1 the first three (the padding of a shorter sequence).
Tensor PaddingMask() {
  Tensor mask(DType::kF32, {kBatch, 1, 1, kLen});
  for (int64_t b = 0; b < kBatch; ++b) {
    for (int64_t j = 0; j < kLen; ++j) {
      mask.data<float>()[b * kLen + j] = b == 1 && j >= 3 ? -std::numeric_limits<float>::infinity() : 0.0f;
    }
  }
  return mask;
}

void ExpectClose(const Tensor& got, const Tensor& want, double tolerance, const std::string& context) {
  ASSERT_EQ(got.shape(), want.shape()) << context;
  for (int64_t i = 0; i < got.numel(); ++i) {
    ASSERT_TRUE(std::isfinite(got.data<float>()[i])) << context << " [" << i << "]";
    ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i], tolerance) << context << " [" << i << "]";
  }
}

struct Case {
  bool causal;
  int64_t key_batch;
  std::string name;
};

class AttentionTest : public ::testing::TestWithParam<Case> {};

TEST_P(AttentionTest, HeadTransposesAndScaleAreStridesAndOutputsMatchTheReference) {
  const Case& c = GetParam();
  const Graph graph = testing::ImportOrFail(AttentionModel(c.causal, c.key_batch));
  auto cpu = CompileForTarget(graph, Target{.kind = DeviceKind::kCpu, .precision = Precision::kFp32});
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  auto ref = CompileForTarget(graph, Target{});
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();

  // Every node runs on the CPU and no transpose is copied: the two products read and write through
  // strides, the scores with the 1/2 as their output scale.
  std::map<std::string, const KernelInfo*> kernels;
  for (const KernelInfo& k : (*cpu)->kernels()) {
    EXPECT_EQ(k.device, "cpu") << k.name << ": " << k.fallback_reason;
    EXPECT_NE(k.op_type, "Transpose") << k.name;
    kernels[k.name] = &k;
  }
  ASSERT_TRUE(kernels.contains("scores") && kernels.contains("context"));
  EXPECT_EQ(kernels["scores"]->op_type, "FusedMatMul");
  EXPECT_FALSE(kernels["scores"]->isa.empty()) << "oneDNN names the implementation that runs it";
  EXPECT_EQ(kernels["scores"]->onnx_nodes, (std::vector<std::string>{"scores", "q", "kt", "scale"}));
  EXPECT_EQ(kernels["context"]->onnx_nodes, (std::vector<std::string>{"context", "v", "o1"}));
  EXPECT_EQ(kernels["q_reshape"]->implementation, "view (no copy)");

  std::map<std::string, Tensor> inputs = {{"x", Seeded({kBatch, kLen, kEmbed}, 1)},
                                          {"keys", Seeded({c.key_batch, kLen, kEmbed}, 2)}};
  if (!c.causal) inputs["mask"] = PaddingMask();
  auto want = (*ref)->Run(inputs);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  auto got = (*cpu)->Run(inputs);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ExpectClose((*got)[0], (*want)[0], 1e-5, "cpu:fp32");

  // bf16 runs the same strided products on rounded inputs.
  auto bf16 = CompileForTarget(graph, Target{.kind = DeviceKind::kCpu, .precision = Precision::kBf16});
  if (!bf16.ok() && bf16.status().code() == StatusCode::kUnsupported) return;  // a CPU without AVX-512
  ASSERT_TRUE(bf16.ok()) << bf16.status().ToString();
  auto rounded = (*bf16)->Run(inputs);
  ASSERT_TRUE(rounded.ok()) << rounded.status().ToString();
  ExpectClose((*rounded)[0], (*want)[0], 3e-2, "cpu:bf16");
}

INSTANTIATE_TEST_SUITE_P(Masks, AttentionTest,
                         ::testing::Values(Case{false, kBatch, "PaddingMask"}, Case{true, kBatch, "CausalMask"},
                                           Case{true, 1, "KeysSharedByTheBatch"},
                                           Case{false, 1, "PaddingMaskKeysShared"}),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// ConvNeXt's channels-last Linear and its way back to NCHW: the permuted result's columns are not
// contiguous, which oneDNN writes only with its reference loop, so the CPU kernel writes the product
// row-major and reorders it into place, still one kernel on oneDNN.
TEST(AttentionFoldTest, APermutedResultOneDnnCannotWriteIsReorderedIntoPlace) {
  onnx::ModelProto m = testing::NewModel("channels_last_linear", 13);
  auto* g = m.mutable_graph();
  AddTypedValue(g->mutable_input(), "x", kF32, {1, 3, 4, 8});
  testing::AddInitializer(g, "w", {8, 6}, [](int64_t i) { return 0.1 * static_cast<double>((i * 5) % 9) - 0.4; });
  testing::AddInitializer(g, "b", {6}, [](int64_t i) { return 0.25 * static_cast<double>(i) - 0.5; });
  AddNode(g, "MatMul", {"x", "w"}, {"p"}, "linear");
  AddNode(g, "Add", {"p", "b"}, {"pb"}, "bias");
  Transpose(g, "pb", "y", {0, 3, 1, 2});
  AddTypedValue(g->mutable_output(), "y", kF32, {1, 6, 3, 4});
  const Graph graph = testing::ImportOrFail(m);
  auto cpu = CompileForTarget(graph, Target{.kind = DeviceKind::kCpu, .precision = Precision::kFp32});
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  ASSERT_EQ((*cpu)->kernels().size(), 1u);
  const KernelInfo& k = (*cpu)->kernels()[0];
  EXPECT_EQ(k.device, "cpu") << k.fallback_reason;
  EXPECT_EQ(k.onnx_nodes, (std::vector<std::string>{"linear", "bias", "y"}));
  auto ref = CompileForTarget(graph, Target{});
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  const std::map<std::string, Tensor> inputs = {{"x", Seeded({1, 3, 4, 8}, 3)}};
  auto got = (*cpu)->Run(inputs);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  auto want = (*ref)->Run(inputs);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  ExpectClose((*got)[0], (*want)[0], 1e-5, "cpu:fp32");
}

// An integer product with transposed operands: the CPU's oneDNN matmul takes float32 only, so the
// folded node runs on the reference's FusedMatMul, exactly as the graph as written.
TEST(AttentionFoldTest, IntegerProductsWithTransposesRunExactlyOnTheReference) {
  onnx::ModelProto m = testing::NewModel("int_product", 13);
  auto* g = m.mutable_graph();
  AddTypedValue(g->mutable_input(), "a", kI64, {2, 4, 3});
  AddTypedValue(g->mutable_input(), "b", kI64, {2, 5, 4});
  Transpose(g, "a", "at", {0, 2, 1});
  Transpose(g, "b", "bt", {0, 2, 1});
  AddNode(g, "MatMul", {"at", "bt"}, {"p"}, "product");
  Transpose(g, "p", "y", {2, 1, 0});
  AddTypedValue(g->mutable_output(), "y", kI64, {5, 3, 2});
  const Graph graph = testing::ImportOrFail(m);
  auto cpu = CompileForTarget(graph, Target{.kind = DeviceKind::kCpu, .precision = Precision::kFp32});
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  ASSERT_EQ((*cpu)->kernels().size(), 1u);
  EXPECT_EQ((*cpu)->kernels()[0].op_type, "FusedMatMul");
  auto ref = CompileForTarget(graph, Target{});
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  Tensor a(DType::kI64, {2, 4, 3});
  Tensor b(DType::kI64, {2, 5, 4});
  for (int64_t i = 0; i < a.numel(); ++i) a.data<int64_t>()[i] = (i * 7) % 11 - 5 + (int64_t{1} << 40);
  for (int64_t i = 0; i < b.numel(); ++i) b.data<int64_t>()[i] = (i * 5) % 13 - 6;
  auto got = (*cpu)->Run({{"a", a}, {"b", b}});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  auto want = (*ref)->Run({{"a", a}, {"b", b}});
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  ASSERT_EQ((*got)[0].shape(), (Shape{5, 3, 2}));
  for (int64_t i = 0; i < (*got)[0].numel(); ++i) {
    ASSERT_EQ((*got)[0].data<int64_t>()[i], (*want)[0].data<int64_t>()[i]) << i;
  }
}

}  // namespace
}  // namespace chipfit
