// ConvTranspose (1-D as 2-D of height 1) as a gather: each work item sums the input elements whose
// scatter lands on its output element, so no atomics and no zero-fill pass are needed.
//
// Build options: HAS_BIAS.

// global: total rounded up to the work-group size. X [N, C, IH, IW], W [C, M/G, KH, KW],
// Y [N, M, OH, OW]; output row oh receives input row ih through tap kh where
// ih * SH - PH + kh * DH == oh.
__kernel void conv_transpose(__global const store_t* X, __global const store_t* W, __global const store_t* Bias,
                             __global store_t* Y, int total, int C, int M, int G, int IH, int IW, int OH, int OW,
                             int KH, int KW, int SH, int SW, int DH, int DW, int PH, int PW) {
  const int idx = get_global_id(0);
  if (idx >= total) return;
  const int ow = idx % OW;
  const int oh = (idx / OW) % OH;
  const int m = (idx / (OW * OH)) % M;
  const int n = idx / (OW * OH * M);
  const int cg = C / G, mg = M / G;
  const int g = m / mg, mm = m % mg;
  const int in_plane = IH * IW, taps = KH * KW;
  const int x_base = (n * C + g * cg) * in_plane;
  const int w_base = (g * cg * mg + mm) * taps;
  float acc = 0.0f;
  for (int kh = 0; kh < KH; ++kh) {
    const int th = oh + PH - kh * DH;
    if (th < 0 || th % SH != 0) continue;
    const int ih = th / SH;
    if (ih >= IH) continue;
    for (int kw = 0; kw < KW; ++kw) {
      const int tw = ow + PW - kw * DW;
      if (tw < 0 || tw % SW != 0) continue;
      const int iw = tw / SW;
      if (iw >= IW) continue;
      const int x_at = x_base + ih * IW + iw;
      const int w_at = w_base + kh * KW + kw;
      for (int c = 0; c < cg; ++c) acc += LOADF(X, x_at + c * in_plane) * LOADF(W, w_at + c * mg * taps);
    }
  }
#ifdef HAS_BIAS
  acc += LOADF(Bias, m);
#endif
  STOREF(Y, idx, acc);
}
