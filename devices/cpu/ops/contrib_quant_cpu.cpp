// ONNX Runtime's contrib quant operators on the CPU (kernel_groups.h), giving the outputs of their reference
// kernels (core/reference/contrib_quant.cpp) with the same float operations in the same order.
//
// MatMulNBits dequantizes its constant B once, at Init, into a float [K, N] matrix; each row of A then runs
// as row · W with the N outputs updated together (no reductions, so the loop vectorizes). The integer
// products (MatMulIntegerToFloat, DynamicQuantizeMatMul, QGemm) keep B minus its zero points as int32 and
// accumulate exactly in int32, as ONNX Runtime does, then scale (and requantize) per column. The QOperator
// ops take constant per-tensor scales and zero points and precompute at Init what depends only on them:
// lookup tables (Sigmoid, LeakyRelu, Concat's requantized inputs), QLinearSoftmax's exp table, Add's and
// Mul's ratios, AveragePool's windows. Whatever a kernel does not take (parameters or weights known only at
// run time, other dtypes) is refused with the reason, and the reference runs it.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/reference/contrib_quant.h"
#include "core/reference/conv_util.h"
#include "core/reference/ops.h"
#include "core/reference/ref_util.h"
#include "devices/cpu/ops/kernel_groups.h"

namespace chipfit::cpu {
namespace {

using KernelResult = Result<std::unique_ptr<IKernel>>;

const ValueInfo* InputInfo(const KernelInit& init, size_t i) {
  return i < init.inputs.size() && init.node.HasInput(i) ? init.inputs[i] : nullptr;
}

bool StaticShape(const ValueInfo* v) {
  return v != nullptr && std::all_of(v->shape.begin(), v->shape.end(), [](int64_t d) { return d >= 0; });
}

// A constant input (nullptr when absent); `what` names it in the refusal when it is computed at run time.
Result<const Tensor*> Constant(const KernelInit& init, size_t i, const char* what) {
  const ValueInfo* v = InputInfo(init, i);
  if (v == nullptr) return static_cast<const Tensor*>(nullptr);
  if (v->value == nullptr) return Unsupported(std::string(what) + " computed at run time");
  return v->value;
}

// Round half to even, then saturate to Q (the reference's SaturateRound).
template <typename Q>
Q SaturateRound(float v) {
  const float r = std::nearbyint(v);
  if (std::isnan(r)) return Q{0};
  return static_cast<Q>(std::clamp(r, static_cast<float>(std::numeric_limits<Q>::lowest()),
                                   static_cast<float>(std::numeric_limits<Q>::max())));
}

// ---------------------------------------------------------------------------------------------------------------
// MatMulNBits

class MatMulNBitsKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const Node& node = init.node;
    const int64_t k = node.GetInt("K", 0), n = node.GetInt("N", 0), bits = node.GetInt("bits", 4);
    const int64_t block = node.GetInt("block_size", 0);
    if (bits != 4 && bits != 8) return Unsupported("bits=" + std::to_string(bits) + " (only 4 and 8)");
    if (k < 1 || n < 1 || block < 16 || (block & (block - 1)) != 0) return Unsupported("invalid K, N or block_size");
    const ValueInfo* a = InputInfo(init, 0);
    if (a == nullptr || a->dtype != DType::kF32) return Unsupported("A is not float32");
    ASSIGN_OR_RETURN(const Tensor* b, Constant(init, 1, "B"));
    ASSIGN_OR_RETURN(const Tensor* scales, Constant(init, 2, "scales"));
    ASSIGN_OR_RETURN(const Tensor* zp, Constant(init, 3, "zero_points"));
    ASSIGN_OR_RETURN(const Tensor* g_idx, Constant(init, 4, "g_idx"));
    ASSIGN_OR_RETURN(const Tensor* bias, Constant(init, 5, "bias"));
    const int64_t k_blocks = CeilDiv(k, block), blob = block * bits / 8, zp_row = CeilDiv(k_blocks * bits, 8);
    if (b == nullptr || scales == nullptr || b->dtype() != DType::kU8 || scales->dtype() != DType::kF32 ||
        b->numel() != n * k_blocks * blob || scales->numel() != n * k_blocks) {
      return Unsupported("B or scales do not have the shapes and dtypes the reference checks");
    }
    const bool float_zp = zp != nullptr && zp->dtype() == DType::kF32;
    if (zp != nullptr && zp->numel() != (float_zp ? n * k_blocks : n * zp_row)) {
      return Unsupported("zero_points have the wrong size");
    }
    if (g_idx != nullptr) {
      for (int64_t i = 0; i < g_idx->numel(); ++i) {
        if (g_idx->numel() != k || g_idx->GetAsInt64(i) != i / block) return Unsupported("g_idx reorders K");
      }
    }
    if (bias != nullptr && (bias->dtype() != DType::kF32 || bias->numel() != n)) return Unsupported("bias is not [N]");

    std::unique_ptr<MatMulNBitsKernel> kernel(new MatMulNBitsKernel());
    kernel->k_ = k;
    kernel->n_ = n;
    kernel->w_.assign(static_cast<size_t>(k * n), 0.0f);
    kernel->bias_.assign(static_cast<size_t>(n), 0.0f);
    if (bias != nullptr) std::copy(bias->data<float>(), bias->data<float>() + n, kernel->bias_.begin());
    const uint8_t* bq = b->data<uint8_t>();
    const float* sc = scales->data<float>();
    const int32_t default_zp = 1 << (bits - 1);
    // ONNX Runtime's two dequantization formulas: (q - zp) · scale, and q · scale - scale · zp for float zp.
#pragma omp parallel for
    for (int64_t col = 0; col < n; ++col) {
      for (int64_t blk = 0; blk < k_blocks; ++blk) {
        const float scale = sc[col * k_blocks + blk];
        int32_t zq = default_zp;
        float zf = 0;
        if (float_zp) {
          zf = zp->data<float>()[col * k_blocks + blk];
        } else if (zp != nullptr) {
          const uint8_t* row = zp->data<uint8_t>() + col * zp_row;
          zq = bits == 8 ? row[blk] : (row[blk / 2] >> (4 * (blk & 1))) & 0xF;
        }
        const uint8_t* data = bq + (col * k_blocks + blk) * blob;
        for (int64_t j = 0; j < std::min(block, k - blk * block); ++j) {
          const int32_t q = bits == 8 ? data[j] : (data[j / 2] >> (4 * (j & 1))) & 0xF;
          kernel->w_[static_cast<size_t>((blk * block + j) * n + col)] =
              float_zp ? static_cast<float>(q) * scale + (-scale * zf) : static_cast<float>(q - zq) * scale;
        }
      }
    }
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& a = *ctx.input(0);
    if (a.numel() % k_ != 0) return ctx.Error("A's last dim is not K");
    const int64_t rows = a.numel() / k_;
    const float* x = a.data<float>();
    float* y = ctx.output(0)->data<float>();
    const int64_t n = n_, k = k_;
    const float* w = w_.data();
    const float* bias = bias_.data();
#pragma omp parallel for if (rows * k * n > (int64_t{1} << 15))
    for (int64_t r = 0; r < rows; ++r) {
      float* yr = y + r * n;
      std::copy(bias, bias + n, yr);
      for (int64_t i = 0; i < k; ++i) {
        const float xv = x[r * k + i];
        const float* wr = w + i * n;
        for (int64_t j = 0; j < n; ++j) yr[j] += xv * wr[j];
      }
    }
    return Status::Ok();
  }

