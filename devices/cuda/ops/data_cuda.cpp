// Pooling, resize and data movement on CUDA (device code in data.cu): MaxPool/AveragePool (1-D to 3-D
// windows), GlobalMaxPool/GlobalAveragePool, Resize/Upsample (nearest for any dtype, n-linear for float),
// and Transpose, Concat, Slice, Gather, Pad, which move bits and so take every dtype by element size.
// Transpose, Slice and Concat are one strided-copy plan each (per input for Concat) with the dims
// collapsed. Every factory plans fully before it asks for the context, so that its refusals are the same,
// and testable, on machines without a GPU.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "core/reference/conv_util.h"
#include "core/reference/ref_util.h"
#include "core/tensor/half.h"
#include "devices/cuda/ops/cuda_ops.h"
#include "devices/cuda/ops/data_launch.h"

namespace chipfit::cuda {

namespace data {

namespace {

constexpr int64_t kMax32 = kMaxElements;

// The lowest and highest offsets a walk reaches from `offset` (strides may be negative).
void Reach(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, int64_t offset, int64_t& lo,
           int64_t& hi) {
  lo = hi = offset;
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t span = (dims[d] - 1) * strides[d];
    (span < 0 ? lo : hi) += span;
  }
}

}  // namespace

std::string PlanStridedCopy(const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides,
                            const std::vector<int64_t>& dst_strides, int64_t src_offset, int64_t dst_offset,
                            size_t elem_bytes, StridedCopy& plan) {
  plan = StridedCopy{};
  if (src_strides.size() != dims.size() || dst_strides.size() != dims.size()) return "strides do not match the dims";
  if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4 && elem_bytes != 8) {
    return "elements of " + std::to_string(elem_bytes) + " bytes";
  }
  int64_t numel = 1;
  for (int64_t d : dims) numel *= d;
  if (numel > kMax32) return "a copy of 2^31 or more values (the CUDA kernels index in 32 bits)";
  plan.unit = static_cast<uint32_t>(elem_bytes);
  plan.numel = static_cast<uint32_t>(numel);
  if (numel == 0) return "";

  // Dims of 1 never advance; neighbours contiguous on both sides merge (outermost first).
  std::vector<int64_t> m_dims, m_src, m_dst;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!m_dims.empty() && m_src.back() == src_strides[d] * dims[d] && m_dst.back() == dst_strides[d] * dims[d]) {
      m_dims.back() *= dims[d];
      m_src.back() = src_strides[d];
      m_dst.back() = dst_strides[d];
      continue;
    }
    m_dims.push_back(dims[d]);
    m_src.push_back(src_strides[d]);
    m_dst.push_back(dst_strides[d]);
  }
  if (m_dims.empty()) {  // one value
    m_dims = {1};
    m_src = {1};
    m_dst = {1};
  }
  if (m_dims.size() > static_cast<size_t>(kMaxRank)) {
    return "a copy over " + std::to_string(m_dims.size()) + " dims after merging (the CUDA kernel walks at most " +
           std::to_string(kMaxRank) + ")";
  }
  int64_t lo = 0, hi = 0;
  Reach(m_dims, m_src, src_offset, lo, hi);
  if (lo < 0) return "a source walk before the start of the input";
  if (hi > kMax32) return "source offsets of 2^31 or more (the CUDA kernels index in 32 bits)";
  Reach(m_dims, m_dst, dst_offset, lo, hi);
  if (lo < 0) return "a destination walk before the start of the output";
  if (hi > kMax32) return "destination offsets of 2^31 or more (the CUDA kernels index in 32 bits)";

  // A contiguous innermost run moves as the widest unit (up to 16 bytes) that divides it, every other
  // stride and both offsets (buffers are 256-byte aligned, so the units are aligned too).
  const size_t r = m_dims.size();
  int64_t f = 1;
  if (m_src[r - 1] == 1 && m_dst[r - 1] == 1) {
    auto fits = [&](int64_t g) {
      if (elem_bytes * static_cast<size_t>(g) > 16 || m_dims[r - 1] % g != 0) return false;
      if (src_offset % g != 0 || dst_offset % g != 0) return false;
      for (size_t d = 0; d + 1 < r; ++d) {
        if (m_src[d] % g != 0 || m_dst[d] % g != 0) return false;
      }
      return true;
    };
    while (fits(f * 2)) f *= 2;
  }
  plan.unit = static_cast<uint32_t>(elem_bytes * static_cast<size_t>(f));
  plan.numel = static_cast<uint32_t>(numel / f);
  plan.rank = static_cast<int32_t>(r);
  for (size_t d = 0; d < r; ++d) {
    const bool last = d + 1 == r;
    plan.dims[d] = static_cast<uint32_t>(last ? m_dims[d] / f : m_dims[d]);
    plan.src_strides[d] = static_cast<int32_t>(last ? m_src[d] : m_src[d] / f);
    plan.dst_strides[d] = static_cast<int32_t>(last ? m_dst[d] : m_dst[d] / f);
  }
  plan.src_offset = src_offset / f;
  plan.dst_offset = dst_offset / f;
  return "";
}

namespace {

double SourceCoord(const ResizeCoords& c, size_t d, int64_t o, int64_t in_len, int64_t out_len) {
  const auto x = static_cast<double>(o);
  const double s = c.scale[d];
  const auto in = static_cast<double>(in_len);
  const double resized = in * s;  // length_resized before flooring, as the spec and the reference
  switch (c.transform) {
    case ResizeTransform::kAsymmetric: return x / s;
    case ResizeTransform::kTfHalfPixelForNn: return (x + 0.5) / s;
    case ResizeTransform::kAlignCorners: return resized == 1 ? 0.0 : x * (in - 1) / (resized - 1);
    case ResizeTransform::kPytorchHalfPixel: return out_len > 1 ? (x + 0.5) / s - 0.5 : 0.0;
    case ResizeTransform::kTfCropAndResize: {
      const double a = c.roi_start[d], b = c.roi_end[d];
      return resized > 1 ? a * (in - 1) + x * (b - a) * (in - 1) / (resized - 1) : 0.5 * (a + b) * (in - 1);
    }
    case ResizeTransform::kHalfPixelSymmetric: {
      const double offset = in / 2 * (1 - static_cast<double>(out_len) / resized);
      return offset + (x + 0.5) / s - 0.5;
    }
    case ResizeTransform::kHalfPixel: break;
  }
  return (x + 0.5) / s - 0.5;
}

int64_t NearestIndex(NearestMode mode, double x, double scale) {
  const double f = std::floor(x);
  switch (mode) {
    case NearestMode::kFloor: return static_cast<int64_t>(f);
    case NearestMode::kCeil: return static_cast<int64_t>(std::ceil(x));
    case NearestMode::kSimple: return static_cast<int64_t>(scale < 1 ? std::ceil(x) : f);
    case NearestMode::kRoundPreferCeil:
    case NearestMode::kRoundPreferFloor: break;
  }
  if (x - f == 0.5) return static_cast<int64_t>(mode == NearestMode::kRoundPreferCeil ? f + 1 : f);
  return static_cast<int64_t>(std::round(x));
}

}  // namespace

