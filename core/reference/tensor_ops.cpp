// Reference kernels: data movement and tensor construction (Reshape … Gather, Pad, Shape, Constant, Range …).
// Ops that only move elements copy DTypeSize() bytes, so they serve every dtype without templates.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>

#include "core/reference/index_maps.h"
#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

// ---------------------------------------------------------------------------------------------
// Shared helpers

std::string Join(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Product of dims; -1 when any is unknown (shape inference before shapes are specialised).
int64_t Product(const Shape& shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t d = begin; d < end && d < shape.size(); ++d) {
    if (shape[d] < 0) return -1;
    n *= shape[d];
  }
  return n;
}

// Row-major walk over every coordinate of `shape`; f(flat, coord).
template <typename F>
void ForEachCoord(const Shape& shape, F&& f) {
  const int64_t n = NumElements(shape);
  std::vector<int64_t> c(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    f(i, c);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++c[d] < shape[d]) break;
      c[d] = 0;
    }
  }
}

// dst[i] = src[source(coord of i)], or the element at `fill` (zero bytes when null) where source is -1.
template <typename F>
void MoveElements(const Tensor& src, Tensor& dst, F&& source, const void* fill = nullptr) {
  const size_t es = DTypeSize(dst.dtype());
  const char* s = static_cast<const char*>(src.raw_data());
  char* d = static_cast<char*>(dst.raw_data());
  ForEachCoord(dst.shape(), [&](int64_t i, const std::vector<int64_t>& c) {
    const int64_t from = source(c);
    char* to = d + static_cast<size_t>(i) * es;
    if (from >= 0) {
      std::memcpy(to, s + static_cast<size_t>(from) * es, es);
    } else if (fill != nullptr) {
      std::memcpy(to, fill, es);
    } else {
      std::memset(to, 0, es);
    }
  });
}

// Index values with negatives wrapped and each checked against [-dim, dim).
Result<std::vector<int64_t>> CheckedIndices(const Node& node, const Tensor& indices, int64_t dim) {
  std::vector<int64_t> out = indices.ToInt64Vector();
  for (int64_t& i : out) {
    if (i < -dim || i >= dim) {
      return InvalidArgument(node.Describe() + ": index " + std::to_string(i) + " is out of range for a dim of " +
                             std::to_string(dim));
    }
    if (i < 0) i += dim;
  }
  return out;
}

Status CheckIndexType(InferContext& ctx, size_t i) {
  const ValueInfo* in = ctx.input(i);
  if (in == nullptr) return ctx.Error("missing indices input " + std::to_string(i));
  if (!IsOneOf(in->dtype, {DType::kI32, DType::kI64})) {
    return ctx.Error("indices must be int32 or int64, got " + std::string(DTypeName(in->dtype)));
  }
  return Status::Ok();
}

// Integer list from an input (opset forms where an attribute became an input) or from an attribute.
// Returns nullopt-like `missing` when shape inference has to wait for the value.
struct IntList {
  bool present = false;
  bool missing = false;
  std::vector<int64_t> values;
};

IntList IntsFromInput(InferContext& ctx, size_t i) {
  IntList list;
  if (!ctx.node().HasInput(i)) return list;
  list.present = true;
  const Tensor* t = ctx.RequireValue(i);
  if (t == nullptr) {
    list.missing = true;
  } else {
    list.values = t->ToInt64Vector();
  }
  return list;
}

IntList IntsFromInput(const KernelContext& ctx, size_t i) {
  IntList list;
  if (ctx.input(i) == nullptr) return list;
  list.present = true;
  list.values = ctx.input(i)->ToInt64Vector();
  return list;
}

// The attribute before `input_since`, the input from then on.
template <typename Ctx>
IntList IntsAttrOrInput(Ctx& ctx, const char* attr, size_t input, int64_t input_since) {
  if (ctx.opset() >= input_since) return IntsFromInput(ctx, input);
  IntList list;
  list.present = ctx.node().Has(attr);
  list.values = ctx.node().GetInts(attr);
  return list;
}

// Kernel of every op whose output holds input 0's bytes unchanged (Reshape, Flatten, Squeeze, Identity …).
Status RunCopy(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  Tensor& y = *ctx.output(0);
  // Identity of a sequence or an empty optional: the same value (a sequence's elements are immutable).
  if (!x.is_dense()) {
    y = x;
    return Status::Ok();
  }
  if (x.dtype() == DType::kString) {
    if (y.dtype() != DType::kString || y.numel() != x.numel())
      return Internal(ctx.node().Describe() + ": output size differs");
    std::copy(x.data<std::string>(), x.data<std::string>() + x.numel(), y.data<std::string>());
    return Status::Ok();
  }
  if (y.nbytes() != x.nbytes()) return Internal(ctx.node().Describe() + ": output size differs from input size");
  if (x.nbytes()) std::memcpy(y.raw_data(), x.raw_data(), x.nbytes());
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout

}  // namespace

Result<Shape> ReshapeTarget(const Node& node, const Shape& in, const std::vector<int64_t>& target, bool allowzero) {
  Shape out(target.size());
  int64_t infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t t = target[i];
    if (t == -1) {
      if (infer_at >= 0) return InvalidArgument(node.Describe() + ": shape " + Join(target) + " has two -1 dims");
      infer_at = static_cast<int64_t>(i);
      out[i] = -1;
      continue;
    }
    if (t < -1) return InvalidArgument(node.Describe() + ": shape " + Join(target) + " has a dim below -1");
    if (t == 0 && !allowzero) {
      if (i >= in.size()) {
        return InvalidArgument(node.Describe() + ": shape " + Join(target) + " copies dim " + std::to_string(i) +
                               " but the input has rank " + std::to_string(in.size()));
      }
      t = in[i];  // may be -1 (unknown) before shape specialisation
    }
    out[i] = t;
    known = known < 0 || t < 0 ? -1 : known * t;
  }
  if (allowzero && infer_at >= 0 && known == 0) {
    return InvalidArgument(node.Describe() + ": shape " + Join(target) + " has both 0 and -1 with allowzero=1");
  }
  const int64_t total = Product(in, 0, in.size());
  if (total < 0 || known < 0) return out;  // unknown dims: leave -1 for shape specialisation
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0) {
      return InvalidArgument(node.Describe() + ": cannot reshape " + ShapeToString(in) + " to " + Join(target));
    }
    out[static_cast<size_t>(infer_at)] = total / known;
  } else if (known != total) {
    return InvalidArgument(node.Describe() + ": cannot reshape " + ShapeToString(in) + " (" + std::to_string(total) +
                           " elements) to " + Join(target));
  }
  return out;
}

namespace {

Status InferReshape(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input 'data'");
  IntList target = IntsAttrOrInput(ctx, "shape", 1, 5);
  if (target.missing) return ctx.ValueNeeded();
  if (!target.present) return ctx.Error("missing the target shape");
  const bool allowzero = ctx.opset() >= 14 && ctx.node().GetInt("allowzero", 0) != 0;
  ASSIGN_OR_RETURN(Shape out, ReshapeTarget(ctx.node(), x->shape, target.values, allowzero));
  ctx.SetOutput(0, x->dtype, out);
  return Status::Ok();
}

Status InferFlatten(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input");
  const auto rank = static_cast<int64_t>(x->shape.size());
  int64_t axis = ctx.node().GetInt("axis", 1);
  if (axis < -rank || axis > rank) {
    return ctx.Error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  if (axis < 0) axis += rank;
  const auto a = static_cast<size_t>(axis);
  ctx.SetOutput(0, x->dtype, {Product(x->shape, 0, a), Product(x->shape, a, x->shape.size())});
  return Status::Ok();
}

Status InferSqueeze(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input");
  IntList axes = IntsAttrOrInput(ctx, "axes", 1, 13);
  if (axes.missing) return ctx.ValueNeeded();
  const auto rank = static_cast<int64_t>(x->shape.size());
  ASSIGN_OR_RETURN(std::vector<int64_t> norm, NormalizeAxes(axes.values, rank, ctx.node()));
  std::vector<bool> drop(x->shape.size(), false);
  for (int64_t a : norm) {
    const int64_t dim = a < rank ? x->shape[static_cast<size_t>(a)] : 0;
    if (dim != 1 && dim != -1) {
      return ctx.Error("cannot squeeze axis " + std::to_string(a) + " of shape " + ShapeToString(x->shape));
    }
    drop[static_cast<size_t>(a)] = true;
  }
  Shape out;
  for (size_t d = 0; d < x->shape.size(); ++d) {
    if (!(norm.empty() ? x->shape[d] == 1 : drop[d])) out.push_back(x->shape[d]);
  }
  ctx.SetOutput(0, x->dtype, out);
  return Status::Ok();
}

Status InferUnsqueeze(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input");
  IntList axes = IntsAttrOrInput(ctx, "axes", 1, 13);
  if (axes.missing) return ctx.ValueNeeded();
  if (axes.values.empty()) return ctx.Error("needs at least one axis");
  const auto out_rank = static_cast<int64_t>(x->shape.size() + axes.values.size());
  ASSIGN_OR_RETURN(std::vector<int64_t> norm, NormalizeAxes(axes.values, out_rank, ctx.node()));
  Shape out;
  size_t next = 0;
  for (int64_t d = 0; d < out_rank; ++d) {
    const bool inserted = std::find(norm.begin(), norm.end(), d) != norm.end();
    out.push_back(inserted ? 1 : x->shape[next++]);
  }
  ctx.SetOutput(0, x->dtype, out);
  return Status::Ok();
}

Status InferDropout(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input");
  ctx.SetOutput(0, x->dtype, x->shape);
  // The mask had the data's type until opset 10 made it bool.
  ctx.SetOutput(1, ctx.opset() < 10 ? x->dtype : DType::kBool, x->shape);
  return Status::Ok();
}

// training_mode (opset 12): each element is kept with probability 1 − ratio and scaled by
// 1 / (1 − ratio), the mask says which were kept. The draws come from RandomStream (the `seed`
// attribute, else the node's name), so a profile measures the same work on every run.
Status RunTrainingDropout(KernelContext& ctx, double ratio) {
  if (!(ratio >= 0 && ratio < 1)) return ctx.Error("ratio " + std::to_string(ratio) + " is outside [0, 1)");
  const Tensor& x = *ctx.input(0);
  Tensor& y = *ctx.output(0);
  Tensor* mask = ctx.output(1);
  SplitMix64 rng = RandomStream(ctx.node());
  const double scale = 1.0 / (1.0 - ratio);
  return VisitKernelDType(ctx.node(), x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (!std::is_floating_point_v<T> && !std::is_same_v<T, Float16> && !std::is_same_v<T, BFloat16>) {
      return ctx.Error("training mode takes float data, got " + std::string(DTypeName(x.dtype())));
    } else {
      for (int64_t i = 0; i < x.numel(); ++i) {
        const bool keep = ratio == 0 || rng.Unit() >= ratio;
        y.data<T>()[i] = keep ? T(static_cast<float>(static_cast<double>(x.data<T>()[i]) * scale)) : T(0.0f);
        if (mask != nullptr) mask->data<bool>()[i] = keep;
      }
      return Status::Ok();
    }
  });
}

Status RunDropout(KernelContext& ctx) {
  if (ctx.opset() >= 12 && ctx.input(2) != nullptr && ctx.input(2)->numel() > 0 && ctx.input(2)->GetAsInt64(0) != 0) {
    const double ratio = ctx.input(1) != nullptr && ctx.input(1)->numel() > 0 ? ctx.input(1)->GetAsDouble(0) : 0.5;
    return RunTrainingDropout(ctx, ratio);
  }
  RETURN_IF_ERROR(RunCopy(ctx));
  Tensor* mask = ctx.output(1);
  if (mask == nullptr) return Status::Ok();
  return VisitKernelDType(ctx.node(), mask->dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    std::fill(mask->data<T>(), mask->data<T>() + mask->numel(), FromDouble<T>(1.0));
    return Status::Ok();
  });
}

