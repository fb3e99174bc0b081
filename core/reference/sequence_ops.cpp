// Sequence and optional values (ONNX seq(tensor) and optional(...)): SequenceEmpty, SequenceConstruct,
// SequenceInsert, SequenceAt, SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence,
// SequenceMap, Optional, OptionalHasElement, OptionalGetElement. A sequence's length and its
// elements' shapes are only known while running, so every op here allocates its own outputs.
#include <algorithm>
#include <cstring>

#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

Status InferAtRunTime(InferContext& ctx) { return ctx.ValueNeeded(); }

// Input i, which must be present and of `form` (a sequence, or a dense tensor).
Result<const Tensor*> InputOfForm(const KernelContext& ctx, size_t i, ValueForm form) {
  const Tensor* t = ctx.input(i);
  if (t == nullptr) return ctx.Error("input " + std::to_string(i) + " is missing");
  if (t->form() != form) {
    return ctx.Error("input '" + ctx.node().inputs[i] + "' is " + DescribeTensor(*t) + ", not a " +
                     (form == ValueForm::kSequence ? "sequence" : "tensor"));
  }
  return t;
}

Result<const Tensor*> SequenceInput(const KernelContext& ctx, size_t i) {
  return InputOfForm(ctx, i, ValueForm::kSequence);
}
Result<const Tensor*> TensorInput(const KernelContext& ctx, size_t i) {
  return InputOfForm(ctx, i, ValueForm::kTensor);
}

// A position input (int32/int64 scalar) checked against [-size, size - 1], or [-size, size] when
// `inserting` (inserting at `size` appends); returned in [0, size].
Result<int64_t> Position(const KernelContext& ctx, size_t input, int64_t size, bool inserting, int64_t fallback) {
  const Tensor* p = ctx.input(input);
  if (p == nullptr) return fallback;
  if (!p->is_dense() || p->numel() != 1 || (p->dtype() != DType::kI32 && p->dtype() != DType::kI64)) {
    return ctx.Error("position must be one int32 or int64 value");
  }
  const int64_t pos = p->GetAsInt64(0);
  const int64_t hi = inserting ? size : size - 1;
  if (pos < -size || pos > hi) {
    return ctx.Error("position " + std::to_string(pos) + " is outside [" + std::to_string(-size) + ", " +
                     std::to_string(hi) + "] for a sequence of " + std::to_string(size));
  }
  return pos < 0 ? pos + size : pos;
}

Status SetSequence(KernelContext& ctx, size_t output, DType dtype, std::vector<Tensor> elements) {
  Tensor* out = ctx.output(output);
  if (out != nullptr) *out = Tensor::Sequence(dtype, std::move(elements));
  return Status::Ok();
}

// Copies `count` elements from src[src_at…] to dst[dst_at…] (strings element by element).
void CopyElements(const Tensor& src, int64_t src_at, Tensor& dst, int64_t dst_at, int64_t count) {
  if (count <= 0) return;
  if (src.dtype() == DType::kString) {
    std::copy_n(src.data<std::string>() + src_at, count, dst.data<std::string>() + dst_at);
    return;
  }
  const size_t size = DTypeSize(src.dtype());
  std::memcpy(static_cast<char*>(dst.raw_data()) + static_cast<size_t>(dst_at) * size,
              static_cast<const char*>(src.raw_data()) + static_cast<size_t>(src_at) * size,
              static_cast<size_t>(count) * size);
}

Status RunSequenceEmpty(KernelContext& ctx) {
  const auto dtype = DTypeFromOnnx(static_cast<int32_t>(ctx.node().GetInt("dtype", 1)));
  if (!dtype) return ctx.Error("dtype " + std::to_string(ctx.node().GetInt("dtype", 1)) + " is not supported");
  return SetSequence(ctx, 0, *dtype, {});
}

Status RunSequenceConstruct(KernelContext& ctx) {
  std::vector<Tensor> elements;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    ASSIGN_OR_RETURN(const Tensor* t, TensorInput(ctx, i));
    if (t->dtype() != ctx.input(0)->dtype()) {
      return ctx.Error("inputs have different dtypes (" + DescribeTensor(*ctx.input(0)) + ", " + DescribeTensor(*t) +
                       "); a sequence holds one dtype");
    }
    elements.push_back(*t);
  }
  if (elements.empty()) return ctx.Error("needs at least one input");
  const DType dtype = elements.front().dtype();  // before the move below
  return SetSequence(ctx, 0, dtype, std::move(elements));
}

