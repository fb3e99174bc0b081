// The executor: Compile as a sequence of the steps in compile_steps.h, and run-time dispatch.
#include "core/runtime/compiled_model.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "core/graph/passes.h"
#include "core/reference/reference_kernels.h"
#include "core/runtime/compile_steps.h"
#include "core/runtime/layout.h"
#include "core/runtime/node_runner.h"

namespace chipfit {

// What Run executes is exactly what the compile steps built.
struct CompiledModel::Impl : compile::Program {};

CompiledModel::CompiledModel() : impl_(std::make_unique<Impl>()) {}
CompiledModel::~CompiledModel() = default;

Result<std::unique_ptr<CompiledModel>> Compile(const Graph& graph, const Target& target,
                                               const CompileOptions& options) {
  if (target.precision != Precision::kFp32 && (target.kind == DeviceKind::kReference || options.kernels == nullptr)) {
    return Unsupported("target " + target.ToString() + ": " + std::string(PrecisionName(target.precision)) +
                       " needs device kernels; the reference kernels compute in fp32 only");
  }
  compile::CompileState state(target, options);
  Graph rewritten = graph;
  if (options.eliminate_dead_nodes) state.stats.dead_nodes = EliminateDeadNodes(rewritten);
  RETURN_IF_ERROR(compile::Fuse(rewritten, target, options, state.stats));
  state.graph = std::make_shared<const Graph>(std::move(rewritten));
  state.stats.graph_nodes = static_cast<int>(graph.nodes.size());
  compile::BindGraphInputs(state);
  for (const Node& node : state.graph->nodes) RETURN_IF_ERROR(compile::LowerNode(state, node));
  RETURN_IF_ERROR(compile::ReportUnsupported(state));
  RETURN_IF_ERROR(compile::BindGraphOutputs(state));
  compile::PlanMemory(state);
  RETURN_IF_ERROR(compile::AllocateDeviceMemory(state));
  compile::ListBodyKernels(state);

  std::unique_ptr<CompiledModel> model(new CompiledModel());
  model->target_ = target;
  model->graph_ = std::move(state.graph);
  model->kernel_infos_ = std::move(state.kernel_infos);
  model->costs_ = std::move(state.costs);
  model->fallbacks_ = std::move(state.fallbacks);
  model->output_descs_ = std::move(state.output_descs);
  model->stats_ = state.stats;
  static_cast<compile::Program&>(*model->impl_) = std::move(state.program);
  return model;
}

namespace {

// Checks each input against the compiled dtype and shape and puts it in its slot; names the
// inputs the model does not have.
Status BindInputs(const compile::Program& program, const Graph& g, const std::map<std::string, Tensor>& inputs,
                  std::vector<Tensor>& values) {
  for (const ValueDesc& desc : g.inputs) {
    auto it = inputs.find(desc.name);
    const compile::Program::Slot& slot = program.slot(program.ids.at(desc.name));
    const std::string expected = std::string(DTypeName(slot.dtype)) + "[" + ShapeToString(slot.shape) + "]";
    if (it == inputs.end()) return InvalidArgument("missing input '" + desc.name + "' (expected " + expected + ")");
    const Tensor& t = it->second;
    // A body's inputs may leave the dtype open (ONNX Runtime accepts such subgraphs).
    const bool dtype_ok = t.dtype() == slot.dtype || slot.dtype == DType::kUndefined;
    // A value without a declared shape may be of any form: a body's outer-scope reads are described
    // by the enclosing slot, which knows dtype and shape but not whether a sequence will arrive.
    const bool undeclared = !desc.has_shape && !desc.sequence && !desc.optional;
    const bool form_ok = t.is_sequence() ? desc.sequence || undeclared
                         : t.is_none()   ? desc.optional || undeclared
                                         : !desc.sequence;
    if (!form_ok) {
      return InvalidArgument("input '" + desc.name + "' is " + DescribeTensor(t) + ", the model expects " +
                             DescribeValueType(desc));
    }
    if (!dtype_ok || (slot.shape_known && t.is_dense() && t.shape() != slot.shape)) {
      return InvalidArgument("input '" + desc.name + "' is " + DescribeTensor(t) + ", the model expects " + expected);
    }
    values[static_cast<size_t>(program.ids.at(desc.name))] = t;
  }
  for (const auto& [name, tensor] : inputs) {
    const auto it = program.ids.find(name);
    if (it == program.ids.end() || program.slot(it->second).kind != compile::Program::Kind::kInput) {
      std::string names;
      for (const ValueDesc& desc : g.inputs) names += (names.empty() ? "" : ", ") + desc.name;
      return InvalidArgument("the model has no input named '" + name + "' (inputs: " + names + ")");
    }
  }
  return Status();
}

// Kernel events of a control-flow body, renumbered into the enclosing model's kernel list (where
// the body's kernels follow the main graph's). Drift is compared at the control-flow node's outputs,
// so a body's kernels hand over none.
class BodyObserver final : public RunObserver {
 public:
  BodyObserver(RunObserver& outer, size_t offset, const std::vector<KernelInfo>& infos)
      : outer_(outer), offset_(offset), infos_(infos) {}
  void KernelBegin(size_t index, const KernelInfo&) override { outer_.KernelBegin(offset_ + index, Info(index)); }
  void KernelEnd(size_t index, const KernelInfo&, double elapsed_ms) override {
    outer_.KernelEnd(offset_ + index, Info(index), elapsed_ms);
  }

