// Reference Compress, Unique, ReverseSequence, MaxUnpool, Shrink.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/reference/conv_util.h"
#include "core/reference/ops.h"
#include "core/reference/ref_util.h"

namespace chipfit {
namespace {

// Data-movement ops copy elements as bytes; strings have no fixed-size storage in a Tensor.
Status RejectString(const InferContext& ctx, size_t i) {
  const ValueInfo* in = ctx.input(i);
  if (in == nullptr || in->dtype != DType::kString) return Status::Ok();
  return Unsupported(ctx.node().Describe() + ": string tensors are not supported");
}

// A tensor seen as outer x len x inner around one axis (the flattened tensor is 1 x numel x 1).
struct AxisView {
  int64_t outer = 1, len = 1, inner = 1;
};

AxisView ViewAround(const Shape& shape, std::optional<int64_t> axis) {
  if (!axis) return {1, NumElements(shape), 1};
  AxisView v;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    const int64_t n = shape[static_cast<size_t>(d)];
    if (d < *axis) v.outer *= n;
    if (d == *axis) v.len = n;
    if (d > *axis) v.inner *= n;
  }
  return v;
}

// The optional `axis` attribute of Compress and Unique, normalised; nullopt means "flatten".
Result<std::optional<int64_t>> OptionalAxis(const Node& node, int64_t rank) {
  if (!node.Has("axis")) return std::optional<int64_t>{};
  if (rank == 0) return InvalidArgument(node.Describe() + ": a scalar has no axis to select along");
  ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node.GetInt("axis", 0), rank, node));
  return std::optional<int64_t>{axis};
}

// ---------------------------------------------------------------------------------------------
// Compress

// Indices along the axis that the condition keeps. A condition shorter than the axis drops the
// tail (spec); a longer one may only hold false past the end, as in numpy.compress. `len` < 0 is
// unknown (shape inference) and skips that check.
Result<std::vector<int64_t>> CompressPicks(const Node& node, const Tensor& condition, int64_t len) {
  if (condition.dtype() != DType::kBool) {
    return InvalidArgument(node.Describe() + ": condition must be bool, got " +
                           std::string(DTypeName(condition.dtype())));
  }
  if (condition.rank() != 1) {
    return InvalidArgument(node.Describe() + ": condition must be 1-D, got shape " + ShapeToString(condition.shape()));
  }
  std::vector<int64_t> picks;
  const bool* c = condition.data<bool>();
  for (int64_t i = 0; i < condition.numel(); ++i) {
    if (!c[i]) continue;
    if (len >= 0 && i >= len) {
      return InvalidArgument(node.Describe() + ": condition selects index " + std::to_string(i) +
                             " but the selected axis has only " + std::to_string(len) + " entries");
    }
    picks.push_back(i);
  }
  return picks;
}

Status InferCompress(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr || ctx.input(1) == nullptr) return ctx.Error("needs inputs 'input' and 'condition'");
  RETURN_IF_ERROR(RejectString(ctx, 0));
  const int64_t rank = static_cast<int64_t>(x->shape.size());
  ASSIGN_OR_RETURN(std::optional<int64_t> axis, OptionalAxis(ctx.node(), rank));
  const Tensor* condition = ctx.RequireValue(1);
  if (condition == nullptr) return ctx.ValueNeeded();
  const bool known = std::all_of(x->shape.begin(), x->shape.end(), [](int64_t d) { return d >= 0; });
  int64_t len = -1;
  if (axis) {
    len = x->shape[static_cast<size_t>(*axis)];
  } else if (known) {
    len = NumElements(x->shape);
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> picks, CompressPicks(ctx.node(), *condition, len));
  const auto count = static_cast<int64_t>(picks.size());
  Shape out = {count};
  if (axis) {
    out = x->shape;
    out[static_cast<size_t>(*axis)] = count;
  }
  ctx.SetOutput(0, x->dtype, out);
  return Status::Ok();
}

