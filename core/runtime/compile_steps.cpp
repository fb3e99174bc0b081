// Compile's steps: rewrites, folding, shapes, precision, placement, reorders and copies, memory.
#include "core/runtime/compile_steps.h"

#include <algorithm>
#include <set>

#include "core/graph/passes.h"
#include "core/graph/qdq_fusion.h"
#include "core/graph/scope.h"
#include "core/reference/reference_kernels.h"
#include "core/runtime/kernel_table.h"
#include "core/runtime/node_runner.h"
#include "core/runtime/rank_rules.h"
#include "core/runtime/run_time_kernel.h"

namespace chipfit::compile {
namespace {

// Constants larger than this stay computed at run time (ConstantOfShape of a huge shape …).
constexpr size_t kMaxFoldBytes = size_t{64} << 20;

bool IsFoldable(const Node& node, const OpEntry& op) { return !op.self_allocating && !IsRandomOp(node.op_type); }

bool FullyKnown(const Shape& shape) {
  for (int64_t d : shape) {
    if (d < 0) return false;
  }
  return true;
}

// Runs the node on the reference kernels now when its outputs need no input data: all inputs
// constant, or Shape/Size of a static shape. Returns whether it did (its outputs are constants).
Result<bool> FoldNode(CompileState& state, const Program::Step& step, bool all_constant) {
  const Node& node = *step.node;
  Program& program = state.program;
  const bool shape_only = (node.op_type == "Shape" || node.op_type == "Size") && !step.in.empty() && step.in[0] >= 0 &&
                          program.slot(step.in[0]).shape_known;
  if (!state.options.fold_constants || !IsFoldable(node, *step.op) || !(all_constant || shape_only)) return false;
  std::vector<Tensor> inputs;
  for (int id : step.in) {
    if (id < 0) {
      inputs.emplace_back();
      continue;
    }
    const auto& slot = program.slot(id);
    // Shape and Size read only the shape; a view without data is enough for them.
    inputs.push_back(slot.constant ? *slot.constant : Tensor::View(slot.dtype, slot.shape, nullptr));
  }
  auto folded = RunNodeOnReference(node, state.graph->opset, inputs);
  if (!folded.ok()) return folded.status();
  size_t bytes = 0;
  for (const Tensor& t : *folded) bytes += t.nbytes();
  if (bytes > kMaxFoldBytes) return false;
  for (size_t i = 0; i < step.out.size(); ++i) {
    if (step.out[i] >= 0) program.SetConstant(step.out[i], std::move((*folded)[i]));
  }
  ++state.stats.folded_nodes;
  return true;
}

bool RankKnown(const Program::Slot& slot) { return slot.shape_known || slot.rank_known; }

// A dynamic node's outputs get the element type and rank its op fixes, with dims < 0, so that the
// nodes after it can still be given device kernels.
void GuessDynamicOutputs(Program& program, const Program::Step& step) {
  std::vector<RankedType> inputs;
  for (int id : step.in) {
    RankedType in;
    if (id >= 0) {
      const Program::Slot& slot = program.slot(id);
      in.dtype = slot.dtype;
      if (RankKnown(slot)) in.rank = static_cast<int>(slot.shape.size());
      if (in.rank == 1 && slot.shape[0] >= 0) in.first_dim = slot.shape[0];
    }
    inputs.push_back(in);
  }
  const auto outs = OutputRanks(*step.node, inputs);
  for (size_t i = 0; i < step.out.size() && i < outs.size(); ++i) {
    if (step.out[i] < 0 || !outs[i]) continue;
    Program::Slot& slot = program.slot(step.out[i]);
    if (slot.shape_known || slot.constant != nullptr) continue;
    slot.dtype = outs[i]->dtype;
    slot.shape.assign(static_cast<size_t>(outs[i]->rank), -1);
    slot.rank_known = true;
  }
}

// Static shape inference: output slots get their dtypes and shapes, and the cost is estimated. A
// node whose shapes need run-time data (or an input's shape known only then) becomes dynamic.
Result<KernelCost> SpecialiseShapes(CompileState& state, Program::Step& step) {
  const Node& node = *step.node;
  Program& program = state.program;
  step.dynamic = step.op->self_allocating;
  KernelCost cost{.known = false};
  std::vector<Program::Slot*> in_slots;
  for (int id : step.in) {
    auto* slot = id < 0 ? nullptr : &program.slot(id);
    if (slot != nullptr && !slot->shape_known) step.dynamic = true;
    in_slots.push_back(slot);
  }
  if (step.dynamic) {
    GuessDynamicOutputs(program, step);
    return cost;
  }
  std::vector<ValueInfo> infos(in_slots.size());
  std::vector<const ValueInfo*> info_ptrs;
  for (size_t i = 0; i < in_slots.size(); ++i) {
    if (in_slots[i] == nullptr) {
      info_ptrs.push_back(nullptr);
      continue;
    }
    infos[i] = {in_slots[i]->dtype, in_slots[i]->shape, in_slots[i]->constant};
    info_ptrs.push_back(&infos[i]);
  }
  InferContext ctx(node, state.graph->opset, info_ptrs);
  Status status = step.op->infer(ctx);
  if (!status.ok() && !ctx.value_missing()) return AtNode(status, node);
  if (!status.ok()) {
    step.dynamic = true;
    GuessDynamicOutputs(program, step);
    return cost;
  }
  cost = EstimateCost(node, info_ptrs, ctx.outputs());
  if (!ctx.outputs().empty()) cost.output_shape = ctx.outputs()[0].shape;
  state.stats.flops += cost.flops;
  for (size_t i = 0; i < step.out.size(); ++i) {
    if (step.out[i] < 0) continue;
    const ValueInfo& out = ctx.outputs()[i];
    if (out.dtype == DType::kUndefined || !FullyKnown(out.shape)) {
      return Internal(node.Describe() + ": shape function left output " + std::to_string(i) + " undefined");
    }
    auto& slot = program.slot(step.out[i]);
    slot.dtype = out.dtype;
    slot.shape = out.shape;
    slot.shape_known = true;
  }
  return cost;
}

// What an implementation's Init sees of a node's inputs and outputs. Not copyable: `inputs` points
// into `infos`.
struct InitValues {
  InitValues(const Program& program, const Program::Step& step) {
    for (int id : step.in) {
      if (id < 0) {
        infos.emplace_back();
        continue;
      }
      const auto& slot = program.slot(id);
      infos.push_back(
          {slot.dtype, slot.shape_known ? slot.shape : Shape(slot.shape.size(), -1), slot.constant, slot.layout});
    }
    for (size_t k = 0; k < infos.size(); ++k) inputs.push_back(step.in[k] < 0 ? nullptr : &infos[k]);
    for (int id : step.out) {
      if (id < 0) {
        outputs.emplace_back();
        continue;
      }
      const auto& slot = program.slot(id);
      outputs.push_back({slot.dtype, slot.shape_known && !step.dynamic ? slot.shape : Shape{}});
    }
    outputs_known = !step.dynamic;
  }
  InitValues(const InitValues&) = delete;
  InitValues& operator=(const InitValues&) = delete;

