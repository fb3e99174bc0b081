// Task-aware agreement of a target's outputs with the reference's: top-1 for class scores, CTC-collapsed
// sequence agreement for per-position class scores, IoU of thresholded probability maps. SQNR says how far
// the numbers moved; these say whether the answer a user reads off the output changed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/runtime/compiled_model.h"
#include "core/status.h"
#include "core/tensor/tensor.h"

namespace chipfit {

enum class TaskKind {
  kNone,      // no task metric: SQNR only
  kClassify,  // [N, C] class scores: top-1 agreement
  kSequence,  // [N, T, C] per-position class scores (a CTC recogniser): positions and whole sequences
  kMap,       // [N, 1, H, W] probabilities in [0, 1] (a detector's map): IoU and pixel agreement
};

std::string_view TaskName(TaskKind task);
// "classify", "sequence", "map", "none"; errors name the text and the choices.
Result<TaskKind> ParseTask(const std::string& text);

struct TaskOptions {
  // Output name → task, overriding the choice from the shape (--task OUTPUT=KIND).
  std::map<std::string, TaskKind> overrides{};
  int64_t ctc_blank = 0;       // the class a CTC decoder drops (--ctc-blank)
  double map_threshold = 0.3;  // a map pixel is "on" at or above this (--map-threshold)
};

// Parses "OUTPUT=KIND" (the --task flag); errors name the text.
Status ParseTaskOverride(const std::string& text, TaskOptions& options);

// The task of an output from its reference value: an override by name, else [N, C>1] classify,
// [N, T>1, C>1] sequence, [N, 1, H, W] with every value in [0, 1] map, else none.
TaskKind ChooseTask(const std::string& output, const Tensor& reference, const TaskOptions& options);

// One output's task agreement over every sample compared.
struct TaskAgreement {
  TaskKind task = TaskKind::kNone;
  // The headline figure, 0..1, that limits and the accuracy guard read: top-1 agreement (classify),
  // the share of whole sequences equal after CTC collapse (sequence), the IoU of the maps (map).
  std::optional<double> agreement{};
  std::string metric;  // what `agreement` is, for the user: "top-1 agreement", "sequence agreement (CTC)", …
  std::optional<double> position_agreement{};  // sequence: share of positions whose argmax agrees
  std::optional<double> pixel_agreement{};     // map: share of pixels on the same side of the threshold
  int64_t items = 0;                           // rows, sequences or maps compared
};

// Accumulates one output's agreement sample by sample; the task is fixed by the first sample.
class TaskAccumulator {
 public:
  explicit TaskAccumulator(TaskOptions options) : options_(std::move(options)) {}
  // Compares `actual` with `reference` for the task chosen for `output` (by the first call). Values of
  // other shapes than the reference's are counted as disagreeing everywhere.
  void Add(const std::string& output, const Tensor& actual, const Tensor& reference);
  TaskAgreement Result() const;

 private:
  TaskOptions options_;
  std::optional<TaskKind> task_;
  int64_t items_ = 0, agree_ = 0;                // classify rows / sequences
  int64_t positions_ = 0, positions_agree_ = 0;  // sequence positions, map pixels
  int64_t intersection_ = 0, union_ = 0;         // map pixels on in both / in either
};

// The lowest task agreement over the outputs that have a task, `actual` against `reference`, both run
// on every sample: what the int8 accuracy search (--auto-fp32-agreement) aims at. nullopt when no
// output has a task (SQNR is then the only measure).
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

}  // namespace chipfit
