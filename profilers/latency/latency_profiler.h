// The latency profiler: end-to-end statistics, per-kernel device times (p50/p90), instrumentation
// overhead, and each layer's row (the memory profiler adds its FLOPs and bytes).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <vector>

#include "profilers/profiler.h"

namespace chipfit {

class LatencyProfiler final : public Profiler {
 public:
  void Begin(const CompiledModel& model) override;
  void KernelBegin(size_t index, const KernelInfo& kernel) override;
  void KernelEnd(size_t index, const KernelInfo& kernel, double elapsed_ms) override;
  Status Collect(const std::vector<double>& e2e_ms, TargetResult& result) override;

  // Observed runs are numbered from 1 in the order they ran.
  int observed_runs() const { return observed_runs_; }
  // The wall time of observed run `run`, for the time attribution.
  void RecordObservedWall(int run, double ms) { observed_wall_ms_[run] = ms; }
  // Leaves observed runs first..last (a dropped slot's) out of the layer times; RestoreDropped puts
  // every dropped run back (a target with no clean slot at all shows its busy layer times, flagged).
  void DropObservedRuns(int first, int last);
  void RestoreDropped();
  // Per kept observed run: its wall time and the sum of its kernels' own times (runs without a wall
  // time are left out).
  void ObservedTotals(std::vector<double>& wall_ms, std::vector<double>& kernel_ms) const;

 private:
  // Kernel times per run with a control-flow kernel's bodies taken out of its own time.
  std::vector<std::map<int, double>> OwnTimes() const;

  const CompiledModel* model_ = nullptr;
  // Per kernel, its time in each observed run (summed over a Loop's or Scan's iterations) and how
  // many times it ran in all.
  std::vector<std::map<int, double>> kernel_ms_;
  std::vector<std::map<int, int>> calls_;  // per kernel and observed run, how often it ran (loop bodies)
  // The first observed run's timeline: each kernel's start after the first kernel's.
  std::vector<std::optional<double>> observed_start_ms_;
  int observed_runs_ = 0;
  int timeline_run_ = 0;  // the observed run whose kernel starts are recorded (0: none yet)
  std::chrono::steady_clock::time_point run_start_{};
  std::map<int, double> observed_wall_ms_;
  std::vector<std::map<int, double>> dropped_ms_;  // per kernel, the dropped runs' times
  std::vector<std::map<int, int>> dropped_calls_;
};

}  // namespace chipfit
