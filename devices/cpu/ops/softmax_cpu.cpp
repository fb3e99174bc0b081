// Softmax and LogSoftmax (fp32) on oneDNN softmax_v2 over the innermost dim of a 2-D view:
// rows of the flattened input before opset 13, the one axis from 13 on (channels of an nhwc
// tensor are innermost too). Along an axis with dims after it in plain order (a segmentation
// model's class axis of NCHW, when its producer writes plain), oneDNN 2.6 has only its reference
// kernel; an own loop runs it instead, vectorised across the contiguous dims after the axis.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/reference/ref_util.h"
#include "devices/cpu/onednn_util.h"
#include "devices/cpu/ops/cpu_ops.h"

namespace chipfit::cpu {
namespace {

using dnnl::memory;

int64_t Product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= shape[i];
  return p;
}

class SoftmaxKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init) {
    RETURN_IF_ERROR(RequireStaticF32(init, {0}));
    const Node& node = init.node;
    const Shape& x = init.inputs[0]->shape;
    const bool legacy = init.opset < 13;
    const auto rank = static_cast<int64_t>(x.size());
    Result<int64_t> axis_or = NormalizeAxis(node.GetInt("axis", legacy ? 1 : -1), std::max<int64_t>(rank, 1), node);
    if (!axis_or.ok()) return Unsupported(axis_or.status().message());
    const auto axis = static_cast<size_t>(*axis_or);
    const size_t end = x.size();

    // rows × cols with the softmax along cols, in the order `layout`.
    int64_t rows = 0, cols = 0;
    Layout layout = Layout::kPlain;
    if (legacy) {
      rows = Product(x, 0, axis);
      cols = Product(x, axis, end);
    } else if (Product(x, axis + 1, end) == 1) {
      rows = Product(x, 0, axis);
      cols = x.empty() ? 1 : x[axis];
    } else if (x.size() == 4 && axis == 1) {
      layout = Layout::kChannelsLast;  // N·H·W rows of C contiguous channels
      rows = x[0] * x[2] * x[3];
      cols = x[1];
    } else {
      return Unsupported("softmax along axis " + std::to_string(axis) + " of " + ShapeToString(x) +
                         ": oneDNN has only its reference kernel for an axis that is not innermost");
    }
    auto kernel = std::unique_ptr<SoftmaxKernel>(new SoftmaxKernel());
    kernel->layout_ = layout;
    const memory::desc md({rows, cols}, memory::data_type::f32, memory::format_tag::ab);
    const auto alg = node.op_type == "LogSoftmax" ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate;
    dnnl::softmax_v2_forward::primitive_desc pd;
    RETURN_IF_ERROR(Guard(node, "softmax", [&] {
      dnnl::softmax_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, md, md, 1);
      pd = dnnl::softmax_v2_forward::primitive_desc(desc, Engine());
    }));
    if (IsReferenceImpl(pd.impl_info_str())) return Unsupported("only oneDNN's reference softmax implementation");
    kernel->call_ = PrimitiveCall::SrcDst(dnnl::softmax_v2_forward(pd), md, md);
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    call_.Run(ctx.input(0)->raw_data(), ctx.output(0)->raw_data());
    return Status();
  }
  Layout InputLayout(size_t) const override { return layout_; }
  Layout OutputLayout(size_t) const override { return layout_; }

 private:
  SoftmaxKernel() = default;

 public:
  std::string Isa() const override { return call_.Impl(); }

 private:
  PrimitiveCall call_;
  Layout layout_ = Layout::kPlain;
};

// outer × n × inner with the softmax along n: each of the outer blocks is n rows of `inner`
// contiguous values, reduced row by row into per-column maxima and sums.
class StridedSoftmaxKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init) {
    if (init.opset < 13) return Unsupported("before opset 13 the rows are the flattened dims (oneDNN runs them)");
    const ValueInfo* x = init.inputs.empty() ? nullptr : init.inputs[0];
    if (x == nullptr || x->dtype != DType::kF32) return Unsupported("input is not f32");
    if (x->shape.empty()) return Unsupported("a scalar input");
    Result<int64_t> axis =
        NormalizeAxis(init.node.GetInt("axis", -1), static_cast<int64_t>(x->shape.size()), init.node);
    if (!axis.ok()) return Unsupported(axis.status().message());
    return std::unique_ptr<IKernel>(
        new StridedSoftmaxKernel(static_cast<size_t>(*axis), init.node.op_type == "LogSoftmax"));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Shape& shape = x.shape();
    const int64_t outer = Product(shape, 0, axis_), n = shape[axis_];
    const int64_t inner = Product(shape, axis_ + 1, shape.size());
    const float* in = x.data<float>();
    float* out = ctx.output(0)->data<float>();
    if (outer * n * inner == 0) return Status();
    // Blocks of columns: enough work per thread, few enough columns to keep the sums in cache.
    constexpr int64_t kColumns = 1024;
    const int64_t column_blocks = (inner + kColumns - 1) / kColumns;
    const bool log = log_;
#pragma omp parallel for schedule(static) if (outer * n * inner > 16384)
    for (int64_t job = 0; job < outer * column_blocks; ++job) {
      const int64_t o = job / column_blocks, c0 = (job % column_blocks) * kColumns;
      const int64_t width = std::min(kColumns, inner - c0);
      const float* block = in + o * n * inner + c0;
      float* dst = out + o * n * inner + c0;
      std::vector<float> max(static_cast<size_t>(width), -INFINITY), sum(static_cast<size_t>(width), 0.0f);
      for (int64_t k = 0; k < n; ++k) {
        const float* row = block + k * inner;
        for (int64_t i = 0; i < width; ++i) max[i] = std::max(max[i], row[i]);
      }
      for (int64_t k = 0; k < n; ++k) {
        const float* row = block + k * inner;
        float* y = dst + k * inner;
        for (int64_t i = 0; i < width; ++i) {
          y[i] = std::exp(row[i] - max[i]);
          sum[i] += y[i];
        }
      }
      for (int64_t i = 0; i < width; ++i) sum[i] = log ? std::log(sum[i]) : 1.0f / sum[i];
      for (int64_t k = 0; k < n; ++k) {
        const float* row = block + k * inner;
        float* y = dst + k * inner;
        if (log) {
          for (int64_t i = 0; i < width; ++i) y[i] = row[i] - max[i] - sum[i];
        } else {
          for (int64_t i = 0; i < width; ++i) y[i] *= sum[i];
        }
      }
    }
    return Status();
  }

 private:
  StridedSoftmaxKernel(size_t axis, bool log) : axis_(axis), log_(log) {}
  size_t axis_;
  bool log_;
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateSoftmaxF32(const KernelInit& init) { return SoftmaxKernel::Create(init); }
Result<std::unique_ptr<IKernel>> CreateStridedSoftmaxF32(const KernelInit& init) {
  return StridedSoftmaxKernel::Create(init);
}

}  // namespace chipfit::cpu
