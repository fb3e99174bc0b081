// CUDA pooling, resize and data-movement kernels. Everywhere: the strided-copy planner (collapsing,
// widening, limits), resize tap tables, pad and gather walks, and the factories' refusals, decided
// before a context is asked for (an accepted plan ends at "no CUDA device context" without a GPU). On
// a GPU: every factory against the reference on fp32, fp16 and bf16 storage, and integer dtypes exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "devices/cuda/ops/cuda_ops.h"
#include "devices/cuda/ops/data_launch.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cuda/cuda_test_util.h"

namespace chipfit::testing {
namespace {

using cuda::data::GatherWalk;
using cuda::data::PadWalk;
using cuda::data::ResizeCoords;
using cuda::data::ResizeTap;
using cuda::data::ResizeTransform;
using cuda::data::ResizeWalk;
using cuda::data::StridedCopy;

// ---- strided-copy planning (host only)

std::vector<uint32_t> Dims(const StridedCopy& p) { return {p.dims, p.dims + p.rank}; }
std::vector<int32_t> Src(const StridedCopy& p) { return {p.src_strides, p.src_strides + p.rank}; }
std::vector<int32_t> Dst(const StridedCopy& p) { return {p.dst_strides, p.dst_strides + p.rank}; }

TEST(DataCudaPlan, IdentityCollapsesToOneWideCopy) {
  StridedCopy p;
  ASSERT_EQ(cuda::data::PlanStridedCopy({2, 3, 4}, {12, 4, 1}, {12, 4, 1}, 0, 0, 4, p), "");
  EXPECT_TRUE(p.Contiguous());
  EXPECT_EQ(p.unit, 16u);  // 4 floats per unit
  EXPECT_EQ(p.numel, 6u);
  // An odd count stays in elements.
  ASSERT_EQ(cuda::data::PlanStridedCopy({3, 5}, {5, 1}, {5, 1}, 0, 0, 2, p), "");
  EXPECT_EQ(p.unit, 2u);
  EXPECT_EQ(p.numel, 15u);
}

TEST(DataCudaPlan, TransposeNchwToNhwcMergesSpatialDims) {
  // [1, 3, 4, 5] with perm (0, 2, 3, 1): output dims (1, 4, 5, 3) read with strides (60, 5, 1, 20).
  StridedCopy p;
  ASSERT_EQ(cuda::data::PlanStridedCopy({1, 4, 5, 3}, {60, 5, 1, 20}, {60, 15, 3, 1}, 0, 0, 4, p), "");
  EXPECT_EQ(Dims(p), std::vector<uint32_t>({20, 3}));
  EXPECT_EQ(Src(p), std::vector<int32_t>({1, 20}));
  EXPECT_EQ(Dst(p), std::vector<int32_t>({3, 1}));
  EXPECT_EQ(p.unit, 4u);
  EXPECT_FALSE(p.Contiguous());
}

TEST(DataCudaPlan, LastTwoSwapKeepsPlanes) {
  // [2, 3, 4] perm (0, 2, 1).
  StridedCopy p;
  ASSERT_EQ(cuda::data::PlanStridedCopy({2, 4, 3}, {12, 1, 4}, {12, 3, 1}, 0, 0, 8, p), "");
  EXPECT_EQ(Dims(p), std::vector<uint32_t>({2, 4, 3}));
  EXPECT_EQ(Src(p), std::vector<int32_t>({12, 1, 4}));
}

TEST(DataCudaPlan, SliceWithNegativeStepAndOffset) {
  // x[1:3, ::-2] of a [4, 6]: offset 1·6 + 5, strides (6, -2).
  StridedCopy p;
  ASSERT_EQ(cuda::data::PlanStridedCopy({2, 3}, {6, -2}, {3, 1}, 11, 0, 4, p), "");
  EXPECT_EQ(Dims(p), std::vector<uint32_t>({2, 3}));
  EXPECT_EQ(Src(p), std::vector<int32_t>({6, -2}));
  EXPECT_EQ(p.src_offset, 11);
  // Reaching before the start is refused.
  EXPECT_NE(cuda::data::PlanStridedCopy({4}, {-1}, {1}, 2, 0, 4, p).find("before the start"), std::string::npos);
}

TEST(DataCudaPlan, ConcatIntoAnOffsetView) {
  // A [2, 4] input at column 4 of a [2, 12] output: rows stay apart; 4 f16 move as one 8-byte unit.
  StridedCopy p;
  ASSERT_EQ(cuda::data::PlanStridedCopy({2, 4}, {4, 1}, {12, 1}, 0, 4, 2, p), "");
  EXPECT_EQ(p.unit, 8u);
  EXPECT_EQ(Dims(p), std::vector<uint32_t>({2, 1}));
  EXPECT_EQ(Src(p), std::vector<int32_t>({1, 1}));
  EXPECT_EQ(Dst(p), std::vector<int32_t>({3, 1}));
  EXPECT_EQ(p.dst_offset, 1);
  // Along axis 0 the input is one contiguous run of the output.
  ASSERT_EQ(cuda::data::PlanStridedCopy({3, 5}, {5, 1}, {5, 1}, 0, 10, 4, p), "");
  EXPECT_TRUE(p.Contiguous());
  EXPECT_EQ(p.dst_offset, 10);
}

TEST(DataCudaPlan, Refusals) {
  StridedCopy p;
  // Nine dims that cannot merge (a full reversal of rank 9).
  const std::vector<int64_t> dims(9, 2);
  const std::vector<int64_t> src = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  const std::vector<int64_t> dst = {256, 128, 64, 32, 16, 8, 4, 2, 1};
  EXPECT_NE(cuda::data::PlanStridedCopy(dims, src, dst, 0, 0, 4, p).find("9 dims"), std::string::npos);
  EXPECT_NE(cuda::data::PlanStridedCopy({1 << 16, 1 << 15}, {1 << 15, 1}, {1 << 15, 1}, 0, 0, 4, p).find("2^31"),
            std::string::npos);
  EXPECT_NE(cuda::data::PlanStridedCopy({4}, {1}, {1}, 0, 0, 3, p).find("3 bytes"), std::string::npos);
  // Empty copies plan to nothing.
  ASSERT_EQ(cuda::data::PlanStridedCopy({0, 3}, {3, 1}, {3, 1}, 0, 0, 4, p), "");
  EXPECT_EQ(p.numel, 0u);
}

// The kernel's walk on the host: the plans of random transposes, strided slices and concatenations
// (merged and widened) move every byte where a naive element-by-element copy does.
void ApplyOnHost(const StridedCopy& p, const std::vector<uint8_t>& src, std::vector<uint8_t>& dst) {
  for (uint32_t i = 0; i < p.numel; ++i) {
    uint32_t rest = i;
    int64_t s = p.src_offset, d = p.dst_offset;
    for (int k = p.rank - 1; k >= 0; --k) {
      const uint32_t c = k > 0 ? rest % p.dims[k] : rest;
      rest = k > 0 ? rest / p.dims[k] : 0;
      s += int64_t{c} * p.src_strides[k];
      d += int64_t{c} * p.dst_strides[k];
    }
    std::memcpy(&dst[static_cast<size_t>(d) * p.unit], &src[static_cast<size_t>(s) * p.unit], p.unit);
  }
}

std::vector<int64_t> Dense(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size());
  int64_t s = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    strides[d] = s;
    s *= dims[d];
  }
  return strides;
}

