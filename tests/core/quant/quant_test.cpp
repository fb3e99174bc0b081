// Post-training quantization: streaming histograms, calibration methods, per-channel weights, data loading.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "core/quant/calibration.h"
#include "core/quant/calibration_data.h"
#include "core/quant/histogram.h"
#include "core/tensor/npy.h"
#include "core/tensor/random.h"

namespace chipfit {
namespace {

uint64_t SumCounts(const StreamingHistogram& h) {
  return std::accumulate(h.counts().begin(), h.counts().end(), uint64_t{0});
}

std::vector<float> UniformValues(size_t n, double lo, double hi, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = rng.Uniform(lo, hi);
  return v;
}

// Mostly bell-shaped values (Irwin–Hall: sum of 12 uniforms − 6, close to N(0, 1)) plus 0.05 % outliers
// of magnitude 50–100: the shape where clipping pays.
std::vector<float> SkewedValues(size_t n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) {
    if (rng.Next() % 2000 == 0) {
      x = static_cast<float>((rng.Unit() < 0.5 ? -1.0 : 1.0) * (50.0 + 50.0 * rng.Unit()));
    } else {
      double s = -6.0;
      for (int k = 0; k < 12; ++k) s += rng.Unit();
      x = static_cast<float>(s);
    }
  }
  return v;
}

TEST(StreamingHistogram, CountsSumToTotalAndSpecialsAreCountedApart) {
  StreamingHistogram h(64);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> data = {0.0f, -3.0f, 1.5f, nan, inf, -inf, 2.0f, 0.25f};
  h.Add(data.data(), data.size());
  EXPECT_EQ(h.total(), 5u);
  EXPECT_EQ(SumCounts(h), h.total());
  EXPECT_EQ(h.nan_count(), 1u);
  EXPECT_EQ(h.inf_count(), 2u);
  EXPECT_EQ(h.min(), -3.0f);
  EXPECT_EQ(h.max(), 2.0f);
  EXPECT_EQ(h.range(), 3.0);
  EXPECT_EQ(h.counts()[0], 1u);   // the zero
  EXPECT_EQ(h.counts()[63], 1u);  // |-3| sits on the top edge, which belongs to the last bin
}

TEST(StreamingHistogram, ZerosBeforeAnyMagnitudeStayInBinZero) {
  StreamingHistogram h(16);
  const std::vector<float> zeros(10, 0.0f);
  h.Add(zeros.data(), zeros.size());
  EXPECT_EQ(h.range(), 0.0);
  EXPECT_EQ(h.counts()[0], 10u);
  const float one = 1.0f;
  h.Add(&one, 1);
  EXPECT_EQ(h.total(), 11u);
  EXPECT_EQ(h.counts()[0], 10u);
  EXPECT_EQ(h.counts()[15], 1u);
}

TEST(StreamingHistogram, RangeGrowthMergesBinsAndKeepsCounts) {
  StreamingHistogram h(2048);
  const auto small = UniformValues(1000, 0.0, 1.0, 1);
  h.Add(small.data(), small.size());
  const double first_range = h.range();
  EXPECT_LE(first_range, 1.0);
  EXPECT_EQ(SumCounts(h), 1000u);
  const auto huge = UniformValues(1000, -1e4, 1e4, 2);
  h.Add(huge.data(), huge.size());
  EXPECT_EQ(h.total(), 2000u);
  EXPECT_EQ(SumCounts(h), 2000u);
  EXPECT_GE(h.range(), h.abs_max());
  // Doubling only: the range is the first one times a power of two.
  const double doublings = std::log2(h.range() / first_range);
  EXPECT_EQ(doublings, std::round(doublings));
  // Bins are now wider than 1, so every small value merged down into bin 0.
  EXPECT_GT(h.bin_width(), 1.0);
  EXPECT_GE(h.counts()[0], 1000u);
}

TEST(StreamingHistogram, MemoryIsBoundedWhateverTheSampleCount) {
  StreamingHistogram h(2048);
  const size_t before = h.MemoryBytes();
  SplitMix64 rng(7);
  std::vector<float> batch(1000);
  for (int call = 0; call < 10'000; ++call) {
    const double magnitude = 1.0 + call;  // keeps growing the range
    for (float& x : batch) x = static_cast<float>((rng.Unit() * 2.0 - 1.0) * magnitude);
    h.Add(batch.data(), batch.size());
  }
  EXPECT_EQ(h.total(), 10'000'000u);
  EXPECT_EQ(SumCounts(h), h.total());
  EXPECT_EQ(h.MemoryBytes(), before);
  EXPECT_LT(h.MemoryBytes(), 2048 * sizeof(uint64_t) + 256);
}

TEST(StreamingHistogram, UniformPercentilesAreWhereExpected) {
  StreamingHistogram h;
  const auto data = UniformValues(1'000'000, -1.0, 1.0, 3);
  h.Add(data.data(), data.size());
  EXPECT_NEAR(h.AbsPercentile(50.0), 0.5, 0.005);
  EXPECT_NEAR(h.AbsPercentile(90.0), 0.9, 0.005);
  EXPECT_NEAR(h.AbsPercentile(99.0), 0.99, 0.005);
  EXPECT_EQ(h.AbsPercentile(100.0), h.abs_max());
  EXPECT_EQ(h.AbsPercentile(0.0), 0.0);
  // Nothing to clip in a uniform distribution: the KL search keeps (nearly) the full range.
  EXPECT_GT(h.EntropyThreshold(128), 0.9 * h.abs_max());
}

TEST(StreamingHistogram, EntropyKeepsEverythingWhenFewBinsAreUsed) {
  StreamingHistogram h(2048);
  std::vector<float> data;
  for (int i = 0; i < 100; ++i) data.push_back(static_cast<float>(i % 10));
  data.push_back(1000.0f);  // 10 bins of the histogram hold all but this one
  h.Add(data.data(), data.size());
  StreamingHistogram g(2048);
  g.Add(data.data(), data.size() - 1);
  EXPECT_EQ(g.EntropyThreshold(128), 9.0);  // everything fits in 128 levels: no clipping, threshold = max
  // An isolated outlier gets a quantisation level of its own at full range, so keeping it costs no KL.
  EXPECT_EQ(h.EntropyThreshold(128), 1000.0);
  EXPECT_EQ(StreamingHistogram(64).EntropyThreshold(128), 0.0);  // empty histogram
}

TEST(Calibrator, MethodNamesRoundTrip) {
  for (auto m : {CalibrationMethod::kMinMax, CalibrationMethod::kEntropy, CalibrationMethod::kPercentile}) {
    EXPECT_EQ(ParseCalibrationMethod(CalibrationMethodName(m)), m);
  }
  EXPECT_EQ(CalibrationMethodName(CalibrationMethod::kEntropy), "entropy");
  EXPECT_FALSE(ParseCalibrationMethod("kl").has_value());
}

bool BitwiseEqual(const QuantParams& a, const QuantParams& b) {
  auto bits = [](float f) { return std::bit_cast<uint32_t>(f); };
  return a.dtype == b.dtype && a.zero_point == b.zero_point && bits(a.scale) == bits(b.scale) &&
         bits(a.min) == bits(b.min) && bits(a.max) == bits(b.max);
}

TEST(Calibrator, IsDeterministic) {
  for (auto method : {CalibrationMethod::kMinMax, CalibrationMethod::kEntropy, CalibrationMethod::kPercentile}) {
    CalibrationOptions options;
    options.method = method;
    Calibrator a(options), b(options);
    for (uint64_t s = 0; s < 4; ++s) {
      const auto data = SkewedValues(50'000, 100 + s);
      a.Observe("x", data.data(), data.size());
      b.Observe("x", data.data(), data.size());
    }
    for (bool symmetric : {false, true}) {
      auto pa = a.Compute("x", symmetric), pb = b.Compute("x", symmetric);
      ASSERT_TRUE(pa.ok() && pb.ok());
      EXPECT_TRUE(BitwiseEqual(*pa, *pb)) << CalibrationMethodName(method);
    }
  }
}

TEST(Calibrator, MethodsDifferOnSkewedData) {
  const auto data = SkewedValues(1'000'000, 42);
  const auto [lo, hi] = std::minmax_element(data.begin(), data.end());
  Calibrator c;
  c.Observe("act", data.data(), data.size());
  auto minmax = c.Compute("act", CalibrationMethod::kMinMax, false);
  auto entropy = c.Compute("act", CalibrationMethod::kEntropy, true);
  auto percentile = c.Compute("act", CalibrationMethod::kPercentile, true);
  ASSERT_TRUE(minmax.ok() && entropy.ok() && percentile.ok());
  EXPECT_EQ(minmax->min, *lo);  // MinMax covers the outliers exactly
  EXPECT_EQ(minmax->max, *hi);
  EXPECT_FLOAT_EQ(minmax->scale, (*hi - *lo) / 255.0f);
  const double abs_max = std::max(-*lo, *hi);
  const double t_entropy = c.histogram("act")->EntropyThreshold(128);
  const double t_percentile = c.histogram("act")->AbsPercentile(99.99);
  EXPECT_LT(t_entropy, 0.25 * abs_max);  // clips the 0.05 % outliers away
  EXPECT_GT(t_entropy, 3.0);             // but keeps the body of the bell
  EXPECT_GT(t_percentile, 50.0);         // 99.99 % still reaches into the outliers
  EXPECT_NE(entropy->scale, percentile->scale);
  EXPECT_EQ(entropy->dtype, DType::kI8);
  EXPECT_EQ(entropy->zero_point, 0);
  EXPECT_FLOAT_EQ(entropy->scale, static_cast<float>(t_entropy / 127.0));
}

TEST(Calibrator, AsymmetricU8ForNonNegativeData) {
  Calibrator c;
  const auto relu = UniformValues(10'000, 0.0, 6.0, 5);
  c.Observe("relu", relu.data(), relu.size());
  const float six = 6.0f, zero = 0.0f;
  c.Observe("relu", &six, 1);
  c.Observe("relu", &zero, 1);
  auto p = c.Compute("relu");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->dtype, DType::kU8);
  EXPECT_EQ(p->zero_point, 0);
  EXPECT_FLOAT_EQ(p->scale, 6.0f / 255.0f);
  EXPECT_EQ(c.samples("relu"), 3u);
}

TEST(Calibrator, AsymmetricU8RoundTripWithinHalfAStep) {
  Calibrator c;
  const std::vector<float> data = {-1.0f, 0.5f, 3.0f, 2.0f};
  c.Observe("v", data.data(), data.size());
  auto p = c.Compute("v");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->zero_point, static_cast<int32_t>(std::lround(255.0 / 4.0)));
  EXPECT_FLOAT_EQ(p->scale, 4.0f / 255.0f);
  EXPECT_EQ(QuantizeU8(0.0f, *p), p->zero_point);  // zero is exact
  EXPECT_EQ(QuantizeU8(100.0f, *p), 255);          // saturates
  EXPECT_EQ(QuantizeU8(-100.0f, *p), 0);
  // The grid is shifted by the rounded zero point, so stay within what it still covers.
  const float lo = Dequantize(0, *p), hi = Dequantize(255, *p);
  for (float x = lo; x <= hi; x += 0.001f) {
    EXPECT_LE(std::fabs(Dequantize(QuantizeU8(x, *p), *p) - x), p->scale / 2 * 1.0001f) << x;
  }
}

TEST(Calibrator, ConstantZeroAndUnknownNames) {
  Calibrator c;
  const std::vector<float> zeros(100, 0.0f);
  c.Observe("z", zeros.data(), zeros.size());
  for (bool symmetric : {false, true}) {
    auto p = c.Compute("z", symmetric);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->scale, 1.0f);
    EXPECT_EQ(p->zero_point, 0);
  }
  auto missing = c.Compute("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nope"), std::string::npos);
  EXPECT_FALSE(c.Observe("ints", Tensor(DType::kI64, {4})));
  EXPECT_TRUE(c.Observe("f", SeededTensor(DType::kF32, {8}, 1)));
  EXPECT_EQ(c.values(), (std::vector<std::string>{"f", "z"}));
  EXPECT_EQ(c.samples("ints"), 0u);
  const QuantTable table = c.ComputeAll();
  EXPECT_EQ(table.size(), 2u);
  EXPECT_EQ(table.at("f").dtype, DType::kU8);
}

