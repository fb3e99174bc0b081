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
//
// kBlocked8 is oneDNN's nChw8c: channels in blocks of 8, each block an NHW plane of 8-wide vectors.
// It is only ever used for 4-D tensors whose channel count is a multiple of 8, so it holds exactly
// the plain tensor's bytes (no padding) and fits the same buffer.
enum class Layout : uint8_t { kPlain, kChannelsLast, kBlocked8 };

std::string_view LayoutName(Layout layout);  // "plain", "nhwc", "nChw8c"

// Whether a tensor of this shape may be held in `layout` (kBlocked8: rank 4, channels % 8 == 0).
bool LayoutFits(const Shape& shape, Layout layout);

// True when the orders put every element of a tensor of this shape at the same offset (rank other
// than 4, one channel, or 1x1 spatial), so a reorder would copy bytes to where they already are.
// (For kBlocked8, which never holds a tensor whose channels are not a multiple of 8, 1x1 spatial
// is the case that agrees.)
bool LayoutsAgree(const Shape& shape);

// Copies `src` (in order `from`) into `dst` (same dtype and shape, in order `to`).
Status ReorderTensor(const Tensor& src, Layout from, Tensor& dst, Layout to);

}  // namespace chipfit
