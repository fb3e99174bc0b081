// MatMul and Gemm on cuBLASLt: the plan (cublaslt_api.h) from shapes and precision, descriptors made
// once at Init, the handle and the algorithm chosen at the first Run (both need a GPU).
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "devices/cuda/cublaslt_api.h"
#include "devices/cuda/ops/cuda_ops.h"

namespace chipfit::cuda {

// ---- The plan.

int64_t GemmPlan::OuterCount() const {
  int64_t count = 1;
  for (const GemmOuterDim& d : outer) count *= d.size;
  return count;
}

std::string GemmPlan::Describe() const {
  const char* compute_name = compute == CUBLAS_COMPUTE_32F_FAST_TF32 ? "32F_FAST_TF32" : "32F";
  const char* c_name = c_mode == GemmCMode::kBias        ? " bias"
                       : c_mode == GemmCMode::kMatrix    ? " C"
                       : c_mode == GemmCMode::kBroadcast ? " broadcast C"
                                                         : "";
  std::string out = fmt::format("m={} n={} k={} batch={}", m, n, k, batch);
  if (!outer.empty()) out += fmt::format(" x{} host loops", OuterCount());
  return out + fmt::format(" {}/{}{}", DTypeName(storage), compute_name, c_name);
}

Status PlanTypes(Precision precision, DType storage, GemmPlan& plan) {
  plan.storage = storage;
  switch (storage) {
    case DType::kF32: plan.data_type = CUDA_R_32F; break;
    case DType::kF16: plan.data_type = CUDA_R_16F; break;
    case DType::kBF16: plan.data_type = CUDA_R_16BF; break;
    default:
      return Unsupported(fmt::format("{} operands (cuBLASLt MatMul/Gemm takes f32, f16 and bf16)", DTypeName(storage)));
  }
  if (precision == Precision::kInt8) {
    // An int8 product needs quantised weights and per-channel scales from the calibration table, which
    // this path does not make yet; the f32 kernels would silently measure the wrong thing.
    return Unsupported("int8 MatMul/Gemm on cuBLASLt needs quantised weights and per-channel scales (not written yet)");
  }
  // Half and bfloat16 storage still accumulate in f32: the profiler measures the storage's rounding, not a
  // half accumulator's. TF32 rounds only the inputs of f32 products.
  plan.compute =
      precision == Precision::kTf32 && storage == DType::kF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  plan.scale_type = CUDA_R_32F;
  return Status();
}

namespace {

std::vector<int64_t> RowMajorStrides(const Shape& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// Size-1 dims dropped; neighbours that step through memory as one dim merged.
std::vector<GemmOuterDim> MergeBatchDims(const std::vector<GemmOuterDim>& dims) {
  std::vector<GemmOuterDim> out;
  for (const GemmOuterDim& d : dims) {
    if (d.size == 1) continue;
    if (!out.empty()) {
      GemmOuterDim& prev = out.back();
      if (prev.a == d.a * d.size && prev.b == d.b * d.size && prev.y == d.y * d.size) {
        prev = {prev.size * d.size, d.a, d.b, d.y};
        continue;
      }
    }
    out.push_back(d);
  }
  return out;
}

Status RequireNonEmpty(const Shape& shape, std::string_view what, std::string_view name) {
  for (int64_t d : shape) {
    if (d <= 0)
      return Unsupported(
          fmt::format("{}: empty {} {} (cuBLASLt needs every dim > 0)", what, name, ShapeToString(shape)));
  }
  return Status();
}

}  // namespace

Result<GemmPlan> PlanMatMul(const Shape& a, const Shape& b, DType storage, Precision precision, std::string_view what) {
  GemmPlan plan;
  if (Status s = PlanTypes(precision, storage, plan); !s.ok())
    return Unsupported(fmt::format("{}: {}", what, s.message()));
  if (a.empty() || b.empty()) return InvalidArgument(fmt::format("{}: scalar operands", what));
  RETURN_IF_ERROR(RequireNonEmpty(a, what, "A"));
  RETURN_IF_ERROR(RequireNonEmpty(b, what, "B"));
  // A 1-D A is a row [1, K], a 1-D B a column [K, 1]; missing leading batch dims are 1s. The bytes are the
  // same, so the output (which drops those dims) needs nothing else.
  const Shape a2 = a.size() == 1 ? Shape{1, a[0]} : a;
  const Shape b2 = b.size() == 1 ? Shape{b[0], 1} : b;
  const size_t rank = std::max(a2.size(), b2.size());
  Shape ad(rank, 1), bd(rank, 1);
  std::copy(a2.begin(), a2.end(), ad.begin() + static_cast<std::ptrdiff_t>(rank - a2.size()));
  std::copy(b2.begin(), b2.end(), bd.begin() + static_cast<std::ptrdiff_t>(rank - b2.size()));
  int64_t m = ad[rank - 2];
  const int64_t k = ad[rank - 1], n = bd[rank - 1];
  if (bd[rank - 2] != k) {
    return InvalidArgument(
        fmt::format("{}: inner dims differ: A {} and B {}", what, ShapeToString(a), ShapeToString(b)));
  }
  Shape yd(rank);
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (ad[i] != bd[i] && ad[i] != 1 && bd[i] != 1) {
      return InvalidArgument(
          fmt::format("{}: batch dims of {} and {} do not broadcast", what, ShapeToString(a), ShapeToString(b)));
    }
    yd[i] = std::max(ad[i], bd[i]);
  }
  yd[rank - 2] = m;
  yd[rank - 1] = n;
  const std::vector<int64_t> as = RowMajorStrides(ad), bs = RowMajorStrides(bd), ys = RowMajorStrides(yd);
  std::vector<GemmOuterDim> dims;
  for (size_t i = 0; i + 2 < rank; ++i) dims.push_back({yd[i], ad[i] == 1 ? 0 : as[i], bd[i] == 1 ? 0 : bs[i], ys[i]});
  std::vector<GemmOuterDim> merged = MergeBatchDims(dims);
  // A batch of contiguous A against one shared B ([B, S, K] x [K, N]: every linear layer) is one taller
  // product, which cuBLASLt tiles better than a batch of short ones.
  if (merged.size() == 1 && merged[0].b == 0 && merged[0].a == m * k && merged[0].y == m * n) {
    m *= merged[0].size;
    merged.clear();
  }
  plan.m = static_cast<uint64_t>(n);
  plan.n = static_cast<uint64_t>(m);
  plan.k = static_cast<uint64_t>(k);
  plan.trans_a = plan.trans_b = CUBLAS_OP_N;
  // cuBLASLt's A is ONNX B: row-major [K, N] = column-major N x K; its B is ONNX A: column-major K x M.
  plan.a_rows = static_cast<uint64_t>(n);
  plan.a_cols = static_cast<uint64_t>(k);
  plan.lda = n;
  plan.b_rows = static_cast<uint64_t>(k);
  plan.b_cols = static_cast<uint64_t>(m);
  plan.ldb = k;
  plan.ldc = n;
  if (!merged.empty()) {
    // The innermost dim is cuBLASLt's strided batch (stride 0 broadcasts); the rest loop on the host.
    const GemmOuterDim inner = merged.back();
    merged.pop_back();
    if (inner.size > INT32_MAX) {
      return Unsupported(fmt::format("{}: batch of {} (cuBLASLt counts batches in int32)", what, inner.size));
    }
    plan.batch = static_cast<int32_t>(inner.size);
    plan.stride_a = inner.b;
    plan.stride_b = inner.a;
    plan.stride_c = inner.y;
    plan.outer = std::move(merged);
  }
  plan.alpha = 1.0f;
  plan.beta = 0.0f;
  return plan;
}

Result<GemmPlan> PlanGemm(const Shape& a, const Shape& b, const Shape* c, const GemmAttrs& attrs, DType storage,
                          Precision precision, std::string_view what) {
  GemmPlan plan;
  if (Status s = PlanTypes(precision, storage, plan); !s.ok())
    return Unsupported(fmt::format("{}: {}", what, s.message()));
  if (a.size() != 2 || b.size() != 2) return InvalidArgument(fmt::format("{}: A and B must be 2-D", what));
  RETURN_IF_ERROR(RequireNonEmpty(a, what, "A"));
  RETURN_IF_ERROR(RequireNonEmpty(b, what, "B"));
  const bool ta = attrs.trans_a, tb = attrs.trans_b;
  const int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1], n = tb ? b[0] : b[1];
  if ((tb ? b[1] : b[0]) != k) {
    return InvalidArgument(
        fmt::format("{}: inner dims differ: A {} and B {}", what, ShapeToString(a), ShapeToString(b)));
  }
  plan.m = static_cast<uint64_t>(n);
  plan.n = static_cast<uint64_t>(m);
  plan.k = static_cast<uint64_t>(k);
  // A transposed ONNX operand is the untransposed column-major one: cuBLASLt reads it with OP_T.
  plan.trans_a = tb ? CUBLAS_OP_T : CUBLAS_OP_N;  // ONNX B: [K, N] is column-major N x K; [N, K] is K x N
  plan.a_rows = static_cast<uint64_t>(tb ? k : n);
  plan.a_cols = static_cast<uint64_t>(tb ? n : k);
  plan.lda = tb ? k : n;
  plan.trans_b = ta ? CUBLAS_OP_T : CUBLAS_OP_N;  // ONNX A: [M, K] is column-major K x M; [K, M] is M x K
  plan.b_rows = static_cast<uint64_t>(ta ? m : k);
  plan.b_cols = static_cast<uint64_t>(ta ? k : m);
  plan.ldb = ta ? m : k;
  plan.ldc = n;
  plan.alpha = attrs.alpha;
  plan.beta = 0.0f;
  if (c == nullptr || attrs.beta == 0.0f) return plan;  // beta 0: ONNX ignores C (even NaNs in it)
  const Shape& cs = *c;
  const int64_t rows = cs.size() == 2 ? cs[0] : 1, cols = cs.empty() ? 1 : cs.back();
  if (cs.size() > 2 || (rows != 1 && rows != m) || (cols != 1 && cols != n)) {
    return InvalidArgument(fmt::format("{}: C {} does not broadcast to [{}, {}]", what, ShapeToString(cs), m, n));
  }
  RETURN_IF_ERROR(RequireNonEmpty(cs, what, "C"));
  if (rows == m && cols == n) {
    plan.c_mode = GemmCMode::kMatrix;
    plan.beta = attrs.beta;
  } else if (rows == 1 && cols == n && attrs.beta == 1.0f) {
    // A row added to every row of Y is cuBLASLt's bias (one value per row of its column-major D).
    plan.c_mode = GemmCMode::kBias;
    plan.epilogue = CUBLASLT_EPILOGUE_BIAS;
  } else {
    plan.c_mode = GemmCMode::kBroadcast;
    plan.c_shape = {rows, cols};
    plan.beta = attrs.beta;
  }
  return plan;
}