// ---------------------------------------------------------------------------------------------
// Transpose, Concat, Split

Result<std::vector<int64_t>> Permutation(const Node& node, size_t rank) {
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  perm = node.GetInts("perm", perm);
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (perm.size() != rank || p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)]) {
      return InvalidArgument(node.Describe() + ": perm " + Join(perm) + " is not a permutation of " +
                             std::to_string(rank) + " axes");
    }
    seen[static_cast<size_t>(p)] = true;
  }
  if (perm.size() != rank) return InvalidArgument(node.Describe() + ": perm " + Join(perm) + " has the wrong length");
  return perm;
}

Status InferTranspose(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input");
  ASSIGN_OR_RETURN(std::vector<int64_t> perm, Permutation(ctx.node(), x->shape.size()));
  Shape out;
  for (int64_t p : perm) out.push_back(x->shape[static_cast<size_t>(p)]);
  ctx.SetOutput(0, x->dtype, out);
  return Status::Ok();
}

Status RunTranspose(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(std::vector<int64_t> perm, Permutation(ctx.node(), x.shape().size()));
  const std::vector<int64_t> strides = Strides(x.shape());
  MoveElements(x, *ctx.output(0), [&](const std::vector<int64_t>& c) {
    int64_t from = 0;
    for (size_t i = 0; i < c.size(); ++i) from += c[i] * strides[static_cast<size_t>(perm[i])];
    return from;
  });
  return Status::Ok();
}

Status InferConcat(InferContext& ctx) {
  const ValueInfo* first = ctx.input(0);
  if (first == nullptr) return ctx.Error("needs at least one input");
  const auto rank = static_cast<int64_t>(first->shape.size());
  if (!ctx.node().Has("axis")) return ctx.Error("missing attribute 'axis'");
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", 0), rank, ctx.node()));
  if (rank == 0) return ctx.Error("cannot concatenate scalars");
  Shape out = first->shape;
  out[static_cast<size_t>(axis)] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const ValueInfo* in = ctx.input(i);
    if (in == nullptr) return ctx.Error("input " + std::to_string(i) + " is missing");
    if (in->dtype != first->dtype || in->shape.size() != first->shape.size()) {
      return ctx.Error("input " + std::to_string(i) + " has dtype/rank " + std::string(DTypeName(in->dtype)) + "[" +
                       ShapeToString(in->shape) + "], unlike input 0");
    }
    for (size_t d = 0; d < out.size(); ++d) {
      const int64_t dim = in->shape[d];
      if (static_cast<int64_t>(d) == axis) {
        out[d] = out[d] < 0 || dim < 0 ? -1 : out[d] + dim;
      } else if (dim >= 0 && out[d] >= 0 && dim != out[d]) {
        return ctx.Error("input " + std::to_string(i) + " shape " + ShapeToString(in->shape) + " does not match " +
                         ShapeToString(first->shape) + " outside axis " + std::to_string(axis));
      } else if (out[d] < 0) {
        out[d] = dim;
      }
    }
  }
  ctx.SetOutput(0, first->dtype, out);
  return Status::Ok();
}

// Copies `len` slices along `axis` from src (starting at src_at) to dst (starting at dst_at); src and dst
// agree on every other dim. Concat and Split are this copy in opposite directions.
void CopySlices(const Tensor& src, int64_t src_at, Tensor& dst, int64_t dst_at, int64_t axis, int64_t len) {
  const size_t es = DTypeSize(dst.dtype());
  const int64_t outer = Product(dst.shape(), 0, static_cast<size_t>(axis));
  const auto inner = static_cast<size_t>(Product(dst.shape(), static_cast<size_t>(axis) + 1, dst.shape().size())) * es;
  const auto bytes = static_cast<size_t>(len) * inner;
  if (bytes == 0) return;
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(static_cast<char*>(dst.raw_data()) + static_cast<size_t>(o * dst.dim(axis) + dst_at) * inner,
                static_cast<const char*>(src.raw_data()) + static_cast<size_t>(o * src.dim(axis) + src_at) * inner,
                bytes);
  }
}

Status RunConcat(KernelContext& ctx) {
  Tensor& y = *ctx.output(0);
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", 0), y.rank(), ctx.node()));
  int64_t offset = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    CopySlices(*ctx.input(i), 0, y, offset, axis, ctx.input(i)->dim(axis));
    offset += ctx.input(i)->dim(axis);
  }
  return Status::Ok();
}

template <typename Ctx>
Result<std::vector<int64_t>> SplitSizes(Ctx& ctx, int64_t dim, bool* missing) {
  const Node& node = ctx.node();
  const auto n_out = static_cast<int64_t>(node.outputs.size());
  IntList split = IntsAttrOrInput(ctx, "split", 1, 13);
  if (split.missing) {
    *missing = true;
    return std::vector<int64_t>{};
  }
  if (split.present && !split.values.empty()) {
    int64_t sum = 0;
    bool negative = false;
    for (int64_t s : split.values) {
      sum += s;
      negative = negative || s < 0;
    }
    if (negative || static_cast<int64_t>(split.values.size()) != n_out || (dim >= 0 && sum != dim)) {
      return InvalidArgument(node.Describe() + ": split " + Join(split.values) + " does not cut a dim of " +
                             std::to_string(dim) + " into " + std::to_string(n_out) + " parts");
    }
    return split.values;
  }
  if (dim < 0) return std::vector<int64_t>(static_cast<size_t>(n_out), -1);
  if (ctx.opset() >= 18 && node.Has("num_outputs")) {
    // num_outputs: equal chunks of ceil(dim / n), the last one smaller when dim does not divide.
    const int64_t n = node.GetInt("num_outputs", 0);
    if (n != n_out || n <= 0) {
      return InvalidArgument(node.Describe() + ": num_outputs " + std::to_string(n) + " but the node has " +
                             std::to_string(n_out) + " outputs");
    }
    const int64_t chunk = (dim + n - 1) / n;
    std::vector<int64_t> sizes(static_cast<size_t>(n), chunk);
    sizes.back() = dim - chunk * (n - 1);
    if (sizes.back() < 0) {
      return InvalidArgument(node.Describe() + ": cannot split a dim of " + std::to_string(dim) + " into " +
                             std::to_string(n) + " parts");
    }
    return sizes;
  }
  if (n_out == 0 || dim % n_out != 0) {
    return InvalidArgument(node.Describe() + ": a dim of " + std::to_string(dim) + " does not split evenly into " +
                           std::to_string(n_out) + " outputs");
  }
  return std::vector<int64_t>(static_cast<size_t>(n_out), dim / n_out);
}