 private:
  int64_t k_ = 0, n_ = 0;
  std::vector<float> w_;  // [K, N]
  std::vector<float> bias_;
};

// ---------------------------------------------------------------------------------------------------------------
// Integer products: MatMulIntegerToFloat, DynamicQuantizeMatMul, QGemm.

enum class IntGemmMode { kIntegerToFloat, kDynamic, kQGemm };

// Values of a constant per-column parameter broadcast to n (absent: `fallback`).
template <typename T>
Result<std::vector<T>> ConstantPerColumn(const KernelInit& init, size_t i, const char* name, int64_t n, T fallback) {
  ASSIGN_OR_RETURN(const Tensor* t, Constant(init, i, name));
  std::vector<T> out(static_cast<size_t>(n), fallback);
  if (t == nullptr) return out;
  if (t->numel() != 1 && t->numel() != n) return Unsupported(std::string(name) + " is neither a scalar nor [N]");
  for (int64_t j = 0; j < n; ++j) out[static_cast<size_t>(j)] = static_cast<T>(t->GetAsDouble(t->numel() == 1 ? 0 : j));
  return out;
}

class IntGemmKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init, IntGemmMode mode) {
    const Node& node = init.node;
    const bool qgemm = mode == IntGemmMode::kQGemm;
    const size_t b_in = qgemm ? 3 : 1;
    const size_t b_scale_in = mode == IntGemmMode::kIntegerToFloat ? 3 : (qgemm ? 4 : 2);
    const size_t b_zp_in = b_scale_in + (qgemm ? 1 : (mode == IntGemmMode::kIntegerToFloat ? 2 : 1));
    const ValueInfo* a = InputInfo(init, 0);
    if (!StaticShape(a)) return Unsupported("A's shape is known only at run time");
    ASSIGN_OR_RETURN(const Tensor* b, Constant(init, b_in, "B"));
    if (b == nullptr || b->rank() != 2) return Unsupported("B is not a constant matrix");
    if (b->dtype() != DType::kU8 && b->dtype() != DType::kI8) return Unsupported("B is not u8/s8");
    std::unique_ptr<IntGemmKernel> kernel(new IntGemmKernel());
    kernel->mode_ = mode;
    const bool tb = qgemm && node.GetInt("transB", 0) != 0;
    kernel->ta_ = qgemm && node.GetInt("transA", 0) != 0;
    const int64_t k = b->dim(tb ? 1 : 0), n = b->dim(tb ? 0 : 1);
    const int64_t a_k = qgemm ? a->shape[kernel->ta_ ? 0 : 1] : a->shape.back();
    if (a->shape.empty() || a_k != k) return Unsupported("A and B do not share K");
    kernel->k_ = k;
    kernel->n_ = n;
    ASSIGN_OR_RETURN(kernel->b_scale_, ConstantPerColumn<float>(init, b_scale_in, "b_scale", n, 1.0f));
    ASSIGN_OR_RETURN(const std::vector<int32_t> b_zp, ConstantPerColumn<int32_t>(init, b_zp_in, "b_zero_point", n, 0));
    const std::vector<int64_t> bv = b->ToInt64Vector();
    kernel->b_.resize(static_cast<size_t>(k * n));
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t j = 0; j < n; ++j) {
        kernel->b_[static_cast<size_t>(p * n + j)] =
            static_cast<int32_t>(bv[static_cast<size_t>(tb ? j * k + p : p * n + j)]) - b_zp[static_cast<size_t>(j)];
      }
    }
    const size_t bias_in = mode == IntGemmMode::kIntegerToFloat ? 6 : 4;
    if (!qgemm) {
      ASSIGN_OR_RETURN(const Tensor* bias, Constant(init, bias_in, "bias"));
      if (bias != nullptr) {
        if (bias->dtype() != DType::kF32 || bias->numel() != n) return Unsupported("bias is not float [N]");
        kernel->bias_.assign(bias->data<float>(), bias->data<float>() + n);
      }
      return std::unique_ptr<IKernel>(std::move(kernel));
    }
    if (a->shape.size() != 2) return Unsupported("A is not a matrix");
    kernel->m_ = a->shape[kernel->ta_ ? 1 : 0];
    ASSIGN_OR_RETURN(const Tensor* c, Constant(init, 6, "C"));
    kernel->c_.assign(static_cast<size_t>(kernel->m_ * n), 0);
    if (c != nullptr) {
      if (c->dtype() != DType::kI32 || c->rank() > 2 || !BroadcastsTo(c->shape(), {kernel->m_, n})) {
        return Unsupported("C is not int32 broadcasting to [M, N]");
      }
      const BroadcastIndexer index(c->shape(), {kernel->m_, n});
      for (size_t i = 0; i < kernel->c_.size(); ++i) kernel->c_[i] = c->data<int32_t>()[index(static_cast<int64_t>(i))];
    }
    kernel->alpha_ = node.GetFloat("alpha", 1.0f);
    const ValueInfo* y_zp = InputInfo(init, 8);
    if ((InputInfo(init, 7) == nullptr) != (y_zp == nullptr)) return Unsupported("y_scale without y_zero_point");
    kernel->requantize_ = y_zp != nullptr;
    if (y_zp != nullptr && y_zp->dtype != a->dtype) return Unsupported("y_zero_point's dtype is not A's");
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& a = *ctx.input(0);
    float a_scale = 1;
    int32_t a_zp = 0;
    std::vector<int32_t> av(static_cast<size_t>(a.numel()));
    if (mode_ == IntGemmMode::kDynamic) {
      const float* x = a.data<float>();
      if (!std::all_of(x, x + a.numel(), [](float v) { return std::isfinite(v); })) {
        return ctx.Error("A holds a non-finite value, which leaves its quantization undefined");
      }
      QuantizeDynamic(a, av, a_scale, a_zp);
    } else {
      const size_t a_scale_in = mode_ == IntGemmMode::kQGemm ? 1 : 2, a_zp_in = mode_ == IntGemmMode::kQGemm ? 2 : 4;
      a_scale = static_cast<float>(ctx.input(a_scale_in)->GetAsDouble(0));
      if (const Tensor* zp = ctx.input(a_zp_in)) a_zp = static_cast<int32_t>(zp->GetAsInt64(0));
      const std::vector<int64_t> values = a.ToInt64Vector();
      const int64_t m = values.size() / static_cast<size_t>(k_);
      for (size_t i = 0; i < values.size(); ++i) {
        // QGemm's transA: read A column-major so that av is always [M, K].
        const size_t src =
            ta_ ? (i % static_cast<size_t>(k_)) * static_cast<size_t>(m) + i / static_cast<size_t>(k_) : i;
        av[i] = static_cast<int32_t>(values[src]);
      }
    }
    const int64_t rows = a.numel() / k_, n = n_, k = k_;
    std::vector<int32_t> acc(static_cast<size_t>(rows * n));
    if (!c_.empty()) std::copy(c_.begin(), c_.end(), acc.begin());
