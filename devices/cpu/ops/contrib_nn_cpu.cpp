// ONNX Runtime's contrib nn operators on the CPU (kernel_groups.h), fp32, giving the results of their
// reference kernels (core/reference/contrib_nn.cpp), whose shape functions have checked the inputs.
//
// The Gelu family runs on oneDNN's eltwise (after the bias), BiasAdd as a loop split in chunks across threads; the
// layer norms work one row per iteration of a parallel loop, summing in double so the row statistics keep their
// precision on long rows; FusedMatMul packs each operand into row-major [M, K] / [K, N] panels once per
// run (which applies transA/B and transBatchA/B) and multiplies rows in parallel; ORT's FusedConv
// (com.microsoft) is the oneDNN convolution that serves chipfit's own FusedConv, whose attributes it
// shares (activation, activation_params, the added input Z).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/reference/conv_util.h"
#include "core/reference/ops.h"
#include "devices/cpu/onednn_util.h"
#include "devices/cpu/ops/cpu_ops.h"
#include "devices/cpu/ops/kernel_groups.h"
#include "devices/cpu/ops/parallel_chunks.h"

namespace chipfit::cpu {
namespace {

using KernelResult = Result<std::unique_ptr<IKernel>>;

constexpr float kSqrtHalf = 0.70710678118654752440f;
constexpr float kSqrtTwoOverPi = 0.79788456080286535588f;
constexpr float kBertEpsilon = 1e-12f;  // ORT's default for the skip and embed layer norms

const ValueInfo* InputInfo(const KernelInit& init, size_t i) {
  return i < init.inputs.size() ? init.inputs[i] : nullptr;
}

// Unsupported unless each listed input that is present is f32 with a static shape.
Status RequireOptionalStaticF32(const KernelInit& init, std::initializer_list<size_t> inputs) {
  for (size_t i : inputs) {
    if (InputInfo(init, i) != nullptr) RETURN_IF_ERROR(RequireStaticF32(init, {i}));
  }
  return Status();
}

const float* OptionalData(const KernelContext& ctx, size_t i) {
  return ctx.input(i) != nullptr ? ctx.input(i)->data<float>() : nullptr;
}

// ---- Gelu, FastGelu, BiasGelu, QuickGelu, BiasAdd ------------------------------------------------

enum class Eltwise { kGelu, kFastGelu, kQuickGelu, kBiasAdd };

// The activation on oneDNN's jit eltwise (gelu_erf, gelu_tanh: ORT's FastGelu formula, swish with alpha:
// QuickGelu), in place after the bias is added; the own scalar loop where oneDNN has only its reference
// implementation. Profiled on a 4-layer BERT-base encoder (1x128, EPYC Zen 4, 2 threads): FastGelu as a
// scalar std::tanh loop took 4.35 ms per layer (11 ns per value), 26 % of the model.
std::optional<dnnl::algorithm> OnednnActivation(Eltwise kind) {
  switch (kind) {
    case Eltwise::kGelu: return dnnl::algorithm::eltwise_gelu_erf;
    case Eltwise::kFastGelu: return dnnl::algorithm::eltwise_gelu_tanh;
    case Eltwise::kQuickGelu: return dnnl::algorithm::eltwise_swish;
    case Eltwise::kBiasAdd: return std::nullopt;
  }
  return std::nullopt;
}

class EltwiseKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init, Eltwise kind) {
    RETURN_IF_ERROR(RequireStaticF32(init, {0}));
    RETURN_IF_ERROR(RequireOptionalStaticF32(init, {1, 2}));
    auto k = std::unique_ptr<EltwiseKernel>(new EltwiseKernel());
    k->kind_ = kind;
    k->alpha_ = init.node.GetFloat("alpha", 1.702f);
    const int64_t n = NumElements(init.inputs[0]->shape);
    if (const auto algorithm = OnednnActivation(kind); algorithm && n >= kOnednnFrom) {
      const dnnl::memory::desc md({n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
      dnnl::eltwise_forward::primitive_desc pd;
      RETURN_IF_ERROR(Guard(init.node, "eltwise", [&] {
        const float alpha = kind == Eltwise::kQuickGelu ? k->alpha_ : 0.0f;
        dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, *algorithm, md, alpha, 0.0f);
        pd = dnnl::eltwise_forward::primitive_desc(desc, Engine());
      }));
      if (!IsReferenceImpl(pd.impl_info_str())) {
        k->activation_ = dnnl::eltwise_forward(pd);
        k->md_ = md;
        k->isa_ = pd.impl_info_str();
      }
    }
    return std::unique_ptr<IKernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    const float* x = ctx.input(0)->data<float>();
    const float* bias = OptionalData(ctx, 1);
    const float* skip = OptionalData(ctx, 2);
    const int64_t n = ctx.output(0)->numel();
    const int64_t bias_n = ctx.input(1) != nullptr ? ctx.input(1)->numel() : 1;
    float* y = ctx.output(0)->data<float>();
    if (activation_) {
      const float* src = x;
      if (bias != nullptr) {
        // Row by row, so the inner loop has no modulo and vectorises.
        const int64_t rows = n / bias_n;
#pragma omp parallel for if (n > (int64_t{1} << 15))
        for (int64_t r = 0; r < rows; ++r) {
          const float* xr = x + r * bias_n;
          float* yr = y + r * bias_n;
          for (int64_t j = 0; j < bias_n; ++j) yr[j] = xr[j] + bias[j];
        }
        src = y;
      }
      dnnl::memory in(md_, Engine(), const_cast<float*>(src));  // oneDNN only reads its source
      dnnl::memory out(md_, Engine(), y);
      activation_.execute(Stream(), {{DNNL_ARG_SRC, in}, {DNNL_ARG_DST, out}});
      Stream().wait();
      return Status();
    }
    const Eltwise kind = kind_;
    const float alpha = alpha_;
    ForChunks(n, n * 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const float v = x[i] + (bias != nullptr ? bias[i % bias_n] : 0.0f);
        switch (kind) {
          case Eltwise::kGelu: y[i] = 0.5f * v * (1.0f + std::erf(v * kSqrtHalf)); break;
          case Eltwise::kFastGelu:
            y[i] = 0.5f * v * (1.0f + std::tanh(kSqrtTwoOverPi * (v + 0.044715f * v * v * v)));
            break;
          case Eltwise::kQuickGelu: y[i] = v / (1.0f + std::exp(-alpha * v)); break;
          case Eltwise::kBiasAdd: y[i] = v + skip[i]; break;
        }
      }
    });
    return Status();
  }
  std::string Isa() const override { return isa_; }

 private:
  // Below this many values a oneDNN call (~1 µs of OpenMP fork/join) costs more than the own loop.
  static constexpr int64_t kOnednnFrom = 4096;
  EltwiseKernel() = default;
  Eltwise kind_ = Eltwise::kGelu;
  float alpha_ = 1.702f;
  dnnl::eltwise_forward activation_;
  dnnl::memory::desc md_;
  std::string isa_;
};