Status InferSplit(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input");
  ASSIGN_OR_RETURN(int64_t axis,
                   NormalizeAxis(ctx.node().GetInt("axis", 0), static_cast<int64_t>(x->shape.size()), ctx.node()));
  if (x->shape.empty()) return ctx.Error("cannot split a scalar");
  bool missing = false;
  ASSIGN_OR_RETURN(std::vector<int64_t> sizes, SplitSizes(ctx, x->shape[static_cast<size_t>(axis)], &missing));
  if (missing) return ctx.ValueNeeded();
  for (size_t i = 0; i < sizes.size(); ++i) {
    Shape out = x->shape;
    out[static_cast<size_t>(axis)] = sizes[i];
    ctx.SetOutput(i, x->dtype, out);
  }
  return Status::Ok();
}

Status RunSplit(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", 0), x.rank(), ctx.node()));
  bool missing = false;
  ASSIGN_OR_RETURN(std::vector<int64_t> sizes, SplitSizes(ctx, x.dim(axis), &missing));
  int64_t offset = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (Tensor* y = ctx.output(i)) CopySlices(x, offset, *y, 0, axis, sizes[i]);
    offset += sizes[i];
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Slice

struct SliceSpec {
  std::vector<int64_t> start, step;
  Shape out;
};

template <typename Ctx>
Result<SliceSpec> PlanSlice(Ctx& ctx, const Shape& in, bool* missing) {
  const Node& node = ctx.node();
  IntList starts = IntsAttrOrInput(ctx, "starts", 1, 10);
  IntList ends = IntsAttrOrInput(ctx, "ends", 2, 10);
  IntList axes = IntsAttrOrInput(ctx, "axes", 3, 10);
  IntList steps = ctx.opset() >= 10 ? IntsFromInput(ctx, 4) : IntList{};
  if (starts.missing || ends.missing || axes.missing || steps.missing) {
    *missing = true;
    return SliceSpec{};
  }
  const size_t n = starts.values.size();
  if (!axes.present) {
    axes.values.resize(n);
    std::iota(axes.values.begin(), axes.values.end(), int64_t{0});
  }
  if (!steps.present) steps.values.assign(n, 1);
  if (ends.values.size() != n || axes.values.size() != n || steps.values.size() != n) {
    return InvalidArgument(node.Describe() + ": starts " + Join(starts.values) + ", ends " + Join(ends.values) +
                           ", axes " + Join(axes.values) + " and steps " + Join(steps.values) +
                           " must have the same length");
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> norm, NormalizeAxes(axes.values, static_cast<int64_t>(in.size()), node));
  SliceSpec spec{std::vector<int64_t>(in.size(), 0), std::vector<int64_t>(in.size(), 1), in};
  for (size_t i = 0; i < n; ++i) {
    const auto a = static_cast<size_t>(norm[i]);
    const int64_t dim = in[a];
    const int64_t step = steps.values[i];
    if (step == 0) return InvalidArgument(node.Describe() + ": steps must not be 0");
    if (dim <= 0) {
      spec.out[a] = dim;  // empty stays empty; unknown stays unknown
      continue;
    }
    int64_t s = starts.values[i];
    int64_t e = ends.values[i];
    if (s < 0) s = s < -dim ? -1 : s + dim;  // written to avoid overflow on INT64_MIN
    if (e < 0) e = e < -dim ? -1 : e + dim;
    // Forward steps clamp to [0, dim]; backward steps to [0, dim-1] for the start and [-1, dim-1] for the end.
    s = step > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
    e = step > 0 ? std::clamp<int64_t>(e, 0, dim) : std::clamp<int64_t>(e, -1, dim - 1);
    const int64_t span = step > 0 ? e - s : s - e;
    const int64_t abs_step = step > 0 ? step : (step == std::numeric_limits<int64_t>::min() ? dim : -step);
    spec.start[a] = s;
    spec.step[a] = step;
    spec.out[a] = span <= 0 ? 0 : 1 + (span - 1) / abs_step;
  }
  return spec;
}

// Shape function of ops whose output is input 0's dtype in the shape a plan computes from the node's
// value inputs (Slice, Pad).
template <auto kPlan>
Status InferPlanned(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input 0");
  bool missing = false;
  ASSIGN_OR_RETURN(auto spec, kPlan(ctx, x->shape, &missing));
  if (missing) return ctx.ValueNeeded();
  ctx.SetOutput(0, x->dtype, spec.out);
  return Status::Ok();
}

Status RunSlice(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  bool missing = false;
  ASSIGN_OR_RETURN(SliceSpec spec, PlanSlice(ctx, x.shape(), &missing));
  const std::vector<int64_t> strides = Strides(x.shape());
  MoveElements(x, *ctx.output(0), [&](const std::vector<int64_t>& c) {
    int64_t from = 0;
    for (size_t d = 0; d < c.size(); ++d) from += (spec.start[d] + c[d] * spec.step[d]) * strides[d];
    return from;
  });
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Gather, GatherElements, GatherND, ScatterElements, ScatterND

Status InferGather(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input 'data'");
  RETURN_IF_ERROR(CheckIndexType(ctx, 1));
  const auto rank = static_cast<int64_t>(x->shape.size());
  if (rank == 0) return ctx.Error("data must have rank >= 1");
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", 0), rank, ctx.node()));
  Shape out(x->shape.begin(), x->shape.begin() + axis);
  for (int64_t d : ctx.input(1)->shape) out.push_back(d);
  for (auto d = static_cast<size_t>(axis) + 1; d < x->shape.size(); ++d) out.push_back(x->shape[d]);
  ctx.SetOutput(0, x->dtype, out);
  return Status::Ok();
}

Status RunGather(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", 0), x.rank(), ctx.node()));
  ASSIGN_OR_RETURN(std::vector<int64_t> idx, CheckedIndices(ctx.node(), *ctx.input(1), x.dim(axis)));
  const int64_t outer = Product(x.shape(), 0, static_cast<size_t>(axis));
  const int64_t inner = Product(x.shape(), static_cast<size_t>(axis) + 1, x.shape().size());
  const size_t block = static_cast<size_t>(inner) * DTypeSize(x.dtype());
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(ctx.output(0)->raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i : idx) {
      if (block) std::memcpy(dst, src + static_cast<size_t>(o * x.dim(axis) + i) * block, block);
      dst += block;
    }
  }
  return Status::Ok();
}

// GatherElements and ScatterElements: data and indices of equal rank, indices within data's extent
// on every axis but `axis`.
Result<int64_t> CheckElementsShapes(InferContext& ctx, const ValueInfo& data, const ValueInfo& indices) {
  RETURN_IF_ERROR(CheckIndexType(ctx, 1));
  const auto rank = static_cast<int64_t>(data.shape.size());
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", 0), rank, ctx.node()));
  bool fits = indices.shape.size() == data.shape.size() && rank > 0;
  for (size_t d = 0; fits && d < data.shape.size(); ++d) {
    fits = static_cast<int64_t>(d) == axis || indices.shape[d] <= data.shape[d] || data.shape[d] < 0;
  }
  if (!fits) {
    return InvalidArgument(ctx.node().Describe() + ": indices " + ShapeToString(indices.shape) + " do not fit data " +
                           ShapeToString(data.shape) + " on axis " + std::to_string(axis));
  }
  return axis;
}

Status InferGatherElements(InferContext& ctx) {
  if (ctx.input(0) == nullptr || ctx.input(1) == nullptr) return ctx.Error("needs inputs 'data' and 'indices'");
  RETURN_IF_ERROR(CheckElementsShapes(ctx, *ctx.input(0), *ctx.input(1)).status());
  ctx.SetOutput(0, ctx.input(0)->dtype, ctx.input(1)->shape);
  return Status::Ok();
}

// For every element of `indices`: the flat index in `data` it addresses (its own coordinate with the
// coordinate on `axis` replaced by the index value).
Result<std::vector<int64_t>> ElementTargets(const KernelContext& ctx, const Tensor& data, const Tensor& indices) {
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", 0), data.rank(), ctx.node()));
  ASSIGN_OR_RETURN(std::vector<int64_t> idx, CheckedIndices(ctx.node(), indices, data.dim(axis)));
  const std::vector<int64_t> strides = Strides(data.shape());
  std::vector<int64_t> targets(idx.size());
  ForEachCoord(indices.shape(), [&](int64_t i, const std::vector<int64_t>& c) {
    int64_t at = 0;
    for (size_t d = 0; d < c.size(); ++d) {
      at += (static_cast<int64_t>(d) == axis ? idx[static_cast<size_t>(i)] : c[d]) * strides[d];
    }
    targets[static_cast<size_t>(i)] = at;
  });
  return targets;
}

Status RunGatherElements(KernelContext& ctx) {
  ASSIGN_OR_RETURN(std::vector<int64_t> targets, ElementTargets(ctx, *ctx.input(0), *ctx.input(1)));
  int64_t next = 0;
  MoveElements(*ctx.input(0), *ctx.output(0),
               [&](const std::vector<int64_t>&) { return targets[static_cast<size_t>(next++)]; });
  return Status::Ok();
}

// GatherND/ScatterND layout: indices [batch…, M…, k] address slices of data [batch…, k dims…, slice…].
struct NDLayout {
  int64_t batch = 1, per_batch = 1, k = 0, slice = 1, data_batch = 1;
};

Result<NDLayout> PlanND(const Node& node, const Shape& data, const Shape& indices, int64_t batch_dims) {
  const auto r = static_cast<int64_t>(data.size());
  const auto q = static_cast<int64_t>(indices.size());
  NDLayout l;
  if (q < 1 || batch_dims < 0 || batch_dims >= std::min(r, q)) {
    return InvalidArgument(node.Describe() + ": batch_dims " + std::to_string(batch_dims) + " does not fit data " +
                           ShapeToString(data) + " and indices " + ShapeToString(indices));
  }
  l.k = indices.back();
  if (l.k < 0) return l;  // unknown until shapes are specialised
  if (l.k > r - batch_dims) {
    return InvalidArgument(node.Describe() + ": indices' last dim " + std::to_string(l.k) + " exceeds data rank " +
                           std::to_string(r) + " minus batch_dims");
  }
  for (int64_t d = 0; d < batch_dims; ++d) {
    const auto ud = static_cast<size_t>(d);
    if (data[ud] != indices[ud] && data[ud] >= 0 && indices[ud] >= 0) {
      return InvalidArgument(node.Describe() + ": batch dims of data " + ShapeToString(data) + " and indices " +
                             ShapeToString(indices) + " differ");
    }
  }
  const auto b = static_cast<size_t>(batch_dims);
  l.batch = Product(data, 0, b);
  l.per_batch = Product(indices, b, indices.size() - 1);
  l.slice = Product(data, b + static_cast<size_t>(l.k), data.size());
  l.data_batch = Product(data, b, data.size());
  return l;
}

Status InferGatherND(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input 'data'");
  RETURN_IF_ERROR(CheckIndexType(ctx, 1));
  const Shape& ind = ctx.input(1)->shape;
  const int64_t b = ctx.opset() >= 12 ? ctx.node().GetInt("batch_dims", 0) : 0;
  ASSIGN_OR_RETURN(NDLayout l, PlanND(ctx.node(), x->shape, ind, b));
  if (l.k < 0) return ctx.Error("the last dim of indices must be known");
  Shape out(ind.begin(), ind.end() - 1);
  for (auto d = static_cast<size_t>(b + l.k); d < x->shape.size(); ++d) out.push_back(x->shape[d]);
  ctx.SetOutput(0, x->dtype, out);
  return Status::Ok();
}

// For each (batch, index tuple): the flat element offset in data where its slice starts.
Result<std::vector<int64_t>> NDOffsets(const Node& node, const Tensor& data, const Tensor& indices, int64_t b,
                                       const NDLayout& l) {
  const std::vector<int64_t> idx = indices.ToInt64Vector();
  const std::vector<int64_t> strides = Strides(data.shape());
  std::vector<int64_t> offsets;
  for (int64_t bi = 0; bi < l.batch; ++bi) {
    for (int64_t m = 0; m < l.per_batch; ++m) {
      int64_t at = bi * l.data_batch;
      for (int64_t t = 0; t < l.k; ++t) {
        const int64_t dim = data.dim(b + t);
        int64_t i = idx[static_cast<size_t>((bi * l.per_batch + m) * l.k + t)];
        if (i < -dim || i >= dim) {
          return InvalidArgument(node.Describe() + ": index " + std::to_string(i) + " is out of range for dim " +
                                 std::to_string(b + t) + " of size " + std::to_string(dim));
        }
        at += (i < 0 ? i + dim : i) * strides[static_cast<size_t>(b + t)];
      }
      offsets.push_back(at);
    }
  }
  return offsets;
}

Status RunGatherND(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const int64_t b = ctx.opset() >= 12 ? ctx.node().GetInt("batch_dims", 0) : 0;
  ASSIGN_OR_RETURN(NDLayout l, PlanND(ctx.node(), x.shape(), ctx.input(1)->shape(), b));
  ASSIGN_OR_RETURN(std::vector<int64_t> offsets, NDOffsets(ctx.node(), x, *ctx.input(1), b, l));
  const size_t es = DTypeSize(x.dtype());
  const size_t block = static_cast<size_t>(l.slice) * es;
  char* dst = static_cast<char*>(ctx.output(0)->raw_data());
  for (size_t j = 0; j < offsets.size(); ++j) {
    if (block) std::memcpy(dst + j * block, static_cast<const char*>(x.raw_data()) + offsets[j] * es, block);
  }
  return Status::Ok();
}

// Scatter reductions (opset 16: add, mul; 18: max, min); "none" overwrites.
template <typename T>
T Combine(const std::string& reduction, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    if (reduction == "add" || reduction == "max") return a || b;
    if (reduction == "mul" || reduction == "min") return a && b;
    return b;
  } else if constexpr (std::is_arithmetic_v<T>) {
    if (reduction == "add") return static_cast<T>(a + b);
    if (reduction == "mul") return static_cast<T>(a * b);
    if (reduction == "max") return std::max(a, b);
    if (reduction == "min") return std::min(a, b);
    return b;
  } else {
    return T(Combine<float>(reduction, static_cast<float>(a), static_cast<float>(b)));
  }
}

