// Builds the sample ONNX models node by node, with weights from a fixed-seed SplitMix64 stream per tensor.
#include "resources/models/sample_models.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <utility>

#include "core/tensor/random.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace chipfit {
namespace {

constexpr int64_t kIrVersion = 8;
constexpr int64_t kOpset = 13;
// Changing this (or any tensor name) changes every committed weight; the byte-comparison test will say so.
constexpr uint64_t kBaseSeed = 0x6368697066697431ULL;  // "chipfit1"

// FNV-1a: each tensor draws from its own stream keyed by model and tensor name, so adding or reordering a
// tensor leaves the others' values unchanged.
uint64_t HashName(const std::string& text) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001B3ULL;
  }
  return h;
}

// A tensor dimension: a fixed size or a symbolic name (dim_param).
struct Dim {
  Dim(int64_t v) : value(v) {}                 // NOLINT(google-explicit-constructor)
  Dim(const char* p) : value(-1), param(p) {}  // NOLINT(google-explicit-constructor)
  int64_t value;
  std::string param;
};

onnx::AttributeProto AttrInt(const std::string& name, int64_t value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
  return a;
}

onnx::AttributeProto AttrFloat(const std::string& name, float value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(value);
  return a;
}

onnx::AttributeProto AttrInts(const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
  return a;
}

void SetFloatTensorType(onnx::ValueInfoProto* value, const std::string& name, const std::vector<Dim>& dims) {
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = tensor->mutable_shape();
  for (const Dim& d : dims) {
    auto* dim = shape->add_dim();
    if (d.param.empty()) {
      dim->set_dim_value(d.value);
    } else {
      dim->set_dim_param(d.param);
    }
  }
}

// Appends nodes, initializers and graph inputs/outputs to one GraphProto.
class GraphBuilder {
 public:
  GraphBuilder(const std::string& model_name, onnx::GraphProto* graph) : model_name_(model_name), graph_(graph) {
    graph_->set_name(model_name);
  }

  void Input(const std::string& name, const std::vector<Dim>& dims) {
    SetFloatTensorType(graph_->add_input(), name, dims);
  }
  void Output(const std::string& name, const std::vector<Dim>& dims) {
    SetFloatTensorType(graph_->add_output(), name, dims);
  }

  // Adds one node; its single output is named `output`, or "<node_name>_out" when that is empty.
  std::string Op(const std::string& op_type, const std::string& node_name, const std::vector<std::string>& inputs,
                 const std::vector<onnx::AttributeProto>& attributes = {}, const std::string& output = {}) {
    onnx::NodeProto* node = graph_->add_node();
    node->set_op_type(op_type);
    node->set_name(node_name);
    for (const auto& in : inputs) node->add_input(in);
    const std::string out = output.empty() ? node_name + "_out" : output;
    node->add_output(out);
    for (const auto& a : attributes) *node->add_attribute() = a;
    return out;
  }

  // Float initializer whose element i is value(rng). Initializers are not listed as graph inputs (allowed
  // since IR 4), so runtimes may treat them as constants and fold them.
  std::string Floats(const std::string& name, const std::vector<int64_t>& dims,
                     const std::function<float(SplitMix64&)>& value) {
    onnx::TensorProto* t = AddInitializer(name, dims, onnx::TensorProto::FLOAT);
    SplitMix64 rng(kBaseSeed ^ HashName(model_name_ + "/" + name));
    std::string raw;
    for (int64_t i = 0; i < ElementCount(dims); ++i) {
      // raw_data is little-endian by the ONNX spec; spell the byte order out rather than copy host memory.
      const uint32_t bits = std::bit_cast<uint32_t>(value(rng));
      for (int b = 0; b < 4; ++b) raw.push_back(static_cast<char>((bits >> (8 * b)) & 0xFF));
    }
    t->set_raw_data(raw);
    return name;
  }

