#include "runtime/work_queue.h"

namespace kiln::runtime {
namespace {

thread_local bool on_queue_thread = false;

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

void WorkQueue::Loop(std::shared_ptr<State> state) {
  on_queue_thread = true;
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(state->mutex);
      state->wake.wait(
          lock, [&] { return state->stopping || !state->tasks.empty(); });
      if (state->tasks.empty()) return;  // stopping and drained
      task = std::move(state->tasks.front());
      state->tasks.pop_front();
    }
    task();
  }
}

}  // namespace kiln::runtime
