// Host helpers shared by the OpenCL data-movement kernels (copy, concat, slice, transpose, gather, resize,
// pad): the checks every factory makes, element types by size, and the strided N-D copy most of them run.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/kernel.h"
#include "devices/opencl/opencl_runtime.h"

namespace chipfit::opencl::data {

// Data kernels index with 32-bit ints (cheaper than 64-bit on GPUs); bigger tensors are refused.
inline constexpr int64_t kMaxElements = int64_t{1} << 31;

// The context of a factory after the checks every data kernel makes: a device, static shapes, no empty
// tensors among `inputs` (indices into init.inputs) and the outputs (empty outputs pass with
// `allow_empty_outputs`: Split's zero-length parts).
Result<ocl::OpenClContext*> CheckInit(const KernelInit& init, const std::vector<size_t>& inputs,
                                      bool allow_empty_outputs = false);

// The OpenCL C type moving one element of `bytes` bytes ("uchar" … "uint4"); empty for other sizes.
std::string ElemType(size_t bytes);
// " -DELEM=<type>" for the element size, or Unsupported naming the dtype.
Result<std::string> ElemDefine(DType storage);

// `value` in the storage dtype as bytes (Pad's constant, Resize's extrapolation_value, Dropout's mask).
// Integers take `exact` when given (int64 beyond 2^53), else `value` (rounded to nearest first with
// `round_ints`, as interpolation does) saturated.
std::vector<uint8_t> ValueBytes(DType storage, double value, bool round_ints, const int64_t* exact);
// Sets argument `index` of `kernel` to an element given as bytes.
Status SetElemArg(cl::Kernel& kernel, cl_uint index, const std::vector<uint8_t>& bytes, std::string_view what);

// Global size rounded up to a multiple of the local size.
inline size_t RoundUp(size_t n, size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// dst[dst_offset + Σ c_k · dst_strides_k] = src[src_offset + Σ c_k · src_strides_k] for every coordinate c
// of `dims` (strides in elements, any sign; 0 broadcasts). Slice, Split, Concat, Transpose, Expand and Tile
// are all this with different strides.
struct StridedSpec {
  std::vector<int64_t> dims, src_strides, dst_strides;
  int64_t src_offset = 0, dst_offset = 0;
};

// Dense row-major strides of `shape`.
std::vector<int64_t> DenseStrides(const Shape& shape);

// One planned strided copy: dims merged where both sides are contiguous across them, elements widened
// (up to 16 bytes) when the inner run allows it, the kernel built at Init.
class StridedCopy {
 public:
  static Result<StridedCopy> Create(ocl::OpenClContext* ctx, DType storage, StridedSpec spec);
  // Launches the copy between two device buffers; a no-op when there is nothing to move.
  Status Run(ocl::OpenClContext* ctx, const DeviceBuffer& src, const DeviceBuffer& dst, std::string_view what);
  int64_t elements() const { return elements_; }
  // The planned spec after merging and widening (tests and the tiled transpose look at it).
  const StridedSpec& spec() const { return spec_; }

 private:
  StridedSpec spec_;
  int64_t elements_ = 0;
  cl::Kernel kernel_;
  size_t local_ = 1;
};

// Drops unit dims and merges neighbours that are contiguous on both sides.
void MergeDims(StridedSpec& spec);

// A kernel moving input 0 into its outputs by strided copies (Slice, Split, Transpose, Expand, Tile);
// the other inputs are parameters consumed at Init.
class StridedOutputsKernel final : public IKernel {
 public:
  StridedOutputsKernel(ocl::OpenClContext* ctx, std::vector<std::pair<size_t, StridedCopy>> copies)
      : ctx_(ctx), copies_(std::move(copies)) {}
  static std::unique_ptr<IKernel> One(ocl::OpenClContext* ctx, StridedCopy copy) {
    std::vector<std::pair<size_t, StridedCopy>> copies;
    copies.emplace_back(0, std::move(copy));
    return std::make_unique<StridedOutputsKernel>(ctx, std::move(copies));
  }

  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t) const override { return true; }
  Status Run(KernelContext& ctx) override {
    const std::string what = ctx.node().Describe();
    for (auto& [output, copy] : copies_) {
      if (ctx.output(output) == nullptr) continue;  // an omitted optional output
      RETURN_IF_ERROR(copy.Run(ctx_, ctx.device_input(0), ctx.device_output(output), what));
    }
    return Status();
  }

 private:
  ocl::OpenClContext* ctx_;
  std::vector<std::pair<size_t, StridedCopy>> copies_;  // (output, its copy)
};

}  // namespace chipfit::opencl::data
