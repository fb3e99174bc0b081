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
  // 101 output tiles of 128×128 on 100 SMs take two waves, as 200 tiles do.
  const auto one = FeaturesOf(Measured({MatMulLayer("a", 101 * 128, 128, 4096, 1)}));
  const auto two = FeaturesOf(Measured({MatMulLayer("b", 200 * 128, 128, 4096, 1)}));
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
  EXPECT_NEAR(p.throughput_per_s, 1000 / p.p50_ms, 1e-9);
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

}  // namespace
}  // namespace chipfit