TEST(Calibrator, HistogramMemoryDoesNotGrowWithSamples) {
  CalibrationOptions options;
  options.bins = 512;
  Calibrator c(options);
  const auto data = SkewedValues(1000, 9);
  c.Observe("a", data.data(), data.size());
  c.Observe("b", data.data(), data.size());
  const size_t bytes = c.HistogramBytes();
  for (int i = 0; i < 500; ++i) c.Observe(i % 2 ? "a" : "b", data.data(), data.size());
  EXPECT_EQ(c.HistogramBytes(), bytes);
  EXPECT_LT(bytes, 2 * (512 * sizeof(uint64_t) + 256));
  EXPECT_EQ(c.samples("a"), 251u);
}

Tensor MakeF32(Shape shape, std::vector<float> values) {
  Tensor t(DType::kF32, std::move(shape));
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

TEST(PerChannel, ScalesAlongEitherAxis) {
  // [2, 3]: rows are Conv-style output channels, columns MatMul-style N.
  const Tensor w = MakeF32({2, 3}, {1.27f, -2.54f, 0.0f, 0.0f, 0.5f, -0.0f});
  auto rows = PerChannelScales(w, 0);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows, (std::vector<float>{2.54f / 127.0f, 0.5f / 127.0f}));
  auto cols = PerChannelScales(w, 1);
  ASSERT_TRUE(cols.ok());
  EXPECT_EQ(*cols, (std::vector<float>{1.27f / 127.0f, 2.54f / 127.0f, 1.0f}));  // all-zero column → 1
  auto last = PerChannelScales(w, -1);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, *cols);
}

