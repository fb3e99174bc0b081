// Comparisons, logical ops and IsNaN / IsInf on OpenCL (ops/compare.cl): bool outputs, the binary
// ones with multidirectional broadcasting planned on the host.
#include <string>
#include <vector>

#include "core/reference/ref_util.h"
#include "devices/opencl/ops/data_opencl.h"
#include "devices/opencl/ops/eltwise_util_opencl.h"
#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit::opencl {
namespace {

constexpr size_t kMaxRank = 8;  // the uint8 dims and strides of compare.cl

// " -DIN_KIND=… [-DIN_T=…]" reading one storage dtype, or "" when the kernels cannot read it.
std::string InputDefines(DType storage) {
  switch (storage) {
    case DType::kF32: return " -DIN_KIND=K_FLOAT";
    case DType::kF16: return " -DIN_KIND=K_HALF";
    case DType::kBool:
    case DType::kU8: return " -DIN_KIND=K_NATIVE -DIN_T=uchar";
    case DType::kI8: return " -DIN_KIND=K_NATIVE -DIN_T=char";
    case DType::kI16: return " -DIN_KIND=K_NATIVE -DIN_T=short";
    case DType::kU16: return " -DIN_KIND=K_NATIVE -DIN_T=ushort";
    case DType::kI32: return " -DIN_KIND=K_NATIVE -DIN_T=int";
    case DType::kU32: return " -DIN_KIND=K_NATIVE -DIN_T=uint";
    case DType::kI64: return " -DIN_KIND=K_NATIVE -DIN_T=long";
    case DType::kU64: return " -DIN_KIND=K_NATIVE -DIN_T=ulong";
    default: return "";
  }
}

// The read defines for input `i` of `init`, refusing dtypes the kernels do not read.
Result<std::string> ReadInput(ocl::OpenClContext& ctx, const KernelInit& init, size_t i) {
  const DType dtype = init.inputs[i]->dtype;
  const std::string defines = InputDefines(ctx.StorageType(dtype));
  if (defines.empty()) {
    return Unsupported(init.node.op_type + " on " + std::string(DTypeName(dtype)) + " inputs on OpenCL");
  }
  if (dtype == DType::kI64 || dtype == DType::kU64) RETURN_IF_ERROR(RequireInt64(init));
  return defines;
}

// How the kernel reaches one input's element for an output index (compare.cl KIND_*).
enum class Kind { kFull = 0, kScalar = 1, kStrided = 2 };

struct BroadcastPlan {
  std::vector<int64_t> dims;  // collapsed output dims, innermost first
  Kind kind[2] = {Kind::kFull, Kind::kFull};
  std::vector<int64_t> strides[2];  // innermost first; 0 where the input broadcasts
};

// Output dims of 1 dropped, neighbours merged where both inputs span (or broadcast) them alike.
Result<BroadcastPlan> PlanBroadcast(const Shape& a, const Shape& b, const Shape& out) {
  const Shape* in[2] = {&a, &b};
  std::vector<int64_t> dims;  // outer first while building
  std::vector<std::vector<bool>> spans;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    std::vector<bool> s;
    for (const Shape* shape : in) {
      const size_t lead = out.size() - shape->size();
      s.push_back(d >= lead && (*shape)[d - lead] == out[d]);
    }
    if (!spans.empty() && spans.back() == s) {
      dims.back() *= out[d];
    } else {
      dims.push_back(out[d]);
      spans.push_back(std::move(s));
    }
  }
  if (dims.size() > kMaxRank) {
    return Unsupported("a broadcast over " + std::to_string(dims.size()) + " alternating dims (the kernel walks " +
                       std::to_string(kMaxRank) + ")");
  }
  BroadcastPlan plan;
  plan.dims.assign(dims.rbegin(), dims.rend());
  for (size_t k = 0; k < 2; ++k) {
    size_t spanned = 0;
    int64_t running = 1;
    for (size_t d = dims.size(); d-- > 0;) {
      plan.strides[k].push_back(spans[d][k] ? running : 0);
      if (spans[d][k]) {
        running *= dims[d];
        ++spanned;
      }
    }
    plan.kind[k] = spanned == dims.size() ? Kind::kFull : spanned == 0 ? Kind::kScalar : Kind::kStrided;
  }
  return plan;
}

class BinaryBoolKernel final : public IKernel {
 public:
  BinaryBoolKernel(ocl::OpenClContext* ctx, cl::Kernel kernel, const BroadcastPlan& plan)
      : ctx_(ctx),
        kernel_(std::move(kernel)),
        dims_(eltwise_util::PackU8(plan.dims)),
        strides_a_(eltwise_util::PackU8(plan.strides[0])),
        strides_b_(eltwise_util::PackU8(plan.strides[1])),
        rank_(static_cast<cl_uint>(plan.dims.size())),
        kinds_{{static_cast<cl_uint>(plan.kind[0]), static_cast<cl_uint>(plan.kind[1])}},
        local_(ctx_->WorkGroup1D(kernel_)) {}

  Status Run(KernelContext& ctx) override {
    const std::string what = ctx.node().Describe();
    const auto n = static_cast<cl_uint>(ctx.output(0)->numel());
    RETURN_IF_ERROR(ocl::SetArgs(kernel_, what, ocl::Mem(ctx.device_output(0)), n, dims_, rank_, kinds_,
                                 ocl::Mem(ctx.device_input(0)), strides_a_, ocl::Mem(ctx.device_input(1)), strides_b_));
    return ctx_->Launch(kernel_, cl::NDRange(data::RoundUp(n, local_)), cl::NDRange(local_), what);
  }
  bool InputOnDevice(size_t input) const override { return input < 2; }
  bool OutputOnDevice(size_t) const override { return true; }