// Plans and applies a copy of `dims` elements of `elem` bytes, and compares with the naive copy.
void ExpectWalksLikeNaive(const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides,
                          const std::vector<int64_t>& dst_strides, int64_t src_offset, int64_t dst_offset, size_t elem,
                          size_t src_elems, size_t dst_elems) {
  std::vector<uint8_t> src(src_elems * elem), want(dst_elems * elem, 0xA5), got = want;
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 131 + 7);
  std::vector<int64_t> c(dims.size(), 0);
  int64_t numel = 1;
  for (int64_t d : dims) numel *= d;
  for (int64_t i = 0; i < numel; ++i) {
    int64_t s = src_offset, d = dst_offset;
    for (size_t k = 0; k < dims.size(); ++k) {
      s += c[k] * src_strides[k];
      d += c[k] * dst_strides[k];
    }
    std::memcpy(&want[static_cast<size_t>(d) * elem], &src[static_cast<size_t>(s) * elem], elem);
    for (size_t k = dims.size(); k-- > 0;) {
      if (++c[k] < dims[k]) break;
      c[k] = 0;
    }
  }
  StridedCopy p;
  ASSERT_EQ(cuda::data::PlanStridedCopy(dims, src_strides, dst_strides, src_offset, dst_offset, elem, p), "");
  ASSERT_LE(p.rank, cuda::data::kMaxRank);
  ApplyOnHost(p, src, got);
  EXPECT_EQ(got, want);
}

TEST(DataCudaPlan, RandomCopiesWalkLikeTheNaiveCopy) {
  SplitMix64 rng(17);
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(n)); };
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE(trial);
    const size_t elem = size_t{1} << pick(4);
    const auto rank = static_cast<size_t>(1 + pick(5));
    std::vector<int64_t> in(rank);
    for (int64_t& d : in) d = 1 + pick(5);
    const std::vector<int64_t> in_strides = Dense(in);
    const int64_t n_in = in_strides[0] * in[0];
    // Transpose by a random permutation.
    std::vector<size_t> perm(rank);
    std::iota(perm.begin(), perm.end(), size_t{0});
    for (size_t i = rank; i-- > 1;) std::swap(perm[i], perm[static_cast<size_t>(pick(static_cast<int64_t>(i) + 1))]);
    std::vector<int64_t> dims, src;
    for (size_t p : perm) {
      dims.push_back(in[p]);
      src.push_back(in_strides[p]);
    }
    ExpectWalksLikeNaive(dims, src, Dense(dims), 0, 0, elem, static_cast<size_t>(n_in), static_cast<size_t>(n_in));
    // A slice with random starts and steps (negative included).
    std::vector<int64_t> out(rank), sstr(rank);
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t step = pick(2) ? 1 + pick(2) : -1 - pick(2);
      const int64_t start = pick(in[d]);
      const int64_t room = step > 0 ? in[d] - start : start + 1;
      out[d] = 1 + pick((room + std::abs(step) - 1) / std::abs(step));
      offset += start * in_strides[d];
      sstr[d] = in_strides[d] * step;
    }
    const int64_t n_out = Dense(out)[0] * out[0];
    ExpectWalksLikeNaive(out, sstr, Dense(out), offset, 0, elem, static_cast<size_t>(n_in), static_cast<size_t>(n_out));
    // The input placed into a bigger output along a random axis at a random offset.
    const auto axis = static_cast<size_t>(pick(static_cast<int64_t>(rank)));
    std::vector<int64_t> whole = in;
    const int64_t before = pick(4);
    whole[axis] += before + pick(4);
    const std::vector<int64_t> whole_strides = Dense(whole);
    ExpectWalksLikeNaive(in, in_strides, whole_strides, 0, before * whole_strides[axis], elem,
                         static_cast<size_t>(n_in), static_cast<size_t>(whole_strides[0] * whole[0]));
  }
}

// ---- resize, pad and gather planning (host only)

ResizeCoords Coords(bool linear, ResizeTransform t, std::vector<double> scale) {
  ResizeCoords c;
  c.linear = linear;
  c.transform = t;
  c.roi_start.assign(scale.size(), 0.0);
  c.roi_end.assign(scale.size(), 1.0);
  c.scale = std::move(scale);
  return c;
}

TEST(DataCudaPlan, ResizeNearestTaps) {
  ResizeWalk w;
  std::vector<ResizeTap> taps;
  ResizeCoords c = Coords(false, ResizeTransform::kAsymmetric, {1.0, 2.0});
  c.nearest = cuda::data::NearestMode::kFloor;
  ASSERT_EQ(cuda::data::PlanResize(c, {2, 3}, {2, 6}, w, taps), "");
  EXPECT_EQ(w.rank, 2);
  EXPECT_EQ(w.numel, 12u);
  ASSERT_EQ(taps.size(), 8u);
  EXPECT_EQ(w.tap_offset[0], 0u);
  EXPECT_EQ(w.tap_offset[1], 2u);
  EXPECT_EQ(taps[1].i0, 3);  // row 1 × stride 3
  const std::vector<int32_t> cols = {0, 0, 1, 1, 2, 2};
  for (size_t o = 0; o < cols.size(); ++o) EXPECT_EQ(taps[2 + o].i0, cols[o]) << o;
}

