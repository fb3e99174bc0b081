// The one explicit list of CUDA kernels (explicit tables, not self-registration). Every implementation
// is listed for all five precisions: the storage type (f32, or f16/bf16 under fp16/bf16) is the
// context's, and the GEMM family picks its compute type from KernelInit::precision.
#include "devices/cuda/cuda_kernels.h"

#include "devices/cuda/ops/cuda_ops.h"

namespace chipfit {
namespace {

constexpr Precision kPrecisions[] = {Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16,
                                     Precision::kInt8};

struct Row {
  const char* op;
  const char* domain;
  KernelImpl impl;
};

std::vector<Row> Rows() {
  std::vector<Row> rows;
  auto add = [&rows](const char* op, KernelImpl impl, const char* domain = "") { rows.push_back({op, domain, impl}); };

  // ---- GEMM family: cuBLASLt
  add("MatMul", {"cublaslt:matmul", cuda::CreateMatMul});
  add("Gemm", {"cublaslt:gemm", cuda::CreateGemm});
  add("Conv", {"cudnn:conv", cuda::CreateConv});
  add("FusedConv", {"cudnn:conv", cuda::CreateFusedConv}, "com.chipfit");

  // ---- elementwise (one n-ary broadcasting kernel)
  for (const char* op : {"Relu",  "LeakyRelu", "Clip",     "Sigmoid", "HardSigmoid", "HardSwish",  "Tanh",
                         "Elu",   "Selu",      "Celu",     "Gelu",    "Exp",         "Log",        "Sqrt",
                         "Abs",   "Neg",       "Softplus", "Mish",    "Round",       "Reciprocal", "Erf",
                         "Floor", "Ceil",      "Sign",     "Sin",     "Cos",         "Softsign",   "ThresholdedRelu"}) {
    add(op, {"cuda:eltwise", cuda::CreateUnary});
  }
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "PRelu"}) add(op, {"cuda:binary", cuda::CreateBinary});
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) add(op, {"cuda:variadic", cuda::CreateVariadic});
  add("Where", {"cuda:where", cuda::CreateWhere});
  add("Cast", {"cuda:cast", cuda::CreateCast});

  // ---- softmax, reductions, normalisation
  add("Softmax", {"cuda:softmax", cuda::CreateSoftmax});
  add("LogSoftmax", {"cuda:softmax", cuda::CreateSoftmax});
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                         "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"}) {
    add(op, {"cuda:reduce", cuda::CreateReduce});
  }
  add("LayerNormalization", {"cuda:layer_norm", cuda::CreateLayerNorm});
  add("InstanceNormalization", {"cuda:instance_norm", cuda::CreateInstanceNorm});
  add("BatchNormalization", {"cuda:batch_norm", cuda::CreateBatchNorm});

  // ---- pooling, resize and data movement (data.cu)
  add("MaxPool", {"cuda:pool", cuda::CreateMaxPool});
  add("AveragePool", {"cuda:pool", cuda::CreateAveragePool});
  add("GlobalMaxPool", {"cuda:global_pool", cuda::CreateGlobalPool});
  add("GlobalAveragePool", {"cuda:global_pool", cuda::CreateGlobalPool});
  add("Resize", {"cuda:resize", cuda::CreateResize});
  add("Upsample", {"cuda:resize", cuda::CreateResize});
  add("Transpose", {"cuda:transpose", cuda::CreateTranspose});
  add("Concat", {"cuda:concat", cuda::CreateConcat});
  add("Slice", {"cuda:slice", cuda::CreateSlice});
  add("Gather", {"cuda:gather", cuda::CreateGather});
  add("Pad", {"cuda:pad", cuda::CreatePad});

  // ---- data movement
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"}) {
    add(op, {"cuda:copy", cuda::CreateCopy});
  }
  return rows;
}

KernelTable BuildTable() {
  KernelTable t;
  for (const Row& row : Rows()) {
    for (Precision p : kPrecisions) t.Add(row.op, row.domain, DeviceKind::kCuda, p, row.impl);
  }
  return t;
}

}  // namespace

const KernelTable& CudaKernels() {
  static const KernelTable table = BuildTable();
  return table;
}

std::vector<std::string> CudaKernelOps() {
  std::vector<std::string> ops;
  for (const Row& row : Rows()) ops.emplace_back(row.op);
  return ops;
}

}  // namespace chipfit
