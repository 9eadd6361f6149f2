// Collectives across processes on loopback through Kiln's client and
// plugin, beside Gloo's own allreduce measured in the same run:
//
//   kiln <op> <processes> <size>   one process per device (one device
//                                  each), sharing a file key-value store;
//                                  the op over every device through
//                                  Executable::Execute, inputs already on
//                                  the devices
//   gloo all_reduce <processes> <size>
//                                  gloo::allreduce (f32 sum, ring, TCP on
//                                  127.0.0.1) with one rank per process:
//                                  the same transport without Kiln
//
// Each figure is the slowest process's mean time per iteration (after one
// warm-up) and one device's input bytes divided by it: NCCL's "algorithm
// bandwidth" (an all_reduce over N ranks moves about 2 (N-1)/N times that
// through each process's sockets).
//
//   build/bin/multiprocess_bench [iterations=5] [sizes=1024,67108864]
//
// The process starts its workers by running itself with the first argument
// "worker" (tests/client/multiprocess/worker.h).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kiln/computation_client.h"
#include "multiprocess/launcher.h"
#include "multiprocess/worker.h"

namespace kiln::multiprocess {
namespace {

std::string SelfPath() {
  std::vector<char> path(4096);
  ssize_t n = readlink("/proc/self/exe", path.data(), path.size() - 1);
  return n > 0 ? std::string(path.data(), static_cast<size_t>(n)) : "";
}

// The slowest process's seconds per iteration, or a negative number when a
// process failed (its output is printed).
double RunJob(const std::string& self, const std::string& plugin,
              const std::string& mode, const std::string& op, int processes,
              int64_t bytes, int iterations) {
  const std::string dir = MakeTemporaryDirectory("kiln_mp_bench_");
  std::vector<std::vector<std::string>> arguments;
  for (int p = 0; p < processes; ++p) {
    arguments.push_back({"worker", "mode=" + mode, "plugin=" + plugin,
                         "store=" + dir + "/kv", "process=" + std::to_string(p),
                         "processes=" + std::to_string(processes), "op=" + op,
                         "bytes=" + std::to_string(bytes),
                         "iterations=" + std::to_string(iterations + 1),
                         "timeout_s=120"});
  }
  double slowest = 0;
  {
    ProcessGroup group(self, arguments, dir);
    std::vector<ChildResult> results = group.Wait(std::chrono::seconds(600));
    for (size_t p = 0; p < results.size(); ++p) {
      const ChildResult& result = results[p];
      const size_t at = result.output.find("seconds=");
      if (result.exit_code != 0 || at == std::string::npos) {
        std::fprintf(stderr, "%s %s process %zu failed (exit %d):\n%s\n",
                     mode.c_str(), op.c_str(), p, result.exit_code,
                     result.output.c_str());
        slowest = -1;
        break;
      }
      slowest = std::max(slowest, std::atof(result.output.c_str() + at + 8));
    }
  }
  RemoveDirectory(dir);
  return slowest;
}

std::vector<int64_t> ParseSizes(const std::string& text) {
  std::vector<int64_t> sizes;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    sizes.push_back(std::atoll(text.substr(start, end - start).c_str()));
    start = end + 1;
  }
  return sizes;
}

int Main(int argc, char** argv) {
  int iterations = 5;
  std::vector<int64_t> sizes = {1024, int64_t{64} << 20};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("iterations=", 0) == 0) iterations = std::atoi(argv[i] + 11);
    if (arg.rfind("sizes=", 0) == 0) sizes = ParseSizes(arg.substr(6));
  }
  auto plugin = client::FindKilnPlugin();
  if (!plugin.ok()) {
    std::fprintf(stderr, "%s\n", plugin.status().ToString().c_str());
    return 1;
  }
  const std::string self = SelfPath();
  std::printf("%-6s %-11s %9s %11s %12s %9s\n", "via", "op", "processes",
              "bytes", "us/iter", "GB/s");
  int failures = 0;
  auto report = [&](const char* via, const std::string& op, int processes,
                    int64_t bytes, double seconds) {
    if (seconds < 0) {
      ++failures;
      std::printf("%-6s %-11s %9d %11lld %12s %9s\n", via, op.c_str(),
                  processes, static_cast<long long>(bytes), "failed", "-");
      return;
    }
    std::printf("%-6s %-11s %9d %11lld %12.1f %9.3f\n", via, op.c_str(),
                processes, static_cast<long long>(bytes), seconds * 1e6,
                bytes / seconds / 1e9);
    std::fflush(stdout);
  };
  for (int processes : {2, 4}) {
    for (int64_t bytes : sizes) {
      for (const char* op : {"all_reduce", "all_gather", "all_to_all"}) {
        report("kiln", op, processes, bytes,
               RunJob(self, *plugin, "kiln", op, processes, bytes, iterations));
      }
      report("gloo", "all_reduce", processes, bytes,
             RunJob(self, *plugin, "gloo", "all_reduce", processes, bytes,
                    iterations));
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace kiln::multiprocess

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "worker") == 0) {
    return kiln::multiprocess::RunWorker(argc - 1, argv + 1);
  }
  return kiln::multiprocess::Main(argc, argv);
}
