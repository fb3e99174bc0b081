// OpenCL copies: Reshape, Flatten, Squeeze, Unsqueeze, Identity and Dropout (inference) keep the bytes of
// input 0 in plain order, so they are a device-to-device copy. Also the helpers every data-movement
// kernel shares (data_opencl.h): init checks, element types by size, the strided N-D copy.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/reference/ref_util.h"
#include "devices/opencl/ops/data_opencl.h"
#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit::opencl {
namespace data {

Result<ocl::OpenClContext*> CheckInit(const KernelInit& init, const std::vector<size_t>& inputs,
                                      bool allow_empty_outputs) {
  auto* ctx = static_cast<ocl::OpenClContext*>(init.device);
  if (ctx == nullptr) return Unsupported("no OpenCL device context");
  if (init.outputs == nullptr) return Unsupported("output shapes are only known at run time");
  auto check = [](const char* what, size_t i, DType dtype, const Shape& shape, bool allow_empty) -> Status {
    const std::string name = std::string(what) + " " + std::to_string(i);
    for (int64_t d : shape) {
      if (d < 0) return Unsupported(name + " has a shape known only at run time");
    }
    if (DTypeSize(dtype) == 0) return Unsupported(name + " has dtype " + std::string(DTypeName(dtype)));
    const int64_t n = NumElements(shape);
    if (n == 0 && !allow_empty) return Unsupported(name + " is empty (" + ShapeToString(shape) + ")");
    if (n >= kMaxElements) return Unsupported(name + " has " + std::to_string(n) + " elements, over 2^31");
    return Status();
  };
  for (size_t i : inputs) {
    const ValueInfo* in = i < init.inputs.size() ? init.inputs[i] : nullptr;
    if (in == nullptr) return Unsupported("input " + std::to_string(i) + " is missing");
    RETURN_IF_ERROR(check("input", i, in->dtype, in->shape, false));
  }
  for (size_t k = 0; k < init.outputs->size(); ++k) {
    if (k < init.node.outputs.size() && init.node.outputs[k].empty()) continue;  // omitted optional output
    RETURN_IF_ERROR(check("output", k, (*init.outputs)[k].dtype, (*init.outputs)[k].shape, allow_empty_outputs));
  }
  return ctx;
}

std::string ElemType(size_t bytes) {
  switch (bytes) {
    case 1: return "uchar";
    case 2: return "ushort";
    case 4: return "uint";
    case 8: return "uint2";  // not ulong: embedded-profile devices may lack 64-bit integers
    case 16: return "uint4";
    default: return "";
  }
}

Result<std::string> ElemDefine(DType storage) {
  const std::string type = ElemType(DTypeSize(storage));
  if (type.empty()) return Unsupported("dtype " + std::string(DTypeName(storage)) + " cannot be moved on OpenCL");
  return " -DELEM=" + type;
}

std::vector<uint8_t> ValueBytes(DType storage, double value, bool round_ints, const int64_t* exact) {
  std::vector<uint8_t> bytes;
  VisitDType(storage, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, std::nullptr_t>) {
      T v{};
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        v = exact != nullptr ? static_cast<T>(*exact) : FromDouble<T>(round_ints ? std::round(value) : value);
      } else {
        v = FromDouble<T>(value);
      }
      bytes.resize(sizeof(T));
      std::memcpy(bytes.data(), &v, sizeof(T));
    }
    return 0;
  });
  return bytes;
}

Status SetElemArg(cl::Kernel& kernel, cl_uint index, const std::vector<uint8_t>& bytes, std::string_view what) {
  const cl_int err = kernel.setArg(index, bytes.size(), bytes.data());
  if (err != CL_SUCCESS) return ocl::ClError(err, std::string(what) + ": argument " + std::to_string(index));
  return Status();
}

std::vector<int64_t> DenseStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

