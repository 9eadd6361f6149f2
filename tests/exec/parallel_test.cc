// exec::ParallelFor: every index once, in chunks; inside a SerialScope on
// the calling thread alone, nested scopes included, and over the threads
// again once the scope ends.
#include "exec/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace kiln::exec {
namespace {

// Runs a ParallelFor over `count` indices with chunks of at least 1;
// returns the threads that ran chunks, and checks every index ran once.
std::set<std::thread::id> ThreadsOfALoop(int64_t count) {
  std::vector<std::atomic<int>> seen(count);
  std::mutex mutex;
  std::set<std::thread::id> threads;
  // Where the loop may use more than one thread, each chunk waits (up to 2
  // s) until a second thread has taken one: on a loaded machine a woken
  // thread can arrive after the caller has run every chunk, and a fixed
  // pause made the test fail now and then beside a build.
  const bool parallel = ParallelThreads() > 1;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(2);
  ParallelFor(count, 1, [&](int64_t begin, int64_t end) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      threads.insert(std::this_thread::get_id());
    }
    for (int64_t i = begin; i < end; ++i) seen[i].fetch_add(1);
    while (parallel && std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (threads.size() >= 2) break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  for (int64_t i = 0; i < count; ++i) EXPECT_EQ(seen[i].load(), 1) << i;
  return threads;
}

TEST(ParallelTest, ASerialScopeRunsEveryChunkOnItsThread) {
  constexpr int64_t kCount = 256;
  {
    SerialScope serial;
    EXPECT_EQ(ParallelThreads(), 1);
    std::set<std::thread::id> threads = ThreadsOfALoop(kCount);
    EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
    {
      SerialScope nested;
      EXPECT_EQ(ThreadsOfALoop(kCount).size(), 1u);
    }
    // Still serial after the nested scope ends.
    EXPECT_EQ(ParallelThreads(), 1);
    EXPECT_EQ(ThreadsOfALoop(kCount).size(), 1u);
  }
  if (ParallelThreads() < 2) {
    GTEST_SKIP() << "one thread on this machine: nothing runs beside the "
                    "caller outside a SerialScope either";
  }
  EXPECT_GE(ThreadsOfALoop(kCount).size(), 2u);
}

TEST(ParallelTest, ASerialScopeIsPerThread) {
  const int outside = ParallelThreads();
  SerialScope serial;
  int seen_elsewhere = 0;
  std::thread other([&] { seen_elsewhere = ParallelThreads(); });
  other.join();
  EXPECT_EQ(ParallelThreads(), 1);
  EXPECT_EQ(seen_elsewhere, outside);
}

}  // namespace
}  // namespace kiln::exec