Status RunSequenceInsert(KernelContext& ctx) {
  ASSIGN_OR_RETURN(const Tensor* s, SequenceInput(ctx, 0));
  ASSIGN_OR_RETURN(const Tensor* t, TensorInput(ctx, 1));
  if (t->dtype() != s->dtype()) {
    return ctx.Error("inserts " + DescribeTensor(*t) + " into " + DescribeTensor(*s) + "; the dtypes differ");
  }
  std::vector<Tensor> elements = s->elements();
  const auto size = static_cast<int64_t>(elements.size());
  ASSIGN_OR_RETURN(const int64_t at, Position(ctx, 2, size, /*inserting=*/true, size));
  elements.insert(elements.begin() + at, *t);
  return SetSequence(ctx, 0, s->dtype(), std::move(elements));
}

Status RunSequenceAt(KernelContext& ctx) {
  ASSIGN_OR_RETURN(const Tensor* s, SequenceInput(ctx, 0));
  const auto size = static_cast<int64_t>(s->elements().size());
  if (ctx.input(1) == nullptr) return ctx.Error("position is missing");
  ASSIGN_OR_RETURN(const int64_t at, Position(ctx, 1, size, /*inserting=*/false, 0));
  if (Tensor* out = ctx.output(0)) *out = s->elements()[static_cast<size_t>(at)];
  return Status::Ok();
}

Status RunSequenceErase(KernelContext& ctx) {
  ASSIGN_OR_RETURN(const Tensor* s, SequenceInput(ctx, 0));
  std::vector<Tensor> elements = s->elements();
  const auto size = static_cast<int64_t>(elements.size());
  if (size == 0) return ctx.Error("erases from an empty sequence");
  ASSIGN_OR_RETURN(const int64_t at, Position(ctx, 1, size, /*inserting=*/false, size - 1));
  elements.erase(elements.begin() + at);
  return SetSequence(ctx, 0, s->dtype(), std::move(elements));
}

Status RunSequenceLength(KernelContext& ctx) {
  ASSIGN_OR_RETURN(const Tensor* s, SequenceInput(ctx, 0));
  if (Tensor* out = ctx.output(0)) {
    *out = Tensor(DType::kI64, {});
    out->data<int64_t>()[0] = static_cast<int64_t>(s->elements().size());
  }
  return Status::Ok();
}

// Slices [begin, begin + length) of `t` along `axis` into a new tensor (the axis dropped when !keep).
Tensor SliceRange(const Tensor& t, int64_t axis, int64_t begin, int64_t length, bool keep) {
  Shape shape = t.shape();
  shape[static_cast<size_t>(axis)] = length;
  Tensor out(t.dtype(), shape);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= t.dim(d);
  for (int64_t d = axis + 1; d < t.rank(); ++d) inner *= t.dim(d);
  for (int64_t o = 0; o < outer; ++o) {
    CopyElements(t, (o * t.dim(axis) + begin) * inner, out, o * length * inner, length * inner);
  }
  if (!keep) shape.erase(shape.begin() + axis);
  return keep ? out : out.Reshaped(shape);
}

Status RunSplitToSequence(KernelContext& ctx) {
  ASSIGN_OR_RETURN(const Tensor* x, TensorInput(ctx, 0));
  if (x->rank() == 0) return ctx.Error("cannot split a scalar");
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", 0), x->rank(), ctx.node()));
  const int64_t extent = x->dim(axis);
  std::vector<int64_t> lengths;
  bool keep = true;
  const Tensor* split = ctx.input(1);
  if (split == nullptr) {
    // One element per index along the axis; keepdims=0 drops the axis.
    lengths.assign(static_cast<size_t>(extent), 1);
    keep = ctx.node().GetInt("keepdims", 1) != 0;
  } else if (split->rank() == 0) {
    const int64_t chunk = split->GetAsInt64(0);
    if (chunk <= 0) return ctx.Error("split " + std::to_string(chunk) + " must be positive");
    for (int64_t at = 0; at < extent; at += chunk) lengths.push_back(std::min(chunk, extent - at));
  } else {
    lengths = split->ToInt64Vector();
    int64_t sum = 0;
    for (int64_t len : lengths) {
      if (len < 0) return ctx.Error("split lengths must not be negative");
      sum += len;
    }
    if (sum != extent) {
      return ctx.Error("split lengths add up to " + std::to_string(sum) + ", axis " + std::to_string(axis) + " has " +
                       std::to_string(extent));
    }
  }
  std::vector<Tensor> parts;
  int64_t begin = 0;
  for (int64_t len : lengths) {
    parts.push_back(SliceRange(*x, axis, begin, len, keep));
    begin += len;
  }
  return SetSequence(ctx, 0, x->dtype(), std::move(parts));
}

