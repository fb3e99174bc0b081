// Helpers shared by reference kernels: broadcasting, axis normalisation, attribute checks.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/runtime/kernel.h"
#include "core/tensor/random.h"
#include "core/tensor/tensor.h"

namespace chipfit {

// Multidirectional (numpy) broadcasting of two shapes; error names both shapes.
Result<Shape> BroadcastShapes(const Shape& a, const Shape& b);
// Broadcast over any number of shapes (Max, Min, Sum, Mean, Where).
Result<Shape> BroadcastShapes(const std::vector<Shape>& shapes);

// Maps a flat index in `out` to the flat index in an input broadcast to `out`.
class BroadcastIndexer {
 public:
  BroadcastIndexer(const Shape& in, const Shape& out);
  int64_t operator()(int64_t flat_out) const;
  bool identity() const { return identity_; }

 private:
  std::vector<int64_t> out_dims_;
  std::vector<int64_t> in_strides_;  // 0 where the input dim is broadcast, aligned to out's rank
  bool identity_ = false;
};

// axis in [-rank, rank) → [0, rank); error names the node and the axis.
Result<int64_t> NormalizeAxis(int64_t axis, int64_t rank, const Node& node);
// Same for a list of axes; duplicates are an error.
Result<std::vector<int64_t>> NormalizeAxes(const std::vector<int64_t>& axes, int64_t rank, const Node& node);

// The stream a node's random draws come from (Random*, Bernoulli, training-mode Dropout): its `seed`
// attribute (a float for the Random ops, an int for Dropout), or without one a hash of its name, so
// every run of a model draws the same values.
SplitMix64 RandomStream(const Node& node);

// For numeric kernels: true for the dtypes in `allowed`.
bool IsOneOf(DType dtype, std::initializer_list<DType> allowed);

// VisitDType for kernels: f(T{}) for every stored dtype; string/undefined fail naming node and dtype.
template <typename F>
Status VisitKernelDType(const Node& node, DType dtype, F&& f) {
  return VisitDType(dtype, [&](auto tag) -> Status {
    if constexpr (std::is_same_v<decltype(tag), std::nullptr_t>) {
      return Unsupported(node.Describe() + ": dtype " + std::string(DTypeName(dtype)) + " is not supported");
    } else {
      return f(tag);
    }
  });
}

// A double computed by a kernel, stored as T. Integers saturate (NaN → 0) instead of invoking
// undefined behaviour; floating types round once.
template <typename T>
T FromDouble(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return T{0};
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else if constexpr (std::is_same_v<T, double>) {
    return v;
  } else {
    return T(static_cast<float>(v));
  }
}

// Shape function for ops whose single output has input 0's dtype and shape (unary math, activations).
Status InferSameAsInput0(InferContext& ctx);

}  // namespace chipfit
