// cuDNN 9 opened with dlopen (chipfit starts, and says why, where the library is missing), its error
// mapping, and the plan of one ONNX Conv / chipfit FusedConv on CUDA: pure arithmetic on shapes, attributes
// and precision that the host-side tests check without a GPU.
#pragma once

#include <cudnn.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/graph/graph.h"
#include "core/runtime/target.h"
#include "core/status.h"
#include "core/tensor/dtype.h"
#include "core/tensor/tensor.h"
#include "devices/cuda/ops/depthwise_launch.h"

namespace chipfit::cuda {

// The cuDNN entry points chipfit calls (the legacy convolution API, which cuDNN 9 keeps), resolved once
// per process. Typed from <cudnn.h> so that a signature change in a new release fails the build.
struct Cudnn {
  decltype(&::cudnnGetVersion) GetVersion = nullptr;
  decltype(&::cudnnGetErrorString) GetErrorString = nullptr;
  decltype(&::cudnnCreate) Create = nullptr;
  decltype(&::cudnnDestroy) Destroy = nullptr;
  decltype(&::cudnnSetStream) SetStream = nullptr;
  decltype(&::cudnnCreateTensorDescriptor) CreateTensorDescriptor = nullptr;
  decltype(&::cudnnSetTensor4dDescriptor) SetTensor4dDescriptor = nullptr;
  decltype(&::cudnnDestroyTensorDescriptor) DestroyTensorDescriptor = nullptr;
  decltype(&::cudnnCreateFilterDescriptor) CreateFilterDescriptor = nullptr;
  decltype(&::cudnnSetFilter4dDescriptor) SetFilter4dDescriptor = nullptr;
  decltype(&::cudnnDestroyFilterDescriptor) DestroyFilterDescriptor = nullptr;
  decltype(&::cudnnCreateConvolutionDescriptor) CreateConvolutionDescriptor = nullptr;
  decltype(&::cudnnSetConvolution2dDescriptor) SetConvolution2dDescriptor = nullptr;
  decltype(&::cudnnSetConvolutionGroupCount) SetConvolutionGroupCount = nullptr;
  decltype(&::cudnnSetConvolutionMathType) SetConvolutionMathType = nullptr;
  decltype(&::cudnnDestroyConvolutionDescriptor) DestroyConvolutionDescriptor = nullptr;
  decltype(&::cudnnGetConvolution2dForwardOutputDim) GetConvolution2dForwardOutputDim = nullptr;
  decltype(&::cudnnGetConvolutionForwardAlgorithmMaxCount) GetConvolutionForwardAlgorithmMaxCount = nullptr;
  decltype(&::cudnnGetConvolutionForwardAlgorithm_v7) GetConvolutionForwardAlgorithm_v7 = nullptr;
  decltype(&::cudnnGetConvolutionForwardWorkspaceSize) GetConvolutionForwardWorkspaceSize = nullptr;
  decltype(&::cudnnConvolutionForward) ConvolutionForward = nullptr;
  decltype(&::cudnnConvolutionBiasActivationForward) ConvolutionBiasActivationForward = nullptr;
  decltype(&::cudnnCreateActivationDescriptor) CreateActivationDescriptor = nullptr;
  decltype(&::cudnnSetActivationDescriptor) SetActivationDescriptor = nullptr;
  decltype(&::cudnnDestroyActivationDescriptor) DestroyActivationDescriptor = nullptr;
};

// dlopens libcudnn.so.9 (then libcudnn.so) once per process; needs no GPU. Missing library or entry
// point: Unsupported "cuDNN not found: <dlerror>". The library stays loaded for the process.
Result<const Cudnn*> LoadCudnn();

// "CUDNN_STATUS_NOT_SUPPORTED (3000)" plus cudnnGetErrorString's text when `api` is loaded (null: chipfit's
// own names only).
std::string CudnnStatusText(const Cudnn* api, cudnnStatus_t status);
// "<what>: <call>: <CudnnStatusText>": Unsupported for what the library or GPU cannot do (the
// NOT_SUPPORTED family, ARCH_MISMATCH, ALLOC_FAILED, NOT_INITIALIZED: no usable GPU), Internal for the rest.
Status CudnnError(const Cudnn* api, cudnnStatus_t status, std::string_view what, std::string_view call);
inline Status CheckCudnn(const Cudnn* api, cudnnStatus_t status, std::string_view what, std::string_view call) {
  return status == CUDNN_STATUS_SUCCESS ? Status() : CudnnError(api, status, what, call);
}

// ---- The plan of one Conv / FusedConv (implemented in ops/conv_cuda.cpp).
//
// Tensors are the executor's plain NCHW (Layout::kPlain) in the context's storage type and are described
// to cuDNN as NCHW. NHWC would let cuDNN's tensor-core kernels skip their internal transposes (faster
// under fp16/bf16); it needs layout propagation through the graph and is left for a later change.

enum class ConvPath : uint8_t {
  kCudnn,       // cudnnConvolutionForward, then the epilogue kernel when anything follows the convolution
  kCudnnFused,  // cudnnConvolutionBiasActivationForward: bias [+ Z of the output's shape] [+ Relu]
  kDepthwise,   // chipfit's direct depthwise kernel with the epilogue (depthwise.cu)
};

struct ConvPlan {
  // A 1-D convolution is the 2-D one of height 1 (kh = 1, stride 1, no pads along H).
  int spatial_rank = 2;
  int64_t n = 1, c = 1, m = 1, group = 1;
  int64_t ih = 1, iw = 1, kh = 1, kw = 1, oh = 1, ow = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  // The ONNX pads after auto_pad (begin and end per spatial dim).
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  // cuDNN pads both sides alike: it gets min(begin, end) per dim, and the rest of an asymmetric padding is
  // written explicitly into a padded copy of X (extra_*, zero when the pads are symmetric).
  int64_t cudnn_ph = 0, cudnn_pw = 0;
  int64_t extra_top = 0, extra_left = 0, extra_bottom = 0, extra_right = 0;

