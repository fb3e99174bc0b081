// The OpenCL runtime on a real device (POCL in CI): transfers with half storage, the program
// binary cache (hits, corrupt and truncated entries), device timers, the fit check.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "tests/devices/opencl/opencl_test_util.h"

namespace chipfit {
namespace {

using testing::TestContext;

std::string TempDir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("chipfit-ocl-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

TEST(OpenClRuntimeTest, UploadDownloadRoundTripsFp32AndHalfStorage) {
  CHIPFIT_REQUIRE_OPENCL();
  for (Precision p : {Precision::kFp32, Precision::kFp16}) {
    auto ctx = TestContext(p);
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    const Tensor x = testing::RandomF32({3, 37}, 5, -100.0f, 100.0f);
    const size_t bytes = static_cast<size_t>(x.numel()) * DTypeSize((*ctx)->StorageType(DType::kF32));
    EXPECT_EQ(bytes, p == Precision::kFp16 ? 222u : 444u);
    auto alloc = (*ctx)->Allocate(bytes + 512);
    ASSERT_TRUE(alloc.ok());
    auto view = (*alloc)->View((*ctx)->Alignment(), bytes);  // a sub-buffer at the device's alignment
    ASSERT_TRUE(view.ok()) << view.status().ToString();
    ASSERT_TRUE((*ctx)->Upload(x, *view).ok());
    Tensor back(DType::kF32, x.shape());
    ASSERT_TRUE((*ctx)->Download(*view, back).ok());
    for (int64_t i = 0; i < x.numel(); ++i) {
      const float want = p == Precision::kFp16 ? static_cast<float>(Float16(x.data<float>()[i])) : x.data<float>()[i];
      EXPECT_EQ(back.data<float>()[i], want) << i;
    }
    // A size mismatch is an error, not a partial copy.
    Tensor wrong(DType::kF32, {5});
    EXPECT_FALSE((*ctx)->Download(*view, wrong).ok());
  }
}

TEST(OpenClRuntimeTest, KernelLaunchIsTimedByTheDevice) {
  CHIPFIT_REQUIRE_OPENCL();
  auto ctx = TestContext(Precision::kFp32);
  ASSERT_TRUE(ctx.ok());
  auto kernel = (*ctx)->CreateKernel("util", "cf_fill");
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  const cl_uint n = 1 << 20;
  auto alloc = (*ctx)->Allocate(n * sizeof(float));
  ASSERT_TRUE(alloc.ok());
  auto buffer = (*alloc)->View(0, n * sizeof(float));
  ASSERT_TRUE(buffer.ok());
  ASSERT_TRUE(ocl::SetArgs(*kernel, "fill", ocl::Mem(*buffer), 2.5f, n).ok());
  (*ctx)->TimerBegin();
  ASSERT_TRUE((*ctx)->Launch(*kernel, cl::NDRange(n), cl::NDRange(256), "fill").ok());
  auto ms = (*ctx)->TimerEndMs();
  ASSERT_TRUE(ms.ok()) << ms.status().ToString();
  EXPECT_GT(*ms, 0.0);
  Tensor out(DType::kF32, {n});
  ASSERT_TRUE((*ctx)->Download(*buffer, out).ok());
  EXPECT_EQ(out.data<float>()[n - 1], 2.5f);
  // A work-group size the kernel cannot take names the kernel and the OpenCL error.
  Status bad = (*ctx)->Launch(*kernel, cl::NDRange(n), cl::NDRange(3000000), "fill node");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("fill node"), std::string::npos) << bad.message();
  EXPECT_NE(bad.message().find("CL_INVALID"), std::string::npos) << bad.message();
}

TEST(OpenClRuntimeTest, ProgramBinariesAreCachedAndBadEntriesRebuilt) {
  CHIPFIT_REQUIRE_OPENCL();
  auto ctx = TestContext(Precision::kFp32);
  ASSERT_TRUE(ctx.ok());
  ocl::OpenClRuntime& rt = (*ctx)->runtime();
  const std::string saved = rt.cache_dir();
  const std::string dir = TempDir("cache");
  rt.SetCacheDir(dir);
  // A define no other test uses: a program of its own, so its cache file is this test's.
  const std::string defines = "-DCF_CACHE_TEST=" + std::to_string(::getpid());
  auto build = [&]() {
    rt.ClearMemoryCache();
    auto kernel = (*ctx)->CreateKernel("util", "cf_fill", defines);
    EXPECT_TRUE(kernel.ok()) << kernel.status().ToString();
    return rt.cache_stats();
  };
  const ocl::ProgramCacheStats s0 = rt.cache_stats();
  const ocl::ProgramCacheStats s1 = build();
  EXPECT_EQ(s1.built_from_source, s0.built_from_source + 1);
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  const auto size = std::filesystem::file_size(files[0]);

  const ocl::ProgramCacheStats s2 = build();
  EXPECT_EQ(s2.loaded_from_disk, s1.loaded_from_disk + 1);
  EXPECT_EQ(s2.built_from_source, s1.built_from_source);

  {  // flip a byte in the binary: the checksum catches it, the entry is rebuilt and rewritten
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.put('\x5a');
    f.seekp(static_cast<std::streamoff>(size / 2 + 1));
    f.put('\x3c');
  }
  const ocl::ProgramCacheStats s3 = build();
  EXPECT_EQ(s3.rebuilt_bad_cache, s2.rebuilt_bad_cache + 1);
  EXPECT_EQ(s3.built_from_source, s2.built_from_source + 1);
  const ocl::ProgramCacheStats s4 = build();
  EXPECT_EQ(s4.loaded_from_disk, s3.loaded_from_disk + 1);

  std::filesystem::resize_file(files[0], size / 3);  // truncated
  const ocl::ProgramCacheStats s5 = build();
  EXPECT_EQ(s5.rebuilt_bad_cache, s4.rebuilt_bad_cache + 1);
  EXPECT_EQ(std::filesystem::file_size(files[0]), size);
  rt.SetCacheDir(saved);
  std::filesystem::remove_all(dir);
}

TEST(OpenClRuntimeTest, CheckFitsNamesTheLimit) {
  CHIPFIT_REQUIRE_OPENCL();
  auto ctx = TestContext(Precision::kFp32);
  ASSERT_TRUE(ctx.ok());
  const ocl::DeviceLimits& l = (*ctx)->runtime().limits();
  EXPECT_TRUE((*ctx)->CheckFits({.arena_bytes = 1 << 20, .constant_bytes = 1 << 20}).ok());
  Status arena = (*ctx)->CheckFits({.arena_bytes = l.max_alloc_bytes + 1});
  EXPECT_NE(arena.message().find("CL_DEVICE_MAX_MEM_ALLOC_SIZE"), std::string::npos) << arena.message();
  Status total = (*ctx)->CheckFits(
      {.arena_bytes = l.max_alloc_bytes / 2, .constant_bytes = l.global_mem_bytes, .largest_constant = 1});
  EXPECT_NE(total.message().find("CL_DEVICE_GLOBAL_MEM_SIZE"), std::string::npos) << total.message();
}

}  // namespace
}  // namespace chipfit
