// Cast and CastLike on OpenCL (ops/cast.cl) between f32 (half under fp16 storage), f16, bool and
// the integer types up to int64; a cast between equal storage types is a device copy. Also the
// int64 capability check the comparison and arg-reduction kernels share.
#include <string>

#include "core/reference/ref_util.h"
#include "devices/opencl/ops/data_opencl.h"
#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit::opencl {

Status RequireInt64(const KernelInit& init) {
  auto* ctx = static_cast<ocl::OpenClContext*>(init.device);
  if (ctx == nullptr) return Unsupported("no OpenCL device context");
  const cl::Device& device = ctx->runtime().device();
  // The full profile has 64-bit integers; the embedded profile only with cles_khr_int64.
  if (device.getInfo<CL_DEVICE_PROFILE>().find("FULL_PROFILE") != std::string::npos) return Status();
  if (device.getInfo<CL_DEVICE_EXTENSIONS>().find("cles_khr_int64") != std::string::npos) return Status();
  return Unsupported("int64 values on an embedded-profile OpenCL device without cles_khr_int64");
}

namespace {

// How cast.cl reads or writes one storage dtype.
struct CastSide {
  const char* kind = nullptr;  // K_FLOAT … K_BOOL; nullptr: not supported
  const char* type = "";       // OpenCL C integer type
  const char* unsigned_type = "";
  const char* min = "0";
  const char* max = "0";
  bool is_signed = false;
};

CastSide SideOf(DType storage) {
  switch (storage) {
    case DType::kF32: return {"K_FLOAT"};
    case DType::kF16: return {"K_HALF"};
    case DType::kBool: return {"K_BOOL"};
    case DType::kI8: return {"K_INT", "char", "uchar", "SCHAR_MIN", "SCHAR_MAX", true};
    case DType::kU8: return {"K_INT", "uchar", "uchar", "0", "UCHAR_MAX", false};
    case DType::kI16: return {"K_INT", "short", "ushort", "SHRT_MIN", "SHRT_MAX", true};
    case DType::kU16: return {"K_INT", "ushort", "ushort", "0", "USHRT_MAX", false};
    case DType::kI32: return {"K_INT", "int", "uint", "INT_MIN", "INT_MAX", true};
    case DType::kU32: return {"K_INT", "uint", "uint", "0", "UINT_MAX", false};
    case DType::kI64: return {"K_INT", "long", "ulong", "LONG_MIN", "LONG_MAX", true};
    default: return {};
  }
}

// Why a dtype cannot be cast on OpenCL, or "" when it can.
std::string CastRefusal(DType dtype) {
  switch (dtype) {
    case DType::kF64: return "f64 (OpenCL doubles are an optional extension)";
    case DType::kBF16: return "bf16 (no bfloat16 conversions in OpenCL C 1.2)";
    case DType::kU64: return "u64 (values past 2^63 need conversions the kernel does not make)";
    case DType::kString: return "strings";
    default: return SideOf(dtype).kind == nullptr ? std::string(DTypeName(dtype)) : "";
  }
}

class CastKernel final : public IKernel {
 public:
  CastKernel(ocl::OpenClContext* ctx, cl::Kernel kernel, bool copy, size_t out_bytes)
      : ctx_(ctx), kernel_(std::move(kernel)), copy_(copy), elem_bytes_(out_bytes) {
    if (!copy_) local_ = ctx_->WorkGroup1D(kernel_);
  }

  Status Run(KernelContext& ctx) override {
    const std::string what = ctx.node().Describe();
    const int64_t n = ctx.output(0)->numel();
    if (copy_) {
      return ctx_->Copy(ctx.device_input(0), ctx.device_output(0), static_cast<size_t>(n) * elem_bytes_, what);
    }
    RETURN_IF_ERROR(ocl::SetArgs(kernel_, what, ocl::Mem(ctx.device_input(0)), ocl::Mem(ctx.device_output(0)),
                                 static_cast<cl_uint>(n)));
    return ctx_->Launch(kernel_, cl::NDRange(data::RoundUp(static_cast<size_t>(n), local_)), cl::NDRange(local_), what);
  }
  // CastLike's target_type only gives the dtype: it stays on the host.
  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t) const override { return true; }

 private:
  ocl::OpenClContext* ctx_;
  cl::Kernel kernel_;
  bool copy_ = false;
  size_t elem_bytes_ = 0;
  size_t local_ = 1;
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateCast(const KernelInit& init) {
  ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, data::CheckInit(init, {0}));
  const DType from = init.inputs[0]->dtype;
  const DType to = (*init.outputs)[0].dtype;
  for (const auto& [dtype, side] : {std::pair{from, "from"}, std::pair{to, "to"}}) {
    const std::string why = CastRefusal(dtype);
    if (!why.empty()) return Unsupported(std::string("Cast ") + side + " " + why + " on OpenCL");
  }
  const DType src = ctx->StorageType(from);
  const DType dst = ctx->StorageType(to);
  // Equal storage keeps every byte (f32 → f16 under fp16 storage is half to half).
  if (src == dst) return std::unique_ptr<IKernel>(new CastKernel(ctx, cl::Kernel(), true, DTypeSize(dst)));
  const CastSide s = SideOf(src);
  const CastSide d = SideOf(dst);
  const bool int_src = std::string(s.kind) == "K_INT" || std::string(s.kind) == "K_BOOL";
  if (int_src || dst == DType::kI64) RETURN_IF_ERROR(RequireInt64(init));  // integer sources widen to long
  std::string defines = std::string("-DSRC_KIND=") + s.kind + " -DDST_KIND=" + d.kind;
  if (std::string(s.kind) == "K_INT") defines += std::string(" -DSRC_T=") + s.type;
  if (std::string(d.kind) == "K_INT") {
    defines += std::string(" -DDST_T=") + d.type + " -DUDST_T=" + d.unsigned_type + " -DDST_MIN=" + d.min +
               " -DDST_MAX=" + d.max + " -DCONVERT_RTZ=convert_" + d.type +
               "_rtz -DAS_DST=" + (d.is_signed ? std::string("as_") + d.type : std::string());
  }
  ASSIGN_OR_RETURN(cl::Kernel kernel, ctx->CreateKernel("cast", "cast", defines));
  return std::unique_ptr<IKernel>(new CastKernel(ctx, std::move(kernel), false, DTypeSize(dst)));
}

}  // namespace chipfit::opencl
