// MatMul (numpy batch broadcasting, 1-D operands) and Gemm (transA, transB, alpha, beta, C broadcast
// to M x N) on the tiled GEMM of ops/gemm.cl, and GemmLauncher, which Conv uses as well.
#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "devices/opencl/ops/gemm_opencl.h"
#include "devices/opencl/ops/opencl_ops.h"

namespace chipfit::opencl {

Result<ocl::OpenClContext*> GemmFamilyDevice(const KernelInit& init) {
  if (init.device == nullptr) return Unsupported(init.node.op_type + " on OpenCL needs an OpenCL device context");
  return static_cast<ocl::OpenClContext*>(init.device);
}

Status RequireStaticF32(const KernelInit& init, std::initializer_list<size_t> required,
                        std::initializer_list<size_t> optional) {
  const std::string op = init.node.op_type + " on OpenCL: ";
  if (init.outputs == nullptr) return Unsupported(op + "output shapes only known at run time");
  auto check = [&](size_t i, bool must) -> Status {
    const ValueInfo* in = i < init.inputs.size() ? init.inputs[i] : nullptr;
    if (in == nullptr) return must ? Unsupported(op + "input " + std::to_string(i) + " is missing") : Status();
    const std::string name = "input " + std::to_string(i) + " ";
    if (in->dtype != DType::kF32)
      return Unsupported(op + name + "has dtype " + std::string(DTypeName(in->dtype)) + ", not f32");
    for (int64_t d : in->shape) {
      if (d < 0) return Unsupported(op + name + "shape " + ShapeToString(in->shape) + " only known at run time");
    }
    const int64_t count = NumElements(in->shape);
    if (count == 0) return Unsupported(op + name + "is empty " + ShapeToString(in->shape));
    if (count > INT_MAX) return Unsupported(op + name + "has 2^31 or more elements (kernels index with int)");
    return Status();
  };
  for (size_t i : required) RETURN_IF_ERROR(check(i, true));
  for (size_t i : optional) RETURN_IF_ERROR(check(i, false));
  for (const ValueInfo& out : *init.outputs) {
    for (int64_t d : out.shape) {
      if (d < 0) return Unsupported(op + "output shape " + ShapeToString(out.shape) + " only known at run time");
    }
    const int64_t count = NumElements(out.shape);
    if (count == 0) return Unsupported(op + "the output is empty " + ShapeToString(out.shape));
    if (count > INT_MAX) return Unsupported(op + "the output has 2^31 or more elements (kernels index with int)");
  }
  return Status();
}

Status CheckRunShape(const KernelContext& ctx, size_t i, const Shape& want) {
  const Tensor* in = ctx.input(i);
  if (in == nullptr || in->shape() == want) return Status();
  return ctx.Error("input " + std::to_string(i) + " has shape " + ShapeToString(in->shape()) +
                   " but the OpenCL kernel was built for " + ShapeToString(want));
}

namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Work items along one dim of the tile (at most `threads`, fewer when the matrix is thinner, so
// that M = 1 does not idle 15 of 16 rows) and the register block each computes: bigger blocks
// reuse each local-memory read more but waste work at the matrix edge.
void ChooseDim(int64_t size, int64_t threads, int64_t& tile, int64_t& reg) {
  // 4-wide register blocks wherever the matrix has 4 rows (columns): a 4x4 block keeps 16 sums per
  // work item against 8 local-memory reads per step, where a 1-wide one keeps 4 against 5 (on
  // POCL's CPU device, openWakeWord's 24-96-channel convolutions ran 1.6x faster this way). The
  // items along the dim are the power of two that covers the size with such blocks, up to
  // `threads`: few distinct tiles, since each is a program build of its own.
  reg = size >= 4 ? 4 : (size >= 2 ? 2 : 1);
  int64_t items = 1;
  while (items < threads && items * reg < size) items *= 2;
  tile = items * reg;
}

std::string Int4Name(const char* name, const std::array<int64_t, 4>& v) {
  return std::string(name) + "=" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) +
         "," + std::to_string(v[3]);
}

cl_int4 Int4(const std::array<int64_t, 4>& v) {
  cl_int4 r;
  for (int i = 0; i < 4; ++i) r.s[i] = static_cast<cl_int>(v[static_cast<size_t>(i)]);
  return r;
}

}  // namespace