// The reduction attribute: add/mul came with opset 16 (ScatterElements-16, ScatterND-16), max/min with 18;
// a value the model's opset does not define is an error, not silently another opset's meaning.
Status CheckScatterReduction(const Node& node, int64_t opset) {
  const std::string reduction = node.GetString("reduction", "none");
  if (!(reduction == "none" || reduction == "add" || reduction == "mul" || reduction == "max" || reduction == "min")) {
    return InvalidArgument(node.Describe() + ": reduction '" + reduction + "' is not one of none, add, mul, max, min");
  }
  const int64_t since = reduction == "none" ? 1 : (reduction == "add" || reduction == "mul") ? 16 : 18;
  if (node.op_type == "Scatter" && reduction != "none") {
    return InvalidArgument(node.Describe() + ": Scatter has no reduction (ScatterElements-16 added it)");
  }
  if (opset < since) {
    return InvalidArgument(node.Describe() + ": reduction '" + reduction + "' exists from " + node.op_type + "-" +
                           std::to_string(since) + ", the model imports opset " + std::to_string(opset));
  }
  return Status::Ok();
}

// Shared tail of ScatterElements/ScatterND: output = data, then updates[j] combined into output[target j].
Status ScatterInto(KernelContext& ctx, const std::vector<int64_t>& targets, int64_t block) {
  RETURN_IF_ERROR(CheckScatterReduction(ctx.node(), ctx.opset()));
  const std::string reduction = ctx.node().GetString("reduction", "none");
  RETURN_IF_ERROR(RunCopy(ctx));
  const Tensor& updates = *ctx.input(2);
  Tensor& y = *ctx.output(0);
  return VisitKernelDType(ctx.node(), y.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* u = updates.data<T>();
    T* out = y.data<T>();
    for (size_t j = 0; j < targets.size(); ++j) {
      for (int64_t e = 0; e < block; ++e) {
        T& slot = out[targets[j] + e];
        slot = Combine(reduction, slot, u[static_cast<int64_t>(j) * block + e]);
      }
    }
    return Status::Ok();
  });
}

Status InferScatterElements(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  const ValueInfo* updates = ctx.input(2);
  if (x == nullptr || ctx.input(1) == nullptr || updates == nullptr) {
    return ctx.Error("needs inputs 'data', 'indices' and 'updates'");
  }
  RETURN_IF_ERROR(CheckScatterReduction(ctx.node(), ctx.opset()));
  RETURN_IF_ERROR(CheckElementsShapes(ctx, *x, *ctx.input(1)).status());
  if (updates->shape != ctx.input(1)->shape || updates->dtype != x->dtype) {
    return ctx.Error("updates " + ShapeToString(updates->shape) + " must match indices " +
                     ShapeToString(ctx.input(1)->shape) + " and have data's dtype");
  }
  ctx.SetOutput(0, x->dtype, x->shape);
  return Status::Ok();
}

Status RunScatterElements(KernelContext& ctx) {
  ASSIGN_OR_RETURN(std::vector<int64_t> targets, ElementTargets(ctx, *ctx.input(0), *ctx.input(1)));
  return ScatterInto(ctx, targets, 1);
}

Status InferScatterND(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  const ValueInfo* updates = ctx.input(2);
  if (x == nullptr || updates == nullptr) return ctx.Error("needs inputs 'data', 'indices' and 'updates'");
  RETURN_IF_ERROR(CheckScatterReduction(ctx.node(), ctx.opset()));
  RETURN_IF_ERROR(CheckIndexType(ctx, 1));
  const Shape& ind = ctx.input(1)->shape;
  ASSIGN_OR_RETURN(NDLayout l, PlanND(ctx.node(), x->shape, ind, 0));
  Shape expected(ind.begin(), ind.end() - 1);
  for (auto d = static_cast<size_t>(std::max<int64_t>(l.k, 0)); d < x->shape.size(); ++d) {
    expected.push_back(x->shape[d]);
  }
  if (l.k >= 0 && (updates->shape != expected || updates->dtype != x->dtype)) {
    return ctx.Error("updates " + ShapeToString(updates->shape) + " should be " + ShapeToString(expected) +
                     " with data's dtype");
  }
  ctx.SetOutput(0, x->dtype, x->shape);
  return Status::Ok();
}

Status RunScatterND(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(NDLayout l, PlanND(ctx.node(), x.shape(), ctx.input(1)->shape(), 0));
  ASSIGN_OR_RETURN(std::vector<int64_t> offsets, NDOffsets(ctx.node(), x, *ctx.input(1), 0, l));
  return ScatterInto(ctx, offsets, l.slice);
}

