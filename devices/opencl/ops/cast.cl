// Cast and CastLike: one element per work item, source and destination chosen by build options.
// SRC_KIND / DST_KIND: K_FLOAT (float buffer), K_HALF (half buffer through vload_half/vstore_half,
// so no cl_khr_fp16 is needed), K_INT (the integer type SRC_T / DST_T) or K_BOOL (uchar 0/1).
// The storage of a float tensor (float, or half under fp16 storage) is resolved on the host.
// Semantics follow core/reference/elementwise.cpp Convert: float → integer truncates toward zero,
// saturates out of range and maps NaN to 0; integer → integer wraps modulo 2^bits; anything → bool
// is "not zero" (NaN is true); float → half rounds to nearest even.
#define K_FLOAT 0
#define K_HALF 1
#define K_INT 2
#define K_BOOL 3

#if SRC_KIND == K_FLOAT
typedef float src_t;
#elif SRC_KIND == K_HALF
typedef half src_t;
#elif SRC_KIND == K_INT
typedef SRC_T src_t;
#else
typedef uchar src_t;
#endif

#if DST_KIND == K_FLOAT
typedef float dst_t;
#elif DST_KIND == K_HALF
typedef half dst_t;
#elif DST_KIND == K_INT
typedef DST_T dst_t;
#else
typedef uchar dst_t;
#endif

__kernel void cast(__global const src_t* x, __global dst_t* y, uint n) {
  const size_t i = get_global_id(0);
  if (i >= n) return;
#if SRC_KIND == K_FLOAT || SRC_KIND == K_HALF
#if SRC_KIND == K_FLOAT
  const float v = x[i];
#else
  const float v = vload_half(i, x);
#endif
#if DST_KIND == K_FLOAT
  y[i] = v;
#elif DST_KIND == K_HALF
  vstore_half_rte(v, i, y);
#elif DST_KIND == K_BOOL
  y[i] = v != 0.0f ? (uchar)1 : (uchar)0;
#else
  // (float)DST_MAX rounds up to 2^k for 32- and 64-bit types: every float at or above it saturates,
  // every float below converts exactly after truncation.
  dst_t r;
  if (isnan(v)) {
    r = (dst_t)0;
  } else if (v <= (float)DST_MIN) {
    r = (dst_t)DST_MIN;
  } else if (v >= (float)DST_MAX) {
    r = (dst_t)DST_MAX;
  } else {
    r = CONVERT_RTZ(v);
  }
  y[i] = r;
#endif
#else  // integer or bool source, widened to long (u64 sources are refused on the host)
#if SRC_KIND == K_BOOL
  const long v = x[i] != 0 ? 1 : 0;
#else
  const long v = (long)x[i];
#endif
#if DST_KIND == K_FLOAT
  y[i] = convert_float_rte(v);
#elif DST_KIND == K_HALF
  // |v| >= 2^24 rounds to float inexactly but overflows half either way: one rounding in effect.
  vstore_half_rte(convert_float_rte(v), i, y);
#elif DST_KIND == K_BOOL
  y[i] = v != 0 ? (uchar)1 : (uchar)0;
#else
  // Through the unsigned type of the destination's width: C99 makes that conversion modular, and
  // AS_DST (as_char, as_int … or nothing for unsigned) reinterprets the bits.
  y[i] = AS_DST((UDST_T)as_ulong(v));
#endif
#endif
}