Status RunCompress(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(std::optional<int64_t> axis, OptionalAxis(ctx.node(), x.rank()));
  const AxisView v = ViewAround(x.shape(), axis);
  ASSIGN_OR_RETURN(std::vector<int64_t> picks, CompressPicks(ctx.node(), *ctx.input(1), v.len));
  const size_t block = static_cast<size_t>(v.inner) * DTypeSize(x.dtype());
  const auto* src = static_cast<const char*>(x.raw_data());
  auto* dst = static_cast<char*>(ctx.output(0)->raw_data());
  if (block == 0) return Status::Ok();
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i : picks) {
      std::memcpy(dst, src + static_cast<size_t>(o * v.len + i) * block, block);
      dst += block;
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Unique

// Compared as float: the 16-bit types have no operators of their own.
template <typename T>
auto Key(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return static_cast<float>(v);
  } else {
    return v;
  }
}

// A strict weak order in which NaN sorts after every number and equals every other NaN, so all
// NaNs collapse into one unique value (numpy >= 1.21 does the same).
template <typename K>
int Compare(K a, K b) {
  if constexpr (std::is_floating_point_v<K>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) - std::isnan(b);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

struct UniquePlan {
  AxisView view;
  std::vector<int64_t> first;    // per unique slice, in output order: its first index along the axis
  std::vector<int64_t> counts;   // per unique slice: how often it occurs
  std::vector<int64_t> inverse;  // per index along the axis: its unique slice
};

// Slices are compared element by element in row-major order of the other dims (outer, then inner),
// which is numpy's lexicographic order for unique along an axis.
Result<UniquePlan> PlanUnique(const Node& node, const Tensor& x) {
  ASSIGN_OR_RETURN(std::optional<int64_t> axis, OptionalAxis(node, x.rank()));
  const int64_t sorted = node.GetInt("sorted", 1);
  if (sorted != 0 && sorted != 1) {
    return InvalidArgument(node.Describe() + ": sorted " + std::to_string(sorted) + " must be 0 or 1");
  }
  UniquePlan plan;
  plan.view = ViewAround(x.shape(), axis);
  const AxisView v = plan.view;
  std::vector<int64_t> order(static_cast<size_t>(v.len));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::vector<std::vector<int64_t>> groups;
  RETURN_IF_ERROR(VisitKernelDType(node, x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* p = x.data<T>();
    auto compare = [&](int64_t a, int64_t b) {
      for (int64_t o = 0; o < v.outer; ++o) {
        const T* base = p + o * v.len * v.inner;
        for (int64_t i = 0; i < v.inner; ++i) {
          if (const int c = Compare(Key(base[a * v.inner + i]), Key(base[b * v.inner + i])); c != 0) return c;
        }
      }
      return 0;
    };
    // Stable, so each run of equal slices starts with the first occurrence.
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
    for (size_t k = 0; k < order.size(); ++k) {
      if (k == 0 || compare(order[k - 1], order[k]) != 0) groups.emplace_back();
      groups.back().push_back(order[k]);
    }
    return Status::Ok();
  }));
  if (sorted == 0) {
    std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  }
  plan.inverse.resize(static_cast<size_t>(v.len));
  for (size_t g = 0; g < groups.size(); ++g) {
    plan.first.push_back(groups[g].front());
    plan.counts.push_back(static_cast<int64_t>(groups[g].size()));
    for (int64_t k : groups[g]) plan.inverse[static_cast<size_t>(k)] = static_cast<int64_t>(g);
  }
  return plan;
}

