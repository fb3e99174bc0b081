// Import → Compile → Run on hand-built graphs: folding, memory plan, input checks, observer, stop.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "core/graph/onnx_import.h"
#include "core/runtime/compiled_model.h"
#include "core/runtime/layout.h"
#include "core/runtime/memory_plan.h"
#include "tests/core/onnx_builder.h"

namespace chipfit {
namespace {

using testing::AddNode;
using testing::AddValue;

using testing::FoldableModel;

Result<Graph> Import(const onnx::ModelProto& m) {
  ASSIGN_OR_RETURN(LoadedOnnxModel loaded, CheckOnnxModel(m, "test model"));
  return ImportModel(loaded);
}

Tensor Filled(Shape shape, float value) {
  Tensor t(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = value;
  return t;
}

TEST(RuntimeTest, FoldsShapeChainsAndRuns) {
  auto graph = Import(FoldableModel());
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  auto model = Compile(*graph, Target{});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ((*model)->stats().folded_nodes, 2);  // Shape and Reshape
  ASSERT_EQ((*model)->kernels().size(), 2u);
  EXPECT_EQ((*model)->kernels()[0].name, "add");
  auto out = (*model)->Run({{"x", Filled({2, 3}, 1.0f)}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 1u);
  const float expected[] = {0, 0, 0.5f, 1.5f, 2.5f, 3.5f};  // relu(1 + i - 2.5)
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ((*out)[0].data<float>()[i], expected[i]);
}

TEST(RuntimeTest, WrongInputShapeAndDtypeNameTheInput) {
  auto graph = Import(FoldableModel());
  ASSERT_TRUE(graph.ok());
  auto model = Compile(*graph, Target{});
  ASSERT_TRUE(model.ok());
  auto wrong_shape = (*model)->Run({{"x", Filled({3, 2}, 1.0f)}});
  ASSERT_FALSE(wrong_shape.ok());
  EXPECT_NE(wrong_shape.status().message().find("input 'x' is f32[3x2], the model expects f32[2x3]"), std::string::npos)
      << wrong_shape.status().message();
  auto wrong_dtype = (*model)->Run({{"x", Tensor(DType::kI64, {2, 3})}});
  ASSERT_FALSE(wrong_dtype.ok());
  EXPECT_NE(wrong_dtype.status().message().find("i64[2x3]"), std::string::npos);
  auto missing = (*model)->Run({});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("missing input 'x'"), std::string::npos);
  auto extra = (*model)->Run({{"x", Filled({2, 3}, 1.0f)}, {"nope", Filled({1}, 0)}});
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.status().message().find("'nope'"), std::string::npos);
}

class CountingObserver : public RunObserver {
 public:
  void KernelBegin(size_t, const KernelInfo& k) override { begun.push_back(k.name); }
  void KernelEnd(size_t, const KernelInfo&, double ms) override {
    ++ended;
    EXPECT_GE(ms, 0.0);
  }
  bool WantsOutputs(size_t) override { return true; }
  void KernelOutputs(size_t, const KernelInfo& k, const std::vector<const Tensor*>& outs) override {
    ASSERT_EQ(outs.size(), 1u);
    if (k.name == "add") add_output_sum = outs[0]->GetAsDouble(0) + outs[0]->GetAsDouble(5);
  }
  std::vector<std::string> begun;
  int ended = 0;
  double add_output_sum = 0;
};

TEST(RuntimeTest, ObserverSeesEveryKernelAndItsOutputs) {
  auto graph = Import(FoldableModel());
  auto model = Compile(*graph, Target{});
  ASSERT_TRUE(model.ok());
  CountingObserver observer;
  ASSERT_TRUE((*model)->Run({{"x", Filled({2, 3}, 1.0f)}}, &observer).ok());
  EXPECT_EQ(observer.begun, (std::vector<std::string>{"add", "relu"}));
  EXPECT_EQ(observer.ended, 2);
  EXPECT_FLOAT_EQ(observer.add_output_sum, -1.5 + 3.5);
}

TEST(RuntimeTest, StopTokenCancelsBeforeTheNextKernel) {
  auto graph = Import(FoldableModel());
  auto model = Compile(*graph, Target{});
  ASSERT_TRUE(model.ok());
  std::stop_source source;
  source.request_stop();
  auto out = (*model)->Run({{"x", Filled({2, 3}, 1.0f)}}, nullptr, source.get_token());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kCancelled);
}

TEST(RuntimeTest, NonReferenceTargetsRecordEveryFallback) {
  auto graph = Import(FoldableModel());
  auto model = Compile(*graph, *ParseTarget("cpu:fp32"));
  ASSERT_TRUE(model.ok());
  ASSERT_EQ((*model)->fallbacks().size(), 2u);
  EXPECT_EQ((*model)->fallbacks()[0].reason, "no cpu:fp32 kernel for Add");
  EXPECT_EQ((*model)->kernels()[0].implementation, "reference");
  auto bf16 = Compile(*graph, *ParseTarget("cpu:bf16"));
  ASSERT_FALSE(bf16.ok());
  EXPECT_EQ(bf16.status().code(), StatusCode::kUnsupported);
}

TEST(RuntimeTest, UnknownOpIsUnsupportedAndNamed) {
  onnx::ModelProto m = FoldableModel();
  m.mutable_graph()->mutable_node(3)->set_op_type("Frobnicate");
  m.mutable_graph()->mutable_node(3)->set_domain("com.example");
  m.add_opset_import()->set_domain("com.example");
  m.mutable_opset_import(1)->set_version(1);
  auto loaded = CheckOnnxModel(m, "test model", {.run_checker = false});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto graph = ImportModel(*loaded);
  ASSERT_TRUE(graph.ok());
  auto model = Compile(*graph, Target{});
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(model.status().message().find("node 'relu' (Frobnicate): op com.example::Frobnicate"), std::string::npos)
      << model.status().message();
}

TEST(ImportTest, MissingInputAndCycleAreNamed) {
  onnx::ModelProto missing = FoldableModel();
  missing.mutable_graph()->mutable_node(2)->set_input(1, "ghost");
  auto loaded = CheckOnnxModel(missing, "m", {.run_checker = false, .infer_shapes = false});
  ASSERT_TRUE(loaded.ok());
  auto graph = ImportModel(*loaded);
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("node 'add' (Add): input 'ghost'"), std::string::npos)
      << graph.status().message();

