// EstimateCost against hand-computed FLOPs and bytes: one table row per op formula of cost.h, with the
// arithmetic written out so that a failing row shows which term is off.
#include "core/runtime/cost.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "core/graph/passes.h"

namespace chipfit {
namespace {

ValueInfo Value(DType dtype, Shape shape) {
  ValueInfo v;
  v.dtype = dtype;
  v.shape = std::move(shape);
  return v;
}
ValueInfo F32(Shape shape) { return Value(DType::kF32, std::move(shape)); }
ValueInfo F16(Shape shape) { return Value(DType::kF16, std::move(shape)); }
ValueInfo I8(Shape shape) { return Value(DType::kI8, std::move(shape)); }
ValueInfo U8(Shape shape) { return Value(DType::kU8, std::move(shape)); }
ValueInfo I32(Shape shape) { return Value(DType::kI32, std::move(shape)); }
ValueInfo I64(Shape shape) { return Value(DType::kI64, std::move(shape)); }

// An omitted optional input: the node names it "" and EstimateCost receives nullptr.
constexpr std::nullopt_t kAbsent = std::nullopt;

Attribute Int(int64_t i) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = i;
  return a;
}
Attribute Ints(std::vector<int64_t> ints) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(ints);
  return a;
}
Attribute Float(float f) {
  Attribute a;
  a.kind = Attribute::Kind::kFloat;
  a.f = f;
  return a;
}
Attribute Str(std::string s) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = std::move(s);
  return a;
}

struct CostCase {
  std::string name;
  std::string op;
  std::map<std::string, Attribute> attributes = {};
  std::vector<std::optional<ValueInfo>> inputs;
  // What the shape function describes, omitted optional outputs included (InferContext sizes its
  // outputs to the node's, and an op may describe one the node names "").
  std::vector<ValueInfo> outputs;
  std::vector<size_t> omitted_outputs = {};  // outputs the node names ""
  int64_t flops = 0;
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  std::string domain = "";  // com.microsoft for ONNX Runtime's contrib ops
};

// Names the case in gtest's messages instead of dumping its bytes.
void PrintTo(const CostCase& c, std::ostream* os) { *os << c.name << " (" << c.op << ")"; }

Node MakeNode(const CostCase& c) {
  Node node;
  node.name = c.name;
  node.op_type = c.op;
  if (c.op == "FusedConv") node.domain = kChipfitDomain;
  if (!c.domain.empty()) node.domain = c.domain;
  node.attributes = c.attributes;
  for (size_t i = 0; i < c.inputs.size(); ++i) node.inputs.push_back(c.inputs[i] ? "in" + std::to_string(i) : "");
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    bool omitted = false;
    for (size_t o : c.omitted_outputs) omitted = omitted || o == i;
    node.outputs.push_back(omitted ? "" : "out" + std::to_string(i));
  }
  return node;
}

KernelCost Estimate(const CostCase& c) {
  std::vector<const ValueInfo*> inputs;
  for (const std::optional<ValueInfo>& in : c.inputs) inputs.push_back(in ? &*in : nullptr);
  return EstimateCost(MakeNode(c), inputs, c.outputs);
}

