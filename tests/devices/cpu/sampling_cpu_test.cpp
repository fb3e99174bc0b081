// The CPU device's sampling kernels (sampling_cpu.cpp) against the reference: Resize in mode cubic over
// every coordinate_transformation_mode, cubic_coeff_a, exclude_outside, antialias, axes,
// keep_aspect_ratio_policy, crops with extrapolation and N-D inputs; NonMaxSuppression over both box
// formats, the optional inputs, tied scores and degenerate boxes; GridSample at opsets 16 and 20 in every
// mode, padding mode and align_corners, 1-D to 3-D spatial. Also: scales and NMS inputs known only at run
// time place the kernels in a compiled model, and the refusals.
//
// Tolerances: NonMaxSuppression must select exactly the reference's rows. Resize and GridSample compute
// taps and weights in double as the reference does and only sum in float (the reference sums in double):
// at most a few ulp of the largest value per tap, held to 1e-5 of the largest reference value (~80 ulp),
// while a wrong tap or weight moves a value by a sizeable fraction of the input range.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/runtime/compiled_model.h"
#include "core/runtime/target.h"
#include "devices/cpu/cpu_kernels.h"
#include "tests/core/reference/ref_test_util.h"
#include "tests/devices/cpu/cpu_kernel_test_util.h"
#include "tests/devices/cpu/kernel_layout_util.h"

