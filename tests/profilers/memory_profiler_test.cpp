// The memory profiler and the ceilings: roofline classification, per-layer traffic on a compiled
// model, the heap high-water mark, the theoretical-peak inputs, and the ceilings cache.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/graph/onnx_import.h"
#include "devices/target_compiler.h"
#include "profilers/memory/ceilings.h"
#include "profilers/memory/memory_profiler.h"
#include "tests/core/onnx_builder.h"

namespace chipfit {
namespace {

namespace fs = std::filesystem;

fs::path TempDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("chipfit_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(RooflineTest, IntensityBelowTheRidgeIsMemoryBoundAboveIsComputeBound) {
  // Ridge point = 100 GFLOP/s / 10 GB/s = 10 FLOP/byte.
  double attainable = -1;
  EXPECT_EQ(RooflineBound(1000, 1000, 100, 10, &attainable), "memory");    // 1 FLOP/byte
  EXPECT_DOUBLE_EQ(attainable, 10);                                        // 1 × 10 GB/s
  EXPECT_EQ(RooflineBound(50000, 1000, 100, 10, &attainable), "compute");  // 50 FLOP/byte
  EXPECT_DOUBLE_EQ(attainable, 100);
  EXPECT_EQ(RooflineBound(10000, 1000, 100, 10, &attainable), "compute");  // on the ridge
  // Pure data movement is memory-bound whenever a bandwidth is known; nothing without ceilings.
  EXPECT_EQ(RooflineBound(0, 4096, 100, 10, &attainable), "memory");
  EXPECT_EQ(RooflineBound(0, 4096, 0, 0, &attainable), "");
  EXPECT_EQ(RooflineBound(1000, 1000, 0, 10, &attainable), "");
  EXPECT_EQ(attainable, 0);
  EXPECT_EQ(RooflineBound(0, 0, 100, 10, nullptr), "");
}

// x[256,1024] → Relu → MatMul with a constant 1024x256 weight → y: one memory-bound layer and one
// compute-bound one against ceilings of 100 GFLOP/s and 10 GB/s.
TEST(MemoryProfilerTest, LayersGetTrafficAndTheirBoundOnTheDeviceRoofline) {
  onnx::ModelProto m = testing::NewModel("roofline");
  auto* g = m.mutable_graph();
  testing::AddValue(g->mutable_input(), "x", {256, 1024});
  testing::AddValue(g->mutable_output(), "y", {256, 256});
  testing::AddInitializer(g, "w", {1024, 256}, [](int64_t i) { return static_cast<float>(i % 7) * 0.01f; });
  testing::AddNode(g, "Relu", {"x"}, {"a"}, "relu");
  testing::AddNode(g, "MatMul", {"a", "w"}, {"y"}, "matmul");
  auto graph = ImportModel(*CheckOnnxModel(m, "roofline"));
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const std::optional<int64_t> baseline = HeapInUseBytes();
  auto model = CompileForTarget(*graph, *ParseTarget("cpu:fp32"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();

  ProfileSettings settings{.warmup = 1, .warmup_min_s = 0, .iterations = 3, .min_time_s = 0, .layer_runs = 3};
  settings.ceilings["cpu"] = DeviceCeilings{.peak_gflops = {{Precision::kFp32, 100.0}}, .memory_bandwidth_gbps = 10};
  settings.heap_baseline_bytes = baseline;
  TargetResult result;
  result.target = *ParseTarget("cpu:fp32");
  ASSERT_TRUE(RunProfilePipeline(**model, {{"x", Tensor(DType::kF32, {256, 1024})}}, settings, {}, result).ok());
  ASSERT_EQ(result.layers.size(), 2u);
  const LayerResult& relu = result.layers[0];
  const LayerResult& matmul = result.layers[1];
  // Relu: one op per element; reads and writes 256·1024 floats = 1 MiB each.
  EXPECT_EQ(relu.flops, 256 * 1024);
  EXPECT_EQ(relu.bytes_read, 1 << 20);
  EXPECT_EQ(relu.bytes_written, 1 << 20);
  EXPECT_DOUBLE_EQ(relu.arithmetic_intensity, 0.125);
  EXPECT_EQ(relu.bound, "memory");
  EXPECT_DOUBLE_EQ(relu.attainable_gflops_per_s, 1.25);
  // MatMul: 2·256·256·1024 FLOPs over 1 MiB + 1 MiB of weights read and 256 KiB written ≈ 57 FLOP/byte.
  EXPECT_EQ(matmul.flops, int64_t{2} * 256 * 256 * 1024);
  EXPECT_EQ(matmul.bytes_read, (1 << 20) + (1 << 20));
  EXPECT_EQ(matmul.bytes_written, 256 * 1024);
  EXPECT_EQ(matmul.bound, "compute");
  EXPECT_DOUBLE_EQ(matmul.attainable_gflops_per_s, 100);
  for (const LayerResult& l : result.layers) {
    EXPECT_NEAR(l.gflops_per_s, static_cast<double>(l.flops) / (l.time_p50_ms * 1e6), 1e-9);
    EXPECT_NEAR(l.gb_per_s, static_cast<double>(l.bytes_read + l.bytes_written) / (l.time_p50_ms * 1e6), 1e-9);
  }
  ASSERT_TRUE(result.ceilings.has_value());
  EXPECT_EQ(result.ceilings->memory_bandwidth_gbps, 10);
  // Planned: the 1 MiB intermediate lives in the arena, the 1 MiB weight among the constants.
  EXPECT_GE(result.peak_memory_bytes, size_t{2} << 20);
  if (!baseline) {
    EXPECT_FALSE(result.measured_peak_memory_bytes.has_value());
    EXPECT_NE(result.notes.back().find("high-water mark: unavailable"), std::string::npos);
    GTEST_SKIP() << "this allocator (a sanitizer's?) does not report heap use: high-water mark not checked";
  }
  // The heap held at least the planned arena and constants at its highest point.
  ASSERT_TRUE(result.measured_peak_memory_bytes.has_value());
  EXPECT_GE(*result.measured_peak_memory_bytes, static_cast<int64_t>((**model).stats().planned_arena_bytes));
}

// Bytes at the executed dtype: an int8 MatMul reads its f32 activations and its packed s8 weights.
TEST(MemoryProfilerTest, Int8WeightsCountOneBytePerElement) {
  onnx::ModelProto m = testing::NewModel("int8");
  auto* g = m.mutable_graph();
  testing::AddValue(g->mutable_input(), "x", {256, 1024});
  testing::AddValue(g->mutable_output(), "y", {256, 256});
  testing::AddInitializer(g, "w", {1024, 256}, [](int64_t i) { return static_cast<float>(i % 7) * 0.01f - 0.03f; });
  testing::AddNode(g, "MatMul", {"x", "w"}, {"y"}, "matmul");
  auto graph = ImportModel(*CheckOnnxModel(m, "int8"));
  ASSERT_TRUE(graph.ok());
  auto model = CompileForTarget(*graph, *ParseTarget("cpu:int8"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const auto& kernels = (**model).kernels();
  const auto& costs = (**model).costs();
  bool found = false;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (kernels[i].name != "matmul") continue;
    found = true;
    ASSERT_EQ(kernels[i].precision, "int8") << kernels[i].precision_reason;
    EXPECT_EQ(costs[i].bytes_read, (1 << 20) + 1024 * 256);  // f32 A + s8 B
    EXPECT_EQ(costs[i].bytes_written, 256 * 256 * 4);
  }
  EXPECT_TRUE(found);
}

TEST(MemoryProfilerTest, LayersWithoutCeilingsHaveNoBound) {
  onnx::ModelProto m = testing::NewModel("plain");
  auto* g = m.mutable_graph();
  testing::AddValue(g->mutable_input(), "x", {64});
  testing::AddValue(g->mutable_output(), "y", {64});
  testing::AddNode(g, "Relu", {"x"}, {"y"}, "relu");
  auto graph = ImportModel(*CheckOnnxModel(m, "plain"));
  ASSERT_TRUE(graph.ok());
  auto model = CompileForTarget(*graph, *ParseTarget("cpu:fp32"));
  ASSERT_TRUE(model.ok());
  TargetResult result;
  result.target = *ParseTarget("cpu:fp32");
  const ProfileSettings settings{.warmup = 1, .warmup_min_s = 0, .iterations = 2, .min_time_s = 0, .layer_runs = 2};
  ASSERT_TRUE(RunProfilePipeline(**model, {{"x", Tensor(DType::kF32, {64})}}, settings, {}, result).ok());
  ASSERT_EQ(result.layers.size(), 1u);
  EXPECT_EQ(result.layers[0].flops, 64);
  EXPECT_EQ(result.layers[0].bound, "");
  EXPECT_FALSE(result.ceilings.has_value());
}

TEST(CeilingsTest, CpuClockFromCpufreqElseProcCpuinfoElseNone) {
  const fs::path root = TempDir("clock");
  std::string source;
  EXPECT_FALSE(CpuClockGhz(root, &source).has_value());
  WriteFile(root / "proc/cpuinfo", "processor\t: 0\nmodel name\t: Test CPU\ncpu MHz\t\t: 2595.124\n");
  auto ghz = CpuClockGhz(root, &source);
  ASSERT_TRUE(ghz.has_value());
  EXPECT_NEAR(*ghz, 2.595124, 1e-9);
  EXPECT_NE(source.find("cpu MHz"), std::string::npos);
  WriteFile(root / "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3700000\n");
  ghz = CpuClockGhz(root, &source);
  ASSERT_TRUE(ghz.has_value());
  EXPECT_NEAR(*ghz, 3.7, 1e-9);
  EXPECT_EQ(source, "cpufreq cpuinfo_max_freq");
  fs::remove_all(root);
}

TEST(CeilingsTest, TheoreticalPeakScalesWithTheIsa) {
  DeviceInfo cpu;
  cpu.kind = DeviceKind::kCpu;
  cpu.compute_units = 2;
  cpu.vendor = "Intel";
  cpu.features = {"avx2", "fma3"};
  std::vector<std::string> notes;
  const auto avx2 = TheoreticalPeakGflops(cpu, &notes);
  if (!CpuClockGhz("/", nullptr)) GTEST_SKIP() << "no CPU clock readable on this machine";
  ASSERT_TRUE(avx2.contains(Precision::kFp32));
  EXPECT_FALSE(avx2.contains(Precision::kBf16));  // no bf16 instructions
  EXPECT_DOUBLE_EQ(avx2.at(Precision::kInt8), 2 * avx2.at(Precision::kFp32));
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes.back().find("estimate"), std::string::npos);
  cpu.features = {"avx2", "fma3", "avx512f", "avx512_vnni", "avx512_bf16"};
  const auto avx512 = TheoreticalPeakGflops(cpu, nullptr);
  EXPECT_DOUBLE_EQ(avx512.at(Precision::kFp32), 2 * avx2.at(Precision::kFp32));  // 512-bit pipes (Intel)
  EXPECT_DOUBLE_EQ(avx512.at(Precision::kBf16), 2 * avx512.at(Precision::kFp32));
  EXPECT_DOUBLE_EQ(avx512.at(Precision::kInt8), 4 * avx512.at(Precision::kFp32));
  DeviceInfo gpu;
  gpu.kind = DeviceKind::kOpenCL;
  gpu.name = "some GPU";
  notes.clear();
  EXPECT_TRUE(TheoreticalPeakGflops(gpu, &notes).empty());
  EXPECT_NE(notes.front().find("no FLOP-per-cycle figure"), std::string::npos);
}

TEST(CeilingsTest, CacheRoundTripsAndRefusesAForeignFile) {
  const fs::path dir = TempDir("ceilings");
  const fs::path path = dir / "chipfit" / "ceilings.json";
  auto empty = LoadCeilingCache(path);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  CeilingReport r;
  r.device_id = "cpu";
  r.device_key = "cpu|Test CPU||oneDNN 2.6.0";
  r.measured_at = "2026-11-23T19:00:00Z";
  r.measured = DeviceCeilings{.peak_gflops = {{Precision::kFp32, 148.5}, {Precision::kInt8, 854}},
                              .memory_bandwidth_gbps = 31.2};
  r.theoretical_gflops = {{Precision::kFp32, 166.4}};
  r.methods = {"memory bandwidth: STREAM triad"};
  r.notes = {"theoretical memory bandwidth: unknown"};
  ASSERT_TRUE(SaveCeilingReport(path, r).ok());
  CeilingReport other = r;
  other.device_id = "opencl:0";
  other.device_key = "opencl:0|pthread|6.0|OpenCL 3.0";
  other.theoretical_gflops.clear();
  ASSERT_TRUE(SaveCeilingReport(path, other).ok());
  auto loaded = LoadCeilingCache(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->size(), 2u);
  const CeilingReport& back = loaded->at(r.device_key);
  EXPECT_EQ(back.measured.peak_gflops, r.measured.peak_gflops);
  EXPECT_EQ(back.measured.memory_bandwidth_gbps, 31.2);
  EXPECT_EQ(back.theoretical_gflops, r.theoretical_gflops);
  EXPECT_FALSE(back.theoretical_bandwidth_gbps.has_value());
  EXPECT_EQ(back.methods, r.methods);
  EXPECT_EQ(back.measured_at, r.measured_at);
  // Not a ceilings cache: an error naming the file, which is left as it was.
  WriteFile(path, "{\"something\": \"else\"}\n");
  auto foreign = LoadCeilingCache(path);
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.status().message().find(path.string()), std::string::npos);
  EXPECT_FALSE(SaveCeilingReport(path, r).ok());
  std::ifstream in(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "{\"something\": \"else\"}\n");
  fs::remove_all(dir);
}

TEST(CeilingsTest, MicroBenchmarksMeasureSomethingPlausible) {
  // Small sizes: this checks the bookkeeping (bytes and FLOPs per second), not the machine.
  const double triad = MeasureStreamTriadGbps(int64_t{8} << 20, 3);
  EXPECT_GT(triad, 0.1);
  EXPECT_LT(triad, 10000);
  const GraphCompiler compile = [](const Graph& g, const Target& t) { return CompileForTarget(g, t); };
  CeilingOptions options;
  options.min_time_s = 0;
  options.min_runs = 2;
  auto gflops = MeasureGemmGflops(compile, *ParseTarget("cpu:fp32"), 256, options);
  ASSERT_TRUE(gflops.ok()) << gflops.status().ToString();
  EXPECT_GT(gflops->rate, 0.1);
  EXPECT_LT(gflops->rate, 100000);
  EXPECT_EQ(gflops->precision, "fp32");
  EXPECT_FALSE(gflops->implementation.empty());
  const GraphCompiler refuse = [](const Graph&, const Target&) -> Result<std::unique_ptr<CompiledModel>> {
    return Unsupported("no such device here");
  };
  auto refused = MeasureGemmGflops(refuse, *ParseTarget("cpu:fp32"), 64, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("no such device"), std::string::npos);
}

}  // namespace
}  // namespace chipfit
