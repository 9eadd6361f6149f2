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
  struct Held {
    int64_t offset, size;
    size_t request;  // the request holding it now
    int64_t start;   // the step its first holder was placed at
  };
  using Releases = std::multimap<int64_t, Held>;
  Releases releases;  // by release time
  // Each placed request's pending release, for a request that takes its
  // block over; end() once it is released or taken over (or not placed).
  std::vector<Releases::iterator> release_of(requests.size(), releases.end());
  // Released blocks and their release times.
  std::vector<std::pair<Held, int64_t>> spans;
  int64_t arena_end = 0;

  auto release_until = [&](int64_t time) {
    while (!releases.empty() && releases.begin()->first < time) {
      spans.push_back({releases.begin()->second, releases.begin()->first});
      auto [offset, size, request, start] = releases.begin()->second;
      release_of[request] = releases.end();
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
    const int64_t from = request.takes_over;
    if (from >= 0 && from < static_cast<int64_t>(requests.size()) &&
        release_of[from] != releases.end() &&
        requests[from].first < request.first &&
        AlignUp(requests[from].bytes, alignment) == size) {
      // The block is still held (released at or after this step): it is
      // this request's now, until both are done.
      Held held = release_of[from]->second;
      int64_t until = std::max(release_of[from]->first,
                               std::max(request.last, request.first));
      releases.erase(release_of[from]);
      release_of[from] = releases.end();
      held.request = index;
      plan.offsets[index] = held.offset;
      release_of[index] = releases.emplace(until, held);
      continue;
    }
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
    release_of[index] =
        releases.emplace(std::max(request.last, request.first),
                         Held{offset, size, index, request.first});
  }
  plan.total_bytes = arena_end;
  // Live bytes over time, from each block's intervals: a block taken
  // over is one interval, from its first holder's first step to its last
  // holder's release.
  for (const auto& [until, held] : releases) spans.push_back({held, until});
  std::map<int64_t, int64_t> change;  // step -> bytes taken (+) or freed (-)
  for (const auto& [held, until] : spans) {
    change[held.start] += held.size;
    change[until + 1] -= held.size;
  }
  int64_t live = 0;
  for (auto [step, delta] : change) {
    live += delta;
    plan.live_peak_bytes = std::max(plan.live_peak_bytes, live);
  }
  return plan;
}

}  // namespace kiln::compile
