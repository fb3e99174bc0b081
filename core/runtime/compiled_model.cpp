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
  };

  std::vector<Slot> slots;
  std::map<std::string, int> ids;
  std::map<std::string, Tensor> constants;  // std::map: stable addresses for Slot::constant
  std::vector<Step> steps;
  std::vector<int> output_ids;
  MemoryPlan plan;
  std::vector<int> planned_slots;
  std::unique_ptr<void, decltype(&std::free)> arena{nullptr, &std::free};
  std::map<std::pair<int, Layout>, int> reordered;  // (slot, order) → slot holding it in that order

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
  auto place = [&](CompiledModel::Impl::Step& step, KernelInfo& info) -> Status {
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
    auto try_list = [&](Precision precision, std::string& refusals) -> Status {
      for (const KernelImpl& impl : options.kernels->Find(node.op_type, node.domain, target.kind, precision)) {
        auto created = impl.create(KernelInit{node, ptrs, g.opset, precision, options.quant});
        if (created.ok()) {
          step.kernel = std::move(created).value();
          info.device = target.DeviceId();
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
    std::string refusals;
    std::string kept_reason;
    for (const std::string& name : info.onnx_nodes) {
      if (auto it = options.keep_fp32.find(name); it != options.keep_fp32.end()) kept_reason = it->second;
    }
    const bool kept = !kept_reason.empty();
    if (kept && target.precision != Precision::kFp32) {
      info.precision_reason = kept_reason;
      RETURN_IF_ERROR(try_list(Precision::kFp32, refusals));
    } else {
      RETURN_IF_ERROR(try_list(target.precision, refusals));
      if (step.kernel == nullptr && target.precision != Precision::kFp32) {
        info.precision_reason =
            refusals.empty() ? "no " + target.ToString() + " kernel for " + node.op_type : std::move(refusals);
        refusals.clear();
        RETURN_IF_ERROR(try_list(Precision::kFp32, refusals));
      }
    }
    if (step.kernel == nullptr) {
      const std::string device_fp32 = target.DeviceId() + ":fp32";
      std::string reason = refusals.empty() ? "no " + device_fp32 + " kernel for " + node.op_type : refusals;
      if (!info.precision_reason.empty()) reason = info.precision_reason + "; " + reason;
      info.fallback_reason = reason;
      info.precision_reason.clear();
      model->fallbacks_.push_back({node.name, node.op_type, std::move(reason)});
    }
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
    if (target.kind != DeviceKind::kReference) RETURN_IF_ERROR(place(step, info));
    // Readers get their inputs in the order they asked for; reorders go in right before them.
    for (size_t k = 0; k < step.in.size(); ++k) {
      if (step.in[k] < 0) continue;
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
      if (layout != Layout::kPlain && (step.dynamic || !slot.shape_known)) {
        return Internal(node.Describe() + ": a kernel wrote " + std::string(LayoutName(layout)) +
                        " for an output whose shape is only known at run time");
      }
    }
    for (int id : step.in) {
      if (id >= 0) im.slots[static_cast<size_t>(id)].last_use = index;
    }
    model->stats_.dynamic_kernels += step.dynamic ? 1 : 0;
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
    ASSIGN_OR_RETURN(const int id, slot_in_layout(im.SlotFor(out.name), Layout::kPlain, std::nullopt));
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

  // Plan every statically shaped intermediate that is not a graph output (those are returned).
  std::vector<BufferRequest> requests;
  for (size_t id = 0; id < im.slots.size(); ++id) {
    auto& slot = im.slots[id];
    if (slot.kind != Kind::kIntermediate || slot.is_output || !slot.shape_known || slot.producer < 0) continue;
    if (im.steps[static_cast<size_t>(slot.producer)].dynamic) continue;
    slot.plan_index = static_cast<int>(requests.size());
    im.planned_slots.push_back(static_cast<int>(id));
    requests.push_back({static_cast<size_t>(NumElements(slot.shape)) * DTypeSize(slot.dtype), slot.producer,
                        std::max(slot.last_use, slot.producer)});
  }
  im.plan = PlanMemory(requests);
  model->stats_.kernels = static_cast<int>(im.steps.size());
  model->stats_.planned_arena_bytes = im.plan.arena_bytes;
  model->stats_.planned_total_bytes = im.plan.total_bytes;
  for (const auto& [name, tensor] : im.constants) model->stats_.constant_bytes += tensor.nbytes();
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
  auto get = [&](int id) -> const Tensor* {
    const Impl::Slot& slot = im.slots[static_cast<size_t>(id)];
    return slot.constant != nullptr ? slot.constant : &values[static_cast<size_t>(id)];
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
      if (self_allocating) {
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
    auto execute = [&]() -> Status {
      if (step.reorder) return ReorderTensor(*in_ptrs[0], step.from, *out_ptrs[0], step.to);
      return AtNode(step.kernel ? step.kernel->Run(ctx) : step.op->run(ctx), node);
    };
    if (observer == nullptr) {
      RETURN_IF_ERROR(execute());
    } else {
      const KernelInfo& info = kernel_infos_[i];
      observer->KernelBegin(i, info);
      const auto t0 = std::chrono::steady_clock::now();
      Status status = execute();
      const auto t1 = std::chrono::steady_clock::now();
      RETURN_IF_ERROR(status);
      observer->KernelEnd(i, info, std::chrono::duration<double, std::milli>(t1 - t0).count());
      if (observer->WantsOutputs(i)) {
        // Observers see ONNX's order: channels-last outputs are handed over as plain copies.
        std::vector<Tensor> plain(out_ptrs.size());
        std::vector<const Tensor*> outs;
        for (size_t k = 0; k < out_ptrs.size(); ++k) {
          const Tensor* t = out_ptrs[k];
          if (t != nullptr && step.out_layouts[k] != Layout::kPlain && !LayoutsAgree(t->shape())) {
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