TEST(DataCudaPlan, ResizeLinearHalfPixelWeights) {
  ResizeWalk w;
  std::vector<ResizeTap> taps;
  ASSERT_EQ(cuda::data::PlanResize(Coords(true, ResizeTransform::kHalfPixel, {2.0}), {4}, {8}, w, taps), "");
  ASSERT_EQ(taps.size(), 8u);
  // x = (o + 0.5) / 2 - 0.5: -0.25 clamps to the edge, 0.25 is a quarter of the way from 0 to 1.
  EXPECT_EQ(taps[0].i0, 0);
  EXPECT_EQ(taps[0].w, 0.0f);
  EXPECT_EQ(taps[1].i0, 0);
  EXPECT_EQ(taps[1].i1, 1);
  EXPECT_FLOAT_EQ(taps[1].w, 0.25f);
  EXPECT_FLOAT_EQ(taps[2].w, 0.75f);
  EXPECT_EQ(taps[7].i0, 3);
  EXPECT_EQ(taps[7].w, 0.0f);
}

TEST(DataCudaPlan, ResizeAlignCornersAndCrop) {
  ResizeWalk w;
  std::vector<ResizeTap> taps;
  ASSERT_EQ(cuda::data::PlanResize(Coords(true, ResizeTransform::kAlignCorners, {1.5}), {3}, {4}, w, taps), "");
  // x = o · 2 / 3.5.
  EXPECT_EQ(taps[0].i0, 0);
  EXPECT_EQ(taps[3].i0, 1);
  EXPECT_NEAR(taps[3].w, 3 * 2 / 3.5 - 1, 1e-6);

  ResizeCoords crop = Coords(true, ResizeTransform::kTfCropAndResize, {2.0});
  crop.roi_start = {-0.5};
  crop.roi_end = {1.0};
  ASSERT_EQ(cuda::data::PlanResize(crop, {3}, {6}, w, taps), "");
  EXPECT_EQ(taps[0].outside, 1);  // x = -1
  EXPECT_EQ(taps[5].outside, 0);  // x = 2
  EXPECT_NE(cuda::data::PlanResize(Coords(false, ResizeTransform::kAsymmetric, std::vector<double>(9, 1.0)),
                                   std::vector<int64_t>(9, 1), std::vector<int64_t>(9, 1), w, taps)
                .find("rank 9"),
            std::string::npos);
  EXPECT_NE(cuda::data::PlanResize(Coords(false, ResizeTransform::kAsymmetric, {2.0}), {0}, {2}, w, taps).find("empty"),
            std::string::npos);
}

TEST(DataCudaPlan, PadMergesUnpaddedDims) {
  PadWalk w;
  ASSERT_EQ(cuda::data::PlanPad({2, 3, 4, 5}, {2, 3, 6, 5}, {0, 0, 1, 0}, w), "");
  EXPECT_EQ(w.rank, 3);
  EXPECT_EQ(std::vector<uint32_t>(w.out, w.out + 3), std::vector<uint32_t>({6, 6, 5}));
  EXPECT_EQ(std::vector<int32_t>(w.in, w.in + 3), std::vector<int32_t>({6, 4, 5}));
  EXPECT_EQ(std::vector<int32_t>(w.begin, w.begin + 3), std::vector<int32_t>({0, 1, 0}));
  EXPECT_EQ(w.numel, 180u);
  // A negative pad crops.
  ASSERT_EQ(cuda::data::PlanPad({5}, {3}, {-2}, w), "");
  EXPECT_EQ(w.begin[0], -2);
  ASSERT_EQ(cuda::data::PlanPad({}, {}, {}, w), "");
  EXPECT_EQ(w.numel, 1u);
}

TEST(DataCudaPlan, GatherWidensInnerBlocks) {
  GatherWalk w;
  ASSERT_EQ(cuda::data::PlanGather({10, 8}, 0, 3, 4, w), "");
  EXPECT_EQ(w.unit, 16u);
  EXPECT_EQ(w.inner, 2u);
  EXPECT_EQ(w.count, 3u);
  EXPECT_EQ(w.axis_dim, 10);
  EXPECT_EQ(w.numel, 6u);
  ASSERT_EQ(cuda::data::PlanGather({4, 5, 3}, 1, 2, 8, w), "");
  EXPECT_EQ(w.unit, 8u);
  EXPECT_EQ(w.inner, 3u);
  EXPECT_EQ(w.numel, 24u);
}

// The pad and resize kernels' walks on the host (int64 data), against the reference.
std::vector<int64_t> PadOnHost(cuda::data::PadMode mode, const PadWalk& w, const std::vector<int64_t>& x,
                               int64_t value) {
  std::vector<int64_t> y(w.numel);
  for (uint32_t i = 0; i < w.numel; ++i) {
    uint32_t rest = i;
    int64_t src = 0, stride = 1;
    bool inside = true;
    for (int k = w.rank - 1; k >= 0; --k) {
      const uint32_t c = k > 0 ? rest % w.out[k] : rest;
      rest = k > 0 ? rest / w.out[k] : 0;
      const int32_t n = w.in[k];
      int32_t j = static_cast<int32_t>(c) - w.begin[k];
      if (j < 0 || j >= n) {
        if (mode == cuda::data::PadMode::kConstant || n == 0) {
          inside = false;
        } else if (mode == cuda::data::PadMode::kEdge) {
          j = j < 0 ? 0 : n - 1;
        } else if (mode == cuda::data::PadMode::kWrap) {
          j = (j % n + n) % n;
        } else if (n == 1) {
          j = 0;
        } else {
          const int32_t period = 2 * (n - 1);
          j = (j % period + period) % period;
          j = j < n ? j : period - j;
        }
      }
      src += j * stride;
      stride *= n;
    }
    y[i] = inside ? x[static_cast<size_t>(src)] : value;
  }
  return y;
}

