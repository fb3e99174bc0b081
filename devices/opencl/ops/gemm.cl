// Tiled batched GEMM Y = act(alpha * A·B + beta * C + Z) with local-memory tiles and a register
// block per work item; serves MatMul, Gemm, 1x1 Conv and (CONV_B: B read as im2col on the fly) Conv.
//
// Build options (all optional): TM, TN (work-group tile of Y), TK (depth of one local tile), RM, RN
// (register block per work item: the work group is TN/RN x TM/RM), A_KFAST / B_NFAST (which index of
// A / B is contiguous in memory, so that neighbouring work items load neighbouring addresses),
// CONV_B. The epilogue is chosen by arguments, not build options: a branch per output element
// costs nothing next to the K loop, and every combination would otherwise be a program build of
// its own. `act`: 0 none, 1 Relu, 2 Clip, 3 LeakyRelu, 4 HardSigmoid, 5 HardSwish, 6 Sigmoid,
// 7 Tanh; `flags`: CF_HAS_C, CF_HAS_Z, CF_HAS_CLAMP, CF_HAS_LINEAR (· ps + pt, last).
#ifndef TM
#define TM 64
#endif
#ifndef TN
#define TN 64
#endif
#ifndef TK
#define TK 16
#endif
#ifndef RM
#define RM 4
#endif
#ifndef RN
#define RN 4
#endif
#ifndef A_KFAST
#define A_KFAST 1
#endif
#ifndef B_NFAST
#define B_NFAST 1
#endif
#define CF_HAS_C 1
#define CF_HAS_Z 2
#define CF_HAS_CLAMP 4
#define CF_HAS_LINEAR 8

#define WX (TN / RN)
#define WY (TM / RM)
#define WG (WX * WY)

// The activations of FusedConv with the reference's formulas and NaN behaviour (conv.cl keeps a
// copy: every program is common.cl plus one file).
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

// Offset of batch `b` (row-major over dims.s0..s3) in a tensor with per-dim strides `s` (0 where
// that tensor is broadcast).
inline int batch_offset(int b, int4 dims, int4 s) {
  int off = 0;
  int i = b % dims.s3;
  b /= dims.s3;
  off += i * s.s3;
  i = b % dims.s2;
  b /= dims.s2;
  off += i * s.s2;
  i = b % dims.s1;
  b /= dims.s1;
  off += i * s.s1;
  return off + b * s.s0;
}

// global: (ceil(N / TN) * WX, ceil(M / TM) * WY, batches); local: (WX, WY, 1).
// conv: for CONV_B, B is X of one image and group ([C/group, IH, IW] from b's batch offset),
// K = C/group * KH * KW and N = OH * OW, read through two tables the host computes once, so the
// tile loads do no integer division (four per element before: they dominated the convolutions on
// CPU devices): KTAB[k] = {c·IH·IW + kh·DH·IW + kw·DW, kh·DH, kw·DW, 0} and
// NTAB[n] = {oh·SH − PH, ow·SW − PW}.
__kernel __attribute__((reqd_work_group_size(WX, WY, 1))) void gemm(
    __global const store_t* A, __global const store_t* B, __global const store_t* C, __global const store_t* Z,
    __global store_t* Y, __global const int4* KTAB, __global const int2* NTAB, int M, int N, int K, int4 bdims,
    int4 a_bs, int4 b_bs, int4 c_bs, int4 z_bs, int4 y_bs, int a_sm, int a_sk, int b_sk, int b_sn, int c_sm, int c_sn,
    int z_sm, int z_shi, int z_slo, int z_div, int y_sm, float alpha, float beta, int act, int flags, float p0,
    float p1, float lo, float hi, float ps, float pt, int IH, int IW, int KH, int KW, int OW, int SH, int SW, int DH,
    int DW, int PH, int PW) {
  __local float As[TK][TM + 1];
  __local float Bs[TK][TN + 1];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int lid = ty * WX + tx;
  const int n0 = get_group_id(0) * TN, m0 = get_group_id(1) * TM;
  const int b = get_global_id(2);
  const int a_off = batch_offset(b, bdims, a_bs);
  const int b_off = batch_offset(b, bdims, b_bs);

  float acc[RM][RN];
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < K; k0 += TK) {
    for (int i = lid; i < TM * TK; i += WG) {
#if A_KFAST
      const int kk = i % TK, mm = i / TK;
#else
      const int mm = i % TM, kk = i / TM;
#endif
      const int gm = m0 + mm, gk = k0 + kk;
      As[kk][mm] = (gm < M && gk < K) ? LOADF(A, a_off + gm * a_sm + gk * a_sk) : 0.0f;
    }
    for (int i = lid; i < TN * TK; i += WG) {
#if B_NFAST
      const int nn = i % TN, kk = i / TN;
#else
      const int kk = i % TK, nn = i / TK;
#endif
      const int gn = n0 + nn, gk = k0 + kk;
      float v = 0.0f;
      if (gn < N && gk < K) {
#ifdef CONV_B
        const int4 kt = KTAB[gk];
        const int2 nt = NTAB[gn];
        const int ih = nt.x + kt.y, iw = nt.y + kt.z;
        if (ih >= 0 && ih < IH && iw >= 0 && iw < IW) v = LOADF(B, b_off + kt.x + nt.x * IW + nt.y);
#else
        v = LOADF(B, b_off + gk * b_sk + gn * b_sn);
#endif
      }
      Bs[kk][nn] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < TK; ++kk) {
      float a[RM], bv[RN];
      for (int i = 0; i < RM; ++i) a[i] = As[kk][ty + i * WY];
      for (int j = 0; j < RN; ++j) bv[j] = Bs[kk][tx + j * WX];
      for (int i = 0; i < RM; ++i)
        for (int j = 0; j < RN; ++j) acc[i][j] += a[i] * bv[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  const int y_off = batch_offset(b, bdims, y_bs);
  const int c_off = batch_offset(b, bdims, c_bs);
  const int z_off = batch_offset(b, bdims, z_bs);
  for (int i = 0; i < RM; ++i) {
    const int m = m0 + ty + i * WY;
    if (m >= M) continue;
    for (int j = 0; j < RN; ++j) {
      const int n = n0 + tx + j * WX;
      if (n >= N) continue;
      float v = alpha * acc[i][j];
      if (flags & CF_HAS_C) v += beta * LOADF(C, c_off + m * c_sm + n * c_sn);
      if (flags & CF_HAS_Z) v += LOADF(Z, z_off + m * z_sm + (n / z_div) * z_shi + (n % z_div) * z_slo);
      v = cf_activate(act, v, p0, p1);
      if ((flags & CF_HAS_CLAMP) && !isnan(v)) v = fmin(fmax(v, lo), hi);
      if (flags & CF_HAS_LINEAR) v = v * ps + pt;
      STOREF(Y, y_off + m * y_sm + n, v);
    }
  }
}