// ---------------------------------------------------------------------------------------------
// Expand, Tile, Pad

Status InferExpand(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input");
  const Tensor* shape = ctx.RequireValue(1);
  if (shape == nullptr) return ctx.ValueNeeded();
  const std::vector<int64_t> dims = shape->ToInt64Vector();
  if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; })) {
    return ctx.Error("shape " + Join(dims) + " has a negative dim");
  }
  auto out = BroadcastShapes(x->shape, dims);
  if (!out.ok()) return ctx.Error(out.status().message());
  ctx.SetOutput(0, x->dtype, *out);
  return Status::Ok();
}

Status RunExpand(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const BroadcastIndexer index(x.shape(), ctx.output(0)->shape());
  int64_t next = 0;
  MoveElements(x, *ctx.output(0), [&](const std::vector<int64_t>&) { return index(next++); });
  return Status::Ok();
}

Status InferTile(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input");
  const Tensor* repeats = ctx.RequireValue(1);
  if (repeats == nullptr) return ctx.ValueNeeded();
  const std::vector<int64_t> r = repeats->ToInt64Vector();
  if (r.size() != x->shape.size()) {
    return ctx.Error("repeats " + Join(r) + " must have one value per dim of " + ShapeToString(x->shape));
  }
  Shape out = x->shape;
  for (size_t d = 0; d < r.size(); ++d) {
    if (r[d] < 0) return ctx.Error("repeats " + Join(r) + " must not be negative");
    out[d] = out[d] < 0 ? -1 : out[d] * r[d];
  }
  ctx.SetOutput(0, x->dtype, out);
  return Status::Ok();
}

Status RunTile(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const std::vector<int64_t> strides = Strides(x.shape());
  MoveElements(x, *ctx.output(0), [&](const std::vector<int64_t>& c) {
    int64_t from = 0;
    for (size_t d = 0; d < c.size(); ++d) from += (c[d] % x.dim(static_cast<int64_t>(d))) * strides[d];
    return from;
  });
  return Status::Ok();
}

struct PadSpec {
  std::vector<int64_t> begin;
  Shape out;
  std::string mode;
};

template <typename Ctx>
Result<PadSpec> PlanPad(Ctx& ctx, const Shape& in, bool* missing) {
  const Node& node = ctx.node();
  IntList pads = IntsAttrOrInput(ctx, "pads", 1, 11);
  IntList axes = ctx.opset() >= 18 ? IntsFromInput(ctx, 3) : IntList{};
  if (pads.missing || axes.missing) {
    *missing = true;
    return PadSpec{};
  }
  const auto rank = static_cast<int64_t>(in.size());
  if (!axes.present) {
    axes.values.resize(in.size());
    std::iota(axes.values.begin(), axes.values.end(), int64_t{0});
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> norm, NormalizeAxes(axes.values, rank, node));
  if (pads.values.size() != 2 * norm.size()) {
    return InvalidArgument(node.Describe() + ": pads " + Join(pads.values) + " must hold 2 × " +
                           std::to_string(norm.size()) + " values");
  }
  PadSpec spec{std::vector<int64_t>(in.size(), 0), in, node.GetString("mode", "constant")};
  if (spec.mode != "constant" && spec.mode != "reflect" && spec.mode != "edge" && spec.mode != "wrap") {
    return InvalidArgument(node.Describe() + ": mode '" + spec.mode + "' is not constant, reflect, edge or wrap");
  }
  if (spec.mode == "wrap" && ctx.opset() < 19) {
    return InvalidArgument(node.Describe() + ": mode 'wrap' exists from Pad-19, the model imports opset " +
                           std::to_string(ctx.opset()));
  }
  for (size_t i = 0; i < norm.size(); ++i) {
    const auto a = static_cast<size_t>(norm[i]);
    const int64_t b = pads.values[i];
    const int64_t e = pads.values[i + norm.size()];
    spec.begin[a] = b;
    if (in[a] < 0) continue;
    spec.out[a] = in[a] + b + e;
    if (spec.out[a] < 0 || (in[a] == 0 && spec.out[a] > 0 && spec.mode != "constant")) {
      return InvalidArgument(node.Describe() + ": pads " + Join(pads.values) + " do not fit input " +
                             ShapeToString(in) + " in mode " + spec.mode);
    }
  }
  return spec;
}

// Source coordinate for output coordinate `c` on a dim of size n padded by `begin`; -1 = constant.
int64_t PadSource(const std::string& mode, int64_t c, int64_t begin, int64_t n) {
  int64_t i = c - begin;
  if (i >= 0 && i < n) return i;
  if (mode == "edge") return std::clamp<int64_t>(i, 0, n - 1);
  if (mode == "wrap") return ((i % n) + n) % n;
  if (mode == "reflect") {
    if (n == 1) return 0;
    const int64_t period = 2 * (n - 1);
    i = ((i % period) + period) % period;
    return i < n ? i : period - i;
  }
  return -1;
}

Status RunPad(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  bool missing = false;
  ASSIGN_OR_RETURN(PadSpec spec, PlanPad(ctx, x.shape(), &missing));
  double value = ctx.node().GetFloat("value", 0.0f);
  if (ctx.opset() >= 11) {
    const Tensor* v = ctx.input(2);
    value = v != nullptr && v->numel() > 0 ? v->GetAsDouble(0) : 0.0;
  }
  const std::vector<int64_t> strides = Strides(x.shape());
  return VisitKernelDType(ctx.node(), x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    T fill = FromDouble<T>(value);
    if constexpr (std::is_integral_v<T>) {
      // Integer constants skip the double (int64 beyond 2^53 stays exact).
      if (ctx.opset() >= 11 && ctx.input(2) != nullptr && ctx.input(2)->numel() > 0) {
        fill = static_cast<T>(ctx.input(2)->GetAsInt64(0));
      }
    }
    MoveElements(
        x, *ctx.output(0),
        [&](const std::vector<int64_t>& c) {
          int64_t from = 0;
          for (size_t d = 0; d < c.size(); ++d) {
            const int64_t i = PadSource(spec.mode, c[d], spec.begin[d], x.dim(static_cast<int64_t>(d)));
            if (i < 0) return int64_t{-1};
            from += i * strides[d];
          }
          return from;
        },
        &fill);
    return Status::Ok();
  });
}

// Pad's fill value: the attribute before opset 11, input 2 (default 0) from then on.
Result<double> PadValue(InferContext& ctx) {
  if (ctx.opset() < 11 || !ctx.node().HasInput(2)) return ctx.opset() < 11 ? ctx.node().GetFloat("value", 0.0f) : 0.0;
  const Tensor* v = ctx.RequireValue(2);
  if (v == nullptr) return Unsupported(ctx.node().Describe() + ": constant_value known only at run time");
  return v->numel() > 0 ? v->GetAsDouble(0) : 0.0;
}

// ---------------------------------------------------------------------------------------------
// Shape, Size, Constant, ConstantOfShape, Range, EyeLike, OneHot, NonZero

std::pair<int64_t, int64_t> ShapeRange(const Node& node, int64_t opset, int64_t rank) {
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  if (opset < 15) return {0, rank};
  return {clamp(node.GetInt("start", 0)), clamp(node.GetInt("end", rank))};
}

Status InferShape(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input");
  auto [start, end] = ShapeRange(ctx.node(), ctx.opset(), static_cast<int64_t>(x->shape.size()));
  ctx.SetOutput(0, DType::kI64, {std::max<int64_t>(end - start, 0)});
  return Status::Ok();
}

Status RunShape(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  auto [start, end] = ShapeRange(ctx.node(), ctx.opset(), x.rank());
  for (int64_t d = start; d < end; ++d) ctx.output(0)->data<int64_t>()[d - start] = x.dim(d);
  return Status::Ok();
}

Status InferSize(InferContext& ctx) {
  if (ctx.input(0) == nullptr) return ctx.Error("missing input");
  ctx.SetOutput(0, DType::kI64, {});
  return Status::Ok();
}

Status RunSize(KernelContext& ctx) {
  ctx.output(0)->data<int64_t>()[0] = ctx.input(0)->numel();
  return Status::Ok();
}

Result<Tensor> ConstantValue(const Node& node) {
  if (node.Has("sparse_value")) return Unsupported(node.Describe() + ": sparse_value constants are not supported");
  if (node.Has("value_string") || node.Has("value_strings")) {
    return Unsupported(node.Describe() + ": string constants are not supported");
  }
  if (const Tensor* t = node.GetTensor("value")) return *t;
  auto from = [](DType dtype, Shape shape, const auto& values) {
    Tensor t(dtype, std::move(shape));
    for (size_t i = 0; i < values.size(); ++i) {
      using V = std::decay_t<decltype(values[0])>;
      t.data<V>()[i] = values[i];
    }
    return t;
  };
  if (node.Has("value_float")) return from(DType::kF32, {}, std::vector<float>{node.GetFloat("value_float", 0)});
  if (node.Has("value_floats")) {
    const std::vector<float> v = node.GetFloats("value_floats");
    return from(DType::kF32, {static_cast<int64_t>(v.size())}, v);
  }
  if (node.Has("value_int")) return from(DType::kI64, {}, std::vector<int64_t>{node.GetInt("value_int", 0)});
  if (node.Has("value_ints")) {
    const std::vector<int64_t> v = node.GetInts("value_ints");
    return from(DType::kI64, {static_cast<int64_t>(v.size())}, v);
  }
  return InvalidArgument(node.Describe() + ": needs one of the attributes value, value_float(s), value_int(s)");
}