namespace chipfit::testing {
namespace {

constexpr double kTolerance = 1e-5;

// The table's implementation of `op` named `name`.
KernelFactory SamplingFactory(const std::string& op, const std::string& name) {
  for (const KernelImpl& impl : CpuKernels().Find(op, "", DeviceKind::kCpu, Precision::kFp32)) {
    if (impl.name == name) return impl.create;
  }
  ADD_FAILURE() << "no " << name << " for " << op;
  return nullptr;
}

KernelFactory ResizeCubic() { return SamplingFactory("Resize", "cpu:resize"); }
KernelFactory Nms() { return SamplingFactory("NonMaxSuppression", "cpu:nms"); }
KernelFactory GridSample() { return SamplingFactory("GridSample", "cpu:grid-sample"); }

// The kernel's output has the reference's shape and lies within kTolerance of it.
void ExpectClose(KernelFactory factory, const KernelCase& c) {
  auto out = RunCpuKernel(factory, c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  ASSERT_EQ(ref.size(), 1u);
  ASSERT_EQ((*out)[0].shape(), ref[0].shape());
  EXPECT_LE(MaxRelError((*out)[0], ref[0]), kTolerance);
}

Tensor F32(Shape shape, std::vector<float> values) { return MakeTensor<float>(std::move(shape), std::move(values)); }
Tensor I64(Shape shape, std::vector<int64_t> values) {
  return MakeTensor<int64_t>(std::move(shape), std::move(values));
}

// ---- Resize, mode cubic ----------------------------------------------------------------------------

struct CubicCase {
  std::string transform;
  std::vector<float> scales;   // empty: sizes
  std::vector<int64_t> sizes;  // used when scales is empty
  float a = -0.75f;
  int64_t exclude_outside = 0;
  int64_t antialias = 0;
  std::vector<int64_t> axes{};  // opset 18
  std::string policy = "stretch";
  std::vector<float> roi{};  // tf_crop_and_resize
};

KernelCase MakeCubicCase(const CubicCase& s, const Tensor& x, int64_t opset) {
  std::map<std::string, Attribute> attrs{{"mode", StringAttr("cubic")},
                                         {"coordinate_transformation_mode", StringAttr(s.transform)},
                                         {"cubic_coeff_a", FloatAttr(s.a)},
                                         {"exclude_outside", IntAttr(s.exclude_outside)},
                                         {"extrapolation_value", FloatAttr(7.5f)}};
  if (opset >= 18) {
    attrs["antialias"] = IntAttr(s.antialias);
    attrs["keep_aspect_ratio_policy"] = StringAttr(s.policy);
    if (!s.axes.empty()) attrs["axes"] = IntsAttr(s.axes);
  }
  KernelCase c{.node = MakeNode("Resize", 4, 1, attrs), .opset = opset};
  const auto n = static_cast<int64_t>(s.axes.empty() ? x.rank() : static_cast<int64_t>(s.axes.size()));
  Tensor roi = s.roi.empty() ? Tensor(DType::kF32, {0}) : F32({2 * n}, s.roi);
  Tensor scales = s.scales.empty() ? Tensor(DType::kF32, {0}) : F32({n}, s.scales);
  Tensor sizes = s.scales.empty() ? I64({n}, s.sizes) : Tensor();
  c.inputs = {x, roi, scales, sizes};
  c.constant = {false, true, true, true};
  return c;
}

const std::vector<std::string> kTransforms = {"half_pixel",        "half_pixel_symmetric", "pytorch_half_pixel",
                                              "align_corners",     "asymmetric",           "tf_half_pixel_for_nn",
                                              "tf_crop_and_resize"};

TEST(SamplingCpuTest, ResizeCubicMatchesReferenceForEveryTransform) {
  const Tensor x = RandomF32({2, 3, 9, 11}, 11, -2.0f, 2.0f);
  const std::vector<std::vector<float>> scales = {{1, 1, 2, 2}, {1, 1, 1.7f, 0.6f}, {1, 1, 0.45f, 3.1f}};
  for (const std::string& transform : kTransforms) {
    for (const auto& sc : scales) {
      for (int64_t exclude : {0, 1}) {
        for (float a : {-0.75f, -0.5f}) {
          CubicCase s{.transform = transform, .scales = sc, .sizes = {}, .a = a, .exclude_outside = exclude};
          // A crop reaching outside the input, so that extrapolation_value shows.
          if (transform == "tf_crop_and_resize") s.roi = {0, 0, -0.2f, 0.1f, 1, 1, 0.9f, 1.3f};
          SCOPED_TRACE(transform + " scales " + std::to_string(sc[2]) + "x" + std::to_string(sc[3]) +
                       " exclude_outside " + std::to_string(exclude) + " a " + std::to_string(a));
          ExpectClose(ResizeCubic(), MakeCubicCase(s, x, 19));
        }
      }
    }
  }
}

// Nearest (every nearest_mode) and linear (also antialiased) on the same separable passes: what oneDNN
// cannot take (scales computed at run time, crops, antialiasing, transforms it lacks) runs here.
TEST(SamplingCpuTest, ResizeNearestAndLinearMatchReferenceForEveryTransform) {
  const Tensor x = RandomF32({2, 3, 9, 11}, 12, -2.0f, 2.0f);
  const std::vector<std::vector<float>> scales = {{1, 1, 2, 2}, {1, 1, 1.7f, 0.6f}, {1, 1, 0.45f, 3.1f}};
  for (const std::string& transform : kTransforms) {
    for (const auto& sc : scales) {
      CubicCase s{.transform = transform, .scales = sc, .sizes = {}};
      if (transform == "tf_crop_and_resize") s.roi = {0, 0, -0.2f, 0.1f, 1, 1, 0.9f, 1.3f};
      for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
        KernelCase c = MakeCubicCase(s, x, 19);
        c.node.attributes["mode"] = StringAttr("nearest");
        c.node.attributes["nearest_mode"] = StringAttr(nearest);
        SCOPED_TRACE(transform + " nearest " + nearest + " " + std::to_string(sc[2]) + "x" + std::to_string(sc[3]));
        ExpectClose(ResizeCubic(), c);
      }
      for (int64_t antialias : {0, 1}) {
        s.antialias = antialias;
        KernelCase c = MakeCubicCase(s, x, 19);
        c.node.attributes["mode"] = StringAttr("linear");
        SCOPED_TRACE(transform + " linear antialias " + std::to_string(antialias) + " " + std::to_string(sc[2]) + "x" +
                     std::to_string(sc[3]));
        ExpectClose(ResizeCubic(), c);
      }
    }
  }
}

TEST(SamplingCpuTest, ResizeCubicWithSizesAndAspectPolicies) {
  const Tensor x = RandomF32({1, 2, 10, 7}, 12);
  for (const std::string transform : {"half_pixel", "align_corners", "asymmetric"}) {
    for (const std::string policy : {"stretch", "not_larger", "not_smaller"}) {
      CubicCase s{.transform = transform, .scales = {}, .sizes = {15, 4}, .axes = {2, 3}, .policy = policy};
      SCOPED_TRACE(transform + " " + policy);
      ExpectClose(ResizeCubic(), MakeCubicCase(s, x, 18));
    }
    // Resize-11: sizes for every axis, no axes attribute.
    CubicCase s{.transform = transform, .scales = {}, .sizes = {1, 2, 4, 13}};
    SCOPED_TRACE(transform + " Resize-11 sizes");
    ExpectClose(ResizeCubic(), MakeCubicCase(s, x, 11));
  }
}

TEST(SamplingCpuTest, ResizeCubicAntialias) {
  const Tensor x = RandomF32({2, 2, 17, 23}, 13);
  for (const std::vector<float>& sc : std::vector<std::vector<float>>{{0.3f, 0.55f}, {0.8f, 1.6f}, {2.0f, 0.25f}}) {
    for (int64_t exclude : {0, 1}) {
      for (const std::string transform : {"half_pixel", "pytorch_half_pixel", "align_corners"}) {
        CubicCase s{.transform = transform,
                    .scales = sc,
                    .sizes = {},
                    .exclude_outside = exclude,
                    .antialias = 1,
                    .axes = {-2, -1}};
        SCOPED_TRACE(transform + " " + std::to_string(sc[0]) + "x" + std::to_string(sc[1]) + " exclude " +
                     std::to_string(exclude));
        ExpectClose(ResizeCubic(), MakeCubicCase(s, x, 18));
      }
    }
  }
}

TEST(SamplingCpuTest, ResizeCubicAnyAxesAndRanks) {
  // Batch and channel axes resized too, a 3-D and a 5-D input, one axis only, and all scales 1 (a copy).
  struct Spec {
    Shape shape;
    std::vector<float> scales;
  };
  const std::vector<Spec> specs = {
      {{3, 4, 5, 6}, {1.5f, 0.75f, 2, 1}}, {{2, 9, 5}, {1, 0.5f, 1.8f}}, {{1, 2, 3, 4, 5}, {1, 1, 2, 1.5f, 0.6f}},
      {{2, 3, 6, 7}, {1, 1, 1, 2.5f}},     {{2, 3, 6, 7}, {1, 1, 1, 1}}, {{7, 40}, {1, 0.2f}}};
  uint64_t seed = 20;
  for (const Spec& spec : specs) {
    CubicCase s{.transform = "half_pixel", .scales = spec.scales, .sizes = {}};
    SCOPED_TRACE(ShapeToString(spec.shape));
    ExpectClose(ResizeCubic(), MakeCubicCase(s, RandomF32(spec.shape, ++seed), 13));
  }
}

TEST(SamplingCpuTest, ResizeCubicLargeRunsParallel) {
  const Tensor x = RandomF32({1, 3, 64, 64}, 30);
  ExpectClose(ResizeCubic(), MakeCubicCase({.transform = "half_pixel", .scales = {1, 1, 2, 2}, .sizes = {}}, x, 13));
  ExpectClose(ResizeCubic(),
              MakeCubicCase({.transform = "align_corners", .scales = {1, 1, 0.7f, 1.3f}, .sizes = {}}, x, 13));
}

TEST(SamplingCpuTest, ResizeCubicKnowsExactGridPoints) {
  // Scale 1 along an axis samples the input exactly: those values come out bit for bit.
  const Tensor x = RandomF32({1, 1, 5, 6}, 31);
  auto out = RunCpuKernel(ResizeCubic(),
                          MakeCubicCase({.transform = "half_pixel", .scales = {1, 1, 1, 1}, .sizes = {}}, x, 13));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<float>((*out)[0]), Values<float>(x));
}

// Resize-10 and Upsample (scales as input 1 at opset 9, an attribute at opset 7): asymmetric coordinates and
// the "simple" nearest rounding (floor up, ceil down), on oneDNN's resampling where it takes them and on
// the own kernel always.
TEST(SamplingCpuTest, Resize10AndUpsampleMatchTheReference) {
  const Tensor x = RandomF32({2, 3, 7, 10}, 13, -2.0f, 2.0f);
  const std::vector<std::vector<float>> all_scales = {{1, 1, 2, 2}, {1, 1, 3, 1.5f}, {1, 1, 0.5f, 0.7f}};
  struct Form {
    std::string op;
    int64_t opset;
  };
  for (const Form& form : {Form{"Resize", 10}, Form{"Upsample", 9}, Form{"Upsample", 7}}) {
    for (const auto& scales : all_scales) {
      for (const char* mode : {"nearest", "linear", "bilinear"}) {
        if (std::string(mode) == "bilinear" && form.op != "Upsample") continue;
        const bool attr = form.op == "Upsample" && form.opset < 9;
        KernelCase c{.node = MakeNode(form.op, attr ? 1 : 2), .opset = form.opset, .inputs = {x}};
        c.node.attributes["mode"] = StringAttr(mode);
        if (attr) {
          c.node.attributes["scales"] = FloatsAttr(scales);
        } else {
          c.inputs.push_back(F32({4}, scales));
          c.constant = {false, true};
        }
        SCOPED_TRACE(form.op + "-" + std::to_string(form.opset) + " " + mode + " " + std::to_string(scales[2]) + "x" +
                     std::to_string(scales[3]));
        ExpectClose(SamplingFactory(form.op, "cpu:resize"), c);
        // oneDNN's resampling takes what it samples alike (it says why otherwise).
        auto onednn = RunCpuKernel(SamplingFactory(form.op, "onednn:resampling"), c);
        if (onednn.ok()) {
          const auto ref = RunReference(c);
          EXPECT_LE(MaxRelError((*onednn)[0], ref[0]), kTolerance);
        } else {
          EXPECT_NE(onednn.status().message().find("samples differently"), std::string::npos)
              << onednn.status().ToString();
        }
      }
    }
  }
}

TEST(SamplingCpuTest, OwnResizeIsTriedAfterOneDnnAndRefusesUnknownModes) {
  const auto& impls = CpuKernels().Find("Resize", "", DeviceKind::kCpu, Precision::kFp32);
  ASSERT_EQ(impls.size(), 2u);
  EXPECT_EQ(std::string(impls[0].name), "onednn:resampling");
  EXPECT_EQ(std::string(impls[1].name), "cpu:resize");

  KernelCase c =
      MakeCubicCase({.transform = "half_pixel", .scales = {1, 1, 2, 2}, .sizes = {}}, RandomF32({1, 1, 4, 4}, 1), 13);
  c.node.attributes["mode"] = StringAttr("area");
  EXPECT_NE(RefusalOf(ResizeCubic(), c).find("mode 'area' is unknown"), std::string::npos);
  c.node.attributes["mode"] = StringAttr("cubic");
  c.inputs[0] = Tensor(DType::kF64, {1, 1, 4, 4});
  EXPECT_NE(RefusalOf(ResizeCubic(), c).find("f64 X"), std::string::npos);
}

// ---- NonMaxSuppression -----------------------------------------------------------------------------

// [batches, count, 4] boxes in either format; a few degenerate (zero size) and flipped ones among them.
Tensor RandomBoxes(int64_t batches, int64_t count, bool center_point, uint64_t seed) {
  Tensor t(DType::kF32, {batches, count, 4});
  SplitMix64 rng(seed);
  float* b = t.data<float>();
  for (int64_t i = 0; i < batches * count; ++i, b += 4) {
    const float cx = rng.Uniform(0, 10), cy = rng.Uniform(0, 10);
    const float w = i % 17 == 3 ? 0.0f : rng.Uniform(0.5f, 4), h = rng.Uniform(0.5f, 4);
    if (center_point) {
      b[0] = cx, b[1] = cy, b[2] = w, b[3] = h;
    } else if (i % 5 == 0) {  // corners given the other way round
      b[0] = cy + h / 2, b[1] = cx + w / 2, b[2] = cy - h / 2, b[3] = cx - w / 2;
    } else {
      b[0] = cy - h / 2, b[1] = cx - w / 2, b[2] = cy + h / 2, b[3] = cx + w / 2;
    }
  }
  return t;
}

// Scores from few distinct values, so that ties are common, and a NaN.
Tensor RandomScores(int64_t batches, int64_t classes, int64_t count, uint64_t seed) {
  Tensor t(DType::kF32, {batches, classes, count});
  SplitMix64 rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = std::floor(rng.Uniform(0, 20)) / 20;
  t.data<float>()[t.numel() / 2] = std::nanf("");
  return t;
}

struct NmsSpec {
  int64_t max_boxes = -1;  // -1: omitted
  float iou = -1;          // < 0: omitted
  float score = -1;        // < 0: omitted
};

KernelCase MakeNmsCase(bool center_point, const NmsSpec& s, const Tensor& boxes, const Tensor& scores) {
  KernelCase c{.node = MakeNode("NonMaxSuppression", 5, 1, {{"center_point_box", IntAttr(center_point ? 1 : 0)}}),
               .opset = 11};
  c.inputs = {boxes, scores, s.max_boxes < 0 ? Tensor() : I64({1}, {s.max_boxes}),
              s.iou < 0 ? Tensor() : F32({1}, {s.iou}), s.score < 0 ? Tensor() : F32({}, {s.score})};
  // The reference's shape function needs every value to size the output.
  c.constant = {true, true, true, true, true};
  return c;
}

void ExpectSameSelection(const KernelCase& c) {
  auto out = RunCpuKernel(Nms(), c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(c);
  ASSERT_EQ(ref.size(), 1u);
  ASSERT_EQ((*out)[0].shape(), ref[0].shape());
  EXPECT_EQ(Values<int64_t>((*out)[0]), Values<int64_t>(ref[0]));
}

TEST(SamplingCpuTest, NmsSelectsTheReferenceRows) {
  uint64_t seed = 40;
  const std::vector<NmsSpec> specs = {{},
                                      {5, -1, -1},
                                      {1000, 0.5f, -1},
                                      {1000, 0.0f, 0.4f},
                                      {3, 0.3f, 0.5f},
                                      {1000, 1.0f, -1},
                                      {0, 0.5f, -1},
                                      {1000, 0.7f, 0.0f}};
  for (bool center_point : {false, true}) {
    const Tensor boxes = RandomBoxes(2, 150, center_point, ++seed);
    const Tensor scores = RandomScores(2, 3, 150, ++seed);
    for (const NmsSpec& s : specs) {
      SCOPED_TRACE("center_point " + std::to_string(center_point) + " max " + std::to_string(s.max_boxes) + " iou " +
                   std::to_string(s.iou) + " score " + std::to_string(s.score));
      ExpectSameSelection(MakeNmsCase(center_point, s, boxes, scores));
    }
  }
}

// Batched NMS as torchvision exports it: every class's boxes offset into a region of their own, all
// in one NMS call (so thousands are kept, and the kernel tests only the kept boxes near a candidate),
// with zero-area, inverted and NaN boxes among them: the reference's selection exactly.
TEST(SamplingCpuTest, NmsOfClassOffsetBoxesSelectsTheReferenceRows) {
  constexpr int64_t kClasses = 25, kPerClass = 120;
  Tensor boxes = RandomBoxes(1, kClasses * kPerClass, false, 77);
  float* b = boxes.data<float>();
  for (int64_t i = 0; i < kClasses * kPerClass; ++i) {
    const auto offset = static_cast<float>(i / kPerClass) * 16.0f;  // RandomBoxes' corners lie in [-2, 12]
    for (int k = 0; k < 4; ++k) b[4 * i + k] += offset;
  }
  b[4 * 7 + 2] = b[4 * 7];                    // zero height
  std::swap(b[4 * 300 + 1], b[4 * 300 + 3]);  // corners in the other order
  b[4 * 901 + 1] = std::nanf("");
  const Tensor scores = RandomScores(1, 1, kClasses * kPerClass, 78);
  for (float iou : {0.5f, 0.1f, 0.9f}) {
    SCOPED_TRACE("iou " + std::to_string(iou));
    const KernelCase c = MakeNmsCase(false, {100000, iou, 0.01f}, boxes, scores);
    ExpectSameSelection(c);
    auto out = RunCpuKernel(Nms(), c);
    ASSERT_TRUE(out.ok());
    EXPECT_GT((*out)[0].dim(0), kClasses * 10) << "a selection that keeps many boxes";
  }
}

TEST(SamplingCpuTest, NmsSelectsSomethingToCompare) {
  // Guards the test above against comparing two empty selections.
  const KernelCase c =
      MakeNmsCase(false, {1000, 0.5f, -1}, RandomBoxes(2, 150, false, 41), RandomScores(2, 3, 150, 42));
  auto out = RunCpuKernel(Nms(), c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_GT((*out)[0].dim(0), 50);
}

TEST(SamplingCpuTest, NmsTiesKeepTheLowerIndexFirst) {
  // Two disjoint pairs of identical boxes with equal scores: the lower index of each pair survives.
  const Tensor boxes = F32({1, 4, 4}, {0, 0, 1, 1, 5, 5, 6, 6, 0, 0, 1, 1, 5, 5, 6, 6});
  const Tensor scores = F32({1, 1, 4}, {0.5f, 0.5f, 0.5f, 0.5f});
  const KernelCase c = MakeNmsCase(false, {10, 0.5f, -1}, boxes, scores);
  auto out = RunCpuKernel(Nms(), c);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{0, 0, 0, 0, 0, 1}));
  ExpectSameSelection(c);
}

TEST(SamplingCpuTest, NmsAllocatesItsOutputWhenHandedNone) {
  // A self-allocating step hands the kernel an undefined output.
  const KernelCase c = MakeNmsCase(true, {4, 0.5f, -1}, RandomBoxes(1, 30, true, 43), RandomScores(1, 2, 30, 44));
  std::vector<ValueInfo> infos(c.inputs.size());
  std::vector<const ValueInfo*> ptrs;
  std::vector<const Tensor*> in_ptrs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    infos[i] = {c.inputs[i].dtype(), c.inputs[i].shape(), nullptr};
    ptrs.push_back(&infos[i]);
    in_ptrs.push_back(&c.inputs[i]);
  }
  auto kernel = Nms()(KernelInit{c.node, ptrs, c.opset});
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  Tensor out;
  KernelContext ctx(c.node, c.opset, in_ptrs, {&out});
  ASSERT_TRUE((*kernel)->Run(ctx).ok());
  const auto ref = RunReference(c);
  ASSERT_EQ(out.shape(), ref[0].shape());
  EXPECT_EQ(Values<int64_t>(out), Values<int64_t>(ref[0]));
}