Status RunConcatFromSequence(KernelContext& ctx) {
  ASSIGN_OR_RETURN(const Tensor* s, SequenceInput(ctx, 0));
  const std::vector<Tensor>& parts = s->elements();
  if (parts.empty()) return ctx.Error("concatenates an empty sequence");
  const bool new_axis = ctx.node().GetInt("new_axis", 0) != 0;
  if (!ctx.node().Has("axis")) return ctx.Error("attribute 'axis' is required");
  const Shape& first = parts.front().shape();
  const auto rank = static_cast<int64_t>(first.size());
  // With new_axis the parts are stacked: a dimension of 1 is inserted at `axis` first.
  ASSIGN_OR_RETURN(const int64_t axis,
                   NormalizeAxis(ctx.node().GetInt("axis", 0), rank + (new_axis ? 1 : 0), ctx.node()));
  Shape out_shape = first;
  if (new_axis) out_shape.insert(out_shape.begin() + axis, 0);
  out_shape[static_cast<size_t>(axis)] = 0;  // the parts' extents are added below
  std::vector<Tensor> shaped;
  for (const Tensor& p : parts) {
    Shape shape = p.shape();
    if (new_axis) shape.insert(shape.begin() + axis, 1);
    if (p.dtype() != parts.front().dtype() || shape.size() != out_shape.size()) {
      return ctx.Error("element " + DescribeTensor(p) + " does not match " + DescribeTensor(parts.front()));
    }
    for (size_t d = 0; d < shape.size(); ++d) {
      if (static_cast<int64_t>(d) != axis && shape[d] != out_shape[d]) {
        return ctx.Error("element " + DescribeTensor(p) + " differs from " + DescribeTensor(parts.front()) +
                         " outside axis " + std::to_string(axis));
      }
    }
    out_shape[static_cast<size_t>(axis)] += shape[static_cast<size_t>(axis)];
    shaped.push_back(p.Reshaped(shape));
  }
  Tensor out(parts.front().dtype(), out_shape);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out_shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < out_shape.size(); ++d) inner *= out_shape[d];
  const int64_t total = out_shape[static_cast<size_t>(axis)];
  int64_t offset = 0;
  for (const Tensor& p : shaped) {
    const int64_t len = p.dim(axis);
    for (int64_t o = 0; o < outer; ++o)
      CopyElements(p, o * len * inner, out, (o * total + offset) * inner, len * inner);
    offset += len;
  }
  if (Tensor* y = ctx.output(0)) *y = std::move(out);
  return Status::Ok();
}

