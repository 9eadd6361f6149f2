#include "runtime/work_queue.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

namespace kiln::runtime {
namespace {

thread_local bool on_queue_thread = false;

// How long a queue's thread stays awake for its next task before it sleeps,
// and how many threads of all queues may at once: half the cores, at
// least one, so that queues whose devices outnumber the cores (8 devices
// on 2 cores) leave the cores to the threads that have work.
constexpr auto kSpin = std::chrono::microseconds(50);
std::atomic<int> spinning{0};
int MaxSpinning() {
  static const int max =
      std::max(1, static_cast<int>(std::thread::hardware_concurrency() / 2));
  return max;
}

}  // namespace

WorkQueue::WorkQueue(std::string name)
    : name_(std::move(name)), state_(std::make_shared<State>()) {
  thread_ = std::thread(&WorkQueue::Loop, state_);
  thread_id_ = thread_.get_id();
}

WorkQueue::~WorkQueue() { Shutdown(); }

void WorkQueue::Enqueue(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (!state_->stopping) {
      state_->tasks.push_back(std::move(task));
      state_->pending.fetch_add(1, std::memory_order_release);
      state_->wake.notify_one();
      return;
    }
  }
  // The queue is gone: finish the work here so that its events still fire.
  task();
}

void WorkQueue::Shutdown() {
  std::lock_guard<std::mutex> shutdown_lock(shutdown_mutex_);
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stopping = true;
    state_->wake.notify_one();
  }
  if (!thread_.joinable()) return;
  if (IsQueueThread()) {
    // A task is shutting its own queue down: the thread drains what is
    // queued and exits by itself, holding the state it needs.
    thread_.detach();
  } else {
    thread_.join();
  }
}

bool WorkQueue::OnAnyQueueThread() { return on_queue_thread; }

bool WorkQueue::IsQueueThread() const {
  return std::this_thread::get_id() == thread_id_;
}

void WorkQueue::SpinForWork(State& state) {
  if (state.pending.load(std::memory_order_acquire) != 0) return;
  if (spinning.fetch_add(1, std::memory_order_relaxed) >= MaxSpinning()) {
    spinning.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  auto until = std::chrono::steady_clock::now() + kSpin;
  while (state.pending.load(std::memory_order_acquire) == 0 &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::yield();
  }
  spinning.fetch_sub(1, std::memory_order_relaxed);
}

void WorkQueue::Loop(std::shared_ptr<State> state) {
  on_queue_thread = true;
  while (true) {
    std::function<void()> task;
    SpinForWork(*state);
    {
      std::unique_lock<std::mutex> lock(state->mutex);
      state->wake.wait(
          lock, [&] { return state->stopping || !state->tasks.empty(); });
      if (state->tasks.empty()) return;  // stopping and drained
      task = std::move(state->tasks.front());
      state->tasks.pop_front();
      state->pending.fetch_sub(1, std::memory_order_relaxed);
    }
    task();
  }
}

}  // namespace kiln::runtime