  // Uniform in [-limit, limit).
  std::string Random(const std::string& name, const std::vector<int64_t>& dims, double limit) {
    return Floats(name, dims, [limit](SplitMix64& rng) { return rng.Uniform(-limit, limit); });
  }
  // Uniform in [center - spread, center + spread): BN statistics, LayerNorm gains.
  std::string Around(const std::string& name, const std::vector<int64_t>& dims, double center, double spread) {
    return Floats(name, dims,
                  [center, spread](SplitMix64& rng) { return rng.Uniform(center - spread, center + spread); });
  }
  std::string Scalar(const std::string& name, float value) {
    onnx::TensorProto* t = AddInitializer(name, {}, onnx::TensorProto::FLOAT);
    t->add_float_data(value);
    return name;
  }
  std::string Int64s(const std::string& name, const std::vector<int64_t>& values) {
    onnx::TensorProto* t = AddInitializer(name, {static_cast<int64_t>(values.size())}, onnx::TensorProto::INT64);
    for (int64_t v : values) t->add_int64_data(v);
    return name;
  }

 private:
  static int64_t ElementCount(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  onnx::TensorProto* AddInitializer(const std::string& name, const std::vector<int64_t>& dims, int32_t dtype) {
    onnx::TensorProto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(dtype);
    for (int64_t d : dims) t->add_dims(d);
    return t;
  }

  std::string model_name_;
  onnx::GraphProto* graph_;
};

// Uniform bounds whose variance matches He (before ReLU) and Xavier/Glorot (elsewhere) initialisation, so
// activations neither vanish nor blow up and later numeric comparisons see ordinary magnitudes.
double HeLimit(int64_t fan_in) { return std::sqrt(6.0 / static_cast<double>(fan_in)); }
double XavierLimit(int64_t fan_in, int64_t fan_out) { return std::sqrt(6.0 / static_cast<double>(fan_in + fan_out)); }
constexpr double kBiasLimit = 0.05;

onnx::ModelProto NewModel(const std::string& doc) {
  onnx::ModelProto model;
  model.set_ir_version(kIrVersion);
  model.set_producer_name("chipfit-make-samples");
  model.set_producer_version("1");
  model.set_doc_string(doc + " Deterministic weights; regenerate with chipfit-make-samples.");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOpset);
  return model;
}

// Conv -> BatchNormalization -> Relu, the unfused form that BN-folding passes are meant to find.
std::string ConvBnRelu(GraphBuilder& g, const std::string& input, int index, int64_t in_ch, int64_t out_ch) {
  const std::string conv = "conv" + std::to_string(index);
  const std::string bn = "bn" + std::to_string(index);
  const std::string w = g.Random(conv + ".weight", {out_ch, in_ch, 3, 3}, HeLimit(in_ch * 9));
  const std::string b = g.Random(conv + ".bias", {out_ch}, kBiasLimit);
  std::string x = g.Op("Conv", conv, {input, w, b},
                       {AttrInts("kernel_shape", {3, 3}), AttrInts("pads", {1, 1, 1, 1}), AttrInts("strides", {1, 1})});
  // Non-trivial statistics so that a BN fold that drops any of the four tensors changes the output.
  const std::string scale = g.Around(bn + ".scale", {out_ch}, 1.0, 0.2);
  const std::string bias = g.Around(bn + ".bias", {out_ch}, 0.0, 0.1);
  const std::string mean = g.Around(bn + ".running_mean", {out_ch}, 0.0, 0.1);
  const std::string var = g.Around(bn + ".running_var", {out_ch}, 1.0, 0.5);
  x = g.Op("BatchNormalization", bn, {x, scale, bias, mean, var}, {AttrFloat("epsilon", 1e-5f)});
  return g.Op("Relu", "relu" + std::to_string(index), {x});
}

