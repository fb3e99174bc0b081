// Splitting n independent items across the OpenMP threads in contiguous chunks, for the CPU kernels that
// copy or scan in bulk (gather_cpu.cpp, select_cpu.cpp).
#pragma once

#include <omp.h>

#include <cstdint>

namespace chipfit::cpu {

// Work (bytes or element operations) below which one thread does it all.
inline constexpr int64_t kChunksParallelFrom = int64_t{1} << 18;

// f(begin, end) over [0, n) in one contiguous chunk per thread; serially when `work` is small.
template <typename F>
void ForChunks(int64_t n, int64_t work, const F& f) {
  if (n <= 0) return;
  if (n == 1 || work < kChunksParallelFrom || omp_get_max_threads() == 1) {
    f(int64_t{0}, n);
    return;
  }
#pragma omp parallel
  {
    const auto t = static_cast<int64_t>(omp_get_thread_num());
    const auto nt = static_cast<int64_t>(omp_get_num_threads());
    const int64_t begin = n * t / nt;
    const int64_t end = n * (t + 1) / nt;
    if (begin < end) f(begin, end);
  }
}

}  // namespace chipfit::cpu
