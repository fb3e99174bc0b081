// Compile's steps (fold/specialise, fuse, precision, place, reorders and copies, memory) one by one.
#include "core/runtime/compile_steps.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/graph/onnx_import.h"
#include "core/graph/passes.h"
#include "tests/core/onnx_builder.h"

namespace chipfit::compile {
namespace {

using testing::AddNode;
using testing::AddValue;

Result<Graph> Import(const onnx::ModelProto& m) {
  ASSIGN_OR_RETURN(LoadedOnnxModel loaded, CheckOnnxModel(m, "test model"));
  return ImportModel(loaded);
}

// A compilation stopped before its first node: the graph and its inputs bound, as Compile has them
// after Fuse.
struct Compilation {
  Compilation(const Graph& graph, const Target& target, CompileOptions compile_options = {})
      : options(std::move(compile_options)), state(target, options) {
    state.graph = std::make_shared<const Graph>(graph);
    BindGraphInputs(state);
  }
  const Node& node(const std::string& name) const { return *state.graph->FindNode(name); }
  const Program::Slot& slot(const std::string& name) const { return state.program.slot(state.program.ids.at(name)); }
  Status LowerAll() {
    for (const Node& n : state.graph->nodes) RETURN_IF_ERROR(LowerNode(state, n));
    return Status();
  }

