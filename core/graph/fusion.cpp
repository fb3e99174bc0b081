// FuseConvActivations: Conv [+ Add] [+ activation] patterns rewritten into com.chipfit FusedConv nodes.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/graph/graph_index.h"
#include "core/graph/passes.h"

namespace chipfit {
namespace {

bool IsOnnxOp(const Node& node, const char* op_type) {
  return node.op_type == op_type && (node.domain.empty() || node.domain == "ai.onnx");
}

// Exporters write 1/6 and the like as float32; compare with a tolerance well above that rounding.
bool Near(double value, double target) { return std::fabs(value - target) <= 1e-5 * std::max(1.0, std::fabs(target)); }

// Dims equal when both are known and equal, or both unknown with the same symbolic name.
bool SameDim(const ValueDesc& a, size_t i, const ValueDesc& b, size_t j) {
  if (a.shape[i] >= 0 || b.shape[j] >= 0) return a.shape[i] == b.shape[j];
  const std::string& pa = i < a.dim_params.size() ? a.dim_params[i] : "";
  const std::string& pb = j < b.dim_params.size() ? b.dim_params[j] : "";
  return !pa.empty() && pa == pb;
}

// One candidate rewrite: the Conv, the nodes after it, and what the FusedConv node computes.
struct Pattern {
  size_t conv = 0;
  std::vector<size_t> rest;  // the other merged nodes; the last one writes `output`
  std::string z;             // the Add's other operand; "" when there is no Add
  std::string activation;    // "" for none
  std::vector<float> params;
  std::string output;
};

// An activation (or hard-swish decomposition) reading `input`: its nodes, the last writing `output`.
struct ActivationMatch {
  std::vector<size_t> nodes;
  std::string activation;
  std::vector<float> params;
  std::string output;
};

class ConvFuser : GraphIndex {
 public:
  ConvFuser(Graph& graph, bool swish) : GraphIndex(graph), swish_(swish) {}

  int Run() {
    std::vector<Pattern> patterns;
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      if (!claimed_.contains(i) && IsFusableConv(graph_.nodes[i])) {
        if (std::optional<Pattern> p = Match(i)) {
          claimed_.insert(p->conv);
          claimed_.insert(p->rest.begin(), p->rest.end());
          patterns.push_back(std::move(*p));
        }
      }
    }
    if (!patterns.empty()) Rewrite(patterns);
    return static_cast<int>(patterns.size());
  }

 private:
  bool IsFusableConv(const Node& node) const {
    return IsOnnxOp(node, "Conv") && node.inputs.size() >= 2 && node.outputs.size() == 1 && !node.outputs[0].empty() &&
           graph_.initializers.contains(node.inputs[1]);
  }

  // The nodes reading `value`, in graph order (main graph only; CountValueReaders has the rest).
  const std::vector<size_t>& Consumers(const std::string& value) const {
    static const std::vector<size_t> kNone;
    auto it = consumers_.find(value);
    return it == consumers_.end() ? kNone : it->second;
  }
  // The only node reading `value`, when exactly one main-graph node does.
  const Node* SoleConsumer(const std::string& value, size_t& index) const {
    const std::vector<size_t>& c = Consumers(value);
    if (c.size() != 1) return nullptr;
    index = c[0];
    return &graph_.nodes[index];
  }

  bool IsConstant(const std::string& value) const {
    if (graph_.initializers.contains(value)) return true;
    auto it = producer_.find(value);
    return it != producer_.end() && IsOnnxOp(graph_.nodes[it->second], "Constant");
  }

  // A floating initializer of one element and rank <= max_rank (so broadcasting it adds no dims).
  std::optional<double> Scalar(const std::string& value, size_t max_rank) const {
    auto it = graph_.initializers.find(value);
    if (it == graph_.initializers.end() || !IsFloatingDType(it->second.dtype())) return std::nullopt;
    const Tensor& t = it->second;
    if (t.numel() != 1 || static_cast<size_t>(t.rank()) > max_rank) return std::nullopt;
    return t.GetAsDouble(0);
  }

