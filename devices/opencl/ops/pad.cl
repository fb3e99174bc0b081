// Pad: every output element reads its source coordinate per dim or takes the constant. ELEM (uchar …
// uint4) is chosen by the host from the element size and the constant arrives in the storage type, so
// one kernel serves every dtype. PAD_MODE: 0 constant, 1 edge, 2 reflect, 3 wrap.

__kernel void pad(__global const ELEM* src, __global ELEM* dst, int n, int rank, int8 out_dims, int8 in_dims,
                  int8 begins, ELEM value) {
  const int i = (int)get_global_id(0);
  if (i >= n) return;
  int od[8], id[8], b[8];
  vstore8(out_dims, 0, od);
  vstore8(in_dims, 0, id);
  vstore8(begins, 0, b);
  int rem = i, from = 0, stride = 1;
  for (int k = rank - 1; k >= 0; --k) {
    const int c = rem % od[k];
    rem /= od[k];
    const int len = id[k];
    int s = c - b[k];
    if (s < 0 || s >= len) {
#if PAD_MODE == 0
      dst[i] = value;
      return;
#elif PAD_MODE == 1
      s = clamp(s, 0, len - 1);
#elif PAD_MODE == 2
      if (len == 1) {
        s = 0;
      } else {
        const int period = 2 * (len - 1);
        s = ((s % period) + period) % period;
        if (s >= len) s = period - s;
      }
#else
      s = ((s % len) + len) % len;
#endif
    }
    from += s * stride;
    stride *= len;
  }
  dst[i] = src[from];
}
