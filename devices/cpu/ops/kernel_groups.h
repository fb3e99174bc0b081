// Groups of CPU kernels that add themselves to the table in one call each; cpu_kernels.cpp lists the
// groups in order (after the kernels it lists itself, so its entries are tried first).
#pragma once

#include "core/runtime/kernel_table.h"

namespace chipfit::cpu {

// logic_cpu.cpp: Cast, CastLike, Where, comparisons, logical and bitwise ops, Mod, integer
// arithmetic, Pow of mixed dtypes, n-ary Max/Min/Sum/Mean.
void AddLogicKernels(KernelTable& t);

// gather_cpu.cpp: Gather, GatherElements, GatherND, ArgMax/ArgMin, Trilu, Expand, Tile, Split,
// DepthToSpace/SpaceToDepth, OneHot, CumSum, TopK and the other index and shape ops.
void AddIndexKernels(KernelTable& t);

// math_cpu.cpp: the trigonometric and other unary ops oneDNN lacks, PRelu, Shrink, LRN, the log-sum
// reductions.
void AddMathKernels(KernelTable& t);

// einsum_cpu.cpp: Einsum as a permutation or a batched matrix product.
void AddEinsumKernels(KernelTable& t);

// sampling_cpu.cpp: Resize in any mode (after oneDNN's resampling), NonMaxSuppression, GridSample.
void AddSamplingKernels(KernelTable& t);

// loss_cpu.cpp: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
void AddLossKernels(KernelTable& t);

// select_cpu.cpp: Unique, Compress, ReverseSequence, MaxUnpool, Det.
void AddSelectKernels(KernelTable& t);

// signal_cpu.cpp: DFT, STFT and the window generators (Hann, Hamming, Blackman, MelWeightMatrix).
void AddSignalKernels(KernelTable& t);

// roi_cpu.cpp: RoiAlign.
void AddRoiKernels(KernelTable& t);

// text_cpu.cpp: StringNormalizer and TfIdfVectorizer.
void AddTextKernels(KernelTable& t);

// contrib_nn_cpu.cpp, contrib_attention_cpu.cpp, contrib_quant_cpu.cpp: ONNX Runtime's contrib operators
// (domain com.microsoft) that the CPU runs with its own code and oneDNN.
void AddContribNnKernels(KernelTable& t);
void AddContribAttentionKernels(KernelTable& t);
void AddContribQuantKernels(KernelTable& t);

// reference_only_cpu.cpp: ops left to the reference kernels on purpose (random sampling, sequence
// and optional values), as entries whose refusal states why.
void AddReferenceOnlyReasons(KernelTable& t);

}  // namespace chipfit::cpu
