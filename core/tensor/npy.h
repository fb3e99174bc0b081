// NumPy .npy files (format 1.0–3.0, C order): read into and write from Tensor.
#pragma once

#include <filesystem>

#include "core/status.h"
#include "core/tensor/tensor.h"

namespace chipfit {

// Reads f32, f64, f16, i8, u8, i16, u16, i32, u32, i64, u64 and bool arrays; errors name the file.
Result<Tensor> ReadNpy(const std::filesystem::path& path);
Status WriteNpy(const std::filesystem::path& path, const Tensor& tensor);

}  // namespace chipfit
