// Helpers shared by the Conv, pooling, MatMul and normalization reference kernels: sliding-window
// geometry (strides, dilations, pads, auto_pad, output sizes), N-D index stepping and dtype conversion.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/graph/graph.h"
#include "core/reference/ref_util.h"
#include "core/runtime/kernel.h"
#include "core/status.h"
#include "core/tensor/tensor.h"

namespace chipfit {

inline std::string JoinInts(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

// Unsupported naming op, input and dtype when input `i` is present and its dtype is not in `allowed`.
inline Status CheckDType(const InferContext& ctx, size_t i, const std::vector<DType>& allowed) {
  const ValueInfo* in = ctx.input(i);
  if (in == nullptr) return Status::Ok();
  for (DType d : allowed) {
    if (in->dtype == d) return Status::Ok();
  }
  return Unsupported(ctx.node().Describe() + ": input " + std::to_string(i) + " has dtype " +
                     std::string(DTypeName(in->dtype)) + ", which the reference " + ctx.node().op_type +
                     " does not support");
}

inline const std::vector<DType> kFloatDTypes = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};

// Computing through double keeps every kernel one template-free loop; all dtypes the nn ops accept
// convert exactly except 64-bit integers beyond 2^53, which those ops do not take.
inline std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  VisitDType(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, std::nullptr_t>) {
      const T* p = t.data<T>();
      for (size_t i = 0; i < out.size(); ++i) {
        if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
          out[i] = static_cast<float>(p[i]);
        } else {
          out[i] = static_cast<double>(p[i]);
        }
      }
    }
    return 0;
  });
  return out;
}

inline void StoreDoubles(const std::vector<double>& values, Tensor* out) {
  VisitDType(out->dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, std::nullptr_t>) {
      T* p = out->data<T>();
      for (size_t i = 0; i < values.size(); ++i) p[i] = FromDouble<T>(values[i]);
    }
    return 0;
  });
}

inline int64_t Product(const Shape& dims, size_t begin = 0, size_t end = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = begin; i < dims.size() && i < end; ++i) p *= dims[i];
  return p;
}

// Unidirectional broadcasting (Gemm's C, LayerNormalization's Scale): `from` stretches to `to`,
// never the other way. Dims < 0 are unknown and accepted.
inline bool BroadcastsTo(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    const int64_t d = from[i], target = to[to.size() - from.size() + i];
    if (d != 1 && d >= 0 && target >= 0 && d != target) return false;
  }
  return true;
}