  // Binary op `node` reads `value` and a scalar constant (either order): the constant, else nullopt.
  std::optional<double> ScalarOperand(const Node& node, const std::string& value, size_t rank) const {
    if (node.inputs.size() != 2 || node.outputs.size() != 1 || graph_.opset < 7) return std::nullopt;
    if (node.inputs[0] == value) return Scalar(node.inputs[1], rank);
    if (node.inputs[1] == value) return Scalar(node.inputs[0], rank);
    return std::nullopt;
  }

  // Clip's {min, max}: attributes before opset 11, constant scalar inputs from it; absent = ±FLT_MAX.
  std::optional<std::pair<float, float>> ClipBounds(const Node& clip) const {
    if (clip.outputs.size() != 1) return std::nullopt;
    if (graph_.opset < 11) return std::make_pair(clip.GetFloat("min", -FLT_MAX), clip.GetFloat("max", FLT_MAX));
    std::pair<float, float> bounds(-FLT_MAX, FLT_MAX);
    if (clip.inputs.size() > 3) return std::nullopt;
    for (size_t i = 1; i < clip.inputs.size(); ++i) {
      if (clip.inputs[i].empty()) continue;
      const std::optional<double> v = Scalar(clip.inputs[i], SIZE_MAX);
      if (!v) return std::nullopt;
      (i == 1 ? bounds.first : bounds.second) = static_cast<float>(*v);
    }
    return bounds;
  }

  // A single activation op reading `input` as its X.
  std::optional<ActivationMatch> MatchSingle(const std::string& input) const {
    size_t index = 0;
    const Node* n = SoleConsumer(input, index);
    if (n == nullptr || n->inputs.empty() || n->inputs[0] != input || n->outputs.size() != 1) return std::nullopt;
    ActivationMatch m{{index}, n->op_type, {}, n->outputs[0]};
    if (IsOnnxOp(*n, "Relu") || IsOnnxOp(*n, "Sigmoid") || IsOnnxOp(*n, "Tanh") ||
        (IsOnnxOp(*n, "HardSwish") && graph_.opset >= 14)) {
      return m;
    }
    if (IsOnnxOp(*n, "LeakyRelu")) {
      m.params = {n->GetFloat("alpha", 0.01f)};
      return m;
    }
    if (IsOnnxOp(*n, "HardSigmoid")) {
      m.params = {n->GetFloat("alpha", 0.2f), n->GetFloat("beta", 0.5f)};
      return m;
    }
    if (IsOnnxOp(*n, "Clip")) {
      const auto bounds = ClipBounds(*n);
      if (!bounds) return std::nullopt;
      m.params = {bounds->first, bounds->second};
      return m;
    }
    return std::nullopt;
  }

  // Mul(x, other) or Mul(other, x) among the consumers of `other`.
  std::optional<size_t> MulWith(const std::string& x, const std::string& other) const {
    size_t index = 0;
    const Node* mul = SoleConsumer(other, index);
    if (mul == nullptr || !IsOnnxOp(*mul, "Mul") || mul->inputs.size() != 2 || mul->outputs.size() != 1 ||
        graph_.opset < 7) {
      return std::nullopt;
    }
    const bool operands =
        (mul->inputs[0] == x && mul->inputs[1] == other) || (mul->inputs[0] == other && mul->inputs[1] == x);
    return operands ? std::optional<size_t>(index) : std::nullopt;
  }

  // x · Sigmoid(x): SiLU / swish (EfficientNet, YOLO), where the device takes it (swish_).
  std::optional<ActivationMatch> MatchSigmoidSwish(const std::string& x, size_t sig_index) const {
    const Node& sig = graph_.nodes[sig_index];
    if (!swish_ || !IsOnnxOp(sig, "Sigmoid") || sig.inputs.size() != 1 || sig.outputs.size() != 1) return std::nullopt;
    const std::optional<size_t> mul = MulWith(x, sig.outputs[0]);
    if (!mul) return std::nullopt;
    return ActivationMatch{{sig_index, *mul}, "Swish", {}, graph_.nodes[*mul].outputs[0]};
  }