  onnx::ModelProto cycle = FoldableModel();
  cycle.mutable_graph()->mutable_node(2)->set_input(0, "y");  // add reads relu's output, relu reads add's
  loaded = CheckOnnxModel(cycle, "m", {.run_checker = false, .infer_shapes = false});
  ASSERT_TRUE(loaded.ok());
  graph = ImportModel(*loaded);
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("cycle"), std::string::npos) << graph.status().message();
  EXPECT_NE(graph.status().message().find("'add'"), std::string::npos);
}

TEST(ImportTest, UnsortedNodesAreSortedAndEmptyNamesGenerated) {
  onnx::ModelProto m = FoldableModel();
  m.mutable_graph()->mutable_node()->SwapElements(0, 3);  // relu first, shape last
  m.mutable_graph()->mutable_node(1)->clear_name();
  auto loaded = CheckOnnxModel(m, "m", {.run_checker = false, .infer_shapes = false});
  ASSERT_TRUE(loaded.ok());
  auto graph = ImportModel(*loaded);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  std::vector<std::string> names;
  for (const Node& n : graph->nodes) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"shape", "Reshape#1", "add", "relu"}));
}

TEST(ImportTest, DynamicInputsListEveryInput) {
  onnx::ModelProto m = FoldableModel();
  auto* dim =
      m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0);
  dim->set_dim_param("batch");
  auto loaded = CheckOnnxModel(m, "m");
  ASSERT_TRUE(loaded.ok());
  auto graph = ImportModel(*loaded);
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("x: batchx3"), std::string::npos) << graph.status().message();
  OnnxLoadOptions bind;
  bind.input_shapes["x"] = {2, 3};
  loaded = CheckOnnxModel(m, "m", bind);
  ASSERT_TRUE(loaded.ok());
  EXPECT_TRUE(ImportModel(*loaded).ok());
  bind.input_shapes["x"] = {2, 4};  // dim 1 is fixed at 3
  loaded = CheckOnnxModel(m, "m", bind);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("fixed at 3"), std::string::npos);
}

TEST(ImportTest, ExternalDataIsReadAndCheckedAgainstItsFile) {
  const auto dir = std::filesystem::temp_directory_path() / ("chipfit_external_data_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const float values[4] = {1, 2, 3, 4};
  std::ofstream(dir / "weights.bin", std::ios::binary).write(reinterpret_cast<const char*>(values), sizeof values);
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(onnx::TensorProto_DataType_FLOAT);
  t.add_dims(2);
  t.add_dims(2);
  t.set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  auto* loc = t.add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  auto tensor = TensorFromOnnx(t, dir, "initializer 'w'");
  ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
  EXPECT_FLOAT_EQ(tensor->data<float>()[3], 4.0f);
  t.add_dims(2);  // now 8 floats: the file is too short
  auto short_file = TensorFromOnnx(t, dir, "initializer 'w'");
  ASSERT_FALSE(short_file.ok());
  EXPECT_NE(short_file.status().message().find("initializer 'w'"), std::string::npos);
  loc->set_value("../escape.bin");
  EXPECT_FALSE(TensorFromOnnx(t, dir, "initializer 'w'").ok());
  std::filesystem::remove_all(dir);
}

TEST(ImportTest, RawDataOfTheWrongSizeIsRejectedBeforeAllocating) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto_DataType_FLOAT);
  t.add_dims(int64_t{1} << 38);
  t.add_dims(int64_t{1} << 38);
  t.set_raw_data("abcd");
  auto tensor = TensorFromOnnx(t, ".", "initializer 'huge'");
  ASSERT_FALSE(tensor.ok());
  EXPECT_EQ(tensor.status().code(), StatusCode::kParseError);
}

