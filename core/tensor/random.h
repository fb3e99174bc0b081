// Deterministic pseudo-random data: the same bytes on every machine and standard library (the
// distributions in <random> are implementation-defined). Seeded inputs, sample weights, tests.
#pragma once

#include <cstdint>

#include "core/tensor/tensor.h"

namespace chipfit {

// splitmix64 (Steele, Lea, Flood 2014): tiny, well mixed, fully specified by the algorithm.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double Unit() { return static_cast<double>(Next() >> 11) / 9007199254740992.0; }
  // Uniform float in [lo, hi): 24 random bits make the unit value exact in float; the rest is IEEE
  // arithmetic with one rounding, which every conforming compiler reproduces.
  float Uniform(double lo, double hi) {
    const double unit = static_cast<double>(Next() >> 40) / 16777216.0;
    return static_cast<float>(lo + (hi - lo) * unit);
  }

 private:
  uint64_t state_;
};

// A tensor of seeded values: floating types uniform in [-1, 1), integers in [0, 10), bools 50/50.
Tensor SeededTensor(DType dtype, const Shape& shape, uint64_t seed);

}  // namespace chipfit
