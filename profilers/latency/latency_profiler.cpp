// Latency profiler and the per-target profile pipeline.
#include "profilers/latency/latency_profiler.h"

#include <chrono>

#include <fmt/format.h>

#include "profilers/latency/latency_stats.h"
#include "profilers/memory/memory_profiler.h"

namespace chipfit {

void LatencyProfiler::Begin(const CompiledModel& model) {
  model_ = &model;
  kernel_ms_.assign(model.kernels().size(), {});
  executions_.assign(model.kernels().size(), 0);
  observed_start_ms_.assign(model.kernels().size(), std::nullopt);
  observed_runs_ = 0;
}

void LatencyProfiler::KernelBegin(size_t index, const KernelInfo&) {
  const auto now = std::chrono::steady_clock::now();
  if (index == 0) {
    ++observed_runs_;
    run_start_ = now;
  }
  if (observed_runs_ == 1 && index < observed_start_ms_.size() && !observed_start_ms_[index]) {
    observed_start_ms_[index] = std::chrono::duration<double, std::milli>(now - run_start_).count();
  }
}

void LatencyProfiler::KernelEnd(size_t index, const KernelInfo&, double elapsed_ms) {
  if (index >= kernel_ms_.size()) return;
  kernel_ms_[index][observed_runs_] += elapsed_ms;
  ++executions_[index];
}

Status LatencyProfiler::Collect(const std::vector<double>& e2e_ms, TargetResult& result) {
  if (model_ == nullptr) return Internal("latency profiler: Collect before Begin");
  result.latency = ComputeLatencyStats(e2e_ms);
  if (const LatencyStats& l = result.latency; l.noisy && l.p50 > 0) {
    result.notes.push_back(
        fmt::format("noisy: (p90 − p50)/p50 {:.1f} %, MAD/p50 {:.1f} % (limits 5 % and 3 %){}",
                    (l.p90 - l.p50) / l.p50 * 100, l.mad / l.p50 * 100,
                    l.outliers ? fmt::format("; {} outlier run(s) above p50 + 10·MAD", l.outliers) : std::string()));
  }
  const auto& kernels = model_->kernels();
  // A control-flow kernel's time includes its bodies' kernels, which are rows of their own: its row
  // keeps only its own part, so the rows still add up to the run.
  std::vector<std::map<int, double>> own_ms = kernel_ms_;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const int parent = kernels[i].parent;
    if (parent < 0 || static_cast<size_t>(parent) >= own_ms.size()) continue;
    for (const auto& [run, ms] : kernel_ms_[i]) {
      if (auto it = own_ms[static_cast<size_t>(parent)].find(run); it != own_ms[static_cast<size_t>(parent)].end()) {
        it->second = std::max(0.0, it->second - ms);
      }
    }
  }
  double sum_p50 = 0;
  result.layers.clear();
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KernelInfo& k = kernels[i];
    LayerResult layer{.name = k.name,
                      .op = k.op_type,
                      .onnx_nodes = k.onnx_nodes,
                      .device = k.device,
                      .implementation = k.implementation,
                      .precision = k.precision};
    std::vector<double> times;
    for (const auto& [run, ms] : own_ms[i]) times.push_back(ms);
    layer.time_p50_ms = Quantile(times, 0.5);
    layer.time_p90_ms = Quantile(times, 0.9);
    if (observed_start_ms_[i] && own_ms[i].contains(1)) {
      layer.observed_start_ms = *observed_start_ms_[i];
      layer.observed_ms = own_ms[i].at(1);
    }
    if (k.parent >= 0 && static_cast<size_t>(k.parent) < kernels.size()) {
      layer.parent = kernels[static_cast<size_t>(k.parent)].name;
      // Runs in which the body did not run (an If's other branch) are not part of its rows.
      layer.iterations = kernel_ms_[i].empty() ? 0 : static_cast<double>(executions_[i]) / kernel_ms_[i].size();
    }
    sum_p50 += layer.time_p50_ms;
    result.layers.push_back(std::move(layer));
  }
  result.instrumentation_overhead = result.latency.p50 > 0 ? sum_p50 / result.latency.p50 : 0;
  result.fallbacks = model_->fallbacks();
  return Status();
}

