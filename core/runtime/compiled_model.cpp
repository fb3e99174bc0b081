// The executor: compile-time folding, shape specialisation and memory planning; run-time dispatch.
#include "core/runtime/compiled_model.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <set>

#include "core/graph/passes.h"
#include "core/reference/reference_kernels.h"
#include "core/runtime/layout.h"
#include "core/runtime/memory_plan.h"
#include "core/runtime/node_runner.h"

namespace chipfit {
namespace {

// Constants larger than this stay computed at run time (ConstantOfShape of a huge shape …).
constexpr size_t kMaxFoldBytes = size_t{64} << 20;

bool IsFoldable(const Node& node, const OpEntry& op) {
  static const std::set<std::string> kRandom = {"RandomNormal",      "RandomUniform", "RandomNormalLike",
                                                "RandomUniformLike", "Multinomial",   "Bernoulli"};
  return !op.self_allocating && !kRandom.contains(node.op_type);
}

std::string UnsupportedReason(const Node& node) {
  if (node.op_type == "Loop" || node.op_type == "Scan") {
    return node.Describe() + ": control flow op " + node.op_type + " is not supported yet (If is)";
  }
  const std::string domain = node.domain.empty() ? "ai.onnx" : node.domain;
  return node.Describe() + ": op " + domain + "::" + node.op_type + " is not supported";
}

bool FullyKnown(const Shape& shape) {
  for (int64_t d : shape) {
    if (d < 0) return false;
  }
  return true;
}

// Prefixes the node when a kernel's message does not name it already.
Status AtNode(const Status& status, const Node& node) {
  if (status.ok() || status.message().find(node.name) != std::string::npos) return status;
  return Status(status.code(), node.Describe() + ": " + status.message());
}

}  // namespace

struct CompiledModel::Impl {
  enum class Kind { kInput, kConstant, kIntermediate };
  struct Slot {
    std::string name{};
    Kind kind = Kind::kIntermediate;
    DType dtype = DType::kUndefined;
    Shape shape{};
    bool shape_known = false;
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
    bool reorder = false;  // a reorder the executor inserted: in[0] (order from) → out[0] (order to)
    Layout from = Layout::kPlain;
    Layout to = Layout::kPlain;
    enum class Copy { kNone, kToDevice, kToHost };
    Copy copy = Copy::kNone;  // a copy the executor inserted: in[0] → out[0] across host and device
    bool on_device = false;   // runs on the device (its timer measures it)
    std::vector<DeviceBuffer> device_in{}, device_out{};  // device kernels: buffers per input/output
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

