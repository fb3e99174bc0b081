// MatMul (numpy batch broadcasting), chipfit's FusedMatMul (bias and activation as post-ops) and Gemm
// on oneDNN matmul / inner_product: fp32; bf16 (inputs and
// weights rounded to bf16, f32 accumulation and output); int8 with a calibrated activation scale and
// per-column weight scales when B is a constant.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/reference/conv_util.h"
#include "devices/cpu/onednn_util.h"
#include "devices/cpu/ops/cpu_ops.h"

namespace chipfit::cpu {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

// One product Y = alpha · A·B + beta · C as oneDNN sees it: A [..., M, K] and B [..., K, N] with
// equal ranks (1-D operands and missing batch dims become 1s), strides expressing transA/transB.
struct GemmSpec {
  memory::dims a_dims, a_strides, b_dims, b_strides, d_dims;
  memory::dims d_strides{};  // empty: row-major (FusedMatMul's perm_y writes through others)
  // Non-empty: the product is written row-major, then reordered into the layout of these N-D dims and
  // strides (a perm_y on a product whose batch dims were folded into M).
  memory::dims out_dims{}, out_strides{};
  int64_t m = 1, k = 1, n = 1;
  const Tensor* b_value = nullptr;  // constant B, else nullptr
  float alpha = 1.0f, beta = 1.0f;
  const ValueInfo* c = nullptr;  // Gemm's C, FusedMatMul's bias (absent: nullptr)
  bool trans_a = false;
  dnnl::algorithm activation = dnnl::algorithm::undef;  // FusedMatMul's, as an eltwise post-op
};

memory::dims RowMajorStrides(const memory::dims& dims) {
  memory::dims strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// An operand as the product reads it: Transpose(value, perm) is the value's own bytes with its dims
// and row-major strides permuted (no copy).
void PermuteOperand(const Shape& shape, const std::vector<int64_t>& perm, Shape& dims, memory::dims& strides) {
  const memory::dims plain = RowMajorStrides(memory::dims(shape.begin(), shape.end()));
  dims = shape;
  strides = plain;
  for (size_t i = 0; i < perm.size(); ++i) {
    dims[i] = shape[static_cast<size_t>(perm[i])];
    strides[i] = plain[static_cast<size_t>(perm[i])];
  }
}

void CanonicalStridesOfOnes(const memory::dims& dims, memory::dims& strides) {
  for (size_t i = dims.size(); i-- > 0;) {
    if (dims[i] == 1) strides[i] = i + 1 < dims.size() ? strides[i + 1] * dims[i + 1] : 1;
  }
}

Result<GemmSpec> ReadMatMulSpec(const KernelInit& init) {
  const Node& node = init.node;
  const bool fused = node.op_type == "FusedMatMul";
  const Shape& a_in = init.inputs[0]->shape;
  const Shape& b_in = init.inputs[1]->shape;
  if (a_in.empty() || b_in.empty()) return Unsupported("MatMul of a scalar");
  std::vector<int64_t> perm_a, perm_b;
  if (fused) {
    ASSIGN_OR_RETURN(perm_a, ReadMatMulPerm(node, "perm_a", a_in.size()));
    ASSIGN_OR_RETURN(perm_b, ReadMatMulPerm(node, "perm_b", b_in.size()));
  }
  Shape a, b;
  memory::dims a_in_strides, b_in_strides;
  PermuteOperand(a_in, perm_a, a, a_in_strides);
  PermuteOperand(b_in, perm_b, b, b_in_strides);
  GemmSpec s;
  // A 1-D A is a row [1, K], a 1-D B a column [K, 1]; missing leading batch dims are 1s.
  const Shape a2 = a.size() == 1 ? Shape{1, a[0]} : a;
  const Shape b2 = b.size() == 1 ? Shape{b[0], 1} : b;
  if (a.size() == 1) a_in_strides = {a[0], 1};
  if (b.size() == 1) b_in_strides = {1, 1};
  const size_t rank = std::max(a2.size(), b2.size());
  memory::dims ad(rank, 1), bd(rank, 1);
  // Added leading dims of 1 take the whole operand's size as their stride (as row-major would).
  memory::dims as(rank, NumElements(a2)), bs(rank, NumElements(b2));
  std::copy(a2.begin(), a2.end(), ad.begin() + static_cast<std::ptrdiff_t>(rank - a2.size()));
  std::copy(b2.begin(), b2.end(), bd.begin() + static_cast<std::ptrdiff_t>(rank - b2.size()));
  std::copy(a_in_strides.begin(), a_in_strides.end(), as.begin() + static_cast<std::ptrdiff_t>(rank - a2.size()));
  std::copy(b_in_strides.begin(), b_in_strides.end(), bs.begin() + static_cast<std::ptrdiff_t>(rank - b2.size()));
  s.m = ad[rank - 2];
  s.k = ad[rank - 1];
  s.n = bd[rank - 1];
  if (bd[rank - 2] != s.k) {
    return InvalidArgument(node.Describe() + ": inner dims differ: A " + ShapeToString(a) + " and B " +
                           ShapeToString(b));
  }
  s.d_dims.assign(rank, 1);
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (ad[i] != bd[i] && ad[i] != 1 && bd[i] != 1) {
      return InvalidArgument(node.Describe() + ": batch dims of " + ShapeToString(a) + " and " + ShapeToString(b) +
                             " do not broadcast");
    }
    s.d_dims[i] = std::max(ad[i], bd[i]);
  }
  s.d_dims[rank - 2] = s.m;
  s.d_dims[rank - 1] = s.n;
  s.a_dims = ad;
  s.b_dims = bd;
  s.a_strides = as;
  s.b_strides = bs;
  s.b_value = init.inputs[1]->value;
  if (fused) s.alpha = node.GetFloat("alpha", 1.0f);
  // The result's perm_y: D is written where Transpose(D, perm_y), row-major, keeps each element. Only
  // the output's own dims (no 1-D operand's dropped dim) can be permuted.
  std::vector<int64_t> perm_y;
  if (fused) {
    const size_t out_rank = rank - (a.size() == 1 ? 1 : 0) - (b.size() == 1 ? 1 : 0);
    ASSIGN_OR_RETURN(perm_y, ReadMatMulPerm(node, "perm_y", out_rank));
    if (!perm_y.empty() && out_rank != rank) return Unsupported("perm_y with a 1-D operand");
  }
  if (!perm_y.empty()) {
    memory::dims y_dims(rank);
    for (size_t i = 0; i < rank; ++i) y_dims[i] = s.d_dims[static_cast<size_t>(perm_y[i])];
    const memory::dims y_strides = RowMajorStrides(y_dims);
    s.d_strides.assign(rank, 0);
    for (size_t i = 0; i < rank; ++i) s.d_strides[static_cast<size_t>(perm_y[i])] = y_strides[i];
  }
  // A dim of size 1 is never stepped along: its stride is the one row-major order would give it, so that
  // oneDNN sees the layout as the plain one it is (brgemm instead of the generic gemm).
  CanonicalStridesOfOnes(s.a_dims, s.a_strides);
  CanonicalStridesOfOnes(s.b_dims, s.b_strides);
  if (!s.d_strides.empty()) CanonicalStridesOfOnes(s.d_dims, s.d_strides);
  // A permutation that moves only dims of 1 leaves the bytes in row-major order.
  if (s.d_strides == RowMajorStrides(s.d_dims)) s.d_strides.clear();
  const bool a_row_major = s.a_strides == RowMajorStrides(s.a_dims);
  // A B without batch dims (2-D, or all of them 1) is one weight matrix for every row of A: the
  // leading dims of A fold into M, so [L, 1, E] x [E, 3E] is one [L, E] x [E, 3E] product instead
  // of L products with M = 1 (oneDNN's batched kernels are far slower there), and the weights are
  // packed once for a 2-D product. A row-major A [..., M, K] is [prod(...) * M, K] as it stands
  // (a permuted A or result is not).
  const bool b_unbatched = std::all_of(bd.begin(), bd.end() - 2, [](memory::dim d) { return d == 1; });
  if (rank > 2 && b_unbatched && a_row_major) {
    // A permuted result is then written row-major and reordered: one big product and a copy beat
    // M-row products (ConvNeXt's channels-last Linear back to NCHW: 56 products of 56 rows).
    if (!s.d_strides.empty()) {
      s.out_dims = s.d_dims;
      s.out_strides = s.d_strides;
      s.d_strides.clear();
    }
    const int64_t rows = NumElements(Shape(s.d_dims.begin(), s.d_dims.end() - 1));
    s.m = rows;
    s.a_dims = {rows, s.k};
    s.b_dims = {s.k, s.n};
    s.d_dims = {rows, s.n};
    s.a_strides = RowMajorStrides(s.a_dims);
    s.b_strides = {s.b_strides[rank - 2], s.b_strides[rank - 1]};
  }
  return s;
}

Result<GemmSpec> ReadGemmSpec(const KernelInit& init) {
  const Node& node = init.node;
  const Shape& a = init.inputs[0]->shape;
  const Shape& b = init.inputs[1]->shape;
  if (a.size() != 2 || b.size() != 2) return InvalidArgument(node.Describe() + ": A and B must be 2-D");
  GemmSpec s;
  s.trans_a = node.GetInt("transA", 0) != 0;
  const bool trans_b = node.GetInt("transB", 0) != 0;
  s.m = s.trans_a ? a[1] : a[0];
  s.k = s.trans_a ? a[0] : a[1];
  s.n = trans_b ? b[0] : b[1];
  if ((trans_b ? b[1] : b[0]) != s.k) {
    return InvalidArgument(node.Describe() + ": inner dims differ: A " + ShapeToString(a) + " and B " +
                           ShapeToString(b));
  }
  // A transposed input is the plain [M, K] matrix read with swapped strides (no copy).
  s.a_dims = {s.m, s.k};
  s.a_strides = s.trans_a ? memory::dims{1, s.m} : memory::dims{s.k, 1};
  s.b_dims = {s.k, s.n};
  s.b_strides = trans_b ? memory::dims{1, s.k} : memory::dims{s.n, 1};
  s.d_dims = {s.m, s.n};
  s.alpha = node.GetFloat("alpha", 1.0f);
  s.beta = node.GetFloat("beta", 1.0f);
  s.b_value = init.inputs[1]->value;
  s.c = init.inputs.size() > 2 ? init.inputs[2] : nullptr;
  if (s.c != nullptr && s.beta == 0.0f) s.c = nullptr;
  if (s.alpha == 0.0f) return Unsupported("alpha 0 (the product is discarded; nothing for oneDNN to compute)");
  return s;
}

// C as a per-column bias: a constant of N values ([N] or [1, N]) or a single value.
bool CIsColumnBias(const GemmSpec& s) {
  if (s.c == nullptr || s.c->value == nullptr || s.c->dtype != DType::kF32) return false;
  const Shape& c = s.c->shape;
  const int64_t count = NumElements(c);
  if (count == 1) return true;
  return count == s.n && c.back() == s.n;
}

// Symmetric scale per output column n of constant B, over all of its K rows (and batches).
std::vector<float> ColumnScales(const GemmSpec& s) {
  const float w_max = HasVnni() ? 127.0f : 63.0f;  // 7-bit without VNNI: see HasVnni()
  std::vector<float> amax(static_cast<size_t>(s.n), 0.0f);
  const float* w = s.b_value->data<float>();
  const bool column_fastest = s.b_strides.back() == 1;  // else a transposed 2-D [N, K]
  for (int64_t i = 0; i < s.b_value->numel(); ++i) {
    const auto col = static_cast<size_t>(column_fastest ? i % s.n : i / s.k);
    amax[col] = std::max(amax[col], std::fabs(w[i]));
  }
  for (float& a : amax) a = a > 0.0f ? a / w_max : 1.0f;
  return amax;
}

enum class GemmMode { kF32, kBf16, kInt8 };

class GemmKernel final : public IKernel {
 public:
  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init, const GemmSpec& s, GemmMode mode,
                                                 bool inner_product) {
    const Node& node = init.node;
    auto kernel = std::unique_ptr<GemmKernel>(new GemmKernel());
    const bool int8 = mode == GemmMode::kInt8;
    const bool bf16 = mode == GemmMode::kBf16;
    const bool b_const = s.b_value != nullptr;
    if (int8 && !b_const) return Unsupported("int8 " + node.op_type + " needs a constant B (weights)");
    if (int8 && !node.GetInts("perm_b").empty()) return Unsupported("int8 with a permuted B");
    const size_t rank = s.d_dims.size();

    ActivationQuant aq;
    std::vector<float> w_scales;
    if (int8) {
      if (init.quant == nullptr) return Unsupported("no calibration ranges");
      auto it = init.quant->find(node.inputs[0]);
      if (it == init.quant->end()) return Unsupported("no calibrated range for input '" + node.inputs[0] + "'");
      aq = ChooseActivationQuant(it->second);
      w_scales = ColumnScales(s);
    }
    // Per-column output scales: alpha (and for int8 the two quantisation steps).
    std::vector<float> out_scales(int8 ? static_cast<size_t>(s.n) : 1, s.alpha);
    for (size_t j = 0; j < w_scales.size(); ++j) out_scales[j] = s.alpha * aq.scale * w_scales[j];
    const int scale_mask = int8 ? (inner_product ? 1 << 1 : 1 << (rank - 1)) : 0;

    // C: a per-column constant becomes oneDNN's bias. oneDNN 2.x computes dst = scale · (acc + bias),
    // so the bias goes in unscaled units. Any other C is broadcast into dst before each run and
    // added by a sum post-op (dst = scale · acc + beta · dst).
    const bool bias = CIsColumnBias(s);
    kernel->prefill_ = s.c != nullptr && !bias;
    if (kernel->prefill_) {
      RETURN_IF_ERROR(RequireStaticF32(init, {2}));
      kernel->c_shape_ = s.c->shape;
    }
    dnnl::primitive_attr attr;
    if (scale_mask != 0 || s.alpha != 1.0f) attr.set_output_scales(scale_mask, out_scales);
    if (kernel->prefill_ || s.activation != dnnl::algorithm::undef) {
      dnnl::post_ops ops;
      if (kernel->prefill_) ops.append_sum(s.beta);
      if (s.activation != dnnl::algorithm::undef) ops.append_eltwise(1.0f, s.activation, 0.0f, 0.0f);
      attr.set_post_ops(ops);
    }

    const dt src_type = int8 ? aq.type : (bf16 ? dt::bf16 : dt::f32);
    const dt w_type = int8 ? dt::s8 : (bf16 ? dt::bf16 : dt::f32);
    // A converted A (quantised or rounded) is written plain [.., M, K]; an f32 A is read in place,
    // transposed or not.
    const memory::desc a_f32_md(s.a_dims, dt::f32, s.a_strides);
    const bool convert_a = int8 || bf16;
    const memory::desc src_md = convert_a ? memory::desc(s.a_dims, src_type, RowMajorStrides(s.a_dims)) : a_f32_md;
    memory::desc d_md(s.d_dims, dt::f32, s.d_strides.empty() ? RowMajorStrides(s.d_dims) : s.d_strides);
    memory::desc b_user_md(s.b_dims, dt::f32, s.b_strides);
    // A run-time bf16 B is rounded each run into a plain bf16 copy.
    memory::desc w_md = b_const ? memory::desc(s.b_dims, w_type, tag::any)
                        : bf16  ? memory::desc(s.b_dims, dt::bf16, RowMajorStrides(s.b_dims))
                                : b_user_md;
    memory::desc bias_md;
    if (bias) {
      // The bias has the product's rank: 1s, then N.
      memory::dims bias_dims(s.d_dims.size(), 1);
      bias_dims.back() = s.n;
      bias_md = inner_product ? memory::desc({s.n}, dt::f32, tag::a)
                              : memory::desc(bias_dims, dt::f32, RowMajorStrides(bias_dims));
    }
    if (inner_product) {
      // inner_product weights are [N, K]: B [K, N] read as its transpose.
      b_user_md = memory::desc({s.n, s.k}, dt::f32, {s.b_strides[1], s.b_strides[0]});
      w_md = memory::desc({s.n, s.k}, w_type, tag::any);
    }

    dnnl::primitive primitive;
    memory::desc weights_desc;
    memory::desc pd_src_desc;
    std::string impl;
    auto create = [&] {
      return Guard(node, inner_product ? "inner product" : "matmul", [&] {
        if (inner_product) {
          dnnl::inner_product_forward::desc desc(dnnl::prop_kind::forward_inference, src_md, w_md, bias_md, d_md);
          dnnl::inner_product_forward::primitive_desc pd(desc, attr, Engine());
          impl = pd.impl_info_str();
          weights_desc = pd.weights_desc();
          pd_src_desc = pd.src_desc();
          primitive = dnnl::inner_product_forward(pd);
        } else {
          dnnl::matmul::desc desc(src_md, w_md, bias_md, d_md);
          dnnl::matmul::primitive_desc pd(desc, attr, Engine());
          impl = pd.impl_info_str();
          weights_desc = pd.weights_desc();
          pd_src_desc = pd.src_desc();
          primitive = dnnl::matmul(pd);
        }
      });
    };
    Status created = create();
    memory::dims out_dims = s.out_dims;
    memory::dims out_strides = s.out_strides;
    if (!s.d_strides.empty() && (!created.ok() || IsReferenceImpl(impl))) {
      // oneDNN has only its reference loop for writing this order (a permuted result whose columns are
      // not contiguous): the product is written row-major and reordered into place, as a Transpose
      // kernel would.
      out_dims = s.d_dims;
      out_strides = s.d_strides;
      d_md = memory::desc(s.d_dims, dt::f32, RowMajorStrides(s.d_dims));
      created = create();
    }
    RETURN_IF_ERROR(created);
    if (!out_strides.empty()) {
      const memory::desc row_major(out_dims, dt::f32, RowMajorStrides(out_dims));
      const memory::desc permuted(out_dims, dt::f32, out_strides);
      RETURN_IF_ERROR(Guard(node, "result reorder", [&] {
        kernel->permute_out_ =
            PrimitiveCall::SrcDst(dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), row_major, Engine(), permuted)),
                                  row_major, permuted, DNNL_ARG_FROM, DNNL_ARG_TO);
      }));
      kernel->product_.resize(static_cast<size_t>(NumElements(Shape(out_dims.begin(), out_dims.end()))));
    }
    if (IsReferenceImpl(impl)) return Unsupported("only oneDNN's reference implementation (" + impl + ")");

    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] = memory(pd_src_desc, Engine(), DNNL_MEMORY_NONE);
    args[DNNL_ARG_DST] = memory(d_md, Engine(), DNNL_MEMORY_NONE);
    if (b_const) {
      // Weights reordered (int8: quantised per column; bf16: rounded) once into the layout oneDNN
      // chose. int8 goes through a plain s8 copy: for s8 sources oneDNN's layout carries a
      // compensation term that its reorder computes from s8 weights only.
      RETURN_IF_ERROR(Guard(node, "weight reorder", [&] {
        memory user(b_user_md, Engine(), const_cast<void*>(s.b_value->raw_data()));
        kernel->weights_ = memory(weights_desc, Engine());
        if (int8) {
          std::vector<float> inv;
          for (float w : w_scales) inv.push_back(1.0f / w);
          dnnl::primitive_attr quantize_attr;
          quantize_attr.set_output_scales(inner_product ? 1 << 0 : 1 << (rank - 1), inv);
          const memory::desc plain_s8(b_user_md.dims(), dt::s8, RowMajorStrides(b_user_md.dims()));
          memory plain(plain_s8, Engine());
          dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), b_user_md, Engine(), plain_s8, quantize_attr))
              .execute(Stream(), user, plain);
          dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), plain_s8, Engine(), weights_desc))
              .execute(Stream(), plain, kernel->weights_);
        } else {
          dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), b_user_md, Engine(), weights_desc))
              .execute(Stream(), user, kernel->weights_);
        }
        Stream().wait();
      }));
      args[DNNL_ARG_WEIGHTS] = kernel->weights_;
    } else {
      RETURN_IF_ERROR(RequireStaticF32(init, {1}));
      args[DNNL_ARG_WEIGHTS] = memory(weights_desc, Engine(), DNNL_MEMORY_NONE);
      kernel->b_runtime_ = true;
      if (bf16) {
        kernel->b_converted_.resize(static_cast<size_t>(weights_desc.get_size()) + 64);
        RETURN_IF_ERROR(Guard(node, "B rounding to bf16", [&] {
          dnnl::reorder::primitive_desc rpd(Engine(), b_user_md, Engine(), weights_desc);
          kernel->convert_b_ =
              PrimitiveCall::SrcDst(dnnl::reorder(rpd), b_user_md, weights_desc, DNNL_ARG_FROM, DNNL_ARG_TO);
        }));
      }
    }
    if (bias) {
      kernel->bias_ = memory(bias_md, Engine());
      auto* b = static_cast<float*>(kernel->bias_.get_data_handle());
      const Tensor& c = *s.c->value;
      for (int64_t j = 0; j < s.n; ++j) {
        const float v = s.beta * c.data<float>()[c.numel() == 1 ? 0 : j];
        b[j] = v / out_scales[int8 ? static_cast<size_t>(j) : 0];
      }
      args[DNNL_ARG_BIAS] = kernel->bias_;
    }
    kernel->main_ = PrimitiveCall(primitive, std::move(args));

    if (convert_a) {
      dnnl::primitive_attr q_attr;
      if (int8) q_attr.set_output_scales(0, {1.0f / aq.scale});
      kernel->quantized_.resize(
          static_cast<size_t>(NumElements(Shape(s.a_dims.begin(), s.a_dims.end()))) * (bf16 ? 2 : 1) + 64);
      RETURN_IF_ERROR(Guard(node, int8 ? "input quantisation" : "input rounding to bf16", [&] {
        dnnl::reorder::primitive_desc rpd(Engine(), a_f32_md, Engine(), pd_src_desc, q_attr);
        std::unordered_map<int, memory> q_args;
        q_args[DNNL_ARG_FROM] = memory(a_f32_md, Engine(), DNNL_MEMORY_NONE);
        q_args[DNNL_ARG_TO] = memory(pd_src_desc, Engine(), kernel->quantized_.data());
        kernel->quantize_ = PrimitiveCall(dnnl::reorder(rpd), std::move(q_args));
      }));
      kernel->convert_a_ = true;
    }
    kernel->m_ = s.m;
    kernel->n_ = s.n;
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    if (convert_a_) {
      quantize_.SetHandle(DNNL_ARG_FROM, ctx.input(0)->raw_data());
      quantize_.Execute();
      main_.SetHandle(DNNL_ARG_SRC, quantized_.data());
    } else {
      main_.SetHandle(DNNL_ARG_SRC, ctx.input(0)->raw_data());
    }
    if (!b_converted_.empty()) {
      convert_b_.Run(ctx.input(1)->raw_data(), b_converted_.data());
      main_.SetHandle(DNNL_ARG_WEIGHTS, b_converted_.data());
    } else if (b_runtime_) {
      main_.SetHandle(DNNL_ARG_WEIGHTS, ctx.input(1)->raw_data());
    }
    Tensor& y = *ctx.output(0);
    if (prefill_) BroadcastC(*ctx.input(2), y.data<float>());
    main_.SetHandle(DNNL_ARG_DST, product_.empty() ? y.raw_data() : product_.data());
    main_.Execute();
    if (!product_.empty()) permute_out_.Run(product_.data(), y.raw_data());
    return Status();
  }

 private:
  GemmKernel() = default;

  // y[m, n] = C broadcast to [M, N] (C has rank <= 2, each dim 1 or the full size).
  void BroadcastC(const Tensor& c, float* y) const {
    const int64_t cn = c_shape_.empty() ? 1 : c_shape_.back();
    const int64_t cm = c_shape_.size() < 2 ? 1 : c_shape_[0];
    const float* cv = c.data<float>();
    for (int64_t i = 0; i < m_; ++i) {
      const float* row = cv + (cm == 1 ? 0 : i) * cn;
      float* out = y + i * n_;
      if (cn == 1) {
        std::fill_n(out, n_, row[0]);
      } else {
        std::memcpy(out, row, static_cast<size_t>(n_) * sizeof(float));
      }
    }
  }

 public:
  std::string Isa() const override { return main_.Impl(); }

 private:
  PrimitiveCall main_;
  PrimitiveCall quantize_;
  PrimitiveCall convert_b_;
  std::vector<uint8_t> b_converted_;  // a run-time B rounded to bf16
  memory weights_;
  memory bias_;
  std::vector<uint8_t> quantized_;
  PrimitiveCall permute_out_;   // the row-major product reordered into FusedMatMul's perm_y order
  std::vector<float> product_;  // that row-major product (empty: written in place)
  Shape c_shape_;
  int64_t m_ = 0, n_ = 0;
  bool convert_a_ = false;
  bool b_runtime_ = false;
  bool prefill_ = false;
};

