// MaxPool / AveragePool over 1-D to 3-D windows (one work item per output value; 1-D and 2-D are
// 3-D with leading dims of 1) and the global pools (a work-group tree reduction per (n, c) plane,
// or one work item per plane for small planes). -DPOOL_MAX or -DPOOL_AVG; -DINCLUDE_PAD counts
// explicit padding in the average's divisor (never the ceil_mode overhang, as in ONNX).
// Int4 geometry arguments hold (D, H, W) in .x, .y, .z.

#define MAX_WG 256

#ifdef POOL_MAX
#define POOL_INIT (-INFINITY)
// NaN wins, so that a NaN input is not hidden by the order of the taps.
#define POOL_ADD(acc, v) ((isnan(acc) || (acc) >= (v)) ? (acc) : (v))
#else
#define POOL_INIT 0.0f
#define POOL_ADD(acc, v) ((acc) + (v))
#endif

__kernel void pool(__global const store_t* x, __global store_t* y, uint total, int4 in_sz, int4 out_sz, int4 ksz,
                   int4 stride, int4 dil, int4 pad0, int4 pad1) {
  const size_t gid = get_global_id(0);
  if (gid >= total) return;
  const uint i = (uint)gid;
  const int ow = (int)(i % (uint)out_sz.z);
  const uint r = i / (uint)out_sz.z;
  const int oh = (int)(r % (uint)out_sz.y);
  const uint r2 = r / (uint)out_sz.y;
  const int od = (int)(r2 % (uint)out_sz.x);
  const uint plane = r2 / (uint)out_sz.x;
  const int4 start = (int4)(od, oh, ow, 0) * stride - pad0;
  __global const store_t* xp = x + (size_t)plane * (size_t)(in_sz.x * in_sz.y * in_sz.z);

  float acc = POOL_INIT;
  int found = 0;
  for (int kd = 0; kd < ksz.x; ++kd) {
    const int pd = start.x + kd * dil.x;
    if (pd < 0 || pd >= in_sz.x) continue;
    for (int kh = 0; kh < ksz.y; ++kh) {
      const int ph = start.y + kh * dil.y;
      if (ph < 0 || ph >= in_sz.y) continue;
      const int row = (pd * in_sz.y + ph) * in_sz.z;
      for (int kw = 0; kw < ksz.z; ++kw) {
        const int pw = start.z + kw * dil.z;
        if (pw < 0 || pw >= in_sz.z) continue;
        const float v = LOADF(xp, row + pw);
        acc = POOL_ADD(acc, v);
        ++found;
      }
    }
  }
#ifdef POOL_MAX
  // A window wholly on padding has no value: NaN, as the reference (numpy nanmax).
  STOREF(y, i, found ? acc : NAN);
#else
#ifdef INCLUDE_PAD
  // Taps on explicit (or auto) padding count; taps past the end padding (ceil_mode) do not.
  int count = 1;
  {
    const int4 limit = in_sz + pad1;
    int n;
    n = 0;
    for (int k = 0; k < ksz.x; ++k) n += start.x + k * dil.x < limit.x;
    count *= n;
    n = 0;
    for (int k = 0; k < ksz.y; ++k) n += start.y + k * dil.y < limit.y;
    count *= n;
    n = 0;
    for (int k = 0; k < ksz.z; ++k) n += start.z + k * dil.z < limit.z;
    count *= n;
  }
#else
  const int count = found;
#endif
  STOREF(y, i, acc / (float)count);
#endif
}

#ifdef POOL_AVG
#define GLOBAL_FINISH(acc, n) ((acc) / (float)(n))
#else
#define GLOBAL_FINISH(acc, n) (acc)
#endif

// One work item per plane of `plane` values: small planes, many of them.
__kernel void global_pool_item(__global const store_t* x, __global store_t* y, uint planes, uint plane) {
  const size_t p = get_global_id(0);
  if (p >= planes) return;
  __global const store_t* xp = x + p * plane;
  float acc = POOL_INIT;
  for (uint j = 0; j < plane; ++j) acc = POOL_ADD(acc, LOADF(xp, j));
  STOREF(y, p, GLOBAL_FINISH(acc, plane));
}

// One work group per plane; the local size is a power of two of at most MAX_WG.
__kernel void global_pool_wg(__global const store_t* x, __global store_t* y, uint plane) {
  __local float scratch[MAX_WG];
  const size_t p = get_group_id(0);
  const uint lid = get_local_id(0), lsize = get_local_size(0);
  __global const store_t* xp = x + p * plane;
  float acc = POOL_INIT;
  for (uint j = lid; j < plane; j += lsize) acc = POOL_ADD(acc, LOADF(xp, j));
  scratch[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = lsize / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] = POOL_ADD(scratch[lid], scratch[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) STOREF(y, p, GLOBAL_FINISH(scratch[0], plane));
}
