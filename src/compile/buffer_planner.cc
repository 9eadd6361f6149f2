#include "compile/buffer_planner.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>

namespace kiln::compile {
namespace {

int64_t AlignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

BufferPlan PlanBuffers(const std::vector<BufferRequest>& requests,
                       int64_t alignment) {
  // Replays the lifetimes in order with a best-fit free list over one
  // growing arena: buffers are taken at their first step and given back
  // after their last one.
  BufferPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].first != requests[b].first) {
      return requests[a].first < requests[b].first;
    }
    return requests[a].bytes > requests[b].bytes;
  });
  // Free blocks by offset -> size; blocks to release by release time.
  std::map<int64_t, int64_t> free_blocks;
  std::multimap<int64_t, std::pair<int64_t, int64_t>> releases;
  int64_t arena_end = 0;

  auto release_until = [&](int64_t time) {
    while (!releases.empty() && releases.begin()->first < time) {
      auto [offset, size] = releases.begin()->second;
      releases.erase(releases.begin());
      auto next = free_blocks.lower_bound(offset);
      if (next != free_blocks.end() && offset + size == next->first) {
        size += next->second;
        next = free_blocks.erase(next);
      }
      if (next != free_blocks.begin()) {
        auto previous = std::prev(next);
        if (previous->first + previous->second == offset) {
          previous->second += size;
          continue;
        }
      }
      free_blocks[offset] = size;
    }
  };

  for (size_t index : order) {
    const BufferRequest& request = requests[index];
    if (request.bytes <= 0) continue;
    release_until(request.first);
    int64_t size = AlignUp(request.bytes, alignment);
    auto best = free_blocks.end();
    for (auto it = free_blocks.begin(); it != free_blocks.end(); ++it) {
      if (it->second >= size &&
          (best == free_blocks.end() || it->second < best->second)) {
        best = it;
      }
    }
    int64_t offset;
    if (best != free_blocks.end()) {
      offset = best->first;
      int64_t remaining = best->second - size;
      free_blocks.erase(best);
      if (remaining > 0) free_blocks[offset + size] = remaining;
    } else if (!free_blocks.empty() &&
               std::prev(free_blocks.end())->first +
                       std::prev(free_blocks.end())->second ==
                   arena_end) {
      // Grow the arena from the free block at its end.
      auto last = std::prev(free_blocks.end());
      offset = last->first;
      free_blocks.erase(last);
      arena_end = offset + size;
    } else {
      offset = arena_end;
      arena_end += size;
    }
    plan.offsets[index] = offset;
    releases.emplace(std::max(request.last, request.first),
                     std::make_pair(offset, size));
  }
  plan.total_bytes = arena_end;
  return plan;
}

}  // namespace kiln::compile
