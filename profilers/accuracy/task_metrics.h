// Task-aware agreement of a target's outputs with the reference's. SQNR says how far the numbers
// moved; these say whether the answer a user reads off the output changed: the class (top-1/top-5),
// the detected boxes, the segmentation classes, the next token, the embedding's direction, the decoded
// CTC text, the thresholded map. The task of each output is chosen from the graph that computes it
// (docs/measurement.md, "Task metrics"), and the choice says why.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/graph/graph.h"
#include "core/runtime/compiled_model.h"
#include "core/status.h"
#include "core/tensor/tensor.h"

namespace chipfit {

enum class TaskKind {
  kNone,           // no task metric: SQNR only
  kClassify,       // [N, C] class scores: top-1 (and top-5) agreement
  kDetect,         // [N, 4] or [B, N, 4] boxes (with scores and labels beside them): matched detections
  kSegment,        // [N, C>1, H, W] class scores per pixel: argmax mIoU and pixel agreement
  kLanguageModel,  // [N, T, V] next-token logits: top-1 agreement per position
  kEmbedding,      // [N, C] or [N, T, C] features or hidden states: mean cosine per vector
  kSequence,       // [N, T, C] per-position class scores of a CTC recogniser: whole decoded sequences
  kMap,            // [N, 1, H, W] probabilities in [0, 1]: IoU at a threshold, pixel agreement
};

// "classify", "detect", "segment", "lm", "embedding", "sequence", "map", "none".
std::string_view TaskName(TaskKind task);
// The names of TaskName (and "ctc" for sequence); errors name the text and the choices.
Result<TaskKind> ParseTask(const std::string& text);

// What the graph says about one of its outputs, for the task chooser: the op that computes its
// values past layout ops (Reshape, Transpose, Squeeze, Flatten, Cast …), a constant bias or scale,
// Resize, and a final Softmax/LogSoftmax/Sigmoid, and what lies upstream.
struct OutputOrigin {
  DType dtype = DType::kUndefined;  // as the graph declares the output
  int rank = -1;                    // -1: not declared
  Shape shape{};                    // declared dims, -1 where unknown
  std::string head_op{};            // "MatMul", "Gemm", "Conv", "LayerNormalization", "Add" …; "" for none
  std::string head_node{};
  int64_t features = 0;           // MatMul/Gemm: the reduced (hidden) size; Conv: input channels; 0 unknown
  std::vector<int64_t> kernel{};  // Conv head: its kernel's spatial size
  std::string activation{};       // "Softmax", "LogSoftmax", "Sigmoid" between head and output, or ""
  int64_t activation_axis = -1;   // Softmax/LogSoftmax: the axis, made non-negative by the output rank
  bool resized = false;           // a Resize/Upsample between head and output
  bool token_input = false;       // upstream: an integer graph input indexes an embedding table (Gather)
  std::string nms_node{};         // upstream: a NonMaxSuppression (its node name), or ""
  bool center_point_box = false;  // that NonMaxSuppression takes [cx, cy, w, h] boxes
  std::string topk_node{};        // upstream: a TopK, or ""
  bool input_resolution = false;  // rank 4 with the H, W of a rank-4 graph input
};

// The origin of every graph output, by output name.
std::map<std::string, OutputOrigin> DescribeOutputs(const Graph& graph);

struct TaskOptions {
  // Output name → task, overriding the choice (--task OUTPUT=KIND).
  std::map<std::string, TaskKind> overrides{};
  int64_t ctc_blank = 0;       // the class a CTC decoder drops (--ctc-blank)
  double map_threshold = 0.3;  // a map pixel is "on" at or above this (--map-threshold)
  double box_iou = 0.5;        // detections match at or above this IoU
  // Graph outputs' origins (DescribeOutputs); empty: the task is chosen from the shape and values alone.
  std::map<std::string, OutputOrigin> origins{};
};

// `options` with the origins of `graph`'s outputs: what the profiling session hands to the chooser.
TaskOptions WithGraph(TaskOptions options, const Graph& graph);

// Parses "OUTPUT=KIND" (the --task flag); errors name the text.
Status ParseTaskOverride(const std::string& text, TaskOptions& options);

// The task of an output and why, in one line for the user ("language-model logits: [1, 64, 50257]
// from MatMul over 768 features, token-id input, last dim > 1000").
struct TaskChoice {
  TaskKind task = TaskKind::kNone;
  std::string why;
};

// The task of an output from its origin (when options.origins has it), its reference value's shape,
// dtype and values, or an override by name.
TaskChoice ChooseTask(const std::string& output, const Tensor& reference, const TaskOptions& options);

// One output's task agreement over every sample compared.
struct TaskAgreement {
  TaskKind task = TaskKind::kNone;
  std::string why;  // TaskChoice::why
  // The headline figure, 0..1, that limits and the accuracy guard read: top-1 agreement (classify),
  // F1 of matched boxes (detect), mIoU (segment), next-token agreement (lm), mean cosine clamped at
  // 0 (embedding), whole sequences equal after CTC collapse (sequence), IoU (map). nullopt with
  // `not_informative` when the comparison cannot tell (no boxes on either side, a map empty or full).
  std::optional<double> agreement{};
  std::string metric;           // what `agreement` is, for the user: "top-1 agreement", "segmentation mIoU", …
  std::string not_informative;  // why there is no agreement although the output has a task
  std::optional<double> top5_agreement{};       // classify, more than 5 classes: reference top-1 in the target's top 5
  std::optional<double> position_agreement{};   // sequence: share of positions whose argmax agrees
  std::optional<double> pixel_agreement{};      // map, segment: share of pixels in the same class
  std::optional<double> precision{}, recall{};  // detect: matched share of the target's / reference's boxes
  int64_t items = 0;  // rows, boxes (reference), positions, vectors, sequences or maps compared
};

// One run's graph outputs by name, for tasks that read several outputs (a detector's boxes with their
// labels and scores).
using OutputValues = std::map<std::string, const Tensor*>;

// Accumulates one output's agreement sample by sample; the task is fixed by the first sample.
class TaskAccumulator {
 public:
  explicit TaskAccumulator(TaskOptions options) : options_(std::move(options)) {}
  // Compares `actual` with `reference` for the task chosen for `output` (by the first call). Values of
  // other shapes than the reference's are counted as disagreeing everywhere (detections excepted: the
  // number of boxes may differ). `actual_outputs` / `reference_outputs`: every output of the same
  // runs, where a detector's labels and scores are found.
  void Add(const std::string& output, const Tensor& actual, const Tensor& reference,
           const OutputValues& actual_outputs = {}, const OutputValues& reference_outputs = {});
  TaskAgreement Result() const;