std::string PlanResize(const ResizeCoords& coords, const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                       ResizeWalk& walk, std::vector<ResizeTap>& taps) {
  walk = ResizeWalk{};
  taps.clear();
  if (in.size() != out.size()) return "output rank differs from the input's";
  if (coords.scale.size() != in.size() || coords.roi_start.size() != in.size() || coords.roi_end.size() != in.size()) {
    return "scales and roi do not match the rank";
  }
  if (in.size() > static_cast<size_t>(kMaxRank)) {
    return "Resize of rank " + std::to_string(in.size()) + " (the CUDA kernel takes at most " +
           std::to_string(kMaxRank) + ")";
  }
  int64_t n_in = 1, n_out = 1, n_taps = 0;
  for (size_t d = 0; d < in.size(); ++d) {
    n_in *= in[d];
    n_out *= out[d];
    n_taps += out[d];
  }
  if (n_in > kMax32 || n_out > kMax32 || n_taps > kMax32) {
    return "Resize of 2^31 or more values (the CUDA kernels index in 32 bits)";
  }
  walk.numel = static_cast<uint32_t>(n_out);
  if (n_out == 0) return "";
  if (n_in == 0) return "an empty input resized to a non-empty output";
  walk.rank = static_cast<int32_t>(std::max<size_t>(in.size(), 1));
  if (in.empty()) {  // a scalar: one tap
    walk.out[0] = 1;
    taps.push_back(ResizeTap{});
    return "";
  }
  int64_t stride = 1;
  std::vector<int64_t> strides(in.size());
  for (size_t d = in.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= in[d];
  }
  for (size_t d = 0; d < in.size(); ++d) {
    walk.out[d] = static_cast<uint32_t>(out[d]);
    walk.tap_offset[d] = static_cast<uint32_t>(taps.size());
    const int64_t len = in[d];
    for (int64_t o = 0; o < out[d]; ++o) {
      const double x = SourceCoord(coords, d, o, len, out[d]);
      ResizeTap tap;
      if (coords.transform == ResizeTransform::kTfCropAndResize && (x < 0 || x > static_cast<double>(len - 1))) {
        tap.outside = 1;
      } else if (!coords.linear) {
        const int64_t i = std::clamp<int64_t>(NearestIndex(coords.nearest, x, coords.scale[d]), 0, len - 1);
        tap.i0 = tap.i1 = static_cast<int32_t>(i * strides[d]);
      } else {
        const double f = std::floor(x);
        const auto fi = static_cast<int64_t>(f);
        tap.i0 = static_cast<int32_t>(std::clamp<int64_t>(fi, 0, len - 1) * strides[d]);
        tap.i1 = static_cast<int32_t>(std::clamp<int64_t>(fi + 1, 0, len - 1) * strides[d]);
        tap.w = static_cast<float>(x - f);
        if (tap.i1 == tap.i0) tap.w = 0.0f;  // both taps on the edge element
      }
      taps.push_back(tap);
    }
  }
  return "";
}

std::string PlanPad(const std::vector<int64_t>& in, const std::vector<int64_t>& out, const std::vector<int64_t>& begin,
                    PadWalk& walk) {
  walk = PadWalk{};
  if (in.size() != out.size() || begin.size() != in.size()) return "pads do not match the rank";
  int64_t n_in = 1, n_out = 1;
  for (size_t d = 0; d < in.size(); ++d) {
    n_in *= in[d];
    n_out *= out[d];
  }
  if (n_in > kMax32 || n_out > kMax32) return "Pad of 2^31 or more values (the CUDA kernels index in 32 bits)";
  walk.numel = static_cast<uint32_t>(n_out);
  std::vector<int64_t> m_out, m_in, m_begin;
  bool last_plain = false;
  for (size_t d = 0; d < in.size(); ++d) {
    const bool plain = out[d] == in[d] && begin[d] == 0;
    if (plain && last_plain) {
      m_out.back() *= out[d];
      m_in.back() *= in[d];
      continue;
    }
    m_out.push_back(out[d]);
    m_in.push_back(in[d]);
    m_begin.push_back(begin[d]);
    last_plain = plain;
  }
  if (m_out.empty()) {  // a scalar
    m_out = {1};
    m_in = {1};
    m_begin = {0};
  }
  if (m_out.size() > static_cast<size_t>(kMaxRank)) {
    walk = PadWalk{};
    return "Pad over " + std::to_string(m_out.size()) + " dims after merging (the CUDA kernel walks at most " +
           std::to_string(kMaxRank) + ")";
  }
  for (int64_t b : m_begin) {
    if (b > kMax32 || b < -kMax32) return "pads of 2^31 or more";
  }
  walk.rank = static_cast<int32_t>(m_out.size());
  for (size_t d = 0; d < m_out.size(); ++d) {
    walk.out[d] = static_cast<uint32_t>(m_out[d]);
    walk.in[d] = static_cast<int32_t>(m_in[d]);
    walk.begin[d] = static_cast<int32_t>(m_begin[d]);
  }
  return "";
}

std::string PlanGather(const std::vector<int64_t>& in, size_t axis, int64_t count, size_t elem_bytes,
                       GatherWalk& walk) {
  walk = GatherWalk{};
  if (axis >= in.size()) return "axis out of range";
  if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4 && elem_bytes != 8) {
    return "elements of " + std::to_string(elem_bytes) + " bytes";
  }
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= in[d];
  for (size_t d = axis + 1; d < in.size(); ++d) inner *= in[d];
  const int64_t n_in = outer * in[axis] * inner;
  const int64_t n_out = outer * count * inner;
  if (n_in > kMax32 || n_out > kMax32 || count > kMax32) {
    return "Gather of 2^31 or more values (the CUDA kernels index in 32 bits)";
  }
  int64_t f = 1;
  while (inner > 0 && elem_bytes * static_cast<size_t>(f) * 2 <= 16 && inner % (f * 2) == 0) f *= 2;
  walk.unit = static_cast<uint32_t>(elem_bytes * static_cast<size_t>(f));
  walk.inner = static_cast<uint32_t>(std::max<int64_t>(1, inner / f));
  walk.count = static_cast<uint32_t>(std::max<int64_t>(1, count));
  walk.axis_dim = static_cast<int32_t>(in[axis]);
  walk.numel = static_cast<uint32_t>(n_out / f);
  return "";
}

}  // namespace data