#pragma omp parallel for if (rows * k * n > (int64_t{1} << 15))
    for (int64_t r = 0; r < rows; ++r) {
      int32_t* yr = acc.data() + r * n;
      for (int64_t p = 0; p < k; ++p) {
        const int32_t x = av[static_cast<size_t>(r * k + p)] - a_zp;
        const int32_t* br = b_.data() + p * n;
        for (int64_t j = 0; j < n; ++j) yr[j] += x * br[j];
      }
    }
    return Store(ctx, acc, a_scale);
  }

 private:
  // A quantized to uint8 as DynamicQuantizeLinear does (the reference's RunDynamicQuantizeMatMul).
  static void QuantizeDynamic(const Tensor& a, std::vector<int32_t>& av, float& scale, int32_t& zp) {
    const float* x = a.data<float>();
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < a.numel(); ++i) {
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
    scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    zp = static_cast<int32_t>(std::nearbyint(std::clamp(0.0f - lo / scale, 0.0f, 255.0f)));
    for (size_t i = 0; i < av.size(); ++i) {
      av[i] = SaturateRound<uint8_t>(std::nearbyint(x[i] / scale) + static_cast<float>(zp));
    }
  }

  Status Store(KernelContext& ctx, const std::vector<int32_t>& acc, float a_scale) {
    Tensor& y = *ctx.output(0);
    const size_t n = static_cast<size_t>(n_);
    std::vector<float> scale(n);
    if (mode_ != IntGemmMode::kQGemm) {
      for (size_t j = 0; j < n; ++j) scale[j] = a_scale * b_scale_[j];
      float* out = y.data<float>();
      for (size_t i = 0; i < acc.size(); ++i) {
        const float v = static_cast<float>(acc[i]) * scale[i % n];
        out[i] = bias_.empty() ? v : v + bias_[i % n];
      }
      return Status::Ok();
    }
    const float y_scale = requantize_ ? static_cast<float>(ctx.input(7)->GetAsDouble(0)) : 1.0f;
    for (size_t j = 0; j < n; ++j) {
      scale[j] = alpha_ * a_scale * b_scale_[j];
      if (requantize_) scale[j] /= y_scale;
    }
    if (!requantize_) {
      for (size_t i = 0; i < acc.size(); ++i) y.data<float>()[i] = static_cast<float>(acc[i]) * scale[i % n];
      return Status::Ok();
    }
    const float y_zp = static_cast<float>(ctx.input(8)->GetAsInt64(0));
    auto requantize = [&](auto* out) {
      using Q = std::remove_pointer_t<decltype(out)>;
      for (size_t i = 0; i < acc.size(); ++i) {
        out[i] = SaturateRound<Q>(std::nearbyint(static_cast<float>(acc[i]) * scale[i % n]) + y_zp);
      }
    };
    if (y.dtype() == DType::kU8) {
      requantize(y.data<uint8_t>());
    } else {
      requantize(y.data<int8_t>());
    }
    return Status::Ok();
  }

  IntGemmMode mode_ = IntGemmMode::kIntegerToFloat;
  bool ta_ = false, requantize_ = false;
  int64_t m_ = 0, k_ = 0, n_ = 0;
  float alpha_ = 1;
  std::vector<int32_t> b_;  // [K, N], B minus its zero points
  std::vector<float> b_scale_, bias_;
  std::vector<int32_t> c_;  // QGemm's C broadcast to [M, N]
};

KernelResult CreateMatMulIntegerToFloat(const KernelInit& init) {
  return IntGemmKernel::Create(init, IntGemmMode::kIntegerToFloat);
}
KernelResult CreateDynamicQuantizeMatMul(const KernelInit& init) {
  return IntGemmKernel::Create(init, IntGemmMode::kDynamic);
}
KernelResult CreateQGemm(const KernelInit& init) { return IntGemmKernel::Create(init, IntGemmMode::kQGemm); }

// ---------------------------------------------------------------------------------------------------------------
// QOperator ops with constant per-tensor scales and zero points.

// A constant scalar scale (float32) or zero point (absent: 0).
Result<float> ConstantScale(const KernelInit& init, size_t i, const char* name) {
  ASSIGN_OR_RETURN(const Tensor* t, Constant(init, i, name));
  if (t == nullptr || t->dtype() != DType::kF32 || t->numel() != 1) {
    return Unsupported(std::string(name) + " is not one float32 value");
  }
  return t->data<float>()[0];
}

Result<int32_t> ConstantZeroPoint(const KernelInit& init, size_t i, const char* name) {
  ASSIGN_OR_RETURN(const Tensor* t, Constant(init, i, name));
  if (t == nullptr) return 0;
  if (t->numel() != 1) return Unsupported(std::string(name) + " is not one value");
  return static_cast<int32_t>(t->GetAsInt64(0));
}

bool IsInt8(DType dtype) { return dtype == DType::kU8 || dtype == DType::kI8; }