namespace {

// ---- Running a plan.

constexpr size_t kWorkspaceBytes = 32u << 20;

// One cuBLASLt handle per GPU for the process: creating one costs milliseconds and the handle holds no
// stream, so every kernel on that GPU shares it. Never destroyed (the library may be gone at exit).
Result<cublasLtHandle_t> SharedHandle(const CublasLt* lt, CudaContext& ctx, std::string_view what) {
  static std::mutex mu;
  static std::map<int, cublasLtHandle_t> handles;
  std::lock_guard<std::mutex> lock(mu);
  auto it = handles.find(ctx.runtime().index());
  if (it != handles.end()) return it->second;
  RETURN_IF_ERROR(ctx.runtime().Activate());
  cublasLtHandle_t handle = nullptr;
  RETURN_IF_ERROR(CheckCublas(lt, lt->Create(&handle), what, "cublasLtCreate"));
  handles.emplace(ctx.runtime().index(), handle);
  return handle;
}

template <typename T, typename Destroy>
struct Owned {
  T value = nullptr;
  Destroy destroy = nullptr;
  Owned() = default;
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() {
    if (value != nullptr && destroy != nullptr) destroy(value);
  }
};

using OwnedDesc = Owned<cublasLtMatmulDesc_t, decltype(&::cublasLtMatmulDescDestroy)>;
using OwnedLayout = Owned<cublasLtMatrixLayout_t, decltype(&::cublasLtMatrixLayoutDestroy)>;
using OwnedPref = Owned<cublasLtMatmulPreference_t, decltype(&::cublasLtMatmulPreferenceDestroy)>;

// The largest power of two up to 256 dividing `address` (cuBLASLt picks vector widths from it).
uint32_t AlignmentOf(uintptr_t address) {
  if (address == 0) return 256;
  return static_cast<uint32_t>(std::min<uintptr_t>(address & (~address + 1), 256));
}

class CublasLtGemmKernel final : public IKernel {
 public:
  CublasLtGemmKernel(CudaContext* ctx, const CublasLt* lt, GemmPlan plan, std::vector<Shape> shapes, std::string what)
      : ctx_(ctx), lt_(lt), plan_(std::move(plan)), shapes_(std::move(shapes)), what_(std::move(what)) {}

