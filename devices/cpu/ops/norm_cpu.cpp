// Normalisations (fp32) on oneDNN: BatchNormalization (inference statistics), LayerNormalization
// (layer_normalization over the flattened normalised dims) and InstanceNormalization (a batch
// normalisation that computes its statistics, over N·C channels of one image).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/reference/ref_util.h"
#include "devices/cpu/onednn_util.h"
#include "devices/cpu/ops/cpu_ops.h"

namespace chipfit::cpu {
namespace {

using dnnl::memory;
using dnnl::normalization_flags;

int64_t Product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= shape[i];
  return p;
}

memory::desc Vector(int64_t n) { return {{n}, memory::data_type::f32, memory::format_tag::a}; }

// Unsupported unless input i holds `count` f32 values (one per channel …).
Status RequireCount(const KernelInit& init, size_t i, int64_t count, const char* what) {
  RETURN_IF_ERROR(RequireStaticF32(init, {i}));
  const Shape& shape = init.inputs[i]->shape;
  if (NumElements(shape) != count) {
    return Unsupported(std::string(what) + " has shape " + ShapeToString(shape) + ", not " + std::to_string(count) +
                       " values");
  }
  return Status();
}

// ---- BatchNormalization -----------------------------------------------------------------------

class BatchNormKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init) {
    const Node& node = init.node;
    RETURN_IF_ERROR(RequireStaticF32(init, {0}));
    if (node.GetInt("training_mode", 0) != 0) return Unsupported("training mode");
    if (init.opset < 9 && node.GetInt("spatial", 1) == 0) return Unsupported("per-activation statistics (spatial=0)");
    const Shape& x = init.inputs[0]->shape;
    if (x.size() < 2) return Unsupported("input of rank " + std::to_string(x.size()));
    const int64_t c = x[1];
    for (size_t i = 1; i <= 4; ++i) RETURN_IF_ERROR(RequireCount(init, i, c, "a statistic or affine input"));

    auto kernel = std::unique_ptr<BatchNormKernel>(new BatchNormKernel());
    // Channels-last activations stay so (jit kernel); otherwise N × C × (spatial) × 1, which
    // oneDNN runs with its ncsp kernel for every rank (rank 3 as such only has a reference one).
    memory::desc md;
    if (x.size() == 4 && init.inputs[0]->layout == Layout::kChannelsLast && !LayoutsAgree(x)) {
      kernel->layout_ = Layout::kChannelsLast;
      md = Describe(x, memory::data_type::f32, Layout::kChannelsLast);
    } else {
      md = memory::desc({x[0], c, Product(x, 2, x.size()), 1}, memory::data_type::f32, memory::format_tag::abcd);
    }
    const float epsilon = node.GetFloat("epsilon", 1e-5f);
    dnnl::batch_normalization_forward::primitive_desc pd;
    RETURN_IF_ERROR(Guard(node, "batch normalization", [&] {
      dnnl::batch_normalization_forward::desc desc(
          dnnl::prop_kind::forward_inference, md, epsilon,
          normalization_flags::use_global_stats | normalization_flags::use_scale | normalization_flags::use_shift);
      pd = dnnl::batch_normalization_forward::primitive_desc(desc, Engine());
    }));
    if (IsReferenceImpl(pd.impl_info_str())) return Unsupported("only oneDNN's reference batch normalization");
    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] = memory(md, Engine(), DNNL_MEMORY_NONE);
    args[DNNL_ARG_DST] = memory(md, Engine(), DNNL_MEMORY_NONE);
    for (int arg : {DNNL_ARG_SCALE, DNNL_ARG_SHIFT, DNNL_ARG_MEAN, DNNL_ARG_VARIANCE}) {
      args[arg] = memory(Vector(c), Engine(), DNNL_MEMORY_NONE);
    }
    kernel->call_ = PrimitiveCall(dnnl::batch_normalization_forward(pd), std::move(args));
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    call_.SetHandle(DNNL_ARG_SRC, ctx.input(0)->raw_data());
    call_.SetHandle(DNNL_ARG_SCALE, ctx.input(1)->raw_data());
    call_.SetHandle(DNNL_ARG_SHIFT, ctx.input(2)->raw_data());
    call_.SetHandle(DNNL_ARG_MEAN, ctx.input(3)->raw_data());
    call_.SetHandle(DNNL_ARG_VARIANCE, ctx.input(4)->raw_data());
    call_.SetHandle(DNNL_ARG_DST, ctx.output(0)->raw_data());
    call_.Execute();
    return Status();
  }
  Layout InputLayout(size_t i) const override { return i == 0 ? layout_ : Layout::kPlain; }
  Layout OutputLayout(size_t) const override { return layout_; }

 private:
  BatchNormKernel() = default;

 public:
  std::string Isa() const override { return call_.Impl(); }

 private:
  PrimitiveCall call_;
  Layout layout_ = Layout::kPlain;
};