Status InferUnique(InferContext& ctx) {
  if (ctx.input(0) == nullptr) return ctx.Error("missing input 'X'");
  RETURN_IF_ERROR(RejectString(ctx, 0));
  const Tensor* x = ctx.RequireValue(0);
  if (x == nullptr) return ctx.ValueNeeded();
  ASSIGN_OR_RETURN(UniquePlan plan, PlanUnique(ctx.node(), *x));
  const auto unique = static_cast<int64_t>(plan.first.size());
  Shape y = {unique};
  if (ctx.node().Has("axis")) {
    ASSIGN_OR_RETURN(std::optional<int64_t> axis, OptionalAxis(ctx.node(), x->rank()));
    y = x->shape();
    y[static_cast<size_t>(*axis)] = unique;
  }
  ctx.SetOutput(0, x->dtype(), y);
  ctx.SetOutput(1, DType::kI64, {unique});
  ctx.SetOutput(2, DType::kI64, {plan.view.len});
  ctx.SetOutput(3, DType::kI64, {unique});
  return Status::Ok();
}

Status RunUnique(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(UniquePlan plan, PlanUnique(ctx.node(), x));
  const AxisView v = plan.view;
  if (Tensor* y = ctx.output(0)) {
    const size_t block = static_cast<size_t>(v.inner) * DTypeSize(x.dtype());
    const auto* src = static_cast<const char*>(x.raw_data());
    auto* dst = static_cast<char*>(y->raw_data());
    for (int64_t o = 0; o < v.outer && block > 0; ++o) {
      for (int64_t k : plan.first) {
        std::memcpy(dst, src + static_cast<size_t>(o * v.len + k) * block, block);
        dst += block;
      }
    }
  }
  auto store = [&](size_t i, const std::vector<int64_t>& values) {
    if (Tensor* t = ctx.output(i)) std::copy(values.begin(), values.end(), t->data<int64_t>());
  };
  store(1, plan.first);
  store(2, plan.inverse);
  store(3, plan.counts);
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// ReverseSequence

struct SequenceAxes {
  int64_t batch = 1, time = 0;
};

Result<SequenceAxes> ReadSequenceAxes(const Node& node, const Shape& x) {
  const SequenceAxes axes{node.GetInt("batch_axis", 1), node.GetInt("time_axis", 0)};
  if ((axes.batch != 0 && axes.batch != 1) || (axes.time != 0 && axes.time != 1) || axes.batch == axes.time) {
    return InvalidArgument(node.Describe() + ": batch_axis " + std::to_string(axes.batch) + " and time_axis " +
                           std::to_string(axes.time) + " must be 0 and 1, one each");
  }
  if (x.size() < 2) {
    return InvalidArgument(node.Describe() + ": input must have rank >= 2, got " + ShapeToString(x));
  }
  return axes;
}

Status InferReverseSequence(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  const ValueInfo* lens = ctx.input(1);
  if (x == nullptr || lens == nullptr) return ctx.Error("needs inputs 'input' and 'sequence_lens'");
  RETURN_IF_ERROR(RejectString(ctx, 0));
  ASSIGN_OR_RETURN(SequenceAxes axes, ReadSequenceAxes(ctx.node(), x->shape));
  if (lens->dtype != DType::kI64) {
    return ctx.Error("sequence_lens must be int64, got " + std::string(DTypeName(lens->dtype)));
  }
  const int64_t batch = x->shape[static_cast<size_t>(axes.batch)];
  if (lens->shape.size() != 1 || (batch >= 0 && lens->shape[0] >= 0 && lens->shape[0] != batch)) {
    return ctx.Error("sequence_lens has shape " + ShapeToString(lens->shape) + " but needs one length per batch (" +
                     std::to_string(batch) + ")");
  }
  ctx.SetOutput(0, x->dtype, x->shape);
  return Status::Ok();
}

Status RunReverseSequence(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(SequenceAxes axes, ReadSequenceAxes(ctx.node(), x.shape()));
  const int64_t batches = x.dim(axes.batch), steps = x.dim(axes.time);
  const size_t block = static_cast<size_t>(Product(x.shape(), 2)) * DTypeSize(x.dtype());
  // Shapes unknown at compile time were not checked by the shape function.
  if (ctx.input(1)->numel() != batches) {
    return ctx.Error("sequence_lens has shape " + ShapeToString(ctx.input(1)->shape()) +
                     " but needs one length per batch (" + std::to_string(batches) + ")");
  }
  const int64_t* lens = ctx.input(1)->data<int64_t>();
  const auto* src = static_cast<const char*>(x.raw_data());
  auto* dst = static_cast<char*>(ctx.output(0)->raw_data());
  auto at = [&](int64_t b, int64_t t) {
    return static_cast<size_t>(axes.batch == 0 ? b * steps + t : t * batches + b) * block;
  };
  for (int64_t b = 0; b < batches; ++b) {
    const int64_t len = lens[b];
    if (len < 0 || len > steps) {
      return ctx.Error("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(len) + " is outside [0, " +
                       std::to_string(steps) + "]");
    }
    for (int64_t t = 0; t < steps && block > 0; ++t) {
      std::memcpy(dst + at(b, t), src + at(b, t < len ? len - 1 - t : t), block);
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// MaxUnpool

// The unpooled shape: output_shape when given, else each spatial dim grown back by the pool window
// ((in - 1) * stride + kernel - pads). Dims < 0 are unknown.
Result<Shape> UnpoolShape(const Node& node, const Shape& x, const Tensor* output_shape) {
  if (x.size() < 3) {
    return InvalidArgument(node.Describe() + ": input X must be N x C x D1 ... (rank >= 3), got " + ShapeToString(x));
  }
  if (!node.Has("kernel_shape")) return InvalidArgument(node.Describe() + ": attribute kernel_shape is required");
  ASSIGN_OR_RETURN(const Window w, ReadWindow(node, Shape(x.begin() + 2, x.end()), node.GetInts("kernel_shape")));
  if (output_shape != nullptr) {
    const std::vector<int64_t> dims = output_shape->ToInt64Vector();
    const bool negative = std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; });
    if (output_shape->rank() != 1 || dims.size() != x.size() || negative) {
      return InvalidArgument(node.Describe() + ": output_shape " + JoinInts(dims) + " must list " +
                             std::to_string(x.size()) + " non-negative dims (N, C, D1 ...)");
    }
    return dims;
  }
  Shape out = {x[0], x[1]};
  for (size_t i = 0; i < w.rank(); ++i) {
    if (w.in[i] < 0) {
      out.push_back(-1);
      continue;
    }
    const int64_t d = (w.in[i] - 1) * w.strides[i] + w.kernel[i] - w.pad_begin[i] - w.pad_end[i];
    if (d < 0) {
      return InvalidArgument(node.Describe() + ": pads " + JoinInts(node.GetInts("pads")) +
                             " leave no output in spatial dim " + std::to_string(i));
    }
    out.push_back(d);
  }
  return out;
}

Status InferMaxUnpool(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  const ValueInfo* indices = ctx.input(1);
  if (x == nullptr || indices == nullptr) return ctx.Error("needs inputs 'X' and 'I'");
  RETURN_IF_ERROR(CheckDType(ctx, 0, kFloatDTypes));
  if (indices->dtype != DType::kI64) return ctx.Error("I must be int64, got " + std::string(DTypeName(indices->dtype)));
  if (indices->shape.size() != x->shape.size()) {
    return ctx.Error("I has shape " + ShapeToString(indices->shape) + " but X has " + ShapeToString(x->shape));
  }
  const Tensor* output_shape = nullptr;
  if (ctx.node().HasInput(2)) {
    output_shape = ctx.RequireValue(2);
    if (output_shape == nullptr) return ctx.ValueNeeded();
  }
  ASSIGN_OR_RETURN(Shape out, UnpoolShape(ctx.node(), x->shape, output_shape));
  ctx.SetOutput(0, x->dtype, out);
  return Status::Ok();
}

// The indices address the default unpooled shape (X's dims grown back by the pool window). When
// output_shape asks for more, that result sits at the start of every dim and the rest is zero: the
// semantics of the ONNX reference implementation and of the backend suite's
// test_maxunpool_export_with_output_shape. ONNX Runtime (1.30) instead reads the indices as positions
// in output_shape; the two agree whenever output_shape is the default shape (docs/cli.md, conformance).
Status RunMaxUnpool(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& indices = *ctx.input(1);
  if (indices.shape() != x.shape()) {
    return ctx.Error("I has shape " + ShapeToString(indices.shape()) + " but X has " + ShapeToString(x.shape()));
  }
  Tensor& y = *ctx.output(0);
  ASSIGN_OR_RETURN(const Shape unpooled, UnpoolShape(ctx.node(), x.shape(), nullptr));
  for (size_t d = 0; d < unpooled.size(); ++d) {
    const bool batch_or_channel = d < 2;
    if (batch_or_channel ? y.dim(static_cast<int64_t>(d)) != unpooled[d]
                         : y.dim(static_cast<int64_t>(d)) < unpooled[d]) {
      return ctx.Error("output_shape " + ShapeToString(y.shape()) + " is smaller than the unpooled shape " +
                       ShapeToString(unpooled) + " (or changes N or C)");
    }
  }
  // The executor may hand an arena slot that holds old data; all-zero bytes are 0.0 in every float type.
  if (y.nbytes()) std::memset(y.raw_data(), 0, y.nbytes());
  const size_t es = DTypeSize(x.dtype());
  const int64_t* at = indices.data<int64_t>();
  const auto* src = static_cast<const char*>(x.raw_data());
  auto* dst = static_cast<char*>(y.raw_data());
  const std::vector<int64_t> from_strides = Strides(unpooled);
  const std::vector<int64_t> to_strides = Strides(y.shape());
  const int64_t unpooled_numel = NumElements(unpooled);
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (at[i] < 0 || at[i] >= unpooled_numel) {
      return ctx.Error("index " + std::to_string(at[i]) + " at I[" + std::to_string(i) + "] is outside the unpooled " +
                       ShapeToString(unpooled) + " (" + std::to_string(unpooled_numel) + " elements)");
    }
    int64_t rest = at[i], target = 0;
    for (size_t d = 0; d < unpooled.size(); ++d) {
      target += rest / from_strides[d] * to_strides[d];
      rest %= from_strides[d];
    }
    std::memcpy(dst + static_cast<size_t>(target) * es, src + static_cast<size_t>(i) * es, es);
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Shrink

Status InferShrink(InferContext& ctx) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("missing input");
  if (x->dtype == DType::kBool || x->dtype == DType::kString) {
    return Unsupported(ctx.node().Describe() + ": Shrink takes numeric tensors, not " +
                       std::string(DTypeName(x->dtype)));
  }
  ctx.SetOutput(0, x->dtype, x->shape);
  return Status::Ok();
}

// Computed in double and stored with truncation toward zero, as the ONNX reference casts its
// float64 result back (an integer input with a fractional bias loses the fraction).
Status RunShrink(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const double bias = ctx.node().GetFloat("bias", 0.0f);
  const double lambd = ctx.node().GetFloat("lambd", 0.5f);
  return VisitKernelDType(ctx.node(), x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* out = ctx.output(0)->data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double v = static_cast<double>(Key(in[i]));
      out[i] = FromDouble<T>(v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0));
    }
    return Status::Ok();
  });
}

}  // namespace

std::vector<OpEntry> SelectionOps() {
  return {
      {"Compress", InferCompress, RunCompress},
      {"Unique", InferUnique, RunUnique},
      {"ReverseSequence", InferReverseSequence, RunReverseSequence},
      {"MaxUnpool", InferMaxUnpool, RunMaxUnpool},
      {"Shrink", InferShrink, RunShrink},
  };
}

}  // namespace chipfit