Result<GemmLauncher> GemmLauncher::Create(ocl::OpenClContext& ctx, const GemmSpec& spec) {
  const ocl::DeviceLimits& limits = ctx.runtime().limits();
  constexpr int64_t kTk = 16;
  const int64_t max_x = limits.max_work_item_sizes.size() > 0 ? static_cast<int64_t>(limits.max_work_item_sizes[0]) : 1;
  const int64_t max_y = limits.max_work_item_sizes.size() > 1 ? static_cast<int64_t>(limits.max_work_item_sizes[1]) : 1;
  std::string defines_common = " -DTK=" + std::to_string(kTk);
  defines_common += " -DA_KFAST=" + std::to_string(spec.a_sk == 1 ? 1 : 0);
  defines_common += " -DB_NFAST=" + std::to_string(spec.conv_b || spec.b_sn == 1 ? 1 : 0);
  if (spec.conv_b) defines_common += " -DCONV_B";

  // 16 x 16 work items where the device allows (every GPU does), else 8 x 8, 4 x 4, ...; a kernel
  // the compiler cannot run that wide (registers) falls back too.
  Status last = Unsupported("GEMM on OpenCL: the device allows no work group of 16 or more items");
  for (int64_t threads = 16; threads >= 1; threads /= 2) {
    if (threads * threads > static_cast<int64_t>(limits.max_work_group_size) || threads > max_x || threads > max_y) {
      continue;
    }
    GemmLauncher g;
    g.spec_ = spec;
    ChooseDim(spec.m, threads, g.tm_, g.rm_);
    ChooseDim(spec.n, threads, g.tn_, g.rn_);
    const size_t local_bytes = static_cast<size_t>((g.tm_ + 1 + g.tn_ + 1) * kTk) * sizeof(float);
    if (local_bytes > limits.local_mem_bytes) continue;
    const std::string defines = "-DTM=" + std::to_string(g.tm_) + " -DTN=" + std::to_string(g.tn_) +
                                " -DRM=" + std::to_string(g.rm_) + " -DRN=" + std::to_string(g.rn_) + defines_common;
    auto kernel = ctx.CreateKernel("gemm", "gemm", defines);
    if (!kernel.ok()) {
      last = kernel.status();
      continue;
    }
    size_t max_items = 0;
    kernel->getWorkGroupInfo(ctx.runtime().device(), CL_KERNEL_WORK_GROUP_SIZE, &max_items);
    const auto items = static_cast<size_t>((g.tm_ / g.rm_) * (g.tn_ / g.rn_));
    if (max_items != 0 && max_items < items) {
      last = Unsupported("GEMM on OpenCL: the kernel runs at most " + std::to_string(max_items) + " work items");
      continue;
    }
    g.kernel_ = std::move(kernel).value();
    if (spec.conv_b) RETURN_IF_ERROR(g.UploadConvTables(ctx));
    return g;
  }
  return last;
}