  int SlotFor(const std::string& name) {
    auto [it, inserted] = ids.emplace(name, static_cast<int>(slots.size()));
    if (inserted) slots.push_back(Slot{.name = name});
    return it->second;
  }
  void SetConstant(int id, Tensor tensor) {
    Slot& slot = slots[static_cast<size_t>(id)];
    Tensor& stored = constants[slot.name] = std::move(tensor);
    slot.kind = Kind::kConstant;
    slot.constant = &stored;
    slot.dtype = stored.dtype();
    slot.shape = stored.shape();
    slot.shape_known = true;
  }
};

CompiledModel::CompiledModel() : impl_(std::make_unique<Impl>()) {}
CompiledModel::~CompiledModel() = default;

Result<std::unique_ptr<CompiledModel>> Compile(const Graph& graph, const Target& target,
                                               const CompileOptions& options) {
  if (target.precision != Precision::kFp32 && (target.kind == DeviceKind::kReference || options.kernels == nullptr)) {
    return Unsupported("target " + target.ToString() + ": " + std::string(PrecisionName(target.precision)) +
                       " needs device kernels; the reference kernels compute in fp32 only");
  }
  std::unique_ptr<CompiledModel> model(new CompiledModel());
  model->target_ = target;
  Graph rewritten = graph;
  if (options.eliminate_dead_nodes) model->stats_.dead_nodes = EliminateDeadNodes(rewritten);
  if (target.kind != DeviceKind::kReference) {
    // Exporters such as paddle2onnx keep weights in Constant nodes; the passes need initializers.
    model->stats_.constants_promoted = PromoteConstantNodes(rewritten);
    if (options.fold_batchnorm) {
      ASSIGN_OR_RETURN(model->stats_.batchnorms_folded, FoldBatchNorm(rewritten));
    }
    const bool device_fuses =
        options.kernels != nullptr &&
        (!options.kernels->Find("FusedConv", kChipfitDomain, target.kind, target.precision).empty() ||
         !options.kernels->Find("FusedConv", kChipfitDomain, target.kind, Precision::kFp32).empty());
    if (options.fuse && device_fuses) model->stats_.fused = FuseConvActivations(rewritten);
  }
  model->graph_ = std::make_shared<const Graph>(std::move(rewritten));
  const Graph& g = *model->graph_;
  CompiledModel::Impl& im = *model->impl_;
  using Kind = CompiledModel::Impl::Kind;
  im.device = options.device;

  for (const auto& [name, tensor] : g.initializers) im.SetConstant(im.SlotFor(name), tensor);
  for (const ValueDesc& in : g.inputs) {
    auto& slot = im.slots[static_cast<size_t>(im.SlotFor(in.name))];
    slot.kind = Kind::kInput;
    slot.dtype = in.dtype;
    slot.shape = in.shape;
    slot.shape_known = in.has_shape && FullyKnown(in.shape);
  }

  // Placement: the first implementation whose Init accepts the node wins. For a precision other
  // than fp32 the device's fp32 implementations come next (the node then computes in fp32, and the
  // reason is kept); the reference kernel is the implicit last entry, and every refusal becomes part
  // of the fallback's reason.
  auto place = [&](CompiledModel::Impl::Step& step, KernelInfo& info, const std::vector<ValueInfo>* outputs) -> Status {
    const Node& node = *step.node;
    std::vector<ValueInfo> infos;
    for (int id : step.in) {
      if (id < 0) {
        infos.emplace_back();
        continue;
      }
      const auto& slot = im.slots[static_cast<size_t>(id)];
      infos.push_back(
          {slot.dtype, slot.shape_known ? slot.shape : Shape(slot.shape.size(), -1), slot.constant, slot.layout});
    }
    std::vector<const ValueInfo*> ptrs;
    for (size_t k = 0; k < infos.size(); ++k) ptrs.push_back(step.in[k] < 0 ? nullptr : &infos[k]);
    auto try_list = [&](const KernelTable& table, DeviceKind kind, Precision precision, DeviceContext* device,
                        std::string& refusals) -> Status {
      for (const KernelImpl& impl : table.Find(node.op_type, node.domain, kind, precision)) {
        auto created = impl.create(KernelInit{node, ptrs, g.opset, precision, options.quant, device, outputs});
        if (created.ok()) {
          step.kernel = std::move(created).value();
          info.device = kind == target.kind ? target.DeviceId() : std::string(DeviceKindName(kind));
          info.implementation = impl.name;
          info.precision = PrecisionName(precision);
          return Status();
        }
        if (created.status().code() != StatusCode::kUnsupported) return AtNode(created.status(), node);
        refusals += (refusals.empty() ? "" : "; ") + std::string(impl.name) + ": " + created.status().message();
      }
      return Status();
    };
    if (options.kernels == nullptr) {
      info.fallback_reason = "no " + target.ToString() + " kernel for " + node.op_type;
      model->fallbacks_.push_back({node.name, node.op_type, info.fallback_reason});
      return Status();
    }
    DeviceContext* device = options.device.get();
    std::string refusals;
    std::string kept_reason;
    for (const std::string& name : info.onnx_nodes) {
      if (auto it = options.keep_fp32.find(name); it != options.keep_fp32.end()) kept_reason = it->second;
    }
    const bool kept = !kept_reason.empty();
    if (device != nullptr && step.dynamic) {
      // Device memory is planned at compile time: a kernel there needs its shapes now.
      refusals = "output shapes are only known at run time; " + target.DeviceId() + " kernels need static shapes";
    } else if (kept && target.precision != Precision::kFp32) {
      info.precision_reason = kept_reason;
      RETURN_IF_ERROR(try_list(*options.kernels, target.kind, Precision::kFp32, device, refusals));
    } else {
      RETURN_IF_ERROR(try_list(*options.kernels, target.kind, target.precision, device, refusals));
      // On a device with its own memory every float tensor has the target's storage type, so its
      // fp32 kernels are no alternative; the fallback below is.
      if (step.kernel == nullptr && target.precision != Precision::kFp32 && device == nullptr) {
        info.precision_reason =
            refusals.empty() ? "no " + target.ToString() + " kernel for " + node.op_type : std::move(refusals);
        refusals.clear();
        RETURN_IF_ERROR(try_list(*options.kernels, target.kind, Precision::kFp32, nullptr, refusals));
      }
    }
    if (step.kernel != nullptr) return Status();
    const std::string device_target = device != nullptr ? target.ToString() : target.DeviceId() + ":fp32";
    std::string reason = refusals.empty() ? "no " + device_target + " kernel for " + node.op_type : refusals;
    if (!info.precision_reason.empty()) reason = info.precision_reason + "; " + reason;
    info.precision_reason.clear();
    if (!options.allow_fallback) {
      return Unsupported(node.Describe() + " cannot run on " + target.ToString() + " (fallback disabled): " + reason);
    }
    if (options.fallback_kernels != nullptr) {
      std::string cpu_refusals;
      RETURN_IF_ERROR(try_list(*options.fallback_kernels, DeviceKind::kCpu, Precision::kFp32, nullptr, cpu_refusals));
    }
    info.fallback_reason = reason;
    model->fallbacks_.push_back({node.name, node.op_type, std::move(reason)});
    return Status();
  };
  // The slot holding value `id` in order `want`: itself, a constant reordered now, or the output
  // of a reorder step inserted here (shared by every later reader that wants the same order).
  auto slot_in_layout = [&](int id, Layout want,
                            std::optional<std::reference_wrapper<const Node>> reader) -> Result<int> {
    auto& src = im.slots[static_cast<size_t>(id)];
    if (src.layout == want || !src.shape_known || LayoutsAgree(src.shape)) return id;
    if (auto it = im.reordered.find({id, want}); it != im.reordered.end()) return it->second;
    const std::string name = src.name + "@" + std::string(LayoutName(want));
    const int out = im.SlotFor(name);
    im.reordered[{id, want}] = out;
    auto& src_slot = im.slots[static_cast<size_t>(id)];  // SlotFor may have grown `slots`
    if (src_slot.constant != nullptr) {
      Tensor converted(src_slot.dtype, src_slot.shape);
      RETURN_IF_ERROR(ReorderTensor(*src_slot.constant, src_slot.layout, converted, want));
      im.SetConstant(out, std::move(converted));
      im.slots[static_cast<size_t>(out)].layout = want;
      return out;
    }
    const Node& at = reader ? reader->get() : *im.steps[static_cast<size_t>(src_slot.producer)].node;
    const int index = static_cast<int>(im.steps.size());
    auto& dst = im.slots[static_cast<size_t>(out)];
    dst.dtype = src_slot.dtype;
    dst.shape = src_slot.shape;
    dst.shape_known = true;
    dst.layout = want;
    dst.producer = index;
    src_slot.last_use = index;
    CompiledModel::Impl::Step step{.node = &at,
                                   .in = {id},
                                   .out = {out},
                                   .out_layouts = {want},
                                   .reorder = true,
                                   .from = src_slot.layout,
                                   .to = want};
    im.steps.push_back(std::move(step));
    const auto bytes = static_cast<int64_t>(NumElements(dst.shape) * static_cast<int64_t>(DTypeSize(dst.dtype)));
    model->costs_.push_back({.flops = 0, .bytes_read = bytes, .bytes_written = bytes});
    model->kernel_infos_.push_back(
        {.name = at.name + "/reorder:" + src_slot.name,
         .op_type = "Reorder",
         .onnx_nodes = {at.name},
         .device = target.DeviceId(),
         .implementation = "reorder:" + std::string(LayoutName(src_slot.layout)) + "->" + std::string(LayoutName(want)),
         .outputs = {name}});
    return out;
  };

  // The slot holding value `id` in device memory (`on_device`) or on the host: itself, a constant
  // uploaded once after planning, or the output of a copy step inserted here (shared by every
  // later reader on the same side).
  std::vector<int> device_constant_slots;
  auto slot_on = [&](int id, bool on_device, std::optional<std::reference_wrapper<const Node>> reader) -> Result<int> {
    if (im.slots[static_cast<size_t>(id)].on_device == on_device) return id;
    if (auto it = im.moved.find({id, on_device}); it != im.moved.end()) return it->second;
    const std::string device_id = target.DeviceId();
    const std::string name = im.slots[static_cast<size_t>(id)].name + (on_device ? "@" + device_id : "@host");
    const int out = im.SlotFor(name);
    im.moved[{id, on_device}] = out;
    auto& src = im.slots[static_cast<size_t>(id)];
    auto& dst = im.slots[static_cast<size_t>(out)];
    if (src.constant != nullptr && on_device) {
      dst.kind = Kind::kConstant;
      dst.dtype = src.dtype;
      dst.shape = src.shape;
      dst.shape_known = true;
      dst.on_device = true;
      dst.constant = src.constant;  // the host copy: what is uploaded, and what shape inference reads
      device_constant_slots.push_back(out);
      return out;
    }
    if (!src.shape_known) {
      return Internal("value '" + src.name + "' would move between host and " + device_id +
                      " with a shape known only at run time");
    }
    const Node& at = reader ? reader->get() : *im.steps[static_cast<size_t>(src.producer)].node;
    const int index = static_cast<int>(im.steps.size());
    dst.dtype = src.dtype;
    dst.shape = src.shape;
    dst.shape_known = true;
    dst.on_device = on_device;
    dst.producer = index;
    src.last_use = index;
    using Copy = CompiledModel::Impl::Step::Copy;
    im.steps.push_back({.node = &at,
                        .in = {id},
                        .out = {out},
                        .out_layouts = {Layout::kPlain},
                        .copy = on_device ? Copy::kToDevice : Copy::kToHost,
                        .on_device = true});
    const auto bytes = static_cast<int64_t>(im.SlotBytes(on_device ? dst : src));
    model->costs_.push_back({.flops = 0, .bytes_read = bytes, .bytes_written = bytes});
    const std::string what = on_device ? "copy to " + device_id : "copy from " + device_id;
    model->kernel_infos_.push_back({.name = at.name + "/" + what + ":" + src.name,
                                    .op_type = "Copy",
                                    .onnx_nodes = {at.name},
                                    .device = device_id,
                                    .implementation = what,
                                    .outputs = {name},
                                    .precision = std::string(PrecisionName(target.precision))});
    ++model->stats_.transfers;
    return out;
  };

  std::vector<std::string> unsupported;
  model->stats_.graph_nodes = static_cast<int>(graph.nodes.size());
  for (const Node& node : g.nodes) {
    const OpEntry* op = FindReferenceOp(node.op_type, node.domain);
    if (op == nullptr) {
      unsupported.push_back(UnsupportedReason(node));
      for (const std::string& out : node.outputs) {
        if (!out.empty()) im.SlotFor(out);
      }
      continue;
    }
    CompiledModel::Impl::Step step{.node = &node, .op = op};
    bool all_constant = true;
    for (const std::string& name : node.inputs) {
      if (name.empty()) {
        step.in.push_back(-1);
        continue;
      }
      const int id = im.SlotFor(name);
      step.in.push_back(id);
      all_constant &= im.slots[static_cast<size_t>(id)].constant != nullptr;
    }
    for (const std::string& name : node.outputs) step.out.push_back(name.empty() ? -1 : im.SlotFor(name));

    // Fold what needs no input data: all-constant nodes, and Shape/Size of a static shape.
    const bool shape_only = (node.op_type == "Shape" || node.op_type == "Size") && !step.in.empty() &&
                            step.in[0] >= 0 && im.slots[static_cast<size_t>(step.in[0])].shape_known;
    if (options.fold_constants && IsFoldable(node, *op) && (all_constant || shape_only)) {
      std::vector<Tensor> inputs;
      for (int id : step.in) {
        if (id < 0) {
          inputs.emplace_back();
          continue;
        }
        const auto& slot = im.slots[static_cast<size_t>(id)];
        // Shape and Size read only the shape; a view without data is enough for them.
        inputs.push_back(slot.constant ? *slot.constant : Tensor::View(slot.dtype, slot.shape, nullptr));
      }
      auto folded = RunNodeOnReference(node, g.opset, inputs);
      if (!folded.ok()) return folded.status();
      size_t bytes = 0;
      for (const Tensor& t : *folded) bytes += t.nbytes();
      if (bytes <= kMaxFoldBytes) {
        for (size_t i = 0; i < step.out.size(); ++i) {
          if (step.out[i] >= 0) im.SetConstant(step.out[i], std::move((*folded)[i]));
        }
        ++model->stats_.folded_nodes;
        continue;
      }
    }

    // Static shape inference; a node whose shapes need run-time data makes its outputs dynamic.
    step.dynamic = op->self_allocating;
    KernelCost cost{.known = false};
    std::vector<CompiledModel::Impl::Slot*> in_slots;
    for (int id : step.in) {
      auto* slot = id < 0 ? nullptr : &im.slots[static_cast<size_t>(id)];
      if (slot != nullptr && !slot->shape_known) step.dynamic = true;
      in_slots.push_back(slot);
    }
    if (!step.dynamic) {
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
      InferContext ctx(node, g.opset, info_ptrs);
      Status status = op->infer(ctx);
      if (!status.ok() && !ctx.value_missing()) return AtNode(status, node);
      if (status.ok()) {
        cost = EstimateCost(node, info_ptrs, ctx.outputs());
        model->stats_.flops += cost.flops;
        for (size_t i = 0; i < step.out.size(); ++i) {
          if (step.out[i] < 0) continue;
          const ValueInfo& out = ctx.outputs()[i];
          if (out.dtype == DType::kUndefined || !FullyKnown(out.shape)) {
            return Internal(node.Describe() + ": shape function left output " + std::to_string(i) + " undefined");
          }
          auto& slot = im.slots[static_cast<size_t>(step.out[i])];
          slot.dtype = out.dtype;
          slot.shape = out.shape;
          slot.shape_known = true;
        }
      } else {
        step.dynamic = true;
      }
    }
    KernelInfo info{.name = node.name,
                    .op_type = node.op_type,
                    .onnx_nodes = node.covers.empty() ? std::vector<std::string>{node.name} : node.covers,
                    .device = "ref",
                    .implementation = "reference",
                    .outputs = node.outputs};
    if (target.kind != DeviceKind::kReference) {
      std::vector<ValueInfo> out_infos;
      for (int id : step.out) {
        if (id < 0) {
          out_infos.emplace_back();
          continue;
        }
        const auto& slot = im.slots[static_cast<size_t>(id)];
        out_infos.push_back({slot.dtype, slot.shape_known && !step.dynamic ? slot.shape : Shape{}});
      }
      RETURN_IF_ERROR(place(step, info, step.dynamic ? nullptr : &out_infos));
    }
    // Readers get their inputs where (host or device) and in the order they asked for; copies and
    // reorders go in right before them. Device memory holds plain order only.
    for (size_t k = 0; k < step.in.size(); ++k) {
      if (step.in[k] < 0) continue;
      if (step.kernel && step.kernel->InputOnDevice(k)) {
        ASSIGN_OR_RETURN(step.in[k], slot_in_layout(step.in[k], Layout::kPlain, node));
        ASSIGN_OR_RETURN(step.in[k], slot_on(step.in[k], true, node));
        step.on_device = true;
        continue;
      }
      ASSIGN_OR_RETURN(step.in[k], slot_on(step.in[k], false, node));
      const Layout want = step.kernel ? step.kernel->InputLayout(k) : Layout::kPlain;
      ASSIGN_OR_RETURN(step.in[k], slot_in_layout(step.in[k], want, node));
    }
    const int index = static_cast<int>(im.steps.size());
    for (size_t k = 0; k < step.out.size(); ++k) {
      const Layout layout = step.kernel ? step.kernel->OutputLayout(k) : Layout::kPlain;
      step.out_layouts.push_back(layout);
      if (step.out[k] < 0) continue;
      auto& slot = im.slots[static_cast<size_t>(step.out[k])];
      slot.producer = index;
      slot.layout = layout;
      if (step.kernel && step.kernel->OutputOnDevice(k)) {
        if (options.device == nullptr || !slot.shape_known || step.dynamic) {
          return Internal(node.Describe() +
                          ": a kernel wrote device memory without a device context or a static shape");
        }
        slot.on_device = true;
        step.on_device = true;
      }
      if (layout != Layout::kPlain && (step.dynamic || !slot.shape_known)) {
        return Internal(node.Describe() + ": a kernel wrote " + std::string(LayoutName(layout)) +
                        " for an output whose shape is only known at run time");
      }
    }
    for (int id : step.in) {
      if (id >= 0) im.slots[static_cast<size_t>(id)].last_use = index;
    }
    model->stats_.dynamic_kernels += step.dynamic ? 1 : 0;
    model->stats_.device_kernels += info.device == target.DeviceId() && target.kind != DeviceKind::kReference ? 1 : 0;
    if (cost.known) {
      // Bytes at the dtypes the kernel actually moves: device-resident tensors in the device's
      // storage type (fp16 on OpenCL fp16), constant float weights as an int8/bf16 kernel packed
      // them (1 or 2 bytes); host activations stay f32 (int8/bf16 kernels convert them inside).
      const size_t packed = info.precision == "int8" ? 1 : info.precision == "bf16" ? 2 : 0;
      auto bytes = [&](int id) -> int64_t {
        if (id < 0) return 0;
        const auto& slot = im.slots[static_cast<size_t>(id)];
        size_t size = DTypeSize(im.StorageType(slot));
        const bool weight = slot.constant != nullptr && slot.dtype == DType::kF32 && slot.shape.size() >= 2;
        if (packed != 0 && weight) size = packed;
        return NumElements(slot.shape) * static_cast<int64_t>(size);
      };
      cost.bytes_read = 0;
      cost.bytes_written = 0;
      for (int id : step.in) cost.bytes_read += bytes(id);
      for (int id : step.out) cost.bytes_written += bytes(id);
    }
    model->costs_.push_back(cost);
    model->kernel_infos_.push_back(std::move(info));
    im.steps.push_back(std::move(step));
  }
  if (!unsupported.empty()) {
    std::string message = std::to_string(unsupported.size()) + " node(s) cannot run:";
    for (size_t i = 0; i < unsupported.size() && i < 10; ++i) message += "\n  " + unsupported[i];
    if (unsupported.size() > 10) message += "\n  …";
    return Unsupported(message);
  }

  for (const ValueDesc& out : g.outputs) {
    ASSIGN_OR_RETURN(const int on_host, slot_on(im.SlotFor(out.name), false, std::nullopt));
    ASSIGN_OR_RETURN(const int id, slot_in_layout(on_host, Layout::kPlain, std::nullopt));
    auto& slot = im.slots[static_cast<size_t>(id)];
    slot.is_output = true;
    im.output_ids.push_back(id);
    ValueDesc desc = out;
    if (slot.shape_known) {
      desc.dtype = slot.dtype;
      desc.shape = slot.shape;
      desc.has_shape = true;
      desc.dim_params.assign(slot.shape.size(), "");
    }
    model->output_descs_.push_back(std::move(desc));
  }

  // Plan every statically shaped intermediate that is not a graph output (those are returned):
  // host values in the host arena, device values in one device arena.
  std::vector<BufferRequest> requests, device_requests;
  std::vector<int> device_slots;
  for (size_t id = 0; id < im.slots.size(); ++id) {
    auto& slot = im.slots[id];
    if (slot.kind != Kind::kIntermediate || slot.is_output || !slot.shape_known || slot.producer < 0) continue;
    if (im.steps[static_cast<size_t>(slot.producer)].dynamic) continue;
    const BufferRequest request{im.SlotBytes(slot), slot.producer, std::max(slot.last_use, slot.producer)};
    if (slot.on_device) {
      slot.plan_index = static_cast<int>(device_requests.size());
      device_slots.push_back(static_cast<int>(id));
      device_requests.push_back(request);
      continue;
    }
    slot.plan_index = static_cast<int>(requests.size());
    im.planned_slots.push_back(static_cast<int>(id));
    requests.push_back(request);
  }
  im.plan = PlanMemory(requests);
  model->stats_.kernels = static_cast<int>(im.steps.size());
  model->stats_.planned_arena_bytes = im.plan.arena_bytes;
  model->stats_.planned_total_bytes = im.plan.total_bytes;
  for (const auto& [name, tensor] : im.constants) model->stats_.constant_bytes += tensor.nbytes();
  if (options.device != nullptr) {
    const MemoryPlan device_plan = PlanMemory(device_requests, im.device->Alignment());
    DeviceMemoryNeeds needs{.arena_bytes = device_plan.arena_bytes};
    for (int id : device_constant_slots) {
      const size_t bytes = im.SlotBytes(im.slots[static_cast<size_t>(id)]);
      needs.constant_bytes += bytes;
      needs.largest_constant = std::max(needs.largest_constant, bytes);
    }
    model->stats_.device_arena_bytes = needs.arena_bytes;
    model->stats_.device_constant_bytes = needs.constant_bytes;
    // Everything is sized now; nothing has been allocated on the device yet.
    RETURN_IF_ERROR(im.device->CheckFits(needs));
    if (needs.arena_bytes > 0) {
      ASSIGN_OR_RETURN(im.device_arena, im.device->Allocate(needs.arena_bytes));
      for (size_t r = 0; r < device_slots.size(); ++r) {
        auto& slot = im.slots[static_cast<size_t>(device_slots[r])];
        ASSIGN_OR_RETURN(slot.device_buffer, im.device_arena->View(device_plan.offsets[r], device_requests[r].bytes));
      }
    }
    for (int id : device_constant_slots) {
      auto& slot = im.slots[static_cast<size_t>(id)];
      const size_t bytes = im.SlotBytes(slot);
      if (bytes == 0) continue;
      ASSIGN_OR_RETURN(auto allocation, im.device->Allocate(bytes));
      ASSIGN_OR_RETURN(slot.device_buffer, allocation->View(0, bytes));
      RETURN_IF_ERROR(im.device->Upload(*slot.constant, slot.device_buffer));
      im.device_constants.push_back(std::move(allocation));
    }
    for (auto& step : im.steps) {
      if (!step.on_device || step.copy != CompiledModel::Impl::Step::Copy::kNone) continue;
      for (int id : step.in)
        step.device_in.push_back(id < 0 ? DeviceBuffer{} : im.slots[static_cast<size_t>(id)].device_buffer);
      for (int id : step.out)
        step.device_out.push_back(id < 0 ? DeviceBuffer{} : im.slots[static_cast<size_t>(id)].device_buffer);
    }
  }
  return model;
}

Result<std::vector<Tensor>> CompiledModel::Run(const std::map<std::string, Tensor>& inputs, RunObserver* observer,
                                               std::stop_token stop) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  Impl& im = *impl_;
  const Graph& g = *graph_;
  std::vector<Tensor> values(im.slots.size());
  for (const ValueDesc& desc : g.inputs) {
    auto it = inputs.find(desc.name);
    const Impl::Slot& slot = im.slots[static_cast<size_t>(im.ids.at(desc.name))];
    const std::string expected = std::string(DTypeName(slot.dtype)) + "[" + ShapeToString(slot.shape) + "]";
    if (it == inputs.end()) return InvalidArgument("missing input '" + desc.name + "' (expected " + expected + ")");
    const Tensor& t = it->second;
    if (t.dtype() != slot.dtype || (slot.shape_known && t.shape() != slot.shape)) {
      return InvalidArgument("input '" + desc.name + "' is " + DescribeTensor(t) + ", the model expects " + expected);
    }
    values[static_cast<size_t>(im.ids.at(desc.name))] = t;
  }
  for (const auto& [name, tensor] : inputs) {
    const auto it = im.ids.find(name);
    if (it == im.ids.end() || im.slots[static_cast<size_t>(it->second)].kind != Impl::Kind::kInput) {
      std::string names;
      for (const ValueDesc& desc : g.inputs) names += (names.empty() ? "" : ", ") + desc.name;
      return InvalidArgument("the model has no input named '" + name + "' (inputs: " + names + ")");
    }
  }
  if (!im.arena && im.plan.arena_bytes > 0) {
    void* p = std::aligned_alloc(64, (im.plan.arena_bytes + 63) / 64 * 64);
    if (p == nullptr) return Internal("cannot allocate the " + std::to_string(im.plan.arena_bytes) + "-byte arena");
    im.arena.reset(p);
  }
  // Values in device memory are seen as dtype + shape without host data (the kernels get the
  // buffers through KernelContext::device_input/device_output).
  for (size_t id = 0; id < im.slots.size(); ++id) {
    const Impl::Slot& slot = im.slots[id];
    if (slot.on_device) values[id] = Tensor::View(im.StorageType(slot), slot.shape, nullptr);
  }
  auto get = [&](int id) -> const Tensor* {
    const Impl::Slot& slot = im.slots[static_cast<size_t>(id)];
    return slot.constant != nullptr && !slot.on_device ? slot.constant : &values[static_cast<size_t>(id)];
  };
  const ValueLookup lookup = [&](const std::string& name) -> const Tensor* {
    auto it = im.ids.find(name);
    if (it == im.ids.end()) return nullptr;
    const Tensor* t = get(it->second);
    return t->defined() ? t : nullptr;
  };
  const SubgraphRunner subgraphs = [&](const Graph& sub, const std::vector<Tensor>& sub_inputs) {
    std::map<std::string, Tensor> named;
    for (size_t i = 0; i < sub_inputs.size() && i < sub.inputs.size(); ++i) named[sub.inputs[i].name] = sub_inputs[i];
    return InterpretGraph(sub, named, lookup, stop);
  };

