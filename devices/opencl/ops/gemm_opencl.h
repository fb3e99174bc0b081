// The tiled GEMM of ops/gemm.cl as the GEMM family's host code uses it (MatMul, Gemm, Conv), and the
// checks every factory of the family starts with. Internal to gemm/conv/conv_transpose_opencl.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "core/runtime/kernel.h"
#include "devices/opencl/opencl_runtime.h"

namespace chipfit::opencl {

// The OpenClContext of KernelInit::device, or Unsupported when there is none.
Result<ocl::OpenClContext*> GemmFamilyDevice(const KernelInit& init);

// Inputs `required` must be present; these and the present `optional` ones must be f32 with shapes
// known at compile time, at least one element and fewer than 2^31 (the kernels index with int).
// The output shapes must be known too. The reason names `op` ("MatMul on OpenCL: …").
Status RequireStaticF32(const KernelInit& init, std::initializer_list<size_t> required,
                        std::initializer_list<size_t> optional = {});

// Fails when input i's shape at run time differs from the one the kernel was built for.
Status CheckRunShape(const KernelContext& ctx, size_t i, const Shape& want);

// What follows the product, in this order: + beta·C, + Z, activation, clamp, · scale + shift
// (FusedConv's order).
struct GemmEpilogue {
  int activation = 0;  // gemm.cl's act codes
  float p0 = 0, p1 = 0;
  bool clamp = false;
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  bool linear = false;
  float scale = 1, shift = 0;
};

// One batched product Y[b] (M x N) = alpha · A[b] (M x K) · B[b] (K x N) + epilogue, every operand
// addressed by strides (element units): batch index b runs row-major over `batch` (4 dims, outer
// ones 1), a per-tensor batch stride of 0 broadcasts it. Y's columns are contiguous.
struct GemmSpec {
  int64_t m = 1, n = 1, k = 1;
  std::array<int64_t, 4> batch{1, 1, 1, 1};
  std::array<int64_t, 4> a_bs{}, b_bs{}, c_bs{}, z_bs{}, y_bs{};
  int64_t a_sm = 0, a_sk = 1, b_sk = 0, b_sn = 1, y_sm = 0;
  bool has_c = false;  // C[m * c_sm + n * c_sn]: Gemm's C, a conv bias (c_sn 0)
  int64_t c_sm = 0, c_sn = 0;
  bool has_z = false;  // Z[m * z_sm + (n / z_div) * z_shi + (n % z_div) * z_slo]: a conv residual
  int64_t z_sm = 0, z_shi = 0, z_slo = 0, z_div = 1;
  float alpha = 1.0f, beta = 1.0f;
  GemmEpilogue epilogue;
  // Conv as implicit GEMM: B is one image's group of channels [C/group, IH, IW], read through the
  // window (no im2col buffer); K = C/group * KH * KW, N = OH * OW.
  bool conv_b = false;
  int64_t ih = 1, iw = 1, kh = 1, kw = 1, ow = 1, sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
};

// The gemm kernel built for one GemmSpec with a tile configuration that fits the device.
class GemmLauncher {
 public:
  GemmLauncher() = default;
  static Result<GemmLauncher> Create(ocl::OpenClContext& ctx, const GemmSpec& spec);
  // Absent C / Z: pass nullptr.
  Status Run(ocl::OpenClContext& ctx, cl_mem a, cl_mem b, cl_mem c, cl_mem z, cl_mem y, std::string_view what);
  // "64x64x16 tile, 4x4 per work item", for messages and tests.
  std::string Describe() const;

 private:
  Status UploadConvTables(ocl::OpenClContext& ctx);

  GemmSpec spec_;
  cl::Kernel kernel_;
  // conv_b: the window tables of gemm.cl (KTAB, NTAB) in device memory, made once at Create.
  std::shared_ptr<DeviceAllocation> tables_;
  DeviceBuffer ktab_{}, ntab_{};
  int64_t tm_ = 0, tn_ = 0, rm_ = 0, rn_ = 0;
};

}  // namespace chipfit::opencl
