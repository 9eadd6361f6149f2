// The peer of Kiln's f32 dot_general: oneDNN's dnnl_sgemm called directly,
// C = A x B on row-major N x N matrices, with oneDNN's own threading
// (OpenMP, all available cores unless OMP_NUM_THREADS says otherwise).
//
//   sgemm_peer --sizes 256,1024,2048 [--seconds S ...]
//
// prints {"peer": "dnnl_sgemm", "threads": ..., "dnnl_version": "...",
// "results": [{"n": ..., "median_s": ..., "min_s": ..., "repeats": ...,
// "gflops": ..., "samples_s": [...]}, ...]}; GFLOP/s counts 2 N^3 operations.
#include <dnnl.h>
#include <omp.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "peer_timing.h"

namespace {

// "256,1024,2048" as sizes; exits on anything else.
std::vector<int64_t> ParseSizes(const char* text) {
  std::vector<int64_t> sizes;
  const char* at = text;
  while (true) {
    char* end = nullptr;
    long long n = std::strtoll(at, &end, 10);
    if (end == at || n <= 0 || (*end != ',' && *end != '\0')) {
      std::fprintf(stderr, "--sizes: expected N,N,... and got '%s'\n", text);
      std::exit(2);
    }
    sizes.push_back(n);
    if (*end == '\0') return sizes;
    at = end + 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes = {256, 1024, 2048};
  kiln::bench::TimingFlags timing;
  for (int i = 1; i < argc; ++i) {
    if (timing.Parse(argc, argv, &i)) continue;
    if (std::strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
      sizes = ParseSizes(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: sgemm_peer [--sizes N,N,...] [--seconds S] "
                   "[--min-repeats N] [--max-repeats N] [--warmup N]\n");
      return 2;
    }
  }
  const dnnl_version_t* version = dnnl_version();
  std::printf(
      "{\"peer\": \"dnnl_sgemm\", \"threads\": %d, \"dnnl_version\": "
      "\"%d.%d.%d\", \"results\": [",
      omp_get_max_threads(), version->major, version->minor, version->patch);
  std::mt19937 random(0);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (size_t s = 0; s < sizes.size(); ++s) {
    const int64_t n = sizes[s];
    std::vector<float> a(n * n), b(n * n), c(n * n);
    for (float& v : a) v = uniform(random);
    for (float& v : b) v = uniform(random);
    dnnl_status_t status = dnnl_success;
    kiln::bench::Timings timings = kiln::bench::TimeRuns(
        [&] {
          status = dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n,
                              0.0f, c.data(), n);
        },
        timing.warmup, timing.min_repeats, timing.max_repeats, timing.seconds);
    if (status != dnnl_success) {
      std::fprintf(stderr, "dnnl_sgemm failed with status %d at n=%lld\n",
                   static_cast<int>(status), static_cast<long long>(n));
      return 1;
    }
    std::printf(
        "%s{\"n\": %lld, \"median_s\": %.9g, \"min_s\": %.9g, \"repeats\": "
        "%zu, \"gflops\": %.6g, \"samples_s\": %s}",
        s == 0 ? "" : ", ", static_cast<long long>(n), timings.Median(),
        timings.Min(), timings.seconds.size(),
        2.0 * n * n * n / timings.Median() / 1e9,
        timings.SamplesJson().c_str());
  }
  std::printf("]}\n");
  return 0;
}