 private:
  void AddDetections(const std::string& output, const Tensor& actual, const Tensor& reference,
                     const OutputValues& actual_outputs, const OutputValues& reference_outputs);
  void AddSegmentation(const Tensor& actual, const Tensor& reference);
  void AddEmbedding(const Tensor& actual, const Tensor& reference);

  TaskOptions options_;
  std::optional<TaskChoice> choice_;
  int64_t items_ = 0, agree_ = 0, agree5_ = 0;   // rows, sequences, positions, vectors
  int64_t classes_ = 0;                          // classify: the class count
  int64_t positions_ = 0, positions_agree_ = 0;  // sequence positions, map and segmentation pixels
  int64_t intersection_ = 0, union_ = 0;         // map pixels on in both / in either
  int64_t reference_on_ = 0;                     // map pixels on in the reference
  double cosine_sum_ = 0;                        // embedding
  // detect: boxes of each side, matched pairs; how labels were matched ("" before the first sample)
  int64_t target_boxes_ = 0, reference_boxes_ = 0, matched_boxes_ = 0;
  std::string detect_labels_, detect_scores_;
  bool detect_peers_found_ = false;
  std::vector<int64_t> class_intersection_, class_union_;  // segment: per class
};

// The lowest task agreement over the outputs that have an informative one, `actual` against
// `reference`, both run on every sample: what the int8 accuracy search (--auto-fp32-agreement) aims
// at. nullopt when no output has one (SQNR is then the only measure).
Result<std::optional<double>> OutputAgreement(CompiledModel& actual, CompiledModel& reference,
                                              const std::vector<std::map<std::string, Tensor>>& samples,
                                              const TaskOptions& options);

// OutputAgreement with `options` as Int8Options::agreement takes it: the one function the CLI, the
// profiling session and the benchmark hand to the accuracy search.
std::function<Result<std::optional<double>>(CompiledModel&, CompiledModel&,
                                            const std::vector<std::map<std::string, Tensor>>&)>
OutputAgreementFn(TaskOptions options);

// Argmax over the last dimension of each row: `classes` = that dimension's size.
std::vector<int64_t> ArgmaxRows(const Tensor& t, int64_t classes);

// CTC's greedy decoding of one sequence of argmaxes: merge repeats, then drop `blank`.
std::vector<int64_t> CtcCollapse(const std::vector<int64_t>& argmax, int64_t blank);

// A box as [x1, y1, x2, y2] (or [y1, x1, y2, x2]: IoU is the same) and the IoU of two; boxes with
// no area have IoU 0 with everything.
double BoxIou(const double a[4], const double b[4]);

}  // namespace chipfit
