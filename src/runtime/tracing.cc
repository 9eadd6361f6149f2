#include "runtime/tracing.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>

namespace kiln::runtime {
namespace {

struct Sessions {
  std::mutex mutex;
  std::vector<TraceSession*> open;
  std::atomic<int> count{0};
};

Sessions& OpenSessions() {
  static Sessions* sessions = new Sessions();
  return *sessions;
}

}  // namespace

int64_t WallNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool TracingActive() {
  return OpenSessions().count.load(std::memory_order_relaxed) > 0;
}

void TraceSession::Start() {
  Sessions& sessions = OpenSessions();
  std::lock_guard<std::mutex> lock(sessions.mutex);
  {
    std::lock_guard<std::mutex> own(mutex_);
    if (open_) return;
    open_ = true;
    events_.clear();
  }
  sessions.open.push_back(this);
  sessions.count.store(static_cast<int>(sessions.open.size()));
}

void TraceSession::Stop() {
  Sessions& sessions = OpenSessions();
  std::lock_guard<std::mutex> lock(sessions.mutex);
  {
    std::lock_guard<std::mutex> own(mutex_);
    if (!open_) return;
    open_ = false;
  }
  sessions.open.erase(
      std::remove(sessions.open.begin(), sessions.open.end(), this),
      sessions.open.end());
  sessions.count.store(static_cast<int>(sessions.open.size()));
}

TraceSession::~TraceSession() { Stop(); }

std::vector<TraceEvent> TraceSession::events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_;
}

void TraceSession::Add(const std::vector<TraceEvent>& events) {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.insert(events_.end(), events.begin(), events.end());
}

void RecordRun(const std::string& name, int device, int64_t begin_ns,
               int64_t end_ns, const exec::Profile& profile,
               int64_t origin_ns) {
  std::vector<TraceEvent> events;
  const uint64_t thread =
      std::hash<std::thread::id>()(std::this_thread::get_id());
  events.push_back({name, begin_ns, end_ns, device, 0, thread});
  for (const exec::ProfileEvent& step : profile.events()) {
    // The executor counts a step's depth from 0 (steps of the plan's own
    // region); the execute is depth 0 here.
    events.push_back({step.name, origin_ns + step.begin_ns,
                      origin_ns + step.end_ns, device, step.depth + 1,
                      step.thread});
  }
  Sessions& sessions = OpenSessions();
  std::lock_guard<std::mutex> lock(sessions.mutex);
  for (TraceSession* session : sessions.open) session->Add(events);
}

}  // namespace kiln::runtime
