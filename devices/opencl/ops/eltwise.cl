// Elementwise ops as one generated family: `unary` applies the function chosen by -DOP=U_<NAME>;
// `nary` combines NIN broadcast inputs (2 for Add … PRelu, up to 8 for Sum/Max/Min/Mean, 3 for
// Where) with the operator chosen by -DOP=B_<NAME>. How input k is indexed is a build option too
// (-DKIND<k>=...): the output index itself (same shape), 0 (one value), (i / inner) % count (the
// input spans one run of output dims: a bias per channel) or a strided walk over the collapsed
// output dims (-DRANK of them, at most 6), so the common cases cost no divisions.

// ---- unary functions (computed in real_t; constants cast so half arithmetic stays half)
#define U_RELU 1
#define U_LEAKY_RELU 2
#define U_CLIP 3
#define U_SIGMOID 4
#define U_HARD_SIGMOID 5
#define U_HARD_SWISH 6
#define U_TANH 7
#define U_ELU 8
#define U_SELU 9
#define U_CELU 10
#define U_GELU 11
#define U_GELU_TANH 12
#define U_EXP 13
#define U_LOG 14
#define U_SQRT 15
#define U_ABS 16
#define U_NEG 17
#define U_SOFTPLUS 18
#define U_MISH 19
#define U_ROUND 20
#define U_RECIPROCAL 21
#define U_ERF 22
#define U_SOFTSIGN 23
#define U_FLOOR 24
#define U_CEIL 25
#define U_THRESHOLDED_RELU 26
#define U_SIGN 27
#define U_SIN 28
#define U_COS 29
#define U_TAN 30
#define U_ASIN 31
#define U_ACOS 32
#define U_ATAN 33
#define U_SINH 34
#define U_COSH 35
#define U_ASINH 36
#define U_ACOSH 37
#define U_ATANH 38
#define U_POW_SCALAR 39 /* x^alpha for a constant exponent */
#define U_SQUARE 40     /* Pow with exponent 2 */
#define U_CUBE 41       /* Pow with exponent 3 */
#define U_IDENTITY 42   /* Sum, Max … of one input */

#define B_ADD 1
#define B_SUB 2
#define B_MUL 3
#define B_DIV 4
#define B_POW 5
#define B_MAX 6
#define B_MIN 7
#define B_PRELU 8
#define B_WHERE 9

#define KIND_FULL 0
#define KIND_SCALAR 1
#define KIND_RUN 2
#define KIND_STRIDED 3

#define R(c) ((real_t)(c))

inline real_t softplus_r(real_t x) { return x > R(0) ? x + log1p(exp(-x)) : log1p(exp(x)); }

#ifdef OP_IS_UNARY
inline real_t unary_op(real_t x, real_t alpha, real_t beta, real_t gamma) {
#if OP == U_RELU
  return x < R(0) ? R(0) : x;  // NaN passes, as in the reference
#elif OP == U_LEAKY_RELU
  return x < R(0) ? alpha * x : x;
#elif OP == U_CLIP
  // Bounds applied one after the other: min > max gives max (the spec's Min(max, Max(x, min))).
  real_t v = x < alpha ? alpha : x;
  return v > beta ? beta : v;
#elif OP == U_SIGMOID
  return R(1) / (R(1) + exp(-x));
#elif OP == U_HARD_SIGMOID
  real_t v = alpha * x + beta;
  v = v < R(0) ? R(0) : v;
  return v > R(1) ? R(1) : v;
#elif OP == U_HARD_SWISH
  real_t v = x / R(6) + R(0.5f);
  v = v < R(0) ? R(0) : v;
  return x * (v > R(1) ? R(1) : v);
#elif OP == U_TANH
  return tanh(x);
#elif OP == U_ELU
  return x < R(0) ? alpha * expm1(x) : x;
#elif OP == U_SELU
  return x <= R(0) ? gamma * alpha * expm1(x) : gamma * x;
#elif OP == U_CELU
  const real_t neg = alpha * expm1(x / alpha);
  return (x > R(0) ? x : R(0)) + (neg < R(0) ? neg : R(0));
#elif OP == U_GELU
  // 0.5·x·(1 + erf(x/√2)) with erfc: 1 + erf cancels for negative x.
  return R(0.5f) * x * erfc(x * R(-0.70710678118654752f));
#elif OP == U_GELU_TANH
  // 0.5·x·(1 + tanh(u)) = x / (1 + exp(-2u)), without the cancellation for negative x.
  return x / (R(1) + exp(R(-1.5957691216057308f) * (x + R(0.044715f) * x * x * x)));
#elif OP == U_EXP
  return exp(x);
#elif OP == U_LOG
  return log(x);
#elif OP == U_SQRT
  return sqrt(x);
#elif OP == U_ABS
  return fabs(x);
#elif OP == U_NEG
  return -x;
#elif OP == U_SOFTPLUS
  return softplus_r(x);
#elif OP == U_MISH
  return x * tanh(softplus_r(x));
#elif OP == U_ROUND
  return rint(x);  // the default rounding mode: halves to even, as ONNX Round
#elif OP == U_RECIPROCAL
  return R(1) / x;
#elif OP == U_ERF
  return erf(x);
#elif OP == U_SOFTSIGN
  return x / (R(1) + fabs(x));
#elif OP == U_FLOOR
  return floor(x);
#elif OP == U_CEIL
  return ceil(x);
#elif OP == U_THRESHOLDED_RELU
  return x > alpha ? x : R(0);
#elif OP == U_SIGN
  return x > R(0) ? R(1) : x < R(0) ? R(-1) : x;  // keeps zero and NaN
#elif OP == U_SIN
  return sin(x);
#elif OP == U_COS
  return cos(x);
#elif OP == U_TAN
  return tan(x);
#elif OP == U_ASIN
  return asin(x);
#elif OP == U_ACOS
  return acos(x);
#elif OP == U_ATAN
  return atan(x);
#elif OP == U_SINH
  return sinh(x);
#elif OP == U_COSH
  return cosh(x);
#elif OP == U_ASINH
  return asinh(x);
#elif OP == U_ACOSH
  return acosh(x);
#elif OP == U_ATANH
  return atanh(x);
#elif OP == U_POW_SCALAR
  return pow(x, alpha);
#elif OP == U_SQUARE
  return x * x;
#elif OP == U_CUBE
  return x * x * x;
#elif OP == U_IDENTITY
  return x;
#else
#error "unknown unary OP"
#endif
}