// Advances a row-major multi-index over `dims`; false once it wraps past the last index.
inline bool NextIndex(std::vector<int64_t>& index, const Shape& dims) {
  for (size_t i = dims.size(); i-- > 0;) {
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

// Row-major coordinates of flat index `flat` in `dims`.
inline std::vector<int64_t> Unravel(int64_t flat, const Shape& dims) {
  std::vector<int64_t> index(dims.size());
  for (size_t i = dims.size(); i-- > 0;) {
    index[i] = flat % dims[i];
    flat /= dims[i];
  }
  return index;
}

inline int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
inline int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

// Geometry of a kernel sliding over the spatial dims (everything after N and C). Dims < 0 are
// unknown (shape inference before shapes are bound); outputs computed from them stay unknown.
struct Window {
  Shape in, out;
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end;
  std::string auto_pad;

  size_t rank() const { return in.size(); }
  int64_t Extent(size_t i) const { return (kernel[i] - 1) * dilations[i] + 1; }
};

// Reads and checks strides, dilations, pads and auto_pad for `kernel` over spatial dims `in`.
inline Result<Window> ReadWindow(const Node& node, Shape in, std::vector<int64_t> kernel) {
  const size_t rank = in.size();
  Window w;
  w.in = std::move(in);
  w.kernel = std::move(kernel);
  w.strides = node.GetInts("strides", std::vector<int64_t>(rank, 1));
  w.dilations = node.GetInts("dilations", std::vector<int64_t>(rank, 1));
  const std::vector<int64_t> pads = node.GetInts("pads", std::vector<int64_t>(2 * rank, 0));
  w.auto_pad = node.GetString("auto_pad", "NOTSET");
  if (w.auto_pad.empty()) w.auto_pad = "NOTSET";  // some exporters write an empty string
  const std::string where = node.Describe() + ": ";
  if (w.kernel.size() != rank) {
    return InvalidArgument(where + "kernel_shape " + JoinInts(w.kernel) + " must have " + std::to_string(rank) +
                           " entries (one per spatial dim)");
  }
  auto check = [&](const char* name, const std::vector<int64_t>& v, size_t size, int64_t min) -> Status {
    bool ok = v.size() == size;
    for (int64_t x : v) ok = ok && x >= min;
    if (ok) return Status::Ok();
    return InvalidArgument(where + name + " " + JoinInts(v) + " must have " + std::to_string(size) +
                           " entries, each >= " + std::to_string(min));
  };
  RETURN_IF_ERROR(check("strides", w.strides, rank, 1));
  RETURN_IF_ERROR(check("dilations", w.dilations, rank, 1));
  RETURN_IF_ERROR(check("pads", pads, 2 * rank, 0));
  for (int64_t k : w.kernel) {
    if (k == 0 || k < -1) return InvalidArgument(where + "kernel_shape " + JoinInts(w.kernel) + " must be positive");
  }
  if (w.auto_pad != "NOTSET" && w.auto_pad != "VALID" && w.auto_pad != "SAME_UPPER" && w.auto_pad != "SAME_LOWER") {
    return InvalidArgument(where + "auto_pad '" + w.auto_pad + "' is not NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  }
  w.pad_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(rank));
  w.pad_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(rank), pads.end());
  if (w.auto_pad != "NOTSET") {  // explicit pads are ignored once auto_pad is set
    w.pad_begin.assign(rank, 0);
    w.pad_end.assign(rank, 0);
  }
  return w;
}

// Output sizes of a forward window (Conv, pooling); resolves auto_pad into pads. With ceil_mode the
// last window must still start inside the input or its left padding (ONNX spec, PyTorch rule).
inline Status ResolveForwardWindow(const Node& node, Window& w, bool ceil_mode) {
  w.out.assign(w.rank(), -1);
  for (size_t i = 0; i < w.rank(); ++i) {
    if (w.in[i] < 0 || w.kernel[i] < 0) continue;
    const int64_t extent = w.Extent(i);
    if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
      w.out[i] = CeilDiv(w.in[i], w.strides[i]);
      const int64_t total = std::max<int64_t>(0, (w.out[i] - 1) * w.strides[i] + extent - w.in[i]);
      const int64_t small = total / 2;
      w.pad_begin[i] = w.auto_pad == "SAME_UPPER" ? small : total - small;
      w.pad_end[i] = total - w.pad_begin[i];
      continue;
    }
    const int64_t span = w.in[i] + w.pad_begin[i] + w.pad_end[i] - extent;
    if (span < 0) {
      return InvalidArgument(node.Describe() + ": kernel extent " + std::to_string(extent) + " (kernel_shape " +
                             JoinInts(w.kernel) + ", dilations " + JoinInts(w.dilations) + ") exceeds padded input " +
                             std::to_string(span + extent) + " in spatial dim " + std::to_string(i));
    }
    const bool use_ceil = ceil_mode && w.auto_pad == "NOTSET";
    w.out[i] = (use_ceil ? CeilDiv(span, w.strides[i]) : FloorDiv(span, w.strides[i])) + 1;
    if (use_ceil && (w.out[i] - 1) * w.strides[i] >= w.in[i] + w.pad_begin[i]) --w.out[i];
  }
  return Status::Ok();
}

// Where one kernel tap lands: an offset into the row-major spatial plane, or one of these.
inline constexpr int64_t kTapInPadding = -1;  // on (explicit or auto) padding
inline constexpr int64_t kTapBeyond = -2;     // past the end padding (only with ceil_mode)

// Fills `taps` (one entry per kernel element, row-major) for the window at output coordinates `out`.
inline void WindowTaps(const Window& w, const std::vector<int64_t>& out, std::vector<int64_t>& taps) {
  taps.clear();
  std::vector<int64_t> k(w.rank(), 0);
  do {
    int64_t offset = 0;
    int64_t state = 0;
    for (size_t i = 0; i < w.rank(); ++i) {
      const int64_t pos = out[i] * w.strides[i] - w.pad_begin[i] + k[i] * w.dilations[i];
      if (pos >= w.in[i] + w.pad_end[i]) {
        state = kTapBeyond;
      } else if ((pos < 0 || pos >= w.in[i]) && state == 0) {
        state = kTapInPadding;
      }
      offset = offset * w.in[i] + pos;
    }
    taps.push_back(state != 0 ? state : offset);
  } while (NextIndex(k, w.kernel));
}

// Conv geometry (Conv, ConvTranspose, ConvInteger, QLinearConv): batch, channels, group, the window.
struct ConvGeometry {
  Window window;
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
};

// Checks X [N, C, D...], W and the attributes (conv.cpp). Forward W is M x C/group x k...; transposed W
// is C x M/group x k....
Result<ConvGeometry> ReadConvGeometry(const Node& node, const Shape& x, const Shape& w, bool transposed);

// Forward convolution: y[n, m, o] = bias[m] + Σ over the group's channels c and kernel taps t of
// x[n, c, tap] · w[m, c, t], accumulated in Acc (double for float data, int64 for quantized data).
template <typename Acc, typename T>
std::vector<Acc> ConvAccumulate(const ConvGeometry& g, const std::vector<T>& x, const std::vector<T>& w,
                                const std::vector<Acc>& bias) {
  const Window& win = g.window;
  const int64_t in_plane = Product(win.in), out_plane = Product(win.out), kernel_size = Product(win.kernel);
  const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
  std::vector<Acc> y(static_cast<size_t>(g.batch * g.out_channels * out_plane));
#pragma omp parallel for
  for (int64_t no = 0; no < g.batch * out_plane; ++no) {  // the taps of one window serve every channel
    const int64_t n = no / out_plane, o = no % out_plane;
    std::vector<int64_t> taps;
    WindowTaps(win, Unravel(o, win.out), taps);
    for (int64_t m = 0; m < g.out_channels; ++m) {
      const int64_t first_channel = m / mg * cg;
      Acc acc = bias[static_cast<size_t>(m)];
      for (int64_t c = 0; c < cg; ++c) {
        const T* xp = &x[static_cast<size_t>((n * g.in_channels + first_channel + c) * in_plane)];
        const T* wp = &w[static_cast<size_t>((m * cg + c) * kernel_size)];
        for (int64_t t = 0; t < kernel_size; ++t) {
          const int64_t tap = taps[static_cast<size_t>(t)];
          if (tap >= 0) acc += static_cast<Acc>(xp[tap]) * static_cast<Acc>(wp[t]);
        }
      }
      y[static_cast<size_t>((n * g.out_channels + m) * out_plane + o)] = acc;
    }
  }
  return y;
}

// numpy matmul geometry (MatMul, MatMulInteger, QLinearMatMul; matmul.cpp): a 1-D A is a row [1, K] and a
// 1-D B a column [K, 1], the added dim dropped again; batch dims broadcast.
struct MatMulGeometry {
  Shape a_batch, b_batch, batch, out;
  int64_t m = 1, k = 1, n = 1;
};
Result<MatMulGeometry> ReadMatMul(const Node& node, const Shape& a, const Shape& b);
// FusedMatMul's permutation attribute `attr` (perm_a, perm_b, perm_y) for a value of `rank` dims, checked
// to be a permutation; empty when the attribute is absent.
Result<std::vector<int64_t>> ReadMatMulPerm(const Node& node, const char* attr, size_t rank);

}  // namespace chipfit