TEST(DataCudaPlan, PadWalksLikeTheReference) {
  const std::vector<std::pair<const char*, cuda::data::PadMode>> modes = {{"constant", cuda::data::PadMode::kConstant},
                                                                          {"edge", cuda::data::PadMode::kEdge},
                                                                          {"reflect", cuda::data::PadMode::kReflect},
                                                                          {"wrap", cuda::data::PadMode::kWrap}};
  const Shape shape = {2, 3, 4, 5};
  Tensor x(DType::kI64, shape);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<int64_t>()[i] = i * 3 + 1;
  const std::vector<std::vector<int64_t>> all_pads = {
      {0, 1, 0, 2, 0, 0, 3, 1}, {0, 0, -1, 0, 1, 0, 2, -2}, {1, 0, 0, 0, 0, 2, 0, 0}, {0, 0, 0, 4, 0, 0, 0, 4}};
  for (const auto& [name, mode] : modes) {
    for (const std::vector<int64_t>& pads : all_pads) {
      SCOPED_TRACE(std::string(name) + " " + ShapeToString(pads));
      auto want = RunNodeOnReference(MakeNode("Pad", 3, 1, {{"mode", StringAttr(name)}}), 19,
                                     {x, I64({8}, pads), I64({}, {-7})});
      ASSERT_TRUE(want.ok()) << want.status().ToString();
      const Tensor& y = (*want)[0];
      std::vector<int64_t> begin(pads.begin(), pads.begin() + 4);
      PadWalk w;
      ASSERT_EQ(cuda::data::PlanPad(shape, y.shape(), begin, w), "");
      const std::vector<int64_t> xs(x.data<int64_t>(), x.data<int64_t>() + x.numel());
      EXPECT_EQ(PadOnHost(mode, w, xs, -7), std::vector<int64_t>(y.data<int64_t>(), y.data<int64_t>() + y.numel()));
    }
  }
}

TEST(DataCudaPlan, ResizeNearestWalksLikeTheReference) {
  const Shape shape = {1, 2, 5, 7};
  Tensor x(DType::kI64, shape);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<int64_t>()[i] = i;
  const std::vector<std::pair<const char*, ResizeTransform>> transforms = {
      {"half_pixel", ResizeTransform::kHalfPixel},
      {"pytorch_half_pixel", ResizeTransform::kPytorchHalfPixel},
      {"align_corners", ResizeTransform::kAlignCorners},
      {"asymmetric", ResizeTransform::kAsymmetric},
      {"tf_half_pixel_for_nn", ResizeTransform::kTfHalfPixelForNn},
      {"half_pixel_symmetric", ResizeTransform::kHalfPixelSymmetric}};
  const std::vector<std::pair<const char*, cuda::data::NearestMode>> modes = {
      {"round_prefer_floor", cuda::data::NearestMode::kRoundPreferFloor},
      {"round_prefer_ceil", cuda::data::NearestMode::kRoundPreferCeil},
      {"floor", cuda::data::NearestMode::kFloor},
      {"ceil", cuda::data::NearestMode::kCeil}};
  for (const std::vector<float>& scales : {std::vector<float>{1, 1, 2, 1.5f}, std::vector<float>{1, 1, 0.6f, 0.5f}}) {
    for (const auto& [tname, transform] : transforms) {
      for (const auto& [mname, nearest] : modes) {
        SCOPED_TRACE(std::string(tname) + " " + mname + " " + std::to_string(scales[2]));
        const Node node = MakeNode("Resize", 3, 1,
                                   {{"mode", StringAttr("nearest")},
                                    {"coordinate_transformation_mode", StringAttr(tname)},
                                    {"nearest_mode", StringAttr(mname)}});
        Node no_roi = node;
        no_roi.inputs[1] = "";
        auto want = RunNodeOnReference(no_roi, 19, {x, Tensor(), F32({4}, scales)});
        ASSERT_TRUE(want.ok()) << want.status().ToString();
        const Tensor& y = (*want)[0];
        ResizeCoords c = Coords(false, transform, {scales.begin(), scales.end()});
        c.nearest = nearest;
        ResizeWalk w;
        std::vector<ResizeTap> taps;
        ASSERT_EQ(cuda::data::PlanResize(c, shape, y.shape(), w, taps), "");
        ASSERT_EQ(w.numel, static_cast<uint32_t>(y.numel()));
        for (uint32_t i = 0; i < w.numel; ++i) {
          uint32_t rest = i;
          int64_t off = 0;
          for (int k = w.rank - 1; k >= 0; --k) {
            const uint32_t coord = k > 0 ? rest % w.out[k] : rest;
            rest = k > 0 ? rest / w.out[k] : 0;
            off += taps[w.tap_offset[k] + coord].i0;
          }
          ASSERT_EQ(x.data<int64_t>()[off], y.data<int64_t>()[i]) << i;
        }
      }
    }
  }
}

// ---- factory refusals (host only)

struct Info {
  DType dtype = DType::kUndefined;  // undefined: omitted
  Shape shape{};
  const Tensor* value = nullptr;
};

Status Plan(KernelFactory factory, const Node& node, const std::vector<Info>& inputs, DType out_dtype, Shape out_shape,
            int64_t opset = 17) {
  std::vector<ValueInfo> infos(inputs.size());
  std::vector<const ValueInfo*> ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    infos[i] = {inputs[i].dtype, inputs[i].shape, inputs[i].value};
    ptrs.push_back(inputs[i].dtype == DType::kUndefined ? nullptr : &infos[i]);
  }
  const std::vector<ValueInfo> outs = {{out_dtype, std::move(out_shape)}};
  KernelInit init{node, ptrs, opset, Precision::kFp32, nullptr, nullptr, &outs};
  return factory(init).status();
}

constexpr const char* kAccepted = "no CUDA device context";

void ExpectRefused(const Status& s, const std::string& why) {
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(why), std::string::npos) << s.ToString() << " (wanted: " << why << ")";
  EXPECT_EQ(s.message().find(kAccepted), std::string::npos) << s.ToString();
}
void ExpectAccepted(const Status& s) { EXPECT_EQ(s.message(), kAccepted) << s.ToString(); }

