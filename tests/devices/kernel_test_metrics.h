// Comparisons and seeded inputs every device kernel test uses (CPU and OpenCL kernel matrices).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/tensor/random.h"
#include "core/tensor/tensor.h"

namespace chipfit::testing {

// max |a − b| / max |b| (b = the reference).
inline double MaxRelError(const Tensor& a, const Tensor& b) {
  double err = 0, scale = 0;
  for (int64_t i = 0; i < b.numel(); ++i) {
    err = std::max(err, std::fabs(a.GetAsDouble(i) - b.GetAsDouble(i)));
    scale = std::max(scale, std::fabs(b.GetAsDouble(i)));
  }
  return scale > 0 ? err / scale : err;
}

// Seeded f32 values uniform in [lo, hi).
inline Tensor RandomF32(const Shape& shape, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  Tensor t(DType::kF32, shape);
  SplitMix64 rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = rng.Uniform(lo, hi);
  return t;
}

}  // namespace chipfit::testing