// ---- LayerNormalization ---------------------------------------------------------------------------

// How Scale or B reaches oneDNN, which wants one value per normalised element: as is (the input
// already has that shape), or expanded once at Init from a constant that broadcasts inside the
// normalised dims.
struct AffineInput {
  bool present = false;
  bool per_element = false;
  std::vector<float> expanded;
};

Result<AffineInput> ReadAffine(const KernelInit& init, size_t i, const Shape& x, size_t axis) {
  AffineInput affine;
  const ValueInfo* in = i < init.inputs.size() ? init.inputs[i] : nullptr;
  if (in == nullptr) return affine;
  RETURN_IF_ERROR(RequireStaticF32(init, {i}));
  affine.present = true;
  const char* name = i == 1 ? "Scale" : "B";
  if (in->shape.size() > x.size()) return Unsupported(std::string(name) + " has a higher rank than X");
  Shape padded(x.size() - in->shape.size(), 1);
  padded.insert(padded.end(), in->shape.begin(), in->shape.end());
  for (size_t d = 0; d < axis; ++d) {
    if (padded[d] != 1) {
      return Unsupported(std::string(name) + " " + ShapeToString(in->shape) + " varies along un-normalised axis " +
                         std::to_string(d));
    }
  }
  if (std::equal(padded.begin() + static_cast<std::ptrdiff_t>(axis), padded.end(),
                 x.begin() + static_cast<std::ptrdiff_t>(axis))) {
    affine.per_element = true;
    return affine;
  }
  if (in->value == nullptr) {
    return Unsupported(std::string(name) + " " + ShapeToString(in->shape) + " broadcasts and is computed at run time");
  }
  const Shape inner(x.begin() + static_cast<std::ptrdiff_t>(axis), x.end());
  const Shape own(padded.begin() + static_cast<std::ptrdiff_t>(axis), padded.end());
  const BroadcastIndexer index(own, inner);
  affine.expanded.resize(static_cast<size_t>(NumElements(inner)));
  for (size_t k = 0; k < affine.expanded.size(); ++k) {
    affine.expanded[k] = in->value->data<float>()[index(static_cast<int64_t>(k))];
  }
  return affine;
}

class LayerNormKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init) {
    const Node& node = init.node;
    RETURN_IF_ERROR(RequireStaticF32(init, {0, 1}));
    const Shape& x = init.inputs[0]->shape;
    if (x.empty()) return Unsupported("scalar input");
    Result<int64_t> axis_or = NormalizeAxis(node.GetInt("axis", -1), static_cast<int64_t>(x.size()), node);
    if (!axis_or.ok()) return Unsupported(axis_or.status().message());
    const auto axis = static_cast<size_t>(*axis_or);
    if (node.GetInt("stash_type", 1) != 1) return Unsupported("statistics in a type other than f32 (stash_type)");

