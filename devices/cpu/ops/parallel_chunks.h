// Splitting n independent items across the OpenMP threads in contiguous chunks, for the CPU kernels that
// copy or scan in bulk (gather_cpu.cpp, select_cpu.cpp, reshape_cpu.cpp).
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

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

// dst = src, `bytes` of them, in parallel chunks when large.
inline void CopyBytes(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return;
  constexpr int64_t kChunk = int64_t{1} << 16;
  const auto n = static_cast<int64_t>((bytes + kChunk - 1) / kChunk);
  ForChunks(n, static_cast<int64_t>(bytes), [&](int64_t b, int64_t e) {
    const auto from = static_cast<size_t>(b * kChunk);
    const size_t to = std::min(bytes, static_cast<size_t>(e * kChunk));
    std::memcpy(static_cast<char*>(dst) + from, static_cast<const char*>(src) + from, to - from);
  });
}

}  // namespace chipfit::cpu
