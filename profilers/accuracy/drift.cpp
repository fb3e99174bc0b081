// Accuracy drift: tensor metrics in double, capture of the reference's values, per-kernel means.
#include "profilers/accuracy/drift.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

namespace chipfit {
namespace {

DriftStats Worst(std::string invalid) {
  return {.cosine = 0,
          .nmse = kWorstNmse,
          .sqnr_db = -kExactSqnrDb,
          .max_abs = std::numeric_limits<double>::max(),
          .invalid = std::move(invalid)};
}

// Sums over samples of one value's metrics; SQNR is derived from the mean NMSE, not averaged in dB,
// so one exact sample (200 dB) cannot hide a noisy one. One invalid sample makes the mean invalid.
struct Accumulator {
  double cosine = 0, nmse = 0, max_abs = 0;
  int count = 0;
  std::string invalid;  // the first invalid sample's reason
  bool target_non_finite = false;

  void Add(const Comparison& c) {
    const DriftStats& s = c.stats;
    if (!s.invalid.empty() && invalid.empty()) invalid = s.invalid;
    target_non_finite = target_non_finite || c.target_non_finite;
    cosine += s.cosine;
    nmse += s.nmse;
    max_abs = std::max(max_abs, s.max_abs);
    ++count;
  }
  DriftStats Mean() const {
    if (count == 0) return {};
    if (!invalid.empty()) return Worst(invalid);
    const double n = static_cast<double>(count);
    const double mean_nmse = std::min(nmse / n, kWorstNmse);
    return {.cosine = cosine / n, .nmse = mean_nmse, .sqnr_db = SqnrFromNmse(mean_nmse), .max_abs = max_abs};
  }
};

// Keeps a copy of every named value the reference computes, for the target's run to compare with.
class CaptureObserver final : public RunObserver {
 public:
  bool WantsOutputs(size_t /*index*/) override { return true; }
  void KernelOutputs(size_t /*index*/, const KernelInfo& kernel, const std::vector<const Tensor*>& outputs) override {
    for (size_t k = 0; k < outputs.size() && k < kernel.outputs.size(); ++k) {
      if (outputs[k] != nullptr && !kernel.outputs[k].empty()) values[kernel.outputs[k]] = outputs[k]->Clone();
    }
  }
  std::map<std::string, Tensor> values;
};

// Compares the target's kernel outputs as they are produced, so no copy of the target's values is
// kept; values the reference does not have (copies between devices, values inside a fusion that
// the reference computes under another name) are skipped.
class CompareObserver final : public RunObserver {
 public:
  CompareObserver(const std::map<std::string, Tensor>& reference, std::vector<std::map<std::string, Accumulator>>& acc)
      : reference_(reference), acc_(acc) {}
  bool WantsOutputs(size_t index) override { return index < acc_.size(); }
  void KernelOutputs(size_t index, const KernelInfo& kernel, const std::vector<const Tensor*>& outputs) override {
    for (size_t k = 0; k < outputs.size() && k < kernel.outputs.size(); ++k) {
      if (outputs[k] == nullptr || kernel.outputs[k].empty()) continue;
      auto it = reference_.find(kernel.outputs[k]);
      if (it == reference_.end()) continue;
      acc_[index][kernel.outputs[k]].Add(CompareValues(*outputs[k], it->second));
    }
  }

 private:
  const std::map<std::string, Tensor>& reference_;
  std::vector<std::map<std::string, Accumulator>>& acc_;
};

Status Named(const Status& status, const std::string& what) { return {status.code(), what + ": " + status.message()}; }

}  // namespace

double SqnrFromNmse(double nmse) {
  if (!(nmse > 0)) return kExactSqnrDb;  // 0 (exact); NaN cannot come from CompareTensors
  return std::clamp(-10.0 * std::log10(nmse), -kExactSqnrDb, kExactSqnrDb);
}

namespace {

// The largest finite magnitude of a floating dtype; 0 for other dtypes (no saturation check: an int8
// value at 127 is quantisation's clipping, part of the drift, not an overflow).
double LargestFinite(DType dtype) {
  switch (dtype) {
    case DType::kF32: return std::numeric_limits<float>::max();
    case DType::kF64: return std::numeric_limits<double>::max();
    case DType::kF16: return 65504.0;
    case DType::kBF16: return 3.3895313892515355e38;
    default: return 0;
  }
}

// Counts of values one side has and the other does not, for the reason text.
struct Oddities {
  int64_t target_nan = 0, target_inf = 0, target_saturated = 0, reference_non_finite = 0;
  int64_t values = 0;

