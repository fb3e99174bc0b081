// Calibrator and per-channel weight quantization.
#include "core/quant/calibration.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace chipfit {

namespace {

// Normalised axis in [0, rank), or an error naming the tensor's shape.
Result<int64_t> CheckAxis(const Tensor& weights, int axis) {
  if (weights.dtype() != DType::kF32) {
    return InvalidArgument("per-channel quantization needs f32 weights, got " + DescribeTensor(weights));
  }
  const int64_t rank = weights.rank();
  const int64_t normalized = axis < 0 ? axis + rank : axis;
  if (rank == 0 || normalized < 0 || normalized >= rank) {
    return InvalidArgument("per-channel axis " + std::to_string(axis) + " is out of range for " +
                           DescribeTensor(weights));
  }
  return normalized;
}

// Row-major view as [outer, channels, inner] around the channel axis.
struct ChannelLayout {
  int64_t outer = 1, channels = 1, inner = 1;
};

ChannelLayout Layout(const Shape& shape, int64_t axis) {
  ChannelLayout l;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    const int64_t n = shape[static_cast<size_t>(d)];
    if (d < axis) l.outer *= n;
    if (d == axis) l.channels = n;
    if (d > axis) l.inner *= n;
  }
  return l;
}

float RoundedClamp(float v, float lo, float hi) {
  if (std::isnan(v)) return 0.0f;
  return std::clamp(std::nearbyint(v), lo, hi);  // the default rounding mode is to nearest even
}

}  // namespace

std::string_view CalibrationMethodName(CalibrationMethod m) {
  switch (m) {
    case CalibrationMethod::kMinMax: return "minmax";
    case CalibrationMethod::kEntropy: return "entropy";
    case CalibrationMethod::kPercentile: return "percentile";
  }
  return "unknown";
}

std::optional<CalibrationMethod> ParseCalibrationMethod(std::string_view text) {
  for (auto m : {CalibrationMethod::kMinMax, CalibrationMethod::kEntropy, CalibrationMethod::kPercentile}) {
    if (text == CalibrationMethodName(m)) return m;
  }
  return std::nullopt;
}

Calibrator::Calibrator(CalibrationOptions options) : options_(options) {}

bool Calibrator::Observe(const std::string& value, const Tensor& tensor) {
  if (tensor.dtype() != DType::kF32) return false;
  return Observe(value, tensor.data<float>(), static_cast<size_t>(tensor.numel()));
}

bool Calibrator::Observe(const std::string& value, const float* data, size_t n) {
  auto it = stats_.find(value);
  if (it == stats_.end()) it = stats_.emplace(value, Stats{StreamingHistogram(options_.bins), 0}).first;
  it->second.histogram.Add(data, n);
  ++it->second.samples;
  return true;
}

std::vector<std::string> Calibrator::values() const {
  std::vector<std::string> names;
  names.reserve(stats_.size());
  for (const auto& [name, stats] : stats_) names.push_back(name);
  return names;  // std::map keeps them sorted
}

uint64_t Calibrator::samples(const std::string& value) const {
  const auto it = stats_.find(value);
  return it == stats_.end() ? 0 : it->second.samples;
}

const StreamingHistogram* Calibrator::histogram(const std::string& value) const {
  const auto it = stats_.find(value);
  return it == stats_.end() ? nullptr : &it->second.histogram;
}

size_t Calibrator::HistogramBytes() const {
  size_t bytes = 0;
  for (const auto& [name, stats] : stats_) bytes += stats.histogram.MemoryBytes();
  return bytes;
}

Result<QuantParams> Calibrator::Compute(const std::string& value, bool symmetric) const {
  return Compute(value, options_.method, symmetric);
}

