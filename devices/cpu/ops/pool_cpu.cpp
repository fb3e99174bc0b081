// MaxPool, AveragePool, GlobalMaxPool and GlobalAveragePool on oneDNN pooling_v2 (fp32): 2-D and 3-D
// windows (3-D in plain order), and 1-D ones as 2-D over an H = 1 view of the same bytes. MaxPool where
// oneDNN has only its reference implementation or cannot run it (dilations, the Indices output, 8-bit
// and f64 inputs) as an own loop over plain planes with the reference's windows.
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "core/reference/conv_util.h"
#include "devices/cpu/onednn_util.h"
#include "devices/cpu/ops/cpu_ops.h"

namespace chipfit::cpu {
namespace {

using dnnl::memory;
using dt = memory::data_type;

enum class PoolKind { kMax, kAverage };

struct PoolGeometry {
  Shape x, y;  // 1-D pools: the 2-D view with H = 1 ([N, C, 1, W]: the same bytes)
  bool one_d = false;
  bool three_d = false;
  memory::dims kernel, strides, dilates, pad_l, pad_r;
};

// 2-D windows as they are; 1-D ones ([N, C, W]) as 2-D ones over a view with H = 1 (one row, a
// window of one row, no stride, dilation or padding along it).
Result<PoolGeometry> ReadPoolGeometry(const KernelInit& init, PoolKind kind, bool global) {
  const Node& node = init.node;
  PoolGeometry g;
  const Shape& x = init.inputs[0]->shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank < 3 || rank > 5) {
    return Unsupported(std::to_string(rank - 2) +
                       "-D pooling: only 1-D, 2-D and 3-D windows (3-D to 5-D tensors) run on oneDNN here");
  }
  g.one_d = rank == 3;
  g.three_d = rank == 5;
  g.x = g.one_d ? Shape{x[0], x[1], 1, x[2]} : x;
  if (global) {
    g.y = {g.x[0], g.x[1]};
    for (size_t d = 2; d < g.x.size(); ++d) {
      g.y.push_back(1);
      g.kernel.push_back(g.x[d]);
      g.strides.push_back(1);
      g.dilates.push_back(0);
      g.pad_l.push_back(0);
      g.pad_r.push_back(0);
    }
    return g;
  }
  if (!node.Has("kernel_shape")) return InvalidArgument(node.Describe() + ": attribute kernel_shape is required");
  const bool ceil_mode = node.GetInt("ceil_mode", 0) != 0;
  ASSIGN_OR_RETURN(Window win, ReadWindow(node, Shape(x.begin() + 2, x.end()), node.GetInts("kernel_shape")));
  RETURN_IF_ERROR(ResolveForwardWindow(node, win, ceil_mode));
  const bool include_pad = kind == PoolKind::kAverage && node.GetInt("count_include_pad", 0) != 0;
  if (g.one_d) {
    g.y = {g.x[0], g.x[1], 1, win.out[0]};
    g.kernel = {1};
    g.strides = {1};
    g.dilates = {0};
    g.pad_l = {0};
    g.pad_r = {0};
  } else {
    g.y = {g.x[0], g.x[1]};
    g.y.insert(g.y.end(), win.out.begin(), win.out.end());
  }
  for (size_t i = 0; i < win.rank(); ++i) {
    g.kernel.push_back(win.kernel[i]);
    g.strides.push_back(win.strides[i]);
    g.dilates.push_back(win.dilations[i] - 1);
    g.pad_l.push_back(win.pad_begin[i]);
    // oneDNN has no ceil mode: the end padding that makes its (floor) output size ONNX's. The
    // last window ends `reach` past the input; flooring may leave reach below the given padding,
    // or below zero, and any value in [reach, reach + stride) gives the same output size.
    const int64_t reach = (win.out[i] - 1) * win.strides[i] + win.Extent(i) - win.in[i] - win.pad_begin[i];
    if (include_pad && reach > win.pad_end[i]) {
      // ONNX counts explicit padding but not the ceil-mode overhang; oneDNN would count both.
      return Unsupported(
          "AveragePool with count_include_pad and ceil_mode: the last window reaches past the "
          "padding, which oneDNN would count in the divisor");
    }
    g.pad_r.push_back(std::max<int64_t>(reach, 0));
  }
  return g;
}

class PoolKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, PoolKind kind, bool global) {
    RETURN_IF_ERROR(RequireStaticF32(init, {0}));
    const Node& node = init.node;
    if (kind == PoolKind::kMax && node.outputs.size() > 1 && !node.outputs[1].empty()) {
      return Unsupported("MaxPool's Indices output (argmax positions) is not computed by oneDNN");
    }
    ASSIGN_OR_RETURN(PoolGeometry geo, ReadPoolGeometry(init, kind, global));
    dnnl::algorithm alg = dnnl::algorithm::pooling_max;
    if (kind == PoolKind::kAverage) {
      alg = !global && node.GetInt("count_include_pad", 0) != 0 ? dnnl::algorithm::pooling_avg_include_padding
                                                                : dnnl::algorithm::pooling_avg_exclude_padding;
    }
    // Channels-last is where oneDNN's JIT pooling runs; a global pool over a plain input reduces
    // contiguous planes, fast enough to skip a reorder of the (large) input.
    // A blocked (nChw8c) input from a convolution is pooled in place, in that order.
    // A 1-D pool reads and writes rank-3 tensors, which are only ever plain: its view is nchw; a 3-D
    // pool reads and writes rank-5 tensors, plain as well (ncdhw).
    const Layout in_layout = init.inputs[0]->layout;
    const Layout layout = geo.one_d || geo.three_d                ? Layout::kPlain
                          : in_layout == Layout::kBlocked8        ? Layout::kBlocked8
                          : global && in_layout == Layout::kPlain ? Layout::kPlain
                                                                  : Layout::kChannelsLast;
    const memory::desc src_md = Describe(geo.x, dt::f32, layout);
    const memory::desc dst_md = Describe(geo.y, dt::f32, layout);
    dnnl::pooling_v2_forward::primitive_desc pd;
    RETURN_IF_ERROR(Guard(node, "pooling", [&] {
      dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, src_md, dst_md, geo.strides,
                                          geo.kernel, geo.dilates, geo.pad_l, geo.pad_r);
      pd = dnnl::pooling_v2_forward::primitive_desc(desc, Engine());
    }));
    if (IsReferenceImpl(pd.impl_info_str())) {
      std::vector<int64_t> dilations;
      for (size_t i = geo.one_d ? 1 : 0; i < geo.dilates.size(); ++i) dilations.push_back(geo.dilates[i] + 1);
      return Unsupported("only oneDNN's reference implementation for this pooling (dilations " + JoinInts(dilations) +
                         ")");
    }
    auto kernel = std::unique_ptr<PoolKernel>(new PoolKernel());
    kernel->layout_ = layout;
    kernel->pool_ = PrimitiveCall::SrcDst(dnnl::pooling_v2_forward(pd), pd.src_desc(), pd.dst_desc());
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    pool_.Run(ctx.input(0)->raw_data(), ctx.output(0)->raw_data());
    return Status();
  }
  Layout InputLayout(size_t /*input*/) const override { return layout_; }
  Layout OutputLayout(size_t /*output*/) const override { return layout_; }

 private:
  PoolKernel() = default;

 public:
  std::string Isa() const override { return pool_.Impl(); }

 private:
  PrimitiveCall pool_;
  Layout layout_ = Layout::kChannelsLast;
};

