// The memory profiler and the ceilings: roofline classification, per-layer traffic on a compiled
// model, the heap high-water mark, the theoretical-peak inputs, and the ceilings cache.
#include <gtest/gtest.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
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
    // Among the notes, wherever it falls (a busy machine adds its own note after it).
    EXPECT_TRUE(std::any_of(result.notes.begin(), result.notes.end(), [](const std::string& n) {
      return n.find("high-water mark: unavailable") != std::string::npos;
    })) << ::testing::PrintToString(result.notes);
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

// A fake /proc/cpuinfo of `cores` logical CPUs, each with its own "cpu MHz".
std::string Cpuinfo(const std::string& vendor, int family, int model, const std::string& name,
                    const std::vector<double>& mhz) {
  std::string text;
  for (size_t i = 0; i < mhz.size(); ++i) {
    text += "processor\t: " + std::to_string(i) + "\nvendor_id\t: " + vendor +
            "\ncpu family\t: " + std::to_string(family) + "\nmodel\t\t: " + std::to_string(model) +
            "\nmodel name\t: " + name + "\nstepping\t: 1\ncpu MHz\t\t: " + std::to_string(mhz[i]) +
            "\nflags\t\t: fpu\n\n";
  }
  return text;
}

DeviceInfo CpuDevice(int cores, std::vector<std::string> features) {
  DeviceInfo cpu;
  cpu.kind = DeviceKind::kCpu;
  cpu.name = "test CPU";
  cpu.compute_units = cores;
  cpu.features = std::move(features);
  return cpu;
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

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

TEST(CeilingsTest, TheHighestCpuMhzOverAllCoresCounts) {
  const fs::path root = TempDir("clock_cores");
  WriteFile(root / "proc/cpuinfo", Cpuinfo("GenuineIntel", 6, 999, "Test CPU", {1200.0, 3412.5, 2000.0, 800.0}));
  std::string source;
  const auto ghz = CpuClockGhz(root, &source);
  ASSERT_TRUE(ghz.has_value());
  EXPECT_NEAR(*ghz, 3.4125, 1e-9);
  EXPECT_TRUE(Contains(source, "highest /proc/cpuinfo cpu MHz of 4 cores")) << source;
  EXPECT_TRUE(Contains(source, "likely the base clock")) << source;
  fs::remove_all(root);
}

TEST(CeilingsTest, CpufreqMaxWinsOverTheModelTableAndTheOsFigure) {
  const fs::path root = TempDir("clock_cpufreq");
  WriteFile(root / "proc/cpuinfo", Cpuinfo("AuthenticAMD", 25, 17, "AMD EPYC", {2596.0, 2596.0}));
  WriteFile(root / "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3100000\n");
  WriteFile(root / "sys/devices/system/cpu/cpu1/cpufreq/cpuinfo_max_freq", "3250000\n");
  WriteFile(root / "sys/devices/system/cpu/cpufreq/boost", "1\n");  // not a CPU: ignored
  std::string source;
  const auto ghz = CpuClockGhz(root, &source);
  ASSERT_TRUE(ghz.has_value());
  EXPECT_NEAR(*ghz, 3.25, 1e-9);  // the highest over the CPUs, below the table's 4.4: cpufreq is the machine's own
  EXPECT_EQ(source, "cpufreq cpuinfo_max_freq");
  std::vector<std::string> notes;
  const auto peak = TheoreticalPeakGflops(CpuDevice(2, {"avx2", "fma3", "avx512f"}), &notes, root);
  EXPECT_NEAR(peak.at(Precision::kFp32), 2 * 3.25 * 32, 1e-9);
  fs::remove_all(root);
}

// This machine's kind: a Zen 4 EPYC in a VM, "cpu MHz" its base clock, no cpufreq, no SKU named.
// A Zen 4 EPYC VM that names no SKU: the datapath comes from the table (AVX-512 on 256-bit units), the
// clock from the OS (the family's 4.4 GHz is only an upper bound, named beside it); a named SKU gets
// its own boost clock; with no OS figure at all the family's bound is used and said to be one.
TEST(CeilingsTest, Zen4EpycGetsItsDatapathFromTheTableAndTheClockFromTheOs) {
  const fs::path root = TempDir("zen4");
  WriteFile(root / "proc/cpuinfo", Cpuinfo("AuthenticAMD", 25, 17, "AMD EPYC", {2596.146, 2596.146}));
  const CpuIdentity id = ReadCpuIdentity(root);
  EXPECT_EQ(id.vendor_id, "AuthenticAMD");
  EXPECT_EQ(id.family, 25);
  EXPECT_EQ(id.model, 17);
  EXPECT_EQ(id.model_name, "AMD EPYC");
  EXPECT_EQ(id.processors, 2);
  const auto model = LookupCpuModel(id);
  ASSERT_TRUE(model.has_value());
  EXPECT_TRUE(Contains(model->microarch, "Zen 4")) << model->microarch;
  EXPECT_EQ(model->fma_pipes, 2);
  EXPECT_EQ(model->fma_bits, 256);
  ASSERT_TRUE(model->max_boost_ghz.has_value());
  EXPECT_DOUBLE_EQ(*model->max_boost_ghz, 4.4);
  EXPECT_TRUE(model->clock_upper_bound);

  std::string source;
  const auto ghz = CpuClockGhz(root, &source);
  ASSERT_TRUE(ghz.has_value());
  EXPECT_NEAR(*ghz, 2.596, 1e-3);
  EXPECT_TRUE(Contains(source, "highest /proc/cpuinfo cpu MHz of 2 cores")) << source;
  EXPECT_TRUE(Contains(source, "boost up to 4.4 GHz")) << source;
  EXPECT_TRUE(Contains(source, "the estimate may be low")) << source;

  std::vector<std::string> notes;
  const auto peak =
      TheoreticalPeakGflops(CpuDevice(2, {"avx2", "fma3", "avx512f", "avx512_bf16", "avx512_vnni"}), &notes, root);
  EXPECT_NEAR(peak.at(Precision::kFp32), 2 * 2.596 * 32, 0.1);   // AVX-512 on two 256-bit pipes
  EXPECT_NEAR(peak.at(Precision::kBf16), 2 * 2.596 * 64, 0.1);   // vdpbf16ps
  EXPECT_NEAR(peak.at(Precision::kInt8), 2 * 2.596 * 128, 0.1);  // VNNI
  std::string all;
  for (const std::string& n : notes) all += n + "\n";
  EXPECT_TRUE(Contains(all, "theoretical peak (an estimate): 2 cores × 2.60 GHz (highest /proc/cpuinfo")) << all;
  EXPECT_TRUE(Contains(all, "theoretical fp32 peak assumes 2 cores × 2.60 GHz × 32 FLOP/cycle")) << all;
  EXPECT_TRUE(Contains(all, "AVX-512 executed on 256-bit units")) << all;
  EXPECT_FALSE(Contains(all, "assumed:")) << all;  // the datapath is known, not assumed

  // A named SKU: its own boost clock, not the OS's base clock.
  WriteFile(root / "proc/cpuinfo", Cpuinfo("AuthenticAMD", 25, 17, "AMD EPYC 9654 96-Core Processor", {2400.0}));
  ASSERT_TRUE(CpuClockGhz(root, &source).has_value());
  EXPECT_DOUBLE_EQ(*CpuClockGhz(root, &source), 3.7);
  EXPECT_TRUE(Contains(source, "model table")) << source;
  // No OS figure at all: the family's bound, said to be one.
  WriteFile(root / "proc/cpuinfo",
            "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\n\n");
  ASSERT_TRUE(CpuClockGhz(root, &source).has_value());
  EXPECT_DOUBLE_EQ(*CpuClockGhz(root, &source), 4.4);
  EXPECT_TRUE(Contains(source, "upper bound")) << source;
  fs::remove_all(root);
}

TEST(CeilingsTest, SapphireRapidsGetsAmxAndItsSkuClock) {
  const fs::path root = TempDir("spr");
  WriteFile(root / "proc/cpuinfo",
            Cpuinfo("GenuineIntel", 6, 143, "Intel(R) Xeon(R) Platinum 8480+", {2000.0, 2000.0, 2000.0, 2000.0}));
  std::string source;
  const auto ghz = CpuClockGhz(root, &source);
  ASSERT_TRUE(ghz.has_value());
  EXPECT_DOUBLE_EQ(*ghz, 3.8);
  EXPECT_TRUE(Contains(source, "Platinum 8480+ max boost 3.8 GHz")) << source;
  EXPECT_FALSE(Contains(source, "upper bound")) << source;  // the SKU's own figure
  std::vector<std::string> notes;
  const auto peak = TheoreticalPeakGflops(
      CpuDevice(4, {"avx2", "fma3", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16", "amx_int8"}), &notes, root);
  EXPECT_DOUBLE_EQ(peak.at(Precision::kFp32), 4 * 3.8 * 64);  // two 512-bit FMA pipes
  EXPECT_DOUBLE_EQ(peak.at(Precision::kBf16), 4 * 3.8 * 1024);
  EXPECT_DOUBLE_EQ(peak.at(Precision::kInt8), 4 * 3.8 * 2048);
  std::string all;
  for (const std::string& n : notes) all += n + "\n";
  EXPECT_TRUE(Contains(all, "Sapphire Rapids: 2 FMA pipes of 512 bits")) << all;
  EXPECT_TRUE(Contains(all, "AMX: 1024 bf16 FLOP/cycle")) << all;
  // A SKU is a whole word: the 8380H (Cooper Lake, another turbo) is not the 8380.
  CpuIdentity cooper;
  cooper.vendor_id = "GenuineIntel";
  cooper.family = 6;
  cooper.model = 85;
  cooper.model_name = "Intel(R) Xeon(R) Platinum 8380H CPU @ 2.90GHz";
  const auto cooper_model = LookupCpuModel(cooper);
  ASSERT_TRUE(cooper_model.has_value());
  EXPECT_FALSE(cooper_model->max_boost_ghz.has_value());
  EXPECT_EQ(cooper_model->fma_bits, 512);
  cooper.model_name = "Intel(R) Xeon(R) Silver 4216 CPU @ 2.10GHz";
  EXPECT_EQ(LookupCpuModel(cooper)->fma_pipes, 1);  // one AVX-512 FMA unit
  fs::remove_all(root);
}

TEST(CeilingsTest, AnUnknownCpuFallsBackOnItsIsaAndSaysSo) {
  const fs::path root = TempDir("unknown");
  WriteFile(root / "proc/cpuinfo", Cpuinfo("GenuineIntel", 6, 999, "Future CPU", {3000.0, 3000.0}));
  const DeviceInfo avx2_cpu = CpuDevice(2, {"avx2", "fma3"});
  std::vector<std::string> notes;
  const auto avx2 = TheoreticalPeakGflops(avx2_cpu, &notes, root);
  ASSERT_TRUE(avx2.contains(Precision::kFp32));
  EXPECT_DOUBLE_EQ(avx2.at(Precision::kFp32), 2 * 3.0 * 32);  // 2 × 256-bit FMA
  EXPECT_FALSE(avx2.contains(Precision::kBf16));              // no bf16 instructions
  EXPECT_DOUBLE_EQ(avx2.at(Precision::kInt8), 2 * avx2.at(Precision::kFp32));
  ASSERT_FALSE(notes.empty());
  EXPECT_TRUE(Contains(notes.front(), "estimate")) << notes.front();
  EXPECT_TRUE(Contains(notes.front(), "datapath assumed")) << notes.front();
  EXPECT_TRUE(Contains(notes.front(), "Future CPU is not in chipfit's model table")) << notes.front();
  EXPECT_TRUE(Contains(notes.front(), "highest /proc/cpuinfo cpu MHz of 2 cores")) << notes.front();
  const auto avx512 =
      TheoreticalPeakGflops(CpuDevice(2, {"avx2", "fma3", "avx512f", "avx512_vnni", "avx512_bf16"}), nullptr, root);
  EXPECT_DOUBLE_EQ(avx512.at(Precision::kFp32), 2 * avx2.at(Precision::kFp32));  // assumed 512-bit pipes
  EXPECT_DOUBLE_EQ(avx512.at(Precision::kBf16), 2 * avx512.at(Precision::kFp32));
  EXPECT_DOUBLE_EQ(avx512.at(Precision::kInt8), 4 * avx512.at(Precision::kFp32));
  // No clock at all: no figure, and a note saying why.
  const fs::path empty = TempDir("unknown_empty");
  notes.clear();
  EXPECT_TRUE(TheoreticalPeakGflops(avx2_cpu, &notes, empty).empty());
  EXPECT_TRUE(Contains(notes.front(), "unknown")) << notes.front();
  DeviceInfo gpu;
  gpu.kind = DeviceKind::kOpenCL;
  gpu.name = "some GPU";
  notes.clear();
  EXPECT_TRUE(TheoreticalPeakGflops(gpu, &notes).empty());
  EXPECT_NE(notes.front().find("no FLOP-per-cycle figure"), std::string::npos);
  fs::remove_all(root);
  fs::remove_all(empty);
}

// The bug users saw: "measured = 149 %" of an estimate that took the VM's base clock.
TEST(CeilingsTest, AMeasuredPeakAboveTheEstimateSaysTheEstimateIsTooLow) {
  const std::string assumption = "2 cores × 2.60 GHz (highest /proc/cpuinfo cpu MHz of 2 cores) × 32 FLOP/cycle";
  const std::string too_low = PeakShareText(247.6, 166.15, assumption);
  EXPECT_TRUE(Contains(too_low, "theoretical estimate too low")) << too_low;
  // The figures it assumed, their sources left to the notes.
  EXPECT_TRUE(Contains(too_low, "it assumes 2 cores × 2.60 GHz × 32 FLOP/cycle, and the clock may be below"))
      << too_low;
  EXPECT_FALSE(Contains(too_low, "%")) << too_low;
  EXPECT_FALSE(Contains(too_low, "149")) << too_low;
  EXPECT_EQ(PeakShareText(144.5, 166.15, assumption), "theoretical 166 (estimate), measured = 87 % of theoretical");
  // Up to 105 %: at the estimate, never above 100 %.
  EXPECT_EQ(PeakShareText(172.0, 166.15, assumption), "theoretical 166 (estimate), measured = 100 % of theoretical");
  EXPECT_EQ(PeakShareText(100.0, std::nullopt, assumption), "theoretical: no figure");

  // From a report: each precision's own assumption, as TheoreticalPeakGflops wrote it.
  const fs::path root = TempDir("share");
  WriteFile(root / "proc/cpuinfo", Cpuinfo("GenuineIntel", 6, 999, "Future CPU", {2600.0, 2600.0}));
  CeilingReport report;
  report.theoretical_gflops = TheoreticalPeakGflops(CpuDevice(2, {"avx2", "fma3"}), &report.notes, root);
  report.measured.peak_gflops[Precision::kFp32] = 1.49 * report.theoretical_gflops.at(Precision::kFp32);
  const std::string text = PeakShareText(report, Precision::kFp32, report.measured.peak_gflops[Precision::kFp32]);
  EXPECT_TRUE(Contains(text, "theoretical estimate too low (166 GFLOP/s): it assumes 2 cores × 2.60 GHz")) << text;
  EXPECT_TRUE(Contains(text, "× 32 FLOP/cycle")) << text;
  EXPECT_FALSE(Contains(text, "149")) << text;
  // A cache written before per-precision notes: the general note is the assumption.
  CeilingReport old;
  old.theoretical_gflops[Precision::kFp32] = 166.15;
  old.notes = {"theoretical peak (an estimate): 2 cores × 2.60 GHz (/proc/cpuinfo) × 32 fp32 FLOP/cycle"};
  EXPECT_TRUE(Contains(PeakShareText(old, Precision::kFp32, 247.6), "it assumes 2 cores × 2.60 GHz × 32 fp32"));
  fs::remove_all(root);
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
  other.other_cpu_share = 0.35;  // measured while other processes took a third of the CPUs
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
  EXPECT_FALSE(back.other_cpu_share.has_value());  // not recorded (a cache written before it was)
  EXPECT_FALSE(back.MeasuredWhileBusy());
  const CeilingReport& busy = loaded->at(other.device_key);
  ASSERT_TRUE(busy.other_cpu_share.has_value());
  EXPECT_DOUBLE_EQ(*busy.other_cpu_share, 0.35);
  EXPECT_TRUE(busy.MeasuredWhileBusy());
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

// A CPU's ceilings are kept per thread count: 2-thread figures are never applied to a 1-thread run, and
// an entry cached before the thread count was recorded (a key without it) is not found, so it is
// measured again. Other devices' ceilings do not depend on the CPU's threads.
TEST(CeilingsTest, CpuCeilingsAreCachedPerThreadCount) {
  const DeviceInfo cpu = CpuDevice(2, {"avx2"});
  EXPECT_NE(CeilingKey(cpu, 1), CeilingKey(cpu, 2));
  EXPECT_TRUE(Contains(CeilingKey(cpu, 2), "|2 threads")) << CeilingKey(cpu, 2);
  DeviceInfo gpu;
  gpu.kind = DeviceKind::kOpenCL;
  gpu.name = "some GPU";
  EXPECT_EQ(CeilingKey(gpu, 1), CeilingKey(gpu, 2));

  const fs::path dir = TempDir("ceilings_threads");
  const fs::path path = dir / "ceilings.json";
  CeilingReport two;
  two.device_id = "cpu";
  two.threads = 2;
  two.device_key = CeilingKey(cpu, 2);
  two.measured_at = "2026-11-23T19:00:00Z";
  two.measured.memory_bandwidth_gbps = 31.2;
  CeilingReport old = two;  // written by a chipfit that did not record threads
  old.threads = 0;
  old.device_key = "cpu|test CPU|||2 units";
  ASSERT_TRUE(SaveCeilingReport(path, two).ok());
  ASSERT_TRUE(SaveCeilingReport(path, old).ok());
  auto loaded = LoadCeilingCache(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_TRUE(loaded->contains(CeilingKey(cpu, 2)));
  EXPECT_EQ(loaded->at(CeilingKey(cpu, 2)).threads, 2);
  EXPECT_FALSE(loaded->contains(CeilingKey(cpu, 1)));  // a 1-thread run measures its own
  EXPECT_EQ(loaded->at(old.device_key).threads, 0);
  EXPECT_FALSE(CeilingReportToJson(old).contains("threads"));  // an old entry reads and writes back unchanged

  // Measuring records the threads it ran with and keys the report by them (no precisions: bandwidth only).
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  CeilingOptions small;
  small.triad_bytes_per_array = int64_t{1} << 20;
  small.min_time_s = 0;
  auto measured = MeasureCeilings(cpu, nullptr, small);
  omp_set_num_threads(before);
  ASSERT_TRUE(measured.ok()) << measured.status().ToString();
  EXPECT_EQ(measured->threads, 1);
  EXPECT_EQ(measured->device_key, CeilingKey(cpu, 1));
  auto back = CeilingReportFromJson(CeilingReportToJson(*measured));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->threads, 1);
  fs::remove_all(dir);
}

// An entry measured while busy is replaced by the next measurement of the same device (measured idle);
// until then, every target that uses it gets a note saying the roofline bounds are low.
TEST(CeilingsTest, BusyCeilingsAreReplacedAndSaySo) {
  const fs::path dir = TempDir("ceilings_busy");
  const fs::path path = dir / "ceilings.json";
  CeilingReport busy;
  busy.device_id = "cpu";
  busy.device_key = CeilingKey(CpuDevice(2, {}), 2);
  busy.threads = 2;
  busy.measured_at = "2026-11-23T19:00:00Z";
  busy.measured.memory_bandwidth_gbps = 12.0;
  busy.other_cpu_share = 0.35;
  EXPECT_EQ(BusyCeilingsNote(busy),
            "ceilings measured while the machine was busy (35 % of the CPUs used by others): roofline bounds are low");
  ASSERT_TRUE(SaveCeilingReport(path, busy).ok());
  CeilingReport idle = busy;
  idle.measured_at = "2026-11-23T20:00:00Z";
  idle.measured.memory_bandwidth_gbps = 31.2;
  idle.other_cpu_share = 0.01;
  EXPECT_EQ(BusyCeilingsNote(idle), "");
  CeilingReport unknown = idle;  // /proc/stat not readable: nothing to say
  unknown.other_cpu_share.reset();
  EXPECT_EQ(BusyCeilingsNote(unknown), "");
  ASSERT_TRUE(SaveCeilingReport(path, idle).ok());
  auto loaded = LoadCeilingCache(path);
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->size(), 1u);
  const CeilingReport& now = loaded->at(busy.device_key);
  EXPECT_FALSE(now.MeasuredWhileBusy());
  EXPECT_EQ(now.measured.memory_bandwidth_gbps, 31.2);
  EXPECT_EQ(now.measured_at, idle.measured_at);
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
