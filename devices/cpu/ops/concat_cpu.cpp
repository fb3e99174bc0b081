// Concat on oneDNN concat (any axis): float32 values (channels-last inputs stay channels-last), any
// other element type as its bits.
#include <string>
#include <unordered_map>
#include <vector>

#include "core/reference/ref_util.h"
#include "devices/cpu/onednn_util.h"
#include "devices/cpu/ops/cpu_ops.h"

namespace chipfit::cpu {
namespace {

using dnnl::memory;
using dt = memory::data_type;

class ConcatKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init) {
    const Node& node = init.node;
    if (init.inputs.empty()) return Unsupported("Concat without inputs");
    // float32 is concatenated as values (channels-last stays so); any other element type as bits:
    // 32-bit words or bytes, with one extra innermost dim for wider elements (int64 shapes and
    // indices in detectors).
    const DType dtype = init.inputs[0]->dtype;
    const bool bits = dtype != DType::kF32;
    for (size_t i = 0; i < init.inputs.size(); ++i) {
      if (!bits) {
        RETURN_IF_ERROR(RequireStaticF32(init, {i}));
        continue;
      }
      const ValueInfo* in = init.inputs[i];
      if (in == nullptr || in->dtype != dtype) return Unsupported("inputs of different element types");
      for (int64_t d : in->shape) {
        if (d <= 0) return Unsupported(d < 0 ? "shapes known only at run time" : "an empty input");
      }
    }
    const size_t size = DTypeSize(dtype);
    if (bits && size == 0) return Unsupported(std::string(DTypeName(dtype)) + " input");
    const dt type = !bits ? dt::f32 : size % 4 == 0 ? dt::s32 : dt::u8;
    const auto parts = static_cast<int64_t>(!bits ? 1 : size % 4 == 0 ? size / 4 : size);
    const Shape& first = init.inputs[0]->shape;
    const auto rank = static_cast<int64_t>(first.size());
    if (rank == 0) return InvalidArgument(node.Describe() + ": cannot concatenate scalars");
    ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(node.GetInt("axis", 0), rank, node));
    Shape out = first;
    out[static_cast<size_t>(axis)] = 0;
    bool all_channels_last = rank == 4 && !bits;
    for (const ValueInfo* in : init.inputs) {
      if (in->shape.size() != first.size()) return InvalidArgument(node.Describe() + ": inputs differ in rank");
      for (size_t d = 0; d < first.size(); ++d) {
        if (static_cast<int64_t>(d) != axis && in->shape[d] != first[d]) {
          return InvalidArgument(node.Describe() + ": input shape " + ShapeToString(in->shape) + " does not match " +
                                 ShapeToString(first) + " outside axis " + std::to_string(axis));
        }
      }
      out[static_cast<size_t>(axis)] += in->shape[static_cast<size_t>(axis)];
      all_channels_last = all_channels_last && in->layout == Layout::kChannelsLast;
    }
    // Joining channels-last tensors in channels-last order avoids reordering every input (and
    // the output, which the next convolution wants channels-last); any other mix runs plain.
    auto kernel = std::unique_ptr<ConcatKernel>(new ConcatKernel());
    kernel->layout_ = all_channels_last ? Layout::kChannelsLast : Layout::kPlain;
    auto with_parts = [parts](Shape shape) {
      if (parts > 1) shape.push_back(parts);
      return shape;
    };
    std::vector<memory::desc> srcs;
    for (const ValueInfo* in : init.inputs) srcs.push_back(Describe(with_parts(in->shape), type, kernel->layout_));
    const memory::desc dst_md = Describe(with_parts(out), type, kernel->layout_);
    dnnl::concat::primitive_desc pd;
    RETURN_IF_ERROR(Guard(node, "concat",
                          [&] { pd = dnnl::concat::primitive_desc(dst_md, static_cast<int>(axis), srcs, Engine()); }));
    if (IsReferenceImpl(pd.impl_info_str())) {
      return Unsupported("only oneDNN's reference implementation (" + std::string(pd.impl_info_str()) + ")");
    }
    std::unordered_map<int, memory> args;
    for (size_t i = 0; i < srcs.size(); ++i) {
      args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = memory(srcs[i], Engine(), DNNL_MEMORY_NONE);
    }
    args[DNNL_ARG_DST] = memory(pd.dst_desc(), Engine(), DNNL_MEMORY_NONE);
    kernel->inputs_ = srcs.size();
    kernel->concat_ = PrimitiveCall(dnnl::concat(pd), std::move(args));
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    for (size_t i = 0; i < inputs_; ++i) {
      concat_.SetHandle(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), ctx.input(i)->raw_data());
    }
    concat_.SetHandle(DNNL_ARG_DST, ctx.output(0)->raw_data());
    concat_.Execute();
    return Status();
  }
  Layout InputLayout(size_t /*input*/) const override { return layout_; }
  Layout OutputLayout(size_t /*output*/) const override { return layout_; }

 private:
  ConcatKernel() = default;

 public:
  std::string Isa() const override { return concat_.Impl(); }

 private:
  PrimitiveCall concat_;
  size_t inputs_ = 0;
  Layout layout_ = Layout::kPlain;
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateConcatF32(const KernelInit& init) { return ConcatKernel::Create(init); }

}  // namespace chipfit::cpu
