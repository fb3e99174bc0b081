// The dlopen'ed cuBLASLt and its error mapping.
#include "devices/cuda/cublaslt_api.h"

#include <dlfcn.h>
#include <fmt/format.h>

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

template <typename Fn>
bool Resolve(void* lib, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (fn == nullptr && missing.empty()) missing = name;
  return fn != nullptr;
}

Loaded Open() {
  Loaded out;
  void* lib = nullptr;
  std::string errors;
  for (const char* name : {"libcublasLt.so.13", "libcublasLt.so"}) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) break;
    const char* err = dlerror();
    errors += errors.empty() ? "" : "; ";
    errors += err != nullptr ? err : name;
  }
  if (lib == nullptr) {
    out.status = Unsupported("cuBLASLt not found: " + errors);
    return out;
  }
  CublasLt& a = out.api;
  std::string missing;
  Resolve(lib, "cublasLtCreate", a.Create, missing);
  Resolve(lib, "cublasLtDestroy", a.Destroy, missing);
  Resolve(lib, "cublasLtGetVersion", a.GetVersion, missing);
  Resolve(lib, "cublasLtMatmulDescCreate", a.MatmulDescCreate, missing);
  Resolve(lib, "cublasLtMatmulDescDestroy", a.MatmulDescDestroy, missing);
  Resolve(lib, "cublasLtMatmulDescSetAttribute", a.MatmulDescSetAttribute, missing);
  Resolve(lib, "cublasLtMatrixLayoutCreate", a.MatrixLayoutCreate, missing);
  Resolve(lib, "cublasLtMatrixLayoutDestroy", a.MatrixLayoutDestroy, missing);
  Resolve(lib, "cublasLtMatrixLayoutSetAttribute", a.MatrixLayoutSetAttribute, missing);
  Resolve(lib, "cublasLtMatmulPreferenceCreate", a.MatmulPreferenceCreate, missing);
  Resolve(lib, "cublasLtMatmulPreferenceDestroy", a.MatmulPreferenceDestroy, missing);
  Resolve(lib, "cublasLtMatmulPreferenceSetAttribute", a.MatmulPreferenceSetAttribute, missing);
  Resolve(lib, "cublasLtMatmulAlgoGetHeuristic", a.MatmulAlgoGetHeuristic, missing);
  Resolve(lib, "cublasLtMatmul", a.Matmul, missing);
  if (!missing.empty()) {
    const char* err = dlerror();
    out.status = Unsupported(fmt::format("cuBLASLt not found: {} (the library lacks {})", err ? err : "", missing));
    dlclose(lib);
    return out;
  }
  std::string optional;  // absence is fine: CublasStatusText has its own table
  Resolve(lib, "cublasLtGetStatusName", a.GetStatusName, optional);
  Resolve(lib, "cublasLtGetStatusString", a.GetStatusString, optional);
  dlerror();  // clears the error a missing optional symbol left
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