namespace {

using data::FloatStorage;
using data::PoolKind;

std::string Name(DType dtype) { return std::string(DTypeName(dtype)); }

const ValueInfo* Input(const KernelInit& init, size_t i) { return i < init.inputs.size() ? init.inputs[i] : nullptr; }

// The constant value of input i when it is given (an empty name is absent).
const Tensor* ConstantInput(const KernelInit& init, size_t i) {
  const ValueInfo* in = init.node.HasInput(i) ? Input(init, i) : nullptr;
  return in == nullptr ? nullptr : in->value;
}

// Data movement takes any dtype of 1, 2, 4 or 8 bytes.
Result<size_t> MovableBytes(const KernelInit& init, DType dtype) {
  if (dtype == DType::kString || dtype == DType::kUndefined) {
    return Unsupported(init.node.op_type + " on " + Name(dtype) + " on CUDA");
  }
  const size_t bytes = DTypeSize(StorageOf(init, dtype));
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) {
    return Unsupported(init.node.op_type + " on " + Name(dtype) + " on CUDA");
  }
  return bytes;
}

std::optional<FloatStorage> FloatStorageOf(DType storage) {
  switch (storage) {
    case DType::kF32: return FloatStorage::kF32;
    case DType::kF16: return FloatStorage::kF16;
    case DType::kBF16: return FloatStorage::kBF16;
    default: return std::nullopt;
  }
}

Result<FloatStorage> RequireFloat(const KernelInit& init, const std::string& what) {
  const ValueInfo* x = Input(init, 0);
  if (x == nullptr) return Unsupported(init.node.op_type + " input 0 is missing");
  const std::optional<FloatStorage> storage = FloatStorageOf(StorageOf(init, x->dtype));
  if (!storage) {
    return Unsupported(what + " on " + Name(x->dtype) + " (the CUDA kernel takes f32, f16 and bf16)");
  }
  return *storage;
}

// `value` in the storage type, as bits in the low bytes; integers take `exact` when given.
uint64_t ValueBits(DType storage, double value, const int64_t* exact) {
  uint64_t bits = 0;
  VisitDType(storage, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, std::nullptr_t>) {
      T v = FromDouble<T>(value);
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        if (exact != nullptr) v = static_cast<T>(*exact);
      }
      static_assert(sizeof(T) <= sizeof(bits));
      std::memcpy(&bits, &v, sizeof(T));
    }
    return 0;
  });
  return bits;
}

std::vector<int64_t> DenseStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

// ---- strided copies: Transpose, Slice, Concat

class StridedCopyKernel final : public IKernel {
 public:
  // (input, its copy into output 0).
  StridedCopyKernel(CudaContext* ctx, std::string what, std::vector<std::pair<size_t, data::StridedCopy>> copies,
                    std::vector<size_t> device_inputs)
      : ctx_(ctx), what_(std::move(what)), copies_(std::move(copies)), device_inputs_(std::move(device_inputs)) {}

  Status Run(KernelContext& ctx) override {
    void* out = ctx.device_output(0).handle;
    for (const auto& [input, plan] : copies_) {
      if (plan.numel == 0) continue;
      const Launch1D launch = GridStride(plan.numel, ctx_->props().shape);
      const cudaError_t err =
          data::LaunchStridedCopy(plan, ctx.device_input(input).handle, out, launch.grid, launch.block, ctx_->stream());
      RETURN_IF_ERROR(ctx_->AfterLaunch(err, what_, "strided copy"));
    }
    return Status();
  }
  bool InputOnDevice(size_t input) const override {
    return std::find(device_inputs_.begin(), device_inputs_.end(), input) != device_inputs_.end();
  }
  bool OutputOnDevice(size_t output) const override { return output == 0; }

 private:
  CudaContext* ctx_;
  std::string what_;
  std::vector<std::pair<size_t, data::StridedCopy>> copies_;
  std::vector<size_t> device_inputs_;
};

Result<data::StridedCopy> Plan(const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides,
                               const std::vector<int64_t>& dst_strides, int64_t src_offset, int64_t dst_offset,
                               size_t elem_bytes) {
  data::StridedCopy plan;
  const std::string why =
      data::PlanStridedCopy(dims, src_strides, dst_strides, src_offset, dst_offset, elem_bytes, plan);
  if (!why.empty()) return Unsupported(why);
  return plan;
}

Result<std::unique_ptr<IKernel>> MakeCopies(const KernelInit& init,
                                            std::vector<std::pair<size_t, data::StridedCopy>> copies,
                                            std::vector<size_t> device_inputs) {
  ASSIGN_OR_RETURN(CudaContext * ctx, RequireStaticContext(init));
  return std::unique_ptr<IKernel>(
      new StridedCopyKernel(ctx, init.node.Describe(), std::move(copies), std::move(device_inputs)));
}

// A list from the attribute (before opset 10) or constant input `input`; `present` false when absent.
Result<std::vector<int64_t>> SliceList(const KernelInit& init, const char* name, size_t input, bool* present) {
  if (init.opset < 10) {
    *present = init.node.Has(name);
    return init.node.GetInts(name);
  }
  *present = init.node.HasInput(input) && Input(init, input) != nullptr;
  if (!*present) return std::vector<int64_t>{};
  const Tensor* t = Input(init, input)->value;
  if (t == nullptr) return Unsupported(std::string("Slice's ") + name + " are not constant");
  return t->ToInt64Vector();
}

// ---- pooling

// (D, H, W) of 1-, 2- or 3-D spatial values, leading dims filled with `fill`.
void Spatial3(const std::vector<int64_t>& v, int64_t fill, int32_t (&out)[3]) {
  const size_t lead = 3 - v.size();
  for (size_t i = 0; i < 3; ++i) out[i] = static_cast<int32_t>(i < lead ? fill : v[i - lead]);
}

class PoolKernel final : public IKernel {
 public:
  PoolKernel(CudaContext* ctx, std::string what, PoolKind kind, FloatStorage storage, data::PoolWindow window)
      : ctx_(ctx), what_(std::move(what)), kind_(kind), storage_(storage), window_(window) {}

