// The geometry of Pad and Slice as the reference computes it, for device kernels that copy the same
// elements: per output dim, the input index each output coordinate reads.
#pragma once

#include <vector>

#include "core/runtime/kernel.h"

namespace chipfit {

struct IndexMaps {
  std::vector<std::vector<int64_t>> source{};  // per dim, per output coordinate: input index, -1 = `fill`
  Shape out{};
  double fill = 0;  // Pad's constant value
};

// From the node's constant inputs/attributes (tensor_ops.cpp, the plans RunPad and RunSlice use);
// Unsupported when one is known only at run time.
Result<IndexMaps> PadIndexMaps(InferContext& ctx, const Shape& in);
Result<IndexMaps> SliceIndexMaps(InferContext& ctx, const Shape& in);

}  // namespace chipfit