 private:
  const KernelInfo& Info(size_t index) const { return infos_[offset_ + index]; }
  RunObserver& outer_;
  size_t offset_;
  const std::vector<KernelInfo>& infos_;
};

// Runs a control-flow step's body: its own inputs, then the outer-scope values it reads.
Result<std::vector<Tensor>> RunBody(const compile::Program::Step& step, const Graph& graph,
                                    const std::vector<Tensor>& inputs, const std::function<const Tensor*(int)>& get,
                                    RunObserver* observer, std::vector<KernelInfo>& infos,
                                    const std::stop_token& stop) {
  const compile::Program::Step::Body* body = nullptr;
  for (const auto& b : step.bodies) {
    if (b.graph == &graph) body = &b;
  }
  if (body == nullptr) return Internal(step.node->Describe() + ": a body that was not compiled");
  if (inputs.size() != graph.inputs.size()) {
    return InvalidArgument(step.node->Describe() + " " + body->attribute + " takes " +
                           std::to_string(graph.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  }
  std::map<std::string, Tensor> named;
  for (size_t i = 0; i < inputs.size(); ++i) named[graph.inputs[i].name] = inputs[i];
  for (const std::string& name : body->outer_inputs) {
    const Tensor* t = get(step.outer.at(name));
    if (t == nullptr || !t->defined()) return Internal(step.node->Describe() + ": outer value '" + name + "' is gone");
    named[name] = *t;
  }
  // The body's kernels built per shape at run time: their copies in this model's list show what ran.
  auto refresh = [&] {
    const std::vector<KernelInfo>& ran = body->model->kernels();
    for (size_t j = 0; j < ran.size() && body->kernel_offset + j < infos.size(); ++j) {
      KernelInfo& copy = infos[body->kernel_offset + j];
      if (copy.implementation == ran[j].implementation && copy.device == ran[j].device &&
          copy.fallback_reason == ran[j].fallback_reason) {
        continue;  // (most: fixed at compile time; compared, not copied, on every iteration of a Loop)
      }
      copy.device = ran[j].device;
      copy.implementation = ran[j].implementation;
      copy.precision = ran[j].precision;
      copy.fallback_reason = ran[j].fallback_reason;
    }
  };
  if (observer == nullptr) {
    auto outputs = body->model->Run(named, nullptr, stop);
    refresh();
    return outputs;
  }
  BodyObserver renumbered(*observer, body->kernel_offset, infos);
  auto outputs = body->model->Run(named, &renumbered, stop);
  refresh();
  return outputs;
}

// A kernel that allocates its outputs (If, Loop, Scan) must make the shapes the steps after it were
// compiled for, where compilation knew them.
Status CheckMadeShapes(const compile::Program& program, const compile::Program::Step& step,
                       const std::vector<Tensor>& values) {
  for (int id : step.out) {
    if (id < 0) continue;
    const compile::Program::Slot& slot = program.slot(id);
    const Tensor& made = values[static_cast<size_t>(id)];
    if (slot.shape_known && (made.dtype() != slot.dtype || made.shape() != slot.shape)) {
      return InvalidArgument(step.node->Describe() + ": output '" + slot.name + "' is " + DescribeTensor(made) +
                             ", but its bodies declare " + std::string(DTypeName(slot.dtype)) + "[" +
                             ShapeToString(slot.shape) + "]");
    }
  }
  return Status();
}

// Runs one step under the timer that measures it: the device's own timer (cl_event profiling) for
// work on the device, steady_clock on the host. Returns its milliseconds.
template <typename Execute>
Result<double> TimedExecute(const compile::Program& program, const compile::Program::Step& step, Execute&& execute) {
  if (step.on_device) {
    program.device->TimerBegin();
    Status status = execute();
    auto ms = program.device->TimerEndMs();
    RETURN_IF_ERROR(status);
    if (!ms.ok()) return ms.status();
    return *ms;
  }
  const auto t0 = std::chrono::steady_clock::now();
  Status status = execute();
  const auto t1 = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(status);
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

// Observers see ONNX's order on the host: channels-last outputs are handed over as plain copies,
// device outputs as copies downloaded (and converted from the storage type).
Status ShowOutputs(const compile::Program& program, const compile::Program::Step& step,
                   const std::vector<Tensor*>& out_ptrs, size_t index, const KernelInfo& info, RunObserver& observer) {
  std::vector<Tensor> plain(out_ptrs.size());
  std::vector<const Tensor*> outs;
  for (size_t k = 0; k < out_ptrs.size(); ++k) {
    const Tensor* t = out_ptrs[k];
    if (t != nullptr && step.out[k] >= 0 && program.slot(step.out[k]).on_device) {
      const compile::Program::Slot& slot = program.slot(step.out[k]);
      plain[k] = Tensor(slot.dtype, slot.shape);
      RETURN_IF_ERROR(program.device->Download(slot.device_buffer, plain[k]));
      t = &plain[k];
    } else if (t != nullptr && step.out_layouts[k] != Layout::kPlain && !LayoutsAgree(t->shape())) {
      plain[k] = Tensor(t->dtype(), t->shape());
      RETURN_IF_ERROR(ReorderTensor(*t, step.out_layouts[k], plain[k], Layout::kPlain));
      t = &plain[k];
    }
    outs.push_back(t);
  }
  observer.KernelOutputs(index, info, outs);
  return Status();
}

// A kernel built per shape at run time: the step's info shows what ran last (device or the
// reference, and why), and a reference run is listed with the fallbacks once.
void NoteRunTimeChoice(const IKernel& kernel, KernelInfo& info, std::vector<Fallback>& fallbacks) {
  const RunTimeChoice* choice = kernel.LastChoice();
  if (choice == nullptr || (info.implementation == choice->implementation && info.device == choice->device &&
                            info.fallback_reason == choice->fallback_reason)) {
    return;
  }
  info.device = choice->device;
  info.implementation = choice->implementation;
  info.precision = choice->precision;
  info.fallback_reason = choice->fallback_reason;
  std::erase_if(fallbacks, [&](const Fallback& f) { return f.node == info.name; });
  if (!choice->fallback_reason.empty()) fallbacks.push_back({info.name, info.op_type, choice->fallback_reason});
}

// FLOPs from the op formulas and bytes at the executed dtypes, for the shapes one run met.
KernelCost RunTimeCost(const Node& node, const TensorInfos& inputs, const std::vector<ValueInfo>& outputs) {
  KernelCost cost = EstimateCost(node, inputs.pointers(), outputs);
  cost.bytes_read = 0;
  cost.bytes_written = 0;
  for (const ValueInfo* in : inputs.pointers()) {
    if (in != nullptr && in->value != nullptr) cost.bytes_read += static_cast<int64_t>(in->value->nbytes());
  }
  for (const ValueInfo& out : outputs) {
    if (out.dtype != DType::kUndefined) {
      cost.bytes_written += NumElements(out.shape) * static_cast<int64_t>(DTypeSize(out.dtype));
    }
  }
  const auto data = inputs.pointers().empty() ? nullptr : inputs.pointers()[0];
  if (data != nullptr && data->value != nullptr) {
    CountGatheredReads(node.op_type, static_cast<int64_t>(data->value->nbytes()), cost);
  }
  if (!outputs.empty()) cost.output_shape = outputs[0].shape;
  cost.known = true;
  return cost;
}

}  // namespace

Result<std::vector<Tensor>> CompiledModel::Run(const std::map<std::string, Tensor>& inputs, RunObserver* observer,
                                               std::stop_token stop) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  Impl& im = *impl_;
  const Graph& g = *graph_;
  std::vector<Tensor> values(im.slots.size());
  RETURN_IF_ERROR(BindInputs(im, g, inputs, values));
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
  const std::function<const Tensor*(int)> get_by_id = get;
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
    const bool self_allocating = (step.op != nullptr && step.op->self_allocating) ||
                                 (step.dynamic && step.kernel != nullptr && step.kernel->AllocatesOutputs());
    if (step.dynamic && !self_allocating) {
      RETURN_IF_ERROR(CheckDenseInputs(node, false, in_ptrs));
      const TensorInfos infos(in_ptrs);
      InferContext ctx(node, g.opset, infos.pointers());
      RETURN_IF_ERROR(compile::AtNode(step.op->infer(ctx), node));
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
      } else if (step.view) {
        value = Tensor::View(slot.dtype, slot.shape, const_cast<void*>(in_ptrs[0]->raw_data()));
      } else if (!step.dynamic) {
        value = slot.plan_index >= 0 ? Tensor::View(slot.dtype, slot.shape,
                                                    static_cast<char*>(im.arena.get()) +
                                                        im.plan.offsets[static_cast<size_t>(slot.plan_index)])
                                     : Tensor(slot.dtype, slot.shape);
      }
      out_ptrs.push_back(&value);
    }
    SubgraphRunner body_runner;
    if (!step.bodies.empty()) {
      body_runner = [&](const Graph& sub, const std::vector<Tensor>& sub_inputs) {
        return RunBody(step, sub, sub_inputs, get_by_id, observer, kernel_infos_, stop);
      };
    }
    KernelContext ctx(node, g.opset, in_ptrs, out_ptrs, step.bodies.empty() ? subgraphs : body_runner);
    if (!step.device_in.empty() || !step.device_out.empty()) ctx.SetDeviceBuffers(step.device_in, step.device_out);
    using Copy = Impl::Step::Copy;
    auto execute = [&]() -> Status {
      if (step.view) return Status();
      if (step.reorder) return ReorderTensor(*in_ptrs[0], step.from, *out_ptrs[0], step.to);
      if (step.copy == Copy::kToDevice) {
        return im.device->Upload(*in_ptrs[0], im.slots[static_cast<size_t>(step.out[0])].device_buffer);
      }
      if (step.copy == Copy::kToHost) {
        return im.device->Download(im.slots[static_cast<size_t>(step.in[0])].device_buffer, *out_ptrs[0]);
      }
      return compile::AtNode(step.kernel ? step.kernel->Run(ctx) : step.op->run(ctx), node);
    };
    // A device kernel of run-time shapes: its cost at the shapes this run met (the profile's FLOPs
    // and bytes for it).
    auto note_run_time_cost = [&] {
      if (!step.dynamic || step.kernel == nullptr || i >= costs_.size()) return;
      std::vector<ValueInfo> outputs;
      for (const Tensor* out : out_ptrs) {
        outputs.push_back(out != nullptr && out->defined() ? ValueInfo{out->dtype(), out->shape()} : ValueInfo{});
      }
      costs_[i] = RunTimeCost(node, TensorInfos(in_ptrs), outputs);
    };
    if (observer == nullptr) {
      RETURN_IF_ERROR(execute());
      if (self_allocating) RETURN_IF_ERROR(CheckMadeShapes(im, step, values));
      if (step.kernel != nullptr) NoteRunTimeChoice(*step.kernel, kernel_infos_[i], fallbacks_);
      note_run_time_cost();
    } else {
      const KernelInfo& info = kernel_infos_[i];
      observer->KernelBegin(i, info);
      ASSIGN_OR_RETURN(const double elapsed_ms, TimedExecute(im, step, execute));
      if (step.kernel != nullptr) NoteRunTimeChoice(*step.kernel, kernel_infos_[i], fallbacks_);
      note_run_time_cost();
      observer->KernelEnd(i, info, elapsed_ms);
      if (self_allocating) RETURN_IF_ERROR(CheckMadeShapes(im, step, values));
      if (observer->WantsOutputs(i)) RETURN_IF_ERROR(ShowOutputs(im, step, out_ptrs, i, info, *observer));
    }
    // Drop run-time allocations as soon as their last reader has run.
    auto release = [&](int id) {
      const Impl::Slot& slot = im.slots[static_cast<size_t>(id)];
      if (slot.kind == Impl::Kind::kIntermediate && !slot.is_output && slot.last_use == static_cast<int>(i)) {
        values[static_cast<size_t>(id)] = Tensor();
      }
    };
    for (int id : step.in) {
      if (id >= 0) release(id);
    }
    for (const auto& [name, id] : step.outer) release(id);
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
    if (op == nullptr) return Unsupported(compile::UnsupportedReason(node));
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
      RETURN_IF_ERROR(compile::AtNode(op->run(ctx), node));
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
