// Comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual), logical ops (And, Or, Xor, Not)
// and IsNaN / IsInf: bool (uchar 0/1) outputs. IN_KIND says how an input element is read: K_FLOAT
// (float buffer), K_HALF (half buffer through vload_half: f16 tensors, f32 under fp16 storage) or
// K_NATIVE (the integer or bool type IN_T). `binary` broadcasts: a kind per input picks its index
// for output index i: i itself (same shape), 0 (one value) or a strided walk over the collapsed
// output dims (innermost first, at most 8).
#define K_FLOAT 0
#define K_HALF 1
#define K_NATIVE 2

#define C_EQUAL 1
#define C_LESS 2
#define C_GREATER 3
#define C_LESS_EQUAL 4
#define C_GREATER_EQUAL 5
#define L_AND 6
#define L_OR 7
#define L_XOR 8
#define U_NOT 9
#define U_ISNAN 10
#define U_ISINF 11

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

#ifdef OP_IS_BINARY
#define KIND_FULL 0
#define KIND_SCALAR 1
#define KIND_STRIDED 2

// The element of an input for output index i. The kind and rank are arguments, not build options,
// so one program per op and dtype serves every broadcast pattern; the branch is uniform.
inline uint input_index(uint i, uint kind, uint rank, uint8 dims, uint8 strides) {
  if (kind == KIND_FULL) return i;
  if (kind == KIND_SCALAR) return 0;
  const uint d[8] = {dims.s0, dims.s1, dims.s2, dims.s3, dims.s4, dims.s5, dims.s6, dims.s7};
  const uint s[8] = {strides.s0, strides.s1, strides.s2, strides.s3,
                     strides.s4, strides.s5, strides.s6, strides.s7};
  uint index = 0;
  for (uint k = 0; k < rank && k < 8; ++k) {
    const uint q = i / d[k];
    index += (i - q * d[k]) * s[k];
    i = q;
  }
  return index;
}

// kinds: (kind of a, kind of b); rank: the number of collapsed dims in `dims` (innermost first).
__kernel void binary(__global uchar* y, uint n, uint8 dims, uint rank, uint2 kinds, __global const in_t* a,
                     uint8 sa, __global const in_t* b, uint8 sb) {
  const size_t gid = get_global_id(0);
  if (gid >= n) return;
  const uint i = (uint)gid;
  const val_t x = LOAD(a, input_index(i, kinds.s0, rank, dims, sa));
  const val_t z = LOAD(b, input_index(i, kinds.s1, rank, dims, sb));
#if OP == C_EQUAL
  const int r = x == z;
#elif OP == C_LESS
  const int r = x < z;
#elif OP == C_GREATER
  const int r = x > z;
#elif OP == C_LESS_EQUAL
  const int r = x <= z;
#elif OP == C_GREATER_EQUAL
  const int r = x >= z;
#elif OP == L_AND
  const int r = x != 0 && z != 0;
#elif OP == L_OR
  const int r = x != 0 || z != 0;
#elif OP == L_XOR
  const int r = (x != 0) != (z != 0);
#else
#error "unknown binary OP"
#endif
  y[i] = r ? (uchar)1 : (uchar)0;
}
#endif  // OP_IS_BINARY

#ifdef OP_IS_UNARY
__kernel void unary(__global const in_t* x, __global uchar* y, uint n) {
  const size_t i = get_global_id(0);
  if (i >= n) return;
  const val_t v = LOAD(x, i);
#if OP == U_NOT
  const int r = v == 0;
#elif OP == U_ISNAN
  const int r = isnan(v);
#elif OP == U_ISINF
  // DETECT_POSITIVE / DETECT_NEGATIVE: the attributes, 0 or 1.
  const int r = isinf(v) && (v > 0.0f ? DETECT_POSITIVE : DETECT_NEGATIVE);
#else
#error "unknown unary OP"
#endif
  y[i] = r ? (uchar)1 : (uchar)0;
}
#endif  // OP_IS_UNARY
