// Data movement on the CPU: Reshape-like ops (a copy in plain order) and Transpose (a oneDNN
// reorder with permuted strides, of the elements' bits: any element type).
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

}  // namespace chipfit::cpu
