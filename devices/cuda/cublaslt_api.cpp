// The dlopen'ed cuBLASLt and its error mapping.
#include "devices/cuda/cublaslt_api.h"

#include <fmt/format.h>

#include "devices/cuda/dynamic_library.h"

namespace chipfit::cuda {
namespace {

// Names for libraries without cublasLtGetStatusName (and for messages made before the library loaded).
const char* OwnStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

struct Loaded {
  CublasLt api;
  Status status;
};

Loaded Open() {
  Loaded out;
  auto opened = DynamicLibrary::Open("cuBLASLt", {"libcublasLt.so.13", "libcublasLt.so"});
  if (!opened.ok()) {
    out.status = opened.status();
    return out;
  }
  DynamicLibrary& lib = *opened;
  CublasLt& a = out.api;
  lib.Resolve("cublasLtCreate", a.Create);
  lib.Resolve("cublasLtDestroy", a.Destroy);
  lib.Resolve("cublasLtGetVersion", a.GetVersion);
  lib.Resolve("cublasLtMatmulDescCreate", a.MatmulDescCreate);
  lib.Resolve("cublasLtMatmulDescDestroy", a.MatmulDescDestroy);
  lib.Resolve("cublasLtMatmulDescSetAttribute", a.MatmulDescSetAttribute);
  lib.Resolve("cublasLtMatrixLayoutCreate", a.MatrixLayoutCreate);
  lib.Resolve("cublasLtMatrixLayoutDestroy", a.MatrixLayoutDestroy);
  lib.Resolve("cublasLtMatrixLayoutSetAttribute", a.MatrixLayoutSetAttribute);
  lib.Resolve("cublasLtMatmulPreferenceCreate", a.MatmulPreferenceCreate);
  lib.Resolve("cublasLtMatmulPreferenceDestroy", a.MatmulPreferenceDestroy);
  lib.Resolve("cublasLtMatmulPreferenceSetAttribute", a.MatmulPreferenceSetAttribute);
  lib.Resolve("cublasLtMatmulAlgoGetHeuristic", a.MatmulAlgoGetHeuristic);
  lib.Resolve("cublasLtMatmul", a.Matmul);
  out.status = lib.Finish();
  if (!out.status.ok()) return out;
  // Optional: CublasStatusText has its own table.
  lib.ResolveOptional("cublasLtGetStatusName", a.GetStatusName);
  lib.ResolveOptional("cublasLtGetStatusString", a.GetStatusString);
  return out;
}

}  // namespace

Result<const CublasLt*> LoadCublasLt() {
  static const Loaded loaded = Open();
  if (!loaded.status.ok()) return loaded.status;
  return &loaded.api;
}

std::string CublasStatusText(const CublasLt* lt, cublasStatus_t status) {
  const char* name = lt != nullptr && lt->GetStatusName != nullptr ? lt->GetStatusName(status) : nullptr;
  const char* text = lt != nullptr && lt->GetStatusString != nullptr ? lt->GetStatusString(status) : nullptr;
  std::string out = fmt::format("{} ({})", name != nullptr ? name : OwnStatusName(status), static_cast<int>(status));
  if (text != nullptr && *text != '\0') out += fmt::format(": {}", text);
  return out;
}

Status CublasError(const CublasLt* lt, cublasStatus_t status, std::string_view what, std::string_view call) {
  std::string message = fmt::format("{}: {}: {}", what, call, CublasStatusText(lt, status));
  switch (status) {
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH:
    case CUBLAS_STATUS_ALLOC_FAILED:
    case CUBLAS_STATUS_NOT_INITIALIZED: return Unsupported(std::move(message));
    default: return Internal(std::move(message));
  }
}

}  // namespace chipfit::cuda