  Status Run(KernelContext& ctx) override {
    if (window_.numel == 0) return Status();
    const Launch1D launch = GridStride(window_.numel, ctx_->props().shape);
    const cudaError_t err = data::LaunchPool(kind_, storage_, window_, ctx.device_input(0).handle,
                                             ctx.device_output(0).handle, launch.grid, launch.block, ctx_->stream());
    return ctx_->AfterLaunch(err, what_, "pool");
  }
  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t output) const override { return output == 0; }

 private:
  CudaContext* ctx_;
  std::string what_;
  PoolKind kind_;
  FloatStorage storage_;
  data::PoolWindow window_;
};

// Window geometry of a MaxPool/AveragePool over x, checked against the output shape.
Result<data::PoolWindow> PlanWindow(const KernelInit& init, PoolKind kind) {
  const Node& node = init.node;
  if (kind == PoolKind::kMax && node.outputs.size() > 1 && !node.outputs[1].empty()) {
    return Unsupported("MaxPool's Indices output (argmax positions) is not computed on CUDA");
  }
  const Shape& x = init.inputs[0]->shape;
  if (x.size() < 3 || x.size() > 5) {
    return Unsupported(std::to_string(static_cast<int64_t>(x.size()) - 2) +
                       "-D pooling (the CUDA kernel takes 1-D to 3-D windows)");
  }
  if (!node.Has("kernel_shape")) return Unsupported("attribute kernel_shape is missing");
  Result<Window> read = ReadWindow(node, Shape(x.begin() + 2, x.end()), node.GetInts("kernel_shape"));
  if (!read.ok()) return Unsupported(read.status().message());
  Window w = std::move(read).value();
  RETURN_IF_ERROR(ResolveForwardWindow(node, w, node.GetInt("ceil_mode", 0) != 0));
  Shape expect = {x[0], x[1]};
  expect.insert(expect.end(), w.out.begin(), w.out.end());
  if ((*init.outputs)[0].shape != expect) {
    return InvalidArgument(node.Describe() + ": output " + ShapeToString((*init.outputs)[0].shape) +
                           " differs from the window's " + ShapeToString(expect));
  }
  for (size_t i = 0; i < w.rank(); ++i) {
    const int64_t reach = w.in[i] + w.pad_begin[i] + w.pad_end[i] + w.Extent(i) + w.strides[i] * w.out[i];
    if (reach > data::kMaxElements) return Unsupported("pooling geometry past 2^31 (the CUDA kernel is 32-bit)");
  }
  data::PoolWindow pw;
  pw.numel = static_cast<uint32_t>(NumElements(expect));
  Spatial3(w.in, 1, pw.in);
  Spatial3(w.out, 1, pw.out);
  Spatial3(w.kernel, 1, pw.kernel);
  Spatial3(w.strides, 1, pw.strides);
  Spatial3(w.dilations, 1, pw.dilations);
  Spatial3(w.pad_begin, 0, pw.pad_begin);
  Spatial3(w.pad_end, 0, pw.pad_end);
  pw.include_pad = kind == PoolKind::kAverage && node.GetInt("count_include_pad", 0) != 0 ? 1 : 0;
  return pw;
}

Result<std::unique_ptr<IKernel>> CreateWindowPool(const KernelInit& init, PoolKind kind) {
  RETURN_IF_ERROR(CheckStaticShapes(init));
  ASSIGN_OR_RETURN(const FloatStorage storage, RequireFloat(init, init.node.op_type));
  ASSIGN_OR_RETURN(const data::PoolWindow window, PlanWindow(init, kind));
  ASSIGN_OR_RETURN(CudaContext * ctx, RequireStaticContext(init));
  return std::unique_ptr<IKernel>(new PoolKernel(ctx, init.node.Describe(), kind, storage, window));
}

class GlobalPoolKernel final : public IKernel {
 public:
  GlobalPoolKernel(CudaContext* ctx, std::string what, PoolKind kind, FloatStorage storage, uint32_t planes,
                   uint32_t plane)
      : ctx_(ctx), what_(std::move(what)), kind_(kind), storage_(storage), planes_(planes), plane_(plane) {}

  Status Run(KernelContext& ctx) override {
    if (planes_ == 0) return Status();
    // One warp per plane.
    const Launch1D launch = GridStride(static_cast<int64_t>(planes_) * 32, ctx_->props().shape);
    const cudaError_t err =
        data::LaunchGlobalPool(kind_, storage_, planes_, plane_, ctx.device_input(0).handle,
                               ctx.device_output(0).handle, launch.grid, launch.block, ctx_->stream());
    return ctx_->AfterLaunch(err, what_, "global pool");
  }
  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t output) const override { return output == 0; }

 private:
  CudaContext* ctx_;
  std::string what_;
  PoolKind kind_;
  FloatStorage storage_;
  uint32_t planes_, plane_;
};

// ---- resize

// Contents of optional input i (absent or empty: nullptr); Unsupported when present but not constant.
Result<const Tensor*> OptionalConstant(const KernelInit& init, int i, const char* what) {
  if (i < 0 || !init.node.HasInput(static_cast<size_t>(i))) return nullptr;
  const ValueInfo* in = Input(init, static_cast<size_t>(i));
  if (in == nullptr || NumElements(in->shape) == 0) return nullptr;
  if (in->value == nullptr) return Unsupported(init.node.op_type + "'s " + what + " are not constant");
  return in->value;
}

