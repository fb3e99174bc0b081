// DType tables. ONNX codes are those of onnx.proto's TensorProto.DataType.
#include "core/tensor/dtype.h"

#include <array>

namespace chipfit {
namespace {

struct DTypeRow {
  DType type;
  std::string_view name;
  size_t size;
  int32_t onnx;
};

constexpr std::array<DTypeRow, 15> kRows = {{
    {DType::kUndefined, "undefined", 0, 0},
    {DType::kF32, "f32", 4, 1},
    {DType::kU8, "u8", 1, 2},
    {DType::kI8, "i8", 1, 3},
    {DType::kU16, "u16", 2, 4},
    {DType::kI16, "i16", 2, 5},
    {DType::kI32, "i32", 4, 6},
    {DType::kI64, "i64", 8, 7},
    {DType::kString, "string", 0, 8},
    {DType::kBool, "bool", 1, 9},
    {DType::kF16, "f16", 2, 10},
    {DType::kF64, "f64", 8, 11},
    {DType::kU32, "u32", 4, 12},
    {DType::kU64, "u64", 8, 13},
    {DType::kBF16, "bf16", 2, 16},
}};

const DTypeRow& Row(DType type) {
  for (const auto& row : kRows) {
    if (row.type == type) return row;
  }
  return kRows[0];
}

}  // namespace

std::string_view DTypeName(DType type) { return Row(type).name; }
size_t DTypeSize(DType type) { return Row(type).size; }
int32_t DTypeToOnnx(DType type) { return Row(type).onnx; }

std::optional<DType> DTypeFromOnnx(int32_t onnx_type) {
  for (const auto& row : kRows) {
    if (row.onnx == onnx_type && row.type != DType::kUndefined) return row.type;
  }
  return std::nullopt;
}

}  // namespace chipfit
