// Helpers shared by reference kernels: broadcasting, axis normalisation, attribute checks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/runtime/kernel.h"
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

// For numeric kernels: true for the dtypes in `allowed`.
bool IsOneOf(DType dtype, std::initializer_list<DType> allowed);

// Shape function for ops whose single output has input 0's dtype and shape (unary math, activations).
Status InferSameAsInput0(InferContext& ctx);

}  // namespace chipfit
