// Nodes whose shapes wait for run-time values (Range of a size given as an input, TopK of a run-time K,
// Slice of run-time starts) and the nodes after them: the CPU device runs them all with its own
// kernels, and the outputs match the reference's for every size the model is run with.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/runtime/rank_rules.h"
#include "core/tensor/metrics.h"
#include "devices/target_compiler.h"
#include "tests/core/onnx_builder.h"
#include "tests/devices/cpu/graph_test_util.h"

namespace chipfit {
namespace {

using testing::AddNode;
using testing::AddTypedValue;

constexpr int kI64 = onnx::TensorProto_DataType_INT64;
constexpr int kF32 = onnx::TensorProto_DataType_FLOAT;

// n (i64 scalar), k (i64 [1]), x (f32 [2, 12]):
//   t = Cos(Cast(Range(0, n, 1)) · 0.5), top = TopK(x, k), s = Clip(Slice(x, [k], [12], [1]), lo, hi)
onnx::ModelProto RunTimeShapedModel() {
  onnx::ModelProto m = testing::NewModel("run_time_shapes", 13);
  auto* g = m.mutable_graph();
  AddTypedValue(g->mutable_input(), "n", kI64, {});
  AddTypedValue(g->mutable_input(), "k", kI64, {1});
  AddTypedValue(g->mutable_input(), "x", kF32, {2, 12});
  AddTypedValue(g->mutable_input(), "lo", kF32, {});
  testing::AddScalarInit(g, "zero", kI64, 0);
  testing::AddScalarInit(g, "one", kI64, 1);
  testing::AddInitializer(g, "half", {}, [](int64_t) { return 0.5; });
  testing::AddInitializer(g, "hi", {}, [](int64_t) { return 0.25; });
  auto* ends = g->add_initializer();
  ends->set_name("ends");
  ends->set_data_type(kI64);
  ends->add_dims(1);
  ends->add_int64_data(12);
  auto* axes = g->add_initializer();
  axes->CopyFrom(*ends);
  axes->set_name("axes");
  axes->set_int64_data(0, 1);
  AddNode(g, "Range", {"zero", "n", "one"}, {"r"}, "range");
  testing::SetIntAttr(AddNode(g, "Cast", {"r"}, {"rf"}, "cast"), "to", kF32);
  AddNode(g, "Mul", {"rf", "half"}, {"m"}, "mul");
  AddNode(g, "Cos", {"m"}, {"t"}, "cos");
  AddNode(g, "TopK", {"x", "k"}, {"top", "top_i"}, "topk");
  AddNode(g, "Slice", {"x", "k", "ends", "axes"}, {"s0"}, "slice");
  AddNode(g, "Clip", {"s0", "lo", "hi"}, {"s"}, "clip");
  for (const char* out : {"t", "top", "s"}) AddTypedValue(g->mutable_output(), out, kF32, {}, false);
  AddTypedValue(g->mutable_output(), "top_i", kI64, {}, false);
  return m;
}

// The CPU's outputs against the reference's: count, shapes, dtypes and values within `tolerance`.
void ExpectSameOutputs(const std::vector<Tensor>& got, const std::vector<Tensor>& want, double tolerance,
                       const std::string& context) {
  SCOPED_TRACE(context);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].shape(), want[i].shape()) << "output " << i;
    ASSERT_EQ(got[i].dtype(), want[i].dtype()) << "output " << i;
    for (int64_t e = 0; e < got[i].numel(); ++e) {
      ASSERT_NEAR(got[i].GetAsDouble(e), want[i].GetAsDouble(e), tolerance) << "output " << i << "[" << e << "]";
    }
  }
}

Tensor Scalar(int64_t v) {
  Tensor t(DType::kI64, {});
  t.data<int64_t>()[0] = v;
  return t;
}

TEST(RunTimeShapesTest, NodesAfterRunTimeShapesGetCpuKernels) {
  const Graph graph = testing::ImportOrFail(RunTimeShapedModel());
  auto cpu = CompileForTarget(graph, Target{.kind = DeviceKind::kCpu, .precision = Precision::kFp32});
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  auto ref = CompileForTarget(graph, Target{});
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  for (const KernelInfo& k : (*cpu)->kernels()) {
    EXPECT_EQ(k.device, "cpu") << k.name << " (" << k.op_type << "): " << k.fallback_reason;
  }
  Tensor x(DType::kF32, {2, 12});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>((i * 5) % 11) * 0.1f - 0.4f;
  // The same compiled model, run with sizes that change from run to run.
  for (int64_t n : {5, 1, 40, 0}) {
    Tensor k(DType::kI64, {1});
    k.data<int64_t>()[0] = n % 12;
    Tensor lo(DType::kF32, {});
    lo.data<float>()[0] = -0.1f * static_cast<float>(n % 4);
    const std::map<std::string, Tensor> inputs = {{"n", Scalar(n)}, {"k", k}, {"x", x}, {"lo", lo}};
    auto got = (*cpu)->Run(inputs);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    auto want = (*ref)->Run(inputs);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    ExpectSameOutputs(*got, *want, 1e-6, "n = " + std::to_string(n));
  }
}