Result<QuantParams> Calibrator::Compute(const std::string& value, CalibrationMethod method, bool symmetric) const {
  const StreamingHistogram* h = histogram(value);
  if (h == nullptr) return NotFound("calibration: value '" + value + "' was never observed");
  double lo = h->min(), hi = h->max();
  if (method != CalibrationMethod::kMinMax) {
    const double t = method == CalibrationMethod::kEntropy ? h->EntropyThreshold(options_.entropy_levels)
                                                           : h->AbsPercentile(options_.percentile);
    lo = std::max(lo, -t);
    hi = std::min(hi, t);
  }
  QuantParams p;
  if (symmetric) {
    const double a = std::max(std::fabs(lo), std::fabs(hi));
    p.dtype = DType::kI8;
    p.scale = a > 0.0 ? static_cast<float>(a / 127.0) : 1.0f;
    p.zero_point = 0;
    p.min = static_cast<float>(-a);
    p.max = static_cast<float>(a);
    if (!(p.scale > 0.0f)) p.scale = 1.0f;  // an underflowed scale would divide by zero downstream
    return p;
  }
  // Zero must be exact in u8 (padding, ReLU outputs), so the range always contains it.
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  p.dtype = DType::kU8;
  p.min = static_cast<float>(lo);
  p.max = static_cast<float>(hi);
  if (hi - lo > 0.0) {
    p.scale = static_cast<float>((hi - lo) / 255.0);
    p.zero_point = static_cast<int32_t>(std::clamp(std::nearbyint(-lo / p.scale), 0.0, 255.0));
  }
  if (!(p.scale > 0.0f)) p.scale = 1.0f;
  return p;
}

QuantTable Calibrator::ComputeAll() const {
  QuantTable table;
  for (const auto& [name, stats] : stats_) {
    auto p = Compute(name, false);
    if (p.ok()) table.emplace(name, *p);
  }
  return table;
}

Result<std::vector<float>> PerChannelScales(const Tensor& weights, int axis) {
  ASSIGN_OR_RETURN(const int64_t ax, CheckAxis(weights, axis));
  const ChannelLayout l = Layout(weights.shape(), ax);
  const float* w = weights.data<float>();
  std::vector<float> max_abs(static_cast<size_t>(l.channels), 0.0f);
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t c = 0; c < l.channels; ++c) {
      const float* row = w + (o * l.channels + c) * l.inner;
      float& m = max_abs[static_cast<size_t>(c)];
      for (int64_t k = 0; k < l.inner; ++k) {
        if (!std::isfinite(row[k])) {
          return InvalidArgument("per-channel quantization: non-finite weight in channel " + std::to_string(c) +
                                 " of " + DescribeTensor(weights));
        }
        m = std::max(m, std::fabs(row[k]));
      }
    }
  }
  std::vector<float> scales(max_abs.size());
  for (size_t c = 0; c < max_abs.size(); ++c) scales[c] = max_abs[c] > 0.0f ? max_abs[c] / 127.0f : 1.0f;
  return scales;
}

Result<Tensor> QuantizeWeightsPerChannel(const Tensor& weights, int axis, const std::vector<float>& scales) {
  ASSIGN_OR_RETURN(const int64_t ax, CheckAxis(weights, axis));
  const ChannelLayout l = Layout(weights.shape(), ax);
  if (static_cast<int64_t>(scales.size()) != l.channels) {
    return InvalidArgument("per-channel quantization: " + std::to_string(scales.size()) + " scales for " +
                           std::to_string(l.channels) + " channels of " + DescribeTensor(weights));
  }
  for (size_t c = 0; c < scales.size(); ++c) {
    if (!(scales[c] > 0.0f) || !std::isfinite(scales[c])) {
      return InvalidArgument("per-channel quantization: scale " + std::to_string(scales[c]) + " of channel " +
                             std::to_string(c) + " is not a positive finite number");
    }
  }
  Tensor out(DType::kI8, weights.shape());
  const float* w = weights.data<float>();
  int8_t* q = out.data<int8_t>();
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t c = 0; c < l.channels; ++c) {
      const int64_t base = (o * l.channels + c) * l.inner;
      const float s = scales[static_cast<size_t>(c)];
      for (int64_t k = 0; k < l.inner; ++k) {
        q[base + k] = static_cast<int8_t>(RoundedClamp(w[base + k] / s, -127.0f, 127.0f));
      }
    }
  }
  return out;
}

uint8_t QuantizeU8(float x, const QuantParams& p) {
  const float v = RoundedClamp(x / p.scale, -1e9f, 1e9f) + static_cast<float>(p.zero_point);
  return static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f));
}

int8_t QuantizeI8(float x, const QuantParams& p) {
  const float v = RoundedClamp(x / p.scale, -1e9f, 1e9f) + static_cast<float>(p.zero_point);
  return static_cast<int8_t>(std::clamp(v, -128.0f, 127.0f));
}

float Dequantize(int32_t q, const QuantParams& p) { return p.scale * static_cast<float>(q - p.zero_point); }

}  // namespace chipfit
