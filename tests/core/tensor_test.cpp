// Tensor storage, half/bfloat16 conversions and .npy round trips.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <unistd.h>

#include "core/tensor/npy.h"
#include "core/tensor/random.h"
#include "core/tensor/tensor.h"

namespace chipfit {
namespace {

TEST(HalfTest, RoundTripsAndRoundsToNearestEven) {
  for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f}) {
    EXPECT_EQ(HalfBitsToFloat(FloatToHalfBits(v)), v) << v;
  }
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7c00);            // rounds past the largest half: +inf
  EXPECT_EQ(FloatToHalfBits(1.0f + 1.0f / 2048), 0x3c00);  // tie → even mantissa
  EXPECT_EQ(FloatToHalfBits(1.0f + 3.0f / 2048), 0x3c02);  // tie → even mantissa (up)
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(FloatToHalfBits(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(HalfBitsToFloat(0x0001), 5.960464477539063e-08f);  // smallest subnormal
  EXPECT_EQ(FloatToBFloat16Bits(1.0f), 0x3f80);
  EXPECT_EQ(BFloat16BitsToFloat(FloatToBFloat16Bits(3.140625f)), 3.140625f);
}

TEST(TensorTest, OwnsZeroedStorageAndReshapesWithoutCopying) {
  Tensor t(DType::kF32, {2, 3});
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.nbytes(), 24u);
  EXPECT_EQ(t.data<float>()[5], 0.0f);
  Tensor r = t.Reshaped({3, 2});
  r.data<float>()[0] = 7;
  EXPECT_EQ(t.data<float>()[0], 7.0f);
  Tensor c = t.Clone();
  c.data<float>()[0] = 1;
  EXPECT_EQ(t.data<float>()[0], 7.0f);
  EXPECT_EQ(DescribeTensor(t), "f32[2x3]");
  EXPECT_EQ(Strides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
}

class NpyTest : public ::testing::Test {
 protected:
  // One folder per test and process: CTest runs the tests of this file in parallel processes.
  std::filesystem::path dir_ =
      std::filesystem::temp_directory_path() / ("chipfit_npy_test_" + std::to_string(getpid()) + "_" +
                                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
};

TEST_F(NpyTest, RoundTripsEveryDtype) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kI64, DType::kI32, DType::kU8, DType::kBool}) {
    Tensor t(dtype, {2, 3});
    for (int64_t i = 0; i < t.numel(); ++i) static_cast<uint8_t*>(t.raw_data())[i] = static_cast<uint8_t>(i % 2);
    const auto path = dir_ / "t.npy";
    ASSERT_TRUE(WriteNpy(path, t).ok());
    auto back = ReadNpy(path);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->dtype(), dtype);
    EXPECT_EQ(back->shape(), t.shape());
    EXPECT_EQ(std::memcmp(back->raw_data(), t.raw_data(), t.nbytes()), 0);
  }
}

TEST_F(NpyTest, ScalarAndOneDimensionalShapes) {
  for (Shape shape : {Shape{}, Shape{5}}) {
    ASSERT_TRUE(WriteNpy(dir_ / "s.npy", Tensor(DType::kF32, shape)).ok());
    auto back = ReadNpy(dir_ / "s.npy");
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->shape(), shape);
  }
}

TEST_F(NpyTest, MalformedFilesNameTheFile) {
  std::ofstream(dir_ / "bad.npy") << "not numpy";
  auto bad = ReadNpy(dir_ / "bad.npy");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.npy"), std::string::npos);
  ASSERT_TRUE(WriteNpy(dir_ / "t.npy", Tensor(DType::kF32, {100})).ok());
  std::filesystem::resize_file(dir_ / "t.npy", 200);  // truncate the data
  auto truncated = ReadNpy(dir_ / "t.npy");
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("shorter"), std::string::npos);
  EXPECT_EQ(ReadNpy(dir_ / "missing.npy").status().code(), StatusCode::kNotFound);
}

TEST(RandomTest, SeededTensorsAreReproducibleAndInRange) {
  // splitmix64's first output for seed 0 is fixed by the algorithm.
  EXPECT_EQ(SplitMix64(0).Next(), 0xE220A8397B1DCDAFULL);
  const Tensor a = SeededTensor(DType::kF32, {4, 8}, 7);
  const Tensor b = SeededTensor(DType::kF32, {4, 8}, 7);
  const Tensor c = SeededTensor(DType::kF32, {4, 8}, 8);
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0);
  EXPECT_NE(std::memcmp(a.raw_data(), c.raw_data(), a.nbytes()), 0);
  for (int64_t i = 0; i < a.numel(); ++i) {
    EXPECT_GE(a.data<float>()[i], -1.0f);
    EXPECT_LT(a.data<float>()[i], 1.0f);
  }
  const Tensor ints = SeededTensor(DType::kI64, {100}, 1);
  for (int64_t i = 0; i < ints.numel(); ++i) EXPECT_TRUE(ints.data<int64_t>()[i] >= 0 && ints.data<int64_t>()[i] < 10);
}

}  // namespace
}  // namespace chipfit