onnx::ModelProto BuildCnn() {
  onnx::ModelProto model = NewModel("chipfit sample: small CNN classifier, 1x3x32x32 image to 10 class probabilities.");
  GraphBuilder g("cnn", model.mutable_graph());
  g.Input("input", {1, 3, 32, 32});
  std::string x = ConvBnRelu(g, "input", 1, 3, 8);
  x = g.Op("MaxPool", "pool1", {x}, {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})});
  x = ConvBnRelu(g, x, 2, 8, 16);
  x = g.Op("GlobalAveragePool", "gap", {x});
  x = g.Op("Flatten", "flatten", {x}, {AttrInt("axis", 1)});
  const std::string w = g.Random("fc.weight", {10, 16}, XavierLimit(16, 10));
  const std::string b = g.Random("fc.bias", {10}, kBiasLimit);
  x = g.Op("Gemm", "fc", {x, w, b}, {AttrInt("transB", 1)});
  g.Op("Softmax", "softmax", {x}, {AttrInt("axis", 1)}, "probabilities");
  g.Output("probabilities", {1, 10});
  return model;
}

onnx::ModelProto BuildMlp() {
  onnx::ModelProto model =
      NewModel("chipfit sample: three-layer MLP with a symbolic batch dimension, [batch,64] to [batch,10] logits.");
  GraphBuilder g("mlp", model.mutable_graph());
  g.Input("x", {"batch", 64});
  const std::vector<std::pair<int64_t, int64_t>> layers = {{64, 128}, {128, 64}, {64, 10}};
  std::string x = "x";
  for (size_t i = 0; i < layers.size(); ++i) {
    const auto [in, out] = layers[i];
    const std::string fc = "fc" + std::to_string(i + 1);
    const bool last = i + 1 == layers.size();
    const double limit = last ? XavierLimit(in, out) : HeLimit(in);
    const std::string w = g.Random(fc + ".weight", {in, out}, limit);
    const std::string b = g.Random(fc + ".bias", {out}, kBiasLimit);
    x = g.Op("MatMul", fc + "_matmul", {x, w});
    x = g.Op("Add", fc + "_add", {x, b}, {}, last ? "logits" : "");
    if (!last) x = g.Op("Relu", "relu" + std::to_string(i + 1), {x});
  }
  g.Output("logits", {"batch", 10});
  return model;
}

// LayerNorm spelled out in opset-13 primitives (LayerNormalization is opset 17), the pattern exporters emit
// and a fusion pass has to recognise.
std::string LayerNormDecomposed(GraphBuilder& g, const std::string& input, const std::string& prefix, int64_t width,
                                const std::string& two, const std::string& epsilon) {
  const std::string gamma = g.Around(prefix + ".gamma", {width}, 1.0, 0.1);
  const std::string beta = g.Around(prefix + ".beta", {width}, 0.0, 0.05);
  const auto last_axis = std::vector<onnx::AttributeProto>{AttrInts("axes", {-1}), AttrInt("keepdims", 1)};
  const std::string mean = g.Op("ReduceMean", prefix + "_mean", {input}, last_axis);
  const std::string centered = g.Op("Sub", prefix + "_center", {input, mean});
  const std::string squared = g.Op("Pow", prefix + "_square", {centered, two});
  const std::string var = g.Op("ReduceMean", prefix + "_variance", {squared}, last_axis);
  const std::string var_eps = g.Op("Add", prefix + "_add_eps", {var, epsilon});
  const std::string stddev = g.Op("Sqrt", prefix + "_stddev", {var_eps});
  const std::string normed = g.Op("Div", prefix + "_normalize", {centered, stddev});
  const std::string scaled = g.Op("Mul", prefix + "_scale", {normed, gamma});
  return g.Op("Add", prefix + "_shift", {scaled, beta});
}

std::string Linear(GraphBuilder& g, const std::string& input, const std::string& name, int64_t in, int64_t out,
                   double limit) {
  const std::string w = g.Random(name + ".weight", {in, out}, limit);
  const std::string b = g.Random(name + ".bias", {out}, kBiasLimit);
  const std::string y = g.Op("MatMul", name + "_matmul", {input, w});
  return g.Op("Add", name + "_add", {y, b});
}

