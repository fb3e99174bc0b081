// What the CPU kernels of ONNX Runtime's contrib quantized ops share with their reference kernels
// (core/reference/contrib_quant.cpp), so both follow ORT's arithmetic from one definition.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor/tensor.h"

namespace chipfit {

// Whether ONNX Runtime's broadcast loop hands input `in` to its kernel as one scalar per span: the whole
// input is one value, or it is broadcast along the innermost output dim of size > 1 (QLinearAdd/Mul).
bool ScalarPerSpan(const Shape& in, const Shape& out);

// QLinearSoftmax's table over the 256 input codes: exp((i − 255 + shift) · x_scale), the shift keeping a
// row's sum of `reduce` terms inside float's range, as ORT builds it.
std::vector<float> QLinearSoftmaxTable(float x_scale, int64_t reduce);

}  // namespace chipfit
