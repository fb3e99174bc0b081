// Reduce* over any set of axes. The host collapses the input into kept dims (KRANK of them) and
// reduced dims (RRANK), each with its input strides, innermost first (at most 6 each); output value
// o reduces the `count` input values at walk(o, kept) + walk(r, reduced). `reduce_wg` gives each
// output a work group (tree reduction in local memory), `reduce_item` a work item.
// -DOP=R_<NAME>; values are mapped (|v|, v², exp(v − shift)), combined and finished in float.

#define MAX_WG 256

#define R_SUM 1
#define R_MEAN 2
#define R_MAX 3
#define R_MIN 4
#define R_PROD 5
#define R_L1 6
#define R_L2 7
#define R_SUM_SQUARE 8
#define R_LOG_SUM 9
#define R_LOG_SUM_EXP 10

#if OP == R_MAX
#define INIT (-INFINITY)
#define COMBINE(a, b) ((isnan(a) || (a) >= (b)) ? (a) : (b)) /* NaN wins, as numpy */
#elif OP == R_MIN
#define INIT INFINITY
#define COMBINE(a, b) ((isnan(a) || (a) <= (b)) ? (a) : (b))
#elif OP == R_PROD
#define INIT 1.0f
#define COMBINE(a, b) ((a) * (b))
#else
#define INIT 0.0f
#define COMBINE(a, b) ((a) + (b))
#endif

#if OP == R_L1
#define MAP(v) fabs(v)
#elif OP == R_L2 || OP == R_SUM_SQUARE
#define MAP(v) ((v) * (v))
#elif OP == R_LOG_SUM_EXP
#define MAP(v) exp((v) - shift)
#else
#define MAP(v) (v)
#endif

inline float finish(float acc, uint count, float shift) {
#if OP == R_MEAN
  return acc / (float)count;
#elif OP == R_L2
  return sqrt(acc);
#elif OP == R_LOG_SUM
  return log(acc);
#elif OP == R_LOG_SUM_EXP
  return shift + log(acc);
#else
  return acc;
#endif
}

// The input offset of flat index `idx` over `rank` dims (innermost first) with these strides.
inline uint walk(uint idx, uint8 dims, uint8 strides, int rank) {
  const uint d[6] = {dims.s0, dims.s1, dims.s2, dims.s3, dims.s4, dims.s5};
  const uint s[6] = {strides.s0, strides.s1, strides.s2, strides.s3, strides.s4, strides.s5};
  uint offset = 0;
  for (int k = 0; k < rank - 1; ++k) {
    const uint q = idx / d[k];
    offset += (idx - q * d[k]) * s[k];
    idx = q;
  }
  if (rank > 0) offset += idx * s[rank - 1];
  return offset;
}

#define AT(r) (base + walk((r), rdims, rstrides, RRANK))

__kernel void reduce_item(__global const store_t* x, __global store_t* y, uint outputs, uint count, uint8 kdims,
                          uint8 kstrides, uint8 rdims, uint8 rstrides) {
  const size_t gid = get_global_id(0);
  if (gid >= outputs) return;
  const uint o = (uint)gid;
  const uint base = walk(o, kdims, kstrides, KRANK);
  float shift = 0.0f;
#if OP == R_LOG_SUM_EXP
  // exp(v − max) stays finite; an all −inf (or +inf) slice keeps shift 0, as the reference.
  float m = -INFINITY;
  for (uint r = 0; r < count; ++r) m = fmax(m, LOADF(x, AT(r)));
  shift = isfinite(m) ? m : 0.0f;
#endif
  float acc = INIT;
  for (uint r = 0; r < count; ++r) {
    const float v = LOADF(x, AT(r));
    acc = COMBINE(acc, MAP(v));
  }
  STOREF(y, o, finish(acc, count, shift));
}

// The group's combination of v; every item of the group calls it (it has barriers).
inline float group_combine(__local float* scratch, float v, int is_max) {
  const uint lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] = is_max ? fmax(scratch[lid], scratch[lid + s]) : COMBINE(scratch[lid], scratch[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float r = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);  // scratch is reused by the next reduction
  return r;
}

// One work group per output; the local size is a power of two of at most MAX_WG.
__kernel void reduce_wg(__global const store_t* x, __global store_t* y, uint count, uint8 kdims, uint8 kstrides,
                        uint8 rdims, uint8 rstrides) {
  __local float scratch[MAX_WG];
  const uint o = get_group_id(0);
  const uint lid = get_local_id(0), lsize = get_local_size(0);
  const uint base = walk(o, kdims, kstrides, KRANK);
  float shift = 0.0f;
#if OP == R_LOG_SUM_EXP
  float m = -INFINITY;
  for (uint r = lid; r < count; r += lsize) m = fmax(m, LOADF(x, AT(r)));
  m = group_combine(scratch, m, 1);
  shift = isfinite(m) ? m : 0.0f;
#endif
  float acc = INIT;
  for (uint r = lid; r < count; r += lsize) {
    const float v = LOADF(x, AT(r));
    acc = COMBINE(acc, MAP(v));
  }
  acc = group_combine(scratch, acc, 0);
  if (lid == 0) STOREF(y, o, finish(acc, count, shift));
}