KernelResult CreateGelu(const KernelInit& init) { return EltwiseKernel::Create(init, Eltwise::kGelu); }
KernelResult CreateFastGelu(const KernelInit& init) { return EltwiseKernel::Create(init, Eltwise::kFastGelu); }
KernelResult CreateQuickGelu(const KernelInit& init) { return EltwiseKernel::Create(init, Eltwise::kQuickGelu); }
KernelResult CreateBiasAdd(const KernelInit& init) { return EltwiseKernel::Create(init, Eltwise::kBiasAdd); }

// ---- Layer norms over rows ------------------------------------------------------------------------

// Normalises `hidden` values of row (in place): (v - mean) · inv_std, or v · inv_std for RMS; the
// statistics in double.
void NormalizeRow(float* row, int64_t hidden, float epsilon, bool rms, float* mean_out, float* inv_out) {
  double mean = 0, var = 0;
  if (!rms) {
    for (int64_t h = 0; h < hidden; ++h) mean += row[h];
    mean /= static_cast<double>(hidden);
  }
  for (int64_t h = 0; h < hidden; ++h) var += (row[h] - mean) * (row[h] - mean);
  const double inv = 1.0 / std::sqrt(var / static_cast<double>(hidden) + epsilon);
  for (int64_t h = 0; h < hidden; ++h) row[h] = static_cast<float>((row[h] - mean) * inv);
  if (mean_out != nullptr) *mean_out = static_cast<float>(mean);
  if (inv_out != nullptr) *inv_out = static_cast<float>(inv);
}