Status GemmLauncher::UploadConvTables(ocl::OpenClContext& ctx) {
  const GemmSpec& s = spec_;
  Tensor ktab(DType::kI32, {s.k, 4});
  Tensor ntab(DType::kI32, {s.n, 2});
  const int64_t taps = s.kh * s.kw;
  for (int64_t k = 0; k < s.k; ++k) {
    const int64_t c = k / taps, kh = k % taps / s.kw, kw = k % s.kw;
    int32_t* row = ktab.data<int32_t>() + 4 * k;
    row[0] = static_cast<int32_t>(c * s.ih * s.iw + kh * s.dh * s.iw + kw * s.dw);
    row[1] = static_cast<int32_t>(kh * s.dh);
    row[2] = static_cast<int32_t>(kw * s.dw);
    row[3] = 0;
  }
  for (int64_t n = 0; n < s.n; ++n) {
    ntab.data<int32_t>()[2 * n] = static_cast<int32_t>(n / s.ow * s.sh - s.ph);
    ntab.data<int32_t>()[2 * n + 1] = static_cast<int32_t>(n % s.ow * s.sw - s.pw);
  }
  const size_t align = ctx.Alignment();
  const size_t k_bytes = ktab.nbytes(), k_padded = (k_bytes + align - 1) / align * align;
  ASSIGN_OR_RETURN(tables_, ctx.Allocate(k_padded + ntab.nbytes()));
  ASSIGN_OR_RETURN(ktab_, tables_->View(0, k_bytes));
  ASSIGN_OR_RETURN(ntab_, tables_->View(k_padded, ntab.nbytes()));
  RETURN_IF_ERROR(ctx.Upload(ktab, ktab_));
  return ctx.Upload(ntab, ntab_);
}

Status GemmLauncher::Run(ocl::OpenClContext& ctx, cl_mem a, cl_mem b, cl_mem c, cl_mem z, cl_mem y,
                         std::string_view what) {
  const GemmSpec& s = spec_;
  // Absent operands are never read (flags without CF_HAS_C / CF_HAS_Z); A stands in for them so that no null
  // buffer argument is passed.
  if (c == nullptr) c = a;
  if (z == nullptr) z = a;
  const auto i32 = [](int64_t v) { return static_cast<cl_int>(v); };
  const GemmEpilogue& e = s.epilogue;
  const cl_int flags =
      (s.has_c ? 1 : 0) | (s.has_z ? 2 : 0) | (e.clamp ? 4 : 0) | (e.linear ? 8 : 0);  // gemm.cl's CF_HAS_*
  // Without the conv tables A stands in for them too (CONV_B is not defined, they are not read).
  const cl_mem ktab = s.conv_b ? ocl::Mem(ktab_) : a;
  const cl_mem ntab = s.conv_b ? ocl::Mem(ntab_) : a;
  RETURN_IF_ERROR(ocl::SetArgs(kernel_, what, a, b, c, z, y, ktab, ntab, i32(s.m), i32(s.n), i32(s.k), Int4(s.batch),
                               Int4(s.a_bs), Int4(s.b_bs), Int4(s.c_bs), Int4(s.z_bs), Int4(s.y_bs), i32(s.a_sm),
                               i32(s.a_sk), i32(s.b_sk), i32(s.b_sn), i32(s.c_sm), i32(s.c_sn), i32(s.z_sm),
                               i32(s.z_shi), i32(s.z_slo), i32(s.z_div), i32(s.y_sm), s.alpha, s.beta, e.activation,
                               flags, e.p0, e.p1, e.lo, e.hi, e.scale, e.shift, i32(s.ih), i32(s.iw), i32(s.kh),
                               i32(s.kw), i32(s.ow), i32(s.sh), i32(s.sw), i32(s.dh), i32(s.dw), i32(s.ph), i32(s.pw)));
  const int64_t wx = tn_ / rn_, wy = tm_ / rm_;
  const int64_t batches = s.batch[0] * s.batch[1] * s.batch[2] * s.batch[3];
  const cl::NDRange global(static_cast<size_t>(CeilDiv(s.n, tn_) * wx), static_cast<size_t>(CeilDiv(s.m, tm_) * wy),
                           static_cast<size_t>(batches));
  return ctx.Launch(kernel_, global, cl::NDRange(static_cast<size_t>(wx), static_cast<size_t>(wy), 1), what);
}

std::string GemmLauncher::Describe() const {
  return std::to_string(tm_) + "x" + std::to_string(tn_) + "x16 tile, " + std::to_string(rm_) + "x" +
         std::to_string(rn_) + " per work item (" + Int4Name("batch", spec_.batch) + ")";
}

