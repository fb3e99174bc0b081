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

 private:
  const CompiledModel* model_ = nullptr;
  // Per kernel, its time in each observed run (summed over a Loop's or Scan's iterations) and how
  // many times it ran in all.
  std::vector<std::map<int, double>> kernel_ms_;
  std::vector<int64_t> executions_;
  // The first observed run's timeline: each kernel's start after the first kernel's.
  std::vector<std::optional<double>> observed_start_ms_;
  int observed_runs_ = 0;
  std::chrono::steady_clock::time_point run_start_{};
};

}  // namespace chipfit