  // Descriptors are host objects: made once here, no GPU needed.
  Status Init() {
    const GemmPlan& p = plan_;
    desc_.destroy = lt_->MatmulDescDestroy;
    RETURN_IF_ERROR(Lt(lt_->MatmulDescCreate(&desc_.value, p.compute, p.scale_type), "cublasLtMatmulDescCreate"));
    RETURN_IF_ERROR(SetDesc(CUBLASLT_MATMUL_DESC_TRANSA, p.trans_a));
    RETURN_IF_ERROR(SetDesc(CUBLASLT_MATMUL_DESC_TRANSB, p.trans_b));
    const uint32_t epilogue = p.epilogue;
    RETURN_IF_ERROR(SetDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue));
    RETURN_IF_ERROR(MakeLayout(a_, p.a_rows, p.a_cols, p.lda, p.stride_a));
    RETURN_IF_ERROR(MakeLayout(b_, p.b_rows, p.b_cols, p.ldb, p.stride_b));
    RETURN_IF_ERROR(MakeLayout(c_, p.m, p.n, p.ldc, p.stride_c));
    return Status();
  }

  Status Run(KernelContext& kc) override {
    for (size_t i = 0; i < shapes_.size(); ++i) {
      const Tensor* in = kc.input(i);
      if (in == nullptr || in->shape() != shapes_[i]) {
        return InvalidArgument(fmt::format("{}: input {} is {} at run time, planned for {}", what_, i,
                                           in == nullptr ? "missing" : ShapeToString(in->shape()),
                                           ShapeToString(shapes_[i])));
      }
    }
    const GemmPlan& p = plan_;
    RETURN_IF_ERROR(ctx_->runtime().Activate());
    ASSIGN_OR_RETURN(cublasLtHandle_t handle, SharedHandle(lt_, *ctx_, what_));
    ASSIGN_OR_RETURN(void* workspace, ctx_->Workspace(kWorkspaceBytes));
    // cuBLASLt's A is ONNX's B and the other way round (see cublaslt_api.h).
    auto* onnx_a = Ptr<char>(kc.device_input(0));
    auto* onnx_b = Ptr<char>(kc.device_input(1));
    auto* y = Ptr<char>(kc.device_output(0));
    const char* c = y;  // not read when beta is 0, but cuBLASLt wants a pointer
    if (p.c_mode == GemmCMode::kMatrix) c = Ptr<char>(kc.device_input(2));
    if (p.c_mode == GemmCMode::kBroadcast) RETURN_IF_ERROR(BroadcastC(Ptr<char>(kc.device_input(2)), y));
    if (p.c_mode == GemmCMode::kBias) {
      const void* bias = Ptr<void>(kc.device_input(2));
      RETURN_IF_ERROR(SetDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias));
    }

