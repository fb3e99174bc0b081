// Round order, slot verdicts, the thread choice, within-round ratios and the time attribution of rounds.h.
#include "profilers/latency/rounds.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "profilers/latency/latency_stats.h"

namespace chipfit {

std::vector<size_t> RoundOrder(size_t targets, int round) {
  std::vector<size_t> order(targets);
  if (targets == 0) return order;
  const size_t shift = static_cast<size_t>(std::max(round - 1, 0)) % targets;
  for (size_t i = 0; i < targets; ++i) order[i] = (i + shift) % targets;
  return order;
}

std::string SlotDropReason(std::optional<double> other_share, std::optional<double> steal_share, int machine_cpus,
                           int threads, std::optional<double> other_cpus_before, const RoundPolicy& policy) {
  const int cpus = std::max(machine_cpus, 1);
  if (other_share) {
    const double others = *other_share * cpus;
    const double left = std::max<double>(std::max(0, cpus - threads), other_cpus_before.value_or(0));
    if (others > left + policy.cpu_margin) {
      return fmt::format(
          "other processes used {:.1f} of {} CPUs, more than the {:.1f} this run's {} thread{} left "
          "them",
          others, cpus, left, threads, threads == 1 ? "" : "s");
    }
  }
  if (steal_share && *steal_share > policy.max_steal_share) {
    return fmt::format("the hypervisor stole {:.0f} % of the CPU time", *steal_share * 100);
  }
  return {};
}

ThreadChoice ChooseThreads(int cores, std::optional<double> other_cpus) {
  ThreadChoice choice;
  cores = std::max(cores, 1);
  auto plural = [](int n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); };
  if (!other_cpus) {
    choice.threads = cores;
    choice.reason =
        fmt::format("{}, other processes' load unknown: {}", plural(cores, "core"), plural(cores, "thread"));
    return choice;
  }
  // Round to whole CPUs: a background daemon at 0.2 of a CPU costs no thread, a parallel job at 0.8 does.
  const int busy = static_cast<int>(std::floor(std::max(*other_cpus, 0.0) + 0.5));
  choice.threads = std::max(1, cores - busy);
  if (busy == 0) {
    choice.reason = fmt::format("{}, idle: {}", plural(cores, "core"), plural(choice.threads, "thread"));
  } else {
    choice.reason =
        fmt::format("{}, ~{} busy with other work: {}", plural(cores, "core"), busy, plural(choice.threads, "thread"));
  }
  return choice;
}

std::optional<double> PairedRatio(const std::vector<TimingRound>& a, const std::vector<TimingRound>& b) {
  std::map<int, double> clean_a;
  for (const TimingRound& r : a) {
    if (r.clean && r.median_ms > 0) clean_a[r.round] = r.median_ms;
  }
  std::vector<double> ratios;
  for (const TimingRound& r : b) {
    const auto it = clean_a.find(r.round);
    if (r.clean && r.median_ms > 0 && it != clean_a.end()) ratios.push_back(it->second / r.median_ms);
  }
  if (ratios.empty()) return std::nullopt;
  return Quantile(ratios, 0.5);
}

double SpeedUp(const TargetResult& base, const TargetResult& target) {
  if (const auto paired = PairedRatio(base.rounds, target.rounds)) return *paired;
  return target.latency.p50 > 0 ? base.latency.p50 / target.latency.p50 : 0;
}

TimeAttribution AttributeTime(double end_to_end_p50_ms, double sum_layer_p50_ms,
                              const std::vector<double>& observed_wall_ms,
                              const std::vector<double>& observed_kernel_ms, size_t kernels, int dropped_slots) {
  TimeAttribution a;
  a.end_to_end_ms = end_to_end_p50_ms;
  a.attributed_ms = sum_layer_p50_ms;
  std::vector<double> between, walls = observed_wall_ms;
  for (size_t i = 0; i < observed_wall_ms.size() && i < observed_kernel_ms.size(); ++i) {
    between.push_back(std::max(0.0, observed_wall_ms[i] - observed_kernel_ms[i]));
  }
  // Measured in the runs timed kernel by kernel, the gaps include the timers' own cost; never more than
  // the end-to-end time the layers leave, so a run's parts add up to it (a negative rest is then the
  // layers' medians overstating, said below).
  a.between_ms = std::min(Quantile(between, 0.5), std::max(0.0, end_to_end_p50_ms - sum_layer_p50_ms));
  a.unexplained_ms = a.end_to_end_ms - a.attributed_ms - a.between_ms;
  if (a.end_to_end_ms <= 0) return a;
  const double ratio = a.attributed_ms / a.end_to_end_ms;
  if (ratio >= 0.8 && ratio <= 1.2) return a;
  const double observed = Quantile(walls, 0.5);
  if (ratio > 1.2) {
    if (observed > a.end_to_end_ms * 1.2 && kernels > 0) {
      a.explanation = fmt::format(
          "Σ layers is {:.2f}× end to end: a run timed kernel by kernel took {:.3g} ms against {:.3g} ms untimed, "
          "so timing each of the {} kernels adds about {:.1f} µs to it; small layers' times are high by that much, "
          "and end to end is the figure to compare",
          ratio, observed, a.end_to_end_ms, kernels, (observed - a.end_to_end_ms) / static_cast<double>(kernels) * 1e3);
    } else {
      a.explanation = fmt::format(
          "Σ layers is {:.2f}× end to end although a run timed kernel by kernel took {:.3g} ms: the layers' slow "
          "runs fell in different runs, and each layer's median is taken on its own",
          ratio, observed);
    }
    return a;
  }
  if (a.between_ms > 0.2 * a.end_to_end_ms) {
    a.explanation = fmt::format(
        "Σ layers is {:.2f}× end to end: {:.3g} ms of each run passes between kernels (the executor, copies and "
        "reorders, waits for the device), in no layer",
        ratio, a.between_ms);
  } else if (observed > 0 && a.end_to_end_ms > observed * 1.2) {
    a.explanation = fmt::format(
        "Σ layers is {:.2f}× end to end: the end-to-end runs took {:.3g} ms, the runs timed kernel by kernel {:.3g} "
        "ms; the end-to-end runs were slowed by something the others were not (threads waiting for CPUs other "
        "processes held{})",
        ratio, a.end_to_end_ms, observed,
        dropped_slots > 0 ? fmt::format("; {} busy slot(s) were dropped", dropped_slots) : std::string());
  } else if (observed >= a.attributed_ms * 1.2) {
    a.explanation = fmt::format(
        "Σ layers is {:.2f}× end to end, yet a run timed kernel by kernel took {:.3g} ms as the untimed ones did: the "
        "time is in the layers' slow runs, which each layer's median leaves out; in a typical run a few layers were "
        "held up (another process took their CPU), a different few each time",
        ratio, observed);
  } else {
    a.explanation = fmt::format(
        "Σ layers is {:.2f}× end to end: {:.3g} ms of a run is in no layer and not between kernels of the observed "
        "runs",
        ratio, a.unexplained_ms);
  }
  return a;
}

}  // namespace chipfit