// The reference's lookup table: dequantize each of the 256 codes, apply f in float, quantize (x / scale).
template <typename Q, typename F>
std::vector<uint8_t> Table(float x_scale, int32_t x_zp, float y_scale, int32_t y_zp, F&& f) {
  std::vector<uint8_t> table(256);
  for (int i = 0; i < 256; ++i) {
    const Q x = static_cast<Q>(static_cast<uint8_t>(i));
    const float v = f(x_scale * static_cast<float>(static_cast<int32_t>(x) - x_zp));
    table[static_cast<size_t>(i)] =
        static_cast<uint8_t>(SaturateRound<Q>(std::nearbyint(v / y_scale) + static_cast<float>(y_zp)));
  }
  return table;
}

void Lookup(const uint8_t* x, const std::vector<uint8_t>& table, uint8_t* y, int64_t n) {
#pragma omp parallel for if (n > (int64_t{1} << 16))
  for (int64_t i = 0; i < n; ++i) y[i] = table[x[i]];
}

// QLinearSigmoid, QLinearLeakyRelu: one table, built at Init.
class QLinearLookupKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init, bool sigmoid) {
    const ValueInfo* x = InputInfo(init, 0);
    if (x == nullptr || !IsInt8(x->dtype)) return Unsupported("X is not u8/s8");
    ASSIGN_OR_RETURN(const float x_scale, ConstantScale(init, 1, "X_scale"));
    ASSIGN_OR_RETURN(const int32_t x_zp, ConstantZeroPoint(init, 2, "X_zero_point"));
    ASSIGN_OR_RETURN(const float y_scale, ConstantScale(init, 3, "Y_scale"));
    ASSIGN_OR_RETURN(const int32_t y_zp, ConstantZeroPoint(init, 4, "Y_zero_point"));
    const float alpha = init.node.GetFloat("alpha", 0.01f);
    auto f = [sigmoid, alpha](float v) { return sigmoid ? 1.0f / (1.0f + std::exp(-v)) : (v >= 0.0f ? v : alpha * v); };
    std::unique_ptr<QLinearLookupKernel> kernel(new QLinearLookupKernel());
    kernel->table_ = x->dtype == DType::kU8 ? Table<uint8_t>(x_scale, x_zp, y_scale, y_zp, f)
                                            : Table<int8_t>(x_scale, x_zp, y_scale, y_zp, f);
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    Lookup(static_cast<const uint8_t*>(x.raw_data()), table_, static_cast<uint8_t*>(ctx.output(0)->raw_data()),
           x.numel());
    return Status::Ok();
  }

 private:
  std::vector<uint8_t> table_;
};

KernelResult CreateQLinearSigmoid(const KernelInit& init) { return QLinearLookupKernel::Create(init, true); }
KernelResult CreateQLinearLeakyRelu(const KernelInit& init) { return QLinearLookupKernel::Create(init, false); }

// QLinearAdd / QLinearMul with numpy broadcasting. The arithmetic is the reference's (MLAS's float operations
// in MLAS's order).
class QLinearBinaryKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init, bool mul) {
    const ValueInfo* a = InputInfo(init, 0);
    const ValueInfo* b = InputInfo(init, 3);
    if (!StaticShape(a) || !StaticShape(b)) return Unsupported("shapes known only at run time");
    if (!IsInt8(a->dtype) || b->dtype != a->dtype) return Unsupported("A and B are not both u8 or both s8");
    std::unique_ptr<QLinearBinaryKernel> k(new QLinearBinaryKernel());
    k->mul_ = mul;
    k->signed_ = a->dtype == DType::kI8;
    ASSIGN_OR_RETURN(const Shape out, BroadcastShapes(a->shape, b->shape));
    // As the reference: the side ONNX Runtime's broadcast loop passes as one value per span.
    k->a_scalar_ = ScalarPerSpan(a->shape, out);
    k->b_scalar_ = !k->a_scalar_ && ScalarPerSpan(b->shape, out);
    if (a->shape != out) k->a_index_ = std::make_unique<BroadcastIndexer>(a->shape, out);
    if (b->shape != out) k->b_index_ = std::make_unique<BroadcastIndexer>(b->shape, out);
    ASSIGN_OR_RETURN(const float sa, ConstantScale(init, 1, "A_scale"));
    ASSIGN_OR_RETURN(k->za_, ConstantZeroPoint(init, 2, "A_zero_point"));
    ASSIGN_OR_RETURN(const float sb, ConstantScale(init, 4, "B_scale"));
    ASSIGN_OR_RETURN(k->zb_, ConstantZeroPoint(init, 5, "B_zero_point"));
    ASSIGN_OR_RETURN(const float sc, ConstantScale(init, 6, "C_scale"));
    ASSIGN_OR_RETURN(k->zc_, ConstantZeroPoint(init, 7, "C_zero_point"));
    k->r_ac_ = sa / sc;
    k->r_bc_ = sb / sc;
    k->fixed_ =
        static_cast<float>(k->zc_) - (k->r_ac_ * static_cast<float>(k->za_) + k->r_bc_ * static_cast<float>(k->zb_));
    k->ratio_ = sa * sb / sc;
    return std::unique_ptr<IKernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    if (signed_) return RunTyped<int8_t>(ctx);
    return RunTyped<uint8_t>(ctx);
  }

 private:
  template <typename Q>
  Status RunTyped(KernelContext& ctx) {
    const Q* a = ctx.input(0)->data<Q>();
    const Q* b = ctx.input(3)->data<Q>();
    Tensor& y = *ctx.output(0);
    Q* out = y.data<Q>();
    const int64_t n = y.numel();
    const BroadcastIndexer* ai = a_index_.get();
    const BroadcastIndexer* bi = b_index_.get();
#pragma omp parallel for if (n > (int64_t{1} << 15))
    for (int64_t i = 0; i < n; ++i) {
      // NOLINTNEXTLINE(bugprone-signed-char-misuse): int8 is numeric
      const auto x = static_cast<int32_t>(a[ai != nullptr ? (*ai)(i) : i]);
      // NOLINTNEXTLINE(bugprone-signed-char-misuse)
      const auto w = static_cast<int32_t>(b[bi != nullptr ? (*bi)(i) : i]);
      if (mul_) {
        out[i] = SaturateRound<Q>(static_cast<float>((x - za_) * (w - zb_)) * ratio_ + static_cast<float>(zc_));
      } else if (a_scalar_) {
        out[i] = SaturateRound<Q>(std::fma(static_cast<float>(w), r_bc_, fixed_ + static_cast<float>(x) * r_ac_));
      } else if (b_scalar_) {
        out[i] = SaturateRound<Q>(std::fma(static_cast<float>(x), r_ac_, fixed_ + static_cast<float>(w) * r_bc_));
      } else {
        out[i] =
            SaturateRound<Q>(std::fma(static_cast<float>(x), r_ac_, std::fma(static_cast<float>(w), r_bc_, fixed_)));
      }
    }
    return Status::Ok();
  }

  bool mul_ = false, signed_ = false, a_scalar_ = false, b_scalar_ = false;
  std::unique_ptr<BroadcastIndexer> a_index_, b_index_;  // null: the input has the output's shape
  int32_t za_ = 0, zb_ = 0, zc_ = 0;
  float r_ac_ = 1, r_bc_ = 1, fixed_ = 0, ratio_ = 1;
};

