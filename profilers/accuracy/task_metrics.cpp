// Task metrics of task_metrics.h: the output's task from the graph that computes it (or its shape and
// values), and agreement counted per row, box, pixel, position, vector, sequence or map.
#include "profilers/accuracy/task_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <set>
#include <utility>

namespace chipfit {

namespace {

constexpr TaskKind kAllTasks[] = {TaskKind::kClassify,      TaskKind::kDetect,    TaskKind::kSegment,
                                  TaskKind::kLanguageModel, TaskKind::kEmbedding, TaskKind::kSequence,
                                  TaskKind::kMap,           TaskKind::kNone};

// A vocabulary this large makes a per-position head a language model's (GPT-2 50257, BERT 30522,
// Llama 32000; character sets of CTC recognisers are mostly below it, and those end in a Softmax).
constexpr int64_t kVocabularyMin = 1000;

std::string TaskList() {
  std::string list;
  for (TaskKind t : kAllTasks) list += (list.empty() ? "" : "|") + std::string(TaskName(t));
  return list;
}

}  // namespace

std::string_view TaskName(TaskKind task) {
  switch (task) {
    case TaskKind::kClassify: return "classify";
    case TaskKind::kDetect: return "detect";
    case TaskKind::kSegment: return "segment";
    case TaskKind::kLanguageModel: return "lm";
    case TaskKind::kEmbedding: return "embedding";
    case TaskKind::kSequence: return "sequence";
    case TaskKind::kMap: return "map";
    case TaskKind::kNone: break;
  }
  return "none";
}

Result<TaskKind> ParseTask(const std::string& text) {
  for (TaskKind t : kAllTasks) {
    if (text == TaskName(t)) return t;
  }
  if (text == "ctc") return TaskKind::kSequence;
  return InvalidArgument("task '" + text + "': expected one of " + TaskList() + " (ctc = sequence)");
}

Status ParseTaskOverride(const std::string& text, TaskOptions& options) {
  const auto eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0) {
    return InvalidArgument("--task '" + text + "': expected OUTPUT=" + TaskList());
  }
  auto task = ParseTask(text.substr(eq + 1));
  if (!task.ok()) return InvalidArgument("--task '" + text + "': " + task.status().message());
  options.overrides[text.substr(0, eq)] = *task;
  return Status::Ok();
}

// Output origins ---------------------------------------------------------------------------------

