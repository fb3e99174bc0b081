// NCHW ↔ NHWC reorders for any element size.
#include "core/runtime/layout.h"

#include <cstring>

namespace chipfit {
namespace {

// dst[n][s][c] = src[n][c][s] for `rows` = C, `cols` = H·W per image (and the reverse by swapping).
template <typename T>
void Transpose(const T* src, T* dst, int64_t images, int64_t rows, int64_t cols) {
#pragma omp parallel for collapse(2) schedule(static) if (images * rows * cols > 16384)
  for (int64_t n = 0; n < images; ++n) {
    for (int64_t r = 0; r < rows; ++r) {
      const T* s = src + (n * rows + r) * cols;
      T* d = dst + n * rows * cols + r;
      for (int64_t c = 0; c < cols; ++c) d[c * rows] = s[c];
    }
  }
}

template <typename T>
void TransposeImages(const Tensor& src, Tensor& dst, bool to_channels_last) {
  const int64_t n = src.dim(0), c = src.dim(1), hw = src.dim(2) * src.dim(3);
  const T* s = static_cast<const T*>(src.raw_data());
  T* d = static_cast<T*>(dst.raw_data());
  if (to_channels_last) {
    Transpose(s, d, n, c, hw);
  } else {
    Transpose(s, d, n, hw, c);
  }
}

}  // namespace

std::string_view LayoutName(Layout layout) { return layout == Layout::kPlain ? "plain" : "nhwc"; }

bool LayoutsAgree(const Shape& shape) { return shape.size() != 4 || shape[1] == 1 || shape[2] * shape[3] == 1; }

Status ReorderTensor(const Tensor& src, Layout from, Tensor& dst, Layout to) {
  if (src.dtype() != dst.dtype() || src.shape() != dst.shape()) {
    return Internal("reorder between " + DescribeTensor(src) + " and " + DescribeTensor(dst));
  }
  if (from == to || LayoutsAgree(src.shape())) {
    if (dst.raw_data() != src.raw_data()) std::memcpy(dst.raw_data(), src.raw_data(), src.nbytes());
    return Status();
  }
  const bool to_nhwc = to == Layout::kChannelsLast;
  switch (DTypeSize(src.dtype())) {
    case 1: TransposeImages<uint8_t>(src, dst, to_nhwc); break;
    case 2: TransposeImages<uint16_t>(src, dst, to_nhwc); break;
    case 4: TransposeImages<uint32_t>(src, dst, to_nhwc); break;
    case 8: TransposeImages<uint64_t>(src, dst, to_nhwc); break;
    default: return Unsupported("reorder of " + DescribeTensor(src));
  }
  return Status();
}

}  // namespace chipfit