void MergeDims(StridedSpec& spec) {
  StridedSpec out;
  out.src_offset = spec.src_offset;
  out.dst_offset = spec.dst_offset;
  for (size_t k = 0; k < spec.dims.size(); ++k) {
    const int64_t n = spec.dims[k];
    if (n == 1) continue;
    if (!out.dims.empty() && out.src_strides.back() == spec.src_strides[k] * n &&
        out.dst_strides.back() == spec.dst_strides[k] * n) {
      out.dims.back() *= n;
      out.src_strides.back() = spec.src_strides[k];
      out.dst_strides.back() = spec.dst_strides[k];
      continue;
    }
    out.dims.push_back(n);
    out.src_strides.push_back(spec.src_strides[k]);
    out.dst_strides.push_back(spec.dst_strides[k]);
  }
  if (out.dims.empty()) {  // a single element
    out.dims = {1};
    out.src_strides = {0};
    out.dst_strides = {0};
  }
  spec = std::move(out);
}

namespace {

constexpr size_t kMaxRank = 16;  // the int16 arguments of strided_copy

cl_int16 Pack16(const std::vector<int64_t>& v) {
  cl_int16 packed{};
  for (size_t i = 0; i < v.size() && i < kMaxRank; ++i) packed.s[i] = static_cast<cl_int>(v[i]);
  return packed;
}

// The widest element (≤ 16 bytes) that moves whole runs: the innermost dim is contiguous on both sides
// and every offset and stride is a multiple of the widening factor.
size_t WidenFactor(const StridedSpec& s, size_t elem, size_t alignment) {
  if (s.src_strides.back() != 1 || s.dst_strides.back() != 1) return 1;
  for (size_t f = 16 / elem; f > 1; f /= 2) {
    if (alignment % (elem * f) != 0 || s.dims.back() % static_cast<int64_t>(f) != 0) continue;
    const auto fi = static_cast<int64_t>(f);
    bool ok = s.src_offset % fi == 0 && s.dst_offset % fi == 0;
    for (size_t k = 0; k + 1 < s.dims.size(); ++k) ok = ok && s.src_strides[k] % fi == 0 && s.dst_strides[k] % fi == 0;
    if (ok) return f;
  }
  return 1;
}

}  // namespace

Result<StridedCopy> StridedCopy::Create(ocl::OpenClContext* ctx, DType storage, StridedSpec spec) {
  StridedCopy copy;
  copy.elements_ = NumElements(spec.dims);
  if (copy.elements_ >= kMaxElements) return Unsupported("a copy of over 2^31 elements");
  MergeDims(spec);
  const size_t elem = DTypeSize(storage);
  if (ElemType(elem).empty()) return Unsupported("dtype " + std::string(DTypeName(storage)) + " cannot be moved");
  const size_t f = WidenFactor(spec, elem, ctx->Alignment());
  if (f > 1) {
    const auto fi = static_cast<int64_t>(f);
    spec.dims.back() /= fi;
    for (size_t k = 0; k + 1 < spec.dims.size(); ++k) {
      spec.src_strides[k] /= fi;
      spec.dst_strides[k] /= fi;
    }
    spec.src_offset /= fi;
    spec.dst_offset /= fi;
  }
  if (spec.dims.size() > kMaxRank) {
    return Unsupported("a copy over " + std::to_string(spec.dims.size()) + " dims after merging; the kernel takes " +
                       std::to_string(kMaxRank));
  }
  copy.elements_ = NumElements(spec.dims);
  copy.spec_ = std::move(spec);
  if (copy.elements_ == 0) return copy;
  ASSIGN_OR_RETURN(copy.kernel_, ctx->CreateKernel("copy", "strided_copy", "-DELEM=" + ElemType(elem * f)));
  copy.local_ = ctx->WorkGroup1D(copy.kernel_);
  return copy;
}

Status StridedCopy::Run(ocl::OpenClContext* ctx, const DeviceBuffer& src, const DeviceBuffer& dst,
                        std::string_view what) {
  if (elements_ == 0) return Status();
  RETURN_IF_ERROR(ocl::SetArgs(kernel_, what, ocl::Mem(src), ocl::Mem(dst), static_cast<cl_int>(elements_),
                               static_cast<cl_int>(spec_.dims.size()), Pack16(spec_.dims), Pack16(spec_.src_strides),
                               Pack16(spec_.dst_strides), static_cast<cl_int>(spec_.src_offset),
                               static_cast<cl_int>(spec_.dst_offset)));
  const size_t n = static_cast<size_t>(elements_);
  return ctx->Launch(kernel_, cl::NDRange(RoundUp(n, local_)), cl::NDRange(local_), what);
}

}  // namespace data

