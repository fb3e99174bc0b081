// Resize and Upsample as separable taps: the host computes, per dim and output coordinate, an int4
// (first source offset, second source offset, weight of the second as float bits, outside flag) in
// double precision, the way the reference does; the kernels only combine them. `offsets` says where
// each dim's taps start in the table.

#ifdef ELEM
// Nearest: one source element per output element, moved by size (any dtype); `fill` where the
// coordinate falls outside a tf_crop_and_resize box.
__kernel void resize_nearest(__global const ELEM* src, __global ELEM* dst, __global const int4* taps, int n,
                             int rank, int8 out_dims, int8 offsets, ELEM fill) {
  const int i = (int)get_global_id(0);
  if (i >= n) return;
  int od[8], off[8];
  vstore8(out_dims, 0, od);
  vstore8(offsets, 0, off);
  int rem = i, from = 0;
  for (int k = rank - 1; k >= 0; --k) {
    const int4 t = taps[off[k] + rem % od[k]];
    rem /= od[k];
    if (t.w != 0) {
      dst[i] = fill;
      return;
    }
    from += t.x;
  }
  dst[i] = src[from];
}
#endif

// n-linear: the weighted sum over the two taps of every dim whose weight is not 0 (2^m terms; m is 2
// for bilinear), computed in float and stored through STOREF.
__kernel void resize_linear(__global const store_t* src, __global store_t* dst, __global const int4* taps, int n,
                            int rank, int8 out_dims, int8 offsets, float fill) {
  const int i = (int)get_global_id(0);
  if (i >= n) return;
  int od[8], off[8], delta[8];
  float w[8];
  vstore8(out_dims, 0, od);
  vstore8(offsets, 0, off);
  int rem = i, base = 0, m = 0;
  for (int k = rank - 1; k >= 0; --k) {
    const int4 t = taps[off[k] + rem % od[k]];
    rem /= od[k];
    if (t.w != 0) {
      STOREF(dst, i, fill);
      return;
    }
    base += t.x;
    const float wk = as_float(t.z);
    if (wk != 0.0f) {
      delta[m] = t.y - t.x;
      w[m] = wk;
      ++m;
    }
  }
  float acc = 0.0f;
  for (int mask = 0; mask < (1 << m); ++mask) {
    float weight = 1.0f;
    int at = base;
    for (int j = 0; j < m; ++j) {
      if ((mask >> j) & 1) {
        weight *= w[j];
        at += delta[j];
      } else {
        weight *= 1.0f - w[j];
      }
    }
    acc += weight * LOADF(src, at);
  }
  STOREF(dst, i, acc);
}