    auto kernel = std::unique_ptr<LayerNormKernel>(new LayerNormKernel());
    ASSIGN_OR_RETURN(kernel->scale_, ReadAffine(init, 1, x, axis));
    ASSIGN_OR_RETURN(kernel->shift_, ReadAffine(init, 2, x, axis));
    // LayerNorm over the last k dims is LayerNorm over the last dim of the rows × cols view.
    const int64_t rows = Product(x, 0, axis), cols = Product(x, axis, x.size());
    kernel->stats_ = node.outputs.size() > 1 && std::any_of(node.outputs.begin() + 1, node.outputs.end(),
                                                            [](const std::string& name) { return !name.empty(); });
    kernel->epsilon_ = node.GetFloat("epsilon", 1e-5f);
    const memory::desc md({rows, cols}, memory::data_type::f32, memory::format_tag::ab);
    auto flags = normalization_flags::use_scale;
    if (kernel->shift_.present) flags = flags | normalization_flags::use_shift;
    dnnl::layer_normalization_forward::primitive_desc pd;
    RETURN_IF_ERROR(Guard(node, "layer normalization", [&] {
      // Training computes the mean and variance outputs; inference is the same arithmetic.
      const auto prop = kernel->stats_ ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
      dnnl::layer_normalization_forward::desc desc(prop, md, kernel->epsilon_, flags);
      pd = dnnl::layer_normalization_forward::primitive_desc(desc, Engine());
    }));
    if (IsReferenceImpl(pd.impl_info_str())) return Unsupported("only oneDNN's reference layer normalization");
    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] = memory(md, Engine(), DNNL_MEMORY_NONE);
    args[DNNL_ARG_DST] = memory(md, Engine(), DNNL_MEMORY_NONE);
    args[DNNL_ARG_SCALE] = memory(Vector(cols), Engine(), DNNL_MEMORY_NONE);
    if (kernel->shift_.present) args[DNNL_ARG_SHIFT] = memory(Vector(cols), Engine(), DNNL_MEMORY_NONE);
    if (kernel->stats_) {
      kernel->mean_.resize(static_cast<size_t>(rows));
      kernel->variance_.resize(static_cast<size_t>(rows));
      args[DNNL_ARG_MEAN] = memory(Vector(rows), Engine(), kernel->mean_.data());
      args[DNNL_ARG_VARIANCE] = memory(Vector(rows), Engine(), kernel->variance_.data());
    }
    kernel->call_ = PrimitiveCall(dnnl::layer_normalization_forward(pd), std::move(args));
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    call_.SetHandle(DNNL_ARG_SRC, ctx.input(0)->raw_data());
    call_.SetHandle(DNNL_ARG_DST, ctx.output(0)->raw_data());
    call_.SetHandle(DNNL_ARG_SCALE, scale_.per_element ? ctx.input(1)->raw_data() : scale_.expanded.data());
    if (shift_.present) {
      call_.SetHandle(DNNL_ARG_SHIFT, shift_.per_element ? ctx.input(2)->raw_data() : shift_.expanded.data());
    }
    call_.Execute();
    if (!stats_) return Status();
    if (Tensor* mean = ctx.output(1)) std::memcpy(mean->raw_data(), mean_.data(), mean_.size() * sizeof(float));
    if (Tensor* inv_std = ctx.output(2)) {
      float* out = inv_std->data<float>();
      for (size_t i = 0; i < variance_.size(); ++i) out[i] = 1.0f / std::sqrt(variance_[i] + epsilon_);
    }
    return Status();
  }

 private:
  LayerNormKernel() = default;

 public:
  std::string Isa() const override { return call_.Impl(); }

 private:
  PrimitiveCall call_;
  AffineInput scale_, shift_;
  bool stats_ = false;  // the Mean / InvStdDev outputs are wanted
  float epsilon_ = 1e-5f;
  std::vector<float> mean_, variance_;
};

// ---- InstanceNormalization ------------------------------------------------------------------------

// Instance normalisation of N images × C channels = batch normalisation, computing its statistics,
// of one image with N·C channels; scale and bias repeat per image.
class InstanceNormKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init) {
    const Node& node = init.node;
    RETURN_IF_ERROR(RequireStaticF32(init, {0}));
    const Shape& x = init.inputs[0]->shape;
    if (x.size() < 3) return Unsupported("input of rank " + std::to_string(x.size()));
    const int64_t n = x[0], c = x[1];
    for (size_t i = 1; i <= 2; ++i) RETURN_IF_ERROR(RequireCount(init, i, c, "scale or bias"));

