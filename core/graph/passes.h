// Graph passes that keep semantics: dead-node elimination, Constant promotion, BatchNormalization
// folding and Conv + Add + activation fusion. (Constant folding runs inside Compile, where every
// value's shape is known.)
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/graph/graph.h"
#include "core/status.h"

namespace chipfit {

// The domain of the ops passes create (FusedConv); chipfit's reference kernels implement them.
inline constexpr const char* kChipfitDomain = "com.chipfit";

// How many times each value is read: every input slot of every node, of this graph and of nested
// subgraphs (they read outer values by name), plus one per graph output. A value absent from the
// map has no reader.
std::map<std::string, int> CountValueReaders(const Graph& graph);

// y' = scale · y + shift, the map Mul / Div / Add / Sub (ai.onnx) applies to y when its other operand is
// the constant c (`y_first`: y is the first operand). nullopt for any other op, for c / y (not linear
// in y) and for y / 0.
struct LinearMap {
  double scale = 1.0, shift = 0.0;
};
std::optional<LinearMap> ConstantOperandMap(const Node& op, bool y_first, double c);

// Removes nodes none of whose outputs reach a graph output. Returns how many were removed.
int EliminateDeadNodes(Graph& graph);

// Moves the tensor of each main-graph Constant node (attribute value, value_float(s) or
// value_int(s)) into graph.initializers under the node's output name and drops the node, so passes
// that need initializer weights (FoldBatchNorm, FuseConvActivations) also work on exporters that
// keep weights in Constant nodes (paddle2onnx). An Identity of an initializer (torch.onnx.export's
// form of a parameter equal to another: zero biases, tied weights) becomes an initializer sharing
// its data too. A Constant or Identity whose output is a graph output stays a node; nested
// subgraphs are not touched. Returns how many nodes were promoted.
int PromoteConstantNodes(Graph& graph);

// Folds BatchNormalization (inference form, constant statistics) into the Conv or Gemm that feeds
// it when that node's output has no other reader and its weights are initializers:
//   W' = W · s,  b' = (b − mean) · s + beta,  s = gamma / sqrt(var + eps)   (per output channel).
// The merged node keeps the Conv/Gemm name and lists both ONNX nodes in `covers`.
Result<int> FoldBatchNorm(Graph& graph);

// Folds a per-output-channel affine map that follows a Conv or ConvTranspose into its weights and bias:
//   Mul(y, c) or Mul(c, y)  →  W' = W · c,  b' = b · c
//   Div(y, c)               →  W' = W / c,  b' = b / c
//   Add(y, c), Add(c, y)    →  b' = b + c
//   Sub(y, c) / Sub(c, y)   →  b' = b − c / W' = −W, b' = c − b
//   BatchNormalization(y)   →  inference form with constant statistics, as FoldBatchNorm
// where c is an f32 initializer of one element or of one element per output channel that broadcasts
// along the channel axis only ([M,1,…], [1,M,1,…]; never more dims than y), the layer (ai.onnx) has
// f32 initializer weights and an f32 initializer bias or none, and y has no other reader and is not a
// graph output. Repeats until nothing folds, so Conv → Mul → Add (PP-LCNet's learnable affine blocks)
// and ConvTranspose → Add → BatchNormalization (DB heads) become one layer. The layer keeps its name,
// covers the folded nodes and writes the last one's output; its weights are new initializers (shared
// ones stay as they were). Returns the number of nodes folded.
int FoldAffineIntoConv(Graph& graph);

// Rewrites x + x · s (either operand order; squeeze-and-excitation blocks with a residual, PP-OCR's
// RSE neck) as x · (1 + s): the Mul's place takes a new Add(s, 1) (on s, the small per-channel tensor,
// covering the original Add), the Add's place the Mul(x, 1 + s) with the Mul's name. One pass over x
// instead of two. Only when x and s are described as float32 and x · s has no other reader. Returns the
// number of rewrites.
int FactorResidualScale(Graph& graph);

// Folds a Pad that pads only spatial dims with zeros (constant mode, value 0, constant non-negative
// amounts, any opset form incl. opset 18's axes) into the Conv reading it, when the Conv is its only
// reader: the amounts add to the Conv's pads (auto_pad VALID counts as zeros; SAME_* stays). Converted
// TensorFlow models write such a Pad before every strided convolution. The Conv keeps its name and
// covers the Pad. Returns the number of Pads folded.
int FoldPadIntoConv(Graph& graph);

// Rewrites MatMul(A, W) [→ Add(·, bias)] [→ activation] into one com.chipfit FusedMatMul node:
//   Y = activation(MatMul(A, W) + bias)
// where W is a float32 2-D initializer, bias a float32 [N] initializer, and the activation (attribute
// `activation`) Relu, Gelu (0.5·x·(1 + Erf(x/√2)), as exporters decompose it, the division also as a
// Mul by 1/√2) or GeluTanh (0.5·x·(1 + Tanh(√(2/π)·(x + 0.044715·x³))) with Pow(x, 3)). Every
// intermediate value must have no reader outside the pattern. A MatMul with neither bias nor
// activation stays as it is. The node keeps the MatMul's name and covers the merged nodes. Returns
// the number of rewrites.
int FuseMatMulBiasActivation(Graph& graph);

// The attention products as one kernel each: a MatMul (or FusedMatMul) whose operands are written by a
// Transpose nothing else reads, whose product is scaled by a float32 constant (Div or Mul; only a
// product without bias or activation) and whose result's only reader is a Transpose becomes one
// com.chipfit FusedMatMul with attributes perm_a / perm_b (the operands' permutations), alpha and
// perm_y (the result's), which a device reads and writes through strides instead of copying: the head
// split and merge of multi-head attention (Reshape → Transpose(0, 2, 1, 3) → MatMul, K as
// Transpose(0, 2, 3, 1)) and its 1/√d. Transposes without a `perm` attribute stay. Returns the number
// of rewritten products.
int FoldTransposesIntoMatMul(Graph& graph);

// ShuffleNet's channel shuffle as one com.chipfit ChannelShuffle node (attributes `group` and `shape`
// [N, C, H, W]): Reshape by a constant of positive dims [N, g, C/g, H, W], Transpose(0, 2, 1, 3, 4),
// Reshape to [N, C, H, W] (a constant; 0 and -1 resolved), each intermediate read only by the next node.
// The node reads its input as `shape`, as the first Reshape does, so x's shape need not be known here.
// A device runs it in the order its producer writes (channels-last: a permutation within each pixel)
// instead of reordering to plain for the 5-D transpose and back. The node keeps the first Reshape's name
// and covers all three. Returns the number of rewrites.
int FuseChannelShuffle(Graph& graph);

// Rewrites Conv [→ Add(conv, Z)] [→ activation] into one com.chipfit FusedConv node:
//   Y = activation(Conv(X, W, B) + Z)
// with attribute `activation` (Relu, Clip, LeakyRelu, HardSigmoid, HardSwish, Sigmoid, Tanh; "" for
// none) and `activation_params` (Clip {min, max}, LeakyRelu {alpha}, HardSigmoid {alpha, beta}).
// Activations: those ops, and hard-swish written as x · HardSigmoid(x, 1/6, 1/2) or as
// x · Clip(x + 3, 0, 6) / 6 (or · 1/6); with `swish` (a device whose FusedConv takes it), SiLU
// written as x · Sigmoid(x) becomes activation Swish. Constants (Clip bounds from opset 11, the 3 and 6) must be
// initializers: run PromoteConstantNodes first on models that keep them in Constant nodes.
// A pattern fuses only when its intermediate values have no reader outside it and are not graph
// outputs, the Conv (ai.onnx) has initializer weights, Z is not a constant (a bias-like add stays a
// separate node) and the graph's value descriptions show that adding Z keeps the Conv's output
// shape. The fused node keeps the Conv's name, lists every merged ONNX node in `covers` (after those
// the Conv already covered) and writes the pattern's last output, so readers are unchanged.
// Then what follows a FusedConv joins it: Max / Min with a one-element f32 constant as `clamp_min` /
// `clamp_max` (after the activation), and Mul / Div / Add / Sub by one as `post_scale` / `post_shift`
// (last: Y = post_scale · clamp(activation(·)) + post_shift).
// Returns the number of FusedConv nodes created.
int FuseConvActivations(Graph& graph, bool swish = false);

}  // namespace chipfit