TEST(SamplingCpuTest, NmsRefusesOtherFloatTypes) {
  const Node node = MakeNode("NonMaxSuppression", 2);
  std::vector<ValueInfo> infos = {{DType::kF64, {1, 2, 4}}, {DType::kF32, {1, 1, 2}}};
  std::vector<const ValueInfo*> ptrs = {&infos[0], &infos[1]};
  auto kernel = Nms()(KernelInit{node, ptrs, 11});
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.status().message().find("f64 boxes"), std::string::npos);
}

// ---- GridSample ------------------------------------------------------------------------------------

KernelCase MakeGridCase(int64_t opset, const std::string& mode, const std::string& padding, int64_t align,
                        const Tensor& x, const Tensor& grid) {
  KernelCase c{
      .node = MakeNode(
          "GridSample", 2, 1,
          {{"mode", StringAttr(mode)}, {"padding_mode", StringAttr(padding)}, {"align_corners", IntAttr(align)}}),
      .opset = opset};
  c.inputs = {x, grid};
  return c;
}

const std::vector<std::string> kPaddings = {"zeros", "border", "reflection"};

TEST(SamplingCpuTest, GridSample2dEveryModeAndPadding) {
  // Grid values mostly near [-1, 1], and far past it, so that reflection folds more than once.
  const Tensor x = RandomF32({2, 3, 7, 9}, 50, -2.0f, 2.0f);
  for (const Tensor& grid : {RandomF32({2, 5, 6, 2}, 51, -1.3f, 1.3f), RandomF32({2, 5, 6, 2}, 52, -6.0f, 6.0f)}) {
    for (int64_t opset : {16, 20}) {
      const std::vector<std::string> modes = opset == 16 ? std::vector<std::string>{"bilinear", "nearest", "bicubic"}
                                                         : std::vector<std::string>{"linear", "nearest", "cubic"};
      for (const std::string& mode : modes) {
        for (const std::string& padding : kPaddings) {
          for (int64_t align : {0, 1}) {
            SCOPED_TRACE("opset " + std::to_string(opset) + " " + mode + " " + padding + " align " +
                         std::to_string(align));
            ExpectClose(GridSample(), MakeGridCase(opset, mode, padding, align, x, grid));
          }
        }
      }
    }
  }
}