// MaxPool over plain [N, C, D...] of any rank: the taps of every output position (offsets into its
// (n, c) plane, from the reference's WindowTaps) are listed once; the planes run in parallel. The first
// tap on the input starts the maximum and a later one replaces it only when greater, as in the
// reference (so a NaN is kept only where it comes first). A window wholly on padding gives NaN (the
// lowest value for 8-bit types) and index -1. Indices count from the tensor's start, row-major or
// column-major within the plane (storage_order).
template <typename T>
class PlainMaxPoolKernel final : public IKernel {
 public:
  PlainMaxPoolKernel(std::vector<int64_t> taps, int64_t kernel_size, int64_t in_plane, std::vector<int64_t> columns)
      : taps_(std::move(taps)), kernel_size_(kernel_size), in_plane_(in_plane), columns_(std::move(columns)) {}

  Status Run(KernelContext& ctx) override {
    const T* x = ctx.input(0)->data<T>();
    Tensor& y_t = *ctx.output(0);
    T* y = y_t.data<T>();
    Tensor* indices_t = ctx.output(1);
    int64_t* indices = indices_t != nullptr ? indices_t->data<int64_t>() : nullptr;
    const int64_t out_plane = kernel_size_ == 0 ? 0 : static_cast<int64_t>(taps_.size()) / kernel_size_;
    if (out_plane == 0) return Status();
    const int64_t planes = y_t.numel() / out_plane, k = kernel_size_, in_plane = in_plane_;
    const int64_t* taps = taps_.data();
    const int64_t* columns = columns_.empty() ? nullptr : columns_.data();
    T empty;
    if constexpr (std::is_floating_point_v<T>) {
      empty = std::numeric_limits<T>::quiet_NaN();
    } else {
      empty = std::numeric_limits<T>::lowest();
    }
#pragma omp parallel for schedule(static) if (planes * out_plane * k >= (1 << 15))
    for (int64_t plane = 0; plane < planes; ++plane) {
      const T* xp = x + plane * in_plane;
      for (int64_t o = 0; o < out_plane; ++o) {
        const int64_t* t = taps + o * k;
        int64_t best = -1;
        T acc = empty;
        for (int64_t j = 0; j < k; ++j) {
          if (t[j] < 0) continue;
          const T v = xp[t[j]];
          if (best < 0 || v > acc) {
            best = t[j];
            acc = v;
          }
        }
        y[plane * out_plane + o] = acc;
        if (indices != nullptr) {
          indices[plane * out_plane + o] =
              best < 0 ? -1 : plane * in_plane + (columns != nullptr ? columns[best] : best);
        }
      }
    }
    return Status();
  }

