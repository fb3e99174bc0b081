// The one explicit list of OpenCL kernels (STYLE.md: explicit tables, not self-registration).
// Every implementation is listed for fp32 and fp16: the storage type is a build option of the
// program, so one factory serves both.
#include "devices/opencl/opencl_kernels.h"

#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit {
namespace {

KernelTable BuildTable() {
  KernelTable t;
  auto add = [&t](const char* op, const char* domain, KernelImpl impl) {
    t.Add(op, domain, DeviceKind::kOpenCL, Precision::kFp32, impl);
    t.Add(op, domain, DeviceKind::kOpenCL, Precision::kFp16, impl);
  };
  const char* kFused = "com.chipfit";

  // ---- GEMM family
  add("MatMul", "", {"opencl:gemm", opencl::CreateMatMul});
  add("Gemm", "", {"opencl:gemm", opencl::CreateGemm});
  add("Conv", "", {"opencl:conv", opencl::CreateConv});
  add("FusedConv", kFused, {"opencl:conv", opencl::CreateFusedConv});
  add("ConvTranspose", "", {"opencl:conv_transpose", opencl::CreateConvTranspose});

  // ---- elementwise, pooling, softmax, normalisation, reductions
  for (const char* op : {"Relu",      "LeakyRelu", "Clip",  "Sigmoid", "HardSigmoid",
                         "HardSwish", "Tanh",      "Elu",   "Selu",    "Celu",
                         "Gelu",      "Exp",       "Log",   "Sqrt",    "Abs",
                         "Neg",       "Softplus",  "Mish",  "Round",   "Reciprocal",
                         "Erf",       "Softsign",  "Floor", "Ceil",    "ThresholdedRelu",
                         "Sign",      "Sin",       "Cos",   "Tan",     "Asin",
                         "Acos",      "Atan",      "Sinh",  "Cosh",    "Asinh",
                         "Acosh",     "Atanh"}) {
    add(op, "", {"opencl:eltwise", opencl::CreateUnary});
  }
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "PRelu"}) {
    add(op, "", {"opencl:binary", opencl::CreateBinary});
  }
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) add(op, "", {"opencl:variadic", opencl::CreateVariadic});
  add("Where", "", {"opencl:where", opencl::CreateWhere});
  add("MaxPool", "", {"opencl:pool", opencl::CreateMaxPool});
  add("AveragePool", "", {"opencl:pool", opencl::CreateAveragePool});
  add("GlobalMaxPool", "", {"opencl:global_pool", opencl::CreateGlobalMaxPool});
  add("GlobalAveragePool", "", {"opencl:global_pool", opencl::CreateGlobalAveragePool});
  add("Softmax", "", {"opencl:softmax", opencl::CreateSoftmax});
  add("LogSoftmax", "", {"opencl:softmax", opencl::CreateSoftmax});
  add("LayerNormalization", "", {"opencl:layer_norm", opencl::CreateLayerNorm});
  add("InstanceNormalization", "", {"opencl:instance_norm", opencl::CreateInstanceNorm});
  add("BatchNormalization", "", {"opencl:batch_norm", opencl::CreateBatchNorm});
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                         "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"}) {
    add(op, "", {"opencl:reduce", opencl::CreateReduce});
  }

  // ---- data movement
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout"}) {
    add(op, "", {"opencl:copy", opencl::CreateCopy});
  }
  add("Concat", "", {"opencl:concat", opencl::CreateConcat});
  add("Slice", "", {"opencl:slice", opencl::CreateSlice});
  add("Split", "", {"opencl:split", opencl::CreateSplit});
  add("Transpose", "", {"opencl:transpose", opencl::CreateTranspose});
  add("Gather", "", {"opencl:gather", opencl::CreateGather});
  add("Expand", "", {"opencl:expand", opencl::CreateExpand});
  add("Tile", "", {"opencl:tile", opencl::CreateTile});
  add("Resize", "", {"opencl:resize", opencl::CreateResize});
  add("Upsample", "", {"opencl:resize", opencl::CreateResize});
  add("Pad", "", {"opencl:pad", opencl::CreatePad});
  // ---- casts, comparisons, logical ops, arg reductions
  add("Cast", "", {"opencl:cast", opencl::CreateCast});
  add("CastLike", "", {"opencl:cast", opencl::CreateCast});
  for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    add(op, "", {"opencl:compare", opencl::CreateCompare});
  }
  for (const char* op : {"Not", "And", "Or", "Xor"}) add(op, "", {"opencl:logical", opencl::CreateLogical});
  add("IsNaN", "", {"opencl:isnan_isinf", opencl::CreateIsNaNOrInf});
  add("IsInf", "", {"opencl:isnan_isinf", opencl::CreateIsNaNOrInf});
  add("ArgMax", "", {"opencl:arg_extreme", opencl::CreateArgMax});
  add("ArgMin", "", {"opencl:arg_extreme", opencl::CreateArgMax});
  return t;
}

}  // namespace

const KernelTable& OpenClKernels() {
  static const KernelTable table = BuildTable();
  return table;
}

}  // namespace chipfit