TEST(SamplingCpuTest, GridSampleNdEveryModeAndPadding) {
  // Opset 20: 1, 2 and 3 spatial axes.
  struct Spec {
    Shape x, grid;
  };
  const std::vector<Spec> specs = {{{2, 3, 8}, {2, 5, 1}}, {{1, 2, 4, 5, 6}, {1, 3, 4, 5, 3}}};
  uint64_t seed = 60;
  for (const Spec& spec : specs) {
    const Tensor x = RandomF32(spec.x, ++seed, -2.0f, 2.0f);
    const Tensor grid = RandomF32(spec.grid, ++seed, -1.8f, 1.8f);
    for (const std::string mode : {"linear", "nearest", "cubic"}) {
      for (const std::string& padding : kPaddings) {
        for (int64_t align : {0, 1}) {
          SCOPED_TRACE(ShapeToString(spec.x) + " " + mode + " " + padding + " align " + std::to_string(align));
          ExpectClose(GridSample(), MakeGridCase(20, mode, padding, align, x, grid));
        }
      }
    }
  }
}

TEST(SamplingCpuTest, GridSampleNearestTiesAndNaN) {
  // With align_corners on a 5-wide axis, grid value g samples x = 2 (g + 1): ±0.75, ±0.25 land on
  // half-pixels, where 2-D rounds half to even and 3-D half away from zero. A NaN coordinate reads zero.
  const float nan = std::nanf("");
  const std::vector<float> ties = {-0.75f, 0.25f, 0.75f, -0.25f, 0.25f, 0.75f, nan, 0.5f, -0.75f, -0.75f};
  const Tensor x2 = RandomF32({1, 2, 5, 5}, 70);
  const Tensor x3 = RandomF32({1, 2, 5, 5, 5}, 71);
  std::vector<float> ties3 = ties;
  ties3.insert(ties3.end(), {0.25f, -0.25f, 0.75f, 0.25f, -0.75f});
  const Tensor grid2 = F32({1, 1, 5, 2}, ties);
  const Tensor grid3 = F32({1, 1, 1, 5, 3}, ties3);
  for (const std::string& padding : kPaddings) {
    for (const std::string mode : {"nearest", "linear", "cubic"}) {
      SCOPED_TRACE(padding + " " + mode);
      ExpectClose(GridSample(), MakeGridCase(20, mode, padding, 1, x2, grid2));
      ExpectClose(GridSample(), MakeGridCase(20, mode, padding, 1, x3, grid3));
    }
  }
}

