// Calibration inputs for a model: .npy samples from a folder, or seeded random samples.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/status.h"
#include "core/tensor/tensor.h"

namespace chipfit {

// File name of an input's .npy: the input name with '/' and ':' replaced by '_', plus ".npy".
std::string CalibrationFileName(const std::string& input_name);

// DIR either holds one .npy per model input (one sample), or, when it holds no .npy at all, sub-folders
// (sorted by name, hidden ones skipped) that each hold such a set (one sample each). Every file is checked
// against the input's dtype and known dims; errors (missing input file, wrong dtype, wrong shape,
// unreadable .npy, no sample at all) are InvalidArgument naming the file. NotFound if DIR is not a folder.
Result<std::vector<std::map<std::string, Tensor>>> LoadCalibrationData(const std::string& dir,
                                                                       const std::vector<ValueDesc>& inputs);

// `count` seeded samples: SeededTensor with seed + k for sample k, plus input index × 7919 per input.
// Unknown dims become 1, an undefined dtype f32; an input without a shape is a scalar.
std::vector<std::map<std::string, Tensor>> RandomCalibrationData(const std::vector<ValueDesc>& inputs, int count,
                                                                 uint64_t seed);
// The same for a graph's inputs, with integer inputs that index a table (token ids) kept inside it
// (core/graph/index_bounds.h).
std::vector<std::map<std::string, Tensor>> RandomCalibrationData(const Graph& graph, int count, uint64_t seed);

}  // namespace chipfit
