// A fixed-size pool of worker threads with a FIFO queue.
#ifndef KILN_BASE_THREAD_POOL_H_
#define KILN_BASE_THREAD_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kiln {

class ThreadPool {
 public:
  // Starts `num_threads` workers (at least one).
  explicit ThreadPool(int num_threads, std::string name = "kiln");
  // Runs every task already scheduled, then joins the workers.
  ~ThreadPool();

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Schedule(std::function<void()> task);
  int num_threads() const { return static_cast<int>(workers_.size()); }

  // Calls `body(begin, end)` over [0, count) split into about
  // `num_threads() * 4` chunks of at least `min_chunk`, and waits. The calling
  // thread works too, so this is safe to call from a worker.
  void ParallelFor(int64_t count, int64_t min_chunk,
                   const std::function<void(int64_t, int64_t)>& body);

  // A pool sized to the machine's cores, created on first use.
  static ThreadPool& Default();

 private:
  void WorkerLoop();

  std::string name_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

// Number of cores available to this process (at least 1).
int AvailableCores();

// Held by a kernel while it spreads one op over every core, through
// ThreadPool::Default() or oneDNN's OpenMP team: plans running on several
// threads at once (one per device) then take turns at the machine instead
// of starting one team of AvailableCores() threads each, which would
// oversubscribe the cores and let the two runtimes' threads preempt each
// other mid-op. Held only for one op's computation, never while waiting
// on anything else.
std::mutex& AllCoresMutex();

}  // namespace kiln

#endif  // KILN_BASE_THREAD_POOL_H_