TEST(SamplingCpuTest, GridSampleLargeRunsParallel) {
  const Tensor x = RandomF32({2, 8, 32, 32}, 80);
  const Tensor grid = RandomF32({2, 40, 24, 2}, 81, -1.1f, 1.1f);
  for (const std::string mode : {"bilinear", "nearest", "bicubic"}) {
    SCOPED_TRACE(mode);
    ExpectClose(GridSample(), MakeGridCase(16, mode, "zeros", 0, x, grid));
  }
}

TEST(SamplingCpuTest, GridSampleRefusesOtherTypes) {
  KernelCase c =
      MakeGridCase(16, "bilinear", "zeros", 0, Tensor(DType::kF64, {1, 1, 2, 2}), RandomF32({1, 1, 1, 2}, 1));
  EXPECT_NE(RefusalOf(GridSample(), c).find("f64 X"), std::string::npos);
}

// ---- placement: values known only at run time ------------------------------------------------------

ValueDesc Input(const std::string& name, DType dtype, Shape shape) {
  ValueDesc desc;
  desc.name = name;
  desc.dtype = dtype;
  desc.has_shape = true;
  desc.shape = std::move(shape);
  return desc;
}

// A one-node graph whose inputs are all graph inputs (their values come with each run).
Graph OneNodeGraph(const Node& node, int64_t opset, std::vector<ValueDesc> inputs, DType out_dtype) {
  Graph g;
  g.name = "one_node";
  g.opset = opset;
  g.inputs = std::move(inputs);
  ValueDesc out;
  out.name = node.outputs[0];
  out.dtype = out_dtype;
  g.outputs = {out};
  g.nodes = {node};
  return g;
}

