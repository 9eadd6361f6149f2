#include "runtime/work_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::runtime {
namespace {

TEST(WorkQueueTest, RunsTasksInOrderOnItsOwnThread) {
  WorkQueue queue("test");
  std::mutex mutex;
  std::vector<int> order;
  std::atomic<bool> on_queue_thread{true};
  for (int i = 0; i < 100; ++i) {
    queue.Enqueue([&, i] {
      if (!queue.IsQueueThread()) on_queue_thread = false;
      std::lock_guard<std::mutex> lock(mutex);
      order.push_back(i);
    });
  }
  queue.Shutdown();  // drains first
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
  EXPECT_TRUE(on_queue_thread.load());
  EXPECT_FALSE(queue.IsQueueThread());
}

TEST(WorkQueueTest, AfterShutdownTasksRunOnTheCaller) {
  WorkQueue queue("test");
  queue.Shutdown();
  queue.Shutdown();  // idempotent
  std::thread::id ran_on;
  queue.Enqueue([&] { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(WorkQueueTest, ATaskMayEnqueueMoreWork) {
  std::atomic<int> runs{0};
  {
    WorkQueue queue("test");
    queue.Enqueue([&] {
      runs.fetch_add(1);
      queue.Enqueue([&] { runs.fetch_add(1); });
    });
  }  // the destructor drains both
  EXPECT_EQ(runs.load(), 2);
}

}  // namespace
}  // namespace kiln::runtime

namespace kiln::runtime {
namespace {

TEST(WorkQueueTest, ATaskMayShutDownAndDestroyItsOwnQueue) {
  auto queue = std::make_shared<WorkQueue>("test");
  WorkQueue* raw = queue.get();
  std::atomic<int> runs{0};
  std::promise<void> go;
  std::shared_future<void> go_ready = go.get_future().share();
  std::promise<void> finished;
  // As a framework callback destroying the client would: the last
  // reference to the queue goes from inside one of its tasks.
  raw->Enqueue([&, go_ready] {
    go_ready.wait();
    queue->Shutdown();
    queue.reset();
    runs.fetch_add(1);
  });
  // Queued behind it; still runs, on the thread left to finish alone.
  raw->Enqueue([&] {
    runs.fetch_add(1);
    finished.set_value();
  });
  go.set_value();
  finished.get_future().wait();
  EXPECT_EQ(runs.load(), 2);
}

}  // namespace
}  // namespace kiln::runtime
