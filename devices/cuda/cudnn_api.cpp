// The dlopen'ed cuDNN and its error mapping.
#include "devices/cuda/cudnn_api.h"

#include <fmt/format.h>

#include "devices/cuda/dynamic_library.h"

namespace chipfit::cuda {
namespace {

// Names for messages made before (or without) the library: the status categories and the codes chipfit
// meets most; cudnnGetErrorString names the rest once the library is loaded.
const char* OwnStatusName(cudnnStatus_t status) {
  switch (static_cast<int>(status)) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED: return "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_NOT_SUPPORTED_SHAPE: return "CUDNN_STATUS_NOT_SUPPORTED_SHAPE";
    case CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE: return "CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE";
    case CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH: return "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH";
    case CUDNN_STATUS_INTERNAL_ERROR: return "CUDNN_STATUS_INTERNAL_ERROR";
    case CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED:
      return "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED";
    case CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED:
      return "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED";
    case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
    default: break;
  }
  switch (CUDNN_STATUS_CATEGORY(static_cast<int>(status))) {
    case 1000: return "CUDNN_STATUS_NOT_INITIALIZED (category)";
    case 2000: return "CUDNN_STATUS_BAD_PARAM (category)";
    case 3000: return "CUDNN_STATUS_NOT_SUPPORTED (category)";
    case 4000: return "CUDNN_STATUS_INTERNAL_ERROR (category)";
    case 5000: return "CUDNN_STATUS_EXECUTION_FAILED (category)";
    default: return "CUDNN_STATUS_UNKNOWN";
  }
}

struct Loaded {
  Cudnn api;
  Status status;
};

Loaded Open() {
  Loaded out;
  auto opened = DynamicLibrary::Open("cuDNN", {"libcudnn.so.9", "libcudnn.so"});
  if (!opened.ok()) {
    out.status = opened.status();
    return out;
  }
  DynamicLibrary& lib = *opened;
  Cudnn& a = out.api;
  lib.Resolve("cudnnGetVersion", a.GetVersion);
  lib.Resolve("cudnnGetErrorString", a.GetErrorString);
  lib.Resolve("cudnnCreate", a.Create);
  lib.Resolve("cudnnDestroy", a.Destroy);
  lib.Resolve("cudnnSetStream", a.SetStream);
  lib.Resolve("cudnnCreateTensorDescriptor", a.CreateTensorDescriptor);
  lib.Resolve("cudnnSetTensor4dDescriptor", a.SetTensor4dDescriptor);
  lib.Resolve("cudnnDestroyTensorDescriptor", a.DestroyTensorDescriptor);
  lib.Resolve("cudnnCreateFilterDescriptor", a.CreateFilterDescriptor);
  lib.Resolve("cudnnSetFilter4dDescriptor", a.SetFilter4dDescriptor);
  lib.Resolve("cudnnDestroyFilterDescriptor", a.DestroyFilterDescriptor);
  lib.Resolve("cudnnCreateConvolutionDescriptor", a.CreateConvolutionDescriptor);
  lib.Resolve("cudnnSetConvolution2dDescriptor", a.SetConvolution2dDescriptor);
  lib.Resolve("cudnnSetConvolutionGroupCount", a.SetConvolutionGroupCount);
  lib.Resolve("cudnnSetConvolutionMathType", a.SetConvolutionMathType);
  lib.Resolve("cudnnDestroyConvolutionDescriptor", a.DestroyConvolutionDescriptor);
  lib.Resolve("cudnnGetConvolution2dForwardOutputDim", a.GetConvolution2dForwardOutputDim);
  lib.Resolve("cudnnGetConvolutionForwardAlgorithmMaxCount", a.GetConvolutionForwardAlgorithmMaxCount);
  lib.Resolve("cudnnGetConvolutionForwardAlgorithm_v7", a.GetConvolutionForwardAlgorithm_v7);
  lib.Resolve("cudnnGetConvolutionForwardWorkspaceSize", a.GetConvolutionForwardWorkspaceSize);
  lib.Resolve("cudnnConvolutionForward", a.ConvolutionForward);
  lib.Resolve("cudnnConvolutionBiasActivationForward", a.ConvolutionBiasActivationForward);
  lib.Resolve("cudnnCreateActivationDescriptor", a.CreateActivationDescriptor);
  lib.Resolve("cudnnSetActivationDescriptor", a.SetActivationDescriptor);
  lib.Resolve("cudnnDestroyActivationDescriptor", a.DestroyActivationDescriptor);
  out.status = lib.Finish();
  if (!out.status.ok()) return out;
  if (a.GetVersion() / 10000 != CUDNN_MAJOR) {
    out.status = Unsupported(fmt::format("cuDNN not found: the loaded library is version {}, chipfit needs {}.x",
                                         a.GetVersion(), CUDNN_MAJOR));
  }
  return out;
}

bool IsUnsupportedStatus(cudnnStatus_t status) {
  const int code = static_cast<int>(status);
  return CUDNN_STATUS_CATEGORY(code) == CUDNN_STATUS_NOT_SUPPORTED || code == CUDNN_STATUS_NOT_INITIALIZED ||
         code == CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED || code == CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH ||
         code == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
         code == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
}

}  // namespace

Result<const Cudnn*> LoadCudnn() {
  static const Loaded loaded = Open();
  if (!loaded.status.ok()) return loaded.status;
  return &loaded.api;
}

std::string CudnnStatusText(const Cudnn* api, cudnnStatus_t status) {
  const char* name = api != nullptr && api->GetErrorString != nullptr ? api->GetErrorString(status) : nullptr;
  return fmt::format("{} ({})", name != nullptr && *name != '\0' ? name : OwnStatusName(status),
                     static_cast<int>(status));
}

Status CudnnError(const Cudnn* api, cudnnStatus_t status, std::string_view what, std::string_view call) {
  std::string message = fmt::format("{}: {}: {}", what, call, CudnnStatusText(api, status));
  return IsUnsupportedStatus(status) ? Unsupported(std::move(message)) : Internal(std::move(message));
}

}  // namespace chipfit::cuda
