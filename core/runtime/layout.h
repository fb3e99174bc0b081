// Memory orders of tensors between kernels, and the reorder between them.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/status.h"
#include "core/tensor/tensor.h"

namespace chipfit {

// ONNX's order is plain (row-major, NCHW for images). A device may keep 4-D activations
// channels-last (NHWC) between its own kernels, where its convolutions are fastest; the executor
// inserts reorders where a reader wants another order. The Tensor's shape stays the ONNX
// (NCHW) shape in both orders: only the placement of elements differs.
enum class Layout : uint8_t { kPlain, kChannelsLast };

std::string_view LayoutName(Layout layout);  // "plain", "nhwc"

// True when both orders put every element of a tensor of this shape at the same offset (rank other
// than 4, one channel, or 1x1 spatial), so a reorder would copy bytes to where they already are.
bool LayoutsAgree(const Shape& shape);

// Copies `src` (in order `from`) into `dst` (same dtype and shape, in order `to`).
Status ReorderTensor(const Tensor& src, Layout from, Tensor& dst, Layout to);

}  // namespace chipfit