  CompileOptions options;
  CompileState state;
};

std::vector<std::string> Implementations(const CompileState& state) {
  std::vector<std::string> names;
  for (const KernelInfo& k : state.kernel_infos) names.push_back(k.implementation);
  return names;
}

Result<Graph> FoldableGraph() { return Import(testing::FoldableModel()); }

TEST(FoldAndSpecialiseTest, ConstantSubgraphBecomesAConstant) {
  auto graph = FoldableGraph();
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  Compilation c(*graph, Target{});
  for (const char* name : {"shape", "reshape"}) {
    auto lowered = FoldAndSpecialise(c.state, c.node(name));
    ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
    EXPECT_FALSE(lowered->has_value()) << name << " was folded, so it is no step";
  }
  EXPECT_EQ(c.state.stats.folded_nodes, 2);
  const Program::Slot& c2 = c.slot("c2");
  EXPECT_EQ(c2.kind, Program::Kind::kConstant);
  ASSERT_NE(c2.constant, nullptr);
  EXPECT_EQ(c2.constant->shape(), (Shape{2, 3}));
  EXPECT_FLOAT_EQ(c2.constant->data<float>()[5], 2.5f);

  // The Add reading the folded constant is a step whose output shape is known now.
  auto add = FoldAndSpecialise(c.state, c.node("add"));
  ASSERT_TRUE(add.ok());
  ASSERT_TRUE(add->has_value());
  EXPECT_FALSE((*add)->step.dynamic);
  EXPECT_TRUE(c.slot("s").shape_known);
  EXPECT_EQ(c.slot("s").shape, (Shape{2, 3}));
  EXPECT_EQ((*add)->cost.flops, 6);
  EXPECT_EQ((*add)->info.implementation, "reference");
}

TEST(FoldAndSpecialiseTest, ShapeKnownOnlyAtRunTimeMakesReadersDynamic) {
  auto graph = FoldableGraph();
  ASSERT_TRUE(graph.ok());
  graph->inputs[0].shape = {-1, 3};  // as a symbolic batch would leave it
  Compilation c(*graph, Target{});
  for (const char* name : {"shape", "reshape", "add"}) {
    auto lowered = FoldAndSpecialise(c.state, c.node(name));
    ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
    ASSERT_TRUE(lowered->has_value()) << name << " cannot be computed before x is known";
    EXPECT_TRUE((*lowered)->step.dynamic) << name;
    EXPECT_FALSE((*lowered)->cost.known) << name;
  }
  EXPECT_EQ(c.state.stats.folded_nodes, 0);
  EXPECT_FALSE(c.slot("s").shape_known);
}

TEST(FoldAndSpecialiseTest, NodesWithoutAKernelAreReportedTogether) {
  auto graph = FoldableGraph();
  ASSERT_TRUE(graph.ok());
  graph->nodes[3].op_type = "Frobnicate";
  Compilation c(*graph, Target{});
  ASSERT_TRUE(c.LowerAll().ok());  // later nodes still compile; the report comes after all of them
  ASSERT_EQ(c.state.unsupported.size(), 1u);
  const Status report = ReportUnsupported(c.state);
  EXPECT_EQ(report.code(), StatusCode::kUnsupported);
  EXPECT_NE(report.message().find("node 'relu' (Frobnicate): op ai.onnx::Frobnicate is not supported"),
            std::string::npos)
      << report.message();
}

// y = Relu(Conv(x, w, b)).
Result<Graph> ConvReluGraph() {
  onnx::ModelProto m = testing::NewModel("conv_relu");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {1, 2, 5, 5});
  AddValue(g->mutable_output(), "y", {1, 3, 3, 3});
  testing::AddInitializer(g, "w", {3, 2, 3, 3}, [](int64_t i) { return 0.1 * static_cast<double>(i % 5) - 0.2; });
  testing::AddInitializer(g, "b", {3}, [](int64_t i) { return 0.5 * static_cast<double>(i); });
  AddNode(g, "Conv", {"x", "w", "b"}, {"c"}, "conv");
  AddNode(g, "Relu", {"c"}, {"y"}, "relu");
  return Import(m);
}

Result<std::unique_ptr<IKernel>> CreateNever(const KernelInit&) { return Unsupported("never takes anything"); }

TEST(FuseTest, ConvReluMergesOnlyWhenTheDeviceDeclaresFusedConv) {
  auto graph = ConvReluGraph();
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  KernelTable fusing;
  fusing.Add("FusedConv", kChipfitDomain, DeviceKind::kCpu, Precision::kFp32, {"test:fused", CreateNever});
  const Target cpu = *ParseTarget("cpu:fp32");

  Graph fused = *graph;
  CompileStats stats;
  ASSERT_TRUE(Fuse(fused, cpu, {.kernels = &fusing}, stats).ok());
  EXPECT_EQ(stats.fused, 1);
  ASSERT_EQ(fused.nodes.size(), 1u);
  EXPECT_EQ(fused.nodes[0].op_type, "FusedConv");
  EXPECT_EQ(fused.nodes[0].covers, (std::vector<std::string>{"conv", "relu"}));

  KernelTable plain;  // a device without FusedConv gets the graph unfused
  plain.Add("Conv", "", DeviceKind::kCpu, Precision::kFp32, {"test:conv", CreateNever});
  Graph unfused = *graph;
  stats = {};
  ASSERT_TRUE(Fuse(unfused, cpu, {.kernels = &plain}, stats).ok());
  EXPECT_EQ(stats.fused, 0);
  EXPECT_EQ(unfused.nodes.size(), 2u);

  Graph as_written = *graph;  // the reference is the oracle: never rewritten
  stats = {};
  ASSERT_TRUE(Fuse(as_written, Target{}, {.kernels = &fusing}, stats).ok());
  EXPECT_EQ(as_written.nodes.size(), 2u);

  Graph not_asked = *graph;
  stats = {};
  ASSERT_TRUE(Fuse(not_asked, cpu, {.fuse = false, .kernels = &fusing}, stats).ok());
  EXPECT_EQ(not_asked.nodes.size(), 2u);
}

// A kernel for steps that are compiled here, never run.
class NotRun : public IKernel {
 public:
  Status Run(KernelContext& ctx) override { return ctx.Error("not run in these tests"); }
};

Result<std::unique_ptr<IKernel>> CreateRank2(const KernelInit& init) {
  if (init.inputs[0]->shape.size() != 2) {
    return Unsupported("rank " + std::to_string(init.inputs[0]->shape.size()) + " unsupported");
  }
  return std::unique_ptr<IKernel>(std::make_unique<NotRun>());
}

Result<Graph> ReluGraph(std::vector<int64_t> dims) {
  onnx::ModelProto m = testing::NewModel("relu");
  AddValue(m.mutable_graph()->mutable_input(), "x", dims);
  AddValue(m.mutable_graph()->mutable_output(), "y", dims);
  AddNode(m.mutable_graph(), "Relu", {"x"}, {"y"}, "relu");
  return Import(m);
}

TEST(PlaceTest, RefusedNodeFallsBackWithTheKernelsReasons) {
  KernelTable table;
  table.Add("Relu", "", DeviceKind::kCpu, Precision::kFp32, {"test:never", CreateNever});
  table.Add("Relu", "", DeviceKind::kCpu, Precision::kFp32, {"test:rank2", CreateRank2});
  const Target cpu = *ParseTarget("cpu:fp32");

  auto rank3 = ReluGraph({1, 2, 3});
  ASSERT_TRUE(rank3.ok());
  Compilation refused(*rank3, cpu, {.kernels = &table});
  auto lowered = FoldAndSpecialise(refused.state, refused.node("relu"));
  ASSERT_TRUE(lowered.ok() && lowered->has_value());
  ASSERT_TRUE(Place(refused.state, **lowered).ok());
  EXPECT_EQ((*lowered)->step.kernel, nullptr);
  EXPECT_EQ((*lowered)->info.implementation, "reference");
  const std::string reason = "test:never: never takes anything; test:rank2: rank 3 unsupported";
  EXPECT_EQ((*lowered)->info.fallback_reason, reason);
  ASSERT_EQ(refused.state.fallbacks.size(), 1u);
  EXPECT_EQ(refused.state.fallbacks[0].node, "relu");
  EXPECT_EQ(refused.state.fallbacks[0].reason, reason);

  auto rank2 = ReluGraph({2, 3});
  ASSERT_TRUE(rank2.ok());
  Compilation taken(*rank2, cpu, {.kernels = &table});
  lowered = FoldAndSpecialise(taken.state, taken.node("relu"));
  ASSERT_TRUE(lowered.ok() && lowered->has_value());
  ASSERT_TRUE(Place(taken.state, **lowered).ok());
  EXPECT_NE((*lowered)->step.kernel, nullptr);
  EXPECT_EQ((*lowered)->info.implementation, "test:rank2");
  EXPECT_EQ((*lowered)->info.device, "cpu");
  EXPECT_TRUE(taken.state.fallbacks.empty());

  Compilation strict(*rank3, cpu, {.kernels = &table, .allow_fallback = false});
  lowered = FoldAndSpecialise(strict.state, strict.node("relu"));
  ASSERT_TRUE(lowered.ok() && lowered->has_value());
  const Status status = Place(strict.state, **lowered);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_NE(status.message().find("node 'relu' (Relu) cannot run on cpu:fp32 (fallback disabled): " + reason),
            std::string::npos)
      << status.message();
}

Result<std::unique_ptr<IKernel>> CreateAny(const KernelInit&) {
  return std::unique_ptr<IKernel>(std::make_unique<NotRun>());
}

TEST(AssignPrecisionTest, ListedNodeStaysFp32WithItsReason) {
  onnx::ModelProto m = testing::NewModel("two_relus");
  AddValue(m.mutable_graph()->mutable_input(), "x", {2, 3});
  AddValue(m.mutable_graph()->mutable_output(), "y", {2, 3});
  AddNode(m.mutable_graph(), "Relu", {"x"}, {"r"}, "kept");
  AddNode(m.mutable_graph(), "Relu", {"r"}, {"y"}, "other");
  auto graph = Import(m);
  ASSERT_TRUE(graph.ok());
  KernelTable table;
  table.Add("Relu", "", DeviceKind::kCpu, Precision::kInt8, {"test:int8", CreateAny});
  table.Add("Relu", "", DeviceKind::kCpu, Precision::kFp32, {"test:fp32", CreateAny});
  Compilation c(*graph, *ParseTarget("cpu:int8"), {.kernels = &table, .keep_fp32 = {{"kept", "sensitive layer"}}});

  auto kept = FoldAndSpecialise(c.state, c.node("kept"));
  ASSERT_TRUE(kept.ok() && kept->has_value());
  AssignPrecision(c.state, **kept);
  EXPECT_EQ((*kept)->precision, Precision::kFp32);
  EXPECT_EQ((*kept)->precision_reason, "sensitive layer");
  ASSERT_TRUE(Place(c.state, **kept).ok());
  EXPECT_EQ((*kept)->info.implementation, "test:fp32");
  EXPECT_EQ((*kept)->info.precision, "fp32");
  EXPECT_EQ((*kept)->info.precision_reason, "sensitive layer");

  auto other = FoldAndSpecialise(c.state, c.node("other"));
  ASSERT_TRUE(other.ok() && other->has_value());
  AssignPrecision(c.state, **other);
  EXPECT_EQ((*other)->precision, Precision::kInt8);
  EXPECT_TRUE((*other)->precision_reason.empty());
  ASSERT_TRUE(Place(c.state, **other).ok());
  EXPECT_EQ((*other)->info.implementation, "test:int8");
  EXPECT_EQ((*other)->info.precision, "int8");
  EXPECT_TRUE(c.state.fallbacks.empty());

  // A fused kernel stays fp32 when any node it covers is listed.
  NodeStep fused{.info = {.name = "conv",
                          .op_type = "FusedConv",
                          .onnx_nodes = {"conv", "kept"},
                          .device = "ref",
                          .implementation = "reference"}};
  AssignPrecision(c.state, fused);
  EXPECT_EQ(fused.precision, Precision::kFp32);
}

class HostAllocation final : public DeviceAllocation {
 public:
  explicit HostAllocation(size_t bytes) : memory_(bytes) {}
  size_t bytes() const override { return memory_.size(); }
  Result<DeviceBuffer> View(size_t offset, size_t bytes) override {
    if (offset + bytes > memory_.size()) return Internal("view outside the allocation");
    return DeviceBuffer{memory_.data() + offset, bytes};
  }

