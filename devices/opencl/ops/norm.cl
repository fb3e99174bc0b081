// Normalisations. `rownorm`: LayerNormalization (scale and bias along the row: -DSCALE_ONE /
// -DBIAS_ONE when they hold one value, -DHAS_BIAS) and InstanceNormalization (-DPER_CHANNEL: one
// scale and bias per row % channels); a work group per row, mean then variance by tree reductions
// (two passes, so a large mean does not cancel). `batchnorm`: inference BatchNormalization, one
// work item per value.

#define MAX_WG 256

inline float group_sum(__local float* scratch, float v) {
  const uint lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float r = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);  // scratch is reused by the next reduction
  return r;
}

// Where a row element's scale and bias are: one per channel (InstanceNormalization), or for
// LayerNormalization one value (*_ONE), one per element, or a parameter repeating along the row
// (*_MOD: a trailing-dims broadcast, scale_n / bias_n values).
#if defined(PER_CHANNEL)
#define SCALE_AT(row, j) ((row) % channels)
#define BIAS_AT(row, j) ((row) % channels)
#else
#if defined(SCALE_ONE)
#define SCALE_AT(row, j) 0
#elif defined(SCALE_MOD)
#define SCALE_AT(row, j) ((j) % scale_n)
#else
#define SCALE_AT(row, j) (j)
#endif
#if defined(BIAS_ONE)
#define BIAS_AT(row, j) 0
#elif defined(BIAS_MOD)
#define BIAS_AT(row, j) ((j) % bias_n)
#else
#define BIAS_AT(row, j) (j)
#endif
#endif

// Rows of n contiguous values, one work group (a power of two of at most MAX_WG items) per row.
__kernel void rownorm(__global const store_t* x, __global const store_t* scale, __global const store_t* bias,
                      __global store_t* y, uint n, uint channels, uint scale_n, uint bias_n, float epsilon) {
  __local float scratch[MAX_WG];
  const uint row = get_group_id(0);
  const size_t base = (size_t)row * n;
  const uint lid = get_local_id(0), lsize = get_local_size(0);
  float s = 0.0f;
  for (uint j = lid; j < n; j += lsize) s += LOADF(x, base + j);
  const float mean = group_sum(scratch, s) / (float)n;
  float q = 0.0f;
  for (uint j = lid; j < n; j += lsize) {
    const float d = LOADF(x, base + j) - mean;
    q += d * d;
  }
  const float inv_std = 1.0f / sqrt(group_sum(scratch, q) / (float)n + epsilon);
  for (uint j = lid; j < n; j += lsize) {
    float v = (LOADF(x, base + j) - mean) * inv_std * LOADF(scale, SCALE_AT(row, j));
#if defined(HAS_BIAS) || defined(PER_CHANNEL)
    v += LOADF(bias, BIAS_AT(row, j));
#endif
    STOREF(y, base + j, v);
  }
}

// y = (x − mean[p]) / sqrt(var[p] + ε) · scale[p] + bias[p], p = i / plane % count (per channel:
// plane = D1·D2…, count = C; per activation (opset < 9, spatial = 0): plane = 1, count = C·D1…).
__kernel void batchnorm(__global const store_t* x, __global const store_t* scale, __global const store_t* bias,
                        __global const store_t* mean, __global const store_t* var, __global store_t* y, uint total,
                        uint plane, uint count, float epsilon) {
  const size_t gid = get_global_id(0);
  if (gid >= total) return;
  const uint i = (uint)gid;
  const uint p = i / plane % count;
  const float v = (LOADF(x, i) - LOADF(mean, p)) / sqrt(LOADF(var, p) + epsilon) * LOADF(scale, p) + LOADF(bias, p);
  STOREF(y, i, v);
}
