// Accuracy drift (docs/measurement.md): a compiled target against a reference, per value and end to end.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/runtime/compiled_model.h"
#include "core/status.h"
#include "core/tensor/tensor.h"
#include "profilers/accuracy/task_metrics.h"
#include "profilers/run_result.h"

namespace chipfit {

// NMSE stands in for "no signal at all" (reference all zeros, actual not, or a non-finite value the
// other side does not match): 10^(kExactSqnrDb/10), so that SQNR = −10·log10(NMSE) = −kExactSqnrDb
// and nothing in a report is ever inf or NaN.
inline constexpr double kWorstNmse = 1e20;

// Cosine, NMSE = Σ(a−r)²/Σr², SQNR dB = 10·log10(Σr²/Σ(a−r)²) within ±kExactSqnrDb, and max |a−r|,
// accumulated in double over any numeric dtype. Identical tensors (both all-zero included) are
// exact: cosine 1, NMSE 0, kExactSqnrDb. Non-finite elements matched exactly (NaN with NaN, the
// same infinity) are left out, and so are values equal on both sides. A NaN/Inf on one side only, a
// floating value of `actual` at the largest finite magnitude of its dtype (saturated) where the
// reference differs, or different shapes give the worst values (cosine 0, kWorstNmse,
// −kExactSqnrDb, max-abs the largest double), never NaN, with DriftStats::invalid saying which.
DriftStats CompareTensors(const Tensor& actual, const Tensor& reference);

// CompareTensors, and whether the invalid figures come from non-finite or saturated values the
// target made (not from the reference, nor from shapes).
struct Comparison {
  DriftStats stats;
  bool target_non_finite = false;
};
Comparison CompareValues(const Tensor& actual, const Tensor& reference);

// SQNR in dB for a normalised noise power, within ±kExactSqnrDb (NMSE 0 → kExactSqnrDb).
double SqnrFromNmse(double nmse);

struct DriftOptions {
  // A layer whose mean SQNR falls below this is where the drift report says the error starts.
  double threshold_db = 30;
  // The output holding class scores for top-1 agreement; "" picks every rank-2 output with a last
  // dimension above 1.
  std::string classifier_output{};
  // Each output's task metric: chosen from the graph's origins of the outputs (WithGraph) or their
  // shape, unless overridden; CTC blank, map threshold.
  TaskOptions task{};
  // Recorded in the summary only: whether `samples` were seeded random inputs, not the user's data.
  bool random_inputs = true;
  std::stop_token stop{};
};

// End-to-end drift of one graph output.
struct OutputDrift {
  std::string name;
  DriftStats stats;
  std::optional<double> top1_agreement{};  // class-score outputs only
  TaskAgreement task{};                    // its task metric (task kNone: SQNR only)
};

struct DriftReport {
  // Indexed like target.kernels(): the mean over samples of the kernel's outputs against the
  // reference's values of the same name (the worst output for multi-output kernels); nullopt for
  // kernels none of whose outputs the reference produces (copies, the inner values of fusions).
  std::vector<std::optional<DriftStats>> kernels;
  std::vector<OutputDrift> outputs;                      // in the target's graph output order
  std::optional<size_t> first_kernel_below_threshold{};  // index into kernels
  // The first kernel (execution order) whose output the target made NaN/Inf or saturated where the
  // reference's is finite; summary.first_non_finite_layer names it.
  std::optional<size_t> first_non_finite_kernel{};
  AccuracySummary summary;
};

// Runs `target` and `reference` on every sample and compares every value both produce, as the
// target executes it (fused kernels are compared at their outputs). Per value: mean cosine, mean
// NMSE, SQNR of the mean NMSE, largest max-abs. Errors name the model (target or reference) that
// failed; an empty sample list is an error.
Result<DriftReport> MeasureDrift(CompiledModel& target, CompiledModel& reference,
                                 const std::vector<std::map<std::string, Tensor>>& samples,
                                 const DriftOptions& options = {});

}  // namespace chipfit