Result<data::ResizeCoords> ResizePlanOf(const KernelInit& init, const Shape& in, double* extrapolation) {
  const Node& node = init.node;
  const bool modern = node.op_type == "Resize" && init.opset >= 11;
  data::ResizeCoords c;
  std::string mode = node.GetString("mode", "nearest");
  if (mode == "bilinear") mode = "linear";  // Upsample's early spelling
  if (mode == "cubic") return Unsupported("cubic Resize is not implemented on CUDA");
  if (mode != "nearest" && mode != "linear") return Unsupported("Resize mode '" + mode + "'");
  c.linear = mode == "linear";
  if (init.opset >= 18 && node.GetInt("antialias", 0) != 0) return Unsupported("Resize with antialias=1 on CUDA");
  if (node.GetInt("exclude_outside", 0) != 0) return Unsupported("Resize with exclude_outside=1 on CUDA");
  *extrapolation = node.GetFloat("extrapolation_value", 0.0f);

  const std::string transform = modern ? node.GetString("coordinate_transformation_mode", "half_pixel") : "asymmetric";
  static const std::pair<const char*, data::ResizeTransform> kTransforms[] = {
      {"half_pixel", data::ResizeTransform::kHalfPixel},
      {"half_pixel_symmetric", data::ResizeTransform::kHalfPixelSymmetric},
      {"pytorch_half_pixel", data::ResizeTransform::kPytorchHalfPixel},
      {"align_corners", data::ResizeTransform::kAlignCorners},
      {"asymmetric", data::ResizeTransform::kAsymmetric},
      {"tf_half_pixel_for_nn", data::ResizeTransform::kTfHalfPixelForNn},
      {"tf_crop_and_resize", data::ResizeTransform::kTfCropAndResize}};
  const auto t = std::find_if(std::begin(kTransforms), std::end(kTransforms),
                              [&](const auto& row) { return transform == row.first; });
  if (t == std::end(kTransforms)) return Unsupported("coordinate_transformation_mode '" + transform + "'");
  c.transform = t->second;
  const std::string nearest = modern ? node.GetString("nearest_mode", "round_prefer_floor") : "simple";
  static const std::pair<const char*, data::NearestMode> kNearest[] = {
      {"round_prefer_floor", data::NearestMode::kRoundPreferFloor},
      {"round_prefer_ceil", data::NearestMode::kRoundPreferCeil},
      {"floor", data::NearestMode::kFloor},
      {"ceil", data::NearestMode::kCeil},
      {"simple", data::NearestMode::kSimple}};
  const auto nm =
      std::find_if(std::begin(kNearest), std::end(kNearest), [&](const auto& row) { return nearest == row.first; });
  if (nm == std::end(kNearest)) return Unsupported("nearest_mode '" + nearest + "'");
  c.nearest = nm->second;
  const std::string policy = init.opset >= 18 ? node.GetString("keep_aspect_ratio_policy", "stretch") : "stretch";
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    return Unsupported("keep_aspect_ratio_policy '" + policy + "'");
  }

  // Upsample-7: a scales attribute; Upsample-9 and Resize-10: input 1; Resize-11+: roi 1, scales 2, sizes 3.
  int roi_at = -1, scales_at = -1, sizes_at = -1;
  if (node.op_type == "Upsample") {
    scales_at = init.opset >= 9 ? 1 : -1;
  } else if (init.opset < 11) {
    scales_at = 1;
  } else {
    roi_at = 1;
    scales_at = 2;
    sizes_at = 3;
  }
  ASSIGN_OR_RETURN(const Tensor* scales_t, OptionalConstant(init, scales_at, "scales"));
  ASSIGN_OR_RETURN(const Tensor* sizes_t, OptionalConstant(init, sizes_at, "sizes"));
  const Tensor* roi_t = nullptr;
  if (c.transform == data::ResizeTransform::kTfCropAndResize) {
    ASSIGN_OR_RETURN(roi_t, OptionalConstant(init, roi_at, "roi"));
  }

  const auto rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes = init.opset >= 18 ? node.GetInts("axes") : std::vector<int64_t>{};
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  ASSIGN_OR_RETURN(axes, NormalizeAxes(axes, rank, node));
  const size_t n = axes.size();
  c.scale.assign(in.size(), 1.0);
  c.roi_start.assign(in.size(), 0.0);
  c.roi_end.assign(in.size(), 1.0);
  std::vector<double> scales;
  if (scales_t != nullptr) {
    for (int64_t i = 0; i < scales_t->numel(); ++i) scales.push_back(scales_t->GetAsDouble(i));
  } else if (node.op_type == "Upsample" && init.opset < 9) {
    for (float s : node.GetFloats("scales")) scales.push_back(s);
  }
  if (!scales.empty()) {
    if (scales.size() != n) return InvalidArgument(node.Describe() + ": scales do not match the axes");
    for (size_t i = 0; i < n; ++i) c.scale[static_cast<size_t>(axes[i])] = scales[i];
  } else if (sizes_t != nullptr) {
    const std::vector<int64_t> sizes = sizes_t->ToInt64Vector();
    if (sizes.size() != n) return InvalidArgument(node.Describe() + ": sizes do not match the axes");
    for (size_t i = 0; i < n; ++i) {
      const auto d = static_cast<size_t>(axes[i]);
      c.scale[d] = in[d] > 0 ? static_cast<double>(sizes[i]) / static_cast<double>(in[d]) : 1.0;
    }
    if (policy != "stretch") {  // one scale for every resized axis keeps the aspect ratio
      const bool smaller = policy == "not_larger";
      double s = smaller ? std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t a : axes) {
        const double sa = c.scale[static_cast<size_t>(a)];
        s = smaller ? std::min(s, sa) : std::max(s, sa);
      }
      for (int64_t a : axes) c.scale[static_cast<size_t>(a)] = s;
    }
  } else {
    return InvalidArgument(node.Describe() + ": needs scales or sizes");
  }
  if (roi_t != nullptr) {
    if (roi_t->numel() != static_cast<int64_t>(2 * n)) {
      return InvalidArgument(node.Describe() + ": roi must hold 2 × " + std::to_string(n) + " values");
    }
    for (size_t i = 0; i < n; ++i) {
      c.roi_start[static_cast<size_t>(axes[i])] = roi_t->GetAsDouble(static_cast<int64_t>(i));
      c.roi_end[static_cast<size_t>(axes[i])] = roi_t->GetAsDouble(static_cast<int64_t>(i + n));
    }
  }
  for (double s : c.scale) {
    if (!(s > 0)) return InvalidArgument(node.Describe() + ": scales must be positive");
  }
  return c;
}

class ResizeKernel final : public IKernel {
 public:
  ResizeKernel(CudaContext* ctx, std::string what, data::ResizeWalk walk, std::shared_ptr<DeviceAllocation> table,
               DeviceBuffer taps, std::optional<FloatStorage> linear, size_t elem_bytes, uint64_t fill_bits, float fill)
      : ctx_(ctx),
        what_(std::move(what)),
        walk_(walk),
        table_(std::move(table)),
        taps_(taps),
        linear_(linear),
        elem_bytes_(elem_bytes),
        fill_bits_(fill_bits),
        fill_(fill) {}

  Status Run(KernelContext& ctx) override {
    if (walk_.numel == 0) return Status();
    const Launch1D launch = GridStride(walk_.numel, ctx_->props().shape);
    const auto* taps = static_cast<const data::ResizeTap*>(taps_.handle);
    const void* x = ctx.device_input(0).handle;
    void* y = ctx.device_output(0).handle;
    if (linear_) {
      return ctx_->AfterLaunch(
          data::LaunchResizeLinear(*linear_, walk_, taps, fill_, x, y, launch.grid, launch.block, ctx_->stream()),
          what_, "resize linear");
    }
    return ctx_->AfterLaunch(data::LaunchResizeNearest(elem_bytes_, walk_, taps, fill_bits_, x, y, launch.grid,
                                                       launch.block, ctx_->stream()),
                             what_, "resize nearest");
  }
  bool InputOnDevice(size_t input) const override { return input == 0; }  // roi/scales/sizes were read at Init
  bool OutputOnDevice(size_t output) const override { return output == 0; }

