// FuseChannelShuffle: ShuffleNet's channel shuffle (Reshape → Transpose → Reshape) as one com.chipfit
// ChannelShuffle node.
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

class ShuffleFuser : GraphIndex {
 public:
  explicit ShuffleFuser(Graph& graph) : GraphIndex(graph) {}

  int Run() {
    std::vector<FusedRewrite> rewrites;
    std::set<size_t> claimed;
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      if (claimed.contains(i)) continue;
      std::optional<FusedRewrite> r = Match(i);
      if (!r) continue;
      claimed.insert(r->nodes.begin(), r->nodes.end());
      rewrites.push_back(std::move(*r));
    }
    const int count = static_cast<int>(rewrites.size());
    if (count > 0) ReplaceWithFused(std::move(rewrites));
    return count;
  }

 private:
  // The only node reading `value`, which nothing else reads (no graph output, no body).
  std::optional<size_t> Sole(const std::string& value) const {
    auto it = consumers_.find(value);
    auto reads = readers_.find(value);
    if (it == consumers_.end() || it->second.size() != 1 || reads == readers_.end() || reads->second != 1) {
      return std::nullopt;
    }
    return it->second[0];
  }

  // A Reshape of `node` with a constant target shape, resolved against `in` (0 copies the input's dim
  // unless allowzero, one -1 takes what is left); nullopt when it is not one or does not resolve.
  std::optional<Shape> ReshapeTarget(const Node& node, const Shape& in) const {
    if (!IsOnnxOp(node, "Reshape") || node.inputs.size() != 2 || node.outputs.size() != 1) return std::nullopt;
    auto c = graph_.initializers.find(node.inputs[1]);
    if (c == graph_.initializers.end() || c->second.rank() != 1) return std::nullopt;
    const bool allowzero = node.GetInt("allowzero", 0) != 0;
    Shape out = c->second.ToInt64Vector();
    int64_t known = 1, infer_at = -1;
    for (size_t d = 0; d < out.size(); ++d) {
      if (out[d] == 0 && !allowzero) {
        if (d >= in.size()) return std::nullopt;
        out[d] = in[d];
      }
      if (out[d] == -1) {
        if (infer_at >= 0) return std::nullopt;
        infer_at = static_cast<int64_t>(d);
        continue;
      }
      if (out[d] <= 0) return std::nullopt;
      known *= out[d];
    }
    if (infer_at >= 0) {
      if (NumElements(in) % known != 0) return std::nullopt;
      out[static_cast<size_t>(infer_at)] = NumElements(in) / known;
    }
    if (NumElements(out) != NumElements(in)) return std::nullopt;
    return out;
  }

  // Reshape(x → [N, g, C/g, H, W], a constant of positive dims) → Transpose(0, 2, 1, 3, 4) → Reshape(→
  // [N, C, H, W]), each intermediate read only by the next node. x's own shape need not be known here:
  // the node reads x as [N, C, H, W] (attribute `shape`), as the first Reshape does.
  std::optional<FusedRewrite> Match(size_t first) const {
    const Node& split = graph_.nodes[first];
    if (!IsOnnxOp(split, "Reshape") || split.inputs.size() != 2) return std::nullopt;
    auto c = graph_.initializers.find(split.inputs[1]);
    if (c == graph_.initializers.end() || c->second.rank() != 1 || c->second.numel() != 5) return std::nullopt;
    const Shape grouped = c->second.ToInt64Vector();
    for (int64_t d : grouped) {
      if (d <= 0) return std::nullopt;
    }
    const int64_t group = grouped[1];
    if (group < 2) return std::nullopt;
    const Shape x = {grouped[0], group * grouped[2], grouped[3], grouped[4]};
    const std::optional<size_t> t = Sole(split.outputs[0]);
    if (!t) return std::nullopt;
    const Node& transpose = graph_.nodes[*t];
    if (!IsOnnxOp(transpose, "Transpose") || transpose.outputs.size() != 1 ||
        transpose.GetInts("perm") != std::vector<int64_t>{0, 2, 1, 3, 4}) {
      return std::nullopt;
    }
    const std::optional<size_t> m = Sole(transpose.outputs[0]);
    if (!m) return std::nullopt;
    const Node& merge = graph_.nodes[*m];
    if (merge.inputs.empty() || merge.inputs[0] != transpose.outputs[0]) return std::nullopt;
    const Shape transposed = {grouped[0], grouped[2], group, grouped[3], grouped[4]};
    if (ReshapeTarget(merge, transposed) != x) return std::nullopt;
    Node fused;
    fused.name = split.name;
    fused.op_type = "ChannelShuffle";
    fused.domain = kChipfitDomain;
    fused.inputs = {split.inputs[0]};
    fused.outputs = {merge.outputs[0]};
    Attribute g;
    g.kind = Attribute::Kind::kInt;
    g.i = group;
    fused.attributes["group"] = g;
    Attribute shape;
    shape.kind = Attribute::Kind::kInts;
    shape.ints = x;
    fused.attributes["shape"] = shape;
    fused.covers = CoversOf(first, {*t, *m});
    return FusedRewrite{{first, *t, *m}, std::move(fused)};
  }
};

}  // namespace

int FuseChannelShuffle(Graph& graph) { return ShuffleFuser(graph).Run(); }

}  // namespace chipfit
