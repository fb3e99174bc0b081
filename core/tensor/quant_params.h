// Affine quantization parameters for one tensor: real = scale * (q - zero_point).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/tensor/dtype.h"

namespace chipfit {

struct QuantParams {
  DType dtype = DType::kU8;  // kU8 (asymmetric) or kI8 (symmetric, zero_point 0)
  float scale = 1.0f;
  int32_t zero_point = 0;
  float min = 0.0f;  // the real range the scale covers, after calibration clipping
  float max = 0.0f;
};

// Calibrated activation parameters by ONNX value name.
using QuantTable = std::map<std::string, QuantParams>;

}  // namespace chipfit
