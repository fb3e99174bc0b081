// The steps Compile runs, one function each, and the state they hand on (internal to core/runtime and its tests).
#pragma once

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/graph/graph.h"
#include "core/runtime/compiled_model.h"
#include "core/runtime/cost.h"
#include "core/runtime/device_context.h"
#include "core/runtime/kernel.h"
#include "core/runtime/layout.h"
#include "core/runtime/memory_plan.h"
#include "core/runtime/target.h"
#include "core/status.h"

namespace chipfit::compile {

// What CompiledModel::Run executes: every value in a slot, the steps in order, the arenas.
struct Program {
  enum class Kind { kInput, kConstant, kIntermediate };
  struct Slot {
    std::string name{};
    Kind kind = Kind::kIntermediate;
    DType dtype = DType::kUndefined;
    Shape shape{};
    bool shape_known = false;
    bool rank_known = false;            // shape_known, or shape.size() is the rank and its dims < 0 wait for the run
    bool sequence_or_optional = false;  // a graph input of sequence or optional type (lives on the host)
    const Tensor* constant = nullptr;
    bool is_output = false;
    int producer = -1;
    int last_use = -1;
    int plan_index = -1;
    Layout layout = Layout::kPlain;
    bool on_device = false;        // in the device's memory (DeviceContext), stored as StorageType(dtype)
    DeviceBuffer device_buffer{};  // on_device: its place in the device arena, or its constant buffer
  };
  struct Step {
    const Node* node = nullptr;
    const OpEntry* op = nullptr;
    std::unique_ptr<IKernel> kernel{};  // the device kernel placement chose; null: the reference kernel
    std::vector<int> in{};              // -1: omitted
    std::vector<int> out{};             // -1: omitted
    std::vector<Layout> out_layouts{};  // the order each output is written in
    bool dynamic = false;
    bool view = false;     // out[0] is in[0]'s bytes under another shape (Reshape and kin): nothing runs
    bool reorder = false;  // a reorder the executor inserted: in[0] (order from) → out[0] (order to)
    Layout from = Layout::kPlain;
    Layout to = Layout::kPlain;
    enum class Copy { kNone, kToDevice, kToHost };
    Copy copy = Copy::kNone;  // a copy the executor inserted: in[0] → out[0] across host and device
    bool on_device = false;   // runs on the device (its timer measures it)
    std::vector<DeviceBuffer> device_in{}, device_out{};  // device kernels: buffers per input/output
    // Control flow (If, Loop, Scan): each body compiled for the same target, found by the Graph the
    // node's attribute holds, and the outer-scope values the bodies read (host, plain order).
    struct Body {
      const Graph* graph = nullptr;
      std::string attribute{};                  // "then_branch", "body" …
      std::shared_ptr<CompiledModel> model{};   // the body with its outer reads as extra inputs
      std::vector<std::string> outer_inputs{};  // those extra inputs, by name
      size_t kernel_offset = 0;                 // where its kernels start in the model's kernel list
    };
    std::vector<Body> bodies{};
    std::map<std::string, int> outer{};  // outer-scope value → slot (read when a body runs)
  };

  // Declared first: device kernels and buffers below are released before their context.
  std::shared_ptr<DeviceContext> device;
  std::shared_ptr<DeviceAllocation> device_arena;
  std::vector<std::shared_ptr<DeviceAllocation>> device_constants;

  std::vector<Slot> slots;
  std::map<std::string, int> ids;
  std::map<std::string, Tensor> constants;  // std::map: stable addresses for Slot::constant
  std::vector<Step> steps;
  std::vector<int> output_ids;
  MemoryPlan plan;
  std::vector<int> planned_slots;
  std::unique_ptr<void, decltype(&std::free)> arena{nullptr, &std::free};
  std::map<std::pair<int, Layout>, int> reordered;  // (slot, order) → slot holding it in that order
  std::map<std::pair<int, bool>, int> moved;        // (slot, on device) → slot holding it there

  DType StorageType(const Slot& slot) const { return slot.on_device ? device->StorageType(slot.dtype) : slot.dtype; }
  size_t SlotBytes(const Slot& slot) const {
    return static_cast<size_t>(NumElements(slot.shape)) * DTypeSize(StorageType(slot));
  }
  Slot& slot(int id) { return slots[static_cast<size_t>(id)]; }
  const Slot& slot(int id) const { return slots[static_cast<size_t>(id)]; }

  int SlotFor(const std::string& name) {
    auto [it, inserted] = ids.emplace(name, static_cast<int>(slots.size()));
    if (inserted) slots.push_back(Slot{.name = name});
    return it->second;
  }
  void SetConstant(int id, Tensor tensor) {
    Slot& s = slots[static_cast<size_t>(id)];
    Tensor& stored = constants[s.name] = std::move(tensor);
    s.kind = Kind::kConstant;
    s.constant = &stored;
    s.dtype = stored.dtype();
    s.shape = stored.shape();
    s.shape_known = true;
  }
};

// One node on its way to a step: FoldAndSpecialise makes it, AssignPrecision and Place choose its
// kernel, InsertReordersAndCopies binds its inputs, AppendStep adds it to the program.
struct NodeStep {
  Program::Step step{};
  KernelInfo info{};
  KernelCost cost{};
  // The precision placement asks the device for first, and why it is not the target's.
  Precision precision = Precision::kFp32;
  std::string precision_reason{};
};

// Everything a compilation builds, handed from step to step; Compile moves it into the model.
struct CompileState {
  CompileState(const Target& target, const CompileOptions& options);

