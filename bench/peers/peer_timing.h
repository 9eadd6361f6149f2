// What the peer benchmarks share: a timing loop that scales its repetitions
// to a time budget (the machine is shared and noisy, so the suite reads
// medians), and the flags they take.
#ifndef KILN_BENCH_PEERS_PEER_TIMING_H_
#define KILN_BENCH_PEERS_PEER_TIMING_H_

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace kiln::bench {

// Seconds of each timed run, sorted.
struct Timings {
  std::vector<double> seconds;
  double Median() const { return seconds[seconds.size() / 2]; }
  double Min() const { return seconds.front(); }

  // "[s, s, ...]" for the JSON the peers print.
  std::string SamplesJson() const {
    std::string out = "[";
    char number[32];
    for (size_t i = 0; i < seconds.size(); ++i) {
      std::snprintf(number, sizeof(number), "%s%.9g", i == 0 ? "" : ", ",
                    seconds[i]);
      out += number;
    }
    return out + "]";
  }
};

// Runs `body` `warmup` times untimed, then times it until `budget_seconds`
// have passed and at least `min_repeats` runs are in (at most
// `max_repeats`).
template <typename Body>
Timings TimeRuns(Body&& body, int warmup, int min_repeats, int max_repeats,
                 double budget_seconds) {
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < warmup; ++i) body();
  Timings timings;
  double spent = 0;
  while (static_cast<int>(timings.seconds.size()) < max_repeats &&
         (static_cast<int>(timings.seconds.size()) < min_repeats ||
          spent < budget_seconds)) {
    Clock::time_point start = Clock::now();
    body();
    double seconds =
        std::chrono::duration<double>(Clock::now() - start).count();
    timings.seconds.push_back(seconds);
    spent += seconds;
  }
  std::sort(timings.seconds.begin(), timings.seconds.end());
  return timings;
}

// The flags every peer takes: --seconds S (time budget of one measurement),
// --min-repeats N, --max-repeats N, --warmup N.
struct TimingFlags {
  double seconds = 1.0;
  int min_repeats = 5;
  int max_repeats = 1000;
  int warmup = 2;

  // Reads the flag at argv[*i] (and its value); false if it is not one.
  bool Parse(int argc, char** argv, int* i) {
    auto value = [&](const char* name) -> const char* {
      if (std::strcmp(argv[*i], name) != 0) return nullptr;
      if (*i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", name);
        std::exit(2);
      }
      return argv[++*i];
    };
    if (const char* v = value("--seconds")) return seconds = std::atof(v), true;
    if (const char* v = value("--min-repeats"))
      return min_repeats = std::atoi(v), true;
    if (const char* v = value("--max-repeats"))
      return max_repeats = std::atoi(v), true;
    if (const char* v = value("--warmup")) return warmup = std::atoi(v), true;
    return false;
  }
};

}  // namespace kiln::bench

#endif  // KILN_BENCH_PEERS_PEER_TIMING_H_
