// The limit of a memory-bound program: memcpy of the bytes it reads into
// the bytes it writes, on one thread or split across several (each thread
// copies one contiguous part). Both buffers are touched before timing, so
// the figure is the copy, not the page faults.
//
//   memcpy_peer --bytes 67108864 --threads 2 [--seconds S ...]
//
// prints {"peer": "memcpy", "bytes": ..., "threads": ..., "median_s": ...,
// "min_s": ..., "repeats": ..., "gbps": ..., "samples_s": [...]}; GB/s counts
// the bytes read and written (2 x --bytes), 10^9 bytes a second.
#include <sched.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "peer_timing.h"

namespace {

int AvailableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) {
    return CPU_COUNT(&set);
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void CopySplit(char* dst, const char* src, size_t bytes, int threads) {
  if (threads <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  // Parts of whole cache lines, so no two threads write the same line.
  size_t part = (bytes / threads + 63) / 64 * 64;
  std::vector<std::thread> workers;
  workers.reserve(threads);
  for (int t = 0; t < threads; ++t) {
    size_t begin = std::min(bytes, part * t);
    size_t end = std::min(bytes, begin + part);
    workers.emplace_back(
        [=] { std::memcpy(dst + begin, src + begin, end - begin); });
  }
  for (std::thread& worker : workers) worker.join();
}

}  // namespace

int main(int argc, char** argv) {
  size_t bytes = size_t{64} << 20;
  int threads = 1;
  kiln::bench::TimingFlags timing;
  for (int i = 1; i < argc; ++i) {
    if (timing.Parse(argc, argv, &i)) continue;
    if (std::strcmp(argv[i], "--bytes") == 0 && i + 1 < argc) {
      bytes = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
      if (threads <= 0) threads = AvailableCores();
    } else {
      std::fprintf(stderr,
                   "usage: memcpy_peer [--bytes N] [--threads N (0: all "
                   "cores)] [--seconds S] [--min-repeats N] [--max-repeats "
                   "N] [--warmup N]\n");
      return 2;
    }
  }
  std::vector<char> src(bytes), dst(bytes);
  std::memset(src.data(), 1, bytes);
  std::memset(dst.data(), 2, bytes);
  kiln::bench::Timings timings = kiln::bench::TimeRuns(
      [&] { CopySplit(dst.data(), src.data(), bytes, threads); }, timing.warmup,
      timing.min_repeats, timing.max_repeats, timing.seconds);
  std::printf(
      "{\"peer\": \"memcpy\", \"bytes\": %zu, \"threads\": %d, "
      "\"median_s\": %.9g, \"min_s\": %.9g, \"repeats\": %zu, "
      "\"gbps\": %.6g, \"samples_s\": %s}\n",
      bytes, threads, timings.Median(), timings.Min(), timings.seconds.size(),
      2.0 * bytes / timings.Median() / 1e9, timings.SamplesJson().c_str());
  return 0;
}