// FusedMatMul's bias (a constant [N]) and activation, on top of its MatMul.
Status ReadFusedMatMul(const KernelInit& init, GemmSpec& s) {
  const Node& node = init.node;
  if (init.inputs.size() > 2 && init.inputs[2] != nullptr) {
    s.c = init.inputs[2];
    s.beta = 1.0f;
    if (!CIsColumnBias(s) || NumElements(s.c->shape) != s.n) return Unsupported("bias is not a constant float32 [N]");
  }
  const std::string activation = node.GetString("activation", "");
  if (activation == "Relu") {
    s.activation = dnnl::algorithm::eltwise_relu;
  } else if (activation == "Gelu") {
    s.activation = dnnl::algorithm::eltwise_gelu_erf;
  } else if (activation == "GeluTanh") {
    s.activation = dnnl::algorithm::eltwise_gelu_tanh;
  } else if (!activation.empty()) {
    return Unsupported("activation '" + activation + "'");
  }
  return Status();
}

Result<std::unique_ptr<IKernel>> CreateMatMul(const KernelInit& init, GemmMode mode) {
  RETURN_IF_ERROR(RequireStaticF32(init, {0, 1}));
  ASSIGN_OR_RETURN(GemmSpec spec, ReadMatMulSpec(init));
  if (init.node.op_type == "FusedMatMul") RETURN_IF_ERROR(ReadFusedMatMul(init, spec));
  return GemmKernel::Create(init, spec, mode, false);
}

