// Memory planner: tensor lifetimes → offsets in one arena, reusing space of dead tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace chipfit {

struct BufferRequest {
  size_t bytes = 0;
  int first_use = 0;  // kernel index that writes it
  int last_use = 0;   // last kernel index that reads it (inclusive)
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // per request, aligned as asked
  size_t arena_bytes = 0;       // the planned peak: what the arena allocates
  size_t total_bytes = 0;       // sum of all requests: what allocating each tensor would take
};

// Greedy best-fit by decreasing size: each buffer takes the lowest offset that no buffer with an
// overlapping lifetime occupies.
// `alignment`: offsets are multiples of it (a device's sub-buffer alignment, 64 on the host).
MemoryPlan PlanMemory(const std::vector<BufferRequest>& requests, size_t alignment = 64);

}  // namespace chipfit
