// Element movement by size: ELEM (uchar, ushort, uint, uint2, uint4) is chosen by the host from the
// storage dtype's size (widened over contiguous runs), so every kernel here serves every dtype.

// dst[dst_offset + sum c_k * dst_strides_k] = src[src_offset + sum c_k * src_strides_k] over the
// coordinates c of `dims` (rank <= 16; row-major enumeration). Slice, Split, Concat, Transpose, Expand
// and Tile all run this with their own strides.
__kernel void strided_copy(__global const ELEM* src, __global ELEM* dst, int n, int rank, int16 dims,
                           int16 src_strides, int16 dst_strides, int src_offset, int dst_offset) {
  const int i = (int)get_global_id(0);
  if (i >= n) return;
  int d[16], ss[16], ds[16];
  vstore16(dims, 0, d);
  vstore16(src_strides, 0, ss);
  vstore16(dst_strides, 0, ds);
  int rem = i, from = src_offset, to = dst_offset;
  for (int k = rank - 1; k > 0; --k) {
    const int c = rem % d[k];
    rem /= d[k];
    from += c * ss[k];
    to += c * ds[k];
  }
  from += rem * ss[0];
  to += rem * ds[0];
  dst[to] = src[from];
}

// dst[i] = value for i < n (Dropout's mask).
__kernel void fill(__global ELEM* dst, int n, ELEM value) {
  const int i = (int)get_global_id(0);
  if (i < n) dst[i] = value;
}
