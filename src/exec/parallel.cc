#include "exec/parallel.h"

#include <algorithm>
#include <atomic>
#include <memory>

#include "base/thread_pool.h"

#ifdef KILN_OPENMP
#include <omp.h>
#endif

namespace kiln::exec {
namespace {

thread_local int serial_depth = 0;

}  // namespace

SerialScope::SerialScope(bool onednn_too) {
#ifdef KILN_OPENMP
  // oneDNN opens its regions with the thread's count: a region of one
  // thread starts no team.
  if (onednn_too && omp_get_max_threads() != 1) {
    threads_before_ = omp_get_max_threads();
    omp_set_num_threads(1);
  }
#endif
  ++serial_depth;
}

SerialScope::~SerialScope() {
  --serial_depth;
#ifdef KILN_OPENMP
  if (threads_before_ != 0) omp_set_num_threads(threads_before_);
#endif
}

int ParallelThreads() {
  if (serial_depth > 0) return 1;
#ifdef KILN_PARALLEL_OPENMP
  if (!omp_in_parallel()) return omp_get_max_threads();
#endif
  return ThreadPool::Default().num_threads();
}

void ParallelFor(int64_t count, int64_t min_chunk,
                 const std::function<void(int64_t, int64_t)>& body) {
  if (count <= 0) return;
  if (serial_depth > 0) {
    body(0, count);
    return;
  }
#ifdef KILN_PARALLEL_OPENMP
  if (!omp_in_parallel()) {
    min_chunk = std::max<int64_t>(1, min_chunk);
    const int threads = omp_get_max_threads();
    // Four chunks a thread.
    const int64_t chunks = std::min<int64_t>(
        int64_t{4} * threads, (count + min_chunk - 1) / min_chunk);
    if (threads <= 1 || chunks <= 1) {
      body(0, count);
      return;
    }
    const int64_t size = (count + chunks - 1) / chunks;
    // Each thread owns a run of consecutive chunks and takes them first, so
    // that a range split the same way again (every step of a loop over one
    // array) lands on the thread that touched it last, whose cache holds
    // it: with chunks claimed in any order, a 100-step fori_loop over 2
    // MiB took 6.9 ms on 2 cores, its data moving between the cores' caches,
    // against 2.2 ms so. A thread that has run out takes the chunks another
    // has not claimed yet: a thread the machine deschedules does not hold
    // the rest up (chunks handed out statically made svd 256 25% slower).
    //
    // Every region takes the whole team, even when there are fewer chunks
    // than threads (the spare ones find no chunk and wait at the end).
    // libgomp keeps one pool of threads per calling thread; a region of
    // another size than the last one (oneDNN's primitives take the whole
    // team) makes it park or recall threads, which costs more than the
    // region's work: on 16 cores, teams sized to their chunks made
    // ResNet-50 at batch 1 take 41 ms, the whole team every time 19 ms
    // (the MLP step 2.6 -> 1.4 ms).
    const int64_t per_thread = (chunks + threads - 1) / threads;
    // The next chunk of each thread's run, a cache line each.
    struct alignas(64) Next {
      std::atomic<int64_t> chunk;
    };
    constexpr int kOnStack = 32;
    Next on_stack[kOnStack];
    std::unique_ptr<Next[]> on_heap;
    if (threads > kOnStack) on_heap = std::make_unique<Next[]>(threads);
    Next* next = threads > kOnStack ? on_heap.get() : on_stack;
    for (int t = 0; t < threads; ++t) {
      next[t].chunk.store(std::min<int64_t>(chunks, t * per_thread),
                          std::memory_order_relaxed);
    }
    auto run_chunk = [&](int64_t chunk) {
      const int64_t begin = chunk * size;
      const int64_t end = std::min(count, begin + size);
      if (begin < end) body(begin, end);
    };
#pragma omp parallel num_threads(threads)
    {
      const int self = omp_get_thread_num();
      for (int k = 0; k < threads; ++k) {
        const int owner = (self + k) % threads;
        const int64_t last =
            std::min<int64_t>(chunks, (owner + 1) * per_thread);
        while (true) {
          const int64_t chunk =
              next[owner].chunk.fetch_add(1, std::memory_order_relaxed);
          if (chunk >= last) break;
          run_chunk(chunk);
        }
      }
    }
    return;
  }
#endif
  ThreadPool::Default().ParallelFor(count, min_chunk, body);
}

}  // namespace kiln::exec
