#include "exec/profile.h"

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <thread>

#include "base/strings.h"

namespace kiln::exec {
namespace {

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Profile::Profile() : origin_ns_(SteadyNanos()) {}

int64_t Profile::Now() const { return SteadyNanos() - origin_ns_; }

void Profile::Add(ProfileEvent event) {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(std::move(event));
}

std::vector<ProfileEvent> Profile::events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_;
}

std::string ChromeTraceJson(const std::vector<ProfileEvent>& events) {
  // Threads are numbered in order of appearance: small tids read better.
  std::map<uint64_t, int> tids;
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  for (const ProfileEvent& event : events) {
    auto [it, added] =
        tids.try_emplace(event.thread, static_cast<int>(tids.size()) + 1);
    if (!first) out += ",";
    first = false;
    // The op kind is the event's name; the whole description its argument.
    std::string name = event.name.substr(0, event.name.find(" at "));
    if (name.rfind("fusion of", 0) == 0) name = "fusion";
    char timing[160];
    std::snprintf(timing, sizeof(timing),
                  ",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,",
                  it->second, event.begin_ns / 1000.0,
                  (event.end_ns - event.begin_ns) / 1000.0);
    out += "{\"name\":";
    out += JsonString(name);
    out += timing;
    out += "\"args\":{\"ops\":";
    out += JsonString(event.name);
    out += ",\"depth\":" + std::to_string(event.depth) + "}}";
  }
  out += "]}\n";
  return out;
}

}  // namespace kiln::exec