float* OptionalOutput(KernelContext& ctx, size_t i) {
  return ctx.output(i) != nullptr ? ctx.output(i)->data<float>() : nullptr;
}

class SkipLayerNormKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init, bool simplified) {
    RETURN_IF_ERROR(RequireStaticF32(init, {0, 1, 2}));
    RETURN_IF_ERROR(RequireOptionalStaticF32(init, {3, 4}));
    auto k = std::unique_ptr<SkipLayerNormKernel>(new SkipLayerNormKernel());
    k->simplified_ = simplified;
    k->epsilon_ = init.node.GetFloat("epsilon", kBertEpsilon);
    return std::unique_ptr<IKernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const int64_t hidden = x.shape().back(), rows = x.numel() / hidden, skip_n = ctx.input(1)->numel();
    const float* xs = x.data<float>();
    const float* skip = ctx.input(1)->data<float>();
    const float* gamma = ctx.input(2)->data<float>();
    const float* beta = simplified_ ? nullptr : OptionalData(ctx, 3);
    const float* bias = OptionalData(ctx, simplified_ ? 3 : 4);
    float* y = ctx.output(0)->data<float>();
    float* mean = OptionalOutput(ctx, 1);
    float* inv = OptionalOutput(ctx, 2);
    float* sum = OptionalOutput(ctx, 3);
    const bool rms = simplified_;
    const float epsilon = epsilon_;
#pragma omp parallel for if (rows * hidden > 4096)
    for (int64_t r = 0; r < rows; ++r) {
      float* row = y + r * hidden;
      const float* sk = skip + (r * hidden) % skip_n;
      for (int64_t h = 0; h < hidden; ++h) row[h] = xs[r * hidden + h] + sk[h] + (bias != nullptr ? bias[h] : 0.0f);
      if (sum != nullptr) std::copy(row, row + hidden, sum + r * hidden);
      NormalizeRow(row, hidden, epsilon, rms, mean != nullptr ? mean + r : nullptr, inv != nullptr ? inv + r : nullptr);
      for (int64_t h = 0; h < hidden; ++h) row[h] = row[h] * gamma[h] + (beta != nullptr ? beta[h] : 0.0f);
    }
    return Status();
  }

 private:
  SkipLayerNormKernel() = default;
  bool simplified_ = false;
  float epsilon_ = kBertEpsilon;
};

KernelResult CreateSkipLayerNorm(const KernelInit& init) { return SkipLayerNormKernel::Create(init, false); }
KernelResult CreateSkipSimplifiedLayerNorm(const KernelInit& init) { return SkipLayerNormKernel::Create(init, true); }

// SimplifiedLayerNormalization: RMS over the dims from `axis`; scale with one value per normalised
// element (a scale that broadcasts inside them is left to the reference).
class SimplifiedLayerNormKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    RETURN_IF_ERROR(RequireStaticF32(init, {0, 1}));
    const Shape& x = init.inputs[0]->shape;
    ASSIGN_OR_RETURN(const int64_t axis,
                     NormalizeAxis(init.node.GetInt("axis", -1), static_cast<int64_t>(x.size()), init.node));
    auto k = std::unique_ptr<SimplifiedLayerNormKernel>(new SimplifiedLayerNormKernel());
    k->hidden_ = Product(x, static_cast<size_t>(axis));
    if (NumElements(init.inputs[1]->shape) != k->hidden_) {
      return Unsupported("scale " + ShapeToString(init.inputs[1]->shape) +
                         " broadcasts inside the normalized dims (the reference kernel handles that)");
    }
    if (init.node.GetInt("stash_type", 1) != 1) return Unsupported("stash_type other than float");
    k->epsilon_ = init.node.GetFloat("epsilon", 1e-5f);
    return std::unique_ptr<IKernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    const int64_t hidden = hidden_, rows = ctx.input(0)->numel() / hidden;
    const float* xs = ctx.input(0)->data<float>();
    const float* scale = ctx.input(1)->data<float>();
    float* y = ctx.output(0)->data<float>();
    float* inv = OptionalOutput(ctx, 1);
    const float epsilon = epsilon_;
