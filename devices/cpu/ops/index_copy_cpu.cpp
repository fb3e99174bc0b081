// Pad and Slice on the CPU: one copy kernel driven by the reference's index maps (core/reference/
// index_maps.h). Each output row (all dims but the last) reads one input row or is all fill; along the
// last dim the maps fall into runs, copied with memcpy where the input is contiguous. Rows run in
// parallel (OpenMP). Plain order, any dtype of fixed size.
#include <cstring>

#include "core/reference/index_maps.h"
#include "core/reference/ref_util.h"
#include "devices/cpu/ops/cpu_ops.h"

namespace chipfit::cpu {
namespace {

class IndexCopyKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, bool pad) {
    const ValueInfo* x = init.inputs.empty() ? nullptr : init.inputs[0];
    if (x == nullptr) return Unsupported("input 0 is missing");
    for (int64_t d : x->shape) {
      if (d < 0) return Unsupported("shapes known only at run time");
    }
    if (x->shape.empty()) return Unsupported("a scalar input");
    const size_t element = DTypeSize(x->dtype);
    if (element == 0) return Unsupported(std::string(DTypeName(x->dtype)) + " input");
    InferContext ctx(init.node, init.opset, init.inputs);
    ASSIGN_OR_RETURN(IndexMaps maps, pad ? PadIndexMaps(ctx, x->shape) : SliceIndexMaps(ctx, x->shape));
    auto kernel = std::unique_ptr<IndexCopyKernel>(new IndexCopyKernel());
    kernel->element_ = element;
    kernel->in_strides_ = Strides(x->shape);
    kernel->maps_ = std::move(maps);
    kernel->fill_.resize(element);
    RETURN_IF_ERROR(VisitKernelDType(init.node, x->dtype, [&](auto tag) -> Status {
      using T = decltype(tag);
      const T value = FromDouble<T>(kernel->maps_.fill);
      std::memcpy(kernel->fill_.data(), &value, element);
      return Status();
    }));
    kernel->BuildSpans();
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const auto* in = static_cast<const char*>(ctx.input(0)->raw_data());
    auto* out = static_cast<char*>(ctx.output(0)->raw_data());
    const Shape& shape = maps_.out;
    const size_t rank = shape.size();
    const int64_t last = shape.back();
    const int64_t rows = last == 0 ? 0 : NumElements(shape) / last;
    const size_t row_bytes = static_cast<size_t>(last) * element_;
#pragma omp parallel for schedule(static)
    for (int64_t row = 0; row < rows; ++row) {
      char* dst = out + static_cast<size_t>(row) * row_bytes;
      int64_t from = 0;
      bool filled = false;
      for (int64_t rest = row, d = static_cast<int64_t>(rank) - 2; d >= 0; --d) {
        const auto du = static_cast<size_t>(d);
        const int64_t c = rest % shape[du];
        rest /= shape[du];
        const int64_t i = maps_.source[du][static_cast<size_t>(c)];
        if (i < 0) {
          filled = true;
          break;
        }
        from += i * in_strides_[du];
      }
      if (filled) {
        Fill(dst, last);
        continue;
      }
      for (const Span& span : spans_) {
        char* to = dst + static_cast<size_t>(span.out) * element_;
        if (span.in < 0) {
          Fill(to, span.length);
        } else {
          std::memcpy(to, in + static_cast<size_t>(from + span.in) * element_,
                      static_cast<size_t>(span.length) * element_);
        }
      }
    }
    return Status();
  }

 private:
  // Along the last dim: [out, out + length) reads [in, in + length), or is fill (in < 0).
  struct Span {
    int64_t out, in, length;
  };

  IndexCopyKernel() = default;

  void BuildSpans() {
    const std::vector<int64_t>& last = maps_.source.back();
    for (size_t c = 0; c < last.size(); ++c) {
      const auto at = static_cast<int64_t>(c);
      if (!spans_.empty()) {
        Span& span = spans_.back();
        const bool extends = span.in < 0 ? last[c] < 0 : last[c] == span.in + span.length;
        if (extends && span.out + span.length == at) {
          ++span.length;
          continue;
        }
      }
      spans_.push_back({at, last[c] < 0 ? -1 : last[c], 1});
    }
  }

  void Fill(char* to, int64_t count) const {
    for (int64_t i = 0; i < count; ++i) std::memcpy(to + static_cast<size_t>(i) * element_, fill_.data(), element_);
  }

  size_t element_ = 0;
  std::vector<int64_t> in_strides_;
  IndexMaps maps_;
  std::vector<char> fill_;
  std::vector<Span> spans_;
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreatePad(const KernelInit& init) { return IndexCopyKernel::Create(init, true); }
Result<std::unique_ptr<IKernel>> CreateSlice(const KernelInit& init) { return IndexCopyKernel::Create(init, false); }

}  // namespace chipfit::cpu