TEST(PerChannel, QuantizesRoundingHalfToEvenAndSaturates) {
  const Tensor w = MakeF32({2, 1, 1, 3}, {1.25f, -0.75f, 0.2f, 2.5f, 300.0f, -300.0f});
  auto q = QuantizeWeightsPerChannel(w, 0, {0.5f, 1.0f});
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->dtype(), DType::kI8);
  EXPECT_EQ(q->shape(), w.shape());
  const int8_t* v = q->data<int8_t>();
  EXPECT_EQ(std::vector<int8_t>(v, v + 6), (std::vector<int8_t>{2, -2, 0, 2, 127, -127}));
  // With its own scales every channel's largest weight maps to ±127.
  auto scales = PerChannelScales(w, 0);
  ASSERT_TRUE(scales.ok());
  auto q2 = QuantizeWeightsPerChannel(w, 0, *scales);
  ASSERT_TRUE(q2.ok());
  EXPECT_EQ(q2->data<int8_t>()[0], 127);
  EXPECT_EQ(q2->data<int8_t>()[5], -127);
}

TEST(PerChannel, Errors) {
  const Tensor w = MakeF32({2, 3}, {1, 2, 3, 4, 5, 6});
  for (int axis : {2, -3}) {
    auto s = PerChannelScales(w, axis);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find("axis"), std::string::npos);
    EXPECT_FALSE(QuantizeWeightsPerChannel(w, axis, {1, 1}).ok());
  }
  EXPECT_FALSE(PerChannelScales(Tensor(DType::kI64, {2, 3}), 0).ok());
  EXPECT_FALSE(PerChannelScales(MakeF32({}, {1}), 0).ok());
  EXPECT_FALSE(QuantizeWeightsPerChannel(w, 0, {1, 1, 1}).ok());  // 3 scales for 2 channels
  EXPECT_FALSE(QuantizeWeightsPerChannel(w, 0, {1, 0}).ok());     // zero scale
  EXPECT_FALSE(PerChannelScales(MakeF32({2}, {1, std::numeric_limits<float>::quiet_NaN()}), 0).ok());
}