__kernel void unary(__global const store_t* x, __global store_t* y, uint n, float alpha, float beta, float gamma) {
  const size_t i = get_global_id(0);
  if (i >= n) return;
  STOREF(y, i, unary_op(LOADF(x, i), (real_t)alpha, (real_t)beta, (real_t)gamma));
}
#endif  // OP_IS_UNARY

#ifdef OP_IS_NARY
// Variadic ops accumulate in float (several roundings in half would add up); two-input ops work in
// real_t like the unary ones.
#if NIN > 2
typedef float calc_t;
#else
typedef real_t calc_t;
#endif
#define C(c) ((calc_t)(c))

inline calc_t combine(calc_t a, calc_t b) {
#if OP == B_ADD
  return a + b;
#elif OP == B_SUB
  return a - b;
#elif OP == B_MUL
  return a * b;
#elif OP == B_DIV
  return a / b;
#elif OP == B_POW
  return pow(a, b);
#elif OP == B_MAX
  return (isnan(a) || a >= b) ? a : b;  // NaN wins, as numpy.maximum
#elif OP == B_MIN
  return (isnan(a) || a <= b) ? a : b;
#elif OP == B_PRELU
  return a < C(0) ? b * a : a;
#elif OP == B_WHERE
  return a;  // not used: Where selects
#else
#error "unknown n-ary OP"
#endif
}

// Output coordinates along the collapsed dims (innermost first), only where an input walks them.
#if defined(NEED_COORDS)
#define COORDS_DECL uint c[6] = {0, 0, 0, 0, 0, 0};
inline void unravel(uint i, uint8 dims, uint* c) {
  uint r = i;
  const uint d[6] = {dims.s0, dims.s1, dims.s2, dims.s3, dims.s4, dims.s5};
  for (int k = 0; k < RANK - 1; ++k) {
    const uint q = r / d[k];
    c[k] = r - q * d[k];
    r = q;
  }
  c[RANK - 1] = r;
}
inline uint strided(const uint* c, uint8 s) {
  return c[0] * s.s0 + c[1] * s.s1 + c[2] * s.s2 + c[3] * s.s3 + c[4] * s.s4 + c[5] * s.s5;
}
#else
#define COORDS_DECL
#endif

// The element of input k for output index i; s holds (inner, count) for a run, strides if strided.
#define INDEX_0(i, s) (i)
#define INDEX_1(i, s) 0u
#define INDEX_2(i, s) (((i) / (s).s0) % (s).s1)
#define INDEX_3(i, s) strided(c, s)
#define INDEX_OF(kind, i, s) INDEX_OF_(kind, i, s)
#define INDEX_OF_(kind, i, s) INDEX_##kind(i, s)

#define IN_ARG(k) , __global const store_t *x##k, uint8 s##k
#define LOAD_IN(k) ((calc_t)LOADF(x##k, INDEX_OF(KIND##k, i, s##k)))

__kernel void nary(__global store_t* y, uint n, uint8 dims, float scale
#if OP == B_WHERE
                   , __global const uchar* x0, uint8 s0
#else
                   IN_ARG(0)
#endif
                   IN_ARG(1)
#if NIN > 2
                   IN_ARG(2)
#endif
#if NIN > 3
                   IN_ARG(3)
#endif
#if NIN > 4
                   IN_ARG(4)
#endif
#if NIN > 5
                   IN_ARG(5)
#endif
#if NIN > 6
                   IN_ARG(6)
#endif
#if NIN > 7
                   IN_ARG(7)
#endif
) {
  const size_t gid = get_global_id(0);
  if (gid >= n) return;
  const uint i = (uint)gid;
  COORDS_DECL
#if defined(NEED_COORDS)
  unravel(i, dims, c);
#endif
#if OP == B_WHERE
  const calc_t v = x0[INDEX_OF(KIND0, i, s0)] ? LOAD_IN(1) : LOAD_IN(2);
#else
  calc_t v = combine(LOAD_IN(0), LOAD_IN(1));
#if NIN > 2
  v = combine(v, LOAD_IN(2));
#endif
#if NIN > 3
  v = combine(v, LOAD_IN(3));
#endif
#if NIN > 4
  v = combine(v, LOAD_IN(4));
#endif
#if NIN > 5
  v = combine(v, LOAD_IN(5));
#endif
#if NIN > 6
  v = combine(v, LOAD_IN(6));
#endif
#if NIN > 7
  v = combine(v, LOAD_IN(7));
#endif
#endif
#ifdef SCALE_RESULT
  v = v * (calc_t)scale;  // Mean: the sum over NIN inputs
#endif
  STOREF(y, i, v);
}
#endif  // OP_IS_NARY
