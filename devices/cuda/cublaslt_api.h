// cuBLASLt opened with dlopen (chipfit starts, and says why, where the library is missing), its error
// mapping, and the plan of one ONNX MatMul / Gemm as a cuBLASLt matmul: pure arithmetic on shapes and
// precision that the host-side tests check without a GPU.
#pragma once

#include <cublasLt.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/runtime/target.h"
#include "core/status.h"
#include "core/tensor/dtype.h"
#include "core/tensor/tensor.h"

namespace chipfit::cuda {

// The cuBLASLt entry points chipfit calls, resolved once per process. Typed from <cublasLt.h> so that a
// signature change in a new toolkit fails the build instead of the call.
struct CublasLt {
  decltype(&::cublasLtCreate) Create = nullptr;
  decltype(&::cublasLtDestroy) Destroy = nullptr;
  decltype(&::cublasLtGetVersion) GetVersion = nullptr;
  decltype(&::cublasLtMatmulDescCreate) MatmulDescCreate = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) MatmulDescDestroy = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) MatmulDescSetAttribute = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) MatrixLayoutCreate = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) MatrixLayoutDestroy = nullptr;
  decltype(&::cublasLtMatrixLayoutSetAttribute) MatrixLayoutSetAttribute = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) MatmulPreferenceCreate = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) MatmulPreferenceDestroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) MatmulPreferenceSetAttribute = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) MatmulAlgoGetHeuristic = nullptr;
  decltype(&::cublasLtMatmul) Matmul = nullptr;
  // Optional (older libraries lack them): the error mapper falls back to its own table.
  decltype(&::cublasLtGetStatusName) GetStatusName = nullptr;
  decltype(&::cublasLtGetStatusString) GetStatusString = nullptr;
};

// dlopens libcublasLt.so.13 (then libcublasLt.so) once per process; needs no GPU. Missing library or
// entry point: Unsupported "cuBLASLt not found: <dlerror>". The library stays loaded for the process.
Result<const CublasLt*> LoadCublasLt();

// "CUBLAS_STATUS_NOT_SUPPORTED (15): the functionality requested is not supported"; `lt` may be null
// (the names then come from chipfit's own table).
std::string CublasStatusText(const CublasLt* lt, cublasStatus_t status);
// "<what>: <call>: <CublasStatusText>": Unsupported for what the library or GPU cannot do
// (NOT_SUPPORTED, ARCH_MISMATCH, ALLOC_FAILED, NOT_INITIALIZED: no usable GPU), Internal for the rest.
Status CublasError(const CublasLt* lt, cublasStatus_t status, std::string_view what, std::string_view call);
inline Status CheckCublas(const CublasLt* lt, cublasStatus_t status, std::string_view what, std::string_view call) {
  return status == CUBLAS_STATUS_SUCCESS ? Status() : CublasError(lt, status, what, call);
}

// ---- The plan of one ONNX product on cuBLASLt (implemented in ops/gemm_cuda.cpp).
//
// cuBLASLt is column-major and ONNX row-major: a row-major [R, C] matrix is the column-major [C, R]
// matrix in the same bytes, so Y = A·B is computed as Yᵀ = Bᵀ·Aᵀ: cuBLASLt's operand A is ONNX's B
// and its operand B is ONNX's A, and D (column-major N x M) is Y row-major [M, N] with no copy.

// How Gemm's C reaches the product.
enum class GemmCMode {
  kNone,       // no C, or beta = 0
  kBias,       // a [N] / [1, N] row with beta 1: the bias epilogue (read by cuBLASLt per column of Y)
  kMatrix,     // a full [M, N]: cuBLASLt's C with beta
  kBroadcast,  // any other broadcast: copied into Y first, then Y is C (in place) with beta
};

// One extra loop around the cuBLASLt call for batch dims that do not merge into one strided batch
// (ONNX broadcasting such as [3, 1, …] x [1, 4, …]); element strides of ONNX A, ONNX B and Y.
struct GemmOuterDim {
  int64_t size = 1, a = 0, b = 0, y = 0;
};

struct GemmPlan {
  // cuBLASLt's m, n, k (m = ONNX N, n = ONNX M).
  uint64_t m = 1, n = 1, k = 1;
  // Operand layouts as stored (rows x cols, column-major, leading dim) and their operations.
  cublasOperation_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N;
  uint64_t a_rows = 1, a_cols = 1, b_rows = 1, b_cols = 1;
  int64_t lda = 1, ldb = 1, ldc = 1;  // D has ldc too
  // One strided batch (stride 0 broadcasts an operand), element units; stride_c is C's and D's.
  int32_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  // Further batch dims looped over on the host, outermost first.
  std::vector<GemmOuterDim> outer;
  // Types: storage of every operand, compute and scale.
  DType storage = DType::kF32;
  cudaDataType_t data_type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale_type = CUDA_R_32F;
  float alpha = 1.0f, beta = 0.0f;  // beta as cuBLASLt sees it (0 unless C is kMatrix / kBroadcast)
  GemmCMode c_mode = GemmCMode::kNone;
  Shape c_shape;  // kBroadcast: C's shape, as 2-D [rows, cols] with 1s where it broadcasts
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;

  int64_t OuterCount() const;
  // "m=33 n=17 k=65 batch=4 f16/32F bias", for messages.
  std::string Describe() const;
};

// The storage type, compute type and scale type of a precision, or Unsupported with the reason.
// `storage` is the context's storage type of the operands (f32, f16 under fp16, bf16 under bf16).
Status PlanTypes(Precision precision, DType storage, GemmPlan& plan);

// MatMul of A and B (numpy semantics: 1-D operands, broadcast batch dims). `what` names the node.
Result<GemmPlan> PlanMatMul(const Shape& a, const Shape& b, DType storage, Precision precision, std::string_view what);

struct GemmAttrs {
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 1.0f;
};
// Gemm of 2-D A and B with optional C (`c` null when absent).
Result<GemmPlan> PlanGemm(const Shape& a, const Shape& b, const Shape* c, const GemmAttrs& attrs, DType storage,
                          Precision precision, std::string_view what);

}  // namespace chipfit::cuda