 private:
  CudaContext* ctx_;
  std::string what_;
  data::ResizeWalk walk_;
  std::shared_ptr<DeviceAllocation> table_;  // the tap table, owned by the kernel (a few KB)
  DeviceBuffer taps_;
  std::optional<FloatStorage> linear_;  // linear: the float storage; nearest: none
  size_t elem_bytes_;
  uint64_t fill_bits_;
  float fill_;
};

// ---- pad, gather

class PadKernel final : public IKernel {
 public:
  PadKernel(CudaContext* ctx, std::string what, data::PadMode mode, size_t elem_bytes, data::PadWalk walk,
            uint64_t value)
      : ctx_(ctx), what_(std::move(what)), mode_(mode), elem_bytes_(elem_bytes), walk_(walk), value_(value) {}

  Status Run(KernelContext& ctx) override {
    if (walk_.numel == 0) return Status();
    const Launch1D launch = GridStride(walk_.numel, ctx_->props().shape);
    return ctx_->AfterLaunch(data::LaunchPad(mode_, elem_bytes_, walk_, value_, ctx.device_input(0).handle,
                                             ctx.device_output(0).handle, launch.grid, launch.block, ctx_->stream()),
                             what_, "pad");
  }
  bool InputOnDevice(size_t input) const override { return input == 0; }  // pads, value, axes read at Init
  bool OutputOnDevice(size_t output) const override { return output == 0; }

 private:
  CudaContext* ctx_;
  std::string what_;
  data::PadMode mode_;
  size_t elem_bytes_;
  data::PadWalk walk_;
  uint64_t value_;
};

class GatherKernel final : public IKernel {
 public:
  GatherKernel(CudaContext* ctx, std::string what, data::GatherWalk walk, size_t index_bytes)
      : ctx_(ctx), what_(std::move(what)), walk_(walk), index_bytes_(index_bytes) {}

  Status Run(KernelContext& ctx) override {
    if (walk_.numel == 0) return Status();
    const Launch1D launch = GridStride(walk_.numel, ctx_->props().shape);
    return ctx_->AfterLaunch(
        data::LaunchGather(walk_, index_bytes_, ctx.device_input(0).handle, ctx.device_input(1).handle,
                           ctx.device_output(0).handle, launch.grid, launch.block, ctx_->stream()),
        what_, "gather");
  }
  // Constant indices are uploaded with the other constants.
  bool InputOnDevice(size_t input) const override { return input <= 1; }
  bool OutputOnDevice(size_t output) const override { return output == 0; }

 private:
  CudaContext* ctx_;
  std::string what_;
  data::GatherWalk walk_;
  size_t index_bytes_;
};

}  // namespace

static Result<std::unique_ptr<IKernel>> MakeMaxPool(const KernelInit& init) {
  return CreateWindowPool(init, PoolKind::kMax);
}

static Result<std::unique_ptr<IKernel>> MakeAveragePool(const KernelInit& init) {
  return CreateWindowPool(init, PoolKind::kAverage);
}

static Result<std::unique_ptr<IKernel>> MakeGlobalPool(const KernelInit& init) {
  RETURN_IF_ERROR(CheckStaticShapes(init));
  const std::string& op = init.node.op_type;
  if (op != "GlobalMaxPool" && op != "GlobalAveragePool") return Unsupported(op + " is not a global pool on CUDA");
  ASSIGN_OR_RETURN(const FloatStorage storage, RequireFloat(init, op));
  const Shape& x = init.inputs[0]->shape;
  if (x.size() < 2) return Unsupported("global pooling of a rank " + std::to_string(x.size()) + " tensor");
  const int64_t planes = x[0] * x[1];
  const int64_t plane = Product(x, 2);
  if (planes > 0 && plane == 0) return Unsupported("global pooling of empty planes");
  const PoolKind kind = op == "GlobalMaxPool" ? PoolKind::kMax : PoolKind::kAverage;
  ASSIGN_OR_RETURN(CudaContext * ctx, RequireStaticContext(init));
  return std::unique_ptr<IKernel>(new GlobalPoolKernel(ctx, init.node.Describe(), kind, storage,
                                                       static_cast<uint32_t>(planes), static_cast<uint32_t>(plane)));
}

static Result<std::unique_ptr<IKernel>> MakeResize(const KernelInit& init) {
  RETURN_IF_ERROR(CheckStaticShapes(init));
  const ValueInfo* xi = Input(init, 0);
  if (xi == nullptr) return Unsupported(init.node.op_type + " input 0 is missing");
  const Shape& in = xi->shape;
  const Shape& out = (*init.outputs)[0].shape;
  double extrapolation = 0;
  ASSIGN_OR_RETURN(const data::ResizeCoords coords, ResizePlanOf(init, in, &extrapolation));
  std::optional<FloatStorage> linear;
  size_t elem_bytes = 0;
  if (coords.linear) {
    const std::optional<FloatStorage> storage = FloatStorageOf(StorageOf(init, xi->dtype));
    if (!storage) {
      return Unsupported("linear Resize of " + Name(xi->dtype) + " (the CUDA kernel interpolates f32, f16 and bf16)");
    }
    linear = storage;
  } else {
    ASSIGN_OR_RETURN(elem_bytes, MovableBytes(init, xi->dtype));
  }
  data::ResizeWalk walk;
  std::vector<data::ResizeTap> taps;
  const std::string why = data::PlanResize(coords, in, out, walk, taps);
  if (!why.empty()) return Unsupported(why);
  ASSIGN_OR_RETURN(CudaContext * ctx, RequireStaticContext(init));

  // The tap table, uploaded once (as int32 words: the weight's float bits travel unchanged).
  std::shared_ptr<DeviceAllocation> table;
  DeviceBuffer buffer;
  if (!taps.empty()) {
    static_assert(sizeof(data::ResizeTap) == 4 * sizeof(int32_t));
    Tensor host(DType::kI32, {static_cast<int64_t>(taps.size() * 4)});
    std::memcpy(host.raw_data(), taps.data(), taps.size() * sizeof(data::ResizeTap));
    ASSIGN_OR_RETURN(table, ctx->Allocate(host.nbytes()));
    ASSIGN_OR_RETURN(buffer, table->View(0, host.nbytes()));
    RETURN_IF_ERROR(ctx->Upload(host, buffer));
    RETURN_IF_ERROR(ctx->Finish());  // the host tensor goes away
  }
  const DType storage = ctx->StorageType(xi->dtype);
  return std::unique_ptr<IKernel>(new ResizeKernel(ctx, init.node.Describe(), walk, std::move(table), buffer, linear,
                                                   elem_bytes, ValueBits(storage, extrapolation, nullptr),
                                                   static_cast<float>(extrapolation)));
}