  std::vector<ValueInfo> infos;
  std::vector<const ValueInfo*> inputs;
  std::vector<ValueInfo> outputs;
  bool outputs_known = false;
};

// Tries `table`'s implementations of the node for one device kind and precision, best first: the
// first whose Init accepts it becomes the step's kernel. Refusals are appended to `refusals`; any
// other error from Init is returned.
Status TryImplementations(const CompileState& state, NodeStep& lowered, const InitValues& values,
                          const KernelTable& table, DeviceKind kind, Precision precision, DeviceContext* device,
                          std::string& refusals) {
  const Node& node = *lowered.step.node;
  const Target& target = state.target;
  for (const KernelImpl& impl : table.Find(node.op_type, node.domain, kind, precision)) {
    auto created = impl.create(KernelInit{node, values.inputs, state.graph->opset, precision, state.options.quant,
                                          device, values.outputs_known ? &values.outputs : nullptr});
    if (created.ok()) {
      lowered.step.kernel = std::move(created).value();
      lowered.info.device = kind == target.kind ? target.DeviceId() : std::string(DeviceKindName(kind));
      lowered.info.implementation = impl.name;
      lowered.info.isa = lowered.step.kernel->Isa();
      lowered.info.precision = PrecisionName(precision);
      return Status();
    }
    if (created.status().code() != StatusCode::kUnsupported) return AtNode(created.status(), node);
    refusals += (refusals.empty() ? "" : "; ") + std::string(impl.name) + ": " + created.status().message();
  }
  return Status();
}

// The name of an input whose rank is not known at compile time ("" when every rank is): a slot
// without a known shape and without dims (a known rank-0 shape is always fully known).
std::string InputOfUnknownRank(const Program& program, const Program::Step& step) {
  for (int id : step.in) {
    if (id < 0) continue;
    const Program::Slot& slot = program.slot(id);
    if (!RankKnown(slot) && slot.shape.empty()) return slot.name;
  }
  return "";
}

// The target's device refused the node: an error when fallback is disabled, else the CPU device's
// kernels or the reference kernel, recorded as a fallback with the device's reasons.
Status FallBack(CompileState& state, NodeStep& lowered, const InitValues& values, const std::string& refusals) {
  const Node& node = *lowered.step.node;
  const Target& target = state.target;
  const CompileOptions& options = state.options;
  KernelInfo& info = lowered.info;
  const std::string device_target = options.device != nullptr ? target.ToString() : target.DeviceId() + ":fp32";
  std::string reason = refusals.empty() ? "no " + device_target + " kernel for " + node.op_type : refusals;
  if (!info.precision_reason.empty()) reason = info.precision_reason + "; " + reason;
  info.precision_reason.clear();
  if (!options.allow_fallback) {
    return Unsupported(node.Describe() + " cannot run on " + target.ToString() + " (fallback disabled): " + reason);
  }
  if (options.fallback_kernels != nullptr) {
    std::string cpu_refusals;
    RETURN_IF_ERROR(TryImplementations(state, lowered, values, *options.fallback_kernels, DeviceKind::kCpu,
                                       Precision::kFp32, nullptr, cpu_refusals));
  }
  info.fallback_reason = reason;
  state.fallbacks.push_back({node.name, node.op_type, std::move(reason)});
  return Status();
}

// The slot holding value `id` in order `want`: itself, a constant reordered now, or the output of a
// reorder step inserted here (shared by every later reader that wants the same order). `reader`:
// the node the step is attributed to (nullptr: the value's producer).
Result<int> SlotInLayout(CompileState& state, int id, Layout want, const Node* reader) {
  Program& program = state.program;
  if (const auto& src = program.slot(id); src.layout == want || !src.shape_known || LayoutsAgree(src.shape)) {
    return id;
  }
  if (auto it = program.reordered.find({id, want}); it != program.reordered.end()) return it->second;
  const std::string name = program.slot(id).name + "@" + std::string(LayoutName(want));
  const int out = program.SlotFor(name);
  program.reordered[{id, want}] = out;
  auto& src = program.slot(id);  // SlotFor may have grown `slots`
  if (src.constant != nullptr) {
    Tensor converted(src.dtype, src.shape);
    RETURN_IF_ERROR(ReorderTensor(*src.constant, src.layout, converted, want));
    program.SetConstant(out, std::move(converted));
    program.slot(out).layout = want;
    return out;
  }
  const Node& at = reader != nullptr ? *reader : *program.steps[static_cast<size_t>(src.producer)].node;
  const int index = static_cast<int>(program.steps.size());
  auto& dst = program.slot(out);
  dst.dtype = src.dtype;
  dst.shape = src.shape;
  dst.shape_known = true;
  dst.layout = want;
  dst.producer = index;
  src.last_use = index;
  program.steps.push_back(
      {.node = &at, .in = {id}, .out = {out}, .out_layouts = {want}, .reorder = true, .from = src.layout, .to = want});
  const auto bytes = static_cast<int64_t>(NumElements(dst.shape) * static_cast<int64_t>(DTypeSize(dst.dtype)));
  state.costs.push_back({.flops = 0, .bytes_read = bytes, .bytes_written = bytes});
  state.kernel_infos.push_back(
      {.name = at.name + "/reorder:" + src.name,
       .op_type = "Reorder",
       .onnx_nodes = {at.name},
       .device = state.target.DeviceId(),
       .implementation = "reorder:" + std::string(LayoutName(src.layout)) + "->" + std::string(LayoutName(want)),
       .outputs = {name}});
  return out;
}

// The slot holding value `id` in device memory (`on_device`) or on the host: itself, a constant
// uploaded once after planning, or the output of a copy step inserted here (shared by every later
// reader on the same side). `reader` as for SlotInLayout.
Result<int> SlotOn(CompileState& state, int id, bool on_device, const Node* reader) {
  Program& program = state.program;
  if (program.slot(id).on_device == on_device) return id;
  if (auto it = program.moved.find({id, on_device}); it != program.moved.end()) return it->second;
  const std::string device_id = state.target.DeviceId();
  const std::string name = program.slot(id).name + (on_device ? "@" + device_id : "@host");
  const int out = program.SlotFor(name);
  program.moved[{id, on_device}] = out;
  auto& src = program.slot(id);
  auto& dst = program.slot(out);
  if (src.constant != nullptr && on_device) {
    dst.kind = Program::Kind::kConstant;
    dst.dtype = src.dtype;
    dst.shape = src.shape;
    dst.shape_known = true;
    dst.on_device = true;
    dst.constant = src.constant;  // the host copy: what is uploaded, and what shape inference reads
    state.device_constant_slots.push_back(out);
    return out;
  }
  if (!src.shape_known) {
    return Internal("value '" + src.name + "' would move between host and " + device_id +
                    " with a shape known only at run time");
  }
  const Node& at = reader != nullptr ? *reader : *program.steps[static_cast<size_t>(src.producer)].node;
  const int index = static_cast<int>(program.steps.size());
  dst.dtype = src.dtype;
  dst.shape = src.shape;
  dst.shape_known = true;
  dst.on_device = on_device;
  dst.producer = index;
  src.last_use = index;
  using Copy = Program::Step::Copy;
  program.steps.push_back({.node = &at,
                           .in = {id},
                           .out = {out},
                           .out_layouts = {Layout::kPlain},
                           .copy = on_device ? Copy::kToDevice : Copy::kToHost,
                           .on_device = true});
  const auto bytes = static_cast<int64_t>(program.SlotBytes(on_device ? dst : src));
  state.costs.push_back({.flops = 0, .bytes_read = bytes, .bytes_written = bytes});
  const std::string what = on_device ? "copy to " + device_id : "copy from " + device_id;
  state.kernel_infos.push_back({.name = at.name + "/" + what + ":" + src.name,
                                .op_type = "Copy",
                                .onnx_nodes = {at.name},
                                .device = device_id,
                                .implementation = what,
                                .outputs = {name},
                                .precision = std::string(PrecisionName(state.target.precision))});
  ++state.stats.transfers;
  return out;
}

// Records where (host or device) and in which order step `index` writes its outputs, which later
// readers' reorders and copies start from.
Status BindOutputs(CompileState& state, Program::Step& step, int index) {
  const Node& node = *step.node;
  for (size_t k = 0; k < step.out.size(); ++k) {
    const Layout layout = step.kernel ? step.kernel->OutputLayout(k) : Layout::kPlain;
    step.out_layouts.push_back(layout);
    if (step.out[k] < 0) continue;
    auto& slot = state.program.slot(step.out[k]);
    slot.producer = index;
    slot.layout = layout;
    if (step.kernel && step.kernel->OutputOnDevice(k)) {
      if (state.options.device == nullptr || !slot.shape_known || step.dynamic) {
        return Internal(node.Describe() + ": a kernel wrote device memory without a device context or a static shape");
      }
      slot.on_device = true;
      step.on_device = true;
    }
    if (layout != Layout::kPlain && (step.dynamic || !slot.shape_known)) {
      return Internal(node.Describe() + ": a kernel wrote " + std::string(LayoutName(layout)) +
                      " for an output whose shape is only known at run time");
    }
  }
  return Status();
}

// Bytes at the dtypes the kernel actually moves: device-resident tensors in the device's storage
// type (fp16 on OpenCL fp16), constant float weights as an int8/bf16 kernel packed them (1 or 2
// bytes); host activations stay f32 (int8/bf16 kernels convert them inside).
void CountBytes(const Program& program, const NodeStep& lowered, KernelCost& cost) {
  const size_t packed = lowered.info.precision == "int8" ? 1 : lowered.info.precision == "bf16" ? 2 : 0;
  auto bytes = [&](int id) -> int64_t {
    if (id < 0) return 0;
    const auto& slot = program.slot(id);
    size_t size = DTypeSize(program.StorageType(slot));
    const bool weight = slot.constant != nullptr && slot.dtype == DType::kF32 && slot.shape.size() >= 2;
    if (packed != 0 && weight) size = packed;
    return NumElements(slot.shape) * static_cast<int64_t>(size);
  };
  cost.bytes_read = 0;
  cost.bytes_written = 0;
  for (int id : lowered.step.in) cost.bytes_read += bytes(id);
  for (int id : lowered.step.out) cost.bytes_written += bytes(id);
  if (!lowered.step.in.empty()) CountGatheredReads(lowered.info.op_type, bytes(lowered.step.in[0]), cost);
}

}  // namespace

Status AtNode(const Status& status, const Node& node) {
  if (status.ok() || status.message().find(node.name) != std::string::npos) return status;
  return Status(status.code(), node.Describe() + ": " + status.message());
}

std::string UnsupportedReason(const Node& node) {
  const std::string domain = node.domain.empty() ? "ai.onnx" : node.domain;
  if (domain == "ai.onnx.preview.training") {
    return node.Describe() + ": op " + domain + "::" + node.op_type +
           " is a training operator; chipfit runs and profiles inference only";
  }
  if (domain == "com.microsoft") {
    return node.Describe() + ": op " + domain + "::" + node.op_type +
           " (an ONNX Runtime contrib operator) is not implemented in chipfit; docs/operators.md lists those it runs";
  }
  return node.Describe() + ": op " + domain + "::" + node.op_type + " is not supported";
}

CompileState::CompileState(const Target& target, const CompileOptions& options) : target(target), options(options) {
  program.device = options.device;
}

Status Fuse(Graph& graph, const Target& target, const CompileOptions& options, CompileStats& stats) {
  if (target.kind == DeviceKind::kReference) return Status();
  // Exporters such as paddle2onnx keep weights in Constant nodes; the passes need initializers.
  stats.constants_promoted = PromoteConstantNodes(graph);
  // tf2onnx's explicit zero Pad before a strided Conv becomes the Conv's own padding: no copy of the
  // padded tensor, and the Conv stays in the device's layout.
  if (options.fuse) FoldPadIntoConv(graph);
  if (options.fold_batchnorm) {
    ASSIGN_OR_RETURN(stats.batchnorms_folded, FoldBatchNorm(graph));
  }
  // A per-channel Mul / Add right after a Conv (PP-LCNet's learnable affine blocks, a scale that
  // exporters leave behind) becomes the Conv's weights and bias: no pass over its output.
  if (options.fuse) FoldAffineIntoConv(graph);
  if (options.fuse) FactorResidualScale(graph);
  // An int8 target runs a QDQ model with its own scales: DequantizeLinear → layer → QuantizeLinear
  // patterns become the device's QLinearConv/QLinearMatMul kernels (before FusedConv can take a layer).
  if (options.fuse && target.precision == Precision::kInt8 && options.kernels != nullptr) {
    QdqFusionOptions qdq{
        .conv = !options.kernels->Find("QLinearConv", "", target.kind, target.precision).empty(),
        .matmul = !options.kernels->Find("QLinearMatMul", "", target.kind, target.precision).empty(),
        .gemm = !options.kernels->Find("QLinearGemm", kChipfitDomain, target.kind, target.precision).empty()};
    for (const auto& [name, reason] : options.keep_fp32) qdq.keep.insert(name);
    if (qdq.conv || qdq.matmul) FuseQdqPatterns(graph, qdq);
  }
  const bool device_fuses =
      options.kernels != nullptr &&
      (!options.kernels->Find("FusedConv", kChipfitDomain, target.kind, target.precision).empty() ||
       !options.kernels->Find("FusedConv", kChipfitDomain, target.kind, Precision::kFp32).empty());
  // SiLU (x · Sigmoid(x)) fuses where the device's FusedConv takes it: the CPU's (oneDNN's swish
  // post-op); OpenCL's and CUDA's epilogues do not have it yet.
  if (options.fuse && device_fuses) stats.fused = FuseConvActivations(graph, target.kind == DeviceKind::kCpu);
  // ShuffleNet's channel shuffle as one kernel where the device has it (in its producer's layout).
  const bool device_shuffles =
      options.kernels != nullptr &&
      (!options.kernels->Find("ChannelShuffle", kChipfitDomain, target.kind, target.precision).empty() ||
       !options.kernels->Find("ChannelShuffle", kChipfitDomain, target.kind, Precision::kFp32).empty());
  if (options.fuse && device_shuffles) stats.fused += FuseChannelShuffle(graph);
  // Linear layers (MatMul + bias Add [+ Relu / GELU]) as one kernel with the bias and activation as
  // post-ops, where the device has that kernel.
  const bool device_fuses_matmul =
      options.kernels != nullptr &&
      (!options.kernels->Find("FusedMatMul", kChipfitDomain, target.kind, target.precision).empty() ||
       !options.kernels->Find("FusedMatMul", kChipfitDomain, target.kind, Precision::kFp32).empty());
  if (options.fuse && device_fuses_matmul) stats.fused += FuseMatMulBiasActivation(graph);
  // Attention's head transposes and scale as strides and an output scale of its products: the CPU's
  // FusedMatMul reads them (oneDNN matmul takes strided operands).
  if (options.fuse && device_fuses_matmul && target.kind == DeviceKind::kCpu) {
    stats.fused += FoldTransposesIntoMatMul(graph);
  }
  return Status();
}

void BindGraphInputs(CompileState& state) {
  Program& program = state.program;
  for (const auto& [name, tensor] : state.graph->initializers) program.SetConstant(program.SlotFor(name), tensor);
  for (const ValueDesc& in : state.graph->inputs) {
    auto& slot = program.slot(program.SlotFor(in.name));
    slot.kind = Program::Kind::kInput;
    slot.dtype = in.dtype;
    slot.shape = in.shape;
    slot.shape_known = in.has_shape && FullyKnown(in.shape);
    slot.rank_known = in.has_shape;
    slot.sequence_or_optional = in.sequence || in.optional;
  }
}

Status LowerNode(CompileState& state, const Node& node) {
  ASSIGN_OR_RETURN(std::optional<NodeStep> lowered, FoldAndSpecialise(state, node));
  if (!lowered) return Status();
  if (HasSubgraphs(node)) {
    // The node itself only steers its bodies from the host; the bodies' nodes are placed on the
    // target like any other (CompileBodies), so it is neither a device kernel nor a fallback.
    RETURN_IF_ERROR(InsertReordersAndCopies(state, lowered->step));
    RETURN_IF_ERROR(CompileBodies(state, *lowered));
    return AppendStep(state, std::move(*lowered));
  }
  if (state.target.kind != DeviceKind::kReference) {
    AssignPrecision(state, *lowered);
    RETURN_IF_ERROR(Place(state, *lowered));
  }
  RETURN_IF_ERROR(InsertReordersAndCopies(state, lowered->step));
  return AppendStep(state, std::move(*lowered));
}

Result<std::optional<NodeStep>> FoldAndSpecialise(CompileState& state, const Node& node) {
  Program& program = state.program;
  const OpEntry* op = FindReferenceOp(node.op_type, node.domain);
  if (op == nullptr) {
    state.unsupported.push_back(UnsupportedReason(node));
    for (const std::string& out : node.outputs) {
      if (!out.empty()) program.SlotFor(out);
    }
    return std::optional<NodeStep>();
  }
  NodeStep lowered{.step = {.node = &node, .op = op}, .precision = state.target.precision};
  Program::Step& step = lowered.step;
  bool all_constant = true;
  for (const std::string& name : node.inputs) {
    if (name.empty()) {
      step.in.push_back(-1);
      continue;
    }
    const int id = program.SlotFor(name);
    step.in.push_back(id);
    all_constant &= program.slot(id).constant != nullptr;
  }
  for (const std::string& name : node.outputs) step.out.push_back(name.empty() ? -1 : program.SlotFor(name));
  ASSIGN_OR_RETURN(const bool folded, FoldNode(state, step, all_constant));
  if (folded) return std::optional<NodeStep>();
  ASSIGN_OR_RETURN(lowered.cost, SpecialiseShapes(state, step));
  lowered.info = {.name = node.name,
                  .op_type = node.op_type,
                  .onnx_nodes = node.covers.empty() ? std::vector<std::string>{node.name} : node.covers,
                  .device = "ref",
                  .implementation = "reference",
                  .outputs = node.outputs};
  return std::optional<NodeStep>(std::move(lowered));
}

void AssignPrecision(const CompileState& state, NodeStep& lowered) {
  std::string kept_reason;
  for (const std::string& name : lowered.info.onnx_nodes) {
    if (auto it = state.options.keep_fp32.find(name); it != state.options.keep_fp32.end()) kept_reason = it->second;
  }
  const bool kept = !kept_reason.empty() && state.target.precision != Precision::kFp32;
  lowered.precision = kept ? Precision::kFp32 : state.target.precision;
  lowered.precision_reason = kept ? std::move(kept_reason) : std::string();
}

// For a precision other than fp32 the device's fp32 implementations come after the target's (the
// node then computes in fp32, and the reason is kept); the reference kernel is the implicit last
// entry, and every refusal becomes part of the fallback's reason.
Status Place(CompileState& state, NodeStep& lowered) {
  const Node& node = *lowered.step.node;
  const Target& target = state.target;
  const CompileOptions& options = state.options;
  KernelInfo& info = lowered.info;
  if (options.kernels == nullptr) {
    info.fallback_reason = "no " + target.ToString() + " kernel for " + node.op_type;
    state.fallbacks.push_back({node.name, node.op_type, info.fallback_reason});
    return Status();
  }
  const InitValues values(state.program, lowered.step);
  DeviceContext* device = options.device.get();
  std::string refusals;
  if (const std::string unknown = InputOfUnknownRank(state.program, lowered.step); !unknown.empty()) {
    // Kernels are chosen for a rank; a body input without a declared shape has none yet. A value
    // without an element type is a sequence or an optional (or comes from one).
    const Program::Slot& slot = state.program.slot(state.program.ids.at(unknown));
    if (!slot.sequence_or_optional && PlaceForRunTimeShapes(state, lowered)) return Status();
    info.fallback_reason = slot.sequence_or_optional
                               ? "input '" + unknown +
                                     "' is a sequence or optional value (these stay on the host, on the reference "
                                     "kernels)"
                           : slot.dtype != DType::kUndefined
                               ? "input '" + unknown + "' has a rank known only at run time"
                               : "input '" + unknown +
                                     "' has a type known only at run time (a sequence or optional value, which "
                                     "stays on the host on the reference kernels, or a tensor whose type the compile "
                                     "could not infer)";
    state.fallbacks.push_back({node.name, node.op_type, info.fallback_reason});
    return Status();
  }
  if (device != nullptr && lowered.step.dynamic) {
    // Device memory is planned at compile time: a kernel there needs its shapes now.
    refusals = "output shapes are only known at run time; " + target.DeviceId() + " kernels need static shapes";
  } else if (lowered.precision != target.precision) {
    info.precision_reason = lowered.precision_reason;
    RETURN_IF_ERROR(
        TryImplementations(state, lowered, values, *options.kernels, target.kind, lowered.precision, device, refusals));
  } else {
    RETURN_IF_ERROR(
        TryImplementations(state, lowered, values, *options.kernels, target.kind, target.precision, device, refusals));
    // On a device with its own memory every float tensor has the target's storage type, so its
    // fp32 kernels are no alternative; the fallback below is.
    if (lowered.step.kernel == nullptr && target.precision != Precision::kFp32 && device == nullptr) {
      info.precision_reason =
          refusals.empty() ? "no " + target.ToString() + " kernel for " + node.op_type : std::move(refusals);
      refusals.clear();
      RETURN_IF_ERROR(TryImplementations(state, lowered, values, *options.kernels, target.kind, Precision::kFp32,
                                         nullptr, refusals));
    }
  }
  if (lowered.step.kernel != nullptr) return Status();
  if (lowered.step.dynamic && PlaceForRunTimeShapes(state, lowered)) return Status();
  return FallBack(state, lowered, values, refusals);
}

// A node whose input shapes are known only when the model runs, on a device that computes in host
// memory: its device kernel is built for the shapes each run meets (RunTimeShapedKernel), with the
// reference kernel only for shapes every implementation refuses (the kernel's info then says so).
bool PlaceForRunTimeShapes(CompileState& state, NodeStep& lowered) {
  const Program::Step& step = lowered.step;
  const Target& target = state.target;
  const CompileOptions& options = state.options;
  if (options.device != nullptr || options.kernels == nullptr || step.op->self_allocating) return false;
  const Node& node = *step.node;
  std::vector<RunTimeShapedKernel::Candidate> candidates;
  for (Precision precision : {lowered.precision, Precision::kFp32}) {
    for (const KernelImpl& impl : options.kernels->Find(node.op_type, node.domain, target.kind, precision)) {
      candidates.push_back({impl, precision});
    }
    if (lowered.precision == Precision::kFp32) break;
  }
  if (candidates.empty()) return false;
  std::vector<const Tensor*> constants;
  for (int id : step.in) constants.push_back(id < 0 ? nullptr : state.program.slot(id).constant);
  lowered.step.kernel = std::make_unique<RunTimeShapedKernel>(
      node, state.graph->opset, std::move(candidates), std::move(constants), options.quant,
      options.allow_fallback ? step.op->run : nullptr, step.op->infer, target.DeviceId());
  lowered.info.device = target.DeviceId();
  lowered.info.implementation = "built per shape at run time";
  lowered.info.precision = PrecisionName(lowered.precision);
  return true;
}

// Device memory holds plain order only: a device input is reordered to plain on the host first.
Status InsertReordersAndCopies(CompileState& state, Program::Step& step) {
  const Node* node = step.node;
  for (size_t k = 0; k < step.in.size(); ++k) {
    if (step.in[k] < 0) continue;
    if (step.kernel && step.kernel->InputOnDevice(k)) {
      ASSIGN_OR_RETURN(step.in[k], SlotInLayout(state, step.in[k], Layout::kPlain, node));
      ASSIGN_OR_RETURN(step.in[k], SlotOn(state, step.in[k], true, node));
      step.on_device = true;
      continue;
    }
    ASSIGN_OR_RETURN(step.in[k], SlotOn(state, step.in[k], false, node));
    const Layout want = step.kernel ? step.kernel->InputLayout(k) : Layout::kPlain;
    ASSIGN_OR_RETURN(step.in[k], SlotInLayout(state, step.in[k], want, node));
  }
  return Status();
}

// The shape a control-flow output has whatever the run does, when its bodies' compiled outputs say
// so: both If branches agree; a Loop's or Scan's carried value keeps its initial shape; a Scan output
// stacks the body's along the scan inputs' length. The kernel still allocates it; the executor
// checks the shape it made, and the steps after it are compiled for that shape.
void SetControlFlowOutputShapes(CompileState& state, Program::Step& step) {
  Program& program = state.program;
  const Node& node = *step.node;
  auto body_output = [&](const std::string& attribute, size_t i) -> const ValueDesc* {
    for (const Program::Step::Body& body : step.bodies) {
      if (body.attribute != attribute) continue;
      const auto& outputs = body.model->outputs();
      return i < outputs.size() && outputs[i].has_shape && FullyKnown(outputs[i].shape) ? &outputs[i] : nullptr;
    }
    return nullptr;
  };
  auto set = [&](size_t output, DType dtype, const Shape& shape) {
    if (output >= step.out.size() || step.out[output] < 0 || dtype == DType::kUndefined) return;
    Program::Slot& slot = program.slot(step.out[output]);
    slot.dtype = dtype;
    slot.shape = shape;
    slot.shape_known = true;
  };
  // A carried value: the body returns it with the shape it came in with.
  auto carried = [&](size_t output, size_t input, const ValueDesc* returned) {
    if (returned == nullptr || input >= step.in.size() || step.in[input] < 0) return;
    const Program::Slot& initial = program.slot(step.in[input]);
    if (initial.shape_known && initial.shape == returned->shape && initial.dtype == returned->dtype) {
      set(output, initial.dtype, initial.shape);
    }
  };
  if (node.op_type == "If") {
    for (size_t i = 0; i < step.out.size(); ++i) {
      const ValueDesc* a = body_output("then_branch", i);
      const ValueDesc* b = body_output("else_branch", i);
      if (a != nullptr && b != nullptr && a->shape == b->shape && a->dtype == b->dtype) set(i, a->dtype, a->shape);
    }
  } else if (node.op_type == "Loop") {
    for (size_t k = 0; k + 2 < step.in.size(); ++k) carried(k, k + 2, body_output("body", k + 1));
  } else if (node.op_type == "Scan" && state.graph->opset >= 9) {
    const int64_t num_scan = node.GetInt("num_scan_inputs", 0);
    const size_t states = step.in.size() >= static_cast<size_t>(num_scan) ? step.in.size() - num_scan : 0;
    for (size_t k = 0; k < states; ++k) carried(k, k, body_output("body", k));
    if (num_scan < 1 || step.in[states] < 0 || !program.slot(step.in[states]).shape_known) return;
    const Shape& first = program.slot(step.in[states]).shape;
    const std::vector<int64_t> in_axes = node.GetInts("scan_input_axes", {0});
    const int64_t in_axis = in_axes.empty() ? 0 : in_axes[0];
    const int64_t rank = static_cast<int64_t>(first.size());
    if (in_axis < -rank || in_axis >= rank) return;
    const int64_t length = first[static_cast<size_t>(in_axis < 0 ? in_axis + rank : in_axis)];
    const std::vector<int64_t> out_axes = node.GetInts("scan_output_axes");
    for (size_t k = states; k < step.out.size(); ++k) {
      const ValueDesc* per_iteration = body_output("body", k);
      if (per_iteration == nullptr || length < 1) continue;
      const int64_t out_rank = static_cast<int64_t>(per_iteration->shape.size()) + 1;
      int64_t axis = k - states < out_axes.size() ? out_axes[k - states] : 0;
      if (axis < -out_rank || axis >= out_rank) continue;
      if (axis < 0) axis += out_rank;
      Shape shape = per_iteration->shape;
      shape.insert(shape.begin() + axis, length);
      set(k, per_iteration->dtype, shape);
    }
  }
}

// A Scan body's slice inputs have a fixed shape, the scan input's without its scan axis: known at
// compile time when the scan input's is, so the body's nodes get static shapes (and device kernels).
void SetScanSliceShapes(const CompileState& state, const Program::Step& step, Graph& body) {
  const Node& node = *step.node;
  if (node.op_type != "Scan" || state.graph->opset < 9) return;
  const int64_t num_scan = node.GetInt("num_scan_inputs", 0);
  if (num_scan < 1 || static_cast<size_t>(num_scan) > step.in.size() || body.inputs.size() != step.in.size()) return;
  const size_t states = step.in.size() - static_cast<size_t>(num_scan);
  const std::vector<int64_t> axes = node.GetInts("scan_input_axes", std::vector<int64_t>(num_scan, 0));
  for (size_t j = 0; j < static_cast<size_t>(num_scan) && j < axes.size(); ++j) {
    if (step.in[states + j] < 0) continue;
    const Program::Slot& outer = state.program.slot(step.in[states + j]);
    const auto rank = static_cast<int64_t>(outer.shape.size());
    if (!outer.shape_known || axes[j] < -rank || axes[j] >= rank) continue;
    Shape slice = outer.shape;
    slice.erase(slice.begin() + (axes[j] < 0 ? axes[j] + rank : axes[j]));
    ValueDesc& in = body.inputs[states + j];
    if (in.dtype == DType::kUndefined) in.dtype = outer.dtype;
    in.has_shape = true;
    in.shape = slice;
    in.dim_params.assign(slice.size(), "");
  }
}

Status CompileBodies(CompileState& state, NodeStep& lowered) {
  Program& program = state.program;
  Program::Step& step = lowered.step;
  const Node& node = *step.node;
  lowered.info.device = state.target.kind == DeviceKind::kReference ? "ref" : "cpu";
  lowered.info.implementation = "control flow";
  for (const auto& [attribute, attr] : node.attributes) {
    if (attr.kind != Attribute::Kind::kGraph || attr.graph == nullptr) continue;
    const std::string where = node.Describe() + " " + attribute;
    Graph body = *attr.graph;
    // A Loop's carried values and a Scan's slices may change shape between iterations: the body
    // sees its own inputs' shapes when it runs.
    for (ValueDesc& in : body.inputs) std::fill(in.shape.begin(), in.shape.end(), -1);
    SetScanSliceShapes(state, step, body);
    Program::Step::Body compiled{.graph = attr.graph.get(), .attribute = attribute};
    for (const std::string& name : OuterScopeReads(*attr.graph)) {
      auto it = program.ids.find(name);
      if (it == program.ids.end()) {
        return InvalidArgument(where + " reads '" + name + "', which no enclosing graph defines before it");
      }
      const Program::Slot& slot = program.slot(it->second);
      if (slot.constant != nullptr && !slot.on_device) {
        body.initializers[name] = *slot.constant;  // shares the data
        continue;
      }
      if (!step.outer.contains(name)) {
        ASSIGN_OR_RETURN(int id, SlotOn(state, it->second, false, &node));
        ASSIGN_OR_RETURN(id, SlotInLayout(state, id, Layout::kPlain, &node));
        step.outer[name] = id;
      }
      const Program::Slot& host = program.slot(step.outer[name]);
      ValueDesc desc;
      desc.name = name;
      desc.dtype = host.dtype;
      desc.has_shape = RankKnown(host) || !host.shape.empty();
      desc.shape = host.shape;
      desc.dim_params.assign(desc.shape.size(), "");
      body.inputs.push_back(std::move(desc));
      compiled.outer_inputs.push_back(name);
    }
    auto model = Compile(body, state.target, state.options);
    if (!model.ok() && model.status().code() == StatusCode::kInvalidArgument && node.op_type == "If" &&
        !compiled.outer_inputs.empty()) {
      // A branch may be valid only for the inputs that take it (a Squeeze of a dim that is 1 only at
      // another sample rate): compiled for this run's shapes it fails although it never runs. As ONNX
      // Runtime does, it is then compiled for shapes known when it runs; if it is taken, run time
      // reports what is wrong.
      for (ValueDesc& in : body.inputs) {
        if (std::find(compiled.outer_inputs.begin(), compiled.outer_inputs.end(), in.name) !=
            compiled.outer_inputs.end()) {
          std::fill(in.shape.begin(), in.shape.end(), -1);
        }
      }
      if (auto deferred = Compile(body, state.target, state.options); deferred.ok()) model = std::move(deferred);
    }
    if (!model.ok()) return Status(model.status().code(), where + ": " + model.status().message());
    compiled.model = std::shared_ptr<CompiledModel>(std::move(model).value());
    step.bodies.push_back(std::move(compiled));
  }
  SetControlFlowOutputShapes(state, step);
  return Status();
}

void ListBodyKernels(CompileState& state) {
  for (size_t s = 0; s < state.program.steps.size(); ++s) {
    Program::Step& step = state.program.steps[s];
    for (Program::Step::Body& body : step.bodies) {
      body.kernel_offset = state.kernel_infos.size();
      const std::string prefix = step.node->name + "/" + body.attribute + "/";
      const CompiledModel& model = *body.model;
      for (KernelInfo info : model.kernels()) {
        info.name = prefix + info.name;
        for (std::string& onnx : info.onnx_nodes) onnx = prefix + onnx;
        info.parent = info.parent < 0 ? static_cast<int>(s) : static_cast<int>(body.kernel_offset) + info.parent;
        state.kernel_infos.push_back(std::move(info));
      }
      state.costs.insert(state.costs.end(), model.costs().begin(), model.costs().end());
      // The counts cover the bodies too, as the kernel list and the fallbacks do.
      const CompileStats& inner = model.stats();
      state.stats.kernels += inner.kernels;
      state.stats.device_kernels += inner.device_kernels;
      state.stats.dynamic_kernels += inner.dynamic_kernels;
      state.stats.transfers += inner.transfers;
      for (Fallback fallback : model.fallbacks()) {
        fallback.node = prefix + fallback.node;
        state.fallbacks.push_back(std::move(fallback));
      }
    }
  }
}

Status AppendStep(CompileState& state, NodeStep lowered) {
  Program& program = state.program;
  Program::Step& step = lowered.step;
  const int index = static_cast<int>(program.steps.size());
  RETURN_IF_ERROR(BindOutputs(state, step, index));
  for (int id : step.in) {
    if (id >= 0) program.slot(id).last_use = index;
  }
  // Values a body reads live until the control-flow step has run, like its own inputs.
  for (const auto& [name, id] : step.outer) program.slot(id).last_use = index;
  const Target& target = state.target;
  state.stats.dynamic_kernels += step.dynamic ? 1 : 0;
  state.stats.device_kernels +=
      lowered.info.device == target.DeviceId() && target.kind != DeviceKind::kReference ? 1 : 0;
  if (lowered.cost.known) CountBytes(program, lowered, lowered.cost);
  state.costs.push_back(lowered.cost);
  state.kernel_infos.push_back(std::move(lowered.info));
  program.steps.push_back(std::move(step));
  return Status();
}

Status ReportUnsupported(const CompileState& state) {
  const std::vector<std::string>& unsupported = state.unsupported;
  if (unsupported.empty()) return Status();
  std::string message = std::to_string(unsupported.size()) + " node(s) cannot run:";
  for (size_t i = 0; i < unsupported.size() && i < 10; ++i) message += "\n  " + unsupported[i];
  if (unsupported.size() > 10) message += "\n  …";
  return Unsupported(message);
}

Status BindGraphOutputs(CompileState& state) {
  Program& program = state.program;
  for (const ValueDesc& out : state.graph->outputs) {
    ASSIGN_OR_RETURN(const int on_host, SlotOn(state, program.SlotFor(out.name), false, nullptr));
    ASSIGN_OR_RETURN(const int id, SlotInLayout(state, on_host, Layout::kPlain, nullptr));
    auto& slot = program.slot(id);
    slot.is_output = true;
    program.output_ids.push_back(id);
    ValueDesc desc = out;
    if (slot.shape_known) {
      desc.dtype = slot.dtype;
      desc.shape = slot.shape;
      desc.has_shape = true;
      desc.dim_params.assign(slot.shape.size(), "");
    }
    state.output_descs.push_back(std::move(desc));
  }
  return Status();
}

namespace {

// A shape-only op (Reshape, Flatten, Squeeze, Unsqueeze, Identity) on the host, in plain order, with
// shapes known when compiling: its output can be its input's bytes under the new shape.
bool CanBeView(const Program& program, const Program::Step& step) {
  static const std::set<std::string, std::less<>> kShapeOnly = {"Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                                                "Identity"};
  if (step.node == nullptr || step.reorder || step.copy != Program::Step::Copy::kNone || step.dynamic ||
      step.on_device || !step.bodies.empty() || step.in.empty() || step.in[0] < 0 || step.out.size() != 1 ||
      step.out[0] < 0) {
    return false;
  }
  const Node& node = *step.node;
  if (!(node.domain.empty() || node.domain == "ai.onnx") || !kShapeOnly.contains(node.op_type)) return false;
  const Program::Slot& in = program.slot(step.in[0]);
  const Program::Slot& out = program.slot(step.out[0]);
  const bool plain_out = step.out_layouts.empty() || step.out_layouts[0] == Layout::kPlain;
  return in.kind != Program::Kind::kConstant && !in.on_device && in.layout == Layout::kPlain && in.shape_known &&
         in.dtype != DType::kString && out.kind == Program::Kind::kIntermediate && !out.is_output && !out.on_device &&
         out.layout == Layout::kPlain && plain_out && out.shape_known && out.dtype == in.dtype &&
         NumElements(out.shape) == NumElements(in.shape);
}

// Marks the steps whose output is a view of their input (CanBeView) on a device target: no kernel runs
// for them and their output takes no memory of its own, so the buffer under the view (the first
// non-view value of a chain) lives until the view's last reader.
void MarkViews(CompileState& state) {
  if (state.target.kind == DeviceKind::kReference) return;
  Program& program = state.program;
  std::vector<int> base(program.slots.size(), -1);
  for (size_t i = 0; i < program.steps.size(); ++i) {
    Program::Step& step = program.steps[i];
    if (!CanBeView(program, step)) continue;
    const auto in = static_cast<size_t>(step.in[0]);
    const int under = base[in] >= 0 ? base[in] : step.in[0];
    base[static_cast<size_t>(step.out[0])] = under;
    Program::Slot& buffer = program.slot(under);
    buffer.last_use = std::max(buffer.last_use, program.slot(step.out[0]).last_use);
    step.view = true;
    state.kernel_infos[i].implementation = "view (no copy)";
    state.costs[i].bytes_read = 0;
    state.costs[i].bytes_written = 0;
  }
}

}  // namespace

void PlanMemory(CompileState& state) {
  Program& program = state.program;
  MarkViews(state);
  // Graph outputs are returned to the caller, and dynamic values are allocated as they are made.
  std::vector<BufferRequest> requests;
  for (size_t id = 0; id < program.slots.size(); ++id) {
    auto& slot = program.slots[id];
    if (slot.kind != Program::Kind::kIntermediate || slot.is_output || !slot.shape_known || slot.producer < 0) continue;
    const Program::Step& producer = program.steps[static_cast<size_t>(slot.producer)];
    if (producer.dynamic || producer.view) continue;
    if (slot.dtype == DType::kString) continue;  // std::string objects own their bytes: never in an arena
    const BufferRequest request{program.SlotBytes(slot), slot.producer, std::max(slot.last_use, slot.producer)};
    if (slot.on_device) {
      slot.plan_index = static_cast<int>(state.device_requests.size());
      state.device_slots.push_back(static_cast<int>(id));
      state.device_requests.push_back(request);
      continue;
    }
    slot.plan_index = static_cast<int>(requests.size());
    program.planned_slots.push_back(static_cast<int>(id));
    requests.push_back(request);
  }
  program.plan = chipfit::PlanMemory(requests);
  state.stats.kernels = static_cast<int>(program.steps.size());
  state.stats.planned_arena_bytes = program.plan.arena_bytes;
  state.stats.planned_total_bytes = program.plan.total_bytes;
  for (const auto& [name, tensor] : program.constants) state.stats.constant_bytes += tensor.nbytes();
  if (state.options.device == nullptr) return;
  state.device_plan = chipfit::PlanMemory(state.device_requests, program.device->Alignment());
  state.device_needs = {.arena_bytes = state.device_plan.arena_bytes};
  for (int id : state.device_constant_slots) {
    const size_t bytes = program.SlotBytes(program.slot(id));
    state.device_needs.constant_bytes += bytes;
    state.device_needs.largest_constant = std::max(state.device_needs.largest_constant, bytes);
  }
  state.stats.device_arena_bytes = state.device_needs.arena_bytes;
  state.stats.device_constant_bytes = state.device_needs.constant_bytes;
}

Status AllocateDeviceMemory(CompileState& state) {
  if (state.options.device == nullptr) return Status();
  Program& program = state.program;
  // Everything is sized now; nothing has been allocated on the device yet.
  RETURN_IF_ERROR(program.device->CheckFits(state.device_needs));
  if (state.device_needs.arena_bytes > 0) {
    ASSIGN_OR_RETURN(program.device_arena, program.device->Allocate(state.device_needs.arena_bytes));
    for (size_t r = 0; r < state.device_slots.size(); ++r) {
      auto& slot = program.slot(state.device_slots[r]);
      ASSIGN_OR_RETURN(slot.device_buffer,
                       program.device_arena->View(state.device_plan.offsets[r], state.device_requests[r].bytes));
    }
  }
  for (int id : state.device_constant_slots) {
    auto& slot = program.slot(id);
    const size_t bytes = program.SlotBytes(slot);
    if (bytes == 0) continue;
    ASSIGN_OR_RETURN(auto allocation, program.device->Allocate(bytes));
    ASSIGN_OR_RETURN(slot.device_buffer, allocation->View(0, bytes));
    RETURN_IF_ERROR(program.device->Upload(*slot.constant, slot.device_buffer));
    program.device_constants.push_back(std::move(allocation));
  }
  for (auto& step : program.steps) {
    if (!step.on_device || step.copy != Program::Step::Copy::kNone) continue;
    for (int id : step.in) step.device_in.push_back(id < 0 ? DeviceBuffer{} : program.slot(id).device_buffer);
    for (int id : step.out) step.device_out.push_back(id < 0 ? DeviceBuffer{} : program.slot(id).device_buffer);
  }
  return Status();
}

}  // namespace chipfit::compile