  bool TargetMade() const { return target_nan + target_inf + target_saturated > 0; }
  std::string Reason(DType actual) const {
    std::string what;
    auto add = [&](int64_t n, const std::string& text) {
      if (n > 0) what += (what.empty() ? "" : ", ") + fmt::format("{} {}", n, text);
    };
    add(target_nan, "NaN");
    add(target_inf, "±Inf");
    add(target_saturated,
        fmt::format("saturated at ±{:g} (the largest {})", LargestFinite(actual), std::string(DTypeName(actual))));
    if (!what.empty()) return fmt::format("target made {} of {} values where the reference is finite", what, values);
    return fmt::format("the reference has {} NaN/Inf of {} values where the target is finite", reference_non_finite,
                       values);
  }
};

}  // namespace

Comparison CompareValues(const Tensor& actual, const Tensor& reference) {
  if (actual.shape() != reference.shape()) {
    return {.stats = Worst("shapes differ: target [" + ShapeToString(actual.shape()) + "], reference [" +
                           ShapeToString(reference.shape()) + "]")};
  }
  const double largest = LargestFinite(actual.dtype());
  double signal = 0, noise = 0, dot = 0, actual_power = 0, max_abs = 0;
  Oddities odd{.values = reference.numel()};
  for (int64_t i = 0; i < reference.numel(); ++i) {
    const double a = actual.GetAsDouble(i), r = reference.GetAsDouble(i);
    if (a == r || (std::isnan(a) && std::isnan(r))) {
      signal += std::isfinite(r) ? r * r : 0;
      dot += std::isfinite(r) ? a * r : 0;
      actual_power += std::isfinite(a) ? a * a : 0;
      continue;  // equal, or the same non-finite value on both sides
    }
    if (!std::isfinite(a) || !std::isfinite(r)) {
      if (std::isfinite(r)) {
        (std::isnan(a) ? odd.target_nan : odd.target_inf) += 1;
      } else {
        odd.reference_non_finite += 1;
      }
      continue;
    }
    if (largest > 0 && std::abs(a) >= largest) odd.target_saturated += 1;
    const double e = a - r;
    signal += r * r;
    noise += e * e;
    dot += a * r;
    actual_power += a * a;
    max_abs = std::max(max_abs, std::abs(e));
  }
  if (odd.TargetMade() || odd.reference_non_finite > 0) {
    return {.stats = Worst(odd.Reason(actual.dtype())), .target_non_finite = odd.TargetMade()};
  }
  DriftStats s{.max_abs = max_abs};
  if (noise == 0) return {.stats = s};  // exact, all-zero pairs included
  s.nmse = signal > 0 ? std::min(noise / signal, kWorstNmse) : kWorstNmse;
  s.sqnr_db = SqnrFromNmse(s.nmse);
  // A zero vector has no direction: it agrees with nothing but another zero vector (handled above).
  s.cosine = signal > 0 && actual_power > 0 ? std::clamp(dot / std::sqrt(signal * actual_power), -1.0, 1.0) : 0.0;
  return {.stats = s};
}

DriftStats CompareTensors(const Tensor& actual, const Tensor& reference) {
  return CompareValues(actual, reference).stats;
}

Result<DriftReport> MeasureDrift(CompiledModel& target, CompiledModel& reference,
                                 const std::vector<std::map<std::string, Tensor>>& samples,
                                 const DriftOptions& options) {
  const std::string target_name = "target " + target.target().ToString();
  const std::string reference_name = "reference " + reference.target().ToString();
  if (samples.empty()) return InvalidArgument("accuracy drift needs at least one input sample");

  // Graph outputs matched by name; which of them hold class scores.
  std::map<std::string, size_t> reference_outputs;
  for (size_t i = 0; i < reference.outputs().size(); ++i) reference_outputs[reference.outputs()[i].name] = i;
  const std::vector<ValueDesc>& outputs = target.outputs();
  if (!options.classifier_output.empty() && std::none_of(outputs.begin(), outputs.end(), [&](const ValueDesc& v) {
        return v.name == options.classifier_output;
      })) {
    return InvalidArgument("classifier output '" + options.classifier_output + "' is not an output of the model");
  }

  std::vector<std::map<std::string, Accumulator>> per_kernel(target.kernels().size());
  std::vector<Accumulator> per_output(outputs.size());
  // The named classifier output is a classify task whatever its shape; other outputs by their shape.
  TaskOptions task_options = options.task;
  if (!options.classifier_output.empty())
    task_options.overrides.emplace(options.classifier_output, TaskKind::kClassify);
  std::vector<TaskAccumulator> tasks(outputs.size(), TaskAccumulator(task_options));
  std::vector<bool> compared_output(outputs.size(), false);

  for (const auto& sample : samples) {
    if (options.stop.stop_requested()) return Cancelled("accuracy drift stopped");
    CaptureObserver capture;
    auto want = reference.Run(sample, &capture, options.stop);
    if (!want.ok()) return Named(want.status(), reference_name);
    CompareObserver compare(capture.values, per_kernel);
    auto got = target.Run(sample, &compare, options.stop);
    if (!got.ok()) return Named(got.status(), target_name);

    // Every output by name, for tasks that read several (a detector's boxes, labels and scores).
    OutputValues got_by_name, want_by_name;
    for (size_t i = 0; i < outputs.size() && i < got->size(); ++i) got_by_name[outputs[i].name] = &(*got)[i];
    for (const auto& [name, index] : reference_outputs) {
      if (index < want->size()) want_by_name[name] = &(*want)[index];
    }
    for (size_t i = 0; i < outputs.size() && i < got->size(); ++i) {
      auto it = reference_outputs.find(outputs[i].name);
      if (it == reference_outputs.end() || it->second >= want->size()) continue;
      const Tensor& a = (*got)[i];
      const Tensor& r = (*want)[it->second];
      compared_output[i] = true;
      per_output[i].Add(CompareValues(a, r));
      tasks[i].Add(outputs[i].name, a, r, got_by_name, want_by_name);
    }
  }

  DriftReport report;
  report.kernels.resize(per_kernel.size());
  for (size_t k = 0; k < per_kernel.size(); ++k) {
    // A kernel with several outputs is as good as its worst one.
    for (const auto& [name, acc] : per_kernel[k]) {
      const DriftStats s = acc.Mean();
      if (!report.kernels[k] || s.sqnr_db < report.kernels[k]->sqnr_db ||
          (report.kernels[k]->invalid.empty() && !s.invalid.empty())) {
        report.kernels[k] = s;
      }
      if (acc.target_non_finite && !report.first_non_finite_kernel) {
        report.first_non_finite_kernel = k;
        report.summary.non_finite = name + ": " + acc.invalid;
      }
    }
    if (!report.first_kernel_below_threshold && report.kernels[k] &&
        report.kernels[k]->sqnr_db < options.threshold_db) {
      report.first_kernel_below_threshold = k;
    }
  }

  AccuracySummary& summary = report.summary;
  summary.reference = reference.target().ToString();
  summary.random_inputs = options.random_inputs;
  summary.samples = static_cast<int>(samples.size());
  if (report.first_kernel_below_threshold) {
    summary.first_layer_below_threshold = target.kernels()[*report.first_kernel_below_threshold].name;
  }
  if (report.first_non_finite_kernel) {
    summary.first_non_finite_layer = target.kernels()[*report.first_non_finite_kernel].name;
  } else {
    summary.non_finite.clear();
  }
  int64_t rows = 0, agree = 0;
  bool any_valid = false;
  std::string invalid_outputs;  // outputs left out of the output SQNR, with why
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!compared_output[i]) continue;
    OutputDrift out{.name = outputs[i].name, .stats = per_output[i].Mean(), .task = tasks[i].Result()};
    if (out.task.task == TaskKind::kClassify && out.task.agreement) {
      out.top1_agreement = out.task.agreement;
      rows += out.task.items;
      agree += std::llround(*out.task.agreement * static_cast<double>(out.task.items));
    }
    if (out.task.task != TaskKind::kNone) {
      summary.tasks.push_back({.output = out.name,
                               .task = std::string(TaskName(out.task.task)),
                               .metric = out.task.metric,
                               .agreement = out.task.agreement,
                               .position_agreement = out.task.position_agreement,
                               .pixel_agreement = out.task.pixel_agreement,
                               .items = out.task.items,
                               .why = out.task.why,
                               .not_informative = out.task.not_informative,
                               .top5_agreement = out.task.top5_agreement,
                               .precision = out.task.precision,
                               .recall = out.task.recall});
    }
    if (out.task.agreement) {
      // The worst output's agreement: a limit on it holds for every output.
      if (!summary.task_agreement || *out.task.agreement < *summary.task_agreement) {
        summary.task_agreement = out.task.agreement;
        summary.task_metric = out.task.metric;
      }
    }
    // The summary reports the worst output: a limit on it holds for every output. An output whose
    // figures are not measurements counts as the worst when the target made it non-finite; one whose
    // shape differs (a detector's box count) is left out while other outputs can be compared.
    if (out.stats.invalid.empty()) {
      any_valid = true;
      summary.output_sqnr_db = std::min(summary.output_sqnr_db, out.stats.sqnr_db);
      summary.output_cosine = std::min(summary.output_cosine, out.stats.cosine);
    } else {
      const bool made = per_output[i].target_non_finite;
      if (made && summary.output_invalid.empty()) summary.output_invalid = out.name + ": " + out.stats.invalid;
      invalid_outputs += (invalid_outputs.empty() ? "" : "; ") + out.name + ": " + out.stats.invalid;
    }
    report.outputs.push_back(std::move(out));
  }
  if (!any_valid && !invalid_outputs.empty() && summary.output_invalid.empty())
    summary.output_invalid = invalid_outputs;
  if (!summary.output_invalid.empty()) {
    summary.output_sqnr_db = -kExactSqnrDb;
    summary.output_cosine = 0;
  }
  if (rows > 0) summary.top1_agreement = static_cast<double>(agree) / static_cast<double>(rows);
  return report;
}

}  // namespace chipfit