// Shorthands in the comments: y = output elements; bytes are elements × dtype size
// (f32 4, f16 2, i8/u8 1, i32 4, i64 8).
std::vector<CostCase> Cases() {
  return {
      // --- ONNX Runtime's contrib matrix products (com.microsoft) -------------------------------------
      // Attention: x [2,8,16] projected by W [16,48]: 2·16 tokens·16·48 = 24576; then Q·Kᵀ and weights·V
      // over 8 keys with q and v 16 wide each: 2·16·8·32 = 8192; 32768 in all.
      // read (x 256 + W 768 + bias 48)·4 = 4288; written 256·4 = 1024.
      {.name = "ContribAttention",
       .op = "Attention",
       .attributes = {{"num_heads", Int(2)}},
       .inputs = {F32({2, 8, 16}), F32({16, 48}), F32({48})},
       .outputs = {F32({2, 8, 16})},
       .flops = 32768,
       .bytes_read = 4288,
       .bytes_written = 1024,
       .domain = "com.microsoft"},
      // MatMulNBits A [3,64] × 4-bit B (N 32, 2 blocks of 16 bytes): 2·96·64 = 12288.
      // read A 192·4 + B 1024 + scales 64·4 = 2048; written 96·4 = 384.
      {.name = "ContribMatMulNBits",
       .op = "MatMulNBits",
       .attributes = {{"K", Int(64)}, {"N", Int(32)}, {"bits", Int(4)}, {"block_size", Int(32)}},
       .inputs = {F32({3, 64}), U8({32, 2, 16}), F32({64})},
       .outputs = {F32({3, 32})},
       .flops = 12288,
       .bytes_read = 2048,
       .bytes_written = 384,
       .domain = "com.microsoft"},
      // GroupQueryAttention: 4 query heads of 16 over T = 10 keys (present_key [1,2,10,16]): Q·Kᵀ and
      // weights·V, 2·2·10·(4 tokens·64) = 10240. read (q 256 + k 128 + v 128)·4 = 2048; written
      // (256 + 320 + 320)·4 = 3584.
      {.name = "ContribGroupQueryAttention",
       .op = "GroupQueryAttention",
       .attributes = {{"num_heads", Int(4)}, {"kv_num_heads", Int(2)}},
       .inputs = {F32({1, 4, 64}), F32({1, 4, 32}), F32({1, 4, 32})},
       .outputs = {F32({1, 4, 64}), F32({1, 2, 10, 16}), F32({1, 2, 10, 16})},
       .flops = 10240,
       .bytes_read = 2048,
       .bytes_written = 3584,
       .domain = "com.microsoft"},
      // --- Conv: 2·N·Cout·Hout·Wout·(Cin/g)·kh·kw (+ y for the bias) ---------------------------------
      // y = 1·8·14·14 = 1568; 2·1·8·14·14·(3/1)·3·3 = 2·1568·27 = 84672.
      // read (X 3·16·16 = 768 + W 8·3·3·3 = 216)·4 = 3936; written 1568·4 = 6272.
      {.name = "ConvPlain",
       .op = "Conv",
       .attributes = {{"kernel_shape", Ints({3, 3})}},
       .inputs = {F32({1, 3, 16, 16}), F32({8, 3, 3, 3})},
       .outputs = {F32({1, 8, 14, 14})},
       .flops = 84672,
       .bytes_read = 3936,
       .bytes_written = 6272},
      // 84672 + y 1568 for the bias = 86240; read (768 + 216 + B 8)·4 = 3968; written 6272.
      {.name = "ConvWithBias",
       .op = "Conv",
       .attributes = {{"kernel_shape", Ints({3, 3})}},
       .inputs = {F32({1, 3, 16, 16}), F32({8, 3, 3, 3}), F32({8})},
       .outputs = {F32({1, 8, 14, 14})},
       .flops = 86240,
       .bytes_read = 3968,
       .bytes_written = 6272},
      // group 2, W [6, 4/2, 3, 3]: y = 6·8·8 = 384; 2·1·6·8·8·(4/2)·3·3 = 2·384·18 = 13824.
      // read (X 4·10·10 = 400 + W 6·2·9 = 108)·4 = 2032; written 384·4 = 1536.
      {.name = "ConvGrouped",
       .op = "Conv",
       .attributes = {{"group", Int(2)}, {"kernel_shape", Ints({3, 3})}},
       .inputs = {F32({1, 4, 10, 10}), F32({6, 2, 3, 3})},
       .outputs = {F32({1, 6, 8, 8})},
       .flops = 13824,
       .bytes_read = 2032,
       .bytes_written = 1536},
      // Depthwise in f16, group 8, pads 1, bias: y = 2·8·12·12 = 2304;
      // 2·2·8·12·12·(8/8)·3·3 + 2304 = 41472 + 2304 = 43776.
      // read (X 2304 + W 8·1·9 = 72 + B 8)·2 = 4768; written 2304·2 = 4608.
      {.name = "ConvDepthwiseF16",
       .op = "Conv",
       .attributes = {{"group", Int(8)}, {"kernel_shape", Ints({3, 3})}, {"pads", Ints({1, 1, 1, 1})}},
       .inputs = {F16({2, 8, 12, 12}), F16({8, 1, 3, 3}), F16({8})},
       .outputs = {F16({2, 8, 12, 12})},
       .flops = 43776,
       .bytes_read = 4768,
       .bytes_written = 4608},
      // 1-D: y = 1·16·28 = 448; 2·1·16·28·(4/1)·5 = 2·448·20 = 17920.
      // read (X 4·32 = 128 + W 16·4·5 = 320)·4 = 1792; written 448·4 = 1792.
      {.name = "Conv1D",
       .op = "Conv",
       .attributes = {{"kernel_shape", Ints({5})}},
       .inputs = {F32({1, 4, 32}), F32({16, 4, 5})},
       .outputs = {F32({1, 16, 28})},
       .flops = 17920,
       .bytes_read = 1792,
       .bytes_written = 1792},
      // ConvInteger is the Conv formula; its third input is x's zero point, not a bias: y = 1568,
      // 2·1·8·14·14·3·3·3 = 84672. read X 768·1 + W 216·1 + x_zero_point 1·1 = 985 (w_zero_point
      // absent); written 1568·4 (i32) = 6272.
      {.name = "ConvIntegerU8",
       .op = "ConvInteger",
       .attributes = {{"kernel_shape", Ints({3, 3})}},
       .inputs = {U8({1, 3, 16, 16}), I8({8, 3, 3, 3}), U8({}), kAbsent},
       .outputs = {I32({1, 8, 14, 14})},
       .flops = 84672,
       .bytes_read = 985,
       .bytes_written = 6272},

      // --- FusedConv: the Conv, plus one op per output element for Z, the activation and each clamp --
      // 84672 + bias 1568 + Z 1568 + Relu 1568 = 89376.
      // read (768 + 216 + 8 + Z 1568)·4 = 10240; written 6272.
      {.name = "FusedConvResidualRelu",
       .op = "FusedConv",
       .attributes = {{"kernel_shape", Ints({3, 3})}, {"activation", Str("Relu")}},
       .inputs = {F32({1, 3, 16, 16}), F32({8, 3, 3, 3}), F32({8}), F32({1, 8, 14, 14})},
       .outputs = {F32({1, 8, 14, 14})},
       .flops = 89376,
       .bytes_read = 10240,
       .bytes_written = 6272},
      // No bias (input 2 ""), Z, no activation: 84672 + Z 1568 = 86240.
      // read (768 + 216 + 1568)·4 = 10208; written 6272.
      {.name = "FusedConvResidualNoBias",
       .op = "FusedConv",
       .attributes = {{"kernel_shape", Ints({3, 3})}},
       .inputs = {F32({1, 3, 16, 16}), F32({8, 3, 3, 3}), kAbsent, F32({1, 8, 14, 14})},
       .outputs = {F32({1, 8, 14, 14})},
       .flops = 86240,
       .bytes_read = 10208,
       .bytes_written = 6272},
      // activation "" means none (passes.h): 84672 + bias 1568 = 86240; read 3968; written 6272.
      {.name = "FusedConvEmptyActivation",
       .op = "FusedConv",
       .attributes = {{"kernel_shape", Ints({3, 3})}, {"activation", Str("")}},
       .inputs = {F32({1, 3, 16, 16}), F32({8, 3, 3, 3}), F32({8})},
       .outputs = {F32({1, 8, 14, 14})},
       .flops = 86240,
       .bytes_read = 3968,
       .bytes_written = 6272},
      // LeakyRelu then an absorbed Max(·, c) as clamp_min: 84672 + bias 1568 + LeakyRelu 1568 +
      // clamp 1568 = 89376; read 3968; written 6272.
      {.name = "FusedConvLeakyReluClamp",
       .op = "FusedConv",
       .attributes = {{"kernel_shape", Ints({3, 3})},
                      {"activation", Str("LeakyRelu")},
                      {"activation_params", Float(0.1f)},
                      {"clamp_min", Float(-1.0f)}},
       .inputs = {F32({1, 3, 16, 16}), F32({8, 3, 3, 3}), F32({8})},
       .outputs = {F32({1, 8, 14, 14})},
       .flops = 89376,
       .bytes_read = 3968,
       .bytes_written = 6272},

      // --- ConvTranspose: 2·N·Cin·Hin·Win·(Cout/g)·kh·kw (+ y for the bias); W is [Cin, Cout/g, k…] --
      // stride 2: Hout = (5 − 1)·2 + 3 = 11, y = 2·11·11 = 242; 2·(1·4·5·5)·(2·3·3) + 242 = 3600 + 242 =
      // 3842. read (X 100 + W 4·2·9 = 72 + B 2)·4 = 696; written 242·4 = 968.
      {.name = "ConvTransposeStrided",
       .op = "ConvTranspose",
       .attributes = {{"kernel_shape", Ints({3, 3})}, {"strides", Ints({2, 2})}},
       .inputs = {F32({1, 4, 5, 5}), F32({4, 2, 3, 3}), F32({2})},
       .outputs = {F32({1, 2, 11, 11})},
       .flops = 3842,
       .bytes_read = 696,
       .bytes_written = 968},
      // group 2, W [4, 3, 3, 3] → Cout = 6, Hout = 5 − 1 + 3 = 7, y = 6·7·7 = 294;
      // 2·(1·4·5·5)·(3·3·3) = 5400. read (100 + 108)·4 = 832; written 294·4 = 1176.
      {.name = "ConvTransposeGrouped",
       .op = "ConvTranspose",
       .attributes = {{"group", Int(2)}, {"kernel_shape", Ints({3, 3})}},
       .inputs = {F32({1, 4, 5, 5}), F32({4, 3, 3, 3})},
       .outputs = {F32({1, 6, 7, 7})},
       .flops = 5400,
       .bytes_read = 832,
       .bytes_written = 1176},

      // --- MatMul: 2·M·N·K per batch ----------------------------------------------------------------
      // 2·32·16·64 = 65536; read (32·64 + 64·16 = 3072)·4 = 12288; written 32·16·4 = 2048.
      {.name = "MatMul2D",
       .op = "MatMul",
       .inputs = {F32({32, 64}), F32({64, 16})},
       .outputs = {F32({32, 16})},
       .flops = 65536,
       .bytes_read = 12288,
       .bytes_written = 2048},
      // Batched, B broadcast, f16: 2·(2·3)·8·4·16 = 6144.
      // read (2·3·8·16 = 768 + 16·4 = 64)·2 = 1664; written 2·3·8·4 = 192·2 = 384.
      {.name = "MatMulBatchedBroadcastF16",
       .op = "MatMul",
       .inputs = {F16({2, 3, 8, 16}), F16({16, 4})},
       .outputs = {F16({2, 3, 8, 4})},
       .flops = 6144,
       .bytes_read = 1664,
       .bytes_written = 384},
      // 1-D B (N = 1, dropped from the output): 2·5·1·7 = 70; read (35 + 7)·4 = 168; written 5·4 = 20.
      {.name = "MatMulVector",
       .op = "MatMul",
       .inputs = {F32({5, 7}), F32({7})},
       .outputs = {F32({5})},
       .flops = 70,
       .bytes_read = 168,
       .bytes_written = 20},
      // 2·4·8·32 = 2048; read A 128·1 (u8) + B 256·1 (i8) + a_zero_point 1·1 = 385 (b_zero_point
      // absent); written 4·8·4 (i32) = 128.
      {.name = "MatMulIntegerU8I8",
       .op = "MatMulInteger",
       .inputs = {U8({4, 32}), I8({32, 8}), U8({}), kAbsent},
       .outputs = {I32({4, 8})},
       .flops = 2048,
       .bytes_read = 385,
       .bytes_written = 128},

      // --- Gemm: 2·M·N·K (+ M·N for C) -------------------------------------------------------------
      // 2·4·5·6 = 240; read (24 + 30)·4 = 216; written 20·4 = 80.
      {.name = "GemmNoC",
       .op = "Gemm",
       .inputs = {F32({4, 6}), F32({6, 5})},
       .outputs = {F32({4, 5})},
       .flops = 240,
       .bytes_read = 216,
       .bytes_written = 80},
      // C named "" counts as no C: 240; read 216; written 80.
      {.name = "GemmAbsentC",
       .op = "Gemm",
       .inputs = {F32({4, 6}), F32({6, 5}), kAbsent},
       .outputs = {F32({4, 5})},
       .flops = 240,
       .bytes_read = 216,
       .bytes_written = 80},
      // transB, C broadcast from [5]: 240 + 4·5 = 260; read (24 + 30 + 5)·4 = 236; written 80.
      {.name = "GemmTransBWithC",
       .op = "Gemm",
       .attributes = {{"transB", Int(1)}},
       .inputs = {F32({4, 6}), F32({5, 6}), F32({5})},
       .outputs = {F32({4, 5})},
       .flops = 260,
       .bytes_read = 236,
       .bytes_written = 80},
      // transA: A is [K = 6, M = 4]: 2·4·5·6 + 4·5 = 260; read (24 + 30 + 20)·4 = 296; written 80.
      {.name = "GemmTransAWithC",
       .op = "Gemm",
       .attributes = {{"transA", Int(1)}},
       .inputs = {F32({6, 4}), F32({6, 5}), F32({4, 5})},
       .outputs = {F32({4, 5})},
       .flops = 260,
       .bytes_read = 296,
       .bytes_written = 80},

      // --- Pooling: output elements · window product ------------------------------------------------
      // y = 4·4·4 = 64; 64·(2·2) = 256; read 4·8·8 = 256·4 = 1024; written 64·4 = 256.
      {.name = "MaxPool",
       .op = "MaxPool",
       .attributes = {{"kernel_shape", Ints({2, 2})}, {"strides", Ints({2, 2})}},
       .inputs = {F32({1, 4, 8, 8})},
       .outputs = {F32({1, 4, 4, 4})},
       .flops = 256,
       .bytes_read = 1024,
       .bytes_written = 256},
      // Indices output (i64) written too: 256 FLOPs; written 64·4 + 64·8 = 768.
      {.name = "MaxPoolWithIndices",
       .op = "MaxPool",
       .attributes = {{"kernel_shape", Ints({2, 2})}, {"strides", Ints({2, 2})}},
       .inputs = {F32({1, 4, 8, 8})},
       .outputs = {F32({1, 4, 4, 4}), I64({1, 4, 4, 4})},
       .flops = 256,
       .bytes_read = 1024,
       .bytes_written = 768},
      // Indices named "": the shape function describes it, the kernel gets no tensor: written 64·4 = 256.
      {.name = "MaxPoolOmittedIndices",
       .op = "MaxPool",
       .attributes = {{"kernel_shape", Ints({2, 2})}, {"strides", Ints({2, 2})}},
       .inputs = {F32({1, 4, 8, 8})},
       .outputs = {F32({1, 4, 4, 4}), I64({1, 4, 4, 4})},
       .omitted_outputs = {1},
       .flops = 256,
       .bytes_read = 1024,
       .bytes_written = 256},
      // 3×3, stride 1, pads 1: y = 2·3·6·6 = 216; 216·9 = 1944; read 216·4 = 864; written 864.
      {.name = "AveragePool",
       .op = "AveragePool",
       .attributes = {{"kernel_shape", Ints({3, 3})}, {"pads", Ints({1, 1, 1, 1})}},
       .inputs = {F32({2, 3, 6, 6})},
       .outputs = {F32({2, 3, 6, 6})},
       .flops = 1944,
       .bytes_read = 864,
       .bytes_written = 864},
      // Window = the whole plane: y·window = (2·16)·(7·7) = 1568 = input elements;
      // read 1568·4 = 6272; written 2·16·4 = 128.
      {.name = "GlobalAveragePool",
       .op = "GlobalAveragePool",
       .inputs = {F32({2, 16, 7, 7})},
       .outputs = {F32({2, 16, 1, 1})},
       .flops = 1568,
       .bytes_read = 6272,
       .bytes_written = 128},

      // --- Reductions: one op per input element ---------------------------------------------------
      // Opset 18, axes as an i64 input: 4·10·6 = 240; read 240·4 + 1·8 = 968; written 4·10·4 = 160.
      {.name = "ReduceMeanAxesInput",
       .op = "ReduceMean",
       .inputs = {F32({4, 10, 6}), I64({1})},
       .outputs = {F32({4, 10, 1})},
       .flops = 240,
       .bytes_read = 968,
       .bytes_written = 160},
      // 3·50 = 150; read 150·4 = 600; written 3 indices·8 (i64) = 24.
      {.name = "ArgMax",
       .op = "ArgMax",
       .attributes = {{"axis", Int(1)}, {"keepdims", Int(0)}},
       .inputs = {F32({3, 50})},
       .outputs = {I64({3})},
       .flops = 150,
       .bytes_read = 600,
       .bytes_written = 24},

      // --- Elementwise: one op per output element -------------------------------------------------
      // B broadcast: y = 2·3·4 = 24; read (24 + 4)·4 = 112; written 96.
      {.name = "AddBroadcast",
       .op = "Add",
       .inputs = {F32({2, 3, 4}), F32({4})},
       .outputs = {F32({2, 3, 4})},
       .flops = 24,
       .bytes_read = 112,
       .bytes_written = 96},
      // y = 64·10·10 = 6400; read 6400·2 = 12800; written 12800.
      {.name = "ReluF16",
       .op = "Relu",
       .inputs = {F16({1, 64, 10, 10})},
       .outputs = {F16({1, 64, 10, 10})},
       .flops = 6400,
       .bytes_read = 12800,
       .bytes_written = 12800},

      // --- Normalisations, ops per element as in cost.cpp's OpsPerElement -------------------------
      // Softmax 4 per element: 8·100·4 = 3200; read 800·4 = 3200; written 3200.
      {.name = "Softmax",
       .op = "Softmax",
       .attributes = {{"axis", Int(-1)}},
       .inputs = {F32({8, 100})},
       .outputs = {F32({8, 100})},
       .flops = 3200,
       .bytes_read = 3200,
       .bytes_written = 3200},
      // LayerNormalization 6 per element: 2·5·16 = 160·6 = 960; read (160 + 16 + 16)·4 = 768;
      // written 640.
      {.name = "LayerNormalization",
       .op = "LayerNormalization",
       .attributes = {{"axis", Int(-1)}},
       .inputs = {F32({2, 5, 16}), F32({16}), F32({16})},
       .outputs = {F32({2, 5, 16})},
       .flops = 960,
       .bytes_read = 768,
       .bytes_written = 640},
      // Bias absent, Mean and InvStdDev named "" (described [2, 5, 1] by the shape function, never
      // written): 960 FLOPs; read (160 + 16)·4 = 704; written 640.
      {.name = "LayerNormalizationOmittedStats",
       .op = "LayerNormalization",
       .attributes = {{"axis", Int(-1)}},
       .inputs = {F32({2, 5, 16}), F32({16}), kAbsent},
       .outputs = {F32({2, 5, 16}), F32({2, 5, 1}), F32({2, 5, 1})},
       .omitted_outputs = {1, 2},
       .flops = 960,
       .bytes_read = 704,
       .bytes_written = 640},
      // Inference BatchNormalization 2 per element (a multiply-add): 8·4·4 = 128·2 = 256;
      // read (128 + scale, B, mean, var 4·8)·4 = 640; written 512.
      {.name = "BatchNormalization",
       .op = "BatchNormalization",
       .inputs = {F32({1, 8, 4, 4}), F32({8}), F32({8}), F32({8}), F32({8})},
       .outputs = {F32({1, 8, 4, 4})},
       .flops = 256,
       .bytes_read = 640,
       .bytes_written = 512},

      // --- Data movement: 0 FLOPs, bytes still move ----------------------------------------------
      // i8: read 2·3·4 = 24; written 24.
      {.name = "TransposeI8",
       .op = "Transpose",
       .attributes = {{"perm", Ints({2, 1, 0})}},
       .inputs = {I8({2, 3, 4})},
       .outputs = {I8({4, 3, 2})},
       .flops = 0,
       .bytes_read = 24,
       .bytes_written = 24},
      // read data 24·4 + shape 2·8 (i64) = 112; written 96.
      {.name = "Reshape",
       .op = "Reshape",
       .inputs = {F32({2, 3, 4}), I64({2})},
       .outputs = {F32({6, 4})},
       .flops = 0,
       .bytes_read = 112,
       .bytes_written = 96},
  };
}