namespace {

// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout: input 0's bytes copied to output 0 (the
// executor's planner may later alias them; a copy onto itself is skipped). Dropout's optional mask
// output is all ones in inference.
class CopyKernel final : public IKernel {
 public:
  CopyKernel(ocl::OpenClContext* ctx, cl::Kernel fill, std::vector<uint8_t> one)
      : ctx_(ctx), fill_(std::move(fill)), one_(std::move(one)) {}

  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t) const override { return true; }

  Status Run(KernelContext& ctx) override {
    const std::string what = ctx.node().Describe();
    const DeviceBuffer src = ctx.device_input(0);
    const DeviceBuffer dst = ctx.device_output(0);
    const size_t bytes = static_cast<size_t>(ctx.input(0)->numel()) * DTypeSize(ctx.input(0)->dtype());
    if (bytes > src.bytes || bytes > dst.bytes) {
      return Internal(what + ": copy of " + std::to_string(bytes) + " bytes between buffers of " +
                      std::to_string(src.bytes) + " and " + std::to_string(dst.bytes));
    }
    if (bytes > 0 && src.handle != dst.handle) RETURN_IF_ERROR(ctx_->Copy(src, dst, bytes, what));
    const DeviceBuffer mask = ctx.device_output(1);
    if (ctx.output(1) == nullptr || mask.handle == nullptr || one_.empty()) return Status();
    const auto n = static_cast<cl_int>(ctx.output(1)->numel());
    RETURN_IF_ERROR(ocl::SetArgs(fill_, what, ocl::Mem(mask), n));
    RETURN_IF_ERROR(data::SetElemArg(fill_, 2, one_, what));
    const size_t local = ctx_->WorkGroup1D(fill_);
    return ctx_->Launch(fill_, cl::NDRange(data::RoundUp(static_cast<size_t>(n), local)), cl::NDRange(local), what);
  }

 private:
  ocl::OpenClContext* ctx_;
  cl::Kernel fill_;
  std::vector<uint8_t> one_;
};

// Dropout runs here only where it keeps every element: inference, or a ratio of 0.
Status CheckDropout(const KernelInit& init) {
  if (init.opset < 12 || !init.node.HasInput(2)) return Status();
  const ValueInfo* training = init.inputs.size() > 2 ? init.inputs[2] : nullptr;
  if (training == nullptr || training->value == nullptr) {
    return Unsupported("Dropout's training_mode is not a constant");
  }
  if (training->value->numel() == 0 || training->value->GetAsInt64(0) == 0) return Status();
  const ValueInfo* ratio = init.inputs.size() > 1 && init.node.HasInput(1) ? init.inputs[1] : nullptr;
  if (ratio != nullptr && ratio->value != nullptr && ratio->value->numel() > 0 && ratio->value->GetAsDouble(0) == 0.0) {
    return Status();
  }
  return Unsupported("Dropout with training_mode=1 drops elements at random; only inference runs on OpenCL");
}

}  // namespace

Result<std::unique_ptr<IKernel>> CreateCopy(const KernelInit& init) {
  ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, data::CheckInit(init, {0}));
  if (NumElements((*init.outputs)[0].shape) != NumElements(init.inputs[0]->shape)) {
    return InvalidArgument(init.node.Describe() + ": output " + ShapeToString((*init.outputs)[0].shape) +
                           " does not hold the elements of input " + ShapeToString(init.inputs[0]->shape));
  }
  cl::Kernel fill;
  std::vector<uint8_t> one;
  if (init.node.op_type == "Dropout") {
    RETURN_IF_ERROR(CheckDropout(init));
    if (init.node.outputs.size() > 1 && !init.node.outputs[1].empty() && init.outputs->size() > 1) {
      const DType mask = ctx->StorageType((*init.outputs)[1].dtype);
      one = data::ValueBytes(mask, 1.0, false, nullptr);
      ASSIGN_OR_RETURN(std::string elem, data::ElemDefine(mask));
      ASSIGN_OR_RETURN(fill, ctx->CreateKernel("copy", "fill", elem));
    }
  }
  return std::unique_ptr<IKernel>(new CopyKernel(ctx, std::move(fill), std::move(one)));
}

}  // namespace chipfit::opencl