namespace {

// What the walk from an output back to its head passes through without changing what the values mean.
bool IsLayoutOp(const std::string& op) {
  static const std::set<std::string> kOps = {"Identity",  "Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                             "Transpose", "Cast",    "Dropout", "Slice",   "Expand"};
  return kOps.contains(op);
}

bool IsElementwiseArith(const std::string& op) { return op == "Add" || op == "Sub" || op == "Mul" || op == "Div"; }

class GraphIndex {
 public:
  explicit GraphIndex(const Graph& graph) : graph_(graph) {
    for (const Node& node : graph.nodes) {
      for (const std::string& out : node.outputs) {
        if (!out.empty()) producer_[out] = &node;
      }
    }
    for (const ValueDesc& v : graph.inputs) inputs_[v.name] = &v;
    for (const ValueDesc& v : graph.outputs) outputs_[v.name] = &v;
  }

  const Node* Producer(const std::string& value) const {
    auto it = producer_.find(value);
    return it == producer_.end() ? nullptr : it->second;
  }
  bool IsConstant(const std::string& value) const {
    if (graph_.initializers.contains(value)) return true;
    const Node* node = Producer(value);
    return node != nullptr && node->op_type == "Constant";
  }
  const ValueDesc* Input(const std::string& value) const {
    auto it = inputs_.find(value);
    return it == inputs_.end() ? nullptr : it->second;
  }
  // The value's shape where the graph knows it (initializer, Constant, graph input/output, value_info).
  std::optional<Shape> ShapeOf(const std::string& value) const {
    if (auto it = graph_.initializers.find(value); it != graph_.initializers.end()) return it->second.shape();
    if (const Node* node = Producer(value); node != nullptr && node->op_type == "Constant") {
      if (const Tensor* t = node->GetTensor("value")) return t->shape();
    }
    for (const auto* map : {&inputs_, &outputs_}) {
      if (auto it = map->find(value); it != map->end() && it->second->has_shape) return it->second->shape;
    }
    if (auto it = graph_.value_info.find(value); it != graph_.value_info.end() && it->second.has_shape) {
      return it->second.shape;
    }
    return std::nullopt;
  }
  const Graph& graph() const { return graph_; }

 private:
  const Graph& graph_;
  std::map<std::string, const Node*> producer_;
  std::map<std::string, const ValueDesc*> inputs_, outputs_;
};

int64_t NormalisedAxis(int64_t axis, int rank) { return axis < 0 && rank > 0 ? axis + rank : axis; }

// The reduced size of a MatMul/Gemm head and the input channels and kernel of a Conv head.
void DescribeHead(const GraphIndex& index, const Node& head, OutputOrigin& origin) {
  auto dim = [](const std::optional<Shape>& s, int from_end) -> int64_t {
    if (!s || static_cast<int>(s->size()) < from_end) return 0;
    return std::max<int64_t>((*s)[s->size() - static_cast<size_t>(from_end)], 0);
  };
  if (head.op_type == "MatMul" && head.inputs.size() >= 2) {
    origin.features = dim(index.ShapeOf(head.inputs[1]), 2);
    if (origin.features == 0) origin.features = dim(index.ShapeOf(head.inputs[0]), 1);
  } else if (head.op_type == "Gemm" && head.inputs.size() >= 2) {
    const auto b = index.ShapeOf(head.inputs[1]);
    if (b && b->size() == 2) origin.features = std::max<int64_t>((*b)[head.GetInt("transB", 0) != 0 ? 1 : 0], 0);
  } else if (head.op_type == "Conv" && head.inputs.size() >= 2) {
    if (const auto w = index.ShapeOf(head.inputs[1]); w && w->size() >= 3) {
      origin.features = std::max<int64_t>((*w)[1], 0) * head.GetInt("group", 1);
      origin.kernel.assign(w->begin() + 2, w->end());
    }
  }
}

// A NonMaxSuppression or TopK inside the If/Loop/Scan bodies of `node` (exporters put a detector's
// NMS in an If that skips it when there are no boxes).
void DescribeBodies(const Node& node, OutputOrigin& origin) {
  for (const auto& [name, attr] : node.attributes) {
    if (attr.kind != Attribute::Kind::kGraph || !attr.graph) continue;
    for (const Node& inner : attr.graph->nodes) {
      if (inner.op_type == "NonMaxSuppression" && origin.nms_node.empty()) {
        origin.nms_node = node.name + "/" + name + "/" + inner.name;
        origin.center_point_box = inner.GetInt("center_point_box", 0) != 0;
      }
      if (inner.op_type == "TopK" && origin.topk_node.empty())
        origin.topk_node = node.name + "/" + name + "/" + inner.name;
      DescribeBodies(inner, origin);
    }
  }
}

// Everything upstream of `value`: detection ops, and token ids feeding an embedding table.
void DescribeUpstream(const GraphIndex& index, const std::string& value, OutputOrigin& origin) {
  std::set<std::string> seen;
  std::vector<std::string> stack{value};
  bool integer_input = false, embedding_gather = false;
  while (!stack.empty()) {
    const std::string v = stack.back();
    stack.pop_back();
    if (v.empty() || !seen.insert(v).second) continue;
    if (const ValueDesc* in = index.Input(v); in != nullptr && IsIntegerDType(in->dtype)) integer_input = true;
    const Node* node = index.Producer(v);
    if (node == nullptr) continue;
    if (node->op_type == "NonMaxSuppression" && origin.nms_node.empty()) {
      origin.nms_node = node->name;
      origin.center_point_box = node->GetInt("center_point_box", 0) != 0;
    }
    if (node->op_type == "TopK" && origin.topk_node.empty()) origin.topk_node = node->name;
    DescribeBodies(*node, origin);
    // An embedding lookup: Gather from a constant table by computed (not constant) indices.
    if (node->op_type == "Gather" && node->inputs.size() >= 2 && index.IsConstant(node->inputs[0]) &&
        !index.IsConstant(node->inputs[1])) {
      const auto table = index.ShapeOf(node->inputs[0]);
      if (table && table->size() == 2) embedding_gather = true;
    }
    for (const std::string& in : node->inputs) stack.push_back(in);
  }
  origin.token_input = integer_input && embedding_gather;
}

}  // namespace

std::map<std::string, OutputOrigin> DescribeOutputs(const Graph& graph) {
  const GraphIndex index(graph);
  std::map<std::string, OutputOrigin> origins;
  for (const ValueDesc& out : graph.outputs) {
    OutputOrigin origin;
    origin.dtype = out.dtype;
    if (out.has_shape) {
      origin.rank = static_cast<int>(out.shape.size());
      origin.shape = out.shape;
    }
    // Walk back through layout ops, a constant bias or scale, Resize and a final activation.
    std::string value = out.name;
    const Node* head = nullptr;
    for (int steps = 0; steps < 64; ++steps) {
      const Node* node = index.Producer(value);
      if (node == nullptr || node->inputs.empty()) break;
      const std::string& op = node->op_type;
      if (IsLayoutOp(op)) {
        value = node->inputs[0];
        continue;
      }
      if (op == "Resize" || op == "Upsample") {
        origin.resized = true;
        value = node->inputs[0];
        continue;
      }
      if (op == "Softmax" || op == "LogSoftmax" || op == "Sigmoid") {
        if (origin.activation.empty()) {
          origin.activation = op;
          if (op != "Sigmoid") {
            // Softmax's default axis is -1 from opset 13, 1 before it.
            const int64_t axis = node->GetInt("axis", graph.opset >= 13 ? -1 : 1);
            const auto in_shape = index.ShapeOf(node->inputs[0]);
            const int rank = in_shape ? static_cast<int>(in_shape->size()) : origin.rank;
            origin.activation_axis = NormalisedAxis(axis, rank);
            // The axis counts in the Softmax's input; a later Reshape/Transpose may move it, so an axis
            // is kept only where the ranks agree and it is the last.
            if (rank != origin.rank) origin.activation_axis = -1;
          }
        }
        value = node->inputs[0];
        continue;
      }
      if (IsElementwiseArith(op) && node->inputs.size() == 2) {
        const bool c0 = index.IsConstant(node->inputs[0]), c1 = index.IsConstant(node->inputs[1]);
        if (c0 != c1) {
          value = c0 ? node->inputs[1] : node->inputs[0];
          continue;
        }
      }
      head = node;
      break;
    }
    if (head != nullptr) {
      origin.head_op = head->op_type;
      origin.head_node = head->name;
      DescribeHead(index, *head, origin);
    }
    DescribeUpstream(index, out.name, origin);
    if (origin.rank == 4 && origin.shape[2] > 0 && origin.shape[3] > 0) {
      for (const ValueDesc& in : graph.inputs) {
        if (in.has_shape && in.shape.size() == 4 && in.shape[2] == origin.shape[2] && in.shape[3] == origin.shape[3]) {
          origin.input_resolution = true;
        }
      }
    }
    origins[out.name] = std::move(origin);
  }
  return origins;
}

TaskOptions WithGraph(TaskOptions options, const Graph& graph) {
  options.origins = DescribeOutputs(graph);
  return options;
}

// Choosing the task ------------------------------------------------------------------------------

namespace {

std::string Dims(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool AllProbabilities(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.GetAsDouble(i);
    if (!(v >= 0.0 && v <= 1.0)) return false;
  }
  return true;
}

// Every row over the last dim is a distribution (values in [0, 1] summing to 1): a Softmax's output.
bool RowsAreDistributions(const Tensor& t) {
  if (t.rank() == 0 || t.numel() == 0) return false;
  const int64_t c = t.dim(t.rank() - 1);
  for (int64_t r = 0; r < t.numel() / c; ++r) {
    double sum = 0;
    for (int64_t i = 0; i < c; ++i) {
      const double v = t.GetAsDouble(r * c + i);
      if (!(v >= 0.0 && v <= 1.0)) return false;
      sum += v;
    }
    if (std::abs(sum - 1.0) > 1e-3) return false;
  }
  return true;
}

// "from MatMul over 768 features" — the head as the user reads it.
std::string From(const OutputOrigin& o) {
  if (o.head_op.empty()) return "with no computing node found";
  std::string s = "from " + o.head_op;
  if ((o.head_op == "MatMul" || o.head_op == "Gemm") && o.features > 0) {
    s += fmt::format(" over {} features", o.features);
  } else if (o.head_op == "Conv" && !o.kernel.empty()) {
    std::string k;
    for (int64_t d : o.kernel) k += (k.empty() ? "" : "x") + std::to_string(d);
    s += " (" + k + " kernel)";
  }
  if (!o.activation.empty()) s += " then " + o.activation;
  if (o.resized) s += ", resized";
  return s;
}

bool LinearHead(const OutputOrigin& o) { return o.head_op == "MatMul" || o.head_op == "Gemm"; }

bool SoftmaxOver(const OutputOrigin& o, int64_t axis) {
  return (o.activation == "Softmax" || o.activation == "LogSoftmax") && o.activation_axis == axis;
}

TaskChoice FromGraph(const OutputOrigin& o, const Shape& shape) {
  const int rank = static_cast<int>(shape.size());
  const int64_t last = shape.back();
  const std::string dims = Dims(shape);
  const std::string from = From(o);
  const std::string upstream = !o.nms_node.empty()    ? "NonMaxSuppression '" + o.nms_node + "'"
                               : !o.topk_node.empty() ? "TopK '" + o.topk_node + "'"
                                                      : "";
  if ((rank == 2 || rank == 3) && last == 4 && !upstream.empty()) {
    return {TaskKind::kDetect, "detection boxes: " + dims + " downstream of " + upstream};
  }
  if (!o.nms_node.empty()) {
    return {TaskKind::kNone, dims + " downstream of " + upstream +
                                 ": per-detection values (their count varies between runs), scored with the boxes"};
  }
  if (rank == 2 && last > 1) {
    if (o.token_input && !SoftmaxOver(o, 1) && !(LinearHead(o) && last >= kVocabularyMin)) {
      return {TaskKind::kEmbedding, "text embedding: " + dims + " " + from + ", token-id input, no class softmax"};
    }
    if (o.head_op == "LayerNormalization" || o.head_op == "GlobalAveragePool" || o.head_op == "ReduceMean" ||
        o.head_op == "ReduceL2" || o.head_op == "LpNormalization" || o.head_op == "AveragePool" ||
        o.head_op == "GlobalMaxPool") {
      return {TaskKind::kEmbedding, "features: " + dims + " " + from + ", no class head"};
    }
    if (LinearHead(o) || o.head_op == "Conv" || SoftmaxOver(o, 1)) {
      return {TaskKind::kClassify, "class scores: " + dims + " " + from};
    }
    return {TaskKind::kClassify,
            "class scores assumed: " + dims + " " + from + " (--task OUTPUT=embedding if these are features)"};
  }
  if (rank == 3 && last > 1) {
    const bool vocabulary = LinearHead(o) && last >= kVocabularyMin && (o.features == 0 || last > o.features);
    if (o.token_input) {
      if (vocabulary || SoftmaxOver(o, 2)) {
        return {TaskKind::kLanguageModel,
                fmt::format("language-model logits: {} {}, token-id input, last dim {} a vocabulary", dims, from,
                            vocabulary ? fmt::format("> {}:", kVocabularyMin - 1) : "under a Softmax:")};
      }
      return {TaskKind::kEmbedding, "hidden states: " + dims + " " + from + ", token-id input, no vocabulary head"};
    }
    if (SoftmaxOver(o, 2)) {
      return {TaskKind::kSequence,
              fmt::format("CTC-like sequence: {} {}: class scores at each of {} positions, input not token ids", dims,
                          from, shape[1])};
    }
    if (LinearHead(o) && o.features > 0 && last < o.features) {
      return {TaskKind::kSequence, fmt::format("CTC-like sequence: {} {} down to {} classes per position, input "
                                               "not token ids",
                                               dims, from, last)};
    }
    if (vocabulary) {
      return {TaskKind::kLanguageModel, fmt::format("language-model logits: {} {}, last dim > {} (a vocabulary)", dims,
                                                    from, kVocabularyMin - 1)};
    }
    return {TaskKind::kEmbedding, "per-position features: " + dims + " " + from + ", no class head"};
  }
  if (rank == 4 && std::count_if(shape.begin() + 1, shape.end(), [](int64_t d) { return d > 1; }) == 1) {
    // One vector per item stored 4-D ([N, C, 1, 1], or [N, 1, 1, C] from NHWC exporters).
    if (o.activation == "Softmax" || o.activation == "LogSoftmax") {
      return {TaskKind::kClassify, "class scores: " + dims + " " + from};
    }
    return {TaskKind::kEmbedding, "a vector per item: " + dims + " " + from + ", no class softmax"};
  }
  if (rank == 4 && shape[1] > 1) {
    if (SoftmaxOver(o, 1) || o.resized || o.input_resolution) {
      // From() already says "resized".
      const std::string reason = SoftmaxOver(o, 1) ? "; a Softmax over the channels"
                                 : o.resized       ? ""
                                                   : "; at the input's resolution";
      return {TaskKind::kSegment,
              fmt::format("segmentation: {} class scores per pixel ({} classes), {}{}", dims, shape[1], from, reason)};
    }
    return {TaskKind::kNone, "feature map " + dims + " " + from +
                                 ": no class softmax, not upsampled, not at the input's resolution: SQNR only"};
  }
  return {TaskKind::kNone, ""};
}

}  // namespace

TaskChoice ChooseTask(const std::string& output, const Tensor& reference, const TaskOptions& options) {
  if (const auto it = options.overrides.find(output); it != options.overrides.end()) {
    return {it->second, "--task " + output + "=" + std::string(TaskName(it->second))};
  }
  const Shape& shape = reference.shape();
  const std::string dims = Dims(shape);
  if (!IsFloatingDType(reference.dtype())) {
    return {TaskKind::kNone, dims + " " + std::string(DTypeName(reference.dtype())) + " values: SQNR only"};
  }
  if (reference.rank() == 0 || reference.numel() <= 1) return {TaskKind::kNone, "a single value: SQNR only"};
  const auto origin = options.origins.find(output);
  if (origin != options.origins.end()) {
    TaskChoice choice = FromGraph(origin->second, shape);
    if (choice.task != TaskKind::kNone || !choice.why.empty()) return choice;
  } else {
    // No graph at hand: the shape and the values alone.
    if (reference.rank() == 2 && reference.dim(1) > 1) return {TaskKind::kClassify, "class scores: " + dims};
    if (reference.rank() == 3 && reference.dim(1) > 1 && reference.dim(2) > 1) {
      if (RowsAreDistributions(reference)) {
        return {TaskKind::kSequence, "CTC-like sequence: " + dims + ", every position a distribution over classes"};
      }
      if (reference.dim(2) >= kVocabularyMin) {
        return {TaskKind::kLanguageModel,
                fmt::format("language-model logits: {}, last dim > {}", dims, kVocabularyMin - 1)};
      }
      return {TaskKind::kEmbedding, "per-position features: " + dims + ", not distributions, no vocabulary"};
    }
  }
  if (reference.rank() == 4 && reference.dim(1) == 1) {
    if (AllProbabilities(reference)) return {TaskKind::kMap, "probability map: " + dims + ", every value in [0, 1]"};
    return {TaskKind::kNone, "map " + dims + " with values outside [0, 1] (logits, depth): SQNR only"};
  }
  return {TaskKind::kNone, dims + ": no task fits this shape: SQNR only"};
}

// Metrics ----------------------------------------------------------------------------------------

std::vector<int64_t> ArgmaxRows(const Tensor& t, int64_t classes) {
  std::vector<int64_t> best;
  const int64_t rows = classes > 0 ? t.numel() / classes : 0;
  best.reserve(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    int64_t arg = 0;
    double top = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < classes; ++c) {
      const double v = t.GetAsDouble(r * classes + c);
      if (v > top) {
        top = v;
        arg = c;
      }
    }
    best.push_back(arg);
  }
  return best;
}

