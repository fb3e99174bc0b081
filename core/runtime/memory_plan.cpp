// Greedy arena planning (sizes descending, lowest free offset), as in TFLite's and ORT's planners.
#include "core/runtime/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace chipfit {
MemoryPlan PlanMemory(const std::vector<BufferRequest>& requests, size_t alignment) {
  auto AlignUp = [alignment](size_t n) { return (n + alignment - 1) / alignment * alignment; };
  MemoryPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return requests[a].bytes > requests[b].bytes; });
  std::vector<size_t> placed;
  for (size_t r : order) {
    const BufferRequest& req = requests[r];
    plan.total_bytes += req.bytes;
    // Occupied [offset, end) ranges of placed buffers whose lifetimes overlap this one, by offset.
    std::vector<std::pair<size_t, size_t>> busy;
    for (size_t p : placed) {
      const BufferRequest& other = requests[p];
      if (other.last_use < req.first_use || req.last_use < other.first_use) continue;
      busy.emplace_back(plan.offsets[p], plan.offsets[p] + AlignUp(other.bytes));
    }
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    const size_t need = AlignUp(req.bytes);
    for (const auto& [begin, end] : busy) {
      if (offset + need <= begin) break;
      offset = std::max(offset, end);
    }
    plan.offsets[r] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + need);
    placed.push_back(r);
  }
  return plan;
}

}  // namespace chipfit