TEST(SamplingCpuTest, RunTimeScalesAndNmsInputsRunOnTheCpuKernels) {
  CompileOptions options;
  options.kernels = &CpuKernels();
  const Target cpu = *ParseTarget("cpu:fp32");

  // Resize whose scales arrive with the run: the step's output shape is dynamic.
  const KernelCase resize = MakeCubicCase({.transform = "half_pixel", .scales = {1, 1, 1.5f, 2}, .sizes = {}},
                                          RandomF32({1, 2, 6, 5}, 90), 13);
  Node resize_node = resize.node;
  resize_node.inputs = {"in0", "", "in2"};
  const Graph rg = OneNodeGraph(resize_node, 13,
                                {Input("in0", DType::kF32, {1, 2, 6, 5}), Input("in2", DType::kF32, {4})}, DType::kF32);
  auto model = Compile(rg, cpu, options);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ((*model)->kernels()[0].implementation, "cpu:resize");
  EXPECT_TRUE((*model)->fallbacks().empty());
  auto out = (*model)->Run({{"in0", resize.inputs[0]}, {"in2", resize.inputs[2]}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto ref = RunReference(resize);
  ASSERT_EQ((*out)[0].shape(), ref[0].shape());
  EXPECT_LE(MaxRelError((*out)[0], ref[0]), kTolerance);

  // NonMaxSuppression: the output length depends on every input's values.
  const KernelCase nms = MakeNmsCase(false, {6, 0.4f, 0.1f}, RandomBoxes(2, 40, false, 91), RandomScores(2, 2, 40, 92));
  const Graph ng =
      OneNodeGraph(nms.node, 11,
                   {Input("in0", DType::kF32, {2, 40, 4}), Input("in1", DType::kF32, {2, 2, 40}),
                    Input("in2", DType::kI64, {1}), Input("in3", DType::kF32, {1}), Input("in4", DType::kF32, {})},
                   DType::kI64);
  model = Compile(ng, cpu, options);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ((*model)->kernels()[0].implementation, "cpu:nms");
  EXPECT_TRUE((*model)->fallbacks().empty());
  out = (*model)->Run({{"in0", nms.inputs[0]},
                       {"in1", nms.inputs[1]},
                       {"in2", nms.inputs[2]},
                       {"in3", nms.inputs[3]},
                       {"in4", nms.inputs[4]}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto nms_ref = RunReference(nms);
  EXPECT_EQ(Values<int64_t>((*out)[0]), Values<int64_t>(nms_ref[0]));
}

}  // namespace
}  // namespace chipfit::testing