TEST(ImportTest, ParseShapeBinding) {
  auto ok = ParseShapeBinding("x=1x3x48x192");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->first, "x");
  EXPECT_EQ(ok->second, (Shape{1, 3, 48, 192}));
  EXPECT_FALSE(ParseShapeBinding("x").ok());
  EXPECT_FALSE(ParseShapeBinding("x=1xfoo").ok());
  EXPECT_FALSE(ParseShapeBinding("=1x2").ok());
}

TEST(MemoryPlanTest, ReusesDeadBuffersAndNeverOverlapsLiveOnes) {
  // A chain a → b → c → d: each buffer dies after the next kernel, so two slots suffice.
  std::vector<BufferRequest> chain = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  MemoryPlan plan = PlanMemory(chain);
  EXPECT_EQ(plan.total_bytes, 4000u);
  EXPECT_LE(plan.arena_bytes, 2 * 1024u);
  for (size_t i = 0; i < chain.size(); ++i) {
    for (size_t j = i + 1; j < chain.size(); ++j) {
      const bool live_together = !(chain[i].last_use < chain[j].first_use || chain[j].last_use < chain[i].first_use);
      const bool overlap = plan.offsets[i] < plan.offsets[j] + 1024 && plan.offsets[j] < plan.offsets[i] + 1024;
      EXPECT_FALSE(live_together && overlap) << i << " and " << j;
    }
  }
  EXPECT_EQ(plan.offsets[0] % 64, 0u);
}

}  // namespace
}  // namespace chipfit

namespace chipfit {
namespace {

// A device Relu that only takes rank-2 inputs, and one that refuses everything: enough to check
// that placement tries implementations in order and records why each one refused.
class DoublingRelu : public IKernel {
 public:
  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    Tensor& y = *ctx.output(0);
    // Deliberately different from Relu (2·max(x, 0)) so a test can see which kernel ran.
    for (int64_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = 2 * std::max(0.0f, x.data<float>()[i]);
    return Status::Ok();
  }
};

Result<std::unique_ptr<IKernel>> CreateRank2Relu(const KernelInit& init) {
  if (init.inputs[0]->shape.size() != 2) {
    return Unsupported("rank " + std::to_string(init.inputs[0]->shape.size()) + " unsupported");
  }
  return std::unique_ptr<IKernel>(new DoublingRelu());
}

Result<std::unique_ptr<IKernel>> CreateNever(const KernelInit&) { return Unsupported("never takes anything"); }

onnx::ModelProto ReluModel(std::vector<int64_t> dims) {
  onnx::ModelProto m = testing::NewModel("relu");
  AddValue(m.mutable_graph()->mutable_input(), "x", dims);
  AddValue(m.mutable_graph()->mutable_output(), "y", dims);
  AddNode(m.mutable_graph(), "Relu", {"x"}, {"y"}, "relu");
  return m;
}

TEST(PlacementTest, FirstAcceptingImplementationWinsAndRefusalsAreRecorded) {
  KernelTable table;
  table.Add("Relu", "", DeviceKind::kCpu, Precision::kFp32, {"test:never", CreateNever});
  table.Add("Relu", "", DeviceKind::kCpu, Precision::kFp32, {"test:rank2", CreateRank2Relu});
  CompileOptions options;
  options.kernels = &table;
  const Target cpu = *ParseTarget("cpu:fp32");

  auto rank2 = Compile(*Import(ReluModel({2, 3})), cpu, options);
  ASSERT_TRUE(rank2.ok()) << rank2.status().ToString();
  EXPECT_TRUE((*rank2)->fallbacks().empty());
  EXPECT_EQ((*rank2)->kernels()[0].implementation, "test:rank2");
  EXPECT_EQ((*rank2)->kernels()[0].device, "cpu");
  auto out = (*rank2)->Run({{"x", Filled({2, 3}, 1.5f)}});
  ASSERT_TRUE(out.ok());
  EXPECT_FLOAT_EQ((*out)[0].data<float>()[0], 3.0f);  // the device kernel ran

  auto rank3 = Compile(*Import(ReluModel({1, 2, 3})), cpu, options);
  ASSERT_TRUE(rank3.ok()) << rank3.status().ToString();
  ASSERT_EQ((*rank3)->fallbacks().size(), 1u);
  EXPECT_EQ((*rank3)->fallbacks()[0].reason, "test:never: never takes anything; test:rank2: rank 3 unsupported");
  EXPECT_EQ((*rank3)->kernels()[0].implementation, "reference");
  out = (*rank3)->Run({{"x", Filled({1, 2, 3}, 1.5f)}});
  ASSERT_TRUE(out.ok());
  EXPECT_FLOAT_EQ((*out)[0].data<float>()[0], 1.5f);  // the reference kernel ran
}

}  // namespace
}  // namespace chipfit