KernelResult CreateQLinearAdd(const KernelInit& init) { return QLinearBinaryKernel::Create(init, false); }
KernelResult CreateQLinearMul(const KernelInit& init) { return QLinearBinaryKernel::Create(init, true); }

// QLinearConcat: a copy or a table per input, chosen at Init.
class QLinearConcatKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const Node& node = init.node;
    const size_t inputs = node.inputs.size();
    if (inputs < 5 || (inputs - 2) % 3 != 0) return Unsupported("inputs are not Y_scale, Y_zero_point, triples");
    const ValueInfo* y_zp_info = InputInfo(init, 1);
    if (y_zp_info == nullptr || !IsInt8(y_zp_info->dtype)) return Unsupported("Y_zero_point is not u8/s8");
    ASSIGN_OR_RETURN(const float y_scale, ConstantScale(init, 0, "Y_scale"));
    ASSIGN_OR_RETURN(const int32_t y_zp, ConstantZeroPoint(init, 1, "Y_zero_point"));
    std::unique_ptr<QLinearConcatKernel> k(new QLinearConcatKernel());
    for (size_t x = 2; x + 2 < inputs; x += 3) {
      const ValueInfo* in = InputInfo(init, x);
      if (in == nullptr || in->dtype != y_zp_info->dtype) return Unsupported("an input's dtype is not Y's");
      ASSIGN_OR_RETURN(const float s, ConstantScale(init, x + 1, "X_scale"));
      ASSIGN_OR_RETURN(const int32_t z, ConstantZeroPoint(init, x + 2, "X_zero_point"));
      auto identity = [](float v) { return v; };
      k->tables_.push_back(s == y_scale && z == y_zp        ? std::vector<uint8_t>()
                           : y_zp_info->dtype == DType::kU8 ? Table<uint8_t>(s, z, y_scale, y_zp, identity)
                                                            : Table<int8_t>(s, z, y_scale, y_zp, identity));
    }
    k->axis_ = node.GetInt("axis", 0);
    return std::unique_ptr<IKernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    Tensor& y = *ctx.output(0);
    ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, y.rank(), ctx.node()));
    const int64_t outer = Product(y.shape(), 0, static_cast<size_t>(axis));
    const int64_t inner = Product(y.shape(), static_cast<size_t>(axis) + 1);
    const int64_t y_len = y.dim(axis) * inner;
    uint8_t* out = static_cast<uint8_t*>(y.raw_data());
    int64_t offset = 0;
    for (size_t t = 0; t < tables_.size(); ++t) {
      const Tensor& in = *ctx.input(2 + 3 * t);
      const uint8_t* src = static_cast<const uint8_t*>(in.raw_data());
      const int64_t len = in.dim(axis) * inner;
      const std::vector<uint8_t>& table = tables_[t];
#pragma omp parallel for if (outer * len > (int64_t{1} << 16))
      for (int64_t o = 0; o < outer; ++o) {
        uint8_t* dst = out + o * y_len + offset;
        const uint8_t* s = src + o * len;
        if (table.empty()) {
          std::copy(s, s + len, dst);
        } else {
          for (int64_t i = 0; i < len; ++i) dst[i] = table[s[i]];
        }
      }
      offset += len;
    }
    return Status::Ok();
  }

 private:
  int64_t axis_ = 0;
  std::vector<std::vector<uint8_t>> tables_;  // empty: the input is copied
};

// QLinearGlobalAveragePool (and QLinearAveragePool whose kernel covers the whole unpadded input): int32 sums,
// then the reference's float requantization.
class QLinearGlobalPoolKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    if (x == nullptr || !IsInt8(x->dtype) || x->shape.size() < 3) return Unsupported("X is not u8/s8 [N, C, D...]");
    std::unique_ptr<QLinearGlobalPoolKernel> k(new QLinearGlobalPoolKernel());
    k->signed_ = x->dtype == DType::kI8;
    k->channels_last_ = init.node.GetInt("channels_last", 0) != 0;
    ASSIGN_OR_RETURN(k->x_scale_, ConstantScale(init, 1, "x_scale"));
    ASSIGN_OR_RETURN(k->x_zp_, ConstantZeroPoint(init, 2, "x_zero_point"));
    ASSIGN_OR_RETURN(k->y_scale_, ConstantScale(init, 3, "y_scale"));
    ASSIGN_OR_RETURN(k->y_zp_, ConstantZeroPoint(init, 4, "y_zero_point"));
    return std::unique_ptr<IKernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    if (signed_) return RunTyped<int8_t>(ctx);
    return RunTyped<uint8_t>(ctx);
  }

 private:
  template <typename Q>
  Status RunTyped(KernelContext& ctx) {
    const Tensor& x = *ctx.input(0);
    const int64_t batch = x.dim(0), channels = channels_last_ ? x.dim(x.rank() - 1) : x.dim(1);
    const int64_t image = x.numel() / (batch * channels);
    const float scale = x_scale_ / (y_scale_ * static_cast<float>(image));
    const Q* in = x.data<Q>();
    Q* out = ctx.output(0)->data<Q>();
#pragma omp parallel for
    for (int64_t nc = 0; nc < batch * channels; ++nc) {
      const int64_t n = nc / channels, c = nc % channels;
      int32_t acc = -x_zp_ * static_cast<int32_t>(image);
      if (channels_last_) {
        const Q* p = in + n * image * channels + c;
        for (int64_t s = 0; s < image; ++s) acc += p[s * channels];
      } else {
        const Q* p = in + nc * image;
        for (int64_t s = 0; s < image; ++s) acc += p[s];
      }
      out[nc] = SaturateRound<Q>(std::nearbyint(static_cast<float>(acc) * scale) + static_cast<float>(y_zp_));
    }
    return Status::Ok();
  }

  bool signed_ = false, channels_last_ = false;
  float x_scale_ = 1, y_scale_ = 1;
  int32_t x_zp_ = 0, y_zp_ = 0;
};