class CalibrationDataTest : public ::testing::Test {
 protected:
  // One folder per test and process: CTest runs the tests of this file in parallel processes.
  std::filesystem::path dir_ =
      std::filesystem::temp_directory_path() / ("chipfit_quant_test_" + std::to_string(getpid()) + "_" +
                                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::vector<ValueDesc> inputs_ = {
      {"images:0", DType::kF32, true, {-1, 3, 2}, {"batch", "", ""}},
      {"mask", DType::kI64, true, {2}, {""}},
  };

  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes a valid sample into `folder`; the image is filled with `fill`.
  void WriteSample(const std::filesystem::path& folder, float fill) {
    std::filesystem::create_directories(folder);
    Tensor image(DType::kF32, {1, 3, 2});
    std::fill_n(image.data<float>(), image.numel(), fill);
    ASSERT_TRUE(WriteNpy(folder / "images_0.npy", image).ok());
    ASSERT_TRUE(WriteNpy(folder / "mask.npy", Tensor(DType::kI64, {2})).ok());
  }
};

TEST_F(CalibrationDataTest, FlatFolderIsOneSample) {
  WriteSample(dir_, 0.5f);
  EXPECT_EQ(CalibrationFileName("images:0"), "images_0.npy");
  EXPECT_EQ(CalibrationFileName("a/b"), "a_b.npy");
  auto samples = LoadCalibrationData(dir_.string(), inputs_);
  ASSERT_TRUE(samples.ok()) << samples.status().ToString();
  ASSERT_EQ(samples->size(), 1u);
  const Tensor& image = samples->front().at("images:0");
  EXPECT_EQ(image.shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(image.data<float>()[5], 0.5f);
  EXPECT_EQ(samples->front().at("mask").dtype(), DType::kI64);
}

TEST_F(CalibrationDataTest, SubFoldersAreSamplesSortedByName) {
  WriteSample(dir_ / "s2", 2.0f);
  WriteSample(dir_ / "s10", 10.0f);
  WriteSample(dir_ / "s1", 1.0f);
  auto samples = LoadCalibrationData(dir_.string(), inputs_);
  ASSERT_TRUE(samples.ok()) << samples.status().ToString();
  ASSERT_EQ(samples->size(), 3u);
  std::vector<float> order;
  for (const auto& s : *samples) order.push_back(s.at("images:0").data<float>()[0]);
  EXPECT_EQ(order, (std::vector<float>{1.0f, 10.0f, 2.0f}));  // by name, not by number
}

TEST_F(CalibrationDataTest, ErrorsNameTheFile) {
  WriteSample(dir_ / "a", 1.0f);
  WriteSample(dir_ / "b", 1.0f);
  std::filesystem::remove(dir_ / "b" / "mask.npy");
  auto missing = LoadCalibrationData(dir_.string(), inputs_);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find((dir_ / "b" / "mask.npy").string()), std::string::npos)
      << missing.status().message();

  ASSERT_TRUE(WriteNpy(dir_ / "b" / "mask.npy", Tensor(DType::kI64, {3})).ok());
  auto shape = LoadCalibrationData(dir_.string(), inputs_);
  ASSERT_FALSE(shape.ok());
  EXPECT_EQ(shape.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(shape.status().message().find("mask.npy"), std::string::npos);
  EXPECT_NE(shape.status().message().find("shape 3"), std::string::npos) << shape.status().message();

  ASSERT_TRUE(WriteNpy(dir_ / "b" / "mask.npy", Tensor(DType::kI32, {2})).ok());
  auto dtype = LoadCalibrationData(dir_.string(), inputs_);
  ASSERT_FALSE(dtype.ok());
  EXPECT_NE(dtype.status().message().find("i32"), std::string::npos) << dtype.status().message();

  std::ofstream(dir_ / "b" / "mask.npy") << "not numpy";
  auto garbage = LoadCalibrationData(dir_.string(), inputs_);
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(garbage.status().message().find("mask.npy"), std::string::npos);
}

TEST_F(CalibrationDataTest, SymbolicDimsAcceptAnySizeButRankMustMatch) {
  std::filesystem::create_directories(dir_);
  ASSERT_TRUE(WriteNpy(dir_ / "images_0.npy", Tensor(DType::kF32, {4, 3, 2})).ok());
  ASSERT_TRUE(WriteNpy(dir_ / "mask.npy", Tensor(DType::kI64, {2})).ok());
  EXPECT_TRUE(LoadCalibrationData(dir_.string(), inputs_).ok());
  ASSERT_TRUE(WriteNpy(dir_ / "images_0.npy", Tensor(DType::kF32, {3, 2})).ok());
  auto bad = LoadCalibrationData(dir_.string(), inputs_);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("batchx3x2"), std::string::npos) << bad.status().message();
}

TEST_F(CalibrationDataTest, EmptyOrMissingFolder) {
  auto empty = LoadCalibrationData(dir_.string(), inputs_);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  auto missing = LoadCalibrationData((dir_ / "nope").string(), inputs_);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(RandomCalibrationData, SeededPerSampleAndInput) {
  const std::vector<ValueDesc> inputs = {
      {"x", DType::kF32, true, {-1, 4}, {"n", ""}},
      {"ids", DType::kI64, true, {3}, {""}},
  };
  const auto samples = RandomCalibrationData(inputs, 3, 11);
  ASSERT_EQ(samples.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    const Tensor& x = samples[k].at("x");
    EXPECT_EQ(x.shape(), (Shape{1, 4}));  // unknown dims become 1
    const Tensor expect_x = SeededTensor(DType::kF32, {1, 4}, 11 + k);
    EXPECT_EQ(std::memcmp(x.raw_data(), expect_x.raw_data(), x.nbytes()), 0);
    const Tensor expect_ids = SeededTensor(DType::kI64, {3}, 11 + k + 7919);
    EXPECT_EQ(std::memcmp(samples[k].at("ids").raw_data(), expect_ids.raw_data(), expect_ids.nbytes()), 0);
  }
  EXPECT_NE(std::memcmp(samples[0].at("x").raw_data(), samples[1].at("x").raw_data(), 16), 0);
}

}  // namespace
}  // namespace chipfit
