// DType: element types chipfit knows, their names, sizes and ONNX codes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace chipfit {

enum class DType : uint8_t {
  kUndefined,
  kF32,
  kF16,
  kBF16,
  kF64,
  kI8,
  kU8,
  kI16,
  kU16,
  kI32,
  kU32,
  kI64,
  kU64,
  kBool,
  kString,
};

// Short lowercase name used in CLI and JSON output: "f32", "bf16", "i64", "bool" ...
std::string_view DTypeName(DType type);
// Bytes per element; 0 for kUndefined and kString.
size_t DTypeSize(DType type);
// From onnx::TensorProto_DataType (the integer code); nullopt for types chipfit does not know.
std::optional<DType> DTypeFromOnnx(int32_t onnx_type);
int32_t DTypeToOnnx(DType type);

}  // namespace chipfit
