// Data movement on the CPU: Reshape-like ops (a copy in plain order) and Transpose (a oneDNN
// reorder with permuted strides, of the elements' bits: any element type).
#include <algorithm>
#include <cstring>

#include "devices/cpu/onednn_util.h"
#include "devices/cpu/ops/cpu_ops.h"
#include "devices/cpu/ops/parallel_chunks.h"

namespace chipfit::cpu {
namespace {

// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout (inference): the bytes stay as they are
// in plain order, so the kernel copies input 0 to output 0 (a later memory planner could alias).
class CopyKernel final : public IKernel {
 public:
  Status Run(KernelContext& ctx) override {
    const Tensor* in = ctx.input(0);
    Tensor* out = ctx.output(0);
    if (in->nbytes() != out->nbytes())
      return ctx.Error("copy of " + DescribeTensor(*in) + " into " + DescribeTensor(*out));
    // (An empty tensor may have no buffer at all: nothing to copy.)
    if (in->nbytes() > 0) CopyBytes(out->raw_data(), in->raw_data(), in->nbytes());
    // Dropout's optional mask output: all true in inference.
    if (Tensor* mask = ctx.output(1); mask != nullptr && mask->nbytes() > 0) {
      std::memset(mask->raw_data(), 1, mask->nbytes());
    }
    return Status();
  }
};

class TransposeKernel final : public IKernel {
 public:
  explicit TransposeKernel(PrimitiveCall call) : call_(std::move(call)) {}
  Status Run(KernelContext& ctx) override {
    call_.Run(ctx.input(0)->raw_data(), ctx.output(0)->raw_data());
    return Status();
  }

 private:
 public:
  std::string Isa() const override { return call_.Impl(); }

 private:
  PrimitiveCall call_;
};

// com.chipfit ChannelShuffle: output channel j·g + i is input channel i·(C/g) + j. In the producer's
// order: plain moves whole H·W planes; channels-last permutes the C values of each pixel, so the
// convolutions around it keep their layout (no reorder to plain for a 5-D transpose and back).
class ChannelShuffleKernel final : public IKernel {
 public:
  ChannelShuffleKernel(Layout layout, int64_t group, Shape shape, size_t element)
      : layout_(layout), group_(group), shape_(std::move(shape)), element_(element) {
    const int64_t per_group = shape_[1] / group_;
    for (int64_t c = 0; c < shape_[1]; ++c) source_.push_back(c % group_ * per_group + c / group_);
  }

  Status Run(KernelContext& ctx) override {
    const auto* in = static_cast<const char*>(ctx.input(0)->raw_data());
    auto* out = static_cast<char*>(ctx.output(0)->raw_data());
    const int64_t channels = shape_[1];
    const int64_t pixels = NumElements(shape_) / (shape_[0] * channels);
    const int64_t* source = source_.data();
    if (layout_ == Layout::kPlain) {
      const size_t plane = static_cast<size_t>(pixels) * element_;
      const int64_t planes = shape_[0] * channels;
#pragma omp parallel for schedule(static) if (planes * static_cast <int64_t>(plane) >= kChunksParallelFrom)
      for (int64_t p = 0; p < planes; ++p) {
        const int64_t n = p / channels, c = p % channels;
        std::memcpy(out + static_cast<size_t>(p) * plane, in + static_cast<size_t>(n * channels + source[c]) * plane,
                    plane);
      }
      return Status();
    }
    const int64_t rows = shape_[0] * pixels;
    const size_t row = static_cast<size_t>(channels) * element_;
    ForChunks(rows, rows * static_cast<int64_t>(row), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const char* from = in + static_cast<size_t>(r) * row;
        char* to = out + static_cast<size_t>(r) * row;
        switch (element_) {
          case 4: Permute<uint32_t>(from, to, channels, group_, source); break;
          case 2: Permute<uint16_t>(from, to, channels, group_, source); break;
          case 8: Permute<uint64_t>(from, to, channels, group_, source); break;
          default: Permute<uint8_t>(from, to, channels, group_, source); break;
        }
      }
    });
    return Status();
  }
  Layout InputLayout(size_t /*input*/) const override { return layout_; }
  Layout OutputLayout(size_t /*output*/) const override { return layout_; }

 private:
  // One pixel's channels; two groups (ShuffleNetV2's) interleave the two halves, which vectorises.
  template <typename T>
  static void Permute(const char* from, char* to, int64_t channels, int64_t group, const int64_t* source) {
    const auto* src = reinterpret_cast<const T*>(from);
    auto* dst = reinterpret_cast<T*>(to);
    if (group == 2) {
      const int64_t half = channels / 2;
      const T* second = src + half;
      for (int64_t j = 0; j < half; ++j) {
        dst[2 * j] = src[j];
        dst[2 * j + 1] = second[j];
      }
      return;
    }
    for (int64_t c = 0; c < channels; ++c) dst[c] = src[source[c]];
  }