    // The pointers of every call (host loops over batch dims that do not merge), and the alignment they
    // all share, which the algorithm must assume.
    const size_t es = DTypeSize(p.storage);
    const int64_t count = p.OuterCount();
    uint32_t align = 256;
    for (const void* ptr : {static_cast<const void*>(onnx_a), static_cast<const void*>(onnx_b),
                            static_cast<const void*>(c), static_cast<const void*>(y)}) {
      align = std::min(align, AlignmentOf(reinterpret_cast<uintptr_t>(ptr)));
    }
    if (p.c_mode == GemmCMode::kBias) {
      align = std::min(align, AlignmentOf(reinterpret_cast<uintptr_t>(Ptr<void>(kc.device_input(2)))));
    }
    for (const GemmOuterDim& d : p.outer) {
      for (int64_t stride : {d.a, d.b, d.y}) align = std::min(align, AlignmentOf(static_cast<uintptr_t>(stride) * es));
    }
    if (!have_algo_ || align < algo_align_) RETURN_IF_ERROR(ChooseAlgo(handle, align));

    for (int64_t call = 0; call < count; ++call) {
      int64_t off_a = 0, off_b = 0, off_y = 0, rest = call;
      for (size_t i = p.outer.size(); i-- > 0;) {
        const GemmOuterDim& d = p.outer[i];
        const int64_t idx = rest % d.size;
        rest /= d.size;
        off_a += idx * d.a;
        off_b += idx * d.b;
        off_y += idx * d.y;
      }
      char* yd = y + off_y * static_cast<int64_t>(es);
      const char* cd = p.c_mode == GemmCMode::kMatrix ? c : yd;
      RETURN_IF_ERROR(Lt(lt_->Matmul(handle, desc_.value, &p.alpha, onnx_b + off_b * static_cast<int64_t>(es), a_.value,
                                     onnx_a + off_a * static_cast<int64_t>(es), b_.value, &p.beta, cd, c_.value, yd,
                                     c_.value, &algo_, workspace, kWorkspaceBytes, ctx_->stream()),
                         "cublasLtMatmul"));
    }
    return Status();
  }

  bool InputOnDevice(size_t i) const override { return i < shapes_.size(); }
  bool OutputOnDevice(size_t) const override { return true; }

 private:
  Status Lt(cublasStatus_t status, std::string_view call) const { return CheckCublas(lt_, status, what_, call); }

  template <typename T>
  Status SetDesc(cublasLtMatmulDescAttributes_t attr, const T& value) {
    return Lt(lt_->MatmulDescSetAttribute(desc_.value, attr, &value, sizeof(value)), "cublasLtMatmulDescSetAttribute");
  }

  Status MakeLayout(OwnedLayout& layout, uint64_t rows, uint64_t cols, int64_t ld, int64_t stride) {
    layout.destroy = lt_->MatrixLayoutDestroy;
    RETURN_IF_ERROR(
        Lt(lt_->MatrixLayoutCreate(&layout.value, plan_.data_type, rows, cols, ld), "cublasLtMatrixLayoutCreate"));
    if (plan_.batch == 1) return Status();
    const int32_t batch = plan_.batch;
    RETURN_IF_ERROR(
        Lt(lt_->MatrixLayoutSetAttribute(layout.value, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)),
           "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)"));
    return Lt(lt_->MatrixLayoutSetAttribute(layout.value, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                            sizeof(stride)),
              "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
  }

  Status ChooseAlgo(cublasLtHandle_t handle, uint32_t align) {
    OwnedPref pref;
    pref.destroy = lt_->MatmulPreferenceDestroy;
    RETURN_IF_ERROR(Lt(lt_->MatmulPreferenceCreate(&pref.value), "cublasLtMatmulPreferenceCreate"));
    const uint64_t ws = kWorkspaceBytes;
    RETURN_IF_ERROR(
        Lt(lt_->MatmulPreferenceSetAttribute(pref.value, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
           "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)"));
    for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
      RETURN_IF_ERROR(Lt(lt_->MatmulPreferenceSetAttribute(pref.value, attr, &align, sizeof(align)),
                         "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT)"));
    }
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    RETURN_IF_ERROR(Lt(lt_->MatmulAlgoGetHeuristic(handle, desc_.value, a_.value, b_.value, c_.value, c_.value,
                                                   pref.value, 1, &result, &found),
                       "cublasLtMatmulAlgoGetHeuristic"));
    if (found == 0) {
      return Unsupported(
          fmt::format("{}: cublasLtMatmulAlgoGetHeuristic found no algorithm for {}", what_, plan_.Describe()));
    }
    algo_ = result.algo;
    algo_align_ = align;
    have_algo_ = true;
    return Status();
  }

  // Fills Y with C broadcast to [M, N] by copies that double what is already written, so that cuBLASLt can
  // then read Y as C in place (it has no broadcasting C of its own).
  Status BroadcastC(const char* c, char* y) {
    const GemmPlan& p = plan_;
    const size_t es = DTypeSize(p.storage);
    const auto rows = static_cast<size_t>(p.n), cols = static_cast<size_t>(p.m);  // ONNX M, N
    const auto crows = static_cast<size_t>(p.c_shape[0]), ccols = static_cast<size_t>(p.c_shape[1]);
    cudaStream_t s = ctx_->stream();
    const std::string what = what_ + ": broadcast of C";
    if (crows == rows && ccols == 1) {
      // Column 0 from C, then columns doubled.
      RETURN_IF_ERROR(Check(cudaMemcpy2DAsync(y, cols * es, c, es, es, rows, cudaMemcpyDeviceToDevice, s), what));
      for (size_t done = 1; done < cols; done *= 2) {
        const size_t n = std::min(done, cols - done);
        RETURN_IF_ERROR(
            Check(cudaMemcpy2DAsync(y + done * es, cols * es, y, cols * es, n * es, rows, cudaMemcpyDeviceToDevice, s),
                  what));
      }
      return Status();
    }
    // A row (or one value, a row of one) written once and doubled along the flat buffer.
    const size_t unit = crows * ccols;  // 1 or N elements
    const size_t total = rows * cols;
    RETURN_IF_ERROR(Check(cudaMemcpyAsync(y, c, unit * es, cudaMemcpyDeviceToDevice, s), what));
    for (size_t done = unit; done < total; done *= 2) {
      const size_t n = std::min(done, total - done);
      RETURN_IF_ERROR(Check(cudaMemcpyAsync(y + done * es, y, n * es, cudaMemcpyDeviceToDevice, s), what));
    }
    return Status();
  }

  CudaContext* ctx_;
  const CublasLt* lt_;
  GemmPlan plan_;
  std::vector<Shape> shapes_;  // the inputs' shapes the plan was made for
  std::string what_;
  OwnedDesc desc_;
  OwnedLayout a_, b_, c_;  // c_ is D's layout too
  cublasLtMatmulAlgo_t algo_{};
  uint32_t algo_align_ = 0;
  bool have_algo_ = false;
};

