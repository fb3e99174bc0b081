// Reference control flow: If runs the branch its condition selects; Loop and Scan run their body once
// per iteration. Bodies run through KernelContext::RunSubgraph, so on a compiled model they are
// compiled for the target and their nodes are profiled as layers of their own.
#include <algorithm>
#include <cstring>

#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

Status InferControlFlow(InferContext& ctx) {
  // Output shapes come from the body as it runs; the executor lets the kernel allocate them.
  return ctx.ValueNeeded();
}

Status RunIf(KernelContext& ctx) {
  const Tensor* cond = ctx.input(0);
  if (cond == nullptr || cond->numel() != 1) return ctx.Error("condition must be a single element");
  const bool take_then = cond->GetAsDouble(0) != 0.0;
  const char* branch_name = take_then ? "then_branch" : "else_branch";
  const Graph* branch = ctx.node().GetGraph(branch_name);
  if (branch == nullptr) return ctx.Error(std::string("missing ") + branch_name);
  ASSIGN_OR_RETURN(std::vector<Tensor> outputs, ctx.RunSubgraph(*branch, {}));
  if (outputs.size() != ctx.num_outputs()) {
    return ctx.Error(std::string(branch_name) + " returns " + std::to_string(outputs.size()) + " values, If has " +
                     std::to_string(ctx.num_outputs()) + " outputs");
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    // Copies: a branch may return an outer-scope value or a constant that must not be aliased.
    if (Tensor* out = ctx.output(i)) *out = outputs[i].Clone();
  }
  return Status::Ok();
}

// Element i of `t` along `axis` (that dimension removed), copied.
Tensor SliceAlong(const Tensor& t, int64_t axis, int64_t index) {
  Shape shape = t.shape();
  const int64_t extent = shape[static_cast<size_t>(axis)];
  shape.erase(shape.begin() + axis);
  Tensor out(t.dtype(), shape);
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= t.dim(d);
  const size_t inner = static_cast<size_t>(NumElements(shape) / std::max<int64_t>(outer, 1)) * DTypeSize(t.dtype());
  const auto* src = static_cast<const char*>(t.raw_data());
  auto* dst = static_cast<char*>(out.raw_data());
  for (int64_t o = 0; o < outer && inner > 0; ++o) {
    std::memcpy(dst + static_cast<size_t>(o) * inner, src + static_cast<size_t>(o * extent + index) * inner, inner);
  }
  return out;
}

// Stacks equally shaped tensors along a new dimension `axis` (in the order given).
Result<Tensor> StackAlong(const std::vector<Tensor>& parts, int64_t axis, const Node& node, const std::string& what) {
  const Shape& part_shape = parts.front().shape();
  for (const Tensor& p : parts) {
    if (p.shape() != part_shape || p.dtype() != parts.front().dtype()) {
      return InvalidArgument(node.Describe() + ": " + what + " changes from " + DescribeTensor(parts.front()) + " to " +
                             DescribeTensor(p) + " between iterations; stacking needs one shape");
    }
  }
  if (axis < 0 || axis > static_cast<int64_t>(part_shape.size())) {
    return InvalidArgument(node.Describe() + ": " + what + " axis " + std::to_string(axis) + " is out of range");
  }
  Shape shape = part_shape;
  shape.insert(shape.begin() + axis, static_cast<int64_t>(parts.size()));
  Tensor out(parts.front().dtype(), shape);
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= part_shape[static_cast<size_t>(d)];
  const size_t inner =
      static_cast<size_t>(NumElements(part_shape) / std::max<int64_t>(outer, 1)) * DTypeSize(out.dtype());
  auto* dst = static_cast<char*>(out.raw_data());
  for (size_t p = 0; p < parts.size(); ++p) {
    const auto* src = static_cast<const char*>(parts[p].raw_data());
    for (int64_t o = 0; o < outer && inner > 0; ++o) {
      std::memcpy(dst + (static_cast<size_t>(o) * parts.size() + p) * inner, src + static_cast<size_t>(o) * inner,
                  inner);
    }
  }
  return out;
}