onnx::ModelProto BuildTransformer() {
  constexpr int64_t kSeq = 16, kModel = 32, kHeads = 2, kHeadDim = 16, kFfn = 64;
  onnx::ModelProto model = NewModel(
      "chipfit sample: one pre-norm transformer encoder block (seq 16, d_model 32, 2 heads, FFN 64), LayerNorm "
      "decomposed into opset-13 ops.");
  GraphBuilder g("transformer", model.mutable_graph());
  g.Input("tokens", {1, kSeq, kModel});

  const std::string two = g.Scalar("layernorm.exponent", 2.0f);
  const std::string epsilon = g.Scalar("layernorm.epsilon", 1e-5f);
  const std::string split_shape = g.Int64s("attn.split_heads_shape", {1, kSeq, kHeads, kHeadDim});
  const std::string merge_shape = g.Int64s("attn.merge_heads_shape", {1, kSeq, kModel});
  const std::string score_scale = g.Scalar("attn.score_scale", static_cast<float>(1.0 / std::sqrt(kHeadDim)));

  const std::string ln1 = LayerNormDecomposed(g, "tokens", "ln1", kModel, two, epsilon);
  const double proj_limit = XavierLimit(kModel, kModel);
  const std::string q = Linear(g, ln1, "attn.q", kModel, kModel, proj_limit);
  const std::string k = Linear(g, ln1, "attn.k", kModel, kModel, proj_limit);
  const std::string v = Linear(g, ln1, "attn.v", kModel, kModel, proj_limit);
  const std::string q_split = g.Op("Reshape", "attn.q_split_heads", {q, split_shape});
  const std::string k_split = g.Op("Reshape", "attn.k_split_heads", {k, split_shape});
  const std::string v_split = g.Op("Reshape", "attn.v_split_heads", {v, split_shape});
  // [1,seq,heads,dim] -> [1,heads,seq,dim] for Q and V; K goes straight to [1,heads,dim,seq] so Q·Kᵀ is one MatMul.
  const std::string q_heads = g.Op("Transpose", "attn.q_transpose", {q_split}, {AttrInts("perm", {0, 2, 1, 3})});
  const std::string k_heads_t = g.Op("Transpose", "attn.k_transpose", {k_split}, {AttrInts("perm", {0, 2, 3, 1})});
  const std::string v_heads = g.Op("Transpose", "attn.v_transpose", {v_split}, {AttrInts("perm", {0, 2, 1, 3})});
  std::string scores = g.Op("MatMul", "attn.scores", {q_heads, k_heads_t});
  scores = g.Op("Mul", "attn.scale_scores", {scores, score_scale});
  const std::string probs = g.Op("Softmax", "attn.softmax", {scores}, {AttrInt("axis", -1)});
  const std::string context = g.Op("MatMul", "attn.context", {probs, v_heads});
  const std::string context_t =
      g.Op("Transpose", "attn.context_transpose", {context}, {AttrInts("perm", {0, 2, 1, 3})});
  const std::string merged = g.Op("Reshape", "attn.merge_heads", {context_t, merge_shape});
  const std::string attn_out = Linear(g, merged, "attn.out", kModel, kModel, proj_limit);
  const std::string residual1 = g.Op("Add", "residual1", {"tokens", attn_out});

  const std::string ln2 = LayerNormDecomposed(g, residual1, "ln2", kModel, two, epsilon);
  std::string ffn = Linear(g, ln2, "ffn.fc1", kModel, kFfn, HeLimit(kModel));
  ffn = g.Op("Relu", "ffn.relu", {ffn});
  ffn = Linear(g, ffn, "ffn.fc2", kFfn, kModel, XavierLimit(kFfn, kModel));
  g.Op("Add", "residual2", {residual1, ffn}, {}, "hidden");
  g.Output("hidden", {1, kSeq, kModel});
  return model;
}

}  // namespace

std::vector<SampleModel> BuildSampleModels() {
  std::vector<SampleModel> models;
  models.push_back({"cnn.onnx", BuildCnn()});
  models.push_back({"mlp.onnx", BuildMlp()});
  models.push_back({"transformer.onnx", BuildTransformer()});
  return models;
}

std::string SerializeDeterministic(const onnx::ModelProto& proto) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream raw(&bytes);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.SetSerializationDeterministic(true);
    proto.SerializeToCodedStream(&coded);
  }  // the coded stream trims the string to what was written when it goes out of scope
  return bytes;
}

}  // namespace chipfit