#pragma omp parallel for if (rows * hidden > 4096)
    for (int64_t r = 0; r < rows; ++r) {
      float* row = y + r * hidden;
      std::copy(xs + r * hidden, xs + (r + 1) * hidden, row);
      NormalizeRow(row, hidden, epsilon, true, nullptr, inv != nullptr ? inv + r : nullptr);
      for (int64_t h = 0; h < hidden; ++h) row[h] *= scale[h];
    }
    return Status();
  }

 private:
  SimplifiedLayerNormKernel() = default;
  int64_t hidden_ = 1;
  float epsilon_ = 1e-5f;
};

// ---- FusedMatMul: alpha · op(A) · op(B) -------------------------------------------------------------

// Where element (row, col) of operand X's [rows, cols] matrix `batch` lives, X stored row-major with
// dims `d` and read through transX (swap the last two) and transBatchX (first dim behind the batch).
struct OperandView {
  int64_t row_stride = 0, col_stride = 0;
  std::vector<int64_t> batch_strides;  // one per logical batch dim
};

// A 1-D operand is a row [1, K] as A and a column [K, 1] as B (`column`).
OperandView ViewOf(const Shape& d, bool trans, bool trans_batch, bool column) {
  OperandView v;
  const std::vector<int64_t> strides = Strides(d);
  const size_t r = d.size();
  if (r == 1) return column ? OperandView{1, 0, {}} : OperandView{0, 1, {}};
  std::vector<int64_t> order(r);  // logical dim i reads stored dim order[i]
  for (size_t i = 0; i < r; ++i) order[i] = static_cast<int64_t>(i);
  if (trans_batch && r >= 3) {
    for (size_t i = 0; i + 2 < r; ++i) order[i] = static_cast<int64_t>(i + 1);
    order[r - 2] = 0;
  }
  if (trans) std::swap(order[r - 2], order[r - 1]);
  v.row_stride = strides[static_cast<size_t>(order[r - 2])];
  v.col_stride = strides[static_cast<size_t>(order[r - 1])];
  for (size_t i = 0; i + 2 < r; ++i) v.batch_strides.push_back(strides[static_cast<size_t>(order[i])]);
  return v;
}

Shape LogicalShape(const Shape& d, bool trans, bool trans_batch) {
  Shape s = d;
  const size_t r = d.size();
  if (r < 2) return s;
  if (trans_batch && r >= 3) {
    for (size_t i = 0; i + 2 < r; ++i) s[i] = d[i + 1];
    s[r - 2] = d[0];
  }
  if (trans) std::swap(s[r - 2], s[r - 1]);
  return s;
}

class FusedMatMulKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    RETURN_IF_ERROR(RequireStaticF32(init, {0, 1}));
    const Node& node = init.node;
    auto k = std::unique_ptr<FusedMatMulKernel>(new FusedMatMulKernel());
    const Shape& a = init.inputs[0]->shape;
    const Shape& b = init.inputs[1]->shape;
    const bool batch_a = node.GetInt("transBatchA", 0) != 0, batch_b = node.GetInt("transBatchB", 0) != 0;
    const bool ta = node.GetInt("transA", 0) != 0, tb = node.GetInt("transB", 0) != 0;
    ASSIGN_OR_RETURN(k->g_, ReadMatMul(node, LogicalShape(a, ta, batch_a), LogicalShape(b, tb, batch_b)));
    k->a_ = ViewOf(a, ta, batch_a, false);
    k->b_ = ViewOf(b, tb, batch_b, true);
    k->alpha_ = node.GetFloat("alpha", 1.0f);
    return std::unique_ptr<IKernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    const MatMulGeometry& g = g_;
    const int64_t batches = Product(g.batch), m = g.m, k = g.k, n = g.n;
    const float* a = ctx.input(0)->data<float>();
    const float* b = ctx.input(1)->data<float>();
    float* y = ctx.output(0)->data<float>();
    const float alpha = alpha_;
    std::vector<int64_t> a_offset(static_cast<size_t>(batches));
    for (int64_t i = 0; i < batches; ++i)
      a_offset[static_cast<size_t>(i)] = BatchOffset(i, g.a_batch, a_.batch_strides);
    // B's panel [K, N] row-major per batch, packed once so the inner loop walks it contiguously.
    const int64_t b_batches = Product(g.b_batch);
    std::vector<float> bp(static_cast<size_t>(std::max<int64_t>(b_batches, 1) * k * n));
    for (int64_t i = 0; i < std::max<int64_t>(b_batches, 1); ++i) {
      const float* src = b + BatchOffset(i, g.b_batch, b_.batch_strides, true);
      float* dst = &bp[static_cast<size_t>(i * k * n)];
      for (int64_t kk = 0; kk < k; ++kk) {
        for (int64_t j = 0; j < n; ++j) dst[kk * n + j] = src[kk * b_.row_stride + j * b_.col_stride];
      }
    }
    const BroadcastIndexer b_index(g.b_batch, g.batch);
