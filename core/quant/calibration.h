// Post-training quantization: activation calibration (MinMax, Entropy, Percentile) and per-channel weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/quant/histogram.h"
#include "core/status.h"
#include "core/tensor/quant_params.h"
#include "core/tensor/tensor.h"

namespace chipfit {

enum class CalibrationMethod { kMinMax, kEntropy, kPercentile };

std::string_view CalibrationMethodName(CalibrationMethod m);  // "minmax", "entropy", "percentile"
std::optional<CalibrationMethod> ParseCalibrationMethod(std::string_view text);

struct CalibrationOptions {
  CalibrationMethod method = CalibrationMethod::kMinMax;
  double percentile = 99.99;
  int bins = 2048;
  int entropy_levels = 128;
};

// Collects statistics per value name, streamed: memory bounded by bins × values, not by samples.
// Every method keeps a histogram, so one calibration pass can be turned into params by any method.
class Calibrator {
 public:
  explicit Calibrator(CalibrationOptions options = {});

  const CalibrationOptions& options() const { return options_; }
  // Only f32 tensors are observed; others are ignored (returns false).
  bool Observe(const std::string& value, const Tensor& tensor);
  bool Observe(const std::string& value, const float* data, size_t n);

  std::vector<std::string> values() const;                              // names observed, sorted
  uint64_t samples(const std::string& value) const;                     // number of Observe calls for it
  const StreamingHistogram* histogram(const std::string& value) const;  // null for an unknown name
  size_t HistogramBytes() const;                                        // all histograms together

  // Range by the method: MinMax = exact [min, max]; Entropy / Percentile: threshold T on |x|, range =
  // [max(min, -T), min(max, T)]. Symmetric → kI8, scale = max(|lo|, |hi|) / 127, zero point 0;
  // asymmetric → kU8, range widened to include 0, scale = (hi - lo) / 255, zero point round(-lo / scale).
  // A constant-zero tensor gets scale 1. NotFound for a name never observed.
  Result<QuantParams> Compute(const std::string& value, bool symmetric = false) const;
  Result<QuantParams> Compute(const std::string& value, CalibrationMethod method, bool symmetric) const;
  QuantTable ComputeAll() const;  // asymmetric u8 for every value, by options().method

 private:
  struct Stats {
    StreamingHistogram histogram;
    uint64_t samples = 0;
  };
  CalibrationOptions options_;
  std::map<std::string, Stats> stats_;
};

// Per-channel symmetric int8 weights along `axis` (Conv weights: axis 0; MatMul B [K, N]: axis 1); a
// negative axis counts from the end. scale[c] = max|w[c, ...]| / 127, 1 for an all-zero channel.
// InvalidArgument for non-f32 weights, a bad axis or non-finite weights.
Result<std::vector<float>> PerChannelScales(const Tensor& weights, int axis);
// → DType::kI8, round half to even, saturated to [-127, 127] (the symmetric range: -128 has no mirror).
Result<Tensor> QuantizeWeightsPerChannel(const Tensor& weights, int axis, const std::vector<float>& scales);

// Activations, as ONNX QuantizeLinear: round half to even, saturate; NaN maps to the zero point.
uint8_t QuantizeU8(float x, const QuantParams& p);
int8_t QuantizeI8(float x, const QuantParams& p);
float Dequantize(int32_t q, const QuantParams& p);

}  // namespace chipfit
