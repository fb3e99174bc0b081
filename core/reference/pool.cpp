// Reference kernels: MaxPool (with Indices), AveragePool, LpPool and their Global forms.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/reference/conv_util.h"
#include "core/reference/ops.h"

namespace chipfit {
namespace {

enum class PoolKind { kMax, kAverage, kLp };

struct PoolOp {
  PoolKind kind;
  bool global;
};

// The window of a pooling node over X [N, C, D...]; global pools cover the whole spatial plane.
Result<Window> PoolWindow(const Node& node, const Shape& x, bool global) {
  if (x.size() < (global ? 2u : 3u)) {
    return InvalidArgument(node.Describe() + ": input X must be N x C x D1 ... (rank >= " + (global ? "2" : "3") +
                           "), got " + ShapeToString(x));
  }
  Shape in(x.begin() + 2, x.end());
  if (global) {
    Window w;
    w.in = in;
    w.kernel = in;
    w.out.assign(in.size(), 1);
    w.strides.assign(in.size(), 1);
    w.dilations.assign(in.size(), 1);
    w.pad_begin.assign(in.size(), 0);
    w.pad_end.assign(in.size(), 0);
    return w;
  }
  if (!node.Has("kernel_shape")) return InvalidArgument(node.Describe() + ": attribute kernel_shape is required");
  ASSIGN_OR_RETURN(Window w, ReadWindow(node, std::move(in), node.GetInts("kernel_shape")));
  RETURN_IF_ERROR(ResolveForwardWindow(node, w, node.GetInt("ceil_mode", 0) != 0));
  return w;
}

Status InferPool(InferContext& ctx, PoolOp op) {
  const ValueInfo* x = ctx.input(0);
  if (x == nullptr) return ctx.Error("input X is required");
  if (op.kind == PoolKind::kMax) {
    RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8, DType::kU8}));
  } else {
    RETURN_IF_ERROR(CheckDType(ctx, 0, kFloatDTypes));
  }
  if (op.kind == PoolKind::kLp && ctx.node().GetInt("p", 2) < 1) {
    return ctx.Error("p " + std::to_string(ctx.node().GetInt("p", 2)) + " must be >= 1");
  }
  const int64_t storage_order = ctx.node().GetInt("storage_order", 0);
  if (storage_order != 0 && storage_order != 1) {
    return ctx.Error("storage_order " + std::to_string(storage_order) + " must be 0 (row major) or 1 (column major)");
  }
  ASSIGN_OR_RETURN(Window w, PoolWindow(ctx.node(), x->shape, op.global));
  Shape out = {x->shape[0], x->shape[1]};
  out.insert(out.end(), w.out.begin(), w.out.end());
  ctx.SetOutput(0, x->dtype, out);
  if (op.kind == PoolKind::kMax && !op.global) ctx.SetOutput(1, DType::kI64, out);
  return Status::Ok();
}

// Row-major offset within the spatial plane → column-major offset (MaxPool storage_order = 1).
int64_t ColumnMajor(int64_t offset, const Shape& dims) {
  int64_t result = 0;
  int64_t stride = Product(dims);
  for (size_t i = dims.size(); i-- > 0;) {
    stride /= dims[i];
    result += offset % dims[i] * stride;
    offset /= dims[i];
  }
  return result;
}

Status RunPool(KernelContext& ctx, PoolOp op) {
  const Tensor& x = *ctx.input(0);
  ASSIGN_OR_RETURN(const Window w, PoolWindow(ctx.node(), x.shape(), op.global));
  const std::vector<double> xs = ToDoubles(x);
  const double p = static_cast<double>(ctx.node().GetInt("p", 2));
  const bool include_pad = ctx.node().GetInt("count_include_pad", 0) != 0;
  const bool column_major = ctx.node().GetInt("storage_order", 0) == 1;
  // A max window that lies wholly on padding has no value: NaN like the ONNX reference (nanmax),
  // the lowest value for integer types, which have no NaN.
  const double empty_max =
      IsIntegerDType(x.dtype())
          ? (x.dtype() == DType::kU8 ? 0.0 : static_cast<double>(std::numeric_limits<int8_t>::lowest()))
          : std::numeric_limits<double>::quiet_NaN();
  Tensor* indices = ctx.output(1);
  const int64_t planes = x.dim(0) * x.dim(1), in_plane = Product(w.in), out_plane = Product(w.out);
  std::vector<double> y(static_cast<size_t>(planes * out_plane));
#pragma omp parallel for
  for (int64_t plane = 0; plane < planes; ++plane) {
    const double* xp = &xs[static_cast<size_t>(plane * in_plane)];
    std::vector<int64_t> coord(w.rank(), 0), taps;
    for (int64_t o = 0; o < out_plane; ++o) {
      WindowTaps(w, coord, taps);
      double acc = 0.0;
      int64_t count = 0, best = -1;
      for (int64_t tap : taps) {
        if (tap >= 0) {
          const double v = xp[tap];
          if (op.kind == PoolKind::kMax && (best < 0 || v > acc)) {
            best = tap;
            acc = v;
          }
          if (op.kind == PoolKind::kAverage) acc += v;
          if (op.kind == PoolKind::kLp) acc += std::pow(std::fabs(v), p);
        }
        count += tap >= 0 || (include_pad && tap == kTapInPadding);
      }
      const size_t at = static_cast<size_t>(plane * out_plane + o);
      if (op.kind == PoolKind::kMax) y[at] = best >= 0 ? acc : empty_max;
      if (op.kind == PoolKind::kAverage) y[at] = acc / static_cast<double>(count);
      if (op.kind == PoolKind::kLp) y[at] = std::pow(acc, 1.0 / p);
      if (indices != nullptr) {
        indices->data<int64_t>()[at] =
            best < 0 ? -1 : plane * in_plane + (column_major ? ColumnMajor(best, w.in) : best);
      }
      NextIndex(coord, w.out);
    }
  }
  StoreDoubles(y, ctx.output(0));
  return Status::Ok();
}

template <PoolKind kKind, bool kGlobal>
Status InferPoolOp(InferContext& ctx) {
  return InferPool(ctx, {kKind, kGlobal});
}
template <PoolKind kKind, bool kGlobal>
Status RunPoolOp(KernelContext& ctx) {
  return RunPool(ctx, {kKind, kGlobal});
}

}  // namespace

std::vector<OpEntry> PoolOps() {
  using K = PoolKind;
  return {
      {"MaxPool", InferPoolOp<K::kMax, false>, RunPoolOp<K::kMax, false>},
      {"AveragePool", InferPoolOp<K::kAverage, false>, RunPoolOp<K::kAverage, false>},
      {"LpPool", InferPoolOp<K::kLp, false>, RunPoolOp<K::kLp, false>},
      {"GlobalMaxPool", InferPoolOp<K::kMax, true>, RunPoolOp<K::kMax, true>},
      {"GlobalAveragePool", InferPoolOp<K::kAverage, true>, RunPoolOp<K::kAverage, true>},
      {"GlobalLpPool", InferPoolOp<K::kLp, true>, RunPoolOp<K::kLp, true>},
  };
}

}  // namespace chipfit