// QLinearSoftmax: the exp table at Init (needs the reduced length, so static shapes), rows in parallel.
class QLinearSoftmaxKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const ValueInfo* x = InputInfo(init, 0);
    if (!StaticShape(x) || x->shape.empty()) return Unsupported("X's shape is known only at run time");
    if (!IsInt8(x->dtype)) return Unsupported("X is not u8/s8");
    std::unique_ptr<QLinearSoftmaxKernel> k(new QLinearSoftmaxKernel());
    k->signed_ = x->dtype == DType::kI8;
    const bool old = init.node.GetInt("opset", 13) < 13;
    ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(init.node.GetInt("axis", old ? 1 : -1),
                                                       static_cast<int64_t>(x->shape.size()), init.node));
    const size_t a = static_cast<size_t>(axis);
    k->outer_ = Product(x->shape, 0, a);
    k->d_ = old ? Product(x->shape, a) : x->shape[a];
    k->inner_ = old ? 1 : Product(x->shape, a + 1);
    ASSIGN_OR_RETURN(const float x_scale, ConstantScale(init, 1, "X_scale"));
    ASSIGN_OR_RETURN(const float y_scale, ConstantScale(init, 3, "y_scale"));
    ASSIGN_OR_RETURN(k->y_zp_, ConstantZeroPoint(init, 4, "y_zero_point"));
    k->y_mult_ = std::floor(1.0f / y_scale);
    if (k->d_ < 1) return Unsupported("an empty softmax axis");
    k->table_ = QLinearSoftmaxTable(x_scale, k->d_);
    return std::unique_ptr<IKernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    if (signed_) return RunTyped<int8_t>(ctx);
    return RunTyped<uint8_t>(ctx);
  }

 private:
  template <typename Q>
  Status RunTyped(KernelContext& ctx) {
    const Q* x = ctx.input(0)->data<Q>();
    Q* y = ctx.output(0)->data<Q>();
    const int64_t d = d_, inner = inner_;
#pragma omp parallel for
    for (int64_t row = 0; row < outer_ * inner; ++row) {
      const int64_t base = row / inner * d * inner + row % inner;
      int32_t xmax = std::numeric_limits<int32_t>::min();
      for (int64_t j = 0; j < d; ++j) xmax = std::max<int32_t>(xmax, x[base + j * inner]);
      const float* shifted = table_.data() + 255 - xmax;
      float sum = 0;
      for (int64_t j = 0; j < d; ++j) sum += shifted[x[base + j * inner]];
      for (int64_t j = 0; j < d; ++j) {
        const float e = shifted[x[base + j * inner]];
        y[base + j * inner] = SaturateRound<Q>(std::nearbyint(e * y_mult_ / sum) + static_cast<float>(y_zp_));
      }
    }
    return Status::Ok();
  }

  bool signed_ = false;
  int64_t outer_ = 0, d_ = 0, inner_ = 0;
  float y_mult_ = 1;
  int32_t y_zp_ = 0;
  std::vector<float> table_;
};

// com.microsoft QuantizeLinear / DequantizeLinear with constant scales and zero points (per tensor or per axis).
class ContribQdqKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init, bool quantize) {
    const ValueInfo* x = InputInfo(init, 0);
    if (!StaticShape(x)) return Unsupported("x's shape is known only at run time");
    ASSIGN_OR_RETURN(const Tensor* scale, Constant(init, 1, "scale"));
    ASSIGN_OR_RETURN(const Tensor* zp, Constant(init, 2, "zero point"));
    if (scale == nullptr || scale->dtype() != DType::kF32) return Unsupported("scale is not float32");
    if (quantize && x->dtype != DType::kF32) return Unsupported("x is not float32");
    std::unique_ptr<ContribQdqKernel> k(new ContribQdqKernel());
    k->quantize_ = quantize;
    k->scale_.assign(scale->data<float>(), scale->data<float>() + scale->numel());
    k->zp_.assign(k->scale_.size(), 0);
    if (zp != nullptr) {
      if (zp->numel() != scale->numel()) return Unsupported("the zero point does not match the scale");
      for (int64_t i = 0; i < zp->numel(); ++i)
        k->zp_[static_cast<size_t>(i)] = static_cast<int32_t>(zp->GetAsInt64(i));
    }
    if (scale->numel() > 1) {
      ASSIGN_OR_RETURN(const int64_t axis,
                       NormalizeAxis(init.node.GetInt("axis", 1), static_cast<int64_t>(x->shape.size()), init.node));
      if (x->shape[static_cast<size_t>(axis)] != scale->numel()) return Unsupported("scale does not match x's axis");
      k->axis_dim_ = scale->numel();
      k->inner_ = Product(x->shape, static_cast<size_t>(axis) + 1);
    }
    return std::unique_ptr<IKernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    Tensor& y = *ctx.output(0);
    const int64_t n = x.numel();
    if (!quantize_) {
      return VisitIntTag(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T* in = x.data<T>();
        float* out = y.data<float>();
#pragma omp parallel for if (n > (int64_t{1} << 16))
        for (int64_t i = 0; i < n; ++i) {
          const size_t s = static_cast<size_t>(i / inner_ % axis_dim_);
          out[i] = static_cast<float>(static_cast<int32_t>(in[i]) - zp_[s]) * scale_[s];
        }
      });
    }
    return VisitIntTag(y.dtype(), [&](auto tag) {
      using Q = decltype(tag);
      const float* in = x.data<float>();
      Q* out = y.data<Q>();
#pragma omp parallel for if (n > (int64_t{1} << 16))
      for (int64_t i = 0; i < n; ++i) {
        const size_t s = static_cast<size_t>(i / inner_ % axis_dim_);
        out[i] = SaturateRound<Q>(std::nearbyint(in[i] / scale_[s]) + static_cast<float>(zp_[s]));
      }
    });
  }

 private:
  // f(T{}) for the integer dtypes the ops take (int32 only as DequantizeLinear's x); others refused.
  template <typename F>
  static Status VisitIntTag(DType dtype, F&& f) {
    switch (dtype) {
      case DType::kU8: f(uint8_t{}); return Status::Ok();
      case DType::kI8: f(int8_t{}); return Status::Ok();
      case DType::kU16: f(uint16_t{}); return Status::Ok();
      case DType::kI16: f(int16_t{}); return Status::Ok();
      case DType::kI32: f(int32_t{}); return Status::Ok();
      default: return Unsupported("dtype " + std::string(DTypeName(dtype)));
    }
  }

  bool quantize_ = true;
  int64_t axis_dim_ = 1, inner_ = 1;
  std::vector<float> scale_;
  std::vector<int32_t> zp_;
};

