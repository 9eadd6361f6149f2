#include "runtime/event.h"

#include <atomic>

namespace kiln::runtime {

std::shared_ptr<Event> Event::Create() {
  return std::shared_ptr<Event>(new Event());
}

std::shared_ptr<Event> Event::CreateReady(Status status) {
  std::shared_ptr<Event> event = Create();
  event->ready_ = true;
  event->status_ = std::move(status);
  return event;
}

std::shared_ptr<Event> Event::AfterAll(
    const std::vector<std::shared_ptr<Event>>& events) {
  if (events.empty()) return CreateReady();
  if (events.size() == 1) return events[0];
  // Inputs that are all ready already (the common case of a dispatch whose
  // arguments were computed earlier) need no join: the first one that
  // failed, else any of them, is the answer.
  {
    size_t answer = 0;
    bool all_ready = true;
    bool failed = false;
    for (size_t i = 0; i < events.size() && all_ready; ++i) {
      std::lock_guard<std::mutex> lock(events[i]->mutex_);
      all_ready = events[i]->ready_;
      if (all_ready && !failed && !events[i]->status_.ok()) {
        failed = true;
        answer = i;
      }
    }
    if (all_ready) return events[answer];
  }
  // Shared by the callbacks: the count of events still pending and the
  // errors seen so far, by position, so the first error in list order wins
  // no matter which thread finishes first.
  struct Join {
    std::shared_ptr<Event> result = Event::Create();
    std::atomic<size_t> pending;
    std::mutex mutex;
    std::vector<Status> statuses;
  };
  auto join = std::make_shared<Join>();
  join->pending = events.size();
  join->statuses.resize(events.size());
  std::shared_ptr<Event> result = join->result;
  for (size_t i = 0; i < events.size(); ++i) {
    events[i]->OnReady([join, i](const Status& status) {
      if (!status.ok()) {
        std::lock_guard<std::mutex> lock(join->mutex);
        join->statuses[i] = status;
      }
      if (join->pending.fetch_sub(1) != 1) return;
      Status first = OkStatus();
      {
        std::lock_guard<std::mutex> lock(join->mutex);
        for (const Status& s : join->statuses) {
          if (!s.ok()) {
            first = s;
            break;
          }
        }
      }
      join->result->Set(first).IgnoreError();
    });
  }
  return result;
}

Status Event::Set(Status status) {
  // Keeps this event alive until the callbacks have run, even if one of
  // them drops the last outside reference.
  std::shared_ptr<Event> self = shared_from_this();
  std::vector<Callback> callbacks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ready_) {
      return FailedPreconditionError("event is already set (with ",
                                     status_.ToString(),
                                     "); an event becomes ready only once");
    }
    ready_ = true;
    status_ = status;
    callbacks.swap(callbacks_);
    ready_cv_.notify_all();
  }
  for (Callback& callback : callbacks) callback(status);
  return OkStatus();
}

bool Event::IsReady() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ready_;
}

Status Event::Await() const {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_cv_.wait(lock, [this] { return ready_; });
  return status_;
}

Status Event::status() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!ready_) return FailedPreconditionError("event is not ready yet");
  return status_;
}

void Event::OnReady(Callback callback) {
  Status status;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!ready_) {
      callbacks_.push_back(std::move(callback));
      return;
    }
    status = status_;
  }
  callback(status);
}

}  // namespace kiln::runtime
