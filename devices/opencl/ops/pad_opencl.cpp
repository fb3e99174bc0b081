// Pad on OpenCL: constant, edge, reflect and wrap with constant pads (attribute before opset 11, input
// from 11, axes input from 18), any dtype by element size. Neighbouring unpadded dims merge first.
#include <numeric>

#include "core/reference/ref_util.h"
#include "devices/opencl/ops/data_opencl.h"
#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit::opencl {
namespace {

constexpr size_t kMaxRank = 8;  // the int8 arguments of pad.cl

cl_int8 Pack8(const std::vector<int64_t>& v) {
  cl_int8 packed{};
  for (size_t i = 0; i < v.size() && i < kMaxRank; ++i) packed.s[i] = static_cast<cl_int>(v[i]);
  return packed;
}

class PadKernel final : public IKernel {
 public:
  PadKernel(ocl::OpenClContext* ctx, cl::Kernel kernel, std::vector<int64_t> out, std::vector<int64_t> in,
            std::vector<int64_t> begin, std::vector<uint8_t> value)
      : ctx_(ctx),
        kernel_(std::move(kernel)),
        out_(std::move(out)),
        in_(std::move(in)),
        begin_(std::move(begin)),
        value_(std::move(value)) {}

  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t) const override { return true; }

  Status Run(KernelContext& ctx) override {
    const std::string what = ctx.node().Describe();
    const int64_t n = NumElements(out_);
    RETURN_IF_ERROR(ocl::SetArgs(kernel_, what, ocl::Mem(ctx.device_input(0)), ocl::Mem(ctx.device_output(0)),
                                 static_cast<cl_int>(n), static_cast<cl_int>(out_.size()), Pack8(out_), Pack8(in_),
                                 Pack8(begin_)));
    RETURN_IF_ERROR(data::SetElemArg(kernel_, 7, value_, what));
    const size_t local = ctx_->WorkGroup1D(kernel_);
    return ctx_->Launch(kernel_, cl::NDRange(data::RoundUp(static_cast<size_t>(n), local)), cl::NDRange(local), what);
  }

 private:
  ocl::OpenClContext* ctx_;
  cl::Kernel kernel_;
  std::vector<int64_t> out_, in_, begin_;  // merged dims
  std::vector<uint8_t> value_;             // the constant in the storage type
};

const Tensor* ConstantInput(const KernelInit& init, size_t i) {
  const ValueInfo* in = i < init.inputs.size() && init.node.HasInput(i) ? init.inputs[i] : nullptr;
  return in == nullptr ? nullptr : in->value;
}

}  // namespace

Result<std::unique_ptr<IKernel>> CreatePad(const KernelInit& init) {
  ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, data::CheckInit(init, {0}));
  const Node& node = init.node;
  const Shape& in = init.inputs[0]->shape;
  const Shape& out = (*init.outputs)[0].shape;
  const DType dtype = init.inputs[0]->dtype;
  const DType storage = ctx->StorageType(dtype);
  const std::string mode = node.GetString("mode", "constant");
  const int mode_id = mode == "constant" ? 0 : mode == "edge" ? 1 : mode == "reflect" ? 2 : mode == "wrap" ? 3 : -1;
  if (mode_id < 0) return Unsupported("Pad mode '" + mode + "'");

  std::vector<int64_t> pads;
  if (init.opset < 11) {
    pads = node.GetInts("pads");
  } else {
    const Tensor* t = ConstantInput(init, 1);
    if (t == nullptr) return Unsupported("Pad's pads are not constant");
    pads = t->ToInt64Vector();
  }
  std::vector<int64_t> axes(in.size());
  std::iota(axes.begin(), axes.end(), int64_t{0});
  if (init.opset >= 18 && node.HasInput(3)) {
    const Tensor* t = ConstantInput(init, 3);
    if (t == nullptr) return Unsupported("Pad's axes are not constant");
    axes = t->ToInt64Vector();
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> norm, NormalizeAxes(axes, static_cast<int64_t>(in.size()), node));
  if (pads.size() != 2 * norm.size()) {
    return InvalidArgument(node.Describe() + ": " + std::to_string(pads.size()) + " pads for " +
                           std::to_string(norm.size()) + " axes");
  }
  std::vector<int64_t> begin(in.size(), 0);
  for (size_t i = 0; i < norm.size(); ++i) begin[static_cast<size_t>(norm[i])] = pads[i];

  // The constant: an attribute before opset 11, optional input 2 after (integers exact from int64).
  std::vector<uint8_t> value;
  if (init.opset < 11) {
    value = data::ValueBytes(storage, node.GetFloat("value", 0.0f), false, nullptr);
  } else if (node.HasInput(2)) {
    const Tensor* t = ConstantInput(init, 2);
    if (t == nullptr) return Unsupported("Pad's constant_value is not constant");
    const bool has = t->numel() > 0;
    const int64_t exact = has ? t->GetAsInt64(0) : 0;
    const bool integral = dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16 &&
                          dtype != DType::kF64 && dtype != DType::kBool;
    value = data::ValueBytes(storage, has ? t->GetAsDouble(0) : 0.0, false, integral ? &exact : nullptr);
  } else {
    value = data::ValueBytes(storage, 0.0, false, nullptr);
  }

  // Merge neighbouring dims that are not padded: fewer divisions and room for rank > 8 inputs.
  std::vector<int64_t> m_out, m_in, m_begin;
  bool last_plain = false;
  for (size_t d = 0; d < in.size(); ++d) {
    const bool plain = out[d] == in[d] && begin[d] == 0;
    if (plain && last_plain) {
      m_out.back() *= out[d];
      m_in.back() *= in[d];
      continue;
    }
    m_out.push_back(out[d]);
    m_in.push_back(in[d]);
    m_begin.push_back(begin[d]);
    last_plain = plain;
  }
  if (m_out.empty()) {  // a scalar
    m_out = {1};
    m_in = {1};
    m_begin = {0};
  }
  if (m_out.size() > kMaxRank) {
    return Unsupported("Pad over " + std::to_string(m_out.size()) + " dims after merging; the kernel takes 8");
  }
  ASSIGN_OR_RETURN(std::string elem, data::ElemDefine(storage));
  ASSIGN_OR_RETURN(cl::Kernel kernel, ctx->CreateKernel("pad", "pad", elem + " -DPAD_MODE=" + std::to_string(mode_id)));
  return std::unique_ptr<IKernel>(
      new PadKernel(ctx, std::move(kernel), std::move(m_out), std::move(m_in), std::move(m_begin), std::move(value)));
}

}  // namespace chipfit::opencl
