// FuseChannelShuffle: ShuffleNet's channel shuffle (Reshape → Transpose → Reshape) as one com.chipfit
// ChannelShuffle node.
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/graph/graph_index.h"
#include "core/graph/passes.h"
#include "core/reference/ops.h"

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
    const std::optional<size_t> t = SoleReader(split.outputs[0]);
    if (!t) return std::nullopt;
    const Node& transpose = graph_.nodes[*t];
    if (!IsOnnxOp(transpose, "Transpose") || transpose.outputs.size() != 1 ||
        transpose.GetInts("perm") != std::vector<int64_t>{0, 2, 1, 3, 4}) {
      return std::nullopt;
    }
    const std::optional<size_t> m = SoleReader(transpose.outputs[0]);
    if (!m) return std::nullopt;
    const Node& merge = graph_.nodes[*m];
    if (!IsOnnxOp(merge, "Reshape") || merge.inputs.size() != 2 || merge.inputs[0] != transpose.outputs[0]) {
      return std::nullopt;
    }
    auto back = graph_.initializers.find(merge.inputs[1]);
    if (back == graph_.initializers.end() || back->second.rank() != 1) return std::nullopt;
    // The merge's target resolved as the Reshape op resolves it (0 copies a dim unless allowzero, -1 infers).
    const Shape transposed = {grouped[0], grouped[2], group, grouped[3], grouped[4]};
    const bool allowzero = graph_.opset >= 14 && merge.GetInt("allowzero", 0) != 0;
    const Result<Shape> merged = ReshapeTarget(merge, transposed, back->second.ToInt64Vector(), allowzero);
    if (!merged.ok() || *merged != x) return std::nullopt;
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
