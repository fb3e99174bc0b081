// Softmax and LogSoftmax (-DLOG) along rows of n values: a work group per row when the row is
// contiguous and long (tree reductions in local memory for the max and the sum), otherwise a work
// item per row, rows `inner` apart so neighbouring items read neighbouring values.

#define MAX_WG 256

// The group's maximum or sum of v; every item of the group must call it (it has barriers).
inline float group_max(__local float* scratch, float v) {
  const uint lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] = fmax(scratch[lid], scratch[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float r = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);  // scratch is reused by the next reduction
  return r;
}

inline float group_sum(__local float* scratch, float v) {
  const uint lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float r = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

inline float finish(float v, float max, float sum) {
#ifdef LOG
  return v - max - log(sum);
#else
  return exp(v - max) / sum;
#endif
}

// Contiguous rows of n values, one work group (a power of two of at most MAX_WG items) per row.
__kernel void softmax_wg(__global const store_t* x, __global store_t* y, uint n) {
  __local float scratch[MAX_WG];
  const size_t base = get_group_id(0) * (size_t)n;
  const uint lid = get_local_id(0), lsize = get_local_size(0);
  float m = -INFINITY;
  for (uint j = lid; j < n; j += lsize) m = fmax(m, LOADF(x, base + j));
  m = group_max(scratch, m);
  float s = 0.0f;
  for (uint j = lid; j < n; j += lsize) s += exp(LOADF(x, base + j) - m);
  s = group_sum(scratch, s);
  for (uint j = lid; j < n; j += lsize) STOREF(y, base + j, finish(LOADF(x, base + j), m, s));
}

// Rows of n values spaced `inner` apart, one work item per row (rows = outer × inner).
__kernel void softmax_item(__global const store_t* x, __global store_t* y, uint rows, uint n, uint inner) {
  const size_t r = get_global_id(0);
  if (r >= rows) return;
  const size_t base = r / inner * (size_t)n * inner + r % inner;
  float m = -INFINITY;
  for (uint j = 0; j < n; ++j) m = fmax(m, LOADF(x, base + (size_t)j * inner));
  float s = 0.0f;
  for (uint j = 0; j < n; ++j) s += exp(LOADF(x, base + (size_t)j * inner) - m);
  for (uint j = 0; j < n; ++j) {
    const size_t at = base + (size_t)j * inner;
    STOREF(y, at, finish(LOADF(x, at), m, s));
  }
}