  // x · HardSigmoid(x, alpha 1/6, beta 1/2): PyTorch's hardswish before opset 14.
  std::optional<ActivationMatch> MatchHardSigmoidSwish(const std::string& x, size_t hs_index) const {
    const Node& hs = graph_.nodes[hs_index];
    if (!IsOnnxOp(hs, "HardSigmoid") || hs.inputs.size() != 1 || hs.outputs.size() != 1) return std::nullopt;
    if (!Near(hs.GetFloat("alpha", 0.2f), 1.0 / 6.0) || !Near(hs.GetFloat("beta", 0.5f), 0.5)) return std::nullopt;
    const std::optional<size_t> mul = MulWith(x, hs.outputs[0]);
    if (!mul) return std::nullopt;
    return ActivationMatch{{hs_index, *mul}, "HardSwish", {}, graph_.nodes[*mul].outputs[0]};
  }

  // x · Clip(x + 3, 0, 6) / 6, or · (1/6) (PaddleOCR's MobileNetV3 at opset 9, older PyTorch).
  std::optional<ActivationMatch> MatchClipSwish(const std::string& x, size_t add_index, size_t rank) const {
    const Node& add = graph_.nodes[add_index];
    const std::optional<double> three = IsOnnxOp(add, "Add") ? ScalarOperand(add, x, rank) : std::nullopt;
    if (!three || !Near(*three, 3.0)) return std::nullopt;
    size_t clip_index = 0;
    const Node* clip = SoleConsumer(add.outputs[0], clip_index);
    if (clip == nullptr || !IsOnnxOp(*clip, "Clip") || clip->inputs.empty() || clip->inputs[0] != add.outputs[0]) {
      return std::nullopt;
    }
    const auto bounds = ClipBounds(*clip);
    if (!bounds || !Near(bounds->first, 0.0) || !Near(bounds->second, 6.0)) return std::nullopt;
    const std::optional<size_t> mul = MulWith(x, clip->outputs[0]);
    if (!mul) return std::nullopt;
    size_t scale_index = 0;
    const Node* scale = SoleConsumer(graph_.nodes[*mul].outputs[0], scale_index);
    if (scale == nullptr) return std::nullopt;
    const std::string& product = graph_.nodes[*mul].outputs[0];
    bool scaled = false;
    if (IsOnnxOp(*scale, "Div") && scale->inputs.size() == 2 && scale->inputs[0] == product) {
      const std::optional<double> six = ScalarOperand(*scale, product, rank);
      scaled = six && Near(*six, 6.0);
    } else if (IsOnnxOp(*scale, "Mul")) {
      const std::optional<double> sixth = ScalarOperand(*scale, product, rank);
      scaled = sixth && Near(*sixth, 1.0 / 6.0);
    }
    if (!scaled) return std::nullopt;
    return ActivationMatch{{add_index, clip_index, *mul, scale_index}, "HardSwish", {}, scale->outputs[0]};
  }

  // Every activation form reading `input`, most specific first.
  std::vector<ActivationMatch> MatchActivations(const std::string& input, size_t rank) const {
    std::vector<ActivationMatch> found;
    if (auto single = MatchSingle(input)) found.push_back(std::move(*single));
    for (size_t index : Consumers(input)) {
      if (auto m = MatchSigmoidSwish(input, index)) found.push_back(std::move(*m));
      if (auto m = MatchHardSigmoidSwish(input, index)) found.push_back(std::move(*m));
      if (auto m = MatchClipSwish(input, index, rank)) found.push_back(std::move(*m));
    }
    return found;
  }

  // The graph's descriptions show that conv_out + z keeps conv_out's shape: either the sum has
  // conv_out's shape, or z's dims are 1 or conv_out's.
  bool KeepsShape(const std::string& conv_out, const std::string& z, const std::string& sum) const {
    auto desc = [&](const std::string& name) -> const ValueDesc* {
      auto it = descs_.find(name);
      return it != descs_.end() && it->second->has_shape ? it->second : nullptr;
    };
    const ValueDesc* c = desc(conv_out);
    if (c == nullptr) return false;
    if (const ValueDesc* s = desc(sum); s != nullptr && s->shape.size() == c->shape.size()) {
      bool same = true;
      for (size_t i = 0; same && i < c->shape.size(); ++i) same = SameDim(*c, i, *s, i);
      if (same) return true;
    }
    const ValueDesc* zd = desc(z);
    if (zd == nullptr || zd->shape.size() > c->shape.size()) return false;
    const size_t offset = c->shape.size() - zd->shape.size();
    for (size_t i = 0; i < zd->shape.size(); ++i) {
      if (zd->shape[i] != 1 && !SameDim(*zd, i, *c, offset + i)) return false;
    }
    return true;
  }