 private:
  std::vector<int64_t> taps_;  // out_plane × kernel_size offsets into a plane, < 0: padding
  int64_t kernel_size_;
  int64_t in_plane_;
  std::vector<int64_t> columns_;  // storage_order 1: the column-major offset of each plane offset
};

template <typename T>
Result<std::unique_ptr<IKernel>> MakePlainMaxPool(const Window& w, bool column_major) {
  const int64_t out_plane = NumElements(w.out), in_plane = NumElements(w.in);
  const int64_t kernel_size = NumElements(Shape(w.kernel.begin(), w.kernel.end()));
  constexpr int64_t kMaxTaps = int64_t{1} << 26;  // 512 MiB of offsets: such a window is no real model's
  if (out_plane * kernel_size > kMaxTaps) return Unsupported("the window lists more than 2^26 taps");
  std::vector<int64_t> taps;
  taps.reserve(static_cast<size_t>(out_plane * kernel_size));
  std::vector<int64_t> coord(w.rank(), 0), window;
  for (int64_t o = 0; o < out_plane; ++o) {
    WindowTaps(w, coord, window);
    taps.insert(taps.end(), window.begin(), window.end());
    NextIndex(coord, w.out);
  }
  std::vector<int64_t> columns;
  if (column_major) {
    // Offset in the row-major plane → the same element's column-major offset.
    columns.resize(static_cast<size_t>(in_plane));
    for (int64_t offset = 0; offset < in_plane; ++offset) {
      int64_t rest = offset, result = 0, stride = in_plane;
      for (size_t i = w.rank(); i-- > 0;) {
        stride /= w.in[i];
        result += rest % w.in[i] * stride;
        rest /= w.in[i];
      }
      columns[static_cast<size_t>(offset)] = result;
    }
  }
  return std::unique_ptr<IKernel>(
      std::make_unique<PlainMaxPoolKernel<T>>(std::move(taps), kernel_size, in_plane, std::move(columns)));
}

}  // namespace

Result<std::unique_ptr<IKernel>> CreatePlainMaxPool(const KernelInit& init) {
  const Node& node = init.node;
  const ValueInfo* x = init.inputs.empty() ? nullptr : init.inputs[0];
  if (x == nullptr) return Unsupported("input X is missing");
  if (x->shape.size() < 3) return Unsupported("X has rank " + std::to_string(x->shape.size()) + " (N x C x D1 ...)");
  for (int64_t d : x->shape) {
    if (d < 0) return Unsupported("input shape known only at run time");
  }
  if (!node.Has("kernel_shape")) return Unsupported("attribute kernel_shape is missing");
  const int64_t storage_order = node.GetInt("storage_order", 0);
  if (storage_order != 0 && storage_order != 1) return Unsupported("storage_order is neither 0 nor 1");
  auto window = ReadWindow(node, Shape(x->shape.begin() + 2, x->shape.end()), node.GetInts("kernel_shape"));
  if (!window.ok()) return window.status();
  RETURN_IF_ERROR(ResolveForwardWindow(node, *window, node.GetInt("ceil_mode", 0) != 0));
  const bool column_major = storage_order == 1;
  switch (x->dtype) {
    case DType::kF32: return MakePlainMaxPool<float>(*window, column_major);
    case DType::kF64: return MakePlainMaxPool<double>(*window, column_major);
    case DType::kU8: return MakePlainMaxPool<uint8_t>(*window, column_major);
    case DType::kI8: return MakePlainMaxPool<int8_t>(*window, column_major);
    default: return Unsupported(std::string(DTypeName(x->dtype)) + " input (f32, f64, u8 and i8 run here)");
  }
}

Result<std::unique_ptr<IKernel>> CreateMaxPoolF32(const KernelInit& init) {
  return PoolKernel::Create(init, PoolKind::kMax, false);
}
Result<std::unique_ptr<IKernel>> CreateAveragePoolF32(const KernelInit& init) {
  return PoolKernel::Create(init, PoolKind::kAverage, false);
}
Result<std::unique_ptr<IKernel>> CreateGlobalMaxPoolF32(const KernelInit& init) {
  return PoolKernel::Create(init, PoolKind::kMax, true);
}
Result<std::unique_ptr<IKernel>> CreateGlobalAveragePoolF32(const KernelInit& init) {
  return PoolKernel::Create(init, PoolKind::kAverage, true);
}

}  // namespace chipfit::cpu
