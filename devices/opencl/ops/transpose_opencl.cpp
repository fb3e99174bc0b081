// Transpose on OpenCL, any perm and rank (after merging dims that stay neighbours): a local-memory tiled
// kernel when the permutation swaps the last two (merged) dims, copy.cl's strided copy otherwise.
#include "core/reference/ref_util.h"
#include "devices/opencl/ops/data_opencl.h"
#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit::opencl {
namespace {

constexpr int64_t kTile = 32, kTileRows = 8;  // transpose.cl's TILE and ROWS
constexpr int64_t kMinTiled = 8;              // narrower swaps waste most of a tile: strided copy

// planes × rows × cols → planes × cols × rows.
class TiledTranspose final : public IKernel {
 public:
  TiledTranspose(ocl::OpenClContext* ctx, cl::Kernel kernel, int64_t planes, int64_t rows, int64_t cols)
      : ctx_(ctx), kernel_(std::move(kernel)), planes_(planes), rows_(rows), cols_(cols) {}
  bool InputOnDevice(size_t input) const override { return input == 0; }
  bool OutputOnDevice(size_t) const override { return true; }
  Status Run(KernelContext& ctx) override {
    const std::string what = ctx.node().Describe();
    RETURN_IF_ERROR(ocl::SetArgs(kernel_, what, ocl::Mem(ctx.device_input(0)), ocl::Mem(ctx.device_output(0)),
                                 static_cast<cl_int>(rows_), static_cast<cl_int>(cols_)));
    const cl::NDRange global(data::RoundUp(static_cast<size_t>(cols_), kTile),
                             data::RoundUp(static_cast<size_t>(rows_), kTile) / kTile * kTileRows,
                             static_cast<size_t>(planes_));
    return ctx_->Launch(kernel_, global, cl::NDRange(kTile, kTileRows, 1), what);
  }

 private:
  ocl::OpenClContext* ctx_;
  cl::Kernel kernel_;
  int64_t planes_, rows_, cols_;
};

// The tiled kernel where the merged copy is [planes,] P × Q reading a Q × P source: a last-two swap.
Result<std::unique_ptr<IKernel>> TryTiled(ocl::OpenClContext* ctx, DType storage, data::StridedSpec spec) {
  data::MergeDims(spec);
  const size_t r = spec.dims.size();
  if (r < 2 || r > 3) return std::unique_ptr<IKernel>();
  const int64_t p = spec.dims[r - 2], q = spec.dims[r - 1];
  const bool swap = spec.src_strides[r - 2] == 1 && spec.src_strides[r - 1] == p && spec.dst_strides[r - 1] == 1 &&
                    spec.dst_strides[r - 2] == q &&
                    (r == 2 || (spec.src_strides[0] == p * q && spec.dst_strides[0] == p * q));
  if (!swap || p < kMinTiled || q < kMinTiled) return std::unique_ptr<IKernel>();
  const size_t elem = DTypeSize(storage);
  const ocl::DeviceLimits& limits = ctx->runtime().limits();
  if (limits.max_work_item_sizes.size() < 2 || limits.max_work_item_sizes[0] < kTile ||
      limits.max_work_item_sizes[1] < kTileRows || limits.local_mem_bytes < kTile * (kTile + 1) * elem) {
    return std::unique_ptr<IKernel>();
  }
  ASSIGN_OR_RETURN(std::string define, data::ElemDefine(storage));
  ASSIGN_OR_RETURN(cl::Kernel kernel, ctx->CreateKernel("transpose", "transpose_tiled", define));
  size_t max_group = 0;
  if (kernel.getWorkGroupInfo(ctx->runtime().device(), CL_KERNEL_WORK_GROUP_SIZE, &max_group) != CL_SUCCESS ||
      max_group < static_cast<size_t>(kTile * kTileRows)) {
    return std::unique_ptr<IKernel>();  // this device cannot run a whole tile: strided copy
  }
  const int64_t planes = r == 3 ? spec.dims[0] : 1;
  return std::unique_ptr<IKernel>(new TiledTranspose(ctx, std::move(kernel), planes, q, p));
}

}  // namespace

Result<std::unique_ptr<IKernel>> CreateTranspose(const KernelInit& init) {
  ASSIGN_OR_RETURN(ocl::OpenClContext * ctx, data::CheckInit(init, {0}));
  const Node& node = init.node;
  const Shape& in = init.inputs[0]->shape;
  const size_t rank = in.size();
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  perm = node.GetInts("perm", perm);
  std::vector<bool> seen(rank, false);
  if (perm.size() != rank) return InvalidArgument(node.Describe() + ": perm has the wrong length");
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)]) {
      return InvalidArgument(node.Describe() + ": perm is not a permutation of " + std::to_string(rank) + " axes");
    }
    seen[static_cast<size_t>(p)] = true;
  }
  const std::vector<int64_t> in_strides = data::DenseStrides(in);
  data::StridedSpec spec;
  for (int64_t p : perm) {
    spec.dims.push_back(in[static_cast<size_t>(p)]);
    spec.src_strides.push_back(in_strides[static_cast<size_t>(p)]);
  }
  spec.dst_strides = data::DenseStrides(spec.dims);
  const DType storage = ctx->StorageType(init.inputs[0]->dtype);
  ASSIGN_OR_RETURN(std::unique_ptr<IKernel> tiled, TryTiled(ctx, storage, spec));
  if (tiled) return tiled;
  ASSIGN_OR_RETURN(data::StridedCopy copy, data::StridedCopy::Create(ctx, storage, std::move(spec)));
  return data::StridedOutputsKernel::One(ctx, std::move(copy));
}

}  // namespace chipfit::opencl