std::vector<int64_t> CtcCollapse(const std::vector<int64_t>& argmax, int64_t blank) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < argmax.size(); ++i) {
    if (i > 0 && argmax[i] == argmax[i - 1]) continue;
    if (argmax[i] != blank) out.push_back(argmax[i]);
  }
  return out;
}

double BoxIou(const double a[4], const double b[4]) {
  const double area_a = std::max(0.0, a[2] - a[0]) * std::max(0.0, a[3] - a[1]);
  const double area_b = std::max(0.0, b[2] - b[0]) * std::max(0.0, b[3] - b[1]);
  const double iw = std::min(a[2], b[2]) - std::max(a[0], b[0]);
  const double ih = std::min(a[3], b[3]) - std::max(a[1], b[1]);
  if (iw <= 0 || ih <= 0) return 0;
  const double inter = iw * ih, uni = area_a + area_b - inter;
  return uni > 0 ? inter / uni : 0;
}

namespace {

// One image's boxes as corners, their labels (-1 when none) and scores (0 when none).
struct Boxes {
  std::vector<std::array<double, 4>> corners;
  std::vector<int64_t> labels;
  std::vector<double> scores;
};

// Image `image` of `boxes` ([N, 4] is one image, [B, N, 4] B images), with `labels` and `scores` of
// the same leading shape where given.
Boxes ImageBoxes(const Tensor& boxes, const Tensor* labels, const Tensor* scores, int64_t image, bool center) {
  Boxes out;
  const int64_t per_image = boxes.rank() == 3 ? boxes.dim(1) : boxes.dim(0);
  const int64_t first = image * per_image;
  for (int64_t i = first; i < first + per_image; ++i) {
    std::array<double, 4> b{};
    for (int64_t k = 0; k < 4; ++k) b[static_cast<size_t>(k)] = boxes.GetAsDouble(i * 4 + k);
    if (center) b = {b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2};
    out.corners.push_back(b);
    out.labels.push_back(labels != nullptr ? static_cast<int64_t>(std::llround(labels->GetAsDouble(i))) : -1);
    out.scores.push_back(scores != nullptr ? scores->GetAsDouble(i) : 0.0);
  }
  return out;
}

// Greedy matching, the reference's boxes by descending score: each takes the unmatched target box
// of the same label with the highest IoU at or above `threshold`. Returns the pairs matched.
int64_t MatchBoxes(const Boxes& target, const Boxes& reference, double threshold) {
  std::vector<size_t> order(reference.corners.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return reference.scores[a] > reference.scores[b]; });
  std::vector<bool> taken(target.corners.size(), false);
  int64_t matched = 0;
  for (size_t r : order) {
    double best = threshold;
    std::optional<size_t> pick;
    for (size_t t = 0; t < target.corners.size(); ++t) {
      if (taken[t] || target.labels[t] != reference.labels[r]) continue;
      const double iou = BoxIou(target.corners[t].data(), reference.corners[r].data());
      if (iou >= best) {
        best = iou;
        pick = t;
      }
    }
    if (pick) {
      taken[*pick] = true;
      ++matched;
    }
  }
  return matched;
}

