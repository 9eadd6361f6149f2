// The buffer planner: gives every scratch slot an offset in one arena so
// that slots whose lifetimes overlap never share bytes, and slots whose
// lifetimes do not overlap reuse the same memory.
#ifndef KILN_COMPILE_BUFFER_PLANNER_H_
#define KILN_COMPILE_BUFFER_PLANNER_H_

#include <cstdint>
#include <vector>

namespace kiln::compile {

struct BufferRequest {
  int64_t bytes = 0;
  int64_t first = 0;  // index of the first step that writes it
  int64_t last = 0;   // index of the last step that reads it (>= first)
  // A request of the same size, live before this one's first step, whose
  // memory this one takes over in place (the step that writes this one
  // reads that one for the last time, element by element), or -1. A
  // request is taken over by at most one other.
  int64_t takes_over = -1;
};

struct BufferPlan {
  std::vector<int64_t> offsets;  // one per request, aligned
  int64_t total_bytes = 0;
  // The most aligned bytes live at one step (a block taken over counted
  // once): what any placement needs at least, so total_bytes over this is
  // what fragmentation costs.
  int64_t live_peak_bytes = 0;
};

// Offsets for `requests`, each aligned to `alignment` bytes. Requests whose
// closed intervals [first, last] overlap get disjoint byte ranges, except
// that a request that takes over another starts at that one's offset (and
// keeps its bytes until both have ended).
BufferPlan PlanBuffers(const std::vector<BufferRequest>& requests,
                       int64_t alignment);

}  // namespace kiln::compile

#endif  // KILN_COMPILE_BUFFER_PLANNER_H_
