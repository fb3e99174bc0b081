// The "same kernel" rule every layer comparison uses (chipfit diff, Compare, the heat map).
#include "core/store/layer_verdict.h"

#include <gtest/gtest.h>

#include <cmath>

namespace chipfit {
namespace {

LayerKernelTiming Kernel(const char* implementation, const char* precision, double p50, double p90) {
  LayerKernelTiming k;
  k.implementation = implementation;
  k.precision = precision;
  k.device = "cpu";
  k.nodes = 3;
  k.p50_ms = p50;
  k.p90_ms = p90;
  return k;
}

TEST(LayerVerdictTest, TheSameKernelEighteenPercentFasterIsSameKernelNotImproved) {
  const LayerKernelTiming a = Kernel("onednn:conv", "fp32", 0.100, 0.102);
  const LayerKernelTiming b = Kernel("onednn:conv", "fp32", 0.082, 0.084);
  const LayerJudgement j = JudgeLayer(a, b);
  EXPECT_TRUE(j.same_kernel);
  EXPECT_EQ(j.verdict, LayerVerdict::kSameKernel);
  EXPECT_STREQ(LayerVerdictName(j.verdict), "same kernel");
  EXPECT_NEAR(j.change.ratio, 0.82, 1e-12);
  EXPECT_NEAR(j.change.threshold, kSameKernelMinChange, 1e-12);
  // The same times from a kernel that changed precision are a real improvement.
  const LayerJudgement int8 = JudgeLayer(a, Kernel("onednn:conv:int8", "int8", 0.082, 0.084));
  EXPECT_FALSE(int8.same_kernel);
  EXPECT_EQ(int8.verdict, LayerVerdict::kImproved);
}

TEST(LayerVerdictTest, TheSameKernelBeyondNoiseKeepsItsVerdict) {
  const LayerKernelTiming a = Kernel("onednn:conv", "fp32", 0.100, 0.101);
  EXPECT_EQ(JudgeLayer(a, Kernel("onednn:conv", "fp32", 0.050, 0.051)).verdict, LayerVerdict::kImproved);
  EXPECT_EQ(JudgeLayer(a, Kernel("onednn:conv", "fp32", 0.140, 0.141)).verdict, LayerVerdict::kRegressed);
  // Wide spreads on both sides raise the bar above the minimum: 1.4× is within 0.3 + 0.2.
  const LayerJudgement noisy =
      JudgeLayer(Kernel("onednn:conv", "fp32", 0.100, 0.130), Kernel("onednn:conv", "fp32", 0.140, 0.168));
  EXPECT_NEAR(noisy.change.threshold, 0.5, 1e-9);
  EXPECT_EQ(noisy.verdict, LayerVerdict::kSameKernel);
}

TEST(LayerVerdictTest, AnyDifferenceInWhatRanIsNotTheSameKernel) {
  const LayerKernelTiming a = Kernel("onednn:conv", "fp32", 0.100, 0.101);
  LayerKernelTiming device = a, fused = a, unknown = a;
  device.device = "opencl:0";
  fused.nodes = 2;
  unknown.implementation.clear();
  EXPECT_FALSE(SameKernel(a, device));
  EXPECT_FALSE(SameKernel(a, fused));
  EXPECT_FALSE(SameKernel(unknown, unknown)) << "a run that did not record its kernel cannot tell";
  EXPECT_EQ(JudgeLayer(a, Kernel("ref:conv", "fp32", 0.104, 0.105)).verdict, LayerVerdict::kUnchanged);
}

TEST(LayerVerdictTest, TinyOrMissingTimesAreNotFlagged) {
  // Under DiffOptions::min_layer_ms on both sides: dispatch noise, never flagged.
  EXPECT_EQ(
      JudgeLayer(Kernel("onednn:pool", "fp32", 0.002, 0.002), Kernel("onednn:pool", "fp32", 0.001, 0.001)).verdict,
      LayerVerdict::kSameKernel);
  const LayerJudgement missing =
      JudgeLayer(Kernel("onednn:pool", "fp32", NAN, NAN), Kernel("onednn:pool", "fp32", 1, 1));
  EXPECT_EQ(missing.verdict, LayerVerdict::kNotCompared);
  EXPECT_STREQ(LayerVerdictName(missing.verdict), "");
  EXPECT_TRUE(std::isnan(missing.change.ratio));
}

}  // namespace
}  // namespace chipfit