Status RunProfilePipeline(CompiledModel& model, const std::map<std::string, Tensor>& inputs,
                          const ProfileSettings& settings, const std::vector<Profiler*>& extra, TargetResult& result,
                          const std::stop_token& stop, const ProgressFn& progress) {
  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  auto report = [&](const std::string& phase, const std::string& detail) {
    if (progress) progress(phase, detail);
  };
  auto cancelled = [&] { return Cancelled("profiling " + model.target().ToString() + " cancelled"); };

  report("warm-up", "");
  const auto w0 = Clock::now();
  for (int i = 0; i < settings.warmup || seconds_since(w0) < settings.warmup_min_s; ++i) {
    if (stop.stop_requested()) return cancelled();
    RETURN_IF_ERROR(model.Run(inputs, nullptr, stop).status());
  }
  // End to end, no observer: the hot path without any instrumentation.
  report("end-to-end", "");
  std::vector<double> e2e;
  CpuShareMeter cpu_share;
  cpu_share.Start();
  const auto t0 = Clock::now();
  while (static_cast<int>(e2e.size()) < settings.iterations || seconds_since(t0) < settings.min_time_s) {
    if (stop.stop_requested()) return cancelled();
    const auto a = Clock::now();
    RETURN_IF_ERROR(model.Run(inputs, nullptr, stop).status());
    e2e.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
    if (e2e.size() % 16 == 0) report("end-to-end", std::to_string(e2e.size()) + " runs");
  }
  const std::optional<double> others = cpu_share.Stop();
  // Latency first: the memory profiler reads its rows' p50 times.
  LatencyProfiler latency;
  MemoryProfiler memory(settings.ceilings, settings.heap_baseline_bytes);
  std::vector<Profiler*> all = {&latency, &memory};
  all.insert(all.end(), extra.begin(), extra.end());
  for (Profiler* p : all) p->Begin(model);
  // Per layer: every profiler sees the same runs' kernel events.
  struct Fanout final : RunObserver {
    std::vector<Profiler*>* targets;
    const ProgressFn* progress;
    std::string run_label;  // run 3/20, then the layer
    const ProfileSettings* settings;
    int run = 0;
    size_t kernels = 0;
    void KernelBegin(size_t i, const KernelInfo& k) override {
      if (*progress) (*progress)("per-layer", run_label + k.name);
      if (settings->layer_progress) settings->layer_progress(run, settings->layer_runs, i, kernels);
      for (Profiler* p : *targets) p->KernelBegin(i, k);
    }
    void KernelEnd(size_t i, const KernelInfo& k, double ms) override {
      for (Profiler* p : *targets) p->KernelEnd(i, k, ms);
    }
    bool WantsOutputs(size_t i) override {
      bool any = false;
      for (Profiler* p : *targets) any |= p->WantsOutputs(i);
      return any;
    }
    void KernelOutputs(size_t i, const KernelInfo& k, const std::vector<const Tensor*>& outs) override {
      for (Profiler* p : *targets) {
        if (p->WantsOutputs(i)) p->KernelOutputs(i, k, outs);
      }
    }
  } fanout;
  fanout.targets = &all;
  fanout.progress = &progress;
  fanout.settings = &settings;
  fanout.kernels = model.kernels().size();
  for (int r = 0; r < settings.layer_runs; ++r) {
    if (stop.stop_requested()) return cancelled();
    fanout.run = r + 1;
    fanout.run_label = "run " + std::to_string(r + 1) + "/" + std::to_string(settings.layer_runs) + " ";
    RETURN_IF_ERROR(model.Run(inputs, &fanout, stop).status());
  }
  for (Profiler* p : all) RETURN_IF_ERROR(p->Collect(e2e, result));
  result.latency.other_cpu_share = others;
  result.latency.machine_busy = others && *others > kBusyCpuShare;
  if (result.latency.machine_busy) {
    result.notes.push_back(
        fmt::format("machine busy: other processes used {:.0f} % of the CPUs while this target was timed; its latency "
                    "is not what an idle machine gives",
                    *others * 100));
  }
  return Status();
}

}  // namespace chipfit
