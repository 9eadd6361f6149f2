// A device's queue of work: one thread running tasks in FIFO order.
//
// After a task the thread stays awake for a short while (kSpin, 50 us),
// yielding its core to any thread that wants it, before it sleeps, as
// XLA:CPU's thread pool spins before it parks: a framework that runs a
// small program and waits for it, again and again, finds the thread awake
// instead of paying a wake-up each time (on a virtual machine whose idle
// cores halt, tens of microseconds: a 64 x 64 matmul through JAX took
// 58-76 us a call, 30 us with the thread awake; XLA:CPU 25-35). Polling
// with pause instead of yield took the core from the framework's own
// thread and slowed the main job's step by 70%.
// At most half the cores' threads stay awake so at once, whatever the
// number of queues.
//
// Transfers and copies for a device are enqueued here, so they run in the
// order they were issued, off the caller's thread. Work that must wait for
// an event is not enqueued until the event is ready (see Event::OnReady),
// so a queue never blocks on another queue and cannot deadlock with one.
//
// Queues are shared (std::shared_ptr) by everything that may still enqueue
// work, such as an event callback that outlives the client. After Shutdown,
// Enqueue runs the task on the calling thread instead, so late work still
// completes and its events still fire.
#ifndef KILN_RUNTIME_WORK_QUEUE_H_
#define KILN_RUNTIME_WORK_QUEUE_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace kiln::runtime {

class WorkQueue {
 public:
  // Starts the queue's thread.
  explicit WorkQueue(std::string name);
  // Shuts down (see Shutdown).
  ~WorkQueue();

  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Runs `task` on the queue's thread after everything enqueued before it.
  void Enqueue(std::function<void()> task);

  // Runs every task already enqueued, then stops the thread. Idempotent.
  // Called from one of the queue's own tasks (a callback that destroys the
  // client), it cannot wait for itself: the thread finishes the queued
  // tasks and exits on its own.
  void Shutdown();

  const std::string& name() const { return name_; }
  // Whether the calling thread is this queue's thread.
  bool IsQueueThread() const;
  // Whether the calling thread is any queue's thread.
  static bool OnAnyQueueThread();

 private:
  // What the thread uses: shared with it, so a thread left to finish on
  // its own never outlives what it touches.
  struct State {
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<std::function<void()>> tasks;
    bool stopping = false;
    // Tasks queued and not yet taken, read without the lock by the
    // thread while it spins for the next one.
    std::atomic<int64_t> pending{0};
  };
  static void Loop(std::shared_ptr<State> state);
  // Returns when a task is pending or after a short spin.
  static void SpinForWork(State& state);

  std::string name_;
  std::shared_ptr<State> state_;
  std::mutex shutdown_mutex_;  // serializes Shutdown calls
  std::thread thread_;
  std::thread::id thread_id_;
};

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_WORK_QUEUE_H_