const Tensor* Find(const OutputValues& values, const std::string& name) {
  if (name.empty()) return nullptr;
  auto it = values.find(name);
  return it == values.end() ? nullptr : it->second;
}

}  // namespace

void TaskAccumulator::AddDetections(const std::string& output, const Tensor& actual, const Tensor& reference,
                                    const OutputValues& actual_outputs, const OutputValues& reference_outputs) {
  const bool valid_ref = (reference.rank() == 2 || reference.rank() == 3) && reference.dim(reference.rank() - 1) == 4;
  if (!valid_ref) return;
  const Shape leading(reference.shape().begin(), reference.shape().end() - 1);
  if (!detect_peers_found_) {
    // Labels and scores: the other outputs of the boxes' leading shape, integer and floating.
    detect_peers_found_ = true;
    const auto own = options_.origins.find(output);
    const std::string nms = own != options_.origins.end() ? own->second.nms_node : "";
    auto better = [&](const std::string& current, const std::string& candidate) {
      if (current.empty()) return true;
      auto c = options_.origins.find(candidate), k = options_.origins.find(current);
      const bool cand_same = c != options_.origins.end() && !nms.empty() && c->second.nms_node == nms;
      const bool cur_same = k != options_.origins.end() && !nms.empty() && k->second.nms_node == nms;
      return cand_same && !cur_same;
    };
    for (const auto& [name, value] : reference_outputs) {
      if (name == output || value == nullptr || value->shape() != leading) continue;
      if (IsIntegerDType(value->dtype()) && better(detect_labels_, name)) detect_labels_ = name;
      if (IsFloatingDType(value->dtype()) && better(detect_scores_, name)) detect_scores_ = name;
    }
  }
  const auto own = options_.origins.find(output);
  const bool center = own != options_.origins.end() && own->second.center_point_box;
  const bool actual_ok = actual.rank() == reference.rank() && actual.dim(actual.rank() - 1) == 4 &&
                         (actual.rank() == 2 || actual.dim(0) == reference.dim(0));
  auto peer = [&](const OutputValues& values, const std::string& name, const Tensor& boxes) -> const Tensor* {
    const Tensor* t = Find(values, name);
    const Shape lead(boxes.shape().begin(), boxes.shape().end() - 1);
    return t != nullptr && t->shape() == lead ? t : nullptr;
  };
  const Tensor* ref_labels = peer(reference_outputs, detect_labels_, reference);
  const Tensor* ref_scores = peer(reference_outputs, detect_scores_, reference);
  const Tensor* act_labels = actual_ok ? peer(actual_outputs, detect_labels_, actual) : nullptr;
  const Tensor* act_scores = actual_ok ? peer(actual_outputs, detect_scores_, actual) : nullptr;
  // Labels only count where both sides have them; else every box has label -1 and IoU alone decides.
  const bool labels = ref_labels != nullptr && act_labels != nullptr;
  const int64_t images = reference.rank() == 3 ? reference.dim(0) : 1;
  for (int64_t i = 0; i < images; ++i) {
    const Boxes r = ImageBoxes(reference, labels ? ref_labels : nullptr, ref_scores, i, center);
    reference_boxes_ += static_cast<int64_t>(r.corners.size());
    if (!actual_ok) continue;
    const Boxes a = ImageBoxes(actual, labels ? act_labels : nullptr, act_scores, i, center);
    target_boxes_ += static_cast<int64_t>(a.corners.size());
    matched_boxes_ += MatchBoxes(a, r, options_.box_iou);
  }
  if (!labels) detect_labels_.clear();
  ++items_;
}