Status InferConstant(InferContext& ctx) {
  ASSIGN_OR_RETURN(Tensor value, ConstantValue(ctx.node()));
  ctx.SetOutput(0, value.dtype(), value.shape());
  return Status::Ok();
}

Status RunConstant(KernelContext& ctx) {
  ASSIGN_OR_RETURN(Tensor value, ConstantValue(ctx.node()));
  if (value.nbytes()) std::memcpy(ctx.output(0)->raw_data(), value.raw_data(), value.nbytes());
  return Status::Ok();
}

// ConstantOfShape's fill: a one-element tensor attribute, float 0 by default.
Result<Tensor> FillValue(const Node& node) {
  if (const Tensor* t = node.GetTensor("value")) {
    if (t->numel() != 1) return InvalidArgument(node.Describe() + ": attribute 'value' must hold one element");
    return *t;
  }
  return Tensor(DType::kF32, {1});
}

Status InferConstantOfShape(InferContext& ctx) {
  const Tensor* shape = ctx.RequireValue(0);
  if (shape == nullptr) return ctx.ValueNeeded();
  ASSIGN_OR_RETURN(Tensor value, FillValue(ctx.node()));
  const std::vector<int64_t> dims = shape->ToInt64Vector();
  for (int64_t d : dims) {
    if (d < 0) return ctx.Error("shape " + Join(dims) + " has a negative dim");
  }
  ctx.SetOutput(0, value.dtype(), dims);
  return Status::Ok();
}

Status RunConstantOfShape(KernelContext& ctx) {
  ASSIGN_OR_RETURN(Tensor value, FillValue(ctx.node()));
  Tensor& y = *ctx.output(0);
  const size_t es = DTypeSize(y.dtype());
  for (int64_t i = 0; i < y.numel(); ++i) {
    std::memcpy(static_cast<char*>(y.raw_data()) + static_cast<size_t>(i) * es, value.raw_data(), es);
  }
  return Status::Ok();
}

Result<int64_t> RangeCount(const Node& node, const Tensor& start, const Tensor& limit, const Tensor& delta) {
  if (start.numel() != 1 || limit.numel() != 1 || delta.numel() != 1) {
    return InvalidArgument(node.Describe() + ": start, limit and delta must be scalars");
  }
  if (start.dtype() != limit.dtype() || start.dtype() != delta.dtype() || start.dtype() == DType::kBool) {
    return InvalidArgument(node.Describe() + ": start, limit and delta must share one numeric dtype");
  }
  if (IsFloatingDType(start.dtype())) {
    const double d = delta.GetAsDouble(0);
    if (d == 0) return InvalidArgument(node.Describe() + ": delta must not be 0");
    return std::max<int64_t>(static_cast<int64_t>(std::ceil((limit.GetAsDouble(0) - start.GetAsDouble(0)) / d)), 0);
  }
  const int64_t s = start.GetAsInt64(0);
  const int64_t l = limit.GetAsInt64(0);
  const int64_t d = delta.GetAsInt64(0);
  if (d == 0) return InvalidArgument(node.Describe() + ": delta must not be 0");
  const int64_t span = l - s;
  // ceil((l - s) / d) in integers, for either sign of d.
  const int64_t n = span / d + ((span % d != 0 && ((span > 0) == (d > 0))) ? 1 : 0);
  return std::max<int64_t>(n, 0);
}

Status InferRange(InferContext& ctx) {
  const Tensor* start = ctx.RequireValue(0);
  const Tensor* limit = ctx.RequireValue(1);
  const Tensor* delta = ctx.RequireValue(2);
  if (start == nullptr || limit == nullptr || delta == nullptr) return ctx.ValueNeeded();
  ASSIGN_OR_RETURN(int64_t n, RangeCount(ctx.node(), *start, *limit, *delta));
  ctx.SetOutput(0, start->dtype(), {n});
  return Status::Ok();
}

Status RunRange(KernelContext& ctx) {
  Tensor& y = *ctx.output(0);
  const Tensor& start = *ctx.input(0);
  const Tensor& delta = *ctx.input(2);
  return VisitKernelDType(ctx.node(), y.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    for (int64_t i = 0; i < y.numel(); ++i) {
      if constexpr (std::is_integral_v<T>) {
        y.data<T>()[i] = static_cast<T>(start.GetAsInt64(0) + i * delta.GetAsInt64(0));
      } else {
        y.data<T>()[i] = FromDouble<T>(start.GetAsDouble(0) + static_cast<double>(i) * delta.GetAsDouble(0));
      }
    }
    return Status::Ok();
  });
}

Result<DType> EyeLikeDType(const Node& node, DType input) {
  if (!node.Has("dtype")) return input;
  const auto code = static_cast<int32_t>(node.GetInt("dtype", 0));
  std::optional<DType> d = DTypeFromOnnx(code);
  if (!d || *d == DType::kString)
    return InvalidArgument(node.Describe() + ": dtype " + std::to_string(code) + " is not supported");
  return *d;
}

Status InferEyeLike(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input");
  if (x->shape.size() != 2) return ctx.Error("input must be 2-D, got " + ShapeToString(x->shape));
  ASSIGN_OR_RETURN(DType dtype, EyeLikeDType(ctx.node(), x->dtype));
  ctx.SetOutput(0, dtype, x->shape);
  return Status::Ok();
}

Status RunEyeLike(KernelContext& ctx) {
  Tensor& y = *ctx.output(0);
  const int64_t k = ctx.node().GetInt("k", 0);
  return VisitKernelDType(ctx.node(), y.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    ForEachCoord(y.shape(), [&](int64_t i, const std::vector<int64_t>& c) {
      y.data<T>()[i] = FromDouble<T>(c[1] - c[0] == k ? 1.0 : 0.0);
    });
    return Status::Ok();
  });
}

Status InferOneHot(InferContext& ctx) {
  const ValueInfo* indices = ctx.input(0);
  const ValueInfo* values = ctx.input(2);
  if (indices == nullptr || values == nullptr) return ctx.Error("needs inputs 'indices', 'depth' and 'values'");
  const Tensor* depth = ctx.RequireValue(1);
  if (depth == nullptr) return ctx.ValueNeeded();
  if (depth->numel() != 1) return ctx.Error("depth must hold one value");
  if (NumElements(values->shape) != 2) return ctx.Error("values must hold [off_value, on_value]");
  const auto d = static_cast<int64_t>(depth->GetAsDouble(0));
  if (d < 1) return ctx.Error("depth " + std::to_string(d) + " must be positive");
  const auto out_rank = static_cast<int64_t>(indices->shape.size()) + 1;
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", -1), out_rank, ctx.node()));
  Shape out = indices->shape;
  out.insert(out.begin() + axis, d);
  ctx.SetOutput(0, values->dtype, out);
  return Status::Ok();
}

Status RunOneHot(KernelContext& ctx) {
  const Tensor& indices = *ctx.input(0);
  const Tensor& values = *ctx.input(2);
  Tensor& y = *ctx.output(0);
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.node().GetInt("axis", -1), y.rank(), ctx.node()));
  const int64_t depth = y.dim(axis);
  const int64_t inner = Product(y.shape(), static_cast<size_t>(axis) + 1, y.shape().size());
  const size_t es = DTypeSize(y.dtype());
  const char* off_on = static_cast<const char*>(values.raw_data());
  ForEachCoord(y.shape(), [&](int64_t i, const std::vector<int64_t>& c) {
    // The index element is the output coordinate without `axis`.
    const int64_t outer = i / (depth * inner);
    const int64_t at = outer * inner + i % inner;
    auto index = static_cast<int64_t>(indices.GetAsDouble(at));
    if (index < 0) index += depth;
    const bool on = index == c[static_cast<size_t>(axis)];
    std::memcpy(static_cast<char*>(y.raw_data()) + static_cast<size_t>(i) * es, off_on + (on ? es : 0), es);
  });
  return Status::Ok();
}

Status InferTrilu(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input");
  if (x->shape.size() < 2) return ctx.Error("input must have rank >= 2, got " + ShapeToString(x->shape));
  ctx.SetOutput(0, x->dtype, x->shape);
  return Status::Ok();
}

Status RunTrilu(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const int64_t k = ctx.input(1) != nullptr && ctx.input(1)->numel() > 0 ? ctx.input(1)->GetAsInt64(0) : 0;
  const bool upper = ctx.node().GetInt("upper", 1) != 0;
  const size_t r = x.shape().size();
  MoveElements(x, *ctx.output(0), [&](const std::vector<int64_t>& c) {
    const int64_t diag = c[r - 1] - c[r - 2];
    const bool keep = upper ? diag >= k : diag <= k;
    int64_t flat = 0;
    for (size_t d = 0; d < r; ++d) flat = flat * x.dim(static_cast<int64_t>(d)) + c[d];
    return keep ? flat : int64_t{-1};
  });
  return Status::Ok();
}