TEST(DataCudaRefusal, Pooling) {
  const Shape x = {1, 2, 7, 7};
  auto pool = [](const char* op, std::map<std::string, Attribute> extra = {}) {
    extra["kernel_shape"] = IntsAttr({3, 3});
    return MakeNode(op, 1, 1, std::move(extra));
  };
  ExpectAccepted(Plan(cuda::CreateMaxPool, pool("MaxPool"), {{DType::kF32, x}}, DType::kF32, {1, 2, 5, 5}));
  ExpectAccepted(Plan(cuda::CreateAveragePool, pool("AveragePool", {{"pads", IntsAttr({1, 1, 1, 1})}}),
                      {{DType::kF16, x}}, DType::kF16, {1, 2, 7, 7}));
  // ceil_mode adds the partial window: (7 - 3) / 2 rounded up + 1.
  ExpectAccepted(Plan(cuda::CreateMaxPool, pool("MaxPool", {{"strides", IntsAttr({2, 2})}, {"ceil_mode", IntAttr(1)}}),
                      {{DType::kF32, {1, 2, 8, 8}}}, DType::kF32, {1, 2, 4, 4}));
  ExpectRefused(Plan(cuda::CreateMaxPool, pool("MaxPool"), {{DType::kF32, x}}, DType::kF32, {1, 2, 4, 4}),
                "differs from the window's");
  ExpectRefused(Plan(cuda::CreateMaxPool, pool("MaxPool"), {{DType::kI8, x}}, DType::kI8, {1, 2, 5, 5}),
                "MaxPool on i8");
  ExpectRefused(Plan(cuda::CreateMaxPool, MakeNode("MaxPool", 1, 2, {{"kernel_shape", IntsAttr({3, 3})}}),
                     {{DType::kF32, x}}, DType::kF32, {1, 2, 5, 5}),
                "Indices");
  ExpectRefused(Plan(cuda::CreateMaxPool, MakeNode("MaxPool", 1, 1, {{"kernel_shape", IntsAttr({1, 1, 1, 1})}}),
                     {{DType::kF32, {1, 1, 2, 2, 2, 2}}}, DType::kF32, {1, 1, 2, 2, 2, 2}),
                "4-D pooling");
  ExpectRefused(Plan(cuda::CreateMaxPool, MakeNode("MaxPool", 1), {{DType::kF32, x}}, DType::kF32, x),
                "kernel_shape is missing");
  ExpectRefused(Plan(cuda::CreateMaxPool, pool("MaxPool"), {{DType::kF32, {-1, 2, 7, 7}}}, DType::kF32, {-1, 2, 5, 5}),
                "run time");

  ExpectAccepted(
      Plan(cuda::CreateGlobalPool, MakeNode("GlobalAveragePool", 1), {{DType::kBF16, x}}, DType::kBF16, {1, 2, 1, 1}));
  ExpectRefused(
      Plan(cuda::CreateGlobalPool, MakeNode("GlobalMaxPool", 1), {{DType::kF64, x}}, DType::kF64, {1, 2, 1, 1}),
      "GlobalMaxPool on f64");
  ExpectRefused(
      Plan(cuda::CreateGlobalPool, MakeNode("GlobalLpPool", 1), {{DType::kF32, x}}, DType::kF32, {1, 2, 1, 1}),
      "not a global pool");
}

TEST(DataCudaRefusal, Resize) {
  const Tensor scales = F32({4}, {1.0f, 1.0f, 2.0f, 2.0f});
  const Tensor sizes = I64({4}, {1, 2, 6, 6});
  const Shape x = {1, 2, 3, 3}, y = {1, 2, 6, 6};
  auto resize = [](std::map<std::string, Attribute> attrs) { return MakeNode("Resize", 3, 1, std::move(attrs)); };
  const Info scales_in{DType::kF32, {4}, &scales};
  ExpectAccepted(Plan(cuda::CreateResize, resize({}), {{DType::kF32, x}, {}, scales_in}, DType::kF32, y, 13));
  ExpectAccepted(Plan(cuda::CreateResize, resize({{"mode", StringAttr("nearest")}}), {{DType::kI64, x}, {}, scales_in},
                      DType::kI64, y, 13));
  ExpectAccepted(Plan(cuda::CreateResize, MakeNode("Resize", 4, 1, {{"mode", StringAttr("linear")}}),
                      {{DType::kF32, x}, {}, {}, {DType::kI64, {4}, &sizes}}, DType::kF32, y, 13));
  ExpectRefused(Plan(cuda::CreateResize, resize({{"mode", StringAttr("linear")}}), {{DType::kU8, x}, {}, scales_in},
                     DType::kU8, y, 13),
                "linear Resize of u8");
  ExpectRefused(Plan(cuda::CreateResize, resize({{"mode", StringAttr("cubic")}}), {{DType::kF32, x}, {}, scales_in},
                     DType::kF32, y, 13),
                "cubic");
  ExpectRefused(Plan(cuda::CreateResize, resize({{"antialias", IntAttr(1)}, {"mode", StringAttr("linear")}}),
                     {{DType::kF32, x}, {}, scales_in}, DType::kF32, y, 18),
                "antialias");
  ExpectRefused(Plan(cuda::CreateResize, resize({}), {{DType::kF32, x}, {}, {DType::kF32, {4}}}, DType::kF32, y, 13),
                "scales are not constant");
  ExpectRefused(Plan(cuda::CreateResize, resize({{"coordinate_transformation_mode", StringAttr("bogus")}}),
                     {{DType::kF32, x}, {}, scales_in}, DType::kF32, y, 13),
                "coordinate_transformation_mode 'bogus'");
  // Upsample-7 takes its scales from an attribute.
  ExpectAccepted(
      Plan(cuda::CreateResize,
           MakeNode("Upsample", 1, 1, {{"scales", FloatsAttr({1, 1, 2, 2})}, {"mode", StringAttr("bilinear")}}),
           {{DType::kF32, x}}, DType::kF32, y, 7));
}

