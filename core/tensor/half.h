// Float16 and BFloat16 storage types: 16-bit patterns that convert to and from float (round to
// nearest even), so generic kernels can be written once for every floating type.
#pragma once

#include <cstdint>
#include <cstring>

namespace chipfit {

uint16_t FloatToHalfBits(float value);
float HalfBitsToFloat(uint16_t bits);

inline uint16_t FloatToBFloat16Bits(float value) {
  uint32_t u;
  std::memcpy(&u, &value, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // keep NaN a NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
inline float BFloat16BitsToFloat(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

struct Float16 {
  uint16_t bits = 0;
  Float16() = default;
  explicit Float16(float value) : bits(FloatToHalfBits(value)) {}
  operator float() const { return HalfBitsToFloat(bits); }  // NOLINT(google-explicit-constructor)
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float value) : bits(FloatToBFloat16Bits(value)) {}
  operator float() const { return BFloat16BitsToFloat(bits); }  // NOLINT(google-explicit-constructor)
};

static_assert(sizeof(Float16) == 2 && sizeof(BFloat16) == 2);

}  // namespace chipfit
