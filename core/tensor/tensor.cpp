// Tensor storage and element access helpers.
#include "core/tensor/tensor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace chipfit {

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeToString(const Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? "x" : "") + std::to_string(shape[i]);
  return out;
}

std::vector<int64_t> Strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) {
    strides[static_cast<size_t>(i)] = strides[static_cast<size_t>(i) + 1] * shape[static_cast<size_t>(i) + 1];
  }
  return strides;
}

Tensor::Tensor(DType dtype, Shape shape) : Tensor(dtype, std::move(shape), true) {}

Tensor Tensor::Uninitialized(DType dtype, Shape shape) { return Tensor(dtype, std::move(shape), false); }

Tensor::Tensor(DType dtype, Shape shape, bool zeroed) : dtype_(dtype), shape_(std::move(shape)) {
  if (dtype_ == DType::kString) {
    auto* strings = new std::string[static_cast<size_t>(std::max<int64_t>(numel(), 1))];
    storage_ = std::shared_ptr<void>(strings, [](void* p) { delete[] static_cast<std::string*>(p); });
    data_ = strings;
    return;
  }
  // 64-byte aligned so vector kernels may use aligned loads; at least one byte so data_ is never null.
  const size_t bytes = (std::max<size_t>(nbytes(), 1) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, bytes);
  if (p == nullptr) throw std::bad_alloc();
  if (zeroed) std::memset(p, 0, bytes);
  storage_ = std::shared_ptr<void>(p, std::free);
  data_ = p;
}

Tensor Tensor::View(DType dtype, Shape shape, void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = data;
  return t;
}

Tensor Tensor::Sequence(DType element_dtype, std::vector<Tensor> elements) {
  for (Tensor& e : elements) {
    if (!e.storage_) e = e.Clone();
  }
  Tensor t;
  t.dtype_ = element_dtype;
  t.shape_ = {0};
  t.form_ = ValueForm::kSequence;
  t.elements_ = std::make_shared<const std::vector<Tensor>>(std::move(elements));
  return t;
}

Tensor Tensor::None(DType element_dtype, bool of_sequence) {
  Tensor t;
  t.dtype_ = element_dtype;
  t.shape_ = {0};
  t.form_ = ValueForm::kNone;
  t.none_of_sequence_ = of_sequence;
  return t;
}

const std::vector<Tensor>& Tensor::elements() const {
  static const std::vector<Tensor> kNoElements;
  return elements_ ? *elements_ : kNoElements;
}

Tensor Tensor::Clone() const {
  if (!is_dense()) return *this;  // elements are owned and immutable
  Tensor copy(dtype_, shape_);
  if (dtype_ == DType::kString) {
    std::copy(data<std::string>(), data<std::string>() + numel(), copy.data<std::string>());
  } else if (nbytes()) {
    std::memcpy(copy.data_, data_, nbytes());
  }
  return copy;
}

Tensor Tensor::Reshaped(Shape shape) const {
  assert(NumElements(shape) == numel());
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

double Tensor::GetAsDouble(int64_t i) const {
  return VisitDType(dtype_, [&](auto tag) -> double {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::nullptr_t>) {
      return 0.0;
    } else {
      return static_cast<double>(static_cast<const T*>(data_)[i]);
    }
  });
}

int64_t Tensor::GetAsInt64(int64_t i) const {
  return VisitDType(dtype_, [&](auto tag) -> int64_t {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::nullptr_t>) {
      return 0;
    } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      return static_cast<int64_t>(static_cast<float>(static_cast<const T*>(data_)[i]));
    } else {
      return static_cast<int64_t>(static_cast<const T*>(data_)[i]);
    }
  });
}

std::vector<int64_t> Tensor::ToInt64Vector() const {
  std::vector<int64_t> out(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) out[static_cast<size_t>(i)] = GetAsInt64(i);
  return out;
}

std::string DescribeTensor(const Tensor& tensor) {
  if (tensor.is_sequence()) {
    return "seq(" + std::string(DTypeName(tensor.dtype())) + ")[" + std::to_string(tensor.elements().size()) + "]";
  }
  if (tensor.is_none()) {
    return std::string(tensor.none_of_sequence() ? "none(seq(" : "none(") + std::string(DTypeName(tensor.dtype())) +
           (tensor.none_of_sequence() ? "))" : ")");
  }
  return std::string(DTypeName(tensor.dtype())) + "[" + ShapeToString(tensor.shape()) + "]";
}

bool IsFloatingDType(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kF16 || dtype == DType::kBF16;
}

bool IsIntegerDType(DType dtype) {
  switch (dtype) {
    case DType::kI8:
    case DType::kU8:
    case DType::kI16:
    case DType::kU16:
    case DType::kI32:
    case DType::kU32:
    case DType::kI64:
    case DType::kU64: return true;
    default: return false;
  }
}

}  // namespace chipfit