// x (f32 [4, 8]) reshaped to run-time dims: r = Reshape(x, shape) (rank 3, dims from the run) into
// y = MatMul(r, W[8, 6]) (a kernel that needs its shapes: built per shape at run time), and
// r2 = Reshape(x, shape2) into g = Gemm(r2, W2, C) and z = Gemm(r2, W2, alpha = 0) (every CPU Gemm
// refuses alpha 0: the reference runs it, and says why).
onnx::ModelProto ReshapedProductsModel() {
  onnx::ModelProto m = testing::NewModel("run_time_products", 13);
  auto* g = m.mutable_graph();
  AddTypedValue(g->mutable_input(), "x", kF32, {4, 8});
  AddTypedValue(g->mutable_input(), "shape", kI64, {3});
  AddTypedValue(g->mutable_input(), "shape2", kI64, {2});
  testing::AddInitializer(g, "w", {8, 6}, [](int64_t i) { return 0.05 * static_cast<double>((i * 7) % 13) - 0.3; });
  testing::AddInitializer(g, "w2", {8, 5}, [](int64_t i) { return 0.1 * static_cast<double>((i * 3) % 7) - 0.2; });
  testing::AddInitializer(g, "c", {5}, [](int64_t i) { return static_cast<double>(i) * 0.5; });
  AddNode(g, "Reshape", {"x", "shape"}, {"r"}, "reshape");
  AddNode(g, "MatMul", {"r", "w"}, {"y"}, "matmul");
  AddNode(g, "Reshape", {"x", "shape2"}, {"r2"}, "reshape2");
  AddNode(g, "Gemm", {"r2", "w2", "c"}, {"g"}, "gemm");
  auto* zero = AddNode(g, "Gemm", {"r2", "w2"}, {"z"}, "gemm_alpha0");
  auto* alpha = zero->add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(0.0f);
  for (const char* out : {"y", "g", "z"}) AddTypedValue(g->mutable_output(), out, kF32, {}, false);
  return m;
}

Tensor I64s(const std::vector<int64_t>& v) {
  Tensor t(DType::kI64, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<int64_t>()[i] = v[i];
  return t;
}

const KernelInfo& KernelNamed(const CompiledModel& model, const std::string& name) {
  for (const KernelInfo& k : model.kernels()) {
    if (k.name == name) return k;
  }
  ADD_FAILURE() << "no kernel " << name;
  static const KernelInfo kNone;
  return kNone;
}

TEST(RunTimeShapesTest, KernelsThatNeedShapesAreBuiltPerShapeAtRunTime) {
  const Graph graph = testing::ImportOrFail(ReshapedProductsModel());
  auto cpu = CompileForTarget(graph, Target{.kind = DeviceKind::kCpu, .precision = Precision::kFp32});
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  auto ref = CompileForTarget(graph, Target{});
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  EXPECT_EQ(KernelNamed(**cpu, "matmul").implementation, "built per shape at run time");
  EXPECT_EQ(KernelNamed(**cpu, "matmul").device, "cpu");
  EXPECT_TRUE((*cpu)->fallbacks().empty());

  Tensor x(DType::kF32, {4, 8});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>((i * 5) % 11) * 0.1f - 0.4f;
  // The same compiled model with batch dims that change from run to run (and back: a cached kernel).
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{2, 2, 8}, {4, 1, 8}, {1, 4, 8}, {2, 2, 8}}) {
    const std::map<std::string, Tensor> inputs = {{"x", x}, {"shape", I64s(shape)}, {"shape2", I64s({4, 8})}};
    auto got = (*cpu)->Run(inputs);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    auto want = (*ref)->Run(inputs);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    ExpectSameOutputs(*got, *want, 1e-5, "shape " + ShapeToString(shape));
  }
  // After a run the kernels say what ran, and the cost is the run's.
  const KernelInfo& matmul = KernelNamed(**cpu, "matmul");
  EXPECT_EQ(matmul.device, "cpu");
  EXPECT_NE(matmul.implementation.find("matmul"), std::string::npos) << matmul.implementation;
  EXPECT_TRUE(matmul.fallback_reason.empty()) << matmul.fallback_reason;
  const KernelInfo& refused = KernelNamed(**cpu, "gemm_alpha0");
  EXPECT_EQ(refused.device, "ref");
  EXPECT_NE(refused.fallback_reason.find("alpha 0"), std::string::npos) << refused.fallback_reason;
  EXPECT_NE(refused.fallback_reason.find("run time"), std::string::npos) << refused.fallback_reason;
  ASSERT_EQ((*cpu)->fallbacks().size(), 1u);
  EXPECT_EQ((*cpu)->fallbacks()[0].node, "gemm_alpha0");
  for (size_t i = 0; i < (*cpu)->kernels().size(); ++i) {
    if ((*cpu)->kernels()[i].name != "matmul") continue;
    EXPECT_TRUE((*cpu)->costs()[i].known);
    EXPECT_EQ((*cpu)->costs()[i].flops, 2 * 4 * 8 * 6);
  }
}

