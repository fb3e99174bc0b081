// The projection model (profilers/projection/projection.h) on hand-made devices and layers: op classes,
// unsupported targets, calibration recovering a known efficiency, wave and tile quantisation, bands,
// energy, cost, Kendall's τ and the JSON fields.
#include "profilers/projection/projection.h"

#include <cmath>

#include <gtest/gtest.h>

namespace chipfit {
namespace {

HardwareSpec Cpu(double peak = 100, double bandwidth = 10, int cores = 2) {
  HardwareSpec s;
  s.id = "test-cpu";
  s.name = "Test CPU";
  s.kind = "cpu";
  s.launch_overhead = "cpu";
  s.compute_units = cores;
  s.clock_ghz = 2;
  s.peak_gflops = {{Precision::kFp32, peak}, {Precision::kInt8, 4 * peak}};
  s.memory_bandwidth_gbs = bandwidth;
  s.memory_gb = 8;
  s.tdp_w = 100;
  s.idle_w = 20;
  return s;
}

HardwareSpec Gpu(int sms = 100) {
  HardwareSpec s = Cpu(10000, 1000, sms);
  s.id = "test-gpu";
  s.name = "Test GPU";
  s.kind = "gpu";
  s.launch_overhead = "gpu";
  s.peak_gflops[Precision::kFp16] = 40000;
  s.matrix_tile = std::array<int, 3>{16, 8, 16};
  s.price_per_hour_usd = 3.6;
  return s;
}

LayerResult MatMulLayer(const std::string& name, int64_t m, int64_t n, int64_t k, double ms) {
  LayerResult l;
  l.name = name;
  l.op = "MatMul";
  l.precision = "fp32";
  l.flops = 2 * m * n * k;
  l.bytes_read = 4 * (m * k + k * n);
  l.bytes_written = 4 * m * n;
  l.output_shape = {m, n};
  l.time_p50_ms = ms;
  return l;
}

LayerResult AddLayer(const std::string& name, int64_t elements, double ms) {
  LayerResult l;
  l.name = name;
  l.op = "Add";
  l.precision = "fp32";
  l.flops = elements;
  l.bytes_read = 8 * elements;
  l.bytes_written = 4 * elements;
  l.output_shape = {elements};
  l.time_p50_ms = ms;
  return l;
}

TargetResult Measured(std::vector<LayerResult> layers, Precision precision = Precision::kFp32) {
  TargetResult t;
  t.target = Target{DeviceKind::kCpu, 0, precision};
  t.status = "ok";
  double sum = 0;
  for (const auto& l : layers) sum += l.time_p50_ms;
  t.latency.p50 = sum;
  t.layers = std::move(layers);
  return t;
}

TEST(ProjectionTest, ClassifiesOps) {
  EXPECT_EQ(ClassifyOp("MatMul", 512), OpClass::kMatrix);
  EXPECT_EQ(ClassifyOp("FusedConv", 288), OpClass::kMatrix);
  EXPECT_EQ(ClassifyOp("Conv+Relu", 9), OpClass::kDepthwise);  // 3×3 depthwise: 9 products per output
  EXPECT_EQ(ClassifyOp("MatMul", 9), OpClass::kMatrix);        // only convolutions are depthwise
  EXPECT_EQ(ClassifyOp("Softmax", 0), OpClass::kReduce);
  EXPECT_EQ(ClassifyOp("ReduceMean", 0), OpClass::kReduce);
  EXPECT_EQ(ClassifyOp("Transpose", 0), OpClass::kData);
  EXPECT_EQ(ClassifyOp("Sigmoid", 0), OpClass::kElementwise);
}

TEST(ProjectionTest, FeaturesReadMatrixShapeFromTheOutput) {
  const auto features = FeaturesOf(Measured({MatMulLayer("mm", 64, 32, 128, 1)}));
  ASSERT_EQ(features.size(), 1u);
  EXPECT_DOUBLE_EQ(features[0].m, 64);
  EXPECT_DOUBLE_EQ(features[0].n, 32);
  EXPECT_DOUBLE_EQ(features[0].k, 128);
  EXPECT_EQ(features[0].op_class, OpClass::kMatrix);
}

TEST(ProjectionTest, UnsupportedPrecisionAndMemorySayWhy) {
  const auto features = FeaturesOf(Measured({MatMulLayer("mm", 64, 64, 64, 1)}));
  const Projection bf16 = Project(features, Cpu(), Precision::kBf16, {});
  EXPECT_EQ(bf16.status, "unsupported");
  EXPECT_NE(bf16.reason.find("Test CPU has no bf16"), std::string::npos) << bf16.reason;
  const Projection big = Project(features, Cpu(), Precision::kFp32, {}, {.model_bytes = 20e9});
  EXPECT_EQ(big.status, "unsupported");
  EXPECT_NE(big.reason.find("needs 20.00 GB"), std::string::npos) << big.reason;
  EXPECT_NE(big.reason.find("8.0 GB"), std::string::npos) << big.reason;
}

// Layers measured twice as slow as the prior model says: calibration finds scale 0.5 and the
// projection onto the same device gives back the measured time.
TEST(ProjectionTest, CalibrationRecoversAMeasuredDevice) {
  const HardwareSpec cpu = Cpu();
  std::vector<LayerResult> layers;
  for (int i = 0; i < 6; ++i) layers.push_back(MatMulLayer("mm" + std::to_string(i), 512, 512, 512, 1));
  for (int i = 0; i < 6; ++i) layers.push_back(AddLayer("add" + std::to_string(i), 1 << 20, 1));
  // First pass with arbitrary times, to read the model's own prior times back.
  TargetResult probe = Measured(layers);
  const Projection prior = Project(FeaturesOf(probe), cpu, Precision::kFp32, {});
  ASSERT_EQ(prior.status, "ok");
  for (size_t i = 0; i < layers.size(); ++i) layers[i].time_p50_ms = 2 * prior.layers[i].time_ms;
  const TargetResult measured = Measured(layers);
  const Calibration cal = Calibrate({{cpu, &measured, "cpu", "cpu:fp32"}});
  const Projection p = Project(FeaturesOf(measured), cpu, Precision::kFp32, cal);
  EXPECT_NEAR(p.p50_ms / measured.latency.p50, 1.0, 0.05);
  EXPECT_LE(p.p10_ms, p.p50_ms);
  EXPECT_GE(p.p90_ms, p.p50_ms);
}

TEST(ProjectionTest, FasterDeviceProjectsFaster) {
  const TargetResult measured = Measured({MatMulLayer("mm", 2048, 2048, 2048, 200)});
  const auto features = FeaturesOf(measured);
  const Projection slow = Project(features, Cpu(100, 10), Precision::kFp32, {});
  const Projection fast = Project(features, Cpu(200, 20), Precision::kFp32, {});
  EXPECT_NEAR(slow.p50_ms / fast.p50_ms, 2.0, 0.05);
}

TEST(ProjectionTest, WaveQuantisationOnAGpu) {
  // 101 output tiles of 64×64 on 100 SMs take two waves, as 200 tiles do.
  const auto one = FeaturesOf(Measured({MatMulLayer("a", 101 * 64, 64, 4096, 1)}));
  const auto two = FeaturesOf(Measured({MatMulLayer("b", 200 * 64, 64, 4096, 1)}));
  const Projection p101 = Project(one, Gpu(100), Precision::kFp32, {});
  const Projection p200 = Project(two, Gpu(100), Precision::kFp32, {});
  EXPECT_NEAR(p101.layers[0].compute_ms / p200.layers[0].compute_ms, 1.0, 0.01);
}

TEST(ProjectionTest, MatrixTilePaddingCostsOddChannels) {
  // fp16 on an 8-wide tile: 20 output channels cost 24.
  const auto c20 = FeaturesOf(Measured({MatMulLayer("a", 128 * 100, 20, 4096, 1)}));
  const auto c24 = FeaturesOf(Measured({MatMulLayer("b", 128 * 100, 24, 4096, 1)}));
  const Projection p20 = Project(c20, Gpu(100), Precision::kFp16, {});
  const Projection p24 = Project(c24, Gpu(100), Precision::kFp16, {});
  EXPECT_NEAR(p20.layers[0].compute_ms / p24.layers[0].compute_ms, 1.0, 0.01);
}

TEST(ProjectionTest, BandFactorsAreQuantilesAndContainOne) {
  const auto [lo0, hi0] = BandFactors({}, 0.05);
  EXPECT_NEAR(lo0, 1 / 1.5, 1e-9);
  EXPECT_NEAR(hi0, 1.5, 1e-9);
  const auto [lo, hi] = BandFactors({0.2, 0.3, 0.4, 0.5}, 0.05);
  EXPECT_LE(lo, 1.0);  // every error above 0: the band still holds the projection itself
  EXPECT_GT(hi, std::exp(0.4));
}

TEST(ProjectionTest, EnergyAndCostFollowTheirFormulas) {
  const auto features = FeaturesOf(Measured({MatMulLayer("mm", 1024, 1024, 1024, 1)}));
  const HardwareSpec gpu = Gpu();
  const Projection p = Project(features, gpu, Precision::kFp16, {});
  ASSERT_EQ(p.status, "ok");
  const double seconds = p.p50_ms / 1000;
  EXPECT_GE(p.energy_j, gpu.idle_w * seconds * 0.999);
  EXPECT_LE(p.energy_j, gpu.tdp_w * seconds * 1.001);
  ASSERT_TRUE(p.cost_per_million.has_value());
  EXPECT_NEAR(*p.cost_per_million, 3.6 * seconds / 3600 * 1e6, 1e-9);
  // Concurrent requests keep every unit busy: at least one request at a time's rate.
  EXPECT_GE(p.throughput_per_s, 1000 / p.p50_ms * (1 - 1e-12));
}

TEST(ProjectionTest, KendallTau) {
  EXPECT_NEAR(*KendallTau({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0, 1e-12);
  EXPECT_NEAR(*KendallTau({1, 2, 3, 4}, {40, 30, 20, 10}), -1.0, 1e-12);
  EXPECT_FALSE(KendallTau({1}, {1}).has_value());
}

TEST(ProjectionTest, JsonLabelsProjectedAndEstimated) {
  const auto features = FeaturesOf(Measured({MatMulLayer("mm", 256, 256, 256, 1)}));
  const auto ok = ProjectionToJson(Project(features, Gpu(), Precision::kFp16, {}));
  EXPECT_EQ(ok["target"], "test-gpu:fp16");
  EXPECT_EQ(ok["status"], "ok");
  EXPECT_EQ(ok["projected"], true);
  EXPECT_EQ(ok["energy_j"]["source"], "estimated");
  EXPECT_TRUE(ok["p10_ms"].is_number() && ok["p90_ms"].is_number());
  EXPECT_EQ(ok["layers"].size(), 1u);
  const auto no = ProjectionToJson(Project(features, Gpu(), Precision::kBf16, {}));
  EXPECT_EQ(no["status"], "unsupported");
  EXPECT_TRUE(no["p50_ms"].is_null());
  EXPECT_TRUE(no["reason"].is_string());
}

TEST(ProjectionTest, LocalSpecNeedsABandwidth) {
  DeviceInfo cpu;
  cpu.kind = DeviceKind::kCpu;
  cpu.name = "Some CPU";
  cpu.compute_units = 2;
  cpu.precisions = {{Precision::kFp32, Support::Yes("")}};
  CeilingReport report;
  report.device_id = "cpu";
  report.measured.peak_gflops[Precision::kFp32] = 150;
  EXPECT_FALSE(LocalHardwareSpec(cpu, &report).has_value());
  report.measured.memory_bandwidth_gbps = 30;
  const auto spec = LocalHardwareSpec(cpu, &report);
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->kind, "cpu");
  EXPECT_DOUBLE_EQ(spec->memory_bandwidth_gbs, 30);
  EXPECT_TRUE(spec->Supports(Precision::kFp32));
}

// A mix of layers a model has: large and small products, a depthwise convolution, elementwise and data.
std::vector<LayerFeature> MixedFeatures() {
  std::vector<LayerResult> layers = {MatMulLayer("big", 4096, 1024, 1024, 1), MatMulLayer("small", 128, 768, 768, 1),
                                     MatMulLayer("thin", 49, 2048, 512, 1), AddLayer("add", 1 << 18, 1),
                                     AddLayer("tiny", 256, 1)};
  LayerResult dw;
  dw.name = "dw";
  dw.op = "Conv";
  dw.flops = 2 * 112 * 112 * 32 * 9;
  dw.bytes_read = 4 * 112 * 112 * 32;
  dw.bytes_written = dw.bytes_read;
  dw.output_shape = {1, 32, 112, 112};
  layers.push_back(dw);
  return FeaturesOf(Measured(layers));
}

// Learned factors that would make the 16-bit and int8 matrix paths look worse than fp32: the
// ordering must hold anyway, since a runtime asked for them may still pick fp32 kernels.
Calibration WithLearned(double half, double int8) {
  Calibration cal;
  PublishedEfficiency e;
  KindEfficiency gpu;
  gpu.matrix = {{"fp32", 1.0}, {"half", half}, {"int8", int8}};
  gpu.runtime = "TensorRT";
  e.kinds["gpu"] = gpu;
  e.kinds["cpu"] = gpu;
  cal.published = e;
  return cal;
}

TEST(ProjectionOrderingTest, AHigherPeakPrecisionIsNeverSlower) {
  HardwareSpec gpu = Gpu(80);
  gpu.peak_gflops[Precision::kTf32] = 20000;  // twice fp32, as on A10 and L4
  gpu.peak_gflops[Precision::kBf16] = 40000;
  gpu.peak_gflops[Precision::kInt8] = 80000;
  const auto features = MixedFeatures();
  for (const Calibration& cal : {Calibration{}, WithLearned(0.2, 0.1), WithLearned(3, 3)}) {
    auto t = [&](Precision p) {
      const Projection proj = Project(features, gpu, p, cal);
      EXPECT_EQ(proj.status, "ok");
      return proj.p50_ms;
    };
    const double fp32 = t(Precision::kFp32), tf32 = t(Precision::kTf32), fp16 = t(Precision::kFp16),
                 bf16 = t(Precision::kBf16), int8 = t(Precision::kInt8);
    EXPECT_LE(tf32, fp32 * (1 + 1e-12));
    EXPECT_LE(fp16, tf32 * (1 + 1e-12));
    EXPECT_NEAR(bf16, fp16, 1e-12 * fp16);  // same peak, same bytes: equal
    EXPECT_LE(int8, fp16 * (1 + 1e-12));
  }
}

TEST(ProjectionOrderingTest, AMemoryBoundLayerIsEqualAcrossPrecisionsOfOneByteWidth) {
  HardwareSpec gpu = Gpu(80);
  gpu.peak_gflops[Precision::kTf32] = 20000;
  const auto features = FeaturesOf(Measured({AddLayer("add", 1 << 22, 1)}));
  EXPECT_DOUBLE_EQ(Project(features, gpu, Precision::kTf32, {}).p50_ms,
                   Project(features, gpu, Precision::kFp32, {}).p50_ms);
}

TEST(ProjectionOrderingTest, MoreComputeUnitsOfOneArchitectureAreNeverSlower) {
  const auto features = MixedFeatures();
  for (const Calibration& cal : {Calibration{}, WithLearned(1.5, 2)}) {
    for (Precision p : {Precision::kFp32, Precision::kFp16, Precision::kInt8}) {
      double previous = 0;
      for (int units : {8, 10, 20, 40, 58, 80, 108, 132, 200}) {
        // Peak and bandwidth per unit fixed: a bigger part of the same family.
        HardwareSpec gpu = Gpu(units);
        gpu.peak_gflops = {
            {Precision::kFp32, 100.0 * units}, {Precision::kFp16, 800.0 * units}, {Precision::kInt8, 1600.0 * units}};
        gpu.memory_bandwidth_gbs = 10.0 * units;
        const double ms = Project(features, gpu, p, cal).p50_ms;
        if (previous > 0) {
          EXPECT_LE(ms, previous * (1 + 1e-9)) << units << " units at " << PrecisionName(p);
        }
        previous = ms;
      }
      if (p == Precision::kFp16) continue;  // the test CPU has fp32 and int8
      double cpu_previous = 0;
      for (int cores : {1, 2, 4, 8, 16, 32, 56, 96}) {
        const double ms = Project(features, Cpu(50.0 * cores, 5.0 * cores, cores), p, cal).p50_ms;
        if (cpu_previous > 0) {
          EXPECT_LE(ms, cpu_previous * (1 + 1e-9)) << cores << " cores at " << PrecisionName(p);
        }
        cpu_previous = ms;
      }
    }
  }
}

// A catalog CPU with at least this machine's cores, bandwidth and per-core peak is never projected
// slower than the model measured here, whatever the learned efficiency says.
TEST(ProjectionOrderingTest, AServerCpuIsNeverSlowerThanTheLocalMachine) {
  const HardwareSpec local = Cpu(166, 50, 2);
  std::vector<LayerResult> layers;
  for (int i = 0; i < 40; ++i) layers.push_back(AddLayer("add" + std::to_string(i), 4096, 0.01));
  const TargetResult measured = Measured(layers);
  Calibration cal = WithLearned(0.5, 0.5);
  cal.published->kinds["cpu"].layer_overhead_factor = 20;  // a runtime with a costly fork/join
  cal.local_cpu = local;
  cal.local_cpu_p50_ms = {{Precision::kFp32, measured.latency.p50}};
  const HardwareSpec server = Cpu(7168, 307, 56);
  const Projection p = Project(FeaturesOf(measured), server, Precision::kFp32, cal);
  EXPECT_LE(p.p50_ms, measured.latency.p50 * (1 + 1e-12));
  EXPECT_LE(p.p90_ms, measured.latency.p50 * (1 + 1e-12));
  bool noted = false;
  for (const auto& n : p.notes) noted = noted || n.find("capped at") != std::string::npos;
  EXPECT_TRUE(noted);
  // A CPU with fewer cores than this one is not capped: it might be slower.
  const Projection small = Project(FeaturesOf(measured), Cpu(83, 50, 1), Precision::kFp32, cal);
  EXPECT_GT(small.p50_ms, measured.latency.p50);
}

TEST(ProjectionOrderingTest, LearnedEfficiencyStatesItsRuntimeAndValidation) {
  Calibration cal = WithLearned(1, 1);
  cal.published->kinds["gpu"].lodo_log_errors = {0.1, -0.2, 0.3, std::log(2.0)};
  cal.published->kinds["gpu"].rows = 4;
  cal.published->kinds["gpu"].devices = {"a", "b"};
  const Projection p = Project(MixedFeatures(), Gpu(), Precision::kFp16, cal);
  EXPECT_EQ(p.runtime, "TensorRT");
  ASSERT_TRUE(p.validated_error.has_value());
  EXPECT_NEAR(*p.validated_error, 0.5 * (std::exp(0.2) - 1 + std::exp(0.3) - 1), 1e-9);
  EXPECT_EQ(p.validated_rows, 4);
  // Four rows: the band is drawn towards ×/÷ 2.
  EXPECT_LT(p.p10_ms, p.p50_ms / 1.3);
  EXPECT_GT(p.p90_ms, p.p50_ms * 1.3);
  const auto j = ProjectionToJson(p);
  EXPECT_EQ(j["runtime"], "TensorRT");
  EXPECT_EQ(j["validated_rows"], 4);
  // The local --validate path never uses it.
  const Projection local = Project(MixedFeatures(), Gpu(), Precision::kFp16, cal, {.local_software = true});
  EXPECT_TRUE(local.runtime.empty());
}

// A small layer leaves most of a big GPU idle one request at a time; concurrent requests fill it.
TEST(ProjectionTest, ThroughputFillsTheUnitsALoneRequestLeavesIdle) {
  const auto features = FeaturesOf(Measured({MatMulLayer("small", 64, 64, 64, 1), AddLayer("add", 4096, 1)}));
  const Projection p = Project(features, Gpu(100), Precision::kFp32, {});
  ASSERT_EQ(p.status, "ok");
  EXPECT_GT(p.throughput_per_s, 2 * 1000 / p.p50_ms);
}

// A view or an in-place concatenation is a copy in chipfit's CPU layers and nothing in a compiled
// vendor runtime.
TEST(ProjectionTest, ACompiledRuntimeDoesNotRunViewsOrConcatenations) {
  LayerResult reshape = AddLayer("reshape", 1 << 20, 1);
  reshape.op = "Reshape";
  LayerResult concat = AddLayer("concat", 1 << 20, 1);
  concat.op = "Concat";
  const auto features = FeaturesOf(Measured({reshape, concat, AddLayer("add", 1 << 20, 1)}));
  const Projection local = Project(features, Gpu(), Precision::kFp16, {});
  EXPECT_GT(local.layers[0].time_ms, 0);
  const Projection learned = Project(features, Gpu(), Precision::kFp16, WithLearned(1, 1));
  ASSERT_EQ(learned.layers.size(), 3u);
  EXPECT_EQ(learned.layers[0].time_ms, 0);
  EXPECT_EQ(learned.layers[0].bound, "elided");
  EXPECT_EQ(learned.layers[1].bound, "elided");
  EXPECT_GT(learned.layers[2].time_ms, 0);
}

TEST(ProjectionOrderingTest, EfficiencyJsonRoundTrips) {
  Calibration cal = WithLearned(1.25, 0.5);
  cal.published->kinds["gpu"].lodo_log_errors = {0.5};
  cal.published->fitted_on = "test";
  const auto back = PublishedEfficiencyFromJson(PublishedEfficiencyToJson(*cal.published), "e.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_DOUBLE_EQ(back->kinds.at("gpu").matrix.at("half"), 1.25);
  EXPECT_EQ(back->kinds.at("gpu").lodo_log_errors.size(), 1u);
  auto broken = PublishedEfficiencyToJson(*cal.published);
  broken["kinds"]["gpu"]["memory"] = -1;
  EXPECT_FALSE(PublishedEfficiencyFromJson(broken, "e.json").ok());
  EXPECT_FALSE(PublishedEfficiencyFromJson(nlohmann::json::object(), "e.json").ok());
}

}  // namespace
}  // namespace chipfit