// An empty scan output for a loop that ran no iteration: [0, dims the body declares].
Tensor EmptyScanOutput(const Graph& body, size_t output) {
  Shape shape{0};
  DType dtype = DType::kF32;
  if (output < body.outputs.size()) {
    const ValueDesc& desc = body.outputs[output];
    if (desc.dtype != DType::kUndefined) dtype = desc.dtype;
    for (int64_t d : desc.shape) shape.push_back(std::max<int64_t>(d, 0));
  }
  return Tensor(dtype, shape);
}

Tensor ScalarI64(int64_t v) {
  Tensor t(DType::kI64, {});
  t.data<int64_t>()[0] = v;
  return t;
}

Tensor ScalarBool(bool v) {
  Tensor t(DType::kBool, {});
  t.data<bool>()[0] = v;
  return t;
}

// Loop: M (trip count) and cond are both optional; the body gets (iteration, cond, carried…) and
// returns (cond, carried…, scan outputs…). Without either, it runs until the body's cond is false
// (or the run is cancelled, which the body's executor checks between kernels).
Status RunLoop(KernelContext& ctx) {
  const Graph* body = ctx.node().GetGraph("body");
  if (body == nullptr) return ctx.Error("missing body");
  const Tensor* trip = ctx.input(0);
  const Tensor* cond_in = ctx.input(1);
  if (trip != nullptr && trip->numel() != 1) return ctx.Error("trip count M must be a single element");
  if (cond_in != nullptr && cond_in->numel() != 1) return ctx.Error("cond must be a single element");
  const size_t carried = ctx.num_inputs() > 2 ? ctx.num_inputs() - 2 : 0;
  if (body->inputs.size() != carried + 2) {
    return ctx.Error("body takes " + std::to_string(body->inputs.size()) + " inputs; the Loop passes " +
                     std::to_string(carried + 2) + " (iteration, cond and " + std::to_string(carried) + " carried)");
  }
  if (body->outputs.size() < carried + 1) {
    return ctx.Error("body returns " + std::to_string(body->outputs.size()) + " values; it must return cond and " +
                     std::to_string(carried) + " carried values");
  }
  const size_t scans = body->outputs.size() - 1 - carried;
  if (ctx.num_outputs() != carried + scans) {
    return ctx.Error("has " + std::to_string(ctx.num_outputs()) + " outputs; its body makes " +
                     std::to_string(carried) + " carried values and " + std::to_string(scans) + " scan outputs");
  }
  const int64_t max_trips = trip != nullptr ? trip->GetAsInt64(0) : -1;
  bool cond = cond_in == nullptr || cond_in->GetAsDouble(0) != 0.0;
  std::vector<Tensor> state;
  for (size_t i = 0; i < carried; ++i) {
    const Tensor* v = ctx.input(2 + i);
    if (v == nullptr) return ctx.Error("loop-carried input " + std::to_string(i) + " is missing");
    state.push_back(*v);
  }
  std::vector<std::vector<Tensor>> scan_parts(scans);
  for (int64_t i = 0; (max_trips < 0 || i < max_trips) && cond; ++i) {
    std::vector<Tensor> args{ScalarI64(i), ScalarBool(cond)};
    args.insert(args.end(), state.begin(), state.end());
    ASSIGN_OR_RETURN(std::vector<Tensor> results, ctx.RunSubgraph(*body, args));
    if (results.size() != body->outputs.size()) return ctx.Error("body returned the wrong number of values");
    if (results[0].numel() != 1) return ctx.Error("body's cond output must be a single element");
    // The body's cond always decides the next iteration, as in ONNX Runtime (a plain for loop's
    // body returns its cond unchanged).
    cond = results[0].GetAsDouble(0) != 0.0;
    for (size_t k = 0; k < carried; ++k) state[k] = std::move(results[1 + k]);
    for (size_t k = 0; k < scans; ++k) scan_parts[k].push_back(results[1 + carried + k].Clone());
  }
  for (size_t k = 0; k < carried; ++k) {
    if (Tensor* out = ctx.output(k)) *out = state[k].Clone();
  }
  for (size_t k = 0; k < scans; ++k) {
    Tensor* out = ctx.output(carried + k);
    if (out == nullptr) continue;
    if (scan_parts[k].empty()) {
      *out = EmptyScanOutput(*body, 1 + carried + k);
      continue;
    }
    ASSIGN_OR_RETURN(*out, StackAlong(scan_parts[k], 0, ctx.node(), "scan output " + std::to_string(k)));
  }
  return Status::Ok();
}