void TaskAccumulator::AddSegmentation(const Tensor& actual, const Tensor& reference) {
  if (reference.rank() != 4) return;
  const int64_t n = reference.dim(0), classes = reference.dim(1), pixels = reference.dim(2) * reference.dim(3);
  if (class_union_.size() < static_cast<size_t>(classes)) {
    class_union_.resize(static_cast<size_t>(classes), 0);
    class_intersection_.resize(static_cast<size_t>(classes), 0);
  }
  const bool same_shape = actual.shape() == reference.shape();
  auto argmax = [&](const Tensor& t, int64_t b, int64_t p) {
    int64_t arg = 0;
    double top = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < classes; ++c) {
      const double v = t.GetAsDouble((b * classes + c) * pixels + p);
      if (v > top) {
        top = v;
        arg = c;
      }
    }
    return arg;
  };
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t p = 0; p < pixels; ++p) {
      const int64_t r = argmax(reference, b, p);
      const int64_t a = same_shape ? argmax(actual, b, p) : -1;
      positions_agree_ += a == r ? 1 : 0;
      class_intersection_[static_cast<size_t>(r)] += a == r ? 1 : 0;
      class_union_[static_cast<size_t>(r)] += 1;
      if (a >= 0 && a != r) class_union_[static_cast<size_t>(a)] += 1;
    }
  }
  positions_ += n * pixels;
  items_ += n;
}