namespace chipfit {
namespace {

// Every pair of orders round-trips exactly, and each order puts elements where its definition says.
TEST(LayoutTest, ReordersBetweenEveryPairOfOrders) {
  const Shape shape = {2, 16, 3, 5};
  Tensor plain(DType::kF32, shape);
  for (int64_t i = 0; i < plain.numel(); ++i) plain.data<float>()[i] = static_cast<float>(i);
  const Layout layouts[] = {Layout::kPlain, Layout::kChannelsLast, Layout::kBlocked8};
  for (Layout a : layouts) {
    Tensor in_a(DType::kF32, shape);
    ASSERT_TRUE(ReorderTensor(plain, Layout::kPlain, in_a, a).ok());
    for (Layout b : layouts) {
      Tensor in_b(DType::kF32, shape), back(DType::kF32, shape);
      ASSERT_TRUE(ReorderTensor(in_a, a, in_b, b).ok());
      ASSERT_TRUE(ReorderTensor(in_b, b, back, Layout::kPlain).ok());
      for (int64_t i = 0; i < plain.numel(); ++i) {
        ASSERT_EQ(back.data<float>()[i], plain.data<float>()[i]) << LayoutName(a) << " -> " << LayoutName(b);
      }
    }
  }
  // (n=1, c=11, h=2, w=4): plain ((1·16+11)·3+2)·5+4 = 419; nChw8c block 1 of 2, lane 3.
  Tensor blocked(DType::kF32, shape);
  ASSERT_TRUE(ReorderTensor(plain, Layout::kPlain, blocked, Layout::kBlocked8).ok());
  EXPECT_EQ(blocked.data<float>()[(((1 * 2 + 1) * 3 + 2) * 5 + 4) * 8 + 3], 419.0f);
  Tensor nhwc(DType::kF32, shape);
  ASSERT_TRUE(ReorderTensor(plain, Layout::kPlain, nhwc, Layout::kChannelsLast).ok());
  EXPECT_EQ(nhwc.data<float>()[((1 * 3 + 2) * 5 + 4) * 16 + 11], 419.0f);
  // Several partial 64x64 tiles of the plain ↔ nhwc transpose: 3 channels over 70x67 pixels, and 130
  // channels over 3x3.
  for (const Shape& big : {Shape{2, 3, 70, 67}, Shape{1, 130, 3, 3}}) {
    Tensor p(DType::kF32, big), cl(DType::kF32, big), back(DType::kF32, big);
    for (int64_t i = 0; i < p.numel(); ++i) p.data<float>()[i] = static_cast<float>(i);
    ASSERT_TRUE(ReorderTensor(p, Layout::kPlain, cl, Layout::kChannelsLast).ok());
    ASSERT_TRUE(ReorderTensor(cl, Layout::kChannelsLast, back, Layout::kPlain).ok());
    const int64_t C = big[1], H = big[2], W = big[3];
    for (int64_t i = 0; i < p.numel(); ++i) {
      ASSERT_EQ(back.data<float>()[i], p.data<float>()[i]) << ShapeToString(big) << " at " << i;
      const int64_t n = i / (C * H * W), c = i / (H * W) % C, hw = i % (H * W);
      ASSERT_EQ(cl.data<float>()[(n * H * W + hw) * C + c], p.data<float>()[i]) << ShapeToString(big) << " at " << i;
    }
  }
  // nChw8c never holds channels that are not a multiple of 8.
  Tensor odd(DType::kF32, {1, 6, 2, 2}), odd_out(DType::kF32, {1, 6, 2, 2});
  EXPECT_FALSE(ReorderTensor(odd, Layout::kPlain, odd_out, Layout::kBlocked8).ok());
}

}  // namespace
}  // namespace chipfit