class CostFormulaTest : public ::testing::TestWithParam<CostCase> {};

TEST_P(CostFormulaTest, MatchesHandComputedNumbers) {
  const CostCase& c = GetParam();
  const KernelCost cost = Estimate(c);
  EXPECT_TRUE(cost.known);
  EXPECT_EQ(cost.flops, c.flops);
  EXPECT_EQ(cost.bytes_read, c.bytes_read);
  EXPECT_EQ(cost.bytes_written, c.bytes_written);
}

INSTANTIATE_TEST_SUITE_P(CostFormulas, CostFormulaTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

// FuseConvActivations must not change a model's FLOP total: the FusedConv costs what the Conv, Add,
// activation and absorbed Max cost as separate nodes.
TEST(CostTest, FusedConvCostsWhatItsPartsCost) {
  const ValueInfo x = F32({1, 3, 16, 16}), w = F32({8, 3, 3, 3}), b = F32({8}), y = F32({1, 8, 14, 14});
  const ValueInfo floor = F32({});
  const CostCase conv{.name = "conv", .op = "Conv", .inputs = {x, w, b}, .outputs = {y}};
  const CostCase add{.name = "add", .op = "Add", .inputs = {y, y}, .outputs = {y}};
  const CostCase relu{.name = "relu", .op = "Relu", .inputs = {y}, .outputs = {y}};
  const CostCase max{.name = "max", .op = "Max", .inputs = {y, floor}, .outputs = {y}};
  const CostCase fused{.name = "conv",
                       .op = "FusedConv",
                       .attributes = {{"activation", Str("Relu")}, {"clamp_min", Float(0.5f)}},
                       .inputs = {x, w, b, y},
                       .outputs = {y}};
  EXPECT_EQ(Estimate(fused).flops,
            Estimate(conv).flops + Estimate(add).flops + Estimate(relu).flops + Estimate(max).flops);
}

}  // namespace
}  // namespace chipfit