TEST(DataCudaRefusal, Movement) {
  const Shape s = {2, 3, 4};
  ExpectAccepted(Plan(cuda::CreateTranspose, MakeNode("Transpose", 1, 1, {{"perm", IntsAttr({2, 0, 1})}}),
                      {{DType::kI64, s}}, DType::kI64, {4, 2, 3}));
  ExpectAccepted(Plan(cuda::CreateTranspose, MakeNode("Transpose", 1), {{DType::kBool, s}}, DType::kBool, {4, 3, 2}));
  ExpectRefused(Plan(cuda::CreateTranspose, MakeNode("Transpose", 1, 1, {{"perm", IntsAttr({0, 0, 1})}}),
                     {{DType::kF32, s}}, DType::kF32, s),
                "not a permutation");
  ExpectRefused(Plan(cuda::CreateTranspose, MakeNode("Transpose", 1), {{DType::kString, s}}, DType::kString, s),
                "Transpose on string");

  ExpectAccepted(Plan(cuda::CreateConcat, MakeNode("Concat", 3, 1, {{"axis", IntAttr(-1)}}),
                      {{DType::kU8, {2, 3, 1}}, {DType::kU8, {2, 3, 0}}, {DType::kU8, {2, 3, 5}}}, DType::kU8,
                      {2, 3, 6}));
  ExpectRefused(Plan(cuda::CreateConcat, MakeNode("Concat", 2, 1, {{"axis", IntAttr(0)}}),
                     {{DType::kF32, {2, 3}}, {DType::kF32, {2, 3}}}, DType::kF32, {5, 3}),
                "add up to 4");

  const Tensor starts = I64({2}, {1, -1});
  const Tensor ends = I64({2}, {3, -100});
  const Tensor axes = I64({2}, {0, 2});
  const Tensor steps = I64({2}, {1, -2});
  ExpectAccepted(Plan(cuda::CreateSlice, MakeNode("Slice", 5),
                      {{DType::kF32, s},
                       {DType::kI64, {2}, &starts},
                       {DType::kI64, {2}},  // ends need not be constant
                       {DType::kI64, {2}, &axes},
                       {DType::kI64, {2}, &steps}},
                      DType::kF32, {2, 3, 2}));
  ExpectRefused(Plan(cuda::CreateSlice, MakeNode("Slice", 3),
                     {{DType::kF32, s}, {DType::kI64, {2}}, {DType::kI64, {2}, &ends}}, DType::kF32, {2, 3, 2}),
                "starts are not constant");

  const Tensor idx = I64({2}, {-3, 1});
  const Tensor bad = I64({1}, {3});
  ExpectAccepted(Plan(cuda::CreateGather, MakeNode("Gather", 2, 1, {{"axis", IntAttr(1)}}),
                      {{DType::kF16, s}, {DType::kI64, {2}, &idx}}, DType::kF16, {2, 2, 4}));
  ExpectAccepted(Plan(cuda::CreateGather, MakeNode("Gather", 2), {{DType::kI64, s}, {DType::kI32, {2, 2}}}, DType::kI64,
                      {2, 2, 3, 4}));
  ExpectRefused(Plan(cuda::CreateGather, MakeNode("Gather", 2, 1, {{"axis", IntAttr(1)}}),
                     {{DType::kF32, s}, {DType::kI64, {1}, &bad}}, DType::kF32, {2, 1, 4}),
                "out of range");
  ExpectRefused(
      Plan(cuda::CreateGather, MakeNode("Gather", 2), {{DType::kF32, s}, {DType::kF32, {1}}}, DType::kF32, {1, 3, 4}),
      "int32 or int64");

  const Tensor pads = I64({6}, {0, 1, 0, 0, 2, 0});
  ExpectAccepted(Plan(cuda::CreatePad, MakeNode("Pad", 2, 1, {{"mode", StringAttr("reflect")}}),
                      {{DType::kF32, s}, {DType::kI64, {6}, &pads}}, DType::kF32, {2, 6, 4}));
  ExpectAccepted(Plan(cuda::CreatePad, MakeNode("Pad", 2, 1, {{"mode", StringAttr("wrap")}}),
                      {{DType::kI32, s}, {DType::kI64, {6}, &pads}}, DType::kI32, {2, 6, 4}, 19));
  ExpectRefused(
      Plan(cuda::CreatePad, MakeNode("Pad", 2), {{DType::kF32, s}, {DType::kI64, {6}}}, DType::kF32, {2, 6, 4}),
      "pads are not constant");
  ExpectRefused(Plan(cuda::CreatePad, MakeNode("Pad", 2, 1, {{"mode", StringAttr("mirror")}}),
                     {{DType::kF32, s}, {DType::kI64, {6}, &pads}}, DType::kF32, {2, 6, 4}),
                "Pad mode 'mirror'");
}

// ---- on a GPU, against the reference

// Exact copies (every data-movement op moves bits; f16/bf16 storage rounds only on upload).
constexpr double kNmseExact = 1e-12;

void ExpectExact(KernelFactory factory, const DeviceCase& c) {
  ExpectCudaMatchesReference(factory, c, 0.0, kNmseExact);
}

