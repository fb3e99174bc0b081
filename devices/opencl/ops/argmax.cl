// ArgMax / ArgMin: one work item per output element walks its `len` values `inner` apart. IN_KIND
// as in compare.cl: K_FLOAT, K_HALF (vload_half) or K_NATIVE (the integer type IN_T). The int64
// output is written as two uints (index, 0), little-endian like every OpenCL host, so the kernel
// needs no 64-bit integers for float inputs. Ties and NaN follow core/reference/reduce.cpp RunArg:
// a value replaces the best only when strictly better, or with SELECT_LAST when the best is not
// strictly better than it.
#define K_FLOAT 0
#define K_HALF 1
#define K_NATIVE 2

#if IN_KIND == K_FLOAT
typedef float in_t;
typedef float val_t;
#define LOAD(p, i) ((p)[i])
#elif IN_KIND == K_HALF
typedef half in_t;
typedef float val_t;
#define LOAD(p, i) vload_half((i), (p))
#else
typedef IN_T in_t;
typedef IN_T val_t;
#define LOAD(p, i) ((p)[i])
#endif

#ifdef IS_MAX
#define BETTER(a, b) ((a) > (b))
#else
#define BETTER(a, b) ((a) < (b))
#endif

__kernel void arg_extreme(__global const in_t* x, __global uint* y, uint n, uint len, uint inner) {
  const size_t gid = get_global_id(0);
  if (gid >= n) return;
  const uint o = (uint)gid / inner;
  const uint i = (uint)gid - o * inner;
  const uint base = o * len * inner + i;
  val_t best = LOAD(x, base);
  uint best_k = 0;
  for (uint k = 1; k < len; ++k) {
    const val_t v = LOAD(x, base + k * inner);
#ifdef SELECT_LAST
    const bool take = BETTER(v, best) || !BETTER(best, v);
#else
    const bool take = BETTER(v, best);
#endif
    if (take) {
      best = v;
      best_k = k;
    }
  }
  vstore2((uint2)(best_k, 0u), gid, y);
}