// Scan (opset 9+): N state variables then M scan inputs; each iteration the body gets the states
// and one slice of every scan input (along its axis, forward or reverse) and returns the next
// states and K per-iteration outputs, stacked along their axes. Opset 8's form (a batch axis first
// and a sequence_lens input) runs once per batch row.
Status RunScanOnce(KernelContext& ctx, const std::vector<Tensor>& inputs, size_t num_scan, std::vector<Tensor>& outs) {
  const Node& node = ctx.node();
  const Graph* body = node.GetGraph("body");
  if (body == nullptr) return ctx.Error("missing body");
  const size_t states = inputs.size() - num_scan;
  if (body->inputs.size() != inputs.size()) {
    return ctx.Error("body takes " + std::to_string(body->inputs.size()) + " inputs; the Scan passes " +
                     std::to_string(inputs.size()));
  }
  if (body->outputs.size() < states) return ctx.Error("body returns fewer values than there are states");
  const size_t scan_outs = body->outputs.size() - states;
  const std::vector<int64_t> in_dirs =
      node.GetInts(ctx.opset() >= 9 ? "scan_input_directions" : "directions", std::vector<int64_t>(num_scan, 0));
  const std::vector<int64_t> in_axes = node.GetInts("scan_input_axes", std::vector<int64_t>(num_scan, 0));
  const std::vector<int64_t> out_dirs = node.GetInts("scan_output_directions", std::vector<int64_t>(scan_outs, 0));
  const std::vector<int64_t> out_axes = node.GetInts("scan_output_axes", std::vector<int64_t>(scan_outs, 0));
  if (in_dirs.size() != num_scan || in_axes.size() != num_scan || out_dirs.size() != scan_outs ||
      out_axes.size() != scan_outs) {
    return ctx.Error("scan direction/axis attributes must have one entry per scan input and per scan output");
  }
  int64_t length = -1;
  std::vector<int64_t> axes(num_scan);
  for (size_t j = 0; j < num_scan; ++j) {
    const Tensor& in = inputs[states + j];
    ASSIGN_OR_RETURN(axes[j], NormalizeAxis(in_axes[j], in.rank(), node));
    const int64_t len = in.dim(axes[j]);
    if (length >= 0 && len != length) {
      return ctx.Error("scan inputs have different lengths (" + std::to_string(length) + " and " + std::to_string(len) +
                       ")");
    }
    length = len;
  }
  if (length < 0) length = 0;
  std::vector<Tensor> state(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(states));
  std::vector<std::vector<Tensor>> parts(scan_outs);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<Tensor> args = state;
    for (size_t j = 0; j < num_scan; ++j) {
      const int64_t index = in_dirs[j] != 0 ? length - 1 - t : t;
      args.push_back(SliceAlong(inputs[states + j], axes[j], index));
    }
    ASSIGN_OR_RETURN(std::vector<Tensor> results, ctx.RunSubgraph(*body, args));
    if (results.size() != body->outputs.size()) return ctx.Error("body returned the wrong number of values");
    for (size_t k = 0; k < states; ++k) state[k] = std::move(results[k]);
    for (size_t k = 0; k < scan_outs; ++k) parts[k].push_back(results[states + k].Clone());
  }
  outs.clear();
  for (Tensor& s : state) outs.push_back(s.Clone());
  for (size_t k = 0; k < scan_outs; ++k) {
    if (parts[k].empty()) {
      outs.push_back(EmptyScanOutput(*body, states + k));
      continue;
    }
    if (out_dirs[k] != 0) std::reverse(parts[k].begin(), parts[k].end());
    const int64_t rank = parts[k].front().rank() + 1;
    ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(out_axes[k], rank, node));
    ASSIGN_OR_RETURN(Tensor stacked, StackAlong(parts[k], axis, node, "scan output " + std::to_string(k)));
    outs.push_back(std::move(stacked));
  }
  return Status::Ok();
}