  std::vector<const Tensor*> in_ptrs;
  std::vector<Tensor*> out_ptrs;
  for (size_t i = 0; i < im.steps.size(); ++i) {
    const Impl::Step& step = im.steps[i];
    const Node& node = *step.node;
    if (stop.stop_requested()) return Cancelled("run cancelled before " + node.Describe());
    in_ptrs.clear();
    for (int id : step.in) in_ptrs.push_back(id < 0 ? nullptr : get(id));
    out_ptrs.clear();
    const bool self_allocating = step.op != nullptr && step.op->self_allocating;
    if (step.dynamic && !self_allocating) {
      const TensorInfos infos(in_ptrs);
      InferContext ctx(node, g.opset, infos.pointers());
      RETURN_IF_ERROR(AtNode(step.op->infer(ctx), node));
      for (size_t k = 0; k < step.out.size(); ++k) {
        if (step.out[k] < 0) continue;
        const ValueInfo& out = ctx.outputs()[k];
        values[static_cast<size_t>(step.out[k])] = Tensor(out.dtype, out.shape);
      }
    }
    for (int id : step.out) {
      if (id < 0) {
        out_ptrs.push_back(nullptr);
        continue;
      }
      Tensor& value = values[static_cast<size_t>(id)];
      const Impl::Slot& slot = im.slots[static_cast<size_t>(id)];
      if (slot.on_device) {
        // already a view (above)
      } else if (self_allocating) {
        value = Tensor();
      } else if (!step.dynamic) {
        value = slot.plan_index >= 0 ? Tensor::View(slot.dtype, slot.shape,
                                                    static_cast<char*>(im.arena.get()) +
                                                        im.plan.offsets[static_cast<size_t>(slot.plan_index)])
                                     : Tensor(slot.dtype, slot.shape);
      }
      out_ptrs.push_back(&value);
    }
    KernelContext ctx(node, g.opset, in_ptrs, out_ptrs, subgraphs);
    if (!step.device_in.empty() || !step.device_out.empty()) ctx.SetDeviceBuffers(step.device_in, step.device_out);
    using Copy = Impl::Step::Copy;
    auto execute = [&]() -> Status {
      if (step.reorder) return ReorderTensor(*in_ptrs[0], step.from, *out_ptrs[0], step.to);
      if (step.copy == Copy::kToDevice) {
        return im.device->Upload(*in_ptrs[0], im.slots[static_cast<size_t>(step.out[0])].device_buffer);
      }
      if (step.copy == Copy::kToHost) {
        return im.device->Download(im.slots[static_cast<size_t>(step.in[0])].device_buffer, *out_ptrs[0]);
      }
      return AtNode(step.kernel ? step.kernel->Run(ctx) : step.op->run(ctx), node);
    };
    if (observer == nullptr) {
      RETURN_IF_ERROR(execute());
    } else {
      const KernelInfo& info = kernel_infos_[i];
      observer->KernelBegin(i, info);
      double elapsed_ms = 0;
      if (step.on_device) {
        // The device's own timer (cl_event profiling): what the kernels took on the device.
        im.device->TimerBegin();
        Status status = execute();
        auto ms = im.device->TimerEndMs();
        RETURN_IF_ERROR(status);
        if (!ms.ok()) return ms.status();
        elapsed_ms = *ms;
      } else {
        const auto t0 = std::chrono::steady_clock::now();
        Status status = execute();
        const auto t1 = std::chrono::steady_clock::now();
        RETURN_IF_ERROR(status);
        elapsed_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
      }
      observer->KernelEnd(i, info, elapsed_ms);
      if (observer->WantsOutputs(i)) {
        // Observers see ONNX's order on the host: channels-last outputs are handed over as plain
        // copies, device outputs as copies downloaded (and converted from the storage type).
        std::vector<Tensor> plain(out_ptrs.size());
        std::vector<const Tensor*> outs;
        for (size_t k = 0; k < out_ptrs.size(); ++k) {
          const Tensor* t = out_ptrs[k];
          if (t != nullptr && step.out[k] >= 0 && im.slots[static_cast<size_t>(step.out[k])].on_device) {
            const Impl::Slot& slot = im.slots[static_cast<size_t>(step.out[k])];
            plain[k] = Tensor(slot.dtype, slot.shape);
            RETURN_IF_ERROR(im.device->Download(slot.device_buffer, plain[k]));
            t = &plain[k];
          } else if (t != nullptr && step.out_layouts[k] != Layout::kPlain && !LayoutsAgree(t->shape())) {
            plain[k] = Tensor(t->dtype(), t->shape());
            RETURN_IF_ERROR(ReorderTensor(*t, step.out_layouts[k], plain[k], Layout::kPlain));
            t = &plain[k];
          }
          outs.push_back(t);
        }
        observer->KernelOutputs(i, info, outs);
      }
    }
    // Drop run-time allocations as soon as their last reader has run.
    for (int id : step.in) {
      if (id < 0) continue;
      const Impl::Slot& slot = im.slots[static_cast<size_t>(id)];
      if (slot.kind == Impl::Kind::kIntermediate && !slot.is_output && slot.last_use == static_cast<int>(i)) {
        values[static_cast<size_t>(id)] = Tensor();
      }
    }
  }
  if (im.device) RETURN_IF_ERROR(im.device->Finish());
  std::vector<Tensor> outputs;
  for (int id : im.output_ids) {
    const Impl::Slot& slot = im.slots[static_cast<size_t>(id)];
    const Tensor* t = get(id);
    if (!t->defined()) return Internal("graph output '" + slot.name + "' was not computed");
    outputs.push_back(slot.kind == Impl::Kind::kIntermediate ? *t : t->Clone());
  }
  return outputs;
}

Result<std::vector<Tensor>> InterpretGraph(const Graph& graph, const std::map<std::string, Tensor>& inputs,
                                           const ValueLookup& outer, std::stop_token stop) {
  std::map<std::string, Tensor> env = inputs;
  for (const auto& [name, tensor] : graph.initializers) env[name] = tensor;
  const ValueLookup lookup = [&](const std::string& name) -> const Tensor* {
    auto it = env.find(name);
    if (it != env.end()) return &it->second;
    return outer ? outer(name) : nullptr;
  };
  for (const Node& node : graph.nodes) {
    if (stop.stop_requested()) return Cancelled("run cancelled before " + node.Describe());
    const OpEntry* op = FindReferenceOp(node.op_type, node.domain);
    if (op == nullptr) return Unsupported(UnsupportedReason(node));
    std::vector<Tensor> ins;
    for (const std::string& name : node.inputs) {
      if (name.empty()) {
        ins.emplace_back();
        continue;
      }
      const Tensor* t = lookup(name);
      if (t == nullptr) return InvalidArgument(node.Describe() + ": input '" + name + "' has no value");
      ins.push_back(*t);
    }
    std::vector<Tensor> outs;
    if (op->self_allocating) {
      outs.resize(node.outputs.size());
      std::vector<const Tensor*> in_ptrs;
      for (const Tensor& t : ins) in_ptrs.push_back(t.defined() ? &t : nullptr);
      std::vector<Tensor*> out_ptrs;
      for (Tensor& t : outs) out_ptrs.push_back(&t);
      const SubgraphRunner runner = [&](const Graph& sub, const std::vector<Tensor>& sub_inputs) {
        std::map<std::string, Tensor> named;
        for (size_t i = 0; i < sub_inputs.size() && i < sub.inputs.size(); ++i) {
          named[sub.inputs[i].name] = sub_inputs[i];
        }
        return InterpretGraph(sub, named, lookup, stop);
      };
      KernelContext ctx(node, graph.opset, in_ptrs, out_ptrs, runner);
      RETURN_IF_ERROR(AtNode(op->run(ctx), node));
    } else {
      ASSIGN_OR_RETURN(outs, RunNodeOnReference(node, graph.opset, ins));
    }
    for (size_t i = 0; i < node.outputs.size() && i < outs.size(); ++i) {
      if (!node.outputs[i].empty()) env[node.outputs[i]] = std::move(outs[i]);
    }
  }
  std::vector<Tensor> results;
  for (const ValueDesc& out : graph.outputs) {
    const Tensor* t = lookup(out.name);
    if (t == nullptr) return InvalidArgument("graph '" + graph.name + "': output '" + out.name + "' has no value");
    results.push_back(*t);
  }
  return results;
}

}  // namespace chipfit