namespace {

// Batch dims of the output with each operand's stride (0 where it broadcasts); size-1 dims are
// dropped and neighbours that step through memory as one dim are merged.
struct BatchDim {
  int64_t size, a, b, y;
};

std::vector<BatchDim> MergeBatchDims(const std::vector<BatchDim>& dims) {
  std::vector<BatchDim> out;
  for (const BatchDim& d : dims) {
    if (d.size == 1) continue;
    if (!out.empty()) {
      BatchDim& prev = out.back();
      if (prev.a == d.a * d.size && prev.b == d.b * d.size && prev.y == d.y * d.size) {
        prev = {prev.size * d.size, d.a, d.b, d.y};
        continue;
      }
    }
    out.push_back(d);
  }
  return out;
}

std::vector<int64_t> RowMajorStrides(const Shape& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

class GemmKernel final : public IKernel {
 public:
  GemmKernel(ocl::OpenClContext* ctx, GemmLauncher launcher, std::vector<Shape> shapes)
      : ctx_(ctx), launcher_(std::move(launcher)), shapes_(std::move(shapes)) {}

  Status Run(KernelContext& ctx) override {
    for (size_t i = 0; i < shapes_.size(); ++i) RETURN_IF_ERROR(CheckRunShape(ctx, i, shapes_[i]));
    const bool has_c = shapes_.size() > 2 && ctx.input(2) != nullptr;
    return launcher_.Run(*ctx_, ocl::Mem(ctx.device_input(0)), ocl::Mem(ctx.device_input(1)),
                         has_c ? ocl::Mem(ctx.device_input(2)) : nullptr, nullptr, ocl::Mem(ctx.device_output(0)),
                         ctx.node().Describe());
  }
  bool InputOnDevice(size_t i) const override { return i < shapes_.size(); }
  bool OutputOnDevice(size_t) const override { return true; }

 private:
  ocl::OpenClContext* ctx_;
  GemmLauncher launcher_;
  std::vector<Shape> shapes_;  // the inputs' shapes the launcher was built for
};

}  // namespace

Result<std::unique_ptr<IKernel>> CreateMatMul(const KernelInit& init) {
  ASSIGN_OR_RETURN(ocl::OpenClContext * device, GemmFamilyDevice(init));
  RETURN_IF_ERROR(RequireStaticF32(init, {0, 1}));
  const Shape& a = init.inputs[0]->shape;
  const Shape& b = init.inputs[1]->shape;
  if (a.empty() || b.empty()) return Unsupported("MatMul on OpenCL: scalar operands");
  // A 1-D A is a row [1, K], a 1-D B a column [K, 1]; missing leading batch dims are 1s.
  const Shape a2 = a.size() == 1 ? Shape{1, a[0]} : a;
  const Shape b2 = b.size() == 1 ? Shape{b[0], 1} : b;
  const size_t rank = std::max(a2.size(), b2.size());
  Shape ad(rank, 1), bd(rank, 1);
  std::copy(a2.begin(), a2.end(), ad.begin() + static_cast<std::ptrdiff_t>(rank - a2.size()));
  std::copy(b2.begin(), b2.end(), bd.begin() + static_cast<std::ptrdiff_t>(rank - b2.size()));
  GemmSpec s;
  s.m = ad[rank - 2];
  s.k = ad[rank - 1];
  s.n = bd[rank - 1];
  if (bd[rank - 2] != s.k) {
    return InvalidArgument(init.node.Describe() + ": inner dims differ: A " + ShapeToString(a) + " and B " +
                           ShapeToString(b));
  }
  Shape yd(rank);
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (ad[i] != bd[i] && ad[i] != 1 && bd[i] != 1) {
      return InvalidArgument(init.node.Describe() + ": batch dims of " + ShapeToString(a) + " and " + ShapeToString(b) +
                             " do not broadcast");
    }
    yd[i] = std::max(ad[i], bd[i]);
  }
  yd[rank - 2] = s.m;
  yd[rank - 1] = s.n;
  const std::vector<int64_t> as = RowMajorStrides(ad), bs = RowMajorStrides(bd), ys = RowMajorStrides(yd);
  std::vector<BatchDim> dims;
  for (size_t i = 0; i + 2 < rank; ++i) {
    dims.push_back({yd[i], ad[i] == 1 ? 0 : as[i], bd[i] == 1 ? 0 : bs[i], ys[i]});
  }
  std::vector<BatchDim> merged = MergeBatchDims(dims);
  s.a_sm = s.k;
  s.a_sk = 1;
  s.b_sk = s.n;
  s.b_sn = 1;
  s.y_sm = s.n;
  // A batch of contiguous A against one shared B ([B, S, K] x [K, N]) is a single taller product.
  if (merged.size() == 1 && merged[0].b == 0 && merged[0].a == s.m * s.k && merged[0].y == s.m * s.n) {
    s.m *= merged[0].size;
    merged.clear();
  }
  if (merged.size() > 4) {
    return Unsupported("MatMul on OpenCL: " + std::to_string(merged.size()) +
                       " batch dims that do not merge (at most 4): A " + ShapeToString(a) + ", B " + ShapeToString(b));
  }
  for (size_t i = 0; i < merged.size(); ++i) {
    const size_t at = 4 - merged.size() + i;
    s.batch[at] = merged[i].size;
    s.a_bs[at] = merged[i].a;
    s.b_bs[at] = merged[i].b;
    s.y_bs[at] = merged[i].y;
  }
  ASSIGN_OR_RETURN(GemmLauncher launcher, GemmLauncher::Create(*device, s));
  return std::unique_ptr<IKernel>(new GemmKernel(device, std::move(launcher), {a, b}));
}

