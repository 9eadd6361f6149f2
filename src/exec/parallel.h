// Parallel loops of Kiln's own kernels (elementwise ranges, row
// reductions, Kiln's matmul), on the threads that run oneDNN's.
//
// oneDNN runs its primitives on the calling thread's OpenMP team, whose
// threads spin for a while after each primitive before they sleep. A
// second set of threads (ThreadPool::Default) woken for the elementwise
// step after a matmul competed with that spinning team for the same
// cores: the BERT layer ran 20% slower. So where Kiln is built with
// OpenMP (every build but the sanitizer and fuzzer ones, whose race
// detector cannot see OpenMP's synchronization), these loops run on the
// calling thread's OpenMP team too; elsewhere, and inside a parallel
// region, on ThreadPool::Default().
#ifndef KILN_EXEC_PARALLEL_H_
#define KILN_EXEC_PARALLEL_H_

#include <cstdint>
#include <functional>

namespace kiln::exec {

// Calls `body(begin, end)` over [0, count) in chunks of at least
// `min_chunk` (the last may be smaller), the calling thread taking part;
// returns when every chunk is done.
void ParallelFor(int64_t count, int64_t min_chunk,
                 const std::function<void(int64_t, int64_t)>& body);

// How many threads ParallelFor may use from here (1: it runs inline).
int ParallelThreads();

// While one lives, ParallelFor on its thread runs every chunk on that
// thread. For work done off the device's queue (constant folding while
// compiling, a small program run on the caller's thread): libgomp keeps
// one team of threads per thread that opens a region, and a second team
// on the same cores makes both spin less before sleeping, so that every
// region after it pays for waking its threads (exec.md, "Threads").
// With `onednn_too`, it also sets the thread's OpenMP thread count to 1
// while it lives, so that oneDNN's primitives run there (a constant dot
// folded while compiling) open no team either. Inline runs of small
// programs leave that out: they are too small for oneDNN's threads, and
// they are the dispatch path, where every call counts.
class SerialScope {
 public:
  explicit SerialScope(bool onednn_too = false);
  ~SerialScope();
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;

 private:
  int threads_before_ = 0;  // the OpenMP thread count to restore, or 0
};

}  // namespace kiln::exec

#endif  // KILN_EXEC_PARALLEL_H_