#pragma omp parallel for if (batches * m * n * k > 32768)
    for (int64_t r = 0; r < batches * m; ++r) {
      const int64_t batch = r / m, row = r % m;
      const float* ar = a + a_offset[static_cast<size_t>(batch)] + row * a_.row_stride;
      const float* bpanel = &bp[static_cast<size_t>(b_index(batch) * k * n)];
      float* yr = y + r * n;
      std::fill(yr, yr + n, 0.0f);
      for (int64_t kk = 0; kk < k; ++kk) {
        const float av = ar[kk * a_.col_stride];
        const float* brow = bpanel + kk * n;
        for (int64_t j = 0; j < n; ++j) yr[j] += av * brow[j];
      }
      for (int64_t j = 0; j < n; ++j) yr[j] *= alpha;
    }
    return Status();
  }

 private:
  FusedMatMulKernel() = default;

  // Offset of the operand's matrix for batch `i` of the broadcast batch (or, `own`, of its own batch).
  int64_t BatchOffset(int64_t i, const Shape& operand_batch, const std::vector<int64_t>& strides,
                      bool own = false) const {
    const Shape& outer = own ? operand_batch : g_.batch;
    int64_t offset = 0;
    for (size_t d = outer.size(); d-- > 0;) {
      const int64_t idx = i % outer[d];
      i /= outer[d];
      const size_t od = d + operand_batch.size() - outer.size();
      if (d + operand_batch.size() < outer.size()) continue;  // a dim the operand lacks
      if (operand_batch[od] != 1) offset += idx * strides[od];
    }
    return offset;
  }

  MatMulGeometry g_;
  OperandView a_, b_;
  float alpha_ = 1.0f;
};

// ---- EmbedLayerNormalization ------------------------------------------------------------------------

class EmbedLayerNormKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    RETURN_IF_ERROR(RequireStaticF32(init, {2, 3, 5, 6}));
    RETURN_IF_ERROR(RequireOptionalStaticF32(init, {4}));
    auto k = std::unique_ptr<EmbedLayerNormKernel>(new EmbedLayerNormKernel());
    k->epsilon_ = init.node.GetFloat("epsilon", kBertEpsilon);
    return std::unique_ptr<IKernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& ids_t = *ctx.input(0);
    const int64_t batch = ids_t.dim(0), seq = ids_t.dim(1), hidden = ctx.input(2)->dim(1);
    const int32_t* ids = ids_t.data<int32_t>();
    const int32_t* seg = ctx.input(1) != nullptr ? ctx.input(1)->data<int32_t>() : nullptr;
    const int32_t* mask = ctx.input(7) != nullptr ? ctx.input(7)->data<int32_t>() : nullptr;
    const Tensor* pos_t = ctx.input(8);
    const int32_t* pos = pos_t != nullptr ? pos_t->data<int32_t>() : nullptr;
    const bool pos_broadcast = pos_t != nullptr && pos_t->dim(0) == 1;
    if (pos_t != nullptr && (pos_t->dim(1) != seq || (pos_t->dim(0) != 1 && pos_t->dim(0) != batch))) {
      return ctx.Error("position_ids " + ShapeToString(pos_t->shape()) + " does not fit input_ids " +
                       ShapeToString(ids_t.shape()));
    }
    const float* word = ctx.input(2)->data<float>();
    const float* position = ctx.input(3)->data<float>();
    const float* segment = OptionalData(ctx, 4);
    const int64_t rows[3] = {ctx.input(2)->dim(0), ctx.input(3)->dim(0),
                             ctx.input(4) != nullptr ? ctx.input(4)->dim(0) : 0};
    const float* gamma = ctx.input(5)->data<float>();
    const float* beta = ctx.input(6)->data<float>();
    float* y = ctx.output(0)->data<float>();
    float* sum = OptionalOutput(ctx, 2);
    int64_t bad = -1;  // a token whose id is out of range