// Coordinates of non-zero elements of `x`, in row-major order ([rank][count], scalars as rank 1).
std::vector<std::vector<int64_t>> NonZeroCoords(const Tensor& x) {
  std::vector<std::vector<int64_t>> coords(std::max<size_t>(x.shape().size(), 1));
  ForEachCoord(x.shape(), [&](int64_t i, const std::vector<int64_t>& c) {
    if (x.GetAsDouble(i) == 0) return;
    for (size_t d = 0; d < coords.size(); ++d) coords[d].push_back(c.empty() ? 0 : c[d]);
  });
  return coords;
}

Status InferNonZero(InferContext& ctx) {
  const Tensor* x = ctx.RequireValue(0);
  if (x == nullptr) return ctx.ValueNeeded();
  if (x->dtype() == DType::kString) return ctx.Error("string input is not supported");
  const auto coords = NonZeroCoords(*x);
  ctx.SetOutput(0, DType::kI64, {static_cast<int64_t>(coords.size()), static_cast<int64_t>(coords[0].size())});
  return Status::Ok();
}

Status RunNonZero(KernelContext& ctx) {
  const auto coords = NonZeroCoords(*ctx.input(0));
  int64_t* out = ctx.output(0)->data<int64_t>();
  for (const auto& row : coords) out = std::copy(row.begin(), row.end(), out);
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// DepthToSpace, SpaceToDepth

Result<int64_t> BlockSize(InferContext& ctx, const ValueInfo& x) {
  const int64_t b = ctx.node().GetInt("blocksize", 0);
  if (b <= 0) return InvalidArgument(ctx.node().Describe() + ": blocksize must be positive");
  if (x.shape.size() != 4) {
    return InvalidArgument(ctx.node().Describe() + ": input must be 4-D NCHW, got " + ShapeToString(x.shape));
  }
  return b;
}

Status InferDepthToSpace(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input");
  ASSIGN_OR_RETURN(int64_t b, BlockSize(ctx, *x));
  const Shape& s = x->shape;
  if (s[1] >= 0 && s[1] % (b * b) != 0) {
    return ctx.Error("channels " + std::to_string(s[1]) + " do not divide by blocksize² " + std::to_string(b * b));
  }
  const std::string mode = ctx.node().GetString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return ctx.Error("mode '" + mode + "' is not DCR or CRD");
  auto mul = [b](int64_t d) { return d < 0 ? -1 : d * b; };
  ctx.SetOutput(0, x->dtype, {s[0], s[1] < 0 ? -1 : s[1] / (b * b), mul(s[2]), mul(s[3])});
  return Status::Ok();
}

Status InferSpaceToDepth(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input");
  ASSIGN_OR_RETURN(int64_t b, BlockSize(ctx, *x));
  const Shape& s = x->shape;
  if ((s[2] >= 0 && s[2] % b != 0) || (s[3] >= 0 && s[3] % b != 0)) {
    return ctx.Error("spatial dims " + ShapeToString(s) + " do not divide by blocksize " + std::to_string(b));
  }
  auto div = [b](int64_t d) { return d < 0 ? -1 : d / b; };
  ctx.SetOutput(0, x->dtype, {s[0], s[1] < 0 ? -1 : s[1] * b * b, div(s[2]), div(s[3])});
  return Status::Ok();
}

// Both ops pair a "deep" NCHW tensor (C·b² channels) with a "wide" one (b× larger H and W). DCR orders
// the deep channels as (bh, bw, c), CRD as (c, bh, bw).
template <bool kToSpace>
Status RunSpaceDepth(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  Tensor& y = *ctx.output(0);
  const int64_t b = ctx.node().GetInt("blocksize", 1);
  const bool crd = kToSpace && ctx.node().GetString("mode", "DCR") == "CRD";
  const Tensor& wide = kToSpace ? y : x;
  const Tensor& deep = kToSpace ? x : y;
  const int64_t c_wide = wide.dim(1), h = deep.dim(2), w = deep.dim(3);
  // Flat index in `deep` of the element at (n, c, H, W) of `wide`.
  auto deep_index = [&](const std::vector<int64_t>& c) {
    const int64_t bh = c[2] % b, bw = c[3] % b;
    const int64_t ch = crd ? (c[1] * b + bh) * b + bw : (bh * b + bw) * c_wide + c[1];
    return ((c[0] * deep.dim(1) + ch) * h + c[2] / b) * w + c[3] / b;
  };
  if constexpr (kToSpace) {
    MoveElements(x, y, deep_index);
  } else {
    // Walk the wide input and scatter: each element has exactly one destination.
    const size_t es = DTypeSize(x.dtype());
    ForEachCoord(x.shape(), [&](int64_t i, const std::vector<int64_t>& c) {
      std::memcpy(static_cast<char*>(y.raw_data()) + static_cast<size_t>(deep_index(c)) * es,
                  static_cast<const char*>(x.raw_data()) + static_cast<size_t>(i) * es, es);
    });
  }
  return Status::Ok();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ChannelShuffle (com.chipfit; FuseChannelShuffle writes it): Reshape [N, g, C/g, …] → Transpose
// (0, 2, 1, …) → Reshape [N, C, …] as one op. The input is read as attribute `shape` [N, C, …] (its
// element count must match, as a Reshape's); output channel j·g + i is input channel i·(C/g) + j.

Status InferChannelShuffle(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input");
  const int64_t group = ctx.node().GetInt("group", 0);
  const Shape shape = ctx.node().GetInts("shape");
  if (group <= 0) return ctx.Error("group must be positive, got " + std::to_string(group));
  if (shape.size() < 2 || std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; })) {
    return ctx.Error("shape must have a channel axis and no negative dims, got " + ShapeToString(shape));
  }
  if (shape[1] % group != 0) {
    return ctx.Error("channels " + std::to_string(shape[1]) + " do not divide into " + std::to_string(group) +
                     " groups");
  }
  const bool known = std::all_of(x->shape.begin(), x->shape.end(), [](int64_t d) { return d >= 0; });
  if (known && NumElements(x->shape) != NumElements(shape)) {
    return ctx.Error("input " + ShapeToString(x->shape) + " cannot be read as " + ShapeToString(shape));
  }
  ctx.SetOutput(0, x->dtype, shape);
  return Status::Ok();
}

Status RunChannelShuffle(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const int64_t group = ctx.node().GetInt("group", 1);
  const Shape shape = ctx.node().GetInts("shape");
  if (x.numel() != NumElements(shape)) {
    return ctx.Error("input " + ShapeToString(x.shape()) + " cannot be read as " + ShapeToString(shape));
  }
  const int64_t per_group = shape[1] / group;
  const std::vector<int64_t> strides = Strides(shape);
  MoveElements(x, *ctx.output(0), [&](const std::vector<int64_t>& c) {
    int64_t from = 0;
    for (size_t d = 0; d < c.size(); ++d) {
      const int64_t at = d == 1 ? c[1] % group * per_group + c[1] / group : c[d];
      from += at * strides[d];
    }
    return from;
  });
  return Status::Ok();
}