void TaskAccumulator::AddEmbedding(const Tensor& actual, const Tensor& reference) {
  if (reference.rank() == 0) return;
  // Vectors along the last dim; a 4-D output (a vector per item stored 4-D, or a map under --task)
  // is one vector per item.
  const int64_t width = reference.rank() == 4 && reference.dim(0) > 0 ? reference.numel() / reference.dim(0)
                                                                      : reference.dim(reference.rank() - 1);
  const int64_t vectors = width > 0 ? reference.numel() / width : 0;
  const bool same_shape = actual.shape() == reference.shape();
  for (int64_t v = 0; v < vectors; ++v) {
    double dot = 0, aa = 0, rr = 0;
    for (int64_t i = 0; same_shape && i < width; ++i) {
      const double a = actual.GetAsDouble(v * width + i), r = reference.GetAsDouble(v * width + i);
      dot += a * r;
      aa += a * a;
      rr += r * r;
    }
    double cosine = 0;
    if (same_shape && aa == 0 && rr == 0) {
      cosine = 1;  // two zero vectors agree
    } else if (aa > 0 && rr > 0 && std::isfinite(dot) && std::isfinite(aa) && std::isfinite(rr)) {
      cosine = std::clamp(dot / std::sqrt(aa * rr), -1.0, 1.0);
    }
    cosine_sum_ += cosine;
  }
  items_ += vectors;
}

