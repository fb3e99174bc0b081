// Gather along one axis with indices read on the device. ELEM (uchar … uint4, widened over the inner
// block) and INDEX (int or long) are chosen by the host. Negative indices count from the end; an index
// outside [-dim, dim) yields zero bytes (a kernel cannot fail; constant indices are checked at Init).

// data viewed as outer x axis_dim x inner, dst as outer x count x inner (count = number of indices).
__kernel void gather(__global const ELEM* src, __global const INDEX* indices, __global ELEM* dst, int n, int inner,
                     int count, int axis_dim) {
  const int i = (int)get_global_id(0);
  if (i >= n) return;
  const int r = i % inner;
  const int t = i / inner;
  const int j = t % count;
  const int o = t / count;
  long idx = (long)indices[j];
  if (idx < 0) idx += axis_dim;
  if (idx >= 0 && idx < axis_dim) {
    dst[i] = src[(o * axis_dim + (int)idx) * inner + r];
  } else {
    dst[i] = (ELEM)(0);
  }
}