namespace {

// ---------------------------------------------------------------------------------------------
// CenterCropPad and Col2Im (opset 18)

// CenterCropPad's target dims: input 1 holds one size per axis in `axes` (all axes by default). Each axis is
// cropped or zero-padded around its centre; an odd difference puts the extra element at the end.
template <typename Ctx>
Result<Shape> CenterCropPadShape(Ctx& ctx, const Shape& in, const std::vector<int64_t>& sizes) {
  const Node& node = ctx.node();
  const auto rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes = node.GetInts("axes");
  if (!node.Has("axes")) {
    axes.resize(in.size());
    std::iota(axes.begin(), axes.end(), int64_t{0});
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> norm, NormalizeAxes(axes, rank, node));
  if (sizes.size() != norm.size()) {
    return InvalidArgument(node.Describe() + ": shape " + Join(sizes) + " must have one value per axis in " +
                           Join(norm));
  }
  Shape out = in;
  for (size_t i = 0; i < norm.size(); ++i) {
    if (sizes[i] < 0) return InvalidArgument(node.Describe() + ": shape " + Join(sizes) + " has a negative size");
    out[static_cast<size_t>(norm[i])] = sizes[i];
  }
  return out;
}

Status InferCenterCropPad(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input 'input_data'");
  const Tensor* sizes = ctx.RequireValue(1);
  if (sizes == nullptr) return ctx.ValueNeeded();
  ASSIGN_OR_RETURN(Shape out, CenterCropPadShape(ctx, x->shape, sizes->ToInt64Vector()));
  ctx.SetOutput(0, x->dtype, out);
  return Status::Ok();
}

Status RunCenterCropPad(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  Tensor& y = *ctx.output(0);
  const std::vector<int64_t> strides = Strides(x.shape());
  // Per dim, output coordinate c reads input c + shift (negative shift: padding before).
  std::vector<int64_t> shift(x.shape().size());
  for (size_t d = 0; d < shift.size(); ++d) {
    const int64_t in = x.shape()[d], out = y.shape()[d];
    shift[d] = in >= out ? (in - out) / 2 : -((out - in) / 2);
  }
  MoveElements(x, y, [&](const std::vector<int64_t>& c) {
    int64_t from = 0;
    for (size_t d = 0; d < c.size(); ++d) {
      const int64_t i = c[d] + shift[d];
      if (i < 0 || i >= x.shape()[d]) return int64_t{-1};
      from += i * strides[d];
    }
    return from;
  });
  return Status::Ok();
}

// Col2Im: input [N, C·∏block, L] holds L blocks; block l, element k lands at image position
// l·stride − pad_begin + k·dilation per spatial dim, and overlapping elements add up.
struct Col2ImPlan {
  std::vector<int64_t> image, block, strides, dilations, pads, blocks_per_dim;
  int64_t channels = -1;
};

template <typename Ctx>
Result<Col2ImPlan> PlanCol2Im(Ctx& ctx, const Shape& in, const Tensor& image, const Tensor& block) {
  const Node& node = ctx.node();
  Col2ImPlan p;
  p.image = image.ToInt64Vector();
  p.block = block.ToInt64Vector();
  const size_t r = p.image.size();
  p.strides = node.GetInts("strides", std::vector<int64_t>(r, 1));
  p.dilations = node.GetInts("dilations", std::vector<int64_t>(r, 1));
  p.pads = node.GetInts("pads", std::vector<int64_t>(2 * r, 0));
  if (in.size() != 3) return InvalidArgument(node.Describe() + ": input must be 3-D [N, C x prod(block_shape), L]");
  if (r == 0 || p.block.size() != r || p.strides.size() != r || p.dilations.size() != r || p.pads.size() != 2 * r) {
    return InvalidArgument(node.Describe() + ": image_shape " + Join(p.image) + ", block_shape " + Join(p.block) +
                           ", strides " + Join(p.strides) + ", dilations " + Join(p.dilations) + " and pads " +
                           Join(p.pads) + " must agree on the number of spatial dims");
  }
  int64_t block_size = 1, blocks = 1;
  for (size_t d = 0; d < r; ++d) {
    if (p.image[d] < 0 || p.block[d] <= 0 || p.strides[d] <= 0 || p.dilations[d] <= 0 || p.pads[d] < 0 ||
        p.pads[d + r] < 0) {
      return InvalidArgument(node.Describe() + ": image_shape " + Join(p.image) + ", block_shape " + Join(p.block) +
                             ", strides, dilations and pads must be positive (pads >= 0)");
    }
    const int64_t span = p.image[d] + p.pads[d] + p.pads[d + r] - p.dilations[d] * (p.block[d] - 1) - 1;
    if (span < 0) {
      return InvalidArgument(node.Describe() + ": block " + Join(p.block) + " does not fit image " + Join(p.image));
    }
    p.blocks_per_dim.push_back(span / p.strides[d] + 1);
    block_size *= p.block[d];
    blocks *= p.blocks_per_dim.back();
  }
  if (in[1] >= 0 && in[1] % block_size != 0) {
    return InvalidArgument(node.Describe() + ": input dim 1 (" + std::to_string(in[1]) +
                           ") is not a multiple of prod(block_shape) " + std::to_string(block_size));
  }
  if (in[2] >= 0 && in[2] != blocks) {
    return InvalidArgument(node.Describe() + ": input has " + std::to_string(in[2]) + " blocks, image " +
                           Join(p.image) + " with block " + Join(p.block) + " makes " + std::to_string(blocks));
  }
  p.channels = in[1] < 0 ? -1 : in[1] / block_size;
  return p;
}

Status InferCol2Im(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input 'input'");
  if (!IsFloatingDType(x->dtype)) {
    return Unsupported(ctx.node().Describe() + ": dtype " + std::string(DTypeName(x->dtype)) +
                       " is not supported (the reference Col2Im takes floating types)");
  }
  const Tensor* image = ctx.RequireValue(1);
  const Tensor* block = ctx.RequireValue(2);
  if (image == nullptr || block == nullptr) return ctx.ValueNeeded();
  ASSIGN_OR_RETURN(Col2ImPlan p, PlanCol2Im(ctx, x->shape, *image, *block));
  Shape out = {x->shape[0], p.channels};
  out.insert(out.end(), p.image.begin(), p.image.end());
  ctx.SetOutput(0, x->dtype, out);
  return Status::Ok();
}

Status RunCol2Im(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(Col2ImPlan p, PlanCol2Im(ctx, x.shape(), *ctx.input(1), *ctx.input(2)));
  const size_t r = p.image.size();
  const int64_t block_size = NumElements(p.block), blocks = x.dim(2), plane = NumElements(p.image);
  const int64_t images = x.dim(0) * p.channels;
  std::vector<double> acc(static_cast<size_t>(images * plane), 0.0);
  return VisitKernelDType(ctx.node(), x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* in = x.data<T>();
    std::vector<int64_t> k(r), l(r);
    for (int64_t img = 0; img < images; ++img) {  // img = n·C + c: input rows img·∏block + k
      for (int64_t kf = 0; kf < block_size; ++kf) {
        int64_t rem = kf;
        for (size_t d = r; d-- > 0;) k[d] = rem % p.block[d], rem /= p.block[d];
        for (int64_t lf = 0; lf < blocks; ++lf) {
          rem = lf;
          int64_t at = 0;
          bool inside = true;
          for (size_t d = r; d-- > 0;) l[d] = rem % p.blocks_per_dim[d], rem /= p.blocks_per_dim[d];
          for (size_t d = 0; d < r && inside; ++d) {
            const int64_t pos = l[d] * p.strides[d] - p.pads[d] + k[d] * p.dilations[d];
            inside = pos >= 0 && pos < p.image[d];
            at = at * p.image[d] + pos;
          }
          if (inside) {
            acc[static_cast<size_t>(img * plane + at)] +=
                static_cast<double>(in[(img * block_size + kf) * blocks + lf]);
          }
        }
      }
    }
    T* out = ctx.output(0)->data<T>();
    for (size_t i = 0; i < acc.size(); ++i) out[i] = FromDouble<T>(acc[i]);
    return Status::Ok();
  });
}

}  // namespace

Result<IndexMaps> PadIndexMaps(InferContext& ctx, const Shape& in) {
  bool missing = false;
  ASSIGN_OR_RETURN(PadSpec spec, PlanPad(ctx, in, &missing));
  if (missing) return Unsupported(ctx.node().Describe() + ": pads known only at run time");
  IndexMaps maps{.out = spec.out};
  ASSIGN_OR_RETURN(maps.fill, PadValue(ctx));
  for (size_t d = 0; d < in.size(); ++d) {
    std::vector<int64_t>& source = maps.source.emplace_back(static_cast<size_t>(spec.out[d]));
    for (int64_t c = 0; c < spec.out[d]; ++c)
      source[static_cast<size_t>(c)] = PadSource(spec.mode, c, spec.begin[d], in[d]);
  }
  return maps;
}

Result<IndexMaps> SliceIndexMaps(InferContext& ctx, const Shape& in) {
  bool missing = false;
  ASSIGN_OR_RETURN(SliceSpec spec, PlanSlice(ctx, in, &missing));
  if (missing) return Unsupported(ctx.node().Describe() + ": starts, ends, axes or steps known only at run time");
  IndexMaps maps{.out = spec.out};
  for (size_t d = 0; d < in.size(); ++d) {
    std::vector<int64_t>& source = maps.source.emplace_back(static_cast<size_t>(std::max<int64_t>(spec.out[d], 0)));
    for (size_t c = 0; c < source.size(); ++c) source[c] = spec.start[d] + static_cast<int64_t>(c) * spec.step[d];
  }
  return maps;
}

std::vector<OpEntry> TensorOps() {
  return {
      {"Reshape", InferReshape, RunCopy},
      {"Flatten", InferFlatten, RunCopy},
      {"Squeeze", InferSqueeze, RunCopy},
      {"Unsqueeze", InferUnsqueeze, RunCopy},
      {"Identity", InferSameAsInput0, RunCopy},
      {"Dropout", InferDropout, RunDropout},
      {"Transpose", InferTranspose, RunTranspose},
      {"Concat", InferConcat, RunConcat},
      {"Split", InferSplit, RunSplit},
      {"Slice", InferPlanned<PlanSlice<InferContext>>, RunSlice},
      {"Gather", InferGather, RunGather},
      {"GatherElements", InferGatherElements, RunGatherElements},
      {"GatherND", InferGatherND, RunGatherND},
      {"ScatterElements", InferScatterElements, RunScatterElements},
      {"Scatter", InferScatterElements, RunScatterElements},  // opset 9–10 name of ScatterElements
      {"ScatterND", InferScatterND, RunScatterND},
      {"Expand", InferExpand, RunExpand},
      {"Tile", InferTile, RunTile},
      {"Pad", InferPlanned<PlanPad<InferContext>>, RunPad},
      {"Shape", InferShape, RunShape},
      {"Size", InferSize, RunSize},
      {"Constant", InferConstant, RunConstant},
      {"ConstantOfShape", InferConstantOfShape, RunConstantOfShape},
      {"Range", InferRange, RunRange},
      {"EyeLike", InferEyeLike, RunEyeLike},
      {"OneHot", InferOneHot, RunOneHot},
      {"Trilu", InferTrilu, RunTrilu},
      {"NonZero", InferNonZero, RunNonZero},
      {"DepthToSpace", InferDepthToSpace, RunSpaceDepth<true>},
      {"SpaceToDepth", InferSpaceToDepth, RunSpaceDepth<false>},
      {"CenterCropPad", InferCenterCropPad, RunCenterCropPad},
      {"Col2Im", InferCol2Im, RunCol2Im},
  };
}

}  // namespace chipfit