 private:
  std::vector<unsigned char> memory_;
};

// "Device" memory that is host memory (as in device_memory_test.cpp), counting what is done to it.
class FakeDevice final : public DeviceContext {
 public:
  std::string DeviceId() const override { return "opencl:0"; }
  size_t Alignment() const override { return 256; }
  Status CheckFits(const DeviceMemoryNeeds&) const override { return Status(); }
  Result<std::shared_ptr<DeviceAllocation>> Allocate(size_t bytes) override {
    ++allocations;
    return std::shared_ptr<DeviceAllocation>(std::make_shared<HostAllocation>(bytes));
  }
  Status Upload(const Tensor& host, const DeviceBuffer& dst) override {
    ++uploads;
    std::memcpy(dst.handle, host.raw_data(), host.nbytes());
    return Status();
  }
  Status Download(const DeviceBuffer& src, Tensor& host) override {
    std::memcpy(host.raw_data(), src.handle, host.nbytes());
    return Status();
  }
  Status Finish() override { return Status(); }
  void TimerBegin() override {}
  Result<double> TimerEndMs() override { return 0.0; }

  int allocations = 0, uploads = 0;
};

class OnDevice final : public IKernel {
 public:
  Status Run(KernelContext& ctx) override { return ctx.Error("not run in these tests"); }
  bool InputOnDevice(size_t) const override { return true; }
  bool OutputOnDevice(size_t) const override { return true; }
};

Result<std::unique_ptr<IKernel>> CreateOnDevice(const KernelInit&) {
  return std::unique_ptr<IKernel>(std::make_unique<OnDevice>());
}

const KernelTable& DeviceTable() {
  static const KernelTable table = [] {
    KernelTable t;
    t.Add("Relu", "", DeviceKind::kOpenCL, Precision::kFp32, {"fake:relu", CreateOnDevice});
    t.Add("Add", "", DeviceKind::kOpenCL, Precision::kFp32, {"fake:add", CreateOnDevice});
    return t;
  }();
  return table;
}

// y = Relu(Sigmoid(Add(x, x) + w)): Add and Relu on the device, Sigmoid (no device kernel) on the host.
Result<Graph> DeviceChain(int64_t n) {
  onnx::ModelProto m = testing::NewModel("device_chain");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {n});
  AddValue(g->mutable_output(), "y", {n});
  testing::AddInitializer(g, "w", {n}, [](int64_t i) { return static_cast<double>(i); });
  AddNode(g, "Add", {"x", "x"}, {"a"}, "twice");
  AddNode(g, "Add", {"a", "w"}, {"b"}, "add_w");
  AddNode(g, "Sigmoid", {"b"}, {"s"}, "sigmoid");
  AddNode(g, "Relu", {"s"}, {"y"}, "relu");
  return Import(m);
}