// Values on a 1/4 grid within ±8: exact in f16 and bf16, so copies match the reference bit for bit.
Tensor Quarters(const Shape& shape, uint64_t seed) {
  Tensor t = RandomF32(shape, seed, -8.0f, 8.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = std::floor(t.data<float>()[i] * 4.0f) / 4.0f;
  return t;
}

Tensor Iota64(const Shape& shape) {
  Tensor t(DType::kI64, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = i * 7919 - 50000;
  return t;
}

Tensor IotaU8(const Shape& shape) {
  Tensor t(DType::kU8, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<uint8_t>()[i] = static_cast<uint8_t>(i * 37);
  return t;
}

TEST(DataCuda, TransposeMatchesReference) {
  CHIPFIT_REQUIRE_CUDA();
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{2, 3, 17, 19}, {0, 2, 3, 1}},     {{2, 3, 17, 19}, {0, 1, 3, 2}}, {{33, 65}, {1, 0}},
      {{2, 3, 4, 5, 6}, {4, 2, 0, 3, 1}}, {{5, 1, 7}, {1, 0, 2}},         {{4, 8, 16}, {0, 1, 2}},
  };
  uint64_t seed = 1;
  for (const auto& [shape, perm] : cases) {
    SCOPED_TRACE(ShapeToString(shape));
    const Node node = MakeNode("Transpose", 1, 1, {{"perm", IntsAttr(perm)}});
    ExpectExact(cuda::CreateTranspose, {.node = node, .inputs = {Quarters(shape, seed++)}});
    ExpectExact(cuda::CreateTranspose, {.node = node, .inputs = {Iota64(shape)}});
    ExpectExact(cuda::CreateTranspose, {.node = node, .inputs = {IotaU8(shape)}});
  }
}

TEST(DataCuda, ConcatMatchesReference) {
  CHIPFIT_REQUIRE_CUDA();
  for (int64_t axis : {0, 1, 2, -1}) {
    SCOPED_TRACE(axis);
    Shape a = {2, 3, 5}, b = {2, 3, 5}, c = {2, 3, 5};
    const auto ax = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
    b[ax] = 4;
    c[ax] = 0;  // an empty input takes no place
    const Node node = MakeNode("Concat", 4, 1, {{"axis", IntAttr(axis)}});
    ExpectExact(cuda::CreateConcat,
                {.node = node, .inputs = {Quarters(a, 1), Quarters(b, 2), Quarters(c, 3), Quarters(a, 4)}});
    ExpectExact(cuda::CreateConcat, {.node = node, .inputs = {Iota64(a), Iota64(b), Iota64(c), Iota64(a)}});
  }
}

TEST(DataCuda, SliceMatchesReference) {
  CHIPFIT_REQUIRE_CUDA();
  struct Case {
    std::vector<int64_t> starts, ends, axes, steps;
  };
  const Shape shape = {4, 6, 9};
  const std::vector<Case> cases = {
      {{1, 2}, {3, 5}, {0, 2}, {1, 1}},
      {{-1, 0}, {-100, 9}, {1, 2}, {-2, 3}},
      {{0}, {2}, {0}, {1}},  // a contiguous run
      {{5, 3}, {0, 100}, {1, 0}, {-1, 1}},
      {{2}, {3}, {2}, {1000}},  // one element with a huge step
  };
  for (const Case& k : cases) {
    const auto n = static_cast<int64_t>(k.starts.size());
    DeviceCase c{.node = MakeNode("Slice", 5), .opset = 13};
    c.inputs = {Quarters(shape, 5), I64({n}, k.starts), I64({n}, k.ends), I64({n}, k.axes), I64({n}, k.steps)};
    c.constant = {false, true, true, true, true};
    ExpectExact(cuda::CreateSlice, c);
    c.inputs[0] = Iota64(shape);
    ExpectExact(cuda::CreateSlice, c);
  }
}

TEST(DataCuda, GatherMatchesReference) {
  CHIPFIT_REQUIRE_CUDA();
  const Shape shape = {5, 6, 8};
  for (int64_t axis : {0, 1, 2}) {
    SCOPED_TRACE(axis);
    const Node node = MakeNode("Gather", 2, 1, {{"axis", IntAttr(axis)}});
    const Tensor i64 = I64({2, 3}, {0, -1, 2, 4, -5, 1});
    const Tensor i32 = I32({4}, {3, -2, 0, 0});
    const Tensor scalar = I64({}, {-3});
    for (const Tensor& idx : {i64, i32, scalar}) {
      for (bool constant : {false, true}) {
        DeviceCase c{.node = node, .inputs = {Quarters(shape, 7), idx}, .constant = {false, constant}};
        ExpectExact(cuda::CreateGather, c);
        c.inputs[0] = Iota64(shape);
        ExpectExact(cuda::CreateGather, c);
        c.inputs[0] = IotaU8(shape);
        ExpectExact(cuda::CreateGather, c);
      }
    }
  }
}

TEST(DataCuda, PadMatchesReference) {
  CHIPFIT_REQUIRE_CUDA();
  const Shape shape = {2, 3, 5, 4};
  const Tensor pads = I64({8}, {0, 1, 2, 3, 0, 0, 3, 1});
  const Tensor crop = I64({8}, {0, 0, -1, 2, 0, 0, 2, -1});
  for (const char* mode : {"constant", "edge", "reflect", "wrap"}) {
    for (const Tensor& p : {pads, crop}) {
      SCOPED_TRACE(mode);
      DeviceCase c{.node = MakeNode("Pad", 3, 1, {{"mode", StringAttr(mode)}}), .opset = 19};
      c.inputs = {Quarters(shape, 9), p, F32({}, {1.5f})};
      c.constant = {false, true, true};
      ExpectExact(cuda::CreatePad, c);
      c.inputs = {Iota64(shape), p, I64({}, {int64_t{1} << 40})};
      ExpectExact(cuda::CreatePad, c);
    }
  }
  // Opset 2: pads and value as attributes.
  const Node old = MakeNode("Pad", 1, 1, {{"pads", IntsAttr({1, 0, 0, 2})}, {"value", FloatAttr(-2.0f)}});
  ExpectExact(cuda::CreatePad, {.node = old, .opset = 2, .inputs = {Quarters({3, 4}, 11)}});
}

TEST(DataCuda, PoolingMatchesReference) {
  CHIPFIT_REQUIRE_CUDA();
  struct Case {
    Shape x;
    std::map<std::string, Attribute> attrs;
  };
  const std::vector<Case> cases = {
      {{2, 3, 17, 19}, {{"kernel_shape", IntsAttr({3, 3})}}},
      {{2, 3, 17, 19},
       {{"kernel_shape", IntsAttr({3, 2})}, {"strides", IntsAttr({2, 2})}, {"pads", IntsAttr({1, 0, 1, 1})}}},
      {{1, 4, 16, 15}, {{"kernel_shape", IntsAttr({3, 3})}, {"strides", IntsAttr({2, 2})}, {"ceil_mode", IntAttr(1)}}},
      {{1, 2, 12, 12},
       {{"kernel_shape", IntsAttr({3, 3})}, {"dilations", IntsAttr({2, 2})}, {"auto_pad", StringAttr("SAME_UPPER")}}},
      {{2, 3, 20}, {{"kernel_shape", IntsAttr({4})}, {"strides", IntsAttr({3})}, {"pads", IntsAttr({2, 1})}}},
      {{1, 2, 5, 6, 7}, {{"kernel_shape", IntsAttr({2, 3, 2})}, {"pads", IntsAttr({1, 1, 0, 0, 1, 1})}}},
  };
  uint64_t seed = 20;
  for (const Case& k : cases) {
    SCOPED_TRACE(ShapeToString(k.x));
    const Tensor x = Quarters(k.x, seed++);
    ExpectCudaMatchesReference(
        cuda::CreateMaxPool, {.node = MakeNode("MaxPool", 1, 1, k.attrs), .opset = 12, .inputs = {x}}, 0.0, kNmseExact);
    for (int64_t include : {0, 1}) {
      auto attrs = k.attrs;
      attrs["count_include_pad"] = IntAttr(include);
      ExpectCudaMatchesReference(cuda::CreateAveragePool,
                                 {.node = MakeNode("AveragePool", 1, 1, attrs), .opset = 19, .inputs = {x}});
    }
  }
}

TEST(DataCuda, GlobalPoolingMatchesReference) {
  CHIPFIT_REQUIRE_CUDA();
  const std::vector<Shape> shapes = {{2, 3, 7, 7}, {1, 5, 1, 1}, {2, 4, 33, 65}, {3, 2, 9}, {1, 2, 3, 4, 5}};
  uint64_t seed = 40;
  for (const Shape& s : shapes) {
    SCOPED_TRACE(ShapeToString(s));
    const Tensor x = Quarters(s, seed++);
    ExpectCudaMatchesReference(cuda::CreateGlobalPool, {.node = MakeNode("GlobalMaxPool", 1), .inputs = {x}}, 0.0,
                               kNmseExact);
    ExpectCudaMatchesReference(cuda::CreateGlobalPool, {.node = MakeNode("GlobalAveragePool", 1), .inputs = {x}});
  }
}

TEST(DataCuda, GlobalMaxPoolKeepsALeadingNaN) {
  CHIPFIT_REQUIRE_CUDA();
  const float nan = std::nanf("");
  // The reference keeps NaN only where it comes first in the plane.
  const Tensor x = F32({1, 2, 3}, {nan, 1.0f, 2.0f, 0.5f, nan, 3.0f});
  auto got = RunCudaKernel(cuda::CreateGlobalPool, {.node = MakeNode("GlobalMaxPool", 1), .inputs = {x}});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(std::isnan((*got)[0].data<float>()[0]));
  EXPECT_EQ((*got)[0].data<float>()[1], 3.0f);
}

TEST(DataCuda, ResizeMatchesReference) {
  CHIPFIT_REQUIRE_CUDA();
  const Shape shape = {1, 3, 7, 9};
  const Tensor x = Quarters(shape, 50);
  const Tensor up = F32({4}, {1.0f, 1.0f, 2.0f, 1.5f});
  const Tensor down = F32({4}, {1.0f, 1.0f, 0.6f, 0.5f});
  const Tensor sizes = I64({4}, {1, 3, 11, 4});
  const Tensor roi = F32({8}, {0, 0, 0.1f, -0.2f, 1, 1, 0.8f, 1.1f});
  struct Case {
    std::string mode, transform, nearest;
  };
  const std::vector<Case> cases = {
      {"nearest", "asymmetric", "floor"},
      {"nearest", "half_pixel", "round_prefer_floor"},
      {"nearest", "tf_half_pixel_for_nn", "round_prefer_ceil"},
      {"nearest", "align_corners", "ceil"},
      {"linear", "half_pixel", ""},
      {"linear", "pytorch_half_pixel", ""},
      {"linear", "align_corners", ""},
      {"linear", "asymmetric", ""},
      {"linear", "half_pixel_symmetric", ""},
      {"linear", "tf_crop_and_resize", ""},
      {"nearest", "tf_crop_and_resize", "round_prefer_floor"},
  };
  for (const Case& k : cases) {
    std::map<std::string, Attribute> attrs = {{"mode", StringAttr(k.mode)},
                                              {"coordinate_transformation_mode", StringAttr(k.transform)},
                                              {"extrapolation_value", FloatAttr(-3.0f)}};
    if (!k.nearest.empty()) attrs["nearest_mode"] = StringAttr(k.nearest);
    const bool nearest = k.mode == "nearest";
    for (int which = 0; which < 3; ++which) {
      SCOPED_TRACE(k.mode + " " + k.transform + " " + std::to_string(which));
      DeviceCase c{.node = MakeNode("Resize", 4, 1, attrs), .opset = 19};
      c.inputs = {x, roi, which < 2 ? (which == 0 ? up : down) : Tensor(), which == 2 ? sizes : Tensor()};
      if (which < 2) c.node.inputs[3] = "";
      if (which == 2) c.node.inputs[2] = "";
      c.constant = {false, true, true, true};
      if (nearest) {
        ExpectExact(cuda::CreateResize, c);
        c.inputs[0] = Iota64(shape);
        ExpectExact(cuda::CreateResize, c);
      } else {
        ExpectCudaMatchesReference(cuda::CreateResize, c);
      }
    }
  }
}

TEST(DataCuda, UpsampleMatchesReference) {
  CHIPFIT_REQUIRE_CUDA();
  const Tensor x = RandomF32({2, 3, 5, 6}, 60);
  const Tensor scales = F32({4}, {1.0f, 1.0f, 2.0f, 3.0f});
  for (const char* mode : {"nearest", "linear"}) {
    DeviceCase c{.node = MakeNode("Upsample", 2, 1, {{"mode", StringAttr(mode)}}), .opset = 9};
    c.inputs = {x, scales};
    c.constant = {false, true};
    ExpectCudaMatchesReference(cuda::CreateResize, c);
  }
  ExpectCudaMatchesReference(
      cuda::CreateResize,
      {.node = MakeNode("Upsample", 1, 1, {{"scales", FloatsAttr({1, 1, 2, 2})}}), .opset = 7, .inputs = {x}});
}

}  // namespace
}  // namespace chipfit::testing
