// Launch-configuration arithmetic for the CUDA kernels: pure functions of the GPU's shape, so that
// they are tested on machines without a GPU.
#pragma once

#include <algorithm>
#include <cstdint>

namespace chipfit::cuda {

// What the launch arithmetic needs to know about a GPU (from cudaDeviceProp).
struct GpuShape {
  int sm_count = 1;
  int max_threads_per_sm = 2048;
  int max_threads_per_block = 1024;
  int max_blocks_per_sm = 32;
  int64_t max_grid_x = (int64_t{1} << 31) - 1;
  int warp_size = 32;
};

struct Launch1D {
  uint32_t grid = 1;
  uint32_t block = 1;
};

constexpr int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Thread blocks of `block` threads an SM keeps resident at once (threads and block-count limits).
inline int ResidentBlocksPerSm(const GpuShape& gpu, int block) {
  if (block <= 0) return 0;
  return std::max(1, std::min(gpu.max_threads_per_sm / block, gpu.max_blocks_per_sm));
}

// A grid-stride launch over `n` independent items: `block` threads (clamped to the GPU's limit and
// rounded down to whole warps), and no more blocks than `max_waves` full waves of the GPU keep
// resident (each thread then loops); at least one block, even for n = 0.
inline Launch1D GridStride(int64_t n, const GpuShape& gpu, int block = 256, int max_waves = 4) {
  block = std::min(block, gpu.max_threads_per_block);
  block = std::max(gpu.warp_size, block / gpu.warp_size * gpu.warp_size);
  const int64_t wanted = std::max<int64_t>(1, CeilDiv(n, block));
  const int64_t resident = static_cast<int64_t>(ResidentBlocksPerSm(gpu, block)) * gpu.sm_count;
  const int64_t cap = std::min<int64_t>(gpu.max_grid_x, std::max<int64_t>(1, resident * max_waves));
  return {static_cast<uint32_t>(std::min(wanted, cap)), static_cast<uint32_t>(block)};
}

// How many waves `blocks` blocks of `block` threads take on the GPU (fractional: 1.25 is one full
// wave and a quarter), and the share of the SM slots the last wave fills (the tail effect).
inline double Waves(int64_t blocks, const GpuShape& gpu, int block) {
  const int64_t per_wave = static_cast<int64_t>(ResidentBlocksPerSm(gpu, block)) * gpu.sm_count;
  return per_wave > 0 ? static_cast<double>(blocks) / static_cast<double>(per_wave) : 0.0;
}
inline double LastWaveFill(int64_t blocks, const GpuShape& gpu, int block) {
  const int64_t per_wave = static_cast<int64_t>(ResidentBlocksPerSm(gpu, block)) * gpu.sm_count;
  if (per_wave <= 0 || blocks <= 0) return 0.0;
  const int64_t rest = blocks % per_wave;
  return rest == 0 ? 1.0 : static_cast<double>(rest) / static_cast<double>(per_wave);
}

// One block per row for row-wise reductions (softmax, norms): a power-of-two block of at most `max`
// threads, no wider than the row needs (a 40-wide row gets 64 threads, not 256).
inline uint32_t RowBlock(int64_t row_length, const GpuShape& gpu, int max = 256) {
  uint32_t block = static_cast<uint32_t>(gpu.warp_size);
  const auto cap = static_cast<uint32_t>(std::min(max, gpu.max_threads_per_block));
  while (block < cap && static_cast<int64_t>(block) < row_length) block *= 2;
  return std::min(block, cap);
}

}  // namespace chipfit::cuda