TEST(InsertReordersAndCopiesTest, CopiesGoBetweenHostAndDeviceSlots) {
  auto graph = DeviceChain(64);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  auto device = std::make_shared<FakeDevice>();
  Compilation c(*graph, *ParseTarget("opencl:0:fp32"), {.kernels = &DeviceTable(), .device = device});

  auto twice = FoldAndSpecialise(c.state, c.node("twice"));
  ASSERT_TRUE(twice.ok() && twice->has_value());
  ASSERT_TRUE(Place(c.state, **twice).ok());
  ASSERT_TRUE(InsertReordersAndCopies(c.state, (*twice)->step).ok());
  // Both inputs read x from one copy on the device, inserted before the Add.
  ASSERT_EQ(c.state.program.steps.size(), 1u);
  EXPECT_EQ(c.state.program.steps[0].copy, Program::Step::Copy::kToDevice);
  const int x_on_device = c.state.program.ids.at("x@opencl:0");
  EXPECT_EQ((*twice)->step.in, (std::vector<int>{x_on_device, x_on_device}));
  EXPECT_TRUE(c.slot("x@opencl:0").on_device);
  EXPECT_TRUE((*twice)->step.on_device);
  ASSERT_TRUE(AppendStep(c.state, std::move(**twice)).ok());
  EXPECT_TRUE(c.slot("a").on_device);  // where the device kernel wrote it

  ASSERT_TRUE(LowerNode(c.state, c.node("add_w")).ok());
  ASSERT_TRUE(LowerNode(c.state, c.node("sigmoid")).ok());
  ASSERT_TRUE(LowerNode(c.state, c.node("relu")).ok());
  ASSERT_TRUE(BindGraphOutputs(c.state).ok());
  const std::vector<std::string> expected = {"copy to opencl:0", "fake:add",         "fake:add",  "copy from opencl:0",
                                             "reference",        "copy to opencl:0", "fake:relu", "copy from opencl:0"};
  EXPECT_EQ(Implementations(c.state), expected);
  EXPECT_EQ(c.state.stats.transfers, 4);
  // The weight is a constant uploaded once after planning, not a copy step.
  EXPECT_TRUE(c.slot("w@opencl:0").on_device);
  EXPECT_EQ(c.slot("w@opencl:0").kind, Program::Kind::kConstant);
  EXPECT_EQ(c.state.device_constant_slots, (std::vector<int>{c.state.program.ids.at("w@opencl:0")}));
  // The graph output is the host copy.
  ASSERT_EQ(c.state.program.output_ids.size(), 1u);
  EXPECT_EQ(c.state.program.slot(c.state.program.output_ids[0]).name, "y@host");
}