Result<std::unique_ptr<IKernel>> CreateGemm(const KernelInit& init) {
  ASSIGN_OR_RETURN(ocl::OpenClContext * device, GemmFamilyDevice(init));
  RETURN_IF_ERROR(RequireStaticF32(init, {0, 1}, {2}));
  const Node& node = init.node;
  const Shape& a = init.inputs[0]->shape;
  const Shape& b = init.inputs[1]->shape;
  if (a.size() != 2 || b.size() != 2) return InvalidArgument(node.Describe() + ": A and B must be 2-D");
  const bool ta = node.GetInt("transA", 0) != 0, tb = node.GetInt("transB", 0) != 0;
  GemmSpec s;
  s.m = ta ? a[1] : a[0];
  s.k = ta ? a[0] : a[1];
  s.n = tb ? b[0] : b[1];
  if ((tb ? b[1] : b[0]) != s.k) {
    return InvalidArgument(node.Describe() + ": inner dims differ: A " + ShapeToString(a) + " and B " +
                           ShapeToString(b));
  }
  // A transposed operand is read in place with swapped strides.
  s.a_sm = ta ? 1 : s.k;
  s.a_sk = ta ? s.m : 1;
  s.b_sk = tb ? 1 : s.n;
  s.b_sn = tb ? s.k : 1;
  s.y_sm = s.n;
  s.alpha = node.GetFloat("alpha", 1.0f);
  s.beta = node.GetFloat("beta", 1.0f);
  std::vector<Shape> shapes = {a, b};
  const ValueInfo* c = init.inputs.size() > 2 ? init.inputs[2] : nullptr;
  if (c != nullptr) {
    const Shape& cs = c->shape;
    if (cs.size() > 2 || (!cs.empty() && cs.back() != 1 && cs.back() != s.n) ||
        (cs.size() == 2 && cs[0] != 1 && cs[0] != s.m)) {
      return InvalidArgument(node.Describe() + ": C " + ShapeToString(cs) + " does not broadcast to [" +
                             std::to_string(s.m) + ", " + std::to_string(s.n) + "]");
    }
    s.has_c = true;
    s.c_sn = !cs.empty() && cs.back() != 1 ? 1 : 0;
    s.c_sm = cs.size() == 2 && cs[0] != 1 ? cs[1] : 0;
    shapes.push_back(cs);
  }
  ASSIGN_OR_RETURN(GemmLauncher launcher, GemmLauncher::Create(*device, s));
  return std::unique_ptr<IKernel>(new GemmKernel(device, std::move(launcher), std::move(shapes)));
}

}  // namespace chipfit::opencl
