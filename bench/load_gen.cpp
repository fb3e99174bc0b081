// chipfit-load: a bounded, reproducible CPU load of the kind that breaks timings on a shared machine —
// another process's OpenMP parallel work, as many threads as cores, meeting at a barrier every few
// hundred microseconds (a second profile, a numpy/PyTorch job, a parallel build's compiler threads do
// the same). A plain busy loop is not enough: what hurts is a parallel region whose threads wait for
// each other while the scheduler runs someone else. Used by bench/contention.sh.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"chipfit-load: parallel OpenMP work on every core for a bounded time (a test load)"};
  int threads = omp_get_num_procs();
  double seconds = 60;
  double duty = 1.0;
  double period_ms = 20;
  double region_us = 200;
  app.add_option("--threads", threads, "OpenMP threads (default: every core)")->check(CLI::Range(1, 1024));
  app.add_option("--seconds", seconds, "Stop after this long (at most an hour)")->check(CLI::Range(0.1, 3600.0));
  app.add_option("--duty", duty, "Share of each period spent working (the rest asleep)")->check(CLI::Range(0.01, 1.0));
  app.add_option("--period-ms", period_ms, "Length of one work + sleep period")->check(CLI::Range(1.0, 10000.0));
  app.add_option("--region-us", region_us, "Work per thread between two barriers")->check(CLI::Range(1.0, 1e6));
  CLI11_PARSE(app, argc, argv);

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  // Per thread: a vector that stays in its core's L2, updated in place so the work cannot be elided.
  constexpr size_t kFloats = 16 * 1024;
  std::vector<std::vector<float>> data(static_cast<size_t>(threads), std::vector<float>(kFloats, 1.0f));
  // Calibrate the passes one region takes so a region lasts about region_us on this machine.
  int passes = 1;
  {
    const auto t0 = Clock::now();
    float* v = data[0].data();
    for (int r = 0; r < 64; ++r)
      for (size_t i = 0; i < kFloats; ++i) v[i] = v[i] * 0.999f + 0.001f;
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / 64;
    passes = std::max(1, static_cast<int>(region_us / std::max(us, 1e-3)));
  }
  long long regions = 0;
  omp_set_num_threads(threads);
  while (Clock::now() < end) {
    const auto period_end = Clock::now() + std::chrono::duration<double, std::milli>(period_ms * duty);
    while (Clock::now() < period_end) {
#pragma omp parallel
      {
        float* v = data[static_cast<size_t>(omp_get_thread_num()) % data.size()].data();
        for (int r = 0; r < passes; ++r)
          for (size_t i = 0; i < kFloats; ++i) v[i] = v[i] * 0.999f + 0.001f;
      }
      ++regions;
    }
    if (duty < 1.0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(period_ms * (1 - duty)));
  }
  double checksum = 0;
  for (const auto& v : data) checksum += v[0];
  std::printf("chipfit-load: %d threads, %lld parallel regions in %.1f s (checksum %.3f)\n", threads, regions,
              std::chrono::duration<double>(Clock::now() - start).count(), checksum);
  return 0;
}
