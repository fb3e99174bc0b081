// ConvTranspose on OpenCL for 1-D and 2-D inputs (groups, strides, dilations, pads, auto_pad,
// output_padding, output_shape) on the gather kernel of ops/conv_transpose.cl.
#include <algorithm>
#include <string>
#include <vector>

#include "core/reference/conv_util.h"
#include "devices/opencl/ops/gemm_opencl.h"
#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit::opencl {
namespace {

struct Geometry {
  int64_t n = 1, c = 1, m = 1, group = 1;
  int64_t ih = 1, iw = 1, kh = 1, kw = 1, oh = 1, ow = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
};

// The leading pads of the transposed window, resolved like the reference: output_shape or SAME
// fix the output size and the total padding follows (clamped at 0; SAME_UPPER puts the odd pad at
// the end, everything else at the start); otherwise the explicit pads give the output size.
Result<Geometry> ReadGeometry(const KernelInit& init) {
  const Node& node = init.node;
  const Shape& x = init.inputs[0]->shape;
  const Shape& w = init.inputs[1]->shape;
  if (x.size() != 3 && x.size() != 4) {
    return Unsupported("ConvTranspose on OpenCL: " + std::to_string(static_cast<int64_t>(x.size()) - 2) +
                       "-D convolution (only 1-D and 2-D are implemented)");
  }
  if (w.size() != x.size()) return InvalidArgument(node.Describe() + ": W and X ranks differ");
  Geometry g;
  g.n = x[0];
  g.c = x[1];
  g.group = node.GetInt("group", 1);
  g.m = w[1] * g.group;
  if (g.group < 1 || w[0] != g.c || g.c % g.group != 0) {
    return InvalidArgument(node.Describe() + ": X " + ShapeToString(x) + " and W " + ShapeToString(w) +
                           " do not match group " + std::to_string(g.group));
  }
  ASSIGN_OR_RETURN(Window win,
                   ReadWindow(node, Shape(x.begin() + 2, x.end()), std::vector<int64_t>(w.begin() + 2, w.end())));
  const size_t rank = win.rank();
  const std::vector<int64_t> output_padding = node.GetInts("output_padding", std::vector<int64_t>(rank, 0));
  std::vector<int64_t> output_shape = node.GetInts("output_shape");
  if (output_shape.size() == rank + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (output_padding.size() != rank || (!output_shape.empty() && output_shape.size() != rank)) {
    return InvalidArgument(node.Describe() + ": output_padding / output_shape do not have one entry per spatial dim");
  }
  const bool same = win.auto_pad == "SAME_UPPER" || win.auto_pad == "SAME_LOWER";
  const Shape& out = (*init.outputs)[0].shape;
  std::vector<int64_t> pad(rank), size(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t full = win.strides[i] * (win.in[i] - 1) + output_padding[i] + win.Extent(i);
    if (!output_shape.empty() || same) {
      size[i] = !output_shape.empty() ? output_shape[i] : win.in[i] * win.strides[i];
      const int64_t total = std::max<int64_t>(0, full - size[i]);
      pad[i] = win.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else {
      pad[i] = win.pad_begin[i];
      size[i] = full - win.pad_begin[i] - win.pad_end[i];
    }
    if (size[i] != out[2 + i]) {
      return Internal(node.Describe() + ": output size " + std::to_string(size[i]) + " in spatial dim " +
                      std::to_string(i) + " disagrees with shape inference " + ShapeToString(out));
    }
  }
  const size_t last = rank - 1;
  g.iw = win.in[last];
  g.kw = win.kernel[last];
  g.ow = size[last];
  g.sw = win.strides[last];
  g.dw = win.dilations[last];
  g.pw = pad[last];
  if (rank == 2) {
    g.ih = win.in[0];
    g.kh = win.kernel[0];
    g.oh = size[0];
    g.sh = win.strides[0];
    g.dh = win.dilations[0];
    g.ph = pad[0];
  }
  return g;
}

class ConvTransposeKernel final : public IKernel {
 public:
  Status Run(KernelContext& ctx) override {
    for (size_t i = 0; i < shapes_.size(); ++i) RETURN_IF_ERROR(CheckRunShape(ctx, i, shapes_[i]));
    const auto i32 = [](int64_t v) { return static_cast<cl_int>(v); };
    const Geometry& g = geo_;
    const int64_t total = g.n * g.m * g.oh * g.ow;
    const cl_mem x = ocl::Mem(ctx.device_input(0));
    // An absent bias is never read (HAS_BIAS unset): X stands in for it.
    const cl_mem bias = shapes_.size() > 2 ? ocl::Mem(ctx.device_input(2)) : x;
    const std::string what = ctx.node().Describe();
    RETURN_IF_ERROR(ocl::SetArgs(kernel_, what, x, ocl::Mem(ctx.device_input(1)), bias, ocl::Mem(ctx.device_output(0)),
                                 i32(total), i32(g.c), i32(g.m), i32(g.group), i32(g.ih), i32(g.iw), i32(g.oh),
                                 i32(g.ow), i32(g.kh), i32(g.kw), i32(g.sh), i32(g.sw), i32(g.dh), i32(g.dw), i32(g.ph),
                                 i32(g.pw)));
    const auto local = static_cast<int64_t>(local_);
    const auto global = static_cast<size_t>((total + local - 1) / local * local);
    return ctx_->Launch(kernel_, cl::NDRange(global), cl::NDRange(local_), what);
  }
  bool InputOnDevice(size_t i) const override { return i < shapes_.size(); }
  bool OutputOnDevice(size_t) const override { return true; }

  static Result<std::unique_ptr<IKernel>> Create(const KernelInit& init) {
    ASSIGN_OR_RETURN(ocl::OpenClContext * device, GemmFamilyDevice(init));
    RETURN_IF_ERROR(RequireStaticF32(init, {0, 1}, {2}));
    auto kernel = std::unique_ptr<ConvTransposeKernel>(new ConvTransposeKernel());
    ASSIGN_OR_RETURN(kernel->geo_, ReadGeometry(init));
    kernel->ctx_ = device;
    kernel->shapes_ = {init.inputs[0]->shape, init.inputs[1]->shape};
    const ValueInfo* bias = init.inputs.size() > 2 ? init.inputs[2] : nullptr;
    if (bias != nullptr) {
      if (bias->shape != Shape{kernel->geo_.m}) {
        return InvalidArgument(init.node.Describe() + ": bias " + ShapeToString(bias->shape) + " is not [" +
                               std::to_string(kernel->geo_.m) + "]");
      }
      kernel->shapes_.push_back(bias->shape);
    }
    ASSIGN_OR_RETURN(kernel->kernel_,
                     device->CreateKernel("conv_transpose", "conv_transpose", bias != nullptr ? "-DHAS_BIAS" : ""));
    kernel->local_ = device->WorkGroup1D(kernel->kernel_, 128);
    return std::unique_ptr<IKernel>(std::move(kernel));
  }

 private:
  ConvTransposeKernel() = default;

  ocl::OpenClContext* ctx_ = nullptr;
  std::vector<Shape> shapes_;  // X, W and the bias when given: the shapes built for
  Geometry geo_;
  cl::Kernel kernel_;
  size_t local_ = 1;
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateConvTranspose(const KernelInit& init) {
  return ConvTransposeKernel::Create(init);
}

}  // namespace chipfit::opencl