 private:
  ocl::OpenClContext* ctx_;
  cl::Kernel kernel_;
  cl_uint8 dims_, strides_a_, strides_b_;
  cl_uint rank_;
  cl_uint2 kinds_;
  size_t local_;
};

class UnaryBoolKernel final : public IKernel {
 public:
  UnaryBoolKernel(ocl::OpenClContext* ctx, cl::Kernel kernel)
      : ctx_(ctx), kernel_(std::move(kernel)), local_(ctx_->WorkGroup1D(kernel_)) {}

  Status Run(KernelContext& ctx) override {
    const std::string what = ctx.node().Describe();
    const auto n = static_cast<cl_uint>(ctx.output(0)->numel());
    RETURN_IF_ERROR(ocl::SetArgs(kernel_, what, ocl::Mem(ctx.device_input(0)), ocl::Mem(ctx.device_output(0)), n));
    return ctx_->Launch(kernel_, cl::NDRange(data::RoundUp(n, local_)), cl::NDRange(local_), what);
  }
  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t) const override { return true; }

 private:
  ocl::OpenClContext* ctx_;
  cl::Kernel kernel_;
  size_t local_;
};

// A broadcasting binary op with a bool output; `op` is the compare.cl OP.
Result<std::unique_ptr<IKernel>> CreateBinaryBool(const KernelInit& init, const std::string& op) {
  ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, data::CheckInit(init, {0, 1}));
  const ValueInfo& a = *init.inputs[0];
  const ValueInfo& b = *init.inputs[1];
  if (a.dtype != b.dtype) return Unsupported(init.node.op_type + " of different input dtypes");
  if (init.opset < 7 && a.shape != b.shape)
    return Unsupported("broadcasting before opset 7 (broadcast/axis attributes)");
  ASSIGN_OR_RETURN(std::string read, ReadInput(*ctx, init, 0));
  ASSIGN_OR_RETURN(BroadcastPlan plan, PlanBroadcast(a.shape, b.shape, (*init.outputs)[0].shape));
  const std::string defines = "-DOP_IS_BINARY -DOP=" + op + read;
  ASSIGN_OR_RETURN(cl::Kernel kernel, ctx->CreateKernel("compare", "binary", defines));
  return std::unique_ptr<IKernel>(new BinaryBoolKernel(ctx, std::move(kernel), plan));
}

Result<std::unique_ptr<IKernel>> CreateUnaryBool(const KernelInit& init, const std::string& op,
                                                 const std::string& extra = "") {
  ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, data::CheckInit(init, {0}));
  ASSIGN_OR_RETURN(std::string read, ReadInput(*ctx, init, 0));
  ASSIGN_OR_RETURN(cl::Kernel kernel, ctx->CreateKernel("compare", "unary", "-DOP_IS_UNARY -DOP=" + op + read + extra));
  return std::unique_ptr<IKernel>(new UnaryBoolKernel(ctx, std::move(kernel)));
}

bool IsFloat(DType dtype) { return dtype == DType::kF32 || dtype == DType::kF16; }

}  // namespace

Result<std::unique_ptr<IKernel>> CreateCompare(const KernelInit& init) {
  static const std::vector<std::pair<const char*, const char*>> kOps = {{"Equal", "C_EQUAL"},
                                                                        {"Less", "C_LESS"},
                                                                        {"Greater", "C_GREATER"},
                                                                        {"LessOrEqual", "C_LESS_EQUAL"},
                                                                        {"GreaterOrEqual", "C_GREATER_EQUAL"}};
  for (const auto& [name, op] : kOps) {
    if (init.node.op_type == name) return CreateBinaryBool(init, op);
  }
  return Unsupported(init.node.op_type + " is not a comparison the OpenCL device knows");
}

Result<std::unique_ptr<IKernel>> CreateLogical(const KernelInit& init) {
  const std::string& op_type = init.node.op_type;
  const ValueInfo* x = init.inputs.empty() ? nullptr : init.inputs[0];
  if (x != nullptr && x->dtype != DType::kBool) {
    return Unsupported(op_type + " on " + std::string(DTypeName(x->dtype)) + " (bool only)");
  }
  if (op_type == "Not") return CreateUnaryBool(init, "U_NOT");
  if (op_type == "And") return CreateBinaryBool(init, "L_AND");
  if (op_type == "Or") return CreateBinaryBool(init, "L_OR");
  if (op_type == "Xor") return CreateBinaryBool(init, "L_XOR");
  return Unsupported(op_type + " is not a logical op the OpenCL device knows");
}

Result<std::unique_ptr<IKernel>> CreateIsNaNOrInf(const KernelInit& init) {
  const std::string& op_type = init.node.op_type;
  const ValueInfo* x = init.inputs.empty() ? nullptr : init.inputs[0];
  if (x != nullptr && !IsFloat(x->dtype)) {
    return Unsupported(op_type + " on " + std::string(DTypeName(x->dtype)) + " (f32 and f16 only)");
  }
  if (op_type == "IsNaN") return CreateUnaryBool(init, "U_ISNAN");
  if (op_type == "IsInf") {
    const bool positive = init.node.GetInt("detect_positive", 1) != 0;
    const bool negative = init.node.GetInt("detect_negative", 1) != 0;
    return CreateUnaryBool(
        init, "U_ISINF",
        std::string(" -DDETECT_POSITIVE=") + (positive ? "1" : "0") + " -DDETECT_NEGATIVE=" + (negative ? "1" : "0"));
  }
  return Unsupported(op_type + " is not a float classification the OpenCL device knows");
}

}  // namespace chipfit::opencl
