// Precision mix: kernels and compute time per device and precision, and the target a target ran as.
#include <gtest/gtest.h>

#include "profilers/precision_mix.h"

namespace chipfit {
namespace {

LayerResult Layer(const std::string& device, const std::string& precision, double ms, int64_t flops) {
  return {.name = "n", .op = "Conv", .device = device, .precision = precision, .time_p50_ms = ms, .flops = flops};
}

TargetResult Target(const std::string& target, std::vector<LayerResult> layers) {
  TargetResult t;
  t.target = *ParseTarget(target);
  t.layers = std::move(layers);
  return t;
}

// PP-OCR cls on cpu:int8 as a user met it: one convolution in int8, the rest in fp32.
TEST(PrecisionMixTest, AnInt8TargetMostlyInFp32RanAsFp32) {
  std::vector<LayerResult> layers = {Layer("cpu", "int8", 0.03, 1000)};
  for (int i = 0; i < 76; ++i) layers.push_back(Layer("cpu", "fp32", 0.012, 1000));
  layers.push_back(Layer("cpu", "int8", 0.5, 0));  // a reorder: no arithmetic, not compute time
  const PrecisionMix mix = ComputePrecisionMix(Target("cpu:int8", layers));
  EXPECT_EQ(mix.kernels, 78);
  EXPECT_EQ(mix.own_kernels, 2);
  EXPECT_NEAR(mix.own_time_share, 0.03 / (0.03 + 76 * 0.012), 1e-9);
  EXPECT_EQ(mix.ran_as, "cpu:fp32");
  EXPECT_EQ(mix.text, "int8 2 of 78 kernels, 3 % of compute time");
  ASSERT_EQ(mix.shares.size(), 2u);
  EXPECT_EQ(mix.shares[0].precision, "fp32");  // most time first
  EXPECT_EQ(mix.shares[0].kernels, 76);
}

TEST(PrecisionMixTest, ATargetMostlyInItsPrecisionRanAsNamed) {
  const PrecisionMix bf16 = ComputePrecisionMix(
      Target("cpu:bf16", {Layer("cpu", "bf16", 0.8, 10), Layer("cpu", "fp32", 0.2, 10), Layer("ref", "fp32", 0.1, 0)}));
  EXPECT_TRUE(bf16.ran_as.empty());
  EXPECT_NEAR(bf16.own_time_share, 0.8, 1e-12);
  EXPECT_EQ(bf16.text, "bf16 1 of 3 kernels, 80 % of compute time");
  // fp32 is every device's base: never "ran as" something else, whatever fell back.
  const PrecisionMix fp32 =
      ComputePrecisionMix(Target("opencl:0:fp32", {Layer("ref", "fp32", 0.9, 10), Layer("opencl:0", "fp32", 0.1, 10)}));
  EXPECT_TRUE(fp32.ran_as.empty());
  EXPECT_NEAR(fp32.own_time_share, 0.1, 1e-12);
}

TEST(PrecisionMixTest, NothingToSayWithoutPrecisionsOrARun) {
  EXPECT_TRUE(ComputePrecisionMix(Target("cpu:int8", {Layer("cpu", "", 1, 1)})).text.empty());
  TargetResult failed = Target("cpu:int8", {Layer("cpu", "int8", 1, 1)});
  failed.status = "failed";
  EXPECT_TRUE(ComputePrecisionMix(failed).shares.empty());
  // No layer with FLOPs (a model of reshapes): every kernel's time is the compute time.
  const PrecisionMix moves =
      ComputePrecisionMix(Target("cpu:int8", {Layer("cpu", "int8", 1, 0), Layer("cpu", "fp32", 19, 0)}));
  EXPECT_NEAR(moves.own_time_share, 0.05, 1e-12);
  EXPECT_EQ(moves.ran_as, "cpu:fp32");
  // 38 % of the compute time in int8 (the sample CNN on a loaded machine): a real int8 share, said by
  // the mix, and no "ran as".
  const PrecisionMix part =
      ComputePrecisionMix(Target("cpu:int8", {Layer("cpu", "int8", 0.38, 10), Layer("cpu", "fp32", 0.62, 10)}));
  EXPECT_TRUE(part.ran_as.empty());
  EXPECT_EQ(part.text, "int8 1 of 2 kernels, 38 % of compute time");
}

}  // namespace
}  // namespace chipfit