  Layout layout_;
  int64_t group_;
  Shape shape_;
  size_t element_;
  std::vector<int64_t> source_;  // output channel c reads input channel source_[c]
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateCopy(const KernelInit& init) {
  const ValueInfo* in = init.inputs.empty() ? nullptr : init.inputs[0];
  if (in == nullptr) return Unsupported("input 0 is missing");
  for (int64_t d : in->shape) {
    if (d < 0) return Unsupported("shapes known only at run time");
  }
  if (DTypeSize(in->dtype) == 0) return Unsupported(std::string(DTypeName(in->dtype)) + " input");
  if (init.node.op_type == "Dropout" && init.node.HasInput(2)) {
    // Dropout is a copy unless training_mode is on (or computed) and the ratio (0.5 when omitted) is not a
    // constant 0.
    const ValueInfo* ratio = init.node.HasInput(1) ? init.inputs[1] : nullptr;
    const ValueInfo* training = init.inputs[2];
    const bool zero_ratio = ratio != nullptr && ratio->value != nullptr && ratio->value->GetAsDouble(0) == 0.0;
    const bool inference = training != nullptr && training->value != nullptr && training->value->GetAsDouble(0) == 0.0;
    if (!zero_ratio && !inference) {
      return Unsupported(
          "Dropout with training_mode draws a random mask; random sampling runs on the reference kernels, so that a "
          "seed gives the same values on every target");
    }
  }
  return std::unique_ptr<IKernel>(new CopyKernel());
}

Result<std::unique_ptr<IKernel>> CreateTranspose(const KernelInit& init) {
  const ValueInfo* in = init.inputs.empty() ? nullptr : init.inputs[0];
  if (in == nullptr) return Unsupported("input 0 is missing");
  // Data movement copies bits: an element is moved as 32-bit words (int64, double: two; float,
  // int32: one) or as bytes (16-bit and 8-bit types), one extra innermost dim that stays in place.
  const size_t size = DTypeSize(in->dtype);
  if (size == 0) return Unsupported(std::string(DTypeName(in->dtype)) + " input");
  const bool words = size % 4 == 0;
  const dnnl::memory::data_type type = words ? dnnl::memory::data_type::s32 : dnnl::memory::data_type::u8;
  const auto parts = static_cast<int64_t>(words ? size / 4 : size);
  Shape shape = in->shape;
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) return Unsupported("shapes known only at run time");
    empty |= d == 0;
  }
  if (empty) return std::unique_ptr<IKernel>(new CopyKernel());  // nothing to move
  const size_t in_rank = shape.size();
  if (in_rank == 0 || in_rank > 6) return Unsupported("rank " + std::to_string(in_rank));
  std::vector<int64_t> perm = init.node.GetInts("perm");
  if (perm.empty()) {
    for (size_t i = 0; i < in_rank; ++i) perm.push_back(static_cast<int64_t>(in_rank - 1 - i));
  }
  if (perm.size() != in_rank) return Unsupported("perm has " + std::to_string(perm.size()) + " entries");
  if (parts > 1) {
    shape.push_back(parts);
    perm.push_back(static_cast<int64_t>(in_rank));
  }
  const size_t rank = shape.size();
  // Source described with the input's dims and strides; destination in plain order, with the
  // source dims placed where perm sends them: dst dim i = src dim perm[i].
  using Strides_t = std::vector<int64_t>;
  const Strides_t src_strides = [&] {
    Strides_t s(rank, 1);
    for (size_t i = rank - 1; i > 0; --i) s[i - 1] = s[i] * shape[i];
    return s;
  }();
  dnnl::memory::dims dims(shape.begin(), shape.end());
  dnnl::memory::dims dst_strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    const auto src_axis = static_cast<size_t>(perm[i]);
    if (perm[i] < 0 || src_axis >= rank) return Unsupported("perm entry out of range");
    dst_strides[src_axis] = stride;
    stride *= shape[src_axis];
  }
  const dnnl::memory::desc src_md(dims, type, dnnl::memory::dims(src_strides.begin(), src_strides.end()));
  const dnnl::memory::desc dst_md(dims, type, dst_strides);
  PrimitiveCall call;
  Status status = Guard(init.node, "transpose", [&] {
    dnnl::reorder::primitive_desc pd(Engine(), src_md, Engine(), dst_md);
    call = PrimitiveCall::SrcDst(dnnl::reorder(pd), src_md, dst_md, DNNL_ARG_FROM, DNNL_ARG_TO);
  });
  RETURN_IF_ERROR(status);
  return std::unique_ptr<IKernel>(new TransposeKernel(std::move(call)));
}

Result<std::unique_ptr<IKernel>> CreateChannelShuffle(const KernelInit& init) {
  const ValueInfo* in = init.inputs.empty() ? nullptr : init.inputs[0];
  if (in == nullptr) return Unsupported("input 0 is missing");
  const size_t element = DTypeSize(in->dtype);
  if (element != 1 && element != 2 && element != 4 && element != 8) {
    return Unsupported(std::string(DTypeName(in->dtype)) + " input");
  }
  const Shape shape = init.node.GetInts("shape");
  const int64_t group = init.node.GetInt("group", 0);
  const bool valid = shape.size() >= 2 && group > 0 && shape[1] % group == 0 &&
                     std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d > 0; }) &&
                     NumElements(in->shape) == NumElements(shape);
  for (int64_t d : in->shape) {
    if (d < 0) return Unsupported("shapes known only at run time");
  }
  if (!valid) return Unsupported("group, shape or input do not agree (the reference reports it)");
  // Channels-last only where the input is the [N, C, H, W] it is read as (else its plain bytes are).
  const Layout layout = in->shape == shape && shape.size() == 4 && in->layout == Layout::kChannelsLast
                            ? Layout::kChannelsLast
                            : Layout::kPlain;
  return std::unique_ptr<IKernel>(std::make_unique<ChannelShuffleKernel>(layout, group, shape, element));
}

}  // namespace chipfit::cpu