static Result<std::unique_ptr<IKernel>> MakeTranspose(const KernelInit& init) {
  RETURN_IF_ERROR(CheckStaticShapes(init));
  const Node& node = init.node;
  const ValueInfo* x = Input(init, 0);
  if (x == nullptr) return Unsupported("Transpose input 0 is missing");
  ASSIGN_OR_RETURN(const size_t elem, MovableBytes(init, x->dtype));
  const Shape& in = x->shape;
  const size_t rank = in.size();
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  perm = node.GetInts("perm", perm);
  std::vector<bool> seen(rank, false);
  if (perm.size() != rank) return InvalidArgument(node.Describe() + ": perm has the wrong length");
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)]) {
      return InvalidArgument(node.Describe() + ": perm is not a permutation of " + std::to_string(rank) + " axes");
    }
    seen[static_cast<size_t>(p)] = true;
  }
  const std::vector<int64_t> in_strides = DenseStrides(in);
  std::vector<int64_t> dims, src;
  for (int64_t p : perm) {
    dims.push_back(in[static_cast<size_t>(p)]);
    src.push_back(in_strides[static_cast<size_t>(p)]);
  }
  ASSIGN_OR_RETURN(const data::StridedCopy plan, Plan(dims, src, DenseStrides(dims), 0, 0, elem));
  return MakeCopies(init, {{0, plan}}, {0});
}

static Result<std::unique_ptr<IKernel>> MakeConcat(const KernelInit& init) {
  RETURN_IF_ERROR(CheckStaticShapes(init));
  const Node& node = init.node;
  if (init.inputs.empty() || init.inputs[0] == nullptr) return Unsupported("Concat without inputs");
  const Shape& out = (*init.outputs)[0].shape;
  if (out.empty()) return InvalidArgument(node.Describe() + ": cannot concatenate scalars");
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(node.GetInt("axis", 0), static_cast<int64_t>(out.size()), node));
  const auto a = static_cast<size_t>(axis);
  const std::vector<int64_t> out_strides = DenseStrides(out);
  std::vector<std::pair<size_t, data::StridedCopy>> copies;
  std::vector<size_t> device_inputs;
  int64_t at = 0;
  for (size_t i = 0; i < init.inputs.size(); ++i) {
    const ValueInfo* in = init.inputs[i];
    if (in == nullptr) return Unsupported("Concat input " + std::to_string(i) + " is missing");
    if (in->dtype != init.inputs[0]->dtype) {
      return InvalidArgument(node.Describe() + ": inputs of " + Name(init.inputs[0]->dtype) + " and " +
                             Name(in->dtype));
    }
    ASSIGN_OR_RETURN(const size_t elem, MovableBytes(init, in->dtype));
    if (in->shape.size() != out.size()) return InvalidArgument(node.Describe() + ": inputs differ in rank");
    device_inputs.push_back(i);
    if (NumElements(in->shape) > 0) {
      ASSIGN_OR_RETURN(data::StridedCopy plan,
                       Plan(in->shape, DenseStrides(in->shape), out_strides, 0, at * out_strides[a], elem));
      copies.emplace_back(i, plan);
    }
    at += in->shape[a];
  }
  if (at != out[a]) {
    return InvalidArgument(node.Describe() + ": inputs add up to " + std::to_string(at) + " along axis " +
                           std::to_string(axis) + ", the output has " + std::to_string(out[a]));
  }
  return MakeCopies(init, std::move(copies), std::move(device_inputs));
}

static Result<std::unique_ptr<IKernel>> MakeSlice(const KernelInit& init) {
  RETURN_IF_ERROR(CheckStaticShapes(init));
  const Node& node = init.node;
  const ValueInfo* x = Input(init, 0);
  if (x == nullptr) return Unsupported("Slice input 0 is missing");
  ASSIGN_OR_RETURN(const size_t elem, MovableBytes(init, x->dtype));
  const Shape& in = x->shape;
  const Shape& out = (*init.outputs)[0].shape;
  if (out.size() != in.size()) return InvalidArgument(node.Describe() + ": output rank differs from the input's");
  // Starts and steps decide where each output element comes from; the ends only decide the output
  // shape, which shape inference already gave (so they need not be constant).
  bool has_starts = false, has_axes = false, has_steps = false;
  ASSIGN_OR_RETURN(std::vector<int64_t> starts, SliceList(init, "starts", 1, &has_starts));
  ASSIGN_OR_RETURN(std::vector<int64_t> axes, SliceList(init, "axes", 3, &has_axes));
  std::vector<int64_t> steps;
  if (init.opset >= 10) {
    ASSIGN_OR_RETURN(steps, SliceList(init, "steps", 4, &has_steps));
  }
  if (!has_starts) return InvalidArgument(node.Describe() + ": missing starts");
  if (!has_axes) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), int64_t{0});
  }
  if (!has_steps) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) {
    return InvalidArgument(node.Describe() + ": starts, axes and steps differ in length");
  }
  ASSIGN_OR_RETURN(const std::vector<int64_t> norm, NormalizeAxes(axes, static_cast<int64_t>(in.size()), node));
  const std::vector<int64_t> in_strides = DenseStrides(in);
  std::vector<int64_t> src = in_strides;
  int64_t offset = 0;
  for (size_t i = 0; i < norm.size(); ++i) {
    const auto a = static_cast<size_t>(norm[i]);
    const int64_t dim = in[a];
    const int64_t step = steps[i];
    if (step == 0) return InvalidArgument(node.Describe() + ": steps must not be 0");
    if (out[a] == 0) continue;
    int64_t s = starts[i];
    if (s < 0) s = s < -dim ? -1 : s + dim;
    s = step > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
    offset += s * in_strides[a];
    // A dim of one output element never advances: a huge step stays out of the 32-bit strides.
    src[a] = out[a] > 1 ? in_strides[a] * step : 0;
  }
  if (NumElements(out) == 0) offset = 0;
  ASSIGN_OR_RETURN(const data::StridedCopy plan, Plan(out, src, DenseStrides(out), offset, 0, elem));
  return MakeCopies(init, {{0, plan}}, {0});
}