void TaskAccumulator::Add(const std::string& output, const Tensor& actual, const Tensor& reference,
                          const OutputValues& actual_outputs, const OutputValues& reference_outputs) {
  if (!choice_) choice_ = ChooseTask(output, reference, options_);
  const bool same_shape = actual.shape() == reference.shape();
  switch (choice_->task) {
    case TaskKind::kNone: return;
    case TaskKind::kClassify: {
      if (reference.rank() == 0) return;
      const int64_t classes = reference.dim(reference.rank() - 1);
      classes_ = std::max(classes_, classes);
      const std::vector<int64_t> r = ArgmaxRows(reference, classes);
      const std::vector<int64_t> a = same_shape ? ArgmaxRows(actual, classes) : std::vector<int64_t>();
      for (size_t i = 0; i < r.size(); ++i) {
        agree_ += i < a.size() && a[i] == r[i] ? 1 : 0;
        if (i >= a.size()) continue;
        // The reference's class is in the target's top 5: fewer than 5 target scores above its score.
        const auto row = static_cast<int64_t>(i) * classes;
        const double mine = actual.GetAsDouble(row + r[i]);
        int64_t above = 0;
        for (int64_t c = 0; c < classes && above < 5; ++c) above += actual.GetAsDouble(row + c) > mine ? 1 : 0;
        agree5_ += above < 5 ? 1 : 0;
      }
      items_ += static_cast<int64_t>(r.size());
      return;
    }
    case TaskKind::kLanguageModel: {
      if (reference.rank() == 0) return;
      const int64_t vocabulary = reference.dim(reference.rank() - 1);
      const std::vector<int64_t> r = ArgmaxRows(reference, vocabulary);
      const std::vector<int64_t> a = same_shape ? ArgmaxRows(actual, vocabulary) : std::vector<int64_t>();
      for (size_t i = 0; i < r.size(); ++i) agree_ += i < a.size() && a[i] == r[i] ? 1 : 0;
      items_ += static_cast<int64_t>(r.size());
      return;
    }
    case TaskKind::kSequence: {
      if (reference.rank() < 2) return;
      const int64_t classes = reference.dim(reference.rank() - 1);
      const int64_t steps = reference.dim(reference.rank() - 2);
      const std::vector<int64_t> r = ArgmaxRows(reference, classes);
      const std::vector<int64_t> a = same_shape ? ArgmaxRows(actual, classes) : std::vector<int64_t>();
      for (size_t i = 0; i < r.size(); ++i) positions_agree_ += i < a.size() && a[i] == r[i] ? 1 : 0;
      positions_ += static_cast<int64_t>(r.size());
      for (int64_t s = 0; steps > 0 && (s + 1) * steps <= static_cast<int64_t>(r.size()); ++s) {
        const auto first = static_cast<std::ptrdiff_t>(s * steps), last = static_cast<std::ptrdiff_t>((s + 1) * steps);
        const std::vector<int64_t> rs(r.begin() + first, r.begin() + last);
        const bool equal = !a.empty() && CtcCollapse(std::vector<int64_t>(a.begin() + first, a.begin() + last),
                                                     options_.ctc_blank) == CtcCollapse(rs, options_.ctc_blank);
        agree_ += equal ? 1 : 0;
        ++items_;
      }
      return;
    }
    case TaskKind::kMap: {
      const double t = options_.map_threshold;
      for (int64_t i = 0; i < reference.numel(); ++i) {
        const bool r = reference.GetAsDouble(i) >= t;
        const bool a = same_shape && actual.GetAsDouble(i) >= t;
        positions_agree_ += a == r ? 1 : 0;
        intersection_ += a && r ? 1 : 0;
        union_ += a || r ? 1 : 0;
        reference_on_ += r ? 1 : 0;
      }
      positions_ += reference.numel();
      items_ += reference.rank() > 0 ? reference.dim(0) : 1;
      return;
    }
    case TaskKind::kDetect: AddDetections(output, actual, reference, actual_outputs, reference_outputs); return;
    case TaskKind::kSegment: AddSegmentation(actual, reference); return;
    case TaskKind::kEmbedding: AddEmbedding(actual, reference); return;
  }
}

