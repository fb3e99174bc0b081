// Accuracy metrics between a tensor and its reference (conformance, int8 calibration, drift).
#pragma once

#include "core/tensor/tensor.h"

namespace chipfit {

// Signal-to-quantisation-noise ratio of `actual` against `reference` in dB:
// 10·log10(Σr² / Σ(a−r)²). 200 dB for an exact match; −200 dB when the shapes differ, when a
// non-finite value is not matched exactly (NaN for NaN, the same infinity), or when the reference
// is all zeros and `actual` is not.
double SqnrDb(const Tensor& actual, const Tensor& reference);

}  // namespace chipfit