    auto kernel = std::unique_ptr<InstanceNormKernel>(new InstanceNormKernel());
    memory::desc md;
    if (n == 1 && x.size() == 4 && init.inputs[0]->layout == Layout::kChannelsLast && !LayoutsAgree(x)) {
      kernel->layout_ = Layout::kChannelsLast;
      md = Describe(x, memory::data_type::f32, Layout::kChannelsLast);
    } else {
      md = memory::desc({1, n * c, Product(x, 2, x.size()), 1}, memory::data_type::f32, memory::format_tag::abcd);
    }
    dnnl::batch_normalization_forward::primitive_desc pd;
    RETURN_IF_ERROR(Guard(node, "instance normalization", [&] {
      dnnl::batch_normalization_forward::desc desc(dnnl::prop_kind::forward_training, md,
                                                   node.GetFloat("epsilon", 1e-5f),
                                                   normalization_flags::use_scale | normalization_flags::use_shift);
      pd = dnnl::batch_normalization_forward::primitive_desc(desc, Engine());
    }));
    if (IsReferenceImpl(pd.impl_info_str())) return Unsupported("only oneDNN's reference batch normalization");
    const auto channels = static_cast<size_t>(n * c);
    kernel->scale_.resize(channels);
    kernel->shift_.resize(channels);
    kernel->mean_.resize(channels);
    kernel->variance_.resize(channels);
    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] = memory(md, Engine(), DNNL_MEMORY_NONE);
    args[DNNL_ARG_DST] = memory(md, Engine(), DNNL_MEMORY_NONE);
    args[DNNL_ARG_SCALE] = memory(Vector(n * c), Engine(), kernel->scale_.data());
    args[DNNL_ARG_SHIFT] = memory(Vector(n * c), Engine(), kernel->shift_.data());
    args[DNNL_ARG_MEAN] = memory(Vector(n * c), Engine(), kernel->mean_.data());
    args[DNNL_ARG_VARIANCE] = memory(Vector(n * c), Engine(), kernel->variance_.data());
    if (pd.workspace_desc().get_size() != 0) {
      args[DNNL_ARG_WORKSPACE] = memory(pd.workspace_desc(), Engine());
    }
    kernel->channels_ = c;
    kernel->call_ = PrimitiveCall(dnnl::batch_normalization_forward(pd), std::move(args));
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    // Scale and bias may be computed at run time: tiling N·C values per run costs nothing next to
    // the statistics.
    const float* scale = ctx.input(1)->data<float>();
    const float* bias = ctx.input(2)->data<float>();
    for (size_t k = 0; k < scale_.size(); ++k) {
      scale_[k] = scale[k % static_cast<size_t>(channels_)];
      shift_[k] = bias[k % static_cast<size_t>(channels_)];
    }
    call_.SetHandle(DNNL_ARG_SRC, ctx.input(0)->raw_data());
    call_.SetHandle(DNNL_ARG_DST, ctx.output(0)->raw_data());
    call_.Execute();
    return Status();
  }
  Layout InputLayout(size_t i) const override { return i == 0 ? layout_ : Layout::kPlain; }
  Layout OutputLayout(size_t) const override { return layout_; }

 private:
  InstanceNormKernel() = default;

 public:
  std::string Isa() const override { return call_.Impl(); }

 private:
  PrimitiveCall call_;
  Layout layout_ = Layout::kPlain;
  int64_t channels_ = 1;
  std::vector<float> scale_, shift_, mean_, variance_;
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateBatchNormF32(const KernelInit& init) { return BatchNormKernel::Create(init); }
Result<std::unique_ptr<IKernel>> CreateLayerNormF32(const KernelInit& init) { return LayerNormKernel::Create(init); }
Result<std::unique_ptr<IKernel>> CreateInstanceNormF32(const KernelInit& init) {
  return InstanceNormKernel::Create(init);
}

}  // namespace chipfit::cpu