static Result<std::unique_ptr<IKernel>> MakeGather(const KernelInit& init) {
  RETURN_IF_ERROR(CheckStaticShapes(init));
  const Node& node = init.node;
  const ValueInfo* x = Input(init, 0);
  const ValueInfo* indices = Input(init, 1);
  if (x == nullptr || indices == nullptr) return Unsupported("Gather with a missing input");
  if (indices->dtype != DType::kI32 && indices->dtype != DType::kI64) {
    return InvalidArgument(node.Describe() + ": indices must be int32 or int64, got " + Name(indices->dtype));
  }
  ASSIGN_OR_RETURN(const size_t elem, MovableBytes(init, x->dtype));
  const Shape& in = x->shape;
  if (in.empty()) return InvalidArgument(node.Describe() + ": data must have rank >= 1");
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(node.GetInt("axis", 0), static_cast<int64_t>(in.size()), node));
  const int64_t axis_dim = in[static_cast<size_t>(axis)];
  if (indices->value != nullptr) {
    // Constant indices fail here, with the value, rather than as zeros on the device.
    for (int64_t i : indices->value->ToInt64Vector()) {
      if (i < -axis_dim || i >= axis_dim) {
        return InvalidArgument(node.Describe() + ": index " + std::to_string(i) + " is out of range for a dim of " +
                               std::to_string(axis_dim));
      }
    }
  }
  data::GatherWalk walk;
  const std::string why = data::PlanGather(in, static_cast<size_t>(axis), NumElements(indices->shape), elem, walk);
  if (!why.empty()) return Unsupported(why);
  ASSIGN_OR_RETURN(CudaContext * ctx, RequireStaticContext(init));
  return std::unique_ptr<IKernel>(new GatherKernel(ctx, node.Describe(), walk, DTypeSize(indices->dtype)));
}

static Result<std::unique_ptr<IKernel>> MakePad(const KernelInit& init) {
  RETURN_IF_ERROR(CheckStaticShapes(init));
  const Node& node = init.node;
  const ValueInfo* x = Input(init, 0);
  if (x == nullptr) return Unsupported("Pad input 0 is missing");
  ASSIGN_OR_RETURN(const size_t elem, MovableBytes(init, x->dtype));
  const Shape& in = x->shape;
  const Shape& out = (*init.outputs)[0].shape;
  const std::string mode_name = node.GetString("mode", "constant");
  data::PadMode mode = data::PadMode::kConstant;
  if (mode_name == "edge") {
    mode = data::PadMode::kEdge;
  } else if (mode_name == "reflect") {
    mode = data::PadMode::kReflect;
  } else if (mode_name == "wrap") {
    mode = data::PadMode::kWrap;
  } else if (mode_name != "constant") {
    return Unsupported("Pad mode '" + mode_name + "'");
  }
  std::vector<int64_t> pads;
  if (init.opset < 11) {
    pads = node.GetInts("pads");
  } else {
    const Tensor* t = ConstantInput(init, 1);
    if (t == nullptr) return Unsupported("Pad's pads are not constant");
    pads = t->ToInt64Vector();
  }
  std::vector<int64_t> axes(in.size());
  std::iota(axes.begin(), axes.end(), int64_t{0});
  if (init.opset >= 18 && node.HasInput(3)) {
    const Tensor* t = ConstantInput(init, 3);
    if (t == nullptr) return Unsupported("Pad's axes are not constant");
    axes = t->ToInt64Vector();
  }
  ASSIGN_OR_RETURN(const std::vector<int64_t> norm, NormalizeAxes(axes, static_cast<int64_t>(in.size()), node));
  if (pads.size() != 2 * norm.size()) {
    return InvalidArgument(node.Describe() + ": " + std::to_string(pads.size()) + " pads for " +
                           std::to_string(norm.size()) + " axes");
  }
  std::vector<int64_t> begin(in.size(), 0);
  for (size_t i = 0; i < norm.size(); ++i) begin[static_cast<size_t>(norm[i])] = pads[i];
  if (out.size() != in.size()) return InvalidArgument(node.Describe() + ": output rank differs from the input's");

  // The constant: an attribute before opset 11, optional input 2 after (integers exact from int64).
  double value = 0.0;
  std::optional<int64_t> exact;
  if (init.opset < 11) {
    value = node.GetFloat("value", 0.0f);
  } else if (node.HasInput(2)) {
    const Tensor* t = ConstantInput(init, 2);
    if (t == nullptr) return Unsupported("Pad's constant_value is not constant");
    if (t->numel() > 0) {
      value = t->GetAsDouble(0);
      if (IsIntegerDType(x->dtype)) exact = t->GetAsInt64(0);
    }
  }
  data::PadWalk walk;
  const std::string why = data::PlanPad(in, out, begin, walk);
  if (!why.empty()) return Unsupported(why);
  ASSIGN_OR_RETURN(CudaContext * ctx, RequireStaticContext(init));
  const uint64_t bits = ValueBits(ctx->StorageType(x->dtype), value, exact ? &*exact : nullptr);
  return std::unique_ptr<IKernel>(new PadKernel(ctx, node.Describe(), mode, elem, walk, bits));
}

// Every refusal is Unsupported (the node then stays on the reference, whose shape inference reports a
// malformed node in its own words); errors of the context (allocation, upload) pass unchanged.
static Result<std::unique_ptr<IKernel>> Refusal(Result<std::unique_ptr<IKernel>> kernel) {
  if (kernel.ok() || kernel.status().code() != StatusCode::kInvalidArgument) return kernel;
  return Unsupported(kernel.status().message());
}

Result<std::unique_ptr<IKernel>> CreateMaxPool(const KernelInit& init) { return Refusal(MakeMaxPool(init)); }
Result<std::unique_ptr<IKernel>> CreateAveragePool(const KernelInit& init) { return Refusal(MakeAveragePool(init)); }
Result<std::unique_ptr<IKernel>> CreateGlobalPool(const KernelInit& init) { return Refusal(MakeGlobalPool(init)); }
Result<std::unique_ptr<IKernel>> CreateResize(const KernelInit& init) { return Refusal(MakeResize(init)); }
Result<std::unique_ptr<IKernel>> CreateTranspose(const KernelInit& init) { return Refusal(MakeTranspose(init)); }
Result<std::unique_ptr<IKernel>> CreateConcat(const KernelInit& init) { return Refusal(MakeConcat(init)); }
Result<std::unique_ptr<IKernel>> CreateSlice(const KernelInit& init) { return Refusal(MakeSlice(init)); }
Result<std::unique_ptr<IKernel>> CreateGather(const KernelInit& init) { return Refusal(MakeGather(init)); }
Result<std::unique_ptr<IKernel>> CreatePad(const KernelInit& init) { return Refusal(MakePad(init)); }

}  // namespace chipfit::cuda
