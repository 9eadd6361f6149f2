// Seeing where a run's time goes: with RunOptions::profile set, the
// executor records one event per step it runs (its `where`, which for a
// fused step names every op it covers), with start and end times, the
// thread and the nesting depth (steps of loop bodies and other regions
// are one level deeper than the step that runs them). WriteChromeTrace
// writes the events in the Chrome trace format that Perfetto and
// chrome://tracing open.
#ifndef KILN_EXEC_PROFILE_H_
#define KILN_EXEC_PROFILE_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"

namespace kiln::exec {

struct ProfileEvent {
  std::string name;
  int64_t begin_ns = 0;  // since the profile was created
  int64_t end_ns = 0;
  int depth = 0;
  uint64_t thread = 0;
};

class Profile {
 public:
  Profile();
  // Nanoseconds since the profile was created.
  int64_t Now() const;
  // Thread-safe: runs of a replicated program record into one profile.
  void Add(ProfileEvent event);
  std::vector<ProfileEvent> events() const;

 private:
  int64_t origin_ns_;
  mutable std::mutex mutex_;
  std::vector<ProfileEvent> events_;
};

// The events as a Chrome trace (JSON, "X" events in microseconds).
std::string ChromeTraceJson(const std::vector<ProfileEvent>& events);

}  // namespace kiln::exec

#endif  // KILN_EXEC_PROFILE_H_