Status RunScan(KernelContext& ctx) {
  const int64_t num_scan = ctx.node().GetInt("num_scan_inputs", -1);
  if (ctx.opset() >= 9) {
    if (num_scan < 1 || static_cast<size_t>(num_scan) > ctx.num_inputs()) {
      return ctx.Error("num_scan_inputs " + std::to_string(num_scan) + " does not fit its " +
                       std::to_string(ctx.num_inputs()) + " inputs");
    }
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      if (ctx.input(i) == nullptr) return ctx.Error("input " + std::to_string(i) + " is missing");
      inputs.push_back(*ctx.input(i));
    }
    std::vector<Tensor> outs;
    RETURN_IF_ERROR(RunScanOnce(ctx, inputs, static_cast<size_t>(num_scan), outs));
    if (outs.size() != ctx.num_outputs()) return ctx.Error("body makes a different number of outputs than Scan has");
    for (size_t i = 0; i < outs.size(); ++i) {
      if (Tensor* out = ctx.output(i)) *out = std::move(outs[i]);
    }
    return Status::Ok();
  }
  // Opset 8: input 0 is sequence_lens (optional), every other input has a batch axis first.
  const size_t data_inputs = ctx.num_inputs() - 1;
  if (num_scan < 1 || static_cast<size_t>(num_scan) > data_inputs) {
    return ctx.Error("num_scan_inputs " + std::to_string(num_scan) + " does not fit its inputs");
  }
  const Tensor* first = ctx.input(1);
  if (first == nullptr || first->rank() < 1) return ctx.Error("inputs need a batch axis");
  const int64_t batch = first->dim(0);
  if (const Tensor* lens = ctx.input(0)) {
    const int64_t full = ctx.input(data_inputs - static_cast<size_t>(num_scan) + 1)->dim(1);
    for (int64_t b = 0; b < lens->numel(); ++b) {
      if (lens->GetAsInt64(b) != full) {
        return Unsupported(ctx.node().Describe() + ": sequence_lens shorter than the scan length (opset 8) " +
                           "are not supported");
      }
    }
  }
  std::vector<std::vector<Tensor>> per_batch(ctx.num_outputs());
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Tensor> inputs;
    for (size_t i = 1; i < ctx.num_inputs(); ++i) {
      const Tensor* in = ctx.input(i);
      if (in == nullptr || in->rank() < 1 || in->dim(0) != batch) {
        return ctx.Error("input " + std::to_string(i) + " must have the batch size " + std::to_string(batch) +
                         " first");
      }
      inputs.push_back(SliceAlong(*in, 0, b));
    }
    std::vector<Tensor> outs;
    RETURN_IF_ERROR(RunScanOnce(ctx, inputs, static_cast<size_t>(num_scan), outs));
    if (outs.size() != ctx.num_outputs()) return ctx.Error("body makes a different number of outputs than Scan has");
    for (size_t i = 0; i < outs.size(); ++i) per_batch[i].push_back(std::move(outs[i]));
  }
  for (size_t i = 0; i < per_batch.size(); ++i) {
    Tensor* out = ctx.output(i);
    if (out == nullptr || per_batch[i].empty()) continue;
    ASSIGN_OR_RETURN(*out, StackAlong(per_batch[i], 0, ctx.node(), "output " + std::to_string(i)));
  }
  return Status::Ok();
}

}  // namespace

std::vector<OpEntry> ControlFlowOps() {
  return {
      {"If", InferControlFlow, RunIf, "", /*self_allocating=*/true},
      {"Loop", InferControlFlow, RunLoop, "", /*self_allocating=*/true},
      {"Scan", InferControlFlow, RunScan, "", /*self_allocating=*/true},
  };
}

}  // namespace chipfit
