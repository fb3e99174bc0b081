// Pad and Slice on the CPU: one copy kernel driven by the reference's index maps (core/reference/
// index_maps.h). Each output row (all dims but the last) reads one input row or is all fill; along the
// last dim the maps fall into runs, copied with memcpy where the input is contiguous. Rows run in
// parallel (OpenMP). Plain order, any dtype of fixed size; a Slice of a rank-4 input its producer writes
// channels-last runs in that order (the same copy, its maps permuted to memory order).
#include <algorithm>
#include <cstring>

#include "core/reference/index_maps.h"
#include "core/reference/ref_util.h"
#include "devices/cpu/ops/cpu_ops.h"

namespace chipfit::cpu {
namespace {

// Channels-last memory order of a rank-4 (logical NCHW) tensor: memory dim k is logical dim kNhwc[k].
constexpr size_t kNhwc[] = {0, 2, 3, 1};

// What one copy does: the index maps of one input shape and one set of pads or starts/ends/steps.
// `maps` and `in_strides` are in memory order (dims permuted to it when channels-last), so Run walks
// input and output as they lie; `out` is the logical output shape.
struct CopyPlan {
  // Along the last dim: [out, out + length) reads [in, in + length), or is fill (in < 0).
  struct Span {
    int64_t out, in, length;
  };
  size_t element = 0;
  std::vector<int64_t> in_strides;
  IndexMaps maps;
  Shape out;
  std::vector<char> fill;
  std::vector<Span> spans;

  static Result<CopyPlan> Make(const Node& node, int64_t opset, const std::vector<const ValueInfo*>& inputs, bool pad,
                               bool channels_last) {
    const ValueInfo* x = inputs[0];
    InferContext ctx(node, opset, inputs);
    CopyPlan plan;
    plan.element = DTypeSize(x->dtype);
    ASSIGN_OR_RETURN(plan.maps, pad ? PadIndexMaps(ctx, x->shape) : SliceIndexMaps(ctx, x->shape));
    plan.out = plan.maps.out;
    Shape in_memory = x->shape;
    if (channels_last) {
      IndexMaps memory{.fill = plan.maps.fill};
      for (size_t k = 0; k < 4; ++k) {
        memory.source.push_back(std::move(plan.maps.source[kNhwc[k]]));
        memory.out.push_back(plan.maps.out[kNhwc[k]]);
        in_memory[k] = x->shape[kNhwc[k]];
      }
      plan.maps = std::move(memory);
    }
    plan.in_strides = Strides(in_memory);
    plan.fill.resize(plan.element);
    RETURN_IF_ERROR(VisitKernelDType(node, x->dtype, [&](auto tag) -> Status {
      using T = decltype(tag);
      const T value = FromDouble<T>(plan.maps.fill);
      std::memcpy(plan.fill.data(), &value, plan.element);
      return Status();
    }));
    const std::vector<int64_t>& last = plan.maps.source.back();
    for (size_t c = 0; c < last.size(); ++c) {
      const auto at = static_cast<int64_t>(c);
      if (!plan.spans.empty()) {
        Span& span = plan.spans.back();
        const bool extends = span.in < 0 ? last[c] < 0 : last[c] == span.in + span.length;
        if (extends && span.out + span.length == at) {
          ++span.length;
          continue;
        }
      }
      plan.spans.push_back({at, last[c] < 0 ? -1 : last[c], 1});
    }
    return plan;
  }

  void Fill(char* to, int64_t count) const {
    for (int64_t i = 0; i < count; ++i) std::memcpy(to + static_cast<size_t>(i) * element, fill.data(), element);
  }

