// Tensor: dtype + shape + a pointer to dense row-major data, owned (shared) or borrowed (arena); also
// the ONNX values that are not one dense tensor (a sequence of tensors, an optional without a value).
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
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

// What a value holds. Almost always one dense tensor; ONNX also has seq(tensor) values (the Sequence*
// ops, SplitToSequence, Loop-carried lists) and optional values, of which only the empty one needs a
// form of its own (an optional holding a value is that value). Sequences and empty optionals carry
// their element dtype and shape {0}: no data, so code that only knows dense tensors reads nothing.
enum class ValueForm : uint8_t { kTensor, kSequence, kNone };

class Tensor {
 public:
  Tensor() = default;
  // Owns zero-initialised storage (empty strings for kString; strings never live in an arena).
  Tensor(DType dtype, Shape shape);
  // Owns storage left as the allocator gives it, for an output a kernel writes whole (as it writes an arena
  // slot, which holds the previous run's values); kString is zero-initialised as above.
  static Tensor Uninitialized(DType dtype, Shape shape);
  // Borrows `data` (e.g. an arena slot); the caller keeps it alive while the Tensor is used.
  static Tensor View(DType dtype, Shape shape, void* data);
  // A sequence of dense tensors of one dtype. Elements that borrow their data are copied, so a
  // sequence never points into an arena; copies of the sequence share its (immutable) elements.
  static Tensor Sequence(DType element_dtype, std::vector<Tensor> elements);
  // An optional without a value; `of_sequence`: optional(seq(tensor)) rather than optional(tensor).
  static Tensor None(DType element_dtype, bool of_sequence = false);

  bool defined() const { return dtype_ != DType::kUndefined || form_ != ValueForm::kTensor; }
  ValueForm form() const { return form_; }
  bool is_dense() const { return form_ == ValueForm::kTensor; }
  bool is_sequence() const { return form_ == ValueForm::kSequence; }
  bool is_none() const { return form_ == ValueForm::kNone; }
  bool none_of_sequence() const { return form_ == ValueForm::kNone && none_of_sequence_; }
  // A sequence's elements (empty for any other form).
  const std::vector<Tensor>& elements() const;
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
    assert(Holds<T>());
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    assert(Holds<T>());
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
  Tensor(DType dtype, Shape shape, bool zeroed);
  template <typename T>
  bool Holds() const {
    if (dtype_ == DType::kString) return std::is_same_v<T, std::string>;
    return sizeof(T) == DTypeSize(dtype_) || (dtype_ == DType::kBool && sizeof(T) == 1);
  }

  DType dtype_ = DType::kUndefined;
  Shape shape_;
  std::shared_ptr<void> storage_;
  void* data_ = nullptr;
  ValueForm form_ = ValueForm::kTensor;
  bool none_of_sequence_ = false;
  std::shared_ptr<const std::vector<Tensor>> elements_;
};

// "f32[1x3x32x32]", "seq(f32)[3]" (three tensors), "none(f32)"
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
