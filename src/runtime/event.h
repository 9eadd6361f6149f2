// Events: one-shot completion signals carrying a status.
//
// An event starts pending and becomes ready exactly once, with OK or an
// error. Everything asynchronous in the runtime (transfers, copies, later
// executions) reports completion through one. Callbacks registered with
// OnReady run exactly once: right away on the calling thread when the event
// is already ready, otherwise on the thread that makes it ready. No lock is
// held while a callback runs, so a callback may call back into the runtime,
// wait on other events, or drop the last reference to this event.
#ifndef KILN_RUNTIME_EVENT_H_
#define KILN_RUNTIME_EVENT_H_

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "base/status.h"

namespace kiln::runtime {

class Event : public std::enable_shared_from_this<Event> {
 public:
  using Callback = std::function<void(const Status&)>;

  // A pending event.
  static std::shared_ptr<Event> Create();
  // An event that is already ready with `status`.
  static std::shared_ptr<Event> CreateReady(Status status = OkStatus());
  // An event that becomes ready when all of `events` are: with OK when all
  // succeed, otherwise with the first error among them (in list order).
  static std::shared_ptr<Event> AfterAll(
      const std::vector<std::shared_ptr<Event>>& events);

  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Makes the event ready and runs the pending callbacks on this thread.
  // Setting an event twice is an error (FAILED_PRECONDITION) and changes
  // nothing.
  Status Set(Status status = OkStatus());

  bool IsReady() const;
  // Blocks until ready and returns the event's status.
  Status Await() const;
  // The status of a ready event; FAILED_PRECONDITION while pending.
  Status status() const;

  // Runs `callback(status)` once the event is ready (see the file comment
  // for the thread it runs on).
  void OnReady(Callback callback);

 private:
  Event() = default;

  mutable std::mutex mutex_;
  mutable std::condition_variable ready_cv_;
  bool ready_ = false;
  Status status_;
  std::vector<Callback> callbacks_;
};

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_EVENT_H_