  Target target;
  const CompileOptions& options;       // Compile's, outliving the state
  std::shared_ptr<const Graph> graph;  // after Fuse; steps point at its nodes
  Program program;
  std::vector<KernelInfo> kernel_infos;  // per step
  std::vector<KernelCost> costs;         // per step
  std::vector<Fallback> fallbacks;
  std::vector<ValueDesc> output_descs;
  CompileStats stats;
  // Nodes no kernel can run: every node is seen before they are reported, all together.
  std::vector<std::string> unsupported;
  // Constants read on the device: uploaded by AllocateDeviceMemory once the device memory fits.
  std::vector<int> device_constant_slots;
  // PlanMemory's device arena, for AllocateDeviceMemory: a request and an offset per slot in
  // device_slots.
  std::vector<int> device_slots;
  std::vector<BufferRequest> device_requests;
  MemoryPlan device_plan;
  DeviceMemoryNeeds device_needs;
};

// Prefixes the node when a kernel's message does not name it already.
Status AtNode(const Status& status, const Node& node);

// Why no kernel can run this node ("node 'x' (Frobnicate): op com.example::Frobnicate is not supported").
std::string UnsupportedReason(const Node& node);

// Graph rewrites for a device target: Constant nodes promoted to initializers, BatchNormalization
// folded, and Conv (+ Add) + activation fused when the device has a FusedConv kernel. The reference
// target keeps the graph as written.
Status Fuse(Graph& graph, const Target& target, const CompileOptions& options, CompileStats& stats);

// Slots for state.graph's initializers (constants) and inputs, with what is known of their shapes.
void BindGraphInputs(CompileState& state);

// One node through the per-node steps below: fold/specialise, assign precision, place, insert
// reorders and copies, append. Node by node rather than pass by pass: placement reads the order and
// side (host or device) in which earlier kernels write, and slots are numbered as reorders and
// copies are inserted, which decides the memory plan among buffers of equal size.
Status LowerNode(CompileState& state, const Node& node);

// Computes the node now when it needs no input data (all inputs constant, or Shape/Size of a static
// shape): its outputs become constants and nullopt is returned. Otherwise infers its output shapes
// where its inputs' shapes are known (else the step is dynamic) and returns it, on the reference
// kernel. Nodes without any kernel are recorded in state.unsupported (nullopt).
Result<std::optional<NodeStep>> FoldAndSpecialise(CompileState& state, const Node& node);

// Nodes listed in options.keep_fp32 (any node a fused kernel covers) ask for fp32 on a target of
// another precision, with the listed reason; every other node asks for the target's precision.
void AssignPrecision(const CompileState& state, NodeStep& lowered);

// Chooses the node's kernel: the first device implementation whose Init accepts it, at the
// assigned precision, then (host devices) fp32; else the CPU fallback kernels, else the reference
// kernel, with every refusal recorded as the fallback's reason.
Status Place(CompileState& state, NodeStep& lowered);
// A step with shapes known only at run time on a host-memory device: a RunTimeShapedKernel over
// the device's implementations. false when the device has none for the node (or its own memory).
bool PlaceForRunTimeShapes(CompileState& state, NodeStep& lowered);

// Points the step's inputs at slots where (host or device) and in the order its kernel reads them,
// inserting the reorder and copy steps that make them, or reusing those an earlier reader made.
Status InsertReordersAndCopies(CompileState& state, Program::Step& step);

// Adds the step with its KernelInfo and cost: records where and in which order it writes its
// outputs, and its inputs' last use.
Status AppendStep(CompileState& state, NodeStep lowered);

// Control-flow nodes: compiles each body for the target, with the outer-scope values it reads as
// inputs (constants among them as initializers, so a body's weights stay constant), and binds those
// values to host slots that live until this step has run.
Status CompileBodies(CompileState& state, NodeStep& lowered);

// Appends every body's kernels, costs and fallbacks to the model's lists (after the main graph's),
// named by their path ("If_25/then_branch/LSTM_719") with KernelInfo::parent set.
void ListBodyKernels(CompileState& state);

// Errors naming the nodes no kernel can run (up to ten of them), if there are any.
Status ReportUnsupported(const CompileState& state);

// Graph outputs as the host reads them (plain order, copied from the device), with their shapes.
Status BindGraphOutputs(CompileState& state);

// Arena offsets for every statically shaped intermediate that is not a graph output, host values
// in the host arena and device values in one device arena; fills the stats' byte counts.
void PlanMemory(CompileState& state);

// Checks that the planned device memory fits before allocating any, then allocates the device
// arena, uploads the constants read on the device and gives each device step its buffers.
Status AllocateDeviceMemory(CompileState& state);

}  // namespace chipfit::compile
