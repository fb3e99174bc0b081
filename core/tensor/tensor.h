// Tensor: dtype + shape + a pointer to dense row-major data, owned (shared) or borrowed (arena).
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor/dtype.h"
#include "core/tensor/half.h"

namespace chipfit {

using Shape = std::vector<int64_t>;

// Product of dims (1 for a scalar); dims must be >= 0.
int64_t NumElements(const Shape& shape);
// "1x3x224x224", "scalar" for rank 0.
std::string ShapeToString(const Shape& shape);
// Row-major strides in elements.
std::vector<int64_t> Strides(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;
  // Owns zero-initialised storage.
  Tensor(DType dtype, Shape shape);
  // Borrows `data` (e.g. an arena slot); the caller keeps it alive while the Tensor is used.
  static Tensor View(DType dtype, Shape shape, void* data);

  bool defined() const { return dtype_ != DType::kUndefined; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[static_cast<size_t>(i)]; }
  int64_t numel() const { return NumElements(shape_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * DTypeSize(dtype_); }

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }
  template <typename T>
  T* data() {
    assert(sizeof(T) == DTypeSize(dtype_) || (dtype_ == DType::kBool && sizeof(T) == 1));
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    assert(sizeof(T) == DTypeSize(dtype_) || (dtype_ == DType::kBool && sizeof(T) == 1));
    return static_cast<const T*>(data_);
  }

  // Deep copy into owned storage.
  Tensor Clone() const;
  // Same data, another shape with the same element count.
  Tensor Reshaped(Shape shape) const;
  // Element i converted to double / int64 (any numeric dtype); for shape-like inputs and tests.
  double GetAsDouble(int64_t i) const;
  int64_t GetAsInt64(int64_t i) const;
  // All elements as int64 (Reshape shapes, Slice starts, axes inputs ...).
  std::vector<int64_t> ToInt64Vector() const;

 private:
  DType dtype_ = DType::kUndefined;
  Shape shape_;
  std::shared_ptr<void> storage_;
  void* data_ = nullptr;
};

// "f32[1x3x32x32]"
std::string DescribeTensor(const Tensor& tensor);

// Calls f(T{}) with T the C++ type of `dtype` (float, double, Float16, BFloat16, int8_t … uint64_t,
// bool). Returns f's Status, or Unsupported for string/undefined.
template <typename F>
auto VisitDType(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kF32: return f(float{});
    case DType::kF64: return f(double{});
    case DType::kF16: return f(Float16{});
    case DType::kBF16: return f(BFloat16{});
    case DType::kI8: return f(int8_t{});
    case DType::kU8: return f(uint8_t{});
    case DType::kI16: return f(int16_t{});
    case DType::kU16: return f(uint16_t{});
    case DType::kI32: return f(int32_t{});
    case DType::kU32: return f(uint32_t{});
    case DType::kI64: return f(int64_t{});
    case DType::kU64: return f(uint64_t{});
    case DType::kBool: return f(bool{});
    case DType::kString:
    case DType::kUndefined: break;
  }
  return f(nullptr);  // callers handle std::nullptr_t as "unsupported dtype"
}

template <typename T>
constexpr DType DTypeOf() {
  if constexpr (std::is_same_v<T, float>)
    return DType::kF32;
  else if constexpr (std::is_same_v<T, double>)
    return DType::kF64;
  else if constexpr (std::is_same_v<T, Float16>)
    return DType::kF16;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return DType::kBF16;
  else if constexpr (std::is_same_v<T, int8_t>)
    return DType::kI8;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return DType::kU8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return DType::kI16;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return DType::kU16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DType::kI32;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return DType::kU32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DType::kI64;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return DType::kU64;
  else if constexpr (std::is_same_v<T, bool>)
    return DType::kBool;
  else
    return DType::kUndefined;
}

bool IsFloatingDType(DType dtype);  // f32 f64 f16 bf16
bool IsIntegerDType(DType dtype);   // signed and unsigned integers (not bool)

}  // namespace chipfit