TEST(RunTimeShapesTest, WithoutFallbackARefusedRunTimeShapeIsAnErrorNamingTheNode) {
  const Graph graph = testing::ImportOrFail(ReshapedProductsModel());
  CompileOptions options;
  options.allow_fallback = false;
  auto cpu = CompileForTarget(graph, Target{.kind = DeviceKind::kCpu, .precision = Precision::kFp32}, options);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  Tensor x(DType::kF32, {4, 8});
  auto got = (*cpu)->Run({{"x", x}, {"shape", I64s({2, 2, 8})}, {"shape2", I64s({4, 8})}});
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("gemm_alpha0"), std::string::npos) << got.status().ToString();
  EXPECT_NE(got.status().message().find("fallback disabled"), std::string::npos) << got.status().ToString();
}

// The rules by op family: what a node's output is when only the inputs' ranks are known.
TEST(RunTimeShapesTest, OutputRanksByOpFamily) {
  using compile::OutputRanks;
  using compile::RankedType;
  auto int_attr = [](int64_t v) {
    Attribute a;
    a.i = v;
    return a;
  };
  auto node = [](const std::string& op, size_t inputs, size_t outputs) {
    Node n;
    n.op_type = op;
    for (size_t i = 0; i < inputs; ++i) n.inputs.push_back("in" + std::to_string(i));
    for (size_t i = 0; i < outputs; ++i) n.outputs.push_back("out" + std::to_string(i));
    return n;
  };
  const RankedType f2{DType::kF32, 2}, f4{DType::kF32, 4}, unknown{DType::kF32, -1};
  const RankedType shape3{DType::kI64, 1, 3};

  auto add = OutputRanks(node("Add", 2, 1), {f2, f4});
  ASSERT_TRUE(add[0].has_value());
  EXPECT_EQ(add[0]->rank, 4);
  EXPECT_FALSE(OutputRanks(node("Add", 2, 1), {f2, unknown})[0].has_value()) << "one unknown rank, no guess";
  EXPECT_EQ(OutputRanks(node("Less", 2, 1), {f2, f2})[0]->dtype, DType::kBool);
  EXPECT_EQ(OutputRanks(node("Where", 3, 1), {RankedType{DType::kBool, 1}, f2, f4})[0]->dtype, DType::kF32);
  EXPECT_EQ(OutputRanks(node("Range", 3, 1), {RankedType{DType::kI64, 0}, unknown, unknown})[0]->rank, 1);
  EXPECT_EQ(OutputRanks(node("NonZero", 1, 1), {unknown})[0]->rank, 2);
  EXPECT_EQ(OutputRanks(node("Reshape", 2, 1), {f2, shape3})[0]->rank, 3);
  EXPECT_FALSE(OutputRanks(node("Reshape", 2, 1), {f2, RankedType{DType::kI64, 1}})[0].has_value())
      << "a shape of unknown length";
  EXPECT_EQ(OutputRanks(node("Expand", 2, 1), {RankedType{DType::kF32, 5}, shape3})[0]->rank, 5);
  EXPECT_EQ(OutputRanks(node("ConstantOfShape", 1, 1), {shape3})[0]->dtype, DType::kF32);
  Node cast = node("Cast", 1, 1);
  cast.attributes["to"] = int_attr(kI64);
  EXPECT_EQ(OutputRanks(cast, {f2})[0]->dtype, DType::kI64);
  Node sum = node("ReduceSum", 2, 1);
  EXPECT_EQ(OutputRanks(sum, {f4, RankedType{DType::kI64, 1}})[0]->rank, 4) << "keepdims";
  sum.attributes["keepdims"] = int_attr(0);
  EXPECT_FALSE(OutputRanks(sum, {f4, RankedType{DType::kI64, 1}})[0].has_value()) << "axes dropped at run time";
  auto topk = OutputRanks(node("TopK", 2, 2), {f2, shape3});
  EXPECT_EQ(topk[1]->dtype, DType::kI64);
  EXPECT_FALSE(OutputRanks(node("Squeeze", 1, 1), {f4})[0].has_value()) << "no rule: dims of 1 decide";
}

}  // namespace
}  // namespace chipfit