#pragma omp parallel for if (batch * seq * hidden > 4096)
    for (int64_t t = 0; t < batch * seq; ++t) {
      const int64_t w = ids[t], s = t % seq;
      const int64_t p = pos == nullptr ? s : pos[pos_broadcast ? s : t];
      const int64_t sg = seg != nullptr ? seg[t] : 0;
      if (w < 0 || w >= rows[0] || p < 0 || p >= rows[1] || (seg != nullptr && (sg < 0 || sg >= rows[2]))) {
#pragma omp critical
        bad = t;
        continue;
      }
      float* row = y + t * hidden;
      for (int64_t h = 0; h < hidden; ++h) {
        row[h] = word[w * hidden + h] + position[p * hidden + h] + (seg != nullptr ? segment[sg * hidden + h] : 0.0f);
      }
      if (sum != nullptr) std::copy(row, row + hidden, sum + t * hidden);
      NormalizeRow(row, hidden, epsilon_, false, nullptr, nullptr);
      for (int64_t h = 0; h < hidden; ++h) row[h] = row[h] * gamma[h] + beta[h];
    }
    if (bad >= 0) {
      return ctx.Error("token " + std::to_string(bad) + " has an input_ids, position or segment_ids value out of " +
                       "range of its embedding table");
    }
    if (ctx.output(1) != nullptr) {
      int32_t* mask_index = ctx.output(1)->data<int32_t>();
      for (int64_t b = 0; b < batch; ++b) {
        mask_index[b] = mask == nullptr ? 0 : static_cast<int32_t>(std::count(mask + b * seq, mask + (b + 1) * seq, 1));
      }
    }
    return Status();
  }

 private:
  EmbedLayerNormKernel() = default;
  float epsilon_ = kBertEpsilon;
};

}  // namespace

void AddContribNnKernels(KernelTable& t) {
  constexpr auto kCpu = DeviceKind::kCpu;
  constexpr auto kFp32 = Precision::kFp32;
  const char* ms = kMicrosoftDomain;
  t.Add("Gelu", ms, kCpu, kFp32, {"cpu:gelu", CreateGelu});
  t.Add("BiasGelu", ms, kCpu, kFp32, {"cpu:gelu", CreateGelu});
  t.Add("FastGelu", ms, kCpu, kFp32, {"cpu:fast-gelu", CreateFastGelu});
  t.Add("QuickGelu", ms, kCpu, kFp32, {"cpu:quick-gelu", CreateQuickGelu});
  t.Add("BiasAdd", ms, kCpu, kFp32, {"cpu:bias-add", CreateBiasAdd});
  t.Add("SkipLayerNormalization", ms, kCpu, kFp32, {"cpu:skip-layernorm", CreateSkipLayerNorm});
  t.Add("SkipSimplifiedLayerNormalization", ms, kCpu, kFp32, {"cpu:skip-rmsnorm", CreateSkipSimplifiedLayerNorm});
  t.Add("SimplifiedLayerNormalization", "", kCpu, kFp32, {"cpu:rmsnorm", SimplifiedLayerNormKernel::Create});
  t.Add("FusedMatMul", ms, kCpu, kFp32, {"cpu:fused-matmul", FusedMatMulKernel::Create});
  t.Add("EmbedLayerNormalization", ms, kCpu, kFp32, {"cpu:embed-layernorm", EmbedLayerNormKernel::Create});
  // The reference's shape function has refused what ORT's FusedConv does not take, so chipfit's own
  // FusedConv kernels (the same attributes) serve it.
  t.Add("FusedConv", ms, kCpu, kFp32, {"onednn:conv", CreateConvF32});
}

}  // namespace chipfit::cpu