  // No value inside the pattern is read from outside it (other nodes, subgraphs, graph outputs),
  // and no node of it belongs to another pattern.
  bool SelfContained(const Pattern& p) const {
    std::vector<size_t> nodes = p.rest;
    nodes.push_back(p.conv);
    std::map<std::string, int> inner_reads;
    for (size_t i : nodes) {
      if (claimed_.contains(i)) return false;
      for (const std::string& in : graph_.nodes[i].inputs) ++inner_reads[in];
    }
    for (size_t i : nodes) {
      for (const std::string& out : graph_.nodes[i].outputs) {
        if (out == p.output) continue;
        auto it = readers_.find(out);
        if (out.empty() || it == readers_.end() || it->second != inner_reads[out]) return false;
      }
    }
    return true;
  }

  std::optional<Pattern> Match(size_t conv_index) const {
    const Node& conv = graph_.nodes[conv_index];
    const std::string& c = conv.outputs[0];
    const size_t rank = static_cast<size_t>(graph_.initializers.at(conv.inputs[1]).rank());
    std::vector<Pattern> candidates;  // longest first; the first self-contained one wins
    size_t add_index = 0;
    const Node* add = SoleConsumer(c, add_index);
    if (add != nullptr && IsOnnxOp(*add, "Add") && add->inputs.size() == 2 && add->outputs.size() == 1 &&
        graph_.opset >= 7) {
      const std::string& z = add->inputs[0] == c ? add->inputs[1] : add->inputs[0];
      // A constant operand is a bias: it stays a separate Add rather than becoming a residual Z.
      if (z != c && !z.empty() && !IsConstant(z) && KeepsShape(c, z, add->outputs[0])) {
        for (ActivationMatch& act : MatchActivations(add->outputs[0], rank)) {
          std::vector<size_t> rest = {add_index};
          rest.insert(rest.end(), act.nodes.begin(), act.nodes.end());
          candidates.push_back({conv_index, std::move(rest), z, act.activation, act.params, act.output});
        }
        candidates.push_back({conv_index, {add_index}, z, "", {}, add->outputs[0]});
      }
    }
    for (ActivationMatch& act : MatchActivations(c, rank)) {
      candidates.push_back({conv_index, act.nodes, "", act.activation, act.params, act.output});
    }
    for (Pattern& p : candidates) {
      if (SelfContained(p)) return std::move(p);
    }
    return std::nullopt;
  }

  Node FusedNode(const Pattern& p) const {
    const Node& conv = graph_.nodes[p.conv];
    Node fused;
    fused.name = conv.name;
    fused.op_type = "FusedConv";
    fused.domain = kChipfitDomain;
    fused.inputs = conv.inputs;
    if (!p.z.empty()) {
      fused.inputs.resize(3);  // B stays "" when the Conv has none
      fused.inputs.push_back(p.z);
    }
    fused.outputs = {p.output};
    fused.attributes = conv.attributes;
    if (!p.activation.empty()) {
      Attribute activation;
      activation.kind = Attribute::Kind::kString;
      activation.s = p.activation;
      fused.attributes["activation"] = std::move(activation);
    }
    if (!p.params.empty()) {
      Attribute params;
      params.kind = Attribute::Kind::kFloats;
      params.floats = p.params;
      fused.attributes["activation_params"] = std::move(params);
    }
    fused.covers = CoversOf(p.conv, p.rest);
    return fused;
  }

  void Rewrite(const std::vector<Pattern>& patterns) {
    std::vector<FusedRewrite> rewrites;
    for (const Pattern& p : patterns) {
      std::vector<size_t> nodes = p.rest;
      nodes.push_back(p.conv);
      rewrites.push_back({std::move(nodes), FusedNode(p)});
    }
    ReplaceWithFused(std::move(rewrites));
  }

  std::set<size_t> claimed_;
  bool swish_ = false;
};

}  // namespace

