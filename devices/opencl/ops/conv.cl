// Depthwise convolution (group == C == M) as a direct kernel with FusedConv's epilogue; every other
// Conv runs on gemm.cl (1x1 as a plain GEMM, the rest as implicit GEMM).
//
// The epilogue is chosen by arguments as in gemm.cl: `act` (gemm.cl's codes) and `flags`.
#define CF_HAS_BIAS 1
#define CF_HAS_Z 2
#define CF_HAS_CLAMP 4
#define CF_HAS_LINEAR 8

// A copy of gemm.cl's cf_activate (every program is common.cl plus one file): FusedConv's
// activations with the reference's formulas and NaN behaviour.
inline float cf_activate(int act, float x, float p0, float p1) {
  switch (act) {
    case 1: return x < 0.0f ? 0.0f : x;
    case 2: return x < p0 ? p0 : (x > p1 ? p1 : x);
    case 3: return x < 0.0f ? p0 * x : x;
    case 4: return clamp(p0 * x + p1, 0.0f, 1.0f);
    case 5: return x * clamp(x / 6.0f + 0.5f, 0.0f, 1.0f);
    case 6: return 1.0f / (1.0f + exp(-x));
    case 7: return tanh(x);
    default: return x;
  }
}

// One output element per work item; global: total rounded up to the work-group size.
// X [N, C, IH, IW], W [C, 1, KH, KW], Y [N, C, OH, OW]; Z is read at n*zs.s0 + c*zs.s1 + oh*zs.s2 +
// ow*zs.s3 (0 strides broadcast).
__kernel void depthwise(__global const store_t* X, __global const store_t* W, __global const store_t* Bias,
                        __global const store_t* Z, __global store_t* Y, int total, int C, int IH, int IW, int OH,
                        int OW, int KH, int KW, int SH, int SW, int DH, int DW, int PH, int PW, int4 zs, int act,
                        int flags, float p0, float p1, float lo, float hi, float ps, float pt) {
  const int idx = get_global_id(0);
  if (idx >= total) return;
  const int ow = idx % OW;
  const int oh = (idx / OW) % OH;
  const int nc = idx / (OW * OH);
  const int c = nc % C;
  const int n = nc / C;
  const int x_base = nc * IH * IW;
  const int w_base = c * KH * KW;
  const int ih0 = oh * SH - PH, iw0 = ow * SW - PW;
  float acc = 0.0f;
  for (int kh = 0; kh < KH; ++kh) {
    const int ih = ih0 + kh * DH;
    if (ih < 0 || ih >= IH) continue;
    for (int kw = 0; kw < KW; ++kw) {
      const int iw = iw0 + kw * DW;
      if (iw < 0 || iw >= IW) continue;
      acc += LOADF(X, x_base + ih * IW + iw) * LOADF(W, w_base + kh * KW + kw);
    }
  }
  if (flags & CF_HAS_BIAS) acc += LOADF(Bias, c);
  if (flags & CF_HAS_Z) acc += LOADF(Z, n * zs.s0 + c * zs.s1 + oh * zs.s2 + ow * zs.s3);
  acc = cf_activate(act, acc, p0, p1);
  if ((flags & CF_HAS_CLAMP) && !isnan(acc)) acc = fmin(fmax(acc, lo), hi);
  if (flags & CF_HAS_LINEAR) acc = acc * ps + pt;
  STOREF(Y, idx, acc);
}