Result<std::unique_ptr<IKernel>> CreateGemm(const KernelInit& init, GemmMode mode) {
  RETURN_IF_ERROR(RequireStaticF32(init, {0, 1}));
  ASSIGN_OR_RETURN(GemmSpec spec, ReadGemmSpec(init));
  // inner_product is oneDNN's fully-connected layer: A [M, K] times constant weights plus a bias.
  const bool fully_connected =
      !spec.trans_a && spec.b_value != nullptr && spec.alpha == 1.0f &&
      (spec.c == nullptr || (spec.beta == 1.0f && CIsColumnBias(spec) && NumElements(spec.c->shape) == spec.n));
  if (fully_connected) {
    auto kernel = GemmKernel::Create(init, spec, mode, true);
    if (kernel.ok() || kernel.status().code() != StatusCode::kUnsupported) return kernel;
  }
  return GemmKernel::Create(init, spec, mode, false);
}

}  // namespace

Result<std::unique_ptr<IKernel>> CreateMatMulF32(const KernelInit& init) { return CreateMatMul(init, GemmMode::kF32); }
Result<std::unique_ptr<IKernel>> CreateMatMulBf16(const KernelInit& init) {
  return CreateMatMul(init, GemmMode::kBf16);
}
Result<std::unique_ptr<IKernel>> CreateMatMulInt8(const KernelInit& init) {
  return CreateMatMul(init, GemmMode::kInt8);
}
Result<std::unique_ptr<IKernel>> CreateGemmF32(const KernelInit& init) { return CreateGemm(init, GemmMode::kF32); }
Result<std::unique_ptr<IKernel>> CreateGemmBf16(const KernelInit& init) { return CreateGemm(init, GemmMode::kBf16); }
Result<std::unique_ptr<IKernel>> CreateGemmInt8(const KernelInit& init) { return CreateGemm(init, GemmMode::kInt8); }

}  // namespace chipfit::cpu