// SequenceMap: the body runs once per element of input 0; further inputs are passed whole when they
// are tensors and element by element when they are sequences (of the same length). Each body output
// becomes a sequence.
Status RunSequenceMap(KernelContext& ctx) {
  const Graph* body = ctx.node().GetGraph("body");
  if (body == nullptr) return ctx.Error("missing body");
  ASSIGN_OR_RETURN(const Tensor* s, SequenceInput(ctx, 0));
  const size_t length = s->elements().size();
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    const Tensor* in = ctx.input(i);
    if (in == nullptr) return ctx.Error("input " + std::to_string(i) + " is missing");
    if (in->is_sequence() && in->elements().size() != length) {
      return ctx.Error("sequence inputs have different lengths (" + std::to_string(length) + " and " +
                       std::to_string(in->elements().size()) + ")");
    }
  }
  if (body->outputs.size() != ctx.num_outputs()) {
    return ctx.Error("body returns " + std::to_string(body->outputs.size()) + " values, SequenceMap has " +
                     std::to_string(ctx.num_outputs()) + " outputs");
  }
  std::vector<std::vector<Tensor>> results(ctx.num_outputs());
  for (size_t k = 0; k < length; ++k) {
    std::vector<Tensor> args;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* in = ctx.input(i);
      args.push_back(in->is_sequence() ? in->elements()[k] : *in);
    }
    ASSIGN_OR_RETURN(std::vector<Tensor> outs, ctx.RunSubgraph(*body, args));
    if (outs.size() != results.size()) return ctx.Error("body returned the wrong number of values");
    for (size_t j = 0; j < outs.size(); ++j) results[j].push_back(std::move(outs[j]));
  }
  for (size_t j = 0; j < results.size(); ++j) {
    const DType dtype = results[j].empty() ? body->outputs[j].dtype : results[j].front().dtype();
    RETURN_IF_ERROR(SetSequence(ctx, j, dtype, std::move(results[j])));  // dtype was read before
  }
  return Status::Ok();
}

// Optional: wraps its input (an optional holding a value is that value), or makes an empty optional
// of the type the `type` attribute names.
Status RunOptional(KernelContext& ctx) {
  Tensor* out = ctx.output(0);
  if (out == nullptr) return Status::Ok();
  if (const Tensor* in = ctx.input(0)) {
    *out = in->Clone();
    return Status::Ok();
  }
  const auto it = ctx.node().attributes.find("type");
  if (it == ctx.node().attributes.end() || it->second.kind != Attribute::Kind::kType) {
    return ctx.Error("an Optional without an input needs the 'type' attribute");
  }
  const auto dtype = DTypeFromOnnx(static_cast<int32_t>(it->second.i));
  if (!dtype) return ctx.Error("element type " + std::to_string(it->second.i) + " is not supported");
  *out = Tensor::None(*dtype, it->second.s == "sequence");
  return Status::Ok();
}

Status RunOptionalHasElement(KernelContext& ctx) {
  const Tensor* in = ctx.input(0);
  if (Tensor* out = ctx.output(0)) {
    *out = Tensor(DType::kBool, {});
    out->data<bool>()[0] = in != nullptr && !in->is_none();
  }
  return Status::Ok();
}

Status RunOptionalGetElement(KernelContext& ctx) {
  const Tensor* in = ctx.input(0);
  if (in == nullptr || in->is_none()) {
    return ctx.Error("input '" + (ctx.node().inputs.empty() ? std::string() : ctx.node().inputs[0]) +
                     "' is an empty optional");
  }
  if (Tensor* out = ctx.output(0)) *out = in->Clone();
  return Status::Ok();
}

}  // namespace

std::vector<OpEntry> SequenceOps() {
  constexpr bool kSelfAllocating = true;
  return {
      {"SequenceEmpty", InferAtRunTime, RunSequenceEmpty, "", kSelfAllocating},
      {"SequenceConstruct", InferAtRunTime, RunSequenceConstruct, "", kSelfAllocating},
      {"SequenceInsert", InferAtRunTime, RunSequenceInsert, "", kSelfAllocating},
      {"SequenceAt", InferAtRunTime, RunSequenceAt, "", kSelfAllocating},
      {"SequenceErase", InferAtRunTime, RunSequenceErase, "", kSelfAllocating},
      {"SequenceLength", InferAtRunTime, RunSequenceLength, "", kSelfAllocating},
      {"SplitToSequence", InferAtRunTime, RunSplitToSequence, "", kSelfAllocating},
      {"ConcatFromSequence", InferAtRunTime, RunConcatFromSequence, "", kSelfAllocating},
      {"SequenceMap", InferAtRunTime, RunSequenceMap, "", kSelfAllocating},
      {"Optional", InferAtRunTime, RunOptional, "", kSelfAllocating},
      {"OptionalHasElement", InferAtRunTime, RunOptionalHasElement, "", kSelfAllocating},
      {"OptionalGetElement", InferAtRunTime, RunOptionalGetElement, "", kSelfAllocating},
  };
}

}  // namespace chipfit