// Inputs `count` (the present ones) must share one float storage type; returns it.
Result<DType> OperandStorage(const KernelInit& init, CudaContext& ctx, size_t count) {
  DType dtype = DType::kUndefined;
  for (size_t i = 0; i < count && i < init.inputs.size(); ++i) {
    const ValueInfo* in = init.inputs[i];
    if (in == nullptr) continue;
    if (dtype == DType::kUndefined) dtype = in->dtype;
    if (in->dtype != dtype) {
      return Unsupported(fmt::format("{}: mixed operand types {} and {}", init.node.Describe(), DTypeName(dtype),
                                     DTypeName(in->dtype)));
    }
  }
  return ctx.StorageType(dtype);
}

Result<std::unique_ptr<IKernel>> Make(CudaContext* ctx, GemmPlan plan, std::vector<Shape> shapes,
                                      const std::string& what) {
  ASSIGN_OR_RETURN(const CublasLt* lt, LoadCublasLt());
  auto kernel = std::make_unique<CublasLtGemmKernel>(ctx, lt, std::move(plan), std::move(shapes), what);
  RETURN_IF_ERROR(kernel->Init());
  return std::unique_ptr<IKernel>(std::move(kernel));
}

}  // namespace

Result<std::unique_ptr<IKernel>> CreateMatMul(const KernelInit& init) {
  ASSIGN_OR_RETURN(CudaContext * ctx, RequireStaticContext(init));
  const std::string what = init.node.Describe();
  if (init.inputs.size() < 2 || init.inputs[0] == nullptr || init.inputs[1] == nullptr) {
    return InvalidArgument(what + ": MatMul needs A and B");
  }
  ASSIGN_OR_RETURN(DType storage, OperandStorage(init, *ctx, 2));
  const Shape& a = init.inputs[0]->shape;
  const Shape& b = init.inputs[1]->shape;
  ASSIGN_OR_RETURN(GemmPlan plan, PlanMatMul(a, b, storage, init.precision, what));
  return Make(ctx, std::move(plan), {a, b}, what);
}

