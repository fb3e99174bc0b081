// The reference op families: each returns its rows of the reference op table
// (core/reference/reference_kernels.cpp concatenates them, explicitly, in one place).
#pragma once

#include <vector>

#include "core/runtime/kernel.h"

namespace chipfit {

std::vector<OpEntry> ElementwiseOps();    // elementwise.cpp: unary, binary (broadcasting), logic, Where, Cast
std::vector<OpEntry> ConvOps();           // conv.cpp: Conv, ConvTranspose
std::vector<OpEntry> MatMulOps();         // matmul.cpp: MatMul, Gemm
std::vector<OpEntry> PoolOps();           // pool.cpp: MaxPool, AveragePool, Global*Pool
std::vector<OpEntry> NormalizationOps();  // normalization.cpp: BatchNorm, LayerNorm, InstanceNorm, Softmax …
std::vector<OpEntry> ReduceOps();         // reduce.cpp: Reduce*, ArgMax/ArgMin, TopK, CumSum
std::vector<OpEntry> TensorOps();         // tensor_ops.cpp: Reshape … Gather, Pad, Shape, Constant, Range …
std::vector<OpEntry> ResizeOps();         // resize.cpp: Resize, Upsample
std::vector<OpEntry> LossOps();           // loss.cpp: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
std::vector<OpEntry> LinalgOps();         // linalg.cpp: Einsum, Det
std::vector<OpEntry> SelectionOps();      // selection.cpp: Compress, Unique, ReverseSequence, MaxUnpool, Shrink
std::vector<OpEntry> DetectionOps();      // detection.cpp: NonMaxSuppression, RoiAlign, GridSample
std::vector<OpEntry> SignalOps();         // signal.cpp: DFT, STFT, Hann/Hamming/BlackmanWindow, MelWeightMatrix
std::vector<OpEntry> RecurrentOps();      // rnn.cpp: LSTM, GRU, RNN
std::vector<OpEntry> QuantizeOps();       // quantize.cpp: Quantize/DequantizeLinear, DynamicQuantize, QLinear*
std::vector<OpEntry> TextOps();           // text.cpp: TfIdfVectorizer, StringNormalizer
std::vector<OpEntry> RandomOps();         // random_ops.cpp: RandomUniform, RandomNormal (+Like), Bernoulli
std::vector<OpEntry> ControlFlowOps();    // control_flow.cpp: If, Loop, Scan
std::vector<OpEntry> SequenceOps();       // sequence_ops.cpp: Sequence*, SplitToSequence, ConcatFromSequence, Optional*

// ONNX Runtime's contrib operators (domain com.microsoft, and the few ORT lists under the ONNX domain),
// as ORT's contrib-op documentation defines them; what is not implemented is refused by name.
inline constexpr const char* kMicrosoftDomain = "com.microsoft";
std::vector<OpEntry> ContribNnOps();         // contrib_nn.cpp: Gelu family, BiasAdd, FusedMatMul, FusedConv, *LayerNorm
std::vector<OpEntry> ContribAttentionOps();  // contrib_attention.cpp: Attention, MultiHeadAttention, GQA, Rotary…
std::vector<OpEntry> ContribQuantOps();      // contrib_quant.cpp: MatMulNBits, QGemm, QLinear*, Q/DQ (16-bit) …

// Reshape's output shape for `target` on an input of shape `in`: 0 copies the input's dim unless allowzero,
// one -1 takes what is left (-1 stays where `in` has unknown dims). Also FuseChannelShuffle's test of a
// Reshape's constant target.
Result<Shape> ReshapeTarget(const Node& node, const Shape& in, const std::vector<int64_t>& target, bool allowzero);

// com.chipfit ops that graph passes create (core/graph/passes.h), one row each in the table.
Status InferFusedConv(InferContext& ctx);  // conv.cpp: activation(Conv(X, W, B) + Z)
Status RunFusedConv(KernelContext& ctx);
Status InferFusedMatMul(InferContext& ctx);  // matmul.cpp: activation(MatMul(A, B) + bias)
Status RunFusedMatMul(KernelContext& ctx);
Status InferChannelShuffle(InferContext& ctx);  // tensor_ops.cpp: a grouped channel transpose
Status RunChannelShuffle(KernelContext& ctx);

}  // namespace chipfit
