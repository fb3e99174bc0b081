// FuseMatMulBiasActivation: MatMul (constant 2-D weights) [+ Add bias] [+ Relu / GELU] rewritten into
// com.chipfit FusedMatMul nodes, the form every transformer's Linear layer exports as.
#include <algorithm>
#include <cmath>
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

// Exporters write constants such as 1/sqrt(2) as float32: compare with a tolerance above that rounding.
bool Near(double value, double target) { return std::fabs(value - target) <= 1e-5 * std::max(1.0, std::fabs(target)); }

struct Pattern {
  size_t matmul = 0;
  std::vector<size_t> rest{};  // the other merged nodes
  std::string bias{};          // "" when there is none
  std::string activation{};    // "", "Relu", "Gelu", "GeluTanh"
  std::string output{};
};

class MatMulFuser : GraphIndex {
 public:
  explicit MatMulFuser(Graph& graph) : GraphIndex(graph) {}

  int Run() {
    std::vector<Pattern> patterns;
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      if (claimed_.contains(i)) continue;
      if (std::optional<Pattern> p = Match(i)) {
        claimed_.insert(p->matmul);
        claimed_.insert(p->rest.begin(), p->rest.end());
        patterns.push_back(std::move(*p));
      }
    }
    if (!patterns.empty()) Rewrite(patterns);
    return static_cast<int>(patterns.size());
  }

 private:
  // SoleReader, unless another pattern has claimed it.
  std::optional<size_t> Sole(const std::string& value) const {
    const std::optional<size_t> reader = SoleReader(value);
    if (!reader || claimed_.contains(*reader)) return std::nullopt;
    return reader;
  }

  int Reads(const std::string& value) const {
    auto it = readers_.find(value);
    return it == readers_.end() ? 0 : it->second;
  }

  // A float initializer of one element and rank <= 1.
  std::optional<double> Scalar(const std::string& value) const {
    auto it = graph_.initializers.find(value);
    if (it == graph_.initializers.end() || !IsFloatingDType(it->second.dtype())) return std::nullopt;
    if (it->second.numel() != 1 || it->second.rank() > 1) return std::nullopt;
    return it->second.GetAsDouble(0);
  }

  // Binary `op` reading `value` and a constant near `c` (either order, or only value first).
  bool OpWithConstant(size_t node, const char* op, const std::string& value, double c, bool any_order = true) const {
    const Node& n = graph_.nodes[node];
    if (!IsOnnxOp(n, op) || n.inputs.size() != 2 || n.outputs.size() != 1) return false;
    auto near = [&](const std::string& name) {
      const std::optional<double> v = Scalar(name);
      return v && Near(*v, c);
    };
    return (n.inputs[0] == value && near(n.inputs[1])) || (any_order && n.inputs[1] == value && near(n.inputs[0]));
  }

  // Mul(a, b) in either order.
  bool IsProduct(size_t node, const std::string& a, const std::string& b) const {
    const Node& n = graph_.nodes[node];
    return IsOnnxOp(n, "Mul") && n.inputs.size() == 2 && n.outputs.size() == 1 &&
           ((n.inputs[0] == a && n.inputs[1] == b) || (n.inputs[0] == b && n.inputs[1] == a));
  }

  // x · one_plus · 0.5 written as Mul(Mul(x, one_plus), 0.5) or Mul(Mul(x, 0.5), one_plus); `x_reader`
  // is the reader of x that starts it. Appends the two Muls and returns the output.
  std::optional<std::string> HalfProduct(size_t x_reader, const std::string& x, const std::string& one_plus,
                                         std::vector<size_t>& nodes) const {
    const std::string& first = graph_.nodes[x_reader].outputs[0];
    std::optional<size_t> second = Sole(first);
    if (!second) return std::nullopt;
    const bool times_half_last = IsProduct(x_reader, x, one_plus) && OpWithConstant(*second, "Mul", first, 0.5);
    const bool half_first =
        OpWithConstant(x_reader, "Mul", x, 0.5) && IsProduct(*second, first, one_plus) && Sole(one_plus) == second;
    if (!times_half_last && !half_first) return std::nullopt;
    if (times_half_last && Sole(one_plus) != x_reader) return std::nullopt;
    nodes.push_back(x_reader);
    nodes.push_back(*second);
    return graph_.nodes[*second].outputs[0];
  }

  // GELU, erf form (torch's exporter): 0.5 · x · (1 + Erf(x / √2)), the division also as Mul(x, 1/√2).
  std::optional<std::pair<std::vector<size_t>, std::string>> MatchGelu(const std::string& x) const {
    auto it = consumers_.find(x);
    if (it == consumers_.end() || it->second.size() != 2 || Reads(x) != 2) return std::nullopt;
    for (int pick = 0; pick < 2; ++pick) {
      const size_t scale = it->second[pick], other = it->second[1 - pick];
      if (claimed_.contains(scale) || claimed_.contains(other)) return std::nullopt;
      if (!OpWithConstant(scale, "Div", x, std::sqrt(2.0), false) && !OpWithConstant(scale, "Mul", x, std::sqrt(0.5))) {
        continue;
      }
      std::optional<size_t> erf = Sole(graph_.nodes[scale].outputs[0]);
      if (!erf || !IsOnnxOp(graph_.nodes[*erf], "Erf") || graph_.nodes[*erf].outputs.size() != 1) continue;
      std::optional<size_t> plus = Sole(graph_.nodes[*erf].outputs[0]);
      if (!plus || !OpWithConstant(*plus, "Add", graph_.nodes[*erf].outputs[0], 1.0)) continue;
      std::vector<size_t> nodes = {scale, *erf, *plus};
      std::optional<std::string> out = HalfProduct(other, x, graph_.nodes[*plus].outputs[0], nodes);
      if (out) return std::make_pair(std::move(nodes), *out);
    }
    return std::nullopt;
  }

  // GELU, tanh form (GPT-2's): 0.5 · x · (1 + Tanh(√(2/π) · (x + 0.044715 · Pow(x, 3)))).
  std::optional<std::pair<std::vector<size_t>, std::string>> MatchGeluTanh(const std::string& x) const {
    auto it = consumers_.find(x);
    if (it == consumers_.end() || it->second.size() != 3 || Reads(x) != 3) return std::nullopt;
    std::optional<size_t> pow, sum;
    for (size_t c : it->second) {
      if (claimed_.contains(c)) return std::nullopt;
      const Node& n = graph_.nodes[c];
      if (OpWithConstant(c, "Pow", x, 3.0, false)) pow = c;
      if (IsOnnxOp(n, "Add") && n.inputs.size() == 2) sum = c;
    }
    if (!pow || !sum) return std::nullopt;
    std::optional<size_t> cube = Sole(graph_.nodes[*pow].outputs[0]);
    if (!cube || !OpWithConstant(*cube, "Mul", graph_.nodes[*pow].outputs[0], 0.044715)) return std::nullopt;
    const std::string& cubed = graph_.nodes[*cube].outputs[0];
    const Node& s = graph_.nodes[*sum];
    if (Sole(cubed) != sum ||
        !((s.inputs[0] == x && s.inputs[1] == cubed) || (s.inputs[1] == x && s.inputs[0] == cubed))) {
      return std::nullopt;
    }
    std::optional<size_t> scale = Sole(s.outputs[0]);
    if (!scale || !OpWithConstant(*scale, "Mul", s.outputs[0], std::sqrt(2.0 / std::acos(-1.0)))) return std::nullopt;
    std::optional<size_t> tanh = Sole(graph_.nodes[*scale].outputs[0]);
    if (!tanh || !IsOnnxOp(graph_.nodes[*tanh], "Tanh") || graph_.nodes[*tanh].outputs.size() != 1) return std::nullopt;
    std::optional<size_t> plus = Sole(graph_.nodes[*tanh].outputs[0]);
    if (!plus || !OpWithConstant(*plus, "Add", graph_.nodes[*tanh].outputs[0], 1.0)) return std::nullopt;
    for (size_t c : it->second) {
      if (c == *pow || c == *sum) continue;
      std::vector<size_t> nodes = {*pow, *cube, *sum, *scale, *tanh, *plus};
      std::optional<std::string> out = HalfProduct(c, x, graph_.nodes[*plus].outputs[0], nodes);
      if (out) return std::make_pair(std::move(nodes), *out);
    }
    return std::nullopt;
  }

  std::optional<Pattern> Match(size_t i) const {
    const Node& mm = graph_.nodes[i];
    if (!IsOnnxOp(mm, "MatMul") || mm.inputs.size() != 2 || mm.outputs.size() != 1 || mm.outputs[0].empty()) {
      return std::nullopt;
    }
    auto w = graph_.initializers.find(mm.inputs[1]);
    if (w == graph_.initializers.end() || w->second.dtype() != DType::kF32 || w->second.rank() != 2)
      return std::nullopt;
    const int64_t n = w->second.shape()[1];
    Pattern p{.matmul = i};
    std::string cur = mm.outputs[0];
    if (std::optional<size_t> add = Sole(cur)) {
      const Node& a = graph_.nodes[*add];
      if (IsOnnxOp(a, "Add") && a.inputs.size() == 2 && a.outputs.size() == 1) {
        const std::string& other = a.inputs[0] == cur ? a.inputs[1] : a.inputs[0];
        auto c = graph_.initializers.find(other);
        if (other != cur && c != graph_.initializers.end() && c->second.dtype() == DType::kF32 &&
            c->second.rank() == 1 && c->second.numel() == n) {
          p.bias = other;
          p.rest.push_back(*add);
          cur = a.outputs[0];
        }
      }
    }
    if (std::optional<size_t> relu = Sole(cur); relu && IsOnnxOp(graph_.nodes[*relu], "Relu")) {
      p.activation = "Relu";
      p.rest.push_back(*relu);
      cur = graph_.nodes[*relu].outputs[0];
    } else if (auto gelu = MatchGelu(cur)) {
      p.activation = "Gelu";
      p.rest.insert(p.rest.end(), gelu->first.begin(), gelu->first.end());
      cur = gelu->second;
    } else if (auto gelu_tanh = MatchGeluTanh(cur)) {
      p.activation = "GeluTanh";
      p.rest.insert(p.rest.end(), gelu_tanh->first.begin(), gelu_tanh->first.end());
      cur = gelu_tanh->second;
    }
    if (p.rest.empty()) return std::nullopt;
    p.output = cur;
    return p;
  }

  Node FusedNode(const Pattern& p) const {
    const Node& mm = graph_.nodes[p.matmul];
    Node fused;
    fused.name = mm.name;
    fused.op_type = "FusedMatMul";
    fused.domain = kChipfitDomain;
    fused.inputs = mm.inputs;
    if (!p.bias.empty()) fused.inputs.push_back(p.bias);
    fused.outputs = {p.output};
    if (!p.activation.empty()) {
      Attribute activation;
      activation.kind = Attribute::Kind::kString;
      activation.s = p.activation;
      fused.attributes["activation"] = std::move(activation);
    }
    fused.covers = CoversOf(p.matmul, p.rest);
    return fused;
  }

  void Rewrite(const std::vector<Pattern>& patterns) {
    std::vector<FusedRewrite> rewrites;
    for (const Pattern& p : patterns) {
      std::vector<size_t> nodes = p.rest;
      nodes.push_back(p.matmul);
      rewrites.push_back({std::move(nodes), FusedNode(p)});
    }
    ReplaceWithFused(std::move(rewrites));
  }

  std::set<size_t> claimed_;

 public:
  // FoldTransposesIntoMatMul: each MatMul / FusedMatMul with its operands' Transposes, a scalar scale and
  // its result's Transpose as attributes.
  int FoldTransposes() {
    std::vector<FusedRewrite> rewrites;
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      const Node& mm = graph_.nodes[i];
      const bool fused = mm.op_type == "FusedMatMul" && mm.domain == kChipfitDomain;
      if (claimed_.contains(i) || !(IsOnnxOp(mm, "MatMul") || fused) || mm.inputs.size() < 2 ||
          mm.outputs.size() != 1 || mm.outputs[0].empty()) {
        continue;
      }
      if (mm.attributes.contains("perm_a") || mm.attributes.contains("perm_b") || mm.attributes.contains("perm_y")) {
        continue;
      }
      Node folded = mm;
      folded.op_type = "FusedMatMul";
      folded.domain = kChipfitDomain;
      std::vector<size_t> rest;
      for (size_t k = 0; k < 2; ++k) {
        auto writer = producer_.find(mm.inputs[k]);
        if (writer == producer_.end() || claimed_.contains(writer->second) || Sole(mm.inputs[k]) != i) continue;
        const Node& t = graph_.nodes[writer->second];
        const std::vector<int64_t> perm = t.GetInts("perm");
        if (!IsOnnxOp(t, "Transpose") || t.inputs.size() != 1 || t.outputs.size() != 1 || perm.size() < 2) continue;
        folded.inputs[k] = t.inputs[0];
        folded.attributes[k == 0 ? "perm_a" : "perm_b"] = Ints(perm);
        rest.push_back(writer->second);
      }
      // A scale by a float32 constant: only on a bare product (a bias would be scaled too).
      const bool bare =
          !fused || (mm.inputs.size() < 3 && !mm.attributes.contains("activation") && !mm.attributes.contains("alpha"));
      std::string out = mm.outputs[0];
      bool scaled = false;
      bool transposed = false;
      while (std::optional<size_t> reader = Sole(out)) {
        const Node& n = graph_.nodes[*reader];
        if (!scaled && bare && (IsOnnxOp(n, "Div") || IsOnnxOp(n, "Mul")) && n.inputs.size() == 2 &&
            n.outputs.size() == 1) {
          const bool div = IsOnnxOp(n, "Div");
          const std::string& other = n.inputs[0] == out ? n.inputs[1] : (div ? std::string() : n.inputs[0]);
          auto c = graph_.initializers.find(other);
          const std::optional<double> v = Scalar(other);
          if (c != graph_.initializers.end() && c->second.dtype() == DType::kF32 && v && *v != 0 && std::isfinite(*v)) {
            Attribute alpha;
            alpha.kind = Attribute::Kind::kFloat;
            alpha.f = static_cast<float>(div ? 1.0 / *v : *v);
            folded.attributes["alpha"] = alpha;
            scaled = true;
            rest.push_back(*reader);
            out = n.outputs[0];
            continue;
          }
        }
        const std::vector<int64_t> perm = n.GetInts("perm");
        if (!transposed && IsOnnxOp(n, "Transpose") && n.inputs.size() == 1 && n.outputs.size() == 1 &&
            perm.size() >= 2) {
          folded.attributes["perm_y"] = Ints(perm);
          transposed = true;
          rest.push_back(*reader);
          out = n.outputs[0];
          continue;
        }
        break;
      }
      if (rest.empty()) continue;
      claimed_.insert(i);
      claimed_.insert(rest.begin(), rest.end());
      folded.outputs = {out};
      folded.covers = CoversOf(i, rest);
      rest.push_back(i);
      rewrites.push_back({std::move(rest), std::move(folded)});
    }
    const int count = static_cast<int>(rewrites.size());
    if (count > 0) ReplaceWithFused(std::move(rewrites));
    return count;
  }

 private:
  static Attribute Ints(const std::vector<int64_t>& values) {
    Attribute a;
    a.kind = Attribute::Kind::kInts;
    a.ints = values;
    return a;
  }
};

}  // namespace

int FuseMatMulBiasActivation(Graph& graph) { return MatMulFuser(graph).Run(); }

int FoldTransposesIntoMatMul(Graph& graph) { return MatMulFuser(graph).FoldTransposes(); }

}  // namespace chipfit