// What follows a FusedConv and becomes part of it: Max(y, c) / Min(y, c) as clamp_min / clamp_max
// (openWakeWord's LeakyRelu → Max(·, floor) after every Conv), and Mul / Div / Add / Sub by c as
// post_scale / post_shift (PP-LCNet's learnable affine block after its hard-swish), c a one-element f32
// constant. The order is activation → clamp → linear, so a clamp after a linear stays a node.
int AbsorbTails(Graph& graph) {
  int absorbed = 0;
  bool changed = true;
  while (changed) {
    changed = false;
    const std::map<std::string, int> readers = CountValueReaders(graph);
    std::map<std::string, size_t> consumer;
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      for (const std::string& in : graph.nodes[i].inputs) consumer[in] = i;
    }
    for (size_t f = 0; f < graph.nodes.size() && !changed; ++f) {
      Node& fused = graph.nodes[f];
      if (fused.op_type != "FusedConv" || fused.domain != kChipfitDomain || fused.outputs.size() != 1) continue;
      const std::string& y = fused.outputs[0];
      auto r = readers.find(y);
      if (r == readers.end() || r->second != 1 || !consumer.contains(y)) continue;
      const size_t m = consumer[y];
      const Node& tail = graph.nodes[m];
      if (tail.inputs.size() != 2 || tail.outputs.size() != 1 || graph.opset < 7) continue;
      const bool first = tail.inputs[0] == y;
      const std::string other = first ? tail.inputs[1] : tail.inputs[0];
      auto c = graph.initializers.find(other);
      // A one-element constant of rank up to y's broadcasts without changing y's shape (tf2onnx writes
      // openWakeWord's floor as [1, 1, 1, 1]); y's rank is the weights' (a Conv's output has rank >= 3).
      auto w = fused.inputs.size() > 1 ? graph.initializers.find(fused.inputs[1]) : graph.initializers.end();
      const int64_t y_rank = w != graph.initializers.end() ? w->second.rank() : 3;
      if (other == y || c == graph.initializers.end() || c->second.dtype() != DType::kF32 || c->second.numel() != 1 ||
          c->second.rank() > y_rank) {
        continue;
      }
      const double v = c->second.data<float>()[0];
      const bool linear = fused.Has("post_scale") || fused.Has("post_shift");
      const double scale = fused.GetFloat("post_scale", 1.0f), shift = fused.GetFloat("post_shift", 0.0f);
      auto set_float = [&](const char* name, double value) {
        Attribute a;
        a.kind = Attribute::Kind::kFloat;
        a.f = static_cast<float>(value);
        fused.attributes[name] = a;
      };
      if ((IsOnnxOp(tail, "Max") || IsOnnxOp(tail, "Min")) && !linear) {
        const bool is_max = IsOnnxOp(tail, "Max");
        const char* attr = is_max ? "clamp_min" : "clamp_max";
        const double bound = fused.Has(attr) ? (is_max ? std::max<double>(fused.GetFloat(attr, 0), v)
                                                       : std::min<double>(fused.GetFloat(attr, 0), v))
                                             : v;
        set_float(attr, bound);
      } else if (const auto map = ConstantOperandMap(tail, first, v)) {
        set_float("post_scale", map->scale * scale);
        set_float("post_shift", map->scale * shift + map->shift);
      } else {
        continue;
      }
      if (tail.covers.empty()) {
        fused.covers.push_back(tail.name);
      } else {
        fused.covers.insert(fused.covers.end(), tail.covers.begin(), tail.covers.end());
      }
      fused.outputs[0] = tail.outputs[0];
      graph.value_info.erase(y);
      // The FusedConv moves to the tail's place: its other input is a constant, so every input is
      // still computed before it and every reader of the output after it.
      Node moved = std::move(fused);
      graph.nodes[m] = std::move(moved);
      graph.nodes.erase(graph.nodes.begin() + static_cast<std::ptrdiff_t>(f));
      if (!CountValueReaders(graph).contains(other)) graph.initializers.erase(other);
      ++absorbed;
      changed = true;
    }
  }
  return absorbed;
}

int FuseConvActivations(Graph& graph, bool swish) {
  const int fused = ConvFuser(graph, swish).Run();
  AbsorbTails(graph);
  return fused;
}

}  // namespace chipfit
