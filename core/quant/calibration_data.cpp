// Calibration inputs: the .npy folder layouts and seeded random samples.
#include "core/quant/calibration_data.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/graph/index_bounds.h"
#include "core/tensor/npy.h"
#include "core/tensor/random.h"

namespace chipfit {

namespace fs = std::filesystem;

namespace {

// "1xNx3": unknown dims by their symbolic name, or '?'.
std::string DescribeExpectedShape(const ValueDesc& input) {
  std::string out;
  for (size_t d = 0; d < input.shape.size(); ++d) {
    if (d > 0) out += "x";
    if (input.shape[d] >= 0) {
      out += std::to_string(input.shape[d]);
    } else {
      out += d < input.dim_params.size() && !input.dim_params[d].empty() ? input.dim_params[d] : "?";
    }
  }
  return out.empty() ? "scalar" : out;
}

bool ShapeMatches(const ValueDesc& input, const Shape& shape) {
  if (!input.has_shape) return true;
  if (input.shape.size() != shape.size()) return false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (input.shape[d] >= 0 && input.shape[d] != shape[d]) return false;
  }
  return true;
}

Result<std::map<std::string, Tensor>> LoadSample(const fs::path& folder, const std::vector<ValueDesc>& inputs) {
  std::map<std::string, Tensor> sample;
  for (const ValueDesc& input : inputs) {
    const fs::path file = folder / CalibrationFileName(input.name);
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) {
      return InvalidArgument("calibration data: missing file '" + file.string() + "' for input '" + input.name + "'");
    }
    auto tensor = ReadNpy(file);
    if (!tensor.ok()) {
      return InvalidArgument("calibration data: cannot read '" + file.string() + "': " + tensor.status().message());
    }
    if (input.dtype != DType::kUndefined && tensor->dtype() != input.dtype) {
      return InvalidArgument("calibration data: '" + file.string() + "' holds " +
                             std::string(DTypeName(tensor->dtype())) + ", input '" + input.name + "' is " +
                             std::string(DTypeName(input.dtype)));
    }
    if (!ShapeMatches(input, tensor->shape())) {
      return InvalidArgument("calibration data: '" + file.string() + "' has shape " + ShapeToString(tensor->shape()) +
                             ", input '" + input.name + "' expects " + DescribeExpectedShape(input));
    }
    sample.emplace(input.name, std::move(tensor).value());
  }
  return sample;
}

}  // namespace

std::string CalibrationFileName(const std::string& input_name) {
  std::string name = input_name;
  std::replace(name.begin(), name.end(), '/', '_');
  std::replace(name.begin(), name.end(), ':', '_');
  return name + ".npy";
}

Result<std::vector<std::map<std::string, Tensor>>> LoadCalibrationData(const std::string& dir,
                                                                       const std::vector<ValueDesc>& inputs) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return NotFound("calibration data: '" + dir + "' is not a folder");
  bool has_npy = false;
  std::vector<fs::path> folders;
  // The non-throwing iteration: core reports errors as Status, and the listing can fail half-way.
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    std::error_code type_ec;  // an entry that vanished or cannot be stat'ed is simply not a sample
    if (it->is_regular_file(type_ec) && path.extension() == ".npy") has_npy = true;
    if (it->is_directory(type_ec) && !path.filename().string().starts_with(".")) folders.push_back(path);
  }
  if (ec) return IoError("calibration data: cannot list '" + dir + "': " + ec.message());
  // Loose .npy files make DIR itself the one sample; sub-folders are then not samples.
  if (has_npy) folders = {fs::path(dir)};
  std::sort(folders.begin(), folders.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename().string() < b.filename().string(); });
  if (folders.empty()) {
    return InvalidArgument("calibration data: '" + dir + "' holds neither .npy files nor sample folders");
  }
  std::vector<std::map<std::string, Tensor>> samples;
  samples.reserve(folders.size());
  for (const fs::path& folder : folders) {
    ASSIGN_OR_RETURN(auto sample, LoadSample(folder, inputs));
    samples.push_back(std::move(sample));
  }
  return samples;
}

std::vector<std::map<std::string, Tensor>> RandomCalibrationData(const std::vector<ValueDesc>& inputs, int count,
                                                                 uint64_t seed) {
  std::vector<std::map<std::string, Tensor>> samples;
  for (int k = 0; k < count; ++k) {
    std::map<std::string, Tensor> sample;
    for (size_t i = 0; i < inputs.size(); ++i) {
      Shape shape = inputs[i].has_shape ? inputs[i].shape : Shape{};
      for (int64_t& d : shape) d = d < 0 ? 1 : d;
      const DType dtype = inputs[i].dtype == DType::kUndefined ? DType::kF32 : inputs[i].dtype;
      const uint64_t s = seed + static_cast<uint64_t>(k) + static_cast<uint64_t>(i) * 7919u;
      sample.emplace(inputs[i].name, SeededTensor(dtype, shape, s));
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

std::vector<std::map<std::string, Tensor>> RandomCalibrationData(const Graph& graph, int count, uint64_t seed) {
  auto samples = RandomCalibrationData(graph.inputs, count, seed);
  const auto bounds = InputIndexBounds(graph);
  for (auto& sample : samples) {
    BoundIndexInputs(bounds, sample);
    SeedSequenceLengths(graph, sample);
  }
  return samples;
}

}  // namespace chipfit
