// Interleaved timing rounds (docs/measurement.md, "Rounds"): the rules that decide a round's order, whether
// a slot was clean, how many threads fit the machine now, within-round ratios between targets, and where a
// target's end-to-end time goes. Pure functions of their inputs, so they are tested on synthetic samples;
// the driver that runs the rounds is RunProfileRounds (profilers/profiler.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "profilers/run_result.h"

namespace chipfit {

// How rounds are run and judged.
struct RoundPolicy {
  int min_rounds = 10;  // clean slots each target needs, at least
  // A slot is dropped when other processes used more CPUs than the run left them (cores − threads) plus
  // this many: a parallel process that wants the cores this run's threads use makes every barrier wait.
  double cpu_margin = 0.5;
  double max_steal_share = 0.05;  // … or when the hypervisor stole more than this share of all CPU time
  // A target is `unreliable` when the budget ends before it has this share of min_rounds clean.
  double min_clean_share = 0.5;
};

// The targets' order in round `round` (1-based): 0..n−1 rotated by round − 1, so each target is first,
// last and between the others equally often.
std::vector<size_t> RoundOrder(size_t targets, int round);

// Why a slot is dropped, in words for the user; "" when it is clean. `other_share` and `steal_share`
// are shares of all `machine_cpus` CPUs' time (absent: not measured, which drops nothing). Other
// processes may use the CPUs the run left them (machine_cpus − threads), or as many as they used just
// before the run when that was more (the threads were chosen for that load), plus policy.cpu_margin.
std::string SlotDropReason(std::optional<double> other_share, std::optional<double> steal_share, int machine_cpus,
                           int threads, std::optional<double> other_cpus_before, const RoundPolicy& policy = {});

// How many threads fit the machine now: the CPUs this process may use less those other processes keep
// busy (rounded to whole CPUs), at least 1; `reason` says it in words ("2 cores, ~1 busy with other
// work: 1 thread").
struct ThreadChoice {
  int threads = 1;
  std::string reason;
};
ThreadChoice ChooseThreads(int cores, std::optional<double> other_cpus);

// Within-round ratio a/b of two targets' slot medians: the median over the rounds in which both had a
// clean slot, so a load that comes and goes moves both sides. nullopt when they share no clean round.
std::optional<double> PairedRatio(const std::vector<TimingRound>& a, const std::vector<TimingRound>& b);

// The speed-up of `target` over `base` (base time / target time): the within-round ratio when both were
// timed in rounds, else the ratio of their p50s.
double SpeedUp(const TargetResult& base, const TargetResult& target);

// Where the end-to-end time goes (TimeAttribution): `observed_wall_ms` are the per-layer runs' wall
// times and `observed_kernel_ms` the sum of their kernels' times, run by run; `kernels` the kernels a
// run executes. The explanation is filled when Σ layers / end to end is outside [0.8, 1.2].
TimeAttribution AttributeTime(double end_to_end_p50_ms, double sum_layer_p50_ms,
                              const std::vector<double>& observed_wall_ms,
                              const std::vector<double>& observed_kernel_ms, size_t kernels, int dropped_slots);

}  // namespace chipfit
