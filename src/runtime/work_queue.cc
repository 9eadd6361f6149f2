#include "runtime/work_queue.h"

#include "base/logging.h"

namespace kiln::runtime {

WorkQueue::WorkQueue(std::string name) : name_(std::move(name)) {
  thread_ = std::thread([this] { Loop(); });
  thread_id_ = thread_.get_id();
}

WorkQueue::~WorkQueue() { Shutdown(); }

void WorkQueue::Enqueue(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stopping_) {
      tasks_.push_back(std::move(task));
      wake_.notify_one();
      return;
    }
  }
  // The queue is gone: finish the work here so that its events still fire.
  task();
}

void WorkQueue::Shutdown() {
  KILN_CHECK(!IsQueueThread())
      << "queue " << name_ << " was shut down from one of its own tasks";
  std::lock_guard<std::mutex> shutdown_lock(shutdown_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    wake_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

bool WorkQueue::IsQueueThread() const {
  return std::this_thread::get_id() == thread_id_;
}

void WorkQueue::Loop() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping and drained
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace kiln::runtime
