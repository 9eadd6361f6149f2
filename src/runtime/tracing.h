// Tracing for profilers: while a trace session is open (PJRT's profiler
// extension opens one for jax.profiler.trace, pjrt/profiler.cc), every run
// records its execute and each step it runs (exec/profile.h), with the
// device it ran on, into every open session.
#ifndef KILN_RUNTIME_TRACING_H_
#define KILN_RUNTIME_TRACING_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "exec/profile.h"

namespace kiln::runtime {

struct TraceEvent {
  std::string name;
  // Wall-clock nanoseconds since the Unix epoch, as profilers count them.
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  int device = 0;
  // 0 for an execute; steps are 1 and deeper (regions' steps below theirs).
  int depth = 0;
  uint64_t thread = 0;
};

// The events of one session, gathered while it is open.
class TraceSession {
 public:
  // Opens the session: runs from now on record into it.
  void Start();
  // Closes it; its events stay until taken.
  void Stop();
  std::vector<TraceEvent> events() const;
  ~TraceSession();

  void Add(const std::vector<TraceEvent>& events);

 private:
  mutable std::mutex mutex_;
  std::vector<TraceEvent> events_;
  bool open_ = false;
};

// Whether any session is open (a cheap check for every run).
bool TracingActive();

// Wall-clock nanoseconds since the Unix epoch.
int64_t WallNanos();

// Records a run of `name` on `device` that started at `begin_ns` (wall
// clock) and the steps of `profile`, whose times count from `origin_ns`
// (the wall clock when the profile was created), into every open session.
void RecordRun(const std::string& name, int device, int64_t begin_ns,
               int64_t end_ns, const exec::Profile& profile, int64_t origin_ns);

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_TRACING_H_
