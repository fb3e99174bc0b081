// The CPU device's RoiAlign kernel (roi_cpu.cpp). RoiAlign against the reference: both
// modes, both coordinate modes at opset 16 and opset 10's fixed one, sampling_ratio 0 (adaptive) and 2,
// spatial_scale 1 and 1/16, RoIs partly or wholly outside the map, zero-size and flipped RoIs, several
// batches, f64/f16/bf16, Inf and NaN in the map, the reference's errors, 0 RoIs, a compiled model.
//
// Tolerances: RoiAlign computes sample positions, corners, weights and sums in double in the reference's
// order and rounds once, so on this build it equals the reference bit for bit. The tests allow 1e-6 of the
// largest reference value (~8 f32 ulp) so that a compiler contracting a multiply-add into an FMA (which moves
// the double sum in its last bits and may flip the final rounding) cannot fail them, while a wrong sample,
// corner or weight moves a value by a sizeable part of the inputs' range (values here are O(1), errors
// ≥ 1e-3). NaNs must sit where the reference has them.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/compiled_model.h"
#include "core/runtime/target.h"
#include "devices/cpu/cpu_kernels.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"
#include "tests/devices/cpu/kernel_layout_util.h"

namespace chipfit::testing {
namespace {

constexpr double kTolerance = 1e-6;

KernelFactory RoiFactory(const std::string& op, const std::string& name) {
  for (const KernelImpl& impl : CpuKernels().Find(op, "", DeviceKind::kCpu, Precision::kFp32)) {
    if (impl.name == name) return impl.create;
  }
  ADD_FAILURE() << "no " << name << " for " << op;
  return nullptr;
}

KernelFactory RoiAlign() { return RoiFactory("RoiAlign", "cpu:roi-align"); }

// Same shape, NaN exactly where `ref` has NaN, and elsewhere within kTolerance of the largest |ref|.
void ExpectMatches(const Tensor& out, const Tensor& ref) {
  ASSERT_EQ(out.shape(), ref.shape());
  ASSERT_EQ(out.dtype(), ref.dtype());
  double scale = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    if (std::isfinite(ref.GetAsDouble(i))) scale = std::max(scale, std::fabs(ref.GetAsDouble(i)));
  }
  int failures = 0;
  for (int64_t i = 0; i < ref.numel() && failures < 5; ++i) {
    const double a = out.GetAsDouble(i), b = ref.GetAsDouble(i);
    const bool ok = std::isnan(b) ? std::isnan(a) : (a == b || std::fabs(a - b) <= kTolerance * scale);
    if (!ok) {
      ADD_FAILURE() << "at flat index " << i << ": kernel " << a << ", reference " << b;
      ++failures;
    }
  }
}

void ExpectLikeReference(const KernelCase& c) {
  auto out = RunCpuKernel(RoiAlign(), c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  ASSERT_EQ(ref.size(), 1u);
  ExpectMatches((*out)[0], ref[0]);
}

// ---- RoiAlign ---------------------------------------------------------------------------------------------

struct AlignSpec {
  int64_t opset = 16;
  std::string mode = "avg";
  std::string transform{};  // "" = attribute omitted
  int64_t sampling_ratio = 0;
  float spatial_scale = 1;
  int64_t out_h = 3, out_w = 4;
};

KernelCase MakeAlignCase(const AlignSpec& s, Tensor x, Tensor rois, Tensor indices) {
  Attrs attrs{{"mode", StringAttr(s.mode)},
              {"sampling_ratio", IntAttr(s.sampling_ratio)},
              {"spatial_scale", FloatAttr(s.spatial_scale)},
              {"output_height", IntAttr(s.out_h)},
              {"output_width", IntAttr(s.out_w)}};
  if (!s.transform.empty()) attrs["coordinate_transformation_mode"] = StringAttr(s.transform);
  return KernelCase{.node = MakeNode("RoiAlign", 3, 1, std::move(attrs)),
                    .opset = s.opset,
                    .inputs = {std::move(x), std::move(rois), std::move(indices)}};
}

// `count` RoIs (x1, y1, x2, y2) in image coordinates (map pixels / scale) over an h×w map: most inside,
// some partly outside, a few wholly outside, zero-size (a point, a line) and flipped (x2 < x1).
Tensor RandomRois(int64_t count, int64_t h, int64_t w, float scale, uint64_t seed) {
  Tensor t(DType::kF32, {count, 4});
  SplitMix64 rng(seed);
  const auto fh = static_cast<float>(h), fw = static_cast<float>(w);
  for (int64_t i = 0; i < count; ++i) {
    float x1 = rng.Uniform(-2, fw), y1 = rng.Uniform(-2, fh);
    float x2 = x1 + rng.Uniform(0, fw / 2 + 2), y2 = y1 + rng.Uniform(0, fh / 2 + 2);
    switch (i % 8) {
      case 1: x2 = x1, y2 = y1; break;                                    // a point
      case 3: y2 = y1; break;                                             // a line
      case 5: std::swap(x1, x2); break;                                   // flipped
      case 6: x1 = -fw, y1 = -fh, x2 = -3, y2 = -2.5f; break;             // wholly outside, above left
      case 7: x1 = fw - 1, y1 = fh - 2, x2 = fw + 6, y2 = fh + 3; break;  // over the far corner
      default: break;
    }
    float* r = t.data<float>() + i * 4;
    r[0] = x1 / scale, r[1] = y1 / scale, r[2] = x2 / scale, r[3] = y2 / scale;
  }
  return t;
}

Tensor BatchIndices(int64_t count, int64_t batches) {
  Tensor t(DType::kI64, {count});
  for (int64_t i = 0; i < count; ++i) t.data<int64_t>()[i] = (i * 7 + 1) % batches;
  return t;
}

// `rois` and their batch indices `times` over: enough RoIs on a small map for the kernel to read a
// channels-last copy of X (many taps per element of X) where the RoIs alone read its planes.
std::pair<Tensor, Tensor> RepeatedRois(const Tensor& rois, const Tensor& indices, int64_t times) {
  const int64_t n = indices.numel();
  Tensor r(DType::kF32, {n * times, 4});
  Tensor b(DType::kI64, {n * times});
  for (int64_t t = 0; t < times; ++t) {
    for (int64_t i = 0; i < n * 4; ++i) r.data<float>()[t * n * 4 + i] = rois.data<float>()[i];
    for (int64_t i = 0; i < n; ++i) b.data<int64_t>()[t * n + i] = indices.GetAsInt64(i);
  }
  return {std::move(r), std::move(b)};
}

TEST(RoiCpuTest, RoiAlignMatchesReferenceInEveryMode) {
  const Tensor x = RandomF32({3, 4, 11, 9}, 1, -2, 2);
  for (const int64_t opset : {10, 16}) {
    const std::vector<std::string> transforms =
        opset == 10 ? std::vector<std::string>{""} : std::vector<std::string>{"", "half_pixel", "output_half_pixel"};
    for (const std::string& transform : transforms) {
      for (const std::string mode : {"avg", "max"}) {
        for (const int64_t ratio : {0, 2}) {
          for (const float scale : {1.0f, 1.0f / 16}) {
            SCOPED_TRACE("opset " + std::to_string(opset) + " " + transform + " " + mode + " ratio " +
                         std::to_string(ratio) + " scale " + std::to_string(scale));
            const AlignSpec s{
                .opset = opset, .mode = mode, .transform = transform, .sampling_ratio = ratio, .spatial_scale = scale};
            ExpectLikeReference(MakeAlignCase(s, x, RandomRois(16, 11, 9, scale, 2), BatchIndices(16, 3)));
          }
        }
      }
    }
  }
}

TEST(RoiCpuTest, RoiAlignOpset10IgnoresTheCoordinateMode) {
  // Opset 10 has no coordinate_transformation_mode: a stray half_pixel must not shift its RoIs.
  const AlignSpec s{.opset = 10, .transform = "half_pixel", .sampling_ratio = 2};
  const KernelCase c = MakeAlignCase(s, RandomF32({1, 2, 6, 6}, 3), F32({1, 4}, {0.5f, 1, 4, 3.5f}), I64({1}, {0}));
  auto out = RunCpuKernel(RoiAlign(), c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectMatches((*out)[0], RunReference(c)[0]);
  KernelCase unshifted = c;
  unshifted.node.attributes.erase("coordinate_transformation_mode");
  ExpectMatches((*out)[0], RunReference(unshifted)[0]);
}

TEST(RoiCpuTest, RoiAlignAdaptiveSamplingOfLargeAndTinyRois) {
  // Adaptive sampling: a large RoI takes many samples per bin, a tiny one (half_pixel: no 1×1 minimum) one,
  // a zero-size one none (output 0); other output sizes and sampling ratios. 11 channels: a group of 8
  // computed side by side and 3 alone.
  const Tensor x = RandomF32({2, 11, 40, 30}, 4);
  const Tensor rois = F32({4, 4}, {0, 0, 29, 39, 3.2f, 4.1f, 3.3f, 4.15f, 7, 7, 7, 7, -5, 10, 40, 12});
  for (const std::string transform : {"half_pixel", "output_half_pixel"}) {
    for (const std::string mode : {"avg", "max"}) {
      for (const int64_t ratio : {0, 1, 3}) {
        SCOPED_TRACE(transform + " " + mode + " " + std::to_string(ratio));
        const AlignSpec s{.mode = mode, .transform = transform, .sampling_ratio = ratio, .out_h = 2, .out_w = 5};
        const Tensor indices = I64({4}, {1, 0, 1, 0});
        ExpectLikeReference(MakeAlignCase(s, x, rois, indices));
        auto [many, many_indices] = RepeatedRois(rois, indices, 16);
        ExpectLikeReference(MakeAlignCase(s, x, std::move(many), std::move(many_indices)));
      }
    }
  }
}

TEST(RoiCpuTest, RoiAlignLargeRunsParallel) {
  // Many RoIs (a task per RoI), and one RoI over many channels (split into channel blocks).
  const Tensor x = RandomF32({2, 24, 40, 48}, 5);
  for (const std::string mode : {"avg", "max"}) {
    for (const int64_t ratio : {0, 2}) {
      SCOPED_TRACE(mode + " " + std::to_string(ratio));
      const AlignSpec s{.mode = mode, .sampling_ratio = ratio, .spatial_scale = 0.25f, .out_h = 7, .out_w = 7};
      ExpectLikeReference(MakeAlignCase(s, x, RandomRois(40, 40, 48, 0.25f, 6), BatchIndices(40, 2)));
      ExpectLikeReference(MakeAlignCase(s, x, F32({1, 4}, {8, 12, 150, 101}), I64({1}, {1})));
    }
  }
}

TEST(RoiCpuTest, RoiAlignOtherFloatTypes) {
  const Tensor x32 = RandomF32({2, 3, 8, 7}, 7);
  const Tensor rois = RandomRois(8, 8, 7, 1, 8);
  for (const DType dtype : {DType::kF64, DType::kF16, DType::kBF16}) {
    Tensor x(dtype, x32.shape());
    for (int64_t i = 0; i < x.numel(); ++i) {
      const float v = x32.data<float>()[i];
      if (dtype == DType::kF64) x.data<double>()[i] = v;
      if (dtype == DType::kF16) x.data<Float16>()[i] = Float16(v);
      if (dtype == DType::kBF16) x.data<BFloat16>()[i] = BFloat16(v);
    }
    for (const std::string mode : {"avg", "max"}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + mode);
      ExpectLikeReference(MakeAlignCase({.mode = mode, .sampling_ratio = 2}, x, rois, BatchIndices(8, 2)));
    }
  }
  // f64 RoIs and i32 batch indices are read as the reference reads them.
  Tensor rois64(DType::kF64, rois.shape());
  for (int64_t i = 0; i < rois.numel(); ++i) rois64.data<double>()[i] = rois.data<float>()[i] + 1.0 / 3;
  ExpectLikeReference(MakeAlignCase({}, x32, rois64, I32({8}, {1, 0, 1, 1, 0, 0, 1, 0})));
}

TEST(RoiCpuTest, RoiAlignInfAndNanReachTheOutputAsInTheReference) {
  // An Inf at a plane's first pixel: the reference multiplies it by weight 0 for every sample outside the
  // map (NaN); an Inf and a NaN inside reach the bins that sample them, also through weight-0 corners.
  Tensor x = RandomF32({1, 2, 6, 6}, 9);
  x.data<float>()[0] = std::numeric_limits<float>::infinity();
  x.data<float>()[36 + 14] = std::nanf("");
  x.data<float>()[36 + 27] = -std::numeric_limits<float>::infinity();
  const Tensor rois = F32({4, 4}, {-20, -20, -10, -10, 0, 0, 5, 5, 2, 2, 2, 2, 3, 3, 6, 6});
  for (const std::string mode : {"avg", "max"}) {
    for (const std::string transform : {"half_pixel", "output_half_pixel"}) {
      SCOPED_TRACE(mode + " " + transform);
      const AlignSpec s{.mode = mode, .transform = transform, .sampling_ratio = 2, .out_h = 2, .out_w = 2};
      const Tensor indices = I64({4}, {0, 0, 0, 0});
      ExpectLikeReference(MakeAlignCase(s, x, rois, indices));
      auto [many, many_indices] = RepeatedRois(rois, indices, 4);
      ExpectLikeReference(MakeAlignCase(s, x, std::move(many), std::move(many_indices)));
    }
  }
}

TEST(RoiCpuTest, RoiAlignZeroRoisGiveAnEmptyOutput) {
  const KernelCase c =
      MakeAlignCase({}, RandomF32({2, 3, 5, 5}, 10), Tensor(DType::kF32, {0, 4}), Tensor(DType::kI64, {0}));
  auto out = RunCpuKernel(RoiAlign(), c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{0, 3, 3, 4}));
}

// The kernel fails as the reference does, with its message word for word.
void ExpectReferenceError(const KernelCase& c, const std::string& text) {
  auto out = RunCpuKernel(RoiAlign(), c);
  ASSERT_FALSE(out.ok());
  const Status ref = RunNodeOnReference(c.node, c.opset, c.inputs).status();
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << out.status().ToString();
  EXPECT_EQ(out.status().message(), ref.message());
  EXPECT_NE(out.status().message().find(text), std::string::npos) << out.status().message();
}

TEST(RoiCpuTest, RoiAlignBatchIndexOutOfRangeIsTheReferenceError) {
  const Tensor x = RandomF32({2, 3, 5, 5}, 11);
  const Tensor rois = RandomRois(3, 5, 5, 1, 12);
  ExpectReferenceError(MakeAlignCase({}, x, rois, I64({3}, {0, 2, 1})), "batch_indices[1] = 2 is outside [0, 2)");
  ExpectReferenceError(MakeAlignCase({}, x, rois, I64({3}, {1, 0, -1})), "batch_indices[2] = -1 is outside [0, 2)");
  ExpectReferenceError(MakeAlignCase({}, x, rois, I64({3}, {int64_t{1} << 40, 0, 0})), "is outside [0, 2)");
}

TEST(RoiCpuTest, RoiAlignRefusesAbsurdSampleCountsAsTheReference) {
  const AlignSpec s{.sampling_ratio = int64_t{1} << 20};
  ExpectReferenceError(MakeAlignCase(s, RandomF32({1, 1, 4, 4}, 13), F32({1, 4}, {0, 0, 1, 1}), I64({1}, {0})),
                       "sampling_ratio or the RoI is too large");
}

TEST(RoiCpuTest, RoiAlignRefusesOtherTypesWithTheReason) {
  const Tensor rois = F32({1, 4}, {0, 0, 2, 2});
  KernelCase c = MakeAlignCase({}, Tensor(DType::kI32, {1, 1, 4, 4}), rois, I64({1}, {0}));
  EXPECT_NE(RefusalOf(RoiAlign(), c).find("i32 X (f32, f64, f16 and bf16 only"), std::string::npos);
  c = MakeAlignCase({}, RandomF32({1, 1, 4, 4}, 14), rois, F32({1}, {0}));
  EXPECT_NE(RefusalOf(RoiAlign(), c).find("f32 batch_indices (integers only"), std::string::npos);
  c = MakeAlignCase({}, RandomF32({1, 1, 4, 4}, 14), I64({1, 4}, {0, 0, 2, 2}), I64({1}, {0}));
  EXPECT_NE(RefusalOf(RoiAlign(), c).find("i64 rois (floating point only"), std::string::npos);
  c = MakeAlignCase({.mode = "min"}, RandomF32({1, 1, 4, 4}, 14), rois, I64({1}, {0}));
  EXPECT_NE(RefusalOf(RoiAlign(), c).find("mode 'min'"), std::string::npos);
}

ValueDesc Input(const std::string& name, DType dtype, Shape shape) {
  ValueDesc desc;
  desc.name = name;
  desc.dtype = dtype;
  desc.has_shape = true;
  desc.shape = std::move(shape);
  return desc;
}

TEST(RoiCpuTest, RoiAlignRunsOnTheCpuKernelInACompiledModel) {
  const KernelCase c = MakeAlignCase({.mode = "avg", .sampling_ratio = 0, .spatial_scale = 0.5f},
                                     RandomF32({2, 3, 9, 8}, 15), RandomRois(5, 9, 8, 0.5f, 16), BatchIndices(5, 2));
  Graph g;
  g.name = "roi_align";
  g.opset = 16;
  g.inputs = {Input("in0", DType::kF32, {2, 3, 9, 8}), Input("in1", DType::kF32, {5, 4}),
              Input("in2", DType::kI64, {5})};
  ValueDesc out;
  out.name = "out0";
  out.dtype = DType::kF32;
  g.outputs = {out};
  g.nodes = {c.node};
  CompileOptions options;
  options.kernels = &CpuKernels();
  auto model = Compile(g, *ParseTarget("cpu:fp32"), options);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ((*model)->kernels()[0].implementation, "cpu:roi-align");
  EXPECT_TRUE((*model)->fallbacks().empty());
  auto y = (*model)->Run({{"in0", c.inputs[0]}, {"in1", c.inputs[1]}, {"in2", c.inputs[2]}});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ExpectMatches((*y)[0], RunReference(c)[0]);
}

}  // namespace
}  // namespace chipfit::testing