KernelResult CreateContribQuantize(const KernelInit& init) { return ContribQdqKernel::Create(init, true); }
KernelResult CreateContribDequantize(const KernelInit& init) { return ContribQdqKernel::Create(init, false); }

// QLinearAveragePool: a kernel covering the whole unpadded input runs as the global pool (as in ONNX Runtime);
// any other window sums the dequantized codes (a 256-entry float table) over the window clipped to the input
// in row-major order, divides by the clipped count or the kernel size, and quantizes round(v / y_scale + y_zp):
// the reference's float operations, with each window's clipped extent computed once at Init.
class QLinearAveragePoolKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const Node& node = init.node;
    const ValueInfo* x = InputInfo(init, 0);
    if (!StaticShape(x) || x->shape.size() < 3 || x->shape.size() > 5) {
      return Unsupported("X's shape is known only at run time or has rank outside 3..5");
    }
    if (!IsInt8(x->dtype)) return Unsupported("X is not u8/s8");
    if (node.Has("dilations")) return Unsupported("dilations");
    const bool channels_last = node.GetInt("channels_last", 0) != 0;
    const Shape spatial =
        channels_last ? Shape(x->shape.begin() + 1, x->shape.end() - 1) : Shape(x->shape.begin() + 2, x->shape.end());
    ASSIGN_OR_RETURN(Window w, ReadWindow(node, spatial, node.GetInts("kernel_shape", {})));
    RETURN_IF_ERROR(ResolveForwardWindow(node, w, node.GetInt("ceil_mode", 0) != 0));
    const bool unpadded = std::all_of(w.pad_begin.begin(), w.pad_begin.end(), [](int64_t p) { return p == 0; }) &&
                          std::all_of(w.pad_end.begin(), w.pad_end.end(), [](int64_t p) { return p == 0; });
    if (unpadded && w.kernel == spatial) return QLinearGlobalPoolKernel::Create(init);

    std::unique_ptr<QLinearAveragePoolKernel> k(new QLinearAveragePoolKernel());
    k->signed_ = x->dtype == DType::kI8;
    k->channels_last_ = channels_last;
    k->batch_ = x->shape[0];
    k->channels_ = channels_last ? x->shape.back() : x->shape[1];
    k->image_ = NumElements(spatial);
    ASSIGN_OR_RETURN(const float x_scale, ConstantScale(init, 1, "x_scale"));
    ASSIGN_OR_RETURN(const int32_t x_zp, ConstantZeroPoint(init, 2, "x_zero_point"));
    ASSIGN_OR_RETURN(k->y_scale_, ConstantScale(init, 3, "y_scale"));
    ASSIGN_OR_RETURN(k->y_zp_, ConstantZeroPoint(init, 4, "y_zero_point"));
    k->dequantized_.resize(256);
    for (int i = 0; i < 256; ++i) {
      const int32_t q = k->signed_ ? static_cast<int8_t>(i) : i;
      k->dequantized_[static_cast<size_t>(i)] = x_scale * static_cast<float>(q - x_zp);
    }
    // Each output position's window: the flat input offsets it reads (row-major) and its divisor.
    const bool include_pad = node.GetInt("count_include_pad", 0) != 0;
    const int64_t kernel = NumElements(w.kernel), outputs = NumElements(w.out);
    const size_t rank = w.rank();
    k->window_begin_.push_back(0);
    for (int64_t o = 0; o < outputs; ++o) {
      const std::vector<int64_t> pos = Unravel(o, w.out);
      std::vector<int64_t> start(rank), extent(rank);
      int64_t count = 1;
      for (size_t d = 0; d < rank; ++d) {
        const int64_t s = pos[d] * w.strides[d] - w.pad_begin[d];
        start[d] = std::max<int64_t>(s, 0);
        extent[d] = std::max<int64_t>(std::min(s + w.kernel[d], w.in[d]) - start[d], 0);
        count *= extent[d];
      }
      if (count > 0) {
        std::vector<int64_t> idx(rank, 0);
        do {
          int64_t flat = 0;
          for (size_t d = 0; d < rank; ++d) flat = flat * w.in[d] + start[d] + idx[d];
          k->taps_.push_back(flat);
        } while (NextIndex(idx, extent));
      }
      k->window_begin_.push_back(static_cast<int64_t>(k->taps_.size()));
      k->divisor_.push_back(static_cast<float>(include_pad ? kernel : count));
    }
    k->outputs_ = outputs;
    return std::unique_ptr<IKernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    if (signed_) return RunTyped<int8_t>(ctx);
    return RunTyped<uint8_t>(ctx);
  }

 private:
  template <typename Q>
  Status RunTyped(KernelContext& ctx) {
    const uint8_t* x = static_cast<const uint8_t*>(ctx.input(0)->raw_data());
    Q* y = ctx.output(0)->data<Q>();
    const int64_t channels = channels_, image = image_, outputs = outputs_;
    const bool last = channels_last_;
#pragma omp parallel for
    for (int64_t nc = 0; nc < batch_ * channels; ++nc) {
      const int64_t n = nc / channels, c = nc % channels;
      for (int64_t o = 0; o < outputs; ++o) {
        float sum = 0;
        for (int64_t t = window_begin_[static_cast<size_t>(o)]; t < window_begin_[static_cast<size_t>(o) + 1]; ++t) {
          const int64_t s = taps_[static_cast<size_t>(t)];
          sum += dequantized_[x[last ? (n * image + s) * channels + c : nc * image + s]];
        }
        sum /= divisor_[static_cast<size_t>(o)];
        y[last ? (n * outputs + o) * channels + c : nc * outputs + o] =
            SaturateRound<Q>(sum / y_scale_ + static_cast<float>(y_zp_));
      }
    }
    return Status::Ok();
  }

  bool signed_ = false, channels_last_ = false;
  int64_t batch_ = 0, channels_ = 0, image_ = 0, outputs_ = 0;
  float y_scale_ = 1;
  int32_t y_zp_ = 0;
  std::vector<float> dequantized_;  // by code byte
  std::vector<int64_t> taps_, window_begin_;
  std::vector<float> divisor_;
};

