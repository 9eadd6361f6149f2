#include "base/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <sched.h>

namespace kiln {

int AvailableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

std::mutex& AllCoresMutex() {
  static std::mutex* mutex = new std::mutex;
  return *mutex;
}

ThreadPool::ThreadPool(int num_threads, std::string name)
    : name_(std::move(name)) {
  num_threads = std::max(1, num_threads);
  workers_.reserve(num_threads);
  for (int i = 0; i < num_threads; ++i) {
    workers_.emplace_back([this] { WorkerLoop(); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::Schedule(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(task));
  }
  wake_.notify_one();
}

void ThreadPool::WorkerLoop() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

void ThreadPool::ParallelFor(int64_t count, int64_t min_chunk,
                             const std::function<void(int64_t, int64_t)>& body) {
  if (count <= 0) return;
  min_chunk = std::max<int64_t>(1, min_chunk);
  int64_t max_chunks = static_cast<int64_t>(num_threads()) * 4;
  int64_t chunks = std::min(max_chunks, (count + min_chunk - 1) / min_chunk);
  if (chunks <= 1) {
    body(0, count);
    return;
  }
  int64_t chunk_size = (count + chunks - 1) / chunks;
  // Chunks are claimed from a shared counter by the helpers and the caller,
  // so a caller that is itself a pool worker never waits on queued work.
  struct Shared {
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> done{0};
    std::mutex mutex;
    std::condition_variable finished;
  };
  auto shared = std::make_shared<Shared>();
  auto run_chunks = [shared, chunks, chunk_size, count, &body] {
    while (true) {
      int64_t chunk = shared->next.fetch_add(1);
      if (chunk >= chunks) return;
      int64_t begin = chunk * chunk_size;
      int64_t end = std::min(count, begin + chunk_size);
      if (begin < end) body(begin, end);
      if (shared->done.fetch_add(1) + 1 == chunks) {
        std::lock_guard<std::mutex> lock(shared->mutex);
        shared->finished.notify_all();
      }
    }
  };
  int helpers = static_cast<int>(std::min<int64_t>(num_threads(), chunks - 1));
  for (int i = 0; i < helpers; ++i) Schedule(run_chunks);
  run_chunks();
  std::unique_lock<std::mutex> lock(shared->mutex);
  shared->finished.wait(lock, [&] { return shared->done.load() == chunks; });
}

ThreadPool& ThreadPool::Default() {
  static ThreadPool* pool = new ThreadPool(AvailableCores(), "kiln-default");
  return *pool;
}

}  // namespace kiln
