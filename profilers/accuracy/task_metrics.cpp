// Task metrics of task_metrics.h: the output's task from its shape, and agreement counted per row,
// sequence, position or pixel.
#include "profilers/accuracy/task_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace chipfit {

std::string_view TaskName(TaskKind task) {
  switch (task) {
    case TaskKind::kClassify: return "classify";
    case TaskKind::kSequence: return "sequence";
    case TaskKind::kMap: return "map";
    case TaskKind::kNone: break;
  }
  return "none";
}

Result<TaskKind> ParseTask(const std::string& text) {
  for (TaskKind t : {TaskKind::kClassify, TaskKind::kSequence, TaskKind::kMap, TaskKind::kNone}) {
    if (text == TaskName(t)) return t;
  }
  return InvalidArgument("task '" + text + "': expected classify, sequence, map or none");
}

Status ParseTaskOverride(const std::string& text, TaskOptions& options) {
  const auto eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0) {
    return InvalidArgument("--task '" + text + "': expected OUTPUT=classify|sequence|map|none");
  }
  auto task = ParseTask(text.substr(eq + 1));
  if (!task.ok()) return InvalidArgument("--task '" + text + "': " + task.status().message());
  options.overrides[text.substr(0, eq)] = *task;
  return Status::Ok();
}

namespace {

bool AllProbabilities(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.GetAsDouble(i);
    if (!(v >= 0.0 && v <= 1.0)) return false;
  }
  return true;
}

}  // namespace

TaskKind ChooseTask(const std::string& output, const Tensor& reference, const TaskOptions& options) {
  if (const auto it = options.overrides.find(output); it != options.overrides.end()) return it->second;
  if (!IsFloatingDType(reference.dtype())) return TaskKind::kNone;
  if (reference.rank() == 2 && reference.dim(1) > 1) return TaskKind::kClassify;
  if (reference.rank() == 3 && reference.dim(1) > 1 && reference.dim(2) > 1) return TaskKind::kSequence;
  if (reference.rank() == 4 && reference.dim(1) == 1 && reference.numel() > 1 && AllProbabilities(reference)) {
    return TaskKind::kMap;
  }
  return TaskKind::kNone;
}

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

void TaskAccumulator::Add(const std::string& output, const Tensor& actual, const Tensor& reference) {
  if (!task_) task_ = ChooseTask(output, reference, options_);
  const bool same_shape = actual.shape() == reference.shape();
  switch (*task_) {
    case TaskKind::kNone: return;
    case TaskKind::kClassify: {
      if (reference.rank() == 0) return;
      const int64_t classes = reference.dim(reference.rank() - 1);
      const std::vector<int64_t> r = ArgmaxRows(reference, classes);
      const std::vector<int64_t> a = same_shape ? ArgmaxRows(actual, classes) : std::vector<int64_t>();
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
      }
      positions_ += reference.numel();
      items_ += reference.rank() > 0 ? reference.dim(0) : 1;
      return;
    }
  }
}

TaskAgreement TaskAccumulator::Result() const {
  TaskAgreement out;
  out.task = task_.value_or(TaskKind::kNone);
  out.items = items_;
  auto share = [](int64_t part, int64_t whole) -> std::optional<double> {
    if (whole <= 0) return std::nullopt;
    return static_cast<double>(part) / static_cast<double>(whole);
  };
  switch (out.task) {
    case TaskKind::kNone: break;
    case TaskKind::kClassify:
      out.metric = "top-1 agreement";
      out.agreement = share(agree_, items_);
      break;
    case TaskKind::kSequence:
      out.metric = "sequence agreement (CTC-collapsed, blank " + std::to_string(options_.ctc_blank) + ")";
      out.agreement = share(agree_, items_);
      out.position_agreement = share(positions_agree_, positions_);
      break;
    case TaskKind::kMap: {
      char threshold[32];
      std::snprintf(threshold, sizeof threshold, "%g", options_.map_threshold);
      out.metric = std::string("map IoU at ") + threshold;
      // Both maps empty everywhere: nothing to detect, and both agree on that.
      out.agreement = union_ > 0 ? share(intersection_, union_) : (positions_ > 0 ? std::optional(1.0) : std::nullopt);
      out.pixel_agreement = share(positions_agree_, positions_);
      break;
    }
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
    for (size_t i = 0; i < outputs.size() && i < a.size() && i < b.size(); ++i) {
      tasks[i].Add(outputs[i].name, a[i], b[i]);
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