Result<std::unique_ptr<IKernel>> CreateGemm(const KernelInit& init) {
  ASSIGN_OR_RETURN(CudaContext * ctx, RequireStaticContext(init));
  const Node& node = init.node;
  const std::string what = node.Describe();
  if (init.inputs.size() < 2 || init.inputs[0] == nullptr || init.inputs[1] == nullptr) {
    return InvalidArgument(what + ": Gemm needs A and B");
  }
  ASSIGN_OR_RETURN(DType storage, OperandStorage(init, *ctx, 3));
  const ValueInfo* c = init.inputs.size() > 2 ? init.inputs[2] : nullptr;
  GemmAttrs attrs;
  attrs.trans_a = node.GetInt("transA", 0) != 0;
  attrs.trans_b = node.GetInt("transB", 0) != 0;
  attrs.alpha = node.GetFloat("alpha", 1.0f);
  attrs.beta = node.GetFloat("beta", 1.0f);
  std::vector<Shape> shapes = {init.inputs[0]->shape, init.inputs[1]->shape};
  ASSIGN_OR_RETURN(GemmPlan plan, PlanGemm(shapes[0], shapes[1], c != nullptr ? &c->shape : nullptr, attrs, storage,
                                           init.precision, what));
  // C is read only where the plan uses it; otherwise it stays off the device.
  if (plan.c_mode != GemmCMode::kNone) shapes.push_back(c->shape);
  return Make(ctx, std::move(plan), std::move(shapes), what);
}

}  // namespace chipfit::cuda