  ConvPath path = ConvPath::kCudnn;
  bool has_bias = false, has_z = false;
  conv::ZWalk z_walk;
  conv::Epilogue epilogue;
  // kCudnnFused: RELU or IDENTITY (IDENTITY runs only with IMPLICIT_PRECOMP_GEMM, a cuDNN restriction).
  cudnnActivationMode_t fused_activation = CUDNN_ACTIVATION_IDENTITY;
  // kCudnn: whether the epilogue kernel runs after the convolution.
  bool needs_epilogue = false;

  // Types: storage of every tensor, cuDNN's data, compute and math types.
  DType storage = DType::kF32;
  conv::Store store = conv::Store::kF32;
  cudnnDataType_t data_type = CUDNN_DATA_FLOAT;
  cudnnDataType_t compute_type = CUDNN_DATA_FLOAT;
  cudnnMathType_t math = CUDNN_FMA_MATH;

  bool ExplicitPad() const { return extra_top + extra_left + extra_bottom + extra_right > 0; }
  int64_t PaddedH() const { return ih + extra_top + extra_bottom; }
  int64_t PaddedW() const { return iw + extra_left + extra_right; }
  int64_t OutputElements() const { return n * m * oh * ow; }
  // "2-D 3x3 s2 g1 [1,32,112,112]->[1,64,56,56] f16 cudnn+epilogue", for messages.
  std::string Describe() const;
};

// Storage, data, compute and math type of a precision, or Unsupported with the reason: fp32 keeps
// FMA math (no TF32), tf32 cuDNN's default math (TF32 tensor cores on Ampere and later), fp16 and bf16
// tensor-op math; compute is f32 throughout. int8 is refused (it needs quantised weights and
// per-channel scales).
Status PlanConvTypes(Precision precision, DType storage, ConvPlan& plan);

// FusedConv's activation, clamp and linear tail (a plain Conv has none).
Result<conv::Epilogue> ReadConvEpilogue(const Node& node);

// Whether a grouped convolution is depthwise: one input and one output channel per group (multiplier 1).
bool IsDepthwise(int64_t c, int64_t m, int64_t group);

// The plan of `node` (Conv or FusedConv) on X and W, with the optional bias B and residual Z (null when
// absent); `storage` is the context's storage type of the float inputs. InvalidArgument for inconsistent
// shapes, Unsupported (with the reason) for what the CUDA device does not run.
Result<ConvPlan> PlanConv(const Node& node, const Shape& x, const Shape& w, const Shape* bias, const Shape* z,
                          DType storage, Precision precision);

// The cuDNN descriptors of a plan: host objects, made without a GPU, destroyed with this.
class ConvDescriptors {
 public:
  ConvDescriptors() = default;
  ConvDescriptors(const ConvDescriptors&) = delete;
  ConvDescriptors& operator=(const ConvDescriptors&) = delete;
  ~ConvDescriptors();

  // X (the padded copy where the plan pads explicitly), W, Y, the bias [1, M, 1, 1] and the convolution;
  // the activation for kCudnnFused. Then checks cuDNN's output dims against the plan's.
  Status Make(const Cudnn* api, const ConvPlan& plan, std::string_view what);
  // cudnnGetConvolution2dForwardOutputDim of the descriptors: N, C, H, W.
  Result<std::array<int, 4>> OutputDims(std::string_view what) const;

  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t activation = nullptr;

 private:
  const Cudnn* api_ = nullptr;
};

}  // namespace chipfit::cuda
