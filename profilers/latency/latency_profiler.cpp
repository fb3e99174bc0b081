// Latency profiler and the per-target profile pipeline.
#include "profilers/latency/latency_profiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include <fmt/format.h>
#include <omp.h>

#include "profilers/latency/latency_stats.h"
#include "profilers/memory/memory_profiler.h"

namespace chipfit {

void LatencyProfiler::Begin(const CompiledModel& model) {
  model_ = &model;
  kernel_ms_.assign(model.kernels().size(), {});
  dropped_ms_.assign(model.kernels().size(), {});
  calls_.assign(model.kernels().size(), {});
  dropped_calls_.assign(model.kernels().size(), {});
  observed_start_ms_.assign(model.kernels().size(), std::nullopt);
  observed_runs_ = 0;
  timeline_run_ = 0;
  observed_wall_ms_.clear();
}

void LatencyProfiler::KernelBegin(size_t index, const KernelInfo&) {
  const auto now = std::chrono::steady_clock::now();
  if (index == 0) {
    ++observed_runs_;
    run_start_ = now;
    if (timeline_run_ == 0) timeline_run_ = observed_runs_;
  }
  if (observed_runs_ == timeline_run_ && index < observed_start_ms_.size() && !observed_start_ms_[index]) {
    observed_start_ms_[index] = std::chrono::duration<double, std::milli>(now - run_start_).count();
  }
}

void LatencyProfiler::KernelEnd(size_t index, const KernelInfo&, double elapsed_ms) {
  if (index >= kernel_ms_.size()) return;
  kernel_ms_[index][observed_runs_] += elapsed_ms;
  ++calls_[index][observed_runs_];
}

void LatencyProfiler::DropObservedRuns(int first, int last) {
  for (size_t k = 0; k < kernel_ms_.size(); ++k) {
    for (auto it = kernel_ms_[k].lower_bound(first); it != kernel_ms_[k].end() && it->first <= last;) {
      dropped_ms_[k].insert(*it);
      it = kernel_ms_[k].erase(it);
    }
    for (auto it = calls_[k].lower_bound(first); it != calls_[k].end() && it->first <= last;) {
      dropped_calls_[k].insert(*it);
      it = calls_[k].erase(it);
    }
  }
  // A timeline taken in a dropped slot is not the one to show: the next kept run records it.
  if (timeline_run_ >= first && timeline_run_ <= last) {
    observed_start_ms_.assign(observed_start_ms_.size(), std::nullopt);
    timeline_run_ = 0;
  }
  for (int run = first; run <= last; ++run) observed_wall_ms_.erase(run);
}

void LatencyProfiler::RestoreDropped() {
  for (size_t k = 0; k < kernel_ms_.size(); ++k) {
    kernel_ms_[k].insert(dropped_ms_[k].begin(), dropped_ms_[k].end());
    dropped_ms_[k].clear();
    calls_[k].insert(dropped_calls_[k].begin(), dropped_calls_[k].end());
    dropped_calls_[k].clear();
  }
}

std::vector<std::map<int, double>> LatencyProfiler::OwnTimes() const {
  const auto& kernels = model_->kernels();
  // A control-flow kernel's time includes its bodies' kernels, which are rows of their own: its row
  // keeps only its own part, so the rows still add up to the run.
  std::vector<std::map<int, double>> own_ms = kernel_ms_;
  for (size_t i = 0; i < kernels.size() && i < own_ms.size(); ++i) {
    const int parent = kernels[i].parent;
    if (parent < 0 || static_cast<size_t>(parent) >= own_ms.size()) continue;
    for (const auto& [run, ms] : kernel_ms_[i]) {
      if (auto it = own_ms[static_cast<size_t>(parent)].find(run); it != own_ms[static_cast<size_t>(parent)].end()) {
        it->second = std::max(0.0, it->second - ms);
      }
    }
  }
  return own_ms;
}

void LatencyProfiler::ObservedTotals(std::vector<double>& wall_ms, std::vector<double>& kernel_ms) const {
  wall_ms.clear();
  kernel_ms.clear();
  if (model_ == nullptr) return;
  std::map<int, double> sums;
  for (const auto& runs : OwnTimes()) {
    for (const auto& [run, ms] : runs) sums[run] += ms;
  }
  for (const auto& [run, wall] : observed_wall_ms_) {
    const auto it = sums.find(run);
    if (it == sums.end()) continue;
    wall_ms.push_back(wall);
    kernel_ms.push_back(it->second);
  }
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
  const std::vector<std::map<int, double>> own_ms = OwnTimes();
  double sum_p50 = 0;
  result.layers.clear();
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KernelInfo& k = kernels[i];
    LayerResult layer{.name = k.name,
                      .op = k.op_type,
                      .onnx_nodes = k.onnx_nodes,
                      .device = k.device,
                      .implementation = k.implementation,
                      .precision = k.precision,
                      .isa = k.isa};
    std::vector<double> times;
    for (const auto& [run, ms] : own_ms[i]) times.push_back(ms);
    layer.time_p50_ms = Quantile(times, 0.5);
    layer.time_p90_ms = Quantile(times, 0.9);
    if (observed_start_ms_[i] && own_ms[i].contains(timeline_run_)) {
      layer.observed_start_ms = *observed_start_ms_[i];
      layer.observed_ms = own_ms[i].at(timeline_run_);
    }
    if (k.parent >= 0 && static_cast<size_t>(k.parent) < kernels.size()) {
      layer.parent = kernels[static_cast<size_t>(k.parent)].name;
      // Runs in which the body did not run (an If's other branch) are not part of its rows.
      int64_t calls = 0;
      for (const auto& [run, n] : calls_[i]) calls += n;
      layer.iterations = calls_[i].empty() ? 0 : static_cast<double>(calls) / static_cast<double>(calls_[i].size());
    }
    sum_p50 += layer.time_p50_ms;
    result.layers.push_back(std::move(layer));
  }
  result.instrumentation_overhead = result.latency.p50 > 0 ? sum_p50 / result.latency.p50 : 0;
  result.fallbacks = model_->fallbacks();
  return Status();
}

namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// A per-layer pass's kernel events to each of a target's profilers.
struct Fanout final : RunObserver {
  std::vector<Profiler*>* targets = nullptr;
  const ProgressFn* progress = nullptr;
  const std::function<void(int, int, size_t, size_t)>* layer_progress = nullptr;
  std::string run_label;  // "run 3/20 ", then the layer
  int run = 0, runs = 0;
  size_t kernels = 0;
  void KernelBegin(size_t i, const KernelInfo& k) override {
    if (*progress) (*progress)("per-layer", run_label + k.name);
    if (*layer_progress) (*layer_progress)(run, runs, i, kernels);
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
};

// One target's state across the rounds.
struct TargetTiming {
  RoundTarget* target = nullptr;
  LatencyProfiler latency;
  std::unique_ptr<MemoryProfiler> memory;
  std::vector<Profiler*> profilers;
  Fanout fanout;
  double run_ms = 0;  // a typical run, from the warm-up
  int slot_runs = 1, slot_passes = 1;
  std::vector<double> clean, busy;  // end-to-end runs of clean and dropped slots, in the order they ran
  double clean_ms = 0;
  int clean_rounds = 0, clean_passes = 0, dropped = 0;
  bool active = true;  // warmed up and not failed

  bool Done(const ProfileSettings& s) const {
    return clean_rounds >= s.rounds.min_rounds && static_cast<int>(clean.size()) >= s.iterations &&
           clean_ms >= s.min_time_s * 1e3 && clean_passes >= s.layer_runs;
  }
  Status Cancelled() const {
    return chipfit::Cancelled("profiling " + target->model->target().ToString() + " cancelled");
  }
};

void Report(const RoundTarget& t, const std::string& phase, const std::string& detail) {
  if (t.progress) t.progress(phase, detail);
}

// Warm-up: at least settings.warmup runs and warmup_min_s; the median of the later half is the
// typical run the slots are sized from.
Status WarmUp(TargetTiming& st, const ProfileSettings& settings, const std::stop_token& stop) {
  RoundTarget& t = *st.target;
  Report(t, "warm-up", "");
  std::vector<double> times;
  const auto w0 = Clock::now();
  for (int i = 0; i < settings.warmup || MsSince(w0) < settings.warmup_min_s * 1e3 || times.empty(); ++i) {
    if (stop.stop_requested()) return st.Cancelled();
    const auto a = Clock::now();
    RETURN_IF_ERROR(t.model->Run(*t.inputs, nullptr, stop).status());
    times.push_back(MsSince(a));
  }
  std::vector<double> later(times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
  st.run_ms = std::max(Quantile(later, 0.5), 1e-3);
  const int rounds = std::max(1, settings.rounds.min_rounds);
  const int by_count = (settings.iterations + rounds - 1) / rounds;
  const int by_time = static_cast<int>(std::ceil(settings.min_time_s * 1e3 / rounds / st.run_ms));
  st.slot_runs = std::max({1, by_count, by_time});
  st.slot_passes = settings.layer_runs > 0 ? (settings.layer_runs + rounds - 1) / rounds : 0;
  return Status::Ok();
}

// One slot of one round: an untimed run (the other targets' slots evicted this one's data from the
// caches), end-to-end runs with no observer, then per-layer passes; kept or dropped by the CPU shares
// measured over the whole slot.
Status RunSlot(TargetTiming& st, size_t index, const ProfileSettings& settings, int round, int position,
               int machine_cpus, int threads, const std::stop_token& stop) {
  RoundTarget& t = *st.target;
  CompiledModel& model = *t.model;
  Report(t, "end-to-end", fmt::format("round {}", round));
  RETURN_IF_ERROR(model.Run(*t.inputs, nullptr, stop).status());
  CpuShareMeter meter;
  meter.Start();
  std::vector<double> slot;
  for (int i = 0; i < st.slot_runs; ++i) {
    if (stop.stop_requested()) return st.Cancelled();
    const auto a = Clock::now();
    RETURN_IF_ERROR(model.Run(*t.inputs, nullptr, stop).status());
    slot.push_back(MsSince(a));
  }
  const int first_pass = st.latency.observed_runs() + 1;
  for (int p = 0; p < st.slot_passes; ++p) {
    if (stop.stop_requested()) return st.Cancelled();
    st.fanout.run = st.clean_passes + p + 1;
    st.fanout.run_label = fmt::format("round {} run {}/{} ", round, p + 1, st.slot_passes);
    const auto a = Clock::now();
    RETURN_IF_ERROR(model.Run(*t.inputs, &st.fanout, stop).status());
    if (st.latency.observed_runs() >= first_pass) st.latency.RecordObservedWall(st.latency.observed_runs(), MsSince(a));
  }
  const int last_pass = st.latency.observed_runs();
  auto shares = meter.StopShares();
  if (settings.slot_other_share) {
    const auto share = settings.slot_other_share(round, index);
    shares = share ? std::optional<CpuShareMeter::Shares>({.others = *share}) : std::nullopt;
  }
  TimingRound r{.round = round,
                .position = position,
                .runs = static_cast<int>(slot.size()),
                .other_cpu_share = shares ? std::optional<double>(shares->others) : std::nullopt,
                .steal_share = shares ? std::optional<double>(shares->steal) : std::nullopt,
                .threads = threads};
  std::vector<double> sorted = slot;
  r.median_ms = Quantile(sorted, 0.5);
  r.dropped = SlotDropReason(r.other_cpu_share, r.steal_share, machine_cpus, threads, settings.other_cpus_before,
                             settings.rounds);
  r.clean = r.dropped.empty();
  if (r.clean) {
    st.clean.insert(st.clean.end(), slot.begin(), slot.end());
    for (double ms : slot) st.clean_ms += ms;
    ++st.clean_rounds;
    st.clean_passes += st.slot_passes;
  } else {
    st.busy.insert(st.busy.end(), slot.begin(), slot.end());
    if (last_pass >= first_pass) st.latency.DropObservedRuns(first_pass, last_pass);
    ++st.dropped;
  }
  t.result->rounds.push_back(std::move(r));
  return Status::Ok();
}

// The median of the slots' other-CPU shares (the clean ones, or all when none was clean).
std::optional<double> MedianOtherShare(const std::vector<TimingRound>& rounds) {
  std::vector<double> clean, all;
  for (const TimingRound& r : rounds) {
    if (!r.other_cpu_share) continue;
    all.push_back(*r.other_cpu_share);
    if (r.clean) clean.push_back(*r.other_cpu_share);
  }
  if (all.empty()) return std::nullopt;
  return Quantile(clean.empty() ? all : clean, 0.5);
}

// After the rounds: each profiler's part of the result from the clean slots, the reliability verdict
// and its notes, and the time attribution.
// `stopped`: the user stopped the run; what the clean rounds measured so far is kept, marked partial.
Status FinishTarget(TargetTiming& st, const ProfileSettings& settings, double budget_s, bool budget_spent,
                    bool stopped = false) {
  TargetResult& result = *st.target->result;
  const int rounds = std::max(1, settings.rounds.min_rounds);
  const int needed = std::max(1, static_cast<int>(std::ceil(rounds * settings.rounds.min_clean_share)));
  const int slots = static_cast<int>(result.rounds.size());
  std::string last_reason;
  for (const TimingRound& r : result.rounds) {
    if (!r.clean) last_reason = r.dropped;
  }
  if (st.clean_rounds == 0) st.latency.RestoreDropped();
  const std::vector<double>& samples = st.clean.empty() ? st.busy : st.clean;
  for (Profiler* p : st.profilers) RETURN_IF_ERROR(p->Collect(samples, result));
  result.latency.other_cpu_share = MedianOtherShare(result.rounds);
  result.latency.machine_busy = result.latency.other_cpu_share && *result.latency.other_cpu_share > kBusyCpuShare;
  if (stopped) {
    result.partial = true;
    result.notes.push_back(
        fmt::format("stopped after {} of {} timing slots: its figures come from the {} clean runs "
                    "of {} clean round(s) and are partial",
                    slots, std::max(slots, rounds), st.clean.size(), st.clean_rounds));
  } else if (!st.Done(settings) && st.clean_rounds < needed) {
    result.unreliable = true;
    result.unreliable_reason = fmt::format(
        "only {} of {} timing rounds were clean within the {:.0f} s budget ({}); its latency comes from {} runs and "
        "is not ranked",
        st.clean_rounds, slots, budget_s, last_reason.empty() ? "no slot was clean" : last_reason,
        st.clean.empty() ? "busy" : "too few clean");
    result.notes.push_back("unreliable: " + result.unreliable_reason +
                           " (re-run when the machine is idle, give more --max-time, or --rank-unreliable)");
  } else if (st.dropped > 0) {
    result.notes.push_back(
        fmt::format("{} of {} timing slots dropped and repeated: {}", st.dropped, slots, last_reason));
  }
  if (!result.unreliable && budget_spent && !st.Done(settings)) {
    result.notes.push_back(fmt::format("the {:.0f} s timing budget ran out: {} clean runs in {} clean rounds", budget_s,
                                       st.clean.size(), st.clean_rounds));
  }
  if (result.latency.machine_busy) {
    result.notes.push_back(fmt::format(
        "machine busy: other processes used {:.0f} % of the CPUs while this target was timed (its clean slots' median)",
        *result.latency.other_cpu_share * 100));
  }
  std::vector<double> wall, kernels;
  st.latency.ObservedTotals(wall, kernels);
  double sum_p50 = 0;
  for (const LayerResult& l : result.layers) sum_p50 += l.time_p50_ms;
  result.attribution =
      AttributeTime(result.latency.p50, sum_p50, wall, kernels, st.target->model->kernels().size(), st.dropped);
  return Status::Ok();
}

}  // namespace

void RunProfileRounds(std::vector<RoundTarget>& targets, const ProfileSettings& settings, const std::stop_token& stop) {
  const int machine_cpus = settings.machine_cpus > 0 ? settings.machine_cpus : CpuShareMeter::MachineCpus();
  const int threads = settings.threads > 0 ? settings.threads : omp_get_max_threads();
  std::vector<std::unique_ptr<TargetTiming>> states;
  for (RoundTarget& t : targets) {
    auto st = std::make_unique<TargetTiming>();
    st->target = &t;
    t.status = Status::Ok();
    states.push_back(std::move(st));
  }
  // Warm-up, target by target; a failure here ends that target only.
  for (auto& st : states) {
    st->target->status = WarmUp(*st, settings, stop);
    st->active = st->target->status.ok();
  }
  double plan_ms = 0;
  for (const auto& st : states) {
    if (st->active) plan_ms += (st->slot_runs + 1 + st->slot_passes * 1.5) * st->run_ms * settings.rounds.min_rounds;
  }
  // Room to repeat every slot three times, and to wait out a burst of load of up to 10 s.
  const double budget_s =
      settings.max_time_s > 0 ? settings.max_time_s : 4 * plan_ms / 1e3 + std::min(10.0, 2 * plan_ms / 1e3);
  // The profilers begin once every target is compiled and warm: the heap baseline of each target is
  // the heap now less what its own compilation added.
  for (auto& st : states) {
    RoundTarget& t = *st->target;
    const std::optional<int64_t> baseline =
        t.heap_compile_bytes ? std::optional<int64_t>(HeapInUseBytes().value_or(0) - *t.heap_compile_bytes)
                             : settings.heap_baseline_bytes;
    st->memory = std::make_unique<MemoryProfiler>(settings.ceilings, baseline);
    st->profilers = {&st->latency, st->memory.get()};
    st->profilers.insert(st->profilers.end(), t.extra.begin(), t.extra.end());
    st->fanout.targets = &st->profilers;
    st->fanout.progress = &t.progress;
    st->fanout.layer_progress = &t.layer_progress;
    st->fanout.kernels = t.model->kernels().size();
    st->fanout.runs = st->slot_passes * settings.rounds.min_rounds;
    for (Profiler* p : st->profilers) p->Begin(*t.model);
  }
  const auto t0 = Clock::now();
  bool budget_spent = false;
  for (int round = 1; !stop.stop_requested(); ++round) {
    std::vector<size_t> pending;
    for (size_t i = 0; i < states.size(); ++i) {
      if (states[i]->active && !states[i]->Done(settings)) pending.push_back(i);
    }
    if (pending.empty()) break;
    if (round > 1 && MsSince(t0) > budget_s * 1e3) {
      budget_spent = true;
      break;
    }
    const std::vector<size_t> order = RoundOrder(pending.size(), round);
    for (size_t position = 0; position < order.size() && !stop.stop_requested(); ++position) {
      const size_t index = pending[order[position]];
      TargetTiming& st = *states[index];
      Status s = RunSlot(st, index, settings, round, static_cast<int>(position), machine_cpus, threads, stop);
      if (s.code() == StatusCode::kCancelled && stop.stop_requested()) break;  // kept and finished below
      if (!s.ok()) {
        st.target->status = s;
        st.active = false;
      }
    }
  }
  for (auto& st : states) {
    if (!st->active) continue;
    if (stop.stop_requested()) {
      // Keep what the clean rounds measured: a run stopped late has figures worth seeing, said partial.
      if (!st->clean.empty()) (void)FinishTarget(*st, settings, budget_s, budget_spent, true);
      st->target->status = st->Cancelled();
      continue;
    }
    st->target->status = FinishTarget(*st, settings, budget_s, budget_spent);
  }
}

Status RunProfilePipeline(CompiledModel& model, const std::map<std::string, Tensor>& inputs,
                          const ProfileSettings& settings, const std::vector<Profiler*>& extra, TargetResult& result,
                          const std::stop_token& stop, const ProgressFn& progress) {
  std::vector<RoundTarget> one(1);
  one[0] = {.model = &model,
            .inputs = &inputs,
            .extra = extra,
            .result = &result,
            .progress = progress,
            .layer_progress = settings.layer_progress};
  RunProfileRounds(one, settings, stop);
  return one[0].status;
}

}  // namespace chipfit