// GatherBlockQuantized (uint8 data, gather_axis 0, quantize_axis last): the gathered slices dequantized in
// parallel with the reference's formula, (q − zp) · scale.
class GatherBlockQuantizedKernel final : public IKernel {
 public:
  static KernelResult Create(const KernelInit& init) {
    const Node& node = init.node;
    const ValueInfo* data = InputInfo(init, 0);
    if (!StaticShape(data) || data->dtype != DType::kU8 || data->shape.size() < 2) {
      return Unsupported("data is not uint8 of rank >= 2 with a static shape");
    }
    const int64_t rank = static_cast<int64_t>(data->shape.size());
    std::unique_ptr<GatherBlockQuantizedKernel> k(new GatherBlockQuantizedKernel());
    k->bits_ = node.GetInt("bits", 4);
    k->block_ = node.GetInt("block_size", 128);
    if (k->bits_ != 2 && k->bits_ != 4 && k->bits_ != 8) return Unsupported("bits is not 2, 4 or 8");
    if (k->block_ < 16 || (k->block_ & (k->block_ - 1)) != 0) return Unsupported("invalid block_size");
    ASSIGN_OR_RETURN(const int64_t gather_axis, NormalizeAxis(node.GetInt("gather_axis", 0), rank, node));
    ASSIGN_OR_RETURN(const int64_t quantize_axis, NormalizeAxis(node.GetInt("quantize_axis", 1), rank, node));
    if (gather_axis != 0 || quantize_axis != rank - 1) return Unsupported("gather_axis 0 and quantize_axis last only");
    const ValueInfo* scales = InputInfo(init, 2);
    if (scales == nullptr || scales->dtype != DType::kF32) return Unsupported("scales are not float32");
    const ValueInfo* zp = InputInfo(init, 3);
    if (zp != nullptr && zp->dtype != DType::kU8) return Unsupported("zero_points are not uint8");
    k->components_ = 8 / k->bits_;
    k->rows_ = data->shape[0];
    k->q_dim_ = data->shape.back() * k->components_;
    k->row_size_ = NumElements(data->shape) / k->rows_ * k->components_;
    k->blocks_ = CeilDiv(k->q_dim_, k->block_);
    Shape expected = data->shape;
    expected.back() = k->blocks_;
    if (StaticShape(scales) && scales->shape != expected) return Unsupported("scales do not match data");
    return std::unique_ptr<IKernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    const std::vector<int64_t> indices = ctx.input(1)->ToInt64Vector();
    const uint8_t* q = ctx.input(0)->data<uint8_t>();
    const float* scales = ctx.input(2)->data<float>();
    const Tensor* zp_t = ctx.input(3);
    const uint8_t* zp = zp_t != nullptr ? zp_t->data<uint8_t>() : nullptr;
    const int64_t zp_row = CeilDiv(blocks_, components_), mask = (1 << bits_) - 1;
    float* y = ctx.output(0)->data<float>();
    const int64_t count = static_cast<int64_t>(indices.size());
#pragma omp parallel for
    for (int64_t g = 0; g < count; ++g) {
      int64_t index = indices[static_cast<size_t>(g)];
      float* out = y + g * row_size_;
      if (index < -rows_ || index >= rows_) {
        std::fill(out, out + row_size_, 0.0f);
        continue;
      }
      if (index < 0) index += rows_;
      for (int64_t i = 0; i < row_size_; ++i) {
        const int64_t flat = index * row_size_ + i;
        const int32_t value = static_cast<int32_t>((q[flat / components_] >> (bits_ * (flat % components_))) & mask);
        const int64_t line = flat / q_dim_, block = flat % q_dim_ / block_;
        int32_t z = 1 << (bits_ - 1);
        if (zp != nullptr) {
          z = static_cast<int32_t>((zp[line * zp_row + block / components_] >> (bits_ * (block % components_))) & mask);
        }
        out[i] = static_cast<float>(value - z) * scales[line * blocks_ + block];
      }
    }
    return Status::Ok();
  }

 private:
  int64_t bits_ = 4, block_ = 128, components_ = 2, rows_ = 0, q_dim_ = 0, row_size_ = 0, blocks_ = 0;
};

}  // namespace

void AddContribQuantKernels(KernelTable& t) {
  // The model fixes these ops' quantized types, so every target precision runs them alike (as the standard
  // quantized ops in cpu_kernels.cpp).
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16, Precision::kInt8}) {
    t.Add("MatMulNBits", kMicrosoftDomain, DeviceKind::kCpu, p, {"cpu:matmulnbits", MatMulNBitsKernel::Create});
    t.Add("MatMulIntegerToFloat", kMicrosoftDomain, DeviceKind::kCpu, p,
          {"cpu:matmul-integer-to-float", CreateMatMulIntegerToFloat});
    t.Add("DynamicQuantizeMatMul", kMicrosoftDomain, DeviceKind::kCpu, p,
          {"cpu:dynamic-quantize-matmul", CreateDynamicQuantizeMatMul});
    t.Add("QGemm", kMicrosoftDomain, DeviceKind::kCpu, p, {"cpu:qgemm", CreateQGemm});
    t.Add("QLinearSigmoid", kMicrosoftDomain, DeviceKind::kCpu, p, {"cpu:qlinear-lookup", CreateQLinearSigmoid});
    t.Add("QLinearLeakyRelu", kMicrosoftDomain, DeviceKind::kCpu, p, {"cpu:qlinear-lookup", CreateQLinearLeakyRelu});
    t.Add("QLinearAdd", kMicrosoftDomain, DeviceKind::kCpu, p, {"cpu:qlinear-add", CreateQLinearAdd});
    t.Add("QLinearMul", kMicrosoftDomain, DeviceKind::kCpu, p, {"cpu:qlinear-mul", CreateQLinearMul});
    t.Add("QLinearConcat", kMicrosoftDomain, DeviceKind::kCpu, p, {"cpu:qlinear-concat", QLinearConcatKernel::Create});
    t.Add("QLinearGlobalAveragePool", kMicrosoftDomain, DeviceKind::kCpu, p,
          {"cpu:qlinear-global-average-pool", QLinearGlobalPoolKernel::Create});
    t.Add("QLinearAveragePool", kMicrosoftDomain, DeviceKind::kCpu, p,
          {"cpu:qlinear-average-pool", QLinearAveragePoolKernel::Create});
    t.Add("GatherBlockQuantized", kMicrosoftDomain, DeviceKind::kCpu, p,
          {"cpu:gather-block-quantized", GatherBlockQuantizedKernel::Create});
    t.Add("QLinearSoftmax", kMicrosoftDomain, DeviceKind::kCpu, p,
          {"cpu:qlinear-softmax", QLinearSoftmaxKernel::Create});
    t.Add("QuantizeLinear", kMicrosoftDomain, DeviceKind::kCpu, p, {"cpu:quantize", CreateContribQuantize});
    t.Add("DequantizeLinear", kMicrosoftDomain, DeviceKind::kCpu, p, {"cpu:dequantize", CreateContribDequantize});
  }
}

}  // namespace chipfit::cpu