  void Run(const char* in, char* out) const {
    const Shape& shape = maps.out;
    const size_t rank = shape.size();
    const int64_t last = shape.back();
    const int64_t rows = last == 0 ? 0 : NumElements(shape) / last;
    const size_t row_bytes = static_cast<size_t>(last) * element;
#pragma omp parallel for schedule(static)
    for (int64_t row = 0; row < rows; ++row) {
      char* dst = out + static_cast<size_t>(row) * row_bytes;
      int64_t from = 0;
      bool filled = false;
      for (int64_t rest = row, d = static_cast<int64_t>(rank) - 2; d >= 0; --d) {
        const auto du = static_cast<size_t>(d);
        const int64_t c = rest % shape[du];
        rest /= shape[du];
        const int64_t i = maps.source[du][static_cast<size_t>(c)];
        if (i < 0) {
          filled = true;
          break;
        }
        from += i * in_strides[du];
      }
      if (filled) {
        Fill(dst, last);
        continue;
      }
      for (const Span& span : spans) {
        char* to = dst + static_cast<size_t>(span.out) * element;
        if (span.in < 0) {
          Fill(to, span.length);
        } else {
          std::memcpy(to, in + static_cast<size_t>(from + span.in) * element,
                      static_cast<size_t>(span.length) * element);
        }
      }
    }
  }
};

// The plan is made at compile time when the input's shape and the pads or slice parameters are known
// then; otherwise when the node runs, from the tensors it is given (the executor sized the output
// from the same values).
class IndexCopyKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, bool pad) {
    const ValueInfo* x = init.inputs.empty() ? nullptr : init.inputs[0];
    if (x == nullptr) return Unsupported("input 0 is missing");
    if (x->shape.empty()) return Unsupported("a scalar input");
    if (DTypeSize(x->dtype) == 0) return Unsupported(std::string(DTypeName(x->dtype)) + " input");
    auto kernel = std::unique_ptr<IndexCopyKernel>(new IndexCopyKernel(pad));
    // A Slice keeps a channels-last input so (its output too): no reorder to plain and back around it.
    kernel->channels_last_ = !pad && x->shape.size() == 4 && x->layout == Layout::kChannelsLast;
    bool at_run = std::any_of(x->shape.begin(), x->shape.end(), [](int64_t d) { return d < 0; });
    for (size_t k = 1; k < init.inputs.size(); ++k)
      at_run |= init.inputs[k] != nullptr && init.inputs[k]->value == nullptr;
    if (!at_run) {
      ASSIGN_OR_RETURN(kernel->plan_, CopyPlan::Make(init.node, init.opset, init.inputs, pad, kernel->channels_last_));
      kernel->planned_ = true;
    }
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const auto* in = static_cast<const char*>(ctx.input(0)->raw_data());
    auto* out = static_cast<char*>(ctx.output(0)->raw_data());
    if (planned_) {
      plan_.Run(in, out);
      return Status();
    }
    std::vector<const Tensor*> inputs;
    for (size_t k = 0; k < ctx.num_inputs(); ++k) inputs.push_back(ctx.input(k));
    const TensorInfos infos(inputs);
    ASSIGN_OR_RETURN(const CopyPlan plan,
                     CopyPlan::Make(ctx.node(), ctx.opset(), infos.pointers(), pad_, channels_last_));
    if (plan.out != ctx.output(0)->shape()) return ctx.Error("the output's shape differs from the plan's");
    plan.Run(in, out);
    return Status();
  }
  Layout InputLayout(size_t input) const override {
    return input == 0 && channels_last_ ? Layout::kChannelsLast : Layout::kPlain;
  }
  Layout OutputLayout(size_t /*output*/) const override {
    return channels_last_ ? Layout::kChannelsLast : Layout::kPlain;
  }

 private:
  explicit IndexCopyKernel(bool pad) : pad_(pad) {}

  bool pad_;
  bool channels_last_ = false;  // input 0 and the output in memory order N, H, W, C
  bool planned_ = false;
  CopyPlan plan_;
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreatePad(const KernelInit& init) { return IndexCopyKernel::Create(init, true); }
Result<std::unique_ptr<IKernel>> CreateSlice(const KernelInit& init) { return IndexCopyKernel::Create(init, false); }

}  // namespace chipfit::cpu