TaskAgreement TaskAccumulator::Result() const {
  TaskAgreement out;
  out.task = choice_ ? choice_->task : TaskKind::kNone;
  out.why = choice_ ? choice_->why : "";
  out.items = items_;
  auto share = [](int64_t part, int64_t whole) -> std::optional<double> {
    if (whole <= 0) return std::nullopt;
    return static_cast<double>(part) / static_cast<double>(whole);
  };
  char threshold[32];
  switch (out.task) {
    case TaskKind::kNone: break;
    case TaskKind::kClassify:
      out.metric = "top-1 agreement";
      out.agreement = share(agree_, items_);
      if (classes_ > 5) out.top5_agreement = share(agree5_, items_);
      break;
    case TaskKind::kLanguageModel:
      out.metric = "next-token agreement (top-1 per position)";
      out.agreement = share(agree_, items_);
      out.position_agreement = out.agreement;
      break;
    case TaskKind::kSequence:
      out.metric = "sequence agreement (CTC-collapsed, blank " + std::to_string(options_.ctc_blank) + ")";
      out.agreement = share(agree_, items_);
      out.position_agreement = share(positions_agree_, positions_);
      break;
    case TaskKind::kMap: {
      std::snprintf(threshold, sizeof threshold, "%g", options_.map_threshold);
      out.metric = std::string("map IoU at ") + threshold;
      out.pixel_agreement = share(positions_agree_, positions_);
      if (positions_ > 0 && reference_on_ == 0) {
        out.not_informative = std::string("the reference map has no pixel at or above ") + threshold +
                              ": IoU cannot tell whether the target finds what it should";
      } else if (positions_ > 0 && reference_on_ == positions_) {
        out.not_informative =
            std::string("every pixel of the reference map is at or above ") + threshold + ": IoU cannot tell";
      } else {
        out.agreement = share(intersection_, union_);
      }
      break;
    }
    case TaskKind::kDetect: {
      std::snprintf(threshold, sizeof threshold, "%g", options_.box_iou);
      out.metric = std::string("detection F1 (IoU ≥ ") + threshold +
                   (detect_labels_.empty() ? ", labels not compared: no labels output)" : ", equal labels)");
      out.items = reference_boxes_;
      out.precision = share(matched_boxes_, target_boxes_);
      out.recall = share(matched_boxes_, reference_boxes_);
      if (items_ > 0 && target_boxes_ + reference_boxes_ == 0) {
        out.not_informative = "no boxes on either side: nothing to match";
      } else {
        out.agreement = share(2 * matched_boxes_, target_boxes_ + reference_boxes_);
      }
      break;
    }
    case TaskKind::kSegment: {
      out.metric = "segmentation mIoU (argmax per pixel)";
      out.pixel_agreement = share(positions_agree_, positions_);
      double sum = 0;
      int present = 0;
      for (size_t c = 0; c < class_union_.size(); ++c) {
        if (class_union_[c] == 0) continue;
        sum += static_cast<double>(class_intersection_[c]) / static_cast<double>(class_union_[c]);
        ++present;
      }
      if (present > 0) out.agreement = sum / present;
      out.items = positions_;
      break;
    }
    case TaskKind::kEmbedding:
      out.metric = "mean cosine per vector";
      if (items_ > 0) out.agreement = std::max(0.0, cosine_sum_ / static_cast<double>(items_));
      break;
  }
  return out;
}

Result<std::optional<double>> OutputAgreement(CompiledModel& actual, CompiledModel& reference,
                                              const std::vector<std::map<std::string, Tensor>>& samples,
                                              const TaskOptions& options) {
  const std::vector<ValueDesc>& outputs = reference.outputs();
  std::vector<TaskAccumulator> tasks(outputs.size(), TaskAccumulator(options));
  for (const auto& sample : samples) {
    ASSIGN_OR_RETURN(auto a, actual.Run(sample));
    ASSIGN_OR_RETURN(auto b, reference.Run(sample));
    OutputValues by_name_a, by_name_b;
    for (size_t i = 0; i < outputs.size() && i < a.size() && i < b.size(); ++i) {
      by_name_a[outputs[i].name] = &a[i];
      by_name_b[outputs[i].name] = &b[i];
    }
    for (size_t i = 0; i < outputs.size() && i < a.size() && i < b.size(); ++i) {
      tasks[i].Add(outputs[i].name, a[i], b[i], by_name_a, by_name_b);
    }
  }
  std::optional<double> lowest;
  for (const TaskAccumulator& task : tasks) {
    const TaskAgreement result = task.Result();
    if (result.agreement) lowest = std::min(lowest.value_or(1.0), *result.agreement);
  }
  return lowest;
}

std::function<Result<std::optional<double>>(CompiledModel&, CompiledModel&,
                                            const std::vector<std::map<std::string, Tensor>>&)>
OutputAgreementFn(TaskOptions options) {
  return [options = std::move(options)](CompiledModel& actual, CompiledModel& reference,
                                        const std::vector<std::map<std::string, Tensor>>& samples) {
    return OutputAgreement(actual, reference, samples, options);
  };
}

}  // namespace chipfit