// A host kernel that writes channels-last, as oneDNN's convolutions do.
class WritesNhwc final : public IKernel {
 public:
  Status Run(KernelContext& ctx) override { return ctx.Error("not run in these tests"); }
  Layout OutputLayout(size_t) const override { return Layout::kChannelsLast; }
};

TEST(InsertReordersAndCopiesTest, PlainReaderOfChannelsLastGetsAReorder) {
  onnx::ModelProto m = testing::NewModel("nhwc");
  AddValue(m.mutable_graph()->mutable_input(), "x", {1, 3, 2, 2});
  AddValue(m.mutable_graph()->mutable_output(), "y", {1, 3, 2, 2});
  AddNode(m.mutable_graph(), "Relu", {"x"}, {"r"}, "relu");
  AddNode(m.mutable_graph(), "Sigmoid", {"r"}, {"y"}, "sigmoid");
  auto graph = Import(m);
  ASSERT_TRUE(graph.ok());
  KernelTable table;
  table.Add("Relu", "", DeviceKind::kCpu, Precision::kFp32,
            {"test:nhwc", [](const KernelInit&) -> Result<std::unique_ptr<IKernel>> {
               return std::unique_ptr<IKernel>(std::make_unique<WritesNhwc>());
             }});
  Compilation c(*graph, *ParseTarget("cpu:fp32"), {.kernels = &table});
  ASSERT_TRUE(LowerNode(c.state, c.node("relu")).ok());
  EXPECT_EQ(c.slot("r").layout, Layout::kChannelsLast);

  auto sigmoid = FoldAndSpecialise(c.state, c.node("sigmoid"));
  ASSERT_TRUE(sigmoid.ok() && sigmoid->has_value());
  ASSERT_TRUE(Place(c.state, **sigmoid).ok());
  ASSERT_TRUE(InsertReordersAndCopies(c.state, (*sigmoid)->step).ok());
  ASSERT_EQ(c.state.program.steps.size(), 2u);
  const Program::Step& reorder = c.state.program.steps[1];
  EXPECT_TRUE(reorder.reorder);
  EXPECT_EQ(reorder.from, Layout::kChannelsLast);
  EXPECT_EQ(reorder.to, Layout::kPlain);
  EXPECT_EQ((*sigmoid)->step.in[0], c.state.program.ids.at("r@plain"));
  EXPECT_EQ(c.state.kernel_infos[1].implementation, "reorder:nhwc->plain");
  EXPECT_EQ(c.state.kernel_infos[1].onnx_nodes, (std::vector<std::string>{"sigmoid"}));
}

// x → a → b → c → y, Relus on 64 floats (256 bytes each).
Result<Graph> ReluChain() {
  onnx::ModelProto m = testing::NewModel("relu_chain");
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", {64});
  AddValue(g->mutable_output(), "y", {64});
  AddNode(g, "Relu", {"x"}, {"a"}, "r1");
  AddNode(g, "Relu", {"a"}, {"b"}, "r2");
  AddNode(g, "Relu", {"b"}, {"c"}, "r3");
  AddNode(g, "Relu", {"c"}, {"y"}, "r4");
  return Import(m);
}

TEST(PlanMemoryTest, ArenaPeakReusesBuffersThatDied) {
  auto graph = ReluChain();
  ASSERT_TRUE(graph.ok());
  Compilation c(*graph, Target{});
  ASSERT_TRUE(c.LowerAll().ok());
  ASSERT_TRUE(BindGraphOutputs(c.state).ok());
  PlanMemory(c.state);
  // a, b and c are planned (y is returned to the caller); at most two of them are alive at once.
  EXPECT_EQ(c.state.stats.planned_total_bytes, 3 * 256u);
  EXPECT_EQ(c.state.stats.planned_arena_bytes, 2 * 256u);
  EXPECT_EQ(c.state.program.planned_slots.size(), 3u);
  EXPECT_EQ(c.slot("y").plan_index, -1);
  const auto offset = [&](const char* name) {
    return c.state.program.plan.offsets.at(static_cast<size_t>(c.slot(name).plan_index));
  };
  EXPECT_NE(offset("a"), offset("b"));
  EXPECT_EQ(offset("c"), offset("a"));  // a's last reader ran before c is written
  EXPECT_EQ(c.state.stats.kernels, 4);
}

TEST(PlanMemoryTest, DeviceValuesGetADeviceArenaSizedBeforeAllocating) {
  auto graph = DeviceChain(64);
  ASSERT_TRUE(graph.ok());
  auto device = std::make_shared<FakeDevice>();
  Compilation c(*graph, *ParseTarget("opencl:0:fp32"), {.kernels = &DeviceTable(), .device = device});
  ASSERT_TRUE(c.LowerAll().ok());
  ASSERT_TRUE(BindGraphOutputs(c.state).ok());
  PlanMemory(c.state);
  // On the device: x's copy (steps 0-1), a (1-2), b (2-3), s's copy (5-6), y (6-7), each 256 bytes
  // at the device's 256-byte alignment; at most two alive at once.
  EXPECT_EQ(c.state.device_slots.size(), 5u);
  EXPECT_EQ(c.state.stats.device_arena_bytes, 2 * 256u);
  EXPECT_EQ(c.state.stats.device_constant_bytes, 256u);  // w
  // On the host only b's copy and s remain to plan: alive at once.
  EXPECT_EQ(c.state.stats.planned_arena_bytes, 2 * 256u);
  EXPECT_EQ(device->allocations, 0);

  ASSERT_TRUE(AllocateDeviceMemory(c.state).ok());
  EXPECT_EQ(device->allocations, 2);  // the arena, and w
  EXPECT_EQ(device->uploads, 1);
  for (const Program::Step& step : c.state.program.steps) {
    if (step.on_device && step.copy == Program::Step::Copy::kNone) {
      EXPECT_EQ(step.device_in.size(), step.in.size());
      EXPECT_NE(step.device_out[0].handle, nullptr);
    }
  }
}

}  // namespace
}  // namespace chipfit::compile
